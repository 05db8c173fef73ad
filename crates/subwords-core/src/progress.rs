//! Progress of a long training run, as counters another thread can read.
//!
//! The core never prints and never calls back into Python: it updates these atomics, and the
//! Python side polls them from a thread of its own to draw a bar on a terminal.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

#[derive(Default, Debug)]
pub struct Progress {
    phase: AtomicU8,
    done: AtomicU64,
    total: AtomicU64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle = 0,
    Reading = 1,
    Spelling = 2,
    Merging = 3,
    Done = 4,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Reading => "reading",
            Phase::Spelling => "spelling",
            Phase::Merging => "merging",
            Phase::Done => "done",
        }
    }
}

impl Progress {
    pub fn start(&self, phase: Phase, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.phase.store(phase as u8, Ordering::Relaxed);
    }
    pub fn set(&self, done: u64) {
        self.done.store(done, Ordering::Relaxed);
    }
    pub fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }
    /// (phase, done, total)
    pub fn read(&self) -> (Phase, u64, u64) {
        let phase = match self.phase.load(Ordering::Relaxed) {
            1 => Phase::Reading,
            2 => Phase::Spelling,
            3 => Phase::Merging,
            4 => Phase::Done,
            _ => Phase::Idle,
        };
        (phase, self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed))
    }
}
