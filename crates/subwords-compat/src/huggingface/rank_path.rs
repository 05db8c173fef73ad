//! A byte-level BPE `tokenizer.json` that encodes as a rank file does, run by the rank engine
//! ([`crate::tiktoken::RankBpe`]) with the file's ids.
//!
//! tokenizers merges the listed pair of lowest *merge* rank (leftmost on ties); the rank engine
//! merges any adjacent pair whose concatenation is a token, the one of lowest *token* rank
//! (leftmost on ties). With a token's rank taken to be its id, the two give the same ids on every
//! text when the file passes these checks, made once when it is read ([`rank_engine`]):
//!
//! 1. the pre-tokenizers are a `Split` (`Isolated`, not inverted) by an expression with a
//!    hand-written scanner (cl100k, o200k, Llama 3) and a `ByteLevel` without prefix space or
//!    regex, the words plain byte characters (no prefix or suffix, all 256 in the vocabulary);
//! 2. every merge between byte-level tokens makes the token their bytes make;
//! 3. each token the rank engine can reach by merges has its *canonical split* listed as a merge:
//!    the two parts the rank engine leaves when it encodes the token's bytes with that token
//!    taken out of the vocabulary; and those merges rank in the order of the ids they make;
//! 4. the rank engine's vocabulary is the bytes and, under `ignore_merges` (both engines take a
//!    word that is a token whole), every byte-level token; without it, the tokens the merges
//!    make, each of which must be reachable.
//!
//! Why that suffices. Take any two adjacent parts x and y of the rank engine's state whose join
//! is a token t. The merges made inside t's bytes so far are those the engine makes on t's bytes
//! alone (a part never straddles their edges, and the lowest pair of a text, when it lies there,
//! is the lowest of those bytes), so (x, y) is t's canonical split: no other split of a token is
//! ever adjacent. By induction both engines hold the same parts: the rank engine joins the pair
//! of lowest id, leftmost; that pair is canonical, so listed; every other listed pair present
//! is the canonical split of a token of higher id, so its merge ranks higher, or the same pair
//! further right. tokenizers joins the same pair, and both stop together, as a listed pair makes
//! a token the rank engine holds.
//!
//! `tests/support/peers.py`'s `rank_tokenizer_json` writes OpenAI's vocabularies so (every split
//! of a token into two lower-ranked ones a merge, ranked by the token it makes), and they pass.

use subwords_core::hash::pack;
use subwords_core::spelling::{byte_to_char_table, openai, pattern};

use super::{Behavior, Bpe, PreTokenizer, NO_ID};
use crate::tiktoken::{RankBpe, Splitter};

/// No byte has this character ([`rank_engine`]'s table of the byte characters).
const NO_BYTE: u16 = u16::MAX;
/// The span of an id that is no byte-level token.
const NO_SPAN: (u32, u32) = (u32::MAX, u32::MAX);

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
    if bpe.prefix.is_some() || bpe.suffix.is_some() || bpe.byte_char.contains(&NO_ID) {
        return None;
    }
    // each id's raw bytes, `flat[spans[id]]` (`NO_SPAN`: not a byte-level token)
    let chars = byte_to_char_table();
    let mut back = [NO_BYTE; 512];
    for (b, &c) in chars.iter().enumerate() {
        back[c as usize] = b as u16; // the GPT-2 table's characters are below U+0200
    }
    let top = bpe.vocab.values().copied().max()? as usize;
    if top >= 2 * bpe.vocab.len() + (1 << 20) {
        return None; // too sparse for the rank engine's id table
    }
    let mut flat: Vec<u8> = Vec::new();
    let mut spans = vec![NO_SPAN; top + 1];
    'tokens: for (t, &id) in &bpe.vocab {
        let start = flat.len();
        for c in t.chars() {
            match back.get(c as usize) {
                Some(&b) if b != NO_BYTE => flat.push(b as u8),
                _ => {
                    flat.truncate(start);
                    continue 'tokens;
                }
            }
        }
        spans[id as usize] = (start as u32, flat.len() as u32);
    }
    let raw = |id: u32| -> Option<&[u8]> {
        let &(a, b) = spans.get(id as usize)?;
        (a != NO_SPAN.0).then(|| &flat[a as usize..b as usize])
    };
    // check 2; `made`: the tokens the merges make
    let mut made = vec![false; top + 1];
    for (&key, &(_, c)) in &bpe.merges {
        let (Some(x), Some(y)) = (raw((key >> 32) as u32), raw(key as u32)) else {
            // a pair of symbols no byte-level word ever holds: it never acts
            continue;
        };
        let z = raw(c)?;
        if z.len() != x.len() + y.len() || !z.starts_with(x) || !z.ends_with(y) {
            return None;
        }
        made[c as usize] = true;
    }
    // the rank engine's vocabulary: the bytes, and the tokens of two bytes or more that
    // tokenizers can give (any, under ignore_merges; else the ones the merges make)
    let kept = |id: u32| -> Option<&[u8]> {
        raw(id).filter(|r| r.len() >= 2 && (bpe.ignore_merges || made[id as usize]))
    };
    let mut tokens: Vec<(Vec<u8>, u32)> =
        (0..256).map(|b| (vec![b as u8], bpe.byte_char[b])).collect();
    tokens.extend((0..=top as u32).filter_map(|id| kept(id).map(|r| (r.to_vec(), id))));
    let engine = RankBpe::new(tokens, Vec::new(), splitter).ok()?;
    // check 3: each token's canonical split, a listed merge making it; the merge ranks of
    // those, by token id, must rise
    let mut pair = vec![NO_ID; 1 << 16];
    for id in 0..=top as u32 {
        if let Some(&[a, b]) = kept(id) {
            pair[(a as usize) << 8 | b as usize] = id;
        }
    }
    let mut scratch = (Vec::new(), Vec::new());
    let mut last_rank = None;
    for id in 0..=top as u32 {
        let Some(r) = kept(id) else { continue };
        let parts = merge_without(&engine, &pair, r, id, &mut scratch);
        if let [(_, _, a), (_, _, b)] = parts[..] {
            match bpe.merges.get(&pack(a, b)) {
                Some(&(rank, c)) if c == id && last_rank < Some(rank) => last_rank = Some(rank),
                _ => return None,
            }
        } else if !bpe.ignore_merges {
            // a token no merges reach would be taken whole by the rank engine only
            return None;
        }
    }
    Some(engine)
}

