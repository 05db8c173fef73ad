//! Unigram pruning: each piece's loss (what the corpus's best spellings lose without it) and
//! the round that keeps `max(target, floor(shrink · size))` pieces; for `em="sentencepiece"`,
//! sentencepiece's criterion ([`sp_losses`], [`sp_prune`]) and its final pick ([`final_pick`]).

use rayon::prelude::*;

use super::{EmBuffers, Runs, Stored, Table, BATCH_CHUNKS, NONE};
use crate::segmenters::unigram::lattice::{fixed, fixed_add, ViterbiScratch, NEG_INF};

/// A piece as the loss pass reads it: its exact Viterbi key ([`fixed`] of its
/// log-probability), its log-probability and its length, one slot per arc.
type Keyed = (i128, f64, u32);

/// The Viterbi of one run on its stored arcs (the arcs' starts and ends in `s.starts`,
/// `s.ends`): per position, the best spelling of the rest by exact key, then fewer pieces, then
/// the longer first arc ([`crate::segmenters::unigram::lattice::Lattice::viterbi_with`]'s
/// rule, whose winner is unique, so the same spelling and the same double), for positions
/// `top - 1` down to 0, skipping the arcs of `skip`; `v` already holds positions `top..=n`.
/// `groups[i]` is where position `i`'s arcs begin (every position has its single symbol).
#[inline]
fn viterbi_down(
    arcs: &[u32],
    q: &[Keyed],
    s: &EmBuffers,
    top: usize,
    skip: u32,
    v: &mut ViterbiScratch,
) {
    for i in (0..top).rev() {
        let (mut bk, mut bs, mut bc, mut ba, mut bl) = (i128::MIN, NEG_INF, NONE, NONE, 0u32);
        for x in s.head[i] as usize..s.head[i + 1] as usize {
            let p = arcs[x];
            let j = s.ends[x] as usize;
            if v.count[j] == NONE || p == skip {
                continue;
            }
            let (k, lp, len) = q[p as usize];
            let key = fixed_add(k, v.key[j]);
            let cnt = v.count[j] + 1;
            let better =
                bc == NONE || key > bk || (key == bk && (cnt < bc || (cnt == bc && len > bl)));
            if better {
                (bk, bs, bc, ba, bl) = (key, lp + v.score[j], cnt, x as u32, len);
            }
        }
        v.key[i] = bk;
        v.score[i] = bs;
        v.count[i] = bc;
        v.arc[i] = ba;
    }
}

/// Each live piece's pruning loss (0.0 for single symbols and unused pieces). Per run: its
/// Viterbi spelling, then for each piece of two or more symbols that spelling uses, the best
/// spelling without that piece, recomputed only below the piece's last arc (the positions
/// after it keep their best spelling, which cannot hold it). On the stored arcs, each piece's
/// key computed once a round: no lattice is built and no key is converted per arc.
pub(super) fn losses(runs: &Runs, table: &Table, stored: &Stored) -> Vec<f64> {
    let mut loss = vec![0.0f64; table.at.len()];
    let q: Vec<Keyed> = table
        .lp
        .par_iter()
        .zip(table.len.par_iter())
        .map(|(&lp, &len)| (fixed(lp), lp, len))
        .collect();
    for batch in stored.chunks.chunks(BATCH_CHUNKS) {
        let terms: Vec<Vec<(u32, f64)>> = batch
            .par_iter()
            .map_init(EmBuffers::default, |s, chunk| {
                let mut out = Vec::new();
                let mut used: Vec<u32> = Vec::new();
                for (k, r) in chunk.runs.clone().enumerate() {
                    let arcs = &chunk.arcs[chunk.off[k] as usize..chunk.off[k + 1] as usize];
                    let n = runs.run(r).len();
                    // each arc's start and end; each position's first arc
                    s.starts.clear();
                    s.ends.clear();
                    s.head.clear();
                    let mut i = u32::MAX;
                    for (x, &p) in arcs.iter().enumerate() {
                        let len = q[p as usize].2;
                        if len == 1 {
                            i = i.wrapping_add(1);
                            s.head.push(x as u32);
                        }
                        s.starts.push(i);
                        s.ends.push(i + len);
                    }
                    s.head.push(arcs.len() as u32);
                    debug_assert_eq!(s.head.len(), n + 1);
                    let mut v = std::mem::take(&mut s.viterbi);
                    v.reset(n);
                    v.score[n] = 0.0;
                    v.count[n] = 0;
                    v.key[n] = 0;
                    viterbi_down(arcs, &q, s, n, NONE, &mut v);
                    if v.count[0] == NONE {
                        s.viterbi = v;
                        continue;
                    }
                    let with = v.score[0];
                    let c = runs.count[r] as f64;
                    used.clear();
                    let mut i = 0usize;
                    while i < n {
                        let x = v.arc[i] as usize;
                        i = s.ends[x] as usize;
                        let p = arcs[x];
                        if q[p as usize].2 < 2 || used.contains(&p) {
                            continue;
                        }
                        used.push(p);
                        // the positions after the piece's last arc keep their best spelling
                        let last = arcs.iter().rposition(|&a| a == p).expect("an arc of it");
                        let top = s.starts[last] as usize + 1;
                        let mut w = std::mem::take(&mut s.without);
                        w.reset(n);
                        w.score[top..].copy_from_slice(&v.score[top..]);
                        w.count[top..].copy_from_slice(&v.count[top..]);
                        w.key[top..].copy_from_slice(&v.key[top..]);
                        w.arc[top..].copy_from_slice(&v.arc[top..]);
                        viterbi_down(arcs, &q, s, top, p, &mut w);
                        let without = if w.count[0] == NONE { NEG_INF } else { w.score[0] };
                        s.without = w;
                        if without != with {
                            out.push((p, c * (with - without)));
                        }
                    }
                    s.viterbi = v;
                }
                out
            })
            .collect();
        for chunk in terms {
            for (p, t) in chunk {
                loss[p as usize] += t;
            }
        }
    }
    loss
}

