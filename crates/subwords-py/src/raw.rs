//! The binding's raw CPython access, and every `unsafe` site of the binding, each with its
//! `SAFETY:` comment: id buffers written without the GIL ([`Grown`]), lists of ids built in
//! place ([`IdLists`]), and a batch's texts borrowed as UTF-8 while other threads encode
//! ([`TextReader`]). The rest of the binding is safe code over these.
//!
//! Tried and lost for lists of ids (o200k, English 16 KB chunks, one pass 14.7-15.7 ms with the
//! shared ints): a new int per id 20.2-21.1 ms; new ints past id 16,384 and shared ones below
//! 15.7-16.4 ms (two runs each, a loaded machine).

use super::*;

/// A `bytearray` written through its buffer without the GIL and grown, with it, a doubling at a
/// time ([`IdArrays`]). Its Python length is the room made; `len` is what is written.
pub(crate) struct Grown {
    array: Py<PyByteArray>,
    at: *mut u8,
    room: usize,
    len: usize,
    failed: Option<PyErr>,
}

// SAFETY: the bytearray is made by the call that fills it and reaches Python code only when
// `finish` returns it; until then only the thread that holds the `Grown` reads or writes it, and
// it is grown and freed with the GIL
unsafe impl Send for Grown {}

impl Grown {
    pub(crate) fn new(py: Python<'_>) -> Self {
        let array = PyByteArray::new(py, &[]).unbind();
        Grown { array, at: std::ptr::null_mut(), room: 0, len: 0, failed: None }
    }

    /// Room for `more` bytes past the written ones; false (and nothing more is written) once
    /// the bytearray could not grow.
    pub(crate) fn reserve(&mut self, more: usize) -> bool {
        if self.failed.is_some() {
            return false;
        }
        let need = self.len + more;
        if need <= self.room {
            return true;
        }
        let room = need.max(2 * self.room).max(1 << 16);
        Python::attach(|py| {
            let array = self.array.bind(py);
            match array.resize(room) {
                Ok(()) => {
                    self.at = array.data();
                    self.room = room;
                }
                Err(e) => self.failed = Some(e),
            }
        });
        self.failed.is_none()
    }

    /// The next `n` bytes, reserved before.
    pub(crate) fn room(&mut self, n: usize) -> &mut [u8] {
        assert!(self.len + n <= self.room, "reserved before writing");
        // SAFETY: `at` is the bytearray's buffer of `room` bytes (set at its last resize), which
        // only this `Grown` touches until `finish`
        let out = unsafe { std::slice::from_raw_parts_mut(self.at.add(self.len), n) };
        self.len += n;
        out
    }

    pub(crate) fn finish(self, py: Python<'_>) -> PyResult<Bound<'_, PyByteArray>> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let array = self.array.into_bound(py);
        array.resize(self.len)?;
        Ok(array)
    }
}

/// How many ids [`shared_ints`] holds an int for: the largest vocabularies in use (o200k,
/// 256k-row models) fit; an id past it gets an int of its own in each list.
const SHARED_INTS: usize = 1 << 18;

/// The process's table of shared ints: `len` of them made (ids `0..len`), in a buffer of
/// [`SHARED_INTS`] that never moves, grown under the GIL and never shrunk.
struct IntTable {
    at: *mut Py<PyAny>,
    len: std::sync::atomic::AtomicUsize,
    grow: std::sync::Mutex<()>,
}

// SAFETY: the first `len` items are written once, before `len` is raised past them (Release,
// read with Acquire), and never changed or freed; the rest are written only by the thread that
// holds `grow` (and the GIL)
unsafe impl Sync for IntTable {}
// SAFETY: as above; the buffer belongs to the process, not to a thread
unsafe impl Send for IntTable {}

