//! Roo Code's own context management, read back from the tags it leaves in a
//! Cline-shaped history: condense summaries become recorded compactions.
//!
//! Roo Code never deletes what it condenses. It appends the summary as a history
//! element (`isSummary`, with a fresh `condenseId`) and tags the messages the
//! summary replaces with `condenseParent` = that id; what it sends next is every
//! element whose parent is not a summary in the history. Versions differ in
//! which elements they tag (all of them, all since the last summary, all but the
//! first exchange and the last three) and in where the summary goes (appended,
//! or before the three kept), but the tags always say what a summary replaced,
//! so the context after each one is read from them: the elements before it that
//! no summary up to it hides. A sliding-window truncation inserts a marker
//! (`isTruncationMarker`) after the first element and tags what it hides with
//! `truncationParent`; its marker does not say when it happened, so it is not
//! read as a compaction (the messages it hid count as sent; a diagnostic says
//! so). Summaries and markers are not model calls: no API request made them.

use crate::model::{CompactionKind, Origin, RecordedCompaction, Session};
use crate::read::generic::str_of;
use serde_json::Value;
use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

/// The Roo Code fields of one history element.
#[derive(Default)]
pub(super) struct Tags {
    /// `isSummary`: a condense summary.
    pub summary: bool,
    condense_id: Option<String>,
    condense_parent: Option<String>,
    /// `isTruncationMarker`: a sliding-window truncation's notice.
    pub marker: bool,
    truncation_parent: bool,
}

impl Tags {
    pub fn of(m: &Value) -> Tags {
        let flag = |k: &str| m.get(k).and_then(Value::as_bool) == Some(true);
        Tags {
            summary: flag("isSummary"),
            condense_id: str_of(m, "condenseId").map(str::to_string),
            condense_parent: str_of(m, "condenseParent").map(str::to_string),
            marker: flag("isTruncationMarker"),
            truncation_parent: str_of(m, "truncationParent").is_some(),
        }
    }

    /// Text Roo Code wrote into its history itself, not a model's response.
    pub fn inserted(&self) -> bool {
        self.summary || self.marker
    }

    fn any(&self) -> bool {
        self.inserted() || self.condense_id.is_some() || self.condense_parent.is_some() || self.truncation_parent
    }
}

/// Record the compaction each condense summary made. `start[e]` is where the
/// messages of history element `e` start (`tags.len() + 1` entries); the
/// summaries' messages already have their origin (`CompactSummary` when they
/// carry a `condenseId`).
pub(super) fn apply(s: &mut Session, path: &Path, start: &[usize], tags: &[Tags]) {
    if !tags.iter().any(Tags::any) {
        return;
    }
    let messages = |e: usize| start.get(e).copied().unwrap_or(0)..start.get(e + 1).copied().unwrap_or(0);
    let mut summaries: HashSet<&str> = HashSet::new();
    let mut split = 0usize;
    for (e, t) in tags.iter().enumerate() {
        let Some(id) = t.condense_id.as_deref().filter(|_| t.summary) else { continue };
        summaries.insert(id);
        // What the agent sent after this summary, among the elements before it.
        let hidden = |j: usize| tags[j].condense_parent.as_deref().is_some_and(|p| summaries.contains(p));
        let mut sent: Vec<Range<usize>> = Vec::new();
        for j in (0..e).filter(|&j| !hidden(j)) {
            let r = messages(j);
            match sent.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ if r.is_empty() => {}
                _ => sent.push(r),
            }
        }
        let head = match sent.first() {
            Some(r) if r.start == 0 => sent.remove(0),
            _ => 0..0,
        };
        let inserted = messages(e);
        // Kept: one run of messages. More runs (a fork that keeps every
        // earlier summary) keep the last; the others count as dropped.
        let kept = sent.pop().unwrap_or(inserted.start..inserted.start);
        split += sent.iter().map(Range::len).sum::<usize>();
        s.recorded_compactions.push(RecordedCompaction {
            kind: CompactionKind::RooCondense,
            source_line: e as u64 + 1,
            inserted,
            kept,
            head,
            tokens_before: None,
            trigger: None,
        });
    }
    s.recorded_compactions.sort_by_key(|c| (c.inserted.start, c.inserted.end));
    if split > 0 {
        let why = format!(
            "{split} message(s) Roo Code still sent after a condense lie apart from the others it kept: \
             they are counted as dropped by it"
        );
        s.diagnostics.warn(path, 0, why);
    }
    let untagged = tags.iter().filter(|t| t.summary && t.condense_id.is_none()).count();
    if untagged > 0 {
        let why = format!(
            "{untagged} condense summary(ies) without a condenseId: Roo Code rewrote the history before \
             them, so what they replaced is not in the file; each is read as text it sent"
        );
        s.diagnostics.warn(path, 0, why);
    }
    let markers = tags.iter().filter(|t| t.marker).count();
    if markers > 0 {
        let hid = tags.iter().filter(|t| t.truncation_parent).count();
        let why = format!(
            "{markers} sliding-window truncation(s) by Roo Code are not read as compactions (the log does not \
             say when they happened): the {hid} message(s) they hid are counted as sent"
        );
        s.diagnostics.warn(path, 0, why);
    }
}

/// The origin of a summary or marker element's message.
pub(super) fn origin(t: &Tags) -> Origin {
    if t.summary && t.condense_id.is_some() { Origin::CompactSummary } else { Origin::Injected }
}
