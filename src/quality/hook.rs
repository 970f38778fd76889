//! The quality of a replay as sums, and the hook through which a batch runner
//! asks for it: sessions and sweep points then aggregate by addition.

use crate::model::Session;
use crate::policy::Policy;
use crate::replay::SessionTrace;
use crate::text::atoms::SessionLens;
use serde::{Deserialize, Serialize};

/// Quality of the compactions of one replay (or a sum of them), as sums so
/// sessions and points aggregate by addition. FRR is pooled, as everywhere
/// (Σ weight kept / Σ weight needed over the compactions); the other means
/// are over the compaction events where the component is defined (artifact
/// recall needs modified paths, hallucination a summary with atoms).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct QualityScore {
    pub frr_events: u64,
    pub frr_sum: f64,
    /// Σ weight of the needed atoms the summaries kept.
    #[serde(default)]
    pub frr_hit_weight: f64,
    /// Σ weight of the needed atoms.
    #[serde(default)]
    pub frr_needed_weight: f64,
    pub artifact_events: u64,
    pub artifact_sum: f64,
    pub hallucination_events: u64,
    pub hallucination_sum: f64,
}

impl QualityScore {
    pub fn add(&mut self, o: &QualityScore) {
        self.frr_events += o.frr_events;
        self.frr_sum += o.frr_sum;
        self.frr_hit_weight += o.frr_hit_weight;
        self.frr_needed_weight += o.frr_needed_weight;
        self.artifact_events += o.artifact_events;
        self.artifact_sum += o.artifact_sum;
        self.hallucination_events += o.hallucination_events;
        self.hallucination_sum += o.hallucination_sum;
    }

    /// Add one compaction's row (each component where it is defined).
    pub fn add_row(&mut self, row: RowScore) {
        let RowScore { frr, hit_weight, needed_weight, artifact, hallucination } = row;
        if let Some(f) = frr {
            self.frr_events += 1;
            self.frr_sum += f;
            self.frr_hit_weight += hit_weight;
            self.frr_needed_weight += needed_weight;
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

    /// Pooled FRR over the events with needed atoms, in [0, 1]: the one FRR
    /// every report and gate shows.
    pub fn frr(&self) -> Option<f64> {
        (self.frr_events > 0 && self.frr_needed_weight > 0.0)
            .then(|| crate::num::round4(self.frr_hit_weight / self.frr_needed_weight))
    }
    /// Mean of the events' FRR (each compaction counts alike), in [0, 1].
    pub fn frr_mean(&self) -> Option<f64> {
        mean(self.frr_sum, self.frr_events)
    }
    pub fn artifact_recall(&self) -> Option<f64> {
        mean(self.artifact_sum, self.artifact_events)
    }
    pub fn hallucination(&self) -> Option<f64> {
        mean(self.hallucination_sum, self.hallucination_events)
    }
}

/// What one compaction's row adds to a [`QualityScore`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RowScore {
    pub frr: Option<f64>,
    /// Σ w(a)·match(a, S) over the needed atoms.
    pub hit_weight: f64,
    /// Σ w(a) over the needed atoms.
    pub needed_weight: f64,
    pub artifact: Option<f64>,
    pub hallucination: Option<f64>,
}

impl RowScore {
    pub fn of(row: &super::CompactionQuality) -> RowScore {
        RowScore {
            frr: row.frr,
            hit_weight: row.frr_hit_weight,
            needed_weight: row.needed_weight,
            artifact: row.artifact_trail_recall,
            hallucination: row.hallucination_rate,
        }
    }
}

fn mean(sum: f64, n: u64) -> Option<f64> {
    (n > 0).then(|| crate::num::round4(sum / n as f64))
}

/// Scores the compactions of a trace. `prepare` runs once per session (atom
/// extraction, the expensive part) and what it returns is shared by every
/// policy of that session; its `evaluate` runs per (session, policy). The
/// prepared value may borrow the session (atoms point into its messages).
pub trait QualityHook: Sync {
    fn prepare<'s>(&self, session: &'s Session) -> Box<dyn PreparedQuality + 's>;

    /// [`QualityHook::prepare`] reading the messages' atoms from the
    /// session's `lens`, shared with the summarizers that replay it.
    fn prepare_with<'s>(&self, session: &'s Session, _lens: &'s SessionLens<'s>) -> Box<dyn PreparedQuality + 's> {
        self.prepare(session)
    }
}

/// A session prepared by a [`QualityHook`].
pub trait PreparedQuality: Send + Sync {
    fn evaluate(&self, policy: &Policy, trace: &SessionTrace) -> QualityScore;
    /// The session's last `evaluate` is done: drop what was kept to share
    /// work between its policies (results do not change, memory is freed).
    fn release(&self) {}
}