/// One Python int per id below `n` (at most [`SHARED_INTS`]), shared by every encoder of the
/// process: a list of ids then costs a reference count per id instead of an allocation per id
/// (most ids are above CPython's small-int cache). Made on first need, in id order (OpenAI's
/// and BPE's ranks put frequent ids first, so their ints share cache lines). Shared rather than
/// made per encoder: a fresh o200k encoder made its 200k ints in ~19M instructions (callgrind)
/// and 6.4 MB, and the lists of an earlier encoder, freed while a new one encodes, touched a
/// second set of ints (the benchmark's fresh encoder per pass).
pub(crate) fn shared_ints(py: Python<'_>, n: usize) -> &'static [Py<PyAny>] {
    use std::sync::atomic::Ordering;
    static TABLE: std::sync::OnceLock<IntTable> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut buf: Vec<Py<PyAny>> = Vec::with_capacity(SHARED_INTS);
        let at = buf.as_mut_ptr();
        std::mem::forget(buf);
        IntTable { at, len: 0.into(), grow: std::sync::Mutex::new(()) }
    });
    let n = n.min(SHARED_INTS);
    if table.len.load(Ordering::Acquire) < n {
        let _grow = table.grow.lock().unwrap_or_else(|p| p.into_inner());
        let len = table.len.load(Ordering::Acquire);
        for i in len..n {
            let int = (i as u32).into_pyobject(py).unwrap().into_any().unbind();
            // SAFETY: `i` < SHARED_INTS, the buffer's capacity; item `i` is past `len`, so no
            // reader sees it until `len` is raised below, and only this thread (holding `grow`)
            // writes it
            unsafe { table.at.add(i).write(int) };
        }
        if n > len {
            table.len.store(n, Ordering::Release);
        }
    }
    // SAFETY: the first `len` (>= n) items are initialized and never change or move
    unsafe { std::slice::from_raw_parts(table.at, n) }
}

/// One text's ids as a list of the shared `ints` ([`shared_ints`]); an id past them (a sparse
/// rank file's) gets an int of its own. Filled by direct stores ([`new_id_list`]): through
/// `PyList::new` building the lists took 14.2 instructions per byte of English lines, filled
/// directly 8.1 (cl100k, one call per line, callgrind).
pub(crate) fn id_list<'py>(
    py: Python<'py>,
    ints: &[Py<PyAny>],
    ids: &[u32],
) -> PyResult<Bound<'py, PyList>> {
    let list = new_id_list(py, ids, ints)?;
    // SAFETY: `new_id_list` returns a new reference (not NULL)
    Ok(unsafe { Bound::from_owned_ptr(py, list) }.cast_into::<PyList>()?)
}

/// A new reference to a new list of `ids`, each as `ints[id]` (or a new int past its end).
fn new_id_list(
    py: Python<'_>,
    ids: &[u32],
    ints: &[Py<PyAny>],
) -> PyResult<*mut pyo3::ffi::PyObject> {
    use pyo3::ffi;
    let direct = list_layout_known(py);
    // SAFETY: `inner` is a new list of `ids.len()` NULL items; each is set once, to a new
    // reference (PyList_SetItem steals it; a direct store hands it over the same way), before
    // it is returned; the indices are in range. Direct stores only where `list_layout_known`
    // saw `ob_item` where CPython puts it.
    unsafe {
        let inner = ffi::PyList_New(ids.len() as ffi::Py_ssize_t);
        if inner.is_null() {
            return Err(PyErr::fetch(py));
        }
        let slots = if direct && !ids.is_empty() {
            (*inner.cast::<ListHead>()).ob_item
        } else {
            std::ptr::null_mut()
        };
        let far = ids.len() >= PREFETCH_FROM;
        for (j, &id) in ids.iter().enumerate() {
            if far {
                prefetch_ahead(ids, j, ints);
            }
            let item = match ints.get(id as usize) {
                Some(o) => {
                    ffi::Py_IncRef(o.as_ptr());
                    o.as_ptr()
                }
                None => ffi::PyLong_FromUnsignedLong(id as std::os::raw::c_ulong),
            };
            if item.is_null() {
                ffi::Py_DecRef(inner);
                return Err(PyErr::fetch(py));
            }
            if slots.is_null() {
                ffi::PyList_SetItem(inner, j as ffi::Py_ssize_t, item);
            } else {
                *slots.add(j) = item;
            }
        }
        Ok(inner)
    }
}

