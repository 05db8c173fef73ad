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

/// Unigram: the M-step of an EM round. `Plain` is the Unigram page's (each expected
/// count over their sum, the default); `Bayes` is sentencepiece's sparse-prior variant
/// (`digamma(E) - digamma(ΣE)`), which starves pieces no spelling needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmMethod {
    Plain,
    Bayes,
    /// sentencepiece's whole loop: the Bayesian step that also drops pieces under an
    /// expected count of 0.5, its pruning criterion, its stop at 1.1 × the target and its
    /// final pick by score (learners/unigram/mod.rs).
    Sentencepiece,
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
    /// SuperBPE: the span pre-split of stage two (`superbpe`: the paper's expression; anything
    /// else a pattern), and the most words a superword may span ([`crate::learners::superword`]).
    /// Left out of the saved options when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superword_pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superword_words: Option<u32>,
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
    /// Special tokens (docs/SPECIALS.md): rows 0..k-1 in this order, inside the
    /// budget, never learned from and matched in text only when a call allows them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub special_tokens: Vec<String>,
    /// SentencePiece-style user-defined symbols: rows after the specials, always matched in text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_symbols: Vec<String>,
    /// Placeholder rows `<|reserved_0|>`, `<|reserved_1|>`, ... after the user symbols.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reserved_tokens: u64,
    /// Pad the trained vocabulary with more reserved rows up to a multiple of this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pad_to_multiple: Option<u64>,
    /// Which special token plays which role in the exports (each names one of `special_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bos_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eos_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pad_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unk_token: Option<String>,
    /// Unigram only (default: `plain`, the page's). Left out of the saved options when unset,
    /// so files trained without it keep their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub em: Option<EmMethod>,
    /// Unicode normalization before the split; omitted when none (files stay as they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalize: Option<Form>,
    /// A regex pre-split: a name (`gpt2`, `cl100k`, `o200k`, `llama3`) or an expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Digit splitting: 1 (single digits) or 3 (runs of up to three).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_digits: Option<u8>,
    /// Unigram only: sentencepiece's `split_by_unicode_script`, no seed piece mixes two scripts
    /// (`learners/unigram/valid.rs`). Left out of the saved options when off.
    #[serde(default, skip_serializing_if = "is_false")]
    pub split_by_script: bool,
    /// With `split_by_script`: digits are a script of their own (sentencepiece's
    /// `split_by_number`, on by default there and here). Saved only when off.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub split_by_number: bool,
    /// Picky BPE's IoS threshold, in (0, 1] (`learners/merge/picky.rs`); BPE only. Left out of
    /// the saved options when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picky: Option<f64>,
    /// Parity-aware BPE (`learners/merge/parity.rs`): the languages and the rule's settings;
    /// BPE only. Left out of the saved options when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity: Option<crate::learners::merge::parity::ParityOptions>,
    /// Length-MAX: merges chosen by count × the joined piece's length
    /// (`learners/merge/length_max.rs`); BPE only. Left out of the saved options when off.
    #[serde(default, skip_serializing_if = "is_false")]
    pub length_max: bool,
    /// Scaffold-BPE (`learners/merge/scaffold.rs`): the size counts the tokens that are not
    /// scaffold; BPE only. Saved only when on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub scaffold: bool,
    /// BoundlessBPE (`learners/superword/boundless.rs`): its deletion threshold, which
    /// pretokens may join, how the spans are counted. Left out of the saved options when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boundless: Option<crate::learners::superword::boundless::BoundlessOptions>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_true(b: &bool) -> bool {
    *b
}

