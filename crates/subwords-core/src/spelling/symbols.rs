//! Unit -> symbol ids: which row each character of a unit is, under the spelling's marks, and
//! what an unknown character becomes (`[UNK]`, or its UTF-8 bytes as byte-fallback rows with the
//! bare marker row where the mark needs one, docs/API.md).
//!
//! [`SymbolIds`] is made once per model from its piece index: a character's plain and marked
//! rows (ASCII in two arrays, the rest in hash maps). [`Spelling::for_each_symbol`] is the same
//! spelling before there are rows (the learners' input: symbol texts).

use crate::error::{Error, Result};
use crate::hash::Map;
use crate::vocab::index::RowIndex;
use crate::vocab::{piece_text, Row, RowKind, WORD_START};

use super::{Scheme, Spelling};

/// What [`SymbolIds::char_id`] gives for a character with no row.
pub const NO_ID: u32 = u32::MAX;

/// A model's characters as symbol ids.
pub struct SymbolIds {
    scheme: Scheme,
    mark: String,
    plain: Map<char, u32>,
    marked: Map<char, u32>,
    ascii_plain: [u32; 128],
    ascii_marked: [u32; 128],
    /// the `[UNK]` row, the first byte-fallback row, the bare marker row
    pub unk: Option<u32>,
    pub byte_base: Option<u32>,
    pub marker: Option<u32>,
    /// The bytes spelling: the row of byte 0 (0, or the number of special rows before the bytes).
    bytes_at: u32,
}

/// The one character `text` is, if it is UTF-8 of exactly one. Asked of every short row of a
/// model as it loads: most are ASCII words, told apart by their length before any UTF-8 check
/// (`from_utf8` on each was 2% of loading a 30k BERT `vocab.txt`).
fn one_char(text: &[u8]) -> Option<char> {
    match text {
        [b] if b.is_ascii() => Some(*b as char),
        // empty, longer than any character, or ASCII of more than one
        _ if text.len() < 2 || text.len() > 4 || text.is_ascii() => None,
        _ => {
            let mut cs = std::str::from_utf8(text).ok()?.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) => Some(c),
                _ => None,
            }
        }
    }
}

