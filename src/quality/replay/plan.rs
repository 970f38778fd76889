//! The quality plan of a run (which references each policy gets, which policies share
//! scores) and the scoring of a batch of replay results with it.

use super::*;
use crate::quality::recorded::{REF_EXTRACTIVE_BUDGET, REF_LLM_BUDGET, evaluate_recorded_with, recorded_summaries};
use crate::summarize::{Extractive, SummarizerKind};
use crate::text::atoms::SessionLens;

/// The written rows' summaries at a session's recorded compactions, by row name.
pub type Written = Vec<(&'static str, Vec<Option<String>>)>;

/// Reference names in report order, after [`CANDIDATE_POLICY`].
pub const REFERENCES: [&str; 4] = [REF_TRUNCATE, REF_MASKING, REF_MASKING_BUDGET, REF_ORACLE];

/// What scoring a replay needs per policy, resolved once per run: the
/// policy's estimator and [`QualityOptions::for_policy`]. A pipeline that
/// replays one session at a time calls [`QualityPlan::evaluate`] right after
/// it, while the session is still in memory.
pub struct QualityPlan {
    estimators: Vec<Option<Arc<dyn Estimator>>>,
    options: Vec<QualityOptions>,
    /// The LLM summarizer of the first policy that has one: it also writes
    /// the `llm@budget` row at the compactions the logs record.
    recorded_llm: Option<Arc<dyn Summarizer>>,
}

impl QualityPlan {
    pub fn new(policies: &[Policy], resolver: &dyn Resolver) -> QualityPlan {
        QualityPlan {
            estimators: policies.iter().map(|p| resolver.estimator(p.estimator).ok()).collect(),
            options: policies.iter().map(QualityOptions::for_policy).collect(),
            recorded_llm: policies
                .iter()
                .find(|p| p.compact.summarizer == SummarizerKind::Llm)
                .and_then(|p| resolver.summarizer_for(p).ok()),
        }
    }

    /// What [`evaluate_trace`] returns for a trace with no compaction and no
    /// pruning, without extracting any atom.
    fn empty(&self, _session: &Session, trace: &SessionTrace) -> SessionQuality {
        SessionQuality {
            session_id: trace.session_id.clone(),
            policy: trace.policy.clone(),
            summarizer: String::new(),
            compactions: 0,
            events: Vec::new(),
            candidates: Vec::new(),
            pruning: PruningLoss::default(),
            lost: Vec::new(),
        }
    }

    /// Score every trace of one session (atoms are extracted once for all
    /// policies). One entry per trace, `None` where the replay failed.
    pub fn evaluate(
        &self,
        session: &Session,
        traces: &[Result<SessionTrace, ReplayError>],
    ) -> Vec<Option<SessionQuality>> {
        self.evaluate_counted(session, traces, &[])
    }

    /// [`QualityPlan::evaluate`] with the per-message token counts each
    /// replay used (`counts[i]` for trace `i`, when known): scoring sums
    /// them instead of estimating every message again.
    pub fn evaluate_counted(
        &self,
        session: &Session,
        traces: &[Result<SessionTrace, ReplayError>],
        counts: &[Option<&[u64]>],
    ) -> Vec<Option<SessionQuality>> {
        self.evaluate_with(session, SessionLens::of(session), traces, counts, None, None).0
    }

    /// The summaries the written rows of the recorded compactions
    /// (`extractive@budget`, and `llm@budget` with an LLM summarizer) hold,
    /// by row name, one per scorable compaction; `None` when the log records
    /// none or no `meter` sizes them. `extractive` is the extractive
    /// summarizer the replays bound to this session, when one did: its reads
    /// of the messages serve again. Called before the index takes the lens's
    /// atoms.
    pub fn recorded_written<'l>(
        &self,
        session: &Session,
        lens: &'l SessionLens<'l>,
        extractive: Option<&dyn Summarizer>,
        meter: Option<&dyn Estimator>,
    ) -> Option<Written> {
        let m = meter.filter(|_| session.has_own_compactions())?;
        let fresh = Extractive;
        let own;
        let extractive = match extractive {
            Some(e) => e,
            None => {
                own = fresh.for_session(lens);
                own.as_deref().unwrap_or(&Extractive)
            }
        };
        let extractive = recorded_summaries(session, extractive, m);
        let llm = self.recorded_llm.as_ref().map(|llm| (REF_LLM_BUDGET, recorded_summaries(session, llm.as_ref(), m)));
        Some(std::iter::once((REF_EXTRACTIVE_BUDGET, extractive)).chain(llm).collect())
    }

    /// [`QualityPlan::evaluate_counted`] reading the messages' atoms from the
    /// session's `lens` (shared with the summarizers of the replays, done by
    /// now): the index takes each message's atoms out of it as it goes. With
    /// `meter`, the compactions the log records are scored too, once, sized
    /// with it ([`evaluate_recorded`](crate::quality::evaluate_recorded)),
    /// their written rows' summaries being `written`
    /// ([`QualityPlan::recorded_written`]; made here when not given).
    pub fn evaluate_with<'s>(
        &self,
        session: &'s Session,
        lens: SessionLens<'s>,
        traces: &[Result<SessionTrace, ReplayError>],
        counts: &[Option<&[u64]>],
        meter: Option<&dyn Estimator>,
        written: Option<Written>,
    ) -> (Vec<Option<SessionQuality>>, Option<crate::quality::RecordedQuality>) {
        let recorded_asked = meter.is_some() && session.has_own_compactions();
        if !recorded_asked
            && traces.iter().all(|t| t.as_ref().map_or(true, |t| t.compactions.is_empty() && t.prunes.is_empty()))
        {
            // Nothing to score: skip the atom extraction.
            return (traces.iter().map(|t| t.as_ref().ok().map(|t| self.empty(session, t))).collect(), None);
        }
        let written = written.or_else(|| self.recorded_written(session, &lens, None, meter));
        let mut atoms = SessionAtoms::from_lens_draining(session, lens);
        let recorded = meter.and_then(|m| evaluate_recorded_with(session, &atoms, m, &written.unwrap_or_default()));
        let compacting = traces.iter().filter(|t| t.as_ref().is_ok_and(|t| !t.compactions.is_empty())).count();
        atoms.share_block_tokens(compacting >= 3);
        for (est, c) in self.estimators.iter().zip(counts) {
            if let (Some(est), Some(c)) = (est, c) {
                atoms.seed_token_counts(est.kind(), c);
            }
        }
        let scored = traces
            .iter()
            .enumerate()
            .map(|(pi, t)| {
                let trace = t.as_ref().ok()?;
                let est = self.estimators.get(pi)?.as_deref()?;
                Some(evaluate_trace(session, trace, &atoms, est, self.options.get(pi)?))
            })
            .collect();
        (scored, recorded)
    }
}
