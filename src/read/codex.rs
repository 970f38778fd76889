//! Reader for Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`,
//! docs/log-formats.md §2).
//!
//! Every line is `{timestamp, type, payload}`. The model-visible history is the
//! `response_item`s (OpenAI Responses API items); `event_msg`s are a UI/telemetry
//! stream that duplicates them, except `token_count` (usage), `error`,
//! `context_compacted`, `thread_settings_applied` (the service tier) and the
//! turn-boundary events. `turn_context` carries the
//! model name, `session_meta` the thread id, cwd and CLI version, `compacted` the
//! agent's own compactions.
//!
//! Mapping to the normalized model:
//! - consecutive model-side items (reasoning, assistant message, tool calls) form
//!   one assistant message; consecutive tool outputs form one user message of
//!   `ToolResult` blocks; every user/developer message item is its own message;
//! - one [`Call`] per model response (see [`Reader::token_count`] for how the
//!   usage of `token_count` events is paired with responses);
//! - `compacted.replacement_history` becomes messages listed in
//!   [`RecordedCompaction::inserted`].

use super::format::{LogFormat, Signal};
use super::locations::{Home, Location};
use super::time;
use crate::model::{Block, Call, CompactionKind, Format, Message, Origin, RecordedCompaction, Role, Session, Usage};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// Bounded length of a recorded API error message.
const MAX_ERROR_LEN: usize = 2000;

/// Canonical name of a tool across Codex versions and formats, for metrics that
/// must not split one tool into several (log-formats.md §7 #16). Every shell
/// variant (`shell` 0.40, `shell_command` 0.77, `exec_command` 0.118, the old
/// `local_shell_call`, `codex exec`'s `command_execution`) maps to `shell`; exec's
/// `file_change` is the `apply_patch` tool. Other names pass through.
pub fn canonical_tool(name: &str) -> &str {
    crate::tools::codex_canonical(name)
}

/// The model Codex runs when its configuration names none: a GPT-5 Codex
/// model since Codex 0.2x (`gpt-5-codex`, later `gpt-5.1-codex` to
/// `gpt-5.3-codex`), each priced as the GPT-5 family with a 272K window.
pub const DEFAULT_MODEL: &str = "gpt-5-codex";

/// Codex CLI rollouts in the format registry ([`super::format`]).
pub struct Codex;

impl LogFormat for Codex {
    fn id(&self) -> Format {
        Format::Codex
    }
    fn default_model(&self) -> Option<&'static str> {
        Some(DEFAULT_MODEL)
    }
    fn detect_record(&self, rec: &serde_json::Map<String, Value>) -> Signal {
        let ty = rec.get("type").and_then(Value::as_str).unwrap_or("");
        if rec.contains_key("payload")
            && matches!(ty, "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
        {
            Signal::Sure
        } else {
            Signal::No
        }
    }
    fn read(&self, path: &Path, data: &[u8]) -> Vec<Session> {
        read(path, data)
    }
    /// `sessions` (date folders) and `archived_sessions` under `~/.codex`
    /// or `$CODEX_HOME`.
    fn default_locations(&self, home: &Home) -> Vec<Location> {
        let root = home.var_or("CODEX_HOME", ".codex");
        ["sessions", "archived_sessions"].map(|d| Location::new("Codex CLI", root.join(d))).to_vec()
    }
    /// The prompt history next to the sessions folder.
    fn is_sidecar(&self, name: &str) -> bool {
        name == "history.jsonl"
    }
    /// `rollout-<time>-<thread id>.jsonl`: the thread whose rollout it is.
    fn path_keys(&self, path: &Path, out: &mut Vec<String>) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(stem) = name.strip_prefix("rollout-").and_then(|n| n.strip_suffix(".jsonl"))
            && let Some(id) = stem.get(stem.len().saturating_sub(36)..).filter(|id| super::is_uuid(id))
        {
            out.push(format!("session:{id}"));
        }
    }
}

pub fn read(path: &Path, data: &[u8]) -> Vec<Session> {
    let mut r = Reader::new(path);
    r.s.stats.bytes = data.len() as u64;
    for (line_no, line) in super::lines(data) {
        r.s.stats.records += 1;
        let v = match super::parse_line(line) {
            Ok(v) => v,
            Err(reason) => {
                r.s.diagnostics.bad_line(path, line_no, reason);
                continue;
            }
        };
        if !v.is_object() {
            r.s.diagnostics.bad_line(path, line_no, "record is not a JSON object");
            continue;
        }
        r.record(&v, line_no, line);
    }
    vec![r.finish()]
}

