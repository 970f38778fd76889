//! Unit tests of the replay engine with hand-computed expectations. Sizes are
//! chosen so chars/4 is exact: a `u400` message is 100 tokens, `r8000` 2000.

use super::no_progress_tests::{assert_counts_consistent, assert_spaced};
use super::testkit::{SessionBuilder, filler, session};
use super::*;
use crate::model::{Block, Origin, Role};
use crate::policy::{AgeUnit, Compact, CutKind, CutPoints, Fallback, Flush, Measure, Placement, Prune, TriggerKind};
use crate::summarize::{Extractive, SummarizeError, Summary, SummaryRequest};
use crate::tokens::{Chars4, Estimator, EstimatorKind, Meter};
use serde_json::json;

pub(super) fn ctx<'a>(summarizer: &'a dyn Summarizer) -> ReplayContext<'a> {
    ReplayContext {
        estimator: &Chars4,
        summarizer,
        message_tokens: None,
        meter_tokens: None,
        facts: None,
        options: ReplayOptions {
            check_invariants: true,
            verify_totals: true,
            keep_transcript: true,
            ..ReplayOptions::default()
        },
    }
}

/// [`ctx`] with the policy's own estimator (chars/4 or per-block).
fn ctx_with(p: &Policy) -> ReplayContext<'static> {
    let estimator: &'static dyn Estimator = match p.estimator.message_counter() {
        EstimatorKind::PerBlock => &crate::tokens::PerBlock,
        _ => &Chars4,
    };
    ReplayContext { estimator, ..ctx(&Extractive) }
}

pub(super) fn run(s: &Session, p: &Policy) -> SessionTrace {
    let t = replay_session(s, p, &ctx(&Extractive)).unwrap();
    assert!(t.violations.is_empty(), "{}: {:?}", p.name, t.violations);
    t
}

/// A policy that does nothing: no system prompt, no overhead, chars/4.
pub(super) fn bare() -> Policy {
    Policy {
        name: "test".into(),
        source: String::new(),
        context_window: 1_000_000,
        max_output_tokens: 0,
        system_tokens: Some(0),
        estimator: EstimatorKind::Chars4,
        message_overhead_tokens: 0,
        prune: Prune::default(),
        compact: Compact::default(),
        flush: Flush::default(),
        check: Default::default(),
    }
}

pub(super) fn pruning(f: impl FnOnce(&mut Prune)) -> Policy {
    let mut p = bare();
    p.prune.enabled = true;
    f(&mut p.prune);
    p
}

pub(super) fn compacting(f: impl FnOnce(&mut Compact)) -> Policy {
    let mut p = bare();
    p.compact = Compact {
        enabled: true,
        trigger: TriggerKind::Tokens,
        trigger_tokens: 500,
        min_gain_tokens: 0,
        summary_max_tokens: 60,
        ..Compact::default()
    };
    f(&mut p.compact);
    p
}

pub(super) fn policy_tokens(t: &SessionTrace) -> Vec<u64> {
    t.calls.iter().map(|c| c.tokens_policy).collect()
}
pub(super) fn baseline_tokens(t: &SessionTrace) -> Vec<u64> {
    t.calls.iter().map(|c| c.tokens_baseline).collect()
}
fn text_of(m: &Message) -> String {
    m.blocks
        .iter()
        .map(|b| match b {
            Block::Text { text } => text.clone(),
            Block::ToolResult { content, .. } => crate::summarize::tool_result_text(content).into_owned(),
            _ => String::new(),
        })
        .collect()
}

// ---------------------------------------------------------------- baseline

#[test]
fn baseline_is_the_full_history_and_policy_equals_it_when_idle() {
    let t = run(&session("u400 a100 u400 a100"), &bare());
    assert_eq!(baseline_tokens(&t), vec![100, 225]);
    assert_eq!(policy_tokens(&t), vec![100, 225]);
    assert_eq!(t.metrics.input_tokens_baseline, 325);
    // Each request extends the previous one: all of it is a cacheable prefix.
    assert_eq!(
        t.calls.iter().map(|c| (c.prefix_baseline, c.prefix_policy)).collect::<Vec<_>>(),
        vec![(0, 0), (100, 100)]
    );
    assert_eq!(t.metrics.savings_pct, 0.0);
    assert_eq!(t.transcript.len(), 4);
}

