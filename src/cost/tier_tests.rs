//! Prices that depend on the call: fast mode's multiple per family, OpenAI's
//! cache writes and long prompts by model generation, and several prompt-length
//! tiers from a prices file.

use super::tests::{MIN, T0, close, family, prices_error, row, session, settings, trace};
use super::*;
use crate::model::{Usage, UsageProvenance};

/// A call served in fast mode is billed at its model's fast-mode multiple of
/// every price, baseline, policy and recorded usage alike: Opus 4.6 and 4.7 at
/// 6×, Opus 4.8, 5 and 5.5 at 2×. A model of no known multiple (Fable 5.2) is priced
/// at the standard rates, and the cost counts such calls.
#[test]
fn a_fast_call_is_billed_at_its_models_fast_multiple() {
    let usage = Usage {
        uncached_input: 1_000,
        cache_read: 9_000,
        cache_write: 0,
        output: 500,
        reasoning: 0,
        provenance: UsageProvenance::Anthropic,
    };
    let priced = |model: &str, fast: bool| {
        let mut s = session(&[Some(model), Some(model)], &[Some(usage), Some(usage)]);
        s.calls[1].fast = fast;
        let t = trace(vec![
            row(0, Some(T0), (10_000, 0), (10_000, 0)),
            row(1, Some(T0 + MIN), (20_000, 10_000), (8_000, 0)),
        ]);
        session_cost(&s, &t, &settings(CacheTtl::FiveMinutes))
    };
    // Opus 4.5 to 5 standard: $5 input, $6.25 5m write, $0.50 read, $25 output.
    let standard = |m: f64| {
        let first = (10_000.0 * 6.25 + 500.0 * 25.0) / 1e6;
        let base = first + m * (10_000.0 * 0.50 + 10_000.0 * 6.25 + 500.0 * 25.0) / 1e6;
        let policy = first + m * (8_000.0 * 6.25 + 500.0 * 25.0) / 1e6;
        let recorded = (1_000.0 * 5.0 + 9_000.0 * 0.50) / 1e6 * (1.0 + m);
        (base, policy, recorded)
    };
    for (model, family, m) in [
        ("claude-opus-4-6", "claude-opus-4-6", 6.0),
        ("claude-opus-4-7", "claude-opus-4-6", 6.0),
        ("claude-opus-4-8", "claude-opus-4-8", 2.0),
        ("claude-opus-5", "claude-opus-4-8", 2.0),
    ] {
        let c = priced(model, true);
        assert_eq!((c.family.as_str(), c.fast_calls, c.fast_at_standard_calls), (family, 1, 0), "{model}");
        let (base, policy, recorded) = standard(m);
        close(c.baseline.usd, base);
        close(c.policy.usd, policy);
        close(c.recorded.as_ref().map_or(0.0, |r| r.recorded_usd), recorded);
        // The same call at standard speed costs the standard prices.
        let slow = priced(model, false);
        assert_eq!((slow.fast_calls, slow.fast_at_standard_calls), (0, 0));
        close(slow.baseline.usd, standard(1.0).0);
        assert!(c.saved_usd > slow.saved_usd, "{model}: the policy's saving on the fast call is dearer");
    }
    // No multiple known: standard rates, counted.
    let c = priced("claude-opus-4-5", true);
    assert_eq!((c.fast_calls, c.fast_at_standard_calls), (1, 1));
    let fable = priced("claude-fable-5-2", true);
    assert_eq!((fable.fast_calls, fable.fast_at_standard_calls), (1, 1));
    assert_eq!(fable.baseline.usd, priced("claude-fable-5-2", false).baseline.usd);
    // Totals carry both counts.
    let mut totals = CostTotals::default();
    totals.add(&c);
    totals.add(&priced("claude-opus-5", true));
    let totals = totals.finish();
    assert_eq!((totals.fast_calls, totals.fast_at_standard_calls), (2, 1));
}

/// OpenAI bills cache writes at the input price before GPT-5.6 and at 1.25×
/// it from GPT-5.6 on; from GPT-5.4 on, a prompt over 272K tokens bills the
/// whole request at 2× input and 1.5× output.
#[test]
fn openai_cache_writes_and_long_prompts_follow_the_model_generation() {
    let usage = Usage {
        uncached_input: 10_000,
        cache_read: 0,
        cache_write: 0,
        output: 1_000,
        reasoning: 0,
        provenance: UsageProvenance::OpenAi,
    };
    let first = |model: &str, tokens: u64| {
        let s = session(&[Some(model)], &[Some(usage)]);
        session_cost(&s, &trace(vec![row(0, Some(T0), (tokens, 0), (tokens, 0))]), &settings(CacheTtl::FiveMinutes))
    };
    // The first request writes its whole prompt to the cache.
    close(first("gpt-5.6-terra", 10_000).baseline.usd, (10_000.0 * 2.0 * 1.25 + 1_000.0 * 12.0) / 1e6);
    close(first("gpt-5.6", 10_000).baseline.usd, (10_000.0 * 4.0 * 1.25 + 1_000.0 * 20.0) / 1e6);
    close(first("gpt-5.4", 10_000).baseline.usd, (10_000.0 * 2.50 + 1_000.0 * 15.0) / 1e6);
    close(first("gpt-5.3-codex", 10_000).baseline.usd, (10_000.0 * 1.75 + 1_000.0 * 14.0) / 1e6);
    // Over 272K: 2× input, 1.5× output; at 272K itself, the base tier.
    close(first("gpt-5.5", 300_000).baseline.usd, (300_000.0 * 10.0 + 1_000.0 * 45.0) / 1e6);
    close(first("gpt-5.5", 272_000).baseline.usd, (272_000.0 * 5.0 + 1_000.0 * 30.0) / 1e6);
    close(first("gpt-5.6-luna", 300_000).baseline.usd, (300_000.0 * 0.40 * 1.25 + 1_000.0 * 1.80) / 1e6);
    // No tier before GPT-5.4.
    close(first("gpt-5.2", 300_000).baseline.usd, (300_000.0 * 1.75 + 1_000.0 * 14.0) / 1e6);
}

