//! Count tables: the units a spelling makes of a corpus, with their counts and the options that
//! shaped them, as a value that can be saved, merged and trained on.
//!
//! A table is what every learner reads (DESIGN §1: count units, then learn from distinct units),
//! so counting can run anywhere -- on other processes or other machines -- and training reads
//! the sum. Merging is a sorted merge-join with checked u64 sums, so it is associative and
//! commutative down to the bytes: the same file whatever the partitioning of the corpus or the
//! order the partial tables are merged in.
//!
//! The file, all integers little-endian:
//!
//! ```text
//! "SWCOUNT\0"  u32 version (1)  u32 header length  header (JSON)
//! per unit, in byte order of the text, each text once:  u32 length  UTF-8 text  u64 count
//! per span (SuperBPE tables only), in byte order, each once:  u32 length  UTF-8 text  u64 count
//! u32 CRC-32 of everything before it
//! ```
//!
//! A table counted for SuperBPE also carries its spans: the pieces of the stage-two pre-split
//! (`superword_pattern`, named in the header), counted in the same pass as the units, which
//! stage two learns from. A table without them has no span fields in its header.
//!
//! The header holds the spelling that made the units (its `byte_fallback` is always false: byte
//! fallback does not change units), which `front` normalizations the texts needed, the number of
//! texts, the number of units and the sum of counts. A reader checks every length against the
//! bytes left, the order, the sums and the checksum, so a truncated, corrupt or hostile file is
//! refused before anything is built from it.

use serde::{Deserialize, Serialize};

use crate::counting::Counts;
use crate::error::{Error, Result};
use crate::spelling::{Normalizations, Spelling};

const MAGIC: &[u8; 8] = b"SWCOUNT\0";
const VERSION: u32 = 1;
/// A header is a few hundred bytes; anything past this is not a table of ours.
const MAX_HEADER: u32 = 1 << 20;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    spelling: Spelling,
    normalizations: Vec<String>,
    texts: u64,
    units: u64,
    total: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    superword_pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spans: Option<u64>,
}

/// SuperBPE's spans: the pieces of the stage-two pre-split `pattern` (a `superword_pattern`
/// value), sorted by text (bytes), each once, every count at least 1.
#[derive(Clone, Debug, PartialEq)]
pub struct TableSpans {
    pub pattern: String,
    pub spans: Vec<(Box<str>, u64)>,
}

impl TableSpans {
    /// Spans as the counter sums them, sorted.
    pub fn from_counts(pattern: &str, spans: Vec<(String, u64)>) -> Self {
        let mut spans: Vec<(Box<str>, u64)> =
            spans.into_iter().filter(|&(_, c)| c > 0).map(|(s, c)| (s.into(), c)).collect();
        spans.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        TableSpans { pattern: pattern.to_string(), spans }
    }

    /// The spans as stage two reads them.
    pub fn span_table(&self) -> crate::learners::superword::SpanTable {
        crate::learners::superword::SpanTable::from_pairs(
            self.spans.iter().map(|(s, c)| (s.to_string(), *c)).collect(),
        )
    }
}

/// Units and counts, sorted by text (bytes), each text once, every count at least 1.
#[derive(Clone, Debug, PartialEq)]
pub struct CountTable {
    pub spelling: Spelling,
    pub normalizations: Normalizations,
    pub texts: u64,
    pub units: Vec<(Box<str>, u64)>,
    /// SuperBPE's spans, when the table was counted with a `superword_pattern`.
    pub spans: Option<TableSpans>,
}

fn corrupt(what: &str) -> Error {
    Error::Input(format!("not a valid count table: {what}; make it again with `subwords count`"))
}

fn normalization_names(n: &Normalizations) -> Vec<String> {
    let mut v = Vec::new();
    if n.whitespace_runs {
        v.push("whitespace_runs".to_string());
    }
    if n.stripped_ends {
        v.push("stripped_ends".to_string());
    }
    if n.mark_in_text {
        v.push("mark_in_text".to_string());
    }
    v
}

fn normalizations_from(names: &[String]) -> Result<Normalizations> {
    let mut n = Normalizations::default();
    for name in names {
        match name.as_str() {
            "whitespace_runs" => n.whitespace_runs = true,
            "stripped_ends" => n.stripped_ends = true,
            "mark_in_text" => n.mark_in_text = true,
            other => {
                return Err(corrupt(&format!("unknown normalization {other:?} in the header")))
            }
        }
    }
    Ok(n)
}

