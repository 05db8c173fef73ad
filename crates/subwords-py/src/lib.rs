//! `subwords._core`: the thin PyO3 layer. Users never import it; `subwords._api` wraps it.
//!
//! Every call that touches text releases the GIL. Errors become the classes of
//! `subwords.errors`, never a bare `Exception`.

mod counts;
mod encoder;
mod extend;
mod face;
mod raw;
mod sentencepiece;
mod tiktoken;
mod trace;
pub(crate) use raw::{flat_batch, id_list, list_batch, Grown};
mod values;

mod hf;
mod parity;
mod picky;
mod snmt;
mod stochastok;

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList};

use subwords_core::batch::Items;
use subwords_core::counting::UnitCounter;
use subwords_core::learners::{self, Corpus, StageTwoTexts, UnitCount};
use subwords_core::options::TrainOptions;
use subwords_core::tokenizer::Tokenizer;
use subwords_core::Error;

fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let class = match &e {
        Error::Option(_) => "OptionError",
        Error::Input(_) => "InputError",
        Error::ModelFile(_) => "ModelFileError",
        Error::UnknownPiece(_) => "UnknownPieceError",
        Error::Io { .. } => "FileError",
    };
    match py.import("subwords.errors").and_then(|m| m.getattr(class)) {
        Ok(cls) => PyErr::from_type(cls.cast_into().unwrap(), e.to_string()),
        Err(err) => err,
    }
}

/// The `StateError` for a `Trainer` used again: it trains once, its counts consumed by `train`;
/// a second use is a mistake of the caller's, not an I/O failure.
fn spent() -> PyErr {
    Python::attach(|py| match py.import("subwords.errors").and_then(|m| m.getattr("StateError")) {
        Ok(cls) => PyErr::from_type(
            cls.cast_into().unwrap(),
            "this trainer has already trained its model; make a new one",
        ),
        Err(err) => err,
    })
}

fn pool(threads: usize) -> PyResult<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| PyOSError::new_err(format!("cannot start worker threads: {e}")))
}

/// Counts texts into a trainer's or a `Counter`'s counter (`None`: it has already finished).
fn feed_texts(
    py: Python<'_>,
    counter: Option<&mut UnitCounter>,
    pool: &rayon::ThreadPool,
    texts: Vec<String>,
) -> PyResult<()> {
    let counter = counter.ok_or_else(spent)?;
    py.detach(|| pool.install(|| counter.feed_texts(&texts)));
    Ok(())
}

fn feed_file(
    py: Python<'_>,
    counter: Option<&mut UnitCounter>,
    pool: &rayon::ThreadPool,
    path: &str,
    errors: subwords_core::options::InputErrors,
    progress: Option<&subwords_core::progress::Progress>,
) -> PyResult<()> {
    let counter = counter.ok_or_else(spent)?;
    py.detach(|| pool.install(|| counter.feed_file(path, errors, progress)))
        .map_err(|e| to_py(py, e))
}

/// Reads a `word<TAB>count` file into a trainer's or a `Counter`'s counter, without the GIL.
fn feed_count_file(
    py: Python<'_>,
    counter: Option<&mut UnitCounter>,
    path: &str,
    errors: subwords_core::options::InputErrors,
    progress: Option<&subwords_core::progress::Progress>,
) -> PyResult<()> {
    let counter = counter.ok_or_else(spent)?;
    py.detach(|| counter.feed_count_file(path, errors, progress)).map_err(|e| to_py(py, e))
}

fn add_counts(counter: Option<&mut UnitCounter>, counts: Vec<(String, u64)>) -> PyResult<()> {
    let counter = counter.ok_or_else(spent)?;
    for (w, c) in counts {
        counter.add_count(&w, c);
    }
    Ok(())
}

/// A read-only view of a trainer's progress, safe to poll from another Python thread while the
/// trainer runs with the GIL released.
#[pyclass(module = "subwords._core", frozen)]
struct ProgressView {
    inner: std::sync::Arc<subwords_core::progress::Progress>,
}

#[pymethods]
impl ProgressView {
    /// (phase, done, total)
    fn read(&self) -> (&'static str, u64, u64) {
        let (phase, done, total) = self.inner.read();
        (phase.name(), done, total)
    }
}

#[pyclass(module = "subwords._core")]
struct Trainer {
    options: TrainOptions,
    counter: Option<UnitCounter>,
    units: Option<Vec<UnitCount>>,
    /// A count table file's units, in its bytes (`trainer_load_table`), read when `units` is None.
    table: Option<subwords_core::count_table::TableBytes>,
    progress: std::sync::Arc<subwords_core::progress::Progress>,
    joints: Option<std::collections::BTreeMap<String, Vec<String>>>,
    normalizations: Option<subwords_core::spelling::Normalizations>,
    /// Texts counted, once the counts have been taken out of the counter (or came from a table).
    texts: u64,
    /// Two-stage BPE's texts, kept when the counts are taken out for joints.
    streams: Option<Box<dyn StageTwoTexts>>,
    /// Two-stage BPE: a callable giving the input again for stage two (`stream_again`).
    again: Option<Py<PyAny>>,
    pool: rayon::ThreadPool,
}

