//! The metric table: every number compactor puts side by side across policies,
//! defined once (key, label, CSV column, direction, unit, type weight, check gate)
//! and looped over by `compare`, report.md/html, sessions.csv, sweep and `check`.
//!
//! A metric reads one of two sources: [`Totals`], the few numbers a policy comes to
//! over a set of sessions (a compare column, a sweep point, a check preset), or
//! [`QualityStats`], one summarizer's quality components over a set of
//! compactions (a session's row in sessions.csv, a policy's row in report.md).
//! Adding a metric is one entry in [`METRICS`] and the computation of its value.

use crate::num::{round4, shown};
use crate::outcome::OutcomeTotals;
use crate::pipeline::results::Aggregate;
use crate::policy::CheckTolerances;
use crate::quality::{AtomKind, QualityScore, QualityStats};

/// Which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
    /// A size or a count that is context, not a goal.
    Neither,
}

/// What a value is, which decides how every view prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Count,
    /// A percentage, 0–100.
    Pct,
    /// A share, 0–1 (printed as a percentage).
    Share,
    Usd,
}

/// How a check treats a metric (tolerances from `check.*` keys or flags).
#[derive(Debug, Clone, Copy)]
pub enum Gate {
    /// Fails when the value drops by more than this many points from the baseline.
    MaxDrop(fn(&CheckTolerances) -> f64),
    /// Fails when the value is above this many points.
    Ceiling(fn(&CheckTolerances) -> f64),
}

