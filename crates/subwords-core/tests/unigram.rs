//! The Unigram engine on its own: every number the Unigram page (`002_…`) computes on the four
//! words (low 5, lower 2, newest 6, widest 3, `end` spelling: `l o w</w>`) and on `ab`, plus
//! determinism across thread counts and sampling frequencies against the shares.
//!
//! Two layers. The learner's numbers (seed, EM, losses, rounds) come from
//! `learners::unigram::train` on hand-spelled units. Every cut of a unit (Viterbi, fewest pieces,
//! n-best, shares, sampling, arc counts) comes from a [`Tokenizer`] trained through the public path
//! (`learners::train`, what `subwords.train` calls) and read back from its file (what
//! `subwords.load` does): the model's own trie walk and Viterbi, the code `Tokenizer::encode` runs.

use std::collections::BTreeMap;

use subwords_core::counting::UnitCounter;
use subwords_core::learners;
use subwords_core::learners::merge::{Flat, NO_SYMBOL};
use subwords_core::learners::unigram::{losses_on, train, UnigramParams, UnigramTrained};
use subwords_core::options::TrainOptions;
use subwords_core::segmenters::unigram::lattice::SplitMix64;
use subwords_core::tokenizer::{Mode, Tokenizer};

/// Units spelled under `end` (the last symbol carries `</w>`), with symbol ids in order of
/// first appearance (deliberately not text order, so the engine's own ordering is exercised).
struct Corpus {
    flat: Flat,
    texts: Vec<Vec<u8>>,
}

fn spell_end(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    chars
        .iter()
        .enumerate()
        .map(|(k, c)| if k + 1 == chars.len() { format!("{c}</w>") } else { c.to_string() })
        .collect()
}

/// `front`: `▁` then the characters (SentencePiece, `004_…`).
fn spell_front(word: &str) -> Vec<String> {
    std::iter::once("\u{2581}".to_string()).chain(word.chars().map(|c| c.to_string())).collect()
}

/// `continuation`: the first character plain, every other with `##` (WordPiece).
fn spell_continuation(word: &str) -> Vec<String> {
    word.chars()
        .enumerate()
        .map(|(k, c)| if k == 0 { c.to_string() } else { format!("##{c}") })
        .collect()
}

fn corpus(words: &[(&str, u64)]) -> Corpus {
    corpus_with(words, spell_end)
}

/// A spelling: a word to its symbols.
type Spell = fn(&str) -> Vec<String>;

fn corpus_with(words: &[(&str, u64)], spell: Spell) -> Corpus {
    let mut ids: BTreeMap<String, u32> = BTreeMap::new();
    let mut texts = Vec::new();
    let mut flat = Flat::default();
    for &(w, c) in words {
        let syms: Vec<u32> = spell(w)
            .into_iter()
            .map(|s| {
                *ids.entry(s.clone()).or_insert_with(|| {
                    texts.push(s.into_bytes());
                    texts.len() as u32 - 1
                })
            })
            .collect();
        flat.push(&syms, c);
    }
    Corpus { flat, texts }
}

