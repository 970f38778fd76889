//! Quality of a replay (DESIGN.md §6, quality.md §c): every applied compaction
//! of a [`SessionTrace`] scored against the future of the same session, next to
//! the reference points at the same point, plus what Layer-1 pruning lost.
//!
//! The caller builds [`SessionAtoms`] once per session and calls
//! [`evaluate_trace`] for each policy's trace of that session: atom extraction
//! is the expensive part and does not depend on the policy.
//!
//! How a [`CompactionEvent`] becomes a [`CompactionPoint`]:
//! - P = `replaced` (source messages), plus the summaries the compaction
//!   re-summarized when `replaced_previous_summary` (as extra texts), plus user
//!   messages an earlier compaction retained verbatim and this one dropped;
//! - T = `kept_head` + `retained_user_messages` + the source messages from
//!   `kept_from` up to the call, plus earlier summaries still in history
//!   (placement `merge_first` keeps them in the first message);
//! - F = the session's messages from the call's assistant message on: that
//!   message is the first one the agent wrote with the compacted context.
//!
//! Rows per event, all at the same point: `policy` (the summary the policy's
//! summarizer wrote, whatever its name), then `truncate` (the real `Truncate`
//! summarizer run on P, with the file operations the policy's summarizer was
//! given), `masking` (observation masking, M = 10) and `oracle`.

use super::aggregate::{QualityStats, aggregate};
use super::event::{CompactionPoint, CompactionQuality, NeededAtom, REF_MASKING, REF_ORACLE, REF_TRUNCATE};
use super::hook::QualityScore;
use super::index::SessionAtoms;
use super::prune::{PrunedResult, PruningLoss};
use super::shown::{LostDetail, calls_by_message};
use super::view::TextView;
use super::{AtomKind, ReferenceOptions};
use crate::model::{Block, Message, Session};
use crate::policy::Policy;
use crate::replay::{
    CompactionEvent, CompactionReason, PruneEvent, PruneKind, ReplayError, Resolver, SessionTrace, SummaryOutcome,
};
use crate::summarize::{
    InputLimits, Summarizer, SummaryPart, SummaryRequest, Truncate, head_chars, tail_chars, tool_result_text,
};
use crate::text::filetrack::FileOps;
use crate::tokens::Estimator;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Row name of the summary the policy's summarizer wrote. A fixed name, not the
/// summarizer's, so a policy whose summarizer is `truncate` does not collide
/// with the `truncate` reference and aggregates line up across presets.
pub const CANDIDATE_POLICY: &str = "policy";

/// Row name of observation masking cut to the policy summary's token count at
/// the same point (quality.md §c.4: FRR at equal budget).
pub const REF_MASKING_BUDGET: &str = "masking@budget";

/// What [`evaluate_trace`] computes besides the policy's own row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityOptions {
    /// Observation masking keeping the last M tool outputs (quality.md: 10).
    pub masking_keep: Option<usize>,
    /// Also masking cut to the policy summary's size ([`REF_MASKING_BUDGET`]).
    pub masking_at_budget: bool,
    /// Run the `truncate` summarizer at every point.
    pub truncate: bool,
    pub oracle: bool,
    pub pruning_loss: bool,
    /// The policy carries file operations across compactions
    /// (`compact.file_ops`): the truncate reference gets the same list.
    pub cumulative_file_ops: bool,
    /// What a soft-trimmed tool result keeps (`prune.head`, `prune.tail`) and
    /// a capped one (`prune.cap_chars`), to know what pruning removed.
    pub trim_head_chars: u64,
    pub trim_tail_chars: u64,
    pub cap_chars: Option<u64>,
}

impl Default for QualityOptions {
    fn default() -> QualityOptions {
        QualityOptions::for_policy(&Policy::default())
    }
}

