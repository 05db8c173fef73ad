//! The candidate heap: a max-heap of 16-byte `(count, pair)` entries with lazy deletion
//! ([`PairHeap`]), ordered by the tie rule ([`Order`]: the score, compared exactly as a fraction,
//! then the tie keys by symbol id, through their 8-byte heads first).

use std::cmp::Ordering;

use super::unpack;

/// A candidate pair with its score `num / den` (`den` is 1 for counts, `count(a) · count(b)` for
/// WordPiece).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cand {
    pub(super) num: u64,
    pub(super) den: u128,
    pub(super) pair: u64,
}

/// The tie rule's order on candidates: `Greater` ranks first. The larger score first, then
/// (WordPiece) the smaller joined text, then the smaller `(left, right)` by tie keys, then the
/// smaller pair id (only equal entries of one pair get that far).
pub(super) struct Order<'k> {
    pub(super) keys: &'k [Box<[u8]>],
    /// Each key's first 8 bytes (see [`key_head`]), by symbol id.
    pub(super) heads: &'k [u64],
    pub(super) base: u32,
    pub(super) joined_first: bool,
}

/// A tie key's first 8 bytes as a big-endian number, zero-padded. Two heads that differ order
/// as their keys do (at the first byte where the padded heads differ, either both keys have a
/// byte, or the shorter key has ended and is a prefix of the longer); only equal heads need the
/// keys themselves. Most of the heap's tie-breaks end at the heads: no pointer to follow, no
/// `memcmp` call.
pub(super) fn key_head(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

impl Order<'_> {
    #[inline]
    fn key(&self, s: u32) -> &[u8] {
        &self.keys[(s - self.base) as usize]
    }
    /// The keys of `x` and `y` compared, through their heads first.
    #[inline]
    fn cmp_keys(&self, x: u32, y: u32) -> Ordering {
        let (hx, hy) = (self.heads[(x - self.base) as usize], self.heads[(y - self.base) as usize]);
        if hx != hy {
            return hx.cmp(&hy);
        }
        self.key(x).cmp(self.key(y))
    }
    /// Whether `x` ranks strictly before `y` when both are plain counts (denominator 1) and the
    /// joined texts are not compared first (BPE's heap): the counts, and the tie keys through
    /// their heads, inline; keys with equal heads go to [`Order::cmp`]. The heap's comparisons
    /// were a call each, with one more per tie key (English, `front`: 2.2 M comparisons, half of
    /// them ties).
    #[inline(always)]
    pub(super) fn before_counts(&self, x: &Cand, y: &Cand) -> bool {
        debug_assert!(!self.joined_first && x.den == 1 && y.den == 1);
        if x.num != y.num {
            return x.num > y.num;
        }
        if x.pair == y.pair {
            return false;
        }
        let (xa, xb) = unpack(x.pair);
        let (ya, yb) = unpack(y.pair);
        let (hx, hy) =
            (self.heads[(xa - self.base) as usize], self.heads[(ya - self.base) as usize]);
        if hx != hy {
            return hx < hy;
        }
        if xa == ya {
            let (hx, hy) =
                (self.heads[(xb - self.base) as usize], self.heads[(yb - self.base) as usize]);
            if hx != hy {
                return hx < hy;
            }
        }
        self.cmp_cold(x, y) == Ordering::Greater
    }
    #[cold]
    #[inline(never)]
    fn cmp_cold(&self, x: &Cand, y: &Cand) -> Ordering {
        self.cmp(x, y)
    }
    pub(super) fn cmp(&self, x: &Cand, y: &Cand) -> Ordering {
        cmp_fraction(x.num, x.den, y.num, y.den).then_with(|| {
            if x.pair == y.pair {
                return Ordering::Equal;
            }
            let (xa, xb) = unpack(x.pair);
            let (ya, yb) = unpack(y.pair);
            (if self.joined_first {
                cmp_joined(self.key(ya), self.key(yb), self.key(xa), self.key(xb))
            } else {
                Ordering::Equal
            })
            .then_with(|| self.cmp_keys(ya, xa))
            .then_with(|| self.cmp_keys(yb, xb))
            .then_with(|| y.pair.cmp(&x.pair))
        })
    }
}

