//! The binaries' allocator (`compactor` and `compactor-bench`, which includes
//! this file, so the parse floor is measured with the replay's allocator).
//!
//! A replay allocates and frees millions of small strings and vectors (atoms,
//! summary lines, views); with glibc's malloc a fifth of a sweep was spent in
//! the allocator. mimalloc: sweep -24 %, replay -17 % (user time, `--jobs 1`,
//! the corpus).
//!
//! Version 2 of mimalloc (the `v2` feature), not the crate's default 3: both
//! run a replay in the same instructions (3,342 M and 3,340 M, chars4, 50 MB
//! synthetic corpus), but version 3 touches twice the fresh memory (37 huge
//! pages faulted in against 18), which this VM's kernel zeroes in system time
//! that varies run to run. Alternating runs on that corpus (5 of each, 3 for
//! `compare` and `--jobs 2`), version 2 against 3: replay chars4 `--jobs 1`
//! 0.66 s against 0.72 s wall (peak RSS 48 MB against 88 MB), o200k 0.73
//! against 0.80 s (116 MB, 146 MB), a five-preset `compare --jobs 1` 1.53
//! against 1.78 s (77 MB, 139 MB), the chars4 replay at `--jobs 2` 0.31
//! against 0.35 s (70 MB, 135 MB); a 72-point sweep of the corpus 0.26 s
//! either way. On the 200 MB bench corpus `compare` took 8.7 s against 8.5 s
//! (5 runs each, within the noise: 7.5-9.9 s) in 193 MB against 250 MB.
//! glibc's malloc, measured again then, matched the replay (0.64 s, 34 MB)
//! but made the sweep 30 % slower.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in `mimalloc.h` (v2 and v3 alike; libmimalloc-sys
/// names its neighbours 14 and 16 but not it).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

unsafe extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    #[cfg(test)]
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
}

/// Keep freed memory instead of returning it to the OS ("purging") once it
/// has been free for a while (10 ms by default in version 2, 1 s in 3).
/// mimalloc backs its memory with transparent huge pages, and a purge then a
/// fault of a 2 MB page has the kernel zero all of it again: under version 3
/// (which purges in bulk, 361 times in a replay of 1.3 s) a chars4 replay of
/// the 50 MB synthetic corpus spent 0.18-0.24 s of 1.3 s in system time
/// clearing pages, a 72-point sweep of the corpus 0.09-0.21 s of 1 s; never
/// purging, 0.01-0.08 s. Version 2 purges less: never purging and its
/// default measured the same (replay 0.70 and 0.67 s, sweep 0.27 and 0.28 s,
/// 4 alternating runs); purging stays off so that the cost cannot come back
/// with a change of version. What was freed is reused, not returned. A purge
/// delay set in the environment (`MIMALLOC_PURGE_DELAY`) is left as it is.
pub fn tune() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's option values (a plain store), which
        // it reads at each purge decision; the index is checked by the test.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
}

#[cfg(test)]
mod tests {
    /// The option set is the purge delay: its default is mimalloc 2's 10 ms
    /// (3's is 1000 ms: the build links version 2), and `tune` turns purging
    /// off.
    #[test]
    fn tune_turns_purging_off() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            eprintln!("skipped: MIMALLOC_PURGE_DELAY is set, and tune() leaves it as it is");
            return;
        }
        // SAFETY: reads an option value.
        let before = unsafe { super::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        super::tune();
        let after = unsafe { super::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert_eq!((before, after), (10, -1));
    }
}
