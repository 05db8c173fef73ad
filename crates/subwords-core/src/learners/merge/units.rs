//! Unit storage: every unit's symbols in one flat array with a 16-byte record per unit
//! ([`Flat`], [`Meta`]); the pair index's place lists longer than one id in one `u32` arena
//! ([`Arena`]); and the rewrite of a merge's units in place ([`rewrite`]), each thread on its own
//! units of the shared array ([`SharedSyms`]), reporting the count changes and new places in a
//! [`Delta`].

use rayon::prelude::*;

use super::index::{drop_pairs, PairIndex, PairInfo};
use super::{pack, unpack, NO_SYMBOL};

/// All units' symbols in one flat array (unit `i` lives at `start[i]..start[i] + len[i]` and
/// shrinks in place), so a merge walks memory instead of chasing one allocation per unit.
///
/// A unit's start, length and count sit together in one record: a merge visits units in no
/// useful order, and one cache miss per unit is better than three.
#[derive(Default)]
pub struct Flat {
    pub syms: Vec<u32>,
    pub meta: Vec<Meta>,
}

/// A unit's record: 16 bytes, its count and, in one `u64`, its start (34 bits: 16 G symbols,
/// a 64 GB array) and its length (30 bits: a billion symbols). Unpacked (a `u64` start, the count
/// and a `u32` length, padded) it takes 24 bytes: 160 MB more on a 20 M-unit table.
#[derive(Clone, Copy, Default)]
pub struct Meta {
    pub count: u64,
    at: u64,
}

const LEN_BITS: u32 = 30;

impl Meta {
    #[inline]
    pub fn start(&self) -> usize {
        (self.at >> LEN_BITS) as usize
    }
    #[inline]
    pub fn len(&self) -> usize {
        (self.at & ((1 << LEN_BITS) - 1)) as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A unit only shrinks under a merge: `len` is at most its length now.
    #[inline]
    pub fn set_len(&mut self, len: u32) {
        debug_assert!(len as usize <= self.len());
        self.set_len_within(len);
    }
    /// A new length within the unit's [`Flat::room`] (a Picky BPE removal lengthens a unit).
    #[inline]
    pub fn set_len_within(&mut self, len: u32) {
        self.at = (self.at & !((1 << LEN_BITS) - 1)) | len as u64;
    }
}

impl Flat {
    /// An empty array with room for `units` units of `symbols` symbols in all (reserved once,
    /// so a large table is not copied as the arrays double).
    pub fn with_capacity(units: usize, symbols: usize) -> Self {
        Flat { syms: Vec::with_capacity(symbols), meta: Vec::with_capacity(units) }
    }
    pub fn push(&mut self, symbols: &[u32], count: u64) {
        let (start, len) = (self.syms.len() as u64, symbols.len() as u64);
        assert!(
            len < 1 << LEN_BITS && start + len < 1 << (64 - LEN_BITS),
            "the merge engine holds units of up to 2^30 symbols and 2^34 symbols in all; pre-split the \
             text or train from a pruned table (--min-unit-count)"
        );
        self.meta.push(Meta { count, at: start << LEN_BITS | len });
        self.syms.extend_from_slice(symbols);
    }
    pub fn units(&self) -> usize {
        self.meta.len()
    }
    pub fn unit(&self, i: usize) -> &[u32] {
        let m = self.meta[i];
        &self.syms[m.start()..m.start() + m.len()]
    }
    /// How many symbols unit `i` may hold: its length when it was pushed (the units lie in the
    /// array in the order pushed).
    pub fn room(&self, i: usize) -> usize {
        let end = self.meta.get(i + 1).map_or(self.syms.len(), |m| m.start());
        end - self.meta[i].start()
    }
    /// Σ count × length.
    pub fn pieces(&self) -> u64 {
        self.meta.iter().map(|m| m.len() as u64 * m.count).sum()
    }
}

/// The place lists longer than one id, in blocks of one `u32` array. A block is a multiple of 4
/// words, the first holding its capacity (the ids it has room for), and is addressed by its
/// start / 4, so a `u32` addresses 64 GB of lists. A list that outgrows its block moves to a new
/// block twice the size at the end; the old block, and the blocks of pairs merged or gone, are
/// garbage until [`Arena::compact`], which also drops the stale ids and packs the blocks in place.
#[derive(Default)]
pub(super) struct Arena {
    pub(super) words: Vec<u32>,
}

/// Words of a block with room for `ids` ids (the capacity word included).
#[inline]
pub(super) fn block_words(ids: usize) -> usize {
    (ids + 1).div_ceil(4) * 4
}

impl Arena {
    /// A new block at the end with room for at least `ids` ids; its capacity word is set.
    #[inline]
    pub(super) fn alloc(&mut self, ids: usize) -> u32 {
        let size = block_words(ids);
        let start = self.words.len();
        assert!(
            (start / 4) < u32::MAX as usize,
            "the merge engine's place lists passed 64 GB; train from a pruned table (--min-unit-count)"
        );
        self.words.resize(start + size, 0);
        self.words[start] = (size - 1) as u32;
        (start / 4) as u32
    }

