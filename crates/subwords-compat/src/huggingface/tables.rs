//! A `tokenizer.json`'s two large tables, read straight from the file's bytes (the goal: load
//! time no more than `tokenizers`').
//!
//! The model's `vocab` object and `merges` list are nearly all of a tokenizer.json. Parsing the
//! whole file into Python objects (`json.loads`, a dict and a list of tens of thousands of
//! entries), checking them and converting them again for the pipeline took 10 of 23 ms for a
//! 30,522-token BERT file, against `tokenizers`' 16 ms for the whole load. [`split`] reads the
//! two tables here, in one pass over the file, into [`Tables`], and
//! hands back the rest of the document as JSON text, `"vocab": {}` and `"merges": []` standing
//! where the tables were, for the Python reader's checks of the small parts.
//!
//! It reads only what is plainly well formed, and gives `None` for everything else: bytes that
//! are not UTF-8 JSON, a document or model that is not an object, a key twice at the top or in
//! the model, a vocab that is not an object (a Unigram model's list), a vocab entry whose id is
//! not a whole number below [`MAX_ID`](super::MAX_ID), a token twice, a merge that is neither
//! `"a b"` nor `["a", "b"]` with both tokens non-empty. The full reader then reads the file and
//! names what is wrong, so every message comes from one place. What `split` accepts the full
//! reader accepts too, with the same tables: the full reader's checks of these two tables are
//! the ones written here (ids whole numbers in range, tokens once, merges two non-empty tokens).

use std::fmt;
use std::hash::BuildHasher as _;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use subwords_core::hash::{BuildHasher, Map};

use super::MAX_ID;

/// The model's vocabulary and merges as the file has them.
pub struct Tables {
    /// (token, id) in the file's order
    pub vocab: Vec<(String, u32)>,
    /// (left, right) in rank order
    pub merges: Vec<(String, String)>,
    /// A Unigram model's scores, by id (its vocab is a list of `[piece, score]`, ids the
    /// places); empty for an object vocab
    pub scores: Vec<f64>,
    /// token hash -> position in `vocab`; positions whose hash an earlier token took are in
    /// `collided` (a lookup reads them in turn)
    index: Map<u64, u32>,
    collided: Vec<u32>,
    hasher: BuildHasher,
}

impl Tables {
    /// The tables, indexed by token; `None` when a token appears twice.
    pub fn new(vocab: Vec<(String, u32)>, merges: Vec<(String, String)>) -> Option<Self> {
        Self::scored(vocab, merges, Vec::new())
    }

    /// [`Tables::new`] with a Unigram model's scores (one per token, by id).
    pub fn scored(
        vocab: Vec<(String, u32)>,
        merges: Vec<(String, String)>,
        scores: Vec<f64>,
    ) -> Option<Self> {
        let hasher = BuildHasher::default();
        let mut index: Map<u64, u32> =
            Map::with_capacity_and_hasher(vocab.len(), Default::default());
        let mut collided = Vec::new();
        for (k, (t, _)) in vocab.iter().enumerate() {
            match index.entry(hasher.hash_one(t.as_str())) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(k as u32);
                }
                std::collections::hash_map::Entry::Occupied(e) => {
                    if vocab[*e.get() as usize].0 == *t
                        || collided.iter().any(|&j: &u32| vocab[j as usize].0 == *t)
                    {
                        return None;
                    }
                    collided.push(k as u32);
                }
            }
        }
        Some(Tables { vocab, merges, scores, index, collided, hasher })
    }

    /// The id of `token`, if the vocabulary has it.
    pub fn get(&self, token: &str) -> Option<u32> {
        let k = *self.index.get(&self.hasher.hash_one(token))?;
        let (t, id) = &self.vocab[k as usize];
        if t == token {
            return Some(*id);
        }
        self.collided
            .iter()
            .map(|&j| &self.vocab[j as usize])
            .find(|(t, _)| t == token)
            .map(|(_, id)| *id)
    }

    /// The largest id, if there is a token.
    pub fn max_id(&self) -> Option<u32> {
        self.vocab.iter().map(|&(_, id)| id).max()
    }
}

/// A tokenizer.json's text without the model's vocab and merges, and those tables; `None` when
/// the file is not plainly well formed there (see the module's notes).
pub fn split(text: &str) -> Option<(String, Tables)> {
    let mut de = serde_json::Deserializer::from_str(text);
    let (rest, vocab, merges) = de.deserialize_map(Level::Document).ok()?;
    de.end().ok()?;
    let (vocab, scores) = vocab?;
    Some((rest, Tables::scored(vocab, merges.unwrap_or_default(), scores)?))
}

