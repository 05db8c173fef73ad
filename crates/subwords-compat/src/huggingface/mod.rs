//! Hugging Face `tokenizers` pipelines, encoded token for token.
//!
//! The Python side (`subwords.formats.huggingface`) reads a `tokenizer.json`, refuses every
//! component it cannot reproduce exactly, and hands this module a *plan*: the normalizers, the
//! pre-tokenizers, the model (BPE or WordPiece, with the file's own ids) and the added tokens.
//! Encoding follows `tokenizers`' order:
//!
//! 1. added tokens that match the raw text (`normalized: false`) are cut out, leftmost-longest;
//! 2. each remaining segment is normalized, and added tokens that match normalized text
//!    (`normalized: true`, their content normalized the same way) are cut out of it;
//! 3. each remaining piece is pre-tokenized into words;
//! 4. each word is cut by the model.
//!
//! BPE (the `tokenizers` rule, which is not always "apply a merge everywhere it occurs"): the
//! word starts as one symbol per character (with `continuing_subword_prefix` on all but the
//! first, `end_of_word_suffix` on the last; an unknown character becomes its `<0xNN>` rows under
//! `byte_fallback`, else `unk_token`, fused with a preceding unknown under `fuse_unk`, else
//! nothing). Then, repeatedly, the adjacent pair with the lowest merge rank is merged, the
//! leftmost on ties, until no pair has a merge. A pair created by a merge competes at once, so
//! when it ranks below the merge just made (possible in converted vocabularies) it is merged
//! before the remaining occurrences of that merge. Short words use a scan, O(n²) with tiny
//! constants; long words a min-heap of (rank, position) with stale entries skipped, O(n log n).
//! Both take the same minimum at every step.
//!
//! WordPiece: longest match first from the start of the word, continuation pieces carrying the
//! prefix (`##`); a word that cannot be finished, or longer than `max_input_chars_per_word`
//! characters, is one `unk_token` (the [`LongestMatch`] trie, linear in the word).
//!
//! Words are cached per worker; the cache only saves time.
//!
//! Measured (cl100k_base made into a tokenizer.json, `benchmarks/bench_encode_peers.py`, one CPU):
//! * the regex `Split` run by fancy-regex, the text copied through each pre-tokenizer's buffer
//!   and a map lookup per byte for added tokens: 7.5 MB/s on English lines, 10.7 on 16 KB
//!   chunks; with the hand-written scanner for the expression, words cut straight from the text
//!   (`HfPipeline::split_direct`) and a first-byte table for added tokens: 15.9 and 20.0.
//! * Byte-level BPE files whose words start as plain byte characters (GPT-2's, Llama 3's, our
//!   own) cut each word with [`byte_bpe`]: the whole-word and cache lookups by one packed
//!   integer, a byte-pair table and merges on the stack. o200k's file on English lines under
//!   callgrind: 34.8 M instructions before, 28.3 M after (with no scan for added tokens that
//!   cannot match), the rank engine 26.9 M.
//! * A file whose merges encode as a rank file does (every OpenAI vocabulary written as a
//!   tokenizer.json, our own byte-level models; [`rank_path`]) has its words cut by the rank
//!   engine itself, with the file's ids: o200k's file on 16 KB chunks of multilingual lines,
//!   185.1 M instructions in the encode calls with the byte-level step, 152.8 M with the rank
//!   engine, as many as the rank engine on the `.tiktoken` file; the byte-level step's merges
//!   read a hashed pair map of 375 k merges where the rank engine reads its dense and filtered
//!   tables, and its time was 0.6-0.8x the rank engine's (`bench_encode_peers.py`).

mod byte_bpe;
pub mod offsets;
mod rank_path;
pub mod rows;
pub mod tables;
pub mod unigram;

use offsets::Aligned;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Deserialize;
use subwords_core::hash::Map;
use unicode_categories::UnicodeCategories;
use unicode_general_category::{get_general_category, GeneralCategory as G};
use unicode_normalization_alignments::{
    is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization,
};

use subwords_core::batch::Slots;
use subwords_core::encoder::{Allowed, Encoder};
use subwords_core::error::{Error, Result};
use subwords_core::hash::pack;
use subwords_core::segmenters::longest_match::{LongestMatch, Match};
use subwords_core::spelling::{bert_cleans_away, byte_to_char_table, gpt2};
use subwords_core::word_cache::WordCache;

#[derive(Deserialize, Clone, Debug)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum Normalizer {
    Bert {
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
    },
    Lowercase,
    Prepend {
        prepend: String,
    },
    Replace {
        pattern: String,
        content: String,
    },
    /// `Replace` with the regex `\s+`: every run of White_Space characters becomes `content`.
    ReplaceWhitespaceRuns {
        content: String,
    },
    /// `Replace` with the regex ` {2,}` (converted SentencePiece models): every run of two or
    /// more spaces becomes `content`.
    ReplaceSpaceRuns {
        content: String,
    },
    /// SentencePiece's precompiled character map, applied as tokenizers does (by grapheme).
    Precompiled {
        charsmap: PrecompiledMap,
    },
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    Strip {
        left: bool,
        right: bool,
    },
    StripAccents,
}

/// A parsed character map inside a plan (read from the plan's list of bytes).
#[derive(Clone)]
pub struct PrecompiledMap(std::sync::Arc<crate::huggingface::unigram::Precompiled>);

impl std::fmt::Debug for PrecompiledMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrecompiledMap")
    }
}

