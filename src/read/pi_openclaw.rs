//! OpenClaw's additions to pi's session entries that change what the model
//! is sent: `reset` boundaries (a fresh conversation, or one that keeps the
//! last few turns), `leaf` control rows and side entries (which branch is
//! current), and the text a user turn was sent as (its model prompt
//! projection). From openclaw `session-manager-types.ts`, `transcript-tree.ts`,
//! `user-turn-transcript.ts` and agent-core `session.ts`.

use super::{Reader, str_of};
use crate::model::{Block, Message, Origin, Role, Session};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

impl Reader {
    /// `__openclaw.modelPromptProjection` on a user message: the text the
    /// model was sent for the turn (the prompt with what hooks put before and
    /// after it, or a replacement), recorded before the first request, while
    /// the message keeps what the person typed. Every request sends it in
    /// place of the message's text: the whole of a string content, the first
    /// text block of a list (images stay). OpenClaw refuses to send a
    /// projection of another version or shape; such a message is counted as
    /// logged, and said.
    pub(super) fn model_prompt_projection(&mut self, m: &Value, blocks: &mut [Block], line: u64) {
        let Some(p) = m.get("__openclaw").and_then(|o| o.get("modelPromptProjection")).filter(|p| !p.is_null()) else {
            return;
        };
        let text =
            p.get("text").and_then(Value::as_str).filter(|_| p.get("version").and_then(Value::as_u64) == Some(1));
        let first_text = blocks.iter_mut().find_map(|b| match b {
            Block::Text { text } => Some(text),
            _ => None,
        });
        match (text, first_text) {
            (Some(sent), Some(logged)) => {
                // The session is still named by what the person typed (the
                // scan stops at the first prompt, near the start).
                if self.s.meta.title.is_none() && !self.prompted {
                    let typed = logged.lines().map(str::trim).find(|l| !l.is_empty());
                    self.s.meta.title = typed.map(str::to_string);
                }
                *logged = sent.to_string();
                self.s.diagnostics.sent_otherwise("prompt sent as its projection");
            }
            (Some(_), None) => self.s.diagnostics.skip("user/model prompt projection (no text to replace)"),
            (None, _) => {
                let p = self.s.source_path.clone();
                let why = "a model prompt projection of a version or shape not read: the message is counted as logged";
                self.s.diagnostics.warn(&p, line, why);
            }
        }
    }

    /// A `reset` entry: the conversation goes on as another session. The
    /// model is sent nothing from before the reset but, when the entry names
    /// a `firstKeptEntryId` ("preserve-tail"), the people's and the model's
    /// messages from there on, with the tool results of the calls among them;
    /// that tail opens the next session as context it starts from, not as its
    /// calls. Returns the session the reset ends.
    pub(super) fn reset(&mut self, entries: &[(u64, Value)], i: usize) -> Session {
        // The projections end with the conversation they were made in.
        self.cache_ttl_finish();
        self.usage_finish();
        let (line, v) = (entries[i].0, &entries[i].1);
        let kept_entry = str_of(v, "firstKeptEntryId");
        let from = kept_entry
            .and_then(|id| self.entry_by_id(entries, id))
            .and_then(|e| self.entry_msg.get(e).copied().flatten())
            .filter(|&m| m <= self.s.messages.len());
        let p = self.s.source_path.clone();
        if kept_entry.is_some() && from.is_none() {
            let why = "reset's first kept entry is not an earlier entry of this conversation: nothing kept";
            self.s.diagnostics.warn(&p, line, why);
        }
        // OpenClaw keeps the last few turns; a longer tail would copy a whole
        // conversation into every session after it.
        let len = self.s.messages.len();
        let from = from.map(|f| {
            if len - f > MAX_RESET_TAIL {
                let why =
                    format!("reset keeps more than {MAX_RESET_TAIL} messages: the last {MAX_RESET_TAIL} are kept");
                self.s.diagnostics.warn(&p, line, why);
            }
            f.max(len.saturating_sub(MAX_RESET_TAIL))
        });
        let (tail, remap) = from.map_or_else(Default::default, |from| kept_tail(&self.s.messages, from));
        // Only this segment's entries can name its messages.
        for e in std::mem::take(&mut self.segment) {
            let moved = self.entry_msg[e].and_then(|old| remap.get(&old).copied());
            self.entry_msg[e] = moved;
            if moved.is_some() {
                self.segment.push(e);
            }
        }
        self.resets += 1;
        let mut next =
            Session::new(format!("{}.reset{}", self.base_id, self.resets), self.s.format, &self.s.source_path);
        next.meta.cwd.clone_from(&self.s.meta.cwd);
        next.meta.versions.clone_from(&self.s.meta.versions);
        self.prompted = tail.iter().any(|m| m.origin == Origin::Human);
        next.messages = tail;
        self.tool_merge_open = false;
        let mut done = std::mem::replace(&mut self.s, next);
        done.diagnostics.skip("reset");
        done
    }
}

/// The most messages a reset's kept tail opens the next session with
/// (OpenClaw keeps its last six at most).
const MAX_RESET_TAIL: usize = 64;

/// The messages a reset keeps from `from` on, and where each moved: what a
/// person and the model wrote, and the results of the calls made among them.
fn kept_tail(messages: &[Message], from: usize) -> (Vec<Message>, HashMap<usize, usize>) {
    let tail = &messages[from..];
    let calls: HashSet<&str> = tail
        .iter()
        .filter(|m| m.origin == Origin::Model)
        .flat_map(|m| m.blocks.iter())
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    let mut kept = Vec::new();
    let mut remap = HashMap::new();
    for (k, m) in tail.iter().enumerate() {
        let keep = match (m.role, m.origin) {
            (Role::User, Origin::Human) | (Role::Assistant, Origin::Model) => Some(m.clone()),
            (_, Origin::ToolResult) => {
                let paired = |b: &&Block| matches!(b, Block::ToolResult { tool_use_id, .. } if calls.contains(tool_use_id.as_str()));
                let blocks: Vec<Block> = m.blocks.iter().filter(paired).cloned().collect();
                (!blocks.is_empty()).then(|| Message { blocks, ..m.clone() })
            }
            _ => None,
        };
        if let Some(m) = keep {
            remap.insert(from + k, kept.len());
            kept.push(m);
        }
    }
    (kept, remap)
}

/// How an entry of the tree takes part in the active path.
pub(super) enum Step {
    /// A message or other entry of the conversation.
    Entry,
    /// A `leaf` control row: the current branch continues at its `targetId`
    /// (none: an empty context).
    Leaf,
    /// An entry appended beside the conversation (`appendMode: "side"`):
    /// never part of it.
    Side,
}

pub(super) fn step(v: &Value) -> Step {
    if str_of(v, "type") == Some("leaf") {
        return Step::Leaf;
    }
    if str_of(v, "appendMode") == Some("side") {
        return Step::Side;
    }
    Step::Entry
}