/// The spelling a table records: the one given, without byte fallback.
pub fn table_spelling(spelling: &Spelling) -> Spelling {
    let mut s = spelling.clone();
    s.byte_fallback = false;
    s
}

impl CountTable {
    /// A table from counted units.
    pub fn from_counts(
        spelling: &Spelling,
        counts: Counts,
        normalizations: Normalizations,
        texts: u64,
    ) -> Self {
        let mut units: Vec<(Box<str>, u64)> = counts.into_iter().filter(|&(_, c)| c > 0).collect();
        units.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        CountTable { spelling: table_spelling(spelling), normalizations, texts, units, spans: None }
    }

    pub fn total(&self) -> Result<u64> {
        self.units
            .iter()
            .try_fold(0u64, |s, &(_, c)| s.checked_add(c))
            .ok_or_else(|| Error::Input("the table's counts add up to more than 2^64 - 1".into()))
    }

    /// Why `spelling` cannot train on this table: the fields that differ, by name.
    pub fn mismatch(&self, spelling: &Spelling) -> Option<String> {
        spelling_mismatch(&self.spelling, spelling)
    }

    /// The sum of two tables counted with the same spelling.
    pub fn merge(&self, other: &CountTable) -> Result<CountTable> {
        if let Some(why) = self.mismatch(&other.spelling) {
            return Err(Error::Option(format!(
                "cannot merge count tables made with different spellings ({why})"
            )));
        }
        let texts = self.texts.checked_add(other.texts).ok_or_else(|| {
            Error::Input("the merged table's text count does not fit in 64 bits".into())
        })?;
        let units = merge_join(&self.units, &other.units, "unit")?;
        let spans =
            match (&self.spans, &other.spans) {
                (None, None) => None,
                (Some(a), Some(b)) if a.pattern == b.pattern => Some(TableSpans {
                    pattern: a.pattern.clone(),
                    spans: merge_join(&a.spans, &b.spans, "span")?,
                }),
                (Some(a), Some(b)) => {
                    return Err(Error::Option(format!(
                        "cannot merge count tables whose spans were cut by different superword \
                     patterns ({:?} and {:?}); count them again with the same one",
                        a.pattern, b.pattern
                    )))
                }
                _ => return Err(Error::Option(
                    "cannot merge a count table that carries SuperBPE spans with one that does \
                     not; count them all with the same superword options (e.g. --preset superbpe)"
                        .into(),
                )),
            };
        let mut normalizations = self.normalizations;
        normalizations.merge(&other.normalizations);
        Ok(CountTable { spelling: self.spelling.clone(), normalizations, texts, units, spans })
    }

    /// Drops units counted fewer than `min` times; returns the table and the occurrences dropped.
    /// Spans are kept whole (stage two's counts are not units).
    pub fn prune(&self, min: u64) -> (CountTable, u64) {
        let mut dropped = 0u64;
        let units = self
            .units
            .iter()
            .filter(|&&(_, c)| {
                if c < min {
                    dropped = dropped.saturating_add(c);
                }
                c >= min
            })
            .cloned()
            .collect();
        (
            CountTable {
                spelling: self.spelling.clone(),
                normalizations: self.normalizations,
                texts: self.texts,
                units,
                spans: self.spans.clone(),
            },
            dropped,
        )
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let header = Header {
            spelling: self.spelling.clone(),
            normalizations: normalization_names(&self.normalizations),
            texts: self.texts,
            units: self.units.len() as u64,
            total: self.total()?,
            superword_pattern: self.spans.as_ref().map(|s| s.pattern.clone()),
            spans: self.spans.as_ref().map(|s| s.spans.len() as u64),
        };
        let header = serde_json::to_vec(&header).expect("a header always serializes");
        let spans: &[(Box<str>, u64)] = self.spans.as_ref().map_or(&[], |s| &s.spans);
        let body: usize = self.units.iter().chain(spans).map(|(t, _)| 12 + t.len()).sum();
        let mut out = Vec::with_capacity(20 + header.len() + body);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        for (text, count) in &self.units {
            let n = u32::try_from(text.len())
                .map_err(|_| Error::Input("a unit longer than 4 GiB cannot be stored".into()))?;
            put_record(&mut out, n, text, *count);
        }
        for (text, count) in spans {
            let n = u32::try_from(text.len())
                .map_err(|_| Error::Input("a span longer than 4 GiB cannot be stored".into()))?;
            put_record(&mut out, n, text, *count);
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        Ok(out)
    }

    pub fn from_bytes(data: &[u8]) -> Result<CountTable> {
        let mut units: Vec<(Box<str>, u64)> = Vec::new();
        let checked = check(data, |n, text, count| {
            if units.is_empty() {
                units.reserve_exact(n);
            }
            units.push((text.into(), count));
        })?;
        Ok(CountTable {
            spelling: checked.spelling,
            normalizations: checked.normalizations,
            texts: checked.texts,
            units,
            spans: checked.spans,
        })
    }
}

/// The sorted merge-join of two sorted lists of (text, count), counts summed (checked).
fn merge_join(
    a: &[(Box<str>, u64)],
    b: &[(Box<str>, u64)],
    what: &str,
) -> Result<Vec<(Box<str>, u64)>> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.as_bytes().cmp(b[j].0.as_bytes()) {
            std::cmp::Ordering::Less => {
                out.push(a[i].clone());
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j].clone());
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let c = a[i].1.checked_add(b[j].1).ok_or_else(|| {
                    Error::Input(format!(
                        "the count of {what} {:?} does not fit in 64 bits after merging",
                        a[i].0
                    ))
                })?;
                out.push((a[i].0.clone(), c));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    Ok(out)
}

