//! BoundlessBPE (Schmidt, Reddy, Tanner and Pinter 2025, arXiv 2504.00178) on counts.
//!
//! Byte-level BPE in which, at any step, two adjacent pretokens that are each one token may be
//! joined into a *superword* (a *supermerge*), competing by count with ordinary merges; after
//! an ordinary merge, a parent whose intersection over self reaches `deletion_threshold` is
//! deleted (Picky BPE's rule). The rules, word for word, are the pure-Python reference's
//! (`python/subwords/reference/boundless.py`) and docs/METHODS.md's; the tests run both on random
//! corpora and demand the same events.
//!
//! The learner reads two tables, never the texts: the units (each distinct pretoken, counted as
//! every training counts them) and the *spans*, each distinct run of adjacent eligible pretokens
//! of one text (`superword_pieces`) with its count, counted in the same streaming pass
//! ([`RunSpans`]); a span is stored as its pretokens joined by `\n` (an eligible pretoken never
//! holds a line break). Memory grows with the distinct spans.
//!
//! Shape: the ordinary merges and deletions run on the BPE merge engine as Picky BPE's do
//! (`merge/engine.rs`: flat units, a pair index with place lists, counts updated at the merge
//! sites only, a heap; a deletion is the engine's split of the units listed under the token), with
//! each learned token's count and units kept here. The spans are one flat array of unit ids
//! (a separator between spans, a bit for "inside a superword"), with each unit's positions in it;
//! the supermerge candidates are counted only between *whole* units (spelled by one token), so
//! a unit's pairs are counted in when a merge makes it whole and out when a deletion splits it,
//! and a supermerge visits only the positions of the rarer of its two pretokens.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::{pack, Map};
use crate::learners::merge::handle::EngineHandle;
use crate::learners::merge::picky::Step;
use crate::learners::merge::{unpack, Flat, Stop, Symbols, NO_SYMBOL};
use crate::learners::StageTwoTexts;
use crate::options::{ModelKind, TrainOptions};
use crate::spelling::gpt2::{class_bits, LETTER, LOWER, UPPER};
use crate::spelling::{Scheme, Spelling};

/// The deletion threshold unless one is given (Picky BPE's).
pub const DEFAULT_THRESHOLD: f64 = 0.9;

/// How many merges and supermerges a training may make per row it has to fill (deletions can
/// undo rows, so a cap keeps learning finite).
pub const EVENTS_PER_ROW: u64 = 10;

/// What separates the pretokens of a span in the span table.
pub const SEPARATOR: char = '\n';

fn default_threshold() -> Option<f64> {
    Some(DEFAULT_THRESHOLD)
}

fn letters() -> String {
    "letters".into()
}

/// How the spans are counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CountOn {
    /// Each maximal run of two or more eligible pretokens ("Faster Superword Tokenization").
    #[default]
    Runs,
    /// Each adjacent pair of eligible pretokens on its own (a smaller table).
    Pairs,
}

/// BoundlessBPE's options (the core's `boundless`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundlessOptions {
    /// A parent is deleted when its intersection over self reaches this; None never deletes.
    #[serde(default = "default_threshold")]
    pub deletion_threshold: Option<f64>,
    /// Which pretokens may join: `letters`, `any`, or a regular expression a pretoken must
    /// contain a match of.
    #[serde(default = "letters")]
    pub superword_pieces: String,
    #[serde(default)]
    pub count_on: CountOn,
}

/// Which pretokens may take part in a supermerge.
#[derive(Clone)]
pub enum Eligible {
    /// Letters and marks after at most one space (` ?[\p{L}\p{M}]+`).
    Letters,
    /// Any pretoken without a line break.
    Any,
    /// A pretoken holding a match of the expression (and no line break).
    Pattern(std::sync::Arc<fancy_regex::Regex>),
}

impl Eligible {
    pub fn new(name: &str) -> Result<Self> {
        Ok(match name {
            "letters" => Eligible::Letters,
            "any" => Eligible::Any,
            p => {
                Eligible::Pattern(std::sync::Arc::new(fancy_regex::Regex::new(p).map_err(|e| {
                    Error::Option(format!(
                        "superword_pieces {p:?} is not a regular expression ({e}); give \
                         'letters', 'any' or an expression a pretoken must contain a match of"
                    ))
                })?))
            }
        })
    }

    /// Whether pretoken `p` may join a superword.
    pub fn admits(&self, p: &str) -> bool {
        if p.is_empty() || p.contains(['\n', '\r']) && !matches!(self, Eligible::Pattern(_)) {
            return false;
        }
        match self {
            Eligible::Letters => {
                let rest = p.strip_prefix(' ').unwrap_or(p);
                !rest.is_empty()
                    && rest.chars().all(|c| class_bits(c) & (LETTER | UPPER | LOWER) != 0)
            }
            Eligible::Any => true,
            Eligible::Pattern(re) => !p.contains(SEPARATOR) && re.is_match(p).unwrap_or(false),
        }
    }
}

/// Counts BoundlessBPE's spans beside the units, in the one pass over the pretokens.
#[derive(Clone)]
pub struct RunSpans {
    pub eligible: Eligible,
    pub count_on: CountOn,
}

