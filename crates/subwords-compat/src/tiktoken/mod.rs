//! Rank BPE: tiktoken's `.tiktoken` rank files, encoded token for token as tiktoken does.
//!
//! A rank file lists byte strings with their ranks; a token's id is its rank. Encoding:
//! 1. the text is cut at the allowed special-token surfaces (each becomes its id);
//! 2. each stretch in between is cut into chunks by the encoding's pattern ([`Splitter`]: the
//!    hand-written scanner of an OpenAI pattern ([`split`]), or any other regex, of which only
//!    the matches are chunks, as tiktoken reads a pattern);
//! 3. a chunk that is itself a token becomes that one id; otherwise it starts as single bytes
//!    and, repeatedly, the adjacent pair whose concatenation has the lowest rank is merged
//!    (leftmost on ties), until no adjacent concatenation is a token.
//!
//! Step 3 never looks at how a token was made, only whether the concatenation is in the file:
//! that is tiktoken's definition, and what makes a rank file differ from a merges list.
//!
//! Complexity: the split is linear. A chunk of n bytes costs one hash lookup when it is a token,
//! else O(n·m) for m merges with a linear scan (n ≤ [`LONG_CHUNK`], where the scan beats a
//! heap), or O(n log n) with a heap beyond that, so hostile inputs like a megabyte of one letter
//! stay fast (tiktoken's own scan is quadratic there).
//!
//! Performance notes (measured on OpenAI's cl100k/o200k files, `benchmarks/bench_tiktoken.py`):
//! * The split is a hand-written scanner per pattern, about a fifth of the encoding time; tiktoken
//!   spends most of its time in its look-ahead regex.
//! * Chunks and concatenations of at most 15 bytes are looked up by a 128-bit integer key: one
//!   16-byte load and a mask ([`packed_at`]), the mask read from a table of 16,
//!   not shifted into place, and [`RankBpe::probe`]'s look-ahead inlined, not a closure called
//!   per chunk: o200k, 1 MB of 16 KB chunks, callgrind, English 56.2 -> 52.5 M instructions,
//!   multilingual 123.9 -> 119.7, code 56.2 -> 52.7. Hashing the byte slice instead cost a `memcmp` per
//!   hit, a variable-length copy a `memmove` per lookup, and building the key by the length's
//!   cases a mispredicted branch on text of mixed word lengths.
//! * Pieces of at most 255 bytes merge in arrays on the stack ([`RankBpe::merge_small`]):
//!   linked parts, each join a `u32` of (rank, place), the lowest
//!   the minimum of a fixed number of them. Against removing the merged part from the arrays
//!   and a `u64` per join: o200k, 16 KB chunks of multilingual lines, 95.6 M -> 60.1 M
//!   instructions in the merges (callgrind), a pinned pass 28.5-29.6 -> 34.6-36.8 MB/s.
//! * A part is named by its place among the first parts, not by its first byte, so a step
//!   scans as many joins as there were first parts (half the bytes of Cyrillic, a third of
//!   CJK's) and a run of 65 to 128 characters is no longer sent to [`RankBpe::merge_scan`]
//!   (~200 k instructions each); the minimum is taken in AVX2 lanes where the processor has
//!   them ([`lowest_avx2`]), and the join's lookup is inlined. 1 MB of 16 KB chunks, a fresh
//!   encoder, callgrind, the whole encoding: o200k English 69.3 -> 66.5 M, multilingual
//!   160.6 -> 130.1 M, code 65.0 -> 62.1 M; cl100k 67.8 -> 65.0, 164.9 -> 134.0, 66.8 -> 62.4
//!   (`examples/rank_chunks.rs`, the corpora's 16 KB chunks of `bench_encode_peers.py`). With
//!   the word cache's cheaper growth, o200k multilingual: 160.6 -> 129.0 M, mispredicted
//!   branches 1.94 -> 1.53 M, first-level data misses level at 1.21 -> 1.23 M (`--branch-sim`,
//!   `--cache-sim`).
//!   Room for 256 parts rather than 128, so no piece of at most 255 bytes is refused (runs of
//!   characters that are no token of a 32k model started past 128 parts, and went to the
//!   scan), 1 MB of 16 KB chunks, callgrind: our own 32k model as a rank file, multilingual
//!   140.2 -> 128.5 M, English 62.1 -> 61.8, code 63.8 -> 63.6; o200k 124.5 -> 123.9, 56.3 ->
//!   56.2, 56.4 -> 56.2.
//!   Tried and lost: the same with 64 parts, LLVM's own vector code for the minimum in the
//!   AVX2 copy (it gathered each lane across eight vectors with shuffles) and the lookup
//!   called: o200k English 69.3 -> 70.5 M, multilingual 160.6 -> 161.2 M.
//! * The chunks are split in batches of [`BATCH`] before they are looked up
//!   ([`RankBpe::probe`]): a chunk's key, its hash and its line of the bit filter are asked for
//!   when it is split, and [`PEEK`] chunks before its lookup the filter (arrived by then) says
//!   which slot to fetch, the short-token table's or, for a chunk that is no token, the word
//!   cache's. o200k, 16 KB chunks, without Python, CPU time pinned to one CPU, best of 5, 2
//!   rounds in turn with the engine that looked each chunk up as the scanner found it, a fresh
//!   encoder / a second pass: English 97.2-98.8 -> 114.7-117.6 / 160.6-168.3 -> 206.4-210.5
//!   MB/s, multilingual 29.8-31.9 -> 33.0-33.5 / 97.2-97.5 -> 130.6-131.6, code 82.8-83.9 ->
//!   96.8-98.9 / 128.8-137.3 -> 163.0-169.4.
//! * Tried and dropped (pinned in-process passes, o200k, 16 KB chunks; benchmarks/README.md has
//!   the figures): chunks looked up in blocks of 32 with every chunk's short-token slot
//!   prefetched, the filter not asked first (level fresh, slower warm); a direct-mapped 128 KB
//!   table of the 16 Ki lowest-ranked tokens probed first (slower fresh); whole chunks looked
//!   up without the filter (English warm 175-199 -> 155-168 MB/s); the merges' minimum over
//!   eight SSE2 lanes (half the mispredicts, 29.0-33.0 -> 27.2-29.2 MB/s on multilingual);
//!   the look-ahead at 8 chunks instead of [`PEEK`]'s 16, and batches of 128 (benchmarks/README.md).
//! * A chunk that needs merges is merged once; repeats are copied from the word cache kept per
//!   worker across calls, which a batch's threads share ([`RankState`]). Multilingual text
//!   (Cyrillic, CJK) is where this pays.
//! * Tried and dropped: a table (left id, right id) -> rank of every two-token split of every
//!   token, so merges need no byte keys: merges got ~15% faster but building it tripled the load
//!   time (1.4 M lookups for o200k), and the integer byte keys got most of the gain without it.
//!   Moving the scan/heap threshold between 24 and 256 bytes made no measurable difference.
//!   Linking the merge scan's parts instead of removing the merged one from their vector: the
//!   copy saved 5.8 instructions per byte of multilingual text (o200k), the linked walk cost 20.5.
//! * Two-byte tokens are read from a 64 Ki-entry table (`pair_rank`, 256 KB), not hashed, in
//!   the first round of every merge. A whole chunk of any length up to 15 bytes takes the one
//!   hashed lookup, with no branch on its length.
//! * The short-token table has a 256 KB bit filter in front ([`ShortTable`]): a chunk or a
//!   merge's concatenation that is no token mostly never reaches o200k's 5.3 MB of buckets.
//!   Interleaved pinned runs, o200k, 16 KB chunks: English 51.9-57.3 -> 58.0-61.6 MB/s,
//!   multilingual 13.8-14.7 -> 16.4-20.2.
//! * Tried and dropped, same runs: a 512 KB filter (level on English, multilingual 23.1-24.0 ->
//!   21.9-22.3 MB/s); the tokens ranked below 16 Ki in 768 KB of slots of their own, probed
//!   first (English 56.4-62.1 -> 54.9-55.1, multilingual 20.2-21.4 -> 17.7-17.8); a 192 KB
//!   direct-mapped table of the chunks met, with their one or two ids, in front of both the
//!   short-token table and the word cache (English 52.5-55.1 -> 49.5-49.6, multilingual
//!   15.1-15.2 -> 14.5-14.8): the cost is each new word's first probe, not the repeats.
//! * The filter sets two bits of one word a key (a blocked filter), not one bit: fewer chunks
//!   and joins that are no token reach the slots. o200k, 1 MB of multilingual 16 KB chunks, a
//!   fresh encoder (callgrind): 126.6 -> 130.5 M instructions, first-level read misses 1.072 ->
//!   1.046 M, mispredicts 1.442 -> 1.416 M; the thread's CPU time, pinned, best of 8, three
//!   rounds in turn under a load of 10: 37.5-39.0 -> 39.6-40.3 MB/s; English, code and cl100k
//!   level in time, though English runs 56.8 -> 60.8 M instructions (mispredicts 311 -> 303 k).
//! * Tried and lost, same measures: [`RankBpe::merge_small`] asking for each join's filter line
//!   and slot before resolving any (the first joins in two rounds, a merge step's two new joins
//!   together): 126.6 -> 141.8 M instructions, mispredicts 1.44 -> 1.55 M (the step's two only:
//!   139.1 M), CPU time level (37.0-40.8 -> 37.6-42.9 MB/s); the tables read once a cache line
//!   at load: level; [`DENSE`] at 1024 (4 MB): multilingual level, English 142-147 -> 135-138.
//! * The short-token table is one 64-byte line a bucket of three keys and their ranks
//!   ([`ShortTable`]), 80% full, o200k's in 5.3 MB, where linear probing over 24-byte slots at
//!   most half full took 12.6 MB (a quarter of the slots straddled two lines); a lookup asks
//!   for its bucket before it reads the filter. o200k, 1 MB of 16 KB chunks, a fresh encoder
//!   (callgrind): multilingual 125.2 -> 129.9 M instructions, first-level read misses 1.048 ->
//!   1.050 M, mispredicts 1.292 -> 1.286 M; English 61.5 -> 66.0 M, 443 -> 419 k, 312 -> 312 k.
//!   Pinned, best of 20, rounds in turn: six under a load of 2.5, English 135.6-146.7 ->
//!   142.9-149.0 MB/s, multilingual 41.7-45.3 -> 42.4-48.6, code 123.9-133.1 -> 126.6-133.8;
//!   ten under a load of 4.7, multilingual 43.8-46.1 -> 43.3-49.8 (medians 45.5 -> 47.0),
//!   code 128.6-141.6 -> 128.7-145.5, English level; eight under a load of 4.8, multilingual
//!   43.0-45.4 -> 44.4-47.1 (ahead in each), English 134.5-146.0 -> 134.6-147.1; cl100k and a
//!   32 k byte-level model level within the noise of loads of 5 to 6 (cl100k multilingual,
//!   callgrind: 139.1 -> 143.2 M instructions, mispredicts 1.572 -> 1.552 M). 6 MB less
//!   memory; 3% more instructions to load.
//! * Tried and lost, same measures: the buckets alone, the filter read before the bucket is
//!   asked for (level in time, multilingual 125.2 -> 128.9 M instructions); the same early
//!   request with the old slots (level); a branch on each place's key (English mispredicts
//!   312 -> 356 k); buckets 70% or 90% full (level); four keys a line with their ranks in a
//!   table of their own, both lines asked for (multilingual 135.0 M instructions, first-level
//!   read misses 1.22 M; English level to slower in time); the merges' early request for
//!   the bucket with the non-temporal hint (level); a one-byte tag of each place's hash in the
//!   line, only the key whose tag matches compared (callgrind, English 56.1 -> 57.5 M,
//!   multilingual 125.7 -> 126.6: the tag's test cost what the two saved comparisons did).
//! * A merge step joining two tokens both ranked below [`DENSE`] (512) reads the join's rank
//!   from a dense 1 MB table ([`RankBpe::join`]) instead of the short-token table. o200k, 16 KB
//!   chunks (callgrind): English 73.3 -> 71.8 instructions and 0.43 -> 0.41 mispredicts a
//!   byte, multilingual 212.0 -> 205.9 and 2.16 -> 2.09; interleaved pinned runs, English
//!   67.0-73.2 -> 74.4-80.3 MB/s, multilingual 23.1-26.1 -> 25.2-26.3; 15 M instructions
//!   (2-5 ms) more to load.
//! * A multi-byte character whose bytes provably join into its token before any merge crosses
//!   its edges starts [`RankBpe::merge_small`] as that one part ([`atoms`], with the proof;
//!   a table by code point, checked per occurrence by the bytes at its edges). 1 MB of
//!   multilingual lines, a fresh encoder, callgrind: the merges 73.0 -> 62.0 M instructions
//!   on o200k's 16 KB chunks; the whole encoding 209.7 -> 203.8 M (16 KB chunks) and 258.0 ->
//!   253.1 M (lines) on o200k, 197.9 -> 193.4 M and 246.6 -> 242.1 M on cl100k. The table
//!   costs 34.5 M instructions at o200k's load. Tried and lost: building it by sorting every
//!   token that ends or starts with a character's bytes, 63.3 M.
//! * Against the fastest installable encoders (`benchmarks/bench_encode_peers.py`, both
//!   vocabularies in one run, the machine otherwise idle): ahead of fastokens on cl100k in
//!   every cell; on o200k ahead on lines, prompts and two threads, and behind on one thread's
//!   16 KB chunks (0.82-0.99x), where fastokens runs fewer instructions on English and code and
//!   we stall on the merges' lookups on multilingual text; benchmarks/README.md has the figures
//!   and where the time goes, stage by stage (`benchmarks/bench_stages.py`).

