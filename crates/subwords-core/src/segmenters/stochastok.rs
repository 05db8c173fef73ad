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

use crate::error::{Error, Result};
use crate::hash::Map;

/// For each id, the `(left, right)` ids whose keys join to its key.
pub struct Expansions {
    starts: Vec<u32>,
    pairs: Vec<(u32, u32)>,
}

impl Expansions {
    /// The splits of every id; an id whose key repeats an earlier id's is never a part (the
    /// lowest id with a key stands for it).
    pub fn new(keys: &[Option<Vec<u8>>]) -> Self {
        let mut by_key: Map<&[u8], u32> = Map::default();
        for (i, k) in keys.iter().enumerate() {
            if let Some(k) = k {
                if !k.is_empty() {
                    by_key.entry(k.as_slice()).or_insert(i as u32);
                }
            }
        }
        let mut starts = Vec::with_capacity(keys.len() + 1);
        let mut pairs = Vec::new();
        starts.push(0);
        for k in keys {
            if let Some(k) = k {
                for cut in 1..k.len() {
                    if let (Some(&a), Some(&b)) = (by_key.get(&k[..cut]), by_key.get(&k[cut..])) {
                        pairs.push((a, b));
                    }
                }
            }
            starts.push(pairs.len() as u32);
        }
        Expansions { starts, pairs }
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
            return Err(Error::Option(format!("stochastok must be a probability in [0, 1], got {p}")));
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