/// Where `token_count` events sit relative to the response items they measure.
/// Codex 0.40 emits the event *before* recording the response's items (the
/// items are written in one batch when the response is done); later builds record
/// items as they stream and emit `token_count` at `response.completed`, *after*
/// them. The file shows which layout it has: whichever of the two comes first.
/// (Checked on the five 0.40 corpus files: the visible output size of each
/// response correlates at 0.98–1.0 with the non-reasoning output tokens of the
/// event before it, and at < 0.45 with the event after it.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UsageOrder {
    Unknown,
    Precedes,
    Follows,
}

/// Whether items are live history or a compaction's replacement history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Live,
    Replacement,
}

struct Reader<'a> {
    path: &'a Path,
    s: Session,
    has_id: bool,
    model: Option<String>,
    /// The thread runs at the fast (priority) service tier: its requests
    /// are billed at a multiple of the standard prices.
    fast_tier: bool,
    /// The assistant message model-side items are appended to, while open.
    open_assistant: Option<usize>,
    /// The user message tool outputs are appended to, while open.
    open_results: Option<usize>,
    /// A `Call` was created since the last response boundary: further model-side
    /// items belong to the same response.
    response_open: bool,
    order: UsageOrder,
    /// Usage seen before its response's items (0.40 layout).
    pending_usage: Option<Usage>,
    /// Identity of the last usage-bearing `token_count` (totals, or last usage
    /// when there are no totals), to drop the repeats Codex emits.
    last_usage_key: Option<(Value, Value)>,
    prev_totals: Option<Totals>,
    unpaired_usage: u64,
    /// The file writes `token_usage_record`s (0.147+): usage comes from them,
    /// and `token_count` events only give the window.
    usage_records: bool,
    /// `token_usage_record`s that measured no response in the log.
    unpaired_records: u64,
    /// The thread's own id (`session_meta.id` of its first line), to tell its
    /// usage records from those of other threads written into its file.
    thread: Option<String>,
    /// The messages a person typed, in order: the turns a rollback counts.
    prompts: Vec<usize>,
    /// The compaction recorded since the last call, to merge `compacted` with its
    /// `context_compacted` event; `bool` = it was created from the event alone.
    open_compaction: Option<(usize, bool)>,
    /// Exit status from `exec_command_end` / `patch_apply_end` events, by call id,
    /// for outputs whose text does not say.
    exit_by_call: HashMap<String, bool>,
    last_version: Option<String>,
    /// Set when the thread was forked or spawned from another ([`fork`]).
    fork: Option<fork::Fork>,
    /// Reading the parent's history copied at the top of a fork's rollout.
    copying: bool,
    /// What the turn's truncation policy lets a tool output keep in the
    /// history the requests are built from ([`truncate`]).
    output_budget: Option<Budget>,
    /// The budget the line being read names for itself.
    line_budget: Option<Budget>,
    /// Outputs a version that cut them read whole for want of a recorded
    /// budget: (first line, count) ([`truncate`]).
    uncut: (u64, u64),
}

