//! What a Codex tool output says: its text, and whether the call failed, from
//! the exit code or the failure message in its header.

use super::{content_blocks, content_part};
use crate::model::Block;
use serde_json::Value;

/// A tool output: its content blocks and whether it failed (None = unknown).
pub(super) fn tool_output(output: Option<&Value>) -> (Vec<Block>, Option<bool>) {
    match output {
        Some(Value::String(s)) => output_text(s),
        Some(Value::Array(items)) => {
            let blocks: Vec<Block> = items.iter().map(content_part).collect();
            let is_error = blocks.iter().find_map(|b| match b {
                Block::Text { text } => Some(text_status(text)),
                _ => None,
            });
            (blocks, is_error.flatten())
        }
        // Internal payload shape `{content, success}` some builds serialized.
        Some(Value::Object(o)) => {
            let (mut blocks, mut is_error) = match o.get("content") {
                Some(Value::String(s)) => output_text(s),
                other => (content_blocks(other), None),
            };
            if let Some(ok) = o.get("success").and_then(Value::as_bool) {
                is_error = Some(!ok);
            }
            if blocks.is_empty() && o.get("content").is_none() {
                blocks.push(Block::Other { raw: Value::Object(o.clone()) });
            }
            (blocks, is_error)
        }
        Some(Value::Null) | None => (Vec::new(), None),
        Some(other) => (vec![Block::Other { raw: other.clone() }], None),
    }
}

/// A string output. 0.40 wraps it as JSON `{"output": …, "metadata": {"exit_code":
/// …}}`: the inner text and the exit code are used. Later builds write text with
/// an `Exit code: N` / `Process exited with code N` header.
fn output_text(s: &str) -> (Vec<Block>, Option<bool>) {
    if s.trim_start().starts_with('{')
        && let Ok(Value::Object(o)) = crate::read::parse_json_str::<Value>(s)
        && let Some(inner) = o.get("output").and_then(Value::as_str)
    {
        let code = o.get("metadata").and_then(|m| m.get("exit_code")).and_then(Value::as_i64);
        let is_error = code.map(|c| c != 0).or_else(|| text_status(inner));
        let blocks = if inner.is_empty() { Vec::new() } else { vec![Block::text(inner)] };
        return (blocks, is_error);
    }
    let blocks = if s.is_empty() { Vec::new() } else { vec![Block::text(s)] };
    (blocks, text_status(s))
}

/// Failure status a Codex tool-output text states in its header: the exit code
/// (non-zero = error), or one of Codex's own failure messages. Only the header
/// lines are read, never the command's output, which can contain anything.
pub(super) fn text_status(s: &str) -> Option<bool> {
    let parse_code = |t: &str| -> Option<i64> {
        let t = t.trim_start();
        let end =
            t.char_indices().find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-'))).map_or(t.len(), |x| x.0);
        t[..end].parse().ok()
    };
    for line in s.lines().take(8) {
        if line == "Output:" {
            break;
        }
        if let Some(rest) = line.strip_prefix("Exit code:").or_else(|| line.strip_prefix("Process exited with code"))
            && let Some(code) = parse_code(rest)
        {
            return Some(code != 0);
        }
    }
    let first = s.lines().next().unwrap_or("");
    // 0.40 sandbox failures: "failed in sandbox … with execution error: …, exit
    // code: 1, stdout: …"; tool errors Codex returns to the model.
    if first.starts_with("failed in sandbox") || first.starts_with("execution error:") {
        if let Some(pos) = first.find("exit code:")
            && let Some(code) = parse_code(&first[pos + "exit code:".len()..])
        {
            return Some(code != 0);
        }
        return Some(true);
    }
    if first.starts_with("patch rejected by user") || first.starts_with("aborted by user") {
        return Some(true);
    }
    None
}
