//! A structure-aware mutator for the JSON targets (`model_json`, `hf_pipeline`).
//!
//! Byte mutations almost always break JSON, so most inputs stop at the parser. Half the time this
//! mutator parses the input (for `hf_pipeline`, one of its `\xFF`-separated JSON parts), changes
//! one node (a value from a pool of boundary numbers, format words and small structures, a
//! removed, doubled or renamed entry, a key the formats know, a copy of another node, a string
//! with a character added or removed) and writes it back; the other half, and for input that does
//! not parse, libFuzzer mutates the bytes. Only the fuzz targets use it: the replay tests run the
//! saved inputs, which need no mutator.

use serde_json::{json, Map, Value};

const KEYS: &[&str] = &[
    "format",
    "version",
    "model",
    "spelling",
    "scheme",
    "mark",
    "split_at_marks",
    "pre_split",
    "byte_fallback",
    "clean_text",
    "strip_accents",
    "lowercase",
    "stream_merges_from",
    "joints",
    "template",
    "cls",
    "sep",
    "options",
    "report",
    "rows",
    "merges",
    "log_probs",
    "vocab_size",
    "max_piece_length",
    "max_word_length",
    "unknown",
    "normalizers",
    "pre_tokenizers",
    "added",
    "type",
    "prepend",
    "pattern",
    "content",
    "charsmap",
    "left",
    "right",
    "add_prefix_space",
    "use_regex",
    "replacement",
    "prepend_scheme",
    "split",
    "individual_digits",
    "contiguous",
    "vocab",
    "unk",
    "continuing_subword_prefix",
    "end_of_word_suffix",
    "fuse_unk",
    "ignore_merges",
    "max_input_chars_per_word",
    "pieces",
    "normalized_content",
    "id",
    "special",
    "single_word",
    "lstrip",
    "rstrip",
    "normalized",
    "handle_chinese_chars",
];

const WORDS: &[&str] = &[
    "",
    " ",
    "a",
    "ab",
    "\u{2581}",
    "##",
    "</w>",
    "<0x41>",
    "<0xZZ>",
    "[UNK]",
    "<unk>",
    "\u{0120}",
    "\u{0}",
    "-inf",
    "subwords",
    "bpe",
    "wordpiece",
    "unigram",
    "word",
    "end",
    "continuation",
    "front",
    "bytes",
    "gpt2",
    "bert",
    "special",
    "alphabet",
    "learned",
    "byte",
    "unknown",
    "rest",
    "Bert",
    "Lowercase",
    "Prepend",
    "Replace",
    "ReplaceWhitespaceRuns",
    "ReplaceSpaceRuns",
    "Precompiled",
    "Nfc",
    "Nfd",
    "Nfkc",
    "Nfkd",
    "Strip",
    "StripAccents",
    "ByteLevel",
    "Metaspace",
    "Whitespace",
    "WhitespaceSplit",
    "Digits",
    "Punctuation",
    "Bpe",
    "WordPiece",
    "Unigram",
    "always",
    "first",
    "never",
    "e\u{301}",
    "\u{1f468}\u{200d}\u{1f469}",
];

fn pool(rng: &mut Rng) -> Value {
    match rng.below(5) {
        0 => json!(WORDS[rng.below(WORDS.len())]),
        1 => {
            let n: &[i128] = &[
                0,
                1,
                -1,
                2,
                255,
                256,
                65535,
                65536,
                16777215,
                16777216,
                4294967295,
                4294967296,
                i64::MAX as i128,
                u64::MAX as i128,
            ];
            let v = n[rng.below(n.len())];
            serde_json::from_str(&v.to_string()).unwrap_or(Value::Null)
        }
        2 => [json!(0.5), json!(-1e300), json!(1e300), json!(-0.0), json!(1e-320)][rng.below(5)]
            .clone(),
        3 => [Value::Null, json!(true), json!(false)][rng.below(3)].clone(),
        _ => [
            json!([]),
            json!({}),
            json!(["a", "b"]),
            json!(["a", "learned"]),
            json!([0, 1, 2]),
            json!({"type": "Bpe"}),
        ][rng.below(6)]
        .clone(),
    }
}

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u32) -> Self {
        Rng(seed as u64 ^ 0x9E37_79B9_7F4A_7C15)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn count(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count).sum(),
        Value::Object(o) => o.values().map(count).sum(),
        _ => 0,
    }
}