impl<'a> Reader<'a> {
    fn new(path: &'a Path) -> Reader<'a> {
        Reader {
            path,
            s: Session::new(super::stem_id(path), Format::Codex, path),
            has_id: false,
            model: None,
            fast_tier: false,
            open_assistant: None,
            open_results: None,
            response_open: false,
            order: UsageOrder::Unknown,
            pending_usage: None,
            last_usage_key: None,
            prev_totals: None,
            unpaired_usage: 0,
            usage_records: false,
            unpaired_records: 0,
            thread: None,
            prompts: Vec::new(),
            open_compaction: None,
            exit_by_call: HashMap::new(),
            last_version: None,
            fork: None,
            copying: false,
            output_budget: None,
            line_budget: None,
            uncut: (0, 0),
        }
    }

    fn record(&mut self, v: &Value, line_no: u64, raw: &[u8]) {
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        let payload = v.get("payload").unwrap_or(&Value::Null);
        let ts = v.get("timestamp").and_then(time::parse_value);
        let ordinal = v.get("ordinal").and_then(Value::as_u64);
        if ty != "session_meta" {
            let turn_start = ty == "turn_context"
                || (ty == "event_msg"
                    && matches!(payload.get("type").and_then(Value::as_str), Some("task_started" | "turn_started")));
            let turn_id = turn_start.then(|| payload.get("turn_id").and_then(Value::as_str)).flatten();
            self.copy_check(ts, turn_id, ordinal);
        }
        match ty {
            "session_meta" => self.session_meta(payload, line_no, ts, ordinal),
            "turn_context" => {
                self.boundary();
                if let Some(m) = payload.get("model").and_then(Value::as_str).filter(|m| !m.is_empty()) {
                    if !self.copying {
                        self.s.meta.add_model(m);
                    }
                    self.model = Some(m.to_string());
                }
                if self.s.meta.cwd.is_none() {
                    self.s.meta.cwd = payload.get("cwd").and_then(Value::as_str).map(str::to_string);
                }
                self.truncation_policy(payload.get("truncation_policy"), line_no);
            }
            // A reply the host delivered and keeps (retained context), written
            // as an assistant message for older clients: no model response.
            "response_item" if v.pointer("/metadata/delivered_assistant_message").is_some_and(Value::is_string) => {
                let blocks = content_blocks(payload.get("content"));
                self.input_message(Role::Assistant, Origin::Injected, blocks, line_no, ts, Ctx::Live);
            }
            "response_item" => {
                let own = v.pointer("/metadata/fallback_token_limit_override").and_then(Value::as_u64);
                self.line_budget = own.and_then(|n| usize::try_from(n).ok()).map(Budget::Tokens);
                self.response_item(payload, line_no, ts, Ctx::Live, Some(raw));
                self.line_budget = None;
            }
            "event_msg" => self.event(payload, line_no, raw),
            "compacted" => self.compacted(payload, line_no, ts),
            "token_usage_record" => self.usage_record(payload),
            "inter_agent_communication" => self.agent_communication(payload, line_no, ts),
            // Not sent to the model: what the host keeps for itself (world
            // state is a comparison snapshot of context already recorded as
            // items; retained answers, realtime transcripts, delivery flags
            // and risk scores are the host's own).
            "world_state"
            | "retained_context"
            | "realtime_item"
            | "inter_agent_communication_metadata"
            | "security_risk_score" => self.s.diagnostics.skip(ty),
            _ => {
                let kind = if ty.is_empty() { "(no type)" } else { ty };
                self.s.diagnostics.unknown(kind, line_no, &raw_text(raw));
            }
        }
    }

    fn session_meta(&mut self, p: &Value, line: u64, ts: Option<i64>, ordinal: Option<u64>) {
        // `id` is the thread's own; `session_id` is the root thread's, shared
        // by its sub-agents, and stands in only when `id` is missing. The
        // first id wins (a fork/resume may repeat the line).
        let id = p.get("id").or_else(|| p.get("session_id")).and_then(Value::as_str).filter(|s| !s.is_empty());
        if let (false, Some(id)) = (self.has_id, id) {
            self.s.id = id.to_string();
            self.has_id = true;
            self.thread = Some(id.to_string());
            // A paginated thread may start from another rollout's lines
            // without copying them.
            if p.pointer("/history_base/end_ordinal_exclusive").and_then(Value::as_u64).is_some_and(|n| n > 0) {
                self.s.diagnostics.warn(
                    self.path,
                    line,
                    "the thread continues the history of another rollout file (history_base), which this file does \
                     not hold: the replay starts without that history, and the agent's usage still counts it",
                );
            }
            self.note_fork(p, id);
        } else if self.fork_meta(id, ts, ordinal) {
            // An ancestor's line, copied: its versions and folder are not this
            // thread's.
            self.boundary();
            return;
        }
        if self.s.meta.cwd.is_none() {
            self.s.meta.cwd = p.get("cwd").and_then(Value::as_str).map(str::to_string);
        }
        if let Some(v) = p.get("cli_version").and_then(Value::as_str) {
            self.s.meta.add_version(v);
            // A session resumed by another CLI version may use the other
            // token_count layout: decide again from what follows.
            if self.last_version.as_deref().is_some_and(|last| last != v) {
                self.order = UsageOrder::Unknown;
                if self.pending_usage.take().is_some() {
                    self.unpaired_usage += 1;
                }
            }
            self.last_version = Some(v.to_string());
        }
        self.boundary();
    }

    /// Ends the current model response and the current message groups.
    fn boundary(&mut self) {
        self.open_assistant = None;
        self.open_results = None;
        self.response_open = false;
    }

    fn push_message(&mut self, role: Role, origin: Origin, blocks: Vec<Block>, line: u64, ts: Option<i64>) -> usize {
        let mut m = Message::new(role, origin, blocks);
        m.source_line = line;
        m.timestamp = ts;
        self.s.messages.push(m);
        let i = self.s.messages.len() - 1;
        if role == Role::User && origin == Origin::Human {
            self.prompts.push(i);
        }
        i
    }

    /// Append model-side blocks to the open assistant message, opening it (and, for
    /// live history, a new `Call` when no response is open) if needed.
    fn assistant_blocks(&mut self, blocks: Vec<Block>, line: u64, ts: Option<i64>, ctx: Ctx) {
        self.open_results = None;
        let idx = match self.open_assistant {
            Some(i) => i,
            None => {
                let i = self.push_message(Role::Assistant, Origin::Model, Vec::new(), line, ts);
                self.open_assistant = Some(i);
                if ctx == Ctx::Live && !self.response_open {
                    self.new_call(i, ts);
                }
                i
            }
        };
        if let Some(m) = self.s.messages.get_mut(idx) {
            m.blocks.extend(blocks);
        }
    }

    fn new_call(&mut self, message_index: usize, ts: Option<i64>) {
        self.response_open = true;
        self.open_compaction = None;
        let usage = match self.order {
            UsageOrder::Unknown => {
                // Items before any usage: this file records usage after responses.
                self.order = UsageOrder::Follows;
                None
            }
            UsageOrder::Precedes => self.pending_usage.take(),
            UsageOrder::Follows => None,
        };
        self.s.calls.push(Call {
            message_index,
            model: self.model.clone(),
            usage,
            timestamp: ts,
            response_id: None,
            fast: self.fast_tier,
        });
    }

    /// Append a tool result to the open tool-results user message.
    fn result_block(&mut self, block: Block, line: u64, ts: Option<i64>) {
        self.open_assistant = None;
        let idx = match self.open_results {
            Some(i) => i,
            None => {
                let i = self.push_message(Role::User, Origin::ToolResult, Vec::new(), line, ts);
                self.open_results = Some(i);
                i
            }
        };
        if let Some(m) = self.s.messages.get_mut(idx) {
            m.blocks.push(block);
        }
    }

    /// `raw` = the source line, None for an item nested in another record.
    fn response_item(&mut self, p: &Value, line: u64, ts: Option<i64>, ctx: Ctx, raw: Option<&[u8]>) {
        let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "message" => self.message_item(p, line, ts, ctx, None),
            "reasoning" => {
                let block = reasoning_block(p);
                self.assistant_blocks(vec![block], line, ts, ctx);
            }
            "function_call" => {
                let input = arguments(p);
                let block = Block::ToolUse { id: call_id(p, line), name: str_field(p, "name", "unknown"), input };
                self.assistant_blocks(vec![block], line, ts, ctx);
            }
            "custom_tool_call" => {
                // Freeform tools (apply_patch): `input` is raw text, not JSON.
                let input = p.get("input").cloned().unwrap_or(Value::Null);
                let block = Block::ToolUse { id: call_id(p, line), name: str_field(p, "name", "unknown"), input };
                self.assistant_blocks(vec![block], line, ts, ctx);
            }
            "local_shell_call" => {
                let input = p.get("action").cloned().unwrap_or(Value::Null);
                let block = Block::ToolUse { id: call_id(p, line), name: "local_shell".to_string(), input };
                self.assistant_blocks(vec![block], line, ts, ctx);
            }
            // Server-side tool: no call id and no output item in the history, so it
            // is kept as an opaque block rather than an unpaired ToolUse.
            "web_search_call" | "image_generation_call" => {
                self.assistant_blocks(vec![Block::Other { raw: p.clone() }], line, ts, ctx);
            }
            // Tool search (deferred MCP and app tools): the call's query, and
            // the schemas of the tools it loaded, which the model reads from
            // then on. A server-run search has no call id to pair them by.
            "tool_search_call" if p.get("call_id").is_some_and(Value::is_string) => {
                let block =
                    Block::ToolUse { id: call_id(p, line), name: "tool_search".to_string(), input: arguments(p) };
                self.assistant_blocks(vec![block], line, ts, ctx);
            }
            "tool_search_output" if p.get("call_id").is_some_and(Value::is_string) => {
                let tools = p.get("tools").map_or_else(String::new, Value::to_string);
                let done = p.get("status").and_then(Value::as_str).and_then(|s| (s == "completed").then_some(false));
                let content = vec![Block::text(tools)];
                let block = Block::ToolResult { tool_use_id: call_id(p, line), content, is_error: done };
                self.result_block(block, line, ts);
            }
            "tool_search_call" | "tool_search_output" => {
                self.assistant_blocks(vec![Block::Other { raw: p.clone() }], line, ts, ctx);
            }
            "function_call_output" | "custom_tool_call_output" => {
                let id = call_id(p, line);
                let budget = self.line_budget.or(self.output_budget).filter(|_| ctx == Ctx::Live);
                let cut = budget.zip(p.get("output")).and_then(|(b, o)| truncate::truncate_output(o, b));
                if cut.is_some() {
                    self.s.diagnostics.sent_otherwise("tool output cut to its budget");
                } else if budget.is_none() && ctx == Ctx::Live {
                    self.unrecorded_budget(p.get("output"), line);
                }
                let (content, is_error) = tool_output(cut.as_ref().or(p.get("output")));
                self.result_block(Block::ToolResult { tool_use_id: id, content, is_error }, line, ts);
            }
            // Remote compaction summary item: opaque, but it is in the context.
            "compaction" | "compaction_summary" | "context_compaction" => {
                self.open_assistant = None;
                self.open_results = None;
                let len = p.get("encrypted_content").and_then(Value::as_str).map_or(0, str::len);
                let block = Block::Thinking { text: String::new(), opaque_len: len };
                let i = self.push_message(Role::User, Origin::CompactSummary, vec![block], line, ts);
                if ctx == Ctx::Live {
                    self.response_open = false;
                    if self.open_compaction.is_none() {
                        self.add_compaction(line, i..i + 1, false);
                    }
                }
            }
            // Another agent's message to this one: input the model reads
            // (codex-rs `is_api_message` keeps it in the history).
            "agent_message" => self.agent_input(content_blocks(p.get("content")), line, ts, ctx),
            // Tool declarations added inside the history: sent with it, and
            // sized by their JSON.
            "additional_tools" => {
                let tools = p.get("tools").map_or_else(String::new, Value::to_string);
                self.input_message(Role::System, Origin::Injected, vec![Block::text(tools)], line, ts, ctx);
            }
            // A reasoning-effort setting for what follows, a request control,
            // and snapshots of old builds: no text for the model.
            "configuration_update" | "compaction_trigger" | "ghost_snapshot" => {
                self.s.diagnostics.skip(&format!("response_item/{ty}"));
            }
            _ => {
                let kind = format!("response_item/{}", if ty.is_empty() { "(no type)" } else { ty });
                let raw = raw.map_or_else(|| super::raw_json(p), raw_text);
                self.s.diagnostics.unknown(&kind, line, &raw);
            }
        }
    }

