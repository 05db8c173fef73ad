//! The engine: its state ([`Engine`]: the units, the pair index, the heap, WordPiece's symbol
//! counts and deferred bounds, the memory policy's marks) and the merge loop ([`learn`]), which
//! takes the best pair ([`Engine::best`], [`Engine::best_wordpiece`]) and applies it
//! ([`Engine::apply`]: the rewrite, the index's updates, the heap's pushes, compaction).

use std::cmp::Ordering;

use rayon::prelude::*;

use super::heap::{cmp_fraction, key_head, Cand, Order, PairHeap};
use super::index::{
    build_index, count_index, count_index_in_rounds, drop_pairs, place_pairs, PairIndex,
};
use super::scaffold::Marks;
use super::trace::{MergeTrace, TraceRequest, Tracer};
use super::units::{rewrite, split_units, Arena, Delta, Flat, SharedMeta, SharedSyms};
use super::{
    unpack, Compaction, Events, MergeParams, Merged, MinCountRule, Score, Stop, Symbols,
    TieSpelling, Tuning, NO_SYMBOL,
};

/// One run's state. Its invariants are the module's (see the `merge` module header).
pub(super) struct Engine<'a> {
    flat: Flat,
    pub(super) symbols: &'a mut Symbols,
    /// The pair index: `pair -> (count, units holding it)`, one map (one lookup per change).
    /// A pair whose count fell to 0 may stay with stale places only; it is not a candidate.
    pub(super) index: PairIndex,
    /// The index's place lists longer than one id.
    arena: Arena,
    /// The arena's size after it was last built or compacted: it is compacted again once it has
    /// grown enough (new places, moved blocks, stale ids; see [`Compaction`]).
    arena_mark: usize,
    heap: PairHeap,
    /// Under counts, on a large index: only pairs counted at least this often have heap entries
    /// (0: every pair has one). See [`Engine::best`].
    heap_floor: u64,
    /// The heap's size after it was last rebuilt.
    heap_mark: usize,
    max_len: Option<u32>,
    allow: Option<super::PairRule>,
    threads: usize,
    score: Score,
    /// Pairs below this count are not candidates (0: every pair is).
    floor: u64,
    /// Tie keys by symbol (WordPiece: the front-marked spelling; BPE: the texts themselves).
    keys: Vec<Box<[u8]>>,
    /// Their heads ([`key_head`]).
    heads: Vec<u64>,
    tie: TieSpelling,
    /// WordPiece: each symbol's count, everywhere (inside pairs included), and the pairs it is in,
    /// each with an upper bound on its count (see [`WordPieceGroup`]).
    sym_count: Vec<i64>,
    pairs_of: Vec<Vec<(u64, u64)>>,
    /// How much of each list in `pairs_of` is sorted and deduped (its length at its last
    /// expansion, or at the start): a list nothing was appended to since is not sorted again.
    sorted_of: Vec<usize>,
    /// The unsorted tail of a list in `pairs_of` while it is merged into the sorted part.
    tail: Vec<(u64, u64)>,
    /// WordPiece: the symbols whose pairs' re-push is deferred (see [`WordPieceGroup`]): a bound
    /// per symbol (`None`: none deferred) and a max-heap of them (an entry whose bound is no
    /// longer its symbol's is stale and dropped).
    group_of: Vec<Option<(u64, u128)>>,
    groups: std::collections::BinaryHeap<WordPieceGroup>,
    /// The serial rewrite's [`Delta`], kept from merge to merge.
    delta: Delta,
    /// [`Engine::absorb`]'s list of raised pairs, kept from merge to merge (a fresh one grew
    /// through its doublings at every merge).
    raised: Vec<(u64, i64)>,
    /// Whether compaction may drop rarely counted pairs from the index (BPE counts, untraced).
    pub(super) may_drop: bool,
    /// An upper bound on the count of every pair some unit holds and the index does not (0: the
    /// index holds them all). Under a heap floor, compaction drops the pairs counted below
    /// [`Engine::drop_below`] (most pairs of a large table: they are in one or two rare units),
    /// with their place lists. Their counts only fall from then on (a merge's new pairs hold
    /// its new piece; an interned piece's pairs that the index lacks are left out, and this
    /// bound rises by what they gain), so a best pair counted above the bound is still the best
    /// of every pair; when it is not, [`Engine::restore`] counts the index again from the units.
    untracked: u64,
    /// The count of the last merge.
    pub(super) last_count: u64,
    /// The index's size after it was last built or compacted.
    index_mark: usize,
    /// The memory policy's settings.
    tuning: Tuning,
    /// How often the rare paths were taken (returned in [`Merged`]).
    events: Events,
    /// When set, [`Engine::apply`] adds the units it rewrote (Picky BPE's lists of the units
    /// holding a token).
    pub(super) touched: Option<Vec<u32>>,
}

/// WordPiece's deferred re-push. When a merge lowers `count(s)`, every pair holding `s` scores
/// higher. Instead of a fresh heap entry for each of them (thousands for a frequent continuation
/// piece, most never near the top), the merge pushes one entry for the symbol with a bound on the
/// scores of all its pairs, `1 / count(s)`: its pairs are "covered" by that bound. Only when a
/// bound reaches the top of the heap (it ranks above a pair of equal score) are the symbol's pairs
/// visited ([`Engine::best_wordpiece`]): those that score at least the top pair get entries of
/// their own, and the rest stay covered by a new bound, the highest of their scores. Each pair is
/// listed under its symbols with an upper bound on its count, and is looked up only when that
/// bound, over the current `count(s) · count(x)`, reaches the top or exceeds the highest exact
/// score of the rest so far; otherwise it can change neither the pushes nor the new bound. The
/// test is made in `f64` with a margin first (one load and a multiply), exactly only near the
/// limit.
///
/// The invariant of [`Engine::best`] becomes: every live pair has a heap entry at least its true
/// score, or a symbol of it holds a bound at least its true score. A pair entry that is exact and
/// ranks above every bound is then the true maximum, ties included, so the merges are the same.
/// A bound goes stale-high as counts fall (an early expansion, harmless) but never low: the
/// scores of a symbol's pairs rise only when its count falls (the bound is recomputed), when the
/// other symbol's count falls (that symbol gets a bound), or when the pair's count rises (the pair
/// gets its own entry).
///
/// Measured (BERT pre-split English, 6.9 MB, 32k; callgrind instructions of the training thread
/// on 2 threads unless said):
/// * A pair looked up only where its bound could matter: 368 k lookups for 10.7 M visits, 2.57 G
///   -> 2.23 G instructions.
/// * The pass a plain loop with a write index, not `retain_mut`, and a list nothing was appended
///   to not sorted again: 2,095 M -> 1,886 M; the new tail alone sorted and merged into the sorted
///   part from the back, not the stable sort over the list: 1,886 M -> 1,828 M.
/// * Lost: expanding down to half the top's score, to visit a list less often (65% more `perf`
///   samples); keeping the pairs an expansion leaves in a max-heap by score (whitespace-split
///   English, one thread: 5.47 G against 5.03 G); leftover bounds from the listed counts instead
///   of exact ones (one thread: 3.29 G against 3.24 G, 8.6 M visits instead of 6.7 M).
/// * Not tried: sharing an expansion between the threads. The lists are short (the first 40,000
///   expansions: none past 1,023 pairs), a few microseconds of work each.
#[derive(Clone, Copy, Debug)]
struct WordPieceGroup {
    num: u64,
    den: u128,
    sym: u32,
}

