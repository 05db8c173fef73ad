//! SentencePiece `.model` files, encoded and decoded exactly as `sentencepiece` does.
//!
//! The pipeline is SentencePiece's own, step for step:
//! The reference is sentencepiece 0.2.3, whose encoder differs from earlier releases in two
//! places that change ids: user-defined symbols score `0.1·(bytes − 1)`, and the Viterbi
//! subtracts the running score once it leaves ±1e5.
//!
//! 1. **Normalize** (`Normalizer`): user-defined symbols pass through untouched, the
//!    precompiled character map rewrites the longest matching rule at each position, leading,
//!    trailing and repeated spaces go when `remove_extra_whitespaces`, a `▁` is put in front when
//!    `add_dummy_prefix`, and spaces become `▁` when `escape_whitespaces`.
//! 2. **Segment** the whole normalized text: Unigram by Viterbi in single precision, scanning
//!    start positions left to right and keeping the first best path on ties (so the piece that
//!    starts earliest wins), user-defined symbols scored `0.1·(len − 1)`, an unknown character
//!    scored `min_score − 10`; BPE by repeatedly joining the adjacent pair whose concatenation is
//!    the highest-scoring piece, leftmost on ties, then undoing `UNUSED` pieces.
//! 3. **Unknowns**: with byte fallback an unknown piece becomes its UTF-8 bytes `<0xNN>`;
//!    without, a run of unknown pieces becomes one `<unk>`.
//!
//! Scores are `f32` as in the file and sums are done in `f32`, because that is what decides ties
//! and near-ties in `sentencepiece`; a double-precision Viterbi would pick a different path on
//! rare inputs.
//!
//! Tried and not kept: the word cache's table in huge pages (glibc's `hugetlb` tunable, 75 MB of
//! them on the multilingual lines) left calls one line at a time as they were (1.31-1.35 µs a
//! line either way) and took a first pass from 1.81-1.89 to 1.67-1.71 µs a line; it needs an
//! `madvise` where the core's word cache allocates, which is not done. ASCII runs found eight
//! bytes at a time in the normalizer: 130 more instructions a line on the multilingual lines
//! (their runs are short, between accented letters), so byte by byte they stay.

pub mod charsmap;
mod nbest;
/// The double array of the pieces (moved to the core, which our own Unigram model shares).
pub use subwords_core::segmenters::unigram::darray;
pub mod proto;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use subwords_core::hash::Map;
use yada::DoubleArray;

use charsmap::Charsmap;
use darray::DoubleArray as PieceArray;
use proto::ModelProto;
use subwords_core::batch::Slots;
use subwords_core::encoder::{Allowed, Encoder};
use subwords_core::error::{Error, Result};

const SPACE: &str = "\u{2581}";
const SPACE_BYTES: [u8; 3] = [0xE2, 0x96, 0x81];
const _: () = assert!(SPACE.len() == 3 && SPACE.as_bytes()[0] == SPACE_BYTES[0]);
const UNK_PENALTY: f32 = 10.0;
/// Unigram words longer than this (in bytes) are not cached: run from their running score (the
/// longest a cut's length field holds, [`PACKED_LEN_BITS`]). At 64, the multilingual lines'
/// words of 65 to 127 bytes (lines of Chinese, one word each) were 0.4% of the words and 5.5% of
/// the bytes, and their Viterbi 7.6% of a call's instructions with every shorter word cached.
const MAX_CACHED_WORD: usize = 127;
/// [`pack_word`]: the bits of a cut's length; the id takes the other 25.
const PACKED_LEN_BITS: u32 = 7;
const _: () = assert!(MAX_CACHED_WORD < 1 << PACKED_LEN_BITS);
/// How many words ahead of its lookup a word's cache slot is fetched.
const AHEAD: usize = 4;
/// The normalizer's byte classes (`SpModel::plain_class`).
const COPY: u8 = 0;
const COPY_BEFORE_ASCII: u8 = 1;
const LOOK_UP: u8 = 2;
/// The normalizer's classes of characters of two or three bytes (`SpModel::plain_bmp`).
const CHAR_COPY: u64 = 1;
const CHAR_COPY_BEFORE: u64 = 2;
/// sentencepiece 0.2.3's `kScoreResetThreshold`.
const RESET: f32 = 100_000.0;
/// The BPE word cache: a word's cuts, each from the word's start.
type WordCache = subwords_core::word_cache::WordCache<Cut>;
/// BPE: unused piece text -> (left start, left length, right start, right length).
type Rev = Map<Box<[u8]>, (u32, u32, u32, u32)>;
/// The largest model file accepted (the biggest public models are a few MB).
pub const MAX_FILE_BYTES: usize = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Unigram,
    Bpe,
}

struct Normalizer {
    charsmap: Option<Charsmap>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
}

pub struct SpModel {
    bytes: Vec<u8>,
    pub kind: Kind,
    pub pieces: Vec<String>,
    pub scores: Vec<f32>,
    pub types: Vec<i32>,
    /// NORMAL, USER_DEFINED and UNUSED pieces (SentencePiece's `pieces_`), Unigram only (empty
    /// for BPE): a double array over bytes (the core's `segmenters/unigram/darray.rs`), each
    /// piece with the score the Viterbi gives it (a user symbol's `0.1·(bytes − 1)` worked out at load), UNUSED pieces kept for
    /// `piece_to_id` but never handed to the Viterbi.
    trie: PieceArray,
    /// BPE only (empty for Unigram): the same pieces by text, for looking up joined pairs.
    index: Map<Box<[u8]>, u32>,
    /// CONTROL, UNKNOWN and BYTE pieces (`reserved_id_map_`).
    reserved: Map<Box<[u8]>, u32>,
    /// User-defined symbols: matched first, never normalized or split.
    user: Option<DoubleArray<Vec<u8>>>,
    user_starts: [bool; 256],
    /// Bytes that a user symbol or a character-map rule may start with (no fast path).
    plain_stop: [bool; 256],
    /// Per byte, what the normalizer's fast path makes of it: [`COPY`] an ASCII byte other than
    /// space that no rule or user symbol starts with, [`COPY_BEFORE_ASCII`] one whose every rule
    /// goes on with a non-ASCII byte (copied when the next byte is ASCII or none of
    /// `rule_goes_on`, or the text ends),
    /// [`LOOK_UP`] anything else.
    plain_class: [u8; 256],
    /// Two bits per code point below U+10000, for the normalizer's fast path over characters of
    /// two or three bytes that no user symbol starts with: [`CHAR_COPY`] no character-map rule is
    /// the character, a prefix of it, or starts with it (copied as it is wherever it stands);
    /// [`CHAR_COPY_BEFORE`] rules start with it but none is it or a prefix of it (copied as it is
    /// when the byte after it is none of `rule_goes_on`, or the text ends); 0: looked up.
    plain_bmp: Box<[u64]>,
    /// The bytes that some rule goes on with after a whole [`CHAR_COPY_BEFORE`] character or a
    /// [`COPY_BEFORE_ASCII`] byte.
    rule_goes_on: [bool; 256],
    pub unk: u32,
    byte_ids: Option<Box<[u32; 256]>>,
    min_score: f32,
    norm: Normalizer,
    pub unk_surface: String,
    /// No piece holds a character other than `▁` followed by `▁` (for Unigram: no piece the
    /// Viterbi scores): BPE and the Viterbi may run word by word.
    words_apart: bool,
    /// Unigram: the score the Viterbi adds for each id (a user symbol's `0.1·(bytes − 1)`, the
    /// unknown piece's `min_score − 10`), for following a cached word's running score.
    vscore: Vec<f32>,
    /// Per-worker scratch kept warm across calls (the core's batch runner).
    slots: Slots<SpState>,
    /// The CONTROL pieces (`<s>`, `</s>`, ...) as (piece, id): the specials a call may allow;
    /// made on first use (a load that never allows one reads no piece for it).
    controls: std::sync::OnceLock<Vec<(String, u32)>>,
}

/// What one worker reuses from text to text: the normalized text, the Viterbi table, the cuts
/// and the BPE word cache. Passed explicitly; the output never depends on what it holds.
#[derive(Default)]
pub struct SpState {
    normalized: Vec<u8>,
    map: Vec<u32>,
    cuts: Vec<Cut>,
    seg: Seg,
}

/// The segmenters' part of a [`SpState`].
#[derive(Default)]
struct Seg {
    best: Vec<Best>,
    /// a word's exact lattice ([`SpModel::word_viterbi`]) and its cuts
    exact: Vec<Exact>,
    word: Vec<Cut>,
    /// a word's entry in the Unigram word cache ([`pack_word`])
    packed: Vec<Cut>,
    words: WordCache,
    /// a text's words: (start, end, the word's key when it is short or medium: `pack` and 0,
    /// or `pack_medium`)
    bounds: Vec<(u32, u32, (u128, u128))>,
}

/// A position of a word's lattice in double precision: the best score reaching it, the second
/// best by another arc, and the best arc.
#[derive(Clone, Copy)]
struct Exact {
    best: f64,
    second: f64,
    start: i64,
    id: u32,
}

#[derive(Clone, Copy)]
struct Best {
    id: u32,
    score: f32,
    start: i64,
}

/// One piece of a segmentation: bytes `start..end` of the normalized text and its id.
type Cut = (u32, u32, u32);

/// The byte span of the text each id covers.
pub type Spans = Vec<(u32, u32)>;

