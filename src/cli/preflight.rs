//! Checks that keep a run from failing late or passing on nothing:
//! - before any work, that the outputs can be written (`--out DIR`,
//!   `--write-baseline FILE`, `--summary FILE`), so a long replay never ends in
//!   "cannot write"; nothing is created here;
//! - once the sessions are read, that they hold calls: a `--format` forced on
//!   files it does not fit, or inputs with no call at all, are errors that name
//!   the files, not a report of zeros.

use anyhow::bail;
use compactor::model::{Diagnostic, Format, Severity};
use compactor::read::Input;
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

/// At most ten paths, then how many more.
fn list(paths: &[&Path]) -> String {
    let mut out: Vec<String> = paths.iter().take(10).map(|p| p.display().to_string()).collect();
    if paths.len() > 10 {
        out.push(format!("and {} more", paths.len() - 10));
    }
    out.join(", ")
}

/// After reading: `sessions` are the (source path, number of calls) of every
/// session read. With a forced `format`, every input that was read must yield
/// a call (a format that does not fit a file reads it as nothing); without,
/// at least one session must have a call. Inputs that could not be read at all
/// are already reported as errors and are left out.
pub fn require_calls<'a>(
    format: Option<Format>,
    inputs: &[Input],
    failures: &[Diagnostic],
    sessions: impl Iterator<Item = (&'a Path, usize)>,
    whole: bool,
) -> anyhow::Result<()> {
    let sessions: Vec<(&Path, usize)> = sessions.collect();
    let failed = |i: &Input| failures.iter().any(|d| d.severity == Severity::Error && d.path == i.path);
    let read: Vec<&Input> = inputs.iter().filter(|i| !failed(i)).collect();
    // A session belongs to the input it was read from: the file itself, or a
    // file inside a task folder.
    let calls = |i: &Input| -> usize {
        sessions.iter().filter(|(p, _)| *p == i.path || p.starts_with(&i.path)).map(|(_, n)| n).sum()
    };
    let empty: Vec<&Path> = read.iter().filter(|i| calls(i) == 0).map(|i| i.path.as_path()).collect();
    if let Some(f) = format
        && !empty.is_empty()
    {
        bail!(
            "--format {}: {} file(s) yield no call under that format: {} (is it theirs? without --format the format \
             of each file is detected)",
            f.name(),
            empty.len(),
            list(&empty)
        );
    }
    // A shard (not `whole`) may hold only sessions without calls: the merge
    // tells whether the run has any.
    if whole && !read.is_empty() && empty.len() == read.len() && sessions.iter().all(|(_, n)| *n == 0) {
        bail!("no session has a single call, nothing to replay: {}", list(&empty));
    }
    Ok(())
}
