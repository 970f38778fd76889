//! Tests of what Codex 0.147+ rollouts add: per-response usage records, the
//! host's own records, messages between agents, and numbered lines that say
//! where a sub-agent's copied history ends (`fixtures/codex/rollout-2026-10-02*`).

use super::*;
use crate::model::Session;
use crate::testing::fixtures_dir;

const ROOT: &str = "019f1a00-0000-7000-8000-000000000a01";
const CHILD: &str = "019f1a05-0000-7000-8000-000000000b02";

fn fixture(name: &str) -> Session {
    let path = fixtures_dir().join("codex").join(name);
    let data = std::fs::read(&path).unwrap();
    read(&path, &data).pop().unwrap()
}

fn root() -> Session {
    fixture(&format!("rollout-2026-10-02T09-00-00-{ROOT}.jsonl"))
}

fn child() -> Session {
    fixture(&format!("rollout-2026-10-02T09-05-00-{CHILD}.jsonl"))
}

/// `(message_index, uncached input, cache read, output)` of each call.
fn usages(s: &Session) -> Vec<(usize, u64, u64, u64)> {
    s.calls
        .iter()
        .map(|c| {
            let u = c.usage.as_ref().expect("every call of these files has usage");
            (c.message_index, u.uncached_input, u.cache_read, u.output)
        })
        .collect()
}

fn texts(s: &Session, origin: Origin) -> Vec<String> {
    s.messages.iter().filter(|m| m.origin == origin).map(|m| m.text().into_owned()).collect()
}

#[test]
fn usage_records_measure_each_response_and_token_counts_give_only_the_window() {
    let s = root();
    // The first token_count carries an estimate (input 0) as its last usage:
    // the record before it is the response's.
    let calls = usages(&s);
    assert_eq!(
        calls.iter().map(|&(_, i, c, o)| (i, c, o)).collect::<Vec<_>>(),
        [(6000, 0, 80), (500, 5900, 150), (700, 6300, 40), (1500, 0, 40)]
    );
    assert_eq!(s.meta.context_window, Some(272_000), "the window still comes from token_count");
    assert_eq!(s.diagnostics.skipped.get("event_msg/token_count (usage from token_usage_record)"), Some(&3));
    // A sub-agent's usage written into this file is not this thread's.
    assert_eq!(s.diagnostics.skipped.get("token_usage_record (another thread)"), Some(&1));
    // The compaction's own request measured no response of the log.
    let warnings: Vec<&str> = s.diagnostics.messages.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("1 token_usage_record(s) measure no model response"), "{warnings:?}");
    assert_eq!(s.stats.usage_records, 5 + 3, "the thread's five usage records and its three token_counts");
}

