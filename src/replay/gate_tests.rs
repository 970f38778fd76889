//! The gates that hold pruning back: the prompt cache's lifetime and the
//! share of the window the request has reached.

use super::tests::{baseline_tokens, policy_tokens, pruning, run};
use crate::replay::testkit::session;

#[test]
fn cache_ttl_gates_pruning() {
    let p = pruning(|p| {
        p.keep_last = 1;
        p.soft_trim_chars = Some(4_000);
        p.head = 1_000;
        p.tail = 1_000;
        p.cache_ttl_secs = Some(300);
    });
    let t = run(&session("u10 t1 r8000 t1 r8000 t1 r100 g400 a10"), &p);
    // Calls 1-2 come seconds apart: the full history is sent.
    assert_eq!(policy_tokens(&t)[..3], baseline_tokens(&t)[..3]);
    // Call 3 after 400 s: the cache expired, both old results are trimmed.
    assert!(t.prunes.iter().all(|e| e.call == 3));
    assert_eq!(t.prunes.len(), 2);
    assert!(t.calls[3].tokens_policy < t.calls[3].tokens_baseline);
}

/// Below `start_ratio` of the window every request is the agent's own, so
/// the prompt cache stays whole; from there on the policy prunes.
#[test]
fn start_ratio_holds_pruning_until_the_request_nears_the_window() {
    let mut p = pruning(|p| {
        p.keep_last = 1;
        p.hard_clear_after = Some(1);
        p.start_ratio = Some(0.5);
    });
    p.context_window = 10_000;
    // Requests of about 1,500, 3,000, 4,500 then 6,000 and 7,500 tokens.
    let s = session("u10 t1 r6000 t1 r6000 t1 r6000 t1 r6000 t1 r6000 a10");
    let t = run(&s, &p);
    let base = baseline_tokens(&t);
    let first = base.iter().position(|&b| b >= 5_000).unwrap();
    assert!(first >= 3, "{base:?}");
    assert_eq!(policy_tokens(&t)[..first], base[..first], "below half the window: the agent's own requests");
    assert!(t.prunes.iter().all(|e| e.call >= first) && !t.prunes.is_empty(), "{:?}", t.prunes);
    assert!(t.calls[first].tokens_policy < t.calls[first].tokens_baseline);
    // Without the gate the same policy prunes from the second result on.
    p.prune.start_ratio = None;
    let t = run(&s, &p);
    assert!(t.prunes.iter().any(|e| e.call < first), "{:?}", t.prunes);
}