fn yes() -> bool {
    true
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The longest special token or user symbol, in bytes (a row of the model file).
pub const MAX_SPECIAL_BYTES: usize = 256;
/// The most reserved rows one training may ask for.
pub const MAX_RESERVED: u64 = 1 << 20;

/// The name of reserved row `i`.
pub fn reserved_name(i: u64) -> String {
    format!("<|reserved_{i}|>")
}

/// The largest vocabulary we accept: ids must fit comfortably in u32 and a table this size is
/// already far beyond any real use.
pub const MAX_VOCAB: u64 = 1 << 26;

impl TrainOptions {
    pub fn from_json(s: &str) -> Result<Self> {
        let o: TrainOptions = serde_json::from_str(s)
            .map_err(|e| Error::Option(format!("bad training options: {e}")))?;
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
            superword_pattern: self.superword_pattern.clone(),
            boundless: self.boundless.clone(),
        }
    }

    pub fn spelling(&self) -> Result<Spelling> {
        let mut s = self.count_options().spelling()?;
        s.byte_fallback = self.byte_fallback;
        s.validate()?;
        Ok(s)
    }

    pub fn validate(&self) -> Result<()> {
        // SuperBPE's own checks first (a spelling that cannot carry its pieces is named as such)
        crate::learners::superword::validate(self)?;
        crate::learners::superword::boundless::validate(self)?;
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
        if let Some(s) = self.superword_at.filter(|_| self.superword_pattern.is_none()) {
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
                return Err(Error::Option(format!(
                    "character_coverage must be in (0, 1], got {c}"
                )));
            }
            if self.alphabet_size.is_some() {
                return Err(Error::Option(
                    "give alphabet_size or character_coverage, not both".into(),
                ));
            }
        }
        if self.alphabet_size == Some(0) {
            return Err(Error::Option("alphabet_size must be at least 1".into()));
        }
        if self.spelling == Scheme::Bytes
            && (self.alphabet_size.is_some() || self.character_coverage.is_some())
        {
            return Err(Error::Option(
                "the bytes spelling always has all 256 byte symbols; alphabet limits do not apply"
                    .into(),
            ));
        }
        if self.model == ModelKind::Word
            && (self.byte_fallback
                || self.superword_at.is_some()
                || self.joints
                || self.max_piece_length.is_some())
        {
            return Err(Error::Option("model='word' takes only the spelling, vocab_size and min_count: one row per distinct unit".into()));
        }
        if self.model == ModelKind::Wordpiece {
            if !matches!(self.spelling, Scheme::Continuation | Scheme::End) {
                return Err(Error::Option(
                    "model='wordpiece' runs on the continuation spelling (its own) or the end spelling".into(),
                ));
            }
            if self.superword_at.is_some()
                || self.joints
                || self.max_piece_length.is_some()
                || self.byte_fallback_in_budget
            {
                return Err(Error::Option(
                    "model='wordpiece' takes no superword_at, joints, max_piece_length or byte_fallback_in_budget".into(),
                ));
            }
            if self.max_word_length == Some(0) {
                return Err(Error::Option("max_word_length must be at least 1".into()));
            }
        } else if self.min_count_rule.is_some()
            || self.unknown.is_some()
            || self.max_word_length.is_some()
        {
            return Err(Error::Option(
                "min_count_rule, unknown and max_word_length apply only to model='wordpiece'"
                    .into(),
            ));
        }
        if self.model == ModelKind::Unigram {
            if self.superword_at.is_some() || self.joints {
                return Err(Error::Option(
                    "model='unigram' takes no superword_at or joints".into(),
                ));
            }
            if let Some(s) = self.shrink {
                if !(s > 0.0 && s < 1.0) {
                    return Err(Error::Option(format!(
                        "shrink must be strictly between 0 and 1, got {s}"
                    )));
                }
            }
            if self.seed_size == Some(0) {
                return Err(Error::Option("seed_size must be at least 1".into()));
            }
        } else if self.seed_size.is_some() || self.shrink.is_some() || self.em_rounds.is_some() {
            return Err(Error::Option(
                "seed_size, shrink and em_rounds apply only to model='unigram'".into(),
            ));
        }
        if self.em.is_some() && self.model != ModelKind::Unigram {
            return Err(Error::Option("em applies only to model='unigram'".into()));
        }
        if self.split_by_script && self.model != ModelKind::Unigram {
            return Err(Error::Option(
                "split_by_script applies only to model='unigram' (its seed)".into(),
            ));
        }
        if self.split_by_script && self.spelling == Scheme::Bytes {
            return Err(Error::Option(
                "split_by_script reads each symbol's character, and spelling='bytes' has bytes: use spelling='front' \
                 (with byte_fallback=True for unseen characters)"
                    .into(),
            ));
        }
        if !self.split_by_number && !self.split_by_script {
            return Err(Error::Option(
                "split_by_number=False only changes split_by_script's rule (digits then join any script): \
                 add split_by_script=True, or leave split_by_number alone"
                    .into(),
            ));
        }
        if self.joints && !matches!(self.spelling, Scheme::End | Scheme::Continuation) {
            return Err(Error::Option("joints apply to the end and continuation spellings".into()));
        }
        self.validate_specials()?;
        crate::learners::merge::picky::validate(self)?;
        crate::learners::merge::parity::validate(self)?;
        crate::learners::merge::length_max::validate(self)?;
        crate::learners::merge::scaffold::validate(self)?;
        Ok(())
    }

    /// Whether any special row is asked for (specials, user symbols, reserved, padding).
    pub fn has_specials(&self) -> bool {
        !self.special_tokens.is_empty()
            || !self.user_symbols.is_empty()
            || self.reserved_tokens > 0
            || self.pad_to_multiple.is_some()
    }

    /// The rows put first, in id order: the specials, the user symbols, the reserved rows.
    pub fn leading_rows(&self) -> Vec<String> {
        let mut v: Vec<String> =
            self.special_tokens.iter().chain(&self.user_symbols).cloned().collect();
        v.extend((0..self.reserved_tokens).map(reserved_name));
        v
    }

    /// The texts training text is cut at (and never learned from): specials and user symbols.
    pub fn cut_texts(&self) -> Vec<String> {
        self.special_tokens.iter().chain(&self.user_symbols).cloned().collect()
    }

    fn validate_specials(&self) -> Result<()> {
        if !self.has_specials()
            && self.unk_token.is_none()
            && self.bos_token.is_none()
            && self.eos_token.is_none()
            && self.pad_token.is_none()
        {
            return Ok(());
        }
        if self.model == ModelKind::Word && self.has_specials() {
            return Err(Error::Option(
                "special_tokens, user_symbols, reserved_tokens and pad_to_multiple apply to the bpe, wordpiece and unigram models".into(),
            ));
        }
        if self.reserved_tokens > MAX_RESERVED {
            return Err(Error::Option(format!(
                "reserved_tokens must be at most {MAX_RESERVED}, got {}",
                self.reserved_tokens
            )));
        }
        if let Some(m) = self.pad_to_multiple {
            if m == 0 || m > MAX_VOCAB {
                return Err(Error::Option(format!(
                    "pad_to_multiple must be between 1 and {MAX_VOCAB}, got {m}"
                )));
            }
        }
        let mark = self.spelling()?.mark;
        let mut seen: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
        let reserved: Vec<String> = (0..self.reserved_tokens).map(reserved_name).collect();
        let named = self
            .special_tokens
            .iter()
            .map(|s| ("special token", s))
            .chain(self.user_symbols.iter().map(|s| ("user symbol", s)))
            .chain(reserved.iter().map(|s| ("reserved token", s)));
        for (what, s) in named {
            if s.is_empty() {
                return Err(Error::Option(format!("an empty {what}: every special token and user symbol needs at least one character")));
            }
            if s.len() > MAX_SPECIAL_BYTES {
                return Err(Error::Option(format!(
                    "the {what} {:?}... is {} bytes long; the limit is {MAX_SPECIAL_BYTES}",
                    &s[..s.char_indices().nth(16).map_or(s.len(), |x| x.0)],
                    s.len()
                )));
            }
            if s.chars().all(char::is_whitespace) {
                return Err(Error::Option(format!("the {what} {s:?} is only whitespace, which the spelling never keeps; give it a visible character")));
            }
            if s.contains('\n') {
                return Err(Error::Option(format!(
                    "the {what} {s:?} holds a newline, which ends a training text; remove it"
                )));
            }
            if s == crate::vocab::UNK && what != "special token" {
                return Err(Error::Option(format!(
                    "{:?} is the unknown row; list it in special_tokens to place it",
                    crate::vocab::UNK
                )));
            }
            if s == crate::vocab::UNK && self.spelling == Scheme::Bytes {
                return Err(Error::Option(format!(
                    "the bytes spelling has no {:?} row (every text is spelled in bytes)",
                    crate::vocab::UNK
                )));
            }
            if s.chars().count() == 1 {
                return Err(Error::Option(format!(
                    "the {what} {s:?} is one character, which collides with the alphabet symbol {s:?} \
                     (it would be taken out of every training text); make it longer, e.g. \"<{s}>\""
                )));
            }
            if *s == mark {
                return Err(Error::Option(format!(
                    "the {what} {s:?} is the spelling's mark; pick another text"
                )));
            }
            if let Some(prev) = seen.insert(s.as_str(), what) {
                return Err(Error::Option(format!("{s:?} is given twice (as a {prev} and as a {what}); each special row is one text")));
            }
        }
        for (role, value) in [
            ("bos_token", &self.bos_token),
            ("eos_token", &self.eos_token),
            ("pad_token", &self.pad_token),
        ] {
            if let Some(v) = value {
                if !self.special_tokens.contains(v) {
                    return Err(Error::Option(format!(
                        "{role}={v:?} is not one of special_tokens {:?}; add it there (CLI: --special-token {v:?})",
                        self.special_tokens
                    )));
                }
            }
        }
        if let Some(u) = &self.unk_token {
            if self.spelling == Scheme::Bytes {
                return Err(Error::Option("unk_token: the bytes spelling has no unknown row (every text is spelled in bytes)".into()));
            }
            if u != crate::vocab::UNK {
                return Err(Error::Option(format!(
                    "unk_token={u:?}: the unknown row of a subwords model is always {:?}; put {:?} in special_tokens to choose its id",
                    crate::vocab::UNK, crate::vocab::UNK
                )));
            }
        }
        // a special the model's normalization would change is refused as bad input
        check_specials_unchanged(self, &self.cut_texts())
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
    /// SuperBPE: count the spans of this stage-two pre-split beside the units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superword_pattern: Option<String>,
    /// BoundlessBPE: count its spans (runs of pretokens that may join) beside the units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boundless: Option<crate::learners::superword::boundless::BoundlessOptions>,
}

