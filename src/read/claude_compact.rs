//! Claude Code's own compactions: a `compact_boundary` record, the
//! `isCompactSummary` message that follows it, and the messages it kept.

use super::Builder;
use super::rec::{self, Rec};
use crate::model::{CompactionKind, Origin, RecordedCompaction};
use foldhash::HashSet;
use serde_json::Value;

/// A `compact_boundary` waiting for its `isCompactSummary` message.
pub(super) struct PendingCompaction {
    line: u64,
    /// Message index where the boundary stands.
    start: usize,
    trigger: Option<String>,
    tokens_before: Option<u64>,
    preserved: Option<Preserved>,
}

/// The messages a compaction kept verbatim, as its metadata names them:
/// `preservedMessages` (newer, which supersedes the segment) lists their uuids,
/// `preservedSegment` gives the first and the last.
pub(super) enum Preserved {
    Segment {
        head: String,
        tail: String,
    },
    /// `uuids`, and `allUuids` (the records around them the harness also kept).
    Messages {
        uuids: Vec<String>,
        all: Vec<String>,
    },
}

impl Preserved {
    fn of(meta: Option<&Value>) -> Option<Preserved> {
        let get = |k: &str| meta.and_then(|m| m.get(k));
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default()
        };
        if let Some(m) = get("preservedMessages") {
            let uuids = strings(m.get("uuids"));
            if !uuids.is_empty() {
                return Some(Preserved::Messages { uuids, all: strings(m.get("allUuids")) });
            }
        }
        let p = get("preservedSegment")?;
        let head = p.get("headUuid").and_then(Value::as_str)?;
        let tail = p.get("tailUuid").and_then(Value::as_str)?;
        Some(Preserved::Segment { head: head.to_string(), tail: tail.to_string() })
    }
}

impl Builder<'_> {
    pub(super) fn boundary(&mut self, r: &Rec) {
        self.finish_pending();
        let meta = r.f.compact_metadata.as_ref();
        let get = |k: &str| meta.and_then(|m| m.get(k));
        let preserved = Preserved::of(meta);
        self.pending = Some(PendingCompaction {
            line: r.line,
            start: self.s.messages.len(),
            trigger: get("trigger").and_then(Value::as_str).map(str::to_string),
            tokens_before: get("preTokens").and_then(rec::as_u64),
            preserved,
        });
    }

    /// The `isCompactSummary` message at `idx` closes the pending boundary. Injected
    /// messages between the boundary and the summary (files re-attached by the
    /// compaction) were also created by it, so they join `inserted`.
    pub(super) fn summary_message(&mut self, r: &Rec, idx: usize) {
        let (line, start, trigger, tokens_before, preserved) = match self.pending.take() {
            Some(p) => {
                let between = self.s.messages.get(p.start..idx).unwrap_or_default();
                let start = if between.iter().all(|m| m.origin == Origin::Injected) { p.start } else { idx };
                (p.line, start, p.trigger, p.tokens_before, p.preserved)
            }
            // A summary without its boundary line still only exists because of a
            // compaction.
            None => (r.line, idx, None, None, None),
        };
        self.push_compaction(line, start..idx + 1, trigger, tokens_before, preserved);
    }

    pub(super) fn finish_pending(&mut self) {
        if let Some(p) = self.pending.take() {
            self.push_compaction(p.line, p.start..p.start, p.trigger, p.tokens_before, p.preserved);
        }
    }

    fn push_compaction(
        &mut self,
        line: u64,
        inserted: std::ops::Range<usize>,
        trigger: Option<String>,
        tokens_before: Option<u64>,
        preserved: Option<Preserved>,
    ) {
        if let Some(p) = preserved {
            self.preserved.push((self.s.recorded_compactions.len(), line, p));
        }
        let kept = inserted.start..inserted.start;
        self.s.recorded_compactions.push(RecordedCompaction {
            kind: CompactionKind::ClaudeBoundary,
            source_line: line,
            inserted,
            kept,
            head: 0..0,
            tokens_before,
            trigger,
        });
    }

    /// `kept` = the preserved segment when it stands before the summary (the
    /// file keeps it there and Claude Code relinks it on load). A segment found
    /// after the summary is already part of the post-compaction tail.
    pub(super) fn resolve_preserved(&mut self) {
        for (ci, line, preserved) in std::mem::take(&mut self.preserved) {
            let Some(kept) = self.preserved_range(line, &preserved) else { continue };
            if let Some(c) = self.s.recorded_compactions.get_mut(ci)
                && kept.end <= c.inserted.start
            {
                c.kept = kept;
            }
        }
    }

    /// The messages `p` names, as one run of message indices. Listed messages
    /// that are not one run (a message between them neither listed nor among
    /// `allUuids`) are taken from the first to the last, with a warning: a
    /// compaction's kept part is one run of the history.
    fn preserved_range(&mut self, line: u64, p: &Preserved) -> Option<std::ops::Range<usize>> {
        match p {
            Preserved::Segment { head, tail } => {
                let (&h, &t) = (self.uuid_msg.get(head)?, self.uuid_msg.get(tail)?);
                (h <= t).then_some(h..t + 1)
            }
            Preserved::Messages { uuids, all } => {
                let listed: Vec<usize> = uuids.iter().filter_map(|u| self.uuid_msg.get(u).copied()).collect();
                let (&first, &last) = (listed.iter().min()?, listed.iter().max()?);
                let named: HashSet<usize> =
                    listed.iter().copied().chain(all.iter().filter_map(|u| self.uuid_msg.get(u).copied())).collect();
                let gaps = (first..=last).filter(|i| !named.contains(i)).count();
                if gaps > 0 {
                    self.s.diagnostics.warn(
                        self.path,
                        line,
                        format!(
                            "compact_boundary: the preserved messages are not one run; \
                             the {gaps} message(s) between them are counted as kept too"
                        ),
                    );
                }
                Some(first..last + 1)
            }
        }
    }
}
