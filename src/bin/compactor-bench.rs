//! compactor-bench: the tooling behind `scripts/bench.sh` (DESIGN.md §9).
//!
//! - `gen` writes a deterministic synthetic Claude Code corpus (idempotent: a
//!   directory already holding the same size+seed+generator version is reused);
//! - `gen-session` writes one session with exactly N human turns (replay-time
//!   linearity: n vs 4n);
//! - `parse-floor` is the raw parse floor: serde_json into typed structs, one
//!   thread, nothing else;
//! - `count-o200k` is raw o200k_base counting of the strings an estimator counts;
//! - `quality` replays a corpus through presets at a small context window and
//!   prints, per preset, savings and summary quality of the policy's summarizer
//!   against truncate, observation masking and the oracle at the same
//!   compaction points, with token budgets (see `bench/quality.rs`).
//!
//! The numbers printed here are the tool's own inner timings; `bench.sh` times
//! whole processes so every step is measured the same way.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use compactor::synth::{self, SessionSpec, floor};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "../allocator.rs"]
mod allocator;

#[path = "bench/quality.rs"]
mod quality_bench;

#[derive(Parser)]
#[command(
    name = "compactor-bench",
    about = "Benchmark tooling for compactor: synthetic corpus, parse floor, raw o200k"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate a synthetic Claude Code corpus of about SIZE bytes into DIR.
    Gen {
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Total size: 500MB, 50MB, 1.5GB, 64MiB, or bytes.
        #[arg(long, default_value = "500MB", value_parser = parse_size)]
        size: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Write one session with exactly N human turns.
    GenSession {
        #[arg(long, value_name = "N")]
        turns: usize,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Let the context grow without the agent's own auto-compactions.
        #[arg(long)]
        no_compact: bool,
    },
    /// Raw parse floor: serde_json of every line into typed structs, one thread.
    ParseFloor {
        /// Files or directories (searched for *.jsonl).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Raw o200k_base counting of the text an estimator counts, one thread.
    CountO200k {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Count with compactor's estimator (which remembers the count of each
        /// pre-tokenized piece) instead of the raw tokenizer: same counts, and
        /// shows what the cache is worth.
        #[arg(long)]
        piece_cache: bool,
    },
    /// Summary quality per preset on a corpus (extractive vs the references).
    Quality(quality_bench::Args),
}

fn parse_size(s: &str) -> Result<u64, String> {
    synth::parse_size(s).ok_or_else(|| format!("not a size: {s:?} (try 500MB, 50MB, 1GB)"))
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Gen { out, size, seed } => gen_corpus(&out, size, seed),
        Cmd::GenSession { turns, out, seed, no_compact } => {
            let mut spec = SessionSpec::turns(seed, turns);
            if no_compact {
                spec.compact_at = None;
            }
            let g = synth::generate_session(&spec);
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(&out, &g.data).with_context(|| format!("writing {}", out.display()))?;
            println!(
                "gen-session: {} turns, {} calls, {} tool calls, {} compactions, {} bytes -> {}",
                g.stats.human_turns,
                g.stats.calls,
                g.stats.tool_calls,
                g.stats.compactions,
                g.data.len(),
                out.display()
            );
            Ok(())
        }
        Cmd::ParseFloor { paths } => parse_floor(&paths),
        Cmd::CountO200k { paths, piece_cache } => count_o200k(&paths, piece_cache),
        Cmd::Quality(args) => quality_bench::run(&args),
    }
}

const STAMP: &str = ".synth-stamp";

