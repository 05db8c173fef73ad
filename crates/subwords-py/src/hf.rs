//! `subwords._core.HfPipeline`: a Hugging Face `tokenizers` pipeline (see `subwords_compat::huggingface`).
//! The Python class `subwords.formats.huggingface.HuggingFace` carries the API; this layer only
//! builds the pipeline from its plan and encodes with the GIL released.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use subwords_compat::huggingface::rows::{
    self, Item, Padding, Run, Strategy, Templates, Truncation,
};
use subwords_compat::huggingface::tables::{merge_pair, split, vocab_merges, Tables};
use subwords_compat::huggingface::{HfPipeline, SpanState};
use subwords_core::encoder::{Call, Encoder};

/// (position in the ids, string) of each token whose string is not its id's entry.
type Notes = Vec<(usize, String)>;

fn bad(py: Python<'_>, m: String) -> PyErr {
    super::to_py(py, subwords_core::Error::ModelFile(m))
}

#[pyclass(module = "subwords._core", name = "HfPipeline", frozen)]
pub struct PyHfPipeline {
    inner: HfPipeline,
    /// The ids below this take the process's shared ints (`raw::shared_ints`); ids at or above
    /// it (a sparse file's) are made one by one.
    ints_len: u32,
    /// The words met by [`PyHfPipeline::encode_rows`]' offsets and the buffers, per worker, kept
    /// from call to call (the ids' caches are the pipeline's own): a batch of 256 English lines
    /// starting with an empty cache computed most of its words afresh.
    span_states: std::sync::Mutex<Vec<SpanState>>,
    /// The offsets' tuple `(start, start + len)` for `start < SPAN_STARTS`, `len < SPAN_LENS`
    /// at `start * SPAN_LENS + len`, made on first use and shared by every row that has it (a
    /// tuple of ints is immutable; the `(0, 0)` of special tokens is one of them): a new tuple
    /// per token, and its release later, were the most of a row's list of offsets.
    span_tuples: std::sync::Mutex<Vec<Option<Py<PyAny>>>>,
}

const SPAN_STARTS: u32 = 1024;
const SPAN_LENS: u32 = 32;

crate::encoder::holds!(PyHfPipeline => HfPipeline);

impl PyHfPipeline {
    fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        super::id_list(py, self.ints(py), ids)
    }

    fn ints(&self, py: Python<'_>) -> &[Py<PyAny>] {
        crate::raw::shared_ints(py, self.ints_len as usize)
    }
}

/// The tokens of texts in one buffer: text `k`'s ids are `ids[r.0..r.1]` and their
/// `(start, end)` `offs[r.0..r.1]`, `r = bounds[k]`.
struct Flat {
    ids: Vec<u32>,
    offs: Vec<(u32, u32)>,
    bounds: Vec<(usize, usize)>,
}

impl PyHfPipeline {
    /// Each text's ids and `(start, end)` per token (see [`HfPipeline::encode_offsets`]), the
    /// texts shared out over `threads` threads without the GIL, each with a word cache kept from
    /// call to call.
    fn spans_batch(
        &self,
        py: Python<'_>,
        texts: &[String],
        mask: &[bool],
        trim: Option<bool>,
        threads: usize,
    ) -> Spans {
        let n = threads.clamp(1, 64).min(texts.len().div_ceil(32).max(1));
        let mut states: Vec<SpanState> = {
            let mut pool = self.span_states.lock().unwrap_or_else(|p| p.into_inner());
            (0..n).map(|_| pool.pop().unwrap_or_default()).collect()
        };
        let inner = &self.inner;
        let part = |texts: &[String], state: &mut SpanState| {
            // about a token per 4 bytes of English
            let bytes: usize = texts.iter().map(|t| t.len()).sum();
            let mut f = Flat {
                ids: Vec::with_capacity(bytes / 4 + 16),
                offs: Vec::with_capacity(bytes / 4 + 16),
                bounds: Vec::with_capacity(texts.len()),
            };
            for t in texts {
                let a = f.ids.len();
                inner.encode_offsets_into(t, mask, trim, state, &mut f.ids, &mut f.offs);
                f.bounds.push((a, f.ids.len()));
            }
            f
        };
        let size = texts.len().div_ceil(n).max(1);
        let parts = py.detach(|| {
            if n == 1 {
                return vec![part(texts, &mut states[0])];
            }
            std::thread::scope(|s| {
                let parts: Vec<_> = texts
                    .chunks(size)
                    .zip(states.iter_mut())
                    .map(|(chunk, state)| s.spawn(move || part(chunk, state)))
                    .collect();
                parts.into_iter().map(|h| h.join().expect("an offsets worker panicked")).collect()
            })
        });
        let mut pool = self.span_states.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < 64 {
            pool.extend(states);
        }
        Spans { parts, size }
    }
}

