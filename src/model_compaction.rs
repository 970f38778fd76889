//! The compactions an agent made itself, as its log records them: what its
//! context held after each one.

use serde::{Deserialize, Serialize};
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionKind {
    /// Claude Code `system/compact_boundary` + `isCompactSummary` user message.
    ClaudeBoundary,
    /// Codex `compacted` record (with or without `replacement_history`).
    CodexCompacted,
    /// pi / OpenClaw `compaction` entry.
    PiCompaction,
    /// Gemini CLI compression: a recording's `$set` of messages that replaces
    /// the earlier turns with a `<state_snapshot>` summary and the turns kept.
    GeminiCompression,
    /// Cline: a new `conversationHistoryDeletedRange`, the messages it sends
    /// no more (a truncation, or the history a `summarize_task` summary replaced).
    ClineDeletedRange,
    /// Roo Code: a condense summary (`isSummary`, `condenseId`) and the history
    /// elements tagged with its id (`condenseParent`), which it sends no more.
    RooCondense,
    /// Roo Code: a sliding-window truncation (`isTruncationMarker`, its
    /// `truncationId` on the elements it hides), timed by its UI message.
    RooTruncation,
    /// Anything else a reader recognizes as the agent replacing its history.
    Other,
}

impl CompactionKind {
    /// A kind that may drop history with no summary in its place (a plain
    /// truncation): scored with an empty summary, not as unreadable.
    pub fn may_truncate(self) -> bool {
        matches!(self, CompactionKind::ClineDeletedRange | CompactionKind::RooTruncation)
    }
}

/// A compaction the agent itself performed, as recorded in the log.
///
/// After it, the agent's context was: `messages[head.clone()]` (the start of
/// the session it keeps, Cline's first exchange; usually empty), then
/// `messages[kept.clone()]` (verbatim kept messages, possibly empty), then
/// `messages[inserted.clone()]` (the summary, and for Codex the whole
/// replacement history), then everything after `inserted.end`. Messages in
/// `inserted` never existed before the compaction; a policy replay skips them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedCompaction {
    pub kind: CompactionKind,
    pub source_line: u64,
    pub inserted: Range<usize>,
    pub kept: Range<usize>,
    #[serde(default, skip_serializing_if = "Range::is_empty")]
    pub head: Range<usize>,
    /// Tokens before compaction as the agent reported them (`preTokens`, `tokensBefore`).
    pub tokens_before: Option<u64>,
    /// `auto`, `manual`, … when recorded.
    pub trigger: Option<String>,
}

impl RecordedCompaction {
    /// The messages kept verbatim, in order: `head`, then `kept`, each clamped
    /// to a session of `n` messages (a hand-built or corrupt session may
    /// point past its end).
    pub fn kept_ranges(&self, n: usize) -> [Range<usize>; 2] {
        let clamp = |r: &Range<usize>| r.start.min(n)..r.end.min(n).max(r.start.min(n));
        [clamp(&self.head), clamp(&self.kept)]
    }

    /// How many messages it kept verbatim.
    pub fn kept_len(&self) -> usize {
        self.head.len() + self.kept.len()
    }

    /// Whether message `i` is one it kept verbatim.
    pub fn keeps(&self, i: usize) -> bool {
        self.head.contains(&i) || self.kept.contains(&i)
    }
}

/// Tool outputs the agent itself stopped sending while keeping the rest of its
/// history (Claude Code's microcompact, Gemini CLI's tool output masking):
/// from message `at` until its next recorded compaction takes effect, each
/// listed tool result is sent as what it lists. The log keeps the outputs whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedClearing {
    pub source_line: u64,
    /// The first message sent after it: the calls from there on send the outputs cleared.
    pub at: usize,
    /// Each tool result it cleared, in log order.
    pub blocks: Vec<ClearedBlock>,
    /// Tokens the agent reported it saved (`tokensSaved`).
    pub tokens_saved: Option<u64>,
    /// `auto`, … when recorded.
    pub trigger: Option<String>,
}

/// A block a clearing replaced: `messages[message].blocks[block]`, a tool
/// result (usually) or a text (Cline's notices also replace file mentions and
/// the first messages).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClearedBlock {
    pub message: usize,
    pub block: usize,
    /// As the agent sent it from then on: a tool result's content (a note in
    /// place of the output, or a preview of it); any other block, the one
    /// block sent in its place.
    pub sent: Vec<super::Block>,
}

impl ClearedBlock {
    pub fn new(message: usize, block: usize, sent: Vec<super::Block>) -> ClearedBlock {
        ClearedBlock { message, block, sent }
    }
}

/// The tool results of `messages` from message `from` on: (`tool_use_id`,
/// message, block), in order. What a clearing names an output by.
pub fn tool_results(messages: &[super::Message], from: usize) -> impl Iterator<Item = (&str, usize, usize)> {
    messages.iter().enumerate().skip(from).flat_map(|(mi, m)| {
        m.blocks.iter().enumerate().filter_map(move |(bi, b)| match b {
            super::Block::ToolResult { tool_use_id, .. } => Some((tool_use_id.as_str(), mi, bi)),
            _ => None,
        })
    })
}

