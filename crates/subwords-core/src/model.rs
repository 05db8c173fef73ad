//! The model: spelling + rows + merges, the segmenter that goes with them, and the canonical
//! versioned JSON file (DESIGN §4).
//!
//! Encoding a text: the spelling cuts it into units, each unit is spelled into symbol ids
//! (unknown symbols become `[UNK]` or byte-fallback rows, docs/API.md), and merges are replayed.
//! Frequent units are cached. Decoding runs the spelling backwards.

use std::sync::Mutex;

use rand::rngs::SmallRng;
use rand::SeedableRng;
use crate::hash::Map;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::options::{ModelKind, TrainOptions, Unknown, MAX_VOCAB};
use crate::segmenters::longest_match::{LongestMatch, Match};
use crate::segmenters::merge_replay::{replay, MergeMap};
use crate::spelling::{byte_to_char_table, char_to_byte, parse_byte_piece, Scheme, Spelling};
use std::collections::BTreeMap;
use crate::vocab::{Row, RowKind, UNK};

use crate::segmenters::lattice::{logaddexp, Lattice, SplitMix64, NEG_INF};

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

pub const FORMAT: &str = "subwords";
pub const VERSION: u32 = 1;

/// Facts about a training run, saved with the model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub alphabet_size: u64,
    pub merges_learned: u64,
    pub rows_learned: u64,
    pub stop: String,
    pub corpus_pieces_before: u64,
    pub corpus_pieces_after: u64,
    pub distinct_units: u64,
    pub texts: u64,
    /// Which `front` normalizations changed some training text: a subset of
    /// `whitespace_runs`, `stripped_ends`, `mark_in_text`, in that order.
    pub normalizations: Option<Vec<String>>,
    pub stage_one_merges: Option<u64>,
    pub dropped_symbols: u64,
    /// The size asked for was more than the corpus supports (a ceiling, not an error).
    pub size_not_reached: bool,
    /// WordPiece under `min_count_rule="stop"`: the winner that failed `min_count` (left, right,
    /// count) and ended the run early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner_failed: Option<(String, String, u64)>,
    /// WordPiece: the training corpus cut by longest match (it can differ from
    /// `corpus_pieces_after`, the learner's own last state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus_pieces_encoded: Option<u64>,
    /// Unigram: pieces in the seed, the table size at the start and after each pruning round,
    /// and the corpus log-likelihood on the final table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<Vec<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_likelihood: Option<f64>,
}

const CACHE_LIMIT: usize = 1 << 17;
/// Units longer than this (bytes) are not cached.
const CACHED_UNIT: usize = 64;
type Cache = Map<Box<str>, Box<[u32]>>;

pub struct Model {
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
    index: Map<Box<[u8]>, u32>,
    merge_map: MergeMap,
    stream_map: MergeMap,
    plain: Map<char, u32>,
    marked: Map<char, u32>,
    ascii_plain: [u32; 128],
    ascii_marked: [u32; 128],
    unk: Option<u32>,
    byte_base: Option<u32>,
    marker: Option<u32>,
    byte_chars: [char; 256],
    /// One cache per worker slot: slot 0 serves single calls, slot k the k-th thread of a batch,
    /// so every thread keeps a warm cache across calls without sharing one.
    caches: Vec<Mutex<Cache>>,
    /// `[CLS]`/`[SEP]` rows put around every text (a BERT vocabulary's template).
    pub template: Option<(u32, u32)>,
    /// Unigram: each row's log-probability (`None` for rows that are not pieces), and the trie
    /// over symbol ids the lattice is built from.
    pub log_probs: Vec<Option<f64>>,
    unigram: Option<SymbolTrie>,
    /// WordPiece: the longest-match segmenter and what an unfinishable word becomes.
    longest: Option<LongestMatch>,
    unknown: Unknown,
    max_word_length: usize,
}

const CACHE_SLOTS: usize = 16;

const NO_ID: u32 = u32::MAX;

