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

use subwords_core::hash::{pack, Map};
use subwords_core::spelling::{byte_to_char_table, openai, pattern};

use super::{Behavior, Bpe, PreTokenizer, NO_ID};
use crate::tiktoken::{RankBpe, Splitter};

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
    // each id's raw bytes (None: not a byte-level token)
    let chars = byte_to_char_table();
    let mut back: Map<char, u8> = Map::default();
    for (b, &c) in chars.iter().enumerate() {
        back.insert(c, b as u8);
    }
    let top = bpe.vocab.values().copied().max()? as usize;
    if top >= 2 * bpe.vocab.len() + (1 << 20) {
        return None; // too sparse for the rank engine's id table
    }
    let mut raw: Vec<Option<Box<[u8]>>> = vec![None; top + 1];
    for (t, &id) in &bpe.vocab {
        let bytes: Option<Vec<u8>> = t.chars().map(|c| back.get(&c).copied()).collect();
        raw[id as usize] = bytes.map(Vec::into_boxed_slice);
    }
    // check 2; `made`: the tokens the merges make
    let mut made: Map<u32, ()> = Map::default();
    for (&key, &(_, c)) in &bpe.merges {
        let part = |id: u32| raw.get(id as usize).and_then(|r| r.as_deref());
        let (Some(x), Some(y)) = (part((key >> 32) as u32), part(key as u32)) else {
            // a pair of symbols no byte-level word ever holds: it never acts
            continue;
        };
        let z = part(c)?;
        if z.len() != x.len() + y.len() || !z.starts_with(x) || !z.ends_with(y) {
            return None;
        }
        made.insert(c, ());
    }
    // the rank engine's vocabulary: the bytes, and the tokens of two bytes or more that
    // tokenizers can give (any, under ignore_merges; else the ones the merges make)
    let mut tokens: Vec<(Vec<u8>, u32)> =
        (0..256).map(|b| (vec![b as u8], bpe.byte_char[b])).collect();
    for (id, r) in raw.iter().enumerate() {
        if let Some(r) = r.as_deref().filter(|r| r.len() >= 2) {
            if bpe.ignore_merges || made.contains_key(&(id as u32)) {
                tokens.push((r.to_vec(), id as u32));
            }
        }
    }
    let engine = RankBpe::new(tokens, Vec::new(), splitter).ok()?;
    // check 3: each token's canonical split, a listed merge making it; the merge ranks of
    // those, by token id, must rise
    let mut parts = Vec::new();
    let mut ranks: Vec<(u32, u32)> = Vec::new();
    for (id, r) in raw.iter().enumerate() {
        let Some(r) = r.as_deref().filter(|r| r.len() >= 2) else { continue };
        let id = id as u32;
        if engine.rank(r) != Some(id) {
            continue; // not in the engine's vocabulary
        }
        merge_without(&engine, r, id, &mut parts);
        if let [(_, _, a), (_, _, b)] = parts[..] {
            match bpe.merges.get(&pack(a, b)) {
                Some(&(rank, c)) if c == id => ranks.push((id, rank)),
                _ => return None,
            }
        } else if !bpe.ignore_merges {
            // a token no merges reach would be taken whole by the rank engine only
            return None;
        }
    }
    ranks.sort_unstable();
    if ranks.windows(2).any(|w| w[0].1 >= w[1].1) {
        return None;
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
fn merge_without(engine: &RankBpe, bytes: &[u8], skip: u32, parts: &mut Vec<(u32, u32, u32)>) {
    let rank = |a: usize, b: usize| match engine.rank(&bytes[a..b]) {
        Some(r) if r != skip => r,
        _ => NO_ID,
    };
    parts.clear();
    parts.extend(
        bytes
            .iter()
            .enumerate()
            .map(|(i, &b)| (i as u32, i as u32 + 1, engine.rank(&[b]).unwrap_or(NO_ID))),
    );
    // joins[i]: the rank of parts i and i + 1 joined
    let mut joins: Vec<u32> = (0..parts.len() - 1).map(|i| rank(i, i + 2)).collect();
    loop {
        let Some((k, &r)) = joins.iter().enumerate().min_by_key(|&(i, &r)| (r, i)) else { break };
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
}