/// The scanners moved to the core (trained models use them too); the old path still works.
pub use subwords_core::spelling::openai as split;

mod atoms;
mod shared;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use subwords_core::batch::Slots;
use subwords_core::encoder::{Allowed, Encoder};
use subwords_core::hash::Map;
use subwords_core::huge::HugeTable;
use subwords_core::word_cache::{pack, packed_at, WordCache, PACKED_LEN};

pub use split::Pattern;

/// How a rank encoder cuts text into chunks.
#[derive(Clone, Debug)]
pub enum Splitter {
    /// The hand-written scanner of one of OpenAI's patterns.
    Named(Pattern),
    /// Any other regular expression, run by fancy-regex as tiktoken runs it: only the matches
    /// are chunks, and text between matches is dropped, as tiktoken drops it.
    Regex(subwords_core::spelling::pattern::Pattern),
}

impl From<Pattern> for Splitter {
    fn from(p: Pattern) -> Self {
        Splitter::Named(p)
    }
}

impl Splitter {
    /// Calls `f(start, end)` with the byte span of every chunk of `text`, in order.
    #[inline]
    pub fn split(&self, text: &str, f: impl FnMut(usize, usize)) {
        match self {
            Splitter::Named(p) => p.split(text, f),
            Splitter::Regex(p) => p.matches(text, f),
        }
    }
}

use crate::{Error, Result};

/// Chunks longer than this (in bytes) merge with a heap instead of a scan.
pub const LONG_CHUNK: usize = 256;
/// Chunks of at most this many bytes merge in arrays on the stack ([`RankBpe::merge_small`]): a
/// byte offset fits a `u8`, and, a part being at least one byte, the part's place does too.
const SMALL_PIECE: usize = 255;
/// The room for parts in [`RankBpe::merge_small`]'s arrays: more than a piece of
/// [`SMALL_PIECE`] bytes can start as.
const SMALL_PARTS: usize = 1 << PLACE_BITS;
/// The bits of a part's place in a join of [`RankBpe::merge_small`].
const PLACE_BITS: u32 = 8;
const _: () = assert!(SMALL_PIECE < SMALL_PARTS);
/// [`RankBpe::merge_small`] keeps a rank and a part's place in one `u32`.
const SMALL_RANKS: u32 = (1 << (32 - PLACE_BITS)) - 1;
/// The longest token a rank file may hold, in bytes.
pub const MAX_TOKEN_BYTES: usize = 1 << 16;
/// Two tokens both ranked below this have their join's rank in a dense table
/// ([`RankBpe::join`]): a merge step between frequent tokens reads one word of it instead of
/// the short-token table.
const DENSE: usize = 512;

const NONE: u32 = u32::MAX;

/// Chunks split ahead of their lookups ([`RankBpe::probe`]).
const BATCH: usize = 64;
/// How many chunks ahead of a lookup its slot is asked for.
const PEEK: usize = 16;
/// Set in a [`Pending`]'s key once the filter has said its chunk is no token (the top bit of
/// the length byte, which no packed key has).
const NO_TOKEN: u128 = 1 << 127;

/// The chunks of one batch ([`RankBpe::probe`]), kept with a worker's state.
struct Batch([Pending; BATCH]);

impl Default for Batch {
    fn default() -> Self {
        Batch([Pending::default(); BATCH])
    }
}

/// A chunk split and not yet looked up: its packed key and the key's hash ([`mix`]), both 0
/// when it is too long for one, and its byte span.
#[derive(Clone, Copy, Default)]
struct Pending {
    key: u128,
    h: u64,
    a: u32,
    b: u32,
}

impl Pending {
    /// Whether the chunk is longer than [`PACKED_LEN`] bytes (no key): a test of its span, two
    /// instructions, where a 128-bit key compared with a constant took five.
    #[inline(always)]
    fn long(&self) -> bool {
        self.b - self.a > PACKED_LEN as u32
    }
}

/// A rank-BPE encoder: ranks, special tokens and the pattern that cuts text into chunks.
pub struct RankBpe {
    /// Tokens of at most [`PACKED_LEN`] bytes, keyed by [`pack`]: most chunks are short, and an
    /// integer key needs no byte comparison.
    short: ShortTable,
    /// The longer tokens.
    long: Map<Box<[u8]>, u32>,
    byte_rank: [u32; 256],
    /// The rank of every two-byte token, `NONE` for the pairs that are none, indexed by
    /// `first << 8 | second`: the first round of every merge, and two-byte chunks, read it
    /// instead of hashing.
    pair_rank: Box<[u32]>,
    /// The rank of the token `left ++ right`, `NONE` if it is none, for every two ranks below
    /// [`DENSE`], indexed by `left * DENSE + right` (1 MB).
    dense: HugeTable<u32>,
    /// Whether every rank is below [`SMALL_RANKS`], as [`RankBpe::merge_small`] needs.
    narrow: bool,
    /// Whether the processor has AVX2 ([`RankBpe::merge_small`] takes its minimum in lanes).
    avx2: bool,
    /// The characters [`RankBpe::merge_small`] may start as one part ([`atoms`]).
    atoms: atoms::Atoms,
    /// id -> (offset, length) in `token_bytes`; `(NONE, 0)` for ids with no token.
    spans: Vec<(u32, u32)>,
    token_bytes: Vec<u8>,
    specials: Vec<(String, u32)>,
    splitter: Splitter,
    /// Per-worker scratch kept warm across calls (the core's batch runner).
    slots: Slots<RankState>,
}