impl QualityOptions {
    /// Every reference on, with the policy's pruning shape and file tracking.
    pub fn for_policy(policy: &Policy) -> QualityOptions {
        QualityOptions {
            masking_keep: Some(10),
            masking_at_budget: true,
            truncate: true,
            oracle: true,
            pruning_loss: true,
            cumulative_file_ops: policy.compact.file_ops,
            trim_head_chars: policy.prune.head,
            trim_tail_chars: policy.prune.tail,
            cap_chars: policy.prune.cap_chars,
        }
    }
}

/// Where one compaction sits: the context columns of its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventInfo {
    /// Index among the trace's applied compactions.
    pub event: u32,
    pub call: usize,
    /// First message of F (the assistant message of the call).
    pub future_start: usize,
    pub reason: CompactionReason,
    pub outcome: SummaryOutcome,
    /// The policy's summarizer that wrote this event's summary (named apart
    /// from the rows' `summarizer`, the candidate, so CSV columns stay unique).
    #[serde(rename = "policy_summarizer")]
    pub summarizer: String,
    /// A summary of a summary (quality.md pitfall 9).
    pub chained: bool,
    pub split_turn: bool,
    pub replaced_messages: u32,
    pub kept_messages: u32,
    pub future_messages: u32,
}

/// One compaction: its context and one row per candidate (`policy`, then the
/// references the options ask for).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventQuality {
    pub info: EventInfo,
    pub rows: Vec<CompactionQuality>,
    /// Modified paths of P that the policy's summary does not name in full
    /// (`compactor check` fails on any for a must-keep session).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_modified_paths: Vec<String>,
    /// Why the policy's summarizer did not write the summary (`outcome`
    /// fallback): a program's exit status and stderr, an LLM's last error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
    /// The policy summary's head and what it lost, for report.html.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<LostDetail>,
}

/// The quality of one replay (one session through one policy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionQuality {
    pub session_id: String,
    pub policy: String,
    /// The policy's summarizer (from its compaction events; empty without any).
    pub summarizer: String,
    /// Applied compactions evaluated.
    pub compactions: u32,
    pub events: Vec<EventQuality>,
    /// Statistics per candidate over this session's events, by candidate name.
    pub candidates: Vec<QualityStats>,
    /// Layer-1 loss: each needed atom counted once, at the first call where
    /// pruning removed its last copy from the request.
    pub pruning: PruningLoss,
    /// What the policy's summaries lost most often of what the agent needed
    /// next (at most 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<LostAtom>,
}

impl SessionQuality {
    /// Flat rows for CSV, one per (event, candidate). The csv crate writes a
    /// tuple of two structs as one record (it cannot write `serde(flatten)`).
    pub fn rows(&self) -> impl Iterator<Item = (&EventInfo, &CompactionQuality)> {
        self.events.iter().flat_map(|e| e.rows.iter().map(move |r| (&e.info, r)))
    }

    /// The statistics of one candidate (`policy`, `truncate`, `masking`, `oracle`).
    pub fn candidate(&self, name: &str) -> Option<&QualityStats> {
        self.candidates.iter().find(|c| c.summarizer == name)
    }
}

/// Quality over many sessions of one policy. FRR is pooled over events
/// (Σ hits / Σ weights of the needed atoms, quality.md §c.3) next to the mean
/// and median per event; every component is published, the composite is one
/// more column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityAggregate {
    pub policy: String,
    pub sessions: u32,
    pub sessions_with_compactions: u32,
    pub compactions: u32,
    pub candidates: Vec<QualityStats>,
    pub pruned_results: u64,
    pub pruning_lost_atoms: u64,
    pub pruning_needed_lost: u64,
    pub pruning_needed_lost_weight: f64,
    /// References (truncate, masking, masking@budget) that reach at least the policy's pooled
    /// FRR with no more summary tokens on average, one of them strictly: the
    /// policy is dominated on the quality/budget plane (quality.md §c.5).
    pub dominated_by: Vec<String>,
    /// The needed atoms its summaries lost most often, over every session
    /// (each session's most lost summed; at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<LostAtom>,
}

