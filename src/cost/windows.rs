//! The context window of a session's model, for policies whose window is
//! `"auto"`: the log's own record first, else the model → window table below
//! (overridable in the prices file), else the agent's default model's, else
//! 200K, said in the report.
//!
//! Sources of the built-in windows (read 2026-11-27 through the documentation
//! index), as the input a request may hold:
//! - Anthropic: the context-windows page of the Claude documentation, as
//!   quoted in ccdeck's `src/web/context-window.ts` (secondary), lists the
//!   1M-token models (Fable 5.1, Mythos 5.1, Fable 5, Mythos 5, Opus 5, Opus
//!   4.8, 4.7 and 4.6, Sonnet 5, Sonnet 4.6) and gives every other Claude
//!   model, Sonnet 4.5 and Opus 4.5 included, 200K; Claude's support article
//!   on the API's window names Sonnet 4 and 4.5's 1M variant (a beta header),
//!   which a recorded prompt above 200K reveals ([`WindowSource::LongContext`]).
//! - OpenAI: the model pages give GPT-5-Codex (and GPT-5.2-Codex) 400,000
//!   tokens of context with 128,000 of output: 272,000 of input, the
//!   `model_context_window` Codex records. Codex keeps 272,000 for GPT-5.4 and
//!   5.5 too (openai/codex issue 37137). GPT-4.1 1,047,576: Vercel's AI
//!   Gateway model page (secondary). GPT-4o 128,000, o3 and o4-mini 200,000:
//!   the matrixcode-core crate's model table (secondary).
//! - OpenAI, later: GPT-5.4 to 5.6 take 1,050,000 tokens through the API, but
//!   pi caps them at 272,000 by default to stay under the API's long-prompt
//!   price tier, as Codex does; GPT-6 is taken to be capped the same way
//!   (pi's model catalog, `generate-models.ts`; models.dev's GPT-6 pages give
//!   the API's 1,050,000).
//! - Google: Gemini 2.5 Pro and Flash, 1,048,576: the koda-core crate's model
//!   table (secondary). Gemini 2.0 Flash and every Gemini 3 model (3 Pro, 3
//!   Flash, 3.1 Pro and Flash-Lite, 3.5 to 3.8 Flash) and 4, 1,048,576: their
//!   model pages in Google's Gemini API and Vertex AI documentation (read
//!   2026-12-01).
//! - Other vendors (read 2026-12-01): DeepSeek V3.2 128K, and V4 Pro and V4.1
//!   Flash 1M, taken as 1,000,000 (its pricing page, read 2026-12-02), as for
//!   `deepseek-chat` and `deepseek-reasoner` used from 2026-04-24 on, when they
//!   served V4 Flash (sources in `prices.rs`); the two names had V3.1's and
//!   V3.2's 128K from V3.1's launch on 2025-08-21, and V3's and R1's 64K
//!   before (the 2025 pricing page; techgethub's report of the night
//!   discount, secondary);
//!   GLM-4.5 128K, GLM-4.6 and 4.7 200K (Z.ai's model pages); Kimi K2 256K
//!   (262,144 in Moonshot's model list), its first release (0711) 128K, K3
//!   1,048,576 (secondary: models.dev); Grok Code Fast 1 and Grok 4 256,000,
//!   Grok 4.20 1,000,000, Grok 4.7 and 4.6 500,000 (xAI's model pages), Grok
//!   4.5 500,000 and 4.3 1,000,000 (secondary: APIYI's model pages), Grok 4 Fast
//!   and 4.1 Fast 2,000,000 (secondary); MiniMax-M2 204,800 (secondary). A
//!   vendor's "128K" is taken as 128,000 where it gives no exact figure.

use super::prices::{fragment_in, normalize_model};
use crate::model::{ResolvedWindow, Session, WindowSource};
use std::collections::BTreeMap;

