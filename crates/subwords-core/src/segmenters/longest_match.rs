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
//!
//! Layout: the trie is built breadth first by sorting the keys on their next byte, a node at a
//! time, so the nodes are numbered breadth first and each node's children are consecutive nodes
//! in byte order (`first`, `label`); a node with many children also has a table by byte (`big`,
//! `dense`), which the start of every word reads. Large groups near the root are sorted by
//! counting; the keys themselves are reordered (not indices into them), so a node's keys are
//! read in a row; a node of one key skips the sort; the node arrays get their room at once; the
//! queue of nodes is a ring of at most a slot a key (`Ring`). `Tokenizer::new` builds the trie
//! on a thread of its own while it checks and indexes the rows (`tokenizer/build.rs`).
//!
//! Measured (a 30k BERT vocabulary unless said; callgrind instructions are load-independent):
//! * a `(node, byte) -> child` hash map filled a byte at a time was 40% of the load; the
//!   breadth-first layout took the core's `from_json` 18 -> 13 ms, and 40k lines of English on
//!   one thread 24.9-27.6 -> 27.6-29.6 MB/s;
//! * counting sort for the large groups: a `vocab.txt` load 13 -> 11.3 ms;
//! * reordering the keys, skipping one-key nodes (41,617 of 60,145) and sizing the arrays at
//!   once: the build of 30,522 pieces alone 5.4 -> 3.55 ms (best of 300);
//! * lost: a depth-at-a-time build counting into place (4.7 ms), one sort of all the keys
//!   before a single pass (4.07 against 3.61 ms), a table by byte for every node, a table for
//!   `##`'s children in `precompute` (3.63 against 3.56 ms);
//! * `precompute` without its queue and scratch buffer: the whole `new` 40.4 -> 37.8 M
//!   instructions;
//! * every page a load touches is faulted in again after a model is freed (720-776 faults a
//!   load), hence the ring of a slot a key and `with_room` reading the pieces once; with the
//!   rows' texts inline (`vocab::Text`) a `vocab.txt` load went 71.2 -> 57.0 M instructions.

use crate::vocab::WORD_START;

const NONE: u32 = u32::MAX;
/// Children past which a node's children are a table by byte (see `LongestMatch::big`).
const DENSE: usize = 12;
/// Groups of keys from this size are sorted by counting, not by comparison (see `LongestMatch::build`).
const COUNTING_SORT: usize = 256;

pub struct LongestMatch {
    /// The trie, its nodes numbered breadth first with each node's children in byte order, so
    /// node `u`'s children are the nodes `first[u]..first[u + 1]` and `label[v]` is the byte that
    /// leads to `v` (a `(node, byte) -> child` hash map, filled a byte at a time, was
    /// 40% of loading a 30k WordPiece vocabulary)
    first: Vec<u32>,
    label: Vec<u8>,
    /// Nodes with more than [`DENSE`] children (the root, the start node, `##` and a few more),
    /// sorted, and each one's child by byte (NONE: no child) at `256 * its index` of `dense`:
    /// those are met at every word's start, where scanning their labels was slower than the map.
    big: Vec<u32>,
    dense: Vec<u32>,
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
    /// bytes of each piece's text without the continuation mark (for "the rest"), by id
    lengths: Vec<u32>,
    end_mark: Option<Vec<u8>>,
}

/// What matching a word gave.
pub enum Match {
    Pieces(Vec<u32>),
    /// The pieces matched before the first position no piece fits, and that position (bytes).
    Failed {
        pieces: Vec<u32>,
        at: usize,
    },
}

/// A queue of at most a fixed number of entries, in a power of two of slots reused in turn
/// (`VecDeque`'s checks for growth and wrapping were 2 M instructions of a 30k vocabulary's
/// build).
struct Ring<T> {
    slots: Vec<T>,
    head: usize,
    tail: usize,
}