/// u400 a100 u400 a100 [summary 40] u400 a100 (chars/4: 100, 25, 100, 25,
/// 10, 100, 25): the agent compacted before message 4, its summary, keeping
/// messages 2 and 3.
pub(super) fn compacted_once() -> Session {
    SessionBuilder::new("s")
        .human(filler(400, 0))
        .assistant(filler(100, 1))
        .human(filler(400, 2))
        .assistant(filler(100, 3))
        .human(filler(40, 4))
        .human(filler(400, 5))
        .assistant(filler(100, 6))
        .recorded_compaction(2..4, 4..5)
        .build()
}

#[test]
fn baseline_follows_recorded_compactions_and_policy_skips_inserted() {
    let s = compacted_once();
    let t = run(&s, &bare());
    // After the agent's compaction: kept (2,3) = 125 + inserted 10 + message 5 = 100.
    assert_eq!(baseline_tokens(&t), vec![100, 225, 235]);
    // The policy replays the full history without the inserted summary.
    assert_eq!(policy_tokens(&t), vec![100, 225, 350]);
    assert_eq!(t.transcript.len(), 6);
    // The agent's compaction rewrote its context: no cacheable prefix (system is 0).
    assert_eq!(t.calls[2].prefix_baseline, 0);
    assert_eq!(t.calls[2].prefix_policy, 225);
}

#[test]
fn system_tokens_calibrated_from_first_usage() {
    let s = SessionBuilder::new("s").human(filler(400, 0)).assistant("x").usage(1_000).build();
    let mut p = bare();
    p.system_tokens = None;
    let t = run(&s, &p);
    assert_eq!(t.system_tokens, 900);
    assert_eq!(t.system_tokens_source, SystemTokensSource::Calibrated);
    assert_eq!(t.calls[0].tokens_baseline, 1_000);
    assert_eq!(t.calls[0].tokens_recorded, Some(1_000));
    let t = run(&session("u400 a4"), &p);
    assert_eq!((t.system_tokens, t.system_tokens_source), (0, SystemTokensSource::Zero));
}

#[test]
fn calibrated_estimate_carries_the_last_usage_gap() {
    let s = SessionBuilder::new("s")
        .human(filler(400, 0))
        .assistant(filler(100, 1))
        .usage(150)
        .human(filler(400, 2))
        .assistant(filler(100, 3))
        .build();
    // The meter: call 0 is its recorded usage (150: a 50-token system prompt
    // beyond the 100 counted); call 1 is 50 + 225 counted + the gap of the
    // last usage (0). Whatever the policy's estimator, and the same for a
    // policy that changed nothing.
    for estimator in [EstimatorKind::Calibrated, EstimatorKind::Chars4, EstimatorKind::PerBlock] {
        let mut p = bare();
        p.estimator = estimator;
        let t = replay_session(&s, &p, &ctx_with(&p)).unwrap();
        assert_eq!(baseline_tokens(&t), vec![150, 275], "{estimator}");
        assert_eq!(policy_tokens(&t), vec![150, 275], "{estimator}");
    }
    // A meter that ignores usage counts chars/4 alone (system: the first
    // usage's gap).
    let mut p = bare();
    p.estimator = EstimatorKind::Calibrated;
    let opts = ReplayOptions { meter: Meter::Chars4, ..ReplayOptions::default() };
    let t = replay_session(&s, &p, &ReplayContext { options: opts, ..ctx_with(&p) }).unwrap();
    assert_eq!(baseline_tokens(&t), vec![150, 275]);
    let s2 = SessionBuilder::new("s").human(filler(400, 0)).assistant(filler(100, 1)).usage(90).build();
    let t = replay_session(&s2, &p, &ReplayContext { options: opts, ..ctx_with(&p) }).unwrap();
    assert_eq!((baseline_tokens(&t), t.calls[0].tokens_recorded), (vec![100], Some(90)));
}

#[test]
fn overflow_events_against_the_window() {
    let mut p = bare();
    p.context_window = 200;
    let t = run(&session("u400 a100 u400 a100"), &p);
    assert_eq!(t.calls[0].events, vec![]);
    assert_eq!(t.calls[1].events, vec![Event::OverflowBaseline, Event::OverflowPolicy]);
    assert_eq!((t.metrics.overflow_calls_baseline, t.metrics.overflow_calls_policy), (1, 1));
}

// ---------------------------------------------------------------- Layer 1

const NOUS_MARKER: &str = "\n\n--- trimmed (kept 1500 head + 1500 tail of 5000 chars) ---\n\n";

fn nous_soft() -> Policy {
    pruning(|p| {
        p.persist = true; // so the transcript shows what the view held
        p.keep_last = 2;
        p.soft_trim_chars = Some(4_000);
        p.head = 1_500;
        p.tail = 1_500;
    })
}

