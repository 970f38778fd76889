//! Prices by date: a call is billed at the prices its model had when it was
//! sent (o3 before its cut, DeepSeek's names before V4 and before its hours),
//! set, replaced and removed by a prices file.

use super::tests::{close, family, output_only, prices_error, row, session, settings, trace};
use super::*;

/// Milliseconds since the Unix epoch of an RFC 3339 time.
fn at(iso: &str) -> i64 {
    crate::read::time::parse_iso(iso).unwrap_or_else(|| panic!("test time {iso}"))
}

/// The input and output price of a call of `model` of 1,000 prompt tokens sent at `when`.
fn rates(t: &PriceTable, model: &str, when: Option<&str>) -> (f64, f64) {
    let p = family(t, model).prices_when(1_000, false, when.map(at));
    (p.input, p.output)
}

#[test]
fn built_in_families_bill_the_prices_of_the_calls_date() {
    let t = PriceTable::builtin();
    // o3 before and after its cut; a call of no time at today's prices.
    assert_eq!(rates(&t, "o3", Some("2025-06-09T23:59:59Z")), (10.0, 40.0));
    assert_eq!(rates(&t, "o3-2025-04-16", Some("2025-06-10T00:00:00Z")), (2.0, 8.0));
    assert_eq!(rates(&t, "o3", None), (2.0, 8.0));
    // deepseek-chat served V3.2, then V4 Flash; a V3.2 name stays V3.2.
    assert_eq!(rates(&t, "deepseek-chat", Some("2026-04-23T12:00:00Z")), (0.28, 0.42));
    assert_eq!(rates(&t, "deepseek-reasoner", Some("2026-05-04T03:00:00Z")), (0.14, 0.28));
    assert_eq!(rates(&t, "deepseek/deepseek-v3.2", Some("2026-05-04T03:00:00Z")), (0.28, 0.42));
    // V4 Flash and Pro were flat until the hours began: a Monday at 03:00
    // UTC is peak under the later schedule, not before it.
    assert_eq!(rates(&t, "deepseek-v4-flash", Some("2026-06-01T03:00:00Z")), (0.14, 0.28));
    assert_eq!(rates(&t, "deepseek-v4-pro", Some("2026-06-01T12:00:00Z")), (0.435, 0.87));
    assert_eq!(rates(&t, "deepseek-v4-flash", Some("2026-11-30T03:00:00Z")), (0.30, 1.20));
    assert_eq!(rates(&t, "deepseek-v4-flash", Some("2026-11-30T12:00:00Z")), (0.15, 0.60));
    // 2025: V3 and R1 priced apart, half and a quarter at night (16:30–00:30
    // UTC, every day), V3's launch promotion, then V3.1 for both names.
    assert_eq!(rates(&t, "deepseek-chat", Some("2025-02-01T12:00:00Z")), (0.14, 0.28));
    assert_eq!(rates(&t, "deepseek-reasoner", Some("2025-02-01T12:00:00Z")), (0.55, 2.19));
    assert_eq!(rates(&t, "deepseek-chat", Some("2025-03-01T16:29:00Z")), (0.27, 1.10));
    assert_eq!(rates(&t, "deepseek-chat", Some("2025-03-01T16:30:00Z")), (0.135, 0.55));
    assert_eq!(rates(&t, "deepseek-reasoner", Some("2025-03-02T00:29:00Z")), (0.1375, 0.5475));
    assert_eq!(rates(&t, "deepseek-reasoner", Some("2025-03-02T00:30:00Z")), (0.55, 2.19));
    assert_eq!(rates(&t, "deepseek-chat", Some("2025-09-05T15:59:59Z")), (0.27, 1.10));
    assert_eq!(rates(&t, "deepseek-reasoner", Some("2025-09-05T20:00:00Z")), (0.56, 1.68));
    assert_eq!(rates(&t, "deepseek-chat", Some("2025-10-01T20:00:00Z")), (0.28, 0.42));
    // A change announced for a later date: Gemini 3.8 Flash's promotion ends with 2026.
    assert_eq!(rates(&t, "gemini-3.8-flash-preview", Some("2026-12-31T23:59:59Z")), (0.75, 3.75));
    assert_eq!(rates(&t, "gemini-3.8-flash", Some("2027-01-01T00:00:00Z")), (1.50, 7.50));
    assert_eq!(rates(&t, "gemini-3.7-flash", Some("2027-06-01T00:00:00Z")), (0.75, 3.75));
}

