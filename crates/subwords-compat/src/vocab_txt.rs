//! BERT's `vocab.txt`: one piece a line, its line number its id, read into a WordPiece model of
//! the core with BERT's `[CLS] … [SEP]` template.
//!
//! A line's trailing `\r`s are dropped; a `[NAME]` line (letters, digits, `_`) is a special row.
//! A file that is not a vocabulary comes back as [`Refused`], naming what is wrong, for the
//! Python reader's message. The Fast WordPiece trie, most of the load, is built from the bytes
//! on a second thread while this one checks the text is UTF-8 and reads, checks and indexes the
//! rows; a file the rows refuse discards it. Taking bytes, not a `str`, lets that thread start
//! at once (a Python decode and a copy back to UTF-8 were 2.45 M instructions of a 30k
//! vocabulary before it could).

use std::sync::atomic::{AtomicBool, Ordering};

use subwords_core::error::Result;
use subwords_core::options::ModelKind;
use subwords_core::segmenters::longest_match::{LongestMatch, Room};
use subwords_core::spelling::{Scheme, Spelling};
use subwords_core::tokenizer::build::{spawn_trie, worth_a_trie_thread};
use subwords_core::tokenizer::Tokenizer;
use subwords_core::vocab::{Row, RowKind};

/// The special rows every BERT vocabulary has.
const NEEDED: [&str; 3] = ["[UNK]", "[CLS]", "[SEP]"];

/// Why a file is not a `vocab.txt`.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// No text at all.
    Empty,
    /// The first line (counted from 1) that is not UTF-8.
    Utf8 { line: usize },
    /// The first line that is empty or holds whitespace (str.isspace's set: Unicode White_Space
    /// and `\x1c`..`\x1f`), with its text.
    Line { line: usize, text: String },
    /// The first of `[UNK]`, `[CLS]`, `[SEP]` the file lacks.
    Missing { name: &'static str },
}

/// The model of a `vocab.txt`'s bytes under `spelling` (the reader's continuation spelling), or
/// what is wrong with the file; `Err` for rows the model checks refuse.
pub fn read(raw: &[u8], spelling: Spelling) -> Result<std::result::Result<Tokenizer, Refused>> {
    if raw.is_empty() {
        return Ok(Err(Refused::Empty));
    }
    let space = |c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c);
    let body = raw.strip_suffix(b"\n").unwrap_or(raw);
    let lines = body.iter().filter(|&&b| b == b'\n').count() + 1;
    let mark = spelling.mark.clone();
    // set when the rows are refused: the trie thread then reads no more lines, so a large bad
    // file is not built into a trie before its error is told
    let stop = AtomicBool::new(false);
    let refused = || stop.store(true, Ordering::Relaxed);
    std::thread::scope(|scope| {
        // the trie of the same pieces the rows read, from `line` below; each line's bytes and
        // its '\n' (the last one's counted in too) are the keys' bytes at most
        let beside = (spelling.scheme == Scheme::Continuation
            && worth_a_trie_thread(lines, || raw.len() as u64 + 1))
        .then(|| {
            spawn_trie(scope, || {
                // a byte split: `str`'s, at a few bytes a line, was a quarter of the thread
                let pieces = body
                    .split(|&b| b == b'\n')
                    .take_while(|_| !stop.load(Ordering::Relaxed))
                    .enumerate()
                    .filter_map(|(n, l)| match line(l) {
                        (piece, RowKind::Piece) => Some((piece, n as u32)),
                        _ => None,
                    });
                let room = Room { pieces: lines, bytes: body.len() + 1, ids: lines };
                LongestMatch::with_room(pieces, room, Some(mark.as_bytes()), None)
            })
        })
        .flatten();
        let body = match std::str::from_utf8(body) {
            Ok(text) => text,
            Err(e) => {
                refused();
                let at = body[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
                return Ok(Err(Refused::Utf8 { line: at }));
            }
        };
        // the engine's rows themselves, their texts inline (no allocation a row)
        let mut rows: Vec<Row> = Vec::with_capacity(lines);
        let mut found = [false; 3];
        for (n, text) in body.split('\n').enumerate() {
            let (piece, kind) = line(text.as_bytes());
            // the line without its trailing '\r's (ASCII, so a character boundary)
            let piece = &text[..piece.len()];
            // printable ASCII holds no whitespace: the character test only for the rest
            let plain = piece.bytes().all(|b| (b'!'..=b'~').contains(&b));
            if piece.is_empty() || (!plain && piece.chars().any(space)) {
                refused();
                return Ok(Err(Refused::Line { line: n + 1, text: piece.to_string() }));
            }
            if kind == RowKind::Special {
                if let Some(k) = NEEDED.iter().position(|name| *name == piece) {
                    found[k] = true;
                }
            }
            rows.push(Row::new(piece.as_bytes(), kind));
        }
        if let Some(k) = found.iter().position(|f| !f) {
            refused();
            return Ok(Err(Refused::Missing { name: NEEDED[k] }));
        }
        let template = Some(("[CLS]", "[SEP]"));
        Tokenizer::from_piece_rows(ModelKind::Wordpiece, spelling, rows, template, beside)
            .inspect_err(|_| refused())
            .map(Ok)
    })
}

/// One line's piece (its trailing `\r`s dropped) and kind: `[NAME]` is special.
fn line(text: &[u8]) -> (&[u8], RowKind) {
    let end = text.iter().rposition(|&b| b != b'\r').map_or(0, |i| i + 1);
    let piece = &text[..end];
    let special = piece.len() >= 3
        && piece[0] == b'['
        && piece[piece.len() - 1] == b']'
        && piece[1..piece.len() - 1].iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_');
    (piece, if special { RowKind::Special } else { RowKind::Piece })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spelling() -> Spelling {
        let object = r###"{"scheme": "continuation", "mark": "##", "split_at_marks": true,
            "pre_split": null, "byte_fallback": false, "clean_text": false,
            "strip_accents": false, "lowercase": false}"###;
        serde_json::from_str(object).unwrap()
    }

    #[test]
    fn lines_are_rows_and_bracketed_names_are_special() {
        assert_eq!(line(b"[CLS]\r\r"), (&b"[CLS]"[..], RowKind::Special));
        assert_eq!(line(b"[a b]"), (&b"[a b]"[..], RowKind::Piece));
        assert_eq!(line(b"[]"), (&b"[]"[..], RowKind::Piece));
        assert_eq!(line(b"##ing"), (&b"##ing"[..], RowKind::Piece));
    }

    fn refused(raw: &[u8]) -> Refused {
        match read(raw, spelling()).unwrap() {
            Err(why) => why,
            Ok(_) => panic!("read as a vocabulary: {raw:?}"),
        }
    }

    #[test]
    fn what_is_wrong_is_named() {
        assert_eq!(refused(b""), Refused::Empty);
        assert_eq!(refused(b"[UNK]\n\xff\n"), Refused::Utf8 { line: 2 });
        assert_eq!(refused(b"[UNK]\na b\n"), Refused::Line { line: 2, text: "a b".into() });
        assert_eq!(refused(b"[UNK]\n[CLS]\nlow\n"), Refused::Missing { name: "[SEP]" });
        let Ok(model) = read(b"[PAD]\n[UNK]\n[CLS]\n[SEP]\nlow\n##er\r\n", spelling()).unwrap()
        else {
            panic!("a vocabulary refused")
        };
        assert_eq!(model.rows.len(), 6);
        assert_eq!(model.template, Some((2, 3)));
    }
}
