//! The two parts of a Hugging Face `tokenizer.json` Unigram pipeline that differ from
//! SentencePiece's, reproduced exactly:
//!
//! * [`HfUnigram`]: tokenizers' Unigram model. Viterbi in double precision over one pre-token
//!   (the sums restart at each word), every vocabulary entry a candidate (special tokens
//!   included, no user-defined bonus), an unknown character scored `min_score − 10` where no
//!   one-character entry exists, the first of equal scores kept (so the last piece of a tie is
//!   the longest), a run of unknown characters fused into one piece, and with `byte_fallback`
//!   an unknown piece written as its `<0xNN>` bytes when they all exist.
//! * [`Precompiled`]: tokenizers' `Precompiled` normalizer over SentencePiece's character map.
//!   It works by grapheme cluster: a cluster shorter than 6 bytes that some rule matches at its
//!   start is replaced whole by that rule's output (the *shortest* matching rule, as tokenizers
//!   takes the first prefix match); otherwise each character is replaced by its shortest
//!   matching rule or kept.

use subwords_core::hash::Map;
use unicode_segmentation::UnicodeSegmentation;

use crate::sentencepiece::darray::{DoubleArray, Key};

use crate::sentencepiece::charsmap::Charsmap;
use subwords_core::error::{Error, Result};

const UNK_PENALTY: f64 = 10.0;

pub struct HfUnigram {
    scores: Vec<f64>,
    index: Map<Box<str>, u32>,
    /// every piece by its bytes (the `.model` reader's double array: yada's builder was over a
    /// quarter of loading a 32k Unigram tokenizer.json); scores are read from `scores`,
    /// in double precision
    trie: DoubleArray,
    unk: Option<u32>,
    min_score: f64,
    bytes: Option<Box<[u32; 256]>>,
}

impl HfUnigram {
    pub fn new(vocab: Vec<(String, f64)>, unk: Option<u32>, byte_fallback: bool) -> Result<Self> {
        let bad = |m: String| Error::ModelFile(m);
        if vocab.is_empty() {
            return Err(bad("the Unigram vocabulary is empty".into()));
        }
        if let Some(u) = unk {
            if u as usize >= vocab.len() {
                return Err(bad(format!(
                    "unk_id {u} is outside the vocabulary ({} entries)",
                    vocab.len()
                )));
            }
        }
        let mut index: Map<Box<str>, u32> = Map::default();
        let mut min_score = f64::INFINITY;
        let mut scores = Vec::with_capacity(vocab.len());
        for (id, (piece, score)) in vocab.iter().enumerate() {
            if piece.is_empty() || piece.contains('\0') {
                return Err(bad(format!("vocabulary entry {id} is empty or holds NUL")));
            }
            if !score.is_finite() {
                return Err(bad(format!("vocabulary entry {id} ({piece:?}) has score {score}")));
            }
            // tokenizers keeps the last id of a repeated piece
            index.insert(piece.as_str().into(), id as u32);
            min_score = min_score.min(*score);
            scores.push(*score);
        }
        let keys: Vec<Key<'_>> = index
            .iter()
            .map(|(k, &id)| Key { labels: k.as_bytes(), id, value: 0.0, scores: true })
            .collect();
        // the index holds each piece once, so the build has no two keys alike
        let trie = DoubleArray::build(keys, 256)
            .map_err(|id| bad(format!("cannot index the vocabulary (entry {id})")))?;
        let bytes = if byte_fallback {
            let mut ids = Box::new([u32::MAX; 256]);
            for b in 0..256usize {
                if let Some(&id) = index.get(format!("<0x{b:02X}>").as_str()) {
                    ids[b] = id;
                }
            }
            Some(ids)
        } else {
            None
        };
        Ok(HfUnigram { scores, index, trie, unk, min_score, bytes })
    }

    /// Ids of one pre-token. `Err` only when an unknown character meets a model without `unk_id`
    /// (tokenizers fails the same way). `notes` gets (position in `out`, characters) for each
    /// unknown id with the characters it stands for: tokenizers' token string for it.
    pub fn tokenize_noting(
        &self,
        word: &str,
        out: &mut Vec<u32>,
        notes: Option<&mut Vec<(usize, String)>>,
    ) -> Result<()> {
        self.tokenize_spans(word, out, notes, None)
    }

