//! `subwords._core.train_traced`: a training with the merge engine's or the Unigram learner's
//! trace switched on (`subwords.measure`). The request comes in as a dict read into
//! [`TraceAsk`]; the trace goes back as dicts and lists built once. Pieces are written as UTF-8
//! where they are valid and as lists of byte values where they are not (byte-level pieces can
//! split a character).

use pyo3::prelude::*;
use serde_json::{json, Value};

use subwords_core::learners;
use subwords_core::learners::merge::{MergeTrace, TraceRequest};
use subwords_core::learners::unigram::{UnigramTrace, UnigramTraceRequest};

use crate::{to_py, values, PyTokenizer, Trainer};

/// What a traced training records, as `subwords.measure` asks for it.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TraceAsk {
    /// record each step's tied pairs (at most `max_ties` of them)
    #[serde(default)]
    ties: bool,
    #[serde(default = "sixty_four")]
    max_ties: u64,
    /// (step from 1, left piece, right piece): the pair step `step` must merge
    #[serde(default)]
    forced: Vec<(u64, String, String)>,
    /// record the Unigram learner's EM steps
    #[serde(default)]
    em: bool,
    /// only each merge step's corpus length and rows (what a size curve needs)
    #[serde(default)]
    lengths_only: bool,
}

fn sixty_four() -> u64 {
    64
}

fn text(b: &[u8]) -> Value {
    match std::str::from_utf8(b) {
        Ok(s) => Value::String(s.to_owned()),
        Err(_) => json!(b),
    }
}

fn merge_json(t: &MergeTrace) -> Value {
    let steps: Vec<Value> = t
        .steps
        .iter()
        .map(|s| {
            json!({
                "stage": s.stage,
                "left": text(&s.left),
                "right": text(&s.right),
                "result": text(&s.result),
                "num": s.num,
                // a u128 is not a JSON number everyone reads exactly: text
                "den": s.den.to_string(),
                "ties": s.ties.iter().map(|(l, r)| json!([text(l), text(r)])).collect::<Vec<_>>(),
                "tie_count": s.tie_count,
                "forced": s.forced,
                "new_row": s.new_row,
                "pieces_after": s.pieces_after,
                "new_rows_after": s.new_rows_after,
            })
        })
        .collect();
    json!({ "stage_pieces_before": t.stage_pieces_before, "steps": steps, "error": t.error })
}

fn float(x: f64) -> Value {
    // a serde_json value holds no infinities: they go as text, which Python's float() reads
    if x.is_finite() {
        json!(x)
    } else {
        Value::String(if x > 0.0 {
            "inf".into()
        } else if x < 0.0 {
            "-inf".into()
        } else {
            "nan".into()
        })
    }
}

fn pieces_json(v: &[(Vec<u8>, f64)]) -> Value {
    Value::Array(v.iter().map(|(p, x)| json!([text(p), float(*x)])).collect())
}

fn unigram_json(t: &UnigramTrace) -> Value {
    let rounds: Vec<Value> = t
        .rounds
        .iter()
        .map(|r| {
            json!({
                "size": r.size,
                "em_dropped": r.em_dropped,
                "log_likelihood": float(r.log_likelihood),
                "candidates": r.candidates,
                "zero_losses": r.zero_losses,
                "losses": pieces_json(&r.losses),
                "pruned": pieces_json(&r.pruned),
            })
        })
        .collect();
    let em: Vec<Value> =
        t.em.iter()
            .map(|e| json!({ "round": e.round, "step": e.step, "pieces": pieces_json(&e.pieces) }))
            .collect();
    json!({ "seed_size": t.seed_size, "rounds": rounds, "em": em })
}

