//! Regex pre-splits and digit splitting.
//!
//! A [`Pattern`] is a regular expression run by `fancy-regex` (the engine tokenizers uses, for
//! the look-arounds these patterns need). Every match is a unit, and so is every stretch of text
//! between two matches: no text is ever dropped (tokenizers' `Isolated` behaviour). The named
//! patterns are OpenAI's and Meta's published pre-split expressions; `gpt2` keeps its hand-written
//! scanner (`gpt2.rs`), which `tests` in this file check against the regex.
//!
//! Digit splitting cuts every run of numeric characters (`\p{N}`: Nd, Nl, No, Rust's
//! `char::is_numeric`) into pieces of at most `n` digits, counted from the left (as `\p{N}{1,3}`
//! does), and cuts it off the text around it.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

/// The named patterns: name, expression.
pub const NAMED: &[(&str, &str)] = &[
    ("gpt2", r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"),
    // tiktoken's current form of cl100k_base's expression (possessive quantifiers, `\s++$`)
    (
        "cl100k",
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
    ),
    (
        "o200k",
        concat!(
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
        ),
    ),
    // Llama 3's tokenizer.json: cl100k's original form (it differs from tiktoken's current one
    // on whitespace that ends the text after a newline)
    (
        "llama3",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    ),
];

/// The expression of a named pattern.
pub fn named(name: &str) -> Option<&'static str> {
    NAMED.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// The names, for error messages.
pub fn names() -> String {
    NAMED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// A compiled pre-split expression; saved (and compared) as its source text.
#[derive(Clone)]
pub struct Pattern {
    source: String,
    re: Arc<fancy_regex::Regex>,
    /// The hand-written scanner of a named expression (cl100k, o200k, llama3), proven equal to
    /// the regex by the tests below.
    fast: Option<Fast>,
    /// SuperBPE's span expression, run by its hand-written scanner (`learners/superword/spans.rs`).
    spans: bool,
}

/// A hand-written scanner standing in for the regex.
#[derive(Clone, Copy, Debug)]
enum Fast {
    OpenAi(super::openai::Pattern),
    Llama3,
}

impl Fast {
    #[inline]
    fn split(self, text: &str, f: impl FnMut(usize, usize)) {
        match self {
            Fast::OpenAi(p) => p.split(text, f),
            Fast::Llama3 => super::openai::llama3_split(text, f),
        }
    }

    /// The scanner of `source`, if it is a named expression with one or an equivalent spelling.
    fn of(source: &str) -> Option<Fast> {
        match NAMED.iter().find(|(_, p)| *p == source).map(|(n, _)| *n) {
            Some("cl100k") => Some(Fast::OpenAi(super::openai::Pattern::Cl100k)),
            Some("o200k") => Some(Fast::OpenAi(super::openai::Pattern::O200k)),
            Some("llama3") => Some(Fast::Llama3),
            _ if source == CL100K_ONIG => Some(Fast::OpenAi(super::openai::Pattern::Cl100k)),
            _ => None,
        }
    }
}

/// cl100k's expression as tokenizer.json files written for Oniguruma carry it (`\p{N}{1,3}`:
/// there a possessive interval reads as "repeat the interval"); the same chunks, as nothing
/// follows the interval in its alternative.
const CL100K_ONIG: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// Patterns longer than this are refused (a model file is untrusted input).
pub const MAX_PATTERN_LEN: usize = 4096;

fn compile(source: &str) -> Result<fancy_regex::Regex> {
    fancy_regex::RegexBuilder::new(source).build().map_err(|e| {
        let at = match &e {
            fancy_regex::Error::ParseError(pos, _) => format!(" at byte {pos}"),
            _ => String::new(),
        };
        Error::Option(format!(
            "the pre-split pattern {source:?} is not a valid regular expression{at}: {e}"
        ))
    })
}

impl Pattern {
    /// Compiles `source`; an invalid expression is an option error naming the position.
    pub fn new(source: &str) -> Result<Self> {
        if source.is_empty() {
            return Err(Error::Option(
                "the pre-split pattern is empty; give a regular expression or one of the names: "
                    .to_string()
                    + &names(),
            ));
        }
        if source.len() > MAX_PATTERN_LEN {
            return Err(Error::Option(format!(
                "the pre-split pattern is {} bytes; at most {MAX_PATTERN_LEN} are accepted",
                source.len()
            )));
        }
        let re = match NAMED.iter().position(|(_, p)| *p == source) {
            // a named expression is compiled once per process: o200k's Unicode classes take
            // tens of milliseconds to compile, which every model load and every call that
            // builds a spelling would otherwise pay
            Some(i) => {
                static COMPILED: [OnceLock<Arc<fancy_regex::Regex>>; 4] =
                    [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
                const _: () = assert!(NAMED.len() == 4, "one OnceLock per named pattern");
                match COMPILED[i].get() {
                    Some(re) => re.clone(),
                    None => {
                        let re = Arc::new(compile(source)?);
                        COMPILED[i].get_or_init(|| re).clone()
                    }
                }
            }
            None => Arc::new(compile(source)?),
        };
        let fast = Fast::of(source);
        let spans = source == crate::learners::superword::SUPERBPE_SPANS;
        Ok(Pattern { source: source.to_string(), re, fast, spans })
    }

    /// A pattern matching `text` literally (tokenizers' `Split` with a `String` pattern).
    pub fn literal(text: &str) -> Result<Self> {
        Pattern::new(&fancy_regex::escape(text))
    }

    /// The pieces of `text` in order, each with whether it is a match (`true`) or the stretch
    /// between matches (`false`); together they cover `text`. Empty matches cut nothing.
    pub fn pieces(&self, text: &str) -> Vec<((usize, usize), bool)> {
        let mut out = Vec::new();
        if let Some(fast) = self.fast {
            // these expressions match every character: every chunk is a match
            fast.split(text, |a, b| out.push(((a, b), true)));
            return out;
        }
        if self.spans {
            crate::learners::superword::spans::split(text, |a, b, m| out.push(((a, b), m)));
            return out;
        }
        let mut last = 0;
        for m in self.re.find_iter(text) {
            let Ok(m) = m else { break };
            if m.start() == m.end() {
                continue;
            }
            if m.start() > last {
                out.push(((last, m.start()), false));
            }
            out.push(((m.start(), m.end()), true));
            last = m.end();
        }
        if last < text.len() {
            out.push(((last, text.len()), false));
        }
        out
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Calls `f(start, end)` for every match of the pattern in `text` and for every stretch
    /// between matches, in order; together they cover `text`. Empty matches cut nothing. If the
    /// engine gives up (its backtracking limit), the rest of the text is one piece.
    pub fn split(&self, text: &str, f: impl FnMut(usize, usize)) {
        if let Some(fast) = self.fast {
            return fast.split(text, f);
        }
        if self.spans {
            let mut f = f;
            return crate::learners::superword::spans::split(text, |a, b, _| f(a, b));
        }
        self.split_regex(text, f)
    }

    /// Calls `f(start, end)` for every non-empty match of the pattern in `text`, in order; the
    /// text between matches is skipped (tiktoken's reading of a pattern). If the engine gives up
    /// (its backtracking limit), the rest of the text from where the last match ended is one piece.
    pub fn matches(&self, text: &str, mut f: impl FnMut(usize, usize)) {
        if let Some(fast) = self.fast {
            return fast.split(text, f);
        }
        if self.spans {
            return crate::learners::superword::spans::split(text, |a, b, m| {
                if m {
                    f(a, b)
                }
            });
        }
        let mut last = 0;
        for m in self.re.find_iter(text) {
            let Ok(m) = m else {
                if last < text.len() {
                    f(last, text.len());
                }
                return;
            };
            if m.start() < m.end() {
                f(m.start(), m.end());
                last = m.end();
            }
        }
    }

    /// [`Pattern::split`] by the regex engine alone.
    pub fn split_regex(&self, text: &str, mut f: impl FnMut(usize, usize)) {
        let mut last = 0;
        for m in self.re.find_iter(text) {
            let Ok(m) = m else { break };
            if m.start() == m.end() {
                continue;
            }
            if m.start() > last {
                f(last, m.start());
            }
            f(m.start(), m.end());
            last = m.end();
        }
        if last < text.len() {
            f(last, text.len());
        }
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}
impl Eq for Pattern {}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", self.source)
    }
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.source)
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Pattern::new(&s).map_err(serde::de::Error::custom)
    }
}

/// Digit splitting: `n` is 1 (single digits) or 3 (runs of up to three).
pub fn check_split_digits(n: u8) -> Result<()> {
    if n == 1 || n == 3 {
        Ok(())
    } else {
        Err(Error::Option(format!(
            "split_digits must be 1 (single digits) or 3 (runs of up to three), got {n}"
        )))
    }
}

/// Cuts `text[a..b]` around its digits: every numeric run is cut off the text next to it and
/// into pieces of at most `n` characters. Calls `f(start, end)` for each piece.
pub fn split_digits(text: &str, a: usize, b: usize, n: usize, mut f: impl FnMut(usize, usize)) {
    let mut start = a;
    let mut run = 0usize; // digits in the current piece (0: the piece is not digits)
    for (i, c) in text[a..b].char_indices() {
        let i = a + i;
        if c.is_numeric() {
            if (run == 0 && i > start) || run == n {
                f(start, i);
                start = i;
                run = 0;
            }
            run += 1;
        } else if run > 0 {
            f(start, i);
            start = i;
            run = 0;
        }
    }
    if start < b {
        f(start, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(p: &Pattern, t: &str) -> Vec<String> {
        let mut v = Vec::new();
        p.split(t, |a, b| v.push(t[a..b].to_string()));
        v
    }

    #[test]
    fn gaps_between_matches_are_kept() {
        // `\d+` matches "12" and "345"; "ab" and "c" are the gaps
        let p = Pattern::new(r"\d+").unwrap();
        assert_eq!(pieces(&p, "ab12c345"), ["ab", "12", "c", "345"]);
    }

    #[test]
    fn matches_skip_the_gaps_and_empty_matches() {
        // `\d*` matches "12" and "345" and the empty string at every other position
        let p = Pattern::new(r"\d*").unwrap();
        let mut v = Vec::new();
        p.matches("ab12c345", |a, b| v.push((a, b)));
        assert_eq!(v, [(2, 4), (5, 8)]);
    }

    #[test]
    fn cl100k_cuts_digits_in_threes_and_keeps_the_space_with_the_word() {
        // by hand from the expression: " world" is `[^\r\n\p{L}\p{N}]?\p{L}+`, digits `\p{N}{1,3}`
        let p = Pattern::new(named("cl100k").unwrap()).unwrap();
        assert_eq!(pieces(&p, "hello world 12345"), ["hello", " world", " ", "123", "45"]);
    }

    #[test]
    fn an_invalid_pattern_names_the_position() {
        let e = Pattern::new("ab(c").unwrap_err().to_string();
        assert!(e.contains("not a valid regular expression"), "{e}");
        assert!(e.contains("at byte"), "{e}");
    }

    #[test]
    fn digits_are_cut_singly_or_in_threes() {
        let t = "ab1234c5";
        let mut v = Vec::new();
        split_digits(t, 0, t.len(), 1, |a, b| v.push(&t[a..b]));
        assert_eq!(v, ["ab", "1", "2", "3", "4", "c", "5"]);
        let mut v = Vec::new();
        split_digits(t, 0, t.len(), 3, |a, b| v.push(&t[a..b]));
        assert_eq!(v, ["ab", "123", "4", "c", "5"]);
    }

    #[test]
    fn the_cl100k_o200k_and_llama3_scanners_equal_their_expressions() {
        // every string of up to 5 characters over an alphabet that reaches each alternative
        // (case, contractions, digits, newlines, slashes, marks, other), and some real text
        let alphabet = ['a', 'B', ' ', '1', '\'', 's', '\n', '/', '.', '\u{301}', '\u{2003}'];
        let mut texts: Vec<String> = vec![
            "Hello world, it's 2024!  CamelCase HTTPServer I'M\r\n\r\n x/y//\n tabs\t\t 東京 naïve 12345".into(),
            "end of text after a line break \n  ".into(),
            "a\r\n\r\n".into(),
        ];
        let mut stack = vec![String::new()];
        while let Some(s) = stack.pop() {
            if s.chars().count() == 5 {
                texts.push(s);
                continue;
            }
            for &c in &alphabet {
                let mut t = s.clone();
                t.push(c);
                stack.push(t);
            }
        }
        for (name, source) in [
            ("cl100k", named("cl100k").unwrap()),
            ("o200k", named("o200k").unwrap()),
            ("llama3", named("llama3").unwrap()),
            ("cl100k for Oniguruma", CL100K_ONIG),
        ] {
            let p = Pattern::new(source).unwrap();
            assert!(p.fast.is_some(), "{name}");
            for t in &texts {
                let mut fast = Vec::new();
                p.split(t, |a, b| fast.push(t[a..b].to_string()));
                let mut slow = Vec::new();
                p.split_regex(t, |a, b| slow.push(t[a..b].to_string()));
                assert_eq!(fast, slow, "{name} {t:?}");
            }
        }
    }

    #[test]
    fn the_scanners_equal_their_expressions_on_random_text() {
        // Random strings of pieces drawn from every class the patterns tell apart: letters of
        // each case category (Lu Ll Lt Lm Lo, ASCII and not, astral too), marks (Mn Mc Me),
        // numbers (Nd Nl No), apostrophes and contractions in every case, whitespace of each
        // kind (line breaks, Unicode spaces, runs), slashes, punctuation, controls. The drivers'
        // ASCII fast paths hand over to the character scanner at every non-ASCII character; this
        // puts one on each side of every ASCII decision.
        use rand::{Rng, SeedableRng};
        const PIECES: &[&str] = &[
            "a",
            "z",
            "A",
            "Z",
            "s",
            "S",
            "t",
            "T",
            "d",
            "D",
            "m",
            "M",
            "l",
            "L",
            "v",
            "V",
            "e",
            "E",
            "r",
            "R",
            "k",
            "word",
            "Word",
            "WORD",
            "wOrD",
            "HTTPServer",
            "é",
            "ß",
            "ж",
            "ς",
            "ſ",
            "É",
            "Σ",
            "Ж",
            "ǅ",
            "ᾈ",
            "ʰ",
            "ˆ",
            "ー",
            "中",
            "ا",
            "あ",
            "한",
            "\u{1d400}",
            "\u{10428}",
            "\u{10400}",
            "\u{20000}",
            "\u{301}",
            "\u{903}",
            "\u{20dd}",
            "\u{64b}",
            "0",
            "7",
            "42",
            "12345",
            "٣",
            "Ⅻ",
            "½",
            "²",
            "\u{1d7ce}",
            "'",
            "’",
            "'s",
            "'S",
            "'t",
            "'LL",
            "'ll",
            "'lL",
            "'Re",
            "'VE",
            "'d",
            "'M",
            "'ſ",
            " ",
            "  ",
            "   ",
            "\t",
            "\n",
            "\r",
            "\r\n",
            "\n\n",
            " \n",
            "\n ",
            "\x0b",
            "\x0c",
            "\u{85}",
            "\u{a0}",
            "\u{1680}",
            "\u{2003}",
            "\u{2028}",
            "\u{3000}",
            "\u{200b}",
            "/",
            "//",
            "\n/",
            ".",
            ",",
            "!",
            "?",
            "-",
            "_",
            "#",
            "<|",
            "|>",
            "\"",
            "(",
            ")",
            "...",
            "—",
            "“",
            "😀",
            "\u{1f3fb}",
            "\0",
            "\x1f",
            "\x7f",
            "\u{ad}",
            "\u{feff}",
        ];
        let mut rng = rand::rngs::SmallRng::seed_from_u64(20_261_206);
        let texts: Vec<String> = (0..30_000)
            .map(|_| {
                let n = rng.random_range(0..24);
                (0..n).map(|_| PIECES[rng.random_range(0..PIECES.len())]).collect()
            })
            .collect();
        for name in ["cl100k", "o200k", "llama3"] {
            let p = Pattern::new(named(name).unwrap()).unwrap();
            assert!(p.fast.is_some(), "{name}");
            for t in &texts {
                let mut fast = Vec::new();
                p.split(t, |a, b| fast.push(&t[a..b]));
                let mut slow = Vec::new();
                p.split_regex(t, |a, b| slow.push(&t[a..b]));
                assert_eq!(fast, slow, "{name} {t:?}");
            }
        }
    }

    #[test]
    fn the_gpt2_scanner_equals_the_gpt2_expression() {
        // the hand-written scanner is kept only because it gives the regex's very chunks
        let p = Pattern::new(named("gpt2").unwrap()).unwrap();
        let mut texts: Vec<String> = vec![
            "Hello world, it's 2024!  Twice  spaced\n\nnew lines\t\ttabs ".into(),
            "I'm we'll they'd you've she's o'clock 'S 'LL".into(),
            "naïve café ünïcödé 東京 123abc ½ ² ①  \u{a0}x\u{2003}y".into(),
            "   leading and trailing   ".into(),
            "a\r\nb\r\n\r\n c  \n d".into(),
        ];
        // every short string over a small alphabet that exercises each alternative
        let alphabet = ['a', ' ', '1', '\'', 's', '\n', '.', 'é', '\u{2003}'];
        let mut stack = vec![String::new()];
        while let Some(s) = stack.pop() {
            if s.chars().count() == 5 {
                texts.push(s);
                continue;
            }
            for &c in &alphabet {
                let mut t = s.clone();
                t.push(c);
                stack.push(t);
            }
        }
        for t in &texts {
            let mut fast = Vec::new();
            crate::spelling::gpt2::split(t, |a, b| fast.push(t[a..b].to_string()));
            assert_eq!(fast, pieces(&p, t), "{t:?}");
        }
    }
}
