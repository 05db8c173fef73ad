//! The merge engine shared by BPE (score: the pair's count) and WordPiece (score:
//! `count(a, b) / (count(a) · count(b))`).
//!
//! Input: units spelled as symbol ids with counts ([`Flat`]) and the symbol table ([`Symbols`]).
//! Each round takes the best pair, joins it into one symbol in every unit that holds it (left to
//! right, without overlap), and adds the joined piece as a row. A joined piece that already exists
//! (two merge paths to one string) reuses its row: the merge gets a rank, no row is added.
//!
//! Files, one job each: `units.rs` stores the units, the place lists' arena and the rewrite of a
//! merge; `index.rs` the pair index; `heap.rs` the candidate heap and the tie rule's order;
//! `engine.rs` the engine's state and the merge loop ([`learn`]); `trace.rs` the optional trace.
//!
//! What the engine owns: the units (rewritten in place), the pair index (`pair -> count, units
//! holding it`), the heap of candidates, WordPiece's symbol counts with a bound per symbol over
//! its pairs' scores, and the rows it adds to [`Symbols`].
//!
//! Counting (DESIGN §2): `count(a, b)` = Σ count(unit) × adjacent occurrences, overlapping
//! positions included.
//!
//! Tie rule: the larger score wins, compared exactly as a fraction; then (WordPiece) the smaller
//! joined text; then the smaller `(left, right)` by the pieces' bytes in the tie spelling
//! ([`TieSpelling`]; UTF-8 byte order is code-point order, so `▁` loses every tie to a letter).
//! Nothing depends on hash-map order, the thread count, or the order the units arrive in.
//!
//! Invariants:
//! * A pair's count in the index is its count over the units; its place list holds every unit
//!   that holds it, and maybe stale ids (skipped when it is merged, dropped by a compaction).
//! * Every live pair has a heap entry scoring at least its true score (entries are pushed only
//!   when a count rises; a popped entry that over-states its pair goes back with the true score),
//!   so an exact top entry is the best pair, ties included. Under WordPiece a pair may instead be
//!   covered by a bound of one of its symbols; under a heap floor this holds for the pairs
//!   counted at least the floor, and when no entry is left the floor is lowered.
//! * A pair the index dropped counts at most `untracked`: a best pair counted above it is the best
//!   of all; otherwise the index is counted again from the units.
//! * Compaction, shards, the heap floor and dropped pairs change the memory, never a merge; tests
//!   run each at its extreme through [`Tuning`] and demand the same merges.
//!
//! Complexity: building the index is one pass over the symbols, split over the threads. A merge
//! scans each unit on its pair's place list whole, and costs O(log h) per changed pair pushed on
//! a heap of h entries (a stale entry, popped later, O(log h) too). Memory at the peak: 4 bytes a
//! symbol, 16 a unit, about 1.65 map slots of 24 bytes a pair, 4 bytes a listed place.
//!
//! Measured choices. "English": 7 MB of English, BPE `front` at 32k, callgrind instructions of
//! the whole process on one thread; "N M table": a Zipf count table of N M distinct units, BPE
//! `front` at 32k, peak RSS. Every change kept the model bytes.
//! * One flat symbol array and one record per unit, visited in sorted order with a prefetch, not
//!   a `Vec` per unit: 26 s -> 9 s (145 MB of mixed text, 2 M units, 32k, 2 cores).
//! * Place lists counted first, then filled at their exact sizes by each thread for its share of
//!   the pairs, not built per thread and appended: peak 1.1 GB -> 0.58 GB (the same 145 MB).
//! * Heap pop down to a leaf along the better children, and an over-stated top replaced in one
//!   pass down: the heap's search 238 M -> 186 M instructions (English).
//! * A unit joined in place from its first site, reading the lost pairs as it goes, not copied
//!   out and back: the rewrite 477 M -> 382 M instructions (English), 1,704 M -> 1,316 M on 15 MB
//!   of multilingual text, whose CJK lines are units of a hundred characters and more.
//! * One kept `Delta` row per changed pair, not two maps and a `Vec` per pair
//!   built and freed at each merge: those were a third of the rewrite's instructions (English).
//! * A pair's units counted with a stamp, not by searching the unit's pairs so far: -100 M
//!   instructions, 5.5% of a run, on the multilingual text.
//! * Tie keys compared through their first 8 bytes as one integer: the keys' `memcmp` had been
//!   in the heap's 19% of a run (English).
//! * The narrow heap's comparisons inline (`heap::Order::before_counts`: the counts, then the
//!   heads; equal heads go to the full order): the search for the best pair 181 M -> 138 M
//!   instructions (English; 2.2 M comparisons, half of them ties on the count); its moves
//!   through a hole on the entries as they lie, not swaps of candidates: 138 M -> 95 M.
//! * Heap entries of 16 bytes (WordPiece's denominators in a parallel array), slots of 24 bytes
//!   with a one-unit list inline, longer lists in one arena: 327 -> 255 B per unit (3 M table).
//! * Under counts, past 2 x 128k heap entries only the pairs counted at least a floor keep
//!   entries: the heap 4.18 M -> 181 k entries at the end, 661 -> 591 MB (3 M table, with
//!   compaction at half growth from 32 MB). A heap under 256k entries (English: 159 k) has none.
//! * From 32 MB of place lists, compaction at a quarter's growth, not half (below 32 MB, at
//!   doubling): 3 M table 351 -> 325 MB for 8.7 -> 10.0 CPU s; `mark / 2` is the faster choice.
//!   BPE's only or first stage compacts at doubling at any size
//!   ([`Compaction::Doubling`]): on 100 MB of mixed text the quarter rule compacted after 40
//!   merges, and five times in all. It now compacts at quadrupling
//!   ([`Compaction::Quadrupling`]), which 32k rows do not reach: code under `front` (31 MB, one
//!   thread), whose two compactions at doubling took 1,133 M instructions, 9,078 M -> 8,244 M in
//!   the process (the merges that take a list visit its stale ids: the rewrite +226 M); peak
//!   RSS on 2 threads 141 -> 189 MB on code, 313 -> 333 MB on 100 MB (sentencepiece: 514 and
//!   1,160 MB).
//! * The index in 64 shards: 591 -> 531 MB (3 M table); with shares spread over one doubling
//!   (`2^(i/64)`), so the shards double one at a time, 515 -> 456 MB; +0.32% instructions
//!   (English). The spread keeps about 1.65 slots a pair at any size, against 1.14 to 2.29.
//! * Unit records of 16 bytes (start and length packed in one `u64`): 531 -> 515 MB (3 M table).
//! * Under a heap floor, compaction drops the pairs counted below the floor or a quarter of the
//!   last merge's count, whichever is lower, with a bound on them: 461 -> 351 MB (3 M table;
//!   the index counted again not once). Also compacting the lists at each of the index's
//!   doublings took 138 CPU s on the 20 M table before it was stopped, against 82 for a run.
//! * A new pair's list takes one block sized from the merge's places, not blocks of 2, 4, 8...
//!   ids: fewer compactions, the same peak.
//! * The compaction's stale check visits each list's units in sorted order with a prefetch:
//!   unsorted and without it, compaction took a third of a run.
//! * `first_site` a plain loop, not `windows(2).any(..)`: 6,505 M -> 6,464 M instructions on the
//!   multilingual text (its long units are checked once per list they are in).
//! * A merge's sites found four positions at a time with SSE2 (`next_site`), the stretches
//!   between them moved in one copy: code under `front` (31 MB, one thread) 8,185 M -> 7,215 M
//!   instructions in the engine, the rewrite 4,459 M -> 3,996 M; English +19 M in the rewrite
//!   (units of 9 symbols, where the scan was short already).
//! * A merge's changed pairs found in a small open-addressing table of the delta's own
//!   (`units::Delta`), not a `HashMap`, and the pairs a unit loses counted as they are read,
//!   not listed first: 8 MB of code under `front`, one thread, the rewrite 1,021 M -> 787 M
//!   instructions, the process 2,984 M -> 2,719 M. A table of four words a symbol (for
//!   `(x, a)`, `(b, x)`, `(x, c)`, `(c, x)`) took the rewrite to 804 M; behind an out-of-line
//!   call it cost more than the map (55 instructions a lookup against 51).
//! * Where the rewrite's instructions go (8 MB of code, `front`): the four-wide site scan
//!   ~55 M of them (5.3 M steps), 0.6 M of 2.1 M unit visits stale; the rest is per-site work
//!   (6.8 M changed-pair counts, the moves, the new places) that lists of sites with links
//!   between symbols would still do.
//! * Counted per instruction on the first 8 MB of `code.txt` (`front`, 32k, one thread; the
//!   rewrite 652 M of its own): 2.61 M unit visits, 1.10 M of them stale, 1.57 M sites. The
//!   walk over the lists (the ids, the two prefetches, the records) ~47 instructions a visit,
//!   120 M; the first-site scans 85 M; each rewritten unit's set-up and record 58 M; the joins
//!   ~250 a site (four lookups in the delta, the new places, the scan to the next site, the
//!   moves), 390 M. No one place is a fifth of it.
//! * The delta's lookups in a join test only the neighbour that may be a cut (the other is `a`,
//!   `b` or the joined symbol), its table made ready once a rewrite instead of tested at every
//!   lookup, its rows reached without a bounds check: the rewrite 708 M -> 700 M instructions
//!   (inclusive, those 8 MB of code), English 304 M -> 300 M.
//! * Tried and lost: the join of a unit from its first site as a call of its own, so that the
//!   walk over the lists (two visits in five stale on code) kept its state in registers: the
//!   rewrite 708 M -> 734 M (the same 8 MB).
//! * Up to 512 symbols, the index is first built in a table with a cell per pair
//!   (`index::dense_index`): 1,043 M -> 585 M instructions on code, 121 M -> 69 M on English.
//!   Past 512 symbols, the most frequent 512 get the table's rows (`index::Ranks`) and the
//!   other pairs go through the map: a quarter of 100 MB of mixed text (5,710 characters, 98%
//!   of the units' symbol pairs between two of the 512) 1,025 M -> 827 M; up to 512 symbols,
//!   each ranked by its id, the cells come from the ids in a loop of their own.
//! * The table's place lists filled on the threads (`index::place_split`): each share of the
//!   units the count split writes its ids from the number of units the shares before it hold
//!   the pair in, counted then, so the lists are the serial pass's, in unit order. The pass
//!   was serial on any thread count (multilingual text 261 M instructions, code under `front`
//!   406 M, one thread).
//! * A table of more than 64k units ranks its symbols from every fourth unit (`index::Ranks`):
//!   the index's count 262 M -> 222 M instructions on the multilingual text (6,367 symbols).
//! * Lost: the first heap's live pairs sorted by rayon's parallel sort with their counts, not
//!   looked up again: 28.5 M instructions on one thread against the serial sort's 20.9 M.
//! * A merge's own pair is not looked up in the delta's table at each site: its losses are
//!   summed and changed once per rewrite call (the rewrite 2,289 M -> 2,227 M on the same text).
//! * WordPiece defers the re-push of a merged symbol's pairs behind one bound per symbol (see
//!   `WordPieceGroup` in `engine.rs`): 2.05 -> 1.15 CPU s (whitespace-split English, 6.9 MB, 32k).
//!   The bounds' expansion and its measured variants are listed there.
//! * An index of more than 2 x 128k pairs starts under the heap floor its first rebuild would
//!   set, and drops the pairs compaction would drop after the first merge before their place
//!   lists are made: SuperBPE's stage two (100 MB of mixed text, 32k rows, 2.6 M pairs, most in
//!   one span) 466 -> 344 MB at its peak, the same merges.
//! * A raised pair's heap entry made from the count `Engine::absorb` read as it changed it, not
//!   looked up again: `push_raised` 94.6 M -> 72.0 M instructions (8 MB of code under `front`,
//!   one thread; the whole process 2,665 M -> 2,643 M).
//! * Lost: `next_site` eight positions a step before the four (two mask pairs or-ed): the
//!   rewrite 805 M -> 843 M instructions on the same 8 MB of code; most scans end within a few
//!   steps (code under `front` at 32k: 146 M symbols scanned over 11.3 M unit visits).
//! * Where a merge's work goes, counted (32k rows; `bytes` with the GPT-2 pre-split on the same
//!   text beside it): code under `front` visits 11.3 M units (5.1 M of them stale, listed under a
//!   pair they lost), rewrites 6.5 M sites and scans 146 M symbols to find them; `bytes` 1.0 M,
//!   0.59 M and 6.7 M. The stale visits are the lists' lazy cleaning: each stale id is read once,
//!   when its pair is merged, where a compaction reads every listed id.
//! * A site's gained pairs read as the site is joined (the symbol already in place before it, the
//!   old one after it), not from a list of new positions walked once the unit is done; the
//!   short stretches between sites moved without bounds checks; a scan's last one to three
//!   positions in one more four-wide step over the unit's last five symbols, not one at a time:
//!   the rewrite 346 M -> 307 M instructions (English, `front`, 32k, one thread; 0.75 M of its
//!   1.24 M unit visits rewrite a site), 1,171 M -> 1,037 M on 15 MB of multilingual text.
//! * The heap rebuilt from its entries without sorting them by pair to find a pair's repeats
//!   (a kept pair's count is negated in the index meanwhile): 204 M -> 108 M instructions for
//!   the multilingual text's one rebuild in the loop, of which the sort had been 120 M.
//! * `absorb`'s list of raised pairs kept from merge to merge, and a new symbol's text copied
//!   into its `Rc` once: `absorb` 124 M -> 110 M, `Engine::piece` 49 M -> 37 M (English).
//! * A rewritten unit's length written in its record as it is rewritten, not listed for
//!   `absorb` to write: the rewrite and `absorb` 417 M -> 405 M instructions (English), 1,357 M
//!   -> 1,318 M (multilingual).
//! * Where the loop's instructions go now (English, `front`, 32k, one thread): the rewrite 304 M
//!   (0.49 M of its 1.24 M unit visits stale), `absorb` 101 M, the search for the best pair
//!   93 M, the heap's pushes 42 M, `Engine::piece` 37 M; the loop (merges, the index aside)
//!   702 M -> 626 M with the changes above, the multilingual text's 2,063 M -> 1,753 M, code
//!   under `front` (31 MB) 4,753 M -> 4,118 M (the rewrite 3,418 M -> 3,013 M, `absorb` 607 M ->
//!   490 M, the heap's rebuilds 191 M -> 95 M).
//! * Not done: `u16` symbols while the vocabulary fits (2 bytes of every 4 of the symbols).