#[test]
fn soft_trim_keeps_head_and_tail_with_marker() {
    let s = session("u100 t1 r5000 t1 r5000 t1 r5000 a10");
    let t = run(&s, &nous_soft());
    // Call 3 sees 3 tool-result messages: the oldest (age 2) leaves keep_last = 2.
    assert_eq!(t.prunes.len(), 1);
    let e = &t.prunes[0];
    assert_eq!((e.call, e.message_index, e.kind), (3, 2, PruneKind::Soft));
    assert_eq!((e.chars_before, e.chars_after), (5_000, 3_000 + NOUS_MARKER.len() as u64));
    let original = text_of(&s.messages[2]);
    let want = format!("{}{NOUS_MARKER}{}", &original[..1_500], &original[3_500..]);
    assert_eq!(text_of(&t.transcript[2]), want);
    assert_eq!(t.calls[3].events, vec![Event::PruneSoft]);
    // 5000 chars = 1250 tokens became ceil(3060 / 4) = 765.
    let freed = 1_250 - (3_000 + NOUS_MARKER.len() as u64).div_ceil(4);
    assert_eq!(t.calls[3].tokens_baseline - t.calls[3].tokens_policy, freed);
    // The request now differs from message 2 on: the cache serves messages 0-1.
    let before: u64 = s.messages[..2].iter().map(|m| Chars4.message_tokens(m)).sum();
    assert_eq!(t.calls[3].prefix_policy, before);
    assert_eq!(t.calls[3].prefix_baseline, t.calls[2].tokens_baseline);
    // The other results and the user text are untouched.
    assert_eq!(t.transcript[4], s.messages[4]);
    assert_eq!(t.transcript[0], s.messages[0]);
}

#[test]
fn small_results_are_not_trimmed() {
    let t = run(&session("u100 t1 r3000 t1 r3000 t1 r3000 t1 r3000 a10"), &nous_soft());
    assert!(t.prunes.is_empty());
}

#[test]
fn hard_clear_by_age_in_tool_results() {
    let p = pruning(|p| {
        p.persist = true;
        p.keep_last = 1;
        p.hard_clear_after = Some(3);
        p.placeholder = "[gone]".into();
    });
    let t = run(&session("u100 t1 r800 t1 r800 t1 r800 t1 r800 a10"), &p);
    // Call 4 (the final answer) sees 4 results; the oldest has 3 newer ones.
    assert_eq!(t.prunes.len(), 1);
    assert_eq!((t.prunes[0].call, t.prunes[0].message_index, t.prunes[0].kind), (4, 2, PruneKind::Hard));
    assert_eq!(text_of(&t.transcript[2]), "[gone]");
    assert_eq!(t.calls[4].events, vec![Event::PruneHard]);
    assert_eq!(t.metrics.pruned_hard, 1);
    assert_eq!(t.metrics.pruned_chars_freed, 800 - 6);
}

#[test]
fn keep_last_protects_the_newest_results_whatever_their_size() {
    let p = pruning(|p| {
        p.keep_last = 2;
        p.hard_clear_after = Some(2);
    });
    let t = run(&session("u100 t1 r400 t1 r400 t1 r90000 t1 r90000 a10"), &p);
    let cleared: Vec<usize> = t.prunes.iter().map(|e| e.message_index).collect();
    assert_eq!(cleared, vec![2, 4]);
}

#[test]
fn images_and_protected_tools_are_skipped() {
    let p = pruning(|p| {
        p.keep_last = 1;
        p.soft_trim_chars = Some(1_000);
        p.head = 100;
        p.tail = 100;
        p.hard_clear_after = Some(2);
        p.skip_images = true;
        p.protect_tools = vec!["skill".into()];
    });
    let t = run(&session("u100 t1 r5000+img t1:skill r5000 t1 r5000 t1 r10 t1 r10 a10"), &p);
    let touched: Vec<usize> = t.prunes.iter().map(|e| e.message_index).collect();
    // 2 has an image, 4 is the protected `skill` tool: only 6 is trimmed, then cleared.
    assert_eq!(touched, vec![6, 6]);
    let mut p2 = p.clone();
    p2.prune.skip_images = false;
    p2.prune.protect_tools.clear();
    let t = run(&session("u100 t1 r5000+img t1:skill r5000 t1 r5000 t1 r10 t1 r10 a10"), &p2);
    // Soft-trim never touches an image result; hard-clear may when not skipped.
    let kinds: Vec<(usize, PruneKind)> = t.prunes.iter().map(|e| (e.message_index, e.kind)).collect();
    assert!(kinds.contains(&(2, PruneKind::Hard)) && !kinds.contains(&(2, PruneKind::Soft)), "{kinds:?}");
    assert!(kinds.contains(&(4, PruneKind::Soft)), "{kinds:?}");
}

