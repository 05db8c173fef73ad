//! The pipeline around the engines: it checks the units against the spelling's marks, spells
//! them into symbols ([`Spelling::for_each_symbol`]), fixes the alphabet (code-point order,
//! optionally limited to the most frequent symbols), does the size accounting of DESIGN §2
//! (byte-fallback rows outside the budget unless asked), runs the merge engine (twice for
//! two-stage BPE: within units, then across them on each text as one stream) or the Unigram
//! learner, and builds the [`Tokenizer`].

use crate::hash::Map;
use rayon::prelude::*;

use crate::count_table::{TableBytes, TableView};
use crate::error::{Error, Result};
use crate::options::{ModelKind, TrainOptions};
use crate::segmenters::merge_replay::{replay, MergeMap};
use crate::spelling::{Scheme, Spelling};
use crate::tokenizer::{Parts, Report, Tokenizer, Work};
use crate::vocab::{Row, RowKind, UNK};

use super::merge::{self, Flat, MergeParams, Score, Symbols, TieSpelling, NO_SYMBOL};
use super::{superword, unigram, word, Corpus, StageTwoTexts, UnitCount};

pub fn train(opts: &TrainOptions, corpus: Corpus) -> Result<Tokenizer> {
    train_with_progress(opts, corpus, None)
}

/// [`train`], updating `progress` as it goes.
pub fn train_with_progress(
    opts: &TrainOptions,
    corpus: Corpus,
    progress: Option<&crate::progress::Progress>,
) -> Result<Tokenizer> {
    train_traced(opts, corpus, progress, &mut Traces::default())
}

/// What a traced training records (`subwords.measure`): a slot per learner, holding the request
/// going in and its trace coming out. An empty slot traces nothing and costs nothing.
#[derive(Default)]
pub struct Traces {
    pub merge: Option<(merge::TraceRequest, merge::MergeTrace)>,
    pub unigram: Option<(unigram::UnigramTraceRequest, unigram::UnigramTrace)>,
}

/// [`train_with_progress`], recording what `traces` asks for.
pub fn train_traced(
    opts: &TrainOptions,
    corpus: Corpus,
    progress: Option<&crate::progress::Progress>,
    traces: &mut Traces,
) -> Result<Tokenizer> {
    let model = train_unpadded(opts, corpus, progress, traces)?;
    match opts.pad_to_multiple {
        Some(m) => pad_to_multiple(model, opts, m),
        None => Ok(model),
    }
}

/// `pad_to_multiple`: more reserved rows, named on from `reserved_tokens`, put after the other
/// leading rows until the vocabulary size is a multiple of `m` (the rows after them move up).
fn pad_to_multiple(model: Tokenizer, opts: &TrainOptions, m: u64) -> Result<Tokenizer> {
    let n = model.rows.len() as u64;
    let pad = (m - n % m) % m;
    if pad == 0 {
        return Ok(model);
    }
    if n + pad > crate::options::MAX_VOCAB {
        return Err(Error::Option(format!(
            "pad_to_multiple={m} would make {} rows, more than subwords accepts",
            n + pad
        )));
    }
    let at = opts.leading_rows().len() as u32;
    let names: Vec<String> = (opts.reserved_tokens..opts.reserved_tokens + pad)
        .map(crate::options::reserved_name)
        .collect();
    if let Some(clash) =
        names.iter().find(|t| opts.special_tokens.contains(t) || opts.user_symbols.contains(t))
    {
        return Err(Error::Option(format!("pad_to_multiple's reserved row {clash:?} is also a special token or user symbol; rename it")));
    }
    let shift = |id: u32| if id >= at { id + pad as u32 } else { id };
    let mut rows = model.rows.clone();
    rows.splice(
        at as usize..at as usize,
        names.iter().map(|t| Row::new(t.as_bytes(), RowKind::Special)),
    );
    let merges: Vec<[u32; 3]> =
        model.merges.iter().map(|m| [shift(m[0]), shift(m[1]), shift(m[2])]).collect();
    let unigram = model.kind == ModelKind::Unigram;
    let mut log_probs = model.log_probs.clone();
    if unigram {
        log_probs.splice(at as usize..at as usize, std::iter::repeat_n(None, pad as usize));
    }
    let mut padded = Tokenizer::new(Parts {
        merges,
        stream_from: model.stream_from,
        joints: model.joints.clone(),
        options: model.options.clone(),
        report: model.report.clone(),
        ..Parts::new(model.kind, model.spelling.clone(), rows)
    })?;
    if unigram {
        padded.set_log_probs(log_probs)?;
    }
    Ok(padded)
}

