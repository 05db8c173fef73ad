//! The trie over symbol ids that the Unigram learner's lattices are read from (a model's encoder
//! reads a double array instead: [`super::codes`]).
//!
//! A piece is a path of symbol ids from the root; the node it ends at carries the piece (an id
//! the caller chooses: the learner's table index) and a payload (the learner, whose
//! probabilities change every EM round, keeps nothing and looks them up by piece).
//!
//! Layout: the root's children are an array indexed by symbol (every lattice position starts
//! there); node `u`'s other children are `kids[from..from + n]` (kept in the node beside its piece),
//! `(symbol, child)` sorted by symbol, scanned when short and binary-searched when long, so a
//! step is a few compares instead of a hash lookup; in a trie over bytes a node with many
//! children has a dense table of them instead. The learner builds it from sorted paths
//! ([`PieceTrie::from_sorted`]); [`TrieBuilder`], through a hash map of edges, is kept for the
//! tests, as the reference that build is checked against. Nodes keep the order they were made in:
//! numbering them breadth first made the SentencePiece reader's walk
//! slower, since pieces come in score order and insertion order already keeps the frequent
//! paths together.
//!
//! Complexity: [`PieceTrie::pieces_from`] is O(longest piece) steps per start position; the
//! pieces come shortest first, so a lattice built from them is in arc order.

#[cfg(test)]
use crate::hash::{pack, Map};

const NONE: u32 = u32::MAX;
/// Nodes with more children than this get a dense child table (in tries over few symbols).
const WIDE: usize = 8;
/// The most symbols a trie may have for dense child tables.
const WIDE_SYMBOLS: usize = 256;

/// A finished trie: read-only, shared by threads.
pub struct PieceTrie<V> {
    root: Vec<u32>,
    /// per node, side by side so a step reads one place: its piece and payload, and where its
    /// children are (`kids[from..from + span]`, or a dense block)
    nodes: Vec<Node<V>>,
    kids: Vec<(u32, u32)>,
    /// Tries over at most [`WIDE_SYMBOLS`] symbols (bytes): per node, the block of `dense` that
    /// holds its children by symbol when it has more than [`WIDE`] of them (`NONE` otherwise),
    /// so the widest nodes (a SentencePiece `▁` before every word) take one load, not a search.
    dense: Vec<u32>,
}

#[derive(Clone, Copy)]
struct Node<V> {
    /// the piece it completes (`u32::MAX` for none) and its payload
    piece: u32,
    value: V,
    from: u32,
    /// how many children it has, or [`WIDE_BIT`] and its block of `dense` (one field, not two:
    /// a node of a SentencePiece trie is 16 bytes instead of 20, four to a cache line)
    span: u32,
}

/// Marks a [`Node::span`] that names a dense block.
const WIDE_BIT: u32 = 1 << 31;

/// Collects pieces, then [`TrieBuilder::finish`] lays the trie out (tests only: the reference
/// [`PieceTrie::from_sorted`] is checked against).
#[cfg(test)]
pub struct TrieBuilder<V> {
    symbols: usize,
    root: Vec<u32>,
    edges: Map<u64, u32>,
    piece: Vec<(u32, V)>,
}

#[cfg(test)]
impl<V: Copy + Default> TrieBuilder<V> {
    /// A trie over symbols `0..symbols`.
    pub fn new(symbols: usize) -> Self {
        TrieBuilder { symbols, root: vec![NONE; symbols], edges: Map::default(), piece: Vec::new() }
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
        let kids: Vec<(u32, u32)> = all.iter().map(|&(k, c)| (k as u32, c)).collect();
        let parents = all.iter().map(|&(k, _)| (k >> 32) as u32);
        PieceTrie::layout(self.symbols, self.root, self.piece, parents, kids)
    }
}

