//! Reader for Cline / Roo Code task folders (log-formats.md §4):
//! `api_conversation_history.json` (Anthropic `MessageParam[]` with Cline extras),
//! `ui_messages.json` (UI events, the source of per-request usage), the
//! optional `task_metadata.json` (models used) and Roo Code's
//! `history_item.json` (workspace, title), read by `cline_task`.
//!
//! - Content blocks are parsed as Anthropic blocks (shared with the generic reader).
//! - Tool results: Cline's native-tool-call mode answers an assistant's `tool_use`
//!   blocks with plain *text* blocks in the next user message, one header per call
//!   (`[read_file for 'x.cs'] Result:`, the result text following in the same block
//!   or in the next blocks). The header carries no id, but Cline writes the results
//!   in the order of the calls, so the k-th header answers the k-th `tool_use` of
//!   the previous assistant message still without a native `tool_result`. Turning
//!   them into `ToolResult` blocks with that id gives every later stage (pruning,
//!   pair invariants) the same shape as other formats. A header with no `tool_use`
//!   left to answer (XML-tool era Cline, where calls were tags in the text) stays
//!   text, in a `ToolResult`-origin message, and is counted in diagnostics.
//! - Other user text: `<environment_details>`, resumption notices, `[ERROR]` nags
//!   and similar harness text are `Injected`; the task, feedback and answers the
//!   person typed are `Human`. A user record is split into one message per run of
//!   the same origin, in order.
//! - Usage (see `attribute_usage`): newer Cline writes `metrics.tokens
//!   {prompt, completion, cached}` on each assistant message, where `prompt` is the
//!   *uncached* input and `cached` is cache writes + cache reads, summed. Every
//!   Cline writes the k-th completed `api_req_started` of `ui_messages.json` (its
//!   `text` is JSON `{tokensIn, tokensOut, cacheWrites, cacheReads, cost}`) for the
//!   request that produced the k-th assistant message, with the same counts split.
//!   A message with metrics takes the split of the request whose counts agree with
//!   them (looked for from the next unused request on), else its own counts with
//!   the read/write split inferred; a message without metrics (older Cline) takes
//!   the next request in order. `tokensIn` excludes cache reads and writes, so it
//!   maps to `uncached_input`. Requests that failed without tokens (followed by
//!   `api_req_failed`) are not paired. Requests and messages left unpaired, counts
//!   that disagree and inferred splits are reported.
//! - Roo Code's condense summaries and truncation markers (its history tags) are
//!   read by `roo_condense`: no model call, and each summary a compaction.
//! - `stats.records` = elements of the history array; `stats.usage_records` = the
//!   larger of (history messages with `metrics.tokens`, `api_req_started` records
//!   carrying tokens): both files describe the same requests.

use super::format::{LogFormat, contains};
use super::generic::{self, MAX_ERROR_LEN, str_of, u64_of};
use super::locations::{Home, Location};
use super::{errors, time};
use crate::model::{
    Block, Call, Diagnostic, Format, Message, Origin, RecordedError, Role, Session, Usage, UsageProvenance,
};
use crate::num::thousands;
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// Cline / Roo histories in the format registry ([`super::format`]). A task
/// folder is found and read by discovery ([`read_task_dir`]); this reads a
/// history file given alone.
pub struct Cline;

