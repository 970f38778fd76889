//! Writing a replay's files under `--out`: report.json, sessions.csv, calls.csv,
//! quality.csv, report.md, report.html and `transcripts/POLICY/SESSION.jsonl`.
//! Every name derived from a session id or policy name is sanitized; every file
//! is written atomically (a killed run leaves each file complete or absent),
//! into the run's staging folder ([`crate::output::stage`]): nothing reaches
//! `--out` until the reports are written, and then everything does, so an
//! interrupted run leaves an earlier run's outputs as they were.
//!
//! Three ways in: [`write_all`] writes everything from results held in memory;
//! [`SessionWriter`] is its streaming twin: it writes each session's transcripts
//! (under their final names) and spools its `calls.csv` rows while the replay
//! runs, keeping only the charts report.html will draw; then
//! [`SessionWriter::finish`] writes the reports in report order (and a shard's
//! `partial.json`, [`SessionWriter::finish_with`]); [`write_merged`] writes a
//! run merged from its shards' partials. All produce the same bytes under the
//! same names.

use super::html::{ChartKeeper, Charts, DEFAULT_MAX_SESSIONS, KeptCharts};
use super::partial::{PARTIAL_FILE, SessionFiles};
use super::{Report, SourceLines, csv_out, export, write_transcript, write_transcript_sharing};
use crate::output::fsutil::{
    atomic_write, atomic_write_unsynced_with, atomic_write_with, ensure_dir, fnv1a, pending_path, safe_stem,
    scratch_file,
};
use crate::output::stage::Staged;
use crate::pipeline::{SessionKey, SessionResults};
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// What to write besides the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    pub transcripts: bool,
}

/// Transcript file stems per policy, given in report order. Two sessions can
/// share an id (a resumed log copied twice); the later one in report order gets
/// the source path's hash so neither overwrites the other.
#[derive(Default)]
struct TranscriptNames {
    used: HashSet<(usize, String)>,
}

impl TranscriptNames {
    fn stem(&mut self, policy: usize, session_id: &str, source_path: &Path) -> String {
        let mut stem = safe_stem(session_id);
        if !self.used.insert((policy, stem.clone())) {
            stem = format!("{stem}-{:08x}", path_hash(source_path));
            self.used.insert((policy, stem.clone()));
        }
        stem
    }
}

fn path_hash(path: &Path) -> u32 {
    fnv1a(path.to_string_lossy().as_bytes()) as u32
}

fn transcript_dir(out: &Path, policy: &str) -> PathBuf {
    out.join(transcript_rel(policy))
}

fn transcript_rel(policy: &str) -> PathBuf {
    Path::new("transcripts").join(safe_stem(policy))
}

/// The run's staging folder in `out`: each policy's transcript folder is
/// the run's own, replaced whole (removed under `--no-transcripts`), and so
/// is each file any command writes there (removed when the run has nothing
/// for it, [`export::run_files`]).
fn staging(out: &Path, policies: &[String]) -> Staged {
    let whole = policies.iter().map(|p| transcript_rel(p)).collect();
    Staged::new(out, whole).owning(export::run_files().map(PathBuf::from))
}

/// report.html of a replay or compare: the policies side by side, the
/// distributions, and the context charts of the largest sessions.
pub fn html_page(report: &Report, charts: &Charts) -> String {
    let columns = super::compare::columns(report, &super::quality::policy_scores(report));
    let frr = super::quality::session_frr(report);
    let command = if report.policies.len() > 1 { "compare" } else { "replay" };
    super::html::report_html(&super::html::Page {
        command,
        report: Some(report),
        charts,
        columns: &columns,
        frr: frr.as_deref(),
        sweep: None,
    })
}

