//! The tokenizer: a model's rows with the spelling, the segmenter and the specials template
//! composed into encode and decode (DESIGN §1).
//!
//! Encoding a text: the spelling cuts it into units ([`Spelling::for_each_unit`]), each unit is
//! spelled into symbol ids ([`SymbolIds::spell`]: unknown symbols become `[UNK]` or byte-fallback
//! rows, docs/API.md), and the model's segmenter cuts it: merge replay (BPE, then the stream
//! merges of a two-stage model over the whole text), longest match (WordPiece), Viterbi
//! (Unigram, [`unigram`]) or the unit's own row (word models). Frequent units are cached.
//! Decoding is the spelling's ([`Spelling::decode_bytes`]).
//!
//! Files: [`build`] makes a model from its [`parts`] and checks them; [`file`] is the canonical
//! JSON file; [`unigram`] holds the Unigram cut and analysis. Every cache and buffer an
//! encoding needs is a [`TokenizerState`] the caller owns (one per worker, kept in [`Slots`]): no
//! thread-local carries data between functions.

pub mod build;
mod extend;
pub mod file;
pub mod parts;
mod unigram;

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::batch::Slots;
use crate::encoder::{Allowed, Call, Encoder, Template};
use crate::error::{Error, Result};
use crate::options::{ModelKind, TrainOptions, Unknown};
use crate::segmenters::longest_match::{LongestMatch, Match};
use crate::segmenters::merge_replay::{replay, replay_around, MergeMap};
use crate::segmenters::unigram::codes::CodedTrie;
use crate::segmenters::unigram::lattice::{Lattice, SplitMix64};
use crate::segmenters::unigram::viterbi::Viterbi;
use crate::spelling::decode::unit_to_text_positions;
use crate::spelling::symbols::{SymbolIds, NO_ID};
use crate::spelling::{char_to_byte, parse_byte_piece, Scheme, Spelling};
use crate::vocab::index::RowIndex;
use crate::vocab::{display_row, Row, RowKind, UNK};

pub use build::TrieBeside;
pub use file::{FORMAT, VERSION};
pub use parts::{Parts, Report};

/// How a unit is cut: the model's own segmenter, or one of the alternatives some models offer.
pub enum Mode {
    /// BPE: merge replay; WordPiece: longest match; Unigram: Viterbi.
    Plain,
    /// BPE-dropout: each merge candidate skipped with probability p.
    Dropout(f64, SmallRng),
    /// Unigram: the fewest pieces the vocabulary allows.
    Fewest,
    /// Unigram: a spelling drawn in proportion to its probability^alpha (among the n best).
    Sample { alpha: f64, nbest: Option<usize>, rng: SplitMix64 },
}

/// Units longer than this (bytes) are not cached.
const CACHED_UNIT: usize = 64;
/// How many units a short unit waits for before it is looked up in the cache
/// ([`Tokenizer::encode_units`]).
const AHEAD: usize = 8;

/// Short units waiting to be looked up ([`Tokenizer::encode_units`]): a ring of their packed
/// keys ([`crate::word_cache::pack`]), oldest first.
#[derive(Default)]
struct Waiting {
    keys: [u128; AHEAD],
    first: usize,
    len: usize,
}

impl Waiting {
    /// Adds `key`; when [`AHEAD`] were waiting, the oldest leaves and is returned.
    #[inline]
    fn push(&mut self, key: u128) -> Option<u128> {
        let old = if self.len == AHEAD { self.pop() } else { None };
        self.keys[(self.first + self.len) % AHEAD] = key;
        self.len += 1;
        old
    }

    #[inline]
    fn pop(&mut self) -> Option<u128> {
        if self.len == 0 {
            return None;
        }
        let key = self.keys[self.first];
        self.first = (self.first + 1) % AHEAD;
        self.len -= 1;
        Some(key)
    }