    /// [`HfUnigram::tokenize_noting`], pushing to `spans` the byte range of each id's piece in
    /// the word (each `<0xNN>` row of a fallen-back piece the whole piece's, as tokenizers gives
    /// them); `spans` holds one entry per id of `out` on entry.
    pub fn tokenize_spans(
        &self,
        word: &str,
        out: &mut Vec<u32>,
        mut notes: Option<&mut Vec<(usize, String)>>,
        mut spans: Option<&mut Vec<(u32, u32)>>,
    ) -> Result<()> {
        let text = word.as_bytes();
        let n = text.len();
        if n == 0 {
            return Ok(());
        }
        #[derive(Clone, Copy)]
        struct Best {
            id: u32,
            score: f64,
            start: usize,
        }
        const NONE: usize = usize::MAX;
        let unk_score = self.min_score - UNK_PENALTY;
        let mut best = vec![Best { id: 0, score: 0.0, start: NONE }; n + 1];
        let mut start = 0;
        while start < n {
            let here = best[start].score;
            let mblen = word[start..].chars().next().map_or(1, char::len_utf8);
            let mut single = false;
            self.trie.pieces_from(text, start, |end, id, _| {
                let target = &mut best[end];
                let cand = self.scores[id as usize] + here;
                if target.start == NONE || cand > target.score {
                    *target = Best { id, score: cand, start };
                }
                single |= end - start == mblen;
            });
            if !single {
                let unk = self.unk.ok_or_else(|| {
                    Error::Input("an unknown character, and the model has no unk_id".into())
                })?;
                let target = &mut best[start + mblen];
                let cand = unk_score + here;
                if target.start == NONE || cand > target.score {
                    *target = Best { id: unk, score: cand, start };
                }
            }
            start += mblen;
        }
        // back from the end; runs of unknown pieces fuse into one
        let mut pieces: Vec<(usize, usize, bool)> = Vec::new();
        let mut end = n;
        while end > 0 {
            let b = best[end];
            let s = if b.start == NONE || b.start >= end { end - 1 } else { b.start };
            let is_unk = Some(b.id) == self.unk;
            match pieces.last_mut() {
                Some(last) if is_unk && last.2 => last.0 = s,
                _ => pieces.push((s, end, is_unk)),
            }
            end = s;
        }
        pieces.reverse();
        for (s, e, _) in pieces {
            let piece = &word[s..e];
            match self.index.get(piece) {
                Some(&id) => out.push(id),
                None => {
                    if let Some(bytes) = &self.bytes {
                        if piece.bytes().all(|b| bytes[b as usize] != u32::MAX) {
                            out.extend(piece.bytes().map(|b| bytes[b as usize]));
                            if let Some(l) = spans.as_deref_mut() {
                                l.resize(out.len(), (s as u32, e as u32));
                            }
                            continue;
                        }
                    }
                    if let Some(n) = notes.as_deref_mut() {
                        n.push((out.len(), piece.to_string()));
                    }
                    out.push(self.unk.ok_or_else(|| {
                        Error::Input("an unknown piece, and the model has no unk_id".into())
                    })?);
                }
            }
            if let Some(l) = spans.as_deref_mut() {
                l.resize(out.len(), (s as u32, e as u32));
            }
        }
        Ok(())
    }
}

/// tokenizers' `Precompiled` normalizer.
pub struct Precompiled {
    map: Charsmap,
}

impl Precompiled {
    pub fn new(blob: &[u8]) -> Result<Self> {
        Ok(Precompiled { map: Charsmap::parse(blob)? })
    }

    /// The `(char, change)` list tokenizers' `Precompiled` writes for `text` (see
    /// `huggingface::offsets`): each replacement's characters change 0, then the last of them
    /// `+1` for each character gained, or the last character written so far counting those lost.
    /// (A replacement by nothing at the very start is counted nowhere, as in tokenizers.)
    pub fn transformations(&self, text: &str) -> Result<Vec<(char, isize)>> {
        let mut dest: Vec<(char, isize)> = Vec::with_capacity(text.len());
        let replace = |dest: &mut Vec<(char, isize)>, old: &str, new: &str| {
            let diff = new.chars().count() as isize - old.chars().count() as isize;
            dest.extend(new.chars().map(|c| (c, 0)));
            if diff > 0 {
                let n = dest.len();
                for d in &mut dest[n - diff as usize..] {
                    d.1 = 1;
                }
            } else if diff < 0 {
                if let Some(last) = dest.last_mut() {
                    last.1 += diff;
                }
            }
        };
        for g in text.graphemes(true) {
            if g.len() < 6 {
                if let Some(rep) = self.map.shortest(g.as_bytes())? {
                    replace(&mut dest, g, rep);
                    continue;
                }
            }
            for (i, c) in g.char_indices() {
                let part = &g[i..i + c.len_utf8()];
                match self.map.shortest(part.as_bytes())? {
                    Some(rep) => replace(&mut dest, part, rep),
                    None => dest.push((c, 0)),
                }
            }
        }
        Ok(dest)
    }

    pub fn normalize(&self, text: &str, out: &mut String) -> Result<()> {
        for g in text.graphemes(true) {
            if g.len() < 6 {
                if let Some(rep) = self.map.shortest(g.as_bytes())? {
                    out.push_str(rep);
                    continue;
                }
            }
            for (i, c) in g.char_indices() {
                let part = &g[i..i + c.len_utf8()];
                match self.map.shortest(part.as_bytes())? {
                    Some(rep) => out.push_str(rep),
                    None => out.push(c),
                }
            }
        }
        Ok(())
    }
}
