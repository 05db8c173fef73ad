//! The pair index: `pair -> (count, units holding it)` in one hash map slot per pair
//! ([`PairInfo`]: a list of one unit lives in the slot, a longer one in the [`Arena`]), in shards
//! by the pair's hash so that a growing table copies one shard at a time ([`PairIndex`]); and its
//! building from the units, counted on the threads' shares and merged in a fixed order.

use rayon::prelude::*;

use super::units::{block_words, Arena, Flat, SharedSyms};
use super::{pack, unpack, NO_SYMBOL};
use crate::hash::Map;

/// One pair of the index: its count over the corpus and the units that hold it (each listed at
/// least once; stale ids of units that lost the pair are skipped when the pair is merged, and
/// dropped when the arena is compacted). With its `u64` key a map slot is 24 bytes: a list of
/// one id (most pairs of a large table are in one unit) lives in the slot, a longer one in a
/// block of the engine's [`Arena`].
#[derive(Clone, Copy, Default)]
pub(super) struct PairInfo {
    pub(super) count: i64,
    /// How many ids the list holds.
    pub(super) len: u32,
    /// `len == 1`: the id itself; `len > 1`: the list's block in the arena.
    pub(super) at: u32,
}

/// The pair index, `pair -> PairInfo`, in shards by the pair's hash (one shard for small inputs).
/// A hash map grows by moving into a table twice its size, with both alive at once: at the end
/// of a 20 M-unit table that move was the run's peak (about 750 MB). In shards, one move copies
/// one shard.
///
/// The shards do not get equal shares of the pairs: shard `i` of `n` gets a share in proportion
/// to `2^(i/n)`, so their sizes span one doubling and they grow into their next tables one at a
/// time as the index grows. With equal shares they all doubled within a few merges of each other,
/// and a run that ended just after held every table at twice its pairs (1/0.4375 = 2.29 slots a
/// pair; spread, about 1.65 at any size).
pub(super) struct PairIndex {
    shards: Vec<Map<u64, PairInfo>>,
    /// The shard of each of 1024 hash ranges.
    route: Box<[u8; 1024]>,
}

impl PairIndex {
    /// The shards for about `units` units: one up to 128k units, then one per 64k units, at
    /// most 64.
    pub(super) fn shards_for(units: usize) -> usize {
        (units >> 16).next_power_of_two().clamp(1, 64)
    }

    /// An empty index in `n` shards (1 to 256).
    pub(super) fn new(n: usize) -> Self {
        assert!((1..=256).contains(&n), "the pair index takes 1 to 256 shards, not {n}");
        // shard i takes the hash ranges up to 1024 * W(i + 1) / W(n), W(i) = Σ_{j<i} 2^(j/n)
        let weight = |i: usize| (i as f64 / n as f64).exp2();
        let total: f64 = (0..n).map(weight).sum();
        let mut route = Box::new([0u8; 1024]);
        let mut upto = 0.0;
        let mut r = 0usize;
        for i in 0..n {
            upto += weight(i);
            let end = if i + 1 == n { 1024 } else { (1024.0 * upto / total).round() as usize };
            while r < end {
                route[r] = i as u8;
                r += 1;
            }
        }
        PairIndex { shards: (0..n).map(|_| Map::default()).collect(), route }
    }
    #[inline]
    fn shard(&self, k: u64) -> usize {
        shard_of(&self.route, k)
    }
    #[inline]
    pub(super) fn get(&self, k: &u64) -> Option<&PairInfo> {
        self.shards[self.shard(*k)].get(k)
    }
    #[inline]
    pub(super) fn get_mut(&mut self, k: &u64) -> Option<&mut PairInfo> {
        let s = self.shard(*k);
        self.shards[s].get_mut(k)
    }
    #[inline]
    pub(super) fn entry(&mut self, k: u64) -> std::collections::hash_map::Entry<'_, u64, PairInfo> {
        let s = self.shard(k);
        self.shards[s].entry(k)
    }
    #[inline]
    pub(super) fn remove(&mut self, k: &u64) -> Option<PairInfo> {
        let s = self.shard(*k);
        self.shards[s].remove(k)
    }
    pub(super) fn len(&self) -> usize {
        self.shards.iter().map(|m| m.len()).sum()
    }
    pub(super) fn retain(&mut self, mut f: impl FnMut(&u64, &mut PairInfo) -> bool) {
        for m in &mut self.shards {
            m.retain(&mut f);
        }
    }
    /// Each shard's table down to the size its pairs need (one shard's copy at a time).
    pub(super) fn shrink(&mut self) {
        for m in &mut self.shards {
            m.shrink_to_fit();
        }
    }
    /// Every pair, in an order that depends on the hash (callers sort what must not).
    pub(super) fn iter(&self) -> impl Iterator<Item = (&u64, &PairInfo)> {
        self.shards.iter().flat_map(|m| m.iter())
    }
    pub(super) fn keys(&self) -> impl Iterator<Item = &u64> {
        self.shards.iter().flat_map(|m| m.keys())
    }
    pub(super) fn values(&self) -> impl Iterator<Item = &PairInfo> {
        self.shards.iter().flat_map(|m| m.values())
    }
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (&u64, &mut PairInfo)> {
        self.shards.iter_mut().flat_map(|m| m.iter_mut())
    }
    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut PairInfo> {
        self.shards.iter_mut().flat_map(|m| m.values_mut())
    }
}

