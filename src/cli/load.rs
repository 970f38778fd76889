//! Loading the sessions a command works on, the same way for every command:
//! `--format`, default locations, `--jobs`, discovery, reading, and printing
//! what could not be read (`path:line: reason`).

use super::args::InputArgs;
use super::inspect::clean;
use anyhow::{Context, bail};
use compactor::model::{Diagnostic, Format, Severity};
use compactor::pipeline::{InputList, Shard};
use compactor::read::{self, Batch, Location};
use std::path::{Path, PathBuf};

pub struct Loaded {
    pub batch: Batch,
    /// The inputs read (or tried), as discovered: a shard's only.
    pub inputs: Vec<read::Input>,
    /// Every input found, also those of other shards.
    pub input_list: InputList,
    /// The paths as given (or the default locations), for the report.
    pub paths: Vec<String>,
    pub pool: rayon::ThreadPool,
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

/// The default locations looked in, when no path was given.
pub struct Searched {
    pub home: read::Home,
    pub places: Vec<Location>,
}

/// The paths to read: those given, else the agents' default locations that
/// exist (with every location looked in, for [`searched_text`]).
pub fn resolve_paths(paths: Vec<PathBuf>) -> anyhow::Result<(Vec<PathBuf>, Option<Searched>)> {
    if !paths.is_empty() {
        return Ok((paths, None));
    }
    let Some(home) = read::Home::from_env() else {
        bail!("no input: give session files or directories (no home directory, so no default location either)");
    };
    let searched = read::locations::all(&home);
    let found: Vec<PathBuf> = searched.iter().map(|l| l.path.clone()).filter(|p| p.is_dir()).collect();
    if found.is_empty() {
        bail!("no input: give session files or directories. No agent's default location exists:\n{}", {
            let mut t = searched_text(&searched, &[], home.dir(), true);
            t.truncate(t.trim_end().len());
            t
        });
    }
    Ok((found, Some(Searched { home, places: searched })))
}

/// Each default location looked in, with the session inputs found under it
/// (`~` for the home directory). With `all`, the missing ones one per line
/// too; else they are named by agent on one line.
pub fn searched_text(searched: &[Location], inputs: &[read::Input], home: &Path, all: bool) -> String {
    let shown = |p: &Path| match p.strip_prefix(home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => p.display().to_string(),
    };
    let mut missing: Vec<&str> = Vec::new();
    let mut rows: Vec<(String, String)> = Vec::new();
    // An agent one of whose places is there is not said to have none.
    let present: Vec<&str> = searched.iter().filter(|l| l.path.is_dir()).map(|l| l.agent).collect();
    for l in searched {
        let what = if l.path.is_dir() {
            match inputs.iter().filter(|i| i.path.starts_with(&l.path)).count() {
                0 => "no session".to_string(),
                n => format!("{n} session file(s)"),
            }
        } else if all {
            "not there".to_string()
        } else {
            if !missing.contains(&l.agent) && !present.contains(&l.agent) {
                missing.push(l.agent);
            }
            continue;
        };
        rows.push((format!("{:<12} {}", l.agent, clean(&shown(&l.path), usize::MAX)), what));
    }
    let w = rows.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0);
    let mut out: String = rows.into_iter().map(|(l, what)| format!("  {l:<w$}  {what}\n")).collect();
    if !missing.is_empty() {
        out.push_str(&format!(
            "  nothing where {} keep theirs (docs/discovery.md lists each place)\n",
            missing.join(", ")
        ));
    }
    out
}

pub fn thread_pool(jobs: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    // 0 lets rayon pick one thread per core.
    rayon::ThreadPoolBuilder::new().num_threads(jobs.unwrap_or(0)).build().context("cannot start the worker threads")
}

pub fn list_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// The inputs a command works on, found but not read yet.
pub struct Discovered {
    pub inputs: Vec<read::Input>,
    pub format: Option<Format>,
    pub pool: rayon::ThreadPool,
    /// The paths as given (or the default locations), for the report.
    pub paths: Vec<String>,
    pub quiet: bool,
}

