//! Learners: counted units -> a vocabulary.
//!
//! [`pipeline`] is what every learner shares (alphabet, size accounting, two-stage BPE, the
//! model built at the end); [`merge`] is the one merge engine with two scores (BPE counts,
//! WordPiece's ratio); [`unigram`] is Unigram's seed, EM and pruning; [`word`] the word model.
//! This file holds the learners' input: counted units.

pub mod extend;
pub mod merge;
pub mod pipeline;
pub mod unigram;
pub mod word;

pub use pipeline::{train, train_traced, train_with_progress, Traces};

use crate::counting::Counts;
use crate::spelling::Normalizations;

/// One unit to learn from: its text, whether it starts/ends a word (false only at pre-split
/// joints), and how often it occurs.
pub struct UnitCount {
    pub text: String,
    pub starts: bool,
    pub ends: bool,
    pub count: u64,
}

pub struct Corpus {
    pub units: Vec<UnitCount>,
    /// Pre-split joints used to make `units` (saved in the model, applied when encoding).
    pub joints: Option<std::collections::BTreeMap<String, Vec<String>>>,
    pub normalizations: Normalizations,
    pub texts: u64,
    pub streams: Option<Vec<String>>,
}

impl Corpus {
    pub fn from_counts(counts: Counts, normalizations: Normalizations, texts: u64, streams: Option<Vec<String>>) -> Self {
        let units = counts
            .into_iter()
            .map(|(t, c)| UnitCount { text: t.into_string(), starts: true, ends: true, count: c })
            .collect();
        Corpus { units, joints: None, normalizations, texts, streams }
    }
}