/// The shard of pair `k` under `route`.
#[inline]
fn shard_of(route: &[u8; 1024], k: u64) -> usize {
    // the top bits of another multiplicative hash than the maps' (theirs pick the buckets)
    route[(k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize] as usize
}

impl std::ops::Index<&u64> for PairIndex {
    type Output = PairInfo;
    fn index(&self, k: &u64) -> &PairInfo {
        self.get(k).expect("the pair is in the index")
    }
}

/// Drops the pairs counted below `below` (at least 1: the pairs no unit holds go too) and
/// returns the largest count dropped (0: no live pair). Their blocks become garbage.
pub(super) fn drop_pairs(index: &mut PairIndex, below: i64) -> u64 {
    let mut dropped = 0i64;
    index.retain(|_, v| {
        if v.count >= below {
            return true;
        }
        dropped = dropped.max(v.count);
        false
    });
    if dropped > 0 {
        // a map keeps its table when emptied: give the dropped pairs' slots back
        index.shrink();
    }
    dropped.max(0) as u64
}

/// Pair counts, and how many units hold each pair (in `len`), over a range of units (one
/// thread's share).
///
/// A pair's `at` (unused until [`place_pairs`]) holds the last unit that counted it, plus one,
/// so a unit adds to `len` once per pair (a list of the unit's pairs, searched at each pair, is
/// quadratic in a long unit). The entries' `at` are not read from these maps.
fn count_pairs(flat: &Flat, range: std::ops::Range<usize>) -> Map<u64, PairInfo> {
    let mut counts: Map<u64, PairInfo> = Map::default();
    for wi in range {
        let s = flat.unit(wi);
        let stamp = wi as u32 + 1;
        for w in s.windows(2) {
            if w[0] == NO_SYMBOL || w[1] == NO_SYMBOL {
                continue;
            }
            let p = pack(w[0], w[1]);
            let e = counts.entry(p).or_default();
            e.count += flat.meta[wi].count as i64;
            if e.at != stamp {
                e.at = stamp;
                e.len += 1;
            }
        }
    }
    counts
}

/// Fills the place lists of `index`, whose entries hold each pair's count and the number of
/// units holding it (from [`count_index`]): a block of exactly that size for each pair in more
/// than one unit, then one pass over the units. Pairs not in the index (dropped) get none.
///
/// With `ranks` (from [`count_index`]) the pairs of two ranked symbols are placed in a table
/// with a cell per pair of ranks, the rest through the map, and the table's places written back
/// into the index at the end: most of the pass then indexes an array instead of probing a map.
pub(super) fn place_pairs(flat: &Flat, index: &mut PairIndex, ranks: Option<&Ranks>) -> Arena {
    let Some(ranks) = ranks else {
        fn find(index: &mut PairIndex, p: u64) -> Option<&mut PairInfo> {
            index.get_mut(&p)
        }
        let mut arena = alloc_blocks(block_total(index.values()), index.values_mut());
        fill_places(flat, &mut arena, index, find);
        close_blocks(&mut arena, index.values());
        return arena;
    };
    let k = ranks.width;
    let mut table = vec![PairInfo::default(); k * k];
    for (&p, v) in index.iter() {
        if let Some(c) = ranks.cell(p) {
            table[c] = *v;
        }
    }
    let total = block_total(table.iter())
        + block_total(index.iter().filter(|(p, _)| ranks.cell(**p).is_none()).map(|(_, v)| v));
    let mut arena = alloc_blocks(total, table.iter_mut());
    // the other pairs' blocks after the table's
    add_blocks(
        &mut arena,
        index.iter_mut().filter(|(p, _)| ranks.cell(**p).is_none()).map(|(_, v)| v),
    );
    match ranks.split.as_ref() {
        Some(split) => place_split(flat, &mut arena, &mut table, index, ranks, split),
        None => {
            // the pass of `fill_places`, each symbol's rank read once (not twice, a pair at a
            // time)
            let w = &mut arena.words;
            for wi in 0..flat.units() {
                let id = wi as u32;
                ranks.each_pair(flat.unit(wi), |x, y, cell| {
                    let v = match cell {
                        // a cell of a pair the index does not hold (dropped) has no units
                        Some(c) if table[c].len > 0 => &mut table[c],
                        Some(_) => return,
                        None => match index.get_mut(&pack(x, y)) {
                            Some(v) => v,
                            None => return,
                        },
                    };
                    place(w, v, id);
                });
            }
        }
    }
    close_blocks(&mut arena, table.iter());
    close_blocks(
        &mut arena,
        index.iter().filter(|(p, _)| ranks.cell(**p).is_none()).map(|(_, v)| v),
    );
    for (c, v) in table.iter().enumerate() {
        if v.len > 0 {
            if let Some(e) = index.get_mut(&ranks.pair(c)) {
                e.at = v.at;
            }
        }
    }
    arena
}

/// The pass of [`place_pairs`] over the table's pairs, each share of the units that
/// [`dense_index`] counted apart placed on a thread of its own: the share's ids go into each
/// block from the number of units the shares before it hold the pair in (counted then), so every
/// list comes out as the serial pass writes it, in unit order. Each thread keeps, per cell, the
/// last unit it placed (a unit's repeat of a pair is placed once) and where its next id goes.
/// The pairs outside the table are listed by each thread and placed after, share by share.
fn place_split(
    flat: &Flat,
    arena: &mut Arena,
    table: &mut [PairInfo],
    index: &mut PairIndex,
    ranks: &Ranks,
    split: &Split,
) {
    let cells = table.len();
    let words = SharedSyms(arena.words.as_mut_ptr());
    let table_ref = &*table;
    let parts: Vec<SharePlaces> = split
        .ranges
        .par_iter()
        .enumerate()
        .map(|(r, range)| {
            let mut cur: Vec<(u32, u32)> = match r {
                0 => vec![(0, 0); cells],
                _ => split.before[r - 1].iter().map(|&n| (0, n)).collect(),
            };
            let mut rare: Vec<(u64, u32)> = Vec::new();
            for wi in range.clone() {
                let id = wi as u32;
                ranks.each_pair(flat.unit(wi), |x, y, cell| {
                    let Some(c) = cell else {
                        rare.push((pack(x, y), id));
                        return;
                    };
                    let v = table_ref[c];
                    let e = &mut cur[c];
                    // a cell the index does not hold (dropped) has no units
                    if v.len == 0 || e.0 == id + 1 {
                        return;
                    }
                    e.0 = id + 1;
                    if v.len >= 2 {
                        let n = e.1;
                        // the block holds `len` ids: a count that disagreed would write past it
                        assert!(n < v.len, "a share placed more units than were counted");
                        e.1 = n + 1;
                        // SAFETY: the block of `v` is `v.len` ids after its first word, within
                        // the arena (`alloc_blocks`), and the shares write disjoint stretches of
                        // it: share r from the units the shares before it counted
                        unsafe { *words.at(v.at as usize * 4 + 1 + n as usize) = id };
                    }
                });
            }
            (cur, rare)
        })
        .collect();
    let w = &mut arena.words;
    for (c, v) in table.iter_mut().enumerate() {
        match v.len {
            0 => {}
            // the one unit holding the pair, from the share that placed it
            1 => {
                let last = parts.iter().map(|p| p.0[c].0).find(|&l| l > 0);
                v.at = last.expect("a pair counted in one unit was placed") - 1;
            }
            // the fill word `close_blocks` checks: the last share ends past every id
            n => {
                let filled = parts.last().map_or(0, |p| p.0[c].1);
                debug_assert_eq!(filled, n);
                w[v.at as usize * 4] = filled;
            }
        }
    }
    for (_, rare) in &parts {
        for &(p, id) in rare {
            if let Some(v) = index.get_mut(&p) {
                place(w, v, id);
            }
        }
    }
}

/// One share's pass in [`place_split`]: each cell's (last unit placed + 1, ids placed before its
/// next), and the pairs outside the table with their units.
type SharePlaces = (Vec<(u32, u32)>, Vec<(u64, u32)>);

/// The words the blocks of `entries` take ([`alloc_blocks`]).
fn block_total<'a>(entries: impl Iterator<Item = &'a PairInfo>) -> usize {
    entries.filter(|v| v.len >= 2).map(|v| block_words(v.len as usize)).sum()
}

