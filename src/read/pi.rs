//! Reader for pi-coding-agent (badlogic/pi-mono) and OpenClaw session JSONL
//! (log-formats.md §3): a `type:"session"` header line, then entries.
//!
//! - v1 files are linear: file order is conversation order.
//! - v2+ entries form an `id`/`parentId` tree (v3 only renamed the `hookMessage`
//!   role to `custom`). Like pi's `buildSessionContext`, the conversation is the
//!   path from the root to the *last* entry of the file (the leaf pi resumes
//!   from). Entries on other branches were abandoned when the user navigated
//!   back (`/tree`, `/branch`): they were real requests, but never again part of
//!   the context the agent sent, so they are left out of `messages`/`calls` and
//!   counted in `diagnostics.skipped["abandoned branch entry"]` (with one warning).
//!   Their usage still counts in `stats.usage_records`, which describes the file.
//!
//! Mapping decisions (why, where it is not obvious):
//! - Consecutive `toolResult` entries become one user message (pi writes one entry
//!   per result; the normalized model, like the Anthropic API pi mostly talks to,
//!   groups the results of one assistant turn).
//! - `bashExecution` (the user's `!cmd` shell escape) becomes a user message with
//!   the text pi sends the model (`Ran \`cmd\`` plus fenced output), origin
//!   `Injected`: a person typed the command, but what enters the context is
//!   harness-produced command output, comparable to an attachment. Calling it
//!   `Human` would make quality metrics treat pages of shell output as user intent.
//!   `excludeFromContext` (`!!cmd`) executions never reach the model: skipped.
//! - Aborted and failed (`stopReason:"error"`) turns are never sent again: pi
//!   leaves them out of every later request (`transformMessages` in pi-ai; the
//!   recorded usage of the next request shows it), so they are in no later
//!   context. One the provider reported usage for was a request: its call is
//!   kept, with its response marked [`Message::unsent`]. One without usage is
//!   no message at all (counted in `skipped`). A failed turn is recorded in
//!   `Session::errors`, its response a `SyntheticError`.
//! - `compaction`: the summary becomes a `CompactSummary` user message (wrapped as
//!   pi wraps it for the model) listed in `inserted`; `kept` is the messages from
//!   the first kept entry up to the compaction. v1 `firstKeptEntryIndex` indexes
//!   pi's parsed entry array *including the header* (index 0 = header; pi's v1→v2
//!   migration does `entries[firstKeptEntryIndex]`, and in the real corpus both
//!   indexes land on user messages at file line index+1 — a turn boundary, as pi's
//!   cut point requires).

use super::format::{LogFormat, Signal};
use super::generic::{MAX_ERROR_LEN, str_of, u64_of};
use super::locations::{Home, Location};
use super::{errors, time};
use crate::model::{
    Block, Call, CompactionKind, Format, Message, Origin, RecordedCompaction, RecordedError, Role, Session, Usage,
    UsageProvenance,
};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

const COMPACTION_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const COMPACTION_SUFFIX: &str = "\n</summary>";
const BRANCH_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUFFIX: &str = "</summary>";

/// pi / OpenClaw sessions in the format registry ([`super::format`]).
pub struct Pi;

