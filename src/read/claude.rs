//! Reader for Claude Code session JSONL (`~/.claude/projects`), log-formats.md §1.
//!
//! What the on-disk format forces on us, and how this reader answers it:
//! - One API response is written as several lines (one per content block) sharing
//!   `message.id`; the usage is repeated on each, with a partial `output_tokens` on
//!   the early ones. Lines are merged into one assistant message and one [`Call`]
//!   whose usage takes the largest value of each field.
//! - Conversation order is the `uuid`/`parentUuid` DAG, not file order: records are
//!   topologically sorted with file position as the tie-break, dangling parents
//!   start new roots and cycles are broken at their earliest record.
//! - A replayed `uuid` (resume) is kept once, at its first occurrence.
//! - Sub-agents come in three layouts: inline `isSidechain` records (one session per
//!   sidechain tree), flat `agent-*.jsonl`, and `<session>/subagents/agent-*.jsonl`
//!   with a `.meta.json` sidecar. All become sessions with id `PARENT#agent-ID`,
//!   linked to their parent here or in [`link_across_files`].
//! - `/btw` aside files replay parent responses under the same `message.id`;
//!   [`link_across_files`] drops the replayed copies so nothing is counted twice.
//! - `stats` count lines as they appear in the file (every block-line with usage,
//!   sidechains and replayed uuids included), which is how the corpus MANIFEST counts.

use super::format::{LogFormat, Signal};
use super::locations::{Home, Location};
use super::{errors, truncate_str};
use crate::model::{Block, Call, Format, Message, Origin, RecordedError, Role, Session, Usage};
use agents::{agent_file_id, agent_prompts, fill_agent_meta, read_meta_sidecar, subagents_dir_parent};
pub use agents::{drop_replayed_responses, is_agent_file, is_linked_subagent, link_across_files, owned_response_ids};
use rec::{RawBlock, Rec};
use serde_json::Value;
use tree::{dag_order, rewound, sidechain_groups};
// foldhash rather than SipHash for the maps of uuids, message ids and block
// hashes a session is built with (keys come from the file, but a map's seed is
// random per process, as SipHash's is).
use foldhash::{HashMap, HashMapExt as _, HashSet, HashSetExt as _};
use std::path::Path;

/// Longest API-error text kept in a [`RecordedError`].
const MAX_ERROR_LEN: usize = 2000;

/// Record kinds that carry no conversation content (Claude Code sends none of
/// them): counted in `diagnostics.skipped`, never turned into messages.
/// `summary` lines are session titles (not compactions) and feed `meta.title`;
/// a `task-summary` says what a running session is doing, for `claude ps`.
const BOOKKEEPING: &[&str] = &[
    "task-summary",
    "tag",
    "agent-color",
    "mode",
    "worktree-state",
    "attribution-snapshot",
    "speculation-accept",
    "permission-mode",
    "file-history-snapshot",
    "last-prompt",
    "custom-title",
    "agent-name",
    "ai-title",
    "queue-operation",
    "progress",
    "pr-link",
    "agent-setting",
    "summary",
];

/// Tool names that start a sub-agent (`Task` up to 2.0, `Agent` in 2.1).
const AGENT_TOOLS: &[&str] = &["Task", "Agent"];

/// Claude Code in the format registry ([`super::format`]): the only format whose
/// sessions link across files (sub-agent files, `/btw` asides).
pub struct ClaudeCode;

