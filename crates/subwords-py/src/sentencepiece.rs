//! `subwords._core.SpModel`: a SentencePiece `.model` file, encoded and decoded as
//! `sentencepiece` does (see `subwords_compat::sentencepiece`).

use std::sync::OnceLock;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyList};

use subwords_compat::sentencepiece::{Kind, SpModel as Core};

use crate::{char_offsets, to_py};

/// One segmentation: its cuts as (start, end, id) byte offsets of the normalized text, and its
/// score.
type Segmentation = (Vec<(u32, u32, u32)>, f32);

#[pyclass(module = "subwords._core", frozen)]
pub struct SpModel {
    inner: Core,
    /// One Python str per piece, shared by the lists of pieces (as the process's shared ints,
    /// `raw::shared_ints`, by the lists of ids).
    strs: OnceLock<Vec<Py<PyAny>>>,
}

/// Texts at most this long (bytes) are encoded by [`SpModel::ids`] and [`SpModel::pieces_of`]
/// without letting the GIL go: a few microseconds, less than the hand-over costs the call.
const HOLD_GIL_BELOW: usize = 2048;

crate::encoder::holds!(SpModel => Core);

impl SpModel {
    fn ints(&self, py: Python<'_>) -> &[Py<PyAny>] {
        crate::raw::shared_ints(py, self.inner.pieces.len())
    }

    fn strs(&self, py: Python<'_>) -> &[Py<PyAny>] {
        self.strs.get_or_init(|| {
            self.inner
                .pieces
                .iter()
                .map(|p| pyo3::types::PyString::new(py, p).into_any().unbind())
                .collect()
        })
    }

    /// The ids of one text into `out` (cleared first), the GIL let go for a long one.
    fn ids_into(&self, py: Python<'_>, text: &str, out: &mut Vec<u32>) -> PyResult<()> {
        out.clear();
        let r = if text.len() < HOLD_GIL_BELOW {
            self.inner.encode(text, out)
        } else {
            py.detach(|| self.inner.encode(text, out))
        };
        r.map_err(|e| to_py(py, e))
    }

    /// `f` with the UTF-8 of the argument `text`: borrowed from an exact `str`
    /// ([`crate::raw::exact_str`]), else read as pyo3 reads a `str` argument (a subclass; a
    /// lone surrogate's or a wrong type's error as for a `text: &str` parameter).
    fn with_text<R>(
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        f: impl FnOnce(&str) -> PyResult<R>,
    ) -> PyResult<R> {
        if let Some(s) = crate::raw::exact_str(py, text) {
            return f(&s);
        }
        let s = text.extract::<PyBackedStr>().map_err(|e| {
            if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
                pyo3::exceptions::PyTypeError::new_err(format!("argument 'text': {}", e.value(py)))
            } else {
                e
            }
        })?;
        f(&s)
    }

    /// [`SpModel::ids`] of a text read. A short text's ids go through one buffer per thread,
    /// kept between calls (at most a short text's ids).
    fn ids_list<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let ids_of = |ids: &mut Vec<u32>| {
            self.ids_into(py, text, ids)?;
            crate::id_list(py, self.ints(py), ids)
        };
        if text.len() < HOLD_GIL_BELOW {
            crate::encoder::with_ids_buffer(ids_of)
        } else {
            ids_of(&mut Vec::new())
        }
    }

    /// [`SpModel::pieces_of`] of a text read.
    fn pieces_list<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let mut ids = Vec::new();
        self.ids_into(py, text, &mut ids)?;
        if ids.contains(&self.inner.unk) {
            return self.pieces_with_unknowns(py, text);
        }
        crate::id_list(py, self.strs(py), &ids)
    }

    /// The ids (or, `pieces`, the pieces) of `text` when it is exactly a `str` that UTF-8 can
    /// hold, else None for the caller's general path: the face's native `Encode`
    /// (`face::FaceCall`).
    pub(crate) fn plain<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        pieces: bool,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(s) = crate::raw::exact_str(py, text) else { return Ok(None) };
        if pieces {
            self.pieces_list(py, &s).map(Some)
        } else {
            self.ids_list(py, &s).map(Some)
        }
    }

    /// The pieces of a text whose ids hold `<unk>`: an unknown run's piece is its own text.
    fn pieces_with_unknowns<'py>(
        &self,
        py: Python<'py>,
        text: &str,
    ) -> PyResult<Bound<'py, PyList>> {
        let (_, pieces) = py.detach(|| self.inner.encode_pieces(text)).map_err(|e| to_py(py, e))?;
        PyList::new(py, pieces)
    }
}

