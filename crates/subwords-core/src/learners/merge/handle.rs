//! The merge engine for learners outside this module (BoundlessBPE, `superword/boundless.rs`):
//! plain BPE's counts and tie rule, rarely counted pairs dropped from the index as plain BPE's
//! are (a pair a split gains is counted again if the index lacks it: [`Engine::split`]), and
//! the engine's merges and splits ([`Engine::apply`], [`Engine::split`]) as Picky BPE uses them.

use super::engine::Engine;
use super::{Flat, MergeParams, Symbols};

pub(crate) struct EngineHandle<'a> {
    e: Engine<'a>,
}

impl<'a> EngineHandle<'a> {
    /// The engine on `flat` (symbols of `symbols`); the units each merge rewrites are kept for
    /// [`EngineHandle::take_touched`].
    pub(crate) fn new(flat: Flat, symbols: &'a mut Symbols, new_rows: u64, min_count: u64) -> Self {
        let mut mp = MergeParams::bpe(new_rows, min_count, None);
        mp.tuning.give_back = true;
        mp.tuning.compaction = super::Compaction::Eighth;
        // pairs may be dropped: with every pair kept, the index and place lists were the
        // largest part of BoundlessBPE's peak (100 MB mixed, 32k: the peak 285 -> 251 MB)
        let mut e = Engine::new(flat, symbols, &mp, false);
        e.touched = Some(Vec::new());
        EngineHandle { e }
    }

    /// The best pair and its count (overlaps included), left in place; ties to the smaller
    /// `(left, right)` by bytes.
    pub(crate) fn best(&mut self) -> Option<(u64, u64)> {
        self.e.best()
    }

    /// The row joining `a` and `b`, and whether it is new.
    pub(crate) fn piece(&mut self, a: u32, b: u32) -> (u32, bool) {
        self.e.piece(a, b)
    }

    /// The row of `text` (`len` symbols of the alphabet), and whether it is new.
    pub(crate) fn intern(&mut self, text: Vec<u8>, len: u32) -> (u32, bool) {
        self.e.intern(text, len)
    }

    /// Joins `pair` (counted `count`) into `c` in every unit; returns Σ count × sites.
    pub(crate) fn apply(&mut self, pair: u64, count: u64, c: u32, interned: bool) -> i64 {
        // what compaction may drop follows the last merge's count, as in the merge loop
        self.e.last_count = count;
        self.e.apply(pair, c, interned)
    }

    /// The units the merges rewrote since the last call.
    pub(crate) fn take_touched(&mut self) -> Vec<u32> {
        std::mem::take(self.e.touched.as_mut().expect("set by new"))
    }

    /// Splits every occurrence of `x` into `parts` in the units of `list`; returns Σ count ×
    /// occurrences and the units changed.
    pub(crate) fn split(&mut self, x: u32, parts: &[u32], list: Vec<u32>) -> (i64, Vec<u32>) {
        self.e.split(x, parts, list)
    }

    pub(crate) fn unit(&self, i: usize) -> &[u32] {
        self.e.unit(i)
    }

    pub(crate) fn symbols(&self) -> &Symbols {
        self.e.symbols
    }

    /// Σ count × pieces of the units.
    pub(crate) fn pieces(&self) -> u64 {
        self.e.pieces()
    }
}
