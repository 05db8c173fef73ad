//! The Unigram seed (the Unigram page, "seed"): every substring of every run up to the length
//! bound, counted at every position times the run's count, found with one suffix sort and one
//! walk over the sorted suffixes (see the module header of [`super`] for the algorithm).

use rayon::prelude::*;

use super::{join, Runs, Table, NONE};
use crate::hash::Map;
use crate::segmenters::unigram::lattice::NEG_INF;

/// Walks the sorted suffixes and emits every distinct substring of 2..=max_len symbols once:
/// `(a position where it occurs, length, weighted count, right-branching)`. A substring is
/// *right-branching* when its occurrences have two or more different followers, a run's end
/// being one follower (sentencepiece's word boundary); one that only ever ends its run is when
/// its count is at least 2 (sentencepiece's running text has it followed by the next word's
/// mark and by the line's end); a substring of `max_len` symbols always is. In the walk: no occurrence continues when no suffix of the stretch restarted the
/// accumulator of length `L + 1`; one symbol follows them all when the stretch of `L + 1`
/// started at the same suffix and adds up to the same count.
pub(super) fn walk(runs: &Runs, sufs: &[(u32, u32)], max_len: usize, mut emit: impl FnMut(u32, u32, u64, bool)) {
    let longest = (0..runs.len()).map(|r| runs.start[r + 1] - runs.start[r]).max().unwrap_or(0) as usize;
    let top = longest.min(max_len);
    let mut acc = vec![0u64; top + 1];
    let mut first = vec![0u32; top + 1];
    // 1 + the index into `sufs` where each length's accumulator last restarted (0: never)
    let mut from = vec![0usize; top + 2];
    let branching = |acc: &[u64], from: &[usize], len: usize| -> bool {
        if len >= top {
            // at the length bound: kept; else a longest run whole, only its end follows it
            return top == max_len || acc[len] >= 2;
        }
        if from[len + 1] < from[len] {
            return acc[len] >= 2; // every occurrence ends its run
        }
        !(from[len + 1] == from[len] && acc[len + 1] == acc[len])
    };
    let lim_of = |p: u32, r: u32| -> usize { ((runs.start[r as usize + 1] - p) as usize).min(max_len) };
    let mut prev: Option<(u32, usize)> = None;
    for (k, &(p, r)) in sufs.iter().enumerate() {
        let lim = lim_of(p, r);
        let c = runs.count[r as usize];
        let cur = &runs.syms[p as usize..p as usize + lim];
        let l = match prev {
            Some((pp, pl)) => {
                let before = &runs.syms[pp as usize..pp as usize + pl];
                let m = pl.min(lim);
                (0..m).find(|&k| before[k] != cur[k]).unwrap_or(m)
            }
            None => 0,
        };
        if let Some((_, pl)) = prev {
            for len in (l + 1).max(2)..=pl {
                emit(first[len], len as u32, acc[len], branching(&acc, &from, len));
            }
        }
        for len in (l + 1).max(2)..=lim {
            acc[len] = 0;
            first[len] = p;
            from[len] = k + 1;
        }
        if lim >= 2 {
            for x in &mut acc[2..=lim] {
                *x += c;
            }
        }
        prev = Some((p, lim));
    }
    if let Some((_, pl)) = prev {
        for len in 2..=pl {
            emit(first[len], len as u32, acc[len], branching(&acc, &from, len));
        }
    }
}

/// Cuts the sorted suffixes into about eight stretches per thread, each cut where the first
/// two symbols change, so that no substring of two or more symbols spans two stretches and each
/// can be walked on its own.
pub(super) fn parts(runs: &Runs, sufs: &[(u32, u32)]) -> Vec<std::ops::Range<usize>> {
    let n = sufs.len();
    let want = 8 * rayon::current_num_threads().max(1);
    let head = |k: usize| -> [u32; 2] {
        let p = sufs[k].0 as usize;
        [runs.syms[p], runs.syms[p + 1]]
    };
    let mut out = Vec::new();
    let mut from = 0;
    for q in 1..want {
        let mut cut = (n * q / want).max(from);
        while cut > 0 && cut < n && head(cut) == head(cut - 1) {
            cut += 1;
        }
        if cut > from && cut < n {
            out.push(from..cut);
            from = cut;
        }
    }
    if from < n {
        out.push(from..n);
    }
    out
}

