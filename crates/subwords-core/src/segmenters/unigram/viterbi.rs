//! Viterbi read straight from the pieces' double array ([`CodedTrie`]): what encoding a unit
//! runs, without storing a lattice.
//!
//! It is [`super::lattice::Lattice::viterbi_with`]'s recurrence (backward: the best spelling of
//! each suffix, ties to fewer pieces, then the longer first piece) with the arcs taken from the
//! trie as they are needed. Arcs from one start come end ascending, as the lattice holds them,
//! so every tie resolves the same way and the two give the same pieces.
//!
//! Scores are compared as exact fixed-point keys ([`super::lattice::fixed`]): the trie
//! holds each piece's key, computed once when the model is built, and a spelling's key is the
//! exact sum of its pieces' keys, so two spellings of the same pieces in another order tie and
//! the tie rules decide, never the order a float sum adds in. Encoding reports no scores, so no
//! double is carried.
//!
//! The buffers live in a [`Viterbi`] the caller owns (one per thread of a batch), so a call
//! allocates nothing once they have grown.

use super::codes::CodedTrie;
use super::lattice::fixed_add;

const NONE: u32 = u32::MAX;

/// Per position: the best suffix's exact key, its piece count, and its first piece (row, end);
/// and the run's symbols as the trie's codes.
#[derive(Default)]
pub struct Viterbi {
    score: Vec<i128>,
    count: Vec<u32>,
    best: Vec<(u32, u32)>,
    codes: Vec<u32>,
}

impl Viterbi {
    /// Runs the recurrence on `run` over a trie of [`super::lattice::fixed`] keys; false if the
    /// run has no spelling.
    pub fn run(&mut self, trie: &CodedTrie, run: &[u32]) -> bool {
        let n = run.len();
        self.codes.clear();
        trie.codes_into(run, &mut self.codes);
        let codes = &self.codes;
        self.score.clear();
        self.score.resize(n + 1, i128::MIN);
        self.count.clear();
        self.count.resize(n + 1, NONE);
        self.best.clear();
        self.best.resize(n + 1, (NONE, 0));
        self.score[n] = 0;
        self.count[n] = 0;
        for i in (0..n).rev() {
            let (mut bs, mut bc, mut bp, mut be) = (i128::MIN, NONE, NONE, 0u32);
            let (score, count) = (&self.score, &self.count);
            trie.pieces_from(codes, i, |end, piece, key| {
                if count[end] == NONE {
                    return;
                }
                let sc = fixed_add(key, score[end]);
                let cnt = count[end] + 1;
                // a later arc is longer, so on equal score and count it wins
                if bc == NONE || sc > bs || (sc == bs && cnt <= bc) {
                    (bs, bc, bp, be) = (sc, cnt, piece, end as u32);
                }
            });
            self.score[i] = bs;
            self.count[i] = bc;
            self.best[i] = (bp, be);
        }
        self.count[0] != NONE
    }

    /// After a successful [`Viterbi::run`]: the pieces, first first, as `f(piece, start, end)`
    /// (symbol positions).
    pub fn walk(&self, n: usize, mut f: impl FnMut(u32, usize, usize)) {
        let mut at = 0usize;
        while at < n {
            let (piece, end) = self.best[at];
            f(piece, at, end as usize);
            at = end as usize;
        }
    }
}
