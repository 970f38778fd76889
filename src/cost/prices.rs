//! The price table: USD per million tokens for each model family (input, output,
//! cache write with a 5-minute or a 1-hour TTL, cache read), the built-in defaults,
//! the `--prices FILE` TOML that overrides or extends them, and how a model name
//! recorded in a log is resolved to a family.
//!
//! Sources of the built-in prices (read 2026-11-21 through the documentation index):
//! - Anthropic: the "Model pricing" table of
//!   <https://platform.claude.com/docs/en/about-claude/pricing> (base input, 5m cache
//!   writes, 1h cache writes, cache hits and refreshes, output) and the per-model
//!   overview pages (`/docs/en/models/sonnet-5/overview`, `…/sonnet-5-5/overview`,
//!   which list $2 / $10, 5m write $2.50, 1h write $4, cache read $0.20; Sonnet
//!   5.5's read is $0.10 since 2026-10-07, its release note). Cache writes cost
//!   1.25× (5 min) or 2× (1 h) the input price; reads 0.1× on most models. Fable
//!   and Mythos 5.2 ($8 / $40) are in the release notes of 2026-11-09; their $0.20
//!   read is from two third-party tables (rightsize v0.10.2, laozhang).
//!   Opus 5.5 ($4 / $20) is on the official comparison table; its cache rates follow
//!   the documented multipliers with the 0.05× read the synaps crate's pricing table
//!   gives (secondary source). Haiku 5.5 is priced by prompt length: $0.10 / $0.50 up
//!   to 100K tokens, $0.50 / $2.50 above (release notes of claudit v1.9.2 and
//!   PromptFuel v1.0.23, and the synaps crate's table, secondary sources).
//! - Anthropic fast mode (`speed: "fast"`): Claude Code's fast-mode page gives
//!   $30 / $150 on Opus 4.6 and 4.7 and $10 / $50 on Opus 4.8 (6× and 2× the
//!   standard $5 / $25), and the platform's fast-mode page says the multiple
//!   stacks with the cache multipliers; Opus 5's $10 / $50 (2×) is from the
//!   OpenRouter and Vercel AI Gateway model pages (secondary), Opus 5.5's $8 /
//!   $40 (2×) from LiteLLM's Opus 5.5 post (secondary). Fable 5.2 serves fast
//!   mode at a multiple no source we read gives: its fast calls are priced at
//!   the standard rates, and the report says so.
//! - OpenAI: the model pages of <https://developers.openai.com/api/docs/models>
//!   (`gpt-5-codex`: $1.25 input, $0.125 cached input, $10 output, the GPT-5 tier;
//!   GPT-5.1 the same; GPT-5.6 Luna $0.20 / $0.02 / $1.20, Terra's $2 input on
//!   Luna's comparison; GPT-5.6 Sol $4 / $0.40 / $20, a promotion said to run at
//!   least until 2026-11-21, no later word found; GPT-6 Sol $2 / $0.20 / $10,
//!   GPT-6.2 Sol $2 / $0.10 / $10, their writes $2.50)
//!   and the pricing page <https://developers.openai.com/api/docs/pricing> as
//!   summarized on 2026-11-06 (api-evangelist "OpenAI API Pricing"); GPT-5.4
//!   ($2.50 / $0.25 / $15) and 5.4 mini and nano from adk-model's pricing table,
//!   GPT-5.5 ($5 / $0.50 / $30), 5.2 and 5.3-Codex ($1.75 / $0.175 / $14) from
//!   third-party tables that quote the model pages (secondary). OpenAI caches
//!   automatically; the prompt-caching guide bills writes at the input price
//!   before GPT-5.6 and at 1.25× it from GPT-5.6 on. From GPT-5.4 on, a prompt
//!   over 272K tokens bills the whole request at 2× input and 1.5× output (the
//!   GPT-6 Sol page; secondary for 5.4 to 5.6). Fast mode (`service_tier`
//!   `priority` or `fast`, openai.com's fast-mode page): 2× on GPT-5.1 to 5.4
//!   (taken as such for GPT-5, at 5.1's prices), 5.6 and GPT-6.2 Sol, 2.5× on
//!   GPT-5.5; none known for the others. o3 at $10 / $2.50 / $40 until its
//!   80 % cut of 2025-06-10 (secondary: aitoolrate's o3 guide, oreate's).
//!
//! - Google: the Gemini API pricing page <https://ai.google.dev/gemini-api/docs/pricing>
//!   as quoted on 2026-07-04 (factquire's record of `gemini-3-flash-preview`: $0.50,
//!   $3, context caching $0.05) and summarized in March 2026 (deploybase: 2.5 Pro
//!   $1.25 / $10 up to 200K prompt tokens, $2.50 / $15 above; 2.5 Flash $0.30 /
//!   $2.50), Gemini 3 Pro $2 / $12 and $4 / $18 above 200K (aifreeapi, January 2026),
//!   2.5 Flash-Lite $0.10 / $0.40; context caching at 0.1× input throughout. The
//!   Flash models after Gemini 3 from third-party copies of that page (all
//!   secondary): 3.1 Flash-Lite $0.25 / $1.50 (llmgateway, models.dev), 3.5 Flash
//!   $1.50 / $9 and 3.5 Flash-Lite $0.30 / $2.50 (api-evangelist), 3.6 Flash $1.50
//!   / $7.50 (connectonion), 3.7 and 3.8 Flash $0.75 / $3.75 (pollinations,
//!   litellm; 3.8's price until 2026-12-31, then $1.50 / $7.50, its cache
//!   read taken as a tenth of input as for the other Flash models). Explicit
//!   caches' hourly storage is not priced.
//!
//! - Open-weight and other vendors' models, as their own APIs price them (read
//!   2026-12-01; prompt caching is automatic on each, a write billed as input
//!   unless said): DeepSeek's "Models & Pricing" page
//!   (<https://api-docs.deepseek.com/quick_start/pricing>): V3.2 (`deepseek-v3.2`,
//!   and `deepseek-chat` and `deepseek-reasoner` from 2025-09-29 until V4's
//!   launch on 2026-04-24) $0.28 / hit $0.028 / $0.42; before it, as the page
//!   stood in 2025, V3.1 (both names from 16:00 UTC on 2025-09-05) $0.56 /
//!   $0.07 / $1.68, and until then `deepseek-chat` (V3) $0.27 / $0.07 / $1.10
//!   and `deepseek-reasoner` (R1) $0.55 / $0.14 / $2.19, both at $0.135 /
//!   $0.035 / $0.55 from 16:30 to 00:30 UTC (from 2025-02-26 16:30 UTC: the
//!   discount's announcement, techgethub and huxiu via coolwj, secondary), V3
//!   at $0.14 / $0.014 / $0.28 until its launch promotion ended at 16:00 UTC
//!   on 2025-02-08 (secondary: deploybase's table); V4 Flash, which those two names
//!   served from then until their retirement on 2026-07-24, and
//!   `deepseek-v4-flash`, $0.14 / $0.0028 / $0.28, V4 Pro $0.435 / $0.003625 /
//!   $0.87 (its launch discount, made permanent on 2026-05-22), both flat
//!   until the hours below began on 2026-08-16 (the page as quoted on
//!   2026-07-04 by factquire; chatforest's and APIYI's migration guides, China
//!   Business News via 5iter, secondary); as read 2026-11-15,
//!   `deepseek-flash` (V4.1 Flash, which also serves and bills the retired
//!   `deepseek-v4-flash` names) $0.30 / $0.006 / $1.20 and `deepseek-v4-pro`
//!   $1.32 / $0.044 / $3.96 at peak, half of that off-peak; peak hours are
//!   01:00–04:00 and 06:00–10:00 UTC, Monday to Friday (the weekdays from
//!   secondary sources that quote the page: apidog's V4.1 Flash pricing guide,
//!   the cmd-usage crate's `is_peak`; others say daily). Z.ai's pricing page
//!   (<https://docs.z.ai/guides/overview/pricing>): GLM-5 $1 / $0.20 / $3.20,
//!   GLM-4.5 to 4.7 $0.60 / $0.11 / $2.20, GLM-4.5-Air $0.20 / $0.03 / $1.10.
//!   Moonshot's Kimi, from copies of its price list (secondary: models.dev,
//!   lava.so's provider page, TeamoRouter's K3 guide): K2 (0711, 0905,
//!   thinking) $0.60 / $0.15 / $2.50, K2 Turbo $1.15 / $0.15 / $8, K2.5 $0.60 /
//!   $0.10 / $3, K2.6 $0.95 / $0.16 / $4, K3 $3 / $0.30 / $15; K2.7 Code
//!   $0.95 / $0.19 / $4 (apidog's guide, secondary), K3.1 Pro $2 / $0.20 /
//!   $10 and its Highspeed $4 / $0.20 / $20, cache writes at the input price
//!   (APIYI's relay of Moonshot's prices, secondary). xAI's model pages
//!   (<https://docs.x.ai/developers/models>): Grok Code Fast 1 $0.20 / $0.02 /
//!   $1.50; Grok 4.20 $1.25 / $0.20 / $2.50, a prompt of 200K tokens or more
//!   at twice that; Grok 4.7 and 4.6 $2 / $6 (their $0.50 read and 2× tier
//!   from 200K, apidog's guide and LiteLLM's notice of 4.7, "same price as
//!   Grok 4.6", secondary), Grok 4.5 the same and Grok 4.3 $1.25 / $0.20 /
//!   $2.50 with 4.20's tier (secondary: APIYI's model pages, apidog's 4.3
//!   guide, Venice's list, which prices 4.5 to 4.7 alike and 4.3 as 4.20);
//!   Grok 4 (0709) $3 / $0.75 / $15, above 128K
//!   $6 / $30, and Grok 4 Fast and 4.1 Fast $0.20 / $0.05 / $0.50 (secondary:
//!   models.dev, wavespeed). MiniMax-M2 $0.30 / $0.03 / $1.20, its writes
//!   $0.375 (secondary: models.dev). These names match exactly (a provider
//!   prefix aside) where a vendor sells differently priced variants under
//!   longer names (`glm-4.7-flash`, `kimi-k2-turbo-preview`, `grok-4.1`): an
//!   unknown variant is priced as the fallback and said so, never as a
//!   sibling. Not built in: Qwen3 Coder, priced in four prompt-length tiers;
//!   a prices file adds it.
//!
//! Prices change; `compactor … --prices FILE` overrides any of them (see
//! [`PriceTable::from_toml`]) and the report names the table's families it used.

