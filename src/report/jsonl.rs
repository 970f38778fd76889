//! Transcript lines (`transcripts/POLICY/SESSION.jsonl`) written by hand: the
//! same bytes `serde_json::to_writer` gives for a [`Message`] (a test holds the
//! two together), with strings escaped eight bytes at a time. Writing the
//! transcripts through serde was a tenth of a whole replay, most of it spent
//! looking at text bytes one by one for the rare ones that need escaping.

use crate::model::{Block, Message, Origin, Role};

/// Append one message as compact JSON (no newline).
pub fn push_message(out: &mut Vec<u8>, m: &Message) {
    out.extend_from_slice(b"{\"role\":\"");
    out.extend_from_slice(role_name(m.role).as_bytes());
    out.extend_from_slice(b"\",\"origin\":\"");
    out.extend_from_slice(origin_name(m.origin).as_bytes());
    out.extend_from_slice(b"\",\"blocks\":");
    push_blocks(out, &m.blocks);
    out.extend_from_slice(b",\"source_line\":");
    push_u64(out, m.source_line);
    out.extend_from_slice(b",\"timestamp\":");
    match m.timestamp {
        Some(t) => push_i64(out, t),
        None => out.extend_from_slice(b"null"),
    }
    if m.unsent {
        out.extend_from_slice(b",\"unsent\":true");
    }
    out.push(b'}');
}

fn push_blocks(out: &mut Vec<u8>, blocks: &[Block]) {
    out.push(b'[');
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_block(out, b);
    }
    out.push(b']');
}

fn push_block(out: &mut Vec<u8>, b: &Block) {
    match b {
        Block::Text { text } => {
            out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
            push_str(out, text);
        }
        Block::Thinking { text, opaque_len } => {
            out.extend_from_slice(b"{\"type\":\"thinking\",\"text\":");
            push_str(out, text);
            out.extend_from_slice(b",\"opaque_len\":");
            push_u64(out, *opaque_len as u64);
        }
        Block::ToolUse { id, name, input } => {
            out.extend_from_slice(b"{\"type\":\"tool_use\",\"id\":");
            push_str(out, id);
            out.extend_from_slice(b",\"name\":");
            push_str(out, name);
            out.extend_from_slice(b",\"input\":");
            push_value(out, input);
        }
        Block::ToolResult { tool_use_id, content, is_error } => {
            out.extend_from_slice(b"{\"type\":\"tool_result\",\"tool_use_id\":");
            push_str(out, tool_use_id);
            out.extend_from_slice(b",\"content\":");
            push_blocks(out, content);
            out.extend_from_slice(b",\"is_error\":");
            out.extend_from_slice(match is_error {
                Some(true) => b"true",
                Some(false) => b"false",
                None => b"null",
            });
        }
        Block::Image { media_type, bytes } => {
            out.extend_from_slice(b"{\"type\":\"image\",\"media_type\":");
            push_str(out, media_type);
            out.extend_from_slice(b",\"bytes\":");
            push_u64(out, *bytes as u64);
        }
        Block::Other { raw } => {
            out.extend_from_slice(b"{\"type\":\"other\",\"raw\":");
            push_value(out, raw);
        }
    }
    out.push(b'}');
}

/// Arbitrary JSON (tool inputs, unknown blocks), compact, keys in map order as
/// serde_json writes them; numbers are formatted by serde_json itself.
fn push_value(out: &mut Vec<u8>, v: &serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // Writing a number into a Vec cannot fail.
        Value::Number(n) => {
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => push_str(out, s),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_value(out, x);
            }
            out.push(b']');
        }
        Value::Object(o) => {
            out.push(b'{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_str(out, k);
                out.push(b':');
                push_value(out, x);
            }
            out.push(b'}');
        }
    }
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn origin_name(o: Origin) -> &'static str {
    match o {
        Origin::Human => "human",
        Origin::ToolResult => "tool_result",
        Origin::Injected => "injected",
        Origin::CompactSummary => "compact_summary",
        Origin::SyntheticError => "synthetic_error",
        Origin::Model => "model",
    }
}

fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Append `s` as a JSON string escaped as serde_json escapes it: `"`, `\`, and
/// the control characters (`\b \t \n \f \r`, others `\u00xx`); nothing else.
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        if let Some(chunk) = b.get(i..i + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            let mask = crate::model::json_escape_mask(u64::from_le_bytes(w));
            if mask == 0 {
                i += 8;
                continue;
            }
            // Straight to the first byte to escape: a tool output's newline
            // every line would otherwise be reached a byte at a time.
            i += (mask.trailing_zeros() / 8) as usize;
        }
        let c = b[i];
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0C => b"\\f",
            0..=0x1F => b"",
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&b[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(c >> 4)], HEX[usize::from(c & 0xF)]]);
        } else {
            out.extend_from_slice(esc);
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&b[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn text() -> impl Strategy<Value = String> {
        // Runs of plain text with every kind of byte that needs escaping, and
        // multi-byte characters, at every alignment.
        proptest::collection::vec(
            prop_oneof![
                "[a-z ]{0,12}",
                Just("\"".to_string()),
                Just("\\".to_string()),
                Just("\n\r\t\u{8}\u{c}".to_string()),
                (0u8..0x20).prop_map(|c| char::from(c).to_string()),
                Just("é€😀\u{7f}\u{2028}".to_string()),
            ],
            0..12,
        )
        .prop_map(|parts| parts.concat())
    }

    fn block() -> impl Strategy<Value = Block> {
        let leaf = prop_oneof![
            text().prop_map(|text| Block::Text { text }),
            (text(), any::<usize>()).prop_map(|(text, opaque_len)| Block::Thinking { text, opaque_len }),
            (text(), text(), text(), any::<f64>(), any::<i64>()).prop_map(|(id, name, s, f, i)| Block::ToolUse {
                id,
                name,
                input: {
                    let mut o = serde_json::Map::new();
                    o.insert("command".into(), json!(s));
                    o.insert("n".into(), json!([1, -2.5, null, true, false, f, i, u64::MAX, 1e300]));
                    o.insert(s.clone(), json!({ "k": [s, {}], "e": [] }));
                    serde_json::Value::Object(o)
                }
            }),
            (text(), any::<usize>()).prop_map(|(media_type, bytes)| Block::Image { media_type, bytes }),
            text().prop_map(|s| Block::Other { raw: json!({ "type": "x", "s": s }) }),
        ];
        leaf.prop_recursive(2, 8, 4, |inner| {
            (text(), proptest::collection::vec(inner, 0..4), proptest::option::of(any::<bool>()))
                .prop_map(|(tool_use_id, content, is_error)| Block::ToolResult { tool_use_id, content, is_error })
        })
    }

    fn message() -> impl Strategy<Value = Message> {
        (
            prop_oneof![Just(Role::System), Just(Role::User), Just(Role::Assistant)],
            prop_oneof![
                Just(Origin::Human),
                Just(Origin::ToolResult),
                Just(Origin::Injected),
                Just(Origin::CompactSummary),
                Just(Origin::SyntheticError),
                Just(Origin::Model),
            ],
            proptest::collection::vec(block(), 0..4),
            any::<u64>(),
            proptest::option::of(any::<i64>()),
            any::<bool>(),
        )
            .prop_map(|(role, origin, blocks, source_line, timestamp, unsent)| Message {
                role,
                origin,
                blocks,
                source_line,
                timestamp,
                unsent,
            })
    }

    proptest! {
        #[test]
        fn same_bytes_as_serde_json(m in message()) {
            let mut ours = Vec::new();
            push_message(&mut ours, &m);
            prop_assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&m).unwrap());
        }

        #[test]
        fn strings_escape_like_serde_json(s in text()) {
            let mut ours = Vec::new();
            push_str(&mut ours, &s);
            prop_assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&s).unwrap());
        }
    }

    #[test]
    fn extremes() {
        for t in [i64::MIN, -1, 0, 1, i64::MAX] {
            let m = Message {
                timestamp: Some(t),
                source_line: u64::MAX,
                ..Message::new(Role::User, Origin::Human, vec![])
            };
            let mut ours = Vec::new();
            push_message(&mut ours, &m);
            assert_eq!(ours, serde_json::to_vec(&m).unwrap());
        }
        let every_byte: String = (0u8..0x80).map(char::from).collect();
        let mut ours = Vec::new();
        push_str(&mut ours, &every_byte);
        assert_eq!(ours, serde_json::to_vec(&every_byte).unwrap());
    }
}