/// Write every output file (staged, then put in place); returns the paths
/// written, in order.
pub fn write_all(
    out: &Path,
    report: &Report,
    results: &[SessionResults],
    opts: WriteOptions,
) -> std::io::Result<Vec<PathBuf>> {
    let policies: Vec<String> = report.policies.iter().map(|p| p.name.clone()).collect();
    let staged = staging(out, &policies);
    staged.create()?;
    let out = staged.dir();
    let mut written = Vec::new();
    if opts.transcripts {
        let mut names = TranscriptNames::default();
        for (pi, name) in policies.iter().enumerate() {
            let dir = transcript_dir(out, name);
            ensure_dir(&dir)?;
            for r in results {
                let Some(Ok(trace)) = r.traces.get(pi) else { continue };
                let stem = names.stem(pi, &r.session_id, &r.source_path);
                let path = dir.join(format!("{stem}.jsonl"));
                interrupted()?;
                atomic_write_unsynced_with(&path, |w| write_transcript(w, trace))?;
                written.push(path);
            }
        }
    }
    let calls = csv_out::calls_csv(results, &policies);
    let charts = Charts::from_results(results, DEFAULT_MAX_SESSIONS);
    written.extend(write_reports(out, report, &charts, |w| w.write_all(&calls))?);
    let written = written.iter().map(|p| staged.final_path(p)).collect();
    staged.commit()?;
    Ok(written)
}

/// calls.csv (from `calls`), then every exporter of [`export::REPLAY`] in order
/// (report.json last).
fn write_reports(
    out: &Path,
    report: &Report,
    charts: &Charts,
    calls: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::with_capacity(export::REPLAY.len() + 1);
    interrupted()?;
    atomic_write_with(&out.join("calls.csv"), calls)?;
    written.push(out.join("calls.csv"));
    let run = export::ReplayRun { report, charts };
    for e in export::REPLAY {
        let Some(bytes) = e.export(&run) else { continue };
        interrupted()?;
        let path = out.join(e.file_name());
        atomic_write(&path, &bytes)?;
        written.push(path);
    }
    Ok(written)
}

/// Stop between files after Ctrl-C: each file written is complete (atomic), and
/// report.json, written last, is only there when the whole run was.
fn interrupted() -> std::io::Result<()> {
    if crate::interrupt::requested() {
        return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"));
    }
    Ok(())
}

/// Where one session's outputs went while the replay ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Its transcripts: (policy index, path written).
    transcripts: Vec<(usize, PathBuf)>,
    /// Its `calls.csv` rows in the spool: (offset, length).
    calls: (u64, u64),
}

/// Writes each session's outputs as soon as it is replayed (see the module
/// doc), into the staging folder, which [`Self::finish`] puts in place and
/// dropping the writer removes. Nothing is created under `--out` before the
/// first session arrives.
pub struct SessionWriter {
    staged: Staged,
    policies: Vec<String>,
    opts: WriteOptions,
    /// The output and transcript directories, created on first use.
    dirs: OnceLock<Result<(), String>>,
    /// Transcript stems taken so far, per policy.
    claimed: Mutex<HashSet<(usize, String)>>,
    /// `calls.csv` rows in completion order, read back in report order by
    /// [`Self::finish`]; a nameless file, so nothing of it outlives the run.
    spool: Mutex<Option<(std::fs::File, u64)>>,
    charts: Mutex<ChartKeeper<SessionKey>>,
}

impl SessionWriter {
    pub fn new(out: &Path, policies: &[String], opts: WriteOptions) -> SessionWriter {
        SessionWriter {
            staged: staging(out, policies),
            policies: policies.to_vec(),
            opts,
            dirs: OnceLock::new(),
            claimed: Mutex::new(HashSet::new()),
            spool: Mutex::new(None),
            charts: Mutex::new(ChartKeeper::new(DEFAULT_MAX_SESSIONS)),
        }
    }

    fn ensure_dirs(&self) -> std::io::Result<()> {
        let r = self.dirs.get_or_init(|| {
            let mut r = self.staged.create();
            if self.opts.transcripts {
                for p in &self.policies {
                    r = r.and_then(|()| ensure_dir(&transcript_dir(self.staged.dir(), p)));
                }
            }
            r.map_err(|e| e.to_string())
        });
        r.clone().map_err(std::io::Error::other)
    }

