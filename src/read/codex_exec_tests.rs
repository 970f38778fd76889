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
    // One call per turn, on the turn's last assistant message.
    assert_eq!(s.calls.len(), 2);
    let u = s.calls[0].usage.unwrap();
    assert_eq!(
        u,
        Usage {
            uncached_input: 2000,
            cache_read: 4000,
            cache_write: 0,
            output: 200,
            reasoning: 0,
            provenance: UsageProvenance::OpenAi
        }
    );
    let last = &s.messages[s.calls[0].message_index];
    assert!(matches!(last.blocks.last(), Some(Block::Text { text }) if text == "Done: one file added."));
    assert!(
        matches!(s.messages[s.calls[1].message_index].blocks[0], Block::Text { ref text } if text == "Second turn.")
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
