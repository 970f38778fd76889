//! The replay engine (DESIGN.md §3): each session, call by call, through a policy.
//!
//! For every recorded call `i` the engine
//! 1. appends to the policy's `history` the source messages that arrived since the
//!    previous call (messages a recorded compaction inserted are skipped: the
//!    policy applies its own rules to the full history),
//! 2. runs Layer 2 — compaction when the trigger fires on the estimated request
//!    (with `compact.measure = "view"` the trigger sees the pruned request, as
//!    agents that read the last usage do, so Layer 1 advances first),
//! 3. runs Layer 1 — pruning of tool results in the request view,
//! 4. records `tokens_baseline`, `tokens_policy`, `tokens_recorded` and events,
//! 5. appends the recorded assistant message (outputs are taken as recorded).
//!
//! Three series per call, all in the run's meter ([`Meter`], the same for
//! every policy; the policy's own estimator only decides):
//! - **baseline**: what the agent actually sent — the full history, following the
//!   agent's own recorded compactions (after one: kept + inserted + later); with
//!   the `recorded` meter, a call's recorded usage where it has one;
//! - **recorded**: `usage.prompt_tokens()` when the log has it;
//! - **policy**: what the policy would have sent.
//!
//! The engine keeps its totals twice: in the policy's estimator (with the
//! `calibrated` estimator, the gap between the last recorded usage and the
//! estimate, spread over the messages that produced it, pi/Opal) for its
//! decisions, and in the meter for the rows. The meter's calibration also
//! knows the usage of the call it measures, so a request the policy left as
//! the agent sent it measures exactly as recorded; replacing a message drops
//! its share of the gap in both.
//!
//! Each row also carries the tokens of the request equal to the start of the
//! previous request (`prefix_*`), for the prompt-cache cost model.
//!
//! Cost is O(n) per session: per-message token counts are computed once (and can be
//! shared between policies), a tool result's pruning state only moves forward
//! (kept → capped → trimmed → cleared) behind monotone pointers, a pruned message
//! is re-estimated once per transition batch, totals are kept incrementally, and a
//! compaction costs what it replaces (plus, for a recent-tokens cut, the walk back
//! over what it keeps, and for `merge_first` the first message). The cache prefix
//! adds O(log n) per change. The engine does no I/O and never prints.

mod agent_summaries;
#[cfg(test)]
mod agent_summaries_tests;
#[cfg(test)]
mod batch_tests;
#[cfg(test)]
mod clearing_tests;
mod compact;
mod engine;
#[cfg(test)]
mod fork_tests;
#[cfg(test)]
mod gate_tests;
#[cfg(test)]
mod linear_tests;
#[cfg(test)]
mod meter_tests;
#[cfg(test)]
mod no_progress_tests;
#[cfg(test)]
mod proptests;
mod prune;
mod resolve;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
#[cfg(test)]
mod tests;
mod totals;
#[cfg(test)]
mod unsent_tests;
mod usage_gap;
mod verify;
pub use agent_summaries::{AgentSummaryRequest, priced as agent_summary_priced, unpriced as agent_summary_unpriced};
use usage_gap::{Baseline, Calibration, Units};

use crate::invariants::Violation;
use crate::model::{Block, Message, Session, WindowSource};
use crate::policy::{Policy, PolicyError};
use crate::read::MAX_TOKENS;
use crate::summarize::{Summarizer, SummarizerUsage};
use crate::text::filetrack::{FileOpKind, FileOps};
use crate::tokens::{Estimator, EstimatorKind, Meter};
use serde::{Deserialize, Serialize};

pub use resolve::{BuiltinResolver, EveryEstimatorResolver, Resolver, estimator_name};

/// The window of a session nothing says more about (`context_window = "auto"`).
pub const DEFAULT_WINDOW: u64 = 200_000;

