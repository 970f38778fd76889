//! Roo Code's own context management, read back from the tags it leaves in its
//! history: condense summaries and timed truncations become recorded compactions.
//!
//! Roo Code never deletes what it condenses. It appends the summary as a history
//! element (`isSummary`, with a fresh `condenseId`) and tags the messages the
//! summary replaces with `condenseParent` = that id; what it sends next is every
//! element whose parent is not a summary in the history. Versions differ in
//! which elements they tag (all of them, all since the last summary, all but the
//! first exchange and the last three) and in where the summary goes (appended,
//! or before the three kept), but the tags always say what a summary replaced,
//! so the context after each one is read from them: the elements before it that
//! no summary (or truncation) up to it hides. A sliding-window truncation puts a
//! marker (`isTruncationMarker`) after the first element and tags what it hides
//! with `truncationParent`; the marker's place does not say when it happened,
//! but the UI message Roo Code writes then (`sliding_window_truncation`, with the
//! same `truncationId`) does: the marker's message is placed before the first
//! element written after it, as the text that truncation inserted. A marker no
//! UI message times stays where it is and what it hid counts as sent (a
//! diagnostic says so). Summaries and markers are not model calls: no API
//! request of the task made them.

use crate::model::{CompactionKind, Message, Origin, RecordedCompaction, Session};
use crate::read::generic::{str_of, u64_of};
use crate::read::time;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
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
    truncation_id: Option<String>,
    truncation_parent: Option<String>,
}

impl Tags {
    pub fn of(m: &Value) -> Tags {
        let flag = |k: &str| m.get(k).and_then(Value::as_bool) == Some(true);
        Tags {
            summary: flag("isSummary"),
            condense_id: str_of(m, "condenseId").map(str::to_string),
            condense_parent: str_of(m, "condenseParent").map(str::to_string),
            marker: flag("isTruncationMarker"),
            truncation_id: str_of(m, "truncationId").map(str::to_string),
            truncation_parent: str_of(m, "truncationParent").map(str::to_string),
        }
    }

    /// Text Roo Code wrote into its history itself, not a model's response.
    pub fn inserted(&self) -> bool {
        self.summary || self.marker
    }

    fn any(&self) -> bool {
        self.inserted()
            || self.condense_id.is_some()
            || self.condense_parent.is_some()
            || self.truncation_parent.is_some()
    }
}

/// What Roo Code's UI messages say of its compactions: when each truncation
/// happened (`sliding_window_truncation`), with the tokens before it, by
/// `truncationId`; and the tokens before each condense (`condense_context`,
/// by `condenseId`, which newer versions write).
#[derive(Default)]
pub(super) struct Times {
    truncations: HashMap<String, (i64, Option<u64>)>,
    condenses: HashMap<String, u64>,
}

