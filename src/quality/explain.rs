//! What each compaction lost, shown: for a compaction (the agent's own or a
//! policy's), its summary, every atom the agent needed after it with how much
//! the summary kept and where the agent used it first, and what the summary
//! named that the log never did. What `compactor explain` prints.

use super::event::{CompactionAudit, NeededAtom, PreparedEvent};
use super::index::SessionAtoms;
use super::recorded::{RecordedStatus, points as recorded_points};
use super::replay::trace_points;
use super::{Atom, AtomKind, CANDIDATE_RECORDED};
use crate::model::{Block, Session};
use crate::replay::SessionTrace;
use crate::tokens::Estimator;
use serde::{Deserialize, Serialize};

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
    let mut out = Vec::new();
    for (event, p) in recorded_points(session) {
        let mut e = Explained {
            policy: CANDIDATE_RECORDED.to_string(),
            index: event.index,
            future_start: event.future_start,
            status: event.status,
            frr: None,
            hallucination_rate: None,
            summary_tokens: 0,
            summary: String::new(),
            needed: Vec::new(),
            hallucinated: Vec::new(),
        };
        if let Some(p) = p {
            let prepared = atoms.prepare(&p.point, meter);
            fill(&mut e, session, &prepared, CANDIDATE_RECORDED, &p.summary);
        }
        out.push(e);
    }
    for &(policy, trace, est, cumulative) in traces {
        for tp in trace_points(session, trace, cumulative) {
            let Some(ev) = trace.compactions.get(tp.compaction) else { continue };
            let prepared = atoms.prepare(&tp.point, est);
            let mut e = Explained {
                policy: policy.to_string(),
                index: tp.info.event,
                future_start: tp.info.future_start,
                status: RecordedStatus::Scored,
                frr: None,
                hallucination_rate: None,
                summary_tokens: 0,
                summary: String::new(),
                needed: Vec::new(),
                hallucinated: Vec::new(),
            };
            fill(&mut e, session, &prepared, policy, &ev.summary);
            out.push(e);
        }
    }
    out
}

fn fill(e: &mut Explained, session: &Session, prepared: &PreparedEvent<'_, '_>, name: &str, summary: &str) {
    let (row, audit) = prepared.score_with_audit(name, summary);
    e.frr = row.frr;
    e.hallucination_rate = row.hallucination_rate;
    e.summary_tokens = row.summary_tokens;
    e.summary = summary.to_string();
    e.needed = shown(session, prepared.needed(), &audit);
    e.hallucinated = audit.hallucinated;
}

/// The needed atoms with what the audit says the summary held, lost
/// modified paths and errors first.
fn shown(session: &Session, needed: &[NeededAtom], audit: &CompactionAudit) -> Vec<NeededShown> {
    let mut v: Vec<NeededShown> = needed
        .iter()
        .map(|n| {
            let held = audit.needed.iter().find(|a| a.kind == n.kind && a.value == n.value).map_or(0.0, |a| a.score);
            let (tool, excerpt) = first_use(session, n);
            NeededShown {
                kind: n.kind,
                value: n.value.clone(),
                weight: n.weight,
                held,
                message: n.first_use,
                call: session.calls.iter().position(|c| c.message_index == n.first_use).map(|i| i + 1),
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

/// The tool and the text of the block that first used `n` (the first block of
/// its message that names it, as written).
fn first_use(session: &Session, n: &NeededAtom) -> (Option<String>, String) {
    let Some(m) = session.messages.get(n.first_use) else { return (None, String::new()) };
    for b in &m.blocks {
        let (tool, text) = match b {
            Block::ToolUse { name, input, .. } => (Some(name.clone()), input.to_string()),
            Block::Text { text } | Block::Thinking { text, .. } => (None, text.clone()),
            _ => continue,
        };
        if let Some(at) = text.find(n.value.as_str()) {
            return (tool, excerpt(&text, at, n.value.len()));
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