impl CountOptions {
    pub fn from_json(s: &str) -> Result<Self> {
        let o: CountOptions = serde_json::from_str(s)
            .map_err(|e| Error::Option(format!("bad counting options: {e}")))?;
        o.span_spelling()?;
        Ok(o)
    }

    pub fn spelling(&self) -> Result<Spelling> {
        let mut s = Spelling::new(
            self.spelling,
            self.mark.as_deref(),
            self.split_at_marks,
            self.pre_split,
            false,
        )?;
        s.lowercase = self.lowercase;
        s.strip_accents = self.strip_accents;
        s.clean_text = self.clean_text;
        s.normalize = self.normalize;
        s.pattern = self.pattern.as_deref().map(compile_pattern).transpose()?;
        s.split_digits = self.split_digits;
        s.validate()?;
        Ok(s)
    }

    /// The spelling that cuts texts into SuperBPE's spans (None without `superword_pattern`).
    pub fn span_spelling(&self) -> Result<Option<Spelling>> {
        let spelling = self.spelling()?;
        let Some(p) = self.superword_pattern.as_deref() else { return Ok(None) };
        if self.spelling != Scheme::Bytes {
            return Err(Error::Option(
                "superword_pattern needs spelling='bytes' (SuperBPE is byte-level BPE; \
                 preset='superbpe' sets it)"
                    .into(),
            ));
        }
        crate::learners::superword::spans_of(&spelling, p).map(Some)
    }
}