/// Options of a replay that are not part of the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayOptions {
    /// Check the invariants (DESIGN.md §3) on every call's view. O(history) per
    /// call: for tests and `replay --check-invariants`.
    pub check_invariants: bool,
    /// Debug check: recompute the token totals from scratch at every call and
    /// report any difference with the incremental ones. O(history) per call.
    pub verify_totals: bool,
    /// Build the final compacted transcript.
    pub keep_transcript: bool,
    /// What the reported sizes are measured with: one per run, whatever each
    /// policy's estimator (see [`Meter`]).
    pub meter: Meter,
}

impl Default for ReplayOptions {
    fn default() -> ReplayOptions {
        ReplayOptions { check_invariants: false, verify_totals: false, keep_transcript: true, meter: Meter::Recorded }
    }
}

/// What one replay needs besides the session and the policy.
pub struct ReplayContext<'a> {
    /// The estimator of `policy.estimator` (for `calibrated`: its base estimator).
    pub estimator: &'a dyn Estimator,
    /// The summarizer of `policy.compact.summarizer`.
    pub summarizer: &'a dyn Summarizer,
    /// Per-message token counts of this session by this estimator, when already
    /// computed (shared across policies); computed here otherwise.
    pub message_tokens: Option<&'a [u64]>,
    /// Per-message counts of the meter's counter (`options.meter`), when
    /// already computed; computed here otherwise.
    pub meter_tokens: Option<&'a [u64]>,
    /// What every replay reads alike from this session's messages, when
    /// already made ([`SessionFacts::of`], shared by a sweep's points);
    /// read from the messages otherwise.
    pub facts: Option<&'a SessionFacts>,
    pub options: ReplayOptions,
}

/// What every replay of a session computes alike from its messages, for a
/// caller that replays it many times (the points of a sweep, the policies of
/// `compare`): made once instead of at every replay. Counting the characters
/// of every tool result and parsing every file tool's arguments were 4 % of a
/// 72-point sweep.
#[derive(Debug, Clone, Default)]
pub struct SessionFacts {
    /// Per message: the character count of each tool result, in block order.
    result_chars: Vec<Box<[u64]>>,
    /// Per message: the file operations of its tool calls, in order.
    file_ops: Vec<Box<[(FileOpKind, String)]>>,
}

impl SessionFacts {
    pub fn of(session: &Session) -> SessionFacts {
        let result_chars = session
            .messages
            .iter()
            .map(|m| {
                m.blocks
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolResult { content, .. } => Some(engine::result_chars(content)),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let file_ops = session.messages.iter().map(|m| crate::text::filetrack::message_file_ops(m).collect()).collect();
        SessionFacts { result_chars, file_ops }
    }

    /// Messages described.
    pub fn len(&self) -> usize {
        self.result_chars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.result_chars.is_empty()
    }

    /// Characters of the `k`-th tool result of message `i`.
    pub(crate) fn result_chars(&self, i: usize, k: usize) -> Option<u64> {
        self.result_chars.get(i)?.get(k).copied()
    }

    /// File operations of message `i`'s tool calls.
    pub(crate) fn file_ops(&self, i: usize) -> Option<&[(FileOpKind, String)]> {
        self.file_ops.get(i).map(|v| &**v)
    }
}

/// Why a replay could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplayError {
    #[error("invalid policy: {0}")]
    Policy(#[from] PolicyError),
    #[error("estimator `{0}` is not available")]
    Estimator(String),
    #[error("summarizer `{0}` is not available")]
    Summarizer(String),
    #[error("call {call}: message index {index} is out of range ({len} messages)")]
    BadCall { call: usize, index: usize, len: usize },
    #[error("message token counts do not match the session ({got} for {want} messages)")]
    TokenCache { got: usize, want: usize },
    #[error("meter token counts do not match the session ({got} for {want} messages)")]
    MeterCache { got: usize, want: usize },
    /// Ctrl-C (see `crate::interrupt`): the replay stopped before its end.
    #[error("interrupted")]
    Interrupted,
}

/// Where `system_tokens` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemTokensSource {
    /// Set by the policy.
    Policy,
    /// max(0, first recorded usage − estimate of the messages at that call).
    Calibrated,
    /// No setting and no recorded usage.
    Zero,
}

/// Something that happened at a call; each kind at most once per call (how many
/// compactions a call had is in `SessionTrace::compactions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// A compaction was applied (a split turn's history and turn-prefix
    /// summaries are one compaction).
    Compact,
    /// A compaction was attempted and not applied: it would have freed less than
    /// `min_gain_tokens` (or nothing could be replaced). The policy then backs off.
    NoProgress,
    PruneSoft,
    PruneHard,
    Flush,
    OverflowBaseline,
    OverflowPolicy,
}

