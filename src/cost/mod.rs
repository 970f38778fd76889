//! Money (DESIGN.md §6 "Cost"): what a replay's requests would have been billed,
//! with the provider's prompt cache simulated from the request sequence and the
//! log's timestamps.
//!
//! The cache model, per call, for the baseline and the policy alike:
//! - the replay gives each request's size and its *prefix*: the tokens equal to
//!   the start of the previous request (`CallRow::prefix_*`; pruning or compaction
//!   that rewrites early messages shrinks it);
//! - when the previous call is no older than the cache TTL (5 minutes, or 1 hour;
//!   every hit refreshes it), the prefix is billed as **cache read** and the rest as
//!   **cache write** (the request is processed as input and written for the next
//!   call: Anthropic bills it at 1.25× / 2× the input price, OpenAI at the input
//!   price);
//! - after a longer gap, or at the first call, nothing is read: the whole request
//!   is written;
//! - a call without a timestamp is assumed to follow its predecessor closely
//!   (agents call in a loop) and is counted in `calls_without_timestamp`;
//! - with the cache off everything is plain input.
//!
//! A call the log says was served in fast mode is billed, baseline and policy
//! alike, at its family's fast-mode multiple of every price
//! ([`Family::fast`]); a family with none prices it at the standard rates, and
//! the cost counts such calls (`fast_at_standard_calls`).
//!
//! A family priced by time of day ([`Family::off_peak`]: DeepSeek's) bills
//! each call, and each summary, at the prices of the hour its timestamp falls
//! in; one whose prices changed on a date ([`Family::earlier`]: o3's cut,
//! DeepSeek's names served by a new model) at the prices in effect when it was
//! sent. A call of no timestamp is billed at the latest listed (peak) prices,
//! and the cost counts each kind (`off_peak_calls`, `earlier_price_calls`,
//! `untimed_listed_calls`).
//!
//! Outputs are taken as recorded, so the output cost (recorded `usage.output`) is
//! the same for both; summarizer tokens (LLM summaries) are billed as uncached
//! input and output at the summarizer's model price.
//!
//! The baseline simulation is checked against the log where its usage has cache
//! fields: the input cost of the recorded split (uncached / read / write) against
//! the simulated one, per call (median and p90 of the relative error, like the
//! estimator accuracy) and in total, and the share of the prompt read from cache.
//!
//! Not modelled: minimum cacheable sizes (1–4K tokens), cache breakpoints older
//! than the previous request, batch discounts.

mod agent_summaries;
#[cfg(test)]
mod agent_summaries_tests;
#[cfg(test)]
mod dated_tests;
mod off_peak;
mod prices;
mod prices_file;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tier_tests;
#[cfg(test)]
mod vendor_tests;
mod windows;

pub use agent_summaries::AgentSummaries;
pub use off_peak::OffPeak;
pub use prices::{
    DEFAULT_FALLBACK, Earlier, Family, ModelSource, PriceError, PriceTable, Prices, Provider, normalize_model,
};
pub use windows::{DEFAULT_WINDOW, LONG_CONTEXT_WINDOW, WindowTable};

use crate::model::Session;
use crate::replay::{CallRow, SessionTrace};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How long a cache entry lives after its last use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheTtl {
    /// No prompt cache: every token is plain input.
    Off,
    /// 5 minutes (Anthropic's default, close to OpenAI's in-memory retention).
    #[serde(rename = "5m")]
    FiveMinutes,
    /// 1 hour (Anthropic `ttl: "1h"`, billed at the higher write price).
    #[serde(rename = "1h")]
    OneHour,
    /// Each session's own ([`CacheTtl::of_session`]): 1 hour where its log
    /// records mostly 1-hour cache writes, else 5 minutes. Only a setting: a
    /// session is priced with the lifetime it resolves to.
    Auto,
}