use super::off_peak::OffPeak;
use serde::{Deserialize, Serialize};

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    /// Writing to a cache entry that lives 5 minutes (refreshed on each hit).
    pub cache_write_5m: f64,
    /// Writing to a cache entry that lives 1 hour.
    pub cache_write_1h: f64,
    pub cache_read: f64,
}

/// Who sells a family; decides the default cache multipliers of a family added
/// by a prices file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// Writes cost 1.25× (5 min) / 2× (1 h) the input price, reads 0.1×.
    Anthropic,
    /// Writes cost the input price, reads 0.1×.
    Openai,
    /// As `openai`.
    Other,
    /// As `openai`: a cache hit at the context caching price.
    Google,
}

/// A set of models sharing one price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Family {
    pub name: String,
    pub provider: Provider,
    /// Normalized name fragments (see [`normalize_model`]) that select this family.
    pub patterns: Vec<String>,
    pub prices: Prices,
    /// Dearer prices for a request whose prompt is longer than a threshold:
    /// every token of such a request, output included, is billed at them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long: Option<LongContext>,
    /// Further tiers above `long`, thresholds ascending (Alibaba's Qwen
    /// models bill four prompt lengths): a request is billed at the last
    /// tier whose threshold its prompt passes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_tiers: Vec<LongContext>,
    /// Fast mode (Anthropic `speed: "fast"`, OpenAI's `priority` or `fast`
    /// service tier) bills every price of a request,
    /// cache rates and long-context tier included, at this multiple; `None`:
    /// not known for this family, and a fast call is priced at the standard rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast: Option<f64>,
    /// Billed at a share of these prices outside peak hours (by each call's
    /// timestamp); `None`: the same price at any hour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_peak: Option<OffPeak>,
    /// The prices this family's names were billed at before a date, dates
    /// ascending: a call sent before one is billed at that period's prices
    /// (no long-context tier; its own off-peak hours if any, not the
    /// family's; a fast multiple applies), a later call (or one of no time)
    /// at the latest ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<Earlier>,
    /// Defined or changed by a prices file.
    pub user: bool,
}