const FOUR: &[(&str, u64)] = &[("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)];

fn run(c: &Corpus, params: UnigramParams) -> UnigramTrained {
    train(&c.flat, &c.texts, b"", &params, None).unwrap()
}

fn params(target: usize, em_rounds: usize) -> UnigramParams {
    UnigramParams { em_rounds, ..UnigramParams::new(target) }
}

/// Every piece of a trained table: (text, log-prob).
fn table(c: &Corpus, t: &UnigramTrained) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (id, lp) in t.alphabet.iter().enumerate() {
        out.insert(String::from_utf8(c.texts[id].clone()).unwrap(), lp.unwrap());
    }
    for p in &t.learned {
        out.insert(String::from_utf8(p.text.clone()).unwrap(), p.log_prob);
    }
    out
}

/// A Unigram model of `words` trained through the public path and read back from its file.
fn trained(spelling: &str, vocab_size: u64, em_rounds: u32, words: &[(&str, u64)]) -> Tokenizer {
    let opts = TrainOptions::from_json(&format!(
        r#"{{"model":"unigram","spelling":"{spelling}","vocab_size":{vocab_size},"em_rounds":{em_rounds}}}"#
    ))
    .unwrap();
    let mut counter = UnitCounter::new(opts.spelling().unwrap(), 1, false);
    for &(w, c) in words {
        counter.add_count(w, c);
    }
    let (counts, norm, texts, streams) = counter.finish().unwrap();
    let m = learners::train(&opts, learners::Corpus::from_counts(counts, norm, texts, streams))
        .unwrap();
    let file = m.to_json();
    let back = Tokenizer::from_json(&file).unwrap();
    assert_eq!(back.to_json(), file);
    back
}

/// A Unigram model file holding exactly the pieces of `rows` (text, log-prob) under `scheme`
/// (`end`, `front` or `continuation`), read by `Tokenizer::from_json`: how a table from elsewhere
/// (the Python reference's) gets the product's segmenter. Single symbols become the alphabet
/// (text order), the rest learned rows in the order given.
fn model_from_table(scheme: &str, rows: &[(String, f64)]) -> Tokenizer {
    let mark = match scheme {
        "end" => "</w>",
        "continuation" => "##",
        "front" => "\u{2581}",
        _ => panic!("no spelling {scheme}"),
    };
    let single = |t: &str| {
        let body = match scheme {
            "end" => t.strip_suffix(mark).unwrap_or(t),
            "continuation" => t.strip_prefix(mark).unwrap_or(t),
            _ => t,
        };
        body.chars().count() == 1
    };
    let mut alphabet: Vec<&(String, f64)> = rows.iter().filter(|r| single(&r.0)).collect();
    alphabet.sort_by(|a, b| a.0.cmp(&b.0));
    let learned = rows.iter().filter(|r| !single(&r.0));
    let lp = |x: f64| {
        if x == f64::NEG_INFINITY {
            serde_json::json!("-inf")
        } else {
            serde_json::json!(x)
        }
    };
    let mut file_rows = vec![serde_json::json!(["[UNK]", "special"])];
    let mut log_probs = vec![serde_json::Value::Null];
    for (r, kind) in
        alphabet.into_iter().map(|r| (r, "alphabet")).chain(learned.map(|r| (r, "learned")))
    {
        file_rows.push(serde_json::json!([r.0, kind]));
        log_probs.push(lp(r.1));
    }
    let file = serde_json::json!({
        "format": "subwords",
        "version": 1,
        "model": "unigram",
        "spelling": {"byte_fallback": false, "clean_text": false, "lowercase": false, "mark": mark, "pre_split": null,
                     "scheme": scheme, "split_at_marks": true, "strip_accents": false},
        "stream_merges_from": null,
        "joints": null,
        "options": null,
        "report": null,
        "rows": file_rows,
        "merges": [],
        "log_probs": log_probs,
    });
    Tokenizer::from_json(&file.to_string()).unwrap()
}

/// Pieces as the pages print them, space-separated.
fn show(m: &Tokenizer, ids: &[u32]) -> String {
    ids.iter().map(|&i| m.display(i).unwrap()).collect::<Vec<_>>().join(" ")
}

/// A piece's log-probability in a model.
fn lp(m: &Tokenizer, piece: &str) -> f64 {
    m.log_probs[m.piece_to_id(piece).unwrap_or_else(|| panic!("no row {piece}")) as usize].unwrap()
}

/// Every piece of a model with its log-probability, as [`table`] gives the learner's.
fn model_table(m: &Tokenizer) -> BTreeMap<String, f64> {
    (0..m.rows.len() as u32)
        .filter_map(|i| m.log_probs[i as usize].map(|v| (m.display(i).unwrap(), v)))
        .collect()
}

/// Viterbi as `encode` runs it, with the sum of its pieces' log-probabilities (`-inf` with an
/// `[UNK]` among them: it has none).
fn best(m: &Tokenizer, text: &str) -> (String, f64) {
    let ids = m.encode(text).unwrap();
    (show(m, &ids), ids.iter().map(|&i| m.log_probs[i as usize].unwrap_or(f64::NEG_INFINITY)).sum())
}

fn pct(x: f64) -> String {
    format!("{:.2}", 100.0 * x)
}

#[test]
fn seed_has_49_candidates_and_e_is_17_over_249() {
    // 002_…, section 3: 49 candidates; e occurs 17 times of 249 (0.068); es, est</w>, s,
    // st</w>, t</w> 9 times each (0.036).
    let c = corpus(FOUR);
    let t = run(&c, params(1000, 0));
    assert_eq!(t.seed_size, 49);
    assert_eq!(t.rounds, vec![49]);
    assert!(!t.reached_target);
    let tab = table(&c, &t);
    assert_eq!(tab.len(), 49);
    assert_eq!(tab["e"], (17.0f64 / 249.0).ln());
    for p in ["es", "est</w>", "s", "st</w>", "t</w>"] {
        assert_eq!(tab[p], (9.0f64 / 249.0).ln(), "{p}");
    }
    assert_eq!(format!("{:.3}", tab["e"].exp()), "0.068");
    assert_eq!(format!("{:.3}", tab["est</w>"].exp()), "0.036");
}

#[test]
fn lowest_on_the_seed_table() {
    // 002_…, sections 5 and 8: 17 arcs, 28 walks; lo west</w> 46.81%, then lowe st</w> and
    // low est</w> at exactly 20.06% each (that order: the longer piece first), then BPE's
    // lo w est</w> fourth at 3.10%.
    let m = trained("end", 1000, 0, FOUR);
    let r = m.report.as_ref().unwrap();
    assert_eq!((r.seed_size, r.rounds.as_deref()), (Some(49), Some(&[49][..])));
    assert_eq!(lp(&m, "e"), (17.0f64 / 249.0).ln(), "the seed table, as the learner test has it");
    let l = m.unit_lattice("lowest").unwrap();
    assert_eq!(l.arcs().len(), 17);
    let z = l.log_probability();
    let all = m.nbest_of("lowest", usize::MAX).unwrap();
    assert_eq!(all.len(), 28);
    let top: Vec<(String, String)> =
        all.iter().take(4).map(|(ids, s)| (show(&m, ids), pct((s - z).exp()))).collect();
    let want = [
        ("lo west</w>", "46.81"),
        ("lowe st</w>", "20.06"),
        ("low est</w>", "20.06"),
        ("lo w est</w>", "3.10"),
    ];
    assert_eq!(top, want.map(|(a, b)| (a.to_string(), b.to_string())));
    assert_eq!(all[1].1, all[2].1, "an exact tie, not a near one");
    let total: f64 = all.iter().map(|s| (s.1 - z).exp()).sum();
    assert!((total - 1.0).abs() < 1e-12);
    // the shares as `spellings` reports them: the same list, the same numbers
    let shares = m.spellings_of("lowest").unwrap();
    assert_eq!(
        shares.iter().map(|s| &s.0).collect::<Vec<_>>(),
        all.iter().map(|s| &s.0).collect::<Vec<_>>()
    );
    for ((_, share), (_, s)) in shares.iter().zip(&all) {
        assert!((share - (s - z).exp()).abs() < 1e-12);
    }
    // Viterbi (what encode runs) and the fewest pieces disagree here (docs/API.md)
    assert_eq!(best(&m, "lowest").0, "lo west</w>");
    assert_eq!(m.encode("lowest").unwrap(), all[0].0, "encode's Viterbi is the 1-best");
    assert_eq!(show(&m, &m.encode_mode("lowest", Mode::Fewest).unwrap()), "lowe st</w>");
    assert_eq!(m.nbest_of("lowest", 3).unwrap().len(), 3);
    // the other ways in: a second call (the cache), offsets, a batch, lowest inside a text
    assert_eq!(best(&m, "lowest").0, "lo west</w>");
    let (ids, spans) = m.encode_with_spans("lowest").unwrap();
    assert_eq!((show(&m, &ids), spans), ("lo west</w>".to_string(), vec![(0, 2), (2, 6)]));
    let batch = m.encode_batch(&["lowest", "low", "lowest"], 2).unwrap();
    assert_eq!(batch[0], all[0].0);
    assert_eq!(batch[2], all[0].0);
    let mut text = m.encode("low").unwrap();
    text.extend(&all[0].0);
    assert_eq!(m.encode("low lowest").unwrap(), text);
}

#[test]
fn viterbi_ties_go_to_the_longer_piece_first() {
    // DESIGN §2: "Viterbi ties: fewer pieces, then the longer piece at the earliest position
    // where two spellings differ". The page's exact tie (002_…, section 8: lowe st</w> and
    // low est</w> at 20.06% each, 2/249 · 9/249 both) becomes the best one when west</w> is
    // taken out of the seed table, and encode must take lowe st</w>.
    let m = trained("end", 1000, 0, FOUR);
    let rows: Vec<(String, f64)> =
        model_table(&m).into_iter().filter(|r| r.0 != "west</w>").collect();
    let m = model_from_table("end", &rows);
    let all = m.nbest_of("lowest", 3).unwrap();
    let z = m.unit_lattice("lowest").unwrap().log_probability();
    assert_eq!(
        (show(&m, &all[0].0), show(&m, &all[1].0)),
        ("lowe st</w>".into(), "low est</w>".into())
    );
    assert_eq!(all[0].1, all[1].1, "an exact tie");
    assert!((all[0].1 - (2.0f64 / 249.0).ln() - (9.0f64 / 249.0).ln()).abs() < 1e-12);
    assert!(all[2].1 < all[1].1);
    assert!((all[0].1 - z).exp() > 0.3, "the two lead once lo west</w> is gone");
    assert_eq!(best(&m, "lowest").0, "lowe st</w>");
    assert_eq!(show(&m, &m.encode_with_spans("lowest").unwrap().0), "lowe st</w>");
}

/// The pieces of `aaaaab` spelled `end` (a a a a a b</w>) over `aa` -0.1, `aaa` -0.2, `b</w>`
/// -0.3, and `a` at -50 so that every spelling holding a lone `a` loses.
fn aaaaab_rows() -> Vec<(String, f64)> {
    [("a", -50.0), ("b</w>", -0.3), ("aa", -0.1), ("aaa", -0.2)]
        .iter()
        .map(|&(p, l)| (p.to_string(), l))
        .collect()
}

#[test]
fn permuted_pieces_tie_whatever_the_float_sums() {
    // Ties that are ties. The two best spellings of `aaaaab` are aa aaa b</w> and
    // aaa aa b</w>: the same three pieces in another order, tied in arithmetic. The float
    // recurrence adds from the last piece, and for these doubles the order shows in the last
    // bit: -0.1 + (-0.2 + -0.3) = -0.6, but -0.2 + (-0.1 + -0.3) = -0.6000000000000001
    // (equally, a + b + c != c + b + a with a = -0.1, b = -0.2, c = -0.3: -0.6000000000000001
    // against -0.6). Comparing the doubles would take aa aaa b</w>; the tie rule (same count,
    // then the longer piece where they first differ: aaa against aa) takes aaa aa b</w>.
    let (a, b, c) = (-0.1f64, -0.2f64, -0.3f64);
    assert_ne!(a + (b + c), b + (a + c), "the two recurrence sums differ in f64");
    assert_ne!(a + b + c, c + b + a);
    assert_eq!(a + (b + c), -0.6);
    assert_eq!(b + (a + c), -0.6000000000000001);
    let m = model_from_table("end", &aaaaab_rows());
    // encode (Viterbi from the trie) and the spans version
    assert_eq!(show(&m, &m.encode("aaaaab").unwrap()), "aaa aa b</w>");
    assert_eq!(show(&m, &m.encode_with_spans("aaaaab").unwrap().0), "aaa aa b</w>");
    // the lattice's Viterbi and n-best agree, and report the float scores of the recurrence
    let l = m.unit_lattice("aaaaab").unwrap();
    let v = l.viterbi().unwrap();
    assert_eq!(v.score, -0.6000000000000001);
    let pieces = |arcs: &[u32]| {
        arcs.iter()
            .map(|&k| m.display(l.arcs()[k as usize].piece).unwrap())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(pieces(&v.arcs), "aaa aa b</w>");
    let two = m.nbest_of("aaaaab", 3).unwrap();
    assert_eq!((show(&m, &two[0].0), two[0].1), ("aaa aa b</w>".to_string(), -0.6000000000000001));
    assert_eq!((show(&m, &two[1].0), two[1].1), ("aa aaa b</w>".to_string(), -0.6));
    // third: a lone `a` somewhere, far behind
    assert!(two[2].1 < -50.0);
    // the pruning side: without `b</w>`... is impossible (a single symbol); without `aa` the
    // best is aaa a a b</w>, -0.2 + (-50 + (-50 + -0.3)); without `aaa`, aa aa a b</w>
    let mut s = subwords_core::segmenters::unigram::lattice::ViterbiScratch::default();
    assert!(l.viterbi_with(&mut s));
    let aa = m.piece_to_id("aa").unwrap();
    let aaa = m.piece_to_id("aaa").unwrap();
    let mut w = Default::default();
    assert_eq!(l.best_score_without_from(aa, Some(&s), &mut w), -0.2 + (-50.0 + (-50.0 + -0.3)));
    assert_eq!(l.best_score_without(aaa, &mut w), -0.1 + (-0.1 + (-50.0 + -0.3)));
}

#[test]
fn permutations_of_equal_pieces_come_longest_first() {
    // The property behind the rule: pieces that are all runs of `a` commute, so every
    // arrangement of the Viterbi spelling's pieces spells the same unit and ties with it; the
    // tie rule then wants the lengths in non-increasing order. Random log-probabilities for
    // aa, aaa, aaaa (a lone `a` at -50), units a^n b</w>: the best spelling is always longest
    // first, as is every spelling in the n-best list that comes before its own rearrangements.
    // Not vacuous: we count the cases where the float sums of two arrangements differ.
    let mut rng = SplitMix64::new(2026);
    let mut rounding = 0;
    for _ in 0..300 {
        let mut rows =
            vec![("a".to_string(), -50.0), ("b</w>".to_string(), -0.1 - 3.0 * rng.uniform())];
        let mut lps = std::collections::HashMap::new();
        for len in 2..=4 {
            let lp = -0.01 - 4.0 * rng.uniform();
            lps.insert(len, lp);
            rows.push(("a".repeat(len), lp));
        }
        let m = model_from_table("end", &rows);
        let n = 4 + (rng.uniform() * 12.0) as usize;
        let text = format!("{}b", "a".repeat(n));
        let lens = |ids: &[u32]| {
            ids.iter()
                .map(|&i| m.display(i).unwrap().trim_end_matches("</w>").len())
                .collect::<Vec<_>>()
        };
        let best = lens(&m.encode(&text).unwrap());
        let a_run = &best[..best.len() - 1];
        assert!(a_run.windows(2).all(|w| w[0] >= w[1]), "{text}: {best:?}");
        let listed = m.nbest_of(&text, 40).unwrap();
        assert_eq!(lens(&listed[0].0), best, "the 1-best is the Viterbi spelling");
        let mut seen = std::collections::BTreeSet::new();
        for (ids, _) in &listed {
            let l = lens(ids);
            let mut multiset = l.clone();
            multiset.sort_unstable();
            if seen.insert(multiset) {
                let run = &l[..l.len() - 1];
                assert!(
                    run.windows(2).all(|w| w[0] >= w[1]),
                    "{text}: {l:?} came before its rearrangements"
                );
            }
        }
        // the float scores (the recurrence: lp(x1) + (... + (lp(b</w>) + 0.0))) of the winner and
        // of its reverse arrangement
        let b = rows[1].1;
        let score = |run: &[usize]| {
            run.iter().rev().fold(b + 0.0, |acc, &k| (if k == 1 { -50.0 } else { lps[&k] }) + acc)
        };
        let mut rev: Vec<usize> = a_run.to_vec();
        rev.reverse();
        if score(a_run) != score(&rev) {
            rounding += 1;
        }
    }
    assert!(rounding > 10, "only {rounding} cases where the float sums of two arrangements differ");
}

#[test]
fn lower_and_newest_on_the_seed_table() {
    // 002_…, section 5: lower whole 92.90%, BPE's lo w e r</w> twelfth of sixteen; newest whole
    // 85.45%.
    let m = trained("end", 1000, 0, FOUR);
    for (word, n, share) in [("lower", 16, "92.90"), ("newest", 0, "85.45")] {
        let z = m.unit_lattice(word).unwrap().log_probability();
        let all = m.nbest_of(word, usize::MAX).unwrap();
        if n > 0 {
            assert_eq!(all.len(), n);
        }
        assert_eq!(pct((all[0].1 - z).exp()), share, "{word}");
        assert_eq!(all[0].0.len(), 1);
        assert_eq!(best(&m, word).0, format!("{word}</w>"), "encode keeps {word} whole");
        if word == "lower" {
            let pos = all.iter().position(|s| show(&m, &s.0) == "lo w e r</w>").unwrap();
            assert_eq!(pos + 1, 12);
        }
    }
}

#[test]
fn ab_panel() {
    // 002_…, section 11: a, b</w>, ab</w> at a third; expected counts 0.75 / 0.25 / 0.25 give
    // 0.6 / 0.2 / 0.2; a second round takes ab</w> to 0.9375 / 1.0625 = 15/17 = 0.882.
    let c = corpus(&[("ab", 1)]);
    let p = |k: usize| table(&c, &run(&c, params(10, k)));
    let want = [("0.333", "0.333"), ("0.600", "0.200"), ("0.882", "0.059")];
    for (k, (ab, a)) in want.iter().enumerate() {
        let t = p(k);
        assert_eq!(format!("{:.3}", t["ab</w>"].exp()), *ab, "round {k}");
        assert_eq!(format!("{:.3}", t["a"].exp()), *a, "round {k}");
    }
    assert!((p(2)["ab</w>"].exp() - 15.0 / 17.0).abs() < 1e-12);
}

#[test]
fn em_trajectories_on_the_four_words() {
    // 002_…, section 12: low</w> 0.020 -> 0.265 -> 0.312 -> 5/16; lo 0.028 -> 0.011 -> 0.000134;
    // the best spelling of lowest scores -7.30 -> -9.45 -> -18.39 -> -36.75 -> -73.50.
    let c = corpus(FOUR);
    let tabs: Vec<BTreeMap<String, f64>> =
        (0..5).map(|k| table(&c, &run(&c, params(1000, k)))).collect();
    let low: Vec<String> = tabs[..3].iter().map(|t| format!("{:.3}", t["low</w>"].exp())).collect();
    assert_eq!(low, ["0.020", "0.265", "0.312"]);
    // "and then stops, at exactly five sixteenths": 0.31249998 after three rounds, 5/16 to
    // fifteen digits after four
    assert!((tabs[3]["low</w>"].exp() - 5.0 / 16.0).abs() < 1e-6);
    assert!((tabs[4]["low</w>"].exp() - 5.0 / 16.0).abs() < 1e-12);
    let lo: Vec<String> = tabs[..2].iter().map(|t| format!("{:.3}", t["lo"].exp())).collect();
    assert_eq!(lo, ["0.028", "0.011"]);
    assert_eq!(format!("{:.6}", tabs[2]["lo"].exp()), "0.000134");
    // the same rounds through the public path: the same table to the bit, and encode's
    // spelling of lowest with its score
    let scores: Vec<String> = (0..5)
        .map(|k| {
            let m = trained("end", 1000, k as u32, FOUR);
            assert_eq!(model_table(&m), tabs[k], "round {k}: the model holds the learner's table");
            let (pieces, score) = best(&m, "lowest");
            assert_eq!(pieces, "lo west</w>", "the likeliest spelling never changes");
            let one = &m.nbest_of("lowest", 1).unwrap()[0];
            assert!(
                (one.1 - score).abs() < 1e-9,
                "round {k}: the 1-best scores what encode's pieces add up to"
            );
            format!("{score:.2}")
        })
        .collect();
    assert_eq!(scores, ["-7.30", "-9.45", "-18.39", "-36.75", "-73.50"]);
}

#[test]
fn pruning_losses_after_two_em_rounds() {
    // 002_…, section 14: newest 91.26, low 85.04, widest 45.63, lower 34.02 nats; 34 of the 38
    // prunable pieces at exactly zero.
    let c = corpus(FOUR);
    let t = run(&c, params(49, 2));
    assert_eq!(t.rounds, vec![49]);
    let pieces: Vec<(Vec<u32>, f64)> =
        t.learned.iter().map(|p| (p.symbols.clone(), p.log_prob)).collect();
    let loss = losses_on(&c.flat, &c.texts, &t.alphabet, &pieces).unwrap();
    assert_eq!(loss.len(), 38);
    let mut named: Vec<(String, f64)> = t
        .learned
        .iter()
        .zip(&loss)
        .map(|(p, &l)| (String::from_utf8(p.text.clone()).unwrap(), l))
        .collect();
    named.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
    let top: Vec<(String, String)> =
        named.iter().take(4).map(|(n, l)| (n.clone(), format!("{l:.2}"))).collect();
    let want = [
        ("newest</w>", "91.26"),
        ("low</w>", "85.04"),
        ("widest</w>", "45.63"),
        ("lower</w>", "34.02"),
    ];
    assert_eq!(top, want.map(|(a, b)| (a.to_string(), b.to_string())));
    assert_eq!(named.iter().filter(|x| x.1 == 0.0).count(), 34);
}

#[test]
fn rounds_to_15_and_22() {
    // 002_…, section 17: 49, 36, 27, 20, 15, ending at the 11 symbols and the four words
    // (vocab_size 16 = 15 pieces + [UNK]).
    let c = corpus(FOUR);
    let t = run(&c, params(15, 2));
    assert_eq!(t.rounds, vec![49, 36, 27, 20, 15]);
    assert!(t.reached_target);
    let learned: Vec<String> =
        t.learned.iter().map(|p| String::from_utf8(p.text.clone()).unwrap()).collect();
    assert_eq!(learned, ["newest</w>", "low</w>", "widest</w>", "lower</w>"]);
    assert_eq!(t.run_pieces, 16, "every word one piece: 5 + 2 + 6 + 3");
    // section 15: asking 22 rows (21 pieces) keeps de des dest</w> er</w> es est</w> above the
    // four words, the first six by text of the 34 at loss zero.
    let t = run(&c, params(21, 2));
    assert_eq!(t.rounds, vec![49, 36, 27, 21]);
    let mut learned: Vec<String> =
        t.learned.iter().map(|p| String::from_utf8(p.text.clone()).unwrap()).collect();
    assert_eq!(learned[..4], ["newest</w>", "low</w>", "widest</w>", "lower</w>"]);
    learned.drain(..4);
    learned.sort();
    assert_eq!(learned, ["de", "des", "dest</w>", "er</w>", "es", "est</w>"]);
}

#[test]
fn front_spelling_at_30_rows() {
    // 004_…: the `▁`-marked four words at 30 rows (29 pieces + [UNK]): the 11 symbols, the four
    // words, then the first 14 by text of the pieces at loss zero (docs/API.md).
    let c = corpus_with(FOUR, spell_front);
    let t = run(&c, params(29, 2));
    assert_eq!(t.rounds, vec![64, 48, 36, 29]);
    let mut learned: Vec<String> =
        t.learned.iter().map(|p| String::from_utf8(p.text.clone()).unwrap()).collect();
    assert_eq!(learned[..4], ["\u{2581}newest", "\u{2581}low", "\u{2581}widest", "\u{2581}lower"]);
    learned.drain(..4);
    learned.sort();
    let want = "de des dest er es est ew ewe ewes ewest id ide ides idest";
    assert_eq!(learned.join(" "), want);
    // both this and BPE cut lowest as ▁low est
    let m = trained("front", 30, 2, FOUR);
    assert_eq!(m.report.as_ref().unwrap().rounds.as_deref(), Some(&[64, 48, 36, 29][..]));
    assert_eq!(model_table(&m), table(&c, &t));
    assert_eq!(best(&m, "lowest").0, "\u{2581}low est");
}

#[test]
fn continuation_spelling_joins_without_the_mark() {
    // `##` is stripped from every symbol but a piece's first: l ##o ##w -> low, ##e ##s -> ##es
    let c = corpus_with(FOUR, spell_continuation);
    let t = train(&c.flat, &c.texts, b"##", &params(29, 2), None).unwrap();
    assert_eq!(t.rounds, vec![47, 35, 29]);
    let learned: Vec<String> =
        t.learned.iter().map(|p| String::from_utf8(p.text.clone()).unwrap()).collect();
    assert_eq!(learned[..4], ["newest", "low", "widest", "lower"]);
    assert!(learned.contains(&"##est".to_string()));
    let m = trained("continuation", 30, 2, FOUR);
    assert_eq!(m.report.as_ref().unwrap().rounds.as_deref(), Some(&[47, 35, 29][..]));
    assert_eq!(model_table(&m), table(&c, &t));
    assert_eq!(best(&m, "lowest").0, "low ##est");
}

#[test]
fn refusals() {
    let c = corpus(FOUR);
    assert!(train(&c.flat, &c.texts, b"", &params(10, 2), None).is_err(), "below the alphabet");
    let p = UnigramParams { seed_size: Some(5), ..UnigramParams::new(20) };
    assert!(train(&c.flat, &c.texts, b"", &p, None).is_err(), "seed below the alphabet");
    let p = UnigramParams { shrink: 1.0, ..UnigramParams::new(20) };
    assert!(train(&c.flat, &c.texts, b"", &p, None).is_err());
}

#[test]
fn seed_size_and_max_piece_length() {
    let c = corpus(FOUR);
    // the cap keeps the 11 symbols and the 9 most frequent others (count, then text)
    let p = UnigramParams { seed_size: Some(20), em_rounds: 0, ..UnigramParams::new(100) };
    let t = run(&c, p);
    assert_eq!(t.seed_size, 20);
    // max length 2: 11 symbols + distinct pairs
    let p = UnigramParams { max_piece_length: Some(2), em_rounds: 0, ..UnigramParams::new(100) };
    let t = run(&c, p);
    assert!(t.learned.iter().all(|x| x.symbols.len() == 2));
    assert_eq!(t.seed_size, 11 + t.learned.len());
}

/// A corpus of pseudo-random words over a small alphabet (SplitMix64, fixed seed).
fn random_words(seed: u64, n: usize) -> Vec<(String, u64)> {
    let mut g = SplitMix64::new(seed);
    let letters = ['a', 'b', 'c', 'd', 'e', 'n', 'r', 's', 't'];
    (0..n)
        .map(|_| {
            let len = 1 + (g.next_u64() % 9) as usize;
            let w: String =
                (0..len).map(|_| letters[(g.next_u64() % letters.len() as u64) as usize]).collect();
            (w, 1 + g.next_u64() % 50)
        })
        .collect()
}

#[test]
fn identical_across_thread_counts() {
    let words = random_words(7, 3000);
    let refs: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
    let c = corpus(&refs);
    let p = UnigramParams {
        max_piece_length: Some(6),
        seed_size: Some(3000),
        ..UnigramParams::new(200)
    };
    let go = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| run(&c, p.clone()))
    };
    let one = go(1);
    let two = go(2);
    let three = go(3);
    assert_eq!(one.rounds.last(), Some(&200));
    assert_eq!(one, two);
    assert_eq!(one, three);
    assert_eq!(one.log_likelihood.to_bits(), two.log_likelihood.to_bits());
}

