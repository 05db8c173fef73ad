//! The Unigram language model learner (Kudo; the Unigram page `002_…`, DESIGN §2, docs/API.md
//! "Unigram"): seed a table with every substring, re-estimate it by EM, prune it a fraction at a
//! time by what each piece's removal would cost the corpus.
//!
//! Algorithm.
//! * **Runs.** Units are cut at symbols outside the alphabet; equal runs add their counts; runs
//!   are visited in ascending order of their symbols' texts (a proper prefix first). Internally a
//!   symbol is its rank in text order, so run order is plain slice order.
//! * **Seed.** Every substring of every run of at most `max_piece_length` symbols, counted at
//!   every position times the run's count. Found with a suffix sort of the distinct runs'
//!   positions (each suffix cut at its run's end and at the length bound) and one walk over the
//!   sorted suffixes with their longest common prefixes: the occurrences of a substring of length
//!   `L` are one stretch of the sorted suffixes, so a per-length accumulator emits every distinct
//!   substring once with its weighted count. `seed_size` keeps the alphabet and the most frequent
//!   others (count descending, then text): a histogram of the counts finds the threshold, a second
//!   walk keeps what is above it and the ties at it are ordered by text. `lp = ln(count / total)`.
//! * **EM.** Per run, forward and backward over its lattice ([`Lattice`]); each arc adds
//!   `ln(c) + (((alpha[i] + lp) + beta[j]) - logZ)` to its piece's expected count with
//!   `logaddexp`; `lp' = E - S`, `S` the fold of `E` over the pieces in text order.
//! * **Pruning.** Loss of a piece of two or more symbols = Σ over runs whose Viterbi spelling uses
//!   it (once per run) of `c · (best - best without it)`, on the current table, not
//!   renormalised; only the runs whose best spelling uses a piece are spelled again without it.
//!   Keep `max(target, floor(shrink · size))`: every single symbol, then by loss descending,
//!   text ascending. The loop: seed; repeat { `em_rounds` EM rounds; stop if size <= target;
//!   prune }.
//! * **`em="bayes"`** (`em.rs`): sentencepiece's M-step, `lp = ψ(E) - ψ(ΣE)` on the
//!   same expected counts, single symbols floored at an expected count of 0.5, `lp <= 0`.
//!   Everything else (seed, losses, pruning) is the page's.
//! * **`em="sentencepiece"`** (docs/API.md): sentencepiece's whole loop on our runs.
//!   Seed (`seed.rs`): right-branching substrings only, a run's end one follower, a substring
//!   that only ends its run kept from count 2; score count × length. E-step (`em.rs`): forward,
//!   backward and the expected counts in linear space, on `q = exp(lp)`, each position's
//!   forward value a mantissa and a binary exponent (the arcs' terms added with `+`, from
//!   0.0; no `exp` or `log1p` per arc). M-step: the
//!   Bayesian step, pieces of two or more symbols under an expected count of 0.5 dropped.
//!   Pruning (`prune.rs`, `sp_losses`): each piece's replacement is its own best spelling
//!   without it; Viterbi frequencies over the runs (integers); pieces no best spelling uses,
//!   and pieces whose own best spelling is split, dropped first; the others ranked by the
//!   unigram likelihood lost if every use took the replacement. Stop at `max(target,
//!   floor(1.1 · target))`, then keep the target by log-probability (`final_pick`).
//! * **`split_by_script`** (`valid.rs`): sentencepiece's rule on which substrings may be
//!   pieces (no mix of two Unicode scripts, digits a script of their own unless
//!   `split_by_number` is off), for any `em`. The rule rejects a piece by a prefix, so each
//!   position gets the length of the longest valid piece starting there once, and the seed's
//!   score closure refuses longer substrings in both of its walks; nothing after the seed
//!   changes, since EM and pruning only remove pieces.
//!
//! Quality against sentencepiece (`benchmarks/bench_unigram_quality.py`, English 6.2 MB train,
//! held-out 10%; see benchmarks/README.md): held-out pieces ×1.21 (8k) and ×1.21 (32k) with
//! the plain step, ×1.09 and ×1.07 with `bayes`, **×0.984 and ×0.969 with `sentencepiece`**,
//! whose held-out log-likelihood is also above sentencepiece's (+16,264 at 8k, +23,465 at 32k).
//! Multilingual 13.5 MB: ×0.992 at 8k and 32k (log-likelihood +67,936, +46,012), where `bayes`
//! does better still (×0.994 / ×0.973, +149,529 / +93,592) but it misses on English.
//! What each part of `em="sentencepiece"` buys (held-out pieces against sentencepiece, 8k / 32k):
//! * its M-step drops, pruning criterion, 1.1× stop and final pick on the page's seed: ×1.075
//!   at 8k (×1.093 with `bayes`), and training 3.3× faster than sentencepiece's (the drops
//!   shrink the table from the first round);
//! * plus the right-branching seed with a run's end a follower of its own (501,541 seed pieces;
//!   sentencepiece 175,341): ×1.008 / ×1.026, log-likelihood already above;
//! * plus a run's end as one follower, substrings only ever at a run's end kept from count 2
//!   (sentencepiece sees them followed by the next word's mark or the line's end): ×0.984 /
//!   ×0.969.
//!
//! Measured and lost:
//! * the Bayesian step with nothing floored: rare single symbols reach -inf in a few rounds, the
//!   runs holding them lose every spelling and the losses cascade (×3.97 held-out pieces at 8k,
//!   23k pieces at -inf);
//! * with `bayes`, seeding by count × length on every substring instead of the count: ×1.119
//!   against ×1.093 at 8k (log-likelihood -1,205,618 against -1,198,496); that score wins only
//!   with sentencepiece's right-branching filter and pruning, above.
//! * Not done: sentencepiece drops single symbols under 0.5 expected count too and re-adds them
//!   at the end below every score; here they stay, floored (they must).
//!
//! Determinism (the floating-point reduction). Every float is computed by the operations
//! docs/API.md prescribes, in its order, so results equal the Python reference's bit for bit —
//! and therefore cannot depend on the thread count. The expensive part of an EM round (building
//! lattices, forward, backward, the per-arc terms) runs in parallel over fixed chunks of runs and
//! returns each chunk's terms in run order; the fold of a piece's terms — sequential by
//! definition, since `logaddexp` is not associative — is then parallel over *pieces*: each worker
//! owns a range of piece ids and folds its pieces' terms in run order. A piece's fold sees the
//! same terms in the same order whatever the partition, so the result is thread-count free
//! without giving up parallelism. Losses and the log-likelihood are folded the same way (their
//! terms are few: sequential).
//!
//! Invariants: piece ids are text order over the seed and never change (a pruned piece is marked
//! dead; the trie is rebuilt from the live ones); every single symbol stays; `target >= alphabet`.
//! The join is assumed injective (distinct symbol runs spell distinct texts), which holds for
//! every spelling in DESIGN §1, so a piece is identified by its symbols.
//!
//! Complexity: seed O(P log P · L) for P positions in distinct runs (sort), plus O(P · L) for the
//! walk, L the length bound; an EM round O(A) for A arcs over the distinct runs (≈ P · pieces per
//! position); pruning O(A) plus one Viterbi per (run, piece of its best spelling).
//!
//! Performance (2 cores; `front`, vocabulary 32k, `max_piece_length` 16, `seed_size` 1M as
//! sentencepiece's defaults; `bench_english` and the per-phase kernel counters; the machine is
//! shared, so only same-hour ratios count). The design:
//! * The arcs of each run are found once, stored and filtered after each pruning round; the
//!   E-step runs forward and backward on the stored arcs (`em::forward_backward`), no lattice.
//!   The seed's arcs come from its sorted suffixes (`seed::seed_arcs`: a kept piece of length
//!   `L` is the stretch of suffixes sharing its first `L` symbols, so one walk with a cursor per
//!   length finds every position's pieces; a debug build checks them against the trie's); an
//!   arc is its piece alone, 4 bytes, the start implicit.
//! * The trie is laid out from the pieces in symbol order (`PieceTrie::from_sorted`, no hash map).
//! * Nothing large runs on one core: the runs are cut per block of units on every thread and
//!   summed after a sort; the corpus piece count encodes blocks on every thread; each E-step
//!   chunk files its terms by piece range as it makes them (slots counted from the chunk's arcs;
//!   a run with no spelling fills its slots with `-inf`), ranges about eight per thread,
//!   scheduled as they free up; the M-step's `exp` and `ψ` run per piece on every thread; the
//!   seed's piece texts are joined on every thread. Spelling the units and building the model
//!   stay on one core (code shared with the other learners and the encoder).
//! * `sp_losses` finds the frequencies first, then each piece's replacement and its loss at once
//!   on its own lattice (`best_score_without_from`), cut from the stored arcs of one occurrence
//!   of the piece (`Stored::piece_lattice`): no trie.
//! * The capped seed's score histogram counts scores below 4,096 in an array, the rest hashed.
//! * `em="sentencepiece"` runs forward and backward on probabilities, each position's forward
//!   value renormalised by a power of two (`frexp`), backward in the same exponents, the term
//!   rescaled with one `ldexp`; the forward pulls each position's arcs grouped by end (a counting
//!   sort per run). One `exp` per piece a round remains. Its output differs from log space in
//!   the last bits (docs/API.md; the reference follows); `em="plain"` and `"bayes"` keep the
//!   log-space E-step, where `logaddexp` skips both calls, exactly, when the smaller term is
//!   below half an ulp of the larger. The folds are sequential by specification.
//! * The E-step terms are produced and folded one batch of runs at a time, so memory is the
//!   table, the runs, the arcs and one batch of terms; the batch's buffers are kept from batch
//!   to batch.
//! * Each pass over the stored arcs reads one slot per arc, the piece's log-probability beside
//!   its length (`Table::packed`), not two tables: the per-arc table read was the E-step's
//!   costliest load in `perf` (a cache miss on a large table); callgrind counts 2.0% more
//!   instructions with it and the buffer reuse (1 MB of code, 8k, one thread), and this
//!   machine's load hid any change in time.
//! * The plain pruning losses (`prune::losses`) run Viterbi on the stored arcs with each
//!   piece's exact key ([`crate::segmenters::unigram::lattice::fixed`]) computed once a round,
//!   without building a lattice: callgrind (1 MB of code, 8k, one thread) 2,913.1 M → 2,025.8 M
//!   in that Viterbi, the whole process 20,608.3 M → 20,116.9 M.
//!
//! Measured:
//! * English 6.9 MB (116k distinct units): lattices rebuilt from a hash trie every pass were
//!   45% of the time (9.0 s); stored arcs with the parallel suffix walk: 2.9–3.0 s
//!   (sentencepiece 10.4 s; both ~150 MB peak).
//! * 145 MB mixed text (2.0 M distinct units): 98 s wall, 1.59 GB peak with the test's own copy
//!   of the corpus (sentencepiece 432 s wall / 521 s CPU, 2.71 GB).
//! * English 7 MB, 2 threads, `em="sentencepiece"`: the busiest thread's sum over phases 1.93 →
//!   1.66–1.79 s (CPU 2.80–3.03 s) from cutting the runs (0.13 → 0.04–0.06 s), the piece count
//!   (0.14 → 0.07–0.08 s), the term filing, the M-step and the seed's texts on both threads;
//!   callgrind, 1 MB at 8k, one thread: plain 4,199.9 → 4,168.3 M, sentencepiece 1,778.7 →
//!   1,760.1 M instructions.
//! * 10 MB of code at 16k (158k units but 2.4 M positions: 17 M stored arcs): the seed's trie
//!   (150 MB) made the peak; seed arcs from the suffixes, filing terms in place and `sp_losses`'
//!   late trie: peak 271 → 182–190 MiB (sentencepiece 185), all 31 MB at 32k 601 → 436 MiB
//!   (sentencepiece 533); callgrind +2.2% on one thread, −0.6% on two.
//! * 1 MB of code at 8k, 2 threads (callgrind): the linear fold 5,606.3 → 5,514.3 M, the
//!   replacement found on the built lattice → 5,247.7 M (trie walks 231 → 106 M).
//! * 28 MB of code, 32k, `sentencepiece` preset with `split_by_script`: `log1p` + `exp` were 26%
//!   of the CPU in log space; the probability-space E-step took wall 17.4–19.2 → 14.3–15.4 s,
//!   CPU 34.3 → 26.1–27.5 s, those calls under 1%.
//! * 1 MB of code at 8k, one thread, `em="sentencepiece"` (callgrind): each piece's lattice cut
//!   from the stored arcs instead of a trie rebuilt every pruning round: `sp_losses` 792.5 →
//!   683.4 M, the learner 3,907.2 → 3,873.2 M; 31 MB of code at 32k, 2 threads: CPU level
//!   within the noise (37.8 and 30.6 s before, 35.7 and 31.0 s after).
//! * the page's EM on 5 MB of code at 16k: `exp` and `log1p` are 30% of `perf` samples and the
//!   EM rounds 68% of the wall time; its fold order is the specification's, so that share stays.
//! * lost: the seed's suffixes sorted with their first four symbols packed beside them: 4% fewer
//!   instructions with `em="sentencepiece"` on 1 MB, none with the plain step, and the plain
//!   peak 167 → 169–173 MiB, above sentencepiece's 165.
//! * not taken: widening `logaddexp`'s exact shortcut to every binade would skip 0.46 M of
//!   40.9 M `exp` + `log1p` pairs (1.1%); fewer `exp`/`log1p` in plain EM change the doubles the
//!   reference pins. Not done: the seed's own peak (about 188 MB at 10 MB of code), its suffix
//!   sort (rayon's, already on both threads).