/// A block for each pair in more than one unit (`len`), `total` words in all, its capacity
/// word set to 0: it counts the ids [`fill_places`] writes until [`close_blocks`].
fn alloc_blocks<'a>(total: usize, entries: impl Iterator<Item = &'a mut PairInfo>) -> Arena {
    let mut arena = Arena { words: Vec::with_capacity(total) };
    add_blocks(&mut arena, entries);
    arena
}

/// [`alloc_blocks`]'s blocks for `entries`, at the end of `arena`.
fn add_blocks<'a>(arena: &mut Arena, entries: impl Iterator<Item = &'a mut PairInfo>) {
    for v in entries {
        if v.len >= 2 {
            v.at = arena.alloc(v.len as usize);
            arena.words[v.at as usize * 4] = 0;
        }
    }
}

/// One pass over the units: each unit's id into the block of each pair it holds, once (a pair
/// in one unit keeps that unit's id in `at`). `find` gives a pair's entry (None: dropped).
fn fill_places<T>(
    flat: &Flat,
    arena: &mut Arena,
    pairs: &mut T,
    find: for<'x> fn(&'x mut T, u64) -> Option<&'x mut PairInfo>,
) {
    let w = &mut arena.words;
    for wi in 0..flat.units() {
        let id = wi as u32;
        for x in flat.unit(wi).windows(2) {
            if x[0] == NO_SYMBOL || x[1] == NO_SYMBOL {
                continue;
            }
            let Some(v) = find(pairs, pack(x[0], x[1])) else { continue };
            place(w, v, id);
        }
    }
}

