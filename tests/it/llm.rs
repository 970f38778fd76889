//! The LLM summarizer against real HTTP servers on 127.0.0.1 (wiremock): request
//! bodies of both APIs, retries and Retry-After, every failure path down to the
//! caller's extractive fallback, chunking on overflow, the response cache,
//! concurrency, and that the API key never shows up anywhere. No test reaches the
//! internet.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test code: a panic is the failure report

use compactor::llm::{
    ApiKind, ChunkConfig, FailureKind, LlmConfig, LlmSummarizer, Outcome, Part, RetryConfig, Stage, SummaryOptions,
    SummaryRequest,
};
use compactor::model::{Block, Message, Origin, Role};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEY: &str = "sk-test-DO-NOT-LEAK-7f3a9c2e41b8";
const KEY_VAR: &str = "COMPACTOR_TEST_LLM_KEY";

/// The test's own runtime, only for driving wiremock (which serves from its own
/// thread); the summarizer has its own runtime.
fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

fn config(api: ApiKind, base_url: &str) -> LlmConfig {
    LlmConfig {
        api,
        base_url: base_url.to_string(),
        model: "test-model".into(),
        api_key_env: Some(KEY_VAR.into()),
        api_key_optional: false,
        max_tokens: 512,
        temperature: Some(0.0),
        max_tokens_field: compactor::llm::MaxTokensField::MaxTokens,
        timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(2),
        concurrency: 4,
        cache_dir: None,
        retry: RetryConfig {
            max_retries: 2,
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(50),
            max_retry_after: Duration::from_secs(5),
            ..RetryConfig::default()
        },
        context_window: 128_000,
        chunking: ChunkConfig::default(),
    }
}

fn summarizer(cfg: LlmConfig) -> LlmSummarizer {
    LlmSummarizer::with_key_lookup(cfg, |name| (name == KEY_VAR).then(|| KEY.to_string())).unwrap()
}

fn text(role: Role, origin: Origin, t: &str) -> Message {
    Message::new(role, origin, vec![Block::text(t)])
}

/// A small coding session: a request, a tool call and its result, an answer.
fn session() -> Vec<Message> {
    vec![
        text(Role::User, Origin::Human, "The build fails in src/parser.rs; fix it. Never change the public API."),
        Message::new(
            Role::Assistant,
            Origin::Model,
            vec![
                Block::text("Let me run the tests."),
                Block::ToolUse { id: "call_1".into(), name: "Bash".into(), input: json!({"command": "cargo test"}) },
            ],
        ),
        Message::new(
            Role::User,
            Origin::ToolResult,
            vec![Block::ToolResult {
                tool_use_id: "call_1".into(),
                content: vec![Block::text("error[E0308]: mismatched types\n --> src/parser.rs:42:9\nexit code 101")],
                is_error: Some(true),
            }],
        ),
        text(Role::Assistant, Origin::Model, "Line 42 returns a &str where a String is expected; fixing it."),
    ]
}

fn more_messages() -> Vec<Message> {
    vec![
        text(Role::User, Origin::Human, "Now add a test for the empty input."),
        text(Role::Assistant, Origin::Model, "Added tests/parser_empty.rs; all 12 tests pass."),
    ]
}

fn extractive(req: &SummaryRequest<'_>) -> String {
    format!("EXTRACTIVE({} messages)", req.messages.len())
}

fn openai_ok(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    }))
}

fn anthropic_ok(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "test-model",
        "content": [{"type": "text", "text": content}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 100, "output_tokens": 25, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    }))
}

fn bodies(rt: &tokio::runtime::Runtime, server: &MockServer) -> Vec<Value> {
    rt.block_on(server.received_requests()).unwrap_or_default().iter().map(|r| r.body_json().unwrap()).collect()
}

fn request_count(rt: &tokio::runtime::Runtime, server: &MockServer) -> usize {
    rt.block_on(server.received_requests()).map_or(0, |r| r.len())
}

// ---------------------------------------------------------------------------
// Request bodies
// ---------------------------------------------------------------------------

