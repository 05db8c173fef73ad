//! The rank engine's encoding called from another engine: a `tokenizer.json` whose byte-level
//! BPE encodes as a rank file does (`huggingface::rank_path`) cuts its text here, with the word
//! cache of that engine's worker.

use subwords_core::word_cache::WordCache;

use super::{RankBpe, RankState};

impl RankBpe {
    /// The ids of `text`, no special token recognised, appended to `out`; `words` is the
    /// caller's word cache (words it already holds are copied from it, new merged words stored
    /// in it). The ids are those of [`RankBpe::encode`] with nothing allowed.
    pub fn encode_ordinary_cached(
        &self,
        text: &str,
        words: &mut WordCache<u32>,
        out: &mut Vec<u32>,
    ) {
        let mut state = RankState { words: std::mem::take(words), ..RankState::default() };
        self.encode_ordinary_into(text, out, &mut state);
        *words = state.words;
    }
}