/// The window assumed when nothing is known.
pub const DEFAULT_WINDOW: u64 = crate::replay::DEFAULT_WINDOW;
/// A Claude model's long-context variant.
pub const LONG_CONTEXT_WINDOW: u64 = 1_000_000;

/// Model-name fragments and their windows.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WindowTable {
    /// (normalized fragment, window, from the prices file).
    entries: Vec<(String, u64, bool)>,
    /// A built-in fragment's window from a date on (ms since the Unix epoch,
    /// UTC), for a name served by a new model: (fragment, from, window).
    #[serde(default)]
    since: Vec<(String, i64, u64)>,
}

impl Default for WindowTable {
    fn default() -> WindowTable {
        WindowTable::builtin()
    }
}

impl WindowTable {
    pub fn builtin() -> WindowTable {
        const M1: u64 = LONG_CONTEXT_WINDOW;
        const K200: u64 = DEFAULT_WINDOW;
        let rows: &[(&str, u64)] = &[
            ("claude-fable-5", M1),
            ("claude-mythos-5", M1),
            ("claude-opus-5", M1),
            ("claude-opus-4-8", M1),
            ("claude-opus-4-7", M1),
            ("claude-opus-4-6", M1),
            ("claude-sonnet-5", M1),
            ("claude-sonnet-4-6", M1),
            ("claude-haiku-5-5", M1),
            ("claude-opus-4-5", K200),
            ("claude-opus-4", K200),
            ("claude-sonnet-4-5", K200),
            ("claude-sonnet-4", K200),
            ("claude-haiku-4", K200),
            ("claude-3", K200),
            ("gpt-5", 272_000),
            ("gpt-5-codex", 272_000),
            ("gpt-5-mini", 272_000),
            ("gpt-5-nano", 272_000),
            ("codex-mini", K200),
            ("gpt-4-1", 1_047_576),
            ("gpt-4o", 128_000),
            ("o3", K200),
            ("o4-mini", K200),
            ("gpt-6", 272_000),
            ("gemini-2-0", 1_048_576),
            ("gemini-2-5", 1_048_576),
            ("gemini-3", 1_048_576),
            ("gemini-4", 1_048_576),
            ("deepseek-chat", 64_000),
            ("deepseek-reasoner", 64_000),
            ("deepseek-v3-2", 128_000),
            ("deepseek-flash", 1_000_000),
            ("deepseek-v4", 1_000_000),
            ("glm-4-5", 128_000),
            ("glm-4-6", K200),
            ("glm-4-7", K200),
            ("kimi-k2", 262_144),
            ("kimi-k2-0711", 131_072),
            ("kimi-k3", 1_048_576),
            ("grok-code-fast", 256_000),
            ("grok-4", 256_000),
            ("grok-4-fast", 2_000_000),
            ("grok-4-1-fast", 2_000_000),
            ("grok-4-20", 1_000_000),
            ("grok-4-7", 500_000),
            ("grok-4-6", 500_000),
            ("grok-4-5", 500_000),
            ("grok-4-3", 1_000_000),
            ("minimax-m2", 204_800),
        ];
        // deepseek-chat and deepseek-reasoner served V3 and R1 (64K), V3.1
        // and V3.2 (128K) from V3.1's launch, and V4 Flash from V4's.
        let date = |d: &str| crate::read::time::parse_day_or_iso(d).unwrap_or(i64::MAX);
        let since = ["deepseek-chat", "deepseek-reasoner"]
            .iter()
            .flat_map(|f| {
                [(normalize_model(f), date("2025-08-21"), 128_000), (normalize_model(f), date("2026-04-24"), 1_000_000)]
            })
            .collect();
        WindowTable { entries: rows.iter().map(|(f, w)| (normalize_model(f), *w, false)).collect(), since }
    }