impl CacheTtl {
    pub fn parse(s: &str) -> Result<CacheTtl, PriceError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" | "0" => Ok(CacheTtl::Off),
            "5m" | "5min" | "300" | "300s" => Ok(CacheTtl::FiveMinutes),
            "1h" | "60m" | "3600" | "3600s" => Ok(CacheTtl::OneHour),
            "auto" => Ok(CacheTtl::Auto),
            _ => Err(PriceError::Ttl(s.to_string())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CacheTtl::Off => "off",
            CacheTtl::FiveMinutes => "5m",
            CacheTtl::OneHour => "1h",
            CacheTtl::Auto => "auto",
        }
    }

    /// The lifetime `session` is priced with: this one, or for `Auto` the one
    /// its recorded cache writes show (Claude Code asks for 1 hour for
    /// Claude.ai subscribers, 5 minutes otherwise; a log that does not say
    /// is taken as 5 minutes).
    pub fn of_session(self, session: &Session) -> CacheTtl {
        match (self, session.meta.cache_writes_by_ttl) {
            (CacheTtl::Auto, Some((m5, h1))) if h1 > m5 => CacheTtl::OneHour,
            (CacheTtl::Auto, _) => CacheTtl::FiveMinutes,
            (ttl, _) => ttl,
        }
    }

    /// Milliseconds, `None` when off.
    pub fn millis(self) -> Option<i64> {
        match self {
            CacheTtl::Off => None,
            CacheTtl::FiveMinutes | CacheTtl::Auto => Some(300_000),
            CacheTtl::OneHour => Some(3_600_000),
        }
    }

    fn write_price(self, p: &Prices) -> f64 {
        match self {
            CacheTtl::OneHour => p.cache_write_1h,
            _ => p.cache_write_5m,
        }
    }
}

/// Everything the cost model needs besides the replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostSettings {
    pub table: PriceTable,
    pub ttl: CacheTtl,
    /// Price every call as this model (`--model`) instead of the recorded one.
    pub model_override: Option<String>,
    /// The LLM summarizer's model (`--llm-model`); `None`: the session's own family.
    pub summarizer_model: Option<String>,
    /// What request sizes are measured with (`--meter`), for every policy alike.
    pub meter: crate::tokens::Meter,
}

impl Default for CostSettings {
    fn default() -> CostSettings {
        CostSettings {
            table: PriceTable::builtin(),
            ttl: CacheTtl::Auto,
            model_override: None,
            summarizer_model: None,
            meter: crate::tokens::Meter::Recorded,
        }
    }
}

/// How the tokens of one request are billed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    pub uncached: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Split {
    pub fn total(&self) -> u64 {
        self.uncached + self.cache_read + self.cache_write
    }

    /// USD of this input at `prices` (writes at the TTL's price).
    pub fn usd(&self, prices: &Prices, ttl: CacheTtl) -> f64 {
        (self.uncached as f64 * prices.input
            + self.cache_read as f64 * prices.cache_read
            + self.cache_write as f64 * ttl.write_price(prices))
            / 1e6
    }
}

/// The cache simulation of one request: `tokens` sent, of which `prefix` equal
/// the start of the previous request, `gap_ms` after it (`None`: unknown, taken
/// as warm; the first request has no previous one and must pass `first`).
pub fn split_request(tokens: u64, prefix: u64, first: bool, gap_ms: Option<i64>, ttl: CacheTtl) -> Split {
    let Some(ttl_ms) = ttl.millis() else {
        return Split { uncached: tokens, cache_read: 0, cache_write: 0 };
    };
    let warm = !first && gap_ms.is_none_or(|g| g <= ttl_ms);
    let read = if warm { prefix.min(tokens) } else { 0 };
    Split { uncached: 0, cache_read: read, cache_write: tokens - read }
}

/// Billed tokens and USD of one series (baseline or policy) over a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Bill {
    pub uncached: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub output: u64,
    pub usd: f64,
}

impl Bill {
    fn add_input(&mut self, s: &Split, usd: f64) {
        self.uncached += s.uncached;
        self.cache_read += s.cache_read;
        self.cache_write += s.cache_write;
        self.usd += usd;
    }

    pub fn add(&mut self, o: &Bill) {
        self.uncached += o.uncached;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.output += o.output;
        self.usd += o.usd;
    }

    /// Share of the input tokens read from cache.
    pub fn read_share(&self) -> f64 {
        let t = self.uncached + self.cache_read + self.cache_write;
        if t == 0 { 0.0 } else { self.cache_read as f64 / t as f64 }
    }

    fn rounded(mut self) -> Bill {
        self.usd = round_usd(self.usd);
        self
    }
}