/// Stage two's texts read again from the Python input: `again()` gives an iterator of items,
/// each a list of texts or the path of a plain text file for the engine to read (the items the
/// first pass fed, in the same order). One item is held at a time.
struct Reread {
    again: Py<PyAny>,
    cut: Vec<String>,
    errors: subwords_core::options::InputErrors,
    /// Texts the first pass counted: a second pass that gives another number is refused.
    expected: u64,
}

enum Item {
    Texts(Vec<String>),
    File(String),
}

impl StageTwoTexts for Reread {
    fn each_text(&mut self, f: &mut dyn FnMut(&str)) -> subwords_core::Result<()> {
        let lost = |e: PyErr| {
            Error::Input(format!(
                "reading the training input again for two-stage BPE's stage two failed: {e}"
            ))
        };
        let iter: Py<PyAny> = Python::attach(|py| -> PyResult<Py<PyAny>> {
            Ok(self.again.bind(py).call0()?.try_iter()?.into_any().unbind())
        })
        .map_err(lost)?;
        let mut seen = 0u64;
        loop {
            let item = Python::attach(|py| -> PyResult<Option<Item>> {
                let it = iter.bind(py).cast::<pyo3::types::PyIterator>()?.clone();
                match it.into_iter().next() {
                    None => Ok(None),
                    Some(obj) => {
                        let obj = obj?;
                        if let Ok(path) = obj.extract::<String>() {
                            Ok(Some(Item::File(path)))
                        } else {
                            Ok(Some(Item::Texts(obj.extract::<Vec<String>>()?)))
                        }
                    }
                }
            })
            .map_err(lost)?;
            match item {
                None => break,
                Some(Item::File(path)) => {
                    seen +=
                        subwords_core::counting::each_file_text(&path, self.errors, &self.cut, f)?
                }
                Some(Item::Texts(texts)) => {
                    seen += subwords_core::counting::each_stream_text(&texts, &self.cut, f)
                }
            }
        }
        if seen != self.expected {
            return Err(Error::Input(format!(
                "the training input gave {seen} texts when read again for two-stage BPE's stage two, but {} when counted; \
                 two-stage training reads its input twice, so the input must not change while it trains",
                self.expected
            )));
        }
        Ok(())
    }

    fn held_bytes(&self) -> u64 {
        0
    }
}

#[pymethods]
impl Trainer {
    #[new]
    fn new(py: Python<'_>, options: &Bound<'_, PyAny>, threads: usize) -> PyResult<Self> {
        let options = train_options(py, options)?;
        let spelling = options.spelling().map_err(|e| to_py(py, e))?;
        // SuperBPE counts spans beside the units instead of keeping the texts
        let spans = learners::superword::span_spelling(&options).map_err(|e| to_py(py, e))?;
        let keep = options.superword_at.is_some() && spans.is_none();
        let mut counter = UnitCounter::new(spelling, threads, keep);
        counter.cut = options.cut_texts();
        counter.spans = spans;
        counter.runs =
            learners::superword::boundless::RunSpans::of(&options).map_err(|e| to_py(py, e))?;
        Ok(Trainer {
            options,
            counter: Some(counter),
            units: None,
            table: None,
            progress: Default::default(),
            joints: None,
            normalizations: None,
            texts: 0,
            streams: None,
            again: None,
            pool: pool(threads)?,
        })
    }

    fn progress_view(&self) -> ProgressView {
        ProgressView { inner: self.progress.clone() }
    }

    fn feed_texts(&mut self, py: Python<'_>, texts: Vec<String>) -> PyResult<()> {
        feed_texts(py, self.counter.as_mut(), &self.pool, texts)
    }

    fn feed_file(&mut self, py: Python<'_>, path: String) -> PyResult<()> {
        feed_file(
            py,
            self.counter.as_mut(),
            &self.pool,
            &path,
            self.options.input_errors,
            Some(&*self.progress),
        )
    }

    fn add_counts(&mut self, counts: Vec<(String, u64)>) -> PyResult<()> {
        add_counts(self.counter.as_mut(), counts)
    }

    fn feed_count_file(&mut self, py: Python<'_>, path: String) -> PyResult<()> {
        feed_count_file(
            py,
            self.counter.as_mut(),
            &path,
            self.options.input_errors,
            Some(&*self.progress),
        )
    }

    /// Two-stage BPE: do not keep the texts for stage two; it calls `again()` for the input
    /// once more instead (an iterator of lists of texts and plain-text file paths, the items fed
    /// before, in their order). Call it before feeding; a no-op for one-stage trainings.
    fn stream_again(&mut self, again: Py<PyAny>) -> PyResult<()> {
        let counter = self.counter.as_mut().ok_or_else(spent)?;
        if self.options.superword_at.is_some() && counter.spans.is_none() {
            counter.stop_keeping_streams();
            self.again = Some(again);
        }
        Ok(())
    }

    /// Bytes of text held in memory for stage two (0 when it reads the input again).
    fn held_stream_bytes(&self) -> u64 {
        match (&self.counter, &self.streams) {
            (Some(c), _) => c.held_stream_bytes(),
            (None, Some(s)) => s.held_bytes(),
            (None, None) => 0,
        }
    }

