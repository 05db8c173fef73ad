//! The encoder contract: what every engine that turns text into ids offers, so that one batch
//! runner, one rule for special tokens and one rule for templates serve them all.
//!
//! An engine (our own [`crate::tokenizer::Tokenizer`], and in `subwords-compat` the
//! SentencePiece model, the `tokenizer.json` pipeline and tiktoken's rank engine) implements
//! [`Encoder`]: it encodes one text into a caller's buffer, with the special tokens a call
//! allows matched as its own library matches them, using a worker's warm state (a word cache and
//! buffers) that it keeps in [`Slots`]. Everything else is written once, here:
//!
//! * [`Allowed`]: which of an engine's special tokens a call lets the text spell. One type for
//!   every engine, built once per call from the special ids the caller names.
//! * [`Template`]: the ids put around a text (BERT's `[CLS] … [SEP]`, a `tokenizer.json`
//!   post-processor, SentencePiece's `<s> … </s>`), applied by [`encode`] and [`encode_batch`]
//!   and never by an engine, so single calls, batches and the command line follow one rule.
//! * [`encode`] (one text, or a pair, on slot 0's state; [`encode_to`] the same into a caller's
//!   buffer) and [`encode_batch`] (many texts on scoped threads, streamed part by part to a sink
//!   in text order, [`crate::batch`]).
//!
//! Invariants: the ids of a text do not depend on the call that encodes it (single, batch, any
//! thread count, any batching), since a state only saves time; an allowed special surface
//! becomes its id and nothing else does; a template's ids are the same for every text.

use crate::batch::{ids_streamed, FlatIds, Items, Slots};
use crate::error::{Error, Result};
use crate::word_cache::{Value, WordCache};

/// An engine that encodes text into ids. See the module header for the contract.
pub trait Encoder: Sync {
    /// A worker's warm state, kept between texts and calls in [`Encoder::states`].
    type State: Default + Send;
    /// What the state's word cache holds for a word.
    type Cached: Value + Send + Sync;

    /// The states of single calls (slot 0) and of a batch's threads.
    fn states(&self) -> &Slots<Self::State>;

    /// The word cache inside a state: a batch's threads read the words slot 0 met before.
    fn cache(state: &mut Self::State) -> &mut WordCache<Self::Cached>;

    /// The engine's special tokens as (surface, id), in a fixed order: [`Allowed`] indexes it.
    fn specials(&self) -> &[(String, u32)];

    /// What a call that names the special ids `ids` allows; an id that is no special of the
    /// engine is an error. An engine whose own symbols match whatever a call allows (our
    /// models' user-defined symbols) adds them here.
    fn allowed(&self, ids: &[u32]) -> Result<Allowed> {
        Allowed::new(self.specials(), ids)
    }

    /// Appends the ids of `text` to `out`, the special surfaces `allowed` names matched as the
    /// engine's library matches them; every other special surface is ordinary text. An error
    /// may leave part of the text's ids behind (the callers drop them).
    fn encode_into(
        &self,
        text: &str,
        allowed: &Allowed,
        state: &mut Self::State,
        out: &mut Vec<u32>,
    ) -> Result<()>;
}

/// Which of an engine's special tokens a call allows, made once per call by [`Allowed::new`]
/// and read by the engine in the form it needs: a mask over [`Encoder::specials`], the indices,
/// or the surfaces with their ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allowed {
    mask: Vec<bool>,
    indices: Vec<usize>,
    surfaces: Vec<String>,
    ids: Vec<u32>,
}

impl Allowed {
    /// None allowed: every special surface is text.
    pub fn none() -> Self {
        Allowed::default()
    }

