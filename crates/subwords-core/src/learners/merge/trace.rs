//! The tracer: what `subwords.measure` sees of a merge run. Off unless the caller hands
//! [`learn_traced`](super::learn_traced) a request (the pipeline's `Traces`): the request goes in,
//! and the trace comes back, in the same slot, which both stages of superword BPE share. A step
//! costs O(1) (the corpus length is kept from each merge's site count); asking for the tied
//! candidates costs one pass over the live pairs per step, which is for small corpora. A trace
//! can also force a step's choice.

use std::cmp::Ordering;

use super::engine::Engine;
use super::heap::{cmp_fraction, Cand};
use super::{pack, unpack};

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

/// A step's tied candidates as `(left, right)` texts (capped), and how many tied.
type Ties = (Vec<(Vec<u8>, Vec<u8>)>, usize);

pub(super) struct Tracer {
    request: TraceRequest,
    trace: MergeTrace,
    stage: u32,
    rows_before: u64,
    pieces: u64,
}

impl Tracer {
    pub(super) fn take(
        engine: &Engine<'_>,
        slot: &mut Option<(TraceRequest, MergeTrace)>,
    ) -> Option<Tracer> {
        let (request, mut trace) = slot.take()?;
        let pieces = engine.pieces();
        trace.stage_pieces_before.push(pieces);
        let stage = trace.stage_pieces_before.len() as u32;
        let rows_before = trace.steps.last().map_or(0, |s| s.new_rows_after);
        Some(Tracer { request, trace, stage, rows_before, pieces })
    }

    pub(super) fn put_back(self, slot: &mut Option<(TraceRequest, MergeTrace)>) {
        *slot = Some((self.request, self.trace));
    }

    /// The forced pair of the coming step, if one is asked for; `Err` (and the trace's error)
    /// when it is not a live candidate.
    pub(super) fn forced_pair(
        &mut self,
        engine: &Engine<'_>,
    ) -> std::result::Result<Option<(u64, u64)>, ()> {
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
    pub(super) fn ties_of(&self, engine: &Engine<'_>, pair: u64) -> Ties {
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
    pub(super) fn record(
        &mut self,
        engine: &Engine<'_>,
        abc: [u32; 3],
        num: u64,
        den: u128,
        ties: Ties,
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