/// What [`RunSpans::each`] hands over: a pretoken, or a span (its pretokens joined by `\n`).
pub enum Counted<'a> {
    Unit(&'a str),
    Span(&'a str),
}

impl RunSpans {
    pub fn new(opts: &BoundlessOptions) -> Result<Self> {
        Ok(RunSpans { eligible: Eligible::new(&opts.superword_pieces)?, count_on: opts.count_on })
    }

    /// The spans options of a training (None unless it is BoundlessBPE).
    pub fn of(opts: &TrainOptions) -> Result<Option<Self>> {
        opts.boundless.as_ref().map(RunSpans::new).transpose()
    }

    /// Calls `f` with every pretoken of `text` (one text, already cut at special tokens) and
    /// every span.
    pub fn each(&self, spelling: &Spelling, text: &str, mut f: impl FnMut(Counted<'_>)) {
        super::keep_large_blocks_apart();
        let runs = self.count_on == CountOn::Runs;
        // the run so far (under `pairs`: the last eligible pretoken), and its pretokens
        let mut run = String::new();
        let mut n = 0usize;
        spelling.for_each_unit(text, |unit, _| {
            f(Counted::Unit(unit));
            if !self.eligible.admits(unit) {
                if n > 1 && runs {
                    f(Counted::Span(&run));
                }
                run.clear();
                n = 0;
                return;
            }
            if n > 0 {
                let k = run.len();
                run.push(SEPARATOR);
                run.push_str(unit);
                if !runs {
                    f(Counted::Span(&run));
                    run.drain(..=k);
                }
            } else {
                run.push_str(unit);
            }
            n += 1;
        });
        if n > 1 && runs {
            f(Counted::Span(&run));
        }
    }
}

/// The name a count table gives the spans it counted for these options (its span "pattern").
pub fn table_label(b: &BoundlessOptions) -> String {
    let on = match b.count_on {
        CountOn::Runs => "runs",
        CountOn::Pairs => "pairs",
    };
    format!("boundless:{on}:{}", b.superword_pieces)
}

/// Refuses BoundlessBPE options that cannot work, before any input is read.
pub fn validate(opts: &TrainOptions) -> Result<()> {
    let Some(b) = &opts.boundless else { return Ok(()) };
    if let Some(t) = b.deletion_threshold {
        if !(t > 0.0 && t <= 1.0) {
            return Err(Error::Option(format!(
                "deletion_threshold={t} is outside the range that works, (0, 1]: it is a share of \
                 a token's uses (Picky BPE's 0.9 by default); give None to never delete"
            )));
        }
    }
    Eligible::new(&b.superword_pieces)?;
    if opts.model != ModelKind::Bpe {
        return Err(Error::Option("BoundlessBPE (boundless) applies to model='bpe' only".into()));
    }
    if opts.spelling != Scheme::Bytes {
        return Err(Error::Option(format!(
            "BoundlessBPE needs spelling='bytes': the {} spelling cannot carry the space inside a \
             superword; train with spelling='bytes' (preset='boundless' sets it)",
            format!("{:?}", opts.spelling).to_lowercase()
        )));
    }
    if opts.pattern.is_none() && opts.pre_split.is_none() {
        return Err(Error::Option(
            "BoundlessBPE needs a pre-split (pre_split=, e.g. 'o200k', the boundless preset's): \
             its superwords join whole pretokens"
                .into(),
        ));
    }
    let other = if opts.superword_at.is_some() || opts.superword_pattern.is_some() {
        Some("superword_at or superword_pattern (SuperBPE)")
    } else if opts.picky.is_some() {
        Some("picky (its deletions are deletion_threshold)")
    } else if opts.joints {
        Some("pre-split joints")
    } else if opts.max_piece_length.is_some() {
        Some("max_piece_length")
    } else if opts.pad_to_multiple.is_some() {
        Some("pad_to_multiple")
    } else if opts.parity.is_some() || opts.length_max || opts.scaffold {
        Some("parity, length_max or scaffold")
    } else {
        None
    };
    if let Some(o) = other {
        return Err(Error::Option(format!("BoundlessBPE does not take {o}")));
    }
    Ok(())
}

/// One step of a BoundlessBPE run, in symbol ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `(left, right, result)` joined in every unit.
    Merge([u32; 3]),
    /// A token deleted: every occurrence spelled by the tokens it was first made of.
    Delete(u32),
    /// `(left pretoken's token, right pretoken's token, superword)` joined in every span.
    Super([u32; 3]),
}

pub struct BoundlessParams {
    pub new_rows: u64,
    pub min_count: u64,
    pub threshold: Option<f64>,
    pub event_limit: u64,
}

pub struct Boundless {
    pub events: Vec<Event>,
    /// The learned tokens present at the end, in the order they were (last) made.
    pub order: Vec<u32>,
    pub stop: Stop,
    /// Σ count × pieces of the units, less one per superword joined in a span, at the end.
    pub pieces_after: u64,
}

/// The spans: one array of unit ids, a separator before each span holding the span's count
/// ([`sep`]), [`JOINED`] set on a pretoken inside a superword ([`Seq`]). (A span's start and
/// count in arrays of their own took 12 bytes a span, 16 MB of a 100 MB corpus's run.)
struct Spans {
    seq: Seq,
    /// The counts too large for a separator, by the separator's position.
    big: Map<u32, u64>,
    /// Each unit's positions in `seq`, in order, in `occ[off[u]..off[u + 1]]`: the first and
    /// then each one's distance from the one before, 7 bits a byte (a `u32` per position took
    /// 35 MB of a 100 MB corpus's run; most distances of a frequent pretoken take one byte).
    off: Vec<u32>,
    occ: Vec<u8>,
}

const JOINED: u32 = 1 << 31;
/// A separator: both top bits set, the span's count in the other 30 ([`BIG`]: in `Spans::big`).
const SEP_BITS: u32 = 3 << 30;
const BIG: u32 = (1 << 30) - 1;

/// The separator before a span counted `count` (the count itself up to [`BIG`]).
fn sep(count: u64) -> u32 {
    SEP_BITS | count.min(BIG as u64) as u32
}

#[inline]
fn is_sep(x: u32) -> bool {
    x >= SEP_BITS
}

/// The largest unit id and separator count of a narrow [`Seq`] (22 bits; a count from it on is
/// in `Spans::big`).
const NARROW: u32 = (1 << 22) - 1;

/// The span array, 3 bytes a position (a `u16` and a `u8`) while the units number under
/// [`NARROW`], 4 past it; read and written in the layout of a `u32` ([`JOINED`], [`sep`]). A
/// narrow position holds [`JOINED`] in its bit 23 and a separator in bits 22 and 23, with 22
/// bits of id or count. (A `u32` a position took 35 MB of a 100 MB corpus's run; here 26.)
struct Seq {
    lo: Vec<u16>,
    hi: Vec<u8>,
    /// The top bytes when wide (empty when narrow).
    top: Vec<u8>,
    wide: bool,
}

impl Seq {
    /// `seq` in `u32` layout, its separators' counts cut to [`NARROW`] when narrow.
    fn pack(seq: &[u32], wide: bool) -> Self {
        let mut lo = Vec::with_capacity(seq.len());
        let mut hi = Vec::with_capacity(seq.len());
        let mut top = Vec::with_capacity(if wide { seq.len() } else { 0 });
        for &x in seq {
            let v = match (wide, is_sep(x)) {
                (true, _) => x,
                (false, true) => 3 << 22 | (x & !SEP_BITS).min(NARROW),
                (false, false) => x,
            };
            lo.push(v as u16);
            hi.push((v >> 16) as u8);
            if wide {
                top.push((v >> 24) as u8);
            }
        }
        Seq { lo, hi, top, wide }
    }

    fn len(&self) -> usize {
        self.lo.len()
    }

    /// Position `g` in `u32` layout.
    #[inline]
    fn get(&self, g: usize) -> Option<u32> {
        let v = *self.lo.get(g)? as u32 | (self.hi[g] as u32) << 16;
        if self.wide {
            return Some(v | (self.top[g] as u32) << 24);
        }
        Some(match v >> 22 {
            3 if v & NARROW == NARROW => SEP_BITS | BIG,
            3 => SEP_BITS | (v & NARROW),
            2 => JOINED | (v & NARROW),
            _ => v,
        })
    }

    #[inline]
    fn at(&self, g: usize) -> u32 {
        self.get(g).expect("a position in the span array")
    }

    /// Marks position `g` as inside a superword.
    #[inline]
    fn join(&mut self, g: usize) {
        match self.wide {
            true => self.top[g] |= 0x80,
            false => self.hi[g] |= 0x80,
        }
    }
}

/// Writes `v` 7 bits a byte, the high bit set on every byte but the last.
fn put_varint(out: &mut [u8], at: &mut usize, mut v: u32) {
    while v >= 0x80 {
        out[*at] = v as u8 | 0x80;
        *at += 1;
        v >>= 7;
    }
    out[*at] = v as u8;
    *at += 1;
}

/// The bytes [`put_varint`] writes for `v`.
fn varint_len(v: u32) -> u32 {
    1 + (v >= 1 << 7) as u32 + (v >= 1 << 14) as u32 + (v >= 1 << 21) as u32 + (v >= 1 << 28) as u32
}

impl Spans {
    /// The next position of a unit's list: `k` is the byte it starts at, `g` the position
    /// before it (0 before the first); both are moved on.
    #[inline]
    fn next_position(&self, k: &mut usize, g: &mut usize) {
        let (mut v, mut shift) = (0usize, 0);
        loop {
            let b = self.occ[*k];
            *k += 1;
            v |= ((b & 0x7F) as usize) << shift;
            if b < 0x80 {
                break;
            }
            shift += 7;
        }
        *g += v;
    }

    /// The count of the span holding position `g` (its separator is the nearest before it).
    fn count_at(&self, g: usize) -> u64 {
        let mut s = g;
        while !is_sep(self.seq.at(s)) {
            s -= 1;
        }
        match self.seq.at(s) & !SEP_BITS {
            BIG => self.big[&(s as u32)],
            c => c as u64,
        }
    }
    /// The unit at `g`, if it is a pretoken not inside a superword.
    fn free(&self, g: usize) -> Option<u32> {
        let x = self.seq.get(g)?;
        (x & JOINED == 0).then_some(x)
    }
}

/// A supermerge candidate in its heap: its count and its two units by their texts' ranks
/// ([`Texts::rank`]), so that ties go to the smaller pretokens by bytes (16 bytes an entry).
struct Entry {
    count: u64,
    left: u32,
    right: u32,
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
    /// The larger count first; then the smaller `(left, right)` by the pretokens' bytes (their
    /// ranks: the texts are distinct).
    fn cmp(&self, other: &Self) -> Ordering {
        self.count
            .cmp(&other.count)
            .then_with(|| other.left.cmp(&self.left))
            .then_with(|| other.right.cmp(&self.right))
    }
}

/// The units' texts, in one buffer, with each unit's rank among them by bytes (the texts are
/// distinct): the supermerge heap's tie order, and the lookup of a unit by its text. (A map from
/// text to unit and a reference-counted text per unit took 46 MB of a 100 MB corpus's run.)
struct Texts {
    bytes: Vec<u8>,
    /// Unit `u`'s text is `bytes[at[u]..at[u + 1]]`.
    at: Vec<u32>,
    /// The units in the order of their texts, and each unit's place in it.
    by_rank: Vec<u32>,
    rank: Vec<u32>,
}

impl Texts {
    fn new(mut bytes: Vec<u8>, at: Vec<u32>) -> Self {
        bytes.shrink_to_fit();
        let n = at.len() - 1;
        let text = |u: u32| &bytes[at[u as usize] as usize..at[u as usize + 1] as usize];
        let mut by_rank: Vec<u32> = (0..n as u32).collect();
        by_rank.sort_unstable_by(|&x, &y| text(x).cmp(text(y)));
        let mut rank = vec![0u32; n];
        for (r, &u) in by_rank.iter().enumerate() {
            rank[u as usize] = r as u32;
        }
        Texts { bytes, at, by_rank, rank }
    }
    fn text(&self, u: u32) -> &[u8] {
        &self.bytes[self.at[u as usize] as usize..self.at[u as usize + 1] as usize]
    }
    /// The unit spelled `t`, if one is.
    fn find(&self, t: &[u8]) -> Option<u32> {
        let r = self.by_rank.binary_search_by(|&u| self.text(u).cmp(t)).ok()?;
        Some(self.by_rank[r])
    }
    /// The units of a heap entry.
    fn pair(&self, e: &Entry) -> u64 {
        pack(self.by_rank[e.left as usize], self.by_rank[e.right as usize])
    }
}

struct Learner<'a> {
    e: EngineHandle<'a>,
    base: u32,
    first: u32,
    spans: Spans,
    /// The units' texts; per unit, whether it is spelled by one token.
    texts: Texts,
    whole: Vec<bool>,
    /// Per symbol (by `id - base`): alive, protected, the parts it was first made of by a merge,
    /// its count as a token in the units, and the units that may hold it (stale ids allowed);
    /// the counts and lists are kept for learned tokens only (the alphabet is never deleted).
    alive: Vec<bool>,
    protected: Vec<bool>,
    parents: Vec<Option<[u32; 2]>>,
    freq: Vec<i64>,
    holders: Vec<Vec<u32>>,
    /// Supermerge candidates: pairs of whole units, counted over the spans.
    sc: Map<u64, u64>,
    sdelta: Map<u64, i64>,
    sheap: BinaryHeap<Entry>,
    /// Candidates whose superword's text is a row now (the token's id): back when it is deleted.
    blocked: Map<u32, Vec<u64>>,
    order: Vec<u32>,
    /// Candidates counted below this (`min_count`) get no heap entry: most pairs of whole
    /// pretokens are met once, and a stop below `min_count` never takes them.
    floor: u64,
    /// The supermerge heap's size after its last sweep of stale entries.
    smark: usize,
}

