//! The baseline file of `compactor check`: what `--write-baseline` writes and
//! `--baseline` reads, and the lenient view of a `report.json` that reads as one.
//!
//! Besides the metrics, a baseline records what made them: every policy with
//! all its parameters (as `compactor presets --json` prints them) and the run
//! settings that are not policy parameters (`--format`, the `--llm-*` endpoint
//! flags). Both are optional, so baselines written before they were recorded
//! still load; `super::params` compares them with the run.

use super::CheckError;
use crate::num::round4;
use crate::pipeline::results::Report;
use crate::quality::{CANDIDATE_POLICY, REF_MASKING, REF_MASKING_BUDGET, REF_ORACLE, REF_TRUNCATE};
use serde::{Deserialize, Serialize};

/// `kind` of a baseline file.
pub const BASELINE_KIND: &str = "compactor-baseline";
/// Bumped whenever a baseline field changes meaning or disappears.
pub const BASELINE_VERSION: u32 = 1;

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
    /// Run settings that change the results but are no policy parameter
    /// (`format`, `llm.model`, …; see `super::params::RunSettings`). `None` in a
    /// report.json and in baselines written before they were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<super::params::RunSettings>,
    /// Every policy replayed, with all its parameters, in the order replayed.
    /// Kept as JSON, not as `Policy`, so a baseline whose policies have keys
    /// this compactor no longer knows still loads. Empty in baselines written
    /// before they were recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<serde_json::Value>,
    /// One per preset, in the order replayed.
    pub presets: Vec<PresetMetrics>,
    /// One per (session, preset), sorted by session, file, preset.
    pub sessions: Vec<SessionMetrics>,
}

/// The policy flags of the run that wrote a baseline (`--preset`, `--set`,
/// `--estimator`, `--summarizer`, `--summarizer-command`; `--policy` files are not recorded, since
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
    /// `--summarizer-command`, as typed (run from the current folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer_command: Option<String>,
}

impl ReplaySettings {
    pub fn is_empty(&self) -> bool {
        self.presets.is_empty()
            && self.sets.is_empty()
            && self.estimator.is_none()
            && self.summarizer.is_none()
            && self.summarizer_command.is_none()
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
    /// The row of the compactions the logs record ([`RECORDED_ROW`]), not a
    /// preset: only its quality is compared.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recorded: bool,
}

/// The policy name of the row of the agents' own compactions: their recorded
/// summaries scored over every agent and version, with the references at the
/// same points.
pub const RECORDED_ROW: &str = "recorded";

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
    policies: Vec<serde_json::Value>,
    aggregates: Vec<AggregateView>,
    sessions: Vec<RowView>,
    recorded: Vec<RecordedView>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RecordedView {
    events: Vec<RecordedEventView>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RecordedEventView {
    rows: Vec<crate::quality::CompactionQuality>,
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

/// The row of the agents' own compactions, pooled over every agent and
/// version; `None` when no log records a scored one.
fn recorded_row(recorded: &[RecordedView]) -> Option<PresetMetrics> {
    use crate::quality::{CANDIDATE_RECORDED, aggregate};
    let rows = recorded.iter().flat_map(|q| q.events.iter().flat_map(|e| e.rows.iter()));
    let stats = aggregate(rows);
    let of = |name: &str| stats.iter().find(|s| s.summarizer == name);
    let points = |v: Option<f64>| v.map(|x| round4(x * 100.0));
    let own = of(CANDIDATE_RECORDED)?;
    Some(PresetMetrics {
        policy: RECORDED_ROW.to_string(),
        sessions: recorded.iter().filter(|q| !q.events.iter().all(|e| e.rows.is_empty())).count() as u64,
        compactions: u64::from(own.events),
        frr: points(own.frr_pooled),
        frr_truncate: points(of(REF_TRUNCATE).and_then(|s| s.frr_pooled)),
        frr_masking_budget: points(of(REF_MASKING_BUDGET).and_then(|s| s.frr_pooled)),
        frr_oracle: points(of(REF_ORACLE).and_then(|s| s.frr_pooled)),
        artifact_recall: points(own.artifact_trail_recall_mean),
        hallucination: points(own.hallucination_rate_mean),
        summary_tokens_mean: own.summary_tokens_mean.map(round4),
        recorded: true,
        ..PresetMetrics::default()
    })
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

    pub(super) fn empty(must_keep: &[String]) -> Baseline {
        Baseline {
            kind: BASELINE_KIND.to_string(),
            version: BASELINE_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            must_keep: must_keep.to_vec(),
            replay: ReplaySettings::default(),
            settings: None,
            policies: Vec::new(),
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
                    recorded: false,
                }
            })
            .collect();
        let mut presets: Vec<PresetMetrics> = presets;
        presets.extend(recorded_row(&r.recorded));
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
        Ok(Baseline {
            tool_version,
            must_keep: must_keep.to_vec(),
            policies: r.policies,
            presets,
            sessions,
            ..Baseline::empty(&[])
        })
    }

    /// The file `--write-baseline` writes: pretty JSON, newline-terminated.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }
}
