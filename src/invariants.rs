//! Invariants of a replay (DESIGN.md §3), checked in tests and by
//! `replay --check-invariants`:
//! - every `ToolResult` in a view has its `ToolUse` earlier in the same view, and
//!   every `ToolUse` its result later (a tool use still pending at the end of the
//!   view is allowed);
//! - where the preset's API needs it, roles alternate at the seams a compaction
//!   creates (summary, acknowledgement); the source log's own shape is not judged;
//! - pruning changes only the content of tool results: user text, assistant
//!   text/thinking/tool_use blocks and image blocks are untouched;
//! - a compaction never increases the estimated size of history.

use crate::model::{Block, Message, Origin, Role, Session};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// One broken invariant. `message` is an index into the checked view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Violation {
    /// A tool result whose tool use is not earlier in the view.
    OrphanToolResult { message: usize, tool_use_id: String },
    /// A tool use whose result is not later in the view.
    OrphanToolUse { message: usize, tool_use_id: String },
    /// Two adjacent messages of the same role at a compaction seam.
    Alternation { message: usize, role: Role },
    /// Pruning changed something it must not.
    PruneChangedContent { message: usize, block: usize, what: String },
    /// The view and history do not have the same messages.
    PruneChangedShape { history_len: usize, view_len: usize },
    /// An applied compaction made history bigger.
    CompactionGrew { before: u64, after: u64 },
    /// Incremental token totals differ from a recomputation (engine bug).
    TotalsMismatch { history_incremental: u64, history_recomputed: u64, view_incremental: u64, view_recomputed: u64 },
    /// The incremental cache prefix differs from comparing the two requests (engine bug).
    PrefixMismatch { incremental: u64, recomputed: u64 },
    /// The incremental calibration of the history differs from a recomputation
    /// (engine bug).
    CalibrationMismatch { incremental: i64, recomputed: i64 },
}

impl Violation {
    /// What broke, in words, without the log's content (no id, no text).
    pub fn describe(&self) -> String {
        match self {
            Violation::OrphanToolResult { message, .. } => {
                format!("the tool result in message {message} of the request has no tool use before it")
            }
            Violation::OrphanToolUse { message, .. } => {
                format!("the tool use in message {message} of the request has no result after it")
            }
            Violation::Alternation { message, role } => {
                let role = match role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                format!("two {role} messages in a row at a compaction seam (message {message})")
            }
            Violation::PruneChangedContent { message, block, .. } => {
                format!("pruning changed block {block} of message {message}, which is not a tool output")
            }
            Violation::PruneChangedShape { history_len, view_len } => {
                format!("pruning changed the number of messages ({history_len} to {view_len})")
            }
            Violation::CompactionGrew { before, after } => {
                format!("a compaction made the history bigger ({before} to {after} tokens)")
            }
            Violation::TotalsMismatch { .. } => "the running token totals differ from a recount".to_string(),
            Violation::PrefixMismatch { .. } => "the cached prefix differs from a recount".to_string(),
            Violation::CalibrationMismatch { .. } => "the calibration differs from a recount".to_string(),
        }
    }
}

/// What to check.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckOptions<'a> {
    /// Check role alternation at compaction seams.
    pub alternation: bool,
    /// Tool uses of the last assistant message may still be waiting for results.
    pub allow_pending_tool_uses: bool,
    /// Tool ids already unpaired in the source log (not the policy's doing).
    pub ignore_ids: Option<&'a HashSet<String>>,
    /// Tool results holding images must be left as they are.
    pub images_untouchable: bool,
    /// Per view message, whether the replay made it (a summary, an
    /// acknowledgement): only seams it made are judged, not the log's own
    /// (the agent's recorded summary beside the next request). `None`: every
    /// summary and acknowledgement counts as made.
    pub made: Option<&'a [bool]>,
}

/// A message compaction made (summary, acknowledgement).
fn synthetic(m: &Message) -> bool {
    m.origin == Origin::CompactSummary || (m.role == Role::Assistant && m.origin == Origin::Injected)
}

