//! Tests of the `codex exec --json` reader on synthetic fixtures
//! (`fixtures/codex-exec/`). The corpus and robustness tests of both Codex
//! readers are in `codex_tests.rs`.

use super::*;
use crate::model::{ApiErrorKind, Usage, UsageProvenance};
use crate::testing::fixtures_dir;

fn fixture(name: &str) -> Vec<Session> {
    let path = fixtures_dir().join("codex-exec").join(name);
    let data = std::fs::read(&path).unwrap();
    read(&path, &data)
}

fn result_of<'a>(s: &'a Session, id: &str) -> (&'a [Block], Option<bool>) {
    for b in s.messages.iter().flat_map(|m| m.blocks.iter()) {
        if let Block::ToolResult { tool_use_id, content, is_error } = b
            && tool_use_id == id
        {
            return (content, *is_error);
        }
    }
    panic!("no result for {id}");
}

#[test]
fn items_tools_and_turn_usage() {
    let mut v = fixture("tools.jsonl");
    assert_eq!(v.len(), 1);
    let s = v.pop().unwrap();
    assert_eq!(s.format, Format::CodexExec);
    assert_eq!(s.id, "019a0000-e4ec-7000-8000-00000000e4ec");
    // Commands, the file change and the MCP call are tool calls; search and todo are not.
    assert_eq!(s.tool_call_count(), 4);
    let names: Vec<&str> = s.messages.iter().flat_map(|m| m.tool_uses()).map(|(_, n, _)| n).collect();
    assert_eq!(names, vec!["command_execution", "command_execution", "file_change", "mcp__docs__search"]);
    assert_eq!(result_of(&s, "item_1").1, Some(false));
    assert!(matches!(&result_of(&s, "item_1").0[0], Block::Text { text } if text == "a.txt\n"));
    assert_eq!(result_of(&s, "item_3").1, Some(true)); // exit code 1
    assert_eq!(result_of(&s, "item_4").1, Some(false));
    assert!(matches!(&result_of(&s, "item_4").0[0], Block::Text { text } if text == "completed: add /tmp/x/hello.txt"));
    assert_eq!(result_of(&s, "item_5").1, Some(false));
    // The completed todo list is the one kept, at its first position.
    let todo = s
        .messages
        .iter()
        .flat_map(|m| m.blocks.iter())
        .find_map(|b| match b {
            Block::Other { raw } if raw["type"] == "todo_list" => Some(raw),
            _ => None,
        })
        .unwrap();
    assert_eq!(todo["items"][0]["completed"], true);
    assert!(
        matches!(s.messages[0].blocks[0], Block::Thinking { ref text, opaque_len: 0 } if text == "**Checking files**")
    );
    // One call per model request: the todo list came with the first command
    // (before its result); each later call follows a result; the search and
    // the final answer are one response.
    let requests: Vec<Vec<&str>> = s
        .calls
        .iter()
        .map(|c| {
            s.messages[c.message_index]
                .blocks
                .iter()
                .map(|b| match b {
                    Block::Thinking { .. } => "thinking",
                    Block::ToolUse { name, .. } => name.as_str(),
                    Block::Text { .. } => "text",
                    Block::Other { .. } => "other",
                    _ => "?",
                })
                .collect()
        })
        .collect();
    assert_eq!(
        requests,
        vec![
            vec!["thinking", "command_execution", "other"],
            vec!["command_execution"],
            vec!["file_change"],
            vec!["mcp__docs__search"],
            vec!["other", "text"],
            vec!["text"],
        ]
    );
    // The first turn's total is shared among its five requests, every count
    // summing to the recorded one; the second turn adds to the running total
    // what its one request used.
    let first: Vec<Usage> = s.calls[..5].iter().map(|c| c.usage.unwrap()).collect();
    assert!(first.iter().all(|u| u.provenance == UsageProvenance::OpenAiShare));
    assert_eq!(first.iter().map(|u| u.uncached_input).sum::<u64>(), 2000);
    assert_eq!(first.iter().map(|u| u.cache_read).sum::<u64>(), 4000);
    assert_eq!(first.iter().map(|u| u.output).sum::<u64>(), 200);
    assert!(first.windows(2).all(|w| w[0].prompt_tokens() <= w[1].prompt_tokens()));
    assert_eq!(
        s.calls[5].usage.unwrap(),
        Usage {
            uncached_input: 200,
            cache_read: 2900,
            cache_write: 0,
            output: 10,
            reasoning: 0,
            provenance: UsageProvenance::OpenAi
        }
    );
    assert!(
        matches!(s.messages[s.calls[5].message_index].blocks[0], Block::Text { ref text } if text == "Second turn.")
    );
    assert_eq!(s.stats.usage_records, 2);
    assert_eq!(s.stats.records, 18);
    assert!(s.diagnostics.messages.is_empty());
}

#[test]
fn failed_turn_unfinished_item_and_truncated_line() {
    let s = fixture("failed_truncated.jsonl").pop().unwrap();
    // The command never completed: its started state is used, outcome unknown.
    assert_eq!(s.tool_call_count(), 1);
    assert_eq!(result_of(&s, "item_1").1, None);
    let kinds: Vec<ApiErrorKind> = s.errors.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec![ApiErrorKind::ContextOverflow, ApiErrorKind::ContextOverflow]);
    assert_eq!(s.calls.len(), 1);
    assert_eq!(s.calls[0].usage, None);
    assert_eq!(s.stats.usage_records, 0);
    assert_eq!(s.diagnostics.unknown_kinds.get("session.created"), Some(&1));
    assert_eq!(s.diagnostics.bad_lines, 1);
    assert_eq!(s.diagnostics.messages[0].line, 8);
}

