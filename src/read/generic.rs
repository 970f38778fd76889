//! Reader for generic message logs: OpenAI Chat Completions and Anthropic Messages
//! (log-formats.md §5), plus the content/usage helpers the Cline reader shares.
//!
//! Accepted shapes, whole-file JSON or JSONL:
//! - one message per record (`{role, content, …}`, an OpenAI completion
//!   `{choices:[{message}], usage}` or an Anthropic response `{type:"message",
//!   role:"assistant", usage}`): the records are the conversation, in order;
//! - one request per record (`{messages:[…], system?, model?, usage?, response?}` or
//!   `{request:{messages…}, response:{…}}`): see [`read_requests`] for how a
//!   sequence of requests becomes one session;
//! - a whole-file array of either, or one object with `messages`.
//!
//! Both vocabularies are parsed by one block parser (an OpenAI `image_url` and an
//! Anthropic `image` can even share a log), and tool results always end up in
//! user-role messages, as the model requires.

use super::format::{LogFormat, Signal};
use super::time;
use crate::model::{Block, Call, Format, Message, Origin, Role, Session, Usage, UsageProvenance};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Bounded length of a recorded API-error text.
pub(super) const MAX_ERROR_LEN: usize = 2000;

/// A non-negative integer field, tolerant of floats and numeric strings (some
/// proxies log usage as strings); anything else is 0. Clamped to
/// [`super::MAX_TOKENS`]: every caller reads a token count (or a small number).
pub(super) fn u64_of(v: Option<&Value>) -> u64 {
    super::clamp_tokens(match v {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| f.is_finite() && *f >= 0.0 && *f < 1e18).map(|f| f as u64))
            .unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    })
}

pub(super) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Normalize a provider usage object. The shape tells the semantics:
/// - `prompt_tokens`/`completion_tokens` (Chat Completions): prompt includes cached
///   tokens, reasoning is part of completion → `OpenAi`;
/// - `input_tokens` with `input_tokens_details` (Responses API): same semantics;
/// - `input_tokens` otherwise (Anthropic): input excludes cache read and cache
///   creation → `Anthropic`.
pub(super) fn parse_usage(u: &Value) -> Option<Usage> {
    let o = u.as_object()?;
    if o.contains_key("prompt_tokens") || o.contains_key("completion_tokens") {
        let prompt = u64_of(o.get("prompt_tokens"));
        let mut cached = u64_of(u.pointer("/prompt_tokens_details/cached_tokens"));
        if cached == 0 {
            // DeepSeek reports its cache hits at the top level.
            cached = u64_of(o.get("prompt_cache_hit_tokens"));
        }
        let cached = cached.min(prompt);
        return Some(Usage {
            uncached_input: prompt - cached,
            cache_read: cached,
            cache_write: 0,
            output: u64_of(o.get("completion_tokens")),
            reasoning: u64_of(u.pointer("/completion_tokens_details/reasoning_tokens")),
            provenance: UsageProvenance::OpenAi,
        });
    }
    if o.contains_key("input_tokens") || o.contains_key("output_tokens") {
        let input = u64_of(o.get("input_tokens"));
        if o.contains_key("input_tokens_details") || o.contains_key("output_tokens_details") {
            let cached = u64_of(u.pointer("/input_tokens_details/cached_tokens")).min(input);
            return Some(Usage {
                uncached_input: input - cached,
                cache_read: cached,
                cache_write: 0,
                output: u64_of(o.get("output_tokens")),
                reasoning: u64_of(u.pointer("/output_tokens_details/reasoning_tokens")),
                provenance: UsageProvenance::OpenAi,
            });
        }
        return Some(Usage {
            uncached_input: input,
            cache_read: u64_of(o.get("cache_read_input_tokens")),
            cache_write: u64_of(o.get("cache_creation_input_tokens")),
            output: u64_of(o.get("output_tokens")),
            reasoning: 0,
            provenance: UsageProvenance::Anthropic,
        });
    }
    None
}

/// An image given by URL: a `data:` URL keeps its media type and counts its
/// base64 payload; a remote URL counts the URL itself.
fn image_from_url(url: &str) -> Block {
    if let Some(rest) = url.strip_prefix("data:") {
        let (head, payload) = rest.split_once(',').unwrap_or((rest, ""));
        let media_type = head.split(';').next().filter(|m| !m.is_empty()).unwrap_or("application/octet-stream");
        return Block::Image { media_type: media_type.to_string(), bytes: payload.len() };
    }
    Block::Image { media_type: "url".to_string(), bytes: url.len() }
}

