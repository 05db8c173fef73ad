//! The paper's span expression ([`super::SUPERBPE_SPANS`]) written out by hand, on the scanning
//! primitives of the OpenAI pre-splits (`spelling/gpt2.rs`): the regex engine was a third of a
//! SuperBPE training's instructions (7 MB of English, 8k rows). The test below checks it gives
//! the expression's very pieces.
//!
//! The expression is `\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)`, tried leftmost-first at
//! each position; unlike the pre-splits it does not match every character, and the stretches
//! between matches are pieces too (tokenizers' `Isolated`).

use crate::spelling::gpt2::{bmp_table, is_other, Text, NUMBER, SPACE};

/// The end of the expression's match at `i`, if one starts there.
fn match_at(t: &Text<'_>, i: usize) -> Option<usize> {
    let s = t.s;
    let (f0, _) = t.at(i);
    if f0 & NUMBER != 0 {
        return Some(t.run_max(i, NUMBER, 3));
    }
    // ` ?[^\s\p{L}\p{N}]{2,}[\r\n/]*`: with the space if it is followed by two others, else
    // without it (a space is no other, so then nothing matches here)
    let p = if s[i] == b' ' { i + 1 } else { i };
    if p < s.len() {
        let (f1, l1) = t.at(p);
        if is_other(f1) && p + l1 < s.len() && is_other(t.at(p + l1).0) {
            let mut e = t.run(p, is_other);
            while e < s.len() && matches!(s[e], b'\r' | b'\n' | b'/') {
                e += 1;
            }
            return Some(e);
        }
    }
    // ` +(?!\S)`: the run of spaces, less its last when text follows it
    if s[i] == b' ' {
        let mut j = i;
        while j < s.len() && s[j] == b' ' {
            j += 1;
        }
        if j == s.len() || t.at(j).0 & SPACE != 0 {
            return Some(j);
        }
        return (j - 1 > i).then_some(j - 1);
    }
    None
}

/// Calls `f(start, end, is_match)` for every match of the span expression in `text` and every
/// stretch between matches, in order; together they cover `text`.
pub fn split(text: &str, mut f: impl FnMut(usize, usize, bool)) {
    let t = Text { s: text.as_bytes(), bmp: bmp_table() };
    let (mut i, mut gap) = (0usize, 0usize);
    while i < t.s.len() {
        match match_at(&t, i) {
            Some(e) => {
                if gap < i {
                    f(gap, i, false);
                }
                f(i, e, true);
                i = e;
                gap = e;
            }
            None => i += t.at(i).1,
        }
    }
    if gap < t.s.len() {
        f(gap, t.s.len(), false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scanner_equals_the_expression() {
        // every string of up to 5 characters over an alphabet that reaches each alternative
        // (digits of two scripts, others, slash, newlines, spaces, tab, a wide space, a mark,
        // letters), and some real text
        let alphabet = [' ', 'a', '1', '.', '/', '\n', '\t', '\u{2003}', '\u{301}', '٣', 'é'];
        let mut texts: Vec<String> =
            vec!["Hello,  world!! 2024: it's -- /x/y/\r\n  tabs\t\t 東京 ... 12345 ".into()];
        let mut stack = vec![String::new()];
        while let Some(s) = stack.pop() {
            if s.chars().count() == 5 {
                texts.push(s);
                continue;
            }
            texts.push(s.clone());
            for &c in &alphabet {
                let mut t = s.clone();
                t.push(c);
                stack.push(t);
            }
        }
        let re = fancy_regex::Regex::new(super::super::SUPERBPE_SPANS).unwrap();
        for t in &texts {
            let mut fast = Vec::new();
            split(t, |a, b, m| fast.push((&t[a..b], m)));
            let mut slow = Vec::new();
            let mut last = 0;
            for m in re.find_iter(t) {
                let m = m.unwrap();
                if m.start() > last {
                    slow.push((&t[last..m.start()], false));
                }
                slow.push((&t[m.start()..m.end()], true));
                last = m.end();
            }
            if last < t.len() {
                slow.push((&t[last..], false));
            }
            assert_eq!(fast, slow, "{t:?}");
        }
    }
}
