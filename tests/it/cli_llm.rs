//! `compactor replay --summarizer llm` end to end against a real HTTP server on
//! 127.0.0.1 (wiremock): summaries come from the server, failures fall back to the
//! extractive summarizer and are listed in report.json, the run still exits 0,
//! and the API key never appears in any output. Also the soak: 1,000 sessions
//! against a server that fails in every way (429, 500, timeouts, garbage).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;
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
async fn a_failing_server_falls_back_to_extractive_and_the_reports_are_written() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_string(format!("invalid key {KEY}")))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let o = tokio::task::block_in_place(|| run(&server, &out, &cache));
    // Every summary fell back: the run says its numbers are the fallback's
    // (exit 2, cli_llm_fallbacks.rs), after writing its reports.
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
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
    // The policies' compactions ask for the configured limit; the agents' own
    // (recorded) ones for their summary's tokens within it.
    assert!(first.iter().any(|b| b["max_tokens"] == 77), "{first:?}");
    for b in &first {
        assert_eq!(b["model"], "policy-model");
        assert!(b["max_tokens"].as_u64().is_some_and(|t| (1..=77).contains(&t)), "{b}");
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
    let second = &all[first.len()..];
    assert!(second.iter().any(|b| b["max_tokens"] == 55), "{second:?}");
    for b in second {
        assert_eq!(b["model"], "flag-model");
        assert!(b["max_tokens"].as_u64().is_some_and(|t| (1..=55).contains(&t)), "{b}");
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

/// One answer per request, cycling through every way a server can fail, each
/// echoing the API key (in bodies, headers and even a "successful" summary).
struct EchoKey(std::sync::atomic::AtomicUsize);

impl wiremock::Respond for EchoKey {
    fn respond(&self, _: &wiremock::Request) -> ResponseTemplate {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let err = |status: u16| {
            ResponseTemplate::new(status)
                .set_body_json(serde_json::json!({"error": {"message": format!("bad key {KEY}")}}))
        };
        match n % 7 {
            0 => err(401),
            1 => err(500),
            2 => err(429).insert_header("retry-after", "0.01").insert_header("x-echo", KEY),
            3 => err(400),
            4 => ResponseTemplate::new(200).set_body_string(format!("<html>{KEY}</html>")),
            5 => ResponseTemplate::new(200).set_body_json(answer(&format!("## Goal\nthe key is {KEY}"))),
            _ => ResponseTemplate::new(200).set_body_json(answer("## Goal\nfine")).set_delay(Duration::from_secs(5)),
        }
    }
}

/// The API key never appears in stdout, stderr, any output file or the cache,
/// whatever the server answers (errors that quote it, a summary that repeats it,
/// timeouts), also with `-j 1` and without the cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_key_never_leaks_whatever_the_server_says() {
    let dir = tempfile::tempdir().unwrap();
    for (i, extra) in
        [&["--llm-timeout", "0.5"][..], &["--llm-timeout", "0.5", "--jobs", "1", "--no-cache"]].iter().enumerate()
    {
        // A fresh server per run: each run meets the whole cycle of answers from
        // its start, whatever number of requests the previous run made.
        let server = MockServer::start().await;
        Mock::given(method("POST")).respond_with(EchoKey(0.into())).mount(&server).await;
        let (out, cache) = (dir.path().join(format!("out{i}")), dir.path().join(format!("cache{i}")));
        let o = tokio::task::block_in_place(|| {
            Command::new(env!("CARGO_BIN_EXE_compactor"))
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .args(["replay", "fixtures", "--preset", "opal", "--preset", "codex", "--set", "context_window=6000"])
                .args(["--summarizer", "llm", "--llm-model", "m", "--llm-api-key-env", "COMPACTOR_TEST_KEY"])
                .args(["--llm-retries", "1", "--llm-retry-backoff", "0.01", "--json"])
                .args(*extra)
                .arg("--llm-base-url")
                .arg(format!("{}/v1", server.uri()))
                .arg("--cache-dir")
                .arg(&cache)
                .arg("--out")
                .arg(&out)
                .env("COMPACTOR_TEST_KEY", KEY)
                .output()
                .unwrap()
        });
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let mut all = all_output_text(&o, &out);
        for e in walkdir::WalkDir::new(&cache).into_iter().flatten().filter(|e| e.file_type().is_file()) {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
        }
        assert!(!all.contains(KEY), "the key leaked (run {i})");
        assert!(!all.contains(&KEY[8..]), "a piece of the key leaked (run {i})");
        let report: compactor::report::Report =
            serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        let fallbacks = report.diagnostics.summarizer_fallbacks.join("\n");
        for kind in ["ClientError", "Malformed", "Timeout"] {
            assert!(fallbacks.contains(kind), "run {i}: no {kind} fallback in:\n{fallbacks}");
        }
        let requests = server.received_requests().await.unwrap();
        assert!(requests.len() >= 7, "run {i}: every kind of answer was served: {}", requests.len());
    }
}

/// A seeded mix of answers for the soak: success, 429 with Retry-After, 500,
/// timeouts (a delay past `--llm-timeout`), and garbage 200 bodies.
struct Flaky {
    state: std::sync::Mutex<(u64, [u32; 6])>,
}

const SOAK_MARK: &str = "SOAK-SUMMARY-FROM-SERVER";

impl wiremock::Respond for Flaky {
    fn respond(&self, _: &wiremock::Request) -> ResponseTemplate {
        let mut s = self.state.lock().unwrap();
        // xorshift64: the mix is the same every run, whatever the arrival order.
        s.0 ^= s.0 << 13;
        s.0 ^= s.0 >> 7;
        s.0 ^= s.0 << 17;
        let pick = (s.0 % 100) as u32;
        let (kind, t) = match pick {
            0..40 => (0, ResponseTemplate::new(200).set_body_json(answer(&format!("## Goal\n{SOAK_MARK}")))),
            40..55 => (1, ResponseTemplate::new(429).insert_header("retry-after", "0.02").set_body_string("slow down")),
            55..70 => (2, ResponseTemplate::new(500).set_body_string("internal error")),
            70..80 => {
                (3, ResponseTemplate::new(200).set_body_json(answer("late")).set_delay(Duration::from_millis(1500)))
            }
            80..90 => (4, ResponseTemplate::new(200).set_body_string("{\"choices\": [{\"mess")),
            _ => (5, ResponseTemplate::new(200).set_body_string("<html>gateway</html>")),
        };
        s.1[kind] += 1;
        t
    }
}

/// Soak: 1,000 small sessions, each compacting exactly once, summarized through
/// a server that fails in every way a real one does. Every session completes,
/// every compaction happens (1,000), every fallback is listed, and the listed
/// fallbacks are exactly the compactions whose summary is not the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_a_thousand_sessions_against_a_flaky_server() {
    const SESSIONS: usize = 1000;
    let server = MockServer::start().await;
    let flaky = std::sync::Arc::new(Flaky { state: std::sync::Mutex::new((0x9E37_79B9_7F4A_7C15, [0; 6])) });
    struct Shared(std::sync::Arc<Flaky>);
    impl wiremock::Respond for Shared {
        fn respond(&self, r: &wiremock::Request) -> ResponseTemplate {
            self.0.respond(r)
        }
    }
    Mock::given(method("POST")).respond_with(Shared(flaky.clone())).mount(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    // Five turns of ~500 tokens: under the trigger below (2,000), the history
    // crosses it once, at the fourth call, and a summary of up to ~900 tokens
    // keeps it under for the fifth.
    for i in 0..SESSIONS {
        let mut s = String::new();
        for t in 0..5 {
            let text =
                format!("session {i} turn {t}: please refactor module m{t}.rs {}", "and keep tests green ".repeat(95));
            s.push_str(&serde_json::json!({"role": "user", "content": text}).to_string());
            s.push('\n');
            s.push_str(&serde_json::json!({"role": "assistant", "content": format!("done {i}.{t}")}).to_string());
            s.push('\n');
        }
        std::fs::write(input.join(format!("s{i:04}.jsonl")), s).unwrap();
    }
    let out = dir.path().join("out");
    let started = std::time::Instant::now();
    let o = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_compactor"))
            .args(["replay", "--preset", "vibe", "--estimator", "chars4", "--set", "compact.trigger_tokens=2000"])
            .args(["--set", "compact.min_gain_tokens=100", "--set", "compact.summary_max_tokens=300"])
            .args(["--summarizer", "llm", "--llm-model", "m", "--no-cache", "--quiet"])
            .args(["--llm-timeout", "0.5", "--llm-retries", "2", "--llm-retry-backoff", "0.01"])
            .args(["--llm-concurrency", "16"])
            .arg("--llm-base-url")
            .arg(format!("{}/v1", server.uri()))
            .arg(&input)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap()
    });
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let served = flaky.state.lock().unwrap().1;
    eprintln!("soak: {SESSIONS} sessions in {took:.1?}; served ok/429/500/timeout/torn/html = {served:?}");
    assert!(served.iter().all(|&n| n > 0), "every kind of answer was served: {served:?}");

    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report.run.sessions, SESSIONS);
    assert_eq!(report.sessions.len(), SESSIONS);
    assert!(report.sessions.iter().all(|r| r.error.is_none()), "a session failed");
    assert_eq!(report.aggregates[0].compactions, SESSIONS as u64, "one compaction per session");
    // Which compactions fell back: their summary is not the server's.
    let mut from_server = 0;
    let mut fell_back = 0;
    for e in std::fs::read_dir(out.join("transcripts/vibe")).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        let summary = text
            .lines()
            .find(|l| l.contains("\"compact_summary\""))
            .unwrap_or_else(|| panic!("a transcript without a summary"));
        if summary.contains(SOAK_MARK) {
            from_server += 1;
        } else {
            fell_back += 1;
        }
    }
    assert_eq!(from_server + fell_back, SESSIONS, "one transcript per session");
    let fallbacks = &report.diagnostics.summarizer_fallbacks;
    assert_eq!(fallbacks.len(), fell_back, "every fallback is listed, and only those");
    assert!(fell_back > 0 && from_server > 0, "{from_server} from the server, {fell_back} fell back");
    for kind in ["Timeout", "Malformed"] {
        assert!(fallbacks.iter().any(|f| f.contains(kind)), "no {kind} fallback");
    }
}