    /// The built-in table with the prices file's `[windows]` (fragment → tokens)
    /// applied: they win over the built-in fragments.
    pub fn with_overrides(mut self, file: &BTreeMap<String, u64>) -> Result<WindowTable, String> {
        for (fragment, &tokens) in file {
            let norm = normalize_model(fragment);
            if norm.is_empty() || tokens == 0 {
                return Err(format!("windows: `{fragment}` needs a name fragment and a positive window"));
            }
            self.entries.retain(|(f, _, _)| *f != norm);
            self.entries.push((norm, tokens, true));
        }
        Ok(self)
    }

    /// The window of a model name: the longest matching fragment, the
    /// prices file's first.
    pub fn find(&self, model: &str) -> Option<u64> {
        self.find_at(model, None)
    }

    /// [`WindowTable::find`] for a model used at `at` (ms since the Unix
    /// epoch): a built-in fragment's later window once its date has come, and
    /// at no known time its latest, as a call of no time is priced at its
    /// model's latest prices.
    pub fn find_at(&self, model: &str, at: Option<i64>) -> Option<u64> {
        let norm = normalize_model(model);
        let best = |user: bool| {
            self.entries.iter().filter(|(f, _, u)| *u == user && fragment_in(&norm, f)).max_by_key(|(f, _, _)| f.len())
        };
        if let Some((_, w, _)) = best(true) {
            return Some(*w);
        }
        let (fragment, w, _) = best(false)?;
        let later = self
            .since
            .iter()
            .filter(|(f, from, _)| f == fragment && at.is_none_or(|t| t >= *from))
            .max_by_key(|(_, from, _)| *from);
        Some(later.map_or(*w, |(_, _, w)| *w))
    }