impl Model {
    /// Builds the derived tables and checks that the parts fit together. Used by training and by
    /// loading, so a hostile file and a fresh model pass the same checks.
    pub fn new(
        kind: ModelKind,
        spelling: Spelling,
        rows: Vec<Row>,
        merges: Vec<[u32; 3]>,
        stream_from: Option<usize>,
        joints: Option<BTreeMap<String, Vec<String>>>,
        options: Option<TrainOptions>,
        report: Option<Report>,
    ) -> Result<Self> {
        spelling.validate()?;
        let bad = |m: String| Error::ModelFile(m);
        if rows.len() as u64 > MAX_VOCAB {
            return Err(bad(format!("{} rows is more than the {MAX_VOCAB} subwords accepts", rows.len())));
        }
        // A vocabulary made elsewhere (kind `piece`): its own order and special rows, no merges,
        // encoded by longest match.
        let imported = rows.iter().any(|r| r.kind == RowKind::Piece);
        if imported {
            if kind != ModelKind::Wordpiece || !merges.is_empty() {
                return Err(bad("`piece` rows belong to a WordPiece vocabulary without merges".into()));
            }
            if let Some(id) = rows.iter().position(|r| !matches!(r.kind, RowKind::Piece | RowKind::Special)) {
                return Err(bad(format!("row {id}: an imported vocabulary holds only piece and special rows")));
            }
        }
        // Row order: [UNK], byte rows, the bare marker, the alphabet, learned rows (or unit rows).
        let stage = |k: RowKind| match k {
            RowKind::Special => 0,
            RowKind::Byte => 1,
            RowKind::Marker => 2,
            RowKind::Alphabet => 3,
            RowKind::Learned | RowKind::Unit | RowKind::Piece => 4,
        };
        for (id, w) in rows.windows(2).enumerate().filter(|_| !imported) {
            if stage(w[0].kind) > stage(w[1].kind) {
                return Err(bad(format!(
                    "row {}: a {} row after a {} row; rows go [UNK], byte rows, marker, alphabet, learned",
                    id + 1,
                    w[1].kind.name(),
                    w[0].kind.name()
                )));
            }
        }
        let wrong_kind = rows.iter().position(|r| match kind {
            ModelKind::Bpe | ModelKind::Wordpiece | ModelKind::Unigram => r.kind == RowKind::Unit,
            ModelKind::Word => !matches!(r.kind, RowKind::Special | RowKind::Unit),
        });
        if let Some(id) = wrong_kind {
            return Err(bad(format!("row {id}: a {} row does not belong in a {:?} model", rows[id].kind.name(), kind)));
        }
        let mut index: Map<Box<[u8]>, u32> = Map::default();
        let mut unk = None;
        let mut byte_base = None;
        let mut marker = None;
        for (id, row) in rows.iter().enumerate() {
            let id = id as u32;
            match row.kind {
                RowKind::Special => {
                    if row.text == UNK.as_bytes() {
                        if unk.is_some() {
                            return Err(bad(format!("row {id}: {UNK} appears twice")));
                        }
                        unk = Some(id);
                    } else if !imported {
                        return Err(bad(format!("row {id}: the only special row is one {UNK}")));
                    } else if row.text.is_empty() || row.text.len() > 256 || std::str::from_utf8(&row.text).is_err() {
                        return Err(bad(format!("row {id}: a special row is 1 to 256 bytes of UTF-8")));
                    }
                }
                RowKind::Byte => {
                    let b = id - *byte_base.get_or_insert(id);
                    if row.text.len() != 1 || row.text[0] as u32 != b || b > 255 {
                        return Err(bad(format!("row {id}: byte rows must be <0x00>…<0xFF>, consecutive and in order")));
                    }
                }
                RowKind::Marker => {
                    if row.text != spelling.mark.as_bytes() || marker.is_some() {
                        return Err(bad(format!("row {id}: the marker row must be the bare mark {:?}, once", spelling.mark)));
                    }
                    marker = Some(id);
                }
                RowKind::Alphabet | RowKind::Learned | RowKind::Unit | RowKind::Piece => {
                    if row.text.is_empty() || row.text.len() > 1 << 16 {
                        return Err(bad(format!("row {id}: a piece must be 1 to 65536 bytes")));
                    }
                    if spelling.scheme != Scheme::Bytes && std::str::from_utf8(&row.text).is_err() {
                        return Err(bad(format!("row {id}: piece is not valid UTF-8")));
                    }
                    if index.insert(row.text.clone().into_boxed_slice(), id).is_some() {
                        return Err(bad(format!("row {id}: piece {:?} appears twice", String::from_utf8_lossy(&row.text))));
                    }
                }
            }
        }
        let has_bytes = byte_base.is_some();
        if has_bytes != spelling.byte_fallback {
            return Err(bad("byte-fallback rows and the spelling's byte_fallback setting disagree".into()));
        }
        if let Some(b) = byte_base {
            if rows.len() < b as usize + 256 || rows[b as usize + 255].kind != RowKind::Byte {
                return Err(bad("byte fallback needs all 256 byte rows".into()));
            }
        }
        let wants_marker = spelling.byte_fallback && matches!(spelling.scheme, Scheme::End | Scheme::Continuation);
        if wants_marker != marker.is_some() {
            return Err(bad("the bare marker row must be present exactly when end/continuation use byte fallback".into()));
        }
        if (spelling.scheme == Scheme::Bytes) == unk.is_some() {
            return Err(bad(format!("the bytes spelling has no {UNK} row; every other spelling has exactly one")));
        }
        if spelling.scheme == Scheme::Bytes {
            for b in 0..256usize {
                match rows.get(b) {
                    Some(r) if r.kind == RowKind::Alphabet && r.text == [b as u8] => {}
                    _ => return Err(bad(format!("bytes spelling: row {b} must be the byte {b}"))),
                }
            }
        }
        if kind != ModelKind::Bpe && stream_from.is_some() {
            return Err(bad("only BPE models have stream merges".into()));
        }
        if kind == ModelKind::Word && !merges.is_empty() {
            return Err(bad("a word model has no merges".into()));
        }
        let mut merge_map: MergeMap = Map::default();
        let mut stream_map: MergeMap = Map::default();
        if let Some(k) = stream_from {
            if k > merges.len() || spelling.scheme == Scheme::Continuation || kind != ModelKind::Bpe {
                return Err(bad("stream merges need a BPE model on the end, front or bytes spelling, starting within the merges".into()));
            }
        }
        let strip: &[u8] = if spelling.scheme == Scheme::Continuation { spelling.mark.as_bytes() } else { b"" };
        for (rank, &[a, b, c]) in merges.iter().enumerate() {
            let ok = |x: u32| rows.get(x as usize).is_some_and(|r| matches!(r.kind, RowKind::Alphabet | RowKind::Learned));
            if !(ok(a) && ok(b) && ok(c)) {
                return Err(bad(format!("merge {rank}: refers to a row that is not a piece")));
            }
            let l = &rows[a as usize].text;
            let r = &rows[b as usize].text;
            let r = if !strip.is_empty() && r.starts_with(strip) { &r[strip.len()..] } else { &r[..] };
            let mut joined = l.clone();
            joined.extend_from_slice(r);
            if rows[c as usize].text != joined {
                return Err(bad(format!("merge {rank}: the joined piece is not the row it names")));
            }
            let map = if stream_from.is_some_and(|k| rank >= k) { &mut stream_map } else { &mut merge_map };
            if map.insert(crate::hash::pack(a, b), (rank as u32, c)).is_some() {
                return Err(bad(format!("merge {rank}: the same pair is merged twice")));
            }
        }
        if let Some(j) = &joints {
            if !matches!(spelling.scheme, Scheme::End | Scheme::Continuation) || kind != ModelKind::Bpe {
                return Err(bad("joints apply to BPE models on the end and continuation spellings".into()));
            }
            for (word, parts) in j {
                if parts.len() < 2 || parts.iter().any(String::is_empty) || parts.concat() != *word || word.chars().any(char::is_whitespace) {
                    return Err(bad(format!("joints: {parts:?} is not a cut of the word {word:?}")));
                }
            }
        }
        if kind == ModelKind::Unigram && !merges.is_empty() {
            return Err(bad("a unigram model has no merges".into()));
        }
        if kind == ModelKind::Unigram {
            let alphabet: Vec<&Row> = rows.iter().filter(|r| r.kind == RowKind::Alphabet).collect();
            if alphabet.windows(2).any(|w| w[0].text >= w[1].text) {
                return Err(bad("alphabet rows are not in code-point order".into()));
            }
        }
        if matches!(kind, ModelKind::Bpe | ModelKind::Wordpiece) {
            // the alphabet is in code-point order; learned rows appear in the order merges make
            // them, and a merge only joins rows that exist by then
            let alphabet: Vec<&Row> = rows.iter().filter(|r| r.kind == RowKind::Alphabet).collect();
            if let Some(k) = alphabet.windows(2).position(|w| w[0].text >= w[1].text) {
                return Err(bad(format!("alphabet rows are not in code-point order (at the {}th)", k + 1)));
            }
            let mut made: Vec<bool> = rows.iter().map(|r| r.kind == RowKind::Alphabet).collect();
            let mut next_learned = rows.iter().position(|r| r.kind == RowKind::Learned).unwrap_or(rows.len());
            for (rank, &[a, b, c]) in merges.iter().enumerate() {
                let ok = |x: u32| made.get(x as usize).copied().unwrap_or(false);
                if !ok(a) || !ok(b) {
                    return Err(bad(format!("merge {rank} joins a row that no earlier merge made")));
                }
                if !ok(c) {
                    if c as usize != next_learned {
                        return Err(bad(format!("merge {rank} makes row {c}, but the next learned row is {next_learned}")));
                    }
                    made[c as usize] = true;
                    next_learned += 1;
                }
            }
            if let Some(id) = rows.iter().enumerate().position(|(i, r)| r.kind == RowKind::Learned && !made[i]) {
                return Err(bad(format!("row {id}: a learned row that no merge makes")));
            }
        }
        let mut plain = Map::default();
        let mut marked = Map::default();
        if spelling.scheme != Scheme::Bytes {
            let mark = spelling.mark.as_str();
            for (text, &id) in &index {
                let Ok(s) = std::str::from_utf8(text) else { continue };
                let mut cs = s.chars();
                if let (Some(c), None) = (cs.next(), cs.next()) {
                    plain.insert(c, id);
                    continue;
                }
                let inner = match spelling.scheme {
                    Scheme::End => s.strip_suffix(mark),
                    Scheme::Continuation => s.strip_prefix(mark),
                    _ => None,
                };
                if let Some(inner) = inner {
                    let mut cs = inner.chars();
                    if let (Some(c), None) = (cs.next(), cs.next()) {
                        marked.insert(c, id);
                    }
                }
            }
        }
        let longest = (kind == ModelKind::Wordpiece).then(|| {
            let pieces: Vec<(&[u8], u32)> = index.iter().map(|(t, &id)| (&**t, id)).collect();
            match spelling.scheme {
                Scheme::Continuation => LongestMatch::new(&pieces, Some(spelling.mark.as_bytes()), None),
                _ => LongestMatch::new(&pieces, None, Some(spelling.mark.as_bytes())),
            }
        });
        if kind == ModelKind::Wordpiece && !matches!(spelling.scheme, Scheme::Continuation | Scheme::End) {
            return Err(bad("a wordpiece model uses the continuation or end spelling".into()));
        }
        let unknown = options.as_ref().and_then(|o| o.unknown).unwrap_or(Unknown::Word);
        // no limit when the options say none (models from elsewhere keep BERT's 100 until read)
        let max_word_length = match options.as_ref() {
            Some(o) => o.max_word_length.map_or(usize::MAX, |m| m as usize),
            None => 100,
        };
        let mut ascii_plain = [NO_ID; 128];
        let mut ascii_marked = [NO_ID; 128];
        for c in 0..128u8 {
            ascii_plain[c as usize] = plain.get(&(c as char)).copied().unwrap_or(NO_ID);
            ascii_marked[c as usize] = marked.get(&(c as char)).copied().unwrap_or(NO_ID);
        }
        Ok(Model {
            kind,
            spelling,
            rows,
            merges,
            stream_from,
            joints,
            options,
            report,
            index,
            merge_map,
            stream_map,
            plain,
            marked,
            ascii_plain,
            ascii_marked,
            unk,
            byte_base,
            marker,
            byte_chars: byte_to_char_table(),
            caches: (0..CACHE_SLOTS).map(|_| Mutex::new(Cache::default())).collect(),
            longest,
            unknown,
            max_word_length,
            template: None,
            log_probs: Vec::new(),
            unigram: None,
        })
    }

