//! Reader for the `codex exec --json` event stream (stdout of a headless Codex
//! run, docs/log-formats.md §2.9; event types of codex-rs `exec_events.rs`).
//!
//! `thread.started{thread_id}` names the session; each `turn.started` …
//! `turn.completed{usage}` / `turn.failed{error}` is one user turn; items arrive
//! as `item.started` / `item.updated` / `item.completed`. The completed item is
//! the truth; a started/updated item is used only when it never completed (a
//! killed run). The prompt itself is not in the stream.
//!
//! Mapping: reasoning and agent messages are assistant blocks; command
//! executions, file changes and MCP calls become a `ToolUse` in the assistant
//! message and a `ToolResult` in the following user message (keyed by the item
//! id). Each model request is one assistant message and one [`Call`]: a model
//! item after one of the current request's results starts the next request.
//! `turn.completed.usage` is the thread's running total over every request so
//! far ([`usage`]): what it adds to the previous total is shared among the
//! requests since.

use super::format::{LogFormat, Signal};
use super::{codex, errors};
use crate::model::{Block, Call, Format, Message, Origin, RecordedError, Role, Session, Usage};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use usage::Pending;

const MAX_ERROR_LEN: usize = 2000;

/// `codex exec --json` streams in the format registry ([`super::format`]).
pub struct CodexExec;

impl LogFormat for CodexExec {
    fn id(&self) -> Format {
        Format::CodexExec
    }
    /// Its stream names no model: Codex's default.
    fn default_model(&self) -> Option<&'static str> {
        Some(codex::DEFAULT_MODEL)
    }
    fn detect_record(&self, rec: &serde_json::Map<String, Value>) -> Signal {
        match rec.get("type").and_then(Value::as_str) {
            Some(
                "thread.started" | "turn.started" | "turn.completed" | "item.started" | "item.completed"
                | "item.updated" | "turn.failed",
            ) => Signal::Sure,
            _ => Signal::No,
        }
    }
    fn read(&self, path: &Path, data: &[u8]) -> Vec<Session> {
        read(path, data)
    }
}

pub fn read(path: &Path, data: &[u8]) -> Vec<Session> {
    read_parts(&[(path, data)])
}

/// Read the streams of one thread continued across files (`codex exec
/// resume`, each run saved apart: [`super::threads`]), in order, as one
/// stream: each run's running totals then follow the last run's. The
/// sessions are named after the first file; a message's or error's line
/// counts through the parts in order (as if they were one file), and a
/// diagnostic names its own file and line.
pub fn read_parts(parts: &[(&Path, &[u8])]) -> Vec<Session> {
    let Some(&(first, _)) = parts.first() else { return Vec::new() };
    let mut sessions = Vec::new();
    let mut r = Reader::new(first);
    r.s.stats.bytes = parts.iter().map(|(_, d)| d.len() as u64).sum();
    for &(path, data) in parts {
        // A run killed mid-turn ends there: the next run starts its own.
        r.end_turn(None, false);
        r.path = path;
        for (line_no, line) in super::lines(data) {
            let v = match super::parse_line(line) {
                Ok(v) => v,
                Err(reason) => {
                    r.s.stats.records += 1;
                    r.s.diagnostics.bad_line(path, line_no, reason);
                    continue;
                }
            };
            let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
            // Concatenated streams: a second thread starts a second session.
            if ty == "thread.started" {
                let id = v.get("thread_id").and_then(Value::as_str).unwrap_or("");
                if r.has_id && r.s.id != id {
                    let mut next = Reader::new(path);
                    next.base = r.base;
                    sessions.push(std::mem::replace(&mut r, next).finish());
                }
            }
            r.s.stats.records += 1;
            if !v.is_object() {
                r.s.diagnostics.bad_line(path, line_no, "record is not a JSON object");
                continue;
            }
            r.record(&v, ty, line_no, line);
        }
        r.base += line_count(data);
    }
    sessions.push(r.finish());
    // Bytes are attributed to the first session: streams are split by thread only
    // in the rare concatenated case.
    for s in sessions.iter_mut().skip(1) {
        s.stats.bytes = 0;
    }
    sessions
}

