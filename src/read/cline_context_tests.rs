//! Tests of Cline's context history read back as the agent's clearings: the
//! notices it sends in place of older file reads and of its first messages.

use super::cline_context::{Update, parse};
use super::{read_history_bytes, read_task_dir};
use crate::model::{Block, ClearedBlock, Session};
use crate::testing::fixtures_dir;
use serde_json::json;
use std::path::Path;

const NOTICE: &str = "[[NOTE] This file read has been removed to save space in the context window. \
Refer to the latest file read for the most up to date version of this file.]";

fn warnings(s: &Session) -> Vec<&str> {
    s.diagnostics.messages.iter().map(|d| d.message.as_str()).collect()
}

#[test]
fn an_older_read_of_a_file_is_sent_as_a_notice_from_the_request_after_the_update() {
    let s = read_task_dir(&fixtures_dir().join("cline").join("1730000400000")).unwrap().remove(0);
    let calls: Vec<_> = s.calls.iter().map(|c| c.message_index).collect();
    assert_eq!(calls, [2, 5, 8, 11]);
    // Stamped with the third request's start: the fourth is the first sent with it.
    assert_eq!(s.recorded_clearings.len(), 1);
    let c = &s.recorded_clearings[0];
    assert_eq!((c.at, c.source_line), (11, 3));
    assert_eq!(c.blocks, [ClearedBlock::new(3, 0, vec![Block::text(NOTICE)])]);
    // The history keeps the read whole.
    let Block::ToolResult { content, .. } = &s.messages[3].blocks[0] else { panic!("{:?}", s.messages[3]) };
    assert!(crate::model::joined_text(content).len() > 6000);
    assert!(warnings(&s).is_empty(), "{:?}", warnings(&s));
}

#[test]
fn both_layouts_parse_and_only_text_updates_count() {
    let (t1, t2) = (1_730_000_400_000i64, 1_730_000_500_000i64);
    let newer = json!([[2, [2, [[1, [[t1, "text", ["a"], []], [t2, "text", ["b"], []]]]]]]]);
    let older = json!([[2, [[1, [[t1, "text", ["a"]], [t2, "image", ["x"]]]]]]]);
    let update = |ts, text: &str| Update { element: 2, block: 1, ts, text: text.into() };
    assert_eq!(parse(newer.to_string().as_bytes()).unwrap(), [update(t1, "a"), update(t2, "b")]);
    assert_eq!(parse(older.to_string().as_bytes()).unwrap(), [update(t1, "a")]);
    assert!(parse(b"{}").is_err() && parse(b"[[").is_err());
    assert_eq!(parse(b"[[1], \"x\", [null, [[0, 5]]]]").unwrap(), []);
}

/// A history of a task, a read and its result, then two more requests; the
/// UI log times the four requests at 1,000, 2,000, 3,000 and 4,000.
fn task(context: serde_json::Value, with_ui: bool) -> Session {
    let history = json!([
        {"role": "user", "content": [{"type": "text", "text": "<task>\nRead a.txt\n</task>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.txt"}}]},
        {"role": "user", "content": [{"type": "text", "text": "[read_file for 'a.txt'] Result:"},
            {"type": "text", "text": "x".repeat(4000)}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It holds x."}]},
        {"role": "user", "content": [{"type": "text", "text": "And now?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Still x."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "You're welcome."}]}
    ]);
    let req = |ts: u64, idx: i64| {
        json!({"ts": ts, "type": "say", "say": "api_req_started",
        "text": "{\"tokensIn\":10,\"tokensOut\":5}", "conversationHistoryIndex": idx})
    };
    let ui = json!([req(1000, -1), req(2000, 1), req(3000, 3), req(4000, 5)]);
    let (h, u, c) = (history.to_string(), ui.to_string(), context.to_string());
    read_history_bytes(Path::new("/t/task-c"), h.as_bytes(), with_ui.then_some(u.as_bytes()), Some(c.as_bytes()))
        .remove(0)
}

#[test]
fn updates_take_effect_request_by_request_and_may_replace_any_text() {
    // The read, then the first reply (a truncation notice), each later.
    let context = json!([
        [2, [2, [[1, [[1500, "text", ["[read dropped]"], []]]]]]],
        [1, [0, [[0, [[2500, "text", ["[NOTE] history removed"], []]]]]]]
    ]);
    let s = task(context, true);
    // Messages: the task 0, the read call 1, its result 2, then one per element.
    let cleared: Vec<_> = s.recorded_clearings.iter().map(|c| (c.at, c.blocks.clone())).collect();
    assert_eq!(
        cleared,
        [
            (3, vec![ClearedBlock::new(2, 0, vec![Block::text("[read dropped]")])]),
            (5, vec![ClearedBlock::new(1, 0, vec![Block::text("[NOTE] history removed")])])
        ]
    );
    assert!(warnings(&s).is_empty(), "{:?}", warnings(&s));
}

#[test]
fn updates_that_cannot_be_placed_or_timed_are_said_and_not_applied() {
    // No such block; a header replaced, which would make the result text.
    let context =
        json!([[2, [2, [[7, [[1500, "text", ["?"], []]]]]]], [2, [2, [[0, [[2500, "text", ["plain text"], []]]]]]]]);
    let s = task(context.clone(), true);
    assert!(s.recorded_clearings.is_empty());
    assert_eq!(
        warnings(&s),
        [
            "1 update(s) name no text block of the history: not applied",
            "1 update(s) would change how a history element reads (its messages or blocks): not applied, \
the element is counted as the history holds it"
        ]
    );
    let s = task(context, false);
    assert!(s.recorded_clearings.is_empty());
    let untimed = "2 update(s) not applied: without ui_messages.json the requests they reached are not known";
    assert!(warnings(&s).contains(&untimed), "{:?}", warnings(&s));
}

#[test]
fn an_element_takes_effect_at_a_bounded_number_of_requests() {
    // A read, then 40 more exchanges; the read's text changes before each request.
    let mut history = vec![
        json!({"role": "user", "content": [{"type": "text", "text": "<task>\nRead a.txt\n</task>"}]}),
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}]}),
        json!({"role": "user", "content": [{"type": "text", "text": "[read_file for 'a.txt'] Result:"},
            {"type": "text", "text": "x".repeat(4000)}]}),
    ];
    let mut ui = vec![];
    let t0 = 1_730_000_000_000u64;
    for k in 0..42u64 {
        if k > 0 {
            history.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("reply {k}")}]}));
            history.push(json!({"role": "user", "content": [{"type": "text", "text": format!("next {k}")}]}));
        }
        ui.push(json!({"ts": t0 + 1000 * k, "type": "say", "say": "api_req_started", "text": "{\"tokensIn\":1}"}));
    }
    history.push(json!({"role": "assistant", "content": [{"type": "text", "text": "done"}]}));
    let updates: Vec<_> = (0..41u64).map(|k| json!([t0 + 1000 * k, "text", [format!("note {k}")], []])).collect();
    let context = json!([[2, [2, [[1, updates]]]]]);
    let (h, u, c) = (json!(history).to_string(), json!(ui).to_string(), context.to_string());
    let s = read_history_bytes(Path::new("/t/many"), h.as_bytes(), Some(u.as_bytes()), Some(c.as_bytes())).remove(0);
    assert_eq!(s.recorded_clearings.len(), 32);
    assert!(warnings(&s).contains(&"9 update(s) not applied: an element takes effect at more than 32 requests"));
}