use rayon::prelude::*;

use super::merge::Flat;
use crate::error::{Error, Result};
pub use crate::options::EmMethod;
use crate::progress::{Phase, Progress};
use crate::segmenters::unigram::lattice::{Lattice, ViterbiScratch, NEG_INF};
use crate::segmenters::unigram::trie::PieceTrie;

mod em;
mod prune;
mod seed;
mod valid;

use em::{em_round, final_pass};
use prune::{losses, prune};
use seed::seed;
pub use valid::SymbolClass;

const NONE: u32 = u32::MAX;
/// Runs per parallel task, and tasks per batch (a batch's terms are folded before the next).
const CHUNK: usize = 256;
const BATCH_CHUNKS: usize = 64;

/// Options of the learner (sizes count pieces of the table: single symbols included, `[UNK]` and
/// byte-fallback rows excluded — the caller does that accounting).
#[derive(Clone, Debug)]
pub struct UnigramParams {
    /// Pieces to keep (a ceiling: a smaller seed stays as it is).
    pub target: usize,
    /// Longest seed piece, in symbols; `None` = no bound.
    pub max_piece_length: Option<usize>,
    /// Cap on the seed, single symbols included; `None` = no cap.
    pub seed_size: Option<usize>,
    /// A pruning round keeps `max(target, floor(shrink · size))` pieces; `0 < shrink < 1`.
    pub shrink: f64,
    /// EM rounds before every size check.
    pub em_rounds: usize,
    /// The M-step (the page's plain one, or sentencepiece's Bayesian one).
    pub em: EmMethod,
    /// `split_by_script`: each symbol's class (by the caller's symbol ids), for sentencepiece's
    /// rule on which substrings may be seed pieces (the `valid` module); `None`: every one may.
    pub classes: Option<Vec<SymbolClass>>,
}