/// Why a table counted with `table` cannot train with `spelling`: the fields that differ, by name.
fn spelling_mismatch(table: &Spelling, spelling: &Spelling) -> Option<String> {
    let want = table_spelling(spelling);
    if want == *table {
        return None;
    }
    let (a, b) = (serde_json::to_value(table).unwrap(), serde_json::to_value(&want).unwrap());
    let mut diffs = Vec::new();
    if let (Some(a), Some(b)) = (a.as_object(), b.as_object()) {
        // an option left unset is absent from one side (normalize, pattern, split_digits):
        // every name either side has is compared, unset as null
        let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
        names.sort();
        names.dedup();
        for k in names {
            let va = a.get(k).cloned().unwrap_or(serde_json::Value::Null);
            let vb = b.get(k).cloned().unwrap_or(serde_json::Value::Null);
            if va != vb {
                diffs.push(format!("{k}: table has {va}, training asks for {vb}"));
            }
        }
    }
    Some(diffs.join("; "))
}

/// What [`check`] found in a valid table file, besides its units.
struct Checked {
    spelling: Spelling,
    normalizations: Normalizations,
    texts: u64,
    /// Where the first unit starts in the file, and how many there are.
    body: usize,
    units: usize,
    spans: Option<TableSpans>,
}

/// Checks a table file from end to end (lengths, UTF-8, order, counts, sums, checksum), calling
/// `each(units in the header, text, count)` with every unit in order; an error for the first
/// thing wrong.
fn check<'a>(data: &'a [u8], mut each: impl FnMut(usize, &'a str, u64)) -> Result<Checked> {
    if data.len() < 8 || &data[..8] != MAGIC {
        return Err(Error::Input(
            "not a count table (no SWCOUNT header); for a word<TAB>count text file use --counts / counts=True".into(),
        ));
    }
    if data.len() < 20 {
        return Err(corrupt("the file is truncated"));
    }
    let (body, tail) = data.split_at(data.len() - 4);
    let crc = u32::from_le_bytes(tail.try_into().unwrap());
    let mut r = Reader { data: &body[8..] };
    let version = r.u32()?;
    if version != VERSION {
        return Err(Error::Input(format!(
            "count table version {version} is not supported (this subwords reads version {VERSION}); make it again with this version"
        )));
    }
    let header_len = r.u32()?;
    if header_len > MAX_HEADER {
        return Err(corrupt("the header is larger than any table writes"));
    }
    let header: Header = serde_json::from_slice(r.take(header_len as usize)?)
        .map_err(|e| corrupt(&format!("bad header ({e})")))?;
    header.spelling.validate().map_err(|e| corrupt(&format!("its spelling is invalid ({e})")))?;
    // every unit takes at least 12 bytes: a count larger than the bytes left is a lie
    if header.units > (r.data.len() / 12) as u64 {
        return Err(corrupt(&format!(
            "the header promises {} units but the file is too short for them (truncated?)",
            header.units
        )));
    }
    let first = body.len() - r.data.len();
    let mut total = 0u64;
    let mut prev: Option<&[u8]> = None;
    for k in 0..header.units {
        let n = r.u32()? as usize;
        let text = std::str::from_utf8(r.take(n)?)
            .map_err(|_| corrupt(&format!("unit {k} is not UTF-8")))?;
        let count = r.u64()?;
        if count == 0 {
            return Err(corrupt(&format!("unit {k} has count 0")));
        }
        if prev.is_some_and(|p| p >= text.as_bytes()) {
            return Err(corrupt(&format!("unit {k} is out of order or repeated")));
        }
        prev = Some(text.as_bytes());
        total = total.checked_add(count).ok_or_else(|| corrupt("the counts overflow 64 bits"))?;
        each(header.units as usize, text, count);
    }
    let spans = match (header.superword_pattern, header.spans) {
        (None, None) => None,
        (Some(pattern), Some(n)) => {
            if n > (r.data.len() / 12) as u64 {
                return Err(corrupt(&format!(
                    "the header promises {n} spans but the file is too short for them (truncated?)"
                )));
            }
            let mut spans: Vec<(Box<str>, u64)> = Vec::with_capacity(n as usize);
            for k in 0..n {
                let len = r.u32()? as usize;
                let text = std::str::from_utf8(r.take(len)?)
                    .map_err(|_| corrupt(&format!("span {k} is not UTF-8")))?;
                let count = r.u64()?;
                if count == 0 {
                    return Err(corrupt(&format!("span {k} has count 0")));
                }
                if spans.last().is_some_and(|p| p.0.as_bytes() >= text.as_bytes()) {
                    return Err(corrupt(&format!("span {k} is out of order or repeated")));
                }
                spans.push((text.into(), count));
            }
            Some(TableSpans { pattern, spans })
        }
        _ => return Err(corrupt("the header names spans by half (pattern or number alone)")),
    };
    if !r.data.is_empty() {
        return Err(corrupt("there are bytes after the last record"));
    }
    if total != header.total {
        return Err(corrupt("the counts do not add up to the header's total"));
    }
    if crc32fast::hash(body) != crc {
        return Err(corrupt("the checksum does not match (the file is damaged)"));
    }
    Ok(Checked {
        spelling: header.spelling,
        normalizations: normalizations_from(&header.normalizations)?,
        texts: header.texts,
        body: first,
        units: header.units as usize,
        spans,
    })
}

