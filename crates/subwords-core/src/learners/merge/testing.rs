//! Test helpers shared by the merge methods' tests: a symbol table of one-character pieces, a
//! word spelled in it, and a piece's text.

use super::Symbols;

/// A symbol table holding `alphabet`, ids from 0 in order, each one symbol long.
pub(super) fn symbols(alphabet: &[&str]) -> Symbols {
    let mut s = Symbols::new(0, b"");
    for a in alphabet {
        s.push(a.as_bytes().to_vec(), 1);
    }
    s
}

/// `word`'s characters as the ids of `s`.
pub(super) fn spell(s: &Symbols, word: &str) -> Vec<u32> {
    word.chars().map(|c| s.index[c.to_string().as_bytes()]).collect()
}

/// The text of piece `t`.
pub(super) fn text(s: &Symbols, t: u32) -> String {
    String::from_utf8(s.text(t).to_vec()).unwrap()
}