/// Unit `id` into the place list of the pair `v` (once: a unit's pairs are walked in order, so
/// a repeat is the block's last id); a pair in one unit keeps the id in `at`, no block.
#[inline(always)]
fn place(w: &mut [u32], v: &mut PairInfo, id: u32) {
    if v.len == 1 {
        v.at = id;
        return;
    }
    let s = v.at as usize * 4;
    let fill = w[s] as usize;
    if fill == 0 || w[s + fill] != id {
        w[s + 1 + fill] = id;
        w[s] = fill as u32 + 1;
    }
}

/// Each block's first word back to its capacity, once every id is written.
fn close_blocks<'a>(arena: &mut Arena, entries: impl Iterator<Item = &'a PairInfo>) {
    for v in entries {
        if v.len >= 2 {
            let s = v.at as usize * 4;
            debug_assert_eq!(arena.words[s], v.len);
            arena.words[s] = (block_words(v.len as usize) - 1) as u32;
        }
    }
}

/// The pair index of `flat` in `shards` shards (`None`: [`PairIndex::shards_for`] its units) and
/// its place lists, counted on `threads` threads. `ids` holds every symbol id of `flat` (but
/// [`NO_SYMBOL`]).
pub(super) fn build_index(
    flat: &Flat,
    threads: usize,
    shards: Option<usize>,
    ids: std::ops::Range<u32>,
) -> (PairIndex, Arena) {
    let (mut index, ranks) = count_index(flat, threads, shards, ids);
    let arena = place_pairs(flat, &mut index, ranks.as_ref());
    (index, arena)
}

/// The symbols counted in a table with a cell per pair ([`count_index`], [`place_pairs`]): up
/// to [`DENSE_SYMBOLS`] of them, each with its rank (its row and column).
#[derive(Clone)]
pub(super) struct Ranks {
    /// The rank of each symbol id from `base` ([`UNRANKED`]: none).
    of: Vec<u32>,
    /// The symbol id of each rank.
    ids: Vec<u32>,
    base: u32,
    /// How many symbols are ranked: the table is `width²` cells.
    width: usize,
    /// Every symbol is ranked, by its offset from `base`.
    every: bool,
    /// How the table's count split the units between the threads (`None`: one share), for
    /// [`place_pairs`] to place each share on its own thread.
    split: Option<Split>,
}

/// The shares of the units that [`dense_index`] counted apart (ranges of units, in order), and
/// for each share after the first, how many units of the shares before it hold each cell's pair.
#[derive(Clone)]
pub(super) struct Split {
    ranges: Vec<std::ops::Range<usize>>,
    before: Vec<Vec<u32>>,
}

const UNRANKED: u32 = u32::MAX;

