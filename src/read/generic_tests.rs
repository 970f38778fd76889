use super::*;
use crate::model::{Origin, Role};
use crate::testing::fixtures_dir;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

fn read_fixture(name: &str) -> Session {
    let path = fixtures_dir().join("generic").join(name);
    let data = std::fs::read(&path).unwrap();
    assert_eq!(crate::read::detect(&data), Some(Format::Generic), "{name} must be detected as generic");
    read(&path, &data).remove(0)
}

fn shape(s: &Session) -> Vec<(Role, Origin, u64)> {
    s.messages.iter().map(|m| (m.role, m.origin, m.source_line)).collect()
}

#[test]
fn openai_one_message_per_line() {
    let s = read_fixture("openai-messages.jsonl");
    use Origin::*;
    use Role::*;
    assert_eq!(
        shape(&s),
        [
            (System, Injected, 1),
            (System, Injected, 2),
            (User, Human, 3),
            (Assistant, Model, 4),
            (User, ToolResult, 5), // lines 5 and 6 merged
            (Assistant, Model, 7),
            (User, Human, 8),
            (Assistant, Model, 9),
        ]
    );
    let uses: Vec<(&str, &str, &Value)> = s.messages[3].tool_uses().collect();
    assert_eq!(uses[0], ("call_a", "list_dir", &serde_json::json!({"path": "src"})));
    // Arguments that are not valid JSON are kept verbatim as a string.
    assert_eq!(uses[1].2, &Value::String("{\"path\":\"src/main.rs\"".into()));
    assert_eq!(
        s.messages[4].blocks,
        [
            Block::ToolResult {
                tool_use_id: "call_a".into(),
                content: vec![Block::text("main.rs\nlib.rs")],
                is_error: None
            },
            Block::ToolResult {
                tool_use_id: "call_b".into(),
                content: vec![Block::text("fn main() {}")],
                is_error: None
            },
        ]
    );
    assert_eq!(s.messages[5].blocks[0], Block::Thinking { text: "Two files, trivial main.".into(), opaque_len: 0 });
    assert_eq!(s.messages[6].blocks[1], Block::Image { media_type: "image/png".into(), bytes: 22 });

    assert_eq!(s.calls.len(), 3);
    let u = s.calls[0].usage.unwrap();
    assert_eq!((u.uncached_input, u.cache_read, u.output, u.reasoning), (176, 1024, 40, 0));
    assert_eq!(u.provenance, UsageProvenance::OpenAi);
    assert_eq!(s.calls[1].usage.unwrap().reasoning, 25);
    assert_eq!(s.calls[2].usage, None);
    assert_eq!(s.meta.models, ["gpt-4o", "deepseek-reasoner"]);
    assert_eq!(s.stats.usage_records, 2);
    assert_eq!(s.diagnostics.unknown_kinds.get("role:narrator"), Some(&1));
    assert_eq!(s.diagnostics.bad_lines, 1);
    assert_eq!(s.diagnostics.messages[0].line, 11);
}

