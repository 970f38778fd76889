use super::*;
use crate::model::{Origin, Session};
use crate::testing::fixtures_dir;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::path::Path;

/// A v3 session of `entries`, each given an id and the one before it as parent.
fn read_entries(entries: &[Value]) -> Vec<Session> {
    let mut log =
        String::from(r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-10-01T10:00:00.000Z","cwd":"/w"}"#);
    for (k, e) in entries.iter().enumerate() {
        let mut e = e.clone();
        e["id"] = json!(format!("e{k}"));
        e["parentId"] = if k == 0 { Value::Null } else { json!(format!("e{}", k - 1)) };
        e["timestamp"] = json!("2026-10-01T10:00:01.000Z");
        log.push('\n');
        log.push_str(&e.to_string());
    }
    super::super::read(Path::new("t.jsonl"), log.as_bytes())
}

fn read_one(entries: &[Value]) -> Session {
    let mut s = read_entries(entries);
    assert_eq!(s.len(), 1);
    s.remove(0)
}

fn call(id: &str) -> Value {
    let content = json!([{"type": "toolCall", "id": id, "name": "read", "arguments": {}}]);
    json!({"type": "message", "message": {"role": "assistant", "content": content, "timestamp": 1}})
}

fn result(id: &str, ts: u64, text: &str) -> Value {
    let content = json!([{"type": "text", "text": text}]);
    json!({"type": "message", "message": {"role": "toolResult", "toolCallId": id, "content": content, "timestamp": ts}})
}

fn ttl(data: Value) -> Value {
    json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data})
}

fn snapshot(pruned: Value, frozen: Value) -> Value {
    ttl(
        json!({"timestamp": 5, "prunedToolResults": pruned, "ambiguousToolResultBaseKeys": [], "frozenToolResults": frozen}),
    )
}

fn hard(key: &str) -> Value {
    json!({"key": key, "mode": "hard", "placeholder": "[cleared]"})
}

fn delta(set: Value, remove: Value) -> Value {
    let none = json!({"set": [], "remove": []});
    let pruned = json!({"set": set, "remove": remove});
    ttl(
        json!({"cacheTtlDelta": {"prunedToolResults": pruned, "ambiguousToolResultBaseKeys": none, "frozenToolResults": none}}),
    )
}

fn user(text: &str) -> Value {
    json!({"type": "message", "message": {"role": "user", "content": text, "timestamp": 1}})
}

/// A cleared block: (message, block, first text sent).
type Cleared = (usize, usize, String);

/// (at, blocks) of each clearing.
fn clearings(s: &Session) -> Vec<(usize, Vec<Cleared>)> {
    let first = |b: &ClearedBlock| match b.sent.first() {
        Some(Block::Text { text }) => text.clone(),
        other => format!("{other:?}"),
    };
    s.recorded_clearings
        .iter()
        .map(|c| (c.at, c.blocks.iter().map(|b| (b.message, b.block, first(b))).collect()))
        .collect()
}

fn warnings(s: &Session) -> Vec<(u64, &str)> {
    s.diagnostics.messages.iter().map(|d| (d.line, d.message.as_str())).collect()
}