impl SpModel {
    /// Reads a serialized `ModelProto`, refusing what `sentencepiece` would refuse and what this
    /// engine does not reproduce exactly (each refusal names the feature).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        let bad = |m: String| Error::ModelFile(m);
        if bytes.len() > MAX_FILE_BYTES {
            return Err(bad(format!(
                "{} bytes is larger than any SentencePiece model ({MAX_FILE_BYTES})",
                bytes.len()
            )));
        }
        let mut proto = proto::decode(&bytes).map_err(|e| {
            bad(format!("not a SentencePiece model (the protobuf does not parse: {e})"))
        })?;
        let trainer = proto.trainer_spec.clone().unwrap_or_default();
        let kind = match trainer.model_type.unwrap_or(proto::UNIGRAM) {
            proto::UNIGRAM => Kind::Unigram,
            proto::BPE => Kind::Bpe,
            proto::WORD => {
                return Err(bad("model_type WORD is not supported (only UNIGRAM and BPE)".into()))
            }
            proto::CHAR => {
                return Err(bad("model_type CHAR is not supported (only UNIGRAM and BPE)".into()))
            }
            t => return Err(bad(format!("unknown model_type {t}"))),
        };
        if trainer.treat_whitespace_as_suffix.unwrap_or(false) {
            return Err(bad("treat_whitespace_as_suffix is not supported".into()));
        }
        if let Some(d) = &proto.denormalizer_spec {
            if d.precompiled_charsmap.as_ref().is_some_and(|c| !c.is_empty()) {
                return Err(bad(
                    "a denormalizer (denormalizer_spec with a character map) is not supported"
                        .into(),
                ));
            }
        }
        let spec = proto.normalizer_spec.clone().unwrap_or_default();
        let charsmap = match spec.precompiled_charsmap.as_deref() {
            Some(blob) if !blob.is_empty() => Some(Charsmap::parse(blob)?),
            _ => None,
        };
        if charsmap.is_none()
            && spec.name.as_deref().is_some_and(|n| n != "identity" && !n.is_empty())
        {
            return Err(bad(format!(
                "normalization rule {:?} comes without its precompiled character map",
                spec.name.as_deref().unwrap_or_default()
            )));
        }
        let norm = Normalizer {
            charsmap,
            add_dummy_prefix: spec.add_dummy_prefix.unwrap_or(true),
            remove_extra_whitespaces: spec.remove_extra_whitespaces.unwrap_or(true),
            escape_whitespaces: spec.escape_whitespaces.unwrap_or(true),
        };
        if proto.pieces.is_empty() {
            return Err(bad("the model has no pieces".into()));
        }
        if proto.pieces.len() > (1 << 30) {
            return Err(bad("too many pieces".into()));
        }
        let n = proto.pieces.len();
        let mut pieces = Vec::with_capacity(n);
        let mut scores = Vec::with_capacity(n);
        let mut types = Vec::with_capacity(n);
        // NORMAL, USER_DEFINED and UNUSED pieces go straight into the byte trie for Unigram (a path
        // holding a piece already is a duplicate), into a map by text for BPE (which looks joined
        // pairs up by text and needs no trie)
        let mut keys: Vec<(u32, f32, i32)> = Vec::new();
        let mut index: Map<Box<[u8]>, u32> = Map::default();
        let mut reserved: Map<Box<[u8]>, u32> = Map::default();
        let mut users: Vec<&str> = Vec::new();
        let mut unk = None;
        let mut min_score = f32::MAX;
        for (id, p) in std::mem::take(&mut proto.pieces).into_iter().enumerate() {
            let text = p.piece.unwrap_or_default();
            let score = p.score.unwrap_or(0.0);
            let ty = p.r#type.unwrap_or(proto::NORMAL);
            if text.is_empty() {
                return Err(bad(format!("piece {id} is empty")));
            }
            if !score.is_finite() {
                return Err(bad(format!("piece {id} ({text:?}) has score {score}")));
            }
            let normal = match ty {
                proto::NORMAL | proto::USER_DEFINED | proto::UNUSED => true,
                proto::UNKNOWN | proto::CONTROL | proto::BYTE => false,
                t => return Err(bad(format!("piece {id} ({text:?}) has unknown type {t}"))),
            };
            let twice = if normal {
                if text.as_bytes().contains(&0) {
                    return Err(bad(
                        "a piece contains a NUL character, which SentencePiece cannot match".into(),
                    ));
                }
                if kind == Kind::Bpe {
                    // BPE looks pieces up by text only: no trie to build
                    index.insert(text.as_bytes().into(), id as u32).is_some()
                } else {
                    // duplicates are found when the array is built
                    keys.push((id as u32, score, ty));
                    false
                }
            } else {
                reserved.insert(text.as_bytes().into(), id as u32).is_some()
            };
            if twice {
                return Err(bad(format!("piece {text:?} is defined twice")));
            }
            if ty == proto::UNKNOWN {
                if unk.is_some() {
                    return Err(bad("more than one unknown (<unk>) piece".into()));
                }
                unk = Some(id as u32);
            }
            if ty == proto::NORMAL {
                min_score = min_score.min(score);
            }
            pieces.push(text);
            scores.push(score);
            types.push(ty);
        }
        let trie = PieceArray::build(
            keys.iter()
                .map(|&(id, score, ty)| {
                    let bytes = pieces[id as usize].as_bytes();
                    // a user-defined symbol scores 0.1·(bytes − 1), computed in double, kept as float
                    let score = if ty == proto::USER_DEFINED {
                        (0.1 * (bytes.len() as f64 - 1.0)) as f32
                    } else {
                        score
                    };
                    darray::Key { labels: bytes, id, value: score, scores: ty != proto::UNUSED }
                })
                .collect(),
            256,
        )
        .map_err(|id| bad(format!("piece {:?} is defined twice", pieces[id as usize])))?;
        for (id, ty) in types.iter().enumerate() {
            if *ty == proto::USER_DEFINED {
                users.push(&pieces[id]);
            }
        }
        let unk = unk.ok_or_else(|| bad("the model has no unknown (<unk>) piece".into()))?;
        let byte_ids = if trainer.byte_fallback.unwrap_or(false) {
            let mut ids = Box::new([0u32; 256]);
            for b in 0..256usize {
                let name = format!("<0x{b:02X}>");
                match reserved.get(name.as_bytes()) {
                    Some(&id) if types[id as usize] == proto::BYTE => ids[b] = id,
                    _ => {
                        return Err(bad(format!(
                            "byte_fallback is on but the byte piece {name} is missing"
                        )))
                    }
                }
            }
            Some(ids)
        } else {
            None
        };
        let user = if users.is_empty() {
            None
        } else {
            build_trie(users.iter().map(|u| (u.as_bytes(), 0)))?
        };
        let user_starts = user.as_ref().map_or([false; 256], charsmap::first_bytes);
        let mut plain_stop = user_starts;
        if let Some(m) = &norm.charsmap {
            for (b, stop) in plain_stop.iter_mut().enumerate() {
                *stop |= m.starts_with(b as u8);
            }
        }
        let mut plain_class = [LOOK_UP; 256];
        for b in 0..0x80u8 {
            if b == b' ' || user_starts[b as usize] {
                continue;
            }
            plain_class[b as usize] = match &norm.charsmap {
                Some(m) if m.starts_with(b) => {
                    if m.only_non_ascii_after(b) {
                        COPY_BEFORE_ASCII
                    } else {
                        LOOK_UP
                    }
                }
                _ => COPY,
            };
        }
        // two bits per code point below U+10000 (`plain_bmp`), and the bytes some rule goes on
        // with after a whole character
        let mut plain_bmp = vec![0u64; 1 << 11].into_boxed_slice();
        let mut rule_goes_on = [false; 256];
        for c in (0x80..0x1_0000).filter_map(char::from_u32) {
            let mut buf = [0u8; 4];
            let ch = c.encode_utf8(&mut buf).as_bytes();
            if user_starts[ch[0] as usize] {
                continue;
            }
            let class = match &norm.charsmap {
                Some(m) if m.starts_with(ch[0]) => {
                    let mut next = [false; 256];
                    match m.after_char(ch, &mut next) {
                        None => 0,
                        Some(()) if !next.contains(&true) => CHAR_COPY,
                        Some(()) => {
                            for (all, one) in rule_goes_on.iter_mut().zip(next) {
                                *all |= one;
                            }
                            CHAR_COPY_BEFORE
                        }
                    }
                }
                _ => CHAR_COPY,
            };
            let at = 2 * c as usize;
            plain_bmp[at >> 6] |= class << (at & 63);
        }
        if let Some(m) = &norm.charsmap {
            for b in 0..0x80u8 {
                if plain_class[b as usize] == COPY_BEFORE_ASCII {
                    // `b` is no rule: Some, with the bytes its rules go on with
                    let _ = m.after_char(&[b], &mut rule_goes_on);
                }
            }
        }
        let inner_space = |p: &str| {
            let mut prev: Option<char> = None;
            p.chars().any(|c| {
                let hit = c == '\u{2581}' && prev.is_some_and(|q| q != '\u{2581}');
                prev = Some(c);
                hit
            })
        };
        let words_apart = norm.escape_whitespaces
            && match kind {
                Kind::Bpe => pieces.iter().zip(&types).all(|(p, &t)| {
                    matches!(t, proto::CONTROL | proto::UNKNOWN | proto::BYTE) || !inner_space(p)
                }),
                // (and ids that fit a packed cut: `pack_word`)
                Kind::Unigram => {
                    n < 1 << (32 - PACKED_LEN_BITS)
                        && pieces.iter().zip(&types).all(|(p, &t)| {
                            !matches!(t, proto::NORMAL | proto::USER_DEFINED) || !inner_space(p)
                        })
                }
            };
        let vscore = if kind == Kind::Unigram {
            let mut v = vec![0f32; n];
            for (id, (p, &t)) in pieces.iter().zip(&types).enumerate() {
                v[id] = match t {
                    proto::NORMAL => scores[id],
                    proto::USER_DEFINED => (0.1 * (p.len() as f64 - 1.0)) as f32,
                    _ => 0.0,
                };
            }
            v[unk as usize] = min_score - UNK_PENALTY;
            v
        } else {
            Vec::new()
        };
        Ok(SpModel {
            controls: Default::default(),
            slots: Slots::default(),
            words_apart,
            vscore,
            plain_stop,
            plain_class,
            plain_bmp,
            rule_goes_on,
            user_starts,
            bytes,
            kind,
            pieces,
            scores,
            types,
            trie,
            index,
            reserved,
            user,
            unk,
            byte_ids,
            min_score,
            norm,
            unk_surface: trainer.unk_surface.unwrap_or_else(|| " \u{2047} ".to_string()),
        })
    }

    /// The file as read (saving writes these bytes back unchanged).
    pub fn to_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn byte_fallback(&self) -> bool {
        self.byte_ids.is_some()
    }

    pub fn piece_to_id(&self, piece: &str) -> Option<u32> {
        self.reserved.get(piece.as_bytes()).copied().or_else(|| self.trie_lookup(piece.as_bytes()))
    }

    /// The id of the NORMAL, USER_DEFINED or UNUSED piece spelled `bytes`.
    fn trie_lookup(&self, bytes: &[u8]) -> Option<u32> {
        if self.kind == Kind::Bpe {
            return self.index.get(bytes).copied();
        }
        self.trie.get(bytes)
    }

    /// Normalized text, and for each of its bytes (plus one past the end) the byte offset in
    /// `input` it came from.
    pub fn normalize(&self, input: &str, offsets: bool) -> Result<(String, Vec<u32>)> {
        let mut out = Vec::new();
        let mut map = Vec::new();
        self.normalize_into(input, offsets, &mut out, &mut map)?;
        // every step copies whole UTF-8 characters or whole replacement strings
        let text = String::from_utf8(out)
            .map_err(|_| Error::ModelFile("normalization produced invalid UTF-8".into()))?;
        Ok((text, map))
    }

    fn normalize_into(
        &self,
        input: &str,
        offsets: bool,
        out: &mut Vec<u8>,
        map: &mut Vec<u32>,
    ) -> Result<()> {
        let n = &self.norm;
        out.clear();
        map.clear();
        out.reserve(input.len() + 8);
        let mut rest = input.as_bytes();
        let mut consumed = 0usize;
        if rest.is_empty() {
            return Ok(());
        }
        if n.remove_extra_whitespaces {
            while !rest.is_empty() {
                // a byte or character the normalizer copies as it is is no space: the text
                // starts there (most texts, without looking anything up)
                if self.plain_class[rest[0] as usize] == COPY || self.plain_char(rest) > 0 {
                    break;
                }
                let (s, len) = self.normalize_prefix(rest)?;
                if s != b" " {
                    break;
                }
                rest = &rest[len..];
                consumed += len;
            }
        }
        if rest.is_empty() {
            return Ok(());
        }
        let space: &[u8] = if n.escape_whitespaces { SPACE.as_bytes() } else { b" " };
        let push = |out: &mut Vec<u8>, map: &mut Vec<u32>, bytes: &[u8], at: usize| {
            out.extend_from_slice(bytes);
            if offsets {
                map.extend(std::iter::repeat_n(at as u32, bytes.len()));
            }
        };
        // `space`, with the length known here (a copy of a slice of unknown length is a call)
        let push_space = |out: &mut Vec<u8>, map: &mut Vec<u32>, at: usize| {
            if n.escape_whitespaces {
                out.extend_from_slice(&SPACE_BYTES);
            } else {
                out.push(b' ');
            }
            if offsets {
                map.extend(std::iter::repeat_n(at as u32, space.len()));
            }
        };
        if n.add_dummy_prefix {
            push_space(out, map, consumed);
        }
        let mut prev_space = n.remove_extra_whitespaces;
        while !rest.is_empty() {
            // fast path: an ASCII byte other than space that no rule or user symbol starts with,
            // or whose rules all go on with a non-ASCII byte when an ASCII byte follows it (the
            // whole run of such bytes is copied at once): no rule matches there, so the general
            // step below would copy it as one character
            let mut plain = 0;
            while plain < rest.len() && self.plain_class[rest[plain] as usize] <= COPY_BEFORE_ASCII
            {
                plain += 1;
            }
            // the bytes of the run are ASCII, so only its last byte can be followed by a
            // non-ASCII one
            if plain > 0
                && rest.get(plain).is_some_and(|&c| c >= 0x80 && self.rule_goes_on[c as usize])
                && self.plain_class[rest[plain - 1] as usize] == COPY_BEFORE_ASCII
            {
                plain -= 1;
            }
            if plain > 0 {
                out.extend_from_slice(&rest[..plain]);
                if offsets {
                    map.extend(consumed as u32..(consumed + plain) as u32);
                }
                prev_space = false;
                consumed += plain;
                rest = &rest[plain..];
                continue;
            }
            // fast path: characters of two or three bytes that no rule or user symbol can match
            // ([`SpModel::plain_bmp`]): the general step below would copy each as it is
            if rest[0] >= 0xC2 {
                let mut run = 0;
                loop {
                    let len = self.plain_char(&rest[run..]);
                    if len == 0 {
                        break;
                    }
                    if offsets {
                        map.extend(std::iter::repeat_n((consumed + run) as u32, len));
                    }
                    run += len;
                }
                if run > 0 {
                    out.extend_from_slice(&rest[..run]);
                    prev_space = false;
                    consumed += run;
                    rest = &rest[run..];
                    continue;
                }
            }
            // fast path: a plain space (no rule or user symbol starts with it) is what the general
            // step below makes of it, without the lookups: dropped after a space when extra
            // whitespace goes, else `space`
            if rest[0] == b' ' && !self.plain_stop[b' ' as usize] {
                if !prev_space {
                    push_space(out, map, consumed);
                }
                prev_space = n.remove_extra_whitespaces;
                consumed += 1;
                rest = &rest[1..];
                continue;
            }
            let (mut s, len) = self.normalize_prefix(rest)?;
            while prev_space && s.first() == Some(&b' ') {
                s = &s[1..];
            }
            if !s.is_empty() {
                for &b in s {
                    if n.escape_whitespaces && b == b' ' {
                        push(out, map, SPACE.as_bytes(), consumed);
                    } else {
                        out.push(b);
                        if offsets {
                            map.push(consumed as u32);
                        }
                    }
                }
                prev_space = s.last() == Some(&b' ');
            }
            consumed += len;
            rest = &rest[len..];
            if !n.remove_extra_whitespaces {
                prev_space = false;
            }
        }
        if n.remove_extra_whitespaces {
            while out.ends_with(space) {
                let len = out.len() - space.len();
                if offsets {
                    consumed = map[len] as usize;
                    map.truncate(len);
                }
                out.truncate(len);
            }
        }
        if offsets {
            map.push(consumed as u32);
        }
        Ok(())
    }

    /// The length of the character `rest` starts with when [`SpModel::plain_bmp`] says the
    /// normalizer copies it as it is there; 0 otherwise (ASCII, four bytes, or a character to
    /// look up).
    #[inline(always)]
    fn plain_char(&self, rest: &[u8]) -> usize {
        let (cp, len) = match *rest {
            [a @ 0xC2..=0xDF, b, ..] => (((a & 0x1F) as usize) << 6 | (b & 0x3F) as usize, 2),
            [a @ 0xE0..=0xEF, b, c, ..] => {
                (((a & 0x0F) as usize) << 12 | ((b & 0x3F) as usize) << 6 | (c & 0x3F) as usize, 3)
            }
            _ => return 0,
        };
        let at = 2 * cp;
        match self.plain_bmp[at >> 6] >> (at & 63) & 3 {
            CHAR_COPY => len,
            CHAR_COPY_BEFORE if rest.get(len).is_none_or(|&b| !self.rule_goes_on[b as usize]) => {
                len
            }
            _ => 0,
        }
    }

    /// SentencePiece's `NormalizePrefix`: a user-defined symbol as it is, else the longest
    /// character-map rule, else one character.
    #[inline]
    fn normalize_prefix<'a>(&'a self, input: &'a [u8]) -> Result<(&'a [u8], usize)> {
        if let Some(user) = self.user.as_ref().filter(|_| self.user_starts[input[0] as usize]) {
            if let Some(len) = charsmap::prefixes(user, input).map(|(_, l)| l).max() {
                return Ok((&input[..len], len));
            }
        }
        if let Some(map) = &self.norm.charsmap {
            if let Some((s, len)) = map.longest(input)? {
                return Ok((s.as_bytes(), len));
            }
        }
        let len = char_len(input[0]).min(input.len());
        Ok((&input[..len], len))
    }

    /// Ids of `text`, exactly as `SentencePieceProcessor.encode(text)`.
    pub fn encode(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        self.slots.with(0, |s| self.encode_with(text, out, s))
    }

    /// [`SpModel::encode`] with the caller's scratch.
    pub fn encode_with(&self, text: &str, out: &mut Vec<u32>, s: &mut SpState) -> Result<()> {
        let SpState { normalized, map, cuts, seg } = s;
        self.normalize_into(text, false, normalized, map)?;
        if self.kind == Kind::Unigram && self.words_apart {
            // the ids straight from the words, with no cuts in between, stored by index into
            // room made first: each id covers at least one byte of the normalized text (a run
            // of unknown cuts is one id, or one per byte under byte fallback), so there are at
            // most as many ids as bytes (pushed one by one, each id's capacity check and length
            // store were a tenth of a call's instructions on multilingual lines)
            let (mut prev_unk, text) = (false, &normalized[..]);
            let from = out.len();
            out.resize(from + text.len(), 0);
            let (room, mut k) = (&mut out[from..], 0usize);
            self.walk_words(text, seg, |cut| self.put_id(text, cut, room, &mut k, &mut prev_unk));
            out.truncate(from + k);
            return Ok(());
        }
        self.segment_into(normalized, seg, cuts);
        self.emit(normalized, cuts, out, None, None, None);
        Ok(())
    }

    /// Ids with the byte span of `text` each covers (byte-fallback pieces of one character share
    /// its span; the ones before the last are empty, as in SentencePiece).
    pub fn encode_with_offsets(&self, text: &str) -> Result<(Vec<u32>, Spans)> {
        let (normalized, map) = self.normalize(text, true)?;
        let cuts = self.segment(normalized.as_bytes());
        let mut ids = Vec::new();
        let mut spans = Vec::new();
        self.emit(normalized.as_bytes(), &cuts, &mut ids, Some(&mut spans), Some(&map), None);
        Ok((ids, spans))
    }

    /// Ids with their pieces, exactly as `SentencePieceProcessor.encode(text, out_type=str)`: a
    /// known id's piece is its vocabulary entry, and an unknown run's piece is the normalized
    /// text it covers (one `<unk>` id, the surface as its piece), so `decode_pieces` restores it.
    pub fn encode_pieces(&self, text: &str) -> Result<(Vec<u32>, Vec<String>)> {
        let (normalized, _) = self.normalize(text, false)?;
        let cuts = self.segment(normalized.as_bytes());
        let mut ids = Vec::new();
        let mut pieces = Vec::new();
        self.emit(normalized.as_bytes(), &cuts, &mut ids, None, None, Some(&mut pieces));
        Ok((ids, pieces))
    }

    pub fn segment(&self, normalized: &[u8]) -> Vec<Cut> {
        let mut cuts = Vec::new();
        self.slots.with(0, |s| self.segment_into(normalized, &mut s.seg, &mut cuts));
        cuts
    }

    /// The cuts of `normalized` into `cuts` (cleared first), with the caller's Viterbi tables and
    /// word cache.
    fn segment_into(&self, normalized: &[u8], seg: &mut Seg, cuts: &mut Vec<Cut>) {
        cuts.clear();
        if normalized.is_empty() {
            return;
        }
        match self.kind {
            Kind::Unigram if self.words_apart => self.viterbi_by_words(normalized, seg, cuts),
            Kind::Unigram => self.viterbi_in(normalized, &mut seg.best, cuts),
            Kind::Bpe if self.words_apart => self.bpe_by_words(normalized, &mut seg.words, cuts),
            Kind::Bpe => cuts.extend(self.bpe(normalized)),
        }
    }

    /// BPE word by word with a cache, a word being a run of `▁` and the characters up to the next
    /// `▁` that follows a character other than `▁`. Exact when no piece holds a character other
    /// than `▁` followed by `▁` (Llama-style `▁▁▁▁` pieces are fine): then no join crosses the
    /// point between two words, joins in one word never change another, and the leftmost-first
    /// tie rule orders each word's joins as the whole-text run does.
    fn bpe_by_words(&self, text: &[u8], cache: &mut WordCache, cuts: &mut Vec<Cut>) {
        for_each_word(text, |start, end| {
            let word = &text[start..end];
            let base = start as u32;
            if let Some(hit) = cache.get(word) {
                cuts.extend(hit.iter().map(|&(a, b, id)| (a + base, b + base, id)));
            } else {
                let local = self.bpe(word);
                cuts.extend(local.iter().map(|&(a, b, id)| (a + base, b + base, id)));
                cache.insert(word, &local);
            }
        });
    }

    /// Turns cuts into ids (and, when asked, each id's span of the input and its piece). An
    /// unknown cut becomes its bytes' pieces under byte fallback; without, a run of unknown cuts
    /// becomes one `<unk>` whose piece is the normalized text of the run (SentencePiece's
    /// `PopulateSentencePieceText`).
    fn emit(
        &self,
        normalized: &[u8],
        cuts: &[Cut],
        out: &mut Vec<u32>,
        mut spans: Option<&mut Vec<(u32, u32)>>,
        map: Option<&[u32]>,
        mut pieces: Option<&mut Vec<String>>,
    ) {
        let mut prev_unk = false;
        for &(start, end, id) in cuts {
            let is_unk = id == self.unk;
            let (ob, oe) = map.map_or((0, 0), |m| (m[start as usize], m[end as usize]));
            let surface = &normalized[start as usize..end as usize];
            if is_unk {
                if let Some(bytes) = &self.byte_ids {
                    for (i, &b) in surface.iter().enumerate() {
                        out.push(bytes[b as usize]);
                        if let Some(s) = spans.as_deref_mut() {
                            s.push(if i + 1 == surface.len() { (ob, oe) } else { (ob, ob) });
                        }
                        if let Some(p) = pieces.as_deref_mut() {
                            p.push(self.pieces[bytes[b as usize] as usize].clone());
                        }
                    }
                    prev_unk = true;
                    continue;
                }
                if prev_unk {
                    if let Some(s) = spans.as_deref_mut() {
                        if let Some(last) = s.last_mut() {
                            last.1 = oe;
                        }
                    }
                    if let Some(last) = pieces.as_deref_mut().and_then(|p| p.last_mut()) {
                        last.push_str(&String::from_utf8_lossy(surface));
                    }
                    continue;
                }
            }
            out.push(id);
            if let Some(s) = spans.as_deref_mut() {
                s.push((ob, oe));
            }
            if let Some(p) = pieces.as_deref_mut() {
                p.push(if is_unk {
                    String::from_utf8_lossy(surface).into_owned()
                } else {
                    self.pieces[id as usize].clone()
                });
            }
            prev_unk = is_unk;
        }
    }

    /// [`SpModel::emit`] of one cut, ids only, stored at `out[*k..]` (`prev_unk`: the cut
    /// before was unknown).
    #[inline(always)]
    fn put_id(
        &self,
        normalized: &[u8],
        cut: Cut,
        out: &mut [u32],
        k: &mut usize,
        prev_unk: &mut bool,
    ) {
        let (start, end, id) = cut;
        if id != self.unk {
            out[*k] = id;
            *k += 1;
            *prev_unk = false;
            return;
        }
        if let Some(bytes) = &self.byte_ids {
            for &b in &normalized[start as usize..end as usize] {
                out[*k] = bytes[b as usize];
                *k += 1;
            }
        } else if !*prev_unk {
            out[*k] = id;
            *k += 1;
        }
        *prev_unk = true;
    }

    /// SentencePiece's optimized Viterbi (`EncodeOptimized`), in `f32`, into `cuts` with the
    /// caller's table `best`.
    fn viterbi_in(&self, text: &[u8], best: &mut Vec<Best>, cuts: &mut Vec<Cut>) {
        self.viterbi_from(text, 0.0, best, cuts);
    }

    /// The Viterbi of [`SpModel::viterbi_in`] over `text`, entered with the running score
    /// `init` (what the whole text's run holds where `text` starts; 0 at the start): appends the
    /// cuts, offsets from `text`'s start, and returns the running score at its end. When no
    /// piece crosses the start or the end of `text`, this is the whole text's run on that
    /// stretch, step for step, resets included.
    fn viterbi_from(
        &self,
        text: &[u8],
        init: f32,
        best: &mut Vec<Best>,
        cuts: &mut Vec<Cut>,
    ) -> f32 {
        let n = text.len();
        let unk_score = self.min_score - UNK_PENALTY;
        best.clear();
        best.resize(n + 1, Best { id: u32::MAX, score: 0.0, start: -1 });
        best[0].score = init;
        let mut start = 0usize;
        // sentencepiece 0.2.3 keeps sums near zero: when the best score at a start position
        // leaves ±1e5 it is subtracted from every reached position up to the furthest one
        // reached so far (the rounding this causes is part of its answer)
        let mut frontier = 0usize;
        while start < n {
            let mut here = best[start].score;
            if !(-RESET..=RESET).contains(&here) {
                let offset = here;
                for (i, b) in best.iter_mut().enumerate().take(frontier.max(start) + 1).skip(start)
                {
                    if i == start || b.start != -1 {
                        b.score -= offset;
                    }
                }
                here = 0.0;
            }
            let mblen = char_len(text[start]).min(n - start);
            let mut has_single = false;
            {
                self.trie.pieces_from(text, start, |end, id, score| {
                    let len = end - start;
                    frontier = frontier.max(end);
                    let target = &mut best[end];
                    let cand = score + here;
                    if target.start == -1 || cand > target.score {
                        *target = Best { id, score: cand, start: start as i64 };
                    }
                    has_single |= len == mblen;
                });
            }
            if !has_single {
                frontier = frontier.max(start + mblen);
                let target = &mut best[start + mblen];
                let cand = unk_score + here;
                if target.start == -1 || cand > target.score {
                    *target = Best { id: self.unk, score: cand, start: start as i64 };
                }
            }
            start += mblen;
        }
        let from = cuts.len();
        let mut end = n;
        while end > 0 {
            let b = best[end];
            // every position reached has a predecessor: a one-character node always exists
            let s = b.start.max(0) as usize;
            cuts.push((s as u32, end as u32, b.id));
            if s >= end {
                break;
            }
            end = s;
        }
        cuts[from..].reverse();
        best[n].score
    }

    /// The Viterbi word by word, each word's cuts from the word cache when that is provably
    /// what the whole text's run finds.
    ///
    /// A word is as in [`SpModel::bpe_by_words`]. No piece the Viterbi scores holds a character
    /// other than `▁` followed by `▁` (`words_apart`), and a piece starts and ends on character
    /// boundaries, so no arc of the lattice crosses a word's start: the whole text's run does
    /// the word's steps entered with the running score `P` it holds there, and
    /// [`SpModel::viterbi_from`] entered with `P` repeats them exactly. The only thing `P`
    /// changes is rounding: sums are `f32`. [`SpModel::word_viterbi`] finds the word's best
    /// path with the decision at every position made by a margin wider than any rounding
    /// while `|P|` stays within the word's limit, and then both the `f32` run from `P` and the
    /// exact run take that path. A cached word is used only within its limit (the running score
    /// then followed by adding each cut's score, as the run adds it); past it, or for a word
    /// too long to cache, the word is run from `P`.
    ///
    /// The words are found first, and each short or medium word's cache slot is fetched [`AHEAD`] words
    /// before it is looked up (the table of a large batch's words outgrows the processor's
    /// cache: the lookup's load was a quarter of a batch's time in a `perf` profile).
    fn viterbi_by_words(&self, text: &[u8], seg: &mut Seg, cuts: &mut Vec<Cut>) {
        self.walk_words(text, seg, |cut| cuts.push(cut));
    }

    /// [`SpModel::viterbi_by_words`] with each cut handed to `sink` in order, placed in `text`.
    #[inline]
    fn walk_words(&self, text: &[u8], seg: &mut Seg, mut sink: impl FnMut(Cut)) {
        use subwords_core::word_cache::{pack, pack_medium, MEDIUM_LEN, PACKED_LEN};
        let Seg { best, exact, word: scratch, packed, words, bounds } = seg;
        bounds.clear();
        for_each_word(text, |a, b| {
            let key = if b - a <= PACKED_LEN {
                (pack(&text[a..b]), 0)
            } else if b - a <= MEDIUM_LEN {
                pack_medium(&text[a..b])
            } else {
                (0, 0)
            };
            bounds.push((a as u32, b as u32, key));
        });
        let fetch = |words: &WordCache, i: usize| {
            if let Some(&(a, b, key)) = bounds.get(i) {
                let n = (b - a) as usize;
                if n <= PACKED_LEN {
                    words.prefetch(key.0);
                } else if n <= MEDIUM_LEN {
                    words.prefetch_medium(key);
                }
            }
        };
        for i in 0..AHEAD {
            fetch(words, i);
        }
        let mut score = 0f32;
        for (i, &(base, end, key)) in bounds.iter().enumerate() {
            fetch(words, i + AHEAD);
            let word = &text[base as usize..end as usize];
            if word.len() <= MAX_CACHED_WORD {
                let hit = if word.len() <= PACKED_LEN {
                    words.get_packed(key.0)
                } else if word.len() <= MEDIUM_LEN {
                    words.get_medium(key)
                } else {
                    words.get(word)
                };
                let taken = match hit {
                    Some(hit) => self.take_word(hit, base, &mut score, &mut sink),
                    None => {
                        scratch.clear();
                        let limit = self.word_viterbi(word, exact, scratch);
                        pack_word(limit, scratch, packed);
                        words.insert(word, packed);
                        self.take_word(packed, base, &mut score, &mut sink)
                    }
                };
                if taken {
                    continue;
                }
            }
            scratch.clear();
            score = self.viterbi_from(word, score, best, scratch);
            for &(a, b, id) in scratch.iter() {
                sink((a + base, b + base, id));
            }
        }
    }

    /// A cached word's cuts ([`pack_word`]), placed at `base`, when the running score is
    /// within its limit; the running score then follows them.
    #[inline(always)]
    fn take_word(
        &self,
        hit: &[Cut],
        base: u32,
        score: &mut f32,
        sink: &mut impl FnMut(Cut),
    ) -> bool {
        let (limit, first, second) = hit[0];
        if score.abs() > f32::from_bits(limit) {
            return false;
        }
        // the packed cuts in order: the first is never 0 (a cut has a length), a 0 ends them
        let (mut at, mut s) = (base, *score);
        let mut take = |v: u32| {
            if v == 0 {
                return false;
            }
            let (id, len) = (v >> PACKED_LEN_BITS, v & ((1 << PACKED_LEN_BITS) - 1));
            sink((at, at + len, id));
            at += len;
            s += self.vscore[id as usize];
            true
        };
        if take(first) && take(second) {
            for &(a, b, c) in &hit[1..] {
                if !(take(a) && take(b) && take(c)) {
                    break;
                }
            }
        }
        *score = s;
        true
    }

    /// The best path of one word (cuts into `out`) found in double precision, and the largest
    /// `|P|` for which the `f32` run entered with running score `P` provably takes it (negative
    /// when none does).
    ///
    /// Let `V(x)` be the exact best score from the word's start to position `x`, `A` the
    /// largest `|V(s) + score|` over the lattice's arcs, `n` the word's characters and `g` the
    /// smallest margin, over the positions, between the best arc into a position and the
    /// second best. Entered with `P`, every value the `f32` run forms is within `|P| + A` (plus
    /// the rounding) of zero, so with `|P| + A ≤ 2^(k+22)` each addition rounds by at most
    /// `2^(k−2)`, and by induction over the positions the run's score at `x` is within
    /// `n·2^(k−2)` of `P + V(x)`. Choosing `k` with `2^k < g / 4n` leaves the best arc ahead of
    /// every other by more than twice that, so the run picks the exact path at every position
    /// (ties, `g = 0`, are never provable); the remaining factor of 8 covers the double-precision
    /// sums. `|P| + A ≤ 5·10^4` also keeps the run below sentencepiece's reset threshold.
    fn word_viterbi(&self, text: &[u8], exact: &mut Vec<Exact>, out: &mut Vec<Cut>) -> f32 {
        let n = text.len();
        let unk_score = (self.min_score - UNK_PENALTY) as f64;
        let none = f64::NEG_INFINITY;
        exact.clear();
        exact.resize(n + 1, Exact { best: none, second: none, start: -1, id: u32::MAX });
        exact[0].best = 0.0;
        let mut reach = 0f64;
        let mut chars = 0usize;
        let mut start = 0usize;
        let arc =
            |exact: &mut [Exact], reach: &mut f64, start: usize, end: usize, id: u32, cand: f64| {
                *reach = reach.max(cand.abs());
                let t = &mut exact[end];
                if cand > t.best {
                    *t = Exact { best: cand, second: t.best, start: start as i64, id };
                } else if cand > t.second {
                    t.second = cand;
                }
            };
        while start < n {
            let here = exact[start].best;
            let mblen = char_len(text[start]).min(n - start);
            let mut has_single = false;
            self.trie.pieces_from(text, start, |end, id, score| {
                arc(exact, &mut reach, start, end, id, here + score as f64);
                has_single |= end - start == mblen;
            });
            if !has_single {
                arc(exact, &mut reach, start, start + mblen, self.unk, here + unk_score);
            }
            chars += 1;
            start += mblen;
        }
        let mut gap = f64::INFINITY;
        for e in &exact[1..] {
            if e.start >= 0 {
                gap = gap.min(e.best - e.second);
            }
        }
        let from = out.len();
        let mut end = n;
        while end > 0 {
            let e = exact[end];
            let s = e.start.max(0) as usize;
            out.push((s as u32, end as u32, e.id));
            if s >= end {
                break;
            }
            end = s;
        }
        out[from..].reverse();
        if gap <= 0.0 {
            return -1.0;
        }
        // the largest power of two 2^k below g / 4n, then |P| + A ≤ 2^(k+22)
        let unit = gap / (4.0 * chars as f64);
        let limit = below_power(unit)
            .map_or(RESET as f64 / 2.0, |p| (p * 2f64.powi(22)).min(RESET as f64 / 2.0))
            - reach;
        if limit < 0.0 {
            return -1.0;
        }
        // rounded down into f32
        let l = limit as f32;
        if l as f64 > limit {
            l.next_down()
        } else {
            l
        }
    }

    /// SentencePiece's BPE: join the adjacent pair whose concatenation is the best-scoring piece
    /// (leftmost on ties) until none is a piece, then split `UNUSED` pieces back.
    fn bpe(&self, text: &[u8]) -> Vec<Cut> {
        #[derive(Clone, Copy)]
        struct Sym {
            start: u32,
            len: u32,
            prev: i32,
            next: i32,
            freeze: bool,
        }
        struct Pair {
            score: f32,
            left: i32,
            right: i32,
            size: u32,
        }
        impl PartialEq for Pair {
            fn eq(&self, o: &Self) -> bool {
                self.cmp(o) == Ordering::Equal
            }
        }
        impl Eq for Pair {}
        impl PartialOrd for Pair {
            fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
                Some(self.cmp(o))
            }
        }
        impl Ord for Pair {
            fn cmp(&self, o: &Self) -> Ordering {
                self.score.total_cmp(&o.score).then(o.left.cmp(&self.left))
            }
        }
        let mut syms: Vec<Sym> = Vec::with_capacity(text.len());
        let mut pos = 0usize;
        while pos < text.len() {
            let (len, freeze) = match self
                .user
                .as_ref()
                .and_then(|u| charsmap::prefixes(u, &text[pos..]).map(|(_, l)| l).max())
            {
                Some(l) => (l, true),
                None => (char_len(text[pos]).min(text.len() - pos), false),
            };
            let i = syms.len() as i32;
            syms.push(Sym { start: pos as u32, len: len as u32, prev: i - 1, next: i + 1, freeze });
            pos += len;
        }
        if let Some(last) = syms.last_mut() {
            last.next = -1;
        }
        let mut heap: BinaryHeap<Pair> = BinaryHeap::new();
        // unused piece text -> the two texts that made it (the last join recorded wins)
        let mut rev: Rev = Map::default();
        let add = |syms: &[Sym], heap: &mut BinaryHeap<Pair>, rev: &mut Rev, l: i32, r: i32| {
            if l < 0 || r < 0 {
                return;
            }
            let (a, b) = (syms[l as usize], syms[r as usize]);
            if a.freeze || b.freeze {
                return;
            }
            let piece = &text[a.start as usize..(a.start + a.len + b.len) as usize];
            if let Some(&id) = self.index.get(piece) {
                heap.push(Pair {
                    score: self.scores[id as usize],
                    left: l,
                    right: r,
                    size: a.len + b.len,
                });
                if self.types[id as usize] == proto::UNUSED {
                    rev.insert(piece.into(), (a.start, a.len, b.start, b.len));
                }
            }
        };
        for i in 1..syms.len() {
            add(&syms, &mut heap, &mut rev, i as i32 - 1, i as i32);
        }
        while let Some(top) = heap.pop() {
            let (l, r) = (top.left as usize, top.right as usize);
            if syms[l].len == 0 || syms[r].len == 0 || syms[l].len + syms[r].len != top.size {
                continue;
            }
            syms[l].len += syms[r].len;
            syms[l].next = syms[r].next;
            if syms[r].next >= 0 {
                let nx = syms[r].next as usize;
                syms[nx].prev = l as i32;
            }
            syms[r].len = 0;
            let prev = syms[l].prev;
            let next = syms[l].next;
            add(&syms, &mut heap, &mut rev, prev, l as i32);
            add(&syms, &mut heap, &mut rev, l as i32, next);
        }
        let mut cuts = Vec::new();
        let mut i = 0i32;
        while i >= 0 && !syms.is_empty() {
            let s = syms[i as usize];
            self.resegment(text, s.start, s.len, &rev, &mut cuts, 0);
            i = s.next;
        }
        cuts
    }

    /// sentencepiece 0.2.3's `resegment`: an UNUSED piece is split back into the two texts that
    /// last made it, up to depth 100 (then kept as it is); a piece that is not a piece is `<unk>`.
    fn resegment(
        &self,
        text: &[u8],
        start: u32,
        len: u32,
        rev: &Rev,
        out: &mut Vec<Cut>,
        depth: usize,
    ) {
        let w = &text[start as usize..(start + len) as usize];
        let Some(&id) = self.index.get(w) else {
            out.push((start, start + len, self.unk));
            return;
        };
        if depth > 100 || self.types[id as usize] != proto::UNUSED {
            out.push((start, start + len, id));
            return;
        }
        match rev.get(w) {
            // the recorded split may come from another place with the same text: its lengths
            // are what matter
            Some(&(_, la, _, lb)) => {
                self.resegment(text, start, la, rev, out, depth + 1);
                self.resegment(text, start + la, lb, rev, out, depth + 1);
            }
            None => out.push((start, start + len, self.unk)),
        }
    }

    /// Text of `ids`, exactly as `SentencePieceProcessor.decode(ids)`.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        let n = self.pieces.len();
        if let Some(&bad) = ids.iter().find(|&&i| i as usize >= n) {
            return Err(Error::UnknownPiece(format!(
                "id {bad} is out of range (the model has {n} pieces)"
            )));
        }
        Ok(self.decode_items(ids.iter().map(|&id| (id, None))))
    }

    /// Text of `pieces`, exactly as `SentencePieceProcessor.decode_pieces(pieces)`: a piece that
    /// is not in the vocabulary is an unknown piece and stands for itself (what `encode_pieces`
    /// gives for an unknown character), `<unk>` itself for the unknown surface.
    pub fn decode_pieces(&self, pieces: &[&str]) -> String {
        self.decode_items(pieces.iter().map(|&p| match self.piece_to_id(p) {
            Some(id) => (id, None),
            None => (self.unk, Some(p)),
        }))
    }

    /// The decoder over (id, surface of an unknown piece that is not the `<unk>` entry).
    fn decode_items<'a>(&self, items: impl Iterator<Item = (u32, Option<&'a str>)>) -> String {
        let strip_first = self.norm.add_dummy_prefix || self.norm.remove_extra_whitespaces;
        let mut text = String::new();
        let mut bytes: Vec<u8> = Vec::new();
        let mut is_bos_ws = true;
        let mut bos_ws_seen = false;
        for (id, own) in items {
            let ty = self.types[id as usize];
            if ty == proto::BYTE {
                bytes.push(piece_byte(&self.pieces[id as usize]));
                continue;
            }
            flush_bytes(&mut bytes, &mut text);
            if bos_ws_seen || !text.is_empty() {
                is_bos_ws = false;
            }
            let piece = self.pieces[id as usize].as_str();
            bos_ws_seen = false;
            match ty {
                proto::CONTROL => {}
                proto::UNKNOWN => text.push_str(own.unwrap_or(&self.unk_surface)),
                _ => {
                    let mut p = piece;
                    if is_bos_ws && strip_first {
                        if let Some(rest) = p.strip_prefix(SPACE) {
                            p = rest;
                            bos_ws_seen = !self.norm.remove_extra_whitespaces;
                        }
                    }
                    text.push_str(&p.replace(SPACE, " "));
                }
            }
        }
        flush_bytes(&mut bytes, &mut text);
        text
    }
}