impl LogFormat for Pi {
    fn id(&self) -> Format {
        Format::Pi
    }
    fn detect_record(&self, rec: &serde_json::Map<String, Value>) -> Signal {
        let ty = rec.get("type").and_then(Value::as_str).unwrap_or("");
        if ty == "session" && (rec.contains_key("cwd") || rec.contains_key("version")) && rec.contains_key("id") {
            return Signal::Sure;
        }
        if ty == "message" && rec.get("message").and_then(|m| m.get("role")).is_some() && !rec.contains_key("sessionId")
        {
            return Signal::Likely;
        }
        if matches!(ty, "compaction" | "model_change" | "thinking_level_change") && rec.contains_key("timestamp") {
            return Signal::Likely;
        }
        Signal::No
    }
    fn read(&self, path: &Path, data: &[u8]) -> Vec<Session> {
        if data.starts_with(super::openclaw_db::MAGIC) {
            return super::openclaw_db::read_file(path);
        }
        let mut sessions = read(path, data);
        super::openclaw_store::apply_windows(path, &mut sessions);
        sessions
    }
    /// An OpenClaw agent database under another name.
    fn detect_torn(&self, head: &[u8]) -> bool {
        head.starts_with(super::openclaw_db::MAGIC)
    }
    /// OpenClaw 2026.8+: an agent's sessions are rows of one SQLite database
    /// in `agents/<id>/agent`.
    fn folder_marker(&self) -> Option<&'static str> {
        Some(super::openclaw_db::DB)
    }
    fn read_folder(&self, dir: &Path) -> Result<Vec<Session>, crate::model::Diagnostic> {
        super::openclaw_db::read_dir(dir)
    }
    /// Where OpenClaw's move to SQLite put the JSONL sessions it imported
    /// (`agents/<id>/session-sqlite-import-archive`): copies of what the
    /// agent's database holds, which would count each session twice.
    fn is_skipped_dir(&self, name: &str) -> bool {
        name == "session-sqlite-import-archive"
    }
    /// OpenClaw's session store (keys to session files), its checkpoints
    /// (copies of a session at a point) and trajectories (another format).
    fn is_sidecar(&self, name: &str) -> bool {
        name == super::openclaw_store::STORE
            || (name.contains(".checkpoint.") && name.ends_with(".jsonl"))
            || name.ends_with(".trajectory.jsonl")
            || name.ends_with(".trajectory-path.json")
    }
    /// pi: `$PI_CODING_AGENT_SESSION_DIR`, else the `sessionDir` of its
    /// settings, else `sessions` under `~/.pi/agent` (`$PI_CODING_AGENT_DIR`).
    /// OpenClaw: `agents` (one `<id>/sessions` folder per agent) under
    /// `~/.openclaw` (`$OPENCLAW_STATE_DIR`, `$CLAWDBOT_STATE_DIR`, or
    /// `$OPENCLAW_HOME/.openclaw`), or under its former names when only one
    /// of those exists.
    fn default_locations(&self, home: &Home) -> Vec<Location> {
        let agent_dir = home.var_or("PI_CODING_AGENT_DIR", ".pi/agent");
        let pi = home
            .var("PI_CODING_AGENT_SESSION_DIR")
            .or_else(|| settings_session_dir(home, &agent_dir.join("settings.json")))
            .unwrap_or_else(|| agent_dir.join("sessions"));
        let state = home.var("OPENCLAW_STATE_DIR").or_else(|| home.var("CLAWDBOT_STATE_DIR")).unwrap_or_else(|| {
            let base = home.var("OPENCLAW_HOME").unwrap_or_else(|| home.dir().to_path_buf());
            let current = base.join(".openclaw");
            let legacy = [".clawdbot", ".moldbot", ".moltbot"].map(|d| base.join(d));
            match legacy.into_iter().find(|d| d.is_dir()) {
                Some(old) if !current.is_dir() => old,
                _ => current,
            }
        });
        vec![Location::new("pi", pi), Location::new("OpenClaw", state.join("agents"))]
    }
}

/// The `sessionDir` of pi's settings file, when it names one (`~` is home).
fn settings_session_dir(home: &Home, settings: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(settings).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let dir = v.get("sessionDir")?.as_str()?.trim();
    Home::new(home.dir(), home.os()).with_var("D", dir).var("D")
}

