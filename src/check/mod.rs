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

pub use baseline::{BASELINE_KIND, BASELINE_VERSION, Baseline, PresetMetrics, ReplaySettings, SessionMetrics};
pub use params::{Coverage, RunSettings, coverage};

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

/// Tolerances of one preset (flags override the policy's `check.*` keys).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    pub max_frr_drop: f64,
    pub max_savings_drop: f64,
    pub max_hallucination: f64,
}

impl From<&crate::policy::CheckTolerances> for Tolerances {
    fn from(t: &crate::policy::CheckTolerances) -> Tolerances {
        Tolerances {
            max_frr_drop: t.max_frr_drop,
            max_savings_drop: t.max_savings_drop,
            max_hallucination: t.max_hallucination,
        }
    }
}

/// What a rule checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    FrrDrop,
    SavingsDrop,
    Hallucination,
    NewViolations,
    NewNoProgress,
    MustKeepLost,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::FrrDrop => "FRR drop",
            Rule::SavingsDrop => "savings drop",
            Rule::Hallucination => "hallucination",
            Rule::NewViolations => "new invariant violations",
            Rule::NewNoProgress => "new no-progress compactions",
            Rule::MustKeepLost => "modified path lost on a must-keep session",
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
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub policy: String,
    pub metric: &'static str,
    pub baseline: String,
    pub now: String,
    pub change: String,
    pub rule: String,
    pub status: Status,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Regression,
    /// Shown for context, not gated.
    Info,
    /// The preset is not in the baseline.
    New,
}

/// The result of a comparison.
#[derive(Debug, Clone, PartialEq)]
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
        let mut globs = globs.to_vec();
        globs.sort();
        globs.dedup();
        Ok(MustKeep { globs, set })
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

fn pts(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".to_string())
}

fn delta(base: Option<f64>, now: Option<f64>) -> String {
    match (base, now) {
        (Some(b), Some(n)) => format!("{:+.2}", n - b),
        _ => String::new(),
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
    let default = Tolerances::from(&crate::policy::CheckTolerances::default());
    let base_sessions: HashMap<(&str, &str, &str), &SessionMetrics> =
        base.sessions.iter().map(|s| ((s.session_id.as_str(), s.file.as_str(), s.policy.as_str()), s)).collect();
    fn fail(failures: &mut Vec<Failure>, policy: &str, rule: Rule, detail: String) {
        failures.push(Failure { policy: policy.to_string(), rule, detail });
    }
    for p in &now.presets {
        let tol = tolerances.get(&p.policy).copied().unwrap_or(default);
        let b = base.presets.iter().find(|b| b.policy == p.policy);
        let mut line = |metric: &'static str, baseline: String, now: String, change: String, rule: String, status| {
            lines.push(Line { policy: p.policy.clone(), metric, baseline, now, change, rule, status });
        };
        let Some(b) = b else {
            line(
                "savings %",
                "–".into(),
                pts(Some(p.savings_pct)),
                String::new(),
                "not in baseline, not compared".into(),
                Status::New,
            );
            line("FRR", "–".into(), pts(p.frr), String::new(), "not in baseline, not compared".into(), Status::New);
            notes.push(format!("policy `{}` is not in the baseline: not compared", p.policy));
            continue;
        };
        // FRR of the policy's summaries.
        let frr_status = match (b.frr, p.frr) {
            (Some(bf), Some(nf)) if nf < bf - tol.max_frr_drop - 1e-9 => {
                fail(
                    &mut failures,
                    &p.policy,
                    Rule::FrrDrop,
                    format!("FRR {nf:.2}, baseline {bf:.2}, allowed drop {:.2}", tol.max_frr_drop),
                );
                Status::Regression
            }
            (Some(_), Some(_)) => Status::Ok,
            _ => Status::Info,
        };
        line("FRR", pts(b.frr), pts(p.frr), delta(b.frr, p.frr), format!("drop ≤ {:.2}", tol.max_frr_drop), frr_status);
        for (metric, bv, nv) in [
            ("FRR truncate", b.frr_truncate, p.frr_truncate),
            ("FRR masking", b.frr_masking, p.frr_masking),
            ("FRR masking@budget", b.frr_masking_budget, p.frr_masking_budget),
            ("FRR oracle", b.frr_oracle, p.frr_oracle),
            ("artifact recall %", b.artifact_recall, p.artifact_recall),
        ] {
            // A preset that compacts on neither side has no quality to show.
            if bv.is_some() || nv.is_some() {
                line(metric, pts(bv), pts(nv), delta(bv, nv), String::new(), Status::Info);
            }
        }
        // Hallucination: an absolute ceiling.
        let h_status = match p.hallucination {
            Some(h) if h > tol.max_hallucination + 1e-9 => {
                fail(
                    &mut failures,
                    &p.policy,
                    Rule::Hallucination,
                    format!("hallucination {h:.2}%, ceiling {:.2}%", tol.max_hallucination),
                );
                Status::Regression
            }
            Some(_) => Status::Ok,
            None => Status::Info,
        };
        if b.hallucination.is_some() || p.hallucination.is_some() {
            line(
                "hallucination %",
                pts(b.hallucination),
                pts(p.hallucination),
                delta(b.hallucination, p.hallucination),
                format!("≤ {:.2}", tol.max_hallucination),
                h_status,
            );
        }
        // Savings.
        let s_status = if p.savings_pct < b.savings_pct - tol.max_savings_drop - 1e-9 {
            fail(
                &mut failures,
                &p.policy,
                Rule::SavingsDrop,
                format!(
                    "savings {:.2}%, baseline {:.2}%, allowed drop {:.2}",
                    p.savings_pct, b.savings_pct, tol.max_savings_drop
                ),
            );
            Status::Regression
        } else {
            Status::Ok
        };
        line(
            "savings %",
            pts(Some(b.savings_pct)),
            pts(Some(p.savings_pct)),
            delta(Some(b.savings_pct), Some(p.savings_pct)),
            format!("drop ≤ {:.2}", tol.max_savings_drop),
            s_status,
        );
        line(
            "compactions",
            b.compactions.to_string(),
            p.compactions.to_string(),
            count_delta(b.compactions, p.compactions),
            String::new(),
            Status::Info,
        );
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

#[cfg(test)]
mod tests;