    // ---------------------------------------------------------------- pieces and ids

    /// A row as the pages print it: `est</w>`, `##est`, `▁low`, `<0xC3>`, `[UNK]`, `Ġlow`.
    pub fn display(&self, id: u32) -> Option<String> {
        Some(display_row(self.spelling.scheme, self.rows.get(id as usize)?, &self.byte_chars))
    }

    pub fn piece_to_id(&self, piece: &str) -> Option<u32> {
        if piece == UNK && self.unk.is_some() {
            return self.unk;
        }
        if let Some(id) = self.rows.iter().position(|r| r.kind == RowKind::Special && r.text == piece.as_bytes()) {
            return Some(id as u32);
        }
        if let Some(base) = self.byte_base {
            if let Some(b) = parse_byte_piece(piece) {
                return Some(base + b as u32);
            }
        }
        if let Some(m) = self.marker {
            if piece == self.spelling.mark {
                return Some(m);
            }
        }
        if self.spelling.scheme == Scheme::Bytes {
            let bytes = self.pieces_text_to_bytes(piece)?;
            return self.index.get(bytes.as_slice()).copied();
        }
        self.index.get(piece.as_bytes()).copied()
    }

    fn pieces_text_to_bytes(&self, piece: &str) -> Option<Vec<u8>> {
        piece
            .chars()
            .map(char_to_byte)
            .collect()
    }

    // ---------------------------------------------------------------- encoding

    #[inline]
    fn char_id(&self, c: char, marked: bool) -> u32 {
        if (c as u32) < 128 {
            if marked {
                self.ascii_marked[c as usize]
            } else {
                self.ascii_plain[c as usize]
            }
        } else if marked {
            self.marked.get(&c).copied().unwrap_or(NO_ID)
        } else {
            self.plain.get(&c).copied().unwrap_or(NO_ID)
        }
    }

    fn push_bytes_of(&self, c: char, out: &mut Vec<u32>) {
        let base = self.byte_base.unwrap();
        let mut buf = [0u8; 4];
        for &b in c.encode_utf8(&mut buf).as_bytes() {
            out.push(base + b as u32);
        }
    }

    /// Spells one unit into symbol ids (before merges). `starts`/`ends` say whether the unit
    /// begins/ends a word (false only for parts cut at pre-split joints). With `spans`, pushes for
    /// each id the byte span (relative to the unit's own text) it stands for.
    ///
    /// The index of every piece that stands for an unknown symbol is pushed to `opaque`: such a
    /// piece never takes part in a merge (training never merged an unknown symbol either).
    pub fn spell(
        &self,
        unit: &str,
        starts: bool,
        ends: bool,
        out: &mut Vec<u32>,
        mut spans: Option<&mut Vec<(u32, u32)>>,
        opaque: &mut Vec<usize>,
    ) {
        let span = |k: usize, a: usize, b: usize, spans: &mut Option<&mut Vec<(u32, u32)>>| {
            if let Some(sp) = spans.as_deref_mut() {
                for _ in 0..k {
                    sp.push((a as u32, b as u32));
                }
            }
        };
        match self.spelling.scheme {
            Scheme::Bytes => {
                out.extend(unit.bytes().map(u32::from));
                if let Some(sp) = spans.as_deref_mut() {
                    sp.extend((0..unit.len()).map(|i| (i as u32, i as u32 + 1)));
                }
            }
            Scheme::Front => {
                for (i, c) in unit.char_indices() {
                    let before = out.len();
                    let id = self.char_id(c, false);
                    if id != NO_ID {
                        out.push(id);
                    } else {
                        if self.byte_base.is_some() {
                            self.push_bytes_of(c, out);
                        } else {
                            out.push(self.unk.unwrap());
                        }
                        opaque.extend(before..out.len());
                    }
                    span(out.len() - before, i, i + c.len_utf8(), &mut spans);
                }
            }
            Scheme::End => {
                let last = unit.char_indices().next_back().map(|(i, _)| i);
                for (i, c) in unit.char_indices() {
                    let before = out.len();
                    let end = i + c.len_utf8();
                    let is_marked = ends && Some(i) == last;
                    let id = self.char_id(c, is_marked);
                    if id != NO_ID {
                        out.push(id);
                        span(1, i, end, &mut spans);
                        continue;
                    }
                    if self.byte_base.is_none() {
                        opaque.push(out.len());
                        out.push(self.unk.unwrap());
                        span(1, i, end, &mut spans);
                        continue;
                    }
                    if is_marked {
                        // `c</w>` has no row: the plain `c` (or its bytes), then the bare mark
                        let p = self.char_id(c, false);
                        if p != NO_ID {
                            out.push(p);
                        } else {
                            self.push_bytes_of(c, out);
                        }
                        span(out.len() - before, i, end, &mut spans);
                        out.push(self.marker.unwrap());
                        span(1, end, end, &mut spans);
                    } else {
                        self.push_bytes_of(c, out);
                        span(out.len() - before, i, end, &mut spans);
                    }
                    opaque.extend(before..out.len());
                }
            }
            Scheme::Continuation => {
                for (k, (i, c)) in unit.char_indices().enumerate() {
                    let end = i + c.len_utf8();
                    let is_marked = !(starts && k == 0);
                    let id = self.char_id(c, is_marked);
                    if id != NO_ID {
                        out.push(id);
                        span(1, i, end, &mut spans);
                        continue;
                    }
                    let first = out.len();
                    if self.byte_base.is_none() {
                        opaque.push(out.len());
                        out.push(self.unk.unwrap());
                        span(1, i, end, &mut spans);
                        continue;
                    }
                    if is_marked {
                        out.push(self.marker.unwrap());
                        span(1, i, i, &mut spans);
                    }
                    let before = out.len();
                    self.push_bytes_of(c, out);
                    span(out.len() - before, i, end, &mut spans);
                    opaque.extend(first..out.len());
                }
            }
        }
    }

    /// Spells one unit (or joint part) and replays the merges, keeping opaque pieces apart.
    fn spell_replay(
        &self,
        unit: &str,
        starts: bool,
        ends: bool,
        out: &mut Vec<u32>,
        mut spans: Option<&mut Vec<(u32, u32)>>,
        mode: &mut Mode,
    ) {
        let mut syms = Vec::with_capacity(unit.len() + 1);
        let mut opaque = Vec::new();
        // spans of this unit alone (the caller's vector may hold earlier parts)
        let mut local: Vec<(u32, u32)> = Vec::new();
        let want = spans.is_some();
        self.spell(unit, starts, ends, &mut syms, want.then_some(&mut local), &mut opaque);
        if self.unigram.is_some() {
            let mut piece_spans = Vec::new();
            self.cut_lattice(&syms, want.then_some(&local), &mut piece_spans, &opaque, out, mode);
            if let Some(sp) = spans {
                sp.extend(piece_spans);
            }
            return;
        }
        let dropout = match mode {
            Mode::Dropout(p, rng) => Some((*p, rng)),
            _ => None,
        };
        if opaque.is_empty() {
            replay(&mut syms, want.then_some(&mut local), &self.merge_map, dropout);
        } else {
            let kept = replay_around(&mut syms, want.then_some(&mut local), &opaque, &self.merge_map, dropout);
            if self.stream_from.is_some() {
                let at = out.len();
                STREAM_OPAQUE.with(|o| o.borrow_mut().extend(kept.iter().map(|k| at + k)));
            }
        }
        out.extend_from_slice(&syms);
        if let Some(sp) = spans.as_deref_mut() {
            sp.extend(local);
        }
    }

