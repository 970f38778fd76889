//! Writing a replay's files under `--out`: report.json, sessions.csv, calls.csv,
//! quality.csv, report.md and `transcripts/POLICY/SESSION.jsonl`. Every name derived from a
//! session id or policy name is sanitized; every file is written atomically.

use super::{Report, csv_out, markdown, to_json, transcript_jsonl};
use crate::output::fsutil::{atomic_write, ensure_dir, safe_stem};
use crate::replay::SessionResults;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What to write besides the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    pub transcripts: bool,
}

/// report.html of a replay or compare: the policies side by side, the
/// distributions, and the context charts of the largest sessions.
pub fn html_page(report: &Report, results: &[SessionResults]) -> String {
    let columns = super::compare::columns(report, &super::quality::policy_scores(report));
    let frr = super::quality::session_frr(report);
    let command = if report.policies.len() > 1 { "compare" } else { "replay" };
    super::html::report_html(&super::html::Page {
        command,
        report: Some(report),
        results,
        columns: &columns,
        frr: frr.as_deref(),
        sweep: None,
        max_sessions: super::html::DEFAULT_MAX_SESSIONS,
    })
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
        // Two sessions can share an id (a resumed log copied twice); their file
        // names get the source path's hash so neither overwrites the other.
        let mut used: HashSet<(usize, String)> = HashSet::new();
        for (pi, name) in policies.iter().enumerate() {
            let dir = out.join("transcripts").join(safe_stem(name));
            ensure_dir(&dir)?;
            for r in results {
                let Some(Ok(trace)) = r.traces.get(pi) else { continue };
                let mut stem = safe_stem(&r.session_id);
                if !used.insert((pi, stem.clone())) {
                    stem = format!(
                        "{stem}-{:08x}",
                        crate::output::fsutil::fnv1a(r.source_path.to_string_lossy().as_bytes()) as u32
                    );
                    used.insert((pi, stem.clone()));
                }
                let path = dir.join(format!("{stem}.jsonl"));
                interrupted()?;
                atomic_write(&path, &transcript_jsonl(trace))?;
                written.push(path);
            }
        }
    }
    for (name, bytes) in [
        ("sessions.csv", csv_out::sessions_csv(report)),
        ("calls.csv", csv_out::calls_csv(results, &policies)),
        ("quality.csv", super::quality::quality_csv(report)),
        ("report.md", markdown::report_md(report).into_bytes()),
        ("report.html", html_page(report, results).into_bytes()),
        // Last, so a report.json present means the run completed.
        ("report.json", to_json(report)),
    ] {
        let path = out.join(name);
        interrupted()?;
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
