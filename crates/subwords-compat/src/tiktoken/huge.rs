//! A zero-filled table that the kernel may back with 2 MiB pages.
//!
//! The rank table of o200k_base is 12 MB, probed at a random slot once a chunk: `perf` put 80% of
//! the whole-chunk lookup's samples on the load of the first slot. On 4 KiB pages such a probe
//! can miss the TLB as well as the cache; in huge pages it cannot (the gain measured was within
//! the machine's noise, `benchmarks/README.md`). On Linux a table of at least one huge page is a mapping of its own, its table
//! aligned to 2 MiB and advised `MADV_HUGEPAGE` before the first write, so that under the usual
//! `madvise` policy it faults in as huge pages and a few TLB entries cover it. Elsewhere, or when
//! the kernel declines, it is ordinary zeroed memory; nothing but the speed depends on it.

use std::ops::{Deref, DerefMut};

#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// A type for which every byte zero is a valid value.
///
/// # Safety
/// Implement only for plain data whose all-zero bit pattern is a value (integers and structs of
/// them).
pub(crate) unsafe trait ZeroValid: Copy {}

/// A slice of `len` zeroed `T`s, in huge-page-friendly memory when it is large (module header).
pub(crate) struct ZeroTable<T: ZeroValid> {
    ptr: *mut T,
    len: usize,
    /// The mapping to unmap (start, bytes); None when `ptr` came from a `Box<[T]>`.
    map: Option<(usize, usize)>,
}

// SAFETY: the table owns its elements alone, as a `Box<[T]>` does.
unsafe impl<T: ZeroValid + Send> Send for ZeroTable<T> {}
// SAFETY: shared access hands out `&[T]` only.
unsafe impl<T: ZeroValid + Sync> Sync for ZeroTable<T> {}

impl<T: ZeroValid> ZeroTable<T> {
    pub(crate) fn zeroed(len: usize) -> Self {
        #[cfg(target_os = "linux")]
        if let Some(t) = Self::mapped(len) {
            return t;
        }
        // SAFETY: `T: ZeroValid`
        let boxed: Box<[T]> = vec![unsafe { std::mem::zeroed::<T>() }; len].into_boxed_slice();
        ZeroTable { len, ptr: Box::into_raw(boxed).cast::<T>(), map: None }
    }

    #[cfg(target_os = "linux")]
    fn mapped(len: usize) -> Option<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        if bytes < HUGE_PAGE || std::mem::align_of::<T>() > 4096 {
            return None;
        }
        let total = bytes.checked_add(HUGE_PAGE)?;
        // SAFETY: a fresh anonymous private mapping; it is zero-filled and aliases nothing
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let start = (base as usize).next_multiple_of(HUGE_PAGE);
        // SAFETY: `start..start + bytes` lies inside the mapping (`total` has a huge page to
        // spare); advice changes no contents, and a refusal leaves ordinary pages
        unsafe { libc::madvise(start as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE) };
        Some(ZeroTable { ptr: start as *mut T, len, map: Some((base as usize, total)) })
    }
}

impl<T: ZeroValid> Deref for ZeroTable<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised (zeroed or written) elements this table owns
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: ZeroValid> DerefMut for ZeroTable<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is the only access
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: ZeroValid> Drop for ZeroTable<T> {
    fn drop(&mut self) {
        match self.map {
            #[cfg(target_os = "linux")]
            Some((base, total)) => {
                // SAFETY: the mapping this table made, unmapped once
                unsafe { libc::munmap(base as *mut libc::c_void, total) };
            }
            #[cfg(not(target_os = "linux"))]
            Some(_) => unreachable!("only Linux maps"),
            None => {
                // SAFETY: `ptr` and `len` are those of the `Box<[T]>` made in `zeroed`
                drop(unsafe {
                    Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr, self.len))
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    struct Pair(u64, u32);
    // SAFETY: two integers
    unsafe impl ZeroValid for Pair {}

    #[test]
    fn small_and_large_tables_start_zeroed_and_keep_what_is_written() {
        for len in [0, 3, 1 << 18] {
            let mut t = ZeroTable::<Pair>::zeroed(len);
            assert_eq!(t.len(), len);
            assert!(t.iter().all(|p| p.0 == 0 && p.1 == 0));
            for (i, p) in t.iter_mut().enumerate() {
                *p = Pair(i as u64, 7);
            }
            assert!(t.iter().enumerate().all(|(i, p)| p.0 == i as u64 && p.1 == 7));
        }
    }
}
