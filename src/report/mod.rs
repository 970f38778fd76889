//! The replay report (DESIGN.md §7): one versioned structure built from the
//! replay results, and pure exporters that turn it into bytes (`report.json`,
//! `sessions.csv`, `calls.csv`, `report.md`, transcripts). Nothing here touches
//! the file system; `write` puts the bytes under `--out` through
//! `output::fsutil` (sanitized names, atomic writes).

pub mod csv_out;
pub mod markdown;
pub mod quality;
pub mod write;

use crate::model::{Diagnostic, Format, Session};
use crate::policy::Policy;
use crate::quality::{QualityAggregate, SessionQuality};
use crate::replay::{SessionMetrics, SessionResults, SessionTrace};
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRow {
    pub session_id: String,
    pub source_path: String,
    pub format: Format,
    pub parent: Option<String>,
    pub policy: String,
    pub messages: usize,
    pub system_tokens: u64,
    /// `policy`, `calibrated` (from the first recorded usage) or `zero`.
    pub system_tokens_source: String,
    pub metrics: SessionMetrics,
    pub violations: usize,
    /// Why this session could not be replayed under this policy.
    pub error: Option<String>,
    /// Summary quality of every applied compaction and the pruning loss
    /// (`report::quality`); absent with `--no-quality`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<SessionQuality>,
}

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
    pub net_savings_tokens: i64,
    pub violations: u64,
    /// Summary quality over this policy's sessions; absent with `--no-quality`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<QualityAggregate>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticSummary {
    /// Inputs that could not be read at all.
    pub failed_inputs: Vec<Diagnostic>,
    /// Malformed lines skipped, over all sessions.
    pub bad_lines: u64,
    /// Warnings over all sessions (`path:line: reason`), sorted.
    pub warnings: Vec<String>,
    /// Every time the LLM summarizer fell back (full → chunked → extractive), with
    /// the reason; sorted.
    #[serde(default)]
    pub summarizer_fallbacks: Vec<String>,
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
    let mut rows = Vec::with_capacity(results.len() * policies.len());
    for r in results {
        let Some(session) = by_key.get(&(r.session_id.as_str(), r.source_path.as_path())) else { continue };
        for (policy, trace) in policies.iter().zip(&r.traces) {
            rows.push(row(session, policy, trace.as_ref().map_err(|e| e.to_string())));
        }
    }
    let aggregates = policies.iter().map(|p| aggregate(&p.name, rows.iter().filter(|r| r.policy == p.name))).collect();
    let mut warnings: Vec<String> =
        sessions.iter().flat_map(|s| s.diagnostics.messages.iter().map(|d| d.to_string())).collect();
    warnings.sort();
    let mut failed = failed_inputs.to_vec();
    failed.sort();
    Report {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo { name: "compactor".into(), version: env!("CARGO_PKG_VERSION").into() },
        run: RunInfo { inputs: inputs.to_vec(), inputs_read, sessions: sessions.len(), check_invariants },
        policies: policies.to_vec(),
        sessions: rows,
        aggregates,
        diagnostics: DiagnosticSummary {
            failed_inputs: failed,
            bad_lines: sessions.iter().map(|s| s.diagnostics.bad_lines).sum(),
            warnings,
            summarizer_fallbacks: Vec::new(),
        },
    }
}

fn row(session: &Session, policy: &Policy, trace: Result<&SessionTrace, String>) -> SessionRow {
    let base = SessionRow {
        session_id: session.id.clone(),
        source_path: session.source_path.display().to_string(),
        format: session.format,
        parent: session.parent.clone(),
        policy: policy.name.clone(),
        messages: session.messages.len(),
        system_tokens: 0,
        system_tokens_source: String::new(),
        metrics: SessionMetrics::default(),
        violations: 0,
        error: None,
        quality: None,
    };
    match trace {
        Ok(t) => SessionRow {
            system_tokens: t.system_tokens,
            system_tokens_source: serde_json::to_value(t.system_tokens_source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            metrics: t.metrics.clone(),
            violations: t.violations.len(),
            ..base
        },
        Err(e) => SessionRow { error: Some(e), ..base },
    }
}

fn aggregate<'a>(policy: &str, rows: impl Iterator<Item = &'a SessionRow>) -> Aggregate {
    let mut a = Aggregate { policy: policy.to_string(), ..Aggregate::default() };
    let mut per_session = Vec::new();
    for r in rows {
        if r.error.is_some() {
            a.sessions_failed += 1;
            continue;
        }
        let m = &r.metrics;
        a.sessions += 1;
        a.calls += m.calls;
        a.input_tokens_baseline += m.input_tokens_baseline;
        a.input_tokens_policy += m.input_tokens_policy;
        a.input_tokens_recorded += m.input_tokens_recorded;
        a.peak_baseline = a.peak_baseline.max(m.peak_baseline);
        a.peak_policy = a.peak_policy.max(m.peak_policy);
        a.overflow_calls_baseline += m.overflow_calls_baseline;
        a.overflow_calls_policy += m.overflow_calls_policy;
        a.sessions_overflowing_baseline += u64::from(m.overflow_calls_baseline > 0);
        a.sessions_overflowing_policy += u64::from(m.overflow_calls_policy > 0);
        a.compactions += m.compactions;
        a.no_progress_compactions += m.no_progress_compactions;
        a.pruned_soft += m.pruned_soft;
        a.pruned_hard += m.pruned_hard;
        a.pruned_chars_freed += m.pruned_chars_freed;
        a.flush_points += m.flush_points;
        a.summarizer_tokens += m.summarizer_tokens;
        a.net_savings_tokens += m.net_savings_tokens;
        a.violations += r.violations as u64;
        if m.calls > 0 {
            per_session.push(m.savings_pct);
        }
    }
    a.savings_pct = savings_pct(a.input_tokens_baseline, a.input_tokens_policy);
    a.median_session_savings_pct = round4(median(&mut per_session));
    a
}

/// (baseline − policy) / baseline × 100, rounded to 4 decimals so the JSON is
/// stable and short.
pub fn savings_pct(baseline: u64, policy: u64) -> f64 {
    if baseline == 0 {
        return 0.0;
    }
    round4((baseline as f64 - policy as f64) / baseline as f64 * 100.0)
}

pub fn round4(x: f64) -> f64 {
    if x.is_finite() { (x * 10_000.0).round() / 10_000.0 } else { 0.0 }
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// `report.json`: pretty-printed, newline-terminated.
pub fn to_json(report: &Report) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(report).unwrap_or_default();
    out.push(b'\n');
    out
}

/// One transcript as JSONL: one normalized message per line; summaries carry
/// `"origin": "compact_summary"`.
pub fn transcript_jsonl(trace: &SessionTrace) -> Vec<u8> {
    let mut out = Vec::new();
    for m in &trace.transcript {
        // Serializing the model's own types cannot fail.
        if serde_json::to_writer(&mut out, m).is_ok() {
            out.push(b'\n');
        }
    }
    out
}
