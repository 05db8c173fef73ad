//! subword-nmt codes files read in the core (for load time). The Python
//! reader (`formats/subword_nmt/read.py`) holds the semantics and every error message; this is
//! its fast path for a file that is plainly well formed. A 32k codes file took 172 ms in
//! Python (its line checks, the rows, the end-spelling test and a JSON model document) against
//! subword-nmt's own 32 ms.
//!
//! [`read`] accepts what the Python reader accepts and gives the same version, merges and model;
//! anything else (a byte-order mark, bytes that are not UTF-8, a carriage return inside a line,
//! a header it does not know, a line that is not a merge, no merges, a model the core refuses)
//! is `None`, and the Python reader then reads the file itself and words the error.

use subwords_core::hash::Set;
use subwords_core::options::ModelKind;
use subwords_core::spelling::Spelling;
use subwords_core::tokenizer::{Parts, Tokenizer};
use subwords_core::vocab::index::RowIndex;
use subwords_core::vocab::{Row, RowKind};

/// The end mark subword-nmt puts on a word's last symbol.
pub const END: &str = "</w>";

/// A codes file's version: (0, 1) or (0, 2).
pub type Version = (u32, u32);

/// A codes file as subword-nmt reads it.
pub struct Codes {
    pub version: Version,
    /// The file's text, which `spans` point into: two strings a merge were 64k allocations of a
    /// 32k file (a tenth of the load).
    text: String,
    /// Each merge's two parts as byte ranges of `text`, in file order, a pair listed twice kept
    /// twice.
    spans: Vec<[u32; 4]>,
    /// The merges as a subwords BPE model of the end spelling, when the codes are one (version
    /// 0.2, each part a symbol or an earlier line's piece: see `model`).
    pub model: Option<Tokenizer>,
}

impl Codes {
    /// The merges in file order, as (left, right).
    pub fn pairs(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + Clone + '_ {
        self.spans.iter().map(|&[a, b, c, d]| {
            (&self.text[a as usize..b as usize], &self.text[c as usize..d as usize])
        })
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// Python's `str.split()` whitespace among ASCII, and `\x0b`, `\x1c`..`\x1f` that Rust's
/// `is_ascii_whitespace` leaves out.
fn python_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1f)
}

/// The version a `#version:` header names, read as the Python reader reads it: its last word,
/// trailing `.0` groups dropped. `None` for any other version, and for a header that is not
/// ASCII (whose words Python's `split()` and Rust's could cut differently).
fn header_version(first: &str) -> Option<Version> {
    if !first.is_ascii() {
        return None;
    }
    let mut word = first.split(|c: char| python_space(c as u8)).rfind(|w| !w.is_empty())?;
    // `re.sub(r"(\.0+)*$", "", word)`
    while let Some(dot) = word.rfind('.') {
        let tail = &word[dot + 1..];
        if tail.is_empty() || !tail.bytes().all(|b| b == b'0') {
            break;
        }
        word = &word[..dot];
    }
    match word {
        "0.2" => Some((0, 2)),
        "0.1" => Some((0, 1)),
        _ => None,
    }
}