/// A trie over the given keys (values are ids); `None` when there are no keys.
fn build_trie<'a>(
    keys: impl Iterator<Item = (&'a [u8], u32)>,
) -> Result<Option<DoubleArray<Vec<u8>>>> {
    let mut keys: Vec<(&[u8], u32)> = keys.collect();
    if keys.is_empty() {
        return Ok(None);
    }
    if keys.iter().any(|(k, _)| k.contains(&0)) {
        return Err(Error::ModelFile(
            "a piece contains a NUL character, which SentencePiece cannot match".into(),
        ));
    }
    keys.sort_unstable();
    let blob = yada::builder::DoubleArrayBuilder::build(&keys)
        .map_err(|e| Error::ModelFile(format!("cannot index the pieces: {e}")))?;
    DoubleArray::new(blob)
        .map(Some)
        .map_err(|e| Error::ModelFile(format!("cannot index the pieces: {e}")))
}

/// A Unigram word's cache entry: its limit (`f32` bits), then each cut as `id << 7 | bytes`,
/// three numbers to a [`Cut`], 0 after the last when there is room: a word of one or two pieces
/// is one `Cut`, which the cache keeps in the word's own slot (one memory load a hit). Exact for
/// ids below 2^25 and cuts below 128 bytes, which `SpModel::from_bytes` and
/// [`MAX_CACHED_WORD`] see to.
fn pack_word(limit: f32, cuts: &[Cut], out: &mut Vec<Cut>) {
    let mut all = std::iter::once(limit.to_bits())
        .chain(cuts.iter().map(|&(a, b, id)| id << PACKED_LEN_BITS | (b - a)));
    out.clear();
    // three numbers to a cut, 0 where the last has no more (no buffer between: a word met the
    // first time allocated one)
    while let Some(first) = all.next() {
        out.push((first, all.next().unwrap_or(0), all.next().unwrap_or(0)));
    }
}

