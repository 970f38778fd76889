//! A fork's replay: a policy starts from the history the fork inherited as
//! the agent had it at the fork.

use super::testkit::{SessionBuilder, filler};
use super::tests::{bare, baseline_tokens, policy_tokens, run};

#[test]
fn a_policy_starts_from_an_inherited_history_as_the_agent_had_it() {
    // A fork: messages 0..5 are its parent's history, compacted once by the
    // parent (kept 2..4, summary 4); the fork's own turn is 5 and 6.
    let mut s = SessionBuilder::new("s")
        .human(filler(400, 0))
        .assistant(filler(100, 1))
        .human(filler(400, 2))
        .assistant(filler(100, 3))
        .human(filler(40, 4))
        .human(filler(400, 5))
        .assistant(filler(100, 6))
        .recorded_compaction(2..4, 4..5)
        .build();
    s.calls.retain(|c| c.message_index >= 5);
    s.inherited = 5;
    let t = run(&s, &bare());
    // kept (2,3) = 125 + the summary 10 + message 5 = 100, for both: a policy
    // that does nothing sends what the fork sent.
    assert_eq!(baseline_tokens(&t), vec![235]);
    assert_eq!(policy_tokens(&t), vec![235]);
    assert_eq!(s.hidden_from_policy(), [true, true, false, false, false, false, false]);
    // Read as its own history, the policy would have sent the parent's whole
    // history again (350).
    s.inherited = 0;
    assert_eq!(policy_tokens(&run(&s, &bare())), vec![350]);
}
