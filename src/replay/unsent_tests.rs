//! Responses the agent never sent again (pi's aborted and failed turns): the
//! call is measured, and no later request holds the response, in the baseline
//! or in a policy's replay.

use super::testkit::{SessionBuilder, filler};
use super::tests::{bare, baseline_tokens, policy_tokens, run};

/// 0 human (100 tokens), 1 reply (500, a call), 2 human (10), 3 reply (10, a
/// call), 4 human (10), 5 reply (10, a call); the calls record `usage` when
/// given.
fn session(usage: Option<[u64; 3]>) -> crate::model::Session {
    let mut b = SessionBuilder::new("s");
    for (k, size) in [2000, 40, 40].into_iter().enumerate() {
        b = b.human(filler(if k == 0 { 400 } else { 40 }, 2 * k)).assistant(filler(size, 2 * k + 1));
        if let Some(u) = usage {
            b = b.usage(u[k]);
        }
    }
    b.build()
}

#[test]
fn an_unsent_response_is_in_no_later_request() {
    let whole = run(&session(None), &bare());
    assert_eq!(baseline_tokens(&whole), vec![100, 610, 630]);
    let mut s = session(None);
    s.messages[1].unsent = true;
    let t = run(&s, &bare());
    // Its call still counts; the 500 tokens it answered are never sent on.
    assert_eq!(baseline_tokens(&t), vec![100, 110, 130]);
    assert_eq!(policy_tokens(&t), vec![100, 110, 130]);
    assert_eq!(t.transcript.len(), 5, "the policy's transcript leaves it out");
    assert!(t.transcript.iter().all(|m| !m.unsent));
}

#[test]
fn the_estimates_against_recorded_usage_leave_an_unsent_response_out() {
    use crate::tokens::{Chars4, MessageTokens};
    let estimates = |usage| {
        let mut s = session(usage);
        s.messages[1].unsent = true;
        let counts = MessageTokens::new(&s.messages, &Chars4);
        crate::accuracy::call_estimates(&s, &counts, &[]).iter().map(|e| e.context).collect::<Vec<u64>>()
    };
    // No call has recorded usage: none is estimated.
    assert!(estimates(None).is_empty());
    assert_eq!(estimates(Some([100, 110, 130])), [100, 110, 130]);
}

/// What a recorded compaction kept holds no unsent response either: the
/// estimate after it counts the kept messages the agent did send.
#[test]
fn a_kept_range_of_a_recorded_compaction_leaves_an_unsent_response_out() {
    use crate::tokens::{Chars4, MessageTokens};
    // 0 human (100), 1 reply (500, unsent), 2 human (10), 3 reply (10),
    // 4 the summary (20), 5 human (10), 6 reply (10): the compaction at 4
    // keeps 0..4.
    let mut s = SessionBuilder::new("s")
        .human(filler(400, 0))
        .assistant(filler(2000, 1))
        .usage(100)
        .human(filler(40, 2))
        .assistant(filler(40, 3))
        .usage(110)
        .injected(filler(80, 4))
        .human(filler(40, 5))
        .assistant(filler(40, 6))
        .usage(150)
        .recorded_compaction(0..4, 4..5)
        .build();
    s.messages[1].unsent = true;
    let counts = MessageTokens::new(&s.messages, &Chars4);
    let context: Vec<u64> = crate::accuracy::call_estimates(&s, &counts, &[]).iter().map(|e| e.context).collect();
    // Kept 100 + 10 + 10, the summary 20, the human 10.
    assert_eq!(context, [100, 110, 150]);
}
