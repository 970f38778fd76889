//! A team's own summarizer program (`compact.summarizer = "command"`), run as a
//! real process by `compactor replay`: its summaries reach the transcripts and
//! are scored, a rerun starts it zero times, it sees only the environment it is
//! given, and a crash, a hang or garbage falls back with the reason.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::Path;
use std::process::{Command, Output};

/// A program that counts its runs, keeps its last request and environment, and
/// answers with the paths the request mentions. Runs overlap (`concurrency`):
/// each writes its own file and renames it into place, so the kept request
/// is one whole request, not two written over each other.
const PROGRAM: &str = r#"#!/bin/sh
request=$(cat)
echo run >> runs.log
printf '%s' "$request" > "last-request.json.$$" && mv "last-request.json.$$" last-request.json
env > "last-env.txt.$$" && mv "last-env.txt.$$" last-env.txt
echo "PROGRAM-SUMMARY of the compacted messages"
printf '%s' "$request" | sed -e 's/\\[nrt]/ /g' | grep -oE '[A-Za-z0-9_.-]*(/[A-Za-z0-9_.-]+)+\.[a-z]{1,4}' | sort -u | head -n 40
"#;

fn replay(args: &[&str], out: &Path, cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_compactor"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures", "--set", "context_window=6000", "--quiet"])
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--out")
        .arg(out)
        .env("COMPACTOR_TEST_PASSED", "yes")
        .env("COMPACTOR_TEST_SECRET", "not-for-the-program")
        .env("COMPACTOR_TEST_PASSED_KEY", "sk-passed-4f9a2c77")
        .output()
        .unwrap()
}

fn text_under(dir: &Path) -> String {
    let mut s = String::new();
    for e in walkdir::WalkDir::new(dir).into_iter().flatten().filter(|e| e.file_type().is_file()) {
        s.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
    }
    s
}

fn report(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap()
}

