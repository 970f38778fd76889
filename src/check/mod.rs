//! `compactor check` (DESIGN.md §8, quality.md §c.5): compare a replay with a
//! baseline and decide whether quality or savings regressed.
//!
//! A [`Baseline`] is the small, versioned JSON that `check --write-baseline`
//! writes: per preset and per (session, preset) the metrics the rules need.
//! An earlier `report.json` works as a baseline too; both are read through the
//! same lenient view of the report ([`Baseline::from_report_json`]), so a
//! report of an older schema or with fields added later still loads.
//!
//! The rules ([`Rule`]), per preset:
//! - pooled FRR of the policy's summaries drops by more than `max_frr_drop`
//!   points;
//! - billed-input savings drop by more than `max_savings_drop` points;
//! - the summaries' mean hallucination rate is above `max_hallucination` %;
//! - a session has more invariant violations, or more no-progress compactions,
//!   than it had in the baseline (a session new to the baseline had none);
//! - a session marked must-keep lost a modified path: a compaction whose
//!   summary does not name every file the replaced part edited. Sessions are
//!   marked by globs (`--must-keep`, and the `must_keep` list stored in the
//!   baseline) matched against the session id, the log's file name and its path.
//!
//! Before the rules, [`params::coverage`] says whether the run and the
//! baseline can be compared at all: the same policies, with the same
//! parameters, under the same run settings.
//!
//! Everything here is pure: the CLI loads, replays, prints and picks the exit
//! code.

mod baseline;
pub mod params;

pub use baseline::{
    BASELINE_KIND, BASELINE_VERSION, Baseline, PresetMetrics, RECORDED_ROW, ReplaySettings, SessionMetrics,
};
pub use params::{Coverage, RunSettings, coverage};

use crate::metrics::{self, Gate, Totals, Unit, view};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("not JSON: {0}")]
    Json(String),
    #[error("baseline version {found} is newer than this compactor reads ({BASELINE_VERSION}); upgrade compactor")]
    Version { found: u32 },
    #[error("neither a compactor baseline nor a report.json (no `kind` or `aggregates`)")]
    Unknown,
    #[error("invalid --must-keep glob `{glob}`: {reason}")]
    Glob { glob: String, reason: String },
}

/// Tolerances of one preset: the policy's `check.*` keys, which flags override.
pub type Tolerances = crate::policy::CheckTolerances;

/// What a rule checks: a gated metric of the metric table
/// ([`crate::metrics::Gate`]), or one of the per-session rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The metric (its key) dropped by more than its tolerance.
    Drop(&'static str),
    /// The metric (its key) is above its ceiling.
    Ceiling(&'static str),
    NewViolations,
    NewNoProgress,
    MustKeepLost,
}

impl Rule {
    pub fn name(self) -> String {
        let label = |key: &'static str| metrics::get(key).map_or(key, |m| m.label);
        match self {
            Rule::Drop(key) => format!("{} drop", label(key)),
            Rule::Ceiling(key) => label(key).to_string(),
            Rule::NewViolations => "new invariant violations".into(),
            Rule::NewNoProgress => "new no-progress compactions".into(),
            Rule::MustKeepLost => "modified path lost on a must-keep session".into(),
        }
    }
}

/// One regression found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    pub policy: String,
    pub rule: Rule,
    pub detail: String,
}

/// One line of the table: a metric of a preset, baseline vs now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    pub policy: String,
    pub metric: &'static str,
    pub baseline: String,
    pub now: String,
    pub change: String,
    pub rule: String,
    pub status: Status,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Regression,
    /// Shown for context, not gated.
    Info,
    /// The preset is not in the baseline.
    New,
}

/// The result of a comparison (`check --json` prints it, with `regressed`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub lines: Vec<Line>,
    pub failures: Vec<Failure>,
    pub notes: Vec<String>,
}

impl Outcome {
    pub fn regressed(&self) -> bool {
        !self.failures.is_empty()
    }
}

/// Compiled must-keep globs.
pub struct MustKeep {
    globs: Vec<String>,
    /// The globs in the order `set` holds them.
    added: Vec<String>,
    set: globset::GlobSet,
}

impl MustKeep {
    pub fn new(globs: &[String]) -> Result<MustKeep, CheckError> {
        let mut b = globset::GlobSetBuilder::new();
        for g in globs {
            let glob = globset::GlobBuilder::new(g)
                .literal_separator(false)
                .build()
                .map_err(|e| CheckError::Glob { glob: g.clone(), reason: e.kind().to_string() })?;
            b.add(glob);
        }
        let set = b.build().map_err(|e| CheckError::Glob { glob: globs.join(" "), reason: e.to_string() })?;
        let added = globs.to_vec();
        let mut globs = globs.to_vec();
        globs.sort();
        globs.dedup();
        Ok(MustKeep { globs, added, set })
    }

