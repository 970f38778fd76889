//! Tests of what Codex sends of a tool output: the cut itself, worked by hand,
//! and the rollouts whose policy or line names a budget.

use super::{Budget, truncate_output, truncate_text};
use crate::model::{Block, Session};
use crate::testing::fixtures_dir;
use serde_json::{Value, json};
use std::path::Path;

#[test]
fn a_text_keeps_half_the_budget_at_each_end_around_what_was_cut() {
    let abc = "abcdefghijklmnopqrstuvwxyz";
    // 10 bytes: 5 and 5; 16 characters cut.
    assert_eq!(truncate_text(abc, Budget::Bytes(10)), "abcde…16 chars truncated…vwxyz");
    // 3 tokens are 12 bytes: 6 and 6; (26 − 12) / 4 rounded up is 4 tokens.
    assert_eq!(truncate_text(abc, Budget::Tokens(3)), "abcdef…4 tokens truncated…uvwxyz");
    // What fits is left alone; a budget of nothing leaves the note alone.
    assert_eq!(truncate_text(abc, Budget::Bytes(26)), abc);
    assert_eq!(truncate_text(abc, Budget::Tokens(7)), abc);
    assert_eq!(truncate_text(abc, Budget::Bytes(0)), "…26 chars truncated…");
    assert_eq!(truncate_text(abc, Budget::Tokens(0)), "…7 tokens truncated…");
    assert_eq!(truncate_text("", Budget::Tokens(0)), "");
}

#[test]
fn a_cut_never_splits_a_character() {
    // Five 2-byte characters in 5 bytes: the head takes what ends by byte 2,
    // the tail what starts from byte 7.
    assert_eq!(truncate_text("ééééé", Budget::Bytes(5)), "é…3 chars truncated…é");
    for n in 0..40 {
        let s = "aé😀".repeat(7);
        let cut = truncate_text(&s, Budget::Bytes(n));
        assert!(cut.len() <= n + "…99 chars truncated…".len(), "{n}: {cut}");
    }
}

#[test]
fn a_policy_gets_a_fifth_more_rounded_up() {
    let policy = |v: Value| Budget::from_policy(&v).map(Budget::with_allowance);
    assert_eq!(policy(json!({"mode": "tokens", "limit": 10000})), Some(Budget::Tokens(12000)));
    assert_eq!(policy(json!({"mode": "bytes", "limit": 10001})), Some(Budget::Bytes(12002)));
    assert_eq!(policy(json!({"mode": "lines", "limit": 10})), None);
    assert_eq!(policy(json!({"mode": "bytes", "limit": -1})), None);
}

#[test]
fn content_items_spend_the_budget_in_order() {
    let text = |n: usize, c: &str| json!({"type": "input_text", "text": c.repeat(n)});
    let image = json!({"type": "input_image", "image_url": "data:image/png;base64,AAAA"});
    let items = json!([text(8, "a"), {"type": "input_text", "text": ""}, image, text(12, "b"), text(4, "c")]);
    // 5 tokens: the first text costs 2, the second the 3 left (kept whole),
    // and the third finds nothing left; the empty text is dropped.
    let cut = truncate_output(&items, Budget::Tokens(5)).unwrap();
    assert_eq!(
        cut,
        json!([text(8, "a"), image, text(12, "b"), {"type": "input_text", "text": "[omitted 1 text items ...]"}])
    );
    // 16 bytes: 8 for the first, the second cut to the 8 left.
    let cut = truncate_output(&items, Budget::Bytes(16)).unwrap();
    assert_eq!(cut[2], json!({"type": "input_text", "text": "bbbb…4 chars truncated…bbbb"}));
    assert_eq!(cut[3], json!({"type": "input_text", "text": "[omitted 1 text items ...]"}));
    // Enough for all: nothing to send differently (the empty text aside).
    assert_eq!(truncate_output(&json!([text(8, "a")]), Budget::Bytes(8)), None);
    assert_eq!(truncate_output(&json!({"content": "x"}), Budget::Bytes(0)), None);
}

fn read_fixture(name: &str) -> Session {
    let path = fixtures_dir().join("codex").join(name);
    let data = std::fs::read(&path).unwrap();
    super::super::read(&path, &data).pop().unwrap()
}

