//! The requests an agent sent to write its own compactions' summaries: the
//! baseline sent them too, so the cost model bills them beside its calls.

use super::usage_gap::Baseline;
use crate::model::{CompactionKind, Origin, Session};
use serde::{Deserialize, Serialize};

/// One request that wrote the summary of a compaction the agent made itself,
/// sized by the run's meter like the baseline's calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSummaryRequest {
    /// The call whose model it was sent to: the last call before it, else
    /// the first after (index into `Session::calls`).
    pub call: Option<usize>,
    pub timestamp: Option<i64>,
    /// Time since the baseline's request before it (`None`: unknown).
    pub gap_ms: Option<i64>,
    /// Tokens sent: the context the agent held when it compacted (the
    /// instruction it appended is not in the log, nor counted).
    pub tokens: u64,
    /// Of them, the start of the request before it (what a warm cache serves).
    pub prefix: u64,
    /// The summary it wrote.
    pub output: u64,
}

/// Whether the request that wrote a compaction's summary is known: Claude
/// Code sends the conversation as it is, with the same system prompt and
/// tools, plus a summarization instruction as a last user message, so it
/// reads the conversation from the cache while the cache is warm (its prompt
/// caching documentation, "Compacting the conversation").
pub fn priced(kind: CompactionKind) -> bool {
    kind == CompactionKind::ClaudeBoundary
}

/// Whether a compaction's summary was written by a request of the agent's
/// that its log does not hold as a call and compactor does not price: the
/// baseline leaves out what it cost (reported as a count).
pub fn unpriced(kind: CompactionKind) -> bool {
    matches!(
        kind,
        CompactionKind::CodexCompacted
            | CompactionKind::PiCompaction
            | CompactionKind::GeminiCompression
            | CompactionKind::RooCondense
    )
}

/// The baseline's request before a point: its call, message, size (before
/// the meter's drift) and time.
#[derive(Debug, Clone, Copy)]
pub(super) struct Before {
    pub call: usize,
    pub message: usize,
    pub size: u64,
    pub timestamp: Option<i64>,
}

/// What the meter knows of the session, to size a request.
pub(super) struct Sizes<'a> {
    pub session: &'a Session,
    pub baseline: &'a Baseline,
    /// A message's tokens as the meter counts it (0 if never sent).
    pub tokens: &'a dyn Fn(usize) -> u64,
    pub system: u64,
}

impl Sizes<'_> {
    /// Push the summary requests of the agent's own priced compactions that
    /// took effect after `before` and up to message `upto`; `next_call` is the
    /// call at `upto`, if any; `drift` the meter's last known gap to recorded
    /// usage (as for a call).
    pub fn push_until(
        &self,
        before: Option<Before>,
        upto: usize,
        next_call: Option<usize>,
        drift: i64,
        out: &mut Vec<AgentSummaryRequest>,
    ) {
        let session = self.session;
        let mut first = true;
        for (j, pre) in self.baseline.resets_between(before.map(|b| b.message), upto) {
            let Some(c) = session.recorded_compactions.get(j) else { continue };
            // Nothing before it in this log (a session continued from a
            // compacted one): the request was sent with another log's history.
            if c.inserted.start < session.inherited || !priced(c.kind) || pre == 0 {
                first = false;
                continue;
            }
            let tokens = super::apply_drift(self.system.saturating_add(pre), drift);
            // The request before it is a prefix of it, as far as the agent's
            // clearings since left it (as for a call); after another
            // compaction in the same gap, only the system prompt is.
            let prefix = match before.filter(|_| first) {
                Some(b) => {
                    let cut = self.baseline.cut_between(b.message, c.inserted.start);
                    super::apply_drift(cut.map_or(b.size, |cut| b.size.min(self.system + cut)), drift)
                }
                None => self.system,
            };
            let timestamp = session.messages.get(c.inserted.start).and_then(|m| m.timestamp);
            let gap_ms = match (before.and_then(|b| b.timestamp), timestamp) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                _ => None,
            };
            let end = c.inserted.end.min(session.messages.len());
            let output = (c.inserted.start.min(end)..end)
                .filter(|&i| session.messages[i].origin == Origin::CompactSummary)
                .map(|i| (self.tokens)(i))
                .sum();
            out.push(AgentSummaryRequest {
                call: before.map(|b| b.call).or(next_call),
                timestamp,
                gap_ms,
                tokens,
                prefix: prefix.min(tokens),
                output,
            });
            first = false;
        }
    }
}
