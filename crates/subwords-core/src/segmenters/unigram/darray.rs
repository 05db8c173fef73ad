//! Pieces as a double array over labels (bytes, or a model's symbol codes), built once at load,
//! walked by a Viterbi at every start position: the SentencePiece and `tokenizer.json` Unigram
//! readers over bytes (`subwords-compat`), and our own Unigram model over its symbols
//! ([`super::codes::CodedTrie`]).
//!
//! Layout: slot `s`'s child by label `c` is slot `base(s) + c`, and it is `s`'s child when that
//! slot's `check` is `s`. A slot is 8 bytes (`base` with a flag bit, `check`), and the `base` a
//! walk needs for its next step sits beside the `check` it has just read, so a step is one load
//! from one place. The piece a slot completes (id and payload) is in a parallel array, read only
//! when the flag says the slot scores in the Viterbi (NORMAL and USER_DEFINED pieces; an UNUSED
//! piece is there for `get` but unflagged, so the walk skips it without a look). The root
//! is slot 0; a free slot's `check` is `u32::MAX` (the root's `u32::MAX - 1`), which no slot index
//! reaches, and the array is padded by the label width (256 for bytes) in free slots so
//! `base + c` is always in range.
//!
//! Building: keys sorted, depth first with an explicit stack; each node's children take the
//! first base at which all their slots are free, found by walking a list of the free slots (a
//! node with one child takes the first free slot). For a 32k vocabulary this takes a few
//! milliseconds, like the hashed trie it replaced.
//!
//! Why: [`super::trie::PieceTrie`] (16- or 32-byte nodes, children in a side array, scanned or
//! binary-searched) costs two or three dependent loads per symbol, and its walk was most of the
//! SentencePiece reader's English batch time; a darts-like array costs one. On the trie our own
//! model's Viterbi was a third of a first pass over 60k lines of multilingual.

const FREE: u32 = u32::MAX;
/// The root's `check`: used, and nobody's child.
const ROOT: u32 = u32::MAX - 1;
/// Set in `base` when the slot completes a piece the Viterbi scores.
const SCORES: u32 = 1 << 31;

#[derive(Clone, Copy)]
struct Unit {
    base: u32,
    check: u32,
}

/// A label of a key: a byte, or a symbol code (below the array's width).
pub trait Label: Copy + Ord + Into<u32> {
    /// The first labels of a key as a number that sorts as the keys do where it differs (a
    /// shorter key before its extensions): most comparisons of a sort end there.
    fn head(labels: &[Self]) -> u64;
}

impl Label for u8 {
    /// The first 8 bytes, big-endian, zero-padded: no piece over bytes holds a NUL, so the
    /// padding of a short piece sorts it before its extensions, as bytes do.
    fn head(k: &[u8]) -> u64 {
        let mut b = [0u8; 8];
        let n = k.len().min(8);
        b[..n].copy_from_slice(&k[..n]);
        u64::from_be_bytes(b)
    }
}

impl Label for u32 {
    /// The first two labels, each plus one (so an absent one, 0, sorts first).
    fn head(k: &[u32]) -> u64 {
        let at = |i: usize| k.get(i).map_or(0, |&c| c as u64 + 1);
        (at(0) << 32) | at(1)
    }
}

/// Pieces over labels below `width`, each with an id and a payload `V` (a score).
pub struct DoubleArray<V = f32> {
    units: Vec<Unit>,
    /// per slot: (piece id, payload), `u32::MAX` as id for no piece
    vals: Vec<(u32, V)>,
}

/// One piece for [`DoubleArray::build`]: its labels (non-empty; bytes hold no NUL), id, the
/// payload the Viterbi reads (a score), and whether the Viterbi uses it at all.
pub struct Key<'a, L = u8, V = f32> {
    pub labels: &'a [L],
    pub id: u32,
    pub value: V,
    pub scores: bool,
}

