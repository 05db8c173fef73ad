//! The merge engine shared by BPE (score = pair count) and, later, WordPiece.
//!
//! Input: units spelled as symbol ids with counts. Each round takes the best pair, joins it into
//! one symbol everywhere (left to right, without overlap), and adds the joined piece as a row.
//!
//! Incremental: a pair index (`pair -> count`, `pair -> units containing it`) and a max-heap with
//! lazy deletion. A merge touches only the units that contain its pair; in each of them only the
//! pairs at positions next to a merge site change, and only those are re-counted. A popped heap
//! entry whose count no longer matches the index is stale and is dropped.
//!
//! Counting (DESIGN §2): count(a, b) = Σ count(unit) × adjacent occurrences, overlapping positions
//! included. Ties: the larger count wins, then the smaller `(left, right)` by the pieces' bytes as
//! spelled (UTF-8 byte order is code-point order), so `▁` (9601) loses every tie to a letter.
//! Nothing depends on hash-map order or on the order the units arrive in.
//!
//! Interning: a joined piece that already exists (two merge paths to one string) reuses that row;
//! the merge still gets a rank, but no row is added.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::rc::Rc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Symbol id used for symbols outside the alphabet (alphabet limits): never part of a pair.
pub const NO_SYMBOL: u32 = u32::MAX;

#[inline]
fn pack(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}
#[inline]
fn unpack(p: u64) -> (u32, u32) {
    ((p >> 32) as u32, p as u32)
}

pub struct Unit {
    pub symbols: Vec<u32>,
    pub count: u64,
}

/// The symbol table the engine extends: texts by id, their lengths in alphabet symbols, and the
/// text -> id index used for interning.
pub struct Symbols {
    pub texts: Vec<Rc<[u8]>>,
    pub lengths: Vec<u32>,
    pub index: FxHashMap<Box<[u8]>, u32>,
    /// How two pieces are written together (`##` is stripped from the right under continuation).
    pub strip_right: Vec<u8>,
    /// Id of the first symbol: symbol ids coincide with row ids.
    pub base: u32,
}

impl Symbols {
    pub fn join(&self, a: u32, b: u32) -> Vec<u8> {
        let l = self.text(a);
        let r = self.text(b);
        let r: &[u8] = if !self.strip_right.is_empty() && r.starts_with(&self.strip_right) {
            &r[self.strip_right.len()..]
        } else {
            r
        };
        let mut v = Vec::with_capacity(l.len() + r.len());
        v.extend_from_slice(l);
        v.extend_from_slice(r);
        v
    }

    /// Registers a symbol text at a given id (ids must be contiguous from `first_id`).
    pub fn push(&mut self, text: Vec<u8>, length: u32) -> u32 {
        let id = self.base + self.texts.len() as u32;
        self.index.insert(text.clone().into_boxed_slice(), id);
        self.texts.push(Rc::from(text.into_boxed_slice()));
        self.lengths.push(length);
        id
    }
}

// `base` lets symbol ids coincide with row ids ([UNK] and byte rows come first).
impl Symbols {
    pub fn new(base: u32, strip_right: &[u8]) -> Self {
        Symbols { texts: vec![], lengths: vec![], index: FxHashMap::default(), strip_right: strip_right.to_vec(), base }
    }
    pub fn text(&self, id: u32) -> &[u8] {
        &self.texts[(id - self.base) as usize]
    }
    pub fn len(&self, id: u32) -> u32 {
        self.lengths[(id - self.base) as usize]
    }
    pub fn next_id(&self) -> u32 {
        self.base + self.texts.len() as u32
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Size,
    MinCount,
    NoPairs,
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Size => "size",
            Stop::MinCount => "min_count",
            Stop::NoPairs => "no_pairs",
        }
    }
}

pub struct MergeParams {
    /// How many new rows may still be added.
    pub new_rows: u64,
    pub min_count: u64,
    pub max_piece_length: Option<u32>,
}

