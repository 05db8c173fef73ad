//! The Unigram EM round and the final likelihood pass (see [`super`] for the order of the
//! floating-point folds, which the Python reference repeats bit for bit).

use rayon::prelude::*;

use super::{EmBuffers, EmMethod, Runs, Stored, Table, BATCH_CHUNKS};
use crate::segmenters::unigram::lattice::{logaddexp, NEG_INF};

/// The digamma function `ψ(x)` for `x >= 0` (`ψ(0) = -inf`, its limit from above), as
/// sentencepiece's trainer computes it (`unigram_model_trainer.cc`, `Digamma`): the recurrence
/// `ψ(x) = ψ(x + 1) - 1/x` until `x >= 7`, then the asymptotic series in `y = x - 1/2`:
/// `ln y + y⁻²/24 - 7y⁻⁴/960 + 31y⁻⁶/8064 - 127y⁻⁸/30720`. The Python reference
/// (`reference/unigram.py`, `digamma`) runs the same operations in the same order, so the two
/// agree bit for bit; a library digamma (statrs, scipy) would not match across the engines.
pub fn digamma(mut x: f64) -> f64 {
    if x == 0.0 {
        return NEG_INF;
    }
    let mut result = 0.0f64;
    while x < 7.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    x -= 0.5;
    let xx = 1.0 / x;
    let xx2 = xx * xx;
    let xx4 = xx2 * xx2;
    result + x.ln() + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2
        - (127.0 / 30720.0) * xx4 * xx4
}

/// Forward and backward over one run's stored arcs (start ascending, then end ascending), into
/// `s.alpha` and `s.beta`, with each arc's end and log-probability in `s.ends` and `s.lps`
/// (`q`: each piece's log-probability beside its length, one slot read per arc);
/// returns `log Z = alpha[n]`, or `None` when no spelling has a probability. The same
/// recurrences as [`crate::segmenters::unigram::lattice::Lattice::forward`] (scale 1) and
/// `backward`, the same terms folded in the same order, without copying the arcs into a
/// [`crate::segmenters::unigram::lattice::Lattice`] first: forward in push form visits the arcs in
/// their stored order (an arc's start is final once every arc before it is added, since those
/// are the only ones that can end there), and backward folds each start's arcs in stored order,
/// starts descending.
#[inline]
fn forward_backward(arcs: &[u32], n: usize, q: &[(f64, u32)], s: &mut EmBuffers) -> Option<f64> {
    s.starts.clear();
    s.ends.clear();
    s.lps.clear();
    // a position's arcs begin with its single symbol (see [`super::Stored`])
    let mut i = u32::MAX;
    for &p in arcs {
        let (lp, len) = q[p as usize];
        i = i.wrapping_add((len == 1) as u32);
        s.starts.push(i);
        s.ends.push(i + len);
        s.lps.push(lp);
    }
    let (alpha, beta, starts, ends, lps) = (&mut s.alpha, &mut s.beta, &s.starts, &s.ends, &s.lps);
    alpha.clear();
    alpha.resize(n + 1, NEG_INF);
    alpha[0] = 0.0;
    for x in 0..arcs.len() {
        let j = ends[x] as usize;
        alpha[j] = logaddexp(alpha[j], alpha[starts[x] as usize] + lps[x]);
    }
    let log_z = alpha[n];
    if log_z == NEG_INF {
        return None;
    }
    beta.clear();
    beta.resize(n + 1, NEG_INF);
    beta[n] = 0.0;
    starts_descending(starts, |i, at| {
        let mut b = NEG_INF;
        for x in at {
            b = logaddexp(b, lps[x] + beta[ends[x] as usize]);
        }
        beta[i] = b;
    });
    Some(log_z)
}

/// Calls `f(i, arcs)` for each start `i` of a run's arcs (`starts` ascending), the last start
/// first, with the range of the arcs that start there: backward's order.
#[inline]
fn starts_descending(starts: &[u32], mut f: impl FnMut(usize, std::ops::Range<usize>)) {
    let mut hi = starts.len();
    while hi > 0 {
        let i = starts[hi - 1];
        let mut lo = hi - 1;
        while lo > 0 && starts[lo - 1] == i {
            lo -= 1;
        }
        f(i as usize, lo..hi);
        hi = lo;
    }
}

