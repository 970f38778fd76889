//! The LLM summarizer as the replay engine sees it: an adapter from the engine's
//! `Summarizer` trait to `compactor::llm::LlmSummarizer`, with the extractive
//! summarizer as the last stage of the fallback chain. Fallbacks are collected so
//! the run can list them with their reasons.

use super::args::LlmArgs;
use anyhow::Context;
use compactor::llm::{ApiKind, LlmConfig, LlmFlags, LlmSummarizer, PromptPreset, SummaryOptions};
use compactor::model::Message;
use compactor::policy::Policy;
use compactor::summarize::{
    Extractive, SummarizeError, Summarizer, SummarizerKind, SummarizerUsage, Summary, SummaryPart, SummaryRequest,
};
use std::sync::{Arc, Mutex};

pub struct LlmAdapter {
    inner: LlmSummarizer,
    options: SummaryOptions,
    /// `(first source line of the compacted messages, reason)` of every fallback.
    fallbacks: Mutex<Vec<String>>,
}

/// The LLM summarizer when a policy uses `compact.summarizer = "llm"`; `None`
/// otherwise. Fails early (before reading logs) on a bad configuration.
pub fn adapter(args: &LlmArgs, policies: &[Policy]) -> anyhow::Result<Option<Arc<LlmAdapter>>> {
    let Some(first) = policies.iter().find(|p| p.compact.summarizer == SummarizerKind::Llm) else {
        return Ok(None);
    };
    let api = match args.llm_api.as_deref() {
        None => None,
        Some("openai") => Some(ApiKind::OpenAi),
        Some("anthropic") => Some(ApiKind::Anthropic),
        Some(other) => anyhow::bail!("unknown --llm-api `{other}` (expected openai or anthropic)"),
    };
    let flags = LlmFlags {
        api,
        base_url: args.llm_base_url.clone(),
        model: args.llm_model.clone(),
        api_key_env: args.llm_api_key_env.clone(),
        concurrency: args.llm_concurrency,
        cache_dir: args.cache_dir.clone(),
        no_cache: args.no_cache,
    };
    let config = LlmConfig::from_flags(&flags).context("LLM summarizer")?;
    let inner = LlmSummarizer::new(config).context("LLM summarizer")?;
    // One prompt per run: the first LLM policy's document prompt (specs/001, 003,
    // 004 have their own), else the specs/000 checkpoint.
    let options = SummaryOptions::for_preset(PromptPreset::for_policy_preset(&first.name));
    Ok(Some(Arc::new(LlmAdapter { inner, options, fallbacks: Mutex::new(Vec::new()) })))
}

impl LlmAdapter {
    /// Requests the summarizer keeps in flight at most.
    pub fn concurrency(&self) -> usize {
        self.inner.config().concurrency
    }

    /// Every fallback so far, sorted (threads finish in any order).
    pub fn fallbacks(&self) -> Vec<String> {
        let mut v = self.fallbacks.lock().map(|v| v.clone()).unwrap_or_default();
        v.sort();
        v
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
                max_tokens: u32::try_from(req.max_tokens).ok().filter(|&t| t > 0).or(self.options.max_tokens),
                ..self.options
            },
        };
        let fallback = |_: &compactor::llm::SummaryRequest<'_>| -> String {
            Extractive.summarize(req).map(|s| s.text).unwrap_or_default()
        };
        let outcome = self.inner.summarize_blocking(&llm_req, fallback);
        if !outcome.fallbacks.is_empty() {
            let line = req.messages.first().map(|m| m.source_line).unwrap_or(0);
            if let Ok(mut v) = self.fallbacks.lock() {
                for f in &outcome.fallbacks {
                    v.push(format!(
                        "compaction at source line {line}: {:?} → {:?} ({:?}): {}",
                        f.from, f.to, f.kind, f.reason
                    ));
                }
            }
        }
        let file_ops = Extractive.summarize(req).map(|s| s.file_ops).unwrap_or_default();
        Ok(Summary {
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
