//! The Unigram EM round and the final likelihood pass (see [`super`] for the order of the
//! floating-point folds, which the Python reference repeats bit for bit).

use rayon::prelude::*;

use super::{Runs, Scratch, Stored, Table, BATCH_CHUNKS};
use crate::segmenters::unigram::lattice::{logaddexp, NEG_INF};

/// One EM round, in place.
pub(super) fn em_round(runs: &Runs, table: &mut Table, stored: &Stored) {
    let np = table.at.len();
    let mut expected = vec![NEG_INF; np];
    let threads = rayon::current_num_threads().max(1);
    let per = np.div_ceil(threads).max(1);
    for batch in stored.chunks.chunks(BATCH_CHUNKS) {
        let terms: Vec<Vec<(u32, f64)>> = batch
            .par_iter()
            .map_init(Scratch::default, |s, chunk| {
                let mut out = Vec::with_capacity(chunk.arcs.len());
                for (k, r) in chunk.runs.clone().enumerate() {
                    Stored::lattice(chunk, k, runs.run(r).len(), table, &mut s.lattice);
                    s.lattice.forward(1.0, &mut s.alpha);
                    s.lattice.backward(&mut s.beta);
                    let n = s.lattice.len();
                    let log_z = s.alpha[n];
                    let log_c = (runs.count[r] as f64).ln();
                    for arc in s.lattice.arcs() {
                        let post = ((s.alpha[arc.start as usize] + arc.log_prob) + s.beta[arc.end as usize]) - log_z;
                        out.push((arc.piece, log_c + post));
                    }
                }
                out
            })
            .collect();
        // each worker folds the terms of its own pieces, in run order
        expected.par_chunks_mut(per).enumerate().for_each(|(k, slot)| {
            let lo = (k * per) as u32;
            let hi = lo + slot.len() as u32;
            for chunk in &terms {
                for &(p, t) in chunk {
                    if p >= lo && p < hi {
                        let e = &mut slot[(p - lo) as usize];
                        *e = logaddexp(*e, t);
                    }
                }
            }
        });
    }
    let mut s = NEG_INF;
    for p in 0..np {
        if table.alive[p] && table.has_prob[p] {
            s = logaddexp(s, expected[p]);
        }
    }
    for p in 0..np {
        if table.alive[p] && table.has_prob[p] {
            table.lp[p] = expected[p] - s;
        }
    }
}


/// Log-likelihood (Σ in run order of `c · log P(run)`) and the runs' Viterbi piece count.
pub(super) fn final_pass(runs: &Runs, table: &Table, stored: &Stored) -> (f64, u64) {
    let mut ll = 0.0f64;
    let mut pieces = 0u64;
    for batch in stored.chunks.chunks(BATCH_CHUNKS) {
        let parts: Vec<(Vec<f64>, u64)> = batch
            .par_iter()
            .map_init(Scratch::default, |s, chunk| {
                let mut z = Vec::with_capacity(chunk.runs.len());
                let mut pieces = 0u64;
                for (k, r) in chunk.runs.clone().enumerate() {
                    Stored::lattice(chunk, k, runs.run(r).len(), table, &mut s.lattice);
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
