//! Cost-model tests with hand-computed expectations (prices of the Sonnet 4
//! tier: input $3, 5m write $3.75, 1h write $6, read $0.30, output $15 per MTok).

use super::*;
use crate::model::{Call, Format, Usage, UsageProvenance};
use crate::replay::{CallRow, SessionMetrics, SessionTrace, SystemTokensSource};
use crate::tokens::EstimatorKind;
use proptest::prelude::*;

pub(super) const T0: i64 = 1_700_000_000_000;
pub(super) const MIN: i64 = 60_000;

pub(super) fn row(call: usize, ts: Option<i64>, base: (u64, u64), policy: (u64, u64)) -> CallRow {
    CallRow {
        call,
        message_index: call,
        timestamp: ts,
        tokens_baseline: base.0,
        tokens_policy: policy.0,
        tokens_recorded: None,
        pruned_soft: 0,
        pruned_hard: 0,
        prefix_baseline: base.1,
        prefix_policy: policy.1,
        events: Vec::new(),
    }
}

pub(super) fn trace(rows: Vec<CallRow>) -> SessionTrace {
    let metrics = SessionMetrics {
        calls: rows.len() as u64,
        input_tokens_baseline: rows.iter().map(|r| r.tokens_baseline).sum(),
        input_tokens_policy: rows.iter().map(|r| r.tokens_policy).sum(),
        ..SessionMetrics::default()
    };
    SessionTrace {
        session_id: "s".into(),
        policy: "p".into(),
        estimator: EstimatorKind::Chars4,
        context_window: 200_000,
        window_source: crate::model::WindowSource::Default,
        system_tokens: 0,
        system_tokens_source: SystemTokensSource::Zero,
        calls: rows,
        compactions: Vec::new(),
        prunes: Vec::new(),
        transcript: Vec::new(),
        transcript_sources: Vec::new(),
        metrics,
        violations: Vec::new(),
        agent_summaries: Vec::new(),
    }
}

pub(super) fn session(models: &[Option<&str>], usage: &[Option<Usage>]) -> Session {
    let mut s = Session::new("s", Format::Generic, "s.jsonl");
    for (i, m) in models.iter().enumerate() {
        s.calls.push(Call {
            message_index: i,
            model: m.map(str::to_string),
            usage: usage.get(i).copied().flatten(),
            timestamp: None,
            response_id: None,
            fast: false,
        });
    }
    s
}

fn sonnet(n: usize) -> Session {
    session(&vec![Some("claude-sonnet-4-5-20250929"); n], &[])
}

pub(super) fn settings(ttl: CacheTtl) -> CostSettings {
    CostSettings { ttl, ..CostSettings::default() }
}

/// The family a model name resolves to in `t`.
pub(super) fn family<'t>(t: &'t PriceTable, model: &str) -> &'t Family {
    &t.families[t.find(model).expect(model)]
}

/// The error a prices file is refused with.
pub(super) fn prices_error(toml: &str) -> String {
    PriceTable::from_toml(toml).expect_err(toml).to_string()
}

pub(super) fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