/// A max-heap of candidates in the tie rule's order, with lazy deletion (see `Engine::best`).
///
/// An entry is 16 bytes: the count and the pair; WordPiece's denominators sit in a parallel
/// array that BPE leaves empty (its denominator is always 1). The tie keys are not in the
/// entries: the order looks them up by symbol id in the engine's key table, so an entry holds no
/// pointers (a `BinaryHeap` of entries carrying two `Rc` keys and a `u128` took 80 bytes each).
#[derive(Default)]
pub(super) struct PairHeap {
    pub(super) nums: Vec<(u64, u64)>,
    pub(super) dens: Vec<u128>,
    pub(super) wide: bool,
}

impl PairHeap {
    pub(super) fn new(wide: bool) -> Self {
        PairHeap { nums: Vec::new(), dens: Vec::new(), wide }
    }
    pub(super) fn len(&self) -> usize {
        self.nums.len()
    }
    #[inline]
    fn get(&self, i: usize) -> Cand {
        let (num, pair) = self.nums[i];
        Cand { num, den: if self.wide { self.dens[i] } else { 1 }, pair }
    }
    /// Whether the entries are plain counts in an order that does not compare the joined texts
    /// first: the heap's moves then go through [`Order::before_counts`] on the entries as they
    /// lie, through a hole instead of swaps (the search for the best pair on English
    /// 138 M -> 95 M instructions).
    #[inline(always)]
    fn narrow(&self, order: &Order<'_>) -> bool {
        !self.wide && !order.joined_first
    }
    /// Whether `x` ranks strictly before `y` (see [`Order::before_counts`] for the narrow heap,
    /// whose orders never compare the joined texts first).
    #[inline(always)]
    fn gt(&self, x: &Cand, y: &Cand, order: &Order<'_>) -> bool {
        if self.wide || order.joined_first {
            order.cmp(x, y) == Ordering::Greater
        } else {
            order.before_counts(x, y)
        }
    }
    #[inline]
    fn swap(&mut self, i: usize, j: usize) {
        self.nums.swap(i, j);
        if self.wide {
            self.dens.swap(i, j);
        }
    }
    pub(super) fn peek(&self) -> Option<Cand> {
        (!self.nums.is_empty()).then(|| self.get(0))
    }
    pub(super) fn push(&mut self, c: Cand, order: &Order<'_>) {
        self.nums.push((c.num, c.pair));
        if self.wide {
            self.dens.push(c.den);
        }
        if self.narrow(order) {
            let last = self.nums.len() - 1;
            rise(&mut self.nums, last, (c.num, c.pair), order);
            return;
        }
        let mut i = self.nums.len() - 1;
        while i > 0 {
            let up = (i - 1) / 2;
            if !self.gt(&c, &self.get(up), order) {
                break;
            }
            self.swap(i, up);
            i = up;
        }
    }
    pub(super) fn pop(&mut self, order: &Order<'_>) -> Option<Cand> {
        let n = self.nums.len();
        if n == 0 {
            return None;
        }
        let top = self.get(0);
        self.swap(0, n - 1);
        self.nums.pop();
        if self.wide {
            self.dens.pop();
        }
        self.sift_down_to_bottom(order);
        Some(top)
    }
    /// Replaces the top entry with `c` (a popped entry's re-push in one pass down, instead of a
    /// pass down for the pop and one up for the push).
    pub(super) fn replace_top(&mut self, c: Cand, order: &Order<'_>) {
        self.nums[0] = (c.num, c.pair);
        if self.wide {
            self.dens[0] = c.den;
        }
        self.sift_down(0, order);
    }
    /// The root's entry (the last one, moved there by `pop`) taken down to a leaf along the
    /// better children, one comparison a level, then up to its place: it came from the bottom
    /// and mostly belongs near it, so this takes about half the comparisons of [`Self::sift_down`]
    /// (the way `std`'s `BinaryHeap::pop` does it).
    fn sift_down_to_bottom(&mut self, order: &Order<'_>) {
        let n = self.nums.len();
        if n <= 1 {
            return;
        }
        if self.narrow(order) {
            // the same moves through a hole: each entry written once, not swapped
            let v = &mut self.nums;
            let moved = v[0];
            let mut i = 0;
            loop {
                let l = 2 * i + 1;
                if l >= n {
                    break;
                }
                let best = narrow_child(v, l, n, order);
                v[i] = v[best];
                i = best;
            }
            rise(v, i, moved, order);
            return;
        }
        let moved = self.get(0);
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let best = self.better_child(l, n, order);
            self.swap(i, best);
            i = best;
        }
        while i > 0 {
            let up = (i - 1) / 2;
            if !self.gt(&moved, &self.get(up), order) {
                break;
            }
            self.swap(i, up);
            i = up;
        }
    }
    /// Of the children `l` and `l + 1` (if there is one below `n`), the one that comes first.
    #[inline]
    fn better_child(&self, l: usize, n: usize, order: &Order<'_>) -> usize {
        if l + 1 < n && self.gt(&self.get(l + 1), &self.get(l), order) {
            l + 1
        } else {
            l
        }
    }
    pub(super) fn sift_down(&mut self, mut i: usize, order: &Order<'_>) {
        let n = self.nums.len();
        if self.narrow(order) {
            let v = &mut self.nums;
            let x = v[i];
            loop {
                let l = 2 * i + 1;
                if l >= n {
                    break;
                }
                let best = narrow_child(v, l, n, order);
                if !order.before_counts(&narrow(v[best]), &narrow(x)) {
                    break;
                }
                v[i] = v[best];
                i = best;
            }
            v[i] = x;
            return;
        }
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let best = self.better_child(l, n, order);
            if !self.gt(&self.get(best), &self.get(i), order) {
                break;
            }
            self.swap(i, best);
            i = best;
        }
    }
    /// Replaces the contents with `items` and restores the heap order (O(n)).
    pub(super) fn rebuild(&mut self, items: Vec<Cand>, order: &Order<'_>) {
        self.nums = items.iter().map(|c| (c.num, c.pair)).collect();
        self.dens = if self.wide { items.iter().map(|c| c.den).collect() } else { Vec::new() };
        drop(items);
        for i in (0..self.nums.len() / 2).rev() {
            self.sift_down(i, order);
        }
    }
}

