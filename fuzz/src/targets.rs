//! The body of each fuzz target, one function per loader of subwords-core.
//!
//! Each function takes the raw input, refuses what the real reader refuses before parsing (its
//! size limit, non-UTF-8 where the reader wants text), loads, and when the load succeeds uses the
//! result a little: encodes a few fixed texts, decodes what it got, and checks the invariants the
//! Python binding relies on (every id it returns indexes its table of ids). A loader may refuse
//! any input with an `Err`; a panic, an abort, a hang or unbounded memory is a bug, whether it
//! happens while loading or in the first use of what was loaded. Each returns whether the input
//! loaded (the replay test checks that the seeds reach the code past the loader).
//!
//! This file is compiled twice: by the fuzz crate (`fuzz/`, nightly, libFuzzer) and by the stable
//! test `crates/subwords-compat/tests/fuzz_corpus.rs` (through `#[path]`), which replays every
//! saved corpus and regression input. So it uses nothing but `subwords_core`, `subwords_compat`, `serde_json` and
//! std.

use std::collections::BTreeMap;

use subwords_compat::huggingface::tables::{merge_pair, split, Tables};
use subwords_compat::huggingface::{HfPipeline, ModelPlan, Plan};
use subwords_compat::sentencepiece::SpModel;
use subwords_compat::tiktoken::{parse_rank_file, Pattern, RankBpe};
use subwords_core::options::ModelKind;
use subwords_core::tokenizer::Tokenizer;

/// A target: whether the input loaded (a refusal is false; a panic is a bug).
pub type Target = fn(&[u8]) -> bool;

/// The targets, by name (the names of `fuzz_targets/*.rs` and of the corpus folders).
pub const TARGETS: &[(&str, Target)] = &[
    ("model_json", model_json),
    ("sentencepiece_model", sentencepiece_model),
    ("tiktoken_ranks", tiktoken_ranks),
    ("hf_pipeline", hf_pipeline),
    ("hf_tables", hf_tables),
];

/// What every loaded model encodes: ASCII with punctuation, runs of whitespace, scripts without
/// spaces, the marks and special surfaces of every format, combining marks, compatibility
/// characters and a ZWJ emoji sequence.
pub const TEXTS: &[&str] = &[
    "Hello, wörld! It's 2024.",
    "  two  spaces\tand a tab\nnew line ",
    "漢字かな交じり ▁x ##ab </w> <0x41> <|endoftext|> [CLS] <s> <unk>",
    "e\u{301} \u{fb01} \u{2460} \u{216b} \u{1f468}\u{200d}\u{1f469}",
    "",
];

/// `python/subwords/_api.py` `MAX_MODEL_FILE_BYTES`: the own model file reader's limit.
pub const MODEL_JSON_MAX_BYTES: usize = 1 << 31;
/// `python/subwords/formats/tiktoken.py` `MAX_FILE_BYTES`.
pub const TIKTOKEN_MAX_BYTES: usize = 256 << 20;
/// `python/subwords/formats/huggingface.py` `MAX_FILE_BYTES` (the tokenizer.json the plan is made from).
pub const HF_MAX_BYTES: usize = 1 << 30;

