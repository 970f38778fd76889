//! `compactor check` end to end on the fixtures: exit 0 when nothing moved, 1
//! for each regression kind (baselines edited, or policies changed, so that
//! rule fires), 2 for usage and input errors and for a run that cannot be
//! compared with its baseline (policies on one side only, changed parameters or
//! run settings, no session in common); the markdown table is a snapshot and is
//! also written by `--summary`. (New invariant violations cannot be
//! provoked from the command line without an engine bug; that rule is tested
//! on hand-built baselines in `src/check_tests.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// A small window so the tiny fixtures compact and prune (as in cli_replay).
const POLICY: &[&str] = &[
    "--preset",
    "opal",
    "--preset",
    "spec008",
    "--set",
    "context_window=6000",
    "--set",
    "compact.reserve_tokens=1000",
    "--set",
    "flush.reserve_tokens=1000",
    "--set",
    "flush.threshold_tokens=1000",
];

fn check(args: &[&str], extra: &[&Path]) -> Output {
    let mut cmd = cargo_bin_cmd!("compactor");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR")).args(["check", "fixtures", "--quiet"]).args(args);
    for p in extra {
        cmd.arg(p);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Write a baseline of the fixtures under POLICY and return it.
fn write_baseline(dir: &Path) -> (std::path::PathBuf, Value) {
    let path = dir.join("baseline.json");
    let o = check(&[POLICY, &["--write-baseline"]].concat(), &[&path]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    (path, v)
}

fn preset<'v>(v: &'v mut Value, name: &str) -> &'v mut Value {
    v["presets"].as_array_mut().unwrap().iter_mut().find(|p| p["policy"] == name).unwrap()
}

fn save(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

#[test]
fn a_baseline_of_the_same_run_passes_and_replays_its_own_policies() {
    let dir = tempfile::tempdir().unwrap();
    let (path, v) = write_baseline(dir.path());
    assert_eq!(v["kind"], "compactor-baseline");
    assert_eq!(v["version"], 1);
    assert_eq!(v["replay"]["presets"], serde_json::json!(["opal", "spec008"]));
    let names: Vec<&str> = v["presets"].as_array().unwrap().iter().map(|p| p["policy"].as_str().unwrap()).collect();
    // The policies, then the row of the agents' own compactions.
    assert_eq!(names, ["opal", "spec008", "recorded"]);
    // Every policy with all its parameters, as `presets --json` prints them,
    // and the run settings.
    let policies = v["policies"].as_array().unwrap();
    assert_eq!(policies.len(), 2, "{v}");
    assert_eq!(policies[0]["name"], "opal");
    assert_eq!(policies[0]["context_window"], 6000);
    assert_eq!(policies[1]["compact"]["reserve_tokens"], 1000);
    assert_eq!(v["settings"], serde_json::json!({"format": "auto", "meter": "recorded"}));
    // The fixtures compact and their summaries are scored.
    assert!(v["presets"][0]["compactions"].as_u64().unwrap() > 0, "{v}");
    assert!(v["presets"][0]["frr"].is_number(), "{v}");
    // No policy flag: the baseline's presets and --set values are replayed.
    let summary = dir.path().join("summary.md");
    let o = check(&["--baseline"], &[&path, Path::new("--summary"), &summary]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("## compactor check: no regression\n"), "{out}");
    assert!(out.contains("| opal | FRR |") && out.contains("| spec008 | token savings |"), "{out}");
    // --summary writes every row: those printed and the ones without a rule.
    let written = std::fs::read_to_string(&summary).unwrap();
    let rows = |t: &str| t.lines().filter(|l| l.starts_with("| ")).map(str::to_string).collect::<Vec<_>>();
    assert!(rows(&out).iter().all(|r| written.contains(r.as_str())), "{written}");
    assert!(rows(&written).len() > rows(&out).len(), "{written}");
    // A report.json is a baseline too.
    let reports = tempfile::tempdir().unwrap();
    let o = check(
        &[POLICY, &["--write-baseline"]].concat(),
        &[&dir.path().join("b2.json"), Path::new("--out"), reports.path()],
    );
    assert_eq!(o.status.code(), Some(0));
    // --out keeps check's report beside the replay's: what was printed, and
    // the rows without a rule.
    let kept = std::fs::read_to_string(reports.path().join("check.md")).unwrap();
    let printed = text(&o.stdout);
    assert!(printed.lines().filter(|l| !l.contains("not shown")).all(|l| kept.contains(l)), "{kept}\n{printed}");
    assert!(kept.contains("Baseline written to `") && kept.contains("b2.json`"), "{kept}");
    let o = check(&[POLICY, &["--baseline"]].concat(), &[&reports.path().join("report.json")]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    // A report.json records its policies but not the flags: its presets are
    // replayed by name, the --set values given on top.
    let sets: Vec<&str> = POLICY.iter().copied().filter(|a| !matches!(*a, "--preset" | "opal" | "spec008")).collect();
    let o = check(&[&sets[..], &["--baseline"]].concat(), &[&reports.path().join("report.json")]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("| opal | token savings |") && out.contains("| spec008 | token savings |"), "{out}");
    // A --set without a preset changes the baseline's own policies.
    let o = check(&["--set", "compact.keep_recent_ratio=0.05", "--baseline"], &[&path]);
    assert_eq!(o.status.code(), Some(2), "{}{}", text(&o.stdout), text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("policy `opal`: compact.keep_recent_ratio 0.25 → 0.05"), "{err}");
}

#[test]
fn frr_drop_exits_1_and_the_table_is_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut v) = write_baseline(dir.path());
    let p = preset(&mut v, "opal");
    let frr = p["frr"].as_f64().unwrap();
    p["frr"] = serde_json::json!(frr + 2.5);
    save(&path, &v);
    let o = check(&["--baseline"], &[&path]);
    assert_eq!(o.status.code(), Some(1), "{}{}", text(&o.stdout), text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("- `opal` FRR drop: FRR"), "{out}");
    assert!(text(&o.stderr).contains("1 regression(s)"), "{}", text(&o.stderr));
    insta::assert_snapshot!("check_fixtures_frr_drop", out);
    // --json: the same outcome for machines, the same exit code.
    let o = check(&["--baseline"], &[&path, Path::new("--json")]);
    assert_eq!(o.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["regressed"], true);
    assert!(j["failures"].as_array().unwrap().iter().any(|f| f["policy"] == "opal"), "{j}");
    assert!(j["lines"].as_array().unwrap().iter().any(|l| l["status"] == "regression"), "{j}");
    assert!(text(&o.stderr).contains("see `failures` in the JSON above"), "{}", text(&o.stderr));
    // The terminal shows the gated rows; -v and the written summary every row.
    assert!(!out.contains("| FRR truncate |") && out.contains("row(s) without a rule not shown"), "{out}");
    let summary = dir.path().join("summary.md");
    let o = check(&["--baseline"], &[&path, Path::new("-v"), Path::new("--summary"), &summary]);
    let all = text(&o.stdout);
    assert!(all.contains("| opal | FRR truncate |") && !all.contains("not shown"), "{all}");
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), all);
    // Within a wider tolerance, from the flag or from the policy's check.* key.
    let o = check(&["--baseline"], &[&path, Path::new("--max-frr-drop"), Path::new("3")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let o = check(&[POLICY, &["--set", "check.max_frr_drop=3", "--baseline"]].concat(), &[&path]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

/// The agents' own compactions are a row of the baseline, gated against it:
/// an FRR drop of their recorded summaries fails, and their hallucination
/// rate may not rise above the baseline's by more than the tolerance (no
/// absolute ceiling: the run does not write them); savings are not theirs to
/// check.
#[test]
fn the_agents_own_compactions_are_gated() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut v) = write_baseline(dir.path());
    let r = preset(&mut v, "recorded");
    assert_eq!(r["recorded"], true);
    assert!(r["compactions"].as_u64().unwrap() >= 3, "{r}");
    let frr = r["frr"].as_f64().unwrap();
    r["frr"] = serde_json::json!(frr + 2.5);
    save(&path, &v);
    let o = check(&["--baseline"], &[&path]);
    assert_eq!(o.status.code(), Some(1), "{}{}", text(&o.stdout), text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("- `recorded` FRR drop: FRR"), "{out}");
    assert!(out.contains("| recorded | hallucination rate |") && out.contains("rise ≤ 1.00"), "{out}");
    assert!(!out.contains("| recorded | token savings |") && !out.contains("| recorded | invariant"), "{out}");
    let o = check(&["--baseline"], &[&path, Path::new("--max-frr-drop"), Path::new("3")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

#[test]
fn savings_drop_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut v) = write_baseline(dir.path());
    let p = preset(&mut v, "spec008");
    p["savings_pct"] = serde_json::json!(p["savings_pct"].as_f64().unwrap() + 1.5);
    save(&path, &v);
    let o = check(&["--baseline"], &[&path]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("- `spec008` token savings drop: token savings"), "{}", text(&o.stdout));
    let o = check(&["--baseline"], &[&path, Path::new("--max-savings-drop"), Path::new("2")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

#[test]
fn new_no_progress_compactions_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut v) = write_baseline(dir.path());
    // A baseline where one session of opal had one no-progress compaction less.
    let s = v["sessions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["policy"] == "opal" && s["no_progress_compactions"].as_u64().unwrap() > 0)
        .expect("a session with a no-progress compaction");
    let id = s["session_id"].as_str().unwrap().to_string();
    let n = s["no_progress_compactions"].as_u64().unwrap();
    s["no_progress_compactions"] = serde_json::json!(n - 1);
    save(&path, &v);
    let o = check(&["--baseline"], &[&path]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(out.contains(&format!("- `opal` new no-progress compactions: in {id} ({} → {n})", n - 1)), "{out}");
}

/// An LLM summarizer (a loopback server) whose summaries name files, a commit
/// and a URL that appear nowhere in the sessions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invented_facts_in_summaries_exit_1() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let invented = "## Goal\nFix src/ghost/phantom_module.rs and tests/ghost_test.py.\n\n## Critical Context\n\
                    Commit deadbeef12345678 from https://example.invalid/ghost/pull/4242 broke `phantom_call()`.";
    let answer = serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": invented}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}
    });
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("b.json");
    let url = format!("{}/v1", server.uri());
    let llm = ["--summarizer", "llm", "--llm-model", "test-model", "--no-cache", "--llm-base-url", &url];
    // Writing a baseline still applies the absolute rules: nothing to compare
    // with, yet the summaries invent facts.
    let o = tokio::task::block_in_place(|| check(&[POLICY, &llm, &["--write-baseline"]].concat(), &[&baseline]));
    assert_eq!(o.status.code(), Some(1), "{}{}", text(&o.stdout), text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("- `opal` hallucination rate: hallucination rate "), "{out}");
    assert!(!out.contains("FRR drop") && !out.contains("token savings drop"), "only the hallucination rule: {out}");
    assert!(!server.received_requests().await.unwrap().is_empty());
    // With the extractive checkpoints of the same policies, the rule holds.
    let o = check(&[POLICY, &["--write-baseline"]].concat(), &[&baseline]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let v: Value = serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    assert!(v["presets"][0]["hallucination"].as_f64().unwrap() <= 1.0, "{v}");
}

#[test]
fn a_must_keep_session_that_loses_a_modified_path_exits_1() {
    // A synthetic session that edits files (the fixtures' compacted parts edit none).
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("edits.jsonl");
    let session = compactor::synth::generate_session(&compactor::synth::SessionSpec::turns(1, 6));
    std::fs::write(&log, &session.data).unwrap();
    let run = |args: &[&str]| {
        cargo_bin_cmd!("compactor")
            .arg("check")
            .arg(&log)
            .args(["--quiet", "--preset", "opal", "--set", "context_window=40000"])
            .args(args)
            .output()
            .unwrap()
    };
    let baseline = dir.path().join("baseline.json");
    let b = baseline.to_str().unwrap();
    // Marked, with the preset's own summaries: every edited file is named.
    let o = run(&["--must-keep", "edits.jsonl", "--must-keep", "edit-*.jsonl", "--write-baseline", b]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("| opal | must-keep paths lost | – | 0 |"), "{}", text(&o.stdout));
    // A glob that matches no session is said to gate nothing; one that does is not.
    let notes = text(&o.stdout);
    assert!(notes.contains("- --must-keep `edit-*.jsonl` matches no session of this run: it gates nothing"), "{notes}");
    assert!(!notes.contains("`edits.jsonl` matches no session"), "{notes}");
    let v: Value = serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    assert_eq!(v["must_keep"], serde_json::json!(["edit-*.jsonl", "edits.jsonl"]), "the globs are stored");
    assert!(v["presets"][0]["artifact_recall"].as_f64().unwrap() > 0.0, "{v}");
    // Summaries too small to list the files: the trail is lost. The mark comes
    // from the baseline; the other rules are loosened to isolate this one.
    let tiny = ["--set", "compact.summary_max_tokens=20", "--max-frr-drop", "100", "--max-savings-drop", "100"];
    let o = run(&[&tiny[..], &["--baseline", b, "--allow-param-changes"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(out.contains("- `opal` modified path lost on a must-keep session: "), "{out}");
    assert!(out.contains("must-keep paths lost") && out.contains("**REGRESSION**"), "{out}");
    // Unmarked, the same run passes that rule.
    let plain = dir.path().join("plain.json");
    let o = run(&["--write-baseline", plain.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let o = run(&[&tiny[..], &["--baseline", plain.to_str().unwrap(), "--allow-param-changes"]].concat());
    assert!(!text(&o.stdout).contains("must-keep"), "{}", text(&o.stdout));
}

/// A policy replayed that the baseline lacks, or one of the baseline not
/// replayed, would pass without being compared: exit 2 naming it.
#[test]
fn policies_on_one_side_only_exit_2_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = write_baseline(dir.path());
    let o = check(&[POLICY, &["--preset", "nous", "--baseline"]].concat(), &[&path]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}{err}", text(&o.stdout));
    assert!(err.contains(&format!("cannot be compared with baseline {}", path.display())), "{err}");
    assert!(err.contains("policy `nous` is not in the baseline"), "{err}");
    assert!(o.stdout.is_empty(), "nothing replayed: {}", text(&o.stdout));
    // --allow-new replays it, and the output says it was not compared.
    let o = check(&[POLICY, &["--preset", "nous", "--allow-new", "--baseline"]].concat(), &[&path]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(
        out.contains("| nous | token savings | – |") && out.contains("not in baseline, not compared | new |"),
        "{out}"
    );
    assert!(out.contains("- policy `nous` is not in the baseline: not compared"), "{out}");
    // A policy of the baseline left out is an error, --allow-new or not.
    assert_eq!(POLICY[..4], ["--preset", "opal", "--preset", "spec008"]);
    let only_opal = [&POLICY[..2], &POLICY[4..]].concat();
    for allow in [&[][..], &["--allow-new"]] {
        let o = check(&[&only_opal[..], allow, &["--baseline"]].concat(), &[&path]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{only_opal:?}: {err}");
        assert!(err.contains("policy `spec008` is in the baseline but not replayed"), "{err}");
    }
}

/// The baseline's parameters and run settings are compared with the run's:
/// a difference is exit 2 naming the policy, the key, and old → new.
#[test]
fn changed_parameters_or_settings_exit_2_naming_policy_key_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut v) = write_baseline(dir.path());
    let o = check(&[POLICY, &["--set", "compact.keep_recent_tokens=777", "--baseline"]].concat(), &[&path]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("policy `spec008`: compact.keep_recent_tokens 20000 → 777"), "{err}");
    // opal keeps a share of the window: the token size it does not read is no change.
    assert!(!err.contains("policy `opal`: compact.keep_recent_tokens"), "{err}");
    assert!(!err.contains("context_window"), "only what changed: {err}");
    // Compared anyway on request, with each difference in the notes.
    let o = check(
        &[POLICY, &["--set", "compact.keep_recent_tokens=777", "--allow-param-changes", "--baseline"]].concat(),
        &[&path],
    );
    let out = text(&o.stdout);
    assert_ne!(o.status.code(), Some(2), "{out}{}", text(&o.stderr));
    assert!(
        out.contains(
            "- policy `spec008`: compact.keep_recent_tokens 20000 → 777 (compared anyway: --allow-param-changes)"
        ),
        "{out}"
    );
    // Rewriting the baseline: listed, not an error, and the new values are recorded.
    let o = check(
        &[POLICY, &["--set", "compact.keep_recent_tokens=777", "--baseline"]].concat(),
        &[&path, Path::new("--write-baseline"), &path],
    );
    assert_ne!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("(compared anyway: the baseline is rewritten)"), "{}", text(&o.stdout));
    let rewritten: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(rewritten["policies"][1]["compact"]["keep_recent_tokens"], 777);
    // The check.* tolerances are the gate, not the replay: not compared.
    let (path, _) = write_baseline(dir.path());
    let o = check(&[POLICY, &["--set", "check.max_savings_drop=5", "--baseline"]].concat(), &[&path]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // A run setting: the baseline was made with --format codex.
    v["settings"]["format"] = serde_json::json!("codex");
    save(&path, &v);
    let o = check(&["--baseline"], &[&path]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("run setting format: codex → auto"), "{}", text(&o.stderr));
    // A preset whose code changed since: the recorded value differs.
    v["settings"]["format"] = serde_json::json!("auto");
    v["policies"][0]["compact"]["trigger_ratio"] = serde_json::json!(0.123);
    save(&path, &v);
    let o = check(&["--baseline"], &[&path]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("policy `opal`: compact.trigger_ratio 0.123 → "), "{}", text(&o.stderr));
}

/// Baselines written before parameters were recorded still load; the output
/// says that parameters could not be compared.
#[test]
fn an_old_baseline_without_parameters_loads_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut v) = write_baseline(dir.path());
    let map = v.as_object_mut().unwrap();
    map.remove("policies");
    map.remove("settings");
    save(&path, &v);
    let o = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["check", "fixtures", "--baseline"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let says = "records no policy parameters and run settings (an older baseline, or a report.json): they could not be compared";
    assert!(text(&o.stderr).contains(&format!("warning: baseline {} {says}", path.display())), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains(says), "in the summary too: {}", text(&o.stdout));
}

/// A baseline of other logs shares no session with the run: nothing would be
/// compared per session, and the totals would compare different corpora.
#[test]
fn a_baseline_of_other_logs_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut v) = write_baseline(dir.path());
    for s in v["sessions"].as_array_mut().unwrap() {
        s["file"] = serde_json::json!(format!("elsewhere-{}", s["file"].as_str().unwrap()));
    }
    save(&path, &v);
    let o = check(&["--baseline"], &[&path]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("session(s) replayed is in baseline") && err.contains("baseline.json"), "{err}");
}

#[test]
fn usage_and_input_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["check", "fixtures"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--baseline"));
    let missing = dir.path().join("missing.json");
    let o = check(&["--baseline"], &[&missing]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("cannot read baseline") && text(&o.stderr).contains("missing.json"));
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let o = check(&["--baseline"], &[&bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("invalid baseline") && text(&o.stderr).contains("bad.json"),
        "{}",
        text(&o.stderr)
    );
    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"kind": "compactor-baseline", "version": 99, "presets": [], "sessions": []}"#).unwrap();
    let o = check(&["--baseline"], &[&newer]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("newer than this compactor reads"), "{}", text(&o.stderr));
    let out = dir.path().join("b.json");
    let o = check(&["--max-frr-drop=200", "--write-baseline"], &[&out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--max-frr-drop"), "{}", text(&o.stderr));
    let o = check(&["--must-keep", "a[", "--write-baseline"], &[&out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--must-keep glob `a[`"), "{}", text(&o.stderr));
    let o = check(&["--set", "check.max_hallucination=-1", "--write-baseline"], &[&out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("check.max_hallucination"), "{}", text(&o.stderr));
    assert!(!out.exists(), "no baseline is written after an error");
    cargo_bin_cmd!("compactor")
        .args(["check", "no/such/dir", "--write-baseline"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/dir"));
}
