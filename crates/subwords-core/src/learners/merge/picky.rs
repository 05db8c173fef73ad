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

/// A candidate pair in a text-ordered heap (Picky BPE and parity-aware BPE): ties go to the
/// smaller pieces by bytes, as the references break them.
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

/// The units, pair counts and token counts under merges and removals (Picky BPE's, and
/// BoundlessBPE's regular merges and deletions, `learners/superword/boundless.rs`).
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
    /// takes them; 0 for Picky BPE). An entry is pushed when a count rises to it.
    pub(crate) floor: u64,
    /// The heap's size after its last sweep of stale entries.
    heap_mark: usize,
}

impl<'a> State<'a> {
    /// The state of `units` (symbol ids of `symbols`, with counts), every pair counted and on
    /// the heap.
    pub(crate) fn new(units: Vec<(Vec<u32>, u64)>, symbols: &'a mut Symbols) -> Self {
        Self::with_floor(units, symbols, 0)
    }

    /// [`State::new`] where pairs counted below `floor` get no heap entry.
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

/// Picky BPE on `units` (symbol ids of `symbols`, with counts; ids below `symbols.next_id()` at
/// the start are the alphabet and never removed). New tokens are added to `symbols`, removed ones
/// included (a removed token keeps its symbol id: a restore reuses it).
pub fn learn_picky(
    units: Vec<(Vec<u32>, u64)>,
    symbols: &mut Symbols,
    params: &PickyParams,
) -> Picky {
    let first_learned = symbols.next_id();
    let mut st = State::new(units, symbols);

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
    Picky { events, present: order, stop, units: st.units }
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
        word.chars().map(|c| s.index[c.to_string().as_bytes()]).collect()
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
            let units = vec![(spell(&s, "abc"), 5), (spell(&s, "ab"), 1), (spell(&s, "bd"), 2)];
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
        let enc: Vec<String> =
            replay_events(&spell(&s, "abd"), &out.events).iter().map(|&t| text(&s, t)).collect();
        assert_eq!(enc, ["a", "bd"]);
    }
}

// ------------------------------------------------------------------ options, model, encoding

/// Checks `picky=` against the rest of the options (called from [`TrainOptions::validate`]).
pub fn validate(opts: &crate::options::TrainOptions) -> crate::error::Result<()> {
    use crate::error::Error;
    use crate::options::ModelKind;
    use crate::spelling::Scheme;
    let Some(t) = opts.picky else { return Ok(()) };
    if !(t > 0.0 && t <= 1.0) {
        return Err(Error::Option(format!(
            "picky={t}: the IoS threshold is a share of a token's uses, in (0, 1] (the paper uses 0.6 to 0.9)"
        )));
    }
    if opts.model != ModelKind::Bpe {
        return Err(Error::Option(
            "picky applies only to model='bpe': it removes tokens a BPE merge left behind".into(),
        ));
    }
    if opts.superword_at.is_some() {
        return Err(Error::Option(
            "picky does not take superword_at: the paper's removals are defined for one merge stage within units".into(),
        ));
    }
    if opts.spelling == Scheme::Continuation {
        return Err(Error::Option(
            "picky does not take spelling='continuation' yet: its model file cannot mark removed word-start pieces; use end, front or bytes".into(),
        ));
    }
    if opts.max_piece_length.is_some() {
        return Err(Error::Option(
            "picky does not take max_piece_length yet: its learner has no length limit".into(),
        ));
    }
    if opts.pad_to_multiple.is_some() {
        return Err(Error::Option(
            "picky does not take pad_to_multiple yet: the removed tokens' ids follow the rows"
                .into(),
        ));
    }
    Ok(())
}