    /// The counted units (for pre-split joints, applied on the Python side), sorted by text.
    fn unit_counts(&mut self, py: Python<'_>) -> PyResult<Vec<(String, u64)>> {
        let counter = self.counter.take().ok_or_else(spent)?;
        let (counts, norm, texts, streams) = counter.finish().map_err(|e| to_py(py, e))?;
        let mut v: Vec<(String, u64)> = counts.iter().map(|(k, &c)| (k.to_string(), c)).collect();
        v.sort();
        let mut corpus = Corpus::from_counts(counts, norm, texts, streams);
        self.reread_streams(&mut corpus);
        self.texts = corpus.texts;
        self.streams = corpus.streams;
        self.normalizations = Some(corpus.normalizations);
        self.units = Some(corpus.units);
        Ok(v)
    }

    /// Replaces the units (text, starts_word, ends_word, count) and records the joints that
    /// cut them (saved in the model, applied when encoding).
    fn set_units(
        &mut self,
        units: Vec<(String, bool, bool, u64)>,
        joints: std::collections::BTreeMap<String, Vec<String>>,
    ) {
        self.units = Some(
            units
                .into_iter()
                .map(|(text, starts, ends, count)| UnitCount { text, starts, ends, count })
                .collect(),
        );
        self.table = None;
        self.joints = Some(joints);
    }

    fn train(&mut self, py: Python<'_>) -> PyResult<PyTokenizer> {
        let corpus = self.take_corpus(py)?;
        let options = self.options.clone();
        let pool = &self.pool;
        let progress = &*self.progress;
        let model = py
            .detach(|| {
                pool.install(|| learners::train_with_progress(&options, corpus, Some(progress)))
            })
            .map_err(|e| to_py(py, e))?;
        Ok(PyTokenizer::wrap(model))
    }
}

impl Trainer {
    /// With `stream_again`, stage two's texts come from reading the input again.
    fn reread_streams(&mut self, corpus: &mut Corpus) {
        if let Some(again) = self.again.take() {
            let reread = Reread {
                again,
                cut: self.options.cut_texts(),
                errors: self.options.input_errors,
                expected: corpus.texts,
            };
            corpus.streams = Some(Box::new(reread));
        }
    }

    /// What training reads, taken out of the trainer (it trains once): the counter's units, or
    /// the units set in their place (joints, a count table).
    fn take_corpus(&mut self, py: Python<'_>) -> PyResult<Corpus> {
        match (self.counter.take(), self.units.take()) {
            (Some(mut counter), _) => {
                let spans = counter.take_spans();
                let (table, streams) = counter.finish_units().map_err(|e| to_py(py, e))?;
                let mut corpus = Corpus::from_table(table, streams);
                self.reread_streams(&mut corpus);
                if let Some(spans) = spans {
                    corpus.streams = Some(Box::new(spans));
                }
                Ok(corpus)
            }
            (None, Some(units)) => Ok(Corpus {
                units,
                table: None,
                joints: self.joints.take(),
                normalizations: self.normalizations.unwrap_or_default(),
                texts: self.texts,
                streams: self.streams.take(),
                languages: None,
            }),
            (None, None) => match self.table.take() {
                Some(table) => Ok(Corpus {
                    units: Vec::new(),
                    table: Some(table),
                    joints: self.joints.take(),
                    normalizations: self.normalizations.unwrap_or_default(),
                    texts: self.texts,
                    streams: self.streams.take(),
                    languages: None,
                }),
                None => Err(spent()),
            },
        }
    }
}

#[pyclass(module = "subwords._core", name = "Tokenizer", frozen)]
struct PyTokenizer {
    inner: Tokenizer,
    /// The rank engine cutting the model's text when it gives the merge replay's ids
    /// (`subwords_compat::own_rank`), decided when the encoder is first asked for.
    rank: std::sync::OnceLock<Option<subwords_compat::own_rank::OwnRank>>,
}

crate::encoder::holds!(PyTokenizer => Tokenizer);

impl PyTokenizer {
    fn wrap(inner: Tokenizer) -> Self {
        PyTokenizer { inner, rank: std::sync::OnceLock::new() }
    }

    /// The rank engine standing in for the model's merge replay, if it can.
    pub(crate) fn ranked(&self) -> Option<&subwords_compat::own_rank::OwnRank> {
        self.rank.get_or_init(|| subwords_compat::own_rank::OwnRank::of(&self.inner)).as_ref()
    }

    fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        id_list(py, self.ints(py), ids)
    }

    fn ints(&self, py: Python<'_>) -> &[Py<PyAny>] {
        raw::shared_ints(py, self.inner.rows.len())
    }
}