impl<V: Copy + Default> PieceTrie<V> {
    /// The trie of `items` (symbols, piece, payload), which must come in ascending order of their
    /// symbols (each non-empty, each symbol below `symbols`); a repeated path keeps its first
    /// piece, as [`TrieBuilder::insert`] does. The same trie as inserting them one by one (every
    /// lookup gives the same pieces in the same order; only the node numbers differ), built
    /// without the hash map of edges: a sorted list shares its prefixes with its neighbour, so
    /// one stack of the current path makes every node, and a node's children come in symbol
    /// order. The Unigram learner's seed (a million pieces) is built this way.
    pub fn from_sorted<'a>(
        symbols: usize,
        items: impl IntoIterator<Item = (&'a [u32], u32, V)>,
    ) -> PieceTrie<V> {
        let mut root = vec![NONE; symbols];
        let mut piece: Vec<(u32, V)> = Vec::new();
        // (parent, symbol, child), each parent's in symbol order
        let mut edges: Vec<(u32, u32, u32)> = Vec::new();
        let mut path: Vec<u32> = Vec::new();
        let mut prev: &[u32] = &[];
        for (syms, p, value) in items {
            debug_assert!(
                !syms.is_empty() && prev <= syms,
                "from_sorted needs ascending, non-empty paths"
            );
            let m = prev.len().min(syms.len());
            let l = (0..m).find(|&k| prev[k] != syms[k]).unwrap_or(m);
            path.truncate(l);
            for d in l..syms.len() {
                let c = piece.len() as u32;
                piece.push((NONE, V::default()));
                if d == 0 {
                    root[syms[0] as usize] = c;
                } else {
                    edges.push((path[d - 1], syms[d], c));
                }
                path.push(c);
            }
            let slot = &mut piece[path[syms.len() - 1] as usize];
            if slot.0 == NONE {
                *slot = (p, value);
            }
            prev = syms;
        }
        // group the edges by parent, keeping each parent's symbol order (a counting sort)
        let mut at = vec![0u32; piece.len() + 1];
        for &(u, _, _) in &edges {
            at[u as usize + 1] += 1;
        }
        for i in 1..at.len() {
            at[i] += at[i - 1];
        }
        let mut kids = vec![(0u32, 0u32); edges.len()];
        let mut parents = vec![0u32; edges.len()];
        for &(u, x, c) in &edges {
            let k = &mut at[u as usize];
            kids[*k as usize] = (x, c);
            parents[*k as usize] = u;
            *k += 1;
        }
        drop(edges);
        PieceTrie::layout(symbols, root, piece, parents.into_iter(), kids)
    }

    /// The arrays from the edges sorted by parent, then symbol (`parents` beside `kids`).
    fn layout(
        symbols: usize,
        root: Vec<u32>,
        piece: Vec<(u32, V)>,
        parents: impl Iterator<Item = u32>,
        kids: Vec<(u32, u32)>,
    ) -> PieceTrie<V> {
        let mut first = vec![0u32; piece.len() + 1];
        for u in parents {
            first[u as usize + 1] += 1;
        }
        for i in 1..first.len() {
            first[i] += first[i - 1];
        }
        let mut dense = Vec::new();
        let mut nodes: Vec<Node<V>> = piece
            .iter()
            .enumerate()
            .map(|(u, &(piece, value))| Node {
                piece,
                value,
                from: first[u],
                span: first[u + 1] - first[u],
            })
            .collect();
        if symbols <= WIDE_SYMBOLS {
            for (u, node) in nodes.iter_mut().enumerate() {
                let span = &kids[first[u] as usize..first[u + 1] as usize];
                if span.len() > WIDE {
                    node.span = WIDE_BIT | (dense.len() / WIDE_SYMBOLS) as u32;
                    let at = dense.len();
                    dense.resize(at + WIDE_SYMBOLS, NONE);
                    for &(x, c) in span {
                        dense[at + x as usize] = c;
                    }
                }
            }
        }
        PieceTrie { root, nodes, kids, dense }
    }
}

impl<V: Copy> PieceTrie<V> {
    /// Every piece that starts `run` at `i`, shortest first: `f(end, piece, payload)`. The
    /// symbols are ids, or bytes for a trie over the 256 byte values.
    #[inline]
    pub fn pieces_from<S: Copy + Into<u32>>(
        &self,
        run: &[S],
        i: usize,
        mut f: impl FnMut(usize, u32, V),
    ) {
        let Some(rest) = run.get(i..) else { return };
        let mut rest = rest.iter();
        let Some(&start) = rest.next() else { return };
        let mut u = self.root.get(start.into() as usize).copied().unwrap_or(NONE);
        let mut j = i;
        while u != NONE {
            j += 1;
            let node = &self.nodes[u as usize];
            if node.piece != NONE {
                f(j, node.piece, node.value);
            }
            match rest.next() {
                Some(&x) => u = self.child(node, x.into()),
                None => return,
            }
        }
    }

