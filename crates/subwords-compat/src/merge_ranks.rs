//! When a byte-level BPE merges list encodes as a rank file does, so that the rank engine
//! ([`crate::tiktoken::RankBpe`]) can cut its words with the list's own ids: the check, made once
//! when a model is read, shared by a `tokenizer.json` (`huggingface::rank_path`) and our own
//! byte-level models ([`crate::own_rank`]).
//!
//! A merges list merges the listed pair of lowest *merge* rank (leftmost on ties, one
//! occurrence at a time: tokenizers' rule); the rank engine merges any adjacent pair whose
//! concatenation is a token, the one of lowest *token* rank (leftmost on ties). With a token's
//! rank taken to be its id, the two give the same ids on every word when these hold
//! ([`rank_engine`]):
//!
//! 1. the words are cut by an expression the rank engine has a scanner for ([`scanned`]: cl100k,
//!    o200k, Llama 3) and start as single bytes, each byte a token;
//! 2. every merge between byte-level tokens makes the token their bytes make;
//! 3. each token the rank engine can reach by merges has its *canonical split* listed as a merge:
//!    the two parts the rank engine leaves when it encodes the token's bytes with that token
//!    taken out of the vocabulary; and those merges rank in the order of the ids they make;
//! 4. the rank engine's vocabulary is the bytes and, when a word that is a token is taken whole
//!    (tokenizers' `ignore_merges`), every byte-level token; otherwise the tokens the merges
//!    make, each of which must be reachable.
//!
//! Why that suffices. Take any two adjacent parts x and y of the rank engine's state whose join
//! is a token t. The merges made inside t's bytes so far are those the engine makes on t's bytes
//! alone (a part never straddles their edges, and the lowest pair of a text, when it lies there,
//! is the lowest of those bytes), so (x, y) is t's canonical split: no other split of a token is
//! ever adjacent. By induction both engines hold the same parts: the rank engine joins the pair
//! of lowest id, leftmost; that pair is canonical, so listed; every other listed pair present
//! is the canonical split of a token of higher id, so its merge ranks higher, or the same pair
//! further right. The merges list joins the same pair, and both stop together, as a listed pair
//! makes a token the rank engine holds.
//!
//! Performance notes:
//! * Our own 32,000-row byte-level model on o200k's expression (`bench_encode_peers.py --own
//!   32000`) and its `tokenizer.json` both pass. Its 16 KB chunks, a fresh encoder, through
//!   Python, callgrind, the rank engine's part per byte: English 55.0 (o200k's file 48.6),
//!   multilingual 133.2 (118.1), code 58.2 (51.0). The smaller vocabulary leaves fewer chunks
//!   whole, so more merges (English 13.3 a byte in the small merges, o200k 9.1), and on
//!   multilingual 12.5 a byte goes to the merge scan of long pieces, which o200k never enters.

use subwords_core::hash::{pack, Map};
use subwords_core::spelling::{openai, pattern};

use crate::tiktoken::{RankBpe, Splitter};

/// No id: a pair that is no token, a byte that is no token.
pub const NO_ID: u32 = u32::MAX;
/// The span of an id that is no byte-level token.
const NO_SPAN: (u32, u32) = (u32::MAX, u32::MAX);

/// The raw bytes of every id of a vocabulary, laid end to end; an id that is no byte-level
/// token (a special, a piece of other characters) has none.
pub struct TokenBytes {
    flat: Vec<u8>,
    spans: Vec<(u32, u32)>,
}

impl TokenBytes {
    /// Ids `0..ids`, none of them a token yet.
    pub fn new(ids: usize) -> Self {
        TokenBytes { flat: Vec::new(), spans: vec![NO_SPAN; ids] }
    }

    /// Gives `id` the bytes `bytes` yields; when it yields a None, `id` stays no token.
    pub fn set(&mut self, id: u32, bytes: impl IntoIterator<Item = Option<u8>>) {
        let start = self.flat.len();
        for b in bytes {
            match b {
                Some(b) => self.flat.push(b),
                None => {
                    self.flat.truncate(start);
                    return;
                }
            }
        }
        self.spans[id as usize] = (start as u32, self.flat.len() as u32);
    }

    /// The bytes of `id`, if it is a byte-level token.
    pub fn get(&self, id: u32) -> Option<&[u8]> {
        let &(a, b) = self.spans.get(id as usize)?;
        (a != NO_SPAN.0).then(|| &self.flat[a as usize..b as usize])
    }
}

/// The rank engine standing in for the merges list `merges` (`(left, right) packed -> (rank,
/// result)`) over the vocabulary `tokens`, whose byte `b` is the id `bytes[b]`, with words cut
/// by `splitter`; `ignore_merges`: a word that is a token is taken whole. None when the list is
/// not one the rank engine encodes exactly (see the module header).
pub fn rank_engine(
    tokens: &TokenBytes,
    bytes: &[u32; 256],
    merges: &Map<u64, (u32, u32)>,
    ignore_merges: bool,
    splitter: Splitter,
) -> Option<RankBpe> {
    if bytes.contains(&NO_ID) {
        return None;
    }
    let top = tokens.spans.len().checked_sub(1)?;
    let raw = |id: u32| tokens.get(id);
    // check 2; `made`: the tokens the merges make
    let mut made = vec![false; top + 1];
    for (&key, &(_, c)) in merges {
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
    // the rank engine's vocabulary: the bytes, and the tokens of two bytes or more that the
    // list can give (any, under ignore_merges; else the ones the merges make)
    let kept = |id: u32| -> Option<&[u8]> {
        raw(id).filter(|r| r.len() >= 2 && (ignore_merges || made[id as usize]))
    };
    let mut ranked: Vec<(Vec<u8>, u32)> = (0..256).map(|b| (vec![b as u8], bytes[b])).collect();
    ranked.extend((0..=top as u32).filter_map(|id| kept(id).map(|r| (r.to_vec(), id))));
    let engine = RankBpe::new(ranked, Vec::new(), splitter).ok()?;
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
            match merges.get(&pack(a, b)) {
                Some(&(rank, c)) if c == id && last_rank < Some(rank) => last_rank = Some(rank),
                _ => return None,
            }
        } else if !ignore_merges {
            // a token no merges reach would be taken whole by the rank engine only
            return None;
        }
    }
    Some(engine)
}

/// The rank engine's splitter for an expression with a hand-written scanner, which matches
/// every character (so no text between matches is ever dropped or left whole).
pub fn scanned(p: &pattern::Pattern) -> Option<Splitter> {
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
