//! Counting units, streaming.
//!
//! Memory grows with the number of distinct units, not with the corpus: files are read in
//! newline-aligned blocks, each block is counted on all threads into per-thread tables that live
//! for the whole run, and the tables are added together once at the end. Sums do not depend on how
//! the input was cut, so the counts (and everything after them) are the same for any thread count.
//! Each line of a file is one text; the newline itself is a separator, not content.
//!
//! Performance notes (callgrind, one thread, `subwords.train` to 32k under `front`):
//! * `front` units counted under their word, the mark left out of the key, in a 16-byte key
//!   up to 15 bytes and a 32-byte one up to 31 (`Marked`), where the unit (mark included) had a
//!   16-byte key up to 15 bytes and a `Box<str>` beyond: with the block split
//!   (`spelling::front`), the counting pass on multilingual text (15 MB; 6% of its words over 15
//!   bytes) 954 M -> 518 M instructions, English 418 M -> 275 M; the tables' join and the
//!   units written out (`finish_units`) on multilingual 108 M -> 56 M, of which 42 M was a
//!   UTF-8 check of each short unit's bytes.

use std::fs::File;
use std::io::Read;

use crate::hash::Map;

use crate::count_table::{table_spelling, Records, TableBytes};
use crate::error::{Error, Result};
use crate::options::InputErrors;
use crate::spelling::{Normalizations, Scheme, Spelling};

pub type Counts = Map<Box<str>, u64>;

const BLOCK: usize = 8 << 20;

/// A unit of at most 15 bytes, held in the table slot itself: its bytes, zero-padded, and its
/// length in the last byte (the word caches' key, [`crate::word_cache::pack`]). Looking a unit up in a `Map<Box<str>, u64>` reads the key through a
/// pointer (a cache miss for most of the table) to compare it; at 7 MB that lookup and its
/// `memcmp` were about half of the counting's `perf` samples. Most units are short, so
/// they are counted under this key, the rest under their text, and the two tables become one
/// [`Counts`] at the end.
#[derive(Clone, Copy, PartialEq, Eq)]
struct ShortUnit([u8; 16]);

impl ShortUnit {
    #[inline]
    fn new(unit: &str) -> Option<Self> {
        let b = unit.as_bytes();
        (b.len() <= crate::word_cache::PACKED_LEN)
            .then(|| ShortUnit(crate::word_cache::pack(b).to_le_bytes()))
    }

    fn len(&self) -> usize {
        self.0[15] as usize
    }

    fn text(&self) -> &str {
        // SAFETY: made only by `new`, from the whole of a `str` (checking again was 140
        // instructions a unit on multilingual text, 42 M at 15 MB)
        unsafe { std::str::from_utf8_unchecked(&self.0[..self.len()]) }
    }
}

impl std::hash::Hash for ShortUnit {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let (lo, hi) = self.0.split_at(8);
        state.write_u64(u64::from_le_bytes(lo.try_into().unwrap()));
        state.write_u64(u64::from_le_bytes(hi.try_into().unwrap()));
    }
}

/// One thread's counts: short units by [`ShortUnit`], the others by text.
#[derive(Default, Clone)]
struct Tally {
    short: Map<ShortUnit, u64>,
    /// `front` units of the mark and a word, by the word ([`Spelling::front_words_only`]).
    marked: Marked,
    long: Counts,
    /// The mark and a word too long for `marked`, built for the lookup in `long`.
    scratch: String,
    /// SuperBPE's or BoundlessBPE's spans ([`UnitCounter::spans`]), counted beside the units.
    spans: crate::learners::superword::SpanCounts,
}

impl Tally {
    #[inline]
    fn add(&mut self, unit: &str) {
        if let Some(k) = ShortUnit::new(unit) {
            *self.short.entry(k).or_insert(0) += 1;
        } else if let Some(c) = self.long.get_mut(unit) {
            *c += 1;
        } else {
            self.long.insert(unit.into(), 1);
        }
    }

    /// Counts the unit that is `mark` and then `word`.
    #[inline]
    fn add_marked(&mut self, word: &str, mark: &str) {
        if self.marked.add(word.as_bytes(), 1) {
            return;
        }
        self.scratch.clear();
        self.scratch.push_str(mark);
        self.scratch.push_str(word);
        if let Some(c) = self.long.get_mut(self.scratch.as_str()) {
            *c += 1;
        } else {
            self.long.insert(self.scratch.as_str().into(), 1);
        }
    }
}

/// A word of at most 31 bytes, zero-padded, its length in the last byte: the key of the
/// `front` words too long for a [`ShortUnit`] (a word of eight Cyrillic letters, most of an
/// identifier), which otherwise take an allocation and a key read through a pointer.
#[derive(Clone, Copy, PartialEq, Eq)]
struct MediumUnit([u8; 32]);

impl MediumUnit {
    #[inline]
    fn new(b: &[u8]) -> Option<Self> {
        (b.len() < 32).then(|| {
            let mut k = [0u8; 32];
            k[..b.len()].copy_from_slice(b);
            k[31] = b.len() as u8;
            MediumUnit(k)
        })
    }

    fn bytes(&self) -> &[u8] {
        &self.0[..self.0[31] as usize]
    }
}