    /// The specials among `specials` whose ids are in `ids`. An id that names none of them is
    /// an error (a typo must not silently allow nothing).
    pub fn new(specials: &[(String, u32)], ids: &[u32]) -> Result<Self> {
        if ids.is_empty() {
            return Ok(Allowed::none());
        }
        let mut mask = vec![false; specials.len()];
        for &id in ids {
            let mut found = false;
            for (k, (_, sid)) in specials.iter().enumerate() {
                if *sid == id {
                    mask[k] = true;
                    found = true;
                }
            }
            if !found {
                return Err(Error::Input(format!(
                    "id {id} is not a special token of this vocabulary, so it cannot be allowed"
                )));
            }
        }
        Ok(Allowed::from_mask(specials, mask))
    }

    /// Every special allowed.
    pub fn all(specials: &[(String, u32)]) -> Self {
        Allowed::from_mask(specials, vec![true; specials.len()])
    }

    fn from_mask(specials: &[(String, u32)], mask: Vec<bool>) -> Self {
        let indices: Vec<usize> = (0..mask.len()).filter(|&k| mask[k]).collect();
        let surfaces = indices.iter().map(|&k| specials[k].0.clone()).collect();
        let ids = indices.iter().map(|&k| specials[k].1).collect();
        Allowed { mask, indices, surfaces, ids }
    }

    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// `mask[k]`: whether the `k`-th special may match.
    pub fn mask(&self) -> &[bool] {
        &self.mask
    }

    /// The allowed specials' indices into [`Encoder::specials`], ascending.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// The allowed surfaces, in index order; [`Allowed::ids`] holds their ids at the same places.
    pub fn surfaces(&self) -> &[String] {
        &self.surfaces
    }

    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// `text` cut at the allowed surfaces (leftmost, the longest at one place): `plain` for each
    /// stretch between them, then each surface's id pushed to `out`. The rule of our own models
    /// and SentencePiece's; tiktoken and `tokenizer.json` match specials their libraries' ways.
    pub fn split<E>(
        &self,
        text: &str,
        out: &mut Vec<u32>,
        mut plain: impl FnMut(&str, &mut Vec<u32>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        if self.is_empty() {
            return plain(text, out);
        }
        let mut result = Ok(());
        crate::counting::split_at(text, &self.surfaces, |part, hit| {
            if result.is_err() {
                return;
            }
            if !part.is_empty() {
                result = plain(part, out);
            }
            if let (Ok(()), Some(j)) = (&result, hit) {
                out.push(self.ids[j]);
            }
        });
        result
    }
}

/// One item of a [`Template`]: an id, or where the first or the second text goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Id(u32),
    First,
    Second,
}

/// The ids put around a text (`single`) and around a pair (`pair`). Each holds [`Slot::First`]
/// once; `pair` holds [`Slot::Second`] once too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    single: Vec<Slot>,
    pair: Vec<Slot>,
}

impl Template {
    /// Checks the shape: the texts' places each once, `Second` only in `pair`.
    pub fn new(single: Vec<Slot>, pair: Vec<Slot>) -> Result<Self> {
        let count = |v: &[Slot], s: Slot| v.iter().filter(|&&x| x == s).count();
        if count(&single, Slot::First) != 1 || count(&single, Slot::Second) != 0 {
            return Err(Error::Input(
                "a template for one text must hold the text's place once and no second text".into(),
            ));
        }
        if count(&pair, Slot::First) != 1 || count(&pair, Slot::Second) != 1 {
            return Err(Error::Input(
                "a template for a pair must hold each text's place once".into(),
            ));
        }
        Ok(Template { single, pair })
    }

    /// BERT's: `[CLS] A [SEP]` and `[CLS] A [SEP] B [SEP]`.
    pub fn bert(cls: u32, sep: u32) -> Self {
        use Slot::*;
        Template {
            single: vec![Id(cls), First, Id(sep)],
            pair: vec![Id(cls), First, Id(sep), Second, Id(sep)],
        }
    }