const PREFETCH_FROM: usize = 512;

/// Asks the cache for the int of the id 8 places ahead and for the table slot of the one 16
/// ahead. Each id of a long text's list touches its shared int's line and its slot's, out of
/// 8 MB: on English 16 KB chunks (o200k) the lists took ~4.8 ms of a 15.5 ms pass, with every
/// id the same int ~1.2 ms (the rest, cache misses); these prefetches took ~1.2-2.5 ms off the
/// pass (two runs, a loaded machine). Only for lists of [`PREFETCH_FROM`] ids or more: on
/// 100-token prompts, whose ints stay in the cache, they were ~10 instructions an id for nothing
/// (callgrind).
#[inline(always)]
fn prefetch_ahead(ids: &[u32], j: usize, ints: &[Py<PyAny>]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        if let Some(slot) = ids.get(j + 16).and_then(|&a| ints.get(a as usize)) {
            // SAFETY: a prefetch reads nothing a program can see; the address is a live slot
            unsafe { _mm_prefetch::<_MM_HINT_T0>((slot as *const Py<PyAny>).cast()) };
        }
        if let Some(int) = ids.get(j + 8).and_then(|&a| ints.get(a as usize)) {
            // SAFETY: as above; the address is a live int object
            unsafe { _mm_prefetch::<_MM_HINT_T0>(int.as_ptr() as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ids, j, ints);
}

/// The head of CPython's list object (`PyListObject`: the variable-size object header, then the
/// item array), which the 3.9 stable ABI this module is built for does not declare. Stores
/// through `ob_item` are what `PyList_SET_ITEM` does in CPython's own code; `PyList_SetItem`
/// checks the type, the index and the old item at each call, a call per id that was a tenth of
/// the calling thread's work on a batch of lines.
#[repr(C)]
struct ListHead {
    head: pyo3::ffi::PyVarObject,
    ob_item: *mut *mut pyo3::ffi::PyObject,
}

/// Whether this interpreter's lists have [`ListHead`]'s layout, tried once on a list of two items
/// set through the API: every GIL build of CPython 3 so far; where not, `IdLists` keeps to
/// `PyList_SetItem`.
fn list_layout_known(py: Python<'_>) -> bool {
    static KNOWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KNOWN.get_or_init(|| {
        use pyo3::ffi;
        let (a, b) = (py.None(), pyo3::types::PyBool::new(py, true).to_owned().into_any().unbind());
        // SAFETY: a new list of two NULL items, each set once to a new reference, read back
        // through the assumed layout (the list's object is at least a `ListHead` long on every
        // CPython 3: the header, then the item pointer), then released
        unsafe {
            let list = ffi::PyList_New(2);
            if list.is_null() {
                ffi::PyErr_Clear();
                return false;
            }
            ffi::PyList_SetItem(list, 0, a.clone_ref(py).into_ptr());
            ffi::PyList_SetItem(list, 1, b.clone_ref(py).into_ptr());
            let head = &*list.cast::<ListHead>();
            let known = head.head.ob_size == 2
                && !head.ob_item.is_null()
                && *head.ob_item == a.as_ptr()
                && *head.ob_item.add(1) == b.as_ptr()
                && ffi::PyList_GetItem(list, 1) == b.as_ptr();
            ffi::Py_DecRef(list);
            known
        }
    })
}

/// A batch's result, a list of `n` lists of ints, filled text by text as parts of the batch are
/// encoded (see `batch::ids_streamed`). The raw C API is used here and in [`TextReader`] only: the
/// outer list is made at its final size and each inner list is put in its place, with no Vec of
/// lists in between. Until it is full its unfilled items are NULL, which the collector and `list_dealloc`
/// skip; it reaches Python code only through [`IdLists::finish`], once every item is set.
pub(crate) struct IdLists {
    list: Py<PyList>,
    filled: usize,
    len: usize,
    failed: Option<PyErr>,
}

impl IdLists {
    pub(crate) fn new(py: Python<'_>, len: usize) -> PyResult<Self> {
        let n = pyo3::ffi::Py_ssize_t::try_from(len)
            .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("batch too large"))?;
        // SAFETY: PyList_New returns a new reference or NULL with an exception set
        let list = unsafe { Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(n))? };
        Ok(IdLists { list: list.cast_into::<PyList>()?.unbind(), filled: 0, len, failed: None })
    }

    /// Appends every text of `flat`, each id as `ints[id]` (or a new int past its end). An error
    /// is kept for [`IdLists::finish`]; later calls then do nothing.
    pub(crate) fn extend(
        &mut self,
        py: Python<'_>,
        flat: &subwords_core::batch::FlatIds,
        ints: &[Py<PyAny>],
    ) {
        if self.failed.is_some() {
            return;
        }
        for ids in flat.iter() {
            if let Err(e) = self.push(py, ids, ints) {
                self.failed = Some(e);
                return;
            }
        }
    }

    fn push(&mut self, py: Python<'_>, ids: &[u32], ints: &[Py<PyAny>]) -> PyResult<()> {
        use pyo3::ffi;
        if self.filled >= self.len {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "more results than texts in the batch",
            ));
        }
        let direct = list_layout_known(py);
        let inner = new_id_list(py, ids, ints)?;
        // SAFETY: `inner` is a new reference to a full list, handed over to `self.list` (a
        // direct store does what PyList_SetItem does to a NULL item); the index is in range.
        // Direct stores only where `list_layout_known` saw `ob_item` where CPython puts it.
        unsafe {
            if direct {
                *(*self.list.as_ptr().cast::<ListHead>()).ob_item.add(self.filled) = inner;
            } else {
                ffi::PyList_SetItem(self.list.as_ptr(), self.filled as ffi::Py_ssize_t, inner);
            }
        }
        self.filled += 1;
        Ok(())
    }

    /// The full list, or the first error met while filling it.
    pub(crate) fn finish(self, py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if self.filled != self.len {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                "{} results for {} texts",
                self.filled, self.len
            )));
        }
        Ok(self.list.into_bound(py))
    }
}