/// The rank engine's splitter for an expression with a hand-written scanner, which matches
/// every character (so `Split`'s stretches between matches never occur).
fn scanned(p: &pattern::Pattern) -> Option<Splitter> {
    let source = p.source();
    let named = |n: &str| pattern::named(n) == Some(source);
    if named("o200k") {
        Some(Splitter::Named(openai::Pattern::O200k))
    } else if named("cl100k")
        || pattern::named("cl100k").map(|s| s.replace("{1,3}+", "{1,3}")).as_deref() == Some(source)
    {
        // the second: the expression as files written for Oniguruma carry it
        Some(Splitter::Named(openai::Pattern::Cl100k))
    } else if named("llama3") {
        Some(Splitter::Regex(p.clone()))
    } else {
        None
    }
}

/// The rank engine's merges of `bytes` (two or more) with the token `skip` taken out of its
/// vocabulary, as `(start, end, id)` parts: the lowest-ranked join first, leftmost on ties.
/// `pair`: the id of each two-byte token (`NO_ID` for none), indexed by `first << 8 | second`.
fn merge_without<'a>(
    engine: &RankBpe,
    pair: &[u32],
    bytes: &[u8],
    skip: u32,
    (parts, joins): &'a mut (Vec<(u32, u32, u32)>, Vec<u32>),
) -> &'a [(u32, u32, u32)] {
    let rank = |a: usize, b: usize| {
        let r = if b - a == 2 {
            pair[(bytes[a] as usize) << 8 | bytes[a + 1] as usize]
        } else {
            engine.rank(&bytes[a..b]).unwrap_or(NO_ID)
        };
        if r == skip {
            NO_ID
        } else {
            r
        }
    };
    parts.clear();
    parts.extend(
        bytes
            .iter()
            .enumerate()
            .map(|(i, &b)| (i as u32, i as u32 + 1, engine.rank(&[b]).unwrap_or(NO_ID))),
    );
    // joins[i]: the rank of parts i and i + 1 joined
    joins.clear();
    joins.extend((0..parts.len() - 1).map(|i| rank(i, i + 2)));
    while let Some((k, &r)) = joins.iter().enumerate().min_by_key(|&(i, &r)| (r, i)) {
        if r == NO_ID {
            break;
        }
        parts[k] = (parts[k].0, parts[k + 1].1, r);
        parts.remove(k + 1);
        joins.remove(k);
        if k < joins.len() {
            joins[k] = rank(parts[k].0 as usize, parts[k + 1].1 as usize);
        }
        if k > 0 {
            joins[k - 1] = rank(parts[k - 1].0 as usize, parts[k].1 as usize);
        }
    }
    parts
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