/// A prices file sets a family's fast-mode multiple, or removes it.
#[test]
fn a_prices_file_sets_the_fast_mode_multiple() {
    let t = PriceTable::from_toml(
        r#"
[families.claude-fable-5-2]
fast = 2.5
[families.claude-opus-4-6]
fast = false
[families.mine]
input = 1.0
output = 4.0
fast = 3
"#,
    )
    .expect("valid");
    let f = |m: &str| family(&t, m);
    assert_eq!(f("claude-fable-5-2").fast, Some(2.5));
    assert_eq!(f("claude-opus-4-6").fast, None);
    assert_eq!(f("claude-opus-5").fast, Some(2.0));
    let mine = f("mine");
    assert_eq!(mine.fast, Some(3.0));
    assert_eq!(mine.prices_at(10, true).output, 12.0);
    assert_eq!(mine.prices_at(10, true).cache_write_5m, 3.75);
    assert_eq!(mine.prices_at(10, false).output, 4.0);
    let err = prices_error;
    for bad in ["0", "-2.0", "true", "\"6x\""] {
        assert_eq!(
            err(&format!("[families.claude-opus-4-8]\nfast = {bad}\n")),
            "prices: family `claude-opus-4-8`: `fast` takes a positive number (the fast-mode multiple of every price) or false",
            "{bad}"
        );
    }
}

/// A prices file gives a family several prompt-length tiers (Qwen3 Coder's
/// four): each request is billed at the last tier its prompt passes, and
/// tiers out of order, or an array tier short of a key, are errors naming
/// the tier.
#[test]
fn a_prices_file_sets_several_prompt_length_tiers() {
    let t = PriceTable::from_toml(
        r#"
        [families.qwen3-coder-plus]
        provider = "other"
        input = 1.0
        output = 5.0
        [[families.qwen3-coder-plus.long]]
        above = 32000
        input = 1.8
        output = 9.0
        [[families.qwen3-coder-plus.long]]
        above = 128000
        input = 3.0
        output = 15.0
        cache_read = 0.6
        [[families.qwen3-coder-plus.long]]
        above = 256000
        input = 6.0
        output = 60.0
        "#,
    )
    .expect("valid tiers");
    let q = family(&t, "qwen3-coder-plus-2025-09-23");
    let at = |prompt: u64| {
        let p = q.prices_for(prompt);
        (p.input, p.output)
    };
    assert_eq!(at(32_000), (1.0, 5.0));
    assert_eq!(at(32_001), (1.8, 9.0));
    assert_eq!(at(128_000), (1.8, 9.0));
    assert_eq!(at(128_001), (3.0, 15.0));
    assert_eq!(at(256_001), (6.0, 60.0));
    // A tier's cache rates follow its input unless given.
    assert_eq!(q.prices_for(200_000).cache_read, 0.6);
    close(q.prices_for(300_000).cache_read, 0.6);
    // Tiers are given in order; `long = false` drops a family's tiers.
    let t = PriceTable::from_toml(
        "[families.q]\ninput = 1.0\noutput = 5.0\n[[families.q.long]]\nabove = 10\ninput = 2.0\noutput = 6.0\n\
         [[families.q.long]]\nabove = 20\ninput = 3.0\noutput = 7.0\n",
    )
    .expect("two tiers");
    assert_eq!(family(&t, "q").prices_for(21).input, 3.0);
    let e = prices_error(
        "[families.q]\ninput = 1.0\noutput = 5.0\n[[families.q.long]]\nabove = 20\ninput = 2.0\noutput = 6.0\n\
         [[families.q.long]]\nabove = 10\ninput = 3.0\noutput = 7.0\n",
    );
    assert!(e.contains("`q`") && e.contains("must ascend") && e.contains("above = 10"), "{e}");
    let e = prices_error("[families.q]\ninput = 1.0\noutput = 5.0\n[[families.q.long]]\nabove = 20\ninput = 2.0\n");
    assert!(e.contains("`long` tier 1") && e.contains("needs `above`, `input` and `output`"), "{e}");
    let e = prices_error("[families.gemini-2-5-pro]\nlong = 3");
    assert!(e.contains("an array of them"), "{e}");
    let t = PriceTable::from_toml("[families.gemini-2-5-pro]\nlong = false").expect("no tier");
    assert_eq!(family(&t, "gemini-2.5-pro").prices_for(900_000).input, 1.25);
}
