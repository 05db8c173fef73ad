//! The GPT-2 pre-split, written out by hand.
//!
//! The pattern is `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`,
//! tried leftmost-first at each position. A regex engine with look-ahead is the usual way to run
//! it and the slowest part of byte-level encoding; this scanner gives the same chunks in one pass
//! with an ASCII fast path. `\s` is Unicode White_Space, `\p{L}`/`\p{N}` the general categories.
//!
//! The one subtle alternative is `\s+(?!\S)`: a whitespace run followed by a non-space gives up its
//! last character, so that a single space can travel with the word after it.

use unicode_general_category::{get_general_category, GeneralCategory as G};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Number,
    Space,
    Other,
}

#[inline]
fn class(c: char) -> Class {
    if c.is_ascii() {
        let b = c as u8;
        return if b.is_ascii_alphabetic() {
            Class::Letter
        } else if b.is_ascii_digit() {
            Class::Number
        } else if matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
            Class::Space
        } else {
            Class::Other
        };
    }
    if c.is_whitespace() {
        return Class::Space;
    }
    match get_general_category(c) {
        G::UppercaseLetter
        | G::LowercaseLetter
        | G::TitlecaseLetter
        | G::ModifierLetter
        | G::OtherLetter => Class::Letter,
        G::DecimalNumber | G::LetterNumber | G::OtherNumber => Class::Number,
        _ => Class::Other,
    }
}

/// Calls `f(start, end)` with the byte span of every chunk of `text`, in order.
pub fn split(text: &str, mut f: impl FnMut(usize, usize)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    let next_char = |i: usize| -> Option<char> { text[i..].chars().next() };
    while i < n {
        // contractions
        if bytes[i] == b'\'' && i + 1 < n {
            let rest = &bytes[i + 1..];
            let len = if rest.starts_with(b"re") || rest.starts_with(b"ve") || rest.starts_with(b"ll") {
                3
            } else if matches!(rest[0], b's' | b't' | b'm' | b'd') {
                2
            } else {
                0
            };
            if len > 0 {
                f(i, i + len);
                i += len;
                continue;
            }
        }
        let c = next_char(i).unwrap();
        let cls = class(c);
        // ` ?X+` alternatives: an optional single U+0020 then a run of one class
        let (run_start, run_class) = if c == ' ' {
            match next_char(i + 1) {
                Some(d) if class(d) != Class::Space => (i + 1, class(d)),
                _ => (i, Class::Space),
            }
        } else {
            (i, cls)
        };
        if run_class != Class::Space {
            let mut j = run_start;
            while j < n {
                let d = next_char(j).unwrap();
                if class(d) != run_class {
                    break;
                }
                j += d.len_utf8();
            }
            f(i, j);
            i = j;
            continue;
        }
        // whitespace: `\s+(?!\S)` then `\s+`
        let mut j = i;
        let mut last = i;
        while j < n {
            let d = next_char(j).unwrap();
            if !d.is_whitespace() {
                break;
            }
            last = j;
            j += d.len_utf8();
        }
        if j < n && last > i {
            // followed by a non-space: give up the last whitespace character
            f(i, last);
            i = last;
        } else {
            f(i, j);
            i = j;
        }
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
