#![no_main]
//! cargo-fuzz target: the logic is `subwords_fuzz::targets::hf_tables`, which the stable test
//! crates/subwords-compat/tests/fuzz_corpus.rs replays on every corpus and regression file.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    subwords_fuzz::targets::hf_tables(data);
});

// JSON-aware mutations half the time (src/json_mutator.rs), libFuzzer's byte mutations otherwise
libfuzzer_sys::fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    subwords_fuzz::json_mutator::mutate(data, size, max_size, seed, libfuzzer_sys::fuzzer_mutate)
});
