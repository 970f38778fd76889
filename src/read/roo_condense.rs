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
use std::collections::{BTreeMap, HashMap, HashSet};
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
    /// The marker's history element (its tags).
    element: usize,
    at: i64,
    tokens_before: Option<u64>,
    message: Message,
}

/// A marker placed where its truncation took effect.
struct Placed {
    id: String,
    /// The marker's history element (its tags).
    element: usize,
    /// Its message's index.
    message: usize,
    tokens_before: Option<u64>,
}

impl Markers {
    /// Hold `message`, the marker of history element `element` (`tags`),
    /// when `times` says when its truncation happened; gives it back otherwise.
    pub fn hold(&mut self, element: usize, tags: &Tags, times: &Times, message: Message) -> Option<Message> {
        let Some((id, &(at, tokens_before))) =
            tags.truncation_id.as_deref().and_then(|id| Some((id, times.truncations.get(id)?))).filter(|_| tags.marker)
        else {
            return Some(message);
        };
        self.held.push(Held { id: id.to_string(), element, at, tokens_before, message });
        None
    }

    /// Place the held markers of truncations made before an element written
    /// at `ts` (all of them when `None`: the history's end), before it.
    pub fn place(&mut self, ts: Option<i64>, messages: &mut Vec<Message>) {
        let due = |h: &Held| ts.is_none_or(|t| h.at < t);
        if !self.held.iter().any(due) {
            return;
        }
        let (now, later): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held).into_iter().partition(due);
        self.held = later;
        for h in now {
            self.placed.push(Placed {
                id: h.id,
                element: h.element,
                message: messages.len(),
                tokens_before: h.tokens_before,
            });
            messages.push(h.message);
        }
    }
}

/// The messages hidden so far: as runs (adjacent ones merged) and counted
/// by position, so that each compaction's context is found in O(log n).
struct Hidden {
    runs: BTreeMap<usize, usize>,
    /// A Fenwick tree of hidden messages by their run's first message.
    counts: Vec<u64>,
}

impl Hidden {
    fn new(messages: usize) -> Hidden {
        Hidden { runs: BTreeMap::new(), counts: vec![0; messages + 1] }
    }

    /// Hide `r` (each unit once; units do not overlap).
    fn hide(&mut self, r: Range<usize>) {
        let mut i = r.start + 1;
        while i < self.counts.len() {
            self.counts[i] += r.len() as u64;
            i += i & i.wrapping_neg();
        }
        let (mut from, mut to) = (r.start, r.end);
        if let Some((&s, &e)) = self.runs.range(..from).next_back()
            && e == from
        {
            self.runs.remove(&s);
            from = s;
        }
        if let Some(e) = self.runs.remove(&to) {
            to = e;
        }
        self.runs.insert(from, to);
    }

    /// Hidden messages before `at` (a unit lies wholly before it or not).
    fn before(&self, at: usize) -> u64 {
        let mut i = at.min(self.counts.len() - 1);
        let mut n = 0;
        while i > 0 {
            n += self.counts[i];
            i -= i & i.wrapping_neg();
        }
        n
    }

    /// What the agent still sent of the messages before `at`: the run from
    /// the first message (head), the last run (kept, when not the head), and
    /// how many messages lie between them.
    fn sent_before(&self, at: usize) -> (Range<usize>, Option<Range<usize>>, usize) {
        let head = 0..self.runs.keys().next().map_or(at, |&s| s.min(at));
        let last = match self.runs.range(..at).next_back() {
            None => 0..at,
            Some((&s, &e)) if e >= at => self.runs.range(..s).next_back().map_or(0, |(_, &e)| e)..s,
            Some((_, &e)) => e..at,
        };
        let sent = at.saturating_sub(self.before(at) as usize);
        if last.start == 0 || last.is_empty() {
            return (head.clone(), None, sent.saturating_sub(head.len()));
        }
        let between = sent.saturating_sub(head.len() + last.len());
        (head, Some(last), between)
    }
}