impl Learner<'_> {
    fn grow(&mut self) {
        let n = self.e.symbols().texts.len();
        self.alive.resize(n, false);
        self.protected.resize(n, false);
        self.parents.resize(n, None);
        self.freq.resize(n, 0);
        self.holders.resize_with(n, Vec::new);
    }

    fn ix(&self, t: u32) -> usize {
        (t - self.base) as usize
    }

    fn bump(&mut self, p: u32, q: u32, d: i64) {
        let k = pack(p, q);
        let e = self.sc.entry(k).or_insert(0);
        *e = (*e as i64 + d) as u64;
        *self.sdelta.entry(k).or_insert(0) += d;
    }

    /// Counts unit `u`'s supermerge pairs with whole neighbours in (`sign` 1) or out (-1); `u`
    /// is whole while this runs.
    fn touch_unit(&mut self, u: u32, sign: i64) {
        let (mut k, b) =
            (self.spans.off[u as usize] as usize, self.spans.off[u as usize + 1] as usize);
        let mut g = 0usize;
        while k < b {
            self.spans.next_position(&mut k, &mut g);
            if self.spans.free(g) != Some(u) {
                continue;
            }
            let c = self.spans.count_at(g) as i64 * sign;
            if let Some(l) = self.spans.free(g - 1).filter(|&l| self.whole[l as usize]) {
                self.bump(l, u, c);
            }
            if let Some(r) = self.spans.free(g + 1).filter(|&r| r != u && self.whole[r as usize]) {
                self.bump(u, r, c);
            }
        }
    }

    fn set_whole(&mut self, u: u32, whole: bool) {
        if self.whole[u as usize] == whole {
            return;
        }
        if whole {
            self.whole[u as usize] = true;
            self.touch_unit(u, 1);
        } else {
            self.touch_unit(u, -1);
            self.whole[u as usize] = false;
        }
    }

    fn push_supers(&mut self) {
        let delta = std::mem::take(&mut self.sdelta);
        for (&k, &d) in &delta {
            if d == 0 {
                continue;
            }
            match self.sc.get(&k) {
                Some(&0) => {
                    self.sc.remove(&k);
                }
                Some(&n) => self.push_super(k, n),
                None => {}
            }
        }
        // the heap grew by half since it was last swept: its stale entries go (no choice changes)
        let mark = self.smark.max(4096);
        if self.sheap.len() > mark + mark / 2 {
            let (sc, texts) = (&self.sc, &self.texts);
            self.sheap.retain(|e| sc.get(&texts.pair(e)) == Some(&e.count));
            self.smark = self.sheap.len();
        }
    }

    fn push_super(&mut self, k: u64, n: u64) {
        if n < self.floor {
            return;
        }
        let (p, q) = unpack(k);
        let (left, right) = (self.texts.rank[p as usize], self.texts.rank[q as usize]);
        self.sheap.push(Entry { count: n, left, right });
    }

    /// The best supermerge candidate left on its heap (count, pair): its superword is no row.
    fn best_super(&mut self) -> Option<(u64, u64)> {
        while let Some(e) = self.sheap.peek() {
            let pair = self.texts.pair(e);
            if self.sc.get(&pair) != Some(&e.count) {
                self.sheap.pop();
                continue;
            }
            let (p, q) = unpack(pair);
            let joined = [self.texts.text(p), self.texts.text(q)].concat();
            if let Some(&c) = self.e.symbols().index.get(joined.as_slice()) {
                if self.alive[self.ix(c)] || c < self.first {
                    self.sheap.pop();
                    self.blocked.entry(c).or_default().push(pair);
                    continue;
                }
            }
            return Some((e.count, pair));
        }
        None
    }

    /// Whether any supermerge is a candidate at all (counted, its superword no row); asked once
    /// no pair is left.
    fn any_candidate(&self) -> bool {
        let symbols = self.e.symbols();
        self.sc.iter().any(|(&k, &n)| {
            let (p, q) = unpack(k);
            let joined = [self.texts.text(p), self.texts.text(q)].concat();
            n > 0
                && symbols
                    .index
                    .get(joined.as_slice())
                    .is_none_or(|&c| c >= self.first && !self.alive[(c - symbols.base) as usize])
        })
    }

    /// The tokens a deleted `x` is spelled by.
    fn walk(&self, x: u32, out: &mut Vec<u32>) {
        let parts = self.parents[self.ix(x)].expect("a deleted token was made by a merge");
        for p in parts {
            if p < self.first || self.alive[self.ix(p)] {
                out.push(p);
            } else {
                self.walk(p, out);
            }
        }
    }

    /// Adds `n` to the count of `t` as a token (learned tokens only). A token no unit holds
    /// any more has its list of holders freed: a unit that comes to hold it again (a merge that
    /// makes it, a split into it) is listed then.
    fn add_freq(&mut self, t: u32, n: i64) {
        if t >= self.first {
            let i = self.ix(t);
            self.freq[i] += n;
            if self.freq[i] == 0 {
                self.holders[i] = Vec::new();
            }
        }
    }

    /// Whether the units holding `t` are listed: only a learned token that may still be deleted
    /// (a protected one never is).
    fn listed(&self, t: u32, threshold: Option<f64>) -> bool {
        threshold.is_some() && t >= self.first && !self.protected[self.ix(t)]
    }

    fn merge(&mut self, pair: u64, joint: u64, threshold: Option<f64>, events: &mut Vec<Event>) {
        let (a, b) = unpack(pair);
        let before = [self.freq[self.ix(a)], self.freq[self.ix(b)]];
        let (c, is_new) = self.e.piece(a, b);
        if is_new {
            self.grow();
        }
        // each site turns one a and one b into one c
        let sites = self.e.apply(pair, joint, c, !is_new);
        let touched = self.e.take_touched();
        let ci = self.ix(c);
        if self.listed(c, threshold) {
            self.holders[ci].extend_from_slice(&touched);
        }
        self.add_freq(a, -sites);
        self.add_freq(b, -sites);
        self.add_freq(c, sites);
        events.push(Event::Merge([a, b, c]));
        self.parents[ci].get_or_insert([a, b]);
        if !self.alive[ci] {
            self.alive[ci] = true;
            self.order.push(c);
        }
        if let Some(u) = self.texts.find(self.e.symbols().text(c)) {
            if self.e.unit(u as usize).len() == 1 {
                self.set_whole(u, true);
            }
        }
        if let Some(t) = threshold {
            let checks: &[(u32, i64)] =
                if a == b { &[(a, before[0])] } else { &[(a, before[0]), (b, before[1])] };
            for &(x, f) in checks {
                if x < self.first {
                    continue;
                }
                let xi = self.ix(x);
                if !self.alive[xi] || self.protected[xi] {
                    continue;
                }
                if (joint as f64) / (f as f64) < t {
                    continue;
                }
                self.alive[xi] = false;
                self.order.retain(|&y| y != x);
                events.push(Event::Delete(x));
                let mut parts = Vec::new();
                self.walk(x, &mut parts);
                let list = std::mem::take(&mut self.holders[xi]);
                let (occurrences, changed) = self.e.split(x, &parts, list);
                self.freq[xi] -= occurrences;
                for (i, &t) in parts.iter().enumerate() {
                    self.add_freq(t, occurrences);
                    if self.listed(t, threshold) && !parts[..i].contains(&t) {
                        let ti = self.ix(t);
                        self.holders[ti].extend_from_slice(&changed);
                    }
                }
                if let Some(u) = self.texts.find(self.e.symbols().text(x)) {
                    self.set_whole(u, false);
                }
                for k in self.blocked.remove(&x).unwrap_or_default() {
                    if let Some(&n) = self.sc.get(&k) {
                        self.push_super(k, n);
                    }
                }
            }
        }
    }

    fn supermerge(&mut self, pair: u64, events: &mut Vec<Event>) {
        let (p, q) = unpack(pair);
        // the positions of the rarer pretoken (the shorter list; of `p` when the two are one:
        // left to right)
        let off = &self.spans.off;
        let np = off[p as usize + 1] - off[p as usize];
        let nq = off[q as usize + 1] - off[q as usize];
        let (by_left, u) = if p == q || np <= nq { (true, p) } else { (false, q) };
        let (mut k, b) = (off[u as usize] as usize, off[u as usize + 1] as usize);
        let mut at = 0usize;
        while k < b {
            self.spans.next_position(&mut k, &mut at);
            let g = if by_left { at } else { at - 1 };
            if self.spans.free(g) != Some(p) || self.spans.free(g + 1) != Some(q) {
                continue;
            }
            let c = self.spans.count_at(g) as i64;
            if let Some(l) = self.spans.free(g - 1).filter(|&l| self.whole[l as usize]) {
                self.bump(l, p, -c);
            }
            self.bump(p, q, -c);
            if let Some(r) = self.spans.free(g + 2).filter(|&r| self.whole[r as usize]) {
                self.bump(q, r, -c);
            }
            self.spans.seq.join(g);
            self.spans.seq.join(g + 1);
        }
        let (tp, tq) = (self.e.unit(p as usize)[0], self.e.unit(q as usize)[0]);
        let text = [self.texts.text(p), self.texts.text(q)].concat();
        let len = self.e.symbols().len(tp) + self.e.symbols().len(tq);
        let (c, is_new) = self.e.intern(text, len);
        if is_new {
            self.grow();
        }
        for t in [tp, tq, c] {
            let i = self.ix(t);
            self.protected[i] = true;
            // a protected token is never deleted: the units holding it are not needed
            self.holders[i] = Vec::new();
        }
        let ci = self.ix(c);
        if !self.alive[ci] {
            self.alive[ci] = true;
            self.order.push(c);
        }
        events.push(Event::Super([tp, tq, c]));
    }
}

