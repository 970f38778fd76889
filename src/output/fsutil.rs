//! Safe, atomic output files. Everything compactor writes goes through here:
//! names derived from untrusted session ids are sanitized so they can never leave
//! `--out`, and files are written to a temporary sibling and renamed into place so
//! an interrupted run never leaves a partial report.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Longest file-name stem we produce (bytes), well under common 255-byte limits.
const MAX_STEM: usize = 100;

/// Turn an arbitrary id into a file-name stem that is safe on every platform:
/// only `[A-Za-z0-9._-]`, no leading dot, no `..`, bounded length. When anything
/// had to change, a short hash of the original is appended so two different ids
/// never map to the same name.
pub fn safe_stem(id: &str) -> String {
    let mut out = String::with_capacity(id.len().min(MAX_STEM));
    for c in id.chars() {
        let ok = c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        out.push(if ok { c } else { '_' });
    }
    while out.contains("..") {
        out = out.replace("..", "_");
    }
    let trimmed = out.trim_start_matches(['.', '-']).to_string();
    let changed = trimmed != id || trimmed.len() > MAX_STEM;
    let mut stem = trimmed;
    if stem.len() > MAX_STEM {
        stem.truncate(MAX_STEM);
    }
    if stem.is_empty() {
        stem.push_str("session");
    }
    if changed {
        stem.push_str(&format!("-{:016x}", fnv1a(id.as_bytes())));
    }
    stem
}

/// FNV-1a 64: a tiny stable hash for disambiguating sanitized names.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Create the output directory (and parents) if missing. An existing directory is
/// used as is: compactor never deletes anything in it.
pub fn ensure_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Write `bytes` to `path` atomically: a temporary file in the same directory,
/// flushed and synced, then renamed over the target.
///
/// On Linux the temporary file is anonymous (`O_TMPFILE`) while it is written
/// and only gets a name once complete, so even a run killed with SIGKILL
/// leaves no partial file behind, and, when `path` is new, not even a hidden
/// one (replacing an existing `path` links a hidden sibling first and renames
/// it, a window of two system calls). Elsewhere (or on a file
/// system without `O_TMPFILE`) it is a hidden `.NAME.tmp-PID-N` sibling, which a
/// SIGKILL mid-write can leave (never under the target's name).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    atomic_write_with(path, |w| w.write_all(bytes))
}

/// [`atomic_write`] for content produced piece by piece: `fill` writes into a
/// buffered temporary file, which is synced and put in place only if `fill`
/// succeeds.
pub fn atomic_write_with(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    write_in_place(path, fill, true)
}

/// [`atomic_write`] without the sync: a killed process still never leaves a
/// partial file (the bytes are in the page cache before the name appears), only
/// a crash of the machine can lose the file. For transcripts: syncing each one
/// cost a disk flush per session and policy, and the reports (report.json
/// last) are still synced, so a run whose report.json is on disk is complete.
pub fn atomic_write_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    atomic_write_unsynced_with(path, |w| w.write_all(bytes))
}

/// [`atomic_write_unsynced`] for content produced piece by piece (see
/// [`atomic_write_with`]).
pub fn atomic_write_unsynced_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    write_in_place(path, fill, false)
}

fn write_in_place(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    sync: bool,
) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // `fill` is called once: it goes to whichever way of writing is tried first
    // and can still take it.
    let mut fill = Some(fill);
    #[cfg(target_os = "linux")]
    if let Some(result) = anonymous::write(dir, &name, path, &mut fill, sync) {
        return result;
    }
    let Some(fill) = fill.take() else {
        return Err(std::io::Error::other("the anonymous write failed after writing"));
    };
    via_named_tmp(dir, &name, path, sync, |f| {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
        fill(&mut w)?;
        w.into_inner().map_err(std::io::IntoInnerError::into_error)
    })
}

