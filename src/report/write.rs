//! Writing a replay's files under `--out`: report.json, sessions.csv, calls.csv,
//! report.md and `transcripts/POLICY/SESSION.jsonl`. Every name derived from a
//! session id or policy name is sanitized; every file is written atomically.
//!
//! Two ways in: [`write_all`] writes everything from results held in memory;
//! [`SessionWriter`] is its streaming twin: it writes each session's transcripts
//! and `calls.csv` rows while the replay runs (to temporary names and a spool
//! file), then [`SessionWriter::finish`] puts them in place in report order.
//! Both produce the same bytes under the same names.

use super::{Report, csv_out, markdown, to_json, transcript_jsonl};
use crate::output::fsutil::{atomic_write, atomic_write_with, ensure_dir, pending_path, safe_stem, write_new};
use crate::replay::{SessionKey, SessionResults};
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// What to write besides the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    pub transcripts: bool,
}

/// Transcript file stems per policy. Two sessions can share an id (a resumed
/// log copied twice); the later one in report order gets the source path's hash
/// so neither overwrites the other.
#[derive(Default)]
struct TranscriptNames {
    used: HashSet<(usize, String)>,
}

impl TranscriptNames {
    fn stem(&mut self, policy: usize, session_id: &str, source_path: &Path) -> String {
        let mut stem = safe_stem(session_id);
        if !self.used.insert((policy, stem.clone())) {
            stem =
                format!("{stem}-{:08x}", crate::output::fsutil::fnv1a(source_path.to_string_lossy().as_bytes()) as u32);
            self.used.insert((policy, stem.clone()));
        }
        stem
    }
}

fn transcript_dir(out: &Path, policy: &str) -> PathBuf {
    out.join("transcripts").join(safe_stem(policy))
}

/// Write every output file; returns the paths written, in order.
pub fn write_all(
    out: &Path,
    report: &Report,
    results: &[SessionResults],
    opts: WriteOptions,
) -> std::io::Result<Vec<PathBuf>> {
    ensure_dir(out)?;
    let mut written = Vec::new();
    let policies: Vec<String> = report.policies.iter().map(|p| p.name.clone()).collect();
    if opts.transcripts {
        let mut names = TranscriptNames::default();
        for (pi, name) in policies.iter().enumerate() {
            let dir = transcript_dir(out, name);
            ensure_dir(&dir)?;
            for r in results {
                let Some(Ok(trace)) = r.traces.get(pi) else { continue };
                let stem = names.stem(pi, &r.session_id, &r.source_path);
                let path = dir.join(format!("{stem}.jsonl"));
                atomic_write(&path, &transcript_jsonl(trace))?;
                written.push(path);
            }
        }
    }
    let calls = csv_out::calls_csv(results, &policies);
    written.extend(write_reports(out, report, |w| w.write_all(&calls))?);
    Ok(written)
}

/// sessions.csv, calls.csv (from `calls`), report.md, then report.json.
fn write_reports(
    out: &Path,
    report: &Report,
    calls: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<Vec<PathBuf>> {
    let path = |name: &str| out.join(name);
    atomic_write(&path("sessions.csv"), &csv_out::sessions_csv(report))?;
    atomic_write_with(&path("calls.csv"), calls)?;
    atomic_write(&path("report.md"), markdown::report_md(report).as_bytes())?;
    // Last, so a report.json present means the run completed.
    atomic_write(&path("report.json"), &to_json(report))?;
    Ok(["sessions.csv", "calls.csv", "report.md", "report.json"].iter().map(|n| path(n)).collect())
}

/// Where one session's outputs went while the replay ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Transcripts under temporary names: (policy index, path).
    pending: Vec<(usize, PathBuf)>,
    /// Its `calls.csv` rows in the spool file: (offset, length).
    calls: (u64, u64),
}

/// The spool of `calls.csv` rows: appended to in completion order, read back in
/// report order by [`SessionWriter::finish`].
struct Spool {
    path: PathBuf,
    file: std::fs::File,
    len: u64,
}

/// Writes each session's outputs as soon as it is replayed (see the module
/// doc). Nothing is created under `--out` before the first session arrives.
pub struct SessionWriter {
    out: PathBuf,
    policies: Vec<String>,
    opts: WriteOptions,
    /// The output and transcript directories, created on first use.
    dirs: OnceLock<Result<(), String>>,
    spool: Mutex<Option<Spool>>,
}

impl SessionWriter {
    pub fn new(out: &Path, policies: &[String], opts: WriteOptions) -> SessionWriter {
        SessionWriter {
            out: out.to_path_buf(),
            policies: policies.to_vec(),
            opts,
            dirs: OnceLock::new(),
            spool: Mutex::new(None),
        }
    }

