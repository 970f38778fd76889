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

mod fuzz_support;

use compactor::model::Format;
use fuzz_support::{Case, Target, build_case, check, load_seeds};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Default cases per target: enough to catch regressions, cheap in a debug build.
const DEFAULT_CASES: u32 = 200;

fn cases() -> u32 {
    std::env::var("COMPACTOR_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_CASES)
}

/// Longest one case may take before it counts as a hang. Inputs are at most a few
/// MB; a linear reader handles them in well under a second even unoptimized.
fn case_budget() -> Duration {
    let secs = std::env::var("COMPACTOR_FUZZ_CASE_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    Duration::from_secs(secs)
}

fn failures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures")
}

fn save_failure(target: Target, what: &str, case: &Case) -> PathBuf {
    let dir = failures_dir();
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join(format!("{}-{what}-{}.bin", target.name(), case.data.len()));
    let _ = std::fs::write(&file, &case.data);
    if let Some(ui) = &case.ui {
        let _ = std::fs::write(file.with_extension("ui.json"), ui);
    }
    let _ = std::fs::write(file.with_extension("name"), &case.name);
    file
}

/// The case being run, for the watchdog to save when it hangs.
static CURRENT: Mutex<Option<(Target, Case)>> = Mutex::new(None);
/// Milliseconds since `EPOCH` when the current case started; 0 = idle.
static STARTED: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// A thread that ends the process when one case runs past the budget: a hang
/// would otherwise stall CI until its own time limit, with no input to show.
fn start_watchdog() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let budget = case_budget();
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(250));
                let started = STARTED.load(Ordering::SeqCst);
                if started == 0 {
                    continue;
                }
                let now = epoch().elapsed().as_millis() as u64;
                if now.saturating_sub(started) > budget.as_millis() as u64 {
                    let saved = CURRENT.lock().ok().and_then(|c| c.clone());
                    if let Some((t, case)) = saved {
                        let file = save_failure(t, "hang", &case);
                        eprintln!("fuzz case ran over {budget:?} (a hang?): input saved to {}", file.display());
                    }
                    std::process::exit(101);
                }
            }
        });
    });
}

/// The panic of the current case (message and location), captured by a quiet
/// hook: shrinking re-runs a failing case hundreds of times.
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_case = STARTED.load(Ordering::SeqCst) != 0;
            if in_case {
                let loc = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
                let msg = info
                    .payload()
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                if let Ok(mut p) = LAST_PANIC.lock() {
                    *p = format!("{msg} at {loc}");
                }
            } else {
                default(info);
            }
        }));
    });
}

fn run(target: Target) {
    start_watchdog();
    quiet_panics();
    let fixtures = compactor::testing::fixtures_dir();
    let seeds = load_seeds(&fixtures, target);
    let config = Config {
        cases: cases(),
        // The failing input is saved as a file instead (see `save_failure`).
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let started = Instant::now();
    // Every failing case shrinking accepts replaces the previous one, so the last
    // one seen is the minimal input proptest reports.
    let last_failure: Mutex<Option<Case>> = Mutex::new(None);
    let result = runner.run(&prop::collection::vec(any::<u8>(), 0..256), |bytes| {
        let case = build_case(&seeds, &bytes);
        if let Ok(mut c) = CURRENT.lock() {
            *c = Some((target, case.clone()));
        }
        STARTED.store(epoch().elapsed().as_millis().max(1) as u64, Ordering::SeqCst);
        let outcome = std::panic::catch_unwind(|| check(target, &case));
        STARTED.store(0, Ordering::SeqCst);
        match outcome {
            Ok(()) => Ok(()),
            Err(_) => {
                let msg = LAST_PANIC.lock().map(|p| p.clone()).unwrap_or_default();
                if let Ok(mut f) = last_failure.lock() {
                    *f = Some(case);
                }
                Err(TestCaseError::fail(msg))
            }
        }
    });
    eprintln!("fuzz {}: {} cases in {:.1?}", target.name(), cases(), started.elapsed());
    if let Err(e) = result {
        let saved = last_failure.lock().ok().and_then(|f| f.clone()).map(|case| save_failure(target, "panic", &case));
        let at = saved.map(|p| format!(" (input saved to {})", p.display())).unwrap_or_default();
        panic!("fuzz {} failed: {e}{at}", target.name());
    }
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
/// Cline task's `ui_messages.json` sits next to its history as `….ui.bin`.
#[test]
fn regressions() {
    let dir = compactor::testing::fixtures_dir().join("regressions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin") && !p.to_string_lossy().ends_with(".ui.bin"))
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
        let name = std::fs::read_to_string(file.with_extension("name")).unwrap_or_else(|_| "session.jsonl".into());
        let case = Case { name, data: std::fs::read(&file).unwrap(), ui };
        let started = Instant::now();
        check(target, &case);
        // Generous even for a debug build: the hangs these files pin took minutes.
        assert!(started.elapsed() < Duration::from_secs(10), "{stem} took {:?}", started.elapsed());
    }
}
