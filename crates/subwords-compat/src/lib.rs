//! subwords-compat: other libraries' exact behaviour, on the core's parts.
//!
//! Each module reads one library's files and encodes and decodes exactly as that library does,
//! quirks included: [`huggingface`] (tokenizers' `tokenizer.json` pipeline, with its BPE,
//! WordPiece and Unigram models), [`sentencepiece`] (`.model` files: normalization, Unigram and
//! BPE), [`tiktoken`] (rank files and OpenAI's pre-split patterns) and [`subword_nmt`] (codes
//! files, read here and segmented by the core's BPE). None of this is the method the pages
//! describe; `subwords-core` holds that. These engines reuse the core's error type, hash maps,
//! longest-match matcher and spelling tables instead of their own.

pub mod huggingface;
pub mod merge_ranks;
pub mod own_rank;
pub mod sentencepiece;
pub mod subword_nmt;
pub mod tiktoken;
pub mod vocab_txt;

#[cfg(test)]
mod test_rng;

pub use subwords_core::{Error, Result};
