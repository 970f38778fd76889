//! The fallback chain of one compaction, on the summarizer's runtime:
//! full → chunked (→ chunked with smaller chunks) → extractive, for the history
//! and, concurrently, for the split-turn prefix. Every step down is recorded.
//!
//! Which failures lead where: a context overflow (or an input known in advance
//! not to fit) leads to chunking, because size is what chunking fixes; anything
//! else that survived the retries (server down, bad key, timeout, garbage) leads
//! straight to the caller's extractive fallback, because more requests would fail
//! the same way.

use super::cache::{Cache, Entry};
use super::chunk::{
    chunk_by_max, estimate_tokens, fits_single, max_chunk_tokens, oversized, oversized_note, split_by_share,
};
use super::config::LlmConfig;
use super::http::{ApiClient, CallError, request_body};
use super::prompt::{
    Item, NO_PRIOR_HISTORY, PROMPT_VERSION, PromptPair, PromptPreset, cap_items, join_items, join_turn_prefix,
    merge_prompt, serialize_messages, summary_prompt, turn_prefix_prompt,
};
use super::{FailureKind, Fallback, Outcome, Part, Stage, SummaryRequest};
use crate::model::{Usage, UsageProvenance};
use std::sync::Arc;

/// More chunks than this in one sequential pass means the window is far too small
/// for the input; the compaction falls back instead of sending hundreds of requests.
const MAX_CHUNKS: usize = 256;

/// The answer to one question ([`Inner::ask`]).
#[derive(Debug, Clone)]
pub struct Asked {
    pub answer: Result<String, String>,
    pub usage: Usage,
    pub cache_hit: bool,
}

/// Which prompts a job asks with.
#[derive(Debug, Clone)]
struct Prompting {
    preset: PromptPreset,
    /// The team's own prompt files (history only).
    files: Option<Arc<super::prompt_file::PromptFiles>>,
}

/// Everything shared by the jobs of one summarizer.
#[derive(Debug)]
pub struct Inner {
    pub config: LlmConfig,
    pub client: ApiClient,
    pub cache: Option<Cache>,
}

/// A compaction with its transcript already serialized (owned: it runs on the
/// runtime while the caller's borrow stays on the caller's side).
#[derive(Debug)]
pub struct Job {
    prompting: Prompting,
    history: Vec<Item>,
    prefix: Vec<Item>,
    previous: Option<String>,
    max_tokens: u32,
}

#[derive(Debug, Default, Clone, Copy)]
struct UsageSum {
    uncached_input: u64,
    cache_read: u64,
    cache_write: u64,
    output: u64,
    reasoning: u64,
}

impl UsageSum {
    fn add(&mut self, u: &Usage) {
        self.uncached_input = self.uncached_input.saturating_add(u.uncached_input);
        self.cache_read = self.cache_read.saturating_add(u.cache_read);
        self.cache_write = self.cache_write.saturating_add(u.cache_write);
        self.output = self.output.saturating_add(u.output);
        self.reasoning = self.reasoning.saturating_add(u.reasoning);
    }

    fn absorb(&mut self, o: UsageSum) {
        self.uncached_input = self.uncached_input.saturating_add(o.uncached_input);
        self.cache_read = self.cache_read.saturating_add(o.cache_read);
        self.cache_write = self.cache_write.saturating_add(o.cache_write);
        self.output = self.output.saturating_add(o.output);
        self.reasoning = self.reasoning.saturating_add(o.reasoning);
    }

    fn to_usage(self, provenance: UsageProvenance) -> Usage {
        Usage {
            uncached_input: self.uncached_input,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
            output: self.output,
            reasoning: self.reasoning,
            provenance,
        }
    }
}

/// What happened during one job (or one branch of it).
#[derive(Debug, Default)]
pub struct Trace {
    stage: Option<Stage>,
    fallbacks: Vec<Fallback>,
    usage: UsageSum,
    llm_calls: u32,
    http_requests: u32,
    cache_hits: u32,
    cache_write_errors: u32,
}

impl Trace {
    fn reach(&mut self, stage: Stage) {
        self.stage = Some(self.stage.map_or(stage, |s| s.max(stage)));
    }

    fn fallback(&mut self, part: Part, from: Stage, to: Stage, kind: FailureKind, reason: String) {
        self.reach(to);
        let reason = crate::read::truncate_str(&reason, 600).to_string();
        self.fallbacks.push(Fallback { part, from, to, kind, reason });
    }

