//! The word model: every distinct unit its own row (the most frequent first), `[UNK]` for the
//! rest.

use crate::hash::Map;

use crate::error::{Error, Result};
use crate::options::{ModelKind, TrainOptions};
use crate::spelling::{Scheme, Spelling};
use crate::tokenizer::{Parts, Report, Tokenizer};
use crate::vocab::{Row, RowKind, UNK};

use super::UnitCount;

/// The word baseline: one row per distinct unit, the most frequent first, `[UNK]` for the rest.
pub(super) fn train_words(
    opts: &TrainOptions,
    spelling: Spelling,
    units: &[&UnitCount],
    normalizations: Option<Vec<String>>,
    texts: u64,
) -> Result<Tokenizer> {
    if spelling.scheme == Scheme::Bytes {
        return Err(Error::Option(
            "model='word' needs a spelling with an [UNK] row (end, continuation or front)".into(),
        ));
    }
    let mut spelled: Map<Vec<u8>, u64> = Map::default();
    let mut symbols: crate::hash::Set<Vec<u8>> = Default::default();
    let mut before = 0u64;
    for u in units {
        let mut t: Vec<u8> = Vec::new();
        spelling.for_each_symbol(&u.text, u.starts, u.ends, |s| {
            symbols.insert(s.to_vec());
            before += u.count;
            // the whole unit as one piece: the symbols joined as the spelling joins them
            if spelling.scheme == Scheme::Continuation && !t.is_empty() {
                t.extend_from_slice(&s[spelling.mark.len()..]);
            } else {
                t.extend_from_slice(s);
            }
        });
        *spelled.entry(t).or_insert(0) += u.count;
    }
    if opts.vocab_size < 2 {
        return Err(Error::Option(
            "vocab_size must be at least 2 for a word model ([UNK] and one unit)".into(),
        ));
    }
    let distinct = spelled.len();
    let mut list: Vec<(Vec<u8>, u64)> =
        spelled.into_iter().filter(|(_, c)| *c >= opts.min_count).collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let room = (opts.vocab_size - 1) as usize;
    let stop = if list.len() > room {
        "size"
    } else if list.len() < distinct {
        "min_count"
    } else {
        "all_units"
    };
    list.truncate(room);
    let mut rows = vec![Row::new(UNK.as_bytes(), RowKind::Special)];
    let occurrences: u64 = units.iter().map(|u| u.count).sum();
    for (t, _) in &list {
        rows.push(Row::new(t.as_slice(), RowKind::Unit));
    }
    let report = Report {
        alphabet_size: symbols.len() as u64,
        merges_learned: 0,
        rows_learned: list.len() as u64,
        stop: stop.into(),
        corpus_pieces_before: before,
        corpus_pieces_after: occurrences,
        distinct_units: units.len() as u64,
        texts,
        normalizations,
        stage_one_merges: None,
        dropped_symbols: 0,
        size_not_reached: (rows.len() as u64) < opts.vocab_size,
        winner_failed: None,
        corpus_pieces_encoded: None,
        seed_size: None,
        rounds: None,
        log_likelihood: None,
        parity: None,
        normalize: spelling.normalize.map(|f| f.name().to_string()),
    };
    Tokenizer::new(Parts {
        options: Some(opts.clone()),
        report: Some(report),
        ..Parts::new(ModelKind::Word, spelling, rows)
    })
}
