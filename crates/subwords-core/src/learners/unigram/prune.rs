//! Unigram pruning: each piece's loss (what the corpus's best spellings lose without it) and
//! the round that keeps `max(target, floor(shrink · size))` pieces.

use rayon::prelude::*;

use super::{Runs, Scratch, Stored, Table, BATCH_CHUNKS};

/// Each live piece's pruning loss (0.0 for single symbols and unused pieces).
pub(super) fn losses(runs: &Runs, table: &Table, stored: &Stored) -> Vec<f64> {
    let mut loss = vec![0.0f64; table.at.len()];
    for batch in stored.chunks.chunks(BATCH_CHUNKS) {
        let terms: Vec<Vec<(u32, f64)>> = batch
            .par_iter()
            .map_init(Scratch::default, |s, chunk| {
                let mut out = Vec::new();
                let mut used: Vec<u32> = Vec::new();
                for (k, r) in chunk.runs.clone().enumerate() {
                    Stored::lattice(chunk, k, runs.run(r).len(), table, &mut s.lattice);
                    if !s.lattice.viterbi_with(&mut s.viterbi) {
                        continue;
                    }
                    let with = s.viterbi.score[0];
                    let c = runs.count[r] as f64;
                    used.clear();
                    for k in s.viterbi.walk(&s.lattice) {
                        let arc = s.lattice.arcs()[k as usize];
                        if arc.end - arc.start < 2 || used.contains(&arc.piece) {
                            continue;
                        }
                        used.push(arc.piece);
                        let without = s.lattice.best_score_without_from(arc.piece, Some(&s.viterbi), &mut s.without);
                        if without != with {
                            out.push((arc.piece, c * (with - without)));
                        }
                    }
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
pub(super) fn prune(table: &mut Table, loss: &[f64], size: usize, target: usize, shrink: f64) -> usize {
    let keep = target.max((shrink * size as f64).floor() as usize);
    let mut ranked: Vec<u32> = (0..table.at.len() as u32).filter(|&p| table.alive[p as usize] && table.len[p as usize] >= 2).collect();
    ranked.sort_by(|&x, &y| loss[y as usize].partial_cmp(&loss[x as usize]).unwrap().then(x.cmp(&y)));
    let singles = size - ranked.len();
    let from = keep.saturating_sub(singles).min(ranked.len());
    for &p in &ranked[from..] {
        table.alive[p as usize] = false;
    }
    size - (ranked.len() - from)
}
