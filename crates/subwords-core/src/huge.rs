//! Tables that the kernel may back with 2 MiB pages (Linux's transparent huge pages).
//!
//! The encoders' largest tables are read at random: o200k's short-token table is 12 MB, and a
//! word cache grows to megabytes on a long text. On 4 KiB pages such a table spans thousands of
//! pages, more than the processor's address cache (TLB) holds, so a probe that misses the data
//! cache also waits for a page walk. A table of at least [`HUGE_FROM`] bytes therefore gets an
//! anonymous mapping of its own, 2 MiB-aligned and advised `MADV_HUGEPAGE` before anything is
//! written to it: under Linux's usual `madvise` policy it faults in as a few huge pages. (Carved
//! from the allocator's heap instead, it would often land in memory already faulted in as small
//! pages, which advice cannot change.) Smaller tables, other systems, a policy of `never`, or a
//! mapping the system refuses: ordinary memory, with the same contents and behaviour.
//!
//! Performance notes: o200k, 1 MB of 16 KB chunks, a fresh encoder, pinned, best of 8, the
//! process's whole heap advised for huge pages (glibc's `hugetlb` tunable) against not:
//! multilingual 39.3-40.8 -> 41.3-42.4 MB/s; fastokens, the fastest peer, maps its tables so.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use memmap2::{MmapMut, MmapOptions};

/// The size of a huge page on x86-64 and most 64-bit Arm kernels.
const HUGE_PAGE: usize = 2 << 20;

/// Tables of at least this many bytes get a mapping of their own (a smaller one would round up
/// to a whole huge page of memory).
pub const HUGE_FROM: usize = 1 << 20;

/// A boxed slice of `T` in memory advised for huge pages when it is large; it dereferences to
/// `[T]`.
pub struct HugeTable<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
    /// Owns the memory `ptr` points into: a mapping, or a boxed slice.
    _store: Store<T>,
}

enum Store<T> {
    Mapped(#[allow(dead_code)] MmapMut),
    Heap(#[allow(dead_code)] Box<[T]>),
}

// SAFETY: a `HugeTable` owns its elements alone, as a `Box<[T]>` does; the pointer is into
// memory only it holds.
unsafe impl<T: Copy + Send> Send for HugeTable<T> {}
// SAFETY: as above; a shared reference hands out only `&[T]`.
unsafe impl<T: Copy + Sync> Sync for HugeTable<T> {}

impl<T: Copy> HugeTable<T> {
    /// `len` copies of `fill`.
    pub fn filled(len: usize, fill: T) -> Self {
        let bytes = len.checked_mul(size_of::<T>()).expect("table size overflows");
        if bytes >= HUGE_FROM {
            if let Some(t) = Self::mapped(len, bytes, fill) {
                return t;
            }
        }
        Self::heap(vec![fill; len].into_boxed_slice())
    }

    /// A copy of `items`.
    pub fn from_slice(items: &[T]) -> Self {
        match items.first() {
            None => Self::heap(Box::default()),
            Some(&first) => {
                let mut t = Self::filled(items.len(), first);
                t.copy_from_slice(items);
                t
            }
        }
    }

    fn heap(mut items: Box<[T]>) -> Self {
        let ptr = NonNull::new(items.as_mut_ptr()).expect("a boxed slice's pointer is never null");
        HugeTable { ptr, len: items.len(), _store: Store::Heap(items) }
    }

    /// Whether the table has a mapping of its own (advised for huge pages where the system
    /// has them).
    pub fn is_mapped(&self) -> bool {
        matches!(self._store, Store::Mapped(_))
    }

    /// A mapping of `bytes` rounded up to whole huge pages, with a huge page more so that it
    /// can start on a 2 MiB boundary; None if the system refuses it.
    fn mapped(len: usize, bytes: usize, fill: T) -> Option<Self> {
        let span = bytes.next_multiple_of(HUGE_PAGE);
        let map = MmapOptions::new().len(span + HUGE_PAGE).map_anon().ok()?;
        let base = map.as_ptr() as usize;
        let offset = base.next_multiple_of(HUGE_PAGE) - base;
        #[cfg(target_os = "linux")]
        // only advice: refused (a kernel without huge pages), the table keeps small pages
        let _ = map.advise_range(memmap2::Advice::HugePage, offset, span);
        debug_assert!(offset.is_multiple_of(align_of::<T>()) && offset + bytes <= map.len());
        let at = map.as_ptr().wrapping_add(offset) as *mut T;
        for i in 0..len {
            // SAFETY: the mapping is `span + HUGE_PAGE` bytes from a page boundary, `offset`
            // is below a huge page and a multiple of `T`'s alignment (a power of two dividing
            // 2 MiB), so element `i < len` lies inside it, aligned; nothing else refers to it
            unsafe { at.add(i).write(fill) };
        }
        let ptr = NonNull::new(at)?;
        Some(HugeTable { ptr, len, _store: Store::Mapped(map) })
    }
}

impl<T: Copy> Deref for HugeTable<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` points to `len` elements, all written when the table was made, in
        // memory `_store` owns for as long as `self` lives
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> DerefMut for HugeTable<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is the only way to the elements
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Clone for HugeTable<T> {
    fn clone(&self) -> Self {
        Self::from_slice(self)
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for HugeTable<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HugeTable")
            .field("len", &self.len)
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_what_was_written_on_both_sides_of_the_size_line() {
        // 1 MiB / 8 bytes = 131,072 u64s: the first length a mapping of its own takes
        for len in [0usize, 1, 5, 131_071, 131_072, 131_072 * 3 + 7] {
            let mut t = HugeTable::filled(len, 7u64);
            assert_eq!(t.len(), len);
            assert!(t.iter().all(|&x| x == 7));
            assert_eq!(t.is_mapped(), len >= 131_072, "len {len}");
            if len > 1 {
                t[len - 1] = 9;
                t[0] = 3;
                let c = t.clone();
                assert_eq!((c[0], c[len - 1]), (3, 9));
                assert_eq!(c.len(), len);
            }
            if t.is_mapped() {
                assert_eq!(t.as_ptr() as usize % HUGE_PAGE, 0, "a mapped table starts on 2 MiB");
            }
        }
    }

    #[test]
    fn a_table_of_structs_keeps_each_field() {
        #[derive(Clone, Copy, PartialEq, Debug)]
        struct Slot {
            lo: u64,
            hi: u64,
            rank: u32,
        }
        let fill = Slot { lo: 1, hi: 2, rank: 3 };
        let n = (HUGE_FROM / size_of::<Slot>()) + 1;
        let mut t = HugeTable::filled(n, fill);
        assert!(t.is_mapped());
        t[n / 2].rank = 44;
        assert_eq!(t[n / 2], Slot { lo: 1, hi: 2, rank: 44 });
        assert_eq!(t[n - 1], fill);
        let v: Vec<Slot> = t.to_vec();
        assert_eq!(&*HugeTable::from_slice(&v), &v[..]);
    }
}