fn gen_corpus(out: &Path, size: u64, seed: u64) -> Result<()> {
    let stamp = format!("compactor-synth v{} seed={seed} size={size}\n", synth::SYNTH_VERSION);
    let stamp_path = out.join(STAMP);
    match std::fs::read_to_string(&stamp_path) {
        Ok(s) if s == stamp => {
            println!("gen: reusing {} ({})", out.display(), stamp.trim());
            return Ok(());
        }
        // A corpus this tool wrote, for other parameters: ours to replace.
        Ok(_) => std::fs::remove_dir_all(out).with_context(|| format!("removing stale {}", out.display()))?,
        Err(_) => {
            let non_empty = std::fs::read_dir(out).map(|mut d| d.next().is_some()).unwrap_or(false);
            if non_empty {
                bail!("{} is not empty and holds no generated corpus; refusing to write into it", out.display());
            }
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;

    let start = Instant::now();
    let plan = synth::plan_corpus(seed, size);
    // Sessions are independent and seeded one by one: generating them in
    // parallel gives the same files.
    let written: Vec<(u64, u64)> = plan
        .par_iter()
        .map(|spec| -> Result<(u64, u64)> {
            let g = synth::generate_session(spec);
            let path = out.join(g.relative_path());
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(&path, &g.data).with_context(|| format!("writing {}", path.display()))?;
            Ok((g.data.len() as u64, g.stats.tool_result_bytes))
        })
        .collect::<Result<_>>()?;
    let bytes: u64 = written.iter().map(|w| w.0).sum();
    let tool_bytes: u64 = written.iter().map(|w| w.1).sum();
    std::fs::write(&stamp_path, &stamp).with_context(|| format!("writing {}", stamp_path.display()))?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "gen: {} sessions, {:.1} MB ({:.0}% in tool-result records) in {secs:.1} s -> {}",
        plan.len(),
        bytes as f64 / 1e6,
        100.0 * tool_bytes as f64 / bytes.max(1) as f64,
        out.display()
    );
    Ok(())
}

/// `*.jsonl` files under the given paths, sorted.
fn jsonl_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_file() {
            files.push(p.clone());
            continue;
        }
        if !p.is_dir() {
            bail!("{}: no such file or directory", p.display());
        }
        for e in walkdir::WalkDir::new(p) {
            let e = e.with_context(|| format!("walking {}", p.display()))?;
            if e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "jsonl") {
                files.push(e.into_path());
            }
        }
    }
    files.sort();
    if files.is_empty() {
        bail!("no .jsonl files found");
    }
    Ok(files)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

fn mbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64().max(1e-9)
}

fn parse_floor(paths: &[PathBuf]) -> Result<()> {
    let files = jsonl_files(paths)?;
    let mut total = floor::FloorStats::default();
    let (mut read_time, mut parse_time) = (Duration::ZERO, Duration::ZERO);
    for f in &files {
        let t = Instant::now();
        let data = read(f)?;
        read_time += t.elapsed();
        let t = Instant::now();
        let s = floor::parse(&data);
        parse_time += t.elapsed();
        total.add(&s);
    }
    println!(
        "parse-floor: {} files, {:.1} MB, {} lines ({} bad), {} blocks, {} tool uses, {} tool results, {} usage lines, {:.1} MB text",
        files.len(),
        total.bytes as f64 / 1e6,
        total.lines,
        total.bad_lines,
        total.blocks,
        total.tool_uses,
        total.tool_results,
        total.usage_lines,
        total.text_bytes as f64 / 1e6
    );
    println!(
        "parse-floor: read {:.3} s, parse {:.3} s = {:.0} MB/s (1 thread)",
        read_time.as_secs_f64(),
        parse_time.as_secs_f64(),
        mbps(total.bytes, parse_time)
    );
    Ok(())
}

fn count_o200k(paths: &[PathBuf], piece_cache: bool) -> Result<()> {
    use compactor::tokens::Estimator;
    let files = jsonl_files(paths)?;
    let bpe = bpe_openai::o200k_base();
    // The vocabulary is built on first use; keep that out of the timing.
    let _ = bpe.count("warm up");
    let count =
        |s: &str| -> u64 { if piece_cache { compactor::tokens::O200k.text_tokens(s) } else { bpe.count(s) as u64 } };
    let (mut bytes, mut text_bytes, mut tokens, mut pieces) = (0u64, 0u64, 0u64, 0u64);
    let (mut extract_time, mut count_time) = (Duration::ZERO, Duration::ZERO);
    for f in &files {
        let data = read(f)?;
        bytes += data.len() as u64;
        let t = Instant::now();
        let mut texts: Vec<String> = Vec::new();
        floor::estimator_texts(&data, |s| texts.push(s.to_owned()));
        extract_time += t.elapsed();
        let t = Instant::now();
        for s in &texts {
            tokens += count(s);
        }
        count_time += t.elapsed();
        text_bytes += texts.iter().map(|s| s.len() as u64).sum::<u64>();
        pieces += texts.len() as u64;
    }
    println!(
        "count-o200k: {} files, {:.1} MB, {:.1} MB text in {pieces} pieces, {tokens} tokens ({:.2} bytes/token)",
        files.len(),
        bytes as f64 / 1e6,
        text_bytes as f64 / 1e6,
        text_bytes as f64 / tokens.max(1) as f64
    );
    println!(
        "count-o200k: extract {:.3} s, count {:.3} s = {:.1} MB/s of corpus, {:.1} MB/s of text (1 thread{})",
        extract_time.as_secs_f64(),
        count_time.as_secs_f64(),
        mbps(bytes, count_time),
        mbps(text_bytes, count_time),
        if piece_cache { ", piece cache" } else { "" }
    );
    Ok(())
}