/// Puts `x` in the narrow heap `v` at the hole `i` or above it: each entry it passes moves down
/// one level into the hole, written once.
#[inline(always)]
fn rise(v: &mut [(u64, u64)], mut i: usize, x: (u64, u64), order: &Order<'_>) {
    while i > 0 {
        let up = (i - 1) / 2;
        if !order.before_counts(&narrow(x), &narrow(v[up])) {
            break;
        }
        v[i] = v[up];
        i = up;
    }
    v[i] = x;
}

/// [`PairHeap::better_child`] on a narrow heap's entries.
#[inline(always)]
fn narrow_child(v: &[(u64, u64)], l: usize, n: usize, order: &Order<'_>) -> usize {
    if l + 1 < n && order.before_counts(&narrow(v[l + 1]), &narrow(v[l])) {
        l + 1
    } else {
        l
    }
}

/// A narrow heap's entry as a candidate (its denominator is 1).
#[inline(always)]
fn narrow((num, pair): (u64, u64)) -> Cand {
    Cand { num, den: 1, pair }
}

/// `a · b` as a 256-bit number (hi, lo).
fn mul_wide(a: u64, b: u128) -> (u128, u128) {
    let (bh, bl) = (b >> 64, b & u64::MAX as u128);
    let lo = a as u128 * bl;
    let mid = a as u128 * bh;
    let (low, carry) = lo.overflowing_add(mid << 64);
    ((mid >> 64) + carry as u128, low)
}