    /// A `message` item. `summary` = the `compacted.message` text, to recognize the
    /// summary inside a replacement history.
    fn message_item(&mut self, p: &Value, line: u64, ts: Option<i64>, ctx: Ctx, summary: Option<&str>) {
        let role = p.get("role").and_then(Value::as_str).unwrap_or("user");
        let blocks = content_blocks(p.get("content"));
        if role == "assistant" {
            self.assistant_blocks(blocks, line, ts, ctx);
            return;
        }
        let (role, origin) = match role {
            "user" => (Role::User, user_origin(&blocks, summary)),
            "developer" | "system" => (Role::System, Origin::Injected),
            _ => (Role::User, Origin::Injected),
        };
        self.input_message(role, origin, blocks, line, ts, ctx);
    }

    /// `inter_agent_communication` (a record, not an item), sent as an
    /// `agent_message`: its `content`, or, when it is encrypted, a header
    /// naming the task and the sender, then the encrypted payload (codex-rs
    /// `InterAgentCommunication::to_model_input_item`).
    fn agent_communication(&mut self, p: &Value, line: u64, ts: Option<i64>) {
        let blocks = match p.get("encrypted_content").and_then(Value::as_str) {
            Some(e) => {
                let name = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                let kind =
                    if p.get("trigger_turn").and_then(Value::as_bool) == Some(true) { "NEW_TASK" } else { "MESSAGE" };
                let header = format!(
                    "Message Type: {kind}\nTask name: {}\nSender: {}\nPayload:\n",
                    name("recipient"),
                    name("author")
                );
                vec![Block::text(header), Block::Thinking { text: String::new(), opaque_len: e.len() }]
            }
            None => content_blocks(p.get("content")),
        };
        self.agent_input(blocks, line, ts, Ctx::Live);
    }