/// Write a new temporary sibling of `path` (`fill` gets it and hands it back
/// written), sync it when asked, and rename it over `path`; the temporary file
/// is removed when anything fails.
fn via_named_tmp(
    dir: &Path,
    name: &str,
    path: &Path,
    sync: bool,
    fill: impl FnOnce(std::fs::File) -> std::io::Result<std::fs::File>,
) -> std::io::Result<()> {
    let tmp = unique_tmp(dir, name);
    let result = (|| {
        let f = fill(std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?)?;
        if sync {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A read-write scratch file in `dir` that has no name (or loses it at once), so
/// that nothing of it is left behind however the process ends: the streaming
/// replay spools `calls.csv` rows in it. `O_TMPFILE` on Linux; elsewhere a
/// hidden file removed right after it is opened.
pub fn scratch_file(dir: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        if let Ok(f) =
            std::fs::OpenOptions::new().read(true).write(true).mode(0o600).custom_flags(libc::O_TMPFILE).open(dir)
        {
            return Ok(f);
        }
    }
    let tmp = unique_tmp(dir, "scratch");
    let f = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&tmp)?;
    // An open file outlives its name on Unix; elsewhere the removal fails and
    // the file is removed by its owner (see the callers) or stays hidden.
    let _ = std::fs::remove_file(&tmp);
    Ok(f)
}

/// `O_TMPFILE` + `linkat`: the file has no name until its bytes are written.
#[cfg(target_os = "linux")]
mod anonymous {
    use std::io::Write;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    use std::path::Path;

    type Fill<F> = Option<F>;

    /// `None` when anonymous files are not available here (old kernel, a file
    /// system without them, no /proc) and `fill` was not taken: the caller uses
    /// a named temporary file.
    pub fn write<F: FnOnce(&mut dyn Write) -> std::io::Result<()>>(
        dir: &Path,
        name: &str,
        path: &Path,
        fill: &mut Fill<F>,
        sync: bool,
    ) -> Option<std::io::Result<()>> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o644)
            .custom_flags(libc::O_TMPFILE)
            .open(dir)
            .ok()?;
        let fill = fill.take()?;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
        let written = fill(&mut w).and_then(|()| w.into_inner().map_err(std::io::IntoInnerError::into_error));
        let f = match written {
            Ok(f) => f,
            Err(e) => return Some(Err(e)),
        };
        if sync && let Err(e) = f.sync_all() {
            return Some(Err(e));
        }
        // `linkat` only makes new names. A target that does not exist yet (a
        // fresh --out) gets the complete file's name directly, so no instant
        // exists at which a kill leaves anything else behind; an existing
        // target is replaced through a hidden sibling and one rename (a kill
        // between the two can leave that sibling, complete, never a partial
        // file under the target's name).
        match link(&f, path) {
            Ok(()) => return Some(Ok(())),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            // No way to name it (no /proc): `fill` is spent, so its bytes are
            // copied to a named temporary file instead.
            Err(_) => return Some(copy_to_named(f, dir, name, path, sync)),
        }
        let tmp = super::unique_tmp(dir, name);
        if link(&f, &tmp).is_err() {
            return Some(copy_to_named(f, dir, name, path, sync));
        }
        let renamed = std::fs::rename(&tmp, path);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        Some(renamed)
    }

    /// Give the anonymous file `f` the name `dst` (which must not exist).
    fn link(f: &std::fs::File, dst: &Path) -> std::io::Result<()> {
        let src = std::ffi::CString::new(format!("/proc/self/fd/{}", f.as_raw_fd())).map_err(std::io::Error::other)?;
        let dst = std::ffi::CString::new(dst.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
        // SAFETY: two valid NUL-terminated paths; AT_FDCWD; no pointers kept.
        let r = unsafe {
            libc::linkat(libc::AT_FDCWD, src.as_ptr(), libc::AT_FDCWD, dst.as_ptr(), libc::AT_SYMLINK_FOLLOW)
        };
        if r == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
    }

    fn copy_to_named(mut f: std::fs::File, dir: &Path, name: &str, path: &Path, sync: bool) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        super::via_named_tmp(dir, name, path, sync, |mut named| {
            f.seek(SeekFrom::Start(0))?;
            std::io::copy(&mut f, &mut named)?;
            Ok(named)
        })
    }
}

