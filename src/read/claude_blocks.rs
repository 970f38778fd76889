//! How a Claude Code content block becomes a [`Block`]: its text moved out,
//! media kept as a size, and its identity for merging a response's lines.

use crate::model::Block;
use serde_json::Value;
use std::hash::BuildHasher;
use std::hash::{Hash, Hasher};

/// `message.content`: a string is one text block, an array is blocks. Takes the
/// content by value and moves its strings into the blocks.
pub(super) fn content_blocks(content: Option<Value>) -> Vec<Block> {
    match content {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => vec![Block::Text { text }],
        Some(Value::Array(a)) => a.into_iter().map(convert_block).collect(),
        Some(raw) => vec![Block::Other { raw }],
    }
}

/// A string field moved out of a block (None when absent or not a string).
fn take_str(obj: &mut serde_json::Map<String, Value>, key: &str) -> Option<String> {
    match obj.get_mut(key) {
        Some(Value::String(s)) => Some(std::mem::take(s)),
        _ => None,
    }
}

pub(super) fn convert_block(v: Value) -> Block {
    let mut obj = match v {
        Value::Object(obj) => obj,
        Value::String(text) => return Block::Text { text },
        raw => return Block::Other { raw },
    };
    let len = |obj: &serde_json::Map<String, Value>, k: &str| obj.get(k).and_then(Value::as_str).map_or(0, str::len);
    match obj.get("type").and_then(Value::as_str) {
        Some("text") => match take_str(&mut obj, "text") {
            Some(text) => Block::Text { text },
            None => Block::Other { raw: Value::Object(obj) },
        },
        // Claude 4.6 writes `thinking: ""` with only the signature: the signature is
        // opaque, kept as a length only.
        Some("thinking") => Block::Thinking {
            opaque_len: len(&obj, "signature"),
            text: take_str(&mut obj, "thinking").unwrap_or_default(),
        },
        Some("redacted_thinking") => Block::Thinking { text: String::new(), opaque_len: len(&obj, "data") },
        Some("tool_use") => Block::ToolUse {
            id: take_str(&mut obj, "id").unwrap_or_default(),
            name: take_str(&mut obj, "name").unwrap_or_default(),
            input: obj.get_mut("input").map(std::mem::take).unwrap_or_else(|| Value::Object(Default::default())),
        },
        // A `<persisted-output>` result (output spilled to `tool-results/`) is kept
        // as the text the model actually saw: the note plus its preview.
        Some("tool_result") => Block::ToolResult {
            is_error: obj.get("is_error").and_then(Value::as_bool),
            tool_use_id: take_str(&mut obj, "tool_use_id").unwrap_or_default(),
            content: content_blocks(obj.get_mut("content").map(std::mem::take)),
        },
        Some("image") => {
            let source = obj.get("source");
            let src = |k: &str| source.and_then(|x| x.get(k)).and_then(Value::as_str);
            Block::Image {
                media_type: src("media_type").unwrap_or_default().to_string(),
                bytes: src("data").or_else(|| src("url")).map_or(0, str::len),
            }
        }
        Some("document") => document_block(obj),
        // tool_reference, server tool blocks…: kept raw.
        _ => Block::Other { raw: Value::Object(obj) },
    }
}

/// A `document` block (a PDF the Read tool or the user attached, or a text
/// document): its `source` is `base64`, `url` or `file` (media, read by the
/// provider page by page, kept as its size like an image), `text` (the text
/// the model reads) or `content` (text blocks). Anything else stays raw.
fn document_block(mut obj: serde_json::Map<String, Value>) -> Block {
    let kind = obj.get("source").and_then(|v| v.get("type")).and_then(Value::as_str).unwrap_or("").to_string();
    let source = obj.get_mut("source").and_then(Value::as_object_mut);
    match (kind.as_str(), source) {
        ("base64" | "url" | "file", Some(source)) => {
            let len = |k: &str| source.get(k).and_then(Value::as_str).map(str::len);
            Block::Image {
                media_type: source.get("media_type").and_then(Value::as_str).unwrap_or("application/pdf").to_string(),
                bytes: len("data").or_else(|| len("url")).or_else(|| len("file_id")).unwrap_or(0),
            }
        }
        ("text", Some(source)) if source.get("data").is_some_and(Value::is_string) => {
            Block::Text { text: take_str(source, "data").unwrap_or_default() }
        }
        ("content", Some(source)) => {
            let blocks = content_blocks(source.get_mut("content").map(std::mem::take));
            Block::Text { text: crate::model::joined_text(&blocks).into_owned() }
        }
        _ => Block::Other { raw: Value::Object(obj) },
    }
}

/// The hasher of a block's identity: fixed (a block hashes the same in every
/// run), and fast on long texts (every block of every response is hashed).
pub(super) type BlockHasher = foldhash::fast::FoldHasher<'static>;

pub(super) fn block_hasher() -> BlockHasher {
    foldhash::fast::FixedState::default().build_hasher()
}

/// Identity of a block for merging a response's lines: a tool call by its id, any
/// other block by its compact JSON. Used for the blocks the typed structs cannot
/// read (`claude_rec::RawBlock::hash` gives the others their typed identity).
pub(super) fn block_hash(v: &Value) -> u64 {
    let mut h = block_hasher();
    match (v.get("type").and_then(Value::as_str), v.get("id").and_then(Value::as_str)) {
        (Some("tool_use"), Some(id)) => ("tool_use", id).hash(&mut h),
        _ => hash_json(v, &mut h),
    }
    h.finish()
}

/// Feed the compact JSON of `v` to a hasher. The serialization streams into the
/// hasher: a block can be hundreds of MB (pasted files, base64 images), too big
/// to copy as a String.
pub(super) fn hash_json(v: &Value, h: &mut BlockHasher) {
    struct HashWriter<'h>(&'h mut BlockHasher);
    impl std::io::Write for HashWriter<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.write(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Writing into a hasher cannot fail.
    let _ = serde_json::to_writer(HashWriter(h), v);
}