/// Prices a family billed until a date: before a price cut, or while its
/// model name was served by another model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Earlier {
    /// Calls sent before this instant (milliseconds since the Unix epoch, UTC).
    pub until_ms: i64,
    pub prices: Prices,
    /// The period's own hours, if it billed by the hour (DeepSeek's night
    /// discount of 2025).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_peak: Option<OffPeak>,
}

/// A family's long-context tier.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LongContext {
    /// Prompt tokens (uncached, cache read and cache write together) above
    /// which a request is billed at `prices`.
    pub above: u64,
    pub prices: Prices,
}

impl Family {
    /// The prices of a request of `prompt` tokens.
    pub fn prices_for(&self, prompt: u64) -> &Prices {
        match &self.long {
            Some(l) if prompt > l.above => {
                self.more_tiers.iter().rev().find(|t| prompt > t.above).map_or(&l.prices, |t| &t.prices)
            }
            _ => &self.prices,
        }
    }

    /// The prices of a request of `prompt` tokens, served in fast mode when
    /// `fast` (at the standard ones when the family has no fast multiple).
    pub fn prices_at(&self, prompt: u64, fast: bool) -> Prices {
        let p = *self.prices_for(prompt);
        match self.fast.filter(|_| fast) {
            Some(m) => p.times(m),
            None => p,
        }
    }