impl RankBpe {
    /// An encoder from `(token bytes, rank)` pairs and `(surface, id)` special tokens.
    ///
    /// Refuses duplicate tokens or ranks, a missing single byte (every text must be encodable),
    /// special ids that collide with ranks, and ids so sparse the id table would be wasteful.
    pub fn new(
        tokens: Vec<(Vec<u8>, u32)>,
        specials: Vec<(String, u32)>,
        pattern: impl Into<Splitter>,
    ) -> Result<Self> {
        let mut flat = Vec::new();
        let mut entries = Vec::with_capacity(tokens.len());
        for (bytes, rank) in tokens {
            entries.push((flat.len(), bytes.len(), rank));
            flat.extend_from_slice(&bytes);
        }
        RankBpe::from_flat(flat, entries, specials, pattern)
    }

    /// Parses a `.tiktoken` rank file: one `base64(token) rank` line per token.
    pub fn from_rank_file(
        data: &[u8],
        specials: Vec<(String, u32)>,
        pattern: impl Into<Splitter>,
    ) -> Result<Self> {
        let (flat, entries) = parse_rank_file(data)?;
        RankBpe::from_flat(flat, entries, specials, pattern)
    }

    /// From token bytes laid end to end in `flat` and (offset, length, rank) entries.
    fn from_flat(
        mut flat: Vec<u8>,
        entries: Vec<Entry>,
        specials: Vec<(String, u32)>,
        pattern: impl Into<Splitter>,
    ) -> Result<Self> {
        let mut short = ShortTable::with_room(entries.len());
        let mut long: Map<Box<[u8]>, u32> = Map::default();
        let mut max_id = 0u32;
        for &(offset, len, rank) in &entries {
            let bytes = &flat[offset..offset + len];
            if bytes.is_empty() || len > MAX_TOKEN_BYTES {
                return Err(Error::ModelFile(format!(
                    "rank {rank}: a token must be 1 to {MAX_TOKEN_BYTES} bytes long, this one is {len}"
                )));
            }
            if rank == NONE {
                return Err(Error::ModelFile(format!(
                    "rank {rank} is out of range (ranks are below {NONE})"
                )));
            }
            max_id = max_id.max(rank);
            let old = if len <= PACKED_LEN {
                short.insert(pack(bytes), rank)
            } else {
                long.insert(bytes.into(), rank)
            };
            if let Some(old) = old {
                return Err(Error::ModelFile(format!(
                    "token {:?} appears twice (ranks {old} and {rank}); each token must have one rank",
                    String::from_utf8_lossy(bytes)
                )));
            }
        }
        let narrow = max_id < SMALL_RANKS;
        let mut byte_rank = [NONE; 256];
        for b in 0..=255u8 {
            match short.get(pack(&[b])) {
                r if r != NONE => byte_rank[b as usize] = r,
                _ => {
                    return Err(Error::ModelFile(format!(
                        "the single byte 0x{b:02x} has no rank; a byte-level rank file must rank all 256 bytes so that every text can be encoded"
                    )))
                }
            }
        }
        let mut pair_rank = vec![NONE; 1 << 16].into_boxed_slice();
        for &(offset, len, rank) in &entries {
            if len == 2 {
                pair_rank[(flat[offset] as usize) << 8 | flat[offset + 1] as usize] = rank;
            }
        }
        let dense = dense_joins(&flat, &entries, &short, &long);
        let atoms = if narrow {
            atoms::Atoms::build(&flat, &entries, |b| {
                if b.len() <= PACKED_LEN {
                    short.get(pack(b))
                } else {
                    long.get(b).copied().unwrap_or(NONE)
                }
            })
        } else {
            atoms::Atoms::none()
        };
        let mut surfaces: Vec<&str> = Vec::new();
        for (surface, id) in &specials {
            if surface.is_empty() {
                return Err(Error::ModelFile("a special token's surface is empty".into()));
            }
            if *id == NONE {
                return Err(Error::ModelFile(format!(
                    "special token {surface:?}: id {id} is out of range"
                )));
            }
            if surfaces.contains(&surface.as_str()) {
                return Err(Error::ModelFile(format!("special token {surface:?} is listed twice")));
            }
            surfaces.push(surface);
            max_id = max_id.max(*id);
        }
        let count = entries.len() + specials.len();
        if max_id as usize >= 2 * count + (1 << 20) {
            return Err(Error::ModelFile(format!(
                "ids are too sparse: the largest is {max_id} but there are only {count} tokens; rank files number their tokens 0..n-1"
            )));
        }
        let mut spans = vec![(NONE, 0u32); max_id as usize + 1];
        let mut place = |id: u32, offset: usize, len: usize, what: &str| -> Result<()> {
            let slot = &mut spans[id as usize];
            if slot.0 != NONE {
                return Err(Error::ModelFile(format!(
                    "id {id} is used twice ({what}); each id must name one token"
                )));
            }
            *slot = (offset as u32, len as u32);
            Ok(())
        };
        for &(offset, len, rank) in &entries {
            place(rank, offset, len, "rank")?;
        }
        for (surface, id) in &specials {
            place(
                *id,
                flat.len(),
                surface.len(),
                "a special token's id equals a rank or another special token's",
            )?;
            flat.extend_from_slice(surface.as_bytes());
        }
        if flat.len() > (u32::MAX - 1) as usize {
            return Err(Error::ModelFile("the tokens add up to more than 4 GiB".into()));
        }
        Ok(RankBpe {
            short,
            long,
            byte_rank,
            pair_rank,
            dense,
            narrow,
            avx2: has_avx2(),
            atoms,
            spans,
            token_bytes: flat,
            specials,
            splitter: pattern.into(),
            slots: Slots::default(),
        })
    }

    /// The named pattern, or None for a regular expression's splitter.
    pub fn pattern(&self) -> Option<Pattern> {
        match &self.splitter {
            Splitter::Named(p) => Some(*p),
            Splitter::Regex(_) => None,
        }
    }

    pub fn splitter(&self) -> &Splitter {
        &self.splitter
    }

    /// One more than the largest id (tiktoken's `n_vocab`).
    pub fn vocab_size(&self) -> usize {
        self.spans.len()
    }

    /// The number of ranked tokens (specials excluded).
    pub fn rank_count(&self) -> usize {
        self.short.len() + self.long.len()
    }

    pub fn specials(&self) -> &[(String, u32)] {
        &self.specials
    }

