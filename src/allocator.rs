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
//!   page's free blocks before any block freed since, so a freed block comes
//!   back only after the rest of its page. `perf record` of a chars4 replay
//!   of the 200 MB synthetic corpus put 8.0 % of its samples in
//!   `_mi_page_malloc`, nearly all on one load: the next free block's link,
//!   a cache miss per allocation (0.5 % of the instructions). The kernel
//!   zeroing fresh pages took 3.2 % more.
//! - jemalloc's per-thread cache hands out the block freed last, still in
//!   cache. The same replay spends about 4 % of its samples in the allocator
//!   and 0.5 % zeroing pages.
//!
//! Alternating runs, jemalloc against mimalloc 2 (same tree, same build
//! flags):
//! - 200 MB, replay chars4 `--jobs 1`, 6 runs each: wall 2.29-2.55 s
//!   (median 2.45) against 2.59-2.82 s (median 2.65); user 2.08-2.30 s
//!   against 2.32-2.46 s; peak RSS 61 MB against 86 MB.
//! - 2 GB, the same replay on all cores: 14.8 s against 16.7 s, user 26.4 s
//!   against 31.1 s, peak RSS 238 MB against 374 MB.
//! - 200 MB, five-preset `compare --jobs 1`, 4 runs each: 6.0-8.1 s against
//!   7.0-8.3 s (the noise is as large as the difference), 155 MB against
//!   193 MB.
//! - The 72-point sweep of the real corpus, 5 runs each: 0.29-0.38 s against
//!   0.26-0.42 s, 92 MB against 107 MB.
//! - The parse floor: 0.29 s either way.
//!
//! jemalloc's defaults are kept: never purging freed memory, or a larger
//! thread cache, measured the same. (glibc's malloc, measured in an earlier
//! session, matched a replay but made the sweep 30 % slower.)

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