impl<'de> Deserialize<'de> for PrecompiledMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let bytes: Vec<u8> = Vec::deserialize(d)?;
        crate::huggingface::unigram::Precompiled::new(&bytes)
            .map(|p| PrecompiledMap(std::sync::Arc::new(p)))
            .map_err(serde::de::Error::custom)
    }
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Prepend {
    Always,
    First,
    Never,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum PreTokenizer {
    /// Must be the last step: it leaves words as raw bytes, which the BPE model reads through the
    /// GPT-2 byte-to-character table.
    ByteLevel {
        add_prefix_space: bool,
        use_regex: bool,
    },
    Metaspace {
        replacement: char,
        prepend_scheme: Prepend,
        split: bool,
    },
    Bert,
    Whitespace,
    WhitespaceSplit,
    /// Numeric characters (`char::is_numeric`) cut out: each alone, or runs together.
    Digits {
        individual_digits: bool,
    },
    /// BERT's punctuation cut out: each alone (`Isolated`), or runs together (`Contiguous`).
    Punctuation {
        contiguous: bool,
    },
    /// A regex (or literal string) split with one of tokenizers' five behaviours.
    Split(SplitStep),
}

/// A BPE or WordPiece vocabulary's ids: each below [`MAX_ID`] and given once.
fn check_ids(vocab: &[(String, u32)]) -> Result<()> {
    let mut seen: Map<u32, usize> = Map::with_capacity_and_hasher(vocab.len(), Default::default());
    for (k, (t, id)) in vocab.iter().enumerate() {
        if *id >= MAX_ID {
            return Err(bad(format!(
                "model vocab: token {t:?} has id {id}, above the {MAX_ID} subwords accepts"
            )));
        }
        if let Some(&j) = seen.get(id) {
            return Err(bad(format!(
                "model vocab: tokens {:?} and {t:?} both have id {id}",
                vocab[j].0
            )));
        }
        seen.insert(*id, k);
    }
    Ok(())
}

/// What `Split` does with the matches (tokenizers' `SplitDelimiterBehavior`).
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SplitSpec {
    pattern: String,
    literal: bool,
    behavior: Behavior,
    invert: bool,
}

/// `Split`: the pattern compiled when the file is read (an invalid one refuses the file).
#[derive(Deserialize, Clone, Debug)]
#[serde(try_from = "SplitSpec")]
pub struct SplitStep {
    pattern: subwords_core::spelling::pattern::Pattern,
    behavior: Behavior,
    invert: bool,
}

impl TryFrom<SplitSpec> for SplitStep {
    type Error = String;
    fn try_from(s: SplitSpec) -> std::result::Result<Self, String> {
        use subwords_core::spelling::pattern::Pattern;
        let pattern =
            if s.literal { Pattern::literal(&s.pattern) } else { Pattern::new(&s.pattern) };
        Ok(SplitStep {
            pattern: pattern.map_err(|e| format!("pre_tokenizer Split: {e}"))?,
            behavior: s.behavior,
            invert: s.invert,
        })
    }
}

impl SplitStep {
    /// The words of `text` (byte ranges), as tokenizers' `split` with this behaviour gives them.
    fn split(&self, text: &str, base: usize, words: &mut Vec<(usize, usize)>) {
        let pieces: Vec<((usize, usize), bool)> =
            self.pattern.pieces(text).into_iter().map(|(r, m)| (r, m != self.invert)).collect();
        let mut out: Vec<(usize, usize)> = Vec::with_capacity(pieces.len());
        match self.behavior {
            Behavior::Isolated => out.extend(pieces.iter().map(|&(r, _)| r)),
            Behavior::Removed => out.extend(pieces.iter().filter(|&&(_, m)| !m).map(|&(r, _)| r)),
            Behavior::MergedWithPrevious => {
                // a match joins the piece before it (unless that piece was a match too)
                let mut prev_match = false;
                for &(r, m) in &pieces {
                    match out.last_mut() {
                        Some(last) if m && !prev_match => last.1 = r.1,
                        _ => out.push(r),
                    }
                    prev_match = m;
                }
            }
            Behavior::MergedWithNext => {
                // the mirror image: a match joins the piece after it
                let mut prev_match = false;
                for &(r, m) in pieces.iter().rev() {
                    match out.last_mut() {
                        Some(last) if m && !prev_match => last.0 = r.0,
                        _ => out.push(r),
                    }
                    prev_match = m;
                }
                out.reverse();
            }
            Behavior::Contiguous => {
                // neighbouring pieces of the same kind join (runs of matches become one)
                let mut prev_match = false;
                for &(r, m) in &pieces {
                    match out.last_mut() {
                        Some(last) if m == prev_match => last.1 = r.1,
                        _ => out.push(r),
                    }
                    prev_match = m;
                }
            }
        }
        words.extend(out.into_iter().filter(|r| r.0 < r.1).map(|(a, b)| (base + a, base + b)));
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct AddedToken {
    pub content: String,
    /// The content as the normalizers leave it (matched against normalized text).
    pub normalized_content: Option<String>,
    pub id: u32,
    pub special: bool,
    pub single_word: bool,
    pub lstrip: bool,
    pub rstrip: bool,
    pub normalized: bool,
}

#[derive(Deserialize, Debug)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum ModelPlan {
    Bpe {
        /// Filled by [`HfPipeline::with_tables`] when the plan leaves them out.
        #[serde(default)]
        vocab: Vec<(String, u32)>,
        /// (left id, right id, result id) in rank order
        #[serde(default)]
        merges: Vec<(u32, u32, u32)>,
        unk: Option<u32>,
        continuing_subword_prefix: Option<String>,
        end_of_word_suffix: Option<String>,
        fuse_unk: bool,
        byte_fallback: bool,
        ignore_merges: bool,
    },
    WordPiece {
        #[serde(default)]
        vocab: Vec<(String, u32)>,
        unk: u32,
        continuing_subword_prefix: String,
        max_input_chars_per_word: usize,
    },
    /// (piece, score) in id order; filled by [`HfPipeline::with_tables`] when the plan leaves
    /// them out.
    Unigram {
        #[serde(default)]
        pieces: Vec<(String, f64)>,
        unk: u32,
        byte_fallback: bool,
    },
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub normalizers: Vec<Normalizer>,
    pub pre_tokenizers: Vec<PreTokenizer>,
    pub model: ModelPlan,
    pub added: Vec<AddedToken>,
}

const NO_ID: u32 = u32::MAX;
/// Ids at or above this are refused (the Python side keeps an id -> token table).
pub const MAX_ID: u32 = 1 << 24;
/// Words of at most this many symbols are merged by scanning for the best pair; longer ones by
/// a heap of pairs.
const SCAN_SYMBOLS: usize = 48;
const CACHED_WORD: usize = 256;

pub type Cache = WordCache<u32>;

/// Buffers of [`HfPipeline::encode_into`], kept with a worker's cache.
#[derive(Default)]
pub struct PipelineBuffers {
    words: Vec<(usize, usize)>,
    next: Vec<(usize, usize)>,
    bufs: (String, String),
    segments: Vec<Segment>,
    norm_segments: Vec<Segment>,
    /// The rank engine's state, the word cache lent to it for each piece: made afresh per piece
    /// (`RankBpe::encode_ordinary_cached`), it allocated and zeroed its batch buffer, ~2,100
    /// instructions of a call on an English line (callgrind, o200k).
    rank_state: crate::tiktoken::RankState,
}
/// The original spans of a word buffer's bytes, and of the next buffer being written.
type SpanBufs = (Vec<Span>, Vec<Span>);
/// A byte span of the original text.
type Span = (u32, u32);

struct Bpe {
    vocab: Map<Box<str>, u32>,
    /// ignore_merges under ByteLevel: the vocabulary keyed by the raw bytes a piece stands for
    raw_vocab: Map<Box<[u8]>, u32>,
    merges: Map<u64, (u32, u32)>,
    unk: Option<u32>,
    prefix: Option<String>,
    suffix: Option<String>,
    fuse_unk: bool,
    byte_fallback: bool,
    ignore_merges: bool,
    /// id of the character (no prefix/suffix) for ASCII, for the common path
    ascii: [u32; 128],
    /// ByteLevel: the id of each byte's character (no prefix/suffix)
    byte_char: [u32; 256],
    /// `<0xNN>` rows
    fallback: [u32; 256],
    /// The model step's cheaper lookups when words start as plain byte characters (ByteLevel, no
    /// prefix or suffix, all 256 byte characters in the vocabulary).
    byte_bpe: Option<byte_bpe::ByteBpe>,
}

/// The tokenizer.json model (its `"model"` object) ready to cut words.
// the WordPiece variant (its matcher inline, and the token lengths for offsets) is the large
// one; a pipeline holds one model, so its size does not matter
#[allow(clippy::large_enum_variant)]
enum Model {
    Bpe(Box<Bpe>),
    /// `lens`: each id's token length in bytes, for offsets (a continuation's less the prefix)
    WordPiece {
        lm: LongestMatch,
        unk: u32,
        max_chars: usize,
        lens: Map<u32, u32>,
        prefix_len: u32,
    },
    Unigram(Box<crate::huggingface::unigram::HfUnigram>),
}

/// A matcher for added tokens: leftmost start first, longest content there.
struct Added {
    tokens: Vec<AddedToken>,
    /// first byte -> indices into `tokens`, longest content first
    raw_by_byte: Map<u8, Vec<usize>>,
    norm_by_byte: Map<u8, Vec<usize>>,
    /// Whether a byte begins some added token, raw and normalized: the scan skips the others
    /// without a map lookup (a lookup per byte was 18 instructions a byte of cl100k's text).
    raw_first: [bool; 256],
    norm_first: [bool; 256],
    /// Whether some raw (normalized) added token is not special, and so matches in every call.
    raw_plain: bool,
    norm_plain: bool,
}

pub struct HfPipeline {
    normalizers: Vec<Normalizer>,
    pre: Vec<PreTokenizer>,
    byte_level: bool,
    model: Model,
    added: Added,
    byte_chars: [char; 256],
    /// word caches and buffers, one per worker (slot 0: single calls)
    caches: Slots<(Cache, PipelineBuffers)>,
    /// Every added token as (content, id), in the plan's order: the specials a call may allow
    /// (a non-special added token matches whatever the call allows, as in tokenizers).
    specials: Vec<(String, u32)>,
    /// The rank engine cutting the words, when the file's byte-level BPE encodes as a rank
    /// file does ([`rank_path`]).
    rank: Option<crate::tiktoken::RankBpe>,
}

fn bad(m: impl Into<String>) -> Error {
    Error::ModelFile(m.into())
}

/// BERT's punctuation as tokenizers' BertPreTokenizer and Punctuation read it: ASCII symbols
/// and the Unicode punctuation categories by its own Unicode 9 tables (so U+166D, a symbol since
/// Unicode 12, still counts, and the punctuation added since does not).
fn is_hf_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_ascii() && c.is_punctuation())
}

/// The blocks tokenizers' BertNormalizer pads with spaces. Its fifth extension range starts at
/// U+2B920 where BERT's own list starts it at U+2B820, so U+2B820..U+2B91F are not padded here
/// either (subwords' own `bert` spelling pads them, as BERT does).
fn is_hf_chinese_char(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B920..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// `\w` as the `regex` crate reads it: Alphabetic, marks, decimal digits, connector punctuation,
/// and the two join controls.
fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    c.is_alphabetic()
        || matches!(
            get_general_category(c),
            G::NonspacingMark
                | G::SpacingMark
                | G::EnclosingMark
                | G::DecimalNumber
                | G::ConnectorPunctuation
        )
        || c == '\u{200C}'
        || c == '\u{200D}'
}

impl HfPipeline {
    /// A pipeline from its plan, the model's vocabulary in it.
    pub fn new(mut plan: Plan) -> Result<Self> {
        let vocab = match &mut plan.model {
            ModelPlan::Bpe { vocab, .. } | ModelPlan::WordPiece { vocab, .. } => {
                std::mem::take(vocab)
            }
            ModelPlan::Unigram { .. } => Vec::new(),
        };
        // as `with_tables` checks them: an id past MAX_ID sized the WordPiece trie's table by it
        // (`hf_pipeline`'s smoke run, an id of 4294967295: an out-of-memory)
        check_ids(&vocab)?;
        Self::build(plan, &vocab)
    }

