//! Tests of what Claude Code stops sending or sends in part, as the reader
//! records it: the tool outputs each microcompact clears, from where, and what
//! it names but the log lacks; the previews it sends in place of whole outputs
//! (`content-replacement`); the display-only messages (`isVirtual`).

use super::read;
use super::tests::read_fixture;
use super::tests::text_of;
use crate::model::{Block, ClearedBlock, RecordedClearing, Role};
use std::path::Path;

#[test]
fn a_microcompact_clears_the_outputs_it_names_from_the_next_request_on() {
    let s = &read_fixture("microcompact.jsonl")[0];
    let placeholder = Block::text("[Old tool result content cleared]");
    assert_eq!(
        s.recorded_clearings,
        [RecordedClearing {
            source_line: 8,
            // Messages 0..7 were sent before it; the reply after it is message 7.
            at: 7,
            blocks: [(2, 0), (4, 0)].map(|(m, b)| ClearedBlock::new(m, b, vec![placeholder.clone()])).to_vec(),
            tokens_saved: Some(4540),
            trigger: Some("auto".into()),
        }]
    );
    // Nothing else changes: the log keeps the outputs whole, and no compaction.
    assert_eq!(s.messages.len(), 10);
    assert!(s.recorded_compactions.is_empty());
    assert_eq!(s.diagnostics.skipped.get("system/microcompact_boundary"), None);
    let warnings: Vec<_> = s.diagnostics.messages.iter().map(|d| (d.line, d.message.as_str())).collect();
    assert_eq!(
        warnings,
        [(
            8,
            "microcompact_boundary: 1 cleared tool output(s) not found in the log: \
nothing of theirs is taken off the agent's context"
        )]
    );
}

/// A session: a prompt, then per tool id a call and its result, with
/// `between[k]` written after the k-th result.
fn session(ids: &[&str], between: &[(usize, String)]) -> Vec<u8> {
    let mut lines = Vec::new();
    let mut prev = "null".to_string();
    let mut n = 0;
    let mut line = |body: String, prev: &mut String| {
        n += 1;
        let uuid = format!("u{n}");
        lines.push(format!(
            r#"{{"parentUuid":{prev},"sessionId":"s","uuid":"{uuid}","timestamp":"2026-01-21T10:00:{n:02}.000Z",{body}}}"#
        ));
        *prev = format!("\"{uuid}\"");
    };
    line(r#""type":"user","message":{"role":"user","content":"go"}"#.into(), &mut prev);
    for (k, id) in ids.iter().enumerate() {
        line(
            format!(
                r#""type":"assistant","message":{{"id":"msg_{k}","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"tool_use","id":"{id}","name":"Read","input":{{}}}}],"usage":{{"input_tokens":{}}}}}"#,
                100 + k
            ),
            &mut prev,
        );
        line(
            format!(
                r#""type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"output {k}"}}]}}"#
            ),
            &mut prev,
        );
        for (_, body) in between.iter().filter(|b| b.0 == k) {
            line(body.clone(), &mut prev);
        }
    }
    (lines.join("\n") + "\n").into_bytes()
}

fn micro(ids: &[&str]) -> String {
    let ids: Vec<String> = ids.iter().map(|i| format!("\"{i}\"")).collect();
    format!(
        r#""type":"system","subtype":"microcompact_boundary","microcompactMetadata":{{"trigger":"auto","preTokens":10,"tokensSaved":5,"compactedToolIds":[{}],"clearedAttachmentUUIDs":[]}}"#,
        ids.join(",")
    )
}

#[test]
fn an_output_is_cleared_once_until_a_compaction_starts_afresh() {
    let boundary =
        r#""type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":99}"#;
    let data = session(
        &["t0", "t1", "t2", "t3"],
        &[
            (1, micro(&["t0"])),
            // Named again before any compaction: already cleared.
            (2, micro(&["t0", "t1"])),
            (2, boundary.to_string()),
            (3, micro(&["t0"])),
        ],
    );
    let s = &read(Path::new("s.jsonl"), &data)[0];
    let cleared: Vec<_> = s
        .recorded_clearings
        .iter()
        .map(|c| (c.at, c.blocks.iter().map(|b| (b.message, b.block)).collect::<Vec<_>>()))
        .collect();
    // Results are messages 2, 4, 6, 8 (block 0 each).
    assert_eq!(cleared, [(5, vec![(2, 0)]), (7, vec![(4, 0)]), (9, vec![(2, 0)])]);
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
}

#[test]
fn a_microcompact_that_names_no_output_clears_nothing_and_says_what_it_cannot_place() {
    let empty = r#""type":"system","subtype":"microcompact_boundary","microcompactMetadata":{"trigger":"auto","preTokens":837,"tokensSaved":4000,"compactedToolIds":[],"clearedAttachmentUUIDs":[]}"#;
    let broken =
        r#""type":"system","subtype":"microcompact_boundary","microcompactMetadata":{"compactedToolIds":"t0"}"#;
    let data = session(&["t0"], &[(0, empty.to_string()), (0, broken.to_string())]);
    let s = &read(Path::new("s.jsonl"), &data)[0];
    assert!(s.recorded_clearings.is_empty());
    let warnings: Vec<_> = s.diagnostics.messages.iter().map(|d| (d.line, d.message.as_str())).collect();
    assert_eq!(
        warnings,
        [
            (
                4,
                "microcompact_boundary: tokens saved on content it does not name (images): \
still counted in the agent's context"
            ),
            (5, "microcompact_boundary without a compactedToolIds list: nothing cleared")
        ]
    );
}

/// The text of tool result `id` in `s`, if it is one text block.
fn result_text<'s>(s: &'s crate::model::Session, id: &str) -> Option<&'s str> {
    s.messages.iter().flat_map(|m| &m.blocks).find_map(|b| match b {
        Block::ToolResult { tool_use_id, content, .. } if tool_use_id == id => match content.as_slice() {
            [one] => Some(text_of(one)),
            _ => None,
        },
        _ => None,
    })
}