#[pymethods]
impl SpModel {
    #[new]
    fn new(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        let inner = py.detach(|| Core::from_bytes(data)).map_err(|e| to_py(py, e))?;
        Ok(SpModel { inner, strs: OnceLock::new() })
    }

    /// The encoder over this model (`subwords._core.Encoder`), with no template.
    fn encoder(slf: &Bound<'_, Self>) -> crate::encoder::PyEncoder {
        crate::encoder::PyEncoder::sp(slf.clone().unbind())
    }

    /// The ids of `text` as `sentencepiece`'s `encode(text)`: the encoder's `encode` with
    /// nothing allowed and no template, for the face's plainest call.
    fn ids<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        Self::with_text(py, text, |text| self.ids_list(py, text))
    }

    /// The pieces of `text` as `sentencepiece`'s `encode(text, out_type=str)` (an unknown run's
    /// piece is its own normalized text), each known piece a shared str.
    fn pieces_of<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        Self::with_text(py, text, |text| self.pieces_list(py, text))
    }

    /// [`SpModel::pieces_of`] of every text of a list, the ids found on `threads` threads (the
    /// encoder's batch); the texts whose ids hold `<unk>` are then encoded again for their
    /// pieces.
    fn pieces_of_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        use subwords_core::encoder::{encode_batch, Allowed, Call};
        let call = Call { allowed: &Allowed::none(), template: None };
        let strs = self.strs(py);
        let reader = crate::raw::TextReader::new(py, texts)?;
        let mut lists = crate::raw::IdLists::new(py, reader.len())?;
        let unk = self.inner.unk;
        let (mut at, mut unknown) = (0usize, Vec::new());
        crate::raw::fed_batch(
            py,
            reader,
            |texts, sink| encode_batch(&self.inner, texts, call, &[], threads, sink),
            |flat, _| {
                for ids in flat.iter() {
                    if ids.contains(&unk) {
                        unknown.push(at);
                    }
                    at += 1;
                }
                Python::attach(|py| lists.extend(py, flat, strs))
            },
        )?;
        let lists = lists.finish(py)?;
        for i in unknown {
            let text = texts.get_item(i)?;
            let pieces = self.pieces_with_unknowns(py, &text.extract::<PyBackedStr>()?)?;
            lists.set_item(i, pieces)?;
        }
        Ok(lists)
    }

    /// (ids, starts, ends), offsets in code points of `text`.
    fn encode_with_offsets(
        &self,
        py: Python<'_>,
        text: &str,
    ) -> PyResult<(Vec<u32>, Vec<u32>, Vec<u32>)> {
        py.detach(|| {
            let (ids, spans) = self.inner.encode_with_offsets(text)?;
            let map = char_offsets(text);
            Ok((
                ids,
                spans.iter().map(|s| map[s.0 as usize]).collect(),
                spans.iter().map(|s| map[s.1 as usize]).collect(),
            ))
        })
        .map_err(|e| to_py(py, e))
    }

    /// (ids, pieces) as `sentencepiece`'s `encode(text, out_type=str)`: an unknown run's piece is
    /// its own normalized text, not `<unk>`. The specials `allowed` names (ids) are cut out
    /// first by the encoder contract's rule, each its own piece.
    #[pyo3(signature = (text, allowed=Vec::new()))]
    fn encode_pieces(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Vec<u32>,
    ) -> PyResult<(Vec<u32>, Vec<String>)> {
        use subwords_core::encoder::Encoder;
        let allowed = self.inner.allowed(&allowed).map_err(|e| to_py(py, e))?;
        if allowed.is_empty() {
            return py.detach(|| self.inner.encode_pieces(text)).map_err(|e| to_py(py, e));
        }
        py.detach(|| {
            let (mut ids, mut pieces) = (Vec::new(), Vec::new());
            let mut err = None;
            subwords_core::counting::split_at(text, allowed.surfaces(), |part, hit| {
                if err.is_some() {
                    return;
                }
                if !part.is_empty() {
                    match self.inner.encode_pieces(part) {
                        Ok((i, p)) => {
                            ids.extend(i);
                            pieces.extend(p);
                        }
                        Err(e) => err = Some(e),
                    }
                }
                if let Some(j) = hit {
                    ids.push(allowed.ids()[j]);
                    pieces.push(allowed.surfaces()[j].clone());
                }
            });
            match err {
                Some(e) => Err(e),
                None => Ok((ids, pieces)),
            }
        })
        .map_err(|e| to_py(py, e))
    }

    /// Text of pieces as `sentencepiece`'s `decode_pieces`: a piece outside the vocabulary
    /// stands for itself.
    fn decode_pieces(&self, py: Python<'_>, pieces: Vec<PyBackedStr>) -> String {
        py.detach(|| {
            let refs: Vec<&str> = pieces.iter().map(|p| &**p).collect();
            self.inner.decode_pieces(&refs)
        })
    }

    fn normalize(&self, py: Python<'_>, text: &str) -> PyResult<String> {
        py.detach(|| self.inner.normalize(text, false).map(|(s, _)| s)).map_err(|e| to_py(py, e))
    }

    /// (normalized text, for each of its bytes and one past the end the byte offset in `text`
    /// it came from): the offsets `sentencepiece`'s `Normalize(with_offsets=True)` reports.
    fn normalize_with_offsets(&self, py: Python<'_>, text: &str) -> PyResult<(String, Vec<u32>)> {
        py.detach(|| self.inner.normalize(text, true)).map_err(|e| to_py(py, e))
    }

    /// The `k` best segmentations of the normalized text `normalized` (Unigram; empty for BPE):
    /// (cuts as (start, end, id) byte offsets of it, score), best first. `timeout_ms` > 0: past
    /// it the search narrows to one segmentation.
    fn nbest(
        &self,
        py: Python<'_>,
        normalized: &str,
        k: usize,
        timeout_ms: u64,
    ) -> Vec<Segmentation> {
        py.detach(|| {
            let deadline = (timeout_ms > 0)
                .then(|| std::time::Instant::now() + std::time::Duration::from_millis(timeout_ms));
            self.inner.nbest_cuts(normalized.as_bytes(), k, deadline)
        })
    }

    fn decode(&self, py: Python<'_>, ids: Vec<u32>) -> PyResult<String> {
        py.detach(|| self.inner.decode(&ids)).map_err(|e| to_py(py, e))
    }

    fn piece_to_id(&self, piece: &str) -> Option<u32> {
        self.inner.piece_to_id(piece)
    }

    /// The piece of `id` (the caller checks the range).
    fn piece(&self, id: usize) -> PyResult<&str> {
        self.inner.pieces.get(id).map(|p| p.as_str()).ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!("id {id} is out of range"))
        })
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.pieces.len()
    }

    /// (piece, id) of every CONTROL piece (`<s>`, `</s>`, ...).
    fn controls(&self) -> Vec<(String, u32)> {
        let control = subwords_compat::sentencepiece::proto::CONTROL;
        self.inner
            .types
            .iter()
            .enumerate()
            .filter(|(_, &t)| t == control)
            .map(|(i, _)| (self.inner.pieces[i].clone(), i as u32))
            .collect()
    }

    #[getter]
    fn pieces(&self) -> Vec<String> {
        self.inner.pieces.clone()
    }

    #[getter]
    fn scores(&self) -> Vec<f32> {
        self.inner.scores.clone()
    }

    #[getter]
    fn types(&self) -> Vec<i32> {
        self.inner.types.clone()
    }

    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner.kind {
            Kind::Unigram => "unigram",
            Kind::Bpe => "bpe",
        }
    }

    #[getter]
    fn byte_fallback(&self) -> bool {
        self.inner.byte_fallback()
    }

    #[getter]
    fn unk_id(&self) -> u32 {
        self.inner.unk
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.to_bytes())
    }
}