/// The own JSON model file: `Tokenizer::from_json`, as `subwords.load` calls it.
pub fn model_json(data: &[u8]) -> bool {
    if data.len() > MODEL_JSON_MAX_BYTES {
        return false;
    }
    // the reader refuses non-UTF-8 before parsing
    let Ok(text) = std::str::from_utf8(data) else { return false };
    let Ok(model) = Tokenizer::from_json(text) else { return false };
    let rows = model.rows.len();
    let check = |ids: &[u32], what: &str| {
        assert!(
            ids.iter().all(|&i| (i as usize) < rows),
            "{what}: an id is not below the {rows} rows"
        );
    };
    for t in TEXTS {
        if let Ok(ids) = model.encode(t) {
            check(&ids, "encode");
            let _ = model.decode(&ids);
            let _ = model.decode_bytes(&ids);
        }
        if let Ok((ids, spans)) = model.encode_with_spans(t) {
            check(&ids, "encode_with_spans");
            assert_eq!(ids.len(), spans.len(), "encode_with_spans: one span per id");
            assert!(
                spans.iter().all(|&(a, b)| a <= b && b <= t.len()),
                "encode_with_spans: a span outside the text"
            );
        }
        let _ = model.normalize(t);
        if model.kind == ModelKind::Bpe {
            if let Ok(ids) = model.encode_dropout(t, 0.5, 7) {
                check(&ids, "encode_dropout");
            }
        }
    }
    if model.kind == ModelKind::Unigram {
        for t in ["hello", "ab", "x"] {
            if let Ok(best) = model.nbest_of(t, 3) {
                best.iter().for_each(|(ids, _)| check(ids, "nbest"));
            }
            if let Ok(ids) = model.sample_of(t, 1, 0.5, None) {
                check(&ids, "sample");
            }
        }
    }
    let probe: Vec<u32> = (0..rows.min(300) as u32).collect();
    let _ = model.decode(&probe);
    for i in 0..rows.min(300) as u32 {
        if let Some(p) = model.display(i) {
            let _ = model.piece_to_id(&p);
        }
    }
    // a model that loaded writes a file that loads again, to the same file
    let saved = model.to_json();
    let again = Tokenizer::from_json(&saved)
        .unwrap_or_else(|e| panic!("a loaded model's own file does not load again: {e}"));
    assert_eq!(again.to_json(), saved, "a loaded model's own file reads back differently");
    true
}

/// A SentencePiece `.model` (serialized ModelProto): `SpModel::from_bytes`, which also parses
/// the precompiled character map.
pub fn sentencepiece_model(data: &[u8]) -> bool {
    // from_bytes checks its own limit (MAX_FILE_BYTES) first
    let Ok(model) = SpModel::from_bytes(data.to_vec()) else { return false };
    let n = model.pieces.len();
    let check = |ids: &[u32], what: &str| {
        assert!(ids.iter().all(|&i| (i as usize) < n), "{what}: an id is not below the {n} pieces");
    };
    for t in TEXTS {
        let mut ids = Vec::new();
        if model.encode(t, &mut ids).is_ok() {
            check(&ids, "encode");
            let _ = model.decode(&ids);
        }
        if let Ok((ids, spans)) = model.encode_with_offsets(t) {
            check(&ids, "encode_with_offsets");
            assert_eq!(ids.len(), spans.len(), "encode_with_offsets: one span per id");
            assert!(
                spans.iter().all(|&(a, b)| a <= b && b as usize <= t.len()),
                "encode_with_offsets: a span outside the text"
            );
        }
        let _ = model.normalize(t, true);
    }
    let probe: Vec<u32> = (0..n.min(300) as u32).collect();
    let _ = model.decode(&probe);
    let _ = model.piece_to_id("\u{2581}a");
    assert_eq!(model.to_bytes(), data, "a loaded model saves other bytes than it read");
    true
}

/// A `.tiktoken` rank file: `parse_rank_file` and `RankBpe::from_rank_file`, with two special
/// tokens after the ranks (as the named encodings have them). The split pattern is picked by the
/// input's length, so every pattern sees every kind of file.
pub fn tiktoken_ranks(data: &[u8]) -> bool {
    if data.len() > TIKTOKEN_MAX_BYTES {
        return false;
    }
    let Ok((_, entries)) = parse_rank_file(data) else { return false };
    let n = entries.len() as u32;
    let specials = vec![("<|endoftext|>".to_string(), n), ("<|fim_prefix|>".to_string(), n + 1)];
    let pattern = [Pattern::R50k, Pattern::Cl100k, Pattern::O200k][data.len() % 3];
    let Ok(bpe) = RankBpe::from_rank_file(data, specials, pattern) else { return false };
    for t in TEXTS {
        for allowed in [&[][..], &[0, 1][..]] {
            let ids = bpe.encode(t, allowed);
            // every id has bytes, and they are the text's: rank BPE loses nothing
            let back = bpe
                .decode_bytes(&ids)
                .unwrap_or_else(|e| panic!("an encoded id does not decode: {e}"));
            assert_eq!(back, t.as_bytes(), "decode(encode(text)) is not the text");
        }
    }
    let _ = bpe.decode_bytes(&[0, 1, 255, n, n + 1, n + 2]);
    for id in 0..bpe.vocab_size().min(300) as u32 {
        if let Some(b) = bpe.token(id) {
            let b = b.to_vec();
            if !bpe.is_special(id) {
                assert_eq!(bpe.rank(&b), Some(id), "token {id} does not rank as {id}");
            }
        }
    }
    true
}