/// Message content in either vocabulary: a string, one part, or an array of parts.
pub(super) fn parse_content(content: &Value) -> Vec<Block> {
    match content {
        Value::Null => Vec::new(),
        Value::String(s) if s.is_empty() => Vec::new(),
        Value::String(s) => vec![Block::text(s.as_str())],
        Value::Array(parts) => parts.iter().map(parse_part).collect(),
        Value::Object(_) => vec![parse_part(content)],
        other => vec![Block::Other { raw: other.clone() }],
    }
}

/// One content part: OpenAI (`text`, `image_url`, `input_text`, `refusal`, …) or
/// Anthropic (`text`, `image`, `tool_use`, `tool_result`, `thinking`,
/// `redacted_thinking`, …). Parts we do not model are kept raw.
pub(super) fn parse_part(p: &Value) -> Block {
    if let Value::String(s) = p {
        return Block::text(s.as_str());
    }
    let ty = str_of(p, "type").unwrap_or("");
    match ty {
        "text" | "input_text" | "output_text" => Block::text(str_of(p, "text").unwrap_or("")),
        "refusal" => Block::text(str_of(p, "refusal").unwrap_or("")),
        "image_url" => {
            let url = p.get("image_url").map(|u| str_of(u, "url").or(u.as_str()).unwrap_or("")).unwrap_or("");
            image_from_url(url)
        }
        "input_image" => image_from_url(str_of(p, "image_url").unwrap_or("")),
        "image" => match p.get("source") {
            Some(src) => match str_of(src, "type") {
                Some("url") => image_from_url(str_of(src, "url").unwrap_or("")),
                _ => Block::Image {
                    media_type: str_of(src, "media_type").unwrap_or("image").to_string(),
                    bytes: str_of(src, "data").map_or(0, str::len),
                },
            },
            // pi-style `{type:image, data, mimeType}`.
            None => Block::Image {
                media_type: str_of(p, "mimeType").or(str_of(p, "media_type")).unwrap_or("image").to_string(),
                bytes: str_of(p, "data").map_or(0, str::len),
            },
        },
        "tool_use" | "server_tool_use" => Block::ToolUse {
            id: str_of(p, "id").unwrap_or("").to_string(),
            name: str_of(p, "name").unwrap_or("").to_string(),
            input: p.get("input").cloned().unwrap_or_else(|| Value::Object(Default::default())),
        },
        "tool_result" => Block::ToolResult {
            tool_use_id: str_of(p, "tool_use_id").unwrap_or("").to_string(),
            content: p.get("content").map(parse_content).unwrap_or_default(),
            is_error: p.get("is_error").and_then(Value::as_bool),
        },
        "thinking" => Block::Thinking {
            text: str_of(p, "thinking").unwrap_or("").to_string(),
            opaque_len: str_of(p, "signature").map_or(0, str::len),
        },
        "redacted_thinking" => {
            Block::Thinking { text: String::new(), opaque_len: str_of(p, "data").map_or(0, str::len) }
        }
        _ => Block::Other { raw: p.clone() },
    }
}

/// Split the blocks of one user-role record into runs of one origin each, in
/// order: tool results become their own `ToolResult` message, the rest takes the
/// origin `text_origin` gives it. The model has one origin per message, and a
/// record mixing results with typed text (Anthropic allows it, Cline always does
/// it) would otherwise hide the person's words or the harness's injection.
pub(super) fn split_runs(blocks: Vec<Block>, text_origin: impl Fn(&Block) -> Origin) -> Vec<(Origin, Vec<Block>)> {
    let mut runs: Vec<(Origin, Vec<Block>)> = Vec::new();
    for b in blocks {
        let origin = if matches!(b, Block::ToolResult { .. }) { Origin::ToolResult } else { text_origin(&b) };
        match runs.last_mut() {
            Some((o, bs)) if *o == origin => bs.push(b),
            _ => runs.push((origin, vec![b])),
        }
    }
    runs
}

/// Timestamp of a record under the usual key names.
fn record_time(v: &Value) -> Option<i64> {
    ["timestamp", "created_at", "created", "ts", "time"].iter().find_map(|k| v.get(*k).and_then(time::parse_value))
}

