//! o200k's pre-split over bit masks of 64-byte blocks.
//!
//! Each 64-byte block of the text is classified once into one bit mask per class of ASCII byte
//! (upper-case letter, lower-case letter, digit, `\s`, `[\r\n]`, `[\r\n/]`, other) and one of
//! the non-ASCII bytes: with AVX-512BW a compare per class over the whole block, with AVX2 two,
//! elsewhere eight-byte words and a gather of their high bits ([`Simd`]). A chunk's end is then
//! read from the masks of a 64-byte window starting at the chunk (this block's masks and the
//! next's, shifted): a word is the first stop of one mask (a non-letter, or an upper-case letter
//! after a lower-case one), a run of punctuation or whitespace the first zero of another, the
//! last line break of a whitespace run its highest bit. A chunk that starts at, or whose end
//! depends on, a non-ASCII character, or that does not end inside its window, is cut by the
//! character-level scanner (`openai.rs`, the definition), from the chunk's start: it is always
//! a chunk boundary, so both scanners give the very same chunks.
//!
//! Under o200k the chunk starts of a block after the first chunk that starts in it are read
//! from the masks at once, as bits ([`o200k_starts`]: each rule of the pattern over ASCII is a
//! few shifts of the masks, given that a chunk starts at that first chunk), up to the block's
//! first non-ASCII character that is not a letter: the bytes of Lu/Lt, Ll and Lm/Lo characters
//! join the letter masks (upper-case, lower-case, both), classed one character at a time by the
//! table; the chunk into the next block and the rest go through the per-chunk path above, and
//! past a chunk the character-level scanner cut the rest of the block is read at once again.
//!
//! Against the scanner of `openai.rs` alone (SWAR over eight bytes, a byte table per chunk
//! start): o200k, 1 MB of English in 16 KB chunks, the whole encoding, 58.9 -> 52.6
//! instructions a byte (callgrind, AVX2 path); `benchmarks/README.md` has the rest.
//! * A block's o200k chunk starts at once, against each chunk's end from its 64-byte window:
//!   1 MB in 16 KB chunks, a fresh encoder, the whole encoding 59.5 -> 50.5 (English), 63.6 ->
//!   53.3 (code), 150.3 -> 143.4 (multilingual) instructions a byte, the split alone 16.7 ->
//!   7.9, 19.0 -> 9.1, 29.0 -> 26.6 (callgrind, AVX2 path; cl100k and Llama 3 unchanged).
//!   The starts emitted in one loop per block, against a block check and a read of the next
//!   start per chunk: the split alone on English 10.3 -> 7.9 instructions a byte.
//! * Non-ASCII letters in a block's starts (Lu/Lt, Ll, Lm/Lo bytes joining the letter masks,
//!   the rest of a block read again after a chunk the character scanner cut): o200k, 1 MB in
//!   16 KB chunks, a fresh encoder, the whole encoding 121.0 -> 114.3 (multilingual; the split
//!   alone about 35.2 -> 28.6), 49.8 -> 50.1 (English), 52.2 -> 52.5 (code) instructions a
//!   byte (callgrind, AVX2 path; cl100k unchanged).
//! * Tried and lost: that classification out of line behind a test for non-ASCII bytes, and
//!   the driver's second `o200k_starts` out of line: English 50.7 and 50.9 instructions a byte.
//! * Tried and lost: the word's end as a closure called from three places, which LLVM kept out
//!   of line (a call, a `vzeroupper` and the captures stored per chunk): o200k English 16 KB
//!   slower than the scanner it replaced (122.0/119.8 against 133.0/129.1 MB/s in turn).

use super::gpt2::{bmp_table, Text, LETTER, LOWER, UPPER};
use super::openai::{cl100k_chunk_end, contraction_suffix, lanes_in, o200k_chunk_end, HIGH};

/// Which classifier cuts the blocks; every one gives the very same masks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    /// Eight-byte words and a multiply gathering their high bits: every processor.
    Portable,
    /// Two 32-byte compares per class (x86-64 with AVX2).
    Avx2,
    /// One 64-byte compare per class into a mask register (x86-64 with AVX-512BW).
    Avx512,
}

