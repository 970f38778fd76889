//! Estimator accuracy against recorded usage (DESIGN.md §6): for every call with
//! a recorded prompt size, how far each estimator's estimate of that prompt is.
//!
//! Calls whose usage is a share of a sum recorded over several requests
//! (`codex exec --json`) are left out: the share is modelled, not measured.
//!
//! The estimated prompt of call *i* is the estimate of the context the agent sent:
//! every message before `calls[i].message_index`, except those it never sent
//! and what the agent's own recorded compactions replaced — after a compaction
//! the context is its `kept` messages, then its `inserted` ones, then
//! everything later; the tool outputs its
//! recorded clearings cleared count as what it sent instead. One forward walk over
//! the messages with cached per-message counts and prefix sums: O(n) per session.
//!
//! The system prompt and tool definitions are not in the logs, so raw estimates are
//! low by a roughly constant amount. The second figure calibrates that offset from
//! the first call with usage (its recorded prompt − its estimate, floored at 0) and
//! adds it to the later calls; the calibration call itself is left out of those
//! statistics, since its error is zero by construction.

use crate::model::{Format, Session, UsageProvenance};
use crate::tokens::{Calibrator, EstimatorKind, MessageTokens};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The estimates of one call with recorded usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallEstimate {
    /// Index into `Session::calls`.
    pub call: usize,
    /// `usage.prompt_tokens()`, > 0.
    pub recorded: u64,
    /// Σ per-message counts of the context (no system prompt).
    pub context: u64,
    /// The hybrid estimate (specs/002) over the same counts: last usage + counts
    /// added since, or `context` when no usage applies.
    pub hybrid: u64,
    /// Whether `hybrid` rests on recorded usage.
    pub anchored: bool,
}

/// Estimates for every call whose recorded prompt is non-empty, in message order.
/// `counts` are the per-message counts of one estimator for this session;
/// `cleared`, [`Session::clearing_deltas`] by the same estimator.
pub fn call_estimates(session: &Session, counts: &MessageTokens, cleared: &[Vec<(usize, u64)>]) -> Vec<CallEstimate> {
    let n = session.messages.len();
    let mut clearings: Vec<_> = session.recorded_clearings.iter().map(|c| c.at).zip(cleared).collect();
    clearings.sort_by_key(|c| c.0);
    let mut next_clearing = 0;
    // Where the last compaction took effect, and what it kept.
    let mut epoch: Option<(usize, &crate::model::RecordedCompaction)> = None;
    let mut compactions: Vec<_> = session.recorded_compactions.iter().filter(|c| c.inserted.start < n).collect();
    compactions.sort_by_key(|c| c.inserted.start);
    let mut calls: Vec<(usize, usize)> = session
        .calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.message_index < n)
        .map(|(i, c)| (c.message_index, i))
        .collect();
    calls.sort_unstable();

    // What a range of messages weighs in a request: those the agent never
    // sent weigh nothing (found by binary search, then those in the range).
    let unsent = session.unsent_indices();
    let sent_sum = |r: std::ops::Range<usize>| {
        let first = unsent.partition_point(|&i| i < r.start);
        let taken: u64 = unsent[first..].iter().take_while(|&&i| i < r.end).map(|&i| counts.get(i)).sum();
        counts.sum(r).saturating_sub(taken)
    };
    let mut out = Vec::new();
    let mut cal = Calibrator::new(0);
    let (mut next_compaction, mut next_call) = (0, 0);
    for k in 0..n {
        // A compaction takes effect where its inserted messages start: the context
        // becomes its kept messages; the inserted ones are added as the walk reaches
        // them. With several at one point the last one recorded wins.
        while let Some(c) = compactions.get(next_compaction).filter(|c| c.inserted.start <= k) {
            cal.reset(c.kept_ranges(k).into_iter().map(&sent_sum).sum());
            epoch = Some((c.inserted.start, c));
            next_compaction += 1;
        }
        // A clearing takes what it cleared off the messages the context still holds.
        while let Some(&(_, deltas)) = clearings.get(next_clearing).filter(|c| c.0 <= k) {
            for &(m, d) in deltas {
                if m < k && epoch.is_none_or(|(from, c)| m >= from || c.keeps(m)) {
                    cal.remove(d);
                }
            }
            next_clearing += 1;
        }
        let first_call = next_call;
        while calls.get(next_call).is_some_and(|&(m, _)| m == k) {
            let ci = calls[next_call].1;
            // A share of a sum the log records over several requests is a
            // model of that request, not a measure to score estimators on.
            if let Some(u) = &session.calls[ci].usage
                && u.prompt_tokens() > 0
                && u.provenance != UsageProvenance::OpenAiShare
            {
                out.push(CallEstimate {
                    call: ci,
                    recorded: u.prompt_tokens(),
                    context: cal.heuristic(),
                    hybrid: cal.estimate(),
                    anchored: cal.is_calibrated(),
                });
            }
            next_call += 1;
        }
        if !session.messages[k].unsent {
            cal.add(counts.get(k));
        }
        for &(_, ci) in &calls[first_call..next_call] {
            if let Some(u) = &session.calls[ci].usage {
                cal.observe(u);
            }
        }
    }
    out
}

