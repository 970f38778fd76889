//! Folding [`CompactionQuality`] rows into statistics per summarizer: call it on
//! one session's rows for the per-session line and on all rows for the run.
//!
//! Every component is published on its own; the composite is one more column.
//! Two FRR averages are given because they answer different questions:
//! `frr_mean`/`frr_median` weigh every compaction event equally, `frr_pooled`
//! weighs each event by the weight of its needed atoms (Σ hits / Σ weights), so
//! events where the agent needed much count more. Per-type recalls are pooled by
//! the number of needed atoms of that type. Events without needed atoms have no
//! FRR and are skipped, never counted as 0 or 1.

use super::event::CompactionQuality;
use crate::num::median;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Statistics of one summarizer over a set of compaction events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityStats {
    pub summarizer: String,
    pub events: u32,
    pub events_with_needed: u32,
    pub needed_atoms: u64,
    pub frr_mean: Option<f64>,
    pub frr_median: Option<f64>,
    pub frr_pooled: Option<f64>,
    pub recall_modified_path: Option<f64>,
    pub recall_path: Option<f64>,
    pub recall_error: Option<f64>,
    pub recall_id: Option<f64>,
    pub recall_constraint: Option<f64>,
    pub recall_command: Option<f64>,
    pub recall_symbol: Option<f64>,
    pub artifact_trail_recall_mean: Option<f64>,
    pub artifact_trail_precision_mean: Option<f64>,
    pub hallucination_rate_mean: Option<f64>,
    pub constraint_retention_mean: Option<f64>,
    pub ask_coverage_mean: Option<f64>,
    /// Share of events with a pending ask where OpenClaw's overlap rule passes.
    pub ask_covered_share: Option<f64>,
    pub dead_end_retention_mean: Option<f64>,
    pub compression_mean: Option<f64>,
    pub compression_median: Option<f64>,
    pub summary_reduction_mean: Option<f64>,
    pub summary_tokens_mean: Option<f64>,
    pub summary_tokens_median: Option<f64>,
    pub summary_tokens_total: u64,
    pub quality_mean: Option<f64>,
    pub quality_median: Option<f64>,
}

/// Statistics per summarizer, sorted by summarizer name.
pub fn aggregate<'r>(rows: impl IntoIterator<Item = &'r CompactionQuality>) -> Vec<QualityStats> {
    let mut groups: BTreeMap<&str, Vec<&CompactionQuality>> = BTreeMap::new();
    for r in rows {
        groups.entry(r.summarizer.as_str()).or_default().push(r);
    }
    groups.into_iter().map(|(name, rows)| stats(name, &rows)).collect()
}

fn stats(name: &str, rows: &[&CompactionQuality]) -> QualityStats {
    let col =
        |f: &dyn Fn(&CompactionQuality) -> Option<f64>| -> Vec<f64> { rows.iter().filter_map(|r| f(r)).collect() };
    let pooled = |f: &dyn Fn(&CompactionQuality) -> (u32, Option<f64>)| -> Option<f64> {
        let (mut n, mut s) = (0.0, 0.0);
        for r in rows {
            if let (c, Some(v)) = f(r) {
                n += f64::from(c);
                s += f64::from(c) * v;
            }
        }
        (n > 0.0).then(|| s / n)
    };
    let frr = col(&|r| r.frr);
    let (hit, weight) = rows
        .iter()
        .filter(|r| r.frr.is_some())
        .fold((0.0, 0.0), |(h, w), r| (h + r.frr_hit_weight, w + r.needed_weight));
    let compression = col(&|r| r.compression);
    let tokens: Vec<f64> = rows.iter().map(|r| r.summary_tokens as f64).collect();
    let quality = col(&|r| r.quality);
    let covered: Vec<f64> = rows.iter().filter_map(|r| r.ask_covered.map(|c| if c { 1.0 } else { 0.0 })).collect();
    QualityStats {
        summarizer: name.to_string(),
        events: rows.len() as u32,
        events_with_needed: frr.len() as u32,
        needed_atoms: rows.iter().map(|r| u64::from(r.needed_atoms)).sum(),
        frr_mean: mean(&frr),
        frr_median: median(&frr),
        frr_pooled: (weight > 0.0).then(|| (hit / weight).clamp(0.0, 1.0)),
        recall_modified_path: pooled(&|r| (r.needed_modified_path, r.recall_modified_path)),
        recall_path: pooled(&|r| (r.needed_path, r.recall_path)),
        recall_error: pooled(&|r| (r.needed_error, r.recall_error)),
        recall_id: pooled(&|r| (r.needed_id, r.recall_id)),
        recall_constraint: pooled(&|r| (r.needed_constraint, r.recall_constraint)),
        recall_command: pooled(&|r| (r.needed_command, r.recall_command)),
        recall_symbol: pooled(&|r| (r.needed_symbol, r.recall_symbol)),
        artifact_trail_recall_mean: mean(&col(&|r| r.artifact_trail_recall)),
        artifact_trail_precision_mean: mean(&col(&|r| r.artifact_trail_precision)),
        hallucination_rate_mean: mean(&col(&|r| r.hallucination_rate)),
        constraint_retention_mean: mean(&col(&|r| r.constraint_retention)),
        ask_coverage_mean: mean(&col(&|r| r.ask_coverage)),
        ask_covered_share: mean(&covered),
        dead_end_retention_mean: mean(&col(&|r| r.dead_end_retention)),
        compression_mean: mean(&compression),
        compression_median: median(&compression),
        summary_reduction_mean: mean(&col(&|r| r.summary_reduction)),
        summary_tokens_mean: mean(&tokens),
        summary_tokens_median: median(&tokens),
        summary_tokens_total: rows.iter().map(|r| r.summary_tokens).sum(),
        quality_mean: mean(&quality),
        quality_median: median(&quality),
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}
