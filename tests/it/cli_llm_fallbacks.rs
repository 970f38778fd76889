//! LLM summaries that fall back to extractive never do so silently: against a
//! real HTTP server on 127.0.0.1 (wiremock) answering 500 or 401, one that
//! answers too late, and a port nobody listens on, the end of the run says on
//! stderr how many summaries fell back (of how many) and the first reason;
//! report.md says the same at its top, and report.json carries the counts
//! (`diagnostics.llm_summaries`). All falling back reads "every LLM summary fell
//! back to extractive: …" and is an error (exit 2, the reports still written):
//! the run measured the fallback, not the LLM. The API key appears nowhere.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use compactor::report::{LlmSummaries, Report};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-DO-NOT-LEAK-7d1e0b";

/// `compactor replay` of the fixtures under `opal` with a window small enough
/// that they compact, summarized by the LLM at `base_url`: no retries, no
/// cache, one request at a time (so "first" is the first request).
fn replay(base_url: &str, out: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_compactor"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures", "--preset", "opal", "--set", "context_window=6000", "--quiet"])
        .args(["--summarizer", "llm", "--llm-model", "test-model", "--llm-api-key-env", "COMPACTOR_TEST_KEY"])
        .args(["--llm-retries", "0", "--no-cache", "--llm-concurrency", "1", "--jobs", "1"])
        .args(["--llm-base-url", base_url])
        .args(extra)
        .arg("--out")
        .arg(out)
        .env("COMPACTOR_TEST_KEY", KEY)
        .output()
        .unwrap()
}

fn answer(text: &str) -> serde_json::Value {
    serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}
    })
}

/// What the run said about its LLM summaries: stderr, report.md, and the
/// counts of report.json. The run must have ended with `code`, and the key
/// must appear nowhere.
struct Said {
    stderr: String,
    md: String,
    counts: LlmSummaries,
    report: Report,
}

fn said(o: &Output, out: &Path, code: i32) -> Said {
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{stderr}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let json = std::fs::read(out.join("report.json")).unwrap();
    let report: Report = serde_json::from_slice(&json).unwrap();
    let counts = report.diagnostics.llm_summaries.clone().expect("report.json: diagnostics.llm_summaries");
    assert!(counts.requested > 0, "no LLM summary was asked for: the fixtures did not compact");
    for (what, text) in
        [("stderr", &stderr), ("report.md", &md), ("report.json", &String::from_utf8_lossy(&json).into_owned())]
    {
        assert!(!text.contains(KEY), "{what} holds the API key");
    }
    Said { stderr, md, counts, report }
}

/// Every summary fell back, and every place says so with the counts and the
/// first reason (which holds `needle`); the run ends with an error that says
/// its numbers are the fallback's. No `llm@budget` row holds an extractive
/// summary under the LLM's name.
fn assert_all_fell_back(s: &Said, needle: &str) {
    let n = s.counts.requested;
    assert_eq!(s.counts.fell_back, n, "{:?}", s.counts);
    let reason = s.counts.first_reason.as_deref().unwrap_or_default();
    assert!(reason.contains(needle), "first reason {reason:?} lacks {needle:?}");
    let line = format!("every LLM summary fell back to extractive: {n} of {n}, the first because ");
    let error = s.stderr.lines().find(|l| l.starts_with("error: every LLM summary")).unwrap_or_default();
    assert!(error.starts_with(&format!("error: {line}")), "stderr: {}", s.stderr);
    assert!(error.contains(needle), "stderr: {error}");
    assert!(
        error.contains("its numbers measure the extractive fallback, not the LLM summarizer: check --llm-base-url"),
        "{error}"
    );
    let md = s.md.lines().find(|l| l.starts_with("> **Warning:**")).unwrap_or_default();
    assert!(md.contains(&line) && md.contains(needle), "report.md: {md}");
    assert_eq!(s.stderr.matches("fell back").count(), 1, "said once, at the end: {}", s.stderr);
    // Only a compaction with nothing new to summarize (the previous summary
    // stands, nothing is asked) keeps an `llm@budget` row.
    let (llm, extractive) = (budget_rows(&s.report, "llm@budget"), budget_rows(&s.report, "extractive@budget"));
    assert!(llm < extractive, "llm@budget rows from the fallback: {llm} of {extractive}");
    assert!(s.md.contains(&format!("| llm@budget ({llm} of ")), "report.md's rows do not say over how many");
}