#[test]
fn the_fixture_is_read_as_openclaw_sent_it() {
    let path = fixtures_dir().join("pi").join("openclaw-cache-ttl.jsonl");
    let data = std::fs::read(&path).unwrap();
    let s = super::super::read(&path, &data).remove(0);
    assert_eq!(warnings(&s), []);
    let log = |m: usize| match &s.messages[m].blocks[0] {
        Block::ToolResult { content, .. } => match &content[0] {
            Block::Text { text } => text.clone(),
            b => panic!("{b:?}"),
        },
        b => panic!("{b:?}"),
    };
    let (read_log, config) = (log(2), log(4));
    let c = clearings(&s);
    // Line 10, before the 4th request: the log trimmed, the config cut to
    // its cap. The screenshot's mark names text since changed: as logged.
    assert_eq!(c.len(), 3);
    assert_eq!((c[0].0, c[0].1.len()), (7, 2));
    let trimmed = &c[0].1[0];
    assert_eq!((trimmed.0, trimmed.1), (2, 0));
    let note =
        format!("\n\n[Tool result trimmed: kept first 1500 chars and last 1500 chars of {} chars.]", read_log.len());
    assert_eq!(trimmed.2, format!("{}\n...\n{}{note}", &read_log[..1500], &read_log[read_log.len() - 1500..]));
    let cut = &c[0].1[1];
    assert_eq!((cut.0, cut.1), (4, 0));
    assert!(cut.2.starts_with(&config[..16_000]) && cut.2.ends_with("rerun with narrower args if needed]"));
    // Line 13: the config cleared; line 19, the compaction keeps it from
    // message 3 on, so the clearing goes on after it.
    assert_eq!(c[1], (9, vec![(4, 0, "[Old tool result content cleared]".to_string())]));
    assert_eq!(s.recorded_compactions[0].kept.start, 3);
    assert_eq!(c[2], (13, vec![(4, 0, "[Old tool result content cleared]".to_string())]));
    assert_eq!(s.recorded_clearings.iter().map(|c| c.source_line).collect::<Vec<_>>(), [10, 13, 19]);
    assert_eq!(s.diagnostics.skipped.get("openclaw.cache-ttl touch"), Some(&1));
    assert_eq!(s.diagnostics.skipped.get("custom"), Some(&1));
    assert_eq!(s.messages[12].origin, Origin::CompactSummary);
}

#[test]
fn a_soft_trim_keeps_whole_characters_within_1500_utf16_units_at_each_end() {
    let trim = |text: String| soft_trim(&json!([{"type": "text", "text": text}]));
    let emoji = "😀".repeat(2100);
    // "a" then 2,100 surrogate pairs: 4,201 units; the 750th pair would end past 1,500.
    let out = trim(format!("a{emoji}")).unwrap();
    let (head, rest) = out.split_once("\n...\n").unwrap();
    assert_eq!(head, format!("a{}", "😀".repeat(749)));
    assert!(rest.starts_with(&format!("{}\n\n[Tool result trimmed", "😀".repeat(750))));
    assert!(rest.ends_with("of 4201 chars.]"));
    let out = trim(format!("{emoji}a")).unwrap();
    let (head, rest) = out.split_once("\n...\n").unwrap();
    assert_eq!(head, "😀".repeat(750));
    assert!(rest.starts_with(&format!("{}a\n\n", "😀".repeat(749))));
    // 4,000 units or fewer and no image: as logged.
    assert_eq!(trim("x".repeat(4000)), None);
    assert_eq!(trim("😀".repeat(2000)), None);
    // An image is named; a text block without a string is its JSON.
    let content =
        json!([{"type": "text", "text": "see"}, {"type": "image", "data": "AAAA"}, {"type": "text", "text": 7}]);
    assert_eq!(soft_trim(&content).unwrap(), format!("see\n{IMAGE_MARKER}\n{{\"type\":\"text\",\"text\":7}}"));
    assert_eq!(soft_trim(&json!("a string content")), None);
}

#[test]
fn a_source_hash_is_node_s_sha256_of_the_json_texts_in_base64url() {
    // Computed with node: createHash("sha256").update(JSON.stringify(t)).digest("base64url").
    assert_eq!(source_hash(&["a\nb", "é \u{7} \"q\" \\ 😀"]), "RMXjfbObF4x51DCy-gi70r6vVd8ebUbj2GsIJSdmHqo");
    assert_eq!(source_hash(&[]), "T1PNoYwrqgwDVLtfmj7L5e0Sq02OEbqHPC8RFhICuUU");
    assert_eq!(source_hash(&[""]), "BVU530oLgExYyvRsDNKUGvENZME5Xd2OULX1XZRYQeY");
}

