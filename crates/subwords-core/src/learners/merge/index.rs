//! The pair index: `pair -> (count, units holding it)` in one hash map slot per pair
//! ([`PairInfo`]: a list of one unit lives in the slot, a longer one in the [`Arena`]), in shards
//! by the pair's hash so that a growing table copies one shard at a time ([`PairIndex`]); and its
//! building from the units, counted on the threads' shares and merged in a fixed order.

use rayon::prelude::*;

use super::units::{block_words, Arena, Flat};
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
/// units holding it (from [`count_pairs`]): a block of exactly that size for each pair in more
/// than one unit, then one pass over the units. Pairs not in the index (dropped) get none.
pub(super) fn place_pairs(flat: &Flat, index: &mut PairIndex) -> Arena {
    fn find(index: &mut PairIndex, p: u64) -> Option<&mut PairInfo> {
        index.get_mut(&p)
    }
    let mut arena = alloc_blocks(block_total(index.values()), index.values_mut());
    fill_places(flat, &mut arena, index, find);
    close_blocks(&mut arena, index.values());
    arena
}

/// The words the blocks of `entries` take ([`alloc_blocks`]).
fn block_total<'a>(entries: impl Iterator<Item = &'a PairInfo>) -> usize {
    entries.filter(|v| v.len >= 2).map(|v| block_words(v.len as usize)).sum()
}

/// A block for each pair in more than one unit (`len`), `total` words in all, its capacity
/// word set to 0: it counts the ids [`fill_places`] writes until [`close_blocks`].
fn alloc_blocks<'a>(total: usize, entries: impl Iterator<Item = &'a mut PairInfo>) -> Arena {
    let mut arena = Arena { words: Vec::with_capacity(total) };
    for v in entries {
        if v.len >= 2 {
            v.at = arena.alloc(v.len as usize);
            arena.words[v.at as usize * 4] = 0;
        }
    }
    arena
}