    /// Adds `id` to the list of `info` (unless it is already the list's last id).
    #[inline]
    pub(super) fn push(&mut self, info: &mut PairInfo, id: u32) {
        match info.len {
            0 => {
                info.at = id;
                info.len = 1;
            }
            1 => {
                if info.at == id {
                    return;
                }
                let b = self.alloc(2);
                let s = b as usize * 4;
                self.words[s + 1] = info.at;
                self.words[s + 2] = id;
                info.at = b;
                info.len = 2;
            }
            n => {
                let n = n as usize;
                let mut s = info.at as usize * 4;
                if self.words[s + n] == id {
                    return;
                }
                let cap = self.words[s] as usize;
                if n == cap {
                    let b = self.alloc(2 * (cap + 1) - 1);
                    let t = b as usize * 4;
                    self.words.copy_within(s + 1..s + 1 + n, t + 1);
                    info.at = b;
                    s = t;
                }
                self.words[s + 1 + n] = id;
                info.len += 1;
            }
        }
    }

    /// Adds `ids` (in order, none twice in a row) to the list of `info`, as [`Arena::push`] does
    /// one by one, with room for `more` ids after them when the list moves to a new block. One
    /// by one, a new pair's list of a large merge grew through blocks of 2, 4, 8, ... ids, which
    /// left as much garbage as the list and up to as much again of room at its end; sized from
    /// the merge's places, it takes one block of their size.
    #[inline]
    pub(super) fn extend(&mut self, info: &mut PairInfo, ids: &[u32], more: usize) {
        let ids = match (info.len, ids) {
            (_, []) => return,
            // a list of one id lives in the slot
            (0, [id]) => return self.push(info, *id),
            (1, &[id, ..]) if info.at == id => &ids[1..],
            (n, &[id, ..]) if n >= 2 && self.words[info.at as usize * 4 + n as usize] == id => {
                &ids[1..]
            }
            _ => ids,
        };
        if ids.is_empty() {
            return;
        }
        let n = info.len as usize;
        let need = n + ids.len();
        let mut s;
        if n <= 1 {
            let b = self.alloc((need + more).max(2));
            s = b as usize * 4;
            if n == 1 {
                self.words[s + 1] = info.at;
            }
            info.at = b;
        } else {
            s = info.at as usize * 4;
            let cap = self.words[s] as usize;
            if need > cap {
                let b = self.alloc((2 * (cap + 1) - 1).max(need + more));
                let t = b as usize * 4;
                self.words.copy_within(s + 1..s + 1 + n, t + 1);
                info.at = b;
                s = t;
            }
        }
        self.words[s + 1 + n..s + 1 + need].copy_from_slice(ids);
        info.len = need as u32;
    }

    /// The ids of `info`'s list, which is left empty (its block becomes garbage).
    #[inline]
    pub(super) fn take(&mut self, info: &mut PairInfo) -> Vec<u32> {
        let out = match info.len {
            0 => Vec::new(),
            1 => vec![info.at],
            n => {
                let s = info.at as usize * 4 + 1;
                self.words[s..s + n as usize].to_vec()
            }
        };
        info.len = 0;
        out
    }

