//! The `front` spelling's whitespace split over 64-byte block masks, with its normalizations
//! observed in the same pass.
//!
//! Each 64-byte block is classified once into a mask of its whitespace bytes and a mask of the
//! bytes that may start a non-ASCII whitespace character or the mark (`C2`, `E1`-`E3`, the
//! mark's first byte): sixteen bytes a compare with SSE2 (every x86-64), a byte at a time
//! elsewhere. Only the second mask's characters are decoded. A word is then the span from the
//! first zero of the whitespace mask to its next one, found with a shift and a count of
//! trailing zeros, not a test of every byte. The whitespace runs between the words and the marks
//! inside them are what [`Normalizations::observe`] reports, so the counter reads each text once.
//!
//! Performance notes (callgrind, one thread, `subwords.train` to 32k under `front`):
//! * the counting pass (`UnitCounter::feed_file`: reading, this split, the normalizations, the
//!   table adds) against the byte walk of `for_each_word`, `Normalizations::observe`'s own pass
//!   and each unit copied behind its mark: English (6.9 MB) 418 M -> 275 M instructions,
//!   multilingual (15 MB) 954 M -> 518 M (with the counter's keys without the mark).

use super::Normalizations;

/// The masks of one block: bit `j` for the block's byte `j`.
#[derive(Clone, Copy, Default)]
struct Block {
    /// Whitespace: ASCII `\t`-`\r` and space, every byte of a non-ASCII whitespace character,
    /// and every byte past the end of the text.
    space: u64,
    /// The first bytes of the marks.
    marks: u64,
}

/// Which bytes of `b` are ASCII whitespace (`space`) and which may start a non-ASCII
/// whitespace character or the mark (`maybe`: `C2`, `E1`-`E3`, `lead`).
#[inline(always)]
fn classify(b: &[u8; 64], lead: u8) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of x86-64; `b` is 64 readable bytes
        unsafe { classify_sse2(b, lead) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let (mut space, mut maybe) = (0u64, 0u64);
        for (j, &x) in b.iter().enumerate() {
            space |= u64::from(matches!(x, b'\t'..=b'\r' | b' ')) << j;
            maybe |= u64::from(matches!(x, 0xC2 | 0xE1..=0xE3) || x == lead) << j;
        }
        (space, maybe)
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn classify_sse2(b: &[u8; 64], lead: u8) -> (u64, u64) {
    use std::arch::x86_64::*;
    let (mut space, mut maybe) = (0u64, 0u64);
    for k in 0..4 {
        // SAFETY: bytes 16k..16k+16 of `b` are readable; SSE2 is part of x86-64
        unsafe {
            let v = _mm_loadu_si128(b.as_ptr().add(16 * k).cast());
            // `\t`-`\r`: v - 9 at most 4, unsigned
            let t = _mm_sub_epi8(v, _mm_set1_epi8(9));
            let ctl = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(4)), t);
            let sp = _mm_or_si128(ctl, _mm_cmpeq_epi8(v, _mm_set1_epi8(b' ' as i8)));
            // `E1`-`E3`: v - E1 at most 2, unsigned
            let e = _mm_sub_epi8(v, _mm_set1_epi8(0xE1u8 as i8));
            let e = _mm_cmpeq_epi8(_mm_min_epu8(e, _mm_set1_epi8(2)), e);
            let c2 = _mm_cmpeq_epi8(v, _mm_set1_epi8(0xC2u8 as i8));
            let m = _mm_cmpeq_epi8(v, _mm_set1_epi8(lead as i8));
            let mb = _mm_or_si128(_mm_or_si128(e, c2), m);
            space |= (_mm_movemask_epi8(sp) as u32 as u64) << (16 * k);
            maybe |= (_mm_movemask_epi8(mb) as u32 as u64) << (16 * k);
        }
    }
    (space, maybe)
}

/// The block scanner's state: the masks of the block at `base`, and the whitespace bits that
/// a character ending past the block carries into the next one.
struct Scan<'a> {
    text: &'a str,
    mark: char,
    lead: u8,
    base: usize,
    block: Block,
    spill: u64,
}

impl<'a> Scan<'a> {
    fn new(text: &'a str, mark: char) -> Self {
        let mut b = [0u8; 4];
        let lead = mark.encode_utf8(&mut b).as_bytes()[0];
        let mut s = Scan { text, mark, lead, base: 0, block: Block::default(), spill: 0 };
        s.load();
        s
    }

    /// Classifies the block at `base`; past the text's end the bytes read as spaces.
    #[inline(always)]
    fn load(&mut self) {
        let bytes = self.text.as_bytes();
        let (space, maybe) = match bytes.get(self.base..self.base + 64) {
            Some(b) => classify(b.try_into().unwrap(), self.lead),
            None => {
                let mut buf = [b' '; 64];
                let rest = &bytes[self.base.min(bytes.len())..];
                buf[..rest.len()].copy_from_slice(rest);
                classify(&buf, self.lead)
            }
        };
        let mut block = Block { space: space | self.spill, marks: 0 };
        self.spill = 0;
        let mut maybe = maybe;
        while maybe != 0 {
            let j = maybe.trailing_zeros() as usize;
            maybe &= maybe - 1;
            // a lead byte (never a continuation byte) inside the text: a character starts here
            let Some(c) = self.text[self.base + j..].chars().next() else { continue };
            if c.is_whitespace() {
                let len = c.len_utf8();
                let bits = (1u128 << len) - 1;
                let wide = bits << j;
                block.space |= wide as u64;
                self.spill |= (wide >> 64) as u64;
            } else if c == self.mark {
                block.marks |= 1 << j;
            }
        }
        self.block = block;
    }

