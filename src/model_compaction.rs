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
    /// Anything else a reader recognizes as the agent replacing its history.
    Other,
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
