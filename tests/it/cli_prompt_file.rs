//! A team gates a change to its own LLM prompt file (`compact.llm.prompt_file`)
//! with `compactor check`, against a model on a real loopback server that does
//! what the prompt says: a prompt change that drops identifiers fails the gate,
//! and the prompt's hash in the baseline names the change.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::Path;
use std::process::Output;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// A model that follows the prompt: it answers with the code words of the
/// conversation (paths, names, numbers, errors), or, when told to write
/// "without file names or code", with its plain lowercase words only.
struct Obedient;

fn plain_word(w: &str) -> bool {
    w.chars().all(|c| c.is_ascii_lowercase())
}

impl Respond for Obedient {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap_or_default();
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        let plain = user.contains("without file names or code");
        let conversation = user.split("<conversation>").nth(1).unwrap_or_default();
        // The newest 40 distinct words of the kind asked for.
        let mut words: Vec<&str> = Vec::new();
        for w in conversation.split(|c: char| c.is_whitespace() || "()[]{}\"'`,;<>".contains(c)).rev() {
            let w = w.trim_end_matches([':', '.']);
            if w.len() > 2 && plain_word(w) == plain && !words.contains(&w) && words.len() < 40 {
                words.push(w);
            }
        }
        let text = format!("## Summary\n{}", words.join("\n"));
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        }))
    }
}

fn check(server: &MockServer, policy: &Path, cache: &Path, extra: &[&str]) -> Output {
    let log = policy.parent().unwrap().join("edits.jsonl");
    std::process::Command::new(env!("CARGO_BIN_EXE_compactor"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("check")
        .arg(log)
        .args(["--quiet", "--set", "context_window=40000", "--llm-model", "test-model"])
        .arg("--policy")
        .arg(policy)
        .arg("--llm-base-url")
        .arg(format!("{}/v1", server.uri()))
        .arg("--cache-dir")
        .arg(cache)
        .args(extra)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_fails_a_prompt_change_that_drops_identifiers() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).and(path("/v1/chat/completions")).respond_with(Obedient).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let ci = dir.path().join("ci");
    std::fs::create_dir_all(&ci).unwrap();
    // The prompt file is read from the policy file's folder. (The mock model
    // cuts words out of tool-output previews, which can read as invented.)
    std::fs::write(
        ci.join("policy.toml"),
        "base = \"opal\"\nname = \"ours\"\n[compact]\nsummarizer = \"llm\"\n[compact.llm]\nprompt_file = \"prompt.md\"\n\
         [check]\nmax_hallucination = 10.0\n",
    )
    .unwrap();
    // A session that edits files: what a summary must name.
    let session = compactor::synth::generate_session(&compactor::synth::SessionSpec::turns(1, 6));
    std::fs::write(ci.join("edits.jsonl"), &session.data).unwrap();
    let prompt = ci.join("prompt.md");
    std::fs::write(&prompt, "Summarize. Keep every path and identifier exactly.\n\n{conversation}\n").unwrap();
    let (policy, cache, baseline) = (ci.join("policy.toml"), dir.path().join("cache"), dir.path().join("base.json"));
    let b = baseline.to_str().unwrap();

    let o = tokio::task::block_in_place(|| check(&server, &policy, &cache, &["--write-baseline", b]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let asked = server.received_requests().await.unwrap();
    assert!(!asked.is_empty(), "no summary was asked of the server");
    // (A split turn's prefix keeps the built-in prompt.)
    assert!(
        asked.iter().any(|r| String::from_utf8_lossy(&r.body).contains("Keep every path and identifier exactly")),
        "the prompt file was not sent"
    );
    let recorded: serde_json::Value = serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    let hash = recorded["settings"]["llm.prompt.ours"].as_str().unwrap().to_string();
    assert_eq!(hash.len(), 64, "{recorded}");

    // The same prompt passes, every answer from the cache.
    let before = asked.len();
    let o = tokio::task::block_in_place(|| check(&server, &policy, &cache, &["--baseline", b]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(server.received_requests().await.unwrap().len(), before, "a rerun asked the server again");

    // The pull request: a prompt that drops the identifiers.
    std::fs::write(&prompt, "Summarize in plain words, without file names or code.\n\n{conversation}\n").unwrap();
    // Compared as is, the changed prompt is named and nothing is measured.
    let o = tokio::task::block_in_place(|| check(&server, &policy, &cache, &["--baseline", b]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("llm.prompt.ours"), "{}", text(&o));
    // Measured against the old prompt's baseline, it fails the gate on FRR.
    let o =
        tokio::task::block_in_place(|| check(&server, &policy, &cache, &["--baseline", b, "--allow-param-changes"]));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("FRR drop"), "{}", text(&o));
    assert!(server.received_requests().await.unwrap().len() > before, "the new prompt was not asked");
}