/// GPT-2's `vocab.json` (an object token -> id) and `merges.txt` (a `#version` line may open
/// it; then one `a b` a line, `\r\n` or `\n`, blank lines skipped) read into tables; `None`
/// when either is not plainly well formed, for the full reader to name what is wrong.
pub fn vocab_merges(vocab_json: &[u8], merges_txt: &[u8]) -> Option<Tables> {
    let mut de = serde_json::Deserializer::from_str(std::str::from_utf8(vocab_json).ok()?);
    let vocab = de.deserialize_map(VocabSeed).ok()?.0;
    de.end().ok()?;
    let text = std::str::from_utf8(merges_txt).ok()?;
    let mut merges = Vec::new();
    for (k, line) in text.split('\n').enumerate() {
        if k == 0 && line.starts_with("#version") {
            continue;
        }
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        merges.push(merge_pair(line)?);
    }
    Tables::new(vocab, merges)
}

/// A merge written `"a b"`: exactly two tokens, both non-empty, and one space (the rule of
/// tokenizers' string form and of GPT-2's merges.txt lines).
pub fn merge_pair(s: &str) -> Option<(String, String)> {
    let mut it = s.split(' ');
    match (it.next(), it.next(), it.next()) {
        (Some(a), Some(b), None) if !a.is_empty() && !b.is_empty() => {
            Some((a.to_string(), b.to_string()))
        }
        _ => None,
    }
}

/// A JSON string of `s`, appended to `out`.
fn push_key(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("a str is always JSON"));
}

/// Keys seen in one object: a key twice is refused (Python's reader names it).
fn once<E: de::Error>(seen: &mut Vec<String>, key: &str) -> Result<(), E> {
    if seen.iter().any(|k| k == key) {
        return Err(E::custom("a key twice"));
    }
    seen.push(key.to_string());
    Ok(())
}

/// A vocab as read: (token, id) and, for a Unigram list, the scores by id.
type Vocab = (Vec<(String, u32)>, Vec<f64>);

type Parts = (String, Option<Vocab>, Option<Vec<(String, String)>>);

/// An object whose entries are copied as written but for those read here: the document's
/// `model`, and the model's `vocab` and `merges` (read into tables, an empty value of the same
/// kind left in their places).
#[derive(Clone, Copy)]
enum Level {
    Document,
    Model,
}

impl<'de> DeserializeSeed<'de> for Level {
    type Value = Parts;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Parts, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Level {
    type Value = Parts;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts, A::Error> {
        let mut out = String::from("{");
        let (mut vocab, mut merges) = (None, None);
        let mut seen = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            once(&mut seen, &key)?;
            if seen.len() > 1 {
                out.push(',');
            }
            push_key(&mut out, &key);
            out.push(':');
            match (self, key.as_str()) {
                (Level::Document, "model") => {
                    let (text, v, m) = map.next_value_seed(Level::Model)?;
                    out.push_str(&text);
                    (vocab, merges) = (v, m);
                }
                (Level::Model, "vocab") => {
                    let v: Vocab = map.next_value_seed(VocabSeed)?;
                    // the same kind of JSON value, empty, for the Python reader's type checks
                    out.push_str(if v.1.is_empty() { "{}" } else { "[]" });
                    vocab = Some(v);
                }
                (Level::Model, "merges") => {
                    let list: Vec<MergePair> = map.next_value()?;
                    merges = Some(list.into_iter().map(|MergePair(a, b)| (a, b)).collect());
                    out.push_str("[]");
                }
                _ => {
                    let raw: &RawValue = map.next_value()?;
                    out.push_str(raw.get());
                }
            }
        }
        out.push('}');
        Ok((out, vocab, merges))
    }
}

/// `{"token": id, ...}`, ids whole numbers below `MAX_ID`; or a Unigram model's
/// `[["piece", score], ...]`, pieces non-empty, scores numbers (JSON has no infinity), ids the
/// places, fewer than `MAX_ID`. Not empty.
struct VocabSeed;

