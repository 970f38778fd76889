//! `compactor sweep`: a grid of policy parameters replayed over the sessions, one
//! row of totals per grid point, the Pareto front of savings against quality,
//! and the point to recommend under a quality constraint.
//!
//! Work shared across points, so a 50-point sweep costs far less than 50 replays:
//! - sessions are read once (by the caller);
//! - per-message token counts are computed once per session and estimator and
//!   shared by every point using that estimator (as `replay_many` shares them
//!   across policies), and so are the tool results' sizes and the file
//!   operations of the tool calls ([`SessionFacts`]);
//! - the quality hook prepares each session once (atom extraction) and scores
//!   each distinct compaction event once (points often compact at the same
//!   place with the same summary);
//! - replays keep no transcript, and each trace is reduced to a
//!   [`SessionOutcome`] as soon as it is made;
//! - the (session, point) replays are one flat parallel job list, largest
//!   sessions first, so both cores stay busy even when one session dominates.
//!
//! Results are folded per point in session order: byte-identical at any `--jobs`.

pub mod grid;
mod memo;
#[cfg(test)]
mod tests;

pub use grid::{Axis, Grid, GridError, MAX_POINTS};

use crate::cost::{CostSettings, SessionModels, session_cost_with};
use crate::model::Session;
use crate::num::shown;
use crate::outcome::{OutcomeTotals, SessionOutcome};
use crate::policy::Policy;
use crate::quality::{PreparedQuality, QualityHook};
use crate::replay::{ReplayContext, ReplayOptions, Resolver, SessionFacts, count_message_tokens, replay_session};
use crate::text::atoms::SessionLens;
use crate::tokens::Estimator;
use memo::MemoSummarizer;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One grid point: its values and totals (or why it could not run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// 1-based, in grid order.
    pub index: usize,
    /// The value of each axis, rendered.
    pub values: Vec<String>,
    pub policy: Option<Policy>,
    pub error: Option<String>,
    pub totals: OutcomeTotals,
    /// On the Pareto front of token savings vs FRR / of cost savings vs FRR.
    pub front_savings: bool,
    pub front_cost: bool,
}

impl Point {
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.totals.sessions > 0
    }
    pub fn frr(&self) -> Option<f64> {
        self.totals.quality.and_then(|q| q.frr())
    }
    /// Mean hallucination rate of the summaries, in [0, 1].
    pub fn hallucination(&self) -> Option<f64> {
        self.totals.quality.and_then(|q| q.hallucination())
    }
    /// Cost saved, % of the baseline cost (summaries included).
    pub fn cost_saved_pct(&self) -> f64 {
        self.totals.cost.saved_pct
    }
}

/// The outcome of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepResult {
    pub axes: Vec<String>,
    pub points: Vec<Point>,
    /// Index into `points` of the recommendation, when one point qualifies.
    pub recommended: Option<usize>,
    /// Why the recommended point won, and where it sits in the grid.
    pub recommendation: Option<Recommendation>,
    /// Points left out of the recommendation, by reason.
    pub excluded: Excluded,
    /// The window the points were replayed at, in words.
    pub window: String,
    pub min_frr: Option<f64>,
    /// Whether FRR was measured (a quality hook was given).
    pub quality_measured: bool,
    pub sessions: usize,
}

/// Why the recommended point won, and whether it sits on the edge of the grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// The deciding criterion against the runner-up, in words.
    pub reason: String,
    /// Axes whose value here is the lowest or highest of the axis (numbers
    /// only): the best point may lie beyond, so the grid should extend there.
    pub edges: Vec<Edge>,
}

/// An axis at one end of its values at the recommended point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Edge {
    pub axis: String,
    pub value: String,
    /// `lowest` or `highest`.
    pub side: &'static str,
}

/// How many points the recommendation left out, by the first reason found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Excluded {
    /// Their values make no valid policy (a combination of axis values the
    /// policy refuses).
    pub invalid: usize,
    /// Failed on a session (or ran on none).
    pub failed: usize,
    /// Summaries above the policy's `check.max_hallucination` (the gate of `check`).
    pub hallucination: usize,
    /// FRR below `--min-frr`.
    pub below_min_frr: usize,
}

/// Reported after each (session, point) replay.
pub type SweepProgress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// One grid point before it is replayed: its values, its policy, or why it
/// cannot run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointSpec {
    pub values: Vec<String>,
    pub policy: Option<Policy>,
    pub error: Option<String>,
}

