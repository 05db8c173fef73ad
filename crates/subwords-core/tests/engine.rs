//! The engine on its own, without Python: the BPE page's four words, the file format, and
//! determinism across thread counts.

use subwords_core::counting::UnitCounter;
use subwords_core::learners::{train, Corpus};
use subwords_core::tokenizer::Tokenizer;
use subwords_core::options::TrainOptions;

fn options(json: &str) -> TrainOptions {
    TrainOptions::from_json(json).unwrap()
}

/// The four words of the BPE page (000_…): low 5, lower 2, newest 6, widest 3.
fn four_words(opts: &TrainOptions, threads: usize) -> Tokenizer {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut counter = UnitCounter::new(opts.spelling().unwrap(), threads, opts.superword_at.is_some());
        for (w, c) in [("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)] {
            counter.add_count(w, c);
        }
        let (counts, norm, texts, streams) = counter.finish().unwrap();
        train(opts, Corpus::from_counts(counts, norm, texts, streams)).unwrap()
    })
}

fn pieces(m: &Tokenizer, text: &str) -> Vec<String> {
    m.encode(text).unwrap().into_iter().map(|i| m.display(i).unwrap()).collect()
}

#[test]
fn four_words_end_spelling() {
    let m = four_words(&options(r#"{"model":"bpe","spelling":"end","vocab_size":22}"#), 1);
    // 000_…: 11 symbols + [UNK] + 10 merges = 22 rows; the corpus goes 79 -> 22 pieces
    assert_eq!(m.rows.len(), 22);
    let r = m.report.as_ref().unwrap();
    assert_eq!((r.alphabet_size, r.corpus_pieces_before, r.corpus_pieces_after), (11, 79, 22));
    // first merge e+s at 9 (tie with s+t</w> at 9, broken by code point: e < s), then es+t</w>
    let first: Vec<(String, String)> =
        m.merges.iter().take(2).map(|x| (m.display(x[0]).unwrap(), m.display(x[1]).unwrap())).collect();
    assert_eq!(first, [("e".into(), "s".into()), ("es".into(), "t</w>".into())]);
    assert_eq!(pieces(&m, "lowest"), ["lo", "w", "est</w>"]);
    // the known slip of the page: `lower` is still four pieces after ten merges
    assert_eq!(pieces(&m, "lower"), ["lo", "w", "e", "r</w>"]);
}

#[test]
fn four_words_front_spelling() {
    let m = four_words(&options(r#"{"model":"bpe","spelling":"front","vocab_size":30}"#), 1);
    // 004_…: 95 pieces, 15 merges, 27 rows (the corpus supports no more)
    let r = m.report.as_ref().unwrap();
    assert_eq!((r.corpus_pieces_before, r.merges_learned, m.rows.len()), (95, 15, 27));
    assert_eq!(pieces(&m, "lowest"), ["▁low", "est"]);
}

#[test]
fn model_file_round_trips() {
    for json in [
        r#"{"model":"bpe","spelling":"end","vocab_size":22,"byte_fallback":true}"#,
        r#"{"model":"bpe","spelling":"continuation","vocab_size":20}"#,
        r#"{"model":"bpe","spelling":"bytes","vocab_size":270}"#,
        r#"{"model":"bpe","spelling":"end","vocab_size":25,"superword_at":22}"#,
        r#"{"model":"word","spelling":"front","vocab_size":10,"min_count":1}"#,
    ] {
        let m = four_words(&options(json), 1);
        let text = m.to_json();
        let back = Tokenizer::from_json(&text).unwrap();
        assert_eq!(back.to_json(), text, "{json}");
        assert_eq!(back.encode("lowest newer").unwrap(), m.encode("lowest newer").unwrap());
    }
}

#[test]
fn same_model_on_one_and_two_threads() {
    // a corpus with many distinct units, so that both the parallel counting and the parallel
    // merge rewrite are used
    let mut texts = Vec::new();
    let mut x: u64 = 7;
    for _ in 0..30000 {
        let mut line = String::new();
        for _ in 0..12 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = 2 + (x >> 60) as usize;
            for k in 0..len {
                // the shift as release builds do it (masked to 0..64), so debug builds run too
                line.push((b'a' + ((x >> ((8 + 5 * k) & 63)) % 7) as u8) as char);
            }
            line.push(' ');
        }
        texts.push(line);
    }
    let opts = options(r#"{"model":"bpe","spelling":"front","vocab_size":500}"#);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut counter = UnitCounter::new(opts.spelling().unwrap(), threads, false);
            counter.feed_texts(&texts);
            let (counts, norm, n, streams) = counter.finish().unwrap();
            train(&opts, Corpus::from_counts(counts, norm, n, streams)).unwrap().to_json()
        })
    };
    assert_eq!(run(1), run(2));
}
