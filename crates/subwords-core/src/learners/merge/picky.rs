//! Picky BPE (Chizhov, Arnett, Korotkova and Yamshchikov, "BPE Gets Picky: Efficient Vocabulary
//! Refinement During Tokenizer Training", EMNLP 2024, arXiv 2409.04599).
//!
//! Plain BPE with one step after every merge of `x1 + x2`: each of the two tokens that is not a
//! symbol of the alphabet gets its *intersection over self*, `IoS(x) = f_p(x1, x2) / f_t(x)`,
//! the pair's merged count over `x`'s count as a token just before the merge. When it reaches the
//! threshold (`IoS >= T`) `x` is *removed*: every occurrence left is split into the tokens it was
//! first made of (a removed part into its own parts, down to present tokens or symbols). The left
//! token is checked first, then the right one (once for `x + x`); `f_t` is read when the check is
//! made, so a removal that splits into the other token raises it. A later merge that makes a
//! removed token's text again restores it. The size counts the learned tokens present.
//!
//! The model is a sequence of events, merges and removals; encoding replays them in order. The
//! pure-Python reference (`python/subwords/reference/picky.py`) states the same rules in the
//! plainest form and works a case by hand; the tests run both on random corpora.
//!
//! Shape: units as vectors, a pair map `pair -> count`, lists of the units that may hold a pair
//! or a token (stale entries are checked and skipped), a max-heap of `(count, pair)` entries
//! pushed whenever a count changes (an entry whose count is not the pair's is stale). Each
//! changed unit is counted out and back in whole: O(length) per unit a merge or removal touches.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::rc::Rc;

use super::{pack, unpack, Stop, Symbols};
use crate::hash::Map;

/// One step of a Picky BPE run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PickyEvent {
    /// `(left, right, result)`: every occurrence of the pair joined.
    Merge([u32; 3]),
    /// A token removed; every occurrence split into `parts`.
    Remove { token: u32, parts: Vec<u32> },
}

pub struct PickyParams {
    /// How many learned tokens may be present at the end.
    pub new_rows: u64,
    pub min_count: u64,
    /// The IoS threshold, in (0, 1].
    pub threshold: f64,
}

pub struct Picky {
    pub events: Vec<PickyEvent>,
    /// The learned tokens present at the end, in the order they were last made.
    pub present: Vec<u32>,
    pub stop: Stop,
    /// The units as training left them.
    pub units: Vec<Vec<u32>>,
}

struct Entry {
    count: u64,
    pair: u64,
    left: Rc<[u8]>,
    right: Rc<[u8]>,
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

struct State<'a> {
    symbols: &'a mut Symbols,
    units: Vec<Vec<u32>>,
    counts: Vec<u64>,
    pairs: Map<u64, u64>,
    /// Units that may hold a pair (stale ids allowed).
    pair_units: Map<u64, Vec<u32>>,
    /// Units that may hold a token, by `id - base` (stale ids allowed).
    tok_units: Vec<Vec<u32>>,
    freq: Vec<u64>,
    heap: BinaryHeap<Entry>,
    /// Pairs whose count changed since their last heap push.
    touched: Vec<u64>,
    /// A stamp per unit, to visit each listed unit once.
    stamp: Vec<u32>,
    round: u32,
}

