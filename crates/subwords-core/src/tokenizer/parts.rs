//! What a model is made of ([`Parts`]) and the facts saved about its training ([`Report`]):
//! the types that [`super::build`] checks and [`super::file`] reads and writes, kept apart so
//! neither of the two imports the other.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::options::{ModelKind, TrainOptions};
use crate::spelling::Spelling;
use crate::vocab::Row;

/// What a model is made of. [`Parts::new`] gives the three every model has; the rest default to
/// none (no merges, no stream merges, no joints, no options, no report).
pub struct Parts {
    pub kind: ModelKind,
    pub spelling: Spelling,
    pub rows: Vec<Row>,
    /// `[left, right, joined]` row ids, in rank order.
    pub merges: Vec<[u32; 3]>,
    /// Two-stage (superword) BPE: merges from this rank on apply across unit boundaries.
    pub stream_from: Option<usize>,
    /// Pre-split joints: words cut into parts before spelling.
    pub joints: Option<BTreeMap<String, Vec<String>>>,
    pub options: Option<TrainOptions>,
    pub report: Option<Report>,
}

impl Parts {
    pub fn new(kind: ModelKind, spelling: Spelling, rows: Vec<Row>) -> Self {
        Parts {
            kind,
            spelling,
            rows,
            merges: Vec::new(),
            stream_from: None,
            joints: None,
            options: None,
            report: None,
        }
    }
}

/// Facts about a training run, saved with the model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub alphabet_size: u64,
    pub merges_learned: u64,
    pub rows_learned: u64,
    pub stop: String,
    pub corpus_pieces_before: u64,
    pub corpus_pieces_after: u64,
    pub distinct_units: u64,
    pub texts: u64,
    /// Which `front` normalizations changed some training text: a subset of
    /// `whitespace_runs`, `stripped_ends`, `mark_in_text`, in that order.
    pub normalizations: Option<Vec<String>>,
    /// The Unicode normalization the text went through (`normalize=`); omitted when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalize: Option<String>,
    pub stage_one_merges: Option<u64>,
    pub dropped_symbols: u64,
    /// The size asked for was more than the corpus supports (a ceiling, not an error).
    pub size_not_reached: bool,
    /// WordPiece under `min_count_rule="stop"`: the winner that failed `min_count` (left, right,
    /// count) and ended the run early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner_failed: Option<(String, String, u64)>,
    /// WordPiece: the training corpus cut by longest match (it can differ from
    /// `corpus_pieces_after`, the learner's own last state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus_pieces_encoded: Option<u64>,
    /// Unigram: pieces in the seed, the table size at the start and after each pruning round,
    /// and the corpus log-likelihood on the final table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<Vec<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_likelihood: Option<f64>,
    /// Parity-aware BPE: each language's compression and the Gini coefficient across them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity: Option<crate::learners::merge::parity::ParityReport>,
}