/// Every text's ids as one buffer of little-endian ids `width` bytes wide (2: uint16, 4:
/// uint32), and the end of each text in that array (one little-endian u64 per text), for
/// `numpy.frombuffer`. An id too wide for `width` is refused (nothing is returned), so a uint16
/// array never holds a wrapped id. Filled part by part as a batch is encoded
/// (`batch::ids_streamed`), so the copy overlaps the encoding instead of following it on one
/// thread. A template and an end-of-document id are already in the engine's ids
/// (`encoder::encode_batch`).
///
/// The buffers are the `bytearray`s returned: copying finished `Vec`s into `bytes` after the
/// batch was serial work on the calling thread (0.75 ms of a 30 ms 2-thread batch of 4 MB of
/// lines). Only growing one needs the GIL; the writes do not, as no Python code can see the
/// objects before [`IdArrays::finish`] returns them.
pub(crate) struct IdArrays {
    width: usize,
    ids: Grown,
    ends: Grown,
    end: u64,
    widest: u32,
    /// Texts in the batch.
    texts: usize,
    /// Whether the buffers were sized ([`IdArrays::size_for`], at the first part).
    sized: bool,
}

impl IdArrays {
    /// For a batch of `texts` texts.
    pub(crate) fn new(py: Python<'_>, width: usize, texts: usize) -> PyResult<Self> {
        if width != 2 && width != 4 {
            return Err(to_py(
                py,
                Error::Option(format!(
                    "an id array is 2 or 4 bytes wide (uint16, uint32), not {width}"
                )),
            ));
        }
        Ok(IdArrays {
            width,
            ids: Grown::new(py),
            ends: Grown::new(py),
            end: 0,
            widest: 0,
            texts,
            sized: false,
        })
    }

    /// Appends every text of `flat`. This runs on the calling thread, so it is one pass of
    /// plain stores per part (an `extend_from_slice` per id was 4% of a 2-thread batch of
    /// lines, all of it on the caller). `bytes` is the UTF-8 length of the batch's texts read
    /// so far, all of them by the time the first part comes (`batch::ids_streamed` reads every
    /// part before it hands one on).
    pub(crate) fn extend(&mut self, flat: &subwords_core::batch::FlatIds, bytes: usize) {
        if !self.sized && !self.size_for(flat, bytes) {
            return;
        }
        if !self.ids.reserve(flat.ids().len() * self.width) || !self.ends.reserve(flat.len() * 8) {
            return;
        }
        self.put(flat.ids());
        for ids in flat.iter() {
            self.end += ids.len() as u64;
            self.ends.room(8).copy_from_slice(&self.end.to_le_bytes());
        }
    }

    /// Sizes both buffers at the first part, so that they need not grow by doubling: a doubling
    /// copies everything written, serial on the calling thread, and the last one comes late in
    /// the batch, when the other threads may have nothing left to do (our 32k Unigram on 4 MB of
    /// multilingual text writes 10.9 MB of ids, and the last doubling was 2 ms of `memmove` on
    /// the caller while the other thread waited). `ends` holds 8 bytes a text, known exactly.
    /// The ids are estimated from the first part's ids a text, with a quarter more for luck, but
    /// no more than one id a byte of the texts (beyond that the doubling still works, only with
    /// copies); the unused room is given back in [`IdArrays::finish`]. False when a buffer could
    /// not be made that large.
    fn size_for(&mut self, first: &subwords_core::batch::FlatIds, bytes: usize) -> bool {
        self.sized = true;
        let per = first.ids().len().div_ceil(first.len().max(1));
        let ids = (per.saturating_mul(self.texts) / 4).saturating_mul(5).min(bytes);
        self.ids.reserve(ids.saturating_mul(self.width))
            && self.ends.reserve(self.texts.saturating_mul(8))
    }

    fn put(&mut self, part: &[u32]) {
        let room = self.ids.room(part.len() * self.width);
        if self.width == 2 {
            self.widest = part.iter().fold(self.widest, |w, &i| w.max(i));
            for (b, &i) in room.chunks_exact_mut(2).zip(part) {
                b.copy_from_slice(&(i as u16).to_le_bytes());
            }
        } else {
            for (b, &i) in room.chunks_exact_mut(4).zip(part) {
                b.copy_from_slice(&i.to_le_bytes());
            }
        }
    }

    /// The two buffers (ids, ends); an id too wide for uint16 is refused, and so is a batch
    /// whose buffers could not grow (the `MemoryError`).
    pub(crate) fn finish<'py>(
        self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        if self.width == 2 && self.widest > u16::MAX as u32 {
            return Err(to_py(
                py,
                Error::Option(format!(
                    "id {} does not fit in uint16 (ids up to 65535); use uint32",
                    self.widest
                )),
            ));
        }
        Ok((self.ids.finish(py)?, self.ends.finish(py)?))
    }
}

/// An error of `subwords.errors`' class `class` (see [`to_py`]).
fn error(py: Python<'_>, class: &str, message: String) -> PyErr {
    match py.import("subwords.errors").and_then(|m| m.getattr(class)) {
        Ok(cls) => match cls.cast_into() {
            Ok(cls) => PyErr::from_type(cls, message),
            Err(e) => e.into(),
        },
        Err(err) => err,
    }
}

/// Byte offsets into code-point offsets.
fn char_offsets(text: &str) -> Vec<u32> {
    let mut map = vec![0u32; text.len() + 1];
    let mut k = 0u32;
    for (i, c) in text.char_indices() {
        for j in 0..c.len_utf8() {
            map[i + j] = k;
        }
        k += 1;
    }
    map[text.len()] = k;
    map
}

