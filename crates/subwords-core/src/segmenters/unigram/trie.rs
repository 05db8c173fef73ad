//! The trie over symbol ids that a Unigram table's lattices are read from.
//!
//! A piece is a path of symbol ids from the root; the node it ends at carries the piece (an id
//! the caller chooses: a row for the model, a table index for the learner) and a payload (the
//! model keeps the log-probability there; the learner, whose probabilities change every EM
//! round, keeps nothing and looks them up by piece).
//!
//! Layout: the root's children are an array indexed by symbol (every lattice position starts
//! there); node `u`'s other children are `kids[first[u]..first[u + 1]]`, `(symbol, child)`
//! sorted by symbol, scanned when short and binary-searched when long, so a step is a few
//! compares instead of a hash lookup. Building goes through a hash map of edges
//! ([`TrieBuilder`]), dropped once the arrays are made.
//!
//! Complexity: [`PieceTrie::pieces_from`] is O(longest piece) steps per start position; the
//! pieces come shortest first, so a lattice built from them is in arc order.

use crate::hash::{pack, Map};

const NONE: u32 = u32::MAX;

/// A finished trie: read-only, shared by threads.
pub struct PieceTrie<V> {
    root: Vec<u32>,
    first: Vec<u32>,
    kids: Vec<(u32, u32)>,
    /// per node: the piece it completes (`u32::MAX` for none) and its payload
    piece: Vec<(u32, V)>,
}

/// Collects pieces, then [`TrieBuilder::finish`] lays the trie out.
pub struct TrieBuilder<V> {
    root: Vec<u32>,
    edges: Map<u64, u32>,
    piece: Vec<(u32, V)>,
}

impl<V: Copy + Default> TrieBuilder<V> {
    /// A trie over symbols `0..symbols`.
    pub fn new(symbols: usize) -> Self {
        TrieBuilder { root: vec![NONE; symbols], edges: Map::default(), piece: Vec::new() }
    }

    fn node(&mut self) -> u32 {
        self.piece.push((NONE, V::default()));
        self.piece.len() as u32 - 1
    }

    /// Adds a piece (its symbols non-empty, each below `symbols`). If the path already holds a
    /// piece, nothing changes and that piece is returned.
    pub fn insert(&mut self, syms: &[u32], piece: u32, value: V) -> Option<u32> {
        let mut u = self.root[syms[0] as usize];
        if u == NONE {
            u = self.node();
            self.root[syms[0] as usize] = u;
        }
        for &x in &syms[1..] {
            u = match self.edges.get(&pack(u, x)) {
                Some(&c) => c,
                None => {
                    let c = self.node();
                    self.edges.insert(pack(u, x), c);
                    c
                }
            };
        }
        let slot = &mut self.piece[u as usize];
        if slot.0 != NONE {
            return Some(slot.0);
        }
        *slot = (piece, value);
        None
    }

    pub fn finish(self) -> PieceTrie<V> {
        let mut all: Vec<(u64, u32)> = self.edges.into_iter().collect();
        // by parent, then symbol: `pack` puts the parent in the high half
        all.sort_unstable();
        let mut first = vec![0u32; self.piece.len() + 1];
        for &(k, _) in &all {
            first[(k >> 32) as usize + 1] += 1;
        }
        for i in 1..first.len() {
            first[i] += first[i - 1];
        }
        let kids = all.into_iter().map(|(k, c)| (k as u32, c)).collect();
        PieceTrie { root: self.root, first, kids, piece: self.piece }
    }
}

impl<V: Copy> PieceTrie<V> {
    /// Every piece that starts `run` at `i`, shortest first: `f(end, piece, payload)`. The
    /// symbols are ids, or bytes for a trie over the 256 byte values.
    #[inline]
    pub fn pieces_from<S: Copy + Into<u32>>(&self, run: &[S], i: usize, mut f: impl FnMut(usize, u32, V)) {
        let Some(rest) = run.get(i..) else { return };
        let mut rest = rest.iter();
        let Some(&start) = rest.next() else { return };
        let mut u = self.root.get(start.into() as usize).copied().unwrap_or(NONE);
        let mut j = i;
        while u != NONE {
            j += 1;
            let (piece, v) = self.piece[u as usize];
            if piece != NONE {
                f(j, piece, v);
            }
            match rest.next() {
                Some(&x) => u = self.child(u, x.into()),
                None => return,
            }
        }
    }

    #[inline]
    fn child(&self, u: u32, x: u32) -> u32 {
        let kids = &self.kids[self.first[u as usize] as usize..self.first[u as usize + 1] as usize];
        let found = if kids.len() <= 8 {
            kids.iter().find(|k| k.0 == x).map(|k| k.1)
        } else {
            kids.binary_search_by_key(&x, |k| k.0).ok().map(|i| kids[i].1)
        };
        found.unwrap_or(NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_come_shortest_first_and_duplicates_are_reported() {
        // symbols a=0, b=1; pieces a, ab, b, and a second ab
        let mut t = TrieBuilder::<f64>::new(2);
        assert_eq!(t.insert(&[0], 10, -1.0), None);
        assert_eq!(t.insert(&[0, 1], 11, -2.0), None);
        assert_eq!(t.insert(&[1], 12, -3.0), None);
        assert_eq!(t.insert(&[0, 1], 13, -4.0), Some(11));
        let t = t.finish();
        let mut got = Vec::new();
        t.pieces_from(&[0, 1, 0], 0, |end, p, v| got.push((end, p, v)));
        assert_eq!(got, vec![(1, 10, -1.0), (2, 11, -2.0)]);
        got.clear();
        t.pieces_from(&[0, 1, 0], 1, |end, p, v| got.push((end, p, v)));
        assert_eq!(got, vec![(2, 12, -3.0)]);
        got.clear();
        t.pieces_from(&[0, 1, 0], 3, |end, p, v| got.push((end, p, v)));
        assert!(got.is_empty());
    }
}
