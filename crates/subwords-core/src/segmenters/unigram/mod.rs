//! The Unigram segmenters: the trie over symbol ids ([`trie`]) that the learner reads arcs
//! from, the double array ([`darray`]) that a model's encoder reads them from (over its symbol
//! codes, [`codes`]; over bytes in the SentencePiece and `tokenizer.json` readers), the lattice
//! and every segmenter the Unigram page defines on it ([`lattice`]), and Viterbi read straight
//! from the array without storing a lattice ([`viterbi`], what encoding runs).

pub mod codes;
pub mod darray;
pub mod lattice;
pub mod trie;
pub mod viterbi;