impl Simd {
    /// The fastest classifier this processor runs.
    #[inline]
    pub fn best() -> Simd {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512bw") {
                return Simd::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") {
                return Simd::Avx2;
            }
        }
        Simd::Portable
    }

    /// Whether this processor runs the classifier.
    pub fn available(self) -> bool {
        match self {
            Simd::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => std::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => std::is_x86_feature_detected!("avx512bw"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// The patterns the block scanner runs (its `P`): o200k's, cl100k's, and Llama 3's form of
/// cl100k (`openai::llama3_split`).
pub const O200K: u8 = 0;
/// See [`O200K`].
pub const CL100K: u8 = 1;
/// See [`O200K`].
pub const LLAMA3: u8 = 2;

/// Calls `f(start, end)` with the byte span of every chunk of `text` under the pattern `P`
/// ([`O200K`], [`CL100K`], [`LLAMA3`]), in order.
#[inline(always)]
pub fn split<const P: u8>(text: &str, f: impl FnMut(usize, usize)) {
    split_with::<P>(Simd::best(), text, f)
}

/// [`split`] with the blocks classified by `simd`, which must be [available](Simd::available)
/// (the tests force every classifier this way).
#[inline(always)]
pub fn split_with<const P: u8>(simd: Simd, text: &str, f: impl FnMut(usize, usize)) {
    assert!(simd.available(), "this processor cannot run the {simd:?} classifier");
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the processor has AVX-512BW (asserted above)
        Simd::Avx512 => unsafe { x86::scan_avx512::<P>(text, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the processor has AVX2 (asserted above)
        Simd::Avx2 => unsafe { x86::scan_avx2::<P>(text, f) },
        _ => scan::<P>(text, portable_block, f),
    }
}

/// The class masks of one 64-byte block: bit `j` for the block's byte `j`. Bytes past the end
/// of the text are in none of them.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Masks {
    /// `[A-Z]`
    pub upper: u64,
    /// `[a-z]`
    pub lower: u64,
    /// `[0-9]`
    pub digit: u64,
    /// ASCII `\s`: tab to carriage return, space.
    pub space: u64,
    /// `[\r\n]`
    pub newline: u64,
    /// `[\r\n/]`: what follows a run of punctuation into its chunk.
    pub newline_slash: u64,
    /// ASCII `[^\s\p{L}\p{N}]`
    pub other: u64,
    /// bytes of non-ASCII characters
    pub high: u64,
    /// `' '`: what ` ?[^\s\p{L}\p{N}]+` takes in front of punctuation.
    pub blank: u64,
    /// `'`: where a contraction may follow a word.
    pub quote: u64,
}

/// The masks of `s[base..base + 64]`, from `block`, which classifies 64 readable bytes (and
/// leaves `other` to this function).
#[inline(always)]
fn classify(s: &[u8], base: usize, block: impl Fn(&[u8; 64]) -> Masks) -> Masks {
    match s.get(base..base + 64) {
        Some(b) => block(b.try_into().unwrap()).with_other(u64::MAX),
        None if base >= s.len() => Masks::default(),
        None => {
            let mut buf = [0u8; 64];
            buf[..s.len() - base].copy_from_slice(&s[base..]);
            let valid = u64::MAX >> (64 - (s.len() - base));
            let m = block(&buf);
            Masks {
                upper: m.upper & valid,
                lower: m.lower & valid,
                digit: m.digit & valid,
                space: m.space & valid,
                newline: m.newline & valid,
                newline_slash: m.newline_slash & valid,
                other: 0,
                high: m.high & valid,
                blank: m.blank & valid,
                quote: m.quote & valid,
            }
            .with_other(valid)
        }
    }
}

impl Masks {
    /// `other` from the rest, among the `valid` bytes.
    #[inline(always)]
    fn with_other(self, valid: u64) -> Masks {
        let other = valid & !(self.upper | self.lower | self.digit | self.space | self.high);
        Masks { other, ..self }
    }
}

/// The masks of a block in eight-byte words: each class's high bits ([`lanes_in`]) gathered
/// into eight bits by one multiply.
#[inline(always)]
pub fn portable_block(b: &[u8; 64]) -> Masks {
    #[inline(always)]
    fn gather(lanes: u64) -> u64 {
        ((lanes & HIGH) >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
    }
    let mut m = Masks::default();
    for k in 0..8 {
        let w = u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().unwrap());
        let at = 8 * k;
        let nl = lanes_in(w, b'\n', b'\n') | lanes_in(w, b'\r', b'\r');
        m.upper |= gather(lanes_in(w, b'A', b'Z')) << at;
        m.lower |= gather(lanes_in(w, b'a', b'z')) << at;
        m.digit |= gather(lanes_in(w, b'0', b'9')) << at;
        m.space |= gather(lanes_in(w, 0x09, 0x0d) | lanes_in(w, b' ', b' ')) << at;
        m.newline |= gather(nl) << at;
        m.newline_slash |= gather(nl | lanes_in(w, b'/', b'/')) << at;
        m.high |= gather(w) << at;
        m.blank |= gather(lanes_in(w, b' ', b' ')) << at;
        m.quote |= gather(lanes_in(w, b'\'', b'\'')) << at;
    }
    m
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{scan, Masks};
    use std::arch::x86_64::*;

    /// [`super::scan`] with AVX-512BW blocks, compiled for it whole.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn scan_avx512<const P: u8>(text: &str, f: impl FnMut(usize, usize)) {
        // SAFETY: the caller's processor has AVX-512BW, as this function is compiled for
        scan::<P>(text, |b| unsafe { block_avx512(b) }, f)
    }

    /// [`super::scan`] with AVX2 blocks, compiled for it whole.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn scan_avx2<const P: u8>(text: &str, f: impl FnMut(usize, usize)) {
        // SAFETY: the caller's processor has AVX2, as this function is compiled for
        scan::<P>(text, |b| unsafe { block_avx2(b) }, f)
    }

    /// The masks of a block: one unsigned compare per range of bytes into a mask register.
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    pub unsafe fn block_avx512(b: &[u8; 64]) -> Masks {
        // SAFETY: `b` is 64 readable bytes
        let v = unsafe { _mm512_loadu_si512(b.as_ptr().cast()) };
        macro_rules! range {
            ($lo:expr, $hi:expr) => {
                _mm512_cmplt_epu8_mask(
                    _mm512_sub_epi8(v, _mm512_set1_epi8($lo as i8)),
                    _mm512_set1_epi8(($hi - $lo + 1) as i8),
                )
            };
        }
        macro_rules! is {
            ($c:expr) => {
                _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8($c as i8))
            };
        }
        let newline = is!(b'\n') | is!(b'\r');
        Masks {
            upper: range!(b'A', b'Z'),
            lower: range!(b'a', b'z'),
            digit: range!(b'0', b'9'),
            space: range!(0x09u8, 0x0du8) | is!(b' '),
            newline,
            newline_slash: newline | is!(b'/'),
            other: 0,
            high: _mm512_movepi8_mask(v),
            blank: is!(b' '),
            quote: is!(b'\''),
        }
    }

    /// The masks of a block: two 32-byte halves, a signed compare per range of bytes (the range
    /// moved to the bottom of the signed bytes) and a byte mask each.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn block_avx2(b: &[u8; 64]) -> Masks {
        // SAFETY: `b` is 64 readable bytes
        let (lo, hi) = unsafe {
            (_mm256_loadu_si256(b.as_ptr().cast()), _mm256_loadu_si256(b.as_ptr().add(32).cast()))
        };
        macro_rules! mask {
            ($f:ident) => {
                (_mm256_movemask_epi8($f!(lo)) as u32 as u64)
                    | ((_mm256_movemask_epi8($f!(hi)) as u32 as u64) << 32)
            };
        }
        macro_rules! range {
            ($v:expr, $lo:expr, $hi:expr) => {
                _mm256_cmpgt_epi8(
                    _mm256_set1_epi8(($hi - $lo) as i8 - 127),
                    _mm256_add_epi8($v, _mm256_set1_epi8(0x80u8.wrapping_sub($lo) as i8)),
                )
            };
        }
        macro_rules! is {
            ($v:expr, $c:expr) => {
                _mm256_cmpeq_epi8($v, _mm256_set1_epi8($c as i8))
            };
        }
        macro_rules! upper {
            ($v:expr) => {
                range!($v, b'A', b'Z')
            };
        }
        macro_rules! lower {
            ($v:expr) => {
                range!($v, b'a', b'z')
            };
        }
        macro_rules! digit {
            ($v:expr) => {
                range!($v, b'0', b'9')
            };
        }
        macro_rules! space {
            ($v:expr) => {
                _mm256_or_si256(range!($v, 0x09u8, 0x0du8), is!($v, b' '))
            };
        }
        macro_rules! newline {
            ($v:expr) => {
                _mm256_or_si256(is!($v, b'\n'), is!($v, b'\r'))
            };
        }
        macro_rules! slash {
            ($v:expr) => {
                is!($v, b'/')
            };
        }
        macro_rules! high {
            ($v:expr) => {
                $v
            };
        }
        macro_rules! blank {
            ($v:expr) => {
                is!($v, b' ')
            };
        }
        macro_rules! quote {
            ($v:expr) => {
                is!($v, b'\'')
            };
        }
        let newline = mask!(newline);
        Masks {
            upper: mask!(upper),
            lower: mask!(lower),
            digit: mask!(digit),
            space: mask!(space),
            newline,
            newline_slash: newline | mask!(slash),
            other: 0,
            high: mask!(high),
            blank: mask!(blank),
            quote: mask!(quote),
        }
    }
}

