//! HTTP clients for OpenAI-compatible `/v1/chat/completions` and Anthropic
//! `/v1/messages`: request bodies as the providers document them, response and
//! error parsing, retries with exponential backoff that honour `Retry-After`, and
//! the global in-flight limit.
//!
//! The API key lives in a [`SecretString`] and only ever reaches a header marked
//! sensitive. Errors are rebuilt from their causes instead of printing reqwest's
//! own messages (which carry the URL), and every message is scrubbed of the key
//! before it leaves this module, because some servers echo the key back in a 401.
//!
//! TLS: rustls with the `ring` provider, installed here before the first client is
//! built (reqwest's `rustls-no-provider` feature). reqwest 0.13's default provider,
//! aws-lc-rs, was the slowest crate of a cold build on this 2-core machine.

use super::FailureKind;
use super::config::{ApiKind, LlmConfig, MaxTokensField, RetryConfig};
use crate::model::{ApiErrorKind, Usage, UsageProvenance};
use crate::read::errors::classify;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// The full endpoint URL for a base URL. Accepts the base with or without `/v1`
/// and a URL that already names the endpoint.
pub fn endpoint(api: ApiKind, base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    let path = match api {
        ApiKind::OpenAi => "chat/completions",
        ApiKind::Anthropic => "messages",
    };
    if base.ends_with(&format!("/{path}")) {
        base.to_string()
    } else if base.ends_with("/v1") {
        format!("{base}/{path}")
    } else {
        format!("{base}/v1/{path}")
    }
}

/// The URL without `user:password@`, for messages and cache keys.
pub fn display_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let (authority, path) = rest.split_at(end);
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_string(),
    }
}

/// The request body of one summarization call, as the provider documents it.
pub fn request_body(
    api: ApiKind,
    model: &str,
    system: &str,
    user: &str,
    max_tokens: u32,
    temperature: Option<f32>,
    field: MaxTokensField,
) -> serde_json::Value {
    use serde_json::{Map, Value, json};
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    match api {
        ApiKind::OpenAi => {
            body.insert(
                "messages".into(),
                json!([
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ]),
            );
            let key = match field {
                MaxTokensField::MaxTokens => "max_tokens",
                MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            };
            body.insert(key.into(), json!(max_tokens));
            if let Some(t) = temperature {
                body.insert("temperature".into(), json!(t));
            }
            body.insert("stream".into(), json!(false));
        }
        ApiKind::Anthropic => {
            body.insert("max_tokens".into(), json!(max_tokens));
            body.insert("system".into(), json!(system));
            body.insert("messages".into(), json!([{"role": "user", "content": user}]));
            if let Some(t) = temperature {
                body.insert("temperature".into(), json!(t));
            }
        }
    }
    Value::Object(body)
}

/// A successful answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub text: String,
    pub usage: Usage,
    pub stop_reason: Option<String>,
}

/// Why one call failed. Messages are already scrubbed of the API key.
#[derive(Debug, Clone, PartialEq)]
pub struct CallError {
    pub kind: FailureKind,
    pub message: String,
    /// `Retry-After` of a 429/5xx, when the server sent one.
    pub retry_after: Option<Duration>,
    /// HTTP status, when there was an answer.
    pub status: Option<u16>,
}

impl CallError {
    pub fn new(kind: FailureKind, message: impl Into<String>) -> CallError {
        CallError { kind, message: message.into(), retry_after: None, status: None }
    }

    fn retryable(&self) -> bool {
        matches!(self.kind, FailureKind::RateLimited | FailureKind::ServerError | FailureKind::Connect)
    }

    /// Failures that say nothing about this request and everything about the
    /// server or our configuration: the next request would fail the same way.
    fn trips_breaker(&self) -> bool {
        match self.kind {
            FailureKind::Connect | FailureKind::ServerError => true,
            FailureKind::ClientError => matches!(self.status, Some(401 | 403 | 404)),
            _ => false,
        }
    }
}