/// `x · 2^k`, correctly rounded (C's `ldexp`, Python's `math.ldexp`): one multiplication by
/// the power of two when `2^k` is a normal double (a single rounding, so the same result),
/// `libm::scalbn` beyond.
#[inline]
fn ldexp(x: f64, k: i32) -> f64 {
    if (-1022..=1023).contains(&k) {
        x * f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        libm::scalbn(x, k)
    }
}

/// `(m, e)` with `x = m · 2^e` and `0.5 <= m < 1` (C's `frexp`, Python's `math.frexp`);
/// `(0.0, 0)` for 0. For the non-negative finite sums of the linear E-step: bit arithmetic
/// for a normal `x`, `libm::frexp` for the rest.
#[inline]
fn frexp(x: f64) -> (f64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 || biased == 0x7ff {
        return libm::frexp(x);
    }
    (f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52)), biased - 1022)
}

/// `em="sentencepiece"`'s forward and backward, in linear space (docs/API.md, "em"): the same
/// recurrences as [`forward_backward`] on probabilities `q = exp(lp)` (`s.lps` holds each
/// arc's `q`), each position's forward value kept as a mantissa `a[j]` in `[0.5, 1)` and a
/// binary exponent `E[j]` (`frexp` of its sum), so no value leaves the range of a double
/// however long the run. `a[0] = 1`, `E[0] = 0`; for `j = 1..=n`, the arcs ending at `j` in
/// start order: `raw = Σ ldexp(a[i] · q, E[i] - E[j - 1])` from 0.0 with `+`, then `(a[j],
/// e) = frexp(raw)`, `E[j] = E[j - 1] + e`. Backward in the forward's exponents: `b[n] = 1`;
/// for starts descending, the start's arcs in stored order (end ascending): `b[i] = Σ
/// ldexp(q · b[j], E[i] - E[j])`. Scaling by powers of two is exact, so these are the
/// textbook linear sums, rounded as they would be with an unbounded exponent. Into `s.alpha`
/// (`a`), `s.beta` (`b`) and `s.exps` (`E`); returns `a[n]`, or `None` when it is 0 (no
/// spelling has a probability).
#[inline]
fn forward_backward_linear(
    arcs: &[u32],
    n: usize,
    q: &[(f64, u32)],
    s: &mut EmBuffers,
) -> Option<f64> {
    s.starts.clear();
    s.ends.clear();
    s.lps.clear();
    s.head.clear();
    s.head.resize(n + 1, 0);
    let mut i = u32::MAX;
    for &p in arcs {
        let (prob, len) = q[p as usize];
        i = i.wrapping_add((len == 1) as u32);
        s.starts.push(i);
        s.ends.push(i + len);
        s.lps.push(prob);
        s.head[(i + len) as usize] += 1;
    }
    // the arcs by end (a counting sort; stored order keeps each end's starts ascending):
    // afterwards `head[j]` is where the arcs ending after `j` begin
    let mut at = 0u32;
    for h in s.head.iter_mut() {
        let c = *h;
        *h = at;
        at += c;
    }
    s.by_end.clear();
    s.by_end.resize(arcs.len(), 0);
    for x in 0..arcs.len() {
        let j = s.ends[x] as usize;
        s.by_end[s.head[j] as usize] = x as u32;
        s.head[j] += 1;
    }
    let (a, b, e, starts, ends, qs) =
        (&mut s.alpha, &mut s.beta, &mut s.exps, &s.starts, &s.ends, &s.lps);
    a.clear();
    a.resize(n + 1, 0.0);
    e.clear();
    e.resize(n + 1, 0);
    a[0] = 1.0;
    for j in 1..=n {
        let before = e[j - 1];
        let mut raw = 0.0f64;
        for &x in &s.by_end[s.head[j - 1] as usize..s.head[j] as usize] {
            let i = starts[x as usize] as usize;
            raw += ldexp(a[i] * qs[x as usize], e[i] - before);
        }
        let (m, k) = frexp(raw);
        a[j] = m;
        e[j] = before + k;
    }
    let z = a[n];
    if z == 0.0 {
        return None;
    }
    b.clear();
    b.resize(n + 1, 0.0);
    b[n] = 1.0;
    starts_descending(starts, |i, at| {
        let mut sum = 0.0f64;
        for x in at {
            let j = ends[x] as usize;
            sum += ldexp(qs[x] * b[j], e[i] - e[j]);
        }
        b[i] = sum;
    });
    Some(z)
}

