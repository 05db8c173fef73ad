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
//!
//! Performance notes (145 MB mixed text, 2 M distinct units, 32k merges, 2 cores):
//! * One `Vec` per unit made the loop memory-latency bound (a cache miss per unit visited):
//!   26 s. A flat symbol array with one record per unit (start, count, length), units visited
//!   in sorted order with a software prefetch a few units ahead: 9 s in all.
//! * Pushing a heap entry on every count change (decreases included) cost more than it saved;
//!   entries are pushed only when a count rises, and a popped entry that over-states its pair
//!   is re-pushed with the true count. Deduping place lists with a per-unit stamp instead of a
//!   sort was tried and lost: the stamp array is one more random access per unit.
//! * Building per-thread place lists and appending them doubled peak memory (1.1 GB). Counting
//!   units per pair first, then letting each thread fill the exact-size lists of its own share
//!   of pairs: 0.58 GB.
//! * Rewriting the units of a merge on both cores pays from a few thousand units up; per-thread
//!   delta tables are added in a fixed order afterwards, so the result is thread-count free.
//! * At 7 MB (issue 15; callgrind, `english.txt`, 32k, one thread, the whole process): the serial
//!   rewrite's [`Delta`] is kept from merge to merge and holds one row per changed pair (count
//!   change and new places, one map lookup instead of two), where each merge built, grew and
//!   freed two maps and a `Vec` per new pair; place and pair lists are sorted with the stable
//!   sort, which merges their sorted runs; the heap breaks ties on 8-byte heads of the keys
//!   ([`key_head`]) before the keys. BPE `front` 3.05 G -> 2.72 G instructions (with the spelling
//!   and counting changes of this issue), WordPiece with BERT's pre-split 3.67 G -> 3.24 G.
//! * Then (issue 15, the same measure, BPE `front` 32k, one thread, the whole process; 7 MB of
//!   English / 15 MB of multilingual text): 2,830 M / 7,664 M instructions before, 2,420 M /
//!   6,464 M after, same models. The heap's pop takes the moved entry down to a leaf along the
//!   better children and back up (one comparison a level, as `std`'s `BinaryHeap::pop`), and a
//!   popped entry that over-states its pair is replaced at the top in one pass down, not popped
//!   and pushed: `Engine::best` 238 M -> 186 M on English. [`rewrite`] joins a unit in place
//!   from its first site on, reading the lost pairs as it goes, where it copied every symbol
//!   to a scratch unit and back: 477 M -> 382 M on English, 1,704 M -> 1,316 M on multilingual,
//!   whose Chinese and Japanese lines are units of a hundred characters and more (a merge
//!   scans each unit it touches whole; that stays). [`count_pairs`] counted a pair's units by
//!   searching the unit's pairs so far, quadratic in a long unit: -100 M on multilingual.
//!   What is left on multilingual: `rewrite` (1.3 G), counting (1.4 G, on both threads), the
//!   compaction's work on each list (sort and stale check, about 0.5 G, in parallel; a long
//!   unit is scanned once per list it is in), and the main thread: interpreter, import and
//!   writing the file (0.64 G, of which 0.14 G compiles the package's sources when no
//!   bytecode cache is written).
//! * Then (issue 15, WordPiece with BERT's pre-split, 7 MB of English at 32k, two threads;
//!   callgrind, the training thread): 2,095 M -> 1,886 M instructions (whole process 2,928 M ->
//!   2,720 M), same models. The expansion of a deferred bound ([`Engine::best_wordpiece`])
//!   walked its list with `retain_mut`, whose bookkeeping cost as much as the skip test (about
//!   15 instructions an entry): a plain loop with a write index, and the pair's other symbol as
//!   `x ^ y ^ s`; a list nothing was appended to since its last expansion (the same bound
//!   expanded again under a new top) is not sorted and deduped again (`sorted_of`). Then a
//!   list's new tail alone is sorted and merged into its sorted part from the back, through a
//!   buffer kept in the engine, where the stable sort scanned the whole list for runs and took
//!   a scratch allocation each time: 1,886 M -> 1,828 M (whole process 2,662 M).
//!
//! Memory notes (issue 14; `benchmarks/bench_scale.py`, numbers in benchmarks/README.md):
//! * The heap was a `BinaryHeap` of 80-byte entries (count, a `u128` denominator, the pair and
//!   two `Rc` tie keys), rebuilt only past 4x the live pairs. It is now a heap of 16-byte
//!   `(count, pair)` entries whose order looks the tie keys up by symbol id (WordPiece's
//!   denominators in a parallel array BPE leaves empty), rebuilt past 2x, and under counts
//!   rebuilt in place (sort by pair, dedup, refresh): building a fresh list of the live pairs
//!   next to the old heap had been the run's memory peak.
//! * `pair -> count` and `pair -> units` were two maps, the second with one `Vec` (and one
//!   allocation) per pair although most pairs of a large table are in one or two units. They
//!   became one map of `PairInfo` whose unit list held 3 ids inline (`TinyVec<[u32; 3]>`), a
//!   40-byte slot with its key.
//! * The table's arrays are reserved once from an upper bound on the symbols (a doubling `Vec`
//!   copies the table and can leave twice its size).
//! * A map slot is now 24 bytes: the key, the count, the list's length and one `u32` that is the
//!   unit id itself when the pair is in one unit, or a block of the [`Arena`] (one `u32` array
//!   for every longer list; a block that fills moves to one twice its size at the end). The
//!   index used to grow with the merges: every rewritten unit lists its new pairs, and stayed
//!   listed under the pairs it lost. Once the arena has doubled since it was last packed,
//!   [`Arena::compact`] drops the pairs no unit holds, the stale ids (checked against the units)
//!   and the garbage blocks, and packs the blocks in place: no second copy. Only the layout
//!   changes (a list still holds every unit with its pair, and `apply` sorts it), so the
//!   merges are those of a run that never compacts (test `compacting_the_lists_at_every_chance
//!   _changes_no_merge`). The stale check visits the units of each list in sorted order with a
//!   prefetch a few ids ahead; unsorted and without it, compaction took a third of a run.
//! * Measured (`bench_scale.py table`, BPE `front` at 32k, peak RSS minus the import-only
//!   baseline over the distinct units): 3 M Zipf table 327 -> 255 B per unit, 20 M table 250 ->
//!   191 B per unit, byte-identical models. Issue 14's goal (120 B) is not reached.
//! * A table file is spelled straight from its bytes (`count_table::TableBytes`, read by
//!   `pipeline.rs` without a `String` per unit) and the bytes are dropped before the merges: on
//!   the 20 M table reading and spelling peaked at 3.4 GB and now at 1.76 GB (the file and these
//!   arrays), so the peak is the merge loop again. Through it (measured on the 20 M table, RSS
//!   sampled): the arrays 1.29 GB (a unit record is 24 bytes, a `u64` start for tables past 4 G
//!   symbols, plus 4 bytes a symbol), 2.02 GB once the index is built, up to 2.81 GB before
//!   the first compaction brings it back to 1.95 GB, and the peak, 3.04 GB, when the index map
//!   doubles near the end (its old and new slots at once; 90 MB of the 3 M table's peak too).
//!   Not done: a pair index in shards, so that a doubling copies one shard; compacting earlier.
//! * Then (measured on the 1 M and 3 M Zipf tables with the index's sizes logged at each
//!   compaction; peak RSS, BPE `front` at 32k): the heap held an entry for every live pair
//!   (4.18 M entries, 67 MB, at the end of the 3 M table, more than the 3.96 M pairs) although
//!   a pair in one unit of a large table never comes near the top. Under counts, once the heap
//!   passes 2 x 128k entries, only pairs counted at least a floor keep entries (the largest
//!   power of two that 128k of them reach; raised at rebuilds, lowered when the heap runs out,
//!   see [`Engine::best`]): 181 k entries at the end. Inputs whose heap stays under 256k
//!   entries (7 MB of English at 32k: 159 k) never get a floor. 3 M table 661 -> 591 MB, with:
//! * the arena compacted once it has grown by half, not doubled, from 32 MB (8 M words) up:
//!   below that the old rule stands, so small inputs compact as before.
//! * The index in 64 shards ([`PairIndex`], one shard below 128k units): a shard that doubles
//!   copies 1/64 of the map. 3 M table 591 -> 531 MB; 1 M table 218 -> 179 MB with all of it.
//!   With equal shares the shards filled at the same rate and doubled within a few merges of
//!   each other: the 20 M table's run ended just after they had (2.58 GB, 134 B per unit over
//!   the baseline, the peak in its last seconds), and the 3 M table's too. Shares spread over
//!   one doubling (`2^(i/64)`) make them double one at a time: 3 M table 515 -> 456 MB, but the
//!   1 M table 179 -> 205 MB, whose equal shards had happened to end just before doubling. The
//!   spread is kept for its bound (about 1.65 slots a pair at any size, against 1.14 to 2.29).
//! * Unit records of 16 bytes ([`Meta`]: the start and length packed in one `u64`), 3 M table
//!   531 -> 515 MB (equal shards). With everything, 3 M table 661 -> 456 MB: 153 B per unit over
//!   the import-only baseline (19.1 MB), from 225; 20 M table 3039 -> 2345 MB, 158 -> 122 B per
//!   unit (the peak now at the end of the merges: the map's last growth and the lists grown
//!   since their last compaction). Not tried for time: compacting at 1.25x. What is left: the
//!   map (3.96 M pairs at the end of the 3 M table, about 1.65 slots of 25 bytes each: most
//!   pairs of the last merges are in one unit), the symbols (41 B per unit), the lists (about
//!   33 B).
//! * 7 MB of English at 32k, one thread (callgrind, the whole process): 3,297.6 M instructions
//!   before, 3,303.3 M with equal shards (+0.17%), 3,308.1 M with spread ones (+0.32%: the
//!   shard lookup, a 1 KB routing table read even with one shard, and the packed record).
//! * Then (issue 14 again; logged at each compaction on the 3 M table): the index held 3.96 M
//!   pairs at the end, nearly all in one or two rare units and far below any count a merge
//!   would take, and their slots and lists were the end's peak. Under a heap floor, compaction
//!   now drops the pairs counted below the floor or a quarter of the last merge's count (as
//!   does the index, without compacting the lists, once it has doubled), and keeps a bound on
//!   what any dropped pair could count ([`Engine::untracked`]; a merge's new pairs hold its new
//!   piece, so a dropped pair only loses count, except through an interned piece, whose missing
//!   pairs stay out and raise the bound). A best pair above the bound is the best of all;
//!   otherwise the index is counted again from the units ([`Engine::restore`]; not once on the
//!   3 M table, logged). On the 3 M table the index then stays near 600 k pairs, and the peak
//!   moves to the first merges: the symbols and the first place lists with their garbage
//!   (3 M table 461 -> 351 MB, same model bytes). A first version compacted the lists at each
//!   of the index's doublings too (and packed them, below): on the 20 M table that took 138
//!   CPU seconds before it was stopped, against 82 for a whole run before (each compaction
//!   reads every listed unit).
//! * The early garbage: a new pair's list grew through blocks of 2, 4, 8, ... ids ([`Arena::push`]),
//!   so a list of a large merge left as much garbage as itself and up to as much room again;
//!   it now takes one block of the merge's places ([`Arena::extend`]): fewer compactions,
//!   the same peak (the arena is compacted at the same growth). With the index small, the
//!   compactions are cheap enough to run from 32 MB at a quarter's growth, not half (measured
//!   under load, same model bytes): 3 M table 351 -> 325 MB (116 -> 107 B per unit) for 8.7 ->
//!   10.0 CPU s, 20 M table 2284 -> 2106 MB (119 -> 109 B per unit) for 52 -> 80 CPU s, about
//!   the 82 of the engine before this change (`mark / 2` in [`compaction_growth`] is the
//!   faster choice). Tried and not kept: packing the arena (its garbage blocks dropped, no unit
//!   read) at a quarter's growth between compactions at half (351 -> 347 MB: most of the early
//!   growth is stale ids, not garbage blocks; and more CPU). What is left at the peak: the
//!   symbols and unit records (about 58 B per unit; `u16` symbols while the vocabulary fits
//!   would take 2 bytes of every 4) and the first place lists (about 32 B per unit, up to
//!   1.25x that before a compaction).

