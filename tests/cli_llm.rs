//! `compactor replay --summarizer llm` end to end against a real HTTP server on
//! 127.0.0.1 (wiremock): summaries come from the server, failures fall back to the
//! extractive summarizer and are listed in report.json, the run still exits 0,
//! and the API key never appears in any output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-DO-NOT-LEAK-4f9a2c";

fn answer(text: &str) -> serde_json::Value {
    serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}
    })
}

fn run(server: &MockServer, out: &Path, cache: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_compactor"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures", "--preset", "opal", "--set", "context_window=6000", "--quiet"])
        .args(["--summarizer", "llm", "--llm-model", "test-model", "--llm-api-key-env", "COMPACTOR_TEST_KEY"])
        .arg("--llm-base-url")
        .arg(format!("{}/v1", server.uri()))
        .arg("--cache-dir")
        .arg(cache)
        .arg("--out")
        .arg(out)
        .env("COMPACTOR_TEST_KEY", KEY)
        .output()
        .unwrap()
}

fn all_output_text(o: &std::process::Output, out: &Path) -> String {
    let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&o.stderr));
    for e in walkdir::WalkDir::new(out).into_iter().flatten().filter(|e| e.file_type().is_file()) {
        s.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summaries_come_from_the_server_and_the_cache_serves_reruns() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer("## Goal\nMOCK-SUMMARY-FROM-SERVER")))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let o = tokio::task::block_in_place(|| run(&server, &out, &cache));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let requests = server.received_requests().await.unwrap();
    assert!(!requests.is_empty(), "no request reached the server");
    // The key went to the server, and nowhere else.
    assert!(requests.iter().all(|r| r.headers.get("authorization").is_some_and(|v| v.to_str().unwrap().contains(KEY))));
    assert!(!all_output_text(&o, &out).contains(KEY));
    let transcripts = all_output_text(&o, &out.join("transcripts"));
    assert!(transcripts.contains("MOCK-SUMMARY-FROM-SERVER"));
    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let spent: u64 = report.aggregates.iter().map(|a| a.summarizer_tokens).sum();
    assert!(spent >= 1050, "summarizer usage not counted: {spent}");
    assert!(report.diagnostics.summarizer_fallbacks.is_empty());

    // Same run again: every answer from the cache, identical outputs.
    let first = std::fs::read(out.join("report.json")).unwrap();
    let before = requests.len();
    let out2 = dir.path().join("out2");
    let o2 = tokio::task::block_in_place(|| run(&server, &out2, &cache));
    assert_eq!(o2.status.code(), Some(0));
    assert_eq!(server.received_requests().await.unwrap().len(), before, "the rerun made requests");
    assert_eq!(std::fs::read(out2.join("report.json")).unwrap(), first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_server_falls_back_to_extractive_and_the_run_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_string(format!("invalid key {KEY}")))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let o = tokio::task::block_in_place(|| run(&server, &out, &cache));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert!(!report.diagnostics.summarizer_fallbacks.is_empty(), "fallbacks not listed");
    // Every compaction attempt still got a summary (the extractive one).
    assert!(report.sessions.iter().all(|r| r.error.is_none()));
    // Even an error body that echoes the key does not leak it.
    assert!(!all_output_text(&o, &out).contains(KEY));
}