#[test]
fn age_in_assistant_turns() {
    let p = pruning(|p| {
        p.age_unit = AgeUnit::AssistantTurns;
        p.keep_last = 3;
        p.soft_trim_chars = Some(4_000);
        p.head = 1_500;
        p.tail = 1_500;
    });
    let s = session("u10 t2 r5000,5000 a10 u10 a10 u10 a10 u10 a10");
    let t = run(&s, &p);
    // The results follow assistant #1; call 4 is the first with 3 newer assistants.
    assert_eq!(t.prunes.len(), 2);
    assert!(t.prunes.iter().all(|e| e.call == 4 && e.message_index == 2));
    // Counted in tool-result messages the same result never ages.
    let mut q = p.clone();
    q.prune.age_unit = AgeUnit::ToolResults;
    assert!(run(&s, &q).prunes.is_empty());
}

fn openclaw_like(min_chars: u64) -> Policy {
    let mut p = pruning(|p| {
        p.age_unit = AgeUnit::AssistantTurns;
        p.keep_last = 1;
        p.soft_trim_chars = Some(4_000);
        p.head = 1_500;
        p.tail = 1_500;
        p.soft_trim_ratio = Some(0.3);
        p.hard_clear_ratio = Some(0.5);
        p.min_prunable_tool_chars = min_chars;
        p.placeholder = "[Old tool result content cleared]".into();
    });
    p.context_window = 8_000;
    p
}

#[test]
fn openclaw_ratio_triggers() {
    let s = session("u100 t1 r10000 t1 r10000 t1 r10000 a10");
    let t = run(&s, &openclaw_like(1_000));
    let ev: Vec<(usize, usize, PruneKind)> = t.prunes.iter().map(|e| (e.call, e.message_index, e.kind)).collect();
    // Call 1: 2534/8000 < 0.3, and the only result is protected anyway.
    // Call 2: 0.63 ≥ 0.3 → soft-trim the eligible result; 0.41 < 0.5 → no clear.
    // Call 3: soft-trim the next; 0.51 ≥ 0.5 → clear the oldest, back under 0.5.
    assert_eq!(ev, vec![(2, 2, PruneKind::Soft), (3, 4, PruneKind::Soft), (3, 2, PruneKind::Hard)]);
    assert_eq!(t.calls[3].events, vec![Event::PruneSoft, Event::PruneHard]);
    // Below min_prunable_tool_chars nothing is cleared.
    let t = run(&s, &openclaw_like(100_000));
    assert!(t.prunes.iter().all(|e| e.kind == PruneKind::Soft));
}

#[test]
fn opencode_protect_and_minimum() {
    let s = session("u10 t1 r8000 t1 r8000 a10 u10 t1 r8000 a10 u10 a10");
    let p = pruning(|p| {
        p.persist = true;
        p.protect_tokens = Some(3_000);
        p.minimum_tokens = 1_000;
        p.skip_last_user_turns = 0;
        p.placeholder = "[cleared]".into();
    });
    let t = run(&s, &p);
    let ev: Vec<(usize, usize)> = t.prunes.iter().map(|e| (e.call, e.message_index)).collect();
    // Call 3 (turn 2): outside the current turn 4000 tokens, newest 3000 protected
    // (the 2000-token result at 4 fits, the one at 2 pushes past) → clear 2.
    // Call 5 (turn 3): 6000 outside; 8 and 4 fill past 3000 → clear 4.
    assert_eq!(ev, vec![(3, 2), (5, 4)]);
    assert_eq!(text_of(&t.transcript[2]), "[cleared]");
    let mut q = p.clone();
    q.prune.minimum_tokens = 3_000;
    let ev: Vec<(usize, usize)> = run(&s, &q).prunes.iter().map(|e| (e.call, e.message_index)).collect();
    // 2000 to free is not more than 3000: wait, then clear both together.
    assert_eq!(ev, vec![(5, 2), (5, 4)]);
}

