//! The `llm` summarizer (DESIGN.md §5): summaries of compacted history written by
//! a model behind an OpenAI-compatible `/v1/chat/completions` or an Anthropic
//! `/v1/messages` endpoint.
//!
//! Self-contained: it takes plain inputs ([`SummaryRequest`]: the messages to
//! compact, the previous summary, the split-turn prefix, the preset's prompt
//! options) and returns an [`Outcome`]: the summary, the summarizer's own token
//! usage (the compaction's cost), and every fallback taken.
//!
//! Per compaction the chain is **full → chunked → extractive**:
//! - *full*: one request when the input fits the summarizer's window;
//! - *chunked*: when it does not, or when the server answers with a context
//!   overflow, the input is split by token share, summarized in chunks and merged
//!   (`chunk.rs`, OpenClaw's constants);
//! - *extractive*: when a request fails for any other reason after its retries,
//!   the caller's fallback (the engine's extractive summarizer) writes the summary.
//!
//! Concurrency: one [`LlmSummarizer`] owns a small tokio runtime, one HTTP client
//! and one semaphore of `concurrency` permits shared by every request.
//! [`LlmSummarizer::summarize_blocking`] can be called from many (rayon) threads at
//! once; [`LlmSummarizer::summarize_batch`] runs many jobs from one thread. Either
//! way at most `concurrency` requests are in flight. The library never prints.

mod cache;
pub mod chunk;
pub mod config;
pub mod http;
pub mod prompt;
pub mod prompt_file;
mod run;

pub use run::Asked;

pub use config::{ApiKind, ChunkConfig, LlmConfig, LlmFlags, MaxTokensField, RetryConfig, default_cache_dir};
pub use prompt::{PROMPT_VERSION, PromptPreset, SerializeOptions};

use crate::model::{Message, Usage, UsageProvenance};
use secrecy::SecretString;
use std::sync::Arc;

/// One compaction to summarize. Borrowed, so the engine does not copy history.
#[derive(Debug, Clone)]
pub struct SummaryRequest<'a> {
    /// The messages being replaced by the summary (P), oldest first.
    pub messages: &'a [Message],
    /// The summary of an earlier compaction: the update prompt is used when present.
    pub previous_summary: Option<&'a str>,
    /// The prefix of a split turn (summarized on its own and appended under
    /// `**Turn Context (split turn):**`); empty when the cut fell on a turn boundary.
    pub turn_prefix: &'a [Message],
    pub options: SummaryOptions,
}

impl<'a> SummaryRequest<'a> {
    pub fn new(messages: &'a [Message]) -> SummaryRequest<'a> {
        SummaryRequest { messages, previous_summary: None, turn_prefix: &[], options: SummaryOptions::default() }
    }
}

/// Per-compaction prompt options, from the policy (`compact.summarizer` input limits).
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryOptions {
    pub prompt: PromptPreset,
    /// The team's own prompt files, used instead of `prompt`'s for the
    /// history (chunk merges and split-turn prefixes keep the built-in ones).
    pub files: Option<std::sync::Arc<prompt_file::PromptFiles>>,
    pub serialize: SerializeOptions,
    /// Overrides `LlmConfig::max_tokens` for this compaction.
    pub max_tokens: Option<u32>,
}

impl SummaryOptions {
    /// The preset's prompt with the serializer limits its document gives.
    pub fn for_preset(prompt: PromptPreset) -> SummaryOptions {
        SummaryOptions { prompt, files: None, serialize: prompt.serialize_defaults(), max_tokens: None }
    }
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions::for_preset(PromptPreset::Checkpoint)
    }
}

/// The stages of the fallback chain, in order of degradation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Full,
    Chunked,
    Extractive,
}

/// Which summary of a compaction a fallback concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    History,
    TurnPrefix,
}