/// The quality.csv rows of the policy's own summaries: (outcome, summary_tokens, frr).
fn policy_rows(out: &Path) -> Vec<(String, u64, Option<f64>)> {
    let mut r = csv::Reader::from_path(out.join("quality.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (summarizer, outcome, tokens, frr) = (col("summarizer"), col("outcome"), col("summary_tokens"), col("frr"));
    r.records()
        .map(|x| x.unwrap())
        .filter(|x| &x[summarizer] == "policy")
        .map(|x| (x[outcome].to_string(), x[tokens].parse().unwrap(), x[frr].parse().ok()))
        .collect()
}

#[test]
fn a_programs_summaries_are_replayed_and_scored_and_a_rerun_runs_it_zero_times() {
    let dir = tempfile::tempdir().unwrap();
    let policies = dir.path().join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(policies.join("summarize.sh"), PROGRAM).unwrap();
    // Relative paths are read from the policy file's folder.
    std::fs::write(
        policies.join("mine.toml"),
        "base = \"opal\"\nname = \"mine\"\n[compact]\nsummarizer = \"command\"\n\
         command = [\"sh\", \"summarize.sh\"]\ncommand_env = [\"COMPACTOR_TEST_PASSED\"]\n",
    )
    .unwrap();
    let policy = policies.join("mine.toml");
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let o = replay(&["--policy", policy.to_str().unwrap()], &out, &cache);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));

    let runs = std::fs::read_to_string(policies.join("runs.log")).unwrap().lines().count() as u64;
    assert!(runs > 0, "the program never ran");
    let r = report(&out);
    let stats = &r["diagnostics"]["command_summaries"];
    assert_eq!(stats["requested"], runs, "{stats}");
    assert_eq!(stats["fell_back"], 0);
    assert!(text_under(&out.join("transcripts")).contains("PROGRAM-SUMMARY"));
    let rows = policy_rows(&out);
    assert!(!rows.is_empty(), "no compaction scored");
    for (outcome, tokens, _) in &rows {
        assert_eq!(outcome, "summarizer");
        assert!(*tokens > 0);
    }
    // FRR is blank where nothing compacted was needed later.
    assert!(rows.iter().any(|(_, _, frr)| frr.is_some()), "the program's summaries are not scored");

    // The request, as documented.
    let req: serde_json::Value =
        serde_json::from_slice(&std::fs::read(policies.join("last-request.json")).unwrap()).unwrap();
    assert_eq!(req["schema_version"], 1);
    assert_eq!(req["policy"], "mine");
    assert!(req["part"] == "history" || req["part"] == "turn_prefix");
    assert!(req["session"]["id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(req["session"]["format"].as_str().is_some());
    assert!(req["budget_tokens"].as_u64().is_some_and(|b| b > 0));
    let asked = req["messages"].as_array().unwrap().len() + req["turn_prefix"].as_array().unwrap().len();
    assert!(asked > 0);
    assert!(req["messages"].as_array().unwrap().iter().all(|m| m["blocks"].is_array() && m["role"].is_string()));
    assert!(req["file_ops"]["read"].is_array() && req["file_ops"]["modified"].is_array());
    // Only PATH and the variables the policy names.
    let env = std::fs::read_to_string(policies.join("last-env.txt")).unwrap();
    assert!(env.contains("COMPACTOR_TEST_PASSED=yes"), "{env}");
    assert!(!env.contains("COMPACTOR_TEST_SECRET"), "{env}");
    assert!(env.lines().any(|l| l.starts_with("PATH=")));

    // Again: every answer from the cache, the program never started.
    let out2 = dir.path().join("out2");
    let o = replay(&["--policy", policy.to_str().unwrap()], &out2, &cache);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let again = std::fs::read_to_string(policies.join("runs.log")).unwrap().lines().count() as u64;
    assert_eq!(again, runs, "a rerun started the program");
    // A warm cache changes no output.
    assert_eq!(std::fs::read(out.join("report.json")).unwrap(), std::fs::read(out2.join("report.json")).unwrap());
    assert_eq!(text_under(&out.join("transcripts")), text_under(&out2.join("transcripts")));
    assert_eq!(std::fs::read(out.join("quality.csv")).unwrap(), std::fs::read(out2.join("quality.csv")).unwrap());

    // An edit to the program is a new program: it runs again.
    std::fs::write(policies.join("summarize.sh"), PROGRAM.replace("PROGRAM-SUMMARY", "EDITED-SUMMARY")).unwrap();
    let out3 = dir.path().join("out3");
    let o = replay(&["--policy", policy.to_str().unwrap()], &out3, &cache);
    assert_eq!(o.status.code(), Some(0));
    let third = std::fs::read_to_string(policies.join("runs.log")).unwrap().lines().count() as u64;
    assert_eq!(third, 2 * runs);
    assert!(text_under(&out3.join("transcripts")).contains("EDITED-SUMMARY"));
}

/// Run `program` (written to a file) as `--summarizer-command`; every summary
/// must fall back to extractive with a reason holding each of `expect`, and
/// the run must fail (exit 2) saying its numbers are the fallback's.
fn falls_back(program: &str, extra: &[&str], expect: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.sh");
    std::fs::write(&script, program).unwrap();
    let cmd = format!("sh {}", script.display());
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let args = [&["--preset", "opal", "--summarizer-command", &cmd][..], extra].concat();
    let o = replay(&args, &out, &cache);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    let error = stderr.lines().find(|l| l.starts_with("error: ")).unwrap_or_default();
    assert!(error.contains("summaries of the summarizer program fell back to extractive"), "{stderr}");
    assert!(error.ends_with("not your summarizer program: check --summarizer-command"), "{error}");
    let r = report(&out);
    let stats = &r["diagnostics"]["command_summaries"];
    assert!(stats["fell_back"].as_u64().unwrap() > 0);
    assert_eq!(stats["fell_back"], stats["requested"], "{stats}");
    let reasons = r["diagnostics"]["summarizer_fallbacks"].as_array().unwrap();
    assert_eq!(reasons.len() as u64, stats["fell_back"].as_u64().unwrap());
    for reason in reasons {
        let reason = reason.as_str().unwrap();
        for e in expect {
            assert!(reason.contains(e), "{reason:?} does not say {e:?}");
        }
    }
    // Each compaction keeps its own reason.
    let text = r.to_string();
    assert!(text.contains("\"fallback_reason\"") && text.contains(expect[0]), "no fallback_reason in report.json");
    // The extractive summarizer wrote them, and they are scored as fallbacks.
    let rows = policy_rows(&out);
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|(outcome, tokens, _)| outcome == "fallback" && *tokens > 0), "{rows:?}");
    assert!(rows.iter().any(|(_, _, frr)| frr.is_some()));
    // Failures are not cached: a fixed program would run again.
    assert!(
        !cache.join("command").exists()
            || walkdir::WalkDir::new(cache.join("command")).into_iter().flatten().all(|e| !e.file_type().is_file())
    );
}

