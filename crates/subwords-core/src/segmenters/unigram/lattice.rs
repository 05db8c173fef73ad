//! The lattice of a unit under a Unigram table, and every segmenter the Unigram page defines on
//! it: Viterbi, the total probability, n-best, sampling, fewest pieces.
//!
//! Algorithm. Positions `0..=n` lie between a unit's `n` symbols; a piece spanning symbols
//! `i..j` is an arc `(i, j)` carrying the piece's log-probability, and a spelling is a walk from
//! 0 to `n`. The arcs come from the pieces' trie (the learner's [`super::trie::PieceTrie`],
//! a model's [`super::codes::CodedTrie`]), pushed start ascending, then end ascending. The recurrences are exactly those of docs/API.md ("Unigram"), step for step, so the
//! doubles agree with the Python reference bit for bit:
//! * forward: `alpha[0] = 0`, `alpha[j]` = the `logaddexp` fold over arcs ending at `j`, start
//!   ascending, of `alpha[i] + lp` (run in "push" form, start ascending: each `alpha[j]` sees the
//!   same terms in the same order);
//! * backward: `beta[n] = 0`, `beta[i]` = the fold over arcs starting at `i`, end ascending, of
//!   `lp + beta[j]`;
//! * k-best, filled from the end: `best(i)` = the first k of `{x + s : arc (i, j, x), s in
//!   best(j)}`, a candidate scoring `lp(x) + score(s)`. Viterbi is k = 1.
//!
//! Tie rule (Viterbi, n-best): higher score, compared on the exact sum of the pieces'
//! log-probabilities ([`fixed`], below); then fewer pieces; then the longer piece at the earliest
//! position where the two spellings differ. Running the
//! recurrence from the end makes the last rule local: two candidates at position `i` that start
//! with different arcs differ at `i` itself (same start and same length would be the same arc),
//! so the longer first arc wins; candidates sharing their first arc are compared on what
//! follows. Fewest pieces: every arc costs 1; ties go to the longer piece at the earliest
//! difference (arcs tried longest first, a later one taken only if strictly shorter).
//!
//! Exact scores (ties that are ties). A spelling's score is a sum of doubles, and a
//! float sum depends on the order it adds in: with `x = -0.1`, `y = -0.2`, `z = -0.3`
//! (see `tests/unigram.rs`), `x + (y + z)` and `y + (x + z)` differ in the last bit, so two
//! spellings made of the same pieces in another order, tied in arithmetic, would be decided by
//! rounding and the tie rule would never have its say. Comparisons therefore use a fixed-point key:
//! each log-probability once as the integer `round(lp · 2^64)` (half to even; `-inf` and
//! anything below `-2^63` saturate to `i128::MIN`), and a spelling's key is the saturating
//! `i128` sum of its pieces' keys. Log-probabilities are at most 0, so the saturating sum is
//! `max(i128::MIN, exact sum)` whatever the order: exact, order-free, transitive and the same
//! on every thread. For `|lp| >= 2^-12` (every piece with probability below 0.99976) the key is
//! `lp · 2^64` exactly (the double's last bit is worth at least `2^-64`), so the comparison is
//! the exact arithmetic of the stored doubles, not an approximation of it; a piece likelier
//! than that is rounded to a multiple of `2^-64` (5.4e-20), once, the same in every spelling.
//! The scores callers see are the float recurrence's doubles (`lp + score(rest)`, from the last
//! piece); the keys decide only which spelling wins, and differ from a float comparison only
//! where rounding would decide (an 8k `front` model trained on the english corpus: 4 of its
//! first 60,000 lines, each a rearrangement of the same pieces, `...` `.` where rounding gives
//! `.` `...`; the trained model file is the same either way). Considered and
//! rejected (reasoned, not built): (b) compensated (two-sum) or sorted
//! sums are still rounded, so permutations can still differ in the last bit of the error term
//! and need a tolerance on top, and a sorted sum does not fit a left-to-right recurrence; (c) a
//! tolerance (`|a - b| <= eps` as a tie) is not transitive (`a ~ b ~ c` but not `a ~ c`), so
//! the k-best sort and the recurrence's choices could depend on the order candidates arrive
//! in; `i64` keys either round every piece (at a `2^32` scale, spellings less than about
//! 1e-10 apart would tie) or, at a scale that keeps the doubles exact, overflow after a few
//! thousand pieces. Cost: the model's trie holds the keys (computed once at load), so encoding
//! adds an `i128` add and compare per arc; the lattice converts each arc's double as it reads
//! it (a multiply and a shift). The SentencePiece `.model` reader (`subwords-compat`) has its own single-precision Viterbi and
//! keeps sentencepiece's float comparisons; nothing here reaches it.
//!
//! Sampling (docs/API.md, "Sampling"): forward filtering with every `lp` scaled by `alpha`, then
//! backward sampling from `n`, one uniform draw per piece from [`SplitMix64`], the generator both
//! engines share; among the k best, weights `exp(alpha · (score - best))` and one draw.
//!
//! Invariants: arcs are stored start ascending, then end ascending (the reference's arc order);
//! `first[i]..first[i + 1]` are the arcs starting at `i`. A position no walk reaches makes the
//! unit unspellable (`None`), never a panic.
//!
//! Complexity: building the lattice is O(n · longest piece) trie steps; forward, backward,
//! Viterbi and fewest are O(arcs); n-best is O(arcs · k log(arcs · k)) plus the tie walks;
//! sampling is O(arcs).

