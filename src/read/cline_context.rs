//! Cline's context history (`context_history.json`), read back as the
//! agent's clearings: once a request comes near the window, Cline sends a
//! notice in place of older reads of a file (and of the first messages when it
//! truncates), while `api_conversation_history.json` keeps them whole.
//!
//! The file is a serialized map: history element → (edit kind →) block →
//! updates `[ts, "text", [text], metadata]`, the newest applied. An update's
//! `ts` is the start of the request before the first one sent with it (or the
//! moment a condense or a retry wrote it): a request whose `api_req_started`
//! is later was sent with it. Each element an update touches is converted
//! again with the updates in force at each such request; the blocks that
//! differ are what the agent sent from then on.

use crate::model::{Block, ClearedBlock, Origin, RecordedClearing, Session};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The most requests at which one history element's updates take effect
/// (Cline replaces a block once or twice; more is a log made to be slow).
const MAX_STAGES: usize = 32;

/// One update: the text Cline sends for block `block` of history element
/// `element` from the first request started after `ts`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Update {
    pub element: usize,
    pub block: usize,
    pub ts: i64,
    pub text: String,
}

/// The updates `context_history.json` holds, in either layout (since
/// April 2025 each element's blocks are under an edit kind:
/// `[element, [kind, [[block, updates]]]]`; before, `[element, [[block,
/// updates]]]`). Only `"text"` updates exist; anything else is skipped.
pub(super) fn parse(data: &[u8]) -> Result<Vec<Update>, String> {
    let v: Value = crate::read::parse_json(crate::read::strip_bom(data)).map_err(|e| e.to_string())?;
    let Value::Array(elements) = v else { return Err("not a JSON array".into()) };
    let mut out = Vec::new();
    for e in &elements {
        let (Some(element), Some(inner)) = (e.get(0).and_then(Value::as_u64), e.get(1).and_then(Value::as_array))
        else {
            continue;
        };
        let blocks = match inner.as_slice() {
            [Value::Number(_), Value::Array(blocks)] => blocks,
            _ => inner,
        };
        for b in blocks {
            let (Some(block), Some(updates)) = (b.get(0).and_then(Value::as_u64), b.get(1).and_then(Value::as_array))
            else {
                continue;
            };
            for u in updates {
                let ts = u.get(0).and_then(crate::read::time::parse_value);
                let kind = u.get(1).and_then(Value::as_str);
                let text = u.get(2).and_then(|t| t.get(0)).and_then(Value::as_str);
                if let (Some(ts), Some("text"), Some(text)) = (ts, kind, text) {
                    let (element, block) = (element as usize, block as usize);
                    out.push(Update { element, block, ts, text: text.to_string() });
                }
            }
        }
    }
    Ok(out)
}

/// `content` with block `block`'s text set to `text`: a text block's text, a
/// tool result's first text (newer Cline answers native tool calls so), a
/// string content when it is the only block. False when there is no such text.
fn set_text(content: &mut Value, block: usize, text: &str) -> bool {
    if let Value::String(s) = content {
        if block == 0 {
            *s = text.to_string();
            return true;
        }
        return false;
    }
    let Some(b) = content.get_mut(block) else { return false };
    match b.get("type").and_then(Value::as_str) {
        Some("text") => {
            b["text"] = Value::String(text.to_string());
            true
        }
        Some("tool_result") => match b.get_mut("content") {
            Some(Value::String(s)) => {
                *s = text.to_string();
                true
            }
            Some(Value::Array(items)) if items.first().is_some_and(|i| i.get("text").is_some()) => {
                items[0]["text"] = Value::String(text.to_string());
                true
            }
            _ => false,
        },
        _ => false,
    }
}

/// History element `e` (its content given) as messages: (origin, blocks) per message.
pub(super) type Convert<'a> = dyn Fn(usize, &Value) -> Vec<(Origin, Vec<Block>)> + 'a;

/// The history and what the reader made of it, for [`apply`].
pub(super) struct Read<'a> {
    pub history: &'a [Value],
    /// Where each element's messages start (`len + 1` entries).
    pub start: &'a [usize],
    /// The start of each call's request (`api_req_started`), when known.
    pub request_ts: &'a [Option<i64>],
    /// An element as messages again.
    pub convert: &'a Convert<'a>,
}

