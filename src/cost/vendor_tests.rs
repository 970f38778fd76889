//! Other vendors' families (DeepSeek, Z.ai, Moonshot, xAI, MiniMax): which
//! names match them, what a call costs at their rates, and xAI's tiers.

use super::tests::{T0, close, family, output_only, row, session, settings, trace};
use super::*;

#[test]
fn other_vendors_models_resolve_by_name_and_their_variants_do_not() {
    let t = PriceTable::builtin();
    // Under their own names and OpenRouter's; a longer name of a family
    // matched by name only is unknown, not its sibling's price.
    for (model, family) in [
        ("deepseek-chat", Some("deepseek-chat")),
        ("deepseek/deepseek-v3.2-exp", Some("deepseek-chat")),
        ("deepseek-reasoner", Some("deepseek-chat")),
        ("deepseek-chat-v3.1", None),
        ("deepseek-v4-flash", None),
        ("z-ai/glm-4.6", Some("glm-4-6")),
        ("GLM-4.5-Air", Some("glm-4-5-air")),
        ("glm-4.7-flash", None),
        ("glm-5", Some("glm-5")),
        ("moonshotai/kimi-k2", Some("kimi-k2")),
        ("kimi-k2-0905-preview", Some("kimi-k2")),
        ("kimi-k2-thinking", Some("kimi-k2")),
        ("kimi-k2-thinking-turbo", Some("kimi-k2-turbo")),
        ("kimi-k2-turbo-preview", Some("kimi-k2-turbo")),
        ("kimi-k2.5", Some("kimi-k2-5")),
        ("moonshot/kimi-k2.6", Some("kimi-k2-6")),
        ("kimi-k2.7-code", Some("kimi-k2-7-code")),
        ("kimi-k2.7-code-highspeed", None),
        ("moonshot/kimi-k3.1-pro", Some("kimi-k3-1-pro")),
        ("kimi-k3.1-pro-highspeed", Some("kimi-k3-1-pro-highspeed")),
        ("kimi-k3", Some("kimi-k3")),
        ("x-ai/grok-code-fast-1", Some("grok-code-fast-1")),
        ("grok-4-0709", Some("grok-4")),
        ("grok-4", Some("grok-4")),
        ("grok-4.1", None),
        ("grok-4-fast-non-reasoning", Some("grok-4-fast")),
        ("x-ai/grok-4.1-fast", Some("grok-4-fast")),
        ("grok-4.20-0309-reasoning", Some("grok-4-20")),
        ("grok-4.7", Some("grok-4-7")),
        ("grok-4.6", Some("grok-4-6")),
        ("x-ai/grok-4.5", Some("grok-4-5")),
        ("grok-4.3", Some("grok-4-3")),
        ("MiniMax-M2", Some("minimax-m2")),
        ("minimax/minimax-m2.1", None),
    ] {
        assert_eq!(t.find(model).map(|i| t.families[i].name.as_str()), family, "{model}");
    }
}

/// A DeepSeek session is priced at DeepSeek's rates, not the fallback's: a
/// write at the input price, a hit at the cached price.
#[test]
fn a_deepseek_session_is_billed_at_deepseeks_rates() {
    let s =
        session(&[Some("deepseek-chat"), Some("deepseek-chat")], &[Some(output_only(1_000)), Some(output_only(500))]);
    let t =
        trace(vec![row(0, Some(T0), (4_000, 0), (4_000, 0)), row(1, Some(T0 + 1_000), (8_000, 4_000), (6_000, 4_000))]);
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!((c.family.as_str(), c.fallback_calls), ("deepseek-chat", 0));
    // Baseline: 4,000 × 0.28 + (4,000 × 0.028 + 4,000 × 0.28) + 1,500 × 0.42.
    close(c.baseline.usd, (4_000.0 * 0.28 + 4_000.0 * 0.028 + 4_000.0 * 0.28 + 1_500.0 * 0.42) / 1e6);
    // Policy: 4,000 × 0.28 + (4,000 × 0.028 + 2,000 × 0.28) + 1,500 × 0.42.
    close(c.policy.usd, (4_000.0 * 0.28 + 4_000.0 * 0.028 + 2_000.0 * 0.28 + 1_500.0 * 0.42) / 1e6);
}

/// xAI bills a prompt that reaches 200K tokens (Grok 4.20, 4.3 to 4.7), or passes
/// 128K (Grok 4), at twice every price; Grok 4 Fast has no tier we know of.
#[test]
fn xai_bills_a_long_prompt_at_its_tier() {
    let t = PriceTable::builtin();
    let g420 = family(&t, "grok-4.20-0309-reasoning");
    assert_eq!(g420.prices_for(199_999).input, 1.25);
    assert_eq!((g420.prices_for(200_000).input, g420.prices_for(200_000).output), (2.50, 5.0));
    for model in ["grok-4.7", "grok-4.6", "grok-4.5"] {
        let g = family(&t, model);
        assert_eq!((g.prices_for(199_999).input, g.prices_for(199_999).output), (2.0, 6.0), "{model}");
        assert_eq!((g.prices_for(200_000).cache_read, g.prices_for(200_000).output), (1.0, 12.0), "{model}");
    }
    let g43 = family(&t, "grok-4.3");
    assert_eq!((g43.prices_for(199_999).cache_read, g43.prices_for(200_000).input), (0.20, 2.50));
    let g4 = family(&t, "grok-4-0709");
    assert_eq!(g4.prices_for(128_000).input, 3.0);
    assert_eq!(g4.prices_for(128_001).input, 6.0);
    assert_eq!(family(&t, "grok-4-fast").prices_for(1_900_000).input, 0.20);
}

/// Moonshot's newer models at their own rates, not K2's or K3's.
#[test]
fn kimi_k2_7_code_and_k3_1_pro_have_their_own_prices() {
    let t = PriceTable::builtin();
    let rates = |m: &str| {
        let p = family(&t, m).prices_for(1_000);
        (p.input, p.cache_read, p.output, p.cache_write_5m)
    };
    assert_eq!(rates("kimi-k2.7-code"), (0.95, 0.19, 4.0, 0.95));
    assert_eq!(rates("kimi-k3.1-pro"), (2.0, 0.20, 10.0, 2.0));
    assert_eq!(rates("kimi-k3.1-pro-highspeed"), (4.0, 0.20, 20.0, 4.0));
}
