//! Configuration of the LLM summarizer: which API, where, which model, how hard to
//! retry, how much to run at once, where to cache. Plain data with defaults; the
//! CLI maps its flags onto it (see `docs/llm.md`).

use std::path::PathBuf;
use std::time::Duration;

/// The two wire protocols compactor speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiKind {
    /// `POST {base}/v1/chat/completions` (OpenAI, Ollama, llama.cpp, vLLM, LM Studio,
    /// OpenRouter, …).
    OpenAi,
    /// `POST {base}/v1/messages` (Anthropic).
    Anthropic,
}

impl ApiKind {
    pub fn name(self) -> &'static str {
        match self {
            ApiKind::OpenAi => "openai",
            ApiKind::Anthropic => "anthropic",
        }
    }

    pub fn from_name(s: &str) -> Option<ApiKind> {
        match s.to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" | "chat-completions" => Some(ApiKind::OpenAi),
            "anthropic" | "messages" => Some(ApiKind::Anthropic),
            _ => None,
        }
    }

    /// Guess the protocol from a base URL: Anthropic's own host speaks Messages,
    /// everything else is assumed OpenAI-compatible (the common denominator of
    /// local servers and gateways).
    pub fn infer(base_url: &str) -> ApiKind {
        if host_of(base_url).is_some_and(|h| h.ends_with("anthropic.com")) {
            ApiKind::Anthropic
        } else {
            ApiKind::OpenAi
        }
    }

    /// The environment variable a provider's own SDK reads the key from.
    pub fn default_key_env(self) -> &'static str {
        match self {
            ApiKind::OpenAi => "OPENAI_API_KEY",
            ApiKind::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ApiKind::OpenAi => "https://api.openai.com/v1",
            ApiKind::Anthropic => "https://api.anthropic.com",
        }
    }

    /// A small, cheap, non-reasoning model (summaries are a background job; specs/004
    /// §AC-18 uses the cheaper model on purpose).
    pub fn default_model(self) -> &'static str {
        match self {
            ApiKind::OpenAi => "gpt-4.1-mini",
            ApiKind::Anthropic => "claude-haiku-4-5",
        }
    }
}

impl std::fmt::Display for ApiKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The lowercased host of a URL, without userinfo or port; `None` when there is none.
pub(crate) fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Which OpenAI field carries the output limit. OpenAI's reasoning models reject
/// `max_tokens`; most OpenAI-compatible local servers only know `max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    MaxTokens,
    MaxCompletionTokens,
}

/// Retries of one HTTP request. Retried: 429, 5xx (incl. Anthropic's 529) and
/// connection failures. Not retried: other 4xx, timeouts (a request that timed out
/// once times out again and would triple the wall time: OpenClaw #92043), malformed
/// answers, context overflow (that one is answered by chunking).
#[derive(Debug, Clone, PartialEq)]
pub struct RetryConfig {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff; doubles per retry, ±20 % jitter.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// A `Retry-After` longer than this is not waited for: the request fails at once
    /// and the compaction falls back (a quota reset in an hour is not worth blocking on).
    pub max_retry_after: Duration,
    /// After this many requests in a row failed because the server is unreachable,
    /// down, or refuses our key or model, stop sending for `breaker_cooldown`: every
    /// compaction meanwhile falls back at once instead of paying the retries
    /// (OpenClaw's compaction circuit breaker, compaction-anchors.md §(a)). 0 = off.
    pub breaker_threshold: u32,
    pub breaker_cooldown: Duration,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_retries: 3,
            initial_backoff: Duration::from_millis(1000),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            breaker_threshold: 5,
            breaker_cooldown: Duration::from_secs(60),
        }
    }
}

/// Multi-stage summarization constants. Defaults are OpenClaw's
/// (`src/agents/compaction-planning.ts`, compaction-anchors.md §(a) "Multi-stage /
/// chunked summarization").
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkConfig {
    /// Share of the summarizer window one chunk may fill (`BASE_CHUNK_RATIO`).
    pub base_chunk_ratio: f64,
    /// Lower bound of the adaptive ratio when messages are large (`MIN_CHUNK_RATIO`).
    pub min_chunk_ratio: f64,
    /// Estimate inflation for chars/4 inaccuracy (`SAFETY_MARGIN`).
    pub safety_margin: f64,
    /// Tokens reserved for prompt and instructions (`SUMMARIZATION_OVERHEAD_TOKENS`).
    pub overhead_tokens: u64,
    /// Parts the history is split into before merging (`DEFAULT_PARTS`).
    pub parts: usize,
    /// Fewer messages than this are never split into parts (`minMessagesForSplit`).
    pub min_messages_for_split: usize,
    /// A single message larger than this share of the window is left out of the
    /// summary with a note (OpenClaw's oversized-message fallback, 0.5).
    pub oversized_share: f64,
    /// When a chunk still overflows, the window estimate is halved and the chunked
    /// stage re-planned, at most this many times (our estimate is chars/4; code and
    /// CJK text can run 2× over it).
    pub max_halvings: u32,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig {
            base_chunk_ratio: 0.4,
            min_chunk_ratio: 0.15,
            safety_margin: 1.2,
            overhead_tokens: 4096,
            parts: 2,
            min_messages_for_split: 4,
            oversized_share: 0.5,
            max_halvings: 2,
        }
    }
}