/// The ids of a batch, streamed from an engine (`encode` runs its batch without the GIL, handing
/// each finished part to the sink on the calling thread, `batch::ids_streamed`), as one list of
/// lists of the shared `ints` ([`IdLists`]): `encode_batch` of every engine. The texts are read
/// by the calling thread while the engine's other threads encode the parts read before
/// ([`TextReader`], `batch::Items::Fed`).
pub(crate) fn list_batch<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    ints: &[Py<PyAny>],
    encode: impl FnOnce(
            Items<'_, &'static str>,
            &mut dyn FnMut(&subwords_core::batch::FlatIds),
        ) -> subwords_core::Result<()>
        + Send,
) -> PyResult<Bound<'py, PyList>> {
    let reader = TextReader::new(py, texts)?;
    let mut lists = IdLists::new(py, reader.len())?;
    // the lists of finished parts are made under the GIL by the calling thread, between parts it
    // encodes itself without it
    fed_batch(py, reader, encode, |flat, _| Python::attach(|py| lists.extend(py, flat, ints)))?;
    lists.finish(py)
}

/// [`list_batch`] into the two bytearrays of [`IdArrays`]: `encode_batch_flat` of every engine.
pub(crate) fn flat_batch<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    width: usize,
    encode: impl FnOnce(
            Items<'_, &'static str>,
            &mut dyn FnMut(&subwords_core::batch::FlatIds),
        ) -> subwords_core::Result<()>
        + Send,
) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
    let reader = TextReader::new(py, texts)?;
    let mut out = IdArrays::new(py, width, reader.len())?;
    fed_batch(py, reader, encode, |flat, bytes| out.extend(flat, bytes))?;
    out.finish(py)
}

