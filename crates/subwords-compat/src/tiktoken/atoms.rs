//! Whole characters as the first parts of a merge: a multi-byte character whose bytes BPE
//! provably joins into its own token before any merge crosses its edges starts as that one
//! token ([`RankBpe::merge_small`](super::RankBpe)), not as its two or three bytes.
//!
//! # When a character may start whole
//!
//! Rank BPE (the module above): a chunk starts as parts, each a token; repeatedly the adjacent
//! pair whose concatenation is the token of lowest rank is joined (leftmost on ties); it stops
//! when no adjacent concatenation is a token. Ranks are distinct, so two pairs tie only when
//! their concatenations are the same bytes.
//!
//! Take a character c of k = 2 or 3 bytes that is a token. Its *own run* is the merge run of
//! its bytes alone. c qualifies when its own run ends in the single part c; then let
//! ρ₁, …, ρ_{k−1} be the ranks of its steps, M = max ρᵢ, and
//! * `Pre(c)`: the first parts of the own run's states before the last step (the first byte
//!   always, then the first two bytes if a step made them), with c itself added;
//! * `Suf(c)`: the last parts of those states, with c added.
//!
//! An occurrence of c in a chunk, P the chunk's bytes before it and F those after, *starts
//! whole* when no token u ‖ w with u a non-empty suffix of P and w in `Pre(c)`, and no token
//! w ‖ z with w in `Suf(c)` and z a non-empty prefix of F, has a rank below M. (Equal to M is
//! impossible: such a token holds bytes of P or F, and its rank would make it the same bytes as
//! one of c's own steps.)
//!
//! **Claim.** Let Π be any partition of the chunk into tokens in which c's bytes are single
//! parts and c starts whole, and Π' the same with c's bytes one part. The runs from Π and from
//! Π' end in the same parts.
//!
//! *Proof.* Run A starts from Π, run B from Π'.
//! 1. *In A no merge crosses c's edges before c is whole.* Until the first such merge, the
//!    joins inside c are the steps of c's own run, in its order: each is the lowest pair of the
//!    chunk, so the lowest of c's inner pairs, leftmost on ties, as the own run takes it. So
//!    while c is not whole, an inner pair of rank ρ ≤ M (the own run's next step) is there.
//!    The first crossing merge joins a part X ending where c starts with c's current first
//!    part w, or c's current last part w with a part Z starting where c ends: its token is
//!    u ‖ w (u = X's bytes, a suffix of P) or w ‖ z (z a prefix of F), of rank above M by the
//!    condition, so the inner pair of rank ρ ≤ M is lower and is taken first. Hence c becomes
//!    whole (A cannot stop while an inner pair is a token), at some step T, before anything
//!    crosses its edges.
//! 2. *B makes A's other merges in A's order.* Before T, A's merges are c's steps and merges
//!    of parts outside c, and the parts outside c are the same in both runs. Let e be A's next
//!    outside merge, of rank r. It is taken while some inner pair of rank ρ ≤ M is there, so
//!    r ≤ ρ ≤ M, and it is the lowest outside pair, leftmost on ties. B's pairs are the same
//!    outside pairs and, around c, (L, c) and (c, R): tokens u ‖ c and c ‖ z, of rank above M
//!    ≥ r. So B takes e too. When A completes c at step T, B holds A's parts, and from there
//!    the runs are one. ∎
//!
//! Starting every qualifying occurrence whole at once is the claim applied once per
//! occurrence (Π may hold the others already whole): the result is plain byte-level BPE's.
//!
//! # The check at run time
//!
//! The condition depends on P and F only through tokens that span c's edge. Instead of the
//! suffixes of P, the table keeps, per character, the set `left` of the last bytes of the u's
//! of its tokens u ‖ w of rank below M, and `right`, the first bytes of the z's of w ‖ z: an
//! occurrence starts whole when the byte before it (if any) is not in `left` and the byte after
//! it (if any) is not in `right`. This is the condition or stricter (a byte in the set forgoes
//! the shortcut, it never breaks it). On o200k and ~1 MB of the multilingual corpus, the byte
//! test starts 79.4 k of 88.6 k multi-byte characters whole, within 0.2% of the exact test's
//! merges; the first character after a space is the usual loss (" \xd0" is ranked 300).
//!
//! Four-byte characters (emoji, rare scripts) are left as bytes: a table by code point covers
//! the Basic Multilingual Plane only.