/// Each word of a normalized text as (start, end): a run of `▁`, then up to the next `▁` (a word
/// ends before each `▁` that does not follow another `▁`). A `▁` is always a character of its
/// own: `0xE2` starts no character inside another.
#[inline]
fn for_each_word(text: &[u8], mut word: impl FnMut(usize, usize)) {
    let (mut start, mut i, mut after_space) = (0usize, 0usize, usize::MAX);
    while let Some(p) = find_space_lead(text, i) {
        if text[p..].starts_with(&SPACE_BYTES) {
            if p > 0 && p != after_space {
                word(start, p);
                start = p;
            }
            after_space = p + 3;
            i = p + 3;
        } else {
            i = p + 1;
        }
    }
    if start < text.len() {
        word(start, text.len());
    }
}

/// The largest power of two below `x` (strictly), read off its bits: `None` when `x` is
/// infinite (a word with no second path anywhere), 0 for `x` at most the least normal double or
/// NaN. (Through `log2` and `powf` this was 2% of a first pass over the multilingual lines.)
fn below_power(x: f64) -> Option<f64> {
    if x.is_infinite() {
        return None;
    }
    if x.is_nan() || x <= f64::MIN_POSITIVE {
        return Some(0.0);
    }
    let bits = x.to_bits();
    let exponent = bits >> 52;
    // 2^e ≤ x < 2^(e+1): 2^e itself when x is above it, else 2^(e−1)
    let e = if bits & ((1 << 52) - 1) != 0 { exponent } else { exponent - 1 };
    Some(f64::from_bits(e << 52))
}