    /// The unit a packed key holds: its first `bytes[15]` bytes.
    #[inline]
    fn unit(bytes: &[u8; 16]) -> &str {
        // SAFETY: a key is only ever packed from a `&str` (of at most 15 bytes), whose UTF-8
        // it holds whole in its first `bytes[15]` bytes
        unsafe { std::str::from_utf8_unchecked(&bytes[..bytes[15] as usize]) }
    }
}

/// The byte span of `text` each id stands for.
pub type Spans = Vec<(usize, usize)>;

/// The special rows as (text, id), and the ids of the user-defined symbols among them.
type SpecialRows = (Vec<(String, u32)>, Vec<u32>);

/// Encoded units by text.
pub type Cache = crate::word_cache::WordCache<u32>;

/// What one worker needs to encode: the unit cache and the buffers.
#[derive(Default)]
pub struct TokenizerState {
    pub cache: Cache,
    pub work: Work,
}

/// Buffers of one encoding, reused across units and texts.
#[derive(Default)]
pub struct Work {
    viterbi: Viterbi,
    lattice: Lattice,
    /// Two-stage models: where, in the text's pieces so far, the pieces standing for unknown
    /// symbols are, so that the stream merges leave them alone as the unit merges do.
    stream_opaque: Vec<usize>,
    /// A unit's symbols and its opaque positions ([`Tokenizer::spell_replay`]), kept between
    /// units rather than allocated for each unit met new (that was about 1% of a first pass).
    syms: Vec<u32>,
    opaque: Vec<usize>,
}

impl Work {
    /// A new text: forget opaque positions a failed encoding may have left behind.
    fn start_text(&mut self) {
        self.stream_opaque.clear();
    }
}

pub struct Tokenizer {
    pub kind: ModelKind,
    pub spelling: Spelling,
    pub rows: Vec<Row>,
    pub merges: Vec<[u32; 3]>,
    /// Two-stage (superword) BPE: merges from this rank on apply across unit boundaries, to the
    /// whole text after the within-unit merges.
    pub stream_from: Option<usize>,
    /// Pre-split joints: words cut into parts before spelling (training and encoding alike).
    pub joints: Option<BTreeMap<String, Vec<String>>>,
    pub options: Option<TrainOptions>,
    pub report: Option<Report>,
    index: RowIndex,
    merge_map: MergeMap,
    stream_map: MergeMap,
    /// unit -> symbol ids (and `[UNK]`, byte-fallback and marker rows)
    symbols: SymbolIds,
    byte_chars: [char; 256],
    /// Per-worker caches and buffers ([`crate::batch::Slots`]): slot 0 serves single calls.
    scratch: Slots<TokenizerState>,
    /// `[CLS]`/`[SEP]` rows put around every text (a BERT vocabulary's template).
    pub template: Option<(u32, u32)>,
    /// The special rows as (text, id), and the user-defined symbols among them, which match in
    /// text whatever a call allows; made on first use (the rows can still change before).
    specials: std::sync::OnceLock<SpecialRows>,
    /// Unigram: each row's log-probability (`None` for rows that are not pieces), and the trie
    /// over symbol ids the lattice is built from, holding each piece's exact comparison key
    /// (`segmenters::unigram::lattice::fixed` of its log-probability).
    pub log_probs: Vec<Option<f64>>,
    unigram: Option<CodedTrie>,
    /// WordPiece: the longest-match segmenter and what an unfinishable word becomes.
    longest: Option<LongestMatch>,
    unknown: Unknown,
    max_word_length: usize,
    /// Picky BPE: the merges and removals, replayed in order in place of `merges`.
    pub picky: Option<crate::learners::merge::picky::PickyReplay>,
    /// BoundlessBPE: the superwords joined across pretokens after `picky`'s replay.
    pub superwords: Option<crate::learners::superword::boundless::Superwords>,
}

impl Tokenizer {
    // ---------------------------------------------------------------- pieces and ids