    /// A pipeline from its plan and the BPE or WordPiece model's vocabulary, given apart (the
    /// plan's own is not read).
    fn build(plan: Plan, vocab: &[(String, u32)]) -> Result<Self> {
        let byte_level =
            plan.pre_tokenizers.iter().any(|p| matches!(p, PreTokenizer::ByteLevel { .. }));
        if let Some(k) =
            plan.pre_tokenizers.iter().position(|p| matches!(p, PreTokenizer::ByteLevel { .. }))
        {
            if k + 1 != plan.pre_tokenizers.len() {
                return Err(bad("pre_tokenizer: a step after ByteLevel is not supported"));
            }
        }
        let byte_chars = byte_to_char_table();
        let mut rank = None;
        let model = match plan.model {
            ModelPlan::Bpe {
                merges,
                unk,
                continuing_subword_prefix,
                end_of_word_suffix,
                fuse_unk,
                byte_fallback,
                ignore_merges,
                ..
            } => {
                let size = vocab.len();
                let mut map: Map<Box<str>, u32> =
                    Map::with_capacity_and_hasher(size, Default::default());
                for (t, id) in vocab {
                    map.insert(t.as_str().into(), *id);
                }
                if map.len() != size {
                    return Err(bad("model.vocab: a token appears twice"));
                }
                let mut merge_map: Map<u64, (u32, u32)> =
                    Map::with_capacity_and_hasher(merges.len(), Default::default());
                for (rank, (a, b, c)) in merges.into_iter().enumerate() {
                    // tokenizers keeps the last rank of a pair listed twice
                    merge_map.insert(pack(a, b), (rank as u32, c));
                }
                let prefix = continuing_subword_prefix.filter(|p| !p.is_empty());
                let suffix = end_of_word_suffix.filter(|p| !p.is_empty());
                let mut ascii = [NO_ID; 128];
                for c in 0..128u8 {
                    let s = (c as char).to_string();
                    ascii[c as usize] = map.get(s.as_str()).copied().unwrap_or(NO_ID);
                }
                let mut byte_char = [NO_ID; 256];
                let mut fallback = [NO_ID; 256];
                for b in 0..256usize {
                    byte_char[b] =
                        map.get(byte_chars[b].to_string().as_str()).copied().unwrap_or(NO_ID);
                    fallback[b] =
                        map.get(format!("<0x{b:02X}>").as_str()).copied().unwrap_or(NO_ID);
                }
                let mut raw_vocab = Map::default();
                if byte_level && ignore_merges {
                    let mut back: Map<char, u8> = Map::default();
                    for (b, &c) in byte_chars.iter().enumerate() {
                        back.insert(c, b as u8);
                    }
                    for (t, &id) in &map {
                        let raw: Option<Vec<u8>> =
                            t.chars().map(|c| back.get(&c).copied()).collect();
                        if let Some(raw) = raw {
                            raw_vocab.insert(raw.into_boxed_slice(), id);
                        }
                    }
                }
                let mut bpe = Bpe {
                    vocab: map,
                    raw_vocab,
                    merges: merge_map,
                    unk,
                    prefix,
                    suffix,
                    fuse_unk,
                    byte_fallback,
                    ignore_merges,
                    ascii,
                    byte_char,
                    fallback,
                    byte_bpe: None,
                };
                if byte_level {
                    // the rank engine, when it can stand in, cuts the words instead
                    rank = rank_path::rank_engine(&bpe, &plan.pre_tokenizers);
                    if rank.is_none() {
                        bpe.byte_bpe = byte_bpe::ByteBpe::new(&bpe);
                    }
                }
                Model::Bpe(Box::new(bpe))
            }
            ModelPlan::WordPiece {
                unk,
                continuing_subword_prefix,
                max_input_chars_per_word,
                ..
            } => {
                if byte_level {
                    return Err(bad(
                        "pre_tokenizer ByteLevel with a WordPiece model is not supported",
                    ));
                }
                if continuing_subword_prefix.is_empty() {
                    return Err(bad(
                        "model WordPiece with an empty continuing_subword_prefix is not supported",
                    ));
                }
                let lm = LongestMatch::new(
                    vocab.iter().map(|(t, id)| (t.as_bytes(), *id)),
                    Some(continuing_subword_prefix.as_bytes()),
                    None,
                );
                let lens = vocab.iter().map(|(t, id)| (*id, t.len() as u32)).collect();
                let prefix_len = continuing_subword_prefix.len() as u32;
                Model::WordPiece { lm, unk, max_chars: max_input_chars_per_word, lens, prefix_len }
            }
            ModelPlan::Unigram { pieces, unk, byte_fallback } => {
                if byte_level {
                    return Err(bad(
                        "pre_tokenizer ByteLevel with a Unigram model is not supported",
                    ));
                }
                Model::Unigram(Box::new(crate::huggingface::unigram::HfUnigram::new(
                    pieces,
                    Some(unk),
                    byte_fallback,
                )?))
            }
        };
        let mut added = Added {
            tokens: plan.added,
            raw_by_byte: Map::default(),
            norm_by_byte: Map::default(),
            raw_first: [false; 256],
            norm_first: [false; 256],
            raw_plain: false,
            norm_plain: false,
        };
        for (i, t) in added.tokens.iter().enumerate() {
            let (content, map) = if t.normalized {
                (t.normalized_content.as_deref().unwrap_or(&t.content), &mut added.norm_by_byte)
            } else {
                (t.content.as_str(), &mut added.raw_by_byte)
            };
            if let Some(&b) = content.as_bytes().first() {
                map.entry(b).or_default().push(i);
                if t.normalized {
                    added.norm_first[b as usize] = true;
                    added.norm_plain |= !t.special;
                } else {
                    added.raw_first[b as usize] = true;
                    added.raw_plain |= !t.special;
                }
            }
        }
        let toks = &added.tokens;
        let len = |i: usize, norm: bool| -> usize {
            if norm {
                toks[i].normalized_content.as_deref().unwrap_or(&toks[i].content).len()
            } else {
                toks[i].content.len()
            }
        };
        for v in added.raw_by_byte.values_mut() {
            v.sort_by_key(|&i| (Reverse(len(i, false)), i));
        }
        for v in added.norm_by_byte.values_mut() {
            v.sort_by_key(|&i| (Reverse(len(i, true)), i));
        }
        let specials = added.tokens.iter().map(|t| (t.content.clone(), t.id)).collect();
        Ok(HfPipeline {
            normalizers: plan.normalizers,
            pre: plan.pre_tokenizers,
            byte_level,
            model,
            added,
            byte_chars,
            caches: Slots::default(),
            specials,
            rank,
        })
    }

    /// [`HfPipeline::with_plan`] on a plan given as JSON text (the fuzz targets' input).
    pub fn with_tables(text: &str, tables: &tables::Tables) -> Result<Self> {
        let plan: Plan =
            serde_json::from_str(text).map_err(|e| bad(format!("internal plan: {e}")))?;
        Self::with_plan(plan, tables)
    }

    /// The plan with the model's vocabulary and merges given apart (as the file has them): ids
    /// are checked (below `MAX_ID`, each once) and merges resolved to ids, refusing a merge that
    /// names a token the vocabulary lacks or makes one it lacks.
    /// A Unigram model's pieces come from the tables' scores when the plan has none.
    pub fn with_plan(mut plan: Plan, tables: &tables::Tables) -> Result<Self> {
        let (vocab, merges) = (tables.vocab.as_slice(), tables.merges.as_slice());
        check_ids(vocab)?;
        match &mut plan.model {
            ModelPlan::Bpe { merges: m, continuing_subword_prefix, .. } => {
                let prefix = continuing_subword_prefix.as_deref().filter(|p| !p.is_empty());
                let mut out = Vec::with_capacity(merges.len());
                let mut joined = String::new();
                for (k, (a, b)) in merges.iter().enumerate() {
                    let get = |t: &str| {
                        tables.get(t).ok_or_else(|| {
                            bad(format!("model BPE merges: merge {k} ({a:?}, {b:?}) names {t:?}, which is not in the vocab"))
                        })
                    };
                    let (ia, ib) = (get(a)?, get(b)?);
                    let rest = match prefix {
                        Some(p) => b.strip_prefix(p).ok_or_else(|| {
                            bad(format!("model BPE merges: merge {k}: {b:?} does not start with continuing_subword_prefix {p:?}"))
                        })?,
                        None => b.as_str(),
                    };
                    joined.clear();
                    joined.push_str(a);
                    joined.push_str(rest);
                    let ic = tables.get(joined.as_str()).ok_or_else(|| {
                        bad(format!("model BPE merges: merge {k} ({a:?}, {b:?}) makes {joined:?}, which is not in the vocab"))
                    })?;
                    out.push((ia, ib, ic));
                }
                *m = out;
            }
            ModelPlan::Unigram { pieces, .. } if pieces.is_empty() => {
                if tables.scores.len() != vocab.len() {
                    return Err(bad("model Unigram: no pieces with scores"));
                }
                *pieces = vocab
                    .iter()
                    .zip(&tables.scores)
                    .map(|((t, _), &score)| (t.clone(), score))
                    .collect();
            }
            ModelPlan::WordPiece { .. } | ModelPlan::Unigram { .. } => {}
        }
        Self::build(plan, vocab)
    }

    /// A pipeline from the JSON of its plan, tables included (the fuzz target's entry point).
    pub fn from_json(text: &str) -> Result<Self> {
        let plan: Plan =
            serde_json::from_str(text).map_err(|e| bad(format!("internal plan: {e}")))?;
        Self::new(plan)
    }

    /// Ids of `text`. `allowed[i]` says whether the i-th added token may match (non-special ones
    /// always may; the caller decides for special ones).
    pub fn encode(&self, text: &str, allowed: &[bool]) -> Vec<u32> {
        self.caches
            .with(0, |(cache, scratch)| self.encode_with(text, allowed, Some(cache), None, scratch))
    }

    /// [`HfPipeline::encode`] by the general model step alone, without the byte-level one's
    /// lookups ([`byte_bpe`]) and without a cache: the same ids, for tests that check so.
    pub fn encode_general(&self, text: &str, allowed: &[bool]) -> Vec<u32> {
        let mut out = Vec::new();
        let scratch = &mut PipelineBuffers::default();
        self.encode_into(text, allowed, None, None, scratch, &mut out, false);
        out
    }

    /// Whether the model step takes the byte-level lookups ([`byte_bpe`], or the rank engine
    /// of [`rank_path`]) on the words the pre-tokenizers cut straight from the text.
    pub fn byte_level_fast(&self) -> bool {
        (self.byte_bpe().is_some() || self.rank.is_some()) && self.split_direct_with("", |_, _| {})
    }

    /// Whether the rank engine cuts the words ([`rank_path`]): the file's byte-level BPE
    /// encodes as a rank file does.
    pub fn rank_fast(&self) -> bool {
        self.rank.is_some()
    }

    /// The ids of `text` and the tokens whose string is not their id's vocabulary entry, as
    /// `(position in the ids, string)`: tokenizers' `Encoding.tokens` holds the matched text
    /// for an added token (with the whitespace `lstrip`/`rstrip` swallowed, in normalized form
    /// for a `normalized` one) and, under a Unigram model, the unknown characters themselves for
    /// the unknown id. (No cache: the cached words keep no strings.)
    pub fn encode_surfaces(
        &self,
        text: &str,
        allowed: &[bool],
    ) -> (Vec<u32>, Vec<(usize, String)>) {
        let mut notes = Vec::new();
        let ids = self.encode_with(
            text,
            allowed,
            None,
            Some(&mut notes),
            &mut PipelineBuffers::default(),
        );
        (ids, notes)
    }