impl std::hash::Hash for MediumUnit {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for w in self.0.chunks_exact(8) {
            state.write_u64(u64::from_le_bytes(w.try_into().unwrap()));
        }
    }
}

/// The `front` units that are the mark and then a word of at most 31 bytes, keyed by the word:
/// the mark (three bytes) left out of the key, so that a word of up to 15 bytes, not 12, is
/// counted in a 16-byte slot, and one of up to 31 in a 32-byte one.
#[derive(Default, Clone)]
struct Marked {
    short: Map<ShortUnit, u64>,
    medium: Map<MediumUnit, u64>,
}

impl Marked {
    fn len(&self) -> usize {
        self.short.len() + self.medium.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `count` to the unit of the mark and `word`; false (nothing added) for a word of
    /// more than 31 bytes.
    #[inline]
    fn add(&mut self, word: &[u8], count: u64) -> bool {
        if word.len() <= crate::word_cache::PACKED_LEN {
            let k = ShortUnit(crate::word_cache::pack(word).to_le_bytes());
            *self.short.entry(k).or_insert(0) += count;
            true
        } else if let Some(k) = MediumUnit::new(word) {
            *self.medium.entry(k).or_insert(0) += count;
            true
        } else {
            false
        }
    }

    /// Adds `other`'s counts (the smaller table into the larger).
    fn absorb(&mut self, other: Marked) {
        fn join<K: std::hash::Hash + Eq>(a: &mut Map<K, u64>, b: Map<K, u64>) {
            let small = if a.len() < b.len() { std::mem::replace(a, b) } else { b };
            for (k, v) in small {
                *a.entry(k).or_insert(0) += v;
            }
        }
        join(&mut self.short, other.short);
        join(&mut self.medium, other.medium);
    }

    /// Calls `f(unit, count)` with each unit, `mark` put back in front of its word.
    fn each(&self, mark: &str, mut f: impl FnMut(&str, u64)) {
        let m = mark.len();
        let mut buf = [0u8; 36];
        buf[..m].copy_from_slice(mark.as_bytes());
        let words = self.short.iter().map(|(k, &v)| (k.text().as_bytes(), v));
        for (w, v) in words.chain(self.medium.iter().map(|(k, &v)| (k.bytes(), v))) {
            buf[m..m + w.len()].copy_from_slice(w);
            // SAFETY: a `str` (the mark) followed by another (a word counted from a `str`)
            f(unsafe { std::str::from_utf8_unchecked(&buf[..m + w.len()]) }, v);
        }
    }
}

pub struct UnitCounter {
    spelling: Spelling,
    tables: Vec<Tally>,
    pub normalizations: Normalizations,
    pub texts: u64,
    /// Texts kept whole for stage two of superword BPE (None when not needed).
    pub streams: Option<Vec<String>>,
    table_stream: Option<String>,
    /// A count that does not fit in 64 bits (refused when training).
    pub overflow: bool,
    /// Special tokens and user symbols: cut out of every text before counting ([`cut_at`]).
    pub cut: Vec<String>,
    /// SuperBPE: the spelling that cuts texts into spans, counted in the same pass as the units
    /// ([`take_spans`](Self::take_spans)); None for every other training.
    pub spans: Option<Spelling>,
    /// BoundlessBPE: its spans (runs of pretokens that may join) counted in the same pass.
    pub runs: Option<crate::learners::superword::boundless::RunSpans>,
}

/// Calls `part` with the pieces of `text` between occurrences of any of `cut`, the occurrences
/// dropped: leftmost first, and the longest of those starting at one place (as
/// `encoder::Allowed::split` cuts a text being encoded).
pub fn cut_at<'a>(text: &'a str, cut: &[String], mut part: impl FnMut(&'a str)) {
    split_at(text, cut, |p, _| part(p));
}

/// Calls `f(piece, hit)` for each piece of `text` before an occurrence of one of `needles`
/// (`hit`: that needle's index), and once more for the rest (`hit` None): leftmost first, the
/// longest of those starting at one place. Each needle's next occurrence is kept and only
/// searched again once the scan has passed it, so a text costs one pass per needle.
pub fn split_at<'a>(text: &'a str, needles: &[String], mut f: impl FnMut(&'a str, Option<usize>)) {
    if needles.is_empty() {
        f(text, None);
        return;
    }
    let find = |from: usize, c: &str| text[from..].find(c).map(|i| from + i);
    let mut next: Vec<Option<usize>> = needles.iter().map(|c| find(0, c)).collect();
    let mut pos = 0usize;
    loop {
        let mut best: Option<(usize, usize, usize)> = None;
        for (j, c) in needles.iter().enumerate() {
            if next[j].is_some_and(|i| i < pos) {
                next[j] = find(pos, c);
            }
            if let Some(i) = next[j] {
                if best.is_none_or(|(bi, bl, _)| i < bi || (i == bi && c.len() > bl)) {
                    best = Some((i, c.len(), j));
                }
            }
        }
        match best {
            None => {
                f(&text[pos..], None);
                return;
            }
            Some((i, len, j)) => {
                f(&text[pos..i], Some(j));
                pos = i + len;
            }
        }
    }
}

fn count_text(
    spelling: &Spelling,
    cut: &[String],
    text: &str,
    table: &mut Tally,
    norm: &mut Normalizations,
    spans: Option<&Spelling>,
    runs: Option<&crate::learners::superword::boundless::RunSpans>,
) {
    if !cut.is_empty() {
        // special tokens are never learned from: each stretch between them is a text of its own
        cut_at(text, cut, |part| {
            if !part.is_empty() {
                count_text(spelling, &[], part, table, norm, spans, runs)
            }
        });
        return;
    }
    if spelling.front_words_only() && spans.is_none() && runs.is_none() {
        // every unit is the mark and a piece of a word cut before each mark in it: the words
        // and the normalizations from one block scan, each unit counted without its mark
        let mark = spelling.front_mark();
        let mut utf8 = [0u8; 4];
        let mark_str: &str = mark.encode_utf8(&mut utf8);
        crate::spelling::front::for_each_word_observed(text, mark, norm, |a, b, marked| {
            let word = &text[a..b];
            if !marked {
                table.add_marked(word, mark_str);
            } else {
                // `a▁b` spells `▁a` `▁b`, `▁b` spells `▁` `▁b` (`Spelling::for_each_unit`)
                for piece in word.split(mark) {
                    table.add_marked(piece, mark_str);
                }
            }
        });
        return;
    }
    if spelling.scheme == Scheme::Front {
        norm.observe(text, spelling.front_mark());
    }
    if let Some(r) = runs {
        use crate::learners::superword::boundless::Counted;
        r.each(spelling, text, |c| match c {
            Counted::Unit(u) => table.add(u),
            Counted::Span(s) => {
                table.spans.add(s, 1);
            }
        });
        return;
    }
    spelling.for_each_unit(text, |unit, _| table.add(unit));
    if let Some(sp) = spans {
        crate::learners::superword::count_spans(sp, text, &mut table.spans);
    }
}

/// Reads a file's texts again, as [`UnitCounter::feed_file`] counts them (a line is a text, its
/// `\r\n` or `\n` a separator, empty lines skipped), and calls `f` with each piece between the
/// `cut` texts, empty pieces skipped: two-stage BPE's stage two reads a file this way instead of
/// keeping its texts. Holds one line at a time. Returns the number of texts (non-empty lines).
pub fn each_file_text(
    path: &str,
    errors: InputErrors,
    cut: &[String],
    f: &mut dyn FnMut(&str),
) -> Result<u64> {
    let mut texts = 0u64;
    each_line(path, "training file", errors, |_, text| {
        let text = text.strip_suffix('\r').unwrap_or(text);
        if !text.is_empty() {
            texts += 1;
            cut_at(text, cut, |p| {
                if !p.is_empty() {
                    f(p)
                }
            });
        }
        Ok(())
    })?;
    Ok(texts)
}

/// Calls `f(bytes read, line)` with each line of the file at `path` (a `what`, for messages),
/// without its `\n`, holding one line at a time. Invalid UTF-8 is refused naming the line, or
/// replaced by U+FFFD under [`InputErrors::Replace`].
fn each_line(
    path: &str,
    what: &str,
    errors: InputErrors,
    mut f: impl FnMut(usize, &str) -> Result<()>,
) -> Result<()> {
    use std::io::BufRead;
    let file =
        File::open(path).map_err(|e| Error::io(format!("cannot open {what} {path:?}"), e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut line: Vec<u8> = Vec::new();
    let mut line_no: u64 = 0;
    loop {
        line.clear();
        let k = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(format!("cannot read {what} {path:?}"), e))?;
        if k == 0 {
            return Ok(());
        }
        line_no += 1;
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        let replaced;
        let text: &str = match std::str::from_utf8(&line) {
            Ok(t) => t,
            Err(e) => match errors {
                InputErrors::Strict => return Err(bad_utf8(path, line_no, line[e.valid_up_to()])),
                InputErrors::Replace => {
                    replaced = String::from_utf8_lossy(&line).into_owned();
                    &replaced
                }
            },
        };
        f(k, text).map_err(|e| match e {
            Error::Input(why) => Error::Input(format!("{path}: line {line_no}: {why}")),
            e => e,
        })?;
    }
}

fn bad_utf8(path: &str, line: u64, byte: u8) -> Error {
    Error::Input(format!(
        "{path}: line {line}: invalid UTF-8 (byte 0x{byte:02X}); convert the file to UTF-8, \
         or pass input_errors=\"replace\" (CLI: --input-errors replace) to read it with U+FFFD"
    ))
}

/// Calls `f` with the pieces of `texts` a two-stage counter would keep for stage two (empty
/// texts skipped, each cut at `cut`, empty pieces skipped). Returns the number of texts.
pub fn each_stream_text(texts: &[String], cut: &[String], f: &mut dyn FnMut(&str)) -> u64 {
    let mut n = 0u64;
    for t in texts.iter().filter(|t| !t.is_empty()) {
        n += 1;
        cut_at(t, cut, |p| {
            if !p.is_empty() {
                f(p)
            }
        });
    }
    n
}

impl UnitCounter {
    pub fn new(spelling: Spelling, threads: usize, keep_streams: bool) -> Self {
        let threads = threads.max(1);
        UnitCounter {
            spelling,
            tables: (0..threads).map(|_| Tally::default()).collect(),
            normalizations: Normalizations::default(),
            texts: 0,
            streams: keep_streams.then(Vec::new),
            table_stream: None,
            overflow: false,
            cut: Vec::new(),
            spans: None,
            runs: None,
        }
    }

    pub fn spelling(&self) -> &Spelling {
        &self.spelling
    }

    /// Stops keeping texts for stage two: the caller will give stage two its texts again
    /// ([`crate::learners::StageTwoTexts`]). Call it before feeding anything.
    pub fn stop_keeping_streams(&mut self) {
        self.streams = None;
    }

    /// Bytes of the texts kept for stage two so far.
    pub fn held_stream_bytes(&self) -> u64 {
        self.streams.as_ref().map_or(0, |s| s.iter().map(|t| t.len() as u64).sum())
    }

    /// Counts a batch of texts on all threads.
    pub fn feed_texts(&mut self, texts: &[String]) {
        if let Some(s) = self.streams.as_mut() {
            each_stream_text(texts, &self.cut, &mut |part| s.push(part.to_string()));
        }
        // empty texts are skipped, as empty lines of a file are
        self.texts += texts.iter().filter(|t| !t.is_empty()).count() as u64;
        let n = self.tables.len();
        let per = texts.len().div_ceil(n).max(1);
        let spelling = &self.spelling;
        let cut = &self.cut;
        let spans = self.spans.as_ref();
        let runs = self.runs.as_ref();
        let norms: Vec<Normalizations> = if n == 1 || texts.len() < 64 {
            let mut norm = Normalizations::default();
            for t in texts {
                count_text(spelling, cut, t, &mut self.tables[0], &mut norm, spans, runs);
            }
            vec![norm]
        } else {
            let mut out = vec![Normalizations::default(); n];
            rayon::scope(|s| {
                for ((table, chunk), norm) in
                    self.tables.iter_mut().zip(texts.chunks(per)).zip(out.iter_mut())
                {
                    s.spawn(move |_| {
                        for t in chunk {
                            count_text(spelling, cut, t, table, norm, spans, runs);
                        }
                    });
                }
            });
            out
        };
        for n in &norms {
            self.normalizations.merge(n);
        }
    }

    /// Counts one block of whole lines (valid UTF-8) on all threads; returns its number of
    /// newlines (counted on the threads, as they cut the lines).
    fn feed_block(&mut self, block: &str) -> u64 {
        let n = self.tables.len();
        let mut parts: Vec<&str> = Vec::with_capacity(n);
        let mut rest = block;
        for k in (1..=n).rev() {
            if k == 1 || rest.len() < 4096 {
                parts.push(rest);
                break;
            }
            let target = rest.len() / k;
            // search bytes: `target` need not be a char boundary, but the byte after a newline is
            let cut = rest.as_bytes()[target..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|i| target + i + 1)
                .unwrap_or(rest.len());
            parts.push(&rest[..cut]);
            rest = &rest[cut..];
        }
        let spelling = &self.spelling;
        let cut = &self.cut;
        let spans = self.spans.as_ref();
        let runs = self.runs.as_ref();
        let keep = self.streams.is_some();
        // each part starts from the normalizations seen so far (they are only ever or-ed, so
        // the result is the same), and `observe` skips its walk of a text's characters once a
        // whitespace run has been seen (on code, one thread: within 0.01% either way)
        let seen = self.normalizations;
        let mut outs: Vec<(Normalizations, u64, Vec<String>, u64)> =
            vec![(seen, 0, Vec::new(), 0); parts.len()];
        rayon::scope(|s| {
            for ((table, part), out) in
                self.tables.iter_mut().zip(parts.iter()).zip(outs.iter_mut())
            {
                s.spawn(move |_| {
                    // a part's pieces are its newlines plus one
                    let mut pieces = 0u64;
                    for line in part.split('\n') {
                        pieces += 1;
                        let line = line.strip_suffix('\r').unwrap_or(line);
                        if line.is_empty() {
                            continue;
                        }
                        out.1 += 1;
                        if keep {
                            cut_at(line, cut, |p| {
                                if !p.is_empty() {
                                    out.2.push(p.to_string())
                                }
                            });
                        }
                        count_text(spelling, cut, line, table, &mut out.0, spans, runs);
                    }
                    out.3 = pieces - 1;
                });
            }
        });
        let mut newlines = 0u64;
        for (norm, texts, lines, n) in outs {
            self.normalizations.merge(&norm);
            self.texts += texts;
            newlines += n;
            if let Some(s) = self.streams.as_mut() {
                s.extend(lines);
            }
        }
        newlines
    }

    /// Reads a file block by block. Invalid UTF-8 is refused naming the file and line, unless
    /// `errors` is `Replace`.
    ///
    /// What runs before a block is shared out is serial (7 MB of English, 2 threads:
    /// it was 12 ms of a 47 ms count): the block is read into the buffer's spare room, not zeroed
    /// first; the UTF-8 check is `simdutf8`'s; the newlines (for the line numbers of a later
    /// block's error) are counted by the threads as they cut the lines.
    pub fn feed_file(
        &mut self,
        path: &str,
        errors: InputErrors,
        progress: Option<&crate::progress::Progress>,
    ) -> Result<()> {
        let mut file = File::open(path)
            .map_err(|e| Error::io(format!("cannot open training file {path:?}"), e))?;
        if let Some(p) = progress {
            p.start(crate::progress::Phase::Reading, file.metadata().map(|m| m.len()).unwrap_or(0));
        }
        let mut buf: Vec<u8> = Vec::with_capacity(BLOCK + 4096);
        let mut carry: Vec<u8> = Vec::new();
        let mut line_no: u64 = 1;
        let mut eof = false;
        while !eof {
            buf.clear();
            buf.extend_from_slice(&carry);
            carry.clear();
            // (`read_to_end` stops at `BLOCK` bytes or at the end of the file, whichever is first)
            let got = (&mut file)
                .take(BLOCK as u64)
                .read_to_end(&mut buf)
                .map_err(|e| Error::io(format!("cannot read training file {path:?}"), e))?;
            eof = got < BLOCK;
            if !eof {
                match buf.iter().rposition(|&b| b == b'\n') {
                    Some(p) => {
                        carry.extend_from_slice(&buf[p + 1..]);
                        buf.truncate(p + 1);
                    }
                    None => {
                        // a line longer than the block: keep reading into it
                        carry = std::mem::take(&mut buf);
                        continue;
                    }
                }
            }
            if let Some(p) = progress {
                p.add(buf.len() as u64);
            }
            let lines_here = match simdutf8::compat::from_utf8(&buf) {
                Ok(s) => self.feed_block(s),
                Err(e) => match errors {
                    InputErrors::Strict => {
                        let at = e.valid_up_to();
                        let line =
                            line_no + buf[..at].iter().filter(|&&b| b == b'\n').count() as u64;
                        return Err(bad_utf8(path, line, buf[at]));
                    }
                    InputErrors::Replace => {
                        let s = String::from_utf8_lossy(&buf).into_owned();
                        self.feed_block(&s)
                    }
                },
            };
            line_no += lines_here;
        }
        Ok(())
    }

    /// Reads a `word<TAB>count` text file (one row a line, blank lines skipped) into the counter
    /// with [`add_count`](Self::add_count), streaming: memory is the distinct units, not the file.
    /// The rules are [`parse_count_line`]'s; a bad line is refused naming the file and line.
    pub fn feed_count_file(
        &mut self,
        path: &str,
        errors: InputErrors,
        progress: Option<&crate::progress::Progress>,
    ) -> Result<()> {
        if let Some(p) = progress {
            p.start(
                crate::progress::Phase::Reading,
                std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
            );
        }
        each_line(path, "count table", errors, |k, line| {
            if let Some(p) = progress {
                p.add(k as u64);
            }
            if let Some((word, count)) =
                parse_count_line(line.trim_end_matches('\r')).map_err(Error::Input)?
            {
                self.add_count(word, count);
            }
            Ok(())
        })
    }

    /// Adds a `unit -> count` entry directly (count tables).
    /// The key is spelled like any text (`low` becomes `▁low` under `front`).
    pub fn add_count(&mut self, key: &str, count: u64) {
        if let Some(streams) = self.streams.as_mut() {
            // two-stage: the table is read as one stream (its words in table order, each
            // repeated), for both stages; it is counted in `finish`
            if self.table_stream.is_none() {
                self.table_stream = Some(String::new());
            }
            let s = self.table_stream.as_mut().unwrap();
            for _ in 0..count {
                if !s.is_empty() {
                    s.push(' ');
                }
                s.push_str(key);
            }
            let _ = streams;
            return;
        }
        let table = &mut self.tables[0].long;
        if self.spelling.scheme == Scheme::Front {
            self.normalizations.observe(key, self.spelling.front_mark());
        }
        let mut overflow = false;
        let spelling = &self.spelling;
        cut_at(key, &self.cut, |part| {
            spelling.for_each_unit(part, |unit, _| {
                let e = table.entry(unit.into()).or_insert(0);
                match e.checked_add(count) {
                    Some(v) => *e = v,
                    None => overflow = true,
                }
            })
        });
        if let Some(sp) = &self.spans {
            let spans = &mut self.tables[0].spans;
            cut_at(key, &self.cut, |part| {
                let mut one = crate::learners::superword::SpanCounts::default();
                crate::learners::superword::count_spans(sp, part, &mut one);
                one.each(|k, v| overflow |= spans.add(k, v.saturating_mul(count)));
            });
        }
        if let Some(r) = &self.runs {
            use crate::learners::superword::boundless::Counted;
            let spans = &mut self.tables[0].spans;
            cut_at(key, &self.cut, |part| {
                r.each(spelling, part, |c| {
                    if let Counted::Span(s) = c {
                        overflow |= spans.add(s, count);
                    }
                })
            });
        }
        self.overflow |= overflow;
        self.texts = self.texts.saturating_add(count);
    }

    /// SuperBPE's span table: the spans of every text fed so far, summed over the threads
    /// (None unless [`spans`](Self::spans) is set). Call it before `finish`.
    pub fn take_spans(&mut self) -> Option<crate::learners::superword::SpanTable> {
        if self.spans.is_none() && self.runs.is_none() {
            return None;
        }
        let tables = self.tables.iter_mut().map(|t| std::mem::take(&mut t.spans)).collect();
        let total = crate::learners::superword::SpanCounts::sum(tables);
        let spans = crate::learners::superword::SpanTable::from_counts(total);
        crate::learners::superword::give_back_free_memory();
        Some(spans)
    }

    pub fn finish(mut self) -> Result<(Counts, Normalizations, u64, Option<Vec<String>>)> {
        let (short, marked, mut total) = self.merged()?;
        total.reserve(marked.len());
        marked.each(&self.spelling.mark, |text, v| match total.get_mut(text) {
            Some(c) => *c += v,
            None => {
                total.insert(text.into(), v);
            }
        });
        // a short unit is never in a text table (the two hold units of different lengths), except
        // from `add_count`, which counts into the text table
        total.reserve(short.len());
        for (k, v) in short {
            match total.get_mut(k.text()) {
                Some(c) => *c += v,
                None => {
                    total.insert(k.text().into(), v);
                }
            }
        }
        Ok((total, self.normalizations, self.texts, self.streams))
    }

    /// [`finish`](Self::finish) for training: the units and counts written one after another into
    /// one buffer ([`TableBytes::from_counter`]), in no particular order, where `finish` makes a
    /// `String` per unit. Training reads them in any order to the same model (DESIGN §4). Issue
    /// 15: at 7 MB of English (116k distinct units) making those strings cost about 20 ms and
    /// freeing them 5 ms, serial, of a 290 ms BPE run.
    pub fn finish_units(mut self) -> Result<(TableBytes, Option<Vec<String>>)> {
        let (mut short, mut marked, mut long) = self.merged()?;
        let mark = self.spelling.mark.clone();
        // each unit under one key: while the marked tables are in use, a unit of the mark and
        // at most 31 bytes belongs there (the other tables hold such units only from
        // `add_count` or a text counted otherwise)
        if !marked.is_empty() {
            short.retain(|k, v| match k.text().strip_prefix(mark.as_str()) {
                Some(w) => !marked.add(w.as_bytes(), *v),
                None => true,
            });
        }
        // a text table holds short units only from `add_count`: those join the short table
        long.retain(|k, v| {
            if !marked.is_empty() {
                if let Some(w) = k.strip_prefix(mark.as_str()) {
                    if marked.add(w.as_bytes(), *v) {
                        return false;
                    }
                }
            }
            match ShortUnit::new(k) {
                Some(u) => {
                    *short.entry(u).or_insert(0) += *v;
                    false
                }
                None => true,
            }
        });
        let bytes: usize = short.keys().map(|k| 12 + k.len()).sum::<usize>()
            + marked.short.keys().map(|k| 12 + mark.len() + k.len()).sum::<usize>()
            + marked.medium.keys().map(|k| 12 + mark.len() + k.bytes().len()).sum::<usize>()
            + long.keys().map(|k| 12 + k.len()).sum::<usize>();
        let mut records = Records::with_capacity(bytes);
        marked.each(&mark, |text, count| {
            if count > 0 {
                records.push(text, count);
            }
        });
        for (text, count) in
            short.iter().map(|(k, &v)| (k.text(), v)).chain(long.iter().map(|(k, &v)| (&**k, v)))
        {
            if count > 0 {
                records.push(text, count);
            }
        }
        Ok((
            records.into_table(table_spelling(&self.spelling), self.normalizations, self.texts),
            self.streams,
        ))
    }

    /// The per-thread tables added up: the short units' table, the marked units' table and the
    /// text table.
    fn merged(&mut self) -> Result<(Map<ShortUnit, u64>, Marked, Counts)> {
        if self.overflow {
            return Err(Error::Input(
                "a count in the table is too large: a unit's total count does not fit in 64 bits; scale the counts down".into(),
            ));
        }
        if let Some(stream) = self.table_stream.take() {
            self.feed_texts(&[stream]);
        }
        // the largest text table is kept and the rest added into it
        let big = (0..self.tables.len()).max_by_key(|&i| self.tables[i].long.len()).unwrap_or(0);
        let mut total = std::mem::take(&mut self.tables[big].long);
        let mut short: Map<ShortUnit, u64> = Map::default();
        let mut marked = Marked::default();
        for t in self.tables.drain(..) {
            marked.absorb(t.marked);
            if short.len() < t.short.len() {
                let small = std::mem::replace(&mut short, t.short);
                for (k, v) in small {
                    *short.entry(k).or_insert(0) += v;
                }
            } else {
                for (k, v) in t.short {
                    *short.entry(k).or_insert(0) += v;
                }
            }
            for (k, v) in t.long {
                *total.entry(k).or_insert(0) += v;
            }
        }
        Ok((short, marked, total))
    }
}

/// Whitespace as Python's `str.isspace` has it: Unicode's White_Space and the four ASCII
/// separators U+001C..U+001F (bidi class B or S), which Python counts and Unicode does not. The
/// count tables written by people and by other tools are read by this rule, as the Python side
/// reads stdin's.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// One `word<TAB>count` line, without its newline: the row, `None` for a blank line, or why it
/// is refused. The count is ASCII digits, with spaces around it allowed; it must be 1 to
/// `u64::MAX`. The word must be non-empty and hold no whitespace ([`is_space`]).
pub fn parse_count_line(line: &str) -> std::result::Result<Option<(&str, u64)>, String> {
    if line.chars().all(is_space) {
        return Ok(None);
    }
    let mut parts = line.split('\t');
    let (word, count) = match (parts.next(), parts.next(), parts.next()) {
        (Some(w), Some(c), None) => (w, c),
        _ => return Err(format!("expected 'word<TAB>positive integer', got {line:?}")),
    };
    let digits = count.trim_matches(' ');
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("expected 'word<TAB>positive integer', got {line:?}"));
    }
    if word.is_empty() {
        return Err("the word must be non-empty, got ''".into());
    }
    if word.chars().any(is_space) {
        return Err(format!(
            "{word:?} contains whitespace; a count table holds one whitespace-free word per row"
        ));
    }
    let value =
        digits.bytes().try_fold(0u64, |v, b| v.checked_mul(10)?.checked_add(u64::from(b - b'0')));
    match value {
        Some(0) => Err(format!("the count of {word:?} must be a positive whole number, got 0")),
        Some(v) => Ok(Some((word, v))),
        None => {
            let shown = digits.trim_start_matches('0');
            Err(format!(
                "the count of {word:?} is {shown}, above the largest count subwords takes ({})",
                u64::MAX
            ))
        }
    }
}