    /// Drops the pairs no unit holds any more, and every stale id (a unit listed under a pair it no
    /// longer holds), and packs the remaining blocks tightly in place, in their current order.
    /// Only the layout changes: each list still holds every unit that holds its pair.
    ///
    /// With `below` past 1 it also drops the live pairs counted below it (see `Engine::untracked`)
    /// and returns the largest count dropped (0: none).
    pub(super) fn compact(&mut self, index: &mut PairIndex, flat: &Flat, below: i64) -> u64 {
        let dropped = drop_pairs(index, below);
        let mut blocks: Vec<(u32, u64)> =
            index.iter().filter(|(_, v)| v.len >= 2).map(|(&k, v)| (v.at, k)).collect();
        blocks.sort_unstable();
        // 1. each list, in its own block: sort, drop repeats and stale ids (in parallel: the
        //    blocks are disjoint); 2. pack the blocks down in their order and update the slots
        let lens: Vec<u32> = {
            let words = SharedSyms(self.words.as_mut_ptr());
            let index = &*index;
            blocks
                .par_iter()
                .with_min_len(256)
                .map(|&(at, key)| {
                    let n = index[&key].len as usize;
                    // SAFETY: every block belongs to one pair, and each pair is in `blocks` once
                    let ids: &mut [u32] =
                        unsafe { std::slice::from_raw_parts_mut(words.at(at as usize * 4 + 1), n) };
                    live_ids(ids, key, flat) as u32
                })
                .collect()
        };
        let w = &mut self.words;
        let mut dst = 0usize;
        for (&(at, key), &m) in blocks.iter().zip(&lens) {
            let info = index.get_mut(&key).expect("a listed pair is in the index");
            let src = at as usize * 4;
            let m = m as usize;
            info.len = m as u32;
            if m <= 1 {
                // a live pair is in at least one unit, which its list holds
                info.at = if m == 1 { w[src + 1] } else { 0 };
                continue;
            }
            // dst <= src: the copy never runs past what is still to be moved
            w.copy_within(src + 1..src + 1 + m, dst + 1);
            let size = block_words(m);
            w[dst] = (size - 1) as u32;
            info.at = (dst / 4) as u32;
            dst += size;
        }
        w.truncate(dst);
        w.shrink_to_fit();
        dropped
    }
}

/// Sorts `ids`, keeps each unit once and only the units that still hold `pair`, at the front;
/// returns how many are kept. The units are visited forward through memory, with a unit's
/// record and symbols prefetched a few ids ahead (one cache miss per id otherwise).
pub(super) fn live_ids(ids: &mut [u32], pair: u64, flat: &Flat) -> usize {
    let (a, b) = unpack(pair);
    ids.sort_unstable();
    let n = ids.len();
    const AHEAD: usize = 8;
    let mut kept = 0usize;
    let mut last = u32::MAX;
    for k in 0..n {
        if k + AHEAD < n {
            prefetch(flat.meta.as_ptr().wrapping_add(ids[k + AHEAD] as usize) as *const u8);
            let near = flat.meta[ids[k + AHEAD / 2] as usize];
            prefetch(flat.syms.as_ptr().wrapping_add(near.start()) as *const u8);
        }
        let id = ids[k];
        if id == last {
            continue;
        }
        last = id;
        if first_site(flat.unit(id as usize), a, b).is_some() {
            // kept <= k: never past what is still to be read
            ids[kept] = id;
            kept += 1;
        }
    }
    kept
}

/// Where `(a, b)` first occurs in `s`: the stale check of [`live_ids`] and the first site of
/// [`rewrite`].
#[inline]
fn first_site(s: &[u32], a: u32, b: u32) -> Option<usize> {
    let i = next_site(s, 0, a, b);
    (i < s.len()).then_some(i)
}

/// Where `(a, b)` first occurs in `s` at `from` or after (`s.len()` when it does not). On
/// x86-64, four positions at a time with SSE2 (part of every x86-64 CPU): the symbols at `i`
/// and at `i + 1` compared with `a` and `b`, and the two masks and-ed. The scan one symbol at a
/// time was a third of the merge loop on code under `front` (18 symbols a unit, up to 1,171,
/// scanned once for every merge that touches the unit); a portable eight-wide mask loop, which
/// the compiler left scalar, cost as much.
#[inline]
fn next_site(s: &[u32], from: usize, a: u32, b: u32) -> usize {
    let n = s.len();
    let mut i = from;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_and_si128, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128,
            _mm_movemask_ps, _mm_set1_epi32,
        };
        // SAFETY: SSE2 is in every x86-64 CPU; both unaligned loads read `s[i..i + 5]`, inside
        // `s` while `i + 4 < n`, and the last step's `s[n - 5..n]`.
        unsafe {
            let (va, vb) = (_mm_set1_epi32(a as i32), _mm_set1_epi32(b as i32));
            let p = s.as_ptr();
            while i + 4 < n {
                let x = _mm_loadu_si128(p.add(i) as *const __m128i);
                let y = _mm_loadu_si128(p.add(i + 1) as *const __m128i);
                let both = _mm_and_si128(_mm_cmpeq_epi32(x, va), _mm_cmpeq_epi32(y, vb));
                let mask = _mm_movemask_ps(_mm_castsi128_ps(both));
                if mask != 0 {
                    return i + mask.trailing_zeros() as usize;
                }
                i += 4;
            }
            // the last one to three positions in one more step, the four that end the unit,
            // those before `i` masked off (one symbol at a time, the tail was a tenth of the
            // rewrite's scan on units of nine symbols)
            if i + 1 < n && n >= 5 {
                let at = n - 5;
                let x = _mm_loadu_si128(p.add(at) as *const __m128i);
                let y = _mm_loadu_si128(p.add(at + 1) as *const __m128i);
                let both = _mm_and_si128(_mm_cmpeq_epi32(x, va), _mm_cmpeq_epi32(y, vb));
                let mask = _mm_movemask_ps(_mm_castsi128_ps(both)) & (!0 << (i - at));
                return if mask != 0 { at + mask.trailing_zeros() as usize } else { n };
            }
        }
    }
    while i + 1 < n {
        if s[i] == a && s[i + 1] == b {
            return i;
        }
        i += 1;
    }
    n
}

