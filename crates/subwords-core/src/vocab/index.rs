//! A model's piece index: row text -> row id, holding only the ids.
//!
//! This table keeps the ids and hashes the rows' texts where they are; a lookup is given the
//! rows. A `Map<Box<[u8]>, u32>` copies every piece's text beside the rows that hold it: an
//! allocation, a copy and a free per row, with the map's inserts about a fifth of loading a 30k
//! BERT `vocab.txt` (`perf`).

use std::hash::BuildHasher as _;

use hashbrown::hash_table::{Entry, HashTable};

use crate::hash::BuildHasher;

use super::Row;

#[derive(Clone, Default)]
pub struct RowIndex {
    table: HashTable<u32>,
    hasher: BuildHasher,
}

impl RowIndex {
    pub fn with_capacity(n: usize) -> Self {
        RowIndex { table: HashTable::with_capacity(n), hasher: BuildHasher::default() }
    }

    fn hash(&self, text: &[u8]) -> u64 {
        self.hasher.hash_one(text)
    }

    /// Indexes row `id` of `rows` under its text; the row already there if one has that text
    /// (then nothing changes).
    pub fn insert(&mut self, rows: &[Row], id: u32) -> Option<u32> {
        let text = rows[id as usize].text.as_slice();
        let h = self.hash(text);
        let hasher = &self.hasher;
        match self.table.entry(
            h,
            |&j| rows[j as usize].text.as_slice() == text,
            |&j| hasher.hash_one(rows[j as usize].text.as_slice()),
        ) {
            Entry::Occupied(e) => Some(*e.get()),
            Entry::Vacant(e) => {
                e.insert(id);
                None
            }
        }
    }

    /// The row whose text is `text`, of the `rows` the index was made of.
    pub fn get(&self, rows: &[Row], text: &[u8]) -> Option<u32> {
        self.table.find(self.hash(text), |&j| rows[j as usize].text.as_slice() == text).copied()
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::RowKind;

    fn rows(texts: &[&[u8]]) -> Vec<Row> {
        texts.iter().map(|t| Row::new(t, RowKind::Learned)).collect()
    }

    #[test]
    fn finds_every_row_by_its_text_and_reports_a_text_twice() {
        let rows = rows(&[b"a", b"ab", b"", b"\xffab", b"ab"]);
        let mut index = RowIndex::with_capacity(2);
        assert_eq!((0..4).map(|i| index.insert(&rows, i)).collect::<Vec<_>>(), [None; 4]);
        // row 4 repeats row 1's text: reported, and the index keeps row 1
        assert_eq!(index.insert(&rows, 4), Some(1));
        assert_eq!(index.len(), 4);
        let found: Vec<Option<u32>> = [&b"a"[..], b"ab", b"", b"\xffab", b"b", b"abc"]
            .iter()
            .map(|t| index.get(&rows, t))
            .collect();
        assert_eq!(found, [Some(0), Some(1), Some(2), Some(3), None, None]);
    }

    #[test]
    fn grows_past_its_first_capacity() {
        // 5000 texts into room for 1: every resize rehashes from the rows' texts
        let texts: Vec<Vec<u8>> = (0..5000u32).map(|i| i.to_string().into_bytes()).collect();
        let rows: Vec<Row> = texts.iter().map(|t| Row::new(t.as_slice(), RowKind::Piece)).collect();
        let mut index = RowIndex::with_capacity(1);
        for i in 0..5000 {
            assert_eq!(index.insert(&rows, i), None);
        }
        assert!((0..5000u32).all(|i| index.get(&rows, i.to_string().as_bytes()) == Some(i)));
    }
}
