//! `compactor inspect` end to end: exit codes, what goes to stderr, `--json`.

// clippy's allow-unwrap-in-tests covers #[test] functions, not their helpers.
#![allow(clippy::unwrap_used)]

use assert_cmd::cargo::cargo_bin_cmd;
use compactor::inspect::{InspectReport, SCHEMA_VERSION};
use predicates::prelude::*;
use std::path::Path;

/// A two-message log in the generic (OpenAI messages) shape.
fn write_generic(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("chat.jsonl");
    std::fs::write(&p, "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"hello\"}\n")
        .unwrap();
    p
}

/// The report `inspect --json` prints, from a command that succeeds.
fn json_report(cmd: &mut assert_cmd::Command) -> InspectReport {
    serde_json::from_slice(&cmd.assert().success().get_output().stdout).unwrap()
}

#[test]
fn help_exits_0() {
    cargo_bin_cmd!("compactor")
        .args(["inspect", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--json").and(predicate::str::contains("--format")));
}

#[test]
fn missing_path_exits_2_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.jsonl");
    cargo_bin_cmd!("compactor")
        .arg("inspect")
        .arg(&missing)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(missing.display().to_string()).and(predicate::str::contains("no such file")));
}

#[test]
fn directory_without_sessions_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a session").unwrap();
    cargo_bin_cmd!("compactor").arg("inspect").arg(dir.path()).assert().code(2).stderr(
        predicate::str::contains("no session files found")
            .and(predicate::str::contains(dir.path().display().to_string())),
    );
}

#[test]
fn no_path_and_no_default_location_exits_2() {
    let home = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("compactor")
        .arg("inspect")
        .env("HOME", home.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no input").and(predicate::str::contains(".claude/projects")));
}

#[test]
fn every_input_failing_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("garbage.jsonl");
    std::fs::write(&p, "this is not json\n").unwrap();
    cargo_bin_cmd!("compactor")
        .arg("inspect")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(p.display().to_string()).and(predicate::str::contains("no session")));
}

#[test]
fn unknown_format_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_generic(dir.path());
    cargo_bin_cmd!("compactor")
        .args(["inspect", "--format", "nonsense"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown --format `nonsense`").and(predicate::str::contains("claude-code")));
}

#[test]
fn json_report_parses_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_generic(dir.path());
    let out = cargo_bin_cmd!("compactor")
        .args(["inspect", "--json", "--quiet", "--jobs", "1", "--format", "generic"])
        .arg(&p)
        .assert()
        .success()
        .stderr(predicate::str::is_empty())
        .get_output()
        .stdout
        .clone();
    let report: InspectReport = serde_json::from_slice(&out).unwrap();
    assert_eq!(report.schema_version, SCHEMA_VERSION);
    assert_eq!(report.totals.inputs_read, 1);
    assert!(report.sessions.iter().all(|s| s.source_path == p));
}

/// A path given that names nothing is a usage error even beside readable
/// ones (a typo must not shrink what a run covers), named, before anything
/// is read.
#[test]
fn a_missing_path_next_to_a_readable_one_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_generic(dir.path());
    let missing = dir.path().join("gone.jsonl");
    let baseline = dir.path().join("baseline.json");
    let check = ["check", "--write-baseline", baseline.to_str().unwrap()];
    for cmd in [&["inspect"][..], &["replay"], &check] {
        cargo_bin_cmd!("compactor")
            .args(cmd)
            .arg("--quiet")
            .arg(&p)
            .arg(&missing)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(
                predicate::str::contains(format!("{}: no such file or directory", missing.display()))
                    .and(predicate::str::contains("nothing was read: 1 of the 2 path(s) given cannot be read")),
            );
    }
    assert!(!baseline.exists());
}

