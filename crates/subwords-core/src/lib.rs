//! subwords-core: the engine behind the `subwords` Python package.
//!
//! The shape follows DESIGN §1: a [`spelling`] turns text into units and units into symbols, a
//! learner ([`learners`]) turns counted symbol sequences into a vocabulary, a segmenter
//! ([`segmenters`]) cuts a unit into pieces, and a [`tokenizer::Tokenizer`] composes them into
//! encode and decode, saved as the canonical JSON file ([`tokenizer::file`]); [`batch`] runs
//! many texts on scoped threads. Nothing here prints, and nothing depends on hash-map iteration
//! order: the same input and options give byte-identical models whatever the thread count, input
//! order or chunking. Every hash map and set is a [`hash::Map`] or [`hash::Set`], so a test build
//! (feature `randomized-hash`) can seed each one at random and show that.

pub mod batch;
pub mod count_table;
pub mod counting;
pub mod encoder;
pub mod error;
pub mod hash;
pub mod huge;
pub mod learners;
pub mod options;
pub mod progress;
pub mod segmenters;
pub mod spelling;
pub mod tokenizer;
pub mod vocab;
pub mod word_cache;

pub use error::{Error, Result};

/// The Unicode versions of the character tables the core was built with: general categories
/// (the pre-split patterns' `\p{L}`, `\p{N}`, ...) and normalization (NFC/NFKC). Tests that
/// compare against a peer's tables state and check these.
pub fn unicode_versions() -> [(&'static str, (u64, u64, u64)); 2] {
    let (a, b, c) = unicode_normalization::UNICODE_VERSION;
    [
        ("general_category", unicode_general_category::UNICODE_VERSION),
        ("normalization", (a.into(), b.into(), c.into())),
    ]
}
