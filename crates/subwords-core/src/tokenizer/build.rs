//! Building a model from its parts, and every check that the parts fit together. Training and
//! loading both come through [`Tokenizer::new`], so a hostile file and a fresh model pass the same
//! checks; each check is a function of its own, run in a fixed order (the first problem found
//! is the one reported).

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::hash::Map;
use crate::options::{ModelKind, Unknown, MAX_VOCAB};
use crate::segmenters::longest_match::LongestMatch;
use crate::segmenters::merge_replay::MergeMap;
use crate::segmenters::unigram::codes::CodedTrie;
use crate::segmenters::unigram::lattice::fixed;
use crate::spelling::symbols::SymbolIds;
use crate::spelling::{byte_to_char_table, Scheme, Spelling};
use crate::vocab::index::RowIndex;
use crate::vocab::order::{check_imported, check_learned_order, check_row_kinds, check_row_order};
use crate::vocab::{Row, RowKind, UNK};

use super::parts::Parts;
use super::Tokenizer;

fn bad(m: String) -> Error {
    Error::ModelFile(m)
}

/// The rows' special places, found by [`index_rows`].
struct Specials {
    index: RowIndex,
    unk: Option<u32>,
    byte_base: Option<u32>,
    marker: Option<u32>,
}

/// A WordPiece trie being built while the rows were read, to wait for: it must be
/// `LongestMatch::new` of the rows' indexed pieces (kinds for which `RowKind::is_indexed`) in id
/// order, with the spelling's mark. A BERT `vocab.txt` reader starts it from the file's lines
/// (`_core.Model.from_vocab_txt`), before its rows exist.
pub type TrieBeside<'a> = Box<dyn FnOnce() -> LongestMatch + Send + 'a>;

impl Tokenizer {
    /// Checks that the parts fit together and builds the derived tables.
    pub fn new(parts: Parts) -> Result<Self> {
        Tokenizer::build(parts, None)
    }

    /// [`Tokenizer::new`] with a WordPiece model's trie given (see [`TrieBeside`]).
    pub fn with_trie(parts: Parts, trie: TrieBeside<'_>) -> Result<Self> {
        Tokenizer::build(parts, Some(trie))
    }

