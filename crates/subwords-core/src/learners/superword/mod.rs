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
pub fn count_spans(spelling: &Spelling, text: &str, table: &mut crate::counting::Counts) {
    spelling.for_each_unit(text, |span, _| {
        if let Some(c) = table.get_mut(span) {
            *c += 1;
        } else {
            table.insert(span.into(), 1);
        }
    });
}

/// A table of distinct spans and their counts, as the counter sums them; stage two reads it in
/// any order (the merge engine's result does not depend on the order of its units).
///
/// Spans counted from text are kept in one buffer, their texts one after another, with each
/// span's end and count beside them: a `String` per span took 88 bytes of heap for a 40-byte
/// span on average (1.6 M spans, 100 MB of mixed text). A count table's spans come as pairs.
#[derive(Default)]
pub struct SpanTable {
    /// Spans given as (text, count) pairs.
    pub spans: Vec<(String, u64)>,
    /// The other spans' texts, one after another.
    texts: String,
    /// Each of those spans' end in `texts`, and its count.
    ends: Vec<(usize, u64)>,
}

impl SpanTable {
    /// Spans given as (text, count) pairs (a count table's).
    pub fn from_pairs(spans: Vec<(String, u64)>) -> Self {
        SpanTable { spans, ..Default::default() }
    }

    /// The spans of a counter's table, moved into one buffer (each key freed once copied).
    pub fn from_counts(counts: crate::counting::Counts) -> Self {
        let bytes = counts.keys().map(|k| k.len()).sum();
        let mut t = SpanTable {
            spans: Vec::new(),
            texts: String::with_capacity(bytes),
            ends: Vec::with_capacity(counts.len()),
        };
        for (k, c) in counts {
            t.texts.push_str(&k);
            t.ends.push((t.texts.len(), c));
        }
        t
    }

    /// Every span with its count, as pairs.
    pub fn into_pairs(mut self) -> Vec<(String, u64)> {
        let mut out = std::mem::take(&mut self.spans);
        out.reserve(self.ends.len());
        let mut start = 0;
        for &(end, c) in &self.ends {
            out.push((self.texts[start..end].to_string(), c));
            start = end;
        }
        out
    }

    /// The number of distinct spans.
    pub fn len(&self) -> usize {
        self.spans.len() + self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn each(&self, mut f: impl FnMut(&str, u64)) {
        for (s, c) in &self.spans {
            f(s, *c);
        }
        let mut start = 0;
        for &(end, c) in &self.ends {
            f(&self.texts[start..end], c);
            start = end;
        }
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
            + self.texts.len() as u64
            + 16 * self.ends.len() as u64
    }
    /// Hands each span over once and frees the table as it goes, so stage two's spelled spans
    /// replace it in memory instead of adding to it: the buffer is read from its end and cut
    /// back every 4 MB.
    fn each_span(&mut self, f: &mut dyn FnMut(&str, u64)) -> Result<()> {
        for (s, c) in std::mem::take(&mut self.spans) {
            f(&s, c);
        }
        let mut texts = std::mem::take(&mut self.texts);
        let mut ends = std::mem::take(&mut self.ends);
        let mut kept = texts.len();
        while let Some((end, c)) = ends.pop() {
            let start = ends.last().map_or(0, |e| e.0);
            f(&texts[start..end], c);
            if kept - start >= 4 << 20 {
                texts.truncate(start);
                texts.shrink_to_fit();
                ends.shrink_to_fit();
                kept = start;
            }
        }
        Ok(())
    }
}

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
                    // (a chunk of 16 M symbols or more is replayed each time instead)
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
