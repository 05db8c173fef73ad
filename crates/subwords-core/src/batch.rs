//! Batches: many texts on a few threads, each thread with state that stays warm across texts
//! (a cache of encoded words, scratch buffers). One implementation for every batch path: our
//! models and the Hugging Face, SentencePiece and tiktoken engines.
//!
//! Threads are scoped (`std::thread::scope`), never a global pool (DESIGN §3): a batch on `k`
//! threads cuts its items into `k` consecutive chunks and runs one thread per chunk. The output
//! is in item order and does not depend on the thread count, since the state only saves time.
//!
//! [`Slots`] keeps the state between calls: slot 0 serves single calls, slot `k` the `k`-th
//! thread of a batch, so every thread finds a warm cache without sharing one. A slot another
//! call holds is not waited for: that thread works with a fresh state instead.
//!
//! The goal is 1 -> 2 threads at 1.8x for every model and input shape, and the bound is the
//! work only the calling thread can do: reading the texts, making Python lists, freeing the
//! result. So the design keeps the caller's serial share small:
//! * the binding reads the texts in one pass (`Texts`: the type check there, the UTF-8 borrowed
//!   from the `str` on 3.10+), and with [`Items::Fed`] a part at a time after the workers have
//!   started, each part published as it is read (a `OnceLock` per part), so the first worker
//!   starts after one part instead of after the whole batch; a part's texts are let go of as
//!   the part reaches the sink (`TextReader::release`);
//! * the encoders append into the part's buffer, their buffers kept in the slot; a part's
//!   buffers go back to the thread that made them, and the `front` spelling's unit buffer is
//!   per thread (`spelling::UNIT`), so two threads never grow blocks of each other's malloc
//!   arena;
//! * slots are padded to 128 bytes so two threads' states never share a cache line;
//! * each slot's word cache is a [`crate::word_cache::WordCache`], and the threads of a batch
//!   read one table of the words met before ([`Slots::streamed`]);
//! * lists are filled through the list's item array (its layout checked once at run time), id
//!   arrays in the `bytearray`s the binding returns, sized from the first part (the binding's
//!   `FlatIds::size_for`);
//! * [`PARTS_PER_THREAD`] is 64, so the end of a batch that one thread finishes alone while the
//!   caller makes the last lists is at most a 128th of it (with 16 parts, up to a 32nd).
//!
//! Measured (callgrind instructions per call unless said; 2 threads run the instructions of 1,
//! 0.92-1.07x, so a second thread's extra CPU time is the machine):
//! * byte-level tokenizer.json, 2 MB of multilingual lines: a Python loop checking each text, a
//!   `bytes` copy per text under the 3.9 stable ABI and a dozen allocations per text left 75 M of
//!   345 M on the caller alone; with one-pass reading, buffers in slots and padded slots: 254 M on
//!   1 thread, 280 M on 2, 11 M of it the caller's; a collection of every new list inside the
//!   call (`gc_paused` as a generator) cost 30 M more;
//! * the 32k Unigram `.model`, 1 MB of lines into lists: a `PyList_SetItem` per id cost the
//!   caller 25.2 M, storing through the item array 12.7 M (whole call 238.9 -> 226.3 M);
//! * lines into lists keep a serial part on the caller, reading the texts (~3 M a MB) and
//!   CPython freeing the lists (~8 M a MB), about 11 M of 103 M: it bounds them near 1.8x;
//! * the id array copied into `bytes` after the batch was 0.75 ms serial of a 30 ms 2-thread
//!   batch of 4 MB of lines;
//! * malloc arena locks: a 2-thread `encode_array` of 4 MB of lines through our 32k Unigram made
//!   21-38 voluntary context switches a call (`realloc` under `finish_grow`); with per-thread
//!   buffers 0.5-2.8;
//! * fed items: the reading (2.4-3.4 ms of 4 MB of lines) overlaps the worker's encoding, the two
//!   ending within 0.1-0.3 ms; letting go of ~85k texts' references after the batch was one more
//!   serial millisecond, hence the release per part;
//! * an id array grown by doubling (2.7 M ids, 10.9 MB) left the other thread idle ~2 ms while
//!   the caller copied 8 MB; sized from the first part (medians of 4-6 alternating process pairs):
//!   our Unigram's 16 KB chunks 28.8 -> 26.9 ms (1.80x -> 1.85x), the `.model`'s 40.4 -> 37.5 ms
//!   (1.86x -> 1.95x), byte-level lines 28.4 -> 26.0 ms;
//! * lost: a one-value word's value kept in the table's bucket (no change beyond the noise);
//!   mimalloc (about 3% less wall time, peak RSS 98-118 MB against glibc's 62 MB, 2-thread arrays
//!   slower with `MIMALLOC_PURGE_DELAY=0`);
//! * not done: inline reference counts (3.12's immortal objects make the increment depend on the
//!   version; `Py_IncRef` is 2.2 M a MB); lists kept off the collector's books (a list the user
//!   fills with itself would leak).

