//! Unit tests of the replay engine's no-progress back-off and of turns longer
//! than the window, with the hand-computed sizes of `tests.rs`.

use super::testkit::{SessionBuilder, session};
use super::tests::{Failing, bare, baseline_tokens, compacting, ctx, policy_tokens, run};
use super::*;
use crate::model::{Origin, Role};
use crate::policy::CutPoints;
use crate::presets;
use crate::summarize::{SummarizeError, Summary, SummaryRequest};
use crate::tokens::EstimatorKind;

/// Every attempt is either applied or no-progress, and the metrics and the
/// per-call events say the same.
pub(super) fn assert_counts_consistent(t: &SessionTrace) {
    assert!(t.compactions.iter().all(|c| c.applied != c.no_progress), "{:?}", t.compactions);
    let applied = t.compactions.iter().filter(|c| c.applied).count() as u64;
    assert_eq!(t.metrics.compactions, applied);
    assert_eq!(t.metrics.no_progress_compactions, t.compactions.len() as u64 - applied);
    for row in &t.calls {
        let here: Vec<&CompactionEvent> = t.compactions.iter().filter(|c| c.call == row.call).collect();
        assert_eq!(row.events.contains(&Event::Compact), here.iter().any(|c| c.applied), "call {}", row.call);
        assert_eq!(row.events.contains(&Event::NoProgress), here.iter().any(|c| c.no_progress), "call {}", row.call);
        let mut dedup = row.events.clone();
        dedup.dedup();
        assert_eq!(dedup, row.events, "call {}: each event once", row.call);
    }
}

/// The documented back-off: after the k-th no-progress attempt of a kind in a
/// row, the next attempt of that kind waits for `min_gain × 2^(k−1)` tokens of
/// history growth; an applied compaction resets both kinds.
pub(super) fn assert_spaced(t: &SessionTrace, min_gain: u64) {
    let mut last: [Option<(u64, u32)>; 2] = [None, None];
    for c in &t.compactions {
        let k = c.reason as usize;
        if let Some((h, streak)) = last[k] {
            let step = min_gain.max(1) << (streak - 1);
            assert!(c.tokens_before >= h + step, "call {}: {} < {h} + {step}", c.call, c.tokens_before);
        }
        if c.applied {
            last = [None, None];
        } else {
            last[k] = Some((c.tokens_before, last[k].map_or(1, |(_, s)| s + 1)));
        }
    }
}

/// One human prompt, then `rounds` tool calls each answered by `chars` of output
/// (the shape of most Claude Code sessions).
fn tool_loop(rounds: usize, chars: usize) -> Session {
    let mut b = SessionBuilder::new("loop").step("u400");
    for _ in 0..rounds {
        b = b.step("t1").step(&format!("r{chars}"));
    }
    b.step("a40").build()
}

/// A summarizer that ignores `max_tokens` and writes as much as it reads, the
/// way a verbose LLM can: every compaction frees almost nothing.
struct Echo;
impl Summarizer for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        let tokens: u64 = req.messages.iter().map(|m| req.estimator.message_tokens(m)).sum();
        let text = "x".repeat((tokens.saturating_sub(2) * 4) as usize);
        Ok(Summary { text, file_ops: req.file_ops.clone(), usage: Default::default(), fallback: None })
    }
}

#[test]
fn no_progress_attempts_double_their_spacing_when_the_gain_stays_small() {
    // The trigger fires at every call; each compaction would free 2 tokens.
    let p = compacting(|c| {
        c.trigger_tokens = 200;
        c.keep_recent_tokens = 300;
        c.cut_points = CutPoints::UserOrAssistant;
        c.min_gain_tokens = 100;
        c.summary_max_tokens = 100_000;
    });
    let s = tool_loop(60, 400);
    let t = replay_session(&s, &p, &ctx(&Echo)).unwrap();
    assert!(t.violations.is_empty(), "{:?}", t.violations);
    assert_eq!(t.metrics.compactions, 0);
    assert_counts_consistent(&t);
    assert_spaced(&t, 100);
    // ~6,500 tokens of growth: attempts at +100, +200, +400, … (6 of them), where
    // "grown by min_gain" alone would try at every other call (60 calls).
    let n = t.compactions.len();
    assert!((4..=7).contains(&n), "{n} attempts: {:?}", t.compactions.iter().map(|c| c.call).collect::<Vec<_>>());
}

