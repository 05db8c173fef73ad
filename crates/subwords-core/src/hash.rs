//! The core's hash maps and sets: the one place that names their hasher.
//!
//! Every map and set in the core is a [`Map`] or a [`Set`]. By default they are
//! `rustc_hash`'s `FxHashMap`/`FxHashSet` (the same types, so the same speed): an unseeded
//! hasher, which makes iteration order a fixed function of the keys and of the insertion history.
//! That hides a class of bug: a tie broken, an id given or a row written in iteration order comes
//! out the same on every run and every machine, so no test sees it, yet the order is an accident
//! of the hash function and of how the input was cut (DESIGN §4: no hash-map iteration order may
//! reach ids, ties or output).
//!
//! With the cargo feature `randomized-hash` the same names use std's `RandomState`: SipHash with
//! random keys, drawn afresh for every map (std derives each new `RandomState` from per-thread
//! random keys, bumped on every construction). Iteration order then differs between maps, runs and
//! threads, so a leak of it into the output shows up as a difference between two trainings of the
//! same input. The determinism test (`tests/determinism.rs`) is meant to run with the feature on:
//! `cargo test -p subwords-core --release --features randomized-hash --test determinism`.
//! The feature is for tests only: SipHash is several times slower than Fx on short keys.

/// The hasher builder behind [`Map`] and [`Set`].
#[cfg(not(feature = "randomized-hash"))]
pub type BuildHasher = rustc_hash::FxBuildHasher;
/// The hasher builder behind [`Map`] and [`Set`] (`randomized-hash`: random keys per map).
#[cfg(feature = "randomized-hash")]
pub type BuildHasher = std::collections::hash_map::RandomState;

/// The core's hash map (`FxHashMap` unless built with `randomized-hash`).
pub type Map<K, V> = std::collections::HashMap<K, V, BuildHasher>;
/// The core's hash set (`FxHashSet` unless built with `randomized-hash`).
pub type Set<T> = std::collections::HashSet<T, BuildHasher>;

/// Whether this build's maps are randomly seeded (the `randomized-hash` feature): tests say
/// what they could check.
pub const RANDOMIZED: bool = cfg!(feature = "randomized-hash");

/// The key of a pair of ids in the pair maps (merges, stream merges, trie edges): `a << 32 | b`.
#[inline(always)]
pub fn pack(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "randomized-hash"))]
    #[test]
    fn default_build_uses_the_fx_types() {
        // the same types, not look-alikes: the default build's code is unchanged
        let m: rustc_hash::FxHashMap<u32, u32> = Map::default();
        let s: rustc_hash::FxHashSet<u32> = Set::default();
        assert!(m.is_empty() && s.is_empty());
    }

    #[cfg(feature = "randomized-hash")]
    #[test]
    fn every_map_has_its_own_seed() {
        // Two maps holding the same keys, inserted in the same order, iterate them in different
        // orders (1000 keys: equal orders by chance are out of the question).
        let order = || {
            let m: Map<u32, ()> = (0..1000).map(|k| (k, ())).collect();
            m.into_keys().collect::<Vec<_>>()
        };
        assert_ne!(order(), order());
        let set = || (0..1000u32).collect::<Set<_>>().into_iter().collect::<Vec<_>>();
        assert_ne!(set(), set());
    }
}