impl UnigramParams {
    pub fn new(target: usize) -> Self {
        UnigramParams {
            target,
            max_piece_length: None,
            seed_size: None,
            shrink: 0.75,
            em_rounds: 2,
            em: EmMethod::Plain,
            classes: None,
        }
    }
}

/// A learned piece (two or more symbols).
#[derive(Clone, Debug, PartialEq)]
pub struct UnigramPiece {
    /// Its symbols, by the caller's symbol ids.
    pub symbols: Vec<u32>,
    /// Its text as spelled (the join of its symbols).
    pub text: Vec<u8>,
    pub log_prob: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UnigramTrained {
    /// Per symbol id: its log-probability (`None` for a symbol the corpus never holds).
    pub alphabet: Vec<Option<f64>>,
    /// The other pieces, log-probability descending, then text ascending (the row order).
    pub learned: Vec<UnigramPiece>,
    /// Pieces in the seed (after the cap), single symbols included.
    pub seed_size: usize,
    /// Table size at the start and after each pruning round (four words at 15: 49 36 27 20 15).
    pub rounds: Vec<usize>,
    /// Σ over runs in order of `count · log P(run)` on the final table.
    pub log_likelihood: f64,
    /// True when the table ends at the target (`"size"`), false when the seed was smaller.
    pub reached_target: bool,
    /// Σ over runs of `count ·` pieces in its Viterbi spelling (unknown symbols not included).
    pub run_pieces: u64,
}

/// Distinct runs in text order, as symbol ranks.
struct Runs {
    syms: Vec<u32>,
    start: Vec<u32>,
    count: Vec<u64>,
}

impl Runs {
    fn len(&self) -> usize {
        self.count.len()
    }
    #[inline]
    fn run(&self, r: usize) -> &[u32] {
        &self.syms[self.start[r] as usize..self.start[r + 1] as usize]
    }
}

/// The table: pieces by id (text order over the seed), each a stretch `at..at + len` of
/// `Runs::syms` (the alphabet is appended there so that every symbol has a stretch).
struct Table {
    at: Vec<u32>,
    len: Vec<u32>,
    /// log-probability; meaningful only where `has_prob`
    lp: Vec<f64>,
    has_prob: Vec<bool>,
    alive: Vec<bool>,
    /// piece id of each single symbol, by rank
    single: Vec<u32>,
}

impl Table {
    /// Each piece's log-probability beside its length: a pass over the stored arcs reads one
    /// slot per arc instead of two tables (on a large table the two reads were the costliest
    /// loads of the E-step).
    fn packed(&self) -> Vec<(f64, u32)> {
        self.lp.par_iter().zip(self.len.par_iter()).map(|(&lp, &len)| (lp, len)).collect()
    }
}

/// The trie over symbol ranks of the live pieces with a probability (the one Unigram trie,
/// holding table indices; the log-probabilities change every round and are looked up). Built
/// from the pieces sorted by their symbols ([`PieceTrie::from_sorted`]): table order is text
/// order, which for most spellings is already symbol order, so the sort is one pass.
fn build_trie(table: &Table, syms: &[u32], alphabet: usize) -> PieceTrie<()> {
    let piece = |p: u32| {
        &syms
            [table.at[p as usize] as usize..(table.at[p as usize] + table.len[p as usize]) as usize]
    };
    let mut live: Vec<u32> = (0..table.at.len() as u32)
        .filter(|&p| table.alive[p as usize] && table.has_prob[p as usize])
        .collect();
    if !live.windows(2).all(|w| piece(w[0]) <= piece(w[1])) {
        live.par_sort_by(|&x, &y| piece(x).cmp(piece(y)));
    }
    PieceTrie::from_sorted(alphabet, live.iter().map(|&p| (piece(p), p, ())))
}

/// The lattice of a run: arcs start ascending, end ascending.
fn trie_lattice(trie: &PieceTrie<()>, run: &[u32], lp: &[f64], l: &mut Lattice) {
    l.reset(run.len());
    for i in 0..run.len() {
        trie.pieces_from(run, i, |end, p, ()| l.push(i as u32, end as u32, p, lp[p as usize]));
    }
    l.finish();
}

/// Every run's arcs (start, end, piece) in arc order, found once with the trie and filtered
/// after each pruning round, so the rounds never touch the trie: one chunk per `CHUNK` runs.
struct Stored {
    chunks: Vec<ChunkArcs>,
}

struct ChunkArcs {
    runs: std::ops::Range<usize>,
    /// the arcs' pieces, in arc order; the start is implicit: every position's arcs begin with
    /// its single symbol (every symbol of a run is a live piece with a probability, shortest
    /// first), so an arc's start is the number of single-symbol arcs up to it, minus one, and
    /// its end is `start + len[piece]`: an arc costs 4 bytes
    arcs: Vec<u32>,
    /// run `runs.start + k` owns `arcs[off[k]..off[k + 1]]`
    off: Vec<u32>,
}

impl Stored {
    fn build(runs: &Runs, trie: &PieceTrie<()>, lp: &[f64]) -> Stored {
        let ranges: Vec<std::ops::Range<usize>> =
            (0..runs.len()).step_by(CHUNK).map(|s| s..(s + CHUNK).min(runs.len())).collect();
        let chunks = ranges
            .into_par_iter()
            .map_init(Lattice::default, |l, range| {
                let mut c = ChunkArcs { runs: range.clone(), arcs: Vec::new(), off: vec![0] };
                for r in range {
                    trie_lattice(trie, runs.run(r), lp, l);
                    c.arcs.extend(l.arcs().iter().map(|a| a.piece));
                    // the implicit starts hold: one single-symbol arc per position, each first
                    let mut at = u32::MAX;
                    for a in l.arcs() {
                        if a.end - a.start == 1 {
                            at = at.wrapping_add(1);
                        }
                        assert_eq!(at, a.start, "a lattice position without its single symbol");
                    }
                    c.off.push(c.arcs.len() as u32);
                }
                c.arcs.shrink_to_fit();
                c
            })
            .collect();
        Stored { chunks }
    }

