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
//! Everything here is pure: the CLI loads, replays, prints and picks the exit
//! code.

use crate::quality::{CANDIDATE_POLICY, REF_MASKING, REF_MASKING_BUDGET, REF_ORACLE, REF_TRUNCATE};
use crate::report::markdown::cell;
use crate::report::{Report, round4};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// `kind` of a baseline file.
pub const BASELINE_KIND: &str = "compactor-baseline";
/// Bumped whenever a baseline field changes meaning or disappears.
pub const BASELINE_VERSION: u32 = 1;

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

/// What `check --write-baseline` writes and `check --baseline` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub kind: String,
    pub version: u32,
    /// compactor version that wrote it (informative only).
    pub tool_version: String,
    /// Globs of the sessions marked must-keep (see the module docs).
    #[serde(default)]
    pub must_keep: Vec<String>,
    /// How the policies were chosen, so `check --baseline FILE` without policy
    /// flags replays the same ones.
    #[serde(default)]
    pub replay: ReplaySettings,
    /// One per preset, in the order replayed.
    pub presets: Vec<PresetMetrics>,
    /// One per (session, preset), sorted by session, file, preset.
    pub sessions: Vec<SessionMetrics>,
}

/// The policy flags of the run that wrote a baseline (`--preset`, `--set`,
/// `--estimator`, `--summarizer`; `--policy` files are not recorded, since
/// their paths mean nothing elsewhere).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplaySettings {
    pub presets: Vec<String>,
    pub sets: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimator: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<String>,
}

impl ReplaySettings {
    pub fn is_empty(&self) -> bool {
        self.presets.is_empty() && self.sets.is_empty() && self.estimator.is_none() && self.summarizer.is_none()
    }
}

/// Metrics of one preset over all sessions. Percentages are 0–100.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PresetMetrics {
    pub policy: String,
    pub sessions: u64,
    pub sessions_failed: u64,
    pub savings_pct: f64,
    pub compactions: u64,
    pub no_progress_compactions: u64,
    pub violations: u64,
    /// Pooled FRR of the policy's summaries; `None` without a scored compaction.
    pub frr: Option<f64>,
    pub frr_truncate: Option<f64>,
    pub frr_masking: Option<f64>,
    pub frr_masking_budget: Option<f64>,
    pub frr_oracle: Option<f64>,
    pub artifact_recall: Option<f64>,
    pub hallucination: Option<f64>,
    pub summary_tokens_mean: Option<f64>,
}

/// Metrics of one session under one preset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionMetrics {
    pub session_id: String,
    /// File name of the log (not the path: a baseline must match when the
    /// corpus is read from another directory).
    pub file: String,
    pub policy: String,
    pub failed: bool,
    pub savings_pct: f64,
    pub compactions: u64,
    pub no_progress_compactions: u64,
    pub violations: u64,
    pub frr: Option<f64>,
    /// Modified paths the policy's summaries did not name, over all events.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost_modified_paths: Vec<String>,
    /// The full source path; used for must-keep matching, not stored.
    #[serde(skip)]
    pub source_path: String,
}