/// Relative errors of one estimator over a set of calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorSamples {
    /// |est − recorded| / recorded, one per call.
    pub raw: Vec<f64>,
    /// (est − recorded) / recorded, one per call (negative = underestimate).
    pub signed: Vec<f64>,
    /// |est + offset − recorded| / recorded, calls after the calibration call.
    pub with_offset: Vec<f64>,
}

impl ErrorSamples {
    pub fn extend(&mut self, other: &ErrorSamples) {
        self.raw.extend_from_slice(&other.raw);
        self.signed.extend_from_slice(&other.signed);
        self.with_offset.extend_from_slice(&other.with_offset);
    }
}

/// Errors of `kind` on one session. `counts` must come from
/// `kind.message_counter()` (chars/4 counts for `calibrated`).
pub fn session_errors(session: &Session, kind: EstimatorKind, counts: &MessageTokens) -> ErrorSamples {
    let est = crate::tokens::estimator(kind.message_counter());
    let cleared = session.clearing_deltas(&|m| est.message_tokens(m));
    errors(&call_estimates(session, counts, &cleared), kind == EstimatorKind::Calibrated)
}

/// Errors of the plain (`hybrid = false`) or hybrid estimates.
pub fn errors(estimates: &[CallEstimate], hybrid: bool) -> ErrorSamples {
    let mut s = ErrorSamples::default();
    let est = |e: &CallEstimate| if hybrid { e.hybrid } else { e.context };
    let Some(first) = estimates.first() else { return s };
    // The first call never has earlier usage, so for `hybrid` this is the chars/4
    // offset too; it is only added where the estimate is not anchored on usage
    // (a recorded prompt already contains the system prompt).
    let offset = first.recorded.saturating_sub(est(first));
    for (i, e) in estimates.iter().enumerate() {
        let r = e.recorded as f64;
        let x = est(e) as f64;
        s.raw.push((x - r).abs() / r);
        s.signed.push((x - r) / r);
        if i > 0 {
            let x_off = if hybrid && e.anchored { x } else { x + offset as f64 };
            s.with_offset.push((x_off - r).abs() / r);
        }
    }
    s
}

/// One row of the accuracy table: an estimator on one format (`None` = all).
/// Ratios are rounded to 4 decimals (0.01 %), so the JSON is stable and exact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyRow {
    pub estimator: EstimatorKind,
    pub format: Option<Format>,
    /// Calls with a recorded prompt.
    pub calls: u64,
    pub median: Option<f64>,
    pub p90: Option<f64>,
    /// Median of the signed error: < 0 means the estimator underestimates.
    pub median_signed: Option<f64>,
    /// Calls in the offset statistics (all but each session's calibration call).
    pub calls_offset: u64,
    pub median_offset: Option<f64>,
    pub p90_offset: Option<f64>,
}

