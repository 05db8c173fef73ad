//! Segmenters: one unit + a vocabulary -> pieces.
pub mod longest_match;
pub mod merge_replay;
