#![no_main]
//! cargo-fuzz target: the logic is `subwords_fuzz::targets::tiktoken_ranks`, which the stable test
//! crates/subwords-core/tests/fuzz_corpus.rs replays on every corpus and regression file.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    subwords_fuzz::targets::tiktoken_ranks(data);
});
