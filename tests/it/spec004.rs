//! The test list of specs/004 (SPEC-008 "Testing Requirements"), run against the
//! `spec008` preset through the replay engine. The flush is reported offline, not
//! executed, so `test_memory_flush_calls_save_memory_tool` and
//! `test_memory_flush_suppresses_silent_response` have no counterpart here.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use compactor::model::{Block, Format, Message, Origin, Role, Session};
use compactor::policy::Policy;
use compactor::presets;
use compactor::replay::testkit::{SessionBuilder, filler, session};
use compactor::replay::{
    Event, PruneKind, ReplayContext, ReplayOptions, SessionTrace, count_message_tokens, replay_session,
};
use compactor::summarize::Extractive;
use compactor::tokens::{Chars4, Estimator};
use serde_json::json;

fn spec008() -> Policy {
    let mut p = presets::get("spec008").unwrap();
    p.system_tokens = Some(0);
    p
}

fn prune_only() -> Policy {
    let mut p = spec008();
    p.compact.enabled = false;
    p.flush.enabled = false;
    p.prune.persist = true;
    p
}

fn run(s: &Session, p: &Policy) -> SessionTrace {
    let ctx = ReplayContext {
        estimator: &Chars4,
        summarizer: &Extractive,
        message_tokens: None,
        meter_tokens: None,
        facts: None,
        options: ReplayOptions {
            check_invariants: true,
            verify_totals: true,
            keep_transcript: true,
            ..ReplayOptions::default()
        },
    };
    let t = replay_session(s, p, &ctx).unwrap();
    assert!(t.violations.is_empty(), "{:?}", t.violations);
    t
}

fn text(m: &Message) -> String {
    m.blocks
        .iter()
        .map(|b| match b {
            Block::Text { text } => text.clone(),
            Block::ToolResult { content, .. } => compactor::summarize::tool_result_text(content).into_owned(),
            _ => String::new(),
        })
        .collect()
}

/// `turns` user turns, each a tool call with an 80K-char result (20K tokens).
fn long(turns: usize) -> Session {
    let mut b = SessionBuilder::new("long");
    for i in 0..turns {
        b = b
            .human(format!("Turn {i}: check the inbox. {}", filler(200, i)))
            .tool_calls("", &[("gmail_search", json!({"q": format!("label:{i}")}))])
            .results(&[(filler(80_000, i), false, false)])
            .assistant(filler(400, i));
    }
    b.build()
}

// ------------------------------------------------------ test_context_manager

#[test]
fn test_estimate_tokens_empty_messages() {
    let s = Session::new("e", Format::Generic, "e");
    assert!(count_message_tokens(&s, &Chars4).is_empty());
    assert_eq!(Chars4.message_tokens(&Message::new(Role::User, Origin::Human, vec![])), 0);
}

#[test]
fn test_estimate_tokens_proportional_to_content() {
    let s = session("u400 u4000 u40000");
    assert_eq!(count_message_tokens(&s, &Chars4), vec![100, 1_000, 10_000]);
}

#[test]
fn test_should_compact_below_threshold_returns_false() {
    // 8 turns ≈ 163K tokens < 200K − 20K.
    let t = run(&long(8), &spec008());
    assert!(t.compactions.is_empty());
}

#[test]
fn test_should_compact_above_threshold_returns_true() {
    let t = run(&long(12), &spec008());
    let c = t.compactions.iter().find(|c| c.applied).unwrap();
    assert!(c.measured_tokens > 180_000);
}

#[test]
fn test_should_flush_fires_before_compact() {
    let t = run(&long(12), &spec008());
    let flush = t.calls.iter().find(|c| c.events.contains(&Event::Flush)).unwrap();
    let compact = t.compactions.iter().find(|c| c.applied).unwrap();
    assert!(flush.call <= compact.call);
    // Flush point: window − reserve − flush_threshold = 176000.
    assert!(flush.tokens_policy > 176_000 || flush.call == compact.call);
}

#[test]
fn test_prune_preserves_recent_tool_results() {
    let s = session("u10 t1 r9000 t1 r9000 t1 r9000 t1 r9000 a10");
    let t = run(&s, &prune_only());
    // At the last call 4 assistants exist; only the result before the last 3 is old.
    assert_eq!(t.prunes.iter().map(|e| e.message_index).collect::<Vec<_>>(), vec![2]);
    for i in [4, 6, 8] {
        assert_eq!(t.transcript[i], s.messages[i]);
    }
}

#[test]
fn test_prune_soft_trims_oversized_old_results() {
    let s = session("u10 t1 r9000 t1 r9000 t1 r9000 t1 r9000 a10");
    let t = run(&s, &prune_only());
    let original = text(&s.messages[2]);
    let want = format!("{}...{}", &original[..1_500], &original[original.len() - 1_500..]);
    assert_eq!(text(&t.transcript[2]), want);
    assert_eq!(t.prunes[0].kind, PruneKind::Soft);
}

#[test]
fn test_prune_hard_clears_very_old_results() {
    // AC-5 leaves M open; with M = 5 assistant turns.
    let mut p = prune_only();
    p.prune.hard_clear_after = Some(5);
    let s = session("u10 t1 r300 t1 r300 t1 r300 t1 r300 t1 r300 t1 r300 a10");
    let t = run(&s, &p);
    assert_eq!(text(&t.transcript[2]), "[Tool result cleared]");
    assert_eq!(t.prunes.iter().filter(|e| e.kind == PruneKind::Hard).count(), 1);
}