    /// A row as the pages print it: `est</w>`, `##est`, `▁low`, `<0xC3>`, `[UNK]`, `Ġlow`.
    pub fn display(&self, id: u32) -> Option<String> {
        Some(display_row(self.spelling.scheme, self.rows.get(id as usize)?, &self.byte_chars))
    }

    pub fn piece_to_id(&self, piece: &str) -> Option<u32> {
        if piece == UNK && self.symbols.unk.is_some() {
            return self.symbols.unk;
        }
        if let Some(id) = self
            .rows
            .iter()
            .position(|r| r.kind == RowKind::Special && r.text.as_slice() == piece.as_bytes())
        {
            return Some(id as u32);
        }
        if let Some(base) = self.symbols.byte_base {
            if let Some(b) = parse_byte_piece(piece) {
                return Some(base + b as u32);
            }
        }
        if let Some(m) = self.symbols.marker {
            if piece == self.spelling.mark {
                return Some(m);
            }
        }
        if self.spelling.scheme == Scheme::Bytes {
            let bytes = self.pieces_text_to_bytes(piece)?;
            return self.index.get(&self.rows, bytes.as_slice());
        }
        self.index.get(&self.rows, piece.as_bytes())
    }

    /// The merges replayed within a unit, `(left, right)` packed -> `(rank, result)`: every
    /// merge of a model without stream merges.
    pub fn merge_map(&self) -> &MergeMap {
        &self.merge_map
    }

    fn pieces_text_to_bytes(&self, piece: &str) -> Option<Vec<u8>> {
        piece.chars().map(char_to_byte).collect()
    }

    // ---------------------------------------------------------------- encoding

    /// Spells one unit (or joint part) and replays the merges, keeping opaque pieces apart.
    /// (Eight arguments: the unit with its two boundary flags, and the four buffers and modes of
    /// the one caller that threads them through a text; a struct of them would live one call.)
    #[allow(clippy::too_many_arguments)]
    fn spell_replay(
        &self,
        unit: &str,
        starts: bool,
        ends: bool,
        out: &mut Vec<u32>,
        spans: Option<&mut Vec<(u32, u32)>>,
        mode: &mut Mode,
        work: &mut Work,
    ) {
        let mut syms = std::mem::take(&mut work.syms);
        let mut opaque = std::mem::take(&mut work.opaque);
        syms.clear();
        opaque.clear();
        // spans of this unit alone (the caller's vector may hold earlier parts)
        let mut local: Vec<(u32, u32)> = Vec::new();
        let want = spans.is_some();
        self.symbols.spell(unit, starts, ends, &mut syms, want.then_some(&mut local), &mut opaque);
        if self.unigram.is_some() {
            let mut piece_spans = Vec::new();
            self.cut_lattice(
                &syms,
                want.then_some(&local),
                &mut piece_spans,
                &opaque,
                out,
                mode,
                work,
            );
            if let Some(sp) = spans {
                sp.extend(piece_spans);
            }
            (work.syms, work.opaque) = (syms, opaque);
            return;
        }
        let dropout = match mode {
            Mode::Dropout(p, rng) => Some((*p, rng)),
            _ => None,
        };
        if let Some(picky) = &self.picky {
            if opaque.is_empty() {
                picky.replay(&mut syms, want.then_some(&mut local));
            } else {
                picky.replay_around(&mut syms, want.then_some(&mut local), &opaque);
            }
        } else if opaque.is_empty() {
            replay(&mut syms, want.then_some(&mut local), &self.merge_map, dropout);
        } else {
            let kept = replay_around(
                &mut syms,
                want.then_some(&mut local),
                &opaque,
                &self.merge_map,
                dropout,
            );
            if self.stream_from.is_some() {
                let at = out.len();
                work.stream_opaque.extend(kept.iter().map(|k| at + k));
            }
        }
        out.extend_from_slice(&syms);
        if let Some(sp) = spans {
            sp.extend(local);
        }
        (work.syms, work.opaque) = (syms, opaque);
    }