/// Opal at a 32K window with a Claude Code-sized system prompt.
fn opal_32k(system: u64) -> Policy {
    let mut p = presets::get("opal").unwrap();
    p.context_window = 32_000;
    p.system_tokens = Some(system);
    p
}

#[test]
fn opal_splits_a_single_prompt_tool_loop_mid_turn_from_the_first_trigger() {
    // Trigger 25,600, keep 8,000; ~915 tokens per round.
    let s = tool_loop(40, 3_600);
    let t = run(&s, &opal_32k(14_000));
    assert_counts_consistent(&t);
    let first = &t.compactions[0];
    assert!(first.applied, "{first:?}");
    assert_eq!(first.reason, CompactionReason::Threshold);
    // No user message after the prompt: the cut lands mid-turn, on a tool call
    // (never between it and its result), and the turn prefix gets its summary.
    let kept = first.kept_from.unwrap();
    assert_eq!(s.messages[kept].role, Role::Assistant);
    assert!(first.split_turn && first.summary.starts_with("## Turn Context (split turn)"), "{}", first.summary);
    assert!(t.calls[..first.call].iter().all(|c| c.events.is_empty()));
    assert!(t.metrics.overflow_calls_policy < t.metrics.overflow_calls_baseline);

    // 17.5K of system prompt: the first trigger sees 8.3K of history, too
    // little beyond the 8K kept to free 1,000 with a summary. One no-progress
    // report, then a compaction as soon as the region can pay for it; at most
    // one report per compaction cycle after that.
    let t = run(&s, &opal_32k(17_500));
    assert_counts_consistent(&t);
    assert_spaced(&t, 1_000);
    let np: Vec<usize> = t.compactions.iter().filter(|c| c.no_progress).map(|c| c.call).collect();
    let applied: Vec<usize> = t.compactions.iter().filter(|c| c.applied).map(|c| c.call).collect();
    assert!(!np.is_empty() && !applied.is_empty(), "no-progress {np:?}, applied {applied:?}");
    assert!(np[0] < applied[0] && applied[0] <= np[0] + 3, "no-progress {np:?}, applied {applied:?}");
    for w in t.compactions.windows(2) {
        assert!(w[0].applied || w[1].applied, "two no-progress reports in one cycle: {:?}", (w[0].call, w[1].call));
    }
}

#[test]
fn other_cut_rules_compact_a_single_prompt_tool_loop_at_the_first_trigger() {
    let s = tool_loop(40, 3_600);
    for name in ["codex", "pi", "openclaw", "dotnet"] {
        let mut p = presets::get(name).unwrap();
        p.estimator = EstimatorKind::Chars4;
        p.context_window = 32_000;
        p.system_tokens = Some(14_000);
        p.compact.trigger_tokens = 25_600;
        p.compact.keep_recent_tokens = 8_000;
        p.compact.reserve_tokens = 6_400;
        p.prune.enabled = false;
        let t = run(&s, &p);
        assert_counts_consistent(&t);
        assert_spaced(&t, p.compact.min_gain_tokens);
        let first = &t.compactions[0];
        assert!(first.applied, "{name}: {first:?}");
        if let Some(k) = first.kept_from {
            // Mid-turn, never on a tool result.
            assert_ne!(s.messages[k].origin, Origin::ToolResult, "{name}");
            assert!(!s.messages[k].has_tool_results(), "{name}");
        }
        match name {
            "pi" | "openclaw" => assert!(first.split_turn, "{name}"),
            "codex" => assert_eq!(first.retained_user_messages, vec![0], "{name}"),
            _ => assert_eq!(first.kept_head, vec![0], "{name}"),
        }
        assert!(t.metrics.overflow_calls_policy < t.metrics.overflow_calls_baseline, "{name}");
    }
}

