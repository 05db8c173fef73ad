//! SuperBPE (Liu et al. 2025, arXiv 2503.13423) on the streaming engine.
//!
//! Stage one is ordinary byte-level BPE on the units of the stage-one pre-split (`pattern`), up
//! to `superword_at` rows (the transition size *t*). Stage two lifts the whitespace split: it
//! learns on *spans*, the pieces of a coarser pre-split (`superword_pattern`; `superbpe` names
//! the paper's stage-two expression), which keep spaces inside them. The spans are counted in
//! the same streaming pass as the units ([`crate::counting::UnitCounter`]), so stage two reads a
//! table of distinct spans and their counts, never the texts again: memory grows with the
//! distinct spans.
//!
//! Each span is spelled in bytes and the stage-one merges are applied to the whole span in rank
//! order, exactly as the finished model encodes a span; stage two's merges are learned on those
//! sequences by the one merge engine, each pair limited to pieces of at most `superword_words`
//! words ([`WordLimit`]). The finished model is ordinary byte-level BPE whose pre-split is the
//! span expression: every merge applies inside a span, in rank order, which `tokenizers`' BPE
//! does too, so the model exports to `tokenizer.json` as it is.

pub mod boundless;
pub mod spans;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::hash::Map;
use crate::options::{compile_pattern, ModelKind, TrainOptions};
use crate::segmenters::merge_replay::MergeMap;
use crate::spelling::pattern::Pattern;
use crate::spelling::{PreSplit, Scheme, Spelling};

use super::merge::{Flat, PairRule, Symbols, NO_SYMBOL};
use super::StageTwoTexts;

/// The paper's stage-two pre-split: runs of up to three digits, runs of two or more
/// punctuation characters (with an optional space before and newlines or slashes after), and
/// spaces not followed by text stand alone; everything between them, spaces included, is one
/// span.
pub const SUPERBPE_SPANS: &str = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)";

/// The name `superword_pattern` takes for [`SUPERBPE_SPANS`].
pub const SUPERBPE_NAME: &str = "superbpe";

/// The most words a superword may span unless `superword_words` says otherwise (the paper's).
pub const DEFAULT_WORDS: u32 = 4;

/// The largest `superword_words` accepted.
pub const MAX_WORDS: u32 = 64;

/// The bytes alphabet: every byte is a row.
const BYTE_ROWS: u64 = 256;

/// The span expression of a `superword_pattern` option.
pub fn span_pattern(p: &str) -> Result<Pattern> {
    if p == SUPERBPE_NAME {
        return Pattern::new(SUPERBPE_SPANS);
    }
    compile_pattern(p)
}

/// Whether these options ask for SuperBPE (a span pre-split for stage two).
pub fn is_superbpe(opts: &TrainOptions) -> bool {
    opts.superword_pattern.is_some()
}

/// The most words a superword may span under these options.
pub fn words_limit(opts: &TrainOptions) -> u32 {
    opts.superword_words.unwrap_or(DEFAULT_WORDS)
}

/// The spelling that cuts texts into spans: the training's, with the span expression as its
/// pre-split. None unless the options ask for SuperBPE.
pub fn span_spelling(opts: &TrainOptions) -> Result<Option<Spelling>> {
    let Some(p) = opts.superword_pattern.as_deref() else { return Ok(None) };
    spans_of(&opts.spelling()?, p).map(Some)
}

/// The spelling that cuts texts into spans for `superword_pattern` `p`: `spelling` (the units'),
/// with the span expression as its pre-split.
pub fn spans_of(spelling: &Spelling, p: &str) -> Result<Spelling> {
    let mut s = spelling.clone();
    s.pattern = Some(span_pattern(p)?);
    s.pre_split = None;
    s.split_digits = None;
    Ok(s)
}