/// The `n`-th node in pre-order (0 is the root).
fn nth(v: &Value, n: &mut usize) -> Option<Value> {
    if *n == 0 {
        return Some(v.clone());
    }
    *n -= 1;
    let kids: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        Value::Object(o) => o.values().collect(),
        _ => return None,
    };
    kids.into_iter().find_map(|k| nth(k, n))
}

fn nth_mut<'a>(v: &'a mut Value, n: &mut usize) -> Option<&'a mut Value> {
    if *n == 0 {
        return Some(v);
    }
    *n -= 1;
    let kids: Vec<&'a mut Value> = match v {
        Value::Array(a) => a.iter_mut().collect(),
        Value::Object(o) => o.values_mut().collect(),
        _ => return None,
    };
    for k in kids {
        let c = count(k);
        if *n < c {
            return nth_mut(k, n);
        }
        *n -= c;
    }
    None
}

fn mutate_value(doc: &mut Value, rng: &mut Rng) {
    let total = count(doc).min(1 << 20);
    let copy = nth(doc, &mut rng.below(total));
    let Some(node) = nth_mut(doc, &mut rng.below(total)) else { return };
    match (rng.below(6), node) {
        (0, Value::Object(o)) if !o.is_empty() => {
            let k = o.keys().nth(rng.below(o.len())).cloned().unwrap_or_default();
            o.remove(&k);
        }
        (1, Value::Object(o)) => {
            o.insert(KEYS[rng.below(KEYS.len())].to_string(), pool(rng));
        }
        (2, Value::Object(o)) if !o.is_empty() => {
            let k = o.keys().nth(rng.below(o.len())).cloned().unwrap_or_default();
            if let Some(v) = o.remove(&k) {
                o.insert(KEYS[rng.below(KEYS.len())].to_string(), v);
            }
        }
        (0, Value::Array(a)) if !a.is_empty() => {
            a.remove(rng.below(a.len()));
        }
        (1, Value::Array(a)) if !a.is_empty() => {
            let i = rng.below(a.len());
            let v = a[i].clone();
            a.insert(rng.below(a.len() + 1), v);
        }
        (2, Value::Array(a)) if a.len() > 1 => {
            let (i, j) = (rng.below(a.len()), rng.below(a.len()));
            a.swap(i, j);
        }
        (3, Value::String(s)) => {
            if rng.below(2) == 0 && !s.is_empty() {
                let keep = s.chars().count() - 1;
                *s = s.chars().take(keep).collect();
            } else {
                let c = WORDS[rng.below(WORDS.len())];
                s.push_str(c);
            }
        }
        (4, node) => {
            if let Some(c) = copy {
                *node = c;
            }
        }
        (_, node) => *node = pool(rng),
    }
}

/// Mutates `data[..size]` in place, returning the new size; `bytes` is libFuzzer's own mutator.
pub fn mutate(
    data: &mut [u8],
    size: usize,
    max_size: usize,
    seed: u32,
    bytes: impl Fn(&mut [u8], usize, usize) -> usize,
) -> usize {
    let mut rng = Rng::new(seed);
    if rng.below(2) == 0 {
        return bytes(data, size, max_size);
    }
    let input = &data[..size];
    let parts: Vec<&[u8]> = input.split(|&b| b == 0xFF).collect();
    let k = rng.below(parts.len().min(2));
    let Ok(mut doc) = serde_json::from_slice::<Value>(parts[k]) else {
        return bytes(data, size, max_size);
    };
    for _ in 0..1 + rng.below(2) {
        mutate_value(&mut doc, &mut rng);
    }
    if doc.is_null() {
        doc = Value::Object(Map::new());
    }
    let Ok(text) = serde_json::to_vec(&doc) else { return bytes(data, size, max_size) };
    let mut out = Vec::with_capacity(size + text.len());
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(0xFF);
        }
        out.extend_from_slice(if i == k { &text } else { p });
    }
    if out.len() > max_size || out.len() > data.len() {
        return bytes(data, size, max_size);
    }
    data[..out.len()].copy_from_slice(&out);
    out.len()
}