/// Incremental session builder shared by the message and request modes.
struct Builder {
    s: Session,
    /// The last message holds `role: tool` results that the next tool message may
    /// join (OpenAI sends one message per result; the model wants them together).
    tool_merge_open: bool,
    /// Legacy `function_call`s awaiting their `role: function` result: ids by
    /// function name, latest last (a map, not a list searched per result: a log of
    /// unanswered calls would make that quadratic).
    pending_functions: HashMap<String, Vec<String>>,
    function_counter: usize,
}

/// What one recorded message contributed: the index of the message it produced
/// last (the assistant message, for an assistant record).
impl Builder {
    fn new(path: &Path, data_len: usize) -> Builder {
        let mut s = Session::new(super::stem_id(path), Format::Generic, path);
        s.stats.bytes = data_len as u64;
        Builder { s, tool_merge_open: false, pending_functions: HashMap::new(), function_counter: 0 }
    }

    fn push(&mut self, m: Message) -> usize {
        self.tool_merge_open = false;
        self.s.messages.push(m);
        self.s.messages.len() - 1
    }

    /// Convert one recorded message. Returns the index of the last message it
    /// produced, or `None` when it produced none.
    fn push_raw(&mut self, raw: &Value, line: u64) -> Option<usize> {
        let Some(role) = str_of(raw, "role") else {
            self.s.diagnostics.unknown("message without role", line, &super::raw_json(raw));
            return None;
        };
        let ts = record_time(raw);
        let mk = |role, origin, blocks| Message::at(role, origin, blocks, line, ts);
        let content = raw.get("content").unwrap_or(&Value::Null);
        match role {
            "system" | "developer" => Some(self.push(mk(Role::System, Origin::Injected, parse_content(content)))),
            "user" | "human" => {
                let mut last = None;
                for (origin, blocks) in split_runs(parse_content(content), |_| Origin::Human) {
                    last = Some(self.push(mk(Role::User, origin, blocks)));
                }
                if last.is_none() {
                    // An empty user turn still separates assistant turns.
                    last = Some(self.push(mk(Role::User, Origin::Human, Vec::new())));
                }
                last
            }
            "assistant" | "model" => {
                let mut blocks = Vec::new();
                for key in ["reasoning_content", "reasoning"] {
                    if let Some(t) = str_of(raw, key).filter(|t| !t.is_empty()) {
                        blocks.push(Block::Thinking { text: t.to_string(), opaque_len: 0 });
                        break;
                    }
                }
                blocks.extend(parse_content(content));
                if let Some(calls) = raw.get("tool_calls").and_then(Value::as_array) {
                    for c in calls {
                        let f = c.get("function").unwrap_or(c);
                        blocks.push(Block::ToolUse {
                            id: str_of(c, "id").unwrap_or("").to_string(),
                            name: str_of(f, "name").unwrap_or("").to_string(),
                            input: tool_arguments(f.get("arguments")),
                        });
                    }
                }
                if let Some(f) = raw.get("function_call").filter(|f| f.is_object()) {
                    // Legacy function calling has no ids: make one so the result can
                    // be linked like any other tool result.
                    self.function_counter += 1;
                    let id = format!("function_call_{}", self.function_counter);
                    let name = str_of(f, "name").unwrap_or("").to_string();
                    self.pending_functions.entry(name.clone()).or_default().push(id.clone());
                    blocks.push(Block::ToolUse { id, name, input: tool_arguments(f.get("arguments")) });
                }
                Some(self.push(mk(Role::Assistant, Origin::Model, blocks)))
            }
            "tool" | "function" => {
                let tool_use_id = if role == "tool" {
                    str_of(raw, "tool_call_id").unwrap_or("").to_string()
                } else {
                    let name = str_of(raw, "name").unwrap_or("");
                    self.pending_functions.get_mut(name).and_then(Vec::pop).unwrap_or_default()
                };
                let block = Block::ToolResult { tool_use_id, content: parse_content(content), is_error: None };
                if self.tool_merge_open
                    && let Some(last) = self.s.messages.last_mut()
                {
                    last.blocks.push(block);
                    return Some(self.s.messages.len() - 1);
                }
                let i = self.push(mk(Role::User, Origin::ToolResult, vec![block]));
                self.tool_merge_open = true;
                Some(i)
            }
            other => {
                self.s.diagnostics.unknown(&format!("role:{other}"), line, &super::raw_json(raw));
                None
            }
        }
    }