impl QualityAggregate {
    pub fn candidate(&self, name: &str) -> Option<&QualityStats> {
        self.candidates.iter().find(|c| c.summarizer == name)
    }
}

/// Fold session results into one aggregate per policy, sorted by policy name.
pub fn aggregate_sessions<'q>(sessions: impl IntoIterator<Item = &'q SessionQuality>) -> Vec<QualityAggregate> {
    let mut groups: BTreeMap<&str, Vec<&SessionQuality>> = BTreeMap::new();
    for s in sessions {
        groups.entry(s.policy.as_str()).or_default().push(s);
    }
    groups
        .into_iter()
        .map(|(policy, group)| {
            let candidates = aggregate(group.iter().flat_map(|s| s.events.iter().flat_map(|e| e.rows.iter())));
            let dominated_by = dominated_by(&candidates);
            QualityAggregate {
                policy: policy.to_string(),
                sessions: group.len() as u32,
                sessions_with_compactions: group.iter().filter(|s| s.compactions > 0).count() as u32,
                compactions: group.iter().map(|s| s.compactions).sum(),
                candidates,
                pruned_results: group.iter().map(|s| u64::from(s.pruning.pruned_results)).sum(),
                pruning_lost_atoms: group.iter().map(|s| u64::from(s.pruning.lost_atoms)).sum(),
                pruning_needed_lost: group.iter().map(|s| u64::from(s.pruning.needed_lost)).sum(),
                pruning_needed_lost_weight: group.iter().map(|s| s.pruning.needed_lost_weight).sum(),
                dominated_by,
                lost: {
                    let mut t = LostTally::default();
                    for l in group.iter().flat_map(|s| &s.lost) {
                        t.add_n(l.kind, &l.value, l.compactions, l.weight);
                    }
                    t.top(10)
                },
            }
        })
        .collect()
}

fn dominated_by(stats: &[QualityStats]) -> Vec<String> {
    let Some(p) = stats.iter().find(|s| s.summarizer == CANDIDATE_POLICY) else { return Vec::new() };
    let (Some(pf), Some(pt)) = (p.frr_pooled, p.summary_tokens_mean) else { return Vec::new() };
    stats
        .iter()
        .filter(|s| [REF_TRUNCATE, REF_MASKING, REF_MASKING_BUDGET].contains(&s.summarizer.as_str()))
        .filter(|s| match (s.frr_pooled, s.summary_tokens_mean) {
            (Some(f), Some(t)) => f >= pf && t <= pt && (f > pf || t < pt),
            _ => false,
        })
        .map(|s| s.summarizer.clone())
        .collect()
}

/// What the policy's history holds after an applied compaction, for the views
/// of later calls.
struct HistoryState {
    call: usize,
    /// Source messages kept before the summary (head, retained user messages).
    head: Vec<usize>,
    /// Source messages from here on are in history (up to the current call).
    from: usize,
    summaries: Vec<String>,
}

/// One applied compaction of a trace as a quality point.
#[derive(Debug, Clone, PartialEq)]
pub struct TracePoint {
    /// Index into `SessionTrace::compactions`.
    pub compaction: usize,
    pub info: EventInfo,
    pub point: CompactionPoint,
    /// Source messages of P in session order: what the summarizer read.
    pub replaced_messages: Vec<usize>,
    /// File operations carried from earlier compactions (empty unless the
    /// policy tracks them), as the engine gave them to the summarizer.
    pub carried_file_ops: FileOps,
}

/// The compaction points of a trace (see the module docs for P, T and F),
/// without scoring them: for audits and for running other summarizers at the
/// same points.
pub fn trace_points(session: &Session, trace: &SessionTrace, cumulative_file_ops: bool) -> Vec<TracePoint> {
    walk(session, trace, cumulative_file_ops).0
}