    /// A stem no other session of this run holds: its final name when no
    /// session with the same id came first, else a stand-in that
    /// [`Self::finish`] renames once the report order is known.
    fn claim(&self, policy: usize, key: &SessionKey) -> std::io::Result<String> {
        let mut claimed = self.claimed.lock().map_err(|_| std::io::Error::other("transcript names poisoned"))?;
        let stem = safe_stem(&key.session_id);
        if claimed.insert((policy, stem.clone())) {
            return Ok(stem);
        }
        let hashed = format!("{stem}-{:08x}", path_hash(&key.source_path));
        let mut candidate = hashed.clone();
        let mut n = 2u64;
        while !claimed.insert((policy, candidate.clone())) {
            candidate = format!("{hashed}-{n}");
            n += 1;
        }
        Ok(candidate)
    }

    /// Write one session's transcripts, spool its calls, keep its chart if it
    /// is among the largest.
    pub fn write_session(&self, key: &SessionKey, results: &SessionResults) -> std::io::Result<Written> {
        if let Ok(mut charts) = self.charts.lock() {
            charts.offer(key.clone(), results);
        }
        self.ensure_dirs()?;
        let mut written = Written::default();
        if self.opts.transcripts {
            // Several policies' transcripts share the session's unchanged
            // messages: each is serialized once.
            let mut shared = SourceLines::default();
            let last = results.traces.len().saturating_sub(1);
            for (pi, trace) in results.traces.iter().enumerate() {
                let (Ok(trace), Some(policy)) = (trace, self.policies.get(pi)) else { continue };
                interrupted()?;
                let stem = self.claim(pi, key)?;
                let path = transcript_dir(self.staged.dir(), policy).join(format!("{stem}.jsonl"));
                atomic_write_unsynced_with(&path, |w| {
                    write_transcript_sharing(w, trace, Some(&mut shared), pi < last)
                })?;
                written.transcripts.push((pi, path));
            }
        }
        let rows = csv_out::session_call_rows(results, &self.policies);
        let mut spool = self.spool.lock().map_err(|_| std::io::Error::other("calls.csv spool poisoned"))?;
        if spool.is_none() {
            *spool = Some((scratch_file(self.staged.dir())?, 0));
        }
        if let Some((file, len)) = spool.as_mut() {
            file.write_all(&rows)?;
            written.calls = (*len, rows.len() as u64);
            *len += rows.len() as u64;
        }
        Ok(written)
    }

    /// Give every transcript its report-order name, write the reports, and put
    /// everything in place under `--out` (an error, or a stop asked for before,
    /// leaves `--out` as it was). `sessions` are the keys and what
    /// [`Self::write_session`] returned, in report order. Returns the final
    /// paths.
    pub fn finish(self, report: &Report, sessions: &[(&SessionKey, &Written)]) -> std::io::Result<Vec<PathBuf>> {
        self.finish_with(report, sessions, None)
    }

    /// [`Self::finish`], and for a shard's run its `partial.json`, made by
    /// `partial` from where each session's files went and the charts kept.
    pub fn finish_with(
        self,
        report: &Report,
        sessions: &[(&SessionKey, &Written)],
        partial: Option<MakePartial<'_>>,
    ) -> std::io::Result<Vec<PathBuf>> {
        // A run without any session still writes its (empty) reports.
        self.ensure_dirs()?;
        let root = self.staged.dir().to_path_buf();
        let mut written = Vec::new();
        let mut names = TranscriptNames::default();
        let mut moves = Vec::new();
        let mut files: Vec<SessionFiles> = vec![SessionFiles::default(); sessions.len()];
        for (pi, policy) in self.policies.iter().enumerate() {
            let dir = transcript_dir(&root, policy);
            for (si, (key, w)) in sessions.iter().enumerate() {
                for (_, actual) in w.transcripts.iter().filter(|(p, _)| *p == pi) {
                    let stem = names.stem(pi, &key.session_id, &key.source_path);
                    let path = dir.join(format!("{stem}.jsonl"));
                    if *actual != path {
                        moves.push((actual.clone(), path.clone()));
                    }
                    files[si].transcripts.push((pi, relative(&root, &path)));
                    written.push(path);
                }
            }
        }
        // Only when sessions sharing an id finished out of report order: every
        // stand-in moves aside first, so no rename replaces a file another move
        // still has to take.
        let mut aside = Vec::with_capacity(moves.len());
        for (from, to) in moves {
            let dir = from.parent().unwrap_or(&root).to_path_buf();
            let tmp = pending_path(&dir, "transcript");
            std::fs::rename(&from, &tmp)?;
            aside.push((tmp, to));
        }
        for (tmp, to) in aside {
            std::fs::rename(&tmp, &to)?;
        }
        let kept = self.charts.into_inner().map_err(|_| std::io::Error::other("charts poisoned"))?.into_kept();
        let mut spool = self.spool.into_inner().map_err(|_| std::io::Error::other("calls.csv spool poisoned"))?;
        let header = calls_header()?;
        let mut at = header.len() as u64;
        for (f, (_, w)) in files.iter_mut().zip(sessions) {
            f.calls = (at, w.calls.1);
            at += w.calls.1;
        }
        let calls = |w: &mut dyn Write| -> std::io::Result<()> {
            w.write_all(&header)?;
            let Some((file, _)) = spool.as_mut() else { return Ok(()) };
            let mut buf = Vec::new();
            for (_, written) in sessions {
                let (offset, len) = written.calls;
                buf.resize(usize::try_from(len).map_err(std::io::Error::other)?, 0);
                file.seek(SeekFrom::Start(offset))?;
                file.read_exact(&mut buf)?;
                w.write_all(&buf)?;
            }
            Ok(())
        };
        let charts = match partial {
            Some(make) => {
                interrupted()?;
                let charts = kept.clone().charts();
                let path = root.join(PARTIAL_FILE);
                atomic_write(&path, &make(files, kept)?)?;
                written.push(path);
                charts
            }
            None => kept.charts(),
        };
        written.extend(write_reports(&root, report, &charts, calls)?);
        let written = written.iter().map(|p| self.staged.final_path(p)).collect();
        self.staged.commit()?;
        Ok(written)
    }
}