#[test]
fn a_system_prompt_that_nearly_fills_the_window_is_reported_once_per_back_off() {
    // 8a2518dd: 23.8K of system in a 32K window. The trigger (25.6K) fires with
    // 1.8K of history, far below the 8K kept, so threshold compactions cannot
    // progress; overflow recovery (keep 6.4K, forced) can once history passes
    // 8.2K.
    let s = tool_loop(40, 1_200);
    let t = run(&s, &opal_32k(23_800));
    assert_counts_consistent(&t);
    assert_spaced(&t, 1_000);
    // Once per compaction cycle: an overflow recovery, then the threshold
    // attempt that cannot replace anything (reported once, then backing off).
    let cycles: Vec<(usize, CompactionReason, bool)> =
        t.compactions.iter().map(|c| (c.call, c.reason, c.applied)).collect();
    assert!(cycles.iter().any(|c| c.1 == CompactionReason::Overflow && c.2), "{cycles:?}");
    for w in t.compactions.windows(2) {
        assert!(w[0].applied || w[1].applied, "{cycles:?}");
    }
    // The summary is bounded by what it replaces: no call costs more than the
    // baseline, and every applied compaction frees the minimum.
    for c in t.compactions.iter().filter(|c| c.applied) {
        assert!(c.tokens_before - c.tokens_after >= 1_000, "{c:?}");
    }
    for row in &t.calls {
        assert!(row.tokens_policy <= row.tokens_baseline, "{row:?}");
    }
    assert!(t.metrics.input_tokens_policy < t.metrics.input_tokens_baseline);
}

#[test]
fn a_summary_is_shrunk_to_what_its_region_frees() {
    // 1,000 tokens replaced at call 1, min gain 500: the summary gets at most
    // 500, though summary_max_tokens allows 4,000.
    let p = compacting(|c| {
        c.trigger_tokens = 1_000;
        c.keep_recent_tokens = 150;
        c.min_gain_tokens = 500;
        c.summary_max_tokens = 4_000;
        c.summarizer = crate::summarize::SummarizerKind::Extractive;
    });
    let t = run(&session("u3600 a400 u400 a400 u40 a40"), &p);
    let c = t.compactions.iter().find(|c| c.applied).unwrap();
    assert_eq!(c.replaced, vec![0, 1]);
    assert!(c.summary_tokens <= 500 && c.tokens_before - c.tokens_after >= 500, "{c:?}");
    assert_counts_consistent(&t);
    // A region that cannot free the minimum even with an empty summary is given
    // up without asking the summarizer.
    let mut q = p.clone();
    q.compact.min_gain_tokens = 5_000;
    let t = replay_session(&session("u3600 a400 u400 a400 u40 a40"), &q, &ctx(&Failing)).unwrap();
    assert!(t.compactions.iter().all(|c| c.no_progress && c.outcome == SummaryOutcome::None));
}

#[test]
fn threshold_and_overflow_compactions_at_one_call_are_two_compactions_one_event() {
    let mut p = compacting(|c| {
        c.trigger_tokens = 700;
        c.keep_recent_tokens = 600;
        c.overflow_keep_ratio = Some(0.2);
        c.summary_max_tokens = 40;
    });
    p.context_window = 1_000;
    p.system_tokens = Some(500);
    // Call 3: the threshold cut keeps 600 (1,140 with the system prompt, over
    // the window), then overflow recovery keeps 200.
    let t = run(&session("u400 a400 u400 a400 u400 a400 u400 a400 u400 a40"), &p);
    let call = t.compactions.iter().find(|c| c.reason == CompactionReason::Overflow && c.applied).unwrap().call;
    let here: Vec<&CompactionEvent> = t.compactions.iter().filter(|c| c.call == call).collect();
    assert_eq!(
        here.iter().map(|c| (c.reason, c.applied)).collect::<Vec<_>>(),
        [(CompactionReason::Threshold, true), (CompactionReason::Overflow, true)]
    );
    assert_eq!(t.calls[call].events.iter().filter(|e| **e == Event::Compact).count(), 1);
    assert_eq!(t.metrics.compactions, 2);
    assert_counts_consistent(&t);
}