impl LogFormat for ClaudeCode {
    fn id(&self) -> Format {
        Format::ClaudeCode
    }
    fn detect_record(&self, rec: &serde_json::Map<String, Value>) -> Signal {
        if (rec.contains_key("parentUuid") || rec.contains_key("uuid")) && rec.contains_key("sessionId") {
            Signal::Sure
        } else {
            Signal::No
        }
    }
    fn read(&self, path: &Path, data: &[u8]) -> Vec<Session> {
        read(path, data)
    }
    /// `~/.claude/projects`, or `projects` under `$CLAUDE_CONFIG_DIR`.
    fn default_locations(&self, home: &Home) -> Vec<Location> {
        vec![Location::new("Claude Code", home.var_or("CLAUDE_CONFIG_DIR", ".claude").join("projects"))]
    }
    /// A sub-agent's `*.meta.json`, the project's session index, the prompt
    /// history, a workflow's journal.
    fn is_sidecar(&self, name: &str) -> bool {
        name.ends_with(".meta.json") || matches!(name, "sessions-index.json" | "history.jsonl" | "journal.jsonl")
    }
    /// Tool outputs spilled to files, and file snapshots.
    fn is_skipped_dir(&self, name: &str) -> bool {
        matches!(name, "tool-results" | "file-history")
    }
    fn is_linked_file(&self, path: &Path) -> bool {
        is_agent_file(path)
    }
    fn is_linked_session(&self, s: &Session) -> bool {
        is_linked_subagent(s)
    }
    fn owned_keys(&self, s: &Session, out: &mut Vec<String>) {
        out.extend(owned_response_ids(s).map(str::to_string));
    }
    fn drop_replayed(&self, s: &mut Session, owned: &std::collections::HashSet<String>) {
        drop_replayed_responses(s, owned);
    }
    fn link_across_files(&self, sessions: &mut [Session]) {
        link_across_files(sessions);
    }
    fn shard_group(&self, path: &Path) -> Option<std::path::PathBuf> {
        agents::parent_file(path)
    }
    /// `<session id>.jsonl`: the session a fork names as its parent.
    fn path_keys(&self, path: &Path, out: &mut Vec<String>) {
        if let Some(id) = named_session_id(path) {
            out.push(format!("session:{id}"));
        }
    }
}

/// Read one Claude Code JSONL file: the file's own session first, then one session
/// per inline sidechain, in order of first appearance.
pub fn read(path: &Path, data: &[u8]) -> Vec<Session> {
    read_with(path, data, true)
}

/// [`read`], with the typed fast path of [`rec::Rec`] on or off (off: every line
/// as a `serde_json::Value`, the reference the fast path is tested against).
fn read_with(path: &Path, data: &[u8], typed: bool) -> Vec<Session> {
    // A record a line: sized from the line count (a fast count) rather than
    // grown, which copied a big session's records over and over; at most 16 K
    // records, so a file of empty or broken lines reserves a few MB at most
    // (a longer session grows from there).
    let lines = (memchr::memchr_iter(b'\n', data).count() + 1).min(1 << 14);
    let mut recs: Vec<Rec> = Vec::with_capacity(lines);
    // Raw byte length of each record, for the per-session byte counts.
    let mut rec_bytes: Vec<u64> = Vec::with_capacity(lines);
    // Reasons of bad lines past what the diagnostics list are only counted.
    let mut bad: Vec<(u64, String)> = Vec::new();
    let mut bad_unlisted = 0u64;
    for l in super::raw_lines(data) {
        let reason = match Rec::parse(l.number, l.text, typed) {
            Ok(r) => {
                recs.push(r);
                rec_bytes.push(l.raw_len);
                continue;
            }
            Err(reason) => reason,
        };
        if bad.len() < crate::model::MAX_LISTED_WARNINGS {
            bad.push((l.number, reason));
        } else {
            bad_unlisted += 1;
        }
    }

    let agent_file = agent_file_id(path);
    let first_session_id = recs.iter().find_map(|r| r.f.session_id.as_deref().filter(|s| !s.is_empty()));
    let (main_id, main_parent) = match &agent_file {
        Some(agent_id) => {
            // Sub-agent files carry the parent's sessionId; the nested layout also
            // names the parent in the directory (`<session>/subagents/`).
            let parent = first_session_id.map(str::to_string).or_else(|| subagents_dir_parent(path));
            match parent {
                Some(p) => (format!("{p}#agent-{agent_id}"), Some(p)),
                None => (super::stem_id(path), None),
            }
        }
        // The file's name is its session's id (Claude Code resumes a session
        // by it); records a resume copied into it keep the id of the session
        // they came from.
        None => {
            let id = named_session_id(path).or(first_session_id).map(str::to_string);
            (id.unwrap_or_else(|| super::stem_id(path)), None)
        }
    };
    // A sub-agent file's records carry its parent's id: none is a copy for it.
    let own_id = agent_file.is_none().then_some(main_id.as_str());

    // Partition records: group 0 is the file's own session; in a main file every
    // inline sidechain tree is its own group.
    let (groups, agent_ids) =
        if agent_file.is_some() { (vec![0; recs.len()], Vec::new()) } else { sidechain_groups(&recs) };
    let group_count = agent_ids.len() + 1;
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); group_count];
    for (i, g) in groups.iter().enumerate() {
        members[*g].push(i);
    }

    let titles = file_titles(&recs, &groups);
    let mut sessions = Vec::with_capacity(group_count);
    let mut attributed_bytes = 0u64;
    for (g, idx) in members.iter().enumerate() {
        let id = match g.checked_sub(1).and_then(|k| agent_ids.get(k)) {
            Some(agent) => format!("{main_id}#agent-{agent}"),
            None => main_id.clone(),
        };
        let mut b = Builder::new(path, id, own_id);
        for &i in idx {
            let r = &recs[i];
            b.s.stats.records += 1;
            b.s.stats.usage_records += u64::from(r.carries_usage());
            let bytes = rec_bytes.get(i).copied().unwrap_or(0);
            b.s.stats.bytes += bytes;
            if g != 0 {
                attributed_bytes += bytes;
            }
        }
        if g == 0 {
            for (line, reason) in &bad {
                b.s.stats.records += 1;
                b.s.diagnostics.bad_line(path, *line, reason.clone());
            }
            b.s.stats.records += bad_unlisted;
            b.s.diagnostics.bad_lines += bad_unlisted;
            b.s.diagnostics.unlisted += bad_unlisted;
            b.s.parent = main_parent.clone();
        } else {
            b.s.parent = Some(main_id.clone());
        }
        b.s.meta.title = titles.get(&g).cloned();
        b.build(&mut recs, idx);
        sessions.push(b.finish());
    }
    // Blank lines, the BOM and malformed lines belong to the file's own session.
    if let Some(main) = sessions.first_mut() {
        main.stats.bytes = (data.len() as u64).saturating_sub(attributed_bytes);
    }

    if agent_file.is_some()
        && let Some(main) = sessions.first_mut()
    {
        read_meta_sidecar(path, main);
    }
    if let Some((main, rest)) = sessions.split_first_mut() {
        let prompts = agent_prompts(main);
        for side in rest.iter_mut() {
            fill_agent_meta(&prompts, side);
        }
        main.subagents.extend(rest.iter().map(|side| side.id.clone()));
    }
    sessions
}