/// A second value shown in the same cell of a compact view.
#[derive(Debug, Clone, Copy)]
pub enum Pair {
    /// `baseline → value`: the key of the baseline's metric.
    From(&'static str),
    /// `value (other)`.
    Paren(&'static str),
    /// `value (other failed)`, only when other is not 0.
    Failed(&'static str),
    /// `value / other`.
    Slash(&'static str),
}

/// Where a metric's value comes from.
#[derive(Debug, Clone, Copy)]
pub enum Of {
    Totals(fn(&Totals) -> Option<f64>),
    /// A quality component of one summarizer (the policy's, or a reference's).
    Stats(fn(&QualityStats) -> Option<f64>),
}

/// The views a metric appears in (bits of [`Metric::views`]).
pub mod view {
    /// The side-by-side table of `compare` (stdout, report.md, report.html).
    pub const COMPARE: u16 = 1;
    /// `sweep.csv`, one column per metric.
    pub const SWEEP_CSV: u16 = 1 << 1;
    /// The points tables of `sweep.md`.
    pub const SWEEP_MD: u16 = 1 << 2;
    /// A line per preset in `check`.
    pub const CHECK: u16 = 1 << 3;
    /// The per-policy table of report.md and the printed summary of `replay`.
    pub const REPLAY: u16 = 1 << 4;
    /// The quality columns of sessions.csv and the components table of report.md.
    pub const COMPONENTS: u16 = 1 << 5;
}

/// One metric.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// Stable id (also the key in machine outputs).
    pub key: &'static str,
    /// What people read: a row of compare, a header of sweep.md, a line of check.
    pub label: &'static str,
    /// Its column in sweep.csv and sessions.csv.
    pub column: &'static str,
    pub better: Better,
    pub unit: Unit,
    /// The weight of this atom type in FRR, for per-type recalls.
    pub weight: Option<f64>,
    pub gate: Option<Gate>,
    pub pair: Option<Pair>,
    pub views: u16,
    pub of: Of,
}

/// What one policy comes to over a set of sessions, from whichever report made
/// it; `None` where the source does not have the number (no prices, quality not
/// measured, a value a baseline does not store). Shares are 0–1, percentages 0–100.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub sessions: u64,
    pub sessions_failed: u64,
    pub calls: u64,
    pub input_tokens_baseline: u64,
    pub input_tokens_policy: u64,
    pub savings_pct: f64,
    pub net_savings_tokens: Option<f64>,
    pub pruned_soft: Option<u64>,
    pub pruned_hard: Option<u64>,
    pub cost: Option<crate::cost::CostTotals>,
    pub overflow_calls_baseline: u64,
    pub overflow_calls_policy: u64,
    pub compactions: u64,
    pub no_progress_compactions: u64,
    /// Summary quality was measured (`--no-quality` leaves every quality value `None`).
    pub quality_measured: bool,
    /// Means over the compaction events where each is defined.
    pub frr: Option<f64>,
    pub artifact_recall: Option<f64>,
    pub hallucination: Option<f64>,
    /// FRR pooled over events (weighted by needed atoms), of the policy's
    /// summaries and of the reference points.
    pub frr_pooled: Option<f64>,
    pub frr_truncate: Option<f64>,
    pub frr_masking: Option<f64>,
    pub frr_masking_budget: Option<f64>,
    pub frr_oracle: Option<f64>,
}

impl Totals {
    /// A sweep point (or any fold of [`crate::outcome::SessionOutcome`]s).
    pub fn from_outcome(t: &OutcomeTotals) -> Totals {
        Totals {
            sessions: t.sessions,
            sessions_failed: t.sessions_failed,
            calls: t.calls,
            input_tokens_baseline: t.input_tokens_baseline,
            input_tokens_policy: t.input_tokens_policy,
            savings_pct: t.savings_pct,
            cost: Some(t.cost.clone()),
            overflow_calls_baseline: t.overflow_calls_baseline,
            overflow_calls_policy: t.overflow_calls_policy,
            compactions: t.compactions,
            no_progress_compactions: t.no_progress_compactions,
            ..Totals::default()
        }
        .with_score(t.quality)
    }

    fn with_score(self, q: Option<QualityScore>) -> Totals {
        Totals {
            quality_measured: q.is_some(),
            frr: q.and_then(|q| q.frr()),
            artifact_recall: q.and_then(|q| q.artifact_recall()),
            hallucination: q.and_then(|q| q.hallucination()),
            ..self
        }
    }

    /// A policy of a report; `quality` its compactions' means
    /// (`report::quality::policy_scores`).
    pub fn from_aggregate(a: &Aggregate, quality: Option<QualityScore>) -> Totals {
        let frr = |name: &str| a.quality.as_ref()?.candidate(name)?.frr_pooled;
        Totals {
            sessions: a.sessions,
            sessions_failed: a.sessions_failed,
            calls: a.calls,
            input_tokens_baseline: a.input_tokens_baseline,
            input_tokens_policy: a.input_tokens_policy,
            savings_pct: a.savings_pct,
            net_savings_tokens: Some(a.net_savings_tokens as f64),
            pruned_soft: Some(a.pruned_soft),
            pruned_hard: Some(a.pruned_hard),
            cost: a.cost.clone(),
            overflow_calls_baseline: a.overflow_calls_baseline,
            overflow_calls_policy: a.overflow_calls_policy,
            compactions: a.compactions,
            no_progress_compactions: a.no_progress_compactions,
            frr_pooled: frr(crate::quality::CANDIDATE_POLICY),
            frr_truncate: frr(crate::quality::REF_TRUNCATE),
            frr_masking: frr(crate::quality::REF_MASKING),
            frr_masking_budget: frr(crate::quality::REF_MASKING_BUDGET),
            frr_oracle: frr(crate::quality::REF_ORACLE),
            ..Totals::default()
        }
        .with_score(quality)
    }

    fn cost(&self, f: fn(&crate::cost::CostTotals) -> f64) -> Option<f64> {
        self.cost.as_ref().map(f)
    }
}

fn count(n: u64) -> Option<f64> {
    Some(n as f64)
}

/// What a metric has unless its entry says otherwise.
const PLAIN: Metric = Metric {
    key: "",
    label: "",
    column: "",
    better: Better::Neither,
    unit: Unit::Count,
    weight: None,
    gate: None,
    pair: None,
    views: 0,
    of: Of::Totals(|_| None),
};

macro_rules! metric {
    ($key:literal, $label:literal, $column:literal, $better:ident, $unit:ident, $views:expr, $of:expr $(, $field:ident: $value:expr)* $(,)?) => {
        Metric {
            key: $key,
            label: $label,
            column: $column,
            better: Better::$better,
            unit: Unit::$unit,
            views: $views,
            of: $of,
            $($field: $value,)*
            ..PLAIN
        }
    };
}

use view::{CHECK, COMPARE, COMPONENTS, REPLAY, SWEEP_CSV, SWEEP_MD};

/// Recall of one atom type, pooled over the needed atoms of that type.
macro_rules! recall {
    ($key:literal, $label:literal, $kind:ident, $field:ident) => {
        metric!($key, $label, $key, Higher, Share, COMPONENTS, Of::Stats(|s| s.$field),
            weight: Some(AtomKind::$kind.weight()))
    };
}

/// Every metric, in the order the views show them.
pub static METRICS: &[Metric] = &[
    metric!("sessions", "sessions", "sessions", Neither, Count, COMPARE | SWEEP_CSV | REPLAY,
        Of::Totals(|t| count(t.sessions)), pair: Some(Pair::Failed("sessions_failed"))),
    metric!(
        "sessions_failed",
        "sessions failed",
        "sessions_failed",
        Lower,
        Count,
        SWEEP_CSV,
        Of::Totals(|t| count(t.sessions_failed))
    ),
    metric!("calls", "calls", "calls", Neither, Count, SWEEP_CSV | REPLAY, Of::Totals(|t| count(t.calls))),
    metric!(
        "input_tokens_baseline",
        "billed input, baseline",
        "input_tokens_baseline",
        Neither,
        Count,
        COMPARE | SWEEP_CSV | REPLAY,
        Of::Totals(|t| count(t.input_tokens_baseline))
    ),
    metric!(
        "input_tokens_policy",
        "billed input, policy",
        "input_tokens_policy",
        Lower,
        Count,
        COMPARE | SWEEP_CSV | REPLAY,
        Of::Totals(|t| count(t.input_tokens_policy))
    ),
    metric!("savings_pct", "token savings", "savings_pct", Higher, Pct, COMPARE | SWEEP_CSV | SWEEP_MD | CHECK | REPLAY,
        Of::Totals(|t| Some(t.savings_pct)), gate: Some(Gate::MaxDrop(|t| t.max_savings_drop))),
    metric!(
        "cost_baseline_usd",
        "cost baseline (+ summaries)",
        "cost_baseline_usd",
        Neither,
        Usd,
        COMPARE | SWEEP_CSV,
        Of::Totals(|t| t.cost(|c| c.baseline_usd()))
    ),
    metric!(
        "cost_policy_usd",
        "cost policy",
        "cost_policy_usd",
        Lower,
        Usd,
        SWEEP_CSV,
        Of::Totals(|t| t.cost(|c| c.policy.usd))
    ),
    metric!(
        "cost_with_summaries_usd",
        "cost policy (+ summaries)",
        "cost_with_summaries_usd",
        Lower,
        Usd,
        COMPARE,
        Of::Totals(|t| t.cost(|c| c.policy.usd + c.summarizer_usd))
    ),
    metric!(
        "summarizer_usd",
        "summarizer cost",
        "summarizer_usd",
        Lower,
        Usd,
        SWEEP_CSV,
        Of::Totals(|t| t.cost(|c| c.summarizer_usd))
    ),
    metric!("cost_saved_usd", "cost saved", "cost_saved_usd", Higher, Usd, SWEEP_CSV | SWEEP_MD,
        Of::Totals(|t| t.cost(|c| c.saved_usd)), pair: Some(Pair::Paren("cost_saved_pct"))),
    metric!(
        "cost_saved_pct",
        "cost savings",
        "cost_saved_pct",
        Higher,
        Pct,
        COMPARE | SWEEP_CSV,
        Of::Totals(|t| t.cost(|c| c.saved_pct))
    ),
    metric!(
        "cache_read_share",
        "cache read share, policy",
        "cache_read_share",
        Neither,
        Share,
        COMPARE,
        Of::Totals(|t| t.cost(|c| c.policy.read_share()))
    ),
    metric!(
        "sessions_sheds_tokens_costs_more",
        "sessions shedding tokens but costing more",
        "sessions_sheds_tokens_costs_more",
        Lower,
        Count,
        COMPARE | SWEEP_CSV,
        Of::Totals(|t| t.cost(|c| c.sessions_sheds_tokens_costs_more as f64))
    ),
    metric!(
        "overflow_calls_baseline",
        "overflow calls, baseline",
        "overflow_calls_baseline",
        Neither,
        Count,
        SWEEP_CSV,
        Of::Totals(|t| count(t.overflow_calls_baseline))
    ),
    metric!("overflow_calls_policy", "overflow calls", "overflow_calls_policy", Lower, Count,
        COMPARE | SWEEP_CSV | SWEEP_MD | REPLAY, Of::Totals(|t| count(t.overflow_calls_policy)),
        pair: Some(Pair::From("overflow_calls_baseline"))),
    metric!("compactions", "compactions", "compactions", Neither, Count, COMPARE | SWEEP_CSV | SWEEP_MD | CHECK | REPLAY,
        Of::Totals(|t| count(t.compactions)), pair: Some(Pair::Paren("no_progress_compactions"))),
    metric!(
        "no_progress_compactions",
        "no-progress",
        "no_progress_compactions",
        Lower,
        Count,
        SWEEP_CSV,
        Of::Totals(|t| count(t.no_progress_compactions))
    ),
    metric!("pruned_soft", "pruned soft", "pruned_soft", Neither, Count, REPLAY,
        Of::Totals(|t| t.pruned_soft.map(|n| n as f64)), pair: Some(Pair::Slash("pruned_hard"))),
    metric!(
        "pruned_hard",
        "pruned hard",
        "pruned_hard",
        Neither,
        Count,
        0,
        Of::Totals(|t| t.pruned_hard.map(|n| n as f64))
    ),
    metric!(
        "net_savings_tokens",
        "net saved",
        "net_savings_tokens",
        Higher,
        Count,
        REPLAY,
        Of::Totals(|t| t.net_savings_tokens)
    ),
    metric!("frr_pooled", "FRR", "frr_pooled", Higher, Share, CHECK, Of::Totals(|t| t.frr_pooled),
        gate: Some(Gate::MaxDrop(|t| t.max_frr_drop))),
    metric!("frr_truncate", "FRR truncate", "frr_truncate", Higher, Share, CHECK, Of::Totals(|t| t.frr_truncate)),
    metric!("frr_masking", "FRR masking", "frr_masking", Higher, Share, CHECK, Of::Totals(|t| t.frr_masking)),
    metric!(
        "frr_masking_budget",
        "FRR masking@budget",
        "frr_masking_budget",
        Higher,
        Share,
        CHECK,
        Of::Totals(|t| t.frr_masking_budget)
    ),
    metric!("frr_oracle", "FRR oracle", "frr_oracle", Higher, Share, CHECK, Of::Totals(|t| t.frr_oracle)),
    metric!("frr", "FRR", "frr", Higher, Share, COMPARE | SWEEP_CSV | SWEEP_MD, Of::Totals(|t| t.frr)),
    metric!(
        "artifact_recall",
        "artifact recall",
        "artifact_recall",
        Higher,
        Share,
        COMPARE | SWEEP_CSV | SWEEP_MD | CHECK,
        Of::Totals(|t| t.artifact_recall)
    ),
    metric!("hallucination_rate", "hallucination rate", "hallucination_rate", Lower, Share,
        COMPARE | SWEEP_CSV | SWEEP_MD | CHECK, Of::Totals(|t| t.hallucination),
        gate: Some(Gate::Ceiling(|t| t.max_hallucination))),
    recall!("recall_modified_path", "modified path", ModifiedPath, recall_modified_path),
    recall!("recall_path", "path", Path, recall_path),
    recall!("recall_error", "error", Error, recall_error),
    recall!("recall_id", "id", Id, recall_id),
    recall!("recall_constraint", "constraint", Constraint, recall_constraint),
    recall!("recall_command", "command", Command, recall_command),
    recall!("recall_symbol", "symbol", Symbol, recall_symbol),
    metric!(
        "artifact_trail_recall",
        "artifact recall",
        "artifact_trail_recall",
        Higher,
        Share,
        COMPONENTS,
        Of::Stats(|s| s.artifact_trail_recall_mean)
    ),
    metric!(
        "artifact_trail_precision",
        "artifact precision",
        "artifact_trail_precision",
        Higher,
        Share,
        COMPONENTS,
        Of::Stats(|s| s.artifact_trail_precision_mean)
    ),
    metric!(
        "hallucination_rate_mean",
        "hallucination",
        "hallucination_rate",
        Lower,
        Share,
        COMPONENTS,
        Of::Stats(|s| s.hallucination_rate_mean)
    ),
    metric!(
        "constraint_retention",
        "constraint retention",
        "constraint_retention",
        Higher,
        Share,
        COMPONENTS,
        Of::Stats(|s| s.constraint_retention_mean)
    ),
    metric!(
        "ask_coverage",
        "ask coverage",
        "ask_coverage",
        Higher,
        Share,
        COMPONENTS,
        Of::Stats(|s| s.ask_coverage_mean)
    ),
    metric!(
        "dead_end_retention",
        "dead-end retention",
        "dead_end_retention",
        Higher,
        Share,
        COMPONENTS,
        Of::Stats(|s| s.dead_end_retention_mean)
    ),
    metric!("compression", "compression", "compression", Neither, Share, COMPONENTS, Of::Stats(|s| s.compression_mean)),
];

/// The metrics of one view, in table order.
pub fn of_view(v: u16) -> impl Iterator<Item = &'static Metric> {
    METRICS.iter().filter(move |m| m.views & v != 0)
}

/// The metric named `key`.
pub fn get(key: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.key == key)
}