/// The Hugging Face pipeline, as `subwords._core.HfPipeline` builds it from the plan the Python
/// side makes out of a tokenizer.json. Input: `plan \xFF vocab \xFF merges` (0xFF never occurs in
/// UTF-8): the plan JSON without the model's tables, the vocab as a JSON object token -> id, the
/// merges one `a b` per line; that is `HfPipeline::with_tables`. An input with no 0xFF is a whole
/// plan with its tables inside: `HfPipeline::from_json`.
pub fn hf_pipeline(data: &[u8]) -> bool {
    if data.len() > HF_MAX_BYTES {
        return false;
    }
    let parts: Vec<&[u8]> = data.split(|&b| b == 0xFF).collect();
    let Ok(plan_text) = std::str::from_utf8(parts[0]) else { return false };
    let (pipe, vocab) = if parts.len() == 1 {
        let Ok(pipe) = HfPipeline::from_json(plan_text) else { return false };
        (pipe, Vec::new())
    } else {
        let Ok(vocab_text) = std::str::from_utf8(parts[1]) else { return false };
        // the Python side hands over a dict; a BTreeMap keeps the fuzzer's runs repeatable
        let Ok(vocab) = serde_json::from_str::<BTreeMap<String, u32>>(vocab_text) else {
            return false;
        };
        let vocab: Vec<(String, u32)> = vocab.into_iter().collect();
        let merges_text = match parts.get(2) {
            Some(m) => match std::str::from_utf8(m) {
                Ok(m) => m,
                Err(_) => return false,
            },
            None => "",
        };
        // as the binding reads a merge "a b": exactly two non-empty tokens
        let mut merges = Vec::new();
        for line in merges_text.split('\n').filter(|l| !l.is_empty()) {
            let Some(pair) = merge_pair(line) else { return false };
            merges.push(pair);
        }
        // a token twice cannot come from the dict the binding reads
        let Some(tables) = Tables::new(vocab.clone(), merges) else { return false };
        let Ok(pipe) = HfPipeline::with_tables(plan_text, &tables) else { return false };
        (pipe, vocab)
    };
    // the plan parsed a second time (it loaded, so it parses) for the ids the binding may see
    let plan: Plan = serde_json::from_str(plan_text).expect("a plan that built a pipeline parses");
    let mut limit = vocab.iter().map(|&(_, i)| i as u64 + 1).max().unwrap_or(0);
    limit = limit.max(plan.added.iter().map(|t| t.id as u64 + 1).max().unwrap_or(0));
    match &plan.model {
        ModelPlan::Bpe { vocab, unk, .. } => {
            limit = limit.max(vocab.iter().map(|&(_, i)| i as u64 + 1).max().unwrap_or(0));
            limit = limit.max(unk.map_or(0, |u| u as u64 + 1));
        }
        ModelPlan::WordPiece { vocab, unk, .. } => {
            limit = limit.max(vocab.iter().map(|&(_, i)| i as u64 + 1).max().unwrap_or(0));
            limit = limit.max(*unk as u64 + 1);
        }
        ModelPlan::Unigram { pieces, unk, .. } => {
            limit = limit.max(pieces.len() as u64).max(*unk as u64 + 1);
        }
    }
    let none = vec![false; plan.added.len()];
    let all = vec![true; plan.added.len()];
    for t in TEXTS {
        for allowed in [&none, &all] {
            let ids = pipe.encode(t, allowed);
            assert!(
                ids.iter().all(|&i| (i as u64) < limit),
                "encode: an id is not below {limit}, the ids the file names"
            );
        }
        let _ = pipe.normalize(t);
    }
    true
}