/// Lines in `data`, the last one counted without its newline.
fn line_count(data: &[u8]) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', data).count() as u64;
    newlines + u64::from(data.last().is_some_and(|&b| b != b'\n'))
}

/// One item of the current turn, in order of first appearance.
struct Item {
    id: String,
    item: Value,
    completed: bool,
    line: u64,
    /// Line of its completion (`u64::MAX` until then): where a tool's result
    /// arrived.
    done: u64,
}

struct Reader<'a> {
    path: &'a Path,
    s: Session,
    has_id: bool,
    turn: Vec<Item>,
    /// Position in `turn` by item id.
    turn_index: HashMap<String, usize>,
    turn_line: u64,
    /// Characters of the messages read so far (a request's prompt grows by them).
    chars: u64,
    /// Requests whose usage the stream has not reported yet.
    pending: Vec<Pending>,
    /// The thread's running usage total at the last `turn.completed`.
    total: Option<Usage>,
    /// Lines of the parts before the current one ([`read_parts`]).
    base: u64,
    /// `thread.started` records read: the runs of the thread so far.
    runs: u32,
}

impl<'a> Reader<'a> {
    fn new(path: &'a Path) -> Reader<'a> {
        Reader {
            path,
            s: Session::new(super::stem_id(path), Format::CodexExec, path),
            has_id: false,
            turn: Vec::new(),
            turn_index: HashMap::new(),
            turn_line: 0,
            chars: 0,
            pending: Vec::new(),
            total: None,
            base: 0,
            runs: 0,
        }
    }

    fn record(&mut self, v: &Value, ty: &str, line: u64, raw: &[u8]) {
        match ty {
            "thread.started" => {
                self.runs += 1;
                if let Some(id) = v.get("thread_id").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    self.s.id = id.to_string();
                    self.has_id = true;
                }
            }
            "turn.started" => {
                // A turn that never completed ends where the next one starts.
                self.end_turn(None, false);
                self.turn_line = line;
            }
            "item.started" | "item.updated" | "item.completed" => {
                let Some(item) = v.get("item").filter(|i| i.is_object()) else {
                    self.s.diagnostics.bad_line(self.path, line, format!("{ty} without an item object"));
                    return;
                };
                let completed = ty == "item.completed";
                let id = match item.get("id").and_then(Value::as_str) {
                    // Each run numbers its items from `item_0`: a resumed
                    // run's are told apart from the runs' before it.
                    Some(id) if self.runs > 1 => format!("{id}@run{}", self.runs),
                    Some(id) => id.to_string(),
                    None => format!("line-{}", self.base + line),
                };
                match self.turn_index.get(&id).and_then(|&i| self.turn.get_mut(i)) {
                    Some(it) => {
                        // Later states replace earlier ones; nothing replaces a completion.
                        if !it.completed {
                            it.item = item.clone();
                            it.completed = completed;
                            if completed {
                                it.done = line;
                            }
                        }
                    }
                    None => {
                        self.turn_index.insert(id.clone(), self.turn.len());
                        let done = if completed { line } else { u64::MAX };
                        self.turn.push(Item { id, item: item.clone(), completed, line, done });
                    }
                }
            }
            "turn.completed" => {
                let usage = v.get("usage").filter(|u| u.is_object());
                if usage.is_some() {
                    self.s.stats.usage_records += 1;
                }
                self.end_turn(usage, true);
            }
            "turn.failed" => {
                let msg = v.pointer("/error/message").and_then(Value::as_str).unwrap_or("turn failed");
                self.error(line, msg);
                self.end_turn(None, true);
            }
            "error" => {
                let msg = v.get("message").and_then(Value::as_str).unwrap_or("");
                self.error(line, msg);
            }
            _ => {
                let kind = if ty.is_empty() { "(no type)" } else { ty };
                self.s.diagnostics.unknown(kind, line, &codex::raw_text(raw));
            }
        }
    }

    fn error(&mut self, line: u64, msg: &str) {
        self.s.errors.push(RecordedError {
            source_line: self.base + line,
            kind: errors::classify(msg),
            message: super::truncate_str(msg, MAX_ERROR_LEN).to_string(),
        });
    }