#[test]
fn keys_are_the_call_id_and_the_message_s_own_timestamp_as_javascript_writes_it() {
    let key = |m: Value| base_key(&json!({"type": "message", "message": m}));
    assert_eq!(key(json!({"role": "toolResult", "toolCallId": "c", "timestamp": 17})).unwrap(), "tool:c:17");
    assert_eq!(key(json!({"role": "toolResult", "toolCallId": "c", "timestamp": 17.0})).unwrap(), "tool:c:17");
    assert_eq!(key(json!({"role": "toolResult", "toolCallId": "c", "timestamp": 1.5})).unwrap(), "tool:c:1.5");
    assert_eq!(key(json!({"role": "toolResult", "toolCallId": "c", "timestamp": "x"})).unwrap(), "tool:c");
    assert_eq!(key(json!({"role": "toolResult", "toolCallId": "", "timestamp": 3})).unwrap(), "timestamp:3");
    assert_eq!(key(json!({"role": "toolResult"})), None);
    assert_eq!(key(json!({"role": "user", "toolCallId": "c", "timestamp": 3})), None);
}

#[test]
fn a_delta_applies_only_over_a_snapshot_read_whole() {
    let entries = |first: Value| {
        vec![
            user("go"),
            call("c1"),
            result("c1", 11, "one"),
            call("c2"),
            result("c2", 12, "two"),
            first,
            call("c3"),
            delta(json!([hard("tool:c2:12")]), json!([])),
            call("c4"),
        ]
    };
    // No snapshot before it: OpenClaw reads no projection.
    let s = read_one(&entries(user("more")));
    assert_eq!(clearings(&s), []);
    // Over a snapshot: the snapshot's, then the delta's.
    let s = read_one(&entries(snapshot(json!([hard("tool:c1:11")]), json!([]))));
    assert_eq!(clearings(&s), [(5, vec![(2, 0, "[cleared]".into())]), (6, vec![(4, 0, "[cleared]".into())])]);
    // A damaged entry: the deltas after it wait for the next snapshot, and it is said.
    let mut e = entries(snapshot(json!([]), json!([])));
    e.insert(6, ttl(json!({"prunedToolResults": "no"})));
    e.push(delta(json!([hard("tool:c1:11")]), json!([])));
    e.push(snapshot(json!([hard("tool:c1:11")]), json!([])));
    e.push(call("c5"));
    let s = read_one(&e);
    assert_eq!(clearings(&s), [(7, vec![(2, 0, "[cleared]".into())])]);
    assert_eq!(s.recorded_clearings[0].source_line, 13);
    assert_eq!(warnings(&s).len(), 1);
    assert_eq!(warnings(&s)[0].0, 8);
    assert!(warnings(&s)[0].1.starts_with("openclaw.cache-ttl entry of a shape not read"));
}

#[test]
fn a_projection_is_kept_whole_again_only_where_a_clearing_cannot_say_so_and_that_is_said() {
    let s = read_one(&[
        user("go"),
        call("c1"),
        result("c1", 11, "one"),
        snapshot(json!([hard("tool:c1:11")]), json!([])),
        call("c2"),
        delta(json!([]), json!(["tool:c1:11"])),
        call("c3"),
    ]);
    assert_eq!(clearings(&s), [(3, vec![(2, 0, "[cleared]".into())])]);
    assert_eq!(warnings(&s).len(), 1);
    assert!(warnings(&s)[0].1.contains("1 tool output(s) were sent whole again"));
}

