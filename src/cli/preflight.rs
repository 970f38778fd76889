//! Checks that keep a run from failing late: before any work, that the outputs
//! can be written (`--out DIR`, `--write-baseline FILE`, `--summary FILE`), so
//! a long replay never ends in "cannot write"; nothing is created here.

use anyhow::bail;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// The path itself or its nearest ancestor that exists, with its metadata, and
/// whether it is the path itself.
fn nearest_existing(path: &Path) -> Option<(PathBuf, Metadata, bool)> {
    path.ancestors().enumerate().find_map(|(i, a)| {
        let a = if a.as_os_str().is_empty() { Path::new(".") } else { a };
        std::fs::metadata(a).ok().map(|m| (a.to_path_buf(), m, i == 0))
    })
}

/// Create and remove a file in `dir`: the one test of "can write here" that
/// also holds for read-only file systems and ACLs.
fn probe(flag: &str, path: &Path, dir: &Path) -> anyhow::Result<()> {
    let name = dir.join(format!(".compactor-write-test-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&name) {
        Ok(_) => {
            let _ = std::fs::remove_file(&name);
            Ok(())
        }
        Err(e) => {
            bail!("{flag} {}: cannot write in {}: {e} (nothing was read or written)", path.display(), dir.display())
        }
    }
}

/// `--out DIR`: an existing directory compactor can write in, or a path it
/// can create (its nearest existing ancestor is such a directory).
pub fn out_dir(flag: &str, dir: &Path) -> anyhow::Result<()> {
    let shown = dir.display();
    let Some((at, meta, itself)) = nearest_existing(dir) else {
        bail!("{flag} {shown}: cannot be created (no part of the path exists)");
    };
    if !meta.is_dir() {
        if itself {
            bail!("{flag} {shown}: is an existing file, not a directory (nothing was read or written)");
        }
        bail!(
            "{flag} {shown}: cannot be created: {} is a file, not a directory (nothing was read or written)",
            at.display()
        );
    }
    probe(flag, dir, &at)
}

/// `--write-baseline FILE`, `--summary FILE`: not a directory, in an existing
/// directory compactor can write in. An existing file is replaced (that is
/// what these flags are for); a device such as /dev/stdout is written as is.
pub fn out_file(flag: &str, file: &Path) -> anyhow::Result<()> {
    let shown = file.display();
    if let Ok(m) = std::fs::metadata(file) {
        if m.is_dir() {
            bail!("{flag} {shown}: is a directory, not a file (nothing was read or written)");
        }
        if !m.is_file() {
            return Ok(());
        }
    }
    let parent = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() => probe(flag, file, parent),
        Ok(_) => bail!("{flag} {shown}: {} is not a directory (nothing was read or written)", parent.display()),
        Err(_) => {
            bail!("{flag} {shown}: the directory {} does not exist (nothing was read or written)", parent.display())
        }
    }
}
