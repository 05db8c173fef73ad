//! A byte-level BPE `tokenizer.json` that encodes as a rank file does, run by the rank engine
//! ([`crate::tiktoken::RankBpe`]) with the file's ids.
//!
//! tokenizers merges the listed pair of lowest *merge* rank (leftmost on ties); the rank engine
//! merges any adjacent pair whose concatenation is a token, the one of lowest *token* rank
//! (leftmost on ties). With a token's rank taken to be its id, the two give the same ids on every
//! text when the file passes the checks of [`crate::merge_ranks`] (whose header gives the
//! proof), made once when it is read ([`rank_engine`]): here, that the pre-tokenizers are a
//! `Split` (`Isolated`, not inverted) by an expression with a hand-written scanner (cl100k,
//! o200k, Llama 3) and a `ByteLevel` without prefix space or regex, the words plain byte
//! characters (no prefix or suffix, all 256 in the vocabulary), `ignore_merges` as the file has
//! it.
//!
//! `tests/support/peers.py`'s `rank_tokenizer_json` writes OpenAI's vocabularies so (every split
//! of a token into two lower-ranked ones a merge, ranked by the token it makes), and they pass.

use subwords_core::spelling::byte_to_char_table;

use super::{Behavior, Bpe, PreTokenizer};
use crate::merge_ranks::{scanned, TokenBytes};
use crate::tiktoken::RankBpe;

/// No byte has this character ([`rank_engine`]'s table of the byte characters).
const NO_BYTE: u16 = u16::MAX;

/// The rank engine standing in for the model step of `bpe` under the pre-tokenizers `pre`, or
/// None when the file is not one it encodes exactly (see the module header).
pub(super) fn rank_engine(bpe: &Bpe, pre: &[PreTokenizer]) -> Option<RankBpe> {
    let splitter = match pre {
        [PreTokenizer::Split(step), PreTokenizer::ByteLevel { add_prefix_space: false, use_regex: false }]
            if step.behavior == Behavior::Isolated && !step.invert =>
        {
            scanned(&step.pattern)?
        }
        _ => return None,
    };
    if bpe.prefix.is_some() || bpe.suffix.is_some() {
        return None;
    }
    // each id's raw bytes, read through the byte characters
    let chars = byte_to_char_table();
    let mut back = [NO_BYTE; 512];
    for (b, &c) in chars.iter().enumerate() {
        back[c as usize] = b as u16; // the GPT-2 table's characters are below U+0200
    }
    let top = bpe.vocab.values().copied().max()? as usize;
    if top >= 2 * bpe.vocab.len() + (1 << 20) {
        return None; // too sparse for the rank engine's id table
    }
    let mut tokens = TokenBytes::new(top + 1);
    for (t, &id) in &bpe.vocab {
        tokens.set(
            id,
            t.chars().map(|c| back.get(c as usize).filter(|&&b| b != NO_BYTE).map(|&b| b as u8)),
        );
    }
    crate::merge_ranks::rank_engine(
        &tokens,
        &bpe.byte_char,
        &bpe.merges,
        bpe.ignore_merges,
        splitter,
    )
}

#[cfg(test)]
mod tests {
    use super::super::HfPipeline;
    use subwords_core::spelling::byte_to_char_table;

    use crate::test_rng::Rng;

    /// A byte-level pipeline on o200k's expression: the 256 byte characters at ids 0..256, the
    /// `tokens` (plain text) at 256, 257, ..., and the `merges` (left, right) as given.
    fn pipeline(tokens: &[&str], merges: &[(&str, &str)], ignore_merges: bool) -> HfPipeline {
        let chars = byte_to_char_table();
        let show = |t: &str| t.bytes().map(|b| chars[b as usize]).collect::<String>();
        let mut vocab: Vec<(String, u32)> =
            (0..256).map(|b| (chars[b].to_string(), b as u32)).collect();
        for (k, t) in tokens.iter().enumerate() {
            vocab.push((show(t), 256 + k as u32));
        }
        let id = |t: &str| vocab.iter().find(|(v, _)| *v == show(t)).unwrap().1;
        let merges: Vec<(u32, u32, u32)> =
            merges.iter().map(|&(a, b)| (id(a), id(b), id(&format!("{a}{b}")))).collect();
        let plan = serde_json::json!({
            "normalizers": [],
            "pre_tokenizers": [
                {"type": "Split", "pattern": subwords_core::spelling::pattern::named("o200k").unwrap(),
                 "literal": false, "behavior": "Isolated", "invert": false},
                {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}],
            "model": {"type": "Bpe", "vocab": vocab, "merges": merges, "unk": null,
                      "continuing_subword_prefix": null, "end_of_word_suffix": null,
                      "fuse_unk": false, "byte_fallback": false, "ignore_merges": ignore_merges},
            "added": [],
        });
        HfPipeline::from_json(&plan.to_string()).unwrap()
    }

    // ids: ab 256, bc 257, abc 258, aa 259, aaa 260
    const TOKENS: [&str; 5] = ["ab", "bc", "abc", "aa", "aaa"];