#[test]
fn anthropic_clear_tool_uses() {
    let s = session("u10 t1 r8000 t1:Grep r8000 t1 r8000 a10");
    let p = pruning(|p| {
        p.clear_tool_uses.enabled = true;
        p.clear_tool_uses.trigger_tokens = 5_000;
        p.clear_tool_uses.keep = 1;
    });
    let t = run(&s, &p);
    let ev: Vec<(usize, usize)> = t.prunes.iter().map(|e| (e.call, e.message_index)).collect();
    // Call 2: ~4000 tokens, under the trigger. Call 3: over; all but the last use.
    assert_eq!(ev, vec![(3, 2), (3, 4)]);
    let mut q = p.clone();
    q.prune.clear_tool_uses.exclude_tools = vec!["grep".into()];
    let ev: Vec<usize> = run(&s, &q).prunes.iter().map(|e| e.message_index).collect();
    assert_eq!(ev, vec![2]);
    let mut q = p.clone();
    q.prune.clear_tool_uses.clear_at_least = 5_000;
    assert!(run(&s, &q).prunes.is_empty(), "4000 clearable < clear_at_least");
}

#[test]
fn cap_truncates_at_ingestion_even_when_protected() {
    let p = pruning(|p| {
        p.keep_last = 10;
        p.cap_chars = Some(1_000);
    });
    let t = run(&session("u10 t1 r5000 a10"), &p);
    assert_eq!(t.prunes.len(), 1);
    assert_eq!((t.prunes[0].call, t.prunes[0].kind), (1, PruneKind::Cap));
    assert_eq!(t.calls[1].events, vec![Event::PruneSoft]);
    assert!(t.calls[1].tokens_policy < t.calls[1].tokens_baseline);
}

#[test]
fn pruning_never_rewrites_history_unless_persisted() {
    let mut p = nous_soft();
    p.prune.persist = false;
    let s = session("u100 t1 r5000 t1 r5000 t1 r5000 a10");
    let t = run(&s, &p);
    assert_eq!(t.prunes.len(), 1);
    assert_eq!(t.transcript, s.messages);
}

// ---------------------------------------------------------------- Layer 2

#[test]
fn triggers_strict_inclusive_max_output_ratio_reserve() {
    let s = session("u400 a100 u400 a100 u400 a100");
    let first = |p: &Policy| run(&s, p).compactions.first().map(|c| c.call);
    // Sizes at the calls: 100, 225, 350.
    assert_eq!(first(&compacting(|c| c.trigger_tokens = 225)), Some(2));
    assert_eq!(
        first(&compacting(|c| {
            c.trigger_tokens = 225;
            c.inclusive = true;
        })),
        Some(1)
    );
    let mut p = compacting(|c| {
        c.trigger_tokens = 1_100;
        c.include_max_output = true;
    });
    p.max_output_tokens = 1_000;
    assert_eq!(first(&p), Some(1));
    let mut p = compacting(|c| {
        c.trigger = TriggerKind::Ratio;
        c.trigger_ratio = 0.3;
    });
    p.context_window = 1_000;
    assert_eq!(first(&p), Some(2));
    let mut p = compacting(|c| {
        c.trigger = TriggerKind::Reserve;
        c.reserve_tokens = 700;
    });
    p.context_window = 1_000;
    assert_eq!(first(&p), Some(2));
}

const TURNS: &str = "u400 a400 u400 a400 u400 a400 u400 a40";