/// A chunk's terms as (piece, expected-count term), filed by the piece's range, and where each
/// range's terms start.
type ChunkTerms = (Vec<(u32, f64)>, Vec<u32>);

/// Where each range of pieces (`piece >> shift`) begins among a chunk's terms, one term per
/// arc, into `off`: a counting sort on the arcs' pieces, so each term is filed in place as it
/// is made.
fn range_offsets(arcs: &[u32], shift: u32, n_ranges: usize, off: &mut Vec<u32>) {
    off.clear();
    off.resize(n_ranges + 1, 0);
    if n_ranges == 1 {
        off[1] = arcs.len() as u32;
        return;
    }
    for &p in arcs {
        off[(p >> shift) as usize + 1] += 1;
    }
    for k in 0..n_ranges {
        off[k + 1] += off[k];
    }
}

/// One EM round, in place; returns how many pieces the M-step dropped (only
/// `em="sentencepiece"` drops any).
pub(super) fn em_round(runs: &Runs, table: &mut Table, stored: &Stored, method: EmMethod) -> usize {
    let np = table.at.len();
    // `em="sentencepiece"` folds the expected counts themselves (from 0.0, `+`), as
    // sentencepiece does; the other methods fold their logarithms (from -inf, `logaddexp`)
    let linear = method == EmMethod::Sentencepiece;
    let empty = if linear { 0.0 } else { NEG_INF };
    let mut expected = vec![empty; np];
    // each piece's log-probability (the linear E-step: its probability, one `exp` per piece a
    // round; dead pieces have no arcs) beside its length: an arc reads one slot, not two tables
    // (the two reads were the E-step's costliest loads on a large table)
    let q: Vec<(f64, u32)> = if linear {
        table.lp.par_iter().zip(table.len.par_iter()).map(|(lp, &len)| (lp.exp(), len)).collect()
    } else {
        table.packed()
    };
    // pieces in ranges of `1 << shift` ids, about eight per thread: the E-step files each term
    // under its piece's range, and one task folds one range, reading only the terms filed there
    // (on one thread, one range: nothing to file)
    let threads = rayon::current_num_threads().max(1);
    let per = if threads == 1 { np } else { np.div_ceil(8 * threads) };
    let shift = per.max(1).next_power_of_two().trailing_zeros();
    let n_ranges = np.div_ceil(1 << shift);
    // one batch's terms, the buffers kept from batch to batch (fresh ones cost a page fault
    // per 4 KiB every batch)
    let mut pool: Vec<ChunkTerms> =
        (0..BATCH_CHUNKS.min(stored.chunks.len())).map(|_| (Vec::new(), Vec::new())).collect();
    for batch in stored.chunks.chunks(BATCH_CHUNKS) {
        let terms = &mut pool[..batch.len()];
        batch.par_iter().zip(terms.par_iter_mut()).for_each_init(
            EmBuffers::default,
            |s, (chunk, (out, off))| {
                // each term filed under its piece's range as it is made, in run order
                range_offsets(&chunk.arcs, shift, n_ranges, off);
                let mut at = off.clone();
                out.clear();
                out.resize(chunk.arcs.len(), (0u32, empty));
                for (k, r) in chunk.runs.clone().enumerate() {
                    let arcs = &chunk.arcs[chunk.off[k] as usize..chunk.off[k + 1] as usize];
                    let n = runs.run(r).len();
                    if linear {
                        let Some(z) = forward_backward_linear(arcs, n, &q, s) else {
                            // no spelling: the run adds nothing; its slots hold 0.0, which the
                            // fold leaves as it is (`e + 0.0 = e`, every `e` being >= +0.0)
                            for &p in arcs {
                                let slot = &mut at[(p >> shift) as usize];
                                out[*slot as usize].0 = p;
                                *slot += 1;
                            }
                            continue;
                        };
                        // the term: `ldexp(((a[i] · q) · b[j]) · (c / a[n]), E[i] - E[j])`, the
                        // arc's expected count `c · α(i) q β(j) / Z` with the exponents put back
                        let w = runs.count[r] as f64 / z;
                        for (x, &p) in arcs.iter().enumerate() {
                            let (i, j) = (s.starts[x] as usize, s.ends[x] as usize);
                            let t = ldexp(
                                ((s.alpha[i] * s.lps[x]) * s.beta[j]) * w,
                                s.exps[i] - s.exps[j],
                            );
                            let slot = &mut at[(p >> shift) as usize];
                            out[*slot as usize] = (p, t);
                            *slot += 1;
                        }
                        continue;
                    }
                    let Some(log_z) = forward_backward(arcs, n, &q, s) else {
                        // every spelling holds a piece at -inf (the Bayesian step reaches it in
                        // a few rounds): the run adds nothing, as in the reference; its slots
                        // hold -inf, which the fold leaves as it is (`logaddexp(e, -inf) = e`)
                        for &p in arcs {
                            let slot = &mut at[(p >> shift) as usize];
                            out[*slot as usize].0 = p;
                            *slot += 1;
                        }
                        continue;
                    };
                    // the term: `ln c + post`
                    let c = (runs.count[r] as f64).ln();
                    for (x, &p) in arcs.iter().enumerate() {
                        let post = ((s.alpha[s.starts[x] as usize] + s.lps[x])
                            + s.beta[s.ends[x] as usize])
                            - log_z;
                        let slot = &mut at[(p >> shift) as usize];
                        out[*slot as usize] = (p, c + post);
                        *slot += 1;
                    }
                }
            },
        );
        let terms = &pool[..batch.len()];
        // each task folds the terms of its own range of pieces, in run order
        expected.par_chunks_mut(1 << shift).enumerate().for_each(|(k, slot)| {
            let lo = (k << shift) as u32;
            for chunk in terms {
                let filed = &chunk.0[chunk.1[k] as usize..chunk.1[k + 1] as usize];
                if linear {
                    for &(p, t) in filed {
                        slot[(p - lo) as usize] += t;
                    }
                } else {
                    for &(p, t) in filed {
                        let e = &mut slot[(p - lo) as usize];
                        *e = logaddexp(*e, t);
                    }
                }
            }
        });
    }
    match method {
        EmMethod::Plain => {
            let mut s = NEG_INF;
            for p in 0..np {
                if table.alive[p] && table.has_prob[p] {
                    s = logaddexp(s, expected[p]);
                }
            }
            if s == NEG_INF {
                return 0; // no run reaches the table: keep it, as the reference does
            }
            for p in 0..np {
                if table.alive[p] && table.has_prob[p] {
                    table.lp[p] = expected[p] - s;
                }
            }
            0
        }
        EmMethod::Bayes => {
            bayes_m_step(table, &expected);
            0
        }
        EmMethod::Sentencepiece => sp_m_step(table, &expected),
    }
}