    /// The pieces of one unit (a word cut at its joints, if it has any), merges replayed.
    fn encode_unit_into(
        &self,
        unit: &str,
        out: &mut Vec<u32>,
        mut spans: Option<&mut Vec<(u32, u32)>>,
        mode: &mut Mode,
        work: &mut Work,
    ) {
        if self.kind == ModelKind::Word {
            out.push(self.word_id(unit));
            if let Some(sp) = spans {
                sp.push((0, unit.len() as u32));
            }
            return;
        }
        if let Some(lm) = &self.longest {
            self.longest_match(lm, unit, out, spans);
            return;
        }
        if let Some(parts) = self.joints.as_ref().and_then(|j| j.get(unit)) {
            let last = parts.len() - 1;
            let mut offset = 0u32;
            for (k, part) in parts.iter().enumerate() {
                let from = spans.as_deref().map_or(0, |sp| sp.len());
                self.spell_replay(
                    part,
                    k == 0,
                    k == last,
                    out,
                    spans.as_deref_mut(),
                    &mut *mode,
                    &mut *work,
                );
                if let Some(sp) = spans.as_deref_mut() {
                    for x in &mut sp[from..] {
                        *x = (x.0 + offset, x.1 + offset);
                    }
                }
                offset += part.len() as u32;
            }
            return;
        }
        self.spell_replay(unit, true, true, out, spans, mode, work);
    }

    /// WordPiece: longest match first; `[UNK]` for a word that cannot be finished (or for its
    /// rest) and for a word longer than `max_word_length` characters.
    fn longest_match(
        &self,
        lm: &LongestMatch,
        unit: &str,
        out: &mut Vec<u32>,
        mut spans: Option<&mut Vec<(u32, u32)>>,
    ) {
        let unk = self.symbols.unk.unwrap_or(0);
        let len = unit.len() as u32;
        if unit.chars().nth(self.max_word_length).is_some() {
            out.push(unk);
            if let Some(sp) = spans {
                sp.push((0, len));
            }
            return;
        }
        let bytes = unit.as_bytes();
        let mark = self.spelling.mark.as_bytes();
        let scheme = self.spelling.scheme;
        let start_len = out.len();
        let start_spans = spans.as_deref().map_or(0, |sp| sp.len());
        let mut pos = 0usize;
        loop {
            let (pieces, failed_at) = match lm.cut_from(bytes, pos) {
                Match::Pieces(p) => (p, None),
                Match::Failed { pieces, at } => (pieces, Some(at)),
            };
            let mut at = pos as u32;
            for &p in &pieces {
                out.push(p);
                let t = &self.rows[p as usize].text;
                let t = if scheme == Scheme::Continuation {
                    crate::vocab::piece_text(t.strip_prefix(mark).unwrap_or(t))
                } else {
                    t
                };
                let t = if scheme == Scheme::End { t.strip_suffix(mark).unwrap_or(t) } else { t };
                if let Some(sp) = spans.as_deref_mut() {
                    sp.push((at, at + t.len() as u32));
                }
                at += t.len() as u32;
            }
            let Some(f) = failed_at else { return };
            if self.symbols.byte_base.is_some() {
                // the character at `f` has no row: its fallback rows, then go on
                let c = unit[f..].chars().next().unwrap();
                let end = f + c.len_utf8();
                let before = out.len();
                match scheme {
                    Scheme::Continuation if f > 0 => {
                        out.push(self.symbols.marker.unwrap());
                        self.symbols.push_bytes_of(c, out);
                    }
                    Scheme::End if end == unit.len() => {
                        let p = self.symbols.char_id(c, false);
                        if p != NO_ID {
                            out.push(p);
                        } else {
                            self.symbols.push_bytes_of(c, out);
                        }
                        out.push(self.symbols.marker.unwrap());
                    }
                    _ => self.symbols.push_bytes_of(c, out),
                }
                if let Some(sp) = spans.as_deref_mut() {
                    sp.extend((before..out.len()).map(|_| (f as u32, end as u32)));
                }
                pos = end;
                if pos == unit.len() {
                    return;
                }
                continue;
            }
            match self.unknown {
                Unknown::Word => {
                    out.truncate(start_len);
                    out.push(unk);
                    if let Some(sp) = spans {
                        sp.truncate(start_spans);
                        sp.push((0, len));
                    }
                }
                Unknown::Rest => {
                    out.push(unk);
                    if let Some(sp) = spans {
                        sp.push((f as u32, len));
                    }
                }
            }
            return;
        }
    }

