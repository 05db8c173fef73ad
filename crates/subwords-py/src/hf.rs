//! `subwords._core.HfPipeline`: a Hugging Face `tokenizers` pipeline (see `subwords_compat::huggingface`).
//! The Python class `subwords.formats.huggingface.HuggingFace` carries the API; this layer only
//! builds the pipeline from its plan and encodes with the GIL released.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use subwords_compat::huggingface::tables::{merge_pair, split, vocab_merges, Tables};
use subwords_compat::huggingface::HfPipeline;
use subwords_core::encoder::Encoder;

/// (position in the ids, string) of each token whose string is not its id's entry.
type Notes = Vec<(usize, String)>;

fn bad(py: Python<'_>, m: String) -> PyErr {
    super::to_py(py, subwords_core::Error::ModelFile(m))
}

#[pyclass(module = "subwords._core", name = "HfPipeline", frozen)]
pub struct PyHfPipeline {
    inner: HfPipeline,
    /// One Python int per id below `ints_len`, made on first use (see `PyTokenizer::list`); ids at or
    /// above it (a sparse file's) are made one by one.
    ints: std::sync::OnceLock<Vec<Py<PyAny>>>,
    ints_len: u32,
}

crate::encoder::holds!(PyHfPipeline => HfPipeline);

impl PyHfPipeline {
    fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        super::id_list(py, self.ints(py), ids)
    }

    fn ints(&self, py: Python<'_>) -> &[Py<PyAny>] {
        self.ints.get_or_init(|| super::int_objects(py, self.ints_len))
    }
}

#[pymethods]
impl PyHfPipeline {
    /// `plan`: the plan without the model's tables, a dict; `tables`: its vocabulary and merges
    /// as the file has them; `id_limit`: one more than the largest id produced.
    #[new]
    fn new(
        py: Python<'_>,
        plan: &Bound<'_, PyAny>,
        tables: PyRef<'_, PyHfTables>,
        id_limit: u32,
    ) -> PyResult<Self> {
        let plan: subwords_compat::huggingface::Plan =
            crate::values::from_py(plan).map_err(|e| internal_plan(py, e))?;
        let t = &tables.inner;
        let size = t.vocab.len() as u32;
        let inner =
            py.detach(|| HfPipeline::with_plan(plan, t)).map_err(|e| super::to_py(py, e))?;
        // the table follows the vocabulary's size, not its largest id: a file naming one token at
        // id 16 777 215 would otherwise make 16 M ints (600 MB, seconds) on its first encode
        let ints_len = id_limit.min(size.saturating_mul(2).saturating_add(1024));
        Ok(PyHfPipeline { inner, ints: std::sync::OnceLock::new(), ints_len })
    }

    /// The encoder over this pipeline (`subwords._core.Encoder`), with no template.
    fn encoder(slf: &Bound<'_, Self>) -> crate::encoder::PyEncoder {
        crate::encoder::PyEncoder::hf(slf.clone().unbind())
    }

