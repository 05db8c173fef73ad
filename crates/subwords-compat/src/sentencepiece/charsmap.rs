//! SentencePiece's precompiled normalization map (`NormalizerSpec.precompiled_charsmap`): a
//! little-endian u32 giving the size of a darts-clone double-array trie, the trie, then the
//! replacement strings, each ended by a NUL byte. The trie maps a byte string to the offset of its
//! replacement; normalization takes the longest match at each position.

use yada::DoubleArray;

use subwords_core::error::{Error, Result};

pub struct Charsmap {
    trie: DoubleArray<Vec<u8>>,
    /// The replacement strings, NUL after each (valid UTF-8 as a whole: checked on reading).
    normalized: String,
    /// Whether some rule starts with this byte: most text bytes have none and skip the trie.
    starts: [bool; 256],
}

impl Charsmap {
    pub fn parse(blob: &[u8]) -> Result<Self> {
        let bad = |m: &str| {
            Error::ModelFile(format!("precompiled_charsmap: {m}; the model file is damaged"))
        };
        if blob.len() <= 4 {
            return Err(bad("shorter than its header"));
        }
        let size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        if size > blob.len() - 4 || size == 0 {
            return Err(bad("its trie is larger than the blob"));
        }
        let trie = blob[4..4 + size].to_vec();
        let normalized = blob[4 + size..].to_vec();
        let trie = DoubleArray::new(trie)
            .map_err(|e| bad(&format!("the trie is not a valid double array ({e})")))?;
        let normalized =
            String::from_utf8(normalized).map_err(|_| bad("a replacement string is not UTF-8"))?;
        // every leaf's value must point at the start of a replacement string's character, so a
        // lookup can never land outside the strings or inside a character
        for chunk in trie.0.chunks_exact(4) {
            let u = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            if u >> 31 == 1 {
                let v = (u & 0x7FFF_FFFF) as usize;
                if v > normalized.len() || !normalized.is_char_boundary(v) {
                    return Err(bad("a rule points outside its replacement strings"));
                }
            }
        }
        let starts = first_bytes(&trie);
        Ok(Charsmap { trie, normalized, starts })
    }

    pub fn starts_with(&self, b: u8) -> bool {
        self.starts[b as usize]
    }

    /// Whether every rule that starts with the byte `b` continues it with a byte of `0x80` or
    /// above: then `b` followed by an ASCII byte (or by nothing) matches no rule, and stays as it
    /// is. `nmt_nfkc`'s map starts rules with ASCII letters only to compose them with a
    /// following combining mark (`A` + U+0300 → `À`), so plain English text needs no lookup.
    /// False for a byte no rule starts with, and for a byte that is a rule by itself.
    pub fn only_non_ascii_after(&self, b: u8) -> bool {
        if b == 0 || !self.starts[b as usize] {
            return false;
        }
        let unit = |i: u32| unit_at(&self.trie.0, i);
        // the same steps as `Prefixes::next`, from the root (unit 0) by `b`
        let Some(root) = unit(0) else { return false };
        let node = offset(root) ^ b as u32;
        let Some(here) = unit(node) else { return false };
        if here & ((1 << 31) | 0xFF) != b as u32 || (here >> 8) & 1 == 1 {
            // not a child after all, or `b` alone is a rule
            return false;
        }
        (1..0x80u32).all(|c| match unit(offset(here) ^ node ^ c) {
            Some(child) => child & ((1 << 31) | 0xFF) != c,
            None => true,
        })
    }

    /// What can match at a position that starts with the bytes `ch` (a whole character): None
    /// when a rule is `ch` or a prefix of it; else the bytes that rules starting with `ch` go on
    /// with (`next`, set for each), so that `ch` stays as it is when the byte after it is none
    /// of them (or the text ends). Nothing set in `next`: no rule can match there at all.
    pub fn after_char(&self, ch: &[u8], next: &mut [bool; 256]) -> Option<()> {
        let unit = |i: u32| unit_at(&self.trie.0, i);
        // the same steps as `Prefixes::next`
        let is_child = |node: u32, c: u8| -> Option<(u32, u32)> {
            let here = unit(node)?;
            let child_at = offset(here) ^ node ^ c as u32;
            let child = unit(child_at)?;
            (child & ((1 << 31) | 0xFF) == c as u32).then_some((child_at, child))
        };
        let mut node = 0u32;
        for &c in ch {
            if c == 0 {
                return Some(());
            }
            // no rule goes on with `c`: none matched before it either (below)
            let Some((at, child)) = is_child(node, c) else { return Some(()) };
            if (child >> 8) & 1 == 1 {
                // a rule ends here: `ch` or a prefix of it
                return None;
            }
            node = at;
        }
        // rules start with `ch`: the bytes they go on with
        for c in 1..=255u8 {
            if is_child(node, c).is_some() {
                next[c as usize] = true;
            }
        }
        Some(())
    }

    /// The longest rule matching the start of `input`: (replacement, bytes of input it covers).
    #[inline]
    pub fn longest(&self, input: &[u8]) -> Result<Option<(&str, usize)>> {
        if !self.starts[input[0] as usize] {
            return Ok(None);
        }
        let mut best: Option<(u32, usize)> = None;
        for (value, len) in prefixes(&self.trie, input) {
            if best.is_none_or(|(_, l)| len > l) {
                best = Some((value, len));
            }
        }
        let Some((value, len)) = best else { return Ok(None) };
        let start = value as usize;
        let bad = || {
            Error::ModelFile("precompiled_charsmap: a rule points outside its replacement strings; the model file is damaged".into())
        };
        let tail = self.normalized.get(start..).ok_or_else(bad)?;
        let end = tail.as_bytes().iter().position(|&b| b == 0).unwrap_or(tail.len());
        Ok(Some((&tail[..end], len)))
    }