/// Check one view (or transcript).
pub fn check(view: &[Message], opts: &CheckOptions<'_>) -> Result<(), Vec<Violation>> {
    let mut out = Vec::new();
    let ignored = |id: &str| opts.ignore_ids.is_some_and(|s| s.contains(id));
    pairing(
        view,
        &mut |v| {
            let id = match &v {
                Violation::OrphanToolResult { tool_use_id, .. } | Violation::OrphanToolUse { tool_use_id, .. } => {
                    tool_use_id.as_str()
                }
                _ => "",
            };
            if !ignored(id) {
                out.push(v);
            }
        },
        opts.allow_pending_tool_uses,
    );
    if opts.alternation {
        let made = |i: usize, m: &Message| synthetic(m) && opts.made.is_none_or(|f| f.get(i).copied().unwrap_or(true));
        let mut prev: Option<(usize, &Message)> = None;
        for (i, m) in view.iter().enumerate() {
            if m.role == Role::System {
                continue;
            }
            if let Some((pi, p)) = prev
                && p.role == m.role
                && (made(pi, p) || made(i, m))
            {
                out.push(Violation::Alternation { message: i, role: m.role });
            }
            prev = Some((i, m));
        }
    }
    if out.is_empty() { Ok(()) } else { Err(out) }
}

fn pairing(view: &[Message], emit: &mut dyn FnMut(Violation), allow_pending: bool) {
    let mut uses: HashSet<&str> = HashSet::new();
    let mut results: HashSet<&str> = HashSet::new();
    for (i, m) in view.iter().enumerate() {
        for b in &m.blocks {
            match b {
                Block::ToolUse { id, .. } => {
                    uses.insert(id);
                }
                Block::ToolResult { tool_use_id, .. } => {
                    if !uses.contains(tool_use_id.as_str()) {
                        emit(Violation::OrphanToolResult { message: i, tool_use_id: tool_use_id.clone() });
                    }
                    results.insert(tool_use_id);
                }
                _ => {}
            }
        }
    }
    let last_assistant = view.iter().rposition(|m| m.role == Role::Assistant);
    for (i, m) in view.iter().enumerate() {
        for (id, _, _) in m.tool_uses() {
            if results.contains(id) {
                continue;
            }
            let pending =
                allow_pending && Some(i) == last_assistant && view[i + 1..].iter().all(|n| !n.has_tool_results());
            if !pending {
                emit(Violation::OrphanToolUse { message: i, tool_use_id: id.to_string() });
            }
        }
    }
}

/// [`unpaired_ids_at`] over what a replay of `s` sees: the messages
/// [`Session::hidden_from_policy`] are skipped (their partners are left alone), and every
/// recorded call's request is a boundary.
pub fn source_unpaired_ids(s: &Session) -> HashSet<String> {
    // stream_pos[i]: where original message i lands once inserted ones are skipped.
    let mut stream = Vec::with_capacity(s.messages.len());
    let mut stream_pos = Vec::with_capacity(s.messages.len() + 1);
    let hidden = s.hidden_from_policy();
    for (i, m) in s.messages.iter().enumerate() {
        stream_pos.push(stream.len());
        if !hidden[i] {
            stream.push(m.clone());
        }
    }
    stream_pos.push(stream.len());
    // The replay appends each call's response after it; a call whose index
    // goes backwards appends nothing: its request is everything so far.
    let requests: Vec<usize> = s
        .calls
        .iter()
        .scan(0, |next, c| {
            let end = (*next).max(c.message_index);
            *next = end.max(c.message_index.saturating_add(1));
            Some(stream_pos.get(end).copied().unwrap_or(stream.len()))
        })
        .collect();
    unpaired_ids_at(&stream, &requests)
}

/// Tool ids whose pairing is already broken in the source log, so a replay is
/// not blamed for them: unpaired (interrupted tools, truncated logs), used or
/// answered more than once (ambiguous), or answered late — after the next
/// assistant message, so every request in between already had an orphan use.
pub fn unpaired_ids(messages: &[Message]) -> HashSet<String> {
    unpaired_ids_at(messages, &[])
}

