//! `compactor replay` / `compare` / `presets` end to end: the files written under
//! `--out`, their stability across thread counts, snapshots on the fixtures, and
//! the corpus acceptance run of the replay issue.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

pub(crate) fn replay(args: &[&str], out: &Path) -> std::process::Output {
    cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("replay")
        .args(args)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .output()
        .unwrap()
}

/// Every file under `dir`, relative path → bytes, sorted.
pub(crate) fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

/// A small window so the tiny fixtures compact and prune.
const SMALL: &[&str] = &[
    "fixtures",
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

#[test]
fn outputs_are_byte_identical_at_jobs_1_and_2() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let one = replay(&[SMALL, &["--jobs", "1"]].concat(), a.path());
    let two = replay(&[SMALL, &["--jobs", "2"]].concat(), b.path());
    assert_eq!(one.status.code(), Some(0), "{}", String::from_utf8_lossy(&one.stderr));
    assert_eq!(two.status.code(), Some(0));
    // The summary is the same but for the last line, which names the --out dir.
    let summary = |o: &std::process::Output| {
        let text = String::from_utf8(o.stdout.clone()).unwrap();
        text.lines().filter(|l| !l.starts_with("reports written to")).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(summary(&one), summary(&two));
    let (ta, tb) = (tree(a.path()), tree(b.path()));
    let names: Vec<_> = ta.iter().map(|(p, _)| p.display().to_string()).collect();
    for f in ["report.json", "report.md", "sessions.csv", "calls.csv", "quality.csv"] {
        assert!(names.contains(&f.to_string()), "{f} missing: {names:?}");
    }
    assert!(names.iter().any(|n| n.starts_with("transcripts/opal/")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("transcripts/spec008/")), "{names:?}");
    assert_eq!(ta, tb, "outputs differ between --jobs 1 and --jobs 2");
}

#[test]
fn report_md_and_a_transcript_snapshot() {
    let out = tempfile::tempdir().unwrap();
    let o = replay(SMALL, out.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    insta::assert_snapshot!("replay_fixtures_report_md", md);
    // A transcript where opal compacted shows the policy's summary in place
    // (an agent's own summary in a history a fork inherited is no policy's).
    let dir = out.path().join("transcripts/opal");
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    let compacted = names
        .iter()
        .find(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.contains("\"origin\":\"compact_summary\"") && text.contains("[Conversation summary")
        })
        .expect("a transcript with a policy summary");
    let text = std::fs::read_to_string(compacted).unwrap();
    for line in text.lines() {
        let _: serde_json::Value = serde_json::from_str(line).expect("each transcript line is JSON");
    }
    insta::assert_snapshot!("replay_fixtures_transcript", text);
}

#[test]
fn json_report_round_trips() {
    let out = tempfile::tempdir().unwrap();
    let o = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures", "--json", "--quiet", "--set", "context_window=3000"])
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let report: compactor::report::Report = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report.schema_version, compactor::report::SCHEMA_VERSION);
    assert_eq!(o.stdout, std::fs::read(out.path().join("report.json")).unwrap());
    assert!(report.run.sessions >= 25);
}