/// Consecutive hard failures across all jobs, and until when requests are off.
#[derive(Debug, Default)]
struct BreakerState {
    consecutive: u32,
    open_until: Option<std::time::Instant>,
    last: Option<String>,
}

#[derive(Debug, Default)]
struct Breaker {
    state: std::sync::Mutex<BreakerState>,
}

impl Breaker {
    fn lock(&self) -> std::sync::MutexGuard<'_, BreakerState> {
        // A panic while holding this lock cannot leave the counters inconsistent.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `Err` while open. After the cooldown one request goes through as a probe.
    fn check(&self) -> Result<(), CallError> {
        let s = self.lock();
        match s.open_until {
            Some(until) if std::time::Instant::now() < until => Err(CallError::new(
                FailureKind::CircuitOpen,
                format!(
                    "not sent: the last {} requests failed ({})",
                    s.consecutive,
                    s.last.as_deref().unwrap_or("unknown error")
                ),
            )),
            _ => Ok(()),
        }
    }

    fn record(&self, result: Result<(), &CallError>, cfg: &RetryConfig) {
        let mut s = self.lock();
        match result {
            Ok(()) => *s = BreakerState::default(),
            Err(e) if e.trips_breaker() => {
                s.consecutive += 1;
                s.last = Some(crate::read::truncate_str(&e.message, 200).to_string());
                if cfg.breaker_threshold > 0 && s.consecutive >= cfg.breaker_threshold {
                    s.open_until = Some(std::time::Instant::now() + cfg.breaker_cooldown);
                }
            }
            Err(_) => {}
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Remove `<think>…</think>` that local reasoning models (Qwen, DeepSeek via
/// Ollama/llama.cpp) put before their answer.
pub fn strip_think(text: &str) -> &str {
    let t = text.trim_start();
    if let Some(rest) = t.strip_prefix("<think>")
        && let Some(end) = rest.find("</think>")
    {
        return rest[end + "</think>".len()..].trim();
    }
    text.trim()
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct OaResponse {
    choices: Vec<OaChoice>,
    usage: Option<OaUsage>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct OaChoice {
    message: OaMessage,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct OaMessage {
    /// A string, or (some gateways) an array of `{type: text, text}` parts.
    content: Option<serde_json::Value>,
    tool_calls: Option<serde_json::Value>,
    refusal: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct OaUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    prompt_tokens_details: Option<OaPromptDetails>,
    completion_tokens_details: Option<OaCompletionDetails>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct OaPromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct OaCompletionDetails {
    reasoning_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AnResponse {
    content: Vec<AnBlock>,
    stop_reason: Option<String>,
    usage: Option<AnUsage>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AnBlock {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AnUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

/// Parse a 2xx body into text + normalized usage (model.rs conventions: OpenAI
/// input includes cached tokens, Anthropic's excludes them).
pub fn parse_response(api: ApiKind, body: &str) -> Result<Completion, CallError> {
    let malformed = |e: serde_json::Error| {
        CallError::new(FailureKind::Malformed, format!("malformed {} response: {e}", api.name()))
    };
    match api {
        ApiKind::OpenAi => {
            let r: OaResponse = serde_json::from_str(body).map_err(malformed)?;
            let Some(choice) = r.choices.into_iter().next() else {
                return Err(CallError::new(FailureKind::Malformed, "openai response has no choices"));
            };
            let text = match choice.message.content {
                Some(serde_json::Value::String(s)) => s,
                Some(serde_json::Value::Array(parts)) => {
                    parts.iter().filter_map(|p| p.get("text").and_then(|t| t.as_str())).collect::<Vec<_>>().join("")
                }
                _ => String::new(),
            };
            let text = strip_think(&text).to_string();
            if text.is_empty() {
                let why = if choice.message.tool_calls.is_some() {
                    "the summarizer answered with a tool call instead of a summary".to_string()
                } else if let Some(r) = choice.message.refusal {
                    format!("the summarizer refused: {}", crate::read::truncate_str(&r, 300))
                } else {
                    format!("empty summary (finish_reason {:?})", choice.finish_reason.unwrap_or_default())
                };
                return Err(CallError::new(FailureKind::EmptyAnswer, why));
            }
            // Counts from a server are clamped like counts from a log: a broken
            // one can claim u64::MAX, and they are summed over a whole run.
            let clamp = crate::read::clamp_tokens;
            let u = r.usage.unwrap_or_default();
            let cached = u.prompt_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0).min(u.prompt_tokens);
            let usage = Usage {
                uncached_input: clamp(u.prompt_tokens - cached),
                cache_read: clamp(cached),
                cache_write: 0,
                output: clamp(u.completion_tokens),
                reasoning: clamp(u.completion_tokens_details.and_then(|d| d.reasoning_tokens).unwrap_or(0)),
                provenance: UsageProvenance::OpenAi,
            };
            Ok(Completion { text, usage, stop_reason: choice.finish_reason })
        }
        ApiKind::Anthropic => {
            let r: AnResponse = serde_json::from_str(body).map_err(malformed)?;
            let text: String =
                r.content.iter().filter(|b| b.kind == "text").filter_map(|b| b.text.as_deref()).collect();
            let text = strip_think(&text).to_string();
            if text.is_empty() {
                let why = if r.content.iter().any(|b| b.kind == "tool_use") {
                    "the summarizer answered with a tool call instead of a summary".to_string()
                } else {
                    format!("empty summary (stop_reason {:?})", r.stop_reason.unwrap_or_default())
                };
                return Err(CallError::new(FailureKind::EmptyAnswer, why));
            }
            let clamp = crate::read::clamp_tokens;
            let u = r.usage.unwrap_or_default();
            let usage = Usage {
                uncached_input: clamp(u.input_tokens),
                cache_read: clamp(u.cache_read_input_tokens.unwrap_or(0)),
                cache_write: clamp(u.cache_creation_input_tokens.unwrap_or(0)),
                output: clamp(u.output_tokens),
                reasoning: 0,
                provenance: UsageProvenance::Anthropic,
            };
            Ok(Completion { text, usage, stop_reason: r.stop_reason })
        }
    }
}

/// The human part of an error body: `error.message` (+ `error.code`/`error.type`)
/// for both providers, else the raw text, bounded.
fn error_message(body: &str) -> String {
    let v: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let err = v.as_ref().and_then(|v| v.get("error"));
    let field = |k: &str| err.and_then(|e| e.get(k)).and_then(|x| x.as_str()).unwrap_or_default();
    let msg = match err {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(_) => {
            let mut m = field("message").to_string();
            for extra in [field("code"), field("type")] {
                if !extra.is_empty() && !m.contains(extra) {
                    m = format!("{m} ({extra})");
                }
            }
            m
        }
        None => body.trim().to_string(),
    };
    crate::read::truncate_str(msg.trim(), 500).to_string()
}

/// Classify a non-2xx answer. Context overflow is recognized by status 413 or the
/// shared pattern list of `read::errors::classify` (compaction-anchors.md §(b)),
/// whatever the status: some servers send it as 400, 422 or even 500.
pub fn classify_status(status: u16, body: &str) -> CallError {
    let msg = error_message(body);
    let text = format!("HTTP {status}: {msg}");
    let kind = if status == 413 || classify(&msg) == ApiErrorKind::ContextOverflow {
        FailureKind::ContextOverflow
    } else if status == 429 {
        FailureKind::RateLimited
    } else if status >= 500 {
        FailureKind::ServerError
    } else {
        FailureKind::ClientError
    };
    CallError { status: Some(status), ..CallError::new(kind, text) }
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds. HTTP-date values are not
/// parsed: the exponential backoff applies then.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()).filter(|v| v.is_finite() && *v >= 0.0) {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    get("retry-after")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(Duration::from_secs_f64)
}

/// Backoff before retry `attempt` (0-based): `initial · 2^attempt`, capped, with
/// ±20 % jitter derived from `seed` so simultaneous jobs do not retry in lockstep.
pub fn backoff(cfg: &RetryConfig, attempt: u32, seed: &[u8]) -> Duration {
    let base = cfg.initial_backoff.saturating_mul(1u32 << attempt.min(16)).min(cfg.max_backoff);
    let mut h = blake3::Hasher::new();
    h.update(seed);
    h.update(&attempt.to_le_bytes());
    let b = h.finalize();
    let r = f64::from(u16::from_le_bytes([b.as_bytes()[0], b.as_bytes()[1]])) / f64::from(u16::MAX);
    base.mul_f64(0.8 + 0.4 * r)
}

/// Replace the key wherever it appears (servers echo it back in 401 bodies).
pub fn scrub(text: &str, key: Option<&SecretString>) -> String {
    match key.map(|k| k.expose_secret()) {
        Some(k) if k.len() >= 4 && text.contains(k) => text.replace(k, "[REDACTED]"),
        _ => text.to_string(),
    }
}

/// The innermost cause of a transport error, which names what went wrong
/// ("Connection refused (os error 111)") without the URL reqwest puts on top.
fn root_cause(e: &reqwest::Error) -> String {
    let mut cur: &dyn std::error::Error = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// One configured client: endpoint, key, retry policy, shared in-flight limit.
pub struct ApiClient {
    api: ApiKind,
    url: String,
    shown_url: String,
    key: Option<SecretString>,
    client: reqwest::Client,
    retry: RetryConfig,
    timeout: Duration,
    permits: Arc<Semaphore>,
    breaker: Breaker,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("api", &self.api)
            .field("url", &self.shown_url)
            .field("key", &self.key.as_ref().map(|_| "[REDACTED]"))
            .finish_non_exhaustive()
    }
}

impl ApiClient {
    pub fn new(config: &LlmConfig, key: Option<SecretString>) -> Result<ApiClient, String> {
        // Installing fails only when a provider is already installed: fine either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let url = endpoint(config.api, &config.base_url);
        let mut b = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            .pool_max_idle_per_host(config.concurrency.max(1))
            .user_agent(concat!("compactor/", env!("CARGO_PKG_VERSION")));
        // A local server is never reached through a proxy.
        if super::config::host_of(&url).is_some_and(|h| {
            h == "localhost" || h == "::1" || h.parse::<std::net::Ipv4Addr>().is_ok_and(|a| a.is_loopback())
        }) {
            b = b.no_proxy();
        }
        let client = b.build().map_err(|e| format!("cannot build the HTTP client: {}", root_cause(&e)))?;
        Ok(ApiClient {
            api: config.api,
            shown_url: display_url(&url),
            url,
            key,
            client,
            retry: config.retry.clone(),
            timeout: config.timeout,
            permits: Arc::new(Semaphore::new(config.concurrency.max(1))),
            breaker: Breaker::default(),
        })
    }

    pub fn shown_url(&self) -> &str {
        &self.shown_url
    }

    pub fn scrub(&self, text: &str) -> String {
        scrub(text, self.key.as_ref())
    }

    fn headers(&self) -> reqwest::header::HeaderMap {
        use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let secret = |v: String| {
            HeaderValue::from_str(&v).ok().map(|mut hv| {
                hv.set_sensitive(true);
                hv
            })
        };
        match self.api {
            ApiKind::OpenAi => {
                if let Some(v) = self.key.as_ref().and_then(|k| secret(format!("Bearer {}", k.expose_secret()))) {
                    h.insert(reqwest::header::AUTHORIZATION, v);
                }
            }
            ApiKind::Anthropic => {
                h.insert(HeaderName::from_static("anthropic-version"), HeaderValue::from_static("2023-06-01"));
                if let Some(v) = self.key.as_ref().and_then(|k| secret(k.expose_secret().to_string())) {
                    h.insert(HeaderName::from_static("x-api-key"), v);
                }
            }
        }
        h
    }

    /// One attempt, holding one in-flight permit for its duration.
    async fn attempt(&self, body: &str) -> Result<Completion, CallError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| CallError::new(FailureKind::Internal, "request limiter closed"))?;
        let sent = self.client.post(&self.url).headers(self.headers()).body(body.to_string()).send().await;
        let resp = sent.map_err(|e| self.transport_error(&e))?;
        let status = resp.status().as_u16();
        let after = retry_after(resp.headers());
        let text = resp.text().await.map_err(|e| self.transport_error(&e))?;
        if (200..300).contains(&status) {
            // A summary that repeats the key (a server echoing its input) must not
            // carry it into transcripts and the cache either.
            return parse_response(self.api, &text)
                .map(|c| Completion { text: self.scrub(&c.text), ..c })
                .map_err(|e| CallError { message: self.scrub(&e.message), ..e });
        }
        let mut e = classify_status(status, &text);
        e.message = self.scrub(&e.message);
        e.retry_after = after;
        Err(e)
    }

    fn transport_error(&self, e: &reqwest::Error) -> CallError {
        let (kind, msg) = if e.is_timeout() {
            (FailureKind::Timeout, format!("no answer from {} within {:?}", self.shown_url, self.timeout))
        } else if e.is_connect() {
            (FailureKind::Connect, format!("cannot connect to {}: {}", self.shown_url, root_cause(e)))
        } else {
            (FailureKind::Transport, format!("request to {} failed: {}", self.shown_url, root_cause(e)))
        };
        CallError::new(kind, self.scrub(&msg))
    }

    /// Send `body` with retries. `attempts` counts the HTTP requests made.
    pub async fn complete(&self, body: &str, attempts: &mut u32) -> Result<Completion, CallError> {
        self.breaker.check()?;
        let result = self.complete_with_retries(body, attempts).await;
        self.breaker.record(result.as_ref().map(|_| ()), &self.retry);
        result
    }

    async fn complete_with_retries(&self, body: &str, attempts: &mut u32) -> Result<Completion, CallError> {
        let mut retry = 0u32;
        loop {
            *attempts += 1;
            let err = match self.attempt(body).await {
                Ok(c) => return Ok(c),
                Err(e) => e,
            };
            if !err.retryable() || retry >= self.retry.max_retries {
                return Err(err);
            }
            let wait = match err.retry_after {
                Some(d) if d > self.retry.max_retry_after => {
                    return Err(CallError {
                        message: format!(
                            "{} (Retry-After {:?} is longer than the {:?} we wait)",
                            err.message, d, self.retry.max_retry_after
                        ),
                        ..err
                    });
                }
                Some(d) => d,
                // Seeded by the whole body: jobs differ in their transcripts, not their prefix.
                None => backoff(&self.retry, retry, body.as_bytes()),
            };
            tokio::time::sleep(wait).await;
            retry += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(
            endpoint(ApiKind::OpenAi, "https://api.openai.com/v1"),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(endpoint(ApiKind::OpenAi, "http://127.0.0.1:8080/"), "http://127.0.0.1:8080/v1/chat/completions");
        assert_eq!(endpoint(ApiKind::OpenAi, "http://h/v1/chat/completions"), "http://h/v1/chat/completions");
        assert_eq!(endpoint(ApiKind::Anthropic, "https://api.anthropic.com"), "https://api.anthropic.com/v1/messages");
        assert_eq!(
            endpoint(ApiKind::Anthropic, "https://api.anthropic.com/v1/"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(display_url("http://user:pw@h:1/v1?x"), "http://h:1/v1?x");
    }

    #[test]
    fn parses_openai_usage() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":"<think>hmm</think>\n## Goal\nX"},"finish_reason":"stop"}],
            "usage":{"prompt_tokens":100,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":40},
            "completion_tokens_details":{"reasoning_tokens":5}}}"#;
        let c = parse_response(ApiKind::OpenAi, body).unwrap();
        assert_eq!(c.text, "## Goal\nX");
        assert_eq!((c.usage.uncached_input, c.usage.cache_read, c.usage.output, c.usage.reasoning), (60, 40, 20, 5));
    }

    #[test]
    fn parses_anthropic_usage() {
        let body = r#"{"content":[{"type":"text","text":"S"}],"stop_reason":"end_turn",
            "usage":{"input_tokens":10,"output_tokens":3,"cache_read_input_tokens":7,"cache_creation_input_tokens":2}}"#;
        let c = parse_response(ApiKind::Anthropic, body).unwrap();
        assert_eq!(c.text, "S");
        assert_eq!(c.usage.prompt_tokens(), 19);
        assert_eq!(c.usage.output, 3);
    }

    #[test]
    fn tool_calls_and_empty_answers_fail() {
        let oa = r#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"x"}]},"finish_reason":"tool_calls"}]}"#;
        assert_eq!(parse_response(ApiKind::OpenAi, oa).unwrap_err().kind, FailureKind::EmptyAnswer);
        let an = r#"{"content":[{"type":"tool_use","id":"x","name":"bash","input":{}}],"stop_reason":"tool_use"}"#;
        assert_eq!(parse_response(ApiKind::Anthropic, an).unwrap_err().kind, FailureKind::EmptyAnswer);
        assert_eq!(parse_response(ApiKind::OpenAi, "not json").unwrap_err().kind, FailureKind::Malformed);
        assert_eq!(parse_response(ApiKind::OpenAi, r#"{"choices":[]}"#).unwrap_err().kind, FailureKind::Malformed);
    }

    #[test]
    fn classifies_statuses() {
        let over = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208423 tokens > 200000 maximum"}}"#;
        assert_eq!(classify_status(400, over).kind, FailureKind::ContextOverflow);
        let oa = r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#;
        assert_eq!(classify_status(400, oa).kind, FailureKind::ContextOverflow);
        assert_eq!(classify_status(413, "").kind, FailureKind::ContextOverflow);
        assert_eq!(classify_status(429, "slow down").kind, FailureKind::RateLimited);
        assert_eq!(
            classify_status(529, r#"{"error":{"type":"overloaded_error","message":"Overloaded"}}"#).kind,
            FailureKind::ServerError
        );
        let e = classify_status(401, r#"{"error":{"message":"Invalid key","type":"authentication_error"}}"#);
        assert_eq!(e.kind, FailureKind::ClientError);
        assert_eq!(e.message, "HTTP 401: Invalid key (authentication_error)");
    }

    #[test]
    fn retry_after_headers() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut d = reqwest::header::HeaderMap::new();
        d.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&d), None);
    }

    #[test]
    fn backoff_grows_with_jitter() {
        let cfg = RetryConfig::default();
        let b0 = backoff(&cfg, 0, b"x");
        let b3 = backoff(&cfg, 3, b"x");
        assert!(b0 >= Duration::from_millis(800) && b0 <= Duration::from_millis(1200), "{b0:?}");
        assert!(b3 >= Duration::from_millis(6400) && b3 <= Duration::from_millis(9600), "{b3:?}");
        assert!(backoff(&cfg, 30, b"x") <= cfg.max_backoff.mul_f64(1.2));
    }

    #[test]
    fn scrubs_key() {
        let k = SecretString::from("sk-live-abcdef");
        assert_eq!(scrub("bad key sk-live-abcdef!", Some(&k)), "bad key [REDACTED]!");
        assert_eq!(scrub("fine", Some(&k)), "fine");
    }
}
