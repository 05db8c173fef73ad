//! Segmenters: one unit + a vocabulary -> pieces.
pub mod lattice;
pub mod longest_match;
pub mod merge_replay;