#[test]
fn openai_request_bodies_first_update_and_split_turn() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(openai_ok("## Goal\nFix the build"))
            .mount(&server),
    );
    let s = summarizer(config(ApiKind::OpenAi, &format!("{}/v1", server.uri())));
    let first_msgs = session();
    let first = s.summarize_blocking(&SummaryRequest::new(&first_msgs), extractive);
    assert_eq!(first.stage, Stage::Full, "{first:?}");
    assert_eq!(first.summary, "## Goal\nFix the build");
    assert_eq!((first.usage.uncached_input, first.usage.output), (120, 30));

    // Second compaction: the previous summary → the specs/000 UPDATE prompt.
    let second_msgs = more_messages();
    let second = SummaryRequest { previous_summary: Some(&first.summary), ..SummaryRequest::new(&second_msgs) };
    let out = s.summarize_blocking(&second, extractive);
    assert!(out.fallbacks.is_empty(), "{out:?}");

    let requests = rt.block_on(server.received_requests()).unwrap();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.url.path(), "/v1/chat/completions");
        assert_eq!(r.headers.get("authorization").unwrap().to_str().unwrap(), format!("Bearer {KEY}"));
        assert_eq!(r.headers.get("content-type").unwrap(), "application/json");
    }
    let b = bodies(&rt, &server);
    insta::assert_json_snapshot!("openai_first_compaction", b[0]);
    insta::assert_json_snapshot!("openai_update_compaction", b[1]);

    // A split turn: the history and the turn prefix are summarized separately.
    let prefix = more_messages();
    let split = SummaryRequest { turn_prefix: &prefix, ..SummaryRequest::new(&first_msgs) };
    let out = s.summarize_blocking(&split, extractive);
    assert_eq!(out.llm_calls, 2);
    assert!(out.summary.contains("\n\n---\n\n**Turn Context (split turn):**\n\n"), "{}", out.summary);
    let b = bodies(&rt, &server);
    let prefix_body = b[2..].iter().find(|v| v.to_string().contains("PREFIX of one turn")).unwrap();
    insta::assert_json_snapshot!("openai_turn_prefix", prefix_body);
}

#[test]
fn anthropic_request_bodies_first_and_update() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(anthropic_ok("## Goal\nFix the build"))
            .mount(&server),
    );
    // Base URL without /v1, as Anthropic documents it.
    let s = summarizer(config(ApiKind::Anthropic, &server.uri()));
    let first_msgs = session();
    let first = s.summarize_blocking(&SummaryRequest::new(&first_msgs), extractive);
    assert_eq!(first.stage, Stage::Full, "{first:?}");
    assert_eq!((first.usage.uncached_input, first.usage.output), (100, 25));
    let second_msgs = more_messages();
    let second = SummaryRequest { previous_summary: Some(&first.summary), ..SummaryRequest::new(&second_msgs) };
    s.summarize_blocking(&second, extractive);

    let requests = rt.block_on(server.received_requests()).unwrap();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.url.path(), "/v1/messages");
        assert_eq!(r.headers.get("x-api-key").unwrap().to_str().unwrap(), KEY);
        assert_eq!(r.headers.get("anthropic-version").unwrap(), "2023-06-01");
        assert!(r.headers.get("authorization").is_none());
    }
    let b = bodies(&rt, &server);
    insta::assert_json_snapshot!("anthropic_first_compaction", b[0]);
    insta::assert_json_snapshot!("anthropic_update_compaction", b[1]);
}

#[test]
fn each_preset_sends_its_own_prompt() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(Mock::given(method("POST")).respond_with(openai_ok("S")).mount(&server));
    let s = summarizer(config(ApiKind::OpenAi, &server.uri()));
    let msgs = session();
    for name in ["vibe", "dotnet", "spec008"] {
        let preset = compactor::llm::PromptPreset::for_policy_preset(name);
        let req = SummaryRequest { options: SummaryOptions::for_preset(preset), ..SummaryRequest::new(&msgs) };
        assert_eq!(s.summarize_blocking(&req, extractive).stage, Stage::Full);
    }
    let b = bodies(&rt, &server);
    let all = |v: &Value| format!("{}\n{}", v["messages"][0]["content"], v["messages"][1]["content"]);
    assert!(all(&b[0]).contains("User's Primary Goals and Intent"));
    assert!(all(&b[1]).contains("Format as a concise narrative summary."));
    assert!(all(&b[2]).contains("This summary will replace the conversation history."));
    for v in &b {
        assert!(all(v).contains("<conversation>") && all(v).contains("Do NOT continue the conversation"));
    }
}

// ---------------------------------------------------------------------------
// Retries and fallbacks
// ---------------------------------------------------------------------------