/// One pruning round; returns the new size.
pub(super) fn prune(
    table: &mut Table,
    loss: &[f64],
    size: usize,
    target: usize,
    shrink: f64,
) -> usize {
    let keep = target.max((shrink * size as f64).floor() as usize);
    let mut ranked: Vec<u32> = (0..table.at.len() as u32)
        .filter(|&p| table.alive[p as usize] && table.len[p as usize] >= 2)
        .collect();
    ranked
        .sort_by(|&x, &y| loss[y as usize].partial_cmp(&loss[x as usize]).unwrap().then(x.cmp(&y)));
    let singles = size - ranked.len();
    let from = keep.saturating_sub(singles).min(ranked.len());
    for &p in &ranked[from..] {
        table.alive[p as usize] = false;
    }
    size - (ranked.len() - from)
}

/// What `em="sentencepiece"` pruning found: every live piece's loss (0.0 where it has none) and
/// the pieces it drops whatever the size (no best spelling uses them, or their own best
/// spelling is split).
pub(super) struct SpLosses {
    pub loss: Vec<f64>,
    pub drop: Vec<bool>,
}

/// sentencepiece's pruning criterion (`PruneSentencePieces` in its `unigram_model_trainer.cc`),
/// on the current table:
/// * each piece of two or more symbols is spelled on its own: if its best spelling is not the
///   piece itself it is dropped; otherwise its best spelling without it is its *replacement*;
/// * every run's Viterbi spelling gives each piece a frequency `f` (the run's count per use;
///   integers, so the sums are exact) and `F = Σ f`; a piece with `f = 0` is dropped;
/// * the others' loss is `f_p · ((ln f_p - ln F) - Σ_{n in replacement} (ln(f_n + f_p) -
///   ln(F + f_p · (k - 1))))`, `k` the replacement's length, the sum folded from 0.0 in the
///   replacement's order: what the corpus's unigram likelihood loses if every use of `p` were
///   spelled with its replacement. (sentencepiece also divides by the runs' total count, a
///   constant that does not change the order.)
pub(super) fn sp_losses(runs: &Runs, table: &Table, stored: &Stored) -> SpLosses {
    let np = table.at.len();
    // 1. Viterbi frequencies over the runs
    let mut freq = vec![0u64; np];
    let q = table.packed();
    for batch in stored.chunks.chunks(BATCH_CHUNKS) {
        let parts: Vec<Vec<(u32, u64)>> = batch
            .par_iter()
            .map_init(EmBuffers::default, |s, chunk| {
                let mut out = Vec::new();
                for (k, r) in chunk.runs.clone().enumerate() {
                    Stored::lattice(chunk, k, runs.run(r).len(), &q, &mut s.lattice);
                    if !s.lattice.viterbi_with(&mut s.viterbi) {
                        continue;
                    }
                    let mut i = 0usize;
                    while i < s.lattice.len() {
                        let a = s.lattice.arcs()[s.viterbi.arc[i] as usize];
                        out.push((a.piece, runs.count[r]));
                        i = a.end as usize;
                    }
                }
                out
            })
            .collect();
        for part in parts {
            for (p, c) in part {
                freq[p as usize] += c;
            }
        }
    }
    let total: u64 = freq.iter().sum();
    if total == 0 {
        return SpLosses { loss: vec![0.0f64; np], drop: vec![false; np] };
    }
    let log_total = (total as f64).ln();
    // 2. per piece, its replacement (its own best spelling without it) and at once its loss,
    // so no replacement is kept; its lattice is cut from the stored arcs of one occurrence
    let (loss, drop): (Vec<f64>, Vec<bool>) = (0..np)
        .into_par_iter()
        .map_init(
            || (EmBuffers::default(), Vec::new()),
            |(s, alt), p| -> (f64, bool) {
                if !table.alive[p] || table.len[p] < 2 {
                    return (0.0, false);
                }
                // (sentencepiece keeps a piece with no replacement, and one whose own
                // spelling cannot be found: loss infinite, never dropped)
                alt.clear();
                if table.has_prob[p] {
                    stored.piece_lattice(runs, table, p, &mut s.lattice);
                    if s.lattice.viterbi_with(&mut s.viterbi) {
                        let walk = s.viterbi.walk(&s.lattice);
                        if walk.len() != 1 || s.lattice.arcs()[walk[0] as usize].piece != p as u32 {
                            return (0.0, true); // its own best spelling is split
                        }
                        // the best spelling without it, on the same lattice: Viterbi skipping
                        // its arcs (the arcs it picks are those of a lattice built without them)
                        s.lattice.best_score_without_from(
                            p as u32,
                            Some(&s.viterbi),
                            &mut s.without,
                        );
                        if s.without.found() {
                            alt.extend(
                                s.without
                                    .walk(&s.lattice)
                                    .into_iter()
                                    .map(|k| s.lattice.arcs()[k as usize].piece),
                            );
                        }
                    }
                }
                if freq[p] == 0 {
                    return (0.0, true);
                }
                if alt.is_empty() {
                    return (f64::INFINITY, false); // no replacement: kept, as sentencepiece keeps it
                }
                let f = freq[p];
                let log_alt_total = ((total + f * (alt.len() as u64 - 1)) as f64).ln();
                let with = (f as f64).ln() - log_total;
                let mut without = 0.0f64;
                for &n in alt.iter() {
                    without += ((freq[n as usize] + f) as f64).ln() - log_alt_total;
                }
                (f as f64 * (with - without), false)
            },
        )
        .unzip();
    SpLosses { loss, drop }
}