/// Runs `encode` without the GIL on texts `reader` reads as the batch goes
/// (`batch::Items::Fed`), each finished part handed to `sink` with the UTF-8 length of the
/// texts read so far, then its texts let go. A text that could not be read wins over an
/// engine's error.
pub(crate) fn fed_batch(
    py: Python<'_>,
    reader: TextReader,
    encode: impl FnOnce(
            Items<'_, &'static str>,
            &mut dyn FnMut(&subwords_core::batch::FlatIds),
        ) -> subwords_core::Result<()>
        + Send,
    mut sink: impl FnMut(&subwords_core::batch::FlatIds, usize) + Send,
) -> PyResult<()> {
    let len = reader.len();
    // the read and the sink run on the calling thread, one at a time
    let reader = std::sync::Mutex::new(reader);
    let r = py.detach(|| {
        let mut read = |range: std::ops::Range<usize>, got: &mut Vec<&'static str>| {
            lock(&reader).read(range, got)
        };
        encode(Items::Fed { len, read: &mut read }, &mut |flat| {
            let mut reader = lock(&reader);
            sink(flat, reader.bytes);
            reader.release(flat.len());
        })
    });
    reader.into_inner().unwrap_or_else(|p| p.into_inner()).finish(py)?;
    r.map_err(|e| to_py(py, e))
}

fn lock(reader: &std::sync::Mutex<TextReader>) -> std::sync::MutexGuard<'_, TextReader> {
    reader.lock().unwrap_or_else(|p| p.into_inner())
}

/// A batch's texts as UTF-8 the workers read without the GIL, read from a list, a tuple or any
/// other iterable of `str` on the calling thread, a range at a time ([`TextReader::read`]).
///
/// Reading is serial (under the GIL), so it is kept short and, in a streamed batch, done while
/// the other threads encode what was read before. On Python 3.10 and later each text's UTF-8 is
/// borrowed from the `str` itself (`PyUnicode_AsUTF8AndSize`, which keeps it with the string):
/// no copy, no object per text. On 3.9 (the stable ABI this module is built for, where `pyo3`'s
/// `PyBackedStr` cannot borrow) each text is copied into a `bytes`: for a 2 MB batch of lines,
/// 42,388 objects made and freed on the calling thread while the other core waits.
///
/// The texts stay alive while borrowed: a tuple holds its items and cannot change; a list can,
/// by another Python thread while the GIL is released, so each text read from a list is held
/// by a reference of its own (copying the list into a tuple first would be a serial pass over
/// every text before any thread could start); any other iterable is made a tuple first. A list that
/// shrinks while it is read is an error; items added to it are not read.
///
/// A text that is not a `str` is a `TextTypeError` naming its place, the message of the Python
/// side's `batch_arg`, so the Python wrappers need not walk the batch first. It wins over a
/// text that cannot be encoded (a lone surrogate) anywhere in the batch, as there: after that
/// one, the rest are checked for their type only.
pub(crate) struct TextReader {
    items: Py<PyAny>,
    is_list: bool,
    len: usize,
    borrow: bool,
    /// List items read: a reference each (see above), let go by `release` once their part of
    /// the batch is done, the rest in `drop`. Raw: `Py`'s drop asks whether this thread holds
    /// the GIL at every item.
    held: Vec<*mut pyo3::ffi::PyObject>,
    /// How many of `held` were let go.
    released: usize,
    /// The UTF-8 length of the texts read.
    bytes: usize,
    /// 3.9 only: the UTF-8 copies the texts point into.
    copies: Vec<Py<PyBytes>>,
    failed: Option<PyErr>,
}

// `PyUnicode_AsUTF8AndSize` is in the stable ABI from 3.10 and exported, with this signature, by
// every CPython 3; it is called only when the running interpreter is 3.10 or later.
extern "C" {
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut pyo3::ffi::PyObject,
        size: *mut pyo3::ffi::Py_ssize_t,
    ) -> *const std::os::raw::c_char;
}