impl PartialEq for WordPieceGroup {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for WordPieceGroup {}
impl PartialOrd for WordPieceGroup {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for WordPieceGroup {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_fraction(self.num, self.den, other.num, other.den)
            .then_with(|| other.sym.cmp(&self.sym))
    }
}

/// Whether the arena, `len` words now and `mark` after it was last built or compacted, has grown
/// enough for [`Compaction::Growth`]: once it has doubled (and grown by 64k words), or, from
/// 32 MB, grown by a quarter (its garbage is then a large part of a run's peak, and a compaction
/// is cheap beside the merges that fill it).
#[inline]
pub(super) fn compaction_growth(len: usize, mark: usize) -> bool {
    let growth = if mark >= 1 << 23 { mark / 4 } else { mark };
    len > mark + growth + (1 << 16)
}
/// The largest power of two that at least `keep` of `counts` reach (0 when fewer than that many
/// are given): a heap floor keeping at least that many pairs.
pub(super) fn floor_keeping(counts: impl Iterator<Item = u64>, keep: usize) -> u64 {
    let mut at_least = [0usize; 64];
    for c in counts {
        at_least[63 - c.max(1).leading_zeros() as usize] += 1;
    }
    let mut kept = 0;
    for j in (0..64).rev() {
        kept += at_least[j];
        if kept >= keep {
            return 1 << j;
        }
    }
    0
}

/// Below this many units a merge is rewritten on the calling thread.
pub(super) const PARALLEL_UNITS: usize = 4096;

/// Past this capacity the list of raised pairs is let go after its merge.
const RAISED_KEEP: usize = 1 << 16;

impl<'a> Engine<'a> {
    /// `keep_pairs`: no pair may be dropped from the index (a trace reads every pair; Picky
    /// BPE's removals raise counts, which the dropped-pair bound does not allow for).
    pub(super) fn new(
        flat: Flat,
        symbols: &'a mut Symbols,
        params: &MergeParams,
        keep_pairs: bool,
    ) -> Self {
        let max_len = params.max_piece_length;
        let threads = rayon::current_num_threads().max(1);
        // the place lists are filled below, once the pairs the index keeps are known
        let ids = symbols.base..symbols.next_id();
        let in_rounds =
            params.tuning.count_rounds > 1 && params.score == Score::Count && !keep_pairs;
        let (index, ranks, pre_dropped, counted) = match in_rounds {
            true => count_index_in_rounds(&flat, threads, params.tuning, ids),
            false => {
                let (index, ranks) = count_index(&flat, threads, params.tuning.shards, ids);
                let n = index.len();
                (index, ranks, 0, n)
            }
        };
        let arena = Arena::default();
        let arena_mark = 0;
        let index_mark = index.len();
        let floor = match (params.score, params.min_count_rule) {
            (Score::WordPiece, MinCountRule::Filter) | (Score::CountTimesLength, _) => {
                params.min_count
            }
            _ => 0,
        };
        let keys: Vec<Box<[u8]>> = symbols.texts.iter().map(|t| params.tie.key(t)).collect();
        let heads = keys.iter().map(|k| key_head(k)).collect();
        let mut sym_count = Vec::new();
        let mut pairs_of = Vec::new();
        let mut sorted_of = Vec::new();
        if params.score == Score::WordPiece {
            sym_count = vec![0i64; symbols.texts.len()];
            for m in &flat.meta {
                for &x in &flat.syms[m.start()..m.start() + m.len()] {
                    if x != NO_SYMBOL {
                        sym_count[(x - symbols.base) as usize] += m.count as i64;
                    }
                }
            }
            pairs_of = vec![Vec::new(); symbols.texts.len()];
            let mut ps: Vec<(u64, u64)> =
                index.iter().map(|(&k, v)| (k, v.count.max(0) as u64)).collect();
            ps.sort_unstable();
            for (p, n) in ps {
                let (a, b) = unpack(p);
                pairs_of[(a - symbols.base) as usize].push((p, n));
                if b != a {
                    pairs_of[(b - symbols.base) as usize].push((p, n));
                }
            }
            // each list was filled in pair order, one entry a pair
            sorted_of = pairs_of.iter().map(|l: &Vec<(u64, u64)>| l.len()).collect();
        }
        let mut e = Engine {
            flat,
            symbols,
            index,
            arena,
            arena_mark,
            heap: PairHeap::new(params.score == Score::WordPiece),
            heap_floor: 0,
            heap_mark: 0,
            max_len,
            allow: params.allow.clone(),
            threads,
            score: params.score,
            floor,
            keys,
            heads,
            tie: params.tie.clone(),
            sym_count,
            pairs_of,
            sorted_of,
            tail: Vec::new(),
            group_of: Vec::new(),
            groups: std::collections::BinaryHeap::new(),
            delta: Delta::default(),
            raised: Vec::new(),
            may_drop: params.score == Score::Count && !keep_pairs,
            untracked: 0,
            last_count: 0,
            index_mark,
            tuning: params.tuning,
            events: Events::default(),
            touched: None,
        };
        // a large index starts under the floor its first rebuild would set, so the first heap
        // holds the pairs counted at least it, not every pair; and it drops the pairs counted
        // below what compaction would drop after the first merge, before their place lists are
        // made (SuperBPE's stage two on 100 MB: 2.6 M pairs, most in one span)
        e.untracked = pre_dropped;
        if e.score == Score::Count && !e.heap.wide && counted > 2 * e.tuning.heap_keep {
            let mut top = 0u64;
            let floor = floor_keeping(
                e.index.iter().filter_map(|(&p, _)| e.entry(p)).map(|c| {
                    top = top.max(c.num);
                    c.num
                }),
                e.tuning.heap_keep,
            );
            if floor > 0 {
                e.events.floor_raised += 1;
                e.heap_floor = floor;
            }
            let below = e.drop_below_after(top);
            if below > 1 {
                e.untracked = e.untracked.max(drop_pairs(&mut e.index, below));
            }
        }
        e.arena = place_pairs(&e.flat, &mut e.index, ranks.as_ref());
        if e.tuning.give_back {
            crate::learners::superword::give_back_free_memory();
        }
        e.arena_mark = e.arena.words.len();
        e.index_mark = e.index.len();
        e.rebuild_heap();
        e
    }

    /// The count below which compaction drops a pair from the index (1: none is dropped): under
    /// a heap floor, the floor or a quarter of the last merge's count, whichever is lower, so
    /// that the best count must fall to a quarter before a dropped pair could matter.
    fn drop_below(&self) -> i64 {
        self.drop_below_after(self.last_count)
    }

    /// [`Engine::drop_below`] once a merge counted `last` has been made.
    fn drop_below_after(&self, last: u64) -> i64 {
        if !self.may_drop || self.heap_floor == 0 {
            return 1;
        }
        if let Some(t) = self.tuning.drop_below {
            return t;
        }
        self.heap_floor.min(last / 4).clamp(1, i64::MAX as u64) as i64
    }

    /// Whether the place lists are due for compaction (see [`Tuning::compaction`]).
    fn compaction_due(&self) -> bool {
        let (len, mark) = (self.arena.words.len(), self.arena_mark);
        match self.tuning.compaction {
            Compaction::Growth => compaction_growth(len, mark),
            Compaction::Doubling => len > 2 * mark + (1 << 16),
            Compaction::Quadrupling => len > 4 * mark + (1 << 16),
            Compaction::Eighth => len > mark + mark / 8 + (1 << 16),
            Compaction::Always => len > mark,
            Compaction::Never => false,
        }
    }

