//! The test list of specs/000 (Nous spec 008.1 v3, "Testing Strategy"), run
//! against the `nous` preset through the replay engine. Tests of Nous internals
//! with no counterpart in a replay (`test_turn_contexts_cleaned`,
//! `test_format_history_text_with_summary`, `test_prepare_messages_async`) are
//! not listed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use compactor::invariants::{self, CheckOptions};
use compactor::model::{Block, Message, Origin, Role, Session};
use compactor::policy::Policy;
use compactor::presets;
use compactor::replay::testkit::{SessionBuilder, filler, session};
use compactor::replay::{PruneKind, ReplayContext, ReplayOptions, SessionTrace, SummaryOutcome, replay_session};
use compactor::summarize::{Extractive, SummarizeError, Summarizer, Summary, SummaryRequest};
use compactor::tokens::{Chars4, Estimator, EstimatorKind};
use serde_json::json;

fn nous() -> Policy {
    let mut p = presets::get("nous").unwrap();
    p.system_tokens = Some(0);
    p
}

/// Layer 1 alone, persisted so the transcript shows the pruned view.
fn nous_prune() -> Policy {
    let mut p = nous();
    p.compact.enabled = false;
    p.prune.persist = true;
    p
}

fn run_with(s: &Session, p: &Policy, summarizer: &dyn Summarizer) -> SessionTrace {
    let ctx = ReplayContext {
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
    };
    let t = replay_session(s, p, &ctx).unwrap();
    assert!(t.violations.is_empty(), "{:?}", t.violations);
    t
}