/// Makes a shard's `partial.json` from where each session's files went (in
/// report order) and the charts its writer kept.
pub type MakePartial<'a> = Box<dyn FnOnce(Vec<SessionFiles>, KeptCharts<SessionKey>) -> std::io::Result<Vec<u8>> + 'a>;

fn calls_header() -> std::io::Result<Vec<u8>> {
    let mut header = csv::Writer::from_writer(Vec::new());
    header.write_record(csv_out::CALL_COLUMNS).map_err(std::io::Error::other)?;
    header.into_inner().map_err(|e| std::io::Error::other(e.to_string()))
}

/// `path` under `root`, `/`-separated (how a partial names its files).
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// One session of a merged run: its key, the folder of the partial it came
/// from, and where its files are there.
pub struct MergedSession<'a> {
    pub key: &'a SessionKey,
    pub dir: &'a Path,
    pub files: &'a SessionFiles,
}

/// Write a merged run under `out` as one process would have written it:
/// every transcript linked (or copied) from its partial under its
/// report-order name,
/// calls.csv from the partials' rows in report order, then the reports.
/// `sessions` are in report order. Staged like a replay: `out` changes only
/// when everything is written.
pub fn write_merged(
    out: &Path,
    report: &Report,
    charts: &Charts,
    sessions: &[MergedSession<'_>],
    opts: WriteOptions,
) -> std::io::Result<Vec<PathBuf>> {
    let policies: Vec<String> = report.policies.iter().map(|p| p.name.clone()).collect();
    let staged = staging(out, &policies);
    staged.create()?;
    let root = staged.dir().to_path_buf();
    let mut written = Vec::new();
    if opts.transcripts {
        let mut names = TranscriptNames::default();
        for (pi, name) in policies.iter().enumerate() {
            let dir = transcript_dir(&root, name);
            ensure_dir(&dir)?;
            for s in sessions {
                for (_, rel) in s.files.transcripts.iter().filter(|(p, _)| *p == pi) {
                    let from = inside(s.dir, rel)?;
                    let stem = names.stem(pi, &s.key.session_id, &s.key.source_path);
                    let path = dir.join(format!("{stem}.jsonl"));
                    interrupted()?;
                    place_copy(&from, &path)?;
                    written.push(path);
                }
            }
        }
    }
    let header = calls_header()?;
    let calls = |w: &mut dyn Write| -> std::io::Result<()> {
        w.write_all(&header)?;
        let mut open: Option<(&Path, std::fs::File)> = None;
        let mut buf = Vec::new();
        for s in sessions {
            let (offset, len) = s.files.calls;
            if len == 0 {
                continue;
            }
            if open.as_ref().is_none_or(|(d, _)| *d != s.dir) {
                let path = s.dir.join("calls.csv");
                let f = std::fs::File::open(&path)
                    .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
                open = Some((s.dir, f));
            }
            if let Some((_, f)) = open.as_mut() {
                buf.resize(usize::try_from(len).map_err(std::io::Error::other)?, 0);
                f.seek(SeekFrom::Start(offset))?;
                f.read_exact(&mut buf)?;
                w.write_all(&buf)?;
            }
        }
        Ok(())
    };
    written.extend(write_reports(&root, report, charts, calls)?);
    let written = written.iter().map(|p| staged.final_path(p)).collect();
    staged.commit()?;
    Ok(written)
}

/// `to` (new, in the staging folder) with the bytes of the partial's file
/// `from`: a hard link where the file system allows one (a transcript is
/// never written in place, so the two cannot drift), else a copy.
fn place_copy(from: &Path, to: &Path) -> std::io::Result<()> {
    if std::fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    atomic_write_unsynced_with(to, |w| std::io::copy(&mut std::fs::File::open(from)?, w).map(|_| ()))
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", from.display())))
}

/// Every file `sessions` name in their partials, there and inside them:
/// checked before anything is written, so a merge that cannot finish leaves
/// `--out` as it was.
pub fn check_merged(sessions: &[MergedSession<'_>]) -> std::io::Result<()> {
    for s in sessions {
        for (_, rel) in &s.files.transcripts {
            let path = inside(s.dir, rel)?;
            if !path.is_file() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("{}: the partial names {rel}, which is not there", s.dir.display()),
                ));
            }
        }
        let calls = s.dir.join("calls.csv");
        let len = std::fs::metadata(&calls).map(|m| m.len()).unwrap_or(0);
        if s.files.calls.1 > 0 && s.files.calls.0.saturating_add(s.files.calls.1) > len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: calls.csv is shorter than the partial says", s.dir.display()),
            ));
        }
    }
    Ok(())
}

