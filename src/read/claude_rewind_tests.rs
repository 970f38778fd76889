//! Tests of rewinds: the branches a Claude Code conversation was rewound from
//! are left out, and only sibling prompts make one.

use super::read_with;
use super::tests::{fixture, read_fixture};
use std::path::Path;

/// `/rewind` (or an edited prompt) appends a prompt whose parent is an
/// earlier record; the prompt it replaced and what followed stay in the file
/// but are never sent again: they are left out, and said.
#[test]
fn a_branch_rewound_from_is_left_out_and_said() {
    let s = &read_fixture("rewind.jsonl")[0];
    let ids: Vec<&str> = s.calls.iter().filter_map(|c| c.response_id.as_deref()).collect();
    assert_eq!(ids, ["msg_01RW1", "msg_01RW2", "msg_01RW4"]);
    let text: String = s.messages.iter().map(|m| crate::model::joined_text(&m.blocks)).collect();
    assert!(!text.contains("timings"), "{text}");
    assert!(text.contains("resolved config"), "{text}");
    let said: Vec<&str> =
        s.diagnostics.messages.iter().map(|d| d.message.as_str()).filter(|m| m.contains("rewound")).collect();
    assert_eq!(said.len(), 1, "{:?}", s.diagnostics.messages);
    assert!(said[0].starts_with("rewound conversation: the 2 record(s) and 1 response(s)"), "{}", said[0]);
    // Both parse paths read it.
    let path = fixture("rewind.jsonl");
    let data = std::fs::read(&path).unwrap_or_default();
    let slow: Vec<Option<String>> =
        read_with(&path, &data, false)[0].calls.iter().map(|c| c.response_id.clone()).collect();
    assert_eq!(slow, s.calls.iter().map(|c| c.response_id.clone()).collect::<Vec<_>>());
}

/// Only two prompts of one parent make a rewind: an edited first prompt
/// (two roots) is one; a hook's record or a second response beside a
/// response is not, and nothing of it is left out.
#[test]
fn only_sibling_prompts_make_a_rewind() {
    let line = |uuid: &str, parent: Option<&str>, ty: &str, content: serde_json::Value, id: &str| {
        let mut m = serde_json::json!({"role": if ty == "user" { "user" } else { "assistant" }, "content": content});
        if ty == "assistant" {
            m["id"] = id.into();
            m["model"] = "claude-sonnet-4-6".into();
            m["usage"] = serde_json::json!({"input_tokens": 10, "output_tokens": 5});
        }
        serde_json::json!({"type": ty, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "message": m,
            "timestamp": "2026-11-02T09:00:00.000Z"})
        .to_string()
    };
    let read = |lines: &[String]| {
        let data = lines.join("\n");
        let s = read_with(Path::new("s.jsonl"), data.as_bytes(), true).remove(0);
        let texts: Vec<String> = s.messages.iter().map(|m| crate::model::joined_text(&m.blocks).into_owned()).collect();
        (texts, s.diagnostics.messages.iter().any(|d| d.message.contains("rewound")))
    };
    let t = |s: &str| serde_json::Value::from(s);
    // The first prompt edited: the first root and its answer are left out.
    let edited = [
        line("u1", None, "user", t("first try"), ""),
        line("a1", Some("u1"), "assistant", serde_json::json!([{"type": "text", "text": "answer one"}]), "m1"),
        line("u2", None, "user", t("second try"), ""),
        line("a2", Some("u2"), "assistant", serde_json::json!([{"type": "text", "text": "answer two"}]), "m2"),
    ];
    assert_eq!(read(&edited), (vec!["second try".to_string(), "answer two".to_string()], true));
    // A record beside a response (the next prompt follows the other one): kept.
    let beside = [
        line("u1", None, "user", t("go"), ""),
        line("a1", Some("u1"), "assistant", serde_json::json!([{"type": "text", "text": "done"}]), "m1"),
        line("a2", Some("u1"), "assistant", serde_json::json!([{"type": "text", "text": "also"}]), "m2"),
        line("u2", Some("a2"), "user", t("next"), ""),
    ];
    let (texts, said) = read(&beside);
    assert_eq!((texts.len(), said), (4, false));
    // A tool result beside a prompt is no rewind either.
    let result = serde_json::json!([{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]);
    let tool = [
        line("u1", None, "user", t("go"), ""),
        line(
            "a1",
            Some("u1"),
            "assistant",
            serde_json::json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]),
            "m1",
        ),
        line("r1", Some("a1"), "user", result, ""),
        line("u2", Some("a1"), "user", t("stop"), ""),
    ];
    let (texts, said) = read(&tool);
    assert_eq!((texts.len(), said), (4, false));
    // A prompt whose parent was never written is no second first prompt.
    let dangling = [
        line("u1", None, "user", t("go"), ""),
        line("a1", Some("u1"), "assistant", serde_json::json!([{"type": "text", "text": "done"}]), "m1"),
        line("u2", Some("never-written"), "user", t("next"), ""),
    ];
    let (texts, said) = read(&dangling);
    assert_eq!((texts.len(), said), (3, false));
}