use super::{Entry, NONE};

/// No character: a [`Atoms`] slot's value.
const EMPTY: u32 = 0;

/// A character's token and its two byte sets ([`Atoms::sides`]).
#[derive(Clone, Copy)]
struct Atom {
    rank: u32,
    len: u8,
    left: u16,
    right: u16,
}

/// The characters that may start whole, by code point, with the byte sets of their edges.
pub(super) struct Atoms {
    /// Code point (below 2^16) -> 1 + index into `atoms`, or [`EMPTY`].
    slot: Box<[u32]>,
    atoms: Vec<Atom>,
    /// 256-bit byte sets, `sides[0]` empty.
    sides: Vec<[u64; 4]>,
}

impl Atoms {
    /// None: every character starts as its bytes.
    pub(super) fn none() -> Self {
        Atoms { slot: Box::new([]), atoms: Vec::new(), sides: vec![[0; 4]] }
    }

    /// The characters of a rank file that may start whole. `rank` gives the rank of any byte
    /// string (`NONE` if none); the tokens are `flat[offset..offset + len]` for `entries`.
    ///
    /// Two passes over the tokens: the first finds the one-character tokens and the fragments
    /// (tokens ending in a lead byte and part of its character after at least one byte, or
    /// starting with continuation bytes and going on), the second the tokens that end or start
    /// with a whole character, each looked up by code point.
    pub(super) fn build(flat: &[u8], entries: &[Entry], rank: impl Fn(&[u8]) -> u32) -> Self {
        // fragments: (key of the partial form w, the byte before or after it, rank)
        let mut heads: Vec<(u32, u8, u32)> = Vec::new();
        let mut tails: Vec<(u32, u8, u32)> = Vec::new();
        let mut slot = vec![EMPTY; 1 << 16].into_boxed_slice();
        // per candidate: its bytes, rank, the highest rank of its own run, Pre and Suf's
        // partial forms, and its two byte sets
        struct Cand<'a> {
            cp: u32,
            rank: u32,
            len: u8,
            top: u32,
            pre: Vec<&'a [u8]>,
            suf: Vec<&'a [u8]>,
            sides: [[u64; 4]; 2],
        }
        let mut cands: Vec<Cand> = Vec::new();
        for &(offset, len, r) in entries {
            let t = &flat[offset..offset + len];
            if t[0] < 0x80 && t[len - 1] < 0x80 {
                continue; // most tokens: nothing of a character at either end
            }
            if let Some(p) = t.iter().rposition(|&b| !is_cont(b)) {
                let need = utf8_len(t[p]);
                if p > 0 && need >= 2 && len - p < need {
                    heads.push((key(&t[p..]), t[p - 1], r));
                }
            }
            let conts = t.iter().take(3).take_while(|&&b| is_cont(b)).count();
            for j in 1..=conts.min(len - 1) {
                tails.push((key(&t[..j]), t[j], r));
            }
            if (2..=3).contains(&len) && utf8_len(t[0]) == len {
                if let Ok(s) = std::str::from_utf8(t) {
                    if let Some((top, pre, suf)) = own_run(t, &rank) {
                        let cp = s.chars().next().unwrap() as u32;
                        let sides = [[0; 4]; 2];
                        cands.push(Cand { cp, rank: r, len: len as u8, top, pre, suf, sides });
                        slot[cp as usize] = cands.len() as u32;
                    }
                }
            }
        }
        heads.sort_unstable();
        tails.sort_unstable();
        let set = |bits: &mut [u64; 4], b: u8| bits[b as usize / 64] |= 1 << (b % 64);
        for c in &mut cands {
            for (side, list, parts) in [(0, &heads, &c.pre), (1, &tails, &c.suf)] {
                for w in parts.iter() {
                    let k = key(w);
                    let from = list.partition_point(|e| e.0 < k);
                    for &(_, b, r) in list[from..].iter().take_while(|e| e.0 == k) {
                        if r < c.top {
                            set(&mut c.sides[side], b);
                        }
                    }
                }
            }
        }
        // the tokens u ‖ c and c ‖ z
        let (mut ends, mut starts) = (Vec::new(), Vec::new());
        // the candidate spelled by `t`, a lead byte and its continuation bytes
        let at = |t: &[u8]| -> Option<usize> {
            let cp = match t.len() {
                2 => (t[0] as usize & 0x1F) << 6 | (t[1] as usize & 0x3F),
                3 => {
                    (t[0] as usize & 0x0F) << 12
                        | (t[1] as usize & 0x3F) << 6
                        | (t[2] as usize & 0x3F)
                }
                _ => return None,
            };
            let k = slot[cp] as usize;
            (k != EMPTY as usize && cands[k - 1].len as usize == t.len()).then_some(k)
        };
        for &(offset, len, r) in entries {
            let t = &flat[offset..offset + len];
            if t[0] < 0xC0 && !is_cont(t[len - 1]) {
                continue;
            }
            if let Some(p) = t.iter().rposition(|&b| !is_cont(b)) {
                if p > 0 && len - p == utf8_len(t[p]) && len - p >= 2 {
                    if let Some(k) = at(&t[p..]) {
                        if r < cands[k - 1].top {
                            ends.push((k, t[p - 1]));
                        }
                    }
                }
            }
            let need = utf8_len(t[0]);
            if need >= 2 && len > need && t[1..need].iter().all(|&b| is_cont(b)) {
                if let Some(k) = at(&t[..need]) {
                    if r < cands[k - 1].top {
                        starts.push((k, t[need]));
                    }
                }
            }
        }
        for (side, list) in [(0, ends), (1, starts)] {
            for (k, b) in list {
                set(&mut cands[k - 1].sides[side], b);
            }
        }
        let mut out = Atoms { slot, ..Atoms::none() };
        let mut seen = subwords_core::hash::Map::<[u64; 4], u16>::default();
        seen.insert([0; 4], 0);
        let mut ids = Vec::with_capacity(cands.len());
        for c in &cands {
            let mut id = |bits: [u64; 4]| -> Option<u16> {
                if let Some(&k) = seen.get(&bits) {
                    return Some(k);
                }
                let k = u16::try_from(out.sides.len()).ok()?;
                out.sides.push(bits);
                seen.insert(bits, k);
                Some(k)
            };
            ids.push(id(c.sides[0]).zip(id(c.sides[1])));
        }
        for (c, id) in cands.iter().zip(ids) {
            // past 65535 distinct sets (no known file): the other characters start as bytes
            let (left, right) = id.unwrap_or_else(|| {
                out.slot[c.cp as usize] = EMPTY;
                (0, 0)
            });
            out.atoms.push(Atom { rank: c.rank, len: c.len, left, right });
        }
        out
    }

    /// How many characters may start whole.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.atoms.len()
    }

    /// The character starting at `buf[i]` (a lead byte) and its token, when it may start whole
    /// there: `(length, rank)`. `buf[..n]` is the chunk.
    #[inline(always)]
    pub(super) fn at(&self, buf: &[u8], i: usize, n: usize) -> Option<(usize, u32)> {
        let b = buf[i];
        let (len, cp) = if b < 0xE0 {
            let c1 = *buf.get(i + 1)?;
            (2, (b as u32 & 0x1F) << 6 | (c1 as u32 & 0x3F))
        } else if b < 0xF0 {
            let (c1, c2) = (*buf.get(i + 1)?, *buf.get(i + 2)?);
            (3, (b as u32 & 0x0F) << 12 | (c1 as u32 & 0x3F) << 6 | (c2 as u32 & 0x3F))
        } else {
            return None;
        };
        if i + len > n || !buf[i + 1..i + len].iter().all(|&c| is_cont(c)) {
            return None;
        }
        let s = *self.slot.get(cp as usize)?;
        if s == EMPTY {
            return None;
        }
        // a slot's length tells an overlong spelling of another code point from its own
        let a = self.atoms[s as usize - 1];
        if a.len as usize != len {
            return None;
        }
        let has = |set: u16, b: u8| self.sides[set as usize][b as usize / 64] >> (b % 64) & 1 != 0;
        if i > 0 && has(a.left, buf[i - 1]) {
            return None;
        }
        if i + len < n && has(a.right, buf[i + len]) {
            return None;
        }
        Some((len, a.rank))
    }
}

