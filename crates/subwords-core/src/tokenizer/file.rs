//! The canonical model file (DESIGN §4): one versioned JSON object, written by [`Tokenizer::to_json`]
//! in a fixed key order and layout (one row or merge a line), read by [`Tokenizer::from_json`], which
//! refuses unknown keys and passes everything through [`Tokenizer::new`]'s checks.
//!
//! Rows are stored as displayed (`est</w>`, `Ġlow`, `<0xC3>`), merges as pairs of displayed
//! pieces, Unigram's log-probabilities one per row (`-inf` as the string "-inf").
//!
//! Under the continuation spelling a piece whose text begins with the mark continues a word,
//! except on a row that says otherwise: such a row (a word-first piece that begins with the mark,
//! from the word `##word`) is written `["##word", "learned", "word_start"]`, and a merge whose left
//! piece is that row `["##word", "##s", "word_start"]`. Only those rows and merges carry the third
//! field, so a file without such words is exactly what it always was.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::Map;
use crate::options::{ModelKind, TrainOptions};
use crate::segmenters::unigram::lattice::NEG_INF;
use crate::spelling::{byte_to_char_table, char_to_byte, parse_byte_piece, Scheme, Spelling};
use crate::vocab::{display_row, join_continuation, Row, RowKind, WORD_START};

use super::build::TrieBeside;
use super::parts::{Parts, Report};
use super::Tokenizer;

pub const FORMAT: &str = "subwords";
pub const VERSION: u32 = 1;

