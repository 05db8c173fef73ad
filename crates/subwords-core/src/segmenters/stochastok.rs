//! StochasTok (Sims et al., "StochasTok: Improving Fine-Grained Subword Understanding in LLMs",
//! ICLR 2026): after a text is encoded, split some of its tokens into two tokens of the same
//! vocabulary whose texts join to the token's text.
//!
//! The paper's rule, reproduced exactly: for an encoding of `n` ids, make `floor(p * n)`
//! attempts. Each attempt picks a position uniformly among the *current* ids (earlier splits
//! included); if that id has splits, one of them is chosen uniformly and the id is replaced by
//! its two ids; if it has none, the attempt does nothing.
//!
//! Splits come from `keys`: one byte string per id (`None` for an id that neither splits nor is
//! a part, e.g. a special). The splits of `c` are every `(a, b)` with `key(a) ++ key(b) ==
//! key(c)`, in order of the cut position. Keys are written so that joining two keys is joining
//! the two pieces (raw bytes for byte-level vocabularies; the caller encodes its markers), so
//! the expanded ids decode to the same text.
//!
//! Positions are found with a Fenwick tree over the original slots (each slot holds the ids its
//! original id has become), so an attempt costs `O(log n)` instead of the `O(n)` of inserting
//! into one array; the position drawn and the result are those of the one-array version.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::hash::Map;

/// For each id, the `(left, right)` ids whose keys join to its key.
pub struct Expansions {
    starts: Vec<u32>,
    pairs: Vec<(u32, u32)>,
    keys: Vec<Option<Vec<u8>>>,
    by_key: Map<Vec<u8>, u32>,
}

impl Expansions {
    /// The splits of every id; an id whose key repeats an earlier id's is never a part (the
    /// lowest id with a key stands for it).
    pub fn new(keys: &[Option<Vec<u8>>]) -> Self {
        let mut by_key: Map<Vec<u8>, u32> = Map::default();
        for (i, k) in keys.iter().enumerate() {
            if let Some(k) = k {
                if !k.is_empty() {
                    by_key.entry(k.clone()).or_insert(i as u32);
                }
            }
        }
        // each row's cuts into two rows, the rows shared out over rayon's threads
        let per_row: Vec<Vec<(u32, u32)>> = keys
            .par_iter()
            .map(|k| {
                let mut out = Vec::new();
                if let Some(k) = k {
                    for cut in 1..k.len() {
                        if let Some(&a) = by_key.get(&k[..cut]) {
                            if let Some(&b) = by_key.get(&k[cut..]) {
                                out.push((a, b));
                            }
                        }
                    }
                }
                out
            })
            .collect();
        let mut starts = Vec::with_capacity(keys.len() + 1);
        let mut pairs = Vec::with_capacity(per_row.iter().map(Vec::len).sum());
        starts.push(0);
        for row in per_row {
            pairs.extend(row);
            starts.push(pairs.len() as u32);
        }
        Expansions { starts, pairs, keys: keys.to_vec(), by_key }
    }

    /// The rows of `order` that no split into two rows outside `gone` builds, taken in that
    /// order (shortest first, so a row's parts are settled before it); each is marked in `gone`
    /// as it is found.
    pub fn stranded(&self, order: &[u32], gone: &mut [bool]) -> Vec<u32> {
        let mut out = Vec::new();
        for &c in order {
            let ci = c as usize;
            if ci >= gone.len() || gone[ci] {
                continue;
            }
            let built = self.splits(c).iter().any(|&(a, b)| {
                !gone.get(a as usize).copied().unwrap_or(true)
                    && !gone.get(b as usize).copied().unwrap_or(true)
            });
            if !built {
                gone[ci] = true;
                out.push(c);
            }
        }
        out
    }