/// The tokens of a batch's texts as its threads left them, each its own [`Flat`] (read where
/// they lie: the texts' `size`-long chunks in order, text `k` the `k % size`th of part
/// `k / size`).
struct Spans {
    parts: Vec<Flat>,
    size: usize,
}

impl Spans {
    fn of(&self, k: usize) -> (&Flat, std::ops::Range<usize>) {
        let f = &self.parts[k / self.size];
        let (a, b) = f.bounds[k % self.size];
        (f, a..b)
    }
}

/// The tokens of a batch's texts: ids alone, or with their `(start, end)` when the offsets are
/// wanted.
enum Tokens {
    Ids(Vec<Vec<u32>>),
    Spans(Spans),
}

impl Tokens {
    fn ids(&self, k: usize) -> &[u32] {
        match self {
            Tokens::Ids(v) => &v[k],
            Tokens::Spans(s) => {
                let (f, r) = s.of(k);
                &f.ids[r]
            }
        }
    }

    fn offs(&self, k: usize) -> &[(u32, u32)] {
        match self {
            Tokens::Ids(_) => &[],
            Tokens::Spans(s) => {
                let (f, r) = s.of(k);
                &f.offs[r]
            }
        }
    }
}

/// Characters of text a batch needs per thread [`PyHfPipeline::encode_rows`] encodes it on.
const CHARS_PER_THREAD: usize = 1 << 16;

/// One row of a batch: the place of its text in the flat texts, and of its pair's.
type Places = (usize, Option<usize>);

