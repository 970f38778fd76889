//! Reader for Gemini CLI chat recordings (log-formats.md §4): one JSON object
//! `{sessionId, projectHash, startTime, lastUpdated, messages[], summary?}`,
//! rewritten whole on every update, or (v0.39 on) a JSONL recording of the
//! same, folded into that object first (`gemini_jsonl.rs`).
//!
//! - `user` → human message; `gemini` → assistant message: `content` as text,
//!   `toolCalls[]` as tool uses. Its `thoughts` (a digest, `{subject,
//!   description}`) and any `thought` part are left out: Gemini CLI keeps the
//!   model's thoughts out of the history its requests are built from, so no
//!   request held them (counted in `sent_otherwise`). A tool call and its
//!   result live in the same element, so the
//!   results become a user-role message right after the assistant message, built
//!   from `result[].functionResponse.response.{output|error}`; `status` other than
//!   `success` (`error`, `cancelled`) is an error result.
//! - `tokens {input, output, cached, thoughts, tool, total}` maps to [`Usage`]
//!   (`UsageProvenance::Gemini`) as: `input` is `promptTokenCount`, which
//!   *includes* the cached tokens, so `uncached_input = input − cached + tool`
//!   (`tool` = `toolUsePromptTokenCount`, prompt tokens counted apart from
//!   `input`), `cache_read = cached`, no cache writes; `output` is
//!   `candidatesTokenCount`, which *excludes* thoughts, so
//!   `output = output + thoughts` and `reasoning = thoughts`, matching the other
//!   providers where reasoning is part of output (`total` = the sum of all).
//! - One call per `gemini` message. `error` messages are API errors recorded in
//!   `Session::errors`; `info`/`warning` are UI notices, never sent to the model.
//! - A compression (JSONL recordings): the messages it wrote in place of the
//!   earlier turns are a recorded compaction's inserted messages: the user
//!   message holding the `<state_snapshot>` (or acknowledged by the model's
//!   fixed reply) is its summary, the other user text is `Injected`, and its
//!   model turns are no calls.
//! - `source_line` is the 1-based index in `messages`; `stats.records` counts the
//!   elements of `messages` and `stats.usage_records` those with a `tokens` object.
//!
//! A file that is not valid JSON (a torn rewrite) yields one session with no
//! messages and a bad-line diagnostic, so the batch reports the problem instead of
//! silently dropping the file.

use super::format::{LogFormat, Signal, contains};
use super::gemini_jsonl;
use super::generic::{MAX_ERROR_LEN, str_of, u64_of};
use super::locations::{Home, Location};
use super::{errors, time};
use crate::model::{
    Block, Call, ClearedBlock, CompactionKind, Format, Message, Origin, RecordedClearing, RecordedCompaction,
    RecordedError, Role, Session, Usage, UsageProvenance,
};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::Path;

/// Gemini CLI sessions in the format registry ([`super::format`]).
pub struct Gemini;

impl LogFormat for Gemini {
    fn id(&self) -> Format {
        Format::Gemini
    }
    /// An object with `messages` and Gemini's keys, or messages typed the Gemini
    /// way (a `type` and no `role`).
    fn detect_document(&self, doc: &Value) -> bool {
        let Some(o) = doc.as_object() else { return false };
        let Some(msgs) = o.get("messages").and_then(Value::as_array) else { return false };
        o.contains_key("sessionId")
            || o.contains_key("projectHash")
            || msgs.iter().any(|m| {
                matches!(m.get("type").and_then(Value::as_str), Some("gemini" | "user" | "info" | "error"))
                    && m.get("role").is_none()
            })
    }
    fn detect_torn(&self, head: &[u8]) -> bool {
        head.first() == Some(&b'{')
            && (contains(head, "\"projectHash\"") || (contains(head, "\"sessionId\"") && contains(head, "\"gemini\"")))
    }
    /// A JSONL recording: its header, or its `$set` / `$rewindTo` lines.
    fn detect_record(&self, rec: &serde_json::Map<String, Value>) -> Signal {
        if rec.contains_key("sessionId") && rec.contains_key("projectHash") && !rec.contains_key("type") {
            return Signal::Sure;
        }
        if rec.len() == 1 && (rec.contains_key("$set") || rec.contains_key("$rewindTo")) {
            return Signal::Likely;
        }
        Signal::No
    }
    fn read(&self, path: &Path, data: &[u8]) -> Vec<Session> {
        read(path, data)
    }
    /// A project's prompt log.
    /// The prompt log, and the conversations `/chat save` keeps (another format).
    fn is_sidecar(&self, name: &str) -> bool {
        name == "logs.json" || (name.starts_with("checkpoint-") && name.ends_with(".json"))
    }
    /// `tmp` (one folder per project, its sessions in `chats`) under
    /// `~/.gemini`, or `$GEMINI_CLI_HOME/.gemini`.
    fn default_locations(&self, home: &Home) -> Vec<Location> {
        let base = home.var("GEMINI_CLI_HOME").unwrap_or_else(|| home.dir().to_path_buf());
        vec![Location::new("Gemini CLI", base.join(".gemini/tmp"))]
    }
    /// A recording next to the legacy `session-….json` it was resumed from:
    /// it opens with a copy of that file's messages ([`read_doc`]'s
    /// `migrated`), settled once the `.json` is known to be read or not.
    fn is_linked_file(&self, path: &Path) -> bool {
        legacy_of(path).is_some_and(|legacy| legacy.is_file())
    }
    /// The legacy `.json` file's shard, so that a split run settles the
    /// recording as one run does.
    fn shard_group(&self, path: &Path) -> Option<std::path::PathBuf> {
        legacy_of(path)
    }
}