pub const NEG_INF: f64 = f64::NEG_INFINITY;
const NONE: u32 = u32::MAX;

/// `log(exp(a) + exp(b))` as docs/API.md spells it: larger first, `-inf` absorbed, then
/// `a + log1p(exp(b - a))`. Commutative bit for bit.
///
/// Shortcut, exact: when `|a| >= 1` and `b - a < -38`, `log1p(exp(b - a)) < 3.2e-17`, below
/// half an ulp of `a` (>= 1.1e-16), so the rounded sum is `a` itself; returning `a` without
/// calling `exp` and `log1p` gives the same double the formula gives.
#[inline]
pub fn logaddexp(a: f64, b: f64) -> f64 {
    let (a, b) = if a < b { (b, a) } else { (a, b) };
    if b == NEG_INF {
        return a;
    }
    let d = b - a;
    if d < -38.0 && a.abs() >= 1.0 {
        return a;
    }
    a + d.exp().ln_1p()
}

/// `2^64`: one log-probability unit in [`fixed`] keys.
const FIXED_ONE: f64 = 18_446_744_073_709_551_616.0;

/// A log-probability as an exact fixed-point key: `round(lp · 2^64)`, half to even, saturating
/// (`-inf` and everything below `-2^63` give `i128::MIN`). Multiplying by a power of two is
/// exact, and for `|lp| >= 2^-12` the product is already a whole number, so rounding only
/// touches pieces likelier than 0.99976. `lp` is never NaN (models and the learner refuse it).
#[inline]
pub fn fixed(lp: f64) -> i128 {
    let x = lp * FIXED_ONE;
    if x.abs() < 4_503_599_627_370_496.0 {
        // below 2^52 the product may have a fraction: round it (rare: |lp| < 2^-12)
        return x.round_ties_even() as i64 as i128;
    }
    // a whole number `±m · 2^e` with e >= 0: shift the mantissa (no float-to-int library call
    // on the learner's hot path); 2^127 and beyond (and infinities) saturate
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let m = ((bits & ((1u64 << 52) - 1)) | (1u64 << 52)) as i128;
    let negative = bits >> 63 == 1;
    if e >= 75 {
        return if negative { i128::MIN } else { i128::MAX };
    }
    let v = m << e;
    if negative {
        -v
    } else {
        v
    }
}

/// The key of a spelling extended by one piece: the saturating sum. With every key at most 0 it
/// is `max(i128::MIN, exact sum)`, the same double-free value in any order.
#[inline]
pub fn fixed_add(a: i128, b: i128) -> i128 {
    a.saturating_add(b)
}

/// `scale · lp`, with `0 · lp = 0` even for `lp = -inf` (alpha 0: every spelling alike), as the
/// reference's `scaled`; a piece at -inf (the Bayesian M-step makes them) would give NaN.
#[inline]
fn scaled(lp: f64, scale: f64) -> f64 {
    if scale == 0.0 {
        0.0
    } else {
        scale * lp
    }
}

/// SplitMix64 (Steele, Lea and Flood), the sampling generator shared with the Python reference.
/// `uniform()` is `(next >> 11) · 2^-53`, in `[0, 1)`.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }
}

/// One arc of a lattice: the piece spanning symbols `start..end`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arc {
    pub start: u32,
    pub end: u32,
    pub piece: u32,
    pub log_prob: f64,
}