/// The rows named `name` of the agents' own compactions in a report.
fn budget_rows(r: &Report, name: &str) -> usize {
    let rows = r.recorded.iter().flat_map(|q| &q.events).flat_map(|e| &e.rows);
    rows.filter(|row| row.summarizer == name).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_answering_500_is_reported_with_counts_and_reason() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("upstream exploded"))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = tokio::task::block_in_place(|| replay(&format!("{}/v1", server.uri()), &out, &[]));
    let s = said(&o, &out, 2);
    assert_all_fell_back(&s, "HTTP 500");
    assert!(s.counts.first_reason.unwrap().starts_with("HTTP 500: upstream exploded"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_is_reported_without_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(serde_json::json!({"error": {"message": format!("invalid api key {KEY}")}})),
        )
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = tokio::task::block_in_place(|| replay(&format!("{}/v1", server.uri()), &out, &[]));
    let s = said(&o, &out, 2);
    assert_all_fell_back(&s, "401");
}

#[test]
fn an_unreachable_server_is_reported() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = replay(&format!("http://127.0.0.1:{port}/v1"), &out, &[]);
    let s = said(&o, &out, 2);
    assert_all_fell_back(&s, &format!("127.0.0.1:{port}"));
    assert!(s.counts.first_reason.unwrap().starts_with("cannot connect to "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_too_slow_is_reported() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(answer("## Goal\nlate")).set_delay(Duration::from_secs(5)),
        )
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = tokio::task::block_in_place(|| replay(&format!("{}/v1", server.uri()), &out, &["--llm-timeout", "0.3"]));
    let s = said(&o, &out, 2);
    assert_all_fell_back(&s, "no answer from ");
}

/// One failed request among answered ones: "1 of N", with its reason; a run
/// where none fell back says nothing at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn some_falling_back_are_counted_and_none_says_nothing() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded, try later"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer("## Goal\nMOCK-SUMMARY")))
        .with_priority(2)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/v1", server.uri());
    let out = dir.path().join("some");
    let o = tokio::task::block_in_place(|| replay(&url, &out, &[]));
    let s = said(&o, &out, 0);
    let n = s.counts.requested;
    assert!(n > 1, "too few summaries to fall back partly: {n}");
    assert_eq!(s.counts.fell_back, 1, "{:?}", s.counts);
    let line =
        format!("1 of {n} LLM summaries fell back to extractive, the first because HTTP 503: overloaded, try later");
    assert!(s.stderr.contains(&format!("warning: {line}")), "stderr: {}", s.stderr);
    assert!(s.md.contains(&line), "report.md lacks {line:?}");
    assert!(!s.md.contains("every LLM summary"));

    // The same run again, the server answering every request now.
    let out = dir.path().join("none");
    let o = tokio::task::block_in_place(|| replay(&url, &out, &[]));
    let s = said(&o, &out, 0);
    assert_eq!((s.counts.requested, s.counts.fell_back, s.counts.first_reason), (n, 0, None));
    let llm = budget_rows(&s.report, "llm@budget");
    assert!(llm > 0, "no compaction the fixtures record was summarized by the LLM");
    assert_eq!(llm, budget_rows(&s.report, "extractive@budget"), "an LLM that answers writes every row");
    assert!(!s.stderr.contains("fell back"), "stderr: {}", s.stderr);
    assert!(!s.md.contains("fell back"), "report.md");
}

/// `check` and `sweep` fail too (and `check`'s report.md says why), and
/// `check` writes no baseline of the fallback's numbers.
#[test]
fn check_and_sweep_fail_too() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.toml");
    std::fs::write(&grid, "[grid]\n\"compact.trigger_ratio\" = [0.6, 0.8]\n").unwrap();
    let base = ["--set", "context_window=6000", "--summarizer", "llm", "--llm-model", "m", "--quiet"];
    let llm = ["--llm-retries", "0", "--no-cache", "--llm-base-url", &url];
    let baseline = dir.path().join("baseline.json");
    let out = dir.path().join("check");
    let runs: [(&str, Vec<&std::ffi::OsStr>); 2] = [
        ("check", vec!["--write-baseline".as_ref(), baseline.as_os_str(), "--out".as_ref(), out.as_os_str()]),
        ("sweep", vec!["--grid".as_ref(), grid.as_os_str()]),
    ];
    for (cmd, extra) in runs {
        let o = Command::new(env!("CARGO_BIN_EXE_compactor"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([cmd, "fixtures", "--preset", "opal"])
            .args(base)
            .args(llm)
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {stderr}");
        let error = stderr.lines().find(|l| l.starts_with("error: every LLM summary fell back to extractive: "));
        let error = error.unwrap_or_else(|| panic!("{cmd}: {stderr}"));
        assert!(error.contains(&format!("cannot connect to http://127.0.0.1:{port}")), "{cmd}: {error}");
        let then = if cmd == "check" { "Nothing is compared and no baseline written" } else { "The run went on" };
        assert!(error.contains(then), "{cmd}: {error}");
        assert!(!stderr.contains("warning: every LLM"), "{cmd} says it twice: {stderr}");
    }
    assert!(!baseline.exists(), "check wrote a baseline of the fallback's numbers");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("> **Warning:** every LLM summary fell back to extractive: "), "check's report.md");
}