#[pymethods]
impl PyTokenizer {
    #[staticmethod]
    fn from_json(py: Python<'_>, text: String) -> PyResult<Self> {
        let inner = py.detach(|| Tokenizer::from_json(&text)).map_err(|e| to_py(py, e))?;
        Ok(PyTokenizer::wrap(inner))
    }

    /// A BERT vocab.txt's bytes read into a model (`subwords_compat::vocab_txt`), or what is
    /// wrong with the file, for the reader's message: `("utf-8", line, "")`, `("line", line,
    /// piece)`, `("missing", 0, name)` or `("empty", 0, "")`.
    #[staticmethod]
    fn from_vocab_txt<'py>(
        py: Python<'py>,
        raw: &[u8],
        spelling: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        use subwords_compat::vocab_txt::{read, Refused};
        let spelling = spelling_of(py, spelling, "spelling")?;
        let got = py.detach(|| read(raw, spelling)).map_err(|e| to_py(py, e))?;
        let wrong = |problem: &str, line: usize, what: String| {
            Ok((problem, line, what).into_pyobject(py)?.into_any())
        };
        match got {
            Ok(model) => Ok(Bound::new(py, PyTokenizer::wrap(model))?.into_any()),
            Err(Refused::Empty) => wrong("empty", 0, String::new()),
            Err(Refused::Utf8 { line }) => wrong("utf-8", line, String::new()),
            Err(Refused::Line { line, text }) => wrong("line", line, text),
            Err(Refused::Missing { name }) => wrong("missing", 0, name.to_string()),
        }
    }

    /// A model of (piece, kind) rows and nothing learned, checked as a model file of them is
    /// (`Tokenizer::from_rows`); `spelling` is the file's spelling object, a dict (the fields it
    /// leaves out take their defaults).
    #[staticmethod]
    #[pyo3(signature = (model, spelling, rows, template=None))]
    fn from_rows(
        py: Python<'_>,
        model: &str,
        spelling: &Bound<'_, PyAny>,
        rows: Vec<(String, String)>,
        template: Option<(String, String)>,
    ) -> PyResult<Self> {
        let bad = |e: String| to_py(py, Error::ModelFile(e));
        let model: subwords_core::options::ModelKind =
            serde_json::from_value(serde_json::Value::String(model.to_string()))
                .map_err(|e| bad(format!("model: {e}")))?;
        let spelling = spelling_of(py, spelling, "not a valid subwords model file: spelling")?;
        let rows = rows
            .into_iter()
            .enumerate()
            .map(|(i, (piece, kind))| match subwords_core::vocab::RowKind::from_name(&kind) {
                Some(k) => Ok((piece, k)),
                None => Err(bad(format!("row {i}: unknown row kind {kind:?}"))),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let template = template.as_ref().map(|(c, s)| (c.as_str(), s.as_str()));
        let inner = py
            .detach(|| Tokenizer::from_rows(model, spelling, rows, template))
            .map_err(|e| to_py(py, e))?;
        Ok(PyTokenizer::wrap(inner))
    }

    /// Whether the rank engine cuts this model's text (`subwords_compat::own_rank`).
    fn rank_fast(&self, py: Python<'_>) -> bool {
        py.detach(|| self.ranked().is_some())
    }

    fn to_json(&self, py: Python<'_>) -> String {
        py.detach(|| self.inner.to_json())
    }

    /// The encoder over this model (`subwords._core.Encoder`), with its template (a BERT
    /// vocabulary's `[CLS]`/`[SEP]`) for calls that ask for it.
    fn encoder(slf: &Bound<'_, Self>) -> PyResult<encoder::PyEncoder> {
        let model = slf.get();
        slf.py().detach(|| model.ranked());
        let template = model.inner.template_of();
        encoder::PyEncoder::own(slf.py(), slf.clone().unbind(), template)
    }

    /// Ids of `text` (and `pair`) in a mode other than the plain one: `"dropout"` (BPE-dropout
    /// with probability `p`), `"fewest"` or `"sample"` (Unigram: `alpha`, `nbest`), each stretch
    /// between the allowed specials (`allowed`: ids; the user symbols always) drawn from `seed`
    /// afresh, inside the template when `template` (`subwords_core::tokenizer::InMode`).
    #[pyo3(signature = (text, pair, allowed, template, mode, p=0.0, alpha=1.0, nbest=None, seed=0))]
    #[allow(clippy::too_many_arguments)]
    fn encode_in_mode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        pair: Option<&str>,
        allowed: Vec<u32>,
        template: bool,
        mode: &str,
        p: f64,
        alpha: f64,
        nbest: Option<usize>,
        seed: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        use subwords_core::encoder::{Call, Encoder};
        use subwords_core::segmenters::unigram::lattice::SplitMix64;
        use subwords_core::tokenizer::{InMode, Mode};
        let make: fn(f64, f64, Option<usize>, u64) -> Mode = match mode {
            "dropout" => |p: f64, _: f64, _: Option<usize>, seed: u64| Mode::dropout(p, seed),
            "fewest" => |_: f64, _: f64, _: Option<usize>, _: u64| Mode::Fewest,
            "sample" => |_: f64, alpha: f64, nbest: Option<usize>, seed: u64| Mode::Sample {
                alpha,
                nbest,
                rng: SplitMix64::new(seed),
            },
            other => {
                return Err(to_py(
                    py,
                    Error::Option(format!(
                        "mode must be 'dropout', 'fewest' or 'sample', got {other:?}"
                    )),
                ))
            }
        };
        let engine = InMode { tokenizer: &self.inner, mode: move || make(p, alpha, nbest, seed) };
        let allowed = engine.allowed(&allowed).map_err(|e| to_py(py, e))?;
        let template = if template { self.inner.template_of() } else { None };
        let call = Call { allowed: &allowed, template: template.as_ref() };
        let ids = py
            .detach(|| subwords_core::encoder::encode(&engine, text, pair, call))
            .map_err(|e| to_py(py, e))?;
        self.list(py, &ids)
    }

    /// (ids, starts, ends) with offsets in code points.
    /// (ids, starts, ends), the character span of `text` each id stands for; the specials
    /// `allowed` names (ids; the user symbols always) are cut out first, each its own span.
    #[pyo3(signature = (text, allowed=Vec::new()))]
    fn encode_with_offsets(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Vec<u32>,
    ) -> PyResult<(Vec<u32>, Vec<u32>, Vec<u32>)> {
        use subwords_core::encoder::Encoder;
        let allowed = self.inner.allowed(&allowed).map_err(|e| to_py(py, e))?;
        py.detach(|| {
            let map = char_offsets(text);
            let (mut ids, mut starts, mut ends) = (Vec::new(), Vec::new(), Vec::new());
            let mut err = None;
            let mut at = 0usize;
            subwords_core::counting::split_at(text, allowed.surfaces(), |part, hit| {
                if err.is_some() {
                    return;
                }
                if !part.is_empty() {
                    let got = match self.ranked() {
                        Some(rank) => rank.encode_with_spans(part),
                        None => self.inner.encode_with_spans(part),
                    };
                    match got {
                        Ok((got, spans)) => {
                            ids.extend(got);
                            starts.extend(spans.iter().map(|s| map[at + s.0]));
                            ends.extend(spans.iter().map(|s| map[at + s.1]));
                        }
                        Err(e) => err = Some(e),
                    }
                }
                at += part.len();
                if let Some(j) = hit {
                    let len = allowed.surfaces()[j].len();
                    ids.push(allowed.ids()[j]);
                    starts.push(map[at]);
                    ends.push(map[at + len]);
                    at += len;
                }
            });
            match err {
                Some(e) => Err(e),
                None => Ok((ids, starts, ends)),
            }
        })
        .map_err(|e| to_py(py, e))
    }

    fn decode(&self, py: Python<'_>, ids: Vec<u32>) -> PyResult<String> {
        py.detach(|| self.inner.decode(&ids)).map_err(|e| to_py(py, e))
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let b = py.detach(|| self.inner.decode_bytes(&ids)).map_err(|e| to_py(py, e))?;
        Ok(PyBytes::new(py, &b))
    }

    fn normalize(&self, py: Python<'_>, text: &str) -> PyResult<String> {
        self.inner.normalize(text).map_err(|e| to_py(py, e))
    }

    fn piece_to_id(&self, piece: &str) -> Option<u32> {
        self.inner.piece_to_id(piece)
    }

    fn id_to_piece(&self, id: u32) -> Option<String> {
        self.inner.display(id)
    }

    fn rows(&self) -> Vec<String> {
        (0..self.inner.rows.len() as u32).map(|i| self.inner.display(i).unwrap()).collect()
    }

    fn kinds(&self) -> Vec<&'static str> {
        self.inner.rows.iter().map(|r| r.kind.name()).collect()
    }

    fn merges(&self) -> Vec<(String, String)> {
        self.inner
            .merges
            .iter()
            .map(|m| (self.inner.display(m[0]).unwrap(), self.inner.display(m[1]).unwrap()))
            .collect()
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.rows.len()
    }

    /// The training report as a dict (None for a model read from another format).
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        values::to_py(py, &self.inner.report)
    }

    /// The training options as the model file saves them, a dict (None when it has none).
    fn options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        values::to_py(py, &self.inner.options)
    }

    /// The spelling as the model file saves it, a dict.
    fn spelling<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        values::to_py(py, &self.inner.spelling)
    }

    /// Unigram: encode with "fewest" or "sample" (alpha, nbest, seed: one generator per call).
    fn log_probs(&self) -> Vec<Option<f64>> {
        if self.inner.log_probs.is_empty() {
            vec![None; self.inner.rows.len()]
        } else {
            self.inner.log_probs.clone()
        }
    }

    /// (start, end, piece, log-prob) per arc, in arc order.
    fn lattice(&self, py: Python<'_>, text: &str) -> PyResult<Vec<(u32, u32, String, f64)>> {
        let lat = self.inner.unit_lattice(text).map_err(|e| to_py(py, e))?;
        Ok(lat
            .arcs()
            .iter()
            .map(|a| (a.start, a.end, self.inner.display(a.piece).unwrap(), a.log_prob))
            .collect())
    }

    fn unit_log_probability(&self, py: Python<'_>, text: &str) -> PyResult<f64> {
        Ok(self.inner.unit_lattice(text).map_err(|e| to_py(py, e))?.log_probability())
    }

    fn nbest(&self, py: Python<'_>, text: &str, k: usize) -> PyResult<Vec<(Vec<String>, f64)>> {
        let all = self.inner.nbest_of(text, k).map_err(|e| to_py(py, e))?;
        Ok(all
            .into_iter()
            .map(|(p, s)| (p.iter().map(|&i| self.inner.display(i).unwrap()).collect(), s))
            .collect())
    }

    fn spellings(&self, py: Python<'_>, text: &str) -> PyResult<Vec<(Vec<String>, f64)>> {
        let all = self.inner.spellings_of(text).map_err(|e| to_py(py, e))?;
        Ok(all
            .into_iter()
            .map(|(p, s)| (p.iter().map(|&i| self.inner.display(i).unwrap()).collect(), s))
            .collect())
    }

    #[pyo3(signature = (text, seed, alpha, nbest))]
    fn sample(
        &self,
        py: Python<'_>,
        text: &str,
        seed: u64,
        alpha: f64,
        nbest: Option<usize>,
    ) -> PyResult<Vec<String>> {
        let p = self.inner.sample_of(text, seed, alpha, nbest).map_err(|e| to_py(py, e))?;
        Ok(p.iter().map(|&i| self.inner.display(i).unwrap()).collect())
    }

    fn fewest(&self, py: Python<'_>, text: &str) -> PyResult<Vec<String>> {
        let lat = self.inner.unit_lattice(text).map_err(|e| to_py(py, e))?;
        let arcs = lat.fewest().unwrap_or_default();
        Ok(arcs
            .iter()
            .map(|&a| self.inner.display(lat.arcs()[a as usize].piece).unwrap())
            .collect())
    }

    /// Pruning losses of the learned rows (row order) on a corpus of (text, count).
    fn losses(&self, py: Python<'_>, corpus: Vec<(String, u64)>) -> PyResult<Vec<f64>> {
        py.detach(|| self.inner.losses(&corpus)).map_err(|e| to_py(py, e))
    }

    /// `(cls, sep)` ids when the model puts a template around texts (a BERT vocabulary).
    fn template(&self) -> Option<(u32, u32)> {
        self.inner.template
    }

    fn model_kind(&self) -> String {
        serde_json::to_value(self.inner.kind).unwrap().as_str().unwrap().to_string()
    }
}