    /// A word holding the end mark (or starting with the continuation mark) would decode to
    /// different text; it is refused rather than silently changed.
    fn check_unit(&self, unit: &str) -> Result<()> {
        let clash = match self.spelling.scheme {
            Scheme::End => unit.contains(self.spelling.mark.as_str()),
            Scheme::Continuation => unit.starts_with(self.spelling.mark.as_str()),
            _ => false,
        };
        if clash {
            return Err(Error::Input(format!(
                "the word {unit:?} holds this model's mark {:?}: its pieces would decode to different text. \
                 Remove or escape the mark in the input, or use a model trained with another mark",
                self.spelling.mark
            )));
        }
        Ok(())
    }

    /// The pieces of one unit (a word cut at its joints, if it has any), merges replayed.
    fn encode_unit_into(
        &self,
        unit: &str,
        out: &mut Vec<u32>,
        mut spans: Option<&mut Vec<(u32, u32)>>,
        mode: &mut Mode,
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
                self.spell_replay(part, k == 0, k == last, out, spans.as_deref_mut(), &mut *mode);
                if let Some(sp) = spans.as_deref_mut() {
                    for x in &mut sp[from..] {
                        *x = (x.0 + offset, x.1 + offset);
                    }
                }
                offset += part.len() as u32;
            }
            return;
        }
        self.spell_replay(unit, true, true, out, spans, mode);
    }

    /// WordPiece: longest match first; `[UNK]` for a word that cannot be finished (or for its
    /// rest) and for a word longer than `max_word_length` characters.
    fn longest_match(&self, lm: &LongestMatch, unit: &str, out: &mut Vec<u32>, mut spans: Option<&mut Vec<(u32, u32)>>) {
        let unk = self.unk.unwrap_or(0);
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
                let t = if scheme == Scheme::Continuation { t.strip_prefix(mark).unwrap_or(t) } else { t };
                let t = if scheme == Scheme::End { t.strip_suffix(mark).unwrap_or(t) } else { t };
                if let Some(sp) = spans.as_deref_mut() {
                    sp.push((at, at + t.len() as u32));
                }
                at += t.len() as u32;
            }
            let Some(f) = failed_at else { return };
            if self.byte_base.is_some() {
                // the character at `f` has no row: its fallback rows, then go on
                let c = unit[f..].chars().next().unwrap();
                let end = f + c.len_utf8();
                let before = out.len();
                match scheme {
                    Scheme::Continuation if f > 0 => {
                        out.push(self.marker.unwrap());
                        self.push_bytes_of(c, out);
                    }
                    Scheme::End if end == unit.len() => {
                        let p = self.char_id(c, false);
                        if p != NO_ID {
                            out.push(p);
                        } else {
                            self.push_bytes_of(c, out);
                        }
                        out.push(self.marker.unwrap());
                    }
                    _ => self.push_bytes_of(c, out),
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

    /// The pieces of one unit, merges replayed, through the cache.
    pub fn encode_unit(&self, unit: &str, out: &mut Vec<u32>, cache: Option<&mut Cache>) -> Result<()> {
        // a cached unit would lose where its opaque pieces are, which stream merges need
        let cache = if self.stream_from.is_some() { None } else { cache };
        // a long unit (a line of CJK, a URL) seldom comes again: caching it costs two
        // allocations and a clear of the whole cache sooner
        let cache = cache.filter(|_| unit.len() <= CACHED_UNIT);
        match cache {
            Some(cache) => {
                if let Some(ids) = cache.get(unit) {
                    out.extend_from_slice(ids);
                    return Ok(());
                }
                self.check_unit(unit)?;
                let start = out.len();
                self.encode_unit_into(unit, out, None, &mut Mode::Plain);
                if cache.len() >= CACHE_LIMIT {
                    cache.clear();
                }
                cache.insert(unit.into(), out[start..].into());
            }
            None => {
                self.check_unit(unit)?;
                self.encode_unit_into(unit, out, None, &mut Mode::Plain);
            }
        }
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
        self.index.get(key.as_slice()).copied().unwrap_or_else(|| self.unk.unwrap_or(0))
    }

    pub fn encode_with_cache(&self, text: &str, cache: &mut Cache) -> Result<Vec<u32>> {
        self.start_text();
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        let mut err = None;
        self.spelling.for_each_unit(text, |unit, _| {
            if err.is_none() {
                if let Err(e) = self.encode_unit(unit, &mut out, Some(&mut *cache)) {
                    err = Some(e);
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        if self.stream_from.is_some() {
            self.replay_stream(&mut out, None, None);
        }
        Ok(out)
    }

    /// A new text: forget opaque positions a failed encoding may have left behind.
    fn start_text(&self) {
        if self.stream_from.is_some() {
            STREAM_OPAQUE.with(|o| o.borrow_mut().clear());
        }
    }

    /// Two-stage models: the stream merges over the whole text, around the opaque pieces.
    fn replay_stream(&self, out: &mut Vec<u32>, spans: Option<&mut Vec<(u32, u32)>>, dropout: Option<(f64, &mut SmallRng)>) {
        let opaque = STREAM_OPAQUE.with(|o| std::mem::take(&mut *o.borrow_mut()));
        if opaque.is_empty() {
            replay(out, spans, &self.stream_map, dropout);
        } else {
            replay_around(out, spans, &opaque, &self.stream_map, dropout);
        }
    }

    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        match self.caches[0].try_lock() {
            Ok(mut cache) => self.encode_with_cache(text, &mut cache),
            Err(_) => self.encode_with_cache(text, &mut Cache::default()),
        }
    }

    /// Encodes each text on `threads` threads; the result does not depend on the thread count.
    pub fn encode_batch(&self, texts: &[&str], threads: usize) -> Result<Vec<Vec<u32>>> {
        let threads = threads.max(1).min(texts.len().max(1));
        if threads == 1 {
            return texts.iter().map(|t| self.encode(t)).collect();
        }
        let mut out: Vec<Result<Vec<u32>>> = (0..texts.len()).map(|_| Ok(Vec::new())).collect();
        let per = texts.len().div_ceil(threads);
        std::thread::scope(|s| {
            for (k, (chunk_out, chunk_in)) in out.chunks_mut(per).zip(texts.chunks(per)).enumerate() {
                s.spawn(move || {
                    let slot = self.caches.get(k % CACHE_SLOTS).and_then(|m| m.try_lock().ok());
                    let mut local;
                    let cache: &mut Cache = match slot {
                        Some(guard) => {
                            local = guard;
                            &mut local
                        }
                        None => {
                            local_fallback(chunk_out, chunk_in, self);
                            return;
                        }
                    };
                    for (o, t) in chunk_out.iter_mut().zip(chunk_in) {
                        *o = self.encode_with_cache(t, cache);
                    }
                });
            }
        });
        out.into_iter().collect()
    }

    /// Encodes with BPE-dropout: each merge candidate is skipped with probability `p`.
    pub fn encode_dropout(&self, text: &str, p: f64, seed: u64) -> Result<Vec<u32>> {
        self.encode_mode(text, Mode::Dropout(p, SmallRng::seed_from_u64(seed)))
    }

    /// Encodes with a segmenter other than the model's default (no cache: every call is fresh).
    pub fn encode_mode(&self, text: &str, mut mode: Mode) -> Result<Vec<u32>> {
        self.start_text();
        let mut out = Vec::new();
        let mut err = None;
        self.spelling.for_each_unit(text, |unit, _| {
            if err.is_none() {
                match self.check_unit(unit) {
                    Ok(()) => self.encode_unit_into(unit, &mut out, None, &mut mode),
                    Err(e) => err = Some(e),
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        if self.stream_from.is_some() {
            let dropout = match &mut mode {
                Mode::Dropout(p, rng) => Some((*p, rng)),
                _ => None,
            };
            self.replay_stream(&mut out, None, dropout);
        }
        Ok(out)
    }

    /// Ids with the byte span of `text` each one stands for.
    pub fn encode_with_spans(&self, text: &str) -> Result<(Vec<u32>, Vec<(usize, usize)>)> {
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

    fn encode_with_spans_raw(&self, text: &str) -> Result<(Vec<u32>, Vec<(usize, usize)>)> {
        self.start_text();
        let mut ids = Vec::new();
        let mut spans_out: Vec<(u32, u32)> = Vec::new();
        let mark = self.spelling.front_mark();
        let mut err = None;
        self.spelling.for_each_unit_raw(text, |unit, (a, _)| {
            if err.is_some() {
                return;
            }
            if let Err(e) = self.check_unit(unit) {
                err = Some(e);
                return;
            }
            let mut sp = Vec::new();
            self.encode_unit_into(unit, &mut ids, Some(&mut sp), &mut Mode::Plain);
            // spans are relative to the unit text; map them onto the original text
            let map = unit_to_text_positions(self.spelling.scheme, unit, text, a, mark);
            spans_out.extend(sp.iter().map(|s| (map[s.0 as usize] as u32, map[s.1 as usize] as u32)));
        });
        if let Some(e) = err {
            return Err(e);
        }
        if self.stream_from.is_some() {
            self.replay_stream(&mut ids, Some(&mut spans_out), None);
        }
        Ok((ids, spans_out.into_iter().map(|(x, y)| (x as usize, y as usize)).collect()))
    }

    // ---------------------------------------------------------------- decoding

    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        let mut out: Vec<u8> = Vec::with_capacity(ids.len() * 4);
        let mark = self.spelling.mark.as_bytes();
        let mut prev_kind: Option<RowKind> = None;
        for &id in ids {
            let row = self
                .rows
                .get(id as usize)
                .ok_or_else(|| Error::UnknownPiece(format!("id {id} is not a row (this vocabulary has {} rows)", self.rows.len())))?;
            match self.spelling.scheme {
                Scheme::Bytes => out.extend_from_slice(&row.text),
                Scheme::End => match row.kind {
                    RowKind::Byte => out.push(row.text[0]),
                    RowKind::Marker => out.push(b' '),
                    _ => replace_all(&row.text, mark, b" ", &mut out),
                },
                Scheme::Front => match row.kind {
                    RowKind::Byte => out.push(row.text[0]),
                    _ => replace_all(&row.text, mark, b" ", &mut out),
                },
                Scheme::Continuation => match row.kind {
                    RowKind::Byte => {
                        // a byte continues the word after the bare `##` row, or when it is a
                        // UTF-8 continuation byte after another byte row (the rest of a character)
                        let b = row.text[0];
                        let continues = prev_kind == Some(RowKind::Marker)
                            || (prev_kind == Some(RowKind::Byte) && (0x80..=0xBF).contains(&b));
                        if !continues && !out.is_empty() {
                            out.push(b' ');
                        }
                        out.push(b);
                    }
                    RowKind::Marker => {}
                    _ => match row.text.strip_prefix(mark) {
                        Some(rest) if row.kind != RowKind::Special => out.extend_from_slice(rest),
                        _ => {
                            if !out.is_empty() {
                                out.push(b' ');
                            }
                            out.extend_from_slice(&row.text);
                        }
                    },
                },
            }
            prev_kind = Some(row.kind);
        }
        match self.spelling.scheme {
            Scheme::End => {
                if out.last() == Some(&b' ') {
                    out.pop();
                }
            }
            Scheme::Front => {
                if out.first() == Some(&b' ') {
                    out.remove(0);
                }
            }
            _ => {}
        }
        Ok(out)
    }

    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.decode_bytes(ids)?).into_owned())
    }

    /// What `decode(encode(text))` gives when every symbol is spellable.
    pub fn normalize(&self, text: &str) -> Result<String> {
        if matches!(self.spelling.scheme, Scheme::End | Scheme::Continuation) {
            let mut err = Ok(());
            self.spelling.for_each_unit(text, |u, _| {
                if err.is_ok() {
                    err = self.check_unit(u);
                }
            });
            err?;
        }
        Ok(match self.spelling.scheme {
            Scheme::Bytes => text.to_string(),
            Scheme::End | Scheme::Continuation => {
                // the units joined by one space (a pre-split puts spaces where it cut)
                let mut out = String::with_capacity(text.len());
                self.spelling.for_each_unit(text, |u, _| {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    out.push_str(u);
                });
                out
            }
            Scheme::Front => {
                let mark = self.spelling.front_mark();
                let mut out = String::with_capacity(text.len());
                crate::spelling::for_each_word(text, |a, b| {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    for c in text[a..b].chars() {
                        out.push(if c == mark { ' ' } else { c });
                    }
                });
                out
            }
        })
    }

    // ---------------------------------------------------------------- file format

    pub fn to_json(&self) -> String {
        let mut s = String::new();
        let head = serde_json::json!({
            "format": FORMAT,
            "version": VERSION,
            "model": self.kind,
            "spelling": self.spelling,
            "stream_merges_from": self.stream_from,
            "joints": self.joints,
            "template": self.template.map(|(c, s)| serde_json::json!({"cls": self.display(c), "sep": self.display(s)})),
            "options": self.options,
            "report": self.report,
        });
        s.push_str("{\n");
        for key in ["format", "version", "model", "spelling", "stream_merges_from", "joints", "template", "options", "report"] {
            s.push_str(&format!("  {}: {},\n", serde_json::to_string(key).unwrap(), serde_json::to_string(&head[key]).unwrap()));
        }
        s.push_str("  \"rows\": [");
        for (i, _) in self.rows.iter().enumerate() {
            let p = self.display(i as u32).unwrap();
            s.push_str(if i == 0 { "\n    " } else { ",\n    " });
            s.push_str(&serde_json::to_string(&(p, self.rows[i].kind)).unwrap());
        }
        s.push_str("\n  ],\n  \"merges\": [");
        for (i, m) in self.merges.iter().enumerate() {
            s.push_str(if i == 0 { "\n    " } else { ",\n    " });
            let pair = (self.display(m[0]).unwrap(), self.display(m[1]).unwrap());
            s.push_str(&serde_json::to_string(&pair).unwrap());
        }
        s.push_str(if self.merges.is_empty() { "]" } else { "\n  ]" });
        if self.kind == ModelKind::Unigram {
            // one per row; -inf, which JSON numbers cannot carry, is the string "-inf"
            let lps: Vec<serde_json::Value> = self
                .log_probs
                .iter()
                .map(|p| match p {
                    None => serde_json::Value::Null,
                    Some(v) if v.is_infinite() => serde_json::Value::String("-inf".into()),
                    Some(v) => serde_json::json!(v),
                })
                .collect();
            s.push_str(",\n  \"log_probs\": ");
            s.push_str(&serde_json::to_string(&lps).unwrap());
        }
        s.push_str("\n}\n");
        s
    }

    pub fn from_json(text: &str) -> Result<Self> {
        if !text.trim_start().starts_with('{') {
            return Err(Error::ModelFile("not a subwords model file: it is not a JSON object".into()));
        }
        let file: ModelFile = serde_json::from_str(text).map_err(|e| {
            Error::ModelFile(format!("not a valid subwords model file: {e}; was it truncated or written by another tool? (foreign formats: see `subwords export`/`--format`)"))
        })?;
        if file.format != FORMAT {
            return Err(Error::ModelFile(format!("not a subwords model file (format {:?})", file.format)));
        }
        if file.version != VERSION {
            return Err(Error::ModelFile(format!(
                "model file version {} is not readable by this subwords, which reads version {VERSION}; upgrade subwords",
                file.version
            )));
        }
        if let Some(o) = &file.options {
            o.validate().map_err(|e| Error::ModelFile(format!("options in the model file: {e}")))?;
        }
        let bytes_spelling = file.spelling.scheme == Scheme::Bytes;
        let mut rows = Vec::with_capacity(file.rows.len());
        for (i, (piece, kind)) in file.rows.into_iter().enumerate() {
            let text = match kind {
                RowKind::Byte => {
                    let b = parse_byte_piece(&piece)
                        .ok_or_else(|| Error::ModelFile(format!("row {i}: {piece:?} is not a byte row <0xNN>")))?;
                    vec![b]
                }
                RowKind::Special => piece.into_bytes(),
                _ if bytes_spelling => piece
                    .chars()
                    .map(char_to_byte)
                    .collect::<Option<Vec<u8>>>()
                    .ok_or_else(|| Error::ModelFile(format!("row {i}: {piece:?} is not written in the byte alphabet")))?,
                _ => piece.into_bytes(),
            };
            rows.push(Row { text, kind });
        }
        // merges are stored as piece pairs; find their rows (Model::new checks the rest)
        let table = byte_to_char_table();
        let mut by_display: Map<String, u32> = Map::default();
        let mut by_text: Map<&[u8], u32> = Map::default();
        for (id, row) in rows.iter().enumerate() {
            if matches!(row.kind, RowKind::Alphabet | RowKind::Learned) {
                by_display.insert(display_row(file.spelling.scheme, row, &table), id as u32);
                by_text.insert(&row.text, id as u32);
            }
        }
        let strip: &[u8] = if file.spelling.scheme == Scheme::Continuation { file.spelling.mark.as_bytes() } else { b"" };
        let mut merges = Vec::with_capacity(file.merges.len());
        for (rank, (l, r)) in file.merges.iter().enumerate() {
            let a = *by_display.get(l).ok_or_else(|| Error::ModelFile(format!("merge {rank}: {l:?} is not a row")))?;
            let b = *by_display.get(r).ok_or_else(|| Error::ModelFile(format!("merge {rank}: {r:?} is not a row")))?;
            let lt = &rows[a as usize].text;
            let rt = &rows[b as usize].text;
            let rt = if !strip.is_empty() && rt.starts_with(strip) { &rt[strip.len()..] } else { &rt[..] };
            let mut joined = lt.clone();
            joined.extend_from_slice(rt);
            let c = *by_text
                .get(joined.as_slice())
                .ok_or_else(|| Error::ModelFile(format!("merge {rank}: {l:?} + {r:?} joins to a piece with no row")))?;
            merges.push([a, b, c]);
        }
        let mut model = Model::new(file.model, file.spelling, rows, merges, file.stream_merges_from, file.joints, file.options, file.report)?;
        if model.kind == ModelKind::Unigram {
            let lps = file.log_probs.ok_or_else(|| Error::ModelFile("a unigram model file needs log_probs".into()))?;
            let parsed = lps
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    serde_json::Value::Null => Ok(None),
                    serde_json::Value::String(s) if s == "-inf" => Ok(Some(NEG_INF)),
                    serde_json::Value::Number(n) => n.as_f64().map(Some).ok_or(()),
                    _ => Err(()),
                }.map_err(|_| Error::ModelFile(format!("log_probs[{i}]: {v} is not a log-probability"))))
                .collect::<Result<Vec<_>>>()?;
            model.set_log_probs(parsed)?;
        } else if file.log_probs.is_some() {
            return Err(Error::ModelFile("only a unigram model file has log_probs".into()));
        }
        if let Some(t) = file.template {
            let find = |p: &str| {
                model.rows.iter().position(|r| r.kind == RowKind::Special && r.text == p.as_bytes()).map(|i| i as u32).ok_or_else(|| {
                    Error::ModelFile(format!("template: {p:?} is not a special row"))
                })
            };
            model.template = Some((find(&t.cls)?, find(&t.sep)?));
        }
        Ok(model)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Template {
    cls: String,
    sep: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    format: String,
    version: u32,
    model: ModelKind,
    spelling: Spelling,
    stream_merges_from: Option<usize>,
    joints: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    template: Option<Template>,
    options: Option<TrainOptions>,
    report: Option<Report>,
    rows: Vec<(String, RowKind)>,
    merges: Vec<(String, String)>,
    #[serde(default)]
    log_probs: Option<Vec<serde_json::Value>>,
}

/// Scratch for [`Model::viterbi_run`]: per position the best suffix score, its piece count, and
/// the first piece (row, end).
#[derive(Default)]
struct RunViterbi {
    score: Vec<f64>,
    count: Vec<u32>,
    best: Vec<(u32, u32)>,
}

const NONE_COUNT: u32 = u32::MAX;

thread_local! {
    static VITERBI: std::cell::RefCell<RunViterbi> = std::cell::RefCell::new(RunViterbi::default());
}

/// Unigram pieces as paths of symbol ids (node 0 is the root).
struct SymbolTrie {
    /// used while building; the lookups below read `first`/`kids`
    edges: Map<(u32, u32), u32>,
    /// the root's children by symbol id (every lattice position starts there)
    root: Vec<u32>,
    /// node u's children are `kids[first[u]..first[u + 1]]`, (symbol, child) sorted by symbol:
    /// a short scan per step instead of a hash lookup
    first: Vec<u32>,
    kids: Vec<(u32, u32)>,
    /// (row id, log-probability) of the piece a node spells; row `u32::MAX` for none
    piece: Vec<(u32, f64)>,
}

impl SymbolTrie {
    /// Every piece that starts `run` at `i`, shortest first: `f(end, row, log_prob)`.
    #[inline]
    fn pieces_from(&self, run: &[u32], i: usize, mut f: impl FnMut(usize, u32, f64)) {
        let mut u = 0u32;
        for (j, &x) in run.iter().enumerate().skip(i) {
            let next = if u == 0 { self.root.get(x as usize).copied().filter(|&c| c != NO_ID) } else { self.child(u, x) };
            match next {
                Some(c) => u = c,
                None => return,
            }
            let (piece, lp) = self.piece[u as usize];
            if piece != NO_ID {
                f(j + 1, piece, lp);
            }
        }
    }

    #[inline]
    fn child(&self, u: u32, x: u32) -> Option<u32> {
        let kids = &self.kids[self.first[u as usize] as usize..self.first[u as usize + 1] as usize];
        if kids.len() <= 8 {
            kids.iter().find(|k| k.0 == x).map(|k| k.1)
        } else {
            kids.binary_search_by_key(&x, |k| k.0).ok().map(|i| kids[i].1)
        }
    }
}

impl Model {
    /// Gives a Unigram model its log-probabilities (one per row) and builds its lattice trie.
    pub fn set_log_probs(&mut self, log_probs: Vec<Option<f64>>) -> Result<()> {
        let bad = |m: String| Error::ModelFile(m);
        if self.kind != ModelKind::Unigram {
            return Err(bad("only a unigram model has log-probabilities".into()));
        }
        if log_probs.len() != self.rows.len() {
            return Err(bad(format!("{} log-probabilities for {} rows", log_probs.len(), self.rows.len())));
        }
        let mut trie = SymbolTrie { edges: Map::default(), root: Vec::new(), first: Vec::new(), kids: Vec::new(), piece: vec![(NO_ID, 0.0)] };
        for (id, (row, lp)) in self.rows.iter().zip(&log_probs).enumerate() {
            let piece = matches!(row.kind, RowKind::Alphabet | RowKind::Learned);
            match (piece, lp) {
                (false, None) => continue,
                (false, Some(_)) => return Err(bad(format!("row {id}: a {} row has no log-probability", row.kind.name()))),
                (true, None) if row.kind == RowKind::Learned || self.spelling.scheme != Scheme::Bytes => {
                    return Err(bad(format!("row {id}: a piece needs a log-probability")))
                }
                (true, None) => continue, // a byte the corpus never held
                (true, Some(v)) if v.is_nan() || *v > 0.0 => {
                    return Err(bad(format!("row {id}: log-probability {v} is not a number at most 0")))
                }
                (true, Some(v)) => {
                    let v = *v;
                    let syms = self.symbols_of_row(id as u32)?;
                    let mut u = 0u32;
                    for &x in &syms {
                        u = match trie.edges.get(&(u, x)) {
                            Some(&c) => c,
                            None => {
                                let c = trie.piece.len() as u32;
                                trie.piece.push((NO_ID, 0.0));
                                trie.edges.insert((u, x), c);
                                c
                            }
                        };
                    }
                    if trie.piece[u as usize].0 != NO_ID {
                        return Err(bad(format!("row {id}: the same symbols as row {}", trie.piece[u as usize].0)));
                    }
                    trie.piece[u as usize] = (id as u32, v);
                }
            }
        }
        trie.root = vec![NO_ID; self.rows.len()];
        for (&(u, x), &c) in &trie.edges {
            if u == 0 {
                trie.root[x as usize] = c;
            }
        }
        let mut all: Vec<(u32, u32, u32)> = trie.edges.drain().map(|((u, x), c)| (u, x, c)).collect();
        all.sort_unstable();
        trie.first = vec![0; trie.piece.len() + 1];
        for &(u, _, _) in &all {
            trie.first[u as usize + 1] += 1;
        }
        for i in 1..trie.first.len() {
            trie.first[i] += trie.first[i - 1];
        }
        trie.kids = all.into_iter().map(|(_, x, c)| (x, c)).collect();
        self.log_probs = log_probs;
        self.unigram = Some(trie);
        Ok(())
    }

    /// The symbols (alphabet row ids) a piece is made of, by the spelling's rules.
    fn symbols_of_row(&self, id: u32) -> Result<Vec<u32>> {
        let row = &self.rows[id as usize];
        if self.spelling.scheme == Scheme::Bytes {
            return Ok(row.text.iter().map(|&b| b as u32).collect());
        }
        let text = std::str::from_utf8(&row.text).map_err(|_| Error::ModelFile(format!("row {id}: not UTF-8")))?;
        let mark = self.spelling.mark.as_str();
        let (body, marked_first, marked_rest, marked_last) = match self.spelling.scheme {
            Scheme::End => match text.strip_suffix(mark) {
                Some(b) => (b, false, false, true),
                None => (text, false, false, false),
            },
            Scheme::Continuation => match text.strip_prefix(mark) {
                Some(b) => (b, true, true, false),
                None => (text, false, true, false),
            },
            _ => (text, false, false, false),
        };
        let n = body.chars().count();
        let mut out = Vec::with_capacity(n);
        for (k, c) in body.chars().enumerate() {
            let marked = if k == 0 { marked_first } else { marked_rest } || (marked_last && k + 1 == n);
            let x = self.char_id(c, marked);
            if x == NO_ID || self.rows[x as usize].kind != RowKind::Alphabet {
                return Err(Error::ModelFile(format!("row {id}: {text:?} is not made of the alphabet's symbols")));
            }
            out.push(x);
        }
        if out.is_empty() {
            return Err(Error::ModelFile(format!("row {id}: an empty piece")));
        }
        Ok(out)
    }

    fn has_prob(&self, sym: u32) -> bool {
        self.log_probs.get(sym as usize).is_some_and(|p| p.is_some())
    }

    /// The lattice of a run of symbols (every one with a probability), arcs in arc order.
    fn run_lattice(&self, run: &[u32], lat: &mut Lattice) {
        let trie = self.unigram.as_ref().unwrap();
        lat.reset(run.len());
        for i in 0..run.len() {
            trie.pieces_from(run, i, |end, piece, lp| lat.push(i as u32, end as u32, piece, lp));
        }
        lat.finish();
    }

    /// [`Lattice::viterbi_with`]'s recurrence (backward: the best spelling of each suffix, ties
    /// to fewer pieces, then the longer first piece) with the arcs read from the trie as they
    /// are needed, so no lattice is stored. Arcs from one start come end ascending, as the
    /// lattice holds them, so every tie resolves the same way.
    fn viterbi_run(&self, run: &[u32], v: &mut RunViterbi) {
        let trie = self.unigram.as_ref().unwrap();
        let n = run.len();
        v.score.clear();
        v.score.resize(n + 1, NEG_INF);
        v.count.clear();
        v.count.resize(n + 1, NONE_COUNT);
        v.best.clear();
        v.best.resize(n + 1, (NO_ID, 0));
        v.score[n] = 0.0;
        v.count[n] = 0;
        for i in (0..n).rev() {
            let (mut bs, mut bc, mut bp, mut be) = (NEG_INF, NONE_COUNT, NO_ID, 0u32);
            trie.pieces_from(run, i, |end, piece, lp| {
                if v.count[end] == NONE_COUNT {
                    return;
                }
                let sc = lp + v.score[end];
                let cnt = v.count[end] + 1;
                // a later arc is longer, so on equal score and count it wins
                if bc == NONE_COUNT || sc > bs || (sc == bs && cnt <= bc) {
                    (bs, bc, bp, be) = (sc, cnt, piece, end as u32);
                }
            });
            v.score[i] = bs;
            v.count[i] = bc;
            v.best[i] = (bp, be);
        }
    }

    /// Cuts a spelled unit: runs of symbols with probabilities go through the lattice (by the
    /// mode's segmenter), everything else stays as it is.
    fn cut_lattice(
        &self,
        syms: &[u32],
        sym_spans: Option<&Vec<(u32, u32)>>,
        piece_spans: &mut Vec<(u32, u32)>,
        opaque: &[usize],
        out: &mut Vec<u32>,
        mode: &mut Mode,
    ) {
        thread_local! {
            static LATTICE: std::cell::RefCell<Lattice> = std::cell::RefCell::new(Lattice::default());
        }
        LATTICE.with(|cell| match cell.try_borrow_mut() {
            Ok(mut lat) => self.cut_lattice_with(&mut lat, syms, sym_spans, piece_spans, opaque, out, mode),
            Err(_) => self.cut_lattice_with(&mut Lattice::default(), syms, sym_spans, piece_spans, opaque, out, mode),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn cut_lattice_with(
        &self,
        lat: &mut Lattice,
        syms: &[u32],
        sym_spans: Option<&Vec<(u32, u32)>>,
        piece_spans: &mut Vec<(u32, u32)>,
        opaque: &[usize],
        out: &mut Vec<u32>,
        mode: &mut Mode,
    ) {
        let mut i = 0;
        let mut k = 0;
        while i < syms.len() {
            let cut = |j: usize, k: &mut usize| {
                while *k < opaque.len() && opaque[*k] < j {
                    *k += 1;
                }
                (*k < opaque.len() && opaque[*k] == j) || !self.has_prob(syms[j])
            };
            if cut(i, &mut k) {
                out.push(syms[i]);
                if let Some(sp) = sym_spans {
                    piece_spans.push(sp[i]);
                }
                i += 1;
                continue;
            }
            let mut j = i + 1;
            let mut k2 = k;
            while j < syms.len() && !cut(j, &mut k2) {
                j += 1;
            }
            let run = &syms[i..j];
            if matches!(mode, Mode::Plain | Mode::Dropout(..)) {
                // Viterbi straight from the trie, without storing the lattice
                VITERBI.with(|v| {
                    let v = &mut *v.borrow_mut();
                    self.viterbi_run(run, v);
                    let mut at = 0usize;
                    if v.count[0] != NONE_COUNT {
                        while at < run.len() {
                            let (piece, end) = v.best[at];
                            out.push(piece);
                            if let Some(sp) = sym_spans {
                                piece_spans.push((sp[i + at].0, sp[i + end as usize - 1].1));
                            }
                            at = end as usize;
                        }
                    }
                });
                i = j;
                continue;
            }
            self.run_lattice(run, lat);
            let arcs: Vec<u32> = match mode {
                Mode::Fewest => lat.fewest().unwrap_or_default(),
                Mode::Sample { alpha, nbest: None, rng } => lat.sample(*alpha, rng).unwrap_or_default(),
                Mode::Sample { alpha, nbest: Some(n), rng } => lat.sample_nbest(*alpha, *n, rng).map(|s| s.arcs).unwrap_or_default(),
                _ => lat.viterbi().map(|s| s.arcs).unwrap_or_default(),
            };
            for &a in &arcs {
                let arc = lat.arcs()[a as usize];
                out.push(arc.piece);
                if let Some(sp) = sym_spans {
                    piece_spans.push((sp[i + arc.start as usize].0, sp[i + arc.end as usize - 1].1));
                }
            }
            i = j;
        }
    }

    /// The lattice of a text that spells to exactly one unit whose every symbol has a
    /// probability (the analysis methods' input).
    pub fn unit_lattice(&self, text: &str) -> Result<Lattice> {
        if self.unigram.is_none() {
            return Err(Error::Option("lattices belong to unigram models".into()));
        }
        let mut units: Vec<String> = Vec::new();
        self.spelling.for_each_unit(text, |u, _| units.push(u.to_string()));
        if units.len() != 1 {
            return Err(Error::Option(format!("{text:?} spells to {} units; give the text of exactly one unit", units.len())));
        }
        self.check_unit(&units[0])?;
        let (mut syms, mut opaque) = (Vec::new(), Vec::new());
        self.spell(&units[0], true, true, &mut syms, None, &mut opaque);
        if !opaque.is_empty() || syms.iter().any(|&x| !self.has_prob(x)) {
            return Err(Error::Option(format!("{text:?} holds a symbol with no probability in this model")));
        }
        let mut lat = Lattice::default();
        self.run_lattice(&syms, &mut lat);
        Ok(lat)
    }

    /// Every spelling of the `k` best (`usize::MAX`: all) with its score.
    pub fn nbest_of(&self, text: &str, k: usize) -> Result<Vec<(Vec<u32>, f64)>> {
        let lat = self.unit_lattice(text)?;
        Ok(lat.nbest(k).into_iter().map(|s| (s.arcs.iter().map(|&a| lat.arcs()[a as usize].piece).collect(), s.score)).collect())
    }

    /// Every spelling with its share of the unit's probability (docs/API.md: the fold of the
    /// listed scores in list order).
    pub fn spellings_of(&self, text: &str) -> Result<Vec<(Vec<u32>, f64)>> {
        let all = self.nbest_of(text, usize::MAX)?;
        let z = all.iter().fold(NEG_INF, |z, (_, s)| logaddexp(z, *s));
        Ok(all.into_iter().map(|(p, s)| (p, if s == NEG_INF { 0.0 } else { (s - z).exp() })).collect())
    }

    /// One spelling of a unit drawn with a fresh generator seeded with `seed`.
    pub fn sample_of(&self, text: &str, seed: u64, alpha: f64, nbest: Option<usize>) -> Result<Vec<u32>> {
        let lat = self.unit_lattice(text)?;
        let mut rng = SplitMix64::new(seed);
        let arcs = match nbest {
            None => lat.sample(alpha, &mut rng).unwrap_or_default(),
            Some(k) => lat.sample_nbest(alpha, k, &mut rng).map(|s| s.arcs).unwrap_or_default(),
        };
        Ok(arcs.iter().map(|&a| lat.arcs()[a as usize].piece).collect())
    }

    /// The pruning losses of the learned rows on a corpus of (text, count), in row order.
    pub fn losses(&self, corpus: &[(String, u64)]) -> Result<Vec<f64>> {
        if self.unigram.is_none() {
            return Err(Error::Option("losses belong to unigram models".into()));
        }
        let base = self.rows.iter().position(|r| r.kind == RowKind::Alphabet).unwrap_or(0) as u32;
        let alphabet_end = base + self.rows.iter().filter(|r| r.kind == RowKind::Alphabet).count() as u32;
        let mut counts: Map<String, u64> = Map::default();
        for (text, c) in corpus {
            let mut err = Ok(());
            self.spelling.for_each_unit(text, |u, _| {
                if err.is_ok() {
                    err = self.check_unit(u);
                }
                *counts.entry(u.to_string()).or_insert(0) += c;
            });
            err?;
        }
        let mut keys: Vec<&String> = counts.keys().collect();
        keys.sort();
        let mut flat = crate::learners::merge::Flat::default();
        let (mut syms, mut opaque) = (Vec::new(), Vec::new());
        for k in keys {
            syms.clear();
            opaque.clear();
            self.spell(k, true, true, &mut syms, None, &mut opaque);
            let local: Vec<u32> = syms
                .iter()
                .enumerate()
                .map(|(i, &x)| if opaque.contains(&i) || x < base || x >= alphabet_end { u32::MAX } else { x - base })
                .collect();
            flat.push(&local, counts[k]);
        }
        let texts: Vec<Vec<u8>> = (base..alphabet_end).map(|i| self.rows[i as usize].text.clone()).collect();
        let alphabet: Vec<Option<f64>> = (base..alphabet_end).map(|i| self.log_probs[i as usize]).collect();
        let mut pieces = Vec::new();
        for (id, row) in self.rows.iter().enumerate() {
            if row.kind == RowKind::Learned {
                let s: Vec<u32> = self.symbols_of_row(id as u32)?.into_iter().map(|x| x - base).collect();
                pieces.push((s, self.log_probs[id].unwrap_or(NEG_INF)));
            }
        }
        crate::learners::unigram::losses_on(&flat, &texts, &alphabet, &pieces)
    }
}

/// A batch share whose cache slot is busy (another call is using it): a private cache.
fn local_fallback(out: &mut [Result<Vec<u32>>], texts: &[&str], model: &Model) {
    let mut cache = Cache::default();
    for (o, t) in out.iter_mut().zip(texts) {
        *o = model.encode_with_cache(t, &mut cache);
    }
}

/// A row as the pages print it (see [`Model::display`]).
fn display_row(scheme: Scheme, row: &Row, byte_chars: &[char; 256]) -> String {
    match row.kind {
        RowKind::Byte => format!("<0x{:02X}>", row.text[0]),
        RowKind::Special => String::from_utf8_lossy(&row.text).into_owned(),
        _ if scheme == Scheme::Bytes => row.text.iter().map(|&b| byte_chars[b as usize]).collect(),
        _ => String::from_utf8_lossy(&row.text).into_owned(),
    }
}

fn replace_all(text: &[u8], from: &[u8], to: &[u8], out: &mut Vec<u8>) {
    if from.is_empty() {
        out.extend_from_slice(text);
        return;
    }
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
}

/// For each byte position of `unit` (0..=len), the byte position of `text` it corresponds to.
/// For every spelling but `front` the unit is a slice of the text at `start`. For `front` the
/// unit's marks stand for whitespace runs (or nothing, at the very front) and literal marks.
fn unit_to_text_positions(scheme: Scheme, unit: &str, text: &str, start: usize, mark: char) -> Vec<usize> {
    if scheme != Scheme::Front {
        return (0..=unit.len()).map(|i| start + i).collect();
    }
    let mut map = vec![start; unit.len() + 1];
    let mut t = start;
    let tb = text.as_bytes();
    for (i, c) in unit.char_indices() {
        map[i] = t;
        if c == mark {
            let here = text[t..].chars().next();
            if here == Some(mark) {
                t += mark.len_utf8();
            } else if here.is_some_and(char::is_whitespace) {
                while t < tb.len() {
                    let d = text[t..].chars().next().unwrap();
                    if !d.is_whitespace() {
                        break;
                    }
                    t += d.len_utf8();
                }
            }
            // else: the mark put in front of the text stands for nothing
        } else {
            // skip to the character (marks never skip non-whitespace text)
            t += c.len_utf8();
        }
        let _ = i;
    }
    map[unit.len()] = t;
    // spans are [map[a], map[b]); a mark standing for nothing has an empty span
    map
}

/// Merge replay on the runs between opaque pieces (which stay as they are).
fn replay_around(
    syms: &mut Vec<u32>,
    spans: Option<&mut Vec<(u32, u32)>>,
    opaque: &[usize],
    merges: &MergeMap,
    mut dropout: Option<(f64, &mut SmallRng)>,
) -> Vec<usize> {
    let mut out = Vec::with_capacity(syms.len());
    let mut out_spans = Vec::new();
    let mut kept = Vec::with_capacity(opaque.len());
    let mut k = 0;
    let mut i = 0;
    while i <= syms.len() {
        let end = if k < opaque.len() { opaque[k] } else { syms.len() };
        let mut run = syms[i..end].to_vec();
        let mut run_sp = spans.as_deref().map(|sp| sp[i..end].to_vec());
        let d = dropout.as_mut().map(|(p, r)| (*p, &mut **r));
        replay(&mut run, run_sp.as_mut(), merges, d);
        out.extend_from_slice(&run);
        if let Some(rs) = run_sp {
            out_spans.extend(rs);
        }
        if end < syms.len() {
            kept.push(out.len());
            out.push(syms[end]);
            if let Some(sp) = spans.as_deref() {
                out_spans.push(sp[end]);
            }
        }
        i = end + 1;
        k += 1;
    }
    *syms = out;
    if let Some(sp) = spans {
        *sp = out_spans;
    }
    kept
}

thread_local! {
    /// Two-stage models: where, in the text's pieces so far, the pieces standing for unknown
    /// symbols are, so that the stream merges leave them alone as the unit merges do.
    static STREAM_OPAQUE: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}
