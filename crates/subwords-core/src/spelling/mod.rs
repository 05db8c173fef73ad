//! Spellings: how text becomes units, units become symbols, and pieces become text again.
//!
//! A learner never knows what a mark is (DESIGN §1); everything about marks lives here.
//!
//! * `end`: units are whitespace-separated words; the last symbol carries `</w>` (`l o w</w>`).
//! * `continuation`: the first symbol is plain, every other carries `##` (`l ##o ##w`).
//! * `front`: whitespace runs become one `▁`, one is put in front, the stream is cut before every
//!   mark (`▁low`); a mark already in the text stays a mark of its own.
//! * `bytes`: UTF-8 bytes, 256 symbols, spaces travel with the following word (or the GPT-2
//!   pre-split).
//!
//! Units are reported as byte spans of the original text so that every piece can be traced back
//! to where it came from (DESIGN §4, offsets).
//!
//! Files: this one cuts text into units; [`symbols`] spells a unit into symbol ids (or, for the
//! learners, symbol texts); [`decode`] turns pieces back into text; [`gpt2`] is the GPT-2
//! pre-split.

pub mod blocks;
pub mod decode;
pub mod front;
pub mod gpt2;
pub mod openai;
pub mod pattern;
pub mod symbols;
pub mod unicode;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    End,
    Continuation,
    Front,
    Bytes,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreSplit {
    /// bytes: the GPT-2 regex pre-split.
    Gpt2,
    /// end/continuation: BERT's basic split — every punctuation character and every CJK
    /// ideograph is a unit of its own.
    Bert,
}

/// How text is spelled. Saved in the model file; every field is validated on load.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spelling {
    pub scheme: Scheme,
    /// `</w>`, `##` or `▁` (one character for `front`); empty for `bytes`.
    pub mark: String,
    /// `front` only: cut the stream before every mark.
    pub split_at_marks: bool,
    /// `bytes` only.
    pub pre_split: Option<PreSplit>,
    pub byte_fallback: bool,
    /// Normalization before the split (BERT's): drop control characters and turn whitespace
    /// into spaces; decompose and drop combining marks; lower-case. Offsets still point into the
    /// original text.
    #[serde(default)]
    pub clean_text: bool,
    #[serde(default)]
    pub strip_accents: bool,
    #[serde(default)]
    pub lowercase: bool,
    /// Unicode normalization (`normalize=`), before everything else; omitted when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalize: Option<unicode::Form>,
    /// A regex pre-split (`pre_split=` a named or any pattern); omitted when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<pattern::Pattern>,
    /// Digit splitting: runs of numbers cut into pieces of at most 1 or 3; omitted when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_digits: Option<u8>,
}

/// Whether BERT's `clean_text` drops `c`: NUL, U+FFFD, and what tokenizers' `BertNormalizer`
/// calls control (its `is_control`: categories Cc, Cf, Co and Cs, tab, newline and carriage
/// return excepted). Its tables are older (Unicode 8) than ours, so the format characters
/// assigned since (Unicode 9-15: U+0890-0891, U+08E2, U+110CD, U+13430-1343F) stay, and so does
/// every unassigned code point. Whitespace is not dropped (it becomes a space).
pub fn bert_cleans_away(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    if c == '\0' || c == '\u{FFFD}' {
        return true;
    }
    !matches!(c, '\t' | '\n' | '\r')
        && !matches!(c, '\u{0890}'..='\u{0891}' | '\u{08E2}' | '\u{110CD}' | '\u{13430}'..='\u{1343F}')
        && matches!(get_general_category(c), G::Control | G::Format | G::Surrogate | G::PrivateUse)
}