pub struct Merged {
    /// (left, right, result) in rank order.
    pub merges: Vec<[u32; 3]>,
    pub new_rows: u64,
    pub stop: Stop,
}

struct Entry {
    count: u64,
    pair: u64,
    left: Rc<[u8]>,
    right: Rc<[u8]>,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // max-heap: larger count first, then the smaller (left, right) text first
    fn cmp(&self, o: &Self) -> Ordering {
        self.count
            .cmp(&o.count)
            .then_with(|| o.left.cmp(&self.left))
            .then_with(|| o.right.cmp(&self.right))
            .then_with(|| o.pair.cmp(&self.pair))
    }
}

struct Engine<'a> {
    units: &'a mut [Unit],
    symbols: &'a mut Symbols,
    counts: FxHashMap<u64, i64>,
    places: FxHashMap<u64, Vec<u32>>,
    heap: BinaryHeap<Entry>,
    max_len: Option<u32>,
}

/// Pair counts and places of a slice of units (one thread's share).
fn count_pairs(units: &[Unit], offset: u32) -> (FxHashMap<u64, i64>, FxHashMap<u64, Vec<u32>>) {
    let mut counts: FxHashMap<u64, i64> = FxHashMap::default();
    let mut places: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for (i, u) in units.iter().enumerate() {
        let wi = offset + i as u32;
        for w in u.symbols.windows(2) {
            if w[0] == NO_SYMBOL || w[1] == NO_SYMBOL {
                continue;
            }
            let p = pack(w[0], w[1]);
            *counts.entry(p).or_insert(0) += u.count as i64;
            let v = places.entry(p).or_default();
            if v.last() != Some(&wi) {
                v.push(wi);
            }
        }
    }
    (counts, places)
}

impl<'a> Engine<'a> {
    fn new(units: &'a mut [Unit], symbols: &'a mut Symbols, max_len: Option<u32>) -> Self {
        let threads = rayon::current_num_threads().max(1);
        let chunk = units.len().div_ceil(threads).max(1024);
        let parts: Vec<_> = units
            .par_chunks(chunk)
            .enumerate()
            .map(|(k, c)| count_pairs(c, (k * chunk) as u32))
            .collect();
        let mut counts: FxHashMap<u64, i64> = FxHashMap::default();
        let mut places: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
        for (c, p) in parts {
            if counts.is_empty() {
                counts = c;
                places = p;
                continue;
            }
            for (k, v) in c {
                *counts.entry(k).or_insert(0) += v;
            }
            for (k, mut v) in p {
                places.entry(k).or_default().append(&mut v);
            }
        }
        let mut e = Engine { units, symbols, counts, places, heap: BinaryHeap::new(), max_len };
        let entries: Vec<u64> = e.counts.keys().copied().collect();
        let mut heap = Vec::with_capacity(entries.len());
        for p in entries {
            if let Some(en) = e.entry(p) {
                heap.push(en);
            }
        }
        e.heap = BinaryHeap::from(heap);
        e
    }

    fn entry(&self, p: u64) -> Option<Entry> {
        let c = *self.counts.get(&p)?;
        if c <= 0 {
            return None;
        }
        let (a, b) = unpack(p);
        if let Some(m) = self.max_len {
            if self.symbols.len(a) + self.symbols.len(b) > m {
                return None;
            }
        }
        Some(Entry {
            count: c as u64,
            pair: p,
            left: self.symbols.texts[(a - self.symbols.base) as usize].clone(),
            right: self.symbols.texts[(b - self.symbols.base) as usize].clone(),
        })
    }

    /// The best live pair, without removing it.
    fn best(&mut self) -> Option<(u64, u64)> {
        while let Some(top) = self.heap.peek() {
            let live = self.counts.get(&top.pair).copied().unwrap_or(0);
            if live > 0 && live as u64 == top.count {
                return Some((top.pair, top.count));
            }
            self.heap.pop();
        }
        None
    }

