//! What a run comes to, as one versioned value (DESIGN.md §7): a row per
//! (session, policy), totals per policy, diagnostics. Built here from the batch
//! runner's results; the exporters in `report/` turn it into files.

use super::SessionResults;
use crate::model::{Diagnostic, Format, Session};
use crate::num::{median, round4, savings_pct};
use crate::policy::Policy;
use crate::quality::{
    QualityAggregate, RecordedAggregate, RecordedQuality, SessionQuality, aggregate_recorded, aggregate_sessions,
};
use crate::replay::{SessionMetrics, SessionTrace};
use serde::{Deserialize, Serialize};

/// Bumped whenever a field of [`Report`] changes meaning or disappears.
/// 2: summary quality (`sessions[].quality`, `aggregates[].quality`).
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub run: RunInfo,
    /// Every policy replayed, in the order given, with all parameters.
    pub policies: Vec<Policy>,
    /// One row per (session, policy), sorted by session id, source path, then
    /// policy order.
    pub sessions: Vec<SessionRow>,
    /// One per policy, in policy order.
    pub aggregates: Vec<Aggregate>,
    pub diagnostics: DiagnosticSummary,
    /// How costs were computed (`Report::total_costs`); absent when they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_model: Option<crate::cost::CostModelInfo>,
    /// The compactions the agents made themselves, scored next to compactor's
    /// summarizers at the same points: one entry per session that records any
    /// (in session order), and one aggregate per agent and version. Empty
    /// without the quality pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recorded: Vec<RecordedQuality>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recorded_aggregates: Vec<RecordedAggregate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

/// What was run. Contains nothing that varies between identical runs (no
/// timestamps, durations or thread counts), so reports are byte-identical.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub inputs: Vec<String>,
    pub inputs_read: usize,
    pub sessions: usize,
    pub check_invariants: bool,
    /// What every size in the report was measured with.
    #[serde(default)]
    pub meter: MeterInfo,
}

/// A policy whose trigger point lies above the window of every session of
/// the run (compaction on): a request that big already overflows. It
/// compacts only once a context grows past the window, if one does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerAboveWindow {
    pub policy: String,
    /// The lowest trigger point and the largest window of its sessions.
    pub trigger: u64,
    pub window: u64,
    /// The compactions it made all the same, past the window.
    pub compactions: u64,
}

/// The policies of the run whose trigger lies above every session's window.
pub fn trigger_above_window(report: &Report) -> Vec<TriggerAboveWindow> {
    let mut out = Vec::new();
    for p in report.policies.iter().filter(|p| p.compact.enabled) {
        let rows: Vec<&SessionRow> =
            report.sessions.iter().filter(|r| r.policy == p.name && r.error.is_none() && r.metrics.calls > 0).collect();
        let points: Vec<(u64, u64)> = rows
            .iter()
            .filter_map(|r| p.with_window(r.context_window).ok().map(|q| (q.trigger_point(), r.context_window)))
            .collect();
        if !points.is_empty() && points.iter().all(|&(t, w)| t > w) {
            out.push(TriggerAboveWindow {
                policy: p.name.clone(),
                trigger: points.iter().map(|x| x.0).min().unwrap_or(0),
                window: points.iter().map(|x| x.1).max().unwrap_or(0),
                compactions: rows.iter().map(|r| r.metrics.compactions).sum(),
            });
        }
    }
    out
}

impl TriggerAboveWindow {
    /// The warning, in words: `name`, `trigger` and `window` as the output
    /// shows them (the name escaped for it, the counts formatted).
    pub fn sentence(&self, name: &str, trigger: &str, window: &str) -> String {
        if self.compactions == 0 {
            format!(
                "`{name}` cannot compact in this run: its trigger ({trigger}) is above every session's window ({window})"
            )
        } else {
            format!(
                "`{name}` compacts only past the window in this run: its trigger ({trigger}) is above every session's \
window ({window}), so its {} compaction(s) came after calls that overflowed",
                crate::num::thousands(self.compactions)
            )
        }
    }
}

