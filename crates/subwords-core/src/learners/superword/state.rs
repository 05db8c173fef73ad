//! The units, pair counts and token counts of a learner that merges and deletes tokens, each
//! unit kept as a vector and counted out and back in whole when a merge or deletion touches it:
//! BoundlessBPE's ordinary merges and deletions (`boundless.rs`). Lists of the units that may
//! hold a pair or a token (stale entries are checked and skipped), and a max-heap of
//! `(count, pair)` entries pushed whenever a count changes (an entry whose count is not the
//! pair's is stale), ties to the smaller pieces by bytes, as the reference breaks them.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::rc::Rc;

use crate::hash::Map;
use crate::learners::merge::{pack, unpack, Symbols};

/// A candidate pair in a text-ordered heap: ties go to the smaller pieces by bytes.
pub(crate) struct Entry {
    pub(crate) count: u64,
    pub(crate) pair: u64,
    pub(crate) left: Rc<[u8]>,
    pub(crate) right: Rc<[u8]>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// The larger count first; then the smaller `(left, right)` by the pieces' bytes.
    fn cmp(&self, other: &Self) -> Ordering {
        self.count
            .cmp(&other.count)
            .then_with(|| other.left.cmp(&self.left))
            .then_with(|| other.right.cmp(&self.right))
            .then_with(|| other.pair.cmp(&self.pair))
    }
}

/// The units, pair counts and token counts under merges and deletions.
pub(crate) struct State<'a> {
    pub(crate) symbols: &'a mut Symbols,
    pub(crate) units: Vec<Vec<u32>>,
    counts: Vec<u64>,
    /// Each pair's count over the units, overlaps included.
    pub(crate) pairs: Map<u64, u64>,
    /// Units that may hold a pair (stale ids allowed).
    pair_units: Map<u64, Vec<u32>>,
    /// Units that may hold a token, by `id - base` (stale ids allowed).
    tok_units: Vec<Vec<u32>>,
    /// Each token's count in the units, by `id - base`.
    pub(crate) freq: Vec<u64>,
    heap: BinaryHeap<Entry>,
    /// Each pair's net change of count since the last heap push (a unit counted out and back in
    /// changes most of its pairs by nothing: they get no new entry).
    delta: Map<u64, i64>,
    /// A stamp per unit, to visit each listed unit once.
    stamp: Vec<u32>,
    round: u32,
    /// Pairs counted below this get no heap entry (a learner that stops below `min_count` never
    /// takes them). An entry is pushed when a count rises to it.
    pub(crate) floor: u64,
    /// The heap's size after its last sweep of stale entries.
    heap_mark: usize,
}

impl<'a> State<'a> {
    /// The state of `units` (symbol ids of `symbols`, with counts), every pair counted, and on
    /// the heap when counted at least `floor`.
    pub(crate) fn with_floor(
        units: Vec<(Vec<u32>, u64)>,
        symbols: &'a mut Symbols,
        floor: u64,
    ) -> Self {
        let n = units.len();
        let (units, counts): (Vec<Vec<u32>>, Vec<u64>) = units.into_iter().unzip();
        let mut st = State {
            symbols,
            units,
            counts,
            pairs: Map::default(),
            pair_units: Map::default(),
            tok_units: Vec::new(),
            freq: Vec::new(),
            heap: BinaryHeap::new(),
            delta: Map::default(),
            stamp: vec![0; n],
            round: 0,
            floor,
            heap_mark: 0,
        };
        st.grow();
        for u in 0..n {
            if st.counts[u] == 0 {
                st.units[u].clear();
                continue;
            }
            st.count_unit(u, true);
            let toks = st.units[u].clone();
            for &t in &toks {
                let i = st.ix(t);
                if st.tok_units[i].last() != Some(&(u as u32)) {
                    st.tok_units[i].push(u as u32);
                }
            }
            for w in toks.windows(2) {
                let list = st.pair_units.entry(pack(w[0], w[1])).or_default();
                if list.last() != Some(&(u as u32)) {
                    list.push(u as u32);
                }
            }
        }
        st.push_touched();
        st
    }

    pub(crate) fn ix(&self, t: u32) -> usize {
        (t - self.symbols.base) as usize
    }

    /// Makes room for the symbols added to `symbols` since.
    pub(crate) fn grow(&mut self) {
        let n = self.symbols.texts.len();
        self.freq.resize(n, 0);
        self.tok_units.resize_with(n, Vec::new);
    }

    /// Counts unit `u` out of (`sign` false) or into the pair map and the token counts.
    fn count_unit(&mut self, u: usize, add: bool) {
        let c = self.counts[u];
        let toks = std::mem::take(&mut self.units[u]);
        for w in toks.windows(2) {
            let p = pack(w[0], w[1]);
            let e = self.pairs.entry(p).or_insert(0);
            let d = self.delta.entry(p).or_insert(0);
            if add {
                *e += c;
                *d += c as i64;
            } else {
                *e -= c;
                *d -= c as i64;
            }
        }
        for &t in &toks {
            let i = self.ix(t);
            if add {
                self.freq[i] += c;
            } else {
                self.freq[i] -= c;
            }
        }
        self.units[u] = toks;
    }