/// Why a stage was left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The input was known to exceed the summarizer's window before sending.
    InputTooLarge,
    /// The server said the request was too long (status 413 or an overflow message).
    ContextOverflow,
    /// 429 after all retries (or a Retry-After too long to wait for).
    RateLimited,
    /// 5xx after all retries.
    ServerError,
    /// Another 4xx (bad key, bad model, bad request): not retried.
    ClientError,
    Timeout,
    /// Connection refused / DNS / TLS handshake, after all retries.
    Connect,
    /// The connection broke while sending or reading.
    Transport,
    /// A 2xx whose body is not the provider's response shape.
    Malformed,
    /// A 2xx with no summary text (empty, a refusal, or a tool call).
    EmptyAnswer,
    /// Not sent: the last requests failed because the server is unreachable, down,
    /// or refuses the key or model (circuit breaker open).
    CircuitOpen,
    /// A bug or a lost worker task; never expected.
    Internal,
}

/// One step down the fallback chain, for the report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fallback {
    pub part: Part,
    pub from: Stage,
    pub to: Stage,
    pub kind: FailureKind,
    /// Human-readable, bounded, free of the API key.
    pub reason: String,
}

/// The result of one compaction's summarization.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    pub summary: String,
    /// The most degraded stage that contributed to `summary`.
    pub stage: Stage,
    pub fallbacks: Vec<Fallback>,
    /// Tokens of every summarizer answer used or attempted to be used, summed (a
    /// cached answer counts its original usage, so reruns report the same cost).
    pub usage: Usage,
    /// Summarizer requests answered (from the network or the cache).
    pub llm_calls: u32,
    /// HTTP requests sent, retries included.
    pub http_requests: u32,
    /// Answers served from the on-disk cache.
    pub cache_hits: u32,
    /// Cache entries that could not be written (the run goes on).
    pub cache_write_errors: u32,
    pub prompt_version: String,
}

/// Construction errors. None of them carries the key.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("environment variable {0} (named by --llm-api-key-env) is not set or empty")]
    MissingApiKey(String),
    #[error("cannot start the summarizer runtime: {0}")]
    Runtime(String),
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
    #[error("invalid summarizer configuration: {0}")]
    Config(String),
}

/// The LLM summarizer: shared by every thread of a run.
pub struct LlmSummarizer {
    inner: Arc<run::Inner>,
    /// `Option` so `Drop` can shut it down without blocking (dropping a runtime
    /// inside another runtime's context would panic).
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for LlmSummarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSummarizer").field("inner", &self.inner).finish_non_exhaustive()
    }
}

impl Drop for LlmSummarizer {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl LlmSummarizer {
    /// Build from a config, reading the key from the environment variable it names.
    pub fn new(config: LlmConfig) -> Result<LlmSummarizer, LlmError> {
        LlmSummarizer::with_key_lookup(config, |name| std::env::var(name).ok())
    }