impl State<'_> {
    fn ix(&self, t: u32) -> usize {
        (t - self.symbols.base) as usize
    }

    fn grow(&mut self) {
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
            if add {
                *e += c;
            } else {
                *e -= c;
            }
            self.touched.push(p);
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
    fn merge(&mut self, a: u32, b: u32, c: u32) {
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
    }

    /// Splits every occurrence of `x` into `parts`.
    fn split(&mut self, x: u32, parts: &[u32]) {
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

    /// Pushes a heap entry for every pair whose count changed.
    fn push_touched(&mut self) {
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        touched.dedup();
        for &p in &touched {
            match self.pairs.get(&p) {
                Some(&0) => {
                    self.pairs.remove(&p);
                }
                Some(&n) => {
                    let (l, r) = unpack(p);
                    let left = self.symbols.texts[self.ix(l)].clone();
                    let right = self.symbols.texts[self.ix(r)].clone();
                    self.heap.push(Entry { count: n, pair: p, left, right });
                }
                None => {}
            }
        }
        touched.clear();
        self.touched = touched;
    }

    /// The best pair: the largest count, ties to the smallest `(left, right)`.
    fn best(&mut self) -> Option<(u64, u64)> {
        while let Some(e) = self.heap.pop() {
            if self.pairs.get(&e.pair) == Some(&e.count) {
                return Some((e.pair, e.count));
            }
        }
        None
    }
}

/// Picky BPE on `units` (symbol ids of `symbols`, with counts; ids below `symbols.next_id()` at
/// the start are the alphabet and never removed). New tokens are added to `symbols`, removed ones
/// included (a removed token keeps its symbol id: a restore reuses it).
pub fn learn_picky(units: Vec<(Vec<u32>, u64)>, symbols: &mut Symbols, params: &PickyParams) -> Picky {
    let first_learned = symbols.next_id();
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
        touched: Vec::new(),
        stamp: vec![0; n],
        round: 0,
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

    // per learned token: present, and the parts it was first made of
    let mut present: Vec<bool> = Vec::new();
    let mut made: Vec<[u32; 2]> = Vec::new();
    let mut order: Vec<u32> = Vec::new();
    let mut events = Vec::new();
    let stop = loop {
        if order.len() as u64 >= params.new_rows {
            break Stop::Size;
        }
        let Some((p, count)) = st.best() else {
            break Stop::NoPairs;
        };
        if count < params.min_count {
            break Stop::MinCount;
        }
        let (a, b) = unpack(p);
        let text = st.symbols.join(a, b);
        let c = match st.symbols.index.get(text.as_slice()) {
            Some(&c) => c,
            None => {
                let len = st.symbols.len(a) + st.symbols.len(b);
                let c = st.symbols.push(text, len);
                st.grow();
                present.push(false);
                made.push([a, b]);
                c
            }
        };
        if c >= first_learned {
            let k = (c - first_learned) as usize;
            if !present[k] {
                present[k] = true;
                order.push(c);
            }
        }
        let before = st.freq[st.ix(c)];
        st.merge(a, b, c);
        events.push(PickyEvent::Merge([a, b, c]));
        let f_p = st.freq[st.ix(c)] - before;
        let checks: &[u32] = if a == b { &[a] } else { &[a, b] };
        for &x in checks {
            if x < first_learned || !present[(x - first_learned) as usize] {
                continue;
            }
            let times = (a == x) as u64 + (b == x) as u64;
            let f_t = st.freq[st.ix(x)] + f_p * times;
            if f_t == 0 || (f_p as f64) / (f_t as f64) < params.threshold {
                continue;
            }
            present[(x - first_learned) as usize] = false;
            order.retain(|&t| t != x);
            let parts = walk(x, first_learned, &present, &made);
            st.split(x, &parts);
            events.push(PickyEvent::Remove { token: x, parts });
        }
        st.push_touched();
    };
    Picky {
        events,
        present: order,
        stop,
        units: st.units,
    }
}

/// The tokens a removed `x` splits into: its parts, a removed part split in turn.
fn walk(x: u32, first_learned: u32, present: &[bool], made: &[[u32; 2]]) -> Vec<u32> {
    let mut out = Vec::new();
    for &p in &made[(x - first_learned) as usize] {
        if p < first_learned || present[(p - first_learned) as usize] {
            out.push(p);
        } else {
            out.extend(walk(p, first_learned, present, made));
        }
    }
    out
}

/// A unit's tokens: `syms`, then every event in order (the definition; O(events × length)).
pub fn replay_events(syms: &[u32], events: &[PickyEvent]) -> Vec<u32> {
    let mut toks = syms.to_vec();
    for e in events {
        match e {
            PickyEvent::Merge([a, b, c]) => {
                let mut out = Vec::with_capacity(toks.len());
                let mut i = 0;
                while i < toks.len() {
                    if i + 1 < toks.len() && toks[i] == *a && toks[i + 1] == *b {
                        out.push(*c);
                        i += 2;
                    } else {
                        out.push(toks[i]);
                        i += 1;
                    }
                }
                toks = out;
            }
            PickyEvent::Remove { token, parts } => {
                let mut out = Vec::with_capacity(toks.len() + parts.len());
                for &t in &toks {
                    if t == *token {
                        out.extend_from_slice(parts);
                    } else {
                        out.push(t);
                    }
                }
                toks = out;
            }
        }
    }
    toks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbols(alphabet: &[&str]) -> Symbols {
        let mut s = Symbols::new(0, b"");
        for a in alphabet {
            s.push(a.as_bytes().to_vec(), 1);
        }
        s
    }

    fn spell(s: &Symbols, word: &str) -> Vec<u32> {
        word.chars()
            .map(|c| s.index[c.to_string().as_bytes()])
            .collect()
    }

    fn text(s: &Symbols, t: u32) -> String {
        String::from_utf8(s.text(t).to_vec()).unwrap()
    }

    /// The reference module's worked case: units `abc` x5, `ab` x1, `bd` x2, two learned
    /// tokens, min_count 1. After `ab + c`, IoS(ab) = 5/6 (merged 5 times, a token 6 times before).
    #[test]
    fn worked_case() {
        for (threshold, vocab, events) in [
            (0.8, vec!["abc", "bd"], "+ab +abc -ab +bd"),
            (5.0 / 6.0, vec!["abc", "bd"], "+ab +abc -ab +bd"),
            (0.9, vec!["ab", "abc"], "+ab +abc"),
        ] {
            let mut s = symbols(&["a", "b", "c", "d"]);
            let units = vec![
                (spell(&s, "abc"), 5),
                (spell(&s, "ab"), 1),
                (spell(&s, "bd"), 2),
            ];
            let params = PickyParams { new_rows: 2, min_count: 1, threshold };
            let out = learn_picky(units, &mut s, &params);
            let got: Vec<String> = out.present.iter().map(|&t| text(&s, t)).collect();
            assert_eq!(got, vocab, "threshold {threshold}");
            let ev: Vec<String> = out
                .events
                .iter()
                .map(|e| match e {
                    PickyEvent::Merge([_, _, c]) => format!("+{}", text(&s, *c)),
                    PickyEvent::Remove { token, .. } => format!("-{}", text(&s, *token)),
                })
                .collect();
            assert_eq!(ev.join(" "), events);
            assert_eq!(out.stop, Stop::Size);
            // training's segmentation is the replay of the events
            for (word, unit) in ["abc", "ab", "bd"].iter().zip(&out.units) {
                assert_eq!(&replay_events(&spell(&s, word), &out.events), unit);
            }
        }
        // encoding "abd": ab d -> (remove ab) a b d -> a bd
        let mut s = symbols(&["a", "b", "c", "d"]);
        let units = vec![(spell(&s, "abc"), 5), (spell(&s, "ab"), 1), (spell(&s, "bd"), 2)];
        let params = PickyParams { new_rows: 2, min_count: 1, threshold: 0.8 };
        let out = learn_picky(units, &mut s, &params);
        let enc: Vec<String> = replay_events(&spell(&s, "abd"), &out.events)
            .iter()
            .map(|&t| text(&s, t))
            .collect();
        assert_eq!(enc, ["a", "bd"]);
    }
}
