//! Claude Code's own compactions: a `compact_boundary` record, the
//! `isCompactSummary` message that follows it, and the messages it kept; its
//! microcompacts, which stop sending old tool outputs; and the tool outputs it
//! sends as a preview while the log keeps them whole (`content-replacement`).

use super::Builder;
use super::rec::{self, Rec};
use crate::model::{Block, ClearedBlock, CompactionKind, Origin, RecordedClearing, RecordedCompaction, tool_results};
use foldhash::{HashMap, HashSet};
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
        // A compaction ends the microcompacts' clearings: it starts the cleared set afresh.
        self.clearings.cleared.clear();
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
                // An unsent attachment at either end: the segment starts at
                // the message after it, or ends at the one before it.
                let h = self.uuid_msg.get(head).or_else(|| self.unsent_at.get(head)).copied()?;
                let t = match self.uuid_msg.get(tail) {
                    Some(&t) => t,
                    None => self.unsent_at.get(tail)?.checked_sub(1)?,
                };
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

/// What Claude Code sends for a tool output a microcompact cleared when it
/// could not save it to a file; the saved-file form (a `<persisted-output>`
/// note naming the file) is of about the same size.
const MICROCOMPACT_PLACEHOLDER: &str = "[Old tool result content cleared]";

/// The tool results microcompacts cleared since the last compaction, and an
/// index of the tool results by id, built the first time one is needed.
#[derive(Default)]
pub(super) struct Clearings {
    /// `tool_use_id` → (message, block) of its result, for the messages before `indexed`.
    by_id: HashMap<String, (usize, usize)>,
    indexed: usize,
    /// Ids cleared since the last compaction: a later boundary that lists one
    /// again clears nothing more.
    cleared: HashSet<String>,
}

impl Builder<'_> {
    /// A `microcompact_boundary` (Claude Code 2.1.8+): from the next request on,
    /// the tool results it lists (by tool-use id) are sent without their output.
    /// The log keeps them whole.
    pub(super) fn microcompact(&mut self, r: &Rec) {
        let meta = r.f.microcompact_metadata.as_ref();
        let get = |k: &str| meta.and_then(|m| m.get(k));
        let c = &mut self.clearings;
        for (id, mi, bi) in tool_results(&self.s.messages, c.indexed) {
            c.by_id.entry(id.to_string()).or_insert((mi, bi));
        }
        c.indexed = self.s.messages.len();
        let ids = match get("compactedToolIds") {
            Some(Value::Array(ids)) => ids.as_slice(),
            _ => {
                let message = "microcompact_boundary without a compactedToolIds list: nothing cleared";
                self.s.diagnostics.warn(self.path, r.line, message);
                &[]
            }
        };
        let mut blocks = Vec::new();
        let mut missing = 0usize;
        for id in ids.iter().filter_map(Value::as_str) {
            match c.by_id.get(id) {
                Some(&(m, b)) => {
                    if c.cleared.insert(id.to_string()) {
                        blocks.push(ClearedBlock::new(m, b, vec![Block::text(MICROCOMPACT_PLACEHOLDER)]));
                    }
                }
                None => missing += 1,
            }
        }
        let tokens_saved = get("tokensSaved").and_then(rec::as_u64);
        // The ids are not quoted: a diagnostic never repeats what a log holds.
        if missing > 0 {
            let message = format!(
                "microcompact_boundary: {missing} cleared tool output(s) not found in the log: \
                 nothing of theirs is taken off the agent's context"
            );
            self.s.diagnostics.warn(self.path, r.line, message);
        }
        if ids.is_empty() && tokens_saved.is_some_and(|t| t > 0) {
            self.s.diagnostics.warn(
                self.path,
                r.line,
                "microcompact_boundary: tokens saved on content it does not name (images): \
                 still counted in the agent's context",
            );
        }
        if blocks.is_empty() {
            return;
        }
        self.s.recorded_clearings.push(RecordedClearing {
            source_line: r.line,
            at: self.s.messages.len(),
            blocks,
            tokens_saved,
            trigger: get("trigger").and_then(Value::as_str).map(str::to_string),
        });
    }
}

/// What Claude Code sent in place of tool results the log keeps whole:
/// `tool_use_id` → (the `content-replacement` record's line, the text sent).
#[derive(Default)]
pub(super) struct Replacements {
    by_id: HashMap<String, (u64, String)>,
}

impl Builder<'_> {
    /// A `content-replacement` record (Claude Code 2.1, behind a setting of
    /// its server): the tool results of one user turn were over their budget
    /// (200,000 characters), and the largest were sent as a note naming the
    /// file their output was saved to and a preview of it. Which results are
    /// replaced, and by what, is fixed the first time they are sent and
    /// repeated on every later request (a resumed session reads it back from
    /// these records), so the text a record gives is what every request held.
    /// The log keeps the whole output in the tool result.
    pub(super) fn content_replacement(&mut self, r: &Rec) {
        let v = crate::read::parse_json::<Value>(r.raw).ok();
        let Some(items) = v.as_ref().and_then(|v| v.get("replacements")).and_then(Value::as_array) else {
            let message = "content-replacement without a replacements list: nothing replaced";
            self.s.diagnostics.warn(self.path, r.line, message);
            return;
        };
        let mut unread = 0usize;
        for item in items {
            let field = |k: &str| item.get(k).and_then(Value::as_str);
            match (field("kind"), field("toolUseId"), field("replacement")) {
                (Some("tool-result"), Some(id), Some(text)) => {
                    self.replacements.by_id.insert(id.to_string(), (r.line, text.to_string()));
                }
                _ => unread += 1,
            }
        }
        if unread > 0 {
            let message = format!(
                "content-replacement: {unread} replacement(s) of a kind or shape not read: \
                 what they name is counted as logged"
            );
            self.s.diagnostics.warn(self.path, r.line, message);
        }
    }

    /// Put the text Claude Code sent in place of each replaced tool result.
    /// Once all records are read: a record follows the results it names.
    pub(super) fn replace_contents(&mut self) {
        let by_id = std::mem::take(&mut self.replacements.by_id);
        if by_id.is_empty() {
            return;
        }
        let found: Vec<(usize, usize)> = tool_results(&self.s.messages, 0)
            .filter(|(id, _, _)| by_id.contains_key(*id))
            .map(|(_, m, b)| (m, b))
            .collect();
        let mut used: HashSet<&str> = HashSet::default();
        for (m, b) in found {
            if let Some(Block::ToolResult { tool_use_id, content, .. }) =
                self.s.messages.get_mut(m).and_then(|msg| msg.blocks.get_mut(b))
                && let Some((key, (_, text))) = by_id.get_key_value(tool_use_id.as_str())
            {
                *content = vec![Block::text(text.clone())];
                used.insert(key.as_str());
                self.s.diagnostics.sent_otherwise("tool output sent as a preview (content-replacement)");
            }
        }
        let missing = by_id.iter().filter(|(id, _)| !used.contains(id.as_str()));
        let (count, line) = missing.fold((0usize, u64::MAX), |(n, l), (_, (line, _))| (n + 1, l.min(*line)));
        // The ids are not quoted: a diagnostic never repeats what a log holds.
        if count > 0 {
            let message = format!(
                "content-replacement: {count} replaced tool output(s) not found in the log: nothing is replaced for them"
            );
            self.s.diagnostics.warn(self.path, line, message);
        }
    }
}