/// sentencepiece's drop threshold on expected counts (`kExpectedFrequencyThreshold`), here the
/// floor of a single symbol's expected count.
const SINGLE_FLOOR: f64 = 0.5;

/// sentencepiece's M-step (`RunMStep`): `lp = ψ(e) - ψ(S)`, `e = exp(E)` the expected count,
/// `S` the plain sum of the `e` in piece (text) order. Unlike sentencepiece, pieces whose
/// expected count is below 0.5 are not dropped here: `ψ` sends them far below every used piece
/// (ψ(0.1) ≈ -10.4), no best spelling takes them, and the next pruning round removes them at
/// zero loss; dropping them would let the M-step shrink the table below the target. Single
/// symbols, which must stay, score as if their expected count were at least 0.5: left alone,
/// ψ sends a rare symbol to -inf in a few rounds, every run holding it loses all its spellings,
/// adds nothing to the next E-step, and the losses cascade (tried: 4× the held-out pieces of
/// sentencepiece on English at 8k). A table no run reaches (`S = 0`) is kept as it is, as the
/// plain step keeps it.
fn bayes_m_step(table: &mut Table, expected: &[f64]) {
    let np = expected.len();
    let mut s = 0.0f64;
    for p in 0..np {
        if table.alive[p] && table.has_prob[p] {
            s += expected[p].exp();
        }
    }
    if s == 0.0 {
        return;
    }
    let ds = digamma(s);
    for p in 0..np {
        if table.alive[p] && table.has_prob[p] {
            let e = expected[p].exp();
            // a single symbol is never dropped: it scores as if at the threshold at least
            let e = if table.len[p] == 1 { e.max(SINGLE_FLOOR) } else { e };
            // at most 0: the series is cut after its y⁻⁸ term, so near x = 7 (where the
            // recurrence hands over to it) ψ is monotone only to ~1e-11, and a piece holding
            // nearly all the expected count could score a hair above 0
            table.lp[p] = (digamma(e) - ds).min(0.0);
        }
    }
}

