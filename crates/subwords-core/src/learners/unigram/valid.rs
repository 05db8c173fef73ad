//! `split_by_script`: sentencepiece's rule for which substrings may become pieces (its trainer's
//! `IsValidSentencePiece`, on by default there as `split_by_unicode_script` and
//! `split_by_number`). A seed candidate of two or more symbols is dropped when it mixes two
//! scripts:
//!
//! - each symbol has the Unicode script of its character (the `unicode-script` tables; a
//!   character they do not list is Common), the spelling's marks stripped first;
//! - Hiragana, Katakana and U+30FC (the prolonged sound mark) count as Han, so Japanese words
//!   stay whole;
//! - an Inherited character (a combining mark) takes the script of the one before it;
//! - a decimal digit (0-9, U+FF10-U+FF19) is Common, like punctuation, with `split_by_number`
//!   (the default); without it, a digit goes with any script, and so does the symbol after it
//!   (sentencepiece compares each symbol only with the one before it);
//! - a symbol that is only the word mark (`▁`, `</w>`) is skipped.
//!
//! The piece is valid when no two consecutive compared symbols have different scripts, "any"
//! matching everything: `abc1` and `foo(` are out (Latin then Common), `1.5` and `(1)` are in.
//! The rule only ever rejects a piece by one of its prefixes, so each position of the runs gets
//! its *extent* once ([`extents`]), the longest valid piece starting there, and the seed keeps a
//! substring only if it is no longer than its position's extent. The seed is the only place the
//! rule acts: EM and pruning only ever remove pieces.
//!
//! sentencepiece's position rule for `▁` (only at a piece's start, when words are split at it)
//! holds already, since each run is one word.

use unicode_script::{Script, UnicodeScript};

use super::Runs;

/// What one symbol contributes to the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolClass {
    /// Only the word mark: skipped, as if it were not there.
    Mark,
    /// A digit without `split_by_number`: goes with any script, and so does the symbol after it.
    Any,
    /// A combining character: the script of the symbol before it.
    Inherited,
    /// A script (Hiragana and Katakana folded into Han).
    Script(u8),
}

impl SymbolClass {
    /// The class of a symbol spelled `text` once the spelling's `mark` is stripped from either
    /// end (a symbol holding only the mark is [`SymbolClass::Mark`]).
    pub fn of(text: &str, mark: &str, split_by_number: bool) -> SymbolClass {
        let mut t = text;
        if !mark.is_empty() {
            t = t.strip_prefix(mark).unwrap_or(t);
            t = t.strip_suffix(mark).unwrap_or(t);
        }
        let Some(c) = t.chars().next() else {
            return SymbolClass::Mark;
        };
        let digit = c.is_ascii_digit() || ('\u{FF10}'..='\u{FF19}').contains(&c);
        if digit {
            return if split_by_number {
                SymbolClass::Script(Script::Common as u8)
            } else {
                SymbolClass::Any
            };
        }
        match c.script() {
            Script::Inherited => SymbolClass::Inherited,
            Script::Hiragana | Script::Katakana | Script::Han => {
                SymbolClass::Script(Script::Han as u8)
            }
            _ if c == '\u{30FC}' => SymbolClass::Script(Script::Han as u8),
            Script::Unknown => SymbolClass::Script(Script::Common as u8),
            s => SymbolClass::Script(s as u8),
        }
    }
}

/// The longest valid piece starting at `syms[0]` (at least 1), at most `max_len` symbols.
fn extent(syms: &[u32], class: &[SymbolClass], max_len: usize) -> u32 {
    let mut prev: Option<u8> = None; // None: any
    let n = syms.len().min(max_len);
    for (k, &s) in syms[..n].iter().enumerate() {
        let cur = match class[s as usize] {
            SymbolClass::Mark => continue,
            SymbolClass::Any => None,
            SymbolClass::Inherited => prev,
            SymbolClass::Script(x) => Some(x),
        };
        if let (Some(a), Some(b)) = (prev, cur) {
            if a != b {
                return k.max(1) as u32;
            }
        }
        prev = cur;
    }
    n.max(1) as u32
}

/// Every position's extent (see the module header): `out[p]` for each position `p` of every
/// run, `class` by the runs' symbol numbers.
pub(super) fn extents(runs: &Runs, class: &[SymbolClass], max_len: usize) -> Vec<u32> {
    let mut out = vec![0u32; runs.syms.len()];
    for r in 0..runs.len() {
        let (a, b) = (runs.start[r] as usize, runs.start[r + 1] as usize);
        for p in a..b {
            out[p] = extent(&runs.syms[p..b], class, max_len);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext_of(text: &str, split_by_number: bool) -> u32 {
        let class: Vec<SymbolClass> =
            text.chars().map(|c| SymbolClass::of(&c.to_string(), "▁", split_by_number)).collect();
        let syms: Vec<u32> = (0..class.len() as u32).collect();
        extent(&syms, &class, usize::MAX)
    }

    #[test]
    fn pieces_stop_where_the_script_changes() {
        // by hand from the rule in the module header
        assert_eq!(ext_of("abc1", true), 3); // Latin, then a Common digit
        assert_eq!(ext_of("abc1", false), 4); // a digit goes with anything
        assert_eq!(ext_of("αβ1ab", false), 5); // ... and so does the symbol after it
        assert_eq!(ext_of("αβ1ab", true), 2);
        assert_eq!(ext_of("foo(", true), 3);
        assert_eq!(ext_of("1.5", true), 3); // all Common
        assert_eq!(ext_of("▁abc", true), 4); // the mark is never compared
        assert_eq!(ext_of("▁1a", true), 2);
        assert_eq!(ext_of("ab\u{301}c", true), 4); // a combining acute takes Latin
        assert_eq!(ext_of("\u{301}a", true), 2); // first: goes with anything
        assert_eq!(ext_of("カタカナ漢字ひら", true), 8); // Katakana and Hiragana as Han
        assert_eq!(ext_of("ラーメン", true), 4); // U+30FC, Common in Unicode, counts as Han
        assert_eq!(ext_of("αβγabc", true), 3);
        assert_eq!(ext_of("x", true), 1);
    }

    #[test]
    fn marks_are_stripped_before_the_script_is_read() {
        assert_eq!(SymbolClass::of("##a", "##", true), SymbolClass::of("a", "", true));
        assert_eq!(SymbolClass::of("a</w>", "</w>", true), SymbolClass::of("a", "", true));
        assert_eq!(SymbolClass::of("▁", "▁", true), SymbolClass::Mark);
        assert_eq!(SymbolClass::of("7", "▁", false), SymbolClass::Any);
        assert_eq!(SymbolClass::of("１", "", true), SymbolClass::of("(", "", true));
    }
}