    /// Drops the arcs of dead pieces.
    fn retain(&mut self, alive: &[bool]) {
        self.chunks.par_iter_mut().for_each(|c| {
            let mut w = 0usize;
            let mut lo = 0usize;
            for k in 0..c.off.len() - 1 {
                let hi = c.off[k + 1] as usize;
                for x in lo..hi {
                    if alive[c.arcs[x] as usize] {
                        c.arcs[w] = c.arcs[x];
                        w += 1;
                    }
                }
                lo = hi;
                c.off[k + 1] = w as u32;
            }
            c.arcs.truncate(w);
            c.arcs.shrink_to_fit();
        });
    }

    /// The lattice of a live piece's own symbols, from the stored arcs of the occurrence its
    /// `at` names (a position in a run: every piece of two or more symbols points at one): the
    /// arcs starting inside it that end by its end, in stored order. Stored arcs are every live
    /// piece at every position, so these are the arcs [`trie_lattice`] finds on the piece's
    /// symbols, in the same order, without a trie.
    fn piece_lattice(&self, runs: &Runs, table: &Table, p: usize, l: &mut Lattice) {
        let (at, len) = (table.at[p], table.len[p]);
        let r = runs.start.partition_point(|&s| s <= at) - 1;
        let c = &self.chunks[r / CHUNK];
        let k = r - c.runs.start;
        let (from, to) = (at - runs.start[r], at - runs.start[r] + len);
        l.reset(len as usize);
        let mut i = u32::MAX;
        for &q in &c.arcs[c.off[k] as usize..c.off[k + 1] as usize] {
            let ql = table.len[q as usize];
            i = i.wrapping_add((ql == 1) as u32);
            if i < from {
                continue;
            }
            if i >= to {
                break;
            }
            if i + ql <= to {
                l.push(i - from, i - from + ql, q, table.lp[q as usize]);
            }
        }
        l.finish();
    }