/// Compares `a1 / b1` with `a2 / b2` exactly.
pub(super) fn cmp_fraction(a1: u64, b1: u128, a2: u64, b2: u128) -> Ordering {
    if b1 == b2 {
        return a1.cmp(&a2);
    }
    // both denominators in 64 bits (two counts below 2^32 each, as on any corpus short of
    // billions of symbols): each product is one 64 x 64 -> 128-bit multiplication, exact
    if (b1 | b2) >> 64 == 0 {
        return (a1 as u128 * b2 as u64 as u128).cmp(&(a2 as u128 * b1 as u64 as u128));
    }
    mul_wide(a1, b2).cmp(&mul_wide(a2, b1))
}

/// Compares `a1 ++ a2` with `b1 ++ b2` without building them: slice by slice (a `memcmp` each,
/// at most three), not byte by byte through chained iterators.
pub(super) fn cmp_joined(a1: &[u8], a2: &[u8], b1: &[u8], b2: &[u8]) -> Ordering {
    let (mut x, mut x_next) = (a1, a2);
    let (mut y, mut y_next) = (b1, b2);
    loop {
        if x.is_empty() {
            if x_next.is_empty() {
                return if y.is_empty() && y_next.is_empty() {
                    Ordering::Equal
                } else {
                    Ordering::Less
                };
            }
            (x, x_next) = (x_next, &[]);
            continue;
        }
        if y.is_empty() {
            if y_next.is_empty() {
                return Ordering::Greater;
            }
            (y, y_next) = (y_next, &[]);
            continue;
        }
        let n = x.len().min(y.len());
        match x[..n].cmp(&y[..n]) {
            Ordering::Equal => (x, y) = (&x[n..], &y[n..]),
            o => return o,
        }
    }
}

#[cfg(test)]
mod cmp_joined_tests {
    use super::cmp_joined;