    fn build(parts: Parts, trie: Option<TrieBeside<'_>>) -> Result<Self> {
        let Parts { kind, spelling, rows, merges, stream_from, joints, options, report } = parts;
        spelling.validate()?;
        check_size(&rows)?;
        // A vocabulary made elsewhere (kind `piece`): its own order and special rows, no merges,
        // encoded by longest match.
        let imported = rows.iter().any(|r| r.kind == RowKind::Piece);
        if imported {
            check_imported(kind, &rows, &merges)?;
        } else {
            check_row_order(&rows)?;
        }
        check_row_kinds(kind, &rows)?;
        let wordpiece = kind == ModelKind::Wordpiece;
        if wordpiece && !matches!(spelling.scheme, Scheme::Continuation | Scheme::End) {
            return Err(bad("a wordpiece model uses the continuation or end spelling".into()));
        }
        // The WordPiece trie needs only the rows, and was most of loading a 30k vocabulary
        // (a BERT vocab.txt loaded at 0.90-1.11x tokenizers' load): it is built on a second
        // thread while this one checks the rows and builds the index (see `spawn_trie`).
        let (checked, longest) = std::thread::scope(|scope| {
            let beside: Option<TrieBeside<'_>> = match trie {
                Some(t) if wordpiece => Some(t),
                _ if wordpiece && rows_worth_a_thread(&rows) => {
                    spawn_trie(scope, || longest_match(&spelling, &rows))
                }
                _ => None,
            };
            let checked = (|| {
                let specials = index_rows(&spelling, &rows)?;
                check_special_rows(&spelling, &rows, &specials)?;
                check_stream(kind, &spelling, &merges, stream_from)?;
                let maps = merge_maps(&spelling, &rows, &merges, stream_from)?;
                check_joints(kind, &spelling, joints.as_ref())?;
                // a Picky BPE or Scaffold-BPE model's learned rows are made by its events
                // (`set_picky`)
                if options
                    .as_ref()
                    .is_none_or(|o| o.picky.is_none() && !o.scaffold && o.boundless.is_none())
                {
                    check_learned_order(kind, &rows, &merges)?;
                }
                let Specials { index, unk, byte_base, marker } = specials;
                let symbols = SymbolIds::new(&spelling, &rows, &index, unk, byte_base, marker);
                Ok((index, maps, symbols))
            })();
            let longest = match beside {
                Some(wait) if checked.is_ok() => Some(wait()),
                // a failed check waits for no trie (a scoped thread is joined by its scope)
                Some(_) => None,
                // a failed check builds nothing
                None if wordpiece && checked.is_ok() => Some(longest_match(&spelling, &rows)),
                None => None,
            };
            (checked, longest)
        });
        let (index, (merge_map, stream_map), symbols) = checked?;
        let unknown = options.as_ref().and_then(|o| o.unknown).unwrap_or(Unknown::Word);
        // no limit when the options say none (models from elsewhere keep BERT's 100 until read)
        let max_word_length = match options.as_ref() {
            Some(o) => o.max_word_length.map_or(usize::MAX, |m| m as usize),
            None => 100,
        };
        Ok(Tokenizer {
            kind,
            spelling,
            rows,
            merges,
            stream_from,
            joints,
            options,
            report,
            index,
            merge_map,
            stream_map,
            symbols,
            byte_chars: byte_to_char_table(),
            scratch: Default::default(),
            longest,
            unknown,
            max_word_length,
            template: None,
            specials: Default::default(),
            log_probs: Vec::new(),
            unigram: None,
            picky: None,
            superwords: None,
        })
    }

    /// Gives a Picky BPE model its events (merges and removals, in order; ids from the row count
    /// on are the removed tokens, whose texts `hidden` holds) and checks them.
    pub fn set_picky(
        &mut self,
        steps: &[crate::learners::merge::picky::Step],
        hidden: Vec<Vec<u8>>,
    ) -> Result<()> {
        use crate::learners::merge::picky::PickyReplay;
        if self.kind != ModelKind::Bpe || !self.merges.is_empty() {
            return Err(bad("only a BPE model without merges takes Picky BPE events".into()));
        }
        let rows = &self.rows;
        let replay = PickyReplay::new(steps, rows.len() as u32, hidden, |x| {
            rows[x as usize].kind == RowKind::Learned
        })
        .map_err(|e| bad(format!("picky events: {e}")))?;
        if let Some(r) = self.report.as_mut() {
            r.merges_learned = replay.merges() as u64;
        }
        self.picky = Some(replay);
        Ok(())
    }

    /// Gives a BoundlessBPE model its events: the merges and deletions (as [`Self::set_picky`]
    /// takes them) and the superwords `(left, right, superword)` in the order learned, with how
    /// many steps come before each; every id a row.
    pub fn set_boundless(
        &mut self,
        steps: &[crate::learners::merge::picky::Step],
        hidden: Vec<Vec<u8>>,
        supers: Vec<[u32; 3]>,
        after: Vec<u32>,
    ) -> Result<()> {
        use crate::learners::merge::picky::PickyReplay;
        use crate::learners::superword::boundless::Superwords;
        if self.kind != ModelKind::Bpe || !self.merges.is_empty() {
            return Err(bad("only a BPE model without merges takes BoundlessBPE events".into()));
        }
        let rows = &self.rows;
        let n = rows.len();
        let mut given = crate::hash::Map::default();
        for (k, &[a, b, c]) in supers.iter().enumerate() {
            let learned = |x: u32| (x as usize) < n && rows[x as usize].kind == RowKind::Learned;
            if !learned(c) || (a as usize) >= n || (b as usize) >= n {
                return Err(bad(format!("superword {k}: every piece must be a row")));
            }
            let (l, r) = (&rows[a as usize].text, &rows[b as usize].text);
            if rows[c as usize].text[..] != [&l[..], &r[..]].concat()[..] {
                return Err(bad(format!("superword {k}: its row is not its two pieces joined")));
            }
            given.insert(c, ());
        }
        let replay = PickyReplay::with_given(
            steps,
            n as u32,
            hidden,
            |x| rows[x as usize].kind == RowKind::Learned,
            |x| given.contains_key(&x),
        )
        .map_err(|e| bad(format!("boundless events: {e}")))?;
        if let Some(r) = self.report.as_mut() {
            r.merges_learned = replay.merges() as u64;
        }
        self.picky = Some(replay);
        self.superwords = Some(Superwords::new(supers, after));
        Ok(())
    }

    /// Gives a Unigram model its log-probabilities (one per row) and builds its lattice trie.
    pub fn set_log_probs(&mut self, log_probs: Vec<Option<f64>>) -> Result<()> {
        if self.kind != ModelKind::Unigram {
            return Err(bad("only a unigram model has log-probabilities".into()));
        }
        if log_probs.len() != self.rows.len() {
            return Err(bad(format!(
                "{} log-probabilities for {} rows",
                log_probs.len(),
                self.rows.len()
            )));
        }
        let mut pieces = Vec::new();
        for (id, (row, lp)) in self.rows.iter().zip(&log_probs).enumerate() {
            let piece = matches!(row.kind, RowKind::Alphabet | RowKind::Learned);
            match (piece, lp) {
                (false, None) => continue,
                (false, Some(_)) => {
                    return Err(bad(format!(
                        "row {id}: a {} row has no log-probability",
                        row.kind.name()
                    )))
                }
                (true, None)
                    if row.kind == RowKind::Learned || self.spelling.scheme != Scheme::Bytes =>
                {
                    return Err(bad(format!("row {id}: a piece needs a log-probability")))
                }
                (true, None) => continue, // a byte the corpus never held
                (true, Some(v)) if v.is_nan() || *v > 0.0 => {
                    return Err(bad(format!(
                        "row {id}: log-probability {v} is not a number at most 0"
                    )))
                }
                (true, Some(v)) => {
                    let syms = self.symbols.symbols_of_row(&self.rows, id as u32)?;
                    pieces.push((syms, id as u32, fixed(*v)));
                }
            }
        }
        let trie = CodedTrie::build(self.rows.len(), &pieces)
            .map_err(|(other, id)| bad(format!("row {id}: the same symbols as row {other}")))?;
        self.log_probs = log_probs;
        self.unigram = Some(trie);
        Ok(())
    }
}