/// A spelling found by a segmenter: its score (sum of log-probs, from the last piece) and the
/// indices of its arcs in [`Lattice::arcs`], first piece first.
#[derive(Clone, Debug, PartialEq)]
pub struct Spelling {
    pub score: f64,
    pub arcs: Vec<u32>,
}

/// The lattice of one unit.
#[derive(Clone, Debug, Default)]
pub struct Lattice {
    n: usize,
    arcs: Vec<Arc>,
    first: Vec<u32>,
}

/// One entry of the k-best table: a spelling of the suffix from some position.
#[derive(Clone, Copy)]
struct Entry {
    /// the exact key of the spelling ([`fixed`]); `score` is the reported double
    key: i128,
    score: f64,
    count: u32,
    /// first arc (NONE for the empty spelling at `n`)
    arc: u32,
    /// index of the rest in `best[end of arc]`
    next: u32,
}

impl Lattice {
    /// Starts a lattice of `n` positions' worth of symbols; arcs follow with [`Lattice::push`]
    /// in arc order, then [`Lattice::finish`].
    pub fn reset(&mut self, n: usize) {
        self.n = n;
        self.arcs.clear();
        self.first.clear();
    }

    /// Adds an arc; arcs must come start ascending, then end ascending.
    #[inline]
    pub fn push(&mut self, start: u32, end: u32, piece: u32, log_prob: f64) {
        debug_assert!(start < end && end as usize <= self.n);
        debug_assert!(self.arcs.last().is_none_or(|a| (a.start, a.end) < (start, end)));
        self.arcs.push(Arc { start, end, piece, log_prob });
    }

    pub fn finish(&mut self) {
        self.first.clear();
        self.first.resize(self.n + 1, 0);
        for a in &self.arcs {
            if (a.start as usize) < self.n {
                self.first[a.start as usize + 1] += 1;
            }
        }
        for i in 1..=self.n {
            self.first[i] += self.first[i - 1];
        }
    }

