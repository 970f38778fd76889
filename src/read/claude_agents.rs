//! Sub-agent sessions: naming agent files, linking them to their parents across
//! files, filling their metadata, and dropping the responses they replay.

use super::AGENT_TOOLS;
use crate::model::{Block, Format, Role, Session};
use foldhash::{HashMap, HashMapExt as _, HashSet};
use serde_json::Value;
// std's set, for the public `drop_replayed_responses` (its callers build it).
use std::collections::HashSet as StdHashSet;
use std::path::Path;

/// Link sub-agent sessions read from separate files to their parents, and drop the
/// responses a sub-agent file replays from its parent (`/btw` asides copy the
/// parent's messages under the same `message.id`; ccusage #913).
pub fn link_across_files(sessions: &mut [Session]) {
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, s) in sessions.iter().enumerate() {
        index.entry(s.id.clone()).or_insert(i);
    }
    // Per parent: the sub-agent ids it lists (a set, so that thousands of agent
    // files of one session stay linear) and its agent prompts, built once.
    let mut listed: HashMap<usize, HashSet<String>> = HashMap::new();
    let mut prompts: HashMap<usize, AgentPrompts> = HashMap::new();
    for i in 0..sessions.len() {
        let Some(parent) = sessions[i].parent.clone() else { continue };
        let Some(&pi) = index.get(&parent) else { continue };
        if pi == i {
            continue;
        }
        let child_id = sessions[i].id.clone();
        let known = listed.entry(pi).or_insert_with(|| sessions[pi].subagents.iter().cloned().collect());
        if known.insert(child_id.clone()) {
            sessions[pi].subagents.push(child_id);
        }
        if sessions[i].meta.agent_type.is_none() && sessions[i].format == Format::ClaudeCode {
            let p = prompts.entry(pi).or_insert_with(|| agent_prompts(&sessions[pi]));
            fill_agent_meta(p, &mut sessions[i]);
        }
    }

    let owned: StdHashSet<String> = sessions.iter().flat_map(|s| owned_response_ids(s).map(str::to_string)).collect();
    for s in sessions.iter_mut() {
        drop_replayed_responses(s, &owned);
    }
}

/// A Claude Code session linked to a parent (inline sidechain or sub-agent file):
/// it may replay responses its parent owns (see [`drop_replayed_responses`]).
pub fn is_linked_subagent(s: &Session) -> bool {
    s.parent.is_some() && s.format == Format::ClaudeCode
}

/// The response ids a session owns: a response id belongs to the top-level
/// Claude Code session that recorded it; a sub-agent copy of it is a replay.
pub fn owned_response_ids(s: &Session) -> impl Iterator<Item = &str> {
    let top = s.parent.is_none() && s.format == Format::ClaudeCode;
    s.calls.iter().filter(move |_| top).filter_map(|c| c.response_id.as_deref())
}

/// Drop from a linked sub-agent session the responses that `owned` (the ids of
/// every top-level session, [`owned_response_ids`]) says it replays. Other
/// sessions are left alone.
pub fn drop_replayed_responses(s: &mut Session, owned: &StdHashSet<String>) {
    if !owned.is_empty() && is_linked_subagent(s) {
        drop_replayed(s, owned);
    }
}

/// A sub-agent file by its name (`agent-*.jsonl`): its sessions are linked to a
/// parent read from another file.
pub fn is_agent_file(path: &Path) -> bool {
    agent_file_id(path).is_some()
}

/// Remove from a sub-agent session the responses (and the context around them) it
/// replays from its parent: the assistant messages whose response id the parent
/// owns, the tool results answering them, and every non-assistant message before
/// the last replayed response (the copied parent context).
pub(super) fn drop_replayed(s: &mut Session, owned: &StdHashSet<String>) {
    let dup: HashSet<usize> = s
        .calls
        .iter()
        .filter(|c| c.response_id.as_ref().is_some_and(|id| owned.contains(id)))
        .map(|c| c.message_index)
        .collect();
    let Some(&last) = dup.iter().max() else { return };
    let dropped_uses: HashSet<String> = dup
        .iter()
        .filter_map(|&i| s.messages.get(i))
        .flat_map(|m| m.tool_uses().map(|(id, _, _)| id.to_string()))
        .collect();
    let keep: Vec<bool> = s
        .messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            if dup.contains(&i) || (i < last && m.role != Role::Assistant) {
                return false;
            }
            let answers_dropped = m.has_tool_results()
                && m.blocks.iter().all(|b| match b {
                    Block::ToolResult { tool_use_id, .. } => dropped_uses.contains(tool_use_id),
                    _ => true,
                });
            !answers_dropped
        })
        .collect();
    // new_index[i] = number of kept messages before i.
    let mut new_index = Vec::with_capacity(keep.len() + 1);
    let mut n = 0usize;
    for k in &keep {
        new_index.push(n);
        n += usize::from(*k);
    }
    new_index.push(n);
    let remap = |r: &std::ops::Range<usize>| {
        let at = |x: usize| new_index.get(x).copied().unwrap_or(n);
        at(r.start)..at(r.end).max(at(r.start))
    };
    let dropped_calls = s.calls.iter().filter(|c| !keep.get(c.message_index).copied().unwrap_or(true)).count();
    let dropped_messages = keep.iter().filter(|k| !**k).count();
    s.calls.retain(|c| keep.get(c.message_index).copied().unwrap_or(true));
    for c in &mut s.calls {
        c.message_index = new_index.get(c.message_index).copied().unwrap_or(n);
    }
    for c in &mut s.recorded_compactions {
        c.inserted = remap(&c.inserted);
        c.kept = remap(&c.kept);
    }
    for c in &mut s.recorded_clearings {
        c.at = new_index.get(c.at).copied().unwrap_or(n);
        c.blocks.retain(|b| keep.get(b.message).copied().unwrap_or(true));
        c.blocks.iter_mut().for_each(|b| b.message = new_index.get(b.message).copied().unwrap_or(n));
    }
    s.recorded_clearings.retain(|c| !c.blocks.is_empty());
    let mut k = keep.iter();
    s.messages.retain(|_| k.next().copied().unwrap_or(true));
    for _ in 0..dropped_calls {
        s.diagnostics.skip("replayed-response");
    }
    for _ in dropped_calls..dropped_messages {
        s.diagnostics.skip("replayed-message");
    }
}