    /// Compacts the place lists (and drops the rarely counted pairs, see [`Engine::untracked`]).
    fn compact(&mut self) {
        self.events.compactions += 1;
        let below = self.drop_below();
        let dropped = self.arena.compact(&mut self.index, &self.flat, below);
        self.untracked = self.untracked.max(dropped);
        self.arena_mark = self.arena.words.len();
        self.index_mark = self.index.len();
        if self.tuning.give_back {
            crate::learners::superword::give_back_free_memory();
        }
    }

    /// The index counted again from the units, holding every pair (see [`Engine::untracked`]),
    /// and the heap rebuilt from it.
    fn restore(&mut self) {
        self.events.restores += 1;
        // the old index and lists go first: only one index is alive at a time
        self.index = PairIndex::new(1);
        self.arena = Arena::default();
        let ids = self.symbols.base..self.symbols.next_id();
        let (index, arena) = build_index(&self.flat, self.threads, self.tuning.shards, ids);
        (self.index, self.arena) = (index, arena);
        self.arena_mark = self.arena.words.len();
        self.index_mark = self.index.len();
        self.untracked = 0;
        // the pairs back in the index have no heap entries: a fresh heap from the index
        self.heap.nums.clear();
        self.heap.dens.clear();
        self.rebuild_heap();
    }

    pub(super) fn order(&self) -> Order<'_> {
        Order {
            keys: &self.keys,
            heads: &self.heads,
            base: self.symbols.base,
            joined_first: self.score == Score::WordPiece,
        }
    }

    /// The heap from the live pairs only (dropping every stale entry).
    ///
    /// Under counts it is rebuilt in place: every live pair has at least one entry (see
    /// [`Engine::best`]), so sorting the entries by pair, keeping one per pair, and setting it
    /// to the pair's live count gives exactly the live pairs, without a second array (building a
    /// fresh list of the live pairs next to the old heap was the peak of a run's memory).
    fn rebuild_heap(&mut self) {
        if !self.heap.wide && self.heap.len() > 0 {
            let mut nums = std::mem::take(&mut self.heap.nums);
            // the first entry of each live pair kept, at its live score: the pair's count is
            // negated in the index meanwhile (the index holds positive counts only), so that its
            // later entries go, and restored after. Sorting the entries by pair to find the
            // repeats was 120 M instructions of a 204 M rebuild (15 MB of multilingual text).
            let mut kept = 0;
            let mut left_out: Vec<u64> = Vec::new();
            for r in 0..nums.len() {
                let p = nums[r].1;
                let c = match self.index.get_mut(&p) {
                    Some(v) if v.count > 0 => {
                        v.count = -v.count;
                        -v.count
                    }
                    _ => continue,
                };
                match self.entry_counted(p, c) {
                    Some(en) => {
                        nums[kept] = (en.num, p);
                        kept += 1;
                    }
                    None => left_out.push(p),
                }
            }
            nums.truncate(kept);
            for p in nums.iter().map(|e| e.1).chain(left_out) {
                let v = self.index.get_mut(&p).expect("a negated pair is in the index");
                v.count = -v.count;
            }
            // every live pair counted at least the floor is here, so the `heap_keep`-th largest
            // count of the heap is that of the index: raise the floor to it (never lower)
            // (a floor is kept in counts: only plain counts take one)
            if self.score == Score::Count && nums.len() > 2 * self.tuning.heap_keep {
                let floor = floor_keeping(nums.iter().map(|e| e.0), self.tuning.heap_keep);
                if floor > self.heap_floor {
                    self.events.floor_raised += 1;
                }
                self.heap_floor = self.heap_floor.max(floor);
                let floor = self.heap_floor;
                nums.retain(|e| e.0 >= floor);
            }
            nums.shrink_to_fit();
            let mut heap = PairHeap { nums, dens: Vec::new(), wide: false };
            let order = self.order();
            for i in (0..heap.len() / 2).rev() {
                heap.sift_down(i, &order);
            }
            self.heap_mark = heap.len();
            self.heap = heap;
            return;
        }
        // every live pair gets an exact entry: no symbol's re-push stays deferred (WordPiece)
        self.groups.clear();
        self.group_of.iter_mut().for_each(|g| *g = None);
        let floor = self.heap_floor.max(1) as i64;
        let mut live: Vec<u64> =
            self.index.iter().filter(|(_, v)| v.count >= floor).map(|(&k, _)| k).collect();
        // hash order must not leak: the heap's layout (not its top) would depend on it
        live.sort_unstable();
        let live: Vec<Cand> = live.into_iter().filter_map(|p| self.entry(p)).collect();
        let mut heap = std::mem::take(&mut self.heap);
        heap.rebuild(live, &self.order());
        self.heap_mark = heap.len();
        self.heap = heap;
    }

    /// The current score of a pair: (count, denominator).
    fn score_of(&self, p: u64) -> Option<(u64, u128)> {
        self.score_counted(p, self.index.get(&p)?.count)
    }

    /// The score of pair `p` counted `c` (its count in the index, read by the caller).
    #[inline]
    fn score_counted(&self, p: u64, c: i64) -> Option<(u64, u128)> {
        if c <= 0 || (c as u64) < self.floor {
            return None;
        }
        let (a, b) = unpack(p);
        let den = match self.score {
            Score::Count => 1,
            Score::CountTimesLength => {
                let len = self.symbols.len(a) as u64 + self.symbols.len(b) as u64;
                return Some((c as u64 * len, 1));
            }
            Score::WordPiece => {
                let base = self.symbols.base;
                // counts are never negative: through `u64`, the product is one 64-bit multiply
                self.sym_count[(a - base) as usize] as u64 as u128
                    * self.sym_count[(b - base) as usize] as u64 as u128
            }
        };
        Some((c as u64, den))
    }

    pub(super) fn entry(&self, p: u64) -> Option<Cand> {
        self.entry_counted(p, self.index.get(&p)?.count)
    }

    /// [`Engine::entry`] for pair `p` counted `c` (its count in the index, read by the caller).
    #[inline]
    fn entry_counted(&self, p: u64, c: i64) -> Option<Cand> {
        let (num, den) = self.score_counted(p, c)?;
        let (a, b) = unpack(p);
        if let Some(m) = self.max_len {
            if self.symbols.len(a) + self.symbols.len(b) > m {
                return None;
            }
        }
        if let Some(allow) = &self.allow {
            if !allow(self.symbols.text(a), self.symbols.text(b)) {
                return None;
            }
        }
        Some(Cand { num, den, pair: p })
    }

