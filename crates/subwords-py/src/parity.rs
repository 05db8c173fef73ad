//! Parity-aware BPE (`learners/merge/parity.rs`) from Python: training from one counted input
//! per language, and the learner alone on units already spelled in symbols (what the
//! differential tests run against `subwords.reference.parity`).

use pyo3::prelude::*;

use subwords_core::learners::merge::parity::{learn_parity, Measure, ParityParams, UnitLanguages};
use subwords_core::learners::merge::Symbols;
use subwords_core::learners::{self, Corpus, UnitCount};

use crate::{to_py, PyTokenizer, Trainer};

/// Trains one model from one trainer per language (each fed that language's input, all made
/// with the same options, whose `parity.languages` name them in this order).
#[pyfunction]
pub fn parity_train(
    py: Python<'_>,
    languages: Vec<(String, PyRefMut<'_, Trainer>)>,
) -> PyResult<PyTokenizer> {
    let Some((_, first)) = languages.first() else {
        return Err(to_py(
            py,
            subwords_core::Error::Option("parity-aware BPE needs two or more languages".into()),
        ));
    };
    let options = first.options.clone();
    let pool = crate::pool(first.pool.current_num_threads())?;
    let mut joined: Vec<(String, Vec<UnitCount>)> = Vec::new();
    let mut normalizations = subwords_core::spelling::Normalizations::default();
    let mut texts = 0u64;
    for (name, mut t) in languages {
        let corpus = t.take_corpus(py)?;
        let mut units = corpus.units;
        if let Some(table) = &corpus.table {
            units.extend(table.iter().map(|(u, c)| UnitCount {
                text: u.to_string(),
                starts: true,
                ends: true,
                count: c,
            }));
        }
        normalizations.whitespace_runs |= corpus.normalizations.whitespace_runs;
        normalizations.stripped_ends |= corpus.normalizations.stripped_ends;
        normalizations.mark_in_text |= corpus.normalizations.mark_in_text;
        texts += corpus.texts;
        joined.push((name, units));
    }
    let (units, langs) = UnitLanguages::join(joined).map_err(|e| to_py(py, e))?;
    let corpus = Corpus {
        units,
        table: None,
        joints: None,
        normalizations,
        texts,
        streams: None,
        languages: Some(langs),
    };
    let model = py
        .detach(|| pool.install(|| learners::train(&options, corpus)))
        .map_err(|e| to_py(py, e))?;
    Ok(PyTokenizer::wrap(model))
}

/// The learner on `units` (`(symbols, count, language)`), with `bytes` per language:
/// `(merges as (left, right), the language that chose each (None: global), stop, each
/// language's pieces after)`.
#[pyfunction]
#[pyo3(signature = (units, bytes, new_rows, min_count, measure="tokens_per_byte", global_merges=0, window=None, alpha=2.0))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn parity_learn(
    py: Python<'_>,
    units: Vec<(Vec<String>, u64, u16)>,
    bytes: Vec<u64>,
    new_rows: u64,
    min_count: u64,
    measure: &str,
    global_merges: u64,
    window: Option<usize>,
    alpha: f64,
) -> PyResult<(Vec<(String, String)>, Vec<Option<u16>>, String, Vec<u64>)> {
    let measure: Measure = serde_json::from_value(serde_json::Value::String(measure.into()))
        .map_err(|e| to_py(py, subwords_core::Error::Option(format!("measure: {e}"))))?;
    if units.iter().any(|u| u.2 as usize >= bytes.len()) {
        return Err(to_py(
            py,
            subwords_core::Error::Option("a unit's language has no bytes".into()),
        ));
    }
    let mut alphabet: Vec<&String> = units.iter().flat_map(|(u, _, _)| u.iter()).collect();
    alphabet.sort();
    alphabet.dedup();
    let mut symbols = Symbols::new(0, b"");
    for a in &alphabet {
        symbols.push(a.as_bytes().to_vec(), 1);
    }
    let spelled: Vec<(Vec<u32>, u64, u16)> = units
        .iter()
        .map(|(u, c, l)| (u.iter().map(|s| symbols.index[s.as_bytes()]).collect(), *c, *l))
        .collect();
    let params = ParityParams {
        new_rows,
        min_count,
        measure,
        global_merges,
        window: window.map(|w| (w, alpha)),
    };
    let fixed = vec![0u64; bytes.len()];
    let out = learn_parity(spelled, &bytes, &fixed, &mut symbols, &params);
    let name = |t: u32| String::from_utf8_lossy(symbols.text(t)).into_owned();
    let merges = out.merges.iter().map(|m| (name(m[0]), name(m[1]))).collect();
    Ok((merges, out.chosen_by, out.stop.name().to_string(), out.tokens_after))
}