use crate::word_cache::WordCache;
use std::sync::{Arc, Mutex};

/// How many states a [`Slots`] keeps.
pub const SLOTS: usize = 16;

/// Per-worker states kept across calls.
pub struct Slots<S> {
    slots: Vec<Padded<Mutex<S>>>,
}

/// A slot on cache lines of its own. The states sit side by side and hold the headers of their
/// caches and buffers (lengths written at every push), so unpadded, two threads writing their
/// own slots would pass the line they share back and forth between the cores (128: the
/// adjacent-line prefetcher pairs 64-byte lines).
#[repr(align(128))]
struct Padded<T>(T);

impl<S: Default> Default for Slots<S> {
    fn default() -> Self {
        Slots { slots: (0..SLOTS).map(|_| Padded(Mutex::new(S::default()))).collect() }
    }
}

impl<S: Default + Send> Slots<S> {
    /// `f` with slot `k`'s state, or a fresh one when another call holds it.
    pub fn with<R>(&self, k: usize, f: impl FnOnce(&mut S) -> R) -> R {
        match self.slots[k % SLOTS].0.try_lock() {
            Ok(mut s) => f(&mut s),
            // a panic in an earlier call leaves the state as valid as any other
            Err(std::sync::TryLockError::Poisoned(p)) => f(&mut p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => f(&mut S::default()),
        }
    }

    /// The `with_state` of a batch ([`ids_streamed`], [`Slots::map`]) for states that hold a
    /// word cache (`cache` finds it): slot `k`'s state, and on more than one thread every
    /// thread reads slot 0's words first ([`WordCache::share`]), so that a batch's threads keep
    /// one table of the words met before instead of one each. Each thread stores the words it
    /// meets new in its own state's cache, as on one thread.
    pub fn streamed<'a, V: crate::word_cache::Value + Send + Sync + 'a>(
        &'a self,
        threads: usize,
        cache: fn(&mut S) -> &mut WordCache<V>,
    ) -> impl Fn(usize, &mut dyn FnMut(&mut S)) + Sync + 'a {
        let base = (threads > 1).then(|| self.with(0, |s| cache(s).share()));
        move |k, body| {
            self.with(k, |s| match (&base, k) {
                (Some(base), 1..) => {
                    cache(s).attach(Arc::clone(base));
                    body(s);
                    cache(s).detach();
                }
                _ => body(s),
            })
        }
    }

    /// `f` on every item on up to `threads` threads, chunk `k` with slot `k`'s state, the
    /// threads sharing slot 0's words as in [`Slots::streamed`].
    pub fn map<'a, T: Sync, R: Send, V: crate::word_cache::Value + Send + Sync>(
        &self,
        items: &'a [T],
        threads: usize,
        cache: fn(&mut S) -> &mut WordCache<V>,
        f: impl Fn(&'a T, &mut S) -> R + Sync,
    ) -> Vec<R> {
        let with_state = self.streamed(threads.min(items.len()), cache);
        map_chunks(items, threads, |k, chunk, out| {
            with_state(k, &mut |s| out.extend(chunk.iter().map(|t| f(t, s))))
        })
    }
}