/// The first `0xE2` byte (`▁`'s first) of `text` at or after `from`, eight bytes at a time:
/// the byte-by-byte search was 7% of a call's instructions on multilingual lines.
#[inline]
fn find_space_lead(text: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    let mut i = from;
    while let Some(chunk) = text.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap()) ^ (ONES * SPACE_BYTES[0] as u64);
        // the lowest byte flagged is the first zero byte of `x` (a borrow flags only bytes above
        // a zero one)
        let zero = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero != 0 {
            return Some(i + (zero.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    text[i.min(text.len())..].iter().position(|&b| b == SPACE_BYTES[0]).map(|k| i + k)
}

/// Length of the UTF-8 character starting with `b` (1 for a stray continuation byte), as
/// SentencePiece's `OneCharLen`.
#[inline]
fn char_len(b: u8) -> usize {
    const LEN: [u8; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LEN[(b >> 4) as usize] as usize
}

fn piece_byte(piece: &str) -> u8 {
    // BYTE pieces were checked to be <0xNN> only when byte fallback is on; others decode as 0
    subwords_core::spelling::parse_byte_piece(piece).unwrap_or(0)
}

/// Appends a run of byte pieces as UTF-8, each byte of an invalid sequence as U+FFFD.
fn flush_bytes(bytes: &mut Vec<u8>, text: &mut String) {
    let mut rest: &[u8] = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                text.push_str(s);
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                text.push_str(std::str::from_utf8(&rest[..good]).unwrap_or_default());
                text.push('\u{FFFD}');
                rest = &rest[good + 1..];
            }
        }
    }
    bytes.clear();
}

