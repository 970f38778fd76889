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
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
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

/// [`atomic_write`] for content produced piece by piece: `fill` writes into a
/// buffered temporary file, which is synced and renamed over `path` only if
/// `fill` succeeds.
pub fn atomic_write_with(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = unique_tmp(dir, &name);
    let result = (|| {
        let f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        fill(&mut w)?;
        let f = w.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A hidden, unique temporary name next to `path`'s final place, for a file
/// that is written now and renamed into place later ([`crate::report::write`]
/// names transcripts only once every session is done).
pub fn pending_path(dir: &Path, tag: &str) -> PathBuf {
    unique_tmp(dir, tag)
}

/// Write a new file (never replacing one) without syncing it: for temporary
/// files that are renamed into place later, and whose loss in a crash of the
/// machine only loses that run. Syncing every transcript cost one disk flush per
/// session and policy.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    f.write_all(bytes)
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