/// Collects samples per (estimator, format) across sessions, in any order.
#[derive(Debug, Clone, Default)]
pub struct AccuracyAccumulator {
    samples: BTreeMap<(EstimatorKind, Format), ErrorSamples>,
}

impl AccuracyAccumulator {
    pub fn add(&mut self, kind: EstimatorKind, format: Format, s: &ErrorSamples) {
        self.samples.entry((kind, format)).or_default().extend(s);
    }

    pub fn merge(&mut self, other: &AccuracyAccumulator) {
        for (&(k, f), s) in &other.samples {
            self.add(k, f, s);
        }
    }

    /// Rows per estimator (in [`EstimatorKind::ALL`] order): one per format with
    /// samples (format order), then the all-formats row. Formats and estimators
    /// without any sample get no row. Deterministic whatever the order samples were added in.
    pub fn rows(&self) -> Vec<AccuracyRow> {
        let mut rows = Vec::new();
        for kind in EstimatorKind::ALL {
            let mut all = ErrorSamples::default();
            let mut any = false;
            let formats = self.samples.range((kind, Format::ALL[0])..=(kind, Format::ALL[Format::ALL.len() - 1]));
            for ((_, f), s) in formats.filter(|(_, s)| !s.raw.is_empty()) {
                rows.push(row(kind, Some(*f), s));
                all.extend(s);
                any = true;
            }
            if any {
                rows.push(row(kind, None, &all));
            }
        }
        rows
    }
}