/// The masks of `s[base..base + 64]` by every classifier this processor runs, with the name of
/// each (the tests compare them).
pub fn masks_by_every_classifier(s: &[u8], base: usize) -> Vec<(Simd, Masks)> {
    let mut v = vec![(Simd::Portable, classify(s, base, portable_block))];
    #[cfg(target_arch = "x86_64")]
    {
        if Simd::Avx2.available() {
            // SAFETY: the processor has AVX2
            v.push((Simd::Avx2, classify(s, base, |b| unsafe { x86::block_avx2(b) })));
        }
        if Simd::Avx512.available() {
            // SAFETY: the processor has AVX-512BW
            v.push((Simd::Avx512, classify(s, base, |b| unsafe { x86::block_avx512(b) })));
        }
    }
    v
}

/// The driver: the masks of the block a chunk starts in and of the next, classified once each
/// as the chunks move on. Under o200k the chunk starts of a block after the first chunk that
/// starts in it are read from the masks at once ([`o200k_starts`]); every other chunk's end
/// comes from [`step`] or the character-level scanner.
#[inline(always)]
fn scan<const P: u8>(
    text: &str,
    block: impl Fn(&[u8; 64]) -> Masks,
    mut f: impl FnMut(usize, usize),
) {
    let s = text.as_bytes();
    let t = Text { s, bmp: bmp_table() };
    // `cur` holds the masks of block `k`, `next` of block `k + 1` (none yet)
    let (mut i, mut k) = (0, usize::MAX - 1);
    let (mut cur, mut next) = (Masks::default(), Masks::default());
    // the chunk starts of block `k` read from its masks and not yet reached
    let mut starts = 0u64;
    while i < s.len() {
        let kb = i >> 6;
        if kb != k {
            cur = if kb == k + 1 { next } else { classify(s, kb << 6, &block) };
            next = classify(s, (kb + 1) << 6, &block);
            k = kb;
            if P == O200K {
                starts = o200k_starts(&t, kb << 6, (i & 63) as u32, &cur, &next);
            }
        }
        if P == O200K && starts != 0 {
            // every start read from the masks ends the chunk before it; the chunk after the
            // last one goes to `step`
            let base = kb << 6;
            while starts != 0 {
                let end = base + starts.trailing_zeros() as usize;
                f(i, end);
                i = end;
                starts &= starts - 1;
            }
        }
        let end = match step::<P>(&t, i, &cur, &next) {
            0 if P == O200K => {
                let e = o200k_chunk_end(&t, i);
                // past a character the masks left undecided, the rest of the block's starts
                if e >> 6 == kb {
                    starts = o200k_starts(&t, kb << 6, (e & 63) as u32, &cur, &next);
                }
                e
            }
            0 if P == CL100K => cl100k_chunk_end::<true>(&t, i),
            0 => cl100k_chunk_end::<false>(&t, i),
            e => e,
        };
        f(i, end);
        i = end;
    }
}

