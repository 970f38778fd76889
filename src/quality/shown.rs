//! A compaction's needed atoms as people read them: what the summary held of
//! each, and where the agent used it first (call, tool, a short excerpt).
//! Shared by `compactor explain` and the reports.

use super::AtomKind;
use super::event::AuditAtom;
use crate::model::{Block, Session};
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

/// Summary characters the reports keep per compaction.
const SUMMARY_HEAD_CHARS: usize = 1_500;
/// Lost atoms the reports keep per compaction.
const LOST_SHOWN: usize = 10;

/// What one compaction lost, as the reports show it: the head of its
/// summary and the needed atoms it did not hold in full (lost modified paths
/// and errors first), each with where the agent used it first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LostDetail {
    /// The summary's first characters (all of it when short).
    pub summary_head: String,
    /// The summary was longer than `summary_head`.
    pub summary_cut: bool,
    /// Atoms the agent needed after the compaction.
    pub needed: u32,
    /// Of those, the ones the summary and the kept part did not hold in full.
    pub lost: u32,
    /// The first of the lost ones, at most ten.
    pub shown: Vec<NeededShown>,
}

impl LostDetail {
    /// The detail of a compaction whose summary is `summary` and whose
    /// needed atoms scored `needed` in it.
    pub fn new(session: &Session, call_of: &HashMap<usize, usize>, summary: &str, needed: &[AuditAtom]) -> LostDetail {
        let head: String = summary.chars().take(SUMMARY_HEAD_CHARS).collect();
        let lost = needed.iter().filter(|a| a.score < 1.0);
        LostDetail {
            summary_cut: head.len() < summary.len(),
            summary_head: head,
            needed: needed.len() as u32,
            lost: lost.clone().count() as u32,
            shown: shown(session, call_of, lost, LOST_SHOWN),
        }
    }
}

/// The 1-based number of the call that wrote each message of `session`.
pub fn calls_by_message(session: &Session) -> HashMap<usize, usize> {
    session.calls.iter().enumerate().rev().map(|(i, c)| (c.message_index, i + 1)).collect()
}

/// Whether `a` is shown before `b`: lost modified paths and errors first,
/// then the other lost atoms, then the kept ones; by weight, then by value.
fn order(a: &AuditAtom, b: &AuditAtom) -> std::cmp::Ordering {
    let first = |s: &AuditAtom| {
        let lost = s.score < 1.0;
        let kind = matches!(s.kind, AtomKind::ModifiedPath | AtomKind::Error);
        (!(lost && kind), !lost)
    };
    first(a).cmp(&first(b)).then(b.weight.total_cmp(&a.weight)).then_with(|| a.value.cmp(&b.value))
}

/// The first `limit` of `needed` in [`order`], each with what the summary
/// held of it and its first use (`call_of` from [`calls_by_message`]).
pub fn shown<'a>(
    session: &Session,
    call_of: &HashMap<usize, usize>,
    needed: impl IntoIterator<Item = &'a AuditAtom>,
    limit: usize,
) -> Vec<NeededShown> {
    let mut sorted: Vec<&AuditAtom> = needed.into_iter().collect();
    sorted.sort_by(|a, b| order(a, b));
    sorted
        .into_iter()
        .take(limit)
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
        .collect()
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

    fn atom(kind: AtomKind, value: &str, weight: f64, score: f64) -> AuditAtom {
        AuditAtom { kind, value: value.into(), weight, score, first_use: 0 }
    }

    #[test]
    fn lost_modified_paths_and_errors_come_first_then_lost_then_kept() {
        let needed = [
            atom(AtomKind::Symbol, "kept_heavy", 9.0, 1.0),
            atom(AtomKind::Symbol, "lost_symbol", 5.0, 0.0),
            atom(AtomKind::Error, "TypeError", 1.0, 0.5),
            atom(AtomKind::ModifiedPath, "src/a.rs", 2.0, 0.0),
        ];
        let s = Session::new("s", crate::model::Format::ClaudeCode, "s.jsonl");
        let got: Vec<String> = shown(&s, &HashMap::new(), &needed, 3).into_iter().map(|n| n.value).collect();
        assert_eq!(got, ["src/a.rs", "TypeError", "lost_symbol"]);
    }
}
