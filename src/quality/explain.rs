//! What each compaction lost, shown: for a compaction (the agent's own or a
//! policy's), its summary, every atom the agent needed after it with how much
//! the summary kept and where the agent used it first, and what the summary
//! named that the log never did. What `compactor explain` prints.

use super::event::PreparedEvent;
use super::index::SessionAtoms;
use super::recorded::{RecordedStatus, points as recorded_points};
use super::replay::trace_points;
use super::shown::{NeededShown, calls_by_message, shown};
use super::{Atom, CANDIDATE_RECORDED};
use crate::model::Session;
use crate::replay::SessionTrace;
use crate::tokens::Estimator;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One compaction, explained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explained {
    /// `recorded` for the agent's own, else the policy's name.
    pub policy: String,
    /// Index among that policy's (or the log's) compactions.
    pub index: u32,
    /// Message index the summary starts the agent's new context at (F's start).
    pub future_start: usize,
    pub status: RecordedStatus,
    pub frr: Option<f64>,
    pub hallucination_rate: Option<f64>,
    pub summary_tokens: u64,
    pub summary: String,
    /// Lost modified paths and errors first, then by weight, then by value.
    pub needed: Vec<NeededShown>,
    pub hallucinated: Vec<Atom>,
}

/// The compactions `session` records and those of each `(policy, trace,
/// estimator)`, explained, in that order.
pub fn explain_session(
    session: &Session,
    traces: &[(&str, &SessionTrace, &dyn Estimator, bool)],
    meter: &dyn Estimator,
) -> Vec<Explained> {
    let atoms = SessionAtoms::from_session(session);
    // The 1-based call that wrote each message, looked up per needed atom.
    let call_of = calls_by_message(session);
    let mut out = Vec::new();
    for (event, p) in recorded_points(session) {
        let mut e = Explained::new(CANDIDATE_RECORDED, event.index, event.future_start, event.status);
        if let Some(p) = p {
            e.fill(session, &call_of, &atoms.prepare(&p.point, meter), &p.summary);
        }
        out.push(e);
    }
    for &(policy, trace, est, cumulative) in traces {
        for tp in trace_points(session, trace, cumulative) {
            let Some(ev) = trace.compactions.get(tp.compaction) else { continue };
            let mut e = Explained::new(policy, tp.info.event, tp.info.future_start, RecordedStatus::Scored);
            e.fill(session, &call_of, &atoms.prepare(&tp.point, est), &ev.summary);
            out.push(e);
        }
    }
    out
}

impl Explained {
    /// A compaction not scored yet.
    fn new(policy: &str, index: u32, future_start: usize, status: RecordedStatus) -> Explained {
        Explained {
            policy: policy.to_string(),
            index,
            future_start,
            status,
            frr: None,
            hallucination_rate: None,
            summary_tokens: 0,
            summary: String::new(),
            needed: Vec::new(),
            hallucinated: Vec::new(),
        }
    }

    /// Score `summary` at `prepared` and list what it kept and lost.
    fn fill(
        &mut self,
        session: &Session,
        call_of: &HashMap<usize, usize>,
        prepared: &PreparedEvent<'_, '_>,
        summary: &str,
    ) {
        let (row, audit) = prepared.score_with_audit(&self.policy, summary);
        self.frr = row.frr;
        self.hallucination_rate = row.hallucination_rate;
        self.summary_tokens = row.summary_tokens;
        self.summary = summary.to_string();
        self.needed = shown(session, call_of, &audit.needed, usize::MAX);
        self.hallucinated = audit.hallucinated;
    }
}
