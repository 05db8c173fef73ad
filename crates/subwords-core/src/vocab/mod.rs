//! Vocabulary rows: ids, piece texts and kinds (DESIGN §1). This folder alone knows row kinds:
//! what each kind is (here), how a row is shown (`display.rs`) and the order rows must come in
//! (`order.rs`).
//!
//! Row order: `[UNK]` (when the spelling has one), byte-fallback rows `<0x00>`…`<0xFF>` and the bare
//! marker row, the alphabet in code-point order, then learned pieces in merge order. Internally a
//! piece is its bytes as spelled (`w</w>`, `##o`, `▁low`, raw bytes for the bytes spelling).

use serde::{Deserialize, Serialize};

pub mod display;
pub mod index;
pub mod order;

pub use display::display_row;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    /// `[UNK]`
    Special,
    /// `<0xNN>` byte-fallback rows (and the 256 symbols of the bytes spelling are `Alphabet`)
    Byte,
    /// The bare end-of-word (`</w>`) or continuation (`##`) row of byte fallback.
    Marker,
    Alphabet,
    Learned,
    /// A whole unit (the `word` model).
    Unit,
    /// A piece of a vocabulary made elsewhere (a BERT `vocab.txt`): no learning history, any order.
    Piece,
}

impl RowKind {
    /// The kind a model file names `name` (see [`RowKind::name`]).
    pub fn from_name(name: &str) -> Option<RowKind> {
        [
            RowKind::Special,
            RowKind::Byte,
            RowKind::Marker,
            RowKind::Alphabet,
            RowKind::Learned,
            RowKind::Unit,
            RowKind::Piece,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            RowKind::Special => "special",
            RowKind::Byte => "byte",
            RowKind::Marker => "marker",
            RowKind::Alphabet => "alphabet",
            RowKind::Learned => "learned",
            RowKind::Unit => "unit",
            RowKind::Piece => "piece",
        }
    }
    /// Rows found by their text when spelling and merging.
    pub fn is_indexed(self) -> bool {
        matches!(self, RowKind::Alphabet | RowKind::Learned | RowKind::Unit | RowKind::Piece)
    }
}

/// A row's text: inline up to 16 bytes, which nearly every piece is (30k allocations
/// and frees, a tenth of loading a 30k BERT vocab.txt and every page they touched).
pub type Text = smallvec::SmallVec<[u8; 16]>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub text: Text,
    pub kind: RowKind,
}

pub const UNK: &str = "[UNK]";

impl Row {
    /// A row of `text`, inline when it is 16 bytes or less, copied in one go (`From<&[u8]>`
    /// would push it a byte at a time).
    #[inline]
    pub fn new(text: &[u8], kind: RowKind) -> Row {
        Row { text: Text::from_slice(text), kind }
    }

    /// A word-first piece whose text begins with the continuation mark ([`WORD_START`]). Only
    /// the continuation spelling has them: a byte row `<0xFF>`, or a piece of the bytes
    /// spelling, is the byte itself.
    pub fn is_word_start(&self, scheme: crate::spelling::Scheme) -> bool {
        scheme == crate::spelling::Scheme::Continuation
            && matches!(self.kind, RowKind::Alphabet | RowKind::Learned)
            && is_word_start_key(&self.text)
    }
}

/// Under the continuation spelling a piece either starts a word (`walk`) or continues one
/// (`##ing`), and that is a property of the row, not of the letters its piece holds: the word
/// `##word` (a `##` in a fortune, an operator in code) starts with a piece whose text begins
/// with the mark too. In the core a row's text is also its key (piece index, symbol tables,
/// merge joins), so the key of a word-first piece whose text begins with the mark is opened by
/// [`WORD_START`], a byte no UTF-8 text holds; every other key is its piece text as spelled.
/// The two rows `##word` (word-first) and `##word` (`word` continued) can then never share a key,
/// and the usual rows and files are exactly what they were. The model file writes the property
/// as a third field, `"word_start"`, on such rows only (docs/FORMAT.md).
pub const WORD_START: u8 = 0xFF;

/// The piece a key stands for (the key without its [`WORD_START`] byte).
pub fn piece_text(key: &[u8]) -> &[u8] {
    match key.first() {
        Some(&WORD_START) => &key[1..],
        _ => key,
    }
}

/// Whether a key is a word-first piece that begins with the mark (one opened by [`WORD_START`]).
pub fn is_word_start_key(key: &[u8]) -> bool {
    key.first() == Some(&WORD_START)
}

/// The key of the word-first piece `text` under the continuation mark `mark`.
pub fn word_start_key(text: &[u8], mark: &[u8]) -> Vec<u8> {
    if text.starts_with(mark) {
        let mut k = Vec::with_capacity(text.len() + 1);
        k.push(WORD_START);
        k.extend_from_slice(text);
        k
    } else {
        text.to_vec()
    }
}

/// The key of two pieces joined under the continuation spelling: `left`'s text followed by
/// `right`'s without its mark (`##e` + `##s` = `##es`, `walk` + `##ing` = `walking`). The join
/// keeps `left`'s property: a word-first `#` joined with `###` is the word-first `##`.
pub fn join_continuation(left: &[u8], right: &[u8], mark: &[u8]) -> Vec<u8> {
    let r = right.strip_prefix(mark).unwrap_or(right);
    if is_word_start_key(left) || left.starts_with(mark) {
        let mut k = Vec::with_capacity(left.len() + r.len());
        k.extend_from_slice(left);
        k.extend_from_slice(r);
        k
    } else {
        let mut t = Vec::with_capacity(left.len() + r.len());
        t.extend_from_slice(left);
        t.extend_from_slice(r);
        word_start_key(&t, mark)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_first_pieces_that_begin_with_the_mark_get_their_own_key() {
        let m = b"##";
        // the word `##a` is spelled `#`, `###`, `##a`: `#` + `###` is the word-first `##`, and
        // `##` + `##a` the word-first `##a`, never the continuation `##a` (the `a` continued)
        let hash2 = join_continuation(b"#", b"###", m);
        assert_eq!(hash2, b"\xff##");
        let hash2a = join_continuation(&hash2, b"##a", m);
        assert_eq!(hash2a, b"\xff##a");
        assert_ne!(hash2a, b"##a".to_vec());
        assert_eq!(piece_text(&hash2a), b"##a");
        // the usual joins are unchanged
        assert_eq!(join_continuation(b"walk", b"##ing", m), b"walking");
        assert_eq!(join_continuation(b"##e", b"##s", m), b"##es");
        assert_eq!(join_continuation(b"a", b"###", m), b"a#");
        assert_eq!(word_start_key(b"#", m), b"#");
        assert_eq!(word_start_key(b"#", b"#"), b"\xff#");
    }
}