    /// The window of a session: what its log recorded, else its model's (the
    /// model of most of its calls; a Claude model whose recorded prompt went
    /// past 200K ran its 1M variant), else, when it names no model, its
    /// agent's default model's ([`crate::read::format::default_model`]), else
    /// [`DEFAULT_WINDOW`].
    pub fn resolve(&self, s: &Session) -> ResolvedWindow {
        if let Some(w) = s.meta.context_window.filter(|&w| w > 0) {
            return ResolvedWindow { tokens: w, source: WindowSource::Log, model: None };
        }
        // Calls per model, and where each was first seen (a log may name a new
        // model at every call: a map keeps this linear).
        let mut counts: std::collections::HashMap<&str, (usize, usize)> = std::collections::HashMap::new();
        let names = s.calls.iter().filter_map(|c| c.model.as_deref()).chain(s.meta.models.iter().map(String::as_str));
        for (i, m) in names.enumerate() {
            counts.entry(m).or_insert((0, i)).0 += 1;
        }
        // Most calls; at a tie the first seen.
        let model = counts.iter().max_by_key(|(_, (n, first))| (*n, std::cmp::Reverse(*first))).map(|(m, _)| *m);
        let max_prompt = s.calls.iter().filter_map(|c| c.usage.map(|u| u.prompt_tokens())).max().unwrap_or(0);
        // When the model was used: its first timed call, else the session's.
        let first_time = |m: &str| {
            let timed = |c: &&crate::model::Call| c.timestamp.is_some();
            s.calls
                .iter()
                .filter(timed)
                .find(|c| c.model.as_deref() == Some(m))
                .or_else(|| s.calls.iter().find(timed))
                .and_then(|c| c.timestamp)
        };
        match model.and_then(|m| self.find_at(m, first_time(m)).map(|w| (m, w))) {
            Some((m, w)) if w < LONG_CONTEXT_WINDOW && max_prompt > w && normalize_model(m).starts_with("claude") => {
                ResolvedWindow { tokens: LONG_CONTEXT_WINDOW, source: WindowSource::LongContext, model: Some(m.into()) }
            }
            Some((m, w)) => ResolvedWindow { tokens: w, source: WindowSource::Model, model: Some(m.into()) },
            None => {
                // No model named: the agent's default, when it has one.
                let agent = if model.is_none() { crate::read::format::default_model(s.format) } else { None };
                match agent.and_then(|m| self.find(m).map(|w| (m, w))) {
                    Some((m, w)) => ResolvedWindow { tokens: w, source: WindowSource::Agent, model: Some(m.into()) },
                    None => ResolvedWindow {
                        tokens: DEFAULT_WINDOW,
                        source: WindowSource::Default,
                        model: model.map(Into::into),
                    },
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Call, Usage, UsageProvenance};

    fn session(models: &[&str], prompt: u64) -> Session {
        let mut s = Session::new("s", crate::model::Format::Codex, "s.jsonl");
        for m in models {
            s.calls.push(Call {
                message_index: 0,
                model: Some((*m).into()),
                usage: Some(Usage {
                    uncached_input: prompt,
                    cache_read: 0,
                    cache_write: 0,
                    output: 0,
                    reasoning: 0,
                    provenance: UsageProvenance::Anthropic,
                }),
                timestamp: None,
                response_id: None,
                fast: false,
            });
        }
        s
    }

    #[test]
    fn the_log_first_then_the_model_then_the_default() {
        let t = WindowTable::builtin();
        let mut s = session(&["gpt-5-codex"], 10);
        assert_eq!((t.resolve(&s).tokens, t.resolve(&s).source), (272_000, WindowSource::Model));
        s.meta.context_window = Some(258_400);
        assert_eq!((t.resolve(&s).tokens, t.resolve(&s).source), (258_400, WindowSource::Log));
        let s = session(&["claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929", "claude-haiku-4-5"], 10);
        let r = t.resolve(&s);
        assert_eq!(
            (r.tokens, r.source, r.model.as_deref()),
            (200_000, WindowSource::Model, Some("claude-sonnet-4-5-20250929"))
        );
        assert_eq!(t.resolve(&session(&["claude-opus-4-6"], 10)).tokens, 1_000_000);
        assert_eq!(t.resolve(&session(&["anthropic/claude-3.5-sonnet"], 10)).tokens, 200_000);
        // Every Gemini 3 and 4 model, whatever its version and suffix.
        for m in ["gemini-3-pro-preview", "gemini-3.1-flash-lite", "gemini-3.8-flash", "gemini-4-argon"] {
            let r = t.resolve(&session(&[m], 10));
            assert_eq!((r.tokens, r.source), (1_048_576, WindowSource::Model), "{m}");
        }
        assert_eq!(t.find("gemini-30-pro"), None);
        assert_eq!(t.find("openai/gpt-6.2-sol"), Some(272_000));
        // Other vendors, under their own names and OpenRouter's.
        assert_eq!(t.find("deepseek/deepseek-v3.2"), Some(128_000));
        assert_eq!(t.find("z-ai/glm-4.6"), Some(200_000));
        assert_eq!(t.find("glm-4.5-air"), Some(128_000));
        assert_eq!(t.find("moonshotai/kimi-k2-0905"), Some(262_144));
        assert_eq!(t.find("kimi-k2-0711-preview"), Some(131_072));
        assert_eq!(t.find("x-ai/grok-code-fast-1"), Some(256_000));
        assert_eq!(t.find("grok-4-1-fast-reasoning"), Some(2_000_000));
        assert_eq!(t.find("grok-4.20-0309-reasoning"), Some(1_000_000));
        assert_eq!(t.find("grok-4.7"), Some(500_000));
        // Not Grok 4's 256K, whose name they start with.
        assert_eq!(t.find("grok-4.6"), Some(500_000));
        assert_eq!(t.find("xai/grok-4.5"), Some(500_000));
        assert_eq!(t.find("grok-4.3"), Some(1_000_000));
        assert_eq!(t.find("grok-40"), None);
        let r = t.resolve(&session(&["my-local-model"], 10));
        assert_eq!((r.tokens, r.source), (DEFAULT_WINDOW, WindowSource::Default));
        // No model named: the agent's default, for an agent that has one.
        let r = t.resolve(&Session::new("s", crate::model::Format::CodexExec, "s.jsonl"));
        assert_eq!((r.tokens, r.source, r.model.as_deref()), (272_000, WindowSource::Agent, Some("gpt-5-codex")));
        let r = t.resolve(&Session::new("s", crate::model::Format::Codex, "s.jsonl"));
        assert_eq!((r.tokens, r.source), (272_000, WindowSource::Agent));
        let r = t.resolve(&Session::new("s", crate::model::Format::Pi, "s.jsonl"));
        assert_eq!((r.tokens, r.source), (DEFAULT_WINDOW, WindowSource::Default));
        // A model named but unknown is not replaced by the agent's default.
        let mut s = Session::new("s", crate::model::Format::Codex, "s.jsonl");
        s.meta.models.push("my-local-model".into());
        assert_eq!(t.resolve(&s).source, WindowSource::Default);
    }

    /// deepseek-chat had V3.2's 128K until it served V4 Flash (1M), from
    /// 2026-04-24: a session's window is its model's when it was used.
    #[test]
    fn a_name_served_by_a_new_model_has_the_window_of_its_date() {
        let t = WindowTable::builtin();
        let at = |iso: &str| crate::read::time::parse_iso(iso);
        let timed = |model: &str, iso: &str| {
            let mut s = session(&[model, model], 10);
            for c in &mut s.calls {
                c.timestamp = at(iso);
            }
            t.resolve(&s).tokens
        };
        assert_eq!(timed("deepseek-chat", "2026-04-23T23:59:59Z"), 128_000);
        assert_eq!(timed("deepseek-reasoner", "2025-08-20T23:59:59Z"), 64_000);
        assert_eq!(timed("deepseek-chat", "2025-08-21T00:00:00Z"), 128_000);
        assert_eq!(timed("deepseek/deepseek-reasoner", "2026-04-24T00:00:00Z"), 1_000_000);
        assert_eq!(timed("deepseek-v3.2", "2026-06-01T00:00:00Z"), 128_000);
        // No time: the latest, as for its price.
        assert_eq!(t.resolve(&session(&["deepseek-chat"], 10)).tokens, 1_000_000);
        assert_eq!(t.find_at("deepseek-chat", at("2025-12-01T00:00:00Z")), Some(128_000));
        // A prices file's window wins at any date.
        let file = BTreeMap::from([("deepseek-chat".to_string(), 64_000u64)]);
        let t = WindowTable::builtin().with_overrides(&file).expect("valid windows");
        assert_eq!(t.find_at("deepseek-chat", at("2026-06-01T00:00:00Z")), Some(64_000));
    }

    #[test]
    fn a_claude_prompt_past_200k_is_the_1m_variant() {
        let t = WindowTable::builtin();
        let r = t.resolve(&session(&["claude-sonnet-4-5"], 250_000));
        assert_eq!((r.tokens, r.source), (1_000_000, WindowSource::LongContext));
        // Not for another provider's model: that is an overflow.
        let r = t.resolve(&session(&["gpt-4o"], 250_000));
        assert_eq!((r.tokens, r.source), (128_000, WindowSource::Model));
    }

    #[test]
    fn the_prices_file_overrides_and_adds() {
        let file: BTreeMap<String, u64> =
            [("gpt-5-codex".to_string(), 400_000), ("my-model".to_string(), 32_000)].into();
        let t = WindowTable::builtin().with_overrides(&file).unwrap();
        assert_eq!(t.find("gpt-5-codex-2025"), Some(400_000));
        assert_eq!(t.find("gpt-5"), Some(272_000));
        assert_eq!(t.find("my-model-v2"), Some(32_000));
        assert!(WindowTable::builtin().with_overrides(&[("x".to_string(), 0)].into()).is_err());
    }
}