/// Read a pi / OpenClaw session file. Never fails: bad lines become diagnostics.
pub fn read(path: &Path, data: &[u8]) -> Vec<Session> {
    let mut s = Session::new(super::stem_id(path), Format::Pi, path);
    s.stats.bytes = data.len() as u64;

    // pi's FileEntry[]: every line that parses, in file order (header included).
    // `firstKeptEntryIndex` indexes this array, so it must skip exactly what pi
    // skips (blank and malformed lines) and nothing else.
    let mut entries: Vec<(u64, Value)> = Vec::new();
    for (line, raw) in super::lines(data) {
        s.stats.records += 1;
        match super::parse_line(raw) {
            Ok(v) => {
                if !v.is_object() {
                    // Kept in `entries` anyway (pi counts it in the entry
                    // indexes), as a null: nothing reads its content.
                    s.diagnostics.bad_line(path, line, "record is not a JSON object");
                    entries.push((line, Value::Null));
                    continue;
                }
                if v.get("type").and_then(Value::as_str) == Some("message")
                    && v.get("message").and_then(|m| m.get("usage")).is_some_and(Value::is_object)
                {
                    s.stats.usage_records += 1;
                }
                entries.push((line, v));
            }
            Err(reason) => s.diagnostics.bad_line(path, line, reason),
        }
    }

    let mut r = Reader {
        s,
        current_model: None,
        tool_merge_open: false,
        merged: false,
        entry_msg: vec![None; entries.len()],
        first_by_id: None,
        forked_at: None,
        base_id: String::new(),
        resets: 0,
        segment: Vec::new(),
        prompted: false,
        ttl: cache_ttl::CacheTtl::default(),
        cache_in_input: None,
    };
    let header = entries.iter().position(|(_, v)| str_of(v, "type") == Some("session"));
    let version = match header {
        Some(h) => {
            let hv = &entries[h].1;
            r.read_header(hv);
            u64_of(hv.get("version")).max(1)
        }
        None => {
            r.s.diagnostics.warn(path, 0, "no `session` header line: reading entries without session metadata");
            1
        }
    };
    r.s.meta.add_version(&format!("pi v{version}"));
    r.base_id.clone_from(&r.s.id);

    let tree = version >= 2
        || entries.iter().any(|(_, v)| str_of(v, "type") != Some("session") && v.get("parentId").is_some());
    let order = if tree {
        r.active_path(&entries, header)
    } else {
        (0..entries.len()).filter(|i| Some(*i) != header).collect()
    };
    // A fork's file opens with the entries it copied from its parent, all
    // made before the fork's header was written: a v2+ fork keeps their
    // entries' times, a v1 branch writes the entries anew and keeps only the
    // time inside each message.
    let mut copying = r.forked_at.is_some();
    let mut ended = Vec::new();
    for i in order {
        if copying {
            copying = matches!((made_at(&entries[i].1), r.forked_at), (Some(t), Some(fork)) if t < fork);
        }
        if str_of(&entries[i].1, "type") == Some("reset") {
            ended.push(r.reset(&entries, i));
            continue;
        }
        r.entry(&entries, i);
        r.segment.push(i);
        if copying {
            r.s.inherited = r.s.messages.len();
        }
    }
    r.cache_ttl_finish();
    r.usage_finish();
    ended.push(r.s);
    ended
}

struct Reader {
    s: Session,
    /// Model from the header or the last `model_change`, for messages without one.
    current_model: Option<String>,
    /// The last message is a run of `toolResult` entries the next one may join.
    tool_merge_open: bool,
    /// The entry being read joined the previous message (a merged tool result).
    merged: bool,
    /// For each entry: the index of the message holding its content, or the
    /// number of messages before it when it produced none (a boundary).
    entry_msg: Vec<Option<usize>>,
    /// Entry id → index of the first non-header entry with that id
    /// ([`Reader::entry_by_id`]).
    first_by_id: Option<HashMap<String, usize>>,
    /// When a fork's header (`parentSession`, `branchedFrom`) was written.
    forked_at: Option<i64>,
    /// The header's session id: an OpenClaw reset goes on as `ID.resetN`.
    base_id: String,
    /// The `reset` entries read so far ([`Reader::reset`]).
    resets: u32,
    /// The entries read since the last reset, whose `entry_msg` a reset
    /// renumbers.
    segment: Vec<usize>,
    /// A person's message was read in this session (a reset's kept tail
    /// counts): the first one names it.
    prompted: bool,
    /// OpenClaw's tool-result projections read so far ([`cache_ttl`]).
    ttl: cache_ttl::CacheTtl,
    /// The first line and the number of usages whose `input` held the cached
    /// tokens ([`usage_of`]), warned once per conversation.
    cache_in_input: Option<(u64, u64)>,
}

impl Reader {
    fn read_header(&mut self, h: &Value) {
        if let Some(id) = str_of(h, "id").filter(|id| !id.is_empty()) {
            self.s.id = id.to_string();
        }
        self.s.meta.cwd = str_of(h, "cwd").map(str::to_string);
        if let Some(m) = str_of(h, "modelId").or(str_of(h, "model")) {
            self.s.meta.add_model(m);
            self.current_model = Some(m.to_string());
        }
        // `branchedFrom` / `parentSession` name the file this session was forked
        // from. A fork is a conversation of its own, not a sub-agent, so it is
        // not recorded in `Session::parent`; the entries it copied from the
        // parent are its inherited history ([`Session::inherited`]).
        if let Some(parent) =
            ["parentSession", "branchedFrom"].iter().find_map(|k| str_of(h, k).filter(|p| !p.is_empty()))
        {
            self.forked_at = h.get("timestamp").and_then(time::parse_value);
            self.s.forked_from = Some(parent.to_string());
        }
    }