    /// For each id of `ids` and, recursively, for the parts of its last merge: the last merge
    /// `(left, right)` that makes its key alone under the rank rule (tiktoken's: the adjacent
    /// pair whose join is the row with the lowest id merges first, the leftmost on a tie), when
    /// those merges end in the id itself; None otherwise (a single byte, a row the merges do
    /// not make, an id with no key, an id not reached). Indexed by id.
    pub fn rank_last_splits(&self, ids: &[u32]) -> Vec<Option<(u32, u32)>> {
        let mut out = vec![None; self.keys.len()];
        let mut seen = vec![false; self.keys.len()];
        let mut todo: Vec<u32> =
            ids.iter().copied().filter(|&i| (i as usize) < self.keys.len()).collect();
        let mut parts: Vec<u32> = Vec::new();
        // ranks[k]: the row the pair (parts[k], parts[k + 1]) joins to, u32::MAX for none
        let mut ranks: Vec<u32> = Vec::new();
        let mut joined: Vec<u8> = Vec::new();
        while let Some(id) = todo.pop() {
            let idu = id as usize;
            if seen[idu] {
                continue;
            }
            seen[idu] = true;
            let Some(key) = &self.keys[idu] else { continue };
            if key.len() < 2 {
                continue;
            }
            parts.clear();
            if !key.iter().all(|&x| match self.by_key.get(&[x][..]) {
                Some(&i) => {
                    parts.push(i);
                    true
                }
                None => false,
            }) {
                continue;
            }
            ranks.clear();
            for k in 0..parts.len() - 1 {
                ranks.push(self.join(parts[k], parts[k + 1], &mut joined));
            }
            let mut last = None;
            while parts.len() > 1 {
                // the lowest row, the leftmost on a tie
                let (k, &j) =
                    ranks.iter().enumerate().min_by_key(|&(k, &r)| (r, k)).expect("a pair");
                if j == u32::MAX {
                    break;
                }
                last = Some((parts[k], parts[k + 1]));
                parts[k] = j;
                parts.remove(k + 1);
                ranks.remove(k);
                if k > 0 {
                    ranks[k - 1] = self.join(parts[k - 1], parts[k], &mut joined);
                }
                if k < ranks.len() {
                    ranks[k] = self.join(parts[k], parts[k + 1], &mut joined);
                }
            }
            if parts.len() == 1 && parts[0] == id {
                out[idu] = last;
                if let Some((a, b)) = last {
                    todo.push(a);
                    todo.push(b);
                }
            }
        }
        out
    }

    /// The row whose key is `key(a) ++ key(b)`, or `u32::MAX`.
    fn join(&self, a: u32, b: u32, buf: &mut Vec<u8>) -> u32 {
        buf.clear();
        buf.extend_from_slice(self.key(a));
        buf.extend_from_slice(self.key(b));
        self.by_key.get(buf.as_slice()).copied().unwrap_or(u32::MAX)
    }

    fn key(&self, id: u32) -> &[u8] {
        self.keys.get(id as usize).and_then(|k| k.as_deref()).unwrap_or(&[])
    }

    /// The splits of `id` (empty for an id out of range).
    pub fn splits(&self, id: u32) -> &[(u32, u32)] {
        let i = id as usize;
        if i + 1 >= self.starts.len() {
            return &[];
        }
        &self.pairs[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// How many ids have at least one split.
    pub fn splittable(&self) -> usize {
        self.starts.windows(2).filter(|w| w[1] > w[0]).count()
    }

    /// `ids` after the paper's `floor(p * len)` attempts, drawn from `seed`.
    pub fn expand(&self, ids: &[u32], p: f64, seed: u64) -> Result<Vec<u32>> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::Option(format!(
                "stochastok must be a probability in [0, 1], got {p}"
            )));
        }
        let attempts = (p * ids.len() as f64).floor() as usize;
        if attempts == 0 {
            return Ok(ids.to_vec());
        }
        let mut rng = SmallRng::seed_from_u64(seed);
        let n = ids.len();
        let mut slots: Vec<Vec<u32>> = ids.iter().map(|&i| vec![i]).collect();
        // Fenwick tree of slot sizes (1-based)
        let mut tree = vec![0usize; n + 1];
        for i in 1..=n {
            tree[i] += 1;
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                tree[j] += tree[i];
            }
        }
        let mut len = n;
        let mut top = 1usize;
        while top * 2 <= n {
            top *= 2;
        }
        for _ in 0..attempts {
            let mut r = rng.random_range(0..len);
            // the slot holding position r, and r's offset in it
            let mut at = 0usize;
            let mut step = top;
            while step > 0 {
                let next = at + step;
                if next <= n && tree[next] <= r {
                    at = next;
                    r -= tree[next];
                }
                step /= 2;
            }
            let slot = &mut slots[at];
            let splits = self.splits(slot[r]);
            if splits.is_empty() {
                continue;
            }
            let (a, b) = splits[rng.random_range(0..splits.len())];
            slot[r] = a;
            slot.insert(r + 1, b);
            len += 1;
            let mut i = at + 1;
            while i <= n {
                tree[i] += 1;
                i += i & i.wrapping_neg();
            }
        }
        Ok(slots.into_iter().flatten().collect())
    }
}

