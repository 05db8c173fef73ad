//! Continuing BPE from an existing vocabulary (`subwords.extend`).
//!
//! The caller hands the existing rows' texts (by id), the existing merges as `[left, right,
//! result]` ids in rank order, and the new corpus's units already spelled in the existing
//! alphabet (ids; [`NO_SYMBOL`] for a symbol with no row, which no pair crosses). Each unit is cut
//! by replaying the existing merges ([`merge_replay::replay`], exactly as encoding cuts it), and
//! the one merge engine ([`merge::learn`]) runs from those pieces. The existing rows keep their
//! ids (the engine's symbol table starts with them, so a merge whose result is an existing text
//! reuses that row); new rows get the ids after the last one, and the new merges follow the
//! pinned BPE tie rule. Nothing here knows a file format.

use crate::error::{Error, Result};
use crate::hash::pack;
use crate::learners::merge::{self, Flat, MergeParams, Stop, Symbols, NO_SYMBOL};
use crate::segmenters::merge_replay::{self, MergeMap};

/// What an extension learned.
pub struct Extension {
    /// `[left, right, result]` ids in rank order, after the existing merges.
    pub merges: Vec<[u32; 3]>,
    /// The texts of the new rows, in id order (the first has id `texts.len()`).
    pub new_texts: Vec<Vec<u8>>,
    pub stop: Stop,
    /// Σ count × pieces of the new corpus under the existing merges, and after the new ones.
    pub pieces_before: u64,
    pub pieces_after: u64,
}

/// Learns up to `new_rows` new rows on `units` (see the module's text). `strip_right` is how two
/// pieces are written together (the continuation mark, or empty). An empty text is an id
/// with no row (a hole in a foreign file's ids): it keeps its place and no merge makes it.
pub fn extend(
    texts: &[Vec<u8>],
    merges: &[[u32; 3]],
    units: Vec<(Vec<u32>, u64)>,
    new_rows: u64,
    min_count: u64,
    strip_right: &[u8],
) -> Result<Extension> {
    extend_with(texts, merges, units, new_rows, min_count, strip_right, None)
}

/// [`extend`] with a rule a pair must pass (a SuperBPE model's limit on the words of a piece).
pub fn extend_with(
    texts: &[Vec<u8>],
    merges: &[[u32; 3]],
    units: Vec<(Vec<u32>, u64)>,
    new_rows: u64,
    min_count: u64,
    strip_right: &[u8],
    allow: Option<merge::PairRule>,
) -> Result<Extension> {
    let n = texts.len() as u32;
    if n == 0 || n == NO_SYMBOL {
        return Err(Error::Input(format!(
            "extend needs an existing vocabulary of 1 to {} rows, got {n}",
            NO_SYMBOL - 1
        )));
    }
    let mut symbols = Symbols::new(0, strip_right);
    for t in texts {
        if t.is_empty() {
            // an id with no row of its own (a hole, or an added token outside the model): it
            // takes its place but no merge can make it
            symbols.push(Vec::new(), 1);
            symbols.index.remove(&[][..]);
            continue;
        }
        if symbols.index.contains_key(t.as_slice()) {
            return Err(Error::ModelFile(format!(
                "two rows are written {:?}: a vocabulary to extend must have one row per text",
                String::from_utf8_lossy(t)
            )));
        }
        symbols.push(t.clone(), 1);
    }
    let mut map = MergeMap::default();
    for (rank, &[a, b, c]) in merges.iter().enumerate() {
        if a >= n || b >= n || c >= n {
            return Err(Error::ModelFile(format!("merge {rank} names an id outside the {n} rows")));
        }
        map.entry(pack(a, b)).or_insert((rank as u32, c));
    }
    let mut flat = Flat::default();
    for (mut syms, count) in units {
        if let Some(&bad) = syms.iter().find(|&&s| s >= n && s != NO_SYMBOL) {
            return Err(Error::Input(format!("a unit names symbol {bad}, outside the {n} rows")));
        }
        if count == 0 || syms.is_empty() {
            continue;
        }
        merge_replay::replay(&mut syms, None, &map, None);
        flat.push(&syms, count);
    }
    if flat.units() == 0 {
        return Err(Error::Input("the new corpus holds no units: give it some text".into()));
    }
    let pieces_before = flat.pieces();
    let params = MergeParams { allow, ..MergeParams::bpe(new_rows, min_count.max(1), None) };
    let learned = merge::learn(flat, &mut symbols, &params, None);
    let new_texts = (n..symbols.next_id()).map(|id| symbols.text(id).to_vec()).collect();
    Ok(Extension {
        merges: learned.merges,
        new_texts,
        stop: learned.stop,
        pieces_before,
        pieces_after: learned.pieces_after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<u8> {
        s.as_bytes().to_vec()
    }

    #[test]
    fn keeps_the_rows_and_learns_after_them() {
        // rows a=0 b=1 c=2 ab=3 (merge a+b); corpus "abc" x3, "abab" x1.
        // After replay: [ab c] x3, [ab ab] x1. Pairs: (ab,c)=3, (ab,ab)=1 -> merge ab+c -> abc = id 4.
        let texts = vec![t("a"), t("b"), t("c"), t("ab")];
        let units = vec![(vec![0, 1, 2], 3), (vec![0, 1, 0, 1], 1)];
        let e = extend(&texts, &[[0, 1, 3]], units, 1, 2, b"").unwrap();
        assert_eq!(e.merges, vec![[3, 2, 4]]);
        assert_eq!(e.new_texts, vec![t("abc")]);
        assert_eq!(e.pieces_before, 3 * 2 + 2);
        assert_eq!(e.pieces_after, 3 + 2);
    }

    #[test]
    fn unknown_symbols_are_barriers_and_empty_corpora_refused() {
        let texts = vec![t("a"), t("b")];
        // (a, ?) and (?, b) are no pairs; (a, b) occurs twice in "ab" x2
        let e = extend(&texts, &[], vec![(vec![0, NO_SYMBOL, 1], 5), (vec![0, 1], 2)], 5, 2, b"")
            .unwrap();
        assert_eq!(e.merges, vec![[0, 1, 2]]);
        assert!(extend(&texts, &[], vec![], 5, 2, b"").is_err());
        assert!(extend(&texts, &[], vec![(vec![7], 1)], 5, 2, b"").is_err());
    }

    #[test]
    fn holes_keep_their_ids_and_duplicates_are_refused() {
        // id 1 is a hole; "ab" x2 learns a+b -> id 3 (after the hole and b)
        let texts = vec![t("a"), vec![], t("b")];
        let e = extend(&texts, &[], vec![(vec![0, 2], 2)], 5, 2, b"").unwrap();
        assert_eq!((e.merges, e.new_texts), (vec![[0, 2, 3]], vec![t("ab")]));
        assert!(extend(&[t("a"), t("a")], &[], vec![(vec![0, 1], 2)], 5, 2, b"").is_err());
    }
}