    /// Entry indexes on the path from the root to the last entry (v2+ trees).
    fn active_path(&mut self, entries: &[(u64, Value)], header: Option<usize>) -> Vec<usize> {
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        let mut leaf = None;
        let mut without_id = 0u64;
        for (i, (_, v)) in entries.iter().enumerate() {
            if Some(i) == header || !v.is_object() {
                continue;
            }
            match str_of(v, "id") {
                Some(id) => {
                    by_id.insert(id, i);
                    leaf = Some(i);
                }
                None => without_id += 1,
            }
        }
        let path_ref = self.s.source_path.clone();
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let controls =
            by_id.values().filter(|&&i| !matches!(openclaw::step(&entries[i].1), openclaw::Step::Entry)).count();
        let controls = controls as u64;
        let mut cur = leaf;
        while let Some(i) = cur {
            if !seen.insert(i) {
                self.s.diagnostics.warn(&path_ref, entries[i].0, "cycle in the entry tree: path cut here");
                break;
            }
            let parent = |key: &str, entry: usize, this: &mut Self| match entries[entry].1.get(key) {
                Some(Value::String(p)) => {
                    let parent = by_id.get(p.as_str()).copied();
                    if parent.is_none() {
                        let why = if key == "targetId" {
                            "leaf row's targetId names no entry: path starts here"
                        } else {
                            "parentId names no entry: path starts here"
                        };
                        this.s.diagnostics.warn(&path_ref, entries[entry].0, why);
                    }
                    parent
                }
                _ => None,
            };
            // OpenClaw: a leaf row moves the branch to its target, and an
            // entry beside the conversation is no part of it.
            cur = match openclaw::step(&entries[i].1) {
                openclaw::Step::Leaf => parent("targetId", i, self),
                openclaw::Step::Side => parent("parentId", i, self),
                openclaw::Step::Entry => {
                    path.push(i);
                    parent("parentId", i, self)
                }
            };
        }
        path.reverse();
        self.s.diagnostics.skip_n("branch control or side entry", controls);
        let abandoned = (by_id.len() as u64).saturating_sub(path.len() as u64 + controls);
        if abandoned > 0 {
            self.s.diagnostics.skip_n("abandoned branch entry", abandoned);
            self.s.diagnostics.warn(
                &path_ref,
                0,
                format!("{abandoned} entries on abandoned branches are not part of the active conversation"),
            );
        }
        self.s.diagnostics.skip_n("tree entry without id", without_id);
        path
    }

    /// Say how many usages of the conversation read so far held the cached
    /// tokens in `input` ([`usage_of`]).
    fn usage_finish(&mut self) {
        if let Some((line, n)) = self.cache_in_input.take() {
            let p = self.s.source_path.clone();
            self.s.diagnostics.warn(
                &p,
                line,
                format!(
                    "{n} usage(s) record the cached tokens inside `input` (their `totalTokens` counts them once, \
                     as pi-ai's Google providers did before March 2026): read with the cache counted once"
                ),
            );
        }
    }

    fn push(&mut self, m: Message) -> usize {
        self.tool_merge_open = false;
        self.s.messages.push(m);
        self.s.messages.len() - 1
    }