/// The Fast WordPiece trie of the indexed rows, in id order.
fn longest_match(spelling: &Spelling, rows: &[Row]) -> LongestMatch {
    let pieces = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.kind.is_indexed())
        .map(|(id, r)| (r.text.as_slice(), id as u32));
    match spelling.scheme {
        Scheme::Continuation => LongestMatch::new(pieces, Some(spelling.mark.as_bytes()), None),
        _ => LongestMatch::new(pieces, None, Some(spelling.mark.as_bytes())),
    }
}

/// Whether the trie of `pieces` pieces whose `bytes()` come to so many bytes in all (a byte more
/// each counted in; asked only for a vocabulary large enough) repays a thread of its own (see
/// [`spawn_trie`]): a vocabulary large enough (a 30k BERT vocabulary: the trie 3.5-4.9 ms, a
/// thread about 0.05), and keys the trie's `u32` offsets can hold, as its pieces are not yet
/// checked when it starts. `Tokenizer::build` and the `vocab.txt` reader both ask here.
pub fn worth_a_trie_thread(pieces: usize, bytes: impl FnOnce() -> u64) -> bool {
    pieces >= 4096 && bytes() < u32::MAX as u64 / 2
}

fn rows_worth_a_thread(rows: &[Row]) -> bool {
    worth_a_trie_thread(rows.len(), || rows.iter().map(|r| r.text.len() as u64 + 1).sum())
}

/// `build` on a thread of its own in `scope`, as a [`TrieBeside`] to wait for (a panic in it
/// goes on in the waiter); `None` on a machine without a second core or when the thread cannot
/// start, for the caller to build the trie in line. The one place a trie thread is started:
/// `Tokenizer::build` and the `vocab.txt` reader both come here.
pub fn spawn_trie<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    build: impl FnOnce() -> LongestMatch + Send + 'scope,
) -> Option<TrieBeside<'scope>> {
    if !*CORES.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)) {
        return None;
    }
    let handle =
        std::thread::Builder::new().name("subwords-trie".into()).spawn_scoped(scope, build).ok()?;
    Some(Box::new(move || handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))))
}

/// Whether this machine has a second core (asked once: on Linux the answer reads cgroup files).
static CORES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

fn check_size(rows: &[Row]) -> Result<()> {
    if rows.len() as u64 > MAX_VOCAB {
        return Err(bad(format!(
            "{} rows is more than the {MAX_VOCAB} subwords accepts",
            rows.len()
        )));
    }
    Ok(())
}