    /// The lattice of the `k`-th run of a chunk, with the current log-probabilities (`q`:
    /// [`Table::packed`]).
    #[inline]
    fn lattice(c: &ChunkArcs, k: usize, n: usize, q: &[(f64, u32)], l: &mut Lattice) {
        l.reset(n);
        let mut i = u32::MAX;
        for &p in &c.arcs[c.off[k] as usize..c.off[k + 1] as usize] {
            let (lp, len) = q[p as usize];
            i = i.wrapping_add((len == 1) as u32);
            l.push(i, i + len, p, lp);
        }
        l.finish();
    }
}

#[derive(Default)]
struct EmBuffers {
    lattice: Lattice,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    viterbi: ViterbiScratch,
    without: ViterbiScratch,
    /// the E-step's per-arc starts, ends and log-probabilities of one run
    starts: Vec<u32>,
    ends: Vec<u32>,
    lps: Vec<f64>,
    /// the linear E-step's (`em="sentencepiece"`) per-position binary exponents, and its arcs
    /// grouped by end (`head[j - 1]..head[j]` of `by_end` end at `j`)
    exps: Vec<i32>,
    by_end: Vec<u32>,
    head: Vec<u32>,
}

/// The text of a piece: its first symbol's text, then each later symbol's with `strip_right`
/// removed from its front (the spelling's join).
fn join(texts: &[Vec<u8>], ranks: &[u32], strip_right: &[u8], out: &mut Vec<u8>) {
    out.clear();
    for (k, &r) in ranks.iter().enumerate() {
        let t = &texts[r as usize][..];
        if k > 0 && !strip_right.is_empty() && t.starts_with(strip_right) {
            out.extend_from_slice(&t[strip_right.len()..]);
        } else {
            out.extend_from_slice(t);
        }
    }
}

/// Learns a Unigram table. `units`: the spelled units with counts (symbol ids `>=
/// symbol_texts.len()`, e.g. `merge::NO_SYMBOL`, are unknown symbols and cut the unit);
/// `symbol_texts`: the alphabet's texts by symbol id; `strip_right`: the continuation mark the
/// join strips from later symbols (`##`), empty for the other spellings.
pub fn train(
    units: &Flat,
    symbol_texts: &[Vec<u8>],
    strip_right: &[u8],
    params: &UnigramParams,
    progress: Option<&Progress>,
) -> Result<UnigramTrained> {
    train_traced(units, symbol_texts, strip_right, params, progress, &mut None)
}

/// [`train`], recording what the request in `trace` asks for (the trace comes back in the slot).
pub fn train_traced(
    units: &Flat,
    symbol_texts: &[Vec<u8>],
    strip_right: &[u8],
    params: &UnigramParams,
    progress: Option<&Progress>,
    trace: &mut Option<(UnigramTraceRequest, UnigramTrace)>,
) -> Result<UnigramTrained> {
    let a = symbol_texts.len();
    if !(params.shrink > 0.0 && params.shrink < 1.0) {
        return Err(Error::Option(format!(
            "shrink must be strictly between 0 and 1, got {}",
            params.shrink
        )));
    }
    if params.max_piece_length == Some(0) {
        return Err(Error::Option(
            "max_piece_length must be at least 1 (or None for no bound)".into(),
        ));
    }
    if params.target < a {
        return Err(Error::Option(format!(
            "a Unigram table of {} pieces cannot hold the alphabet ({a} symbols); ask for at least {a}",
            params.target
        )));
    }
    if let Some(s) = params.seed_size {
        if s < a {
            return Err(Error::Option(format!(
                "seed_size={s} is below the alphabet ({a} symbols), which the seed always holds; ask for at least {a}"
            )));
        }
    }
    // ranks: symbols in text order
    let (rank, by_text) = ranks(symbol_texts);
    let texts: Vec<Vec<u8>> = by_text.iter().map(|&id| symbol_texts[id as usize].clone()).collect();

    let runs = collect_runs(units, &rank)?;
    if runs.len() == 0 {
        return Err(Error::Input(
            "the corpus holds no symbol of the alphabet: nothing to learn from".into(),
        ));
    }
    let max_len = params.max_piece_length.unwrap_or(usize::MAX);
    // the runs come back owning the alphabet's stretch at the end of `syms`
    let classes: Option<Vec<SymbolClass>> = match &params.classes {
        None => None,
        Some(c) if c.len() != a => {
            return Err(Error::Option(format!(
                "{} symbol classes for an alphabet of {a} symbols",
                c.len()
            )));
        }
        Some(c) => Some(by_text.iter().map(|&id| c[id as usize]).collect()),
    };
    let sentencepiece = params.em == EmMethod::Sentencepiece;
    let (mut table, runs, seed_arcs) = seed(
        runs,
        &texts,
        strip_right,
        max_len,
        params.seed_size,
        sentencepiece,
        classes.as_deref(),
    );
    let seed_size = table.at.len();
    let mut size = seed_size;
    let mut rounds = vec![size];

    let total_rounds = {
        let (mut s, mut k) = (size, 0u64);
        while s > params.target {
            s = params.target.max((params.shrink * s as f64).floor() as usize);
            k += 1;
        }
        k
    };
    if let Some(p) = progress {
        p.start(Phase::Merging, total_rounds);
    }
    let mut stored = Stored { chunks: seed_arcs };
    #[cfg(debug_assertions)]
    {
        // the seed's arcs are those the trie finds
        let by_trie = Stored::build(&runs, &build_trie(&table, &runs.syms, a), &table.lp);
        assert_eq!(by_trie.chunks.len(), stored.chunks.len());
        for (x, y) in by_trie.chunks.iter().zip(&stored.chunks) {
            assert!(
                x.runs == y.runs && x.off == y.off && x.arcs == y.arcs,
                "the seed's arcs differ from the trie's"
            );
        }
    }
    let mut tracer = UnigramTracer::take(seed_size, trace);
    if let Some(t) = tracer.as_mut() {
        t.em_step(&runs, &table, &texts, strip_right, 0, 0);
    }
    let sp = params.em == EmMethod::Sentencepiece;
    // em="sentencepiece" stops at 1.1 × the target and picks the target by score
    let stop_at = if sp {
        params.target.max((params.target as f64 * 1.1).floor() as usize)
    } else {
        params.target
    };
    loop {
        let mut em_dropped = 0usize;
        for k in 0..params.em_rounds {
            let dropped = em_round(&runs, &mut table, &stored, params.em);
            if dropped > 0 {
                size -= dropped;
                em_dropped += dropped;
                stored.retain(&table.alive);
            }
            if let Some(t) = tracer.as_mut() {
                t.em_step(&runs, &table, &texts, strip_right, rounds.len(), k + 1);
            }
        }
        if sp {
            if size <= stop_at {
                if let Some(t) = tracer.as_mut() {
                    t.round(
                        &runs,
                        &table,
                        &stored,
                        size + em_dropped,
                        em_dropped,
                        None,
                        &texts,
                        strip_right,
                    );
                }
                break;
            }
            let found = prune::sp_losses(&runs, &table, &stored);
            let alive_before = tracer.as_ref().map(|_| table.alive.clone());
            size = prune::sp_prune(&mut table, &found, size, stop_at, params.shrink);
            if let (Some(t), Some(before)) = (tracer.as_mut(), alive_before) {
                let mut alive_now = std::mem::replace(&mut table.alive, before);
                t.round(
                    &runs,
                    &table,
                    &stored,
                    rounds[rounds.len() - 1],
                    em_dropped,
                    Some((&found.loss, &alive_now)),
                    &texts,
                    strip_right,
                );
                std::mem::swap(&mut table.alive, &mut alive_now);
            }
            rounds.push(size);
            stored.retain(&table.alive);
            if let Some(p) = progress {
                p.set((rounds.len() as u64 - 1).min(total_rounds));
            }
            continue;
        }
        if size <= params.target {
            if let Some(t) = tracer.as_mut() {
                t.round(
                    &runs,
                    &table,
                    &stored,
                    size + em_dropped,
                    em_dropped,
                    None,
                    &texts,
                    strip_right,
                );
            }
            break;
        }
        let loss = losses(&runs, &table, &stored);
        let alive_before = tracer.as_ref().map(|_| table.alive.clone());
        size = prune(&mut table, &loss, size, params.target, params.shrink);
        if let (Some(t), Some(before)) = (tracer.as_mut(), alive_before) {
            // the table's log-probabilities are those the losses were computed on
            let mut alive_now = std::mem::replace(&mut table.alive, before);
            t.round(
                &runs,
                &table,
                &stored,
                rounds[rounds.len() - 1],
                em_dropped,
                Some((&loss, &alive_now)),
                &texts,
                strip_right,
            );
            std::mem::swap(&mut table.alive, &mut alive_now);
        }
        rounds.push(size);
        stored.retain(&table.alive);
        if let Some(p) = progress {
            p.set(rounds.len() as u64 - 1);
        }
    }
    if sp && size > params.target {
        size = prune::final_pick(&mut table, size, params.target);
        rounds.push(size);
        stored.retain(&table.alive);
    }
    let (log_likelihood, run_pieces) = final_pass(&runs, &table, &stored);

    let mut alphabet = vec![None; a];
    for (id, &r) in rank.iter().enumerate() {
        let p = table.single[r as usize] as usize;
        alphabet[id] = table.has_prob[p].then_some(table.lp[p]);
    }
    let mut learned = Vec::new();
    let mut buf = Vec::new();
    for p in 0..table.at.len() {
        if !table.alive[p] || table.len[p] < 2 {
            continue;
        }
        let s = &runs.syms[table.at[p] as usize..(table.at[p] + table.len[p]) as usize];
        join(&texts, s, strip_right, &mut buf);
        learned.push(UnigramPiece {
            symbols: s.iter().map(|&r| by_text[r as usize]).collect(),
            text: buf.clone(),
            log_prob: table.lp[p],
        });
    }
    learned.sort_by(|x, y| {
        y.log_prob.partial_cmp(&x.log_prob).unwrap().then_with(|| x.text.cmp(&y.text))
    });
    if let Some(p) = progress {
        p.set(total_rounds);
    }
    if let Some(t) = tracer {
        t.put_back(trace);
    }
    Ok(UnigramTrained {
        alphabet,
        learned,
        seed_size,
        rounds,
        log_likelihood,
        reached_target: size == params.target,
        run_pieces,
    })
}

/// The pruning losses of a table on a corpus (docs/API.md, "Pruning"; `tok.losses(data)`):
/// `units` and `symbol_texts` as for [`train`]; `alphabet`: each symbol's log-probability
/// (`None`: it cuts runs, as an unknown symbol does); `pieces`: the other pieces (symbol ids, at
/// least two, and log-probability). Returns each piece's loss, in the order given.
pub fn losses_on(
    units: &Flat,
    symbol_texts: &[Vec<u8>],
    alphabet: &[Option<f64>],
    pieces: &[(Vec<u32>, f64)],
) -> Result<Vec<f64>> {
    let a = symbol_texts.len();
    if alphabet.len() != a {
        return Err(Error::Option(format!(
            "{} log-probabilities for an alphabet of {a} symbols",
            alphabet.len()
        )));
    }
    let (rank, _) = ranks(symbol_texts);
    // a symbol without a probability cuts runs: give it no rank
    let cut_rank: Vec<u32> =
        (0..a).map(|id| if alphabet[id].is_some() { rank[id] } else { NONE }).collect();
    let mut runs = collect_runs(units, &cut_rank)?;
    let np = a + pieces.len();
    let mut t = Table {
        at: Vec::with_capacity(np),
        len: Vec::with_capacity(np),
        lp: Vec::with_capacity(np),
        has_prob: Vec::with_capacity(np),
        alive: vec![true; np],
        single: vec![NONE; a],
    };
    for id in 0..a {
        t.single[rank[id] as usize] = t.at.len() as u32;
        t.at.push(runs.syms.len() as u32);
        runs.syms.push(rank[id]);
        t.len.push(1);
        t.lp.push(alphabet[id].unwrap_or(NEG_INF));
        t.has_prob.push(alphabet[id].is_some());
    }
    for (syms, lp) in pieces {
        if syms.len() < 2 || syms.iter().any(|&s| s as usize >= a) {
            return Err(Error::Option(
                "a learned piece has two or more symbols of the alphabet".into(),
            ));
        }
        t.at.push(runs.syms.len() as u32);
        runs.syms.extend(syms.iter().map(|&s| rank[s as usize]));
        t.len.push(syms.len() as u32);
        t.lp.push(*lp);
        t.has_prob.push(true);
    }
    let stored = Stored::build(&runs, &build_trie(&t, &runs.syms, a), &t.lp);
    let loss = losses(&runs, &t, &stored);
    Ok(loss[a..].to_vec())
}

/// Each symbol id's rank in text order, and the ids by rank.
fn ranks(symbol_texts: &[Vec<u8>]) -> (Vec<u32>, Vec<u32>) {
    let a = symbol_texts.len();
    let mut by_text: Vec<u32> = (0..a as u32).collect();
    by_text.sort_by(|&x, &y| symbol_texts[x as usize].cmp(&symbol_texts[y as usize]));
    let mut rank = vec![0u32; a];
    for (r, &id) in by_text.iter().enumerate() {
        rank[id as usize] = r as u32;
    }
    (rank, by_text)
}

/// A run's (start, length, count).
type RunAt = (usize, u32, u64);

/// Cuts units at unknown symbols (no rank, or rank `NONE`), adds equal runs, sorts them.
/// Without hashing, and on every thread: each block of units is cut into ranked runs on its own,
/// the runs are sorted by their symbols, and equal neighbours add their counts (integers, so the
/// order they add in does not matter).
fn collect_runs(units: &Flat, rank: &[u32]) -> Result<Runs> {
    const BLOCK: usize = 4096;
    let n = units.units();
    // per block: its runs' ranked symbols, and (start, length, count) of each run
    let blocks: Vec<(Vec<u32>, Vec<RunAt>)> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let (mut syms, mut cut) = (Vec::new(), Vec::new());
            for u in b * BLOCK..((b + 1) * BLOCK).min(n) {
                let c = units.meta[u].count;
                if c == 0 {
                    continue;
                }
                let mut from = syms.len();
                for &s in units.unit(u) {
                    if (s as usize) < rank.len() && rank[s as usize] != NONE {
                        syms.push(rank[s as usize]);
                    } else {
                        if syms.len() > from {
                            cut.push((from, (syms.len() - from) as u32, c));
                        }
                        from = syms.len();
                    }
                }
                if syms.len() > from {
                    cut.push((from, (syms.len() - from) as u32, c));
                }
            }
            (syms, cut)
        })
        .collect();
    // every run as (block, index in block), sorted by its symbols
    let run_of = |&(b, k): &(u32, u32)| -> &[u32] {
        let (syms, cut) = &blocks[b as usize];
        let (at, len, _) = cut[k as usize];
        &syms[at..at + len as usize]
    };
    let mut order: Vec<(u32, u32)> = blocks
        .iter()
        .enumerate()
        .flat_map(|(b, (_, cut))| (0..cut.len() as u32).map(move |k| (b as u32, k)))
        .collect();
    order.par_sort_unstable_by(|x, y| run_of(x).cmp(run_of(y)));
    // equal runs are neighbours now: add their counts
    let mut distinct: Vec<(u32, u32)> = Vec::new();
    let mut counts: Vec<u64> = Vec::new();
    for x in &order {
        let c = blocks[x.0 as usize].1[x.1 as usize].2;
        match distinct.last() {
            Some(last) if run_of(last) == run_of(x) => {
                let slot = counts.last_mut().expect("a count per distinct run");
                *slot = slot
                    .checked_add(c)
                    .ok_or_else(|| Error::Input("a unit's count overflows 2^64".into()))?;
            }
            _ => {
                distinct.push(*x);
                counts.push(c);
            }
        }
    }
    drop(order);
    let total: usize = distinct.iter().map(|x| run_of(x).len()).sum::<usize>() + rank.len();
    if total >= u32::MAX as usize {
        return Err(Error::Input(format!(
            "the distinct runs hold {total} symbols, more than the Unigram learner indexes (2^32); cap the corpus"
        )));
    }
    let mut runs = Runs {
        syms: Vec::with_capacity(total),
        start: Vec::with_capacity(distinct.len() + 1),
        count: counts,
    };
    for x in &distinct {
        runs.start.push(runs.syms.len() as u32);
        runs.syms.extend_from_slice(run_of(x));
    }
    runs.start.push(runs.syms.len() as u32);
    Ok(runs)
}