    fn entry(&mut self, entries: &[(u64, Value)], i: usize) {
        let (line, v) = (entries[i].0, &entries[i].1);
        let before = self.s.messages.len();
        self.merged = false;
        self.entry_msg[i] = Some(before);
        if !v.is_object() {
            return; // reported as a bad line when read
        }
        let Some(ty) = str_of(v, "type") else {
            self.s.diagnostics.unknown("entry without type", line, &super::raw_json(v));
            return;
        };
        let ts = v.get("timestamp").and_then(time::parse_value);
        match ty {
            "message" => match v.get("message") {
                Some(m) if m.is_object() => self.message(m, line, ts),
                _ => self.s.diagnostics.bad_line(&self.s.source_path.clone(), line, "message entry without message"),
            },
            "compaction" => self.compaction(entries, v, line, ts),
            "branch_summary" => {
                if let Some(summary) = str_of(v, "summary").filter(|s| !s.is_empty()) {
                    let text = format!("{BRANCH_PREFIX}{summary}{BRANCH_SUFFIX}");
                    self.push(Message::at(Role::User, Origin::Injected, vec![Block::text(text)], line, ts));
                }
            }
            "custom_message" => {
                let blocks = content_blocks(v.get("content"));
                self.push(Message::at(Role::User, Origin::Injected, blocks, line, ts));
            }
            "model_change" => {
                if let Some(m) = str_of(v, "modelId") {
                    self.s.meta.add_model(m);
                    self.current_model = Some(m.to_string());
                }
                self.s.diagnostics.skip(ty);
            }
            "session_info" => {
                if let Some(name) = str_of(v, "name").filter(|n| !n.is_empty()) {
                    self.s.meta.title = Some(name.to_string());
                }
                self.s.diagnostics.skip(ty);
            }
            "custom" if str_of(v, "customType") == Some(cache_ttl::CUSTOM_TYPE) => self.cache_ttl(entries, v, line),
            // Settings and extension state: never part of the model's context.
            "thinking_level_change" | "label" | "custom" | "session" | "leaf" => self.s.diagnostics.skip(ty),
            other => self.s.diagnostics.unknown(other, line, &super::raw_json(v)),
        }
        // Where this entry sits in `messages`: its own message, the message a
        // merged tool result joined, or the boundary before the next message.
        if self.merged {
            self.entry_msg[i] = Some(before.saturating_sub(1));
        }
    }

    fn message(&mut self, m: &Value, line: u64, entry_ts: Option<i64>) {
        let ts = m.get("timestamp").and_then(time::parse_value).or(entry_ts);
        let role = str_of(m, "role").unwrap_or("");
        // pi's `!!cmd`, OpenClaw's dividers: shown, never sent.
        if m.get("excludeFromContext").and_then(Value::as_bool) == Some(true) {
            let known = ["bashExecution", "custom", "hookMessage", "user", "assistant", "toolResult", "developer"];
            let kind = known.into_iter().find(|k| *k == role).unwrap_or("message");
            self.s.diagnostics.skip(&format!("{kind} excluded from context"));
            return;
        }
        match role {
            "user" => {
                let mut blocks = content_blocks(m.get("content"));
                self.model_prompt_projection(m, &mut blocks, line);
                self.prompted = true;
                self.push(Message::at(Role::User, Origin::Human, blocks, line, ts));
            }
            "assistant" => self.assistant(m, line, ts),
            "toolResult" => {
                let block = Block::ToolResult {
                    tool_use_id: str_of(m, "toolCallId").unwrap_or("").to_string(),
                    content: content_blocks(m.get("content")),
                    is_error: m.get("isError").and_then(Value::as_bool),
                };
                if self.tool_merge_open
                    && let Some(last) = self.s.messages.last_mut()
                {
                    last.blocks.push(block);
                    self.merged = true;
                    return;
                }
                self.push(Message::at(Role::User, Origin::ToolResult, vec![block], line, ts));
                self.tool_merge_open = true;
            }
            "bashExecution" => {
                self.push(Message::at(Role::User, Origin::Injected, vec![Block::text(bash_text(m))], line, ts));
            }
            // Instructions an application adds (`DeveloperMessage`, string
            // content): sent, natively or wrapped as a user message.
            "developer" => {
                let blocks = content_blocks(m.get("content"));
                self.push(Message::at(Role::System, Origin::Injected, blocks, line, ts));
            }
            // v3 `custom`, its v2 name `hookMessage`: extension messages in context.
            "custom" | "hookMessage" => {
                let blocks = content_blocks(m.get("content"));
                self.push(Message::at(Role::User, Origin::Injected, blocks, line, ts));
            }
            "branchSummary" => {
                let text = format!("{BRANCH_PREFIX}{}{BRANCH_SUFFIX}", str_of(m, "summary").unwrap_or(""));
                self.push(Message::at(Role::User, Origin::Injected, vec![Block::text(text)], line, ts));
            }
            // Normally only built in memory; if persisted, it is a summary without
            // the compaction entry that would say what it replaced.
            "compactionSummary" => {
                let text = format!("{COMPACTION_PREFIX}{}{COMPACTION_SUFFIX}", str_of(m, "summary").unwrap_or(""));
                self.push(Message::at(Role::User, Origin::CompactSummary, vec![Block::text(text)], line, ts));
            }
            other => {
                let kind = format!("message role:{other}");
                self.s.diagnostics.unknown(&kind, line, &super::raw_json(m));
            }
        }
    }