impl<'de> DeserializeSeed<'de> for VocabSeed {
    type Value = Vocab;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for VocabSeed {
    type Value = Vocab;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object token -> id, or a list of [piece, score]")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((token, id)) = map.next_entry::<String, u64>()? {
            if id >= MAX_ID as u64 {
                return Err(de::Error::custom("an id out of range"));
            }
            out.push((token, id as u32));
        }
        if out.is_empty() {
            return Err(de::Error::custom("an empty vocab"));
        }
        Ok((out, Vec::new()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let (mut out, mut scores) = (Vec::new(), Vec::new());
        // serde reads a tuple as a list of exactly two
        while let Some((piece, score)) = seq.next_element::<(String, f64)>()? {
            if piece.is_empty() || !score.is_finite() {
                return Err(de::Error::custom("not a [piece, finite score] pair"));
            }
            if out.len() as u64 >= MAX_ID as u64 {
                return Err(de::Error::custom("too many pieces"));
            }
            out.push((piece, out.len() as u32));
            scores.push(score);
        }
        if out.is_empty() {
            return Err(de::Error::custom("an empty vocab"));
        }
        Ok((out, scores))
    }
}

/// One merge: `"a b"` (exactly one space) or `["a", "b"]`, tokens non-empty.
struct Merge;

/// What [`Merge`] reads.
struct MergePair(String, String);

impl<'de> Deserialize<'de> for MergePair {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Merge).map(|(a, b)| MergePair(a, b))
    }
}

