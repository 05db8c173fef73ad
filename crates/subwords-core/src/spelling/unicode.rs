//! Unicode normalization before the split (`normalize=`), with an alignment back to the
//! original text.
//!
//! The forms are the `unicode-normalization` crate's. `nmt_nfkc` is sentencepiece's default
//! rule set: NFKC, then the rules its `nmt_nfkc` map adds on top (control characters dropped,
//! the other whitespace characters turned into a space).
//!
//! Normalization can join characters (NFC composes `e` and U+0301), so the text is cut at
//! *stable boundaries* (UAX #15 §9: before a character with combining class 0 whose quick check
//! says "yes" for the form, nothing before it can combine with anything after it) and each
//! segment is normalized on its own: the result equals normalizing the whole text, and every
//! output byte points at the segment of the original it came from (one character in the common
//! case).

use serde::{Deserialize, Serialize};
use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfc_quick, is_nfkc_quick, IsNormalized, UnicodeNormalization};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    Nfc,
    Nfkc,
    Nfd,
    Nfkd,
    NmtNfkc,
}

impl Form {
    pub fn name(self) -> &'static str {
        match self {
            Form::Nfc => "nfc",
            Form::Nfkc => "nfkc",
            Form::Nfd => "nfd",
            Form::Nfkd => "nfkd",
            Form::NmtNfkc => "nmt_nfkc",
        }
    }

    /// Whether a segment may start at `c`: the first character of its decomposition is a
    /// starter (combining class 0) that composes with nothing before it (its quick check is not
    /// "maybe"), so nothing before `c` can reorder or compose with anything from `c` on.
    fn boundary_before(self, c: char) -> bool {
        if c.is_ascii() {
            return true;
        }
        let mut first: Option<char> = None;
        let mut take = |x: char| {
            first.get_or_insert(x);
        };
        match self {
            Form::Nfc | Form::Nfd => unicode_normalization::char::decompose_canonical(c, &mut take),
            _ => unicode_normalization::char::decompose_compatible(c, &mut take),
        }
        let Some(d) = first else { return true };
        if canonical_combining_class(d) != 0 {
            return false;
        }
        let one = std::iter::once(d);
        match self {
            Form::Nfc => is_nfc_quick(one) != IsNormalized::Maybe,
            Form::Nfkc | Form::NmtNfkc => is_nfkc_quick(one) != IsNormalized::Maybe,
            Form::Nfd | Form::Nfkd => true,
        }
    }

    fn push_segment(self, seg: &str, out: &mut String) {
        match self {
            Form::Nfc => out.extend(seg.nfc()),
            Form::Nfkc => out.extend(seg.nfkc()),
            Form::Nfd => out.extend(seg.nfd()),
            Form::Nfkd => out.extend(seg.nfkd()),
            Form::NmtNfkc => {
                for c in seg.nfkc() {
                    if let Some(c) = nmt_rule(c) {
                        out.push(c);
                    }
                }
            }
        }
    }

    /// The normalized text and, for each of its bytes, the byte span of the original it came
    /// from (one more entry for the end).
    pub fn apply(self, text: &str) -> (String, Vec<(u32, u32)>) {
        let mut out = String::with_capacity(text.len());
        let mut src: Vec<(u32, u32)> = Vec::with_capacity(text.len() + 1);
        // an ASCII character, which every form keeps (`nmt_nfkc` may drop it or make it a space)
        let ascii = |b: u8, at: usize, out: &mut String, src: &mut Vec<(u32, u32)>| {
            let c = if self == Form::NmtNfkc { nmt_rule(b as char) } else { Some(b as char) };
            if let Some(c) = c {
                out.push(c);
                src.push((at as u32, at as u32 + 1));
            }
        };
        let flush = |a: usize, b: usize, out: &mut String, src: &mut Vec<(u32, u32)>| {
            let before = out.len();
            let seg = &text[a..b];
            if seg.is_ascii() {
                // one span per byte (an ASCII character is a boundary, so this is one byte)
                for (k, &x) in seg.as_bytes().iter().enumerate() {
                    ascii(x, a + k, out, src);
                }
                return;
            }
            self.push_segment(seg, out);
            src.extend(std::iter::repeat_n((a as u32, b as u32), out.len() - before));
        };
        let bytes = text.as_bytes();
        let mut start = 0usize;
        let mut i = 0usize;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                // a boundary; followed by ASCII or the end, it is a segment of its own
                if i > start {
                    flush(start, i, &mut out, &mut src);
                }
                start = i;
                i += 1;
                if i == bytes.len() || bytes[i] < 0x80 {
                    ascii(b, start, &mut out, &mut src);
                    start = i;
                }
                continue;
            }
            let c = text[i..].chars().next().expect("a character starts here");
            if i > start && self.boundary_before(c) {
                flush(start, i, &mut out, &mut src);
                start = i;
            }
            i += c.len_utf8();
        }
        if start < text.len() {
            flush(start, text.len(), &mut out, &mut src);
        }
        src.push((text.len() as u32, text.len() as u32));
        (out, src)
    }
}