/// Everything the LLM summarizer needs that does not change per compaction.
///
/// Flag mapping (DESIGN.md §8): `--llm-base-url` → `base_url`, `--llm-model` →
/// `model`, `--llm-api-key-env` → `api_key_env`, `--llm-concurrency` →
/// `concurrency`, `--cache-dir` → `cache_dir`, `--no-cache` → `cache_dir = None`.
///
/// `Debug` shows the base URL without `user:password@`.
#[derive(Clone, PartialEq)]
pub struct LlmConfig {
    pub api: ApiKind,
    /// E.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`,
    /// `https://api.anthropic.com`. The endpoint path is appended (see `http::endpoint`).
    pub base_url: String,
    pub model: String,
    /// Name of the environment variable that holds the key; never the key itself.
    /// `None`: no key is sent (local servers).
    pub api_key_env: Option<String>,
    /// When `api_key_env` was not given explicitly: a missing variable is not an
    /// error (a local server needs no key), it just sends no key.
    pub api_key_optional: bool,
    /// Output limit of one summarization call (specs/003 uses 4096).
    pub max_tokens: u32,
    /// `None` leaves the provider's default (reasoning models reject any other value).
    pub temperature: Option<f32>,
    pub max_tokens_field: MaxTokensField,
    /// Whole-request timeout (connect + send + wait + read).
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Requests in flight at once, across all sessions and jobs.
    pub concurrency: usize,
    /// Root of the on-disk cache (`<dir>/llm/…`); `None` disables it.
    pub cache_dir: Option<PathBuf>,
    pub retry: RetryConfig,
    /// The summarizer model's own context window in tokens: inputs larger than this
    /// are summarized in chunks.
    pub context_window: u64,
    pub chunking: ChunkConfig,
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("api", &self.api)
            .field("base_url", &super::http::display_url(&self.base_url))
            .field("model", &self.model)
            .field("api_key_env", &self.api_key_env)
            .field("api_key_optional", &self.api_key_optional)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("max_tokens_field", &self.max_tokens_field)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("concurrency", &self.concurrency)
            .field("cache_dir", &self.cache_dir)
            .field("retry", &self.retry)
            .field("context_window", &self.context_window)
            .field("chunking", &self.chunking)
            .finish()
    }
}

impl LlmConfig {
    /// Defaults for one API: its public base URL, a cheap model, its SDK's key
    /// variable (optional), the default cache directory.
    pub fn new(api: ApiKind) -> LlmConfig {
        LlmConfig {
            api,
            base_url: api.default_base_url().to_string(),
            model: api.default_model().to_string(),
            api_key_env: Some(api.default_key_env().to_string()),
            api_key_optional: true,
            max_tokens: 4096,
            temperature: Some(0.0),
            max_tokens_field: MaxTokensField::MaxTokens,
            timeout: Duration::from_secs(180),
            connect_timeout: Duration::from_secs(10),
            concurrency: 8,
            cache_dir: default_cache_dir(),
            retry: RetryConfig::default(),
            context_window: 128_000,
            chunking: ChunkConfig::default(),
        }
    }

    /// Apply the CLI flags. The API follows the base URL unless given. The key
    /// variable of the provider's SDK (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) is only
    /// used implicitly for the provider's own host: a key is never sent to a
    /// gateway or local server unless `--llm-api-key-env` names it. A custom base
    /// URL needs an explicit `--llm-model` (a default OpenAI model name would only
    /// earn a 404 from Ollama on every compaction).
    pub fn from_flags(flags: &LlmFlags) -> Result<LlmConfig, super::LlmError> {
        let api = flags.api.unwrap_or_else(|| flags.base_url.as_deref().map_or(ApiKind::OpenAi, ApiKind::infer));
        let mut c = LlmConfig::new(api);
        if let Some(u) = &flags.base_url {
            let own_host = host_of(u) == host_of(api.default_base_url());
            if !own_host {
                c.api_key_env = None;
                if flags.model.is_none() {
                    return Err(super::LlmError::Config(format!(
                        "--llm-model is required with --llm-base-url {}",
                        super::http::display_url(u)
                    )));
                }
            }
            c.base_url = u.clone();
        }
        if let Some(m) = &flags.model {
            c.model = m.clone();
        }
        if let Some(v) = &flags.api_key_env {
            c.api_key_env = Some(v.clone());
            c.api_key_optional = false;
        }
        if let Some(n) = flags.max_tokens {
            c.max_tokens = n.max(1);
        }
        if let Some(t) = flags.temperature {
            c.temperature = Some(t);
        }
        if let Some(n) = flags.concurrency {
            c.concurrency = n.max(1);
        }
        if let Some(d) = &flags.cache_dir {
            c.cache_dir = Some(d.clone());
        }
        if flags.no_cache {
            c.cache_dir = None;
        }
        if let Some(t) = flags.timeout {
            c.timeout = t;
            c.connect_timeout = c.connect_timeout.min(t);
        }
        if let Some(n) = flags.max_retries {
            c.retry.max_retries = n;
        }
        if let Some(b) = flags.initial_backoff {
            c.retry.initial_backoff = b;
            c.retry.max_backoff = c.retry.max_backoff.max(b);
        }
        Ok(c)
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig::new(ApiKind::OpenAi)
    }
}