#[cfg(test)]
mod cut_tests {
    use super::cut_at;

    fn parts(text: &str, cut: &[&str]) -> Vec<String> {
        let cut: Vec<String> = cut.iter().map(|s| s.to_string()).collect();
        let mut v = Vec::new();
        cut_at(text, &cut, |p| v.push(p.to_string()));
        v
    }

    #[test]
    fn cuts_leftmost_then_longest_and_drops_the_needles() {
        assert_eq!(parts("a<s>b</s>c", &["<s>", "</s>"]), ["a", "b", "c"]);
        // "<|end|>" and "<|end" both start at 1: the longer wins
        assert_eq!(parts("x<|end|>y", &["<|end", "<|end|>"]), ["x", "y"]);
        assert_eq!(parts("<s><s>", &["<s>"]), ["", "", ""]);
        assert_eq!(parts("plain", &["<s>"]), ["plain"]);
        assert_eq!(parts("plain", &[]), ["plain"]);
        // a needle found before the scan passed it is searched again from the new position
        assert_eq!(parts("ab<x>ab<y>ab<x>", &["<x>", "<y>"]), ["ab", "ab", "ab", ""]);
    }

    #[test]
    fn split_at_names_the_needle_each_piece_ends_at() {
        let needles: Vec<String> = ["<a>", "<a>b"].iter().map(|s| s.to_string()).collect();
        let mut v = Vec::new();
        super::split_at("x<a>by<a>", &needles, |p, hit| v.push((p.to_string(), hit)));
        assert_eq!(
            v,
            [("x".to_string(), Some(1)), ("y".to_string(), Some(0)), (String::new(), None)]
        );
    }
}