impl Spelling {
    pub fn new(
        scheme: Scheme,
        mark: Option<&str>,
        split_at_marks: bool,
        pre_split: Option<PreSplit>,
        byte_fallback: bool,
    ) -> Result<Self> {
        let mark = match (scheme, mark) {
            (Scheme::Bytes, Some(m)) if !m.is_empty() => {
                return Err(Error::Option(
                    "the bytes spelling has no mark; leave `mark` unset".into(),
                ))
            }
            (Scheme::Bytes, _) => String::new(),
            (_, Some(m)) => m.to_string(),
            (Scheme::End, None) => "</w>".into(),
            (Scheme::Continuation, None) => "##".into(),
            (Scheme::Front, None) => "\u{2581}".into(),
        };
        let s = Spelling {
            scheme,
            mark,
            split_at_marks,
            pre_split,
            byte_fallback,
            clean_text: false,
            strip_accents: false,
            lowercase: false,
            normalize: None,
            pattern: None,
            split_digits: None,
        };
        s.validate()?;
        Ok(s)
    }

    pub fn validate(&self) -> Result<()> {
        match self.scheme {
            Scheme::Bytes => {
                if !self.mark.is_empty() {
                    return Err(Error::Option("the bytes spelling has no mark".into()));
                }
                if self.byte_fallback {
                    return Err(Error::Option(
                        "byte_fallback does not apply to the bytes spelling: every symbol is already a byte".into(),
                    ));
                }
            }
            Scheme::Front => {
                let mut chars = self.mark.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if !c.is_whitespace() => {}
                    _ => {
                        return Err(Error::Option(format!(
                            "the front mark must be one non-whitespace character, got {:?}",
                            self.mark
                        )))
                    }
                }
            }
            Scheme::End | Scheme::Continuation => {
                if self.mark.is_empty()
                    || self.mark.chars().any(char::is_whitespace)
                    || self.mark.len() > 16
                {
                    return Err(Error::Option(format!(
                        "the mark must be 1 to 16 bytes with no whitespace, got {:?}",
                        self.mark
                    )));
                }
            }
        }
        match (self.pre_split, self.scheme) {
            (None, _)
            | (Some(PreSplit::Gpt2), Scheme::Bytes)
            | (Some(PreSplit::Bert), Scheme::End | Scheme::Continuation) => {}
            (Some(PreSplit::Gpt2), _) => {
                return Err(Error::Option("pre_split='gpt2' applies to the bytes spelling".into()))
            }
            (Some(PreSplit::Bert), _) => {
                return Err(Error::Option(
                    "pre_split='bert' applies to the end and continuation spellings".into(),
                ))
            }
        }
        if (self.clean_text || self.strip_accents)
            && !matches!(self.scheme, Scheme::End | Scheme::Continuation)
        {
            return Err(Error::Option(
                "strip_accents and clean_text apply to the end and continuation spellings".into(),
            ));
        }
        if self.lowercase && self.scheme == Scheme::Front && self.mark.to_lowercase() != self.mark {
            return Err(Error::Option(
                "lowercase would change the front mark; choose a mark with no lower-case form"
                    .into(),
            ));
        }
        if self.pattern.is_some() {
            if self.pre_split.is_some() {
                return Err(Error::Option(
                    "give one pre-split: a named one or a pattern, not both".into(),
                ));
            }
            if self.scheme == Scheme::Front {
                return Err(Error::Option(
                    "a regex pre-split applies to the bytes, end and continuation spellings; the front spelling cuts at its marks".into(),
                ));
            }
        }
        if let Some(n) = self.split_digits {
            pattern::check_split_digits(n)?;
            if self.scheme == Scheme::Front && !self.split_at_marks {
                return Err(Error::Option(
                    "split_digits needs split_at_marks=True under the front spelling".into(),
                ));
            }
        }
        if !self.split_at_marks && self.scheme != Scheme::Front {
            return Err(Error::Option(
                "split_at_marks=False applies only to the front spelling".into(),
            ));
        }
        Ok(())
    }

    /// Whether text is normalized before it is split.
    pub fn normalizes(&self) -> bool {
        self.clean_text || self.strip_accents || self.lowercase || self.normalize.is_some()
    }

    /// The normalized text and, for each of its bytes, the byte span of the original character
    /// it came from (one more entry for the end).
    pub fn normalize_text(&self, text: &str) -> (String, Vec<(u32, u32)>) {
        let Some(form) = self.normalize else { return self.normalize_chars(text) };
        let (first, src1) = form.apply(text);
        if !(self.clean_text || self.strip_accents || self.lowercase) {
            return (first, src1);
        }
        // then the per-character steps, their spans carried back through the first alignment
        let (out, src2) = self.normalize_chars(&first);
        let n = first.len();
        let src = src2
            .into_iter()
            .map(|(a, b)| {
                let (a, b) = (a as usize, b as usize);
                if a >= n {
                    (text.len() as u32, text.len() as u32)
                } else {
                    (src1[a].0, src1[b.max(a + 1) - 1].1)
                }
            })
            .collect();
        (out, src)
    }

    /// The per-character normalizations (`clean_text`, `strip_accents`, `lowercase`).
    fn normalize_chars(&self, text: &str) -> (String, Vec<(u32, u32)>) {
        use unicode_general_category::{get_general_category, GeneralCategory as G};
        let mut out = String::with_capacity(text.len());
        let mut src: Vec<(u32, u32)> = Vec::with_capacity(text.len() + 1);
        let mut tmp: Vec<char> = Vec::new();
        for (i, c) in text.char_indices() {
            let span = (i as u32, (i + c.len_utf8()) as u32);
            if c.is_ascii() && (c.is_ascii_graphic() || c == ' ') {
                // ASCII letters, digits, punctuation and the space: nothing to clean or strip
                out.push(if self.lowercase { c.to_ascii_lowercase() } else { c });
                src.push(span);
                continue;
            }
            tmp.clear();
            if self.clean_text {
                if bert_cleans_away(c) {
                    continue;
                }
                tmp.push(if c.is_whitespace() { ' ' } else { c });
            } else {
                tmp.push(c);
            }
            if self.strip_accents {
                let mut d: Vec<char> = Vec::new();
                for &c in &tmp {
                    unicode_normalization::char::decompose_canonical(c, |x| {
                        if get_general_category(x) != G::NonspacingMark {
                            d.push(x)
                        }
                    });
                }
                tmp = d;
            }
            for &c in &tmp {
                if self.lowercase {
                    for l in c.to_lowercase() {
                        out.push(l);
                        src.extend(std::iter::repeat_n(span, l.len_utf8()));
                    }
                } else {
                    out.push(c);
                    src.extend(std::iter::repeat_n(span, c.len_utf8()));
                }
            }
        }
        src.push((text.len() as u32, text.len() as u32));
        (out, src)
    }

    pub fn front_mark(&self) -> char {
        self.mark.chars().next().unwrap_or('\u{2581}')
    }

    /// Whether every unit of a text is the mark and a piece of a whitespace-separated word cut
    /// before each mark in it ([`front::for_each_word_observed`] then splits it): `front` cut at
    /// its marks, a non-ASCII mark, no digit splitting and no normalization.
    pub fn front_words_only(&self) -> bool {
        self.scheme == Scheme::Front
            && self.split_at_marks
            && self.split_digits.is_none()
            && !self.normalizes()
            && !self.front_mark().is_ascii()
    }

    /// Calls `f(unit, span)` for every unit of `text`. For `front` the unit is the normalized
    /// form (`▁low`), which is not a slice of `text`, hence the owned/borrowed split: `f` gets the
    /// unit text and the byte span of the original text it stands for.
    pub fn for_each_unit(&self, text: &str, mut f: impl FnMut(&str, (usize, usize))) {
        if self.normalizes() {
            let (norm, src) = self.normalize_text(text);
            return self.for_each_unit_raw(&norm, |u, (a, b)| {
                let start = src[a].0 as usize;
                let end = if b > a { src[b - 1].1 as usize } else { start };
                f(u, (start, end))
            });
        }
        self.for_each_unit_raw(text, f)
    }

    /// [`Spelling::for_each_unit`] on text that is already normalized.
    pub fn for_each_unit_raw(&self, text: &str, mut f: impl FnMut(&str, (usize, usize))) {
        match self.split_digits {
            // units of these spellings are slices of the text: cut each one around its digits
            Some(n) if self.scheme != Scheme::Front => {
                let n = n as usize;
                self.for_each_unit_cut(text, |_, (a, b)| {
                    pattern::split_digits(text, a, b, n, |x, y| f(&text[x..y], (x, y)))
                })
            }
            _ => self.for_each_unit_cut(text, f),
        }
    }

    /// The units before digit splitting (which `front` does itself, at its marks).
    fn for_each_unit_cut(&self, text: &str, mut f: impl FnMut(&str, (usize, usize))) {
        match self.scheme {
            Scheme::End | Scheme::Continuation => match (&self.pattern, self.pre_split) {
                (Some(p), _) => for_each_word(text, |a, b| {
                    p.split(&text[a..b], |x, y| f(&text[a + x..a + y], (a + x, a + y)))
                }),
                (None, Some(PreSplit::Bert)) => {
                    for_each_word(text, |a, b| bert_split(text, a, b, &mut f))
                }
                _ => for_each_word(text, |a, b| f(&text[a..b], (a, b))),
            },
            Scheme::Bytes => match (&self.pattern, self.pre_split) {
                (Some(p), _) => p.split(text, |a, b| f(&text[a..b], (a, b))),
                (None, Some(PreSplit::Gpt2)) => gpt2::split(text, |a, b| f(&text[a..b], (a, b))),
                _ => split_space_led(text, |a, b| f(&text[a..b], (a, b))),
            },
            Scheme::Front => {
                let mark = self.front_mark();
                // the thread's buffer ([`UNIT`]); a reentrant call finds it taken and starts empty
                let mut buf = UNIT.take();
                buf.clear();
                if self.split_at_marks {
                    // the mark's UTF-8 once per text, not pushed as a `char` for every word,
                    // even a short one that never reads the buffer (counting 7 MB of English:
                    // 485 M -> 413 M instructions)
                    let mut mark_utf8 = [0u8; 4];
                    let m = mark.encode_utf8(&mut mark_utf8).len();
                    let digits = self.split_digits.map_or(0, usize::from);
                    for_each_word(text, |a, b| {
                        // the word's own mark stands for the whitespace before it (or the start)
                        let word = &text[a..b];
                        let mut seg_start = a;
                        // a word with no mark in it (and no digit, when digits are split) is one
                        // unit: copied whole, not a character at a time (the walk was
                        // most of counting's instructions)
                        let whole = if word.is_ascii() {
                            (mark as u32) >= 0x80
                                && (digits == 0 || !word.bytes().any(|c| c.is_ascii_digit()))
                        } else {
                            digits == 0 && !word.contains(mark)
                        };
                        if whole {
                            // a short word: one fixed-size copy into a stack buffer, where a
                            // `push_str` called `memmove` for every word (with the
                            // word cache's copies, 12-14% of an encode's samples)
                            if b - a <= SHORT_COPY && a + SHORT_COPY <= text.len() {
                                let mut unit = [0u8; 4 + SHORT_COPY];
                                unit[..4].copy_from_slice(&mark_utf8);
                                unit[m..m + SHORT_COPY]
                                    .copy_from_slice(&text.as_bytes()[a..a + SHORT_COPY]);
                                // SAFETY: the mark's UTF-8 followed by the word's, both whole
                                f(
                                    unsafe { std::str::from_utf8_unchecked(&unit[..m + b - a]) },
                                    (a, b),
                                );
                                return;
                            }
                            buf.clear();
                            buf.push(mark);
                            buf.push_str(word);
                            f(&buf, (a, b));
                            return;
                        }
                        buf.clear();
                        buf.push(mark);
                        let mut run = 0usize; // digits in the current unit (0: not a digit unit)
                        for (k, c) in word.char_indices() {
                            let cut = if c == mark {
                                run = 0;
                                true
                            } else if digits > 0 && c.is_numeric() {
                                let cut = (run == 0 && !buf.is_empty()) || run == digits;
                                if run == digits {
                                    run = 0;
                                }
                                run += 1;
                                cut
                            } else if run > 0 {
                                run = 0;
                                true
                            } else {
                                false
                            };
                            if cut {
                                f(&buf, (seg_start, a + k));
                                buf.clear();
                                seg_start = a + k;
                            }
                            buf.push(c);
                        }
                        f(&buf, (seg_start, b));
                    });
                } else {
                    // one unit per text: the whole normalized stream
                    let mut first: Option<usize> = None;
                    let mut last = 0;
                    for_each_word(text, |a, b| {
                        buf.push(mark);
                        buf.push_str(&text[a..b]);
                        first.get_or_insert(a);
                        last = b;
                    });
                    if let Some(a) = first {
                        f(&buf, (a, last));
                    }
                }
                if buf.capacity() <= UNIT_KEEP {
                    UNIT.set(buf);
                }
            }
        }
    }
}

