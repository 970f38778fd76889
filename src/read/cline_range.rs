//! Cline's own context management, read back: the history it stopped sending
//! (`conversationHistoryDeletedRange` on its UI messages) and the summary a
//! `summarize_task` call left in its place.
//!
//! Cline never deletes from `api_conversation_history.json`. When a request
//! would not fit, it sends the first exchange (element 0 only in older Cline)
//! and the history after a deleted range `[start, end]` (inclusive), and keeps
//! that range in its state. Every UI message is written with the range in
//! effect at that moment and `conversationHistoryIndex`, the index of the last
//! history element then. A request's user element is appended, then the range
//! is updated for it, then the request streams: the UI messages written while
//! it streams point at that user element and carry the range it was sent with.
//! `api_req_started` (written before the user element is appended, so it
//! points one element back), error and retry notices (written before a
//! retry may truncate again) and the conditional-rules notice (written
//! before the range is updated) do not tell. Auto-condense asks the model for a
//! `summarize_task` call; its result, the continuation prompt holding the
//! summary, is the first element the next request keeps after the range.

use crate::model::{Block, CompactionKind, Origin, RecordedCompaction, Session};
use crate::read::generic::str_of;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The tool whose result is the summary Cline continues from.
const SUMMARIZE: &str = "summarize_task";

/// UI messages written before a request is (re)sent: the request's own and
/// retry notices, and the notice of the conditional rules its system prompt
/// applies (written after its user element is appended, before its range is
/// updated).
const NOT_STREAMED: &[&str] =
    &["api_req_started", "api_req_failed", "api_req_retried", "error_retry", "error", "conditional_rules_applied"];

/// The deleted range of the first UI message written while the request whose
/// user element is `conversationHistoryIndex` streamed, by that index, with
/// the message's 1-based position in `ui_messages.json`.
pub(super) struct Marks(BTreeMap<u64, (Option<[u64; 2]>, usize)>);

impl Marks {
    pub(super) fn of(ui: &[Value]) -> Marks {
        let mut first = BTreeMap::new();
        for (pos, m) in ui.iter().enumerate() {
            let kind = str_of(m, "say").or_else(|| str_of(m, "ask"));
            if kind.is_some_and(|k| NOT_STREAMED.contains(&k)) {
                continue;
            }
            let Some(at) = m.get("conversationHistoryIndex").and_then(Value::as_u64) else { continue };
            let range = match m.get("conversationHistoryDeletedRange") {
                None | Some(Value::Null) => None,
                Some(Value::Array(r)) if r.len() == 2 => match (r[0].as_u64(), r[1].as_u64()) {
                    (Some(s), Some(e)) => Some([s, e]),
                    _ => continue,
                },
                Some(_) => continue,
            };
            first.entry(at).or_insert((range, pos + 1));
        }
        Marks(first)
    }
}

/// Where each history element's messages start (`len + 1` entries, the last
/// one the session's message count), the history index of each call's
/// assistant element, and the summary message each element holds.
#[derive(Default)]
pub(super) struct HistoryMap {
    pub start: Vec<usize>,
    pub calls: Vec<usize>,
    pub summaries: BTreeMap<usize, usize>,
}

/// Record, for each request sent with a different deleted range than the one
/// before it, the compaction that range makes. A range that does not fit the
/// history before its request, or that gives back history an earlier one
/// dropped, is reported and not applied. A continuation prompt that no
/// compaction inserted (no UI log says which range followed it) stays in the
/// history as what it is there: text the harness wrote.
pub(super) fn apply(s: &mut Session, path: &Path, map: &HistoryMap, marks: Option<&Marks>) {
    let inserted = marks.map(|marks| apply_ranges(s, path, map, marks)).unwrap_or_default();
    for &m in map.summaries.values() {
        if !inserted.contains(&m)
            && let Some(msg) = s.messages.get_mut(m)
        {
            msg.origin = Origin::Injected;
        }
    }
}