impl LogFormat for Cline {
    fn id(&self) -> Format {
        Format::Cline
    }
    /// Cline's api_conversation_history.json is a bare MessageParam array, as is
    /// any saved Anthropic/OpenAI conversation: only Cline's own markers (extras
    /// on messages, its harness text) make it Cline's, read with positional
    /// text-result pairing.
    fn detect_document(&self, doc: &Value) -> bool {
        let Some(a) = doc.as_array() else { return false };
        a.iter().any(|m| m.get("role").is_some()) && a.iter().take(super::DETECT_RECORDS).any(is_cline_message)
    }
    fn detect_torn(&self, head: &[u8]) -> bool {
        head.first() == Some(&b'[')
            && contains(head, "\"role\"")
            && (contains(head, "<environment_details>")
                || contains(head, "\"modelInfo\"")
                || contains(head, "] Result:"))
    }
    fn read(&self, path: &Path, data: &[u8]) -> Vec<Session> {
        read_history_bytes(path, data, None, None)
    }
    fn folder_marker(&self) -> Option<&'static str> {
        Some(HISTORY)
    }
    fn read_folder(&self, dir: &Path) -> Result<Vec<Session>, Diagnostic> {
        read_task_dir(dir)
    }
    /// A task's UI log and metadata (read with its history, as is Roo Code's
    /// `history_item.json`), the task index.
    fn is_sidecar(&self, name: &str) -> bool {
        matches!(name, "ui_messages.json" | "task_metadata.json" | "taskHistory.json" | cline_task::HISTORY_ITEM)
    }
    /// The extension's `tasks` in the global storage of VS Code (and of the
    /// editors built on it) on this OS, the remote server's, and the
    /// standalone Cline's under `~/.cline/data` (`$CLINE_DIR/data`); the
    /// same for its forks Roo Code and Kilo Code, whose task folders are
    /// Cline's (VS Code names an extension's storage by its id, lower-case).
    fn default_locations(&self, home: &Home) -> Vec<Location> {
        let config = home.app_config();
        let mut out = Vec::new();
        for &Extension { agent, id, standalone, .. } in &EXTENSIONS {
            let tasks = format!("User/globalStorage/{id}/tasks");
            for editor in ["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"] {
                out.push(Location::new(agent, config.join(editor).join(&tasks)));
            }
            out.push(Location::new(agent, home.join(".vscode-server/data").join(&tasks)));
            if let Some((var, default)) = standalone {
                out.push(Location::new(agent, home.var_or(var, default).join("data/tasks")));
            }
        }
        out
    }
}

/// An extension that writes Cline's task folders.
struct Extension {
    /// As discovery lists its locations.
    agent: &'static str,
    /// Its id, which names its storage folder in VS Code (lower-case).
    id: &'static str,
    /// The agent outputs name (`SessionMeta::agent`); none for Cline, the format's own.
    label: Option<&'static str>,
    /// The standalone app's home: its variable and default under the home folder.
    standalone: Option<(&'static str, &'static str)>,
}

const EXTENSIONS: [Extension; 3] = [
    Extension { agent: "Cline", id: "saoudrizwan.claude-dev", label: None, standalone: Some(("CLINE_DIR", ".cline")) },
    Extension { agent: "Roo Code", id: "rooveterinaryinc.roo-cline", label: Some(ROO_CODE), standalone: None },
    Extension { agent: "Kilo Code", id: "kilocode.kilo-code", label: Some("kilo-code"), standalone: None },
];

/// Roo Code as outputs name it (`SessionMeta::agent`).
const ROO_CODE: &str = "roo-code";

/// The file that makes a folder a Cline task.
const HISTORY: &str = "api_conversation_history.json";

/// A Cline history element: Cline's extras on assistant messages, or its harness
/// text (`<task>`, `<environment_details>`, `[tool for 'x'] Result:`) in user text.
fn is_cline_message(m: &Value) -> bool {
    if m.get("modelInfo").is_some() || m.get("metrics").is_some() {
        return true;
    }
    let Some(blocks) = m.get("content").and_then(|c| c.as_array()) else { return false };
    blocks.iter().filter_map(|b| b.get("text").and_then(|t| t.as_str())).any(|t| {
        let t = t.trim_start();
        t.starts_with("<task>")
            || t.starts_with("<environment_details>")
            || (t.starts_with('[') && t.lines().next().is_some_and(|l| l.trim_end().ends_with("] Result:")))
    })
}

