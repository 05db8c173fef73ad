//! `subwords._core.SnmtCodes`: a subword-nmt codes file read in the core
//! (`subwords_compat::subword_nmt`), for `formats/subword_nmt/read.py`.

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::PyTokenizer;

/// A codes file's version and merges, kept in Rust until Python asks for them (the segmenting
/// of other texts, `save_codes`): at 32k merges, making their tuples was a tenth of the load.
#[pyclass(module = "subwords._core", name = "SnmtCodes", frozen)]
pub struct PySnmtCodes {
    inner: subwords_compat::subword_nmt::Codes,
}

#[pymethods]
impl PySnmtCodes {
    /// The codes of `raw` (the file's bytes) and, when they are the merges of an end-spelling
    /// BPE (version 0.2, each part a symbol or an earlier line's piece), that model; `merges`:
    /// the first N lines, -1 for all; `spelling`: the end spelling's object (a dict). `None` when
    /// the file is not plainly well formed, for the Python reader to read and name what is wrong.
    #[staticmethod]
    fn read(
        py: Python<'_>,
        raw: &[u8],
        merges: i64,
        spelling: &Bound<'_, PyAny>,
    ) -> PyResult<Option<(PySnmtCodes, Option<PyTokenizer>)>> {
        let spelling = crate::spelling_of(py, spelling, "spelling")?;
        Ok(py.detach(|| subwords_compat::subword_nmt::read(raw, merges, spelling)).map(
            |mut inner| {
                let model = inner.model.take().map(PyTokenizer::wrap);
                (PySnmtCodes { inner }, model)
            },
        ))
    }

    #[getter]
    fn version(&self) -> (u32, u32) {
        self.inner.version
    }

    /// The merges in file order, as (left, right) tuples.
    fn pairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.inner.pairs())
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}
