//! Longest match first: the WordPiece segmenter.
//!
//! At each position take the longest piece of the vocabulary that matches; under `continuation`
//! every piece after the first carries `##`. A word that cannot be finished is one `[UNK]` (or,
//! on request, the pieces matched so far and one `[UNK]` for the rest).
//!
//! `continuation` runs LinMaxMatch (Song et al., "Fast WordPiece Tokenization", 2021): a byte
//! trie of the pieces, `##` pieces hanging under the node `##` and word-first pieces under the
//! node of the byte [`WORD_START`] (so the word `##a` is read from there and never meets the
//! continuation `##a`, the `a` continued; see `vocab::WORD_START`), with a failure link and the
//! pieces to emit on failure ("failure pops") precomputed for every node. Matching reads each
//! byte once and follows failure links whose total length is bounded by the bytes read, so a
//! word of n bytes costs O(n), whatever the vocabulary.
//!
//! `end` (the piece that finishes a word carries `</w>`) walks the trie from each position:
//! O(n · longest piece).

use crate::hash::Map;
use crate::vocab::WORD_START;

const NONE: u32 = u32::MAX;

pub struct LongestMatch {
    /// (node, byte) -> child
    edges: Map<(u32, u8), u32>,
    /// piece id of the node, if the path to it spells a piece
    piece: Vec<u32>,
    fail: Vec<u32>,
    /// failure pops: a range of `pops`
    pops_at: Vec<(u32, u32)>,
    pops: Vec<u32>,
    /// the node reached by the continuation mark (`##`)
    sharp: u32,
    /// the node word-first pieces hang under (continuation only; the root otherwise)
    start: u32,
    /// bytes of each piece's text without the continuation mark (for "the rest")
    lengths: Map<u32, u32>,
    end_mark: Option<Vec<u8>>,
}

/// What matching a word gave.
pub enum Match {
    Pieces(Vec<u32>),
    /// The pieces matched before the first position no piece fits, and that position (bytes).
    Failed { pieces: Vec<u32>, at: usize },
}

impl LongestMatch {
    /// `pieces`: (text as spelled, id). `continuation_mark`: `Some("##")` for the continuation
    /// spelling; `end_mark`: `Some("</w>")` for the end spelling.
    pub fn new(pieces: &[(&[u8], u32)], continuation_mark: Option<&[u8]>, end_mark: Option<&[u8]>) -> Self {
        let mut t = LongestMatch {
            edges: Map::default(),
            piece: vec![NONE],
            fail: vec![NONE],
            pops_at: vec![(0, 0)],
            pops: Vec::new(),
            sharp: NONE,
            start: 0,
            lengths: Map::default(),
            end_mark: end_mark.map(<[u8]>::to_vec),
        };
        let insert = |t: &mut LongestMatch, text: &[u8]| -> u32 {
            let mut u = 0u32;
            for &b in text {
                u = match t.edges.get(&(u, b)) {
                    Some(&v) => v,
                    None => {
                        let v = t.piece.len() as u32;
                        t.piece.push(NONE);
                        t.fail.push(NONE);
                        t.pops_at.push((0, 0));
                        t.edges.insert((u, b), v);
                        v
                    }
                };
            }
            u
        };
        // a node a byte at most (plus the marks' and the start's): sized once, not by doubling
        let bytes: usize = pieces.iter().map(|(t, _)| t.len() + 1).sum::<usize>() + 8;
        t.edges.reserve(bytes);
        t.lengths.reserve(pieces.len());
        let mut keyed: Vec<u8> = Vec::new();
        for &(text, id) in pieces {
            let key: &[u8] = match continuation_mark {
                // a word-first piece: under the start node (its key may already open with it)
                Some(m) if !text.starts_with(m) && text.first() != Some(&WORD_START) => {
                    keyed.clear();
                    keyed.push(WORD_START);
                    keyed.extend_from_slice(text);
                    &keyed
                }
                _ => text,
            };
            let v = insert(&mut t, key);
            t.piece[v as usize] = id;
            let text = match continuation_mark {
                Some(_) => key.strip_prefix(&[WORD_START]).unwrap_or(key),
                None => text,
            };
            let bare = continuation_mark.and_then(|m| if key[0] == WORD_START { None } else { text.strip_prefix(m) }).unwrap_or(text);
            let bare = end_mark.and_then(|m| bare.strip_suffix(m)).unwrap_or(bare);
            t.lengths.insert(id, bare.len() as u32);
        }
        if let Some(mark) = continuation_mark {
            t.sharp = insert(&mut t, mark);
            t.start = insert(&mut t, &[WORD_START]);
            t.precompute();
        }
        t
    }

