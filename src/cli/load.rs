//! Loading the sessions a command works on, the same way for every command:
//! `--format`, default locations, `--jobs`, discovery, reading, and printing
//! what could not be read (`path:line: reason`).

use super::args::InputArgs;
use super::inspect::clean;
use anyhow::{Context, bail};
use compactor::model::{Format, Severity};
use compactor::read::{self, Batch};
use std::path::PathBuf;

pub struct Loaded {
    pub batch: Batch,
    pub pool: rayon::ThreadPool,
    /// The paths as given (or the default locations), for the report.
    pub paths: Vec<String>,
    pub quiet: bool,
}

pub fn parse_format(format: Option<String>) -> anyhow::Result<Option<Format>> {
    match format {
        Some(name) => Ok(Some(Format::from_name(&name).with_context(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            format!("unknown --format `{name}` (expected one of: {})", names.join(", "))
        })?)),
        None => Ok(None),
    }
}

pub fn resolve_paths(paths: Vec<PathBuf>) -> anyhow::Result<Vec<PathBuf>> {
    if !paths.is_empty() {
        return Ok(paths);
    }
    let defaults = read::default_locations();
    if defaults.is_empty() {
        bail!(
            "no input: give session files or directories (the default locations ~/.claude/projects \
             and ~/.codex/sessions do not exist)"
        );
    }
    Ok(defaults)
}

pub fn thread_pool(jobs: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    // 0 lets rayon pick one thread per core.
    rayon::ThreadPoolBuilder::new().num_threads(jobs.unwrap_or(0)).build().context("cannot start the worker threads")
}

pub fn list_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// Discover and read every input. Problems are printed (errors always, warnings
/// unless `--quiet`); fails only when nothing could be read.
pub fn load(input: InputArgs) -> anyhow::Result<Loaded> {
    let InputArgs { paths, format, jobs, quiet } = input;
    let format = parse_format(format)?;
    let paths = resolve_paths(paths)?;
    let pool = thread_pool(jobs)?;
    let (inputs, problems) = read::discover(&paths);
    // Paths that match nothing are errors: always shown, even with --quiet.
    for p in &problems {
        eprintln!("{}", clean(&p.to_string(), usize::MAX));
    }
    if inputs.is_empty() {
        if problems.is_empty() {
            bail!("no session files found in {}", list_paths(&paths));
        }
        bail!("no session could be read");
    }
    let batch = pool.install(|| read::read_all(&inputs, format));
    print_diagnostics(&batch, quiet);
    if batch.inputs_read == 0 {
        bail!("no session could be read ({} input(s) failed)", batch.failures.len());
    }
    let paths = paths.iter().map(|p| p.display().to_string()).collect();
    Ok(Loaded { batch, pool, paths, quiet })
}

/// Diagnostics go through [`clean`]: they quote file names and log text, which
/// may carry terminal escapes.
pub fn print_diagnostics(batch: &Batch, quiet: bool) {
    for d in &batch.failures {
        if d.severity == Severity::Error || !quiet {
            eprintln!("{}", clean(&d.to_string(), usize::MAX));
        }
    }
    if !quiet {
        for s in &batch.sessions {
            for d in &s.diagnostics.messages {
                eprintln!("{}", clean(&d.to_string(), usize::MAX));
            }
            if s.diagnostics.unlisted > 0 {
                let path = clean(&s.source_path.display().to_string(), usize::MAX);
                eprintln!("{path}: {} more warning(s) not listed", s.diagnostics.unlisted);
            }
        }
    }
}