#[test]
fn usage_errors_exit_2_and_name_the_problem() {
    cargo_bin_cmd!("compactor")
        .args(["replay", "fixtures", "--preset", "nope"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown preset `nope`"));
    cargo_bin_cmd!("compactor")
        .args(["replay", "fixtures", "--set", "compact.keep_recnt_tokens=5"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("keep_recnt_tokens"));
    cargo_bin_cmd!("compactor")
        .args(["replay", "no/such/dir"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/dir"));
}

/// A forced `--format` that reads a file as nothing, or inputs without a
/// single call, are errors naming the files, not a report of zeros.
#[test]
fn inputs_that_yield_no_call_are_errors_naming_the_files() {
    let claude = "fixtures/claude-code/compaction.jsonl";
    let codex = "fixtures/codex/compacted.jsonl";
    for cmd in ["replay", "compare"] {
        let o = cargo_bin_cmd!("compactor")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([cmd, claude, codex, "--quiet", "--format", "codex"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        assert!(err.contains("--format codex: 1 file(s) yield no call under that format: "), "{err}");
        assert!(err.contains(claude) && !err.contains(codex), "names the file that does not fit, only it: {err}");
    }
    // The format that fits every file given passes.
    cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", codex, "--quiet", "--format", "codex"])
        .assert()
        .code(0);
    // Detected, but not one call in any session.
    let dir = tempfile::tempdir().unwrap();
    let quiet = dir.path().join("no-answer.jsonl");
    std::fs::write(
        &quiet,
        "{\"role\": \"system\", \"content\": \"be brief\"}\n{\"role\": \"user\", \"content\": \"hi\"}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = cargo_bin_cmd!("compactor").arg("replay").arg(&quiet).arg("--out").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("no session has a single call, nothing to replay: {}", quiet.display())), "{err}");
    assert!(!out.join("report.json").exists());
    // Next to a session with calls, it is just a session with nothing to replay.
    cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "--quiet", codex])
        .arg(&quiet)
        .assert()
        .code(0);
}

#[test]
fn presets_lists_every_preset_as_toml_that_replay_accepts() {
    let out = cargo_bin_cmd!("compactor").arg("presets").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    // One line each: a table that fits a terminal.
    for name in compactor::presets::names() {
        assert!(text.lines().any(|l| l.starts_with(&format!("{name} "))), "{name} missing:\n{text}");
    }
    assert!(text.lines().count() <= compactor::presets::names().len() + 4, "{text}");
    insta::assert_snapshot!("presets_listing", text);
    // A mistyped name is an error with the closest one.
    let typo = cargo_bin_cmd!("compactor").args(["presets", "opall"]).output().unwrap();
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("did you mean `opal`?"));
    // One preset saved to a file replays like the preset itself.
    let one = cargo_bin_cmd!("compactor").args(["presets", "opal"]).output().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    std::fs::write(&file, one.stdout).unwrap();
    let policy_json = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures/pi", "--json", "--quiet", "--policy"])
        .arg(&file)
        .output()
        .unwrap();
    let preset_json = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures/pi", "--json", "--quiet", "--preset", "opal"])
        .output()
        .unwrap();
    assert_eq!(policy_json.status.code(), Some(0), "{}", String::from_utf8_lossy(&policy_json.stderr));
    assert_eq!(policy_json.stdout, preset_json.stdout);
}

/// The acceptance run of the replay issue on the real corpus.
#[test]
fn corpus_replay_saves_tokens_and_avoids_overflows() {
    let Some(corpus) = compactor::testing::corpus_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let o = cargo_bin_cmd!("compactor")
        .arg("replay")
        .arg(&corpus)
        .args(["--preset", "nous", "--preset", "opal", "--preset", "codex", "--set", "context_window=32000"])
        .args(["--check-invariants", "--quiet", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["report.json", "report.md", "sessions.csv", "calls.csv", "quality.csv"] {
        assert!(out.path().join(f).is_file(), "{f} missing");
    }
    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.path().join("report.json")).unwrap()).unwrap();
    assert!(report.sessions.iter().all(|r| r.error.is_none() && r.violations == 0));
    // Long sessions: those whose conversation alone (without the system prompt,
    // which no policy can shrink) outgrows the 32K window. A session that
    // overflows only because its ~24K system prompt leaves 8K for messages can
    // legitimately have nothing worth compacting.
    for policy in ["nous", "opal", "codex"] {
        let long: Vec<_> = report
            .sessions
            .iter()
            .filter(|r| r.policy == policy && r.metrics.peak_baseline.saturating_sub(r.system_tokens) > 32_000)
            .collect();
        assert!(long.len() >= 4, "{policy}: only {} long sessions", long.len());
        let (mut base_over, mut policy_over) = (0, 0);
        for r in &long {
            let m = &r.metrics;
            assert!(m.input_tokens_policy < m.input_tokens_baseline, "{policy} {}: no savings", r.session_id);
            assert!(
                m.overflow_calls_policy <= m.overflow_calls_baseline,
                "{policy} {}: overflows {} → {}",
                r.session_id,
                m.overflow_calls_baseline,
                m.overflow_calls_policy
            );
            base_over += m.overflow_calls_baseline;
            policy_over += m.overflow_calls_policy;
        }
        assert!(policy_over < base_over, "{policy}: overflow calls {base_over} → {policy_over}");
        let transcripts = out.path().join("transcripts").join(policy);
        assert!(std::fs::read_dir(transcripts).unwrap().count() >= 27);
    }
}

/// The meter's promises on real files: in one run the baseline columns of
/// sessions.csv and calls.csv are the same under every policy (whatever its
/// estimator), and a session whose every call has usage bills exactly the
/// recorded sum as its baseline.
fn assert_one_baseline(input: &Path, extra: &[&str]) {
    let recorded = !extra.contains(&"--meter");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut args: Vec<&str> = vec![input.to_str().unwrap()];
    // Five estimators among them: calibrated, chars4 (+ overhead), per_block.
    for p in ["default", "nous", "vibe", "dotnet", "spec008", "codex"] {
        args.extend(["--preset", p]);
    }
    args.extend(extra);
    let o = replay(&args, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Every report names the meter.
    let meter = if recorded { "meter `recorded`" } else { "meter `o200k`" };
    for f in ["report.md", "report.html"] {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(text.contains(&format!("Sizes are measured by the {meter}")), "{f}");
    }
    // --quiet prints the table alone.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.starts_with("policy ") && !stdout.contains("meter"), "{stdout}");
    let read = |name: &str| -> Vec<csv::StringRecord> {
        let mut r = csv::Reader::from_path(out.join(name)).unwrap();
        r.records().map(|x| x.unwrap()).collect()
    };
    let header = |name: &str| -> Vec<String> {
        csv::Reader::from_path(out.join(name)).unwrap().headers().unwrap().iter().map(String::from).collect()
    };
    let col = |h: &[String], c: &str| h.iter().position(|x| x == c).unwrap_or_else(|| panic!("no column {c}"));

    let sh = header("sessions.csv");
    let (id, src, pol) = (col(&sh, "session_id"), col(&sh, "source_path"), col(&sh, "policy"));
    let base_cols: Vec<usize> = [
        "calls",
        "calls_with_usage",
        "input_tokens_baseline",
        "input_tokens_recorded",
        "peak_baseline",
        "overflow_calls_baseline",
    ]
    .iter()
    .map(|c| col(&sh, c))
    .collect();
    // (session, source) → per policy: the baseline columns.
    type ByPolicy = Vec<(String, Vec<String>)>;
    let mut by_session: std::collections::BTreeMap<(String, String), ByPolicy> = Default::default();
    for r in read("sessions.csv") {
        let key = (r[id].to_string(), r[src].to_string());
        let vals = base_cols.iter().map(|&c| r[c].to_string()).collect();
        by_session.entry(key).or_default().push((r[pol].to_string(), vals));
    }
    assert!(!by_session.is_empty());
    let mut fully_recorded = 0;
    for (key, rows) in &by_session {
        assert_eq!(rows.len(), 6, "{key:?}");
        for (p, vals) in &rows[1..] {
            assert_eq!(vals, &rows[0].1, "{key:?}: `{p}` against `{}`", rows[0].0);
        }
        let v = &rows[0].1;
        if recorded && v[0] == v[1] && v[0] != "0" {
            fully_recorded += 1;
            assert_eq!(v[2], v[3], "{key:?}: every call has usage, so the baseline is the recorded sum");
        }
    }
    assert!(!recorded || fully_recorded > 0, "no session with usage on every call: the second promise went untested");

    let ch = header("calls.csv");
    let (id, src, pol, call) = (col(&ch, "session_id"), col(&ch, "source_path"), col(&ch, "policy"), col(&ch, "call"));
    let (tb, tr, ev) = (col(&ch, "tokens_baseline"), col(&ch, "tokens_recorded"), col(&ch, "events"));
    let mut by_call: std::collections::BTreeMap<(String, String, String), Vec<(String, String)>> = Default::default();
    for r in read("calls.csv") {
        let overflow = r[ev].split(['|', ';', ' ']).any(|e| e == "overflow_baseline");
        let vals = format!("{} {} {overflow}", &r[tb], &r[tr]);
        by_call
            .entry((r[id].to_string(), r[src].to_string(), r[call].to_string()))
            .or_default()
            .push((r[pol].to_string(), vals));
    }
    for (key, rows) in &by_call {
        for (p, vals) in &rows[1..] {
            assert_eq!(vals, &rows[0].1, "{key:?}: `{p}` against `{}`", rows[0].0);
        }
    }
}

#[test]
fn one_baseline_for_every_policy_on_the_fixtures() {
    // `SMALL`'s settings, without its input and presets.
    assert_one_baseline(Path::new("fixtures"), &SMALL[5..]);
    assert_one_baseline(Path::new("fixtures"), &["--meter", "o200k"]);
}

#[test]
fn one_baseline_for_every_policy_on_the_corpus() {
    let Some(corpus) = compactor::testing::corpus_dir() else { return };
    assert_one_baseline(&corpus, &["--set", "context_window=64000"]);
}

/// `sessions.csv` rows of one policy: source path → (context_window, window_source).
fn windows_of(out: &Path, policy: &str) -> Vec<(String, u64, String)> {
    let mut r = csv::Reader::from_path(out.join("sessions.csv")).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let col = |c: &str| h.iter().position(|x| x == c).unwrap();
    let (src, pol, w, ws) = (col("source_path"), col("policy"), col("context_window"), col("window_source"));
    r.records()
        .map(|x| x.unwrap())
        .filter(|x| &x[pol] == policy)
        .map(|x| (x[src].to_string(), x[w].parse().unwrap(), x[ws].to_string()))
        .collect()
}

#[test]
fn auto_windows_come_from_the_log_then_the_model_then_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = replay(&["fixtures", "--preset", "opal"], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = windows_of(&out, "opal");
    let mut seen = std::collections::BTreeSet::new();
    for (src, window, source) in &rows {
        let mut data = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(src)).unwrap_or_default();
        if compactor::read::compressed::is_zstd(&data) {
            data = compactor::read::compressed::decompress(&data, 1 << 30).unwrap();
        }
        let text = String::from_utf8_lossy(&data);
        // The numbers the text holds after `"key":`.
        let numbers = |key: &str| -> Vec<u64> {
            let pat = format!("\"{key}\":");
            text.split(pat.as_str())
                .skip(1)
                .filter_map(|t| t.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
                .collect()
        };
        let recorded = numbers("model_context_window").into_iter().max();
        // An OpenClaw database holds its session store, whose entries record windows too.
        let stored = numbers("contextTokens");
        match source.as_str() {
            "log" => assert!(Some(*window) == recorded || stored.contains(window), "{src}: {window}"),
            "model" => {
                assert!(recorded.is_none(), "{src}: the log's own window comes first");
                if text.contains("claude-sonnet-4-6") && !text.contains("claude-sonnet-4-5") {
                    assert_eq!(*window, 1_000_000, "{src}");
                }
            }
            "default" => assert_eq!(*window, 200_000, "{src}"),
            // A codex exec stream names no model: Codex's default, 272K of input.
            "agent" => {
                assert!(recorded.is_none() && !text.contains("\"model\""), "{src}: a model or window was recorded");
                assert_eq!(*window, 272_000, "{src}");
            }
            other => panic!("{src}: source {other}"),
        }
        seen.insert(source.clone());
    }
    assert!(seen.len() >= 3, "the fixtures show every source: {seen:?}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Context windows (`auto`):"), "{md}");

    // A prices file's [windows] beats the built-in table; --set fixes the window.
    let prices = dir.path().join("prices.toml");
    std::fs::write(&prices, "[windows]\n\"gpt-5.4\" = 64000\n\"claude-sonnet-4-5\" = 150000\n").unwrap();
    let out2 = dir.path().join("out2");
    let o = replay(&["fixtures", "--preset", "opal", "--prices", prices.to_str().unwrap()], &out2);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let changed: Vec<_> = windows_of(&out2, "opal").into_iter().filter(|r| r.2 == "model" && r.1 == 150_000).collect();
    assert!(!changed.is_empty(), "the prices file's window was not used");
    let out3 = dir.path().join("out3");
    let o = replay(&["fixtures", "--preset", "opal", "--set", "context_window=64000"], &out3);
    assert!(o.status.success());
    assert!(windows_of(&out3, "opal").iter().all(|r| r.1 == 64_000 && r.2 == "policy"));
}

#[test]
fn a_policy_that_cannot_compact_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // nous triggers at 100K tokens, above a 6000-token window; opal at 80 % of it.
    let o = replay(&["fixtures", "--preset", "nous", "--preset", "opal", "--set", "context_window=6000"], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Said on stderr, even under --quiet.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("warning: `nous` cannot compact in this run"), "{stderr}");
    assert!(!stderr.contains("`opal` cannot compact"), "{stderr}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("**Warning:** `nous` cannot compact in this run: its trigger (100,000 tokens)"), "{md}");
}

/// A trigger above every window does not stop a policy whose contexts grow
/// past the trigger: the warning says it compacted only past the window,
/// and how often, rather than that it cannot compact.
#[test]
fn a_trigger_above_the_window_that_contexts_pass_is_warned_about_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let args = ["fixtures", "--preset", "opal", "--set", "context_window=6000", "--set", "compact.trigger=tokens"];
    let o = replay(&[&args[..], &["--set", "compact.trigger_tokens=7000"]].concat(), &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let made = report.aggregates[0].compactions;
    assert!(made > 0, "the bundled sessions grow past 7,000 tokens");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let said = format!(
        "warning: `opal` compacts only past the window in this run: its trigger (7,000) is above every \
session's window (6,000), so its {made} compaction(s) came after calls that overflowed"
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert!(!stderr.contains("cannot compact"), "{stderr}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("**Warning:** `opal` compacts only past the window in this run: its trigger (7,000 tokens)"),
        "{md}"
    );
}

/// The printed summary answers the question: per policy, where it compacts,
/// tokens and money saved, overflows avoided, compactions and what the
/// summaries kept for later, each column in words, and why when a policy
/// saved next to nothing. `-q` prints the table alone.
#[test]
fn the_printed_summary_says_what_was_saved_and_kept_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| -> String {
        let o = cargo_bin_cmd!("compactor")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg("replay")
            .args(args)
            .arg("--out")
            .arg(dir.path().join("out"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap().replace(&dir.path().display().to_string(), "TMP")
    };
    let small = run(&["fixtures", "--preset", "default", "--preset", "opal", "--set", "context_window=6000"]);
    insta::assert_snapshot!("summary_small_window", small);
    // At each session's own window nothing reaches the trigger: said so.
    let real = run(&["fixtures", "--preset", "default"]);
    insta::assert_snapshot!("summary_real_windows", real);
    assert!(real.contains("why: no request reached default's trigger"), "{real}");
    let quiet = run(&["fixtures", "--preset", "default", "--quiet"]);
    assert_eq!(quiet.lines().count(), 2, "{quiet}");
    assert!(!quiet.contains("-0.0"), "{quiet}");
}

/// The fixtures replayed under opal and codex at a 6K window (so they
/// compact): the output folder under `dir` and its report.json.
fn opal_and_codex_at_6k(dir: &Path) -> (PathBuf, compactor::report::Report) {
    let out = dir.join("out");
    let o = replay(&["fixtures", "--preset", "opal", "--preset", "codex", "--set", "context_window=6000"], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    (out, report)
}

/// One FRR everywhere: the compare table's (summed per session, as sweep
/// points are) equals the pooled FRR of the policy's aggregate, which check
/// gates and the printed summary shows.
#[test]
fn one_frr_in_compare_check_sweep_and_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (_, report) = opal_and_codex_at_6k(dir.path());
    let summed = compactor::report::quality::policy_scores(&report);
    for (a, s) in report.aggregates.iter().zip(&summed) {
        let pooled = a.quality.as_ref().and_then(|q| q.candidate("policy")).and_then(|c| c.frr_pooled);
        let summed = s.as_ref().and_then(|s| s.frr());
        assert!(pooled.is_some(), "{}: nothing scored", a.policy);
        let (p, q) = (pooled.unwrap_or(0.0), summed.unwrap_or(-1.0));
        assert!((p - q).abs() < 1e-3, "{}: pooled {p} vs summed {q}", a.policy);
    }
}

/// sessions.csv prices each session (baseline, policy with its summarizer,
/// saved) and the rows add up to the policy's cost in report.json.
#[test]
fn sessions_csv_prices_each_session_and_adds_up() {
    let dir = tempfile::tempdir().unwrap();
    let (out, report) = opal_and_codex_at_6k(dir.path());
    let mut r = csv::Reader::from_path(out.join("sessions.csv")).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let col = |c: &str| h.iter().position(|x| x == c).unwrap_or_else(|| panic!("no column {c}"));
    let (policy, saved, base) = (col("policy"), col("cost_saved_usd"), col("cost_baseline_usd"));
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    for a in &report.aggregates {
        let cost = a.cost.as_ref().unwrap();
        let sum = |i: usize| -> f64 {
            rows.iter().filter(|x| x[policy] == *a.policy).map(|x| x[i].parse::<f64>().unwrap_or(0.0)).sum()
        };
        assert!((sum(saved) - cost.saved_usd).abs() < 1e-4, "{}: {} vs {}", a.policy, sum(saved), cost.saved_usd);
        assert!((sum(base) - cost.baseline_usd()).abs() < 1e-4, "{}", a.policy);
    }
}

/// A `--set` that the policy overrides is said, with what overrides it: the
/// run goes on, as the other policies may read the key.
#[test]
fn a_set_that_changes_nothing_is_named() {
    let o = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures/pi", "-q", "--preset", "opal", "--preset", "nous"])
        .args(["--set", "compact.keep_recent_tokens=8000", "--set", "compact.trigger_ratio=0.5"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("warning: --set compact.keep_recent_tokens=8000 changes nothing in policy `opal`: compact.keep_recent_ratio = 0.25 overrides it"), "{err}");
    assert!(err.contains("--set compact.trigger_ratio=0.5 changes nothing in policy `nous`: its trigger is compact.trigger = \"tokens\""), "{err}");
    assert!(!err.contains("in policy `nous`: compact.keep_recent_ratio"), "{err}");
}

/// No report shows a negative zero ("-0.0 %", "$-0.0000"), whatever rounds to it.
#[test]
fn no_output_shows_a_negative_zero() {
    let out = tempfile::tempdir().unwrap();
    let o = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["compare", "fixtures", "-q", "--set", "context_window=6000", "--set", "compact.reserve_tokens=1000"])
        .args(["--set", "flush.reserve_tokens=1000", "--set", "flush.threshold_tokens=1000", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    for (name, text) in [
        ("stdout", stdout),
        ("report.md", std::fs::read_to_string(out.path().join("report.md")).unwrap()),
        ("report.html", std::fs::read_to_string(out.path().join("report.html")).unwrap()),
    ] {
        for bad in ["-0.0%", "-0.0 %", "$-0.0", "-0.00 "] {
            assert!(!text.contains(bad), "{name} shows {bad}");
        }
    }
}

/// A `--fork-session` copy read with the log it copied: each response the API
/// gave is measured once, in the log that first had it; read alone, the copy
/// is the only record of its copied responses and keeps them.
#[test]
fn a_fork_session_copy_counts_each_response_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-code/forked");
    let run = |input: &Path| -> serde_json::Value {
        let o = cargo_bin_cmd!("compactor")
            .arg("replay")
            .arg(input)
            .args(["--preset", "default", "--json", "--quiet", "--no-quality"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let metric = |r: &serde_json::Value, id: &str, key: &str| -> u64 {
        let s = r["sessions"].as_array().unwrap().iter().find(|s| s["session_id"].as_str().unwrap().starts_with(id));
        s.unwrap_or_else(|| panic!("no session {id}"))["metrics"][key].as_u64().unwrap()
    };
    // The distinct responses of both files, and the prompt each sent.
    let mut prompts: std::collections::BTreeMap<String, u64> = Default::default();
    for f in std::fs::read_dir(&dir).unwrap() {
        for line in std::fs::read_to_string(f.unwrap().path()).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(id) = v["message"]["id"].as_str() {
                let u = &v["message"]["usage"];
                let p = ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"];
                prompts.insert(id.to_string(), p.iter().map(|k| u[k].as_u64().unwrap()).sum());
            }
        }
    }
    let both = run(&dir);
    let (parent, copy) = ("5a1e", "1b2c");
    assert_eq!(metric(&both, parent, "calls") + metric(&both, copy, "calls"), prompts.len() as u64);
    let billed = metric(&both, parent, "input_tokens_baseline") + metric(&both, copy, "input_tokens_baseline");
    assert_eq!(billed, prompts.values().sum::<u64>(), "every response's prompt once");
    let alone = run(&dir.join("1b2c3d4e-0f9e-4d8c-b7a6-5e4f3a2b1c0d.jsonl"));
    assert_eq!(metric(&alone, copy, "calls"), 5);
    assert_eq!(
        metric(&alone, copy, "input_tokens_baseline"),
        billed - metric(&both, parent, "input_tokens_baseline") + (prompts["msg_01ForkA"] + prompts["msg_01ForkB"])
    );
}

/// `codex exec resume` saved apart: the thread's runs are one session, each
/// running total counted once, whatever the order the files are given in.
#[test]
fn a_resumed_codex_exec_thread_counts_each_total_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/codex-exec/resumed");
    let run = |inputs: &[&str]| -> serde_json::Value {
        let o = cargo_bin_cmd!("compactor")
            .arg("replay")
            .args(inputs.iter().map(|f| dir.join(f)))
            .args(["--preset", "default", "--json", "--quiet", "--no-quality"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let metrics = |r: &serde_json::Value| -> Vec<(u64, u64)> {
        let m = |s: &serde_json::Value, k: &str| s["metrics"][k].as_u64().unwrap();
        r["sessions"].as_array().unwrap().iter().map(|s| (m(s, "calls"), m(s, "input_tokens_baseline"))).collect()
    };
    // The last running total of the resumed run is the thread's whole input.
    let last_total = 26_900;
    assert_eq!(metrics(&run(&["first-run.jsonl", "resumed-run.jsonl"])), [(5, last_total)]);
    assert_eq!(metrics(&run(&["resumed-run.jsonl", "first-run.jsonl"])), [(5, last_total)]);
    // Alone, the resumed run is the only record of its total.
    assert_eq!(metrics(&run(&["resumed-run.jsonl"])), [(3, last_total)]);
}

/// Every preset keeps its invariants on every bundled shape, at each
/// session's own window and at a small one where they all compact; the agent's
/// own compactions are the log's shape, not the policy's doing.
#[test]
fn every_preset_keeps_its_invariants_on_the_fixtures() {
    let list = cargo_bin_cmd!("compactor").args(["presets", "--json"]).output().unwrap();
    let presets: Vec<serde_json::Value> = serde_json::from_slice(&list.stdout).unwrap();
    let mut args: Vec<String> = vec!["replay".into(), "fixtures/".into(), "--check-invariants".into(), "-q".into()];
    for p in &presets {
        args.extend(["--preset".to_string(), p["name"].as_str().unwrap().to_string()]);
    }
    assert!(presets.len() >= 10, "{}", presets.len());
    let small = [
        "context_window=6000",
        "compact.reserve_tokens=1000",
        "flush.reserve_tokens=1000",
        "flush.threshold_tokens=500",
    ];
    for window in [&[][..], &small[..]] {
        let sets = window.iter().flat_map(|kv| ["--set", kv]);
        let o = cargo_bin_cmd!("compactor")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&args)
            .args(sets)
            .args(["--no-quality"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{window:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// A run into an `--out` an earlier run wrote leaves nothing of the earlier
/// run that it does not write itself: no `quality.csv` after `--no-quality`,
/// no transcripts of its policy after `--no-transcripts`; a file compactor
/// does not write stays.
#[test]
fn a_later_run_leaves_none_of_an_earlier_runs_reports_beside_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = replay(&["fixtures/claude-code"], &out);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("quality.csv").is_file() && out.join("transcripts/default").is_dir());
    std::fs::write(out.join("notes.md"), "mine").unwrap();
    let o = replay(&["fixtures/claude-code", "--no-quality", "--no-transcripts"], &out);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.join("quality.csv").exists(), "a quality.csv of no run beside this run's reports");
    assert!(!out.join("transcripts/default").exists(), "the earlier run's transcripts stay");
    assert!(out.join("report.json").is_file() && out.join("calls.csv").is_file());
    assert_eq!(std::fs::read_to_string(out.join("notes.md")).unwrap(), "mine");
}

/// `--out` holds one run of one command: a replay into the folder of an
/// earlier sweep, check or shard leaves none of their files (a sweep's
/// `recommended.toml` would read as this run's advice, a stale
/// `partial.json` would be merged), and a sweep into a replay's folder none
/// of the replay's reports.
#[test]
fn a_run_leaves_no_report_of_another_command_in_its_out() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.toml");
    std::fs::write(&grid, "[grid]\n\"compact.trigger_ratio\" = [0.6, 0.7]\n").unwrap();
    let run = |args: &[&str], out: &Path| {
        let o = cargo_bin_cmd!("compactor")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .arg("--out")
            .arg(out)
            .arg("--quiet")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    let log = "fixtures/claude-code/compaction.jsonl";
    let names = |out: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "transcripts")
            .collect();
        v.sort();
        v
    };
    let replay_files = ["calls.csv", "quality.csv", "report.html", "report.json", "report.md", "sessions.csv"];

    let out = dir.path().join("sweep-then-replay");
    run(&["sweep", log, "--grid", grid.to_str().unwrap()], &out);
    assert!(out.join("sweep.csv").is_file() && out.join("recommended.toml").is_file());
    run(&["replay", log], &out);
    assert_eq!(names(&out), replay_files, "a sweep's files beside a replay");

    let out = dir.path().join("replay-then-sweep");
    run(&["replay", log], &out);
    run(&["sweep", log, "--grid", grid.to_str().unwrap()], &out);
    let left = names(&out);
    assert!(
        !left
            .iter()
            .any(|n| ["calls.csv", "sessions.csv", "quality.csv", "report.json", "report.md"].contains(&n.as_str())),
        "{left:?}"
    );

    let out = dir.path().join("check-then-replay");
    let baseline = dir.path().join("b.json");
    run(&["check", log, "--write-baseline", baseline.to_str().unwrap()], &out);
    assert!(out.join("check.md").is_file());
    run(&["replay", log], &out);
    assert_eq!(names(&out), replay_files, "a check's check.md beside a replay");

    let out = dir.path().join("shard-then-replay");
    run(&["replay", log, "--shard", "1/1"], &out);
    assert!(out.join("partial.json").is_file());
    run(&["replay", log], &out);
    assert_eq!(names(&out), replay_files, "a shard's partial.json beside a whole run");
}

/// A run whose quality pass scored no compaction (none happened) writes a
/// quality.csv with the same header as one with rows: a script reading its
/// columns works on either.
#[test]
fn quality_csv_without_rows_has_the_full_header() {
    let dir = tempfile::tempdir().unwrap();
    let first_line = |out: &Path| {
        let text = std::fs::read_to_string(out.join("quality.csv")).unwrap();
        (text.lines().next().unwrap_or("").to_string(), text.lines().count())
    };
    let none = dir.path().join("none");
    let o = replay(&["fixtures/claude-code/titles.jsonl"], &none);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let some = dir.path().join("some");
    let o = replay(&["fixtures/claude-code/long-tool-loop.jsonl", "--set", "context_window=6000"], &some);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let (header, lines) = first_line(&none);
    assert_eq!(lines, 1, "the run without compactions scored rows: pick another fixture");
    let (with_rows, n) = first_line(&some);
    assert!(n > 1, "the run with a small window scored nothing: pick another fixture");
    assert_eq!(header, with_rows);
    assert!(header.split(',').count() > 20, "{header}");
}