#[test]
fn sampling_follows_the_shares() {
    // lowest on the seed table: draws with alpha = 1 match the shares (28 spellings). Each draw
    // is one `encode` in sample mode with its own generator (seed = draw number), as
    // `Tokenizer.encode(..., mode="sample", seed=...)` makes it.
    let m = trained("end", 1000, 0, FOUR);
    let z = m.unit_lattice("lowest").unwrap().log_probability();
    let all = m.nbest_of("lowest", usize::MAX).unwrap();
    let draw = |alpha: f64, nbest: Option<usize>, seed: u64| {
        m.encode_mode("lowest", Mode::Sample { alpha, nbest, rng: SplitMix64::new(seed) }).unwrap()
    };
    let draws = 200_000u64;
    let mut seen: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
    for k in 0..draws {
        *seen.entry(draw(1.0, None, k)).or_default() += 1;
    }
    assert!(
        seen.keys().all(|d| all.iter().any(|s| &s.0 == d)),
        "only spellings of lowest are drawn"
    );
    for (ids, s) in &all {
        let share = (s - z).exp();
        let got = *seen.get(ids).unwrap_or(&0) as f64 / draws as f64;
        let sd = (share * (1.0 - share) / draws as f64).sqrt();
        assert!((got - share).abs() < 5.0 * sd + 1e-9, "share {share}, drawn {got}");
    }
    // alpha = 0: every spelling alike
    let mut seen: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
    for k in 0..draws {
        *seen.entry(draw(0.0, None, draws + k)).or_default() += 1;
    }
    assert_eq!(seen.len(), 28);
    for &k in seen.values() {
        let got = k as f64 / draws as f64;
        assert!(
            (got - 1.0 / 28.0).abs() < 5.0 * (1.0f64 / 28.0 * 27.0 / 28.0 / draws as f64).sqrt()
        );
    }
    // the same seed draws the same spelling, by either door
    let a: Vec<Vec<u32>> = (0..10).map(|_| draw(1.0, None, 42)).collect();
    assert!(a.windows(2).all(|w| w[0] == w[1]));
    assert_eq!(m.sample_of("lowest", 42, 1.0, None).unwrap(), a[0]);
    // among the 4 best: only those four come out
    let top4: Vec<&Vec<u32>> = all.iter().take(4).map(|s| &s.0).collect();
    for k in 0..200 {
        let d = draw(1.0, Some(4), k);
        assert!(top4.contains(&&d), "{}", show(&m, &d));
        assert_eq!(m.sample_of("lowest", k, 1.0, Some(4)).unwrap(), d);
    }
}