/// The simulated baseline against the recorded usage, on the calls whose usage
/// has cache fields (input side only; outputs are identical by construction).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedCheck {
    pub calls: u64,
    /// USD of the recorded input split (uncached / read / write) of those calls.
    pub recorded_usd: f64,
    /// USD of the simulated baseline input of the same calls.
    pub simulated_usd: f64,
    /// (simulated − recorded) / recorded × 100 over the sum.
    pub error_pct: f64,
    /// Per call |simulated − recorded| / recorded × 100: median and p90.
    pub median_abs_error_pct: Option<f64>,
    pub p90_abs_error_pct: Option<f64>,
    /// Share of the prompt read from cache, recorded and simulated.
    pub read_share_recorded: f64,
    pub read_share_simulated: f64,
    /// The per-call errors (kept for aggregation; not serialized).
    #[serde(skip)]
    pub call_errors: Vec<f64>,
    #[serde(skip)]
    pub read_tokens: (u64, u64, u64, u64),
}

/// What a [`RecordedCheck`] keeps for the totals without showing it in a
/// report: carried apart by a shard's partial, so merged totals are those of
/// one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckDetail {
    pub call_errors: Vec<f64>,
    pub read_tokens: (u64, u64, u64, u64),
}

impl SessionCost {
    /// What the agent paid: its calls and its own summary requests.
    pub fn baseline_usd(&self) -> f64 {
        round_usd(self.baseline.usd + self.agent_summaries.bill.usd)
    }

    /// The unshown part of the recorded-usage check, if there is one.
    pub fn detail(&self) -> Option<CheckDetail> {
        self.recorded.as_ref().map(|r| CheckDetail { call_errors: r.call_errors.clone(), read_tokens: r.read_tokens })
    }

    /// Put back what [`Self::detail`] took.
    pub fn restore(&mut self, d: CheckDetail) {
        if let Some(r) = &mut self.recorded {
            r.call_errors = d.call_errors;
            r.read_tokens = d.read_tokens;
        }
    }
}

/// The cost of one replay (one session under one policy).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionCost {
    /// The family most calls were priced as.
    pub family: String,
    pub model_source: Option<ModelSource>,
    /// Calls priced as the fallback family (no or unknown model name).
    pub fallback_calls: u64,
    /// Of them, calls per unknown model name ([`unknown_model_key`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown_models: BTreeMap<String, u64>,
    /// Calls of no model name priced as their agent's default model.
    #[serde(default)]
    pub agent_model_calls: u64,
    /// Calls served in fast mode, at their family's fast-mode prices or,
    /// for `fast_at_standard_calls` of them, at the standard ones.
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub fast_calls: u64,
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub fast_at_standard_calls: u64,
    /// Calls of a family priced by time of day ([`OffPeak`]) billed at its
    /// off-peak prices; calls sent before a date of a family's earlier prices
    /// ([`Family::earlier`]), billed at them; and calls of either kind of
    /// family of no timestamp, billed at its latest listed prices.
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub off_peak_calls: u64,
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub earlier_price_calls: u64,
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub untimed_listed_calls: u64,
    pub calls_without_timestamp: u64,
    pub ttl: Option<CacheTtl>,
    pub baseline: Bill,
    /// The requests that wrote the agent's own compactions' summaries: the
    /// baseline's too ([`SessionCost::baseline_usd`]).
    #[serde(default, skip_serializing_if = "AgentSummaries::is_empty")]
    pub agent_summaries: AgentSummaries,
    pub policy: Bill,
    /// LLM summaries, at the summarizer's price.
    pub summarizer_usd: f64,
    /// baseline (its calls and the agent's summary requests) − policy − summarizer.
    pub saved_usd: f64,
    /// saved / baseline × 100.
    pub saved_pct: f64,
    /// The policy sent fewer tokens than the baseline but costs more: what it
    /// pruned or compacted broke the cached prefix (or its summaries cost more).
    pub sheds_tokens_costs_more: bool,
    pub recorded: Option<RecordedCheck>,
}

/// Distinct unknown model names a session keeps, and a total once finished
/// (those of the most calls); the calls of any further name count under
/// [`OTHER_UNKNOWN_MODELS`].
pub const MAX_UNKNOWN_MODELS: usize = 20;
/// Distinct names a total gathers before it keeps those of the most calls.
const GATHERED_UNKNOWN_MODELS: usize = 1_000;
/// The key of the calls of unknown names not listed one by one: past
/// [`MAX_UNKNOWN_MODELS`], or not a plain model name.
pub const OTHER_UNKNOWN_MODELS: &str = "(other names)";