/// Record the compaction each condense summary and each placed truncation
/// made, with the tokens before it that `times` gives. `start[e]` is where
/// the messages of history element `e` start (`tags.len() + 1` entries; a
/// placed marker's message is the last of the element before the one it
/// precedes, and counts as its own element's); the summaries' messages
/// already have their origin (`CompactSummary` when they carry a
/// `condenseId`). Each message is hidden once, by the first compaction
/// whose id its element's tags name: O(n log n) for the session.
pub(super) fn apply(s: &mut Session, path: &Path, start: &[usize], tags: &[Tags], markers: &Markers, times: &Times) {
    if !tags.iter().any(Tags::any) {
        return;
    }
    // Cline writes none of these tags: Roo Code (or a fork of it) wrote them.
    s.meta.agent = Some(super::ROO_CODE.to_string());
    let marker_messages: HashSet<usize> = markers.placed.iter().map(|p| p.message).collect();
    let messages = |e: usize| {
        let mut r = start.get(e).copied().unwrap_or(0)..start.get(e + 1).copied().unwrap_or(0);
        while r.end > r.start && marker_messages.contains(&(r.end - 1)) {
            r.end -= 1;
        }
        r
    };
    // Every compaction in the order it happened.
    struct Event<'t> {
        inserted: Range<usize>,
        id: &'t str,
        kind: CompactionKind,
        line: u64,
        tokens_before: Option<u64>,
    }
    let mut events: Vec<Event<'_>> = Vec::new();
    for (e, t) in tags.iter().enumerate() {
        if let Some(id) = t.condense_id.as_deref().filter(|_| t.summary) {
            let tokens_before = times.condenses.get(id).copied();
            let kind = CompactionKind::RooCondense;
            events.push(Event { inserted: messages(e), id, kind, line: e as u64 + 1, tokens_before });
        }
    }
    for p in &markers.placed {
        events.push(Event {
            inserted: p.message..p.message + 1,
            id: &p.id,
            kind: CompactionKind::RooTruncation,
            line: p.element as u64 + 1,
            tokens_before: p.tokens_before,
        });
    }
    events.sort_by_key(|ev| (ev.inserted.start, ev.inserted.end));
    // The first compaction of each id, and the messages each one hides:
    // those of the elements (and placed markers) whose tags name it.
    let (mut condensed, mut truncated): (HashMap<&str, usize>, HashMap<&str, usize>) = Default::default();
    for (q, ev) in events.iter().enumerate() {
        let ids = if ev.kind == CompactionKind::RooCondense { &mut condensed } else { &mut truncated };
        ids.entry(ev.id).or_insert(q);
    }
    let hidden_by = |t: &Tags| {
        let c = t.condense_parent.as_deref().and_then(|p| condensed.get(p));
        let tr = t.truncation_parent.as_deref().and_then(|p| truncated.get(p));
        c.into_iter().chain(tr).min().copied()
    };
    let mut hides: Vec<Vec<Range<usize>>> = vec![Vec::new(); events.len()];
    let units = (0..tags.len())
        .map(|e| (e, messages(e)))
        .chain(markers.placed.iter().map(|p| (p.element, p.message..p.message + 1)));
    for (e, r) in units.filter(|(_, r)| !r.is_empty()) {
        if let Some(q) = tags.get(e).and_then(hidden_by) {
            hides[q].push(r);
        }
    }
    let mut hidden = Hidden::new(s.messages.len());
    let mut split = 0usize;
    for (ev, hides) in events.iter().zip(hides) {
        hides.into_iter().for_each(|r| hidden.hide(r));
        // Kept: one run of messages. More runs (a fork that keeps every
        // earlier summary) keep the last; the others count as dropped.
        let (head, kept, between) = hidden.sent_before(ev.inserted.start);
        split += between;
        s.recorded_compactions.push(RecordedCompaction {
            kind: ev.kind,
            source_line: ev.line,
            inserted: ev.inserted.clone(),
            kept: kept.unwrap_or(ev.inserted.start..ev.inserted.start),
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
        .filter(|t| t.marker && t.truncation_id.as_deref().is_none_or(|id| !truncated.contains_key(id)))
        .collect();
    if !untimed.is_empty() {
        let ids: HashSet<&str> = untimed.iter().filter_map(|t| t.truncation_id.as_deref()).collect();
        let hid = tags.iter().filter(|t| t.truncation_parent.as_deref().is_some_and(|p| ids.contains(p))).count();
        let why = format!(
            "{} sliding-window truncation(s) by Roo Code are not read as compactions (no UI message says when \
             they happened): the {hid} message(s) they hid are counted as sent",
            untimed.len()
        );
        s.diagnostics.warn(path, 0, why);
    }
}

/// The origin of a summary or marker element's message.
pub(super) fn origin(t: &Tags) -> Origin {
    if t.summary && t.condense_id.is_some() { Origin::CompactSummary } else { Origin::Injected }
}