fn walk(session: &Session, trace: &SessionTrace, cumulative_file_ops: bool) -> (Vec<TracePoint>, Vec<HistoryState>) {
    let n = session.messages.len();
    let future_start = |call: usize| session.calls.get(call).map_or(n, |c| c.message_index.min(n));
    let mut live: Vec<String> = Vec::new();
    let mut retained_live: Vec<usize> = Vec::new();
    let mut carried = FileOps::default();
    let mut states: Vec<HistoryState> = Vec::new();
    let mut points = Vec::new();
    for (k, (ci, ev)) in trace.compactions.iter().enumerate().filter(|(_, e)| e.applied).enumerate() {
        let f0 = future_start(ev.call);
        let mut replaced: Vec<usize> = ev.replaced.iter().copied().filter(|&i| i < n).collect();
        let mut replaced_text = Vec::new();
        if ev.replaced_previous_summary {
            replaced_text = std::mem::take(&mut live);
            replaced.extend(retained_live.iter().filter(|i| !ev.retained_user_messages.contains(i)));
        }
        replaced.sort_unstable();
        replaced.dedup();
        let mut head: Vec<usize> = ev.kept_head.iter().chain(&ev.retained_user_messages).copied().collect();
        head.retain(|&i| i < n);
        let from = ev.kept_from.unwrap_or(f0).min(f0);
        let mut kept = ranges(&head);
        kept.push(from..f0);
        let point = CompactionPoint {
            replaced: ranges(&replaced),
            replaced_text,
            kept: kept.clone(),
            kept_text: live.clone(),
            future: f0..n,
            replaced_tokens: None,
            kept_tokens: None,
        };
        points.push(TracePoint {
            compaction: ci,
            info: event_info(k, ev, f0, n, &replaced, &kept),
            point,
            replaced_messages: replaced,
            carried_file_ops: carried.clone(),
        });
        if !ev.summary.is_empty() {
            live.push(ev.summary.clone());
        }
        retained_live = ev.retained_user_messages.clone();
        if cumulative_file_ops {
            carried = ev.file_ops.clone();
        }
        states.push(HistoryState { call: ev.call, head, from, summaries: live.clone() });
    }
    (points, states)
}

