//! Segmenters: one unit + a vocabulary -> pieces.
pub mod merge_replay;