    /// An input item: it ends the model response and the message groups.
    fn input_message(&mut self, role: Role, origin: Origin, blocks: Vec<Block>, line: u64, ts: Option<i64>, ctx: Ctx) {
        if ctx == Ctx::Live {
            self.boundary();
        } else {
            self.open_assistant = None;
            self.open_results = None;
        }
        self.push_message(role, origin, blocks, line, ts);
    }

    /// A message from another agent (`agent_message` items, the older
    /// `inter_agent_communication` records): injected input, not a person's.
    fn agent_input(&mut self, blocks: Vec<Block>, line: u64, ts: Option<i64>, ctx: Ctx) {
        self.input_message(Role::User, Origin::Injected, blocks, line, ts, ctx);
    }

    fn finish(mut self) -> Session {
        self.end_copy();
        self.warn_uncut();
        if self.pending_usage.take().is_some() {
            self.unpaired_usage += 1;
        }
        if self.unpaired_usage > 0 {
            let n = self.unpaired_usage;
            self.s.diagnostics.warn(
                self.path,
                0,
                format!("{n} token_count record(s) could not be paired with a model response; their usage is not in any call"),
            );
        }
        if self.unpaired_records > 0 {
            let n = self.unpaired_records;
            self.s.diagnostics.warn(
                self.path,
                0,
                format!(
                    "{n} token_usage_record(s) measure no model response in the log (a compaction's own request, \
                     or a request that recorded no item); their usage is not in any call"
                ),
            );
        }
        // Outputs whose text gave no exit status take it from the events.
        if !self.exit_by_call.is_empty() {
            for m in &mut self.s.messages {
                for b in &mut m.blocks {
                    if let Block::ToolResult { tool_use_id, is_error: is_error @ None, .. } = b
                        && let Some(&e) = self.exit_by_call.get(tool_use_id.as_str())
                    {
                        *is_error = Some(e);
                    }
                }
            }
        }
        self.s
    }
}

