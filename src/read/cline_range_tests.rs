use super::cline_range::take_summary;
use super::*;
use crate::model::CompactionKind;
use crate::testing::fixtures_dir;
use pretty_assertions::assert_eq;
use serde_json::json;

fn read_task(id: &str) -> Session {
    read_task_dir(&fixtures_dir().join("cline").join(id)).unwrap().remove(0)
}

/// (head, kept, inserted) of every recorded compaction.
type Ranges = (std::ops::Range<usize>, std::ops::Range<usize>, std::ops::Range<usize>);
fn ranges(s: &Session) -> Vec<Ranges> {
    s.recorded_compactions.iter().map(|c| (c.head.clone(), c.kept.clone(), c.inserted.clone())).collect()
}

/// The first message of each history element (the fixture's elements split
/// into these messages: a user element is one message per run of origin).
fn element_starts(s: &Session) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, m) in s.messages.iter().enumerate() {
        if out.len() < m.source_line as usize {
            out.push(i);
        }
    }
    out
}

/// A task that Cline truncated (the request of element 5 sent without
/// elements 2–3), then auto-condensed: element 7 calls `summarize_task`,
/// element 8 answers it with the continuation prompt, and the request of
/// element 9 is sent with the first exchange and element 8 on.
#[test]
fn deleted_ranges_become_the_agents_own_compactions() {
    let s = read_task("1730000300000");
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
    let e = element_starts(&s);
    assert_eq!(e.len(), 12);
    let summary = e[8] + 1;
    assert_eq!(
        ranges(&s),
        [
            // The first exchange, then element 4 on: elements 2 and 3 are not sent.
            (e[0]..e[2], e[4]..e[5], e[5]..e[5]),
            // The first exchange, element 8's result (emptied), then its summary.
            (e[0]..e[2], e[8]..summary, summary..summary + 1),
        ]
    );
    assert!(s.recorded_compactions.iter().all(|c| c.kind == CompactionKind::ClineDeletedRange));
    assert_eq!(s.recorded_compactions.iter().map(|c| c.source_line).collect::<Vec<_>>(), [6, 10]);

    // The continuation prompt is the summary; the call it answers stays answered.
    let m = &s.messages[summary];
    assert_eq!(m.origin, Origin::CompactSummary);
    assert!(m.text().starts_with("This session is being continued from a previous conversation"));
    assert!(m.text().contains("4. Next step: rerun pytest tests/test_parser.py"));
    let shell = &s.messages[e[8]];
    assert_eq!(shell.blocks, [Block::ToolResult { tool_use_id: "toolu_34".into(), content: vec![], is_error: None }]);
    assert_eq!(s.messages[summary + 1].origin, Origin::Injected, "the environment details after it");

    // A policy replays the history as it was, without the summary.
    let hidden = s.hidden_from_policy();
    assert_eq!(hidden.iter().filter(|h| **h).count(), 1);
    assert!(hidden[summary]);
    assert_eq!(s.calls.len(), 6);
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
}

/// A UI message written at history index `at` with `range`.
fn mark(kind: &str, at: i64, range: Option<[u64; 2]>) -> Value {
    let mut m = json!({"ts": 1, "type": "say", "say": kind, "text": "", "conversationHistoryIndex": at});
    if let Some(r) = range {
        m["conversationHistoryDeletedRange"] = json!(r);
    }
    m
}

/// Eight history elements: requests produce elements 1, 3, 5 and 7.
fn history() -> Vec<Value> {
    (0..8).map(|i| if i % 2 == 0 { user(&format!("<task>u{i}</task>")) } else { assistant(&format!("a{i}")) }).collect()
}

/// The warnings about deleted ranges (the calls of these tasks have no usage,
/// which is reported too).
fn range_warnings(s: &Session) -> Vec<String> {
    s.diagnostics.messages.iter().filter(|d| d.path.ends_with("ui_messages.json")).map(ToString::to_string).collect()
}

fn read(history: &[Value], ui: &[Value]) -> Session {
    let h = serde_json::to_vec(history).unwrap();
    let u = serde_json::to_vec(ui).unwrap();
    read_history_bytes(Path::new("/t/task-r"), &h, Some(&u), None).remove(0)
}

/// The range a request was sent with is the one on the first message written
/// while it streamed: not `api_req_started` nor an error or retry notice
/// (written before the retry truncates), nor the conditional rules' notice
/// (written before the range is updated), nor a message written after the
/// first (a `summarize_task` call sets the next range while it runs).
#[test]
fn the_first_message_written_while_a_request_streams_tells_its_range() {
    let marks = [
        mark("text", 2, None),
        mark("api_req_started", 4, Some([1, 1])),
        mark("conditional_rules_applied", 4, None),
        mark("api_req_retried", 4, None),
        mark("error_retry", 4, None),
        mark("text", 4, Some([2, 3])),
        mark("tool", 4, Some([2, 2])),
        mark("api_req_started", 6, Some([2, 3])),
        mark("text", 6, Some([2, 3])),
    ];
    let s = read(&history(), &marks);
    assert_eq!(range_warnings(&s), Vec::<String>::new());
    assert_eq!(ranges(&s), [(0..2, 4..5, 5..5)]);
    assert_eq!(s.recorded_compactions[0].source_line, 6);
}