    /// The ids and `(position, string)` for each token whose string is not its id's entry
    /// (see `HfPipeline::encode_surfaces`).
    fn encode_surfaces<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Vec<u32>,
    ) -> PyResult<(Bound<'py, PyList>, Notes)> {
        let allowed = self.inner.allowed(&allowed).map_err(|e| super::to_py(py, e))?;
        let (ids, notes) = py.detach(|| self.inner.encode_surfaces(text, allowed.mask()));
        Ok((self.list(py, &ids)?, notes))
    }

    /// The ids by the general model step alone (`HfPipeline::encode_general`): tests check
    /// that the byte-level lookups give the same.
    fn encode_general<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Vec<u32>,
    ) -> PyResult<Bound<'py, PyList>> {
        let allowed = self.inner.allowed(&allowed).map_err(|e| super::to_py(py, e))?;
        let ids = py.detach(|| self.inner.encode_general(text, allowed.mask()));
        self.list(py, &ids)
    }

    /// Whether words go through the byte-level model step (`HfPipeline::byte_level_fast`).
    #[getter]
    fn byte_level_fast(&self) -> bool {
        self.inner.byte_level_fast()
    }

    /// `(id, start, end)` per token in code points of `text`, as tokenizers gives its
    /// offsets (see `HfPipeline::encode_offsets`); `trim`: the post-processor's `trim_offsets`
    /// is on, with this `add_prefix_space`.
    #[pyo3(signature = (text, allowed, trim=None))]
    fn encode_offsets(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Vec<u32>,
        trim: Option<bool>,
    ) -> PyResult<Vec<(u32, u32, u32)>> {
        let allowed = self.inner.allowed(&allowed).map_err(|e| super::to_py(py, e))?;
        Ok(py.detach(|| self.inner.encode_offsets(text, allowed.mask(), trim)))
    }

    /// Per text, the `(start, end)` of each token as [`Self::encode_offsets`] gives them (no ids),
    /// the texts shared out over `threads` threads without the GIL: one call for a batch instead
    /// of a call and a Python loop per text (the transformers backend's offsets).
    #[pyo3(signature = (texts, allowed, trim=None, threads=1))]
    fn encode_offsets_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        allowed: Vec<u32>,
        trim: Option<bool>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let allowed = self.inner.allowed(&allowed).map_err(|e| super::to_py(py, e))?;
        let mask = allowed.mask();
        let inner = &self.inner;
        // each thread keeps the words of its texts (`SpanCache`)
        let one = |t: &String, cache: &mut subwords_compat::huggingface::SpanCache| {
            inner
                .encode_offsets_with(t, mask, trim, cache)
                .into_iter()
                .map(|(_, a, b)| (a, b))
                .collect::<Vec<(u32, u32)>>()
        };
        let part = move |texts: &[String]| {
            let mut cache = Default::default();
            texts.iter().map(|t| one(t, &mut cache)).collect::<Vec<_>>()
        };
        let spans: Vec<Vec<(u32, u32)>> = py.detach(|| {
            let n = threads.clamp(1, 64).min(texts.len().div_ceil(32).max(1));
            if n == 1 {
                return part(&texts);
            }
            let size = texts.len().div_ceil(n);
            std::thread::scope(|s| {
                let parts: Vec<_> =
                    texts.chunks(size).map(|chunk| s.spawn(move || part(chunk))).collect();
                parts
                    .into_iter()
                    .flat_map(|h| h.join().expect("an offsets worker panicked"))
                    .collect()
            })
        });
        let out = PyList::empty(py);
        for offs in spans {
            out.append(PyList::new(py, offs)?)?;
        }
        Ok(out)
    }

    /// The normalized text and, per byte of it, the byte span of `text` it came from.
    fn normalize_aligned(&self, py: Python<'_>, text: &str) -> (String, Vec<(u32, u32)>) {
        py.detach(|| {
            let a = self.inner.normalize_aligned(text, 0);
            (a.text, a.spans)
        })
    }

    /// `text` through a list of plan normalizers (to normalize added tokens' contents before
    /// the pipeline exists).
    #[staticmethod]
    fn normalize_with(
        py: Python<'_>,
        normalizers: &Bound<'_, PyAny>,
        text: &str,
    ) -> PyResult<String> {
        let ns: Vec<subwords_compat::huggingface::Normalizer> =
            crate::values::from_py(normalizers).map_err(|e| internal_plan(py, e))?;
        Ok(subwords_compat::huggingface::normalize_with(&ns, text))
    }

    /// The text as the normalizers leave it.
    fn normalize(&self, py: Python<'_>, text: &str) -> String {
        py.detach(|| self.inner.normalize(text))
    }
}

/// `subwords._core.HfTables`: a tokenizer.json model's vocabulary and merges, read from the file's
/// bytes (`split`) or from the Python objects of a document made in Python (`from_objects`).
#[pyclass(module = "subwords._core", name = "HfTables", frozen)]
pub struct PyHfTables {
    inner: Tables,
}

