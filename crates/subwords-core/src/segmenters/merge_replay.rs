//! Merge replay: the BPE segmenter.
//!
//! Repeatedly apply the earliest-learned merge that applies anywhere in the unit, to every
//! occurrence, left to right without overlap, until none applies (DESIGN §2).
//!
//! Two implementations with one meaning. Short units (the common case: words) use a direct loop
//! over a rank-per-position array, O(n²) with tiny constants. Long units (a megabyte with no
//! whitespace, a cross-word stream) use a doubly linked list and a min-heap of `(rank, position)`,
//! O(n log n): all entries of the lowest rank are taken as one batch, in position order, before
//! any pair the batch created is considered — so a created pair of lower rank (possible when a
//! joined piece already existed) waits, exactly as the definition says.
//!
//! The loaded formats' merge loops keep copies of this scan-short, heap-long shape because their
//! rules differ: `tokenizers` merges one occurrence at a time (a created pair of lower rank goes
//! first), and tiktoken ranks byte concatenations, with no pair table; one function would take the
//! rule and the symbol state as parameters in the innermost loop.
//!
//! BPE-dropout (Provilkov et al.): each candidate is skipped with probability p; skipped
//! candidates return after the next merge that happens, so p = 1 leaves the unit in symbols.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::hash::{pack, Map};
use rand::rngs::SmallRng;
use rand::Rng;

/// `(left, right) -> (rank, result)`, the pair packed as `left << 32 | right`.
pub type MergeMap = Map<u64, (u32, u32)>;

/// Words of at most this many symbols are merged by scanning for the best pair; longer ones by
/// a heap of pairs.
const SCAN_SYMBOLS: usize = 48;

/// Replays merges on `syms` in place; `spans` (if given) are merged alongside.
pub fn replay(
    syms: &mut Vec<u32>,
    mut spans: Option<&mut Vec<(u32, u32)>>,
    merges: &MergeMap,
    dropout: Option<(f64, &mut SmallRng)>,
) {
    if syms.len() < 2 || merges.is_empty() {
        return;
    }
    if dropout.is_none() && syms.len() <= SCAN_SYMBOLS {
        replay_short(syms, spans.as_deref_mut(), merges);
    } else {
        replay_long(syms, spans, merges, dropout);
    }
}

/// Merge replay on the runs between opaque pieces (which stay as they are); returns where the
/// opaque pieces are afterwards.
pub fn replay_around(
    syms: &mut Vec<u32>,
    spans: Option<&mut Vec<(u32, u32)>>,
    opaque: &[usize],
    merges: &MergeMap,
    mut dropout: Option<(f64, &mut SmallRng)>,
) -> Vec<usize> {
    let mut out = Vec::with_capacity(syms.len());
    let mut out_spans = Vec::new();
    let mut kept = Vec::with_capacity(opaque.len());
    let mut k = 0;
    let mut i = 0;
    while i <= syms.len() {
        let end = if k < opaque.len() { opaque[k] } else { syms.len() };
        let mut run = syms[i..end].to_vec();
        let mut run_sp = spans.as_deref().map(|sp| sp[i..end].to_vec());
        let d = dropout.as_mut().map(|(p, r)| (*p, &mut **r));
        replay(&mut run, run_sp.as_mut(), merges, d);
        out.extend_from_slice(&run);
        if let Some(rs) = run_sp {
            out_spans.extend(rs);
        }
        if end < syms.len() {
            kept.push(out.len());
            out.push(syms[end]);
            if let Some(sp) = spans.as_deref() {
                out_spans.push(sp[end]);
            }
        }
        i = end + 1;
        k += 1;
    }
    *syms = out;
    if let Some(sp) = spans {
        *sp = out_spans;
    }
    kept
}

fn replay_short(syms: &mut Vec<u32>, mut spans: Option<&mut Vec<(u32, u32)>>, merges: &MergeMap) {
    let mut ranks: [u32; SCAN_SYMBOLS] = [u32::MAX; SCAN_SYMBOLS];
    let mut n = syms.len();
    for i in 0..n - 1 {
        ranks[i] = merges.get(&pack(syms[i], syms[i + 1])).map_or(u32::MAX, |m| m.0);
    }
    loop {
        let mut best = u32::MAX;
        for &r in &ranks[..n - 1] {
            best = best.min(r);
        }
        if best == u32::MAX {
            break;
        }
        let (a, b) = (syms[0..n]
            .windows(2)
            .zip(&ranks[..n - 1])
            .find(|(_, &r)| r == best)
            .map(|(w, _)| (w[0], w[1])))
        .unwrap();
        let c = merges[&pack(a, b)].1;
        // rewrite in place, left to right without overlap
        let mut w = 0;
        let mut i = 0;
        while i < n {
            if i + 1 < n && syms[i] == a && syms[i + 1] == b {
                syms[w] = c;
                if let Some(sp) = spans.as_deref_mut() {
                    sp[w] = (sp[i].0, sp[i + 1].1);
                }
                i += 2;
            } else {
                syms[w] = syms[i];
                if let Some(sp) = spans.as_deref_mut() {
                    sp[w] = sp[i];
                }
                i += 1;
            }
            w += 1;
        }
        n = w;
        if n < 2 {
            break;
        }
        for i in 0..n - 1 {
            ranks[i] = merges.get(&pack(syms[i], syms[i + 1])).map_or(u32::MAX, |m| m.0);
        }
    }
    syms.truncate(n);
    if let Some(sp) = spans {
        sp.truncate(n);
    }
}