#[test]
fn anthropic_one_request_per_line() {
    let s = read_fixture("anthropic-requests.jsonl");
    use Origin::*;
    use Role::*;
    // The longest request (line 3) is the history; the system prompt leads.
    assert_eq!(
        shape(&s),
        [
            (System, Injected, 3),
            (User, Human, 3),
            (Assistant, Model, 3),
            (User, ToolResult, 3), // tool_result and the typed text split in two
            (User, Human, 3),
            (Assistant, Model, 3),
            (User, Human, 3),
        ]
    );
    assert_eq!(s.messages[0].blocks, [Block::text("You are Claude Code.")]);
    assert!(matches!(&s.messages[2].blocks[0], Block::Thinking { opaque_len: 15, .. }));
    assert!(matches!(&s.messages[3].blocks[0], Block::ToolResult { is_error: Some(true), .. }));
    assert_eq!(s.messages[5].blocks[0], Block::Thinking { text: String::new(), opaque_len: 18 });
    assert_eq!(s.messages[6].blocks[1], Block::Image { media_type: "image/jpeg".into(), bytes: 16 });
    // Requests 1 and 2 produced assistant messages 2 and 5.
    let calls: Vec<(usize, Option<&str>)> =
        s.calls.iter().map(|c| (c.message_index, c.response_id.as_deref())).collect();
    assert_eq!(calls, [(2, Some("msg_01")), (5, Some("msg_02"))]);
    let u = s.calls[1].usage.unwrap();
    assert_eq!((u.uncached_input, u.cache_read, u.cache_write, u.output), (12, 2000, 300, 25));
    assert_eq!(u.provenance, UsageProvenance::Anthropic);
    assert_eq!(s.calls[0].model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(s.stats.usage_records, 3);
    assert_eq!(s.stats.records, 3);
    assert_eq!(s.diagnostics.skipped.get("request without recorded response"), Some(&1));
}

#[test]
fn whole_file_request_object() {
    let s = read_fixture("openai-request.json");
    assert_eq!(s.messages.iter().map(|m| m.source_line).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert_eq!(s.messages[0].role, Role::System);
    assert_eq!(s.calls.len(), 1);
    assert_eq!(s.calls[0].message_index, 2);
    assert_eq!(s.meta.models, Vec::<String>::new());
}

#[test]
fn whole_file_anthropic_array_is_generic_not_cline() {
    let data = br#"[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"yo"}],"usage":{"input_tokens":3,"output_tokens":1}}]"#;
    assert_eq!(crate::read::detect(data), Some(Format::Generic));
    let s = read(Path::new("a.json"), data).remove(0);
    assert_eq!(s.messages.len(), 2);
    assert_eq!(s.calls[0].usage.unwrap().provenance, UsageProvenance::Anthropic);
    assert_eq!(s.stats.records, 2);
}

#[test]
fn response_objects_legacy_functions_and_polymorphic_content() {
    let data = br#"{"role":"user","content":{"type":"text","text":"one part"}}
{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"function_call":{"name":"get_time","arguments":"{}"}}}],"usage":{"prompt_tokens":9,"completion_tokens":3}}
{"role":"function","name":"get_time","content":"noon"}
{"role":"assistant","content":["plain", {"type":"refusal","refusal":"no"}, {"type":"input_audio","input_audio":{}}]}
{"type":"ping"}
"#;
    assert_eq!(crate::read::detect(data), Some(Format::Generic));
    let s = read(Path::new("c.jsonl"), data).remove(0);
    assert_eq!(s.messages[0].blocks, [Block::text("one part")]);
    let (id, name, _) = s.messages[1].tool_uses().next().unwrap();
    assert_eq!((id, name), ("function_call_1", "get_time"));
    assert!(
        matches!(&s.messages[2].blocks[0], Block::ToolResult { tool_use_id, .. } if tool_use_id == "function_call_1")
    );
    assert_eq!(s.calls[0].response_id.as_deref(), Some("chatcmpl-1"));
    assert_eq!(s.calls[0].usage.unwrap().uncached_input, 9);
    assert!(matches!(&s.messages[3].blocks[..], [Block::Text { .. }, Block::Text { .. }, Block::Other { .. }]));
    assert_eq!(s.diagnostics.unknown_kinds.get("type:ping"), Some(&1));
}