impl TextReader {
    pub(crate) fn new(py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<Self> {
        use pyo3::types::{PyTuple, PyTupleMethods};
        if batch.is_instance_of::<pyo3::types::PyString>() {
            return Err(error(
                py,
                "InputError",
                "encode_batch takes a list of texts, not one str; use encode() for one text".into(),
            ));
        }
        let borrow = py.version_info() >= (3, 10);
        let (items, is_list, len) = if let Ok(list) = batch.cast_exact::<PyList>() {
            (list.clone().into_any().unbind(), true, list.len())
        } else if let Ok(tuple) = batch.cast_exact::<PyTuple>() {
            (tuple.clone().into_any().unbind(), false, tuple.len())
        } else {
            // SAFETY: PySequence_Tuple returns a new reference or NULL with an exception set
            let tuple = unsafe {
                Bound::from_owned_ptr_or_err(py, pyo3::ffi::PySequence_Tuple(batch.as_ptr()))?
            }
            .cast_into::<PyTuple>()?;
            let len = tuple.len();
            (tuple.into_any().unbind(), false, len)
        };
        Ok(TextReader {
            items,
            is_list,
            len,
            borrow,
            held: Vec::new(),
            released: 0,
            bytes: 0,
            copies: Vec::new(),
            failed: None,
        })
    }

    /// Lets go of the next `n` texts read, whose part of the batch is done (handed to the sink):
    /// done while the other threads encode, since at the end of a batch of short lines the
    /// ~85k objects of 4 MB are out of the cache and letting go of them at the end took a
    /// millisecond, serial.
    /// Takes the GIL only when there is something to let go.
    fn release(&mut self, n: usize) {
        let end = (self.released + n).min(self.held.len());
        if end == self.released {
            return;
        }
        Python::attach(|_| {
            for &item in &self.held[self.released..end] {
                // SAFETY: a reference taken in `read_with`, given back once (`released` moves
                // past it), with the GIL
                unsafe { pyo3::ffi::Py_DecRef(item) };
            }
        });
        self.released = end;
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Appends the texts of `range` to `out`, taking the GIL; false, with the error kept for
    /// [`TextReader::finish`], when one cannot be read (then nothing more is read).
    pub(crate) fn read(
        &mut self,
        range: std::ops::Range<usize>,
        out: &mut Vec<&'static str>,
    ) -> bool {
        Python::attach(|py| self.read_with(py, range, out))
    }

    fn read_with(
        &mut self,
        py: Python<'_>,
        range: std::ops::Range<usize>,
        out: &mut Vec<&'static str>,
    ) -> bool {
        use pyo3::ffi;
        if self.failed.is_some() {
            return false;
        }
        if self.is_list {
            self.held.reserve(range.len());
        }
        for n in range {
            let Some(item) = self.text_at(n) else {
                self.failed = Some(self.item_error(py, n));
                return false;
            };
            let (ptr, len) = if self.borrow {
                let mut len: ffi::Py_ssize_t = 0;
                // SAFETY: `item` is a str; the result is NULL with an exception set (a lone
                // surrogate: UnicodeEncodeError) or UTF-8 that lives as long as the str
                let ptr = unsafe { PyUnicode_AsUTF8AndSize(item, &mut len) };
                if ptr.is_null() {
                    self.failed = Some(PyErr::fetch(py));
                    self.check_types_after(py, n);
                    return false;
                }
                (ptr as *const u8, len as usize)
            } else {
                // SAFETY: as above; the bytes object is a new reference, kept in `copies`
                let bytes = match unsafe {
                    Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_AsUTF8String(item))
                } {
                    Ok(b) => b.cast_into::<PyBytes>().map_err(PyErr::from),
                    Err(e) => Err(e),
                };
                let bytes = match bytes {
                    Ok(b) => b,
                    Err(e) => {
                        self.failed = Some(e);
                        self.check_types_after(py, n);
                        return false;
                    }
                };
                let b = bytes.as_bytes();
                let at = (b.as_ptr(), b.len());
                self.copies.push(bytes.unbind());
                at
            };
            self.bytes += len;
            if self.is_list {
                // SAFETY: a live object; the reference taken is given back in `drop`
                unsafe { ffi::Py_IncRef(item) };
                self.held.push(item);
            }
            // SAFETY: valid UTF-8 (Python made it), alive while `self.items`, `self.held` and
            // `self.copies` are, which `self` owns until `finish`, and the batch that borrows
            // the text ends before that
            out.push(unsafe {
                std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len))
            });
        }
        true
    }

    /// Item `n` when it is a `str` (a borrowed reference), else None: the per-text path.
    #[inline(always)]
    fn text_at(&self, n: usize) -> Option<*mut pyo3::ffi::PyObject> {
        let item = self.get(n);
        // SAFETY: a live object when not NULL; PyUnicode_Check reads its type's flags
        (!item.is_null() && unsafe { pyo3::ffi::PyUnicode_Check(item) } != 0).then_some(item)
    }

    /// Item `n`, a borrowed reference, or NULL with IndexError set (cleared in `item_error`).
    #[inline(always)]
    fn get(&self, n: usize) -> *mut pyo3::ffi::PyObject {
        use pyo3::ffi;
        // SAFETY: `self.items` is the list or tuple `is_list` says; GetItem checks the index
        unsafe {
            if self.is_list {
                ffi::PyList_GetItem(self.items.as_ptr(), n as ffi::Py_ssize_t)
            } else {
                ffi::PyTuple_GetItem(self.items.as_ptr(), n as ffi::Py_ssize_t)
            }
        }
    }

    /// Why item `n` is not a text.
    #[cold]
    fn item_error(&self, py: Python<'_>, n: usize) -> PyErr {
        use pyo3::ffi;
        let item = self.get(n);
        if item.is_null() {
            // SAFETY: GetItem set the exception it returned NULL for
            unsafe { ffi::PyErr_Clear() };
            return error(
                py,
                "InputError",
                format!("the list of texts lost item {n} while it was being read (changed by another thread?); pass a list no other thread changes, or a tuple"),
            );
        }
        // SAFETY: a borrowed reference to a live object, made owned for the message
        let item = unsafe { Bound::from_borrowed_ptr(py, item) };
        let kind =
            item.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "an object".into());
        error(
            py,
            "TextTypeError",
            format!("text {n} of the batch is {kind}, not str (expected text)"),
        )
    }

    /// After text `n` could not be encoded: a text after it that is not a `str` is the error.
    fn check_types_after(&mut self, py: Python<'_>, n: usize) {
        if let Some(k) = (n + 1..self.len).find(|&k| self.text_at(k).is_none()) {
            self.failed = Some(self.item_error(py, k));
        }
    }

    /// The error met while reading, if any; the texts are let go here, with the GIL.
    pub(crate) fn finish(mut self, _py: Python<'_>) -> PyResult<()> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for TextReader {
    fn drop(&mut self) {
        self.release(self.held.len() - self.released);
    }
}