impl<V: Copy + Default> DoubleArray<V> {
    /// The array over `keys` (sorted here), whose labels are below `width` (256 for bytes).
    /// Two keys with the same labels: `Err` with the larger id of the two (the caller names
    /// it).
    pub fn build<L: Label>(mut keys: Vec<Key<'_, L, V>>, width: usize) -> Result<Self, u32> {
        let mut keys: Vec<(u64, Key<'_, L, V>)> =
            keys.drain(..).map(|k| (L::head(k.labels), k)).collect();
        keys.sort_unstable_by(|(ha, a), (hb, b)| {
            ha.cmp(hb).then_with(|| a.labels.cmp(b.labels)).then(a.id.cmp(&b.id))
        });
        let keys: Vec<Key<'_, L, V>> = keys.into_iter().map(|(_, k)| k).collect();
        if let Some(w) = keys.windows(2).find(|w| w[0].labels == w[1].labels) {
            return Err(w[1].id);
        }
        debug_assert!(keys.iter().all(|k| k.labels.iter().all(|&c| (c.into() as usize) < width)));
        let mut b = Builder { width: width as u32, ..Builder::default() };
        b.grow(width + 256);
        b.take(0, ROOT);
        // (slot, keys lo..hi, depth): every key in lo..hi has the slot's path as its first
        // `depth` labels
        let mut stack: Vec<(u32, usize, usize, usize)> = vec![(0, 0, keys.len(), 0)];
        let mut labels: Vec<(u32, usize, usize)> = Vec::new();
        while let Some((s, mut lo, hi, depth)) = stack.pop() {
            if lo < hi && keys[lo].labels.len() == depth {
                let k = &keys[lo];
                b.vals[s as usize] = (k.id, k.value);
                if k.scores {
                    b.units[s as usize].base |= SCORES;
                }
                lo += 1;
            }
            if lo == hi {
                continue;
            }
            labels.clear();
            let mut i = lo;
            while i < hi {
                let c = keys[i].labels[depth];
                let mut j = i + 1;
                while j < hi && keys[j].labels[depth] == c {
                    j += 1;
                }
                labels.push((c.into(), i, j));
                i = j;
            }
            let base = b.find_base(&labels);
            let flag = b.units[s as usize].base & SCORES;
            b.units[s as usize].base = base | flag;
            for &(c, _, _) in &labels {
                b.take(base + c, s);
            }
            for &(c, i, j) in labels.iter().rev() {
                stack.push((base + c, i, j, depth + 1));
            }
        }
        // trailing free slots beyond the last base + width - 1 are not needed; keep exactly
        // that padding
        let last = b.units.iter().rposition(|u| u.check != FREE).unwrap_or(0);
        let top = b.units.iter().map(|u| (u.base & !SCORES) as usize).max().unwrap_or(0);
        let len = (last + 1).max(top + width);
        b.units.truncate(len);
        b.vals.truncate(len);
        b.units.shrink_to_fit();
        b.vals.shrink_to_fit();
        Ok(DoubleArray { units: b.units, vals: b.vals })
    }

    /// Every scoring piece that starts `text` at `start`, shortest first: `f(end, id, payload)`.
    /// Every label of `text` must be below the width the array was built with.
    #[inline]
    pub fn pieces_from<L: Label>(
        &self,
        text: &[L],
        start: usize,
        mut f: impl FnMut(usize, u32, V),
    ) {
        let units = &self.units[..];
        let mut s = 0usize;
        let mut base = units[0].base;
        for (k, &c) in text[start..].iter().enumerate() {
            let t = (base & !SCORES) as usize + c.into() as usize;
            let u = units[t];
            if u.check as usize != s {
                return;
            }
            s = t;
            base = u.base;
            if base & SCORES != 0 {
                let (id, value) = self.vals[t];
                f(start + k + 1, id, value);
            }
        }
    }

    /// The same array with each piece's id `k` replaced by `f(k)`.
    pub fn map_ids(mut self, f: impl Fn(u32) -> u32) -> Self {
        for v in &mut self.vals {
            if v.0 != FREE {
                v.0 = f(v.0);
            }
        }
        self
    }

    /// The id of the piece spelled exactly `labels` (scoring or not).
    pub fn get<L: Label>(&self, labels: &[L]) -> Option<u32> {
        let mut s = 0usize;
        for &c in labels {
            let t = (self.units[s].base & !SCORES) as usize + c.into() as usize;
            if self.units[t].check as usize != s {
                return None;
            }
            s = t;
        }
        let id = self.vals[s].0;
        (s != 0 && id != FREE).then_some(id)
    }
}

#[derive(Default)]
struct Builder<V> {
    /// labels are below this
    width: u32,
    units: Vec<Unit>,
    vals: Vec<(u32, V)>,
    /// the free slots as a doubly linked list (`FREE` ends it), over every slot made so far
    next: Vec<u32>,
    prev: Vec<u32>,
    head: u32,
    tail: u32,
    /// per slot, how often it was passed over as the first child's slot; after [`PATIENCE`] it
    /// leaves the list (it stays free: a later node's other children may still land on it)
    passed: Vec<u8>,
}

/// How often a free slot is passed over before the search stops trying it (darts-clone gives up
/// on a block in a similar way): the search then no longer walks the holes a dense region
/// leaves behind.
const PATIENCE: u8 = 16;
/// `prev` of a slot that is not in the free list.
const UNLISTED: u32 = u32::MAX - 1;

impl<V: Copy + Default> Builder<V> {
    /// Adds free slots until there are `len`.
    fn grow(&mut self, len: usize) {
        let from = self.units.len();
        if len <= from {
            return;
        }
        if self.units.is_empty() {
            self.head = FREE;
            self.tail = FREE;
        }
        self.units.resize(len, Unit { base: 0, check: FREE });
        self.vals.resize(len, (FREE, V::default()));
        self.next.resize(len, FREE);
        self.prev.resize(len, FREE);
        self.passed.resize(len, 0);
        for i in from..len {
            let i32 = i as u32;
            self.prev[i] = self.tail;
            if self.tail == FREE {
                self.head = i32;
            } else {
                self.next[self.tail as usize] = i32;
            }
            self.tail = i32;
        }
    }

