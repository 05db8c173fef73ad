//! The engines' traces: what `learners::train_traced` records, checked
//! against the BPE and Unigram pages' numbers (worked by hand in tests/pages), and that tracing
//! changes nothing in the trained model.

use subwords_core::counting::UnitCounter;
use subwords_core::learners::{self, merge, unigram};
use subwords_core::options::TrainOptions;
use subwords_core::tokenizer::Tokenizer;

// BPE page: "The word low occurs five times, lower twice, newest six times and widest three."
const FOUR: &[(&str, u64)] = &[("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)];

fn train_with(options: &str, words: &[(&str, u64)], traces: &mut learners::Traces) -> Tokenizer {
    let opts = TrainOptions::from_json(options).unwrap();
    let mut counter = UnitCounter::new(opts.spelling().unwrap(), 1, false);
    for &(w, c) in words {
        counter.add_count(w, c);
    }
    let (counts, norm, texts, streams) = counter.finish().unwrap();
    learners::train_traced(
        &opts,
        learners::Corpus::from_counts(counts, norm, texts, streams),
        None,
        traces,
    )
    .unwrap()
}

fn train(options: &str, words: &[(&str, u64)]) -> Tokenizer {
    train_with(options, words, &mut learners::Traces::default())
}

fn merge_traced(
    request: merge::TraceRequest,
    options: &str,
    words: &[(&str, u64)],
) -> (Tokenizer, merge::MergeTrace) {
    let mut traces = learners::Traces { merge: Some((request, Default::default())), unigram: None };
    let model = train_with(options, words, &mut traces);
    (model, traces.merge.unwrap().1)
}

fn unigram_traced(
    request: unigram::UnigramTraceRequest,
    options: &str,
    words: &[(&str, u64)],
) -> (Tokenizer, unigram::UnigramTrace) {
    let mut traces = learners::Traces { merge: None, unigram: Some((request, Default::default())) };
    let model = train_with(options, words, &mut traces);
    (model, traces.unigram.unwrap().1)
}

fn s(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap()
}

const BPE22: &str = r#"{"model":"bpe","spelling":"end","vocab_size":22}"#;

#[test]
fn four_words_steps_ties_and_lengths() {
    let request = merge::TraceRequest { ties: true, max_ties: 10, forced: vec![] };
    let (model, trace) = merge_traced(request, BPE22, FOUR);
    // By hand (tests/pages/test_pages_bpe.py): 79 minus each merge's count.
    let lengths: Vec<u64> = trace.steps.iter().map(|st| st.pieces_after).collect();
    assert_eq!(trace.stage_pieces_before, vec![79]);
    assert_eq!(lengths, vec![70, 61, 54, 48, 42, 36, 31, 28, 25, 22]);
    let counts: Vec<u64> = trace.steps.iter().map(|st| st.num).collect();
    assert_eq!(counts, vec![9, 9, 7, 6, 6, 6, 5, 3, 3, 3]);
    // "e + s: 6 + 3 = 9 / s + marked t: 6 + 3 = 9": the first tie, the rule's choice first
    let first: Vec<(&str, &str)> = trace.steps[0].ties.iter().map(|(l, r)| (s(l), s(r))).collect();
    assert_eq!(first, vec![("e", "s"), ("s", "t</w>")]);
    // the second tie: three pairs at 6, four merges later
    let fourth: Vec<(&str, &str)> = trace.steps[3].ties.iter().map(|(l, r)| (s(l), s(r))).collect();
    assert_eq!(fourth, vec![("e", "w"), ("n", "e"), ("w", "est</w>")]);
    assert_eq!(trace.steps.last().unwrap().new_rows_after, 10);
    // tracing changes nothing
    assert_eq!(model.to_json(), train(BPE22, FOUR).to_json());
}

#[test]
fn forced_choice_takes_the_other_branch() {
    // BPE page: branch s + t</w> first: st</w> (9), then e + st</w> (9) -> est</w>; 22 pieces.
    let request = merge::TraceRequest {
        ties: false,
        max_ties: 1,
        forced: vec![(1, b"s".to_vec(), b"t</w>".to_vec())],
    };
    let (_, trace) = merge_traced(request, BPE22, FOUR);
    assert!(trace.error.is_none());
    assert!(trace.steps[0].forced);
    assert_eq!((s(&trace.steps[0].result), s(&trace.steps[1].result)), ("st</w>", "est</w>"));
    assert_eq!(trace.steps.last().unwrap().pieces_after, 22);
}

#[test]
fn forced_choice_that_is_no_candidate_is_an_error() {
    let request = merge::TraceRequest {
        ties: false,
        max_ties: 1,
        forced: vec![(1, b"z".to_vec(), b"q".to_vec())],
    };
    let (_, trace) = merge_traced(request, BPE22, FOUR);
    let e = trace.error.expect("an error");
    assert!(e.contains("step 1") && e.contains("not a candidate"), "{e}");
    assert!(trace.steps.is_empty());
}

#[test]
fn untraced_runs_record_nothing() {
    // empty slots ask for nothing and get nothing back; the model is the untraced one
    let mut traces = learners::Traces::default();
    let model = train_with(BPE22, FOUR, &mut traces);
    assert!(traces.merge.is_none() && traces.unigram.is_none());
    assert_eq!(
        model.to_json(),
        merge_traced(merge::TraceRequest::default(), BPE22, FOUR).0.to_json()
    );
}

#[test]
fn unigram_rounds_and_zero_losses() {
    // Unigram page: "The four words go 49, 36, 27, 20, 15 in four rounds" and "On the four words,
    // 34 of the 38 pieces the pruning is allowed to touch cost exactly zero."
    let opts = r#"{"model":"unigram","spelling":"end","vocab_size":16}"#;
    let (model, trace) = unigram_traced(unigram::UnigramTraceRequest { em: true }, opts, FOUR);
    let sizes: Vec<usize> = trace.rounds.iter().map(|r| r.size).collect();
    assert_eq!(sizes, vec![49, 36, 27, 20, 15]);
    assert_eq!((trace.rounds[0].candidates, trace.rounds[0].zero_losses), (38, 34));
    // 49 -> 36 removes 13 pieces; the last round prunes nothing
    assert_eq!(trace.rounds[0].pruned.len(), 13);
    assert!(trace.rounds[4].pruned.is_empty());
    // "Dropping newest costs 91.26 nats" (the largest loss, first in pruning's order)
    let (p, loss) = &trace.rounds[0].losses[0];
    assert_eq!((s(p), format!("{loss:.2}")), ("newest</w>", "91.26".to_string()));
    // the last round's likelihood is the report's
    let ll = model.report.as_ref().unwrap().log_likelihood.unwrap();
    assert_eq!(trace.rounds[4].log_likelihood, ll);
    // EM: the seed, then two steps per round
    assert_eq!(trace.em.len(), 1 + 2 * 5);
    assert_eq!(trace.em[0].pieces.len(), 49);
    assert_eq!(model.to_json(), train(opts, FOUR).to_json());
}