#[test]
fn rewritten_history_is_reported() {
    let data = br#"{"messages":[{"role":"user","content":"a"}],"response":{"role":"assistant","content":"b","usage":{"input_tokens":1,"output_tokens":1}}}
{"messages":[{"role":"user","content":"SUMMARY"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}
"#;
    let s = read(Path::new("r.jsonl"), data).remove(0);
    assert_eq!(s.messages.len(), 3);
    assert_eq!(s.calls.len(), 1);
    assert_eq!(s.calls[0].usage, None, "request 1 is not a prefix: its usage cannot be placed");
    assert!(s.diagnostics.messages.iter().any(|d| d.message.contains("not a prefix")));
}

#[test]
fn usage_shapes() {
    let responses = serde_json::json!({"input_tokens": 100, "input_tokens_details": {"cached_tokens": 60}, "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 4}});
    let u = parse_usage(&responses).unwrap();
    assert_eq!(
        (u.uncached_input, u.cache_read, u.output, u.reasoning, u.provenance),
        (40, 60, 9, 4, UsageProvenance::OpenAi)
    );
    let odd = serde_json::json!({"prompt_tokens": "12", "completion_tokens": 2.0, "prompt_tokens_details": {"cached_tokens": 99}});
    let u = parse_usage(&odd).unwrap();
    assert_eq!((u.uncached_input, u.cache_read, u.output), (0, 12, 2));
    assert_eq!(parse_usage(&serde_json::json!({"total": 3})), None);
    assert_eq!(parse_usage(&serde_json::json!(5)), None);
}

// ---- robustness: no reader panics on arbitrary or damaged input ----

fn all_readers(data: &[u8]) {
    let p = Path::new("fuzz.jsonl");
    let _ = crate::read::detect(data);
    let _ = crate::read::read_bytes(p, data, None);
    let _ = super::super::pi::read(p, data);
    let _ = super::super::gemini::read(p, data);
    let _ = read(p, data);
    let _ = super::super::cline::read_history_bytes(p, data, Some(data), None);
    let _ = super::super::cline::read_history_bytes(p, data, None, None);
}

fn fixture_files() -> Vec<Vec<u8>> {
    let root = fixtures_dir();
    [
        "pi/v1-compaction.jsonl",
        "pi/v3-tree.jsonl",
        "gemini/session-failed-tool.json",
        "cline/1730000000000/api_conversation_history.json",
        "cline/1730000000000/ui_messages.json",
        "generic/openai-messages.jsonl",
        "generic/anthropic-requests.jsonl",
        "generic/openai-request.json",
    ]
    .iter()
    .map(|f| std::fs::read(root.join(f)).unwrap())
    .collect()
}

/// Damage one line of a fixture: cut it, flip a byte, drop it, or repeat it.
fn mutate(data: &[u8], line: usize, pos: usize, kind: u8, byte: u8) -> Vec<u8> {
    let lines: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    let li = line % lines.len();
    let mut out = Vec::with_capacity(data.len() + 16);
    for (i, l) in lines.iter().enumerate() {
        if i == li {
            let at = if l.is_empty() { 0 } else { pos % l.len() };
            match kind % 5 {
                0 => out.extend_from_slice(&l[..at]),
                1 => {
                    let mut l = l.to_vec();
                    if !l.is_empty() {
                        l[at] = byte;
                    }
                    out.extend_from_slice(&l);
                }
                2 => {}
                3 => {
                    out.extend_from_slice(l);
                    out.push(b'\n');
                    out.extend_from_slice(l);
                }
                _ => {
                    out.extend_from_slice(&l[..at]);
                    out.extend_from_slice(b"{\"type\":\"message\",\"id\":null,\"messages\":[1],\"role\":7}");
                    out.extend_from_slice(&l[at..]);
                }
            }
        } else {
            out.extend_from_slice(l);
        }
        out.push(b'\n');
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        all_readers(&data);
    }

    #[test]
    fn arbitrary_json_lines_never_panic(lines in proptest::collection::vec("\\{\"(type|role|messages|message|content|usage)\":[^\n]{0,60}\\}", 0..8)) {
        all_readers(lines.join("\n").as_bytes());
    }

    #[test]
    fn mutated_fixture_lines_never_panic(
        file in 0usize..8,
        muts in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u8>(), any::<u8>()), 1..4),
    ) {
        let files = fixture_files();
        let mut data = files[file % files.len()].clone();
        for (line, pos, kind, byte) in muts {
            data = mutate(&data, line, pos, kind, byte);
        }
        all_readers(&data);
    }
}
