//! Tool calls: which tool arguments name modified files or commands, and
//! how a tool call and a patch turn into atoms.

use super::*;

use crate::tools::{self, PATH_KEYS, PATHS_KEYS, ToolKind};

/// Scan one tool call: path arguments, shell commands, patch headers, then every
/// string argument as code.
pub(crate) fn scan_tool_use(name: &str, input: &Value, cwd: Option<&str>, out: &mut Vec<Found>) {
    let parsed;
    let input = match input {
        Value::String(s) if s.trim_start().starts_with('{') => {
            parsed = serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
            if parsed.is_object() { &parsed } else { input }
        }
        _ => input,
    };
    let kind = tools::tool_kind(name);
    let modifies = tools::modifies(name, input);

    if let Value::Object(map) = input {
        for key in PATH_KEYS {
            if let Some(Value::String(s)) = map.get(*key)
                && let Some(v) = normalize_path(s, cwd)
            {
                out.push(Found { kind: AtomKind::Path, value: v, strong: true, modified: modifies });
            }
        }
        for key in PATHS_KEYS {
            if let Some(Value::Array(items)) = map.get(*key) {
                for item in items.iter().take(256) {
                    let s = match item {
                        Value::String(s) => Some(s.as_str()),
                        Value::Object(o) => o.get("path").or_else(|| o.get("file_path")).and_then(Value::as_str),
                        _ => None,
                    };
                    if let Some(v) = s.and_then(|s| normalize_path(s, cwd)) {
                        out.push(Found { kind: AtomKind::Path, value: v, strong: true, modified: modifies });
                    }
                }
            }
        }
    }

    if kind == ToolKind::Command {
        let cmd = match input {
            Value::String(s) => Some(s.clone()),
            Value::Array(_) => command_text(input),
            _ => tools::COMMAND_KEYS.iter().find_map(|k| input.get(*k).and_then(command_text)),
        };
        if let Some(cmd) = cmd {
            for c in normalize_commands(&cmd, cwd) {
                out.push(Found::new(AtomKind::Command, c));
            }
        }
    }

    let mut budget = SCAN_HEAD + SCAN_TAIL;
    crate::text::visit_strings(input, &mut |s| {
        if s.contains("*** ") {
            patch_files(s, cwd, out);
        }
        if budget > 0 {
            let take = &s[..floor_boundary(s, budget)];
            budget -= take.len();
            scan_text(take, Ctx::Code, cwd, out);
        }
    });
}

/// A shell command given as a string or an argv array (Codex `["bash","-lc",…]`).
fn command_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let argv: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            if argv.is_empty() {
                return None;
            }
            let prog = basename(argv[0]);
            if matches!(prog, "bash" | "sh" | "zsh" | "dash")
                && argv.len() >= 3
                && argv[1].starts_with('-')
                && argv[1].ends_with('c')
            {
                return Some(argv[2].to_string());
            }
            // Free-text arguments keep their quotes so they stay free text.
            let quoted: Vec<String> =
                argv.iter()
                    .map(|a| {
                        if a.contains(char::is_whitespace) {
                            format!("'{}'", a.replace('\'', ""))
                        } else {
                            a.to_string()
                        }
                    })
                    .collect();
            Some(quoted.join(" "))
        }
        _ => None,
    }
}

/// Files named by an apply_patch envelope (`*** Update File:`, `*** Add File:`,
/// `*** Delete File:`, `*** Move to:`): all modified.
pub(crate) fn patch_files(text: &str, cwd: Option<&str>, out: &mut Vec<Found>) {
    for piece in pieces(text) {
        for line in piece.lines() {
            let Some(rest) = line.strip_prefix("*** ") else { continue };
            let path = ["Update File:", "Add File:", "Delete File:", "Move to:"]
                .iter()
                .find_map(|h| rest.strip_prefix(h))
                .map(str::trim);
            if let Some(v) = path.and_then(|p| normalize_path(p, cwd)) {
                out.push(Found { kind: AtomKind::Path, value: v, strong: true, modified: true });
            }
        }
    }
}