impl<T: Copy + Default> Ring<T> {
    fn new(most: usize) -> Self {
        Ring { slots: vec![T::default(); most.next_power_of_two()], head: 0, tail: 0 }
    }

    #[inline]
    fn push_back(&mut self, x: T) {
        let mask = self.slots.len() - 1;
        debug_assert!(
            self.tail - self.head < self.slots.len(),
            "a ring holds its fixed number at most"
        );
        self.slots[self.tail & mask] = x;
        self.tail += 1;
    }

    #[inline]
    fn pop_front(&mut self) -> Option<T> {
        if self.head == self.tail {
            return None;
        }
        let x = self.slots[self.head & (self.slots.len() - 1)];
        self.head += 1;
        Some(x)
    }
}

/// The room [`LongestMatch::with_room`] makes at once: how many pieces, their bytes (each
/// piece's text and one byte more), and the ids (the largest id and one).
#[derive(Clone, Copy, Debug, Default)]
pub struct Room {
    pub pieces: usize,
    pub bytes: usize,
    pub ids: usize,
}

/// A key of the trie: `len` bytes from `at` of the keys' buffer, for piece `id` (NONE: a path
/// only, the marks').
#[derive(Clone, Copy)]
struct Key {
    at: u32,
    len: u32,
    id: u32,
}