/// The ids of consecutive texts in one buffer: text `i`'s are `ids[ends[i - 1]..ends[i]]`.
/// One allocation per part of a batch instead of one per text, reused across the parts: the
/// thread that turns them into Python lists then frees nothing that a worker allocated (a free
/// into another thread's malloc arena takes that arena's lock, which the worker holds while it
/// allocates; many short texts made the two wait on each other).
#[derive(Default, Debug)]
pub struct FlatIds {
    ids: Vec<u32>,
    ends: Vec<usize>,
}

impl FlatIds {
    /// Number of texts.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Text `i`'s ids.
    pub fn get(&self, i: usize) -> &[u32] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.ids[start..self.ends[i]]
    }

    /// Every text's ids, one after the other.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Every text's ids, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// `other`'s texts after this one's.
    pub fn append(&mut self, other: &FlatIds) {
        let base = self.ids.len();
        self.ids.extend_from_slice(&other.ids);
        self.ends.extend(other.ends.iter().map(|e| e + base));
    }

    fn clear(&mut self) {
        self.ids.clear();
        self.ends.clear();
    }

    /// `f(ids)` appends one text's ids; an error leaves no partial text behind.
    fn push_with<E>(&mut self, f: impl FnOnce(&mut Vec<u32>) -> Result<(), E>) -> Result<(), E> {
        let before = self.ids.len();
        match f(&mut self.ids) {
            Ok(()) => {
                self.ends.push(self.ids.len());
                Ok(())
            }
            Err(e) => {
                self.ids.truncate(before);
                Err(e)
            }
        }
    }
}

/// How many parts [`ids_streamed`] cuts a batch into per thread. 16 left the end of a 2-thread
/// batch to one thread for up to a part (a 32nd of the batch, with the lists of the last parts
/// still to make on the caller); 64 cuts that to a 128th, and a part of a 4 MB batch of lines
/// (670 texts) still costs ~100 times more to encode than to claim and hand on.
const PARTS_PER_THREAD: usize = 64;

/// The items of a batch for [`ids_streamed`]: all at hand, or read by the calling thread part
/// by part while the other threads already encode the parts read before.
pub enum Items<'a, T> {
    Ready(&'a [T]),
    /// `len` items, which `read(range, out)` appends to `out` on the calling thread, the
    /// ranges in order. It returns false to stop the batch (it keeps the reason itself): the
    /// threads then stop claiming, and [`ids_streamed`] returns `Ok` with nothing more handed on.
    Fed {
        len: usize,
        read: &'a mut (dyn FnMut(std::ops::Range<usize>, &mut Vec<T>) -> bool + Send),
    },
}

impl<'a, T> From<&'a [T]> for Items<'a, T> {
    fn from(items: &'a [T]) -> Self {
        Items::Ready(items)
    }
}

impl<'a, T> From<&'a Vec<T>> for Items<'a, T> {
    fn from(items: &'a Vec<T>) -> Self {
        Items::Ready(items)
    }
}