    /// The pieces of one unit, merges replayed, through `cache` when one is given.
    pub fn encode_unit(
        &self,
        unit: &str,
        out: &mut Vec<u32>,
        cache: Option<&mut Cache>,
        work: &mut Work,
    ) -> Result<()> {
        // a cached unit would lose where its opaque pieces are, which stream merges need
        let cache = if self.stream_from.is_some() { None } else { cache };
        // a long unit (a line of CJK, a URL) seldom comes again: caching it costs a copy of
        // its bytes and a clear of the whole cache sooner
        let cache = cache.filter(|_| unit.len() <= CACHED_UNIT);
        match cache {
            Some(cache) => {
                if !cache.extend_into(unit.as_bytes(), out) {
                    self.encode_missed(unit, out, cache, work)?;
                }
            }
            None => {
                self.spelling.check_unit(unit)?;
                self.encode_unit_into(unit, out, None, &mut Mode::Plain, work);
            }
        }
        Ok(())
    }

    /// A cacheable unit the cache did not hold: encoded, then stored.
    fn encode_missed(
        &self,
        unit: &str,
        out: &mut Vec<u32>,
        cache: &mut Cache,
        work: &mut Work,
    ) -> Result<()> {
        self.spelling.check_unit(unit)?;
        let start = out.len();
        self.encode_unit_into(unit, out, None, &mut Mode::Plain, work);
        cache.insert(unit.as_bytes(), &out[start..]);
        Ok(())
    }

    fn word_id(&self, unit: &str) -> u32 {
        let mut key: Vec<u8> = Vec::with_capacity(unit.len() + 4);
        match self.spelling.scheme {
            Scheme::End => {
                key.extend_from_slice(unit.as_bytes());
                key.extend_from_slice(self.spelling.mark.as_bytes());
            }
            _ => key.extend_from_slice(unit.as_bytes()),
        }
        self.index.get(&self.rows, key.as_slice()).unwrap_or_else(|| self.symbols.unk.unwrap_or(0))
    }