#[test]
fn concatenated_threads_are_separate_sessions() {
    let data = concat!(
        r#"{"type":"thread.started","thread_id":"a"}"#,
        "\n",
        r#"{"type":"turn.started"}"#,
        "\n",
        r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"one"}}"#,
        "\n",
        r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":1}}"#,
        "\n",
        r#"{"type":"thread.started","thread_id":"b"}"#,
        "\n",
        r#"{"type":"turn.started"}"#,
        "\n",
        r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":1}}"#,
        "\n",
    );
    let v = read(Path::new("two.jsonl"), data.as_bytes());
    let ids: Vec<&str> = v.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, vec!["a", "b"]);
    assert_eq!(v[0].usage_count(), 1);
    // Usage of a turn without model output is reported, not attached.
    assert_eq!(v[1].calls.len(), 0);
    assert_eq!(v[1].stats.usage_records, 1);
    assert_eq!(v[1].diagnostics.messages.len(), 1);
    assert_eq!(v[0].stats.records + v[1].stats.records, 7);
}

/// A stream from JSON lines.
fn stream(lines: &[&str]) -> Session {
    let data = lines.join("\n");
    read(Path::new("s.jsonl"), data.as_bytes()).pop().unwrap()
}

#[test]
fn parallel_calls_share_their_request() {
    let s = stream(&[
        r#"{"type":"thread.started","thread_id":"p"}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.started","item":{"id":"a","type":"command_execution","command":"ls","status":"in_progress"}}"#,
        r#"{"type":"item.started","item":{"id":"b","type":"command_execution","command":"pwd","status":"in_progress"}}"#,
        r#"{"type":"item.completed","item":{"id":"b","type":"command_execution","command":"pwd","aggregated_output":"/x","exit_code":0,"status":"completed"}}"#,
        r#"{"type":"item.completed","item":{"id":"a","type":"command_execution","command":"ls","aggregated_output":"f","exit_code":0,"status":"completed"}}"#,
        r#"{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"done"}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":0,"output_tokens":20}}"#,
    ]);
    // Both commands started before either result: one request, one message
    // of both results, then the answer.
    let roles: Vec<(Role, usize)> = s.messages.iter().map(|m| (m.role, m.blocks.len())).collect();
    assert_eq!(roles, vec![(Role::Assistant, 2), (Role::User, 2), (Role::Assistant, 1)]);
    assert_eq!(s.calls.len(), 2);
    assert_eq!(s.calls.iter().map(|c| c.usage.unwrap().prompt_tokens()).sum::<u64>(), 300);
}

#[test]
fn running_totals_cover_the_requests_since_the_last_one() {
    let s = stream(&[
        r#"{"type":"thread.started","thread_id":"r"}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.completed","item":{"id":"m1","type":"agent_message","text":"one"}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":10}}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.completed","item":{"id":"m2","type":"agent_message","text":"two"}}"#,
        r#"{"type":"turn.failed","error":{"message":"stream disconnected"}}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.completed","item":{"id":"m3","type":"agent_message","text":"three"}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":3400,"cached_input_tokens":1000,"output_tokens":40}}"#,
    ]);
    assert_eq!(s.calls.len(), 3);
    let u: Vec<Usage> = s.calls.iter().map(|c| c.usage.unwrap()).collect();
    // The first turn is its total; the failed turn's request and the last
    // one share what the last total adds (2,400 prompt tokens, 30 output).
    assert_eq!(u[0].prompt_tokens(), 1000);
    assert_eq!(u[0].provenance, UsageProvenance::OpenAi);
    assert_eq!(u[1].prompt_tokens() + u[2].prompt_tokens(), 2400);
    assert_eq!(u[1].cache_read + u[2].cache_read, 1000);
    assert_eq!(u[1].output + u[2].output, 30);
    assert!(u[1..].iter().all(|x| x.provenance == UsageProvenance::OpenAiShare));
    // Before: the sum of the totals, 4,400 prompt tokens for 3,400 used.
    assert_eq!(u.iter().map(Usage::prompt_tokens).sum::<u64>(), 3400);
    assert!(s.diagnostics.messages.is_empty());
}

#[test]
fn a_total_that_goes_down_is_warned_and_read_as_the_turns_own() {
    let s = stream(&[
        r#"{"type":"thread.started","thread_id":"d"}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.completed","item":{"id":"m1","type":"agent_message","text":"one"}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":10}}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.completed","item":{"id":"m2","type":"agent_message","text":"two"}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":600,"cached_input_tokens":0,"output_tokens":12}}"#,
    ]);
    assert_eq!(s.calls[1].usage.unwrap().prompt_tokens(), 600);
    assert_eq!(s.diagnostics.messages.len(), 1);
    assert_eq!(s.diagnostics.messages[0].line, 5);
    assert!(s.diagnostics.messages[0].message.contains("below the previous turn's running total"));
}
