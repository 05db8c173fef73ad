//! Count tables: counting without training (`Counter`), the table itself (`CountTable`), and
//! handing a table to a `Trainer` in place of text.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use subwords_core::count_table::{CountTable, TableBytes, TableSpans};
use subwords_core::counting::UnitCounter;
use subwords_core::learners::UnitCount;
use subwords_core::options::CountOptions;
use subwords_core::options::InputErrors;

use crate::{pool, spent, to_py, Trainer};

#[pyclass(module = "subwords._core", name = "CountTable", frozen)]
pub struct PyCountTable {
    pub inner: CountTable,
}

#[pymethods]
impl PyCountTable {
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py.detach(|| CountTable::from_bytes(data)).map_err(|e| to_py(py, e))?;
        Ok(PyCountTable { inner })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| self.inner.to_bytes()).map_err(|e| to_py(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn merge(&self, py: Python<'_>, other: &PyCountTable) -> PyResult<Self> {
        let inner = py.detach(|| self.inner.merge(&other.inner)).map_err(|e| to_py(py, e))?;
        Ok(PyCountTable { inner })
    }

    /// (the table without units counted fewer than `min` times, occurrences dropped)
    fn prune(&self, py: Python<'_>, min: u64) -> (Self, u64) {
        let (inner, dropped) = py.detach(|| self.inner.prune(min));
        (PyCountTable { inner }, dropped)
    }

    fn __len__(&self) -> usize {
        self.inner.units.len()
    }

    #[getter]
    fn texts(&self) -> u64 {
        self.inner.texts
    }

    fn total(&self, py: Python<'_>) -> PyResult<u64> {
        self.inner.total().map_err(|e| to_py(py, e))
    }

    /// The table's spelling (the fields its units were counted under), a dict.
    fn spelling<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::values::to_py(py, &self.inner.spelling)
    }

    /// The `superword_pattern` that cut the table's spans (None: the table carries none).
    #[getter]
    fn superword_pattern(&self) -> Option<String> {
        self.inner.spans.as_ref().map(|s| s.pattern.clone())
    }

    /// The number of distinct spans the table carries (0 without spans).
    #[getter]
    fn span_count(&self) -> usize {
        self.inner.spans.as_ref().map_or(0, |s| s.spans.len())
    }

    fn normalizations(&self) -> Vec<&'static str> {
        let n = &self.inner.normalizations;
        [
            ("whitespace_runs", n.whitespace_runs),
            ("stripped_ends", n.stripped_ends),
            ("mark_in_text", n.mark_in_text),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect()
    }

    /// (span, count) pairs of the table's SuperBPE spans, in byte order (empty without spans).
    fn span_items(&self) -> Vec<(String, u64)> {
        self.inner
            .spans
            .as_ref()
            .map_or(Vec::new(), |s| s.spans.iter().map(|(t, c)| (t.to_string(), *c)).collect())
    }

    /// (unit, count) pairs in the table's order, from `start`, at most `limit` of them.
    fn items(&self, start: usize, limit: usize) -> Vec<(String, u64)> {
        let units = &self.inner.units;
        let start = start.min(units.len());
        let end = start.saturating_add(limit).min(units.len());
        units[start..end].iter().map(|(t, c)| (t.to_string(), *c)).collect()
    }
}

/// Counts units under a spelling, as a `Trainer` does, and returns the table instead of training.
#[pyclass(module = "subwords._core")]
pub struct Counter {
    counter: Option<UnitCounter>,
    superword_pattern: Option<String>,
    input_errors: InputErrors,
    pool: rayon::ThreadPool,
}