#[test]
fn human_output_is_deterministic_across_thread_counts() {
    let dir = tempfile::tempdir().unwrap();
    write_generic(dir.path());
    std::fs::write(dir.path().join("b.jsonl"), "{\"role\":\"user\",\"content\":\"second\"}\n").unwrap();
    let run = |jobs: &str| {
        cargo_bin_cmd!("compactor")
            .args(["inspect", "--quiet", "--jobs", jobs])
            .arg(dir.path())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    assert_eq!(run("1"), run("2"));
}

/// A Cline task whose calls carry only `metrics.tokens` (a few uncached tokens on
/// top of a growing cache): its largest prompt is about 11.8k tokens, not the
/// ~10 uncached tokens a reader capping the cache at them reported.
#[test]
fn cline_metrics_task_reports_its_real_prompt_size() {
    let report = json_report(cargo_bin_cmd!("compactor").current_dir(env!("CARGO_MANIFEST_DIR")).args([
        "inspect",
        "--json",
        "--quiet",
        "fixtures/cline/1730000100000",
        "fixtures/cline/1730000200000",
    ]));
    let usage = |id: &str| {
        let s = report.sessions.iter().find(|s| s.id == id).unwrap();
        assert_eq!(s.counts.calls_with_usage, s.counts.calls, "{id}");
        s.counts.usage
    };
    let only_metrics = usage("1730000100000");
    assert_eq!(only_metrics.max_prompt, 11_809);
    assert_eq!(only_metrics.uncached_input, 35);
    assert_eq!(only_metrics.cache_read + only_metrics.cache_write, 9_600 + 10_350 + 11_020 + 11_800);
    let with_split = usage("1730000200000");
    assert_eq!(with_split.max_prompt, 10_557);
    assert_eq!((with_split.cache_read, with_split.cache_write), (9_500 + 10_140, 9_500 + 640 + 410));
}

/// A Roo Code task is read in Cline's format and named as Roo Code's; a Cline
/// task has no agent beyond its format.
#[test]
fn a_roo_code_task_is_named_as_its_agents() {
    let report = json_report(cargo_bin_cmd!("compactor").current_dir(env!("CARGO_MANIFEST_DIR")).args([
        "inspect",
        "--json",
        "--quiet",
        "fixtures/cline/1730000000000",
        "fixtures/cline/1730000700000",
    ]));
    let agent = |id: &str| {
        let s = report.sessions.iter().find(|s| s.id == id).unwrap();
        (s.format.name(), s.agent.clone())
    };
    assert_eq!(agent("1730000000000"), ("cline", None));
    assert_eq!(agent("1730000700000"), ("cline", Some("roo-code".to_string())));
}

/// The human report over every bundled fixture (all formats and pitfalls), and the
/// warnings it prints: a change in what the readers see shows up in review.
#[test]
fn inspect_fixtures_snapshot() {
    let out = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["inspect", "fixtures", "--jobs", "2", "--sessions"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    insta::assert_snapshot!("inspect_fixtures_stdout", String::from_utf8(out.stdout).unwrap());
    insta::assert_snapshot!("inspect_fixtures_stderr", String::from_utf8(out.stderr).unwrap());
    // Without --sessions: a table per agent and the totals, sized for a terminal.
    let short = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["inspect", "fixtures", "--quiet"])
        .output()
        .unwrap();
    let short = String::from_utf8(short.stdout).unwrap();
    insta::assert_snapshot!("inspect_fixtures_summary", short);
    assert!(!short.contains("\nsession ") && short.lines().count() < 100, "{short}");
}

/// `--json` on the fixtures deserializes back into the same report, and is
/// identical whatever the thread count.
#[test]
fn inspect_fixtures_json_round_trips_at_any_jobs() {
    let run = |jobs: &str| {
        let out = cargo_bin_cmd!("compactor")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["inspect", "fixtures", "--json", "--quiet", "--jobs", jobs])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    let report: InspectReport = serde_json::from_str(&one).unwrap();
    assert_eq!(report.schema_version, SCHEMA_VERSION);
    assert!(report.sessions.len() >= 25, "{} sessions", report.sessions.len());
    let again = serde_json::to_string_pretty(&report).unwrap();
    let back: InspectReport = serde_json::from_str(&again).unwrap();
    assert_eq!(back, report);
}

/// A compressed log on standard input reads as its plain form.
#[test]
fn a_compressed_log_on_standard_input_is_read() {
    let path = "fixtures/codex/rollout-2026-09-01T08-00-00-019e7c00-0151-7000-8000-00000000a5c1.jsonl.zst";
    let report = json_report(
        cargo_bin_cmd!("compactor")
            .args(["inspect", "--json", "--quiet", "--jobs", "1", "-"])
            .write_stdin(std::fs::read(path).unwrap()),
    );
    let ids: Vec<&str> = report.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["019e7c00-0151-7000-8000-00000000a5c1"]);
    assert_eq!(report.sessions[0].versions, ["0.151.0"]);
}