impl<'de> Visitor<'de> for Merge {
    type Value = (String, String);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"a b\" or [\"a\", \"b\"]")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        merge_pair(s).ok_or_else(|| E::custom("not two tokens and one space"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let a: String = seq.next_element()?.ok_or_else(|| de::Error::custom("not a pair"))?;
        let b: String = seq.next_element()?.ok_or_else(|| de::Error::custom("not a pair"))?;
        if seq.next_element::<de::IgnoredAny>()?.is_some() || a.is_empty() || b.is_empty() {
            return Err(de::Error::custom("not a pair of tokens"));
        }
        Ok((a, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Split = (String, Vec<(String, u32)>, Vec<(String, String)>);

    fn tables(text: &str) -> Option<Split> {
        split(text).map(|(rest, t)| (rest, t.vocab, t.merges))
    }

    fn owned(v: &[(&str, u32)]) -> Vec<(String, u32)> {
        v.iter().map(|&(t, i)| (t.to_string(), i)).collect()
    }

    #[test]
    fn lifts_the_tables_and_keeps_the_rest_as_written() {
        // hand-written: both merge forms, an escaped token, entries around the model
        let text = r#"{"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "\"q\u00e9": 3},
            "merges": ["a b", ["ab", "b"]], "unk_token": null}, "decoder": {"type": "Fuse"}}"#;
        let (rest, vocab, merges) = tables(text).expect("a well-formed file");
        assert_eq!(vocab, owned(&[("a", 0), ("b", 1), ("ab", 2), ("\"qé", 3)]));
        assert_eq!(
            merges,
            vec![("a".to_string(), "b".to_string()), ("ab".to_string(), "b".to_string())]
        );
        let doc: serde_json::Value = serde_json::from_str(&rest).unwrap();
        let want: serde_json::Value = serde_json::from_str(
            r#"{"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": [], "unk_token": null}, "decoder": {"type": "Fuse"}}"#,
        )
        .unwrap();
        assert_eq!(doc, want);
    }

    #[test]
    fn lookups_find_every_token_and_no_other() {
        let (_, t) = split(r###"{"model": {"vocab": {"[UNK]": 7, "x": 0, "##x": 3}}}"###).unwrap();
        assert_eq!(
            (t.get("[UNK]"), t.get("x"), t.get("##x"), t.get("y"), t.get("")),
            (Some(7), Some(0), Some(3), None, None)
        );
        assert_eq!(t.max_id(), Some(7));
    }

    #[test]
    fn tokens_whose_hashes_collide_are_still_found() {
        // the index holds one position per hash: force every token onto one hash by hand
        let mut t = Tables::new(owned(&[("a", 0), ("b", 1), ("c", 2)]), vec![]).unwrap();
        let h = t.hasher.hash_one("a");
        t.index.clear();
        t.index.insert(h, 0);
        t.collided = vec![1, 2];
        let h_b = t.hasher.hash_one("b");
        t.index.insert(h_b, 0); // "b" hashes to a slot holding "a"
        assert_eq!((t.get("a"), t.get("b")), (Some(0), Some(1)));
    }

    #[test]
    fn a_unigram_list_is_read_with_its_scores() {
        // hand-written: ids are the places, an integer score is a number too, the rest keeps []
        let (rest, t) = split(r#"{"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["▁a", -1.5], ["b", -3]]}}"#).unwrap();
        assert_eq!(t.vocab, owned(&[("<unk>", 0), ("▁a", 1), ("b", 2)]));
        assert_eq!(t.scores, [0.0, -1.5, -3.0]);
        assert_eq!((t.get("▁a"), t.get("a")), (Some(1), None));
        let doc: serde_json::Value = serde_json::from_str(&rest).unwrap();
        assert_eq!(
            doc,
            serde_json::json!({"model": {"type": "Unigram", "unk_id": 0, "vocab": []}})
        );
    }

    #[test]
    fn vocab_json_and_merges_txt_are_read_as_gpt2_writes_them() {
        // hand-written: a #version line, \r\n, a blank line; the merges in order
        let t = vocab_merges(br#"{"a": 0, "b": 1, "ab": 2}"#, b"#version: 0.2\r\na b\r\n\nab b\n")
            .unwrap();
        assert_eq!(t.vocab, owned(&[("a", 0), ("b", 1), ("ab", 2)]));
        assert_eq!(
            t.merges,
            vec![("a".to_string(), "b".to_string()), ("ab".to_string(), "b".to_string())]
        );
        assert!(t.scores.is_empty());
        // no #version line; one anywhere else is a merge line as the Python reader has it (its
        // tokens then are not in the vocab, which the pipeline refuses)
        assert_eq!(vocab_merges(br#"{"a": 0}"#, b"a b").unwrap().merges.len(), 1);
        let late = vocab_merges(br#"{"a": 0}"#, b"a b\n#version: 0.2\n").unwrap();
        assert_eq!(late.merges[1], ("#version:".to_string(), "0.2".to_string()));
        for (v, m) in [
            (&br#"{"a": 0}"#[..], &b"a  b\n"[..]),
            (br#"{"a": 0}"#, b"a\n"),
            (br#"{"a": 0}"#, b"a b c\n"),
            (br#"{"a": 0}"#, b"\xff b\n"),
            (br#"{"a": 0, "a": 1}"#, b""),
            (br#"["a"]"#, b""),
            (br#"{"a": 0} x"#, b""),
            (br#"[["a", 0.0]]"#, b""),
        ] {
            assert!(
                vocab_merges(v, m).is_none(),
                "{:?} / {:?}",
                String::from_utf8_lossy(v),
                String::from_utf8_lossy(m)
            );
        }
    }

    #[test]
    fn declines_what_is_not_plainly_well_formed() {
        for bad in [
            "",
            "[]",
            r#"{"model": {"vocab": {"a": 0}}} x"#,
            r#"{"model": {"vocab": {"a": 0}}, "model": {}}"#,
            r#"{"model": {"vocab": {"a": 0}, "vocab": {"b": 0}}}"#,
            r#"{"model": {"vocab": {"a": 0, "a": 1}}}"#,
            r#"{"model": {"vocab": {"a": -1}}}"#,
            r#"{"model": {"vocab": {"a": 1.0}}}"#,
            r#"{"model": {"vocab": {"a": true}}}"#,
            r#"{"model": {"vocab": {"a": 16777216}}}"#,
            r#"{"model": {"vocab": {}}}"#,
            r#"{"model": {"vocab": []}}"#,
            r#"{"model": {"vocab": [["a"]]}}"#,
            r#"{"model": {"vocab": [["a", 0.0, 1]]}}"#,
            r#"{"model": {"vocab": [["", 0.0]]}}"#,
            r#"{"model": {"vocab": [["a", true]]}}"#,
            r#"{"model": {"vocab": [["a", "0"]]}}"#,
            r#"{"model": {"vocab": [["a", 1e400]]}}"#,
            r#"{"model": {"vocab": [["a", -1.5], ["a", 0]]}}"#,
            r#"{"model": {"vocab": ["a"]}}"#,
            r#"{"model": []}"#,
            r#"{"model": {"merges": ["a b"]}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": ["a  b"]}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": ["ab"]}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": [["a"]]}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": [["a", "b", "c"]]}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": [["", "b"]]}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": [1]}}"#,
            r#"{"model": {"vocab": {"\ud800": 0}}}"#,
        ] {
            assert!(tables(bad).is_none(), "{bad}");
        }
        // the largest id accepted, and a document with no model (the full reader refuses it)
        assert!(tables(r#"{"model": {"vocab": {"a": 16777215}}}"#).is_some());
        assert!(tables(r#"{"version": "1.0"}"#).is_none());
    }
}