    /// The earlier period a call sent at `at_ms` falls in ([`Family::earlier`]);
    /// `None` for the latest prices, and when the time is unknown.
    pub fn earlier_at(&self, at_ms: Option<i64>) -> Option<&Earlier> {
        let t = at_ms?;
        self.earlier.iter().find(|e| t < e.until_ms)
    }

    /// Does a call's price depend on when it was sent (hours or dates)?
    pub fn timed(&self) -> bool {
        self.off_peak.is_some() || !self.earlier.is_empty()
    }

    /// [`Family::prices_at`] for a request sent at `at_ms` (milliseconds since
    /// the Unix epoch): at the prices of the earlier period it falls in, if
    /// any; else at the off-peak share outside the family's peak hours, at
    /// the listed prices at peak or when the time is unknown.
    pub fn prices_when(&self, prompt: u64, fast: bool, at_ms: Option<i64>) -> Prices {
        if let Some(e) = self.earlier_at(at_ms) {
            let hours = e.off_peak.as_ref().map_or(1.0, |o| o.multiple(at_ms));
            return e.prices.times(self.fast.filter(|_| fast).unwrap_or(1.0) * hours);
        }
        let p = self.prices_at(prompt, fast);
        match &self.off_peak {
            Some(o) if o.multiple(at_ms) != 1.0 => p.times(o.multiple(at_ms)),
            _ => p,
        }
    }
}

/// How a call's model was priced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelSource {
    /// The model name recorded in the log matched a family.
    Log,
    /// `--model` named it.
    Override,
    /// No recorded name: priced as the model the log's agent runs by default
    /// ([`crate::read::format::default_model`]; Codex's for a `codex exec` stream).
    Agent,
    /// No recorded name (and no agent default), or one no family matches:
    /// priced as the fallback family.
    Fallback,
}

/// Families and the fallback for unknown models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    pub families: Vec<Family>,
    /// Index into `families`.
    pub fallback: usize,
    /// A prices file named the fallback: it then prices every call of no
    /// recorded model, before any agent's default.
    #[serde(default)]
    pub fallback_set: bool,
    /// Context windows by model, for `context_window = "auto"`.
    pub windows: super::windows::WindowTable,
}

/// A prices file could not be used. Names the family and key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PriceError {
    #[error("prices TOML: {0}")]
    Toml(String),
    #[error("prices: family `{family}`: {reason}")]
    Family { family: String, reason: String },
    #[error("prices: fallback `{0}` is not a family of the table")]
    Fallback(String),
    #[error("unknown cache TTL `{0}` (expected `auto`, `5m`, `1h` or `off`)")]
    Ttl(String),
}

/// The family of models no pattern matches, unless a prices file says otherwise:
/// the Sonnet 4 tier, the most common model of coding-agent logs.
pub const DEFAULT_FALLBACK: &str = "claude-sonnet-4";

impl Prices {
    /// Anthropic's documented multipliers on an input price.
    pub(super) fn anthropic(input: f64, output: f64, read: f64) -> Prices {
        Prices { input, output, cache_write_5m: input * 1.25, cache_write_1h: input * 2.0, cache_read: read }
    }

    /// No write premium: writes are billed as input.
    pub(super) fn openai(input: f64, output: f64, read: f64) -> Prices {
        Prices { input, output, cache_write_5m: input, cache_write_1h: input, cache_read: read }
    }

    /// OpenAI from GPT-5.6 on: writes at 1.25× the input price.
    fn openai_125(input: f64, output: f64, read: f64) -> Prices {
        Prices { cache_write_5m: input * 1.25, cache_write_1h: input * 1.25, ..Prices::openai(input, output, read) }
    }

    /// Every price at `m` times itself.
    fn times(self, m: f64) -> Prices {
        Prices {
            input: self.input * m,
            output: self.output * m,
            cache_write_5m: self.cache_write_5m * m,
            cache_write_1h: self.cache_write_1h * m,
            cache_read: self.cache_read * m,
        }
    }

    pub(super) fn all_finite_non_negative(&self) -> bool {
        [self.input, self.output, self.cache_write_5m, self.cache_write_1h, self.cache_read]
            .iter()
            .all(|p| p.is_finite() && *p >= 0.0)
    }
}

fn fam(name: &str, provider: Provider, patterns: &[&str], prices: Prices) -> Family {
    Family {
        name: name.to_string(),
        provider,
        patterns: patterns.iter().map(|p| normalize_model(p)).collect(),
        prices,
        long: None,
        more_tiers: Vec::new(),
        fast: None,
        off_peak: None,
        earlier: Vec::new(),
        user: false,
    }
}

/// `f` billed at `prices` for calls sent before `until` (`YYYY-MM-DD`, the
/// day's start in UTC, or an RFC 3339 time), added in date order.
fn until(f: Family, until: &str, prices: Prices) -> Family {
    until_hours(f, until, prices, None)
}