/// Session titles per group. A `custom-title` (set by the user) wins over a
/// `summary` line, which wins over an `ai-title`. A `summary` titles the session
/// holding its `leafUuid` (summaries are written into whichever file was open, and
/// often name other sessions); one without `leafUuid` titles the file's session.
fn file_titles(recs: &[Rec], groups: &[usize]) -> HashMap<usize, String> {
    // Built on the first `summary` line that needs it: most files have none.
    let mut uuid_group: Option<HashMap<&str, usize>> = None;
    let mut custom: HashMap<usize, String> = HashMap::new();
    let mut summary: HashMap<usize, String> = HashMap::new();
    let mut ai: HashMap<usize, String> = HashMap::new();
    for (r, &g) in recs.iter().zip(groups) {
        match r.kind() {
            "custom-title" => {
                if let Some(t) = r.f.custom_title.as_deref() {
                    custom.insert(g, t.to_string());
                }
            }
            "ai-title" => {
                if let Some(t) = r.f.ai_title.as_deref() {
                    ai.insert(g, t.to_string());
                }
            }
            "summary" => {
                let Some(t) = r.f.summary.as_deref() else { continue };
                let target = match r.f.leaf_uuid.as_deref() {
                    Some(leaf) => uuid_group
                        .get_or_insert_with(|| {
                            recs.iter().zip(groups).filter_map(|(r, g)| r.uuid().map(|u| (u, *g))).collect()
                        })
                        .get(leaf)
                        .copied(),
                    None => Some(g),
                };
                if let Some(tg) = target {
                    summary.insert(tg, t.to_string());
                }
            }
            _ => {}
        }
    }
    for (g, t) in summary {
        custom.entry(g).or_insert(t);
    }
    for (g, t) in ai {
        custom.entry(g).or_insert(t);
    }
    custom
}