#[test]
fn a_replaced_tool_output_is_the_preview_claude_code_sent_not_the_logged_whole() {
    let s = &read_fixture("content-replacement.jsonl")[0];
    let data = std::fs::read(crate::testing::fixtures_dir().join("claude-code/content-replacement.jsonl")).unwrap();
    let record = String::from_utf8(data)
        .unwrap()
        .lines()
        .find(|l| l.contains(r#""type":"content-replacement""#))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .unwrap();
    let sent = record["replacements"][0]["replacement"].as_str().unwrap();
    assert!(sent.starts_with("<persisted-output>\nOutput too large ("), "{sent}");
    // The test log is sent as the record says, in every request; the linter's
    // output, which no record names, as logged.
    assert_eq!(result_text(s, "toolu_01CrTest"), Some(sent));
    let lint = result_text(s, "toolu_01CrLint").unwrap();
    assert!(lint.starts_with("warning: this `if` has identical blocks"), "{lint}");
    assert!(s.diagnostics.unknown_kinds.is_empty(), "{:?}", s.diagnostics.unknown_kinds);
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
    let said = s.diagnostics.sent_otherwise.get("tool output sent as a preview (content-replacement)");
    assert_eq!(said, Some(&1));
}

#[test]
fn a_display_only_message_is_neither_context_nor_a_call() {
    let s = &read_fixture("content-replacement.jsonl")[0];
    // The REPL's inner Read call and its result are left out; the REPL's own
    // call and result stay, one after the other.
    assert_eq!(result_text(s, "toolu_01CrInner"), None);
    let roles: Vec<Role> = s.messages.iter().map(|m| m.role).collect();
    use Role::{Assistant as A, User as U};
    assert_eq!(roles, [U, A, U, A, U, A, U, A]);
    assert_eq!(s.messages[6].blocks.len(), 1);
    assert!(result_text(s, "toolu_01CrRepl").is_some());
    assert_eq!(s.calls.len(), 4);
    assert!(s.calls.iter().all(|c| c.response_id.as_deref() != Some("msg_01CrVirt")));
    assert_eq!(s.diagnostics.skipped.get("assistant/virtual (not sent)"), Some(&1));
    assert_eq!(s.diagnostics.skipped.get("user/virtual (not sent)"), Some(&1));
}

/// A `content-replacement` record (no uuid, like Claude Code's) of `items`.
fn replacement(items: &str) -> String {
    format!(r#"{{"type":"content-replacement","sessionId":"s","replacements":[{items}]}}"#)
}

#[test]
fn a_replacement_applies_wherever_its_record_stands_and_says_what_it_cannot_place() {
    let preview =
        r#"{"kind":"tool-result","toolUseId":"t1","replacement":"<persisted-output>\npreview\n</persisted-output>"}"#;
    let missing = r#"{"kind":"tool-result","toolUseId":"gone","replacement":"x"}"#;
    let other = r#"{"kind":"image","toolUseId":"t0","replacement":"x"}"#;
    let mut data = session(&["t0", "t1"], &[]);
    // Written before the result it names, and after the session's last line.
    let head = replacement(preview) + "\n";
    data.splice(0..0, head.into_bytes());
    data.extend((replacement(&format!("{missing},{other}")) + "\n").into_bytes());
    data.extend(br#"{"type":"content-replacement","sessionId":"s"}"#);
    let s = &read(Path::new("s.jsonl"), &data)[0];
    assert_eq!(result_text(s, "t1"), Some("<persisted-output>\npreview\n</persisted-output>"));
    assert_eq!(result_text(s, "t0"), Some("output 0"));
    let warnings: Vec<_> = s.diagnostics.messages.iter().map(|d| (d.line, d.message.as_str())).collect();
    assert_eq!(
        warnings,
        [
            (
                7,
                "content-replacement: 1 replacement(s) of a kind or shape not read: what they name is counted as logged"
            ),
            (8, "content-replacement without a replacements list: nothing replaced"),
            (7, "content-replacement: 1 replaced tool output(s) not found in the log: nothing is replaced for them"),
        ]
    );
}