    /// The rank of a byte string, if it is a token.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() <= PACKED_LEN {
            Some(self.short.get(pack(bytes))).filter(|&r| r != NONE)
        } else {
            self.long.get(bytes).copied()
        }
    }

    /// The bytes of an id (a special token's are its surface).
    pub fn token(&self, id: u32) -> Option<&[u8]> {
        let &(offset, len) = self.spans.get(id as usize)?;
        if offset == NONE {
            return None;
        }
        self.token_bytes.get(offset as usize..offset as usize + len as usize)
    }

    /// Whether `id` is a special token's.
    pub fn is_special(&self, id: u32) -> bool {
        self.specials.iter().any(|&(_, i)| i == id)
    }

    /// The chunks of `text` under this encoding's pattern, as byte spans.
    pub fn split(&self, text: &str) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        self.splitter.split(text, |a, b| v.push((a, b)));
        v
    }

    /// Ids of `text` with the specials at `allowed` (indices into [`RankBpe::specials`])
    /// recognised; every other special surface is spelled as ordinary text.
    pub fn encode(&self, text: &str, allowed: &[usize]) -> Vec<u32> {
        self.slots.with(0, |s| self.encode_with(text, allowed, s))
    }

    fn encode_with(&self, text: &str, allowed: &[usize], scratch: &mut RankState) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_into(text, allowed, scratch, &mut out);
        out
    }

    /// [`RankBpe::encode_with`] appending to `out` (a batch's buffer of many texts).
    fn encode_into(
        &self,
        text: &str,
        allowed: &[usize],
        scratch: &mut RankState,
        out: &mut Vec<u32>,
    ) {
        if allowed.is_empty() {
            self.encode_ordinary_into(text, out, scratch);
            return;
        }
        let mut pos = 0;
        let mut finder = SpecialFinder::new(self, allowed, text);
        while let Some((start, end, id)) = finder.next_from(pos) {
            self.encode_ordinary_into(&text[pos..start], out, scratch);
            out.push(id);
            pos = end;
        }
        self.encode_ordinary_into(&text[pos..], out, scratch);
    }

    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<u32>, scratch: &mut RankState) {
        let bytes = text.as_bytes();
        // the chunks in batches: each chunk's key and hash first, its filter line asked for;
        // then the lookups, each asking for a slot a few chunks ahead ([`RankBpe::probe`])
        let mut batch = scratch.batch.take().unwrap_or_default();
        let mut n = 0;
        self.splitter.split(
            text,
            #[inline(always)]
            |a, b| {
                batch.0[n] = self.harvest(bytes, a, b);
                n += 1;
                if n == BATCH {
                    self.probe(bytes, &mut batch.0[..BATCH], out, scratch);
                    n = 0;
                }
            },
        );
        self.probe(bytes, &mut batch.0[..n], out, scratch);
        scratch.batch = Some(batch);
    }

    /// A chunk's [`Pending`]: its key and hash, and the filter's line for it asked for.
    #[inline(always)]
    fn harvest(&self, bytes: &[u8], a: usize, b: usize) -> Pending {
        let n = b - a;
        if n <= PACKED_LEN {
            let key = packed_at(bytes, a, n);
            let h = mix(key);
            self.short.prefetch_filter(h);
            Pending { key, h, a: a as u32, b: b as u32 }
        } else {
            Pending { key: 0, h: 0, a: a as u32, b: b as u32 }
        }
    }

    /// The ids of the chunks of `batch`, in order. [`PEEK`] chunks ahead of the one looked
    /// up, the filter (fetched by then) says where that chunk will be looked up: the
    /// short-token table's slot is asked for when its bit is set, the word cache's otherwise
    /// (and a clear bit is kept, so that chunk goes straight to the word cache).
    #[inline(never)]
    fn probe(
        &self,
        bytes: &[u8],
        batch: &mut [Pending],
        out: &mut Vec<u32>,
        scratch: &mut RankState,
    ) {
        let n = batch.len();
        for p in &mut batch[..PEEK.min(n)] {
            self.peek(p, &scratch.words);
        }
        for i in 0..n {
            if i + PEEK < n {
                self.peek(&mut batch[i + PEEK], &scratch.words);
            }
            let p = batch[i];
            let (a, b) = (p.a as usize, p.b as usize);
            if p.long() {
                self.encode_rest(&bytes[a..b], out, scratch);
                continue;
            }
            let r = if p.key & NO_TOKEN != 0 { NONE } else { self.short.get_slots(p.key, p.h) };
            if r != NONE {
                out.push(r);
            } else {
                self.encode_short_rest(p.key & !NO_TOKEN, &bytes[a..b], out, scratch);
            }
        }
    }

    /// [`RankBpe::probe`]'s look ahead at a chunk: its slot asked for, the short-token table's
    /// if the filter passes it, else the word cache's (and the chunk marked [`NO_TOKEN`]).
    /// Inlined: as a closure it was called, about ten instructions a chunk more.
    #[inline(always)]
    fn peek(&self, p: &mut Pending, words: &WordCache<u32>) {
        if !p.long() {
            if self.short.passes(p.h) {
                self.short.prefetch_slot(p.h);
            } else {
                words.prefetch(p.key);
                p.key |= NO_TOKEN;
            }
        }
    }

    /// A chunk of at most [`PACKED_LEN`] bytes, packed as `key`, that is not a token: its ids
    /// from the word cache, or merged once and stored there.
    #[inline(never)]
    fn encode_short_rest(
        &self,
        key: u128,
        chunk: &[u8],
        out: &mut Vec<u32>,
        scratch: &mut RankState,
    ) {
        if !scratch.words.extend_packed(key, out) {
            let start = out.len();
            if self.narrow {
                self.merge_short(chunk, out);
            } else {
                self.merge_scan(chunk, out, &mut scratch.parts);
            }
            scratch.words.insert_packed(key, &out[start..]);
        }
    }

    /// A chunk longer than [`PACKED_LEN`] bytes: a longer token, or merges (each word merged
    /// once, then copied from the word cache).
    #[inline(never)]
    fn encode_rest(&self, chunk: &[u8], out: &mut Vec<u32>, scratch: &mut RankState) {
        if let Some(&r) = self.long.get(chunk) {
            out.push(r);
            return;
        }
        if chunk.len() > LONG_CHUNK {
            // rare, and not kept: a hostile megabyte of one letter would be a megabyte key
            self.merge_heap(chunk, out);
            return;
        }
        if !scratch.words.extend_into(chunk, out) {
            let start = out.len();
            if chunk.len() <= SMALL_PIECE && self.narrow {
                self.merge_small(chunk, out);
            } else {
                self.merge_scan(chunk, out, &mut scratch.parts);
            }
            scratch.words.insert(chunk, &out[start..]);
        }
    }

    /// The ids of one chunk's bytes, appended to `out`, without the pre-split: tiktoken's
    /// `encode_single_piece` and the unstable-token search of `encode_with_unstable`.
    #[inline]
    pub fn encode_chunk(&self, chunk: &[u8], out: &mut Vec<u32>, parts: &mut Vec<Part>) {
        if chunk.len() == 1 {
            out.push(self.byte_rank[chunk[0] as usize]);
        } else if let Some(r) = self.rank(chunk) {
            out.push(r);
        } else if chunk.len() <= LONG_CHUNK {
            self.merge_scan(chunk, out, parts);
        } else {
            self.merge_heap(chunk, out);
        }
    }

    /// [`RankBpe::merge_scan`] for a piece of 2 to [`SMALL_PIECE`] bytes, in arrays on the
    /// stack. The piece is copied into a zero-padded buffer, so the key of any stretch
    /// of it is one 16-byte load and a mask ([`packed_at`]). A part is named by its place among
    /// the first parts and linked to its neighbours, so a merge moves nothing; each part's join
    /// with the next is one `u32`, its rank above the part's place (leftmost on ties), and the
    /// lowest is the minimum of a fixed number of them, with no branch per part (eight lanes at
    /// a time where the processor has AVX2). Ranks must be below [`SMALL_RANKS`] (`narrow`);
    /// the callers send other files' pieces to [`RankBpe::merge_scan`].
    fn merge_small(&self, piece: &[u8], out: &mut Vec<u32>) {
        self.merge_small_by::<SMALL_PARTS, { SMALL_PIECE + 16 }>(piece, out)
    }

    /// [`RankBpe::merge_small`] for a piece of at most [`PACKED_LEN`] bytes (so of at most as
    /// many parts): arrays of 16 parts, less to set up.
    fn merge_short(&self, piece: &[u8], out: &mut Vec<u32>) {
        self.merge_small_by::<16, 32>(piece, out)
    }

    /// [`RankBpe::merge_small`] with arrays of `P` parts and a buffer of `B` bytes.
    #[inline(always)]
    fn merge_small_by<const P: usize, const B: usize>(&self, piece: &[u8], out: &mut Vec<u32>) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the processor has AVX2
            return unsafe { self.merge_small_avx2::<P, B>(piece, out) };
        }
        self.merge_small_in::<false, P, B>(piece, out)
    }

    /// [`RankBpe::merge_small`] compiled for AVX2 whole (the minimum over the joins in lanes).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn merge_small_avx2<const P: usize, const B: usize>(&self, piece: &[u8], out: &mut Vec<u32>) {
        self.merge_small_in::<true, P, B>(piece, out)
    }

    /// The body of [`RankBpe::merge_small`]: a piece of fewer than `P` bytes (so of fewer than
    /// `P` parts) and at most `B - 16`; `LANES`: the minimum over the joins in AVX2's lanes (only in code compiled for it).
    #[inline(always)]
    fn merge_small_in<const LANES: bool, const P: usize, const B: usize>(
        &self,
        piece: &[u8],
        out: &mut Vec<u32>,
    ) {
        let n = piece.len();
        debug_assert!(n >= 2 && n < P && n + 16 <= B && P <= SMALL_PARTS && self.narrow);
        let mut buf = [0u8; B];
        buf[..n].copy_from_slice(piece);
        // part k is buf[start[k]..start[next[k]]], its token token[k]; joins[k] is the rank of
        // it joined with the next part, shifted up by PLACE_BITS and or'ed with k (u32::MAX for
        // none, for the last part, and for the parts merged into their left neighbour)
        let mut joins = [u32::MAX; P];
        let mut token = [0u32; P];
        // one more: the end of the last part
        let mut start = [0u8; 257];
        let mut next = [0u8; P];
        let mut prev = [0u8; P];
        let key = |r: u32, k: usize| if r == NONE { u32::MAX } else { r << PLACE_BITS | k as u32 };
        let rank_of = |left, right, a: u8, b: u8| self.joined(&buf, left, right, a, b);
        // the first parts: the bytes, but a character that may start whole is one part
        // (`atoms`: the same merges follow as from its bytes)
        let (mut i, mut m) = (0, 0);
        while i < n {
            let b = buf[i];
            let (len, t) = match b {
                0xC0.. => self.atoms.at(&buf, i, n).unwrap_or((1, self.byte_rank[b as usize])),
                _ => (1, self.byte_rank[b as usize]),
            };
            token[m] = t;
            start[m] = i as u8;
            next[m] = (m + 1) as u8;
            prev[m] = m.wrapping_sub(1) as u8;
            m += 1;
            i += len;
        }
        start[m] = n as u8;
        for k in 0..m - 1 {
            let (a, e) = (start[k], start[k + 2]);
            let r = if e - a == 2 {
                self.pair(buf[a as usize], buf[a as usize + 1])
            } else {
                rank_of(token[k], token[k + 1], a, e)
            };
            joins[k] = key(r, k);
        }
        let width = (m - 1).div_ceil(8) * 8;
        loop {
            let live = &joins[..width];
            let best = if LANES {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: LANES is set only in `merge_small_avx2`, which runs on AVX2 only
                unsafe {
                    lowest_avx2(live)
                }
                #[cfg(not(target_arch = "x86_64"))]
                unreachable!()
            } else {
                live.iter().fold(u32::MAX, |a, &b| a.min(b))
            };
            if best == u32::MAX {
                break;
            }
            // part j joins part k, which then ends where j ended
            let (k, r) = ((best as usize) & (SMALL_PARTS - 1), best >> PLACE_BITS);
            let j = next[k] as usize;
            let e = next[j] as usize;
            token[k] = r;
            next[k] = e as u8;
            joins[j] = u32::MAX;
            joins[k] = if e < m {
                prev[e] = k as u8;
                key(rank_of(r, token[e], start[k], start[next[e] as usize]), k)
            } else {
                u32::MAX
            };
            if k > 0 {
                let p = prev[k] as usize;
                joins[p] = key(rank_of(token[p], r, start[p], start[e]), p);
            }
        }
        let mut k = 0;
        while k < m {
            out.push(token[k]);
            k = next[k] as usize;
        }
    }

    /// The rank of tokens `left` and `right`, `buf[a..b]`, joined, or `NONE` ([`RankBpe::join`],
    /// else the bytes' key, `buf` padded by 16 bytes). Inlined into the merges: called, with
    /// its registers saved and restored, it was a fifth of the lookup.
    #[inline(always)]
    fn joined(&self, buf: &[u8], left: u32, right: u32, a: u8, b: u8) -> u32 {
        if let Some(r) = self.join(left, right) {
            return r;
        }
        let (a, b) = (a as usize, b as usize);
        let len = b - a;
        if len <= PACKED_LEN {
            self.short.get(packed_at(buf, a, len))
        } else {
            self.long.get(&buf[a..b]).copied().unwrap_or(NONE)
        }
    }

    /// The merge loop with a linear scan for the lowest pair: the fastest for short chunks.
    fn merge_scan(&self, piece: &[u8], out: &mut Vec<u32>, parts: &mut Vec<Part>) {
        let n = piece.len();
        parts.clear();
        for (i, &b) in piece.iter().enumerate() {
            let pair = if i + 2 <= n { self.pair(b, piece[i + 1]) } else { NONE };
            parts.push(Part { start: i as u32, pair, token: self.byte_rank[b as usize] });
        }
        parts.push(Part { start: n as u32, pair: NONE, token: NONE });
        loop {
            let (mut best, mut k) = (NONE, 0);
            for (i, p) in parts.iter().enumerate() {
                if p.pair < best {
                    best = p.pair;
                    k = i;
                }
            }
            if best == NONE {
                break;
            }
            // parts k and k+1 become one token; the pairs touching it change
            parts[k].token = best;
            parts[k].pair = match parts.get(k + 3) {
                Some(after) => self.join(best, parts[k + 2].token).unwrap_or_else(|| {
                    self.concat_rank(&piece[parts[k].start as usize..after.start as usize])
                }),
                None => NONE,
            };
            if k > 0 {
                parts[k - 1].pair = self.join(parts[k - 1].token, best).unwrap_or_else(|| {
                    self.concat_rank(
                        &piece[parts[k - 1].start as usize..parts[k + 2].start as usize],
                    )
                });
            }
            parts.remove(k + 1);
        }
        out.extend(parts[..parts.len() - 1].iter().map(|p| p.token));
    }

    /// The rank of the join of tokens `left` and `right` from the dense table when both are
    /// ranked below [`DENSE`] (`Some(NONE)` when the join is no token), else None.
    #[inline(always)]
    fn join(&self, left: u32, right: u32) -> Option<u32> {
        if (left | right) < DENSE as u32 {
            Some(self.dense[left as usize * DENSE + right as usize])
        } else {
            None
        }
    }

    #[inline(always)]
    fn concat_rank(&self, bytes: &[u8]) -> u32 {
        if bytes.len() == 2 {
            return self.pair(bytes[0], bytes[1]);
        }
        self.rank(bytes).unwrap_or(NONE)
    }

    /// The rank of the two-byte token `a b`, or `NONE`.
    #[inline(always)]
    fn pair(&self, a: u8, b: u8) -> u32 {
        self.pair_rank[(a as usize) << 8 | b as usize]
    }

    /// The same merges in the same order with a heap of candidate pairs keyed (rank, start):
    /// the lowest rank, leftmost on ties, as the scan picks. Stale entries (a side already
    /// merged into something else) are skipped when popped.
    fn merge_heap(&self, piece: &[u8], out: &mut Vec<u32>) {
        let n = piece.len();
        // Parts are identified by their start byte; `next[s]` is where the part after it starts.
        let mut next: Vec<u32> = (1..=n as u32).collect();
        let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
        let mut token: Vec<u32> = piece.iter().map(|&b| self.byte_rank[b as usize]).collect();
        let mut alive = vec![true; n];
        let mut heap: BinaryHeap<Reverse<(u32, u32, u32)>> = BinaryHeap::new();
        for i in 0..n.saturating_sub(1) {
            let r = self.concat_rank(&piece[i..i + 2]);
            if r != NONE {
                heap.push(Reverse((r, i as u32, i as u32 + 2)));
            }
        }
        let end_of = |next: &[u32], s: u32| -> u32 {
            if (s as usize) < n {
                next[s as usize]
            } else {
                n as u32
            }
        };
        while let Some(Reverse((rank, a, end))) = heap.pop() {
            let b = next[a as usize];
            if !alive[a as usize] || b as usize >= n || end_of(&next, b) != end {
                continue;
            }
            // merge a with b
            alive[b as usize] = false;
            next[a as usize] = end;
            if (end as usize) < n {
                prev[end as usize] = a;
            }
            token[a as usize] = rank;
            let p = prev[a as usize];
            if p != u32::MAX {
                let r = self.concat_rank(&piece[p as usize..end as usize]);
                if r != NONE {
                    heap.push(Reverse((r, p, end)));
                }
            }
            if (end as usize) < n {
                let e2 = end_of(&next, end);
                let r = self.concat_rank(&piece[a as usize..e2 as usize]);
                if r != NONE {
                    heap.push(Reverse((r, a, e2)));
                }
            }
        }
        let mut s = 0usize;
        while s < n {
            out.push(token[s]);
            s = next[s] as usize;
        }
    }

    /// The bytes of `ids` joined; an id with no token is an error.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            match self.token(id) {
                Some(b) => out.extend_from_slice(b),
                None => {
                    return Err(Error::UnknownPiece(format!(
                        "id {id} is not a token of this vocabulary (ids run from 0 to {}, with gaps where the file has none)",
                        self.vocab_size().saturating_sub(1)
                    )))
                }
            }
        }
        Ok(out)
    }
}