/// The texts of a transformers batch (a list or tuple, each item a `str` or a list or tuple of
/// two), flat, with each row's places; None when an item is neither or a text is not UTF-8 (a
/// lone surrogate): the caller then leaves the batch to `tokenizers`, which says what is wrong.
fn batch_texts(batch: &Bound<'_, PyAny>) -> Option<(Vec<String>, Vec<Places>)> {
    use pyo3::types::{PyString, PyTuple};
    let items: Vec<Bound<'_, PyAny>> = if let Ok(l) = batch.cast::<PyList>() {
        l.iter().collect()
    } else {
        batch.cast::<PyTuple>().ok()?.iter().collect()
    };
    let text = |x: &Bound<'_, PyAny>| -> Option<String> {
        if x.is_exact_instance_of::<PyString>() {
            x.extract().ok()
        } else {
            None
        }
    };
    let mut flat = Vec::with_capacity(items.len());
    let mut places = Vec::with_capacity(items.len());
    for x in items {
        if let Some(t) = text(&x) {
            places.push((flat.len(), None));
            flat.push(t);
            continue;
        }
        let two: Vec<Bound<'_, PyAny>> = if let Ok(l) = x.cast::<PyList>() {
            l.iter().collect()
        } else {
            x.cast::<PyTuple>().ok()?.iter().collect()
        };
        if two.len() != 2 {
            return None;
        }
        let (a, b) = (text(&two[0])?, text(&two[1])?);
        places.push((flat.len(), Some(flat.len() + 1)));
        flat.push(a);
        flat.push(b);
    }
    Some((flat, places))
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
        Ok(PyHfPipeline {
            inner,
            ints_len,
            span_states: Default::default(),
            span_tuples: Default::default(),
        })
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

    /// Whether the rank engine cuts the words (`HfPipeline::rank_fast`): the file's byte-level
    /// BPE encodes as a rank file does.
    #[getter]
    fn rank_fast(&self) -> bool {
        self.inner.rank_fast()
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

    /// A transformers batch laid out as `tokenizers` lays it out after its model, every list of
    /// every row made here in one pass: `batch` (each item a `str` or a pair of them) encoded on
    /// `threads` threads without the GIL, each row's sequences cut by `trunc` (`(max_length,
    /// stride, strategy, left)`), put in its template (`templates`: the single and pair items,
    /// each `(0 | 1, [], type_id)` for the first or second sequence, `(2, ids, type_id)` for
    /// special tokens; None for none) and padded by `pad` (`(length, multiple, left, pad_id,
    /// pad_type_id)`).
    ///
    /// `threads`: the most threads; one is started per 64k characters of text only (a
    /// thread started for each call and waited for at its end costs a time slice of a busy
    /// machine's scheduler).
    ///
    /// `want`: (type ids, attention mask, special-tokens mask, offsets). Gives `(ids, type_ids,
    /// attention_mask, special_tokens_mask, offsets, shapes)`, a list of one list per row each
    /// (None for one not wanted), the offsets `(start, end)` tuples in code points (`(0, 0)` for
    /// a special or pad token; `trim` as in [`Self::encode_offsets`]), and each row's shape
    /// `(a_start, a_stop, b_start, b_stop, pad, cut)`: the kept tokens of each sequence (None for
    /// a row without a pair), the pad tokens and whether truncation cut anything. Gives None
    /// when an item is not a text or a pair of texts, and a `str` (why) where `tokenizers`
    /// raises or panics instead (truncation it refuses): the caller then asks `tokenizers`.
    #[pyo3(signature = (batch, allowed, threads, want, trim=None, templates=None, trunc=None, pad=None))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn encode_rows<'py>(
        &self,
        py: Python<'py>,
        batch: &Bound<'py, PyAny>,
        allowed: Vec<u32>,
        threads: usize,
        want: (bool, bool, bool, bool),
        trim: Option<bool>,
        templates: Option<(Vec<(u8, Vec<u32>, u32)>, Vec<(u8, Vec<u32>, u32)>)>,
        trunc: Option<(usize, usize, String, bool)>,
        pad: Option<(Option<usize>, Option<usize>, bool, u32, u32)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some((flat, places)) = batch_texts(batch) else { return Ok(py.None().into_bound(py)) };
        // one thread more per 64k characters of text, at most `threads`
        let chars: usize = flat.iter().map(|t| t.chars().count()).sum();
        let threads = threads.min(1 + chars / CHARS_PER_THREAD).max(1);
        let trunc = match trunc {
            None => None,
            Some((max_length, stride, strategy, left)) => match Strategy::from_name(&strategy) {
                Some(strategy) => Some(Truncation { max_length, stride, strategy, left }),
                None => {
                    let why = format!("truncation strategy {strategy:?}");
                    return Ok(pyo3::types::PyString::new(py, &why).into_any());
                }
            },
        };
        let items = |v: Vec<(u8, Vec<u32>, u32)>| -> Vec<Item> {
            v.into_iter()
                .map(|(kind, ids, ty)| match kind {
                    0 => Item::Sequence(false, ty),
                    1 => Item::Sequence(true, ty),
                    _ => Item::Special(ids, ty),
                })
                .collect()
        };
        let templates = templates.map(|(a, b)| Templates { single: items(a), pair: items(b) });
        let pad = pad.map(|(length, multiple, left, id, type_id)| Padding {
            length,
            multiple,
            left,
            id,
            type_id,
        });
        let (want_types, want_attn, want_special, want_offsets) = want;
        let allowed = self.inner.allowed(&allowed).map_err(|e| super::to_py(py, e))?;
        // each text's ids, and its spans when the offsets are wanted
        let texts = if want_offsets {
            Tokens::Spans(self.spans_batch(py, &flat, allowed.mask(), trim, threads))
        } else {
            let call = Call::plain(&allowed);
            let inner = &self.inner;
            let ids = py
                .detach(|| subwords_core::encoder::encode_batch_vec(inner, &flat, call, threads))
                .map_err(|e| super::to_py(py, e))?;
            Tokens::Ids(ids)
        };
        drop(flat);
        // each row's shape, then its length and the length rows are padded to
        let mut shapes = Vec::with_capacity(places.len());
        for &(a, b) in &places {
            let nb = b.map(|k| texts.ids(k).len());
            let added = templates.as_ref().map_or(0, |t| t.added(b.is_some()));
            match rows::shape(texts.ids(a).len(), nb, added, trunc.as_ref()) {
                Ok(s) => shapes.push(s),
                Err(why) => return Ok(pyo3::types::PyString::new(py, why).into_any()),
            }
        }
        let template_of =
            |pair: bool| templates.as_ref().map(|t| if pair { &t.pair[..] } else { &t.single[..] });
        let mut runs = Vec::new();
        let lengths: Vec<usize> = shapes
            .iter()
            .zip(&places)
            .map(|(s, &(_, b))| {
                rows::runs(s, template_of(b.is_some()), 0, false, &mut runs);
                rows::run_len(&runs)
            })
            .collect();
        let target = pad.as_ref().map(|p| rows::padded_length(p, lengths.iter().copied()));
        let ints = self.ints(py);
        let n = places.len();
        let mut out_ids = Vec::with_capacity(n);
        let mut out_types = Vec::with_capacity(if want_types { n } else { 0 });
        let mut out_attn = Vec::with_capacity(if want_attn { n } else { 0 });
        let mut out_special = Vec::with_capacity(if want_special { n } else { 0 });
        let mut out_offs = Vec::with_capacity(if want_offsets { n } else { 0 });
        let mut out_shapes = Vec::with_capacity(n);
        // a row's values, position by position
        let (mut ids, mut types, mut attn, mut special, mut offs) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        // the offsets' shared tuples, unless another call holds them (a collection run by an
        // allocation below may end in a finalizer that encodes): then tuples of their own
        let mut shared = match self.span_tuples.try_lock() {
            Ok(t) => Some(t),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        if let Some(t) = shared.as_mut().filter(|t| t.is_empty()) {
            t.resize_with((SPAN_STARTS * SPAN_LENS) as usize, || None);
        }
        let mut tuple = |x: u32, y: u32| -> *mut pyo3::ffi::PyObject {
            let Some(table) =
                shared.as_mut().filter(|_| x < SPAN_STARTS && y >= x && y - x < SPAN_LENS)
            else {
                return crate::raw::span_tuple(ints, x, y);
            };
            let slot = &mut table[(x * SPAN_LENS + (y - x)) as usize];
            if slot.is_none() {
                match crate::raw::span_tuple_owned(py, ints, x, y) {
                    Ok(t) => *slot = Some(t.unbind()),
                    Err(e) => {
                        e.restore(py);
                        return std::ptr::null_mut();
                    }
                }
            }
            slot.as_ref().map_or(std::ptr::null_mut(), |t| t.clone_ref(py).into_ptr())
        };
        for ((shape, &(a, b)), &len) in shapes.iter().zip(&places).zip(&lengths) {
            let padn = target.map_or(0, |t| t.saturating_sub(len));
            let pad_left = pad.as_ref().is_some_and(|p| p.left);
            rows::runs(shape, template_of(b.is_some()), padn, pad_left, &mut runs);
            ids.clear();
            types.clear();
            attn.clear();
            special.clear();
            offs.clear();
            for r in &runs {
                match *r {
                    Run::Sequence(second, x, y, ty) => {
                        let k = if second { b.unwrap_or(a) } else { a };
                        ids.extend_from_slice(&texts.ids(k)[x..y]);
                        if want_offsets {
                            offs.extend_from_slice(&texts.offs(k)[x..y]);
                        }
                        types.extend(std::iter::repeat_n(ty, y - x));
                        attn.extend(std::iter::repeat_n(1, y - x));
                        special.extend(std::iter::repeat_n(0, y - x));
                    }
                    Run::Special(s, ty) => {
                        ids.extend_from_slice(s);
                        types.extend(std::iter::repeat_n(ty, s.len()));
                        attn.extend(std::iter::repeat_n(1, s.len()));
                        special.extend(std::iter::repeat_n(1, s.len()));
                        offs.extend(std::iter::repeat_n((0, 0), s.len()));
                    }
                    Run::Pad(k) => {
                        let p = pad.as_ref().expect("pad runs only with padding");
                        ids.extend(std::iter::repeat_n(p.id, k));
                        types.extend(std::iter::repeat_n(p.type_id, k));
                        attn.extend(std::iter::repeat_n(0, k));
                        special.extend(std::iter::repeat_n(1, k));
                        offs.extend(std::iter::repeat_n((0, 0), k));
                    }
                }
            }
            let m = ids.len();
            out_ids.push(crate::raw::new_list(py, m, |j| crate::raw::int_ref(ints, ids[j]))?);
            if want_types {
                out_types
                    .push(crate::raw::new_list(py, m, |j| crate::raw::int_ref(ints, types[j]))?);
            }
            if want_attn {
                out_attn.push(crate::raw::new_list(py, m, |j| crate::raw::int_ref(ints, attn[j]))?);
            }
            if want_special {
                out_special
                    .push(crate::raw::new_list(py, m, |j| crate::raw::int_ref(ints, special[j]))?);
            }
            if want_offsets {
                out_offs.push(crate::raw::new_list(py, m, |j| tuple(offs[j].0, offs[j].1))?);
            }
            let (a0, a1) = shape.a;
            let (b0, b1) = shape.b.unzip();
            out_shapes.push((a0, a1, b0, b1, padn, shape.cut).into_pyobject(py)?);
        }
        let list = |v: Vec<Bound<'py, PyList>>, on: bool| -> PyResult<Bound<'py, PyAny>> {
            if !on {
                return Ok(py.None().into_bound(py));
            }
            Ok(PyList::new(py, v)?.into_any())
        };
        let out = (
            list(out_ids, true)?,
            list(out_types, want_types)?,
            list(out_attn, want_attn)?,
            list(out_special, want_special)?,
            list(out_offs, want_offsets)?,
            PyList::new(py, out_shapes)?,
        );
        Ok(out.into_pyobject(py)?.into_any())
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