    /// [`HfPipeline::encode_into`] into a new vector.
    fn encode_with(
        &self,
        text: &str,
        allowed: &[bool],
        cache: Option<&mut Cache>,
        notes: Option<&mut Vec<(usize, String)>>,
        scratch: &mut PipelineBuffers,
    ) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_into(text, allowed, cache, notes, scratch, &mut out, true);
        out
    }

    /// The ids of `text` appended to `out`, with buffers kept across texts (a batch made a dozen
    /// allocations per text before, a third of its instructions in `malloc`, `free` and
    /// `realloc` on a batch of lines; on 2 threads more, each new worker's allocator cache
    /// starting empty). `notes` (positions in `out`) only with an empty `out`; `fast`: whether
    /// the byte-level lookups may cut the words.
    #[allow(clippy::too_many_arguments)]
    fn encode_into(
        &self,
        text: &str,
        allowed: &[bool],
        mut cache: Option<&mut Cache>,
        mut notes: Option<&mut Vec<(usize, String)>>,
        scratch: &mut PipelineBuffers,
        out: &mut Vec<u32>,
        fast: bool,
    ) {
        debug_assert!(notes.is_none() || out.is_empty());
        let PipelineBuffers { words, next, bufs, segments, norm_segments, rank_state } = scratch;
        segments.clear();
        self.split_added(text, false, allowed, segments);
        for &s in segments.iter() {
            let (a, b) = match s {
                Segment::Token(id, a, b) => {
                    if let Some(n) = notes.as_deref_mut() {
                        n.push((out.len(), text[a..b].to_string()));
                    }
                    out.push(id);
                    continue;
                }
                Segment::Text(a, b) => (a, b),
            };
            let at_start = a == 0;
            // step 2: normalize, then cut normalized added tokens out
            let normalized;
            let seg = if self.normalizers.is_empty() {
                &text[a..b]
            } else {
                normalized = self.normalize(&text[a..b]);
                &normalized[..]
            };
            norm_segments.clear();
            self.split_added(seg, true, allowed, norm_segments);
            for &s in norm_segments.iter() {
                match s {
                    Segment::Token(id, a, b) => {
                        if let Some(n) = notes.as_deref_mut() {
                            n.push((out.len(), seg[a..b].to_string()));
                        }
                        out.push(id)
                    }
                    Segment::Text(a, b) => {
                        let piece = &seg[a..b];
                        if let Some(rank) = self.rank.as_ref().filter(|_| fast) {
                            match cache.as_deref_mut() {
                                Some(c) => {
                                    use crate::tiktoken::RankBpe;
                                    use subwords_core::encoder::{Allowed, Encoder};
                                    std::mem::swap(<RankBpe as Encoder>::cache(rank_state), c);
                                    // nothing allowed: RankBpe::encode_ordinary_cached's ids
                                    let none = Allowed::none();
                                    let done =
                                        Encoder::encode_into(rank, piece, &none, rank_state, out);
                                    std::mem::swap(<RankBpe as Encoder>::cache(rank_state), c);
                                    debug_assert!(
                                        done.is_ok(),
                                        "the rank engine's encode does not fail"
                                    );
                                }
                                None => {
                                    rank.encode_ordinary_cached(piece, &mut Cache::default(), out)
                                }
                            }
                            continue;
                        }
                        if let Some((bpe, fast)) = self.byte_bpe().filter(|_| fast) {
                            let bytes = piece.as_bytes();
                            let mut word = |x: usize, y: usize| {
                                fast.encode_word(bpe, bytes, x, y, out, cache.as_deref_mut())
                            };
                            if self.split_direct_with(piece, &mut word) {
                                continue;
                            }
                        }
                        let first = at_start && a == 0;
                        let direct = self.split_direct(piece, words);
                        if !direct {
                            self.pre_tokenize(piece, first, words, next, bufs, None);
                        }
                        let src: &str = if self.pre.is_empty() || direct { piece } else { &bufs.0 };
                        for &(x, y) in words.iter() {
                            self.encode_word(
                                &src.as_bytes()[x..y],
                                out,
                                cache.as_deref_mut(),
                                notes.as_deref_mut(),
                            );
                        }
                    }
                }
            }
        }
    }

    // -- offsets --------------------------------------------------------------------------

    /// `(id, start, end)` for each token of `text`, in code points of `text`, as tokenizers'
    /// `Tokenizer.encode(text).offsets` gives them in Python (no template). An added token spans
    /// its match with the whitespace `lstrip`/`rstrip` took; a token of normalized text spans
    /// the original characters its bytes came from (see [`offsets`]). `trim`: the
    /// post-processor's `trim_offsets` is on, with this `add_prefix_space`.
    pub fn encode_offsets(
        &self,
        text: &str,
        allowed: &[bool],
        trim: Option<bool>,
    ) -> Vec<(u32, u32, u32)> {
        let (mut ids, mut offs) = (Vec::new(), Vec::new());
        self.encode_offsets_into(
            text,
            allowed,
            trim,
            &mut SpanState::default(),
            &mut ids,
            &mut offs,
        );
        ids.into_iter().zip(offs).map(|(i, (a, b))| (i, a, b)).collect()
    }

    /// [`HfPipeline::encode_offsets`] appending the ids to `ids` and their `(start, end)` to
    /// `offs`, with a worker's `state` kept from text to text: each word's ids and spans (a
    /// batch's texts share their common words: the model's share of English lines' offsets
    /// through a WordPiece model was a sixth, computed afresh at every word) and every buffer
    /// (a dozen allocations per text before).
    pub fn encode_offsets_into(
        &self,
        text: &str,
        allowed: &[bool],
        trim: Option<bool>,
        state: &mut SpanState,
        ids: &mut Vec<u32>,
        offs: &mut Vec<(u32, u32)>,
    ) {
        let start = offs.len();
        // per token, the `Ġ`/whitespace characters it begins and ends with (for `trim` only)
        state.ends.clear();
        let want_ends = trim.is_some();
        let mut segments = std::mem::take(&mut state.segments);
        segments.clear();
        self.split_added(text, false, allowed, &mut segments);
        for &s in &segments {
            match s {
                Segment::Token(id, a, b) => {
                    ids.push(id);
                    offs.push((a as u32, b as u32));
                    if want_ends {
                        state.ends.push(space_ends(&text[a..b]));
                    }
                }
                Segment::Text(a, b) => {
                    self.text_offsets(&text[a..b], a, allowed, want_ends, ids, offs, state)
                }
            }
        }
        state.segments = segments;
        // tokenizers' Python binding turns the spans into code points as it encodes, before
        // the post-processor trims them: the trimming counts code points
        offsets::char_offsets_with(text, &mut offs[start..], &mut state.map);
        if let Some(add_prefix_space) = trim {
            offsets::trim_offsets(&state.ends, &mut offs[start..], add_prefix_space);
        }
    }

    /// The text as the normalizers leave it, with each byte's original span (`base` is where
    /// `seg` starts in the text).
    pub fn normalize_aligned(&self, seg: &str, base: usize) -> Aligned {
        let mut al = Aligned::default();
        self.normalize_aligned_into(seg, base, &mut al);
        al
    }

    /// [`HfPipeline::normalize_aligned`] into `al`'s buffers.
    fn normalize_aligned_into(&self, seg: &str, base: usize, al: &mut Aligned) {
        al.reset(seg, base);
        for n in &self.normalizers {
            align_normalizer(n, al);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn text_offsets(
        &self,
        seg: &str,
        base: usize,
        allowed: &[bool],
        want_ends: bool,
        ids: &mut Vec<u32>,
        offs: &mut Vec<(u32, u32)>,
        state: &mut SpanState,
    ) {
        let SpanState {
            cache,
            norm_segments,
            words,
            next,
            bufs,
            wspans,
            ends,
            entry,
            wids,
            wsp,
            aligned: al,
            ..
        } = state;
        self.normalize_aligned_into(seg, base, al);
        let norm = al.text.as_str();
        let at = al.base;
        let span_of = |spans: &[(u32, u32)], a: usize, b: usize| -> (u32, u32) {
            if spans.is_empty() {
                return (at, at);
            }
            if a >= b {
                let s = spans[a.min(spans.len() - 1)].0;
                return (s, s);
            }
            (spans[a].0, spans[b.min(spans.len()) - 1].1)
        };
        norm_segments.clear();
        self.split_added(norm, true, allowed, norm_segments);
        for &s in norm_segments.iter() {
            match s {
                Segment::Token(id, a, b) => {
                    ids.push(id);
                    offs.push(span_of(&al.spans, a, b));
                    if want_ends {
                        ends.push(space_ends(&norm[a..b]));
                    }
                }
                Segment::Text(a, b) => {
                    let piece = &norm[a..b];
                    let first = base == 0 && a == 0;
                    self.pre_tokenize(
                        piece,
                        first,
                        words,
                        next,
                        bufs,
                        Some((&al.spans[a..b], &mut *wspans)),
                    );
                    let src: &str = if self.pre.is_empty() { piece } else { &bufs.0 };
                    let sp: &[(u32, u32)] =
                        if self.pre.is_empty() { &al.spans[a..b] } else { &wspans.0 };
                    for &(x, y) in words.iter() {
                        let word = &src.as_bytes()[x..y];
                        // the word's own ids and spans, then moved on (spans padded to the ids
                        // before them cost a line a pass over all its ids at every word)
                        entry.clear();
                        match cache.get(word) {
                            Some(hit) => entry.extend_from_slice(hit),
                            None => {
                                wids.clear();
                                wsp.clear();
                                self.encode_word_spans(word, wids, wsp);
                                entry.extend(
                                    wids.iter().zip(wsp.iter()).map(|(&id, &(p, q))| (id, p, q)),
                                );
                                cache.insert(word, entry);
                            }
                        }
                        for &(id, p, q) in entry.iter() {
                            ids.push(id);
                            let (lo, hi) = ((x + p as usize).min(y), (x + q as usize).min(y));
                            offs.push(span_of(sp, lo, hi));
                            if !want_ends {
                                continue;
                            }
                            ends.push(if self.byte_level {
                                let t = &src.as_bytes()[lo..hi];
                                let lead = t.iter().take_while(|&&b| b == b' ').count() as u32;
                                let trail =
                                    t.iter().rev().take_while(|&&b| b == b' ').count() as u32;
                                (lead, trail)
                            } else {
                                src.get(lo..hi).map_or((0, 0), space_ends)
                            });
                        }
                    }
                }
            }
        }
    }

    /// The model on one word, pushing each id's byte range in the word to `spans` (which holds
    /// one entry per id of `out` on entry). tokenizers' BPE and WordPiece place each token
    /// after the one before by its length; its Unigram gives each piece its own range.
    fn encode_word_spans(&self, word: &[u8], out: &mut Vec<u32>, spans: &mut Vec<(u32, u32)>) {
        if word.is_empty() {
            return;
        }
        let mut lens: Vec<u32> = Vec::new();
        let lens = &mut lens;
        let start = out.len();
        match &self.model {
            Model::Bpe(bpe) => {
                if let Some(id) = self.whole_word(bpe, word) {
                    out.push(id);
                    spans.push((0, word.len() as u32));
                    return;
                }
                let mut syms: Vec<u32> = Vec::with_capacity(word.len());
                let mut l: Vec<u32> = Vec::with_capacity(word.len());
                self.bpe_symbols_lens(bpe, word, &mut syms, Some(&mut l));
                if !l.is_empty() {
                    merge_word_lens(&mut syms, &bpe.merges, &mut l);
                }
                out.extend_from_slice(&syms);
                lens.extend_from_slice(&l);
            }
            Model::Unigram(u) => {
                let s = std::str::from_utf8(word).unwrap_or("");
                let _ = u.tokenize_spans(s, out, None, Some(spans));
                spans.resize(out.len(), (0, 0));
                return;
            }
            Model::WordPiece { lm, unk, max_chars, lens: piece_lens, prefix_len } => {
                let s = std::str::from_utf8(word).unwrap_or("");
                let whole = |out: &mut Vec<u32>, lens: &mut Vec<u32>| {
                    out.push(*unk);
                    lens.push(word.len() as u32);
                };
                if s.chars().count() > *max_chars {
                    whole(out, lens);
                } else {
                    match lm.cut(word) {
                        Match::Pieces(p) => {
                            for (k, &id) in p.iter().enumerate() {
                                let n = piece_lens.get(&id).copied().unwrap_or(0);
                                lens.push(if k == 0 { n } else { n.saturating_sub(*prefix_len) });
                            }
                            out.extend_from_slice(&p);
                        }
                        Match::Failed { .. } => whole(out, lens),
                    }
                }
            }
        }
        // each token after the one before, by its length
        let mut pos = 0u32;
        for k in 0..out.len() - start {
            let len = lens.get(k).copied().unwrap_or(0);
            spans.push((pos, pos + len));
            pos += len;
        }
    }

    // -- added tokens ---------------------------------------------------------------------

    /// Cuts `text` into text segments and added tokens, as `tokenizers` does: matches are found
    /// leftmost-longest without overlap; a `single_word` match with a word character beside it
    /// is dropped; `lstrip`/`rstrip` swallow the whitespace beside a match.
    fn split_added(&self, text: &str, normalized: bool, allowed: &[bool], out: &mut Vec<Segment>) {
        let by_byte = if normalized { &self.added.norm_by_byte } else { &self.added.raw_by_byte };
        let first = if normalized { &self.added.norm_first } else { &self.added.raw_first };
        let plain = if normalized { self.added.norm_plain } else { self.added.raw_plain };
        if by_byte.is_empty() || text.is_empty() || !(plain || allowed.contains(&true)) {
            // (every added token here a special one the call does not allow: a byte scan of the
            // text for nothing was 7 instructions a byte of English lines under o200k's file)
            out.push(Segment::Text(0, text.len()));
            return;
        }
        let bytes = text.as_bytes();
        // all matches first (leftmost-longest, non-overlapping), then the flags, as tokenizers
        let mut matches: Vec<(usize, usize, usize)> = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i..].iter().position(|&b| first[b as usize]) {
                Some(k) => i += k,
                None => break,
            }
            let mut found = None;
            if let Some(cands) = by_byte.get(&bytes[i]) {
                for &k in cands {
                    let t = &self.added.tokens[k];
                    if t.special && !allowed.get(k).copied().unwrap_or(false) {
                        continue;
                    }
                    let content = if normalized {
                        t.normalized_content.as_deref().unwrap_or(&t.content)
                    } else {
                        &t.content
                    };
                    if bytes[i..].starts_with(content.as_bytes()) {
                        found = Some((k, content.len()));
                        break;
                    }
                }
            }
            match found {
                Some((k, n)) => {
                    matches.push((k, i, i + n));
                    i += n;
                }
                None => i += 1,
            }
        }
        let mut start_offset = 0;
        let before = out.len();
        for (k, mut start, mut stop) in matches {
            let t = &self.added.tokens[k];
            if t.single_word {
                let left_ok =
                    start == 0 || !text[..start].chars().next_back().is_some_and(is_word_char);
                let right_ok =
                    stop == text.len() || !text[stop..].chars().next().is_some_and(is_word_char);
                if !left_ok || !right_ok {
                    continue;
                }
            }
            if t.lstrip {
                let trimmed = text[..start].trim_end_matches(char::is_whitespace).len();
                start = trimmed.max(start_offset);
            }
            if t.rstrip {
                stop = text.len() - text[stop..].trim_start_matches(char::is_whitespace).len();
            }
            if start_offset < start {
                out.push(Segment::Text(start_offset, start));
            }
            out.push(Segment::Token(t.id, start, stop));
            start_offset = stop;
        }
        if start_offset < text.len() || out.len() == before {
            out.push(Segment::Text(start_offset.min(text.len()), text.len()));
        }
    }

    // -- normalizers ----------------------------------------------------------------------

    pub fn normalize(&self, text: &str) -> String {
        normalize_with(&self.normalizers, text)
    }

    // -- pre-tokenizers -------------------------------------------------------------------

    /// Words of `piece` as byte ranges of `bufs.0` (or of `piece` itself when there is no
    /// pre-tokenizer: the whole piece is one word). With `spans` (each byte's span in `piece`),
    /// the words' spans go to `out.0`, parallel to `bufs.0`.
    /// The words of `piece`, as byte spans of `piece` itself, when the pre-tokenizers leave the
    /// bytes as they are and only cut: a `Split` (`Isolated`, not inverted) then a `ByteLevel`
    /// without prefix space or regex (tiktoken files made into tokenizer.json), or a lone
    /// GPT-2 `ByteLevel`. False (and `words` untouched) for every other chain. Copying the text
    /// through each step's buffer and a vector of pieces was a fifth of cl100k's encode.
    #[inline]
    fn split_direct(&self, piece: &str, words: &mut Vec<(usize, usize)>) -> bool {
        words.clear();
        self.split_direct_with(piece, |a, b| words.push((a, b)))
    }

    /// [`HfPipeline::split_direct`] calling `f(start, end)` with each word's span in `piece`
    /// instead of keeping them; false (and `f` never called) for the chains that do more than cut.
    #[inline]
    fn split_direct_with(&self, piece: &str, f: impl FnMut(usize, usize)) -> bool {
        match self.pre.as_slice() {
            [PreTokenizer::Split(step), PreTokenizer::ByteLevel { add_prefix_space: false, use_regex: false }]
                if step.behavior == Behavior::Isolated && !step.invert =>
            {
                step.pattern.split(piece, f);
                true
            }
            [PreTokenizer::ByteLevel { add_prefix_space: false, use_regex: true }] => {
                gpt2::split(piece, f);
                true
            }
            _ => false,
        }
    }

    /// The BPE model and its byte-level lookups, when the model has them.
    #[inline]
    fn byte_bpe(&self) -> Option<(&Bpe, &byte_bpe::ByteBpe)> {
        match &self.model {
            Model::Bpe(bpe) => bpe.byte_bpe.as_ref().map(|f| (&**bpe, f)),
            _ => None,
        }
    }

    fn pre_tokenize(
        &self,
        piece: &str,
        at_start: bool,
        words: &mut Vec<(usize, usize)>,
        next: &mut Vec<(usize, usize)>,
        bufs: &mut (String, String),
        mut spans: Option<(&[Span], &mut SpanBufs)>,
    ) {
        words.clear();
        if self.pre.is_empty() {
            if !piece.is_empty() {
                words.push((0, piece.len()));
            }
            return;
        }
        bufs.0.clear();
        bufs.0.push_str(piece);
        if let Some((first, out)) = spans.as_mut() {
            out.0.clear();
            out.0.extend_from_slice(first);
        }
        words.push((0, piece.len()));
        for step in &self.pre {
            next.clear();
            bufs.1.clear();
            if let Some((_, out)) = spans.as_mut() {
                out.1.clear();
            }
            let (src, dst) = (&bufs.0, &mut bufs.1);
            for (k, &(a, b)) in words.iter().enumerate() {
                let word_spans = spans.as_mut().map(|(_, out)| {
                    let out: &mut SpanBufs = out;
                    (&out.0[a..b], &mut out.1)
                });
                pre_step(step, &src[a..b], at_start && k == 0 && a == 0, dst, next, word_spans);
            }
            std::mem::swap(&mut bufs.0, &mut bufs.1);
            if let Some((_, out)) = spans.as_mut() {
                let out: &mut SpanBufs = out;
                std::mem::swap(&mut out.0, &mut out.1);
            }
            std::mem::swap(words, next);
        }
    }

    // -- models ---------------------------------------------------------------------------

    fn encode_word(
        &self,
        word: &[u8],
        out: &mut Vec<u32>,
        cache: Option<&mut Cache>,
        notes: Option<&mut Vec<(usize, String)>>,
    ) {
        if word.is_empty() {
            return;
        }
        if let Some(c) = cache.as_deref() {
            if c.extend_into(word, out) {
                return;
            }
        }
        let start = out.len();
        match &self.model {
            Model::Bpe(bpe) => self.bpe_word(bpe, word, out),
            Model::Unigram(u) => {
                // words come from &str slices cut at character boundaries; with unk_id set,
                // tokenize cannot fail
                let s = std::str::from_utf8(word).unwrap_or("");
                let _ = u.tokenize_noting(s, out, notes);
            }
            Model::WordPiece { lm, unk, max_chars, .. } => {
                // words come from &str slices cut at character boundaries
                let s = std::str::from_utf8(word).unwrap_or("");
                if s.chars().count() > *max_chars {
                    out.push(*unk);
                } else {
                    match lm.cut(word) {
                        Match::Pieces(p) => out.extend_from_slice(&p),
                        Match::Failed { .. } => out.push(*unk),
                    }
                }
            }
        }
        if let Some(c) = cache {
            if word.len() <= CACHED_WORD {
                c.insert(word, &out[start..]);
            }
        }
    }

    /// `ignore_merges`: a word that is itself in the vocabulary is that one id.
    fn whole_word(&self, bpe: &Bpe, word: &[u8]) -> Option<u32> {
        if !bpe.ignore_merges {
            return None;
        }
        if self.byte_level {
            bpe.raw_vocab.get(word).copied()
        } else {
            std::str::from_utf8(word).ok().and_then(|s| bpe.vocab.get(s).copied())
        }
    }

    fn bpe_word(&self, bpe: &Bpe, word: &[u8], out: &mut Vec<u32>) {
        if let Some(id) = self.whole_word(bpe, word) {
            out.push(id);
            return;
        }
        let mut syms: Vec<u32> = Vec::with_capacity(word.len());
        self.bpe_symbols(bpe, word, &mut syms);
        merge_word(&mut syms, &bpe.merges);
        out.extend_from_slice(&syms);
    }

    /// The word's starting symbols (see the module header).
    fn bpe_symbols(&self, bpe: &Bpe, word: &[u8], syms: &mut Vec<u32>) {
        self.bpe_symbols_lens(bpe, word, syms, None)
    }

    /// [`HfPipeline::bpe_symbols`], pushing to `lens` each symbol's byte length in the word as
    /// tokenizers counts it: a byte row 1, a fused unknown the sum of its characters, and a
    /// character dropped (unknown with no unk token) nothing, so the spans after it shift.
    fn bpe_symbols_lens(
        &self,
        bpe: &Bpe,
        word: &[u8],
        syms: &mut Vec<u32>,
        mut lens: Option<&mut Vec<u32>>,
    ) {
        let plain = bpe.prefix.is_none() && bpe.suffix.is_none();
        let mut unk: Option<(u32, u32)> = None;
        let mut key = String::new();
        let push = |syms: &mut Vec<u32>, lens: &mut Option<&mut Vec<u32>>, id: u32, len: u32| {
            syms.push(id);
            if let Some(l) = lens.as_deref_mut() {
                l.push(len);
            }
        };
        let push_known = |syms: &mut Vec<u32>,
                          lens: &mut Option<&mut Vec<u32>>,
                          unk: &mut Option<(u32, u32)>,
                          id: u32,
                          len: u32| {
            if let Some((u, ul)) = unk.take() {
                push(syms, lens, u, ul);
            }
            push(syms, lens, id, len);
        };
        let on_unknown = |syms: &mut Vec<u32>,
                          lens: &mut Option<&mut Vec<u32>>,
                          unk: &mut Option<(u32, u32)>,
                          key: &str,
                          len: u32| {
            if bpe.byte_fallback {
                let ids: Option<Vec<u32>> = key
                    .bytes()
                    .map(|b| Some(bpe.fallback[b as usize]).filter(|&i| i != NO_ID))
                    .collect();
                if let Some(ids) = ids {
                    // tokenizers adds the byte rows without flushing a pending unknown
                    for id in ids {
                        push(syms, lens, id, 1);
                    }
                    return;
                }
            }
            if let Some(u) = bpe.unk {
                match (unk.take(), bpe.fuse_unk) {
                    (Some((prev, pl)), true) => *unk = Some((prev, pl + len)),
                    (Some((prev, pl)), false) => {
                        push(syms, lens, prev, pl);
                        *unk = Some((u, len));
                    }
                    (None, _) => *unk = Some((u, len)),
                }
            }
        };
        if self.byte_level {
            let n = word.len();
            for (i, &b) in word.iter().enumerate() {
                let id = if plain { bpe.byte_char[b as usize] } else { NO_ID };
                if id != NO_ID {
                    push_known(syms, &mut lens, &mut unk, id, 1);
                    continue;
                }
                symbol_key(&mut key, bpe, i == 0, i + 1 == n, self.byte_chars[b as usize]);
                match bpe.vocab.get(key.as_str()) {
                    Some(&id) => push_known(syms, &mut lens, &mut unk, id, 1),
                    None => on_unknown(syms, &mut lens, &mut unk, &key, 1),
                }
            }
        } else {
            let s = std::str::from_utf8(word).unwrap_or("");
            let n = s.len();
            for (i, c) in s.char_indices() {
                let len = c.len_utf8() as u32;
                if plain && c.is_ascii() {
                    let id = bpe.ascii[c as usize];
                    if id != NO_ID {
                        push_known(syms, &mut lens, &mut unk, id, len);
                        continue;
                    }
                }
                symbol_key(&mut key, bpe, i == 0, i + c.len_utf8() == n, c);
                match bpe.vocab.get(key.as_str()) {
                    Some(&id) => push_known(syms, &mut lens, &mut unk, id, len),
                    None => on_unknown(syms, &mut lens, &mut unk, &key, len),
                }
            }
        }
        if let Some((u, ul)) = unk {
            push(syms, &mut lens, u, ul);
        }
    }
}