impl super::Session {
    /// The tokens each recorded clearing takes from the messages it clears,
    /// `count` being one message's size as sent: per clearing (in
    /// `recorded_clearings` order), (message, tokens) for each message it
    /// touches. A clearing lasts until the next recorded compaction takes
    /// effect; a message cleared again before that is charged the difference.
    pub fn clearing_deltas(&self, count: &dyn Fn(&super::Message) -> u64) -> Vec<Vec<(usize, u64)>> {
        if self.recorded_clearings.is_empty() {
            return Vec::new();
        }
        let mut order: Vec<usize> = (0..self.recorded_clearings.len()).collect();
        order.sort_by_key(|&k| self.recorded_clearings[k].at);
        let mut resets: Vec<usize> = self.recorded_compactions.iter().map(|c| c.inserted.start).collect();
        resets.sort_unstable();
        let mut out = vec![Vec::new(); self.recorded_clearings.len()];
        // Per message in the current stretch: the message as sent then, and its size.
        let mut state: std::collections::HashMap<usize, (super::Message, u64)> = Default::default();
        // Resets up to the last clearing's point are behind; one more is passed
        // when the next clearing is past it.
        let mut passed = 0usize;
        for k in order {
            let c = &self.recorded_clearings[k];
            let upto = passed + resets[passed..].partition_point(|&r| r <= c.at);
            if upto > passed {
                state.clear();
                passed = upto;
            }
            let mut by_msg: Vec<&ClearedBlock> = c.blocks.iter().collect();
            by_msg.sort_by_key(|b| (b.message, b.block));
            by_msg.dedup_by_key(|b| (b.message, b.block));
            let mut i = 0;
            while i < by_msg.len() {
                let m = by_msg[i].message;
                let j = i + by_msg[i..].iter().take_while(|b| b.message == m).count();
                if let Some(msg) = self.messages.get(m) {
                    let (copy, size) = state.entry(m).or_insert_with(|| (msg.clone(), count(msg)));
                    for b in &by_msg[i..j] {
                        match (copy.blocks.get_mut(b.block), b.sent.as_slice()) {
                            (Some(super::Block::ToolResult { content, .. }), _) => content.clone_from(&b.sent),
                            (Some(block), [one]) => block.clone_from(one),
                            _ => {}
                        }
                    }
                    let after = count(copy);
                    let delta = size.saturating_sub(after);
                    *size = after;
                    if delta > 0 {
                        out[k].push((m, delta));
                    }
                }
                i = j;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Block, Format, Message, Origin, Role, Session};

    fn result(chars: usize) -> Block {
        Block::ToolResult { tool_use_id: "t".into(), content: vec![Block::text("x".repeat(chars))], is_error: None }
    }

    fn clearing(at: usize, blocks: &[(usize, usize)]) -> RecordedClearing {
        let blocks = blocks.iter().map(|&(m, b)| ClearedBlock::new(m, b, vec![Block::text("[cleared]")])).collect();
        RecordedClearing { source_line: 0, at, blocks, tokens_saved: None, trigger: None }
    }

    /// chars/4 of the whole message, as the chars/4 estimator rounds it.
    fn chars4(m: &Message) -> u64 {
        (m.blocks.iter().map(Block::text_chars).sum::<usize>() as u64).div_ceil(4)
    }

    #[test]
    fn each_clearing_is_charged_what_it_took_from_each_message() {
        let mut s = Session::new("s", Format::ClaudeCode, "s.jsonl");
        // Message 1 holds two results (400 and 800 chars); message 2 one (40).
        s.messages = vec![
            Message::new(Role::User, Origin::Human, vec![Block::text("go")]),
            Message::new(Role::User, Origin::ToolResult, vec![result(400), result(800)]),
            Message::new(Role::User, Origin::ToolResult, vec![result(40)]),
        ];
        s.recorded_clearings = vec![clearing(5, &[(1, 1)]), clearing(3, &[(1, 0), (2, 0), (1, 0)])];
        // In `at` order: the first clears 400 + 40 chars (9 left each), the
        // second the 800 left in message 1, charged from what the first left.
        assert_eq!(s.clearing_deltas(&chars4), [vec![(1, 203 - 5)], vec![(1, 300 - 203), (2, 10 - 3)]]);
        // A compaction between them starts afresh: message 1 is whole again.
        s.recorded_compactions.push(RecordedCompaction {
            kind: CompactionKind::Other,
            source_line: 0,
            inserted: 4..4,
            kept: 1..3,
            head: 0..0,
            tokens_before: None,
            trigger: None,
        });
        assert_eq!(s.clearing_deltas(&chars4), [vec![(1, 300 - 103)], vec![(1, 300 - 203), (2, 10 - 3)]]);
        // A block out of range, a message out of range: nothing cleared.
        s.recorded_clearings = vec![clearing(3, &[(1, 5), (9, 0)])];
        assert_eq!(s.clearing_deltas(&chars4), [Vec::<(usize, u64)>::new()]);
    }
}