struct Builder<'p> {
    path: &'p Path,
    s: Session,
    /// The id of the file's own session: a record under another id was copied
    /// from that session (None: a sub-agent file, whose records carry its
    /// parent's).
    own_id: Option<&'p str>,
    /// `message.id` → index of the merged assistant message.
    responses: HashMap<String, usize>,
    /// Assistant message index → index of its call.
    call_of: HashMap<usize, usize>,
    /// (assistant message index, block hash) of the blocks already merged, so a
    /// re-written block-line is not appended twice. One set for the session: a
    /// set per message cost an allocation and its growth per response.
    block_hashes: HashSet<(usize, u64)>,
    /// Record uuid → index of the message built from it.
    uuid_msg: HashMap<String, usize>,
    /// Record uuid → index of the next message, for the records Claude Code
    /// never sends (attachments, API-error placeholders: no message of their
    /// own), which a compaction's preserved segment may start or end at.
    unsent_at: HashMap<String, usize>,
    pending: Option<PendingCompaction>,
    /// (compaction index, its boundary's line, what it preserved) resolved once
    /// all messages exist.
    preserved: Vec<(usize, u64, Preserved)>,
    error_ids: HashSet<String>,
    /// Every message so far came from a record a branch copied
    /// ([`Rec::is_copied`]): they are the session's inherited history.
    copying: bool,
    /// Assistant message index → the advisor's requests inside its response
    /// (the longest list its lines carry).
    advisors: HashMap<usize, Vec<rec::Advisor>>,
    /// The tool results microcompacts cleared, and where to find them.
    clearings: Clearings,
    /// What Claude Code sent in place of a tool result (`content-replacement`).
    replacements: Replacements,
}

