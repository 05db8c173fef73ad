//! The pre-splits of OpenAI's encodings, written out by hand.
//!
//! tiktoken cuts text with a regular expression before BPE; a look-ahead regex engine is the
//! slowest part of its encoder. Each scanner here gives the very same chunks as its pattern, run
//! leftmost-first (the regex engines' semantics: at each position the first alternative that
//! matches wins, and inside an alternative greedy quantifiers backtrack in order). The tests in
//! `tests/interop/test_interop_tiktoken.py` check every scanner against tiktoken itself on
//! adversarial text, and the encoders against tiktoken itself.
//!
//! Character classes, as the regex engines define them:
//! * `\s` is the Unicode White_Space property (25 code points; Rust's `char::is_whitespace`).
//! * `\p{L}` is Lu Ll Lt Lm Lo, `\p{N}` is Nd Nl No, `\p{M}` is Mn Mc Me. Marks are *not*
//!   letters, so `[^\s\p{L}\p{N}]` ("other") includes them.
//! * `(?i:s)` also matches U+017F LATIN SMALL LETTER LONG S (simple case folding); no other
//!   letter of the contractions has a non-ASCII case variant.
//!
//! Every scanner is one pass with an ASCII table and a 64 Ki-entry table for the rest of the
//! Basic Multilingual Plane; work per chunk is linear in the chunk, so the whole split is linear.
//! The table, the scanning primitives and GPT-2's pattern (r50k) are the core's
//! (`gpt2.rs`, which byte-level training uses too); cl100k and o200k are written here on them.
//! They live in the core so that trained models with `pre_split="cl100k"`/`"o200k"`/`"llama3"`
//! run them too (`pattern.rs`, whose tests check them against the expressions); the tiktoken
//! engine in `subwords-compat` reaches them as `tiktoken::split`.
//!
//! cl100k, o200k and Llama 3 run on the block scanner (`blocks.rs`: bit masks of 64-byte
//! blocks), which calls the chunk scanners here around non-ASCII characters; `o200k_scalar`
//! and `cl100k_scalar` run these alone, the reference its tests compare with.

use super::gpt2::{
    bmp_table, is_other, is_prefix, r50k_next, scan, Text, LETTER, LOWER, NEWLINE, NUMBER, UPPER,
};

/// Which OpenAI pattern a rank file is used with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// GPT-2's pattern, used by r50k_base, p50k_base and p50k_edit.
    R50k,
    /// cl100k_base.
    Cl100k,
    /// o200k_base (and o200k_harmony).
    O200k,
}

impl Pattern {
    pub fn from_name(name: &str) -> Option<Pattern> {
        match name {
            "r50k" => Some(Pattern::R50k),
            "cl100k" => Some(Pattern::Cl100k),
            "o200k" => Some(Pattern::O200k),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Pattern::R50k => "r50k",
            Pattern::Cl100k => "cl100k",
            Pattern::O200k => "o200k",
        }
    }

    /// Calls `f(start, end)` with the byte span of every chunk of `text`, in order.
    #[inline]
    pub fn split(self, text: &str, f: impl FnMut(usize, usize)) {
        match self {
            Pattern::R50k => scan(text, r50k_next, f),
            Pattern::Cl100k => super::blocks::split::<{ super::blocks::CL100K }>(text, f),
            Pattern::O200k => super::blocks::split::<{ super::blocks::O200K }>(text, f),
        }
    }
}

/// Calls `f(start, end)` with the byte span of every chunk of `text` under Llama 3's form of
/// cl100k (`pattern::named("llama3")`, the expression tokenizer.json files of cl100k carry):
/// cl100k's chunks, except that a whitespace run reaching the end of the text after a line break
/// ends at its last line break (`\s*[\r\n]+` comes before `\s+(?!\S)`), the rest one chunk.
#[inline]
pub fn llama3_split(text: &str, f: impl FnMut(usize, usize)) {
    super::blocks::split::<{ super::blocks::LLAMA3 }>(text, f)
}