/// sentencepiece's `nmt_nfkc` additions to NFKC, applied to each character after NFKC:
/// C0 controls other than the whitespace ones, DEL and the C1 controls U+008F and U+009F are
/// dropped; tab, line feed, form feed, carriage return, the zero-width characters U+200B to
/// U+200F, the line and paragraph separators, U+FEFF, U+FFFD and U+1680 become a space.
fn nmt_rule(c: char) -> Option<char> {
    match c {
        '\u{0}'..='\u{8}' | '\u{B}' | '\u{E}'..='\u{1F}' | '\u{7F}' | '\u{8F}' | '\u{9F}' => None,
        '\t'
        | '\n'
        | '\u{C}'
        | '\r'
        | '\u{1680}'
        | '\u{200B}'..='\u{200F}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{FEFF}'
        | '\u{FFFD}' => Some(' '),
        c => Some(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_wise_equals_whole_text() {
        let texts = [
            "e\u{301}cole ﬁne Ｈｅｌｌｏ ² ① 가\u{11A8} \u{1100}\u{1161}\u{11A8} a\u{323}\u{302} \u{F73}",
            "Å Ω ẛ\u{323} \u{0CC6}\u{0CC2}\u{0CD5} 東京",
            // ASCII runs, controls nmt_nfkc drops or makes a space, ASCII before a combining mark
            // and at the end
            "a\tb\u{0}c\r\nd\u{7F}e \u{200B}x\u{301}y\u{1F}z",
            "\u{8F}q\u{FEFF}é\u{301}",
        ];
        for form in [Form::Nfc, Form::Nfkc, Form::Nfd, Form::Nfkd, Form::NmtNfkc] {
            for t in texts {
                let whole: String = match form {
                    Form::Nfc => t.nfc().collect(),
                    Form::Nfkc => t.nfkc().collect(),
                    Form::Nfd => t.nfd().collect(),
                    Form::Nfkd => t.nfkd().collect(),
                    Form::NmtNfkc => t.nfkc().filter_map(nmt_rule).collect(),
                };
                let (seg, src) = form.apply(t);
                assert_eq!(seg, whole, "{form:?} {t:?}");
                assert_eq!(src.len(), seg.len() + 1);
            }
        }
    }

    #[test]
    fn nfkc_maps_the_ligature_to_the_span_of_its_one_character() {
        // "ﬁ" (U+FB01, 3 bytes) is "fi" under NFKC: both output bytes point at bytes 1..4
        let (n, src) = Form::Nfkc.apply("aﬁb");
        assert_eq!(n, "afib");
        assert_eq!(&src[..4], &[(0, 1), (1, 4), (1, 4), (4, 5)]);
    }

    #[test]
    fn nmt_nfkc_spans_by_hand() {
        // a tab becomes a space, NUL is dropped, and each ASCII character spans its own byte;
        // "x" and the combining acute after it (no precomposed form) are one segment, whose
        // three output bytes all span its three input bytes; U+FEFF (3 bytes) becomes a space
        let (n, src) = Form::NmtNfkc.apply("a\tb\u{0}x\u{301}y\u{FEFF}");
        assert_eq!(n, "a bx\u{301}y ");
        assert_eq!(
            src,
            [(0, 1), (1, 2), (2, 3), (4, 7), (4, 7), (4, 7), (7, 8), (8, 11), (11, 11)]
        );
    }
}