/// The legacy `.json` a `session-….jsonl` recording continues, by name.
fn legacy_of(path: &Path) -> Option<std::path::PathBuf> {
    let name = path.file_name()?.to_str()?;
    (name.starts_with("session-") && name.ends_with(".jsonl")).then(|| path.with_extension("json"))
}

/// Read a Gemini CLI session file, a `.json` document or a JSONL recording
/// ([`gemini_jsonl`]). Never fails: problems become diagnostics.
pub fn read(path: &Path, data: &[u8]) -> Vec<Session> {
    let mut s = Session::new(super::stem_id(path), Format::Gemini, path);
    s.stats.bytes = data.len() as u64;
    let body = super::strip_bom(data);
    let whole = super::parse_line(body);
    if let Ok(doc) = &whole
        && doc.get("messages").is_some()
    {
        return read_doc(s, path, doc, None, &Folds::default());
    }
    match gemini_jsonl::fold(body) {
        Some(f) => {
            for (line, reason) in f.bad {
                s.diagnostics.bad_line(path, line, reason);
            }
            for (line, raw) in &f.unknown {
                s.diagnostics.unknown("recording line", *line, &super::raw_json(raw));
            }
            let folds = Folds { compressions: f.compressions, migrated: f.migrated, maskings: f.maskings };
            read_doc(s, path, &f.doc, Some(&f.lines), &folds)
        }
        None => {
            let reason = whole.err().unwrap_or_else(|| "no `messages` array".to_string());
            s.diagnostics.bad_line(path, 0, format!("session file is not valid JSON: {reason}"));
            vec![s]
        }
    }
}

/// Read the session document `doc`; `lines[i]` is the file line of message
/// `i` when the document was folded from a recording (else its 1-based index).
/// What folding a JSONL recording found beyond its messages (nothing for a
/// `.json` document).
#[derive(Default)]
struct Folds {
    /// The messages each compression inserted (`(line, message indices)`):
    /// their model turns are no calls, their summary is the compaction's,
    /// their other user text was not typed then.
    compressions: Vec<(u64, Range<usize>)>,
    /// The first messages a resume copied from the legacy `.json` file of the
    /// same name, the session's inherited history ([`Session::inherited`])
    /// when that file is read too.
    migrated: usize,
    /// Tool outputs masked after they were recorded whole.
    maskings: Vec<gemini_jsonl::Masking>,
}