/// A tokenizer.json's vocab and merges read from its bytes (`huggingface::tables::split`, what
/// `subwords.load` runs on every tokenizer.json before any other reading). Input: the file.
/// What it accepts must be JSON as serde_json reads it whole (but for what Python's reader takes
/// and serde_json's Value does not, outside the tables: then the rest is refused alike), with the same vocab entries and
/// merges, and a rest that is the same document with `{}` and `[]` in their places; every token
/// must be found with its id.
pub fn hf_tables(data: &[u8]) -> bool {
    if data.len() > HF_MAX_BYTES {
        return false;
    }
    let Ok(text) = std::str::from_utf8(data) else { return false };
    let Some((rest, tables)) = split(text) else { return false };
    let mut whole: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            // JSON to Python (whose reader takes it, then names what is wrong) that serde_json's
            // Value refuses: a lone surrogate escape, a number past f64 (1e400). It lies outside
            // the tables, kept in the rest as written, which must be refused the same way.
            let what = |e: &serde_json::Error| {
                e.to_string().split(" at line ").next().unwrap_or_default().to_string()
            };
            let again = serde_json::from_str::<serde_json::Value>(&rest)
                .expect_err("the rest lost what serde_json refuses");
            assert_eq!(what(&again), what(&e), "the rest is refused otherwise than the file");
            return true;
        }
    };
    let rest: serde_json::Value = serde_json::from_str(&rest).expect("the rest is JSON");
    let model =
        whole["model"].as_object_mut().expect("split accepted a model that is not an object");
    let vocab = model.remove("vocab").expect("a vocab");
    if let Some(list) = vocab.as_array() {
        // a Unigram model's [piece, score] pairs: ids are the places
        model.insert("vocab".into(), serde_json::json!([]));
        assert_eq!(
            (list.len(), list.len()),
            (tables.vocab.len(), tables.scores.len()),
            "a piece lost"
        );
        for (k, ((t, id), score)) in tables.vocab.iter().zip(&tables.scores).enumerate() {
            assert_eq!(
                (list[k][0].as_str(), list[k][1].as_f64(), *id as usize),
                (Some(t.as_str()), Some(*score), k)
            );
            assert_eq!(tables.get(t), Some(*id), "lookup of {t:?}");
        }
    } else {
        model.insert("vocab".into(), serde_json::json!({}));
        let vocab = vocab.as_object().expect("an object vocab");
        assert_eq!(vocab.len(), tables.vocab.len(), "a token twice, or one lost");
        assert!(tables.scores.is_empty());
        for (t, id) in &tables.vocab {
            assert_eq!(vocab.get(t).and_then(|v| v.as_u64()), Some(*id as u64), "token {t:?}");
            assert_eq!(tables.get(t), Some(*id), "lookup of {t:?}");
        }
    }
    let merges = if model.contains_key("merges") {
        model.insert("merges".into(), serde_json::json!([]))
    } else {
        None
    };
    match merges {
        None => assert!(tables.merges.is_empty()),
        Some(m) => {
            let m = m.as_array().expect("a list of merges");
            assert_eq!(m.len(), tables.merges.len());
            for (v, (a, b)) in m.iter().zip(&tables.merges) {
                let got = match v {
                    serde_json::Value::String(s) => {
                        s.split_once(' ').map(|(x, y)| (x.to_string(), y.to_string()))
                    }
                    serde_json::Value::Array(p) => Some((
                        p[0].as_str().unwrap().to_string(),
                        p[1].as_str().unwrap().to_string(),
                    )),
                    _ => None,
                };
                assert_eq!(got.as_ref(), Some(&(a.clone(), b.clone())));
                assert!(!a.is_empty() && !b.is_empty(), "a merge with an empty token");
            }
        }
    }
    assert_eq!(whole, rest, "the rest is not the document without its tables");
    true
}
