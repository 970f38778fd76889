use super::*;
use crate::model::ApiErrorKind;
use crate::testing::fixtures_dir;
use pretty_assertions::assert_eq;

fn task_dir() -> std::path::PathBuf {
    fixtures_dir().join("cline").join("1730000000000")
}

fn result_ids(m: &Message) -> Vec<&str> {
    m.blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn task_folder_with_positional_text_results_and_ui_usage() {
    let dir = task_dir();
    let history = std::fs::read(dir.join("api_conversation_history.json")).unwrap();
    assert_eq!(crate::read::detect(&history), Some(Format::Cline));
    // Discovery turns the folder into a ClineTask input.
    let (inputs, _) = crate::read::discover(std::slice::from_ref(&dir));
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].kind, crate::read::InputKind::ClineTask);

    let s = crate::read::read_input(&inputs[0], None).unwrap().remove(0);
    assert_eq!(s.id, "1730000000000");
    assert_eq!(s.format, Format::Cline);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/proj"));
    assert_eq!(s.meta.models, ["claude-sonnet-4-5", "claude-opus-4-5"]);
    let shape: Vec<(Role, Origin, u64)> = s.messages.iter().map(|m| (m.role, m.origin, m.source_line)).collect();
    use Origin::*;
    use Role::*;
    assert_eq!(
        shape,
        [
            (User, Human, 1),    // <task>
            (User, Injected, 1), // <environment_details>
            (Assistant, Model, 2),
            (User, ToolResult, 3), // two text results, paired by position
            (User, Injected, 3),
            (Assistant, Model, 4),
            (User, ToolResult, 5), // native tool_result
            (User, Human, 5),      // <feedback>
            (Assistant, Model, 6),
        ]
    );
    assert_eq!(result_ids(&s.messages[3]), ["toolu_01", "toolu_02"]);
    // The header block becomes the result; the block after it is its content, and
    // text after the header line in the same block is content too.
    match &s.messages[3].blocks[..] {
        [Block::ToolResult { content: a, .. }, Block::ToolResult { content: b, .. }] => {
            assert_eq!(a, &[Block::text("for i in range(len(xs) + 1):\n    print(xs[i])")]);
            assert_eq!(b, &[Block::text("main.py\nREADME.md")]);
        }
        other => panic!("unexpected blocks {other:?}"),
    }
    assert_eq!(result_ids(&s.messages[6]), ["toolu_03"]);
    assert!(
        matches!(&s.messages[5].blocks[0], Block::Thinking { opaque_len, .. } if *opaque_len == "c2lnbmF0dXJl".len())
    );
    assert_eq!(s.tool_call_count(), 3);

    // Usage: ui request 1, then (the failed request skipped) request 3; the last
    // assistant message has its own metrics, which win.
    assert_eq!(s.calls.len(), 3);
    let u: Vec<(u64, u64, u64, u64)> = s
        .calls
        .iter()
        .map(|c| c.usage.unwrap())
        .map(|u| (u.uncached_input, u.cache_read, u.cache_write, u.output))
        .collect();
    assert_eq!(u, [(10, 0, 3000, 100), (5, 3000, 200, 50), (1000, 4000, 0, 40)]);
    assert!(s.calls.iter().all(|c| c.usage.unwrap().provenance == UsageProvenance::Cline));
    assert_eq!(s.calls[2].model.as_deref(), Some("claude-opus-4-5"));
    assert_eq!(s.calls[0].timestamp, Some(1_730_000_001_000));
    assert_eq!(s.stats.records, 6);
    assert_eq!(s.stats.usage_records, 3);

    assert_eq!(s.errors.len(), 1);
    assert_eq!(s.errors[0].kind, ApiErrorKind::RateLimit);
    assert_eq!(s.errors[0].source_line, 3);
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
}

#[test]
fn without_ui_messages_calls_have_no_usage() {
    let dir = task_dir();
    let history = std::fs::read(dir.join("api_conversation_history.json")).unwrap();
    let s = read_history_bytes(&dir.join("api_conversation_history.json"), &history, None).remove(0);
    assert_eq!(s.id, "1730000000000");
    assert_eq!(s.calls.len(), 3);
    // Only the message carrying its own metrics has usage.
    assert_eq!(s.usage_count(), 1);
    assert!(s.diagnostics.messages.iter().any(|d| d.message.contains("no ui_messages.json")));
}

#[test]
fn xml_era_headers_without_tool_use_stay_text() {
    let data = br#"[
 {"role":"user","content":"<task>go</task>"},
 {"role":"assistant","content":"<read_file><path>a</path></read_file>"},
 {"role":"user","content":[{"type":"text","text":"[read_file for 'a'] Result:\nhello"},{"type":"text","text":"[ERROR] You did not use a tool"}]},
 {"role":"system","content":"?"}
]"#;
    let s = read_history_bytes(Path::new("/t/task-9"), data, Some(b"not json")).remove(0);
    assert_eq!(s.id, "task-9");
    assert_eq!(s.messages[2].origin, Origin::ToolResult);
    assert!(!s.messages[2].has_tool_results());
    assert_eq!(s.messages[3].origin, Origin::Injected);
    assert!(s.diagnostics.messages.iter().any(|d| d.message.contains("no tool_use to answer")));
    assert!(s.diagnostics.messages.iter().any(|d| d.message.contains("ui_messages.json is unreadable")));
    assert_eq!(s.diagnostics.unknown_kinds.get("role:system"), Some(&1));
}

#[test]
fn invalid_history_yields_a_reported_session() {
    let s = read_history_bytes(Path::new("/t/task-1"), b"[{\"role\":\"user\",\"content\":", None).remove(0);
    assert!(s.messages.is_empty());
    assert_eq!(s.diagnostics.bad_lines, 1);
    let s = read_history_bytes(Path::new("/t/task-1"), b"{}", None).remove(0);
    assert_eq!(s.diagnostics.bad_lines, 1);
    let err = read_task_dir(Path::new("/definitely/not/here")).unwrap_err();
    assert!(err.message.contains("cannot read"));
}

#[test]
fn result_header_shapes() {
    assert_eq!(result_header("[read_file for 'a.rs'] Result:"), Some(("read_file", "")));
    assert_eq!(result_header("[attempt_completion] Result:\nok"), Some(("attempt_completion", "ok")));
    assert_eq!(result_header("[execute_command for 'ls [x]'] Result:"), Some(("execute_command", "")));
    assert_eq!(result_header("[link](http://x) Result:"), None);
    assert_eq!(result_header("no header"), None);
}