/// Replays the Claude 1.0.x fixture (one recorded compaction, no policy
/// compaction) with an LLM summarizer answering `summary`: its report.json
/// and the bodies the server received.
async fn recorded_with_llm(summary: &str) -> (serde_json::Value, Vec<serde_json::Value>, String) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer(summary)))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_compactor"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["replay", "fixtures/claude-code/compaction-v1.jsonl", "--quiet", "--no-cache"])
            .args(["--summarizer", "llm", "--llm-model", "test-model", "--llm-base-url"])
            .arg(format!("{}/v1", server.uri()))
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap()
    });
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let report = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    (report, bodies(&server).await, md)
}

fn recorded_row<'r>(report: &'r serde_json::Value, name: &str) -> &'r serde_json::Value {
    let rows = report["recorded"][0]["events"][0]["rows"].as_array().unwrap();
    rows.iter().find(|r| r["summarizer"] == name).unwrap_or_else(|| panic!("no {name} row in {rows:?}"))
}

/// With `--summarizer llm`, the run's LLM also summarizes what the agent's own
/// compaction dropped, within the recorded summary's tokens, and its answer is
/// scored next to the agent's summary at the same point.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_llm_summarizes_at_the_agents_own_compactions() {
    // Everything the agent needed after its compaction (see `compactor explain`).
    let full = "Edited src/auth/session.ts: refreshToken guards a missing session, s.expiresAt is in \
                milliseconds. Rule: never touch the database schema. Next: run `npm test`.";
    let (report, sent, md) = recorded_with_llm(full).await;
    assert_eq!(sent.len(), 1, "one request for the one recorded compaction: {sent:?}");
    let recorded = recorded_row(&report, "recorded");
    let llm = recorded_row(&report, "llm@budget");
    // Asked within the recorded summary's tokens, on what the agent dropped.
    assert_eq!(sent[0]["max_tokens"], recorded["summary_tokens"], "{}", sent[0]);
    assert!(sent[0].to_string().contains("expiresAt"), "{}", sent[0]);
    assert!(llm["summary_tokens"].as_u64().unwrap() > 0);
    let names: Vec<&str> = report["recorded"][0]["events"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["summarizer"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["recorded", "extractive@budget", "llm@budget", "truncate", "masking@budget", "oracle"]);
    assert!(md.contains("| llm@budget |"), "{md}");
    // The answer is what is scored: one that names nothing needed scores lower.
    let (empty, _, _) = recorded_with_llm("The user and the assistant talked.").await;
    let (hit, miss) = (llm["frr"].as_f64().unwrap(), recorded_row(&empty, "llm@budget")["frr"].as_f64().unwrap());
    assert!(hit > miss, "FRR of a full answer {hit} vs an empty one {miss}");
}