/// [`until`] for a period billed by the hour.
fn until_hours(f: Family, until: &str, prices: Prices, off_peak: Option<OffPeak>) -> Family {
    let until_ms = crate::read::time::parse_day_or_iso(until).unwrap_or(i64::MIN);
    let mut f = f;
    f.earlier.push(Earlier { until_ms, prices, off_peak });
    f
}

/// DeepSeek's prices of `deepseek-chat` (`reasoner: false`) or
/// `deepseek-reasoner` from V3's launch to V3.2's, each period in order: the
/// night discount (16:30–00:30 UTC, every day) took off half of V3's prices and
/// three quarters of R1's.
fn deepseek_2025(f: Family, reasoner: bool) -> Family {
    let o = Prices::openai;
    let night = |share: f64| OffPeak { share, peak_utc: vec![(30, 990)], weekends_off_peak: false };
    let (before, share) = if reasoner { (o(0.55, 2.19, 0.14), 0.25) } else { (o(0.27, 1.10, 0.07), 0.5) };
    let f = if reasoner { f } else { until(f, "2025-02-08T16:00:00Z", o(0.14, 0.28, 0.014)) };
    let f = until(f, "2025-02-26T16:30:00Z", before);
    let f = until_hours(f, "2025-09-05T16:00:00Z", before, Some(night(share)));
    let f = until(f, "2025-09-29", o(0.56, 1.68, 0.07));
    until(f, "2026-04-24", o(0.28, 0.42, 0.028))
}

/// `f` with OpenAI's long-context tier: a prompt over 272K tokens bills the
/// whole request at 2× the input and cache rates and 1.5× the output.
fn over_272k(f: Family) -> Family {
    let p = f.prices.times(2.0);
    long(f, 272_000, Prices { output: p.output * 0.75, ..p })
}

/// `f` with its fast-mode multiple.
fn fast(f: Family, multiple: f64) -> Family {
    Family { fast: Some(multiple), ..f }
}

/// `f` billed at half price outside DeepSeek's peak hours.
fn deepseek_hours(f: Family) -> Family {
    Family { off_peak: Some(OffPeak::deepseek()), ..f }
}

/// `f` with its long-context tier.
fn long(f: Family, above: u64, prices: Prices) -> Family {
    Family { long: Some(LongContext { above, prices }), ..f }
}