    /// Failure links and pops, breadth first (Fast WordPiece, algorithm 2). Each node's children
    /// are a sorted stretch of one array, and one buffer gathers the pops: a `Vec` a node made
    /// this 60% of building a 32k WordPiece model (issue 15).
    fn precompute(&mut self) {
        let n = self.piece.len();
        let mut first = vec![0u32; n + 1];
        for &(u, _) in self.edges.keys() {
            first[u as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill: Vec<u32> = first[..n].to_vec();
        let mut children: Vec<(u8, u32)> = vec![(0, 0); self.edges.len()];
        for (&(u, b), &v) in &self.edges {
            children[fill[u as usize] as usize] = (b, v);
            fill[u as usize] += 1;
        }
        for u in 0..n {
            children[first[u] as usize..first[u + 1] as usize].sort_unstable();
        }
        let mut pops: Vec<u32> = Vec::new();
        let mut queue = std::collections::VecDeque::from([0u32, self.sharp]);
        while let Some(u) = queue.pop_front() {
            for &(b, v) in &children[first[u as usize] as usize..first[u as usize + 1] as usize] {
                if v == self.sharp {
                    continue;
                }
                if self.piece[v as usize] != NONE {
                    self.fail[v as usize] = self.sharp;
                    let at = self.pops.len() as u32;
                    self.pops.push(self.piece[v as usize]);
                    self.pops_at[v as usize] = (at, 1);
                } else {
                    let mut z = self.fail[u as usize];
                    pops.clear();
                    pops.extend_from_slice(self.pop_slice(u));
                    while z != NONE && !self.edges.contains_key(&(z, b)) {
                        pops.extend_from_slice(self.pop_slice(z));
                        z = self.fail[z as usize];
                    }
                    if z != NONE {
                        self.fail[v as usize] = self.edges[&(z, b)];
                        let at = self.pops.len() as u32;
                        self.pops.extend_from_slice(&pops);
                        self.pops_at[v as usize] = (at, pops.len() as u32);
                    }
                }
                queue.push_back(v);
            }
        }
    }

    fn pop_slice(&self, u: u32) -> &[u32] {
        let (a, n) = self.pops_at[u as usize];
        &self.pops[a as usize..(a + n) as usize]
    }

    fn consumed(&self, pieces: &[u32]) -> usize {
        pieces.iter().map(|p| self.lengths[p] as usize).sum()
    }

    /// Cuts one word (its bytes).
    pub fn cut(&self, word: &[u8]) -> Match {
        self.cut_from(word, 0)
    }

    /// Cuts `word[start..]`, the rest of a word whose first `start` bytes are already cut (so
    /// under `continuation` the first piece is a `##` piece). `Failed::at` counts from 0.
    pub fn cut_from(&self, word: &[u8], start: usize) -> Match {
        if self.end_mark.is_some() {
            return self.cut_end(word, start);
        }
        let mut out = Vec::new();
        let mut u = if start == 0 { self.start } else { self.sharp };
        let failed = |out: Vec<u32>| {
            let at = start + self.consumed(&out);
            Match::Failed { pieces: out, at }
        };
        for &b in &word[start..] {
            loop {
                if let Some(&v) = self.edges.get(&(u, b)) {
                    u = v;
                    break;
                }
                if self.fail[u as usize] == NONE {
                    return failed(out);
                }
                out.extend_from_slice(self.pop_slice(u));
                u = self.fail[u as usize];
            }
        }
        while u != self.sharp {
            if self.fail[u as usize] == NONE {
                return failed(out);
            }
            out.extend_from_slice(self.pop_slice(u));
            u = self.fail[u as usize];
        }
        Match::Pieces(out)
    }

    /// The end spelling: from each position the longest piece, where a piece reaching the end of
    /// the word must be the marked one (`est</w>`) and one stopping inside it the plain one.
    fn cut_end(&self, word: &[u8], start: usize) -> Match {
        let mark = self.end_mark.as_deref().unwrap();
        let mut out = Vec::new();
        let mut i = start;
        while i < word.len() {
            let mut best: Option<(usize, u32)> = None;
            let mut u = 0u32;
            for (j, &b) in word[i..].iter().enumerate() {
                match self.edges.get(&(u, b)) {
                    Some(&v) => u = v,
                    None => break,
                }
                let end = i + j + 1;
                if end < word.len() {
                    if self.piece[u as usize] != NONE {
                        best = Some((end, self.piece[u as usize]));
                    }
                } else {
                    let mut w = u;
                    let mut ok = true;
                    for &m in mark {
                        match self.edges.get(&(w, m)) {
                            Some(&v) => w = v,
                            None => {
                                ok = false;
                                break;
                            }
                        }
                    }
                    if ok && self.piece[w as usize] != NONE {
                        best = Some((end, self.piece[w as usize]));
                    }
                }
            }
            match best {
                Some((end, id)) => {
                    out.push(id);
                    i = end;
                }
                None => return Match::Failed { pieces: out, at: i },
            }
        }
        Match::Pieces(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive greedy loop the linear algorithm must agree with.
    fn naive(vocab: &Map<Vec<u8>, u32>, word: &[u8]) -> Option<Vec<u32>> {
        let mut out = vec![];
        let mut i = 0;
        while i < word.len() {
            let mut found = None;
            for j in (i + 1..=word.len()).rev() {
                let mut key = if i == 0 { vec![] } else { b"##".to_vec() };
                key.extend_from_slice(&word[i..j]);
                if let Some(&id) = vocab.get(&key) {
                    found = Some((j, id));
                    break;
                }
            }
            let (j, id) = found?;
            out.push(id);
            i = j;
        }
        Some(out)
    }

    #[test]
    fn linmaxmatch_agrees_with_the_naive_loop() {
        let mut state = 99u64;
        let mut rnd = |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for _ in 0..300 {
            let mut vocab: Map<Vec<u8>, u32> = Map::default();
            let letters = b"abcd";
            for _ in 0..(4 + rnd(30)) {
                let len = 1 + rnd(4) as usize;
                let mut t: Vec<u8> = if rnd(2) == 0 { b"##".to_vec() } else { vec![] };
                for _ in 0..len {
                    t.push(letters[rnd(4) as usize]);
                }
                let n = vocab.len() as u32;
                vocab.entry(t).or_insert(n);
            }
            let pieces: Vec<(&[u8], u32)> = vocab.iter().map(|(t, &id)| (t.as_slice(), id)).collect();
            let lm = LongestMatch::new(&pieces, Some(b"##"), None);
            for _ in 0..40 {
                let word: Vec<u8> = (0..1 + rnd(9)).map(|_| letters[rnd(4) as usize]).collect();
                let want = naive(&vocab, &word);
                let got = match lm.cut(&word) {
                    Match::Pieces(p) => Some(p),
                    Match::Failed { .. } => None,
                };
                assert_eq!(got, want, "word {:?}", String::from_utf8_lossy(&word));
            }
        }
    }
}
