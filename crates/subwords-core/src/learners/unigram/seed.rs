//! The Unigram seed (the Unigram page, "seed"): every substring of every run up to the length
//! bound, counted at every position times the run's count, found with one suffix sort and one
//! walk over the sorted suffixes (see the module header of [`super`] for the algorithm). The
//! seed's lattices (every position's arcs) come from the same sorted suffixes ([`seed_arcs`]),
//! not from a trie of the seed.

use rayon::prelude::*;

use super::valid::{self, SymbolClass};
use super::{join, Runs, Table, CHUNK, NONE};
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
pub(super) fn walk(
    runs: &Runs,
    sufs: &[(u32, u32)],
    base: usize,
    max_len: usize,
    ext: Option<&[u32]>,
    mut emit: impl FnMut(u32, u32, u64, bool, u32),
) {
    let longest =
        (0..runs.len()).map(|r| runs.start[r + 1] - runs.start[r]).max().unwrap_or(0) as usize;
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
    let mut prev: Option<(u32, usize)> = None;
    for (k, &(p, r)) in sufs.iter().enumerate() {
        let lim = reach(runs, p, r, max_len, ext);
        let c = runs.count[r as usize];
        let cur = &runs.syms[p as usize..p as usize + lim];
        let l = prev
            .map_or(0, |(pp, pl)| common_prefix(&runs.syms[pp as usize..pp as usize + pl], cur));
        if let Some((_, pl)) = prev {
            for len in (l + 1).max(2)..=pl {
                emit(
                    first[len],
                    len as u32,
                    acc[len],
                    branching(&acc, &from, len),
                    (base + from[len] - 1) as u32,
                );
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
            emit(
                first[len],
                len as u32,
                acc[len],
                branching(&acc, &from, len),
                (base + from[len] - 1) as u32,
            );
        }
    }
}

/// Seed scores below this are counted in an array, the rest in a hash map (most candidate
/// substrings occur only a few times, so most scores are small).
const SMALL_SCORES: usize = 1 << 12;

/// A candidate piece under its sort key.
type Keyed = (Vec<u8>, (u32, u32, u64, u32));

/// How many symbols of the suffix at `p` (in run `r`) the seed reads: to the run's end, at most
/// `max_len`, and with `split_by_script` (`ext`, the longest valid piece at each position) at
/// most one past the longest valid piece there. A longer substring has an invalid prefix, so it
/// is never a piece (validity depends only on a substring's symbols, and is prefix-closed); the
/// one symbol past tells whether the longest valid ones are right-branching. On code this cuts
/// the suffix sort's keys, and the walks, to a few symbols at every bracket and operator.
#[inline]
fn reach(runs: &Runs, p: u32, r: u32, max_len: usize, ext: Option<&[u32]>) -> usize {
    let lim = ((runs.start[r as usize + 1] - p) as usize).min(max_len);
    match ext {
        Some(e) => lim.min(e[p as usize] as usize + 1),
        None => lim,
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
///
/// `classes` (`split_by_script`, by the runs' symbol numbers): only the substrings
/// sentencepiece's script rule allows are candidates (the `valid` module).
pub(super) fn seed(
    mut runs: Runs,
    texts: &[Vec<u8>],
    strip_right: &[u8],
    max_len: usize,
    seed_size: Option<usize>,
    sentencepiece: bool,
    classes: Option<&[SymbolClass]>,
) -> (Table, Runs, Vec<super::ChunkArcs>) {
    // `split_by_script`: the longest valid piece at each position (the `valid` module)
    let ext: Option<Vec<u32>> = classes.map(|c| valid::extents(&runs, c, max_len));
    let ext = ext.as_deref();
    // a substring's seed score, or None when it is not a candidate
    let score = move |p: u32, l: u32, c: u64, branching: bool| -> Option<u64> {
        if ext.is_some_and(|e| l > e[p as usize]) {
            None
        } else if !sentencepiece {
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
    // suffixes with at least two symbols, sorted by the symbols the seed reads of each
    // ([`reach`]); sorted as (position, symbols read), so that a comparison reads only the
    // symbols, and each suffix's run found again after
    let mut sufs: Vec<(u32, u32)> = Vec::new();
    for r in 0..runs.len() {
        for p in runs.start[r]..runs.start[r + 1].saturating_sub(1) {
            sufs.push((p, reach(&runs, p, r as u32, max_len, ext) as u32));
        }
    }
    {
        let syms = &runs.syms;
        sufs.par_sort_unstable_by(|&(p, l), &(q, m)| {
            syms[p as usize..(p + l) as usize].cmp(&syms[q as usize..(q + m) as usize])
        });
        let start = &runs.start;
        sufs.par_iter_mut().for_each(|x| x.1 = (start.partition_point(|&s| s <= x.0) - 1) as u32);
    }
    let cap_multi = seed_size.map(|s| s - a);
    // (a position, length, score, the first sorted suffix it begins)
    let mut kept: Vec<(u32, u32, u64, u32)> = Vec::new();
    let mut buf = Vec::new();
    let parts = parts(&runs, &sufs);
    // every distinct substring, in no particular order (the table is sorted by text below)
    let all = |keep: &(dyn Fn(u64) -> bool + Sync)| -> Vec<(u32, u32, u64, u32)> {
        let lists: Vec<Vec<(u32, u32, u64, u32)>> = parts
            .par_iter()
            .map(|r| {
                let mut v = Vec::new();
                walk(&runs, &sufs[r.clone()], r.start, max_len, ext, |p, l, c, b, k0| {
                    if let Some(c) = score(p, l, c, b) {
                        if keep(c) {
                            v.push((p, l, c, k0))
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
            // the histogram of scores: small scores (most of them) in an array, the rest hashed
            let hists: Vec<(Vec<u64>, Map<u64, u64>)> = parts
                .par_iter()
                .map(|r| {
                    let mut small = vec![0u64; SMALL_SCORES];
                    let mut h: Map<u64, u64> = Map::default();
                    walk(&runs, &sufs[r.clone()], r.start, max_len, ext, |p, l, c, b, _| {
                        if let Some(c) = score(p, l, c, b) {
                            match small.get_mut(c as usize) {
                                Some(k) => *k += 1,
                                None => *h.entry(c).or_insert(0) += 1,
                            }
                        }
                    });
                    (small, h)
                })
                .collect();
            let mut hist: Map<u64, u64> = Map::default();
            let mut small = vec![0u64; SMALL_SCORES];
            for (s, h) in hists {
                for (c, k) in s.into_iter().enumerate() {
                    small[c] += k;
                }
                for (c, k) in h {
                    *hist.entry(c).or_insert(0) += k;
                }
            }
            for (c, k) in small.into_iter().enumerate() {
                if k > 0 {
                    hist.insert(c as u64, k);
                }
            }
            let n_multi: u64 = hist.values().sum();
            if n_multi as usize <= cap {
                kept = all(&|_| true);
            } else if cap > 0 {
                let mut values: Vec<(u64, u64)> = hist.into_iter().collect();
                values.sort_unstable_by_key(|x| std::cmp::Reverse(x.0));
                let (mut above, mut thr) = (0usize, 0u64);
                for &(c, k) in &values {
                    if above + k as usize >= cap {
                        thr = c;
                        break;
                    }
                    above += k as usize;
                }
                let found = all(&|c| c >= thr);
                let mut ties: Vec<Keyed> = Vec::new();
                for t in found {
                    if t.2 > thr {
                        kept.push(t);
                    } else {
                        join(
                            texts,
                            &runs.syms[t.0 as usize..(t.0 + t.1) as usize],
                            strip_right,
                            &mut buf,
                        );
                        ties.push((buf.clone(), t));
                    }
                }
                ties.par_sort_unstable_by(|x, y| x.0.cmp(&y.0));
                kept.extend(ties.into_iter().take(cap - above).map(|x| x.1));
            }
        }
    }
    // the alphabet's stretch
    let alpha_at = runs.syms.len() as u32;
    runs.syms.extend(0..a as u32);
    // all pieces in text order
    let mut pieces: Vec<(u32, u32, u64, u32)> =
        (0..a as u32).map(|r| (alpha_at + r, 1, single_count[r as usize], NONE)).collect();
    pieces.extend(kept);
    let syms = &runs.syms;
    let mut keyed: Vec<Keyed> = pieces
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
    // the pieces of two or more symbols by (length, first sorted suffix): where the arcs are
    let mut by_stretch: Vec<(u32, u32, u32)> = Vec::with_capacity(n - a);
    for (id, (_, (at, len, c, k0))) in keyed.into_iter().enumerate() {
        if len == 1 {
            t.single[runs.syms[at as usize] as usize] = id as u32;
        } else {
            by_stretch.push((len, k0, id as u32));
        }
        t.at.push(at);
        t.len.push(len);
        t.lp.push(if c > 0 { (c as f64 / total).ln() } else { NEG_INF });
        t.has_prob.push(c > 0);
    }
    by_stretch.par_sort_unstable();
    let arcs = seed_arcs(&runs, &sufs, &parts, max_len, ext, &t, &by_stretch);
    (t, runs, arcs)
}

/// The seed's lattices, every run's arcs in arc order (see [`super::ChunkArcs`]), found from the
/// sorted suffixes instead of a trie (a trie of a million pieces of up to 16 symbols has
/// millions of nodes: 150 MB on 10 MB of code, the training's peak). The pieces starting at a
/// position are the kept substrings that begin its suffix; the suffix lies in one stretch per
/// length `L` (the suffixes sharing its first `L` symbols), and a kept piece of length `L` is
/// known by the first suffix of its stretch (`by_stretch`, sorted by length, then that suffix).
/// One walk per part, with one cursor per length, finds them in order; a position's arcs are
/// its single symbol, then its pieces by length. A walk counts them per position, the chunks
/// are laid out, a second walk files them.
fn seed_arcs(
    runs: &Runs,
    sufs: &[(u32, u32)],
    parts: &[std::ops::Range<usize>],
    max_len: usize,
    ext: Option<&[u32]>,
    t: &Table,
    by_stretch: &[(u32, u32, u32)],
) -> Vec<super::ChunkArcs> {
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    let positions = runs.start[runs.len()] as usize;
    let longest =
        (0..runs.len()).map(|r| runs.start[r + 1] - runs.start[r]).max().unwrap_or(0) as usize;
    let top = longest.min(max_len);
    // where each length's pieces begin in `by_stretch`
    let len_at: Vec<usize> =
        (0..=top + 1).map(|l| by_stretch.partition_point(|x| (x.0 as usize) < l)).collect();
    // per part, the pieces met in suffix order: f(position, run, piece)
    let visit = |part: &std::ops::Range<usize>, f: &mut dyn FnMut(u32, u32, u32)| {
        let mut cursor: Vec<usize> = (0..=top)
            .map(|l| {
                if l < 2 {
                    0
                } else {
                    len_at[l]
                        + by_stretch[len_at[l]..len_at[l + 1]]
                            .partition_point(|x| (x.1 as usize) < part.start)
                }
            })
            .collect();
        // per length, the kept piece of the current stretch (NONE: none is kept)
        let mut piece = vec![NONE; top + 1];
        let mut prev: Option<(u32, usize)> = None;
        for k in part.clone() {
            let (p, r) = sufs[k];
            let lim = reach(runs, p, r, max_len, ext);
            let cur = &runs.syms[p as usize..p as usize + lim];
            let l = prev.map_or(0, |(pp, pl)| {
                common_prefix(&runs.syms[pp as usize..pp as usize + pl], cur)
            });
            // a stretch that goes on keeps its piece; one that starts here looks it up
            for len in (l + 1).max(2)..=lim {
                let end = len_at[len + 1];
                let c = &mut cursor[len];
                while *c < end && (by_stretch[*c].1 as usize) < k {
                    *c += 1;
                }
                piece[len] = if *c < end && by_stretch[*c].1 as usize == k {
                    by_stretch[*c].2
                } else {
                    NONE
                };
            }
            for &x in &piece[2.min(lim + 1)..=lim] {
                if x != NONE {
                    f(p, r, x);
                }
            }
            prev = Some((p, lim));
        }
    };
    // 1. arcs per position (its single symbol, then its pieces)
    let count: Vec<AtomicU32> = (0..positions).map(|_| AtomicU32::new(1)).collect();
    parts.par_iter().for_each(|part| {
        visit(part, &mut |p, _, _| {
            count[p as usize].fetch_add(1, Relaxed);
        })
    });
    // 2. the chunks, each position's count turned into its first slot in its chunk
    let ranges: Vec<std::ops::Range<usize>> =
        (0..runs.len()).step_by(CHUNK).map(|s| s..(s + CHUNK).min(runs.len())).collect();
    let mut chunks: Vec<(std::ops::Range<usize>, Vec<AtomicU32>, Vec<u32>)> = ranges
        .into_par_iter()
        .map(|range| {
            let mut off = vec![0u32];
            let mut total = 0u32;
            let mut singles = Vec::new();
            for r in range.clone() {
                for p in runs.start[r]..runs.start[r + 1] {
                    let c = count[p as usize].load(Relaxed);
                    count[p as usize].store(total, Relaxed);
                    singles.push((total, t.single[runs.syms[p as usize] as usize]));
                    total += c;
                }
                off.push(total);
            }
            let arcs: Vec<AtomicU32> = (0..total).map(|_| AtomicU32::new(0)).collect();
            for (at, s) in singles {
                arcs[at as usize].store(s, Relaxed);
            }
            (range, arcs, off)
        })
        .collect();
    // 3. each position's pieces after its single symbol, by length
    {
        let chunks = &chunks;
        parts.par_iter().for_each(|part| {
            let mut last = u32::MAX;
            let mut next = 0u32;
            visit(part, &mut |p, r, piece| {
                if p != last {
                    last = p;
                    next = count[p as usize].load(Relaxed) + 1;
                }
                chunks[r as usize / CHUNK].1[next as usize].store(piece, Relaxed);
                next += 1;
            })
        });
    }
    chunks
        .drain(..)
        .map(|(runs, arcs, off)| super::ChunkArcs {
            runs,
            arcs: arcs.into_iter().map(AtomicU32::into_inner).collect(),
            off,
        })
        .collect()
}

/// How many symbols `a` and `b` share at their start.
#[inline]
fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    let m = a.len().min(b.len());
    (0..m).find(|&k| a[k] != b[k]).unwrap_or(m)
}