    fn assistant(&mut self, m: &Value, line: u64, ts: Option<i64>) {
        let stop = str_of(m, "stopReason").unwrap_or("");
        let blocks = content_blocks(m.get("content"));
        let usage = m.get("usage").filter(|u| u.is_object()).map(|u| {
            let (usage, cache_in_input) = usage_of(u);
            if cache_in_input {
                self.cache_in_input.get_or_insert((line, 0)).1 += 1;
            }
            // OpenClaw: the part of `cacheWrite` written with 1-hour retention.
            if let Some(h1) = u.get("cacheWrite1h").and_then(Value::as_u64) {
                let h1 = h1.min(usage.cache_write);
                let w = self.s.meta.cache_writes_by_ttl.get_or_insert((0, 0));
                (w.0, w.1) = (w.0.saturating_add(usage.cache_write - h1), w.1.saturating_add(h1));
            }
            usage
        });
        // All-zero usage means the provider reported nothing, not "free".
        let usage = usage.filter(|u| u.prompt_tokens() + u.output > 0);
        let unsent = matches!(stop, "aborted" | "error");
        let mut origin = Origin::Model;
        if stop == "error" {
            origin = Origin::SyntheticError;
            let text = str_of(m, "errorMessage").unwrap_or("unknown error");
            self.s.errors.push(RecordedError {
                source_line: line,
                kind: errors::classify(text),
                message: super::truncate_str(text, MAX_ERROR_LEN).to_string(),
            });
        }
        if unsent && usage.is_none() {
            self.s.diagnostics.skip(if stop == "error" {
                "failed turn without usage"
            } else {
                "aborted turn without usage"
            });
            return;
        }
        // OpenClaw's `responseModel`: the model that answered when the one
        // asked for is an alias (OpenRouter `auto`); it is the one billed.
        let named = |k: &str| str_of(m, k).filter(|s| !s.is_empty());
        let model = named("responseModel")
            .or_else(|| named("model"))
            .map(str::to_string)
            .or_else(|| self.current_model.clone());
        if let Some(model) = &model {
            self.s.meta.add_model(model);
        }
        let index = self.push(Message { unsent, ..Message::at(Role::Assistant, origin, blocks, line, ts) });
        let response_id = str_of(m, "responseId").map(str::to_string);
        self.s.calls.push(Call { message_index: index, model, usage, timestamp: ts, response_id, fast: false });
    }

    /// The index of the first entry (not the header) with id `id`; the index
    /// is built on the first lookup (a scan per lookup would be quadratic in a
    /// file made of compactions or resets).
    fn entry_by_id(&mut self, entries: &[(u64, Value)], id: &str) -> Option<usize> {
        let ids = self.first_by_id.get_or_insert_with(|| {
            let mut ids = HashMap::new();
            for (i, (_, e)) in entries.iter().enumerate() {
                if let (Some(id), false) = (str_of(e, "id"), str_of(e, "type") == Some("session")) {
                    ids.entry(id.to_string()).or_insert(i);
                }
            }
            ids
        });
        ids.get(id).copied()
    }

    fn compaction(&mut self, entries: &[(u64, Value)], v: &Value, line: u64, ts: Option<i64>) {
        let summary = str_of(v, "summary").unwrap_or("");
        let at = self.s.messages.len();
        // Which entry the kept messages start from: v1 index, v2+ id.
        let first_kept = if let Some(idx) = v.get("firstKeptEntryIndex").and_then(Value::as_u64) {
            usize::try_from(idx).ok().filter(|i| *i < entries.len())
        } else if let Some(id) = str_of(v, "firstKeptEntryId") {
            self.entry_by_id(entries, id)
        } else {
            None
        };
        let kept_start = first_kept.and_then(|i| self.entry_msg.get(i).copied().flatten());
        let kept = match kept_start {
            Some(k) if k <= at => k..at,
            _ => {
                let p = self.s.source_path.clone();
                self.s.diagnostics.warn(
                    &p,
                    line,
                    "compaction's first kept entry is not an earlier entry of this conversation: nothing kept",
                );
                at..at
            }
        };
        let text = format!("{COMPACTION_PREFIX}{summary}{COMPACTION_SUFFIX}");
        let index = self.push(Message::at(Role::User, Origin::CompactSummary, vec![Block::text(text)], line, ts));
        let trigger = (v.get("fromHook").and_then(Value::as_bool) == Some(true)).then(|| "extension".to_string());
        let floor = kept.start;
        self.s.recorded_compactions.push(RecordedCompaction {
            kind: CompactionKind::PiCompaction,
            source_line: line,
            inserted: index..index + 1,
            kept,
            head: 0..0,
            tokens_before: v.get("tokensBefore").and_then(Value::as_u64).map(super::clamp_tokens),
            trigger,
        });
        self.cache_ttl_compacted(entries, floor, line);
    }
}

