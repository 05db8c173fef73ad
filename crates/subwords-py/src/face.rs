//! `subwords._core.FaceCall`: a tokenizer's method on one text as one native call.
//!
//! The faces (`subwords.compat.sentencepiece`, `subwords.compat.tiktoken`) and the tokenizers
//! that encode through an `Encoder` (a `.tiktoken` rank file, a `tokenizer.json`, our own
//! models) put a `FaceCall` on each object, in place of the class's Python method, for the call
//! their users make most: `sp.Encode(text)`, `enc.encode(text)`, `tok.encode(text)`. That call
//! then runs no Python frame: with one `str` and no keyword it goes to the engine's plain path;
//! any other call (other arguments, a keyword, a text the plain path hands back) goes, with the
//! very same arguments, to the Python method it stands for (`general`), which has the whole
//! signature. It answers `__name__` and `__qualname__` as `general`, has a `__dict__` for the
//! method's `__doc__`, and a `__get__` (which returns it unchanged) so that `inspect` and `help`
//! take it for a routine and show the method's signature (through `__wrapped__`) and text.
//!
//! Performance notes (callgrind, warm word caches, 400 English lines / ~100-token prompts):
//! - The Python frame of a method of 13 parameters and its attribute look-ups were ~1,300 of the
//!   ~8,200 instructions of `sp.Encode(line)` on a multilingual line.
//! - `tok.encode(text)` on o200k's tokenizer.json: 15,205 → 12,346 instructions a line, 31,219 →
//!   28,856 a prompt; on our own 32k byte-level model 13,020 → 9,330 and 29,667 → 26,455.
//! - `general` is a method bound to the object that holds this call for the SentencePiece face,
//!   a reference cycle the collector breaks through `__traverse__` and `__clear__` (so a
//!   processor let go is freed by the collector, not at once); the tokenizers hold theirs
//!   through a weak reference (`subwords.formats._foreign.native_call`), with no cycle. Bound on
//!   each read instead, as a descriptor on the class, `sp.Encode(line)` took ~840 more
//!   instructions (the look-up of the object's state and a new call object each time).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use crate::encoder::PyEncoder;
use crate::sentencepiece::SpModel;

/// The engine's plain path a [`FaceCall`] takes.
enum Plain {
    /// `SpModel::plain`: the ids, or (`pieces`) the pieces, when no `out_type` is given; an
    /// `out_type` of `int` or `str`, the only keyword, picks the one or the other.
    Sp { model: Py<SpModel>, pieces: bool },
    /// `PyEncoder::plain`: the ids with no special token; `guarded` hands back a text that holds
    /// the encoder's guard (tiktoken's `encode`; not `encode_ordinary`); `template` puts the
    /// encoder's template around the ids (`tok.encode(text)`'s default).
    Enc { encoder: Py<PyEncoder>, guarded: bool, template: bool },
}

#[pyclass(module = "subwords._core", name = "FaceCall", dict)]
pub struct FaceCall {
    plain: Plain,
    general: Option<Py<PyAny>>,
}

#[pymethods]
impl FaceCall {
    /// `SentencePieceProcessor.Encode` on `model` (its ids, or with `pieces` its pieces, when
    /// no `out_type` is given), else `general`.
    #[staticmethod]
    fn sentencepiece(model: Py<SpModel>, pieces: bool, general: Py<PyAny>) -> Self {
        FaceCall { plain: Plain::Sp { model, pieces }, general: Some(general) }
    }

    /// tiktoken's `Encoding.encode` (`guarded`) or `encode_ordinary` on `encoder`, else
    /// `general`.
    #[staticmethod]
    fn tiktoken(encoder: Py<PyEncoder>, guarded: bool, general: Py<PyAny>) -> Self {
        FaceCall { plain: Plain::Enc { encoder, guarded, template: false }, general: Some(general) }
    }

    /// Our tokenizers' `encode(text)` on `encoder`: its ids of the text, inside its template if
    /// it has one; else `general`.
    #[staticmethod]
    fn encoder(encoder: Py<PyEncoder>, general: Py<PyAny>) -> Self {
        FaceCall {
            plain: Plain::Enc { encoder, guarded: false, template: true },
            general: Some(general),
        }
    }

    /// The call itself, wherever it is read from: it sits in an object's `__dict__` (where no
    /// descriptor is bound), and is a descriptor only so that `inspect.isroutine` holds.
    fn __get__(
        slf: Py<Self>,
        _obj: Option<&Bound<'_, PyAny>>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if args.len() == 1 {
            if let Some(list) = self.plain(py, &*args.get_borrowed_item(0)?, kwargs)? {
                return Ok(list.into_any());
            }
        }
        match &self.general {
            Some(general) => general.bind(py).call(args, kwargs),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err(
                "this method's object was collected; call the method of a live object",
            )),
        }
    }

    /// The Python method this call stands for (so that `inspect.signature` and `help` show its
    /// parameters).
    #[getter]
    fn __wrapped__(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.general.as_ref().map(|g| g.clone_ref(py))
    }

    /// The method's name (`help` reads it of a routine).
    #[getter]
    fn __name__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.general_attr(py, pyo3::intern!(py, "__name__"))
    }

    #[getter]
    fn __qualname__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.general_attr(py, pyo3::intern!(py, "__qualname__"))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(general) = &self.general {
            visit.call(general)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.general = None;
    }
}

impl FaceCall {
    /// `general`'s attribute `name`; "encode" for a name once `general` is collected.
    fn general_attr(
        &self,
        py: Python<'_>,
        name: &Bound<'_, pyo3::types::PyString>,
    ) -> PyResult<Py<PyAny>> {
        match &self.general {
            Some(general) => Ok(general.bind(py).getattr(name)?.unbind()),
            None => Ok(pyo3::types::PyString::new(py, "encode").into_any().unbind()),
        }
    }

    /// The plain path's list, or None for `general`.
    fn plain<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let no_keywords = kwargs.is_none_or(|k| k.is_empty());
        match &self.plain {
            Plain::Sp { model, pieces } => {
                let pieces = match kwargs {
                    _ if no_keywords => *pieces,
                    Some(k) => match out_type(py, k)? {
                        Some(p) => p,
                        None => return Ok(None),
                    },
                    None => return Ok(None),
                };
                model.get().plain(py, text, pieces)
            }
            Plain::Enc { encoder, guarded, template } if no_keywords => {
                encoder.get().plain(py, text, *guarded, *template)
            }
            Plain::Enc { .. } => Ok(None),
        }
    }
}

/// Whether keywords `k` are `out_type=str` (Some(true)) or `out_type=int` (Some(false)) and
/// nothing else; None for any other.
fn out_type(py: Python<'_>, k: &Bound<'_, PyDict>) -> PyResult<Option<bool>> {
    if k.len() != 1 {
        return Ok(None);
    }
    let Some(t) = k.get_item(pyo3::intern!(py, "out_type"))? else { return Ok(None) };
    Ok(if t.is(py.get_type::<pyo3::types::PyString>()) {
        Some(true)
    } else if t.is(py.get_type::<pyo3::types::PyInt>()) {
        Some(false)
    } else {
        None
    })
}