    fn finish(mut self) -> Session {
        for c in &self.s.calls {
            if let Some(m) = &c.model {
                self.s.meta.add_model(m);
            }
        }
        self.s
    }
}

/// OpenAI `arguments` is a JSON *string*: decode it once; keep it as a string when
/// it is not valid JSON (truncated streams do that), never fail.
fn tool_arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => super::parse_json_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        Some(other) => other.clone(),
        None => Value::Object(Default::default()),
    }
}

/// A record that is a provider *response*: its assistant message, usage, model and id.
struct Response<'a> {
    message: Option<&'a Value>,
    usage: Option<&'a Value>,
    model: Option<&'a str>,
    id: Option<&'a str>,
}

fn as_response(v: &Value) -> Response<'_> {
    let choice = v.get("choices").and_then(|c| c.get(0)).and_then(|c| c.get("message"));
    let message = choice.or_else(|| {
        // An Anthropic response object is itself an assistant message.
        (str_of(v, "role") == Some("assistant") && v.get("content").is_some()).then_some(v)
    });
    Response {
        message,
        usage: v.get("usage").filter(|u| u.is_object()),
        model: str_of(v, "model"),
        id: str_of(v, "id"),
    }
}

/// One recorded request (a record with a `messages` array).
struct Request<'a> {
    line: u64,
    messages: &'a [Value],
    system: Option<&'a Value>,
    model: Option<&'a str>,
    response: Response<'a>,
    timestamp: Option<i64>,
}

fn as_request(v: &Value, line: u64) -> Option<Request<'_>> {
    let req = match v.get("request") {
        Some(r) if r.get("messages").is_some_and(Value::is_array) => r,
        _ => v,
    };
    let messages = req.get("messages")?.as_array()?;
    let mut response = match v.get("response") {
        Some(r) if r.is_object() => as_response(r),
        _ => Response { message: None, usage: None, model: None, id: None },
    };
    if response.message.is_none() {
        response.message = v.get("choices").and_then(|c| c.get(0)).and_then(|c| c.get("message"));
    }
    if response.usage.is_none() {
        response.usage = v.get("usage").or(req.get("usage")).filter(|u| u.is_object());
    }
    Some(Request {
        line,
        messages: messages.as_slice(),
        system: req.get("system").filter(|s| !s.is_null()),
        model: str_of(req, "model").or(response.model),
        response,
        timestamp: record_time(v),
    })
}

/// Plain OpenAI/Anthropic message and request logs in the format registry
/// ([`super::format`]): the shapes other formats share, so it decides last.
pub struct Generic;

impl LogFormat for Generic {
    fn id(&self) -> Format {
        Format::Generic
    }
    /// An object with `messages` or a `role`; an array of messages or of requests.
    fn detect_document(&self, doc: &Value) -> bool {
        match doc {
            Value::Object(o) => o.get("messages").is_some_and(Value::is_array) || o.get("role").is_some(),
            Value::Array(a) => {
                a.iter().any(|m| m.get("role").is_some())
                    || a.iter().any(|m| m.get("messages").is_some_and(Value::is_array))
            }
            _ => false,
        }
    }
    fn detect_record(&self, rec: &serde_json::Map<String, Value>) -> Signal {
        if rec.get("role").and_then(Value::as_str).is_some()
            || rec.get("messages").is_some_and(Value::is_array)
            || rec.get("choices").is_some_and(Value::is_array)
            || rec.get("request").and_then(|r| r.get("messages")).is_some_and(Value::is_array)
        {
            Signal::Weak
        } else {
            Signal::No
        }
    }
    fn detect_torn(&self, head: &[u8]) -> bool {
        head.first() == Some(&b'[') && super::format::contains(head, "\"role\"")
    }
    fn read(&self, path: &Path, data: &[u8]) -> Vec<Session> {
        read(path, data)
    }
}