/// What one (point, session) replay came to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Cell {
    /// Not run: not this run's point (`--shard-points`), or stopped by Ctrl-C.
    Skipped,
    Failed,
    Done(Box<SessionOutcome>),
}

/// A sweep's replays before they are folded into points: what a shard of it
/// writes, and what merged shards fold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepTable {
    pub axes: Vec<String>,
    pub points: Vec<PointSpec>,
    /// Per point (all of them), per session: `cells[point][session]`.
    pub cells: Vec<Vec<Cell>>,
    /// Each session's own window (`context_window = "auto"`), in session order.
    pub windows: Vec<Option<u64>>,
    pub quality_measured: bool,
}

/// Replay every session under the points of `grid` that `selected` (by
/// 0-based index; all without) on top of `base`; the others are
/// [`Cell::Skipped`]. [`fold`] turns the table into the sweep's points.
#[allow(clippy::too_many_arguments)]
pub fn run_table(
    sessions: &[Session],
    base: &Policy,
    grid: &Grid,
    resolver: &dyn Resolver,
    cost: &CostSettings,
    quality: Option<&dyn QualityHook>,
    selected: Option<&(dyn Fn(usize) -> bool + Sync)>,
    pool: &rayon::ThreadPool,
    progress: Option<SweepProgress<'_>>,
) -> Result<SweepTable, grid::GridError> {
    let base = grid.apply_base(base).map_err(|error| GridError::Policy { key: "[base]".into(), error })?;
    let n_points = grid.points();
    let policies: Vec<Result<Policy, String>> =
        (0..n_points).map(|i| grid.policy(&base, i).map_err(|e| e.to_string())).collect();
    type Parts = (Arc<dyn Estimator>, Arc<dyn crate::summarize::Summarizer>);
    let parts: Vec<Result<Parts, String>> = policies
        .iter()
        .map(|p| {
            let p = p.as_ref().map_err(Clone::clone)?;
            let e = resolver.estimator(p.estimator).map_err(|e| e.to_string())?;
            let s = resolver.summarizer_for(p).map_err(|e| e.to_string())?;
            Ok((e, s))
        })
        .collect();
    // Distinct estimator objects: token counts are per (session, estimator); and
    // distinct summarizers: answers are remembered per (session, summarizer).
    let mut estimators: Vec<Arc<dyn Estimator>> = Vec::new();
    // Estimators are interned by kind, not by object: a resolver may hand out
    // a new object per policy for the same estimator, and a kind counts alike.
    let est_of: Vec<Option<usize>> =
        parts.iter().map(|r| Some(intern(&mut estimators, &r.as_ref().ok()?.0, |a, b| a.kind() == b.kind()))).collect();
    // Summarizers by object only: two of one name may answer differently (the
    // LLM summarizers of points varying `compact.llm.prompt` or `.model`);
    // the built-in ones are one object per kind.
    let mut summarizers: Vec<Arc<dyn crate::summarize::Summarizer>> = Vec::new();
    let summ_of: Vec<Option<usize>> =
        parts.iter().map(|r| Some(intern(&mut summarizers, &r.as_ref().ok()?.1, |_, _| false))).collect();
    let options =
        ReplayOptions { check_invariants: false, verify_totals: false, keep_transcript: false, meter: cost.meter };

    // Per session, largest first: token counts for each estimator, quality
    // preparation and a summary memo for each summarizer, then every point.
    // A session's points run as soon as it is prepared (no barrier after
    // preparing all sessions), and what they share (atom index, summary
    // answers, scores) lives only while they run.
    struct Prepared<'s> {
        counts: Vec<Vec<u64>>,
        /// The meter's per-message counts (`cost.meter`), when no estimator's
        /// counts are the same.
        meter: Option<Vec<u64>>,
        facts: SessionFacts,
        models: SessionModels,
        quality: Option<Box<dyn PreparedQuality + 's>>,
        memos: Vec<MemoSummarizer<'s>>,
    }
    // An estimator whose per-message counts are the meter's.
    let meter_est = estimators.iter().position(|e| e.kind().message_counter() == cost.meter.counter().kind());
    let mut order: Vec<usize> = (0..sessions.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(sessions[i].messages.len()), i));
    let runnable: Vec<usize> = parts
        .iter()
        .enumerate()
        .filter(|(pi, p)| p.is_ok() && selected.is_none_or(|f| f(*pi)))
        .map(|(pi, _)| pi)
        .collect();
    let done = AtomicUsize::new(0);
    let total = order.len() * runnable.len();
    /// A session's index and, per runnable point, its outcome (`None`: failed).
    type SessionRuns = (usize, Vec<(usize, Option<SessionOutcome>)>);
    let per_session: Vec<SessionRuns> = pool.install(|| {
        order
            .par_iter()
            .with_max_len(1)
            .map(|&si| {
                // After Ctrl-C the sessions not started yet cost nothing (a
                // replay in progress stops at its next call).
                if crate::interrupt::requested() {
                    return (si, Vec::new());
                }
                let s = &sessions[si];
                // The session's atoms, shared by every point's summarizer and scoring.
                let lens = SessionLens::of(s);
                let counts: Vec<Vec<u64>> = estimators.iter().map(|e| count_message_tokens(s, e.as_ref())).collect();
                let prep = Prepared {
                    meter: meter_est.is_none().then(|| count_message_tokens(s, cost.meter.counter())),
                    counts,
                    facts: SessionFacts::of(s),
                    models: SessionModels::of(s, cost),
                    quality: quality.map(|q| q.prepare_with(s, &lens)),
                    memos: summarizers.iter().map(|x| MemoSummarizer::new(x.as_ref(), &lens)).collect(),
                };
                let outs = runnable
                    .par_iter()
                    .with_max_len(1)
                    .map(|&pi| {
                        let out = (|| {
                            let policy = policies[pi].as_ref().ok()?;
                            let (est, _) = parts[pi].as_ref().ok()?;
                            let counts = &prep.counts[est_of[pi]?];
                            let ctx = ReplayContext {
                                estimator: est.as_ref(),
                                summarizer: &prep.memos[summ_of[pi]?],
                                message_tokens: Some(counts),
                                meter_tokens: Some(meter_est.map_or_else(
                                    || prep.meter.as_deref().unwrap_or_default(),
                                    |e| &prep.counts[e][..],
                                )),
                                facts: Some(&prep.facts),
                                options,
                            };
                            let trace = replay_session(s, policy, &ctx).ok()?;
                            // The per-call check of the baseline is the replay
                            // report's business; a sweep keeps only totals.
                            let c = session_cost_with(s, &trace, cost, &prep.models, false);
                            let q = prep.quality.as_ref().map(|p| p.evaluate(policy, &trace));
                            Some(SessionOutcome { metrics: trace.metrics, cost: c, quality: q })
                        })();
                        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                        if let Some(cb) = progress {
                            cb(n, total);
                        }
                        (pi, out)
                    })
                    .collect();
                (si, outs)
            })
            .collect()
    });
    let mut cells: Vec<Vec<Cell>> = vec![vec![Cell::Skipped; sessions.len()]; n_points];
    for (si, outs) in per_session {
        for (pi, o) in outs {
            cells[pi][si] = o.map_or(Cell::Failed, |o| Cell::Done(Box::new(o)));
        }
    }
    let points = (0..n_points)
        .map(|pi| PointSpec {
            values: grid.labels(pi),
            policy: policies[pi].as_ref().ok().cloned(),
            error: parts[pi].as_ref().err().cloned(),
        })
        .collect();
    Ok(SweepTable {
        axes: grid.axes.iter().map(|a| a.key.clone()).collect(),
        points,
        cells,
        windows: sessions.iter().map(|s| s.meta.window.as_ref().map(|w| w.tokens)).collect(),
        quality_measured: quality.is_some(),
    })
}