/// [`unpaired_ids`], plus the ids answered after a request boundary (the end,
/// exclusive, of a request the log sent) that already shows a tool result after
/// the use: that request itself had an orphan use (a log whose calls point at
/// odd places, found by fuzzing).
pub fn unpaired_ids_at(messages: &[Message], requests: &[usize]) -> HashSet<String> {
    let mut ids = HashSet::new();
    pairing(
        messages,
        &mut |v| {
            if let Violation::OrphanToolResult { tool_use_id, .. } | Violation::OrphanToolUse { tool_use_id, .. } = v {
                ids.insert(tool_use_id);
            }
        },
        true,
    );
    let mut uses: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut results: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        for b in &m.blocks {
            let (map, id) = match b {
                Block::ToolUse { id, .. } => (&mut uses, id.as_str()),
                Block::ToolResult { tool_use_id, .. } => (&mut results, tool_use_id.as_str()),
                _ => continue,
            };
            if map.insert(id, i).is_some() {
                ids.insert(id.to_string());
            }
        }
    }
    // next_assistant[i]: the first assistant message after message i.
    let mut next_assistant = vec![messages.len(); messages.len()];
    let mut next = messages.len();
    for i in (0..messages.len()).rev() {
        next_assistant[i] = next;
        if messages[i].role == Role::Assistant {
            next = i;
        }
    }
    // next_result[i]: the first message at or after i holding a tool result.
    let mut next_result = vec![messages.len(); messages.len() + 1];
    for i in (0..messages.len()).rev() {
        next_result[i] = if messages[i].has_tool_results() { i } else { next_result[i + 1] };
    }
    let mut requests = requests.to_vec();
    requests.sort_unstable();
    for (id, &u) in &uses {
        let Some(&r) = results.get(id) else { continue };
        let late = r > next_assistant[u];
        // A request ending in (u, r] that holds a tool result after the use: the
        // use was neither answered nor pending there.
        let from = (u + 2).max(next_result[u + 1].saturating_add(1));
        let cut = requests.partition_point(|&c| c < from);
        let broken_request = requests.get(cut).is_some_and(|&c| c <= r);
        if late || broken_request {
            ids.insert((*id).to_string());
        }
    }
    ids
}

