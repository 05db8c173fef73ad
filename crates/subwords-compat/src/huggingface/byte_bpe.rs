//! The model step of a byte-level BPE `tokenizer.json` whose words start as plain byte
//! characters: no `continuing_subword_prefix`, no `end_of_word_suffix`, and every one of the 256
//! byte characters in the vocabulary, so no word ever has an unknown symbol and `unk_token`,
//! `fuse_unk` and `byte_fallback` never act. GPT-2's, Llama 3's and every OpenAI vocabulary
//! written as a tokenizer.json are of this kind.
//!
//! The merges are tokenizers' (the pair of lowest *merge* rank, leftmost on ties, one merge at a
//! time, a created pair competing at once) and give exactly [`super::merge_word`]'s symbols; only
//! the lookups are cheaper, as the rank engine's are:
//! * a word of at most [`PACKED_LEN`] bytes is keyed by one 128-bit integer ([`pack`]) for the
//!   `ignore_merges` whole-word lookup and the word cache, so neither hashes nor compares bytes;
//! * the first round of merges reads (merge rank, result) of two bytes from a 64 Ki-entry table
//!   instead of the pair map;
//! * words of at most [`SMALL_WORD`] bytes merge in arrays on the stack, the lowest pair found as
//!   the least of (rank, place) packed in one integer.
//!
//! A file whose merges encode as a rank file does (each token's canonical split listed, in id
//! order: OpenAI's vocabularies written as tokenizer.json, our own byte-level models) is cut by
//! the rank engine itself instead ([`super::rank_path`]); this step takes the others (GPT-2's
//! lone `ByteLevel`, whose pattern the rank engine has no scanner for, and files whose merges
//! do not pass that check).

use subwords_core::hash::pack as pair_key;
use subwords_core::word_cache::{pack, packed_at, PACKED_LEN};

use super::{Bpe, Cache, CACHED_WORD, NO_ID};

/// Words of at most this many bytes merge in arrays on the stack ([`ByteBpe::merge_small`]);
/// longer ones go through the general loop.
pub(super) const SMALL_WORD: usize = 64;

/// The lookups of a byte-level BPE model with plain symbols (see the module header).
pub(super) struct ByteBpe {
    /// The id of each byte's character.
    byte_id: [u32; 256],
    /// (merge rank, result id) of the pair of two bytes' characters, indexed by
    /// `first << 8 | second`; rank `NO_ID` where they have no merge.
    byte_pair: Box<[(u32, u32)]>,
    /// `ignore_merges`: the tokens of at most [`PACKED_LEN`] raw bytes, keyed by [`pack`] (the
    /// longer ones are `Bpe::raw_vocab`'s). Empty without `ignore_merges`.
    short: Short,
}

impl ByteBpe {
    /// The fast model step for `bpe`, or None when its words do not start as plain byte
    /// characters (a prefix or suffix, or a byte whose character is not a token).
    pub(super) fn new(bpe: &Bpe) -> Option<ByteBpe> {
        if bpe.prefix.is_some() || bpe.suffix.is_some() || bpe.byte_char.contains(&NO_ID) {
            return None;
        }
        let mut byte_pair = vec![(NO_ID, 0u32); 1 << 16].into_boxed_slice();
        for a in 0..256usize {
            for b in 0..256usize {
                if let Some(&m) = bpe.merges.get(&pair_key(bpe.byte_char[a], bpe.byte_char[b])) {
                    byte_pair[a << 8 | b] = m;
                }
            }
        }
        let keys: Vec<(u128, u32)> = bpe
            .raw_vocab
            .iter()
            .filter(|(raw, _)| bpe.ignore_merges && raw.len() <= PACKED_LEN)
            .map(|(raw, &id)| (pack(raw), id))
            .collect();
        let short = Short::new(&keys);
        Some(ByteBpe { byte_id: bpe.byte_char, byte_pair, short })
    }

    /// Appends the ids of one word, `text[a..b]` (raw bytes, not empty), to `out`: the token
    /// it is (`ignore_merges`), or its ids from the word cache, or merged and stored there.
    #[inline]
    pub(super) fn encode_word(
        &self,
        bpe: &Bpe,
        text: &[u8],
        a: usize,
        b: usize,
        out: &mut Vec<u32>,
        cache: Option<&mut Cache>,
    ) {
        let n = b - a;
        let word = &text[a..b];
        if n > PACKED_LEN {
            return self.encode_long(bpe, word, out, cache);
        }
        let key = packed_at(text, a, n);
        if bpe.ignore_merges {
            let id = self.short.get(key);
            if id != NO_ID {
                out.push(id);
                return;
            }
        } else if n == 1 {
            out.push(self.byte_id[word[0] as usize]);
            return;
        }
        match cache {
            Some(c) => {
                if !c.extend_packed(key, out) {
                    let start = out.len();
                    self.merge_small(bpe, word, out);
                    c.insert_packed(key, &out[start..]);
                }
            }
            None => self.merge_small(bpe, word, out),
        }
    }

