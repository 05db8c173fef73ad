//! The engine on its own, without Python: the BPE page's four words, the file format, and
//! determinism across thread counts.

use subwords_core::counting::UnitCounter;
use subwords_core::learners::{train, Corpus};
use subwords_core::options::TrainOptions;
use subwords_core::tokenizer::Tokenizer;

fn options(json: &str) -> TrainOptions {
    TrainOptions::from_json(json).unwrap()
}

/// The four words of the BPE page (000_…): low 5, lower 2, newest 6, widest 3.
fn four_words(opts: &TrainOptions, threads: usize) -> Tokenizer {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut counter =
            UnitCounter::new(opts.spelling().unwrap(), threads, opts.superword_at.is_some());
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
    let first: Vec<(String, String)> = m
        .merges
        .iter()
        .take(2)
        .map(|x| (m.display(x[0]).unwrap(), m.display(x[1]).unwrap()))
        .collect();
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

/// A BERT-like imported vocabulary of 5,003 rows: [UNK], [CLS], [SEP], `a`..`z`, `##a`..`##z`
/// and words `w0000`, `w0001`, … up to 5,003 rows. Large enough that its WordPiece trie is built
/// on a thread of its own while the rows are checked (`tokenizer/build.rs`, `spawn_trie`).
fn large_vocabulary() -> Vec<(String, subwords_core::vocab::RowKind)> {
    use subwords_core::vocab::RowKind;
    let mut rows: Vec<(String, RowKind)> =
        ["[UNK]", "[CLS]", "[SEP]"].iter().map(|s| (s.to_string(), RowKind::Special)).collect();
    for c in 'a'..='z' {
        rows.push((c.to_string(), RowKind::Piece));
    }
    for c in 'a'..='z' {
        rows.push((format!("##{c}"), RowKind::Piece));
    }
    let mut n = 0;
    while rows.len() < 5003 {
        rows.push((format!("w{n:04}"), RowKind::Piece));
        n += 1;
    }
    rows
}

fn bert_spelling() -> subwords_core::spelling::Spelling {
    serde_json::from_str(r###"{"scheme":"continuation","mark":"##","split_at_marks":true,"pre_split":"bert","byte_fallback":false,"clean_text":true,"strip_accents":true,"lowercase":true}"###).unwrap()
}

#[test]
fn large_wordpiece_vocabulary_trie_built_beside_the_checks() {
    use subwords_core::options::ModelKind;
    let m = Tokenizer::from_rows(
        ModelKind::Wordpiece,
        bert_spelling(),
        large_vocabulary(),
        Some(("[CLS]", "[SEP]")),
    )
    .unwrap();
    // (`encode` gives the word's pieces; the template is put around them elsewhere)
    // by construction: [UNK] 0, [CLS] 1, [SEP] 2, `a` 3 .. `z` 28, `##a` 29 .. `##z` 54, then
    // `w0000` at 55, so `w1234` is 55 + 1234 = 1289 and the last row, `w4947`, is 5002
    assert_eq!(m.encode("w1234").unwrap(), [1289]);
    assert_eq!(m.encode("w4947").unwrap(), [5002]);
    // longest match first: `w1234`, then no `##5` row, so the whole word is [UNK]
    assert_eq!(m.encode("w12345").unwrap(), [0]);
    // `bad`: `b` (4), `##a` (29), `##d` (32)
    assert_eq!(m.encode("bad").unwrap(), [4, 29, 32]);
}

#[test]
fn large_wordpiece_vocabulary_error_while_the_trie_builds() {
    use subwords_core::options::ModelKind;
    use subwords_core::vocab::RowKind;
    // the last row repeats `w0100`: the index finds it, on this thread, while the trie is built
    // on the other
    let mut rows = large_vocabulary();
    rows[5002] = ("w0100".to_string(), RowKind::Piece);
    let e =
        Tokenizer::from_rows(ModelKind::Wordpiece, bert_spelling(), rows, Some(("[CLS]", "[SEP]")))
            .err()
            .expect("a row twice is refused");
    assert!(e.to_string().contains("row 5002: piece \"w0100\" appears twice"), "{e}");
}

/// `Tokenizer::from_piece_rows` (the `vocab.txt` reader's way in: the engine's rows as they
/// are, no `String` each) builds the model `from_rows` builds of the same rows, and refuses what
/// it cannot take as it is: a row of another kind, or the bytes spelling, whose file texts are
/// spelled in its byte alphabet.
#[test]
fn piece_rows_make_the_model_from_rows_makes_and_refuse_other_rows() {
    use subwords_core::options::ModelKind;
    use subwords_core::vocab::{Row, RowKind};
    let as_rows = |rows: &[(String, RowKind)]| -> Vec<Row> {
        rows.iter().map(|(t, k)| Row::new(t.as_bytes(), *k)).collect()
    };
    let template = Some(("[CLS]", "[SEP]"));
    let strings = large_vocabulary();
    let a = Tokenizer::from_rows(ModelKind::Wordpiece, bert_spelling(), strings.clone(), template)
        .unwrap();
    let b = Tokenizer::from_piece_rows(
        ModelKind::Wordpiece,
        bert_spelling(),
        as_rows(&strings),
        template,
        None,
    )
    .unwrap();
    assert_eq!(a.to_json(), b.to_json());
    for word in ["w1234", "w12345", "bad", "zzz"] {
        assert_eq!(a.encode(word).unwrap(), b.encode(word).unwrap(), "{word}");
    }
    // (same ids as the test above, by construction: `bad` is `b` 4, `##a` 29, `##d` 32)
    assert_eq!(b.encode("bad").unwrap(), [4, 29, 32]);

    let mut learned = as_rows(&strings);
    learned[40].kind = RowKind::Learned;
    let e =
        Tokenizer::from_piece_rows(ModelKind::Wordpiece, bert_spelling(), learned, template, None)
            .err()
            .expect("a learned row is refused");
    assert!(e.to_string().contains("row 40: a learned row is not a piece or a special row"), "{e}");

    let mut bytes = bert_spelling();
    bytes.scheme = subwords_core::spelling::Scheme::Bytes;
    let e =
        Tokenizer::from_piece_rows(ModelKind::Wordpiece, bytes, as_rows(&strings), template, None)
            .err()
            .expect("the bytes spelling is refused");
    assert!(e.to_string().contains("byte alphabet"), "{e}");
}

/// A short unit waits for its cache slots to be fetched (`Tokenizer::encode_units`,
/// eight units behind) before it is looked up. The ids must be each unit's own, in the text's
/// order, with units of 16 bytes and more (looked up at once) and of more than 64 (not cached)
/// among them, on a first pass and on a cached one; and the first unit that cannot be encoded
/// is the one named, however many were waiting.
#[test]
fn units_that_wait_for_their_cache_slots_keep_their_order_and_the_first_error() {
    let m = four_words(&options(r#"{"model":"bpe","spelling":"end","vocab_size":22}"#), 1);
    let longer = "w".repeat(70);
    let words = [
        "low",
        "lower",
        "newest",
        "widest",
        "lowestlowestlowest",
        "low",
        "lowest",
        "new",
        "wide",
        "lo",
        "we",
        &longer,
        "st",
        "newer",
        "lowest",
        "wider",
        "west",
        "owe",
    ];
    let text = words.join(" ");
    let mut want = Vec::new();
    for w in words {
        want.extend(pieces(&m, w));
    }
    // two of them from the page's table (000_…), as in four_words_end_spelling
    assert_eq!(pieces(&m, "lowest"), ["lo", "w", "est</w>"]);
    assert_eq!(pieces(&m, "lower"), ["lo", "w", "e", "r</w>"]);
    assert_eq!(pieces(&m, &text), want, "first pass");
    assert_eq!(pieces(&m, &text), want, "every word cached");
    // the mark inside a word is refused; the first such word is the one named
    let bad = format!("{} a</w>b lo c</w>d low", words[..10].join(" "));
    let e = m.encode(&bad).unwrap_err().to_string();
    assert!(e.contains("\"a</w>b\""), "{e}");
}
