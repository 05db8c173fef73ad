//! Learners: counted units -> a vocabulary.
//!
//! [`pipeline`] is what every learner shares (alphabet, size accounting, two-stage BPE, the
//! model built at the end, each stage a function of its own); [`merge`] is the one merge engine with two scores (BPE counts,
//! WordPiece's ratio); [`unigram`] is Unigram's seed, EM and pruning; [`word`] the word model.
//! This file holds the learners' input: counted units.

pub mod extend;
pub mod merge;
pub mod pipeline;
pub mod superword;
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
    /// A count table file's units, left in its bytes, or a counter's units written the same way
    /// ([`Corpus::from_table`]); every unit starts and ends a word. Read in place of `units` when
    /// present: the units are then never held as one `String` each.
    pub table: Option<crate::count_table::TableBytes>,
    /// Pre-split joints used to make `units` (saved in the model, applied when encoding).
    pub joints: Option<std::collections::BTreeMap<String, Vec<String>>>,
    pub normalizations: Normalizations,
    pub texts: u64,
    /// Two-stage BPE's texts for stage two (None for every other training).
    pub streams: Option<Box<dyn StageTwoTexts>>,
    /// Parity-aware BPE: each unit's language (`units` only; None for every other training).
    pub languages: Option<merge::parity::UnitLanguages>,
}

/// Where stage two of two-stage BPE reads its texts: every text counted, in the order counted,
/// cut at special tokens and user symbols, no empty one. Stage two reads them once, one at a
/// time, and keeps only their stage-one pieces, so a source that reads its input again (a file,
/// a re-iterable Python input) costs no memory for the texts themselves.
pub trait StageTwoTexts: Send + Sync {
    /// Calls `f` with each text in turn.
    fn each_text(&mut self, f: &mut dyn FnMut(&str)) -> crate::Result<()>;
    /// Bytes of text the source holds in memory (0 for one that reads its input again).
    fn held_bytes(&self) -> u64;
    /// Calls `f` with each distinct text and how often it occurs (SuperBPE's span table,
    /// [`superword::SpanTable`]); a source of whole texts gives each once.
    fn each_span(&mut self, f: &mut dyn FnMut(&str, u64)) -> crate::Result<()> {
        self.each_text(&mut |t| f(t, 1))
    }
}

/// Texts held in memory (the counter kept them: a one-pass input, or a count mapping).
impl StageTwoTexts for Vec<String> {
    fn each_text(&mut self, f: &mut dyn FnMut(&str)) -> crate::Result<()> {
        for t in self.iter() {
            f(t);
        }
        Ok(())
    }
    fn held_bytes(&self) -> u64 {
        self.iter().map(|t| t.len() as u64).sum()
    }
}

impl Corpus {
    pub fn from_counts(
        counts: Counts,
        normalizations: Normalizations,
        texts: u64,
        streams: Option<Vec<String>>,
    ) -> Self {
        let units = counts
            .into_iter()
            .map(|(t, c)| UnitCount { text: t.into_string(), starts: true, ends: true, count: c })
            .collect();
        let streams = streams.map(|s| Box::new(s) as Box<dyn StageTwoTexts>);
        Corpus { units, table: None, joints: None, normalizations, texts, streams, languages: None }
    }

    /// A counter's units in one buffer ([`UnitCounter::finish_units`](crate::counting::UnitCounter::finish_units)).
    pub fn from_table(table: crate::count_table::TableBytes, streams: Option<Vec<String>>) -> Self {
        let (normalizations, texts) = (table.normalizations, table.texts);
        let streams = streams.map(|s| Box::new(s) as Box<dyn StageTwoTexts>);
        Corpus {
            units: Vec::new(),
            table: Some(table),
            joints: None,
            normalizations,
            texts,
            streams,
            languages: None,
        }
    }
}