impl PriceTable {
    /// The built-in table (sources in the module documentation).
    pub fn builtin() -> PriceTable {
        use Provider::{Anthropic, Google, Openai, Other};
        let a = Prices::anthropic;
        let o = Prices::openai;
        let o125 = Prices::openai_125;
        let families = vec![
            // platform.claude.com pricing table: Fable / Mythos 5.1 read $0.25 (0.025×), 5 read $1.
            // Fable / Mythos 5.2: $8 / $40, read $0.20 (0.025×).
            fam("claude-fable-5-2", Anthropic, &["claude-fable-5-2", "claude-mythos-5-2"], a(8.0, 40.0, 0.20)),
            fam("claude-fable-5-1", Anthropic, &["claude-fable-5-1", "claude-mythos-5-1"], a(10.0, 50.0, 0.25)),
            fam("claude-fable-5", Anthropic, &["claude-fable-5", "claude-mythos-5"], a(10.0, 50.0, 1.0)),
            fast(fam("claude-opus-5-5", Anthropic, &["claude-opus-5-5"], a(4.0, 20.0, 0.20)), 2.0),
            // Opus 4.5 through 5: $5 / $6.25 / $10 / $0.50 / $25, in three
            // families by their fast-mode multiple: none on 4.5, 6× on 4.6
            // and 4.7 ($30 / $150), 2× on 4.8 and 5 ($10 / $50).
            fam("claude-opus-4-5", Anthropic, &["claude-opus-4-5"], a(5.0, 25.0, 0.50)),
            fast(fam("claude-opus-4-6", Anthropic, &["claude-opus-4-6", "claude-opus-4-7"], a(5.0, 25.0, 0.50)), 6.0),
            fast(fam("claude-opus-4-8", Anthropic, &["claude-opus-4-8", "claude-opus-5"], a(5.0, 25.0, 0.50)), 2.0),
            // Opus 4 / 4.1 / 3: $15 / $18.75 / $30 / $1.50 / $75.
            fam("claude-opus-4", Anthropic, &["claude-opus-4", "claude-3-opus"], a(15.0, 75.0, 1.50)),
            // Sonnet 5 and 5.5 overview pages: $2 / $2.50 / $4 / $0.20 / $10.
            fam("claude-sonnet-5", Anthropic, &["claude-sonnet-5"], a(2.0, 10.0, 0.20)),
            // Sonnet 5.5's read went to $0.10 (0.05×) on 2026-10-07.
            fam("claude-sonnet-5-5", Anthropic, &["claude-sonnet-5-5"], a(2.0, 10.0, 0.10)),
            // Sonnet 3.5 to 4.6: $3 / $3.75 / $6 / $0.30 / $15.
            fam(
                "claude-sonnet-4",
                Anthropic,
                &["claude-sonnet-4", "claude-3-7-sonnet", "claude-3-5-sonnet"],
                a(3.0, 15.0, 0.30),
            ),
            // Haiku 5.5: $0.10 / $0.125 / $0.20 / $0.01 / $0.50; above 100K prompt tokens $0.50 / $2.50.
            long(
                fam("claude-haiku-5-5", Anthropic, &["claude-haiku-5-5"], a(0.10, 0.50, 0.01)),
                100_000,
                a(0.50, 2.50, 0.05),
            ),
            fam("claude-haiku-4-5", Anthropic, &["claude-haiku-4"], a(1.0, 5.0, 0.10)),
            fam("claude-haiku-3-5", Anthropic, &["claude-3-5-haiku"], a(0.80, 4.0, 0.08)),
            // Haiku 3's 5m write is $0.30 (not 1.25×), its read $0.03.
            fam(
                "claude-haiku-3",
                Anthropic,
                &["claude-3-haiku"],
                Prices { input: 0.25, output: 1.25, cache_write_5m: 0.30, cache_write_1h: 0.50, cache_read: 0.03 },
            ),
            // OpenAI: cached input is the cache read; writes at the input price
            // before GPT-5.6, 1.25× it from GPT-5.6 on. From GPT-5.4 on, a
            // prompt over 272K tokens bills the whole request at 2× input
            // (cache rates too) and 1.5× output. Fast mode (priority): 2×,
            // 2.5× on GPT-5.5.
            over_272k(fast(fam("gpt-6-sol", Openai, &["gpt-6-sol"], o125(2.0, 10.0, 0.20)), 2.0)),
            over_272k(fast(fam("gpt-6-2-sol", Openai, &["gpt-6-2-sol"], o125(2.0, 10.0, 0.10)), 2.0)),
            over_272k(fast(fam("gpt-5-6-sol", Openai, &["gpt-5-6-sol", "gpt-5-6"], o125(4.0, 20.0, 0.40)), 2.0)),
            over_272k(fast(fam("gpt-5-6-terra", Openai, &["gpt-5-6-terra"], o125(2.0, 12.0, 0.20)), 2.0)),
            over_272k(fast(fam("gpt-5-6-luna", Openai, &["gpt-5-6-luna"], o125(0.20, 1.20, 0.02)), 2.0)),
            over_272k(fast(fam("gpt-5-5", Openai, &["gpt-5-5"], o(5.0, 30.0, 0.50)), 2.5)),
            over_272k(fast(fam("gpt-5-4", Openai, &["gpt-5-4"], o(2.50, 15.0, 0.25)), 2.0)),
            fast(fam("gpt-5-4-mini", Openai, &["gpt-5-4-mini"], o(0.75, 4.50, 0.075)), 2.0),
            fam("gpt-5-4-nano", Openai, &["gpt-5-4-nano"], o(0.20, 1.25, 0.02)),
            fast(fam("gpt-5-2", Openai, &["gpt-5-2", "gpt-5-3"], o(1.75, 14.0, 0.175)), 2.0),
            fast(
                fam("gpt-5", Openai, &["gpt-5", "gpt-5-codex", "gpt-5-1", "gpt-5-1-codex"], o(1.25, 10.0, 0.125)),
                2.0,
            ),
            fam("gpt-5-mini", Openai, &["gpt-5-mini", "codex-mini", "gpt-5-1-codex-mini"], o(0.25, 2.0, 0.025)),
            fam("gpt-5-nano", Openai, &["gpt-5-nano"], o(0.05, 0.40, 0.005)),
            fam("gpt-4-1", Openai, &["gpt-4-1"], o(2.0, 8.0, 0.50)),
            fam("gpt-4-1-mini", Openai, &["gpt-4-1-mini"], o(0.40, 1.60, 0.10)),
            fam("gpt-4o", Openai, &["gpt-4o"], o(2.50, 10.0, 1.25)),
            fam("gpt-4o-mini", Openai, &["gpt-4o-mini"], o(0.15, 0.60, 0.075)),
            // $10 / $40 until OpenAI's cut of 2025-06-10.
            until(fam("o3", Openai, &["o3"], o(2.0, 8.0, 0.50)), "2025-06-10", o(10.0, 40.0, 2.50)),
            fam("o4-mini", Openai, &["o4-mini"], o(1.10, 4.40, 0.275)),
            // Google: implicit caching bills a cache hit at the context caching
            // price and nothing extra to write (storage of explicit caches,
            // billed by the hour, is not modelled). Pro models bill a prompt
            // over 200K tokens at their long-context tier.
            long(
                fam("gemini-3-pro", Google, &["gemini-3-pro", "gemini-3-1-pro"], o(2.0, 12.0, 0.20)),
                200_000,
                o(4.0, 18.0, 0.40),
            ),
            fam("gemini-3-flash", Google, &["gemini-3-flash"], o(0.50, 3.0, 0.05)),
            fam("gemini-3-1-flash-lite", Google, &["gemini-3-1-flash-lite"], o(0.25, 1.50, 0.025)),
            fam("gemini-3-5-flash", Google, &["gemini-3-5-flash"], o(1.50, 9.0, 0.15)),
            fam("gemini-3-5-flash-lite", Google, &["gemini-3-5-flash-lite"], o(0.30, 2.50, 0.03)),
            fam("gemini-3-6-flash", Google, &["gemini-3-6-flash"], o(1.50, 7.50, 0.15)),
            fam("gemini-3-7-flash", Google, &["gemini-3-7-flash"], o(0.75, 3.75, 0.075)),
            // 3.8 Flash: 3.7's prices until 2026-12-31, $1.50 / $7.50 from 2027.
            until(
                fam("gemini-3-8-flash", Google, &["gemini-3-8-flash"], o(1.50, 7.50, 0.15)),
                "2027-01-01",
                o(0.75, 3.75, 0.075),
            ),
            long(
                fam("gemini-2-5-pro", Google, &["gemini-2-5-pro"], o(1.25, 10.0, 0.125)),
                200_000,
                o(2.50, 15.0, 0.25),
            ),
            fam("gemini-2-5-flash", Google, &["gemini-2-5-flash"], o(0.30, 2.50, 0.03)),
            fam("gemini-2-5-flash-lite", Google, &["gemini-2-5-flash-lite"], o(0.10, 0.40, 0.01)),
            // Other vendors: a cache hit at their cached input price, a write
            // at the input price. A family with no fragment matches its name
            // only, so that a differently priced longer name is not taken for it.
            // The two names served V3 and R1, V3.1, V3.2, then V4 Flash
            // from V4's launch until they were retired (2026-07-24).
            deepseek_2025(fam("deepseek-chat", Other, &[], o(0.14, 0.28, 0.0028)), false),
            deepseek_2025(fam("deepseek-reasoner", Other, &[], o(0.14, 0.28, 0.0028)), true),
            fam("deepseek-v3-2", Other, &["deepseek-v3-2"], o(0.28, 0.42, 0.028)),
            // Listed at peak; the retired V4 Flash names are served and billed
            // as Flash. Flat V4 prices before the hours began.
            until(
                deepseek_hours(fam(
                    "deepseek-flash",
                    Other,
                    &["deepseek-flash", "deepseek-v4-flash"],
                    o(0.30, 1.20, 0.006),
                )),
                "2026-08-16",
                o(0.14, 0.28, 0.0028),
            ),
            until(
                deepseek_hours(fam("deepseek-v4-pro", Other, &["deepseek-v4-pro"], o(1.32, 3.96, 0.044))),
                "2026-08-16",
                o(0.435, 0.87, 0.003625),
            ),
            fam("glm-5", Other, &[], o(1.0, 3.20, 0.20)),
            fam("glm-4-7", Other, &[], o(0.60, 2.20, 0.11)),
            fam("glm-4-6", Other, &[], o(0.60, 2.20, 0.11)),
            fam("glm-4-5", Other, &[], o(0.60, 2.20, 0.11)),
            fam("glm-4-5-air", Other, &[], o(0.20, 1.10, 0.03)),
            fam("kimi-k2", Other, &["kimi-k2-0711", "kimi-k2-0905", "kimi-k2-thinking"], o(0.60, 2.50, 0.15)),
            fam("kimi-k2-turbo", Other, &["kimi-k2-turbo", "kimi-k2-thinking-turbo"], o(1.15, 8.0, 0.15)),
            fam("kimi-k2-5", Other, &[], o(0.60, 3.0, 0.10)),
            fam("kimi-k2-6", Other, &[], o(0.95, 4.0, 0.16)),
            fam("kimi-k3", Other, &[], o(3.0, 15.0, 0.30)),
            fam("kimi-k2-7-code", Other, &[], o(0.95, 4.0, 0.19)),
            fam("kimi-k3-1-pro", Other, &[], o(2.0, 10.0, 0.20)),
            fam("kimi-k3-1-pro-highspeed", Other, &[], o(4.0, 20.0, 0.20)),
            fam("grok-code-fast-1", Other, &[], o(0.20, 1.50, 0.02)),
            // xAI bills a prompt of 200K tokens or more (above 128K on Grok 4) at the tier.
            long(fam("grok-4-20", Other, &["grok-4-20"], o(1.25, 2.50, 0.20)), 199_999, o(2.50, 5.0, 0.40)),
            long(fam("grok-4-7", Other, &[], o(2.0, 6.0, 0.50)), 199_999, o(4.0, 12.0, 1.0)),
            long(fam("grok-4-6", Other, &[], o(2.0, 6.0, 0.50)), 199_999, o(4.0, 12.0, 1.0)),
            long(fam("grok-4-5", Other, &[], o(2.0, 6.0, 0.50)), 199_999, o(4.0, 12.0, 1.0)),
            long(fam("grok-4-3", Other, &[], o(1.25, 2.50, 0.20)), 199_999, o(2.50, 5.0, 0.40)),
            long(fam("grok-4", Other, &["grok-4-0709"], o(3.0, 15.0, 0.75)), 128_000, o(6.0, 30.0, 1.50)),
            fam("grok-4-fast", Other, &["grok-4-fast", "grok-4-1-fast"], o(0.20, 0.50, 0.05)),
            fam(
                "minimax-m2",
                Other,
                &[],
                Prices { cache_write_5m: 0.375, cache_write_1h: 0.375, ..o(0.30, 1.20, 0.03) },
            ),
        ];
        let fallback = families.iter().position(|f| f.name == DEFAULT_FALLBACK).unwrap_or(0);
        PriceTable { families, fallback, fallback_set: false, windows: super::windows::WindowTable::builtin() }
    }