/// The piece index (text -> row) and where `[UNK]`, the byte rows and the marker are; each
/// row's text checked for its kind.
fn index_rows(spelling: &Spelling, rows: &[Row]) -> Result<Specials> {
    let mut index = RowIndex::with_capacity(rows.len());
    let mut unk = None;
    let mut byte_base = None;
    let mut marker = None;
    // special rows besides [UNK] (a model trained with special_tokens, an imported vocabulary)
    let mut seen_special: std::collections::BTreeSet<Vec<u8>> = std::collections::BTreeSet::new();
    for (id, row) in rows.iter().enumerate() {
        let id = id as u32;
        match row.kind {
            RowKind::Special => {
                if row.text.as_slice() == UNK.as_bytes() {
                    if unk.is_some() {
                        return Err(bad(format!("row {id}: {UNK} appears twice")));
                    }
                    unk = Some(id);
                } else if row.text.is_empty()
                    || row.text.len() > 256
                    || std::str::from_utf8(&row.text).is_err()
                {
                    return Err(bad(format!("row {id}: a special row is 1 to 256 bytes of UTF-8")));
                } else if !seen_special.insert(row.text.to_vec()) {
                    return Err(bad(format!(
                        "row {id}: the special row {:?} appears twice",
                        String::from_utf8_lossy(&row.text)
                    )));
                }
            }
            RowKind::Byte => {
                let b = id - *byte_base.get_or_insert(id);
                if row.text.len() != 1 || row.text[0] as u32 != b || b > 255 {
                    return Err(bad(format!(
                        "row {id}: byte rows must be <0x00>…<0xFF>, consecutive and in order"
                    )));
                }
            }
            RowKind::Marker => {
                if row.text.as_slice() != spelling.mark.as_bytes() || marker.is_some() {
                    return Err(bad(format!(
                        "row {id}: the marker row must be the bare mark {:?}, once",
                        spelling.mark
                    )));
                }
                marker = Some(id);
            }
            RowKind::Alphabet | RowKind::Learned | RowKind::Unit | RowKind::Piece => {
                if row.text.is_empty() || row.text.len() > 1 << 16 {
                    return Err(bad(format!("row {id}: a piece must be 1 to 65536 bytes")));
                }
                if spelling.scheme != Scheme::Bytes && crate::vocab::is_word_start_key(&row.text) {
                    // the word-start property is written only where the text alone would say
                    // "continuation": on a row of the continuation spelling that begins with the mark
                    let ok = spelling.scheme == Scheme::Continuation
                        && row.kind != RowKind::Unit
                        && row.text[1..].starts_with(spelling.mark.as_bytes());
                    if !ok {
                        return Err(bad(format!(
                            "row {id}: only a piece of the continuation spelling that begins with the mark {:?} is marked word_start",
                            spelling.mark
                        )));
                    }
                }
                // ASCII, most pieces, is UTF-8 without a call (`from_utf8` on each row
                // was 3% of loading a 30k BERT vocab.txt)
                let text = crate::vocab::piece_text(&row.text);
                if spelling.scheme != Scheme::Bytes
                    && !text.is_ascii()
                    && std::str::from_utf8(text).is_err()
                {
                    return Err(bad(format!("row {id}: piece is not valid UTF-8")));
                }
                if index.insert(rows, id).is_some() {
                    return Err(bad(format!(
                        "row {id}: piece {:?} appears twice",
                        String::from_utf8_lossy(&row.text)
                    )));
                }
            }
        }
    }
    Ok(Specials { index, unk, byte_base, marker })
}