thread_local! {
    /// The buffer in which the `front` spelling builds its units, kept by each thread from one
    /// text to the next: a new `String` per text cost a `malloc`, a `realloc` and a
    /// `free` for every line of a batch (callgrind, our 32k Unigram on 1 MB of multilingual
    /// lines: about 8 M of 100 M instructions a call), on every thread at once.
    static UNIT: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

/// Larger buffers are freed, not kept: a text of one long unit does not pin its size.
const UNIT_KEEP: usize = 1 << 16;

/// Words of at most this many bytes become a `front` unit by one fixed-size copy of this many
/// bytes of the text (when the text has them), not through the thread's buffer.
const SHORT_COPY: usize = 16;

/// BERT's punctuation: ASCII symbols (which BERT counts as punctuation, `$` and `^` included)
/// and every Unicode punctuation category.
pub fn is_bert_punctuation(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    matches!(
        get_general_category(c),
        G::ConnectorPunctuation
            | G::DashPunctuation
            | G::OpenPunctuation
            | G::ClosePunctuation
            | G::InitialPunctuation
            | G::FinalPunctuation
            | G::OtherPunctuation
    )
}

/// The CJK ideograph blocks BERT isolates (not Hangul, Hiragana or Katakana).
pub fn is_cjk_ideograph(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// One whitespace word cut BERT's way: punctuation and CJK ideographs stand alone.
fn bert_split(text: &str, a: usize, b: usize, f: &mut impl FnMut(&str, (usize, usize))) {
    let mut start = a;
    for (i, c) in text[a..b].char_indices() {
        let i = a + i;
        if is_bert_punctuation(c) || is_cjk_ideograph(c) {
            if i > start {
                f(&text[start..i], (start, i));
            }
            let e = i + c.len_utf8();
            f(&text[i..e], (i, e));
            start = e;
        }
    }
    if start < b {
        f(&text[start..b], (start, b));
    }
}

/// Whitespace-separated words as byte spans (whitespace as [`char::is_whitespace`] has it).
///
/// It walks bytes, not characters: an ASCII byte is whitespace by a table test, and of the
/// other characters only those whose first byte is `C2`, `E1`, `E2` or `E3` can be whitespace
/// (U+0085, U+00A0, U+1680, U+2000-U+205F, U+3000), so only those are decoded. Against the
/// `char` walk with `is_whitespace` on every character: counting 7 MB of English under `front`
/// 517 M -> 485 M instructions.
pub fn for_each_word(text: &str, mut f: impl FnMut(usize, usize)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut start: Option<usize> = None;
    let mut i = 0usize;
    while i < n {
        let b = bytes[i];
        let (ws, len) = if b < 0x80 {
            (matches!(b, b'\t'..=b'\r' | b' '), 1)
        } else {
            let len = match b {
                0xF0.. => 4,
                0xE0.. => 3,
                _ => 2,
            };
            let ws = matches!(b, 0xC2 | 0xE1..=0xE3)
                && text[i..].chars().next().is_some_and(char::is_whitespace);
            (ws, len)
        };
        if ws {
            if let Some(s) = start.take() {
                f(s, i);
            }
        } else if start.is_none() {
            start = Some(i);
        }
        i += len;
    }
    if let Some(s) = start {
        f(s, n);
    }
}

/// The bytes spelling without a pre-split: cut where a whitespace run starts, and before the
/// last whitespace character of a run that a non-whitespace character follows, so one space
/// travels with the word after it (`a  b` -> `a`, ` `, ` b`).
pub fn split_space_led(text: &str, mut f: impl FnMut(usize, usize)) {
    let mut start = 0;
    let mut prev_ws = false;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let ws = c.is_whitespace();
        if ws && i > start {
            let run_starts = !prev_ws;
            let word_follows = iter.peek().is_some_and(|&(_, d)| !d.is_whitespace());
            if run_starts || word_follows {
                f(start, i);
                start = i;
            }
        }
        prev_ws = ws;
    }
    if start < text.len() {
        f(start, text.len());
    }
}

/// Which of the three `front` normalizations changed a text (004_…, the three rows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Normalizations {
    pub whitespace_runs: bool,
    pub stripped_ends: bool,
    pub mark_in_text: bool,
}