    /// The best live pair, without removing it.
    ///
    /// Entries are pushed only when a pair's count rises, so every live pair has an entry whose
    /// count is at least its true count. A popped entry that over-states its pair is pushed back
    /// with the true count; one that matches is the true maximum (ties included, since the heap
    /// order breaks ties exactly as the rule does).
    ///
    /// WordPiece scores also rise when a symbol's count falls; there `best_wordpiece` calls this
    /// and also weighs the bounds that cover those pairs (see [`WordPieceGroup`]).
    ///
    /// Under a heap floor (BPE on a large index: most pairs are in one or two units and never
    /// come near the top) the invariant holds for the pairs counted at least the floor, and the
    /// others have no entry. An exact top at least the floor still beats every pair below it;
    /// when no entry is left, the floor is lowered and the pairs from there up are taken from
    /// the index.
    pub(super) fn best(&mut self) -> Option<(u64, u64)> {
        loop {
            let mut heap = std::mem::take(&mut self.heap);
            let mut found = None;
            while let Some(top) = heap.peek() {
                let live = self.score_of(top.pair);
                if live == Some((top.num, top.den)) {
                    found = Some((top.pair, top.num));
                    break;
                }
                let order = self.order();
                match live {
                    Some((num, den)) if num >= self.heap_floor => {
                        heap.replace_top(Cand { num, den, pair: top.pair }, &order)
                    }
                    _ => {
                        heap.pop(&order);
                    }
                }
            }
            self.heap = heap;
            // a pair the index dropped could be counted as much as the best it holds
            if self.untracked > 0 && found.is_none_or(|(_, n)| n <= self.untracked) {
                self.restore();
                continue;
            }
            if found.is_some() || self.heap_floor == 0 {
                return found;
            }
            // every live pair is below the floor (a floor that keeps nothing, under
            // max_piece_length, goes to 0)
            let next = floor_keeping(
                self.index.values().filter(|v| v.count > 0).map(|v| v.count as u64),
                self.tuning.heap_keep,
            );
            self.heap_floor = if next < self.heap_floor { next } else { 0 };
            self.events.floor_lowered += 1;
            self.rebuild_heap();
        }
    }

    /// WordPiece's [`Engine::best`]: the best pair once no deferred bound (see [`WordPieceGroup`])
    /// could hold a better one. A bound at least the exact top's score is expanded (its symbol's
    /// pairs pushed with their scores) and the search starts again.
    fn best_wordpiece(&mut self) -> Option<(u64, u64)> {
        let base = self.symbols.base;
        loop {
            let found = self.best();
            while let Some(g) = self.groups.peek() {
                if self.group_of.get((g.sym - base) as usize).copied().flatten()
                    == Some((g.num, g.den))
                {
                    break;
                }
                self.groups.pop();
            }
            let Some(g) = self.groups.peek().copied() else { return found };
            if found.is_some() {
                let top = self.heap.peek().expect("best() leaves its pair on top");
                if cmp_fraction(g.num, g.den, top.num, top.den) == Ordering::Less {
                    return found;
                }
            }
            // expand the bound, in part: the pairs that score at least the current top get their
            // own entries (one of them may beat it), the rest stay behind a new bound below the
            // top (pushing every pair of a frequent piece was most of the heap's work)
            self.groups.pop();
            let si = (g.sym - base) as usize;
            self.group_of[si] = None;
            let top = if found.is_some() { self.heap.peek().map(|t| (t.num, t.den)) } else { None };
            let mut list = std::mem::take(&mut self.pairs_of[si]);
            // sorted and deduped at its last expansion, then runs of raised pairs appended (each
            // merge's sorted): the stable sort merges those runs, where `sort_unstable` sorted
            // the whole list again at every expansion (9% of the run's instructions). A pair
            // listed twice keeps the larger bound (the later one: its count rose).
            let done = self.sorted_of[si].min(list.len());
            if done < list.len() {
                // the tail alone is sorted (the order of a pair's entries does not matter: the
                // dedup keeps the largest bound), then merged into the sorted part from the back
                let mut tail = std::mem::take(&mut self.tail);
                tail.clear();
                tail.extend_from_slice(&list[done..]);
                tail.sort_unstable_by_key(|e| e.0);
                let (mut i, mut j) = (done, tail.len());
                while j > 0 {
                    let w = i + j - 1;
                    if i > 0 && list[i - 1].0 > tail[j - 1].0 {
                        list[w] = list[i - 1];
                        i -= 1;
                    } else {
                        list[w] = tail[j - 1];
                        j -= 1;
                    }
                }
                self.tail = tail;
                list.dedup_by(|later, kept| {
                    if later.0 == kept.0 {
                        kept.1 = kept.1.max(later.1);
                        true
                    } else {
                        false
                    }
                });
            }
            let mut heap = std::mem::take(&mut self.heap);
            let mut rest: Option<(u64, u128)> = None;
            {
                let order = self.order();
                let sym_count = &self.sym_count;
                let cs = sym_count[si] as f64;
                // the skip test in floating point first: `lim` is a little below `min(top, rest)
                // · count(s)` (relative rounding error under 1e-15, the margin 1e-9), so a pair
                // with `bound < lim · count(x)` scores below both; the exact test decides the rest
                let lim_of = |top: Option<(u64, u128)>, rest: Option<(u64, u128)>| -> f64 {
                    match (top, rest) {
                        (Some((tn, td)), Some((rn, rd))) => {
                            (tn as f64 / td as f64).min(rn as f64 / rd as f64) * cs * (1.0 - 1e-9)
                        }
                        _ => 0.0,
                    }
                };
                let mut lim = lim_of(top, rest);
                // a plain loop with a write index, where `retain_mut` (whose bookkeeping stays in
                // memory for its drop guard) cost as much as the test itself; entries keep their order
                let mut kept = 0;
                for r in 0..list.len() {
                    let mut e = list[r];
                    list[kept] = e;
                    kept += 1;
                    // the pair's score is at most `bound / den`: when that is below the top and
                    // not above the highest score of the rest so far, the pair can neither be
                    // pushed nor raise `rest`, and its count need not be looked up
                    let (x, y) = unpack(e.0);
                    // one of the two is `g.sym`
                    let other = x ^ y ^ g.sym;
                    // (through `i64`: one instruction each way, where `u64 -> f64` takes several)
                    if (e.1 as i64 as f64) < lim * sym_count[(other - base) as usize] as f64 {
                        continue;
                    }
                    let den = sym_count[(x - base) as usize] as u64 as u128
                        * sym_count[(y - base) as usize] as u64 as u128;
                    if let (Some((tn, td)), Some((rn, rd))) = (top, rest) {
                        if cmp_fraction(e.1, den, tn, td) == Ordering::Less
                            && cmp_fraction(e.1, den, rn, rd) != Ordering::Greater
                        {
                            continue;
                        }
                    }
                    let Some(en) = self.entry(e.0) else {
                        kept -= 1;
                        continue;
                    };
                    e.1 = en.num;
                    list[kept - 1] = e;
                    if top.is_none_or(|(n, d)| cmp_fraction(en.num, en.den, n, d) != Ordering::Less)
                    {
                        heap.push(en, &order);
                    } else if rest.is_none_or(|(n, d)| {
                        cmp_fraction(en.num, en.den, n, d) == Ordering::Greater
                    }) {
                        rest = Some((en.num, en.den));
                        lim = lim_of(top, rest);
                    }
                }
                list.truncate(kept);
            }
            self.sorted_of[si] = list.len();
            self.heap = heap;
            self.pairs_of[si] = list;
            if let Some((num, den)) = rest {
                self.group_of[si] = rest;
                self.groups.push(WordPieceGroup { num, den, sym: g.sym });
            }
        }
    }