/// One row per recorded call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRow {
    /// Index into `Session::calls`.
    pub call: usize,
    /// Index of the assistant message the call produced.
    pub message_index: usize,
    pub timestamp: Option<i64>,
    pub tokens_baseline: u64,
    pub tokens_policy: u64,
    pub tokens_recorded: Option<u64>,
    /// Tool results newly capped or soft-trimmed / hard-cleared at this call.
    pub pruned_soft: u32,
    pub pruned_hard: u32,
    /// Tokens of this request identical to the start of the previous request,
    /// system prompt included (0 at the first call): what a prompt cache could
    /// serve. Whether the cache is still warm (TTL) is for the cost model to
    /// decide from the timestamps. Pruning or compaction that rewrites early
    /// messages shrinks it: the "sheds tokens but costs more" effect.
    pub prefix_baseline: u64,
    pub prefix_policy: u64,
    pub events: Vec<Event>,
}

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionReason {
    /// The trigger fired.
    Threshold,
    /// The request still exceeded the window (overflow recovery, specs/002).
    Overflow,
}

/// How the summary was produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryOutcome {
    /// By the policy's summarizer.
    Summarizer,
    /// The summarizer failed; the fallback summarizer wrote it.
    Fallback,
    /// The summarizer failed; the messages were dropped without a summary.
    Dropped,
    /// No summary was needed or produced (nothing to compact, or skipped).
    None,
}

/// One compaction (attempted or applied). For quality metrics: P = `replaced`
/// (+ the previous summary when `replaced_previous_summary`), S = `summary`,
/// T = `kept_head` + `retained_user_messages` + source messages from `kept_from` on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionEvent {
    pub call: usize,
    pub reason: CompactionReason,
    /// The size the trigger saw.
    pub measured_tokens: u64,
    /// Estimated history before / after (equal when not applied).
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// Source message indices replaced, in order.
    pub replaced: Vec<usize>,
    pub replaced_previous_summary: bool,
    /// Source indices kept verbatim before the summary (first message, initial context).
    pub kept_head: Vec<usize>,
    /// Source indices of user messages re-inserted verbatim (Codex).
    pub retained_user_messages: Vec<usize>,
    /// First source message kept after the summary (None: nothing kept).
    pub kept_from: Option<usize>,
    /// The cut split a turn; its prefix got a separate summary (specs/002).
    pub split_turn: bool,
    /// The summary text as the summarizer wrote it (before the placement template).
    pub summary: String,
    pub summary_tokens: u64,
    pub summarizer: String,
    pub outcome: SummaryOutcome,
    pub file_ops: FileOps,
    pub summarizer_usage: SummarizerUsage,
    /// Why the policy's summarizer did not write the summary (`outcome` is
    /// `Fallback` or `Dropped`), as it said: a program's exit status and
    /// stderr, an LLM's last error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
    /// The history was rewritten; it freed at least `min_gain_tokens`.
    pub applied: bool,
    /// Not applied: it would have freed less than `min_gain_tokens` (or nothing
    /// could be replaced, or the summarizer gave up). Always `!applied`; the
    /// policy backs off (see `Event::NoProgress`).
    pub no_progress: bool,
}

