//! What a `compacted` record puts in the history. A record that holds only
//! its summary (no `replacement_history`) gets the history Codex rebuilds from
//! it, live and on resume: its initial context, the person's earlier messages
//! and the summary, of which the log keeps only the summary.

use super::truncate::{Budget, truncate_text};
use super::*;

/// What Codex keeps of the person's messages: the newest, up to this many of
/// its approximate tokens (4 bytes each), the oldest of them cut to fit
/// (codex-rs `COMPACT_USER_MESSAGE_MAX_TOKENS`). The history bridge of the
/// first versions cut their joined text to as many bytes times four.
const USER_MESSAGE_TOKENS: usize = 20_000;

/// The first versions' history bridge: one message holding every message of
/// the person's, joined, then the summary (`history_bridge.md`).
const BRIDGE_OPENING: &str =
    "You were originally given instructions from a user over one or more turns. Here were the user messages:\n\n";
const BRIDGE_SUMMARY: &str = "\n\nAnother language model started to solve this problem and produced a summary of its \
     thinking process. You also have access to the state of the tools that were used by that language model. Use this \
     to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the \
     other language model, use the information in this summary to assist with your own analysis:\n\n";

/// A rebuilt history: the initial context it keeps (the session's leading
/// injected messages) and the messages it inserts, in order.
struct Rebuilt {
    head: std::ops::Range<usize>,
    inserted: Vec<(Origin, String)>,
}

impl Reader<'_> {
    pub(super) fn add_compaction(&mut self, line: u64, inserted: std::ops::Range<usize>, from_event: bool) {
        let start = inserted.start;
        self.s.recorded_compactions.push(RecordedCompaction {
            kind: CompactionKind::CodexCompacted,
            source_line: line,
            inserted,
            kept: start..start,
            head: 0..0,
            tokens_before: None,
            trigger: None,
        });
        self.open_compaction = Some((self.s.recorded_compactions.len() - 1, from_event));
    }

    /// `compacted`: the replacement history (the agent's whole new context) and the
    /// summary text become inserted messages; a record of the summary alone
    /// inserts the history Codex rebuilds from it ([`Self::rebuild`]).
    pub(super) fn compacted(&mut self, p: &Value, line: u64, ts: Option<i64>) {
        self.boundary();
        // In the 0.40 layout a usage still waiting for its response here measured
        // the compaction's own summarization request, not the next response.
        if self.order == UsageOrder::Precedes && self.pending_usage.take().is_some() {
            self.unpaired_usage += 1;
        }
        let start = self.s.messages.len();
        let summary = p.get("message").and_then(Value::as_str).filter(|m| !m.trim().is_empty());
        if let Some(items) = p.get("replacement_history").and_then(Value::as_array) {
            for item in items {
                if item.get("type").and_then(Value::as_str) == Some("message") {
                    self.message_item(item, line, ts, Ctx::Replacement, summary);
                } else {
                    self.response_item(item, line, ts, Ctx::Replacement, None);
                }
            }
            self.open_assistant = None;
            self.open_results = None;
        }
        let mut head = 0..0;
        if !p.get("replacement_history").is_some_and(Value::is_array)
            && let Some(text) = summary
        {
            // Only the summary is recorded: the history is the one Codex rebuilds.
            let rebuilt = self.rebuild(text);
            head = rebuilt.head;
            for (origin, text) in rebuilt.inserted {
                self.push_message(Role::User, origin, vec![Block::text(text)], line, ts);
            }
        }
        let has_summary = self.s.messages[start..].iter().any(|m| m.origin == Origin::CompactSummary);
        if let (Some(text), false) = (summary, has_summary) {
            self.push_message(Role::User, Origin::CompactSummary, vec![Block::text(text)], line, ts);
        }
        let end = self.s.messages.len();
        let i = match self.open_compaction {
            // The `context_compacted` event of this compaction came first.
            Some((i, true)) => {
                if let Some(c) = self.s.recorded_compactions.get_mut(i) {
                    c.inserted = start..end;
                    c.kept = start..start;
                    c.source_line = line;
                }
                self.open_compaction = Some((i, false));
                i
            }
            _ => {
                self.add_compaction(line, start..end, false);
                self.s.recorded_compactions.len() - 1
            }
        };
        if let Some(c) = self.s.recorded_compactions.get_mut(i) {
            c.head = head;
        }
    }

    /// The history Codex rebuilds from a compaction that recorded only
    /// `summary`. A summary that opens with Codex's summary prefix
    /// ([`SUMMARY_OPENING`]) comes from a version that keeps the person's
    /// newest messages (up to [`USER_MESSAGE_TOKENS`]) as messages, earlier
    /// summaries left out; any other from the first versions, whose one bridge
    /// message joins every user message of the history, earlier bridges
    /// included. Both put the initial context (instructions, environment)
    /// first.
    fn rebuild(&self, summary: &str) -> Rebuilt {
        let bridge = !starts_with_ci(summary.trim_start(), SUMMARY_OPENING);
        // The history at this point: from where the last compaction before
        // this one took effect (one created from this compaction's own
        // `context_compacted` event is this one).
        let done = match self.open_compaction {
            Some((i, true)) => i,
            _ => self.s.recorded_compactions.len(),
        };
        let from = self.s.recorded_compactions[..done.min(self.s.recorded_compactions.len())]
            .last()
            .map_or(0, |c| c.inserted.start.min(self.s.messages.len()));
        let texts: Vec<String> = self.s.messages[from..]
            .iter()
            .filter(|m| {
                m.role == Role::User && (m.origin == Origin::Human || (bridge && m.origin == Origin::CompactSummary))
            })
            .map(|m| m.text().into_owned())
            .filter(|t| !t.is_empty())
            .collect();
        let lead = self.s.messages.iter().take_while(|m| m.origin == Origin::Injected).count();
        let head = 0..lead;
        let inserted = if bridge {
            let joined = if texts.is_empty() { "(none)".to_string() } else { texts.join("\n\n") };
            let joined = truncate_text(&joined, Budget::Tokens(USER_MESSAGE_TOKENS));
            vec![(Origin::CompactSummary, format!("{BRIDGE_OPENING}{joined}{BRIDGE_SUMMARY}{summary}"))]
        } else {
            let mut kept = newest_within(texts, USER_MESSAGE_TOKENS);
            kept.push((Origin::CompactSummary, summary.to_string()));
            kept
        };
        Rebuilt { head, inserted }
    }
}

