//! Fuzzing of format detection, every reader and `inspect`, as proptest properties
//! so CI runs them on every change (the coverage-guided cargo-fuzz targets in
//! `fuzz/` need a nightly toolchain CI does not have; they share the generator in
//! `fuzz_support`).
//!
//! Each target builds structure-aware cases from the fixtures of its format (see
//! `fuzz_support` for the mutations) and checks that nothing panics, diagnostics
//! never quote content, and the model's indexes stay in bounds.
//!
//! Case counts are small by default so CI stays fast; run long locally with
//! `COMPACTOR_FUZZ_CASES=100000 cargo test --release --test fuzz_readers`. A case
//! that panics or runs longer than the watchdog allows is written to
//! `target/fuzz-failures/` before the test fails, ready to become a regression
//! file under `fixtures/regressions/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::fuzz_runner;
use crate::fuzz_support;

use compactor::model::Format;
use fuzz_support::{Case, Seed, Target, build_case, check, load_seeds};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Default cases per target: enough to catch regressions, cheap in a debug build.
const DEFAULT_CASES: u32 = 200;

/// A reader target with its seeds, for the shared runner.
struct Reader {
    target: Target,
    seeds: Vec<Seed>,
}

impl fuzz_runner::Target for Reader {
    type Case = Case;
    fn name(&self) -> String {
        self.target.name()
    }
    fn build(&self, bytes: &[u8]) -> Case {
        build_case(&self.seeds, bytes)
    }
    fn check(&self, case: &Case) {
        check(self.target, case);
    }
    fn save(name: &str, what: &str, case: &Case) -> PathBuf {
        let dir = fuzz_runner::failures_dir();
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join(format!("{name}-{what}-{}.bin", case.data.len()));
        let _ = std::fs::write(&file, &case.data);
        if let Some(ui) = &case.ui {
            let _ = std::fs::write(file.with_extension("ui.json"), ui);
        }
        if let Some(context) = &case.context {
            let _ = std::fs::write(file.with_extension("context.json"), context);
        }
        let _ = std::fs::write(file.with_extension("name"), &case.name);
        file
    }
}

fn run(target: Target) {
    let seeds = load_seeds(&compactor::testing::fixtures_dir(), target);
    fuzz_runner::run(&Reader { target, seeds }, fuzz_runner::cases(DEFAULT_CASES), 256);
}

#[test]
fn fuzz_detect() {
    run(Target::Detect);
}

#[test]
fn fuzz_claude() {
    run(Target::Reader(Format::ClaudeCode));
}

#[test]
fn fuzz_codex() {
    run(Target::Reader(Format::Codex));
}

#[test]
fn fuzz_codex_exec() {
    run(Target::Reader(Format::CodexExec));
}

#[test]
fn fuzz_pi() {
    run(Target::Reader(Format::Pi));
}

#[test]
fn fuzz_gemini() {
    run(Target::Reader(Format::Gemini));
}

#[test]
fn fuzz_cline() {
    run(Target::ClineTask);
}

#[test]
fn fuzz_generic() {
    run(Target::Reader(Format::Generic));
}

/// Every input the fuzzers (or reviews) found a crash, hang or wrong index with,
/// replayed through the same checks. Files are `fixtures/regressions/TARGET--WHAT.bin`
/// (`.bin`, so `compactor inspect fixtures/` does not pick them up as sessions); a
/// Cline task's `ui_messages.json` and `context_history.json` sit next to its
/// history as `….ui.bin` and `….context.bin`.
#[test]
fn regressions() {
    let dir = compactor::testing::fixtures_dir().join("regressions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .filter(|p| ![".ui.bin", ".context.bin"].iter().any(|x| p.to_string_lossy().ends_with(x)))
        // Replay regressions are sessions, replayed by tests/fuzz_replay.rs.
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with("replay--"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for file in files {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let target = match stem.split("--").next().unwrap() {
            "detect" => Target::Detect,
            "cline-task" => Target::ClineTask,
            name => Target::Reader(Format::from_name(name).unwrap_or_else(|| panic!("{stem}: unknown target"))),
        };
        let ui = std::fs::read(file.with_extension("ui.bin")).ok();
        let context = std::fs::read(file.with_extension("context.bin")).ok();
        let name = std::fs::read_to_string(file.with_extension("name")).unwrap_or_else(|_| "session.jsonl".into());
        let case = Case { name, data: std::fs::read(&file).unwrap(), ui, context };
        let started = Instant::now();
        check(target, &case);
        // Generous even for a debug build: the hangs these files pin took minutes.
        assert!(started.elapsed() < Duration::from_secs(10), "{stem} took {:?}", started.elapsed());
    }
}
