//! A run's outputs, staged: every file of a run is written into a hidden
//! folder inside `--out` (`.compactor-tmp-PID-N`) and moved into place only
//! once the run is complete ([`Staged::commit`]). A run that stops before
//! (Ctrl-C, SIGTERM, an error) drops the folder with everything in it, so what
//! an earlier run left in `--out` stays exactly as it was; a run that
//! completes replaces it.
//!
//! Replacing: a staged file replaces the file of its name; a staged folder
//! merges into the folder of its name, except the folders named at
//! [`Staged::new`] (a policy's transcripts), which replace theirs whole, so a
//! transcript folder never mixes two runs' sessions. Those folders, and the
//! files named with [`Staged::owning`] (the command's reports), are the run's
//! own: one the run does not write (a sweep with no recommendation, a replay
//! without quality or transcripts) is removed, not left from an earlier run
//! beside this one's reports. Anything else in `--out` (files compactor does
//! not write, another policy's transcripts) is left alone.
//!
//! The folder lives inside `--out` (nothing is written outside it) and on the
//! same file system, so the moves are renames. A run killed outright
//! (SIGKILL) can leave its folder behind, hidden and holding only complete
//! files; the next run into the same `--out` removes the folders of processes
//! that no longer exist.

use std::io;
use std::path::{Path, PathBuf};

/// What every staging folder's name starts with.
const PREFIX: &str = ".compactor-tmp-";
/// The file whose presence says a run completed: moved last.
const LAST: &str = "report.json";

/// The staging folder of one run's outputs (see the module doc). Dropping it
/// removes the folder and whatever is still in it.
#[derive(Debug)]
pub struct Staged {
    out: PathBuf,
    dir: PathBuf,
    /// Folders, relative to `out`, that replace theirs whole.
    whole: Vec<PathBuf>,
    /// Files, relative to `out`, that only this run may leave there.
    owned: Vec<PathBuf>,
}

impl Staged {
    /// The staging folder of a run writing to `out`; nothing is created
    /// before [`Self::create`]. `whole` are the folders (relative paths) that
    /// replace theirs whole at [`Self::commit`].
    pub fn new(out: &Path, whole: Vec<PathBuf>) -> Staged {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = out.join(format!("{PREFIX}{}-{n}", std::process::id()));
        Staged { out: out.to_path_buf(), dir, whole, owned: Vec::new() }
    }

    /// The files (relative paths) the command writes when it has something
    /// for them: one this run does not stage is removed from `--out` at
    /// [`Self::commit`], as a `whole` folder it does not stage is.
    #[must_use]
    pub fn owning(mut self, files: impl IntoIterator<Item = PathBuf>) -> Staged {
        self.owned.extend(files);
        self
    }

    /// Where the run writes its outputs (under the same relative names they
    /// get in `--out`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The final output folder.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Create `--out` (and parents) when missing, and the staging folder in
    /// it. Removes the staging folders that killed runs left there.
    pub fn create(&self) -> io::Result<()> {
        super::fsutil::ensure_dir(&self.out)?;
        remove_abandoned(&self.out);
        match std::fs::create_dir(&self.dir) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            r => r,
        }
    }

    /// `path` under the staging folder, as it will be named in `--out`.
    pub fn final_path(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.dir).map_or_else(|_| path.to_path_buf(), |rel| self.out.join(rel))
    }

    /// Move everything staged into `--out`: folders first, then files by
    /// name, report.json last. Fails with [`io::ErrorKind::Interrupted`],
    /// moving nothing, when a stop was asked for before (see
    /// [`crate::interrupt::commit`]); once it starts, it finishes.
    pub fn commit(self) -> io::Result<()> {
        if !self.dir.exists() {
            self.create()?;
        }
        if !crate::interrupt::commit() {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
        }
        // What is replaced goes here, and goes with the staging folder.
        let trash = self.dir.join(".replaced");
        let entries = entries(&self.dir)?;
        std::fs::create_dir(&trash)?;
        let mut n = 0u64;
        // What an earlier run wrote and this one does not: before report.json
        // moves, so a complete run's --out holds nothing of another's.
        for rel in self.whole.iter().chain(&self.owned) {
            let (from, at) = (self.dir.join(rel), self.out.join(rel));
            if std::fs::symlink_metadata(&from).is_err() && std::fs::symlink_metadata(&at).is_ok() {
                n += 1;
                std::fs::rename(&at, trash.join(n.to_string()))?;
            }
        }
        let mut mover = Mover { staged: &self.dir, whole: &self.whole, trash: &trash, n: &mut n };
        mover.merge(entries, &self.out)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        // Not yet created, or already removed: nothing to do.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The entries of `dir`: folders first, then files by name, [`LAST`] last.
fn entries(dir: &Path) -> io::Result<Vec<(PathBuf, bool)>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        v.push((e.path(), e.file_type()?.is_dir()));
    }
    v.sort_by(|a, b| {
        let key = |(p, is_dir): &(PathBuf, bool)| (!is_dir, p.file_name().is_some_and(|n| n == LAST), p.clone());
        key(a).cmp(&key(b))
    });
    Ok(v)
}

struct Mover<'a> {
    staged: &'a Path,
    whole: &'a [PathBuf],
    trash: &'a Path,
    n: &'a mut u64,
}