#[cfg(test)]
mod tally_tests {
    use super::UnitCounter;
    use crate::options::TrainOptions;

    #[test]
    fn units_either_side_of_the_inline_key_length_add_up() {
        // 14 and 15 bytes are counted under the inline key, 16 under the text; add_count counts
        // into the text table whatever the length. Expected counts are by hand: 40 texts of each
        // kind below, then the add_count amounts.
        let (w14, w15, w16) = ("abcdefghijklmn", "abcdefghijklmno", "abcdefghijklmnop");
        let m15 = "éééééééa"; // 7 two-byte letters and one: 15 bytes
        let opts = TrainOptions::from_json(r#"{"model":"bpe","spelling":"end","vocab_size":300}"#)
            .unwrap();
        for threads in [1, 2] {
            let mut c = UnitCounter::new(opts.spelling().unwrap(), threads, false);
            let mut texts = Vec::new();
            for _ in 0..40 {
                texts.push(format!("{w15} {w16} {w14}"));
                texts.push(format!("{w15} {w15} {m15}"));
            }
            c.feed_texts(&texts);
            c.add_count(w15, 10);
            c.add_count(w16, 5);
            let again = UnitCounter {
                tables: c.tables.clone(),
                ..UnitCounter::new(opts.spelling().unwrap(), threads, false)
            };
            let (counts, ..) = c.finish().unwrap();
            assert_eq!(counts.get(w15), Some(&130), "{threads} threads");
            assert_eq!(counts.get(w16), Some(&45), "{threads} threads");
            assert_eq!(counts.get(w14), Some(&40), "{threads} threads");
            assert_eq!(counts.get(m15), Some(&40), "{threads} threads");
            assert_eq!(counts.len(), 4, "{threads} threads");
            // the same tables handed over in one buffer: the add_count rows of short units join
            // the short table's, so each unit is listed once
            let (table, _) = again.finish_units().unwrap();
            let mut units: Vec<(&str, u64)> = table.iter().collect();
            units.sort();
            assert_eq!(units, [(w14, 40), (w15, 130), (w16, 45), (m15, 40)], "{threads} threads");
        }
    }

    #[test]
    fn front_units_are_counted_once_whatever_their_key() {
        // `front` counts a unit of the mark and a word under the word: up to 15 bytes in one
        // key, up to 31 in another, longer ones (and `add_count`'s) under their text; each unit
        // is listed once. Expected counts are by hand: 40 texts of each kind, then the
        // add_count amounts (`x▁y` spells `▁x` `▁y`, `▁z` spells `▁` `▁z`).
        let w15 = "abcdefghijklmno";
        let w16 = "abcdefghijklmnop";
        let w31 = "abcdefghijklmnopqrstuvwxyzABCDE";
        let w32 = "abcdefghijklmnopqrstuvwxyzABCDEF";
        let m = |w: &str| format!("\u{2581}{w}");
        let opts =
            TrainOptions::from_json(r#"{"model":"bpe","spelling":"front","vocab_size":300}"#)
                .unwrap();
        for threads in [1, 2] {
            let mut c = UnitCounter::new(opts.spelling().unwrap(), threads, false);
            let mut texts = Vec::new();
            for _ in 0..40 {
                texts.push(format!("{w15} {w16}  {w31}\t{w32}"));
                texts.push(format!("x\u{2581}y \u{2581}z {w15}"));
            }
            c.feed_texts(&texts);
            let n = c.normalizations;
            assert!(n.whitespace_runs && n.mark_in_text && !n.stripped_ends, "{n:?}");
            c.add_count("x", 7);
            c.add_count(w32, 2);
            c.add_count("y\u{2581}", 1);
            let again = UnitCounter {
                tables: c.tables.clone(),
                ..UnitCounter::new(opts.spelling().unwrap(), threads, false)
            };
            let want = [
                (m(w15), 80),
                (m(w16), 40),
                (m(w31), 40),
                (m(w32), 42),
                (m("x"), 47),
                (m("y"), 41),
                (m(""), 41),
                (m("z"), 40),
            ];
            let (counts, ..) = c.finish().unwrap();
            for (u, k) in &want {
                assert_eq!(counts.get(u.as_str()), Some(k), "{u} {threads} threads");
            }
            assert_eq!(counts.len(), want.len(), "{threads} threads");
            let (table, _) = again.finish_units().unwrap();
            let mut units: Vec<(String, u64)> =
                table.iter().map(|(u, k)| (u.to_string(), k)).collect();
            units.sort();
            let mut want = want.to_vec();
            want.sort();
            assert_eq!(units, want, "{threads} threads");
        }
        let mut c = UnitCounter::new(opts.spelling().unwrap(), 1, false);
        c.feed_texts(&[" a b".to_string()]);
        let n = c.normalizations;
        assert!(!n.whitespace_runs && !n.mark_in_text && n.stripped_ends, "{n:?}");
    }

    /// A block's newlines are counted by the threads that cut its lines: an error in the second
    /// 8 MB block still names its line. By construction: 4,500,000 lines of "a" (9 MB, so the
    /// first block ends inside them), then a line "b\xFF", line 4,500,001.
    #[test]
    fn a_bad_byte_in_a_later_block_names_its_line() {
        use std::io::Write;
        let opts = TrainOptions::from_json(r#"{"model":"bpe","spelling":"end","vocab_size":300}"#)
            .unwrap();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&b"a\n".repeat(4_500_000)).unwrap();
        f.write_all(b"b\xFF\nc\n").unwrap();
        f.flush().unwrap();
        let path = f.path().to_str().unwrap();
        for threads in [1, 2] {
            let mut c = UnitCounter::new(opts.spelling().unwrap(), threads, false);
            let why = c
                .feed_file(path, crate::options::InputErrors::Strict, None)
                .unwrap_err()
                .to_string();
            assert!(
                why.contains("line 4500001: invalid UTF-8 (byte 0xFF)"),
                "{threads} threads: {why}"
            );
            let mut c = UnitCounter::new(opts.spelling().unwrap(), threads, false);
            c.feed_file(path, crate::options::InputErrors::Replace, None).unwrap();
            let (counts, _, texts, _) = c.finish().unwrap();
            assert_eq!(texts, 4_500_002, "{threads} threads");
            assert_eq!(counts.get("a"), Some(&4_500_000), "{threads} threads");
            assert_eq!(counts.get("b\u{FFFD}"), Some(&1), "{threads} threads");
        }
    }
}

#[cfg(test)]
mod count_line_tests {
    use super::parse_count_line as parse;

    #[test]
    fn rows_blank_lines_and_refusals() {
        // every expected value below is written out by hand from the rules in the doc comment
        assert_eq!(parse("low\t5"), Ok(Some(("low", 5))));
        assert_eq!(parse("low\t  007 "), Ok(Some(("low", 7))));
        assert_eq!(parse("low\t18446744073709551615"), Ok(Some(("low", u64::MAX))));
        assert_eq!(parse(""), Ok(None));
        assert_eq!(parse(" \t \u{3000}\u{1c}"), Ok(None));
        for bad in [
            "low 5",
            "low",
            "low\t",
            "low\t5\t6",
            "low\t+5",
            "low\t-5",
            "low\t2.5",
            "low\t\u{b2}",
            "low\t\u{663}",
            "low\t 5\u{a0}",
        ] {
            let why = parse(bad).unwrap_err();
            assert!(why.starts_with("expected 'word<TAB>positive integer'"), "{bad:?}: {why}");
        }
        assert!(parse("\t5").unwrap_err().contains("non-empty"));
        for spaced in ["lo w\t5", "lo\u{1c}w\t5", "lo\u{3000}w\t5", "lo\u{b}w\t5"] {
            assert!(parse(spaced).unwrap_err().contains("contains whitespace"), "{spaced:?}");
        }
        assert!(parse("low\t000").unwrap_err().contains("positive whole number, got 0"));
        let big = parse("low\t0018446744073709551616").unwrap_err();
        assert!(big.contains("is 18446744073709551616, above the largest count"), "{big}");
    }
}
