//! Tests of the synthetic generator: determinism, sizes, and that the Claude
//! reader reads back exactly what was written, with nothing it cannot map.

use super::*;
use crate::model::{Origin, Session};
use crate::read::claude;
use std::path::Path;

fn read_back(g: &GeneratedSession) -> Vec<Session> {
    claude::read(Path::new(&g.relative_path()), &g.data)
}

/// Assert the reader found exactly what the generator wrote.
fn check_read_back(g: &GeneratedSession) -> Session {
    let mut sessions = read_back(g);
    assert_eq!(sessions.len(), 1, "one session, no sidechains");
    let s = sessions.remove(0);
    let d = &s.diagnostics;
    assert!(d.messages.is_empty(), "diagnostics: {:?}", d.messages);
    assert_eq!(d.bad_lines, 0);
    assert!(d.unknown_kinds.is_empty(), "unknown kinds: {:?}", d.unknown_kinds);
    let allowed_skips = ["file-history-snapshot", "permission-mode", "last-prompt", "summary", "system/turn_duration"];
    for k in d.skipped.keys() {
        assert!(allowed_skips.contains(&k.as_str()), "unexpected skip {k}");
    }

    assert_eq!(s.id, g.session_id);
    assert_eq!(s.meta.cwd.as_deref(), Some(g.cwd.as_str()));
    assert_eq!(s.stats.bytes, g.data.len() as u64);
    assert_eq!(s.stats.records, g.stats.lines);
    assert_eq!(s.stats.usage_records, g.stats.usage_lines);
    assert_eq!(s.calls.len() as u64, g.stats.calls, "one call per message.id");
    assert_eq!(s.usage_count(), s.calls.len(), "usage on every call");
    assert_eq!(s.tool_call_count() as u64, g.stats.tool_calls);
    assert_eq!(s.recorded_compactions.len() as u64, g.stats.compactions);
    assert!(s.errors.is_empty());

    let humans = s.messages.iter().filter(|m| m.origin == Origin::Human).count();
    assert_eq!(humans as u64, g.stats.human_turns);
    let results: Vec<_> = s
        .messages
        .iter()
        .flat_map(|m| &m.blocks)
        .filter_map(|b| match b {
            crate::model::Block::ToolResult { is_error, .. } => Some(*is_error == Some(true)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len() as u64, g.stats.tool_calls, "every tool_use has its result");
    assert_eq!(results.iter().filter(|e| **e).count() as u64, g.stats.tool_errors);

    // Usage behaves like a real session: the prompt never shrinks between two
    // calls unless the agent compacted in between, and the last line's (largest)
    // output count wins over the partial ones.
    let boundaries: Vec<usize> = s.recorded_compactions.iter().map(|c| c.inserted.start).collect();
    for w in s.calls.windows(2) {
        let (a, b) = (w[0].usage.unwrap(), w[1].usage.unwrap());
        let compacted = boundaries.iter().any(|&i| w[0].message_index < i && i <= w[1].message_index);
        if !compacted {
            assert!(b.prompt_tokens() >= a.prompt_tokens(), "prompt shrank without a compaction: {a:?} → {b:?}");
            assert!(b.cache_read >= a.prompt_tokens().min(b.cache_read), "cache read is the previous prompt");
        }
    }
    for c in &s.calls {
        let u = c.usage.unwrap();
        assert!(u.output > 0);
        assert!(u.prompt_tokens() >= 9_000, "the system prompt is always there: {u:?}");
        assert!(u.prompt_tokens() <= DEFAULT_COMPACT_AT + 200_000, "context stays bounded: {u:?}");
    }
    let ts: Vec<i64> = s.messages.iter().filter_map(|m| m.timestamp).collect();
    let sorted = {
        let mut t = ts.clone();
        t.sort();
        t
    };
    assert_eq!(ts, sorted, "timestamps increase in conversation order");
    s
}

/// Bytes of the tool-result records, measured from what the reader found.
fn tool_result_fraction(g: &GeneratedSession, s: &Session) -> f64 {
    let lines: Vec<&[u8]> = g.data.split(|&b| b == b'\n').collect();
    let bytes: usize = s
        .messages
        .iter()
        .filter(|m| m.origin == Origin::ToolResult)
        .map(|m| lines[(m.source_line - 1) as usize].len() + 1)
        .sum();
    assert_eq!(bytes as u64, g.stats.tool_result_bytes);
    bytes as f64 / g.data.len() as f64
}

#[test]
fn same_seed_same_bytes() {
    let a = generate_session(&SessionSpec::bytes(42, 300_000));
    let b = generate_session(&SessionSpec::bytes(42, 300_000));
    assert_eq!(a.data, b.data);
    assert_eq!(a.stats, b.stats);
    let c = generate_session(&SessionSpec::bytes(43, 300_000));
    assert_ne!(a.data, c.data);
    assert_eq!(plan_corpus(7, 20_000_000), plan_corpus(7, 20_000_000));
}

#[test]
fn sessions_read_back_exactly() {
    // Every style appears among these seeds; one session is long enough to compact.
    let mut compactions = 0;
    let mut versions = std::collections::BTreeSet::new();
    for seed in 0..12u64 {
        let size = if seed == 3 { 3_000_000 } else { 60_000 + seed * 20_000 };
        let g = generate_session(&SessionSpec::bytes(seed, size));
        let s = check_read_back(&g);
        compactions += s.recorded_compactions.len();
        versions.extend(s.meta.versions.iter().cloned());
        assert!(g.stats.calls > 0 && g.stats.tool_calls > 0);
    }
    assert!(compactions > 0, "a long session auto-compacts");
    assert!(versions.len() >= 3, "several agent versions: {versions:?}");
}

#[test]
fn exact_turn_count() {
    for turns in [1, 5, 40] {
        let g = generate_session(&SessionSpec::turns(9, turns));
        assert_eq!(g.stats.human_turns, turns as u64);
        check_read_back(&g);
    }
    let n = generate_session(&SessionSpec::turns(5, 20));
    let n4 = generate_session(&SessionSpec::turns(5, 80));
    let ratio = n4.data.len() as f64 / n.data.len() as f64;
    assert!((2.5..6.0).contains(&ratio), "4× the turns is about 4× the bytes: {ratio}");
}

#[test]
fn session_size_close_to_request() {
    for (seed, want) in [(1u64, 20_000u64), (2, 250_000), (3, 2_000_000)] {
        let g = generate_session(&SessionSpec::bytes(seed, want));
        let got = g.data.len() as f64;
        assert!((want as f64 * 0.95..want as f64 * 1.15).contains(&got), "asked {want}, got {got}");
    }
}

#[test]
fn corpus_size_within_ten_percent_and_shaped_like_real_logs() {
    let total = 12_000_000u64;
    let plan = plan_corpus(11, total);
    assert!(plan.len() > 5);
    let mut bytes = 0u64;
    let mut tool_result_bytes = 0u64;
    let mut stats = SynthStats::default();
    for spec in &plan {
        let g = generate_session(spec);
        bytes += g.data.len() as u64;
        tool_result_bytes += g.stats.tool_result_bytes;
        stats.thinking_blocks += g.stats.thinking_blocks;
        stats.images += g.stats.images;
        stats.tool_errors += g.stats.tool_errors;
        stats.tool_calls += g.stats.tool_calls;
    }
    let ratio = bytes as f64 / total as f64;
    assert!((0.9..1.1).contains(&ratio), "corpus is {bytes} bytes for {total} asked");
    let frac = tool_result_bytes as f64 / bytes as f64;
    assert!((0.52..0.68).contains(&frac), "tool results are {frac:.3} of the bytes");
    assert!(stats.thinking_blocks > 0 && stats.images > 0 && stats.tool_errors > 0);
    let err_rate = stats.tool_errors as f64 / stats.tool_calls as f64;
    assert!((0.01..0.1).contains(&err_rate), "error rate {err_rate}");
}

#[test]
fn tool_results_are_about_sixty_percent_of_a_session() {
    let g = generate_session(&SessionSpec::bytes(21, 3_000_000));
    let s = check_read_back(&g);
    let frac = tool_result_fraction(&g, &s);
    assert!((0.5..0.7).contains(&frac), "tool results are {frac:.3} of the bytes");
}

#[test]
fn plan_sizes_are_log_normal_and_bounded() {
    let plan = plan_corpus(3, 2_000_000_000);
    let sizes: Vec<u64> = plan
        .iter()
        .map(|s| match s.length {
            Length::Bytes(b) => b,
            Length::Turns(_) => 0,
        })
        .collect();
    let total: u64 = sizes.iter().sum();
    assert_eq!(total, 2_000_000_000, "the plan adds up to the request");
    assert!(sizes.iter().all(|&b| (MIN_SESSION_BYTES..=MAX_SESSION_BYTES).contains(&b)));
    let mut sorted = sizes.clone();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    assert!((100_000..400_000).contains(&median), "median {median}");
    assert!(sorted[sorted.len() - 1] > 10_000_000, "a long tail: max {}", sorted[sorted.len() - 1]);
    assert!(sorted[0] < 20_000, "small sessions too: min {}", sorted[0]);
}

#[test]
fn floor_parses_what_the_reader_reads() {
    let g = generate_session(&SessionSpec::bytes(5, 400_000));
    let f = floor::parse(&g.data);
    assert_eq!(f.bad_lines, 0);
    assert_eq!(f.lines, g.stats.lines);
    assert_eq!(f.tool_uses, g.stats.tool_calls);
    assert_eq!(f.tool_results, g.stats.tool_calls);
    assert_eq!(f.usage_lines, g.stats.usage_lines);
    let mut texts = 0usize;
    floor::estimator_texts(&g.data, |t| texts += t.len());
    let s = check_read_back(&g);
    let chars: usize = s.messages.iter().flat_map(|m| &m.blocks).map(crate::model::Block::text_chars).sum();
    assert_eq!(texts, chars, "the floor extracts the text the estimator counts");
}

#[test]
fn floor_reads_the_real_corpus() {
    let Some(corpus) = crate::testing::corpus_dir() else { return };
    for e in std::fs::read_dir(corpus.join("claude-code")).unwrap() {
        let path = e.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let f = floor::parse(&data);
        assert_eq!(f.bad_lines, 0, "{}", path.display());
        assert!(f.lines > 0);
    }
}

#[test]
fn sizes_parse() {
    assert_eq!(parse_size("500MB"), Some(500_000_000));
    assert_eq!(parse_size("50M"), Some(50_000_000));
    assert_eq!(parse_size("1.5GB"), Some(1_500_000_000));
    assert_eq!(parse_size("64KiB"), Some(65_536));
    assert_eq!(parse_size("1000"), Some(1000));
    assert_eq!(parse_size("12 parsecs"), None);
    assert_eq!(parse_size(""), None);
}

#[test]
fn timestamps_format() {
    assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(iso8601(1_777_315_229_529), "2026-04-27T18:40:29.529Z");
    assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
}

#[test]
fn json_strings_escape() {
    let mut v = Vec::new();
    json_str(&mut v, "a\"b\\c\nd\te\u{1}f\u{2192}");
    assert_eq!(String::from_utf8(v).unwrap(), "\"a\\\"b\\\\c\\nd\\te\\u0001f\u{2192}\"");
}