/// Refuses SuperBPE options that cannot work, before any input is read: each error names the
/// option and the range that works.
pub fn validate(opts: &TrainOptions) -> Result<()> {
    if opts.superword_pattern.is_none() {
        if opts.superword_words.is_some() {
            return Err(Error::Option(format!(
                "superword_words limits SuperBPE's stage two: give it with superword_pattern \
                 (e.g. superword_pattern={SUPERBPE_NAME:?}, or preset='superbpe')"
            )));
        }
        return Ok(());
    }
    if opts.model != ModelKind::Bpe {
        return Err(Error::Option("superword_pattern applies to model='bpe' only".into()));
    }
    if opts.spelling != Scheme::Bytes {
        return Err(Error::Option(format!(
            "superword_pattern needs spelling='bytes': the {} spelling cannot carry a space inside a \
             piece the way tokenizer.json's byte-level BPE does; train with spelling='bytes' \
             (preset='superbpe' sets it)",
            format!("{:?}", opts.spelling).to_lowercase()
        )));
    }
    if opts.joints {
        return Err(Error::Option(
            "superword_pattern does not take pre-split joints: stage two's spans are cut by the span \
             pre-split alone"
                .into(),
        ));
    }
    let Some(t) = opts.superword_at else {
        return Err(Error::Option(
            "superword_pattern needs superword_at, the transition size t where stage one stops \
             (preset='superbpe' sets it to 80% of vocab_size)"
                .into(),
        ));
    };
    let lead = opts.leading_rows().len() as u64;
    let low = BYTE_ROWS + lead + 1;
    if t < low || t > opts.vocab_size {
        return Err(Error::Option(format!(
            "superword_at={t} is outside the range that works, {low}..={}: stage one must learn at \
             least one row past the alphabet ({BYTE_ROWS} bytes{}) and stops at vocab_size at the latest",
            opts.vocab_size,
            if lead > 0 { format!(" and {lead} special rows") } else { String::new() }
        )));
    }
    let words = words_limit(opts);
    if !(2..=MAX_WORDS).contains(&words) {
        return Err(Error::Option(format!(
            "superword_words={words} is outside the range that works, 2..={MAX_WORDS}: a span limit \
             below 2 keeps every piece inside one word, which the stage-one pre-split already does"
        )));
    }
    let span = opts.superword_pattern.as_deref().unwrap_or_default();
    span_pattern(span).map_err(|e| match e {
        Error::Option(m) => Error::Option(format!("superword_pattern: {m}")),
        e => e,
    })?;
    let stage_one = opts.pattern.as_deref().or(match opts.pre_split {
        Some(PreSplit::Gpt2) => Some("gpt2"),
        Some(PreSplit::Bert) => Some("bert"),
        None => None,
    });
    match stage_one {
        None => Err(Error::Option(
            "superword_pattern needs a stage-one pre-split (pre_split=, e.g. 'o200k', the superbpe \
             preset's): without one stage one's units are not cut at spaces, and the spans would be \
             no coarser than they are"
                .into(),
        )),
        Some(p) if p == span || (span == SUPERBPE_NAME && p == SUPERBPE_SPANS) => {
            Err(Error::Option(format!(
                "superword_pattern {span:?} is the stage-one pre-split itself: the spans would be the \
                 units and no superword could form; give a coarser span expression (e.g. {SUPERBPE_NAME:?})"
            )))
        }
        Some(_) => Ok(()),
    }
}

/// Gives the allocator's free pages back to the system (glibc's `malloc_trim`; elsewhere
/// nothing). Stage two's spelling frees millions of small blocks (the spans' texts, the chunk
/// cache) in the middle of the heap, where glibc keeps them resident, and the merge engine's
/// large arrays are mapped apart from them: trimmed, those pages leave the run's peak.
pub fn give_back_free_memory() {
    keep_large_blocks_apart();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes no pointer and only releases pages no allocation holds
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Fixes the size from which glibc maps a block on its own at its default, 128 KiB, once per
/// process; elsewhere nothing. Left to itself glibc raises that size up to 32 MB each time a
/// mapped block is freed, and the superword trainings free large arrays between their phases:
/// the next ones, up to 32 MB each, then grow in the heap, copied as they double, and stay
/// resident after they are freed (100 MB mixed, 32k: SuperBPE's peak 211 -> 192 MB, stage two's
/// spelling 210 -> 146 MB).
pub fn keep_large_blocks_apart() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            extern "C" {
                fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
            }
            // glibc's M_MMAP_THRESHOLD
            const MMAP_THRESHOLD: std::ffi::c_int = -3;
            // SAFETY: mallopt takes two integers and changes only the allocator's settings
            unsafe {
                mallopt(MMAP_THRESHOLD, 128 << 10);
            }
        });
    }
}

/// Superword BPE's limit on a piece: at most `max` words, a word being a run of bytes that are
/// not ASCII whitespace. A pair passes when its joined text has at most `max` such runs.
pub struct WordLimit;