impl Metric {
    /// The value over `t` (`None` for a metric of quality components).
    pub fn of_totals(&self, t: &Totals) -> Option<f64> {
        match self.of {
            Of::Totals(f) => f(t),
            Of::Stats(_) => None,
        }
    }

    /// The value over `s` (`None` for a metric of totals).
    pub fn of_stats(&self, s: &QualityStats) -> Option<f64> {
        match self.of {
            Of::Stats(f) => f(s),
            Of::Totals(_) => None,
        }
    }

    /// The label with what the pair adds (`overflow calls (baseline → policy)`).
    pub fn compact_label(&self) -> String {
        match self.pair {
            Some(Pair::From(_)) => format!("{} (baseline → policy)", self.label),
            Some(Pair::Slash(other)) => match get(other) {
                Some(o) => format!("{} / {}", self.label, o.label),
                None => self.label.to_string(),
            },
            // A count in parentheses names itself; the same quantity in another
            // unit (dollars and percent saved) needs no second name.
            Some(Pair::Paren(other)) => match get(other) {
                Some(o) if self.unit == o.unit || o.unit == Unit::Count => format!("{} ({})", self.label, o.label),
                _ => self.label.to_string(),
            },
            _ => self.label.to_string(),
        }
    }

    /// The value for people: `1,234`, `12.3%`, `$0.1234`, `n/a` when missing.
    pub fn text(&self, v: Option<f64>) -> String {
        let Some(v) = v else { return "n/a".to_string() };
        match self.unit {
            Unit::Count => thousands_f(v),
            Unit::Pct => format!("{:.1}%", shown(v, 1)),
            Unit::Share => format!("{:.1}%", shown(v * 100.0, 1)),
            Unit::Usd => crate::num::usd(v, 4),
        }
    }

