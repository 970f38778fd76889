//! Fuzzing of the replay, as proptest properties so CI runs them on every change
//! (the coverage-guided cargo-fuzz target `replay` in `fuzz/` shares the
//! generator, `fuzz_support/replay.rs`).
//!
//! Each case is an arbitrary session — roles, blocks, tool pairs and orphans,
//! huge and empty blocks, images, usage up to `u64::MAX`, recorded compactions
//! with odd ranges, timestamps out of order — replayed through every preset at
//! its own window and at a small one, with the `--check-invariants` checks and a
//! recomputation of the running totals at every call, then turned into every
//! report output. Nothing may panic, no invariant may break, totals saturate.
//!
//! Case counts are small by default so CI stays fast; run long locally with
//! `COMPACTOR_FUZZ_CASES=20000 cargo test --release --test fuzz_replay`. A failing
//! case is saved under `target/fuzz-failures/` as JSON (session + window), ready
//! to become `fixtures/regressions/replay--WHAT.bin`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::fuzz_runner;
use crate::fuzz_support;

use fuzz_support::replay::{ReplayCase, build, check};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Default cases: each replays 24 policies with per-call checks and totals
/// recomputed at every call (a few seconds per case in a debug build).
const DEFAULT_CASES: u32 = 32;

struct Replay;

impl fuzz_runner::Target for Replay {
    type Case = ReplayCase;
    fn name(&self) -> String {
        "replay".into()
    }
    fn build(&self, bytes: &[u8]) -> ReplayCase {
        build(bytes)
    }
    fn check(&self, case: &ReplayCase) {
        check(case);
    }
    fn save(name: &str, what: &str, case: &ReplayCase) -> PathBuf {
        let dir = fuzz_runner::failures_dir();
        let _ = std::fs::create_dir_all(&dir);
        let json = serde_json::to_vec(case).unwrap();
        let file = dir.join(format!("{name}-{what}-{}.bin", json.len()));
        let _ = std::fs::write(&file, json);
        file
    }
}

#[test]
fn fuzz_replay() {
    fuzz_runner::run(&Replay, fuzz_runner::cases(DEFAULT_CASES), 1024);
}

/// Every replay input the fuzzers found a crash or a broken invariant with
/// (`fixtures/regressions/replay--WHAT.bin`: a JSON [`ReplayCase`]), through the
/// same checks.
#[test]
fn replay_regressions() {
    let dir = compactor::testing::fixtures_dir().join("regressions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("replay--"))
        .collect();
    files.sort();
    for file in files {
        let case: ReplayCase = serde_json::from_slice(&std::fs::read(&file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let started = Instant::now();
        check(&case);
        assert!(started.elapsed() < Duration::from_secs(60), "{} took {:?}", file.display(), started.elapsed());
    }
}