    /// Build with a custom environment lookup (tests; embedding).
    pub fn with_key_lookup(
        config: LlmConfig,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<LlmSummarizer, LlmError> {
        if config.model.trim().is_empty() {
            return Err(LlmError::Config("the model name is empty (--llm-model)".into()));
        }
        if config.base_url.trim().is_empty() {
            return Err(LlmError::Config("the base URL is empty (--llm-base-url)".into()));
        }
        let key = match &config.api_key_env {
            None => None,
            Some(var) => match lookup(var).filter(|v| !v.trim().is_empty()) {
                Some(v) => Some(SecretString::from(v.trim().to_string())),
                None if config.api_key_optional => None,
                None => return Err(LlmError::MissingApiKey(var.clone())),
            },
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("compactor-llm")
            .enable_all()
            .build()
            .map_err(|e| LlmError::Runtime(e.to_string()))?;
        let client = http::ApiClient::new(&config, key).map_err(LlmError::Client)?;
        let cache = config.cache_dir.as_deref().map(cache::Cache::new);
        Ok(LlmSummarizer { inner: Arc::new(run::Inner { config, client, cache }), runtime: Some(runtime) })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.inner.config
    }

    /// Summarize one compaction, blocking the calling thread until done. Safe to
    /// call from many threads at once; requests still share the global limit.
    /// `fallback` writes the summary when every LLM stage failed (it runs on the
    /// calling thread).
    pub fn summarize_blocking<F>(&self, req: &SummaryRequest<'_>, fallback: F) -> Outcome
    where
        F: Fn(&SummaryRequest<'_>) -> String,
    {
        let rx = self.spawn(self.inner.prepare(req));
        let result = wait(&rx);
        result.into_outcome(req, &fallback, self.provenance())
    }

    /// Summarize many independent compactions concurrently (at most `concurrency`
    /// requests in flight); outcomes are in the order of `reqs`.
    pub fn summarize_batch<F>(&self, reqs: &[SummaryRequest<'_>], fallback: F) -> Vec<Outcome>
    where
        F: Fn(&SummaryRequest<'_>) -> String + Sync,
    {
        use rayon::prelude::*;
        // Serializing transcripts is CPU work: spread it, then start every job.
        let jobs: Vec<run::Job> = reqs.par_iter().map(|r| self.inner.prepare(r)).collect();
        let receivers: Vec<_> = jobs.into_iter().map(|j| self.spawn(j)).collect();
        receivers
            .into_iter()
            .zip(reqs)
            .map(|(rx, req)| wait(&rx).into_outcome(req, &fallback, self.provenance()))
            .collect()
    }

    /// Ask one question (`system`, `user`), outside the summary chain, with
    /// the client's retries and cache; blocks the calling thread. Many threads
    /// may ask at once: at most `concurrency` requests are in flight.
    pub fn ask_blocking(&self, system: &str, user: &str, max_tokens: u32) -> Asked {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let inner = Arc::clone(&self.inner);
        let pair = prompt::PromptPair { system: system.to_string(), user: user.to_string() };
        if let Some(rt) = &self.runtime {
            rt.spawn(async move {
                let _ = tx.send(inner.ask(pair, max_tokens.max(1)).await);
            });
        }
        let provenance = self.provenance();
        let lost = || Asked {
            answer: Err("the request ended without an answer".into()),
            usage: Usage { uncached_input: 0, cache_read: 0, cache_write: 0, output: 0, reasoning: 0, provenance },
            cache_hit: false,
        };
        loop {
            match rx.recv_timeout(std::time::Duration::from_millis(100)) {
                Ok(a) => return a,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return lost(),
                Err(_) if crate::interrupt::requested() => return lost(),
                Err(_) => {}
            }
        }
    }

    fn provenance(&self) -> UsageProvenance {
        match self.inner.config.api {
            ApiKind::OpenAi => UsageProvenance::OpenAi,
            ApiKind::Anthropic => UsageProvenance::Anthropic,
        }
    }

    /// Run a job on the runtime; the answer comes back over a std channel so any
    /// thread can wait for it (even one inside some other tokio runtime).
    fn spawn(&self, job: run::Job) -> std::sync::mpsc::Receiver<run::RunResult> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let inner = Arc::clone(&self.inner);
        if let Some(rt) = &self.runtime {
            rt.spawn(async move {
                let _ = tx.send(inner.run(job).await);
            });
        }
        rx
    }
}

/// The answer of a job; given up on (as a lost job: the caller falls back) after
/// Ctrl-C, so an interrupted run does not wait out a slow server's timeout.
fn wait(rx: &std::sync::mpsc::Receiver<run::RunResult>) -> run::RunResult {
    use std::sync::mpsc::RecvTimeoutError;
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(r) => return r,
            Err(RecvTimeoutError::Disconnected) => return run::RunResult::lost(),
            Err(RecvTimeoutError::Timeout) if crate::interrupt::requested() => return run::RunResult::lost(),
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}