impl ModelProto {
    pub fn to_bytes(&self) -> Vec<u8> {
        proto::encode(self)
    }
}

/// What a SentencePiece model file written by subwords holds.
pub struct Build<'a> {
    pub kind: Kind,
    /// (piece, score, type) in id order; types as in `proto` (NORMAL, UNKNOWN, BYTE, ...).
    pub pieces: Vec<(&'a str, f32, i32)>,
    pub byte_fallback: bool,
    pub unk_surface: &'a str,
    /// Character-map rules (from, to) applied before whitespace handling; empty = identity.
    pub rules: Vec<(&'a str, &'a str)>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    /// Pieces may hold interior `▁` (one stream a text): SentencePiece's `split_by_whitespace=false`.
    pub split_by_whitespace: bool,
}

impl Build<'_> {
    /// The serialized `ModelProto`, checked by reading it back.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.to_bytes_with_roles(&[])
    }

    /// [`Build::to_bytes`] with the pieces that play the `"bos"`, `"eos"` and `"pad"` roles
    /// (role, piece id); a role not given is -1, as before.
    pub fn to_bytes_with_roles(&self, roles: &[(&str, i32)]) -> Result<Vec<u8>> {
        let role = |name: &str| roles.iter().find(|r| r.0 == name).map(|r| r.1);
        let piece_of = |name: &str| {
            role(name).and_then(|i| self.pieces.get(i as usize)).map(|p| p.0.to_string())
        };
        let unk_id = self.pieces.iter().position(|p| p.2 == proto::UNKNOWN).map(|i| i as i32);
        let charsmap =
            if self.rules.is_empty() { None } else { Some(Charsmap::build(&self.rules)?) };
        let model = ModelProto {
            pieces: self
                .pieces
                .iter()
                .map(|&(p, s, t)| proto::Piece {
                    piece: Some(p.to_string()),
                    score: Some(s),
                    r#type: Some(t),
                })
                .collect(),
            trainer_spec: Some(proto::TrainerSpec {
                model_type: Some(match self.kind {
                    Kind::Unigram => proto::UNIGRAM,
                    Kind::Bpe => proto::BPE,
                }),
                vocab_size: Some(self.pieces.len() as i32),
                byte_fallback: Some(self.byte_fallback),
                split_by_whitespace: Some(self.split_by_whitespace),
                unk_id,
                bos_id: Some(role("bos").unwrap_or(-1)),
                eos_id: Some(role("eos").unwrap_or(-1)),
                pad_id: Some(role("pad").unwrap_or(-1)),
                unk_surface: Some(self.unk_surface.to_string()),
                unk_piece: unk_id.map(|i| self.pieces[i as usize].0.to_string()),
                bos_piece: piece_of("bos"),
                eos_piece: piece_of("eos"),
                pad_piece: piece_of("pad"),
                ..Default::default()
            }),
            normalizer_spec: Some(proto::NormalizerSpec {
                name: Some(if charsmap.is_some() {
                    "subwords_whitespace".into()
                } else {
                    "identity".into()
                }),
                precompiled_charsmap: charsmap,
                add_dummy_prefix: Some(self.add_dummy_prefix),
                remove_extra_whitespaces: Some(self.remove_extra_whitespaces),
                escape_whitespaces: Some(true),
                normalization_rule_tsv: None,
            }),
            denormalizer_spec: None,
        };
        let bytes = model.to_bytes();
        SpModel::from_bytes(bytes.clone())?;
        Ok(bytes)
    }
}