/// Serializes a SentencePiece model: `pieces` are (piece, score, type) in id order, `rules` the
/// character-map rules (from, to). Refuses (ModelFileError) what would not read back.
#[pyfunction]
#[pyo3(signature = (kind, pieces, byte_fallback, unk_surface, rules, add_dummy_prefix, remove_extra_whitespaces, split_by_whitespace, roles=None))]
#[allow(clippy::too_many_arguments)]
pub fn sp_model_bytes<'py>(
    py: Python<'py>,
    kind: &str,
    pieces: Vec<(String, f32, i32)>,
    byte_fallback: bool,
    unk_surface: &str,
    rules: Vec<(String, String)>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    split_by_whitespace: bool,
    roles: Option<Vec<(String, i32)>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let kind = match kind {
        "unigram" => Kind::Unigram,
        "bpe" => Kind::Bpe,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "kind {other:?}: unigram or bpe"
            )))
        }
    };
    let build = subwords_compat::sentencepiece::Build {
        kind,
        pieces: pieces.iter().map(|(p, s, t)| (p.as_str(), *s, *t)).collect(),
        byte_fallback,
        unk_surface,
        rules: rules.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect(),
        add_dummy_prefix,
        remove_extra_whitespaces,
        split_by_whitespace,
    };
    let roles = roles.unwrap_or_default();
    let roles: Vec<(&str, i32)> = roles.iter().map(|(r, i)| (r.as_str(), *i)).collect();
    let bytes = build.to_bytes_with_roles(&roles).map_err(|e| to_py(py, e))?;
    Ok(PyBytes::new(py, &bytes))
}