/// The seed of text `index` in a batch drawn from `seed` (splitmix64 of both), so a text's
/// expansion depends on its index, not on the thread that runs it.
pub fn text_seed(seed: u64, index: u64) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    mix(seed ^ mix(index))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(words: &[&str]) -> Vec<Option<Vec<u8>>> {
        words.iter().map(|w| Some(w.as_bytes().to_vec())).collect()
    }

    #[test]
    fn splits_are_every_cut_into_two_rows() {
        // a b c ab bc abc: abc = a+bc (cut 1) and ab+c (cut 2)
        let e = Expansions::new(&keys(&["a", "b", "c", "ab", "bc", "abc"]));
        assert_eq!(e.splits(5), &[(0, 4), (3, 2)]);
        assert_eq!(e.splits(3), &[(0, 1)]);
        assert!(e.splits(0).is_empty());
        assert_eq!(e.splittable(), 3);
    }

    #[test]
    fn rank_rule_derivations_and_stranded_rows() {
        // ids: a b c ab bc abc. abc alone: ab (id 3) merges before bc (id 4), then ab + c.
        let e = Expansions::new(&keys(&["a", "b", "c", "ab", "bc", "abc"]));
        let last = e.rank_last_splits(&[5]);
        assert_eq!(last[5], Some((3, 2)));
        assert_eq!(last[3], Some((0, 1)));
        assert_eq!(last[0], None);
        // without ab, abc is still built as a + bc; without ab and bc it is stranded
        let mut gone = vec![false, false, false, true, false, false];
        assert!(e.stranded(&[3, 4, 5], &mut gone).is_empty());
        let mut gone = vec![false, false, false, true, true, false];
        assert_eq!(e.stranded(&[3, 4, 5], &mut gone), vec![5]);
        assert!(gone[5]);
    }

    #[test]
    fn every_attempt_on_a_splittable_row_splits_it() {
        // one row "ab" of two letters: p = 1 on [ab] is one attempt, which must split it
        let e = Expansions::new(&keys(&["a", "b", "ab"]));
        assert_eq!(e.expand(&[2], 1.0, 7).unwrap(), vec![0, 1]);
        assert_eq!(e.expand(&[2, 2], 0.4, 7).unwrap(), vec![2, 2]); // floor(0.8) = 0 attempts
        assert!(e.expand(&[2], 1.5, 7).is_err());
        assert!(e.expand(&[2], f64::NAN, 7).is_err());
    }

    #[test]
    fn expansion_keeps_the_text() {
        let words = ["a", "b", "c", "ab", "bc", "abc", "abcabc", "cab"];
        let e = Expansions::new(&keys(&words));
        let ids = vec![6, 5, 7, 3, 2, 6];
        for seed in 0..50 {
            let out = e.expand(&ids, 1.0, seed).unwrap();
            let text: String = out.iter().map(|&i| words[i as usize]).collect();
            assert_eq!(text, "abcabcabccababcabcabc");
        }
    }
}