// ------------------------------------------------------------------------------------------------
// Tracing (`subwords.measure`). Off unless the caller hands `train` a request (the
// pipeline's `Traces`); the trace comes back in the same slot. A traced
// round costs one extra likelihood pass (the one `final_pass` makes at the end); EM trajectories
// copy the live table after every EM step, which is for small corpora.

/// What to record.
#[derive(Clone, Debug, Default)]
pub struct UnigramTraceRequest {
    /// Record every live piece's log-probability after every EM step (and at the seed).
    pub em: bool,
}

/// One size check: the table after its EM rounds, and what pruning removed.
#[derive(Clone, Debug, PartialEq)]
pub struct UnigramRound {
    /// Pieces in the table (single symbols included) when this round's EM steps began.
    pub size: usize,
    /// Pieces the round's M-steps dropped before the size check (`em="sentencepiece"` drops
    /// pieces of two or more symbols under an expected count of 0.5; 0 for the other methods).
    pub em_dropped: usize,
    /// Σ over runs of `count · log P(run)` after the round's EM steps.
    pub log_likelihood: f64,
    /// Pieces pruning could remove (two or more symbols): 0 on the last round, which does not prune.
    pub candidates: usize,
    /// How many candidates' losses were exactly 0.
    pub zero_losses: usize,
    /// Every candidate with its loss, loss descending then text ascending (pruning's order).
    pub losses: Vec<(Vec<u8>, f64)>,
    /// The pieces this round removed, in the same order.
    pub pruned: Vec<(Vec<u8>, f64)>,
}