use std::cmp::Ordering;
use std::rc::Rc;

use crate::hash::Map;
use rayon::prelude::*;

/// Symbol id used for symbols outside the alphabet (alphabet limits): never part of a pair.
pub const NO_SYMBOL: u32 = u32::MAX;

pub(crate) use crate::hash::pack;
#[inline]
pub(crate) fn unpack(p: u64) -> (u32, u32) {
    ((p >> 32) as u32, p as u32)
}

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
/// a 64 GB array) and its length (30 bits: a billion symbols). The record was 24 bytes (a
/// `u64` start, the count and a `u32` length, padded): 160 MB of a 20 M-unit table.
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
    /// A unit only shrinks: `len` is at most its length when it was pushed.
    #[inline]
    pub fn set_len(&mut self, len: u32) {
        debug_assert!(len as usize <= self.len());
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
    /// Σ count × length.
    pub fn pieces(&self) -> u64 {
        self.meta.iter().map(|m| m.len() as u64 * m.count).sum()
    }
}

/// The symbol table the engine extends: texts by id, their lengths in alphabet symbols, and the
/// text -> id index used for interning.
pub struct Symbols {
    pub texts: Vec<Rc<[u8]>>,
    pub lengths: Vec<u32>,
    pub index: Map<Box<[u8]>, u32>,
    /// How two pieces are written together (`##` is stripped from the right under continuation).
    pub strip_right: Vec<u8>,
    /// Id of the first symbol: symbol ids coincide with row ids.
    pub base: u32,
}

impl Symbols {
    pub fn join(&self, a: u32, b: u32) -> Vec<u8> {
        let l = self.text(a);
        let r = self.text(b);
        if !self.strip_right.is_empty() {
            return crate::vocab::join_continuation(l, r, &self.strip_right);
        }
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
        Symbols {
            texts: vec![],
            lengths: vec![],
            index: Map::default(),
            strip_right: strip_right.to_vec(),
            base,
        }
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

/// Which pair a round takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// BPE: the largest `count(a, b)`; ties by `(left, right)` as spelled.
    Count,
    /// WordPiece: the largest `count(a, b) / (count(a) · count(b))`, compared exactly; ties by
    /// the joined text, then `(left, right)`, both in the tie spelling (see [`TieSpelling`]).
    WordPiece,
}

/// WordPiece's `min_count`: filter the candidates before choosing (the default), or test the
/// winner and stop when it fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinCountRule {
    Filter,
    Stop,
}

/// How WordPiece writes pieces for its tie rule: under `continuation`, a word-first piece carries
/// the front mark `▁` and continuation pieces are bare (`##id` is `id`, `wi` is `▁wi`).
#[derive(Clone, Debug)]
pub enum TieSpelling {
    AsSpelled,
    FrontMarked { continuation_mark: Vec<u8> },
}

impl TieSpelling {
    fn key(&self, text: &[u8]) -> Box<[u8]> {
        match self {
            TieSpelling::AsSpelled => Box::from(text),
            TieSpelling::FrontMarked { continuation_mark } => {
                match text.strip_prefix(continuation_mark.as_slice()) {
                    Some(rest) => Box::from(rest),
                    None => {
                        let mut v = "\u{2581}".as_bytes().to_vec();
                        v.extend_from_slice(crate::vocab::piece_text(text));
                        v.into_boxed_slice()
                    }
                }
            }
        }
    }
}

pub struct MergeParams {
    /// How many new rows may still be added.
    pub new_rows: u64,
    pub min_count: u64,
    pub max_piece_length: Option<u32>,
    pub score: Score,
    pub min_count_rule: MinCountRule,
    pub tie: TieSpelling,
}

impl MergeParams {
    pub fn bpe(new_rows: u64, min_count: u64, max_piece_length: Option<u32>) -> Self {
        MergeParams {
            new_rows,
            min_count,
            max_piece_length,
            score: Score::Count,
            min_count_rule: MinCountRule::Filter,
            tie: TieSpelling::AsSpelled,
        }
    }
}

pub struct Merged {
    /// (left, right, result) in rank order.
    pub merges: Vec<[u32; 3]>,
    pub new_rows: u64,
    pub stop: Stop,
    /// Σ count × length of the units after the last merge.
    pub pieces_after: u64,
    /// Under the winner test: the pair that failed `min_count`, and its count.
    pub winner_failed: Option<(u32, u32, u64)>,
}

/// A candidate pair with its score `num / den` (`den` is 1 for counts, `count(a) · count(b)` for
/// WordPiece).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cand {
    num: u64,
    den: u128,
    pair: u64,
}

/// The tie rule's order on candidates: `Greater` ranks first. The larger score first, then
/// (WordPiece) the smaller joined text, then the smaller `(left, right)` by tie keys, then the
/// smaller pair id (only equal entries of one pair get that far).
struct Order<'k> {
    keys: &'k [Box<[u8]>],
    /// Each key's first 8 bytes (see [`key_head`]), by symbol id.
    heads: &'k [u64],
    base: u32,
    joined_first: bool,
}