/// How an unknown model name is listed: as recorded (trimmed) when it is a
/// plain name (ASCII letters, digits and `-._:/`, at most 64 bytes), else
/// [`OTHER_UNKNOWN_MODELS`], so that markup or a whole line a log put in a
/// model field is never carried along. (Whoever prints one still screens it
/// for secrets.)
pub fn unknown_model_key(name: &str) -> String {
    let name = name.trim();
    let plain = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._:/".contains(&b));
    if plain { name.to_string() } else { OTHER_UNKNOWN_MODELS.to_string() }
}

/// Add `calls` to `key`, or to [`OTHER_UNKNOWN_MODELS`] once `map` holds `cap` names.
fn count_unknown(map: &mut BTreeMap<String, u64>, key: String, calls: u64, cap: usize) {
    let key = if map.len() >= cap && !map.contains_key(&key) { OTHER_UNKNOWN_MODELS.to_string() } else { key };
    *map.entry(key).or_insert(0) += calls;
}

/// Keep the [`MAX_UNKNOWN_MODELS`] names of the most calls (at equal counts
/// the first by name); the others' calls count under [`OTHER_UNKNOWN_MODELS`].
fn keep_most_called(map: &mut BTreeMap<String, u64>) {
    let other = map.remove(OTHER_UNKNOWN_MODELS).unwrap_or(0);
    let mut named: Vec<(String, u64)> = std::mem::take(map).into_iter().collect();
    named.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let rest: u64 = named.iter().skip(MAX_UNKNOWN_MODELS).map(|(_, n)| n).sum();
    named.truncate(MAX_UNKNOWN_MODELS);
    map.extend(named);
    if other + rest > 0 {
        map.insert(OTHER_UNKNOWN_MODELS.to_string(), other + rest);
    }
}

/// USD rounded to a millionth of a dollar, so reports are short and stable.
pub fn round_usd(x: f64) -> f64 {
    if x.is_finite() { (x * 1e6).round() / 1e6 } else { 0.0 }
}

fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { crate::num::round4(part / whole * 100.0) } else { 0.0 }
}

/// The price family of each of a session's calls and of its summarizer,
/// resolved once: `compare` and a sweep price the same session under every
/// policy, and resolving a name matches it against every family's fragments.
#[derive(Debug, Clone)]
pub struct SessionModels {
    /// Per call of the session: its family and why.
    calls: Vec<(usize, ModelSource)>,
    /// For a row whose call is not the session's (no recorded model).
    unknown: (usize, ModelSource),
    /// The family `summarizer_model` names, if it names one.
    summarizer: Option<usize>,
}

impl SessionModels {
    pub fn of(session: &Session, settings: &CostSettings) -> SessionModels {
        let table = &settings.table;
        let model_override = settings.model_override.as_deref();
        let agent = crate::read::format::default_model(session.format);
        // Resolution per distinct model name (a session has a handful).
        let mut memo: Vec<(Option<&str>, (usize, ModelSource))> = Vec::new();
        let mut calls = Vec::with_capacity(session.calls.len());
        for model in session.calls.iter().map(|c| c.model.as_deref()) {
            let r = match memo.iter().find(|m| m.0 == model) {
                Some(&(_, r)) => r,
                None => {
                    let r = table.resolve(model, model_override, agent);
                    memo.push((model, r));
                    r
                }
            };
            calls.push(r);
        }
        let unknown = table.resolve(None, model_override, agent);
        let summarizer = settings.summarizer_model.as_deref().and_then(|m| table.find(m));
        SessionModels { calls, unknown, summarizer }
    }
}

/// Price one replay. `trace.calls[k].call` indexes `session.calls` (model names,
/// recorded usage); a row whose index is out of range is priced as a call with
/// no recorded model (the fallback family, or `--model`'s).
pub fn session_cost(session: &Session, trace: &SessionTrace, settings: &CostSettings) -> SessionCost {
    session_cost_with(session, trace, settings, &SessionModels::of(session, settings), true)
}

