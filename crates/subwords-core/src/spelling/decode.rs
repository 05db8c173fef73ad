//! Pieces -> text, and what the round trip gives: decoding, `normalize` (what
//! `decode(encode(text))` is when every symbol is spellable), the mark clash that would make a
//! unit decode to other text, and where each byte of a unit lies in the
//! text it came from (offsets).

use crate::error::{Error, Result};
use crate::vocab::{piece_text, Row, RowKind};

use super::{Scheme, Spelling};

impl Spelling {
    /// A word holding the end mark would decode to different text; it is refused rather than
    /// silently changed. (Under continuation a word may begin with the mark: whether a piece
    /// continues a word is a property of its row, see `vocab::WORD_START`.)
    pub fn check_unit(&self, unit: &str) -> Result<()> {
        let clash = match self.scheme {
            Scheme::End => unit.contains(self.mark.as_str()),
            _ => false,
        };
        if clash {
            return Err(Error::Input(format!(
                "the word {unit:?} holds this model's mark {:?}: its pieces would decode to different text. \
                 Remove or escape the mark in the input, or use a model trained with another mark",
                self.mark
            )));
        }
        Ok(())
    }

    /// Pieces -> text: the rows' texts joined, each mark read back as the space (or word start)
    /// it stands for, byte rows as their bytes. An id with no row is an error.
    pub fn decode_bytes(&self, rows: &[Row], ids: &[u32]) -> Result<Vec<u8>> {
        let mut out: Vec<u8> = Vec::with_capacity(ids.len() * 4);
        let mark = self.mark.as_bytes();
        let mut prev_kind: Option<RowKind> = None;
        for &id in ids {
            let row = rows.get(id as usize).ok_or_else(|| {
                Error::UnknownPiece(format!(
                    "id {id} is not a row (this vocabulary has {} rows)",
                    rows.len()
                ))
            })?;
            match self.scheme {
                Scheme::Bytes => out.extend_from_slice(&row.text),
                Scheme::End => match row.kind {
                    RowKind::Byte => out.push(row.text[0]),
                    RowKind::Marker => out.push(b' '),
                    _ => replace_all(&row.text, mark, b" ", &mut out),
                },
                Scheme::Front => match row.kind {
                    RowKind::Byte => out.push(row.text[0]),
                    _ => replace_all(&row.text, mark, b" ", &mut out),
                },
                Scheme::Continuation => match row.kind {
                    RowKind::Byte => {
                        // a byte continues the word after the bare `##` row, or when it is a
                        // UTF-8 continuation byte after another byte row (the rest of a character)
                        let b = row.text[0];
                        let continues = prev_kind == Some(RowKind::Marker)
                            || (prev_kind == Some(RowKind::Byte) && (0x80..=0xBF).contains(&b));
                        if !continues && !out.is_empty() {
                            out.push(b' ');
                        }
                        out.push(b);
                    }
                    RowKind::Marker => {}
                    // a unit row is a whole word, whatever letters it begins with
                    _ => match row.text.strip_prefix(mark) {
                        Some(rest) if !matches!(row.kind, RowKind::Special | RowKind::Unit) => {
                            out.extend_from_slice(rest)
                        }
                        _ => {
                            if !out.is_empty() {
                                out.push(b' ');
                            }
                            out.extend_from_slice(piece_text(&row.text));
                        }
                    },
                },
            }
            prev_kind = Some(row.kind);
        }
        match self.scheme {
            Scheme::End if out.last() == Some(&b' ') => {
                out.pop();
            }
            Scheme::Front if out.first() == Some(&b' ') => {
                out.remove(0);
            }
            _ => {}
        }
        Ok(out)
    }

    /// What `decode(encode(text))` gives when every symbol is spellable.
    pub fn normalize(&self, text: &str) -> Result<String> {
        if matches!(self.scheme, Scheme::End | Scheme::Continuation) {
            let mut err = Ok(());
            self.for_each_unit(text, |u, _| {
                if err.is_ok() {
                    err = self.check_unit(u);
                }
            });
            err?;
        }
        let normalized;
        let text = if self.normalizes()
            && self.scheme != Scheme::End
            && self.scheme != Scheme::Continuation
        {
            // end and continuation normalize in `for_each_unit`; the others here
            normalized = self.normalize_text(text).0;
            normalized.as_str()
        } else {
            text
        };
        Ok(match self.scheme {
            Scheme::Bytes => text.to_string(),
            Scheme::End | Scheme::Continuation => {
                // the units joined by one space (a pre-split puts spaces where it cut)
                let mut out = String::with_capacity(text.len());
                self.for_each_unit(text, |u, _| {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    out.push_str(u);
                });
                out
            }
            Scheme::Front => {
                let mark = self.front_mark();
                let mut out = String::with_capacity(text.len());
                super::for_each_word(text, |a, b| {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    for c in text[a..b].chars() {
                        out.push(if c == mark { ' ' } else { c });
                    }
                });
                out
            }
        })
    }
}

fn replace_all(text: &[u8], from: &[u8], to: &[u8], out: &mut Vec<u8>) {
    if from.is_empty() {
        out.extend_from_slice(text);
        return;
    }
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
}

/// For each byte position of `unit` (0..=len), the byte position of `text` it corresponds to.
/// For every spelling but `front` the unit is a slice of the text at `start`. For `front` the
/// unit's marks stand for whitespace runs (or nothing, at the very front) and literal marks.
pub fn unit_to_text_positions(
    scheme: Scheme,
    unit: &str,
    text: &str,
    start: usize,
    mark: char,
) -> Vec<usize> {
    if scheme != Scheme::Front {
        return (0..=unit.len()).map(|i| start + i).collect();
    }
    let mut map = vec![start; unit.len() + 1];
    let mut t = start;
    let tb = text.as_bytes();
    for (i, c) in unit.char_indices() {
        map[i] = t;
        if c == mark {
            let here = text[t..].chars().next();
            if here == Some(mark) {
                t += mark.len_utf8();
            } else if here.is_some_and(char::is_whitespace) {
                while t < tb.len() {
                    let d = text[t..].chars().next().unwrap();
                    if !d.is_whitespace() {
                        break;
                    }
                    t += d.len_utf8();
                }
            }
            // else: the mark put in front of the text stands for nothing
        } else {
            // skip to the character (marks never skip non-whitespace text)
            t += c.len_utf8();
        }
    }
    map[unit.len()] = t;
    // spans are [map[a], map[b]); a mark standing for nothing has an empty span
    map
}