/// What one worker keeps from text to text and from call to call ([`Slots`]): the merge buffer,
/// reused across chunks, and the ids of the chunks that needed merges, so a repeated word is
/// merged once. Results never depend on it.
///
/// It is the word cache of the other engines, kept per slot, its words shared by a batch's
/// threads ([`Slots::streamed`]). Made afresh per call and per thread, each thread merged the
/// words the other had met: table 3 of `bench_encode_load.py` (cl100k, 4 MB of multilingual
/// lines into an array) ran 7% more instructions on 2 threads than on 1 (callgrind), 1.62-1.76x.
#[derive(Default)]
pub struct RankState {
    parts: Vec<Part>,
    words: WordCache<u32>,
    batch: Option<Box<Batch>>,
}

/// The lowest of `joins`, a multiple of 8 of them: eight lanes of minima, then one reduction.
/// (LLVM's own vector code for the loop in a function compiled for AVX2 gathered each lane
/// across eight vectors with shuffles, and cost more instructions than the scalar loop.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn lowest_avx2(joins: &[u32]) -> u32 {
    use std::arch::x86_64::*;
    let mut m = _mm256_set1_epi32(-1);
    for c in joins.chunks_exact(8) {
        // SAFETY: `c` is 8 readable `u32`s
        m = _mm256_min_epu32(m, unsafe { _mm256_loadu_si256(c.as_ptr().cast()) });
    }
    let h = _mm_min_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
    let h = _mm_min_epu32(h, _mm_shuffle_epi32::<0b11_10>(h));
    let h = _mm_min_epu32(h, _mm_shuffle_epi32::<0b01>(h));
    _mm_cvtsi128_si32(h) as u32
}

/// Whether the processor has AVX2.
fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Merge state of one part of a chunk: where it starts, the rank of it joined with the next part
/// (`NONE` if that is not a token), and its own token id.
#[derive(Clone, Copy, Debug)]
pub struct Part {
    start: u32,
    pair: u32,
    token: u32,
}

