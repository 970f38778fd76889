use super::*;
use crate::model::{ApiErrorKind, Block, Origin, Role};
use crate::testing::{corpus_dir, fixtures_dir};
use pretty_assertions::assert_eq;

fn read_fixture(name: &str) -> Session {
    let path = fixtures_dir().join("gemini").join(name);
    let data = std::fs::read(&path).unwrap();
    assert_eq!(crate::read::detect(&data), Some(Format::Gemini), "{name} must be detected as gemini");
    read(&path, &data).remove(0)
}

#[test]
fn failed_tool_call_and_usage_mapping() {
    let s = read_fixture("session-failed-tool.json");
    assert_eq!(s.id, "gem-fixture-1");
    assert_eq!(s.meta.models, ["gemini-2.5-pro", "gemini-2.5-flash"]);
    let shape: Vec<(Role, Origin, u64)> = s.messages.iter().map(|m| (m.role, m.origin, m.source_line)).collect();
    assert_eq!(
        shape,
        [
            (Role::User, Origin::Human, 1),
            (Role::Assistant, Origin::Model, 2),
            (Role::User, Origin::ToolResult, 2),
            (Role::Assistant, Origin::Model, 3),
            (Role::User, Origin::ToolResult, 3),
            (Role::Assistant, Origin::Model, 6),
        ]
    );
    // The tool use alone: the thoughts were never sent again, and empty
    // content adds no text block.
    let m = &s.messages[1];
    assert!(
        matches!(&m.blocks[0], Block::ToolUse { id, name, .. } if id == "list_directory-1-a" && name == "list_directory")
    );
    assert_eq!(m.blocks.len(), 1);
    assert_eq!(s.diagnostics.sent_otherwise.get("thoughts, never sent again"), Some(&1));
    // The failed call: its error text, flagged.
    assert_eq!(
        s.messages[2].blocks,
        [Block::ToolResult {
            tool_use_id: "list_directory-1-a".into(),
            content: vec![Block::text("Path must be absolute: .")],
            is_error: Some(true),
        }]
    );
    assert!(
        matches!(&s.messages[4].blocks[0], Block::ToolResult { is_error: Some(false), content, .. } if content == &[Block::text("a.py\nb.py")])
    );
    // Content given as parts.
    assert_eq!(s.messages[5].blocks, [Block::text("There are two files.")]);

    // input 5000 (cached 1000 included), tool 5, output 20 + thoughts 30.
    assert_eq!(s.calls.len(), 3);
    let u = s.calls[0].usage.unwrap();
    assert_eq!((u.uncached_input, u.cache_read, u.cache_write, u.output, u.reasoning), (4005, 1000, 0, 50, 30));
    assert_eq!(u.prompt_tokens(), 5005);
    assert_eq!(s.calls[2].model.as_deref(), Some("gemini-2.5-flash"));
    assert_eq!(s.calls.iter().map(|c| c.message_index).collect::<Vec<_>>(), [1, 3, 5]);
    assert_eq!(s.stats.usage_records, 3);
    assert_eq!(s.stats.records, 7);

    assert_eq!(s.errors.len(), 1);
    assert_eq!(s.errors[0].kind, ApiErrorKind::RateLimit);
    assert_eq!(s.errors[0].source_line, 5);
    assert_eq!(s.diagnostics.skipped.get("info"), Some(&1));
    assert_eq!(s.diagnostics.unknown_kinds.get("mystery"), Some(&1));
    assert_eq!(s.messages[0].timestamp, crate::read::time::parse_iso("2025-10-29T10:36:01.000Z"));
}