/// Orders two candidates as the reference does: the larger count, then the smaller
/// `(left, right)` by bytes.
fn better(a: (u64, &[u8], &[u8]), b: (u64, &[u8], &[u8])) -> Ordering {
    a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)).then_with(|| b.2.cmp(a.2))
}

/// BoundlessBPE on the engine's flat units (each a pretoken spelled in bytes) and the span table
/// (`spans`: pretokens joined by `\n`, with counts). New tokens are added to `symbols`.
pub fn learn_flat(
    flat: Flat,
    spans: Option<Box<dyn StageTwoTexts>>,
    symbols: &mut Symbols,
    params: &BoundlessParams,
) -> Result<Boundless> {
    let Some(mut spans) = spans else {
        return Err(Error::Input(
            "BoundlessBPE has no span table: train it from the text (the spans are counted in \
             the same pass as the units), or count the table with preset='boundless'"
                .into(),
        ));
    };
    let first = symbols.next_id();
    // the units, by text (a text met twice is one unit): their texts one after another in
    // `bytes`, found by a hash table of unit numbers (a map from a boxed text per unit took
    // 30 MB more at the peak of a 100 MB corpus's run)
    let mut units = Flat::with_capacity(flat.meta.len(), flat.syms.len());
    let mut bytes: Vec<u8> = Vec::new();
    let mut at: Vec<u32> = Vec::with_capacity(flat.meta.len() + 1);
    at.push(0);
    let hasher = crate::hash::BuildHasher::default();
    let hash = |t: &[u8]| std::hash::BuildHasher::hash_one(&hasher, t);
    let mut unit_of: hashbrown::HashTable<u32> =
        hashbrown::HashTable::with_capacity(flat.meta.len());
    let text_of = |at: &[u32], u: u32| at[u as usize] as usize..at[u as usize + 1] as usize;
    for m in &flat.meta {
        let syms = &flat.syms[m.start()..m.start() + m.len()];
        if m.count == 0 || syms.is_empty() {
            continue;
        }
        if syms.contains(&NO_SYMBOL) {
            return Err(Error::Input("BoundlessBPE needs every byte in its alphabet".into()));
        }
        let start = bytes.len();
        for &s in syms {
            bytes.extend_from_slice(symbols.text(s));
        }
        let h = hash(&bytes[start..]);
        let found = unit_of.find(h, |&u| bytes[text_of(&at, u)] == bytes[start..]).copied();
        match found {
            Some(u) => {
                units.meta[u as usize].count += m.count;
                bytes.truncate(start);
            }
            None => {
                let u = (at.len() - 1) as u32;
                let Ok(end) = u32::try_from(bytes.len()) else {
                    return Err(Error::Input(
                        "BoundlessBPE's units hold 4 GB of text or more: prune the table \
                         (--min-unit-count) or train on less text"
                            .into(),
                    ));
                };
                at.push(end);
                unit_of.insert_unique(h, u, |&v| hash(&bytes[text_of(&at, v)]));
                units.push(syms, m.count);
            }
        }
    }
    drop(flat);
    super::give_back_free_memory();
    let find = |t: &[u8]| unit_of.find(hash(t), |&u| &bytes[text_of(&at, u)] == t).copied();
    // the spans, as unit ids
    // the array narrow while the units' ids fit its 22 bits: a count from `limit` on is in `big`
    let wide = at.len() > NARROW as usize;
    let limit = if wide { BIG } else { NARROW } as u64;
    let mut seq: Vec<u32> = Vec::new();
    let mut big: Map<u32, u64> = Map::default();
    let mut missing: Option<String> = None;
    spans.each_span(&mut |span, count| {
        if count == 0 || missing.is_some() {
            return;
        }
        let at = seq.len();
        seq.push(sep(count));
        for p in span.split(SEPARATOR) {
            match find(p.as_bytes()) {
                Some(u) => seq.push(u),
                None => {
                    missing = Some(p.to_string());
                    return;
                }
            }
        }
        if seq.len() - at < 3 {
            seq.truncate(at);
            return;
        }
        if count >= limit {
            big.insert(at as u32, count);
        }
    })?;
    // the span table is read once, and the table of texts used once: both go before the
    // learning starts
    drop(spans);
    drop(unit_of);
    super::give_back_free_memory();
    if let Some(p) = missing {
        return Err(Error::Input(format!(
            "the span table holds the pretoken {p:?}, which the units do not: the spans were \
             counted with other options than the units; count both again in one pass"
        )));
    }
    if seq.len() >= JOINED as usize || at.len() > BIG as usize {
        return Err(Error::Input(
            "the span table is too large (2^31 pretokens or 2^30 distinct ones, or more)".into(),
        ));
    }
    seq.push(sep(0));
    seq.shrink_to_fit();
    let n = at.len() - 1;
    // each unit's list of positions: its bytes counted, then written (`last`: each unit's
    // position before, 0 before its first)
    let mut last = vec![0u32; n];
    let mut len = vec![0u64; n + 1];
    for (g, &x) in seq.iter().enumerate() {
        if !is_sep(x) {
            len[x as usize + 1] += varint_len(g as u32 - last[x as usize]) as u64;
            last[x as usize] = g as u32;
        }
    }
    for i in 0..n {
        len[i + 1] += len[i];
    }
    if len[n] > u32::MAX as u64 {
        return Err(Error::Input("the span table is too large (4 GB of positions or more)".into()));
    }
    let off: Vec<u32> = len.into_iter().map(|v| v as u32).collect();
    let mut fill: Vec<usize> = off.iter().map(|&v| v as usize).collect();
    last.iter_mut().for_each(|v| *v = 0);
    let mut occ = vec![0u8; off[n] as usize];
    for (g, &x) in seq.iter().enumerate() {
        if !is_sep(x) {
            put_varint(&mut occ, &mut fill[x as usize], g as u32 - last[x as usize]);
            last[x as usize] = g as u32;
        }
    }
    drop(fill);
    drop(last);
    let packed = Seq::pack(&seq, wide);
    drop(seq);
    let whole: Vec<bool> = (0..n).map(|u| units.unit(u).len() == 1).collect();
    let base = symbols.base;
    let e = EngineHandle::new(units, symbols, params.new_rows, params.min_count);
    let mut l = Learner {
        e,
        base,
        first,
        spans: Spans { seq: packed, big, off, occ },
        texts: Texts::new(bytes, at),
        whole: vec![false; n],
        alive: Vec::new(),
        protected: Vec::new(),
        parents: Vec::new(),
        freq: Vec::new(),
        holders: Vec::new(),
        sc: Map::default(),
        sdelta: Map::default(),
        sheap: BinaryHeap::new(),
        blocked: Map::default(),
        order: Vec::new(),
        floor: params.min_count,
        smark: 0,
    };
    l.grow();
    for i in 0..(first - base) as usize {
        l.alive[i] = true;
    }
    for (u, w) in whole.into_iter().enumerate() {
        if w {
            l.set_whole(u as u32, true);
        }
    }
    l.push_supers();
    let mut events = Vec::new();
    let mut made = 0u64;
    let stop = loop {
        if l.order.len() as u64 >= params.new_rows {
            break Stop::Size;
        }
        if made >= params.event_limit {
            break Stop::EventLimit;
        }
        let merge = l.e.best();
        let sup = l.best_super();
        let take_merge = match (merge, sup) {
            // no pair is left: a supermerge candidate counted below the floor stops the run as
            // one counted below `min_count` would
            (None, None) if l.any_candidate() => break Stop::MinCount,
            (None, None) => break Stop::NoPairs,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((pair, n)), Some((sn, sk))) => {
                let (a, b) = unpack(pair);
                let (p, q) = unpack(sk);
                let symbols = l.e.symbols();
                let (sa, sb) = (l.texts.text(p), l.texts.text(q));
                better((n, symbols.text(a), symbols.text(b)), (sn, sa, sb)) != Ordering::Less
            }
        };
        let count = if take_merge { merge.unwrap().1 } else { sup.unwrap().0 };
        if count < params.min_count {
            break Stop::MinCount;
        }
        made += 1;
        if take_merge {
            let (pair, n) = merge.unwrap();
            l.merge(pair, n, params.threshold, &mut events);
        } else {
            l.supermerge(sup.unwrap().1, &mut events);
        }
        l.push_supers();
    };
    // the corpus as training leaves it: the units' pieces, less one per superword in a span
    let mut after: u64 = l.e.pieces();
    let mut joined = 0u64;
    for g in 0..l.spans.seq.len() {
        let x = l.spans.seq.at(g);
        if !is_sep(x) && x & JOINED != 0 {
            joined += l.spans.count_at(g);
        }
    }
    after -= joined / 2;
    Ok(Boundless { events, order: l.order, stop, pieces_after: after })
}