fn run(s: &Session, p: &Policy) -> SessionTrace {
    run_with(s, p, &Extractive)
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

// ------------------------------------------------------------------ Phase 1

#[test]
fn test_is_tool_result_message() {
    // A large user text message is never a pruning candidate; tool results are.
    let s = session("u9000 t1 r9000 t1 r10 t1 r10 t1 r10 a10");
    let t = run(&s, &nous_prune());
    assert!(t.prunes.iter().all(|e| s.messages[e.message_index].has_tool_results()));
    assert_eq!(t.prunes.iter().map(|e| e.message_index).collect::<Vec<_>>(), vec![2]);
    assert_eq!(t.transcript[0], s.messages[0]);
}

#[test]
fn test_soft_trim_large_result() {
    let s = session("u10 t1 r24000 t1 r10 t1 r10 a10");
    let t = run(&s, &nous_prune());
    let original = text(&s.messages[2]);
    let want = format!(
        "{}\n\n--- trimmed (kept 1500 head + 1500 tail of 24000 chars) ---\n\n{}",
        &original[..1_500],
        &original[original.len() - 1_500..]
    );
    assert_eq!(text(&t.transcript[2]), want);
}

#[test]
fn test_soft_trim_preserves_small() {
    let t = run(&session("u10 t1 r4000 t1 r10 t1 r10 a10"), &nous_prune());
    assert!(t.prunes.is_empty(), "exactly 4000 chars is not over tool_soft_trim_chars");
}

#[test]
fn test_hard_clear_old_results() {
    let s = session("u10 t1 r500 t1 r10 t1 r10 t1 r10 t1 r10 t1 r10 t1 r10 a10");
    let t = run(&s, &nous_prune());
    assert_eq!(text(&t.transcript[2]), "[Tool output cleared — content was processed in earlier turns]");
    assert_eq!(t.prunes[0].kind, PruneKind::Hard);
    // Only results more than 6 tool-result messages old.
    assert_eq!(t.prunes.len(), 1);
}

#[test]
fn test_protect_last_n_results() {
    let s = session("u10 t1 r9000 t1 r9000 t1 r9000 a10");
    let t = run(&s, &nous_prune());
    let touched: Vec<usize> = t.prunes.iter().map(|e| e.message_index).collect();
    assert_eq!(touched, vec![2], "the last 2 tool-result messages are protected");
}

#[test]
fn test_never_modify_assistant_blocks() {
    let mut b = SessionBuilder::new("s").human("go");
    for i in 0..8 {
        b = b.tool_calls(&filler(300, i), &[("Read", json!({"file_path": format!("/f{i}")}))]).results(&[(
            filler(9_000, i),
            false,
            false,
        )]);
    }
    let mut s = b.assistant("done").build();
    // Thinking blocks too.
    for m in s.messages.iter_mut().filter(|m| m.role == Role::Assistant) {
        m.blocks.insert(0, Block::Thinking { text: "thinking…".into(), opaque_len: 12 });
    }
    let t = run(&s, &nous_prune());
    assert!(!t.prunes.is_empty());
    for (orig, out) in s.messages.iter().zip(&t.transcript) {
        if orig.role == Role::Assistant {
            assert_eq!(orig, out);
        }
    }
}

#[test]
fn test_never_modify_user_text() {
    let s = session("u9000 t1 r9000 u9000 t1 r9000 u9000 t1 r9000 t1 r9000 a10");
    let t = run(&s, &nous_prune());
    for (orig, out) in s.messages.iter().zip(&t.transcript) {
        if orig.origin == Origin::Human {
            assert_eq!(orig, out);
        }
    }
}

#[test]
fn test_skip_image_results() {
    let s = session("u10 t1 r9000+img t1 r10 t1 r10 t1 r10 t1 r10 t1 r10 t1 r10 t1 r10 a10");
    let t = run(&s, &nous_prune());
    assert!(t.prunes.iter().all(|e| e.message_index != 2));
    assert_eq!(t.transcript[2], s.messages[2]);
}

#[test]
fn test_empty_messages_noop() {
    let s = Session::new("empty", compactor::model::Format::Generic, "x");
    let t = run(&s, &nous());
    assert!(t.calls.is_empty() && t.transcript.is_empty() && t.prunes.is_empty());
}

#[test]
fn test_all_protected_noop() {
    let t = run(&session("u10 t1 r90000 t1 r90000 a10"), &nous_prune());
    assert!(t.prunes.is_empty());
}

// ------------------------------------------------------------------ Phase 2

/// Long enough to pass 100K tokens twice: 24 turns with a 40K-char tool result each.
fn long() -> Session {
    let mut b = SessionBuilder::new("long");
    for i in 0..24 {
        b = b
            .human(format!("Request {i}: update /repo/src/mod{i}.rs. {}", filler(400, i)))
            .tool_calls("", &[("Read", json!({"file_path": format!("/repo/src/mod{i}.rs")}))])
            .results(&[(filler(40_000, i), false, false)])
            .assistant(filler(800, i));
    }
    b.build()
}

#[test]
fn test_should_compact_under_threshold() {
    let t = run(&session("u4000 a400 u4000 a400"), &nous());
    assert!(t.compactions.is_empty());
}

#[test]
fn test_should_compact_over_threshold() {
    let t = run(&long(), &nous());
    let first = t.compactions.iter().find(|c| c.applied).unwrap();
    // system (0) + history + max_tokens (16000) > 100000.
    assert!(first.tokens_before + 16_000 > 100_000);
    assert!(first.measured_tokens > 100_000);
}

#[test]
fn test_find_cut_point_keeps_recent() {
    let s = long();
    let t = run(&s, &nous());
    let c = t.compactions.iter().find(|c| c.applied).unwrap();
    // §Cut Point Selection: walk back accumulating tokens until keep_recent_tokens
    // (20000), then snap forward to the next user message.
    let call_msg = t.calls[c.call].message_index;
    let mut acc = 0;
    let mut i = call_msg;
    while acc < 20_000 {
        i -= 1;
        acc += Chars4.message_tokens(&s.messages[i]) + 4;
    }
    let want = (i..call_msg).find(|&j| s.messages[j].origin == Origin::Human);
    assert_eq!(c.kept_from, want);
}

#[test]
fn test_cut_at_user_boundary() {
    let s = long();
    let t = run(&s, &nous());
    for c in t.compactions.iter().filter(|c| c.applied) {
        let m = &s.messages[c.kept_from.unwrap()];
        assert_eq!((m.role, m.origin), (Role::User, Origin::Human));
    }
}

#[test]
fn test_alternation_preserved() {
    let t = run(&long(), &nous());
    assert!(t.metrics.compactions >= 2);
    let opts = CheckOptions { alternation: true, allow_pending_tool_uses: true, ..CheckOptions::default() };
    invariants::check(&t.transcript, &opts).unwrap();
    assert_eq!(t.transcript[0].role, Role::User);
    assert_eq!(t.transcript[1].role, Role::Assistant);
    assert_eq!(text(&t.transcript[1]), "I have the context from our previous conversation. Let's continue.");
}

#[test]
fn test_alternation_leading_assistant() {
    // One endless turn: no user message to snap to, the recent window starts
    // with an assistant tool call; no acknowledgement then (it would repeat the
    // assistant role).
    let mut b = SessionBuilder::new("turn").human("start");
    for i in 0..14 {
        b = b.tool_calls("", &[("Read", json!({"file_path": format!("/f{i}")}))]).results(&[(
            filler(40_000, i),
            false,
            false,
        )]);
    }
    let t = run(&b.assistant("end").build(), &nous());
    let c = t.compactions.iter().find(|c| c.applied).unwrap();
    assert!(c.kept_from.is_some());
    assert_eq!(t.transcript[0].origin, Origin::CompactSummary);
    assert_eq!(t.transcript[1].role, Role::Assistant);
    assert_eq!(t.transcript[1].origin, Origin::Model);
}

#[test]
fn test_iterative_update_prompt() {
    let t = run(&long(), &nous());
    let applied: Vec<_> = t.compactions.iter().filter(|c| c.applied).collect();
    assert!(applied.len() >= 2);
    let second = applied[1];
    assert!(second.replaced_previous_summary);
    // The first request (the goal) is carried from the previous checkpoint.
    assert!(second.summary.contains("Request 0: update /repo/src/mod0.rs"), "{}", second.summary);
}

struct Failing;
impl Summarizer for Failing {
    fn name(&self) -> &str {
        "failing"
    }
    fn summarize(&self, _: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        Err(SummarizeError::Failed("timeout".into()))
    }
}

#[test]
fn test_summarization_failure_fallback() {
    let s = long();
    let t = run_with(&s, &nous(), &Failing);
    let c = t.compactions.iter().find(|c| c.applied).unwrap();
    // "Keep recent messages only, no summary."
    assert_eq!(c.outcome, SummaryOutcome::Dropped);
    assert!(t.transcript.iter().all(|m| m.origin != Origin::CompactSummary));
}

#[test]
fn test_conversation_state_updated() {
    let t = run(&long(), &nous());
    let n = t.compactions.iter().filter(|c| c.applied).count() as u64;
    assert_eq!(t.metrics.compactions, n);
    assert!(n >= 1);
    let summary = &t.transcript[0];
    assert!(text(summary).starts_with("[Previous conversation summary]\n\n## Goal\n"));
    assert!(t.calls.iter().any(|c| c.tokens_policy < c.tokens_baseline));
}

#[test]
fn preset_estimates_chars4_with_4_tokens_per_message() {
    let mut p = nous();
    assert_eq!(p.estimator, EstimatorKind::Chars4);
    // What the trigger sees: chars/4 + 4 per message (a trigger at 101 fires).
    p.max_output_tokens = 0;
    p.compact.trigger_tokens = 101;
    let t = run(&session("u400 a4"), &p);
    assert_eq!(t.compactions.first().map(|c| c.measured_tokens), Some(100 + 4));
    // What the report measures: the run's meter, the same for every policy.
    assert_eq!(t.calls[0].tokens_policy, 100);
}