/// Read a history file's bytes, with the task's `ui_messages.json` and
/// `context_history.json` bytes when available. `path` is the task folder or
/// the history file (diagnostics, id).
pub fn read_history_bytes(
    path: &Path,
    data: &[u8],
    ui_messages: Option<&[u8]>,
    context_history: Option<&[u8]>,
) -> Vec<Session> {
    let mut s = Session::new(task_id(path), Format::Cline, path);
    s.stats.bytes = data.len() as u64 + ui_messages.map_or(0, |u| u.len() as u64);
    let history: Value = match super::parse_line(super::strip_bom(data)) {
        Ok(v) => v,
        Err(reason) => {
            s.diagnostics.bad_line(path, 0, format!("api_conversation_history.json is not valid JSON: {reason}"));
            return vec![s];
        }
    };
    let Some(history) = history.as_array() else {
        s.diagnostics.bad_line(path, 0, "api_conversation_history.json is not a JSON array");
        return vec![s];
    };
    s.stats.records = history.len() as u64;
    let ui = match ui_messages {
        Some(bytes) => match super::parse_json::<Value>(super::strip_bom(bytes)) {
            Ok(Value::Array(items)) => Some(items),
            _ => {
                s.diagnostics.warn(path, 0, "ui_messages.json is unreadable: only metrics.tokens give usage");
                None
            }
        },
        None => None,
    };
    let requests = ui.as_deref().map(|ui| ui_requests(&mut s, path, ui)).unwrap_or_default();

    let mut prev_uses: Vec<(String, String)> = Vec::new();
    let mut unpaired_headers = 0u64;
    let mut assistants: Vec<AssistantUsage> = Vec::new();
    let mut metrics_records = 0u64;
    let mut map = cline_range::HistoryMap::default();
    // Roo Code's condense summaries and truncation markers, by element, and
    // its truncations' markers held until the element written after them.
    let mut roo: Vec<roo_condense::Tags> = Vec::with_capacity(history.len());
    let times = ui.as_deref().map(roo_condense::Times::of).unwrap_or_default();
    let mut markers = roo_condense::Markers::default();
    for (i, m) in history.iter().enumerate() {
        let line = i as u64 + 1;
        let ts = m.get("ts").and_then(time::parse_value);
        let tags = roo_condense::Tags::of(m);
        if let Some(t) = ts.filter(|_| !tags.marker) {
            markers.place(Some(t), &mut s.messages);
        }
        map.start.push(s.messages.len());
        let content = m.get("content").unwrap_or(&Value::Null);
        let role = match str_of(m, "role") {
            Some("assistant") => Some(Role::Assistant),
            Some("user") => Some(Role::User),
            _ => None,
        };
        if let Some(role) = role.filter(|_| tags.inserted()) {
            // Written by Roo Code, not by a model call of the task.
            prev_uses.clear();
            let blocks = generic::parse_content(content);
            let message = Message::at(role, roo_condense::origin(&tags), blocks, line, ts);
            s.messages.extend(markers.hold(i, &tags, &times, message));
            roo.push(tags);
            continue;
        }
        roo.push(tags);
        match str_of(m, "role") {
            Some("assistant") => {
                let blocks = generic::parse_content(content);
                prev_uses = tool_uses(&blocks);
                s.messages.push(Message::at(Role::Assistant, Origin::Model, blocks, line, ts));
                let metrics = MetricsTokens::of(m);
                if metrics.is_some() {
                    metrics_records += 1;
                }
                assistants.push(AssistantUsage { metrics, ts });
                map.calls.push(i);
                let model = m.pointer("/modelInfo/modelId").and_then(Value::as_str).map(str::to_string);
                if let Some(model) = &model {
                    s.meta.add_model(model);
                }
                // Usage and a missing timestamp are filled in once every message
                // is known (`attribute_usage`).
                s.calls.push(Call {
                    message_index: s.messages.len() - 1,
                    model,
                    usage: None,
                    timestamp: ts,
                    response_id: None,
                    fast: false,
                });
            }
            Some("user") => {
                let u = user_runs(content, &prev_uses);
                prev_uses.clear();
                unpaired_headers += u.unpaired;
                if s.meta.cwd.is_none() {
                    let runs = u.runs.iter().filter(|(origin, _)| *origin != Origin::CompactSummary);
                    s.meta.cwd = runs.flat_map(|(_, blocks)| blocks).find_map(cwd_of);
                }
                for (origin, blocks) in u.runs {
                    if origin == Origin::CompactSummary {
                        map.summaries.insert(i, s.messages.len());
                    }
                    s.messages.push(Message::at(Role::User, origin, blocks, line, ts));
                }
            }
            Some(other) => s.diagnostics.unknown(&format!("role:{other}"), line, &super::raw_json(m)),
            None => s.diagnostics.bad_line(path, line, "history element without role"),
        }
    }

    markers.place(None, &mut s.messages);
    map.start.push(s.messages.len());
    let marks = ui.as_deref().map(cline_range::Marks::of);
    cline_range::apply(&mut s, path, &map, marks.as_ref());
    roo_condense::apply(&mut s, path, &map.start, &roo, &markers, &times);

    let paired = attribute_usage(&assistants, &requests);
    for (call, (usage, req_ts)) in s.calls.iter_mut().zip(&paired.calls) {
        call.usage = *usage;
        call.timestamp = call.timestamp.or(*req_ts);
    }
    let providers = history.iter().filter_map(|m| m.pointer("/modelInfo/providerId").and_then(Value::as_str));
    cline_cache::warn_cache_in_input(&mut s, path, providers);
    if let Some(bytes) = context_history {
        match cline_context::parse(bytes) {
            Ok(updates) => {
                let request_ts: Vec<Option<i64>> = paired.calls.iter().map(|c| c.1).collect();
                let convert = |e: usize, raw: &Value| convert_element(history, e, raw);
                let read =
                    cline_context::Read { history, start: &map.start, request_ts: &request_ts, convert: &convert };
                cline_context::apply(&mut s, path, &read, updates);
            }
            Err(reason) => {
                let message = format!("context_history.json is unreadable ({reason}): nothing of it applied");
                s.diagnostics.warn(path, 0, message);
            }
        }
    }

    // Both files describe the same requests: count the richer one, not the sum.
    s.stats.usage_records = metrics_records.max(requests.iter().filter(|r| r.usage.is_some()).count() as u64);
    if unpaired_headers > 0 {
        s.diagnostics.warn(
            path,
            0,
            format!("{unpaired_headers} text tool result(s) have no tool_use to answer: kept as text"),
        );
    }
    report_pairing(&mut s, path, &paired, ui_messages.is_some(), ui.is_some());
    vec![s]
}