/// A tie key's first 8 bytes as a big-endian number, zero-padded. Two heads that differ order
/// as their keys do (at the first byte where the padded heads differ, either both keys have a
/// byte, or the shorter key has ended and is a prefix of the longer); only equal heads need the
/// keys themselves. Most of the heap's tie-breaks end at the heads: no pointer to follow, no
/// `memcmp` call (issue 15: the tie keys' `memcmp` was in the heap's 19% at 7 MB).
fn key_head(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

impl Order<'_> {
    #[inline]
    fn key(&self, s: u32) -> &[u8] {
        &self.keys[(s - self.base) as usize]
    }
    /// The keys of `x` and `y` compared, through their heads first.
    #[inline]
    fn cmp_keys(&self, x: u32, y: u32) -> Ordering {
        let (hx, hy) = (self.heads[(x - self.base) as usize], self.heads[(y - self.base) as usize]);
        if hx != hy {
            return hx.cmp(&hy);
        }
        self.key(x).cmp(self.key(y))
    }
    fn cmp(&self, x: &Cand, y: &Cand) -> Ordering {
        cmp_fraction(x.num, x.den, y.num, y.den).then_with(|| {
            if x.pair == y.pair {
                return Ordering::Equal;
            }
            let (xa, xb) = unpack(x.pair);
            let (ya, yb) = unpack(y.pair);
            (if self.joined_first {
                cmp_joined(self.key(ya), self.key(yb), self.key(xa), self.key(xb))
            } else {
                Ordering::Equal
            })
            .then_with(|| self.cmp_keys(ya, xa))
            .then_with(|| self.cmp_keys(yb, xb))
            .then_with(|| y.pair.cmp(&x.pair))
        })
    }
}

/// A max-heap of candidates in the tie rule's order, with lazy deletion (see `Engine::best`).
///
/// An entry is 16 bytes: the count and the pair; WordPiece's denominators sit in a parallel
/// array that BPE leaves empty (its denominator is always 1). The tie keys are not in the
/// entries: the order looks them up by symbol id in the engine's key table, so an entry holds no
/// pointers (the old `BinaryHeap` entries carried two `Rc` keys and a `u128`: 80 bytes).
#[derive(Default)]
struct PairHeap {
    nums: Vec<(u64, u64)>,
    dens: Vec<u128>,
    wide: bool,
}

impl PairHeap {
    fn new(wide: bool) -> Self {
        PairHeap { nums: Vec::new(), dens: Vec::new(), wide }
    }
    fn len(&self) -> usize {
        self.nums.len()
    }
    #[inline]
    fn get(&self, i: usize) -> Cand {
        let (num, pair) = self.nums[i];
        Cand { num, den: if self.wide { self.dens[i] } else { 1 }, pair }
    }
    #[inline]
    fn swap(&mut self, i: usize, j: usize) {
        self.nums.swap(i, j);
        if self.wide {
            self.dens.swap(i, j);
        }
    }
    fn peek(&self) -> Option<Cand> {
        (!self.nums.is_empty()).then(|| self.get(0))
    }
    fn push(&mut self, c: Cand, order: &Order<'_>) {
        self.nums.push((c.num, c.pair));
        if self.wide {
            self.dens.push(c.den);
        }
        let mut i = self.nums.len() - 1;
        while i > 0 {
            let up = (i - 1) / 2;
            if order.cmp(&c, &self.get(up)) != Ordering::Greater {
                break;
            }
            self.swap(i, up);
            i = up;
        }
    }
    fn pop(&mut self, order: &Order<'_>) -> Option<Cand> {
        let n = self.nums.len();
        if n == 0 {
            return None;
        }
        let top = self.get(0);
        self.swap(0, n - 1);
        self.nums.pop();
        if self.wide {
            self.dens.pop();
        }
        self.sift_down_to_bottom(order);
        Some(top)
    }
    /// Replaces the top entry with `c` (a popped entry's re-push in one pass down, instead of a
    /// pass down for the pop and one up for the push).
    fn replace_top(&mut self, c: Cand, order: &Order<'_>) {
        self.nums[0] = (c.num, c.pair);
        if self.wide {
            self.dens[0] = c.den;
        }
        self.sift_down(0, order);
    }
    /// The root's entry (the last one, moved there by `pop`) taken down to a leaf along the
    /// better children, one comparison a level, then up to its place: it came from the bottom
    /// and mostly belongs near it, so this takes about half the comparisons of [`Self::sift_down`]
    /// (the way `std`'s `BinaryHeap::pop` does it).
    fn sift_down_to_bottom(&mut self, order: &Order<'_>) {
        let n = self.nums.len();
        if n <= 1 {
            return;
        }
        let moved = self.get(0);
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let best = self.better_child(l, n, order);
            self.swap(i, best);
            i = best;
        }
        while i > 0 {
            let up = (i - 1) / 2;
            if order.cmp(&moved, &self.get(up)) != Ordering::Greater {
                break;
            }
            self.swap(i, up);
            i = up;
        }
    }
    /// Of the children `l` and `l + 1` (if there is one below `n`), the one that comes first.
    #[inline]
    fn better_child(&self, l: usize, n: usize, order: &Order<'_>) -> usize {
        if l + 1 < n && order.cmp(&self.get(l + 1), &self.get(l)) == Ordering::Greater {
            l + 1
        } else {
            l
        }
    }
    fn sift_down(&mut self, mut i: usize, order: &Order<'_>) {
        let n = self.nums.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let best = self.better_child(l, n, order);
            if order.cmp(&self.get(best), &self.get(i)) != Ordering::Greater {
                break;
            }
            self.swap(i, best);
            i = best;
        }
    }
    /// Replaces the contents with `items` and restores the heap order (O(n)).
    fn rebuild(&mut self, items: Vec<Cand>, order: &Order<'_>) {
        self.nums = items.iter().map(|c| (c.num, c.pair)).collect();
        self.dens = if self.wide { items.iter().map(|c| c.den).collect() } else { Vec::new() };
        drop(items);
        for i in (0..self.nums.len() / 2).rev() {
            self.sift_down(i, order);
        }
    }
}

/// One pair of the index: its count over the corpus and the units that hold it (each listed at
/// least once; stale ids of units that lost the pair are skipped when the pair is merged, and
/// dropped when the arena is compacted). With its `u64` key a map slot is 24 bytes: a list of
/// one id (most pairs of a large table are in one unit) lives in the slot, a longer one in a
/// block of the engine's [`Arena`].
#[derive(Clone, Copy, Default)]
pub(crate) struct PairInfo {
    pub(crate) count: i64,
    /// How many ids the list holds.
    pub(crate) len: u32,
    /// `len == 1`: the id itself; `len > 1`: the list's block in the arena.
    pub(crate) at: u32,
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
pub(crate) struct PairIndex {
    shards: Vec<Map<u64, PairInfo>>,
    /// The shard of each of 1024 hash ranges.
    route: Box<[u8; 1024]>,
}

impl PairIndex {
    /// An empty index in shards for about `units` units: one shard up to 128k units, then one
    /// per 64k units, at most 64.
    pub(crate) fn new(units: usize) -> Self {
        let n = (units >> 16).next_power_of_two().clamp(1, 64);
        #[cfg(test)]
        let n = SHARDS.with(|s| s.get()).unwrap_or(n);
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
        // the top bits of another multiplicative hash than the maps' (theirs pick the buckets)
        self.route[(k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize] as usize
    }
    #[inline]
    pub(crate) fn get(&self, k: &u64) -> Option<&PairInfo> {
        self.shards[self.shard(*k)].get(k)
    }
    #[inline]
    pub(crate) fn get_mut(&mut self, k: &u64) -> Option<&mut PairInfo> {
        let s = self.shard(*k);
        self.shards[s].get_mut(k)
    }
    #[inline]
    pub(crate) fn entry(&mut self, k: u64) -> std::collections::hash_map::Entry<'_, u64, PairInfo> {
        let s = self.shard(k);
        self.shards[s].entry(k)
    }
    #[inline]
    pub(crate) fn remove(&mut self, k: &u64) -> Option<PairInfo> {
        let s = self.shard(*k);
        self.shards[s].remove(k)
    }
    #[cfg(test)]
    pub(crate) fn contains_key(&self, k: &u64) -> bool {
        self.get(k).is_some()
    }
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|m| m.len()).sum()
    }
    pub(crate) fn retain(&mut self, mut f: impl FnMut(&u64, &mut PairInfo) -> bool) {
        for m in &mut self.shards {
            m.retain(&mut f);
        }
    }
    /// Each shard's table down to the size its pairs need (one shard's copy at a time).
    pub(crate) fn shrink(&mut self) {
        for m in &mut self.shards {
            m.shrink_to_fit();
        }
    }
    /// Every pair, in an order that depends on the hash (callers sort what must not).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&u64, &PairInfo)> {
        self.shards.iter().flat_map(|m| m.iter())
    }
    pub(crate) fn keys(&self) -> impl Iterator<Item = &u64> {
        self.shards.iter().flat_map(|m| m.keys())
    }
    pub(crate) fn values(&self) -> impl Iterator<Item = &PairInfo> {
        self.shards.iter().flat_map(|m| m.values())
    }
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut PairInfo> {
        self.shards.iter_mut().flat_map(|m| m.values_mut())
    }
}