    /// The ids before and after the text in `single`.
    pub fn around(&self) -> (Vec<u32>, Vec<u32>) {
        let at = self.single.iter().position(|&s| s == Slot::First).unwrap_or(0);
        let ids = |v: &[Slot]| {
            v.iter()
                .filter_map(|s| match s {
                    Slot::Id(i) => Some(*i),
                    _ => None,
                })
                .collect()
        };
        (ids(&self.single[..at]), ids(&self.single[at + 1..]))
    }

    pub fn single(&self) -> &[Slot] {
        &self.single
    }

    pub fn pair(&self) -> &[Slot] {
        &self.pair
    }
}

/// What a call asks beyond the text: the specials it allows and the template around the ids
/// (`None`: nothing around them).
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    pub allowed: &'a Allowed,
    pub template: Option<&'a Template>,
}

impl<'a> Call<'a> {
    /// No specials, no template: the engine's ids alone.
    pub fn plain(allowed: &'a Allowed) -> Self {
        Call { allowed, template: None }
    }
}

/// The ids of `text` (and of `pair` after it), with the call's template around them (without
/// one, the pair's ids follow the text's), on the single calls' state.
pub fn encode<E: Encoder + ?Sized>(
    engine: &E,
    text: &str,
    pair: Option<&str>,
    call: Call<'_>,
) -> Result<Vec<u32>> {
    let mut out = Vec::with_capacity(text.len() / 3 + 4);
    encode_to(engine, text, pair, call, &mut out)?;
    Ok(out)
}

/// [`encode`] appending to a caller's buffer (a binding's per-thread buffer for short texts);
/// on an error `out` may hold part of the ids.
pub fn encode_to<E: Encoder + ?Sized>(
    engine: &E,
    text: &str,
    pair: Option<&str>,
    call: Call<'_>,
    out: &mut Vec<u32>,
) -> Result<()> {
    engine.states().with(0, |state| {
        let mut one = |t: &str, out: &mut Vec<u32>| engine.encode_into(t, call.allowed, state, out);
        match (call.template, pair) {
            (None, None) => one(text, out),
            (None, Some(p)) => {
                one(text, out)?;
                one(p, out)
            }
            (Some(t), _) => {
                let slots = if pair.is_some() { t.pair() } else { t.single() };
                for s in slots {
                    match *s {
                        Slot::Id(i) => out.push(i),
                        Slot::First => one(text, out)?,
                        Slot::Second => one(pair.unwrap_or(""), out)?,
                    }
                }
                Ok(())
            }
        }
    })
}

/// The ids of every text, handed to `sink` part by part in text order on the calling thread
/// while `threads` threads encode ([`crate::batch::ids_streamed`]), each text inside the call's
/// single template and followed by `suffix` (an end-of-document id, say). The first error in
/// text order is returned; `sink` has then seen the parts before it.
pub fn encode_batch<'a, E: Encoder + ?Sized, S: AsRef<str> + Sync + Send + 'a>(
    engine: &E,
    texts: impl Into<Items<'a, S>>,
    call: Call<'_>,
    suffix: &[u32],
    threads: usize,
    sink: impl FnMut(&FlatIds),
) -> Result<()> {
    let (before, mut after) = call.template.map(Template::around).unwrap_or_default();
    after.extend_from_slice(suffix);
    ids_streamed(
        texts,
        threads,
        engine.states().streamed(threads, E::cache),
        |t, state, out| {
            out.extend_from_slice(&before);
            engine.encode_into(t.as_ref(), call.allowed, state, out)?;
            out.extend_from_slice(&after);
            Ok(())
        },
        sink,
    )
}