/// How many sessions got their window from where (policies with
/// `context_window = "auto"` only), counted once per session.
pub fn window_sources(report: &Report) -> Vec<(String, usize)> {
    let auto: std::collections::HashSet<&str> =
        report.policies.iter().filter(|p| p.window_is_auto()).map(|p| p.name.as_str()).collect();
    let mut seen = std::collections::HashSet::new();
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for r in report.sessions.iter().filter(|r| auto.contains(r.policy.as_str()) && r.error.is_none()) {
        if seen.insert((&r.session_id, &r.source_path)) {
            *counts.entry(r.window_source.clone()).or_default() += 1;
        }
    }
    counts.into_iter().collect()
}

/// The run's meter and how many calls it measured from recorded usage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MeterInfo {
    pub name: crate::tokens::Meter,
    /// Calls (each counted once, whatever the number of policies) whose size
    /// is their recorded usage.
    pub calls_recorded: u64,
    /// Calls measured by the meter's estimate.
    pub calls_estimated: u64,
}

impl MeterInfo {
    /// Counted over the rows of a report (one session's rows share its calls).
    pub fn of(meter: crate::tokens::Meter, rows: &[SessionRow]) -> MeterInfo {
        let mut seen: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
        let (mut calls, mut with_usage) = (0u64, 0u64);
        for r in rows.iter().filter(|r| r.error.is_none()) {
            if seen.insert((&r.session_id, &r.source_path)) {
                calls += r.metrics.calls;
                with_usage += r.metrics.calls_with_usage;
            }
        }
        let recorded = if meter.uses_usage() { with_usage } else { 0 };
        MeterInfo { name: meter, calls_recorded: recorded, calls_estimated: calls - recorded }
    }

    /// One sentence for people: the meter and what it measured from where.
    pub fn sentence(&self) -> String {
        match self.name {
            crate::tokens::Meter::Recorded => format!(
                "Sizes are measured by the meter `recorded`: {} call(s) from the usage the log recorded, {} estimated \
(chars/4 calibrated on the recorded usage around them).",
                self.calls_recorded, self.calls_estimated
            ),
            other => format!(
                "Sizes are measured by the meter `{other}`: {} call(s), all estimated (recorded usage ignored).",
                self.calls_estimated
            ),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRow {
    pub session_id: String,
    /// Project and title, where the log has them ([`Session::display_name`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub source_path: String,
    pub format: Format,
    pub parent: Option<String>,
    pub policy: String,
    pub messages: usize,
    pub system_tokens: u64,
    /// `policy`, `calibrated` (from the first recorded usage) or `zero`.
    pub system_tokens_source: String,
    /// The context window overflows were counted against, and where it came
    /// from (`log`, `model`, `long_context`, `agent`, `default`, `policy`).
    #[serde(default)]
    pub context_window: u64,
    #[serde(default)]
    pub window_source: String,
    pub metrics: SessionMetrics,
    pub violations: usize,
    /// The first [`MAX_VIOLATIONS_LISTED`] of them, each with its call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations_listed: Vec<crate::replay::CallViolation>,
    /// Why this session could not be replayed under this policy.
    pub error: Option<String>,
    /// Summary quality of every applied compaction and the pruning loss
    /// (`report::quality`); absent with `--no-quality`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<SessionQuality>,
    /// Prompt-cache cost (`Report::total_costs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::SessionCost>,
}

/// Invariant violations a session's row lists (the count has them all).
pub const MAX_VIOLATIONS_LISTED: usize = 20;

/// Totals of one policy over all sessions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    pub policy: String,
    pub sessions: u64,
    pub sessions_failed: u64,
    pub calls: u64,
    pub input_tokens_baseline: u64,
    pub input_tokens_policy: u64,
    pub input_tokens_recorded: u64,
    pub savings_pct: f64,
    /// Median of the per-session savings %.
    pub median_session_savings_pct: f64,
    pub peak_baseline: u64,
    pub peak_policy: u64,
    pub overflow_calls_baseline: u64,
    pub overflow_calls_policy: u64,
    pub sessions_overflowing_baseline: u64,
    pub sessions_overflowing_policy: u64,
    pub compactions: u64,
    pub no_progress_compactions: u64,
    pub pruned_soft: u64,
    pub pruned_hard: u64,
    pub pruned_chars_freed: u64,
    pub flush_points: u64,
    pub summarizer_tokens: u64,
    /// The agent's own summary requests' tokens (`SessionMetrics::agent_summary_tokens`).
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub agent_summary_tokens: u64,
    pub net_savings_tokens: i64,
    pub violations: u64,
    /// Summary quality over this policy's sessions; absent with `--no-quality`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<QualityAggregate>,
    /// Prompt-cache cost over the sessions (`Report::total_costs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::CostTotals>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticSummary {
    /// Inputs that could not be read at all.
    pub failed_inputs: Vec<Diagnostic>,
    /// Malformed lines skipped, over all sessions.
    pub bad_lines: u64,
    /// Warnings over all sessions (`path:line: reason`), sorted.
    pub warnings: Vec<String>,
    /// Every time the LLM summarizer fell back (full → chunked → extractive),
    /// or a summarizer program failed, with the reason; sorted.
    #[serde(default)]
    pub summarizer_fallbacks: Vec<String>,
    /// How many LLM summaries the run asked for and how many fell back to the
    /// extractive summarizer; absent when no policy used the LLM summarizer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_summaries: Option<LlmSummaries>,
    /// What the summarizer programs did: summaries asked, programs run,
    /// answers from the cache, fallbacks; absent when no policy has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_summaries: Option<crate::summarize::command::CommandStats>,
}

/// The LLM summaries of a run, counted: what `report.md` and the end of the
/// run on stderr say when some fell back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmSummaries {
    /// Summaries asked of the LLM summarizer (a compaction's history and its
    /// turn prefix count apart; one with nothing new to summarize, whose
    /// previous summary stands, asks nothing).
    pub requested: u64,
    /// Of those, the ones the extractive summarizer wrote because every LLM
    /// stage failed (server down, bad key, timeout, ...).
    pub fell_back: u64,
    /// Why the first of them (in time) fell back; never holds the API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_reason: Option<String>,
}

impl LlmSummaries {
    /// Count `o`'s summaries in too (the first reason stays the first one's).
    pub fn add(&mut self, o: &LlmSummaries) {
        self.requested += o.requested;
        self.fell_back += o.fell_back;
        if self.first_reason.is_none() {
            self.first_reason.clone_from(&o.first_reason);
        }
    }