/// A hint to bring the line at `p` into the first-level cache; any address will do.
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing the program sees
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The ranks of the tokens of at most [`PACKED_LEN`] bytes, keyed by [`pack`]: open addressing
/// over buckets of one 64-byte cache line each, three keys and their ranks a bucket, so a
/// lookup reads one line, hit or miss, unless its home bucket overflowed. A key's top byte is
/// its length, never 0, so a key of 0 is an empty place. A bucket's places are filled in
/// order and a key goes to the next bucket only when its home is full, so a bucket whose last
/// place is empty proves an absent key absent. The home is the high half of the hash times
/// the bucket count (any count, not a power of two), which is sized for the buckets to be
/// [`FILL_PERCENT`] full: o200k's short tokens in 5.3 MB, not the 12.6 MB of 24-byte slots at
/// most half full that linear probing took (a quarter of them straddled two lines).
///
/// In front of the buckets, a filter of 2 to the [`FILTER_BITS`] bits, two of one 64-bit
/// word set for every key in the table (256 KB, which stays in the processor's second-level
/// cache where the buckets do not): a concatenation in the merges, or a chunk, that is no
/// token is mostly answered by the filter alone.
struct ShortTable {
    buckets: HugeTable<Bucket>,
    filter: Box<[u64]>,
    len: usize,
    /// The most keys the buckets take before they are rebuilt larger.
    room: usize,
}

/// The filter's size is 2 to this many bits.
const FILTER_BITS: u32 = 21;

/// The share of a [`ShortTable`]'s places filled at most, in percent.
const FILL_PERCENT: usize = 80;

/// The keys a [`Bucket`] holds.
const BUCKET_KEYS: usize = 3;

/// The hash of a packed key ([`pack`]): its top bits place it in the table and in the filter.
#[inline(always)]
fn mix(key: u128) -> u64 {
    let (lo, hi) = (key as u64, (key >> 64) as u64);
    (lo.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ hi).wrapping_mul(0xd6e8_feb8_6659_fd93)
}

/// One cache line of a [`ShortTable`]: keys filled from the first place on (0 is empty), and
/// their ranks (`NONE` where no key is).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Bucket {
    keys: [u128; BUCKET_KEYS],
    /// One more than the keys: the line's last four bytes, and an index a mask keeps in range.
    ranks: [u32; BUCKET_KEYS + 1],
}

impl Bucket {
    /// Bit k set when place k holds `key`: 1, 2 or 4 on a hit, else 0.
    #[inline(always)]
    fn places_of(&self, key: u128) -> usize {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set_epi64x};
            // SAFETY: SSE2 is part of every x86-64 processor; these only compute on values
            unsafe {
                let v = |k: u128| _mm_set_epi64x((k >> 64) as i64, k as i64);
                let want = v(key);
                let mut hit = 0usize;
                for k in 0..BUCKET_KEYS {
                    // 16 bits, all set only when all 16 bytes are equal
                    let same = _mm_movemask_epi8(_mm_cmpeq_epi8(want, v(self.keys[k]))) as usize;
                    hit |= (same + 1) >> 16 << k;
                }
                hit
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut hit = 0usize;
            for k in 0..BUCKET_KEYS {
                hit |= ((self.keys[k] == key) as usize) << k;
            }
            hit
        }
    }
}

const EMPTY_BUCKET: Bucket = Bucket { keys: [0; BUCKET_KEYS], ranks: [NONE; BUCKET_KEYS + 1] };

impl ShortTable {
    /// A table for `n` keys.
    fn with_room(n: usize) -> Self {
        let places = (n.max(1) * 100).div_ceil(FILL_PERCENT);
        let count = places.div_ceil(BUCKET_KEYS);
        ShortTable {
            buckets: HugeTable::filled(count, EMPTY_BUCKET),
            filter: vec![0u64; (1 << FILTER_BITS) / 64].into_boxed_slice(),
            len: 0,
            // below the places there are, so some bucket always has room and every probe ends
            room: (count * BUCKET_KEYS * FILL_PERCENT / 100).min(count * BUCKET_KEYS - 1),
        }
    }

    /// The home bucket of hash `h`: the high half of `h` times the bucket count.
    #[inline(always)]
    fn home(&self, h: u64) -> usize {
        ((h as u128 * self.buckets.len() as u128) >> 64) as usize
    }

    /// The rank of `key`, or `NONE`: first its bit in the filter, which is clear for most keys
    /// that are no token, so those never reach the buckets.
    #[inline(always)]
    fn get(&self, key: u128) -> u32 {
        self.get_hashed(key, mix(key))
    }

    /// [`ShortTable::get`] given the key's hash `h` ([`mix`]). The key's bucket is asked for
    /// before the filter is read, so a key that passes does not wait for the two in turn.
    #[inline(always)]
    fn get_hashed(&self, key: u128, h: u64) -> u32 {
        self.prefetch_slot(h);
        if !self.passes(h) {
            return NONE;
        }
        self.get_slots(key, h)
    }

    /// The filter's word for hash `h` (its top bits) and the key's two bits in it (two
    /// 6-bit fields of the hash below them).
    #[inline(always)]
    fn filter_bits(h: u64) -> (usize, u64) {
        let word = (h >> (64 - FILTER_BITS + 6)) as usize;
        (word, 1 << (h >> 40 & 63) | 1 << (h >> 34 & 63))
    }

    /// Whether the filter lets the key of hash `h` through to the buckets.
    #[inline(always)]
    fn passes(&self, h: u64) -> bool {
        let (word, bits) = Self::filter_bits(h);
        self.filter[word] & bits == bits
    }

    /// Asks the processor for the filter's line of hash `h`.
    #[inline(always)]
    fn prefetch_filter(&self, h: u64) {
        let (word, _) = Self::filter_bits(h);
        prefetch(self.filter.as_ptr().wrapping_add(word).cast());
    }

    /// Asks the processor for the bucket (one line) a key of hash `h` is looked up in first.
    #[inline(always)]
    fn prefetch_slot(&self, h: u64) {
        prefetch(self.buckets.as_ptr().wrapping_add(self.home(h)).cast());
    }

    /// The rank of `key` from the buckets, given its hash `h` ([`mix`]). A bucket's places are
    /// compared without a branch each: the place of a hit is random, and a branch on each
    /// place cost o200k 14% more mispredicts on English (callgrind).
    #[inline(always)]
    fn get_slots(&self, key: u128, h: u64) -> u32 {
        let mut i = self.home(h);
        loop {
            let b = &self.buckets[i];
            let hit = b.places_of(key);
            if hit != 0 {
                return b.ranks[hit >> 1 & 3];
            }
            if b.keys[BUCKET_KEYS - 1] == 0 {
                return NONE;
            }
            i += 1;
            if i == self.buckets.len() {
                i = 0;
            }
        }
    }