/// Byte fallback, the bare marker and `[UNK]` present exactly when the spelling needs them.
fn check_special_rows(spelling: &Spelling, rows: &[Row], s: &Specials) -> Result<()> {
    let (unk, byte_base, marker) = (s.unk, s.byte_base, s.marker);
    let has_bytes = byte_base.is_some();
    if has_bytes != spelling.byte_fallback {
        return Err(bad(
            "byte-fallback rows and the spelling's byte_fallback setting disagree".into()
        ));
    }
    if let Some(b) = byte_base {
        if rows.len() < b as usize + 256 || rows[b as usize + 255].kind != RowKind::Byte {
            return Err(bad("byte fallback needs all 256 byte rows".into()));
        }
    }
    let wants_marker =
        spelling.byte_fallback && matches!(spelling.scheme, Scheme::End | Scheme::Continuation);
    if wants_marker != marker.is_some() {
        return Err(bad(
            "the bare marker row must be present exactly when end/continuation use byte fallback"
                .into(),
        ));
    }
    if (spelling.scheme == Scheme::Bytes) == unk.is_some() {
        return Err(bad(format!(
            "the bytes spelling has no {UNK} row; every other spelling has exactly one"
        )));
    }
    if spelling.scheme == Scheme::Bytes {
        // the 256 bytes come right after the special rows (none, unless trained with specials)
        let lead = rows.iter().take_while(|r| r.kind == RowKind::Special).count();
        for b in 0..256usize {
            match rows.get(lead + b) {
                Some(r) if r.kind == RowKind::Alphabet && r.text[..] == [b as u8] => {}
                _ => {
                    return Err(bad(format!(
                        "bytes spelling: row {} must be the byte {b}",
                        lead + b
                    )))
                }
            }
        }
    }
    Ok(())
}

/// Which models may have merges, and stream merges.
fn check_stream(
    kind: ModelKind,
    spelling: &Spelling,
    merges: &[[u32; 3]],
    stream_from: Option<usize>,
) -> Result<()> {
    if kind != ModelKind::Bpe && stream_from.is_some() {
        return Err(bad("only BPE models have stream merges".into()));
    }
    if kind == ModelKind::Word && !merges.is_empty() {
        return Err(bad("a word model has no merges".into()));
    }
    if let Some(k) = stream_from {
        if k > merges.len() || spelling.scheme == Scheme::Continuation || kind != ModelKind::Bpe {
            return Err(bad("stream merges need a BPE model on the end, front or bytes spelling, starting within the merges".into()));
        }
    }
    Ok(())
}

/// The merge maps (within units, and across them for stream merges); every merge joins two
/// pieces into the row it names, and no pair is merged twice.
fn merge_maps(
    spelling: &Spelling,
    rows: &[Row],
    merges: &[[u32; 3]],
    stream_from: Option<usize>,
) -> Result<(MergeMap, MergeMap)> {
    let mut merge_map: MergeMap = Map::default();
    let mut stream_map: MergeMap = Map::default();
    let strip: &[u8] =
        if spelling.scheme == Scheme::Continuation { spelling.mark.as_bytes() } else { b"" };
    for (rank, &[a, b, c]) in merges.iter().enumerate() {
        let ok = |x: u32| {
            rows.get(x as usize)
                .is_some_and(|r| matches!(r.kind, RowKind::Alphabet | RowKind::Learned))
        };
        if !(ok(a) && ok(b) && ok(c)) {
            return Err(bad(format!("merge {rank}: refers to a row that is not a piece")));
        }
        let l = &rows[a as usize].text;
        let r = &rows[b as usize].text;
        let joined = if strip.is_empty() {
            let mut j = l.to_vec();
            j.extend_from_slice(r);
            j
        } else {
            if !r.starts_with(strip) {
                return Err(bad(format!("merge {rank}: the right piece does not continue a word")));
            }
            crate::vocab::join_continuation(l, r, strip)
        };
        if rows[c as usize].text[..] != joined[..] {
            return Err(bad(format!("merge {rank}: the joined piece is not the row it names")));
        }
        let map =
            if stream_from.is_some_and(|k| rank >= k) { &mut stream_map } else { &mut merge_map };
        if map.insert(crate::hash::pack(a, b), (rank as u32, c)).is_some() {
            return Err(bad(format!("merge {rank}: the same pair is merged twice")));
        }
    }
    Ok((merge_map, stream_map))
}

fn check_joints(
    kind: ModelKind,
    spelling: &Spelling,
    joints: Option<&BTreeMap<String, Vec<String>>>,
) -> Result<()> {
    if let Some(j) = joints {
        if !matches!(spelling.scheme, Scheme::End | Scheme::Continuation) || kind != ModelKind::Bpe
        {
            return Err(bad(
                "joints apply to BPE models on the end and continuation spellings".into()
            ));
        }
        for (word, parts) in j {
            if parts.len() < 2
                || parts.iter().any(String::is_empty)
                || parts.concat() != *word
                || word.chars().any(char::is_whitespace)
            {
                return Err(bad(format!("joints: {parts:?} is not a cut of the word {word:?}")));
            }
        }
    }
    Ok(())
}
