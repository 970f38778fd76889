//! The agent's own clearings (Claude Code microcompacts): the baseline sends
//! the cleared outputs as their placeholder, a policy that keeps them pays them.

use super::testkit::{SessionBuilder, filler};
use super::tests::{bare, baseline_tokens, policy_tokens, run};
use serde_json::json;

/// 0 human (100 tokens), 1 Read (2), 2 its result (1,000), 3 Read (2), 4 its
/// result (`second` chars / 4), 5 reply (10); calls at 1, 3, 5.
fn two_reads(second: usize) -> SessionBuilder {
    SessionBuilder::new("s")
        .human(filler(400, 0))
        .tool_calls("", &[("Read", json!({}))])
        .results(&[(filler(4000, 1), false, false)])
        .tool_calls("", &[("Read", json!({}))])
        .results(&[(filler(second, 2), false, false)])
        .assistant(filler(40, 3))
}

/// [`two_reads`] with a second result of 100, then 6 human (10), 7 reply (10).
fn session() -> SessionBuilder {
    two_reads(400).human(filler(40, 4)).assistant(filler(40, 5))
}

#[test]
fn the_baseline_sends_a_cleared_output_as_its_placeholder_and_a_policy_that_keeps_it_pays_it() {
    let s = session().recorded_clearing(6, &[(2, 0)]).build();
    let t = run(&s, &bare());
    // From message 6 on, the 1,000-token output is sent as `[cleared]` (3).
    assert_eq!(baseline_tokens(&t), vec![100, 1102, 1204, 1224 - 997]);
    // A policy that changes nothing keeps the output the agent cleared.
    assert_eq!(policy_tokens(&t), vec![100, 1102, 1204, 1224]);
    // The agent's cache holds its previous request up to the cleared output
    // (100 + 2), no more; the policy's, the whole previous request.
    let prefixes: Vec<_> = t.calls.iter().map(|c| (c.prefix_baseline, c.prefix_policy)).collect();
    assert_eq!(prefixes, [(0, 0), (100, 100), (1102, 1102), (102, 1204)]);
    // Without the clearing both are the whole history.
    let whole = run(&session().build(), &bare());
    assert_eq!(baseline_tokens(&whole), vec![100, 1102, 1204, 1224]);
}

#[test]
fn recorded_usage_after_a_clearing_is_not_taken_off_the_policy() {
    // The recorded prompts: a 500-token system prompt and the context as the
    // agent sent it, the cleared output as its placeholder.
    let usage = [600, 1602, 1704, 727];
    let mut b = session().recorded_clearing(6, &[(2, 0)]).build();
    for (c, u) in b.calls.iter_mut().zip(usage) {
        c.usage = Some(crate::model::Usage {
            uncached_input: u,
            cache_read: 0,
            cache_write: 0,
            output: 0,
            reasoning: 0,
            provenance: crate::model::UsageProvenance::Anthropic,
        });
    }
    let t = run(&b, &bare());
    assert_eq!(baseline_tokens(&t), usage.to_vec());
    // The usage's drop is the clearing, not a tokenizer's gap on the newest
    // messages: a policy that keeps the output still pays its 997 tokens.
    assert_eq!(policy_tokens(&t), vec![600, 1602, 1704, 727 + 997]);
}

#[test]
fn a_clearing_takes_only_what_the_context_still_holds_and_ends_at_a_compaction() {
    // 0 human (100), 1 Read (2), 2 result (1,000), 3 Read (2), 4 result
    // (1,000), 5 reply (10), 6 the summary of a compaction that kept 4..6 (10),
    // 7 human (10), 8 reply (10); calls at 1, 3, 5, 8.
    let build = || {
        two_reads(4000)
            .injected(filler(40, 4))
            .human(filler(40, 5))
            .assistant(filler(40, 6))
            .recorded_compaction(4..6, 6..7)
    };
    // Before the compaction: both outputs are cleared for the call at 5; the
    // compaction then sends what it kept whole.
    let before = build().recorded_clearing(5, &[(2, 0), (4, 0)]).build();
    let t = run(&before, &bare());
    assert_eq!(baseline_tokens(&t), vec![100, 1102, 2104 - 2 * 997, 1030]);
    assert_eq!(t.calls[2].prefix_baseline, 102, "cached up to the first output cleared");
    // After it: the output it dropped is not in the context to clear; the one it kept is.
    let after = build().recorded_clearing(8, &[(2, 0), (4, 0)]).build();
    let t = run(&after, &bare());
    assert_eq!(baseline_tokens(&t), vec![100, 1102, 2104, 1030 - 997]);
    // The compaction rewrote the context anyway: only the system prompt (0) is a prefix.
    assert_eq!(t.calls[3].prefix_baseline, 0);
}

#[test]
fn after_a_compaction_the_cache_holds_what_it_kept_up_to_the_first_cleared_output() {
    // 0 human (100), 1 Read (2), 2 result (1,000), 3 Read (2), 4 result
    // (1,000), 5 reply (10), 6 the summary of a compaction that kept 3..6
    // (10), 7 human (10), 8 reply (10), 9 human (10), 10 reply (10); the
    // output at 4 is cleared from 10 on.
    let s = two_reads(4000)
        .injected(filler(40, 4))
        .human(filler(40, 5))
        .assistant(filler(40, 6))
        .human(filler(40, 7))
        .assistant(filler(40, 8))
        .recorded_compaction(3..6, 6..7)
        .recorded_clearing(10, &[(4, 0)])
        .build();
    let t = run(&s, &bare());
    // Kept 2 + 1,000 + 10, the summary 10, then 10 (+ 10 + 10 at the last call).
    assert_eq!(baseline_tokens(&t), vec![100, 1102, 2104, 1032, 1052 - 997]);
    // The previous request (1,032) is still cached up to the kept Read (2).
    assert_eq!(t.calls[4].prefix_baseline, 2);
}