impl SymbolIds {
    /// From the model's rows, its piece index (`index`: the indexed rows of `rows`, alphabet,
    /// learned, unit and piece, by their text) and its special rows.
    pub fn new(
        spelling: &Spelling,
        rows: &[Row],
        index: &RowIndex,
        unk: Option<u32>,
        byte_base: Option<u32>,
        marker: Option<u32>,
    ) -> Self {
        let mut plain = Map::default();
        let mut marked = Map::default();
        if spelling.scheme != Scheme::Bytes {
            let mark = spelling.mark.as_str();
            // a symbol's row is one character, with the mark or the word-start byte: at most
            // this long (longer rows, most of a vocabulary, are skipped before their UTF-8 check)
            let longest = 1 + mark.len() + 4;
            let indexed = rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.kind.is_indexed() && r.text.len() <= longest);
            for (id, text) in indexed.map(|(id, r)| (id as u32, r.text.as_slice())) {
                // a word-first piece that begins with the mark is still a plain one
                let t = piece_text(text);
                if let Some(c) = one_char(t) {
                    plain.insert(c, id);
                    continue;
                }
                if text.first() == Some(&WORD_START) {
                    continue; // word-first: never a marked symbol
                }
                let inner = match spelling.scheme {
                    Scheme::End => t.strip_suffix(mark.as_bytes()),
                    Scheme::Continuation => t.strip_prefix(mark.as_bytes()),
                    _ => None,
                };
                // the mark is text, so the rest is UTF-8 exactly when the row is
                if let Some(c) = inner.and_then(one_char) {
                    marked.insert(c, id);
                }
            }
        }
        let mut ascii_plain = [NO_ID; 128];
        let mut ascii_marked = [NO_ID; 128];
        for c in 0..128u8 {
            ascii_plain[c as usize] = plain.get(&(c as char)).copied().unwrap_or(NO_ID);
            ascii_marked[c as usize] = marked.get(&(c as char)).copied().unwrap_or(NO_ID);
        }
        let bytes_at =
            if spelling.scheme == Scheme::Bytes { index.get(rows, &[0u8]).unwrap_or(0) } else { 0 };
        SymbolIds {
            scheme: spelling.scheme,
            mark: spelling.mark.clone(),
            plain,
            marked,
            ascii_plain,
            ascii_marked,
            unk,
            byte_base,
            marker,
            bytes_at,
        }
    }

    #[inline]
    pub fn char_id(&self, c: char, marked: bool) -> u32 {
        if (c as u32) < 128 {
            if marked {
                self.ascii_marked[c as usize]
            } else {
                self.ascii_plain[c as usize]
            }
        } else if marked {
            self.marked.get(&c).copied().unwrap_or(NO_ID)
        } else {
            self.plain.get(&c).copied().unwrap_or(NO_ID)
        }
    }

    pub fn push_bytes_of(&self, c: char, out: &mut Vec<u32>) {
        let base = self.byte_base.unwrap();
        let mut buf = [0u8; 4];
        for &b in c.encode_utf8(&mut buf).as_bytes() {
            out.push(base + b as u32);
        }
    }

    /// Spells one unit into symbol ids (before merges). `starts`/`ends` say whether the unit
    /// begins/ends a word (false only for parts cut at pre-split joints). With `spans`, pushes for
    /// each id the byte span (relative to the unit's own text) it stands for.
    ///
    /// The index of every piece that stands for an unknown symbol is pushed to `opaque`: such a
    /// piece never takes part in a merge (training never merged an unknown symbol either).
    pub fn spell(
        &self,
        unit: &str,
        starts: bool,
        ends: bool,
        out: &mut Vec<u32>,
        mut spans: Option<&mut Vec<(u32, u32)>>,
        opaque: &mut Vec<usize>,
    ) {
        let span = |k: usize, a: usize, b: usize, spans: &mut Option<&mut Vec<(u32, u32)>>| {
            if let Some(sp) = spans.as_deref_mut() {
                for _ in 0..k {
                    sp.push((a as u32, b as u32));
                }
            }
        };
        match self.scheme {
            Scheme::Bytes => {
                let at = self.bytes_at;
                out.extend(unit.bytes().map(|b| at + b as u32));
                if let Some(sp) = spans.as_deref_mut() {
                    sp.extend((0..unit.len()).map(|i| (i as u32, i as u32 + 1)));
                }
            }
            Scheme::Front => {
                for (i, c) in unit.char_indices() {
                    let before = out.len();
                    let id = self.char_id(c, false);
                    if id != NO_ID {
                        out.push(id);
                    } else {
                        if self.byte_base.is_some() {
                            self.push_bytes_of(c, out);
                        } else {
                            out.push(self.unk.unwrap());
                        }
                        opaque.extend(before..out.len());
                    }
                    span(out.len() - before, i, i + c.len_utf8(), &mut spans);
                }
            }
            Scheme::End => {
                let last = unit.char_indices().next_back().map(|(i, _)| i);
                for (i, c) in unit.char_indices() {
                    let before = out.len();
                    let end = i + c.len_utf8();
                    let is_marked = ends && Some(i) == last;
                    let id = self.char_id(c, is_marked);
                    if id != NO_ID {
                        out.push(id);
                        span(1, i, end, &mut spans);
                        continue;
                    }
                    if self.byte_base.is_none() {
                        opaque.push(out.len());
                        out.push(self.unk.unwrap());
                        span(1, i, end, &mut spans);
                        continue;
                    }
                    if is_marked {
                        // `c</w>` has no row: the plain `c` (or its bytes), then the bare mark
                        let p = self.char_id(c, false);
                        if p != NO_ID {
                            out.push(p);
                        } else {
                            self.push_bytes_of(c, out);
                        }
                        span(out.len() - before, i, end, &mut spans);
                        out.push(self.marker.unwrap());
                        span(1, end, end, &mut spans);
                    } else {
                        self.push_bytes_of(c, out);
                        span(out.len() - before, i, end, &mut spans);
                    }
                    opaque.extend(before..out.len());
                }
            }
            Scheme::Continuation => {
                for (k, (i, c)) in unit.char_indices().enumerate() {
                    let end = i + c.len_utf8();
                    let is_marked = !(starts && k == 0);
                    let id = self.char_id(c, is_marked);
                    if id != NO_ID {
                        out.push(id);
                        span(1, i, end, &mut spans);
                        continue;
                    }
                    let first = out.len();
                    if self.byte_base.is_none() {
                        opaque.push(out.len());
                        out.push(self.unk.unwrap());
                        span(1, i, end, &mut spans);
                        continue;
                    }
                    if is_marked {
                        out.push(self.marker.unwrap());
                        span(1, i, i, &mut spans);
                    }
                    let before = out.len();
                    self.push_bytes_of(c, out);
                    span(out.len() - before, i, end, &mut spans);
                    opaque.extend(first..out.len());
                }
            }
        }
    }

    /// The symbols (alphabet row ids) a piece is made of, by the spelling's rules.
    pub fn symbols_of_row(&self, rows: &[Row], id: u32) -> Result<Vec<u32>> {
        let row = &rows[id as usize];
        if self.scheme == Scheme::Bytes {
            return Ok(row.text.iter().map(|&b| self.bytes_at + b as u32).collect());
        }
        let text = std::str::from_utf8(piece_text(&row.text))
            .map_err(|_| Error::ModelFile(format!("row {id}: not UTF-8")))?;
        let mark = self.mark.as_str();
        let word_start = row.text.first() == Some(&WORD_START);
        let (body, marked_first, marked_rest, marked_last) = match self.scheme {
            Scheme::Continuation if word_start => (text, false, true, false),
            Scheme::End => match text.strip_suffix(mark) {
                Some(b) => (b, false, false, true),
                None => (text, false, false, false),
            },
            Scheme::Continuation => match text.strip_prefix(mark) {
                Some(b) => (b, true, true, false),
                None => (text, false, true, false),
            },
            _ => (text, false, false, false),
        };
        let n = body.chars().count();
        let mut out = Vec::with_capacity(n);
        for (k, c) in body.chars().enumerate() {
            let marked =
                if k == 0 { marked_first } else { marked_rest } || (marked_last && k + 1 == n);
            let x = self.char_id(c, marked);
            if x == NO_ID || rows[x as usize].kind != RowKind::Alphabet {
                return Err(Error::ModelFile(format!(
                    "row {id}: {text:?} is not made of the alphabet's symbols"
                )));
            }
            out.push(x);
        }
        if out.is_empty() {
            return Err(Error::ModelFile(format!("row {id}: an empty piece")));
        }
        Ok(out)
    }
}

