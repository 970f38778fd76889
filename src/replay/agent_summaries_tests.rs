//! The requests that wrote the agent's own compactions' summaries, as the
//! baseline sent them.

use super::testkit::{SessionBuilder, filler};
use super::tests::{bare, compacted_once, run};
use super::*;
use crate::model::{CompactionKind, Origin};

/// [`compacted_once`] with its summary and compaction of `kind`.
fn compacted(kind: CompactionKind) -> Session {
    let mut s = compacted_once();
    s.messages[4].origin = Origin::CompactSummary;
    s.recorded_compactions[0].kind = kind;
    s
}

#[test]
fn claude_codes_summary_request_sends_its_whole_context_and_reads_the_request_before() {
    let s = compacted(CompactionKind::ClaudeBoundary);
    let t = run(&s, &bare());
    // The context it held (messages 0-3: 250), of which call 1's request
    // (225) is the start; it wrote the summary (10); a second after call 1.
    assert_eq!(
        t.agent_summaries,
        vec![AgentSummaryRequest {
            call: Some(1),
            timestamp: s.messages[4].timestamp,
            gap_ms: Some(1_000),
            tokens: 250,
            prefix: 225,
            output: 10,
        }]
    );
    // The baseline's calls are as without it.
    let mut plain = s.clone();
    plain.recorded_compactions[0].kind = CompactionKind::Other;
    let p = run(&plain, &bare());
    assert!(p.agent_summaries.is_empty());
    assert_eq!(p.calls, t.calls);
    // Its tokens count against what a policy saved, as a summarizer's do.
    assert_eq!(t.metrics.agent_summary_tokens, 260);
    assert_eq!(t.metrics.net_savings_tokens, p.metrics.net_savings_tokens + 260);
    assert_eq!(
        SessionMetrics { agent_summary_tokens: 0, net_savings_tokens: 0, ..t.metrics },
        SessionMetrics { net_savings_tokens: 0, ..p.metrics }
    );
}

#[test]
fn only_the_agents_own_priced_compactions_have_a_request() {
    for kind in [CompactionKind::CodexCompacted, CompactionKind::PiCompaction, CompactionKind::ClineDeletedRange] {
        assert!(run(&compacted(kind), &bare()).agent_summaries.is_empty(), "{kind:?}");
    }
    // One the session inherited was paid for where it was made.
    let mut s = compacted(CompactionKind::ClaudeBoundary);
    s.inherited = 5;
    assert!(run(&s, &bare()).agent_summaries.is_empty());
    // A session continued from a compacted one opens with the summary: what
    // the request sent is in another log.
    let mut s = SessionBuilder::new("s")
        .human(filler(40, 0))
        .human(filler(400, 1))
        .assistant(filler(100, 2))
        .recorded_compaction(0..0, 0..1)
        .build();
    s.messages[0].origin = Origin::CompactSummary;
    s.recorded_compactions[0].kind = CompactionKind::ClaudeBoundary;
    assert!(run(&s, &bare()).agent_summaries.is_empty());
}

#[test]
fn a_compaction_after_the_last_call_and_two_in_one_gap_are_each_a_request() {
    // u400 a100 [summary 40] [summary 20]: the second compaction sends the
    // first one's kept context and summary; only the system prompt (0) is
    // the start of the request before it.
    let mut s = SessionBuilder::new("s")
        .human(filler(400, 0))
        .assistant(filler(100, 1))
        .human(filler(40, 2))
        .human(filler(20, 3))
        .recorded_compaction(0..2, 2..3)
        .recorded_compaction(0..0, 3..4)
        .build();
    for (c, m) in [(0, 2), (1, 3)] {
        s.messages[m].origin = Origin::CompactSummary;
        s.recorded_compactions[c].kind = CompactionKind::ClaudeBoundary;
    }
    let t = run(&s, &bare());
    let sizes: Vec<_> = t.agent_summaries.iter().map(|r| (r.call, r.tokens, r.prefix, r.output)).collect();
    assert_eq!(sizes, vec![(Some(0), 125, 100, 10), (Some(0), 135, 0, 5)]);
}

#[test]
fn the_request_is_sized_with_the_meters_drift_from_recorded_usage() {
    // Call 1 recorded 300 tokens where chars/4 counts 225: the request after
    // it carries the same 75.
    let mut s = compacted(CompactionKind::ClaudeBoundary);
    s.calls[1].usage = SessionBuilder::new("u").human("x").assistant("y").usage(300).build().calls[0].usage;
    let t = run(&s, &bare());
    assert_eq!(t.calls[1].tokens_baseline, 300);
    let r = &t.agent_summaries[0];
    assert_eq!((r.tokens, r.prefix), (325, 300));
}