/// The summarizer flags of DESIGN.md §8 as the CLI parsed them (all optional), so
/// the CLI does not need to know the defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LlmFlags {
    /// Not in DESIGN.md §8 yet: inferred from the base URL when absent.
    pub api: Option<ApiKind>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub concurrency: Option<usize>,
    pub cache_dir: Option<PathBuf>,
    pub no_cache: bool,
    /// Whole-request timeout (`--llm-timeout`).
    pub timeout: Option<Duration>,
    /// `--llm-retries`.
    pub max_retries: Option<u32>,
    /// `--llm-retry-backoff`: the first backoff.
    pub initial_backoff: Option<Duration>,
}

/// `$XDG_CACHE_HOME/compactor`, else `$HOME/.cache/compactor`, else none.
pub fn default_cache_dir() -> Option<PathBuf> {
    let from = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from);
    from("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .map(|p| p.join("compactor"))
        .or_else(|| from("HOME").map(|h| h.join(".cache").join("compactor")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infers_api_from_host() {
        assert_eq!(ApiKind::infer("https://api.anthropic.com"), ApiKind::Anthropic);
        assert_eq!(ApiKind::infer("https://api.anthropic.com/v1"), ApiKind::Anthropic);
        assert_eq!(ApiKind::infer("https://api.openai.com/v1"), ApiKind::OpenAi);
        assert_eq!(ApiKind::infer("http://127.0.0.1:11434/v1"), ApiKind::OpenAi);
        // A path mentioning anthropic does not make a gateway speak Messages.
        assert_eq!(ApiKind::infer("https://gw.example/anthropic.com/v1"), ApiKind::OpenAi);
    }

    #[test]
    fn host_parsing() {
        assert_eq!(host_of("http://u:p@LocalHost:8080/v1").as_deref(), Some("localhost"));
        assert_eq!(host_of("http://[::1]:8080/v1").as_deref(), Some("::1"));
        assert_eq!(host_of("127.0.0.1:80").as_deref(), Some("127.0.0.1"));
        assert_eq!(host_of("http:///x"), None);
    }

    #[test]
    fn keys_go_only_where_they_belong() {
        let openai = LlmConfig::from_flags(&LlmFlags::default()).unwrap();
        assert_eq!((openai.api, openai.api_key_env.as_deref()), (ApiKind::OpenAi, Some("OPENAI_API_KEY")));
        assert!(openai.api_key_optional);
        assert_eq!(openai.concurrency, 8);
        let local = LlmFlags {
            base_url: Some("http://127.0.0.1:11434/v1".into()),
            model: Some("qwen2.5:7b".into()),
            ..LlmFlags::default()
        };
        let c = LlmConfig::from_flags(&local).unwrap();
        assert_eq!((c.api, c.api_key_env), (ApiKind::OpenAi, None));
        let gateway = LlmFlags { api_key_env: Some("OPENROUTER_API_KEY".into()), ..local.clone() };
        assert_eq!(LlmConfig::from_flags(&gateway).unwrap().api_key_env.as_deref(), Some("OPENROUTER_API_KEY"));
        let no_model = LlmFlags { model: None, ..local };
        assert!(LlmConfig::from_flags(&no_model).unwrap_err().to_string().contains("--llm-model"));
    }

    #[test]
    fn flags_override_defaults() {
        let c = LlmConfig::from_flags(&LlmFlags {
            base_url: Some("https://api.anthropic.com".into()),
            api_key_env: Some("MY_KEY".into()),
            concurrency: Some(0),
            no_cache: true,
            ..LlmFlags::default()
        })
        .unwrap();
        assert_eq!(c.api, ApiKind::Anthropic);
        assert_eq!(c.model, "claude-haiku-4-5");
        assert_eq!(c.api_key_env.as_deref(), Some("MY_KEY"));
        assert!(!c.api_key_optional);
        assert_eq!(c.concurrency, 1);
        assert_eq!(c.cache_dir, None);
    }
}