impl Times {
    pub fn of(ui: &[Value]) -> Times {
        let mut out = Times::default();
        for m in ui {
            match str_of(m, "say") {
                Some("sliding_window_truncation") => {
                    let info = m.get("contextTruncation");
                    let id = info.and_then(|i| str_of(i, "truncationId"));
                    let ts = m.get("ts").and_then(time::parse_value);
                    if let (Some(id), Some(ts)) = (id, ts) {
                        let before = info.and_then(|i| i.get("prevContextTokens")).map(|v| u64_of(Some(v)));
                        out.truncations.entry(id.to_string()).or_insert((ts, before));
                    }
                }
                Some("condense_context") => {
                    let info = m.get("contextCondense");
                    let id = info.and_then(|i| str_of(i, "condenseId"));
                    let before = info.and_then(|i| i.get("prevContextTokens")).map(|v| u64_of(Some(v)));
                    if let (Some(id), Some(before)) = (id, before.filter(|&b| b > 0)) {
                        out.condenses.entry(id.to_string()).or_insert(before);
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// A truncation marker held back until the first element written after the
/// truncation, and the markers placed so far.
#[derive(Default)]
pub(super) struct Markers {
    held: Vec<Held>,
    placed: Vec<Placed>,
}

struct Held {
    id: String,
    at: i64,
    tokens_before: Option<u64>,
    line: u64,
    message: Message,
}

/// A marker placed where its truncation took effect.
struct Placed {
    id: String,
    /// Its message's index.
    message: usize,
    /// History elements written before it.
    elements: usize,
    tokens_before: Option<u64>,
    line: u64,
}

impl Markers {
    /// Hold `message`, the marker of `tags`, when `times` says when its
    /// truncation happened; gives it back otherwise.
    pub fn hold(&mut self, tags: &Tags, times: &Times, line: u64, message: Message) -> Option<Message> {
        let Some((id, &(at, tokens_before))) =
            tags.truncation_id.as_deref().and_then(|id| Some((id, times.truncations.get(id)?))).filter(|_| tags.marker)
        else {
            return Some(message);
        };
        self.held.push(Held { id: id.to_string(), at, tokens_before, line, message });
        None
    }

    /// Place the held markers of truncations made before an element written
    /// at `ts` (all of them when `None`: the history's end), before it.
    /// `elements` history elements precede it.
    pub fn place(&mut self, ts: Option<i64>, elements: usize, messages: &mut Vec<Message>) {
        let due = |h: &Held| ts.is_none_or(|t| h.at < t);
        if !self.held.iter().any(due) {
            return;
        }
        let (now, later): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held).into_iter().partition(due);
        self.held = later;
        for h in now {
            self.placed.push(Placed {
                id: h.id,
                message: messages.len(),
                elements,
                tokens_before: h.tokens_before,
                line: h.line,
            });
            messages.push(h.message);
        }
    }
}

/// Record the compaction each condense summary and each placed truncation
/// made, with the tokens before it that `times` gives. `start[e]` is where the messages of history element `e` start
/// (`tags.len() + 1` entries; a placed marker's message is the last of the
/// element before the one it precedes, and belongs to no element); the
/// summaries' messages already have their origin (`CompactSummary` when they
/// carry a `condenseId`).
pub(super) fn apply(s: &mut Session, path: &Path, start: &[usize], tags: &[Tags], markers: &Markers, times: &Times) {
    if !tags.iter().any(Tags::any) {
        return;
    }
    let marker_messages: HashSet<usize> = markers.placed.iter().map(|p| p.message).collect();
    let messages = |e: usize| {
        let mut r = start.get(e).copied().unwrap_or(0)..start.get(e + 1).copied().unwrap_or(0);
        while r.end > r.start && marker_messages.contains(&(r.end - 1)) {
            r.end -= 1;
        }
        r
    };
    // Every event in the order it happened: (inserted messages, elements
    // before it, its own id, kind, source line, tokens before).
    struct Event<'t> {
        inserted: Range<usize>,
        elements: usize,
        id: &'t str,
        kind: CompactionKind,
        line: u64,
        tokens_before: Option<u64>,
    }
    let mut events: Vec<Event<'_>> = Vec::new();
    for (e, t) in tags.iter().enumerate() {
        if let Some(id) = t.condense_id.as_deref().filter(|_| t.summary) {
            let inserted = messages(e);
            events.push(Event {
                inserted,
                elements: e,
                id,
                kind: CompactionKind::RooCondense,
                line: e as u64 + 1,
                tokens_before: times.condenses.get(id).copied(),
            });
        }
    }
    for p in &markers.placed {
        events.push(Event {
            inserted: p.message..p.message + 1,
            elements: p.elements,
            id: &p.id,
            kind: CompactionKind::RooTruncation,
            line: p.line,
            tokens_before: p.tokens_before,
        });
    }
    events.sort_by_key(|ev| (ev.inserted.start, ev.inserted.end));
    let (mut summaries, mut truncations): (HashSet<&str>, HashSet<&str>) = Default::default();
    let mut split = 0usize;
    for ev in &events {
        match ev.kind {
            CompactionKind::RooCondense => summaries.insert(ev.id),
            _ => truncations.insert(ev.id),
        };
        // What the agent sent after it, among the elements before it.
        let hidden = |j: usize| {
            tags[j].condense_parent.as_deref().is_some_and(|p| summaries.contains(p))
                || tags[j].truncation_parent.as_deref().is_some_and(|p| truncations.contains(p))
        };
        let mut sent: Vec<Range<usize>> = Vec::new();
        for r in (0..ev.elements).filter(|&j| !hidden(j)).map(messages).filter(|r| !r.is_empty()) {
            match sent.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => sent.push(r),
            }
        }
        let head = match sent.first() {
            Some(r) if r.start == 0 => sent.remove(0),
            _ => 0..0,
        };
        // Kept: one run of messages. More runs (a fork that keeps every
        // earlier summary) keep the last; the others count as dropped.
        let kept = sent.pop().unwrap_or(ev.inserted.start..ev.inserted.start);
        split += sent.iter().map(Range::len).sum::<usize>();
        s.recorded_compactions.push(RecordedCompaction {
            kind: ev.kind,
            source_line: ev.line,
            inserted: ev.inserted.clone(),
            kept,
            head,
            tokens_before: ev.tokens_before,
            trigger: None,
        });
    }
    s.recorded_compactions.sort_by_key(|c| (c.inserted.start, c.inserted.end));
    if split > 0 {
        let why = format!(
            "{split} message(s) Roo Code still sent after a condense or truncation lie apart from the others \
             it kept: they are counted as dropped by it"
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
    let untimed: Vec<&Tags> = tags
        .iter()
        .filter(|t| t.marker && t.truncation_id.as_deref().is_none_or(|id| !truncations.contains(id)))
        .collect();
    if !untimed.is_empty() {
        let ids: HashSet<&str> = untimed.iter().filter_map(|t| t.truncation_id.as_deref()).collect();
        let hid = tags.iter().filter(|t| t.truncation_parent.as_deref().is_some_and(|p| ids.contains(p))).count();
        let markers_untimed = untimed.len();
        let why = format!(
            "{markers_untimed} sliding-window truncation(s) by Roo Code are not read as compactions (no UI \
             message says when they happened): the {hid} message(s) they hid are counted as sent"
        );
        s.diagnostics.warn(path, 0, why);
    }
}

/// The origin of a summary or marker element's message.
pub(super) fn origin(t: &Tags) -> Origin {
    if t.summary && t.condense_id.is_some() { Origin::CompactSummary } else { Origin::Injected }
}