    fn push(&mut self, role: Role, origin: Origin, blocks: Vec<Block>, line: u64) -> usize {
        let mut m = Message::new(role, origin, blocks);
        m.source_line = self.base + line;
        self.s.messages.push(m);
        self.s.messages.len() - 1
    }

    /// Turn the collected items into messages, one assistant message per
    /// model request and one message of its results; with `ended`, record a
    /// call per request, and with `usage` (the thread's running total) share
    /// what it adds among the requests not reported yet.
    fn end_turn(&mut self, usage: Option<&Value>, ended: bool) {
        let items = std::mem::take(&mut self.turn);
        self.turn_index.clear();
        for req in self.requests(&items) {
            let out: u64 = req.model.iter().map(|b| b.text_chars() as u64).sum();
            let idx = self.push(Role::Assistant, Origin::Model, req.model, req.line);
            if ended {
                self.pending.push(Pending { call: self.s.calls.len(), before: self.chars, out });
                // The stream names no model and has no timestamps.
                self.s.calls.push(Call {
                    message_index: idx,
                    model: None,
                    usage: None,
                    timestamp: None,
                    response_id: None,
                    fast: false,
                });
            }
            self.chars += out;
            if let Some(line) = req.results_line {
                self.chars += req.results.iter().map(|b| b.text_chars() as u64).sum::<u64>();
                self.push(Role::User, Origin::ToolResult, req.results, line);
            }
        }
        if let Some(total) = usage.and_then(codex::openai_usage) {
            self.report(total);
        }
    }

    /// The turn's items grouped by model request, in order: an item with a
    /// model part starts the next request when one of the current request's
    /// results arrived before it (the model answers only once it has them);
    /// parallel calls share their request.
    fn requests(&mut self, items: &[Item]) -> Vec<Request> {
        let mut out: Vec<Request> = Vec::new();
        // Earliest result line of the current request.
        let mut first_result = u64::MAX;
        for it in items {
            let (model, result) = self.convert(it);
            if model.is_empty() && result.is_none() {
                continue;
            }
            if out.is_empty() || first_result < it.line {
                first_result = u64::MAX;
                out.push(Request { model: Vec::new(), line: it.line, results: Vec::new(), results_line: None });
            }
            let Some(req) = out.last_mut() else { continue };
            req.model.extend(model);
            if let Some(b) = result {
                req.results.push(b);
                req.results_line.get_or_insert(it.line);
                first_result = first_result.min(it.done);
            }
        }
        out
    }

    /// The thread's running total at a `turn.completed`: what it adds to the
    /// previous one is the usage of the requests since, shared among them.
    fn report(&mut self, total: Usage) {
        let sum = match usage::since(total, self.total) {
            Ok(sum) => sum,
            Err(sum) => {
                let line = self.turn_line;
                self.s.diagnostics.warn(
                    self.path,
                    line,
                    "turn usage below the previous turn's running total; read as this turn's own",
                );
                sum
            }
        };
        self.total = Some(total);
        let pending = std::mem::take(&mut self.pending);
        if pending.is_empty() {
            if sum.prompt_tokens() + sum.output > 0 {
                let line = self.turn_line;
                self.s.diagnostics.warn(
                    self.path,
                    line,
                    "turn usage recorded but no model output since the last; not attached to any call",
                );
            }
            return;
        }
        for (p, u) in pending.iter().zip(usage::split(sum, &pending)) {
            if let Some(c) = self.s.calls.get_mut(p.call) {
                c.usage = Some(u);
            }
        }
    }

