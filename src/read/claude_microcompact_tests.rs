//! Tests of Claude Code's microcompacts as the reader records them: the tool
//! outputs each stops sending, from where, and what it names but the log lacks.

use super::read;
use super::tests::read_fixture;
use crate::model::{Block, ClearedBlock, RecordedClearing};
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