/// [`encode_batch`] collected into one vector per text (for Rust callers and tests).
pub fn encode_batch_vec<E: Encoder + ?Sized, S: AsRef<str> + Sync + Send>(
    engine: &E,
    texts: &[S],
    call: Call<'_>,
    threads: usize,
) -> Result<Vec<Vec<u32>>> {
    let mut all = Vec::with_capacity(texts.len());
    encode_batch(engine, texts, call, &[], threads, |flat| {
        all.extend(flat.iter().map(<[u32]>::to_vec))
    })?;
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specials() -> Vec<(String, u32)> {
        vec![("<a>".into(), 7), ("<ab>".into(), 9), ("<b>".into(), 8)]
    }

    #[test]
    fn allowed_is_built_from_ids_and_refuses_an_unknown_one() {
        let s = specials();
        let a = Allowed::new(&s, &[8, 7]).unwrap();
        assert_eq!(a.mask(), &[true, false, true]);
        assert_eq!(a.indices(), &[0, 2]);
        assert_eq!(a.surfaces(), &["<a>".to_string(), "<b>".to_string()]);
        assert_eq!(a.ids(), &[7, 8]);
        assert!(Allowed::new(&s, &[5]).is_err());
        assert!(Allowed::none().is_empty());
        assert_eq!(Allowed::all(&s).ids(), &[7, 9, 8]);
    }

    #[test]
    fn split_cuts_at_the_leftmost_longest_allowed_surface() {
        // "<ab>" and "<a>" both start at 1: the longer wins; "<b>" is not allowed, so it stays text
        let s = specials();
        let a = Allowed::new(&s, &[7, 9]).unwrap();
        let mut out = vec![];
        let mut parts = vec![];
        let r: std::result::Result<(), ()> = a.split("x<ab>y<a><b>", &mut out, |p, o| {
            parts.push(p.to_string());
            o.push(0);
            Ok(())
        });
        r.unwrap();
        assert_eq!(parts, ["x", "y", "<b>"]);
        assert_eq!(out, [0, 9, 0, 7, 0]);
    }

    /// One id a byte (the byte itself): ids any reader can check by hand.
    #[derive(Default)]
    struct Bytes {
        states: Slots<WordCache<u32>>,
    }

    impl Encoder for Bytes {
        type State = WordCache<u32>;
        type Cached = u32;
        fn states(&self) -> &Slots<Self::State> {
            &self.states
        }
        fn cache(state: &mut Self::State) -> &mut WordCache<u32> {
            state
        }
        fn specials(&self) -> &[(String, u32)] {
            &[]
        }
        fn encode_into(
            &self,
            text: &str,
            _: &Allowed,
            _: &mut Self::State,
            out: &mut Vec<u32>,
        ) -> Result<()> {
            out.extend(text.bytes().map(u32::from));
            Ok(())
        }
    }

    #[test]
    fn encode_to_appends_what_encode_returns() {
        use Slot::*;
        let e = Bytes::default();
        let none = Allowed::none();
        let t =
            Template::new(vec![Id(1), First, Id(2)], vec![Id(1), First, Id(2), Second]).unwrap();
        // 'a' = 97, 'b' = 98, 'c' = 99
        for (pair, template, want) in [
            (None, None, vec![97, 98]),
            (Some("c"), None, vec![97, 98, 99]),
            (None, Some(&t), vec![1, 97, 98, 2]),
            (Some("c"), Some(&t), vec![1, 97, 98, 2, 99]),
        ] {
            let call = Call { allowed: &none, template };
            let mut out = vec![7];
            encode_to(&e, "ab", pair, call, &mut out).unwrap();
            assert_eq!(out[0], 7);
            assert_eq!(out[1..], want[..]);
            assert_eq!(encode(&e, "ab", pair, call).unwrap(), want);
        }
    }

    #[test]
    fn templates_check_their_shape_and_give_the_ids_around_a_text() {
        use Slot::*;
        assert!(Template::new(vec![Id(1)], vec![First, Second]).is_err());
        assert!(Template::new(vec![First, Second], vec![First, Second]).is_err());
        assert!(Template::new(vec![First], vec![First]).is_err());
        let t = Template::new(vec![Id(1), Id(2), First, Id(3)], vec![First, Second]).unwrap();
        assert_eq!(t.around(), (vec![1, 2], vec![3]));
        assert_eq!(Template::bert(101, 102).around(), (vec![101], vec![102]));
    }
}