#[test]
fn a_crashing_program_falls_back_with_its_exit_status_and_stderr() {
    falls_back(
        "cat > /dev/null\necho 'Traceback: KeyError: messages' >&2\nexit 3\n",
        &[],
        &["exited with status 3", "stderr: Traceback: KeyError: messages"],
    );
    // A key the program was given and prints is not kept.
    falls_back(
        "cat > /dev/null\necho \"bad key $COMPACTOR_TEST_PASSED_KEY\" >&2\nexit 1\n",
        &["--set", "compact.command_env=COMPACTOR_TEST_PASSED_KEY"],
        &["stderr: bad key [$COMPACTOR_TEST_PASSED_KEY]"],
    );
}

#[test]
fn a_hanging_program_is_stopped_at_its_timeout_with_what_it_started() {
    // The child it leaves holds the pipes: stopping only the program would
    // leave the run waiting on them.
    let started = std::time::Instant::now();
    falls_back(
        "echo 'waiting for a server' >&2\nsleep 60 &\nsleep 60\n",
        &["--set", "compact.command_timeout_secs=1", "--command-concurrency", "8"],
        &["past its timeout of 1 s", "waiting for a server"],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(50), "a hung program held the run");
}

#[test]
fn a_process_that_escapes_the_group_and_holds_the_output_does_not_hold_the_run() {
    // `setsid` starts `sleep` in a session of its own: killing the program's
    // group leaves it, with the program's stdout.
    let started = std::time::Instant::now();
    // (It is given a second to leave the group before the program ends.)
    falls_back("cat > /dev/null\nsetsid sleep 8 &\nsleep 1\necho SUMMARY\n", &[], &["kept its output open"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn garbage_output_falls_back() {
    falls_back("cat > /dev/null\nprintf 'summary \\377\\376 bytes'\n", &[], &["not UTF-8"]);
    falls_back("cat > /dev/null\necho '{\"summary\": 3}'\n", &[], &["is not the JSON answer"]);
    falls_back("cat > /dev/null\necho '   '\n", &[], &["empty"]);
}

#[test]
fn a_program_that_cannot_start_falls_back_and_a_missing_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let o = replay(&["--preset", "opal", "--summarizer-command", "./no-such-program --fast"], &out, &cache);
    // Every summary fell back: an error, the reports written all the same.
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let r = report(&out);
    let reasons = r["diagnostics"]["summarizer_fallbacks"].as_array().unwrap();
    assert!(!reasons.is_empty());
    assert!(reasons[0].as_str().unwrap().contains("cannot start `./no-such-program`"), "{reasons:?}");

    // No program at all is a usage error before any log is read.
    let o = replay(&["--preset", "opal", "--summarizer", "command"], &out, &cache);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("compact.command"));
}

#[test]
fn the_json_answer_brings_its_usage() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("json.sh");
    std::fs::write(
        &script,
        "cat > /dev/null\necho '{\"summary\": \"JSON-SUMMARY src/main.rs\", \"usage\": {\"input_tokens\": 700, \"output_tokens\": 20}, \"model\": \"mine-1\"}'\n",
    )
    .unwrap();
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let cmd = format!("sh '{}'", script.display());
    let o = replay(&["--preset", "opal", "--summarizer-command", &cmd], &out, &cache);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let r: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let asked = r.diagnostics.command_summaries.as_ref().unwrap().requested;
    assert!(asked > 0);
    let spent: u64 = r.aggregates.iter().map(|a| a.summarizer_tokens).sum();
    assert_eq!(spent, asked * 720, "the program's own usage is the compactions' cost");
    assert!(text_under(&out.join("transcripts")).contains("JSON-SUMMARY src/main.rs"));
}