    /// Joins `pair` into `c` (a new piece unless `interned`) in every unit that holds it and
    /// updates the index.
    pub(super) fn apply(&mut self, pair: u64, c: u32, interned: bool) -> i64 {
        let (a, b) = unpack(pair);
        let mut list: Vec<u32> = match self.index.get_mut(&pair) {
            Some(v) => self.arena.take(v),
            None => Vec::new(),
        };
        // the list is runs of increasing ids (one run per merge that added to it): the stable
        // sort merges the runs, and the walk over the units goes forward through memory
        list.sort();
        list.dedup();
        let ptr = SharedSyms(self.flat.syms.as_mut_ptr());
        let meta = SharedMeta::new(&mut self.flat.meta);
        let track = self.touched.is_some();
        let results: Vec<Delta> = if list.len() < PARALLEL_UNITS || self.threads == 1 {
            let mut d = std::mem::take(&mut self.delta);
            d.track = track;
            rewrite(ptr, meta, &list, a, b, c, &mut d);
            vec![d]
        } else {
            let per = list.len().div_ceil(self.threads);
            list.par_chunks(per)
                .map(|part| {
                    let mut d = Delta::default();
                    d.track = track;
                    rewrite(ptr, meta, part, a, b, c, &mut d);
                    d
                })
                .collect()
        };
        if let Some(t) = self.touched.as_mut() {
            for d in &results {
                t.extend_from_slice(&d.units);
            }
        }
        let (sites, raised) = self.absorb(results, interned);
        self.index.remove(&pair);
        if self.score == Score::WordPiece {
            let base = self.symbols.base;
            // a and b lost `sites` occurrences each, c gained them: every pair of a or b now
            // scores higher, and a bound per symbol covers them (below)
            self.sym_count[(a - base) as usize] -= sites;
            self.sym_count[(b - base) as usize] -= sites;
            let ci = (c - base) as usize;
            if ci >= self.sym_count.len() {
                self.sym_count.resize(ci + 1, 0);
                self.pairs_of.resize(ci + 1, Vec::new());
                self.sorted_of.resize(ci + 1, 0);
            }
            self.sym_count[ci] += sites;
            for &(q, n) in &raised {
                let (x, y) = unpack(q);
                // its count now: an upper bound from here on (a count only rises in a merge,
                // and a raised pair is listed again)
                let n = n.max(0) as u64;
                self.pairs_of[(x - base) as usize].push((q, n));
                if y != x {
                    self.pairs_of[(y - base) as usize].push((q, n));
                }
            }
            if self.group_of.len() < self.sym_count.len() {
                self.group_of.resize(self.sym_count.len(), None);
            }
            // the re-push is deferred (see `WordPieceGroup`): one bound per symbol, `1 / count(s)`,
            // which holds for every pair of `s` without looking at them (a pair's count is at most
            // each of its symbols' counts, so `count(s, x) / (count(s) · count(x)) <= 1 / count(s)`).
            // A frequent piece's bound stays far below the top, so its pairs are never visited
            // until it is merged again; a rare piece's bound is expanded soon, and it has few pairs.
            let both = [a, b];
            for s in &both[..if a == b { 1 } else { 2 }] {
                let si = (s - base) as usize;
                let n = self.sym_count[si];
                self.group_of[si] = (n > 0).then_some((1, n as u128));
                if n > 0 {
                    self.groups.push(WordPieceGroup { num: 1, den: n as u128, sym: *s });
                }
            }
        }
        self.push_raised(raised);
        sites
    }

    /// Takes a rewrite's deltas into the index (counts, new places, new lengths); returns the
    /// sites and the pairs whose count rose (sorted, each once), each with its count now, so
    /// that their heap entries need no second lookup in the index.
    pub(super) fn absorb(
        &mut self,
        mut results: Vec<Delta>,
        interned: bool,
    ) -> (i64, Vec<(u64, i64)>) {
        let mut raised = std::mem::take(&mut self.raised);
        raised.clear();
        let mut sites = 0i64;
        // gains of pairs left out of the index (see `untracked`)
        let mut left_out: Vec<(u64, i64)> = Vec::new();
        for (k, d) in results.iter().enumerate() {
            sites += d.sites;
            for (q, v, places) in d.changes() {
                let (q, v) = (*q, *v);
                if interned && v > 0 && self.untracked > 0 && self.index.get(&q).is_none() {
                    // a pair of an interned piece the index may have dropped: its count is not
                    // known, and it stays out (a new piece's pairs are new, and counted exactly)
                    left_out.push((q, v));
                    continue;
                }
                let e = self.index.entry(q).or_default();
                e.count += v;
                if e.count <= 0 {
                    // gone from every unit: forget it (its place list only holds stale entries;
                    // a pair with new places has a positive count, so `places` is empty here)
                    self.index.remove(&q);
                    continue;
                }
                if v > 0 {
                    raised.push((q, e.count));
                }
                // the places the other threads' deltas add to this pair after these
                let more: usize = if places.is_empty() {
                    0
                } else {
                    results[k + 1..]
                        .iter()
                        .filter_map(|o| o.row_of(q).map(|r| o.changes[r as usize].2.len()))
                        .sum()
                };
                self.arena.extend(e, places, more);
            }
        }
        let several = results.len() > 1;
        if let Some(mut d) = results.pop() {
            d.clear();
            self.delta = d;
        }
        if !left_out.is_empty() {
            self.events.left_out += 1;
            // a pair left out gains at most its largest total gain here
            left_out.sort_unstable();
            let mut most = 0i64;
            let mut i = 0;
            while i < left_out.len() {
                let q = left_out[i].0;
                let mut sum = 0i64;
                while i < left_out.len() && left_out[i].0 == q {
                    sum += left_out[i].1;
                    i += 1;
                }
                most = most.max(sum);
            }
            self.untracked += most as u64;
        }
        // one delta has one row per pair, so each raised pair is listed once with its final
        // count; several deltas may change a pair again after raising it: its count is read
        // back (a pair gone from the index has no entry to push)
        raised.sort_unstable_by_key(|r| r.0);
        if several {
            raised.dedup_by_key(|r| r.0);
            raised.retain_mut(|r| match self.index.get(&r.0) {
                Some(v) => {
                    r.1 = v.count;
                    true
                }
                None => false,
            });
        }
        (sites, raised)
    }

    /// Splits every occurrence of `x` into `parts` in the units of `list` (Picky BPE's removal,
    /// [`super::picky`]) and updates the index as a merge does; returns Σ count × occurrences and
    /// the units changed.
    pub(super) fn split(&mut self, x: u32, parts: &[u32], mut list: Vec<u32>) -> (i64, Vec<u32>) {
        list.sort_unstable();
        list.dedup();
        let mut d = std::mem::take(&mut self.delta);
        let mut changed = Vec::new();
        let occurrences = split_units(&mut self.flat, &list, x, parts, &mut d, &mut changed);
        if self.untracked > 0 {
            self.recount_gained(&d);
        }
        let (_, raised) = self.absorb(vec![d], false);
        self.push_raised(raised);
        (occurrences, changed)
    }

