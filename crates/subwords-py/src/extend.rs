//! The engine half of `subwords.extend`. `extend_merges` serves the other formats
//! (Python spells the new corpus's units in the file's alphabet); `model_extended` serves our
//! own models, whose spelling lives in the core (`Tokenizer::extended`).

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use subwords_core::learners::extend::{self, Extension};

use crate::{to_py, PyTokenizer};

type Stats = (&'static str, u64, u64, u64);

fn stats(e: &Extension) -> Stats {
    (e.stop.name(), e.merges.len() as u64, e.pieces_before, e.pieces_after)
}

/// Replays `merges` (`(left, right, result)` ids in rank order) on `units` (ids; `u32::MAX` for a
/// symbol with no row) and learns up to `new_rows` rows after `texts`. Returns (the new merges,
/// the new rows' texts, (stop, merges learned, pieces before, pieces after)).
#[pyfunction]
#[pyo3(signature = (texts, merges, units, new_rows, min_count, strip_right))]
#[allow(clippy::type_complexity)]
pub fn extend_merges(
    py: Python<'_>,
    texts: Vec<Vec<u8>>,
    merges: Vec<[u32; 3]>,
    units: Vec<(Vec<u32>, u64)>,
    new_rows: u64,
    min_count: u64,
    strip_right: Vec<u8>,
) -> PyResult<(Vec<[u32; 3]>, Vec<Py<PyBytes>>, Stats)> {
    let out = py
        .detach(|| extend::extend(&texts, &merges, units, new_rows, min_count, &strip_right))
        .map_err(|e| to_py(py, e))?;
    let new_texts = out.new_texts.iter().map(|t| PyBytes::new(py, t).unbind()).collect();
    let s = stats(&out);
    Ok((out.merges, new_texts, s))
}

/// `model` with up to `new_rows` rows learned on `texts` under its own spelling, and
/// (stop, merges learned, pieces before, pieces after).
#[pyfunction]
pub fn model_extended(
    py: Python<'_>,
    model: &PyTokenizer,
    texts: Vec<String>,
    new_rows: u64,
    min_count: u64,
) -> PyResult<(PyTokenizer, Stats)> {
    let (m, e) = py
        .detach(|| {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            model.inner.extended(&refs, new_rows, min_count)
        })
        .map_err(|e| to_py(py, e))?;
    Ok((PyTokenizer::wrap(m), stats(&e)))
}