    /// Whether summaries were asked and the extractive summarizer wrote
    /// every one: nothing the run measured came from the LLM.
    pub fn all_fell_back(&self) -> bool {
        self.fell_back > 0 && self.fell_back >= self.requested
    }

    /// One line saying how many summaries fell back and the first reason;
    /// `None` when none did. Every one falling back reads "every LLM summary
    /// fell back to extractive: …".
    pub fn notice(&self) -> Option<String> {
        if self.fell_back == 0 {
            return None;
        }
        let reason = self.first_reason.as_deref().unwrap_or("no reason recorded");
        let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
        let (n, of) = (self.fell_back, self.requested.max(self.fell_back));
        Some(if n == of {
            format!("every LLM summary fell back to extractive: {n} of {of}, the first because {reason}")
        } else {
            format!("{n} of {of} LLM summaries fell back to extractive, the first because {reason}")
        })
    }
}

/// What the report keeps of one session once it is replayed: everything the
/// report is built from, so the session and its traces can be dropped (a
/// streaming replay keeps one of these per session, not the session).
/// Per-session values added to the report (cost, quality, ...) belong here,
/// computed in [`summarize`] (or next to it, in the per-session work of the
/// streaming replay) while the session and its traces are alive; new fields
/// leave the existing ones as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// One row per policy, in policy order.
    pub rows: Vec<SessionRow>,
    /// The session's own warnings (`path:line: reason`), as listed.
    pub warnings: Vec<Diagnostic>,
    /// Warnings past the listing limit, only counted.
    pub unlisted_warnings: u64,
    pub bad_lines: u64,
    /// The compactions the log records, scored ([`SessionResults::recorded`](super::SessionResults)).
    pub recorded: Option<RecordedQuality>,
}