impl Normalizations {
    pub fn observe(&mut self, text: &str, mark: char) {
        // the ends are stripped when the text starts or ends with whitespace: its first and
        // last characters tell, where trimming walked each line's indentation a character at
        // a time (half of this pass on code)
        if !self.stripped_ends
            && (text.chars().next().is_some_and(char::is_whitespace)
                || text.chars().next_back().is_some_and(char::is_whitespace))
        {
            self.stripped_ends = true;
        }
        if self.whitespace_runs {
            // nothing left to learn from the runs (this pass was 5% of counting's
            // instructions at 7 MB): only whether the mark occurs (never whitespace, so the
            // untrimmed text holds it when the trimmed one does), which a substring search
            // answers faster than the walk below
            if !self.mark_in_text && text.contains(mark) {
                self.mark_in_text = true;
            }
            return;
        }
        let core = text.trim_matches(char::is_whitespace);
        // a run between words that is anything but one space collapses to one mark
        let mut run = 0usize;
        let mut plain = true;
        for c in core.chars() {
            if c.is_whitespace() {
                run += 1;
                plain &= c == ' ';
            } else {
                if run > 1 || !plain {
                    self.whitespace_runs = true;
                }
                run = 0;
                plain = true;
            }
            if c == mark {
                self.mark_in_text = true;
            }
        }
    }