#[test]
fn rate_limit_with_retry_after_then_success() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(async {
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(429)
                    .insert_header("retry-after", "1")
                    .set_body_json(json!({"error": {"message": "Rate limit reached", "type": "rate_limit_error"}})),
            )
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST")).respond_with(openai_ok("after the wait")).mount(&server).await;
    });
    let s = summarizer(config(ApiKind::OpenAi, &server.uri()));
    let msgs = session();
    let t = Instant::now();
    let out = s.summarize_blocking(&SummaryRequest::new(&msgs), extractive);
    let waited = t.elapsed();
    assert_eq!(out.summary, "after the wait");
    assert_eq!(out.stage, Stage::Full);
    assert!(out.fallbacks.is_empty());
    assert_eq!(out.http_requests, 2);
    // The configured backoff is 10 ms: only Retry-After explains a 1 s wait.
    assert!(waited >= Duration::from_millis(950), "{waited:?}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
}

fn assert_fell_back(out: &Outcome, kind: FailureKind, requests: u32) {
    assert_eq!(out.stage, Stage::Extractive, "{out:?}");
    assert_eq!(out.summary, "EXTRACTIVE(4 messages)");
    assert_eq!(out.fallbacks.len(), 1, "{out:?}");
    let f = &out.fallbacks[0];
    assert_eq!((f.part, f.from, f.to, f.kind), (Part::History, Stage::Full, Stage::Extractive, kind), "{f:?}");
    assert!(!f.reason.is_empty());
    assert_eq!(out.http_requests, requests, "{out:?}");
    assert_eq!(out.llm_calls, 0);
}

#[test]
fn repeated_server_errors_fall_back_after_retries() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(500).set_body_string("upstream exploded"))
            .mount(&server),
    );
    let s = summarizer(config(ApiKind::OpenAi, &server.uri()));
    let msgs = session();
    let out = s.summarize_blocking(&SummaryRequest::new(&msgs), extractive);
    assert_fell_back(&out, FailureKind::ServerError, 3);
    assert_eq!(request_count(&rt, &server), 3, "1 attempt + 2 retries");
    assert!(out.fallbacks[0].reason.contains("HTTP 500: upstream exploded"), "{}", out.fallbacks[0].reason);
}

#[test]
fn timeout_falls_back_without_retrying() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(openai_ok("too late").set_delay(Duration::from_secs(3)))
            .mount(&server),
    );
    let mut cfg = config(ApiKind::OpenAi, &server.uri());
    cfg.timeout = Duration::from_millis(300);
    let s = summarizer(cfg);
    let msgs = session();
    let t = Instant::now();
    let out = s.summarize_blocking(&SummaryRequest::new(&msgs), extractive);
    assert_fell_back(&out, FailureKind::Timeout, 1);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

#[test]
fn malformed_body_falls_back() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_string("<html>gateway says hi</html>"))
            .mount(&server),
    );
    let s = summarizer(config(ApiKind::Anthropic, &server.uri()));
    let msgs = session();
    let out = s.summarize_blocking(&SummaryRequest::new(&msgs), extractive);
    assert_fell_back(&out, FailureKind::Malformed, 1);
}

#[test]
fn tool_call_instead_of_summary_falls_back() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "choices": [{"message": {"role": "assistant", "content": null,
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
                    "finish_reason": "tool_calls"}]
            })))
            .mount(&server),
    );
    let s = summarizer(config(ApiKind::OpenAi, &server.uri()));
    let msgs = session();
    let out = s.summarize_blocking(&SummaryRequest::new(&msgs), extractive);
    assert_fell_back(&out, FailureKind::EmptyAnswer, 1);
}

#[test]
fn refused_connection_falls_back() {
    // A port that was just free: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let s = summarizer(config(ApiKind::OpenAi, &format!("http://127.0.0.1:{port}/v1")));
    let msgs = session();
    let out = s.summarize_blocking(&SummaryRequest::new(&msgs), extractive);
    assert_fell_back(&out, FailureKind::Connect, 3);
    assert!(out.fallbacks[0].reason.contains(&format!("127.0.0.1:{port}")), "{}", out.fallbacks[0].reason);
}

#[test]
fn a_dead_server_opens_the_circuit_breaker() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut cfg = config(ApiKind::OpenAi, &format!("http://127.0.0.1:{port}/v1"));
    cfg.retry.breaker_threshold = 2;
    let s = summarizer(cfg);
    let msgs = session();
    let outs: Vec<Outcome> = (0..4).map(|_| s.summarize_blocking(&SummaryRequest::new(&msgs), extractive)).collect();
    assert_fell_back(&outs[0], FailureKind::Connect, 3);
    assert_fell_back(&outs[1], FailureKind::Connect, 3);
    // Open: the next compactions fall back at once, without a request.
    assert_fell_back(&outs[2], FailureKind::CircuitOpen, 0);
    assert_fell_back(&outs[3], FailureKind::CircuitOpen, 0);
    assert!(outs[3].fallbacks[0].reason.contains("the last 2 requests failed"), "{:?}", outs[3].fallbacks);
}

