//! `subwords._core.RankBpe`: tiktoken rank files. `subwords.formats.tiktoken` wraps it; every
//! call that touches text or ids releases the GIL.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyList};

use subwords_compat::tiktoken::{Pattern, RankBpe, Splitter};

use crate::to_py;

#[pyclass(module = "subwords._core", name = "RankBpe", frozen)]
pub struct PyRankBpe {
    inner: Arc<RankBpe>,
}

fn pattern(name: &str) -> PyResult<Pattern> {
    Pattern::from_name(name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown pattern {name:?}")))
}

crate::encoder::holds!(PyRankBpe => RankBpe);

/// The splitter of `pattern_name` (`"r50k"`, `"cl100k"`, `"o200k"`), or of `regex` when
/// `pattern_name` is `"regex"`.
fn splitter(py: Python<'_>, pattern_name: &str, regex: Option<&str>) -> PyResult<Splitter> {
    match (pattern_name, regex) {
        ("regex", Some(source)) => subwords_core::spelling::pattern::Pattern::new(source)
            .map(Splitter::Regex)
            .map_err(|e| to_py(py, e)),
        ("regex", None) => Err(PyValueError::new_err("pattern_name 'regex' needs regex=")),
        (name, None) => pattern(name).map(Splitter::Named),
        (_, Some(_)) => Err(PyValueError::new_err("regex= goes with pattern_name 'regex'")),
    }
}

impl PyRankBpe {
    /// The process's shared ints (`raw::shared_ints`), one per id; capped there: a sparse rank
    /// file may name ids far past its count, and those are made one by one.
    fn ints(&self, py: Python<'_>) -> &[Py<PyAny>] {
        crate::raw::shared_ints(py, self.inner.vocab_size())
    }
}

#[pymethods]
impl PyRankBpe {
    /// Parses a `.tiktoken` file's bytes.
    #[staticmethod]
    #[pyo3(signature = (data, pattern_name, specials, regex=None))]
    fn from_rank_file(
        py: Python<'_>,
        data: &[u8],
        pattern_name: &str,
        specials: Vec<(String, u32)>,
        regex: Option<&str>,
    ) -> PyResult<Self> {
        let p = splitter(py, pattern_name, regex)?;
        let inner =
            py.detach(|| RankBpe::from_rank_file(data, specials, p)).map_err(|e| to_py(py, e))?;
        Ok(PyRankBpe { inner: Arc::new(inner) })
    }

    /// From `(token bytes, rank)` pairs.
    #[staticmethod]
    #[pyo3(signature = (tokens, pattern_name, specials, regex=None))]
    fn from_ranks(
        py: Python<'_>,
        tokens: Vec<(Vec<u8>, u32)>,
        pattern_name: &str,
        specials: Vec<(String, u32)>,
        regex: Option<&str>,
    ) -> PyResult<Self> {
        let p = splitter(py, pattern_name, regex)?;
        let inner = py.detach(|| RankBpe::new(tokens, specials, p)).map_err(|e| to_py(py, e))?;
        Ok(PyRankBpe { inner: Arc::new(inner) })
    }

    /// The encoder over this rank file (`subwords._core.Encoder`).
    fn encoder(slf: &Bound<'_, Self>) -> crate::encoder::PyEncoder {
        crate::encoder::PyEncoder::rank(slf.clone().unbind())
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let bytes = py.detach(|| inner.decode_bytes(&ids)).map_err(|e| to_py(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The bytes of one id, or None.
    fn token<'py>(&self, py: Python<'py>, id: u32) -> Option<Bound<'py, PyBytes>> {
        self.inner.token(id).map(|b| PyBytes::new(py, b))
    }

    /// Every ranked token as (bytes, rank), in rank order (specials excluded): for pickling and
    /// export.
    fn tokens<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, u32)> {
        let inner = &self.inner;
        (0..inner.vocab_size() as u32)
            .filter(|&id| !inner.is_special(id))
            .filter_map(|id| inner.token(id).map(|b| (PyBytes::new(py, b), id)))
            .collect()
    }

    /// The rank of a byte string, or None.
    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.inner.rank(bytes)
    }

    /// The chunks of `text` under the pattern (for tests against the regex).
    fn split(&self, py: Python<'_>, text: PyBackedStr) -> Vec<String> {
        let spans = py.detach(|| self.inner.split(&text));
        spans.into_iter().map(|(a, b)| text[a..b].to_string()).collect()
    }

    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn rank_count(&self) -> usize {
        self.inner.rank_count()
    }

    /// The named pattern (`"r50k"`, `"cl100k"`, `"o200k"`), or `"regex"` for a regular
    /// expression's splitter (see `regex()`).
    fn pattern(&self) -> &'static str {
        self.inner.pattern().map_or("regex", |p| p.name())
    }

    /// The regular expression of a `"regex"` splitter, else None.
    fn regex(&self) -> Option<String> {
        match self.inner.splitter() {
            Splitter::Regex(p) => Some(p.source().to_string()),
            Splitter::Named(_) => None,
        }
    }

    /// The ids of one chunk, with no split: the chunk's rank if it is a token, else its bytes
    /// merged (tiktoken's `encode_single_piece`).
    fn encode_piece<'py>(&self, py: Python<'py>, piece: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let inner = &self.inner;
        let ids = py.detach(|| {
            let mut out = Vec::new();
            if !piece.is_empty() {
                inner.encode_chunk(piece, &mut out, &mut Vec::new());
            }
            out
        });
        crate::id_list(py, self.ints(py), &ids)
    }

    fn specials(&self) -> Vec<(String, u32)> {
        self.inner.specials().to_vec()
    }
}

/// The chunks of `text` under a named pattern (no rank file needed).
#[pyfunction]
pub fn split_pattern(
    py: Python<'_>,
    pattern_name: &str,
    text: PyBackedStr,
) -> PyResult<Vec<String>> {
    let p = pattern(pattern_name)?;
    let mut spans = Vec::new();
    py.detach(|| p.split(&text, |a, b| spans.push((a, b))));
    Ok(spans.into_iter().map(|(a, b)| text[a..b].to_string()).collect())
}