    /// A word longer than [`PACKED_LEN`] bytes: a whole token (`ignore_merges`), or merged (each
    /// word of at most `CACHED_WORD` bytes once, then copied from the word cache).
    #[inline(never)]
    fn encode_long(&self, bpe: &Bpe, word: &[u8], out: &mut Vec<u32>, cache: Option<&mut Cache>) {
        if bpe.ignore_merges {
            if let Some(&id) = bpe.raw_vocab.get(word) {
                out.push(id);
                return;
            }
        }
        let cache = cache.filter(|_| word.len() <= CACHED_WORD);
        if let Some(c) = cache.as_deref() {
            if c.extend_into(word, out) {
                return;
            }
        }
        let start = out.len();
        if word.len() <= SMALL_WORD {
            self.merge_small(bpe, word, out);
        } else {
            let mut syms: Vec<u32> = word.iter().map(|&b| self.byte_id[b as usize]).collect();
            super::merge_word(&mut syms, &bpe.merges);
            out.extend_from_slice(&syms);
        }
        if let Some(c) = cache {
            c.insert(word, &out[start..]);
        }
    }

    /// tokenizers' merge loop over a word of 2 to [`SMALL_WORD`] bytes, in arrays on the stack:
    /// `sym[i]` is symbol i, `pair[i]` the (merge rank, result) of symbols i and i + 1 (rank
    /// `NO_ID` for none, and for the last symbol). Each round merges the pair of lowest rank,
    /// leftmost on ties, as [`super::merge_word`] does.
    #[inline(never)]
    fn merge_small(&self, bpe: &Bpe, word: &[u8], out: &mut Vec<u32>) {
        let n = word.len();
        debug_assert!((1..=SMALL_WORD).contains(&n));
        let mut sym = [0u32; SMALL_WORD];
        let mut rank = [NO_ID; SMALL_WORD];
        let mut made = [0u32; SMALL_WORD];
        for i in 0..n {
            sym[i] = self.byte_id[word[i] as usize];
        }
        for i in 0..n - 1 {
            let (r, c) = self.byte_pair[(word[i] as usize) << 8 | word[i + 1] as usize];
            rank[i] = r;
            made[i] = c;
        }
        let merge_of = |a: u32, b: u32| -> (u32, u32) {
            bpe.merges.get(&pair_key(a, b)).copied().unwrap_or((NO_ID, 0))
        };
        let mut m = n;
        loop {
            let mut best = u64::MAX;
            for (i, &r) in rank[..m].iter().enumerate() {
                best = best.min((r as u64) << 32 | i as u64);
            }
            if (best >> 32) as u32 == NO_ID {
                break;
            }
            // symbol k + 1 joins symbol k
            let k = best as u32 as usize;
            sym[k] = made[k];
            for i in k + 1..m - 1 {
                sym[i] = sym[i + 1];
                rank[i] = rank[i + 1];
                made[i] = made[i + 1];
            }
            m -= 1;
            rank[m] = NO_ID;
            (rank[k], made[k]) = if k + 1 < m { merge_of(sym[k], sym[k + 1]) } else { (NO_ID, 0) };
            if k > 0 {
                (rank[k - 1], made[k - 1]) = merge_of(sym[k - 1], sym[k]);
            }
        }
        out.extend_from_slice(&sym[..m]);
    }
}

/// Ids keyed by [`pack`]: open addressing with linear probing, at most half full, so a lookup
/// is a multiply and, mostly, one slot (the general map cost 34 more instructions a word of
/// English than this, on o200k's tokens). A packed key's top byte, its length, is never 0: an
/// empty slot is one whose high half is 0.
struct Short {
    slots: Box<[(u64, u64, u32)]>,
    shift: u32,
}

impl Short {
    fn new(keys: &[(u128, u32)]) -> Short {
        let size = (2 * keys.len()).next_power_of_two().max(16);
        let mut t = Short {
            slots: vec![(0, 0, NO_ID); size].into_boxed_slice(),
            shift: 64 - size.trailing_zeros(),
        };
        let mask = size - 1;
        for &(key, id) in keys {
            let (lo, hi) = (key as u64, (key >> 64) as u64);
            let mut i = t.home(lo, hi);
            while t.slots[i].1 != 0 && (t.slots[i].0, t.slots[i].1) != (lo, hi) {
                i = (i + 1) & mask;
            }
            t.slots[i] = (lo, hi, id);
        }
        t
    }

    #[inline(always)]
    fn home(&self, lo: u64, hi: u64) -> usize {
        let h = (lo.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ hi).wrapping_mul(0xd6e8_feb8_6659_fd93);
        (h >> self.shift) as usize
    }

