//! The LLM summarizer as the replay engine sees it: an adapter from the engine's
//! `Summarizer` trait to `compactor::llm::LlmSummarizer`, with the extractive
//! summarizer as the last stage of the fallback chain. Fallbacks are collected so
//! the run can list them with their reasons, count the summaries that fell
//! back to extractive, and say so at its end (`fallbacks::Fallbacks`).

use super::args::LlmArgs;
use anyhow::Context;
use compactor::llm::prompt_file::PromptFiles;
use compactor::llm::{ApiKind, LlmConfig, LlmFlags, LlmSummarizer, PromptPreset, Stage, SummaryOptions};
use compactor::model::Message;
use compactor::policy::Policy;
use compactor::report::LlmSummaries;
use compactor::summarize::{
    Extractive, SummarizeError, Summarizer, SummarizerKind, SummarizerUsage, Summary, SummaryPart, SummaryRequest,
};
use std::sync::{Arc, Mutex};

/// One policy's LLM summarizer: a client (shared by the policies with the same
/// endpoint settings) and the prompt of the policy's reference design.
pub struct LlmAdapter {
    inner: Arc<LlmSummarizer>,
    options: SummaryOptions,
    /// Shared by all the run's adapters.
    log: Arc<Mutex<FallbackLog>>,
}

/// What the run's summaries went through.
#[derive(Default)]
struct FallbackLog {
    /// `(first source line of the compacted messages, reason)` of every fallback.
    steps: Vec<String>,
    /// Summaries asked for, those the extractive summarizer wrote, and why the
    /// first of those fell back.
    counts: LlmSummaries,
}

/// The LLM summarizers of a run, one per policy with `compact.summarizer = "llm"`.
pub struct LlmAdapters {
    by_policy: Vec<(Policy, Arc<LlmAdapter>)>,
    clients: Vec<Arc<LlmSummarizer>>,
    log: Arc<Mutex<FallbackLog>>,
}

/// The policy's `[compact.llm]` settings under the command-line flags (a flag
/// given wins).
pub fn merged_flags(args: &LlmArgs, policy: &Policy) -> anyhow::Result<LlmFlags> {
    let l = &policy.compact.llm;
    let text = |flag: &Option<String>, key: &str| {
        flag.clone().or_else(|| Some(key.trim().to_string())).filter(|s| !s.is_empty())
    };
    let api = match text(&args.llm_api, &l.api).map(|s| s.to_ascii_lowercase()).as_deref() {
        None => None,
        Some("openai") => Some(ApiKind::OpenAi),
        Some("anthropic") => Some(ApiKind::Anthropic),
        Some(other) => anyhow::bail!("unknown --llm-api `{other}` (expected openai or anthropic)"),
    };
    Ok(LlmFlags {
        api,
        base_url: text(&args.llm_base_url, &l.base_url),
        model: text(&args.llm_model, &l.model),
        api_key_env: text(&args.llm_api_key_env, &l.api_key_env),
        max_tokens: args.llm_max_tokens.or_else(|| l.max_tokens.and_then(|t| u32::try_from(t).ok())),
        temperature: args.llm_temperature.or(l.temperature.map(|t| t as f32)),
        timeout: args.llm_timeout.or(l.timeout_secs.map(|t| t as f64)).map(std::time::Duration::from_secs_f64),
        concurrency: args.llm_concurrency,
        cache_dir: args.cache_dir.clone(),
        no_cache: args.no_cache,
        max_retries: args.llm_retries,
        initial_backoff: args.llm_retry_backoff.map(std::time::Duration::from_secs_f64),
    })
}

/// The LLM summarizers when some policy uses `compact.summarizer = "llm"`; `None`
/// otherwise. Fails early (before reading logs) on a bad configuration. Policies
/// with equal endpoint settings share one client (its cache, its
/// `--llm-concurrency` requests in flight); each keeps its own prompt: the one of
/// `compact.llm.prompt`, else of the preset it is named after (specs/001, 003,
/// 004 have their own), else the specs/000 checkpoint.
pub fn adapter(args: &LlmArgs, policies: &[Policy]) -> anyhow::Result<Option<Arc<LlmAdapters>>> {
    let log = Arc::new(Mutex::new(FallbackLog::default()));
    let mut clients: Vec<(LlmConfig, Arc<LlmSummarizer>)> = Vec::new();
    let mut by_policy = Vec::new();
    for p in policies.iter().filter(|p| p.compact.summarizer == SummarizerKind::Llm) {
        let what = || format!("LLM summarizer of policy `{}`", p.name);
        let config = LlmConfig::from_flags(&merged_flags(args, p).with_context(what)?).with_context(what)?;
        let inner = match clients.iter().find(|(c, _)| *c == config) {
            Some((_, s)) => s.clone(),
            None => {
                let s = Arc::new(LlmSummarizer::new(config.clone()).with_context(what)?);
                clients.push((config, s.clone()));
                s
            }
        };
        let prompt = PromptPreset::from_name(p.compact.llm.prompt.trim())
            .unwrap_or_else(|| PromptPreset::for_policy_preset(&p.name));
        let options =
            SummaryOptions { files: prompt_files(p).with_context(what)?, ..SummaryOptions::for_preset(prompt) };
        by_policy.push((p.clone(), Arc::new(LlmAdapter { inner, options, log: log.clone() })));
    }
    if by_policy.is_empty() {
        return Ok(None);
    }
    let clients = clients.into_iter().map(|(_, s)| s).collect();
    Ok(Some(Arc::new(LlmAdapters { by_policy, clients, log })))
}