/// The vocabulary key of one symbol of a word: the continuing prefix unless it is the first, the
/// symbol, the end-of-word suffix when it is the last.
fn symbol_key(key: &mut String, bpe: &Bpe, first: bool, last: bool, c: char) {
    key.clear();
    if !first {
        if let Some(p) = &bpe.prefix {
            key.push_str(p);
        }
    }
    key.push(c);
    if last {
        if let Some(s) = &bpe.suffix {
            key.push_str(s);
        }
    }
}

/// How many `Ġ` or whitespace characters `t` begins and ends with (what `trim_offsets` takes).
fn space_ends(t: &str) -> (u32, u32) {
    let space = |c: &char| *c == '\u{120}' || c.is_whitespace();
    (t.chars().take_while(space).count() as u32, t.chars().rev().take_while(space).count() as u32)
}

/// Words to their ids and each id's byte span in the word, for the offsets path
/// ([`HfPipeline::encode_offsets_into`]): a word's tokens and their spans depend on its bytes
/// alone.
pub type SpanCache = subwords_core::word_cache::WordCache<(u32, u32, u32)>;

/// What [`HfPipeline::encode_offsets_into`] keeps from text to text of one worker: the words'
/// ids and spans ([`SpanCache`]) and its buffers.
#[derive(Default)]
pub struct SpanState {
    cache: SpanCache,
    segments: Vec<Segment>,
    norm_segments: Vec<Segment>,
    words: Vec<(usize, usize)>,
    next: Vec<(usize, usize)>,
    bufs: (String, String),
    wspans: SpanBufs,
    /// per token, the spaces it begins and ends with (for `trim_offsets`)
    ends: Vec<(u32, u32)>,
    /// a word's `(id, start, end)` per token
    entry: Vec<(u32, u32, u32)>,
    wids: Vec<u32>,
    wsp: Vec<(u32, u32)>,
    aligned: Aligned,
    /// byte -> code point of the text ([`offsets::char_offsets_with`])
    map: Vec<u32>,
}