/// Fold each point's replays in session order (byte-identical at any
/// `--jobs`, and whatever shards the table was merged from), mark the fronts
/// and recommend.
pub fn fold(table: &SweepTable, min_frr: Option<f64>) -> SweepResult {
    let mut points = Vec::with_capacity(table.points.len());
    for (pi, spec) in table.points.iter().enumerate() {
        let mut totals = OutcomeTotals::default();
        for cell in table.cells.get(pi).into_iter().flatten() {
            match cell {
                Cell::Done(o) => totals.add(o),
                Cell::Failed => totals.add_failure(),
                Cell::Skipped => {}
            }
        }
        points.push(Point {
            index: pi + 1,
            values: spec.values.clone(),
            policy: spec.policy.clone(),
            error: spec.error.clone(),
            totals: totals.finish(),
            front_savings: false,
            front_cost: false,
        });
    }
    mark_fronts(&mut points);
    let (recommended, excluded) = recommend_why(&points, min_frr);
    let axes = table.axes.clone();
    let recommendation =
        recommended.map(|i| Recommendation { reason: reason(&points, i, min_frr), edges: edges(&axes, &points, i) });
    SweepResult {
        window: window_words(&table.points, &table.windows),
        axes,
        points,
        recommended,
        recommendation,
        excluded,
        min_frr,
        quality_measured: table.quality_measured,
        sessions: table.windows.len(),
    }
}