/// `examples/summarizers/openai_summarizer.py` as the program, against a
/// loopback OpenAI-compatible server: what it answers is in the transcripts,
/// with its usage. Skips with a reason without python3, fails under CI=true.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_example_summarizes_through_an_openai_compatible_server() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let has_python = Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success());
    if !has_python {
        assert!(std::env::var("CI").map_or(true, |v| v != "true"), "python3 is missing under CI=true");
        eprintln!("skipped: python3 is not on PATH");
        return;
    }
    let server = MockServer::start().await;
    let answer = serde_json::json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "PY-EXAMPLE-SUMMARY"}}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 12}
    });
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let o = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_compactor"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["replay", "fixtures", "--preset", "opal", "--set", "context_window=6000", "--quiet"])
            .args([
                "--summarizer-command",
                "python3 examples/summarizers/openai_summarizer.py examples/summarizers/prompt.md",
            ])
            .args(["--set", "compact.command_env=OPENAI_BASE_URL"])
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--out")
            .arg(&out)
            .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
            .output()
            .unwrap()
    });
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let r = report(&out);
    assert_eq!(r["diagnostics"]["command_summaries"]["fell_back"], 0, "{}", r["diagnostics"]);
    let asked = server.received_requests().await.unwrap();
    assert!(!asked.is_empty());
    // The user's prompt file went to the server, with the conversation in it.
    let body = String::from_utf8_lossy(&asked[0].body).into_owned();
    assert!(body.contains("<conversation>") && !body.contains("{conversation}"), "{body}");
    assert!(text_under(&out.join("transcripts")).contains("PY-EXAMPLE-SUMMARY"));
}

/// `check` records `--summarizer-command` in the baseline and replays it when
/// run with the baseline alone; the program's identity is a run setting.
#[test]
fn a_baseline_made_with_a_program_replays_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("prog.sh");
    std::fs::write(&script, PROGRAM).unwrap();
    let cmd = format!("sh {}", script.display());
    let (baseline, cache) = (dir.path().join("b.json"), dir.path().join("cache"));
    let check = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_compactor"))
            .current_dir(dir.path())
            .arg("check")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"))
            .args(["--quiet", "--cache-dir"])
            .arg(&cache)
            .args(args)
            .output()
            .unwrap()
    };
    let b = baseline.to_str().unwrap();
    let o = check(&[
        "--preset",
        "opal",
        "--set",
        "context_window=6000",
        "--summarizer-command",
        &cmd,
        "--write-baseline",
        b,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    assert_eq!(v["replay"]["summarizer_command"], cmd.as_str(), "{}", v["replay"]);
    assert_eq!(v["settings"]["command.opal"].as_str().map(str::len), Some(64), "{}", v["settings"]);
    let runs = std::fs::read_to_string(dir.path().join("runs.log")).unwrap().lines().count();
    assert!(runs > 0);
    // The baseline alone: the same policy, program and answers (from the cache).
    let o = check(&["--baseline", b]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("runs.log")).unwrap().lines().count(), runs);
    // An edited program is a changed run setting, named.
    std::fs::write(&script, PROGRAM.replace("PROGRAM-SUMMARY", "EDITED")).unwrap();
    let o = check(&["--baseline", b]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("command.opal"), "{}", String::from_utf8_lossy(&o.stderr));
}