/// The text blocks of tool result `id`.
fn result(s: &Session, id: &str) -> Vec<String> {
    s.messages
        .iter()
        .flat_map(|m| &m.blocks)
        .find_map(|b| match b {
            Block::ToolResult { tool_use_id, content, .. } if tool_use_id == id => Some(
                content
                    .iter()
                    .map(|c| match c {
                        Block::Text { text } => text.clone(),
                        _ => String::new(),
                    })
                    .collect(),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

const FIXTURE: &str = "rollout-2026-05-12T14-00-00-019e3b20-7a11-7c40-9d2e-5f0a1b2c3d4e.jsonl";

#[test]
fn a_tool_output_over_the_turns_policy_is_sent_cut_as_the_history_holds_it() {
    let s = read_fixture(FIXTURE);
    let logged = std::fs::read_to_string(fixtures_dir().join("codex").join(FIXTURE)).unwrap();
    let whole = logged
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["payload"]["call_id"] == "call_log" && v["payload"]["type"] == "function_call_output")
        .unwrap()["payload"]["output"]
        .as_str()
        .unwrap()
        .to_string();
    // The turn's policy is 2,000 tokens: 2,400 with the allowance, 9,600 bytes.
    assert!(whole.len() > 9_600);
    let sent = result(&s, "call_log");
    assert_eq!(sent, [truncate_text(&whole, Budget::Tokens(2_400))]);
    let sent = &sent[0];
    assert!(sent.starts_with("Chunk ID: 4be1\nWall time:"), "the header is kept");
    assert!(sent.ends_with("ERROR import aborted: statement timeout (lock on accounts held by pid 4821)\n"));
    assert!(sent.contains(&format!("…{} tokens truncated…", (whole.len() - 9_600).div_ceil(4))));
    // The exit status still comes from the header.
    let is_error = s.messages.iter().flat_map(|m| &m.blocks).find_map(|b| match b {
        Block::ToolResult { tool_use_id, is_error, .. } if tool_use_id == "call_log" => Some(*is_error),
        _ => None,
    });
    assert_eq!(is_error, Some(Some(false)));
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
    // Both outputs of the fixture, said in `inspect`.
    assert_eq!(s.diagnostics.sent_otherwise.get("tool output cut to its budget"), Some(&2));
}

#[test]
fn a_line_that_names_its_own_budget_is_cut_to_it() {
    let s = read_fixture(FIXTURE);
    // 500 tokens, allowance included: the first text costs 300, the second
    // is cut to the 200 left (800 bytes), the third is left out.
    let sent = result(&s, "call_ticket");
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent[0].len(), 1_200);
    assert!(sent[1].len() < 1_500 && sent[1].contains("tokens truncated…"), "{}", sent[1]);
    assert_eq!(sent[2], "[omitted 1 text items ...]");
}

/// A rollout of one turn: `policy` in its `turn_context`, then a call and
/// an output of `n` bytes, then `tail` lines.
fn rollout(policy: &str, n: usize, tail: &[String]) -> Vec<u8> {
    rollout_of("0.128.0", policy, n, tail)
}

fn rollout_of(version: &str, policy: &str, n: usize, tail: &[String]) -> Vec<u8> {
    let mut lines = vec![
        format!(r#"{{"timestamp":"2026-05-12T14:00:00Z","type":"session_meta","payload":{{"id":"019e3b20-0000-7000-8000-000000000001","cli_version":"{version}"}}}}"#),
        format!(r#"{{"timestamp":"2026-05-12T14:00:00Z","type":"turn_context","payload":{{"model":"gpt-5.3-codex"{policy}}}}}"#),
        r#"{"timestamp":"2026-05-12T14:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}}"#.to_string(),
        r#"{"timestamp":"2026-05-12T14:00:02Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"c1"}}"#.to_string(),
        format!(r#"{{"timestamp":"2026-05-12T14:00:03Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"c1","output":"{}"}}}}"#, "x".repeat(n)),
    ];
    lines.extend(tail.iter().cloned());
    (lines.join("\n") + "\n").into_bytes()
}

fn read_rollout(data: &[u8]) -> Session {
    super::super::read(Path::new("rollout.jsonl"), data).pop().unwrap()
}

#[test]
fn without_a_policy_or_with_one_not_read_an_output_is_counted_as_logged() {
    // A version before outputs were cut in the history: no field (or null),
    // nothing cut, nothing to say.
    for policy in ["", r#","truncation_policy":null"#] {
        let s = read_rollout(&rollout_of("0.51.0", policy, 50_000, &[]));
        assert_eq!(result(&s, "c1")[0].len(), 50_000);
        assert!(s.diagnostics.messages.is_empty(), "{policy}: {:?}", s.diagnostics.messages);
    }
    // A version that cut them and records no budget: counted whole, and said
    // with the first such output's line, when over the smallest budget used.
    for version in ["0.52.0", "0.63.0-alpha.1", "0.128.0"] {
        let s = read_rollout(&rollout_of(version, "", 50_000, &[]));
        assert_eq!(result(&s, "c1")[0].len(), 50_000);
        let warnings: Vec<_> = s.diagnostics.messages.iter().map(|d| (d.line, d.message.as_str())).collect();
        assert_eq!(warnings.len(), 1, "{version}");
        assert_eq!(warnings[0].0, 5);
        assert!(warnings[0].1.starts_with("1 tool output(s) over 10 KB are counted whole"), "{}", warnings[0].1);
    }
    let s = read_rollout(&rollout_of("0.63.0", "", 10_240, &[]));
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
    // A policy of a shape not read: nothing cut, and said once.
    let odd = r#","truncation_policy":{"mode":"lines","limit":10}"#;
    let again =
        format!(r#"{{"timestamp":"2026-05-12T14:00:04Z","type":"turn_context","payload":{{"model":"m"{odd}}}}}"#);
    let s = read_rollout(&rollout(odd, 50_000, &[again]));
    assert_eq!(result(&s, "c1")[0].len(), 50_000);
    let warnings: Vec<_> = s.diagnostics.messages.iter().map(|d| (d.line, d.message.as_str())).collect();
    assert_eq!(
        warnings,
        [(
            2,
            "turn_context: a truncation policy of a shape not read: the turn's tool outputs are counted whole, as logged"
        )]
    );
}

#[test]
fn a_compactions_replacement_history_is_not_cut_again() {
    let policy = r#","truncation_policy":{"mode":"bytes","limit":100}"#;
    let big = "y".repeat(1_000);
    let compacted = format!(
        r#"{{"timestamp":"2026-05-12T14:00:05Z","type":"compacted","payload":{{"message":"","replacement_history":[{{"type":"function_call","name":"exec_command","arguments":"{{}}","call_id":"c2"}},{{"type":"function_call_output","call_id":"c2","output":"{big}"}}]}}}}"#
    );
    let s = read_rollout(&rollout(policy, 1_000, &[compacted]));
    // The live output is cut to 120 bytes; the history a compaction wrote was
    // taken from the history already cut, and is sent as written.
    assert_eq!(result(&s, "c1")[0], truncate_text(&"x".repeat(1_000), Budget::Bytes(120)));
    assert_eq!(result(&s, "c2")[0], big);
}