fn read_doc(mut s: Session, path: &Path, doc: &Value, lines: Option<&[u64]>, folds: &Folds) -> Vec<Session> {
    let (compressions, migrated) = (&folds.compressions, folds.migrated);
    let Some(messages) = doc.get("messages").and_then(Value::as_array) else {
        s.diagnostics.bad_line(path, 0, "session file has no `messages` array");
        return vec![s];
    };
    if let Some(id) = str_of(doc, "sessionId").filter(|id| !id.is_empty()) {
        s.id = id.to_string();
    }
    s.meta.title = str_of(doc, "summary").map(str::to_string);
    s.stats.records = messages.len() as u64;
    // Tool calls whose results the recording holds: newer CLIs also write
    // each result as a user message of `functionResponse` parts.
    let mut answered: HashSet<String> = HashSet::new();
    // Which elements a compression inserted, and which is a summary (the
    // ranges are disjoint: one pass each, whatever their number).
    let mut inserted_by = vec![(false, false); messages.len()];
    for (_, r) in compressions {
        for flags in inserted_by.get_mut(r.clone()).into_iter().flatten() {
            flags.0 = true;
        }
        if let Some(flags) = summary_of(messages, r).and_then(|i| inserted_by.get_mut(i)) {
            flags.1 = true;
        }
    }
    // The first message built from each element (and the end).
    let mut built = Vec::with_capacity(messages.len() + 1);
    for (i, m) in messages.iter().enumerate() {
        built.push(s.messages.len());
        let (inserted, summary) = inserted_by.get(i).copied().unwrap_or_default();
        let line = lines.and_then(|l| l.get(i).copied()).unwrap_or(i as u64 + 1);
        if m.get("tokens").is_some_and(Value::is_object) {
            s.stats.usage_records += 1;
        }
        let ts = m.get("timestamp").and_then(time::parse_value);
        let Some(ty) = str_of(m, "type") else {
            if m.is_object() {
                s.diagnostics.unknown("message without type", line, &super::raw_json(m));
            } else {
                s.diagnostics.bad_line(path, line, "message is not a JSON object");
            }
            continue;
        };
        match ty {
            "user" => match function_responses(m.get("content")) {
                Some(ids) if ids.iter().all(|id| answered.contains(id)) => s.diagnostics.skip("tool response echo"),
                Some(ids) => {
                    let items = m.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                    let mut blocks = Vec::new();
                    for (id, item) in ids.into_iter().zip(items) {
                        let (content, is_error) = result_blocks(Some(item), None);
                        answered.insert(id.clone());
                        // The call's own result, recorded empty, is this one.
                        match empty_result(&mut s.messages, &id) {
                            Some((c, e)) => (*c, *e) = (content, Some(is_error)),
                            None => {
                                blocks.push(Block::ToolResult { tool_use_id: id, content, is_error: Some(is_error) })
                            }
                        }
                    }
                    if blocks.is_empty() {
                        continue;
                    }
                    s.messages.push(Message::at(Role::User, Origin::ToolResult, blocks, line, ts));
                }
                None => {
                    let blocks = parts(m.get("content"));
                    let origin = match (inserted, summary) {
                        (true, true) => Origin::CompactSummary,
                        (true, false) => Origin::Injected,
                        (false, _) => Origin::Human,
                    };
                    s.messages.push(Message::at(Role::User, origin, blocks, line, ts));
                }
            },
            "gemini" => answered.extend(gemini_message(&mut s, m, line, ts, !inserted)),
            "error" => {
                let text = content_text(m.get("content"));
                s.errors.push(RecordedError {
                    source_line: line,
                    kind: errors::classify(&text),
                    message: super::truncate_str(&text, MAX_ERROR_LEN).to_string(),
                });
                s.diagnostics.skip("error");
            }
            "info" | "warning" => s.diagnostics.skip(ty),
            other => s.diagnostics.unknown(other, line, &super::raw_json(m)),
        }
    }
    built.push(s.messages.len());
    if migrated > 0
        && let Some(legacy) = path.with_extension("json").file_name()
    {
        s.inherited = built.get(migrated).copied().unwrap_or(s.messages.len());
        s.forked_from = Some(legacy.to_string_lossy().into_owned());
    }
    for (line, r) in compressions {
        let at = |i: usize| built.get(i).copied().unwrap_or(s.messages.len());
        let inserted = at(r.start)..at(r.end);
        s.recorded_compactions.push(RecordedCompaction {
            kind: CompactionKind::GeminiCompression,
            source_line: *line,
            kept: inserted.start..inserted.start,
            head: 0..0,
            inserted,
            tokens_before: None,
            trigger: None,
        });
    }
    record_maskings(&mut s, path, &folds.maskings, &built);
    warn_unrecorded_compressions(&mut s, path);
    vec![s]
}