/// A finished run in the model's ids: the alphabet's ids (below `first`) stay, the tokens
/// present at the end become the rows after the alphabet in the order they were made, the
/// deleted ones the hidden ids after all rows. Returns the present tokens in row order, the
/// merge and deletion steps, the hidden texts, and the superwords `(left, right, superword)`
/// with how many steps come before each.
pub struct Settled {
    pub present: Vec<u32>,
    pub steps: Vec<Step>,
    pub hidden: Vec<Vec<u8>>,
    pub supers: Vec<[u32; 3]>,
    pub super_at: Vec<u32>,
}

pub fn settle(out: &Boundless, symbols: &Symbols, first: u32) -> Settled {
    let rows_after = first + out.order.len() as u32;
    let mut map: Map<u32, u32> = Map::default();
    for (k, &t) in out.order.iter().enumerate() {
        map.insert(t, first + k as u32);
    }
    let mut hidden = Vec::new();
    for t in first..symbols.next_id() {
        if let std::collections::hash_map::Entry::Vacant(e) = map.entry(t) {
            e.insert(rows_after + hidden.len() as u32);
            hidden.push(symbols.text(t).to_vec());
        }
    }
    let id = |x: u32| if x < first { x } else { map[&x] };
    let (mut steps, mut supers, mut super_at) = (Vec::new(), Vec::new(), Vec::new());
    for e in &out.events {
        match e {
            Event::Merge([a, b, c]) => steps.push(Step::Merge(id(*a), id(*b), id(*c))),
            Event::Delete(x) => steps.push(Step::Remove(id(*x))),
            Event::Super([a, b, c]) => {
                supers.push([id(*a), id(*b), id(*c)]);
                super_at.push(steps.len() as u32);
            }
        }
    }
    Settled { present: out.order.clone(), steps, hidden, supers, super_at }
}