// The drivers. Most chunks of real text start at an ASCII byte and end at one: a word, a
// number, a run of punctuation, a whitespace run. For those the driver decides the chunk from
// the bytes (the ASCII part of the class table) and calls the character-level scanner of the
// pattern (`cl100k_like`, `o200k_next`) only where a non-ASCII character could change the
// answer: that scanner is the definition, the fast path takes only the cases where it agrees.
// On 1 MB of English lines the split went from 49.9 to 20.9 instructions a byte under o200k
// and from 29.1 to 20.1 under cl100k (callgrind).

/// Calls `f(start, end)` for every chunk under cl100k (`END_FIRST`) or Llama 3's form of it,
/// one chunk at a time from the bytes and the class table: the reference of the block scanner
/// (`blocks.rs`), which [`Pattern::split`] and [`llama3_split`] run.
pub fn cl100k_scalar<const END_FIRST: bool>(text: &str, mut f: impl FnMut(usize, usize)) {
    let t = Text { s: text.as_bytes(), bmp: bmp_table() };
    let mut i = 0;
    while i < t.s.len() {
        let end = cl100k_chunk_end::<END_FIRST>(&t, i);
        f(i, end);
        i = end;
    }
}

/// The end of the cl100k (`END_FIRST`) or Llama 3 chunk at `i`: the block scanner's fallback.
#[inline(never)]
pub(super) fn cl100k_chunk_end<const END_FIRST: bool>(t: &Text<'_>, i: usize) -> usize {
    match cl100k_ascii::<END_FIRST>(t, i) {
        0 => cl100k_slow::<END_FIRST>(t, i),
        e => e,
    }
}

#[inline(never)]
fn cl100k_slow<const END_FIRST: bool>(t: &Text<'_>, i: usize) -> usize {
    cl100k_like(t, i, END_FIRST)
}

/// Calls `f(start, end)` for every chunk under o200k, one chunk at a time from the bytes and
/// the class table: the reference of the block scanner (`blocks.rs`), which `Pattern::split`
/// runs.
pub fn o200k_scalar(text: &str, mut f: impl FnMut(usize, usize)) {
    let t = Text { s: text.as_bytes(), bmp: bmp_table() };
    let mut i = 0;
    while i < t.s.len() {
        let end = o200k_chunk_end(&t, i);
        f(i, end);
        i = end;
    }
}

/// The end of the o200k chunk at `i`: the block scanner's fallback.
#[inline(never)]
pub(super) fn o200k_chunk_end(t: &Text<'_>, i: usize) -> usize {
    match o200k_ascii(t, i) {
        0 => o200k_slow(t, i),
        e => e,
    }
}

#[inline(never)]
fn o200k_slow(t: &Text<'_>, i: usize) -> usize {
    o200k_next(t, i)
}

#[inline(always)]
fn ascii_alpha(b: u8) -> bool {
    (b | 0x20).wrapping_sub(b'a') < 26
}

/// The end of the run of bytes from `j` that satisfy `keep`.
#[inline(always)]
fn byte_run(s: &[u8], mut j: usize, keep: impl Fn(u8) -> bool) -> usize {
    while j < s.len() && keep(s[j]) {
        j += 1;
    }
    j
}

pub(super) const HIGH: u64 = 0x8080_8080_8080_8080;
pub(super) const ONES: u64 = 0x0101_0101_0101_0101;

/// The high bit of each byte of `w` that lies in `lo..=hi` (`hi < 0x80`): with the high bits
/// cleared first, adding `0x80 - lo` sets a byte's high bit from `lo` up and adding
/// `0x7f - hi` from `hi + 1` up, and neither carries into the next byte.
#[inline(always)]
pub(super) fn lanes_in(w: u64, lo: u8, hi: u8) -> u64 {
    let a = w & !HIGH;
    let from_lo = a.wrapping_add(ONES * (0x80 - lo) as u64);
    let past_hi = a.wrapping_add(ONES * (0x7f - hi) as u64);
    from_lo & !past_hi & !w & HIGH
}