    /// Symbols in the unit.
    pub fn len(&self) -> usize {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// The arcs, start ascending then end ascending: the lattice as data.
    pub fn arcs(&self) -> &[Arc] {
        &self.arcs
    }
    /// Indices of the arcs starting at `i`.
    #[inline]
    pub fn starting(&self, i: usize) -> std::ops::Range<usize> {
        self.first[i] as usize..self.first[i + 1] as usize
    }

    /// `alpha`: the forward recurrence with every log-prob multiplied by `scale` (1.0 for the
    /// unit's probability; sampling's `alpha` otherwise). `out[n]` is `log P(unit)`.
    pub fn forward(&self, scale: f64, out: &mut Vec<f64>) {
        out.clear();
        out.resize(self.n + 1, NEG_INF);
        out[0] = 0.0;
        for i in 0..self.n {
            let ai = out[i];
            for a in &self.arcs[self.starting(i)] {
                let j = a.end as usize;
                out[j] = logaddexp(out[j], ai + scaled(a.log_prob, scale));
            }
        }
    }

    /// `beta`: the backward recurrence; `out[0]` is `log P(unit)` again (other doubles).
    pub fn backward(&self, out: &mut Vec<f64>) {
        out.clear();
        out.resize(self.n + 1, NEG_INF);
        out[self.n] = 0.0;
        for i in (0..self.n).rev() {
            let mut b = NEG_INF;
            for a in &self.arcs[self.starting(i)] {
                b = logaddexp(b, a.log_prob + out[a.end as usize]);
            }
            out[i] = b;
        }
    }

    /// `log P(unit)`: the log-sum over all spellings (`alpha[n]`).
    pub fn log_probability(&self) -> f64 {
        let mut alpha = Vec::new();
        self.forward(1.0, &mut alpha);
        alpha[self.n]
    }

    /// The likeliest spelling under the tie rules, or `None` if no walk reaches the end.
    pub fn viterbi(&self) -> Option<Spelling> {
        let mut s = ViterbiScratch::default();
        self.viterbi_with(&mut s).then(|| Spelling { score: s.score[0], arcs: s.walk(self) })
    }

    /// Viterbi into reusable buffers; false if the unit has no spelling.
    pub fn viterbi_with(&self, s: &mut ViterbiScratch) -> bool {
        let n = self.n;
        s.reset(n);
        s.score[n] = 0.0;
        s.count[n] = 0;
        s.key[n] = 0;
        self.viterbi_down(n, None, s);
        s.found()
    }

    /// The Viterbi recurrence for positions `top - 1` down to 0 (`s` already holds positions
    /// `top..=n`), skipping the arcs of `skip`: the best by exact key, then fewer pieces, then
    /// the longer first arc.
    fn viterbi_down(&self, top: usize, skip: Option<u32>, s: &mut ViterbiScratch) {
        for i in (0..top).rev() {
            let (mut bk, mut bs, mut bc, mut ba, mut bl) = (i128::MIN, NEG_INF, NONE, NONE, 0u32);
            for k in self.starting(i) {
                let a = &self.arcs[k];
                let j = a.end as usize;
                if s.count[j] == NONE || skip == Some(a.piece) {
                    continue;
                }
                let key = fixed_add(fixed(a.log_prob), s.key[j]);
                let cnt = s.count[j] + 1;
                let len = a.end - a.start;
                let better =
                    bc == NONE || key > bk || (key == bk && (cnt < bc || (cnt == bc && len > bl)));
                if better {
                    (bk, bs, bc, ba, bl) = (key, a.log_prob + s.score[j], cnt, k as u32, len);
                }
            }
            s.key[i] = bk;
            s.score[i] = bs;
            s.count[i] = bc;
            s.arc[i] = ba;
        }
    }

    /// The Viterbi score with the arcs of `piece` taken out (the table not renormalised), or
    /// `-inf` if the unit then has no spelling: the reported double of the spelling the tie
    /// rules pick without `piece` (Viterbi's choice, so the same double the reference gives).
    pub fn best_score_without(&self, piece: u32, score: &mut ViterbiScratch) -> f64 {
        self.best_score_without_from(piece, None, score)
    }

    /// [`Lattice::best_score_without`] reusing `viterbi` (the full lattice's Viterbi, as
    /// [`Lattice::viterbi_with`] leaves it): positions after the last arc of `piece` keep their
    /// best spelling (no arc from there is `piece`'s), the rest are recomputed.
    pub fn best_score_without_from(
        &self,
        piece: u32,
        viterbi: Option<&ViterbiScratch>,
        s: &mut ViterbiScratch,
    ) -> f64 {
        let n = self.n;
        let mut top = n;
        if let Some(v) = viterbi {
            match self.arcs.iter().rposition(|a| a.piece == piece) {
                None => return if v.count[0] == NONE { NEG_INF } else { v.score[0] },
                Some(k) => top = self.arcs[k].start as usize + 1,
            }
        }
        s.reset(n);
        match viterbi {
            Some(v) => {
                s.score[top..].copy_from_slice(&v.score[top..]);
                s.count[top..].copy_from_slice(&v.count[top..]);
                s.key[top..].copy_from_slice(&v.key[top..]);
                s.arc[top..].copy_from_slice(&v.arc[top..]);
            }
            None => {
                s.score[n] = 0.0;
                s.count[n] = 0;
                s.key[n] = 0;
            }
        }
        self.viterbi_down(top.min(n), Some(piece), s);
        if s.count[0] == NONE {
            NEG_INF
        } else {
            s.score[0]
        }
    }

    /// The `k` best spellings in the tie order (`k = usize::MAX`: every spelling; exponential,
    /// for short units). Empty if the unit has no spelling.
    pub fn nbest(&self, k: usize) -> Vec<Spelling> {
        if k == 0 {
            return Vec::new();
        }
        let n = self.n;
        let mut best: Vec<Vec<Entry>> = vec![Vec::new(); n + 1];
        best[n].push(Entry { key: 0, score: 0.0, count: 0, arc: NONE, next: NONE });
        let mut cands: Vec<Entry> = Vec::new();
        for i in (0..n).rev() {
            cands.clear();
            for k_arc in self.starting(i) {
                let a = &self.arcs[k_arc];
                for (m, e) in best[a.end as usize].iter().enumerate() {
                    let key = fixed_add(fixed(a.log_prob), e.key);
                    cands.push(Entry {
                        key,
                        score: a.log_prob + e.score,
                        count: e.count + 1,
                        arc: k_arc as u32,
                        next: m as u32,
                    });
                }
            }
            cands.sort_by(|x, y| self.cmp_entries(&best, x, y));
            cands.truncate(k);
            best[i] = cands.clone();
        }
        best[0]
            .iter()
            .map(|e| {
                let mut arcs = Vec::with_capacity(e.count as usize);
                let mut cur = *e;
                while cur.arc != NONE {
                    arcs.push(cur.arc);
                    let j = self.arcs[cur.arc as usize].end as usize;
                    cur = best[j][cur.next as usize];
                }
                Spelling { score: e.score, arcs }
            })
            .collect()
    }

    /// The tie order of two spellings of the suffix from one position.
    fn cmp_entries(&self, best: &[Vec<Entry>], x: &Entry, y: &Entry) -> std::cmp::Ordering {
        use std::cmp::Ordering::*;
        match y.key.cmp(&x.key).then(x.count.cmp(&y.count)) {
            Equal => {}
            o => return o,
        }
        let (mut a, mut b) = (*x, *y);
        loop {
            if a.arc == NONE || b.arc == NONE {
                return (a.arc == NONE).cmp(&(b.arc == NONE)).reverse();
            }
            if a.arc != b.arc {
                let la = self.arcs[a.arc as usize].end;
                let lb = self.arcs[b.arc as usize].end;
                // same start: the longer arc ends later, and comes first
                return lb.cmp(&la);
            }
            if a.next == b.next {
                return Equal;
            }
            let j = self.arcs[a.arc as usize].end as usize;
            a = best[j][a.next as usize];
            b = best[j][b.next as usize];
        }
    }

    /// Fewest pieces (every arc costs 1); ties: the longer piece at the earliest difference.
    /// Log-probabilities are not consulted.
    pub fn fewest(&self) -> Option<Vec<u32>> {
        let n = self.n;
        let mut count = vec![NONE; n + 1];
        let mut arc = vec![NONE; n + 1];
        count[n] = 0;
        for i in (0..n).rev() {
            for k in self.starting(i).rev() {
                let j = self.arcs[k].end as usize;
                if count[j] != NONE && (count[i] == NONE || count[j] + 1 < count[i]) {
                    count[i] = count[j] + 1;
                    arc[i] = k as u32;
                }
            }
        }
        if count[0] == NONE {
            return None;
        }
        let mut out = Vec::with_capacity(count[0] as usize);
        let mut i = 0;
        while i < n {
            out.push(arc[i]);
            i = self.arcs[arc[i] as usize].end as usize;
        }
        Some(out)
    }

    /// Draws a spelling with probability `P(s)^alpha / Σ P(s')^alpha` (forward filtering,
    /// backward sampling). Arc indices, first piece first; `None` if the unit has no spelling.
    pub fn sample(&self, alpha: f64, rng: &mut SplitMix64) -> Option<Vec<u32>> {
        let n = self.n;
        let mut a = Vec::new();
        self.forward(alpha, &mut a);
        if a[n] == NEG_INF && n > 0 {
            return None;
        }
        // arcs by end, start ascending within an end (a stable counting sort of arc order)
        let mut end_first = vec![0u32; n + 2];
        for x in &self.arcs {
            end_first[x.end as usize + 1] += 1;
        }
        for j in 1..n + 2 {
            end_first[j] += end_first[j - 1];
        }
        let mut fill = end_first.clone();
        let mut by_end = vec![0u32; self.arcs.len()];
        for (k, x) in self.arcs.iter().enumerate() {
            let slot = &mut fill[x.end as usize];
            by_end[*slot as usize] = k as u32;
            *slot += 1;
        }
        let mut out = Vec::new();
        let mut weights = Vec::new();
        let mut j = n;
        while j > 0 {
            let ending = &by_end[end_first[j] as usize..end_first[j + 1] as usize];
            weights.clear();
            for &k in ending {
                let x = &self.arcs[k as usize];
                let w = a[x.start as usize] + scaled(x.log_prob, alpha);
                weights.push(if w == NEG_INF { 0.0 } else { (w - a[j]).exp() });
            }
            let mut total = 0.0;
            for &w in &weights {
                total += w;
            }
            let t = rng.uniform() * total;
            let chosen = pick(&weights, t);
            let k = *ending.get(chosen)?;
            out.push(k);
            j = self.arcs[k as usize].start as usize;
        }
        out.reverse();
        Some(out)
    }

    /// Draws among the `k` best spellings, weights `exp(alpha · (score - best score))`.
    pub fn sample_nbest(&self, alpha: f64, k: usize, rng: &mut SplitMix64) -> Option<Spelling> {
        let mut cands = self.nbest(k);
        if cands.is_empty() {
            return None;
        }
        let top = cands[0].score;
        let weights: Vec<f64> = cands
            .iter()
            .map(|c| {
                if alpha == 0.0 {
                    1.0
                } else if c.score == NEG_INF {
                    0.0
                } else {
                    (alpha * (c.score - top)).exp()
                }
            })
            .collect();
        let mut total = 0.0;
        for &w in &weights {
            total += w;
        }
        let t = rng.uniform() * total;
        let chosen = pick(&weights, t);
        Some(cands.swap_remove(chosen))
    }
}

/// The first index whose running sum (left to right) exceeds `t`, else the last.
fn pick(weights: &[f64], t: f64) -> usize {
    let mut running = 0.0;
    for (m, &w) in weights.iter().enumerate() {
        running += w;
        if t < running {
            return m;
        }
    }
    weights.len().saturating_sub(1)
}

/// Reusable buffers for [`Lattice::viterbi_with`]: per position, the best score of the rest
/// (the reported double), its exact key ([`fixed`]), its piece count and its first arc.
#[derive(Default)]
pub struct ViterbiScratch {
    pub score: Vec<f64>,
    pub key: Vec<i128>,
    pub count: Vec<u32>,
    pub arc: Vec<u32>,
}

impl ViterbiScratch {
    /// Empties the four buffers and sizes them for a lattice of `n` positions (`n + 1`
    /// entries), every position unreached: score `-inf`, key the least, no count, no arc.
    pub fn reset(&mut self, n: usize) {
        self.score.clear();
        self.score.resize(n + 1, NEG_INF);
        self.key.clear();
        self.key.resize(n + 1, i128::MIN);
        self.count.clear();
        self.count.resize(n + 1, NONE);
        self.arc.clear();
        self.arc.resize(n + 1, NONE);
    }