    /// Before a split's delta is taken in, when the index may have dropped pairs: each pair the
    /// split gains that the index lacks (dropped, or merged away) is counted again over the
    /// units, which the split has rewritten, with its places, and put in the index at its count
    /// before the split's gain, so that [`Engine::absorb`] leaves it exact. (A split raises
    /// counts, which the bound on dropped pairs does not allow for.) One pass over the units,
    /// a pair looked up only where both symbols are in one of the pairs.
    fn recount_gained(&mut self, d: &Delta) {
        let gained: Vec<(u64, i64)> = d
            .changes()
            .iter()
            .filter(|(q, v, _)| *v > 0 && self.index.get(q).is_none())
            .map(|(q, v, _)| (*q, *v))
            .collect();
        if gained.is_empty() {
            return;
        }
        let base = self.symbols.base;
        let width = (self.symbols.next_id() - base) as usize;
        let (mut left, mut right) = (vec![false; width], vec![false; width]);
        let mut found: crate::hash::Map<u64, (i64, Vec<u32>)> = Default::default();
        for &(q, _) in &gained {
            let (a, b) = unpack(q);
            left[(a - base) as usize] = true;
            right[(b - base) as usize] = true;
            found.insert(q, (0, Vec::new()));
        }
        let flat = &self.flat;
        for wi in 0..flat.units() {
            let count = flat.meta[wi].count as i64;
            for w in flat.unit(wi).windows(2) {
                if w[0] == NO_SYMBOL
                    || w[1] == NO_SYMBOL
                    || !left[(w[0] - base) as usize]
                    || !right[(w[1] - base) as usize]
                {
                    continue;
                }
                if let Some(e) = found.get_mut(&super::pack(w[0], w[1])) {
                    e.0 += count;
                    if e.1.last() != Some(&(wi as u32)) {
                        e.1.push(wi as u32);
                    }
                }
            }
        }
        for (q, v) in gained {
            let (count, units) = found.remove(&q).unwrap_or_default();
            let e = self.index.entry(q).or_default();
            e.count = count - v;
            self.arena.extend(e, &units, 0);
        }
    }

    /// The row of `a` joined to `b`: its id, and whether it is new (its tie key added).
    pub(super) fn piece(&mut self, a: u32, b: u32) -> (u32, bool) {
        let text = self.symbols.join(a, b);
        match self.symbols.index.get(text.as_slice()) {
            Some(&c) => (c, false),
            None => {
                let len = self.symbols.len(a) + self.symbols.len(b);
                let key = self.tie.key(&text);
                self.heads.push(key_head(&key));
                self.keys.push(key);
                (self.symbols.push(text, len), true)
            }
        }
    }

    /// The row of `text` (spelled `len` symbols of the alphabet): its id, and whether it is new
    /// (its tie key added). [`Engine::piece`] for a text that is not one pair's join (BoundlessBPE's
    /// superwords).
    pub(super) fn intern(&mut self, text: Vec<u8>, len: u32) -> (u32, bool) {
        match self.symbols.index.get(text.as_slice()) {
            Some(&c) => (c, false),
            None => {
                let key = self.tie.key(&text);
                self.heads.push(key_head(&key));
                self.keys.push(key);
                (self.symbols.push(text, len), true)
            }
        }
    }

    /// Unit `i`'s symbols now.
    pub(super) fn unit(&self, i: usize) -> &[u32] {
        self.flat.unit(i)
    }

    /// The units as the merges left them.
    pub(super) fn into_flat(self) -> Flat {
        self.flat
    }

    /// Heap entries for the pairs whose count rose (sorted, deduped), then the memory policy:
    /// the heap rebuilt once stale entries match the live ones, the place lists compacted once
    /// they have grown enough.
    pub(super) fn push_raised(&mut self, raised: Vec<(u64, i64)>) {
        {
            let mut heap = std::mem::take(&mut self.heap);
            let order = self.order();
            for &(q, n) in &raised {
                if let Some(en) = self.entry_counted(q, n) {
                    if en.num >= self.heap_floor {
                        heap.push(en, &order);
                    }
                }
            }
            self.heap = heap;
        }
        if raised.capacity() <= RAISED_KEEP {
            self.raised = raised;
        }
        // stale entries pile up (a pair whose count rose several times has one entry per rise;
        // WordPiece re-pushes every pair of the merged symbols): rebuild from the live pairs
        // once the stale ones match them in number (the index's size bounds the live pairs)
        if self.heap.len() > 2 * self.index.len() + (1 << 12)
            || (!self.heap.wide
                && self.heap.len()
                    > self.tuning.heap_growth * self.heap_mark.max(self.tuning.heap_keep))
        {
            self.rebuild_heap();
        }
        // the place lists grow with the merges (each rewritten unit lists its new pairs, and
        // stays listed under the pairs it lost): pack them once they have doubled
        if self.compaction_due() {
            self.compact();
        } else if self.index.len() > 2 * self.index_mark + (1 << 16) && self.drop_below() > 1 {
            // the rarely counted pairs, once the index has doubled (see `untracked`); their
            // lists wait for the next compaction
            let below = self.drop_below();
            let dropped = drop_pairs(&mut self.index, below);
            self.untracked = self.untracked.max(dropped);
            self.index_mark = self.index.len();
            if self.tuning.give_back {
                crate::learners::superword::give_back_free_memory();
            }
        }
    }

    pub(super) fn pieces(&self) -> u64 {
        self.flat.pieces()
    }
}

/// Runs the merge loop. `symbols` must already hold every symbol the units use.
///
/// Given a request in `trace`, it also records every step (and takes the forced choices asked for); the
/// check is made once per call, so an untraced run does no extra work per merge.
pub fn learn(
    units: Flat,
    symbols: &mut Symbols,
    params: &MergeParams,
    progress: Option<&crate::progress::Progress>,
) -> Merged {
    learn_traced(units, symbols, params, progress, &mut None)
}

/// [`learn`], recording every step when `trace` holds a request (the trace comes back in the slot).
pub fn learn_traced(
    units: Flat,
    symbols: &mut Symbols,
    params: &MergeParams,
    progress: Option<&crate::progress::Progress>,
    trace: &mut Option<(TraceRequest, MergeTrace)>,
) -> Merged {
    run(units, symbols, params, progress, trace, None)
}

/// Scaffold-BPE's merge loop ([`super::scaffold`]): the engine's, with the marks kept beside it;
/// `first_learned` is the first id the merges make.
pub fn learn_scaffold(
    units: Flat,
    symbols: &mut Symbols,
    params: &MergeParams,
    progress: Option<&crate::progress::Progress>,
    first_learned: u32,
) -> (Merged, Marks) {
    let mut marks = Marks::new(first_learned);
    let out = run(units, symbols, params, progress, &mut None, Some(&mut marks));
    (out, marks)
}

