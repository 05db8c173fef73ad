//! The Unigram segmenters: one trie over symbol ids ([`trie`]) that both the learner and the
//! model read arcs from, the lattice and every segmenter the Unigram page defines on it
//! ([`lattice`]), and Viterbi read straight from the trie without storing a lattice
//! ([`viterbi`], what encoding runs).

pub mod codes;
pub mod darray;
pub mod lattice;
pub mod trie;
pub mod viterbi;