/// What one thread found while rewriting its share of a merge's units: for each pair whose count
/// changed (in the order first met), the change and the units that now hold it (new places).
///
/// The engine keeps one from merge to merge and clears it instead of dropping it, and one table
/// leads to a row holding both the count change and the new places, so a new pair is looked up
/// once.
#[derive(Default)]
pub(super) struct Delta {
    /// pair -> its row in `changes`: an open-addressing table of `(pair, row)` slots, linear
    /// probing, a power of two at most half full ([`EMPTY`]: a free slot), emptied slot by slot
    /// through `taken`. A merge changes few pairs, so the table stays small and warm.
    table: Vec<(u64, u32)>,
    /// The slots in use, in the order taken.
    taken: Vec<u32>,
    /// (pair, count change, units that gained it); rows from `used` on are spare (their lists
    /// empty, their allocations kept for the next merge)
    pub(super) changes: Vec<(u64, i64, Vec<u32>)>,
    used: usize,
    /// The units rewritten, listed only when `track` is set (Picky BPE's lists of the units
    /// holding a token); their new lengths are written in their records as they are rewritten.
    pub(super) units: Vec<u32>,
    pub(super) track: bool,
    /// Σ count over the merge sites (how many a's and b's became c's).
    pub(super) sites: i64,
}

/// A free slot of [`Delta`]'s table (no pair is `(NO_SYMBOL, NO_SYMBOL)`).
const EMPTY: u64 = u64::MAX;

/// Past these sizes a kept [`Delta`] lets its allocations go: a large merge's table and lists
/// should not outlive it.
const DELTA_KEEP_ROWS: usize = 1 << 12;
const DELTA_KEEP_LIST: usize = 1 << 8;