impl Ranks {
    /// The ranks of `flat`'s symbols (ids `ids`, [`NO_SYMBOL`] aside): every symbol when there
    /// are at most [`DENSE_SYMBOLS`]; else the most frequent that many in the units' symbols
    /// (each unit once, as the index is built), when they are at least [`DENSE_COVER`] of them.
    /// `None`: too few of the pairs would be in the table to pay for it (a large vocabulary of
    /// symbols, as in SuperBPE's second stage), and the map counts every pair.
    fn of(flat: &Flat, threads: usize, ids: std::ops::Range<u32>) -> Option<Ranks> {
        let base = ids.start;
        let all = ids.end.saturating_sub(base) as usize;
        if all <= DENSE_SYMBOLS {
            return Some(Ranks::new(ids, (0..all as u32).collect()));
        }
        let n = flat.units();
        // a large table's symbols ranked from every RANK_SAMPLE-th unit: the ranks only choose
        // which pairs the table counts, never a count (by the unit's number, so the same on any
        // thread count)
        let step = if n >= RANK_SAMPLE_FROM { RANK_SAMPLE } else { 1 };
        let chunk = n.div_ceil(threads.max(1)).max(1 << 14).next_multiple_of(step);
        let seen: Vec<u64> = (0..n)
            .step_by(chunk)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|s| {
                let mut seen = vec![0u64; all];
                for wi in (s..(s + chunk).min(n)).step_by(step) {
                    for &x in flat.unit(wi) {
                        if x != NO_SYMBOL {
                            seen[(x - base) as usize] += 1;
                        }
                    }
                }
                seen
            })
            .reduce(
                || vec![0u64; all],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let total: u64 = seen.iter().sum();
        // the most frequent first (ties by id: the ranks, like everything else, are the same on
        // any thread count)
        let mut by: Vec<u32> = (0..all as u32).filter(|&i| seen[i as usize] > 0).collect();
        by.sort_unstable_by_key(|&i| (std::cmp::Reverse(seen[i as usize]), i));
        by.truncate(DENSE_SYMBOLS);
        let covered: u64 = by.iter().map(|&i| seen[i as usize]).sum();
        if (covered as f64) < DENSE_COVER * total as f64 {
            return None;
        }
        Some(Ranks::new(ids, by))
    }

    /// The ranks of symbols `ids` that rank the symbols `ranked` (offsets from `ids.start`), in
    /// that order.
    fn new(ids: std::ops::Range<u32>, ranked: Vec<u32>) -> Ranks {
        let base = ids.start;
        let mut of = vec![UNRANKED; ids.len()];
        for (r, &i) in ranked.iter().enumerate() {
            of[i as usize] = r as u32;
        }
        let width = ranked.len();
        let every = ranked.iter().enumerate().all(|(r, &i)| r as u32 == i) && width == of.len();
        let ids = ranked.into_iter().map(|i| i + base).collect();
        Ranks { of, ids, base, width, every, split: None }
    }

    /// The table cell of pair `p`, when both its symbols are ranked.
    #[inline(always)]
    fn cell(&self, p: u64) -> Option<usize> {
        let (x, y) = unpack(p);
        let rx = self.of[(x - self.base) as usize];
        let ry = self.of[(y - self.base) as usize];
        if rx == UNRANKED || ry == UNRANKED {
            return None;
        }
        Some(rx as usize * self.width + ry as usize)
    }

    /// Calls `f(x, y, cell)` with each pair of `unit` (pairs holding [`NO_SYMBOL`] skipped) and
    /// its table cell, each symbol's rank read once.
    #[inline(always)]
    fn each_pair(&self, unit: &[u32], mut f: impl FnMut(u32, u32, Option<usize>)) {
        if self.every {
            // every symbol ranked by its id: the cell from the ids, no rank read (a loop of its
            // own, where the pairs outside the table never come)
            for w in unit.windows(2) {
                let (x, y) = (w[0], w[1]);
                if x != NO_SYMBOL && y != NO_SYMBOL {
                    let cell = (x - self.base) as usize * self.width + (y - self.base) as usize;
                    f(x, y, Some(cell));
                }
            }
            return;
        }
        let (mut x, mut rx) = (NO_SYMBOL, UNRANKED);
        for &y in unit {
            if y == NO_SYMBOL {
                x = NO_SYMBOL;
                continue;
            }
            let ry = self.of[(y - self.base) as usize];
            if x != NO_SYMBOL {
                let cell = (rx != UNRANKED && ry != UNRANKED)
                    .then(|| rx as usize * self.width + ry as usize);
                f(x, y, cell);
            }
            (x, rx) = (y, ry);
        }
    }

    /// The pair of table cell `c`.
    fn pair(&self, c: usize) -> u64 {
        pack(self.ids[c / self.width], self.ids[c % self.width])
    }
}