    /// The names of the normalizations that happened, in a fixed order.
    pub fn names(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.whitespace_runs {
            v.push("whitespace_runs".to_string());
        }
        if self.stripped_ends {
            v.push("stripped_ends".to_string());
        }
        if self.mark_in_text {
            v.push("mark_in_text".to_string());
        }
        v
    }

    pub fn merge(&mut self, o: &Normalizations) {
        self.whitespace_runs |= o.whitespace_runs;
        self.stripped_ends |= o.stripped_ends;
        self.mark_in_text |= o.mark_in_text;
    }
}

/// The byte of a byte-fallback row's text, `<0xNN>` with exactly two hex digits (either case);
/// anything else, a sign or a third digit included, is not a byte row.
pub fn parse_byte_piece(piece: &str) -> Option<u8> {
    let h = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if h.len() != 2 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(h, 16).ok()
}

/// The byte a character of [`byte_to_char_table`] stands for: its exact inverse, computed from the
/// table's three runs of shifted bytes instead of searched for.
pub fn char_to_byte(c: char) -> Option<u8> {
    let c = c as u32;
    let printable = |b: u32| {
        (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b)
    };
    match c {
        0..=0xff if printable(c) => Some(c as u8),
        0x100..=0x120 => Some((c - 0x100) as u8), // 0x00..=0x20
        0x121..=0x142 => Some((c - 0x121 + 0x7f) as u8), // 0x7f..=0xa0
        0x143 => Some(0xad),
        _ => None,
    }
}

