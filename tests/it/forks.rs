//! A fork's copied history, settled by the batch: its calls are the parent's
//! when the parent is read too (inspect reads the batch whole, replay streams
//! it in two passes), and the fork's own when the fork is all there is.

#![allow(clippy::unwrap_used)]

use assert_cmd::cargo::cargo_bin_cmd;
use compactor::inspect::InspectReport;
use std::path::Path;

const FORK: &str = "rollout-2026-06-20T11-00-00-019ee4af-ff80-7c11-8d12-e13f14a15b16.jsonl";
const FORK_ID: &str = "019ee4af-ff80-7c11-8d12-e13f14a15b16";

/// The parent the fork names (`forked_from_id`), with one response.
fn write_parent(dir: &Path) {
    let lines = [
        r#"{"timestamp":"2026-06-20T10:00:00.000Z","type":"session_meta","payload":{"id":"019ee479-1100-7a01-8b02-c03d04e05f06","cwd":"/srv/shop","cli_version":"0.148.0"}}"#,
        r#"{"timestamp":"2026-06-20T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Why does checkout charge shipping twice?"}]}}"#,
        r#"{"timestamp":"2026-06-20T10:00:03.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Looking."}]}}"#,
        r#"{"timestamp":"2026-06-20T10:00:03.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":4100,"cached_input_tokens":0,"output_tokens":60,"reasoning_output_tokens":0,"total_tokens":4160},"last_token_usage":{"input_tokens":4100,"cached_input_tokens":0,"output_tokens":60,"reasoning_output_tokens":0,"total_tokens":4160}}}}"#,
    ];
    std::fs::write(
        dir.join("rollout-2026-06-20T10-00-00-019ee479-1100-7a01-8b02-c03d04e05f06.jsonl"),
        lines.join("\n"),
    )
    .unwrap();
}

fn inspect(dir: &Path, id: &str) -> (u64, u64) {
    let out = cargo_bin_cmd!("compactor").arg("inspect").arg(dir).arg("--json").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: InspectReport = serde_json::from_slice(&out.stdout).unwrap();
    let s = r.sessions.iter().find(|s| s.id == id).unwrap();
    (s.counts.calls, s.inherited_messages)
}

/// The fork's calls in `sessions.csv` of a replay (its `calls` column).
fn replay_calls(dir: &Path, id: &str) -> u64 {
    let out = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("compactor")
        .arg("replay")
        .arg(dir)
        .args(["--preset", "default", "--no-quality", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let mut csv = csv::Reader::from_path(out.path().join("sessions.csv")).unwrap();
    let calls = csv.headers().unwrap().iter().position(|h| h == "calls").unwrap();
    let row = csv.records().map(Result::unwrap).find(|r| &r[0] == id).unwrap();
    row[calls].parse().unwrap()
}

#[test]
fn a_fork_counts_its_parents_calls_only_when_the_parent_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/codex").join(FORK);
    std::fs::copy(&fixture, dir.path().join(FORK)).unwrap();
    // Alone: the only record of the parent's four responses.
    assert_eq!(inspect(dir.path(), FORK_ID), (6, 0));
    assert_eq!(replay_calls(dir.path(), FORK_ID), 6);
    // Beside its parent: its two own; the ten copied messages are context.
    write_parent(dir.path());
    assert_eq!(inspect(dir.path(), FORK_ID), (2, 10));
    assert_eq!(replay_calls(dir.path(), FORK_ID), 2);
}

#[test]
fn a_claude_code_resume_counts_the_calls_it_copied_only_when_the_session_it_resumed_is_not_read() {
    // Claude Code versions that resume into a new file copy the history there.
    let (original, resumed) = ("5f1e2d3c-4b5a-4c6d-8e7f-9a0b1c2d3e4f", "8a7b6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-code/resumed");
    let dir = tempfile::tempdir().unwrap();
    let copy = |id: &str| std::fs::copy(fixtures.join(format!("{id}.jsonl")), dir.path().join(format!("{id}.jsonl")));
    copy(resumed).unwrap();
    assert_eq!(inspect(dir.path(), resumed), (4, 0));
    assert_eq!(replay_calls(dir.path(), resumed), 4);
    // Beside it: two calls each, not the first two twice.
    copy(original).unwrap();
    assert_eq!(inspect(dir.path(), resumed), (2, 4));
    assert_eq!(inspect(dir.path(), original), (2, 0));
    assert_eq!(replay_calls(dir.path(), resumed), 2);
    assert_eq!(replay_calls(dir.path(), original), 2);
}
