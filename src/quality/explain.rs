//! What each compaction lost, shown: for a compaction (the agent's own or a
//! policy's), its summary, every atom the agent needed after it with how much
//! the summary kept and where the agent used it first, and what the summary
//! named that the log never did. What `compactor explain` prints.

use super::event::{AuditAtom, PreparedEvent};
use super::index::SessionAtoms;
use super::recorded::{RecordedStatus, points as recorded_points};
use super::replay::trace_points;
use super::{Atom, AtomKind, CANDIDATE_RECORDED};
use crate::model::{Block, Session};
use crate::replay::SessionTrace;
use crate::tokens::Estimator;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Characters of a first use's excerpt.
const EXCERPT_CHARS: usize = 100;

/// One needed atom of a compaction, as shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeededShown {
    pub kind: AtomKind,
    pub value: String,
    pub weight: f64,
    /// How much of it the summary holds: 1 in full, 0 lost, partial between
    /// (a basename of a path, a cut error).
    pub held: f64,
    /// Message index of the first use in F.
    pub message: usize,
    /// 1-based number of the call that first used it, when a call wrote that message.
    pub call: Option<usize>,
    /// The tool whose argument it was, when used as one.
    pub tool: Option<String>,
    /// The first use's text around it.
    pub excerpt: String,
}

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
    let call_of: HashMap<usize, usize> =
        session.calls.iter().enumerate().rev().map(|(i, c)| (c.message_index, i + 1)).collect();
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
        self.needed = shown(session, call_of, &audit.needed);
        self.hallucinated = audit.hallucinated;
    }
}

/// The needed atoms with what the summary held of each, lost modified paths
/// and errors first.
fn shown(session: &Session, call_of: &HashMap<usize, usize>, needed: &[AuditAtom]) -> Vec<NeededShown> {
    let mut v: Vec<NeededShown> = needed
        .iter()
        .map(|n| {
            let (tool, excerpt) = first_use(session, &n.value, n.first_use);
            NeededShown {
                kind: n.kind,
                value: n.value.clone(),
                weight: n.weight,
                held: n.score,
                message: n.first_use,
                call: call_of.get(&n.first_use).copied(),
                tool,
                excerpt,
            }
        })
        .collect();
    let first = |s: &NeededShown| {
        let lost = s.held < 1.0;
        let kind = matches!(s.kind, AtomKind::ModifiedPath | AtomKind::Error);
        (!(lost && kind), !lost)
    };
    v.sort_by(|a, b| first(a).cmp(&first(b)).then(b.weight.total_cmp(&a.weight)).then_with(|| a.value.cmp(&b.value)));
    v
}

/// The tool and the text of the block that first used `value` (the first
/// block of message `at` that names it, as written).
fn first_use(session: &Session, value: &str, at: usize) -> (Option<String>, String) {
    let Some(m) = session.messages.get(at) else { return (None, String::new()) };
    for b in &m.blocks {
        let (tool, text) = match b {
            Block::ToolUse { name, input, .. } => (Some(name.clone()), input.to_string()),
            Block::Text { text } | Block::Thinking { text, .. } => (None, text.clone()),
            _ => continue,
        };
        if let Some(i) = text.find(value) {
            return (tool, excerpt(&text, i, value.len()));
        }
    }
    // Normalized values (relative paths, folded commands) are not always
    // written as such: the message's first text.
    let text = m.text();
    (None, excerpt(&text, 0, 0))
}

/// About [`EXCERPT_CHARS`] of `text` around `at..at + len`, on one line.
fn excerpt(text: &str, at: usize, len: usize) -> String {
    let half = EXCERPT_CHARS.saturating_sub(len) / 2;
    let start = text[..at].char_indices().rev().nth(half).map_or(0, |(i, _)| i);
    let end_from = at + len;
    let end = text[end_from..].char_indices().nth(half).map_or(text.len(), |(i, _)| end_from + i);
    let mut s: String = text[start..end].split_whitespace().collect::<Vec<_>>().join(" ");
    if start > 0 {
        s.insert(0, '…');
    }
    if end < text.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_cut_on_character_boundaries_and_fold_whitespace() {
        let t = "é".repeat(80) + "needle\n\n  here" + &"ü".repeat(80);
        let at = t.find("needle").unwrap_or(0);
        let e = excerpt(&t, at, 6);
        assert!(e.starts_with('…') && e.ends_with('…') && e.contains("needle here"), "{e}");
        assert!(e.chars().count() <= EXCERPT_CHARS + 2);
        assert_eq!(excerpt("short", 0, 5), "short");
    }
}
