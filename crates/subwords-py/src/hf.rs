//! `subwords._core.HfPipeline`: a Hugging Face `tokenizers` pipeline (see `subwords_core::hf`).
//! The Python class `subwords.formats.huggingface.HuggingFace` carries the API; this layer only
//! builds the pipeline from its plan and encodes with the GIL released.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyList;

use subwords_core::hf::HfPipeline;

#[pyclass(module = "subwords._core", name = "HfPipeline", frozen)]
pub struct PyHfPipeline {
    inner: HfPipeline,
    /// One Python int per id below `ints_len`, made on first use (see `PyModel::list`).
    ints: std::sync::OnceLock<Vec<Py<PyAny>>>,
    ints_len: u32,
}

impl PyHfPipeline {
    fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let ints = self.ints.get_or_init(|| (0..self.ints_len).map(|i| i.into_pyobject(py).unwrap().into_any().unbind()).collect());
        PyList::new(py, ids.iter().map(|&i| ints[i as usize].bind(py)))
    }
}

#[pymethods]
impl PyHfPipeline {
    /// `plan`: the JSON plan; `id_limit`: one more than the largest id the plan can produce.
    #[new]
    fn new(py: Python<'_>, plan: &str, id_limit: u32) -> PyResult<Self> {
        let inner = py.detach(|| HfPipeline::from_json(plan)).map_err(|e| super::to_py(py, e))?;
        Ok(PyHfPipeline { inner, ints: std::sync::OnceLock::new(), ints_len: id_limit })
    }

    /// `allowed[i]`: whether the i-th added token of the plan may match.
    fn encode<'py>(&self, py: Python<'py>, text: &str, allowed: Vec<bool>) -> PyResult<Bound<'py, PyList>> {
        let ids = py.detach(|| self.inner.encode(text, &allowed));
        self.list(py, &ids)
    }

    fn encode_batch<'py>(&self, py: Python<'py>, texts: Vec<PyBackedStr>, allowed: Vec<bool>, threads: usize) -> PyResult<Bound<'py, PyList>> {
        let all = py.detach(|| {
            let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
            self.inner.encode_batch(&refs, &allowed, threads)
        });
        let lists = all.iter().map(|ids| self.list(py, ids)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
    }

    /// `text` through a JSON list of plan normalizers (to normalize added tokens' contents
    /// before the pipeline exists).
    #[staticmethod]
    fn normalize_with(py: Python<'_>, normalizers: &str, text: &str) -> PyResult<String> {
        let ns: Vec<subwords_core::hf::Normalizer> = serde_json::from_str(normalizers)
            .map_err(|e| super::to_py(py, subwords_core::Error::ModelFile(format!("internal plan: {e}"))))?;
        Ok(subwords_core::hf::normalize_with(&ns, text))
    }

    /// The text as the normalizers leave it.
    fn normalize(&self, py: Python<'_>, text: &str) -> String {
        py.detach(|| self.inner.normalize(text))
    }
}