/// Score every applied compaction of `trace` (a replay of `session`) and the
/// pruning it did. `atoms` must index this session
/// ([`SessionAtoms::from_session`]); `estimator` is the policy's.
pub fn evaluate_trace(
    session: &Session,
    trace: &SessionTrace,
    atoms: &SessionAtoms<'_>,
    estimator: &dyn Estimator,
    opts: &QualityOptions,
) -> SessionQuality {
    let n = session.messages.len().min(atoms.len());
    let (points, states) = walk(session, trace, opts.cumulative_file_ops);
    let mut events = Vec::with_capacity(points.len());
    // Each summary is read once: scored at its compaction, then looked up as
    // an extra text (kept or re-summarized) at the later ones.
    let mut views: HashMap<String, TextView> = HashMap::new();
    let mut lost_atoms = LostTally::default();
    let call_of = if points.is_empty() { HashMap::new() } else { calls_by_message(session) };
    for tp in points {
        let ev = &trace.compactions[tp.compaction];
        for t in tp.point.replaced_text.iter().chain(&tp.point.kept_text) {
            if !views.contains_key(t) {
                views.insert(t.clone(), atoms.text_view(t));
            }
        }
        let own = (!views.contains_key(&ev.summary)).then(|| atoms.text_view(&ev.summary));
        let rows = {
            let borrowed = |texts: &[String]| -> Vec<Cow<'_, TextView>> {
                texts.iter().filter_map(|t| views.get(t)).map(Cow::Borrowed).collect()
            };
            let prepared = atoms.prepare_views(
                &tp.point,
                estimator,
                borrowed(&tp.point.replaced_text),
                borrowed(&tp.point.kept_text),
            );
            let truncated = opts.truncate.then(|| {
                let previous = (!tp.point.replaced_text.is_empty()).then(|| tp.point.replaced_text.join("\n\n"));
                truncate_reference(session, &tp, previous.as_deref(), opts, estimator)
            });
            let mut rows = Vec::with_capacity(5);
            let mut lost = Vec::new();
            let mut detail = None;
            if let Some(v) = own.as_ref().or_else(|| views.get(&ev.summary)) {
                let (row, audit) = prepared.score_text_view_audited(CANDIDATE_POLICY, &ev.summary, v);
                rows.push(row);
                for a in audit.needed.iter().filter(|a| a.score < 1.0) {
                    lost_atoms.add(a.kind, &a.value, a.weight * (1.0 - a.score));
                }
                lost = prepared.missing_modified(v);
                detail = Some(LostDetail::new(session, &call_of, &ev.summary, &audit.needed));
            }
            rows.extend(prepared.reference_rows(&ReferenceOptions {
                truncate: truncated.as_deref(),
                masking_keep: opts.masking_keep,
                oracle: opts.oracle,
            }));
            if let (true, Some(keep), Some(policy)) = (opts.masking_at_budget, opts.masking_keep, rows.first()) {
                let budget = policy.summary_tokens;
                rows.push(prepared.masking_within(REF_MASKING_BUDGET, keep, Some(budget)));
            }
            (rows, lost, detail)
        };
        let (rows, lost_modified_paths, detail) = rows;
        if let Some(v) = own {
            views.insert(ev.summary.clone(), v);
        }
        // Only summaries still in history can come back.
        let live = states.get(events.len()).map(|s| s.summaries.as_slice()).unwrap_or_default();
        views.retain(|t, _| live.contains(t));
        let fallback_reason = ev.fallback_reason.clone();
        events.push(EventQuality { info: tp.info, rows, lost_modified_paths, fallback_reason, detail });
    }
    let pruning =
        if opts.pruning_loss { pruning_loss(session, trace, atoms, &states, opts, n) } else { PruningLoss::default() };
    let all_rows: Vec<&CompactionQuality> = events.iter().flat_map(|e| e.rows.iter()).collect();
    SessionQuality {
        session_id: trace.session_id.clone(),
        policy: trace.policy.clone(),
        summarizer: trace.compactions.first().map(|c| c.summarizer.clone()).unwrap_or_default(),
        compactions: events.len() as u32,
        candidates: aggregate(all_rows),
        events,
        pruning,
        lost: lost_atoms.top(LOST_KEPT),
    }
}

/// Lost atoms kept per session (the most often lost first).
const LOST_KEPT: usize = 20;

/// A needed atom the policy's summaries did not hold in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LostAtom {
    pub kind: AtomKind,
    pub value: String,
    /// Compactions it was needed after and not held in full.
    pub compactions: u32,
    /// Σ weight × the share not held, over those compactions.
    pub weight: f64,
}

/// Lost atoms by (kind, value).
#[derive(Default)]
pub(crate) struct LostTally(HashMap<(AtomKind, String), (u32, f64)>);

impl LostTally {
    pub(crate) fn add(&mut self, kind: AtomKind, value: &str, weight: f64) {
        self.add_n(kind, value, 1, weight);
    }

    pub(crate) fn add_n(&mut self, kind: AtomKind, value: &str, times: u32, weight: f64) {
        let e = self.0.entry((kind, value.to_string())).or_insert((0, 0.0));
        e.0 += times;
        e.1 += weight;
    }

    /// The `n` most often lost, then the heaviest, then by kind and value.
    pub(crate) fn top(self, n: usize) -> Vec<LostAtom> {
        let mut v: Vec<LostAtom> = self
            .0
            .into_iter()
            .map(|((kind, value), (compactions, weight))| LostAtom { kind, value, compactions, weight })
            .collect();
        v.sort_by(|a, b| {
            b.compactions
                .cmp(&a.compactions)
                .then(b.weight.total_cmp(&a.weight))
                .then(a.kind.cmp(&b.kind))
                .then_with(|| a.value.cmp(&b.value))
        });
        v.truncate(n);
        v
    }
}