#[test]
fn other_client_errors_are_not_retried() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(404).set_body_json(
                json!({"error": {"message": "model 'test-model' not found", "type": "not_found_error"}}),
            ))
            .mount(&server),
    );
    let s = summarizer(config(ApiKind::OpenAi, &server.uri()));
    let msgs = session();
    let out = s.summarize_blocking(&SummaryRequest::new(&msgs), extractive);
    assert_fell_back(&out, FailureKind::ClientError, 1);
}

// ---------------------------------------------------------------------------
// Chunking
// ---------------------------------------------------------------------------

/// Answers like a model with a small window: a request body over `limit` bytes
/// gets Anthropic's overflow error; a merge request gets "MERGED", others "PART n".
struct SmallWindow {
    limit: usize,
    calls: AtomicUsize,
}

impl Respond for SmallWindow {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        if req.body.len() > self.limit {
            return ResponseTemplate::new(400).set_body_json(json!({"type": "error", "error": {
                "type": "invalid_request_error", "message": "prompt is too long: 9000 tokens > 2000 maximum"}}));
        }
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let body = String::from_utf8_lossy(&req.body);
        if body.contains("<partial-summaries>") {
            anthropic_ok("MERGED SUMMARY")
        } else {
            anthropic_ok(&format!("PART {n}"))
        }
    }
}

fn long_session(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
            let origin = if i % 2 == 0 { Origin::Human } else { Origin::Model };
            text(role, origin, &format!("message {i}: {}", "lorem ipsum dolor sit amet ".repeat(22)))
        })
        .collect()
}

fn small_chunks() -> ChunkConfig {
    ChunkConfig { overhead_tokens: 100, ..ChunkConfig::default() }
}

#[test]
fn context_overflow_leads_to_chunked_summary() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(SmallWindow { limit: 6000, calls: AtomicUsize::new(0) })
            .mount(&server),
    );
    let mut cfg = config(ApiKind::Anthropic, &server.uri());
    cfg.chunking = small_chunks();
    let s = summarizer(cfg);
    let msgs = long_session(12);
    let out = s.summarize_blocking(&SummaryRequest::new(&msgs), extractive);
    assert_eq!(out.stage, Stage::Chunked, "{out:?}");
    assert_eq!(out.summary, "MERGED SUMMARY");
    assert_eq!(out.fallbacks.len(), 1, "{out:?}");
    let f = &out.fallbacks[0];
    assert_eq!((f.from, f.to, f.kind), (Stage::Full, Stage::Chunked, FailureKind::ContextOverflow));
    assert!(f.reason.contains("prompt is too long"), "{}", f.reason);
    // The overflow was not retried: 1 failed request, then only chunk requests.
    let b = bodies(&rt, &server);
    let failed = b.iter().filter(|v| v.to_string().len() > 6000).count();
    assert_eq!(failed, 1);
    assert!(out.llm_calls >= 3, "two parts and a merge: {out:?}");
    let merge = b.iter().find(|v| v.to_string().contains("<partial-summaries>")).unwrap().to_string();
    assert!(merge.contains("[Chunk 1 — oldest messages]") && merge.contains("most recent messages]"), "{merge}");
    // Usage of every answered chunk is the compaction's cost.
    assert_eq!(out.usage.uncached_input, 100 * u64::from(out.llm_calls));
}

#[test]
fn input_larger_than_the_window_is_chunked_up_front() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(SmallWindow { limit: 1_000_000, calls: AtomicUsize::new(0) })
            .mount(&server),
    );
    let mut cfg = config(ApiKind::Anthropic, &server.uri());
    cfg.context_window = 2_000;
    cfg.max_tokens = 200;
    cfg.chunking = small_chunks();
    let s = summarizer(cfg);
    let msgs = long_session(12);
    let out = s.summarize_blocking(&SummaryRequest::new(&msgs), extractive);
    assert_eq!(out.stage, Stage::Chunked, "{out:?}");
    assert_eq!(out.fallbacks[0].kind, FailureKind::InputTooLarge);
    assert_eq!(out.summary, "MERGED SUMMARY");
    assert_eq!(out.http_requests, out.llm_calls, "no request was wasted on a full attempt");
}

