//! The few quality numbers `compare` columns and `sweep` points show (FRR,
//! artifact-trail recall, hallucination rate), as [`QualityScore`] sums:
//! from a [`SessionQuality`] already computed by the replay, or through the
//! [`QualityHook`] the sweep calls per (session, grid point).
//!
//! Each is the mean over the compactions where it is defined, of the row of the
//! policy's own summary: references are not needed here, so the sweep hook
//! skips them (they cost as much as the policy's row each).

use super::index::SessionAtoms;
use super::replay::{CANDIDATE_POLICY, QualityOptions, SessionQuality, evaluate_trace};
use crate::model::Session;
use crate::outcome::{PreparedQuality, QualityHook, QualityScore};
use crate::policy::Policy;
use crate::replay::{Resolver, SessionTrace};
use crate::tokens::{Estimator, EstimatorKind};
use std::sync::{Arc, OnceLock};

impl SessionQuality {
    /// The policy row of every event, as sums (see [`QualityScore`]).
    pub fn score(&self) -> QualityScore {
        let mut s = QualityScore::default();
        for row in self.events.iter().flat_map(|e| e.rows.iter().filter(|r| r.summarizer == CANDIDATE_POLICY)) {
            if let Some(f) = row.frr {
                s.frr_events += 1;
                s.frr_sum += f;
            }
            if let Some(a) = row.artifact_trail_recall {
                s.artifact_events += 1;
                s.artifact_sum += a;
            }
            if let Some(h) = row.hallucination_rate {
                s.hallucination_events += 1;
                s.hallucination_sum += h;
            }
        }
        s
    }
}

/// The sweep's quality hook: atoms extracted once per session (lazily: a
/// session no grid point compacts costs nothing), each trace scored with the
/// policy's estimator and pruning shape, without references.
pub struct TraceQualityHook {
    /// Every estimator the resolver offers, resolved once.
    estimators: Arc<[(EstimatorKind, Arc<dyn Estimator>)]>,
}

impl TraceQualityHook {
    pub fn new(resolver: &dyn Resolver) -> TraceQualityHook {
        let kinds = [
            EstimatorKind::Chars4,
            EstimatorKind::PerBlock,
            EstimatorKind::O200k,
            EstimatorKind::Cl100k,
            EstimatorKind::Calibrated,
        ];
        let estimators = kinds.into_iter().filter_map(|k| Some((k, resolver.estimator(k).ok()?))).collect();
        TraceQualityHook { estimators }
    }
}

struct Prepared<'s> {
    session: &'s Session,
    atoms: OnceLock<SessionAtoms<'s>>,
    estimators: Arc<[(EstimatorKind, Arc<dyn Estimator>)]>,
}

impl QualityHook for TraceQualityHook {
    fn prepare<'s>(&self, session: &'s Session) -> Box<dyn PreparedQuality + 's> {
        Box::new(Prepared { session, atoms: OnceLock::new(), estimators: self.estimators.clone() })
    }
}

impl PreparedQuality for Prepared<'_> {
    fn evaluate(&self, policy: &Policy, trace: &SessionTrace) -> QualityScore {
        if trace.compactions.iter().all(|c| !c.applied) {
            return QualityScore::default();
        }
        let Some((_, est)) = self.estimators.iter().find(|(k, _)| *k == policy.estimator) else {
            return QualityScore::default();
        };
        let atoms = self.atoms.get_or_init(|| SessionAtoms::from_session(self.session));
        let opts = QualityOptions {
            masking_keep: None,
            masking_at_budget: false,
            truncate: false,
            oracle: false,
            pruning_loss: false,
            ..QualityOptions::for_policy(policy)
        };
        evaluate_trace(self.session, trace, atoms, est.as_ref(), &opts).score()
    }
}
