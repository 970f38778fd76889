//! The replay engine's cost grows linearly with the session: the work per call
//! stays bounded as a session gets longer.

use super::testkit::{CountingEstimator as Counting, SessionBuilder};
use super::tests::{bare, run};
use super::*;
use crate::presets;
use crate::summarize::Extractive;
use crate::tokens::EstimatorKind;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts estimator calls.
pub(super) fn long_session(rounds: usize) -> Session {
    let mut b = SessionBuilder::new("long");
    for r in 0..rounds {
        if r % 5 == 0 {
            b = b.step(&format!("u{}", 200 + r * 7 % 300));
        }
        b = b.step("t2").step(&format!("r{},{}", 500 + r * 131 % 9_000, 100 + r * 17 % 3_000)).step("a60");
    }
    b.build()
}

#[test]
fn work_is_linear_one_estimate_per_message() {
    let s = long_session(300);
    let n = s.messages.len();
    let count = |p: &Policy| {
        let est = Counting { messages: AtomicUsize::new(0) };
        let ctx = ReplayContext {
            estimator: &est,
            summarizer: &Extractive,
            message_tokens: None,
            meter_tokens: None,
            facts: None,
            options: ReplayOptions {
                check_invariants: false,
                verify_totals: false,
                keep_transcript: false,
                ..ReplayOptions::default()
            },
        };
        let t = replay_session(&s, p, &ctx).unwrap();
        (est.messages.load(Ordering::Relaxed), t)
    };
    // No policy action: exactly one estimate per message, whatever the calls.
    let (calls, _) = count(&bare());
    assert_eq!(calls, n);
    // Pruning re-estimates only the messages it changes, once per transition.
    for name in ["nous", "spec008", "openclaw", "opencode", "anthropic-clear-tool-uses", "default"] {
        let mut p = presets::get(name).unwrap();
        p.estimator = EstimatorKind::Chars4;
        p.compact.enabled = false;
        p.prune.cache_ttl_secs = None;
        let (calls, t) = count(&p);
        assert!(calls <= n + t.prunes.len(), "{name}: {calls} > {n} + {}", t.prunes.len());
    }
    // Compaction adds at most the messages it creates (summary, ack, merged).
    let mut p = presets::get("nous").unwrap();
    p.compact.trigger_tokens = 20_000;
    p.compact.keep_recent_tokens = 4_000;
    let (calls, t) = count(&p);
    let created = 2 * t.compactions.iter().filter(|c| c.applied).count();
    assert!(t.metrics.compactions > 3);
    assert!(calls <= n + t.prunes.len() + created, "{calls} > {n} + {} + {created}", t.prunes.len());
}

#[test]
fn incremental_totals_equal_recomputation_at_every_call() {
    // `run` enables verify_totals: a mismatch at any call is a violation.
    let s = long_session(60);
    for pr in presets::all() {
        let mut p = pr.policy();
        p.estimator = EstimatorKind::Chars4;
        p.context_window = 30_000;
        p.compact.trigger_tokens = 15_000;
        p.compact.keep_recent_ratio = None;
        p.compact.keep_recent_tokens = 4_000;
        p.compact.reserve_tokens = 10_000;
        p.flush.reserve_tokens = 10_000;
        p.prune.clear_tool_uses.trigger_tokens = 8_000;
        p.prune.protect_tokens = p.prune.protect_tokens.map(|_| 4_000);
        p.prune.minimum_tokens = p.prune.minimum_tokens.min(2_000);
        p.prune.min_prunable_tool_chars = p.prune.min_prunable_tool_chars.min(10_000);
        let t = run(&s, &p);
        assert!(t.metrics.compactions + t.metrics.pruned_soft + t.metrics.pruned_hard > 0, "{}", pr.name);
    }
}