/// A user history element as messages: runs of one origin each, the summary
/// a `summarize_task` result holds among them; and how many text result
/// headers had no tool use of `prev_uses` (the previous element's) to answer.
struct UserRuns {
    runs: Vec<(Origin, Vec<Block>)>,
    unpaired: u64,
}

fn user_runs(content: &Value, prev_uses: &[(String, String)]) -> UserRuns {
    let blocks = generic::parse_content(content);
    let (blocks, unpaired) = pair_text_results(blocks, prev_uses);
    let (blocks, summary, after) = cline_range::take_summary(blocks, prev_uses);
    let mut runs = generic::split_runs(blocks, text_origin);
    if !summary.is_empty() {
        runs.push((Origin::CompactSummary, summary));
    }
    runs.extend(generic::split_runs(after, text_origin));
    UserRuns { runs, unpaired }
}

/// History element `e`, its content `raw`, as the messages the reader makes
/// of it (a user element answers the tool uses of the assistant before it).
fn convert_element(history: &[Value], e: usize, raw: &Value) -> Vec<(Origin, Vec<Block>)> {
    let content = raw.get("content").unwrap_or(&Value::Null);
    if str_of(raw, "role") == Some("assistant") {
        return vec![(Origin::Model, generic::parse_content(content))];
    }
    let prev = e.checked_sub(1).and_then(|p| history.get(p)).filter(|p| str_of(p, "role") == Some("assistant"));
    let uses = prev.map(|p| tool_uses(&generic::parse_content(p.get("content").unwrap_or(&Value::Null))));
    user_runs(content, &uses.unwrap_or_default()).runs
}