/// A BoundlessBPE model's superwords as its encoder joins them: after each pretoken is encoded
/// (merges and deletions replayed), two adjacent pretokens each encoded as one token join into
/// their superword, the earliest superword first, then left to right.
#[derive(Clone, Debug)]
pub struct Superwords {
    /// `(left, right, superword)` in the order they were learned.
    pub joins: Vec<[u32; 3]>,
    /// How many merge and deletion steps come before each (for the model file's order).
    pub after: Vec<u32>,
    rank: Map<u64, (u32, u32)>,
}

impl Superwords {
    pub fn new(joins: Vec<[u32; 3]>, after: Vec<u32>) -> Self {
        let mut rank = Map::default();
        for (k, j) in joins.iter().enumerate() {
            rank.entry(pack(j[0], j[1])).or_insert((k as u32, j[2]));
        }
        Superwords { joins, after, rank }
    }

    /// Joins the superwords in `ids`, whose pretokens start at `starts` (in order, the last
    /// pretoken running to the end); `spans`, if given, are joined alongside.
    pub fn join(&self, ids: &mut Vec<u32>, starts: &[usize], spans: Option<&mut Vec<(u32, u32)>>) {
        // pretokens encoded as one id, and the candidates between two neighbours
        let one = |i: usize| {
            let end = starts.get(i + 1).copied().unwrap_or(ids.len());
            (end == starts[i] + 1).then(|| ids[starts[i]])
        };
        let mut found: Vec<(u32, usize, u32)> = Vec::new();
        for i in 0..starts.len().saturating_sub(1) {
            if let (Some(a), Some(b)) = (one(i), one(i + 1)) {
                if let Some(&(r, c)) = self.rank.get(&pack(a, b)) {
                    found.push((r, i, c));
                }
            }
        }
        if found.is_empty() {
            return;
        }
        found.sort_unstable();
        let mut taken = vec![false; starts.len()];
        let mut joined: Vec<Option<u32>> = vec![None; starts.len()];
        for (_, i, c) in found {
            if !taken[i] && !taken[i + 1] {
                taken[i] = true;
                taken[i + 1] = true;
                joined[i] = Some(c);
            }
        }
        let mut out = Vec::with_capacity(ids.len());
        let mut out_spans = Vec::new();
        let mut i = 0;
        while i < starts.len() {
            let end = starts.get(i + 1).copied().unwrap_or(ids.len());
            match joined[i] {
                Some(c) => {
                    out.push(c);
                    if let Some(sp) = spans.as_deref() {
                        out_spans.push((sp[starts[i]].0, sp[starts[i] + 1].1));
                    }
                    i += 2;
                }
                None => {
                    out.extend_from_slice(&ids[starts[i]..end]);
                    if let Some(sp) = spans.as_deref() {
                        out_spans.extend_from_slice(&sp[starts[i]..end]);
                    }
                    i += 1;
                }
            }
        }
        *ids = out;
        if let Some(sp) = spans {
            *sp = out_spans;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_span_array_keeps_three_bytes_a_position() {
        // a span counted 5 holding units 7 and 2^22 - 1, then one counted 2^40 (past the 22
        // bits: its count is in `big`), then the end
        let seq = [sep(5), 7, NARROW, sep(1 << 40), 3, sep(0)];
        let mut s = Seq::pack(&seq, false);
        assert!(s.top.is_empty());
        // sep(5): 3 << 22 | 5 = 0xC00005; 2^22 - 1 = 0x3FFFFF; the cut count 0xFFFFFF
        assert_eq!(s.lo, [0x0005, 7, 0xFFFF, 0xFFFF, 3, 0]);
        assert_eq!(s.hi, [0xC0, 0, 0x3F, 0xFF, 0, 0xC0]);
        let read: Vec<u32> = (0..s.len()).map(|g| s.at(g)).collect();
        assert_eq!(read, [sep(5), 7, NARROW, SEP_BITS | BIG, 3, sep(0)]);
        s.join(1);
        s.join(2);
        assert_eq!(s.hi[1], 0x80);
        assert_eq!((s.at(1), s.at(2)), (JOINED | 7, JOINED | NARROW));
        assert!(!is_sep(s.at(2)));
        assert_eq!(s.get(6), None);
    }

    #[test]
    fn a_wide_span_array_keeps_four_bytes_a_position() {
        let seq = [sep(1 << 29), 1 << 23, sep(0)];
        let mut s = Seq::pack(&seq, true);
        // sep(2^29): 0xE0000000; 2^23: 0x00800000
        assert_eq!((s.lo.as_slice(), s.hi.as_slice()), (&[0, 0, 0][..], &[0, 0x80, 0][..]));
        assert_eq!(s.top, [0xE0, 0, 0xC0]);
        s.join(1);
        assert_eq!(s.at(1), JOINED | 1 << 23);
        assert_eq!(s.at(0), sep(1 << 29));
    }
}
