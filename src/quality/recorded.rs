//! The agent's own compactions, scored: at each compaction a log records, the
//! summary the agent's model wrote (`recorded`) against what the agent needed
//! later, next to what compactor's summarizers keep at the same point.
//!
//! A property of the log, not of a policy: computed once per session. At the
//! k-th recorded compaction `c`:
//! - P = the agent's context before `c` that `c` dropped: the messages from the
//!   previous compaction's kept part (or the session's start) up to `c`'s
//!   summary, less `c.kept`; the messages the previous compaction inserted
//!   (its summary, Codex's replacement history) are P's extra texts;
//! - S = the text of the summary messages `c` inserted;
//! - T = `c.kept` (Claude's preserved segment, pi's first kept entry on) and
//!   the other messages `c` inserted (Codex's replacement history);
//! - F = every message after `c`'s inserted ones.
//!
//! Rows at each point: `recorded` (S), `extractive@budget` (the extractive
//! summarizer on P within S's tokens), `llm@budget` (the run's LLM summarizer
//! asked the same, when it has one), `truncate`, `masking@budget` (masking
//! cut to S's tokens) and `oracle`. A compaction without readable summary text
//! (newer Codex stores it encrypted) or whose P lies in an earlier file (a
//! continuation that starts with the summary) is listed, not scored.

use super::aggregate::{QualityStats, aggregate};
use super::event::{CompactionAudit, CompactionPoint, CompactionQuality, REF_ORACLE, REF_TRUNCATE};
use super::index::SessionAtoms;
use super::replay::REF_MASKING_BUDGET;
use super::shown::{LostDetail, calls_by_message};
use crate::model::{CompactionKind, Message, Origin, RecordedCompaction, Session};
use crate::summarize::{Extractive, InputLimits, Summarizer, SummaryPart, SummaryRequest, Truncate};
use crate::text::filetrack::FileOps;
use crate::tokens::Estimator;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;

/// Row name of the summary the agent recorded.
pub const CANDIDATE_RECORDED: &str = "recorded";
/// Row name of the extractive summarizer run within the recorded summary's tokens.
pub const REF_EXTRACTIVE_BUDGET: &str = "extractive@budget";
/// Row name of the run's LLM summarizer (`--summarizer llm`) asked for a
/// summary within the recorded summary's tokens.
pub const REF_LLM_BUDGET: &str = "llm@budget";
/// Observation masking keeps the last M tool outputs before its budget cut
/// (quality.md: M = 10).
const MASKING_KEEP: usize = 10;

/// Whether a recorded compaction could be scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordedStatus {
    Scored,
    /// No readable summary text (newer Codex rollouts store it encrypted).
    Unreadable,
    /// Nothing of this file before the summary: what it dropped is in an
    /// earlier file (a continuation).
    Continuation,
}

impl RecordedStatus {
    pub fn name(self) -> &'static str {
        match self {
            RecordedStatus::Scored => "scored",
            RecordedStatus::Unreadable => "unreadable",
            RecordedStatus::Continuation => "continuation",
        }
    }
}

/// One compaction the agent made, and its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedEvent {
    /// Index among the session's recorded compactions.
    pub index: u32,
    pub kind: CompactionKind,
    pub source_line: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
    pub status: RecordedStatus,
    /// The summary replaced an earlier one (P holds a previous summary).
    pub chained: bool,
    pub replaced_messages: u32,
    pub kept_messages: u32,
    /// Message index the agent's context goes on from (F's start).
    pub future_start: usize,
    pub future_messages: u32,
    /// `recorded`, then the references at the same point; empty unless scored.
    pub rows: Vec<CompactionQuality>,
    /// Modified paths of P the recorded summary does not name in full.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_modified_paths: Vec<String>,
    /// The recorded summary's text (empty unless scored).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// What the recorded summary kept of each needed atom, and what it
    /// named that P ∪ T never did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<CompactionAudit>,
    /// The summary's head and what it lost, for report.html.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<LostDetail>,
}