/// A partial's `/`-separated path under its folder; refuses one that would
/// leave it (a partial is input like any other). The names a run writes
/// ([`safe_stem`]) never hold a `:`, which on Windows can name a drive.
fn inside(dir: &Path, rel: &str) -> std::io::Result<PathBuf> {
    let mut path = dir.to_path_buf();
    for part in rel.split('/') {
        if part.is_empty() || part == "." || part == ".." || part.contains(['\\', ':']) || Path::new(part).is_absolute()
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {rel}: not a file of the partial", dir.display()),
            ));
        }
        path.push(part);
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Session;
    use crate::pipeline::replay_many;
    use crate::policy::Policy;
    use crate::replay::{BuiltinResolver, ReplayOptions};
    use crate::testing::fixtures_dir;

    /// A partial's file names stay under its folder: what a run writes is
    /// accepted, anything that could lead out of it is not.
    #[test]
    fn a_partial_names_files_inside_its_folder_only() {
        let dir = Path::new("part");
        let ok = inside(dir, "transcripts/default/s-1.jsonl").unwrap();
        assert_eq!(ok, dir.join("transcripts").join("default").join("s-1.jsonl"));
        for bad in ["../x.jsonl", "transcripts/../../x", "/etc/passwd", "a//b", "./a", "C:x", "a\\..\\b", ""] {
            assert!(inside(dir, bad).is_err(), "{bad}");
        }
    }

    fn policies() -> Vec<Policy> {
        ["default", "opal"]
            .iter()
            .map(|name| {
                let mut p = crate::presets::require(name).unwrap();
                // Small enough that the fixtures compact and prune.
                for kv in ["context_window=6000", "compact.reserve_tokens=1000"] {
                    p.apply_assignment(kv).unwrap();
                }
                p
            })
            .collect()
    }

    /// The fixtures, plus two copies of the longest session under the same id
    /// from other paths (so transcript names collide); the longest first.
    fn sessions() -> Vec<Session> {
        let (inputs, _) = crate::read::discover(&[fixtures_dir()]);
        let mut sessions = crate::read::read_all(&inputs, None).sessions;
        sessions.sort_by_key(|s| std::cmp::Reverse(s.messages.len()));
        let first = sessions[0].clone();
        for k in 1..=2 {
            let mut s = first.clone();
            s.source_path = PathBuf::from(format!("{}-copy{k}", first.source_path.display()));
            sessions.push(s);
        }
        sessions
    }

    /// Every file under `dir` by relative path, with its bytes.
    fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut v: Vec<(PathBuf, Vec<u8>)> = walkdir::WalkDir::new(dir)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| (e.path().strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(e.path()).unwrap()))
            .collect();
        v.sort();
        v
    }

    /// The streaming writer leaves the same files, byte for byte, as writing
    /// everything at the end, whatever order the sessions finish in: in report
    /// order, reversed (sessions sharing an id then take stand-in names that
    /// `finish` renames), and interleaved.
    #[test]
    fn session_writer_matches_write_all_in_any_order() {
        let sessions = sessions();
        let policies = policies();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let results = replay_many(&sessions, &policies, &BuiltinResolver, ReplayOptions::default(), &pool, None);
        let report = crate::report::build(&["in".to_string()], 1, &sessions, &[], &policies, &results, false);
        let opts = WriteOptions { transcripts: true };
        let dir = tempfile::tempdir().unwrap();
        let reference = dir.path().join("all");
        write_all(&reference, &report, &results, opts).unwrap();
        let expected = tree(&reference);
        // The three sessions sharing an id have one transcript each per policy.
        let stem = safe_stem(&sessions[0].id);
        let same_id = |p: &Path| p.file_name().is_some_and(|f| f.to_string_lossy().starts_with(&stem));
        assert!(expected.iter().filter(|(p, _)| same_id(p)).count() >= 3 * policies.len());

        let keys: Vec<SessionKey> = results
            .iter()
            .enumerate()
            .map(|(i, r)| SessionKey {
                session_id: r.session_id.clone(),
                source_path: r.source_path.clone(),
                input: i,
                index: 0,
            })
            .collect();
        let n = results.len();
        let reversed: Vec<usize> = (0..n).rev().collect();
        let interleaved: Vec<usize> = (0..n).step_by(2).chain((1..n).step_by(2)).collect();
        for (name, order) in [("forward", (0..n).collect()), ("reversed", reversed), ("interleaved", interleaved)] {
            let out = dir.path().join(name);
            let names: Vec<String> = policies.iter().map(|p| p.name.clone()).collect();
            let writer = SessionWriter::new(&out, &names, opts);
            let mut written: Vec<Option<Written>> = vec![None; n];
            for i in order {
                written[i] = Some(writer.write_session(&keys[i], &results[i]).unwrap());
            }
            let written: Vec<Written> = written.into_iter().map(Option::unwrap).collect();
            let pairs: Vec<(&SessionKey, &Written)> = keys.iter().zip(&written).collect();
            writer.finish(&report, &pairs).unwrap();
            let got = tree(&out);
            assert_eq!(
                got.iter().map(|f| &f.0).collect::<Vec<_>>(),
                expected.iter().map(|f| &f.0).collect::<Vec<_>>(),
                "{name}: file names"
            );
            for (g, e) in got.iter().zip(&expected) {
                assert!(g.1 == e.1, "{name}: {} differs", g.0.display());
            }
        }
    }

    /// The chart keeper keeps the charts the page draws from every session,
    /// whatever order the sessions arrive in and however many are drawn.
    #[test]
    fn chart_keeper_keeps_the_largest_in_any_order() {
        let sessions = sessions();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let results = replay_many(&sessions, &policies(), &BuiltinResolver, ReplayOptions::default(), &pool, None);
        let n = results.len();
        assert!(n > 4, "{n}");
        for max in [0, 1, 3, n - 1, n + 1] {
            let reference = Charts::from_results(&results, max);
            assert_eq!(reference.sessions.len(), max.min(reference.candidates));
            for rotate in [1, n / 2, n - 1] {
                let mut keeper = ChartKeeper::new(max);
                for i in (0..n).rev().map(|i| (i + rotate) % n) {
                    keeper.offer(i, &results[i]);
                }
                assert!(keeper.finish() == reference, "max {max}, rotated by {rotate}");
            }
        }
    }
}