/// pi content: a string or an array of `text`, `thinking`, `toolCall`, `image`.
fn content_blocks(content: Option<&Value>) -> Vec<Block> {
    match content {
        Some(Value::String(s)) if !s.is_empty() => vec![Block::text(s.as_str())],
        Some(Value::Array(parts)) => parts.iter().map(block).collect(),
        _ => Vec::new(),
    }
}

fn block(p: &Value) -> Block {
    match str_of(p, "type").unwrap_or("") {
        "text" => Block::text(str_of(p, "text").unwrap_or("")),
        "thinking" => Block::Thinking {
            text: str_of(p, "thinking").unwrap_or("").to_string(),
            opaque_len: str_of(p, "thinkingSignature").map_or(0, str::len),
        },
        "toolCall" => Block::ToolUse {
            id: str_of(p, "id").unwrap_or("").to_string(),
            name: str_of(p, "name").unwrap_or("").to_string(),
            input: match p.get("arguments") {
                Some(Value::String(s)) => super::parse_json_str(s).unwrap_or_else(|_| Value::String(s.clone())),
                Some(a) => a.clone(),
                None => Value::Object(Default::default()),
            },
        },
        "image" => Block::Image {
            media_type: str_of(p, "mimeType").unwrap_or("image").to_string(),
            bytes: str_of(p, "data").map_or(0, str::len),
        },
        _ => Block::Other { raw: p.clone() },
    }
}

/// The text pi puts in the context for a `!cmd` execution (messages.ts
/// `bashExecutionToText`), so token estimates see what the model saw.
fn bash_text(m: &Value) -> String {
    let mut text = format!("Ran `{}`\n", str_of(m, "command").unwrap_or(""));
    match str_of(m, "output").filter(|o| !o.is_empty()) {
        Some(out) => {
            text.push_str("```\n");
            text.push_str(out);
            text.push_str("\n```");
        }
        None => text.push_str("(no output)"),
    }
    if m.get("cancelled").and_then(Value::as_bool) == Some(true) {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m.get("exitCode").and_then(Value::as_i64).filter(|c| *c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if m.get("truncated").and_then(Value::as_bool) == Some(true)
        && let Some(p) = str_of(m, "fullOutputPath")
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {p}]"));
    }
    text
}

/// When an entry was made: its own time, or its message's when that is
/// earlier (a v1 branch rewrites the entries it copies with the time of the
/// copy; each message keeps the time, in milliseconds, it was made at).
fn made_at(entry: &Value) -> Option<i64> {
    let own = entry.get("timestamp").and_then(time::parse_value);
    let message = entry.get("message").and_then(|m| m.get("timestamp")).and_then(time::parse_value);
    own.into_iter().chain(message).min()
}

/// pi's `usage {input, output, cacheRead, cacheWrite, totalTokens}`, and
/// whether its `input` held the cached tokens. pi-ai reports `input` without
/// them, but its Google providers until March 2026 (`google.ts`,
/// `google-vertex.ts`) reported Gemini's `promptTokenCount`, cached tokens
/// included, beside `totalTokens` = `totalTokenCount`. The total tells them
/// apart: a total that counts the cache read once, inside `input`, is one.
fn usage_of(u: &Value) -> (Usage, bool) {
    let n = |k: &str| u64_of(u.get(k));
    let (input, output, read, write) = (n("input"), n("output"), n("cacheRead"), n("cacheWrite"));
    let inside = read > 0
        && input >= read
        && u.get("totalTokens").is_some()
        && n("totalTokens") == input.saturating_add(output).saturating_add(write);
    let usage = Usage {
        uncached_input: if inside { input - read } else { input },
        cache_read: read,
        cache_write: write,
        output,
        reasoning: 0,
        provenance: UsageProvenance::Pi,
    };
    (usage, inside)
}

#[path = "pi_openclaw.rs"]
mod openclaw;

#[path = "pi_cache_ttl.rs"]
mod cache_ttl;

#[cfg(test)]
#[path = "pi_tests.rs"]
pub(crate) mod tests;