    #[test]
    fn canonical_splits_in_id_order_take_the_rank_engine() {
        // "abc" from bytes alone (without itself): ab (256) before bc (257) -> [ab, c]; "aaa":
        // aa at the left -> [aa, a]; both listed (with the other splits, which never meet)
        let merges = [
            ("a", "b"),
            ("b", "c"),
            ("a", "bc"),
            ("ab", "c"),
            ("a", "a"),
            ("a", "aa"),
            ("aa", "a"),
        ];
        let p = pipeline(&TOKENS, &merges, true);
        assert!(p.rank_fast());
        // by hand: "abcaaa" -> ab, then bc no longer adjacent; abc (258); then aa (259) at the
        // left of "aaa", then aaa (260)
        assert_eq!(p.encode("abcaaa", &[]), vec![258, 260]);
        assert_eq!(p.encode_general("abcaaa", &[]), vec![258, 260]);
        // "aaaaa": aa, aa, a -> aaa can come of (aa, a) at the right only: [aa, aaa]
        assert_eq!(p.encode("aaaaa", &[]), vec![259, 260]);
        assert_eq!(p.encode_general("aaaaa", &[]), vec![259, 260]);
    }

    #[test]
    fn a_file_the_rank_engine_would_misread_keeps_the_model_step() {
        // "abc"'s canonical split (ab, c) not listed: tokenizers makes abc only from (a, bc),
        // which never meet (ab is made first), so "abc" stays [ab, c]
        let p = pipeline(
            &TOKENS,
            &[("a", "b"), ("b", "c"), ("a", "bc"), ("a", "a"), ("aa", "a")],
            true,
        );
        assert!(!p.rank_fast());
        assert_eq!(p.encode("xabcx", &[]), vec![b'x' as u32, 256, b'c' as u32, b'x' as u32]);
        // the merges out of id order: bc (257) listed before ab (256)
        let p = pipeline(
            &TOKENS,
            &[("b", "c"), ("a", "b"), ("ab", "c"), ("a", "a"), ("aa", "a")],
            true,
        );
        assert!(!p.rank_fast());
        assert_eq!(p.encode("xabcx", &[]), vec![b'x' as u32, b'a' as u32, 257, b'x' as u32]);
        // without ignore_merges, only the tokens the merges make are the rank engine's: "aaa"
        // (no merge makes it) is no token to either engine
        let p = pipeline(&TOKENS, &[("a", "b"), ("b", "c"), ("ab", "c"), ("a", "a")], false);
        assert!(p.rank_fast());
        assert_eq!(p.encode("aaa", &[]), vec![259, b'a' as u32]);
        // ... a token a merge makes but the rank engine cannot reach would be taken whole by
        // it: bc (256), ab (257), cd (258), abcd (259) from (ab, cd); "abcd" gets bc first
        // and stays [a, bc, d] under tokenizers
        let toks = ["bc", "ab", "cd", "abcd"];
        let merges = [("b", "c"), ("a", "b"), ("c", "d"), ("ab", "cd")];
        let p = pipeline(&toks, &merges, false);
        assert!(!p.rank_fast());
        assert_eq!(p.encode("abcd", &[]), vec![b'a' as u32, 256, b'd' as u32]);
        // ... under ignore_merges both take it whole, and merge it the same way inside others
        let p = pipeline(&toks, &merges, true);
        assert!(p.rank_fast());
        assert_eq!(p.encode("abcd", &[]), vec![259]);
        assert_eq!(p.encode("xabcd", &[]), vec![b'x' as u32, b'a' as u32, 256, b'd' as u32]);
    }

    /// Random rank vocabularies over a few letters written as tokenizer.json files the way the
    /// encoding benchmark writes OpenAI's (every split of a token into two lower-ranked ones a
    /// merge, ranked by the token it makes): wherever the rank engine is taken, it gives the
    /// general model step's ids (tokenizers' rule) on random words.
    #[test]
    fn rank_files_written_as_merges_encode_alike() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let (mut taken, mut words) = (0, 0);
        for _ in 0..60 {
            // tokens: random joins of earlier tokens (so each is reachable, mostly) and a few
            // random strings (some reachable, some not)
            let mut toks: Vec<String> = Vec::new();
            let letters = ["a", "b", "c", " "];
            for _ in 0..25 {
                let t = if rng.below(5) == 0 || toks.len() < 2 {
                    (0..2 + rng.below(3)).map(|_| letters[rng.below(4)]).collect::<String>()
                } else {
                    format!("{}{}", toks[rng.below(toks.len())], toks[rng.below(toks.len())])
                };
                if !toks.contains(&t) && t.len() > 1 {
                    toks.push(t);
                }
            }
            let rank = |s: &str, toks: &[String]| -> Option<usize> {
                if s.len() == 1 {
                    Some(0)
                } else {
                    toks.iter().position(|t| t == s).map(|k| k + 1)
                }
            };
            let mut merges: Vec<(String, String)> = Vec::new();
            for (k, t) in toks.iter().enumerate() {
                for i in 1..t.len() {
                    let (a, b) = (&t[..i], &t[i..]);
                    if matches!((rank(a, &toks), rank(b, &toks)), (Some(x), Some(y)) if x <= k && y <= k)
                    {
                        merges.push((a.to_string(), b.to_string()));
                    }
                }
            }
            let refs: Vec<&str> = toks.iter().map(|s| s.as_str()).collect();
            let mrefs: Vec<(&str, &str)> =
                merges.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
            let p = pipeline(&refs, &mrefs, true);
            if !p.rank_fast() {
                continue;
            }
            taken += 1;
            for _ in 0..80 {
                let len = 1 + rng.below(30);
                let text: String = (0..len).map(|_| ["a", "b", "c"][rng.below(3)]).collect();
                assert_eq!(p.encode(&text, &[]), p.encode_general(&text, &[]), "{text:?}");
                words += 1;
            }
        }
        assert!(taken >= 20, "only {taken} of 60 vocabularies took the rank engine");
        assert!(words >= 1600);
    }
}