/// Each call of a session at its own date's prices, its summaries too; the
/// calls billed at earlier prices and those of no time are counted.
#[test]
fn a_session_across_a_price_change_bills_each_call_at_its_date() {
    let n = 3;
    let s = session(&vec![Some("o3"); n], &vec![Some(output_only(1_000)); n]);
    let t = trace(vec![
        row(0, Some(at("2025-06-09T10:00:00Z")), (10_000, 0), (10_000, 0)),
        row(1, Some(at("2025-06-10T10:00:00Z")), (10_000, 0), (10_000, 0)),
        row(2, None, (10_000, 0), (10_000, 0)),
    ]);
    let c = session_cost(&s, &t, &settings(CacheTtl::Off));
    assert_eq!((c.family.as_str(), c.fallback_calls), ("o3", 0));
    let before = 10_000.0 * 10.0 + 1_000.0 * 40.0;
    let after = 10_000.0 * 2.0 + 1_000.0 * 8.0;
    close(c.baseline.usd, (before + 2.0 * after) / 1e6);
    assert_eq!((c.earlier_price_calls, c.off_peak_calls, c.untimed_listed_calls), (1, 0, 1));
    let mut totals = CostTotals::default();
    totals.add(&c);
    // A call in an earlier period of its own hours counts as both.
    let s = session(&[Some("deepseek-reasoner")], &[Some(output_only(2_000))]);
    let t = trace(vec![row(0, Some(at("2025-03-03T20:00:00Z")), (10_000, 0), (10_000, 0))]);
    let c = session_cost(&s, &t, &settings(CacheTtl::Off));
    close(c.baseline.usd, (10_000.0 * 0.1375 + 2_000.0 * 0.5475) / 1e6);
    assert_eq!((c.earlier_price_calls, c.off_peak_calls, c.untimed_listed_calls), (1, 1, 0));
    totals.add(&c);
    assert_eq!((totals.earlier_price_calls, totals.off_peak_calls, totals.untimed_listed_calls), (2, 1, 1));
}

/// A prices file gives a family earlier prices (a date or a time, a TOML
/// date too), replaces a built-in family's, or removes them; a fast multiple
/// bills earlier prices too. Bad periods name the family and what is wrong.
#[test]
fn a_prices_file_sets_replaces_and_removes_earlier_prices() {
    let t = PriceTable::from_toml(
        r#"
        [families.my-model]
        input = 1.0
        output = 4.0
        fast = 2
        [[families.my-model.earlier]]
        until = "2026-01-01"
        input = 3.0
        output = 12.0
        cache_read = 0.5
        [[families.my-model.earlier]]
        until = 2026-03-01T12:00:00Z
        input = 2.0
        output = 8.0
        off_peak = { share = 0.5, peak_utc = ["00:00-12:00"] }

        [[families.deepseek-chat.earlier]]
        until = "2026-05-01T09:00:00+08:00"
        input = 0.5
        output = 1.0

        [families.o3]
        earlier = false
        "#,
    )
    .expect("valid prices file");
    assert_eq!(rates(&t, "my-model", Some("2025-12-31T23:59:59Z")), (3.0, 12.0));
    assert_eq!(family(&t, "my-model").prices_when(1_000, false, Some(at("2025-12-31T00:00:00Z"))).cache_read, 0.5);
    // An earlier period's cache rates default from its input, as a family's do.
    close(family(&t, "my-model").prices_when(1_000, false, Some(at("2026-02-01T00:00:00Z"))).cache_read, 0.2);
    assert_eq!(rates(&t, "my-model", Some("2026-03-01T11:59:59Z")), (2.0, 8.0));
    // That period's own hours: half price from noon.
    assert_eq!(rates(&t, "my-model", Some("2026-02-27T12:00:00Z")), (1.0, 4.0));
    assert_eq!(rates(&t, "my-model", Some("2026-03-01T12:00:00Z")), (1.0, 4.0));
    assert_eq!(family(&t, "my-model").prices_when(1_000, true, Some(at("2025-06-01T00:00:00Z"))).output, 24.0);
    // The file's periods replace the built-in ones: 09:00 in UTC+8 is 01:00 UTC.
    assert_eq!(rates(&t, "deepseek-chat", Some("2026-05-01T00:59:00Z")), (0.5, 1.0));
    assert_eq!(rates(&t, "deepseek-chat", Some("2026-05-01T01:00:00Z")), (0.14, 0.28));
    assert_eq!(rates(&t, "deepseek-chat", Some("2026-01-01T00:00:00Z")), (0.5, 1.0));
    assert_eq!(rates(&t, "o3", Some("2025-05-01T00:00:00Z")), (2.0, 8.0));

    let two = |a: &str, b: &str| {
        format!(
            "[families.o3]\n[[families.o3.earlier]]\nuntil = \"{a}\"\ninput = 1.0\noutput = 2.0\n\
             [[families.o3.earlier]]\nuntil = \"{b}\"\ninput = 1.0\noutput = 2.0\n"
        )
    };
    let e = prices_error(&two("2026-02-01", "2026-01-01"));
    assert!(e.contains("o3") && e.contains("period 2") && e.contains("ascend"), "{e}");
    let e = prices_error(&two("2026-01-01", "2026-01-01"));
    assert!(e.contains("ascend"), "{e}");
    let e = prices_error(&two("last year", "2026-01-01"));
    assert!(e.contains("period 1") && e.contains("last year") && e.contains("2026-05-01"), "{e}");
    let e = prices_error("[[families.o3.earlier]]\nuntil = \"2026-01-01\"\ninput = 1.0");
    assert!(e.contains("o3") && e.contains("output"), "{e}");
    let e = prices_error("[[families.o3.earlier]]\nuntil = \"2026-01-01\"\ninput = -1.0\noutput = 1.0");
    assert!(e.contains("non-negative"), "{e}");
    let e = prices_error(
        "[[families.o3.earlier]]\nuntil = \"2026-01-01\"\ninput = 1.0\noutput = 1.0\noff_peak = { share = 0.5 }",
    );
    assert!(e.contains("period 1") && e.contains("needs `share` and `peak_utc`"), "{e}");
    let e = prices_error("[families.o3]\nearlier = 3");
    assert!(e.contains("`earlier` takes an array"), "{e}");
}