/// Say where the recorded prompt fell, from one call to the next, by more
/// than [`UNRECORDED_DROP`] with no compression or masking recorded between
/// them. Gemini CLI compresses its history without recording it in most of
/// its versions (the recording keeps the original messages and no summary):
/// the usage shows it, the messages do not.
fn warn_unrecorded_compressions(s: &mut Session, path: &Path) {
    let explained = |from: usize, to: usize| {
        s.recorded_compactions.iter().any(|c| (from + 1..=to).contains(&c.inserted.start))
            || s.recorded_clearings.iter().any(|c| (from + 1..=to).contains(&c.at))
    };
    let mut prev: Option<(usize, u64)> = None;
    let mut found: Option<(u64, u64, u64, u64)> = None;
    for c in &s.calls {
        let Some(u) = c.usage else { continue };
        let prompt = u.prompt_tokens();
        if let Some((m, before)) = prev
            && is_unrecorded_drop(before, prompt)
            && !explained(m, c.message_index)
        {
            let line = s.messages.get(c.message_index).map_or(0, |m| m.source_line);
            let f = found.get_or_insert((line, before, prompt, 0));
            f.3 += 1;
        }
        prev = Some((c.message_index, prompt));
    }
    if let Some((line, before, after, n)) = found {
        s.diagnostics.warn(
            path,
            line,
            format!(
                "the recorded prompt fell from {before} to {after} tokens with no compression recorded ({n} such \
                 drop(s); Gemini CLI compresses without recording it in most versions): calls are measured as \
                 recorded, but estimates and the estimator accuracy count the whole history after it"
            ),
        );
    }
}

/// A drop in the recorded prompt that only a compression explains: below
/// 60 % of the call before, and by at least [`UNRECORDED_DROP`] tokens.
/// Gemini CLI compresses at half its window or more and keeps about 30 % of
/// the history; masking, which the recording keeps, frees 30,000 tokens or more.
fn is_unrecorded_drop(before: u64, after: u64) -> bool {
    after.saturating_mul(10) < before.saturating_mul(6) && before - after >= UNRECORDED_DROP
}

/// Fewest tokens a drop in the recorded prompt must free to be read as a
/// compression the log does not hold.
const UNRECORDED_DROP: u64 = 8_192;

/// The maskings of tool outputs, as the agent's clearings (one per point in
/// the recording); and a warning for the outputs the log holds only masked
/// (a `.json` document is rewritten in place: calls made before the masking
/// are then counted with the masked text).
fn record_maskings(s: &mut Session, path: &Path, maskings: &[gemini_jsonl::Masking], built: &[usize]) {
    let mut by_id: HashMap<&str, (usize, usize)> = HashMap::new();
    if !maskings.is_empty() {
        for (id, mi, bi) in crate::model::tool_results(&s.messages, 0) {
            by_id.entry(id).or_insert((mi, bi));
        }
    }
    let mut clearings: Vec<RecordedClearing> = Vec::new();
    for mk in maskings {
        let Some(&(message, block)) = by_id.get(mk.call.as_str()) else { continue };
        let at = built.get(mk.at).copied().unwrap_or(s.messages.len());
        let cleared = ClearedBlock::new(message, block, result_blocks(Some(&mk.sent), Some(&mk.call)).0);
        match clearings.last_mut().filter(|c| c.at == at) {
            Some(c) => c.blocks.push(cleared),
            None => clearings.push(RecordedClearing {
                source_line: mk.line,
                at,
                blocks: vec![cleared],
                tokens_saved: None,
                trigger: None,
            }),
        }
    }
    let cleared: HashSet<(usize, usize)> =
        clearings.iter().flat_map(|c| c.blocks.iter().map(|b| (b.message, b.block))).collect();
    // What a compression inserted was sent as it is recorded: masked.
    let inserted = s.inserted_mask();
    let only_masked = s
        .messages
        .iter()
        .enumerate()
        .flat_map(|(mi, m)| m.blocks.iter().enumerate().map(move |(bi, b)| (mi, bi, b)))
        .filter(|&(mi, bi, b)| match b {
            Block::ToolResult { content, .. } => {
                !cleared.contains(&(mi, bi)) && !inserted[mi] && content.iter().any(is_masked_text)
            }
            _ => false,
        })
        .count();
    if only_masked > 0 {
        s.diagnostics.warn(
            path,
            0,
            format!(
                "{only_masked} tool output(s) recorded only as Gemini CLI masked them: every call is counted \
                 with the masked text, also those made before the masking"
            ),
        );
    }
    s.recorded_clearings = clearings;
}

/// A text block in Gemini CLI's masked form of a tool output.
fn is_masked_text(b: &Block) -> bool {
    matches!(b, Block::Text { text } if gemini_jsonl::is_masked_text(text))
}