    /// Whether the last pass found a spelling of the whole unit (position 0 reached).
    pub fn found(&self) -> bool {
        self.count.first().is_some_and(|&c| c != NONE)
    }

    /// The arcs of the spelling found, first piece first.
    pub fn walk(&self, l: &Lattice) -> Vec<u32> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < l.n {
            let k = self.arc[i];
            out.push(k);
            i = l.arcs[k as usize].end as usize;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_the_reference() {
        assert_eq!(SplitMix64::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn fixed_keys_are_the_rounded_scaled_doubles() {
        // against the standard library's own rounding and saturating cast, on doubles of every
        // size a log-probability takes (and a few no table holds)
        let mut rng = SplitMix64::new(15);
        let mut samples = vec![
            0.0,
            -0.0,
            -1e-300,
            -2f64.powi(-12),
            -2f64.powi(-13) * 3.0,
            -0.5,
            -1.0,
            -2f64.powi(63),
            -2f64.powi(64),
            -1e300,
            NEG_INF,
        ];
        for _ in 0..20_000 {
            let e = (rng.uniform() * 90.0) as i32 - 70;
            samples.push(-rng.uniform() * 2f64.powi(e));
        }
        for lp in samples {
            assert_eq!(
                fixed(lp),
                (lp * 18_446_744_073_709_551_616.0).round_ties_even() as i128,
                "{lp:e}"
            );
        }
        assert_eq!(fixed(-1.0), -(1i128 << 64));
        assert_eq!(fixed(NEG_INF), i128::MIN);
        // a tie of the rounding goes to even: 2^-65 is half a unit
        assert_eq!(fixed(-(2f64.powi(-65))), 0);
        assert_eq!(fixed(-3.0 * 2f64.powi(-65)), -2);
    }

    #[test]
    fn ab_panel() {
        // 002_…: `ab` once, a, b</w>, ab</w> at a third each: the whole spelling holds 3/4.
        let third = (1.0f64 / 3.0).ln();
        let mut l = Lattice::default();
        l.reset(2);
        l.push(0, 1, 0, third);
        l.push(0, 2, 2, third);
        l.push(1, 2, 1, third);
        l.finish();
        assert_eq!(l.arcs().len(), 3);
        let best = l.viterbi().unwrap();
        let share = (best.score - l.log_probability()).exp();
        assert!((share - 0.75).abs() < 1e-15);
        assert_eq!(
            best.arcs.iter().map(|&k| l.arcs()[k as usize].piece).collect::<Vec<_>>(),
            vec![2]
        );
        assert_eq!(l.nbest(5).len(), 2);
    }
}
