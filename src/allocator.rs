//! The binaries' allocator (`compactor` and `compactor-bench`, which includes
//! this file, so the parse floor is measured with the replay's allocator):
//! jemalloc, through tikv-jemallocator, wherever it builds (not MSVC, which
//! keeps the system allocator).
//!
//! A replay allocates and frees millions of small strings and vectors (atoms,
//! names, summary lines, views): about 1.8 M allocations for 50 MB of logs.
//! What an allocation costs in wall time is mostly whether the block it
//! returns is still in cache:
//! - mimalloc (this project's allocator until then, version 2) hands out a
//!   page's free list first and puts what is freed on a second list, taken
//!   up only when the first runs out: a freed block comes back late.
//!   `perf record` of a chars4 replay of the 200 MB synthetic corpus put
//!   8.0 % of its samples in
//!   `_mi_page_malloc`, nearly all on one load: the next free block's link,
//!   a cache miss per allocation (0.5 % of the instructions). The kernel
//!   zeroing fresh pages took 3.2 % more.
//! - jemalloc's per-thread cache hands out the block freed last, still in
//!   cache. The same replay spends about 4 % of its samples in the allocator
//!   and 0.5 % zeroing pages.
//!
//! Alternating runs against mimalloc 2 (same tree and build flags; jemalloc
//! with the growth path below; MB of peak RSS as `bench.sh` gives them):
//! - 200 MB, replay chars4 `--jobs 1`, 5 runs each: wall 2.31-2.59 s
//!   (median 2.48) against 2.59-3.21 s (median 3.04), user 2.07-2.31 s
//!   against 2.25-2.86 s, peak RSS 60 MB against 84 MB. It runs 2.7 % more
//!   instructions (50 MB: 3,341 M against 3,254 M): the gain is all in
//!   memory stalls.
//! - 200 MB, five-preset `compare --jobs 1`, 4 runs each: 5.7-7.1 s against
//!   7.0-7.9 s, 151 MB against 188 MB.
//! - The 72-point sweep of the real corpus on all cores, 6 runs each:
//!   0.28-0.33 s against 0.25-0.38 s, 89 MB against 104 MB; 2.8 % more
//!   instructions (`--jobs 1`: 3,194 M against 3,106 M).
//! - 2 GB on all cores (transcripts written, so the disk sets the pace), 3
//!   runs each: 15.7-16.0 s, and once 22.2 s with 5 s of system time,
//!   against 15.9-16.7 s; 229-232 MB against 360-365 MB.
//! - The parse floor: 0.29 s either way.
//!
//! jemalloc's defaults are kept: never purging freed memory, a larger thread
//! cache or a slower cache collection measured the same or within 1 %.
//! (glibc's malloc, measured in an earlier session, matched a replay but
//! made the sweep 30 % slower.)

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: Jemalloc = Jemalloc;

/// jemalloc, with the growth of a small block done by `GlobalAlloc`'s
/// default `realloc` (allocate, copy, free: each on jemalloc's thread-cache
/// fast path, through [`FastPaths`]) rather than by jemalloc's `realloc`,
/// which reaches the same through the arena's slow path: in a sweep of the
/// real corpus (about 190,000 growths of vectors and strings) it took about
/// 650 instructions a call with the copy, and the sweep ran 5.1 % more
/// instructions than under mimalloc; 2.8 % with this path.
#[cfg(not(target_env = "msvc"))]
struct Jemalloc;

/// jemalloc's allocation and free, and nothing else: its `realloc` is
/// `GlobalAlloc`'s default, built on those two.
#[cfg(not(target_env = "msvc"))]
struct FastPaths;

/// Blocks up to this size grow through [`FastPaths`]: jemalloc's small
/// classes (up to 14 KB with 4 KB pages), where a vector or string that
/// doubles always needs another block. (A growth that would fit the block's
/// own class is copied too: rare, where asking the block's class would cost
/// every growth a lookup.) Larger blocks can grow in place, which only
/// jemalloc's `realloc` does.
#[cfg(not(target_env = "msvc"))]
const GROW_BY_COPY_MAX: usize = 8 * 1024;

#[cfg(not(target_env = "msvc"))]
// SAFETY: every call is passed on to `tikv_jemallocator::Jemalloc` with the
// caller's arguments; `realloc`'s default builds on these two.
unsafe impl std::alloc::GlobalAlloc for FastPaths {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract is jemalloc's.
        unsafe { tikv_jemallocator::Jemalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from jemalloc, through `alloc` here or `Jemalloc`.
        unsafe { tikv_jemallocator::Jemalloc.dealloc(ptr, layout) }
    }
}

#[cfg(not(target_env = "msvc"))]
// SAFETY: every call is passed on, with the caller's arguments, to
// `tikv_jemallocator::Jemalloc` or to `FastPaths` (the same allocator), so
// each block is freed and grown by the allocator that made it.
unsafe impl std::alloc::GlobalAlloc for Jemalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract is jemalloc's.
        unsafe { tikv_jemallocator::Jemalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe { tikv_jemallocator::Jemalloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as `alloc`.
        unsafe { tikv_jemallocator::Jemalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`, for either path.
        unsafe {
            if new_size > layout.size() && layout.size() <= GROW_BY_COPY_MAX {
                FastPaths.realloc(ptr, layout, new_size)
            } else {
                tikv_jemallocator::Jemalloc.realloc(ptr, layout, new_size)
            }
        }
    }
}

#[cfg(all(test, not(target_env = "msvc")))]
mod tests {
    /// Blocks grown through `FastPaths` (small) and jemalloc's `realloc`
    /// (large, and shrinking) keep their bytes and their alignment.
    #[test]
    fn growth_keeps_contents_and_alignment() {
        #[repr(align(64))]
        struct Wide(u64);

        let mut bytes: Vec<u8> = Vec::new();
        let mut wide: Vec<Wide> = Vec::new();
        for i in 0..3 * super::GROW_BY_COPY_MAX {
            bytes.push((i % 251) as u8);
            if i % 16 == 0 {
                wide.push(Wide(i as u64));
                assert_eq!(wide.as_ptr() as usize % 64, 0, "alignment lost at {} elements", wide.len());
            }
        }
        assert!(bytes.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        assert!(wide.iter().enumerate().all(|(k, w)| w.0 == 16 * k as u64));
        // A string grown by small reserves, then shrunk.
        let mut s = String::new();
        let mut want = String::new();
        for k in 0..2_000 {
            s.reserve_exact(3);
            let piece = format!("{:03}", k % 1000);
            s.push_str(&piece);
            want.push_str(&piece);
        }
        assert_eq!(s, want);
        s.truncate(100);
        s.shrink_to_fit();
        assert_eq!(s, want[..100]);
    }
}