/// The tool uses of an assistant history element, as the next user element
/// answers them: (id, name).
fn tool_uses(blocks: &[Block]) -> Vec<(String, String)> {
    blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, name, .. } => Some((id.clone(), name.clone())),
            _ => None,
        })
        .collect()
}

/// The task id: the folder name (the history file's parent when given the file).
fn task_id(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == "api_conversation_history.json")
        && let Some(name) = path.parent().and_then(Path::file_name)
    {
        return name.to_string_lossy().into_owned();
    }
    path.file_name().map_or_else(|| super::stem_id(path), |n| n.to_string_lossy().into_owned())
}

/// One completed API request from `ui_messages.json`.
struct UiRequest {
    /// `None` when the request never got its token counts (interrupted).
    usage: Option<Usage>,
    ts: Option<i64>,
}

/// The completed `api_req_started` records, in order, and the API errors.
fn ui_requests(s: &mut Session, path: &Path, ui: &[Value]) -> Vec<UiRequest> {
    let mut out = Vec::new();
    let mut pending: Option<UiRequest> = None;
    // Usage Cline keeps for its task total but whose messages this history
    // does not hold: requests a checkpoint restore deleted, and sub-agents'.
    let mut elsewhere = [(0u64, 0u64, 0u64); 2];
    for m in ui {
        let say = str_of(m, "say");
        let ask = str_of(m, "ask");
        if let Some(k) = ["deleted_api_reqs", "subagent_usage"].iter().position(|w| say == Some(w)) {
            let info: Value = str_of(m, "text").and_then(|t| super::parse_json_str(t).ok()).unwrap_or(Value::Null);
            let prompt = ["tokensIn", "cacheWrites", "cacheReads"].iter().map(|k| u64_of(info.get(*k)));
            let u = &mut elsewhere[k];
            u.0 += 1;
            u.1 = prompt.fold(u.1, u64::saturating_add);
            u.2 = u.2.saturating_add(u64_of(info.get("tokensOut")));
        } else if say == Some("api_req_started") {
            out.extend(pending.take());
            let info: Value = str_of(m, "text").and_then(|t| super::parse_json_str(t).ok()).unwrap_or(Value::Null);
            let has_tokens =
                ["tokensIn", "tokensOut", "cacheWrites", "cacheReads"].iter().any(|k| info.get(*k).is_some());
            let usage = has_tokens.then(|| Usage {
                uncached_input: u64_of(info.get("tokensIn")),
                cache_read: u64_of(info.get("cacheReads")),
                cache_write: u64_of(info.get("cacheWrites")),
                output: u64_of(info.get("tokensOut")),
                reasoning: 0,
                provenance: UsageProvenance::Cline,
            });
            pending = Some(UiRequest { usage, ts: m.get("ts").and_then(time::parse_value) });
        } else if ask == Some("api_req_failed") || say == Some("api_req_failed") {
            let text = str_of(m, "text").unwrap_or("");
            // `conversationHistoryIndex` is the history length − 1 when the UI
            // message was written: the failed request follows that element.
            let line = m.get("conversationHistoryIndex").and_then(Value::as_u64).map_or(0, |i| i.saturating_add(1));
            s.errors.push(RecordedError {
                source_line: line,
                kind: errors::classify(text),
                message: super::truncate_str(text, MAX_ERROR_LEN).to_string(),
            });
            // A request that failed before any token was counted produced no
            // assistant message: it must not take the next message's place.
            if let Some(r) = pending.take()
                && r.usage.is_some_and(|u| u.prompt_tokens() + u.output > 0)
            {
                out.push(r);
            }
        }
    }
    out.extend(pending);
    let what = ["request(s) deleted by a checkpoint restore", "sub-agent run(s)"];
    for ((n, input, output), what) in elsewhere.iter().zip(what) {
        if *n > 0 {
            s.diagnostics.warn(
                path,
                0,
                format!(
                    "ui_messages.json counts the usage of {n} {what} ({} input, {} output tokens) whose messages \
this history does not hold: not replayed",
                    thousands(*input),
                    thousands(*output)
                ),
            );
        }
    }
    out
}