/// The policy's own prompt files (`compact.llm.prompt_file`,
/// `update_prompt_file`), read and checked; `None` when it names none.
fn prompt_files(p: &Policy) -> anyhow::Result<Option<Arc<PromptFiles>>> {
    let l = &p.compact.llm;
    let (first, update) = (l.prompt_file.trim(), l.update_prompt_file.trim());
    if first.is_empty() {
        if !update.is_empty() {
            anyhow::bail!("compact.llm.update_prompt_file needs compact.llm.prompt_file too");
        }
        return Ok(None);
    }
    let update = (!update.is_empty()).then(|| std::path::Path::new(update));
    let files = PromptFiles::read(std::path::Path::new(first), update).map_err(anyhow::Error::msg)?;
    Ok(Some(Arc::new(files)))
}

/// The hash of each LLM policy's prompt files, as run settings a baseline
/// records: an edit to a prompt is a change `check` names.
pub fn prompt_identities(policies: &[Policy]) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for p in policies.iter().filter(|p| p.compact.summarizer == SummarizerKind::Llm) {
        if let Some(f) = prompt_files(p).with_context(|| format!("LLM summarizer of policy `{}`", p.name))? {
            out.push((format!("llm.prompt.{}", p.name), f.hash.clone()));
        }
    }
    Ok(out)
}

impl LlmAdapters {
    /// Requests the run keeps in flight at most (every client's limit).
    pub fn concurrency(&self) -> usize {
        self.clients.iter().map(|c| c.config().concurrency).sum()
    }

    /// Every fallback so far, sorted (threads finish in any order).
    pub fn fallbacks(&self) -> Vec<String> {
        let mut v = self.log.lock().map(|l| l.steps.clone()).unwrap_or_default();
        v.sort();
        v
    }

    /// The summaries asked for so far, and those that fell back to extractive.
    pub fn summaries(&self) -> LlmSummaries {
        self.log.lock().map(|l| l.counts.clone()).unwrap_or_default()
    }

    /// The summarizer of this policy (one of those the run was built with).
    pub fn for_policy(&self, policy: &Policy) -> Option<Arc<dyn Summarizer>> {
        self.by_policy.iter().find(|(p, _)| p == policy).map(|(_, a)| a.clone() as Arc<dyn Summarizer>)
    }
}

impl Summarizer for LlmAdapter {
    fn name(&self) -> &str {
        "llm"
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        let owned: Vec<Message> = req.messages.iter().map(|m| (*m).clone()).collect();
        let (messages, prefix): (&[Message], &[Message]) = match req.part {
            SummaryPart::History => (&owned, &[]),
            SummaryPart::TurnPrefix => (&[], &owned),
        };
        let llm_req = compactor::llm::SummaryRequest {
            messages,
            previous_summary: req.previous_summary,
            turn_prefix: prefix,
            options: SummaryOptions {
                // The engine's budget for this summary, within the configured
                // output limit (--llm-max-tokens / compact.llm.max_tokens).
                max_tokens: Some(match u32::try_from(req.max_tokens).unwrap_or(u32::MAX) {
                    0 => self.inner.config().max_tokens,
                    t => t.min(self.inner.config().max_tokens.max(1)),
                }),
                ..self.options.clone()
            },
        };
        let fallback = |_: &compactor::llm::SummaryRequest<'_>| -> String {
            Extractive.summarize(req).map(|s| s.text).unwrap_or_default()
        };
        let outcome = self.inner.summarize_blocking(&llm_req, fallback);
        // Nothing new to summarize (the previous summary stands) asks nothing.
        let asked = outcome.llm_calls > 0 || !outcome.fallbacks.is_empty() || outcome.stage == Stage::Extractive;
        if let Ok(mut log) = self.log.lock()
            && asked
        {
            log.counts.requested += 1;
            if outcome.stage == Stage::Extractive {
                log.counts.fell_back += 1;
                if log.counts.first_reason.is_none() {
                    // The step into extractive says why the LLM gave up.
                    let last = outcome.fallbacks.iter().rev().find(|f| f.to == Stage::Extractive);
                    let f = last.or(outcome.fallbacks.last());
                    log.counts.first_reason =
                        Some(f.map_or_else(|| "no reason recorded".to_string(), |f| f.reason.clone()));
                }
            }
            let line = req.messages.first().map(|m| m.source_line).unwrap_or(0);
            for f in &outcome.fallbacks {
                log.steps.push(format!(
                    "compaction at source line {line}: {:?} → {:?} ({:?}): {}",
                    f.from, f.to, f.kind, f.reason
                ));
            }
        }
        let file_ops = Extractive.summarize(req).map(|s| s.file_ops).unwrap_or_default();
        // The step into extractive says why the LLM gave up.
        let fallback = (outcome.stage == Stage::Extractive).then(|| {
            let last = outcome.fallbacks.iter().rev().find(|f| f.to == Stage::Extractive);
            let why = last.or(outcome.fallbacks.last()).map_or("no reason recorded", |f| f.reason.as_str());
            format!("the LLM summarizer failed: {why}")
        });
        Ok(Summary {
            fallback,
            text: outcome.summary,
            file_ops,
            usage: SummarizerUsage {
                input_tokens: outcome.usage.prompt_tokens(),
                output_tokens: outcome.usage.output,
                calls: u64::from(outcome.llm_calls),
            },
        })
    }
}
