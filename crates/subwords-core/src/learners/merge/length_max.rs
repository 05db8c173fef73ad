//! Length-MAX (Dong and Su, "Length-MAX Tokenizer for Language Models", arXiv 2511.20849).
//!
//! The paper's objective weighs a token by its frequency times its length, `freq(t) · |t|`, so
//! that long tokens that stay frequent win over short frequent ones, and maximizes it greedily.
//! Here that greedy choice is made on the merge engine's candidates: each round takes the pair
//! with the largest `count(a, b) · (len(a) + len(b))`, where `count` is BPE's pair count and the
//! length is the joined piece's length in alphabet symbols (characters, or bytes under the bytes
//! spelling; a mark such as `▁` is one symbol). Everything else is BPE: ties go to the smaller
//! `(left, right)` as spelled, every occurrence is joined left to right without overlap, and the
//! result is an ordinary merge list in rank order, which encodes, saves and exports as BPE's.
//!
//! `min_count` filters: a pair counted below it is no candidate (a long rare pair could
//! otherwise outscore every frequent one), and training stops when no candidate is left.
//!
//! The engine keeps its invariant unchanged: a pair's score only rises when its count rises (a
//! symbol's length never changes), so an entry pushed on every rise still bounds the pair. It
//! runs without the heap floor and without dropping rare pairs (both are kept in counts).
//!
//! The pure-Python reference is `python/subwords/reference/length_max.py`; the tests work a
//! case by hand and run the core against the reference on random corpora.

use crate::error::Result;
use crate::options::{ModelKind, TrainOptions};

/// The options Length-MAX composes with; the others are refused with the reason.
pub fn validate(opts: &TrainOptions) -> Result<()> {
    if !opts.length_max {
        return Ok(());
    }
    super::refuse(
        opts,
        &[
            (|o| o.model != ModelKind::Bpe,
             "length_max applies only to model='bpe': it changes which pair a BPE merge takes"),
            (|o| o.picky.is_some(),
             "length_max does not take picky: they are two different merge rules; train one of each and compare them"),
            (|o| o.superword_at.is_some(),
             "length_max does not take superword_at yet: its score is defined for one merge stage"),
        ],
    )
}

#[cfg(test)]
mod tests {
    use crate::counting::UnitCounter;
    use crate::learners::{train, Corpus};
    use crate::options::TrainOptions;
    use crate::tokenizer::Tokenizer;

    fn model(extra: &str, units: &[(&str, u64)], rows: u64) -> Tokenizer {
        let json = format!(
            r#"{{"model":"bpe","spelling":"bytes","min_count":1,"vocab_size":{}{extra}}}"#,
            256 + rows
        );
        let opts = TrainOptions::from_json(&json).unwrap();
        let mut counter = UnitCounter::new(opts.spelling().unwrap(), 1, false);
        for &(w, c) in units {
            counter.add_count(w, c);
        }
        let (counts, norm, texts, streams) = counter.finish().unwrap();
        train(&opts, Corpus::from_counts(counts, norm, texts, streams)).unwrap()
    }

    fn merges(m: &Tokenizer) -> Vec<String> {
        m.merges
            .iter()
            .map(|x| format!("{} {}", m.display(x[0]).unwrap(), m.display(x[1]).unwrap()))
            .collect()
    }

    #[test]
    fn worked_case() {
        // freq(t) · |t| on pairs: units abc x4, de x5, ab x2. Round one: (a, b) 6 · 2 = 12 beats
        // (d, e) 5 · 2 = 10. Round two: (ab, c) 4 · 3 = 12 beats (d, e) 10; BPE takes (d, e),
        // the larger count (5 against 4).
        let units = [("abc", 4), ("de", 5), ("ab", 2)];
        let lm = model(r#","length_max":true"#, &units, 2);
        assert_eq!(merges(&lm), ["a b", "ab c"]);
        let bpe = model("", &units, 2);
        assert_eq!(merges(&bpe), ["a b", "d e"]);
    }

    #[test]
    fn min_count_filters_candidates() {
        // abcdef x1 and xy x2, min_count 2: every pair of abcdef is counted once, so (x, y) is
        // the only candidate, then none is left
        let json = r#"{"model":"bpe","spelling":"bytes","min_count":2,"vocab_size":300,"length_max":true}"#;
        let opts = TrainOptions::from_json(json).unwrap();
        let mut counter = UnitCounter::new(opts.spelling().unwrap(), 1, false);
        counter.add_count("abcdef", 1);
        counter.add_count("xy", 2);
        let (counts, norm, texts, streams) = counter.finish().unwrap();
        let m = train(&opts, Corpus::from_counts(counts, norm, texts, streams)).unwrap();
        assert_eq!(merges(&m), ["x y"]);
    }

    /// The engine's memory policy at its extremes changes no Length-MAX merge (the score is not
    /// a count: no heap floor is taken, and no pair is dropped).
    #[test]
    fn tuning_changes_no_merge() {
        use crate::learners::merge::{
            learn, Compaction, Flat, MergeParams, Score, Symbols, Tuning,
        };
        let run = |tuning: Tuning| {
            let mut symbols = Symbols::new(0, b"");
            for c in b"abcde" {
                symbols.push(vec![*c], 1);
            }
            let mut flat = Flat::default();
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            for k in 0..3000u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let n = 2 + (x % 8) as usize;
                let u: Vec<u32> = (0..n).map(|i| ((x >> (3 * i + 8)) % 5) as u32).collect();
                flat.push(&u, 1 + 1000 / (k + 1));
            }
            let mut params = MergeParams::bpe(600, 1, None);
            params.score = Score::CountTimesLength;
            params.tuning = tuning;
            let out = learn(flat, &mut symbols, &params, None);
            (out.merges, out.pieces_after, out.events.floor_raised)
        };
        let plain = run(Tuning { compaction: Compaction::Never, ..Tuning::default() });
        assert!(plain.0.len() > 100, "room for many merges: {}", plain.0.len());
        let tight = run(Tuning {
            compaction: Compaction::Always,
            heap_keep: 16,
            shards: Some(7),
            drop_below: Some(1 << 20),
            ..Tuning::default()
        });
        assert_eq!(tight.2, 0, "a heap floor is kept in counts, never in scores");
        assert_eq!(plain, tight);
    }

    #[test]
    fn refused_options() {
        for (extra, why) in [
            (r#""model":"unigram","spelling":"front""#, "only to model='bpe'"),
            (r#""model":"wordpiece","spelling":"end""#, "only to model='bpe'"),
            (r#""model":"bpe","spelling":"bytes","picky":0.9"#, "picky"),
            (r#""model":"bpe","spelling":"bytes","superword_at":300"#, "superword_at"),
        ] {
            let json = format!(r#"{{{extra},"vocab_size":400,"length_max":true}}"#);
            let err = match TrainOptions::from_json(&json) {
                Ok(_) => panic!("{json} was taken"),
                Err(e) => e.to_string(),
            };
            assert!(err.contains(why), "{json}: {err}");
        }
    }
}