/// The pipeline, stage by stage: each stage is a function below, taking what it needs and
/// returning what the next stages read.
fn train_unpadded(
    opts: &TrainOptions,
    corpus: Corpus,
    progress: Option<&crate::progress::Progress>,
    traces: &mut Traces,
) -> Result<Tokenizer> {
    opts.validate()?;
    let spelling = opts.spelling()?;
    let Corpus { units, table, joints, normalizations, texts, streams, languages } = corpus;
    if opts.parity.is_some() && (languages.is_none() || table.is_some()) {
        return Err(Error::Option(
            "parity-aware BPE reads one input per language (languages= or language_field=; CLI: --language, --language-field)".into(),
        ));
    }
    let cut = opts.cut_texts();
    // a table's units stay in its bytes, unless the word model reads them or a unit holds a
    // special token or user symbol (then they become units like the counter's, in table order)
    let (units, table) = match table {
        Some(t)
            if opts.model == ModelKind::Word
                || t.iter().any(|(u, _)| cut.iter().any(|c| u.contains(c.as_str()))) =>
        {
            (
                t.iter()
                    .map(|(u, c)| UnitCount {
                        text: u.to_string(),
                        starts: true,
                        ends: true,
                        count: c,
                    })
                    .collect(),
                None,
            )
        }
        t => (units, t),
    };
    let units = cut_at_specials(units, &cut);
    let learnable = match &table {
        Some(t) => Learnable::table(t)?,
        None => Learnable::Owned(learnable_units(&units)?),
    };
    check_marks(opts, &spelling, &learnable)?;
    let normalizations = (spelling.scheme == Scheme::Front).then(|| normalizations.names());
    // (the word model never reads a table's bytes: its units were made owned above)
    if let (ModelKind::Word, Learnable::Owned(owned)) = (opts.model, &learnable) {
        return word::train_words(opts, spelling, owned, normalizations, texts);
    }

    if let Some(p) = progress {
        p.start(crate::progress::Phase::Spelling, learnable.len() as u64);
    }
    let spelled = spell_units(&spelling, &learnable);
    let n_units = learnable.len() as u64;
    // WordPiece and Unigram report the corpus as their segmenters cut it, which needs the units
    // again: a table's buffer is kept as it is, owned units are written into one (not a
    // `String` each)
    let keep = matches!(opts.model, ModelKind::Wordpiece | ModelKind::Unigram);
    let written = match (&learnable, keep) {
        (Learnable::Owned(_), true) => {
            let mut records = crate::count_table::Records::default();
            learnable.each(|text, _, _, count| {
                records.push(text, count);
                true
            });
            Some(records.into_table(spelling.clone(), Default::default(), texts))
        }
        _ => None,
    };
    // what the engines read from here on is `spelled`: the units' texts go before the merges
    drop(learnable);
    drop(units);
    let kept = match keep {
        true => written.or(table),
        false => {
            drop(table);
            None
        }
    };
    if opts.superword_at.is_some() || opts.boundless.is_some() {
        // the counter's tables and the units' texts were many small blocks: their pages go
        // back before the merges (superword trainings hold a span table beside them)
        superword::give_back_free_memory();
    }
    let length = corpus_length(&spelled.flat)?;

    let alphabet = choose_alphabet(opts, &spelling, &spelled);
    let before = length + alphabet.dropped_extra;
    let mut rows = leading_rows(opts, &spelling, &alphabet, &spelled)?;
    let fallback_rows = push_byte_fallback_rows(&spelling, &mut rows);
    let budget = size_accounting(opts, &spelling, &alphabet, fallback_rows)?;
    let numbered = number_alphabet(&spelling, spelled, &alphabet, rows);
    if opts.model == ModelKind::Unigram {
        let target =
            (opts.vocab_size - budget.unk_rows - budget.lead_rows - budget.fallback_in_budget())
                as usize;
        let facts = UnigramFacts {
            before,
            dropped_extra: alphabet.dropped_extra,
            dropped: alphabet.dropped,
            n_units,
            texts,
            normalizations,
        };
        let Numbered { rows, flat, base, alphabet_texts, .. } = numbered;
        return train_unigram(
            opts,
            spelling,
            rows,
            flat,
            base,
            &alphabet_texts,
            target,
            facts,
            kept.as_ref(),
            progress,
            &mut traces.unigram,
        );
    }

    let Numbered { rows, flat, base, alphabet_texts, mut symbols } = numbered;
    let stage_one_target = opts.superword_at.unwrap_or(opts.vocab_size);
    let params =
        stage_one_params(opts, &spelling, budget.room(stage_one_target, rows.len() as u64));
    if opts.boundless.is_some() || opts.picky.is_some() || opts.scaffold {
        // the learners whose model replays steps: rows for the tokens present at the end, the
        // removed (deleted, scaffold) ones only inside the replay
        let first_learned = symbols.next_id();
        let (present, stop, after, replay) = match &opts.boundless {
            // BoundlessBPE (learners/superword/boundless.rs): superwords among the rows
            Some(b) => {
                let bp = superword::boundless::BoundlessParams {
                    new_rows: params.new_rows,
                    min_count: opts.min_count,
                    threshold: b.deletion_threshold,
                    event_limit: superword::boundless::EVENTS_PER_ROW * params.new_rows.max(1),
                };
                let out = superword::boundless::learn_flat(flat, streams, &mut symbols, &bp)?;
                let mut settled = superword::boundless::settle(&out, &symbols, first_learned);
                let present = std::mem::take(&mut settled.present);
                (present, out.stop, out.pieces_after, Replay::Boundless(settled))
            }
            // Picky BPE (learners/merge/picky.rs) and Scaffold-BPE (learners/merge/scaffold.rs)
            None => {
                let (out, after) = match opts.picky {
                    Some(threshold) => {
                        let pp = merge::picky::PickyParams {
                            new_rows: params.new_rows,
                            min_count: opts.min_count,
                            threshold,
                        };
                        merge::picky::learn_flat(flat, &mut symbols, &pp)
                    }
                    None => {
                        let (merged, marks) = merge::learn_scaffold(
                            flat,
                            &mut symbols,
                            &params,
                            progress,
                            first_learned,
                        );
                        let (out, extra) = marks.into_events(&merged);
                        (out, merged.pieces_after + extra)
                    }
                };
                let rows_after = first_learned + out.present.len() as u32;
                let (present, steps, hidden) =
                    merge::picky::settle(&out, &symbols, first_learned, rows_after);
                (present, out.stop, after, Replay::Picky(steps, hidden))
            }
        };
        let mut kept = Symbols::new(symbols.base, &symbols.strip_right);
        for id in (symbols.base..first_learned).chain(present.iter().copied()) {
            kept.push(symbols.text(id).to_vec(), symbols.len(id));
        }
        let learned = Learned {
            merges: Vec::new(),
            stop,
            stage_one_merges: None,
            after: after + alphabet.dropped_extra,
            winner_failed: None,
        };
        let facts =
            MergeFacts { before, dropped: alphabet.dropped, n_units, texts, normalizations };
        let alphabet_len = alphabet_texts.len() as u64;
        let mut model = merge_model(
            opts,
            spelling,
            rows,
            base,
            alphabet_len,
            &kept,
            learned,
            joints,
            budget,
            facts,
        )?;
        match replay {
            Replay::Boundless(s) => {
                model.set_boundless(&s.steps, s.hidden, s.supers, s.super_at)?
            }
            Replay::Picky(steps, hidden) => model.set_picky(&steps, hidden)?,
        }
        return Ok(model);
    }
    let mut parity_report = None;
    let first = match (&opts.parity, &languages) {
        // parity-aware BPE (learners/merge/parity.rs): an ordinary merge list, chosen by language
        (Some(p), Some(langs)) => {
            let pp = merge::parity::ParityParams::from_options(p, params.new_rows, opts.min_count);
            let (out, after) = merge::parity::learn_flat(flat, langs, &mut symbols, &pp)?;
            parity_report = Some(merge::parity::ParityReport::new(&out, langs, p.measure));
            merge::Merged {
                merges: out.merges,
                new_rows: out.new_rows,
                stop: out.stop,
                pieces_after: after,
                winner_failed: None,
                events: Default::default(),
            }
        }
        _ => merge::learn_traced(flat, &mut symbols, &params, progress, &mut traces.merge),
    };
    let mut learned = Learned::from_stage_one(first, &symbols, alphabet.dropped_extra);
    let superbpe = superword::is_superbpe(opts);
    if opts.superword_at.is_some() {
        let streams = match superbpe {
            // SuperBPE: the span table counted with the units, stage one replayed on each span
            true => {
                // stage one's units and place lists are gone: their pages go back first
                superword::give_back_free_memory();
                let spans =
                    superword::stage_two_spans(&symbols, &learned.merges, streams, replay_known)?;
                superword::give_back_free_memory();
                spans
            }
            false => {
                stage_two_streams(&spelling, &symbols, &learned.merges, streams, joints.as_ref())?
            }
        };
        let rows_now = base as u64 + symbols.texts.len() as u64;
        let mut params = MergeParams::bpe(
            budget.room(opts.vocab_size, rows_now),
            opts.min_count,
            opts.max_piece_length,
        );
        if superbpe {
            params.allow = Some(superword::WordLimit::rule(superword::words_limit(opts)));
            // most of the spans' pairs are met once: counted a quarter of the hash space at a
            // time, the rare ones dropped after each, and room for fewer heap entries, so fewer
            // pairs kept with place lists (100 MB mixed, 32k: stage two 276 -> 221 MB; 128k: 259
            // -> 237)
            params.tuning.count_rounds = 4;
            params.tuning.give_back = true;
            params.tuning.heap_keep = 1 << 15;
            params.tuning.compaction = merge::Compaction::Eighth;
        }
        let second =
            merge::learn_traced(streams, &mut symbols, &params, progress, &mut traces.merge);
        learned.add_stage_two(second, alphabet.dropped_extra);
    }
    let facts = MergeFacts { before, dropped: alphabet.dropped, n_units, texts, normalizations };
    // a SuperBPE model encodes span by span: its pre-split is the span expression
    let spelling = match superbpe {
        true => superword::span_spelling(opts)?.unwrap_or(spelling),
        false => spelling,
    };
    let mut model = merge_model(
        opts,
        spelling,
        rows,
        base,
        alphabet_texts.len() as u64,
        &symbols,
        learned,
        joints,
        budget,
        facts,
    )?;
    if let (Some(r), Some(pr)) = (model.report.as_mut(), parity_report) {
        r.parity = Some(pr);
    }
    if opts.model == ModelKind::Wordpiece {
        let total = encoded_length(&model, kept.as_ref())?;
        if let Some(r) = model.report.as_mut() {
            r.corpus_pieces_encoded = Some(total);
        }
    }
    if let Some(p) = progress {
        p.start(crate::progress::Phase::Done, 0);
    }
    Ok(model)
}