/// The version and merges (byte ranges of `text`, see [`Codes::spans`]) of a codes file;
/// `merges`: the first N lines, or every line when negative. `None` when the Python reader would
/// refuse the file (or might word it otherwise).
fn codes(text: &str, merges: i64) -> Option<(Version, Vec<[u32; 4]>)> {
    if text.starts_with('\u{feff}') || text.len() >= u32::MAX as usize {
        return None;
    }
    // a carriage return anywhere but at a line's end
    if text.as_bytes().contains(&b'\r')
        && text.split('\n').any(|line| line.trim_end_matches('\r').contains('\r'))
    {
        return None;
    }
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let (version, body) = if first.starts_with("#version:") {
        (header_version(first)?, rest)
    } else {
        ((0, 1), text)
    };
    if body.trim_matches(['\r', '\n', ' ']).is_empty() {
        return None;
    }
    // each line stripped of '\r', '\n' and ' ' at both ends must be two parts around one
    // space (the Python reader's `item.strip("\r\n ").split(" ")`), read a byte at a time: the
    // lines are a few bytes, where `str`'s searchers cost more to start than to run
    let edge = |b: &u8| matches!(b, b'\r' | b'\n' | b' ');
    let mut at = (body.as_ptr() as usize - text.as_ptr() as usize) as u32;
    let mut spans = Vec::new();
    for (k, line) in body.trim_end_matches('\n').as_bytes().split(|&b| b == b'\n').enumerate() {
        if merges >= 0 && k as i64 >= merges {
            break;
        }
        let start = line.iter().position(|b| !edge(b))?;
        let end = line.iter().rposition(|b| !edge(b))? + 1;
        let item = &line[start..end];
        let space = item.iter().position(|&b| b == b' ')?;
        if space + 1 == item.len() || item[space + 1..].contains(&b' ') {
            return None;
        }
        let a = at + start as u32;
        spans.push([a, a + space as u32, a + space as u32 + 1, at + end as u32]);
        at += line.len() as u32 + 1;
    }
    if spans.is_empty() {
        return None;
    }
    Some((version, spans))
}

/// The model of the rows the Python reader numbers (`SubwordNmt._build_rows`): `[UNK]`, every
/// character of the codes plain and with `</w>` in code-point order, then each merge's joined
/// piece in file order (a piece made twice keeps its first row). Version 0.2 only: no bare
/// `</w>` row.
///
/// `Ok(None)` when the codes are not the merges of a subwords `end` model (the Python reader's
/// `_is_end_spelling_model`): every `</w>` must be the end mark of a right part with a body, and
/// each part one symbol or the piece of an earlier line; that is, with no `</w>` inside, a row
/// already (the alphabet holds every symbol, the pieces of earlier lines follow), so one pass
/// tests it and numbers the rows. `Err(())` where the Python reader's model would differ or
/// fail, for it to build.
fn model<'a>(
    spelling: Spelling,
    pairs: impl ExactSizeIterator<Item = (&'a str, &'a str)> + Clone,
) -> Result<Option<Tokenizer>, ()> {
    // the characters, in code-point order: ASCII in a table, the rest in a set sorted after
    let mut ascii = [false; 128];
    let mut other: Set<char> = Set::default();
    for (a, b) in pairs.clone() {
        for part in [a, b] {
            for c in part.strip_suffix(END).unwrap_or(part).chars() {
                if c.is_ascii() {
                    ascii[c as usize] = true;
                } else {
                    other.insert(c);
                }
            }
        }
    }
    let mut chars: Vec<char> = (0..128u8).filter(|&b| ascii[b as usize]).map(char::from).collect();
    let mut rest: Vec<char> = other.into_iter().collect();
    rest.sort_unstable();
    chars.extend(rest);
    let mut rows: Vec<Row> = Vec::with_capacity(1 + 2 * chars.len() + pairs.len());
    rows.push(Row::new(b"[UNK]", RowKind::Special));
    for c in chars {
        rows.push(Row::new(c.to_string().as_bytes(), RowKind::Alphabet));
        rows.push(Row::new(format!("{c}{END}").as_bytes(), RowKind::Alphabet));
    }
    // row ids by text (rows 1..), as rows are added
    let mut id = RowIndex::with_capacity(rows.len() + pairs.len());
    for i in 1..rows.len() {
        id.insert(&rows, i as u32);
    }
    let mut merges: Vec<[u32; 3]> = Vec::with_capacity(pairs.len());
    // (left, right) rows of the merges so far: a pair listed twice counts at its first line
    let mut seen: Set<u64> = Set::with_capacity_and_hasher(pairs.len(), Default::default());
    for (a, b) in pairs {
        let body = b.strip_suffix(END).unwrap_or(b);
        if a.contains(END) || body.is_empty() || body.contains(END) {
            return Ok(None);
        }
        let (Some(left), Some(right)) = (id.get(&rows, a.as_bytes()), id.get(&rows, b.as_bytes()))
        else {
            return Ok(None);
        };
        if !seen.insert(subwords_core::hash::pack(left, right)) {
            continue;
        }
        let joined = [a, b].concat();
        if joined == "[UNK]" {
            return Err(()); // the Python reader's row 0, where its merge finds no row
        }
        let next = rows.len() as u32;
        rows.push(Row::new(joined.as_bytes(), RowKind::Learned));
        let made = match id.insert(&rows, next) {
            Some(earlier) => {
                rows.pop(); // a piece made twice keeps its first row
                earlier
            }
            None => next,
        };
        merges.push([left, right, made]);
    }
    drop((id, seen));
    Tokenizer::new(Parts { merges, ..Parts::new(ModelKind::Bpe, spelling, rows) })
        .map(Some)
        .map_err(|_| ())
}