    /// Sets the rank of `key`, returning the one it had (`NONE` if none); the buckets are
    /// rebuilt twice as many when they are full to [`FILL_PERCENT`].
    fn insert(&mut self, key: u128, rank: u32) -> Option<u32> {
        if self.len + 1 > self.room {
            let old = std::mem::replace(self, ShortTable::with_room(2 * (self.len + 1)));
            for b in old.buckets.iter() {
                for k in 0..BUCKET_KEYS {
                    if b.keys[k] != 0 {
                        self.insert(b.keys[k], b.ranks[k]);
                    }
                }
            }
        }
        let h = mix(key);
        let (word, bits) = Self::filter_bits(h);
        self.filter[word] |= bits;
        let mut i = self.home(h);
        loop {
            let b = &mut self.buckets[i];
            for k in 0..BUCKET_KEYS {
                if b.keys[k] == 0 {
                    b.keys[k] = key;
                    b.ranks[k] = rank;
                    self.len += 1;
                    return None;
                }
                if b.keys[k] == key {
                    return Some(std::mem::replace(&mut b.ranks[k], rank));
                }
            }
            i += 1;
            if i == self.buckets.len() {
                i = 0;
            }
        }
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// The dense table of joins ([`RankBpe::join`]): for every two tokens ranked below [`DENSE`],
/// the rank of their bytes laid end to end, or `NONE`. Which ranks are used is the file's
/// business, so every pair is looked up (a quarter of a million lookups, most answered by the
/// short table's filter); a short join's key is put together from its halves' bytes (as
/// [`pack`] lays them out: little-endian, the length in the top byte), not packed from a copy:
/// 15 M instructions for o200k, against 36 M (callgrind).
fn dense_joins(
    flat: &[u8],
    entries: &[Entry],
    short: &ShortTable,
    long: &Map<Box<[u8]>, u32>,
) -> HugeTable<u32> {
    // a low token's bytes, and them as a packed key's low bytes (no length)
    let mut low: Vec<Option<(&[u8], u128)>> = vec![None; DENSE];
    for &(offset, len, rank) in entries {
        if (rank as usize) < DENSE {
            let t = &flat[offset..offset + len];
            let bits = if len <= PACKED_LEN { pack(t) & (u128::MAX >> 8) } else { 0 };
            low[rank as usize] = Some((t, bits));
        }
    }
    let mut dense = HugeTable::filled(DENSE * DENSE, NONE);
    let mut joined = Vec::new();
    for (l, left) in low.iter().enumerate() {
        let &Some((left, left_bits)) = left else { continue };
        for (r, right) in low.iter().enumerate() {
            let &Some((right, right_bits)) = right else { continue };
            let len = left.len() + right.len();
            dense[l * DENSE + r] = if len <= PACKED_LEN {
                let key = left_bits | right_bits << (8 * left.len()) | (len as u128) << 120;
                short.get(key)
            } else {
                joined.clear();
                joined.extend_from_slice(left);
                joined.extend_from_slice(right);
                long.get(joined.as_slice()).copied().unwrap_or(NONE)
            };
        }
    }
    dense
}

/// Finds allowed special surfaces left to right: the earliest start wins, the longest surface
/// among those starting there (tiktoken tries its specials in hash-set order; for the named
/// encodings no surface is a prefix of another, so the rule never matters there).
struct SpecialFinder<'a> {
    text: &'a str,
    /// (next occurrence at or after the last search position, surface, id)
    next: Vec<(Option<usize>, &'a str, u32)>,
}

impl<'a> SpecialFinder<'a> {
    fn new(bpe: &'a RankBpe, allowed: &[usize], text: &'a str) -> Self {
        let next = allowed
            .iter()
            .filter_map(|&k| bpe.specials.get(k))
            .map(|(s, id)| (text.find(s.as_str()), s.as_str(), *id))
            .collect();
        SpecialFinder { text, next }
    }

    fn next_from(&mut self, pos: usize) -> Option<(usize, usize, u32)> {
        let mut best: Option<(usize, usize, u32)> = None;
        for entry in self.next.iter_mut() {
            if let Some(at) = entry.0 {
                if at < pos {
                    entry.0 = self.text.get(pos..).and_then(|t| t.find(entry.1)).map(|k| k + pos);
                }
            }
            if let Some(at) = entry.0 {
                let end = at + entry.1.len();
                let better = match best {
                    None => true,
                    Some((s, e, _)) => at < s || (at == s && end > e),
                };
                if better {
                    best = Some((at, end, entry.2));
                }
            }
        }
        best
    }
}

/// Where a token's bytes lie in the flat buffer, and its rank: (offset, length, rank).
pub type Entry = (usize, usize, u32);

/// The tokens of a `.tiktoken` file laid end to end, with (offset, length, rank) entries;
/// strictly: standard base64 with padding, one space, a decimal rank; blank lines are skipped
/// (as tiktoken does); errors name the line.
pub fn parse_rank_file(data: &[u8]) -> Result<(Vec<u8>, Vec<Entry>)> {
    let mut flat = Vec::with_capacity(data.len() / 2);
    let mut entries = Vec::with_capacity(data.len() / 12);
    for (k, line) in data.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let bad = |what: &str| {
            Error::ModelFile(format!(
                "line {}: {what} (expected `<base64 token> <rank>`, got {:?})",
                k + 1,
                String::from_utf8_lossy(&line[..line.len().min(80)])
            ))
        };
        let space = line
            .iter()
            .position(|&b| b == b' ')
            .ok_or_else(|| bad("no space between token and rank"))?;
        let (tok, rank) = (&line[..space], &line[space + 1..]);
        if rank.is_empty() || rank.len() > 10 || !rank.iter().all(u8::is_ascii_digit) {
            return Err(bad("the rank is not a decimal number"));
        }
        let rank: u64 = rank.iter().fold(0u64, |acc, &d| acc * 10 + (d - b'0') as u64);
        if rank >= NONE as u64 {
            return Err(bad("the rank is too large"));
        }
        let offset = flat.len();
        if !base64_decode_into(tok, &mut flat) {
            return Err(bad("the token is not valid base64"));
        }
        entries.push((offset, flat.len() - offset, rank as u32));
    }
    Ok((flat, entries))
}

/// Strict standard base64 (RFC 4648 §4, `=` padding to a multiple of 4), appended to `out`;
/// false (with `out` unspecified past its old length) on anything else.
fn base64_decode_into(s: &[u8], out: &mut Vec<u8>) -> bool {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    if s.is_empty() || !s.len().is_multiple_of(4) {
        return false;
    }
    let pad = s.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return false;
    }
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in &s[..s.len() - pad] {
        let Some(v) = value(c) else { return false };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // leftover bits must be zero (canonical encoding)
    acc == 0
}

/// tiktoken's rank engine under the encoder contract: the specials are the encoding's, matched
/// as tiktoken matches the allowed ones.
impl Encoder for RankBpe {
    type State = RankState;
    type Cached = u32;

    fn states(&self) -> &Slots<RankState> {
        &self.slots
    }

    fn cache(state: &mut RankState) -> &mut WordCache<u32> {
        &mut state.words
    }

    fn specials(&self) -> &[(String, u32)] {
        &self.specials
    }

