//! Our own Unigram model's pieces as the encoder reads them: a [`DoubleArray`] over symbol
//! codes, each piece with its exact comparison key ([`super::lattice::fixed`]).
//!
//! A model's symbols are row ids (up to the vocabulary's size), but only the few hundred or
//! thousand rows that spell some piece ever label a step of the walk. Each of those gets a code,
//! in ascending row order, and every other row the one code past them, which labels no child: a
//! walk that meets it stops there, as it stopped at a symbol with no child in the trie. The
//! array's width is so the number of codes plus one, not the vocabulary's size.
//!
//! Why a double array: walking [`super::trie::PieceTrie`] (32-byte nodes, children in a side
//! array, scanned when few and binary-searched when many: the `▁` node of a 32k model has
//! thousands) made the Viterbi a third of a first pass of our 32k Unigram over 60k lines of
//! multilingual, about 380 ns per word met new (`perf`); the SentencePiece reader's double array
//! encoded every word, cached or not, in less than half that.

use super::darray::{DoubleArray, Key};

/// The pieces of a model, for [`super::viterbi::Viterbi`] and the lattice modes.
pub struct CodedTrie {
    /// per symbol: its code, or `unknown`
    code: Vec<u32>,
    /// the code of a symbol that spells no piece: the array's last label, the child of nothing
    unknown: u32,
    array: DoubleArray<i128>,
}

impl CodedTrie {
    /// The trie of `pieces` (symbols, piece, key), their symbols below `symbols` and non-empty.
    /// Two pieces spelled by the same symbols: `Err((first, second))`, their pieces in the order
    /// given.
    pub fn build(symbols: usize, pieces: &[(Vec<u32>, u32, i128)]) -> Result<Self, (u32, u32)> {
        let mut used = vec![false; symbols];
        for (syms, _, _) in pieces {
            for &s in syms {
                used[s as usize] = true;
            }
        }
        let mut code = vec![0u32; symbols];
        let mut next = 0u32;
        for (s, &u) in used.iter().enumerate() {
            if u {
                code[s] = next;
                next += 1;
            }
        }
        let unknown = next;
        for (s, &u) in used.iter().enumerate() {
            if !u {
                code[s] = unknown;
            }
        }
        let coded: Vec<Vec<u32>> = pieces
            .iter()
            .map(|(syms, _, _)| syms.iter().map(|&s| code[s as usize]).collect())
            .collect();
        // the array names a duplicate by its larger id; the pieces' own order decides which is
        // the second here, whatever their ids
        let keys = coded
            .iter()
            .zip(pieces)
            .enumerate()
            .map(|(k, (c, p))| Key { labels: &c[..], id: k as u32, value: p.2, scores: true })
            .collect();
        let array = DoubleArray::build(keys, unknown as usize + 1).map_err(|k| {
            let k = k as usize;
            let first =
                (0..k).find(|&j| coded[j] == coded[k]).expect("a duplicate has an earlier twin");
            (pieces[first].1, pieces[k].1)
        })?;
        // the array's ids are places in `pieces`; give each slot its piece
        let array = array.map_ids(|k| pieces[k as usize].1);
        Ok(CodedTrie { code, unknown, array })
    }

    /// `run`'s symbols as codes, appended to `out` (what [`CodedTrie::pieces_from`] reads).
    #[inline]
    pub fn codes_into(&self, run: &[u32], out: &mut Vec<u32>) {
        out.extend(run.iter().map(|&s| self.code.get(s as usize).copied().unwrap_or(self.unknown)));
    }

    /// Every piece that starts `codes` (from [`CodedTrie::codes_into`]) at `i`, shortest first:
    /// `f(end, piece, key)`.
    #[inline]
    pub fn pieces_from(&self, codes: &[u32], i: usize, f: impl FnMut(usize, u32, i128)) {
        self.array.pieces_from(codes, i, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Symbols 0..6, of which 1, 3 and 4 spell pieces; 5 spells none (its walks stop at once).
    #[test]
    fn pieces_come_shortest_first_and_other_symbols_stop_a_walk() {
        let pieces = vec![
            (vec![3], 10, -1),
            (vec![3, 4], 11, -2),
            (vec![4], 12, -3),
            (vec![3, 4, 1], 13, -4),
            (vec![1], 14, -5),
        ];
        let t = CodedTrie::build(6, &pieces).unwrap();
        let mut codes = Vec::new();
        t.codes_into(&[3, 4, 1, 5, 3, 9], &mut codes);
        // 1, 3, 4 are codes 0, 1, 2; 5 and a symbol past the table are code 3
        assert_eq!(codes, vec![1, 2, 0, 3, 1, 3]);
        let mut got = Vec::new();
        t.pieces_from(&codes, 0, |end, p, key| got.push((end, p, key)));
        assert_eq!(got, vec![(1, 10, -1), (2, 11, -2), (3, 13, -4)]);
        got.clear();
        t.pieces_from(&codes, 1, |end, p, key| got.push((end, p, key)));
        assert_eq!(got, vec![(2, 12, -3)]);
        got.clear();
        for i in [3, 5, 6] {
            t.pieces_from(&codes, i, |end, p, key| got.push((end, p, key)));
        }
        assert!(got.is_empty(), "{got:?}");
        t.pieces_from(&codes, 4, |end, p, key| got.push((end, p, key)));
        assert_eq!(got, vec![(5, 10, -1)], "the unknown symbol after 3 ends the walk");
    }

    #[test]
    fn a_duplicate_names_both_pieces_in_the_order_given() {
        let pieces = vec![(vec![0, 1], 7, -1), (vec![1], 3, -2), (vec![0, 1], 5, -3)];
        assert_eq!(CodedTrie::build(2, &pieces).err(), Some((7, 5)));
    }
}