/// Resolve `--format`, the paths and `--jobs`, and discover the inputs. Paths
/// that match nothing are printed; fails when nothing was found.
pub fn discover(input: InputArgs) -> anyhow::Result<Discovered> {
    let InputArgs { paths, format, jobs, quiet } = input;
    let format = parse_format(format)?;
    let (paths, searched) = resolve_paths(paths)?;
    let pool = thread_pool(jobs)?;
    let (inputs, problems) = read::discover(&paths);
    if let (Some(s), false) = (&searched, quiet) {
        eprint!(
            "no path given: read the agents' logs where they keep them\n{}",
            searched_text(&s.places, &inputs, s.home.dir(), false)
        );
    }
    // A path given that names nothing readable (a typo, a renamed log, a
    // pattern matching no file) is a usage error, before anything is read:
    // a run over the rest would report on fewer logs than asked, and a
    // `check` would gate them.
    for p in &problems {
        eprintln!("{}", clean(&p.to_string(), usize::MAX));
    }
    if !problems.is_empty() {
        bail!("nothing was read: {} of the {} path(s) given cannot be read (above)", problems.len(), paths.len());
    }
    if inputs.is_empty() {
        bail!("no session files found in {}", list_paths(&paths));
    }
    let paths = paths.iter().map(|p| p.display().to_string()).collect();
    Ok(Discovered { inputs, format, pool, paths, quiet })
}

/// Discover and read every input. Problems are printed (errors always, warnings
/// unless `--quiet`); fails only when nothing could be read.
pub fn load(input: InputArgs) -> anyhow::Result<Loaded> {
    let loaded = load_shard(input, None)?;
    if loaded.batch.inputs_read == 0 {
        bail!("no session could be read ({} input(s) failed)", loaded.batch.failures.len());
    }
    Ok(loaded)
}

/// Discover every input and read those of `shard` (all without), printing
/// problems as [`load`] does; a shard may read nothing.
pub fn load_shard(input: InputArgs, shard: Option<Shard>) -> anyhow::Result<Loaded> {
    let Discovered { inputs, format, pool, quiet, paths } = discover(input)?;
    let input_list = InputList::of(&inputs);
    let inputs = match super::shard::select(shard, &inputs, format)?.0 {
        Some(keep) => inputs.into_iter().zip(keep).filter_map(|(i, k)| k.then_some(i)).collect(),
        None => inputs,
    };
    let batch = pool.install(|| read::read_all(&inputs, format));
    print_diagnostics(&batch, quiet);
    Ok(Loaded { batch, inputs, input_list, paths, pool, quiet })
}

/// Diagnostics go through [`clean`]: they quote file names and log text, which
/// may carry terminal escapes.
pub fn print_diagnostics(batch: &Batch, quiet: bool) {
    print_failures(&batch.failures, quiet);
    if !quiet {
        for s in &batch.sessions {
            print_session_warnings(&s.source_path, &s.diagnostics.messages, s.diagnostics.unlisted);
        }
    }
}

/// Inputs that could not be read: errors always, warnings unless `--quiet`.
pub fn print_failures(failures: &[Diagnostic], quiet: bool) {
    for d in failures {
        if d.severity == Severity::Error || !quiet {
            eprintln!("{}", clean(&d.to_string(), usize::MAX));
        }
    }
}

/// One session's warnings, and how many more were only counted.
pub fn print_session_warnings(source_path: &std::path::Path, warnings: &[Diagnostic], unlisted: u64) {
    for d in warnings {
        eprintln!("{}", clean(&d.to_string(), usize::MAX));
    }
    if unlisted > 0 {
        let path = clean(&source_path.display().to_string(), usize::MAX);
        eprintln!("{path}: {unlisted} more warning(s) not listed");
    }
}

/// A progress bar on stderr, `what` saying what advances (`replaying
/// {pos}/{len} files`); hidden under `--quiet` or when stderr is no terminal.
pub fn progress_bar(what: &str, len: u64, quiet: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(" {{spinner}} {what} {{wide_bar}} {{eta}}")) {
        bar.set_style(style);
    }
    bar
}

/// The pool to replay on when `waiting` threads may block on a summarizer
/// (LLM requests, programs) at once: `pool`, or a wider one so that many stay
/// in flight (the CPU work stays bounded by the cores anyway).
pub fn wide_pool(pool: &rayon::ThreadPool, waiting: usize) -> anyhow::Result<Option<rayon::ThreadPool>> {
    if waiting > pool.current_num_threads() { thread_pool(Some(waiting)).map(Some) } else { Ok(None) }
}