fn run(
    units: Flat,
    symbols: &mut Symbols,
    params: &MergeParams,
    progress: Option<&crate::progress::Progress>,
    trace: &mut Option<(TraceRequest, MergeTrace)>,
    mut scaffold: Option<&mut Marks>,
) -> Merged {
    let mut winner_failed = None;
    if let Some(p) = progress {
        p.start(crate::progress::Phase::Merging, params.new_rows);
    }
    // a trace lists ties and forced pairs from the index: it keeps every pair
    let mut engine = Engine::new(units, symbols, params, trace.is_some());
    let mut tracer = Tracer::take(&engine, trace);
    let mut merges = Vec::new();
    let mut new_rows = 0u64;
    let stop = loop {
        // Scaffold-BPE counts the rows that are not scaffold
        if new_rows - scaffold.as_ref().map_or(0, |m| m.marked) >= params.new_rows {
            break Stop::Size;
        }
        let forced = match tracer.as_mut() {
            Some(t) => match t.forced_pair(&engine) {
                Ok(f) => f,
                Err(()) => break Stop::NoPairs,
            },
            None => None,
        };
        let best = forced.or_else(|| {
            if params.score == Score::WordPiece {
                engine.best_wordpiece()
            } else {
                engine.best()
            }
        });
        if let Some(m) = scaffold.as_deref_mut() {
            if m.unmark_head(best.map(|(_, n)| n), params.min_count) {
                continue;
            }
        }
        let Some((pair, count)) = best else {
            // WordPiece's filter: pairs may remain that are all below min_count
            let floor = engine.floor as i64;
            break if engine.index.values().any(|v| v.count > 0 && v.count < floor) {
                Stop::MinCount
            } else {
                Stop::NoPairs
            };
        };
        if count < params.min_count {
            if params.score == Score::WordPiece {
                let (a, b) = unpack(pair);
                winner_failed = Some((a, b, count));
            }
            break Stop::MinCount;
        }
        let ties = tracer.as_ref().map(|t| t.ties_of(&engine, pair));
        let (a, b) = unpack(pair);
        let (c, is_new) = engine.piece(a, b);
        new_rows += is_new as u64;
        merges.push([a, b, c]);
        let score = engine.score_of(pair).map(|(_, d)| d).unwrap_or(1);
        engine.last_count = count;
        let sites = engine.apply(pair, c, !is_new);
        if let Some(m) = scaffold.as_deref_mut() {
            let head = engine.best().map(|(_, n)| n);
            m.after_merge([a, b, c], sites, head, engine.symbols);
        }
        if let Some(t) = tracer.as_mut() {
            t.record(
                &engine,
                [a, b, c],
                count,
                score,
                ties.unwrap_or_default(),
                forced.is_some(),
                is_new,
                sites,
                new_rows,
            );
        }
        if let Some(p) = progress {
            p.set(new_rows);
        }
    };
    let pieces_after = engine.pieces();
    if let Some(t) = tracer {
        t.put_back(trace);
    }
    Merged { merges, new_rows, stop, pieces_after, winner_failed, events: engine.events }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded xorshift64 stream.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Units of 2 to 9 letters from a 5-letter alphabet (seeded), Zipf-like counts.
    fn corpus(units: usize) -> (Flat, Symbols) {
        let mut symbols = Symbols::new(0, b"");
        for c in b"abcde" {
            symbols.push(vec![*c], 1);
        }
        let mut flat = Flat::default();
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        for k in 0..units {
            let n = 2 + (next() % 8) as usize;
            let u: Vec<u32> = (0..n).map(|_| (next() % 5) as u32).collect();
            flat.push(&u, 1 + 1000 / (k as u64 + 1));
        }
        (flat, symbols)
    }

    /// What a run decides: the merges, the pieces after them, and the symbol texts.
    type Outcome = (Vec<[u32; 3]>, u64, Vec<Vec<u8>>);

    fn run(params: &MergeParams, tuning: Tuning) -> (Outcome, Events) {
        run_on(corpus(3000), params, tuning)
    }

    /// The default tuning with the place lists compacted as `compaction` says.
    fn compacting(compaction: Compaction) -> Tuning {
        Tuning { compaction, ..Tuning::default() }
    }

    /// `corpus(3000)` and units that also hold the pieces `ab`, `ba` and `cd` as letters of
    /// their own, so that merging `(a, b)` makes a piece that exists (an interned merge) whose
    /// pairs some units already hold.
    fn corpus_with_joined() -> (Flat, Symbols) {
        let (mut flat, mut symbols) = corpus(3000);
        for t in [&b"ab"[..], b"ba", b"cd"] {
            symbols.push(t.to_vec(), 2);
        }
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for k in 0..1500u64 {
            let n = 2 + (next() % 8) as usize;
            let u: Vec<u32> = (0..n).map(|_| (next() % 8) as u32).collect();
            flat.push(&u, 1 + 300 / (k + 1));
        }
        (flat, symbols)
    }

    fn run_on(
        (flat, mut symbols): (Flat, Symbols),
        params: &MergeParams,
        tuning: Tuning,
    ) -> (Outcome, Events) {
        let params = MergeParams { tuning, ..params.clone() };
        let out = learn(flat, &mut symbols, &params, None);
        let texts = symbols.texts.iter().map(|t| t.to_vec()).collect();
        ((out.merges, out.pieces_after, texts), out.events)
    }

    #[test]
    fn a_heap_floor_changes_no_merge() {
        // with room for 16 pairs the heap runs under a floor from its first rebuild, raises
        // it, and runs out of entries (the floor lowered, the pairs taken from the index)
        let never = compacting(Compaction::Never);
        let params = MergeParams::bpe(600, 1, None);
        let (all, e) = run(&params, never);
        assert_eq!((e.floor_raised, e.floor_lowered), (0, 0), "the default keeps every pair");
        let (floored, e) = run(&params, Tuning { heap_keep: 16, ..never });
        let (raised, lowered) = (e.floor_raised, e.floor_lowered);
        assert!(raised >= 1 && lowered >= 2, "floors raised {raised}, lowered {lowered}");
        assert!(all.0.len() > 100, "the corpus gives room for many merges: {}", all.0.len());
        assert_eq!(all, floored);
        // rebuilt at four times its size, not two: the same merges
        let (fewer, e4) = run(&params, Tuning { heap_keep: 16, heap_growth: 4, ..never });
        assert!(e4.floor_raised >= 1, "floors raised {}", e4.floor_raised);
        assert_eq!(all, fewer);
        // and under max_piece_length, where some pairs are never candidates
        let params = MergeParams::bpe(600, 1, Some(3));
        let (all, _) = run(&params, never);
        let (floored, e) = run(&params, Tuning { heap_keep: 16, ..never });
        assert!(e.floor_raised >= 1, "floors raised {}", e.floor_raised);
        assert_eq!(all, floored);
    }

    #[test]
    fn dropping_rare_pairs_from_the_index_changes_no_merge() {
        // under a floor (room for 16 pairs) and compacting at every chance, the index drops the
        // pairs below the rule's count or below 8 (interned pieces' pairs left out, the index
        // counted again when a dropped pair could be the best), or below every count (counted
        // again before nearly every merge)
        for max_len in [None, Some(3)] {
            let params = MergeParams::bpe(600, 1, max_len);
            let (all, e) = run_on(corpus_with_joined(), &params, compacting(Compaction::Never));
            assert_eq!(e.restores, 0, "the default drops no pair here");
            assert!(all.0.len() > 100, "the corpus gives room for many merges: {}", all.0.len());
            // (8 letters, then a row per new piece)
            assert!(all.2.len() - 8 < all.0.len(), "some merges are interned");
            for below in [None, Some(8), Some(i64::MAX)] {
                let tuning = Tuning {
                    compaction: Compaction::Always,
                    heap_keep: 16,
                    drop_below: below,
                    ..Tuning::default()
                };
                let (dropped, e) = run_on(corpus_with_joined(), &params, tuning);
                let (restores, left_out) = (e.restores, e.left_out);
                eprintln!(
                    "max_len {max_len:?} below {below:?}: {restores} restores, {left_out} merges \
                     left pairs out"
                );
                assert_eq!(all, dropped, "max_len {max_len:?}, below {below:?}");
                if below == Some(i64::MAX) {
                    assert!(restores > 20, "restores: {restores}");
                }
                if below == Some(8) && max_len.is_none() {
                    assert!(left_out > 0, "an interned piece's pairs were left out");
                }
            }
        }
    }

    /// Units over 600 symbols (so the index is a map, not the dense table): 20,000 units of 2
    /// to 9 symbols, most met once, a few hundred frequent.
    fn wide_corpus() -> (Flat, Symbols) {
        let mut symbols = Symbols::new(0, b"");
        for k in 0..600u32 {
            symbols.push(k.to_le_bytes()[..2].to_vec(), 1);
        }
        let mut flat = Flat::default();
        let mut next = xorshift(0x5851_F42D_4C95_7F2D);
        for k in 0..20_000u64 {
            let n = 2 + (next() % 8) as usize;
            // frequent units draw from 12 symbols, rare ones from all 600
            let pool = if k < 300 { 12 } else { 600 };
            let u: Vec<u32> = (0..n).map(|_| (next() % pool) as u32).collect();
            flat.push(&u, if k < 300 { 1 + 3000 / (k + 1) } else { 1 + next() % 2 });
        }
        (flat, symbols)
    }

    #[test]
    fn counting_in_rounds_changes_no_merge() {
        // 16 shards counted 4 at a time, the rare pairs dropped after each round (room for 64
        // heap entries, so the first round's bound drops pairs), against the one-pass count
        let params = MergeParams::bpe(300, 1, None);
        let base = Tuning { shards: Some(16), heap_keep: 64, ..Tuning::default() };
        let (one, _) = run_on(wide_corpus(), &params, base);
        assert!(one.0.len() >= 200, "the corpus gives room for many merges: {}", one.0.len());
        let (rounds, _) = run_on(wide_corpus(), &params, Tuning { count_rounds: 4, ..base });
        assert_eq!(one, rounds);
        let (flat, symbols) = wide_corpus();
        let t = Tuning { count_rounds: 4, ..base };
        let (index, placed, dropped, counted) =
            count_index_in_rounds(&flat, 2, t, 0..symbols.next_id());
        assert!(placed.is_none());
        assert!(dropped > 0, "pairs counted below the first round's bound were dropped");
        assert!(index.len() < counted, "{} of {counted} pairs kept", index.len());
        let (full, _) = count_index(&flat, 2, Some(16), 0..symbols.next_id());
        assert_eq!(full.len(), counted);
        for (k, v) in index.iter() {
            assert_eq!(full[k].count, v.count, "a kept pair's count is exact");
        }
        for (k, v) in full.iter() {
            if index.get(k).is_none() {
                assert!(v.count as u64 <= dropped, "a dropped pair is counted at most the bound");
            }
        }
    }

    #[test]
    fn splits_after_dropped_pairs_choose_as_with_every_pair_kept() {
        // merges and, every third step, a split of the oldest merged piece back into its two
        // parts (Picky and BoundlessBPE's deletion), on an engine that keeps every pair and one
        // that drops the pairs counted below 8 at every compaction: the same best pair with the
        // same count at every step, while the second's index holds fewer pairs
        let tuning = Tuning {
            compaction: Compaction::Always,
            heap_keep: 16,
            drop_below: Some(8),
            ..Tuning::default()
        };
        let params = MergeParams { tuning, ..MergeParams::bpe(10_000, 1, None) };
        let (flat_a, mut sym_a) = corpus(3000);
        let (flat_b, mut sym_b) = corpus(3000);
        let mut kept = Engine::new(flat_a, &mut sym_a, &params, true);
        let mut dropping = Engine::new(flat_b, &mut sym_b, &params, false);
        let mut made: Vec<[u32; 3]> = Vec::new();
        let (mut splits, mut fewer) = (0, 0);
        for step in 0..300 {
            let best = kept.best();
            assert_eq!(best, dropping.best(), "step {step}");
            let Some((pair, count)) = best else { break };
            if step % 3 == 2 && !made.is_empty() {
                let [x, y, c] = made.remove(0);
                let mut outs = Vec::new();
                for e in [&mut kept, &mut dropping] {
                    let all: Vec<u32> = (0..e.flat.units() as u32).collect();
                    outs.push(e.split(c, &[x, y], all).0);
                }
                assert_eq!(outs[0], outs[1]);
                splits += (outs[0] > 0) as usize;
                continue;
            }
            let (x, y) = unpack(pair);
            let mut c = 0;
            for e in [&mut kept, &mut dropping] {
                e.last_count = count;
                let (p, new) = e.piece(x, y);
                e.apply(pair, p, !new);
                c = p;
            }
            made.push([x, y, c]);
            fewer += (dropping.index.len() < kept.index.len()) as usize;
        }
        assert!(splits > 20, "splits that changed units: {splits}");
        assert!(fewer > 20, "steps with pairs dropped: {fewer}");
        assert!(dropping.events.compactions > 0);
    }

    #[test]
    fn a_merge_rewritten_on_several_threads_chooses_as_on_one() {
        // 40,000 units over 5 letters: the first merges' pairs are in more than
        // `PARALLEL_UNITS` units, so on 3 threads their units are rewritten in 3 shares and
        // the shares' deltas taken in one after another (a raised pair's count read back from
        // the index); on 1 thread in one share. The same merges, pieces and rows.
        let (flat, _) = corpus(40_000);
        let mut holding = 0usize;
        for wi in 0..flat.units() {
            holding += flat.unit(wi).windows(2).any(|w| w == [0, 1]) as usize;
        }
        assert!(holding > PARALLEL_UNITS, "units holding (a, b): {holding}");
        let on = |threads: usize, params: &MergeParams| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| run_on(corpus(40_000), params, Tuning::default()).0)
        };
        for params in [
            MergeParams::bpe(300, 1, None),
            MergeParams { score: Score::WordPiece, ..MergeParams::bpe(200, 1, None) },
        ] {
            let one = on(1, &params);
            assert!(one.0.len() >= 150, "the corpus gives room for many merges: {}", one.0.len());
            assert_eq!(one, on(3, &params));
        }
    }

    #[test]
    fn an_index_in_shards_changes_no_merge() {
        let always = compacting(Compaction::Always);
        for params in [
            MergeParams::bpe(600, 1, None),
            MergeParams { score: Score::WordPiece, ..MergeParams::bpe(400, 1, None) },
        ] {
            let (one, _) = run(&params, always);
            let (sixteen, _) = run(&params, Tuning { shards: Some(16), ..always });
            assert!(one.0.len() > 100, "the corpus gives room for many merges: {}", one.0.len());
            assert_eq!(one, sixteen);
        }
    }

    #[test]
    fn compacting_the_lists_at_every_chance_changes_no_merge() {
        let bpe = MergeParams::bpe(400, 1, None);
        let wp = MergeParams { score: Score::WordPiece, ..MergeParams::bpe(400, 1, None) };
        for params in [&bpe, &wp] {
            let (never, e) = run(params, compacting(Compaction::Never));
            assert_eq!(e.compactions, 0);
            let (always, e) = run(params, compacting(Compaction::Always));
            assert!(e.compactions >= 3, "compactions: {}", e.compactions);
            assert!(
                never.0.len() > 100,
                "the corpus gives room for many merges: {}",
                never.0.len()
            );
            assert_eq!(never, always);
            let (doubling, _) = run(params, compacting(Compaction::Doubling));
            assert_eq!(never, doubling);
            let (quadrupling, _) = run(params, compacting(Compaction::Quadrupling));
            assert_eq!(never, quadrupling);
        }
    }
}
