//! What one replay (one session under one policy) comes to, in the few numbers
//! `compare` columns and `sweep` points are made of: tokens, money, overflows,
//! compactions and summary quality. [`SessionOutcome`] is computed per
//! (session, policy) and dropped with its trace; [`OutcomeTotals`] folds them per
//! policy, in session order so sums are byte-identical at any thread count.
//!
//! Summary quality (FRR, artifact-trail recall, hallucination rate) comes through
//! [`QualityHook`]: the quality evaluation of a trace (`crate::quality`) plugs in
//! there. Without a hook the quality columns read "n/a".

use crate::cost::{CostTotals, SessionCost};
use crate::model::Session;
use crate::policy::Policy;
use crate::replay::{SessionMetrics, SessionTrace};
use serde::{Deserialize, Serialize};

/// Quality of the compactions of one replay (or a sum of them), as sums so
/// sessions and points aggregate by addition. Each mean is over the compaction
/// events where the component is defined (FRR needs needed atoms, artifact
/// recall modified paths, hallucination a summary with atoms).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct QualityScore {
    pub frr_events: u64,
    pub frr_sum: f64,
    pub artifact_events: u64,
    pub artifact_sum: f64,
    pub hallucination_events: u64,
    pub hallucination_sum: f64,
}

impl QualityScore {
    pub fn add(&mut self, o: &QualityScore) {
        self.frr_events += o.frr_events;
        self.frr_sum += o.frr_sum;
        self.artifact_events += o.artifact_events;
        self.artifact_sum += o.artifact_sum;
        self.hallucination_events += o.hallucination_events;
        self.hallucination_sum += o.hallucination_sum;
    }

    /// Add one compaction's row (each component where it is defined).
    pub fn add_row(&mut self, frr: Option<f64>, artifact: Option<f64>, hallucination: Option<f64>) {
        if let Some(f) = frr {
            self.frr_events += 1;
            self.frr_sum += f;
        }
        if let Some(a) = artifact {
            self.artifact_events += 1;
            self.artifact_sum += a;
        }
        if let Some(h) = hallucination {
            self.hallucination_events += 1;
            self.hallucination_sum += h;
        }
    }

    /// Mean FRR over events with needed atoms, in [0, 1].
    pub fn frr(&self) -> Option<f64> {
        mean(self.frr_sum, self.frr_events)
    }
    pub fn artifact_recall(&self) -> Option<f64> {
        mean(self.artifact_sum, self.artifact_events)
    }
    pub fn hallucination(&self) -> Option<f64> {
        mean(self.hallucination_sum, self.hallucination_events)
    }
}

fn mean(sum: f64, n: u64) -> Option<f64> {
    (n > 0).then(|| crate::report::round4(sum / n as f64))
}

/// Scores the compactions of a trace. `prepare` runs once per session (atom
/// extraction, the expensive part) and what it returns is shared by every
/// policy of that session; its `evaluate` runs per (session, policy). The
/// prepared value may borrow the session (atoms point into its messages).
pub trait QualityHook: Sync {
    fn prepare<'s>(&self, session: &'s Session) -> Box<dyn PreparedQuality + 's>;
}

/// A session prepared by a [`QualityHook`].
pub trait PreparedQuality: Send + Sync {
    fn evaluate(&self, policy: &Policy, trace: &SessionTrace) -> QualityScore;
    /// The session's last `evaluate` is done: drop what was kept to share
    /// work between its policies (results do not change, memory is freed).
    fn release(&self) {}
}

/// One replay, reduced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionOutcome {
    pub metrics: SessionMetrics,
    pub cost: SessionCost,
    /// `None` when no quality hook is wired.
    pub quality: Option<QualityScore>,
}

/// One policy over every session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutcomeTotals {
    pub sessions: u64,
    pub sessions_failed: u64,
    pub calls: u64,
    pub input_tokens_baseline: u64,
    pub input_tokens_policy: u64,
    pub savings_pct: f64,
    pub overflow_calls_baseline: u64,
    pub overflow_calls_policy: u64,
    pub compactions: u64,
    pub no_progress_compactions: u64,
    pub summarizer_tokens: u64,
    pub cost: CostTotals,
    pub quality: Option<QualityScore>,
}

impl OutcomeTotals {
    pub fn add(&mut self, o: &SessionOutcome) {
        let m = &o.metrics;
        self.sessions += 1;
        self.calls += m.calls;
        self.input_tokens_baseline += m.input_tokens_baseline;
        self.input_tokens_policy += m.input_tokens_policy;
        self.overflow_calls_baseline += m.overflow_calls_baseline;
        self.overflow_calls_policy += m.overflow_calls_policy;
        self.compactions += m.compactions;
        self.no_progress_compactions += m.no_progress_compactions;
        self.summarizer_tokens += m.summarizer_tokens;
        self.cost.add(&o.cost);
        if let Some(q) = &o.quality {
            self.quality.get_or_insert_with(QualityScore::default).add(q);
        }
    }

    pub fn add_failure(&mut self) {
        self.sessions_failed += 1;
    }

    pub fn finish(mut self) -> OutcomeTotals {
        self.savings_pct = crate::report::savings_pct(self.input_tokens_baseline, self.input_tokens_policy);
        self.cost = self.cost.finish();
        self
    }
}