/// The text kept for an unknown record, cut before decoding (the diagnostics keep
/// a bounded prefix anyway).
pub(crate) fn raw_text(raw: &[u8]) -> String {
    String::from_utf8_lossy(&raw[..raw.len().min(crate::model::MAX_UNKNOWN_RAW_LEN)]).into_owned()
}

fn str_field(p: &Value, key: &str, default: &str) -> String {
    p.get(key).and_then(Value::as_str).unwrap_or(default).to_string()
}

/// A call's `arguments`: a JSON string (`function_call`), which a model can
/// write invalid and is then kept verbatim, or an object (`tool_search_call`).
fn arguments(p: &Value) -> Value {
    match p.get("arguments") {
        Some(Value::String(s)) => super::parse_json_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// The call id linking a tool call and its output (`call_id`, older `id`), or a
/// line-derived one so the block is never without an id.
fn call_id(p: &Value, line: u64) -> String {
    p.get("call_id")
        .or_else(|| p.get("id"))
        .and_then(Value::as_str)
        .map_or_else(|| format!("line-{line}"), str::to_string)
}

/// `reasoning`: summary texts joined (raw `content` texts when there is no
/// summary, as open-weight models write), encrypted payload kept by length only.
fn reasoning_block(p: &Value) -> Block {
    let texts = |key: &str| -> Vec<String> {
        p.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|x| x.get("text").and_then(Value::as_str)).map(str::to_string).collect())
            .unwrap_or_default()
    };
    let mut parts = texts("summary");
    if parts.is_empty() {
        parts = texts("content");
    }
    let opaque_len = p.get("encrypted_content").and_then(Value::as_str).map_or(0, str::len);
    Block::Thinking { text: parts.join("\n\n"), opaque_len }
}