/// One normalizer on aligned text, writing tokenizers' changes (see [`offsets`]); the text it
/// leaves is [`apply_normalizer`]'s.
fn align_normalizer(n: &Normalizer, al: &mut Aligned) {
    if !(al.text.is_ascii() && align_ascii(n, al)) {
        align_general(n, al);
    }
}

/// [`align_normalizer`] by the general rewrite of [`offsets::Aligned`].
fn align_general(n: &Normalizer, al: &mut Aligned) {
    match n {
        Normalizer::Bert { clean_text, handle_chinese_chars, strip_accents, lowercase } => {
            if *clean_text {
                al.filter(|c| !bert_cleans_away(c));
                al.map_chars(|c, o| o.push(if c.is_whitespace() { ' ' } else { c }));
            }
            if *handle_chinese_chars {
                al.map_chars(|c, o| {
                    if is_hf_chinese_char(c) {
                        o.extend([' ', c, ' '])
                    } else {
                        o.push(c)
                    }
                });
            }
            if *strip_accents {
                // text already decomposed decomposes to itself, spans and all
                if is_nfd_quick(al.text.chars()) != IsNormalized::Yes {
                    al.unicode(false, false);
                }
                al.filter(|c| !c.is_mark_nonspacing());
            }
            if *lowercase {
                al.map_chars(|c, o| o.extend(c.to_lowercase()));
            }
        }
        Normalizer::Lowercase => al.map_chars(|c, o| o.extend(c.to_lowercase())),
        Normalizer::Prepend { prepend } => al.prepend(prepend),
        Normalizer::Replace { pattern, content } => {
            if !pattern.is_empty() {
                let m: Vec<(usize, usize)> = al
                    .text
                    .match_indices(pattern.as_str())
                    .map(|(i, p)| (i, i + p.len()))
                    .collect();
                al.replace_ranges(&m, content);
            }
        }
        Normalizer::ReplaceSpaceRuns { content } => {
            let m = runs(&al.text, |c| c == ' ', 2);
            al.replace_ranges(&m, content);
        }
        Normalizer::ReplaceWhitespaceRuns { content } => {
            let m = runs(&al.text, char::is_whitespace, 1);
            al.replace_ranges(&m, content);
        }
        Normalizer::Precompiled { charsmap } => {
            if let Ok(dest) = charsmap.0.transformations(&al.text) {
                al.transform(&dest, 0);
            }
        }
        Normalizer::Nfc if is_nfc_quick(al.text.chars()) == IsNormalized::Yes => {}
        Normalizer::Nfd if is_nfd_quick(al.text.chars()) == IsNormalized::Yes => {}
        Normalizer::Nfkc if is_nfkc_quick(al.text.chars()) == IsNormalized::Yes => {}
        Normalizer::Nfkd if is_nfkd_quick(al.text.chars()) == IsNormalized::Yes => {}
        Normalizer::Nfc => al.unicode(false, true),
        Normalizer::Nfd => al.unicode(false, false),
        Normalizer::Nfkc => al.unicode(true, true),
        Normalizer::Nfkd => al.unicode(true, false),
        Normalizer::Strip { left, right } => {
            let count = al.text.chars().count();
            let lead =
                if *left { al.text.chars().take_while(|c| c.is_whitespace()).count() } else { 0 };
            let trail = if *right {
                al.text.chars().rev().take_while(|c| c.is_whitespace()).count()
            } else {
                0
            };
            if lead > 0 || trail > 0 {
                let keep = count.saturating_sub(trail);
                let mut dest: Vec<(char, isize)> = al
                    .text
                    .chars()
                    .enumerate()
                    .filter(|&(i, _)| i >= lead && i < keep)
                    .map(|(_, c)| (c, 0))
                    .collect();
                if let Some(last) = dest.last_mut() {
                    last.1 = -(trail as isize);
                }
                al.transform(&dest, lead.min(count));
            }
        }
        Normalizer::StripAccents => {
            al.filter(|c| !unicode_normalization_alignments::char::is_combining_mark(c))
        }
    }
}