/// The summary of one session's replays (`results.traces` in policy order).
/// With `cost`, each replayed row is priced (`cost::session_cost` needs the
/// session's calls, so it is done here rather than when the report is built;
/// `Report::total_costs` then totals the rows).
pub fn summarize(
    session: &Session,
    policies: &[Policy],
    results: &SessionResults,
    cost: Option<&crate::cost::CostSettings>,
) -> SessionSummary {
    SessionSummary {
        rows: policies
            .iter()
            .zip(&results.traces)
            .enumerate()
            .map(|(pi, (policy, trace))| {
                let mut r = row(session, policy, trace.as_ref().map_err(|e| e.to_string()));
                r.name.clone_from(&results.name);
                r.quality = results.quality.get(pi).cloned().flatten();
                if let (Some(settings), Ok(t)) = (cost, trace) {
                    r.cost = Some(crate::cost::session_cost(session, t, settings));
                }
                r
            })
            .collect(),
        warnings: session.diagnostics.messages.clone(),
        unlisted_warnings: session.diagnostics.unlisted,
        bad_lines: session.diagnostics.bad_lines,
        recorded: results.recorded.clone(),
    }
}

/// Build the report. `results` must be in the order `replay_many` returns them
/// (sorted); `sessions` is looked up by (id, source path).
pub fn build(
    inputs: &[String],
    inputs_read: usize,
    sessions: &[Session],
    failed_inputs: &[Diagnostic],
    policies: &[Policy],
    results: &[SessionResults],
    check_invariants: bool,
) -> Report {
    use std::collections::HashMap;
    let by_key: HashMap<(&str, &std::path::Path), &Session> =
        sessions.iter().map(|s| ((s.id.as_str(), s.source_path.as_path()), s)).collect();
    let summaries: Vec<SessionSummary> = results
        .iter()
        .filter_map(|r| {
            by_key.get(&(r.session_id.as_str(), r.source_path.as_path())).map(|s| summarize(s, policies, r, None))
        })
        .collect();
    let mut report = build_from_summaries(inputs, inputs_read, failed_inputs, policies, &summaries, check_invariants);
    // Every session read counts, replayed or not; warnings too.
    report.run.sessions = sessions.len();
    let mut warnings: Vec<String> =
        sessions.iter().flat_map(|s| s.diagnostics.messages.iter().map(|d| d.to_string())).collect();
    warnings.sort();
    report.diagnostics.warnings = warnings;
    report.diagnostics.bad_lines = sessions.iter().map(|s| s.diagnostics.bad_lines).sum();
    report
}

/// Build the report from per-session summaries, in report order (sorted by
/// session id, source path, then input position).
pub fn build_from_summaries(
    inputs: &[String],
    inputs_read: usize,
    failed_inputs: &[Diagnostic],
    policies: &[Policy],
    summaries: &[SessionSummary],
    check_invariants: bool,
) -> Report {
    let rows: Vec<SessionRow> = summaries.iter().flat_map(|s| s.rows.iter().cloned()).collect();
    let mut aggregates: Vec<Aggregate> =
        policies.iter().map(|p| aggregate(&p.name, rows.iter().filter(|r| r.policy == p.name))).collect();
    attach_quality(&mut aggregates, &rows);
    let mut warnings: Vec<String> = summaries.iter().flat_map(|s| s.warnings.iter().map(|d| d.to_string())).collect();
    warnings.sort();
    // Paths as text: serde refuses a non-UTF-8 path, and the whole report with it.
    let mut failed: Vec<Diagnostic> = failed_inputs
        .iter()
        .map(|d| Diagnostic { path: d.path.to_string_lossy().into_owned().into(), ..d.clone() })
        .collect();
    failed.sort();
    let recorded: Vec<RecordedQuality> = summaries.iter().filter_map(|s| s.recorded.clone()).collect();
    Report {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo { name: "compactor".into(), version: env!("CARGO_PKG_VERSION").into() },
        run: RunInfo {
            inputs: inputs.to_vec(),
            inputs_read,
            sessions: summaries.len(),
            check_invariants,
            meter: MeterInfo::of(crate::tokens::Meter::Recorded, &rows),
        },
        policies: policies.to_vec(),
        sessions: rows,
        aggregates,
        diagnostics: DiagnosticSummary {
            failed_inputs: failed,
            bad_lines: summaries.iter().map(|s| s.bad_lines).sum(),
            warnings,
            summarizer_fallbacks: Vec::new(),
            llm_summaries: None,
            command_summaries: None,
        },
        cost_model: None,
        recorded_aggregates: aggregate_recorded(&recorded),
        recorded,
    }
}

