//! Fuzz support for subwords-core: the body of every fuzz target lives in [`targets`], a plain
//! module with no fuzzing dependency, so the stable test `crates/subwords-core/tests/fuzz_corpus.rs`
//! compiles the very same file and replays the saved corpora and regressions through it.
//! [`json_mutator`] is the structure-aware mutator of the JSON targets (fuzzing only).

pub mod json_mutator;
pub mod targets;
