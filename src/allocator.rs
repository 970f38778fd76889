//! The binaries' allocator (`compactor` and `compactor-bench`, which includes
//! this file, so the parse floor is measured with the replay's allocator).
//!
//! A replay allocates and frees millions of small strings and vectors (atoms,
//! summary lines, views); with glibc's malloc a fifth of a sweep was spent in
//! the allocator. mimalloc: sweep -24 %, replay -17 % (user time, `--jobs 1`,
//! the corpus).

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
/// has been free for a while (1 s by default; mimalloc purges in bulk, 361
/// times in a replay of 1.3 s). mimalloc backs its arenas with transparent
/// huge pages, and a purge then a fault of a 2 MB page has the kernel zero
/// all of it again: a chars4 replay of the 50 MB synthetic corpus spent
/// 0.18-0.24 s of 1.3 s in system time clearing pages, a 72-point sweep of
/// the corpus 0.09-0.21 s of 1 s; never purging, 0.01-0.08 s. What was
/// freed is reused, not returned, so peak resident memory moves little: a
/// chars4 replay of 200 MB peaked at 118 MB (110 before) at `--jobs 1` and
/// 147 MB (165) at `--jobs 2`, and a 2 GB corpus at 405 MB. A purge delay
/// set in the environment (`MIMALLOC_PURGE_DELAY`) is left as it is.
pub fn tune() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's option values (a plain store), which
        // it reads at each purge decision; the index is checked by the test.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
}

#[cfg(test)]
mod tests {
    /// The option set is the purge delay: its default is mimalloc's 1000 ms,
    /// and `tune` turns purging off.
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
        assert_eq!((before, after), (1000, -1));
    }
}