/// The seed table. Returns it with the runs, the alphabet appended to `syms` (so every single
/// symbol has a stretch to point at).
///
/// `sentencepiece` (`em="sentencepiece"`): sentencepiece's seed (`MakeSeedSentencePieces`):
/// only right-branching substrings (the internal nodes of its suffix tree), each scored by
/// weighted count × length in symbols; single symbols by their count; the cap keeps the
/// highest scores (ties by text) and `lp = ln(score / Σ score)`.
pub(super) fn seed(
    mut runs: Runs,
    texts: &[Vec<u8>],
    strip_right: &[u8],
    max_len: usize,
    seed_size: Option<usize>,
    sentencepiece: bool,
) -> (Table, Runs) {
    // a substring's seed score, or None when it is not a candidate
    let score = move |l: u32, c: u64, branching: bool| -> Option<u64> {
        if !sentencepiece {
            Some(c)
        } else if branching {
            Some(c * l as u64)
        } else {
            None
        }
    };
    let a = texts.len();
    let mut single_count = vec![0u64; a];
    for r in 0..runs.len() {
        let c = runs.count[r];
        for &s in runs.run(r) {
            single_count[s as usize] += c;
        }
    }
    // suffixes with at least two symbols, sorted by their symbols (cut at run end and max_len)
    let mut sufs: Vec<(u32, u32)> = Vec::new();
    for r in 0..runs.len() {
        for p in runs.start[r]..runs.start[r + 1].saturating_sub(1) {
            sufs.push((p, r as u32));
        }
    }
    {
        let syms = &runs.syms;
        let start = &runs.start;
        let key = |&(p, r): &(u32, u32)| -> &[u32] {
            let end = (start[r as usize + 1] as usize).min((p as usize).saturating_add(max_len));
            &syms[p as usize..end]
        };
        sufs.par_sort_unstable_by(|x, y| key(x).cmp(key(y)));
    }
    let cap_multi = seed_size.map(|s| s - a);
    let mut kept: Vec<(u32, u32, u64)> = Vec::new();
    let mut buf = Vec::new();
    let parts = parts(&runs, &sufs);
    // every distinct substring, in no particular order (the table is sorted by text below)
    let all = |keep: &(dyn Fn(u64) -> bool + Sync)| -> Vec<(u32, u32, u64)> {
        let lists: Vec<Vec<(u32, u32, u64)>> = parts
            .par_iter()
            .map(|r| {
                let mut v = Vec::new();
                walk(&runs, &sufs[r.clone()], max_len, |p, l, c, b| {
                    if let Some(c) = score(l, c, b) {
                        if keep(c) {
                            v.push((p, l, c))
                        }
                    }
                });
                v
            })
            .collect();
        lists.concat()
    };
    match cap_multi {
        None => kept = all(&|_| true),
        Some(cap) => {
            let hists: Vec<Map<u64, u64>> = parts
                .par_iter()
                .map(|r| {
                    let mut h: Map<u64, u64> = Map::default();
                    walk(&runs, &sufs[r.clone()], max_len, |_, l, c, b| {
                        if let Some(c) = score(l, c, b) {
                            *h.entry(c).or_insert(0) += 1
                        }
                    });
                    h
                })
                .collect();
            let mut hist: Map<u64, u64> = Map::default();
            for h in hists {
                for (c, k) in h {
                    *hist.entry(c).or_insert(0) += k;
                }
            }
            let n_multi: u64 = hist.values().sum();
            if n_multi as usize <= cap {
                kept = all(&|_| true);
            } else if cap > 0 {
                let mut values: Vec<(u64, u64)> = hist.into_iter().collect();
                values.sort_unstable_by(|x, y| y.0.cmp(&x.0));
                let (mut above, mut thr) = (0usize, 0u64);
                for &(c, k) in &values {
                    if above + k as usize >= cap {
                        thr = c;
                        break;
                    }
                    above += k as usize;
                }
                let found = all(&|c| c >= thr);
                let mut ties: Vec<(Vec<u8>, (u32, u32, u64))> = Vec::new();
                for t in found {
                    if t.2 > thr {
                        kept.push(t);
                    } else {
                        join(texts, &runs.syms[t.0 as usize..(t.0 + t.1) as usize], strip_right, &mut buf);
                        ties.push((buf.clone(), t));
                    }
                }
                ties.par_sort_unstable_by(|x, y| x.0.cmp(&y.0));
                kept.extend(ties.into_iter().take(cap - above).map(|x| x.1));
            }
        }
    }
    drop(sufs);
    // the alphabet's stretch
    let alpha_at = runs.syms.len() as u32;
    runs.syms.extend(0..a as u32);
    // all pieces in text order
    let mut pieces: Vec<(u32, u32, u64)> = (0..a as u32).map(|r| (alpha_at + r, 1, single_count[r as usize])).collect();
    pieces.extend(kept);
    let syms = &runs.syms;
    let mut keyed: Vec<(Vec<u8>, (u32, u32, u64))> = pieces
        .into_par_iter()
        .map_init(Vec::new, |buf, t| {
            join(texts, &syms[t.0 as usize..(t.0 + t.1) as usize], strip_right, buf);
            (buf.clone(), t)
        })
        .collect();
    keyed.par_sort_unstable_by(|x, y| x.0.cmp(&y.0));
    let total: u128 = keyed.iter().map(|x| x.1 .2 as u128).sum();
    let total = total as f64;
    let n = keyed.len();
    let mut t = Table {
        at: Vec::with_capacity(n),
        len: Vec::with_capacity(n),
        lp: Vec::with_capacity(n),
        has_prob: Vec::with_capacity(n),
        alive: vec![true; n],
        single: vec![NONE; a],
    };
    for (id, (_, (at, len, c))) in keyed.into_iter().enumerate() {
        if len == 1 {
            t.single[runs.syms[at as usize] as usize] = id as u32;
        }
        t.at.push(at);
        t.len.push(len);
        t.lp.push(if c > 0 { (c as f64 / total).ln() } else { NEG_INF });
        t.has_prob.push(c > 0);
    }
    (t, runs)
}