/// `metrics.tokens` of an assistant message, as newer Cline writes it.
///
/// What the fields hold is read from Cline's writer, not from its type. The
/// `ClineTokensInfo` comments (cline/cline `src/shared/messages/metrics.ts`) say
/// `prompt` "includes cached" and `cached` is the "subset of prompt_tokens that
/// were cache hits". But `recursivelyMakeClineRequests` (cline/cline
/// `src/core/task/index.ts`) stores `prompt: inputTokens`, `completion:
/// outputTokens`, `cached: cacheWriteTokens + cacheReadTokens`, from the same
/// running totals it hands `updateApiReqMsg` (`src/core/task/utils.ts`) for the
/// request's `api_req_started` (`tokensIn`, `tokensOut`, `cacheWrites`,
/// `cacheReads`); and `inputTokens` excludes both cache counts (the newer
/// `updateApiReqMsg` sums `tokensIn + cacheWrites + cacheReads` for the total
/// input). So `prompt` is the uncached input, and `cached` far above `prompt` is
/// the normal case: capping it at `prompt` read a 10k-token prompt as 10 tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MetricsTokens {
    prompt: u64,
    completion: u64,
    cached: u64,
}

impl MetricsTokens {
    fn of(m: &Value) -> Option<Self> {
        let t = m.pointer("/metrics/tokens").filter(|t| t.is_object())?;
        Some(Self {
            prompt: u64_of(t.get("prompt")),
            completion: u64_of(t.get("completion")),
            cached: u64_of(t.get("cached")),
        })
    }

    /// Whether an `api_req_started` split reports these same counts.
    fn agrees_with(&self, u: &Usage) -> bool {
        u.uncached_input == self.prompt
            && u.output == self.completion
            && u.cache_read.saturating_add(u.cache_write) == self.cached
    }

    /// The usage these counts give when no `api_req_started` splits `cached`.
    ///
    /// `prompt_tokens()` is exact whatever the split; only what rests on it (cache
    /// cost, hit rate) is inferred. Cline marks the prompt for caching up to its
    /// last user messages, so a call reads from the cache at most what earlier
    /// calls of the task put there: at most the previous call's whole prompt
    /// (`read_bound`), and nothing on the task's first call (`Some(0)`). In a
    /// running task nearly all of `cached` is that re-read prefix and only the turn
    /// added since is written, so `cached` is read as cache read up to the bound
    /// and the rest as cache write. `None` (the previous call's size is unknown)
    /// leaves nothing to contradict reading it all as cache read. What this gets
    /// wrong: a first call that hit a cache another task left (same system prompt
    /// within the cache lifetime) counts as a write.
    fn usage(&self, read_bound: Option<u64>) -> Usage {
        let read = read_bound.map_or(self.cached, |b| self.cached.min(b));
        Usage {
            uncached_input: self.prompt,
            cache_read: read,
            cache_write: self.cached - read,
            output: self.completion,
            reasoning: 0,
            provenance: UsageProvenance::Cline,
        }
    }
}

/// What the history says of one assistant message's usage.
struct AssistantUsage {
    metrics: Option<MetricsTokens>,
    ts: Option<i64>,
}

/// How many requests past the next unused one the counts of a message with
/// metrics are looked for. Requests that produced no assistant message are rare
/// (a few in a row at most); the bound keeps a task whose two files disagree
/// throughout linear.
const LOOKAHEAD: usize = 16;

/// The usage of every call, and what did not pair.
#[derive(Debug, Default)]
struct Pairing {
    /// Per assistant message: its usage and its request's start time.
    calls: Vec<(Option<Usage>, Option<i64>)>,
    /// Messages with metrics that no `api_req_started` agrees with.
    metrics_unmatched: u64,
    /// Calls whose `cached` tokens were split by inference ([`MetricsTokens::usage`]).
    inferred: u64,
    /// Messages without metrics and without a request to pair with.
    without_usage: u64,
    /// Requests with tokens that no message took.
    unused_requests: u64,
}