/// Log-probabilities of the live pieces after one EM step (`step` 0 = the seed, or the table
/// a pruning left).
#[derive(Clone, Debug, PartialEq)]
pub struct EmStep {
    /// Index of the size check the step belongs to (0 = before the first).
    pub round: usize,
    pub step: usize,
    pub pieces: Vec<(Vec<u8>, f64)>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct UnigramTrace {
    pub seed_size: usize,
    pub rounds: Vec<UnigramRound>,
    pub em: Vec<EmStep>,
}

struct UnigramTracer {
    request: UnigramTraceRequest,
    trace: UnigramTrace,
}

impl UnigramTracer {
    fn take(
        seed_size: usize,
        slot: &mut Option<(UnigramTraceRequest, UnigramTrace)>,
    ) -> Option<Self> {
        let (request, mut trace) = slot.take()?;
        trace.seed_size = seed_size;
        Some(UnigramTracer { request, trace })
    }

    fn put_back(self, slot: &mut Option<(UnigramTraceRequest, UnigramTrace)>) {
        *slot = Some((self.request, self.trace));
    }

    fn text(
        runs: &Runs,
        table: &Table,
        texts: &[Vec<u8>],
        strip_right: &[u8],
        p: usize,
    ) -> Vec<u8> {
        let s = &runs.syms[table.at[p] as usize..(table.at[p] + table.len[p]) as usize];
        let mut buf = Vec::new();
        join(texts, s, strip_right, &mut buf);
        buf
    }