/// The recorded compactions of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedQuality {
    pub session_id: String,
    /// The agent that wrote the log: its format's name (`claude-code`,
    /// `codex`, `pi`…), or the agent the reader recognised where a format is
    /// written by several (`roo-code`, `kilo-code` for Cline's).
    pub agent: String,
    /// The agent version the log names (the first, when several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub events: Vec<RecordedEvent>,
}

/// Score every compaction `session` records. `atoms` indexes the session
/// ([`SessionAtoms::from_session`]: the inserted messages left out); `est`
/// counts summary and context tokens. `None` when the log records none.
pub fn evaluate_recorded(session: &Session, atoms: &SessionAtoms<'_>, est: &dyn Estimator) -> Option<RecordedQuality> {
    let extractive = recorded_summaries(session, &Extractive, est);
    evaluate_recorded_with(session, atoms, est, &[(REF_EXTRACTIVE_BUDGET, extractive)])
}

/// The summary `summarizer` writes at each scorable recorded compaction of
/// `session`, in order, within the recorded summary's tokens: the
/// `extractive@budget` row (the session's own extractive summarizer, reading
/// its lens, when the replay has one) or `llm@budget`. `None` where the
/// summarizer wrote none of its own: it failed, or fell back to another (the
/// LLM adapter falls back to extractive, and the run lists the fallback).
/// Such a compaction has no row of that name: the row's numbers are the
/// summarizer's own, over the compactions it summarized.
pub fn recorded_summaries(session: &Session, summarizer: &dyn Summarizer, est: &dyn Estimator) -> Vec<Option<String>> {
    points(session)
        .into_iter()
        .filter_map(|(_, p)| p)
        .map(|p| p.summarize_with(session, summarizer, est, est.text_tokens(&p.summary).max(1)))
        .collect()
}

/// [`evaluate_recorded`] with the summaries of the written rows already
/// written: `(row name, one summary per scorable compaction)` from
/// [`recorded_summaries`], scored in this order after `recorded`.
pub fn evaluate_recorded_with(
    session: &Session,
    atoms: &SessionAtoms<'_>,
    est: &dyn Estimator,
    written: &[(&str, Vec<Option<String>>)],
) -> Option<RecordedQuality> {
    if !session.has_own_compactions() {
        return None;
    }
    let mut k = 0;
    let call_of = calls_by_message(session);
    let events = points(session)
        .into_iter()
        .map(|(mut event, p)| {
            if let Some(p) = p {
                let at: Vec<(&str, &str)> =
                    written.iter().filter_map(|(name, v)| Some((*name, v.get(k)?.as_deref()?))).collect();
                score(session, atoms, est, &mut event, &p, &at);
                if let Some(a) = &event.audit {
                    event.detail = Some(LostDetail::new(session, &call_of, &event.summary, &a.needed));
                }
                k += 1;
            }
            event
        })
        .collect();
    Some(RecordedQuality {
        session_id: session.id.clone(),
        agent: session.meta.agent.clone().unwrap_or_else(|| session.format.name().to_string()),
        version: session.meta.versions.first().cloned(),
        events,
    })
}

/// A recorded compaction that can be scored: its point and summary text.
pub(super) struct Scorable {
    pub(super) point: CompactionPoint,
    pub(super) summary: String,
}

impl Scorable {
    /// `summarizer` on what the agent's compaction replaced (P's messages,
    /// the previous summary, their file operations) within `max_tokens`.
    fn summarize_with(
        &self,
        session: &Session,
        summarizer: &dyn Summarizer,
        est: &dyn Estimator,
        max_tokens: u64,
    ) -> Option<String> {
        let msgs: Vec<&Message> =
            self.point.replaced.iter().flat_map(Clone::clone).filter_map(|i| session.messages.get(i)).collect();
        let ops = FileOps::from_messages(msgs.iter().copied());
        let previous = (!self.point.replaced_text.is_empty()).then(|| self.point.replaced_text.join("\n\n"));
        let req = SummaryRequest {
            part: SummaryPart::History,
            messages: &msgs,
            previous_summary: previous.as_deref(),
            file_ops: &ops,
            max_tokens,
            limits: InputLimits::default(),
            estimator: est,
            context: None,
        };
        summarizer.summarize(&req).ok().filter(|s| s.fallback.is_none()).map(|s| s.text)
    }
}