/// Read a generic log. Never fails: bad records become diagnostics.
pub fn read(path: &Path, data: &[u8]) -> Vec<Session> {
    let mut b = Builder::new(path, data.len());
    let records = match records(path, data, &mut b.s) {
        Some(records) => records,
        // JSONL. Only a line with a `"messages"` or `"request"` key can be a
        // request; without one, the log is read one record at a time, so it never
        // holds all its parsed records at once (a million tiny messages took
        // ~500 MB as parsed JSON, twice the messages built from them).
        None if !contains(data, b"\"messages\"") && !contains(data, b"\"request\"") => {
            for (line, raw) in super::lines(data) {
                if let Some(v) = jsonl_record(path, &mut b.s, line, raw) {
                    read_message(&mut b, line, &v);
                }
            }
            return vec![b.finish()];
        }
        None => super::lines(data)
            .filter_map(|(line, raw)| Some((line, jsonl_record(path, &mut b.s, line, raw)?)))
            .collect(),
    };
    let is_request = |v: &Value| v.get("messages").is_some_and(Value::is_array) || v.get("request").is_some();
    if records.iter().any(|(_, v)| is_request(v)) {
        read_requests(&mut b, &records);
    } else {
        read_messages(&mut b, &records);
    }
    vec![b.finish()]
}

fn contains(data: &[u8], needle: &[u8]) -> bool {
    data.windows(needle.len()).any(|w| w == needle)
}

/// The records of a whole-file JSON document (the elements of an array, or the
/// one object), each with its 1-based position; `None` for JSONL (see
/// [`jsonl_record`]).
fn records(path: &Path, data: &[u8], s: &mut Session) -> Option<Vec<(u64, Value)>> {
    let body = super::strip_bom(data);
    let trimmed = body.iter().position(|b| !b.is_ascii_whitespace()).map_or(&body[..0], |i| &body[i..]);
    if trimmed.first() == Some(&b'[') || trimmed.first() == Some(&b'{') {
        if let Ok(v) = super::parse_document::<Value>(trimmed) {
            return Some(match v {
                Value::Array(items) => {
                    s.stats.records = items.len() as u64;
                    items.into_iter().enumerate().map(|(i, v)| (i as u64 + 1, v)).collect()
                }
                // A whole-file request keeps array positions as source lines.
                Value::Object(_) => {
                    s.stats.records = 1;
                    vec![(1, v)]
                }
                _ => Vec::new(),
            });
        }
        if trimmed.first() == Some(&b'[') {
            // A JSON array that does not parse is a torn write, not JSONL.
            let reason = super::parse_line(trimmed).err().unwrap_or_default();
            s.diagnostics.bad_line(path, 0, format!("whole-file JSON array unreadable: {reason}"));
            return Some(Vec::new());
        }
    }
    None
}

/// One JSONL line as a record (an object); a bad line is reported and skipped.
fn jsonl_record(path: &Path, s: &mut Session, line: u64, raw: &[u8]) -> Option<Value> {
    s.stats.records += 1;
    match super::parse_line(raw) {
        Ok(v) if v.is_object() => Some(v),
        Ok(_) => {
            s.diagnostics.bad_line(path, line, "record is not a JSON object");
            None
        }
        Err(reason) => {
            s.diagnostics.bad_line(path, line, reason);
            None
        }
    }
}

/// One message per record; each assistant message is one call.
fn read_messages(b: &mut Builder, records: &[(u64, Value)]) {
    for (line, v) in records {
        read_message(b, *line, v);
    }
}

fn read_message(b: &mut Builder, line: u64, v: &Value) {
    let resp = as_response(v);
    let message = if v.get("role").is_some() { Some(v) } else { resp.message };
    let Some(message) = message else {
        let kind = str_of(v, "type").map_or_else(|| "record without role".to_string(), |t| format!("type:{t}"));
        b.s.diagnostics.unknown(&kind, line, &super::raw_json(v));
        return;
    };
    let usage = resp.usage.or(message.get("usage")).and_then(parse_usage);
    if usage.is_some() {
        b.s.stats.usage_records += 1;
    }
    let Some(idx) = b.push_raw(message, line) else { return };
    if b.s.messages[idx].role == Role::Assistant {
        let model = str_of(message, "model").or(resp.model).map(str::to_string);
        let ts = b.s.messages[idx].timestamp.or_else(|| record_time(v));
        let id = str_of(message, "id").or(resp.id).map(str::to_string);
        b.s.calls.push(Call { message_index: idx, model, usage, timestamp: ts, response_id: id, fast: false });
    }
}