/// A codes file read as subword-nmt reads it, its model built when the codes are one (see
/// [`Codes::model`]); `spelling`: the end spelling's model-file object. `None` when the Python
/// reader is to read it (see the module's header).
pub fn read(raw: &[u8], merges: i64, spelling: Spelling) -> Option<Codes> {
    let text = std::str::from_utf8(raw).ok()?;
    let (version, spans) = codes(text, merges)?;
    let mut out = Codes { version, text: text.to_string(), spans, model: None };
    if version == (0, 2) {
        out.model = model(spelling, out.pairs()).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end() -> Spelling {
        serde_json::from_str(r#"{"scheme":"end","mark":"</w>","split_at_marks":true,"pre_split":null,"byte_fallback":false,"clean_text":false,"strip_accents":false,"lowercase":false}"#).unwrap()
    }

    #[test]
    fn headers() {
        assert_eq!(header_version("#version: 0.2"), Some((0, 2)));
        assert_eq!(header_version("#version: 0.2.0.00\r"), Some((0, 2)));
        assert_eq!(header_version("#version: 0.1"), Some((0, 1)));
        assert_eq!(header_version("#version: 0.3"), None);
        assert_eq!(header_version("#version: 0.20"), None);
        assert_eq!(header_version("#version:"), None);
        assert_eq!(header_version("#version: 0.2\u{a0}"), None);
    }

    #[test]
    fn the_page_codes() {
        // the BPE page's first merges as learn_bpe writes them
        let raw = b"#version: 0.2\ne s\nes t</w>\nl o\nlo w</w>\n";
        let c = read(raw, -1, end()).unwrap();
        assert_eq!(c.version, (0, 2));
        assert_eq!(c.len(), 4);
        let m = c.model.unwrap();
        // [UNK], then e e</w> l l</w> o o</w> s s</w> t t</w> w w</w> (rows 1..12), then
        // es (13), est</w> (14), lo (15), low</w> (16)
        assert_eq!(m.rows.len(), 17);
        assert_eq!(m.encode("lowest low").unwrap(), [15, 11, 14, 16]);
        // the first 2 merges only
        assert_eq!(
            read(raw, 2, end()).unwrap().pairs().collect::<Vec<_>>(),
            [("e", "s"), ("es", "t</w>")]
        );
    }

    #[test]
    fn declined() {
        for raw in [
            &b"\xef\xbb\xbf#version: 0.2\ne s\n"[..],
            b"#version: 0.2\ne \xff\n",
            b"#version: 0.2\ne\rs\n",
            b"#version: 0.9\ne s\n",
            b"#version: 0.2\ne s t\n",
            b"#version: 0.2\ne s\n\nl o\n",
            b"#version: 0.2\n\n",
            b"",
        ] {
            assert!(read(raw, -1, end()).is_none(), "{:?}", String::from_utf8_lossy(raw));
        }
        // a merge past the limit is not read, so not checked
        assert!(read(b"#version: 0.2\ne s\nbad line here\n", 1, end()).is_some());
    }

    #[test]
    fn other_codes_have_no_model() {
        // version 0.1, and a part that no earlier line made
        assert!(read(b"#version: 0.1\ne s\n", -1, end()).unwrap().model.is_none());
        assert!(read(b"e s\n", -1, end()).unwrap().model.is_none());
        assert!(read(b"#version: 0.2\nes t</w>\n", -1, end()).unwrap().model.is_none());
    }
}
