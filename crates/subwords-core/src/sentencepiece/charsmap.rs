//! SentencePiece's precompiled normalization map (`NormalizerSpec.precompiled_charsmap`): a
//! little-endian u32 giving the size of a darts-clone double-array trie, the trie, then the
//! replacement strings, each ended by a NUL byte. The trie maps a byte string to the offset of its
//! replacement; normalization takes the longest match at each position.

use yada::DoubleArray;

use crate::error::{Error, Result};

pub struct Charsmap {
    trie: DoubleArray<Vec<u8>>,
    normalized: Vec<u8>,
}

impl Charsmap {
    pub fn parse(blob: &[u8]) -> Result<Self> {
        let bad = |m: &str| Error::ModelFile(format!("precompiled_charsmap: {m}; the model file is damaged"));
        if blob.len() <= 4 {
            return Err(bad("shorter than its header"));
        }
        let size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        if size >= blob.len() - 4 + 1 || size == 0 {
            return Err(bad("its trie is larger than the blob"));
        }
        let trie = blob[4..4 + size].to_vec();
        let normalized = blob[4 + size..].to_vec();
        let trie = DoubleArray::new(trie).map_err(|e| bad(&format!("the trie is not a valid double array ({e})")))?;
        for part in normalized.split(|&b| b == 0) {
            if std::str::from_utf8(part).is_err() {
                return Err(bad("a replacement string is not UTF-8"));
            }
        }
        Ok(Charsmap { trie, normalized })
    }

    /// The longest rule matching the start of `input`: (replacement, bytes of input it covers).
    #[inline]
    pub fn longest(&self, input: &[u8]) -> Result<Option<(&str, usize)>> {
        let mut best: Option<(u32, usize)> = None;
        for (value, len) in self.trie.common_prefix_search(input) {
            if best.is_none_or(|(_, l)| len > l) {
                best = Some((value, len));
            }
        }
        let Some((value, len)) = best else { return Ok(None) };
        let start = value as usize;
        let bad = || Error::ModelFile("precompiled_charsmap: a rule points outside its replacement strings; the model file is damaged".into());
        let tail = self.normalized.get(start..).ok_or_else(bad)?;
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        let s = std::str::from_utf8(&tail[..end]).map_err(|_| bad())?;
        Ok(Some((s, len)))
    }

    /// Builds a charsmap blob from (from, to) rules, sorted or not: used to write models whose
    /// normalization is a plain character mapping.
    pub fn build(rules: &[(&str, &str)]) -> Result<Vec<u8>> {
        let mut rules: Vec<(&str, &str)> = rules.to_vec();
        rules.sort();
        rules.dedup_by(|a, b| a.0 == b.0);
        let mut normalized = Vec::new();
        let mut keys: Vec<(&[u8], u32)> = Vec::new();
        for (from, to) in &rules {
            if from.is_empty() || from.contains('\0') || to.contains('\0') {
                return Err(Error::Option("a normalization rule maps a non-empty string without NUL".into()));
            }
            keys.push((from.as_bytes(), normalized.len() as u32));
            normalized.extend_from_slice(to.as_bytes());
            normalized.push(0);
        }
        let trie = yada::builder::DoubleArrayBuilder::build(&keys)
            .map_err(|e| Error::Option(format!("cannot build the normalization trie: {e}")))?;
        let mut blob = (trie.len() as u32).to_le_bytes().to_vec();
        blob.extend_from_slice(&trie);
        blob.extend_from_slice(&normalized);
        Ok(blob)
    }
}