/// `{"general_category": "16.0.0", ...}`: the Unicode versions of the core's character tables.
#[pyfunction]
fn unicode_versions() -> std::collections::BTreeMap<&'static str, String> {
    subwords_core::unicode_versions()
        .into_iter()
        .map(|(k, (a, b, c))| (k, format!("{a}.{b}.{c}")))
        .collect()
}

/// One `word<TAB>count` line by the core's rules (the ones table files are read by): the row,
/// None for a blank line, or a ValueError saying why it is refused.
#[pyfunction]
fn parse_count_line(line: &str) -> PyResult<Option<(&str, u64)>> {
    subwords_core::counting::parse_count_line(line).map_err(pyo3::exceptions::PyValueError::new_err)
}

/// GPT-2's byte-to-character table (`table[b]` prints byte `b`), the one the core uses.
#[pyfunction]
fn gpt2_byte_chars() -> Vec<String> {
    subwords_core::spelling::byte_to_char_table().iter().map(|c| c.to_string()).collect()
}

// -- training options, checked by the core's rules (subwords.TrainOptions) ----------------------

/// Training options (a dict of `TrainOptions`' fields) read into the core's struct and checked
/// by its rules, once: a value of the wrong type or range is an OptionError naming the key.
pub(crate) fn train_options(py: Python<'_>, options: &Bound<'_, PyAny>) -> PyResult<TrainOptions> {
    let o: TrainOptions =
        values::from_py(options).map_err(|e| to_py(py, Error::Option(e.to_string())))?;
    o.validate().map_err(|e| to_py(py, e))?;
    Ok(o)
}