fn row(session: &Session, policy: &Policy, trace: Result<&SessionTrace, String>) -> SessionRow {
    let base = SessionRow {
        session_id: session.id.clone(),
        // The caller's, computed once per session ([`SessionResults::name`]).
        name: None,
        source_path: session.source_path.display().to_string(),
        format: session.format,
        parent: session.parent.clone(),
        policy: policy.name.clone(),
        messages: session.messages.len(),
        system_tokens: 0,
        system_tokens_source: String::new(),
        context_window: 0,
        window_source: String::new(),
        metrics: SessionMetrics::default(),
        violations: 0,
        violations_listed: Vec::new(),
        error: None,
        quality: None,
        cost: None,
    };
    match trace {
        Ok(t) => SessionRow {
            system_tokens: t.system_tokens,
            system_tokens_source: serde_json::to_value(t.system_tokens_source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            context_window: t.context_window,
            window_source: t.window_source.name().to_string(),
            metrics: t.metrics.clone(),
            violations: t.violations.len(),
            violations_listed: t.violations.iter().take(MAX_VIOLATIONS_LISTED).cloned().collect(),
            ..base
        },
        Err(e) => SessionRow { error: Some(e), ..base },
    }
}

fn aggregate<'a>(policy: &str, rows: impl Iterator<Item = &'a SessionRow>) -> Aggregate {
    let mut a = Aggregate { policy: policy.to_string(), ..Aggregate::default() };
    let mut per_session = Vec::new();
    // Totals saturate: sessions with extreme recorded usage must not wrap them.
    for r in rows {
        if r.error.is_some() {
            a.sessions_failed += 1;
            continue;
        }
        let m = &r.metrics;
        a.sessions += 1;
        a.calls = a.calls.saturating_add(m.calls);
        a.input_tokens_baseline = a.input_tokens_baseline.saturating_add(m.input_tokens_baseline);
        a.input_tokens_policy = a.input_tokens_policy.saturating_add(m.input_tokens_policy);
        a.input_tokens_recorded = a.input_tokens_recorded.saturating_add(m.input_tokens_recorded);
        a.peak_baseline = a.peak_baseline.max(m.peak_baseline);
        a.peak_policy = a.peak_policy.max(m.peak_policy);
        a.overflow_calls_baseline = a.overflow_calls_baseline.saturating_add(m.overflow_calls_baseline);
        a.overflow_calls_policy = a.overflow_calls_policy.saturating_add(m.overflow_calls_policy);
        a.sessions_overflowing_baseline += u64::from(m.overflow_calls_baseline > 0);
        a.sessions_overflowing_policy += u64::from(m.overflow_calls_policy > 0);
        a.compactions = a.compactions.saturating_add(m.compactions);
        a.no_progress_compactions = a.no_progress_compactions.saturating_add(m.no_progress_compactions);
        a.pruned_soft = a.pruned_soft.saturating_add(m.pruned_soft);
        a.pruned_hard = a.pruned_hard.saturating_add(m.pruned_hard);
        a.pruned_chars_freed = a.pruned_chars_freed.saturating_add(m.pruned_chars_freed);
        a.flush_points = a.flush_points.saturating_add(m.flush_points);
        a.summarizer_tokens = a.summarizer_tokens.saturating_add(m.summarizer_tokens);
        a.agent_summary_tokens = a.agent_summary_tokens.saturating_add(m.agent_summary_tokens);
        a.net_savings_tokens = a.net_savings_tokens.saturating_add(m.net_savings_tokens);
        a.violations += r.violations as u64;
        if m.calls > 0 {
            per_session.push(m.savings_pct);
        }
    }
    a.savings_pct = savings_pct(a.input_tokens_baseline, a.input_tokens_policy);
    a.median_session_savings_pct = round4(median(&per_session).unwrap_or(0.0));
    a
}