#[test]
fn keep_recent_tokens_snaps_to_a_user_message() {
    // History at the last call: 7 messages of 100 tokens (700 > 500).
    let p = compacting(|c| c.keep_recent_tokens = 150);
    let t = run(&session(TURNS), &p);
    assert_eq!(t.compactions.len(), 1);
    let c = &t.compactions[0];
    assert_eq!(c.call, 3);
    assert!(c.applied && !c.no_progress);
    // 150 tokens back lands on assistant 5; the next user message is 6.
    assert_eq!(c.replaced, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(c.kept_from, Some(6));
    assert!(!c.split_turn);
    assert_eq!(t.transcript[0].origin, Origin::CompactSummary);
    assert_eq!(t.transcript[0].role, Role::User);
    assert_eq!(&t.transcript[1..], &session(TURNS).messages[6..]);
    assert_eq!(t.calls[3].tokens_policy, c.tokens_after);
    assert_eq!(c.tokens_before, 700);
    // A compaction rewrites the request from its start (no system prompt here).
    assert_eq!(t.calls[3].prefix_policy, 0);
    assert_eq!(t.calls[3].prefix_baseline, 500);
    assert_eq!(t.calls[3].events, vec![Event::Compact]);
}

#[test]
fn user_or_assistant_cut_points_and_split_turns() {
    let p = compacting(|c| {
        c.keep_recent_tokens = 150;
        c.cut_points = CutPoints::UserOrAssistant;
        c.split_turn_min_messages = Some(1);
        c.summary_max_tokens = 100;
    });
    let t = run(&session(TURNS), &p);
    let c = &t.compactions[0];
    assert_eq!(c.kept_from, Some(5));
    assert!(c.split_turn);
    assert!(c.summary.contains("## Turn Context (split turn)"), "{}", c.summary);
    assert!(c.summary.contains("## History Summary"));
    // Opal: a prefix shorter than 5 messages is a clean cut, one summary.
    let mut q = p.clone();
    q.compact.split_turn_min_messages = Some(5);
    let c = &run(&session(TURNS), &q).compactions[0];
    assert_eq!(c.kept_from, Some(5));
    assert!(!c.split_turn && !c.summary.contains("Turn Context"));
}

#[test]
fn cut_never_separates_a_tool_pair() {
    let p = compacting(|c| {
        c.trigger_tokens = 1_500;
        c.keep_recent_tokens = 1_000;
    });
    let t = run(&session("u400 t1 r4000 t1 r4000 a40"), &p);
    let c = &t.compactions[0];
    // 1000 tokens back is the last result; no user message after it, so the cut
    // falls back to its tool call.
    assert_eq!(c.replaced, vec![0, 1, 2]);
    assert_eq!(c.kept_from, Some(3));
}

#[test]
fn first_plus_tail_with_pair_safe_boundary_and_merge() {
    // Sizes: user/results 100, tool calls 9; 427 tokens before call 3, 536 before 4.
    let p = compacting(|c| {
        c.trigger_tokens = 440;
        c.cut = CutKind::FirstPlusTailMessages;
        c.keep_first_messages = 1;
        c.keep_tail_messages = 3;
        c.min_compact_messages = 2;
        c.placement = Placement::MergeFirst;
        c.summary_template = "\n\n[CONTEXT SUMMARY]\n{summary}\n[END CONTEXT SUMMARY]".into();
        c.ack_text = "Understood.".into();
        c.alternation = true;
    });
    let s = session("u400 t1 r400 t1 r400 t1 r400 t1 r400 a40");
    let t = run(&s, &p);
    let c = t.compactions.iter().find(|c| c.applied).unwrap();
    assert_eq!(c.call, 4);
    // Tail of 3 starts at a result (6): pulled back to its call (5).
    assert_eq!(c.replaced, vec![1, 2, 3, 4]);
    assert_eq!(c.kept_head, vec![0]);
    assert_eq!(c.kept_from, Some(5));
    let first = &t.transcript[0];
    assert_eq!(first.origin, Origin::CompactSummary);
    assert_eq!(first.blocks[0], s.messages[0].blocks[0]);
    assert!(matches!(&first.blocks[1], Block::Text { text } if text.starts_with("\n\n[CONTEXT SUMMARY]\n")));
    // The next kept message is an assistant: no acknowledgement needed.
    assert_eq!(t.transcript[1], s.messages[5]);

    // A user message next to the merged one needs the acknowledgement.
    let mut q = p.clone();
    q.compact.keep_tail_messages = 1;
    let t = run(&session(TURNS), &q);
    assert_eq!(t.transcript[1].role, Role::Assistant);
    assert_eq!(t.transcript[1].origin, Origin::Injected);
    assert_eq!(text_of(&t.transcript[1]), "Understood.");
}

#[test]
fn keep_recent_turns_and_system_placement() {
    let p = compacting(|c| {
        c.cut = CutKind::KeepRecentTurns;
        c.keep_recent_turns = 2;
        c.placement = Placement::System;
    });
    let t = run(&session(TURNS), &p);
    let c = &t.compactions[0];
    // Assistants at 1, 3, 5: keep the last two turns, from user 2.
    assert_eq!(c.replaced, vec![0, 1]);
    assert_eq!(c.kept_from, Some(2));
    assert_eq!(t.transcript[0].role, Role::System);
}

#[test]
fn whole_history_with_last_request_vibe() {
    let p = compacting(|c| {
        c.trigger_tokens = 200;
        c.cut = CutKind::WholeHistory;
        c.append_last_user_request = true;
        c.summary_max_tokens = 200;
    });
    let s = session("u400 a400 u400 a40");
    let t = run(&s, &p);
    let c = &t.compactions[0];
    assert_eq!((c.replaced.clone(), c.kept_from), (vec![0, 1, 2], None));
    let text = text_of(&t.transcript[0]);
    assert!(text.ends_with(&format!("\n\nLast request from user was: {}", filler(400, 2))), "{text}");
    assert_eq!(t.transcript.len(), 2);
}

#[test]
fn whole_history_with_user_budget_and_initial_context_codex() {
    let p = compacting(|c| {
        c.trigger_tokens = 300;
        c.cut = CutKind::WholeHistory;
        c.keep_initial_context = true;
        c.user_message_budget_tokens = Some(150);
        c.summary_max_tokens = 40;
    });
    let s = session("i100 u400 a400 u400 a40");
    let t = run(&s, &p);
    let c = &t.compactions[0];
    assert_eq!(c.kept_head, vec![0]);
    assert_eq!(c.replaced, vec![1, 2, 3]);
    assert_eq!(c.retained_user_messages, vec![1, 3]);
    assert_eq!(t.transcript[0], s.messages[0]);
    // Newest first: message 3 whole (100 tokens), message 1 cut to the 50 left.
    assert_eq!(text_of(&t.transcript[2]), filler(400, 3));
    let cut = text_of(&t.transcript[1]);
    assert!(cut.starts_with(&filler(400, 1)[..100]) && cut.contains("chars truncated"), "{cut}");
    assert_eq!(t.transcript[3].origin, Origin::CompactSummary);
}

#[test]
fn pair_placement_adds_an_acknowledgement_before_a_user_message() {
    let p = compacting(|c| {
        c.keep_recent_tokens = 150;
        c.placement = Placement::UserAssistantPair;
        c.ack_text = "I have the context from our previous conversation. Let's continue.".into();
        c.alternation = true;
    });
    let t = run(&session(TURNS), &p);
    assert_eq!(t.transcript[0].role, Role::User);
    assert_eq!(t.transcript[1].role, Role::Assistant);
    assert_eq!(t.transcript[2].role, Role::User);
}

fn goal_session() -> Session {
    SessionBuilder::new("g")
        .human("Fix the crash in /repo/src/main.rs. Never push to main.")
        .tool_calls("", &[("Edit", json!({"file_path": "/repo/src/a.rs"}))])
        .results(&[(filler(2_000, 1), false, false)])
        .assistant(filler(400, 2))
        .human(filler(400, 3))
        .tool_calls("", &[("Read", json!({"file_path": "/repo/src/b.rs"}))])
        .results(&[(filler(2_000, 4), false, false)])
        .assistant(filler(400, 5))
        .human(filler(400, 6))
        .assistant(filler(400, 7))
        .human(filler(400, 8))
        .assistant(filler(40, 9))
        .build()
}

#[test]
fn iterative_update_and_cumulative_file_ops() {
    let p = compacting(|c| {
        c.trigger_tokens = 700;
        c.keep_recent_tokens = 200;
        c.summary_max_tokens = 400;
        c.iterative_update = true;
        c.file_ops = true;
    });
    let t = run(&goal_session(), &p);
    let applied: Vec<&CompactionEvent> = t.compactions.iter().filter(|c| c.applied).collect();
    assert!(applied.len() >= 2, "{:?}", t.compactions);
    let last = applied[applied.len() - 1];
    assert!(last.replaced_previous_summary);
    // The goal of the first compaction survives the second (iterative update).
    assert!(last.summary.contains("Fix the crash in /repo/src/main.rs"), "{}", last.summary);
    assert!(last.file_ops.modified.contains("/repo/src/a.rs"));
    // Without cumulative tracking nor update, the second summary has lost the edit.
    let mut q = p.clone();
    q.compact.iterative_update = false;
    q.compact.file_ops = false;
    let t = run(&goal_session(), &q);
    let last = t.compactions.iter().rfind(|c| c.applied).unwrap();
    assert!(last.replaced_previous_summary);
    assert!(!last.file_ops.modified.contains("/repo/src/a.rs") || last.summary.contains("/repo/src/a.rs"));
}

#[test]
fn no_progress_backs_off_instead_of_looping() {
    // keep_recent larger than history: nothing can be replaced, ever.
    let p = compacting(|c| {
        c.trigger_tokens = 150;
        c.keep_recent_tokens = 100_000;
        c.min_gain_tokens = 1_000;
    });
    let s = session("u400 a400 u400 a400 u400 a400 u400 a400 u400 a40");
    let t = run(&s, &p);
    assert_eq!(t.compactions.len(), 1, "{:?}", t.compactions);
    assert!(t.compactions[0].no_progress && !t.compactions[0].applied);
    assert_eq!((t.metrics.compactions, t.metrics.no_progress_compactions), (0, 1));
    assert_counts_consistent(&t);
    // Not retried while the history cannot outgrow what is kept, however small
    // the minimum gain.
    let mut q = p.clone();
    q.compact.min_gain_tokens = 150;
    assert_eq!(run(&s, &q).compactions.len(), 1);
    // Once it can, it retries then, not at the calls in between: call 1 sees
    // 300 tokens and keeps 600, so nothing before 600 + 150 (call 4, 900).
    q.compact.keep_recent_tokens = 600;
    let t = run(&s, &q);
    let calls: Vec<(usize, bool)> = t.compactions.iter().map(|c| (c.call, c.applied)).collect();
    assert_eq!(calls[..2], [(1, false), (4, true)], "{calls:?}");
    assert_counts_consistent(&t);
    assert_spaced(&t, 150);
}

#[test]
fn a_compaction_that_would_grow_history_is_not_applied() {
    let p = compacting(|c| {
        c.trigger_tokens = 20;
        c.keep_recent_tokens = 10;
        c.summary_max_tokens = 10_000;
        c.summary_template = format!("{}{{summary}}", filler(4_000, 9));
    });
    let t = run(&session("u40 a40 u40 a40 u40 a4"), &p);
    assert!(!t.compactions.is_empty());
    assert!(t.compactions.iter().all(|c| !c.applied && c.no_progress));
    assert_eq!(policy_tokens(&t), baseline_tokens(&t));
}

#[test]
fn flush_once_per_compaction_cycle() {
    let mut p = compacting(|c| {
        c.trigger = TriggerKind::Reserve;
        c.reserve_tokens = 500;
        c.keep_recent_tokens = 150;
        c.summary_max_tokens = 40;
    });
    p.context_window = 1_000;
    p.flush = Flush { enabled: true, reserve_tokens: 500, threshold_tokens: 200 };
    let long = "u400 a400 u400 a400 u400 a400 u400 a400 u400 a400 u400 a400 u400 a40";
    let t = run(&session(long), &p);
    let flushes: Vec<usize> = t.calls.iter().filter(|c| c.events.contains(&Event::Flush)).map(|c| c.call).collect();
    let compacts: Vec<usize> = t.compactions.iter().filter(|c| c.applied).map(|c| c.call).collect();
    // Flush point 300 < compaction point 500; once before each compaction.
    assert!(!compacts.is_empty());
    assert_eq!(flushes.len(), compacts.len() + usize::from(flushes.last() > compacts.last()));
    for (f, c) in flushes.iter().zip(&compacts) {
        assert!(f <= c);
    }
    assert_eq!(t.metrics.flush_points as usize, flushes.len());
}

#[test]
fn overflow_recovery_forces_a_smaller_cut() {
    let mut p = compacting(|c| {
        c.trigger_tokens = 1_000_000;
        c.overflow_keep_ratio = Some(0.2);
        c.summary_max_tokens = 40;
    });
    p.context_window = 1_000;
    let t = run(&session("u2000 a400 u2000 a400 u400 a40"), &p);
    let c = t.compactions.iter().find(|c| c.applied).unwrap();
    assert_eq!(c.reason, CompactionReason::Overflow);
    assert!(t.calls[c.call].tokens_policy <= 1_000, "{:?}", t.calls[c.call]);
}

pub(super) struct Failing;
impl Summarizer for Failing {
    fn name(&self) -> &str {
        "failing"
    }
    fn summarize(&self, _: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        Err(SummarizeError::Failed("boom".into()))
    }
}

#[test]
fn summarizer_failure_fallbacks() {
    let s = session(TURNS);
    let with = |fb: Fallback| {
        let p = compacting(|c| {
            c.keep_recent_tokens = 150;
            c.fallback = fb;
        });
        let t = replay_session(&s, &p, &ctx(&Failing)).unwrap();
        assert!(t.violations.is_empty());
        t
    };
    let t = with(Fallback::Truncate);
    assert_eq!(t.compactions[0].outcome, SummaryOutcome::Fallback);
    assert!(t.compactions[0].summary.starts_with("[Compacted 6 messages: 3 assistant, 3 user]"));
    let t = with(Fallback::Drop);
    assert_eq!(t.compactions[0].outcome, SummaryOutcome::Dropped);
    assert_eq!(&t.transcript[..], &s.messages[6..]);
    let t = with(Fallback::Skip);
    assert!(!t.compactions[0].applied);
    assert_eq!(t.transcript, s.messages);
}

#[test]
fn view_measure_lets_pruning_delay_compaction() {
    let mut p = compacting(|c| {
        c.trigger_tokens = 4_000;
        c.keep_recent_tokens = 500;
    });
    p.prune = Prune { enabled: true, keep_last: 1, hard_clear_after: Some(1), ..Prune::default() };
    let s = session("u40 t1 r8000 t1 r8000 t1 r100 a10");
    p.compact.measure = Measure::History;
    assert!(!run(&s, &p).compactions.is_empty());
    p.compact.measure = Measure::View;
    assert!(run(&s, &p).compactions.is_empty());
}