/// Whether `b` is a UTF-8 continuation byte.
#[inline(always)]
fn is_cont(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// The length of the UTF-8 character a byte leads (1 for ASCII and for bytes that lead none).
fn utf8_len(b: u8) -> usize {
    match b {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// Up to 4 bytes of a character as one integer: its bytes are all 0x80 or above, so zeros pad
/// shorter strings without ambiguity.
fn key(w: &[u8]) -> u32 {
    w.iter().fold(0u32, |k, &b| k << 8 | b as u32)
}

/// The own run of a character's bytes `c` (the module header): when it ends in one part, the
/// highest rank of its steps, `Pre(c)` and `Suf(c)`.
#[allow(clippy::type_complexity)]
fn own_run<'a>(
    c: &'a [u8],
    rank: &impl Fn(&[u8]) -> u32,
) -> Option<(u32, Vec<&'a [u8]>, Vec<&'a [u8]>)> {
    // parts as end offsets
    let mut ends: Vec<usize> = (1..=c.len()).collect();
    let (mut top, mut pre, mut suf) = (0u32, Vec::new(), Vec::new());
    while ends.len() > 1 {
        pre.push(&c[..ends[0]]);
        suf.push(&c[ends[ends.len() - 2]..]);
        let mut best = (NONE, 0);
        let mut start = 0;
        for k in 0..ends.len() - 1 {
            let r = rank(&c[start..ends[k + 1]]);
            if r < best.0 {
                best = (r, k);
            }
            start = ends[k];
        }
        if best.0 == NONE {
            return None;
        }
        top = top.max(best.0);
        ends.remove(best.1);
    }
    pre.push(c);
    suf.push(c);
    Some((top, pre, suf))
}

#[cfg(test)]
mod tests {
    use super::super::{Pattern, RankBpe, SMALL_PIECE};
    use crate::test_rng::Rng;

    /// A rank file of the 256 bytes (rank = byte) and `tokens` at the ranks given.
    fn ranked(tokens: &[(&[u8], u32)]) -> RankBpe {
        let mut all: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        all.extend(tokens.iter().map(|&(t, r)| (t.to_vec(), r)));
        RankBpe::new(all, vec![], Pattern::O200k).unwrap()
    }

    /// Whether the character at byte `i` of `chunk` starts whole.
    fn whole(t: &RankBpe, chunk: &[u8], i: usize) -> bool {
        let mut buf = chunk.to_vec();
        buf.resize(chunk.len() + 16, 0);
        t.atoms.at(&buf, i, chunk.len()).is_some()
    }

    /// `merge_small` (whole characters) against `merge_heap` (bytes only) on `chunk`.
    fn merged(t: &RankBpe, chunk: &[u8]) -> Vec<u32> {
        let (mut a, mut b) = (vec![], vec![]);
        t.merge_small(chunk, &mut a);
        t.merge_heap(chunk, &mut b);
        assert_eq!(a, b, "{:?}", String::from_utf8_lossy(chunk));
        a
    }

    const E_ACUTE: &[u8] = "é".as_bytes(); // C3 A9
    const ZHONG: &[u8] = "中".as_bytes(); // E4 B8 AD

    #[test]
    fn a_character_no_crossing_token_undercuts_starts_whole() {
        // é (300) and "éé" (301): the only tokens spanning an edge of é are é's own joins,
        // ranked above 300; so é starts whole anywhere
        let t = ranked(&[(E_ACUTE, 300), ("éé".as_bytes(), 301)]);
        assert_eq!(t.atoms.len(), 1);
        for (s, i) in [("xéy", 1), ("éx", 0), ("xé", 1), ("ééé", 2)] {
            assert!(whole(&t, s.as_bytes(), i), "{s}");
        }
        // by hand: é é é -> bytes C3 A9 C3 A9 C3 A9: C3A9 (300) three times, leftmost first;
        // then éé (301) at the left -> [éé, é]
        assert_eq!(merged(&t, "ééé".as_bytes()), vec![301, 300]);
        assert_eq!(merged(&t, "xéy".as_bytes()), vec![b'x' as u32, 300, b'y' as u32]);
    }

    #[test]
    fn a_partial_join_across_the_edge_ranked_first_keeps_the_bytes() {
        // "x\xc3" (256) joins x with é's lead byte before é (257) completes: after an x, é
        // must start as its bytes; after a y it may start whole
        let t = ranked(&[(b"x\xc3", 256), (E_ACUTE, 257)]);
        assert!(!whole(&t, "xé".as_bytes(), 1));
        assert!(whole(&t, "yé".as_bytes(), 1));
        assert!(whole(&t, "é".as_bytes(), 0));
        // by hand: x C3 A9: "x\xc3" (256) before C3A9 (257); then "xé" is no token
        assert_eq!(merged(&t, "xé".as_bytes()), vec![256, 0xA9]);
        assert_eq!(merged(&t, "yé".as_bytes()), vec![b'y' as u32, 257]);
        // the same join ranked after é (258) never happens: é forms first, and "x\xc3"
        // never meets (x, C3) again
        let t = ranked(&[(b"x\xc3", 258), (E_ACUTE, 257)]);
        assert!(whole(&t, "xé".as_bytes(), 1));
        assert_eq!(merged(&t, "xé".as_bytes()), vec![b'x' as u32, 257]);
    }

    #[test]
    fn a_join_with_the_whole_character_ranked_below_its_own_keeps_the_bytes() {
        // "xé" (270) ranks below é (300): from bytes, y x C3 A9 joins yx (280) first, then é,
        // and "yxé" is no token -> [yx, é]; starting é whole would join xé (270) first
        let t = ranked(&[(b"yx", 280), ("xé".as_bytes(), 270), (E_ACUTE, 300)]);
        assert!(!whole(&t, "yxé".as_bytes(), 2));
        assert_eq!(merged(&t, "yxé".as_bytes()), vec![280, 300]);
        // on the right too: "éx" (270) below é (300)
        let t = ranked(&[(b"xy", 280), ("éx".as_bytes(), 270), (E_ACUTE, 300)]);
        assert!(!whole(&t, "éxy".as_bytes(), 0));
        assert!(whole(&t, "éyx".as_bytes(), 0));
        // by hand: C3 A9 x y: xy (280) first, then é (300); "éxy" is no token -> [é, xy]
        assert_eq!(merged(&t, "éxy".as_bytes()), vec![300, 280]);
    }

    #[test]
    fn partial_forms_of_a_three_byte_character() {
        // 中 = E4 B8 AD, its own run: E4B8 (260), then 中 (400). " \xe4\xb8" (300) joins a
        // space with the partial form E4B8 before 中 completes
        let t = ranked(&[(&ZHONG[..2], 260), (ZHONG, 400), (b" \xe4\xb8", 300)]);
        assert!(!whole(&t, " 中".as_bytes(), 1));
        assert!(whole(&t, "a中".as_bytes(), 1));
        // by hand: " " E4 B8 AD: E4B8 (260); then " \xe4\xb8" (300) before 中 (400); " 中" is
        // no token -> [300, AD]
        assert_eq!(merged(&t, " 中".as_bytes()), vec![300, 0xAD]);
        // ranked after 中 (500): E4B8, then 中 (400) before it -> [" ", 中]
        let t = ranked(&[(&ZHONG[..2], 260), (ZHONG, 400), (b" \xe4\xb8", 500)]);
        assert!(whole(&t, " 中".as_bytes(), 1));
        assert_eq!(merged(&t, " 中".as_bytes()), vec![b' ' as u32, 400]);
        // across the right edge: AD is 中's last part until 中 completes, and "\xadx" (258)
        // joins it with an x first; after a y, 中 may start whole
        let t = ranked(&[(&ZHONG[..2], 260), (ZHONG, 400), (b"\xadx", 258)]);
        assert!(!whole(&t, "中x".as_bytes(), 0));
        assert!(whole(&t, "中y".as_bytes(), 0));
        // by hand: E4 B8 AD x: ADx (258) first, then E4B8 (260); "\xe4\xb8\xadx" no token
        assert_eq!(merged(&t, "中x".as_bytes()), vec![260, 258]);
    }

    #[test]
    fn a_character_its_own_run_cannot_join_never_starts_whole() {
        // 中 is a token but neither E4B8 nor B8AD is: its bytes never join into it
        let t = ranked(&[(ZHONG, 400)]);
        assert_eq!(t.atoms.len(), 0);
        assert_eq!(merged(&t, "a中".as_bytes()), vec![b'a' as u32, 0xE4, 0xB8, 0xAD]);
    }

    /// Random texts of ASCII, Cyrillic, Arabic with its marks, CJK and emoji.
    fn random_text(rng: &mut Rng, words: usize) -> String {
        let scripts: [&[u32]; 6] = [
            &[0x61, 0x62, 0x65, 0x6E, 0x74, 0x20, 0x2E, 0x31],
            &[0x430, 0x43E, 0x43D, 0x442, 0x440, 0x435, 0x41F, 0x456],
            &[0x627, 0x644, 0x645, 0x646, 0x64E, 0x650, 0x651, 0x652],
            &[0x4E2D, 0x6587, 0x5B57, 0x7684, 0x662F, 0x4E00, 0x3002, 0xFF0C],
            &[0x1F600, 0x1F44D, 0x2764, 0xFE0F, 0x1F389],
            &[0xE9, 0xFC, 0x17E, 0x3B1, 0x5D0, 0x915, 0x93E, 0xE01],
        ];
        let mut s = String::new();
        for _ in 0..words {
            if rng.below(3) > 0 {
                s.push(' ');
            }
            let a = scripts[rng.below(scripts.len())];
            let b = scripts[rng.below(scripts.len())];
            for _ in 0..1 + rng.below(6) {
                let from = if rng.below(5) == 0 { b } else { a };
                s.push(char::from_u32(from[rng.below(from.len())]).unwrap());
            }
        }
        s
    }

    /// A rank file of random merges over bytes: the 256 bytes, then, rank after rank, the
    /// join of two adjacent parts of a random text (its parts are the current vocabulary's
    /// merge result), as BPE training would add them but chosen at random; `hostile` adds
    /// joins that cross characters' edges (a byte and a lead byte, a character and a
    /// continuation byte, a partial form and a byte) among the first ranks.
    fn random_ranks(rng: &mut Rng, size: usize, hostile: bool) -> Vec<(Vec<u8>, u32)> {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut have: std::collections::HashSet<Vec<u8>> = tokens.iter().cloned().collect();
        let text = random_text(rng, 400);
        let bytes = text.as_bytes();
        while tokens.len() < size {
            let t = if hostile && rng.below(4) == 0 {
                // a random span of 2 to 4 bytes of the text, wherever its edges fall
                let a = rng.below(bytes.len() - 4);
                bytes[a..a + 2 + rng.below(3)].to_vec()
            } else {
                // parts: the text's bytes joined along the tokens so far (greedy longest
                // match stands in for the merges: a rough but byte-level segmentation)
                let a = rng.below(bytes.len() - 24);
                let mut parts = Vec::new();
                let mut i = a;
                while parts.len() < 2 {
                    let len = (1..=12.min(bytes.len() - i))
                        .rev()
                        .find(|&l| have.contains(&bytes[i..i + l]))
                        .unwrap();
                    parts.push(&bytes[i..i + len]);
                    i += len;
                }
                parts.concat()
            };
            if have.insert(t.clone()) {
                tokens.push(t);
            }
        }
        let mut ranks: Vec<u32> = (0..tokens.len() as u32).collect();
        // bytes first as in OpenAI's files, a few swaps among the others
        for _ in 0..size / 10 {
            let (i, j) = (256 + rng.below(size - 256), 256 + rng.below(size - 256));
            ranks.swap(i, j);
        }
        tokens.into_iter().zip(ranks).collect()
    }

    #[test]
    fn whole_characters_equal_byte_level_merges_on_random_rank_files() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut starts, mut refused, mut chunks) = (0usize, 0usize, 0usize);
        for file in 0..40 {
            let hostile = file % 2 == 1;
            let size = 300 + rng.below(1500);
            let tokens = random_ranks(&mut rng, size, hostile);
            let t = RankBpe::new(tokens, vec![], Pattern::O200k).unwrap();
            for _ in 0..30 {
                let words = 1 + rng.below(20);
                let text = random_text(&mut rng, words);
                for (a, b) in t.split(&text) {
                    let chunk = &text.as_bytes()[a..b];
                    if chunk.len() < 2 || chunk.len() > SMALL_PIECE {
                        continue;
                    }
                    merged(&t, chunk);
                    chunks += 1;
                    for (i, &c) in chunk.iter().enumerate() {
                        if (0xC0..0xF0).contains(&c) {
                            if whole(&t, chunk, i) {
                                starts += 1;
                            } else {
                                refused += 1;
                            }
                        }
                    }
                }
                // through the whole engine (word cache, batches) against plain merges
                let mut want = Vec::new();
                for (a, b) in t.split(&text) {
                    let chunk = &text.as_bytes()[a..b];
                    match t.rank(chunk) {
                        Some(r) => want.push(r),
                        None => t.merge_heap(chunk, &mut want),
                    }
                }
                assert_eq!(t.encode(&text, &[]), want, "{text:?}");
            }
        }
        // the shortcut is both taken and refused, many times
        assert!(chunks > 5000 && starts > 2000 && refused > 2000, "{chunks} {starts} {refused}");
    }
}