// ------------------------------------------------ calibration shares per message

#[test]
fn a_calibrated_gap_leaves_the_request_with_the_messages_it_came_from() {
    // A tool result carries 5,000 tokens the log does not show (the usage after
    // it jumps): the baseline and an idle policy carry them for good, a policy
    // that replaces that result sheds them, and its trigger then stays quiet
    // instead of firing on a history with nothing left to replace.
    let mut b = SessionBuilder::new("s").step("u400").step("t1").usage(110);
    b = b.step("r400").step("t1").usage(5_220);
    let mut est = 220;
    for _ in 0..8 {
        b = b.step("r400").step("t1");
        est += 110;
        b = b.usage(est + 5_000);
    }
    let s = b.step("r400").step("a40").build();
    let mut p = compacting(|c| {
        c.trigger_tokens = 5_600;
        c.keep_recent_tokens = 300;
        c.cut_points = CutPoints::UserOrAssistant;
        c.min_gain_tokens = 100;
    });
    p.estimator = EstimatorKind::Calibrated;
    let mut idle = p.clone();
    idle.compact.enabled = false;
    let t = run(&s, &idle);
    assert_eq!(policy_tokens(&t), baseline_tokens(&t));
    assert!(t.calls[2].tokens_policy > 5_000);

    let t = run(&s, &p);
    assert_counts_consistent(&t);
    let first = &t.compactions[0];
    assert!(first.applied && first.replaced.contains(&2), "{first:?}");
    // The 5,000 went with the result: the request is back to its estimate.
    assert!(t.calls[first.call].tokens_policy < 1_000, "{:?}", t.calls[first.call]);
    assert_eq!(t.compactions.len(), 1, "{:?}", t.compactions);
    assert!(t.calls.iter().all(|c| !c.events.contains(&Event::NoProgress)));
}

#[test]
fn calibrated_shares_follow_the_agent_context_across_its_own_compactions() {
    // Messages: 0 u400, 1 a4 (call 0), 2 u400, 3 a400 (call 1), 4 the agent's
    // summary (inserted, keeps 2), 5 u400, 6 a40 (call 2), 7 a40 (call 3).
    let s = SessionBuilder::new("s")
        .step("u400")
        .step("a4")
        // 100 estimated: the first gap (1) is the system prompt's, the residual.
        .usage(101)
        .step("u400")
        .step("a400")
        // 201 estimated, gap 200: 199 more, for messages 1 and 2 in proportion
        // to their estimates (1 and 100): 1 and 198.
        .usage(401)
        .step("u40")
        .step("u400")
        .step("a40")
        // The agent's context is now 2, 4, 5 (210 estimated), gap 298, of which
        // 1 + 198 is known: 99 for messages 4 (10) and 5 (100), 9 and 90.
        .usage(508)
        .step("a40")
        .recorded_compaction(2..3, 4..5)
        .build();
    let mut p = bare();
    p.estimator = EstimatorKind::Calibrated;
    let t = run(&s, &p);
    // The policy skips the agent's summary and holds 0, 1, 2, 3, 5, 6: their
    // estimates, their shares and the residual.
    let held = 100 + 1 + 100 + 100 + 100 + 10;
    assert_eq!(t.calls[3].tokens_policy, held + 1 + 198 + 90 + 1);
    // The baseline carries the whole gap on its own context (2, 4, 5, 6).
    assert_eq!(t.calls[3].tokens_baseline, 100 + 10 + 100 + 10 + 298);
}