impl<'p> Builder<'p> {
    fn new(path: &'p Path, id: String, own_id: Option<&'p str>) -> Builder<'p> {
        Builder {
            path,
            s: Session::new(id, Format::ClaudeCode, path),
            own_id,
            responses: HashMap::new(),
            call_of: HashMap::new(),
            block_hashes: HashSet::new(),
            uuid_msg: HashMap::new(),
            unsent_at: HashMap::new(),
            pending: None,
            preserved: Vec::new(),
            error_ids: HashSet::new(),
            copying: true,
            advisors: HashMap::new(),
            clearings: Clearings::default(),
            replacements: Replacements::default(),
        }
    }

    /// Build the session from the records `idx` of `recs` (their content is moved
    /// into the messages).
    fn build(&mut self, recs: &mut [Rec], idx: &[usize]) {
        // Replayed uuids (resume) are kept once, at their first occurrence.
        let mut unique: Vec<usize> = Vec::with_capacity(idx.len());
        // Sized up front: growing these maps record by record rehashed them
        // again and again.
        let mut seen: HashSet<&str> = HashSet::with_capacity(idx.len());
        self.uuid_msg.reserve(idx.len());
        for &i in idx {
            if let Some(u) = recs[i].uuid()
                && !seen.insert(u)
            {
                self.s.diagnostics.skip("duplicate-uuid");
                continue;
            }
            unique.push(i);
        }
        drop(seen);
        for &i in &unique {
            let r = &recs[i];
            if self.s.meta.cwd.is_none() {
                self.s.meta.cwd = r.f.cwd.as_deref().filter(|c| !c.is_empty()).map(str::to_string);
            }
            if let Some(v) = r.f.version.as_deref() {
                self.s.meta.add_version(v);
            }
        }
        let view: Vec<&Rec> = unique.iter().map(|&i| &recs[i]).collect();
        let order = dag_order(&view, &mut self.s, self.path);
        let gone = rewound(&view, is_prompt);
        let records = gone.iter().filter(|&&g| g).count();
        if records > 0 {
            let responses: HashSet<&str> = (0..view.len())
                .filter(|&k| gone[k] && view[k].kind() == "assistant")
                .filter_map(|k| view[k].msg.as_ref()?.id.as_deref())
                .collect();
            let calls = responses.len();
            self.s.diagnostics.skip_n("rewound-from record", records as u64);
            let message = format!(
                "rewound conversation: the {records} record(s) and {calls} response(s) of the branches it was \
rewound from are left out (they were sent, but never again part of the context)"
            );
            self.s.diagnostics.warn(self.path, 0, message);
        }
        drop(view);
        for k in order.into_iter().filter(|&k| !gone[k]) {
            self.record(&mut recs[unique[k]]);
        }
    }

    fn record(&mut self, r: &mut Rec) {
        match r.kind() {
            "assistant" | "user" if r.f.is_virtual == Some(true) => self.virtual_message(r),
            "assistant" => self.assistant(r),
            "user" => self.user(r),
            "attachment" => self.attachment(r),
            "system" => match r.f.subtype.as_deref() {
                Some("compact_boundary") => self.boundary(r),
                Some("microcompact_boundary") => self.microcompact(r),
                Some("local_command") => self.local_command(r),
                Some(sub) => self.s.diagnostics.skip(&format!("system/{sub}")),
                None => self.s.diagnostics.skip("system"),
            },
            "content-replacement" => self.content_replacement(r),
            k if BOOKKEEPING.contains(&k) => self.s.diagnostics.skip(k),
            k => {
                let kind = k.to_string();
                self.s.diagnostics.unknown(&kind, r.line, &super::codex::raw_text(r.raw));
            }
        }
    }

    /// The session record `r` was copied from, if it was: a branch (`/branch`)
    /// marks its copies `forkedFrom`; a resume by versions that start a new
    /// file (1.0 to 2.1 at least) copies the history there under the id of
    /// the session it came from.
    fn copied_from<'r>(&self, r: &'r Rec) -> Option<&'r str> {
        r.copied_from().or_else(|| {
            let id = r.f.session_id.as_deref().filter(|id| !id.is_empty())?;
            self.own_id.is_some_and(|own| own != id).then_some(id)
        })
    }

    fn is_copied(&self, r: &Rec) -> bool {
        r.is_copied() || self.copied_from(r).is_some()
    }

    fn push(&mut self, r: &Rec, role: Role, origin: Origin, blocks: Vec<Block>) -> usize {
        let idx = self.s.messages.len();
        if self.copying {
            if let Some(from) = self.copied_from(r) {
                self.s.inherited = idx + 1;
                // The last copied record names the session this one was made
                // from (a resume of a resume copies both sessions' records).
                if self.s.forked_from.as_deref() != Some(from) {
                    self.s.forked_from = Some(from.to_string());
                }
            } else {
                self.copying = false;
            }
        }
        self.s.messages.push(Message::at(role, origin, blocks, r.line, r.f.timestamp.0));
        if let Some(u) = r.uuid() {
            self.uuid_msg.insert(u.to_string(), idx);
        }
        idx
    }

    fn assistant(&mut self, r: &mut Rec) {
        let raw_blocks = r.take_content().into_raw_blocks();
        let r = &*r;
        let Some(msg) = &r.msg else {
            self.s.diagnostics.bad_line(self.path, r.line, "assistant record without a message object");
            return;
        };
        let model = msg.model.as_deref();
        let response_id = msg.id.as_deref().filter(|s| !s.is_empty());
        if model == Some("<synthetic>") || r.f.is_api_error_message.unwrap_or(false) {
            let blocks = raw_blocks.into_iter().map(RawBlock::into_block).collect();
            self.synthetic(r, response_id, blocks);
            return;
        }
        if let Some(m) = model.filter(|_| !self.is_copied(r)) {
            self.s.meta.add_model(m);
        }
        let usage = msg.usage;

        if let Some(id) = response_id
            && let Some(&mi) = self.responses.get(id)
        {
            // Another block-line of a response already started: append its blocks
            // and keep the largest usage (early lines carry partial output_tokens).
            let mut new_blocks = Vec::new();
            for v in raw_blocks {
                if self.block_hashes.insert((mi, v.hash())) {
                    new_blocks.push(v.into_block());
                }
            }
            if let Some(m) = self.s.messages.get_mut(mi) {
                m.blocks.extend(new_blocks);
                m.source_line = m.source_line.min(r.line);
                m.timestamp = m.timestamp.or(r.f.timestamp.0);
            }
            self.served_in(mi, r);
            if let Some(call) = self.call_of.get(&mi).and_then(|&ci| self.s.calls.get_mut(ci)) {
                call.usage = merge_usage(call.usage, usage);
                call.model = call.model.take().or(model.map(str::to_string));
                call.timestamp = call.timestamp.or(r.f.timestamp.0);
            }
            if let Some(u) = r.uuid() {
                self.uuid_msg.insert(u.to_string(), mi);
            }
            return;
        }

        // A response's first line: its cache writes, counted once.
        if let Some((m5, h1)) = msg.writes_by_ttl {
            let w = self.s.meta.cache_writes_by_ttl.get_or_insert((0, 0));
            (w.0, w.1) = (w.0.saturating_add(m5), w.1.saturating_add(h1));
        }
        let mi = self.s.messages.len();
        let mut blocks = Vec::with_capacity(raw_blocks.len());
        for v in raw_blocks {
            if self.block_hashes.insert((mi, v.hash())) {
                blocks.push(v.into_block());
            }
        }
        let mi = self.push(r, Role::Assistant, Origin::Model, blocks);
        if let Some(id) = response_id {
            self.responses.insert(id.to_string(), mi);
        }
        self.call_of.insert(mi, self.s.calls.len());
        self.s.calls.push(Call {
            message_index: mi,
            model: model.map(str::to_string),
            usage,
            timestamp: r.f.timestamp.0,
            response_id: response_id.map(str::to_string),
            fast: false,
        });
        self.served_in(mi, r);
    }

    /// A `<synthetic>` assistant record: an API-error placeholder (recorded as an
    /// error, not a call: its zero usage is no request) or a harness notice such as
    /// "No response requested." (`isApiErrorMessage: false`).
    ///
    /// Claude Code never sends an error placeholder that carries both marks,
    /// `isApiErrorMessage: true` and the `<synthetic>` model
    /// (`normalizeMessagesForAPI` filters them): such a one is an error and no
    /// message, and where it stood is kept for the compactions that name it. An
    /// error without the flag (older versions) stays in the context, as before.
    fn synthetic(&mut self, r: &Rec, response_id: Option<&str>, blocks: Vec<Block>) {
        let text = crate::model::joined_text(&blocks);
        let is_error = match r.f.is_api_error_message {
            Some(flag) => flag,
            None => r.f.error.0.is_some() || text.starts_with("API Error"),
        };
        if !is_error {
            self.push(r, Role::Assistant, Origin::Injected, blocks);
            return;
        }
        // The same error record is sometimes written again under the same id.
        if let Some(id) = response_id
            && !self.error_ids.insert(id.to_string())
        {
            self.s.diagnostics.skip("duplicate-api-error");
            return;
        }
        // The `error` code (`rate_limit`) and HTTP status help when the text alone
        // is vague.
        let mut signal = text.clone().into_owned();
        if let Some(e) = r.f.error.0.as_ref().and_then(Value::as_str) {
            signal.push(' ');
            signal.push_str(e);
        }
        if let Some(status) = r.f.api_error_status {
            signal.push_str(&format!(" {status}"));
        }
        self.s.errors.push(RecordedError {
            source_line: r.line,
            kind: errors::classify(&signal),
            message: truncate_str(&text, MAX_ERROR_LEN).to_string(),
        });
        let unsent = r.f.is_api_error_message == Some(true)
            && r.msg.as_ref().and_then(|m| m.model.as_deref()) == Some("<synthetic>");
        if unsent {
            self.s.diagnostics.skip("assistant/api-error (not sent)");
            if let Some(u) = r.uuid() {
                self.unsent_at.insert(u.to_string(), self.s.messages.len());
            }
            return;
        }
        self.push(r, Role::Assistant, Origin::SyntheticError, blocks);
    }

    fn user(&mut self, r: &mut Rec) {
        let origin = user_origin(r);
        let content = r.take_content();
        let r = &*r;
        if r.msg.is_none() {
            self.s.diagnostics.bad_line(self.path, r.line, "user record without a message object");
            return;
        }
        let blocks = content.into_blocks();
        let origin =
            if origin == Origin::Human && is_local_command_output(&blocks) { Origin::Injected } else { origin };
        let idx = self.push(r, Role::User, origin, blocks);
        if origin == Origin::CompactSummary {
            self.summary_message(r, idx);
        }
    }

    /// Note what a line of response `mi` says of how it was served: the
    /// advisor's requests it lists, and fast mode (any of its lines says so).
    /// Not for a branch's copy: those are its parent's.
    fn served_in(&mut self, mi: usize, r: &Rec) {
        let Some(msg) = r.msg.as_ref().filter(|_| !self.is_copied(r)) else { return };
        if msg.fast
            && let Some(call) = self.call_of.get(&mi).and_then(|&ci| self.s.calls.get_mut(ci))
        {
            call.fast = true;
        }
        let listed = &msg.advisors;
        if listed.is_empty() {
            return;
        }
        let kept = self.advisors.entry(mi).or_default();
        if listed.len() > kept.len() {
            kept.clone_from(listed);
        }
    }

    /// Say what the advisor's requests used: they are on another model,
    /// outside every call's usage, and neither replayed nor priced.
    fn report_advisors(&mut self) {
        let all = || self.advisors.values().flatten();
        let n = all().count();
        if n == 0 {
            return;
        }
        let models: HashSet<&str> = all().map(|a| a.model.as_str()).collect();
        let prompt = all().fold(0u64, |t, a| t.saturating_add(a.prompt));
        let output = all().fold(0u64, |t, a| t.saturating_add(a.output));
        // The model is not named: a diagnostic never repeats what a log holds.
        let message = format!(
            "{n} advisor request(s) on {} other model(s) inside responses ({} input, {} output tokens): \
not in the calls' usage, not replayed, not priced",
            models.len(),
            crate::num::thousands(prompt),
            crate::num::thousands(output)
        );
        self.s.diagnostics.warn(self.path, 0, message);
    }

    fn finish(mut self) -> Session {
        self.replace_contents();
        self.finish_pending();
        self.resolve_preserved();
        self.report_advisors();
        self.s
    }
}

