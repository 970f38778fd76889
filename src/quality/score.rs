//! The few quality numbers `compare` columns and `sweep` points show (FRR,
//! artifact-trail recall, hallucination rate), as [`QualityScore`] sums:
//! from a [`SessionQuality`] already computed by the replay, or through the
//! [`QualityHook`] the sweep calls per (session, grid point).
//!
//! Each is the mean over the compactions where it is defined, of the row of the
//! policy's own summary: references are not needed here, so the sweep hook
//! skips them (they cost as much as the policy's row each).

use super::hook::{PreparedQuality, QualityHook, QualityScore};
use super::index::SessionAtoms;
use super::replay::{CANDIDATE_POLICY, SessionQuality, SharedScores, score_trace_shared};
use crate::model::Session;
use crate::policy::Policy;
use crate::replay::{Resolver, SessionTrace};
use crate::text::atoms::SessionLens;
use crate::tokens::{Estimator, EstimatorKind};
use std::sync::{Arc, Mutex};

impl SessionQuality {
    /// The policy row of every event, as sums (see [`QualityScore`]).
    pub fn score(&self) -> QualityScore {
        let mut s = QualityScore::default();
        for row in self.events.iter().flat_map(|e| e.rows.iter().filter(|r| r.summarizer == CANDIDATE_POLICY)) {
            s.add_row(super::hook::RowScore::of(row));
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
    /// The session's atoms, when shared with its replays' summarizers.
    lens: Option<&'s SessionLens<'s>>,
    /// Built on first need; dropped by `release`.
    atoms: Mutex<Option<Arc<SessionAtoms<'s>>>>,
    shared: SharedScores,
    estimators: Arc<[(EstimatorKind, Arc<dyn Estimator>)]>,
}

impl QualityHook for TraceQualityHook {
    fn prepare<'s>(&self, session: &'s Session) -> Box<dyn PreparedQuality + 's> {
        Box::new(Prepared {
            session,
            lens: None,
            atoms: Mutex::new(None),
            shared: SharedScores::default(),
            estimators: self.estimators.clone(),
        })
    }

    fn prepare_with<'s>(&self, session: &'s Session, lens: &'s SessionLens<'s>) -> Box<dyn PreparedQuality + 's> {
        Box::new(Prepared {
            session,
            lens: Some(lens),
            atoms: Mutex::new(None),
            shared: SharedScores::default(),
            estimators: self.estimators.clone(),
        })
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
        let atoms = {
            // Held while building: the session's other replays wait for the
            // one extraction instead of each doing it.
            let Ok(mut slot) = self.atoms.lock() else { return QualityScore::default() };
            let build = || match self.lens {
                Some(lens) => SessionAtoms::from_lens(self.session, lens),
                None => SessionAtoms::from_session(self.session),
            };
            slot.get_or_insert_with(|| Arc::new(build())).clone()
        };
        // Many grid points compact at the same places with the same summaries:
        // each distinct event is scored once (`SharedScores`).
        score_trace_shared(self.session, trace, &atoms, est.as_ref(), policy.compact.file_ops, &self.shared)
    }

    fn release(&self) {
        self.shared.clear();
        if let Ok(mut slot) = self.atoms.lock() {
            *slot = None;
        }
    }
}