    /// The replacement of the shortest rule matching the start of `input` (tokenizers'
    /// `Precompiled` takes the first prefix match, not the longest).
    pub fn shortest(&self, input: &[u8]) -> Result<Option<&str>> {
        if input.is_empty() || !self.starts[input[0] as usize] {
            return Ok(None);
        }
        let Some((value, _)) = prefixes(&self.trie, input).next() else { return Ok(None) };
        let bad = || {
            Error::ModelFile("precompiled_charsmap: a rule points outside its replacement strings; the file is damaged".into())
        };
        let tail = self.normalized.get(value as usize..).ok_or_else(bad)?;
        let end = tail.as_bytes().iter().position(|&b| b == 0).unwrap_or(tail.len());
        Ok(Some(&tail[..end]))
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
                return Err(Error::Option(
                    "a normalization rule maps a non-empty string without NUL".into(),
                ));
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

/// For each byte, whether the trie's root has a child labelled with it (darts-clone layout:
/// a unit's child for byte `c` sits at `offset(unit) ^ position ^ c` and carries label `c`).
pub fn first_bytes(trie: &DoubleArray<Vec<u8>>) -> [bool; 256] {
    let unit = |i: u32| unit_at(&trie.0, i);
    let mut table = [false; 256];
    let Some(root) = unit(0) else { return table };
    for c in 1..256u32 {
        if let Some(u) = unit(offset(root) ^ c) {
            table[c as usize] = u & ((1 << 31) | 0xFF) == c;
        }
    }
    table
}

/// The keys of `trie` that are prefixes of `text`, shortest first: (value, length in bytes).
///
/// yada's own `common_prefix_search` assumes the text holds no NUL byte: every key of a
/// darts-clone double array ends in a NUL transition, so a NUL in the text is followed as if it
/// were a label, into units that belong to no key (on sentencepiece's BPE with a user symbol,
/// `"\0<mask>"` matched `<mask>` as one 7-byte symbol), and a run of NULs is walked to its end
/// from every start position. No key holds a NUL, so the walk here stops at one. Units are read
/// with bounds checks: the trie comes from an untrusted file.
pub fn prefixes<'a>(trie: &'a DoubleArray<Vec<u8>>, text: &'a [u8]) -> Prefixes<'a> {
    Prefixes { units: &trie.0, text, node: 0, at: 0 }
}

pub struct Prefixes<'a> {
    units: &'a [u8],
    text: &'a [u8],
    node: u32,
    at: usize,
}

impl Prefixes<'_> {
    #[inline(always)]
    fn unit(&self, i: u32) -> Option<u32> {
        unit_at(self.units, i)
    }
}

/// Unit `i` of a darts-clone double array (4 little-endian bytes), None past its end: the trie
/// comes from an untrusted file.
#[inline(always)]
fn unit_at(units: &[u8], i: u32) -> Option<u32> {
    let i = i as usize * 4;
    let b = units.get(i..i + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Where a darts-clone unit's children start: bits 10.. of the unit, scaled by 2^8 when bit 9
/// is set. The child for byte `c` of the unit at `node` is at `offset(unit) ^ node ^ c`.
#[inline(always)]
fn offset(u: u32) -> u32 {
    (u >> 10) << ((u & (1 << 9)) >> 6)
}

impl Iterator for Prefixes<'_> {
    type Item = (u32, usize);

    #[inline]
    fn next(&mut self) -> Option<(u32, usize)> {
        // darts-clone's unit: bit 31 leaf, bits 10.. the offset ([`offset`]), bit 8 "has a
        // leaf child", the low byte the label; a leaf's low 31 bits are its value
        while let Some(&c) = self.text.get(self.at) {
            if c == 0 {
                return None;
            }
            self.at += 1;
            let here = self.unit(self.node)?;
            self.node = offset(here) ^ self.node ^ c as u32;
            let child = self.unit(self.node)?;
            if child & ((1 << 31) | 0xFF) != c as u32 {
                return None;
            }
            if (child >> 8) & 1 == 1 {
                let leaf = self.unit(offset(child) ^ self.node)?;
                return Some((leaf & ((1 << 31) - 1), self.at));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_stop_at_a_nul_and_agree_with_yada_elsewhere() {
        let keys: Vec<(&[u8], u32)> =
            vec![(b"<mask>", 7), (b"a", 1), (b"ab", 2), (b"abc", 3), (b"b", 4)];
        let trie =
            DoubleArray::new(yada::builder::DoubleArrayBuilder::build(&keys).unwrap()).unwrap();
        for text in [&b"abcd"[..], b"ab", b"b<mask>", b"<mask>x", b"zz", b""] {
            let ours: Vec<_> = prefixes(&trie, text).collect();
            let yada: Vec<_> = trie.common_prefix_search(text).collect();
            assert_eq!(ours, yada, "{text:?}");
        }
        // a NUL ends the search: nothing after it is matched from before it
        assert_eq!(prefixes(&trie, b"\0<mask>").collect::<Vec<_>>(), vec![]);
        assert_eq!(prefixes(&trie, b"a\0<mask>").collect::<Vec<_>>(), vec![(1, 1)]);
        assert_eq!(prefixes(&trie, b"ab\0").collect::<Vec<_>>(), vec![(1, 1), (2, 2)]);
    }
}