/// The session id a file's name gives (`<uuid>.jsonl`; a compressed log is
/// read and keyed under the name it had before).
fn named_session_id(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()?.strip_suffix(".jsonl").filter(|id| super::is_uuid(id))
}

/// Who wrote a user record, as far as its fields and content blocks say (a
/// local command's output, which only its text shows, aside).
fn user_origin(r: &Rec) -> Origin {
    if r.f.is_compact_summary.unwrap_or(false) {
        Origin::CompactSummary
    } else if r.holds_tool_result() {
        Origin::ToolResult
    } else if r.f.is_meta.unwrap_or(false) || !typed_by_a_person(&r.f) {
        Origin::Injected
    } else {
        Origin::Human
    }
}

/// A prompt of the conversation: a user record a person typed, not a tool's
/// result, a summary or a harness note.
fn is_prompt(r: &Rec) -> bool {
    r.kind() == "user" && r.f.is_virtual != Some(true) && user_origin(r) == Origin::Human
}

/// Whether a user record's text was written by a person, as far as Claude
/// Code 2.1 says: a background task's notice, another session's message or
/// a harness prompt carry an `origin.kind` other than `human` or a
/// `promptSource` of `system`. Older records say nothing and count as typed.
fn typed_by_a_person(f: &rec::Fields) -> bool {
    let origin = f.origin.as_ref().and_then(|o| o.kind.as_deref());
    origin.is_none_or(|k| k == "human") && f.prompt_source.as_deref() != Some("system")
}