    /// Ids of `text` with a worker's cache and buffers.
    pub fn encode_with(&self, text: &str, scratch: &mut TokenizerState) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        if self.stream_from.is_none() && self.superwords.is_none() {
            self.encode_units(text, scratch, &mut out)?;
            return Ok(out);
        }
        let TokenizerState { cache, work } = scratch;
        work.start_text();
        let mut err = None;
        // where each unit's ids start (BoundlessBPE joins whole units)
        let mut starts: Vec<usize> = Vec::new();
        self.spelling.for_each_unit(text, |unit, _| {
            if err.is_none() {
                starts.push(out.len());
                if let Err(e) = self.encode_unit(unit, &mut out, Some(&mut *cache), &mut *work) {
                    err = Some(e);
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        match &self.superwords {
            Some(sw) => sw.join(&mut out, &starts, None),
            None => self.replay_stream(&mut out, None, None, work),
        }
        Ok(out)
    }

    /// The units of `text` through the cache, appended to `out` (a model with no stream
    /// merges). A unit of at most [`crate::word_cache::PACKED_LEN`] bytes is looked up [`AHEAD`]
    /// units after it is met, its cache slots fetched meanwhile ([`Cache::prefetch`]); it
    /// waits as its packed key, which holds its bytes. A longer unit first lets every waiting
    /// one go. The units are encoded in their order, so the ids and the first error are those
    /// of a lookup at once.
    ///
    /// Why: in a perf profile of our own 32k Unigram encoding 4 MB of multilingual lines into
    /// an array on one thread, the cache lookup was 37% of the samples, most of it the load
    /// of the word's slot, which missed: the table of a large batch's words outgrows the cache.
    fn encode_units(
        &self,
        text: &str,
        scratch: &mut TokenizerState,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        use crate::word_cache::{pack, PACKED_LEN};
        let TokenizerState { cache, work } = scratch;
        work.start_text();
        let mut err: Result<()> = Ok(());
        let mut waiting = Waiting::default();
        // a unit, encoded unless an earlier one failed
        let encode = |unit: &str,
                      cache: &mut Cache,
                      work: &mut Work,
                      out: &mut Vec<u32>,
                      err: &mut Result<()>| {
            if err.is_ok() {
                *err = self.encode_unit(unit, out, Some(cache), work);
            }
        };
        // a waiting unit: its slots were fetched, so it is looked up by its key (a short unit is
        // always cacheable: this model has no stream merges)
        let encode_short = |key: u128,
                            cache: &mut Cache,
                            work: &mut Work,
                            out: &mut Vec<u32>,
                            err: &mut Result<()>| {
            if err.is_ok() && !cache.extend_packed(key, out) {
                *err = self.encode_missed(Waiting::unit(&key.to_le_bytes()), out, cache, work);
            }
        };
        self.spelling.for_each_unit(text, |unit, _| {
            if err.is_err() {
                return;
            }
            if unit.len() <= PACKED_LEN {
                let key = pack(unit.as_bytes());
                cache.prefetch(key);
                if let Some(old) = waiting.push(key) {
                    encode_short(old, cache, work, out, &mut err);
                }
                return;
            }
            while let Some(old) = waiting.pop() {
                encode_short(old, cache, work, out, &mut err);
            }
            encode(unit, cache, work, out, &mut err);
        });
        while let Some(old) = waiting.pop() {
            encode_short(old, cache, work, out, &mut err);
        }
        err
    }

    /// [`Tokenizer::encode_with`] appending to `out` (a batch's buffer of many texts), with no
    /// vector per text and no special surface matched; an error may leave a part of the text's
    /// ids behind.
    fn encode_plain_into(
        &self,
        text: &str,
        scratch: &mut TokenizerState,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        if self.stream_from.is_some() || self.superwords.is_some() {
            // the stream merges (or superword joins) run over this text's ids alone
            let ids = self.encode_with(text, scratch)?;
            out.extend_from_slice(&ids);
            return Ok(());
        }
        self.encode_units(text, scratch, out)
    }

    /// Two-stage models: the stream merges over the whole text, around the opaque pieces the
    /// unit merges left alone (collected in `work` while the units were encoded).
    fn replay_stream(
        &self,
        out: &mut Vec<u32>,
        spans: Option<&mut Vec<(u32, u32)>>,
        dropout: Option<(f64, &mut SmallRng)>,
        work: &mut Work,
    ) {
        if work.stream_opaque.is_empty() {
            replay(out, spans, &self.stream_map, dropout);
        } else {
            replay_around(out, spans, &work.stream_opaque, &self.stream_map, dropout);
        }
        work.stream_opaque.clear();
    }

    /// Ids of `text`, no special surface matched but the user-defined symbols, no template.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        crate::encoder::encode(self, text, None, Call::plain(&self.allowed(&[])?))
    }

    /// [`Tokenizer::encode`] on each text, on `threads` threads; the result does not depend on
    /// the thread count.
    pub fn encode_batch<S: AsRef<str> + Sync + Send>(
        &self,
        texts: &[S],
        threads: usize,
    ) -> Result<Vec<Vec<u32>>> {
        crate::encoder::encode_batch_vec(self, texts, Call::plain(&self.allowed(&[])?), threads)
    }

    /// The model's template ([`Tokenizer::template`]) in the encoder contract's form.
    pub fn template_of(&self) -> Option<Template> {
        self.template.map(|(cls, sep)| Template::bert(cls, sep))
    }

    fn specials_and_always(&self) -> &SpecialRows {
        self.specials.get_or_init(|| {
            let specials: Vec<(String, u32)> = self
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.kind == RowKind::Special)
                .map(|(i, r)| (String::from_utf8_lossy(&r.text).into_owned(), i as u32))
                .collect();
            let users = self.options.as_ref().map(|o| o.user_symbols.as_slice()).unwrap_or(&[]);
            let always =
                specials.iter().filter(|(t, _)| users.contains(t)).map(|&(_, i)| i).collect();
            (specials, always)
        })
    }

    /// Encodes with BPE-dropout: each merge candidate is skipped with probability `p`.
    pub fn encode_dropout(&self, text: &str, p: f64, seed: u64) -> Result<Vec<u32>> {
        self.encode_mode(text, Mode::Dropout(p, SmallRng::seed_from_u64(seed)))
    }

    /// Encodes with a segmenter other than the model's default (no cache: every call is fresh).
    pub fn encode_mode(&self, text: &str, mode: Mode) -> Result<Vec<u32>> {
        self.scratch.with(0, |s| self.encode_mode_with(text, mode, &mut s.work))
    }

    fn encode_mode_with(&self, text: &str, mut mode: Mode, work: &mut Work) -> Result<Vec<u32>> {
        if self.picky.is_some() && matches!(mode, Mode::Dropout(..)) {
            return Err(Error::Option(
                "dropout does not apply to a Picky BPE or Scaffold-BPE model: its removals are not merges to skip; use stochastok".into(),
            ));
        }
        work.start_text();
        let mut out = Vec::new();
        let mut err = None;
        let mut starts: Vec<usize> = Vec::new();
        self.spelling.for_each_unit(text, |unit, _| {
            if err.is_none() {
                starts.push(out.len());
                match self.spelling.check_unit(unit) {
                    Ok(()) => self.encode_unit_into(unit, &mut out, None, &mut mode, &mut *work),
                    Err(e) => err = Some(e),
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        if let Some(sw) = &self.superwords {
            sw.join(&mut out, &starts, None);
        }
        if self.stream_from.is_some() {
            let dropout = match &mut mode {
                Mode::Dropout(p, rng) => Some((*p, rng)),
                _ => None,
            };
            self.replay_stream(&mut out, None, dropout, work);
        }
        Ok(out)
    }

    /// Ids with the byte span of `text` each one stands for.
    pub fn encode_with_spans(&self, text: &str) -> Result<(Vec<u32>, Spans)> {
        if self.spelling.normalizes() {
            // cut the normalized text, then carry every span back to the original characters
            let (norm, src) = self.spelling.normalize_text(text);
            let (ids, spans) = self.encode_with_spans_raw(&norm)?;
            let spans = spans
                .into_iter()
                .map(|(a, b)| {
                    let start = src[a].0 as usize;
                    (start, if b > a { src[b - 1].1 as usize } else { start })
                })
                .collect();
            return Ok((ids, spans));
        }
        self.encode_with_spans_raw(text)
    }

    fn encode_with_spans_raw(&self, text: &str) -> Result<(Vec<u32>, Spans)> {
        self.scratch.with(0, |s| self.encode_with_spans_in(text, &mut s.work))
    }

    fn encode_with_spans_in(&self, text: &str, work: &mut Work) -> Result<(Vec<u32>, Spans)> {
        work.start_text();
        let mut ids = Vec::new();
        let mut spans_out: Vec<(u32, u32)> = Vec::new();
        let mark = self.spelling.front_mark();
        let mut err = None;
        let mut starts: Vec<usize> = Vec::new();
        self.spelling.for_each_unit_raw(text, |unit, (a, _)| {
            if err.is_some() {
                return;
            }
            starts.push(ids.len());
            if let Err(e) = self.spelling.check_unit(unit) {
                err = Some(e);
                return;
            }
            let mut sp = Vec::new();
            self.encode_unit_into(unit, &mut ids, Some(&mut sp), &mut Mode::Plain, &mut *work);
            // spans are relative to the unit text; map them onto the original text
            let map = unit_to_text_positions(self.spelling.scheme, unit, text, a, mark);
            spans_out
                .extend(sp.iter().map(|s| (map[s.0 as usize] as u32, map[s.1 as usize] as u32)));
        });
        if let Some(e) = err {
            return Err(e);
        }
        if self.stream_from.is_some() {
            self.replay_stream(&mut ids, Some(&mut spans_out), None, work);
        }
        if let Some(sw) = &self.superwords {
            sw.join(&mut ids, &starts, Some(&mut spans_out));
        }
        Ok((ids, spans_out.into_iter().map(|(x, y)| (x as usize, y as usize)).collect()))
    }

    // ---------------------------------------------------------------- decoding

    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        self.spelling.decode_bytes(&self.rows, ids)
    }

    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.decode_bytes(ids)?).into_owned())
    }

    /// What `decode(encode(text))` gives when every symbol is spellable.
    pub fn normalize(&self, text: &str) -> Result<String> {
        self.spelling.normalize(text)
    }
}

/// Our own models under the encoder contract: the special rows are the specials; a stretch of
/// text between allowed surfaces is encoded as a text of its own.
impl Encoder for Tokenizer {
    type State = TokenizerState;
    type Cached = u32;