/// Picky BPE on the engine's flat units: each unit is cut at symbols outside the alphabet (they
/// take part in no pair), then [`learn_picky`].
/// Also returns Σ count × pieces of the units afterwards.
pub fn learn_flat(flat: &super::Flat, symbols: &mut Symbols, params: &PickyParams) -> (Picky, u64) {
    let mut units = Vec::new();
    let mut total = 0u64;
    for m in &flat.meta {
        let syms = &flat.syms[m.start()..m.start() + m.len()];
        total += m.count * m.len() as u64;
        for run in syms.split(|&s| s == super::NO_SYMBOL) {
            if run.len() > 1 && m.count > 0 {
                units.push((run.to_vec(), m.count));
            }
        }
    }
    let before: Vec<(u64, u64)> = units.iter().map(|(u, c)| (u.len() as u64, *c)).collect();
    let out = learn_picky(units, symbols, params);
    for ((len, c), u) in before.iter().zip(&out.units) {
        total -= c * (len - u.len() as u64);
    }
    (out, total)
}

/// A trained Picky model's events as an encoder replays them. Ids below `rows` are the model's
/// rows; ids from `rows` on are removed tokens (`hidden`), which exist only inside a replay.
#[derive(Clone, Debug)]
pub struct PickyReplay {
    pub events: Vec<PickyEvent>,
    pub rows: u32,
    /// The texts of the removed tokens, id `rows + k`.
    pub hidden: Vec<Vec<u8>>,
    merge_at: Map<u64, Vec<(u32, u32)>>,
    remove_at: Map<u32, Vec<u32>>,
    /// Each id's length in alphabet symbols (1 for ids no merge makes).
    lengths: Map<u32, u32>,
}

/// One step as a model file or the pipeline states it: a merge `(left, right, result)` or a
/// removal of a token (its parts follow from the steps before).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Merge(u32, u32, u32),
    Remove(u32),
}

impl PickyReplay {
    /// Checks the steps and derives each removal's parts: a merge joins tokens present at that
    /// point; a removal removes a present learned token; at the end every learned row is
    /// present and every hidden id is not. `learned(id)`: whether a row is a learned row.
    pub fn new(
        steps: &[Step],
        rows: u32,
        hidden: Vec<Vec<u8>>,
        learned: impl Fn(u32) -> bool,
    ) -> std::result::Result<Self, String> {
        Self::with_given(steps, rows, hidden, learned, |_| false)
    }

    /// [`PickyReplay::new`] where the learned rows `given(id)` may be present at the end
    /// without a merge making them (BoundlessBPE's superwords, joined outside the replay).
    pub fn with_given(
        steps: &[Step],
        rows: u32,
        hidden: Vec<Vec<u8>>,
        learned: impl Fn(u32) -> bool,
        given: impl Fn(u32) -> bool,
    ) -> std::result::Result<Self, String> {
        let total = rows as usize + hidden.len();
        let is_learned = |x: u32| (x as usize) < total && (x >= rows || learned(x));
        let mut present = vec![false; total];
        for (x, p) in present.iter_mut().enumerate() {
            *p = !is_learned(x as u32);
        }
        let mut made: Map<u32, [u32; 2]> = Map::default();
        let mut lengths: Map<u32, u32> = Map::default();
        let len_of = |l: &Map<u32, u32>, x: u32| l.get(&x).copied().unwrap_or(1);
        let mut events = Vec::with_capacity(steps.len());
        let mut merge_at: Map<u64, Vec<(u32, u32)>> = Map::default();
        let mut remove_at: Map<u32, Vec<u32>> = Map::default();
        for (i, &s) in steps.iter().enumerate() {
            match s {
                Step::Merge(a, b, c) => {
                    for x in [a, b] {
                        if x as usize >= total || !present[x as usize] {
                            return Err(format!("event {i}: merge of a token not present then"));
                        }
                    }
                    if !is_learned(c) {
                        return Err(format!(
                            "event {i}: a merge must make a learned or removed token"
                        ));
                    }
                    let joined = len_of(&lengths, a) + len_of(&lengths, b);
                    match made.get(&c) {
                        Some(_) if lengths[&c] != joined => {
                            return Err(format!(
                                "event {i}: the merge does not make its token's length"
                            ));
                        }
                        Some(_) => {}
                        None => {
                            made.insert(c, [a, b]);
                            lengths.insert(c, joined);
                        }
                    }
                    present[c as usize] = true;
                    merge_at.entry(pack(a, b)).or_default().push((i as u32, c));
                    events.push(PickyEvent::Merge([a, b, c]));
                }
                Step::Remove(x) => {
                    if !is_learned(x) || !present[x as usize] || !made.contains_key(&x) {
                        return Err(format!("event {i}: removal of a token not present then"));
                    }
                    present[x as usize] = false;
                    let parts = walk_ids(x, &made, &present);
                    remove_at.entry(x).or_default().push(i as u32);
                    events.push(PickyEvent::Remove { token: x, parts });
                }
            }
        }
        for x in 0..total as u32 {
            if is_learned(x) && !given(x) && present[x as usize] != (x < rows) {
                return Err(if x < rows {
                    format!("learned row {x} is not present after the events")
                } else {
                    format!("removed token {} is still present after the events", x - rows)
                });
            }
        }
        Ok(PickyReplay { events, rows, hidden, merge_at, remove_at, lengths })
    }