/// One request per record. A request's `messages` is the whole prompt of that
/// call, so the longest request (the last one of that length) holds the fullest
/// history: its messages, plus its response when recorded, become the session.
/// Every other request is matched to the assistant message it produced, which in
/// the longest history sits right after its prompt (position `messages.len()`);
/// its usage and model go to that call. Each assistant message of the history is a
/// call, with usage when some request recorded it. A request whose prompt is not a
/// prefix of the longest one (its last message differs: the client rewrote or
/// compacted the history) cannot be placed and is reported.
fn read_requests(b: &mut Builder, records: &[(u64, Value)]) {
    let mut reqs = Vec::new();
    for (line, v) in records {
        match as_request(v, *line) {
            Some(r) => {
                if r.response.usage.is_some() {
                    b.s.stats.usage_records += 1;
                }
                reqs.push(r);
            }
            None => {
                b.s.diagnostics.skip("non-request record in a request log");
            }
        }
    }
    let Some(longest) = reqs.iter().enumerate().max_by_key(|(i, r)| (r.messages.len(), *i)).map(|(i, _)| i) else {
        return;
    };
    let base = &reqs[longest];
    // Whole-file object: positions in `messages`; JSONL: the request's line.
    let single = reqs.len() == 1 && records.len() == 1;
    let line_of = |k: usize| if single { k as u64 + 1 } else { base.line };
    if let Some(sys) = base.system {
        let blocks = parse_content(sys);
        b.push(Message::at(Role::System, Origin::Injected, blocks, line_of(0), base.timestamp));
    }
    let mut raw_to_msg: Vec<Option<usize>> = Vec::with_capacity(base.messages.len() + 1);
    for (k, m) in base.messages.iter().enumerate() {
        raw_to_msg.push(b.push_raw(m, line_of(k)));
    }
    if let Some(resp) = base.response.message {
        raw_to_msg.push(b.push_raw(resp, base.line));
    }

    struct Found {
        model: Option<String>,
        usage: Option<Usage>,
        ts: Option<i64>,
        id: Option<String>,
    }
    let mut found: BTreeMap<usize, Found> = BTreeMap::new();
    let mut not_prefix = 0u64;
    let mut unplaced = 0u64;
    for r in &reqs {
        let n = r.messages.len();
        if n > 0 && r.messages.last() != base.messages.get(n - 1) {
            not_prefix += 1;
            continue;
        }
        let target = raw_to_msg.get(n).copied().flatten();
        match target {
            Some(i) if b.s.messages[i].role == Role::Assistant => {
                // A retried request of the same length overwrites: the later
                // attempt is the one whose answer the history kept.
                found.insert(
                    i,
                    Found {
                        model: r.model.map(str::to_string),
                        usage: r.response.usage.and_then(parse_usage),
                        ts: r.timestamp,
                        id: r.response.id.map(str::to_string),
                    },
                );
            }
            // The last request without a recorded response has no message to
            // point at: its usage cannot be attributed to a call.
            None if n == base.messages.len() => b.s.diagnostics.skip("request without recorded response"),
            _ => unplaced += 1,
        }
    }
    if not_prefix > 0 {
        b.s.diagnostics.warn(
            &b.s.source_path.clone(),
            0,
            format!(
                "{not_prefix} request(s) are not a prefix of the longest request (history rewritten or compacted by the client): their usage is not attributed"
            ),
        );
    }
    if unplaced > 0 {
        b.s.diagnostics.warn(
            &b.s.source_path.clone(),
            0,
            format!("{unplaced} request(s) have no assistant message after their prompt in the longest history"),
        );
    }
    let skipped = records.len() - reqs.len();
    if skipped > 0 {
        b.s.diagnostics.warn(
            &b.s.source_path.clone(),
            0,
            format!("{skipped} record(s) without `messages` ignored in a request-per-record log"),
        );
    }
    for i in 0..b.s.messages.len() {
        if b.s.messages[i].role != Role::Assistant {
            continue;
        }
        let f = found.remove(&i);
        let ts = b.s.messages[i].timestamp.or(f.as_ref().and_then(|f| f.ts));
        let (model, usage, id) = f.map_or((None, None, None), |f| (f.model, f.usage, f.id));
        b.s.calls.push(Call { message_index: i, model, usage, timestamp: ts, response_id: id, fast: false });
    }
}

#[cfg(test)]
#[path = "generic_tests.rs"]
mod tests;