/// Special tokens and user symbols are never learned from: units that still hold one (a count
/// table counted without them) are cut at them, as the counter cuts texts. Returns `units`
/// itself when none holds one.
fn cut_at_specials(units: Vec<UnitCount>, cut: &[String]) -> Vec<UnitCount> {
    if cut.is_empty() || !units.iter().any(|u| cut.iter().any(|c| u.text.contains(c.as_str()))) {
        return units;
    }
    let mut v = Vec::new();
    for u in units.iter() {
        let mut parts = Vec::new();
        crate::counting::cut_at(&u.text, cut, |p| parts.push(p));
        let last = parts.len() - 1;
        for (k, p) in parts.iter().enumerate() {
            let starts = if k == 0 { u.starts } else { true };
            let ends = if k == last { u.ends } else { true };
            v.push(UnitCount { text: p.to_string(), starts, ends, count: u.count });
        }
    }
    v
}

const EMPTY_CORPUS: &str =
    "the corpus is empty: no units to learn from (check the input files, or that the count table has positive counts)";

/// The units to learn from (a positive count, not empty); an empty corpus is refused.
fn learnable_units(units: &[UnitCount]) -> Result<Vec<&UnitCount>> {
    let units: Vec<&UnitCount> =
        units.iter().filter(|u| u.count > 0 && !u.text.is_empty()).collect();
    if units.is_empty() {
        return Err(Error::Input(EMPTY_CORPUS.into()));
    }
    Ok(units)
}