/// Every recorded compaction of `session` in log order, with its point when
/// it can be scored. Those among the messages the session inherited
/// ([`Session::inherited`]) are the other session's, scored in its own log:
/// not listed here, but still the previous compaction of the next one.
pub(super) fn points(session: &Session) -> Vec<(RecordedEvent, Option<Scorable>)> {
    let mut order: Vec<&RecordedCompaction> = session.recorded_compactions.iter().collect();
    order.sort_by_key(|c| (c.inserted.start, c.inserted.end));
    let n = session.messages.len();
    // The responses the agent never sent on ([`crate::model::Message::unsent`]):
    // in no context it dropped or kept.
    let unsent = session.unsent_indices();
    let mut previous: Option<&RecordedCompaction> = None;
    let mut out = Vec::with_capacity(order.len());
    for (k, c) in order.into_iter().enumerate() {
        if c.inserted.start >= session.inherited {
            out.push(point_of(session, k, c, previous, n, &unsent));
        }
        previous = Some(c);
    }
    out
}

/// Texts of `range`'s messages: the summaries (`CompactSummary`) and the rest.
fn inserted_texts(session: &Session, range: &Range<usize>) -> (Vec<String>, Vec<String>) {
    let (mut summaries, mut others) = (Vec::new(), Vec::new());
    for m in session.messages.get(range.clone()).unwrap_or_default() {
        let text = m.text();
        if text.trim().is_empty() {
            continue;
        }
        if m.origin == Origin::CompactSummary {
            summaries.push(text.into_owned());
        } else {
            others.push(text.into_owned());
        }
    }
    (summaries, others)
}

/// `ranges` less the messages at `points` (sorted): one pass over the points
/// each range holds.
fn without(ranges: impl IntoIterator<Item = Range<usize>>, points: &[usize]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for r in ranges {
        let mut from = r.start;
        let first = points.partition_point(|&p| p < r.start);
        for &p in points[first..].iter().take_while(|&&p| p < r.end) {
            if from < p {
                out.push(from..p);
            }
            from = p + 1;
        }
        if from < r.end {
            out.push(from..r.end);
        }
    }
    out
}

/// `from..to` less `hole`, as ranges.
fn minus(from: usize, to: usize, hole: &Range<usize>) -> Vec<Range<usize>> {
    let (hs, he) = (hole.start.clamp(from, to), hole.end.clamp(from, to));
    [from..hs, he.max(hs)..to].into_iter().filter(|r| !r.is_empty()).collect()
}

fn point_of(
    session: &Session,
    k: usize,
    c: &RecordedCompaction,
    previous: Option<&RecordedCompaction>,
    n: usize,
    unsent: &[usize],
) -> (RecordedEvent, Option<Scorable>) {
    let at = c.inserted.start.min(n);
    // The context before `c`: the start of the session the previous compaction
    // kept (Cline's first exchange), then from its kept part on.
    let start = previous.map_or(0, |p| if p.kept.is_empty() { p.inserted.start } else { p.kept.start }).min(at);
    // Clamped, and empty when reversed (a hand-built session's), by the model.
    let head = previous.map_or(0..0, |p| p.kept_ranges(start)[0].clone());
    // Less what `c` keeps; the previous compaction's inserted messages are extra texts.
    let holes = [Some(&c.head), Some(&c.kept), previous.map(|p| &p.inserted)];
    let replaced: Vec<Range<usize>> = holes.into_iter().flatten().fold(vec![head, start..at], |ranges, hole| {
        ranges.into_iter().flat_map(|r| minus(r.start, r.end, hole)).collect()
    });
    let replaced = without(replaced, unsent);
    let replaced_text = previous.map_or_else(Vec::new, |p| {
        let (s, o) = inserted_texts(session, &p.inserted);
        s.into_iter().chain(o).collect::<Vec<_>>()
    });
    let (summaries, kept_text) = inserted_texts(session, &c.inserted);
    let kept: Vec<Range<usize>> = without(c.kept_ranges(n), unsent);
    let future = c.inserted.end.min(n)..n;
    let replaced_messages: usize = replaced.iter().map(Range::len).sum();
    let mut event = RecordedEvent {
        index: k as u32,
        kind: c.kind,
        source_line: c.source_line,
        trigger: c.trigger.clone(),
        tokens_before: c.tokens_before,
        status: RecordedStatus::Scored,
        chained: !replaced_text.is_empty(),
        replaced_messages: replaced_messages as u32,
        kept_messages: kept.iter().map(Range::len).sum::<usize>() as u32,
        future_start: future.start,
        future_messages: future.len() as u32,
        rows: Vec::new(),
        lost_modified_paths: Vec::new(),
        summary: String::new(),
        audit: None,
        detail: None,
    };
    // A truncation writes no summary: scored with none, it shows what it lost.
    if summaries.is_empty() && !c.kind.may_truncate() {
        event.status = RecordedStatus::Unreadable;
        return (event, None);
    }
    if replaced_messages == 0 && replaced_text.is_empty() {
        event.status = RecordedStatus::Continuation;
        return (event, None);
    }
    let point =
        CompactionPoint { replaced, replaced_text, kept, kept_text, future, replaced_tokens: None, kept_tokens: None };
    (event, Some(Scorable { point, summary: summaries.join("\n\n") }))
}