#[pymethods]
impl Counter {
    #[new]
    fn new(py: Python<'_>, options: &Bound<'_, PyAny>, threads: usize) -> PyResult<Self> {
        let options: CountOptions = crate::values::from_py(options)
            .map_err(|e| to_py(py, subwords_core::Error::Option(e.to_string())))?;
        // the spelling's own checks are the counting options' (`CountOptions::from_json`)
        let spelling = options.spelling().map_err(|e| to_py(py, e))?;
        let mut counter = UnitCounter::new(spelling, threads, false);
        counter.spans = options.span_spelling().map_err(|e| to_py(py, e))?;
        // BoundlessBPE's spans: the table names them by their options
        use subwords_core::learners::superword::boundless::{table_label, RunSpans};
        if let Some(b) = &options.boundless {
            if options.spelling != subwords_core::spelling::Scheme::Bytes || counter.spans.is_some()
            {
                return Err(to_py(
                    py,
                    subwords_core::Error::Option(
                        "BoundlessBPE's spans are counted with spelling='bytes' and no \
                         superword_pattern (preset='boundless' sets them)"
                            .into(),
                    ),
                ));
            }
            counter.runs = Some(RunSpans::new(b).map_err(|e| to_py(py, e))?);
        }
        let label = options.boundless.as_ref().map(table_label);
        Ok(Counter {
            counter: Some(counter),
            superword_pattern: options.superword_pattern.or(label),
            input_errors: options.input_errors,
            pool: pool(threads)?,
        })
    }

    fn feed_texts(&mut self, py: Python<'_>, texts: Vec<String>) -> PyResult<()> {
        crate::feed_texts(py, self.counter.as_mut(), &self.pool, texts)
    }

    fn feed_file(&mut self, py: Python<'_>, path: String) -> PyResult<()> {
        crate::feed_file(py, self.counter.as_mut(), &self.pool, &path, self.input_errors, None)
    }

    fn add_counts(&mut self, counts: Vec<(String, u64)>) -> PyResult<()> {
        crate::add_counts(self.counter.as_mut(), counts)
    }