#[test]
fn chunk_failure_ends_in_extractive_with_both_steps_recorded() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(async {
        // The first (full) request overflows; every chunk request then fails hard.
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(413).set_body_string("Request Entity Too Large"))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(401).set_body_string("nope"))
            .mount(&server)
            .await;
    });
    let mut cfg = config(ApiKind::OpenAi, &server.uri());
    cfg.chunking = small_chunks();
    let s = summarizer(cfg);
    let msgs = long_session(12);
    let out = s.summarize_blocking(&SummaryRequest::new(&msgs), |_: &SummaryRequest<'_>| "EX".to_string());
    assert_eq!(out.stage, Stage::Extractive);
    assert_eq!(out.summary, "EX");
    let steps: Vec<_> = out.fallbacks.iter().map(|f| (f.from, f.to, f.kind)).collect();
    assert_eq!(
        steps,
        vec![
            (Stage::Full, Stage::Chunked, FailureKind::ContextOverflow),
            (Stage::Chunked, Stage::Extractive, FailureKind::ClientError)
        ]
    );
}

// ---------------------------------------------------------------------------
// Cache
// ---------------------------------------------------------------------------

#[test]
fn second_identical_run_is_served_from_the_cache() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    rt.block_on(Mock::given(method("POST")).respond_with(openai_ok("cached summary")).mount(&server));
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(ApiKind::OpenAi, &server.uri());
    cfg.cache_dir = Some(dir.path().to_path_buf());
    let msgs = session();
    let prefix = more_messages();
    let req = SummaryRequest { turn_prefix: &prefix, ..SummaryRequest::new(&msgs) };

    let first = summarizer(cfg.clone()).summarize_blocking(&req, extractive);
    assert_eq!((first.http_requests, first.cache_hits), (2, 0));
    assert_eq!(request_count(&rt, &server), 2);

    // A new summarizer (a second run of the binary) with the same cache directory.
    let second = summarizer(cfg.clone()).summarize_blocking(&req, extractive);
    assert_eq!(request_count(&rt, &server), 2, "the second run made requests");
    assert_eq!((second.http_requests, second.cache_hits, second.llm_calls), (0, 2, 2));
    assert_eq!(second.summary, first.summary);
    assert_eq!(second.usage, first.usage, "cost is reported identically on a rerun");
    assert_eq!(second.stage, first.stage);

    // The key never reaches the cache files.
    for entry in walk(dir.path()) {
        assert!(!std::fs::read_to_string(&entry).unwrap().contains(KEY));
    }

    // --no-cache: requests again.
    cfg.cache_dir = None;
    let third = summarizer(cfg).summarize_blocking(&req, extractive);
    assert_eq!(third.http_requests, 2);
    assert_eq!(request_count(&rt, &server), 4);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

// ---------------------------------------------------------------------------
// Concurrency
// ---------------------------------------------------------------------------

const DELAY: Duration = Duration::from_millis(200);

fn delayed_server(rt: &tokio::runtime::Runtime) -> MockServer {
    let server = rt.block_on(MockServer::start());
    rt.block_on(Mock::given(method("POST")).respond_with(openai_ok("S").set_delay(DELAY)).mount(&server));
    server
}

/// 64 distinct one-message compactions.
fn jobs() -> Vec<Vec<Message>> {
    (0..64).map(|i| vec![text(Role::User, Origin::Human, &format!("job {i}"))]).collect()
}

/// Serial time per job, measured: 6 jobs one at a time.
fn serial_per_job(server: &MockServer) -> Duration {
    let mut cfg = config(ApiKind::OpenAi, &server.uri());
    cfg.concurrency = 1;
    let s = summarizer(cfg);
    let all = jobs();
    let reqs: Vec<_> = all[..6].iter().map(|m| SummaryRequest::new(m)).collect();
    let t = Instant::now();
    let outs = s.summarize_batch(&reqs, extractive);
    assert!(outs.iter().all(|o| o.stage == Stage::Full));
    t.elapsed() / 6
}