/// The pair index of `flat`: each pair's count and the number of units holding it (its place
/// lists come from [`place_pairs`], once the pairs the index keeps are known), and the ranks
/// it was counted under, for [`place_pairs`].
///
/// Up to [`DENSE_SYMBOLS`] symbols, or when that many most frequent symbols make up
/// [`DENSE_COVER`] of the units' symbols ([`Ranks::of`]), each thread counts its share of the
/// units into a table with a cell per pair of ranked symbols (`width²` cells of 16 bytes, 4 MB
/// at most), the other pairs into a map of its own, and the tables are added up and moved into
/// the index, one insert per distinct pair: most pairs then index an array, where each looked
/// its pair up in a map.
///
/// Otherwise an index in shards is counted by the threads a run of shards each, every thread
/// reading all the units and counting the pairs of its shards straight into them: counted per
/// thread and then added up, the threads' tables and the index were alive at once, the peak of
/// SuperBPE's stage two (100 MB of mixed text, 32k rows: 105 MB of thread tables beside a 75 MB
/// index; the run's peak 367 -> 301 MB).
pub(super) fn count_index(
    flat: &Flat,
    threads: usize,
    shards: Option<usize>,
    ids: std::ops::Range<u32>,
) -> (PairIndex, Option<Ranks>) {
    let mut ranks = Ranks::of(flat, threads, ids);
    let (index, split) = count_ranked(flat, threads, shards, ranks.as_ref());
    if let Some(r) = ranks.as_mut() {
        r.split = split;
    }
    (index, ranks)
}

/// [`count_index`] under the ranks given (`None`: every pair through the map), and the shares
/// the table was counted in when there were several.
fn count_ranked(
    flat: &Flat,
    threads: usize,
    shards: Option<usize>,
    ranks: Option<&Ranks>,
) -> (PairIndex, Option<Split>) {
    let n = flat.units();
    let k = shards.unwrap_or_else(|| PairIndex::shards_for(n));
    let chunk = n.div_ceil(threads).max(1024);
    let ranges: Vec<std::ops::Range<usize>> =
        (0..n).step_by(chunk).map(|s| s..(s + chunk).min(n)).collect();
    if let Some(ranks) = ranks {
        let mut index = PairIndex::new(k);
        let before = dense_index(flat, &ranges, ranks, &mut index);
        let split = (ranges.len() > 1).then_some(Split { ranges, before });
        return (index, split);
    }
    if k > 1 {
        let mut index = PairIndex::new(k);
        let per = k.div_ceil(threads.clamp(1, k));
        let route = &*index.route;
        index
            .shards
            .par_chunks_mut(per)
            .enumerate()
            .for_each(|(g, own)| count_shards(flat, route, own, g * per));
        return (index, None);
    }
    let mut index = PairIndex::new(k);
    let parts: Vec<_> = ranges.into_par_iter().map(|r| count_pairs(flat, r)).collect();
    for c in parts {
        for (k, v) in c {
            let e = index.entry(k).or_default();
            e.count += v.count;
            e.len += v.len;
        }
    }
    (index, None)
}

/// Counts the pairs of every unit that fall in the shards `own` (shard numbers from `first`):
/// each pair's count and how many units hold it.
fn count_shards(flat: &Flat, route: &[u8; 1024], own: &mut [Map<u64, PairInfo>], first: usize) {
    for wi in 0..flat.units() {
        let stamp = wi as u32 + 1;
        let count = flat.meta[wi].count as i64;
        for w in flat.unit(wi).windows(2) {
            if w[0] == NO_SYMBOL || w[1] == NO_SYMBOL {
                continue;
            }
            let p = pack(w[0], w[1]);
            let Some(m) = shard_of(route, p).checked_sub(first).and_then(|i| own.get_mut(i)) else {
                continue;
            };
            let e = m.entry(p).or_default();
            e.count += count;
            if e.at != stamp {
                e.at = stamp;
                e.len += 1;
            }
        }
    }
}