#[test]
fn a_key_the_log_holds_twice_or_by_fallback_is_counted_as_logged_and_said() {
    let s = read_one(&[
        user("go"),
        call("c1"),
        result("c1", 11, "one"),
        call("c1"),
        result("c1", 11, "again"),
        snapshot(
            json!([hard("tool:c1:11"), hard("fallback:tool:c1:11:id:x:0"), hard("tool:gone:1")]),
            // Frozen as logged: nothing to miss.
            json!([{"key": "fallback:tool:c1:11:id:y:0", "sourceHash": "h"}, {"key": "tool:gone:2", "sourceHash": "h"}]),
        ),
        call("c2"),
    ]);
    assert_eq!(clearings(&s), []);
    assert_eq!(warnings(&s).len(), 1);
    assert!(warnings(&s)[0].1.contains("3 projection(s) name a tool result this log does not hold once"));
}

#[test]
fn frozen_texts_replace_the_text_blocks_only_while_the_logged_texts_hash_as_recorded() {
    let frozen = |hash: &str| json!([{"key": "tool:c1:11", "sourceHash": hash, "texts": ["cut"]}]);
    let entries = |hash: &str| {
        vec![
            user("go"),
            call("c1"),
            result("c1", 11, "the whole output"),
            snapshot(json!([]), frozen(hash)),
            call("c2"),
        ]
    };
    let s = read_one(&entries(&source_hash(&["the whole output"])));
    assert_eq!(clearings(&s), [(3, vec![(2, 0, "cut".into())])]);
    let s = read_one(&entries("another"));
    assert_eq!(clearings(&s), []);
    assert_eq!(warnings(&s), []);
}

#[test]
fn a_reset_ends_the_projections_and_a_touch_only_log_is_said_to_record_none() {
    let sessions = read_entries(&[
        user("go"),
        call("c1"),
        result("c1", 11, "one"),
        snapshot(json!([hard("tool:c1:11")]), json!([])),
        call("c2"),
        json!({"type": "reset", "reason": "new"}),
        user("again"),
        delta(json!([hard("tool:c1:11")]), json!([])),
        call("c3"),
    ]);
    assert_eq!(sessions.len(), 2);
    assert_eq!(clearings(&sessions[0]).len(), 1);
    assert_eq!(clearings(&sessions[1]), []);
    let s = read_one(&[user("go"), ttl(json!({"timestamp": 5, "provider": "p", "modelId": "m"})), call("c1")]);
    assert_eq!(warnings(&s).len(), 1);
    assert_eq!(warnings(&s)[0].0, 3);
    assert!(warnings(&s)[0].1.starts_with("OpenClaw's cache-TTL pruning was on"));
}

#[test]
fn frozen_texts_keep_the_other_blocks_in_place_and_a_hard_mark_replaces_a_string_content() {
    let content = json!([{"type": "text", "text": "before"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                         {"type": "text", "text": "after"}]);
    let shot = json!({"type": "message", "message": {"role": "toolResult", "toolCallId": "c1", "content": content, "timestamp": 11}});
    let plain = json!({"type": "message", "message": {"role": "toolResult", "toolCallId": "c2", "content": "a string", "timestamp": 12}});
    let frozen = json!([
        {"key": "tool:c1:11", "sourceHash": source_hash(&["before", "after"]), "texts": ["B", "A"]},
        // A hard mark goes before frozen texts, and replaces a string content whole.
        {"key": "tool:c2:12", "sourceHash": source_hash(&[]), "texts": ["x"]}
    ]);
    let s = read_one(&[
        user("go"),
        call("c1"),
        shot,
        call("c2"),
        plain,
        snapshot(json!([hard("tool:c2:12")]), frozen),
        call("c3"),
    ]);
    assert_eq!(s.recorded_clearings.len(), 1);
    let blocks = &s.recorded_clearings[0].blocks;
    assert_eq!(blocks.len(), 2);
    assert_eq!((blocks[0].message, blocks[0].block), (2, 0));
    assert!(
        matches!(&blocks[0].sent[..], [Block::Text { text: b }, Block::Image { .. }, Block::Text { text: a }] if b == "B" && a == "A")
    );
    assert_eq!((blocks[1].message, blocks[1].block, &blocks[1].sent), (4, 0, &vec![Block::text("[cleared]")]));
    assert_eq!(warnings(&s), []);
}