mod engine;
pub(crate) mod handle;
mod heap;
mod index;
pub mod length_max;
pub mod parity;
pub mod picky;
pub mod scaffold;
#[cfg(test)]
mod testing;
mod trace;
mod units;

use std::rc::Rc;

use crate::hash::Map;

pub use engine::{learn, learn_scaffold, learn_traced};
pub use trace::{MergeTrace, TraceRequest, TraceStep};
pub use units::{Flat, Meta};

/// One option a training method refuses: a test on the options, and the reason given when it
/// holds (each method's `validate` lists its own, in the order they are checked).
pub(crate) type Refusal = (fn(&crate::options::TrainOptions) -> bool, &'static str);

/// The first of `refusals` that holds for `opts`, as an option error with its reason.
pub(crate) fn refuse(
    opts: &crate::options::TrainOptions,
    refusals: &[Refusal],
) -> crate::error::Result<()> {
    match refusals.iter().find(|(holds, _)| holds(opts)) {
        Some((_, why)) => Err(crate::error::Error::Option((*why).to_string())),
        None => Ok(()),
    }
}

/// Symbol id used for symbols outside the alphabet (alphabet limits): never part of a pair.
pub const NO_SYMBOL: u32 = u32::MAX;

pub(crate) use crate::hash::pack;
#[inline]
pub(crate) fn unpack(p: u64) -> (u32, u32) {
    ((p >> 32) as u32, p as u32)
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
        let mut v = Vec::with_capacity(l.len() + r.len());
        v.extend_from_slice(l);
        v.extend_from_slice(r);
        v
    }

    /// Registers a symbol text at a given id (ids must be contiguous from `first_id`).
    pub fn push(&mut self, text: Vec<u8>, length: u32) -> u32 {
        let id = self.base + self.texts.len() as u32;
        self.texts.push(Rc::from(&text[..]));
        self.index.insert(text.into_boxed_slice(), id);
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
    /// BoundlessBPE: the cap on merges and supermerges was reached.
    EventLimit,
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Size => "size",
            Stop::MinCount => "min_count",
            Stop::NoPairs => "no_pairs",
            Stop::EventLimit => "event_limit",
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
    /// Length-MAX ([`length_max`]): the largest `count(a, b) · (len(a) + len(b))`, the joined
    /// piece's length in alphabet symbols; pairs counted below `min_count` are no candidates.
    /// Ties as BPE's.
    CountTimesLength,
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
    pub(super) fn key(&self, text: &[u8]) -> Box<[u8]> {
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

/// Whether two symbols' texts may be joined ([`MergeParams::allow`]).
pub type PairRule = std::sync::Arc<dyn Fn(&[u8], &[u8]) -> bool + Send + Sync>;

#[derive(Clone)]
pub struct MergeParams {
    /// How many new rows may still be added.
    pub new_rows: u64,
    pub min_count: u64,
    pub max_piece_length: Option<u32>,
    /// A rule a pair must pass to be a candidate (superword BPE's limit on the words a piece
    /// spans, [`crate::learners::superword::WordLimit`]); None: every pair may merge.
    pub allow: Option<PairRule>,
    pub score: Score,
    pub min_count_rule: MinCountRule,
    pub tie: TieSpelling,
    /// The memory policy's settings ([`Tuning::default`] in every trained model).
    pub tuning: Tuning,
}

/// The settings of the engine's memory policy. None of them changes a merge: they decide when
/// the place lists are packed, how many pairs keep heap entries, how the index is sharded and
/// which rarely counted pairs it may drop. Training uses [`Tuning::default`]; tests set them to
/// their extremes on small corpora, through the same code, and demand the same merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// When the place lists are compacted.
    pub compaction: Compaction,
    /// Under counts, past twice this many heap entries only the pairs counted at least a floor
    /// keep entries: the largest power of two that this many pairs reach.
    pub heap_keep: usize,
    /// Under counts, the heap is rebuilt from the live pairs once it holds this many times its
    /// entries after its last rebuild (or `heap_keep`, whichever is more). BPE's only or first
    /// stage takes 4, not 2: its rebuilds (a sort of every entry) 351 M -> 243 M instructions on
    /// a quarter of 100 MB of mixed text, code's 299 M -> 208 M.
    pub heap_growth: usize,
    /// The pair index's shards (1 to 256); `None`: one up to 128k units, then one per 64k units,
    /// at most 64.
    pub shards: Option<usize>,
    /// Under a heap floor, the count below which compaction drops pairs from the index; `None`:
    /// the floor or a quarter of the last merge's count, whichever is lower.
    pub drop_below: Option<i64>,
    /// When above 1 (and pairs may be dropped): a table in shards is counted in this many rounds
    /// of shards, the rarely counted pairs dropped after each ([`index::count_index_in_rounds`]),
    /// so the whole table of pairs is never alive at once. Set by SuperBPE's stage two.
    pub count_rounds: usize,
    /// The allocator's free pages given back once the index is built and after each compaction
    /// or drop of pairs (the counting and the index's moves free many blocks in the middle of
    /// the heap). Set by the superword learners.
    pub give_back: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            compaction: Compaction::Growth,
            heap_keep: 1 << 17,
            heap_growth: 2,
            shards: None,
            drop_below: None,
            count_rounds: 1,
            give_back: false,
        }
    }
}

