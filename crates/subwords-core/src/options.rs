//! Training options: every option is named, validated and saved in the model file (DESIGN §2).
//! Unknown keys are refused by serde (`deny_unknown_fields`), so a misspelt option never slips
//! through as a silent default.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::spelling::pattern::{self as pattern_mod, Pattern};
use crate::spelling::unicode::Form;
use crate::spelling::{PreSplit, Scheme, Spelling};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    Bpe,
    Word,
    Wordpiece,
    Unigram,
}

/// WordPiece: how `min_count` is read (DESIGN §2; the pages show the two differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MinCountRule {
    /// Pairs below `min_count` are not candidates.
    Filter,
    /// Take the best pair; stop if it is below `min_count` (reported, not silent).
    Stop,
}

/// WordPiece: what a word that cannot be finished becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unknown {
    /// One `[UNK]` for the whole word.
    Word,
    /// The pieces matched so far, then one `[UNK]` for the rest.
    Rest,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputErrors {
    Strict,
    Replace,
}

fn default_true() -> bool {
    true
}
fn default_min_count() -> u64 {
    2
}
fn default_input_errors() -> InputErrors {
    InputErrors::Strict
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainOptions {
    pub model: ModelKind,
    pub spelling: Scheme,
    pub vocab_size: u64,
    #[serde(default = "default_min_count")]
    pub min_count: u64,
    #[serde(default)]
    pub byte_fallback: bool,
    #[serde(default)]
    pub byte_fallback_in_budget: bool,
    #[serde(default)]
    pub mark: Option<String>,
    #[serde(default = "default_true")]
    pub split_at_marks: bool,
    #[serde(default)]
    pub pre_split: Option<PreSplit>,
    /// Whether pre-split joints were given (the mapping or callable itself lives on the Python side).
    #[serde(default)]
    pub joints: bool,
    #[serde(default)]
    pub superword_at: Option<u64>,
    #[serde(default)]
    pub max_piece_length: Option<u32>,
    #[serde(default)]
    pub alphabet_size: Option<u64>,
    #[serde(default)]
    pub character_coverage: Option<f64>,
    #[serde(default = "default_input_errors")]
    pub input_errors: InputErrors,
    /// WordPiece only (defaults: filter, word, 100).
    #[serde(default)]
    pub min_count_rule: Option<MinCountRule>,
    #[serde(default)]
    pub unknown: Option<Unknown>,
    #[serde(default)]
    pub max_word_length: Option<u32>,
    /// Normalization before the split (end/continuation; the `bert` preset turns them on).
    #[serde(default)]
    pub lowercase: bool,
    #[serde(default)]
    pub strip_accents: bool,
    #[serde(default)]
    pub clean_text: bool,
    /// Unigram only (defaults: no cap, ¾, 2).
    #[serde(default)]
    pub seed_size: Option<u64>,
    #[serde(default)]
    pub shrink: Option<f64>,
    #[serde(default)]
    pub em_rounds: Option<u32>,
    /// Unicode normalization before the split; omitted when none (files stay as they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalize: Option<Form>,
    /// A regex pre-split: a name (`gpt2`, `cl100k`, `o200k`, `llama3`) or an expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Digit splitting: 1 (single digits) or 3 (runs of up to three).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_digits: Option<u8>,
}

/// The largest vocabulary we accept: ids must fit comfortably in u32 and a table this size is
/// already far beyond any real use.
pub const MAX_VOCAB: u64 = 1 << 26;

impl TrainOptions {
    pub fn from_json(s: &str) -> Result<Self> {
        let o: TrainOptions = serde_json::from_str(s).map_err(|e| Error::Option(format!("bad training options: {e}")))?;
        o.validate()?;
        Ok(o)
    }

    /// The options that decide the units: what a count table for this training records.
    pub fn count_options(&self) -> CountOptions {
        CountOptions {
            spelling: self.spelling,
            mark: self.mark.clone(),
            split_at_marks: self.split_at_marks,
            pre_split: self.pre_split,
            lowercase: self.lowercase,
            strip_accents: self.strip_accents,
            clean_text: self.clean_text,
            input_errors: self.input_errors,
            normalize: self.normalize,
            pattern: self.pattern.clone(),
            split_digits: self.split_digits,
        }
    }

    pub fn spelling(&self) -> Result<Spelling> {
        let mut s = self.count_options().spelling()?;
        s.byte_fallback = self.byte_fallback;
        s.validate()?;
        Ok(s)
    }

    pub fn validate(&self) -> Result<()> {
        self.spelling()?;
        if self.vocab_size == 0 || self.vocab_size > MAX_VOCAB {
            return Err(Error::Option(format!(
                "vocab_size must be between 1 and {MAX_VOCAB}, got {}",
                self.vocab_size
            )));
        }
        if self.min_count == 0 {
            return Err(Error::Option("min_count must be at least 1".into()));
        }
        if self.byte_fallback_in_budget && !self.byte_fallback {
            return Err(Error::Option("byte_fallback_in_budget needs byte_fallback=True".into()));
        }
        if let Some(s) = self.superword_at {
            if self.model != ModelKind::Bpe {
                return Err(Error::Option("superword_at applies only to model='bpe'".into()));
            }
            if s >= self.vocab_size {
                return Err(Error::Option(format!(
                    "superword_at ({s}) must be below vocab_size ({}): stage one stops there and stage two fills the rest",
                    self.vocab_size
                )));
            }
            if self.spelling == Scheme::Continuation {
                return Err(Error::Option(
                    "superword BPE needs a spelling whose marks survive joining across words (end, front or bytes); \
                     under continuation a word-initial piece carries no mark to join on"
                        .into(),
                ));
            }
        }
        if let Some(m) = self.max_piece_length {
            if m < 1 {
                return Err(Error::Option("max_piece_length must be at least 1".into()));
            }
        }
        if let Some(c) = self.character_coverage {
            if !(c > 0.0 && c <= 1.0) {
                return Err(Error::Option(format!("character_coverage must be in (0, 1], got {c}")));
            }
            if self.alphabet_size.is_some() {
                return Err(Error::Option("give alphabet_size or character_coverage, not both".into()));
            }
        }
        if self.alphabet_size == Some(0) {
            return Err(Error::Option("alphabet_size must be at least 1".into()));
        }
        if self.spelling == Scheme::Bytes && (self.alphabet_size.is_some() || self.character_coverage.is_some()) {
            return Err(Error::Option("the bytes spelling always has all 256 byte symbols; alphabet limits do not apply".into()));
        }
        if self.model == ModelKind::Word {
            if self.byte_fallback || self.superword_at.is_some() || self.joints || self.max_piece_length.is_some() {
                return Err(Error::Option(
                    "model='word' takes only the spelling, vocab_size and min_count: one row per distinct unit".into(),
                ));
            }
        }
        if self.model == ModelKind::Wordpiece {
            if !matches!(self.spelling, Scheme::Continuation | Scheme::End) {
                return Err(Error::Option(
                    "model='wordpiece' runs on the continuation spelling (its own) or the end spelling".into(),
                ));
            }
            if self.superword_at.is_some() || self.joints || self.max_piece_length.is_some() || self.byte_fallback_in_budget {
                return Err(Error::Option(
                    "model='wordpiece' takes no superword_at, joints, max_piece_length or byte_fallback_in_budget".into(),
                ));
            }
            if self.max_word_length == Some(0) {
                return Err(Error::Option("max_word_length must be at least 1".into()));
            }
        } else if self.min_count_rule.is_some() || self.unknown.is_some() || self.max_word_length.is_some() {
            return Err(Error::Option("min_count_rule, unknown and max_word_length apply only to model='wordpiece'".into()));
        }
        if self.model == ModelKind::Unigram {
            if self.superword_at.is_some() || self.joints {
                return Err(Error::Option("model='unigram' takes no superword_at or joints".into()));
            }
            if let Some(s) = self.shrink {
                if !(s > 0.0 && s < 1.0) {
                    return Err(Error::Option(format!("shrink must be strictly between 0 and 1, got {s}")));
                }
            }
            if self.seed_size == Some(0) {
                return Err(Error::Option("seed_size must be at least 1".into()));
            }
        } else if self.seed_size.is_some() || self.shrink.is_some() || self.em_rounds.is_some() {
            return Err(Error::Option("seed_size, shrink and em_rounds apply only to model='unigram'".into()));
        }
        if self.joints && !matches!(self.spelling, Scheme::End | Scheme::Continuation) {
            return Err(Error::Option("joints apply to the end and continuation spellings".into()));
        }
        Ok(())
    }
}

/// The options that decide what the units are: a spelling's, and how files are read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountOptions {
    pub spelling: Scheme,
    #[serde(default)]
    pub mark: Option<String>,
    #[serde(default = "default_true")]
    pub split_at_marks: bool,
    #[serde(default)]
    pub pre_split: Option<PreSplit>,
    #[serde(default)]
    pub lowercase: bool,
    #[serde(default)]
    pub strip_accents: bool,
    #[serde(default)]
    pub clean_text: bool,
    #[serde(default = "default_input_errors")]
    pub input_errors: InputErrors,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalize: Option<Form>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_digits: Option<u8>,
}