/// Older Cline kept element 0 only.
#[test]
fn a_range_from_one_keeps_the_first_element_only() {
    let s = read(&history(), &[mark("text", 6, Some([1, 4]))]);
    assert_eq!(ranges(&s), [(0..1, 5..7, 7..7)]);
}

/// A range that does not fit before its request, or that gives back what an
/// earlier one dropped, is reported with its place and not applied.
#[test]
fn a_range_that_cannot_be_is_reported_not_applied() {
    let marks = [mark("text", 2, Some([2, 2])), mark("text", 4, Some([2, 3])), mark("text", 6, Some([2, 2]))];
    let s = read(&history(), &marks);
    assert_eq!(ranges(&s), [(0..2, 4..5, 5..5)]);
    assert_eq!(
        range_warnings(&s),
        [
            "/t/task-r/ui_messages.json:1: deleted range [2, 2] of the request of history element 3 does not fit \
the history before it: not applied",
            "/t/task-r/ui_messages.json:3: deleted range [2, 2] of the request of history element 7 gives back \
history an earlier range dropped: not applied",
        ]
    );
    let huge = read(&history(), &[mark("text", 4, Some([u64::MAX, u64::MAX])), mark("text", 6, Some([1, u64::MAX]))]);
    assert!(huge.recorded_compactions.is_empty());
    assert_eq!(range_warnings(&huge).len(), 2);
    let s = read(&history(), &[mark("text", 4, Some([2, 3])), mark("text", 6, None)]);
    assert_eq!(s.recorded_compactions.len(), 1);
    let w = range_warnings(&s);
    assert!(w.len() == 1 && w[0].contains("element 7 is sent without the deleted range before it"), "{w:?}");
}

/// Without `ui_messages.json`, or a UI log of a Cline that wrote no range,
/// nothing says Cline dropped history: no compaction.
#[test]
fn without_ranges_there_is_no_compaction() {
    let h = serde_json::to_vec(&history()).unwrap();
    assert!(read_history_bytes(Path::new("/t/x"), &h, None, None)[0].recorded_compactions.is_empty());
    let s = read(&history(), &[mark("text", 2, None), mark("text", 4, None), json!({"say": "text"})]);
    assert!(s.recorded_compactions.is_empty());
    assert_eq!(range_warnings(&s), Vec::<String>::new());
}

/// The history alone says no range followed the continuation prompt: it is
/// no compaction's summary, but the harness text it is.
#[test]
fn without_its_ui_log_a_continuation_prompt_is_harness_text() {
    let dir = fixtures_dir().join("cline/1730000300000");
    let history = std::fs::read(dir.join("api_conversation_history.json")).unwrap();
    let s = read_history_bytes(&dir, &history, None, None).remove(0);
    assert!(s.recorded_compactions.is_empty());
    let continued: Vec<Origin> = s
        .messages
        .iter()
        .filter(|m| m.text().starts_with("This session is being continued"))
        .map(|m| m.origin)
        .collect();
    assert_eq!(continued, [Origin::Injected]);
    assert!(s.messages.iter().all(|m| m.origin != Origin::CompactSummary));
}

/// Only the result of a `summarize_task` call is a summary, and only its text.
#[test]
fn only_a_summarize_task_result_is_taken() {
    let result = |id: &str| Block::ToolResult {
        tool_use_id: id.into(),
        content: vec![Block::text("summary"), Block::Image { media_type: "image/png".into(), bytes: 3 }],
        is_error: None,
    };
    let uses = [("a".to_string(), "read_file".to_string()), ("b".to_string(), "summarize_task".to_string())];
    let (before, summary, after) = take_summary(vec![result("a"), result("b"), Block::text("env")], &uses);
    assert_eq!(before.len(), 2);
    assert_eq!(before[0], result("a"));
    let Block::ToolResult { content, .. } = &before[1] else { panic!("{before:?}") };
    assert_eq!(content.len(), 1, "the image stays in the result");
    assert_eq!(summary, [Block::text("summary")]);
    assert_eq!(after, [Block::text("env")]);
    let (before, summary, after) = take_summary(vec![result("a")], &uses[..1]);
    assert_eq!((before.len(), summary.len(), after.len()), (1, 0, 0));
}

/// XML-tool era: the call is text, and so is its result's header.
#[test]
fn a_summarize_task_header_left_as_text_is_taken() {
    let header = Block::text("[summarize_task] Result:\nThis session is being continued. Summary: x");
    let (before, summary, after) = take_summary(vec![header, Block::text("env")], &[]);
    assert_eq!(before, [Block::text("[summarize_task] Result:")]);
    assert_eq!(summary, [Block::text("This session is being continued. Summary: x")]);
    assert_eq!(after, [Block::text("env")]);
    let other = Block::text("[read_file for 'a'] Result:\nbody");
    assert_eq!(take_summary(vec![other.clone()], &[]), (vec![other], vec![], vec![]));
}