impl<T> Items<'_, T> {
    pub fn len(&self) -> usize {
        match self {
            Items::Ready(items) => items.len(),
            Items::Fed { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Ids of every item, handed to `sink` on the calling thread part by part, in item order, while
/// the other threads go on encoding: the pipeline for batches whose results become Python
/// objects (made by one thread at a time, under the GIL).
///
/// `f(item, state, out)` appends one item's ids to `out`. `with_state(k, body)` runs `body` with
/// thread `k`'s state (thread 0 is the caller's). The caller's thread is one of the `threads`:
/// it starts `threads - 1` workers, then turns every finished part over to `sink` as soon as it
/// is due and encodes unclaimed parts itself when none is, so `threads` threads are busy until
/// the end and none waits for the one that makes the objects. On one thread everything runs on
/// the caller's, part by part. The first error in item order is returned; `sink` has then seen
/// the parts before it, and the workers stop claiming.
///
/// [`Items::Fed`] items are read by the caller after it has started the workers, a part at a
/// time, each part published as soon as it is read: a worker starts on the first part while the
/// caller reads the second, so reading the texts (serial, under the GIL) is not a stretch
/// in which the other threads wait.
pub fn ids_streamed<'a, T: Sync + Send + 'a, S, E: Send>(
    items: impl Into<Items<'a, T>>,
    threads: usize,
    with_state: impl Fn(usize, &mut dyn FnMut(&mut S)) + Sync,
    f: impl Fn(&T, &mut S, &mut Vec<u32>) -> Result<(), E> + Sync,
    mut sink: impl FnMut(&FlatIds),
) -> Result<(), E> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::OnceLock;
    let items = items.into();
    let len = items.len();
    let threads = threads.max(1).min(len.max(1));
    let encode = |part: &[T], s: &mut S, flat: &mut FlatIds| -> Result<(), E> {
        flat.clear();
        part.iter().try_for_each(|t| flat.push_with(|out| f(t, s, out)))
    };
    // parts small enough that the objects of finished ones are made while the rest is encoded
    // and that the last one, which the other threads cannot share, is short; large enough that
    // claiming one costs nothing next to encoding it (a few microseconds a part)
    let per = len.div_ceil(threads * PARTS_PER_THREAD).max(1);
    let count = len.div_ceil(per);
    let range = |p: usize| p * per..((p + 1) * per).min(len);
    if threads == 1 {
        // fed items are read whole first: there is no other thread to overlap with
        let all;
        let items: &[T] = match items {
            Items::Ready(items) => items,
            Items::Fed { read, .. } => {
                let mut got = Vec::with_capacity(len);
                if !read(0..len, &mut got) {
                    return Ok(());
                }
                all = got;
                &all
            }
        };
        let mut result = Ok(());
        let mut flat = FlatIds::default();
        with_state(0, &mut |s| {
            for p in 0..count {
                if let Err(e) = encode(&items[range(p)], s, &mut flat) {
                    result = Err(e);
                    return;
                }
                sink(&flat);
            }
        });
        return result;
    }
    let mut result = Ok(());
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // the parts of fed items, each set once by the caller (empty once the batch has stopped)
    let fed: Vec<OnceLock<Box<[T]>>> = match &items {
        Items::Ready(_) => Vec::new(),
        Items::Fed { .. } => (0..count).map(|_| OnceLock::new()).collect(),
    };
    let (ready, mut read) = match items {
        Items::Ready(items) => (Some(items), None),
        Items::Fed { read, .. } => (None, Some(read)),
    };
    // part `p`, waiting for the caller to read it if need be
    let part = |p: usize| -> &[T] {
        match ready {
            Some(items) => &items[range(p)],
            None => fed[p].wait(),
        }
    };
    // finished buffers go back to the thread that made them, so a part costs no allocation once
    // they are warm, and no thread grows or frees a buffer from another thread's malloc arena
    // (which takes that arena's lock while its own thread allocates in it: a futex wait)
    let spare: Vec<Mutex<Vec<FlatIds>>> = (0..threads).map(|_| Mutex::new(Vec::new())).collect();
    let (tx, rx) = std::sync::mpsc::channel::<(usize, usize, Result<FlatIds, E>)>();
    let (encode, part, next, stop, spare, with_state, fed) =
        (&encode, &part, &next, &stop, &spare, &with_state, &fed);
    let take = |k: usize| spare[k].lock().ok().and_then(|mut v| v.pop()).unwrap_or_default();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (1..threads)
            .map(|k| {
                let tx = tx.clone();
                scope.spawn(move || {
                    with_state(k, &mut |s| {
                        while !stop.load(Ordering::Relaxed) {
                            let p = next.fetch_add(1, Ordering::Relaxed);
                            if p >= count {
                                break;
                            }
                            let items = part(p);
                            if stop.load(Ordering::Relaxed) {
                                break;
                            }
                            let mut flat = take(k);
                            let r = encode(items, s, &mut flat).map(|()| flat);
                            if tx.send((p, k, r)).is_err() {
                                break;
                            }
                        }
                    })
                })
            })
            .collect();
        drop(tx);
        // fed items: read every part now, each published at once; a part left unset (the
        // reader stopped the batch, or panicked) is set empty on the way out, so that no worker
        // waits for it
        if let Some(read) = read.as_mut() {
            struct Unblock<'x, T>(&'x [OnceLock<Box<[T]>>], &'x AtomicBool);
            impl<T> Drop for Unblock<'_, T> {
                fn drop(&mut self) {
                    for cell in self.0 {
                        if cell.get().is_none() {
                            self.1.store(true, Ordering::Relaxed);
                            let _ = cell.set(Box::new([]));
                        }
                    }
                }
            }
            let unblock = Unblock(fed, stop);
            for (p, cell) in fed.iter().enumerate() {
                let mut got = Vec::with_capacity(range(p).len());
                if !read(range(p), &mut got) {
                    break;
                }
                let _ = cell.set(got.into_boxed_slice());
            }
            drop(unblock);
        }
        let mut waiting: Vec<Option<(usize, Result<FlatIds, E>)>> =
            (0..count).map(|_| None).collect();
        let mut due = 0usize;
        with_state(0, &mut |s| {
            while due < count && !stop.load(Ordering::Relaxed) {
                // hand on every part that is due
                while let Some((k, r)) = waiting[due].take() {
                    match r {
                        Ok(flat) => {
                            sink(&flat);
                            if let Ok(mut v) = spare[k].lock() {
                                v.push(flat);
                            }
                        }
                        Err(e) => {
                            stop.store(true, Ordering::Relaxed);
                            result = Err(e);
                            return;
                        }
                    }
                    due += 1;
                    if due == count {
                        return;
                    }
                }
                // take what the workers have finished; with nothing due, encode a part here
                let mut got = false;
                while let Ok((p, k, r)) = rx.try_recv() {
                    waiting[p] = Some((k, r));
                    got = true;
                }
                if got {
                    continue;
                }
                let p = next.fetch_add(1, Ordering::Relaxed);
                if p < count {
                    let mut flat = take(0);
                    waiting[p] = Some((0, encode(part(p), s, &mut flat).map(|()| flat)));
                } else {
                    // every part is claimed: wait for the workers' ones
                    match rx.recv() {
                        Ok((p, k, r)) => waiting[p] = Some((k, r)),
                        Err(_) => return, // a worker panicked; its panic is resumed below
                    }
                }
            }
        });
        for w in workers {
            if let Err(panic) = w.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    result
}

/// Cuts `items` into up to `threads` consecutive chunks and runs `run(k, chunk, out)` for the
/// `k`-th on a thread of its own (the caller's thread when there is one chunk); the outputs are
/// joined in chunk order. A panic in a worker is resumed on the caller's thread.
fn map_chunks<'a, T: Sync, R: Send>(
    items: &'a [T],
    threads: usize,
    run: impl Fn(usize, &'a [T], &mut Vec<R>) + Sync,
) -> Vec<R> {
    let threads = threads.max(1).min(items.len().max(1));
    let mut out = Vec::with_capacity(items.len());
    if threads == 1 {
        run(0, items, &mut out);
        return out;
    }
    let per = items.len().div_ceil(threads);
    let run = &run;
    std::thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(per)
            .enumerate()
            .map(|(k, chunk)| {
                scope.spawn(move || {
                    let mut part = Vec::with_capacity(chunk.len());
                    run(k, chunk, &mut part);
                    part
                })
            })
            .collect();
        for w in workers {
            match w.join() {
                Ok(part) => out.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_is_in_item_order_whatever_the_thread_count() {
        let items: Vec<u32> = (0..1000).collect();
        let slots: Slots<(Vec<u32>, WordCache<u32>)> = Slots::default();
        for threads in [1, 2, 3, 7, 16, 40, 5000] {
            let got = slots.map(
                &items,
                threads,
                |s| &mut s.1,
                |&x, (seen, _)| {
                    seen.push(x);
                    x * 2
                },
            );
            assert_eq!(got, items.iter().map(|x| x * 2).collect::<Vec<_>>(), "{threads} threads");
        }
        assert!(slots.map(&[] as &[u32], 4, |s| &mut s.1, |&x, _| x).is_empty());
    }

    #[test]
    fn streamed_ids_come_in_item_order_whatever_the_thread_count() {
        // item x's ids: x copies of x (so empty texts occur, and parts of uneven size); the items
        // at hand, or fed by a reader (which must be asked for every item once, in order)
        let items: Vec<u32> = (0..3000).map(|x| x % 7).collect();
        let want: Vec<Vec<u32>> = items.iter().map(|&x| vec![x; x as usize]).collect();
        let slots: Slots<u32> = Slots::default();
        for fed in [false, true] {
            for threads in [1, 2, 3, 16, 5000] {
                let mut asked: Vec<std::ops::Range<usize>> = Vec::new();
                let mut read = |r: std::ops::Range<usize>, out: &mut Vec<u32>| {
                    asked.push(r.clone());
                    out.extend_from_slice(&items[r]);
                    true
                };
                let source = if fed {
                    Items::Fed { len: items.len(), read: &mut read }
                } else {
                    Items::Ready(&items)
                };
                let mut got: Vec<Vec<u32>> = Vec::new();
                let r: Result<(), ()> = ids_streamed(
                    source,
                    threads,
                    |k, body| slots.with(k, |s| body(s)),
                    |&x, seen, out| {
                        *seen += 1;
                        out.extend(std::iter::repeat_n(x, x as usize));
                        Ok(())
                    },
                    |flat| got.extend(flat.iter().map(|ids| ids.to_vec())),
                );
                assert_eq!(r, Ok(()));
                assert_eq!(got, want, "{threads} threads, fed: {fed}");
                if fed {
                    assert_eq!(asked.first().map(|r| r.start), Some(0));
                    assert!(
                        asked.windows(2).all(|w| w[0].end == w[1].start),
                        "{threads} threads: {asked:?}"
                    );
                    assert_eq!(asked.last().map(|r| r.end), Some(items.len()));
                } else {
                    assert!(asked.is_empty());
                }
            }
        }
        let mut none = 0;
        let r: Result<(), ()> = ids_streamed(
            &[] as &[u32],
            4,
            |_, body| body(&mut ()),
            |_, _, _| Ok(()),
            |f| none += f.len(),
        );
        assert_eq!((r, none), (Ok(()), 0));
    }

    #[test]
    fn a_streamed_error_is_the_first_in_item_order() {
        let items: Vec<u32> = (0..1000).collect();
        for threads in [1, 2, 4] {
            let mut seen = 0usize;
            // items 700 and 300 fail: 300 comes first whichever thread reaches its part first
            let r = ids_streamed(
                &items,
                threads,
                |_, body| body(&mut ()),
                |&x, _, out| {
                    if x == 700 || x == 300 {
                        Err(x)
                    } else {
                        out.push(x);
                        Ok(())
                    }
                },
                |flat| seen += flat.len(),
            );
            assert_eq!(r, Err(300), "{threads} threads");
            assert!(seen <= 300, "{threads} threads: {seen} texts handed on before the error");
        }
    }

    #[test]
    fn a_reader_that_stops_or_panics_leaves_no_thread_waiting() {
        let items: Vec<u32> = (0..5000).collect();
        for threads in [1, 2, 4] {
            for (stop_at, panics) in [(0, false), (1, false), (2500, false), (1000, true)] {
                let mut seen = 0usize;
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut read = |r: std::ops::Range<usize>, out: &mut Vec<u32>| {
                        if r.end > stop_at {
                            assert!(!panics, "the reader fails");
                            return false;
                        }
                        out.extend_from_slice(&items[r]);
                        true
                    };
                    let r: Result<(), ()> = ids_streamed(
                        Items::Fed { len: items.len(), read: &mut read },
                        threads,
                        |_, body| body(&mut ()),
                        |&x, _, out| {
                            out.push(x);
                            Ok(())
                        },
                        |flat| seen += flat.len(),
                    );
                    r
                }));
                match r {
                    Ok(r) => {
                        assert!(!panics && r == Ok(()), "{threads} threads, stop at {stop_at}")
                    }
                    Err(_) => assert!(
                        panics,
                        "{threads} threads: only the reader's panic reaches the caller"
                    ),
                }
                assert!(
                    seen <= stop_at,
                    "{threads} threads: {seen} texts handed on past a stop at {stop_at}"
                );
            }
        }
    }

    #[test]
    fn a_busy_slot_gives_a_fresh_state() {
        let slots: Slots<Vec<u32>> = Slots::default();
        slots.with(0, |s| s.push(1));
        slots.with(0, |outer| {
            assert_eq!(outer, &vec![1]);
            // slot 0 is held by the outer call: the inner one gets a fresh state
            slots.with(0, |inner| assert!(inner.is_empty()));
        });
    }
}