/// The rows of one scorable compaction, `written` being the summaries
/// written at it (`extractive@budget`, `llm@budget`), by row name.
fn score(
    session: &Session,
    atoms: &SessionAtoms<'_>,
    est: &dyn Estimator,
    event: &mut RecordedEvent,
    p: &Scorable,
    written: &[(&str, &str)],
) {
    let prepared = atoms.prepare(&p.point, est);
    // The summary is read once, for its row and for the paths it lost.
    let view = atoms.text_view(&p.summary);
    let (recorded, audit) = prepared.score_text_view_audited(CANDIDATE_RECORDED, &p.summary, &view);
    event.lost_modified_paths = prepared.missing_modified(&view);
    event.audit = Some(audit);
    event.summary = p.summary.clone();
    let budget = recorded.summary_tokens.max(1);
    let truncated = p.summarize_with(session, &Truncate, est, u64::MAX).unwrap_or_default();
    event.rows = std::iter::once(recorded)
        .chain(written.iter().map(|(name, text)| prepared.score(name, text)))
        .chain([
            prepared.score(REF_TRUNCATE, &truncated),
            prepared.masking_within(REF_MASKING_BUDGET, MASKING_KEEP, Some(budget)),
            prepared.score(REF_ORACLE, &prepared.oracle_summary()),
        ])
        .collect();
}

/// Recorded compactions over many sessions of one agent version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedAggregate {
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub sessions: u32,
    /// Recorded compactions, scored or not.
    pub compactions: u32,
    pub scored: u32,
    pub unreadable: u32,
    pub continuations: u32,
    /// Statistics per candidate (`recorded` and the references) over the
    /// scored compactions.
    pub candidates: Vec<QualityStats>,
}

impl RecordedAggregate {
    pub fn candidate(&self, name: &str) -> Option<&QualityStats> {
        self.candidates.iter().find(|c| c.summarizer == name)
    }
}

/// One aggregate per (agent, version), sorted by both.
pub fn aggregate_recorded<'q>(sessions: impl IntoIterator<Item = &'q RecordedQuality>) -> Vec<RecordedAggregate> {
    let mut groups: BTreeMap<(&str, Option<&str>), Vec<&RecordedQuality>> = BTreeMap::new();
    for s in sessions {
        groups.entry((s.agent.as_str(), s.version.as_deref())).or_default().push(s);
    }
    groups
        .into_iter()
        .map(|((agent, version), group)| {
            let events = || group.iter().flat_map(|s| s.events.iter());
            let count = |st: RecordedStatus| events().filter(|e| e.status == st).count() as u32;
            RecordedAggregate {
                agent: agent.to_string(),
                version: version.map(str::to_string),
                sessions: group.len() as u32,
                compactions: events().count() as u32,
                scored: count(RecordedStatus::Scored),
                unreadable: count(RecordedStatus::Unreadable),
                continuations: count(RecordedStatus::Continuation),
                candidates: aggregate(events().flat_map(|e| e.rows.iter())),
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "recorded_tests.rs"]
mod tests;