    fn feed_count_file(&mut self, py: Python<'_>, path: String) -> PyResult<()> {
        crate::feed_count_file(py, self.counter.as_mut(), &path, self.input_errors, None)
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<PyCountTable> {
        let mut counter = self.counter.take().ok_or_else(spent)?;
        let spelling = counter.spelling().clone();
        let spans = counter.take_spans();
        let (counts, norm, texts, _) = counter.finish().map_err(|e| to_py(py, e))?;
        let pattern = self.superword_pattern.clone();
        let inner = py.detach(|| {
            let mut t = CountTable::from_counts(&spelling, counts, norm, texts);
            if let (Some(p), Some(s)) = (pattern, spans) {
                t.spans = Some(TableSpans::from_counts(&p, s.into_pairs()));
            }
            t
        });
        Ok(PyCountTable { inner })
    }
}

fn check_table_fits(
    py: Python<'_>,
    trainer: &Trainer,
    spans: Option<&TableSpans>,
    mismatch: impl FnOnce(&subwords_core::spelling::Spelling) -> Option<String>,
) -> PyResult<()> {
    if trainer.counter.is_none() {
        return Err(spent());
    }
    let err = |m: String| to_py(py, subwords_core::Error::Option(m));
    if let Some(b) = &trainer.options.boundless {
        let want = subwords_core::learners::superword::boundless::table_label(b);
        match spans {
            Some(s) if s.pattern == want => {}
            Some(s) => {
                return Err(err(format!(
                    "the count table's spans were counted for {:?} but this BoundlessBPE training asks for {want:?} (superword_pieces and count_on); count again with the training's options: {}, or train with the table's",
                    s.pattern,
                    boundless_recount(b)
                )))
            }
            None => {
                return Err(err(format!(
                    "BoundlessBPE (preset='boundless') learns its supermerges from spans, which this count table does not carry; count again with {}, or train from the text",
                    boundless_recount(b)
                )))
            }
        }
    } else if let Some(want) = trainer.options.superword_pattern.as_deref() {
        match spans {
            None => {
                return Err(err(format!(
                    "SuperBPE (superword_pattern, preset='superbpe') learns its stage two from spans, which this count table does not carry; count again with the superword options: `subwords count FILES -o TABLE --preset superbpe` (or --spelling bytes --pre-split ... --superword-pattern {want:?}), in Python subwords.count(files, preset='superbpe'), or train from the text"
                )))
            }
            Some(s) if s.pattern != want => {
                return Err(err(format!(
                    "the count table's spans were cut by superword_pattern {:?} but this training asks for {want:?}; count again with --superword-pattern {want:?}, or train with the table's",
                    s.pattern
                )))
            }
            Some(_) => {}
        }
    } else if trainer.options.superword_at.is_some() {
        return Err(err(
            "two-stage BPE (superword_at) learns its second stage from whole texts, which a count table does not hold; train it from the text".into(),
        ));
    }
    let spelling = trainer.options.spelling().map_err(|e| to_py(py, e))?;
    if let Some(why) = mismatch(&spelling) {
        return Err(err(format!(
            "the count table was made with other spelling options than this training asks for: {why}; count again with the training's options, or train with the table's"
        )));
    }
    Ok(())
}

/// The command (and the Python call) that counts the spans a BoundlessBPE training with `b` reads.
fn boundless_recount(
    b: &subwords_core::learners::superword::boundless::BoundlessOptions,
) -> String {
    use subwords_core::learners::superword::boundless::CountOn;
    let (mut cli, mut py) = (String::new(), String::new());
    if b.count_on == CountOn::Pairs {
        cli.push_str(" --count-on pairs");
        py.push_str(", count_on='pairs'");
    }
    if b.superword_pieces != "letters" {
        cli.push_str(&format!(" --superword-pieces {:?}", b.superword_pieces));
        py.push_str(&format!(", superword_pieces={:?}", b.superword_pieces));
    }
    format!("`subwords count FILES -o TABLE --preset boundless{cli}` (in Python subwords.count(files, preset='boundless'{py}))")
}

/// Reads a binary table file straight into `trainer`, its units left in the file's bytes (the
/// memory a large table costs is then the file's size; no string per unit is made).
#[pyfunction]
pub fn trainer_load_table(
    py: Python<'_>,
    trainer: &mut Trainer,
    path: &str,
    limit: u64,
) -> PyResult<()> {
    let table = py
        .detach(|| -> subwords_core::Result<TableBytes> {
            let io = |e| subwords_core::Error::io(format!("cannot read count table {path:?}"), e);
            let size = std::fs::metadata(path).map_err(io)?.len();
            if size > limit {
                return Err(subwords_core::Error::Input(format!(
                    "{path}: {size} bytes is larger than any count table subwords reads ({limit} bytes)"
                )));
            }
            let data = std::fs::read(path).map_err(io)?;
            TableBytes::from_bytes(data).map_err(|e| subwords_core::Error::Input(format!("{path}: {e}")))
        })
        .map_err(|e| to_py(py, e))?;
    check_table_fits(py, trainer, table.spans.as_ref(), |s| table.mismatch(s))?;
    trainer.counter = None;
    trainer.streams = span_streams(trainer, table.spans.as_ref());
    trainer.units = None;
    trainer.normalizations = Some(table.normalizations);
    trainer.texts = table.texts;
    trainer.table = Some(table);
    Ok(())
}

/// Gives `trainer` the table's units in place of text. The table must have been counted with the
/// spelling the trainer's options ask for; two-stage BPE needs the texts themselves.
#[pyfunction]
pub fn trainer_use_table(
    py: Python<'_>,
    trainer: &mut Trainer,
    table: &PyCountTable,
) -> PyResult<()> {
    check_table_fits(py, trainer, table.inner.spans.as_ref(), |s| table.inner.mismatch(s))?;
    trainer.counter = None;
    trainer.streams = span_streams(trainer, table.inner.spans.as_ref());
    trainer.table = None;
    trainer.units = Some(
        table
            .inner
            .units
            .iter()
            .map(|(t, c)| UnitCount { text: t.to_string(), starts: true, ends: true, count: *c })
            .collect(),
    );
    trainer.normalizations = Some(table.inner.normalizations);
    trainer.texts = table.inner.texts;
    Ok(())
}

/// SuperBPE's stage two reads the table's spans; other trainings ignore them.
fn span_streams(
    trainer: &Trainer,
    spans: Option<&TableSpans>,
) -> Option<Box<dyn subwords_core::learners::StageTwoTexts>> {
    if trainer.options.superword_pattern.is_none() && trainer.options.boundless.is_none() {
        return None;
    }
    spans.map(|s| Box::new(s.span_table()) as Box<dyn subwords_core::learners::StageTwoTexts>)
}