/// A table file, checked as [`CountTable::from_bytes`] checks it, whose units stay in the file's
/// bytes: what training from one table file reads. A unit costs its 12 + length bytes of the file
/// instead of an allocation of its own, and the units are read in the table's order.
pub struct TableBytes {
    pub spelling: Spelling,
    pub normalizations: Normalizations,
    pub texts: u64,
    /// SuperBPE's spans, when the table carries them.
    pub spans: Option<TableSpans>,
    data: Vec<u8>,
    body: usize,
    units: usize,
}

impl TableBytes {
    pub fn from_bytes(data: Vec<u8>) -> Result<TableBytes> {
        let c = check(&data, |_, _, _| {})?;
        Ok(TableBytes {
            spelling: c.spelling,
            normalizations: c.normalizations,
            texts: c.texts,
            spans: c.spans,
            data,
            body: c.body,
            units: c.units,
        })
    }

    /// Why `spelling` cannot train on this table: the fields that differ, by name.
    pub fn mismatch(&self, spelling: &Spelling) -> Option<String> {
        spelling_mismatch(&self.spelling, spelling)
    }

    pub fn len(&self) -> usize {
        self.units
    }

    pub fn is_empty(&self) -> bool {
        self.units == 0
    }

    /// Units written by [`Records`] (the counter's, in its order, not sorted); never written out
    /// as a file.
    pub(crate) fn from_counter(
        spelling: Spelling,
        normalizations: Normalizations,
        texts: u64,
        data: Vec<u8>,
        units: usize,
    ) -> TableBytes {
        TableBytes { spelling, normalizations, texts, spans: None, data, body: 0, units }
    }

    /// The units and their counts, in the table's order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.view().iter()
    }

    /// The units, as a view that can be cut in two.
    pub fn view(&self) -> TableView<'_> {
        TableView { data: &self.data[self.body..], units: self.units }
    }
}

/// Units written one after another as a file's body holds them (`u32` length, UTF-8 text, `u64`
/// count), in the order given: a [`TableBytes`] made in memory, in one allocation where a map or
/// list of units takes one a unit.
#[derive(Default)]
pub(crate) struct Records {
    data: Vec<u8>,
    units: usize,
}