impl LongestMatch {
    /// `pieces`: (text as spelled, id). `continuation_mark`: `Some("##")` for the continuation
    /// spelling; `end_mark`: `Some("</w>")` for the end spelling. Two pieces of one key: the
    /// later one's id stands.
    /// The pieces are read three times (sizes, ids, keys), so they come as an iterator to clone
    /// rather than a vector of them (30k of 24 bytes each, pages the load faulted in).
    pub fn new<'a, I>(pieces: I, continuation_mark: Option<&[u8]>, end_mark: Option<&[u8]>) -> Self
    where
        I: Iterator<Item = (&'a [u8], u32)> + Clone,
    {
        let (count, size, top) =
            pieces.clone().fold((0usize, 0usize, 0usize), |(n, b, top), (t, id)| {
                (n + 1, b + t.len() + 1, top.max(id as usize + 1))
            });
        LongestMatch::with_room(
            pieces,
            Room { pieces: count, bytes: size, ids: top },
            continuation_mark,
            end_mark,
        )
    }

    /// [`LongestMatch::new`] read once, from a caller that knows the room its pieces need (at
    /// least: more is grown into): a `vocab.txt` reader knows it from the file's lines and size
    /// before it splits them, and the pass over the pieces that `new` spends to learn it was a
    /// twentieth of the load (splitting a 30k file's lines again).
    pub fn with_room<'a, I>(
        pieces: I,
        room: Room,
        continuation_mark: Option<&[u8]>,
        end_mark: Option<&[u8]>,
    ) -> Self
    where
        I: Iterator<Item = (&'a [u8], u32)>,
    {
        let mut bytes: Vec<u8> = Vec::with_capacity(room.bytes + 8);
        let mut keys: Vec<Key> = Vec::with_capacity(room.pieces + 2);
        let mut lengths = vec![0u32; room.ids];
        for (text, id) in pieces {
            if id as usize >= lengths.len() {
                lengths.resize(id as usize + 1, 0);
            }
            let at = bytes.len();
            match continuation_mark {
                // a word-first piece: under the start node (its key may already open with it)
                Some(m) if !text.starts_with(m) && text.first() != Some(&WORD_START) => {
                    bytes.push(WORD_START)
                }
                _ => {}
            }
            bytes.extend_from_slice(text);
            let key = &bytes[at..];
            let text = match continuation_mark {
                Some(_) => key.strip_prefix(&[WORD_START]).unwrap_or(key),
                None => text,
            };
            let bare = continuation_mark
                .and_then(|m| if key[0] == WORD_START { None } else { text.strip_prefix(m) })
                .unwrap_or(text);
            let bare = end_mark.and_then(|m| bare.strip_suffix(m)).unwrap_or(bare);
            lengths[id as usize] = bare.len() as u32;
            keys.push(Key { at: at as u32, len: (bytes.len() - at) as u32, id });
        }
        if let Some(mark) = continuation_mark {
            for path in [mark, &[WORD_START][..]] {
                keys.push(Key { at: bytes.len() as u32, len: path.len() as u32, id: NONE });
                bytes.extend_from_slice(path);
            }
        }
        let mut t = LongestMatch::build(&bytes, keys);
        t.lengths = lengths;
        t.end_mark = end_mark.map(<[u8]>::to_vec);
        if let Some(mark) = continuation_mark {
            t.sharp = t.walk(mark).expect("the mark's path is a key");
            t.start = t.walk(&[WORD_START]).expect("the start's path is a key");
            t.precompute();
        }
        t
    }

    /// The trie of `keys`, breadth first: each node's keys (a stretch of `keys`, which are
    /// reordered in place) are sorted by their next byte, and each run of one byte becomes a
    /// child.
    fn build(bytes: &[u8], mut keys: Vec<Key>) -> Self {
        // at most a node per byte of the keys, and the root: room for all at once, as growing
        // these a doubling at a time was a tenth of the build (page faults of each new copy)
        let most = keys.iter().map(|k| k.len as usize).sum::<usize>() + 1;
        let mut first: Vec<u32> = Vec::with_capacity(most + 1);
        let mut label: Vec<u8> = Vec::with_capacity(most);
        let mut piece: Vec<u32> = Vec::with_capacity(most);
        label.push(0);
        piece.push(NONE);
        // (depth, stretch of `keys`) of each node made and not yet done, in node order: nodes
        // are numbered as they are made, and done in that order. The stretches waiting are
        // disjoint, so never more of them than keys: a ring of that size, not a slot a node
        // (12 bytes a node, 720 KB of a 30k BERT vocabulary, each page faulted in)
        let mut groups = Ring::new(keys.len() + 1);
        groups.push_back((0, 0, keys.len() as u32));
        let next = |key: &Key, d: u32| -> u16 {
            if key.len == d {
                0
            } else {
                bytes[(key.at + d) as usize] as u16 + 1
            }
        };
        let mut u = 0u32;
        // each key of the group sorted by its next byte + 1 (0: the key ends here), keys in
        // input order within a byte: a small group as one integer a key (that byte, its place
        // in the group) sorted as one; a large one (the root's group holds every key) counted
        // into 257 buckets and its keys put straight into place. Then the group's keys are put
        // in that order.
        let mut packed: Vec<u64> = Vec::new();
        let mut moved: Vec<Key> = Vec::new();
        while let Some((d, lo, hi)) = groups.pop_front() {
            first.push(label.len() as u32);
            if hi - lo == 1 {
                // one key, so no sorting: the node ends it or has one child (most nodes, the
                // keys' tails)
                let key = &keys[lo as usize];
                if key.len == d {
                    if key.id != NONE {
                        piece[u as usize] = key.id;
                    }
                } else {
                    label.push(bytes[(key.at + d) as usize]);
                    piece.push(NONE);
                    groups.push_back((d + 1, lo, hi));
                }
                u += 1;
                continue;
            }
            let group = &mut keys[lo as usize..hi as usize];
            moved.clear();
            let counted = group.len() >= COUNTING_SORT;
            if counted {
                let mut at = [0u32; 258];
                for k in group.iter() {
                    at[next(k, d) as usize + 1] += 1;
                }
                for b in 0..257 {
                    at[b + 1] += at[b];
                }
                moved.resize(group.len(), Key { at: 0, len: 0, id: NONE });
                for k in group.iter() {
                    let b = next(k, d) as usize;
                    moved[at[b] as usize] = *k;
                    at[b] += 1;
                }
            } else {
                packed.clear();
                packed.extend(
                    group.iter().enumerate().map(|(i, k)| (next(k, d) as u64) << 32 | i as u64),
                );
                packed.sort_unstable();
                moved.extend(packed.iter().map(|&p| group[p as u32 as usize]));
            }
            group.copy_from_slice(&moved);
            // a sorted small group's bytes are in `packed`; a counted one's read again
            let byte =
                |i: usize| if counted { next(&moved[i], d) } else { (packed[i] >> 32) as u16 };
            let mut i = 0usize;
            // keys that end here, in input order: the last piece's id stands
            while i < moved.len() && byte(i) == 0 {
                let id = moved[i].id;
                if id != NONE {
                    piece[u as usize] = id;
                }
                i += 1;
            }
            while i < moved.len() {
                let b = byte(i);
                let mut j = i + 1;
                while j < moved.len() && byte(j) == b {
                    j += 1;
                }
                label.push((b - 1) as u8);
                piece.push(NONE);
                groups.push_back((d + 1, lo + i as u32, lo + j as u32));
                i = j;
            }
            u += 1;
        }
        first.push(label.len() as u32);
        let n = label.len();
        let big: Vec<u32> = (0..n as u32)
            .filter(|&u| first[u as usize + 1] - first[u as usize] > DENSE as u32)
            .collect();
        let mut dense = vec![NONE; big.len() * 256];
        for (i, &u) in big.iter().enumerate() {
            for v in first[u as usize]..first[u as usize + 1] {
                dense[i * 256 + label[v as usize] as usize] = v;
            }
        }
        LongestMatch {
            first,
            label,
            big,
            dense,
            piece,
            fail: vec![NONE; n],
            pops_at: vec![(0, 0); n],
            pops: Vec::new(),
            sharp: NONE,
            start: 0,
            lengths: Vec::new(),
            end_mark: None,
        }
    }

    /// The child of `u` by byte `b`.
    #[inline]
    fn child(&self, u: u32, b: u8) -> Option<u32> {
        let (lo, hi) = (self.first[u as usize] as usize, self.first[u as usize + 1] as usize);
        if hi - lo <= DENSE {
            return self.label[lo..hi].iter().position(|&x| x == b).map(|i| (lo + i) as u32);
        }
        let i = self.big.binary_search(&u).expect("a node with many children has a table");
        Some(self.dense[i * 256 + b as usize]).filter(|&v| v != NONE)
    }

    /// The node at the end of `path` from the root.
    fn walk(&self, path: &[u8]) -> Option<u32> {
        path.iter().try_fold(0u32, |u, &b| self.child(u, b))
    }

    /// Failure links and pops, breadth first (Fast WordPiece, algorithm 2); one buffer gathers
    /// the pops (a `Vec` a node was 60% of building a 32k WordPiece model).
    ///
    /// The nodes are numbered breadth first (`build`), so taking them in number order is a
    /// breadth-first walk: a node's failure target and every node on its chain are no deeper
    /// than it, so their links are set before it is reached (the root's and `##`'s are none).
    /// A node's pops are gathered at the end of `pops` itself and dropped again when it has no
    /// failure link. A queue of nodes and a scratch buffer of pops copied into `pops` cost 10.2 M
    /// instructions of a 30k BERT vocabulary's 40.4 M (callgrind).
    fn precompute(&mut self) {
        let n = self.label.len() as u32;
        let range = |at: (u32, u32)| at.0 as usize..(at.0 + at.1) as usize;
        for u in 0..n {
            for v in self.first[u as usize]..self.first[u as usize + 1] {
                if v == self.sharp {
                    continue;
                }
                let b = self.label[v as usize];
                let at = self.pops.len();
                if self.piece[v as usize] != NONE {
                    self.fail[v as usize] = self.sharp;
                    self.pops.push(self.piece[v as usize]);
                    self.pops_at[v as usize] = (at as u32, 1);
                    continue;
                }
                let mut z = self.fail[u as usize];
                self.pops.extend_from_within(range(self.pops_at[u as usize]));
                let mut found = None;
                while z != NONE {
                    found = self.child(z, b);
                    if found.is_some() {
                        break;
                    }
                    self.pops.extend_from_within(range(self.pops_at[z as usize]));
                    z = self.fail[z as usize];
                }
                match found {
                    Some(w) => {
                        self.fail[v as usize] = w;
                        self.pops_at[v as usize] = (at as u32, (self.pops.len() - at) as u32);
                    }
                    None => self.pops.truncate(at),
                }
            }
        }
    }

    fn pop_slice(&self, u: u32) -> &[u32] {
        let (a, n) = self.pops_at[u as usize];
        &self.pops[a as usize..(a + n) as usize]
    }

    fn consumed(&self, pieces: &[u32]) -> usize {
        pieces.iter().map(|&p| self.lengths[p as usize] as usize).sum()
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
                if let Some(v) = self.child(u, b) {
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
                match self.child(u, b) {
                    Some(v) => u = v,
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
                        match self.child(w, m) {
                            Some(v) => w = v,
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
    use crate::hash::Map;

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
        assert_eq!(agrees_with_the_naive_loop(b"abcd", 30), 0);
    }

    /// Many first letters: the start node and `##` get more than `DENSE` children, so their
    /// children are read from the byte tables.
    #[test]
    fn linmaxmatch_agrees_with_the_naive_loop_on_wide_nodes() {
        assert!(agrees_with_the_naive_loop(b"abcdefghijklmnopqrstuvwxyz0123456789", 200) > 0);
    }

    /// Vocabularies of up to 1,000 pieces: the root's group of keys (every key) is sorted by
    /// counting from `COUNTING_SORT` keys on, the smaller groups by comparison.
    #[test]
    fn linmaxmatch_agrees_with_the_naive_loop_on_large_vocabularies() {
        assert!(1000 > COUNTING_SORT as u64 * 2);
        assert!(agrees_with_the_naive_loop(b"abcdefghijklmnopqrstuvwxyz0123456789", 1000) > 0);
    }

    /// Returns how many nodes of all the tries had more than `DENSE` children.
    fn agrees_with_the_naive_loop(letters: &[u8], most: u64) -> usize {
        let mut wide = 0;
        let mut state = 99u64;
        let mut rnd = |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for round in 0..300 {
            let mut vocab: Map<Vec<u8>, u32> = Map::default();
            let n = letters.len() as u64;
            for _ in 0..(4 + rnd(most)) {
                let len = 1 + rnd(4) as usize;
                let mut t: Vec<u8> = if rnd(2) == 0 { b"##".to_vec() } else { vec![] };
                for _ in 0..len {
                    t.push(letters[rnd(n) as usize]);
                }
                let n = vocab.len() as u32;
                vocab.entry(t).or_insert(n);
            }
            let pieces: Vec<(&[u8], u32)> =
                vocab.iter().map(|(t, &id)| (t.as_slice(), id)).collect();
            // every other trie from `with_room` told no room at all, so its buffers grow from
            // nothing, the ids' lengths among them
            let lm = match round % 2 {
                0 => LongestMatch::new(pieces.iter().copied(), Some(b"##"), None),
                _ => LongestMatch::with_room(
                    pieces.iter().copied(),
                    Room::default(),
                    Some(b"##"),
                    None,
                ),
            };
            wide += lm.big.len();
            for _ in 0..40 {
                let word: Vec<u8> = (0..1 + rnd(9)).map(|_| letters[rnd(n) as usize]).collect();
                let want = naive(&vocab, &word);
                let got = match lm.cut(&word) {
                    Match::Pieces(p) => Some(p),
                    Match::Failed { .. } => None,
                };
                assert_eq!(got, want, "word {:?}", String::from_utf8_lossy(&word));
            }
        }
        wide
    }
}