/// Record the updates as the agent's clearings, one per request that first
/// sent some. Updates the log cannot time (no `ui_messages.json`), that change
/// an element's shape, or that name no text are reported and not applied.
pub(super) fn apply(s: &mut Session, path: &Path, read: &Read<'_>, mut updates: Vec<Update>) {
    if updates.is_empty() {
        return;
    }
    // `path` is the task folder, or its history file when given alone.
    let file = match path.extension() {
        Some(e) if e == "json" => path.with_file_name("context_history.json"),
        _ => path.join("context_history.json"),
    };
    if read.request_ts.len() != s.calls.len() || read.request_ts.iter().all(Option::is_none) {
        let n = updates.len();
        let message =
            format!("{n} update(s) not applied: without ui_messages.json the requests they reached are not known");
        s.diagnostics.warn(&file, 0, message);
        return;
    }
    updates.sort_by_key(|u| (u.element, u.ts));
    // The first call whose request started after `ts`, as the message it
    // starts at: requests by start, each with the first call among it and
    // the ones that started later (O(log n) per update).
    let mut starts: Vec<(i64, usize)> =
        read.request_ts.iter().enumerate().filter_map(|(k, t)| t.map(|t| (t, k))).collect();
    starts.sort_unstable();
    let mut earliest = vec![usize::MAX; starts.len() + 1];
    for p in (0..starts.len()).rev() {
        earliest[p] = earliest[p + 1].min(starts[p].1);
    }
    let first_after = |ts: i64| {
        let k = earliest[starts.partition_point(|&(t, _)| t <= ts)];
        s.calls.get(k).map(|c| c.message_index)
    };
    let mut by_at: BTreeMap<usize, (u64, Vec<ClearedBlock>)> = BTreeMap::new();
    let (mut misplaced, mut reshaped, mut crowded) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < updates.len() {
        let e = updates[i].element;
        let j = i + updates[i..].iter().take_while(|u| u.element == e).count();
        let end = e.checked_add(1).and_then(|x| read.start.get(x));
        let (Some(raw), Some(&lo), Some(&hi)) = (read.history.get(e), read.start.get(e), end) else {
            misplaced += j - i;
            i = j;
            continue;
        };
        let mut raw = raw.clone();
        let mut before: Vec<Vec<Block>> = s.messages[lo..hi].iter().map(|m| m.blocks.clone()).collect();
        let mut k = i;
        let mut stages = 0;
        while k < j {
            // An element is converted again per request point: bounded, as a
            // log may hold any number of updates for one element.
            stages += 1;
            if stages > MAX_STAGES {
                crowded += j - k;
                break;
            }
            // The updates in force from the same request on go together.
            let Some(at) = first_after(updates[k].ts) else { break };
            let mut l = k;
            while l < j && first_after(updates[l].ts) == Some(at) {
                let u = &updates[l];
                let content = raw.get_mut("content");
                if !content.is_some_and(|c| set_text(c, u.block, &u.text)) {
                    misplaced += 1;
                }
                l += 1;
            }
            let after: Vec<Vec<Block>> = (read.convert)(e, &raw).into_iter().map(|(_, b)| b).collect();
            let same_shape = after.len() == before.len() && after.iter().zip(&before).all(|(a, b)| a.len() == b.len());
            if !same_shape {
                reshaped += j - k;
                break;
            }
            let entry = by_at.entry(at).or_insert_with(|| (e as u64 + 1, Vec::new()));
            for (mi, (a, b)) in after.iter().zip(&before).enumerate() {
                for (bi, (x, y)) in a.iter().zip(b).enumerate() {
                    if x == y {
                        continue;
                    }
                    let sent = match (x, &s.messages[lo + mi].blocks[bi]) {
                        (Block::ToolResult { content, .. }, Block::ToolResult { .. }) => content.clone(),
                        _ => vec![x.clone()],
                    };
                    entry.1.push(ClearedBlock::new(lo + mi, bi, sent));
                }
            }
            before = after;
            k = l;
        }
        i = j;
    }
    if misplaced > 0 {
        let message = format!("{misplaced} update(s) name no text block of the history: not applied");
        s.diagnostics.warn(&file, 0, message);
    }
    if crowded > 0 {
        let message =
            format!("{crowded} update(s) not applied: an element takes effect at more than {MAX_STAGES} requests");
        s.diagnostics.warn(&file, 0, message);
    }
    if reshaped > 0 {
        let message = format!(
            "{reshaped} update(s) would change how a history element reads (its messages or blocks): \
             not applied, the element is counted as the history holds it"
        );
        s.diagnostics.warn(&file, 0, message);
    }
    for (at, (line, blocks)) in by_at {
        if !blocks.is_empty() {
            s.recorded_clearings.push(RecordedClearing {
                source_line: line,
                at,
                blocks,
                tokens_saved: None,
                trigger: None,
            });
        }
    }
}