/// One sentencepiece pruning round: drops what [`sp_losses`] drops, then keeps
/// `max(keep_floor, floor(shrink · size))` pieces, every single symbol first, then by loss
/// descending, piece id (text) ascending. Returns the new size.
pub(super) fn sp_prune(
    table: &mut Table,
    sp: &SpLosses,
    size: usize,
    keep_floor: usize,
    shrink: f64,
) -> usize {
    let keep = keep_floor.max((shrink * size as f64).floor() as usize);
    let mut singles = 0usize;
    let mut ranked: Vec<u32> = Vec::new();
    for p in 0..table.at.len() {
        if !table.alive[p] {
            continue;
        }
        if table.len[p] < 2 {
            singles += 1;
        } else if sp.drop[p] {
            table.alive[p] = false;
        } else {
            ranked.push(p as u32);
        }
    }
    let loss = &sp.loss;
    ranked
        .sort_by(|&x, &y| loss[y as usize].partial_cmp(&loss[x as usize]).unwrap().then(x.cmp(&y)));
    let from = keep.saturating_sub(singles).min(ranked.len());
    for &p in &ranked[from..] {
        table.alive[p as usize] = false;
    }
    singles + from
}

/// sentencepiece's final pick (`FinalizeSentencePieces`): keep every single symbol, then the
/// other pieces by log-probability descending, piece id (text) ascending, up to `target`.
pub(super) fn final_pick(table: &mut Table, size: usize, target: usize) -> usize {
    if size <= target {
        return size;
    }
    let mut singles = 0usize;
    let mut ranked: Vec<u32> = Vec::new();
    for p in 0..table.at.len() {
        if table.alive[p] {
            if table.len[p] < 2 {
                singles += 1;
            } else {
                ranked.push(p as u32);
            }
        }
    }
    let lp = &table.lp;
    ranked.sort_by(|&x, &y| lp[y as usize].partial_cmp(&lp[x as usize]).unwrap().then(x.cmp(&y)));
    let from = target.saturating_sub(singles).min(ranked.len());
    for &p in &ranked[from..] {
        table.alive[p as usize] = false;
    }
    singles + from
}