#[test]
fn batch_of_64_at_concurrency_16() {
    let rt = rt();
    let server = delayed_server(&rt);
    let per_job = serial_per_job(&server);
    let serial = per_job * 64;

    let mut cfg = config(ApiKind::OpenAi, &server.uri());
    cfg.concurrency = 16;
    let s = summarizer(cfg);
    let all = jobs();
    let reqs: Vec<_> = all.iter().map(|m| SummaryRequest::new(m)).collect();
    let t = Instant::now();
    let outs = s.summarize_batch(&reqs, extractive);
    let took = t.elapsed();
    assert_eq!(outs.len(), 64);
    assert!(outs.iter().all(|o| o.stage == Stage::Full && o.http_requests == 1));
    let ratio = took.as_secs_f64() / serial.as_secs_f64();
    println!(
        "batch: 64 jobs at concurrency 16 took {took:?}; serial {serial:?}; ratio {ratio:.3} (ideal 1/16 = 0.0625)"
    );
    assert!(ratio < 0.25, "ratio {ratio}");
    // The limit holds: 64 jobs through 16 slots need at least 4 rounds of 200 ms.
    assert!(took >= DELAY * 4 - Duration::from_millis(50), "{took:?}");
}

#[test]
fn blocking_calls_from_16_rayon_threads_share_the_limit() {
    use rayon::prelude::*;
    let rt = rt();
    let server = delayed_server(&rt);
    let per_job = serial_per_job(&server);
    let serial = per_job * 64;

    let mut cfg = config(ApiKind::OpenAi, &server.uri());
    cfg.concurrency = 16;
    let s = Arc::new(summarizer(cfg));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(32).build().unwrap();
    let all = jobs();
    let t = Instant::now();
    let outs: Vec<Outcome> =
        pool.install(|| all.par_iter().map(|m| s.summarize_blocking(&SummaryRequest::new(m), extractive)).collect());
    let took = t.elapsed();
    assert!(outs.iter().all(|o| o.stage == Stage::Full));
    let ratio = took.as_secs_f64() / serial.as_secs_f64();
    println!(
        "blocking: 64 jobs from 32 rayon threads, concurrency 16, took {took:?}; serial {serial:?}; ratio {ratio:.3}"
    );
    assert!(ratio < 0.25, "ratio {ratio}");
    // 32 callers, but never more than 16 requests at once.
    assert!(took >= DELAY * 4 - Duration::from_millis(50), "{took:?}");
}

// ---------------------------------------------------------------------------
// Secrets
// ---------------------------------------------------------------------------

#[test]
fn api_key_never_appears_in_errors_or_outcomes() {
    let rt = rt();
    let server = rt.block_on(MockServer::start());
    // Like OpenAI's 401, the server echoes the key it received.
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(401).set_body_json(json!({"error": {
                "message": format!("Incorrect API key provided: {KEY}. You can find your API key at …"),
                "type": "invalid_request_error", "code": "invalid_api_key"}})))
            .mount(&server),
    );
    let msgs = session();
    let mut texts = Vec::new();
    let mut check = |s: &LlmSummarizer| {
        let out = s.summarize_blocking(&SummaryRequest::new(&msgs), extractive);
        assert_eq!(out.stage, Stage::Extractive);
        texts.push(format!("{out:?}"));
        texts.push(serde_json::to_string(&out).unwrap());
        texts.push(format!("{s:?}"));
        texts.extend(out.fallbacks.iter().map(|f| f.reason.clone()));
    };
    for api in [ApiKind::OpenAi, ApiKind::Anthropic] {
        check(&summarizer(config(api, &server.uri())));
    }
    // The key as a URL password, against a closed port and a slow server.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    check(&summarizer(config(ApiKind::OpenAi, &format!("http://user:{KEY}@127.0.0.1:{port}/v1"))));
    let mut slow = config(ApiKind::OpenAi, &format!("http://user:{KEY}@{}", server.address()));
    slow.timeout = Duration::from_millis(1);
    check(&summarizer(slow));
    // Construction errors name the variable, not a value.
    let missing = LlmSummarizer::with_key_lookup(config(ApiKind::OpenAi, &server.uri()), |_| None).unwrap_err();
    texts.push(format!("{missing} {missing:?}"));
    assert!(texts.iter().any(|t| t.contains("[REDACTED]")), "the echoed key was scrubbed, not absent");
    for t in &texts {
        assert!(!t.contains(KEY), "key leaked in: {t}");
        assert!(!t.contains(&KEY[8..]), "part of the key leaked in: {t}");
    }
    // The key was really sent, so the test means something.
    let sent = rt.block_on(server.received_requests()).unwrap();
    assert!(sent.iter().any(|r| r.headers.get("authorization").is_some_and(|v| v.to_str().unwrap().contains(KEY))));
}