impl std::ops::Index<&u64> for PairIndex {
    type Output = PairInfo;
    fn index(&self, k: &u64) -> &PairInfo {
        self.get(k).expect("the pair is in the index")
    }
}

/// The place lists longer than one id, in blocks of one `u32` array. A block is a multiple of 4
/// words, the first holding its capacity (the ids it has room for), and is addressed by its
/// start / 4, so a `u32` addresses 64 GB of lists. A list that outgrows its block moves to a new
/// block twice the size at the end; the old block, and the blocks of pairs merged or gone, are
/// garbage until [`Arena::compact`], which also drops the stale ids and packs the blocks in place.
#[derive(Default)]
pub(crate) struct Arena {
    pub(crate) words: Vec<u32>,
}

/// Words of a block with room for `ids` ids (the capacity word included).
#[inline]
fn block_words(ids: usize) -> usize {
    (ids + 1).div_ceil(4) * 4
}

impl Arena {
    /// A new block at the end with room for at least `ids` ids; its capacity word is set.
    fn alloc(&mut self, ids: usize) -> u32 {
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
    fn push(&mut self, info: &mut PairInfo, id: u32) {
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
    fn extend(&mut self, info: &mut PairInfo, ids: &[u32], more: usize) {
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
    fn take(&mut self, info: &mut PairInfo) -> Vec<u32> {
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
    /// With `below` past 1 it also drops the live pairs counted below it (see [`Engine::untracked`])
    /// and returns the largest count dropped (0: none).
    fn compact(&mut self, index: &mut PairIndex, flat: &Flat, below: i64) -> u64 {
        #[cfg(test)]
        COMPACTIONS.with(|c| c.set(c.get() + 1));
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

/// Drops the pairs counted below `below` (at least 1: the pairs no unit holds go too) and
/// returns the largest count dropped (0: no live pair). Their blocks become garbage.
fn drop_pairs(index: &mut PairIndex, below: i64) -> u64 {
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

/// Sorts `ids`, keeps each unit once and only the units that still hold `pair`, at the front;
/// returns how many are kept. The units are visited forward through memory, with a unit's
/// record and symbols prefetched a few ids ahead (one cache miss per id otherwise).
fn live_ids(ids: &mut [u32], pair: u64, flat: &Flat) -> usize {
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
/// [`rewrite`]. A plain loop: `windows(2).any(..)` left its closure a call per position (issue
/// 15; multilingual text, 15 MB, 32k, one thread: 6,505 M -> 6,464 M instructions; its long
/// Chinese and Japanese units are each listed under many pairs, and the compaction's check
/// scans each of them once per list).
#[inline]
fn first_site(s: &[u32], a: u32, b: u32) -> Option<usize> {
    let mut i = 0;
    while i + 1 < s.len() {
        if s[i] == a && s[i + 1] == b {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// `a · b` as a 256-bit number (hi, lo).
fn mul_wide(a: u64, b: u128) -> (u128, u128) {
    let (bh, bl) = (b >> 64, b & u64::MAX as u128);
    let lo = a as u128 * bl;
    let mid = a as u128 * bh;
    let (low, carry) = lo.overflowing_add(mid << 64);
    ((mid >> 64) + carry as u128, low)
}

/// Compares `a1 / b1` with `a2 / b2` exactly.
fn cmp_fraction(a1: u64, b1: u128, a2: u64, b2: u128) -> Ordering {
    if b1 == b2 {
        return a1.cmp(&a2);
    }
    // both denominators in 64 bits (two counts below 2^32 each, as on any corpus short of
    // billions of symbols): each product is one 64 x 64 -> 128-bit multiplication, exact
    if (b1 | b2) >> 64 == 0 {
        return (a1 as u128 * b2 as u64 as u128).cmp(&(a2 as u128 * b1 as u64 as u128));
    }
    mul_wide(a1, b2).cmp(&mul_wide(a2, b1))
}

/// Compares `a1 ++ a2` with `b1 ++ b2` without building them: slice by slice (a `memcmp` each,
/// at most three), not byte by byte through chained iterators (issue 15: WordPiece's ties).
fn cmp_joined(a1: &[u8], a2: &[u8], b1: &[u8], b2: &[u8]) -> Ordering {
    let (mut x, mut x_next) = (a1, a2);
    let (mut y, mut y_next) = (b1, b2);
    loop {
        if x.is_empty() {
            if x_next.is_empty() {
                return if y.is_empty() && y_next.is_empty() {
                    Ordering::Equal
                } else {
                    Ordering::Less
                };
            }
            (x, x_next) = (x_next, &[]);
            continue;
        }
        if y.is_empty() {
            if y_next.is_empty() {
                return Ordering::Greater;
            }
            (y, y_next) = (y_next, &[]);
            continue;
        }
        let n = x.len().min(y.len());
        match x[..n].cmp(&y[..n]) {
            Ordering::Equal => (x, y) = (&x[n..], &y[n..]),
            o => return o,
        }
    }
}

/// What one thread found while rewriting its share of a merge's units: for each pair whose count
/// changed (in the order first met), the change and the units that now hold it (new places).
///
/// The engine keeps one from merge to merge and clears it instead of dropping it (issue 15): a
/// fresh pair of maps per merge (counts, and places with a `Vec` per pair) was allocated, grown
/// and freed 32k times a run, about a third of `rewrite`'s instructions at 7 MB. One map now
/// leads to a row holding both, so a new pair is also looked up once, not twice.
#[derive(Default)]
pub(crate) struct Delta {
    /// pair -> its row in `changes`
    slots: Map<u64, u32>,
    /// (pair, count change, units that gained it); rows from `used` on are spare (their lists
    /// empty, their allocations kept for the next merge)
    changes: Vec<(u64, i64, Vec<u32>)>,
    used: usize,
    pub(crate) lens: Vec<(u32, u32)>,
    /// Σ count over the merge sites (how many a's and b's became c's).
    pub(crate) sites: i64,
    // `rewrite`'s scratch for one unit: the pairs it loses, where its new pairs start
    old_pairs: Vec<(u32, u32)>,
    new_pos: Vec<usize>,
}

/// Past these sizes a kept [`Delta`] lets its allocations go: clearing a map costs its capacity,
/// and a large merge's lists should not outlive it.
const DELTA_KEEP_ROWS: usize = 1 << 12;
const DELTA_KEEP_LIST: usize = 1 << 8;

impl Delta {
    #[inline]
    fn change(&mut self, q: u64) -> &mut (u64, i64, Vec<u32>) {
        let (changes, used) = (&mut self.changes, &mut self.used);
        let k = *self.slots.entry(q).or_insert_with(|| {
            if *used == changes.len() {
                changes.push((q, 0, Vec::new()));
            } else {
                let row = &mut changes[*used];
                row.0 = q;
                row.1 = 0;
            }
            *used += 1;
            (*used - 1) as u32
        });
        &mut changes[k as usize]
    }

    /// The changed pairs, in the order first met.
    fn changes(&self) -> &[(u64, i64, Vec<u32>)] {
        &self.changes[..self.used]
    }

    /// Empties it for the next merge.
    fn clear(&mut self) {
        if self.slots.capacity() > DELTA_KEEP_ROWS {
            self.slots = Map::default();
        } else {
            self.slots.clear();
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
        self.lens.clear();
        self.sites = 0;
    }
}

struct Engine<'a> {
    flat: Flat,
    symbols: &'a mut Symbols,
    /// The pair index: `pair -> (count, units holding it)`, one map (one lookup per change).
    /// A pair whose count fell to 0 may stay with stale places only; it is not a candidate.
    index: PairIndex,
    /// The index's place lists longer than one id.
    arena: Arena,
    /// The arena's size after it was last built or compacted: it is compacted again once it
    /// has doubled (new places, moved blocks, stale ids).
    arena_mark: usize,
    heap: PairHeap,
    /// Under counts, on a large index: only pairs counted at least this often have heap entries
    /// (0: every pair has one). See [`Engine::best`].
    heap_floor: u64,
    /// The heap's size after it was last rebuilt.
    heap_mark: usize,
    max_len: Option<u32>,
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
    /// Whether compaction may drop rarely counted pairs from the index (BPE counts, untraced).
    may_drop: bool,
    /// An upper bound on the count of every pair some unit holds and the index does not (0: the
    /// index holds them all). Under a heap floor, compaction drops the pairs counted below
    /// [`Engine::drop_below`] (most pairs of a large table: they are in one or two rare units),
    /// with their place lists. Their counts only fall from then on (a merge's new pairs hold
    /// its new piece; an interned piece's pairs that the index lacks are left out, and this
    /// bound rises by what they gain), so a best pair counted above the bound is still the best
    /// of every pair; when it is not, [`Engine::restore`] counts the index again from the units.
    untracked: u64,
    /// The count of the last merge.
    last_count: u64,
    /// The index's size after it was last built or compacted.
    index_mark: usize,
}

/// WordPiece's deferred re-push (issue 15). When a merge lowers `count(s)`, every pair holding
/// `s` scores higher. Pushing a fresh heap entry for each of them (thousands for a frequent
/// continuation piece, most of which never come near the top) was most of the merge loop. Instead
/// the merge pushes one entry for the symbol with a bound on the scores of all its pairs, `1 /
/// count(s)`: its pairs are "covered" by that bound. Only when a bound reaches the top of the heap
/// (it ranks above a pair of equal score) are the symbol's pairs visited: those that score at
/// least the top pair get entries of their own, and the rest stay covered by a new bound, the
/// highest of their scores.
///
/// Tried first: computing the exact highest score at each merge (a pass over the symbol's pairs,
/// one index lookup each) and, at the top, pushing every pair of the symbol. Same merges; on
/// whitespace-split English (6.9 MB, 32k) it took the process from 2.05 to 1.15 CPU seconds, and
/// the bound without a pass went lower again (benchmarks/README.md). Expanding down to half the
/// top's score, to visit a list less often, pushed more and lost (65% more `perf` samples).
/// Also lost: keeping the pairs an expansion leaves below the top in a max-heap by their scores
/// then, so that the next expansion of that bound takes out only those at least the new top
/// instead of passing over the whole list again. Same merges, but 9% more instructions (callgrind,
/// whitespace-split English, 6.9 MB, 32k, one thread: 5.47 G against 5.03 G). The passes it saves
/// were about a fifth of the passes' instructions (most passes follow a merge, under a fresh
/// `1 / count(s)`), and building and ordering the heap cost more than that.
/// Also lost (issue 15, `train7`): listing each pair of a symbol with an upper bound on its count
/// (its count when listed, tightened at each lookup), so that an expansion looks up only the pairs
/// whose bound reaches the top and covers the rest with the bounds. Same merges; a visit cost 105
/// instructions instead of 148, but the looser leftover bounds were expanded sooner: 8.6 M visits
/// instead of 6.7 M, and the run 1.5% more instructions (callgrind, BERT pre-split English,
/// 6.9 MB, 32k, one thread: 3.29 G against 3.24 G).
///
/// Kept (issue 15, `wp15`): the same bounds, but the rest's bound stays exact. A pair is looked up
/// only when its bound, over the current `count(s) · count(x)`, reaches the top or exceeds the
/// highest exact score of the rest so far; otherwise it can change neither the pushes nor the new
/// bound. The test is made in `f64` with a margin first (one load and a multiply), exactly only
/// near the limit. Same expansions, same bounds, same merges; on BERT pre-split English (6.9 MB,
/// 32k) 368 k lookups, not one per visit (10.7 M visits, 1.1 M of them to pairs that died
/// unlooked and stay listed; 6.7 M visits in the note above), the training thread 2.57 G ->
/// 2.23 G instructions (callgrind, 2 threads).
/// Lost: the pass as a plain loop with a write cursor instead of `retain_mut` (2.32 G against
/// 2.23 G, the same merges). Not tried: sharing an expansion between the threads. The lists are
/// short (English, the first 40,000 expansions: none past 1,023 pairs, most visits in lists of 64
/// to 1,023), a few microseconds of work each.
///
/// The invariant of [`Engine::best`] becomes: every live pair has a heap entry at least its true
/// score, or a symbol of it holds a bound at least its true score. A pair entry that is exact and
/// ranks above every bound is then the true maximum, ties included, so the merges are the same.
/// A bound goes stale-high as counts fall (an early expansion, harmless) but never low: the
/// scores of a symbol's pairs rise only when its count falls (the bound is recomputed), when the
/// other symbol's count falls (that symbol gets a bound), or when the pair's count rises (the pair
/// gets its own entry).
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

/// The flat symbol array shared by the threads of one merge. Each thread writes only the units
/// of its own share, and a unit appears in one share only (the list is deduped first), so no two
/// threads touch the same memory.
#[derive(Clone, Copy)]
pub(crate) struct SharedSyms(pub(crate) *mut u32);
unsafe impl Send for SharedSyms {}
unsafe impl Sync for SharedSyms {}

impl SharedSyms {
    /// The address `i` words in (a method, so a closure captures the whole `SharedSyms`).
    #[inline]
    fn at(&self, i: usize) -> *mut u32 {
        self.0.wrapping_add(i)
    }
}

/// Rewrites the units of `list` (distinct ids), joining `(a, b)` into `c`; adds the count
/// changes, the new places and the new lengths to `d` (empty, or kept from an earlier merge and
/// cleared).
#[allow(clippy::too_many_arguments)]
pub(crate) fn rewrite(
    syms: SharedSyms,
    meta: &[Meta],
    list: &[u32],
    a: u32,
    b: u32,
    c: u32,
    d: &mut Delta,
) {
    let mut old_pairs = std::mem::take(&mut d.old_pairs);
    let mut new_pos = std::mem::take(&mut d.new_pos);
    const AHEAD: usize = 8;
    for (k, &wi) in list.iter().enumerate() {
        if let Some(&next) = list.get(k + AHEAD) {
            prefetch(meta.as_ptr().wrapping_add(next as usize) as *const u8);
            if let Some(&near) = list.get(k + AHEAD / 2) {
                let m = meta[near as usize];
                prefetch(syms.0.wrapping_add(m.start()) as *const u8);
            }
        }
        let m = meta[wi as usize];
        let st = m.start();
        let n = m.len();
        // SAFETY: units are disjoint ranges of the array and `list` holds each unit once across
        // all threads of this merge (see `SharedSyms`).
        let s: &mut [u32] = unsafe { std::slice::from_raw_parts_mut(syms.0.add(st), n) };
        // the first site; a unit without one (listed under a pair it has since lost) is left be,
        // and the symbols before it stay where they are
        let Some(mut i) = first_site(s, a, b) else { continue };
        // joined in place: `j` (where the next symbol goes) trails `i` from the first site on,
        // so the old symbols at `i - 1` and after are still there to read the lost pairs from
        old_pairs.clear();
        new_pos.clear();
        let mut j = i;
        let mut last_old = usize::MAX; // where the last lost pair listed starts
        while i < n {
            if i + 1 < n && s[i] == a && s[i + 1] == b {
                if i > 0 && last_old != i - 1 {
                    old_pairs.push((s[i - 1], s[i]));
                }
                if last_old != i {
                    old_pairs.push((s[i], s[i + 1]));
                    last_old = i;
                }
                if i + 2 < n {
                    old_pairs.push((s[i + 1], s[i + 2]));
                    last_old = i + 1;
                }
                d.sites += m.count as i64;
                if j > 0 && new_pos.last() != Some(&(j - 1)) {
                    new_pos.push(j - 1);
                }
                new_pos.push(j);
                s[j] = c;
                j += 1;
                i += 2;
            } else {
                s[j] = s[i];
                j += 1;
                i += 1;
            }
        }
        let w = m.count as i64;
        for &(x, y) in &old_pairs {
            if x != NO_SYMBOL && y != NO_SYMBOL {
                d.change(pack(x, y)).1 -= w;
            }
        }
        let m = j;
        for &p in &new_pos {
            if p + 1 >= m {
                continue;
            }
            let (x, y) = (s[p], s[p + 1]);
            if x != NO_SYMBOL && y != NO_SYMBOL {
                let row = d.change(pack(x, y));
                row.1 += w;
                if row.2.last() != Some(&wi) {
                    row.2.push(wi);
                }
            }
        }
        d.lens.push((wi, m as u32));
    }
    (d.old_pairs, d.new_pos) = (old_pairs, new_pos);
}

/// Pair counts, and how many units hold each pair (in `len`), over a range of units (one
/// thread's share).
///
/// A pair's `at` (unused until [`place_pairs`]) holds the last unit that counted it, plus one,
/// so a unit adds to `len` once per pair. (A list of the unit's pairs searched at each pair was
/// quadratic in the unit's length: 5.5% of a run on multilingual text, whose Chinese and
/// Japanese lines are units of a hundred characters and more; issue 15.) The entries'
/// `at` are not read from these maps.
pub(crate) fn count_pairs(flat: &Flat, range: std::ops::Range<usize>) -> Map<u64, PairInfo> {
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
/// than one unit, then one pass over the units.
pub(crate) fn place_pairs(flat: &Flat, index: &mut PairIndex) -> Arena {
    let total: usize =
        index.values().filter(|v| v.len >= 2).map(|v| block_words(v.len as usize)).sum();
    let mut arena = Arena { words: Vec::with_capacity(total) };
    for v in index.values_mut() {
        if v.len >= 2 {
            v.at = arena.alloc(v.len as usize);
            // the capacity word counts the ids written until the pass is over
            arena.words[v.at as usize * 4] = 0;
        }
    }
    let w = &mut arena.words;
    for wi in 0..flat.units() {
        let id = wi as u32;
        for x in flat.unit(wi).windows(2) {
            if x[0] == NO_SYMBOL || x[1] == NO_SYMBOL {
                continue;
            }
            let v = index.get_mut(&pack(x[0], x[1])).expect("count_pairs saw every pair");
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
    for v in index.values() {
        if v.len >= 2 {
            let s = v.at as usize * 4;
            debug_assert_eq!(w[s], v.len);
            w[s] = (block_words(v.len as usize) - 1) as u32;
        }
    }
    arena
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

/// Whether the arena, `len` words now and `mark` after it was last built or compacted, is due
/// for compaction: once it has doubled (and grown by 64k words), or, from 32 MB, grown by a
/// quarter (its garbage is then a large part of a run's peak, and a compaction is cheap beside
/// the merges that fill it).
#[inline]
fn compaction_growth(len: usize, mark: usize) -> bool {
    let growth = if mark >= 1 << 23 { mark / 4 } else { mark };
    len > mark + growth + (1 << 16)
}
#[cfg(not(test))]
#[inline]
fn compaction_due(len: usize, mark: usize) -> bool {
    compaction_growth(len, mark)
}
// Tests can compact at every growth (`Some(true)`) or never (`Some(false)`): the results must
// not change.
#[cfg(test)]
thread_local! {
    static COMPACT: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
    static COMPACTIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The pair index's shards, when set (a power of two).
    static SHARDS: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// (times the heap floor was raised, times it was lowered)
    static FLOORS: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
    /// The count below which compaction drops pairs, when set (see `Engine::drop_below`).
    static DROP_BELOW: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
    /// Times the index was counted again (`Engine::restore`).
    static RESTORES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Merges that left an interned piece's pairs out of the index (see `Engine::untracked`).
    static LEFT_OUT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}
#[cfg(test)]
fn compaction_due(len: usize, mark: usize) -> bool {
    match COMPACT.with(|c| c.get()) {
        None => compaction_growth(len, mark),
        Some(always) => always && len > mark,
    }
}

/// Under counts, the heap keeps entries for about this many pairs once the index is larger
/// (see [`Engine::best`]): the pairs counted at least a floor, raised as the heap is rebuilt.
#[cfg(not(test))]
#[inline]
fn heap_keep() -> usize {
    1 << 17
}
// Tests can set it low, so that small corpora run under a floor: the merges must not change.
#[cfg(test)]
thread_local! {
    static HEAP_KEEP: std::cell::Cell<usize> = const { std::cell::Cell::new(1 << 17) };
}
#[cfg(test)]
fn heap_keep() -> usize {
    HEAP_KEEP.with(|k| k.get())
}

/// The largest power of two that at least `heap_keep()` of `counts` reach (0 when fewer than
/// that many are given): a heap floor keeping at least that many pairs.
fn floor_keeping(counts: impl Iterator<Item = u64>) -> u64 {
    let mut at_least = [0usize; 64];
    for c in counts {
        at_least[63 - c.max(1).leading_zeros() as usize] += 1;
    }
    let keep = heap_keep();
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
pub(crate) const PARALLEL_UNITS: usize = 4096;

/// The pair index of `flat` and its place lists, counted on `threads` threads.
fn build_index(flat: &Flat, threads: usize) -> (PairIndex, Arena) {
    let n = flat.units();
    let chunk = n.div_ceil(threads).max(1024);
    let ranges: Vec<std::ops::Range<usize>> =
        (0..n).step_by(chunk).map(|s| s..(s + chunk).min(n)).collect();
    let parts: Vec<_> = ranges.into_par_iter().map(|r| count_pairs(flat, r)).collect();
    let mut index = PairIndex::new(n);
    for c in parts {
        for (k, v) in c {
            let e = index.entry(k).or_default();
            e.count += v.count;
            e.len += v.len;
        }
    }
    let arena = place_pairs(flat, &mut index);
    (index, arena)
}

impl<'a> Engine<'a> {
    fn new(flat: Flat, symbols: &'a mut Symbols, params: &MergeParams) -> Self {
        let max_len = params.max_piece_length;
        let threads = rayon::current_num_threads().max(1);
        let (index, arena) = build_index(&flat, threads);
        let arena_mark = arena.words.len();
        let index_mark = index.len();
        let floor = match (params.score, params.min_count_rule) {
            (Score::WordPiece, MinCountRule::Filter) => params.min_count,
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
            may_drop: params.score == Score::Count,
            untracked: 0,
            last_count: 0,
            index_mark,
        };
        e.rebuild_heap();
        e
    }

    /// The count below which compaction drops a pair from the index (1: none is dropped): under
    /// a heap floor, the floor or a quarter of the last merge's count, whichever is lower, so
    /// that the best count must fall to a quarter before a dropped pair could matter.
    fn drop_below(&self) -> i64 {
        if !self.may_drop || self.heap_floor == 0 {
            return 1;
        }
        #[cfg(test)]
        if let Some(t) = DROP_BELOW.with(|d| d.get()) {
            return t;
        }
        self.heap_floor.min(self.last_count / 4).clamp(1, i64::MAX as u64) as i64
    }

    /// Compacts the place lists (and drops the rarely counted pairs, see [`Engine::untracked`]).
    fn compact(&mut self) {
        let below = self.drop_below();
        let dropped = self.arena.compact(&mut self.index, &self.flat, below);
        self.untracked = self.untracked.max(dropped);
        self.arena_mark = self.arena.words.len();
        self.index_mark = self.index.len();
    }

    /// The index counted again from the units, holding every pair (see [`Engine::untracked`]),
    /// and the heap rebuilt from it.
    fn restore(&mut self) {
        #[cfg(test)]
        RESTORES.with(|c| c.set(c.get() + 1));
        // the old index and lists go first: only one index is alive at a time
        self.index = PairIndex::new(0);
        self.arena = Arena::default();
        let (index, arena) = build_index(&self.flat, self.threads);
        (self.index, self.arena) = (index, arena);
        self.arena_mark = self.arena.words.len();
        self.index_mark = self.index.len();
        self.untracked = 0;
        // the pairs back in the index have no heap entries: a fresh heap from the index
        self.heap.nums.clear();
        self.heap.dens.clear();
        self.rebuild_heap();
    }

    fn order(&self) -> Order<'_> {
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
            nums.sort_unstable_by_key(|e| e.1);
            nums.dedup_by_key(|e| e.1);
            nums.retain_mut(|e| match self.entry(e.1) {
                Some(c) => {
                    e.0 = c.num;
                    true
                }
                None => false,
            });
            // every live pair counted at least the floor is here, so the HEAP_KEEP-th largest
            // count of the heap is that of the index: raise the floor to it (never lower)
            if nums.len() > 2 * heap_keep() {
                let floor = floor_keeping(nums.iter().map(|e| e.0));
                #[cfg(test)]
                if floor > self.heap_floor {
                    FLOORS.with(|c| c.set((c.get().0 + 1, c.get().1)));
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
        let c = self.index.get(&p)?.count;
        if c <= 0 || (c as u64) < self.floor {
            return None;
        }
        let (a, b) = unpack(p);
        let den = match self.score {
            Score::Count => 1,
            Score::WordPiece => {
                let base = self.symbols.base;
                // counts are never negative: through `u64`, the product is one 64-bit multiply
                self.sym_count[(a - base) as usize] as u64 as u128
                    * self.sym_count[(b - base) as usize] as u64 as u128
            }
        };
        Some((c as u64, den))
    }

    fn entry(&self, p: u64) -> Option<Cand> {
        let (num, den) = self.score_of(p)?;
        let (a, b) = unpack(p);
        if let Some(m) = self.max_len {
            if self.symbols.len(a) + self.symbols.len(b) > m {
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
    fn best(&mut self) -> Option<(u64, u64)> {
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
            let next =
                floor_keeping(self.index.values().filter(|v| v.count > 0).map(|v| v.count as u64));
            self.heap_floor = if next < self.heap_floor { next } else { 0 };
            #[cfg(test)]
            FLOORS.with(|c| c.set((c.get().0, c.get().1 + 1)));
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
    fn apply(&mut self, pair: u64, c: u32, interned: bool) -> i64 {
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
        let meta = &self.flat.meta;
        let mut results: Vec<Delta> = if list.len() < PARALLEL_UNITS || self.threads == 1 {
            let mut d = std::mem::take(&mut self.delta);
            rewrite(ptr, meta, &list, a, b, c, &mut d);
            vec![d]
        } else {
            let per = list.len().div_ceil(self.threads);
            list.par_chunks(per)
                .map(|part| {
                    let mut d = Delta::default();
                    rewrite(ptr, meta, part, a, b, c, &mut d);
                    d
                })
                .collect()
        };
        let mut raised: Vec<u64> = Vec::new();
        let mut sites = 0i64;
        // gains of pairs left out of the index (see `untracked`)
        let mut left_out: Vec<(u64, i64)> = Vec::new();
        for (k, d) in results.iter().enumerate() {
            sites += d.sites;
            for &(wi, m) in &d.lens {
                self.flat.meta[wi as usize].set_len(m);
            }
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
                    raised.push(q);
                }
                // the places the other threads' deltas add to this pair after these
                let more: usize = if places.is_empty() {
                    0
                } else {
                    results[k + 1..]
                        .iter()
                        .filter_map(|o| o.slots.get(&q).map(|&r| o.changes[r as usize].2.len()))
                        .sum()
                };
                self.arena.extend(e, places, more);
            }
        }
        if let Some(mut d) = results.pop() {
            d.clear();
            self.delta = d;
        }
        if !left_out.is_empty() {
            #[cfg(test)]
            LEFT_OUT.with(|c| c.set(c.get() + 1));
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
        self.index.remove(&pair);
        raised.sort_unstable();
        raised.dedup();
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
            for &q in &raised {
                let (x, y) = unpack(q);
                // its count now: an upper bound from here on (a count only rises in a merge,
                // and a raised pair is listed again)
                let n = self.index.get(&q).map_or(0, |v| v.count.max(0) as u64);
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
        {
            let mut heap = std::mem::take(&mut self.heap);
            let order = self.order();
            for q in raised {
                if let Some(en) = self.entry(q) {
                    if en.num >= self.heap_floor {
                        heap.push(en, &order);
                    }
                }
            }
            self.heap = heap;
        }
        // stale entries pile up (a pair whose count rose several times has one entry per rise;
        // WordPiece re-pushes every pair of the merged symbols): rebuild from the live pairs
        // once the stale ones match them in number (the index's size bounds the live pairs)
        if self.heap.len() > 2 * self.index.len() + (1 << 12)
            || (!self.heap.wide && self.heap.len() > 2 * self.heap_mark.max(heap_keep()))
        {
            self.rebuild_heap();
        }
        // the place lists grow with the merges (each rewritten unit lists its new pairs, and
        // stays listed under the pairs it lost): pack them once they have doubled
        if compaction_due(self.arena.words.len(), self.arena_mark) {
            self.compact();
        } else if self.index.len() > 2 * self.index_mark + (1 << 16) && self.drop_below() > 1 {
            // the rarely counted pairs, once the index has doubled (see `untracked`); their
            // lists wait for the next compaction
            let below = self.drop_below();
            let dropped = drop_pairs(&mut self.index, below);
            self.untracked = self.untracked.max(dropped);
            self.index_mark = self.index.len();
        }
        sites
    }

    fn pieces(&self) -> u64 {
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
    let mut winner_failed = None;
    if let Some(p) = progress {
        p.start(crate::progress::Phase::Merging, params.new_rows);
    }
    let mut engine = Engine::new(units, symbols, params);
    let mut tracer = Tracer::take(&engine, trace);
    // a trace lists ties and forced pairs from the index: it keeps every pair
    engine.may_drop &= tracer.is_none();
    let mut merges = Vec::new();
    let mut new_rows = 0u64;
    let stop = loop {
        if new_rows >= params.new_rows {
            break Stop::Size;
        }
        let forced = match tracer.as_mut() {
            Some(t) => match t.forced_pair(&engine) {
                Ok(f) => f,
                Err(()) => break Stop::NoPairs,
            },
            None => None,
        };
        let Some((pair, count)) = forced.or_else(|| {
            if params.score == Score::WordPiece {
                engine.best_wordpiece()
            } else {
                engine.best()
            }
        }) else {
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
        let text = engine.symbols.join(a, b);
        let (c, is_new) = match engine.symbols.index.get(text.as_slice()) {
            Some(&c) => (c, false),
            None => {
                let len = engine.symbols.len(a) + engine.symbols.len(b);
                new_rows += 1;
                let key = engine.tie.key(&text);
                engine.heads.push(key_head(&key));
                engine.keys.push(key);
                (engine.symbols.push(text, len), true)
            }
        };
        merges.push([a, b, c]);
        let score = engine.score_of(pair).map(|(_, d)| d).unwrap_or(1);
        engine.last_count = count;
        let sites = engine.apply(pair, c, !is_new);
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
    Merged { merges, new_rows, stop, pieces_after, winner_failed }
}

// ------------------------------------------------------------------------------------------------
// Tracing (issue 11: `subwords.measure`). Off unless the caller hands `learn` a request (the
// pipeline's `Traces`): the request goes in, and the trace comes back, in the same slot, which
// both stages of superword BPE share. Tracing costs O(1) per
// step (the corpus length is kept from each merge's site count); asking for the tied candidates
// costs one pass over the live pairs per step, which is for small corpora.

/// What to record, and which choices to force.
#[derive(Clone, Debug, Default)]
pub struct TraceRequest {
    /// Record each step's tied candidates (every live pair with the winner's exact score).
    pub ties: bool,
    /// At most this many tied candidates per step are listed (`tie_count` still counts all).
    pub max_ties: usize,
    /// `(step, left, right)`: at merge number `step` (1-based, counted across both stages) take
    /// this pair instead of the tie rule's choice. It must be a live candidate at that step.
    pub forced: Vec<(u64, Vec<u8>, Vec<u8>)>,
}

/// One merge as the engine took it.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceStep {
    /// 1 for the only (or first) stage, 2 for superword BPE's second.
    pub stage: u32,
    pub left: Vec<u8>,
    pub right: Vec<u8>,
    pub result: Vec<u8>,
    /// The score `num / den` (`den` = 1 under counts: `num` is the pair count).
    pub num: u64,
    pub den: u128,
    /// Tied candidates in the tie rule's order (the rule's own choice first), capped at
    /// `max_ties`; empty unless asked for.
    pub ties: Vec<(Vec<u8>, Vec<u8>)>,
    /// How many candidates tied (1 = no tie; 0 when ties were not asked for).
    pub tie_count: usize,
    /// True when the pair was a forced choice.
    pub forced: bool,
    /// False when the joined piece already had a row (interned: no row added).
    pub new_row: bool,
    /// Σ count × length of the stage's units after this step (engine pieces; the pipeline adds
    /// the symbols outside the alphabet to its report, see `corpus_pieces_before`).
    pub pieces_after: u64,
    /// Rows added by the merge engine so far (both stages).
    pub new_rows_after: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct MergeTrace {
    /// Engine pieces at the start of each stage.
    pub stage_pieces_before: Vec<u64>,
    pub steps: Vec<TraceStep>,
    /// Set when a forced choice could not be taken (the run stopped at that step).
    pub error: Option<String>,
}

struct Tracer {
    request: TraceRequest,
    trace: MergeTrace,
    stage: u32,
    rows_before: u64,
    pieces: u64,
}

impl Tracer {
    fn take(engine: &Engine<'_>, slot: &mut Option<(TraceRequest, MergeTrace)>) -> Option<Tracer> {
        let (request, mut trace) = slot.take()?;
        let pieces = engine.pieces();
        trace.stage_pieces_before.push(pieces);
        let stage = trace.stage_pieces_before.len() as u32;
        let rows_before = trace.steps.last().map_or(0, |s| s.new_rows_after);
        Some(Tracer { request, trace, stage, rows_before, pieces })
    }

    fn put_back(self, slot: &mut Option<(TraceRequest, MergeTrace)>) {
        *slot = Some((self.request, self.trace));
    }

    /// The forced pair of the coming step, if one is asked for; `Err` (and the trace's error)
    /// when it is not a live candidate.
    fn forced_pair(&mut self, engine: &Engine<'_>) -> std::result::Result<Option<(u64, u64)>, ()> {
        if self.trace.error.is_some() {
            return Err(());
        }
        let step = self.trace.steps.len() as u64 + 1;
        let Some((_, l, r)) = self.request.forced.iter().find(|f| f.0 == step) else {
            return Ok(None);
        };
        let show = |t: &[u8]| String::from_utf8_lossy(t).into_owned();
        let id = |t: &[u8]| engine.symbols.index.get(t).copied();
        let live = match (id(l), id(r)) {
            (Some(a), Some(b)) => engine.entry(pack(a, b)).map(|e| (e.pair, e.num)),
            _ => None,
        };
        match live {
            Some(p) => Ok(Some(p)),
            None => {
                self.trace.error = Some(format!(
                    "step {step}: ({:?}, {:?}) is not a candidate pair at that step (no such pieces, not adjacent \
                     anywhere, or excluded by max_piece_length / min_count); ask for one of the step's candidates",
                    show(l),
                    show(r)
                ));
                Err(())
            }
        }
    }

    /// Every live candidate with `pair`'s exact score, in the tie rule's order.
    fn ties_of(&self, engine: &Engine<'_>, pair: u64) -> (Vec<(Vec<u8>, Vec<u8>)>, usize) {
        if !self.request.ties {
            return (Vec::new(), 0);
        }
        let Some(w) = engine.entry(pair) else { return (Vec::new(), 0) };
        let mut tied: Vec<Cand> = engine
            .index
            .keys()
            .filter_map(|&p| engine.entry(p))
            .filter(|e| cmp_fraction(e.num, e.den, w.num, w.den) == Ordering::Equal)
            .collect();
        let order = engine.order();
        tied.sort_by(|x, y| order.cmp(y, x));
        let n = tied.len();
        let list = tied
            .iter()
            .take(self.request.max_ties.max(1))
            .map(|e| {
                let (a, b) = unpack(e.pair);
                (engine.symbols.text(a).to_vec(), engine.symbols.text(b).to_vec())
            })
            .collect();
        (list, n)
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        engine: &Engine<'_>,
        abc: [u32; 3],
        num: u64,
        den: u128,
        ties: (Vec<(Vec<u8>, Vec<u8>)>, usize),
        forced: bool,
        new_row: bool,
        sites: i64,
        new_rows: u64,
    ) {
        self.pieces -= sites as u64;
        let t = |x: u32| engine.symbols.text(x).to_vec();
        self.trace.steps.push(TraceStep {
            stage: self.stage,
            left: t(abc[0]),
            right: t(abc[1]),
            result: t(abc[2]),
            num,
            den,
            ties: ties.0,
            tie_count: ties.1,
            forced,
            new_row,
            pieces_after: self.pieces,
            new_rows_after: self.rows_before + new_rows,
        });
    }
}

#[cfg(test)]
mod cmp_joined_tests {
    use super::cmp_joined;

    /// `cmp_joined` against the joined byte strings themselves, on every way of cutting a few
    /// strings in two (empty halves, prefixes of each other, equal texts cut differently).
    #[test]
    fn cmp_joined_orders_as_the_joined_texts_do() {
        let texts: [&[u8]; 9] =
            [b"", b"a", b"ab", b"abc", b"abd", b"b", b"##ab", b"\xe2\x96\x81a", b"aab"];
        let mut checked = 0;
        for x in texts {
            for y in texts {
                for i in 0..=x.len() {
                    for j in 0..=y.len() {
                        let (a1, a2) = x.split_at(i);
                        let (b1, b2) = y.split_at(j);
                        assert_eq!(
                            cmp_joined(a1, a2, b1, b2),
                            x.cmp(y),
                            "{a1:?}+{a2:?} vs {b1:?}+{b2:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 500);
    }
}

#[cfg(test)]
mod key_head_tests {
    use super::key_head;
    use std::cmp::Ordering;

    /// Heads that differ order as the keys do; the pairs listed with equal heads are the ones the
    /// order must settle on the keys themselves.
    #[test]
    fn differing_heads_order_as_the_keys_do() {
        let keys: [&[u8]; 12] = [
            b"",
            b"\0",
            b"a",
            b"a\0",
            b"ab",
            b"abcdefgh",
            b"abcdefgha",
            b"abcdefgz",
            b"b",
            b"\xe2\x96\x81",
            b"\xe2\x96\x81a",
            b"~",
        ];
        let mut equal = Vec::new();
        for x in keys {
            for y in keys {
                let (hx, hy) = (key_head(x), key_head(y));
                if hx == hy {
                    if x != y {
                        equal.push((x, y));
                    }
                } else {
                    assert_eq!(hx.cmp(&hy), x.cmp(y), "{x:?} vs {y:?}");
                }
            }
        }
        // "" and "\0" pad alike, as do "a" and "a\0", and two keys that agree on 8 bytes
        let e: &[(&[u8], &[u8])] = &[
            (b"", b"\0"),
            (b"\0", b""),
            (b"a", b"a\0"),
            (b"a\0", b"a"),
            (b"abcdefgh", b"abcdefgha"),
            (b"abcdefgha", b"abcdefgh"),
        ];
        assert_eq!(equal, e);
        assert_eq!(key_head(b"ab").cmp(&key_head(b"b")), Ordering::Less);
    }
}

#[cfg(test)]
mod arena_tests {
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
        let mut index = PairIndex::new(0);
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
        let mut arena = arena;
        arena.compact(&mut index, &flat, 1);
        assert!(!index.contains_key(&pack(9, 9)));
        assert_eq!(ids(&arena, &index[&pack(1, 2)]), vec![0, 1, 3]);
        assert_eq!(ids(&arena, &index[&pack(2, 3)]), vec![0, 2]);
        assert_eq!(ids(&arena, &index[&pack(3, 1)]), vec![3]);
        // two lists of 3 and 2 ids: one 4-word block each
        assert_eq!(arena.words.len(), 8);
    }

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

    fn run(always: bool, params: &MergeParams) -> (Vec<[u32; 3]>, u64, Vec<Vec<u8>>) {
        run_on(corpus(3000), always, params)
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
        always: bool,
        params: &MergeParams,
    ) -> (Vec<[u32; 3]>, u64, Vec<Vec<u8>>) {
        COMPACT.with(|c| c.set(Some(always)));
        COMPACTIONS.with(|c| c.set(0));
        let out = learn(flat, &mut symbols, params, None);
        COMPACT.with(|c| c.set(None));
        (out.merges, out.pieces_after, symbols.texts.iter().map(|t| t.to_vec()).collect())
    }

    #[test]
    fn a_heap_floor_changes_no_merge() {
        // with room for 16 pairs the heap runs under a floor from its first rebuild, raises
        // it, and runs out of entries (the floor lowered, the pairs taken from the index)
        let params = MergeParams::bpe(600, 1, None);
        let all = run(false, &params);
        HEAP_KEEP.with(|k| k.set(16));
        FLOORS.with(|c| c.set((0, 0)));
        let floored = run(false, &params);
        let (raised, lowered) = FLOORS.with(|c| c.get());
        HEAP_KEEP.with(|k| k.set(1 << 17));
        assert!(raised >= 1 && lowered >= 2, "floors raised {raised}, lowered {lowered}");
        assert!(all.0.len() > 100, "the corpus gives room for many merges: {}", all.0.len());
        assert_eq!(all, floored);
        // and under max_piece_length, where some pairs are never candidates
        let params = MergeParams::bpe(600, 1, Some(3));
        let all = run(false, &params);
        HEAP_KEEP.with(|k| k.set(16));
        let floored = run(false, &params);
        HEAP_KEEP.with(|k| k.set(1 << 17));
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
            let all = run_on(corpus_with_joined(), false, &params);
            assert!(all.0.len() > 100, "the corpus gives room for many merges: {}", all.0.len());
            // (8 letters, then a row per new piece)
            assert!(all.2.len() - 8 < all.0.len(), "some merges are interned");
            HEAP_KEEP.with(|k| k.set(16));
            for below in [None, Some(8), Some(i64::MAX)] {
                DROP_BELOW.with(|d| d.set(below));
                RESTORES.with(|c| c.set(0));
                LEFT_OUT.with(|c| c.set(0));
                let dropped = run_on(corpus_with_joined(), true, &params);
                let (restores, left_out) = (RESTORES.with(|c| c.get()), LEFT_OUT.with(|c| c.get()));
                DROP_BELOW.with(|d| d.set(None));
                eprintln!("max_len {max_len:?} below {below:?}: {restores} restores, {left_out} merges left pairs out");
                assert_eq!(all, dropped, "max_len {max_len:?}, below {below:?}");
                if below == Some(i64::MAX) {
                    assert!(restores > 20, "restores: {restores}");
                }
                if below == Some(8) && max_len.is_none() {
                    assert!(left_out > 0, "an interned piece's pairs were left out");
                }
            }
            HEAP_KEEP.with(|k| k.set(1 << 17));
        }
    }

    #[test]
    fn an_index_in_shards_changes_no_merge() {
        for params in [
            MergeParams::bpe(600, 1, None),
            MergeParams { score: Score::WordPiece, ..MergeParams::bpe(400, 1, None) },
        ] {
            let one = run(true, &params);
            SHARDS.with(|s| s.set(Some(16)));
            let sixteen = run(true, &params);
            SHARDS.with(|s| s.set(None));
            assert!(one.0.len() > 100, "the corpus gives room for many merges: {}", one.0.len());
            assert_eq!(one, sixteen);
        }
    }

    #[test]
    fn compacting_the_lists_at_every_chance_changes_no_merge() {
        let bpe = MergeParams::bpe(400, 1, None);
        let mut wp = MergeParams::bpe(400, 1, None);
        wp.score = Score::WordPiece;
        for params in [&bpe, &wp] {
            let never = run(false, params);
            assert_eq!(COMPACTIONS.with(|c| c.get()), 0);
            let always = run(true, params);
            assert!(
                COMPACTIONS.with(|c| c.get()) >= 3,
                "compactions: {}",
                COMPACTIONS.with(|c| c.get())
            );
            assert!(
                never.0.len() > 100,
                "the corpus gives room for many merges: {}",
                never.0.len()
            );
            assert_eq!(never, always);
        }
    }
}
