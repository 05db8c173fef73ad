//! Our own byte-level BPE models cut by the rank engine ([`crate::tiktoken::RankBpe`]) with
//! their own ids, when that gives the ids of the core's merge replay on every text.
//!
//! [`OwnRank::of`] decides once, when the model is read. It takes a BPE model of the `bytes`
//! spelling whose units are cut by an expression the rank engine has a scanner for (cl100k,
//! o200k, Llama 3) and nothing else: no normalization, no digit splitting, no stream merges, no
//! Picky, Scaffold or BoundlessBPE events, every row a special, a byte or a learned piece. Its
//! merges must then pass two checks:
//!
//! * the core's replay merges every occurrence of the lowest-ranked pair, left to right, before
//!   any pair those merges make; a merges list under tokenizers' rule merges one occurrence at a
//!   time, a pair made just now first when it ranks lower. The two are the same when no merge
//!   has a part that a merge ranked at or after it makes: then a pair made by a merge ranks
//!   after it, and one at a time goes through the same occurrences, left to right;
//! * the list under tokenizers' rule encodes as the rank engine does ([`crate::merge_ranks`],
//!   whose header gives the proof), the words not taken whole.
//!
//! Everything else stays with the core: dropout (per call), and every model that fails a check.
//! The specials are matched as the core matches them (leftmost, the longest at one place, the
//! user-defined symbols whatever a call allows), each stretch between them cut by the rank
//! engine. A model trained by the core's BPE on one of those expressions passes.

use subwords_core::batch::Slots;
use subwords_core::encoder::{Allowed, Encoder};
use subwords_core::options::ModelKind;
use subwords_core::spelling::Scheme;
use subwords_core::tokenizer::{Spans, Tokenizer};
use subwords_core::vocab::RowKind;
use subwords_core::word_cache::WordCache;
use subwords_core::Result;

use crate::merge_ranks::{rank_engine, scanned, TokenBytes, NO_ID};
use crate::tiktoken::{RankBpe, RankState};

/// Our model's encoding by the rank engine (see the module header).
pub struct OwnRank {
    /// The bytes and the pieces the merges make, ranked by id; no specials.
    rank: RankBpe,
    /// The model's special rows as (text, id), and the user-defined symbols among them, which
    /// match in text whatever a call allows.
    specials: Vec<(String, u32)>,
    always: Vec<u32>,
}

impl OwnRank {
    /// The rank engine standing in for `model`'s merge replay, or None when it would not give
    /// the same ids on every text (see the module header).
    pub fn of(model: &Tokenizer) -> Option<OwnRank> {
        let s = &model.spelling;
        if model.kind != ModelKind::Bpe
            || s.scheme != Scheme::Bytes
            || s.normalizes()
            || s.split_digits.is_some()
            || s.byte_fallback
            || model.stream_from.is_some()
            || model.joints.is_some()
            || model.picky.is_some()
            || model.superwords.is_some()
        {
            return None;
        }
        let splitter = scanned(s.pattern.as_ref()?)?;
        let rows = &model.rows;
        let mut tokens = TokenBytes::new(rows.len());
        let mut bytes = [NO_ID; 256];
        for (id, row) in rows.iter().enumerate() {
            match row.kind {
                RowKind::Special => {}
                RowKind::Alphabet | RowKind::Learned => {
                    if let (RowKind::Alphabet, &[b]) = (row.kind, &row.text[..]) {
                        bytes[b as usize] = id as u32;
                    }
                    tokens.set(id as u32, row.text.iter().map(|&b| Some(b)));
                }
                _ => return None,
            }
        }
        // the replay's rule against tokenizers': the last merge making each piece must rank
        // before every merge that takes the piece as a part
        let mut last_made: Vec<Option<usize>> = vec![None; rows.len()];
        for (k, &[_, _, c]) in model.merges.iter().enumerate() {
            last_made[c as usize] = Some(k);
        }
        for (k, &[a, b, _]) in model.merges.iter().enumerate() {
            if last_made[a as usize] >= Some(k) || last_made[b as usize] >= Some(k) {
                return None;
            }
        }
        let rank = rank_engine(&tokens, &bytes, model.merge_map(), false, splitter)?;
        let specials = Encoder::specials(model).to_vec();
        let always = Encoder::allowed(model, &[]).ok()?.ids().to_vec();
        Some(OwnRank { rank, specials, always })
    }

    /// The ids of `text` (no special matched) with the byte span of `text` each stands for.
    pub fn encode_with_spans(&self, text: &str) -> Result<(Vec<u32>, Spans)> {
        let mut ids = Vec::new();
        self.rank.states().with(0, |state| {
            Encoder::encode_into(&self.rank, text, &Allowed::none(), state, &mut ids)
        })?;
        let mut at = 0;
        let spans = ids
            .iter()
            .map(|&id| {
                let start = at;
                at += self.rank.token(id).map_or(0, <[u8]>::len);
                (start, at)
            })
            .collect();
        Ok((ids, spans))
    }
}

/// Our model under the encoder contract, as [`Tokenizer`]'s: the special rows are the
/// specials; each stretch of text between allowed surfaces is cut by the rank engine.
impl Encoder for OwnRank {
    type State = RankState;
    type Cached = u32;

    fn states(&self) -> &Slots<RankState> {
        self.rank.states()
    }

    fn cache(state: &mut RankState) -> &mut WordCache<u32> {
        <RankBpe as Encoder>::cache(state)
    }

    fn specials(&self) -> &[(String, u32)] {
        &self.specials
    }

    /// The rows `ids` names, and the user-defined symbols, which always match.
    fn allowed(&self, ids: &[u32]) -> Result<Allowed> {
        if self.always.is_empty() {
            return Allowed::new(&self.specials, ids);
        }
        let both: Vec<u32> = ids.iter().chain(&self.always).copied().collect();
        Allowed::new(&self.specials, &both)
    }

    fn encode_into(
        &self,
        text: &str,
        allowed: &Allowed,
        state: &mut RankState,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        let none = Allowed::none();
        allowed
            .split(text, out, |part, out| Encoder::encode_into(&self.rank, part, &none, state, out))
    }
}