impl Spelling {
    /// Calls `f` with the text of each symbol of a unit as spelled (`starts`/`ends`: whether the
    /// unit begins/ends a word; false only for parts cut at pre-split joints).
    pub fn for_each_symbol(&self, unit: &str, starts: bool, ends: bool, mut f: impl FnMut(&[u8])) {
        let mut buf: Vec<u8> = Vec::with_capacity(16);
        match self.scheme {
            Scheme::Bytes => {
                for b in unit.bytes() {
                    f(&[b]);
                }
            }
            Scheme::Front => {
                for c in unit.chars() {
                    let mut t = [0u8; 4];
                    f(c.encode_utf8(&mut t).as_bytes());
                }
            }
            Scheme::End => {
                let n = unit.chars().count();
                for (k, c) in unit.chars().enumerate() {
                    buf.clear();
                    let mut t = [0u8; 4];
                    buf.extend_from_slice(c.encode_utf8(&mut t).as_bytes());
                    if ends && k + 1 == n {
                        buf.extend_from_slice(self.mark.as_bytes());
                    }
                    f(&buf);
                }
            }
            Scheme::Continuation => {
                for (k, c) in unit.chars().enumerate() {
                    buf.clear();
                    let first = starts && k == 0;
                    if !first {
                        buf.extend_from_slice(self.mark.as_bytes());
                    }
                    let mut t = [0u8; 4];
                    buf.extend_from_slice(c.encode_utf8(&mut t).as_bytes());
                    if first && buf.starts_with(self.mark.as_bytes()) {
                        // a one-character mark that is the word's first character
                        buf.insert(0, WORD_START);
                    }
                    f(&buf);
                }
            }
        }
    }
}