/// The newest of `texts`, in order, up to `budget` tokens of Codex's estimate;
/// the oldest one kept is cut to what is left.
fn newest_within(texts: Vec<String>, budget: usize) -> Vec<(Origin, String)> {
    let mut left = budget;
    let mut kept = Vec::new();
    for t in texts.into_iter().rev() {
        if left == 0 {
            break;
        }
        let cost = t.len().div_ceil(4);
        if cost <= left {
            left -= cost;
            kept.push((Origin::Human, t));
        } else {
            kept.push((Origin::Human, truncate_text(&t, Budget::Tokens(left))));
            break;
        }
    }
    kept.reverse();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The newest messages up to the budget, in order; the oldest kept is cut
    /// to what is left, and nothing older is kept.
    #[test]
    fn the_newest_messages_within_the_budget_are_kept() {
        let texts = ["a".repeat(40_000), "b".repeat(60_000), "c".repeat(20_000)];
        let kept = newest_within(texts.to_vec(), USER_MESSAGE_TOKENS);
        assert_eq!(kept, vec![(Origin::Human, texts[1].clone()), (Origin::Human, texts[2].clone())]);

        let texts = ["a".repeat(8), "b".repeat(100_000)];
        let kept = newest_within(texts.to_vec(), USER_MESSAGE_TOKENS);
        assert_eq!(kept.len(), 1, "nothing older than a message that was cut");
        let cut = &kept[0].1;
        assert!(cut.starts_with('b') && cut.ends_with('b') && cut.contains("tokens truncated"), "{cut:.40}");
        assert!(cut.len() < 80_100, "{}", cut.len());

        assert!(newest_within(Vec::new(), USER_MESSAGE_TOKENS).is_empty());
    }
}
