//! `compactor probe` against a real HTTP server on loopback: a model that
//! answers nothing scores 0, and a perfect reader (it answers a question when,
//! and only when, the atom asked for is in the context it was sent) scores
//! exactly the share of questions whose atom is in S ∪ T.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use compactor::quality::AtomKind;
use compactor::quality::probe::present;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn reply(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(serde_json::json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10}
    }))
}

/// Knows every question's possible atoms; answers with those its context holds.
struct PerfectReader {
    key: HashMap<String, Vec<(AtomKind, String)>>,
}

impl Respond for PerfectReader {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        let (context, questions) = user.split_once("\n\nQuestions:\n").unwrap();
        let mut answer = String::new();
        for line in questions.lines() {
            let Some((n, q)) = line.split_once(". ") else { continue };
            let found: Vec<&str> = self
                .key
                .get(q)
                .into_iter()
                .flatten()
                .filter(|(k, v)| present(*k, v, context))
                .map(|(_, v)| v.as_str())
                .collect();
            let said = if found.is_empty() { "unknown".to_string() } else { found.join(" | ") };
            answer.push_str(&format!("{n}. {said}\n"));
        }
        reply(&answer)
    }
}

fn probe(server: &MockServer, cache: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_compactor"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["probe", "fixtures", "--preset", "opal", "--set", "context_window=6000", "--quiet", "--json"])
        .args(["--llm-model", "reader", "--llm-retries", "0"])
        .arg("--llm-base-url")
        .arg(format!("{}/v1", server.uri()))
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap()
}

fn json(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn kind(name: &str) -> AtomKind {
    serde_json::from_value(Value::String(name.to_string())).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_perfect_reader_scores_the_share_in_context_and_a_silent_one_zero() {
    let dir = tempfile::tempdir().unwrap();
    let silent = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(reply("I cannot tell."))
        .mount(&silent)
        .await;
    let o = tokio::task::block_in_place(|| probe(&silent, &dir.path().join("c1")));
    let nothing = json(&o);
    let totals = nothing["totals"].as_array().unwrap();
    let candidates: Vec<&str> = totals.iter().map(|t| t["candidate"].as_str().unwrap()).collect();
    for c in ["opal", "extractive@opal", "masking@opal"] {
        assert!(candidates.contains(&c), "{candidates:?}");
    }
    assert!(totals.iter().all(|t| t["accuracy"].as_f64() == Some(0.0) && t["failed"] == 0), "{totals:?}");
    let asked: u64 = totals.iter().map(|t| t["probes"].as_u64().unwrap()).sum();
    assert!(asked > 0, "no question asked");
    // The question's atom never shows in the question.
    let compactions = nothing["compactions"].as_array().unwrap();
    let mut key: HashMap<String, Vec<(AtomKind, String)>> = HashMap::new();
    for p in compactions.iter().flat_map(|c| c["probes"].as_array().unwrap()) {
        let (q, v) = (p["question"].as_str().unwrap(), p["value"].as_str().unwrap());
        assert!(!q.to_lowercase().contains(&v.to_lowercase()) || v.len() < 4, "{q} gives away {v}");
        let atoms = key.entry(q.to_string()).or_default();
        let atom = (kind(p["kind"].as_str().unwrap()), v.to_string());
        if !atoms.contains(&atom) {
            atoms.push(atom);
        }
    }

    let reader = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(PerfectReader { key })
        .mount(&reader)
        .await;
    let o = tokio::task::block_in_place(|| probe(&reader, &dir.path().join("c2")));
    let perfect = json(&o);
    let mut some_right = false;
    for c in perfect["compactions"].as_array().unwrap() {
        assert_eq!(c["accuracy"], c["in_context"], "{c}");
        some_right |= c["accuracy"].as_f64().unwrap() > 0.0;
    }
    for t in perfect["totals"].as_array().unwrap() {
        assert_eq!(t["accuracy"], t["in_context"], "{t}");
    }
    assert!(some_right, "the reader never had an answer in its context: nothing was shown");
    let asked = reader.received_requests().await.unwrap().len();
    assert!(asked > 0);
    // Answers are cached: a rerun asks nothing and prints the same.
    let o = tokio::task::block_in_place(|| probe(&reader, &dir.path().join("c2")));
    assert_eq!(json(&o), perfect);
    assert_eq!(reader.received_requests().await.unwrap().len(), asked, "a rerun asked the model again");
}