// SAFETY: `held` holds references to Python objects, touched only with the GIL (in `read_with`
// and `drop`); the texts lent out are immutable bytes those objects keep alive
unsafe impl Send for TextReader {}
// SAFETY: through a shared reference only `len` is read; the objects are touched through `&mut`
unsafe impl Sync for TextReader {}

/// A new list of `n` items, item `j` the new reference `item(j)` returns (NULL with an error
/// set stops it): the lists of the transformers backend's rows (`hf::PyHfPipeline::encode_rows`),
/// stored directly as [`new_id_list`] stores ids.
pub(crate) fn new_list<'py>(
    py: Python<'py>,
    n: usize,
    mut item: impl FnMut(usize) -> *mut pyo3::ffi::PyObject,
) -> PyResult<Bound<'py, PyList>> {
    use pyo3::ffi;
    let direct = list_layout_known(py);
    // SAFETY: as in `new_id_list`: a new list of `n` NULL items, each set once to a new
    // reference before the list is handed out; on an error the list (its NULL items skipped)
    // is released
    unsafe {
        let list = ffi::PyList_New(n as ffi::Py_ssize_t);
        if list.is_null() {
            return Err(PyErr::fetch(py));
        }
        let slots =
            if direct && n > 0 { (*list.cast::<ListHead>()).ob_item } else { std::ptr::null_mut() };
        for j in 0..n {
            let x = item(j);
            if x.is_null() {
                ffi::Py_DecRef(list);
                return Err(PyErr::fetch(py));
            }
            if slots.is_null() {
                ffi::PyList_SetItem(list, j as ffi::Py_ssize_t, x);
            } else {
                *slots.add(j) = x;
            }
        }
        Ok(Bound::from_owned_ptr(py, list).cast_into::<PyList>()?)
    }
}