/// Trains as `Trainer.train` does, with tracing on. `request`: a dict of [`TraceAsk`]'s fields
/// (all optional; `lengths_only` returns the merge steps as two lists, `pieces_after` and
/// `new_rows_after`). Returns the model and `{"merge": ..., "unigram": ...}` (the learner that
/// did not run gives None).
#[pyfunction]
pub fn train_traced<'py>(
    py: Python<'py>,
    trainer: &Bound<'py, Trainer>,
    request: &Bound<'py, PyAny>,
) -> PyResult<(PyTokenizer, Bound<'py, PyAny>)> {
    let bad = |m: String| to_py(py, subwords_core::Error::Option(m));
    let req: TraceAsk = values::from_py(request).map_err(|e| bad(format!("trace request: {e}")))?;
    let mut merge_req =
        TraceRequest { ties: req.ties, max_ties: req.max_ties as usize, forced: Vec::new() };
    for (step, l, r) in req.forced {
        if step < 1 {
            return Err(bad(format!(
                "a forced choice is (step from 1, left piece, right piece), got step {step}"
            )));
        }
        merge_req.forced.push((step, l.into_bytes(), r.into_bytes()));
    }
    let uni_req = UnigramTraceRequest { em: req.em };

    let mut t = trainer.borrow_mut();
    let corpus = t.take_corpus(py)?;
    let options = t.options.clone();
    let pool = &t.pool;
    let progress = &*t.progress;
    let mut traces = learners::Traces {
        merge: Some((merge_req, Default::default())),
        unigram: Some((uni_req, Default::default())),
    };
    let model = py.detach(|| {
        pool.install(|| learners::train_traced(&options, corpus, Some(progress), &mut traces))
    });
    let mt = traces.merge.map(|t| t.1).unwrap_or_default();
    let ut = traces.unigram.map(|t| t.1).unwrap_or_default();
    let model = model.map_err(|e| to_py(py, e))?;
    if let Some(e) = &mt.error {
        return Err(bad(e.clone()));
    }
    let is_unigram = !ut.rounds.is_empty();
    // "lengths": only each step's corpus length and rows (what a size curve needs)
    let lengths_only = req.lengths_only;
    let merge = if is_unigram {
        Value::Null
    } else if lengths_only {
        json!({
            "stage_pieces_before": mt.stage_pieces_before,
            "pieces_after": mt.steps.iter().map(|s| s.pieces_after).collect::<Vec<_>>(),
            "new_rows_after": mt.steps.iter().map(|s| s.new_rows_after).collect::<Vec<_>>(),
        })
    } else {
        merge_json(&mt)
    };
    let out = json!({
        "merge": merge,
        "unigram": if is_unigram { unigram_json(&ut) } else { Value::Null },
    });
    Ok((PyTokenizer::wrap(model), values::to_py(py, &out)?))
}

/// Python's `str.split()` whitespace: Unicode White_Space plus the four separators
/// U+001C..U+001F, which `str.isspace` also counts.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Whitespace-separated words, as `len(text.split())` counts them.
fn words(text: &str) -> u64 {
    let mut n = 0;
    let mut inside = false;
    for c in text.chars() {
        let ws = py_space(c);
        if !ws && !inside {
            n += 1;
        }
        inside = !ws;
    }
    n
}

/// What one pass over a batch gives `subwords.measure.metrics`.
type Measured = (Vec<u64>, Vec<u64>, Vec<u64>, u64, u64, Vec<u32>);

/// One pass over a batch for `subwords.measure.metrics`: every text encoded (as `encode_batch`,
/// without a template's specials) and decoded again, in parallel, without building the id
/// lists in Python. Returns (how often each id occurs, by id; pieces per text; whitespace words
/// per text; UTF-8 bytes in all; characters in all; the indices of the texts that do not decode
/// back to themselves).
#[pyfunction]
pub fn measure_batch(
    py: Python<'_>,
    model: &Bound<'_, PyTokenizer>,
    texts: Vec<pyo3::pybacked::PyBackedStr>,
    threads: usize,
) -> PyResult<Measured> {
    use rayon::prelude::*;
    let m = &model.get().inner;
    let pool = crate::pool(threads)?;
    let out = py.detach(|| {
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let all = m.encode_batch(&refs, threads)?;
        pool.install(|| {
            let per: Vec<subwords_core::Result<(bool, u64, u64)>> = all
                .par_iter()
                .zip(refs.par_iter())
                .map(|(ids, t)| {
                    // bytes first (no UTF-8 repair, no copy); only a mismatch is looked at again
                    // as `decode` gives it (U+FFFD in the text can equal a repaired byte)
                    let raw = m.decode_bytes(ids)?;
                    let same = raw == t.as_bytes() || String::from_utf8_lossy(&raw) == *t;
                    Ok((same, words(t), t.chars().count() as u64))
                })
                .collect();
            let mut counts = vec![0u64; m.rows.len()];
            let mut lengths = Vec::with_capacity(all.len());
            let mut word_counts = Vec::with_capacity(all.len());
            let (mut bytes, mut chars) = (0u64, 0u64);
            let mut failed = Vec::new();
            for (k, ((ids, r), t)) in all.iter().zip(per).zip(&refs).enumerate() {
                let (same, w, c) = r?;
                for &i in ids {
                    counts[i as usize] += 1;
                }
                lengths.push(ids.len() as u64);
                word_counts.push(w);
                bytes += t.len() as u64;
                chars += c;
                if !same {
                    failed.push(k as u32);
                }
            }
            Ok::<_, subwords_core::Error>((counts, lengths, word_counts, bytes, chars, failed))
        })
    });
    out.map_err(|e| to_py(py, e))
}