/// What pruning did to one tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PruneKind {
    /// Truncated at ingestion (`cap_chars`).
    Cap,
    Soft,
    Hard,
}

/// One pruning transition of one tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PruneEvent {
    pub call: usize,
    /// Source message index of the tool-result message.
    pub message_index: usize,
    pub block: usize,
    pub tool_use_id: String,
    pub kind: PruneKind,
    /// Characters of the original result, before and after this transition.
    pub original_chars: u64,
    pub chars_before: u64,
    pub chars_after: u64,
}

/// An invariant violation found while replaying (with `check_invariants`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallViolation {
    pub call: usize,
    pub violation: Violation,
}

/// Per-session totals of one replay (DESIGN.md §6).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMetrics {
    pub calls: u64,
    pub calls_with_usage: u64,
    /// Σ over calls: what is billed, since each call re-sends its context.
    pub input_tokens_baseline: u64,
    pub input_tokens_policy: u64,
    pub input_tokens_recorded: u64,
    /// (baseline − policy) / baseline × 100.
    pub savings_pct: f64,
    pub peak_baseline: u64,
    pub peak_policy: u64,
    pub overflow_calls_baseline: u64,
    pub overflow_calls_policy: u64,
    /// Applied compactions (a threshold compaction and an overflow recovery at
    /// the same call are two).
    pub compactions: u64,
    /// Attempts that were not applied because they would have freed less than
    /// `min_gain_tokens`; disjoint from `compactions`.
    pub no_progress_compactions: u64,
    pub pruned_soft: u64,
    pub pruned_hard: u64,
    pub pruned_chars_freed: u64,
    /// Σ over calls of the cacheable prefix (see `CallRow::prefix_policy`).
    pub prefix_tokens_baseline: u64,
    pub prefix_tokens_policy: u64,
    pub flush_points: u64,
    pub summarizer_tokens: u64,
    /// Tokens (input and output) of the agent's own summary requests
    /// (`SessionTrace::agent_summaries`): the baseline's, as
    /// `summarizer_tokens` are the policy's.
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub agent_summary_tokens: u64,
    /// baseline (with the agent's summary requests) − policy − summarizer tokens.
    pub net_savings_tokens: i64,
}

/// Everything one replay produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionTrace {
    pub session_id: String,
    pub policy: String,
    pub estimator: EstimatorKind,
    /// The window this replay used (overflows are counted against it), and
    /// where it came from.
    pub context_window: u64,
    pub window_source: WindowSource,
    pub system_tokens: u64,
    pub system_tokens_source: SystemTokensSource,
    pub calls: Vec<CallRow>,
    pub compactions: Vec<CompactionEvent>,
    pub prunes: Vec<PruneEvent>,
    /// The history at the end (summaries marked `Origin::CompactSummary`),
    /// including messages after the last call.
    pub transcript: Vec<Message>,
    /// Beside each transcript message, the index of the session message it
    /// is, unchanged (not pruned, not built by the replay): a writer of
    /// several policies' transcripts serializes such a message once. Empty,
    /// or `None` throughout, says nothing is known, never that it differs.
    pub transcript_sources: Vec<Option<u32>>,
    pub metrics: SessionMetrics,
    pub violations: Vec<CallViolation>,
    /// The requests that wrote the summaries of the agent's own compactions
    /// (Claude Code's): sent by the baseline, not by a policy replay.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_summaries: Vec<AgentSummaryRequest>,
}

/// Per-message token counts of a session (one estimator call per message).
pub fn count_message_tokens(session: &Session, estimator: &dyn Estimator) -> Vec<u64> {
    session.messages.iter().map(|m| estimator.message_tokens(m)).collect()
}