/// The o200k chunk starts in the block at `base` (masks `cur`, the next block's `next`) after
/// bit `off`, where a chunk starts: bit `j` for a chunk starting at byte `base + j`. Only the
/// bytes before the first non-ASCII character from `off` on that is not a letter are decided
/// (every later bit is 0), and the chunk that runs into the next block is left to [`step`].
/// The non-ASCII letters before it count as upper-case (Lu, Lt), lower-case (Ll) or both
/// (Lm, Lo) over all their bytes, so the rules below read them as they read ASCII letters.
///
/// Over ASCII each rule of the pattern reads a byte or two around the start, given that the
/// chunk at `off` starts there (so nothing before `off` matters):
/// * a letter starts a chunk unless it follows a letter it may follow (not an upper-case one
///   after a lower-case one) or a prefix that starts a chunk (punctuation that does, or a
///   whitespace character other than a line break, which always does before a non-space);
/// * punctuation starts a chunk unless it follows punctuation of its run or a space (` ?`);
///   the line breaks and slashes right after a run of punctuation belong to it;
/// * a digit starts a chunk at the start of its run and every third one after;
/// * whitespace (the rest) starts a chunk where its run starts, at its last character before
///   a non-space (`\s+(?!\S)`), and after the run's last line break (`\s*[\r\n]+`);
/// * then a contraction after a word (`'s` ...) joins it, and the chunk after starts there.
#[inline(always)]
fn o200k_starts(t: &Text<'_>, base: usize, off: u32, cur: &Masks, next: &Masks) -> u64 {
    let valid = cur.upper | cur.lower | cur.digit | cur.space | cur.other | cur.high;
    let next_valid = next.upper | next.lower | next.digit | next.space | next.other | next.high;
    // the non-ASCII characters from `off` on, up to the first that is not a letter: their
    // bytes join the letter masks, Lu and Lt as upper-case, Ll as lower-case, Lm and Lo as
    // both (the pattern's two classes); from the first other one on the masks decide nothing
    let (mut upper, mut lower) = (cur.upper, cur.lower);
    let mut rest = cur.high & (u64::MAX << off);
    while rest != 0 {
        let j = rest.trailing_zeros();
        let (f, len) = t.at(base + j as usize);
        let bytes = ((1u64 << len) - 1) << j;
        match f & (LETTER | UPPER | LOWER) {
            x if x == LETTER | UPPER => upper |= bytes,
            x if x == LETTER | LOWER => lower |= bytes,
            x if x == LETTER | UPPER | LOWER => {
                upper |= bytes;
                lower |= bytes;
            }
            _ => break,
        }
        rest &= !bytes;
    }
    let both = upper & lower;
    let (upper, lower) = (upper & !both, lower & !both);
    // an upper-case letter after an Lm/Lo one ends a word there or not by what follows
    // (`U*L+` gives back the characters after the run's last Lm/Lo one unless a lower-case
    // letter follows the run): undecided
    let undecided = rest | (upper & (both << 1));
    #[cfg(test)]
    tests::NON_ASCII_DECIDED.with(|n| {
        let below =
            if undecided == 0 { u64::MAX } else { (1u64 << undecided.trailing_zeros()) - 1 };
        n.set(n.get() + ((cur.high & !rest & below).count_ones() as usize))
    });
    // a bit `j` is decided when bytes `j` and `j + 1` are classified
    let high = ((next.high as u128) << 64) | undecided as u128;
    let first_high = high.trailing_zeros();
    if first_high <= off + 1 {
        return 0;
    }
    let keep = if first_high > 64 { u64::MAX } else { u64::MAX >> (65 - first_high) };
    let after = (u64::MAX << off) << 1;

    let letter = upper | lower | both;
    let newline = cur.newline;
    let slash = cur.newline_slash & !newline;
    let blank_run = cur.space & !newline; // whitespace that is no line break
                                          // `[\r\n/]*` after punctuation (whose run ends at a line break): filled forward from there
    let mark = newline & (cur.other << 1) & after;
    let trail = newline | slash;
    // (`| mark`: a second mark in a run, where the carry from the first passes, stays in)
    let tail = ((mark.wrapping_add(trail) ^ trail) | mark) & trail;
    let other = cur.other & !tail;
    let punct = other & !((other | cur.blank) << 1);
    // a start that may be a word's prefix
    let prefix = ((punct | (1u64 << off)) & cur.other) | blank_run;
    // (a letter after an Lm/Lo one continues the word, or is undecided above)
    let word = letter & !(((letter & !(lower & (upper >> 1))) | prefix) << 1);
    // digits: from each run's start, every third while the run lasts
    let d = cur.digit;
    // (a run that starts before `off` counts from `off`: a non-ASCII digit may come before)
    let mut digits = ((d & !(d << 1)) | (1u64 << off)) & d & (u64::MAX << off);
    let three = d & (d << 1) & (d << 2);
    let mut x = digits;
    while x != 0 {
        x = (x << 3) & three;
        digits |= x;
    }
    // whitespace
    let ws = cur.space & !tail;
    let space_next = (cur.space >> 1) | (next.space << 63);
    let valid_next = (valid >> 1) | (next_valid << 63);
    let mut spaces = (ws & !(ws << 1)) | (blank_run & !space_next & valid_next);
    // after a line break: a start unless the blanks after it end at another line break
    let mut after_nl = blank_run & (newline << 1) & after & keep;
    let mut keep = keep;
    if after_nl != 0 {
        let run = ((next.space & !next.newline) as u128) << 64 | blank_run as u128;
        let nl = ((next.newline as u128) << 64) | newline as u128;
        while after_nl != 0 {
            let j = after_nl.trailing_zeros();
            after_nl &= after_nl - 1;
            let e = (!(run >> j)).trailing_zeros() + j;
            if e >= 128 || (high >> e) & 1 != 0 {
                keep &= (1u64 << j) - 1; // undecided here: from `j` on the scanners decide
                break;
            }
            if (nl >> e) & 1 == 0 {
                spaces |= 1u64 << j;
            }
        }
    }
    let mut starts = (word | punct | digits | spaces) & valid & after & keep;
    // contractions after a word, in order: one that ends at the next quote makes it no
    // contraction's
    let mut quotes = cur.quote & (letter << 1) & after & keep;
    let mut last_end = 0;
    while quotes != 0 {
        let j = quotes.trailing_zeros() as usize;
        quotes &= quotes - 1;
        if j == last_end {
            continue;
        }
        let n = t.contraction_ci(base + j + 1);
        if n > 0 {
            let e = j + 1 + n;
            let covered = if e >= 64 { u64::MAX } else { (1u64 << e) - 1 };
            starts &= !(covered & (u64::MAX << j));
            if e < 64 && base + e < t.s.len() {
                starts |= (1u64 << e) & keep;
            }
            last_end = e;
        }
    }
    starts
}