    /// The globs that match none of `sessions` (a typo gates nothing), sorted.
    pub fn unmatched(&self, sessions: &[SessionMetrics]) -> Vec<&str> {
        let mut hit = vec![false; self.added.len()];
        for s in sessions {
            for key in [&s.session_id, &s.file, &s.source_path] {
                for i in self.set.matches(key) {
                    hit[i] = true;
                }
            }
        }
        let mut out: Vec<&str> = self.added.iter().zip(&hit).filter(|(_, h)| !**h).map(|(g, _)| g.as_str()).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    pub fn globs(&self) -> &[String] {
        &self.globs
    }

    /// A session is must-keep when a glob matches its id, file name or path.
    pub fn matches(&self, s: &SessionMetrics) -> bool {
        !self.globs.is_empty()
            && (self.set.is_match(&s.session_id) || self.set.is_match(&s.file) || self.set.is_match(&s.source_path))
    }
}

fn count_delta(base: u64, now: u64) -> String {
    format!("{:+}", now as i64 - base as i64)
}

/// Compare `now` with `base`. `tolerances` gives each preset's tolerances
/// (missing presets get the defaults); `must_keep` marks sessions.
pub fn compare(
    base: &Baseline,
    now: &Baseline,
    tolerances: &HashMap<String, Tolerances>,
    must_keep: &MustKeep,
) -> Outcome {
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    let base_sessions: HashMap<(&str, &str, &str), &SessionMetrics> =
        base.sessions.iter().map(|s| ((s.session_id.as_str(), s.file.as_str(), s.policy.as_str()), s)).collect();
    fn fail(failures: &mut Vec<Failure>, policy: &str, rule: Rule, detail: String) {
        failures.push(Failure { policy: policy.to_string(), rule, detail });
    }
    for p in &now.presets {
        let tol_policy = tolerances.get(&p.policy).cloned().unwrap_or_default();
        let b = base.presets.iter().find(|b| b.policy == p.policy);
        let mut line = |metric: &'static str, baseline: String, now: String, change: String, rule: String, status| {
            lines.push(Line { policy: p.policy.clone(), metric, baseline, now, change, rule, status });
        };
        let now_t = totals(p);
        // The agents' own compactions: their summaries' quality only.
        let shown = |m: &&metrics::Metric| !p.recorded || !matches!(m.key, "savings_pct");
        let Some(b) = b else {
            for m in metrics::of_view(view::CHECK).filter(|m| matches!(m.gate, Some(Gate::MaxDrop(_)))).filter(shown) {
                let v = m.of_totals(&now_t);
                line(
                    m.label,
                    "–".into(),
                    m.points(v),
                    String::new(),
                    "not in baseline, not compared".into(),
                    Status::New,
                );
            }
            notes.push(format!("policy `{}` is not in the baseline: not compared", p.policy));
            continue;
        };
        let base_t = totals(b);
        for m in metrics::of_view(view::CHECK).filter(shown) {
            let (bv, nv) = (m.of_totals(&base_t), m.of_totals(&now_t));
            let (bp, np) = (bv.map(|v| m.to_points(v)), nv.map(|v| m.to_points(v)));
            let unit = if m.unit == Unit::Count { "" } else { "%" };
            let (rule, status, failure) = match m.gate {
                Some(Gate::MaxDrop(tol)) => {
                    let tol = tol(&tol_policy);
                    let (status, failure) = match (bp, np) {
                        (Some(b), Some(n)) if n < b - tol - 1e-9 => (
                            Status::Regression,
                            Some((
                                Rule::Drop(m.key),
                                format!("{} {n:.2}{unit}, baseline {b:.2}{unit}, allowed drop {tol:.2}", m.label),
                            )),
                        ),
                        (Some(_), Some(_)) => (Status::Ok, None),
                        _ => (Status::Info, None),
                    };
                    (format!("drop ≤ {tol:.2}"), status, failure)
                }
                // A ceiling on a value neither side has (no compaction): no line.
                Some(Gate::Ceiling(_)) if bv.is_none() && nv.is_none() => continue,
                // The agents' own summaries are not the run's to keep under a
                // ceiling: they may not rise above the baseline by more than it.
                Some(Gate::Ceiling(tol)) if p.recorded => {
                    let tol = tol(&tol_policy);
                    let (status, failure) = match (bp, np) {
                        (Some(b), Some(n)) if n > b + tol + 1e-9 => (
                            Status::Regression,
                            Some((
                                Rule::Ceiling(m.key),
                                format!("{} {n:.2}{unit}, baseline {b:.2}{unit}, allowed rise {tol:.2}", m.label),
                            )),
                        ),
                        (Some(_), Some(_)) => (Status::Ok, None),
                        _ => (Status::Info, None),
                    };
                    (format!("rise ≤ {tol:.2}"), status, failure)
                }
                Some(Gate::Ceiling(tol)) => {
                    let tol = tol(&tol_policy);
                    let (status, failure) = match np {
                        Some(n) if n > tol + 1e-9 => (
                            Status::Regression,
                            Some((Rule::Ceiling(m.key), format!("{} {n:.2}{unit}, ceiling {tol:.2}{unit}", m.label))),
                        ),
                        Some(_) => (Status::Ok, None),
                        None => (Status::Info, None),
                    };
                    (format!("≤ {tol:.2}"), status, failure)
                }
                // A preset that compacts on neither side has no quality to show.
                None if bv.is_none() && nv.is_none() => continue,
                None => (String::new(), Status::Info, None),
            };
            if let Some((rule, detail)) = failure {
                fail(&mut failures, &p.policy, rule, detail);
            }
            let change = match (bp, np) {
                (Some(b), Some(n)) if m.unit == Unit::Count => format!("{:+}", n as i64 - b as i64),
                (Some(b), Some(n)) => format!("{:+.2}", crate::num::shown(n - b, 2)),
                _ => String::new(),
            };
            line(m.label, m.points(bv), m.points(nv), change, rule, status);
        }
        if p.recorded {
            continue;
        }
        // Per-session counters: violations and no-progress compactions.
        let mine: Vec<&SessionMetrics> = now.sessions.iter().filter(|s| s.policy == p.policy).collect();
        let mut new_violations = Vec::new();
        let mut new_no_progress = Vec::new();
        let mut lost = Vec::new();
        for s in &mine {
            let old = base_sessions.get(&(s.session_id.as_str(), s.file.as_str(), s.policy.as_str()));
            let (ov, onp) = old.map_or((0, 0), |o| (o.violations, o.no_progress_compactions));
            if s.violations > ov {
                new_violations.push(format!("{} ({ov} → {})", s.session_id, s.violations));
            }
            if s.no_progress_compactions > onp {
                new_no_progress.push(format!("{} ({onp} → {})", s.session_id, s.no_progress_compactions));
            }
            if must_keep.matches(s) && !s.lost_modified_paths.is_empty() {
                lost.push(format!("{}: {}", s.session_id, s.lost_modified_paths.join(", ")));
            }
        }
        for (metric, rule, found, b_total, n_total) in [
            (
                "invariant violations",
                Rule::NewViolations,
                new_violations,
                b.violations,
                mine.iter().map(|s| s.violations).sum::<u64>(),
            ),
            (
                "no-progress compactions",
                Rule::NewNoProgress,
                new_no_progress,
                b.no_progress_compactions,
                mine.iter().map(|s| s.no_progress_compactions).sum::<u64>(),
            ),
        ] {
            let status = if found.is_empty() { Status::Ok } else { Status::Regression };
            if !found.is_empty() {
                fail(&mut failures, &p.policy, rule, format!("in {}", found.join("; ")));
            }
            line(
                metric,
                b_total.to_string(),
                n_total.to_string(),
                count_delta(b_total, n_total),
                "no new per session".to_string(),
                status,
            );
        }
        let marked = mine.iter().filter(|s| must_keep.matches(s)).count();
        if marked > 0 {
            let status = if lost.is_empty() { Status::Ok } else { Status::Regression };
            let n_lost: usize = mine.iter().filter(|s| must_keep.matches(s)).map(|s| s.lost_modified_paths.len()).sum();
            if !lost.is_empty() {
                fail(&mut failures, &p.policy, Rule::MustKeepLost, lost.join("; "));
            }
            line(
                "must-keep paths lost",
                "–".to_string(),
                n_lost.to_string(),
                String::new(),
                format!("0 over {marked} session(s)"),
                status,
            );
        }
    }
    for b in &base.presets {
        if !now.presets.iter().any(|p| p.policy == b.policy) {
            notes.push(format!("preset `{}` is in the baseline but was not replayed", b.policy));
        }
    }
    let missing = base
        .sessions
        .iter()
        .filter(|b| !now.sessions.iter().any(|s| s.session_id == b.session_id && s.file == b.file))
        .map(|b| (b.session_id.as_str(), b.file.as_str()))
        .collect::<std::collections::BTreeSet<_>>();
    if !missing.is_empty() {
        notes.push(format!("{} baseline session(s) were not replayed", missing.len()));
    }
    Outcome { lines, failures, notes }
}

/// A preset's metrics as the metric table reads them (points back to shares).
fn totals(p: &PresetMetrics) -> Totals {
    let share = |v: Option<f64>| v.map(|x| x / 100.0);
    Totals {
        sessions: p.sessions,
        sessions_failed: p.sessions_failed,
        savings_pct: p.savings_pct,
        compactions: p.compactions,
        no_progress_compactions: p.no_progress_compactions,
        quality_measured: p.frr.is_some() || p.artifact_recall.is_some() || p.hallucination.is_some(),
        frr_pooled: share(p.frr),
        frr_truncate: share(p.frr_truncate),
        frr_masking: share(p.frr_masking),
        frr_masking_budget: share(p.frr_masking_budget),
        frr_oracle: share(p.frr_oracle),
        artifact_recall: share(p.artifact_recall),
        hallucination: share(p.hallucination),
        ..Totals::default()
    }
}

#[cfg(test)]
mod tests;