/// [`align_normalizer`] on ASCII text for the normalizers that turn each ASCII character into
/// one ASCII character: each byte then keeps its span, and only the text changes, in place. False
/// (nothing done) for any other normalizer, or where BERT's cleaning would drop a character.
/// English lines through a BERT normalizer spent a seventh of their offsets in the general
/// rewrite, which builds a list of changes per step.
fn align_ascii(n: &Normalizer, al: &mut Aligned) -> bool {
    match n {
        Normalizer::Bert { clean_text, lowercase, .. } => {
            if *clean_text {
                if al.text.bytes().any(|b| bert_cleans_away(b as char)) {
                    return false;
                }
                if al.text.bytes().any(|b| b != b' ' && (b as char).is_whitespace()) {
                    al.text =
                        al.text.chars().map(|c| if c.is_whitespace() { ' ' } else { c }).collect();
                }
            }
            // Chinese characters and accents are none of ASCII's
            if *lowercase {
                al.text.make_ascii_lowercase();
            }
            true
        }
        Normalizer::Lowercase => {
            al.text.make_ascii_lowercase();
            true
        }
        Normalizer::Nfc
        | Normalizer::Nfd
        | Normalizer::Nfkc
        | Normalizer::Nfkd
        | Normalizer::StripAccents => true,
        _ => false,
    }
}

/// The byte ranges of the runs of at least `min` characters that `pred` matches.
fn runs(text: &str, pred: impl Fn(char) -> bool, min: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    for (i, c) in text.char_indices() {
        if pred(c) {
            let r = run.get_or_insert((i, 0));
            r.1 += 1;
        } else if let Some((s, n)) = run.take() {
            if n >= min {
                out.push((s, i));
            }
        }
    }
    if let Some((s, n)) = run {
        if n >= min {
            out.push((s, text.len()));
        }
    }
    out
}

/// `text` through `normalizers`, in order.
pub fn normalize_with(normalizers: &[Normalizer], text: &str) -> String {
    let mut s = text.to_string();
    for n in normalizers {
        s = apply_normalizer(n, &s);
    }
    s
}

#[derive(Clone, Copy)]
enum Segment {
    Text(usize, usize),
    /// An added token's id and the byte range it took (the whitespace it strips included).
    Token(u32, usize, usize),
}

fn apply_normalizer(n: &Normalizer, s: &str) -> String {
    match n {
        Normalizer::Bert { clean_text, handle_chinese_chars, strip_accents, lowercase } => {
            let mut t = String::with_capacity(s.len());
            for c in s.chars() {
                if c.is_ascii_graphic() || c == ' ' {
                    // nothing to clean, pad or strip; lower-casing it now equals lower-casing it
                    // after the accents go (NFD never moves a mark across a base character)
                    t.push(if *lowercase { c.to_ascii_lowercase() } else { c });
                    continue;
                }
                if *clean_text {
                    // tokenizers' `is_other` by its own (Unicode 8) tables: core's rule, shared
                    // with our own `bert` spelling
                    if bert_cleans_away(c) {
                        continue;
                    }
                    if c.is_whitespace() {
                        t.push(' ');
                        continue;
                    }
                }
                if *handle_chinese_chars && is_hf_chinese_char(c) {
                    t.push(' ');
                    t.push(c);
                    t.push(' ');
                    continue;
                }
                t.push(c);
            }
            // only text with non-ASCII characters has anything left to strip or lower-case (and
            // stripping can leave ASCII that still needs lower-casing: "Ü" -> "U")
            if !t.is_ascii() {
                if *strip_accents {
                    t = t.nfd().map(|(c, _)| c).filter(|c| !c.is_mark_nonspacing()).collect();
                }
                if *lowercase {
                    t = lower(&t);
                }
            }
            t
        }
        Normalizer::Lowercase => lower(s),
        Normalizer::Prepend { prepend } => {
            if s.is_empty() {
                String::new()
            } else {
                format!("{prepend}{s}")
            }
        }
        Normalizer::Replace { pattern, content } => {
            if pattern.is_empty() {
                s.to_string()
            } else {
                s.replace(pattern.as_str(), content)
            }
        }
        Normalizer::ReplaceSpaceRuns { content } => {
            let mut out = String::with_capacity(s.len());
            let mut rest = s;
            while let Some(k) = rest.find("  ") {
                out.push_str(&rest[..k]);
                let run = rest[k..].bytes().take_while(|&b| b == b' ').count();
                out.push_str(content);
                rest = &rest[k + run..];
            }
            out.push_str(rest);
            out
        }
        Normalizer::Precompiled { charsmap } => {
            let mut out = String::with_capacity(s.len());
            // every rule was checked to point inside the strings when the plan was read
            let _ = charsmap.0.normalize(s, &mut out);
            out
        }
        Normalizer::ReplaceWhitespaceRuns { content } => {
            let mut t = String::with_capacity(s.len());
            let mut in_run = false;
            for c in s.chars() {
                if c.is_whitespace() {
                    if !in_run {
                        t.push_str(content);
                    }
                    in_run = true;
                } else {
                    t.push(c);
                    in_run = false;
                }
            }
            t
        }
        // the quick checks answer "already normalized" for most text without building anything
        Normalizer::Nfc if is_nfc_quick(s.chars()) == IsNormalized::Yes => s.to_string(),
        Normalizer::Nfd if is_nfd_quick(s.chars()) == IsNormalized::Yes => s.to_string(),
        Normalizer::Nfkc if is_nfkc_quick(s.chars()) == IsNormalized::Yes => s.to_string(),
        Normalizer::Nfkd if is_nfkd_quick(s.chars()) == IsNormalized::Yes => s.to_string(),
        Normalizer::Nfc => s.nfc().map(|(c, _)| c).collect(),
        Normalizer::Nfd => s.nfd().map(|(c, _)| c).collect(),
        Normalizer::Nfkc => s.nfkc().map(|(c, _)| c).collect(),
        Normalizer::Nfkd => s.nfkd().map(|(c, _)| c).collect(),
        Normalizer::Strip { left, right } => {
            let mut t = s;
            if *left {
                t = t.trim_start();
            }
            if *right {
                t = t.trim_end();
            }
            t.to_string()
        }
        Normalizer::StripAccents => s
            .chars()
            .filter(|&c| !unicode_normalization_alignments::char::is_combining_mark(c))
            .collect(),
    }
}

/// Character by character, as `tokenizers` does (no final-sigma rule).
fn lower(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut t = String::with_capacity(s.len());
    for c in s.chars() {
        t.extend(c.to_lowercase());
    }
    t
}

/// One pre-tokenizer on one piece: the words are appended to `dst` and their ranges to `words`.
///
/// With `spans` (the original span of each byte of `piece`, and the list for `dst`), each byte
/// written gets its span: a character kept its own, a `▁` for a space the space's, and an added
/// prefix space or `▁` the first character's (tokenizers' `prepend`).
fn pre_step(
    step: &PreTokenizer,
    piece: &str,
    at_start: bool,
    dst: &mut String,
    words: &mut Vec<(usize, usize)>,
    mut spans: Option<(&[Span], &mut Vec<Span>)>,
) {
    let base = dst.len();
    if let Some((src, out)) = spans.as_mut() {
        if !matches!(step, PreTokenizer::ByteLevel { .. } | PreTokenizer::Metaspace { .. }) {
            out.extend_from_slice(src);
        }
    }
    match step {
        PreTokenizer::ByteLevel { add_prefix_space, use_regex } => {
            if *add_prefix_space && !piece.is_empty() && !piece.starts_with(' ') {
                dst.push(' ');
                if let Some((src, out)) = spans.as_mut() {
                    out.push(src[0]);
                }
            }
            dst.push_str(piece);
            if let Some((src, out)) = spans.as_mut() {
                out.extend_from_slice(src);
            }
            let text = &dst[base..];
            if *use_regex {
                gpt2::split(text, |a, b| words.push((base + a, base + b)));
            } else if !text.is_empty() {
                words.push((base, dst.len()));
            }
        }
        PreTokenizer::Metaspace { replacement, prepend_scheme, split } => {
            let rep = *replacement;
            let prepend = match prepend_scheme {
                Prepend::Always => true,
                Prepend::First => at_start,
                Prepend::Never => false,
            };
            if prepend
                && !piece.is_empty()
                && !piece.replace(' ', rep.encode_utf8(&mut [0; 4])).starts_with(rep)
            {
                dst.push(rep);
                if let Some((src, out)) = spans.as_mut() {
                    out.extend(std::iter::repeat_n(src[0], rep.len_utf8()));
                }
            }
            for (i, c) in piece.char_indices() {
                let w = if c == ' ' { rep } else { c };
                dst.push(w);
                if let Some((src, out)) = spans.as_mut() {
                    out.extend(std::iter::repeat_n(src[i], w.len_utf8()));
                }
            }
            let text = &dst[base..];
            if *split {
                // each replacement character starts a new word
                let mut start = 0;
                for (i, c) in text.char_indices() {
                    if c == rep && i > start {
                        words.push((base + start, base + i));
                        start = i;
                    }
                }
                if start < text.len() {
                    words.push((base + start, base + text.len()));
                }
            } else if !text.is_empty() {
                words.push((base, dst.len()));
            }
        }
        PreTokenizer::Bert => {
            dst.push_str(piece);
            split_whitespace(&dst[base..], base, is_hf_punctuation, words);
        }
        PreTokenizer::Whitespace => {
            // `\w+|[^\w\s]+`
            dst.push_str(piece);
            let text = &dst[base..];
            let mut run: Option<(usize, bool)> = None;
            for (i, c) in text.char_indices() {
                let class = if c.is_whitespace() { None } else { Some(is_word_char(c)) };
                match (run, class) {
                    (Some((_, w)), Some(k)) if w == k => {}
                    (Some((s, _)), _) => {
                        words.push((base + s, base + i));
                        run = class.map(|k| (i, k));
                    }
                    (None, _) => run = class.map(|k| (i, k)),
                }
            }
            if let Some((s, _)) = run {
                words.push((base + s, base + text.len()));
            }
        }
        PreTokenizer::Digits { individual_digits } => {
            dst.push_str(piece);
            split_where(&dst[base..], base, char::is_numeric, !individual_digits, words);
        }
        PreTokenizer::Punctuation { contiguous } => {
            dst.push_str(piece);
            split_where(&dst[base..], base, is_hf_punctuation, *contiguous, words);
        }
        PreTokenizer::WhitespaceSplit => {
            dst.push_str(piece);
            split_whitespace(&dst[base..], base, |_| false, words);
        }
        PreTokenizer::Split(step) => {
            dst.push_str(piece);
            step.split(&dst[base..], base, words);
        }
    }
}