/// Give every assistant message its usage (see the module header). Cline itself
/// pairs the two files by position: its ATIF export (cline/cline
/// `src/shared/messages/atif-converter.ts`, `enrichMessagesWithMetrics`) gives
/// the i-th `api_req_started` to the i-th assistant message. Position alone
/// misattributes every later call once one request has no message (or one
/// message no request), so here the split of `ui_messages.json` is preferred to
/// `metrics.tokens` but never replaces it with different counts: a request is
/// taken for a message with metrics only when their counts agree. A request that
/// started after a message was stored did not produce it, when both carry a time.
fn attribute_usage(assistants: &[AssistantUsage], requests: &[UiRequest]) -> Pairing {
    let mut p = Pairing::default();
    let with_tokens = |rs: &[UiRequest]| rs.iter().filter(|r| r.usage.is_some()).count() as u64;
    let mut next = 0usize;
    let mut read_bound = Some(0u64);
    for a in assistants {
        let started_before = |r: &UiRequest| !matches!((r.ts, a.ts), (Some(req), Some(msg)) if req > msg);
        let (usage, ts) = match a.metrics {
            Some(m) => {
                let window = requests.get(next..).unwrap_or_default().iter().take(LOOKAHEAD);
                match window.enumerate().find(|(_, r)| started_before(r) && r.usage.is_some_and(|u| m.agrees_with(&u)))
                {
                    Some((k, r)) => {
                        p.unused_requests += with_tokens(requests.get(next..next + k).unwrap_or_default());
                        next += k + 1;
                        (r.usage, r.ts)
                    }
                    None => {
                        p.metrics_unmatched += 1;
                        p.inferred += u64::from(m.cached > 0);
                        (Some(m.usage(read_bound)), None)
                    }
                }
            }
            None => match requests.get(next).filter(|r| started_before(r)) {
                Some(r) => {
                    next += 1;
                    (r.usage, r.ts)
                }
                None => {
                    p.without_usage += 1;
                    (None, None)
                }
            },
        };
        read_bound = usage.map(|u| u.prompt_tokens());
        p.calls.push((usage, ts));
    }
    p.unused_requests += with_tokens(requests.get(next..).unwrap_or_default());
    p
}

/// Warn about what [`attribute_usage`] could not pair. `ui_present`: the task has
/// a `ui_messages.json`; `ui_read`: it parsed.
fn report_pairing(s: &mut Session, path: &Path, p: &Pairing, ui_present: bool, ui_read: bool) {
    if !ui_present && p.without_usage > 0 {
        s.diagnostics.warn(path, 0, format!("no ui_messages.json: {} call(s) carry no usage", p.without_usage));
    }
    if ui_read {
        if p.metrics_unmatched > 0 {
            s.diagnostics.warn(
                path,
                0,
                format!(
                    "{} assistant message(s) have metrics.tokens that no api_req_started in ui_messages.json agrees with: their own counts are used",
                    p.metrics_unmatched
                ),
            );
        }
        if p.without_usage > 0 {
            s.diagnostics.warn(
                path,
                0,
                format!(
                    "{} assistant message(s) have neither metrics.tokens nor an api_req_started to pair with: no usage",
                    p.without_usage
                ),
            );
        }
        if p.unused_requests > 0 {
            s.diagnostics.warn(
                path,
                0,
                format!(
                    "{} completed api request(s) in ui_messages.json pair with no assistant message",
                    p.unused_requests
                ),
            );
        }
    }
    if p.inferred > 0 {
        s.diagnostics.warn(
            path,
            0,
            format!(
                "{} call(s) report cached tokens without a cache read/write split: split inferred (cache read at most the previous call's prompt)",
                p.inferred
            ),
        );
    }
}

/// The tool name of a text result header (`[name for 'arg'] Result:` or
/// `[name] Result:`), and the text after the header line.
fn result_header(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('[')?;
    let (first, after) = rest.split_once('\n').unwrap_or((rest, ""));
    let head = first.trim_end();
    if !head.ends_with("] Result:") && !head.ends_with("] Result") {
        return None;
    }
    let name_end = head.find([' ', ']'])?;
    let name = &head[..name_end];
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')) {
        return None;
    }
    Some((name, after))
}

