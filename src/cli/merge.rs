//! `compactor merge PARTIAL... --out DIR`: join the partial outputs of a
//! sharded run into what the command writes and prints when run whole, and
//! exit as it would. Partials that do not belong together are refused (exit 2)
//! with the reason, before anything is written.

use super::args::MergeArgs;
use super::load::{print_failures, print_session_warnings};
use anyhow::{Context, anyhow, bail};
use compactor::report::partial::{self, Header, Read, ReplayPartial};
use compactor::report::write::{MergedSession, WriteOptions, check_merged, write_merged};
use std::path::{Path, PathBuf};

pub fn run(args: MergeArgs) -> anyhow::Result<u8> {
    if let Some(dir) = &args.out {
        super::preflight::out_dir("--out", dir)?;
    }
    let mut read: Vec<(PathBuf, Header)> = Vec::new();
    for p in &args.partials {
        let dir = partial::partial_dir(p);
        let h = partial::read_header(&dir).map_err(|e| anyhow!(e))?;
        read.push((dir, h));
    }
    // In shard order, whatever the order given: everything after is the same.
    read.sort_by_key(|(dir, h)| (h.shard, h.points, dir.clone()));
    let pairs: Vec<(&Path, &Header)> = read.iter().map(|(d, h)| (d.as_path(), h)).collect();
    if let Some(why) = partial::refuse(&pairs) {
        bail!("cannot merge these partials: {why}");
    }
    let command = read.first().map(|r| r.1.command.clone()).unwrap_or_default();
    if command != "check" {
        for (flag, given) in [
            ("--summary", args.summary.is_some()),
            ("--write-baseline", args.write_baseline.is_some()),
            ("--verbose", args.verbose),
        ] {
            if given {
                bail!("{flag} is for partials of check; these are of {command}");
            }
        }
    }
    if let Some(file) = &args.write_baseline {
        super::preflight::out_file("--write-baseline", file)?;
    }
    if let Some(file) = &args.summary {
        super::preflight::out_file("--summary", file)?;
    }
    match command.as_str() {
        "replay" | "compare" | "check" => replay(&args, read, &command),
        "sweep" => super::sweep::merge(&args, read),
        other => bail!("partials of `{other}` cannot be merged by this compactor"),
    }
}

fn replay(args: &MergeArgs, read: Vec<(PathBuf, Header)>, command: &str) -> anyhow::Result<u8> {
    let mut parts: Vec<Read<ReplayPartial>> = Vec::with_capacity(read.len());
    for (dir, _) in read {
        let partial = partial::parse(&dir).map_err(|e| anyhow!(e))?;
        parts.push(Read { dir, partial });
    }
    let settings = parts.first().map(|p| p.partial.header.settings.clone()).unwrap_or_default();
    let check = parts.first().and_then(|p| p.partial.check.clone());
    let check_invariants = parts.first().is_some_and(|p| p.partial.check_invariants);
    let merged = partial::merge_replay(&mut parts).map_err(|e| anyhow!("cannot merge these partials: {e}"))?;
    let report = &merged.report;
    print_failures(&merged.failures, args.quiet);
    if !args.quiet {
        let mut by_path: Vec<&(usize, partial::PartialSession)> = merged.sessions.iter().collect();
        by_path.sort_by(|a, b| {
            let (a, b) = (&a.1.key, &b.1.key);
            (&a.source_path, &a.session_id, a.input, a.index).cmp(&(&b.source_path, &b.session_id, b.input, b.index))
        });
        for (_, s) in by_path {
            print_session_warnings(&s.key.source_path, &s.summary.warnings, s.summary.unlisted_warnings);
        }
    }
    // What one run checks once every session is read.
    if report.run.inputs_read == 0 {
        bail!("no session could be read ({} input(s) failed)", merged.failures.len());
    }
    if merged.sessions.iter().all(|(_, s)| s.calls == 0) {
        bail!("no session has a single call, nothing to replay");
    }
    let sessions: Vec<MergedSession<'_>> = merged
        .sessions
        .iter()
        .map(|(i, s)| MergedSession { key: &s.key, dir: parts[*i].dir.as_path(), files: &s.files })
        .collect();
    if let Some(out) = &args.out {
        // Every file the partials name, before anything is written.
        check_merged(&sessions).map_err(|e| anyhow!("cannot merge these partials: {e}"))?;
        let transcripts = settings.get("no_transcripts").is_none_or(|v| v != "true");
        write_merged(out, report, &merged.charts, &sessions, WriteOptions { transcripts })
            .with_context(|| format!("cannot write the reports to {}", out.display()))?;
    }
    match command {
        "check" => {
            let c: super::check::Conclusion =
                serde_json::from_value(check.ok_or_else(|| anyhow!("the partials of check record no baseline"))?)
                    .context("the partials of check")?;
            let base = c.parsed_baseline()?;
            if !report.sessions.is_empty() && report.sessions.iter().all(|r| r.error.is_some()) {
                bail!("no session could be replayed");
            }
            let show = super::check::Show {
                out: args.out.as_deref(),
                json: args.json,
                verbose: args.verbose,
                summary: args.summary.as_deref(),
                write_baseline: args.write_baseline.as_deref(),
            };
            super::check::conclude(c, base, report, &show)
        }
        "compare" => {
            let text = super::replay::compare_text(report, args.out.as_deref());
            super::replay::conclude(report, args.json, check_invariants, true, text)
        }
        _ => {
            let text = super::replay::replay_text(report, args.out.as_deref(), args.quiet);
            super::replay::conclude(report, args.json, check_invariants, true, text)
        }
    }
}