/// Index of `x` in `list` (an equal one by `same`), added when missing.
fn intern<T: ?Sized>(list: &mut Vec<Arc<T>>, x: &Arc<T>, same: impl Fn(&T, &T) -> bool) -> usize {
    match list.iter().position(|y| Arc::ptr_eq(y, x) || same(y, x)) {
        Some(i) => i,
        None => {
            list.push(x.clone());
            list.len() - 1
        }
    }
}

/// FRR for dominance: unmeasured counts as equal everywhere, so without a
/// quality hook each front is the set of points with the best savings.
fn frr_key(p: &Point) -> f64 {
    p.frr().unwrap_or(0.0)
}

/// `a` dominates `b` on (x ↑, FRR ↑): at least as good on both, better on one.
fn dominates(ax: f64, af: f64, bx: f64, bf: f64) -> bool {
    ax >= bx && af >= bf && (ax > bx || af > bf)
}

/// Mark the Pareto fronts: token savings vs FRR, and cost savings vs FRR.
pub fn mark_fronts(points: &mut [Point]) {
    for p in points.iter_mut() {
        p.front_savings = false;
        p.front_cost = false;
    }
    let ok: Vec<usize> = (0..points.len()).filter(|&i| points[i].ok()).collect();
    let keys: Vec<(f64, f64, f64)> =
        points.iter().map(|p| (p.totals.savings_pct, p.cost_saved_pct(), frr_key(p))).collect();
    for &i in &ok {
        let (s, c, f) = keys[i];
        points[i].front_savings = !ok.iter().any(|&j| dominates(keys[j].0, keys[j].2, s, f));
        points[i].front_cost = !ok.iter().any(|&j| dominates(keys[j].1, keys[j].2, c, f));
    }
}

/// The point to recommend: among points that ran on every session, pass the
/// hallucination gate of `check` (the point's `check.max_hallucination`) and
/// meet `min_frr` (when FRR is measured), the fewest calls over the window,
/// then the most money saved, then the most tokens saved, then the earliest.
pub fn recommend(points: &[Point], min_frr: Option<f64>) -> Option<usize> {
    recommend_why(points, min_frr).0
}

/// Why `p` may not be recommended, if it may not.
fn exclusion(p: &Point, min_frr: Option<f64>) -> Option<fn(&mut Excluded) -> &mut usize> {
    if p.policy.is_none() {
        return Some(|e| &mut e.invalid);
    }
    if !p.ok() || p.totals.sessions_failed > 0 {
        return Some(|e| &mut e.failed);
    }
    let ceiling = p
        .policy
        .as_ref()
        .map_or(crate::policy::CheckTolerances::default().max_hallucination, |q| q.check.max_hallucination);
    if p.hallucination().is_some_and(|h| h * 100.0 > ceiling + 1e-9) {
        return Some(|e| &mut e.hallucination);
    }
    // No FRR: quality not measured (the caller says so), or no compaction
    // needed anything it replaced.
    if let (Some(min), Some(f)) = (min_frr, p.frr())
        && f < min
    {
        return Some(|e| &mut e.below_min_frr);
    }
    None
}

/// The ranking of [`recommend`]: fewer overflow calls, more money, more tokens.
fn rank(a: &Point, b: &Point) -> std::cmp::Ordering {
    a.totals
        .overflow_calls_policy
        .cmp(&b.totals.overflow_calls_policy)
        .then(b.totals.cost.saved_usd.total_cmp(&a.totals.cost.saved_usd))
        .then(b.totals.savings_pct.total_cmp(&a.totals.savings_pct))
}