/// Replay one session through one policy.
pub fn replay_session(
    session: &Session,
    policy: &Policy,
    ctx: &ReplayContext<'_>,
) -> Result<SessionTrace, ReplayError> {
    policy.validate()?;
    // `context_window = "auto"`: the window found for this session after
    // reading (`crate::cost::WindowTable::resolve`), else the log's record,
    // else 200K.
    let resolved;
    let (policy, window_source) = if policy.window_is_auto() {
        let (tokens, source) = match (&session.meta.window, session.meta.context_window) {
            (Some(w), _) => (w.tokens, w.source),
            (None, Some(w)) => (w, WindowSource::Log),
            (None, None) => (DEFAULT_WINDOW, WindowSource::Default),
        };
        resolved = policy.with_window(tokens)?;
        (&resolved, source)
    } else {
        (policy, WindowSource::Policy)
    };
    let owned;
    let toks: &[u64] = match ctx.message_tokens {
        Some(t) if t.len() == session.messages.len() => t,
        Some(t) => return Err(ReplayError::TokenCache { got: t.len(), want: session.messages.len() }),
        None => {
            owned = count_message_tokens(session, ctx.estimator);
            &owned
        }
    };
    let mowned;
    let mtoks: &[u64] = match ctx.meter_tokens {
        Some(t) if t.len() == session.messages.len() => t,
        Some(t) => return Err(ReplayError::MeterCache { got: t.len(), want: session.messages.len() }),
        None => {
            mowned = count_message_tokens(session, ctx.options.meter.counter());
            &mowned
        }
    };
    let n = session.messages.len();
    for (ci, c) in session.calls.iter().enumerate() {
        if c.message_index >= n {
            return Err(ReplayError::BadCall { call: ci, index: c.message_index, len: n });
        }
    }
    let overhead = policy.message_overhead_tokens;
    // A message the agent never sent weighs nothing in any request.
    let sent = |i: usize| !session.messages[i].unsent;
    let est = |i: usize| if sent(i) { toks[i] + overhead } else { 0 };

    // Messages the agent's own compactions inserted: in the baseline, not in the
    // policy replay (nor what the agent had dropped of an inherited history).
    let hidden = session.hidden_from_policy();
    let baseline = Baseline::new(session, &est, &session.clearing_deltas(&|m| ctx.estimator.message_tokens(m)));
    let mest = |i: usize| if sent(i) { mtoks[i] } else { 0 };
    let meter = ctx.options.meter.counter();
    let mbaseline = Baseline::new(session, &mest, &session.clearing_deltas(&|m| meter.message_tokens(m)));
    let first_usage = session.calls.iter().find_map(|c| c.usage.map(|u| (c.message_index, u.prompt_tokens())));

    // System prompt: configured, or calibrated from the first recorded usage.
    // Clamped like every count from a log (`read::MAX_TOKENS`): the engine adds it
    // to every request size.
    let (system_tokens, system_tokens_source) = match policy.system_tokens {
        Some(t) => (t.min(MAX_TOKENS), SystemTokensSource::Policy),
        None => match first_usage {
            Some((m, recorded)) => {
                (recorded.min(MAX_TOKENS).saturating_sub(baseline.at(m)), SystemTokensSource::Calibrated)
            }
            None => (0, SystemTokensSource::Zero),
        },
    };
    let calibrated = policy.estimator == EstimatorKind::Calibrated;
    // The meter's system prompt: what the first recorded usage shows beyond
    // the meter's count of the messages, else the policy's setting, else 0.
    let msystem = match first_usage {
        Some((m, recorded)) => recorded.min(MAX_TOKENS).saturating_sub(mbaseline.at(m)),
        None => policy.system_tokens.map_or(0, |t| t.min(MAX_TOKENS)),
    };
    let metered = ctx.options.meter.uses_usage();

    let mut eng = engine::Engine::new(session, policy, ctx, toks, system_tokens, (mtoks, msystem), &hidden);
    let mut calibration = Calibration::new(n);
    let mut mcalibration = Calibration::new(n);
    let mut rows = Vec::with_capacity(session.calls.len());
    let mut violations = Vec::new();
    let mut cursor = 0usize;
    // Signed gap between the last recorded usage and the meter's baseline then.
    let mut mdrift: i64 = 0;
    let mut prev_ts: Option<i64> = None;
    let mut prev_call: Option<(usize, u64)> = None;
    let mut agent_summaries = Vec::new();
    let mut before: Option<agent_summaries::Before> = None;
    let sizes = agent_summaries::Sizes { session, baseline: &mbaseline, tokens: &mest, system: msystem };
    for (ci, call) in session.calls.iter().enumerate() {
        if crate::interrupt::requested() {
            return Err(ReplayError::Interrupted);
        }
        let m = call.message_index;
        eng.begin_call(ci);
        while cursor < m {
            if !hidden[cursor] {
                eng.append(cursor);
            }
            cursor += 1;
        }
        let base_est = system_tokens + baseline.at(m);
        let recorded = call.usage.map(|u| u.prompt_tokens().min(MAX_TOKENS));
        // The meter knows this call's own usage (a measure, not a decision):
        // its gap is spread before the call is measured, so a request the
        // policy left as the agent sent it measures exactly as recorded.
        let mbase = msystem + mbaseline.at(m);
        // The agent's own summary requests since the last call, sized with
        // the drift known before this call's usage.
        sizes.push_until(before, m, Some(ci), mdrift, &mut agent_summaries);
        if let (Some(r), true) = (recorded, metered) {
            mdrift = signed_diff(r, mbase);
            mcalibration.record(m, mdrift, &mbaseline, &mest, &mut eng, Units::Meter);
        }
        let ts = call.timestamp.or(session.messages[m].timestamp);
        let gap_ms = match (prev_ts, ts) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        let mut row = eng.call(ci, m, ts, gap_ms);
        row.tokens_baseline = match (recorded, metered) {
            (Some(r), true) => r,
            _ => apply_drift(mbase, mdrift),
        };
        // The agent's own compaction rewrote its context since the last call: only
        // the system prompt is still a prefix.
        row.prefix_baseline = match prev_call {
            None => 0,
            Some((pm, _)) if mbaseline.reset_between(pm, m) => msystem,
            // The agent cleared outputs since: the cache holds the context before the first.
            Some((pm, prev_est)) => mbaseline.cut_between(pm, m).map_or(prev_est, |cut| prev_est.min(msystem + cut)),
        };
        if row.prefix_baseline > 0 {
            row.prefix_baseline = apply_drift(row.prefix_baseline, mdrift).min(row.tokens_baseline);
        }
        prev_call = Some((m, mbase));
        before = Some(agent_summaries::Before { call: ci, message: m, size: mbase, timestamp: ts.or(prev_ts) });
        row.tokens_recorded = recorded;
        if row.tokens_baseline > policy.context_window {
            row.events.push(Event::OverflowBaseline);
        }
        if row.tokens_policy > policy.context_window {
            row.events.push(Event::OverflowPolicy);
        }
        row.events.sort_unstable();
        row.events.dedup();
        if ctx.options.check_invariants || ctx.options.verify_totals {
            violations
                .extend(eng.check(ci, ctx.options).into_iter().map(|violation| CallViolation { call: ci, violation }));
        }
        if let (Some(r), true) = (row.tokens_recorded, calibrated) {
            // The policy's calibration learns of this usage after the call, as
            // the agent does.
            calibration.record(m, signed_diff(r, base_est), &baseline, &est, &mut eng, Units::Policy);
        }
        rows.push(row);
        prev_ts = ts.or(prev_ts);
        if cursor == m {
            if !hidden[m] {
                eng.append(m);
            }
            cursor = m + 1;
        }
    }
    sizes.push_until(before, n, None, mdrift, &mut agent_summaries);
    eng.begin_call(session.calls.len());
    while cursor < n {
        if !hidden[cursor] {
            eng.append(cursor);
        }
        cursor += 1;
    }
    let out = eng.finish(ctx.options.keep_transcript);
    let metrics = metrics(&rows, &out.compactions, &out.prunes, &agent_summaries, policy.context_window);
    Ok(SessionTrace {
        session_id: session.id.clone(),
        policy: policy.name.clone(),
        estimator: policy.estimator,
        context_window: policy.context_window,
        window_source,
        system_tokens,
        system_tokens_source,
        calls: rows,
        compactions: out.compactions,
        prunes: out.prunes,
        transcript: out.transcript,
        transcript_sources: out.transcript_sources,
        metrics,
        violations,
        agent_summaries,
    })
}

