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

/// Bodies of every request the server received, as JSON.
async fn bodies(server: &MockServer) -> Vec<serde_json::Value> {
    let requests = server.received_requests().await.unwrap();
    requests.iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect()
}

fn replay_with(server: &MockServer, out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_compactor"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures", "--set", "context_window=6000", "--quiet", "--no-cache"])
        .args(["--summarizer", "llm", "--llm-base-url"])
        .arg(format!("{}/v1", server.uri()))
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// A server that answers every request with a short summary.
async fn answering_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer("## Goal\nok")))
        .mount(&server)
        .await;
    server
}

const TURN_PREFIX: &str = "The transcript above is the PREFIX of one turn";
const DOTNET: &str = "Summarize the following conversation history between a user";
const CHECKPOINT: &str = "Follow the EXACT format";
const CHECKPOINT_UPDATE: &str = "You are updating a conversation summary";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_llm_policy_asks_with_its_own_prompt() {
    let server = answering_server().await;
    let dir = tempfile::tempdir().unwrap();
    // Two policies in one run: opal (the specs/000 checkpoint) and an opal whose
    // prompt is dotnet's (specs/003), told apart by the model each names.
    let write = |name: &str, extra: &str| {
        let path = dir.path().join(format!("{name}.toml"));
        std::fs::write(&path, format!("base = \"opal\"\nname = \"{name}\"\n[compact.llm]\n{extra}")).unwrap();
        path.to_str().unwrap().to_string()
    };
    let plain = write("opal-plain", "model = \"m\"\n");
    let dotnet = write("opal-dotnet", "prompt = \"dotnet\"\nmodel = \"m-dotnet\"\n");
    let out = dir.path().join("out");
    let o = tokio::task::block_in_place(|| replay_with(&server, &out, &["--policy", &plain, "--policy", &dotnet]));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let all = bodies(&server).await;
    let of = |model: &str| -> Vec<String> {
        all.iter().filter(|b| b["model"] == model).map(|b| b["messages"].to_string()).collect()
    };
    let (checkpoint, dotnet) = (of("m"), of("m-dotnet"));
    assert!(!checkpoint.is_empty() && !dotnet.is_empty(), "both policies compact");
    assert_eq!(checkpoint.len() + dotnet.len(), all.len());
    // Turn-prefix summaries (Opal splits turns) have their own instruction.
    assert!(checkpoint.iter().all(|t| {
        (t.contains(CHECKPOINT) || t.contains(CHECKPOINT_UPDATE) || t.contains(TURN_PREFIX)) && !t.contains(DOTNET)
    }));
    assert!(dotnet.iter().all(|t| (t.contains(DOTNET) || t.contains(TURN_PREFIX)) && !t.contains(CHECKPOINT)));
    assert!(dotnet.iter().any(|t| t.contains(DOTNET)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_llm_settings_apply_and_flags_win() {
    let server = answering_server().await;
    let dir = tempfile::tempdir().unwrap();
    let settings = [
        "--preset",
        "opal",
        "--set",
        "compact.llm.model=policy-model",
        "--set",
        "compact.llm.max_tokens=77",
        "--set",
        "compact.llm.temperature=0.5",
        "--set",
        "compact.llm.prompt=dotnet",
    ];
    let o = tokio::task::block_in_place(|| replay_with(&server, &dir.path().join("a"), &settings));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let first = bodies(&server).await;
    assert!(!first.is_empty());
    for b in &first {
        assert_eq!(b["model"], "policy-model");
        assert_eq!(b["max_tokens"], 77);
        assert_eq!(b["temperature"], 0.5);
        let text = b["messages"].to_string();
        assert!(text.contains(DOTNET) || text.contains(TURN_PREFIX), "not the dotnet prompt: {text}");
    }
    let mut with_flags = settings.to_vec();
    with_flags.extend(["--llm-model", "flag-model", "--llm-max-tokens", "55"]);
    let o = tokio::task::block_in_place(|| replay_with(&server, &dir.path().join("b"), &with_flags));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let all = bodies(&server).await;
    assert!(all.len() > first.len());
    for b in &all[first.len()..] {
        assert_eq!((b["model"].as_str(), b["max_tokens"].as_u64()), (Some("flag-model"), Some(55)));
    }
}

#[test]
fn bad_policy_llm_settings_are_usage_errors() {
    for (set, needle) in [
        ("compact.llm.api=grpc", "compact.llm.api"),
        ("compact.llm.prompt=haiku", "compact.llm.prompt"),
        ("compact.llm.temperature=7", "compact.llm.temperature"),
        ("compact.llm.timeout_secs=0", "compact.llm.timeout_secs"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_compactor"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["replay", "fixtures", "--preset", "opal", "--summarizer", "llm", "--quiet", "--set", set])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{set}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{set}: {err}");
    }
}