    /// Marks slot `t` used, as a child of `parent`.
    fn take(&mut self, t: u32, parent: u32) {
        self.units[t as usize].check = parent;
        self.unlist(t);
    }

    fn unlist(&mut self, t: u32) {
        let i = t as usize;
        let (p, n) = (self.prev[i], self.next[i]);
        if p == UNLISTED {
            return;
        }
        self.prev[i] = UNLISTED;
        if p == FREE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == FREE {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    /// The first base at which every label's slot is free (labels ascending), keeping the array
    /// longer than any base by the width and 256 slots more.
    fn find_base(&mut self, labels: &[(u32, usize, usize)]) -> u32 {
        let first = labels[0].0;
        let pad = (self.width + 256) as usize;
        let mut at = self.head;
        loop {
            if at == FREE {
                // no free slot fits: start past the end
                let base = self.units.len() as u32;
                self.grow(base as usize + pad);
                return base;
            }
            if at >= first {
                let base = at - first;
                self.grow(base as usize + pad);
                if labels[1..]
                    .iter()
                    .all(|&(c, _, _)| self.units[(base + c) as usize].check == FREE)
                {
                    return base;
                }
            }
            let next = self.next[at as usize];
            let passed = &mut self.passed[at as usize];
            *passed += 1;
            if *passed >= PATIENCE {
                self.unlist(at);
            }
            at = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(bytes: &[u8], id: u32, scores: bool) -> Key<'_> {
        Key { labels: bytes, id, value: -(id as f32), scores }
    }

    #[test]
    fn walks_find_every_scoring_prefix_shortest_first() {
        // pieces a, ab, abc (unused: found by get, skipped by the walk), b, and a wide node
        // under x (40 children), hand-listed
        let mut keys = vec![
            key(b"a", 1, true),
            key(b"ab", 2, true),
            key(b"abc", 3, false),
            key(b"b", 4, true),
        ];
        let wide: Vec<[u8; 2]> = (0..40u8).map(|k| [b'x', b'A' + k]).collect();
        for (k, w) in wide.iter().enumerate() {
            keys.push(key(w, 10 + k as u32, true));
        }
        let da = DoubleArray::build(keys, 256).unwrap();
        let mut got = Vec::new();
        da.pieces_from(b"abcd", 0, |end, id, score| got.push((end, id, score)));
        assert_eq!(got, vec![(1, 1, -1.0), (2, 2, -2.0)]);
        got.clear();
        da.pieces_from(b"zab", 1, |end, id, score| got.push((end, id, score)));
        assert_eq!(got, vec![(2, 1, -1.0), (3, 2, -2.0)]);
        got.clear();
        // x itself is no piece; xC is the third child
        da.pieces_from(b"xC", 0, |end, id, _| got.push((end, id, 0.0)));
        assert_eq!(got, vec![(2, 12, 0.0)]);
        got.clear();
        // a NUL, a byte with no piece, the end of the text: nothing
        for text in [&b"\x00a"[..], b"q", b""] {
            da.pieces_from(text, 0, |end, id, _| got.push((end, id, 0.0)));
        }
        assert!(got.is_empty());
        assert_eq!(da.get(b"abc"), Some(3));
        assert_eq!(da.get(b"xN"), Some(23));
        assert_eq!(da.get(b"x"), None);
        assert_eq!(da.get(b"abcd"), None);
        assert_eq!(da.get(b""), None);
    }

    #[test]
    fn a_duplicate_names_the_later_id() {
        let keys = vec![key(b"ab", 5, true), key(b"a", 1, true), key(b"ab", 7, true)];
        assert_eq!(DoubleArray::build(keys, 256).err(), Some(7));
    }

    #[test]
    fn every_byte_value_is_a_child_of_the_root() {
        // 255 one-byte pieces (1..=255) and 255 two-byte pieces under 0xFF: every slot near
        // the end of the array
        let ones: Vec<[u8; 1]> = (1..=255u8).map(|b| [b]).collect();
        let twos: Vec<[u8; 2]> = (1..=255u8).map(|b| [0xFF, b]).collect();
        let mut keys: Vec<Key> =
            ones.iter().enumerate().map(|(i, k)| key(k, i as u32, true)).collect();
        keys.extend(twos.iter().enumerate().map(|(i, k)| key(k, 1000 + i as u32, true)));
        let da = DoubleArray::build(keys, 256).unwrap();
        for b in 1..=255u8 {
            assert_eq!(da.get(&[b]), Some(b as u32 - 1));
            assert_eq!(da.get(&[0xFF, b]), Some(1000 + b as u32 - 1));
            let mut n = 0;
            da.pieces_from(&[0xFF, b, 0xFF], 0, |_, _, _| n += 1);
            assert_eq!(n, 2);
        }
    }
}