impl Mover<'_> {
    /// Move `entries` (of one staged folder) into `to`.
    fn merge(&mut self, list: Vec<(PathBuf, bool)>, to: &Path) -> io::Result<()> {
        for (path, is_dir) in list {
            let Some(name) = path.file_name() else { continue };
            let target = to.join(name);
            let rel = path.strip_prefix(self.staged).unwrap_or(&path);
            if !is_dir {
                std::fs::rename(&path, &target)?;
            } else if self.whole.iter().any(|w| w == rel) || !target.exists() {
                self.replace_dir(&path, &target)?;
            } else {
                let inner = entries(&path)?;
                self.merge(inner, &target)?;
            }
        }
        Ok(())
    }

    /// Put the folder `from` at `to`, the folder there (if any) moved to the
    /// trash first.
    fn replace_dir(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        if std::fs::symlink_metadata(to).is_ok() {
            *self.n += 1;
            std::fs::rename(to, self.trash.join(self.n.to_string()))?;
        }
        std::fs::rename(from, to)
    }
}

/// Remove the staging folders in `out` whose process is gone (a run killed
/// with SIGKILL, or a machine that went down); a folder of a running process,
/// or of a name this code did not make, is left alone.
fn remove_abandoned(out: &Path) {
    let Ok(dir) = std::fs::read_dir(out) else { return };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else { continue };
        let Some(pid) = rest.split_once('-').and_then(|(pid, n)| {
            n.parse::<u64>().ok()?;
            pid.parse::<u32>().ok()
        }) else {
            continue;
        };
        if pid != std::process::id() && !process_exists(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(unix)]
fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return true };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// No cheap way to tell elsewhere: keep every folder.
#[cfg(not(unix))]
fn process_exists(_: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// Every file under `dir`, relative, with its text.
    fn tree(dir: &Path) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = walkdir::WalkDir::new(dir)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                (rel, std::fs::read_to_string(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    }

    fn earlier_run(out: &Path) {
        write(&out.join("report.json"), "old report");
        write(&out.join("notes.txt"), "mine");
        write(&out.join("transcripts/a/s1.jsonl"), "old a1");
        write(&out.join("transcripts/a/s2.jsonl"), "old a2");
        write(&out.join("transcripts/b/s1.jsonl"), "old b1");
    }

    #[test]
    fn a_dropped_stage_leaves_out_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        earlier_run(&out);
        let before = tree(&out);
        {
            let staged = Staged::new(&out, vec![PathBuf::from("transcripts/a")]);
            staged.create().unwrap();
            write(&staged.dir().join("report.json"), "new report");
            write(&staged.dir().join("transcripts/a/s1.jsonl"), "new a1");
        }
        assert_eq!(tree(&out), before);
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 3, "the staging folder is gone");
    }

    #[test]
    fn a_commit_replaces_what_the_run_writes_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        earlier_run(&out);
        let staged = Staged::new(&out, vec![PathBuf::from("transcripts/a")]);
        staged.create().unwrap();
        write(&staged.dir().join("report.json"), "new report");
        write(&staged.dir().join("report.md"), "new md");
        write(&staged.dir().join("transcripts/a/s1.jsonl"), "new a1");
        let file = staged.dir().join("transcripts/a/s1.jsonl");
        assert_eq!(staged.final_path(&file), out.join("transcripts/a/s1.jsonl"));
        staged.commit().unwrap();
        let want = [
            ("notes.txt", "mine"),
            ("report.json", "new report"),
            ("report.md", "new md"),
            // Replaced whole: s2 of the earlier run is gone; b is not this run's.
            ("transcripts/a/s1.jsonl", "new a1"),
            ("transcripts/b/s1.jsonl", "old b1"),
        ];
        let want: Vec<(String, String)> = want.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(tree(&out), want);
        let names: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 4, "no staging folder stays: {names:?}");
    }

    /// A report or transcript folder of the run's own that this run does
    /// not write is removed; files it does not own stay.
    #[test]
    fn what_the_run_owns_and_does_not_write_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        earlier_run(&out);
        write(&out.join("quality.csv"), "old quality");
        let staged = Staged::new(&out, vec![PathBuf::from("transcripts/a")])
            .owning(["report.json", "quality.csv", "report.md"].map(PathBuf::from));
        staged.create().unwrap();
        write(&staged.dir().join("report.json"), "new report");
        staged.commit().unwrap();
        let want = [("notes.txt", "mine"), ("report.json", "new report"), ("transcripts/b/s1.jsonl", "old b1")];
        let want: Vec<(String, String)> = want.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(tree(&out), want);
        assert!(!out.join("transcripts/a").exists(), "an empty folder stays");
    }

    #[test]
    fn a_fresh_out_is_created_and_abandoned_stages_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("new/out");
        // A folder a killed run left (no such process), and one that is not ours.
        let dead = out.join(format!("{PREFIX}{}-0", u32::MAX / 2));
        write(&dead.join("report.json"), "half");
        write(&out.join(".compactor-tmp-mine/x"), "keep");
        let staged = Staged::new(&out, Vec::new());
        staged.create().unwrap();
        write(&staged.dir().join("sweep.md"), "new");
        staged.commit().unwrap();
        assert!(!dead.exists());
        assert_eq!(tree(&out), [(".compactor-tmp-mine/x".into(), "keep".into()), ("sweep.md".into(), "new".into())]);
    }
}