/// [`session_cost`] with the session's models resolved beforehand (`models`,
/// of the same session and settings; a family index another table gave is
/// priced as the fallback, never out of bounds). `call_errors`: keep the per-call errors
/// of the recorded-usage check, and their median and p90; without them (a
/// sweep keeps only totals) they are empty and `None`.
pub fn session_cost_with(
    session: &Session,
    trace: &SessionTrace,
    settings: &CostSettings,
    models: &SessionModels,
    call_errors: bool,
) -> SessionCost {
    let table = &settings.table;
    let ttl = settings.ttl.of_session(session);
    let mut out = SessionCost { ttl: Some(ttl), ..SessionCost::default() };
    let mut family_calls: Vec<u64> = vec![0; table.families.len()];
    let mut sources: Vec<ModelSource> = Vec::new();
    let mut prev_ts: Option<i64> = None;
    let mut check = RecordedCheck::default();
    let (mut rec_read, mut rec_total, mut sim_read, mut sim_total) = (0u64, 0u64, 0u64, 0u64);
    for (k, row) in trace.calls.iter().enumerate() {
        let call = session.calls.get(row.call);
        let (fi, source) = models.calls.get(row.call).copied().unwrap_or(models.unknown);
        let fi = if fi < table.families.len() { fi } else { table.fallback };
        family_calls[fi] += 1;
        sources.push(source);
        out.fallback_calls += u64::from(source == ModelSource::Fallback);
        if let Some(m) = call.and_then(|c| c.model.as_deref()).filter(|_| source == ModelSource::Fallback) {
            count_unknown(&mut out.unknown_models, unknown_model_key(m), 1, MAX_UNKNOWN_MODELS);
        }
        out.agent_model_calls += u64::from(source == ModelSource::Agent);
        let family = &table.families[fi];
        let fast = call.is_some_and(|c| c.fast);
        out.fast_calls += u64::from(fast);
        out.fast_at_standard_calls += u64::from(fast && family.fast.is_none());
        if family.timed() {
            let earlier = family.earlier_at(row.timestamp);
            out.earlier_price_calls += u64::from(earlier.is_some());
            // The hours of the period the call falls in.
            let hours = earlier.map_or(family.off_peak.as_ref(), |e| e.off_peak.as_ref());
            match row.timestamp {
                Some(t) => out.off_peak_calls += u64::from(hours.is_some_and(|o| !o.is_peak(t))),
                None => out.untimed_listed_calls += 1,
            }
        }
        let at = row.timestamp;
        let (base_prices, pol_prices) =
            (&family.prices_when(row.tokens_baseline, fast, at), &family.prices_when(row.tokens_policy, fast, at));
        let gap = gap_ms(prev_ts, row);
        if row.timestamp.is_none() {
            out.calls_without_timestamp += 1;
        }
        prev_ts = row.timestamp.or(prev_ts);
        let first = k == 0;
        let base = split_request(row.tokens_baseline, row.prefix_baseline, first, gap, ttl);
        let pol = split_request(row.tokens_policy, row.prefix_policy, first, gap, ttl);
        let base_usd = base.usd(base_prices, ttl);
        out.baseline.add_input(&base, base_usd);
        out.policy.add_input(&pol, pol.usd(pol_prices, ttl));
        if let Some(u) = call.and_then(|c| c.usage) {
            out.baseline.output += u.output;
            out.policy.output += u.output;
            // A long-context tier bills the output of a long request too.
            out.baseline.usd += u.output as f64 * base_prices.output / 1e6;
            out.policy.usd += u.output as f64 * pol_prices.output / 1e6;
            if has_cache_fields(&u) {
                let rec = Split { uncached: u.uncached_input, cache_read: u.cache_read, cache_write: u.cache_write };
                let rec_usd = rec.usd(&family.prices_when(rec.total(), fast, at), ttl);
                check.calls += 1;
                check.recorded_usd += rec_usd;
                check.simulated_usd += base_usd;
                if call_errors && rec_usd > 0.0 {
                    check.call_errors.push((base_usd - rec_usd).abs() / rec_usd * 100.0);
                }
                rec_read += rec.cache_read;
                rec_total += rec.total();
                sim_read += base.cache_read;
                sim_total += base.total();
            }
        }
    }
    // Summaries: uncached input + output at the summarizer's price.
    let dominant = family_calls.iter().enumerate().max_by_key(|&(i, n)| (*n, std::cmp::Reverse(i))).map(|(i, _)| i);
    let session_family = dominant.filter(|&i| family_calls[i] > 0).unwrap_or(table.fallback);
    let summ_family = models.summarizer.filter(|&i| i < table.families.len()).unwrap_or(session_family);
    out.agent_summaries = agent_summaries::bill(session, trace, table, models, ttl);
    for c in &trace.compactions {
        let u = &c.summarizer_usage;
        // At the hour of the call it was made at.
        let at = trace.calls.iter().find(|r| r.call == c.call).and_then(|r| r.timestamp);
        let sp = table.families[summ_family].prices_when(u.input_tokens, false, at);
        out.summarizer_usd += (u.input_tokens as f64 * sp.input + u.output_tokens as f64 * sp.output) / 1e6;
    }
    out.family = table.families[session_family].name.clone();
    out.model_source = sources.iter().copied().max();
    let baseline_usd = out.baseline.usd + out.agent_summaries.bill.usd;
    out.saved_usd = round_usd(baseline_usd - out.policy.usd - out.summarizer_usd);
    out.saved_pct = pct(baseline_usd - out.policy.usd - out.summarizer_usd, baseline_usd);
    out.sheds_tokens_costs_more = trace.metrics.input_tokens_policy < trace.metrics.input_tokens_baseline
        && out.policy.usd + out.summarizer_usd > baseline_usd + 1e-9;
    out.baseline = out.baseline.rounded();
    out.agent_summaries = out.agent_summaries.rounded();
    out.policy = out.policy.rounded();
    out.summarizer_usd = round_usd(out.summarizer_usd);
    if check.calls > 0 {
        check.read_tokens = (rec_read, rec_total, sim_read, sim_total);
        out.recorded = Some(finish_check(check));
    }
    out
}