/// The summary among the messages `r` a compression inserted: the user
/// message holding Gemini's `<state_snapshot>`, else the one the model
/// acknowledges right after it.
fn summary_of(messages: &[Value], r: &Range<usize>) -> Option<usize> {
    const ACK: &str = "Got it. Thanks for the additional context!";
    let text = |i: usize| messages.get(i).map(|m| content_text(m.get("content"))).unwrap_or_default();
    let user = |i: usize| messages.get(i).and_then(|m| str_of(m, "type")) == Some("user");
    r.clone()
        .find(|&i| user(i) && text(i).contains("<state_snapshot>"))
        .or_else(|| r.clone().find(|&i| user(i) && i + 1 < r.end && text(i + 1).trim() == ACK))
}

/// The empty result block of call `id` in the last tool results, if any.
fn empty_result<'m>(messages: &'m mut [Message], id: &str) -> Option<(&'m mut Vec<Block>, &'m mut Option<bool>)> {
    let last =
        messages.iter_mut().rev().take_while(|m| m.origin != Origin::Human).find(|m| m.origin == Origin::ToolResult)?;
    last.blocks.iter_mut().find_map(|b| match b {
        Block::ToolResult { tool_use_id, content, is_error } if tool_use_id == id && content.is_empty() => {
            Some((content, is_error))
        }
        _ => None,
    })
}

/// The call ids of a content made only of `functionResponse` parts (a tool's
/// result written as a user message); `None` for any other content.
fn function_responses(content: Option<&Value>) -> Option<Vec<String>> {
    let items = content?.as_array().filter(|a| !a.is_empty())?;
    items.iter().map(|p| p.get("functionResponse").map(|fr| str_of(fr, "id").unwrap_or("").to_string())).collect()
}