    fn em_step(
        &mut self,
        runs: &Runs,
        table: &Table,
        texts: &[Vec<u8>],
        strip_right: &[u8],
        round: usize,
        step: usize,
    ) {
        if !self.request.em {
            return;
        }
        let mut pieces: Vec<(Vec<u8>, f64)> = (0..table.at.len())
            .filter(|&p| table.alive[p] && table.has_prob[p])
            .map(|p| (Self::text(runs, table, texts, strip_right, p), table.lp[p]))
            .collect();
        pieces.sort_by(|x, y| x.0.cmp(&y.0));
        self.trace.em.push(EmStep { round, step, pieces });
    }

    /// `pruning`: the losses and the alive flags after pruning (`table.alive` is still the
    /// table before it).
    #[allow(clippy::too_many_arguments)]
    fn round(
        &mut self,
        runs: &Runs,
        table: &Table,
        stored: &Stored,
        size: usize,
        em_dropped: usize,
        pruning: Option<(&[f64], &[bool])>,
        texts: &[Vec<u8>],
        strip_right: &[u8],
    ) {
        let (log_likelihood, _) = final_pass(runs, table, stored);
        let mut round = UnigramRound {
            size,
            em_dropped,
            log_likelihood,
            candidates: 0,
            zero_losses: 0,
            losses: Vec::new(),
            pruned: Vec::new(),
        };
        if let Some((loss, after)) = pruning {
            let mut ranked: Vec<usize> =
                (0..table.at.len()).filter(|&p| table.alive[p] && table.len[p] >= 2).collect();
            ranked.sort_by(|&x, &y| loss[y].partial_cmp(&loss[x]).unwrap().then(x.cmp(&y)));
            round.candidates = ranked.len();
            round.zero_losses = ranked.iter().filter(|&&p| loss[p] == 0.0).count();
            for &p in &ranked {
                let e = (Self::text(runs, table, texts, strip_right, p), loss[p]);
                if !after[p] {
                    round.pruned.push(e.clone());
                }
                round.losses.push(e);
            }
        }
        self.trace.rounds.push(round);
    }
}