/// Fold the rows' quality (set by [`build`] from
/// [`SessionResults::quality`](super::SessionResults)) per policy onto
/// the aggregates: only the small per-session values are read, never a trace.
fn attach_quality(aggregates: &mut [Aggregate], rows: &[SessionRow]) {
    let aggs = aggregate_sessions(rows.iter().filter_map(|r| r.quality.as_ref()));
    for a in aggregates {
        a.quality = aggs.iter().find(|q| q.policy == a.policy).cloned();
    }
}

impl Report {
    /// Total each policy over the rows [`summarize`] priced, and name the cost
    /// model (`cost::totals` computes both).
    pub fn total_costs(&mut self, settings: &crate::cost::CostSettings) {
        let names: Vec<&str> = self.policies.iter().map(|p| p.name.as_str()).collect();
        let rows = self.sessions.iter().filter_map(|r| {
            let c = r.cost.as_ref()?;
            Some((names.iter().position(|n| *n == r.policy)?, c))
        });
        let (totals, info) = crate::cost::totals(names.len(), rows, settings);
        for (a, t) in self.aggregates.iter_mut().zip(totals) {
            a.cost = Some(t);
        }
        self.cost_model = Some(info);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn row(b: u64, p: u64, r: u64, net: i64) -> SessionRow {
        SessionRow {
            session_id: "s".into(),
            name: None,
            source_path: "s.jsonl".into(),
            format: Format::Generic,
            parent: None,
            policy: "p".into(),
            messages: 2,
            system_tokens: 0,
            system_tokens_source: "zero".into(),
            context_window: 200_000,
            window_source: "default".into(),
            metrics: SessionMetrics {
                calls: 1,
                input_tokens_baseline: b,
                input_tokens_policy: p,
                input_tokens_recorded: r,
                peak_baseline: b,
                summarizer_tokens: r,
                net_savings_tokens: net,
                ..SessionMetrics::default()
            },
            violations: 0,
            violations_listed: Vec::new(),
            error: None,
            quality: None,
            cost: None,
        }
    }

    fn extreme() -> impl Strategy<Value = u64> {
        prop_oneof![Just(u64::MAX), Just(u64::MAX / 2), Just(1u64 << 40), 0u64..1_000_000]
    }

    proptest! {
        /// Totals over sessions are exact until they would overflow, then stay
        /// at `u64::MAX` (and net savings at the bounds of i64): never a wrap or
        /// a panic, whatever the recorded usage.
        #[test]
        fn totals_saturate(values in prop::collection::vec((extreme(), extreme(), extreme(), any::<i64>()), 1..12)) {
            let rows: Vec<SessionRow> = values.iter().map(|&(b, p, r, n)| row(b, p, r, n)).collect();
            let a = aggregate("p", rows.iter());
            let exact = |f: fn(&SessionMetrics) -> u64| {
                rows.iter().map(|r| u128::from(f(&r.metrics))).sum::<u128>().min(u128::from(u64::MAX)) as u64
            };
            prop_assert_eq!(a.input_tokens_baseline, exact(|m| m.input_tokens_baseline));
            prop_assert_eq!(a.input_tokens_policy, exact(|m| m.input_tokens_policy));
            prop_assert_eq!(a.input_tokens_recorded, exact(|m| m.input_tokens_recorded));
            prop_assert_eq!(a.summarizer_tokens, exact(|m| m.summarizer_tokens));
            prop_assert_eq!(a.calls, rows.len() as u64);
            prop_assert!(a.savings_pct.is_finite());
            // Net savings: saturating at each step, so exact when no step overflows.
            let exact_net = rows.iter().try_fold(0i64, |acc, r| acc.checked_add(r.metrics.net_savings_tokens));
            if let Some(n) = exact_net {
                prop_assert_eq!(a.net_savings_tokens, n);
            }
        }
    }

    #[test]
    fn net_savings_saturate() {
        use crate::replay::net_savings;
        assert_eq!(net_savings(u64::MAX, 0, 0), i64::MAX);
        assert_eq!(net_savings(0, u64::MAX, u64::MAX), i64::MIN);
        assert_eq!(net_savings(100, 40, 10), 50);
    }
}