#[pymethods]
impl PyHfTables {
    /// The file's text without the model's vocab object and merges list (`{}` and `[]` in their
    /// places) and those tables; `None` when the file is not plainly well formed there, for the
    /// full reader to read and name what is wrong (`subwords_compat::huggingface::tables`).
    #[staticmethod]
    fn split(py: Python<'_>, raw: &[u8]) -> Option<(String, PyHfTables)> {
        py.detach(|| {
            let text = std::str::from_utf8(raw).ok()?;
            split(text).map(|(rest, inner)| (rest, PyHfTables { inner }))
        })
    }

    /// GPT-2's `vocab.json` and `merges.txt`, read; `None` when either is not plainly well
    /// formed, for the full reader to read and name what is wrong.
    #[staticmethod]
    fn vocab_merges(py: Python<'_>, vocab_json: &[u8], merges_txt: &[u8]) -> Option<PyHfTables> {
        py.detach(|| vocab_merges(vocab_json, merges_txt).map(|inner| PyHfTables { inner }))
    }

    /// The tables of a document's objects: `vocab` token -> id (ids already checked whole numbers
    /// in range), `merges` each "a b" or [a, b].
    #[staticmethod]
    fn from_objects(
        py: Python<'_>,
        vocab: &Bound<'_, PyDict>,
        merges: &Bound<'_, PyList>,
    ) -> PyResult<Self> {
        // read straight from the dict and the list (no std HashMap on the way, no Vec per
        // merge): at 32k tokens the conversions were most of the load
        let mut tokens: Vec<(String, u32)> = Vec::with_capacity(vocab.len());
        for (t, id) in vocab.iter() {
            tokens.push((t.extract()?, id.extract()?));
        }
        let mut pairs = Vec::with_capacity(merges.len());
        for (k, m) in merges.iter().enumerate() {
            let pair = if let Ok(v) = m.cast::<PyList>() {
                // the list form first: files written by tokenizers >= 0.20 use it
                let two = if v.len() == 2 {
                    Some((v.get_item(0)?.extract::<String>()?, v.get_item(1)?.extract::<String>()?))
                } else {
                    None
                };
                match two {
                    Some((a, b)) if !a.is_empty() && !b.is_empty() => (a, b),
                    Some((a, b)) => {
                        return Err(bad(
                            py,
                            format!(
                                "model BPE merges: merge {k} ({a:?}, {b:?}) has an empty token"
                            ),
                        ))
                    }
                    None => {
                        let v: Vec<String> = v.extract()?;
                        return Err(bad(
                            py,
                            format!("model BPE merges: merge {k} ({v:?}) is not a pair"),
                        ));
                    }
                }
            } else {
                let s: String = m.extract()?;
                merge_pair(&s).ok_or_else(|| bad(py, format!("model BPE merges: merge {k} ({s:?}) is not two tokens separated by one space")))?
            };
            pairs.push(pair);
        }
        // a dict has each token once, so the index always builds
        let inner = Tables::new(tokens, pairs).expect("a dict's keys are distinct");
        Ok(PyHfTables { inner })
    }

    /// The id of `token`, or None.
    fn get(&self, token: &str) -> Option<u32> {
        self.inner.get(token)
    }

    /// The largest id, or None for an empty vocabulary.
    fn max_id(&self) -> Option<u32> {
        self.inner.max_id()
    }

    fn __len__(&self) -> usize {
        self.inner.vocab.len()
    }

    /// (token, id) in the file's order.
    fn pairs(&self) -> Vec<(String, u32)> {
        self.inner.vocab.clone()
    }

    /// (left, right) in rank order.
    fn merges(&self) -> Vec<(String, String)> {
        self.inner.merges.clone()
    }
}

/// A plan the reader built that the core's plan types do not take: a reader bug, named as the
/// model-file error it surfaces as.
fn internal_plan(py: Python<'_>, e: crate::values::ValueError) -> PyErr {
    super::to_py(py, subwords_core::Error::ModelFile(format!("internal plan: {e}")))
}