/// [`count_index`] for pairs that may be dropped: a table in shards is counted
/// `tuning.count_rounds` runs of shards at a time, and after each round the pairs counted below
/// a bound leave their shards, so the whole table of pairs is never alive at once (SuperBPE's
/// stage two on 100 MB: 2.6 M pairs counted, 194 k kept). The bound comes from the first round,
/// a share of the hash space: half the floor that keeps that share of `heap_keep` pairs, or a
/// quarter of its largest count, whichever is lower (the engine's own drop, next, takes what it
/// would have taken). A pair's count is exact or the pair is gone; dropping changes no merge
/// (see [`super::engine`]'s `untracked`). Returns the index, the symbols' ranks if the table of
/// ranked pairs counted it, the largest count dropped, and how many pairs were counted.
pub(super) fn count_index_in_rounds(
    flat: &Flat,
    threads: usize,
    tuning: super::Tuning,
    ids: std::ops::Range<u32>,
) -> (PairIndex, Option<Ranks>, u64, usize) {
    let n = flat.units();
    let k = tuning.shards.unwrap_or_else(|| PairIndex::shards_for(n));
    let width = ids.end.saturating_sub(ids.start) as usize;
    if width <= DENSE_SYMBOLS || k == 1 || tuning.count_rounds <= 1 {
        let (index, ranks) = count_index(flat, threads, tuning.shards, ids);
        let counted = index.len();
        return (index, ranks, 0, counted);
    }
    let mut index = PairIndex::new(k);
    let per_round = k.div_ceil(tuning.count_rounds.min(k));
    let (mut below, mut dropped, mut counted) = (1i64, 0i64, 0usize);
    for lo in (0..k).step_by(per_round) {
        let hi = (lo + per_round).min(k);
        let per = (hi - lo).div_ceil(threads.clamp(1, hi - lo));
        let route = &*index.route;
        index.shards[lo..hi]
            .par_chunks_mut(per)
            .enumerate()
            .for_each(|(g, own)| count_shards(flat, route, own, lo + g * per));
        let shards = &mut index.shards[lo..hi];
        counted += shards.iter().map(|m| m.len()).sum::<usize>();
        if lo == 0 {
            // this round's share of the hash space, and of the pairs the heap keeps
            let share = index.route.iter().filter(|&&r| (r as usize) < hi).count();
            let keep = (tuning.heap_keep * share).div_ceil(1024);
            let mut top = 0i64;
            let floor = super::engine::floor_keeping(
                shards.iter().flat_map(|m| m.values()).map(|v| {
                    top = top.max(v.count);
                    v.count.max(0) as u64
                }),
                keep,
            );
            below = ((floor / 2) as i64).min(top / 4).max(1);
        }
        if below > 1 {
            for m in shards.iter_mut() {
                m.retain(|_, v| {
                    if v.count >= below {
                        return true;
                    }
                    dropped = dropped.max(v.count);
                    false
                });
                m.shrink_to_fit();
            }
        }
    }
    (index, None, dropped.max(0) as u64, counted)
}

/// Up to this many symbols (an alphabet before any merge: English 103, code 442), or this many
/// most frequent ones, are counted in a table with a cell per pair ([`count_index`]): the two
/// passes over the units then index an array, where each looked the pair up in a map (code
/// under `front`: 1,043 M instructions, 9% of a run, for 8.3 M symbol pairs, against 585 M).
const DENSE_SYMBOLS: usize = 512;

/// From this many units, [`Ranks::of`] ranks the symbols from every `RANK_SAMPLE`-th unit.
const RANK_SAMPLE_FROM: usize = 1 << 16;
const RANK_SAMPLE: usize = 4;

/// The share of the units' symbols that the ranked symbols must make up for the table to be
/// used ([`Ranks::of`]); a pair of two of them is in the table. On 100 MB of mixed text (8,210
/// characters) the most frequent 512 make up more than 99% of them.
const DENSE_COVER: f64 = 0.95;