fn finish_check(mut c: RecordedCheck) -> RecordedCheck {
    let (rr, rt, sr, st) = c.read_tokens;
    c.error_pct = pct(c.simulated_usd - c.recorded_usd, c.recorded_usd);
    c.median_abs_error_pct = crate::accuracy::median(&c.call_errors);
    c.p90_abs_error_pct = crate::accuracy::p90(&c.call_errors);
    c.read_share_recorded = if rt > 0 { crate::num::round4(rr as f64 / rt as f64) } else { 0.0 };
    c.read_share_simulated = if st > 0 { crate::num::round4(sr as f64 / st as f64) } else { 0.0 };
    c.recorded_usd = round_usd(c.recorded_usd);
    c.simulated_usd = round_usd(c.simulated_usd);
    c
}

fn gap_ms(prev: Option<i64>, row: &CallRow) -> Option<i64> {
    match (prev, row.timestamp) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    }
}

/// Whether a recorded usage shows the prompt cache at work (some tokens read or
/// written). A log of a harness that never caches has nothing to check against.
fn has_cache_fields(u: &crate::model::Usage) -> bool {
    u.cache_read > 0 || u.cache_write > 0
}

/// Costs of one policy summed over sessions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CostTotals {
    pub sessions: u64,
    pub baseline: Bill,
    /// As in [`SessionCost`]: part of the baseline ([`CostTotals::baseline_usd`]).
    #[serde(default, skip_serializing_if = "AgentSummaries::is_empty")]
    pub agent_summaries: AgentSummaries,
    pub policy: Bill,
    pub summarizer_usd: f64,
    pub saved_usd: f64,
    pub saved_pct: f64,
    /// Sessions where the policy sheds tokens but costs more.
    pub sessions_sheds_tokens_costs_more: u64,
    pub fallback_calls: u64,
    /// Of them, calls per unknown model name ([`unknown_model_key`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown_models: BTreeMap<String, u64>,
    /// Calls of no model name priced as their agent's default model.
    #[serde(default)]
    pub agent_model_calls: u64,
    /// Calls served in fast mode; of them, priced at the standard rates.
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub fast_calls: u64,
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub fast_at_standard_calls: u64,
    /// Calls billed at off-peak prices, at a family's earlier prices, and
    /// calls of a family priced by hour or date with no timestamp, billed at
    /// its latest listed ones (as in [`SessionCost`]).
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub off_peak_calls: u64,
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub earlier_price_calls: u64,
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub untimed_listed_calls: u64,
    pub calls_without_timestamp: u64,
    /// The baseline simulation against recorded usage over every checked call.
    pub recorded: Option<RecordedCheck>,
    #[serde(skip)]
    check: RecordedCheck,
}