#[test]
fn messages_from_other_agents_and_added_tools_are_input_the_model_reads() {
    let s = root();
    let injected = texts(&s, Origin::Injected);
    assert!(injected.contains(&"Review: the patch also needs a test for empty names.".to_string()), "{injected:?}");
    assert!(injected.contains(&"Second note: run gofmt on pkg/api.".to_string()), "{injected:?}");
    // An encrypted message is sent as a header, then the payload only the
    // provider reads.
    let encrypted = s
        .messages
        .iter()
        .find(|m| m.text().starts_with("Message Type: NEW_TASK\nTask name: /root\nSender: /root/reviewer\n"))
        .expect("the encrypted message's header");
    assert!(matches!(encrypted.blocks[1], Block::Thinking { opaque_len: 33, .. }), "{:?}", encrypted.blocks);
    let tools = s.messages.iter().find(|m| m.role == Role::System && m.text().contains(r#""name":"lint""#));
    assert!(tools.is_some(), "the added tool declarations are in the context");
    // Each is input: the answer after them is a response of its own.
    let (answer, ..) = usages(&s)[2];
    assert_eq!(s.messages[answer].text(), "Added TestCreateUserEmptyName and ran gofmt.");
    assert_eq!(answer, s.messages.iter().position(|m| m.text().contains(r#""name":"lint""#)).unwrap() + 1);
}

#[test]
fn the_hosts_own_records_are_known_and_skipped() {
    let s = root();
    assert!(s.diagnostics.unknown_kinds.is_empty(), "{:?}", s.diagnostics.unknown_kinds);
    for (kind, n) in [
        ("world_state", 2),
        ("retained_context", 1),
        ("realtime_item", 1),
        ("security_risk_score", 1),
        ("inter_agent_communication_metadata", 1),
        ("response_item/configuration_update", 1),
    ] {
        assert_eq!(s.diagnostics.skipped.get(kind), Some(&n), "{kind}");
    }
}

#[test]
fn a_paginated_sub_agent_is_its_own_thread_and_its_copy_ends_at_its_start_ordinal() {
    // Its own turn follows the copy within milliseconds and its turn ids are
    // no UUIDv7: only the line numbers tell where the copy ends.
    let mut s = child();
    assert_eq!(s.id, CHILD, "session_id names the root thread, shared by its sub-agents");
    assert_eq!(s.parent.as_deref(), Some(ROOT));
    assert_eq!(s.inherited, 2, "the parent's prompt and its call");
    assert_eq!(s.meta.models, ["gpt-5.5-mini"]);
    s.settle_fork(true);
    assert_eq!(usages(&s), [(3, 500, 8900, 30)], "the sub-agent's one response, measured by its record");
}

#[test]
fn a_thread_that_continues_another_rollouts_history_says_so() {
    let log = concat!(
        r#"{"timestamp":"2026-10-02T09:00:00.000Z","ordinal":0,"type":"session_meta","payload":{"id":"t1","session_id":"t1","cwd":"/w","cli_version":"0.154.0","history_mode":"paginated","history_base":{"thread_id":"r0","end_ordinal_exclusive":40,"end_byte_offset":91234}}}"#,
        "\n",
        r#"{"timestamp":"2026-10-02T09:00:00.010Z","ordinal":1,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go on"}]}}"#,
        "\n"
    );
    let s = read(Path::new("r.jsonl"), log.as_bytes()).pop().unwrap();
    let d = &s.diagnostics.messages;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].line, 1);
    assert!(d[0].message.contains("history_base"), "{d:?}");
    // An empty base (a thread started from nothing) is no continuation.
    let fresh = log.replace(r#""end_ordinal_exclusive":40"#, r#""end_ordinal_exclusive":0"#);
    assert!(read(Path::new("r.jsonl"), fresh.as_bytes()).pop().unwrap().diagnostics.messages.is_empty());
}

#[test]
fn a_start_ordinal_written_as_a_string_is_read() {
    let data =
        std::fs::read(fixtures_dir().join("codex").join(format!("rollout-2026-10-02T09-05-00-{CHILD}.jsonl"))).unwrap();
    let text = String::from_utf8(data)
        .unwrap()
        .replace(r#""subagent_history_start_ordinal":6"#, r#""subagent_history_start_ordinal":"6""#);
    let s = read(Path::new("c.jsonl"), text.as_bytes()).pop().unwrap();
    assert_eq!(s.inherited, 2);
}

#[test]
fn a_delivered_reply_the_host_keeps_is_context_but_no_response() {
    let s = root();
    let delivered: Vec<&Message> =
        s.messages.iter().filter(|m| m.text() == "Kept the old API as you confirmed.").collect();
    assert_eq!(delivered.len(), 1);
    assert_eq!((delivered[0].role, delivered[0].origin), (Role::Assistant, Origin::Injected));
    assert_eq!(s.calls.len(), 4, "no call for it: the model did not write it then");
}

#[test]
fn a_copy_without_the_parents_session_meta_is_told_by_its_line_numbers() {
    let data =
        std::fs::read(fixtures_dir().join("codex").join(format!("rollout-2026-10-02T09-05-00-{CHILD}.jsonl"))).unwrap();
    let text = String::from_utf8(data).unwrap();
    let without: Vec<&str> =
        text.lines().filter(|l| !(l.contains(r#""ordinal":1,"#) && l.contains("session_meta"))).collect();
    assert_eq!(without.len(), text.lines().count() - 1);
    let mut s = read(Path::new("c.jsonl"), without.join("\n").as_bytes()).pop().unwrap();
    assert_eq!(s.inherited, 2);
    s.settle_fork(true);
    assert_eq!(s.calls.len(), 1);
}