    /// The cell of a compact view: the value with its pair.
    pub fn cell(&self, t: &Totals) -> String {
        let v = self.of_totals(t);
        let other = |key: &str| get(key).map(|o| (o, o.of_totals(t)));
        match self.pair.and_then(|p| Some((p, other(pair_key(p))?))) {
            Some((Pair::From(_), (o, b))) => format!("{} → {}", o.text(b), self.text(v)),
            Some((Pair::Paren(_), (o, x))) => format!("{} ({})", self.text(v), o.text(x)),
            Some((Pair::Slash(_), (o, x))) => format!("{} / {}", self.text(v), o.text(x)),
            Some((Pair::Failed(_), (_, Some(x)))) if x > 0.0 => format!("{} ({} failed)", self.text(v), x),
            _ => self.text(v),
        }
    }

    /// The value in a CSV: plain numbers, empty when missing.
    pub fn csv(&self, v: Option<f64>) -> String {
        let Some(v) = v else { return String::new() };
        match self.unit {
            Unit::Count => format!("{v}"),
            Unit::Pct => format!("{v:.2}"),
            Unit::Share => format!("{v:.4}"),
            Unit::Usd => format!("{v:.6}"),
        }
    }

    /// The value in points for `check` (shares and percentages as 0–100 with
    /// two decimals), `–` when missing.
    pub fn points(&self, v: Option<f64>) -> String {
        match (v, self.unit) {
            (None, _) => "–".to_string(),
            (Some(v), Unit::Count) => format!("{v}"),
            (Some(v), _) => format!("{:.2}", shown(self.to_points(v), 2)),
        }
    }

    /// Shares and percentages as points (0–100); counts and dollars as they are.
    pub fn to_points(&self, v: f64) -> f64 {
        match self.unit {
            Unit::Share => round4(v * 100.0),
            _ => v,
        }
    }
}

fn pair_key(p: Pair) -> &'static str {
    match p {
        Pair::From(k) | Pair::Paren(k) | Pair::Failed(k) | Pair::Slash(k) => k,
    }
}

/// A count with thousands separators (counts are whole; a fraction is rounded).
fn thousands_f(v: f64) -> String {
    crate::num::signed(v.round() as i64)
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