/// The GPT-2 byte-to-unicode table: printable characters standing for bytes, so byte-level pieces
/// can be shown and stored as text (`Ġlow` is ` low`).
pub fn byte_to_char_table() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut n = 0u32;
    for b in 0..256u32 {
        let printable =
            (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b);
        table[b as usize] = if printable {
            char::from_u32(b).unwrap()
        } else {
            let c = char::from_u32(256 + n).unwrap();
            n += 1;
            c
        };
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observe_reports_stripped_ends_runs_and_the_mark() {
        // each text on its own, with the flags worked out by hand: whitespace at either end
        // (ASCII or not, or the whole text) is stripped; a run between words that is not one
        // space collapses; the mark is found once the runs are already known, past any
        // leading whitespace
        let seen = |texts: &[&str]| {
            let mut n = Normalizations::default();
            for t in texts {
                n.observe(t, '\u{2581}');
            }
            n.names()
        };
        let none: Vec<String> = vec![];
        assert_eq!(seen(&["", "a b", "x"]), none);
        assert_eq!(seen(&["\tdef f():"]), ["stripped_ends"]);
        assert_eq!(seen(&["end\u{3000}"]), ["stripped_ends"]);
        assert_eq!(seen(&["   "]), ["stripped_ends"]);
        assert_eq!(seen(&["a  b"]), ["whitespace_runs"]);
        assert_eq!(seen(&["a\tb"]), ["whitespace_runs"]);
        assert_eq!(
            seen(&["a  b", "  x\u{2581}y"]),
            ["whitespace_runs", "stripped_ends", "mark_in_text"]
        );
        assert_eq!(seen(&["x\u{2581}"]), ["mark_in_text"]);
    }

    fn units(s: &Spelling, t: &str) -> Vec<String> {
        let mut v = vec![];
        s.for_each_unit(t, |u, _| v.push(u.to_string()));
        v
    }

    #[test]
    fn front_units() {
        let s = Spelling::new(Scheme::Front, None, true, None, false).unwrap();
        assert_eq!(units(&s, "  hello   world "), ["▁hello", "▁world"]);
        assert_eq!(units(&s, "a ▁ b"), ["▁a", "▁", "▁", "▁b"]);
        assert_eq!(units(&s, "a▁b"), ["▁a", "▁b"]);
        let s = Spelling::new(Scheme::Front, None, false, None, false).unwrap();
        assert_eq!(units(&s, "hello  world"), ["▁hello▁world"]);
    }

    #[test]
    fn front_units_owe_nothing_to_the_text_before() {
        // the unit buffer is kept by the thread (UNIT): a long text, then short ones, a unit
        // larger than the buffer kept, and a call made from inside another call's `f`
        let s = Spelling::new(Scheme::Front, None, true, None, false).unwrap();
        let whole = Spelling::new(Scheme::Front, None, false, None, false).unwrap();
        let long = "x".repeat(UNIT_KEEP + 10);
        assert_eq!(units(&whole, "a long text of words"), ["▁a▁long▁text▁of▁words"]);
        assert_eq!(units(&whole, "b"), ["▁b"]);
        assert_eq!(units(&s, "abcdefgh ij"), ["▁abcdefgh", "▁ij"]);
        assert_eq!(units(&s, "k"), ["▁k"]);
        assert_eq!(units(&s, &long), [format!("▁{long}")]);
        assert_eq!(units(&s, "l m"), ["▁l", "▁m"]);
        let mut seen = vec![];
        s.for_each_unit("outer words", |u, _| {
            seen.push(u.to_string());
            seen.extend(units(&whole, "in ner"));
            seen.push(u.to_string());
        });
        assert_eq!(seen, ["▁outer", "▁in▁ner", "▁outer", "▁words", "▁in▁ner", "▁words"]);
    }

    #[test]
    fn front_units_of_every_short_length_are_the_word_and_no_more() {
        // words of 0 to 20 bytes, each followed by enough text for the 16-byte copy (the bytes
        // past the word must not reach the unit) and, the last one, at the very end of the text
        let s = Spelling::new(Scheme::Front, None, true, None, false).unwrap();
        for n in 1..=20 {
            let word: String = "abcdefghijklmnopqrstuvwxyz".chars().take(n).collect();
            let text = format!("{word} {} {word}", "z".repeat(40));
            assert_eq!(
                units(&s, &text),
                [format!("▁{word}"), format!("▁{}", "z".repeat(40)), format!("▁{word}")]
            );
            let wide: String = "éü".chars().cycle().take(n).collect();
            assert_eq!(
                units(&s, &format!("{wide}xyzxyzxyzxyzxyzxyz")),
                [format!("▁{wide}xyzxyzxyzxyzxyzxyz")]
            );
            assert_eq!(
                units(&s, &format!("{wide}\txyz")),
                [format!("▁{wide}"), "▁xyz".to_string()]
            );
        }
    }

    #[test]
    fn words_split_at_every_whitespace_character_and_no_other() {
        // every character up to U+FFFF and a few above, between two letters: two words exactly
        // when std's `char::is_whitespace` calls it whitespace (U+0085, U+00A0, U+1680,
        // U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and the six ASCII ones)
        let mut spaces = 0;
        for c in (0..0x11000u32).chain([0x1F600, 0x10FFFF]).filter_map(char::from_u32) {
            let text = format!("x{c}y{c}{c}z{c}");
            let mut got = vec![];
            for_each_word(&text, |a, b| got.push(&text[a..b]));
            let want: Vec<&str> =
                text.split(char::is_whitespace).filter(|w| !w.is_empty()).collect();
            assert_eq!(got, want, "U+{:04X}", c as u32);
            spaces += c.is_whitespace() as usize;
        }
        assert_eq!(spaces, 25);
    }

    #[test]
    fn bert_units() {
        let s =
            Spelling::new(Scheme::Continuation, None, true, Some(PreSplit::Bert), false).unwrap();
        assert_eq!(
            units(&s, "Dr. didn't ## 研究生"),
            ["Dr", ".", "didn", "'", "t", "#", "#", "研", "究", "生"]
        );
    }

    #[test]
    fn bytes_units() {
        let s = Spelling::new(Scheme::Bytes, None, true, None, false).unwrap();
        assert_eq!(units(&s, "a  b c"), ["a", " ", " b", " c"]);
        assert_eq!(units(&s, " x"), [" x"]);
        assert_eq!(units(&s, "a\t\n  b "), ["a", "\t\n ", " b", " "]);
    }

    #[test]
    fn byte_table_is_gpt2() {
        let t = byte_to_char_table();
        assert_eq!(t[b' ' as usize], 'Ġ');
        assert_eq!(t[b'a' as usize], 'a');
        assert_eq!(t[b'\n' as usize], 'Ċ');
    }

    #[test]
    fn char_to_byte_inverts_the_table_and_nothing_else() {
        let t = byte_to_char_table();
        for b in 0..=255u8 {
            assert_eq!(char_to_byte(t[b as usize]), Some(b));
        }
        let inverse =
            (0..0x400u32).filter_map(char::from_u32).filter(|&c| char_to_byte(c).is_some()).count();
        assert_eq!(inverse, 256);
    }

    #[test]
    fn byte_rows_are_two_hex_digits() {
        assert_eq!(parse_byte_piece("<0x0A>"), Some(10));
        assert_eq!(parse_byte_piece("<0xff>"), Some(255));
        for bad in ["<0x+F>", "<0xF>", "<0x100>", "<0x-1>", "0x0A", "<0x0A", "<0xGG>", "<0x 1>"] {
            assert_eq!(parse_byte_piece(bad), None, "{bad}");
        }
    }
}