/// [`count_pairs`] in a table of `width²` cells for the pairs of ranked symbols and a map for
/// the others, each thread its range of units, then added up and moved into `index`. Returns,
/// for each range after the first, how many units of the ranges before it hold each cell's pair
/// ([`Split`]).
fn dense_index(
    flat: &Flat,
    ranges: &[std::ops::Range<usize>],
    ranks: &Ranks,
    index: &mut PairIndex,
) -> Vec<Vec<u32>> {
    let width = ranks.width;
    let parts: Vec<(Vec<PairInfo>, Map<u64, PairInfo>)> = ranges
        .par_iter()
        .map(|r| {
            let mut t = vec![PairInfo::default(); width * width];
            let mut rare: Map<u64, PairInfo> = Map::default();
            for wi in r.clone() {
                let stamp = wi as u32 + 1;
                let c = flat.meta[wi].count as i64;
                ranks.each_pair(flat.unit(wi), |x, y, cell| {
                    let e = match cell {
                        Some(k) => &mut t[k],
                        None => rare.entry(pack(x, y)).or_default(),
                    };
                    e.count += c;
                    if e.at != stamp {
                        e.at = stamp;
                        e.len += 1;
                    }
                });
            }
            (t, rare)
        })
        .collect();
    let mut table: Option<Vec<PairInfo>> = None;
    let mut before = Vec::new();
    for (t, rare) in parts {
        match table.as_mut() {
            None => table = Some(t),
            Some(table) => {
                before.push(table.iter().map(|e| e.len).collect());
                for (e, o) in table.iter_mut().zip(&t) {
                    e.count += o.count;
                    e.len += o.len;
                }
            }
        }
        for (p, v) in rare {
            let e = index.entry(p).or_default();
            e.count += v.count;
            e.len += v.len;
        }
    }
    for (c, v) in table.iter().flatten().enumerate() {
        if v.len > 0 {
            index.entry(ranks.pair(c)).or_insert(PairInfo { at: 0, ..*v });
        }
    }
    before
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pair's count and its place list as a sorted set of units.
    fn listed(index: &PairIndex, arena: &Arena) -> Vec<(u64, i64, Vec<u32>)> {
        let mut v: Vec<(u64, i64, Vec<u32>)> = index
            .iter()
            .map(|(&k, info)| {
                let mut ids = match info.len {
                    0 => vec![],
                    1 => vec![info.at],
                    n => {
                        let s = info.at as usize * 4 + 1;
                        arena.words[s..s + n as usize].to_vec()
                    }
                };
                ids.sort_unstable();
                (k, info.count, ids)
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// The index and place lists of `flat` counted and placed under `ranks`, after dropping the
    /// pairs counted below `below`.
    fn built(
        flat: &Flat,
        threads: usize,
        ranks: Option<&Ranks>,
        below: i64,
    ) -> (Vec<(u64, i64, Vec<u32>)>, usize) {
        let (mut index, split) = count_ranked(flat, threads, None, ranks);
        drop_pairs(&mut index, below);
        // on several threads the table's shares are placed apart, as `count_index` does
        let ranks = ranks.map(|r| Ranks { split, ..r.clone() });
        let arena = place_pairs(flat, &mut index, ranks.as_ref());
        (listed(&index, &arena), arena.words.len())
    }

    #[test]
    fn the_table_of_ranked_pairs_and_the_map_build_the_same_index() {
        // symbols 10..22 (and NO_SYMBOL, which is in no pair), 3,000 units of 0 to 12 symbols
        // with counts 1 to 5, on 1 and 3 threads: every pair through the map, every symbol
        // ranked, four of them ranked (the pairs of the others through the map), and the
        // ranks `count_index` gives a wide id range; with no pair dropped before the places are
        // made, and with the pairs counted below 40 dropped
        let mut flat = Flat::default();
        let mut x = 11u32;
        let mut next = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            x >> 16
        };
        for _ in 0..3000 {
            let len = next() % 13;
            let unit: Vec<u32> = (0..len)
                .map(|_| match next() % 64 {
                    0..=7 => NO_SYMBOL,
                    // six rare symbols: most of their pairs are in one unit
                    8 => 16 + next() % 6,
                    s => 10 + s % 6,
                })
                .collect();
            let count = 1 + next() as u64 % 5;
            flat.push(&unit, count);
        }
        // the definition, worked out from the units: each pair's count and the units holding it
        let mut want: std::collections::BTreeMap<u64, (i64, Vec<u32>)> = Default::default();
        for i in 0..flat.units() {
            for w in flat.unit(i).windows(2) {
                if w[0] != NO_SYMBOL && w[1] != NO_SYMBOL {
                    let e = want.entry(pack(w[0], w[1])).or_default();
                    e.0 += flat.meta[i].count as i64;
                    if e.1.last() != Some(&(i as u32)) {
                        e.1.push(i as u32);
                    }
                }
            }
        }
        let all = Ranks::new(10..22, (0..12).collect());
        let some = Ranks::new(10..22, vec![2, 0, 5, 7]);
        let wide = Ranks::of(&flat, 1, 0..100_000).expect("12 symbols make up all the symbols");
        assert_eq!(wide.width, 12);
        for below in [1, 40] {
            let want: Vec<(u64, i64, Vec<u32>)> = want
                .iter()
                .filter(|(_, v)| v.0 >= below)
                .map(|(&k, v)| (k, v.0, v.1.clone()))
                .collect();
            assert!(want.len() > 20, "{} pairs", want.len());
            // (a list of one unit lives in the slot)
            assert!(below > 1 || want.iter().any(|w| w.2.len() == 1));
            for threads in [1, 3] {
                let (map, words) = built(&flat, threads, None, below);
                assert_eq!(map, want, "the map, {threads} threads, below {below}");
                for (name, ranks) in [("all", &all), ("some", &some), ("wide", &wide)] {
                    let (got, w) = built(&flat, threads, Some(ranks), below);
                    assert_eq!(got, want, "{name} ranked, {threads} threads, below {below}");
                    assert_eq!(w, words);
                }
            }
        }
        // `build_index` ranks every symbol of a narrow range, and lists the same
        let (index, arena) = build_index(&flat, 2, None, 10..22);
        let full: Vec<(u64, i64, Vec<u32>)> =
            want.iter().map(|(&k, v)| (k, v.0, v.1.clone())).collect();
        assert_eq!(listed(&index, &arena), full);
    }
}