/// Content parts of a message or of an array tool output.
fn content_blocks(content: Option<&Value>) -> Vec<Block> {
    match content {
        Some(Value::String(s)) => vec![Block::text(s.clone())],
        Some(Value::Array(parts)) => parts.iter().map(content_part).collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![Block::Other { raw: other.clone() }],
    }
}

fn content_part(part: &Value) -> Block {
    let ty = part.get("type").and_then(Value::as_str).unwrap_or("");
    match ty {
        "input_text" | "output_text" | "text" | "summary_text" | "reasoning_text" => {
            Block::text(part.get("text").and_then(Value::as_str).unwrap_or(""))
        }
        "refusal" => Block::text(part.get("refusal").and_then(Value::as_str).unwrap_or("")),
        "input_image" => {
            let url = part.get("image_url").and_then(Value::as_str).unwrap_or("");
            image_block(url)
        }
        // Sent as is, readable only by the provider.
        "encrypted_content" => {
            let len = part.get("encrypted_content").and_then(Value::as_str).map_or(0, str::len);
            Block::Thinking { text: String::new(), opaque_len: len }
        }
        _ => Block::Other { raw: part.clone() },
    }
}

/// An image by URL: a `data:` URL keeps its media type and base64 length, any
/// other URL its length.
pub(crate) fn image_block(url: &str) -> Block {
    if let Some(rest) = url.strip_prefix("data:")
        && let Some((meta, payload)) = rest.split_once(',')
    {
        let media_type = meta.split(';').next().unwrap_or("").to_string();
        return Block::Image { media_type, bytes: payload.len() };
    }
    Block::Image { media_type: "url".to_string(), bytes: url.len() }
}

/// Text openings of user-role messages Codex injects (environment, AGENTS.md,
/// user instructions, skills, shell-command echoes, notices), compared
/// case-insensitively after leading whitespace (codex-rs `is_session_prefix`,
/// `is_contextual_user_message`).
const INJECTED_PREFIXES: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<instructions>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<subagent_notification>",
    "<skill>",
    "<context_update>",
    "<tool_context>",
    "<reasoning_context>",
    "<pinned_notes>",
];

/// Openings of the user message Codex builds from a compaction summary
/// (`templates/compact/summary_prefix.md`) and of the older history bridge.
const SUMMARY_PREFIXES: &[&str] =
    &[SUMMARY_OPENING, "you were originally given instructions from a user over one or more turns"];

/// The opening of Codex's summary prefix, compared case-insensitively.
const SUMMARY_OPENING: &str = "another language model started to solve this problem";

fn starts_with_ci(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

fn user_origin(blocks: &[Block], summary: Option<&str>) -> Origin {
    let first_text = blocks.iter().find_map(|b| match b {
        Block::Text { text } if !text.trim().is_empty() => Some(text.trim_start()),
        _ => None,
    });
    let Some(text) = first_text else { return Origin::Human };
    if SUMMARY_PREFIXES.iter().any(|p| starts_with_ci(text, p)) || summary.is_some_and(|s| text.contains(s.trim())) {
        return Origin::CompactSummary;
    }
    if INJECTED_PREFIXES.iter().any(|p| starts_with_ci(text, p)) {
        return Origin::Injected;
    }
    Origin::Human
}

#[path = "codex_usage.rs"]
mod usage;

#[path = "codex_fork.rs"]
mod fork;

#[path = "codex_output.rs"]
mod output;

#[path = "codex_events.rs"]
mod events;

#[path = "codex_truncate.rs"]
mod truncate;

#[path = "codex_compacted.rs"]
mod compacted;
#[cfg(test)]
use output::text_status;
use output::tool_output;
use truncate::Budget;
use usage::Totals;
pub(crate) use usage::openai_usage;

#[cfg(test)]
#[path = "codex_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "codex_paginated_tests.rs"]
mod paginated_tests;
