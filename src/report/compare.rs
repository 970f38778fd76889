//! The side-by-side view of `compactor compare` (and of a replay with several
//! policies): one column per policy with savings, cost, overflows, compactions
//! and summary quality, as a Markdown table for report.md and as text for stdout.

use super::Report;
use super::markdown::{cell, thousands};
use crate::metrics::{self, Totals, view};
use crate::quality::QualityScore;
use std::fmt::Write as _;

/// One policy's column.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyColumn {
    pub policy: String,
    /// `None`: quality not measured.
    pub quality: Option<QualityScore>,
    pub totals: Totals,
}

/// Columns from a report whose aggregates carry costs (see `Report::total_costs`).
/// `quality[i]` is the quality of policy `i`, when measured
/// ([`super::quality::policy_scores`]).
pub fn columns(report: &Report, quality: &[Option<QualityScore>]) -> Vec<PolicyColumn> {
    report
        .aggregates
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let q = quality.get(i).copied().flatten();
            PolicyColumn { policy: a.policy.clone(), quality: q, totals: Totals::from_aggregate(a, q) }
        })
        .collect()
}

/// The rows of the table: the compare metrics of the metric table, each with
/// its label and one cell per column.
pub fn rows(cols: &[PolicyColumn]) -> Vec<(String, Vec<String>)> {
    metrics::of_view(view::COMPARE)
        .map(|m| (m.compact_label(), cols.iter().map(|c| m.cell(&c.totals)).collect()))
        .collect()
}

/// Markdown table: one column per policy.
pub fn compare_md(cols: &[PolicyColumn]) -> String {
    let mut out = String::from("| |");
    for c in cols {
        let _ = write!(out, " {} |", cell(&c.policy));
    }
    out.push_str("\n|---|");
    for _ in cols {
        out.push_str("---:|");
    }
    out.push('\n');
    for (label, vals) in rows(cols) {
        let _ = write!(out, "| {label} |");
        for v in vals {
            let _ = write!(out, " {} |", cell(&v));
        }
        out.push('\n');
    }
    if cols.iter().all(|c| c.quality.is_none()) {
        out.push_str("\nFRR, artifact recall and hallucination: not measured (`--no-quality`).\n");
    } else {
        out.push_str(
            "\nFRR pooled over the compactions (weight kept / weight needed, as in check and sweep); artifact \
recall and hallucination: means over the compactions where each is defined (\"Summary quality\" below has \
every component).\n",
        );
    }
    out
}

/// Plain-text table for stdout, columns padded to their widest cell.
pub fn compare_text(cols: &[PolicyColumn]) -> String {
    let rows = rows(cols);
    let label_w = rows.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            rows.iter().map(|(_, v)| v[i].chars().count()).chain([c.policy.chars().count()]).max().unwrap_or(0)
        })
        .collect();
    let mut out = format!("{:<label_w$}", "");
    for (c, w) in cols.iter().zip(&widths) {
        let _ = write!(out, "  {:>w$}", c.policy);
    }
    out.push('\n');
    for (label, vals) in &rows {
        let _ = write!(out, "{label:<label_w$}");
        for (v, w) in vals.iter().zip(&widths) {
            let _ = write!(out, "  {v:>w$}");
        }
        out.push('\n');
    }
    out
}

/// The `## Cost` section of report.md: the cache model, totals per policy, the
/// sessions where a policy sheds tokens but costs more, and the check of the
/// simulated baseline against recorded cache usage.
pub fn cost_md(report: &Report) -> String {
    let mut out = String::new();
    let Some(cm) = &report.cost_model else { return out };
    out.push_str("## Cost\n\n");
    let _ = writeln!(
        out,
        "Prompt cache simulated with {}: the part of each request equal to the previous request (when it is no older than the TTL) is billed as cache read, the rest as cache write; outputs as recorded. Models without a price are billed as `{}`{}.\n",
        ttl_phrase(cm.ttl),
        cell(&cm.fallback_family),
        cm.model_override
            .as_deref()
            .map(|m| format!("; every call priced as `{}` (--model)", cell(m)))
            .unwrap_or_default()
    );
    out.push_str("| policy | baseline (+ summaries) | policy (+ summaries) | saved | cache read share (baseline → policy) | sheds tokens, costs more | priced as fallback (calls) |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for a in &report.aggregates {
        let Some(c) = &a.cost else { continue };
        let _ = writeln!(
            out,
            "| {} | ${:.4} | ${:.4} | {:.1}% | {:.1}% → {:.1}% | {} | {} |",
            cell(&a.policy),
            c.baseline_usd(),
            c.policy.usd + c.summarizer_usd,
            crate::num::shown(c.saved_pct, 1),
            c.baseline.read_share() * 100.0,
            c.policy.read_share() * 100.0,
            c.sessions_sheds_tokens_costs_more,
            thousands(c.fallback_calls),
        );
    }
    let costly: Vec<_> =
        report.sessions.iter().filter(|r| r.cost.as_ref().is_some_and(|c| c.sheds_tokens_costs_more)).collect();
    if !costly.is_empty() {
        out.push_str("\nSessions where the policy sends fewer tokens but costs more (it broke the cached prefix):\n\n| session | policy | token savings | cost baseline → policy |\n|---|---|---:|---:|\n");
        for r in costly.iter().take(50) {
            if let Some(c) = &r.cost {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.1}% | ${:.4} → ${:.4} |",
                    cell(&r.session_id),
                    cell(&r.policy),
                    crate::num::shown(r.metrics.savings_pct, 1),
                    c.baseline_usd(),
                    c.policy.usd + c.summarizer_usd
                );
            }
        }
        if costly.len() > 50 {
            let _ = writeln!(out, "\n… and {} more (see report.json).", costly.len() - 50);
        }
    }
    // The check is the same baseline for every policy: show the first.
    if let Some(r) = report.aggregates.iter().find_map(|a| a.cost.as_ref().and_then(|c| c.recorded.as_ref())) {
        let _ = writeln!(
            out,
            "\nSimulated baseline against the recorded cache usage ({} calls with cache fields): input cost ${:.4} simulated vs ${:.4} recorded ({:+.1}%); per call |error| median {} / p90 {}; cache read share {:.1}% simulated vs {:.1}% recorded.",
            thousands(r.calls),
            r.simulated_usd,
            r.recorded_usd,
            crate::num::shown(r.error_pct, 1),
            r.median_abs_error_pct.map(|v| format!("{v:.1}%")).unwrap_or_else(|| "n/a".into()),
            r.p90_abs_error_pct.map(|v| format!("{v:.1}%")).unwrap_or_else(|| "n/a".into()),
            r.read_share_simulated * 100.0,
            r.read_share_recorded * 100.0,
        );
    }
    out.push('\n');
    out
}

/// The cache lifetime of a report's cost model, as a phrase.
pub(crate) fn ttl_phrase(ttl: crate::cost::CacheTtl) -> String {
    match ttl {
        crate::cost::CacheTtl::Auto => {
            "each session's TTL (1 hour where its log records 1-hour cache writes, else 5 minutes)".to_string()
        }
        t => format!("a {} TTL", t.name()),
    }
}