/// Check that a view differs from its history only in tool-result content.
pub fn check_pruning(history: &[Message], view: &[Message], opts: &CheckOptions<'_>) -> Result<(), Vec<Violation>> {
    if history.len() != view.len() {
        return Err(vec![Violation::PruneChangedShape { history_len: history.len(), view_len: view.len() }]);
    }
    let mut out = Vec::new();
    for (i, (h, v)) in history.iter().zip(view).enumerate() {
        let bad =
            |what: &str, block: usize| Violation::PruneChangedContent { message: i, block, what: what.to_string() };
        if h.role != v.role || h.origin != v.origin || h.blocks.len() != v.blocks.len() {
            out.push(bad("message role, origin or block count", 0));
            continue;
        }
        for (j, (hb, vb)) in h.blocks.iter().zip(&v.blocks).enumerate() {
            match (hb, vb) {
                (
                    Block::ToolResult { tool_use_id: a, content: ca, is_error: ea },
                    Block::ToolResult { tool_use_id: b, content: cb, is_error: eb },
                ) => {
                    if a != b || ea != eb {
                        out.push(bad("tool result id or error flag", j));
                    } else if opts.images_untouchable && ca.iter().any(|c| matches!(c, Block::Image { .. })) && ca != cb
                    {
                        out.push(bad("tool result with an image", j));
                    }
                }
                _ if hb != vb => {
                    let what = match hb {
                        Block::Text { .. } if h.role == Role::User => "user text",
                        Block::Text { .. } => "assistant text",
                        Block::Thinking { .. } => "thinking",
                        Block::ToolUse { .. } => "tool_use",
                        Block::Image { .. } => "image",
                        _ => "block",
                    };
                    out.push(bad(what, j));
                }
                _ => {}
            }
        }
    }
    if out.is_empty() { Ok(()) } else { Err(out) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(t: &str) -> Message {
        Message::new(Role::User, Origin::Human, vec![Block::text(t)])
    }
    fn call(id: &str) -> Message {
        Message::new(
            Role::Assistant,
            Origin::Model,
            vec![Block::ToolUse { id: id.into(), name: "Read".into(), input: json!({}) }],
        )
    }
    fn result(id: &str, t: &str) -> Message {
        Message::new(
            Role::User,
            Origin::ToolResult,
            vec![Block::ToolResult { tool_use_id: id.into(), content: vec![Block::text(t)], is_error: None }],
        )
    }

    #[test]
    fn pairs_and_orphans() {
        let opts = CheckOptions { allow_pending_tool_uses: true, ..CheckOptions::default() };
        assert!(check(&[user("a"), call("1"), result("1", "x")], &opts).is_ok());
        // Pending tool use at the end is fine; in the middle it is not.
        assert!(check(&[user("a"), call("1")], &opts).is_ok());
        let err = check(&[user("a"), call("1"), user("b"), call("2"), result("2", "x")], &opts).unwrap_err();
        assert_eq!(err, vec![Violation::OrphanToolUse { message: 1, tool_use_id: "1".into() }]);
        let err = check(&[user("a"), result("9", "x")], &opts).unwrap_err();
        assert_eq!(err, vec![Violation::OrphanToolResult { message: 1, tool_use_id: "9".into() }]);
        let ignore: HashSet<String> = ["9".to_string()].into();
        let opts2 = CheckOptions { ignore_ids: Some(&ignore), ..opts };
        assert!(check(&[user("a"), result("9", "x")], &opts2).is_ok());
    }

    #[test]
    fn source_breakage_is_not_the_replays_fault() {
        // Used twice, answered late (after another assistant message), unanswered.
        let msgs = vec![user("a"), call("dup"), call("dup"), call("late"), user("b"), call("x"), result("late", "r")];
        let ids = unpaired_ids(&msgs);
        let mut got: Vec<&str> = ids.iter().map(String::as_str).collect();
        got.sort();
        assert_eq!(got, ["dup", "late", "x"]);
        // A well-formed log has none.
        assert!(unpaired_ids(&[user("a"), call("1"), result("1", "x"), call("2"), result("2", "y")]).is_empty());
    }

    #[test]
    fn a_request_that_cuts_a_tool_batch_breaks_its_pairs_in_the_source() {
        // Two uses answered one message apart; a request ends between the answers.
        let msgs = vec![user("a"), call("1"), result("1", "x"), call("2"), result("9", "z"), result("2", "y")];
        // Without boundaries nothing is broken ("9" has no use: it is).
        assert_eq!(unpaired_ids_at(&msgs, &[]), ["9".to_string()].into());
        // A request ending right after the use: "2" is pending there, fine.
        assert_eq!(unpaired_ids_at(&msgs, &[4]), ["9".to_string()].into());
        // A request ending after another tool result but before "2"'s: broken there.
        assert_eq!(unpaired_ids_at(&msgs, &[3, 5]), ["2".to_string(), "9".to_string()].into());
        // A request ending after the answer is fine.
        assert_eq!(unpaired_ids_at(&msgs, &[6]), ["9".to_string()].into());
    }

    #[test]
    fn a_violation_is_described_without_the_log_content() {
        let secret = "toolu_SECRET";
        for v in [
            Violation::OrphanToolResult { message: 4, tool_use_id: secret.into() },
            Violation::OrphanToolUse { message: 4, tool_use_id: secret.into() },
            Violation::PruneChangedContent { message: 4, block: 1, what: secret.into() },
            Violation::Alternation { message: 4, role: Role::User },
        ] {
            let d = v.describe();
            assert!(d.contains("message 4") && !d.contains(secret), "{d}");
        }
        assert!(Violation::CompactionGrew { before: 10, after: 12 }.describe().contains("10 to 12"));
    }

    #[test]
    fn alternation_only_at_compaction_seams() {
        let opts = CheckOptions { alternation: true, ..CheckOptions::default() };
        let summary = Message::new(Role::User, Origin::CompactSummary, vec![Block::text("s")]);
        // Two user messages from the log itself are not the policy's doing.
        assert!(check(&[user("a"), user("b")], &opts).is_ok());
        assert_eq!(
            check(&[summary.clone(), user("b")], &opts).unwrap_err(),
            vec![Violation::Alternation { message: 1, role: Role::User }]
        );
        let ack = Message::new(Role::Assistant, Origin::Injected, vec![Block::text("ok")]);
        assert!(check(&[summary.clone(), ack, user("b")], &opts).is_ok());
        // The agent's own summary, read from the log, beside the next request:
        // the log's shape. The same seam made by the replay is judged.
        let from_log = CheckOptions { made: Some(&[false, false]), ..opts };
        assert!(check(&[summary.clone(), user("b")], &from_log).is_ok());
        let made = CheckOptions { made: Some(&[true, false]), ..opts };
        assert!(check(&[summary, user("b")], &made).is_err());
    }

    #[test]
    fn pruning_may_only_touch_tool_result_content() {
        let opts = CheckOptions::default();
        let h = vec![user("a"), call("1"), result("1", "long output")];
        let mut v = h.clone();
        v[2] = result("1", "[cleared]");
        assert!(check_pruning(&h, &v, &opts).is_ok());
        v[0] = user("changed");
        assert_eq!(
            check_pruning(&h, &v, &opts).unwrap_err(),
            vec![Violation::PruneChangedContent { message: 0, block: 0, what: "user text".into() }]
        );
    }
}