    /// The distinct units among `list` (a stale or repeated id is visited once).
    fn distinct(&mut self, list: Vec<u32>) -> Vec<u32> {
        self.round += 1;
        let r = self.round;
        let mut out = Vec::with_capacity(list.len());
        for u in list {
            if self.stamp[u as usize] != r {
                self.stamp[u as usize] = r;
                out.push(u);
            }
        }
        out
    }

    /// Joins every occurrence of `(a, b)` into `c`.
    pub(crate) fn merge(&mut self, a: u32, b: u32, c: u32) {
        let p = pack(a, b);
        let list = self.pair_units.remove(&p).unwrap_or_default();
        for u in self.distinct(list) {
            let u = u as usize;
            if !self.units[u].windows(2).any(|w| w[0] == a && w[1] == b) {
                continue;
            }
            self.count_unit(u, false);
            let old = std::mem::take(&mut self.units[u]);
            let mut new = Vec::with_capacity(old.len());
            let mut i = 0;
            while i < old.len() {
                if i + 1 < old.len() && old[i] == a && old[i + 1] == b {
                    new.push(c);
                    i += 2;
                } else {
                    new.push(old[i]);
                    i += 1;
                }
            }
            self.note_unit(u as u32, &new, &[c]);
            self.units[u] = new;
            self.count_unit(u, true);
        }
        // a token no unit holds any more is listed anew when it is made again
        for t in [a, b] {
            let i = self.ix(t);
            if self.freq[i] == 0 {
                self.tok_units[i] = Vec::new();
            }
        }
    }

    /// Splits every occurrence of `x` into `parts`.
    pub(crate) fn split(&mut self, x: u32, parts: &[u32]) {
        let ix = self.ix(x);
        let list = std::mem::take(&mut self.tok_units[ix]);
        for u in self.distinct(list) {
            let u = u as usize;
            if !self.units[u].contains(&x) {
                continue;
            }
            self.count_unit(u, false);
            let old = std::mem::take(&mut self.units[u]);
            let mut new = Vec::with_capacity(old.len() + parts.len());
            for &t in &old {
                if t == x {
                    new.extend_from_slice(parts);
                } else {
                    new.push(t);
                }
            }
            self.note_unit(u as u32, &new, parts);
            self.units[u] = new;
            self.count_unit(u, true);
        }
    }

    /// Lists unit `u` under the tokens `fresh` and under every pair of `toks` holding one of them
    /// (the pairs a rewrite may have made).
    fn note_unit(&mut self, u: u32, toks: &[u32], fresh: &[u32]) {
        for &t in fresh {
            let i = self.ix(t);
            self.tok_units[i].push(u);
        }
        for w in toks.windows(2) {
            if fresh.contains(&w[0]) || fresh.contains(&w[1]) {
                self.pair_units.entry(pack(w[0], w[1])).or_default().push(u);
            }
        }
    }

    /// Pushes a heap entry for every pair whose count changed (the heap's order is total, so
    /// the order of the pushes does not matter).
    pub(crate) fn push_touched(&mut self) {
        let mut delta = std::mem::take(&mut self.delta);
        for (&p, &d) in &delta {
            if d == 0 {
                continue;
            }
            match self.pairs.get(&p) {
                Some(&0) => {
                    // a pair counted again is listed anew by the rewrite that makes it
                    self.pairs.remove(&p);
                    self.pair_units.remove(&p);
                }
                Some(&n) if n >= self.floor => {
                    let (l, r) = unpack(p);
                    let left = self.symbols.texts[self.ix(l)].clone();
                    let right = self.symbols.texts[self.ix(r)].clone();
                    self.heap.push(Entry { count: n, pair: p, left, right });
                }
                _ => {}
            }
        }
        delta.clear();
        self.delta = delta;
        // the heap doubled since it was last swept: its stale entries go (an entry is stale
        // when its count is not its pair's; the heap's order is total, so no choice changes)
        if self.heap.len() > 2 * self.heap_mark.max(4096) {
            let pairs = &self.pairs;
            self.heap.retain(|e| pairs.get(&e.pair) == Some(&e.count));
            self.heap_mark = self.heap.len();
        }
    }

    /// The best pair: the largest count, ties to the smallest `(left, right)`.
    pub(crate) fn best(&mut self) -> Option<(u64, u64)> {
        while let Some(e) = self.heap.pop() {
            if self.pairs.get(&e.pair) == Some(&e.count) {
                return Some((e.pair, e.count));
            }
        }
        None
    }

    /// The entry [`best`](Self::best) would return, left on the heap.
    pub(crate) fn peek(&mut self) -> Option<&Entry> {
        while let Some(e) = self.heap.peek() {
            if self.pairs.get(&e.pair) == Some(&e.count) {
                break;
            }
            self.heap.pop();
        }
        self.heap.peek()
    }
}
