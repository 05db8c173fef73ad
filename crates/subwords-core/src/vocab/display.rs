//! How a row is shown: as the pages print it, and as the model file stores it.

use crate::spelling::Scheme;

use super::{piece_text, Row, RowKind};

/// A row as the pages print it (`est</w>`, `##est`, `▁low`, `<0xC3>`, `[UNK]`, `Ġlow`).
pub fn display_row(scheme: Scheme, row: &Row, byte_chars: &[char; 256]) -> String {
    match row.kind {
        RowKind::Byte => format!("<0x{:02X}>", row.text[0]),
        RowKind::Special => String::from_utf8_lossy(&row.text).into_owned(),
        _ if scheme == Scheme::Bytes => row.text.iter().map(|&b| byte_chars[b as usize]).collect(),
        // a word-first piece that begins with the mark shows as its text; the file adds the
        // `word_start` field (tokenizer/file.rs)
        _ => String::from_utf8_lossy(piece_text(&row.text)).into_owned(),
    }
}