fn replay_long(
    syms: &mut Vec<u32>,
    mut spans: Option<&mut Vec<(u32, u32)>>,
    merges: &MergeMap,
    mut dropout: Option<(f64, &mut SmallRng)>,
) {
    let n = syms.len();
    const NONE: usize = usize::MAX;
    let mut next: Vec<usize> = (1..=n).map(|i| if i == n { NONE } else { i }).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| if i == 0 { NONE } else { i - 1 }).collect();
    let mut alive = vec![true; n];
    // entries: (rank, position, left, right)
    let mut heap: BinaryHeap<Reverse<(u32, usize, u32, u32)>> = BinaryHeap::with_capacity(n);
    for i in 0..n - 1 {
        if let Some(&(r, _)) = merges.get(&pack(syms[i], syms[i + 1])) {
            heap.push(Reverse((r, i, syms[i], syms[i + 1])));
        }
    }
    let mut batch: Vec<(usize, u32, u32)> = Vec::new();
    let mut skipped: Vec<Reverse<(u32, usize, u32, u32)>> = Vec::new();
    let mut touched: Vec<usize> = Vec::new();
    while let Some(Reverse((rank, pos, a, b))) = heap.pop() {
        batch.clear();
        batch.push((pos, a, b));
        while let Some(&Reverse((r2, p2, a2, b2))) = heap.peek() {
            if r2 != rank {
                break;
            }
            heap.pop();
            batch.push((p2, a2, b2));
        }
        touched.clear();
        for &(p, a, b) in &batch {
            let q = next[p];
            if !alive[p] || q == NONE || syms[p] != a || syms[q] != b {
                continue; // stale: overlapped by an earlier site or already rewritten
            }
            if let Some((prob, rng)) = dropout.as_mut() {
                if rng.random::<f64>() < *prob {
                    skipped.push(Reverse((rank, p, a, b)));
                    continue;
                }
            }
            syms[p] = merges[&pack(a, b)].1;
            if let Some(sp) = spans.as_deref_mut() {
                sp[p].1 = sp[q].1;
            }
            alive[q] = false;
            let r = next[q];
            next[p] = r;
            if r != NONE {
                prev[r] = p;
            }
            touched.push(p);
        }
        if touched.is_empty() {
            continue;
        }
        for Reverse(e) in skipped.drain(..) {
            heap.push(Reverse(e));
        }
        for &p in &touched {
            if !alive[p] {
                continue;
            }
            let l = prev[p];
            if l != NONE {
                if let Some(&(r, _)) = merges.get(&pack(syms[l], syms[p])) {
                    heap.push(Reverse((r, l, syms[l], syms[p])));
                }
            }
            let q = next[p];
            if q != NONE {
                if let Some(&(r, _)) = merges.get(&pack(syms[p], syms[q])) {
                    heap.push(Reverse((r, p, syms[p], syms[q])));
                }
            }
        }
    }
    let mut w = 0;
    let mut i = 0;
    while i != NONE {
        syms[w] = syms[i];
        if let Some(sp) = spans.as_deref_mut() {
            sp[w] = sp[i];
        }
        w += 1;
        i = next[i];
    }
    syms.truncate(w);
    if let Some(sp) = spans {
        sp.truncate(w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(m: &[(u32, u32, u32)]) -> MergeMap {
        m.iter().enumerate().map(|(r, &(a, b, c))| (pack(a, b), (r as u32, c))).collect()
    }

    #[test]
    fn short_and_long_agree() {
        // symbols 0..3, merges: (0,1)->4, (4,2)->5, (1,1)->6, (6,6)->7
        let m = map(&[(0, 1, 4), (4, 2, 5), (1, 1, 6), (6, 6, 7)]);
        let mut state = 12345u64;
        for len in 2..200 {
            let mut v: Vec<u32> = (0..len)
                .map(|_| {
                    state =
                        state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((state >> 33) % 3) as u32
                })
                .collect();
            let mut a = v.clone();
            let mut b = v.clone();
            if len <= SCAN_SYMBOLS {
                replay_short(&mut a, None, &m);
            } else {
                a = naive(&a, &m);
            }
            replay_long(&mut b, None, &m, None);
            assert_eq!(a, b, "len {len}");
            v.clear();
        }
    }

    fn naive(s: &[u32], m: &MergeMap) -> Vec<u32> {
        let mut s = s.to_vec();
        loop {
            let best =
                s.windows(2).filter_map(|w| m.get(&pack(w[0], w[1]))).min_by_key(|x| x.0).copied();
            let Some((r, c)) = best else { return s };
            let (a, b) = s
                .windows(2)
                .find(|w| m.get(&pack(w[0], w[1])).map(|x| x.0) == Some(r))
                .map(|w| (w[0], w[1]))
                .unwrap();
            let mut out = vec![];
            let mut i = 0;
            while i < s.len() {
                if i + 1 < s.len() && s[i] == a && s[i + 1] == b {
                    out.push(c);
                    i += 2;
                } else {
                    out.push(s[i]);
                    i += 1;
                }
            }
            s = out;
        }
    }
}