    fn ensure_dirs(&self) -> std::io::Result<()> {
        let r = self.dirs.get_or_init(|| {
            let mut r = ensure_dir(&self.out);
            if self.opts.transcripts {
                for p in &self.policies {
                    r = r.and_then(|()| ensure_dir(&transcript_dir(&self.out, p)));
                }
            }
            r.map_err(|e| e.to_string())
        });
        r.clone().map_err(std::io::Error::other)
    }

    /// Write one session's transcripts (temporary names) and spool its calls.
    pub fn write_session(&self, key: &SessionKey, results: &SessionResults) -> std::io::Result<Written> {
        let mut written = Written::default();
        let result = self.write_session_inner(key, results, &mut written);
        if result.is_err() {
            for (_, p) in &written.pending {
                let _ = std::fs::remove_file(p);
            }
        }
        result.map(|()| written)
    }

    fn write_session_inner(
        &self,
        key: &SessionKey,
        results: &SessionResults,
        written: &mut Written,
    ) -> std::io::Result<()> {
        self.ensure_dirs()?;
        if self.opts.transcripts {
            for (pi, trace) in results.traces.iter().enumerate() {
                let (Ok(trace), Some(policy)) = (trace, self.policies.get(pi)) else { continue };
                let tag = format!("{}-{}.jsonl", key.input, key.index);
                let path = pending_path(&transcript_dir(&self.out, policy), &tag);
                // Recorded before writing, so a failed write is cleaned up too.
                written.pending.push((pi, path.clone()));
                write_new(&path, &transcript_jsonl(trace))?;
            }
        }
        let rows = csv_out::session_call_rows(results, &self.policies);
        let mut spool = self.spool.lock().map_err(|_| std::io::Error::other("calls.csv spool poisoned"))?;
        if spool.is_none() {
            let path = pending_path(&self.out, "calls.csv.spool");
            let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
            *spool = Some(Spool { path, file, len: 0 });
        }
        if let Some(s) = spool.as_mut() {
            s.file.write_all(&rows)?;
            written.calls = (s.len, rows.len() as u64);
            s.len += rows.len() as u64;
        }
        Ok(())
    }

    /// Put every transcript in place and write the reports. `sessions` are the
    /// keys and what [`Self::write_session`] returned, in report order.
    pub fn finish(self, report: &Report, sessions: &[(&SessionKey, &Written)]) -> std::io::Result<Vec<PathBuf>> {
        let result = self.finish_inner(report, sessions);
        if result.is_err() {
            self.discard(sessions.iter().map(|(_, w)| *w));
        }
        result
    }

    fn finish_inner(&self, report: &Report, sessions: &[(&SessionKey, &Written)]) -> std::io::Result<Vec<PathBuf>> {
        // A run without any session still writes its (empty) reports.
        self.ensure_dirs()?;
        let mut written = Vec::new();
        let mut names = TranscriptNames::default();
        for (pi, policy) in self.policies.iter().enumerate() {
            let dir = transcript_dir(&self.out, policy);
            for (key, w) in sessions {
                for (_, pending) in w.pending.iter().filter(|(p, _)| *p == pi) {
                    let stem = names.stem(pi, &key.session_id, &key.source_path);
                    let path = dir.join(format!("{stem}.jsonl"));
                    std::fs::rename(pending, &path)?;
                    written.push(path);
                }
            }
        }
        let mut spool = self.spool.lock().map_err(|_| std::io::Error::other("calls.csv spool poisoned"))?.take();
        let calls = |w: &mut dyn Write| -> std::io::Result<()> {
            let mut header = csv::Writer::from_writer(Vec::new());
            header.write_record(csv_out::CALL_COLUMNS).map_err(std::io::Error::other)?;
            w.write_all(&header.into_inner().map_err(|e| std::io::Error::other(e.to_string()))?)?;
            let Some(s) = spool.as_mut() else { return Ok(()) };
            let mut buf = Vec::new();
            for (_, written) in sessions {
                let (offset, len) = written.calls;
                buf.resize(len as usize, 0);
                s.file.seek(SeekFrom::Start(offset))?;
                s.file.read_exact(&mut buf)?;
                w.write_all(&buf)?;
            }
            Ok(())
        };
        let result = write_reports(&self.out, report, calls);
        if let Some(s) = spool.as_ref() {
            let _ = std::fs::remove_file(&s.path);
        }
        written.extend(result?);
        Ok(written)
    }

    /// Remove what [`Self::write_session`] left under temporary names (after an
    /// error: nothing half-written stays under `--out`).
    pub fn discard<'w>(&self, sessions: impl IntoIterator<Item = &'w Written>) {
        for w in sessions {
            for (_, p) in &w.pending {
                let _ = std::fs::remove_file(p);
            }
        }
        if let Ok(mut spool) = self.spool.lock()
            && let Some(s) = spool.take()
        {
            let _ = std::fs::remove_file(&s.path);
        }
    }
}