impl WordLimit {
    /// The runs of non-space bytes in `t`, and whether `t` starts and ends with one.
    fn runs(t: &[u8]) -> (u32, bool, bool) {
        let mut n = 0u32;
        let mut prev_space = true;
        for &b in t {
            let space = b.is_ascii_whitespace();
            if !space && prev_space {
                n += 1;
            }
            prev_space = space;
        }
        let first = t.first().is_some_and(|b| !b.is_ascii_whitespace());
        let last = t.last().is_some_and(|b| !b.is_ascii_whitespace());
        (n, first, last)
    }

    /// The words of `a` and `b` written together.
    pub fn joined_words(a: &[u8], b: &[u8]) -> u32 {
        let (na, _, a_last) = Self::runs(a);
        let (nb, b_first, _) = Self::runs(b);
        na + nb - u32::from(a_last && b_first)
    }

    /// The rule for the merge engine.
    pub fn rule(max: u32) -> PairRule {
        Arc::new(move |a: &[u8], b: &[u8]| Self::joined_words(a, b) <= max)
    }
}

/// Adds the spans of `text` (one text, already cut at special tokens) to `table`.
pub fn count_spans(spelling: &Spelling, text: &str, table: &mut SpanCounts) {
    keep_large_blocks_apart();
    spelling.for_each_unit(text, |span, _| {
        table.add(span, 1);
    });
}

/// A counter's table of distinct spans: their texts one after another in one buffer, each
/// span's end and count beside them, and a hash table of span numbers (4 bytes a span) to find
/// a span by its text. A map from a `Box<str>` per span took about 97 bytes a span beside its
/// text, the span tables of two counting threads 140 MB of a 100 MB corpus's run; here 16
/// bytes a span and the text.
#[derive(Default, Clone)]
pub struct SpanCounts {
    texts: Vec<u8>,
    ends: Vec<u64>,
    counts: Vec<u64>,
    index: hashbrown::HashTable<u32>,
    hasher: crate::hash::BuildHasher,
}

/// Entry `i`'s text in `texts` as `ends` delimits it (spans' ends are `u64`, the piece
/// dictionary's `u32`).
#[inline]
fn text_of<'t, E: Copy + Into<u64>>(texts: &'t [u8], ends: &[E], i: u32) -> &'t [u8] {
    let i = i as usize;
    let start = if i == 0 { 0 } else { ends[i - 1].into() as usize };
    &texts[start..ends[i].into() as usize]
}

impl SpanCounts {
    /// The number of distinct spans.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Adds `n` to the count of `span`; returns whether the count overflowed (it is then left
    /// at the largest count).
    pub fn add(&mut self, span: &str, n: u64) -> bool {
        let SpanCounts { texts, ends, counts, index, hasher } = self;
        let t = span.as_bytes();
        let h = std::hash::BuildHasher::hash_one(&*hasher, t);
        if let Some(&i) = index.find(h, |&i| text_of(texts, ends, i) == t) {
            let c = &mut counts[i as usize];
            let (v, over) = c.overflowing_add(n);
            *c = if over { u64::MAX } else { v };
            return over;
        }
        let i = u32::try_from(ends.len()).expect("fewer than 2^32 distinct spans");
        texts.extend_from_slice(t);
        ends.push(texts.len() as u64);
        counts.push(n);
        index.insert_unique(h, i, |&j| {
            std::hash::BuildHasher::hash_one(&*hasher, text_of(texts, ends, j))
        });
        false
    }

    /// Calls `f` with every span and its count.
    pub fn each(&self, mut f: impl FnMut(&str, u64)) {
        for i in 0..self.ends.len() {
            let t = text_of(&self.texts, &self.ends, i as u32);
            // (the texts are whole `&str`s written one after another)
            f(std::str::from_utf8(t).expect("a span is UTF-8"), self.counts[i]);
        }
    }