/// A model file's spelling object (a dict) read into the core's `Spelling`, the fields it leaves
/// out at their defaults ([`SPELLING_DEFAULTS`]); errors are `ModelFileError`s led by `what`.
pub(crate) fn spelling_of(
    py: Python<'_>,
    spelling: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<subwords_core::spelling::Spelling> {
    let bad = |e: String| to_py(py, Error::ModelFile(format!("{what}: {e}")));
    let full = PyDict::new(py);
    for (k, v) in SPELLING_DEFAULTS {
        full.set_item(k, v.into_pyobject(py)?)?;
    }
    if let Ok(given) = spelling.cast::<PyDict>() {
        full.update(given.as_mapping())?;
    } else {
        return Err(bad(format!("expected a dict, got {}", spelling.get_type().name()?)));
    }
    if full.get_item("scheme")?.is_none() {
        full.set_item("scheme", "end")?;
    }
    values::from_py(full.as_any()).map_err(|e| bad(e.to_string()))
}

/// The spelling fields a reader of another format may leave out, and what they then are (the
/// scheme defaults to `end`; the mark is always given).
const SPELLING_DEFAULTS: [(&str, Option<bool>); 6] = [
    ("split_at_marks", Some(true)),
    ("pre_split", None),
    ("byte_fallback", Some(false)),
    ("clean_text", Some(false)),
    ("strip_accents", Some(false)),
    ("lowercase", Some(false)),
];

/// The units a training with these options cuts `text` into, each as (unit, start, end): the
/// unit's text (normalized, with the front mark) and the byte span of `text` it stands for.
#[pyfunction]
fn spelling_units(
    py: Python<'_>,
    options: &Bound<'_, PyAny>,
    text: &str,
) -> PyResult<Vec<(String, usize, usize)>> {
    let o = train_options(py, options)?;
    let s = o.spelling().map_err(|e| to_py(py, e))?;
    let mut out = Vec::new();
    s.for_each_unit(text, |u, (a, b)| out.push((u.to_string(), a, b)));
    Ok(out)
}

/// Refuses special tokens the training options' normalization would change (an OptionError
/// naming the token and what it would become).
#[pyfunction]
fn check_specials_normalization(
    py: Python<'_>,
    options: &Bound<'_, PyAny>,
    specials: Vec<String>,
) -> PyResult<()> {
    let o = train_options(py, options)?;
    subwords_core::options::check_specials_unchanged(&o, &specials).map_err(|e| to_py(py, e))
}

/// A model file's whole spelling object from the fields a reader gives (the rest at
/// [`SPELLING_DEFAULTS`]), checked as a model file's is.
#[pyfunction]
fn spelling_object<'py>(
    py: Python<'py>,
    spelling: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    values::to_py(py, &spelling_of(py, spelling, "spelling")?)
}