fn row(estimator: EstimatorKind, format: Option<Format>, s: &ErrorSamples) -> AccuracyRow {
    AccuracyRow {
        estimator,
        format,
        calls: s.raw.len() as u64,
        median: median(&s.raw),
        p90: p90(&s.raw),
        median_signed: median(&s.signed),
        calls_offset: s.with_offset.len() as u64,
        median_offset: median(&s.with_offset),
        p90_offset: p90(&s.with_offset),
    }
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Round to 4 decimals. `k / 1e4` parses back to the same f64 (both operands are
/// exact, the division is correctly rounded), so the JSON round-trips exactly.
fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// Median; the mean of the two middle values for an even count.
pub fn median(v: &[f64]) -> Option<f64> {
    crate::num::median(v).map(round4)
}

/// 90th percentile, nearest-rank: the smallest value with at least 90 % of the
/// samples at or below it.
pub fn p90(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let s = sorted(v);
    let rank = (s.len() * 9).div_ceil(10).max(1);
    Some(round4(s[rank - 1]))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::{
        Block, Call, CompactionKind, Message, Origin, RecordedCompaction, Role, Usage, UsageProvenance,
    };
    use crate::tokens::{Chars4, Estimator as _, estimator};
    use pretty_assertions::assert_eq;

    fn m(role: Role, origin: Origin, chars: usize) -> Message {
        Message::new(role, origin, vec![Block::text("x".repeat(chars))])
    }

    fn call(message_index: usize, prompt: Option<(u64, u64)>) -> Call {
        Call {
            message_index,
            model: None,
            usage: prompt.map(|(p, o)| Usage {
                uncached_input: p / 2,
                cache_read: p - p / 2,
                cache_write: 0,
                output: o,
                reasoning: 0,
                provenance: UsageProvenance::Anthropic,
            }),
            timestamp: None,
            response_id: None,
            fast: false,
        }
    }

    /// chars/4 counts: 100, 10 | 50, 10 | 20, 10 | 20, 10 | 30 (summary), 10, 10.
    /// Calls at 1, 3, 5 (no usage), 7, 10; a compaction at 8 keeping 6..8.
    pub(crate) fn session() -> Session {
        use Origin::*;
        use Role::*;
        let mut s = Session::new("s1", Format::ClaudeCode, "/logs/s1.jsonl");
        s.messages = vec![
            m(User, Human, 400),
            m(Assistant, Model, 40),
            m(User, ToolResult, 200),
            m(Assistant, Model, 40),
            m(User, Human, 80),
            m(Assistant, Model, 40),
            m(User, Human, 80),
            m(Assistant, Model, 40),
            m(User, CompactSummary, 120),
            m(User, Human, 40),
            m(Assistant, Model, 40),
        ];
        s.calls = vec![
            call(1, Some((150, 10))),
            call(3, Some((240, 12))),
            call(5, None),
            call(7, Some((300, 5))),
            call(10, Some((100, 7))),
        ];
        s.recorded_compactions = vec![RecordedCompaction {
            kind: CompactionKind::ClaudeBoundary,
            source_line: 9,
            inserted: 8..9,
            kept: 6..8,
            head: 0..0,
            tokens_before: Some(305),
            trigger: Some("auto".into()),
        }];
        s
    }

    #[test]
    fn estimates_follow_recorded_compactions() {
        let s = session();
        let counts = MessageTokens::new(&s.messages, &Chars4);
        assert_eq!(counts.counts(), &[100, 10, 50, 10, 20, 10, 20, 10, 30, 10, 10]);
        let est = call_estimates(&s, &counts, &[]);
        let got: Vec<(usize, u64, u64, u64, bool)> =
            est.iter().map(|e| (e.call, e.recorded, e.context, e.hybrid, e.anchored)).collect();
        assert_eq!(
            got,
            vec![
                (0, 150, 100, 100, false),
                (1, 240, 160, 160 + 50, true), // anchor 150 + 10, + tool result 50
                (3, 300, 220, 252 + 50, true), // anchor 240 + 12, + 20 + 10 + 20
                (4, 100, 70, 70, false),       // kept 30 + summary 30 + 10; usage reset
            ]
        );
    }

    /// A share of a usage recorded over several requests is not scored, but
    /// still anchors the next estimate.
    #[test]
    fn a_shared_usage_is_not_scored() {
        let mut s = session();
        if let Some(u) = s.calls[1].usage.as_mut() {
            u.provenance = UsageProvenance::OpenAiShare;
        }
        let counts = MessageTokens::new(&s.messages, &Chars4);
        let est = call_estimates(&s, &counts, &[]);
        let got: Vec<(usize, u64, bool)> = est.iter().map(|e| (e.call, e.hybrid, e.anchored)).collect();
        assert_eq!(got, vec![(0, 100, false), (3, 252 + 50, true), (4, 70, false)]);
    }

    /// A tool output the agent cleared (a microcompact) is sent as its
    /// placeholder from the clearing on, until a compaction replaces the history.
    #[test]
    fn a_cleared_output_counts_as_its_placeholder_until_a_compaction() {
        let mut s = session();
        s.messages[2].blocks = vec![Block::ToolResult {
            tool_use_id: "t".into(),
            content: vec![Block::text("x".repeat(200))],
            is_error: None,
        }];
        s.recorded_clearings = vec![crate::model::RecordedClearing {
            source_line: 4,
            at: 3,
            blocks: vec![crate::model::ClearedBlock::new(2, 0, vec![Block::text("[cleared]")])],
            tokens_saved: None,
            trigger: None,
        }];
        let counts = MessageTokens::new(&s.messages, &Chars4);
        let cleared = s.clearing_deltas(&|m| Chars4.message_tokens(m));
        assert_eq!(cleared, [vec![(2, 50 - 3)]]);
        let got: Vec<(usize, u64, u64)> =
            call_estimates(&s, &counts, &cleared).iter().map(|e| (e.call, e.context, e.hybrid)).collect();
        assert_eq!(got, vec![(0, 100, 100), (1, 160 - 47, 160 + 50 - 47), (3, 220 - 47, 252 + 50), (4, 70, 70)]);
        // `session_errors` counts the clearing with the estimator it is given.
        let whole = session_errors(&session(), EstimatorKind::Chars4, &counts);
        assert_ne!(session_errors(&s, EstimatorKind::Chars4, &counts), whole);
    }

    /// A compaction that also keeps the session's start (Cline's first
    /// exchange) starts the context from both kept runs.
    #[test]
    fn a_kept_head_counts_in_the_context_after_a_compaction() {
        let mut s = session();
        s.recorded_compactions[0].head = 0..2;
        let counts = MessageTokens::new(&s.messages, &Chars4);
        let est = call_estimates(&s, &counts, &[]);
        let last = est.last().map(|e| (e.call, e.context));
        // head 100 + 10, kept 30, summary 30, then 10.
        assert_eq!(last, Some((4, 180)));
    }

    #[test]
    fn median_and_p90_exact() {
        let s = session();
        let counts = MessageTokens::new(&s.messages, estimator(EstimatorKind::Chars4));
        let mut acc = AccuracyAccumulator::default();
        for kind in [EstimatorKind::Chars4, EstimatorKind::Calibrated] {
            acc.add(kind, s.format, &session_errors(&s, kind, &counts));
        }
        let rows = acc.rows();
        // chars4: raw errors 50/150, 80/240, 80/300, 30/100; offset 50 from call 0:
        // 30/240, 30/300, 20/100.
        let chars4 = AccuracyRow {
            estimator: EstimatorKind::Chars4,
            format: Some(Format::ClaudeCode),
            calls: 4,
            median: Some(0.3167),
            p90: Some(0.3333),
            median_signed: Some(-0.3167),
            calls_offset: 3,
            median_offset: Some(0.125),
            p90_offset: Some(0.2),
        };
        // calibrated: 50/150, 30/240, 2/300, 30/100; the offset only applies where
        // not anchored: 30/240, 2/300, 20/100.
        let calibrated = AccuracyRow {
            estimator: EstimatorKind::Calibrated,
            format: Some(Format::ClaudeCode),
            calls: 4,
            median: Some(0.2125),
            p90: Some(0.3333),
            median_signed: Some(-0.2125),
            calls_offset: 3,
            median_offset: Some(0.125),
            p90_offset: Some(0.2),
        };
        assert_eq!(
            rows,
            vec![
                chars4.clone(),
                AccuracyRow { format: None, ..chars4 },
                calibrated.clone(),
                AccuracyRow { format: None, ..calibrated }
            ]
        );
    }

    #[test]
    fn stats() {
        assert_eq!(median(&[]), None);
        assert_eq!(p90(&[]), None);
        assert_eq!(median(&[0.3, 0.1, 0.2]), Some(0.2));
        assert_eq!(median(&[0.4, 0.1, 0.2, 0.3]), Some(0.25));
        assert_eq!(p90(&[0.5]), Some(0.5));
        let ten: Vec<f64> = (1..=10).map(|i| i as f64 / 10.0).collect();
        assert_eq!(p90(&ten), Some(0.9));
        let eleven: Vec<f64> = (1..=11).map(|i| i as f64 / 10.0).collect();
        assert_eq!(p90(&eleven), Some(1.0)); // rank ceil(9.9) = 10
    }

    #[test]
    fn no_usage_no_samples() {
        let mut s = session();
        for c in &mut s.calls {
            c.usage = None;
        }
        let counts = MessageTokens::new(&s.messages, &Chars4);
        assert_eq!(session_errors(&s, EstimatorKind::Chars4, &counts), ErrorSamples::default());
        let mut acc = AccuracyAccumulator::default();
        acc.add(EstimatorKind::Chars4, s.format, &ErrorSamples::default());
        assert_eq!(acc.rows(), vec![]);
        // One call with usage: raw statistics, but nothing left for the offset ones.
        let one = ErrorSamples { raw: vec![0.5], signed: vec![-0.5], with_offset: vec![] };
        acc.add(EstimatorKind::O200k, Format::Codex, &one);
        let rows = acc.rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].median, rows[0].p90, rows[0].calls_offset, rows[0].median_offset),
            (Some(0.5), Some(0.5), 0, None)
        );
    }
}
