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

use std::sync::Mutex;

/// How many states a [`Slots`] keeps.
pub const SLOTS: usize = 16;

/// Per-worker states kept across calls.
pub struct Slots<S> {
    slots: Vec<Mutex<S>>,
}

impl<S: Default> Default for Slots<S> {
    fn default() -> Self {
        Slots { slots: (0..SLOTS).map(|_| Mutex::new(S::default())).collect() }
    }
}

impl<S: Default + Send> Slots<S> {
    /// `f` with slot `k`'s state, or a fresh one when another call holds it.
    pub fn with<R>(&self, k: usize, f: impl FnOnce(&mut S) -> R) -> R {
        match self.slots[k % SLOTS].try_lock() {
            Ok(mut s) => f(&mut s),
            // a panic in an earlier call leaves the state as valid as any other
            Err(std::sync::TryLockError::Poisoned(p)) => f(&mut p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => f(&mut S::default()),
        }
    }

    /// `f` on every item on up to `threads` threads, chunk `k` with slot `k`'s state.
    pub fn map<'a, T: Sync, R: Send>(&self, items: &'a [T], threads: usize, f: impl Fn(&'a T, &mut S) -> R + Sync) -> Vec<R> {
        map_chunks(items, threads, |k, chunk, out| self.with(k, |s| out.extend(chunk.iter().map(|t| f(t, s)))))
    }
}

impl<S: Default + Send> Slots<S> {
    /// [`Slots::map`] whose results reach `sink(index, result)` on the calling thread, in item
    /// order, while the workers go on: the caller can turn finished results into something
    /// else (Python lists under the GIL) at the same time as the rest is encoded. The items are
    /// cut into parts that `threads` workers claim one after another (worker `k` with slot `k`'s
    /// state); with one thread everything runs on the caller's thread, result by result.
    pub fn map_streamed<'a, T: Sync, R: Send>(
        &self,
        items: &'a [T],
        threads: usize,
        f: impl Fn(&'a T, &mut S) -> R + Sync,
        mut sink: impl FnMut(usize, R),
    ) {
        let threads = threads.max(1).min(items.len().max(1));
        if threads == 1 {
            self.with(0, |s| items.iter().enumerate().for_each(|(i, t)| sink(i, f(t, s))));
            return;
        }
        // parts small enough that the caller's work on finished ones overlaps the encoding,
        // large enough that claiming one costs nothing next to it
        let per = items.len().div_ceil(threads * 16).max(1);
        let parts: Vec<&'a [T]> = items.chunks(per).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Vec<R>)>();
        let (f, parts, next) = (&f, &parts, &next);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|k| {
                    let tx = tx.clone();
                    scope.spawn(move || {
                        self.with(k, |s| loop {
                            let p = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(part) = parts.get(p) else { break };
                            let out: Vec<R> = part.iter().map(|t| f(t, s)).collect();
                            if tx.send((p, out)).is_err() {
                                break;
                            }
                        })
                    })
                })
                .collect();
            drop(tx);
            // parts arrive in any order; they are handed on in order
            let mut waiting: Vec<Option<Vec<R>>> = (0..parts.len()).map(|_| None).collect();
            let mut due = 0usize;
            while let Ok((p, out)) = rx.recv() {
                waiting[p] = Some(out);
                while let Some(out) = waiting.get_mut(due).and_then(Option::take) {
                    for (j, r) in out.into_iter().enumerate() {
                        sink(due * per + j, r);
                    }
                    due += 1;
                }
            }
            for w in workers {
                if let Err(panic) = w.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        });
    }
}

/// `f` on every item on up to `threads` threads, each thread with a state of its own made by
/// `init` (for states that borrow from the items and so cannot outlive the call).
pub fn map_with<'a, T: Sync, R: Send, S>(
    items: &'a [T],
    threads: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&'a T, &mut S) -> R + Sync,
) -> Vec<R> {
    map_chunks(items, threads, |_, chunk, out| {
        let mut s = init();
        out.extend(chunk.iter().map(|t| f(t, &mut s)));
    })
}

/// Cuts `items` into up to `threads` consecutive chunks and runs `run(k, chunk, out)` for the
/// `k`-th on a thread of its own (the caller's thread when there is one chunk); the outputs are
/// joined in chunk order. A panic in a worker is resumed on the caller's thread.
fn map_chunks<'a, T: Sync, R: Send>(items: &'a [T], threads: usize, run: impl Fn(usize, &'a [T], &mut Vec<R>) + Sync) -> Vec<R> {
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
        let slots: Slots<Vec<u32>> = Slots::default();
        for threads in [1, 2, 3, 7, 16, 40, 5000] {
            let got = slots.map(&items, threads, |&x, seen| {
                seen.push(x);
                x * 2
            });
            assert_eq!(got, items.iter().map(|x| x * 2).collect::<Vec<_>>(), "{threads} threads");
            let got = map_with(&items, threads, || 0u32, |&x, n| {
                *n += 1;
                x + *n - *n
            });
            assert_eq!(got, items, "{threads} threads");
        }
        assert!(slots.map(&[] as &[u32], 4, |&x, _| x).is_empty());
    }

    #[test]
    fn streamed_results_come_in_item_order_whatever_the_thread_count() {
        let items: Vec<u32> = (0..1000).collect();
        let slots: Slots<Vec<u32>> = Slots::default();
        for threads in [1, 2, 3, 16, 5000] {
            let mut got = Vec::new();
            slots.map_streamed(&items, threads, |&x, _| x * 3, |i, r| got.push((i, r)));
            let want: Vec<(usize, u32)> = items.iter().map(|&x| (x as usize, x * 3)).collect();
            assert_eq!(got, want, "{threads} threads");
        }
        let mut none = 0;
        slots.map_streamed(&[] as &[u32], 4, |&x, _| x, |_, _| none += 1);
        assert_eq!(none, 0);
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