    /// The id of `key`, or `NO_ID`.
    #[inline(always)]
    fn get(&self, key: u128) -> u32 {
        let (lo, hi) = (key as u64, (key >> 64) as u64);
        let mask = self.slots.len() - 1;
        let mut i = self.home(lo, hi);
        loop {
            let s = &self.slots[i];
            if s.0 == lo && s.1 == hi {
                return s.2;
            }
            if s.1 == 0 {
                return NO_ID;
            }
            i = (i + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::HfPipeline;
    use subwords_core::spelling::byte_to_char_table;

    use crate::test_rng::Rng;

    /// A byte-level BPE pipeline (GPT-2's ByteLevel split) over a few letters: the 256 byte
    /// characters at shuffled ids, then `n` merges of random pairs of tokens in random order,
    /// so that one token is made by several merges, a merge can come before the merges that
    /// make its parts, and pairs are listed twice.
    fn pipeline(rng: &mut Rng, n: usize, ignore_merges: bool) -> HfPipeline {
        let chars = byte_to_char_table();
        let mut ids: Vec<u32> = (0..256).collect();
        for i in (1..256).rev() {
            ids.swap(i, rng.below(i + 1));
        }
        let mut vocab: Vec<(String, u32)> =
            (0..256).map(|b| (chars[b].to_string(), ids[b])).collect();
        // the pieces merges are drawn from: the bytes of "ab é" and what they make
        let mut pool: Vec<String> = "ab é".bytes().map(|b| chars[b as usize].to_string()).collect();
        let mut merges = Vec::new();
        for _ in 0..n {
            let a = pool[rng.below(pool.len())].clone();
            let b = pool[rng.below(pool.len())].clone();
            let joined = format!("{a}{b}");
            let id = match vocab.iter().find(|(t, _)| *t == joined) {
                Some(&(_, id)) => id,
                None => {
                    let id = vocab.len() as u32;
                    vocab.push((joined.clone(), id));
                    pool.push(joined);
                    id
                }
            };
            let get = |t: &str| vocab.iter().find(|(v, _)| v == t).unwrap().1;
            merges.push((get(&a), get(&b), id));
        }
        for i in (1..merges.len()).rev() {
            if rng.below(3) == 0 {
                merges.swap(i, rng.below(i + 1));
            }
        }
        let plan = serde_json::json!({
            "normalizers": [],
            "pre_tokenizers": [{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}],
            "model": {"type": "Bpe", "vocab": vocab, "merges": merges, "unk": null,
                      "continuing_subword_prefix": null, "end_of_word_suffix": null,
                      "fuse_unk": false, "byte_fallback": false, "ignore_merges": ignore_merges},
            "added": [],
        });
        HfPipeline::from_json(&plan.to_string()).unwrap()
    }

    #[test]
    fn byte_level_lookups_give_the_general_merges() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let letters = ["a", "b", " ", "é", "ab", "ba", " a"];
        let mut words = 0;
        for round in 0..40 {
            let p = pipeline(&mut rng, 10 + 10 * (round % 8), round % 2 == 1);
            assert!(p.byte_level_fast());
            for _ in 0..60 {
                // words of 1 to ~150 bytes: the packed, the stack and the general loops
                let most = if rng.below(4) == 0 { 80 } else { 12 };
                let len = 1 + rng.below(most);
                let text: String = (0..len).map(|_| letters[rng.below(letters.len())]).collect();
                let general = p.encode_general(&text, &[]);
                assert_eq!(p.encode(&text, &[]), general, "{text:?}");
                // again, from the word cache
                assert_eq!(p.encode(&text, &[]), general, "{text:?} (cached)");
                words += 1;
            }
        }
        assert_eq!(words, 2400);
    }

    #[test]
    fn a_missing_byte_character_or_a_prefix_keeps_the_general_step() {
        let chars = byte_to_char_table();
        let vocab: Vec<(String, u32)> =
            (1..256).map(|b| (chars[b].to_string(), b as u32)).collect();
        let plan = |vocab: &[(String, u32)], prefix: Option<&str>| {
            serde_json::json!({
                "normalizers": [],
                "pre_tokenizers": [{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}],
                "model": {"type": "Bpe", "vocab": vocab, "merges": [], "unk": null,
                          "continuing_subword_prefix": prefix, "end_of_word_suffix": null,
                          "fuse_unk": false, "byte_fallback": false, "ignore_merges": false},
                "added": [],
            })
            .to_string()
        };
        // byte 0 has no token: it is dropped (no unk), as tokenizers drops it
        let p = HfPipeline::from_json(&plan(&vocab, None)).unwrap();
        assert!(!p.byte_level_fast());
        assert_eq!(p.encode("a\0b", &[]), vec![b'a' as u32, b'b' as u32]);
        let mut full = vocab.clone();
        full.push((chars[0].to_string(), 0));
        assert!(HfPipeline::from_json(&plan(&full, None)).unwrap().byte_level_fast());
        assert!(!HfPipeline::from_json(&plan(&full, Some("##"))).unwrap().byte_level_fast());
    }
}