/// Turn text result headers (and the blocks that follow them) into `ToolResult`
/// blocks answering the previous assistant's tool uses, in order. Returns the new
/// blocks and the number of headers with no tool use left to answer.
fn pair_text_results(blocks: Vec<Block>, uses: &[(String, String)]) -> (Vec<Block>, u64) {
    // A set: a turn with thousands of calls and results must stay linear.
    let answered: HashSet<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
        .collect();
    let open: Vec<&String> = uses.iter().filter(|(id, _)| !answered.contains(id.as_str())).map(|(id, _)| id).collect();
    let mut open = open.into_iter();
    let mut out: Vec<Block> = Vec::with_capacity(blocks.len());
    // Index in `out` of the result currently collecting continuation blocks.
    let mut current: Option<usize> = None;
    let mut unpaired = 0u64;
    for b in blocks {
        let header = match &b {
            Block::Text { text } => result_header(text).map(|(_, after)| after.to_string()),
            _ => None,
        };
        if let Some(after) = header {
            let first = (!after.is_empty()).then(|| Block::text(after));
            match open.next() {
                Some(id) => {
                    out.push(Block::ToolResult {
                        tool_use_id: id.clone(),
                        content: first.into_iter().collect(),
                        is_error: None,
                    });
                    current = Some(out.len() - 1);
                }
                None => {
                    unpaired += 1;
                    out.push(b);
                    current = None;
                }
            }
            continue;
        }
        let continues = current.is_some() && !matches!(b, Block::ToolResult { .. }) && text_origin(&b) == Origin::Human;
        if continues && let Some(Block::ToolResult { content, .. }) = current.and_then(|i| out.get_mut(i)) {
            content.push(b);
            continue;
        }
        current = None;
        out.push(b);
    }
    (out, unpaired)
}

/// Harness text vs text a person typed.
fn text_origin(b: &Block) -> Origin {
    let Block::Text { text } = b else { return Origin::Human };
    let t = text.trim_start();
    const INJECTED: &[&str] = &[
        "<environment_details>",
        "[TASK RESUMPTION]",
        "[ERROR]",
        "<explicit_instructions",
        "[Response interrupted",
        "[NOTE]",
        "# task_progress",
        "<task_progress",
        "# Current Working Directory",
    ];
    if result_header(t).is_some() {
        // A header left as text (no tool use to answer): still tool output.
        Origin::ToolResult
    } else if INJECTED.iter().any(|p| t.starts_with(p)) {
        Origin::Injected
    } else {
        Origin::Human
    }
}

/// The working directory Cline or Roo Code states in its environment details.
fn cwd_of(b: &Block) -> Option<String> {
    let Block::Text { text } = b else { return None };
    // Cline writes `# Current Working Directory (DIR) Files`; Roo Code,
    // `# Current Workspace Directory (DIR) Files`. DIR may hold `)`.
    let rest = ["# Current Working Directory (", "# Current Workspace Directory ("]
        .iter()
        .find_map(|h| text.find(h).map(|i| &text[i + h.len()..]))?;
    let line = rest.lines().next()?;
    let dir = line.trim_end().strip_suffix(") Files").or_else(|| line.rfind(')').map(|i| &line[..i]))?;
    (!dir.trim().is_empty()).then(|| dir.to_string())
}

#[path = "cline_range.rs"]
mod cline_range;

#[path = "cline_context.rs"]
mod cline_context;

#[path = "cline_cache.rs"]
mod cline_cache;

#[path = "cline_task.rs"]
mod cline_task;
pub use cline_task::read_task_dir;

#[cfg(test)]
#[path = "cline_task_tests.rs"]
mod task_tests;

#[path = "roo_condense.rs"]
mod roo_condense;

#[cfg(test)]
#[path = "cline_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "cline_range_tests.rs"]
mod range_tests;

#[cfg(test)]
#[path = "cline_context_tests.rs"]
mod context_tests;

#[cfg(test)]
#[path = "roo_condense_tests.rs"]
mod roo_tests;
