//! `subwords._core.Encoder`: the one binding of the core's encoder contract
//! (`subwords_core::encoder`). Every format class (our `Tokenizer`, `SpModel`, `HfPipeline`,
//! `RankBpe`) hands out an `Encoder` over itself; single calls, batches into lists, batches
//! into id arrays, the specials a call allows and the template are all here, once, for the four
//! engines. The Python families call nothing else to encode. Our own model's encoder cuts its
//! text with the rank engine when that gives the model's ids ([`Ranked`],
//! `subwords_compat::own_rank`).

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyList};

use std::borrow::Cow;

use subwords_core::encoder::{self, Allowed, Call, Encoder, Slot, Template};

use crate::to_py;

/// A format class that holds an engine: the engine, and the shared int objects its result lists
/// are made of.
pub(crate) trait Holds: Sync + Send {
    type Engine: Encoder;
    fn engine(&self) -> &Self::Engine;
    fn ints(&self, py: Python<'_>) -> &[Py<PyAny>];
}

/// `holds!(Class => Engine)`: [`Holds`] for a format class whose engine is its `inner` field and
/// whose int objects come from its own `ints` method, as every format class keeps them.
macro_rules! holds {
    ($class:ty => $engine:ty) => {
        impl $crate::encoder::Holds for $class {
            type Engine = $engine;
            fn engine(&self) -> &$engine {
                &self.inner
            }
            fn ints(&self, py: pyo3::Python<'_>) -> &[pyo3::Py<pyo3::PyAny>] {
                <$class>::ints(self, py)
            }
        }
    };
}
pub(crate) use holds;

/// Our model with the rank engine cutting its text (`subwords_compat::own_rank`): its engine
/// is the rank engine's, its int objects the model's.
pub(crate) struct Ranked<'a>(
    pub(crate) &'a crate::PyTokenizer,
    pub(crate) &'a subwords_compat::own_rank::OwnRank,
);

impl Holds for Ranked<'_> {
    type Engine = subwords_compat::own_rank::OwnRank;
    fn engine(&self) -> &Self::Engine {
        self.1
    }
    fn ints(&self, py: Python<'_>) -> &[Py<PyAny>] {
        self.0.ints(py)
    }
}

/// The format object an `Encoder` encodes with.
enum Held {
    Own(Py<crate::PyTokenizer>),
    Sp(Py<crate::sentencepiece::SpModel>),
    Hf(Py<crate::hf::PyHfPipeline>),
    Rank(Py<crate::tiktoken::PyRankBpe>),
}

/// Runs `$body` with `$h` bound to the held format object (`&impl Holds`).
macro_rules! with_held {
    ($held:expr, $h:ident => $body:expr) => {
        match $held {
            Held::Own(p) => {
                let model = p.get();
                match model.ranked() {
                    Some(rank) => {
                        let $h = &$crate::encoder::Ranked(model, rank);
                        $body
                    }
                    None => {
                        let $h = model;
                        $body
                    }
                }
            }
            Held::Sp(p) => {
                let $h = p.get();
                $body
            }
            Held::Hf(p) => {
                let $h = p.get();
                $body
            }
            Held::Rank(p) => {
                let $h = p.get();
                $body
            }
        }
    };
}

#[pyclass(module = "subwords._core", name = "Encoder", frozen)]
pub struct PyEncoder {
    held: Held,
    template: Option<Template>,
    /// What a call that names no special allows: our models' user-defined symbols, which match
    /// whatever a call allows; nothing for the other engines. Made once, with the encoder: asked
    /// of the engine at every call, it was ~80 of the ~27,500 instructions of a ~100-token
    /// prompt's plain call (our 32,000-row byte-level model, callgrind).
    always: Allowed,
    /// Strings whose presence in a text sends [`PyEncoder::encode_plain`] back to the caller's
    /// general path (tiktoken's face: the special tokens' common prefix).
    guard: Vec<String>,
}

/// Texts up to this many bytes are encoded by one call without releasing the GIL: releasing and
/// taking it back was ~400 of the ~2,000 instructions of the binding's part of a call on an
/// empty string (callgrind), more than a short line's encoding costs, and on a busy machine a
/// wait for the GIL besides. At 256 bytes, a ~100-token prompt (458 bytes on average) released
/// it: held, such a call ran 664 fewer instructions of 25,774 (2.6%: the release and the take,
/// and a fresh list of ids where the thread's buffer serves; o200k rank file, callgrind).
const HOLD_GIL_BYTES: usize = 1024;