    fn states(&self) -> &Slots<TokenizerState> {
        &self.scratch
    }

    fn cache(state: &mut TokenizerState) -> &mut Cache {
        &mut state.cache
    }

    fn specials(&self) -> &[(String, u32)] {
        &self.specials_and_always().0
    }

    /// The rows `ids` names, and the user-defined symbols, which always match.
    fn allowed(&self, ids: &[u32]) -> Result<Allowed> {
        let (specials, always) = self.specials_and_always();
        if always.is_empty() {
            return Allowed::new(specials, ids);
        }
        let both: Vec<u32> = ids.iter().chain(always).copied().collect();
        Allowed::new(specials, &both)
    }

    fn encode_into(
        &self,
        text: &str,
        allowed: &Allowed,
        state: &mut TokenizerState,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        allowed.split(text, out, |part, out| self.encode_plain_into(part, state, out))
    }
}

impl Mode {
    /// BPE-dropout with probability `p`, its draws from `seed`.
    pub fn dropout(p: f64, seed: u64) -> Self {
        Mode::Dropout(p, SmallRng::seed_from_u64(seed))
    }
}

/// Our model encoding in a mode other than its plain one (BPE-dropout, Unigram's fewest or
/// sampled spellings) under the encoder contract, so the specials a call allows and the
/// template are applied as for every other call: each stretch of text between allowed special
/// surfaces is encoded afresh with `mode()` (a dropout or sampling stream starts from its seed).
pub struct InMode<'a, F: Fn() -> Mode + Sync> {
    pub tokenizer: &'a Tokenizer,
    pub mode: F,
}

impl<F: Fn() -> Mode + Sync> Encoder for InMode<'_, F> {
    type State = TokenizerState;
    type Cached = u32;

    fn states(&self) -> &Slots<TokenizerState> {
        &self.tokenizer.scratch
    }

    fn cache(state: &mut TokenizerState) -> &mut Cache {
        &mut state.cache
    }

    fn specials(&self) -> &[(String, u32)] {
        Encoder::specials(self.tokenizer)
    }

    fn allowed(&self, ids: &[u32]) -> Result<Allowed> {
        Encoder::allowed(self.tokenizer, ids)
    }

    fn encode_into(
        &self,
        text: &str,
        allowed: &Allowed,
        state: &mut TokenizerState,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        allowed.split(text, out, |part, out| {
            out.extend(self.tokenizer.encode_mode_with(part, (self.mode)(), &mut state.work)?);
            Ok(())
        })
    }
}