/// `em="sentencepiece"`'s M-step: sentencepiece's `RunMStep` whole, on the expected counts
/// `e` themselves (the E-step folded them in linear space). A piece of two or more
/// symbols whose expected count `e` is below 0.5 is dropped (marked dead); `S` is the plain
/// sum of `e` over the pieces kept, in piece (text) order, single symbols with their own `e`;
/// then `lp = min(ψ(e) - ψ(S), 0)`, a single symbol scoring as if `e` were at least 0.5 (it
/// must stay, see [`bayes_m_step`]). A table no run reaches (`S = 0`) is kept as it is.
/// Returns the number of pieces dropped.
fn sp_m_step(table: &mut Table, e: &[f64]) -> usize {
    // the digammas are per piece (on every thread); only the sum is a fold
    let mut s = 0.0f64;
    for p in 0..e.len() {
        if table.alive[p] && table.has_prob[p] && (table.len[p] == 1 || e[p] >= SINGLE_FLOOR) {
            s += e[p];
        }
    }
    if s == 0.0 {
        return 0;
    }
    let ds = digamma(s);
    let Table { lp, alive, len, has_prob, .. } = table;
    lp.par_iter_mut()
        .zip(alive.par_iter_mut())
        .zip(e.par_iter().zip(len.par_iter().zip(has_prob.par_iter())))
        .map(|((lp, alive), (&e, (&len, &has_prob)))| {
            if !*alive || !has_prob {
                0
            } else if len == 1 {
                *lp = (digamma(e.max(SINGLE_FLOOR)) - ds).min(0.0);
                0
            } else if e >= SINGLE_FLOOR {
                *lp = (digamma(e) - ds).min(0.0);
                0
            } else {
                *alive = false;
                1
            }
        })
        .sum()
}