/// The end of the o200k chunk at `i` read from the masks of the block `i` is in (`cur`) and the
/// next, or 0 when the character-level scanner must decide (a non-ASCII character at or after
/// the chunk that may belong to it, or a chunk reaching past its 64-byte window).
///
/// Over ASCII the pattern's alternatives come to: a letter starts a word, an upper-case run and
/// a lower-case run after it, and a contraction after that; a digit starts up to 3 digits; a
/// character that is not a letter, digit or line break in front of a letter starts a word with
/// it; punctuation (or a space in front of it) starts its run and the `[\r\n/]` after it;
/// whitespace starts its run, cut after the run's last line break if it has one, else whole at
/// the end of the text, else without its last character when it has two or more.
#[inline(always)]
fn step<const P: u8>(t: &Text<'_>, i: usize, cur: &Masks, next: &Masks) -> usize {
    let s = t.s;
    let b = s[i];
    if b >= 0x80 {
        return 0;
    }
    if P != O200K && b == b'\'' {
        // cl100k's contractions come first, and stand alone
        let k = t.contraction_ci(i + 1);
        if k > 0 {
            return i + 1 + k;
        }
    }
    let off = (i & 63) as u32;
    // the 64 bytes from `i` of a class: bit 0 is byte `i`
    let win = |a: u64, b: u64| -> u64 { ((((b as u128) << 64) | a as u128) >> off) as u64 };
    let upper = win(cur.upper, next.upper);
    let lower = win(cur.lower, next.lower);
    let high = win(cur.high, next.high);
    let letter = upper | lower;
    if letter & 1 != 0 {
        return word::<P>(t, i, 0, upper, lower, high);
    }
    if b == b' ' && letter & 2 != 0 {
        return word::<P>(t, i, 1, upper, lower, high); // the commonest chunk of prose, a space and a word
    }
    let digit = win(cur.digit, next.digit);
    if digit & 1 != 0 {
        let n = (!digit).trailing_zeros();
        return if n >= 3 {
            i + 3
        } else if (high >> n) & 1 != 0 {
            0 // a non-ASCII digit may continue the number
        } else {
            i + n as usize
        };
    }
    if high & 2 != 0 {
        return 0; // the character after this one decides
    }
    let other = win(cur.other, next.other);
    let space = win(cur.space, next.space);
    let newline = win(cur.newline, next.newline);
    // `[^\r\n\p{L}\p{N}]` in front of a letter
    if (other | (space & !newline)) & (letter >> 1) & 1 != 0 {
        return word::<P>(t, i, 1, upper, lower, high);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*` (cl100k: `[\r\n]*`)
    let from = if other & 1 != 0 {
        0
    } else if b == b' ' && other & 2 != 0 {
        1
    } else {
        64
    };
    if from < 64 {
        let e = (!other & (u64::MAX << from)).trailing_zeros();
        if e == 64 || (high >> e) & 1 != 0 {
            return 0; // a non-ASCII character may continue the run
        }
        let tail = if P == O200K { win(cur.newline_slash, next.newline_slash) } else { newline };
        let e = e + (!(tail >> e)).trailing_zeros();
        return if e >= 64 { 0 } else { i + e as usize };
    }
    // whitespace: `\s*[\r\n]+`, `\s+(?!\S)`, `\s+` (cl100k: `\s++$` first; Llama 3: `\s+(?!\S)`
    // at the end of the text after the line breaks)
    let n = (!space).trailing_zeros();
    if n == 64 || (high >> n) & 1 != 0 {
        return 0; // a non-ASCII space may continue the run
    }
    let lines = newline & ((1u64 << n) - 1);
    let at_end = i + n as usize == s.len();
    if P != O200K && at_end && (P == CL100K || lines == 0) {
        s.len()
    } else if lines != 0 {
        i + 64 - lines.leading_zeros() as usize
    } else if at_end {
        s.len()
    } else if n >= 2 {
        i + n as usize - 1
    } else {
        i + 1
    }
}

/// The end of the word from bit `from` of the window at `i` (masks as in [`step`]), or 0.
/// o200k: `U*L+` else `U+L*`, over ASCII an upper-case run and a lower-case run, and its
/// contraction; cl100k: `\p{L}+`.
#[inline(always)]
fn word<const P: u8>(
    t: &Text<'_>,
    i: usize,
    from: u32,
    upper: u64,
    lower: u64,
    high: u64,
) -> usize {
    let case = if P == O200K { (lower << 1) & upper } else { 0 };
    let stop = (!(upper | lower) | case) & (u64::MAX << from);
    let e = stop.trailing_zeros();
    if e == 64 || (high >> e) & 1 != 0 {
        return 0; // past the window, or a non-ASCII letter or mark may continue the word
    }
    let j = i + e as usize;
    if P == O200K && t.s.get(j) == Some(&b'\'') {
        contraction_suffix(t, j)
    } else {
        j
    }
}

#[cfg(test)]
mod tests {
    use super::super::openai::{cl100k_scalar, o200k_scalar};
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Bytes of non-ASCII characters whose class `o200k_starts` decided from the masks.
        pub(super) static NON_ASCII_DECIDED: Cell<usize> = const { Cell::new(0) };
    }

    fn every_simd() -> Vec<Simd> {
        let v: Vec<Simd> = [Simd::Portable, Simd::Avx2, Simd::Avx512]
            .into_iter()
            .filter(|s| s.available())
            .collect();
        // the machine the tests run on says which ones ran
        eprintln!("block classifiers tested: {v:?}");
        v
    }

    const GRAMMARS: [u8; 3] = [O200K, CL100K, LLAMA3];

    fn chunks_with(simd: Simd, g: u8, s: &str) -> Vec<(usize, usize)> {
        let mut v = vec![];
        let f = |a, b| v.push((a, b));
        match g {
            O200K => split_with::<O200K>(simd, s, f),
            CL100K => split_with::<CL100K>(simd, s, f),
            _ => split_with::<LLAMA3>(simd, s, f),
        }
        v
    }

    fn scalar(g: u8, s: &str) -> Vec<(usize, usize)> {
        let mut v = vec![];
        let f = |a, b| v.push((a, b));
        match g {
            O200K => o200k_scalar(s, f),
            CL100K => cl100k_scalar::<true>(s, f),
            _ => cl100k_scalar::<false>(s, f),
        }
        v
    }

    #[test]
    fn every_classifier_gives_the_portable_masks() {
        // every byte value at every place of a block, the block whole or cut short
        for b in 0..=255u8 {
            for at in 0..64 {
                let mut s = [b'a'; 64];
                s[at] = b;
                for len in [64, at + 1] {
                    let v = masks_by_every_classifier(&s[..len], 0);
                    for (simd, m) in &v[1..] {
                        assert_eq!(*m, v[0].1, "{simd:?} byte {b:#x} at {at}, {len} bytes");
                    }
                }
            }
        }
        // and by hand: "Ab1 \n/!" and a two-byte character
        let m = masks_by_every_classifier("Ab1 \n/!\u{e9}".as_bytes(), 0);
        for (_, m) in m {
            assert_eq!(m.upper, 0b1);
            assert_eq!(m.lower, 0b10);
            assert_eq!(m.digit, 0b100);
            assert_eq!(m.space, 0b11000);
            assert_eq!(m.newline, 0b10000);
            assert_eq!(m.newline_slash, 0b110000);
            assert_eq!(m.other, 0b1100000);
            assert_eq!(m.high, 0b110000000);
            assert_eq!(m.blank, 0b1000);
            assert_eq!(m.quote, 0);
        }
        let m = masks_by_every_classifier(b"x' 'y", 0);
        for (_, m) in m {
            assert_eq!(m.blank, 0b100);
            assert_eq!(m.quote, 0b1010);
        }
    }

    #[test]
    fn examples() {
        for simd in every_simd() {
            let chunks = |g: u8, s: &'static str| -> Vec<&'static str> {
                chunks_with(simd, g, s).into_iter().map(|(a, b)| &s[a..b]).collect()
            };
            let c = |s| chunks(O200K, s);
            assert_eq!(c("HelloWorld"), ["Hello", "World"]);
            assert_eq!(c("HELLO world's"), ["HELLO", " world's"]);
            assert_eq!(c("a  \n  "), ["a", "  \n", "  "]);
            assert_eq!(c("x!/\n/y"), ["x", "!/\n/", "y"]);
            assert_eq!(c("  42 'x"), [" ", " ", "42", " '", "x"]);
            assert_eq!(c("1234567"), ["123", "456", "7"]);
            assert_eq!(c("\tabc\r\n\r\nDon'T"), ["\tabc", "\r\n\r\n", "Don'T"]);
            assert_eq!(c("caf\u{e9} \u{a0} x"), ["caf\u{e9}", " \u{a0}", " x"]);
            let c = |s| chunks(CL100K, s);
            assert_eq!(c("I'M here, don't"), ["I", "'M", " here", ",", " don", "'t"]);
            assert_eq!(c("a  \n  "), ["a", "  \n  "]);
            assert_eq!(c("HelloWorld!/\n/"), ["HelloWorld", "!/\n", "/"]);
            assert_eq!(chunks(LLAMA3, "a  \n  "), ["a", "  \n", "  "]);
        }
    }

    /// Pieces that meet at every kind of boundary the pattern has.
    const PIECES: &[&str] = &[
        "a",
        "word",
        "Word",
        "WORD",
        "wORD",
        "HelloWorld",
        "x",
        "Q",
        "'s",
        "'S",
        "'t",
        "'T",
        "'re",
        "'RE",
        "'rE",
        "'ve",
        "'VE",
        "'m",
        "'M",
        "'ll",
        "'LL",
        "'lL",
        "'d",
        "'D",
        "'",
        "'x",
        "''",
        "0",
        "12",
        "345",
        "6789",
        "12345",
        "123456",
        "1234567",
        " ",
        "  ",
        "   ",
        "\t",
        "\t\t",
        "\n",
        "\n\n",
        "\r\n",
        "\r",
        " \n",
        "\n ",
        "\x0b",
        "\x0c",
        "/",
        "//",
        "!",
        "?!",
        ".",
        ",",
        "-",
        "\"",
        "(",
        ")",
        "\x00",
        "\x1f",
        "!\n/\r\n/",
        "\n  ",
        " \n \t",
        "x'd's",
        "\x7f",
        "\u{e9}",
        "\u{c9}",
        "\u{df}",
        "\u{3a9}",
        "\u{3c9}",
        "\u{4e2d}",
        "\u{301}",
        "\u{2b0}",
        "\u{a0}",
        "\u{3000}",
        "\u{2028}",
        "\u{85}",
        "\u{663}",
        "\u{2164}",
        "\u{b2}",
        "\u{2014}",
        "\u{17f}",
        "\u{1f600}",
        "\u{1d400}",
        "\u{1d41a}",
        "\u{10400}",
        // words of two- and three-byte letters of each class the block path reads: Ll, Lu
        // (Latin-1, Latin Extended, Greek, Cyrillic), Lo (CJK, kana, Hangul), Lm, and both
        // cases mixed with ASCII and with each other
        "\u{fc}ber",
        "Stra\u{df}e",
        "\u{c4}rger",
        "\u{141}\u{f3}d\u{17a}",
        "\u{17c}\u{f3}\u{142}w",
        "\u{3a9}\u{3bc}\u{3ad}\u{3b3}\u{3b1}",
        "\u{41f}\u{440}\u{438}\u{432}\u{435}\u{442}",
        "\u{43c}\u{438}\u{440}",
        "\u{41c}\u{418}\u{420}",
        "\u{4e2d}\u{6587}\u{5b57}",
        "\u{3072}\u{3089}\u{304c}\u{306a}",
        "\u{30ab}\u{30bf}\u{30ab}\u{30ca}",
        "\u{d55c}\u{ad6d}\u{c5b4}",
        "\u{2b0}\u{2b1}",
        "\u{1c5}",
        "x\u{4e2d}Y",
        "\u{4e2d}A",
        "\u{4e2d}a",
        "A\u{4e2d}",
        "a\u{4e2d}B",
        "\u{fc}'s",
        "\u{4e2d}'t",
        "'\u{17f}",
    ];

    #[test]
    fn the_block_scanner_equals_the_character_scanner() {
        let simds = every_simd();
        let mut state = 0x5eed_u64;
        let mut next = |n: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % n
        };
        let fills = ["x", " ", "\n", "7", "!", "\u{e9}", "X", "\t", "\u{436}", "\u{4e2d}"];
        // every third text ASCII only, where o200k's whole blocks are read from the masks
        let ascii: Vec<&str> = PIECES.iter().copied().filter(|p| p.is_ascii()).collect();
        for round in 0..40_000 {
            // a run of one filler to put the interesting part at every offset of a block
            let fill = fills[round % fills.len()];
            let mut text = fill.repeat(next(70));
            let pieces = 1 + next(if round % 10 == 0 { 120 } else { 12 });
            for _ in 0..pieces {
                let p = if round % 3 == 1 {
                    ascii[next(ascii.len())]
                } else {
                    PIECES[next(PIECES.len())]
                };
                // sometimes a long run of one piece, to cross block edges inside it
                let times = if next(8) == 0 { 1 + next(40) } else { 1 };
                for _ in 0..times {
                    text.push_str(p);
                }
            }
            for g in GRAMMARS {
                let want = scalar(g, &text);
                for &simd in &simds {
                    assert_eq!(chunks_with(simd, g, &text), want, "{g} {simd:?} on {text:?}");
                }
                // and every prefix of a short text, so runs end at the end of the text
                if text.len() < 80 && round % 4 == 0 {
                    for cut in (0..text.len()).filter(|&c| text.is_char_boundary(c)) {
                        let s = &text[..cut];
                        let want = scalar(g, s);
                        for &simd in &simds {
                            assert_eq!(chunks_with(simd, g, s), want, "{g} {simd:?} on {s:?}");
                        }
                    }
                }
            }
        }
        // the texts drew non-ASCII letters whose classes the block path read
        assert!(NON_ASCII_DECIDED.with(|n| n.get()) > 10_000);
    }

    #[test]
    fn non_ascii_words_are_read_from_the_masks() {
        // German, Russian and Chinese prose: every non-ASCII character a letter, so the masks
        // decide them all (each text 64 bytes and more, so a block's starts are read at once)
        let texts = [
            "Ein Mathematikprofessor tr\u{e4}gt sein Fahrrad \u{fc}ber den Universit\u{e4}tsplatz, gr\u{fc}\u{df}end.",
            "\u{41f}\u{440}\u{438}\u{432}\u{435}\u{442} \u{43c}\u{438}\u{440} \u{41f}\u{440}\u{438}\u{432}\u{435}\u{442} \u{43c}\u{438}\u{440} \u{41f}\u{440}\u{438}\u{432}\u{435}\u{442} \u{43c}\u{438}\u{440} \u{41c}\u{418}\u{420}, x",
            "\u{4e2d}\u{6587}\u{5b57} Vim \u{4e2d}\u{6587}\u{5b57}\u{4e2d}\u{6587}\u{5b57} \u{3072}\u{3089}\u{304c}\u{306a} \u{d55c}\u{ad6d}\u{c5b4} abc \u{4e2d}\u{6587} \u{30ab}\u{30bf}\u{30ab}\u{30ca}",
        ];
        for text in texts {
            let want = scalar(O200K, text);
            for simd in every_simd() {
                NON_ASCII_DECIDED.with(|n| n.set(0));
                assert_eq!(chunks_with(simd, O200K, text), want, "{simd:?} on {text:?}");
                // by hand: the non-ASCII bytes of the first block, each one decided
                let first = text.as_bytes()[..64].iter().filter(|&&b| b >= 0x80).count();
                assert!(NON_ASCII_DECIDED.with(|n| n.get()) >= first, "{simd:?} on {text:?}");
            }
        }
    }

    #[test]
    fn runs_ending_at_block_edges_and_at_the_end() {
        let simds = every_simd();
        let runs = [" ", "\n", "\r\n", "a", "A", "!", "/", "1", "\t", " \n"];
        for lead in 0..130 {
            for r in runs {
                for len in [1, 2, 3, 63, 64, 65, 127, 128, 129] {
                    for tail in ["", "x", " x", "\u{e9}", "\n", "!", "'s", "\u{a0}"] {
                        let text = format!("{}{}{}", "b".repeat(lead), r.repeat(len), tail);
                        for g in GRAMMARS {
                            let want = scalar(g, &text);
                            for &simd in &simds {
                                let got = chunks_with(simd, g, &text);
                                assert_eq!(got, want, "{g} {simd:?} on {text:?}");
                            }
                        }
                    }
                }
            }
        }
    }
}