impl Tokenizer {
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        let head = serde_json::json!({
            "format": FORMAT,
            "version": VERSION,
            "model": self.kind,
            "spelling": self.spelling,
            "stream_merges_from": self.stream_from,
            "joints": self.joints,
            "template": self.template.map(|(c, s)| serde_json::json!({"cls": self.display(c), "sep": self.display(s)})),
            "options": self.options,
            "report": self.report,
        });
        s.push_str("{\n");
        for key in [
            "format",
            "version",
            "model",
            "spelling",
            "stream_merges_from",
            "joints",
            "template",
            "options",
            "report",
        ] {
            s.push_str(&format!(
                "  {}: {},\n",
                serde_json::to_string(key).unwrap(),
                serde_json::to_string(&head[key]).unwrap()
            ));
        }
        s.push_str("  \"rows\": [");
        for (i, _) in self.rows.iter().enumerate() {
            let p = self.display(i as u32).unwrap();
            s.push_str(if i == 0 { "\n    " } else { ",\n    " });
            if self.rows[i].is_word_start(self.spelling.scheme) {
                s.push_str(
                    &serde_json::to_string(&(p, self.rows[i].kind, WordStart::WordStart)).unwrap(),
                );
            } else {
                s.push_str(&serde_json::to_string(&(p, self.rows[i].kind)).unwrap());
            }
        }
        s.push_str("\n  ],\n  \"merges\": [");
        for (i, m) in self.merges.iter().enumerate() {
            s.push_str(if i == 0 { "\n    " } else { ",\n    " });
            let pair = (self.display(m[0]).unwrap(), self.display(m[1]).unwrap());
            if self.rows[m[0] as usize].is_word_start(self.spelling.scheme) {
                s.push_str(
                    &serde_json::to_string(&(pair.0, pair.1, WordStart::WordStart)).unwrap(),
                );
            } else {
                s.push_str(&serde_json::to_string(&pair).unwrap());
            }
        }
        s.push_str(if self.merges.is_empty() { "]" } else { "\n  ]" });
        if let Some(p) = &self.picky {
            // Picky BPE: its merges and removals in order, ["+", left, right] and ["-", piece];
            // a piece that is no row is a removed token, made by an earlier merge
            use crate::learners::merge::picky::Step;
            let show = |x: u32| match self.display(x) {
                Some(d) if (x as usize) < self.rows.len() => d,
                _ => display_row(
                    self.spelling.scheme,
                    &Row::new(&p.hidden[(x - p.rows) as usize][..], RowKind::Learned),
                    &self.byte_chars,
                ),
            };
            // Scaffold-BPE states its model as the same events (the merges, then a removal of
            // each scaffold token) under its own key
            let scaffold = self.options.as_ref().is_some_and(|o| o.scaffold);
            // BoundlessBPE writes its superwords among them, ["=", left, right], in place
            let supers = self.superwords.as_ref();
            s.push_str(match (scaffold, supers.is_some()) {
                (true, _) => ",\n  \"scaffold_events\": [",
                (false, true) => ",\n  \"boundless_events\": [",
                (false, false) => ",\n  \"picky_events\": [",
            });
            let mut entries: Vec<serde_json::Value> = Vec::new();
            let mut next = 0usize;
            let steps = p.steps();
            for (i, step) in steps.iter().enumerate() {
                while let Some(sw) =
                    supers.filter(|w| next < w.joins.len() && w.after[next] as usize == i)
                {
                    let [a, b, _] = sw.joins[next];
                    entries.push(serde_json::json!(["=", show(a), show(b)]));
                    next += 1;
                }
                entries.push(match *step {
                    Step::Merge(a, b, _) => serde_json::json!(["+", show(a), show(b)]),
                    Step::Remove(x) => serde_json::json!(["-", show(x)]),
                });
            }
            if let Some(sw) = supers {
                for &[a, b, _] in &sw.joins[next..] {
                    entries.push(serde_json::json!(["=", show(a), show(b)]));
                }
            }
            for (i, v) in entries.iter().enumerate() {
                s.push_str(if i == 0 { "\n    " } else { ",\n    " });
                s.push_str(&serde_json::to_string(v).unwrap());
            }
            s.push_str(if entries.is_empty() { "]" } else { "\n  ]" });
        }
        if self.kind == ModelKind::Unigram {
            // one per row; -inf, which JSON numbers cannot carry, is the string "-inf"
            let lps: Vec<serde_json::Value> = self
                .log_probs
                .iter()
                .map(|p| match p {
                    None => serde_json::Value::Null,
                    Some(v) if v.is_infinite() => serde_json::Value::String("-inf".into()),
                    Some(v) => serde_json::json!(v),
                })
                .collect();
            s.push_str(",\n  \"log_probs\": ");
            s.push_str(&serde_json::to_string(&lps).unwrap());
        }
        s.push_str("\n}\n");
        s
    }

    pub fn from_json(text: &str) -> Result<Self> {
        if !text.trim_start().starts_with('{') {
            return Err(Error::ModelFile(
                "not a subwords model file: it is not a JSON object".into(),
            ));
        }
        let file: ModelFile = serde_json::from_str(text).map_err(|e| {
            Error::ModelFile(format!("not a valid subwords model file: {e}; was it truncated or written by another tool? (foreign formats: see `subwords export`/`--format`)"))
        })?;
        if file.format != FORMAT {
            return Err(Error::ModelFile(format!(
                "not a subwords model file (format {:?})",
                file.format
            )));
        }
        if file.version != VERSION {
            return Err(Error::ModelFile(format!(
                "model file version {} is not readable by this subwords, which reads version {VERSION}; upgrade subwords",
                file.version
            )));
        }
        if let Some(o) = &file.options {
            o.validate()
                .map_err(|e| Error::ModelFile(format!("options in the model file: {e}")))?;
        }
        let mut rows = Vec::with_capacity(file.rows.len());
        for (i, entry) in file.rows.into_iter().enumerate() {
            let (piece, kind, word_start) = match entry {
                RowEntry::Plain(p, k) => (p, k, false),
                RowEntry::Marked(p, k, WordStart::WordStart) => (p, k, true),
            };
            rows.push(file_row(&file.spelling, i, piece, kind, word_start)?);
        }
        // merges are stored as piece pairs; find their rows (Tokenizer::new checks the rest)
        let table = byte_to_char_table();
        // (displayed piece, word_start) -> row
        let mut by_display: Map<(String, bool), u32> = Map::default();
        let mut by_text: Map<&[u8], u32> = Map::default();
        for (id, row) in rows.iter().enumerate() {
            if matches!(row.kind, RowKind::Alphabet | RowKind::Learned) {
                by_display.insert(
                    (
                        display_row(file.spelling.scheme, row, &table),
                        row.is_word_start(file.spelling.scheme),
                    ),
                    id as u32,
                );
                by_text.insert(&row.text, id as u32);
            }
        }
        let strip: &[u8] = if file.spelling.scheme == Scheme::Continuation {
            file.spelling.mark.as_bytes()
        } else {
            b""
        };
        let mut merges = Vec::with_capacity(file.merges.len());
        for (rank, entry) in file.merges.iter().enumerate() {
            let (l, r, word_start) = match entry {
                MergeEntry::Plain(l, r) => (l, r, false),
                MergeEntry::Marked(l, r, WordStart::WordStart) => (l, r, true),
            };
            let a = *by_display.get(&(l.clone(), word_start)).ok_or_else(|| {
                Error::ModelFile(format!(
                    "merge {rank}: {l:?}{} is not a row",
                    if word_start { " (word_start)" } else { "" }
                ))
            })?;
            let b = *by_display
                .get(&(r.clone(), false))
                .ok_or_else(|| Error::ModelFile(format!("merge {rank}: {r:?} is not a row")))?;
            let lt = &rows[a as usize].text;
            let rt = &rows[b as usize].text;
            let joined = if strip.is_empty() {
                let mut j = lt.to_vec();
                j.extend_from_slice(rt);
                j
            } else {
                join_continuation(lt, rt, strip)
            };
            let c = *by_text.get(joined.as_slice()).ok_or_else(|| {
                Error::ModelFile(format!(
                    "merge {rank}: {l:?} + {r:?} joins to a piece with no row"
                ))
            })?;
            merges.push([a, b, c]);
        }
        let picky_is_set = file.options.as_ref().is_some_and(|o| o.picky.is_some());
        if picky_is_set != file.picky_events.is_some() {
            return Err(Error::ModelFile(
                "picky_events go with the option picky, and only with it".into(),
            ));
        }
        let boundless_is_set = file.options.as_ref().is_some_and(|o| o.boundless.is_some());
        if boundless_is_set != file.boundless_events.is_some() {
            return Err(Error::ModelFile(
                "boundless_events go with the option boundless, and only with it".into(),
            ));
        }
        // BoundlessBPE's superwords, ["=", left, right], come out of its events; the rest are
        // merges and deletions as Picky BPE's
        let mut supers: Vec<(String, String, u32)> = Vec::new();
        let boundless_events: Option<Vec<PickyEntry>> = file.boundless_events.map(|events| {
            let mut rest = Vec::with_capacity(events.len());
            for e in events {
                match e {
                    PickyEntry::Merge(tag, l, r) if tag == "=" => {
                        supers.push((l, r, rest.len() as u32))
                    }
                    e => rest.push(e),
                }
            }
            rest
        });
        let scaffold_is_set = file.options.as_ref().is_some_and(|o| o.scaffold);
        if scaffold_is_set != file.scaffold_events.is_some() {
            return Err(Error::ModelFile(
                "scaffold_events go with the option scaffold, and only with it".into(),
            ));
        }
        if let Some(events) = &file.scaffold_events {
            // the merges first, then the scaffold tokens' removals
            let first_removal = events.iter().position(|e| matches!(e, PickyEntry::Remove(..)));
            let merge_after = first_removal.and_then(|k| {
                events[k..].iter().position(|e| matches!(e, PickyEntry::Merge(..))).map(|j| k + j)
            });
            if let Some(i) = merge_after {
                return Err(Error::ModelFile(format!(
                    "scaffold_events[{i}]: a merge after a removal; Scaffold-BPE lists every merge, then the scaffold tokens"
                )));
            }
        }
        let picky = match file
            .picky_events
            .as_ref()
            .or(file.scaffold_events.as_ref())
            .or(boundless_events.as_ref())
        {
            Some(events) => {
                Some(picky_steps(events, &rows, &by_display, &by_text, &file.spelling, strip)?)
            }
            None => None,
        };
        let mut joins = Vec::with_capacity(supers.len());
        let mut after = Vec::with_capacity(supers.len());
        for (k, (l, r, at)) in supers.iter().enumerate() {
            let find = |p: &String| {
                by_display.get(&(p.clone(), false)).copied().ok_or_else(|| {
                    Error::ModelFile(format!("boundless superword {k}: {p:?} is not a row"))
                })
            };
            let (a, b) = (find(l)?, find(r)?);
            let joined = [&rows[a as usize].text[..], &rows[b as usize].text[..]].concat();
            let c = *by_text.get(joined.as_slice()).ok_or_else(|| {
                Error::ModelFile(format!(
                    "boundless superword {k}: {l:?} + {r:?} joins to a piece with no row"
                ))
            })?;
            joins.push([a, b, c]);
            after.push(*at);
        }
        drop((by_display, by_text));
        let mut model = Tokenizer::new(Parts {
            merges,
            stream_from: file.stream_merges_from,
            joints: file.joints,
            options: file.options,
            report: file.report,
            ..Parts::new(file.model, file.spelling, rows)
        })?;
        if model.kind == ModelKind::Unigram {
            let lps = file
                .log_probs
                .ok_or_else(|| Error::ModelFile("a unigram model file needs log_probs".into()))?;
            let parsed = lps
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    match v {
                        serde_json::Value::Null => Ok(None),
                        serde_json::Value::String(s) if s == "-inf" => Ok(Some(NEG_INF)),
                        serde_json::Value::Number(n) => n.as_f64().map(Some).ok_or(()),
                        _ => Err(()),
                    }
                    .map_err(|_| {
                        Error::ModelFile(format!("log_probs[{i}]: {v} is not a log-probability"))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            model.set_log_probs(parsed)?;
        } else if file.log_probs.is_some() {
            return Err(Error::ModelFile("only a unigram model file has log_probs".into()));
        }
        if let Some(t) = file.template {
            model.set_template(&t.cls, &t.sep)?;
        }
        if let Some((steps, hidden)) = picky {
            match boundless_is_set {
                true => model.set_boundless(&steps, hidden, joins, after)?,
                false => model.set_picky(&steps, hidden)?,
            }
        }
        Ok(model)
    }

    /// A model of `rows` (piece as a model file writes it, kind) and nothing learned: no merges,
    /// no report, no options; checked as [`Tokenizer::from_json`] checks a file of them. What
    /// the readers of other formats with no merges (a BERT `vocab.txt`) build, without writing
    /// and parsing a JSON document of every row (at 30k rows that was 11 of a 35 ms
    /// load).
    pub fn from_rows(
        model: ModelKind,
        spelling: Spelling,
        rows: Vec<(String, RowKind)>,
        template: Option<(&str, &str)>,
    ) -> Result<Self> {
        let rows = rows
            .into_iter()
            .enumerate()
            .map(|(i, (piece, kind))| file_row(&spelling, i, piece, kind, false))
            .collect::<Result<Vec<Row>>>()?;
        Tokenizer::rows_model(model, spelling, rows, template, None)
    }

    /// [`Tokenizer::from_rows`] of a file's pieces and special rows only (a BERT `vocab.txt`),
    /// whose texts a spelling other than bytes holds as the file writes them, so they come as
    /// the engine's rows with no `String` each; a WordPiece model's trie may be given (see
    /// [`TrieBeside`]). Any other kind of row, or the bytes spelling, is refused.
    pub fn from_piece_rows(
        model: ModelKind,
        spelling: Spelling,
        rows: Vec<Row>,
        template: Option<(&str, &str)>,
        trie: Option<TrieBeside<'_>>,
    ) -> Result<Self> {
        if spelling.scheme == Scheme::Bytes {
            return Err(Error::ModelFile("the bytes spelling's pieces are written in its byte alphabet: read them with from_rows".into()));
        }
        if let Some(i) =
            rows.iter().position(|r| !matches!(r.kind, RowKind::Piece | RowKind::Special))
        {
            return Err(Error::ModelFile(format!(
                "row {i}: a {} row is not a piece or a special row",
                rows[i].kind.name()
            )));
        }
        Tokenizer::rows_model(model, spelling, rows, template, trie)
    }

    fn rows_model(
        model: ModelKind,
        spelling: Spelling,
        rows: Vec<Row>,
        template: Option<(&str, &str)>,
        trie: Option<TrieBeside<'_>>,
    ) -> Result<Self> {
        if model == ModelKind::Unigram {
            return Err(Error::ModelFile("a unigram model needs log_probs".into()));
        }
        let parts = Parts::new(model, spelling, rows);
        let mut out = match trie {
            Some(t) => Tokenizer::with_trie(parts, t)?,
            None => Tokenizer::new(parts)?,
        };
        if let Some((cls, sep)) = template {
            out.set_template(cls, sep)?;
        }
        Ok(out)
    }

    /// The special rows put around every text.
    fn set_template(&mut self, cls: &str, sep: &str) -> Result<()> {
        let find = |p: &str| {
            self.rows
                .iter()
                .position(|r| r.kind == RowKind::Special && r.text.as_slice() == p.as_bytes())
                .map(|i| i as u32)
                .ok_or_else(|| Error::ModelFile(format!("template: {p:?} is not a special row")))
        };
        self.template = Some((find(cls)?, find(sep)?));
        Ok(())
    }
}

/// Row `i` of a model file as the engine holds it: a byte row's byte, a piece of the bytes
/// spelling in bytes, a word_start piece under its key byte.
fn file_row(
    spelling: &Spelling,
    i: usize,
    piece: String,
    kind: RowKind,
    word_start: bool,
) -> Result<Row> {
    if word_start {
        // the property is written only where the text alone would say "continuation"
        let mark = &spelling.mark;
        if spelling.scheme != Scheme::Continuation
            || !matches!(kind, RowKind::Alphabet | RowKind::Learned)
            || !piece.starts_with(mark.as_str())
        {
            return Err(Error::ModelFile(format!(
                "row {i}: word_start belongs only on an alphabet or learned row of the continuation spelling whose piece begins with the mark {mark:?}"
            )));
        }
        let mut key = vec![WORD_START];
        key.extend_from_slice(piece.as_bytes());
        return Ok(Row { text: key.into(), kind });
    }
    let text = match kind {
        RowKind::Byte => {
            let b = parse_byte_piece(&piece).ok_or_else(|| {
                Error::ModelFile(format!("row {i}: {piece:?} is not a byte row <0xNN>"))
            })?;
            vec![b]
        }
        RowKind::Special => piece.into_bytes(),
        _ if spelling.scheme == Scheme::Bytes => {
            piece.chars().map(char_to_byte).collect::<Option<Vec<u8>>>().ok_or_else(|| {
                Error::ModelFile(format!("row {i}: {piece:?} is not written in the byte alphabet"))
            })?
        }
        _ => piece.into_bytes(),
    };
    Ok(Row { text: text.into(), kind })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Template {
    cls: String,
    sep: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    format: String,
    version: u32,
    model: ModelKind,
    spelling: Spelling,
    stream_merges_from: Option<usize>,
    joints: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    template: Option<Template>,
    options: Option<TrainOptions>,
    report: Option<Report>,
    rows: Vec<RowEntry>,
    merges: Vec<MergeEntry>,
    #[serde(default)]
    log_probs: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    picky_events: Option<Vec<PickyEntry>>,
    #[serde(default)]
    scaffold_events: Option<Vec<PickyEntry>>,
    #[serde(default)]
    boundless_events: Option<Vec<PickyEntry>>,
}

/// A Picky BPE event: `["+", left, right]` or `["-", piece]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum PickyEntry {
    Merge(String, String, String),
    Remove(String, String),
}

/// Picky BPE's events read back: rows by their displayed piece, a removed token (no row) by the
/// merge that first made it (its id from the row count on, in that order).
#[allow(clippy::type_complexity)]
fn picky_steps(
    events: &[PickyEntry],
    rows: &[Row],
    by_display: &Map<(String, bool), u32>,
    by_text: &Map<&[u8], u32>,
    spelling: &Spelling,
    strip: &[u8],
) -> Result<(Vec<crate::learners::merge::picky::Step>, Vec<Vec<u8>>)> {
    use crate::learners::merge::picky::Step;
    let table = byte_to_char_table();
    let mut hidden: Vec<Vec<u8>> = Vec::new();
    let mut hidden_display: Map<String, u32> = Map::default();
    let mut hidden_text: Map<Vec<u8>, u32> = Map::default();
    let n = rows.len() as u32;
    let mut steps = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        let find = |p: &String| -> Result<u32> {
            by_display
                .get(&(p.clone(), false))
                .or_else(|| hidden_display.get(p))
                .copied()
                .ok_or_else(|| {
                    Error::ModelFile(format!(
                        "picky_events[{i}]: {p:?} is not a row or a token an earlier merge made"
                    ))
                })
        };
        match e {
            PickyEntry::Merge(tag, l, r) if tag == "+" => {
                let (a, b) = (find(l)?, find(r)?);
                let text = |x: u32| {
                    if x < n {
                        rows[x as usize].text.to_vec()
                    } else {
                        hidden[(x - n) as usize].clone()
                    }
                };
                let (lt, rt) = (text(a), text(b));
                let joined = if strip.is_empty() {
                    [lt, rt].concat()
                } else {
                    join_continuation(&lt, &rt, strip)
                };
                let c = match by_text.get(joined.as_slice()).or_else(|| hidden_text.get(&joined)) {
                    Some(&c) => c,
                    None => {
                        let c = n + hidden.len() as u32;
                        let shown = display_row(
                            spelling.scheme,
                            &Row::new(&joined[..], RowKind::Learned),
                            &table,
                        );
                        hidden_display.insert(shown, c);
                        hidden_text.insert(joined.clone(), c);
                        hidden.push(joined);
                        c
                    }
                };
                steps.push(Step::Merge(a, b, c));
            }
            PickyEntry::Remove(tag, x) if tag == "-" => steps.push(Step::Remove(find(x)?)),
            _ => {
                return Err(Error::ModelFile(format!(
                    "picky_events[{i}] is neither [\"+\", left, right] nor [\"-\", piece]"
                )))
            }
        }
    }
    Ok((steps, hidden))
}

/// The third field of a row or merge whose (left) piece starts a word although it begins with
/// the continuation mark.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum WordStart {
    WordStart,
}

/// A row: `[piece, kind]`, or `[piece, kind, "word_start"]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RowEntry {
    Plain(String, RowKind),
    Marked(String, RowKind, WordStart),
}

/// A merge: `[left, right]`, or `[left, right, "word_start"]` when the left piece is such a row.
#[derive(Deserialize)]
#[serde(untagged)]
enum MergeEntry {
    Plain(String, String),
    Marked(String, String, WordStart),
}
