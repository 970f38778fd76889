//! The agent's own summary requests billed in the baseline (Sonnet 4 tier:
//! input $3, 5m write $3.75, read $0.30, output $15 per MTok).

use super::tests::{MIN, T0, close, row, session, settings, trace};
use super::*;
use crate::model::{CompactionKind, RecordedCompaction};
use crate::replay::AgentSummaryRequest;

fn request(gap_ms: i64) -> AgentSummaryRequest {
    AgentSummaryRequest {
        call: Some(0),
        timestamp: Some(T0 + gap_ms),
        gap_ms: Some(gap_ms),
        tokens: 100_000,
        prefix: 90_000,
        output: 2_000,
    }
}

fn compaction(kind: CompactionKind, at: usize) -> RecordedCompaction {
    RecordedCompaction {
        kind,
        source_line: 0,
        inserted: at..at + 1,
        kept: 0..0,
        head: 0..0,
        tokens_before: None,
        trigger: None,
    }
}

#[test]
fn a_summary_request_is_billed_in_the_baseline_and_in_what_was_saved() {
    let s = session(&[Some("claude-sonnet-4-5-20250929"); 2], &[]);
    let mut t =
        trace(vec![row(0, Some(T0), (10_000, 0), (10_000, 0)), row(1, Some(T0 + MIN), (20_000, 0), (10_000, 0))]);
    let alone = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    assert!(alone.agent_summaries.is_empty());
    t.agent_summaries.push(request(MIN));
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    // Warm: 90,000 read ($0.027), 10,000 written ($0.0375), 2,000 out ($0.03).
    let a = c.agent_summaries;
    assert_eq!((a.requests, a.bill.cache_read, a.bill.cache_write, a.bill.output), (1, 90_000, 10_000, 2_000));
    close(a.bill.usd, 0.027 + 0.0375 + 0.03);
    // The calls' bill is unchanged; what the agent paid and what the policy
    // saved both hold the request.
    assert_eq!(c.baseline, alone.baseline);
    close(c.baseline_usd(), alone.baseline.usd + 0.0945);
    close(c.saved_usd, alone.saved_usd + 0.0945);
    close(c.saved_pct, crate::num::round4((c.baseline_usd() - c.policy.usd) / c.baseline_usd() * 100.0));
    // Cold, after the cache's lifetime: all of it written again.
    t.agent_summaries[0] = request(6 * MIN);
    let cold = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    close(cold.agent_summaries.bill.usd, 100_000.0 * 3.75 / 1e6 + 0.03);
    // Without a cache, every input token at the input price.
    let off = session_cost(&s, &t, &settings(CacheTtl::Off));
    close(off.agent_summaries.bill.usd, 100_000.0 * 3.0 / 1e6 + 0.03);
    // Totals add them and keep them out of the calls' bill.
    let mut totals = CostTotals::default();
    totals.add(&c);
    totals.add(&cold);
    let totals = totals.finish();
    assert_eq!(totals.agent_summaries.requests, 2);
    assert_eq!(totals.baseline.usd, round_usd(c.baseline.usd + cold.baseline.usd));
    close(totals.baseline_usd(), round_usd(c.baseline_usd() + cold.baseline_usd()));
    close(totals.saved_usd, round_usd(c.saved_usd + cold.saved_usd));
}

#[test]
fn a_request_is_priced_at_its_calls_family_and_date() {
    // o3's cut of 2025-06-10: a request before it at $10 / $40, after at $2 / $8.
    let s = session(&[Some("gpt-4.1"), Some("o3")], &[]);
    let before = crate::read::time::parse_day_or_iso("2025-06-01").unwrap_or_default();
    let mut t = trace(vec![row(0, Some(before), (1_000, 0), (1_000, 0)), row(1, Some(before), (1_000, 0), (1_000, 0))]);
    let r = AgentSummaryRequest {
        call: Some(1),
        timestamp: Some(before),
        gap_ms: None,
        tokens: 1_000_000,
        prefix: 0,
        output: 0,
    };
    t.agent_summaries.push(r);
    let off = settings(CacheTtl::Off);
    close(session_cost(&s, &t, &off).agent_summaries.bill.usd, 10.0);
    t.agent_summaries[0].timestamp = Some(before + 30 * 24 * 60 * MIN);
    close(session_cost(&s, &t, &off).agent_summaries.bill.usd, 2.0);
    // The other call's model (GPT-4.1, $2 in).
    t.agent_summaries[0].call = Some(0);
    close(session_cost(&s, &t, &off).agent_summaries.bill.usd, 2.0);
}

#[test]
fn compactions_of_agents_whose_requests_are_not_priced_are_counted() {
    let mut s = session(&[Some("gpt-5"); 6], &[]);
    s.recorded_compactions = vec![
        compaction(CompactionKind::CodexCompacted, 1),
        compaction(CompactionKind::PiCompaction, 2),
        // No request of its own: a truncation, and one the session inherited.
        compaction(CompactionKind::ClineDeletedRange, 3),
        compaction(CompactionKind::GeminiCompression, 0),
        // Claude Code's: priced when the replay sized its request.
        compaction(CompactionKind::ClaudeBoundary, 4),
    ];
    s.inherited = 1;
    let mut t = trace(vec![row(0, Some(T0), (1_000, 0), (1_000, 0))]);
    t.agent_summaries.push(request(MIN));
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!((c.agent_summaries.requests, c.agent_summaries.unpriced), (1, 2));
    // The replay could not size it (what it summarized is in another log).
    t.agent_summaries.clear();
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!((c.agent_summaries.requests, c.agent_summaries.unpriced), (0, 3));
    close(c.agent_summaries.bill.usd, 0.0);
}
