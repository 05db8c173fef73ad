//! The GPT-2 pre-split, written out by hand, and the scanning primitives the other OpenAI
//! patterns (in `subwords-compat`'s tiktoken engine) are written on.
//!
//! The pattern is `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`,
//! tried leftmost-first at each position. A regex engine with look-ahead is the usual way to run
//! it and the slowest part of byte-level encoding; this scanner gives the same chunks in one pass,
//! each character classed by an ASCII table and a 64 Ki-entry table for the rest of the Basic
//! Multilingual Plane. `\s` is Unicode White_Space, `\p{L}`/`\p{N}` the general categories.
//!
//! The one subtle alternative is `\s+(?!\S)`: a whitespace run followed by a non-space gives up its
//! last character, so that a single space can travel with the word after it.

use std::sync::OnceLock;

use unicode_general_category::{get_general_category, GeneralCategory as G};

/// Calls `f(start, end)` with the byte span of every chunk of `text`, in order.
#[inline]
pub fn split(text: &str, f: impl FnMut(usize, usize)) {
    scan(text, r50k_next, f)
}

// Class bits of a character.
pub const LETTER: u8 = 1; // \p{L}
pub const NUMBER: u8 = 2; // \p{N}
pub const SPACE: u8 = 4; // \s
pub const NEWLINE: u8 = 8; // [\r\n]
pub const UPPER: u8 = 16; // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k)
pub const LOWER: u8 = 32; // [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k)

/// `[^\s\p{L}\p{N}]`
#[inline]
pub fn is_other(f: u8) -> bool {
    f & (LETTER | NUMBER | SPACE) == 0
}

/// `[^\r\n\p{L}\p{N}]`: the optional character in front of a word (cl100k, o200k).
#[inline]
pub fn is_prefix(f: u8) -> bool {
    f & (NEWLINE | LETTER | NUMBER) == 0
}

pub fn class_bits(c: char) -> u8 {
    if c == '\r' || c == '\n' {
        return SPACE | NEWLINE;
    }
    if c.is_whitespace() {
        return SPACE;
    }
    match get_general_category(c) {
        G::UppercaseLetter | G::TitlecaseLetter => LETTER | UPPER,
        G::LowercaseLetter => LETTER | LOWER,
        G::ModifierLetter | G::OtherLetter => LETTER | UPPER | LOWER,
        G::NonspacingMark | G::SpacingMark | G::EnclosingMark => UPPER | LOWER,
        G::DecimalNumber | G::LetterNumber | G::OtherNumber => NUMBER,
        _ => 0,
    }
}

/// Class bits of every Basic Multilingual Plane code point, computed once (64 KiB).
pub fn bmp_table() -> &'static [u8] {
    static TABLE: OnceLock<Box<[u8]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0u32..0x10000)
            .map(|u| char::from_u32(u).map_or(0, class_bits))
            .collect::<Vec<u8>>()
            .into_boxed_slice()
    })
}

/// The text being scanned: its bytes and the class table.
pub struct Text<'a> {
    pub s: &'a [u8],
    pub bmp: &'a [u8],
}