impl CostTotals {
    /// What the agent paid: its calls and its own summary requests.
    pub fn baseline_usd(&self) -> f64 {
        round_usd(self.baseline.usd + self.agent_summaries.bill.usd)
    }

    pub fn add(&mut self, c: &SessionCost) {
        self.sessions += 1;
        self.baseline.add(&c.baseline);
        self.agent_summaries.add(&c.agent_summaries);
        self.policy.add(&c.policy);
        self.summarizer_usd += c.summarizer_usd;
        self.sessions_sheds_tokens_costs_more += u64::from(c.sheds_tokens_costs_more);
        self.fallback_calls += c.fallback_calls;
        for (m, n) in &c.unknown_models {
            count_unknown(&mut self.unknown_models, m.clone(), *n, GATHERED_UNKNOWN_MODELS);
        }
        self.agent_model_calls += c.agent_model_calls;
        self.fast_calls += c.fast_calls;
        self.fast_at_standard_calls += c.fast_at_standard_calls;
        self.off_peak_calls += c.off_peak_calls;
        self.earlier_price_calls += c.earlier_price_calls;
        self.untimed_listed_calls += c.untimed_listed_calls;
        self.calls_without_timestamp += c.calls_without_timestamp;
        if let Some(r) = &c.recorded {
            let k = &mut self.check;
            k.calls += r.calls;
            k.recorded_usd += r.recorded_usd;
            k.simulated_usd += r.simulated_usd;
            k.call_errors.extend_from_slice(&r.call_errors);
            k.read_tokens.0 += r.read_tokens.0;
            k.read_tokens.1 += r.read_tokens.1;
            k.read_tokens.2 += r.read_tokens.2;
            k.read_tokens.3 += r.read_tokens.3;
        }
    }

    /// Totals and percentages once every session is added.
    pub fn finish(mut self) -> CostTotals {
        keep_most_called(&mut self.unknown_models);
        let baseline_usd = self.baseline.usd + self.agent_summaries.bill.usd;
        let saved = baseline_usd - self.policy.usd - self.summarizer_usd;
        self.saved_pct = pct(saved, baseline_usd);
        self.saved_usd = round_usd(saved);
        self.baseline = self.baseline.rounded();
        self.agent_summaries = self.agent_summaries.rounded();
        self.policy = self.policy.rounded();
        self.summarizer_usd = round_usd(self.summarizer_usd);
        if self.check.calls > 0 {
            self.recorded = Some(finish_check(std::mem::take(&mut self.check)));
        }
        self
    }
}

/// How a report's costs were computed, for report.json and report.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostModelInfo {
    pub ttl: CacheTtl,
    pub model_override: Option<String>,
    pub summarizer_model: Option<String>,
    pub fallback_family: String,
    /// The families that priced at least one call, with their prices.
    pub families_used: Vec<Family>,
    /// Families changed or added by a prices file.
    pub user_families: Vec<String>,
}

/// Total the priced rows of each policy (`rows`: policy index and cost), and
/// describe the cost model with the families that priced at least one call.
pub fn totals<'c>(
    policies: usize,
    rows: impl Iterator<Item = (usize, &'c SessionCost)>,
    settings: &CostSettings,
) -> (Vec<CostTotals>, CostModelInfo) {
    use std::collections::BTreeSet;
    let mut used: BTreeSet<&str> = BTreeSet::new();
    let mut totals: Vec<CostTotals> = vec![CostTotals::default(); policies];
    for (i, c) in rows {
        used.insert(c.family.as_str());
        if let Some(t) = totals.get_mut(i) {
            t.add(c);
        }
    }
    let table = &settings.table;
    let info = CostModelInfo {
        ttl: settings.ttl,
        model_override: settings.model_override.clone(),
        summarizer_model: settings.summarizer_model.clone(),
        fallback_family: table.families[table.fallback].name.clone(),
        families_used: table.families.iter().filter(|f| used.contains(f.name.as_str())).cloned().collect(),
        user_families: table.families.iter().filter(|f| f.user).map(|f| f.name.clone()).collect(),
    };
    (totals.into_iter().map(CostTotals::finish).collect(), info)
}