thread_local! {
    /// [`with_ids_buffer`]'s buffer.
    static IDS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `f` with an empty buffer for a short text's ids, kept by the thread between calls (a call on
/// one line allocated and freed one); a fresh one when the thread's is in use. For texts of at
/// most a few kilobytes, so that what the buffer keeps stays small.
pub(crate) fn with_ids_buffer<R>(f: impl FnOnce(&mut Vec<u32>) -> R) -> R {
    IDS.with(|buf| match buf.try_borrow_mut() {
        Ok(mut ids) => {
            ids.clear();
            f(&mut ids)
        }
        Err(_) => f(&mut Vec::new()),
    })
}

/// Whether `text` holds `needle`: its first byte looked for eight bytes at a time, the rest
/// compared where it is. Most lines hold no `<` (the specials' common first byte), and then this
/// is a few instructions a word where `str::contains` set up a two-way search at each call
/// (~130 instructions on a 47-byte line, callgrind).
fn has_needle(text: &str, needle: &str) -> bool {
    let (t, n) = (text.as_bytes(), needle.as_bytes());
    let Some(&first) = n.first() else { return true };
    if t.len() < n.len() {
        return false;
    }
    let last = t.len() - n.len();
    let hit = |at: usize| t[at..].starts_with(n);
    let ones = u64::from_ne_bytes([1; 8]);
    let spread = ones * u64::from(first);
    let mut at = 0;
    while at + 8 <= t.len() {
        let word = u64::from_ne_bytes(t[at..at + 8].try_into().expect("eight bytes"));
        let x = word ^ spread;
        // a zero byte of `x` (a byte equal to `first`) sets its high bit here (the classic
        // test; a false alarm only ever follows a true one within the word)
        if x.wrapping_sub(ones) & !x & (ones << 7) != 0 {
            for k in at..at + 8 {
                if k <= last && t[k] == first && hit(k) {
                    return true;
                }
            }
        }
        at += 8;
    }
    (at..=last).any(|k| t[k] == first && hit(k))
}

impl PyEncoder {
    /// This encoder again, sharing the engine.
    fn share(&self, py: Python<'_>) -> Self {
        PyEncoder {
            held: self.held(py),
            template: self.template.clone(),
            always: self.always.clone(),
            guard: self.guard.clone(),
        }
    }

    fn held(&self, py: Python<'_>) -> Held {
        match &self.held {
            Held::Own(p) => Held::Own(p.clone_ref(py)),
            Held::Sp(p) => Held::Sp(p.clone_ref(py)),
            Held::Hf(p) => Held::Hf(p.clone_ref(py)),
            Held::Rank(p) => Held::Rank(p.clone_ref(py)),
        }
    }

    /// [`PyEncoder::encode_plain`], for the native calls (`face::FaceCall`) too: the ids of
    /// `text` with no special token but those the engine always matches (our models'
    /// user-defined symbols), inside this encoder's template when `template`; None for the
    /// caller's general path when `text` is not exactly a `str` that UTF-8 can hold, or
    /// (`guarded`) holds one of the guard's strings.
    pub(crate) fn plain<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        guarded: bool,
        template: bool,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(s) = crate::raw::exact_str(py, text) else { return Ok(None) };
        let s: &str = &s;
        if guarded && self.guard.iter().any(|g| has_needle(s, g)) {
            return Ok(None);
        }
        let template = if template { self.template.as_ref() } else { None };
        let call = Call { allowed: &self.always, template };
        with_held!(&self.held, h => {
            let e = h.engine();
            if s.len() <= HOLD_GIL_BYTES {
                return with_ids_buffer(|ids| {
                    encoder::encode_to(e, s, None, call, ids).map_err(|err| to_py(py, err))?;
                    Ok(Some(crate::id_list(py, h.ints(py), ids)?))
                });
            }
            let ids = py.detach(|| encoder::encode(e, s, None, call)).map_err(|err| to_py(py, err))?;
            Ok(Some(crate::id_list(py, h.ints(py), &ids)?))
        })
    }

    /// What a call naming the special ids `ids` allows: [`PyEncoder::always`] when it names
    /// none, the common call.
    fn allowed<H: Holds>(&self, py: Python<'_>, h: &H, ids: &[u32]) -> PyResult<Cow<'_, Allowed>> {
        if ids.is_empty() {
            return Ok(Cow::Borrowed(&self.always));
        }
        h.engine().allowed(ids).map(Cow::Owned).map_err(|e| to_py(py, e))
    }

    /// An encoder over `held` with no guard; `always`: what a call naming no special allows.
    fn new(held: Held, template: Option<Template>, always: Allowed) -> Self {
        PyEncoder { held, template, always, guard: Vec::new() }
    }

    pub(crate) fn own(
        py: Python<'_>,
        model: Py<crate::PyTokenizer>,
        template: Option<Template>,
    ) -> PyResult<Self> {
        // the model's user-defined symbols; the rank engine standing in for the model has the
        // model's specials, so this serves both
        let always = Holds::engine(model.get()).allowed(&[]).map_err(|e| to_py(py, e))?;
        Ok(PyEncoder::new(Held::Own(model), template, always))
    }

    pub(crate) fn sp(model: Py<crate::sentencepiece::SpModel>) -> Self {
        PyEncoder::new(Held::Sp(model), None, Allowed::none())
    }

    pub(crate) fn hf(model: Py<crate::hf::PyHfPipeline>) -> Self {
        PyEncoder::new(Held::Hf(model), None, Allowed::none())
    }

    pub(crate) fn rank(model: Py<crate::tiktoken::PyRankBpe>) -> Self {
        PyEncoder::new(Held::Rank(model), None, Allowed::none())
    }
}

/// A template from the Python side's form: ids, with -1 where the text goes and -2 where the
/// second text of a pair goes.
fn slots(py: Python<'_>, items: &[i64]) -> PyResult<Vec<Slot>> {
    items
        .iter()
        .map(|&i| match i {
            -1 => Ok(Slot::First),
            -2 => Ok(Slot::Second),
            0..=0xFFFF_FFFF => Ok(Slot::Id(i as u32)),
            _ => Err(to_py(
                py,
                subwords_core::Error::Input(format!(
                    "template item {i}: an id, or -1/-2 for the texts"
                )),
            )),
        })
        .collect()
}

#[pymethods]
impl PyEncoder {
    /// This encoder with a template (`single`, `pair`: ids, -1 for the text, -2 for the pair's
    /// second text), sharing the engine.
    fn with_template(&self, py: Python<'_>, single: Vec<i64>, pair: Vec<i64>) -> PyResult<Self> {
        let template =
            Template::new(slots(py, &single)?, slots(py, &pair)?).map_err(|e| to_py(py, e))?;
        Ok(PyEncoder { template: Some(template), ..self.share(py) })
    }

    /// This encoder with `guard` (see [`PyEncoder::encode_plain`]), sharing the engine.
    fn with_guard(&self, py: Python<'_>, guard: Vec<String>) -> Self {
        PyEncoder { guard, ..self.share(py) }
    }

    /// The ids of `text` alone (no specials, no template), for the faces' calls on one text
    /// (tiktoken's `encode` and `encode_ordinary`); None, for the caller's general path, when
    /// `text` is not exactly a `str`, holds a lone surrogate, or (`guarded`) holds one of the
    /// guard's strings. A short text is encoded without releasing the GIL.
    #[pyo3(signature = (text, guarded=true))]
    fn encode_plain<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        guarded: bool,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        self.plain(py, text, guarded, false)
    }

    /// Whether `template=True` puts anything around the ids.
    #[getter]
    fn has_template(&self) -> bool {
        self.template.is_some()
    }

    /// The specials a call may allow, as (surface, id).
    fn specials(&self) -> Vec<(String, u32)> {
        with_held!(&self.held, h => h.engine().specials().to_vec())
    }

    /// Ids of `text` (and of `pair` after it), the specials `allowed` (ids) matched, inside the
    /// template when `template`.
    #[pyo3(signature = (text, pair=None, allowed=Vec::new(), template=false))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        pair: Option<&str>,
        allowed: Vec<u32>,
        template: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let template = self.template.as_ref().filter(|_| template);
        with_held!(&self.held, h => {
            let allowed = self.allowed(py, h, &allowed)?;
            let ids = py
                .detach(|| encoder::encode(h.engine(), text, pair, Call { allowed: &allowed, template }))
                .map_err(|e| to_py(py, e))?;
            crate::id_list(py, h.ints(py), &ids)
        })
    }

    /// The ids of every text as a list of lists, on `threads` threads.
    #[pyo3(signature = (texts, threads, allowed=Vec::new(), template=false))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        threads: usize,
        allowed: Vec<u32>,
        template: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let template = self.template.as_ref().filter(|_| template);
        with_held!(&self.held, h => {
            let allowed = self.allowed(py, h, &allowed)?;
            let call = Call { allowed: &allowed, template };
            crate::list_batch(py, texts, h.ints(py), |texts, sink| {
                encoder::encode_batch(h.engine(), texts, call, &[], threads, sink)
            })
        })
    }

    /// The ids of every text as two bytearrays: the ids (little-endian, `width` bytes each)
    /// and each text's end (u64), `suffix` after every text.
    #[pyo3(signature = (texts, threads, width, allowed=Vec::new(), template=false, suffix=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        threads: usize,
        width: usize,
        allowed: Vec<u32>,
        template: bool,
        suffix: Vec<u32>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        let template = self.template.as_ref().filter(|_| template);
        with_held!(&self.held, h => {
            let allowed = self.allowed(py, h, &allowed)?;
            let call = Call { allowed: &allowed, template };
            crate::flat_batch(py, texts, width, |texts, sink| {
                encoder::encode_batch(h.engine(), texts, call, &suffix, threads, sink)
            })
        })
    }
}