impl Text<'_> {
    /// (class bits, byte length) of the character starting at `i` (`i < len`, on a boundary).
    #[inline(always)]
    pub fn at(&self, i: usize) -> (u8, usize) {
        let s = self.s;
        let b0 = s[i];
        if b0 < 0x80 {
            return (self.bmp[b0 as usize], 1);
        }
        // `s` comes from a `&str`, so the continuation bytes are there and well formed.
        let cont = |k: usize| (s.get(i + k).copied().unwrap_or(0x80) & 0x3f) as u32;
        if b0 < 0xe0 {
            let u = ((b0 as u32 & 0x1f) << 6) | cont(1);
            (self.bmp[u as usize], 2)
        } else if b0 < 0xf0 {
            let u = ((b0 as u32 & 0x0f) << 12) | (cont(1) << 6) | cont(2);
            (self.bmp[u as usize & 0xffff], 3)
        } else {
            let u = ((b0 as u32 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
            (char::from_u32(u).map_or(0, class_bits), 4)
        }
    }

    /// The end of the run of characters from `i` whose bits satisfy `keep`.
    #[inline(always)]
    pub fn run(&self, mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
        while i < self.s.len() {
            let (f, len) = self.at(i);
            if !keep(f) {
                break;
            }
            i += len;
        }
        i
    }

    /// The end of at most `max` characters of class `bit` from `i`.
    #[inline(always)]
    pub fn run_max(&self, mut i: usize, bit: u8, max: usize) -> usize {
        for _ in 0..max {
            if i >= self.s.len() {
                break;
            }
            let (f, len) = self.at(i);
            if f & bit == 0 {
                break;
            }
            i += len;
        }
        i
    }

    /// The whitespace run from `i`: (end, start of its last character, end of its last [\r\n]
    /// if any, number of characters).
    #[inline(always)]
    pub fn space_run(&self, i: usize) -> (usize, usize, Option<usize>, usize) {
        let (mut j, mut last, mut newline_end, mut count) = (i, i, None, 0);
        while j < self.s.len() {
            let (f, len) = self.at(j);
            if f & SPACE == 0 {
                break;
            }
            if f & NEWLINE != 0 {
                newline_end = Some(j + len);
            }
            last = j;
            j += len;
            count += 1;
        }
        (j, last, newline_end, count)
    }

    /// Length of a contraction suffix case-insensitively after the apostrophe at `i - 1`, among
    /// `s t m d` (one letter) and `re ve ll` (two), or 0.
    #[inline(always)]
    pub fn contraction_ci(&self, i: usize) -> usize {
        let s = self.s;
        let lower = |k: usize| s.get(k).map(|b| b.to_ascii_lowercase());
        match lower(i) {
            Some(b's' | b't' | b'm' | b'd') => 1,
            Some(b'r' | b'v') if lower(i + 1) == Some(b'e') => 2,
            Some(b'l') if lower(i + 1) == Some(b'l') => 2,
            // U+017F LATIN SMALL LETTER LONG S folds to 's'
            Some(0xc5) if s.get(i + 1) == Some(&0xbf) => 2,
            _ => 0,
        }
    }

    /// ` ?[^\s\p{L}\p{N}]` starting at `i`: where the run of others begins, if the alternative
    /// can match here.
    #[inline(always)]
    pub fn others_start(&self, i: usize, f0: u8) -> Option<usize> {
        if is_other(f0) {
            return Some(i);
        }
        if self.s[i] == b' ' && i + 1 < self.s.len() && is_other(self.at(i + 1).0) {
            return Some(i + 1);
        }
        None
    }
}

pub fn scan(text: &str, next: fn(&Text<'_>, usize) -> usize, mut f: impl FnMut(usize, usize)) {
    let t = Text { s: text.as_bytes(), bmp: bmp_table() };
    let mut i = 0;
    while i < t.s.len() {
        let end = next(&t, i);
        debug_assert!(end > i);
        f(i, end);
        i = end;
    }
}

/// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+` (GPT-2; tiktoken's
/// r50k string `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`
/// gives the same chunks).
pub fn r50k_next(t: &Text<'_>, i: usize) -> usize {
    let s = t.s;
    if s[i] == b'\'' {
        if let Some(b"re" | b"ve" | b"ll") = s.get(i + 1..i + 3) {
            return i + 3;
        }
        if matches!(s.get(i + 1), Some(b's' | b't' | b'm' | b'd')) {
            return i + 2;
        }
    }
    let (f0, len0) = t.at(i);
    // ` ?X+`: a single U+0020 joins the run after it when that run is not whitespace
    let (start, f) = if s[i] == b' ' && i + 1 < s.len() {
        let f1 = t.at(i + 1).0;
        if f1 & SPACE == 0 {
            (i + 1, f1)
        } else {
            (i, f0)
        }
    } else {
        (i, f0)
    };
    if f & LETTER != 0 {
        return t.run(start, |g| g & LETTER != 0);
    }
    if f & NUMBER != 0 {
        return t.run(start, |g| g & NUMBER != 0);
    }
    if is_other(f) {
        return t.run(start, is_other);
    }
    let (end, last, _, count) = t.space_run(i);
    if end == s.len() {
        end
    } else if count >= 2 {
        last // `\s+(?!\S)` leaves the last space for the word after it
    } else {
        i + len0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(s: &str) -> Vec<&str> {
        let mut v = vec![];
        split(s, |a, b| v.push(&s[a..b]));
        v
    }

    #[test]
    fn gpt2_examples() {
        assert_eq!(chunks("Hello world"), ["Hello", " world"]);
        assert_eq!(chunks("I'm here"), ["I", "'m", " here"]);
        assert_eq!(chunks("a  b"), ["a", " ", " b"]);
        assert_eq!(chunks("a \n b"), ["a", " \n", " b"]);
        assert_eq!(chunks("x\ny"), ["x", "\n", "y"]);
        assert_eq!(chunks("x  "), ["x", "  "]);
        assert_eq!(chunks("abc123!!"), ["abc", "123", "!!"]);
        assert_eq!(chunks(" 42 ?!"), [" 42", " ?!"]);
        assert_eq!(chunks("'x"), ["'", "x"]);
        assert_eq!(chunks("café Ωμέγα"), ["café", " Ωμέγα"]);
    }
}