/// Push the model's message, and its tool results after it; the ids of the
/// calls whose results it holds.
/// `call`: the message is a model call (not one a compression inserted).
fn gemini_message(s: &mut Session, m: &Value, line: u64, ts: Option<i64>, call: bool) -> Vec<String> {
    // Thoughts are in no request: Gemini CLI keeps them out of the history
    // its requests are built from (`processStreamResponse` drops every
    // `thought` part), and records only a digest of them apart.
    let recorded = m.get("thoughts").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
    let in_content = m.get("content").and_then(Value::as_array).is_some_and(|c| c.iter().any(is_thought));
    if recorded || in_content {
        s.diagnostics.sent_otherwise("thoughts, never sent again");
    }
    let mut blocks = parts(m.get("content"));
    let calls = m.get("toolCalls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut results = Vec::new();
    let mut answered = Vec::new();
    for c in calls {
        let id = str_of(c, "id").unwrap_or("").to_string();
        blocks.push(Block::ToolUse {
            id: id.clone(),
            name: str_of(c, "name").unwrap_or("").to_string(),
            input: c.get("args").cloned().unwrap_or_else(|| Value::Object(Default::default())),
        });
        let (content, has_error) = result_blocks(c.get("result"), Some(&id));
        if !content.is_empty() {
            answered.push(id.clone());
        }
        let is_error = match str_of(c, "status") {
            Some("success") => Some(has_error),
            Some(_) => Some(true),
            None => has_error.then_some(true),
        };
        results.push(Block::ToolResult { tool_use_id: id, content, is_error });
    }
    let model = str_of(m, "model").map(str::to_string);
    if let Some(model) = &model {
        s.meta.add_model(model);
    }
    let usage = m.get("tokens").filter(|t| t.is_object()).map(|t| {
        let input = u64_of(t.get("input"));
        let cached = u64_of(t.get("cached")).min(input);
        let thoughts = u64_of(t.get("thoughts"));
        Usage {
            uncached_input: input - cached + u64_of(t.get("tool")),
            cache_read: cached,
            cache_write: 0,
            output: u64_of(t.get("output")) + thoughts,
            reasoning: thoughts,
            provenance: UsageProvenance::Gemini,
        }
    });
    s.messages.push(Message::at(Role::Assistant, Origin::Model, blocks, line, ts));
    let response_id = str_of(m, "id").map(str::to_string);
    if call {
        s.calls.push(Call {
            message_index: s.messages.len() - 1,
            model,
            usage,
            timestamp: ts,
            response_id,
            fast: false,
        });
    }
    if !results.is_empty() {
        let rts = calls.last().and_then(|c| c.get("timestamp")).and_then(time::parse_value).or(ts);
        s.messages.push(Message::at(Role::User, Origin::ToolResult, results, line, rts));
    }
    answered
}

/// A `PartListUnion`: a string, one part, or an array of parts (`{text}`,
/// `{inlineData}`, …). A user message of `functionResponse` parts (a tool's
/// result) is read by `result_blocks` instead.
fn parts(content: Option<&Value>) -> Vec<Block> {
    match content {
        Some(Value::String(s)) if !s.is_empty() => vec![Block::text(s.as_str())],
        Some(Value::Array(items)) => items.iter().filter_map(part).collect(),
        Some(v @ Value::Object(_)) => part(v).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A model's thought part (`thought: true`): never sent back.
fn is_thought(p: &Value) -> bool {
    p.get("thought").and_then(Value::as_bool) == Some(true)
}

fn part(p: &Value) -> Option<Block> {
    if let Some(t) = p.as_str() {
        return (!t.is_empty()).then(|| Block::text(t));
    }
    if is_thought(p) {
        return None;
    }
    if let Some(t) = str_of(p, "text") {
        return Some(Block::text(t));
    }
    if let Some(d) = p.get("inlineData") {
        return Some(Block::Image {
            media_type: str_of(d, "mimeType").unwrap_or("application/octet-stream").to_string(),
            bytes: str_of(d, "data").map_or(0, str::len),
        });
    }
    Some(Block::Other { raw: p.clone() })
}

/// The result parts of a tool call, and whether any part reports an error.
fn result_blocks(result: Option<&Value>, call: Option<&str>) -> (Vec<Block>, bool) {
    let items: Vec<&Value> = match result {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(v @ (Value::Object(_) | Value::String(_))) => vec![v],
        _ => Vec::new(),
    };
    let items = match call {
        Some(id) => own_parts(items, id),
        None => items,
    };
    let mut blocks = Vec::new();
    let mut has_error = false;
    for it in items {
        let Some(fr) = it.get("functionResponse") else {
            blocks.extend(part(it));
            continue;
        };
        let response = fr.get("response");
        if let Some(out) = response.and_then(|r| r.get("output")) {
            blocks.push(value_text(out));
        } else if let Some(err) = response.and_then(|r| r.get("error")) {
            has_error = true;
            blocks.push(value_text(err));
        } else if let Some(r) = response.filter(|r| !r.is_null()) {
            blocks.push(value_text(r));
        }
        // Newer CLIs attach media (e.g. images read by a tool) next to the response.
        for p in fr.get("parts").and_then(Value::as_array).into_iter().flatten() {
            blocks.extend(part(p));
        }
    }
    (blocks, has_error)
}

/// The parts of a call's recorded `result` that are its own. Gemini CLI
/// records a call's result again as the whole user turn it was sent in when
/// the two differ (`updateMessagesFromHistory` syncs `tc.result =
/// turn.content.parts`, for a masked output and for parallel calls alike):
/// every call's `functionResponse` of the turn, each followed by the parts
/// sent next to it (media). A call keeps its own response and the parts after
/// it up to the next response (the parts before the first response go with
/// the first); a result that does not also name another call is its own whole.
fn own_parts<'a>(items: Vec<&'a Value>, id: &str) -> Vec<&'a Value> {
    fn response_id(it: &Value) -> Option<&str> {
        it.get("functionResponse").map(|fr| str_of(fr, "id").unwrap_or(""))
    }
    let mine = items.iter().any(|it| response_id(it) == Some(id));
    let others = items.iter().any(|it| response_id(it).is_some_and(|other| other != id));
    if !(mine && others) {
        return items;
    }
    let first = items.iter().find_map(|it| response_id(it));
    let mut owner = first;
    items
        .into_iter()
        .filter(|it| {
            if let Some(r) = response_id(it) {
                owner = Some(r);
            }
            owner == Some(id)
        })
        .collect()
}

fn value_text(v: &Value) -> Block {
    match v {
        Value::String(s) => Block::text(s.as_str()),
        other => Block::text(other.to_string()),
    }
}

fn content_text(content: Option<&Value>) -> String {
    crate::model::joined_text(&parts(content)).into_owned()
}

#[cfg(test)]
#[path = "gemini_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "gemini_masking_tests.rs"]
mod masking_tests;