/// SentencePiece models under the encoder contract: the specials are the CONTROL pieces, and a
/// stretch of text between allowed ones is encoded as a text of its own (user-defined symbols
/// match inside the normalizer, as in sentencepiece, whatever a call allows).
impl Encoder for SpModel {
    type State = SpState;
    type Cached = Cut;

    fn states(&self) -> &Slots<SpState> {
        &self.slots
    }

    fn cache(state: &mut SpState) -> &mut WordCache {
        &mut state.seg.words
    }

    fn specials(&self) -> &[(String, u32)] {
        self.controls.get_or_init(|| {
            let control = |(_, t): &(usize, &i32)| **t == proto::CONTROL;
            self.types
                .iter()
                .enumerate()
                .filter(control)
                .map(|(i, _)| (self.pieces[i].clone(), i as u32))
                .collect()
        })
    }

    fn encode_into(
        &self,
        text: &str,
        allowed: &Allowed,
        state: &mut SpState,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        allowed.split(text, out, |part, out| self.encode_with(part, out, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(
        kind: Kind,
        pieces: &[(&str, f32, i32)],
        rules: &[(&str, &str)],
        byte_fallback: bool,
    ) -> SpModel {
        let build = Build {
            kind,
            pieces: pieces.to_vec(),
            byte_fallback,
            unk_surface: "?",
            rules: rules.to_vec(),
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            split_by_whitespace: true,
        };
        SpModel::from_bytes(build.to_bytes().unwrap()).unwrap()
    }

    #[test]
    fn charsmap_rules_and_whitespace() {
        // tab -> space by the map, then runs collapse, ends go, a ▁ in front, spaces become ▁
        let m = model(
            Kind::Unigram,
            &[("<unk>", 0.0, proto::UNKNOWN), ("a", -1.0, proto::NORMAL)],
            &[("\t", " "), ("Ａ", "a")],
            false,
        );
        assert_eq!(m.normalize("  Ａ\t\t b ", false).unwrap().0, "\u{2581}a\u{2581}b");
        let (text, map) = m.normalize(" Ａb", true).unwrap();
        assert_eq!(text, "\u{2581}ab");
        // ▁ (3 bytes) from the first kept byte, a from Ａ (at byte 1), b at byte 4, end at 5
        assert_eq!(map, vec![1, 1, 1, 1, 4, 5]);
    }

    #[test]
    fn viterbi_tie_keeps_the_longest_last_piece() {
        // "▁aa": ▁a·a and ▁·aa both score -3; SentencePiece keeps the path whose last piece
        // starts earliest at the final position: ▁ + aa
        let pieces = [
            ("<unk>", 0.0, proto::UNKNOWN),
            ("\u{2581}", -1.0, proto::NORMAL),
            ("a", -1.5, proto::NORMAL),
            ("\u{2581}a", -1.5, proto::NORMAL),
            ("aa", -2.0, proto::NORMAL),
        ];
        let m = model(Kind::Unigram, &pieces, &[], false);
        let mut ids = Vec::new();
        m.encode("aa", &mut ids).unwrap();
        assert_eq!(ids, vec![1, 4]);
    }

    #[test]
    fn bpe_joins_by_piece_score_and_unknown_runs_fold() {
        let pieces = [
            ("<unk>", 0.0, proto::UNKNOWN),
            ("\u{2581}", -10.0, proto::NORMAL),
            ("a", -10.0, proto::NORMAL),
            ("b", -10.0, proto::NORMAL),
            ("ab", -1.0, proto::NORMAL),
            ("\u{2581}a", -2.0, proto::NORMAL),
        ];
        let m = model(Kind::Bpe, &pieces, &[], false);
        let mut ids = Vec::new();
        // ▁ a b: "ab" (-1) beats "▁a" (-2); then ▁ + ab is no piece
        m.encode("ab", &mut ids).unwrap();
        assert_eq!(ids, vec![1, 4]);
        ids.clear();
        // x and y are unknown: one <unk> for the run
        m.encode("xy", &mut ids).unwrap();
        assert_eq!(ids, vec![1, 0]);
        assert_eq!(m.decode(&[1, 0, 4]).unwrap(), "?ab");
    }

    #[test]
    fn an_unknown_run_keeps_its_surface_as_its_piece() {
        // "axyb" normalizes to "▁axyb"; x and y have no piece, so the run xy is one <unk> id
        // whose piece is the text "xy" (as sentencepiece's out_type=str), and decoding the
        // pieces gives the text back where decoding the ids gives the unknown surface "?"
        let pieces = [
            ("<unk>", 0.0, proto::UNKNOWN),
            ("\u{2581}", -1.0, proto::NORMAL),
            ("a", -1.0, proto::NORMAL),
            ("b", -1.0, proto::NORMAL),
        ];
        let m = model(Kind::Unigram, &pieces, &[], false);
        let (ids, got) = m.encode_pieces("axyb").unwrap();
        assert_eq!(ids, vec![1, 2, 0, 3]);
        assert_eq!(got, vec!["\u{2581}", "a", "xy", "b"]);
        assert_eq!(m.decode(&ids).unwrap(), "a?b");
        let refs: Vec<&str> = got.iter().map(|p| p.as_str()).collect();
        assert_eq!(m.decode_pieces(&refs), "axyb");
        // the <unk> entry itself still decodes as the unknown surface
        assert_eq!(m.decode_pieces(&["a", "<unk>"]), "a?");
    }

    /// A small pseudo-random stream (xorshift64*), so the tests below are the same every run.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Unigram models over the letters a, b, c (and a user symbol), every piece of up to three
    /// letters, with or without a leading `▁`: scores drawn from a coarse grid (exact ties
    /// between segmentations everywhere), at random, or minus the piece's characters give or
    /// take 2^-10 (every segmentation of a word within a few 2^-10 of the others: the `f32` sums
    /// of a long text decide between them by rounding).
    fn word_models() -> Vec<SpModel> {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut out = Vec::new();
        for grid in 0..3 {
            let mut texts = Vec::new();
            for len in 1..=3 {
                for k in 0..3usize.pow(len) {
                    let w: String =
                        (0..len).map(|i| ["a", "b", "c"][k / 3usize.pow(i) % 3]).collect();
                    texts.push(format!("\u{2581}{w}"));
                    texts.push(w);
                }
            }
            texts.push("\u{2581}".into());
            let mut pieces = vec![("<unk>".to_string(), 0.0, proto::UNKNOWN)];
            pieces.push(("<u>".to_string(), 0.0, proto::USER_DEFINED));
            for t in texts {
                let score = match grid {
                    0 => -0.5 * (1 + rng.below(8)) as f32,
                    1 => -(rng.below(1 << 20) as f32) / (1 << 16) as f32 - 0.01,
                    _ => {
                        let jitter = (rng.below(1 << 11) as f32 - 1024.0) / (1 << 20) as f32;
                        jitter - t.chars().count() as f32
                    }
                };
                pieces.push((t, score, proto::NORMAL));
            }
            // the random grid's model with byte fallback: an unknown character becomes its bytes
            let byte_fallback = grid == 1;
            if byte_fallback {
                for b in 0..256 {
                    pieces.push((format!("<0x{b:02X}>"), 0.0, proto::BYTE));
                }
            }
            let pieces: Vec<(&str, f32, i32)> =
                pieces.iter().map(|(p, s, t)| (p.as_str(), *s, *t)).collect();
            out.push(model(Kind::Unigram, &pieces, &[], byte_fallback));
        }
        out
    }

    #[test]
    fn the_viterbi_word_by_word_is_the_whole_texts_run() {
        // texts of words over a, b, c, d and é (unknown) and <u>, from short lines to texts whose
        // running score passes sentencepiece's 1e5 reset threshold several times; each text's
        // cuts from the word-by-word run (cold, then warm) against the whole-text run
        let mut rng = Rng(0x0123_4567_89AB_CDEF);
        for m in word_models() {
            assert!(m.words_apart);
            let mut seg = Seg::default();
            let mut taken = 0usize;
            for round in 0..60 {
                let words = if round % 10 == 9 { 15_000 } else { 1 + rng.below(40) };
                // some rounds with words of up to 70 characters: past 64 bytes, below and past
                // the longest cached word (127)
                let longest = if round % 10 == 4 { 70 } else { 6 };
                let mut text = String::new();
                for _ in 0..words {
                    for _ in 0..1 + rng.below(longest) {
                        text.push_str(
                            ["a", "b", "c", "d", "<u>", "a", "b", "\u{e9}"][rng.below(8)],
                        );
                    }
                    text.push(' ');
                }
                let (normalized, _) = m.normalize(&text, false).unwrap();
                let norm = normalized.as_bytes();
                let (mut best, mut whole) = (Vec::new(), Vec::new());
                m.viterbi_in(norm, &mut best, &mut whole);
                let mut want = Vec::new();
                m.emit(norm, &whole, &mut want, None, None, None);
                for _ in 0..2 {
                    let mut by_words = Vec::new();
                    m.viterbi_by_words(norm, &mut seg, &mut by_words);
                    assert_eq!(by_words, whole, "{round}");
                    // and the ids straight from the words
                    let mut ids = Vec::new();
                    m.encode(&text, &mut ids).unwrap();
                    assert_eq!(ids, want, "{round}");
                }
                taken += seg.words.get("\u{2581}ab".as_bytes()).map_or(0, |_| 1);
            }
            // the cache was used at all
            assert!(taken > 0);
        }
    }

    #[test]
    fn a_word_is_cached_only_within_its_limit() {
        // "▁a" spelled ▁ + a (-1 each) or ▁a; limits worked by hand from word_viterbi's rule
        // (the largest 2^k below margin / (4 · 2 characters), then 2^(k+22) capped at 5e4,
        // less the largest |sum| of an arc, 2)
        let with = |joined: f32| {
            let pieces = [
                ("<unk>", 0.0, proto::UNKNOWN),
                ("\u{2581}", -1.0, proto::NORMAL),
                ("a", -1.0, proto::NORMAL),
                ("\u{2581}a", joined, proto::NORMAL),
            ];
            model(Kind::Unigram, &pieces, &[], false)
        };
        let word = "\u{2581}a".as_bytes();
        let limit = |m: &SpModel| {
            let (mut exact, mut out) = (Vec::new(), Vec::new());
            let l = m.word_viterbi(word, &mut exact, &mut out);
            (l, out)
        };
        // margin 0.5: 2^-5 < 1/16, 2^17 capped at 5e4
        assert_eq!(limit(&with(-1.5)), (49_998.0, vec![(0, 4, 3)]));
        // margin 1/16: 2^-8 < 2^-7, 2^14
        assert_eq!(limit(&with(-1.9375)), (16_382.0, vec![(0, 4, 3)]));
        // a tie is never provable
        assert!(limit(&with(-2.0)).0 < 0.0);
        // margin 2^-14 the other way (▁ + a wins): 2^-18 < 2^-17, so |P| ≤ 16 - 2.00006
        let m = with(-2.0 - 1.0 / 16384.0);
        let (l, cuts) = limit(&m);
        assert_eq!(cuts, vec![(0, 3, 1), (3, 4, 2)]);
        assert!(l > 13.9 && l < 14.0, "{l}");
        // and the limit matters: entered with -3e4 the f32 sums tie, and the run keeps ▁a
        let (mut best, mut run) = (Vec::new(), Vec::new());
        m.viterbi_from(word, -3e4, &mut best, &mut run);
        assert_eq!(run, vec![(0, 4, 3)]);
        run.clear();
        m.viterbi_from(word, -10.0, &mut best, &mut run);
        assert_eq!(run, cuts);
    }

    #[test]
    fn a_piece_across_a_space_turns_the_word_cache_off() {
        let pieces = [
            ("<unk>", 0.0, proto::UNKNOWN),
            ("\u{2581}", -1.0, proto::NORMAL),
            ("a", -1.0, proto::NORMAL),
            ("a\u{2581}a", -1.0, proto::NORMAL),
        ];
        assert!(!model(Kind::Unigram, &pieces, &[], false).words_apart);
        // `▁▁` (no other character before the second `▁`) keeps it on, as for BPE
        let pieces = [
            ("<unk>", 0.0, proto::UNKNOWN),
            ("\u{2581}\u{2581}", -1.0, proto::NORMAL),
            ("a", -1.0, proto::NORMAL),
        ];
        assert!(model(Kind::Unigram, &pieces, &[], false).words_apart);
    }

    #[test]
    fn the_space_lead_search_finds_the_first_one() {
        // against the byte-by-byte search, on texts of 0 to 40 bytes drawn from a few bytes
        // (0xE2 among them), from every start
        let mut rng = Rng(0x5EED);
        for _ in 0..2000 {
            let text: Vec<u8> =
                (0..rng.below(41)).map(|_| [b'a', 0xE2, 0x96, 0x81, 0xC3][rng.below(5)]).collect();
            for from in 0..=text.len() {
                let want = text[from..].iter().position(|&b| b == 0xE2).map(|k| from + k);
                assert_eq!(find_space_lead(&text, from), want, "{text:?} from {from}");
            }
        }
        // worked by hand: the lead in the second eight bytes, and two in one chunk
        let text = b"abcdefgh\x01\x02\xE2xyz";
        assert_eq!(find_space_lead(text, 0), Some(10));
        assert_eq!(find_space_lead(b"ab\xE2c\xE2", 0), Some(2));
        assert_eq!(find_space_lead(b"ab\xE2c\xE2", 3), Some(4));
        assert_eq!(find_space_lead(b"abcdefghijk", 0), None);
    }

    #[test]
    fn the_power_of_two_below_a_number() {
        // by hand: 2^k < x strictly, so a power of two gives the one below it
        assert_eq!(below_power(3.0), Some(2.0));
        assert_eq!(below_power(2.0), Some(1.0));
        assert_eq!(below_power(1.5), Some(1.0));
        assert_eq!(below_power(0.3), Some(0.25));
        assert_eq!(below_power(0.25), Some(0.125));
        assert_eq!(below_power(1e-300), Some(2f64.powi(-997)));
        assert_eq!(below_power(f64::INFINITY), None);
        assert_eq!(below_power(f64::MIN_POSITIVE), Some(0.0));
        assert_eq!(below_power(0.0), Some(0.0));
    }

    #[test]
    fn words_end_before_a_space_that_follows_another_character() {
        let s = "\u{2581}";
        let words = |text: &str| {
            let mut out = Vec::new();
            for_each_word(text.as_bytes(), |a, b| out.push((a, b)));
            out
        };
        assert_eq!(words(&format!("ab{s}{s}c{s}d{s}")), vec![(0, 2), (2, 9), (9, 13), (13, 16)]);
        // a text that starts with `▁`, and a lone ▁ run; é (0xC3 0xA9) and ☃ (0xE2 0x98 0x83,
        // the lead byte of ▁) are other characters
        assert_eq!(words(&format!("{s}a{s}{s}")), vec![(0, 4), (4, 10)]);
        assert_eq!(words(&format!("{s}{s}")), vec![(0, 6)]);
        assert_eq!(words(&format!("\u{e9}\u{2603}{s}x")), vec![(0, 5), (5, 9)]);
        assert_eq!(words(""), vec![]);
    }

    #[test]
    fn an_ascii_letter_skips_the_map_only_before_an_ascii_byte() {
        // a rule from "A" + U+0300 (as nmt_nfkc composes it) and one from "B" alone: "A" before
        // ASCII or at the end is copied, before the combining mark it is rewritten; "B" always
        let m = model(
            Kind::Unigram,
            &[("<unk>", 0.0, proto::UNKNOWN), ("a", -1.0, proto::NORMAL)],
            &[("A\u{300}", "\u{c0}"), ("B", "b")],
            false,
        );
        assert_eq!(m.plain_class[b'A' as usize], COPY_BEFORE_ASCII);
        assert_eq!(m.plain_class[b'B' as usize], LOOK_UP);
        assert_eq!(m.plain_class[b'C' as usize], COPY);
        let norm = |t: &str| m.normalize(t, false).unwrap().0;
        assert_eq!(norm("AA"), "\u{2581}AA");
        assert_eq!(norm("A\u{300}A"), "\u{2581}\u{c0}A");
        assert_eq!(norm("AA\u{300}"), "\u{2581}A\u{c0}");
        assert_eq!(norm("ABA"), "\u{2581}AbA");
        assert_eq!(norm("A\u{e9}"), "\u{2581}A\u{e9}");
    }

    #[test]
    fn a_character_skips_the_map_only_where_no_rule_can_match() {
        // rules as nmt_nfkc's: "и" + U+0306 composes to "й", "е" + U+0308 to "ё", the full-width
        // "Ａ" maps to "A", "ſ" (two bytes) and "ff" (three) map alone, one rule is "ы" + "x" and
        // one "A" + U+0300;
        // "к" and "中" start none. Every text of these characters normalizes (with offsets) as
        // with the fast path off.
        let rules = [
            ("\u{438}\u{306}", "\u{439}"),
            ("\u{435}\u{308}", "\u{451}"),
            ("\u{ff21}", "A"),
            ("\u{17f}", "s"),
            ("\u{fb00}", "ff"),
            ("\u{44b}x", "y"),
            ("\u{3000}", " "),
            ("A\u{300}", "\u{c0}"),
        ];
        let pieces = [
            ("<unk>", 0.0, proto::UNKNOWN),
            ("a", -1.0, proto::NORMAL),
            ("<u>", 0.0, proto::USER_DEFINED),
        ];
        let fast = model(Kind::Unigram, &pieces, &rules, false);
        let mut slow = model(Kind::Unigram, &pieces, &rules, false);
        slow.plain_bmp.fill(0);
        slow.rule_goes_on = [true; 256];
        let class = |m: &SpModel, c: char| {
            m.plain_bmp[(2 * c as usize) >> 6] >> ((2 * c as usize) & 63) & 3
        };
        assert_eq!(class(&fast, '\u{43a}'), CHAR_COPY);
        assert_eq!(class(&fast, '\u{4e2d}'), CHAR_COPY);
        assert_eq!(class(&fast, '\u{438}'), CHAR_COPY_BEFORE);
        assert_eq!(class(&fast, '\u{44b}'), CHAR_COPY_BEFORE);
        assert_eq!(class(&fast, '\u{ff21}'), 0);
        assert_eq!(class(&fast, '\u{17f}'), 0);
        assert!(fast.rule_goes_on[0xCC] && fast.rule_goes_on[b'x' as usize]);
        assert!(!fast.rule_goes_on[0xD0] && !fast.rule_goes_on[b'y' as usize]);
        // "A" goes on with U+0300 (0xCC 0x80), not with "é" (0xC3 0xA9)
        assert!(fast.rule_goes_on[0xCC] && !fast.rule_goes_on[0xC3]);
        let norm = |m: &SpModel, t: &str| m.normalize(t, true).unwrap();
        assert_eq!(norm(&fast, "\u{438}\u{306}\u{438}").0, "\u{2581}\u{439}\u{438}");
        assert_eq!(norm(&fast, "\u{44b}x\u{44b}y").0, "\u{2581}y\u{44b}y");
        let alphabet = [
            "\u{438}",
            "\u{306}",
            "\u{435}",
            "\u{308}",
            "\u{ff21}",
            "\u{17f}",
            "\u{fb00}",
            "\u{44b}",
            "x",
            "y",
            "\u{43a}",
            "\u{4e2d}",
            "\u{3000}",
            " ",
            "a",
            "<u>",
            "\u{1f600}",
            "\u{2581}",
            "A",
            "\u{300}",
            "\u{e9}",
        ];
        let mut rng = Rng(0x5EED);
        for _ in 0..3000 {
            let n = rng.below(9);
            let text: String = (0..n).map(|_| alphabet[rng.below(alphabet.len())]).collect();
            assert_eq!(norm(&fast, &text), norm(&slow, &text), "{text:?}");
        }
    }

    #[test]
    fn hostile_bytes_are_errors() {
        for blob in [&b""[..], b"\x0a\xff\xff\xff\xff\x0f", b"\x12\x05abc", &[0xff; 64]] {
            assert!(SpModel::from_bytes(blob.to_vec()).is_err());
        }
        assert!(Charsmap::parse(b"\x10\x00\x00\x00short").is_err());
    }
}