    /// Joins `pair` into `c` in every unit that holds it and updates the index.
    fn apply(&mut self, pair: u64, c: u32) {
        let (a, b) = unpack(pair);
        let mut list = self.places.remove(&pair).unwrap_or_default();
        list.sort_unstable();
        list.dedup();
        let mut changed: Vec<u64> = Vec::new();
        let mut old_pos: Vec<usize> = Vec::new();
        let mut new_pos: Vec<usize> = Vec::new();
        let mut out: Vec<u32> = Vec::new();
        for &wi in &list {
            let unit = &mut self.units[wi as usize];
            let s = &unit.symbols;
            let n = s.len();
            old_pos.clear();
            new_pos.clear();
            out.clear();
            let mut i = 0;
            let mut found = false;
            while i < n {
                if i + 1 < n && s[i] == a && s[i + 1] == b {
                    found = true;
                    if i > 0 && old_pos.last() != Some(&(i - 1)) {
                        old_pos.push(i - 1);
                    }
                    if old_pos.last() != Some(&i) {
                        old_pos.push(i);
                    }
                    if i + 2 < n {
                        old_pos.push(i + 1);
                    }
                    let k = out.len();
                    if k > 0 && new_pos.last() != Some(&(k - 1)) {
                        new_pos.push(k - 1);
                    }
                    new_pos.push(k);
                    out.push(c);
                    i += 2;
                } else {
                    out.push(s[i]);
                    i += 1;
                }
            }
            if !found {
                continue;
            }
            let w = unit.count as i64;
            for &p in &old_pos {
                let (x, y) = (s[p], s[p + 1]);
                if x == NO_SYMBOL || y == NO_SYMBOL {
                    continue;
                }
                let q = pack(x, y);
                if let Some(v) = self.counts.get_mut(&q) {
                    *v -= w;
                }
                changed.push(q);
            }
            let m = out.len();
            for &p in &new_pos {
                if p + 1 >= m {
                    continue;
                }
                let (x, y) = (out[p], out[p + 1]);
                if x == NO_SYMBOL || y == NO_SYMBOL {
                    continue;
                }
                let q = pack(x, y);
                *self.counts.entry(q).or_insert(0) += w;
                let v = self.places.entry(q).or_default();
                if v.last() != Some(&wi) {
                    v.push(wi);
                }
                changed.push(q);
            }
            std::mem::swap(&mut unit.symbols, &mut out);
        }
        changed.sort_unstable();
        changed.dedup();
        for q in changed {
            match self.counts.get(&q) {
                Some(&v) if v > 0 => {
                    if let Some(en) = self.entry(q) {
                        self.heap.push(en);
                    }
                }
                Some(_) => {
                    self.counts.remove(&q);
                    self.places.remove(&q);
                }
                None => {}
            }
        }
    }
}

/// Runs the merge loop. `symbols` must already hold every symbol the units use.
pub fn learn(units: &mut [Unit], symbols: &mut Symbols, params: &MergeParams) -> Merged {
    let mut engine = Engine::new(units, symbols, params.max_piece_length);
    let mut merges = Vec::new();
    let mut new_rows = 0u64;
    let stop = loop {
        if new_rows >= params.new_rows {
            break Stop::Size;
        }
        let Some((pair, count)) = engine.best() else { break Stop::NoPairs };
        if count < params.min_count {
            break Stop::MinCount;
        }
        let (a, b) = unpack(pair);
        let text = engine.symbols.join(a, b);
        let c = match engine.symbols.index.get(text.as_slice()) {
            Some(&c) => c,
            None => {
                let len = engine.symbols.len(a) + engine.symbols.len(b);
                new_rows += 1;
                engine.symbols.push(text, len)
            }
        };
        merges.push([a, b, c]);
        engine.apply(pair, c);
    };
    Merged { merges, new_rows, stop }
}
