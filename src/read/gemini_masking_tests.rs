//! Tests of Gemini CLI's tool output masking as the reader records it: the
//! output recorded first stays the call's result, the masked form is what
//! the agent sent from the masking on.

use super::read;
use crate::model::{Block, ClearedBlock, Origin};
use crate::testing::fixtures_dir;
use serde_json::{Value, json};
use std::path::Path;

fn text(blocks: &[Block]) -> String {
    crate::model::joined_text(blocks).into_owned()
}

#[test]
fn a_masked_output_is_sent_masked_from_the_masking_on_and_kept_whole_before() {
    let path = fixtures_dir().join("gemini").join("session-2026-08-05T11-00-3a7b9c1d.jsonl");
    let s = read(&path, &std::fs::read(&path).unwrap()).remove(0);
    // u-1, g-1, its result, g-2, its result, g-3, u-2, g-4.
    let origins: Vec<_> = s.messages.iter().map(|m| m.origin).collect();
    use Origin::*;
    assert_eq!(origins, [Human, Model, ToolResult, Model, ToolResult, Model, Human, Model]);
    assert_eq!(s.calls.len(), 4);
    assert_eq!(s.recorded_clearings.len(), 1, "one masking pass, both outputs");
    let c = &s.recorded_clearings[0];
    // Lines 6 and 7 rewrote g-1 and g-2 before u-2 (message 6) was recorded.
    assert_eq!((c.source_line, c.at), (6, 6));
    let places: Vec<_> = c.blocks.iter().map(|b| (b.message, b.block)).collect();
    assert_eq!(places, [(2, 0), (4, 0)]);
    for b in &c.blocks {
        let sent = text(&b.sent);
        assert!(sent.starts_with("<tool_output_masked>\n") && sent.contains("Output too large."), "{sent}");
        // The log's own result is the output as first recorded, whole.
        let Block::ToolResult { content, .. } = &s.messages[b.message].blocks[b.block] else { panic!() };
        assert!(!text(content).contains("<tool_output_masked>"));
        assert!(text(content).len() > 4 * text(&b.sent).len());
    }
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
}

fn call(id: &str, output: &str) -> Value {
    json!({"id": id, "name": "read_file", "status": "success",
           "result": [{"functionResponse": {"id": id, "name": "read_file", "response": {"output": output}}}]})
}

fn gemini(id: &str, calls: &[Value]) -> Value {
    json!({"id": id, "type": "gemini", "content": "", "tokens": {"input": 9, "output": 1}, "toolCalls": calls})
}

const MASKED: &str =
    "<tool_output_masked>\nhead\n\nOutput too large. Full output available at: /t/x.txt\n</tool_output_masked>";

#[test]
fn a_masking_is_recorded_once_and_an_output_never_seen_whole_is_said() {
    let line = |v: Value| v.to_string() + "\n";
    let text = [
        line(json!({"sessionId": "s", "projectHash": "p"})),
        line(json!({"id": "u", "type": "user", "content": "go"})),
        line(gemini("g1", &[call("c1", "the whole output")])),
        line(gemini("g1", &[call("c1", MASKED)])),
        // Written again (its tokens, a later masking pass): nothing new.
        line(gemini("g1", &[call("c1", MASKED)])),
        // First recorded masked: the log never held it whole.
        line(gemini("g2", &[call("c2", MASKED)])),
    ]
    .concat();
    let s = read(Path::new("s.jsonl"), text.as_bytes()).remove(0);
    let cleared: Vec<_> = s.recorded_clearings.iter().map(|c| (c.source_line, c.at, c.blocks.clone())).collect();
    // Sent masked from the message after g1's result on.
    assert_eq!(cleared, [(4, 3, vec![ClearedBlock::new(2, 0, vec![Block::text(MASKED)])])]);
    let warnings: Vec<_> = s.diagnostics.messages.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        warnings,
        ["1 tool output(s) recorded only as Gemini CLI masked them: every call is counted with the masked text, \
also those made before the masking"]
    );
    // A `.json` document is rewritten in place: the same.
    let doc = json!({"sessionId": "s", "messages": [{"id": "u", "type": "user", "content": "go"}, gemini("g1", &[call("c1", MASKED)])]});
    let s = read(Path::new("s.json"), doc.to_string().as_bytes()).remove(0);
    assert!(s.recorded_clearings.is_empty());
    assert_eq!(s.diagnostics.messages.len(), 1);
}

#[test]
fn a_masked_output_a_compression_brought_is_what_the_agent_sent() {
    let line = |v: Value| v.to_string() + "\n";
    let summary =
        json!({"id": "s1", "type": "user", "content": [{"text": "<state_snapshot>read a.txt</state_snapshot>"}]});
    let ack = json!({"id": "s2", "type": "gemini", "content": "Got it. Thanks for the additional context!"});
    let text = [
        line(json!({"sessionId": "s", "projectHash": "p"})),
        line(json!({"id": "u", "type": "user", "content": "go"})),
        line(gemini("g1", &[call("c1", "the whole output")])),
        line(json!({"id": "u2", "type": "user", "content": "more"})),
        line(gemini("g2", &[])),
        // The compression keeps the call, its output masked, under a new id.
        line(json!({"$set": {"messages": [summary, ack, gemini("k1", &[call("c1", MASKED)])]}})),
    ]
    .concat();
    let s = read(Path::new("s.jsonl"), text.as_bytes()).remove(0);
    assert_eq!(s.recorded_compactions.len(), 1);
    assert!(s.recorded_clearings.is_empty());
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
}