/// The units to learn from, as [`learnable_units`] keeps them: references to owned units, or a
/// table's units read from its bytes (its non-empty ones; a table holds no count of 0).
enum Learnable<'a> {
    Owned(Vec<&'a UnitCount>),
    Table(TableView<'a>, usize),
}

impl<'a> Learnable<'a> {
    fn table(t: &'a TableBytes) -> Result<Self> {
        let l = Self::view(t.view());
        if l.len() == 0 {
            return Err(Error::Input(EMPTY_CORPUS.into()));
        }
        Ok(l)
    }

    fn view(v: TableView<'a>) -> Self {
        let n = v.iter().filter(|(u, c)| *c > 0 && !u.is_empty()).count();
        Learnable::Table(v, n)
    }

    /// The first half of the units (by count of records) and the rest.
    fn halves(&self) -> (Learnable<'a>, Learnable<'a>) {
        match self {
            Learnable::Owned(v) => {
                let mid = v.len() / 2;
                (Learnable::Owned(v[..mid].to_vec()), Learnable::Owned(v[mid..].to_vec()))
            }
            Learnable::Table(t, _) => {
                let (a, b) = t.split_at(t.len() / 2);
                (Self::view(a), Self::view(b))
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Learnable::Owned(v) => v.len(),
            Learnable::Table(_, n) => *n,
        }
    }

    /// Calls `f(text, starts, ends, count)` with each unit in order while it returns true.
    fn each(&self, mut f: impl FnMut(&str, bool, bool, u64) -> bool) {
        match self {
            Learnable::Owned(v) => {
                for u in v {
                    if !f(&u.text, u.starts, u.ends, u.count) {
                        return;
                    }
                }
            }
            Learnable::Table(t, _) => {
                for (u, c) in t.iter() {
                    if c > 0 && !u.is_empty() && !f(u, true, true, c) {
                        return;
                    }
                }
            }
        }
    }
}

/// A word holding the mark would spell pieces indistinguishable from marked ones. Under
/// continuation the merge engine keeps a word-first piece that begins with the mark apart
/// (`vocab::WORD_START`), so BPE and WordPiece take such words; Unigram's seed and the word
/// model join texts without that property and still refuse them.
fn check_marks(opts: &TrainOptions, spelling: &Spelling, units: &Learnable) -> Result<()> {
    let keeps_word_start = matches!(opts.model, ModelKind::Bpe | ModelKind::Wordpiece);
    let mut clash: Option<String> = None;
    units.each(|text, starts, _, _| {
        let clashes = match spelling.scheme {
            Scheme::End => text.contains(spelling.mark.as_str()),
            Scheme::Continuation => {
                !keeps_word_start && starts && text.starts_with(spelling.mark.as_str())
            }
            _ => false,
        };
        if clashes {
            clash = Some(text.to_string());
        }
        !clashes
    });
    match clash {
        Some(text) => Err(Error::Input(format!(
            "the word {:?} holds the {} mark {:?}; its pieces would be indistinguishable from marked pieces \
             and decoding could not restore it. Train with pre_split=\"bert\" (punctuation stands alone; CLI: --pre-split bert) \
             or with another mark= (CLI: --mark)",
            text,
            if spelling.scheme == Scheme::End { "end-of-word" } else { "continuation" },
            spelling.mark
        ))),
        None => Ok(()),
    }
}

/// The units spelled into provisional symbol ids (numbered in order of first appearance; the
/// 256 bytes first under `bytes`), with each symbol's occurrences counted with the unit counts.
struct Spelled {
    flat: Flat,
    /// Provisional id -> symbol text.
    texts: Vec<Box<[u8]>>,
    /// Provisional id -> occurrences.
    counts: Vec<u64>,
}

fn spell_units(spelling: &Spelling, units: &Learnable) -> Spelled {
    if spelling.scheme != Scheme::Bytes
        && units.len() >= SPELL_PARALLEL_UNITS
        && rayon::current_num_threads() > 1
    {
        return spell_halves(spelling, units);
    }
    spell_serial(spelling, units).0
}

/// From this many units, a character spelling spells the two halves of the units on two threads.
const SPELL_PARALLEL_UNITS: usize = 1 << 14;

/// [`spell_serial`] on each half of `units` at once, then the second half's symbols renumbered
/// as one pass would have numbered them: ids go to symbols in the order first met, so the first
/// half's ids stand, and the second half's new symbols follow in the order that half met them
/// (spelling on one core while the other idled was 5-7% of a run at 7 MB).
fn spell_halves(spelling: &Spelling, units: &Learnable) -> Spelled {
    let (a, b) = units.halves();
    let (first, second) = rayon::join(|| spell_serial(spelling, &a), || spell_serial(spelling, &b));
    let (mut one, mut ids) = first;
    let (two, _) = second;
    let renumber: Vec<u32> = two
        .texts
        .into_iter()
        .zip(two.counts)
        .map(|(t, c)| {
            let id = match ids.get(&t) {
                Some(&id) => id,
                None => {
                    let id = one.texts.len() as u32;
                    one.texts.push(t.clone());
                    one.counts.push(0);
                    ids.insert(t, id);
                    id
                }
            };
            one.counts[id as usize] += c;
            id
        })
        .collect();
    // (a large array grows in place: glibc moves its pages rather than copying it)
    let mut flat = one.flat;
    flat.syms.reserve_exact(two.flat.syms.len());
    flat.meta.reserve_exact(two.flat.units());
    let mut syms: Vec<u32> = Vec::new();
    for i in 0..two.flat.units() {
        syms.clear();
        syms.extend(two.flat.unit(i).iter().map(|&x| renumber[x as usize]));
        flat.push(&syms, two.flat.meta[i].count);
    }
    Spelled { flat, texts: one.texts, counts: one.counts }
}

/// Spells `units` in order, numbering the symbols as first met; also returns the text -> id map.
fn spell_serial(spelling: &Spelling, units: &Learnable) -> (Spelled, Map<Box<[u8]>, u32>) {
    let mut provisional: Map<Box<[u8]>, u32> = Map::default();
    let mut sym_texts: Vec<Box<[u8]>> = Vec::new();
    let mut sym_counts: Vec<u64> = Vec::new();
    if spelling.scheme == Scheme::Bytes {
        for b in 0..=255u8 {
            provisional.insert(Box::new([b]), b as u32);
            sym_texts.push(Box::new([b]));
            sym_counts.push(0);
        }
    }
    // a unit spells one symbol per byte (bytes) or at most one per character (the marks join a
    // character's symbol): reserve that once, instead of letting the arrays double (a doubling
    // copies the whole table and can leave room for twice its size)
    let mut bound = 0usize;
    units.each(|text, _, _, _| {
        bound += if spelling.scheme == Scheme::Bytes { text.len() } else { text.chars().count() };
        true
    });
    let mut spelled = Flat::with_capacity(units.len(), bound);
    let mut syms: Vec<u32> = Vec::new();
    // `front` spells a character as itself: its id is looked up by the character (an array for
    // one- and two-byte characters, another for the rest of the BMP made when first needed, a
    // map of `char`s beyond) before the text map, which is only filled (hashing each
    // character's bytes was most of spelling, 9% of a run on multilingual text; with a map of
    // every non-ASCII `char` and an array for ASCII, spelling the units of 15 MB of
    // multilingual text cost 283 M instructions, with these arrays 260 M; English 61 M -> 64 M)
    let mut low = [u32::MAX; 0x800];
    let mut bmp: Vec<u32> = Vec::new();
    let mut by_char: Map<char, u32> = Map::default();
    units.each(|text, starts, ends, count| {
        syms.clear();
        if spelling.scheme == Scheme::Bytes {
            for b in text.bytes() {
                syms.push(b as u32);
                sym_counts[b as usize] += count;
            }
        } else if spelling.scheme == Scheme::Front {
            for ch in text.chars() {
                let cp = ch as usize;
                let known = if cp < 0x800 {
                    low[cp]
                } else if cp < 0x10000 {
                    bmp.get(cp).copied().unwrap_or(u32::MAX)
                } else {
                    by_char.get(&ch).copied().unwrap_or(u32::MAX)
                };
                let id = if known != u32::MAX {
                    known
                } else {
                    let mut t = [0u8; 4];
                    let id = intern(
                        &mut provisional,
                        &mut sym_texts,
                        &mut sym_counts,
                        ch.encode_utf8(&mut t).as_bytes(),
                    );
                    if cp < 0x800 {
                        low[cp] = id;
                    } else if cp < 0x10000 {
                        if bmp.is_empty() {
                            bmp = vec![u32::MAX; 0x10000];
                        }
                        bmp[cp] = id;
                    } else {
                        by_char.insert(ch, id);
                    }
                    id
                };
                sym_counts[id as usize] += count;
                syms.push(id);
            }
        } else {
            spelling.for_each_symbol(text, starts, ends, |t| {
                let id = intern(&mut provisional, &mut sym_texts, &mut sym_counts, t);
                sym_counts[id as usize] += count;
                syms.push(id);
            });
        }
        spelled.push(&syms, count);
        true
    });
    (Spelled { flat: spelled, texts: sym_texts, counts: sym_counts }, provisional)
}

/// The id of symbol text `t`, numbered as first met: a new one gets the next id, a row in
/// `texts` and a count of 0.
#[inline]
fn intern(
    ids: &mut Map<Box<[u8]>, u32>,
    texts: &mut Vec<Box<[u8]>>,
    counts: &mut Vec<u64>,
    t: &[u8],
) -> u32 {
    if let Some(&id) = ids.get(t) {
        return id;
    }
    let id = texts.len() as u32;
    ids.insert(t.into(), id);
    texts.push(t.into());
    counts.push(0);
    id
}

/// Σ count × length of the spelled units. Pair counts are kept in i64: a corpus whose length
/// could overflow them is refused.
fn corpus_length(flat: &Flat) -> Result<u64> {
    let total: u128 = flat.meta.iter().map(|m| m.len() as u128 * m.count as u128).sum();
    if total > (i64::MAX / 4) as u128 {
        return Err(Error::Input(format!(
            "the corpus is {total} symbols long counted with its counts, more than subwords can count exactly \
             (2^61); scale the counts down"
        )));
    }
    Ok(total as u64)
}

/// The alphabet: which provisional symbols are kept, in code-point (byte) order.
struct Alphabet {
    /// Provisional ids kept, sorted by text.
    order: Vec<u32>,
    /// Symbols left out (`alphabet_size`, `character_coverage`).
    dropped: u64,
    /// The pieces the left-out symbols' occurrences become beyond one each.
    dropped_extra: u64,
}

/// Code-point order, optionally only the most frequent symbols (`alphabet_size`, or the fewest
/// that cover `character_coverage` of the occurrences; the front mark is kept whatever its
/// count). A dropped symbol is read as the pieces it becomes: `[UNK]`, or its byte rows (and
/// the bare mark).
fn choose_alphabet(opts: &TrainOptions, spelling: &Spelling, spelled: &Spelled) -> Alphabet {
    let (sym_texts, sym_counts) = (&spelled.texts, &spelled.counts);
    let mut keep: Vec<bool> = vec![true; sym_texts.len()];
    let mut dropped = 0u64;
    if spelling.scheme != Scheme::Bytes {
        let mut by_freq: Vec<u32> = (0..sym_texts.len() as u32).collect();
        // the front mark ranks first: it is kept whatever its count
        let mark: &[u8] =
            if spelling.scheme == Scheme::Front { spelling.mark.as_bytes() } else { b"" };
        let is_mark = |s: u32| !mark.is_empty() && &*sym_texts[s as usize] == mark;
        by_freq.sort_by(|&a, &b| {
            is_mark(b)
                .cmp(&is_mark(a))
                .then_with(|| sym_counts[b as usize].cmp(&sym_counts[a as usize]))
                .then_with(|| sym_texts[a as usize].cmp(&sym_texts[b as usize]))
        });
        let limit = if let Some(n) = opts.alphabet_size {
            Some(n as usize)
        } else if let Some(cov) = opts.character_coverage {
            let total: u64 = sym_counts.iter().sum();
            let need = (cov * total as f64).ceil() as u64;
            let mut acc = 0u64;
            let mut k = 0usize;
            for &s in &by_freq {
                if acc >= need {
                    break;
                }
                acc += sym_counts[s as usize];
                k += 1;
            }
            Some(k.max(1))
        } else {
            None
        };
        if let Some(n) = limit {
            for &s in by_freq.iter().skip(n) {
                keep[s as usize] = false;
                dropped += 1;
            }
        }
    }
    let mut dropped_extra = 0u64;
    for (s, text) in sym_texts.iter().enumerate() {
        if keep[s] {
            continue;
        }
        let pieces = if !spelling.byte_fallback {
            1
        } else {
            let word_start = crate::vocab::is_word_start_key(text);
            let t = std::str::from_utf8(crate::vocab::piece_text(text)).unwrap_or("");
            match spelling.scheme {
                Scheme::Continuation if word_start => t.len() as u64,
                Scheme::End => match t.strip_suffix(spelling.mark.as_str()) {
                    Some(c) => {
                        let plain_kept = sym_texts
                            .iter()
                            .enumerate()
                            .any(|(k, x)| keep[k] && &**x == c.as_bytes());
                        if plain_kept {
                            2
                        } else {
                            c.len() as u64 + 1
                        }
                    }
                    None => t.len() as u64,
                },
                Scheme::Continuation => match t.strip_prefix(spelling.mark.as_str()) {
                    Some(c) => c.len() as u64 + 1,
                    None => t.len() as u64,
                },
                _ => t.len() as u64,
            }
        };
        dropped_extra += sym_counts[s] * (pieces - 1);
    }
    let mut order: Vec<u32> = (0..sym_texts.len() as u32).filter(|&s| keep[s as usize]).collect();
    order.sort_by(|&a, &b| sym_texts[a as usize].cmp(&sym_texts[b as usize]));
    Alphabet { order, dropped, dropped_extra }
}

/// The rows before the alphabet: special tokens, user symbols and reserved rows first (ids
/// 0..k-1), then `[UNK]` unless the specials place it (the bytes spelling has none). A leading
/// row that is also an alphabet symbol is refused.
fn leading_rows(
    opts: &TrainOptions,
    spelling: &Spelling,
    alphabet: &Alphabet,
    spelled: &Spelled,
) -> Result<Vec<Row>> {
    let leading = opts.leading_rows();
    let unk_listed = leading.iter().any(|t| t == UNK);
    let mut rows: Vec<Row> =
        leading.iter().map(|t| Row::new(t.as_bytes(), RowKind::Special)).collect();
    if spelling.scheme != Scheme::Bytes && !unk_listed {
        rows.push(Row::new(UNK.as_bytes(), RowKind::Special));
    }
    for t in &leading {
        if alphabet.order.iter().any(|&s| &*spelled.texts[s as usize] == t.as_bytes()) {
            return Err(Error::Option(format!("the special token {t:?} collides with the alphabet symbol {t:?}; pick another text")));
        }
    }
    Ok(rows)
}

/// Byte fallback's rows after the leading ones: the 256 bytes, then the bare mark under `end`
/// and `continuation`. Returns how many were pushed (0 without byte fallback).
fn push_byte_fallback_rows(spelling: &Spelling, rows: &mut Vec<Row>) -> u64 {
    if !spelling.byte_fallback {
        return 0;
    }
    let before = rows.len() as u64;
    for b in 0..=255u8 {
        rows.push(Row::new(&[b], RowKind::Byte));
    }
    if matches!(spelling.scheme, Scheme::End | Scheme::Continuation) {
        rows.push(Row::new(spelling.mark.as_bytes(), RowKind::Marker));
    }
    rows.len() as u64 - before
}

/// DESIGN §2's size accounting: which rows count against `vocab_size`.
#[derive(Clone, Copy)]
struct Budget {
    /// Special, user-symbol and reserved rows (`[UNK]` not among them).
    lead_rows: u64,
    /// `[UNK]`'s row: 1, or 0 under `bytes`.
    unk_rows: u64,
    fallback_rows: u64,
    /// Byte-fallback rows count against the budget (`byte_fallback_in_budget`).
    fallback_counts: bool,
}

impl Budget {
    fn fallback_in_budget(&self) -> u64 {
        if self.fallback_counts {
            self.fallback_rows
        } else {
            0
        }
    }
    /// The rows of a vocabulary of `rows_now` rows that count against the budget.
    fn rows(&self, rows_now: u64) -> u64 {
        rows_now - if self.fallback_counts { 0 } else { self.fallback_rows }
    }
    /// How many rows may still be learned before `target`.
    fn room(&self, target: u64, rows_now: u64) -> u64 {
        target.saturating_sub(self.rows(rows_now))
    }
}

/// Refuses a `vocab_size` (or `superword_at`) below the smallest vocabulary the corpus allows:
/// the alphabet, `[UNK]`, the leading rows and, when they count, the byte-fallback rows.
fn size_accounting(
    opts: &TrainOptions,
    spelling: &Spelling,
    alphabet: &Alphabet,
    fallback_rows: u64,
) -> Result<Budget> {
    let leading = opts.leading_rows();
    let lead_rows = leading.len() as u64 - leading.iter().any(|t| t == UNK) as u64;
    let unk_rows = if spelling.scheme == Scheme::Bytes { 0 } else { 1 };
    let budget = Budget {
        lead_rows,
        unk_rows,
        fallback_rows,
        fallback_counts: opts.byte_fallback_in_budget,
    };
    let symbols = alphabet.order.len() as u64;
    let floor = symbols + unk_rows + lead_rows + budget.fallback_in_budget();
    if opts.vocab_size < floor {
        return Err(Error::Option(format!(
            "vocab_size {} is below the smallest vocabulary this corpus allows, {floor} ({symbols} symbols{}{}{}); \
             ask for at least {floor}, or limit the alphabet (alphabet_size / character_coverage)",
            opts.vocab_size,
            if unk_rows == 1 { " + [UNK]" } else { "" },
            if lead_rows > 0 { format!(" + {lead_rows} special, user-symbol and reserved rows") } else { String::new() },
            if opts.byte_fallback_in_budget { format!(" + {fallback_rows} byte-fallback rows") } else { String::new() },
        )));
    }
    if let Some(at) = opts.superword_at {
        if at < floor {
            return Err(Error::Option(format!(
                "superword_at {at} is below the smallest vocabulary this corpus allows, {floor}; \
                 stage one must stop at {floor} or more"
            )));
        }
    }
    Ok(budget)
}

/// The alphabet given its final ids (row ids, after the leading and byte-fallback rows), and the
/// units renumbered to them (a dropped symbol becomes `NO_SYMBOL`).
struct Numbered {
    rows: Vec<Row>,
    flat: Flat,
    /// Id of the first alphabet symbol.
    base: u32,
    alphabet_texts: Vec<Vec<u8>>,
    symbols: Symbols,
}

fn number_alphabet(
    spelling: &Spelling,
    spelled: Spelled,
    alphabet: &Alphabet,
    mut rows: Vec<Row>,
) -> Numbered {
    let Spelled { mut flat, texts: sym_texts, .. } = spelled;
    let base = rows.len() as u32;
    let mut remap: Vec<u32> = vec![NO_SYMBOL; sym_texts.len()];
    let strip: &[u8] =
        if spelling.scheme == Scheme::Continuation { spelling.mark.as_bytes() } else { b"" };
    let mut symbols = Symbols::new(base, strip);
    for &s in &alphabet.order {
        remap[s as usize] = symbols.push(sym_texts[s as usize].to_vec(), 1);
        rows.push(Row::new(&sym_texts[s as usize][..], RowKind::Alphabet));
    }
    for x in flat.syms.iter_mut() {
        *x = remap[*x as usize];
    }
    let alphabet_texts: Vec<Vec<u8>> =
        alphabet.order.iter().map(|&s| sym_texts[s as usize].to_vec()).collect();
    Numbered { rows, flat, base, alphabet_texts, symbols }
}

/// Stage one's (or the only stage's) merge parameters: BPE counts, or WordPiece's score with its
/// `min_count` rule and, under continuation, its tie order.
fn stage_one_params(opts: &TrainOptions, spelling: &Spelling, room: u64) -> MergeParams {
    let mut params = MergeParams::bpe(room, opts.min_count, opts.max_piece_length);
    if opts.model == ModelKind::Bpe {
        params.tuning.compaction = merge::Compaction::Quadrupling;
        params.tuning.heap_growth = 4;
    }
    if opts.length_max {
        params.score = Score::CountTimesLength;
    }
    if opts.model == ModelKind::Wordpiece {
        params.score = Score::WordPiece;
        params.min_count_rule = match opts.min_count_rule {
            Some(crate::options::MinCountRule::Stop) => merge::MinCountRule::Stop,
            _ => merge::MinCountRule::Filter,
        };
        if spelling.scheme == Scheme::Continuation {
            params.tie =
                TieSpelling::FrontMarked { continuation_mark: spelling.mark.as_bytes().to_vec() };
        }
    }
    params
}

/// What the merge stages learned, as the report and the model read it.
struct Learned {
    merges: Vec<[u32; 3]>,
    stop: merge::Stop,
    /// Merges of stage one, when there is a stage two.
    stage_one_merges: Option<u64>,
    /// The corpus length after the last merge (dropped symbols' extra pieces included).
    after: u64,
    winner_failed: Option<(String, String, u64)>,
}

impl Learned {
    fn from_stage_one(first: merge::Merged, symbols: &Symbols, dropped_extra: u64) -> Self {
        let winner_failed = first.winner_failed.map(|(a, b, n)| {
            let show = |x: u32| {
                String::from_utf8_lossy(crate::vocab::piece_text(symbols.text(x))).into_owned()
            };
            (show(a), show(b), n)
        });
        Learned {
            merges: first.merges,
            stop: first.stop,
            stage_one_merges: None,
            after: first.pieces_after + dropped_extra,
            winner_failed,
        }
    }

    fn add_stage_two(&mut self, second: merge::Merged, dropped_extra: u64) {
        self.stage_one_merges = Some(self.merges.len() as u64);
        self.merges.extend(second.merges);
        self.stop = second.stop;
        self.after = second.pieces_after + dropped_extra;
    }
}

/// Stage two's input: each text one stream of stage-one pieces, merged across unit boundaries.
/// The texts are read from `texts` one at a time and only their pieces are kept; a word cut at
/// pre-split joints is spelled and replayed part by part, as encoding does
/// (`Tokenizer::encode_unit_into`), so stage two sees what encoding makes.
fn stage_two_streams(
    spelling: &Spelling,
    symbols: &Symbols,
    stage_one: &[[u32; 3]],
    texts: Option<Box<dyn StageTwoTexts>>,
    joints: Option<&std::collections::BTreeMap<String, Vec<String>>>,
) -> Result<Flat> {
    let mut map: MergeMap = Map::default();
    for (r, m) in stage_one.iter().enumerate() {
        map.insert(crate::hash::pack(m[0], m[1]), (r as u32, m[2]));
    }
    let lookup = |t: &[u8]| symbols.index.get(t).copied().unwrap_or(NO_SYMBOL);
    let mut streams = Flat::default();
    let Some(mut texts) = texts else { return Ok(streams) };
    let mut seq: Vec<u32> = Vec::new();
    let mut syms: Vec<u32> = Vec::new();
    texts.each_text(&mut |text| {
        seq.clear();
        spelling.for_each_unit(text, |unit, _| {
            let whole = [unit.to_string()];
            let parts = joints.and_then(|j| j.get(unit)).map_or(&whole[..], |p| &p[..]);
            let last = parts.len() - 1;
            for (k, part) in parts.iter().enumerate() {
                syms.clear();
                spelling.for_each_symbol(part, k == 0, k == last, |t| syms.push(lookup(t)));
                replay_known(&mut syms, &map);
                seq.extend_from_slice(&syms);
            }
        });
        if !seq.is_empty() {
            streams.push(&seq, 1);
        }
    })?;
    Ok(streams)
}

/// The steps a replaying model carries besides its rows: Picky BPE's and Scaffold-BPE's merges
/// and removals (with the removed tokens' texts), or BoundlessBPE's run with its superwords.
enum Replay {
    Picky(Vec<merge::picky::Step>, Vec<Vec<u8>>),
    Boundless(superword::boundless::Settled),
}

/// What the report says of the corpus, besides what the merges learned.
struct MergeFacts {
    before: u64,
    dropped: u64,
    n_units: u64,
    texts: u64,
    normalizations: Option<Vec<String>>,
}

/// The model's parts for the merge learners: the rows (alphabet, then the learned pieces), the
/// merges, the report.
#[allow(clippy::too_many_arguments)]
fn merge_model(
    opts: &TrainOptions,
    spelling: Spelling,
    mut rows: Vec<Row>,
    base: u32,
    alphabet: u64,
    symbols: &Symbols,
    learned: Learned,
    joints: Option<std::collections::BTreeMap<String, Vec<String>>>,
    budget: Budget,
    facts: MergeFacts,
) -> Result<Tokenizer> {
    for i in (base as usize + alphabet as usize)..(base as usize + symbols.texts.len()) {
        rows.push(Row::new(&symbols.texts[i - base as usize][..], RowKind::Learned));
    }
    let rows_learned = rows.len() as u64 - base as u64 - alphabet;
    let report = Report {
        alphabet_size: alphabet,
        merges_learned: learned.merges.len() as u64,
        rows_learned,
        stop: learned.stop.name().into(),
        corpus_pieces_before: facts.before,
        corpus_pieces_after: learned.after,
        distinct_units: facts.n_units,
        texts: facts.texts,
        normalizations: facts.normalizations,
        stage_one_merges: learned.stage_one_merges,
        dropped_symbols: facts.dropped,
        size_not_reached: budget.rows(rows.len() as u64) < opts.vocab_size,
        winner_failed: learned.winner_failed,
        corpus_pieces_encoded: None,
        seed_size: None,
        rounds: None,
        log_likelihood: None,
        parity: None,
        normalize: spelling.normalize.map(|f| f.name().to_string()),
    };
    let stream_from = learned.stage_one_merges.filter(|_| !superword::is_superbpe(opts));
    let stream_from = stream_from.map(|k| k as usize);
    Tokenizer::new(Parts {
        merges: learned.merges,
        stream_from,
        joints,
        options: Some(opts.clone()),
        report: Some(report),
        ..Parts::new(opts.model, spelling, rows)
    })
}

/// Σ count × pieces of the units as the model's own segmenter cuts them, on every thread of the
/// pool (after WordPiece's merge loop, on one core it left the other idle).
/// A sum does not depend on how the units are shared out; the first error, in unit order, wins.
fn encoded_length(model: &Tokenizer, kept: Option<&TableBytes>) -> Result<u64> {
    // blocks of units on every thread; the total is a sum of integers, whatever the order (a
    // unit of count 0 or no text, which training skipped, adds 0)
    let kept: Vec<(&str, u64)> = kept.map(|t| t.iter().collect()).unwrap_or_default();
    let parts: Vec<Result<u64>> = kept
        .par_chunks(1024)
        .map_init(
            || (Vec::new(), Work::default()),
            |(out, work), block| {
                let mut total = 0u64;
                for (text, count) in block {
                    out.clear();
                    model.encode_unit(text, out, None, work)?;
                    total += out.len() as u64 * count;
                }
                Ok(total)
            },
        )
        .collect();
    parts.into_iter().sum()
}

/// What the pipeline knows about the corpus by the time the Unigram learner starts.
struct UnigramFacts {
    before: u64,
    dropped_extra: u64,
    dropped: u64,
    n_units: u64,
    texts: u64,
    normalizations: Option<Vec<String>>,
}

/// The Unigram learner on the spelled corpus; rows: the alphabet, then the learned pieces by
/// log-probability descending, then text.
#[allow(clippy::too_many_arguments)]
fn train_unigram(
    opts: &TrainOptions,
    spelling: Spelling,
    mut rows: Vec<Row>,
    mut spelled: Flat,
    base: u32,
    alphabet_texts: &[Vec<u8>],
    target: usize,
    facts: UnigramFacts,
    kept: Option<&TableBytes>,
    progress: Option<&crate::progress::Progress>,
    trace: &mut Option<(unigram::UnigramTraceRequest, unigram::UnigramTrace)>,
) -> Result<Tokenizer> {
    // the learner numbers symbols from 0; unknown symbols stay NO_SYMBOL
    for x in spelled.syms.iter_mut() {
        if *x != NO_SYMBOL {
            *x -= base;
        }
    }
    let mut params = unigram::UnigramParams::new(target);
    params.max_piece_length = opts.max_piece_length.map(|m| m as usize);
    params.seed_size = opts.seed_size.map(|s| s as usize);
    params.shrink = opts.shrink.unwrap_or(0.75);
    params.em_rounds = opts.em_rounds.unwrap_or(2) as usize;
    params.em = opts.em.unwrap_or(crate::options::EmMethod::Plain);
    if opts.split_by_script {
        // options.rs refuses bytes; every other spelling's symbol is one character and its mark
        let classes = alphabet_texts
            .iter()
            .map(|t| {
                let t = std::str::from_utf8(t)
                    .map_err(|_| Error::Option("split_by_script needs symbols of text".into()))?;
                Ok(unigram::SymbolClass::of(t, &spelling.mark, opts.split_by_number))
            })
            .collect::<Result<Vec<_>>>()?;
        params.classes = Some(classes);
    }
    if let Some(s) = params.seed_size {
        if s < alphabet_texts.len() {
            return Err(Error::Option(format!(
                "seed_size {s} is below the alphabet ({} symbols): the seed always holds every symbol",
                alphabet_texts.len()
            )));
        }
    }
    let strip: &[u8] =
        if spelling.scheme == Scheme::Continuation { spelling.mark.as_bytes() } else { b"" };
    let trained = unigram::train_traced(&spelled, alphabet_texts, strip, &params, progress, trace)?;
    drop(spelled);
    let mut log_probs: Vec<Option<f64>> = vec![None; base as usize];
    log_probs.extend(trained.alphabet.iter().copied());
    for p in &trained.learned {
        rows.push(Row::new(p.text.as_slice(), RowKind::Learned));
        log_probs.push(Some(p.log_prob));
    }
    let report = Report {
        alphabet_size: alphabet_texts.len() as u64,
        merges_learned: 0,
        rows_learned: trained.learned.len() as u64,
        stop: if trained.reached_target { "size".into() } else { "seed".into() },
        corpus_pieces_before: facts.before,
        corpus_pieces_after: 0,
        distinct_units: facts.n_units,
        texts: facts.texts,
        normalizations: facts.normalizations,
        stage_one_merges: None,
        dropped_symbols: facts.dropped,
        size_not_reached: !trained.reached_target,
        winner_failed: None,
        corpus_pieces_encoded: None,
        seed_size: Some(trained.seed_size as u64),
        rounds: Some(trained.rounds.iter().map(|&r| r as u64).collect()),
        log_likelihood: Some(trained.log_likelihood),
        parity: None,
        normalize: spelling.normalize.map(|f| f.name().to_string()),
    };
    let _ = facts.dropped_extra;
    let mut model = Tokenizer::new(Parts {
        options: Some(opts.clone()),
        report: Some(report),
        ..Parts::new(ModelKind::Unigram, spelling, rows)
    })?;
    model.set_log_probs(log_probs)?;
    // the corpus as the Viterbi segmenter cuts it
    let total = encoded_length(&model, kept)?;
    if let Some(r) = model.report.as_mut() {
        r.corpus_pieces_after = total;
    }
    if let Some(p) = progress {
        p.start(crate::progress::Phase::Done, 0);
    }
    Ok(model)
}

/// Merge replay where some symbols may be outside the alphabet (`NO_SYMBOL`): those split the
/// sequence and are kept as they are.
fn replay_known(syms: &mut Vec<u32>, map: &MergeMap) {
    let mut out = Vec::with_capacity(syms.len());
    let mut run: Vec<u32> = Vec::new();
    for &s in syms.iter() {
        if s == NO_SYMBOL {
            replay(&mut run, None, map, None);
            out.append(&mut run);
            out.push(s);
        } else {
            run.push(s);
        }
    }
    replay(&mut run, None, map, None);
    out.append(&mut run);
    *syms = out;
}

#[cfg(test)]
mod spell_tests {
    use super::*;
    use crate::options::TrainOptions;

    fn unit(text: &str, count: u64) -> UnitCount {
        UnitCount { text: text.to_string(), starts: true, ends: true, count }
    }

    /// The halves are spelled apart and the second renumbered as one pass numbers symbols, by
    /// hand under `end`: ab = a b</w>, ba = b a</w>, ca = c a</w>; first met: a 0, b</w> 1, b 2,
    /// a</w> 3, c 4.
    #[test]
    fn the_second_half_is_numbered_as_one_pass_numbers_it() {
        let opts = TrainOptions::from_json(r#"{"model":"bpe","spelling":"end","vocab_size":300}"#)
            .unwrap();
        let spelling = opts.spelling().unwrap();
        let units = [unit("ab", 2), unit("ba", 3), unit("ca", 5)];
        let refs: Vec<&UnitCount> = units.iter().collect();
        check_hand_numbering(spell_halves(&spelling, &Learnable::Owned(refs)));
        // the same units in one buffer, as the counter hands them over: cut in two by records
        let mut records = crate::count_table::Records::default();
        for u in &units {
            records.push(&u.text, u.count);
        }
        let table = records.into_table(spelling.clone(), Default::default(), 3);
        let (a, b) = Learnable::table(&table).unwrap().halves();
        assert_eq!((a.len(), b.len()), (1, 2));
        check_hand_numbering(spell_halves(&spelling, &Learnable::table(&table).unwrap()));
    }

    fn check_hand_numbering(s: Spelled) {
        let texts: Vec<&[u8]> = s.texts.iter().map(|t| &t[..]).collect();
        let want: [&[u8]; 5] = [b"a", b"b</w>", b"b", b"a</w>", b"c"];
        assert_eq!(texts, want);
        assert_eq!(s.counts, [2, 2, 3, 8, 5]);
        let spelled: Vec<(Vec<u32>, u64)> =
            (0..s.flat.units()).map(|i| (s.flat.unit(i).to_vec(), s.flat.meta[i].count)).collect();
        assert_eq!(spelled, [(vec![0, 1], 2), (vec![2, 3], 3), (vec![4, 3], 5)]);
    }
}