/// A hidden name in `dir` that no other file of this process gets: for a file
/// renamed into place right after (see [`crate::report::write`]).
pub fn pending_path(dir: &Path, tag: &str) -> PathBuf {
    unique_tmp(dir, tag)
}

fn unique_tmp(dir: &Path, name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hostile_ids_become_safe_names() {
        for id in ["../../etc/x", "/abs/path", "a\0b", "..", ".hidden", "", "CON", "a/b\\c:d"] {
            let s = safe_stem(id);
            assert!(!s.contains('/') && !s.contains('\\') && !s.contains('\0') && !s.contains(".."), "{id:?} → {s}");
            assert!(!s.starts_with('.'), "{id:?} → {s}");
            assert!(!s.is_empty());
        }
        assert_eq!(safe_stem("abc-123_x.y"), "abc-123_x.y");
        assert_ne!(safe_stem("a/b"), safe_stem("a_b"));
        assert!(safe_stem(&"x".repeat(10_000)).len() <= MAX_STEM + 17);
    }

    #[test]
    fn atomic_write_into_a_missing_dir_fails_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("missing/report.json");
        assert!(atomic_write(&p, b"x").is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.json");
        atomic_write(&p, b"one").unwrap();
        atomic_write(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1);
    }

    /// The names created in a directory while `act` runs, in order (inotify:
    /// creations and renames into it).
    #[cfg(target_os = "linux")]
    fn names_created_in(dir: &Path, act: impl FnOnce()) -> Vec<String> {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: plain system calls on a descriptor this function owns and
        // closes; the buffer outlives the reads into it.
        unsafe {
            let fd = libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC);
            assert!(fd >= 0);
            let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
            assert!(libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_CREATE | libc::IN_MOVED_TO) >= 0);
            act();
            let mut names = Vec::new();
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
                if n <= 0 {
                    break;
                }
                let mut at = 0usize;
                let head = std::mem::size_of::<libc::inotify_event>();
                while at + head <= n as usize {
                    let ev: libc::inotify_event = std::ptr::read_unaligned(buf.as_ptr().add(at).cast());
                    let raw = &buf[at + head..at + head + ev.len as usize];
                    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
                    names.push(String::from_utf8_lossy(&raw[..end]).into_owned());
                    at += head + ev.len as usize;
                }
            }
            libc::close(fd);
            names
        }
    }

    /// A new file gets no name but its own, at no moment: a run killed at any
    /// instant (SIGKILL) leaves nothing hidden in a fresh --out. Replacing a
    /// file goes through one hidden sibling, renamed over it.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_new_file_is_only_ever_named_as_itself() {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        if std::fs::OpenOptions::new().write(true).custom_flags(libc::O_TMPFILE).open(dir.path()).is_err() {
            eprintln!("skipped: this file system has no O_TMPFILE (the named fallback is used)");
            return;
        }
        let created = names_created_in(dir.path(), || atomic_write_unsynced(&p, b"{}\n").unwrap());
        assert_eq!(created, ["t.jsonl"]);
        let created = names_created_in(dir.path(), || atomic_write(&p, b"{\"a\":1}\n").unwrap());
        assert_eq!(created.len(), 2, "{created:?}");
        assert!(created[0].starts_with(".t.jsonl.tmp-"), "{created:?}");
        assert_eq!(created[1], "t.jsonl");
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n");
    }

    proptest! {
        #[test]
        fn safe_stem_never_escapes(id in ".*") {
            let s = safe_stem(&id);
            let joined = Path::new("/out").join(&s);
            prop_assert_eq!(joined.parent(), Some(Path::new("/out")));
            prop_assert!(s != "." && s != "..");
        }
    }
}