#[test]
fn unknown_symbols_cut_units() {
    // a unit holding a symbol outside the alphabet is two runs
    let mut c = corpus(FOUR);
    let low = c.flat.unit(0).to_vec();
    let mut with_gap = low.clone();
    with_gap.insert(1, NO_SYMBOL);
    c.flat.push(&with_gap, 1);
    let t = run(&c, params(1000, 0));
    assert_eq!(t.seed_size, 49, "l and ow</w> are already substrings");
}

#[test]
fn a_table_from_elsewhere_cuts_as_the_trained_model() {
    // model_from_table (the differential test's door) gives the same cuts as training: the
    // seed table of the four words, under end, front and continuation
    for (scheme, spell, strip) in [
        ("end", spell_end as Spell, &b""[..]),
        ("front", spell_front, b""),
        ("continuation", spell_continuation, b"##"),
    ] {
        let c = corpus_with(FOUR, spell);
        let t = train(&c.flat, &c.texts, strip, &params(1000, 0), None).unwrap();
        let rows: Vec<(String, f64)> = table(&c, &t).into_iter().collect();
        let from_file = model_from_table(scheme, &rows);
        let m = trained(scheme, 1000, 0, FOUR);
        assert_eq!(model_table(&from_file), model_table(&m), "{scheme}");
        for w in ["lowest", "lower", "newest", "widest", "low", "west", "nest", "lot"] {
            assert_eq!(best(&from_file, w).0, best(&m, w).0, "{scheme} {w}");
            let (a, b) = (from_file.nbest_of(w, 5).unwrap(), m.nbest_of(w, 5).unwrap());
            let names = |mm: &Tokenizer, v: &[(Vec<u32>, f64)]| {
                v.iter().map(|s| (show(mm, &s.0), s.1)).collect::<Vec<_>>()
            };
            assert_eq!(names(&from_file, &a), names(&m, &b), "{scheme} {w}");
        }
    }
}

#[test]
fn one_long_unit() {
    // adversarial: one unit of 200 000 identical symbols; with the length bound the seed is 16
    // pieces and the lattice 16 arcs per position, so this is linear.
    let word = "a".repeat(200_000);
    let c = corpus(&[(word.as_str(), 3), ("b", 1)]);
    let p = UnigramParams { max_piece_length: Some(16), ..UnigramParams::new(10) };
    let t = run(&c, p);
    // a, a</w>, b</w>; a^2..a^16; a^1..a^15 followed by a</w>
    assert_eq!(t.seed_size, 3 + 15 + 15);
    assert_eq!(t.rounds.last(), Some(&10));
    // without a bound a short one is still fine: every substring is a candidate
    let word = "ab".repeat(300);
    let c = corpus(&[(word.as_str(), 2)]);
    let t = run(&c, UnigramParams::new(40));
    assert_eq!(t.rounds.last(), Some(&40));
}
