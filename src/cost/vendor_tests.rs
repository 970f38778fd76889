//! Other vendors' families (DeepSeek, Z.ai, Moonshot, xAI, MiniMax): which
//! names match them, what a call costs at their rates, xAI's tiers and
//! DeepSeek's hours.

use super::tests::{close, family, output_only, prices_error, row, session, settings, trace};
use super::*;

#[test]
fn other_vendors_models_resolve_by_name_and_their_variants_do_not() {
    let t = PriceTable::builtin();
    // Under their own names and OpenRouter's; a longer name of a family
    // matched by name only is unknown, not its sibling's price.
    for (model, family) in [
        ("deepseek-chat", Some("deepseek-chat")),
        ("deepseek/deepseek-v3.2-exp", Some("deepseek-v3-2")),
        ("deepseek-reasoner", Some("deepseek-reasoner")),
        ("deepseek-chat-v3.1", None),
        ("deepseek-v4-flash", Some("deepseek-flash")),
        ("deepseek/deepseek-v4-flash-vision-exp", Some("deepseek-flash")),
        ("deepseek-flash", Some("deepseek-flash")),
        ("deepseek-v4-pro", Some("deepseek-v4-pro")),
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
    // In V3.2's time (2026-01-05 12:00 UTC).
    let t0 = crate::read::time::parse_iso("2026-01-05T12:00:00Z").unwrap_or_default();
    let t =
        trace(vec![row(0, Some(t0), (4_000, 0), (4_000, 0)), row(1, Some(t0 + 1_000), (8_000, 4_000), (6_000, 4_000))]);
    let c = session_cost(&s, &t, &settings(CacheTtl::FiveMinutes));
    assert_eq!((c.family.as_str(), c.fallback_calls, c.earlier_price_calls), ("deepseek-chat", 0, 2));
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

/// 2026-11-30 00:00 UTC, a Monday.
const MONDAY: i64 = 1_795_996_800_000;
const HOUR: i64 = 3_600_000;

/// DeepSeek bills a call at half its listed prices outside 01:00–04:00 and
/// 06:00–10:00 UTC on weekdays, by the call's own timestamp; a call of no
/// timestamp at the listed prices, and both kinds are counted.
#[test]
fn a_deepseek_call_is_billed_at_the_prices_of_its_hour() {
    let n = 4;
    let s = session(&vec![Some("deepseek-flash"); n], &vec![Some(output_only(1_000)); n]);
    let t = trace(vec![
        row(0, Some(MONDAY + 4 * HOUR - 60_000), (10_000, 0), (10_000, 0)),
        row(1, Some(MONDAY + 4 * HOUR), (10_000, 0), (10_000, 0)),
        row(2, Some(MONDAY + 5 * 24 * HOUR + 2 * HOUR), (10_000, 0), (10_000, 0)),
        row(3, None, (10_000, 0), (10_000, 0)),
    ]);
    let c = session_cost(&s, &t, &settings(CacheTtl::Off));
    assert_eq!((c.family.as_str(), c.fallback_calls), ("deepseek-flash", 0));
    // Peak (03:59 Monday, and no timestamp): 10,000 × $0.30 + 1,000 × $1.20;
    // off-peak (04:00 Monday, 02:00 Saturday): half of it.
    let peak = 10_000.0 * 0.30 + 1_000.0 * 1.20;
    close(c.baseline.usd, (2.0 * peak + 2.0 * peak / 2.0) / 1e6);
    close(c.policy.usd, c.baseline.usd);
    assert_eq!((c.off_peak_calls, c.untimed_listed_calls), (2, 1));
    // A family with one price at every hour and date counts neither.
    let s = session(&vec![Some("glm-5"); n], &vec![Some(output_only(1_000)); n]);
    let c = session_cost(&s, &t, &settings(CacheTtl::Off));
    assert_eq!((c.off_peak_calls, c.untimed_listed_calls), (0, 0));
}

/// A prices file gives a family a schedule, changes a built-in one key by
/// key, or removes it; a bad window names its family and the form expected.
#[test]
fn a_prices_file_sets_changes_and_removes_an_off_peak_schedule() {
    let t = PriceTable::from_toml(
        r#"
        [families.my-model]
        input = 1.0
        output = 2.0
        [families.my-model.off_peak]
        share = 0.25
        peak_utc = ["22:00-02:00"]

        [families.deepseek-v4-pro.off_peak]
        share = 0.4

        [families.deepseek-flash]
        off_peak = false
        "#,
    )
    .expect("valid prices file");
    let mine = family(&t, "my-model");
    let at = |h: i64| Some(MONDAY + h * HOUR);
    assert_eq!(mine.prices_when(1_000, false, at(23)).input, 1.0);
    assert_eq!(mine.prices_when(1_000, false, at(12)).input, 0.25);
    // Weekends are off-peak only where the file says so.
    assert_eq!(mine.prices_when(1_000, false, Some(MONDAY + 5 * 24 * HOUR + HOUR)).input, 1.0);
    let pro = family(&t, "deepseek-v4-pro");
    assert_eq!(pro.prices_when(1_000, false, at(2)).output, 3.96);
    close(pro.prices_when(1_000, false, at(12)).output, 3.96 * 0.4);
    assert_eq!(family(&t, "deepseek-flash").prices_when(1_000, false, at(12)).input, 0.30);

    let e = prices_error("[families.deepseek-flash.off_peak]\npeak_utc = [\"1-4\"]");
    assert!(e.contains("deepseek-flash") && e.contains("01:00-04:00"), "{e}");
    let e = prices_error("[families.x]\ninput = 1.0\noutput = 2.0\n[families.x.off_peak]\nshare = 0.5");
    assert!(e.contains("needs `share` and `peak_utc`"), "{e}");
    let e = prices_error("[families.deepseek-flash]\noff_peak = 0.5");
    assert!(e.contains("`off_peak` takes a table"), "{e}");
    let e = prices_error("[families.deepseek-flash.off_peak]\nshare = -1.0");
    assert!(e.contains("non-negative"), "{e}");
    let e = prices_error("[families.deepseek-flash.off_peak]\nhours = 3");
    assert!(e.contains("off_peak") && e.contains("hours"), "{e}");
}

/// The prices file docs/cost.md shows is one a run accepts, schedules included.
#[test]
fn the_documented_prices_file_is_valid() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cost.md")).expect("docs/cost.md");
    let start = doc.find("```toml\n").expect("a TOML example") + "```toml\n".len();
    let end = start + doc[start..].find("```").expect("its end");
    let t = PriceTable::from_toml(&doc[start..end]).expect("the documented prices file");
    let mine = family(&t, "my-model");
    assert_eq!(mine.off_peak.as_ref().map(|o| o.share), Some(0.5));
    assert_eq!(mine.earlier.iter().map(|e| (e.prices.input, e.prices.output)).collect::<Vec<_>>(), [(0.4, 1.6)]);
    assert_eq!(family(&t, "deepseek-flash").off_peak.as_ref().map(|o| o.weekends_off_peak), Some(false));
    let qwen = family(&t, "qwen3-coder-plus");
    assert_eq!((qwen.prices_for(32_001).input, qwen.prices_for(128_001).output), (1.8, 15.0));
}