/// `<local-command-stdout>` / `<local-command-stderr>` user text is the output of a
/// local slash command, `<bash-stdout>` / `<bash-stderr>` that of a `!` shell
/// command: written by the harness, not typed.
fn is_local_command_output(blocks: &[Block]) -> bool {
    const OUTPUTS: [&str; 4] = ["<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>", "<bash-stderr>"];
    matches!(blocks.first(), Some(Block::Text { text }) if OUTPUTS.iter().any(|o| text.starts_with(o)))
}

/// Usage of one response seen on several lines: input and cache fields repeat,
/// `output_tokens` grows; keep the largest of each, never the sum.
fn merge_usage(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Usage {
            uncached_input: a.uncached_input.max(b.uncached_input),
            cache_read: a.cache_read.max(b.cache_read),
            cache_write: a.cache_write.max(b.cache_write),
            output: a.output.max(b.output),
            reasoning: a.reasoning.max(b.reasoning),
            provenance: a.provenance,
        }),
        (a, b) => a.or(b),
    }
}

#[path = "claude_blocks.rs"]
mod blocks;
use blocks::{block_hash, block_hasher, content_blocks, convert_block, hash_json};

#[path = "claude_rec.rs"]
mod rec;

#[path = "claude_compact.rs"]
mod compact;
use compact::{Clearings, PendingCompaction, Preserved, Replacements};

#[path = "claude_agents.rs"]
mod agents;

#[path = "claude_tree.rs"]
mod tree;

#[path = "claude_injected.rs"]
mod injected;

#[path = "claude_attachments.rs"]
mod attachments;

#[cfg(test)]
#[path = "claude_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "claude_context_tests.rs"]
mod context_tests;

#[cfg(test)]
#[path = "claude_typed_tests.rs"]
mod typed_tests;

#[cfg(test)]
#[path = "claude_microcompact_tests.rs"]
mod microcompact_tests;

#[cfg(test)]
#[path = "claude_system_tests.rs"]
mod system_tests;

#[cfg(test)]
#[path = "claude_rewind_tests.rs"]
mod rewind_tests;