    /// The steps back (for the model file).
    pub fn steps(&self) -> Vec<Step> {
        self.events
            .iter()
            .map(|e| match e {
                PickyEvent::Merge([a, b, c]) => Step::Merge(*a, *b, *c),
                PickyEvent::Remove { token, .. } => Step::Remove(*token),
            })
            .collect()
    }

    /// How many merge events there are.
    pub fn merges(&self) -> usize {
        self.events.iter().filter(|e| matches!(e, PickyEvent::Merge(_))).count()
    }

    fn next_at(list: &[u32], cur: u32) -> Option<u32> {
        list.get(list.partition_point(|&e| e < cur)).copied()
    }

    /// Replays the events on one run of symbols (`spans`, if given, are merged alongside).
    /// O(n² log e) for a run of n symbols: each applied event rescans the run.
    pub fn replay(&self, syms: &mut Vec<u32>, spans: Option<&mut Vec<(u32, u32)>>) {
        // each token's count of alphabet symbols, to cut a split token's span
        let mut cover: Vec<u32> = vec![1; syms.len()];
        let base: Option<Vec<(u32, u32)>> = spans.as_deref().cloned();
        let mut cur = 0u32;
        loop {
            let mut best = u32::MAX;
            for w in syms.windows(2) {
                if let Some(list) = self.merge_at.get(&pack(w[0], w[1])) {
                    let at = list.partition_point(|&(e, _)| e < cur);
                    if let Some(&(e, _)) = list.get(at) {
                        best = best.min(e);
                    }
                }
            }
            for &t in syms.iter() {
                if let Some(e) = self.remove_at.get(&t).and_then(|l| Self::next_at(l, cur)) {
                    best = best.min(e);
                }
            }
            if best == u32::MAX {
                break;
            }
            match &self.events[best as usize] {
                PickyEvent::Merge([a, b, c]) => {
                    let (mut w, mut i) = (0, 0);
                    while i < syms.len() {
                        if i + 1 < syms.len() && syms[i] == *a && syms[i + 1] == *b {
                            syms[w] = *c;
                            cover[w] = cover[i] + cover[i + 1];
                            i += 2;
                        } else {
                            syms[w] = syms[i];
                            cover[w] = cover[i];
                            i += 1;
                        }
                        w += 1;
                    }
                    syms.truncate(w);
                    cover.truncate(w);
                }
                PickyEvent::Remove { token, parts } => {
                    let mut out = Vec::with_capacity(syms.len() + parts.len());
                    let mut out_cover = Vec::with_capacity(out.capacity());
                    for (k, &t) in syms.iter().enumerate() {
                        if t == *token {
                            out.extend_from_slice(parts);
                            out_cover.extend(parts.iter().map(|p| self.length(*p)));
                        } else {
                            out.push(t);
                            out_cover.push(cover[k]);
                        }
                    }
                    *syms = out;
                    cover = out_cover;
                }
            }
            cur = best + 1;
        }
        if let (Some(sp), Some(base)) = (spans, base) {
            sp.clear();
            let mut at = 0usize;
            for &c in &cover {
                sp.push((base[at].0, base[at + c as usize - 1].1));
                at += c as usize;
            }
        }
    }