/// The first slot of pair `q` in a table of `mask + 1` slots.
#[inline(always)]
fn slot_of(q: u64, mask: usize) -> usize {
    (q.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & mask
}

impl Delta {
    /// The row of `q`, made if need be. Found in a table of its own, not a `HashMap`: the map's
    /// probe was half of the rewrite's instructions on code under `front` (6.8 M lookups, 51
    /// instructions each, on 8 MB).
    #[inline(always)]
    fn change(&mut self, q: u64) -> &mut (u64, i64, Vec<u32>) {
        debug_assert!(!self.table.is_empty(), "a delta is made ready before its changes");
        let k = match self.row_in_table(q) {
            Some(k) => k,
            None => self.change_new(q),
        };
        debug_assert!((k as usize) < self.used);
        // SAFETY: every row the table holds is below `used`, at most `changes.len()` (the
        // bounds check was two of a lookup's ~25 instructions in the rewrite)
        unsafe { self.changes.get_unchecked_mut(k as usize) }
    }

    /// Gives the table its first slots, so that [`Delta::change`] need not test for them at
    /// every lookup: called once by each caller before its changes.
    #[inline]
    pub(super) fn ready(&mut self) {
        if self.table.is_empty() {
            self.grow();
        }
    }

    /// The table at its first size (or doubled) with the rows so far put back.
    #[inline(never)]
    fn grow(&mut self) {
        let size = (2 * self.table.len()).max(1024);
        self.table.clear();
        self.table.resize(size, (EMPTY, 0));
        self.taken.clear();
        for k in 0..self.used {
            let p = self.changes[k].0;
            self.put(p, k as u32);
        }
    }

    /// A row for `q`, which has none: a spare one reused when there is one; its index.
    #[inline(never)]
    fn change_new(&mut self, q: u64) -> u32 {
        if 2 * (self.used + 1) > self.table.len() {
            self.grow();
        }
        if self.used == self.changes.len() {
            self.changes.push((q, 0, Vec::new()));
        } else {
            let row = &mut self.changes[self.used];
            row.0 = q;
            row.1 = 0;
        }
        let k = self.used as u32;
        self.used += 1;
        self.put(q, k);
        k
    }

    /// `q`, which the table does not hold, into its first free slot.
    #[inline]
    fn put(&mut self, q: u64, k: u32) {
        let mask = self.table.len() - 1;
        let mut h = slot_of(q, mask);
        while self.table[h].0 != EMPTY {
            h = (h + 1) & mask;
        }
        self.table[h] = (q, k);
        self.taken.push(h as u32);
    }

    /// The changed pairs, in the order first met.
    #[inline]
    pub(super) fn changes(&self) -> &[(u64, i64, Vec<u32>)] {
        &self.changes[..self.used]
    }

    /// The row of `q`, if it has one.
    #[inline(always)]
    pub(super) fn row_of(&self, q: u64) -> Option<u32> {
        if self.table.is_empty() {
            return None;
        }
        self.row_in_table(q)
    }

    /// [`Delta::row_of`] in a table that has slots.
    #[inline(always)]
    fn row_in_table(&self, q: u64) -> Option<u32> {
        let mask = self.table.len() - 1;
        let mut h = slot_of(q, mask);
        loop {
            let (p, k) = self.table[h];
            if p == q {
                return Some(k);
            }
            if p == EMPTY {
                return None;
            }
            h = (h + 1) & mask;
        }
    }

    /// Empties it for the next merge.
    #[inline]
    pub(super) fn clear(&mut self) {
        if self.table.len() > 2 * DELTA_KEEP_ROWS {
            self.table = Vec::new();
            self.taken = Vec::new();
        } else {
            for &h in &self.taken {
                self.table[h as usize].0 = EMPTY;
            }
            self.taken.clear();
        }
        self.changes.truncate(DELTA_KEEP_ROWS);
        let n = self.used.min(self.changes.len());
        for row in &mut self.changes[..n] {
            if row.2.capacity() > DELTA_KEEP_LIST {
                row.2 = Vec::new();
            } else {
                row.2.clear();
            }
        }
        self.used = 0;
        self.units.clear();
        self.sites = 0;
    }
}

/// The flat symbol array shared by the threads of one merge. Each thread writes only the units
/// of its own share, and a unit appears in one share only (the list is deduped first), so no two
/// threads touch the same memory.
#[derive(Clone, Copy)]
pub(super) struct SharedSyms(pub(super) *mut u32);
unsafe impl Send for SharedSyms {}
unsafe impl Sync for SharedSyms {}

impl SharedSyms {
    /// The address `i` words in (a method, so a closure captures the whole `SharedSyms`).
    #[inline]
    pub(super) fn at(&self, i: usize) -> *mut u32 {
        self.0.wrapping_add(i)
    }
}

/// The unit records shared by the threads of one merge, as [`SharedSyms`]: each thread reads
/// and writes the records of its own share's units only. A rewritten unit's length is written
/// as it is rewritten, not listed and written after the merge (a list push and a second pass
/// over the units).
#[derive(Clone, Copy)]
pub(super) struct SharedMeta {
    ptr: *mut Meta,
    len: usize,
}
unsafe impl Send for SharedMeta {}
unsafe impl Sync for SharedMeta {}

impl SharedMeta {
    pub(super) fn new(meta: &mut [Meta]) -> Self {
        SharedMeta { ptr: meta.as_mut_ptr(), len: meta.len() }
    }
    #[inline(always)]
    fn get(&self, i: usize) -> Meta {
        assert!(i < self.len);
        // SAFETY: in bounds; only this unit's thread writes its record (see `SharedSyms`)
        unsafe { *self.ptr.add(i) }
    }
    #[inline(always)]
    fn set_len(&self, i: usize, len: u32) {
        assert!(i < self.len);
        // SAFETY: as `get`
        unsafe { (*self.ptr.add(i)).set_len(len) }
    }
    #[inline(always)]
    fn addr(&self, i: usize) -> *const u8 {
        self.ptr.wrapping_add(i) as *const u8
    }
}

/// Rewrites the units of `list` (distinct ids), joining `(a, b)` into `c`; adds the count
/// changes, the new places and the new lengths to `d` (empty, or kept from an earlier merge and
/// cleared).
pub(super) fn rewrite(
    syms: SharedSyms,
    meta: SharedMeta,
    list: &[u32],
    a: u32,
    b: u32,
    c: u32,
    d: &mut Delta,
) {
    d.ready();
    let join = Join { a, b, c, merged: pack(a, b) };
    // what the units lose of `(a, b)` itself: each site's, and under `a == b` the pairs either
    // side of a site (a change per site, looked up in the delta's table, was a fifth of its
    // lookups)
    let mut merged_lost = 0i64;
    const AHEAD: usize = 8;
    for (k, &wi) in list.iter().enumerate() {
        if let Some(&next) = list.get(k + AHEAD) {
            prefetch(meta.addr(next as usize));
            if let Some(&near) = list.get(k + AHEAD / 2) {
                let m = meta.get(near as usize);
                prefetch(syms.0.wrapping_add(m.start()) as *const u8);
            }
        }
        let m = meta.get(wi as usize);
        // SAFETY: units are disjoint ranges of the array and `list` holds each unit once across
        // all threads of this merge (see `SharedSyms`).
        let s: &mut [u32] =
            unsafe { std::slice::from_raw_parts_mut(syms.0.add(m.start()), m.len()) };
        // the first site; a unit without one (listed under a pair it has since lost) is left be,
        // and the symbols before it stay where they are
        let Some(i) = first_site(s, a, b) else { continue };
        let len = join_unit(s, i, wi, m.count as i64, &join, d, &mut merged_lost);
        meta.set_len(wi as usize, len);
        if d.track {
            d.units.push(wi);
        }
    }
    if merged_lost != 0 {
        d.change(join.merged).1 -= merged_lost;
    }
}

/// A merge's pair, `(a, b)` packed as `merged`, and the symbol `c` that joins it.
struct Join {
    a: u32,
    b: u32,
    c: u32,
    merged: u64,
}

/// Joins every site of `j.merged` in unit `wi` (symbols `s`, count `w`), the first at `i`:
/// the lost and gained pairs and the new places into `d`, the merged pair's own losses into
/// `merged_lost`; returns the unit's new length.
#[inline(always)]
fn join_unit(
    s: &mut [u32],
    mut i: usize,
    wi: u32,
    w: i64,
    join: &Join,
    d: &mut Delta,
    merged_lost: &mut i64,
) -> u32 {
    let (a, b, c, merged) = (join.a, join.b, join.c, join.merged);
    let n = s.len();
    // joined in place: `j` (where the next symbol goes) trails `i` from the first site on,
    // so the old symbols at `i - 1` and after are still there to read the lost pairs from
    let mut j = i;
    let mut last_old = usize::MAX;
    let mut sites = 0i64;
    // each site: the pairs lost around it, read from the old symbols; the pairs gained,
    // `(left, c)` with the symbol already in place before it and `(c, right)` with the old
    // symbol after it unless another site starts there (its own `(c, c)` is that one's
    // left pair); then the stretch up to the next site moved down in one copy
    loop {
        if i > 0 {
            if last_old != i - 1 {
                lose::<true>(d, merged_lost, merged, s[i - 1], s[i], w);
            }
            gain::<true>(d, s[j - 1], c, w, wi);
        }
        // the site's own pair, `(a, b)` (sites are two or more apart: the last pair read is
        // at most the one before it)
        *merged_lost += w;
        let mut right = NO_SYMBOL;
        if i + 2 < n {
            right = s[i + 2];
            lose::<false>(d, merged_lost, merged, s[i + 1], right, w);
            last_old = i + 1;
        }
        sites += w;
        s[j] = c;
        j += 1;
        i += 2;
        let next = next_site(s, i, a, b);
        if next != i && i < n {
            gain::<false>(d, c, right, w, wi);
        }
        // (j < i: the stretch moves down; the symbol before `next` is read as it was; a
        // short one symbol by symbol, where a `memmove` call costs more than the copy)
        let len = next - i;
        if len <= 8 {
            // SAFETY: `j < i` and `next <= n`: both ranges lie in `s`, and a forward copy
            // one symbol at a time reads each symbol before it is overwritten
            unsafe {
                let p = s.as_mut_ptr();
                for k in 0..len {
                    *p.add(j + k) = *p.add(i + k);
                }
            }
        } else {
            s.copy_within(i..next, j);
        }
        j += len;
        i = next;
        if i >= n {
            break;
        }
    }
    d.sites += sites;
    j as u32
}

/// A pair a unit of count `w` loses, unless it borders a cut ([`NO_SYMBOL`]); the merged pair's
/// own losses are summed in `merged_lost`, one row change for the whole call. `CUT_LEFT`: which
/// of the two may be a cut (the other is `a` or `b` of the merge).
#[inline(always)]
fn lose<const CUT_LEFT: bool>(
    d: &mut Delta,
    merged_lost: &mut i64,
    merged: u64,
    x: u32,
    y: u32,
    w: i64,
) {
    if if CUT_LEFT { x != NO_SYMBOL } else { y != NO_SYMBOL } {
        let q = pack(x, y);
        if q == merged {
            *merged_lost += w;
        } else {
            d.change(q).1 -= w;
        }
    }
}

/// A pair unit `wi` (count `w`) gains, unless it borders a cut: its count and the new place.
/// `CUT_LEFT`: which of the two may be a cut (the other is the joined symbol).
#[inline(always)]
fn gain<const CUT_LEFT: bool>(d: &mut Delta, x: u32, y: u32, w: i64, wi: u32) {
    if if CUT_LEFT { x != NO_SYMBOL } else { y != NO_SYMBOL } {
        let row = d.change(pack(x, y));
        row.1 += w;
        if row.2.last() != Some(&wi) {
            row.2.push(wi);
        }
    }
}

/// Splits every occurrence of `x` in the units of `list` (distinct ids) into `parts` (Picky
/// BPE's removal of a token): each unit is rewritten from its first `x` on, in place, within its
/// [`Flat::room`] (a unit's pieces never outnumber the symbols it was pushed with, since each
/// piece spells one or more of them). Adds the count changes and the new places to `d` (the
/// pairs holding an `x` go, the pairs holding a part placed here come); returns Σ count ×
/// occurrences, and adds the units changed to `changed`.
pub(super) fn split_units(
    flat: &mut Flat,
    list: &[u32],
    x: u32,
    parts: &[u32],
    d: &mut Delta,
    changed: &mut Vec<u32>,
) -> i64 {
    d.ready();
    let mut out: Vec<u32> = Vec::new();
    let mut fresh: Vec<bool> = Vec::new();
    let mut occurrences = 0i64;
    for &wi in list {
        let m = flat.meta[wi as usize];
        let (st, n) = (m.start(), m.len());
        let s = &flat.syms[st..st + n];
        let Some(first) = s.iter().position(|&t| t == x) else { continue };
        let w = m.count as i64;
        let from = first.saturating_sub(1);
        for i in from..n - 1 {
            let (l, r) = (s[i], s[i + 1]);
            if (l == x || r == x) && l != NO_SYMBOL && r != NO_SYMBOL {
                d.change(pack(l, r)).1 -= w;
            }
        }
        // the unit from the symbol before the first `x`, with the split parts marked
        out.clear();
        fresh.clear();
        for &t in &s[from..] {
            if t == x {
                occurrences += w;
                out.extend_from_slice(parts);
                fresh.extend(parts.iter().map(|_| true));
            } else {
                out.push(t);
                fresh.push(false);
            }
        }
        for k in 0..out.len() - 1 {
            let (l, r) = (out[k], out[k + 1]);
            if (fresh[k] || fresh[k + 1]) && l != NO_SYMBOL && r != NO_SYMBOL {
                let row = d.change(pack(l, r));
                row.1 += w;
                if row.2.last() != Some(&wi) {
                    row.2.push(wi);
                }
            }
        }
        let len = from + out.len();
        assert!(
            len <= flat.room(wi as usize),
            "a split unit outgrew the symbols it was pushed with"
        );
        flat.syms[st + from..st + len].copy_from_slice(&out);
        flat.meta[wi as usize].set_len_within(len as u32);
        changed.push(wi);
    }
    occurrences
}

#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::super::index::{PairIndex, PairInfo};
    use super::super::pack;
    use super::*;

    fn ids(arena: &Arena, info: &PairInfo) -> Vec<u32> {
        match info.len {
            0 => vec![],
            1 => vec![info.at],
            n => {
                let s = info.at as usize * 4 + 1;
                arena.words[s..s + n as usize].to_vec()
            }
        }
    }

    #[test]
    fn next_site_is_the_first_pair_at_or_after_from() {
        // units of 0 to 40 symbols over 3 symbols (pairs recur, `a == b` among them; the
        // four-wide steps and the single ones both come), every pair and every start, against
        // the definition: the least i >= from with s[i] == a and s[i + 1] == b, or the length
        let mut x = 7u32;
        for len in 0..41usize {
            for _ in 0..40 {
                let s: Vec<u32> = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                        (x >> 16) % 3
                    })
                    .collect();
                for (a, b) in (0..3).flat_map(|a| (0..3).map(move |b| (a, b))) {
                    for from in 0..=len {
                        let want = (from..len.saturating_sub(1))
                            .find(|&i| s[i] == a && s[i + 1] == b)
                            .unwrap_or(len);
                        assert_eq!(next_site(&s, from, a, b), want, "{s:?} {a} {b} {from}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_delta_keeps_one_row_per_pair_through_growth_and_clears() {
        // 3,000 pairs (the table grows from 1,024 slots to 8,192), each met three times with
        // changes 1, 2 and 4, in two rounds with a clear between: each pair has one row, in
        // the order first met, with the sum 7, and a cleared delta finds none of them
        let mut d = Delta::default();
        for round in 0..2u64 {
            d.ready();
            let pairs: Vec<u64> =
                (0..3000u64).map(|i| pack(i as u32 % 97, (i * 7 + round) as u32)).collect();
            for w in [1i64, 2, 4] {
                for &q in &pairs {
                    d.change(q).1 += w;
                }
            }
            let rows = d.changes();
            assert_eq!(rows.len(), pairs.len());
            for (row, &q) in rows.iter().zip(&pairs) {
                assert_eq!((row.0, row.1), (q, 7));
            }
            for (k, &q) in pairs.iter().enumerate() {
                assert_eq!(d.row_of(q), Some(k as u32));
            }
            d.clear();
            assert!(d.changes().is_empty());
            assert!(pairs.iter().all(|&q| d.row_of(q).is_none()));
        }
    }

    #[test]
    fn lists_grow_out_of_the_slot_and_their_blocks() {
        let mut arena = Arena::default();
        let mut p = PairInfo::default();
        let mut q = PairInfo::default();
        for id in 0..20u32 {
            arena.push(&mut p, id);
            arena.push(&mut p, id); // the list's last id again: not listed twice
            if id % 3 == 0 {
                arena.push(&mut q, 100 + id);
            }
        }
        assert_eq!(ids(&arena, &p), (0..20).collect::<Vec<u32>>());
        assert_eq!(ids(&arena, &q), vec![100, 103, 106, 109, 112, 115, 118]);
        // p moved through blocks of 4, 8, 16 and 32 words (3, 7, 15, 31 ids) and q through 4
        // and 8, each block at the end: 4 + 4 + 8 + 8 + 16 + 32 = 72 words
        assert_eq!(arena.words.len(), 72);
        assert_eq!(arena.take(&mut q), vec![100, 103, 106, 109, 112, 115, 118]);
        assert_eq!(q.len, 0);
    }

    #[test]
    fn compaction_drops_stale_ids_and_dead_pairs_and_packs_the_blocks() {
        // units: 0 = [1 2 3], 1 = [1 2], 2 = [2 3], 3 = [3 1 2]
        let mut flat = Flat::default();
        for u in [&[1u32, 2, 3][..], &[1, 2], &[2, 3], &[3, 1, 2]] {
            flat.push(u, 1);
        }
        let mut arena = Arena::default();
        let mut index = PairIndex::new(1);
        let mut add = |index: &mut PairIndex, a: u32, b: u32, count: i64, list: &[u32]| {
            let e = index.entry(pack(a, b)).or_default();
            e.count = count;
            for &id in list {
                arena.push(e, id);
            }
        };
        // (1, 2) lists unit 2, which does not hold it, and unit 3 twice
        add(&mut index, 1, 2, 3, &[3, 0, 2, 1, 3]);
        // (2, 3) lists units 1 and 3 (stale) around its two real units: one id is left
        add(&mut index, 2, 3, 2, &[1, 0, 3, 2]);
        // (9, 9) is gone from every unit (count 0): it leaves the index
        add(&mut index, 9, 9, 0, &[0, 1]);
        add(&mut index, 3, 1, 1, &[3]);
        arena.compact(&mut index, &flat, 1);
        assert!(index.get(&pack(9, 9)).is_none());
        assert_eq!(ids(&arena, &index[&pack(1, 2)]), vec![0, 1, 3]);
        assert_eq!(ids(&arena, &index[&pack(2, 3)]), vec![0, 2]);
        assert_eq!(ids(&arena, &index[&pack(3, 1)]), vec![3]);
        // two lists of 3 and 2 ids: one 4-word block each
        assert_eq!(arena.words.len(), 8);
    }
}
