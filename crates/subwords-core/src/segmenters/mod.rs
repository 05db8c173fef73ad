//! Segmenters: a unit's symbols -> pieces. Merge replay (BPE), longest match first (WordPiece)
//! and the Unigram lattice on one trie.
pub mod longest_match;
pub mod merge_replay;
pub mod stochastok;
pub mod unigram;
