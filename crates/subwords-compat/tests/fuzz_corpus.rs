//! Replays every saved fuzz input on stable: the seed corpora (`fuzz/corpus/<target>/`) and the
//! inputs fuzzing found (`fuzz/regressions/<target>/`), through the very code the cargo-fuzz
//! targets run (`fuzz/src/targets.rs`, compiled here as a module). An input may be refused with
//! an error; a panic fails the test and names the file. Fuzzing itself needs nightly: see
//! `fuzz/README.md`.

#[path = "../../../fuzz/src/targets.rs"]
mod targets;

use std::path::{Path, PathBuf};

/// Each target's corpus must hold at least this many files, so the test cannot pass on an empty
/// or missing folder.
const MIN_CORPUS: usize = 8;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<PathBuf> = rd
        .map(|e| e.expect("a readable folder entry").path())
        .filter(|p| {
            p.is_file() && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    v.sort();
    v
}

/// Each target must load (and so exercise) at least this many of its corpus files, so the code
/// past the loader is replayed too.
const MIN_LOADED: usize = 4;

/// Runs `f` on every file, returning how many loaded; panics naming every file that panicked.
fn replay(name: &str, f: fn(&[u8]) -> bool, paths: &[PathBuf]) -> usize {
    let mut failed = Vec::new();
    let mut loaded = 0;
    for p in paths {
        let data = std::fs::read(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
        match std::panic::catch_unwind(|| f(&data)) {
            Ok(ok) => loaded += ok as usize,
            Err(_) => failed.push(p.display().to_string()),
        }
    }
    assert!(failed.is_empty(), "{name}: {} input(s) panicked: {failed:?}", failed.len());
    loaded
}

fn run(name: &str) {
    let (_, f) = targets::TARGETS.iter().find(|(n, _)| *n == name).expect("a known target");
    let corpus = files(&fuzz_dir().join("corpus").join(name));
    let regressions = files(&fuzz_dir().join("regressions").join(name));
    assert!(
        corpus.len() >= MIN_CORPUS,
        "fuzz/corpus/{name} holds {} files, fewer than {MIN_CORPUS}: the corpus is missing",
        corpus.len()
    );
    let loaded = replay(name, *f, &corpus);
    let reg_loaded = replay(name, *f, &regressions);
    println!(
        "{name}: replayed {} corpus inputs ({loaded} loaded) and {} regression inputs ({reg_loaded} loaded)",
        corpus.len(),
        regressions.len()
    );
    assert!(
        loaded >= MIN_LOADED,
        "{name}: only {loaded} corpus inputs load; the seeds no longer reach past the loader"
    );
}

#[test]
fn every_target_has_a_test() {
    let names: Vec<&str> = targets::TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        ["model_json", "sentencepiece_model", "tiktoken_ranks", "hf_pipeline", "hf_tables"]
    );
    for n in &names {
        assert!(
            fuzz_dir().join("fuzz_targets").join(format!("{n}.rs")).is_file(),
            "no fuzz_targets/{n}.rs"
        );
    }
}

#[test]
fn replay_model_json() {
    run("model_json");
}

#[test]
fn replay_sentencepiece_model() {
    run("sentencepiece_model");
}

#[test]
fn replay_tiktoken_ranks() {
    run("tiktoken_ranks");
}

#[test]
fn replay_hf_pipeline() {
    run("hf_pipeline");
}

#[test]
fn replay_hf_tables() {
    run("hf_tables");
}

/// `regressions/hf_pipeline/wordpiece-id-4294967295.json`: a WordPiece plan whose vocabulary
/// gives `l` the id 4294967295. `HfPipeline::from_json` did not check ids as `with_tables` does,
/// and the trie's table of lengths, sized by the largest id, made the CI smoke run run out of
/// memory (2026-12-04). It is refused now, naming the id.
#[test]
fn an_id_past_max_id_is_refused_by_the_whole_plan_reader() {
    let path = fuzz_dir().join("regressions/hf_pipeline/wordpiece-id-4294967295.json");
    let text = std::fs::read_to_string(&path).expect("the regression file");
    let err = subwords_compat::huggingface::HfPipeline::from_json(&text).err().expect("refused");
    assert!(err.to_string().contains("has id 4294967295, above the 16777216"), "{err}");
}