// The lenient view of report.json: only what a baseline needs, every field
// defaulted, unknown fields ignored.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ReportView {
    schema_version: u32,
    tool: ToolView,
    aggregates: Vec<AggregateView>,
    sessions: Vec<RowView>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolView {
    version: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AggregateView {
    policy: String,
    sessions: u64,
    sessions_failed: u64,
    savings_pct: f64,
    compactions: u64,
    no_progress_compactions: u64,
    violations: u64,
    quality: Option<QualityView>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct QualityView {
    candidates: Vec<StatsView>,
    events: Vec<EventView>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct StatsView {
    summarizer: String,
    frr_pooled: Option<f64>,
    artifact_trail_recall_mean: Option<f64>,
    hallucination_rate_mean: Option<f64>,
    summary_tokens_mean: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct EventView {
    lost_modified_paths: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RowView {
    session_id: String,
    source_path: String,
    policy: String,
    metrics: RowMetricsView,
    violations: u64,
    error: Option<String>,
    quality: Option<QualityView>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RowMetricsView {
    savings_pct: f64,
    compactions: u64,
    no_progress_compactions: u64,
}

impl QualityView {
    fn points(&self, name: &str, f: fn(&StatsView) -> Option<f64>) -> Option<f64> {
        self.candidates.iter().find(|c| c.summarizer == name).and_then(f).map(|x| round4(x * 100.0))
    }
}

fn file_name(path: &str) -> String {
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

impl Baseline {
    /// The baseline of an in-memory report.
    pub fn from_report(report: &Report, must_keep: &[String]) -> Baseline {
        let value = serde_json::to_value(report).unwrap_or_default();
        Baseline::from_report_value(value, must_keep).unwrap_or_else(|_| Baseline::empty(must_keep))
    }

    fn empty(must_keep: &[String]) -> Baseline {
        Baseline {
            kind: BASELINE_KIND.to_string(),
            version: BASELINE_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            must_keep: must_keep.to_vec(),
            replay: ReplaySettings::default(),
            presets: Vec::new(),
            sessions: Vec::new(),
        }
    }

    /// Read a baseline file or a `report.json`.
    pub fn from_report_json(bytes: &[u8]) -> Result<Baseline, CheckError> {
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| CheckError::Json(e.to_string()))?;
        if value.get("kind").and_then(|k| k.as_str()) == Some(BASELINE_KIND) {
            let version = value.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
            if version > u64::from(BASELINE_VERSION) {
                return Err(CheckError::Version { found: version as u32 });
            }
            return serde_json::from_value(value).map_err(|e| CheckError::Json(e.to_string()));
        }
        if value.get("aggregates").is_some() {
            return Baseline::from_report_value(value, &[]);
        }
        Err(CheckError::Unknown)
    }

    fn from_report_value(value: serde_json::Value, must_keep: &[String]) -> Result<Baseline, CheckError> {
        let r: ReportView = serde_json::from_value(value).map_err(|e| CheckError::Json(e.to_string()))?;
        let _ = r.schema_version;
        let presets = r
            .aggregates
            .iter()
            .map(|a| {
                let q = a.quality.as_ref();
                let frr = |name: &str| q.and_then(|q| q.points(name, |c| c.frr_pooled));
                PresetMetrics {
                    policy: a.policy.clone(),
                    sessions: a.sessions,
                    sessions_failed: a.sessions_failed,
                    savings_pct: a.savings_pct,
                    compactions: a.compactions,
                    no_progress_compactions: a.no_progress_compactions,
                    violations: a.violations,
                    frr: frr(CANDIDATE_POLICY),
                    frr_truncate: frr(REF_TRUNCATE),
                    frr_masking: frr(REF_MASKING),
                    frr_masking_budget: frr(REF_MASKING_BUDGET),
                    frr_oracle: frr(REF_ORACLE),
                    artifact_recall: q.and_then(|q| q.points(CANDIDATE_POLICY, |c| c.artifact_trail_recall_mean)),
                    hallucination: q.and_then(|q| q.points(CANDIDATE_POLICY, |c| c.hallucination_rate_mean)),
                    summary_tokens_mean: q
                        .and_then(|q| q.candidates.iter().find(|c| c.summarizer == CANDIDATE_POLICY))
                        .and_then(|c| c.summary_tokens_mean)
                        .map(round4),
                }
            })
            .collect();
        let mut sessions: Vec<SessionMetrics> = r
            .sessions
            .iter()
            .map(|s| {
                let mut lost: Vec<String> = s
                    .quality
                    .iter()
                    .flat_map(|q| q.events.iter().flat_map(|e| e.lost_modified_paths.iter().cloned()))
                    .collect();
                lost.sort();
                lost.dedup();
                SessionMetrics {
                    session_id: s.session_id.clone(),
                    file: file_name(&s.source_path),
                    policy: s.policy.clone(),
                    failed: s.error.is_some(),
                    savings_pct: s.metrics.savings_pct,
                    compactions: s.metrics.compactions,
                    no_progress_compactions: s.metrics.no_progress_compactions,
                    violations: s.violations,
                    frr: s.quality.as_ref().and_then(|q| q.points(CANDIDATE_POLICY, |c| c.frr_pooled)),
                    lost_modified_paths: lost,
                    source_path: s.source_path.clone(),
                }
            })
            .collect();
        sessions.sort_by(|a, b| (&a.session_id, &a.file, &a.policy).cmp(&(&b.session_id, &b.file, &b.policy)));
        let tool_version = if r.tool.version.is_empty() { "unknown".to_string() } else { r.tool.version };
        Ok(Baseline { tool_version, must_keep: must_keep.to_vec(), presets, sessions, ..Baseline::empty(&[]) })
    }

    /// The file `--write-baseline` writes: pretty JSON, newline-terminated.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }
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
                "not in baseline".into(),
                Status::New,
            );
            line("FRR", "–".into(), pts(p.frr), String::new(), "not in baseline".into(), Status::New);
            notes.push(format!("preset `{}` is not in the baseline: nothing to compare", p.policy));
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

/// The markdown report: a verdict line, one table (baseline vs now, per metric,
/// per preset) and the regressions in detail. Fit for `$GITHUB_STEP_SUMMARY`.
pub fn markdown(outcome: &Outcome) -> String {
    let mut out = String::new();
    if outcome.regressed() {
        let _ = writeln!(out, "## compactor check: {} regression(s)\n", outcome.failures.len());
    } else {
        out.push_str("## compactor check: no regression\n\n");
    }
    out.push_str("| preset | metric | baseline | now | change | rule | result |\n");
    out.push_str("|---|---|---:|---:|---:|---|---|\n");
    for l in &outcome.lines {
        let status = match l.status {
            Status::Ok => "ok",
            Status::Regression => "**REGRESSION**",
            Status::Info => "",
            Status::New => "new",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            cell(&l.policy),
            l.metric,
            l.baseline,
            l.now,
            l.change,
            l.rule,
            status
        );
    }
    out.push('\n');
    out.push_str(
        "FRR = weighted share of what the agent needed after each compaction that its summary kept \
(points, pooled over events); the truncate / masking / oracle rows are the reference points at the same \
compaction points.\n",
    );
    if !outcome.failures.is_empty() {
        out.push_str("\n### Regressions\n\n");
        let mut by: BTreeMap<(&str, Rule), Vec<&str>> = BTreeMap::new();
        for f in &outcome.failures {
            by.entry((f.policy.as_str(), f.rule)).or_default().push(&f.detail);
        }
        for ((policy, rule), details) in by {
            let _ = writeln!(out, "- `{}` {}: {}", cell(policy), rule.name(), cell_long(&details.join("; ")));
        }
    }
    if !outcome.notes.is_empty() {
        out.push_str("\n### Notes\n\n");
        for n in &outcome.notes {
            let _ = writeln!(out, "- {}", cell_long(n));
        }
    }
    out
}

/// Like [`cell`] but with a longer bound, for the detail lists (session ids and
/// paths come from untrusted logs).
fn cell_long(s: &str) -> String {
    let bounded: String = s.chars().take(2_000).collect();
    let mut out = String::with_capacity(bounded.len());
    for c in bounded.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    if s.chars().count() > 2_000 {
        out.push('…');
    }
    out
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