impl CountOptions {
    pub fn from_json(s: &str) -> Result<Self> {
        let o: CountOptions = serde_json::from_str(s).map_err(|e| Error::Option(format!("bad counting options: {e}")))?;
        o.spelling()?;
        Ok(o)
    }

    pub fn spelling(&self) -> Result<Spelling> {
        let mut s = Spelling::new(self.spelling, self.mark.as_deref(), self.split_at_marks, self.pre_split, false)?;
        s.lowercase = self.lowercase;
        s.strip_accents = self.strip_accents;
        s.clean_text = self.clean_text;
        s.normalize = self.normalize;
        s.pattern = self.pattern.as_deref().map(compile_pattern).transpose()?;
        s.split_digits = self.split_digits;
        s.validate()?;
        Ok(s)
    }
}

/// A pre-split pattern option: a name, or an expression. A bare lower-case word that is not a
/// name is refused, listing the names (it is far more likely a misspelt name than a pattern).
pub fn compile_pattern(p: &str) -> Result<Pattern> {
    if let Some(expr) = pattern_mod::named(p) {
        return Pattern::new(expr);
    }
    if !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
        return Err(Error::Option(format!(
            "unknown pre-split pattern {p:?}; the named patterns are: bert, {}; \
             anything else is read as a regular expression (write a literal word as (?:{p}))",
            pattern_mod::names()
        )));
    }
    Pattern::new(p)
}

