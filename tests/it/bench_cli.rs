//! Smoke test of the `compactor-bench` tool that `scripts/bench.sh` drives: a
//! tiny corpus is generated (and reused on a second call), then read by the parse
//! floor and the raw o200k counter.

#![allow(clippy::expect_used, clippy::unwrap_used)] // test code: a panic is the failure report

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::str::contains;

#[test]
fn gen_then_parse_floor_and_count() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    let generate = |expect: &str| {
        cargo_bin_cmd!("compactor-bench")
            .args(["gen", "--size", "400KB", "--seed", "3", "--out"])
            .arg(&corpus)
            .assert()
            .success()
            .stdout(contains(expect.to_string()));
    };
    generate("sessions");
    generate("reusing");

    cargo_bin_cmd!("compactor-bench").arg("parse-floor").arg(&corpus).assert().success().stdout(contains("(0 bad)"));
    cargo_bin_cmd!("compactor-bench").arg("count-o200k").arg(&corpus).assert().success().stdout(contains("tokens"));

    let one = dir.path().join("one.jsonl");
    cargo_bin_cmd!("compactor-bench")
        .args(["gen-session", "--turns", "3", "--out"])
        .arg(&one)
        .assert()
        .success()
        .stdout(contains("3 turns"));
    assert!(one.metadata().unwrap().len() > 1000);
}

#[test]
fn gen_refuses_a_foreign_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
    cargo_bin_cmd!("compactor-bench")
        .args(["gen", "--size", "100KB", "--out"])
        .arg(dir.path())
        .assert()
        .failure()
        .stderr(contains("refusing"));
    assert!(dir.path().join("keep.txt").exists());
}