    /// `cmp_joined` against the joined byte strings themselves, on every way of cutting a few
    /// strings in two (empty halves, prefixes of each other, equal texts cut differently).
    #[test]
    fn cmp_joined_orders_as_the_joined_texts_do() {
        let texts: [&[u8]; 9] =
            [b"", b"a", b"ab", b"abc", b"abd", b"b", b"##ab", b"\xe2\x96\x81a", b"aab"];
        let mut checked = 0;
        for x in texts {
            for y in texts {
                for i in 0..=x.len() {
                    for j in 0..=y.len() {
                        let (a1, a2) = x.split_at(i);
                        let (b1, b2) = y.split_at(j);
                        assert_eq!(
                            cmp_joined(a1, a2, b1, b2),
                            x.cmp(y),
                            "{a1:?}+{a2:?} vs {b1:?}+{b2:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 500);
    }
}

#[cfg(test)]
mod key_head_tests {
    use super::key_head;
    use std::cmp::Ordering;

    /// Heads that differ order as the keys do; the pairs listed with equal heads are the ones the
    /// order must settle on the keys themselves.
    #[test]
    fn differing_heads_order_as_the_keys_do() {
        let keys: [&[u8]; 12] = [
            b"",
            b"\0",
            b"a",
            b"a\0",
            b"ab",
            b"abcdefgh",
            b"abcdefgha",
            b"abcdefgz",
            b"b",
            b"\xe2\x96\x81",
            b"\xe2\x96\x81a",
            b"~",
        ];
        let mut equal = Vec::new();
        for x in keys {
            for y in keys {
                let (hx, hy) = (key_head(x), key_head(y));
                if hx == hy {
                    if x != y {
                        equal.push((x, y));
                    }
                } else {
                    assert_eq!(hx.cmp(&hy), x.cmp(y), "{x:?} vs {y:?}");
                }
            }
        }
        // "" and "\0" pad alike, as do "a" and "a\0", and two keys that agree on 8 bytes
        let e: &[(&[u8], &[u8])] = &[
            (b"", b"\0"),
            (b"\0", b""),
            (b"a", b"a\0"),
            (b"a\0", b"a"),
            (b"abcdefgh", b"abcdefgha"),
            (b"abcdefgha", b"abcdefgh"),
        ];
        assert_eq!(equal, e);
        assert_eq!(key_head(b"ab").cmp(&key_head(b"b")), Ordering::Less);
    }
}

#[cfg(test)]
mod before_counts_tests {
    use super::{key_head, Cand, Order, PairHeap};
    use crate::learners::merge::pack;
    use std::cmp::Ordering;

    /// Keys that tie on their heads (a shared 8-byte prefix, a key and its zero-padded self) and
    /// keys that do not, so both the inline path and the full comparison are taken.
    fn keys() -> Vec<Box<[u8]>> {
        let texts: [&[u8]; 10] = [
            b"a",
            b"a\0",
            b"ab",
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefghj",
            b"b",
            b"\xe2\x96\x81the",
            b"\xe2\x96\x81then",
            b"",
        ];
        texts.iter().map(|t| t.to_vec().into_boxed_slice()).collect()
    }

    /// `before_counts` says "ranks first" exactly where the full order says `Greater`, on every
    /// pair of candidates over a few counts and every pair of those symbols.
    #[test]
    fn before_counts_agrees_with_the_full_order() {
        let keys = keys();
        let heads: Vec<u64> = keys.iter().map(|k| key_head(k)).collect();
        let base = 7u32;
        let order = Order { keys: &keys, heads: &heads, base, joined_first: false };
        let n = keys.len() as u32;
        let mut cands = Vec::new();
        for a in base..base + n {
            for b in base..base + n {
                for num in [1u64, 2] {
                    cands.push(Cand { num, den: 1, pair: pack(a, b) });
                }
            }
        }
        let (mut first, mut ties_on_heads) = (0, 0);
        for x in &cands {
            for y in &cands {
                let full = order.cmp(x, y) == Ordering::Greater;
                assert_eq!(order.before_counts(x, y), full, "{x:?} vs {y:?}");
                first += full as usize;
                let (xa, ya) = (x.pair >> 32, y.pair >> 32);
                if x.num == y.num
                    && xa != ya
                    && heads[(xa as u32 - base) as usize] == heads[(ya as u32 - base) as usize]
                {
                    ties_on_heads += 1;
                }
            }
        }
        // a strict order: half of the ordered pairs of distinct candidates rank first
        let m = cands.len();
        assert_eq!(first, m * (m - 1) / 2);
        assert!(ties_on_heads > 0);
    }

    /// A heap of those candidates pops them in the full order, best first.
    #[test]
    fn the_narrow_heap_pops_in_the_full_order() {
        let keys = keys();
        let heads: Vec<u64> = keys.iter().map(|k| key_head(k)).collect();
        let base = 3u32;
        let order = Order { keys: &keys, heads: &heads, base, joined_first: false };
        let n = keys.len() as u32;
        let mut cands = Vec::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for a in base..base + n {
            for b in base..base + n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                cands.push(Cand { num: 1 + x % 3, den: 1, pair: pack(a, b) });
            }
        }
        let mut heap = PairHeap::new(false);
        for c in &cands {
            heap.push(*c, &order);
        }
        let mut popped = Vec::new();
        while let Some(c) = heap.pop(&order) {
            popped.push(c);
        }
        let mut sorted = cands.clone();
        sorted.sort_by(|x, y| order.cmp(y, x));
        assert_eq!(popped, sorted);
        // built in one pass, and with each top replaced by a lower count once before it pops
        let mut heap = PairHeap::new(false);
        heap.rebuild(cands.clone(), &order);
        let mut lowered = std::collections::HashSet::new();
        let mut popped = Vec::new();
        while let Some(top) = heap.peek() {
            if top.num > 1 && lowered.insert(top.pair) {
                heap.replace_top(Cand { num: top.num - 1, ..top }, &order);
                continue;
            }
            popped.push(heap.pop(&order).unwrap());
        }
        let mut want: Vec<Cand> =
            cands.iter().map(|c| Cand { num: c.num - (c.num > 1) as u64, ..*c }).collect();
        want.sort_by(|x, y| order.cmp(y, x));
        assert_eq!(popped, want);
    }
}