#[test]
fn torn_file_is_reported_in_a_session() {
    let s = read_fixture("session-truncated.json");
    assert!(s.messages.is_empty());
    assert_eq!(s.diagnostics.bad_lines, 1);
    assert!(s.diagnostics.messages[0].message.contains("not valid JSON"));
    let s = read(Path::new("x.json"), br#"{"sessionId":"a","messages":{}}"#).remove(0);
    assert_eq!(s.diagnostics.bad_lines, 1);
    let s = read(Path::new("x.json"), br#"{"sessionId":"a","messages":[3,{"type":"user","content":[{"text":"hi"}]}]}"#)
        .remove(0);
    assert_eq!(s.diagnostics.bad_lines, 1);
    assert_eq!(s.messages.len(), 1);
    assert_eq!(s.messages[0].source_line, 2);
}

#[test]
fn corpus_matches_manifest() {
    let Some(corpus) = corpus_dir() else { return };
    let mut files: Vec<_> = std::fs::read_dir(corpus.join("gemini")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 6);
    for path in files {
        let name = format!("gemini/{}", path.file_name().unwrap().to_string_lossy());
        let data = std::fs::read(&path).unwrap();
        assert_eq!(crate::read::detect(&data), Some(Format::Gemini), "{name}");
        let s = read(&path, &data).remove(0);
        let (tools, usage) = crate::read::pi::tests::manifest_counts(&corpus, &name);
        assert_eq!(s.tool_call_count(), tools, "{name}: tool calls");
        assert_eq!(s.stats.usage_records, usage, "{name}: usage records");
        assert_eq!(s.usage_count() as u64, usage, "{name}: one call per gemini message");
        assert_eq!(s.diagnostics.bad_lines, 0, "{name}");
        assert!(s.diagnostics.unknown_kinds.is_empty(), "{name}");
        // Every tool use is answered right after its assistant message.
        for (i, m) in s.messages.iter().enumerate() {
            if m.tool_uses().count() > 0 {
                assert!(s.messages[i + 1].has_tool_results(), "{name}: message {i}");
            }
        }
    }
}

/// A JSONL recording (v0.39 on): messages rewritten by id, the tool result
/// written twice (in the call and as a user message), a rewind, metadata
/// updates, a record of no known kind and a torn last line.
#[test]
fn jsonl_recordings_fold_updates_rewinds_and_echoes() {
    let s = read_fixture("session-2026-05-01T10-00-4f3c9a2e.jsonl");
    assert_eq!(s.id, "4f3c9a2e-1b7d-4c11-9e0a-2d5f6a7b8c90");
    assert_eq!(s.meta.title.as_deref(), Some("Listing the src directory"));
    assert_eq!(s.meta.models, ["gemini-2.5-pro", "gemini-2.5-flash"]);
    let shape: Vec<(Role, Origin, u64)> = s.messages.iter().map(|m| (m.role, m.origin, m.source_line)).collect();
    assert_eq!(
        shape,
        [
            (Role::User, Origin::Human, 2),
            // g-1 as last written, with its tool call, and the call's result.
            (Role::Assistant, Origin::Model, 6),
            (Role::User, Origin::ToolResult, 6),
            (Role::Assistant, Origin::Model, 8),
            // u-3 and g-3 were rewound.
            (Role::User, Origin::Human, 12),
            (Role::Assistant, Origin::Model, 14),
        ]
    );
    assert!(
        matches!(&s.messages[1].blocks[0], Block::ToolUse { id, name, .. } if id == "call-1" && name == "list_directory")
    );
    assert!(matches!(&s.messages[2].blocks[0], Block::ToolResult { tool_use_id, .. } if tool_use_id == "call-1"));
    assert!(s.messages.iter().all(|m| m.text() != "Deleting it."), "a rewound message was kept");
    assert_eq!(s.calls.len(), 3);
    let first = s.calls[0].usage.as_ref().unwrap();
    assert_eq!((first.uncached_input, first.output, first.reasoning), (7173, 54, 40));
    // The echo is skipped as such, the $patch line counted, the torn line reported.
    let diag = format!("{:?}", s.diagnostics);
    assert!(diag.contains("tool response echo"), "{diag}");
    assert!(diag.contains("recording line"), "{diag}");
    assert!(s.diagnostics.messages.iter().any(|d| d.line == 17), "{diag}");
}

/// A tool's result only written as a user message (the call has none) is
/// still read, as the call's result.
#[test]
fn a_result_only_in_a_user_message_is_the_calls_result() {
    let text = concat!(
        r#"{"sessionId":"s","projectHash":"p","startTime":"2026-05-01T10:00:00.000Z"}"#,
        "\n",
        r#"{"id":"g","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"read_file","args":{"path":"a.ts"},"status":"success"}]}"#,
        "\n",
        r#"{"id":"u","type":"user","content":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"export const x = 1;"}}}]}"#,
        "\n",
    );
    assert_eq!(crate::read::detect(text.as_bytes()), Some(Format::Gemini));
    let s = read(Path::new("s.jsonl"), text.as_bytes()).remove(0);
    let results: Vec<&Block> =
        s.messages.iter().flat_map(|m| &m.blocks).filter(|b| matches!(b, Block::ToolResult { .. })).collect();
    assert_eq!(results.len(), 1, "one result for the call: {:?}", s.messages);
    assert!(matches!(
        results[0],
        Block::ToolResult { tool_use_id, content, is_error: Some(false) } if tool_use_id == "c1" && !content.is_empty()
    ));
}

/// A compression rewrites the recording's messages (`$set.messages`) to what
/// the model sees after it, all under new ids: the turns before it stay, as
/// the calls they were, and the new messages are what a recorded compaction
/// inserted (its summary, the acknowledgement, the turns it kept), no calls.
#[test]
fn a_compression_keeps_the_earlier_calls_and_is_recorded() {
    let s = read_fixture("session-2026-06-10T09-00-7c1e5b2a.jsonl");
    let prompts: Vec<u64> = s.calls.iter().filter_map(|c| c.usage.map(|u| u.prompt_tokens())).collect();
    assert_eq!(prompts, [7_400, 7_520, 7_650, 7_480], "every call, with its usage");
    assert_eq!(s.recorded_compactions.len(), 1);
    let c = &s.recorded_compactions[0];
    assert_eq!((c.kind, c.source_line, c.inserted.len(), c.kept.len()), (CompactionKind::GeminiCompression, 9, 5, 0));
    let inserted = &s.messages[c.inserted.clone()];
    let origins: Vec<Origin> = inserted.iter().map(|m| m.origin).collect();
    assert_eq!(origins, [Origin::Injected, Origin::CompactSummary, Origin::Model, Origin::Injected, Origin::Model]);
    assert!(inserted[1].text().starts_with("<state_snapshot>"));
    assert!(s.calls.iter().all(|call| !c.inserted.contains(&call.message_index)), "an inserted turn is no call");
    assert_eq!(s.messages[c.inserted.end].text(), "Now run the retry tests");
}

/// A snapshot of the same messages (a resume, masked tool outputs) updates
/// them, one of fewer (a failed request taken back) drops the last: no
/// compaction.
#[test]
fn a_snapshot_without_new_messages_updates_the_history() {
    let line = |v: serde_json::Value| v.to_string() + "\n";
    let head = line(serde_json::json!({"sessionId": "s", "projectHash": "p"}));
    let u = serde_json::json!({"id": "u", "type": "user", "content": "hi"});
    let g =
        serde_json::json!({"id": "g", "type": "gemini", "content": "long output", "tokens": {"input": 9, "output": 1}});
    let masked =
        serde_json::json!({"id": "g", "type": "gemini", "content": "[masked]", "tokens": {"input": 9, "output": 1}});
    let text = head.clone()
        + &line(u.clone())
        + &line(g)
        + &line(serde_json::json!({"$set": {"messages": [u.clone(), masked]}}));
    let s = read(Path::new("s.jsonl"), text.as_bytes()).remove(0);
    assert!(s.recorded_compactions.is_empty());
    assert_eq!((s.messages.len(), s.messages[1].text().as_ref(), s.calls.len()), (2, "[masked]", 1));
    let fewer = head + &line(u.clone()) + &line(serde_json::json!({"$set": {"messages": [u]}}));
    let s = read(Path::new("s.jsonl"), fewer.as_bytes()).remove(0);
    assert!(s.recorded_compactions.is_empty());
    assert_eq!((s.messages.len(), s.calls.len()), (1, 0));
}

/// After a compression, Gemini's next snapshot (masked tool outputs, a
/// resume) names only what the model sees: the turns the compression
/// replaced, and the compression itself, stay.
#[test]
fn a_snapshot_after_a_compression_keeps_what_it_replaced() {
    let path = fixtures_dir().join("gemini").join("session-2026-06-10T09-00-7c1e5b2a.jsonl");
    let mut data = std::fs::read(&path).unwrap();
    let visible: Vec<serde_json::Value> = String::from_utf8_lossy(&data)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .flat_map(|v| match v.pointer("/$set/messages") {
            Some(serde_json::Value::Array(m)) => m.clone(),
            _ => v
                .get("id")
                .filter(|id| matches!(id.as_str(), Some("u-3" | "g-4")))
                .map(|_| v.clone())
                .into_iter()
                .collect(),
        })
        .collect();
    assert_eq!(visible.len(), 7);
    data.extend_from_slice(format!("{}\n", serde_json::json!({"$set": {"messages": visible}})).as_bytes());
    let s = read(&path, &data).remove(0);
    let prompts: Vec<u64> = s.calls.iter().filter_map(|c| c.usage.map(|u| u.prompt_tokens())).collect();
    assert_eq!(prompts, [7_400, 7_520, 7_650, 7_480]);
    assert_eq!(s.recorded_compactions.len(), 1);
    assert_eq!(s.recorded_compactions[0].inserted.len(), 5);
}

#[test]
fn a_resumed_legacy_session_copies_its_history_into_the_recording() {
    // Resuming `x.json` writes `x.jsonl`: the legacy header (its lastUpdated),
    // its messages, then the new turns. The `.json` stays.
    let legacy = read_fixture("session-2026-07-20T08-00-9d8e7f6a.json");
    let mut s = read_fixture("session-2026-07-20T08-00-9d8e7f6a.jsonl");
    assert_eq!((legacy.inherited, legacy.forked_from.as_deref()), (0, None));
    assert_eq!(s.id, legacy.id);
    assert_eq!(s.inherited, 2, "the legacy request and answer");
    assert_eq!(s.forked_from.as_deref(), Some("session-2026-07-20T08-00-9d8e7f6a.json"));
    assert_eq!(s.calls.len(), 2, "read alone, the copied answer is a call");
    // Beside the `.json`, the copied answer is that file's.
    s.settle_fork(true);
    let calls: Vec<_> = s.calls.iter().map(|c| (c.message_index, c.usage.map(|u| u.prompt_tokens()))).collect();
    assert_eq!(calls, [(3, Some(6400))]);
}

#[test]
fn a_fresh_recording_copies_nothing() {
    let s = read_fixture("session-2026-05-01T10-00-4f3c9a2e.jsonl");
    assert_eq!((s.inherited, s.forked_from.as_deref()), (0, None));
}

/// Gemini CLI records a result again as the whole user turn it was sent in:
/// with parallel calls, each call's `result` then holds every call's response.
#[test]
fn a_result_recorded_as_the_whole_turn_keeps_only_its_own_response() {
    let s = read_fixture("session-2026-09-14T16-00-5b6c7d8e.json");
    assert_eq!(s.diagnostics.messages, []);
    let results: Vec<(&str, Vec<&Block>)> = s
        .messages
        .iter()
        .flat_map(|m| m.blocks.iter())
        .filter_map(|b| match b {
            Block::ToolResult { tool_use_id, content, .. } => Some((tool_use_id.as_str(), content.iter().collect())),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    let text = |b: &Block| match b {
        Block::Text { text } => text.lines().next().map(str::to_string),
        _ => None,
    };
    // Each call its own output; the image sent after the second response is the second's.
    assert_eq!(results[0].0, "read_file-1-a");
    assert_eq!(results[0].1.len(), 1);
    assert_eq!(results[1].0, "read_file-1-b");
    assert_eq!(results[1].1.len(), 2);
    assert!(matches!(results[1].1[1], Block::Image { .. }));
    assert_eq!(text(results[0].1[0]).as_deref(), Some("key_001 = 7"));
    assert_ne!(results[0].1[0], results[1].1[0]);
}

#[test]
fn own_parts_splits_a_turn_by_response_and_leaves_a_call_s_own_result_whole() {
    let fr = |id: &str| serde_json::json!({"functionResponse": {"id": id, "response": {"output": id}}});
    let media = |n: u32| serde_json::json!({"inlineData": {"mimeType": "image/png", "data": n.to_string()}});
    let turn = [media(0), fr("a"), media(1), fr("b"), media(2), media(3), fr("c")];
    let ids = |parts: Vec<&Value>| -> Vec<String> { parts.iter().map(|p| p.to_string()).collect() };
    let all: Vec<&Value> = turn.iter().collect();
    // Parts before the first response go with it; each response takes what follows it.
    assert_eq!(ids(own_parts(all.clone(), "a")), ids(vec![&turn[0], &turn[1], &turn[2]]));
    assert_eq!(ids(own_parts(all.clone(), "b")), ids(vec![&turn[3], &turn[4], &turn[5]]));
    assert_eq!(ids(own_parts(all.clone(), "c")), ids(vec![&turn[6]]));
    // A result naming only this call, or none of it, is kept whole.
    let own = [fr("a"), media(1)];
    assert_eq!(own_parts(own.iter().collect(), "a").len(), 2);
    assert_eq!(own_parts(all.clone(), "z").len(), turn.len());
}

/// A `thought` part in a model's content is no more sent than its `thoughts`.
#[test]
fn a_thought_part_is_left_out_and_counted() {
    let log = concat!(
        r#"{"sessionId":"t","projectHash":"p","startTime":"2026-01-01T00:00:00Z","lastUpdated":"2026-01-01T00:00:00Z","messages":["#,
        r#"{"id":"u","timestamp":"2026-01-01T00:00:01Z","type":"user","content":"hi"},"#,
        r#"{"id":"g","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":[{"text":"weighing it","thought":true},{"text":"Hello."}],"#,
        r#""thoughts":[],"model":"gemini-2.5-pro"}]}"#
    );
    let s = read(Path::new("session-t.json"), log.as_bytes()).remove(0);
    assert_eq!(s.messages[1].blocks, [Block::text("Hello.")]);
    assert_eq!(s.diagnostics.sent_otherwise.get("thoughts, never sent again"), Some(&1));
}

/// Gemini CLI compressed between two calls and recorded nothing of it: the
/// prompt fell from 12,400 to 3,900 tokens. The session says so, once, at
/// the call after the drop.
#[test]
fn a_compression_only_the_usage_shows_is_warned() {
    let s = read_fixture("session-2026-02-10T09-00-2c4d6e8f.json");
    assert!(s.recorded_compactions.is_empty());
    let warned: Vec<&crate::model::Diagnostic> =
        s.diagnostics.messages.iter().filter(|d| d.message.contains("no compression recorded")).collect();
    assert_eq!(warned.len(), 1);
    assert_eq!(warned[0].line, 5);
    assert!(warned[0].message.contains("from 12400 to 3900 tokens"));
    assert!(warned[0].message.contains("(1 such drop(s)"));
}

#[test]
fn a_drop_is_a_compression_only_when_large_enough() {
    // Below 60 % of the call before, and by at least 8,192 tokens.
    assert!(is_unrecorded_drop(52_400, 15_800));
    assert!(!is_unrecorded_drop(52_400, 31_500));
    assert!(!is_unrecorded_drop(12_000, 5_000));
    assert!(is_unrecorded_drop(20_000, 11_000));
    assert!(!is_unrecorded_drop(100, 50_000));
}

#[test]
fn a_drop_a_recorded_compression_or_masking_explains_is_not_warned() {
    let mut s = read_fixture("session-2026-02-10T09-00-2c4d6e8f.json");
    let base = s.clone();
    // The compression recorded between the two calls (as a JSONL recording
    // of a newer CLI writes it).
    let at = s.calls[2].message_index;
    s.diagnostics.messages.clear();
    s.recorded_compactions.push(RecordedCompaction {
        kind: CompactionKind::GeminiCompression,
        source_line: 4,
        kept: at..at,
        head: 0..0,
        inserted: at..at,
        tokens_before: None,
        trigger: None,
    });
    warn_unrecorded_compressions(&mut s, Path::new("x.json"));
    assert!(s.diagnostics.messages.is_empty());
    // A masking there explains it as well.
    let mut s = base;
    s.diagnostics.messages.clear();
    s.recorded_clearings.push(RecordedClearing {
        source_line: 4,
        at,
        blocks: Vec::new(),
        tokens_saved: None,
        trigger: None,
    });
    warn_unrecorded_compressions(&mut s, Path::new("x.json"));
    assert!(s.diagnostics.messages.is_empty());
}