/// The compactions the ranges make; returns the summary messages they inserted.
fn apply_ranges(s: &mut Session, path: &Path, map: &HistoryMap, marks: &Marks) -> BTreeSet<usize> {
    let mut inserted = BTreeSet::new();
    let ui_path = path.join("ui_messages.json");
    let mut applied: Option<[u64; 2]> = None;
    for &a in &map.calls {
        let Some(user) = a.checked_sub(1) else { continue };
        let Some(&(range, pos)) = marks.0.get(&(user as u64)) else { continue };
        if range == applied {
            continue;
        }
        let Some([start, end]) = range else {
            s.diagnostics.warn(
                &ui_path,
                pos as u64,
                format!("the request of history element {a} is sent without the deleted range before it: not applied"),
            );
            continue;
        };
        let fits = start >= 1 && start <= end && end.saturating_add(2) <= a as u64;
        let grows = applied.is_none_or(|[_, e]| end >= e);
        if !fits || !grows {
            let why =
                if fits { "gives back history an earlier range dropped" } else { "does not fit the history before it" };
            s.diagnostics.warn(
                &ui_path,
                pos as u64,
                format!("deleted range [{start}, {end}] of the request of history element {a} {why}: not applied"),
            );
            continue;
        }
        let (start, end) = (start as usize, end as usize);
        let at = map.start[a];
        let first_kept = map.start[end + 1];
        let (kept, inserted) = match map.summaries.get(&(end + 1)) {
            Some(&m) => {
                inserted.insert(m);
                (first_kept..m, m..m + 1)
            }
            None => (first_kept..at, at..at),
        };
        s.recorded_compactions.push(RecordedCompaction {
            kind: CompactionKind::ClineDeletedRange,
            source_line: a as u64 + 1,
            inserted,
            kept,
            head: map.start[0]..map.start[start],
            tokens_before: None,
            trigger: None,
        });
        applied = range;
    }
    inserted
}

/// A user element's blocks split around the summary a `summarize_task` call
/// returned: the blocks up to its result (left empty: it still answers the
/// call), the summary's text, and the blocks after it. `uses` are the
/// previous assistant's tool uses (id, name). Cline of the XML-tool era
/// wrote the call as text: its result is a `[summarize_task] Result:` header
/// left as text, whose first line stays. Without either, all blocks are in
/// the first part.
pub(super) fn take_summary(blocks: Vec<Block>, uses: &[(String, String)]) -> (Vec<Block>, Vec<Block>, Vec<Block>) {
    // The summarize calls among the uses (one at most, in practice): looked
    // up per block, so a turn of thousands of results stays linear.
    let summarize: Vec<&str> = uses.iter().filter(|(_, name)| name == SUMMARIZE).map(|(u, _)| u.as_str()).collect();
    let is_summarize = |id: &str| summarize.contains(&id);
    let found = blocks.iter().position(|b| match b {
        Block::ToolResult { tool_use_id, .. } => is_summarize(tool_use_id),
        Block::Text { text } => super::result_header(text).is_some_and(|(name, _)| name == SUMMARIZE),
        _ => false,
    });
    let Some(i) = found else { return (blocks, Vec::new(), Vec::new()) };
    let mut before = blocks;
    let after = before.split_off(i + 1);
    let mut summary = Vec::new();
    match before.last_mut() {
        Some(Block::ToolResult { content, .. }) => {
            // Text only: anything else (an image) stays in the result.
            let (text, rest): (Vec<Block>, Vec<Block>) =
                std::mem::take(content).into_iter().partition(|b| matches!(b, Block::Text { .. }));
            *content = rest;
            summary = text;
        }
        Some(Block::Text { text }) => {
            if let Some((header, body)) = text.split_once('\n')
                && !body.trim().is_empty()
            {
                summary.push(Block::text(body));
                *text = header.to_string();
            }
        }
        _ => {}
    }
    (before, summary, after)
}