    #[inline(always)]
    fn next_block(&mut self) {
        self.base += 64;
        self.load();
    }
}

/// Calls `f(start, end, marked)` with every whitespace-separated word of `text` (the words of
/// [`super::for_each_word`]), `marked` when the word holds `mark` (a non-ASCII character that
/// is not whitespace), and records in `norm` what [`Normalizations::observe`] would.
#[inline]
pub fn for_each_word_observed(
    text: &str,
    mark: char,
    norm: &mut Normalizations,
    mut f: impl FnMut(usize, usize, bool),
) {
    let n = text.len();
    if n == 0 {
        return;
    }
    if !norm.stripped_ends
        && (text.chars().next().is_some_and(char::is_whitespace)
            || text.chars().next_back().is_some_and(char::is_whitespace))
    {
        norm.stripped_ends = true;
    }
    let bytes = text.as_bytes();
    let mut scan = Scan::new(text, mark);
    let mut i = 0usize;
    let mut prev_end = usize::MAX;
    let mut runs = false;
    let mut any_mark = false;
    loop {
        // the next word's start: the first byte at or after `i` that is not whitespace
        let start = loop {
            let off = i - scan.base;
            let rest = !scan.block.space >> off;
            if rest != 0 {
                break i + rest.trailing_zeros() as usize;
            }
            if scan.base + 64 >= n {
                // the rest of the text is whitespace
                norm.whitespace_runs |= runs;
                norm.mark_in_text |= any_mark;
                return;
            }
            scan.next_block();
            i = scan.base;
        };
        // between two words: one space, or a run to collapse
        if prev_end != usize::MAX && (start - prev_end != 1 || bytes[prev_end] != b' ') {
            runs = true;
        }
        // its end: the next whitespace byte (past the text, the padding is whitespace)
        let mut j = start;
        let mut marked = false;
        let end = loop {
            let off = j - scan.base;
            let rest = scan.block.space >> off;
            let marks = scan.block.marks >> off;
            if rest != 0 {
                let t = rest.trailing_zeros();
                marked |= marks & ((1u64 << t) - 1) != 0;
                break j + t as usize;
            }
            marked |= marks != 0;
            scan.next_block();
            j = scan.base;
        };
        any_mark |= marked;
        f(start, end, marked);
        prev_end = end;
        i = end;
        if i >= n {
            norm.whitespace_runs |= runs;
            norm.mark_in_text |= any_mark;
            return;
        }
        if i - scan.base >= 64 {
            scan.next_block();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str, mark: char) -> (Vec<(usize, usize, bool)>, Normalizations) {
        let mut out = Vec::new();
        let mut norm = Normalizations::default();
        for_each_word_observed(text, mark, &mut norm, |a, b, m| out.push((a, b, m)));
        (out, norm)
    }

    /// The reference: the byte walk of `for_each_word`, the mark found by `contains`, the
    /// normalizations by `observe`.
    fn reference(text: &str, mark: char) -> (Vec<(usize, usize, bool)>, Normalizations) {
        let mut out = Vec::new();
        super::super::for_each_word(text, |a, b| out.push((a, b, text[a..b].contains(mark))));
        let mut norm = Normalizations::default();
        norm.observe(text, mark);
        (out, norm)
    }

    #[test]
    fn words_and_normalizations_are_the_byte_walks() {
        let pieces = [
            "a",
            "bc",
            " ",
            "  ",
            "\t",
            "\n",
            "\u{a0}",
            "\u{85}",
            "\u{3000}",
            "\u{2009}",
            "\u{1680}",
            "\u{2581}",
            "é",
            "日本",
            "\u{2028}",
            "x\u{2581}y",
            "\u{e2}",
            "€",
            "\u{c2}\u{a9}",
            "\u{1F600}",
            "\u{0b}",
            "\u{1c}",
        ];
        // texts of every length around the block size, each piece at each place
        let mut seed = 12345u64;
        for len in 0..300 {
            for _ in 0..6 {
                let mut t = String::new();
                while t.len() < len {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    t.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
                }
                for mark in ['\u{2581}', '\u{e9}'] {
                    assert_eq!(words(&t, mark), reference(&t, mark), "{t:?}");
                }
            }
        }
    }

    #[test]
    fn a_whitespace_character_across_two_blocks_is_whitespace_in_both() {
        // U+3000 (three bytes) starting at byte 63: its last two bytes are in the second block
        for at in 60..66 {
            let t = format!("{}\u{3000}b", "a".repeat(at));
            let (w, _) = words(&t, '\u{2581}');
            assert_eq!(w, vec![(0, at, false), (at + 3, at + 4, false)]);
        }
    }
}
