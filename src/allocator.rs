//! The binaries' allocator: stock jemalloc wherever it builds (not MSVC), whose
//! thread cache returns the block freed last, still in cache (docs/perf.md).

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