#[test]
fn test_prune_never_modifies_user_messages() {
    let s = session("u9000 t1 r9000 u9000 t1 r9000 u9000 t1 r9000 t1 r9000 a10");
    let t = run(&s, &prune_only());
    assert!(!t.prunes.is_empty());
    for (o, n) in s.messages.iter().zip(&t.transcript) {
        if !o.has_tool_results() {
            assert_eq!(o, n);
        }
    }
}

#[test]
fn test_prune_never_modifies_assistant_messages() {
    let s = session("u10 t2 r9000,9000 a9000 u10 t1 r9000 a9000 u10 a10 u10 a10");
    let t = run(&s, &prune_only());
    assert!(!t.prunes.is_empty());
    for (o, n) in s.messages.iter().zip(&t.transcript) {
        if o.role == Role::Assistant {
            assert_eq!(o, n);
        }
    }
}

#[test]
fn test_prune_skips_image_content_blocks() {
    let s = session("u10 t1 r9000+img t1 r9000 t1 r9000 t1 r9000 a10");
    let t = run(&s, &prune_only());
    assert_eq!(t.transcript[2], s.messages[2]);
}

// --------------------------------------------------- test_compaction_service

#[test]
fn test_compact_preserves_recent_messages() {
    let s = long(12);
    let t = run(&s, &spec008());
    let c = t.compactions.iter().find(|c| c.applied).unwrap();
    // AC-17: the last 5 assistant turns are kept verbatim (the turn's user message with them).
    let from = c.kept_from.unwrap();
    let call_msg = t.calls[c.call].message_index;
    let kept_assistants = (from..call_msg).filter(|&i| s.messages[i].role == Role::Assistant).count();
    assert_eq!(kept_assistants, 5);
}

#[test]
fn test_compact_summarizes_old_messages() {
    let t = run(&long(12), &spec008());
    let c = t.compactions.iter().find(|c| c.applied).unwrap();
    assert!(!c.replaced.is_empty());
    // AC-14: one system message.
    let first = &t.transcript[0];
    assert_eq!((first.role, first.origin), (Role::System, Origin::CompactSummary));
    assert!(text(first).starts_with("[Session compacted. Summary of prior conversation:]\n\n"));
    assert!(c.summary.contains("Turn 0: check the inbox."));
}

#[test]
fn test_compact_uses_haiku_model() {
    // AC-18 (a cheaper summarizer): offline, the stand-in is bounded to the
    // summary size the cost analysis expects (~500–1000 tokens).
    let t = run(&long(12), &spec008());
    for c in t.compactions.iter().filter(|c| c.applied) {
        assert!(Chars4.text_tokens(&c.summary) <= 1_000);
    }
}

#[test]
fn test_compact_noop_when_few_messages() {
    // Over the threshold with fewer than 5 assistant turns: nothing to compact.
    let s = session("u10 t1 r400000 t1 r400000 a10");
    let t = run(&s, &spec008());
    assert!(t.compactions.iter().all(|c| !c.applied && c.no_progress));
    assert_eq!(t.transcript, s.messages);
}

#[test]
fn test_memory_flush_fires_once_per_cycle() {
    let t = run(&long(30), &spec008());
    let flushes: Vec<usize> = t.calls.iter().filter(|c| c.events.contains(&Event::Flush)).map(|c| c.call).collect();
    let compactions: Vec<usize> = t.compactions.iter().filter(|c| c.applied).map(|c| c.call).collect();
    assert!(compactions.len() >= 2, "{compactions:?}");
    // Between two compactions there is at most one flush.
    let mut bounds = vec![0];
    bounds.extend(compactions.iter().map(|c| c + 1));
    bounds.push(usize::MAX);
    for w in bounds.windows(2) {
        assert!(flushes.iter().filter(|&&f| f >= w[0] && f < w[1]).count() <= 1, "{flushes:?} {compactions:?}");
    }
}

#[test]
fn test_memory_flush_skipped_when_already_flushed() {
    // Above the flush point for several calls but below the compaction point.
    let mut b = SessionBuilder::new("s");
    b = b.human(filler(705_000, 0)).assistant("a");
    for i in 0..4 {
        b = b.human(filler(100, i)).assistant("b");
    }
    let t = run(&b.build(), &spec008());
    let flushes = t.calls.iter().filter(|c| c.events.contains(&Event::Flush)).count();
    assert!(t.calls.iter().all(|c| c.tokens_policy > 176_000));
    assert_eq!(flushes, 1);
}

// ----------------------------------------------------------- integration

#[test]
fn test_long_session_triggers_compaction() {
    let t = run(&long(20), &spec008());
    assert!(t.metrics.compactions >= 1);
    assert_eq!(t.metrics.overflow_calls_policy, 0);
    assert!(t.metrics.overflow_calls_baseline > 0);
}

#[test]
fn test_flush_then_compact_preserves_ltm() {
    // The flush point comes at or before every compaction of a cycle.
    let t = run(&long(30), &spec008());
    let flushes: Vec<usize> = t.calls.iter().filter(|c| c.events.contains(&Event::Flush)).map(|c| c.call).collect();
    let mut prev = 0;
    for c in t.compactions.iter().filter(|c| c.applied) {
        assert!(flushes.iter().any(|&f| f >= prev && f <= c.call), "no flush before compaction at {}", c.call);
        prev = c.call + 1;
    }
}
