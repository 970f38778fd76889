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
/// leaves no partial file behind, not even a hidden one. Elsewhere (or on a file
/// system without `O_TMPFILE`) it is a hidden `.NAME.tmp-PID-N` sibling, which a
/// SIGKILL mid-write can leave (never under the target's name).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    #[cfg(target_os = "linux")]
    if let Some(result) = anonymous::write(dir, &name, path, bytes) {
        return result;
    }
    let tmp = unique_tmp(dir, &name);
    let result = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// `O_TMPFILE` + `linkat`: the file has no name until its bytes are on disk.
#[cfg(target_os = "linux")]
mod anonymous {
    use std::io::Write;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    use std::path::Path;

    /// `None` when anonymous files are not available here (old kernel, a file
    /// system without them, no /proc): the caller uses a named temporary file.
    pub fn write(dir: &Path, name: &str, path: &Path, bytes: &[u8]) -> Option<std::io::Result<()>> {
        let mut f = std::fs::OpenOptions::new().write(true).mode(0o644).custom_flags(libc::O_TMPFILE).open(dir).ok()?;
        if let Err(e) = f.write_all(bytes).and_then(|()| f.sync_all()) {
            return Some(Err(e));
        }
        // Linking the descriptor needs a name that does not exist yet; the
        // complete file then replaces the target in one rename.
        let tmp = super::unique_tmp(dir, name);
        let src = std::ffi::CString::new(format!("/proc/self/fd/{}", f.as_raw_fd())).ok()?;
        let dst = std::ffi::CString::new(tmp.as_os_str().as_bytes()).ok()?;
        // SAFETY: two valid NUL-terminated paths; AT_FDCWD; no pointers kept.
        let linked = unsafe {
            libc::linkat(libc::AT_FDCWD, src.as_ptr(), libc::AT_FDCWD, dst.as_ptr(), libc::AT_SYMLINK_FOLLOW)
        };
        if linked != 0 {
            return None;
        }
        let renamed = std::fs::rename(&tmp, path);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        Some(renamed)
    }
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