    /// An item as model-side blocks and an optional tool result.
    fn convert(&mut self, it: &Item) -> (Vec<Block>, Option<Block>) {
        let item = &it.item;
        let ty = item.get("type").and_then(Value::as_str).unwrap_or("");
        let text = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let status = item.get("status").and_then(Value::as_str).unwrap_or("");
        let tool = |name: String, input: Value, content: Vec<Block>, is_error: Option<bool>| {
            let use_ = Block::ToolUse { id: it.id.clone(), name, input };
            let result = Block::ToolResult { tool_use_id: it.id.clone(), content, is_error };
            (vec![use_], Some(result))
        };
        match ty {
            "reasoning" => (vec![Block::Thinking { text: text("text"), opaque_len: 0 }], None),
            "agent_message" => (vec![Block::text(text("text"))], None),
            "command_execution" => {
                let out = text("aggregated_output");
                let content = if out.is_empty() { Vec::new() } else { vec![Block::text(out)] };
                let is_error = match item.get("exit_code").and_then(Value::as_i64) {
                    Some(code) => Some(code != 0),
                    None => failed_status(status),
                };
                tool("command_execution".to_string(), json!({ "command": text("command") }), content, is_error)
            }
            "file_change" => {
                let changes = item.get("changes").cloned().unwrap_or(Value::Null);
                let summary: Vec<String> = changes
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|c| {
                                let kind = c.get("kind").and_then(Value::as_str).unwrap_or("?");
                                let path = c.get("path").and_then(Value::as_str).unwrap_or("?");
                                format!("{kind} {path}")
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let content = if summary.is_empty() {
                    Vec::new()
                } else {
                    vec![Block::text(format!("{status}: {}", summary.join("\n")))]
                };
                tool("file_change".to_string(), json!({ "changes": changes }), content, failed_status(status))
            }
            "mcp_tool_call" => {
                let name = format!("mcp__{}__{}", text("server"), text("tool"));
                let input = item.get("arguments").cloned().unwrap_or(Value::Null);
                let mut content = Vec::new();
                let mut is_error = failed_status(status);
                if let Some(parts) = item.pointer("/result/content").and_then(Value::as_array) {
                    content.extend(parts.iter().map(|p| match p.get("type").and_then(Value::as_str) {
                        Some("text") => Block::text(p.get("text").and_then(Value::as_str).unwrap_or("")),
                        Some("image") => Block::Image {
                            media_type: p.get("mimeType").and_then(Value::as_str).unwrap_or("").to_string(),
                            bytes: p.get("data").and_then(Value::as_str).map_or(0, str::len),
                        },
                        _ => Block::Other { raw: p.clone() },
                    }));
                }
                if let Some(msg) = item.pointer("/error/message").and_then(Value::as_str) {
                    content.push(Block::text(msg));
                    is_error = Some(true);
                }
                tool(name, input, content, is_error)
            }
            "collab_tool_call" => {
                let name = format!("collab_{}", text("tool"));
                let input =
                    json!({ "prompt": item.get("prompt"), "receiver_thread_ids": item.get("receiver_thread_ids") });
                let states = item.get("agents_states").cloned().unwrap_or(Value::Null);
                let content = if states.is_null() { Vec::new() } else { vec![Block::Other { raw: states }] };
                tool(name, input, content, failed_status(status))
            }
            // Server-side search and the plan widget: model-side, without a result
            // item; kept whole.
            "web_search" | "todo_list" | "plan" => (vec![Block::Other { raw: item.clone() }], None),
            "error" => {
                let msg = text("message");
                self.error(it.line, &msg);
                (Vec::new(), None)
            }
            _ => {
                let kind = format!("item/{}", if ty.is_empty() { "(no type)" } else { ty });
                self.s.diagnostics.unknown(&kind, it.line, &super::raw_json(item));
                (Vec::new(), None)
            }
        }
    }

    fn finish(mut self) -> Session {
        self.end_turn(None, false);
        self.s
    }
}

/// One model request of a turn: its response and the results of its calls.
struct Request {
    model: Vec<Block>,
    line: u64,
    results: Vec<Block>,
    results_line: Option<u64>,
}

/// Error status of an item without an exit code: failed/declined = error,
/// completed = success, in progress (never completed) = unknown.
fn failed_status(status: &str) -> Option<bool> {
    match status {
        "failed" | "declined" => Some(true),
        "completed" => Some(false),
        _ => None,
    }
}

#[path = "codex_exec_usage.rs"]
mod usage;

#[cfg(test)]
#[path = "codex_exec_tests.rs"]
mod tests;