/// Refuses special tokens that the options' normalization would change: such a token could
/// never be matched in normalized text, and its row would not decode to itself. The error names
/// the first token and what it would become.
pub fn check_specials_unchanged(options: &TrainOptions, specials: &[String]) -> Result<()> {
    let spelling = options.spelling()?;
    if !spelling.normalizes() {
        return Ok(());
    }
    for t in specials {
        let (n, _) = spelling.normalize_text(t);
        if &n != t {
            return Err(Error::Option(format!(
                "the special token {t:?} would be normalized to {n:?} by this model's normalization \
                 (normalize, lowercase, strip_accents, clean_text); choose a token the normalization keeps as it is"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod special_tests {
    use super::*;

    fn opts(extra: &str) -> TrainOptions {
        TrainOptions::from_json(&format!(r#"{{"model": "bpe", "spelling": "end", "vocab_size": 10{extra}}}"#)).unwrap()
    }

    #[test]
    fn a_special_token_the_normalization_changes_is_refused() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        // NFKC turns the full-width "＜" (U+FF1C) into "<"; lowercase turns "S" into "s"
        let nfkc = opts(r#", "normalize": "nfkc""#);
        assert!(check_specials_unchanged(&nfkc, &s(&["<s>", "<|endoftext|>"])).is_ok());
        let e = check_specials_unchanged(&nfkc, &s(&["<s>", "\u{FF1C}pad>"])).unwrap_err().to_string();
        assert!(e.contains("would be normalized to \"<pad>\""), "{e}");
        let lower = opts(r#", "lowercase": true"#);
        assert!(check_specials_unchanged(&lower, &s(&["<S>"])).is_err());
        assert!(check_specials_unchanged(&opts(""), &s(&["<S>", "\u{FF1C}"])).is_ok());
    }
}