fn event_info(
    k: usize,
    ev: &CompactionEvent,
    f0: usize,
    n: usize,
    replaced: &[usize],
    kept: &[Range<usize>],
) -> EventInfo {
    EventInfo {
        event: k as u32,
        call: ev.call,
        future_start: f0,
        reason: ev.reason,
        outcome: ev.outcome,
        summarizer: ev.summarizer.clone(),
        chained: ev.replaced_previous_summary,
        split_turn: ev.split_turn,
        replaced_messages: replaced.len() as u32,
        kept_messages: kept.iter().map(|r| r.len()).sum::<usize>() as u32,
        future_messages: n.saturating_sub(f0) as u32,
    }
}

/// The `truncate` summarizer at this point, given what the engine would give
/// it: the replaced messages, the previous summary, and the file operations
/// (cumulative when the policy tracks them).
fn truncate_reference(
    session: &Session,
    tp: &TracePoint,
    previous: Option<&str>,
    opts: &QualityOptions,
    estimator: &dyn Estimator,
) -> String {
    let msgs: Vec<&Message> = tp.replaced_messages.iter().filter_map(|&i| session.messages.get(i)).collect();
    let mut ops = FileOps::from_messages(msgs.iter().copied());
    if opts.cumulative_file_ops {
        ops.merge(&tp.carried_file_ops);
    }
    let req = SummaryRequest {
        part: SummaryPart::History,
        messages: &msgs,
        previous_summary: previous,
        file_ops: &ops,
        max_tokens: u64::MAX,
        limits: InputLimits::default(),
        estimator,
        context: None,
    };
    Truncate.summarize(&req).map(|s| s.text).unwrap_or_default()
}

/// Run `summarizer` at one trace point on what the engine gave the policy's
/// summarizer there (the replaced messages, the previous summary it replaced,
/// the file operations, the policy's preview limits) within `max_tokens`: to
/// compare summarizers at the same point and the same budget (quality.md
/// §c.4). A split turn is summarized in one piece.
pub fn summarize_at(
    session: &Session,
    tp: &TracePoint,
    policy: &Policy,
    summarizer: &dyn Summarizer,
    estimator: &dyn Estimator,
    max_tokens: u64,
) -> String {
    let msgs: Vec<&Message> = tp.replaced_messages.iter().filter_map(|&i| session.messages.get(i)).collect();
    let mut ops = FileOps::from_messages(msgs.iter().copied());
    if policy.compact.file_ops {
        ops.merge(&tp.carried_file_ops);
    }
    let previous = (!tp.point.replaced_text.is_empty()).then(|| tp.point.replaced_text.join("\n\n"));
    let c = &policy.compact;
    let req = SummaryRequest {
        part: SummaryPart::History,
        messages: &msgs,
        previous_summary: previous.as_deref(),
        file_ops: &ops,
        max_tokens: max_tokens.max(1),
        limits: InputLimits {
            preview_head_chars: c.preview_head_chars.map(|x| x as usize),
            preview_tail_chars: c.preview_tail_chars as usize,
            input_cap_chars: c.input_cap_chars.map(|x| x as usize),
        },
        estimator,
        context: Some(crate::summarize::RequestContext { session, policy: &policy.name }),
    };
    summarizer.summarize(&req).map(|s| s.text).unwrap_or_default()
}