#[test]
fn a_hit_within_the_ttl_reads_the_previous_request() {
    // Call 0 writes 10,000 tokens: 10,000 × $3.75 / 1M = $0.0375.
    // Call 1, one minute later: 10,000 read ($0.003) + 2,000 written ($0.0075).
    let t = trace(vec![
        row(0, Some(T0), (10_000, 0), (10_000, 0)),
        row(1, Some(T0 + MIN), (12_000, 10_000), (12_000, 10_000)),
    ]);
    let c = session_cost(&sonnet(2), &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!(c.family, "claude-sonnet-4");
    assert_eq!(c.model_source, Some(ModelSource::Log));
    assert_eq!((c.baseline.cache_read, c.baseline.cache_write, c.baseline.uncached), (10_000, 12_000, 0));
    close(c.baseline.usd, 0.0375 + 0.003 + 0.0075);
    close(c.policy.usd, c.baseline.usd);
    close(c.saved_usd, 0.0);
    assert!(!c.sheds_tokens_costs_more);
}

#[test]
fn a_miss_after_the_ttl_writes_everything_again() {
    // Call 1 comes 6 minutes later: the 5-minute entry expired; 12,000 written
    // ($0.045) on top of call 0's $0.0375.
    let t = trace(vec![
        row(0, Some(T0), (10_000, 0), (10_000, 0)),
        row(1, Some(T0 + 6 * MIN), (12_000, 10_000), (12_000, 10_000)),
    ]);
    let c = session_cost(&sonnet(2), &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!((c.baseline.cache_read, c.baseline.cache_write), (0, 22_000));
    close(c.baseline.usd, 0.0375 + 0.045);
    // With a 1-hour entry it is still warm, at the 1h write price ($6):
    // 10,000 × 6 + 10,000 × 0.30 + 2,000 × 6 = $0.075.
    let c = session_cost(&sonnet(2), &t, &settings(CacheTtl::OneHour));
    assert_eq!((c.baseline.cache_read, c.baseline.cache_write), (10_000, 12_000));
    close(c.baseline.usd, 0.06 + 0.003 + 0.012);
    // Exactly at the TTL it is still warm.
    let t = trace(vec![
        row(0, Some(T0), (1_000, 0), (1_000, 0)),
        row(1, Some(T0 + 5 * MIN), (1_000, 1_000), (1_000, 1_000)),
    ]);
    let c = session_cost(&sonnet(2), &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!(c.baseline.cache_read, 1_000);
}

/// `auto` prices each session with the lifetime its log records: the
/// session whose cache writes were 1-hour ones stays warm across a 6-minute
/// pause, at the 1-hour write price; one without the record, or with 5-minute
/// writes, as 5 minutes.
#[test]
fn auto_takes_each_sessions_recorded_cache_lifetime() {
    let t = trace(vec![
        row(0, Some(T0), (10_000, 0), (10_000, 0)),
        row(1, Some(T0 + 6 * MIN), (12_000, 10_000), (12_000, 10_000)),
    ]);
    let mut hour = sonnet(2);
    hour.meta.cache_writes_by_ttl = Some((0, 12_000));
    let c = session_cost(&hour, &t, &settings(CacheTtl::Auto));
    assert_eq!(c.ttl, Some(CacheTtl::OneHour));
    assert_eq!((c.baseline.cache_read, c.baseline.cache_write), (10_000, 12_000));
    close(c.baseline.usd, 0.06 + 0.003 + 0.012);
    for writes in [None, Some((12_000, 0)), Some((7_000, 5_000))] {
        let mut s = sonnet(2);
        s.meta.cache_writes_by_ttl = writes;
        let c = session_cost(&s, &t, &settings(CacheTtl::Auto));
        assert_eq!(c.ttl, Some(CacheTtl::FiveMinutes), "{writes:?}");
        assert_eq!((c.baseline.cache_read, c.baseline.cache_write), (0, 22_000));
    }
    // A lifetime given on the command line wins over the log's.
    let c = session_cost(&hour, &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!(c.ttl, Some(CacheTtl::FiveMinutes));
    assert_eq!(CacheTtl::parse("auto"), Ok(CacheTtl::Auto));
}

#[test]
fn a_prefix_broken_by_pruning_costs_more_although_it_sheds_tokens() {
    // Baseline: 10k, 12k, 14k, each extending the previous request.
    // Policy: at call 2 pruning clears a 4,000-token tool result that starts at
    // token 1,000: the request shrinks to 10k but only its first 1,000 tokens
    // equal the previous request.
    let t = trace(vec![
        row(0, Some(T0), (10_000, 0), (10_000, 0)),
        row(1, Some(T0 + MIN), (12_000, 10_000), (12_000, 10_000)),
        row(2, Some(T0 + 2 * MIN), (14_000, 12_000), (10_000, 1_000)),
    ]);
    let c = session_cost(&sonnet(3), &t, &settings(CacheTtl::FiveMinutes));
    // Baseline: 37,500 + (3,000 + 7,500) + (3,600 + 7,500) = $0.0591.
    close(c.baseline.usd, 0.0591);
    // Policy: 37,500 + (3,000 + 7,500) + (1,000 × 0.30 + 9,000 × 3.75 = 34,050) = $0.08205.
    close(c.policy.usd, 0.08205);
    close(c.saved_usd, 0.0591 - 0.08205);
    assert!(c.sheds_tokens_costs_more);
    assert!(c.saved_pct < 0.0);
    // Without a cache the same pruning saves money: 36k vs 32k at $3.
    let c = session_cost(&sonnet(3), &t, &settings(CacheTtl::Off));
    close(c.baseline.usd, 0.108);
    close(c.policy.usd, 0.096);
    assert!(!c.sheds_tokens_costs_more);
}

/// A call's recorded usage of `output` tokens and nothing else.
pub(super) fn output_only(output: u64) -> Usage {
    Usage {
        uncached_input: 0,
        cache_read: 0,
        cache_write: 0,
        output,
        reasoning: 0,
        provenance: UsageProvenance::OpenAi,
    }
}

#[test]
fn outputs_summaries_and_models_are_priced() {
    let usage = output_only;
    // gpt-5: input $1.25, cached $0.125, output $10; writes at the input price.
    let s = session(&[Some("gpt-5-codex"), Some("gpt-5-codex")], &[Some(usage(1_000)), Some(usage(500))]);
    let mut t = trace(vec![row(0, None, (4_000, 0), (4_000, 0)), row(1, None, (8_000, 4_000), (6_000, 4_000))]);
    t.compactions.push(crate::replay::CompactionEvent {
        call: 1,
        reason: crate::replay::CompactionReason::Threshold,
        measured_tokens: 0,
        tokens_before: 0,
        tokens_after: 0,
        replaced: Vec::new(),
        replaced_previous_summary: false,
        kept_head: Vec::new(),
        retained_user_messages: Vec::new(),
        kept_from: None,
        split_turn: false,
        summary: String::new(),
        summary_tokens: 0,
        summarizer: "llm".into(),
        outcome: crate::replay::SummaryOutcome::Summarizer,
        file_ops: Default::default(),
        summarizer_usage: crate::summarize::SummarizerUsage { input_tokens: 10_000, output_tokens: 1_000, calls: 1 },
        fallback_reason: None,
        applied: true,
        no_progress: false,
    });
    let mut st = settings(CacheTtl::FiveMinutes);
    st.summarizer_model = Some("gpt-5-mini".into());
    let c = session_cost(&s, &t, &st);
    assert_eq!(c.family, "gpt-5");
    // No timestamps: calls are taken as warm, and counted.
    assert_eq!(c.calls_without_timestamp, 2);
    // Baseline: 4,000 × 1.25 + (4,000 × 0.125 + 4,000 × 1.25) + 1,500 × 10 = $0.0255.
    close(c.baseline.usd, 0.0255);
    // Policy: 5,000 + (500 + 2,000 × 1.25) + 15,000 = $0.023.
    close(c.policy.usd, 0.023);
    // Summaries at gpt-5-mini: 10,000 × 0.25 + 1,000 × 2 = $0.0045.
    close(c.summarizer_usd, 0.0045);
    close(c.saved_usd, 0.0255 - 0.023 - 0.0045);
    // Fewer tokens, more money once the summaries are paid.
    assert!(c.sheds_tokens_costs_more);
    // `--model` prices everything as another family.
    st.model_override = Some("claude-opus-4-1".into());
    let c = session_cost(&s, &t, &st);
    assert_eq!((c.family.as_str(), c.model_source), ("claude-opus-4", Some(ModelSource::Override)));
    // Unknown and missing models fall back, and are counted.
    let s = session(&[Some("mystery-model-7"), None], &[]);
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!(
        (c.family.as_str(), c.fallback_calls, c.model_source),
        ("claude-sonnet-4", 2, Some(ModelSource::Fallback))
    );
}

/// A call of no recorded model is priced as its agent's default model where
/// the agent has one (a `codex exec` stream names none); a prices file's own
/// fallback and `--model` come first, and a name no family matches is no
/// call of the default model.
#[test]
fn a_call_of_no_model_is_priced_as_its_agents_default() {
    let t = trace(vec![row(0, None, (4000, 0), (4000, 0)), row(1, None, (5000, 4000), (5000, 4000))]);
    let mut s = session(&[None, Some("mystery-model-7")], &[]);
    s.format = Format::CodexExec;
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!((c.agent_model_calls, c.fallback_calls, c.model_source), (1, 1, Some(ModelSource::Fallback)));
    s.calls[1].model = None;
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!(
        (c.family.as_str(), c.agent_model_calls, c.fallback_calls, c.model_source),
        ("gpt-5", 2, 0, Some(ModelSource::Agent))
    );
    // An agent of many providers has no default: the fallback.
    s.format = Format::Pi;
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!((c.family.as_str(), c.agent_model_calls, c.fallback_calls), ("claude-sonnet-4", 0, 2));
    // A prices file that names a fallback prices them, before the agent's default.
    s.format = Format::CodexExec;
    let mut st = settings(CacheTtl::FiveMinutes);
    st.table = PriceTable::from_toml("fallback = \"gpt-4o\"\n").unwrap_or_else(|e| panic!("{e}"));
    let c = session_cost(&s, &t, &st);
    assert_eq!((c.family.as_str(), c.agent_model_calls, c.fallback_calls), ("gpt-4o", 0, 2));
    // And `--model` prices every call.
    let mut st = settings(CacheTtl::FiveMinutes);
    st.model_override = Some("claude-opus-4-1".into());
    let c = session_cost(&s, &t, &st);
    assert_eq!((c.family.as_str(), c.agent_model_calls), ("claude-opus-4", 0));
}

#[test]
fn the_baseline_is_checked_against_recorded_cache_usage() {
    let u = |uncached, read, write| Usage {
        uncached_input: uncached,
        cache_read: read,
        cache_write: write,
        output: 0,
        reasoning: 0,
        provenance: UsageProvenance::Anthropic,
    };
    // Recorded: call 0 wrote 10,000; call 1 read 9,000 and wrote 3,000.
    let s = session(
        &[Some("claude-sonnet-4-5"), Some("claude-sonnet-4-5")],
        &[Some(u(0, 0, 10_000)), Some(u(0, 9_000, 3_000))],
    );
    let t = trace(vec![
        row(0, Some(T0), (10_000, 0), (10_000, 0)),
        row(1, Some(T0 + MIN), (12_000, 10_000), (12_000, 10_000)),
    ]);
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    let r = c.recorded.clone().expect("checked");
    assert_eq!(r.calls, 2);
    // Recorded $0.0375 + (0.0027 + 0.01125) = $0.05145; simulated $0.048.
    close(r.recorded_usd, 0.05145);
    close(r.simulated_usd, 0.048);
    close(r.error_pct, crate::num::round4((0.048 - 0.05145) / 0.05145 * 100.0));
    // Per call: 0 % and |0.0105 − 0.01395| / 0.01395 = 24.7312 %.
    close(r.median_abs_error_pct.unwrap_or_default(), crate::num::round4(24.731182795698924 / 2.0));
    close(r.read_share_recorded, 0.4091);
    close(r.read_share_simulated, 0.4545);
    let mut totals = CostTotals::default();
    totals.add(&c);
    totals.add(&c);
    let totals = totals.finish();
    assert_eq!(totals.sessions, 2);
    close(totals.baseline.usd, 0.096);
    assert_eq!(totals.recorded.map(|r| r.calls), Some(4));
}

/// Models resolved once per session (what `compare` and a sweep do) price as
/// `session_cost` does, a row outside the session's calls included; without
/// the per-call errors only those (and their median and p90) are left out.
#[test]
fn models_resolved_beforehand_price_alike() {
    let u = |uncached, read, write| Usage {
        uncached_input: uncached,
        cache_read: read,
        cache_write: write,
        output: 100,
        reasoning: 0,
        provenance: UsageProvenance::Anthropic,
    };
    let s = session(
        &[Some("claude-sonnet-4-5"), Some("gpt-5-codex"), None],
        &[Some(u(0, 0, 10_000)), Some(u(0, 9_000, 3_000)), Some(u(500, 0, 0))],
    );
    // Row 3 names call 7, which the session does not have.
    let t = trace(vec![
        row(0, Some(T0), (10_000, 0), (10_000, 0)),
        row(1, Some(T0 + MIN), (12_000, 10_000), (12_000, 10_000)),
        row(2, Some(T0 + 2 * MIN), (12_500, 12_000), (9_000, 0)),
        row(7, Some(T0 + 3 * MIN), (13_000, 12_500), (9_500, 9_000)),
    ]);
    for (model_override, source, fallbacks) in
        [(None, ModelSource::Fallback, 2), (Some("claude-opus-4-1"), ModelSource::Override, 0)]
    {
        let mut st = settings(CacheTtl::FiveMinutes);
        st.model_override = model_override.map(Into::into);
        st.summarizer_model = Some("gpt-5-mini".into());
        let models = SessionModels::of(&s, &st);
        let full = session_cost(&s, &t, &st);
        assert_eq!((full.fallback_calls, full.model_source), (fallbacks, Some(source)));
        assert_eq!(session_cost_with(&s, &t, &st, &models, true), full);
        let mut expect = full.clone();
        let r = expect.recorded.as_mut().expect("checked");
        assert_eq!((r.calls, r.call_errors.len()), (2, 2));
        assert!(r.median_abs_error_pct.is_some() && r.p90_abs_error_pct.is_some());
        (r.call_errors, r.median_abs_error_pct, r.p90_abs_error_pct) = (Vec::new(), None, None);
        assert_eq!(session_cost_with(&s, &t, &st, &models, false), expect);
    }
}

/// Models resolved against another table (a caller's mistake) price as the
/// fallback family instead of indexing out of bounds.
#[test]
fn models_of_another_table_fall_back_not_panic() {
    let s = session(&[Some("gpt-5-codex")], &[]);
    let t = trace(vec![row(0, None, (4_000, 0), (4_000, 0))]);
    let mut wide = settings(CacheTtl::FiveMinutes);
    wide.summarizer_model = Some("gpt-5-mini".into());
    let models = SessionModels::of(&s, &wide);
    let mut narrow = wide.clone();
    let fallback = narrow.table.families[narrow.table.fallback].clone();
    narrow.table =
        PriceTable { families: vec![fallback], fallback: 0, fallback_set: false, windows: Default::default() };
    let c = session_cost_with(&s, &t, &narrow, &models, true);
    assert_eq!(c.family, narrow.table.families[0].name);
    assert!(c.policy.usd > 0.0);
}

#[test]
fn model_names_resolve_to_families() {
    let t = PriceTable::builtin();
    let name = |m: &str| t.find(m).map(|i| t.families[i].name.as_str());
    assert_eq!(name("claude-sonnet-4-5-20250929"), Some("claude-sonnet-4"));
    assert_eq!(name("claude-3-7-sonnet-20250219"), Some("claude-sonnet-4"));
    assert_eq!(name("claude-opus-4-1-20250805"), Some("claude-opus-4"));
    assert_eq!(name("claude-opus-4-5-20251101"), Some("claude-opus-4-5"));
    assert_eq!(name("claude-opus-4-6"), Some("claude-opus-4-6"));
    assert_eq!(name("claude-opus-4-7"), Some("claude-opus-4-6"));
    assert_eq!(name("claude-opus-4-8"), Some("claude-opus-4-8"));
    assert_eq!(name("claude-opus-5"), Some("claude-opus-4-8"));
    assert_eq!(name("claude-opus-5-20260723"), Some("claude-opus-4-8"));
    assert_eq!(name("claude-opus-5-5"), Some("claude-opus-5-5"));
    assert_eq!(name("claude-fable-5-2"), Some("claude-fable-5-2"));
    assert_eq!(name("claude-mythos-5-2"), Some("claude-fable-5-2"));
    assert_eq!(name("claude-fable-5"), Some("claude-fable-5"));
    assert_eq!(name("claude-sonnet-5-5"), Some("claude-sonnet-5-5"));
    assert_eq!(name("claude-sonnet-5"), Some("claude-sonnet-5"));
    assert_eq!(name("anthropic/claude-haiku-4.5"), Some("claude-haiku-4-5"));
    assert_eq!(name("claude-3-5-haiku-20241022"), Some("claude-haiku-3-5"));
    assert_eq!(name("gpt-5-codex"), Some("gpt-5"));
    assert_eq!(name("gpt-5-mini-2025-08-07"), Some("gpt-5-mini"));
    assert_eq!(name("gpt-5.1-codex-mini"), Some("gpt-5-mini"));
    assert_eq!(name("gpt-5.1-codex-max"), Some("gpt-5"));
    assert_eq!(name("gpt-5.2"), Some("gpt-5-2"));
    assert_eq!(name("gpt-5.2-codex"), Some("gpt-5-2"));
    assert_eq!(name("gpt-5.3-codex"), Some("gpt-5-2"));
    assert_eq!(name("gpt-5.4"), Some("gpt-5-4"));
    assert_eq!(name("gpt-5.4-mini"), Some("gpt-5-4-mini"));
    assert_eq!(name("gpt-5.4-nano"), Some("gpt-5-4-nano"));
    assert_eq!(name("gpt-5.5"), Some("gpt-5-5"));
    assert_eq!(name("gpt-5.6"), Some("gpt-5-6-sol"));
    assert_eq!(name("openai/gpt-5.6-sol"), Some("gpt-5-6-sol"));
    assert_eq!(name("gpt-5.6-terra"), Some("gpt-5-6-terra"));
    assert_eq!(name("gpt-5.6-luna"), Some("gpt-5-6-luna"));
    assert_eq!(name("gpt-6-sol"), Some("gpt-6-sol"));
    assert_eq!(name("gpt-6.2-sol"), Some("gpt-6-2-sol"));
    assert_eq!(name("GPT-4o-mini"), Some("gpt-4o-mini"));
    assert_eq!(name("o3"), Some("o3"));
    assert_eq!(name("foo3"), None);
    assert_eq!(name("gpt-50"), None);
    assert_eq!(name("gemini-2.5-pro"), Some("gemini-2-5-pro"));
    assert_eq!(name("gemini-2.5-flash-lite"), Some("gemini-2-5-flash-lite"));
    assert_eq!(name("models/gemini-2.5-flash"), Some("gemini-2-5-flash"));
    assert_eq!(name("gemini-3-pro-preview"), Some("gemini-3-pro"));
    assert_eq!(name("gemini-3.1-pro-preview"), Some("gemini-3-pro"));
    assert_eq!(name("gemini-3-flash-preview"), Some("gemini-3-flash"));
    assert_eq!(name("gemini-3.1-flash-lite-preview"), Some("gemini-3-1-flash-lite"));
    assert_eq!(name("gemini-3.5-flash"), Some("gemini-3-5-flash"));
    assert_eq!(name("gemini-3.5-flash-lite"), Some("gemini-3-5-flash-lite"));
    assert_eq!(name("gemini-3.6-flash"), Some("gemini-3-6-flash"));
    assert_eq!(name("gemini-3.8-flash"), Some("gemini-3-8-flash"));
    assert_eq!(name(""), None);
    assert_eq!(name("<synthetic>"), None);
    // Every built-in price is sane and cache reads are never dearer than writes.
    for f in &t.families {
        for p in std::iter::once(f.prices).chain(f.long.map(|l| l.prices)) {
            assert!(p.input > 0.0 && p.output >= p.input, "{}", f.name);
            assert!(
                p.cache_read <= p.input && p.cache_write_5m >= p.input && p.cache_write_1h >= p.cache_write_5m,
                "{}",
                f.name
            );
        }
        // A long-context tier is dearer, token for token.
        if let Some(l) = f.long {
            assert!(l.prices.input > f.prices.input && l.prices.output > f.prices.output, "{}", f.name);
        }
    }
}

/// A request over a family's long-context threshold is billed, output
/// included, at its dearer tier: a policy that keeps the prompt under it
/// pays the base tier.
#[test]
fn a_long_prompt_is_billed_at_the_long_context_tier() {
    let usage = Usage {
        uncached_input: 200_000,
        cache_read: 50_000,
        cache_write: 0,
        output: 1_000,
        reasoning: 0,
        provenance: UsageProvenance::OpenAi,
    };
    // gemini-2.5-pro: $1.25 / $10 up to 200K prompt tokens, $2.50 / $15 above.
    let s = session(&[Some("gemini-2.5-pro")], &[Some(usage)]);
    let t = trace(vec![row(0, None, (250_000, 0), (150_000, 0))]);
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!(c.family, "gemini-2-5-pro");
    close(c.baseline.usd, (250_000.0 * 2.50 + 1_000.0 * 15.0) / 1e6);
    close(c.policy.usd, (150_000.0 * 1.25 + 1_000.0 * 10.0) / 1e6);
    // The recorded usage is checked against its own tier.
    let recorded = c.recorded.unwrap_or_else(|| panic!("no check"));
    close(recorded.recorded_usd, (200_000.0 * 2.50 + 50_000.0 * 0.25) / 1e6);
    // At the threshold itself, the base tier.
    let t = trace(vec![row(0, None, (200_000, 0), (200_000, 0))]);
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    close(c.baseline.usd, (200_000.0 * 1.25 + 1_000.0 * 10.0) / 1e6);
}

#[test]
fn a_prices_file_overrides_and_extends_the_table() {
    let t = PriceTable::from_toml(
        r#"
fallback = "local"
[families.claude-sonnet-4]
input = 2.5
[families.local]
provider = "openai"
match = ["qwen3-coder", "local-llm"]
input = 0.2
output = 0.8
"#,
    )
    .expect("valid");
    let f = |m: &str| family(&t, m);
    let s = f("claude-sonnet-4-5");
    assert_eq!((s.prices.input, s.prices.cache_write_5m, s.prices.output), (2.5, 3.75, 15.0));
    let l = f("local-llm-7b");
    assert_eq!(l.name, "local");
    // openai defaults: writes at the input price, reads 0.1×.
    assert_eq!((l.prices.cache_write_5m, l.prices.cache_write_1h), (0.2, 0.2));
    close(l.prices.cache_read, 0.02);
    assert_eq!(t.families[t.fallback].name, "local");
    let err = prices_error;
    assert_eq!(err("[families.x]\ninput = 1.0\n"), "prices: family `x`: a new family needs `input` and `output`");
    assert_eq!(err("fallback = \"nope\"\n"), "prices: fallback `nope` is not a family of the table");
    assert!(err("[families.x]\ninput = -1.0\noutput = 1.0\n").contains("non-negative"));
    assert!(err("[families.x]\ninputs = 1.0\n").starts_with("prices TOML:"));
    assert_eq!(CacheTtl::parse("1h"), Ok(CacheTtl::OneHour));
    assert_eq!(CacheTtl::parse("OFF"), Ok(CacheTtl::Off));
    assert!(CacheTtl::parse("2h").is_err());
}

/// A prices file sets a family's long-context tier: changes a built-in one
/// key by key, adds one (with `above`, `input` and `output`), or removes one
/// with `long = false`; each is what a long prompt is then billed at.
#[test]
fn a_prices_file_sets_the_long_context_tier() {
    let t = PriceTable::from_toml(
        r#"
[families.gemini-3-pro]
input = 2.5
long = { input = 5.0 }
[families.gemini-2-5-pro]
long = false
[families.mine]
provider = "openai"
input = 1.0
output = 4.0
[families.mine.long]
above = 32000
input = 2.0
output = 8.0
"#,
    )
    .expect("valid");
    let f = |m: &str| family(&t, m);
    let builtin = PriceTable::builtin();
    let base = |m: &str| &builtin.families[builtin.find(m).expect(m)];
    let g3 = f("gemini-3-pro-preview");
    let old = base("gemini-3-pro-preview").long.expect("a built-in tier");
    let tier = g3.long.expect("still a tier");
    assert_eq!((tier.above, tier.prices.input, tier.prices.output), (old.above, 5.0, old.prices.output));
    assert_eq!(g3.prices_for(old.above + 1).input, 5.0);
    assert_eq!(g3.prices_for(old.above).input, 2.5);
    assert!(base("gemini-2.5-pro").long.is_some());
    assert_eq!(f("gemini-2.5-pro").long, None);
    let mine = f("mine");
    let tier = mine.long.expect("a new tier");
    assert_eq!((tier.above, tier.prices.input, tier.prices.output), (32_000, 2.0, 8.0));
    // Its cache rates follow the provider's, from its own input price.
    assert_eq!((tier.prices.cache_write_5m, tier.prices.cache_read), (2.0, 0.2));
    assert_eq!(mine.prices_for(32_001).output, 8.0);
    let err = prices_error;
    assert_eq!(
        err("[families.x]\ninput = 1.0\noutput = 1.0\nlong = { input = 2.0 }\n"),
        "prices: family `x`: a new long-context tier needs `above`, `input` and `output`"
    );
    assert!(err("[families.x]\ninput = 1.0\noutput = 1.0\nlong = true\n").contains("`long` takes a table"));
    assert!(err("[families.gemini-3-pro]\nlong = { input = -2.0 }\n").contains("non-negative"));
    assert!(
        err("[families.gemini-3-pro]\nlong = { inputs = 2.0 }\n")
            .starts_with("prices: family `gemini-3-pro`: `long`: unknown field `inputs`, expected one of `above`")
    );
}

fn requests() -> impl Strategy<Value = Vec<(u64, u64, i64)>> {
    // (tokens, prefix share in ‰, gap seconds)
    prop::collection::vec((0u64..400_000, 0u64..=1000, 0i64..7_200), 1..40)
}

fn priced(reqs: &[(u64, u64, i64)], prefix_of: impl Fn(usize, u64, u64) -> u64, ttl: CacheTtl, p: &Prices) -> f64 {
    let mut usd = 0.0;
    for (i, &(tokens, share, gap)) in reqs.iter().enumerate() {
        let prefix = prefix_of(i, tokens, share);
        usd += split_request(tokens, prefix, i == 0, Some(gap * 1000), ttl).usd(p, ttl);
    }
    usd
}

proptest! {
    /// Cost is never negative, the split always adds up to the request, and a
    /// request fully read from cache is never dearer than one fully missed.
    #[test]
    fn cost_is_non_negative_and_reads_never_cost_more(reqs in requests(), fam in 0usize..21, ttl_i in 0usize..3) {
        let table = PriceTable::builtin();
        let p = table.families[fam % table.families.len()].prices;
        let ttl = [CacheTtl::Off, CacheTtl::FiveMinutes, CacheTtl::OneHour][ttl_i];
        for (i, &(tokens, share, gap)) in reqs.iter().enumerate() {
            let s = split_request(tokens, tokens * share / 1000, i == 0, Some(gap * 1000), ttl);
            prop_assert_eq!(s.total(), tokens);
            prop_assert!(s.usd(&p, ttl) >= 0.0);
        }
        let all_read = priced(&reqs, |_, t, _| t, ttl, &p);
        let some_read = priced(&reqs, |_, t, share| t * share / 1000, ttl, &p);
        let all_miss = priced(&reqs, |_, _, _| 0, ttl, &p);
        prop_assert!(all_read <= some_read + 1e-9);
        prop_assert!(some_read <= all_miss + 1e-9);
        prop_assert!(all_read >= 0.0);
    }

    /// Session costs add up: baseline and policy bills count every input token
    /// once, and what is saved is baseline − policy − summaries.
    #[test]
    fn session_bills_count_every_token(reqs in requests()) {
        let mut rows = Vec::new();
        let mut ts = T0;
        let mut prev = 0u64;
        for (i, &(tokens, share, gap)) in reqs.iter().enumerate() {
            ts += gap * 1000;
            let base = (prev + tokens, prev);
            let pol = (tokens, tokens * share / 1000);
            rows.push(row(i, Some(ts), base, pol));
            prev += tokens;
        }
        let t = trace(rows);
        let c = session_cost(&sonnet(reqs.len()), &t, &settings(CacheTtl::FiveMinutes));
        prop_assert_eq!(c.baseline.uncached + c.baseline.cache_read + c.baseline.cache_write, t.metrics.input_tokens_baseline);
        prop_assert_eq!(c.policy.uncached + c.policy.cache_read + c.policy.cache_write, t.metrics.input_tokens_policy);
        prop_assert!(c.baseline.usd >= 0.0 && c.policy.usd >= 0.0);
        prop_assert!((c.saved_usd - round_usd(c.baseline.usd - c.policy.usd)).abs() < 2e-6);
    }
}

/// Replays through the engine: the prefix each call shares with the previous
/// one comes from the replay itself.
mod through_the_engine {
    use super::*;
    use crate::policy::Policy;
    use crate::replay::testkit::session;
    use crate::replay::{ReplayContext, ReplayOptions, replay_session};
    use crate::summarize::Extractive;
    use crate::tokens::Chars4;

    /// Soft-trims each tool result once two newer ones exist: 5,000 chars to
    /// ~4,100, a small saving in the middle of the request.
    fn clearing(ttl_gate: Option<u64>) -> Policy {
        let mut p = Policy {
            name: "clear".into(),
            system_tokens: Some(0),
            estimator: EstimatorKind::Chars4,
            message_overhead_tokens: 0,
            context_window: 1_000_000,
            ..Policy::default()
        };
        p.compact.enabled = false;
        p.prune = crate::policy::Prune {
            enabled: true,
            keep_last: 2,
            soft_trim_chars: Some(4_500),
            head: 2_000,
            tail: 2_000,
            cache_ttl_secs: ttl_gate,
            ..crate::policy::Prune::default()
        };
        p
    }

    fn priced(desc: &str, p: &Policy) -> (SessionTrace, SessionCost) {
        let mut s = session(desc);
        for c in &mut s.calls {
            c.model = Some("claude-sonnet-4-5".into());
        }
        let ctx = ReplayContext {
            estimator: &Chars4,
            summarizer: &Extractive,
            message_tokens: None,
            meter_tokens: None,
            facts: None,
            options: ReplayOptions::default(),
        };
        let t = replay_session(&s, p, &ctx).expect("replay");
        let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
        (t, c)
    }

    const LOOP: &str = "u400 t1 r5000 t1 r5000 t1 r5000 t1 r5000 t1 r5000 t1 r5000 a40";
    const IDLE_LOOP: &str =
        "u400 t1 r5000 g400 t1 r5000 g400 t1 r5000 g400 t1 r5000 g400 t1 r5000 g400 t1 r5000 g400 a40";

    #[test]
    fn clearing_old_results_every_call_breaks_the_cached_prefix() {
        let (t, c) = priced(LOOP, &clearing(None));
        // From call 3 on, each call trims the result two back: fewer tokens
        // sent...
        assert!(t.metrics.input_tokens_policy < t.metrics.input_tokens_baseline);
        // ...but what follows the trimmed result must be written again, at
        // 12.5× the price of reading it.
        assert!(t.calls[3..].iter().all(|r| r.prefix_policy < r.prefix_baseline), "{:?}", t.calls);
        assert!(c.policy.cache_write > c.baseline.cache_write);
        assert!(c.sheds_tokens_costs_more, "{c:?}");
    }

    #[test]
    fn the_cache_ttl_gate_prunes_only_once_the_cache_is_cold() {
        // Calls seconds apart: the gate stays shut, the requests are the baseline.
        let (t, c) = priced(LOOP, &clearing(Some(300)));
        assert!(t.prunes.is_empty());
        assert_eq!(t.metrics.input_tokens_policy, t.metrics.input_tokens_baseline);
        close(c.policy.usd, c.baseline.usd);
        // After idle gaps longer than the TTL the cache is cold anyway: pruning
        // then saves tokens and money.
        let (t, c) = priced(IDLE_LOOP, &clearing(Some(300)));
        assert!(!t.prunes.is_empty());
        assert_eq!(c.baseline.cache_read, 0, "every call follows a 400 s gap");
        assert!(c.policy.usd < c.baseline.usd);
        assert!(!c.sheds_tokens_costs_more);
        // Ungated on the busy loop, for contrast, it costs more.
        let (_, ungated) = priced(LOOP, &clearing(None));
        assert!(ungated.sheds_tokens_costs_more);
    }
}

/// Pruning a session that never nears its window breaks the cached prefix and
/// can cost more than doing nothing; the `default` preset starts pruning only
/// at half the window, so such a session costs exactly what the agent paid.
#[test]
fn the_default_preset_costs_what_the_agent_paid_far_from_the_window() {
    use crate::replay::testkit::session;
    use crate::replay::{ReplayContext, ReplayOptions, replay_session};
    // 25 turns that each read ~2,000 tokens, a minute apart: about 53K tokens
    // at the end, a quarter of a 200K window. Ungated, the preset prunes at
    // turn 23, and the three calls left do not earn back the broken prefix.
    let turns: Vec<&str> = (0..25).map(|_| "u100 t1 r8000 a20 g60").collect();
    let s = session(&turns.join(" "));
    let mut p = crate::presets::get("default").unwrap().with_window(200_000).unwrap();
    p.estimator = EstimatorKind::Chars4;
    let cost = |p: &crate::policy::Policy| {
        let ctx = ReplayContext {
            estimator: &crate::tokens::Chars4,
            summarizer: &crate::summarize::Extractive,
            message_tokens: None,
            meter_tokens: None,
            facts: None,
            options: ReplayOptions::default(),
        };
        let t = replay_session(&s, p, &ctx).unwrap();
        (session_cost(&s, &t, &settings(CacheTtl::FiveMinutes)), t.prunes.len())
    };
    let (c, prunes) = cost(&p);
    assert_eq!(prunes, 0);
    close(c.policy.usd, c.baseline.usd);
    // The same policy pruning from the first call sheds tokens and pays more.
    p.prune.start_ratio = None;
    let (c, prunes) = cost(&p);
    assert!(prunes > 0);
    assert!(c.sheds_tokens_costs_more && c.policy.usd > c.baseline.usd, "{c:?}");
}

/// Unknown model names are counted per name, at most
/// `MAX_UNKNOWN_MODELS` of them; the calls of further names, and of names
/// that are no plain model name, count under one key, so the sum is kept.
#[test]
fn unknown_model_names_are_counted_within_a_bound() {
    let names: Vec<String> = (0..30).map(|i| format!("mystery-{i:02}")).chain(["<b>\n".to_string()]).collect();
    let s = session(&names.iter().map(|n| Some(n.as_str())).collect::<Vec<_>>(), &[]);
    let rows = (0..names.len()).map(|i| row(i, None, (1_000, 0), (1_000, 0))).collect();
    let c = session_cost(&s, &trace(rows), &settings(CacheTtl::FiveMinutes));
    assert_eq!(c.fallback_calls, 31);
    assert_eq!(c.unknown_models.len(), MAX_UNKNOWN_MODELS + 1);
    assert_eq!(c.unknown_models.get("mystery-00"), Some(&1));
    assert_eq!(c.unknown_models.get(OTHER_UNKNOWN_MODELS), Some(&11));
    assert_eq!(c.unknown_models.values().sum::<u64>(), 31);
}

/// A total keeps the unknown names of the most calls across its sessions,
/// not the first it met: a name seen late in many sessions is listed.
#[test]
fn a_total_keeps_the_unknown_names_of_the_most_calls() {
    let mut totals = CostTotals::default();
    for i in 0..25 {
        let mut c = SessionCost::default();
        c.unknown_models.insert(format!("rare-{i:02}"), 1);
        c.unknown_models.insert(OTHER_UNKNOWN_MODELS.to_string(), 2);
        c.fallback_calls = 3;
        totals.add(&c);
    }
    for _ in 0..3 {
        let mut c = SessionCost::default();
        c.unknown_models.insert("late-and-common".to_string(), 10);
        c.fallback_calls = 10;
        totals.add(&c);
    }
    let t = totals.finish();
    assert_eq!(t.unknown_models.len(), MAX_UNKNOWN_MODELS + 1);
    assert_eq!(t.unknown_models.get("late-and-common"), Some(&30));
    // The 19 first rare names by name are kept; the other 6 and every
    // session's own others are counted together.
    assert_eq!(t.unknown_models.get("rare-18"), Some(&1));
    assert_eq!(t.unknown_models.get("rare-19"), None);
    assert_eq!(t.unknown_models.get(OTHER_UNKNOWN_MODELS), Some(&(6 + 25 * 2)));
    assert_eq!(t.unknown_models.values().sum::<u64>(), t.fallback_calls);
}