    fn encode_into(
        &self,
        text: &str,
        allowed: &Allowed,
        state: &mut RankState,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        RankBpe::encode_into(self, text, allowed.indices(), state, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short-token table against the standard hash map filled with the same keys (the
    /// oracle): keys whose home is the last bucket, so that they overflow and wrap round to
    /// the first, keys sharing another home, then enough random keys for several rebuilds
    /// (the last one large enough for a mapping of its own: still 64-aligned), keys set twice,
    /// and absent keys asked both through the filter and straight from the buckets.
    #[test]
    fn short_table_buckets_agree_with_a_hash_map() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // a packed key of 1 to 15 bytes; zero bytes are frequent, so keys differ only in
        // their length ("a" and "a\0")
        let mut key = move || {
            let len = 1 + (next() % 15) as usize;
            let bytes: Vec<u8> =
                (0..len).map(|_| (next() % 5) as u8 * (next() % 64) as u8).collect();
            (pack(&bytes), (next() % 1_000_000) as u32)
        };
        let mut table = ShortTable::with_room(64);
        let mut oracle: std::collections::HashMap<u128, u32> = Default::default();
        let count = table.buckets.len();
        let (last, other) = (count - 1, count / 2);
        let (mut at_last, mut at_other) = (Vec::new(), Vec::new());
        while at_last.len() < 2 * BUCKET_KEYS + 1 || at_other.len() < 2 * BUCKET_KEYS + 1 {
            let (k, r) = key();
            match table.home(mix(k)) {
                h if h == last && at_last.len() <= 2 * BUCKET_KEYS => at_last.push((k, r)),
                h if h == other && at_other.len() <= 2 * BUCKET_KEYS => at_other.push((k, r)),
                _ => {}
            }
        }
        let check = |table: &ShortTable, oracle: &std::collections::HashMap<u128, u32>| {
            assert_eq!(table.len(), oracle.len());
            for (&k, &r) in oracle {
                assert_eq!(table.get(k), r, "key {k:#x}");
                assert_eq!(table.get_slots(k, mix(k)), r, "key {k:#x}");
            }
        };
        for &(k, r) in at_last.iter().chain(&at_other) {
            assert_eq!(table.insert(k, r), oracle.insert(k, r));
        }
        // no rebuild yet: the chains are in the buckets the homes made
        assert_eq!(table.buckets.len(), count);
        assert!(table.buckets[0].keys.iter().any(|k| at_last.iter().any(|&(l, _)| l == *k)));
        assert!(table.buckets[other + 2].keys.iter().any(|&k| k != 0));
        check(&table, &oracle);
        for n in 0..60_000 {
            let (k, r) = key();
            assert_eq!(table.insert(k, r), oracle.insert(k, r));
            if n % 7 == 0 {
                // a key set again takes its new rank
                let k = *oracle.keys().next().unwrap();
                assert_eq!(table.insert(k, n), oracle.insert(k, n));
            }
            if n % 10_000 == 0 {
                check(&table, &oracle);
            }
        }
        assert!(table.buckets.len() > 16 * count);
        assert_eq!(table.buckets.as_ptr() as usize % 64, 0);
        check(&table, &oracle);
        let mut absent = 0;
        while absent < 100_000 {
            let (k, _) = key();
            if !oracle.contains_key(&k) {
                assert_eq!(table.get(k), NONE, "key {k:#x}");
                assert_eq!(table.get_slots(k, mix(k)), NONE, "key {k:#x}");
                absent += 1;
            }
        }
    }

    fn toy() -> RankBpe {
        let mut tokens: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for (k, t) in ["ab", "bc", "abc", "aa", "aaaa", "ca"].iter().enumerate() {
            tokens.push((t.as_bytes().to_vec(), 256 + k as u32));
        }
        RankBpe::new(tokens, vec![("<|x|>".into(), 300)], Pattern::Cl100k).unwrap()
    }

    #[test]
    fn merges_lowest_rank_leftmost() {
        let t = toy();
        assert_eq!(t.encode("abc", &[]), vec![258]);
        assert_eq!(t.encode("abca", &[]), vec![258, 97]); // ab (256) before bc (257), then abc (258) before ca (261)
        assert_eq!(t.encode("bcab", &[]), vec![257, 256]); // ab (256) first, then bc (257); "cab" is no token
        assert_eq!(t.encode("aaa", &[]), vec![259, 97]);
        assert_eq!(t.encode("aaaaa", &[]), vec![260, 97]);
        assert_eq!(t.encode("a<|x|>b", &[]).len(), 7);
        assert_eq!(t.encode("a<|x|>b", &[0]), vec![97, 300, 98]);
    }

    #[test]
    fn batched_lookups_equal_chunk_by_chunk_encoding() {
        // texts of 0 to 300 chunks, so that the batches of BATCH chunks end at every place
        // and the look-ahead of PEEK chunks runs past a batch's end: chunks that are tokens,
        // that are none (new, then met again from the word cache), and longer than a packed
        // key; each text encoded by a fresh encoder and again by a used one, against the
        // chunks of `split` encoded one by one through `encode_chunk` (no batch, no filter,
        // no word cache)
        // "xyz" and " xyz" are tokens that no merge reaches (no "xy" nor "yz"): a chunk that is
        // a token merged instead of looked up would come out as three ids
        let make = |p: Pattern| {
            let mut tokens: Vec<(Vec<u8>, u32)> =
                (0..=255u8).map(|b| (vec![b], b as u32)).collect();
            for (k, t) in
                ["ab", "bc", "abc", "aa", "aaaa", "ca", "xyz", " xyz", " ab"].iter().enumerate()
            {
                tokens.push((t.as_bytes().to_vec(), 256 + k as u32));
            }
            RankBpe::new(tokens, vec![], p).unwrap()
        };
        let words: Vec<&str> =
            "ab| abc|bca| ca|aaaa|aaaaa|!?| 12|bcabcabcabcabcabcab|\n| cab|abcaab|xyz| xyz| ab|Xyz"
                .split('|')
                .collect();
        for p in [Pattern::Cl100k, Pattern::O200k] {
            let used = make(p);
            let mut state = 77u64;
            for len in 0..300 {
                let mut text = String::new();
                for _ in 0..len {
                    state =
                        state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    text.push_str(words[(state >> 33) as usize % words.len()]);
                }
                let mut want = Vec::new();
                let mut parts = Vec::new();
                for (a, b) in used.split(&text) {
                    used.encode_chunk(&text.as_bytes()[a..b], &mut want, &mut parts);
                }
                assert_eq!(make(p).encode(&text, &[]), want, "fresh, {len} words: {text:?}");
                assert_eq!(used.encode(&text, &[]), want, "used, {len} words: {text:?}");
            }
        }
    }

    #[test]
    fn a_regex_splitter_keeps_only_the_matches() {
        // tiktoken's reading of a pattern: ", " and "!" match nothing and are dropped
        let mut tokens: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        tokens.push((b"ab".to_vec(), 256));
        let re = subwords_core::spelling::pattern::Pattern::new(r"[a-z]+").unwrap();
        let t = RankBpe::new(tokens, vec![], Splitter::Regex(re)).unwrap();
        assert_eq!(t.encode("ab, ba!", &[]), vec![256, 98, 97]);
        assert!(t.pattern().is_none());
    }

    #[test]
    fn heap_equals_scan() {
        let t = toy();
        let mut state = 12345u64;
        for _ in 0..300 {
            let mut s = Vec::new();
            for _ in 0..(state % 40 + 2) {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                s.push(b"abc"[(state >> 33) as usize % 3]);
            }
            let (mut a, mut b, mut parts) = (vec![], vec![], vec![]);
            t.merge_scan(&s, &mut a, &mut parts);
            t.merge_heap(&s, &mut b);
            assert_eq!(a, b, "{:?}", String::from_utf8_lossy(&s));
        }
    }

    #[test]
    fn small_merges_equal_the_heap() {
        // the merged tokens ranked from 256 (every join in the dense table) and from 1000
        // (joins with a merged token looked up in the short-token table)
        for base in [256u32, 1000] {
            // tokens past PACKED_LEN bytes too ("a" x 16 and x 32), so both lookups are taken
            let mut tokens: Vec<(Vec<u8>, u32)> =
                (0..=255u8).map(|b| (vec![b], b as u32)).collect();
            for (k, t) in ["ab", "bc", "abc", "aa", "aaaa", "ca", "aaaaaaaa", "cab", "bcabc"]
                .iter()
                .map(|t| t.to_string())
                .chain(["a".repeat(16), "a".repeat(32), "ab".repeat(9)])
                .enumerate()
            {
                tokens.push((t.into_bytes(), base + k as u32));
            }
            let t = RankBpe::new(tokens, vec![], Pattern::Cl100k).unwrap();
            let mut state = 987u64;
            let mut pieces: Vec<Vec<u8>> = (2..=SMALL_PIECE).map(|n| vec![b'a'; n]).collect();
            for _ in 0..2000 {
                let mut s = Vec::new();
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                for _ in 0..((state >> 40) as usize % (SMALL_PIECE - 1) + 2) {
                    state =
                        state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    s.push(b"aaabc"[(state >> 33) as usize % 5]);
                }
                pieces.push(s);
            }
            // pieces of ASCII start as one part a byte, up to SMALL_PIECE of them (the most
            // merge_small's arrays must hold)
            let mut longest = 0;
            for s in &pieces {
                let (mut a, mut b) = (vec![], vec![]);
                t.merge_small(s, &mut a);
                t.merge_heap(s, &mut b);
                assert_eq!(a, b, "{:?}", String::from_utf8_lossy(s));
                // the minimum one join at a time (processors without AVX2) gives the same
                let mut c = vec![];
                t.merge_small_in::<false, SMALL_PARTS, { SMALL_PIECE + 16 }>(s, &mut c);
                assert_eq!(c, b);
                if s.len() <= PACKED_LEN {
                    // the arrays of 16 parts, both ways
                    c.clear();
                    t.merge_short(s, &mut c);
                    assert_eq!(c, b);
                    c.clear();
                    t.merge_small_in::<false, 16, 32>(s, &mut c);
                    assert_eq!(c, b);
                }
                longest = longest.max(s.len());
                // one chunk under cl100k's pattern (letters only)
                let text = std::str::from_utf8(s).unwrap();
                assert_eq!(t.encode(text, &[]), b, "{text:?}");
            }
            assert_eq!(longest, SMALL_PIECE);
            assert_eq!(t.encode(&"a".repeat(40), &[]), vec![base + 10, base + 6]);
        }
    }

    #[test]
    fn dense_joins_by_hand() {
        // "ab" 300 and "cd" 301 join through the dense table into "abcd" 900 (ranked past it);
        // "abcd" with "e" is then looked up by its bytes: "abcde" 260
        let mut tokens: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for (t, r) in [("ab", 300), ("cd", 301), ("abcd", 900), ("abcde", 260), ("bc", 302)] {
            tokens.push((t.as_bytes().to_vec(), r));
        }
        let t = RankBpe::new(tokens, vec![], Pattern::Cl100k).unwrap();
        assert_eq!(t.join(300, 301), Some(900));
        assert_eq!(t.join(300, b'c' as u32), Some(NONE)); // "abc" is no token
        assert_eq!(t.join(900, b'e' as u32), None); // 900 is past the table
                                                    // a b c d e f: ab (300) first, then cd (301); ab+cd = 900; abcd+e = 260; abcde+f is
                                                    // no token
        assert_eq!(t.encode("abcdef", &[]), vec![260, b'f' as u32]);
        let (mut a, mut b, mut parts) = (vec![], vec![], vec![]);
        t.merge_small(b"abcde", &mut a);
        t.merge_scan(b"abcde", &mut b, &mut parts);
        assert_eq!((a, b), (vec![260], vec![260]));
        // x b c d: cd (301) before bc (302); then bcd is no token
        assert_eq!(t.encode("xbcd", &[]), vec![b'x' as u32, b'b' as u32, 301]);
    }

    #[test]
    fn dense_joins_equal_the_hashed_path() {
        // a random rank table over four letters, ranks shuffled so that bytes and longer
        // tokens fall on both sides of DENSE; the heap merges by hashed lookups only
        let mut state = 4242u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut words: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        while words.len() < 256 + 700 {
            let len = next() as usize % 7 + 2;
            let w: Vec<u8> = (0..len).map(|_| b"abcd"[next() as usize % 4]).collect();
            if !words.contains(&w) {
                words.push(w);
            }
        }
        let mut ranks: Vec<u32> = (0..words.len() as u32).collect();
        for i in (1..ranks.len()).rev() {
            ranks.swap(i, next() as usize % (i + 1));
        }
        let t = RankBpe::new(words.iter().cloned().zip(ranks).collect(), vec![], Pattern::Cl100k)
            .unwrap();
        let mut joined = 0;
        for l in 0..DENSE as u32 {
            for r in 0..DENSE as u32 {
                let bytes = [t.token(l).unwrap(), t.token(r).unwrap()].concat();
                let want = t.rank(&bytes).unwrap_or(NONE);
                assert_eq!(t.join(l, r), Some(want));
                joined += (want != NONE) as usize;
            }
        }
        assert!(joined > 50, "the table should hold joins to test, has {joined}");
        let mut parts = vec![];
        for _ in 0..3000 {
            // ASCII: one first part a byte, up to SMALL_PIECE of them
            let len = next() as usize % (SMALL_PIECE - 1) + 2;
            let s: Vec<u8> = (0..len).map(|_| b"abcdab"[next() as usize % 6]).collect();
            let (mut a, mut b, mut c) = (vec![], vec![], vec![]);
            t.merge_small(&s, &mut a);
            t.merge_scan(&s, &mut b, &mut parts);
            t.merge_heap(&s, &mut c);
            assert_eq!(a, c, "{:?}", String::from_utf8_lossy(&s));
            assert_eq!(b, c, "{:?}", String::from_utf8_lossy(&s));
        }
    }

    #[test]
    fn base64_strict() {
        let decode = |s: &[u8]| {
            let mut v = Vec::new();
            base64_decode_into(s, &mut v).then_some(v)
        };
        assert_eq!(decode(b"IQ=="), Some(b"!".to_vec()));
        assert_eq!(decode(b"aGVsbG8="), Some(b"hello".to_vec()));
        assert_eq!(decode(b"IR=="), None);
        assert_eq!(decode(b"I==="), None);
        assert_eq!(decode(b"I Q="), None);
    }
}