    /// The counting threads' tables added up: the largest keeps its buffer and the others'
    /// spans are added into it, each table's hash table freed first and its spans taken from
    /// its end, its buffers cut down as they go (no table is copied whole, and an added table's
    /// spans are not held twice).
    pub fn sum(mut tables: Vec<SpanCounts>) -> SpanCounts {
        let big = (0..tables.len()).max_by_key(|&i| tables[i].len()).unwrap_or(0);
        if tables.is_empty() {
            return SpanCounts::default();
        }
        let mut total = tables.swap_remove(big);
        for t in tables {
            let SpanCounts { mut texts, mut ends, mut counts, index, .. } = t;
            drop(index);
            give_back_free_memory();
            let mut mark = ends.len();
            while let Some(i) = ends.len().checked_sub(1) {
                let s = text_of(&texts, &ends, i as u32);
                total.add(std::str::from_utf8(s).expect("a span is UTF-8"), counts[i]);
                let start = if i == 0 { 0 } else { ends[i - 1] as usize };
                texts.truncate(start);
                ends.truncate(i);
                counts.truncate(i);
                // an eighth added: the buffers shrink to what is left
                if i + i / 8 < mark {
                    texts.shrink_to_fit();
                    ends.shrink_to_fit();
                    counts.shrink_to_fit();
                    mark = i;
                }
            }
            drop((texts, ends, counts));
            give_back_free_memory();
        }
        total
    }
}

/// A table of distinct spans and their counts, as the counter sums them; stage two reads it in
/// any order (the merge engine's result does not depend on the order of its units).
///
/// Spans counted from text are kept as words: each span is cut before every whitespace byte
/// that follows one that is not, each distinct piece (a word and the spaces before it) is
/// written once in a dictionary, and a span is its count, its number of pieces and the pieces'
/// numbers, 7 bits a byte, in blocks of about 4 MB (the spans' texts one after another took 62
/// MB of a 100 MB corpus's SuperBPE stage one; as words, its peak is 20 MB lower). A count
/// table's spans come as pairs.
#[derive(Default)]
pub struct SpanTable {
    /// Spans given as (text, count) pairs.
    pub spans: Vec<(String, u64)>,
    /// The pieces' texts one after another, and where each ends.
    words: Vec<u8>,
    word_ends: Vec<u32>,
    /// The other spans, each its count, its number of pieces and each piece's number plus one
    /// (0: a piece written out, its length then its bytes, once the dictionary is full).
    blocks: Vec<Vec<u8>>,
    counted: usize,
}

/// A block of span records is closed past this many bytes.
const BLOCK: usize = 4 << 20;

