//! What each compaction lost, shown: for a compaction (the agent's own or a
//! policy's), its summary, every atom the agent needed after it with how much
//! the summary kept and where the agent used it first, and what the summary
//! named that the log never did. What `compactor explain` prints.

use super::event::PreparedEvent;
use super::index::SessionAtoms;
use super::recorded::{RecordedStatus, points as recorded_points};
use super::replay::{summarize_at, trace_points};
use super::shown::{NeededShown, calls_by_message, shown};
use super::{Atom, CANDIDATE_RECORDED};
use crate::model::Session;
use crate::policy::Policy;
use crate::replay::SessionTrace;
use crate::summarize::Summarizer;
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
    /// T: the message ranges kept verbatim (what a model reads next to the summary).
    #[serde(skip)]
    pub kept: Vec<std::ops::Range<usize>>,
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
            e.kept.clone_from(&p.point.kept);
        }
        out.push(e);
    }
    for &(policy, trace, est, cumulative) in traces {
        for tp in trace_points(session, trace, cumulative) {
            let Some(ev) = trace.compactions.get(tp.compaction) else { continue };
            let mut e = Explained::new(policy, tp.info.event, tp.info.future_start, RecordedStatus::Scored);
            e.fill(session, &call_of, &atoms.prepare(&tp.point, est), &ev.summary);
            e.kept.clone_from(&tp.point.kept);
            out.push(e);
        }
    }
    out
}

/// The compactions of `policy`'s `trace` with observation masking at the
/// policy summary's size in place of the summary (quality.md §c.4's
/// equal-budget point), explained under `name`: masking's FRR, and the masked
/// messages as its text. `needed` lists the point's needed atoms with what
/// the policy's summary held of them (masking keeps no audit).
pub fn explain_masking(
    session: &Session,
    policy: &Policy,
    trace: &SessionTrace,
    est: &dyn Estimator,
    name: &str,
) -> Vec<Explained> {
    let keep = super::ReferenceOptions::default().masking_keep.unwrap_or(10);
    let atoms = SessionAtoms::from_session(session);
    let call_of = calls_by_message(session);
    let mut out = Vec::new();
    for tp in trace_points(session, trace, policy.compact.file_ops) {
        let Some(ev) = trace.compactions.get(tp.compaction) else { continue };
        let prepared = atoms.prepare(&tp.point, est);
        let budget = Some(ev.summary_tokens.max(1));
        let row = prepared.masking_within(name, keep, budget);
        let mut e = Explained::new(name, tp.info.event, tp.info.future_start, RecordedStatus::Scored);
        let (_, audit) = prepared.score_with_audit(name, &ev.summary);
        e.needed = shown(session, &call_of, &audit.needed, usize::MAX);
        e.frr = row.frr;
        e.summary_tokens = row.summary_tokens;
        e.summary = prepared.masking_text(keep, budget, &tp.point.replaced_text);
        e.kept.clone_from(&tp.point.kept);
        out.push(e);
    }
    out
}

/// The compactions of `policy`'s `trace` with the summaries `summarizer`
/// writes at the same points, each within the policy summary's own size (a
/// reference candidate: quality.md §c.4), explained under `name`.
pub fn explain_reference(
    session: &Session,
    policy: &Policy,
    trace: &SessionTrace,
    est: &dyn Estimator,
    summarizer: &dyn Summarizer,
    name: &str,
) -> Vec<Explained> {
    let atoms = SessionAtoms::from_session(session);
    let call_of = calls_by_message(session);
    let mut out = Vec::new();
    for tp in trace_points(session, trace, policy.compact.file_ops) {
        let Some(ev) = trace.compactions.get(tp.compaction) else { continue };
        let text = summarize_at(session, &tp, policy, summarizer, est, ev.summary_tokens.max(1));
        let mut e = Explained::new(name, tp.info.event, tp.info.future_start, RecordedStatus::Scored);
        e.fill(session, &call_of, &atoms.prepare(&tp.point, est), &text);
        e.kept.clone_from(&tp.point.kept);
        out.push(e);
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
            kept: Vec::new(),
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