/// `agent-ID.jsonl` → `ID` (also `aside_question-…` for `/btw` asides).
pub(super) fn agent_file_id(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let id = name.strip_prefix("agent-")?.strip_suffix(".jsonl")?;
    (!id.is_empty()).then(|| id.to_string())
}

/// `<session>/subagents/agent-X.jsonl` → `<session>`.
pub(super) fn subagents_dir_parent(path: &Path) -> Option<String> {
    let dir = path.parent()?;
    if dir.file_name()? != "subagents" {
        return None;
    }
    Some(dir.parent()?.file_name()?.to_str()?.to_string())
}

/// The parent's file of a sub-agent file, where the parent's session is read
/// from: `<project>/<session>.jsonl`, the session named by the folder
/// (`<project>/<session>/subagents/agent-X.jsonl`) or, for an agent file kept
/// beside its parent, by the first `sessionId` it records (read from its
/// first MiB). `None` when neither names one.
pub(super) fn parent_file(path: &Path) -> Option<std::path::PathBuf> {
    agent_file_id(path)?;
    if let Some(session) = subagents_dir_parent(path) {
        let project = path.parent()?.parent()?.parent()?;
        return Some(project.join(format!("{session}.jsonl")));
    }
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path).ok()?.take(1 << 20).read_to_end(&mut head).ok()?;
    let session = head.split(|&b| b == b'\n').find_map(|line| {
        let v: serde_json::Value = crate::read::parse_json(line).ok()?;
        let id = v.get("sessionId")?.as_str()?;
        // A file name, never a path.
        (!id.is_empty() && !id.contains(['/', '\\']) && id != "." && id != "..").then(|| id.to_string())
    })?;
    Some(path.parent()?.join(format!("{session}.jsonl")))
}

/// `agent-X.meta.json` next to a sub-agent file: `{"agentType", "description"}`.
pub(super) fn read_meta_sidecar(path: &Path, s: &mut Session) {
    let Some(stem) = path.file_stem().and_then(|n| n.to_str()) else { return };
    let meta_path = path.with_file_name(format!("{stem}.meta.json"));
    let data = match crate::read::read_regular_file(&meta_path) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            s.diagnostics.warn(&meta_path, 0, format!("cannot read sub-agent metadata: {e}"));
            return;
        }
    };
    match crate::read::parse_json::<Value>(&data) {
        Ok(v) => {
            let get = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
            s.meta.agent_type = get("agentType").or(s.meta.agent_type.take());
            s.meta.description = get("description").or(s.meta.description.take());
        }
        Err(e) => s.diagnostics.warn(&meta_path, 0, format!("malformed sub-agent metadata: {e}")),
    }
}

/// A parent's `Task`/`Agent` calls by prompt: (`subagent_type`, `description`) of
/// the first call with that prompt.
pub(super) type AgentPrompts = HashMap<String, (Option<String>, Option<String>)>;

/// Index the parent's agent calls once: matching each sub-agent against every
/// call would be quadratic in a file with thousands of both.
pub(super) fn agent_prompts(parent: &Session) -> AgentPrompts {
    let mut out = AgentPrompts::new();
    for (_, name, input) in parent.messages.iter().flat_map(|m| m.tool_uses()) {
        if !AGENT_TOOLS.contains(&name) {
            continue;
        }
        let Some(prompt) = input.get("prompt").and_then(Value::as_str) else { continue };
        if !out.contains_key(prompt) {
            let get = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
            out.insert(prompt.to_string(), (get("subagent_type"), get("description")));
        }
    }
    out
}

/// Fill a sub-agent's `agent_type`/`description` from the parent's `Task`/`Agent`
/// call whose prompt is the sub-agent's first user message (older layouts have no
/// `.meta.json`).
pub(super) fn fill_agent_meta(prompts: &AgentPrompts, child: &mut Session) {
    if child.meta.agent_type.is_some() && child.meta.description.is_some() {
        return;
    }
    let Some(first) = child.messages.iter().find(|m| m.role == Role::User) else { return };
    let prompt: String = first
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    if prompt.is_empty() {
        return;
    }
    if let Some((agent_type, description)) = prompts.get(&prompt) {
        if child.meta.agent_type.is_none() {
            child.meta.agent_type = agent_type.clone();
        }
        if child.meta.description.is_none() {
            child.meta.description = description.clone();
        }
    }
}