/// Appends `v` 7 bits a byte, low bits first, the high bit set on every byte but the last.
fn put_number(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The number [`put_number`] wrote from `*at`, and `*at` moved past it.
fn number_at(b: &[u8], at: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let x = b[*at];
        *at += 1;
        v |= ((x & 0x7F) as u64) << shift;
        if x < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Calls `f` with the pieces of span `s`: it is cut before each ASCII whitespace byte that
/// follows a byte that is not (ASCII bytes are character boundaries: each piece is UTF-8).
fn each_piece(s: &[u8], mut f: impl FnMut(&[u8])) {
    let mut start = 0;
    for i in 1..s.len() {
        if s[i].is_ascii_whitespace() && !s[i - 1].is_ascii_whitespace() {
            f(&s[start..i]);
            start = i;
        }
    }
    if start < s.len() {
        f(&s[start..]);
    }
}

/// The dictionary of pieces while spans are written: found by a hash table of piece numbers.
struct Words {
    words: Vec<u8>,
    ends: Vec<u32>,
    index: hashbrown::HashTable<u32>,
    hasher: crate::hash::BuildHasher,
    /// The most bytes of text the dictionary holds (its ends are `u32`).
    room: usize,
}

impl Words {
    /// Writes the code of `piece` to `out`, adding it to the dictionary if it is new.
    fn code(&mut self, piece: &[u8], out: &mut Vec<u8>) {
        let Words { words, ends, index, hasher, room } = self;
        let h = std::hash::BuildHasher::hash_one(&*hasher, piece);
        if let Some(&i) = index.find(h, |&i| text_of(words, ends, i) == piece) {
            put_number(out, i as u64 + 1);
            return;
        }
        if words.len() + piece.len() > *room || ends.len() >= u32::MAX as usize - 1 {
            put_number(out, 0);
            put_number(out, piece.len() as u64);
            out.extend_from_slice(piece);
            return;
        }
        let i = ends.len() as u32;
        words.extend_from_slice(piece);
        ends.push(words.len() as u32);
        index.insert_unique(h, i, |&j| {
            std::hash::BuildHasher::hash_one(&*hasher, text_of(words, ends, j))
        });
        put_number(out, i as u64 + 1);
    }
}

impl SpanTable {
    /// Spans given as (text, count) pairs (a count table's).
    pub fn from_pairs(spans: Vec<(String, u64)>) -> Self {
        SpanTable { spans, ..Default::default() }
    }

    /// The spans of a counter's table, written as words: the table is read from its end and
    /// cut down as it goes (its hash table freed first), so the two are not held whole at once.
    pub fn from_counts(counts: SpanCounts) -> Self {
        Self::from_counts_within(counts, u32::MAX as usize)
    }

    /// [`SpanTable::from_counts`] with a dictionary of at most `room` bytes of text.
    fn from_counts_within(counts: SpanCounts, room: usize) -> Self {
        let SpanCounts { mut texts, mut ends, counts: mut c, index, hasher } = counts;
        drop(index);
        let counted = ends.len();
        let mut w =
            Words { words: Vec::new(), ends: Vec::new(), index: Default::default(), hasher, room };
        let (mut blocks, mut block) = (Vec::new(), Vec::new());
        let mut mark = counted;
        while let Some(i) = ends.len().checked_sub(1) {
            let start = if i == 0 { 0 } else { ends[i - 1] as usize };
            let s = &texts[start..];
            put_number(&mut block, c[i]);
            let mut n = 0u64;
            each_piece(s, |_| n += 1);
            put_number(&mut block, n);
            each_piece(s, |p| w.code(p, &mut block));
            texts.truncate(start);
            ends.truncate(i);
            c.truncate(i);
            if block.len() >= BLOCK {
                block.shrink_to_fit();
                blocks.push(std::mem::take(&mut block));
            }
            // an eighth written: the buffers shrink to what is left
            if i + i / 8 < mark {
                texts.shrink_to_fit();
                ends.shrink_to_fit();
                c.shrink_to_fit();
                mark = i;
            }
        }
        if !block.is_empty() {
            block.shrink_to_fit();
            blocks.push(block);
        }
        drop((texts, ends, c, w.index));
        w.words.shrink_to_fit();
        w.ends.shrink_to_fit();
        SpanTable { spans: Vec::new(), words: w.words, word_ends: w.ends, blocks, counted }
    }

    /// Every span with its count, as pairs.
    pub fn into_pairs(mut self) -> Vec<(String, u64)> {
        let mut out = std::mem::take(&mut self.spans);
        out.reserve(self.counted);
        self.each_counted(|s, c| out.push((s.to_string(), c)));
        out
    }

    /// The number of distinct spans.
    pub fn len(&self) -> usize {
        self.spans.len() + self.counted
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with each span of `block` (its text written into `buf`) and its count.
    fn each_in(&self, block: &[u8], buf: &mut Vec<u8>, f: &mut dyn FnMut(&str, u64)) {
        let mut at = 0;
        while at < block.len() {
            let c = number_at(block, &mut at);
            let n = number_at(block, &mut at);
            buf.clear();
            for _ in 0..n {
                match number_at(block, &mut at) {
                    0 => {
                        let len = number_at(block, &mut at) as usize;
                        buf.extend_from_slice(&block[at..at + len]);
                        at += len;
                    }
                    i => buf.extend_from_slice(text_of(&self.words, &self.word_ends, i as u32 - 1)),
                }
            }
            // (pieces of UTF-8 text cut at ASCII bytes)
            f(std::str::from_utf8(buf).expect("a span is UTF-8"), c);
        }
    }

    fn each_counted(&self, mut f: impl FnMut(&str, u64)) {
        let mut buf = Vec::new();
        for b in &self.blocks {
            self.each_in(b, &mut buf, &mut f);
        }
    }

    fn each(&self, mut f: impl FnMut(&str, u64)) {
        for (s, c) in &self.spans {
            f(s, *c);
        }
        self.each_counted(f);
    }
}

impl StageTwoTexts for SpanTable {
    fn each_text(&mut self, f: &mut dyn FnMut(&str)) -> Result<()> {
        self.each(|s, c| {
            for _ in 0..c {
                f(s);
            }
        });
        Ok(())
    }
    fn held_bytes(&self) -> u64 {
        self.spans.iter().map(|(s, _)| s.len() as u64 + 8).sum::<u64>()
            + self.words.len() as u64
            + 4 * self.word_ends.len() as u64
            + self.blocks.iter().map(|b| b.len() as u64).sum::<u64>()
    }
    /// Hands each span over once and frees the table as it goes, so stage two's spelled spans
    /// replace it in memory instead of adding to it: each block of spans is freed once read.
    fn each_span(&mut self, f: &mut dyn FnMut(&str, u64)) -> Result<()> {
        for (s, c) in std::mem::take(&mut self.spans) {
            f(&s, c);
        }
        let blocks = std::mem::take(&mut self.blocks);
        self.counted = 0;
        let mut buf = Vec::new();
        for b in blocks {
            self.each_in(&b, &mut buf, f);
        }
        self.words = Vec::new();
        self.word_ends = Vec::new();
        Ok(())
    }
}

/// The most chunks stage two's replay cache holds before it starts afresh.
const CACHE_CHUNKS: usize = 1 << 18;

/// Stage two's input: each distinct span spelled in bytes, the stage-one merges applied to the
/// whole span in rank order (as the finished model encodes it), with the span's count.
///
/// A span is replayed in chunks, each looked up in a cache: it is cut between two bytes that no
/// stage-one row holds side by side. No merge can join across such a cut (its result would be a
/// row holding those two bytes), and rank-order replay on pieces that never join gives what it
/// gives on the whole, so the result is exact. With o200k's units every space after a letter is
/// a cut, so the chunks are about the units and the cache about the distinct units.
pub fn stage_two_spans(
    symbols: &Symbols,
    stage_one: &[[u32; 3]],
    spans: Option<Box<dyn StageTwoTexts>>,
    replay: impl Fn(&mut Vec<u32>, &MergeMap),
) -> Result<Flat> {
    let Some(mut spans) = spans else {
        return Err(Error::Input(
            "SuperBPE's stage two has no span table: train it from the text (the spans are \
             counted in the same pass as the units)"
                .into(),
        ));
    };
    let mut map: MergeMap = Map::default();
    for (r, m) in stage_one.iter().enumerate() {
        map.insert(crate::hash::pack(m[0], m[1]), (r as u32, m[2]));
    }
    let mut joined = vec![false; 1 << 16];
    for t in &symbols.texts {
        for w in t.windows(2) {
            joined[(w[0] as usize) << 8 | w[1] as usize] = true;
        }
    }
    let byte: Vec<u32> =
        (0..=255u8).map(|b| symbols.index.get(&[b][..]).copied().unwrap_or(NO_SYMBOL)).collect();
    // the cache: each distinct chunk's symbols in one array, found by the chunk's bytes (packed
    // in a `u128` up to 15 bytes, the most of them, else by their text) as `start << 24 | len`;
    // a `Box` key and a `Box` value per chunk were two small blocks each
    let mut short: Map<u128, u64> = Map::default();
    let mut long: Map<Box<[u8]>, u64> = Map::default();
    let mut done: Vec<u32> = Vec::new();
    let mut out = Flat::default();
    let mut syms: Vec<u32> = Vec::new();
    let mut chunk: Vec<u32> = Vec::new();
    spans.each_span(&mut |span, count| {
        if span.is_empty() || count == 0 {
            return;
        }
        let s = span.as_bytes();
        syms.clear();
        let mut start = 0;
        for p in 1..=s.len() {
            if p < s.len() && joined[(s[p - 1] as usize) << 8 | s[p] as usize] {
                continue;
            }
            let piece = &s[start..p];
            let key = (piece.len() <= crate::word_cache::PACKED_LEN)
                .then(|| crate::word_cache::pack(piece));
            let found = match key {
                Some(k) => short.get(&k),
                None => long.get(piece),
            };
            match found {
                Some(&at) => {
                    let (a, n) = ((at >> 24) as usize, (at & 0xFF_FFFF) as usize);
                    syms.extend_from_slice(&done[a..a + n]);
                }
                None => {
                    chunk.clear();
                    chunk.extend(piece.iter().map(|&b| byte[b as usize]));
                    replay(&mut chunk, &map);
                    syms.extend_from_slice(&chunk);
                    // the cache starts afresh past `CACHE_CHUNKS` chunks (it was 40 MB of stage
                    // two's peak at 100 MB); a chunk of 16 M symbols or more is replayed each
                    // time instead
                    if short.len() + long.len() >= CACHE_CHUNKS {
                        (short, long, done) = Default::default();
                    }
                    if chunk.len() < 1 << 24 {
                        let at = (done.len() as u64) << 24 | chunk.len() as u64;
                        done.extend_from_slice(&chunk);
                        match key {
                            Some(k) => short.insert(k, at),
                            None => long.insert(piece.into(), at),
                        };
                    }
                }
            }
            start = p;
        }
        out.push(&syms, count);
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_seven_bits_a_byte() {
        let values = [0u64, 1, 127, 128, 300, 16_383, 16_384, 1 << 35, u64::MAX];
        let mut b = Vec::new();
        for &v in &values {
            put_number(&mut b, v);
        }
        // 1 + 1 + 1 + 2 + 2 + 2 + 3 + 6 + 10 bytes (7 bits each)
        assert_eq!(b.len(), 28);
        // 300 = 0b10_0101100: 0x2C with the high bit, then 0x02
        assert_eq!(&b[5..7], &[0xAC, 0x02]);
        let mut at = 0;
        let forward: Vec<u64> = values.iter().map(|_| number_at(&b, &mut at)).collect();
        assert_eq!((forward.as_slice(), at), (&values[..], b.len()));
    }

    #[test]
    fn spans_are_cut_into_pieces_before_spaces_after_text() {
        let mut got: Vec<String> = Vec::new();
        each_piece(b"of the  way\n x", |p| got.push(String::from_utf8(p.to_vec()).unwrap()));
        assert_eq!(got, ["of", " the", "  way", "\n x"]);
        got.clear();
        each_piece(b"  a", |p| got.push(String::from_utf8(p.to_vec()).unwrap()));
        assert_eq!(got, ["  a"]);
        got.clear();
        each_piece(b"", |p| got.push(String::from_utf8(p.to_vec()).unwrap()));
        assert!(got.is_empty());
    }

    #[test]
    fn a_span_table_holds_words_once() {
        // counted in this order; the table is written from its end: "b" first
        let mut c = SpanCounts::default();
        c.add("a b", 3);
        c.add("b", 1);
        let t = SpanTable::from_counts(c);
        // the dictionary by hand: "b" is piece 0, then "a" 1 and " b" 2
        assert_eq!(t.words, b"ba b");
        assert_eq!(t.word_ends, [1, 2, 4]);
        // "b": count 1, one piece, piece 0 + 1; "a b": count 3, two pieces, 1 + 1 and 2 + 1
        assert_eq!(t.blocks, [vec![1u8, 1, 1, 3, 2, 2, 3]]);
        // with room for two bytes of words, " b" (a third byte) is written out: code 0,
        // length 2, its bytes
        let mut c = SpanCounts::default();
        c.add("a b", 3);
        c.add("b", 1);
        let t = SpanTable::from_counts_within(c, 2);
        assert_eq!(t.words, b"ba");
        assert_eq!(t.blocks, [vec![1u8, 1, 1, 3, 2, 2, 0, 2, b' ', b'b']]);
        assert_eq!(t.into_pairs(), [("b".to_string(), 1), ("a b".to_string(), 3)]);
    }

    #[test]
    fn a_span_table_hands_over_what_was_counted() {
        let mut c = SpanCounts::default();
        let long = "x".repeat(300);
        for s in ["a b", "c", "a b", long.as_str(), "é ü", "a b"] {
            c.add(s, 1);
        }
        c.add("c", 1 << 40);
        let mut t = SpanTable::from_counts(c);
        assert_eq!(t.len(), 4);
        let mut got = Vec::new();
        t.each_span(&mut |s, n| got.push((s.to_string(), n))).unwrap();
        got.sort();
        let mut want =
            vec![("a b".to_string(), 3), ("c".into(), 1 + (1 << 40)), (long, 1), ("é ü".into(), 1)];
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn words_of_joined_pieces() {
        // " the" + " cat": two runs of letters, nothing shared at the join
        assert_eq!(WordLimit::joined_words(b" the", b" cat"), 2);
        // "th" + "e": one run continued across the join
        assert_eq!(WordLimit::joined_words(b"th", b"e"), 1);
        // "of the" + " way by": of, the, way, by
        assert_eq!(WordLimit::joined_words(b"of the", b" way by"), 4);
        assert!(!(WordLimit::rule(3))(b"of the", b" way by"));
        assert!((WordLimit::rule(4))(b"of the", b" way by"));
        // spaces alone hold no word
        assert_eq!(WordLimit::joined_words(b"  ", b" "), 0);
    }
}
