//! Vocabulary rows: ids, piece texts and kinds (DESIGN §1). This folder alone knows row kinds:
//! what each kind is (here), how a row is shown (`display.rs`) and the order rows must come in
//! (`order.rs`).
//!
//! Row order: `[UNK]` (when the spelling has one), byte-fallback rows `<0x00>`…`<0xFF>` and the bare
//! marker row, the alphabet in code-point order, then learned pieces in merge order. Internally a
//! piece is its bytes as spelled (`w</w>`, `##o`, `▁low`, raw bytes for the bytes spelling).

use serde::{Deserialize, Serialize};

pub mod display;
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

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub text: Vec<u8>,
    pub kind: RowKind,
}

pub const UNK: &str = "[UNK]";