/// When the arena of place lists is compacted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compaction {
    /// Once it has doubled since it was last packed (and grown by 64k words), or, from 32 MB,
    /// grown by a quarter.
    Growth,
    /// Once it has doubled since it was last packed (and grown by 64k words), at any size. A
    /// compaction reads every listed unit again, and from 32 MB a quarter's growth came after a
    /// few dozen merges: 100 MB of mixed text under `front` compacted 5 times, the first after
    /// 40 merges, scanning 71 M listed units (about 100 instructions each) to drop 22-30% of
    /// them.
    Doubling,
    /// Once it has grown to four times its size since it was last packed (and by 64k words), at
    /// any size: BPE's only or first stage (more memory, where its peers take three to four
    /// times ours). At 32k rows on English, code and 100 MB of mixed text it never comes: the
    /// stale ids cost the merges that take their lists less than the scans of every list.
    Quadrupling,
    /// Once it has grown by an eighth (and by 64k words), at any size: the superword learners,
    /// whose spans stay alive beside the lists.
    Eighth,
    /// After every merge that grew it.
    Always,
    /// Never.
    Never,
}

impl MergeParams {
    pub fn bpe(new_rows: u64, min_count: u64, max_piece_length: Option<u32>) -> Self {
        MergeParams {
            new_rows,
            min_count,
            max_piece_length,
            allow: None,
            score: Score::Count,
            min_count_rule: MinCountRule::Filter,
            tie: TieSpelling::AsSpelled,
            tuning: Tuning::default(),
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
    /// How often the run took the engine's rare paths.
    pub events: Events,
}

/// How often a run took the engine's rare paths (for tests and measurement; no effect on the
/// merges).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Events {
    /// The place lists were compacted.
    pub compactions: u64,
    /// The heap floor was raised.
    pub floor_raised: u64,
    /// The heap floor was lowered (the heap ran out of entries).
    pub floor_lowered: u64,
    /// The index was counted again from the units.
    pub restores: u64,
    /// A merge left an interned piece's pairs out of the index.
    pub left_out: u64,
}