/// A new reference to the int `v`: `ints[v]`, or a new int past their end (NULL with an error set
/// when that fails).
pub(crate) fn int_ref(ints: &[Py<PyAny>], v: u32) -> *mut pyo3::ffi::PyObject {
    match ints.get(v as usize) {
        Some(o) => {
            // SAFETY: `o` is a live object; the new reference is handed to the caller
            unsafe { pyo3::ffi::Py_IncRef(o.as_ptr()) };
            o.as_ptr()
        }
        // SAFETY: PyLong_FromUnsignedLong returns a new reference or NULL with an error set
        None => unsafe { pyo3::ffi::PyLong_FromUnsignedLong(v as std::os::raw::c_ulong) },
    }
}

/// A new reference to the tuple `(a, b)` of ints (NULL with an error set when that fails), left
/// untracked by the cyclic garbage collector: a tuple of ints is in no cycle, and CPython's
/// collector untracks such a tuple itself, but only at the first collection that goes over it.
/// An offset per token made tracked set off collections over every result the caller held.
pub(crate) fn span_tuple(ints: &[Py<PyAny>], a: u32, b: u32) -> *mut pyo3::ffi::PyObject {
    use pyo3::ffi;
    let (x, y) = (int_ref(ints, a), int_ref(ints, b));
    // SAFETY: `x` and `y` are new references (or NULL, then released with the tuple made so
    // far); PyTuple_New returns a new tuple of NULL items or NULL with an error set;
    // PyTuple_SetItem steals each reference; the tuple is untracked once both items are ints
    // (`PyObject_GC_UnTrack` on a tracked object is what CPython's `_PyTuple_MaybeUntrack` does)
    unsafe {
        let t = ffi::PyTuple_New(2);
        if t.is_null() || x.is_null() || y.is_null() {
            for o in [t, x, y] {
                if !o.is_null() {
                    ffi::Py_DecRef(o);
                }
            }
            return std::ptr::null_mut();
        }
        ffi::PyTuple_SetItem(t, 0, x);
        ffi::PyTuple_SetItem(t, 1, y);
        ffi::PyObject_GC_UnTrack(t.cast());
        t
    }
}

/// [`span_tuple`] as an owned object, or the error CPython set.
pub(crate) fn span_tuple_owned<'py>(
    py: Python<'py>,
    ints: &[Py<PyAny>],
    a: u32,
    b: u32,
) -> PyResult<Bound<'py, PyAny>> {
    let t = span_tuple(ints, a, b);
    if t.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `t` is a new reference, owned by the `Bound` (released with it)
    Ok(unsafe { Bound::from_owned_ptr(py, t) })
}

/// The UTF-8 of `text` when it is exactly a `str` (not a subclass) that UTF-8 can hold; None
/// otherwise (a lone surrogate's error cleared), for the caller to take its general path. On
/// Python 3.10 and later borrowed from the `str` (see [`TextReader`]), before it a copy.
pub(crate) fn exact_str<'a>(
    py: Python<'_>,
    text: &'a Bound<'_, PyAny>,
) -> Option<std::borrow::Cow<'a, str>> {
    if !text.is_exact_instance_of::<pyo3::types::PyString>() {
        return None;
    }
    static BORROW: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *BORROW.get_or_init(|| py.version_info() >= (3, 10)) {
        let mut len: pyo3::ffi::Py_ssize_t = 0;
        // SAFETY: `text` is a str; the result is NULL with an exception set (a lone surrogate)
        // or UTF-8 that lives as long as the str, which `text` holds for `'a`
        let ptr = unsafe { PyUnicode_AsUTF8AndSize(text.as_ptr(), &mut len) };
        if ptr.is_null() {
            drop(PyErr::take(py));
            return None;
        }
        // SAFETY: CPython's UTF-8 form of a str is valid UTF-8 of `len` bytes
        let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, len as usize) };
        Some(std::borrow::Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(bytes) }))
    } else {
        text.extract::<String>().ok().map(std::borrow::Cow::Owned)
    }
}