/// Words between whitespace (`WhitespaceSplit`), each character `alone` matches also a word of
/// its own (`BertPreTokenizer`'s punctuation); spans offset by `base`.
fn split_whitespace(
    text: &str,
    base: usize,
    alone: impl Fn(char) -> bool,
    words: &mut Vec<(usize, usize)>,
) {
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                words.push((base + s, base + i));
            }
        } else if alone(c) {
            if let Some(s) = start.take() {
                words.push((base + s, base + i));
            }
            words.push((base + i, base + i + c.len_utf8()));
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push((base + s, base + text.len()));
    }
}

/// Cuts out the characters `pred` matches, each alone or (`contiguous`) runs of them together;
/// the text between them stays whole.
fn split_where(
    text: &str,
    base: usize,
    pred: impl Fn(char) -> bool,
    contiguous: bool,
    words: &mut Vec<(usize, usize)>,
) {
    let mut start = 0;
    let mut prev: Option<bool> = None;
    for (i, c) in text.char_indices() {
        let m = pred(c);
        let cut = match prev {
            None => false,
            Some(p) => p != m || (m && !contiguous),
        };
        if cut && i > start {
            words.push((base + start, base + i));
            start = i;
        }
        prev = Some(m);
    }
    if start < text.len() {
        words.push((base + start, base + text.len()));
    }
}

/// `tokenizers`' merge loop: the pair of lowest rank, leftmost on ties, one merge at a time.
pub fn merge_word(syms: &mut Vec<u32>, merges: &Map<u64, (u32, u32)>) {
    merge_word_lens(syms, merges, &mut Vec::new());
}

/// [`merge_word`] keeping `lens` (each symbol's byte length, or empty) in step: a merged
/// symbol's length is the sum of its two.
fn merge_word_lens(syms: &mut Vec<u32>, merges: &Map<u64, (u32, u32)>, lens: &mut Vec<u32>) {
    if syms.len() < 2 || merges.is_empty() {
        return;
    }
    if syms.len() <= SCAN_SYMBOLS {
        merge_short(syms, merges, lens);
    } else {
        merge_long(syms, merges, lens);
    }
}

fn merge_short(syms: &mut Vec<u32>, merges: &Map<u64, (u32, u32)>, lens: &mut Vec<u32>) {
    let rank_of = |a: u32, b: u32| merges.get(&pack(a, b)).map_or((u32::MAX, 0), |&(r, c)| (r, c));
    let mut ranks: Vec<(u32, u32)> = syms.windows(2).map(|w| rank_of(w[0], w[1])).collect();
    loop {
        let mut best = u32::MAX;
        let mut at = 0;
        for (i, &(r, _)) in ranks.iter().enumerate() {
            if r < best {
                best = r;
                at = i;
            }
        }
        if best == u32::MAX {
            return;
        }
        syms[at] = ranks[at].1;
        syms.remove(at + 1);
        if !lens.is_empty() {
            lens[at] += lens[at + 1];
            lens.remove(at + 1);
        }
        ranks.remove(at);
        if at < ranks.len() {
            ranks[at] = rank_of(syms[at], syms[at + 1]);
        }
        if at > 0 {
            ranks[at - 1] = rank_of(syms[at - 1], syms[at]);
        }
    }
}

fn merge_long(syms: &mut Vec<u32>, merges: &Map<u64, (u32, u32)>, lens: &mut Vec<u32>) {
    const NONE: usize = usize::MAX;
    let n = syms.len();
    let mut next: Vec<usize> = (1..=n).map(|i| if i == n { NONE } else { i }).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| if i == 0 { NONE } else { i - 1 }).collect();
    let mut alive = vec![true; n];
    let mut heap: BinaryHeap<Reverse<(u32, usize, u32)>> = BinaryHeap::with_capacity(n);
    for i in 0..n - 1 {
        if let Some(&(r, c)) = merges.get(&pack(syms[i], syms[i + 1])) {
            heap.push(Reverse((r, i, c)));
        }
    }
    while let Some(Reverse((_, p, c))) = heap.pop() {
        let q = next[p];
        if !alive[p] || q == NONE {
            continue;
        }
        // stale entry: the pair at p is no longer the one that was queued
        match merges.get(&pack(syms[p], syms[q])) {
            Some(&(_, c2)) if c2 == c => {}
            _ => continue,
        }
        syms[p] = c;
        if !lens.is_empty() {
            lens[p] += lens[q];
        }
        alive[q] = false;
        let r = next[q];
        next[p] = r;
        if r != NONE {
            prev[r] = p;
        }
        let l = prev[p];
        if l != NONE {
            if let Some(&(rank, c)) = merges.get(&pack(syms[l], syms[p])) {
                heap.push(Reverse((rank, l, c)));
            }
        }
        if r != NONE {
            if let Some(&(rank, c)) = merges.get(&pack(syms[p], syms[r])) {
                heap.push(Reverse((rank, p, c)));
            }
        }
    }
    let mut w = 0;
    let mut i = 0;
    while i != NONE {
        syms[w] = syms[i];
        if !lens.is_empty() {
            lens[w] = lens[i];
        }
        w += 1;
        i = next[i];
    }
    syms.truncate(w);
    lens.truncate(w);
}

/// `tokenizer.json` pipelines under the encoder contract: the specials are the added tokens,
/// split out of the text as tokenizers splits them (`lstrip`, `rstrip`, `single_word`,
/// `normalized`), a special one only where the call allows it.
impl Encoder for HfPipeline {
    type State = (Cache, PipelineBuffers);
    type Cached = u32;

    fn states(&self) -> &Slots<(Cache, PipelineBuffers)> {
        &self.caches
    }

    fn cache(state: &mut (Cache, PipelineBuffers)) -> &mut Cache {
        &mut state.0
    }

    fn specials(&self) -> &[(String, u32)] {
        &self.specials
    }

    fn encode_into(
        &self,
        text: &str,
        allowed: &Allowed,
        state: &mut (Cache, PipelineBuffers),
        out: &mut Vec<u32>,
    ) -> Result<()> {
        let (cache, scratch) = state;
        HfPipeline::encode_into(self, text, allowed.mask(), Some(cache), None, scratch, out, true);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_merges_agree() {
        // a created pair can rank below the merge that made it: (0,1)->4 rank 1, (4,0)->5 rank 0
        let mut m: Map<u64, (u32, u32)> = Map::default();
        for (r, &(a, b, c)) in
            [(4, 0, 5), (0, 1, 4), (1, 1, 6), (6, 6, 7), (2, 4, 8)].iter().enumerate()
        {
            m.insert(pack(a, b), (r as u32, c));
        }
        let mut state = 7u64;
        for len in 2..300 {
            let v: Vec<u32> = (0..len)
                .map(|_| {
                    state =
                        state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((state >> 33) % 3) as u32
                })
                .collect();
            let mut a = v.clone();
            merge_short(&mut a, &m, &mut Vec::new());
            let mut b = v.clone();
            merge_long(&mut b, &m, &mut Vec::new());
            assert_eq!(a, b, "len {len}");
        }
    }

    #[test]
    fn created_pair_of_lower_rank_goes_first() {
        // "b c b c" with (b,c)->bc rank 1 and (bc,b)->bcb rank 0: tokenizers gives bcb c
        let mut m: Map<u64, (u32, u32)> = Map::default();
        m.insert(pack(1, 2), (1, 10));
        m.insert(pack(10, 1), (0, 11));
        let mut s = vec![1, 2, 1, 2];
        merge_word(&mut s, &m);
        assert_eq!(s, vec![11, 2]);
    }

    /// The ASCII shortcut of the aligned normalizers leaves the text and every byte's span as
    /// the general rewrite does, for each normalizer it takes, on text with tabs, line ends,
    /// capitals and the control characters BERT's cleaning drops (which send it the general way).
    #[test]
    fn ascii_alignment_is_the_general_rewrites() {
        let bert = |clean_text, handle_chinese_chars, strip_accents, lowercase| Normalizer::Bert {
            clean_text,
            handle_chinese_chars,
            strip_accents,
            lowercase,
        };
        let normalizers = [
            bert(true, true, true, true),
            bert(true, false, false, false),
            bert(false, true, true, true),
            Normalizer::Lowercase,
            Normalizer::Nfc,
            Normalizer::Nfd,
            Normalizer::Nfkc,
            Normalizer::Nfkd,
            Normalizer::StripAccents,
            Normalizer::Strip { left: true, right: true },
        ];
        let texts = [
            "Hello World",
            "Tab\there\r\nEnd ",
            "A\u{1}B\u{7f}C",
            "",
            "\u{b}\u{c}vT",
            " ALL 123 !?",
        ];
        for n in &normalizers {
            for t in texts {
                let (mut fast, mut general) = (Aligned::new(t, 5), Aligned::new(t, 5));
                align_normalizer(n, &mut fast);
                align_general(n, &mut general);
                assert_eq!((&fast.text, &fast.spans), (&general.text, &general.spans), "{t:?}");
            }
        }
        // by hand: the tab becomes a space and the capitals lower case, each byte its own span
        let mut a = Aligned::new("Ab\tC", 5);
        align_normalizer(&bert(true, true, true, true), &mut a);
        assert_eq!(a.text, "ab c");
        assert_eq!(a.spans, vec![(5, 6), (6, 7), (7, 8), (8, 9)]);
    }

    /// Code points of ASCII text are its bytes; an end past the text is one past the start
    /// when the byte before it is past the text too, as the general map has it.
    #[test]
    fn ascii_char_offsets_are_the_bytes() {
        let mut o = vec![(0, 1), (1, 3), (3, 3), (2, 5), (0, 0)];
        offsets::char_offsets("abc", &mut o);
        assert_eq!(o, vec![(0, 1), (1, 3), (3, 3), (2, 3), (0, 0)]);
    }
}