    /// An id's length in alphabet symbols.
    pub fn length(&self, x: u32) -> u32 {
        self.lengths.get(&x).copied().unwrap_or(1)
    }

    /// [`PickyReplay::replay`] on the runs between opaque pieces (which stay as they are);
    /// returns where the opaque pieces are afterwards.
    pub fn replay_around(
        &self,
        syms: &mut Vec<u32>,
        spans: Option<&mut Vec<(u32, u32)>>,
        opaque: &[usize],
    ) -> Vec<usize> {
        let mut out = Vec::with_capacity(syms.len());
        let mut out_spans = Vec::new();
        let mut kept = Vec::with_capacity(opaque.len());
        let (mut k, mut i) = (0, 0);
        while i <= syms.len() {
            let end = if k < opaque.len() { opaque[k] } else { syms.len() };
            let mut run = syms[i..end].to_vec();
            let mut run_sp = spans.as_deref().map(|sp| sp[i..end].to_vec());
            self.replay(&mut run, run_sp.as_mut());
            out.extend_from_slice(&run);
            if let Some(rs) = run_sp {
                out_spans.extend(rs);
            }
            if end < syms.len() {
                kept.push(out.len());
                out.push(syms[end]);
                if let Some(sp) = spans.as_deref() {
                    out_spans.push(sp[end]);
                }
            }
            i = end + 1;
            k += 1;
        }
        *syms = out;
        if let Some(sp) = spans {
            *sp = out_spans;
        }
        kept
    }
}

fn walk_ids(x: u32, made: &Map<u32, [u32; 2]>, present: &[bool]) -> Vec<u32> {
    let mut out = Vec::new();
    for &p in &made[&x] {
        if present[p as usize] {
            out.push(p);
        } else {
            out.extend(walk_ids(p, made, present));
        }
    }
    out
}

/// A run's events in the model's id space: the alphabet's ids (below `first_learned`) stay, the
/// learned tokens present at the end become the rows that follow the alphabet, in the order
/// they were made, and the removed ones the hidden ids after all rows (`rows_after`: the row
/// count). Returns the present tokens' texts in row order, the steps, and the hidden texts.
#[allow(clippy::type_complexity)]
pub fn settle(
    out: &Picky,
    symbols: &Symbols,
    first_learned: u32,
    rows_after: u32,
) -> (Vec<u32>, Vec<Step>, Vec<Vec<u8>>) {
    let n = symbols.next_id();
    let mut present: Vec<u32> = out.present.clone();
    present.sort_unstable();
    let mut map: Map<u32, u32> = Map::default();
    for (k, &t) in present.iter().enumerate() {
        map.insert(t, first_learned + k as u32);
    }
    let mut hidden = Vec::new();
    for t in first_learned..n {
        if let std::collections::hash_map::Entry::Vacant(e) = map.entry(t) {
            e.insert(rows_after + hidden.len() as u32);
            hidden.push(symbols.text(t).to_vec());
        }
    }
    let id = |x: u32| if x < first_learned { x } else { map[&x] };
    let steps = out
        .events
        .iter()
        .map(|e| match e {
            PickyEvent::Merge([a, b, c]) => Step::Merge(id(*a), id(*b), id(*c)),
            PickyEvent::Remove { token, .. } => Step::Remove(id(*token)),
        })
        .collect();
    (present, steps, hidden)
}