/// The recommendation and what was left out.
pub fn recommend_why(points: &[Point], min_frr: Option<f64>) -> (Option<usize>, Excluded) {
    let mut excluded = Excluded::default();
    let mut best: Option<usize> = None;
    for (i, p) in points.iter().enumerate() {
        if let Some(count) = exclusion(p, min_frr) {
            *count(&mut excluded) += 1;
            continue;
        }
        // Ties keep the earlier point.
        if best.is_none_or(|b| rank(p, &points[b]).is_lt()) {
            best = Some(i);
        }
    }
    (best, excluded)
}

/// The criterion that put point `i` ahead of the runner-up, in words.
fn reason(points: &[Point], i: usize, min_frr: Option<f64>) -> String {
    let best = &points[i];
    let runner = points
        .iter()
        .enumerate()
        .filter(|&(j, p)| j != i && exclusion(p, min_frr).is_none())
        .min_by(|(_, a), (_, b)| rank(a, b))
        .map(|(_, p)| p);
    let Some(r) = runner else { return "the only point that qualifies".to_string() };
    let (b, r) = (&best.totals, &r.totals);
    if b.overflow_calls_policy != r.overflow_calls_policy {
        format!(
            "fewest calls over the window ({}; the next best point has {})",
            b.overflow_calls_policy, r.overflow_calls_policy
        )
    } else if b.cost.saved_usd != r.cost.saved_usd {
        format!(
            "most money saved (${:.4}, {:.1}% of the cost; the next best point saves ${:.4}), with the fewest calls over the window ({})",
            shown(b.cost.saved_usd, 4),
            shown(b.cost.saved_pct, 1),
            shown(r.cost.saved_usd, 4),
            b.overflow_calls_policy
        )
    } else if b.savings_pct != r.savings_pct {
        format!(
            "most tokens saved ({:.1}%; the next best point saves {:.1}%) at the same cost and calls over the window",
            shown(b.savings_pct, 1),
            shown(r.savings_pct, 1)
        )
    } else {
        "the first of the points that tie on calls over the window, money and tokens".to_string()
    }
}

/// The numeric axes on which point `i` takes the lowest or highest value,
/// among those that change a result here: an axis whose other values (the
/// other axes as at `i`) all give the same figures cannot say which way is
/// better.
fn edges(axes: &[String], points: &[Point], i: usize) -> Vec<Edge> {
    let mut out = Vec::new();
    let same =
        |p: &Point, q: &Point| rank(p, q).is_eq() && p.frr() == q.frr() && p.hallucination() == q.hallucination();
    for (a, axis) in axes.iter().enumerate() {
        let neighbours = points.iter().filter(|q| {
            q.ok()
                && q.values.len() == points[i].values.len()
                && q.values.iter().zip(&points[i].values).enumerate().all(|(b, (x, y))| b == a || x == y)
        });
        if neighbours.into_iter().all(|q| same(q, &points[i])) {
            continue;
        }
        let nums: Vec<f64> = points.iter().filter_map(|p| p.values.get(a)?.parse::<f64>().ok()).collect();
        let Some(v) = points[i].values.get(a).and_then(|v| v.parse::<f64>().ok()) else { continue };
        let (lo, hi) = nums.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
        if lo == hi {
            continue;
        }
        let side = if v == lo {
            "lowest"
        } else if v == hi {
            "highest"
        } else {
            continue;
        };
        out.push(Edge { axis: axis.clone(), value: points[i].values[a].clone(), side });
    }
    out
}

/// The window the grid's policies replay at: a fixed size, or each session's own.
fn window_words(points: &[PointSpec], windows: &[Option<u64>]) -> String {
    let policies = || points.iter().filter_map(|p| p.policy.as_ref());
    let mut fixed: Vec<u64> = policies().filter(|p| !p.window_is_auto()).map(|p| p.context_window).collect();
    fixed.sort_unstable();
    fixed.dedup();
    let auto = policies().any(Policy::window_is_auto);
    let mut own: Vec<u64> = windows.iter().flatten().copied().collect();
    own.sort_unstable();
    own.dedup();
    let n = |v: &[u64]| v.iter().map(|w| crate::num::thousands(*w)).collect::<Vec<_>>().join(", ");
    let mut parts = Vec::new();
    if !fixed.is_empty() {
        parts.push(format!("{} tokens (context_window)", n(&fixed)));
    }
    if auto {
        parts.push(if own.is_empty() {
            "each session's own model window (context_window = \"auto\")".to_string()
        } else {
            format!("each session's own model window (context_window = \"auto\": {} tokens)", n(&own))
        });
    }
    parts.join("; ")
}
