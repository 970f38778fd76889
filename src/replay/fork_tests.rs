//! A fork's replay: a policy starts from the history the fork inherited as
//! the agent had it at the fork.

use super::testkit::{SessionBuilder, filler};
use super::tests::{bare, baseline_tokens, compacted_once, policy_tokens, run};

#[test]
fn a_policy_starts_from_an_inherited_history_as_the_agent_had_it() {
    // A fork: messages 0..5 are its parent's history, compacted once by the
    // parent (kept 2..4, summary 4); the fork's own turn is 5 and 6.
    let mut s = compacted_once();
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

#[test]
fn a_fork_with_its_parent_read_starts_with_the_outputs_the_parent_cleared_whole() {
    // Messages 0..3 are the parent's history (lines 1..3), with a clearing the
    // parent recorded (line 3); the fork's own turn is 3 and 4, its own
    // clearing at line 4.
    let build = || {
        let mut s = SessionBuilder::new("s")
            .human(filler(40, 0))
            .tool_calls("", &[("Read", serde_json::json!({}))])
            .results(&[(filler(400, 1), false, false)])
            .human(filler(40, 2))
            .assistant(filler(40, 3))
            .recorded_clearing(3, &[(2, 0)])
            .recorded_clearing(4, &[(2, 0)])
            .build();
        s.recorded_clearings[0].source_line = 3;
        s.recorded_clearings[1].source_line = 4;
        s.inherited = 3;
        s.forked_from = Some("p".into());
        s
    };
    let mut s = build();
    s.settle_fork(true);
    let lines: Vec<_> = s.recorded_clearings.iter().map(|c| c.source_line).collect();
    assert_eq!(lines, [4], "the parent's clearing was its process's, not the fork's");
    let mut alone = build();
    alone.settle_fork(false);
    assert_eq!(alone.recorded_clearings.len(), 2, "read whole, the log's clearings are all this session's");
}