/// One pass over the units: each unit's id into the block of each pair it holds, once (a pair
/// in one unit keeps that unit's id in `at`). `find` gives a pair's entry (None: dropped).
fn fill_places<T>(
    flat: &Flat,
    arena: &mut Arena,
    pairs: &mut T,
    find: fn(&mut T, u64) -> Option<&mut PairInfo>,
) {
    let w = &mut arena.words;
    for wi in 0..flat.units() {
        let id = wi as u32;
        for x in flat.unit(wi).windows(2) {
            if x[0] == NO_SYMBOL || x[1] == NO_SYMBOL {
                continue;
            }
            let Some(v) = find(pairs, pack(x[0], x[1])) else { continue };
            if v.len == 1 {
                v.at = id;
                continue;
            }
            let s = v.at as usize * 4;
            let fill = w[s] as usize;
            if fill == 0 || w[s + fill] != id {
                w[s + 1 + fill] = id;
                w[s] = fill as u32 + 1;
            }
        }
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
    match count_index(flat, threads, shards, ids) {
        (index, Some(arena)) => (index, arena),
        (mut index, None) => {
            let arena = place_pairs(flat, &mut index);
            (index, arena)
        }
    }
}

/// The pair index of `flat`: each pair's count and the number of units holding it. Up to
/// [`DENSE_SYMBOLS`] symbols the table that counts the pairs places them as well, and their
/// place lists come with it; otherwise none ([`place_pairs`] fills them, once the pairs the
/// index keeps are known).
///
/// An index in shards is counted by the threads a run of shards each, every thread reading all
/// the units and counting the pairs of its shards straight into them: counted per thread and
/// then added up, the threads' tables and the index were alive at once, the peak of SuperBPE's
/// stage two (100 MB of mixed text, 32k rows: 105 MB of thread tables beside a 75 MB index; the
/// run's peak 367 -> 301 MB).
pub(super) fn count_index(
    flat: &Flat,
    threads: usize,
    shards: Option<usize>,
    ids: std::ops::Range<u32>,
) -> (PairIndex, Option<Arena>) {
    let n = flat.units();
    let k = shards.unwrap_or_else(|| PairIndex::shards_for(n));
    let chunk = n.div_ceil(threads).max(1024);
    let ranges: Vec<std::ops::Range<usize>> =
        (0..n).step_by(chunk).map(|s| s..(s + chunk).min(n)).collect();
    let width = ids.end.saturating_sub(ids.start) as usize;
    if width <= DENSE_SYMBOLS {
        let mut index = PairIndex::new(k);
        let arena = dense_index(flat, &ranges, ids.start, width, &mut index);
        return (index, Some(arena));
    }
    if k > 1 {
        let mut index = PairIndex::new(k);
        let per = k.div_ceil(threads.clamp(1, k));
        let route = &*index.route;
        index.shards.par_chunks_mut(per).enumerate().for_each(|(g, own)| {
            let lo = g * per;
            for wi in 0..n {
                let stamp = wi as u32 + 1;
                let count = flat.meta[wi].count as i64;
                for w in flat.unit(wi).windows(2) {
                    if w[0] == NO_SYMBOL || w[1] == NO_SYMBOL {
                        continue;
                    }
                    let p = pack(w[0], w[1]);
                    let Some(m) = shard_of(route, p).checked_sub(lo).and_then(|i| own.get_mut(i))
                    else {
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
        });
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

/// [`count_index`] for pairs that may be dropped: a table in shards is counted
/// `tuning.count_rounds` runs of shards at a time, and after each round the pairs counted below
/// a bound leave their shards, so the whole table of pairs is never alive at once (SuperBPE's
/// stage two on 100 MB: 2.6 M pairs counted, 194 k kept). The bound comes from the first round,
/// a share of the hash space: half the floor that keeps that share of `heap_keep` pairs, or a
/// quarter of its largest count, whichever is lower (the engine's own drop, next, takes what it
/// would have taken). A pair's count is exact or the pair is gone; dropping changes no merge
/// (see [`super::engine`]'s `untracked`). Returns the index, its place lists if the dense table
/// made them, the largest count dropped, and how many pairs were counted.
pub(super) fn count_index_in_rounds(
    flat: &Flat,
    threads: usize,
    tuning: super::Tuning,
    ids: std::ops::Range<u32>,
) -> (PairIndex, Option<Arena>, u64, usize) {
    let n = flat.units();
    let k = tuning.shards.unwrap_or_else(|| PairIndex::shards_for(n));
    let width = ids.end.saturating_sub(ids.start) as usize;
    if width <= DENSE_SYMBOLS || k == 1 || tuning.count_rounds <= 1 {
        let (index, placed) = count_index(flat, threads, tuning.shards, ids);
        let counted = index.len();
        return (index, placed, 0, counted);
    }
    let mut index = PairIndex::new(k);
    let per_round = k.div_ceil(tuning.count_rounds.min(k));
    let (mut below, mut dropped, mut counted) = (1i64, 0i64, 0usize);
    for lo in (0..k).step_by(per_round) {
        let hi = (lo + per_round).min(k);
        let per = (hi - lo).div_ceil(threads.clamp(1, hi - lo));
        let route = &*index.route;
        index.shards[lo..hi].par_chunks_mut(per).enumerate().for_each(|(g, own)| {
            let first = lo + g * per;
            for wi in 0..n {
                let stamp = wi as u32 + 1;
                let count = flat.meta[wi].count as i64;
                for w in flat.unit(wi).windows(2) {
                    if w[0] == NO_SYMBOL || w[1] == NO_SYMBOL {
                        continue;
                    }
                    let p = pack(w[0], w[1]);
                    let Some(m) =
                        shard_of(route, p).checked_sub(first).and_then(|i| own.get_mut(i))
                    else {
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
        });
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

/// Up to this many symbols (an alphabet before any merge: English 103, code 442), the index is
/// built in a table with a cell per pair of symbols (`width²` cells of 16 bytes, 4 MB at most a
/// thread) and moved into the map at the end, one insert per distinct pair: the two passes over
/// the units then index an array, where each looked the pair up in a map (code under `front`:
/// 1,043 M instructions, 9% of a run, for 8.3 M symbol pairs).
const DENSE_SYMBOLS: usize = 512;

/// [`count_pairs`] and [`place_pairs`] in a table of `width²` cells (symbol ids from `base`),
/// the pairs then moved into `index`: the same counts, lengths and place lists.
fn dense_index(
    flat: &Flat,
    ranges: &[std::ops::Range<usize>],
    base: u32,
    width: usize,
    index: &mut PairIndex,
) -> Arena {
    let cell = |x: u32, y: u32| (x - base) as usize * width + (y - base) as usize;
    let parts: Vec<Vec<PairInfo>> = ranges
        .par_iter()
        .map(|r| {
            let mut t = vec![PairInfo::default(); width * width];
            for wi in r.clone() {
                let s = flat.unit(wi);
                let stamp = wi as u32 + 1;
                let c = flat.meta[wi].count as i64;
                for w in s.windows(2) {
                    if w[0] == NO_SYMBOL || w[1] == NO_SYMBOL {
                        continue;
                    }
                    let e = &mut t[cell(w[0], w[1])];
                    e.count += c;
                    if e.at != stamp {
                        e.at = stamp;
                        e.len += 1;
                    }
                }
            }
            t
        })
        .collect();
    let mut parts = parts.into_iter();
    let mut table = parts.next().unwrap_or_else(|| vec![PairInfo::default(); width * width]);
    for t in parts {
        for (e, o) in table.iter_mut().zip(&t) {
            e.count += o.count;
            e.len += o.len;
        }
    }
    // the blocks, in cell order, then one pass over the units (as `place_pairs`)
    struct Dense {
        table: Vec<PairInfo>,
        base: u32,
        width: usize,
    }
    fn find(d: &mut Dense, p: u64) -> Option<&mut PairInfo> {
        let (x, y) = unpack(p);
        let k = (x - d.base) as usize * d.width + (y - d.base) as usize;
        d.table.get_mut(k)
    }
    let mut arena = alloc_blocks(block_total(table.iter()), table.iter_mut());
    let mut dense = Dense { table, base, width };
    fill_places(flat, &mut arena, &mut dense, find);
    let table = dense.table;
    close_blocks(&mut arena, table.iter());
    for (k, v) in table.iter().enumerate() {
        if v.len == 0 {
            continue;
        }
        let (x, y) = ((k / width) as u32 + base, (k % width) as u32 + base);
        index.entry(pack(x, y)).or_insert(*v);
    }
    arena
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

    #[test]
    fn the_dense_table_and_the_map_build_the_same_index() {
        // symbols 10..16 (and NO_SYMBOL, which is in no pair), 3,000 units of 0 to 12 symbols
        // with counts 1 to 5, on 1 and 3 threads; the map is forced by a wider id range
        let mut flat = Flat::default();
        let mut x = 11u32;
        let mut next = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            x >> 16
        };
        for _ in 0..3000 {
            let len = next() % 13;
            let unit: Vec<u32> = (0..len)
                .map(|_| match next() % 8 {
                    7 => NO_SYMBOL,
                    s => 10 + s % 6,
                })
                .collect();
            let count = 1 + next() as u64 % 5;
            flat.push(&unit, count);
        }
        for threads in [1, 3] {
            let (di, da) = build_index(&flat, threads, None, 10..16);
            let (mi, ma) = build_index(&flat, threads, None, 0..100_000);
            let (d, m) = (listed(&di, &da), listed(&mi, &ma));
            assert_eq!(d, m);
            // and the counts are those of the definition, worked out from the units
            let mut want: std::collections::BTreeMap<u64, i64> = Default::default();
            for i in 0..flat.units() {
                for w in flat.unit(i).windows(2) {
                    if w[0] != NO_SYMBOL && w[1] != NO_SYMBOL {
                        *want.entry(pack(w[0], w[1])).or_default() += flat.meta[i].count as i64;
                    }
                }
            }
            let got: std::collections::BTreeMap<u64, i64> =
                d.iter().map(|(k, c, _)| (*k, *c)).collect();
            assert_eq!(got, want);
            assert_eq!(da.words.len(), ma.words.len());
        }
    }
}