/// `{model: {option: value}}`: what a training with only the model and `vocab_size` reads
/// (`subwords_core::options::default_options`), the one table of training defaults. An option
/// absent from a model's dict defaults to off, empty or none.
#[pyfunction]
fn default_options(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use subwords_core::options::ModelKind;
    let out = PyDict::new(py);
    for model in [ModelKind::Bpe, ModelKind::Word, ModelKind::Wordpiece, ModelKind::Unigram] {
        let o = subwords_core::options::default_options(model, 1);
        let d = values::to_py(py, &o)?.cast_into::<PyDict>()?;
        d.del_item("vocab_size")?;
        // saved only when off, so serialization leaves its default out
        d.set_item("split_by_number", o.split_by_number)?;
        out.set_item(d.get_item("model")?.unwrap(), d)?;
    }
    Ok(out)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Trainer>()?;
    m.add_class::<PyTokenizer>()?;
    m.add_class::<encoder::PyEncoder>()?;
    m.add_class::<face::FaceCall>()?;
    m.add_class::<ProgressView>()?;
    m.add_class::<sentencepiece::SpModel>()?;
    m.add_function(wrap_pyfunction!(sentencepiece::sp_model_bytes, m)?)?;
    m.add_class::<tiktoken::PyRankBpe>()?;
    m.add_function(wrap_pyfunction!(tiktoken::split_pattern, m)?)?;
    m.add_class::<hf::PyHfPipeline>()?;
    m.add_class::<hf::PyHfTables>()?;
    m.add_class::<snmt::PySnmtCodes>()?;
    m.add_class::<stochastok::PyStochasTok>()?;
    m.add_function(wrap_pyfunction!(unicode_versions, m)?)?;
    m.add_function(wrap_pyfunction!(gpt2_byte_chars, m)?)?;
    m.add_function(wrap_pyfunction!(parse_count_line, m)?)?;
    m.add_class::<counts::PyCountTable>()?;
    m.add_class::<counts::Counter>()?;
    m.add_function(wrap_pyfunction!(counts::trainer_use_table, m)?)?;
    m.add_function(wrap_pyfunction!(counts::trainer_load_table, m)?)?;
    m.add_function(wrap_pyfunction!(trace::train_traced, m)?)?;
    m.add_function(wrap_pyfunction!(trace::measure_batch, m)?)?;
    m.add_function(wrap_pyfunction!(default_options, m)?)?;
    m.add_function(wrap_pyfunction!(spelling_object, m)?)?;
    m.add_function(wrap_pyfunction!(extend::extend_merges, m)?)?;
    m.add_function(wrap_pyfunction!(picky::picky_learn, m)?)?;
    m.add_function(wrap_pyfunction!(parity::parity_train, m)?)?;
    m.add_function(wrap_pyfunction!(parity::parity_learn, m)?)?;
    m.add_function(wrap_pyfunction!(extend::model_extended, m)?)?;
    m.add_function(wrap_pyfunction!(check_specials_normalization, m)?)?;
    m.add_function(wrap_pyfunction!(spelling_units, m)?)?;
    Ok(())
}