/// A pre-split pattern option: a name, or an expression. A bare lower-case word that is not a
/// name is refused, listing the names (it is far more likely a misspelt name than a pattern).
pub fn compile_pattern(p: &str) -> Result<Pattern> {
    if let Some(expr) = pattern_mod::named(p) {
        return Pattern::new(expr);
    }
    if !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
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

/// The options a training with only `model` and `vocab_size` given reads: the one table of
/// defaults, the serde defaults above with the model's own on top (`subwords.TrainOptions` and
/// the CLI read it through `subwords._core.default_options()`). A model's own: WordPiece runs
/// on the continuation spelling with BERT's `max_word_length` 100; Unigram has sentencepiece's
/// `max_piece_length` 16 and a seed of at most 1,000,000 pieces; the word model keeps every
/// unit seen once.
pub fn default_options(model: ModelKind, vocab_size: u64) -> TrainOptions {
    let minimal =
        serde_json::json!({"model": model, "spelling": Scheme::End, "vocab_size": vocab_size});
    let mut o: TrainOptions =
        serde_json::from_value(minimal).expect("the minimal options read with serde's defaults");
    match model {
        ModelKind::Bpe => {}
        ModelKind::Word => o.min_count = 1,
        ModelKind::Wordpiece => {
            o.spelling = Scheme::Continuation;
            o.max_word_length = Some(100);
            o.min_count_rule = Some(MinCountRule::Filter);
            o.unknown = Some(Unknown::Word);
        }
        ModelKind::Unigram => {
            o.max_piece_length = Some(16);
            o.seed_size = Some(1_000_000);
        }
    }
    o
}

#[cfg(test)]
mod special_tests {
    use super::*;

    fn opts(extra: &str) -> TrainOptions {
        TrainOptions::from_json(&format!(
            r#"{{"model": "bpe", "spelling": "end", "vocab_size": 10{extra}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn a_special_token_the_normalization_changes_is_refused() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        // NFKC turns the full-width "＜" (U+FF1C) into "<"; lowercase turns "S" into "s"
        let nfkc = opts(r#", "normalize": "nfkc""#);
        assert!(check_specials_unchanged(&nfkc, &s(&["<s>", "<|endoftext|>"])).is_ok());
        let e =
            check_specials_unchanged(&nfkc, &s(&["<s>", "\u{FF1C}pad>"])).unwrap_err().to_string();
        assert!(e.contains("would be normalized to \"<pad>\""), "{e}");
        let lower = opts(r#", "lowercase": true"#);
        assert!(check_specials_unchanged(&lower, &s(&["<S>"])).is_err());
        assert!(check_specials_unchanged(&opts(""), &s(&["<S>", "\u{FF1C}"])).is_ok());
    }
}