    /// The family of a model name: an exact family name, else the longest matching
    /// fragment (file families first), else `None`.
    pub fn find(&self, model: &str) -> Option<usize> {
        let norm = normalize_model(model);
        if norm.is_empty() {
            return None;
        }
        if let Some(i) = self.families.iter().position(|f| f.name == norm) {
            return Some(i);
        }
        let best = |user: bool| {
            self.families
                .iter()
                .enumerate()
                .filter(|(_, f)| f.user == user)
                .flat_map(|(i, f)| f.patterns.iter().filter(|p| fragment_in(&norm, p)).map(move |p| (p.len(), i)))
                // Longest fragment; at equal length the earlier family.
                .min_by_key(|&(len, i)| (std::cmp::Reverse(len), i))
                .map(|(_, i)| i)
        };
        best(true).or_else(|| best(false))
    }

    /// The family to price a call with, and why: `--model`, else the model
    /// recorded, else (none recorded) the prices file's fallback if it named
    /// one, else the agent's default model (`agent`), else the fallback.
    pub fn resolve(
        &self,
        recorded: Option<&str>,
        model_override: Option<&str>,
        agent: Option<&str>,
    ) -> (usize, ModelSource) {
        if let Some(m) = model_override {
            return match self.find(m) {
                Some(i) => (i, ModelSource::Override),
                None => (self.fallback, ModelSource::Fallback),
            };
        }
        if let Some(m) = recorded {
            return self.find(m).map_or((self.fallback, ModelSource::Fallback), |i| (i, ModelSource::Log));
        }
        match agent.filter(|_| !self.fallback_set).and_then(|m| self.find(m)) {
            Some(i) => (i, ModelSource::Agent),
            None => (self.fallback, ModelSource::Fallback),
        }
    }
}