#[inline(always)]
fn upper_lanes(w: u64) -> u64 {
    lanes_in(w, b'A', b'Z')
}

#[inline(always)]
fn lower_lanes(w: u64) -> u64 {
    lanes_in(w, b'a', b'z')
}

/// [`byte_run`] eight bytes at a time: the end of the run from `j` of the bytes `lanes` marks
/// (a run of letters ends at its first byte outside it without a branch per byte, where the byte
/// loop's exit mispredicted once a word). The last bytes of the text go a byte at a time.
#[inline(always)]
fn swar_run(s: &[u8], mut j: usize, lanes: impl Fn(u64) -> u64) -> usize {
    while let Some(w) = s.get(j..j + 8) {
        let w = u64::from_le_bytes(w.try_into().unwrap());
        let out = !lanes(w) & HIGH;
        if out != 0 {
            return j + (out.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    byte_run(s, j, |b| lanes(b as u64) & 0x80 != 0)
}

/// The high bit of each ASCII byte of `w` that is `\s` (tab to carriage return, space).
#[inline(always)]
fn space_lanes(w: u64) -> u64 {
    lanes_in(w, 0x09, 0x0d) | lanes_in(w, b' ', b' ')
}

/// The high bit of each ASCII byte of `w` in `[^\s\p{L}\p{N}]`.
#[inline(always)]
fn other_lanes(w: u64) -> u64 {
    let letter = lanes_in(w | (ONES * 0x20), b'a', b'z');
    !(letter | lanes_in(w, b'0', b'9') | space_lanes(w)) & !w & HIGH
}

/// `t.run(k, is_other)`, eight ASCII bytes at a time while it can.
#[inline(always)]
fn others_run(t: &Text<'_>, k: usize) -> usize {
    let j = swar_run(t.s, k, other_lanes);
    match t.s.get(j) {
        Some(&c) if c >= 0x80 => t.run(j, is_other), // a non-ASCII character may continue it
        _ => j,
    }
}

/// `t.space_run(i)` for a run of ASCII whitespace that ends at an ASCII byte within the eight
/// bytes from `i` (the indentation and line breaks of code and prose), without a branch per
/// byte; otherwise `t.space_run(i)` itself.
#[inline(always)]
fn space_run(t: &Text<'_>, i: usize) -> (usize, usize, Option<usize>, usize) {
    if let Some(w) = t.s.get(i..i + 8) {
        let w = u64::from_le_bytes(w.try_into().unwrap());
        let out = !space_lanes(w) & HIGH;
        let n = (out.trailing_zeros() / 8) as usize; // 8 when all eight are spaces
        if n > 0 && n < 8 && t.s[i + n] < 0x80 {
            let lines =
                (lanes_in(w, b'\n', b'\n') | lanes_in(w, b'\r', b'\r')) & !(u64::MAX << (8 * n));
            let newline_end = if lines != 0 {
                Some(i + (63 - lines.leading_zeros() as usize) / 8 + 1)
            } else {
                None
            };
            return (i + n, i + n - 1, newline_end, n);
        }
    }
    t.space_run(i)
}

/// `\p{N}{1,3}` from the ASCII digit at `i`, or 0 when a non-ASCII character (which may be a
/// digit) ends a run shorter than 3.
#[inline(always)]
fn ascii_digits(s: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < s.len() && j < i + 3 && s[j].is_ascii_digit() {
        j += 1;
    }
    if j < i + 3 && j < s.len() && s[j] >= 0x80 {
        0
    } else {
        j
    }
}

/// What the character after the ASCII byte at `i` is, as class bits (`i + 1 < len`).
#[inline(always)]
fn next_bits(t: &Text<'_>, i: usize) -> u8 {
    let c = t.s[i + 1];
    if c < 0x80 {
        t.bmp[c as usize]
    } else {
        t.at(i + 1).0
    }
}

/// The end of the cl100k chunk at `i` when the bytes decide it, else 0.
#[inline(always)]
fn cl100k_ascii<const END_FIRST: bool>(t: &Text<'_>, i: usize) -> usize {
    let s = t.s;
    let b = s[i];
    // non-ASCII, and an apostrophe (a contraction comes first): the scanner decides
    if b >= 0x80 || b == b'\'' {
        return 0;
    }
    let f0 = t.bmp[b as usize];
    let letters = |k: usize| {
        let j = byte_run(s, k, ascii_alpha);
        // a non-ASCII letter may continue the run
        if j < s.len() && s[j] >= 0x80 {
            0
        } else {
            j
        }
    };
    if f0 & LETTER != 0 {
        return letters(i);
    }
    if f0 & NUMBER != 0 {
        return ascii_digits(s, i);
    }
    if i + 1 >= s.len() {
        return 0;
    }
    let f1 = next_bits(t, i);
    if f1 & LETTER != 0 && is_prefix(f0) {
        return if s[i + 1] >= 0x80 { 0 } else { letters(i + 1) };
    }
    let k = if is_other(f0) {
        i
    } else if b == b' ' && is_other(f1) {
        i + 1
    } else {
        return cl100k_space(t, i, END_FIRST);
    };
    let j = t.run(k, is_other);
    byte_run(s, j, |c| c == b'\r' || c == b'\n')
}

/// The end of the o200k chunk at `i` when the bytes decide it, else 0.
#[inline(always)]
fn o200k_ascii(t: &Text<'_>, i: usize) -> usize {
    let s = t.s;
    let b = s[i];
    if b >= 0x80 {
        return 0;
    }
    let f0 = t.bmp[b as usize];
    let k = if f0 & LETTER != 0 {
        i
    } else if f0 & NUMBER != 0 {
        return ascii_digits(s, i);
    } else if i + 1 >= s.len() {
        return 0;
    } else {
        let f1 = next_bits(t, i);
        if f1 & (UPPER | LOWER) != 0 && is_prefix(f0) {
            if s[i + 1] >= 0x80 {
                return 0; // a non-ASCII letter or mark after the prefix
            }
            i + 1
        } else {
            // neither word alternative matches (an ASCII character is no mark), nor a number
            let k = if is_other(f0) {
                i
            } else if b == b' ' && is_other(f1) {
                i + 1
            } else {
                return o200k_space(t, i);
            };
            return newline_or_slash_run(t, others_run(t, k));
        }
    };
    // `U*L+` else `U+L*`: over ASCII the two classes are apart, so both are an upper-case run
    // and a lower-case run after it, at least one letter in all
    let j = swar_run(s, swar_run(s, k, upper_lanes), lower_lanes);
    match s.get(j) {
        Some(&c) if c >= 0x80 => 0, // a non-ASCII letter or mark may continue the word
        Some(b'\'') => contraction_suffix(t, j),
        _ => j,
    }
}

/// cl100k's scanner (`end_first`), and Llama 3's (not `end_first`), one character at a time.
///
/// cl100k: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
///
/// Llama 3: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`:
/// the possessive and greedy forms give the same chunks, as nothing follows them in their
/// alternative; only the order of the whitespace alternatives differs from cl100k
/// (`end_first`: `\s++$` is tried before the line-break alternative).
#[inline(always)]
fn cl100k_like(t: &Text<'_>, i: usize, end_first: bool) -> usize {
    let s = t.s;
    if s[i] == b'\'' {
        let k = t.contraction_ci(i + 1);
        if k > 0 {
            return i + 1 + k;
        }
    }
    let (f0, len0) = t.at(i);
    if f0 & LETTER != 0 {
        return t.run(i, |g| g & LETTER != 0);
    }
    if is_prefix(f0) && i + len0 < s.len() && t.at(i + len0).0 & LETTER != 0 {
        return t.run(i + len0, |g| g & LETTER != 0);
    }
    if f0 & NUMBER != 0 {
        return t.run_max(i, NUMBER, 3);
    }
    if let Some(k) = t.others_start(i, f0) {
        let j = t.run(k, is_other);
        return t.run(j, |g| g & NEWLINE != 0);
    }
    cl100k_space(t, i, end_first)
}

/// cl100k's whitespace alternatives at `i`, where no other alternative matches.
#[inline(always)]
fn cl100k_space(t: &Text<'_>, i: usize, end_first: bool) -> usize {
    let (end, last, newline_end, count) = space_run(t, i);
    if end == t.s.len() && (end_first || newline_end.is_none()) {
        end // `\s++$` (llama3: `\s+(?!\S)` at the end)
    } else if let Some(e) = newline_end {
        e // `\s*[\r\n]`: up to the last line break of the run
    } else if count >= 2 {
        last // `\s+(?!\S)`
    } else {
        t.at(i).1 + i // `\s`
    }
}

/// o200k_base's pattern, alternatives joined by `|`:
/// `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
/// `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
/// `\p{N}{1,3}`, ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`.
fn o200k_next(t: &Text<'_>, i: usize) -> usize {
    let (f0, len0) = t.at(i);
    if let Some(e) = o200k_word(t, i, f0, len0) {
        return e;
    }
    if f0 & NUMBER != 0 {
        return t.run_max(i, NUMBER, 3);
    }
    if let Some(k) = t.others_start(i, f0) {
        let j = t.run(k, is_other);
        return newline_or_slash_run(t, j);
    }
    o200k_space(t, i)
}

/// o200k's whitespace alternatives at `i`, where no other alternative matches.
#[inline(always)]
fn o200k_space(t: &Text<'_>, i: usize) -> usize {
    let (end, last, newline_end, count) = space_run(t, i);
    if let Some(e) = newline_end {
        e // `\s*[\r\n]+`
    } else if end == t.s.len() {
        end // `\s+(?!\S)` at the end of the text
    } else if count >= 2 {
        last // `\s+(?!\S)`
    } else {
        end // `\s+` (one character)
    }
}

fn newline_or_slash_run(t: &Text<'_>, mut j: usize) -> usize {
    while matches!(t.s.get(j), Some(b'\r' | b'\n' | b'/')) {
        j += 1;
    }
    j
}

/// The two word alternatives of o200k, tried in the regex engine's backtracking order: with the
/// optional prefix character first, then without it, first alternative before second.
#[inline(always)]
fn o200k_word(t: &Text<'_>, i: usize, f0: u8, len0: usize) -> Option<usize> {
    let with_prefix = is_prefix(f0) && i + len0 < t.s.len();
    let upper_then_lower = |k: usize| -> Option<usize> {
        // `U*L+`: U* takes its longest run, then gives characters back until L+ can start.
        // The character after the run is not in U, so L+ starts there only if it is in L;
        // otherwise at the last run character that is in both U and L (Lm, Lo, M).
        let mut j = k;
        let mut last_shared = None;
        while j < t.s.len() {
            let (f, len) = t.at(j);
            if f & UPPER == 0 {
                break;
            }
            if f & LOWER != 0 {
                last_shared = Some(j);
            }
            j += len;
        }
        let l = if j < t.s.len() && t.at(j).0 & LOWER != 0 { Some(j) } else { last_shared }?;
        Some(t.run(l, |g| g & LOWER != 0))
    };
    let upper_plus_lower = |k: usize| -> Option<usize> {
        // `U+L*`: both greedy, and L* cannot fail.
        if k >= t.s.len() || t.at(k).0 & UPPER == 0 {
            return None;
        }
        let j = t.run(k, |g| g & UPPER != 0);
        Some(t.run(j, |g| g & LOWER != 0))
    };
    let end = (if with_prefix { upper_then_lower(i + len0) } else { None })
        .or_else(|| upper_then_lower(i))
        .or_else(|| if with_prefix { upper_plus_lower(i + len0) } else { None })
        .or_else(|| upper_plus_lower(i))?;
    Some(contraction_suffix(t, end))
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `e`.
#[inline(always)]
pub(super) fn contraction_suffix(t: &Text<'_>, e: usize) -> usize {
    if t.s.get(e) == Some(&b'\'') {
        let k = t.contraction_ci(e + 1);
        if k > 0 {
            return e + 1 + k;
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(p: Pattern, s: &str) -> Vec<&str> {
        let mut v = vec![];
        p.split(s, |a, b| v.push(&s[a..b]));
        v
    }

    #[test]
    fn r50k_examples() {
        let p = Pattern::R50k;
        assert_eq!(chunks(p, "Hello world"), ["Hello", " world"]);
        assert_eq!(chunks(p, "I'm here"), ["I", "'m", " here"]);
        assert_eq!(chunks(p, "a \n b"), ["a", " \n", " b"]);
        assert_eq!(chunks(p, "x  "), ["x", "  "]);
        assert_eq!(chunks(p, " 42 ?!"), [" 42", " ?!"]);
    }

    #[test]
    fn cl100k_examples() {
        let p = Pattern::Cl100k;
        assert_eq!(chunks(p, "Hello world"), ["Hello", " world"]);
        assert_eq!(chunks(p, "I'M here"), ["I", "'M", " here"]);
        assert_eq!(chunks(p, "12345"), ["123", "45"]);
        assert_eq!(chunks(p, ".Hello"), [".Hello"]);
        assert_eq!(chunks(p, "a  \n\n  b"), ["a", "  \n\n", " ", " b"]);
        assert_eq!(chunks(p, "a  \n  "), ["a", "  \n  "]);
        assert_eq!(chunks(p, "!!\n\nx"), ["!!\n\n", "x"]);
    }

    fn ascii_upper(b: u8) -> bool {
        b.wrapping_sub(b'A') < 26
    }

    fn ascii_lower(b: u8) -> bool {
        b.wrapping_sub(b'a') < 26
    }

    #[test]
    fn swar_runs_equal_byte_runs() {
        // every byte value at every place of a 20-byte run of letters, from every start
        for b in 0..=255u8 {
            for at in 0..20 {
                let mut s = [b'q'; 20];
                s[at] = b;
                for j in 0..20 {
                    assert_eq!(swar_run(&s, j, lower_lanes), byte_run(&s, j, ascii_lower));
                    let upper = s.map(|c| if c == b'q' { b'Q' } else { c });
                    assert_eq!(swar_run(&upper, j, upper_lanes), byte_run(&upper, j, ascii_upper));
                }
            }
        }
    }

    #[test]
    fn swar_space_and_other_runs_equal_the_scanners() {
        // every byte value at every place among spaces, line breaks and punctuation, and a
        // non-ASCII letter and space behind, from every start
        let t0 = bmp_table();
        for fill in [b' ', b'\n', b'!', b'/'] {
            for b in 0..=127u8 {
                for at in 0..12 {
                    let mut s = vec![fill; 12];
                    s[at] = b;
                    s[(at + 5) % 12] = b'\r';
                    for tail in ["", "\u{e9}", "\u{a0}", "x"] {
                        let mut v = s.clone();
                        v.extend_from_slice(tail.as_bytes());
                        let t = Text { s: &v, bmp: t0 };
                        for j in 0..12 {
                            if t.at(j).0 & super::super::gpt2::SPACE != 0 {
                                assert_eq!(space_run(&t, j), t.space_run(j), "{v:?} {j}");
                            }
                            if is_other(t.at(j).0) {
                                assert_eq!(others_run(&t, j), t.run(j, is_other), "{v:?} {j}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn o200k_examples() {
        let p = Pattern::O200k;
        assert_eq!(chunks(p, "HelloWorld"), ["Hello", "World"]);
        assert_eq!(chunks(p, "HELLO world's"), ["HELLO", " world's"]);
        assert_eq!(chunks(p, "a  \n  "), ["a", "  \n", "  "]);
        assert_eq!(chunks(p, "x!/\n/y"), ["x", "!/\n/", "y"]);
    }
}