/// `a - b` as an `i64`, saturating at its bounds.
fn signed_diff(a: u64, b: u64) -> i64 {
    let d = i128::from(a) - i128::from(b);
    d.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

fn apply_drift(v: u64, drift: i64) -> u64 {
    if drift >= 0 { v.saturating_add(drift as u64) } else { v.saturating_sub(drift.unsigned_abs()) }
}

fn metrics(
    rows: &[CallRow],
    comps: &[CompactionEvent],
    prunes: &[PruneEvent],
    agent: &[AgentSummaryRequest],
    window: u64,
) -> SessionMetrics {
    let mut m = SessionMetrics { calls: rows.len() as u64, ..SessionMetrics::default() };
    for r in rows {
        // Sums saturate: extreme recorded usage must not wrap (or panic).
        m.input_tokens_baseline = m.input_tokens_baseline.saturating_add(r.tokens_baseline);
        m.input_tokens_policy = m.input_tokens_policy.saturating_add(r.tokens_policy);
        if let Some(rec) = r.tokens_recorded {
            m.calls_with_usage += 1;
            m.input_tokens_recorded = m.input_tokens_recorded.saturating_add(rec);
        }
        m.peak_baseline = m.peak_baseline.max(r.tokens_baseline);
        m.peak_policy = m.peak_policy.max(r.tokens_policy);
        m.overflow_calls_baseline += u64::from(r.tokens_baseline > window);
        m.overflow_calls_policy += u64::from(r.tokens_policy > window);
        m.flush_points += u64::from(r.events.contains(&Event::Flush));
        m.prefix_tokens_baseline = m.prefix_tokens_baseline.saturating_add(r.prefix_baseline);
        m.prefix_tokens_policy = m.prefix_tokens_policy.saturating_add(r.prefix_policy);
    }
    for c in comps {
        m.compactions += u64::from(c.applied);
        m.no_progress_compactions += u64::from(c.no_progress);
        m.summarizer_tokens = m.summarizer_tokens.saturating_add(c.summarizer_usage.total());
    }
    for p in prunes {
        match p.kind {
            PruneKind::Hard => m.pruned_hard += 1,
            PruneKind::Soft | PruneKind::Cap => m.pruned_soft += 1,
        }
        m.pruned_chars_freed = m.pruned_chars_freed.saturating_add(p.chars_before.saturating_sub(p.chars_after));
    }
    if m.input_tokens_baseline > 0 {
        m.savings_pct =
            (m.input_tokens_baseline as f64 - m.input_tokens_policy as f64) * 100.0 / m.input_tokens_baseline as f64;
    }
    m.agent_summary_tokens = agent.iter().fold(0u64, |n, r| n.saturating_add(r.tokens).saturating_add(r.output));
    m.net_savings_tokens = net_savings(
        m.input_tokens_baseline.saturating_add(m.agent_summary_tokens),
        m.input_tokens_policy,
        m.summarizer_tokens,
    );
    m
}

/// baseline − policy − summarizer tokens, saturating at the bounds of `i64`.
pub fn net_savings(baseline: u64, policy: u64, summarizer: u64) -> i64 {
    let d = i128::from(baseline) - i128::from(policy) - i128::from(summarizer);
    d.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}