impl Records {
    pub(crate) fn with_capacity(bytes: usize) -> Self {
        Records { data: Vec::with_capacity(bytes), units: 0 }
    }

    pub(crate) fn push(&mut self, text: &str, count: u64) {
        let n = u32::try_from(text.len())
            .expect("a unit shorter than 4 GiB (a text is cut into 8 MB blocks)");
        put_record(&mut self.data, n, text, count);
        self.units += 1;
    }

    pub(crate) fn into_table(
        self,
        spelling: Spelling,
        normalizations: Normalizations,
        texts: u64,
    ) -> TableBytes {
        TableBytes::from_counter(spelling, normalizations, texts, self.data, self.units)
    }
}

/// One unit as a table's body holds it: `n` (its length), its text, its count.
fn put_record(out: &mut Vec<u8>, n: u32, text: &str, count: u64) {
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(&count.to_le_bytes());
}

/// Some consecutive units of a [`TableBytes`].
#[derive(Clone, Copy)]
pub struct TableView<'a> {
    data: &'a [u8],
    units: usize,
}

impl<'a> TableView<'a> {
    pub fn len(&self) -> usize {
        self.units
    }

    pub fn is_empty(&self) -> bool {
        self.units == 0
    }

    /// The units and their counts, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, u64)> + 'a {
        let mut r = Reader { data: self.data };
        // checked when the table was read, or written by the counter from `str`s: every length
        // fits and every text is UTF-8
        (0..self.units).map(move |_| {
            let n = r.u32().expect("a checked table") as usize;
            let bytes = r.take(n).expect("a checked table");
            // SAFETY: a view is made only by `TableBytes::view` (and cut by `split_at` at record
            // boundaries); a `TableBytes` is made by `from_bytes`, whose `check` refused any unit
            // that is not UTF-8, or by `from_counter`, whose records the counter wrote from `str`s.
            // Checking again cost 70 M instructions at 7 MB (the units are read five times).
            let text = unsafe { std::str::from_utf8_unchecked(bytes) };
            (text, r.u64().expect("a checked table"))
        })
    }

    /// The first `k` units and the rest (`k` at most the length).
    pub fn split_at(&self, k: usize) -> (TableView<'a>, TableView<'a>) {
        let k = k.min(self.units);
        let mut r = Reader { data: self.data };
        for _ in 0..k {
            let n = r.u32().expect("a checked table") as usize;
            r.take(n + 8).expect("a checked table");
        }
        let at = self.data.len() - r.data.len();
        (
            TableView { data: &self.data[..at], units: k },
            TableView { data: &self.data[at..], units: self.units - k },
        )
    }
}

struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.data.len() {
            return Err(corrupt("the file is truncated"));
        }
        let (a, b) = self.data.split_at(n);
        self.data = b;
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spelling::Scheme;

    fn table(units: &[(&str, u64)], texts: u64) -> CountTable {
        let sp = Spelling::new(Scheme::End, None, true, None, false).unwrap();
        let mut counts = Counts::default();
        for &(t, c) in units {
            counts.insert(t.into(), c);
        }
        CountTable::from_counts(&sp, counts, Normalizations::default(), texts)
    }

    fn with_spans(mut t: CountTable, pattern: &str, spans: &[(&str, u64)]) -> CountTable {
        let v = spans.iter().map(|&(s, c)| (s.to_string(), c)).collect();
        t.spans = Some(TableSpans::from_counts(pattern, v));
        t
    }

    #[test]
    fn spans_are_saved_read_and_summed() {
        let a = with_spans(table(&[("the", 2)], 2), "superbpe", &[("the cat", 1), ("!!", 2)]);
        let b = with_spans(table(&[("the", 1)], 1), "superbpe", &[("the cat", 3), (" ", 1)]);
        // sorted by bytes: " " (0x20) < "!!" (0x21) < "the cat"
        let m = a.merge(&b).unwrap();
        let got: Vec<(&str, u64)> =
            m.spans.as_ref().unwrap().spans.iter().map(|(t, c)| (&**t, *c)).collect();
        assert_eq!(got, vec![(" ", 1), ("!!", 2), ("the cat", 4)]);
        assert_eq!(b.merge(&a).unwrap().to_bytes().unwrap(), m.to_bytes().unwrap());
        let bytes = m.to_bytes().unwrap();
        assert_eq!(CountTable::from_bytes(&bytes).unwrap(), m);
        let tb = TableBytes::from_bytes(bytes.clone()).unwrap();
        assert_eq!(tb.spans, m.spans);
        assert_eq!(tb.iter().collect::<Vec<_>>(), vec![("the", 3)]);
        // a table without spans has no span fields in its header
        let plain = table(&[("the", 2)], 2).to_bytes().unwrap();
        assert!(!String::from_utf8_lossy(&plain).contains("superword_pattern"));
        // tables with and without spans, or with other patterns, do not merge
        assert!(a.merge(&table(&[("the", 1)], 1)).is_err());
        assert!(a.merge(&with_spans(table(&[], 0), "[^.]+", &[("x", 1)])).is_err());
        // a span record cut short is refused (the checksum recomputed, so only the lengths catch it)
        let mut cut = bytes[..bytes.len() - 4 - 3].to_vec();
        let crc = crc32fast::hash(&cut);
        cut.extend_from_slice(&crc.to_le_bytes());
        assert!(CountTable::from_bytes(&cut).is_err());
    }

    #[test]
    fn merge_sums_counts_and_keeps_byte_order() {
        let a = table(&[("low", 5), ("newest", 6)], 2);
        let b = table(&[("lower", 2), ("low", 1), ("widest", 3)], 3);
        let m = a.merge(&b).unwrap();
        let got: Vec<(&str, u64)> = m.units.iter().map(|(t, c)| (&**t, *c)).collect();
        assert_eq!(got, vec![("low", 6), ("lower", 2), ("newest", 6), ("widest", 3)]);
        assert_eq!(m.texts, 5);
        assert_eq!(b.merge(&a).unwrap().to_bytes().unwrap(), m.to_bytes().unwrap());
    }

    #[test]
    fn a_round_trip_is_exact_and_damage_is_refused() {
        let t = table(&[("café", 3), ("low", 5)], 8);
        let bytes = t.to_bytes().unwrap();
        assert_eq!(CountTable::from_bytes(&bytes).unwrap(), t);
        for cut in [0, 7, 19, bytes.len() - 1] {
            assert!(CountTable::from_bytes(&bytes[..cut]).is_err(), "truncated at {cut}");
        }
        let mut flipped = bytes.clone();
        let at = bytes.len() - 10;
        flipped[at] ^= 1;
        assert!(CountTable::from_bytes(&flipped).is_err());
    }

    #[test]
    fn table_bytes_reads_what_from_bytes_reads_and_refuses_the_same_damage() {
        let t = table(&[("café", 3), ("low", 5), ("lower", 2)], 8);
        let bytes = t.to_bytes().unwrap();
        let b = TableBytes::from_bytes(bytes.clone()).unwrap();
        let got: Vec<(Box<str>, u64)> = b.iter().map(|(u, c)| (u.into(), c)).collect();
        assert_eq!(got, t.units);
        assert_eq!(
            (b.len(), b.texts, b.normalizations, &b.spelling),
            (3, 8, t.normalizations, &t.spelling)
        );
        for cut in [0, 7, 19, bytes.len() - 1] {
            assert!(TableBytes::from_bytes(bytes[..cut].to_vec()).is_err(), "truncated at {cut}");
        }
        let mut flipped = bytes.clone();
        let at = bytes.len() - 10;
        flipped[at] ^= 1;
        assert!(TableBytes::from_bytes(flipped).is_err());
    }

    #[test]
    fn a_mismatch_names_options_set_on_one_side_only() {
        let t = table(&[("low", 5)], 5);
        let mut nfkc = Spelling::new(Scheme::End, None, true, None, false).unwrap();
        nfkc.normalize = Some(crate::spelling::unicode::Form::Nfkc);
        nfkc.split_digits = Some(1);
        // the table has neither; the training asks for both
        let why = t.mismatch(&nfkc).unwrap();
        assert!(why.contains("normalize: table has null, training asks for \"nfkc\""), "{why}");
        assert!(why.contains("split_digits: table has null, training asks for 1"), "{why}");
        // and the other way round
        let counted = CountTable { spelling: nfkc.clone(), ..t.clone() };
        let plain = Spelling::new(Scheme::End, None, true, None, false).unwrap();
        assert!(counted
            .mismatch(&plain)
            .unwrap()
            .contains("normalize: table has \"nfkc\", training asks for null"));
        assert_eq!(counted.mismatch(&nfkc), None);
    }

    #[test]
    fn overflow_is_an_error() {
        let a = table(&[("a", u64::MAX)], 1);
        let b = table(&[("a", 1)], 1);
        assert!(a.merge(&b).is_err());
    }
}