/// Log-likelihood (Σ in run order of `c · log P(run)`) and the runs' Viterbi piece count.
pub(super) fn final_pass(runs: &Runs, table: &Table, stored: &Stored) -> (f64, u64) {
    let mut ll = 0.0f64;
    let mut pieces = 0u64;
    let q = table.packed();
    for batch in stored.chunks.chunks(BATCH_CHUNKS) {
        let parts: Vec<(Vec<f64>, u64)> = batch
            .par_iter()
            .map_init(EmBuffers::default, |s, chunk| {
                let mut z = Vec::with_capacity(chunk.runs.len());
                let mut pieces = 0u64;
                for (k, r) in chunk.runs.clone().enumerate() {
                    Stored::lattice(chunk, k, runs.run(r).len(), &q, &mut s.lattice);
                    s.lattice.forward(1.0, &mut s.alpha);
                    z.push(s.alpha[s.lattice.len()]);
                    if s.lattice.viterbi_with(&mut s.viterbi) {
                        pieces += runs.count[r] * s.viterbi.count[0] as u64;
                    }
                }
                (z, pieces)
            })
            .collect();
        for (chunk, (z, k)) in batch.iter().zip(parts) {
            for (r, v) in chunk.runs.clone().zip(z) {
                ll += runs.count[r] as f64 * v;
            }
            pieces += k;
        }
    }
    (ll, pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldexp_and_frexp_are_cs() {
        // the fast paths against libm's own `scalbn` and `frexp` (C's), at the edges of the
        // normal range, on subnormals and on zero
        let xs = [
            1.0,
            0.75,
            1.5e-300,
            3.7e300,
            f64::MIN_POSITIVE,
            4.9e-324,
            2.2e-310,
            0.0,
            0.999_999_999_999_999_9,
        ];
        for &x in &xs {
            for k in [-1100, -1074, -1023, -1022, -1021, -700, -1, 0, 1, 700, 1022, 1023, 1024] {
                assert_eq!(
                    ldexp(x, k).to_bits(),
                    libm::scalbn(x, k).to_bits(),
                    "ldexp({x:e}, {k})"
                );
            }
            let (m, e) = frexp(x);
            let (lm, le) = libm::frexp(x);
            assert_eq!((m.to_bits(), e), (lm.to_bits(), le), "frexp({x:e})");
        }
    }

    #[test]
    fn linear_e_step_matches_the_log_space_one_on_a_run_too_long_for_plain_products() {
        // table: a, b (0.3 each) and ab (0.4); the run is "ab" 3000 times. Its probability is
        // (0.4 + 0.3 · 0.3)^3000 = e^-2140.05, far under the smallest double (about e^-745),
        // so unscaled linear sums would be 0;
        // each arc's posterior from the scaled linear pass must match the log-space pass's
        let q = [0.3f64, 0.3, 0.4];
        let table = Table {
            at: vec![0, 1, 0],
            len: vec![1, 1, 2],
            lp: q.iter().map(|p| p.ln()).collect(),
            has_prob: vec![true; 3],
            alive: vec![true; 3],
            single: vec![0, 1],
        };
        let mut arcs = Vec::new();
        for _ in 0..3000 {
            arcs.extend([0u32, 2, 1]); // at an a: a, then ab; at a b: b
        }
        let n = 6000;
        let mut s = EmBuffers::default();
        let packed: Vec<(f64, u32)> =
            table.lp.iter().zip(&table.len).map(|(&lp, &len)| (lp, len)).collect();
        let log_z = forward_backward(&arcs, n, &packed, &mut s).expect("a spelling");
        assert!((log_z - 3000.0 * 0.49f64.ln()).abs() < 1e-6, "log Z = {log_z}");
        let (alpha, beta, starts, ends) =
            (s.alpha.clone(), s.beta.clone(), s.starts.clone(), s.ends.clone());
        let with_len: Vec<(f64, u32)> =
            q.iter().zip(&table.len).map(|(&p, &len)| (p, len)).collect();
        let z = forward_backward_linear(&arcs, n, &with_len, &mut s).expect("a spelling");
        assert!((0.5..1.0).contains(&z));
        assert_eq!((&s.starts, &s.ends), (&starts, &ends));
        let mut worst = 0.0f64;
        for (x, &p) in arcs.iter().enumerate() {
            let (i, j) = (starts[x] as usize, ends[x] as usize);
            let by_logs = (((alpha[i] + table.lp[p as usize]) + beta[j]) - log_z).exp();
            let linear =
                ldexp(((s.alpha[i] * q[p as usize]) * s.beta[j]) / z, s.exps[i] - s.exps[j]);
            assert!(linear > 0.0 && linear <= 1.0 + 1e-12, "arc {x}: {linear}");
            worst = worst.max((linear - by_logs).abs() / by_logs);
        }
        // the log-space sums lose about |log Z| ulps of relative precision; the linear ones none
        assert!(worst < 1e-9, "largest relative difference {worst:e}");
        // and the two give the same log Z: ln a[n] + E[n] ln 2
        let from_linear = z.ln() + s.exps[n] as f64 * std::f64::consts::LN_2;
        assert!((from_linear - log_z).abs() < 1e-9 * log_z.abs(), "{from_linear} against {log_z}");
    }
}