/// A model name as fragments are matched against it: lowercase, without a
/// provider prefix (`anthropic/`, `openrouter/anthropic/`), with `.`, `_`, `:` and
/// spaces folded to `-` (`claude-sonnet-4.5` = `claude-sonnet-4-5`).
pub fn normalize_model(name: &str) -> String {
    let base = name.trim().rsplit('/').next().unwrap_or("");
    let mut out = String::with_capacity(base.len());
    for c in base.chars().take(200) {
        match c {
            '.' | '_' | ':' | ' ' => out.push('-'),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// `pat` occurs in `name` starting at the beginning or after a non-alphanumeric
/// character, and ending at the end or before `-`: `gpt-5` is in
/// `gpt-5-2025-08-07` and `us-gpt-5`, not in `gpt-50`; `o3` is not in `foo3`.
pub(super) fn fragment_in(name: &str, pat: &str) -> bool {
    if pat.is_empty() {
        return false;
    }
    let bytes = name.as_bytes();
    let mut from = 0;
    while let Some(pos) = name[from..].find(pat) {
        let start = from + pos;
        let end = start + pat.len();
        let before_ok = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        let after_ok = end == bytes.len() || bytes[end] == b'-';
        if before_ok && after_ok {
            return true;
        }
        from = start + 1;
        while from < name.len() && !name.is_char_boundary(from) {
            from += 1;
        }
        if from >= name.len() {
            break;
        }
    }
    false
}