    #[inline]
    fn child(&self, node: &Node<V>, x: u32) -> u32 {
        if node.span & WIDE_BIT != 0 {
            let block = (node.span & !WIDE_BIT) as usize;
            return self.dense.get(block * WIDE_SYMBOLS + x as usize).copied().unwrap_or(NONE);
        }
        let kids = &self.kids[node.from as usize..(node.from + node.span) as usize];
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
        t.pieces_from(&[0u32, 1, 0], 0, |end, p, v| got.push((end, p, v)));
        assert_eq!(got, vec![(1, 10, -1.0), (2, 11, -2.0)]);
        got.clear();
        t.pieces_from(&[0u32, 1, 0], 1, |end, p, v| got.push((end, p, v)));
        assert_eq!(got, vec![(2, 12, -3.0)]);
        got.clear();
        t.pieces_from(&[0u32, 1, 0], 3, |end, p, v| got.push((end, p, v)));
        assert!(got.is_empty());
    }

    /// Every lookup of a trie built from sorted paths against the one built by insertion, on
    /// all paths over 3 symbols up to length 3 (some left out, so that nodes without a piece
    /// occur), over a narrow alphabet and a wide one (dense child tables past `WIDE` children).
    #[test]
    fn from_sorted_finds_what_insertion_finds() {
        for symbols in [3usize, 40] {
            let mut paths: Vec<Vec<u32>> = Vec::new();
            for a in 0..symbols as u32 {
                paths.push(vec![a]);
                for b in 0..symbols as u32 {
                    paths.push(vec![a, b]);
                    for c in 0..3u32 {
                        paths.push(vec![a, b, c]);
                    }
                }
            }
            // drop every fifth path (its node stays, without a piece), then sort
            let kept: Vec<(Vec<u32>, u32)> = paths
                .into_iter()
                .enumerate()
                .filter(|(k, _)| k % 5 != 2)
                .map(|(k, p)| (p, k as u32))
                .collect();
            let mut sorted = kept.clone();
            sorted.sort();
            let mut b = TrieBuilder::<()>::new(symbols);
            for (p, id) in &kept {
                b.insert(p, *id, ());
            }
            let by_insert = b.finish();
            let by_sort =
                PieceTrie::from_sorted(symbols, sorted.iter().map(|(p, id)| (&p[..], *id, ())));
            let mut n = 0;
            for x in 0..symbols as u32 {
                for y in 0..symbols as u32 {
                    let run = [x, y, 1, 0];
                    for i in 0..run.len() {
                        let (mut u, mut v) = (Vec::new(), Vec::new());
                        by_insert.pieces_from(&run, i, |e, p, ()| u.push((e, p)));
                        by_sort.pieces_from(&run, i, |e, p, ()| v.push((e, p)));
                        assert_eq!(u, v, "run {run:?} from {i}");
                        n += u.len();
                    }
                }
            }
            assert!(n > symbols * symbols * 4, "the runs found pieces ({n})");
        }
    }

    #[test]
    fn a_wide_node_finds_every_child() {
        // over bytes: "x" then each of 40 bytes (more than WIDE children under "x"), and a
        // deeper piece under one of them, looked up through the dense table
        let mut t = TrieBuilder::<()>::new(256);
        t.insert(&[b'x' as u32], 0, ());
        for (k, b) in (b'a'..b'a' + 40).enumerate() {
            t.insert(&[b'x' as u32, b as u32], 1 + k as u32, ());
        }
        t.insert(&[b'x' as u32, b'c' as u32, b'z' as u32], 99, ());
        let t = t.finish();
        let mut got = Vec::new();
        t.pieces_from(b"xcz", 0, |end, p, ()| got.push((end, p)));
        // x, xc (the third byte after a), xcz
        assert_eq!(got, vec![(1, 0), (2, 3), (3, 99)]);
        got.clear();
        t.pieces_from(b"x!", 0, |end, p, ()| got.push((end, p)));
        assert_eq!(got, vec![(1, 0)]);
    }
}