    fn absorb(&mut self, o: Trace) {
        if let Some(s) = o.stage {
            self.reach(s);
        }
        self.fallbacks.extend(o.fallbacks);
        self.usage.absorb(o.usage);
        self.llm_calls += o.llm_calls;
        self.http_requests += o.http_requests;
        self.cache_hits += o.cache_hits;
        self.cache_write_errors += o.cache_write_errors;
    }
}

/// The answer of the runtime side: `summary` is `None` when the caller's
/// extractive fallback has to write it.
#[derive(Debug)]
pub struct RunResult {
    summary: Option<String>,
    trace: Trace,
}

impl RunResult {
    /// The worker task disappeared (a panic): fall back, and say so.
    pub fn lost() -> RunResult {
        let mut trace = Trace::default();
        trace.fallback(
            Part::History,
            Stage::Full,
            Stage::Extractive,
            FailureKind::Internal,
            "the summarizer task ended without an answer".into(),
        );
        RunResult { summary: None, trace }
    }

    pub fn into_outcome<F>(self, req: &SummaryRequest<'_>, fallback: &F, provenance: UsageProvenance) -> Outcome
    where
        F: Fn(&SummaryRequest<'_>) -> String,
    {
        let t = self.trace;
        let (summary, stage) = match self.summary {
            Some(s) => (s, t.stage.unwrap_or(Stage::Full)),
            None => (fallback(req), Stage::Extractive),
        };
        Outcome {
            summary,
            stage,
            fallbacks: t.fallbacks,
            usage: t.usage.to_usage(provenance),
            llm_calls: t.llm_calls,
            http_requests: t.http_requests,
            cache_hits: t.cache_hits,
            cache_write_errors: t.cache_write_errors,
            prompt_version: PROMPT_VERSION.to_string(),
        }
    }
}

fn err(kind: FailureKind, message: String) -> CallError {
    CallError::new(kind, message)
}

impl Inner {
    /// Serialize the request's transcripts (CPU work, on the caller's thread).
    pub fn prepare(&self, req: &SummaryRequest<'_>) -> Job {
        let o = &req.options;
        let ser = |m| cap_items(serialize_messages(m, &o.serialize), o.serialize.input_cap_chars);
        Job {
            prompting: Prompting { preset: o.prompt, files: o.files.clone() },
            history: ser(req.messages),
            prefix: ser(req.turn_prefix),
            previous: req.previous_summary.map(str::to_owned),
            max_tokens: o.max_tokens.unwrap_or(self.config.max_tokens).max(1),
        }
    }

    pub async fn run(self: Arc<Self>, job: Job) -> RunResult {
        let history = async {
            let mut t = Trace::default();
            let s = if job.history.is_empty() {
                // Nothing new: the previous summary stands (pi: "No prior history.").
                Some(job.previous.clone().unwrap_or_else(|| NO_PRIOR_HISTORY.to_string()))
            } else {
                self.summarize_part(Part::History, &job, &job.history, job.previous.as_deref(), &mut t).await
            };
            (s, t)
        };
        let prefix = async {
            let mut t = Trace::default();
            let s = if job.prefix.is_empty() {
                None
            } else {
                Some(self.summarize_part(Part::TurnPrefix, &job, &job.prefix, None, &mut t).await)
            };
            (s, t)
        };
        let ((h, mut trace), (p, tp)) = tokio::join!(history, prefix);
        trace.absorb(tp);
        let summary = match (h, p) {
            (Some(h), None) => Some(h),
            (Some(h), Some(Some(p))) => Some(join_turn_prefix(&h, &p)),
            _ => None,
        };
        if summary.is_some() {
            trace.reach(Stage::Full);
        }
        RunResult { summary, trace }
    }

    /// One question outside the summary chain (`compactor probe`): the answer,
    /// or why there is none, and what it cost (a cached answer counts its
    /// original usage).
    pub async fn ask(self: Arc<Self>, pair: PromptPair, max_tokens: u32) -> Asked {
        let mut t = Trace::default();
        // An empty answer is an answer: the model said nothing.
        let answer = match self.call(&pair, max_tokens, &mut t).await {
            Ok(a) => Ok(a),
            Err(e) if e.kind == FailureKind::EmptyAnswer => Ok(String::new()),
            Err(e) => Err(e.message),
        };
        let provenance = match self.config.api {
            super::ApiKind::OpenAi => UsageProvenance::OpenAi,
            super::ApiKind::Anthropic => UsageProvenance::Anthropic,
        };
        Asked { answer, usage: t.usage.to_usage(provenance), cache_hit: t.cache_hits > 0 }
    }

    /// One request, answered from the cache when possible.
    async fn call(&self, pair: &PromptPair, max_tokens: u32, trace: &mut Trace) -> Result<String, CallError> {
        let c = &self.config;
        let body =
            request_body(c.api, &c.model, &pair.system, &pair.user, max_tokens, c.temperature, c.max_tokens_field);
        let body = serde_json::to_string(&body).map_err(|e| err(FailureKind::Internal, e.to_string()))?;
        let key = self.cache.as_ref().map(|_| Cache::key(c.api, self.client.shown_url(), &c.model, &body));
        if let (Some(cache), Some(key)) = (&self.cache, &key)
            && let Some(hit) = cache.get(key)
        {
            trace.cache_hits += 1;
            trace.llm_calls += 1;
            trace.usage.add(&hit.usage);
            return Ok(hit.text);
        }
        let done = self.client.complete(&body, &mut trace.http_requests).await?;
        trace.llm_calls += 1;
        trace.usage.add(&done.usage);
        if let (Some(cache), Some(key)) = (&self.cache, &key) {
            let entry = Entry {
                text: done.text.clone(),
                usage: done.usage,
                stop_reason: done.stop_reason.clone(),
                model: c.model.clone(),
                prompt_version: PROMPT_VERSION.to_string(),
            };
            if cache.put(key, &entry).is_err() {
                trace.cache_write_errors += 1;
            }
        }
        Ok(done.text)
    }

    fn prompt_for(
        part: Part,
        prompting: &Prompting,
        max_tokens: u32,
        items: &[Item],
        running: Option<&str>,
    ) -> PromptPair {
        let transcript = join_items(items);
        match (part, &prompting.files) {
            (Part::History, Some(files)) => files.render(&transcript, running, max_tokens),
            (Part::History, None) => summary_prompt(prompting.preset, &transcript, running),
            (Part::TurnPrefix, _) => turn_prefix_prompt(&transcript, running),
        }
    }

    /// The chain for one part. `None`: every LLM stage failed (recorded in `trace`).
    async fn summarize_part(
        self: &Arc<Self>,
        part: Part,
        job: &Job,
        items: &[Item],
        previous: Option<&str>,
        trace: &mut Trace,
    ) -> Option<String> {
        let c = &self.config;
        let window = c.context_window.max(1);
        let pair = Self::prompt_for(part, &job.prompting, job.max_tokens, items, previous);
        let est = estimate_tokens(&pair.system) + estimate_tokens(&pair.user);
        // The window the chunks are planned for.
        let mut w = window;
        if fits_single(est, u64::from(job.max_tokens), window, &c.chunking) {
            match self.call(&pair, job.max_tokens, trace).await {
                Ok(text) => return Some(text),
                Err(e) if e.kind == FailureKind::ContextOverflow => {
                    // A request of ~`est` tokens did not fit, whatever the configured
                    // window says: plan the chunks for what was actually sent, or the
                    // first chunk would repeat the same request.
                    w = w.min(est.max(1));
                    trace.fallback(part, Stage::Full, Stage::Chunked, e.kind, e.message);
                }
                Err(e) => {
                    trace.fallback(part, Stage::Full, Stage::Extractive, e.kind, e.message);
                    return None;
                }
            }
        } else {
            let reason = format!(
                "input of ~{est} tokens (+{} output) does not fit the summarizer window of {window} tokens",
                job.max_tokens
            );
            trace.fallback(part, Stage::Full, Stage::Chunked, FailureKind::InputTooLarge, reason);
        }
        let mut halvings = 0;
        loop {
            match self.chunked(part, job, items, previous, w, trace).await {
                Ok(text) => return Some(text),
                Err(e) if e.kind == FailureKind::ContextOverflow && halvings < c.chunking.max_halvings => {
                    halvings += 1;
                    w = (w / 2).max(1);
                    let reason = format!("{}; re-planning chunks for a {w}-token window", e.message);
                    trace.fallback(part, Stage::Chunked, Stage::Chunked, e.kind, reason);
                }
                Err(e) => {
                    trace.fallback(part, Stage::Chunked, Stage::Extractive, e.kind, e.message);
                    return None;
                }
            }
        }
    }

    /// Multi-stage summarization planned for a `window`-token summarizer.
    async fn chunked(
        self: &Arc<Self>,
        part: Part,
        job: &Job,
        items: &[Item],
        previous: Option<&str>,
        window: u64,
        trace: &mut Trace,
    ) -> Result<String, CallError> {
        let cc = &self.config.chunking;
        let tokens: Vec<u64> = items.iter().map(|i| estimate_tokens(&i.text)).collect();
        let big = oversized(&tokens, window, cc);
        let mut notes = Vec::new();
        let mut small = Vec::new();
        let mut small_tokens = Vec::new();
        for ((item, &t), &is_big) in items.iter().zip(&tokens).zip(&big) {
            if is_big {
                notes.push(oversized_note(item.role, t));
            } else {
                small.push(item.clone());
                small_tokens.push(t);
            }
        }
        if small.is_empty() {
            let msg = format!("every message is larger than half of the {window}-token summarizer window");
            return Err(err(FailureKind::InputTooLarge, msg));
        }
        let max_chunk = max_chunk_tokens(&small_tokens, window, cc);
        let total: u64 = small_tokens.iter().sum();
        let ranges = split_by_share(&small_tokens, cc.parts);
        // Parts are for the history only: the turn prefix has its own format and is
        // rarely larger than one window.
        let split = part == Part::History
            && small.len() >= cc.min_messages_for_split.max(2)
            && total > max_chunk
            && ranges.len() > 1;
        let summary = if split {
            let mut set = tokio::task::JoinSet::new();
            for (i, r) in ranges.iter().enumerate() {
                let me = Arc::clone(self);
                let (its, toks) = (small[r.clone()].to_vec(), small_tokens[r.clone()].to_vec());
                let (prompting, max_tokens) = (job.prompting.clone(), job.max_tokens);
                set.spawn(async move {
                    let mut t = Trace::default();
                    let res = me.sequential(part, &prompting, max_tokens, &its, &toks, None, max_chunk, &mut t).await;
                    (i, res, t)
                });
            }
            let mut partials: Vec<Option<Result<String, CallError>>> = vec![None; ranges.len()];
            while let Some(joined) = set.join_next().await {
                match joined {
                    Ok((i, res, t)) => {
                        trace.absorb(t);
                        partials[i] = Some(res);
                    }
                    Err(e) => return Err(err(FailureKind::Internal, format!("chunk task failed: {e}"))),
                }
            }
            let mut texts = Vec::with_capacity(partials.len());
            for p in partials {
                match p {
                    Some(Ok(t)) => texts.push(t),
                    Some(Err(e)) => return Err(e),
                    None => return Err(err(FailureKind::Internal, "a chunk task gave no result".into())),
                }
            }
            let pair = merge_prompt(job.prompting.preset, &texts, previous);
            self.call(&pair, job.max_tokens, trace).await?
        } else {
            let p = &job.prompting;
            self.sequential(part, p, job.max_tokens, &small, &small_tokens, previous, max_chunk, trace).await?
        };
        if notes.is_empty() { Ok(summary) } else { Ok(format!("{summary}\n\n{}", notes.join("\n"))) }
    }

    /// Chunks of at most `max_chunk` tokens, oldest first, each folded into the
    /// running summary with the update prompt (OpenClaw's `summarizeChunks`).
    #[allow(clippy::too_many_arguments)]
    async fn sequential(
        &self,
        part: Part,
        prompting: &Prompting,
        max_tokens: u32,
        items: &[Item],
        tokens: &[u64],
        previous: Option<&str>,
        max_chunk: u64,
        trace: &mut Trace,
    ) -> Result<String, CallError> {
        let margin = self.config.chunking.safety_margin.max(1.0);
        let limit = ((max_chunk as f64 / margin) as u64).max(1);
        let chunks = chunk_by_max(tokens, limit);
        if chunks.len() > MAX_CHUNKS {
            let msg = format!("{} chunks of ≤{limit} tokens needed; the summarizer window is too small", chunks.len());
            return Err(err(FailureKind::InputTooLarge, msg));
        }
        let mut running = previous.map(str::to_owned);
        for r in chunks {
            let pair = Self::prompt_for(part, prompting, max_tokens, &items[r], running.as_deref());
            running = Some(self.call(&pair, max_tokens, trace).await?);
        }
        Ok(running.unwrap_or_default())
    }
}