/// Needed atoms that pruning removed: per call, the results pruned at that call
/// are checked against the request view (what compaction left, the summaries,
/// results cleared earlier count as gone) and the future from that call on.
fn pruning_loss(
    session: &Session,
    trace: &SessionTrace,
    atoms: &SessionAtoms<'_>,
    states: &[HistoryState],
    opts: &QualityOptions,
    n: usize,
) -> PruningLoss {
    let mut total = PruningLoss::default();
    let mut cleared: foldhash::HashSet<(usize, usize)> = Default::default();
    let mut counted: HashSet<(AtomKind, String)> = HashSet::new();
    let mut found: Vec<NeededAtom> = Vec::new();
    let mut si = 0usize;
    let mut views: Vec<TextView> = Vec::new();
    let mut views_of: Option<usize> = None;
    let mut i = 0usize;
    let prunes = &trace.prunes;
    while i < prunes.len() {
        let call = prunes[i].call;
        let j = i + prunes[i..].iter().take_while(|p| p.call == call).count();
        // The last transition of each result at this call is its state in the view.
        let mut now: BTreeMap<(usize, usize), &PruneEvent> = BTreeMap::new();
        for p in &prunes[i..j] {
            if p.message_index < n {
                now.insert((p.message_index, p.block), p);
            }
        }
        i = j;
        while si < states.len() && states[si].call <= call {
            si += 1;
        }
        let m = session.calls.get(call).map_or(n, |c| c.message_index.min(n));
        let view: Vec<Range<usize>> = match si.checked_sub(1).map(|s| &states[s]) {
            None => std::iter::once(0..m).collect(),
            Some(st) => {
                let mut v = ranges(&st.head);
                v.push(st.from.min(m)..m);
                v
            }
        };
        // The summaries in history change only at a compaction: read them once.
        if views_of != Some(si) {
            views = si
                .checked_sub(1)
                .map_or_else(Vec::new, |s| states[s].summaries.iter().map(|t| atoms.text_view(t)).collect());
            views_of = Some(si);
        }
        let texts: Vec<&TextView> = views.iter().collect();
        let kept: Vec<String> = now.values().map(|p| kept_text(session, p, opts)).collect();
        let pruned: Vec<PrunedResult<'_>> = now
            .values()
            .zip(&kept)
            .map(|(p, k)| PrunedResult { message: p.message_index, block: p.block, kept: k })
            .collect();
        let loss = atoms.pruning_loss_with(&view, &texts, &pruned, &cleared, m..n);
        total.pruned_results += loss.pruned_results;
        total.lost_atoms += loss.lost_atoms;
        for a in loss.atoms {
            if counted.insert((a.kind, a.value.clone())) {
                found.push(a);
            }
        }
        for (&at, p) in &now {
            if p.kind == PruneKind::Hard {
                cleared.insert(at);
            }
        }
    }
    found.sort_by(|a, b| (a.kind, &a.value, a.first_use).cmp(&(b.kind, &b.value, b.first_use)));
    total.needed_lost = found.len() as u32;
    total.needed_lost_weight = found.iter().map(|a| a.weight).sum();
    total.atoms = found;
    total
}

/// What the request still shows of a pruned result.
fn kept_text(session: &Session, p: &PruneEvent, opts: &QualityOptions) -> String {
    let Some(Block::ToolResult { content, .. }) =
        session.messages.get(p.message_index).and_then(|m| m.blocks.get(p.block))
    else {
        return String::new();
    };
    let text = tool_result_text(content);
    match p.kind {
        PruneKind::Hard => String::new(),
        PruneKind::Cap => head_chars(&text, opts.cap_chars.unwrap_or(p.chars_after) as usize).to_string(),
        PruneKind::Soft => format!(
            "{}\n{}",
            head_chars(&text, opts.trim_head_chars as usize),
            tail_chars(&text, opts.trim_tail_chars as usize)
        ),
    }
}

/// Sorted, deduplicated indices as contiguous ranges.
fn ranges(indices: &[usize]) -> Vec<Range<usize>> {
    let mut v = indices.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<Range<usize>> = Vec::new();
    for i in v {
        match out.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

mod plan;
mod shared;

pub use plan::{QualityPlan, REFERENCES};
pub use shared::{SharedScores, score_trace_shared};
