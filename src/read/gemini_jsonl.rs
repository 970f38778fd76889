//! Gemini CLI's JSONL recordings (v0.39 on), folded into the one-object
//! document the older `.json` files hold, so one reader reads both. Lines:
//! - the header `{sessionId, projectHash, startTime, lastUpdated, kind?}`;
//! - a message (it has an `id`), appended whole: a later line with the same
//!   `id` replaces it in place (tokens, tool calls and masked results arrive
//!   that way);
//! - `{"$set": {...}}`: metadata merged into the header; a non-empty
//!   `messages` among it is a snapshot of what the model sees from then on
//!   ([`History::snapshot`]): after a compression (new messages in place of
//!   earlier turns) the earlier turns stay, as the calls they were, and the
//!   new ones are recorded as inserted by a compaction; any other snapshot (a
//!   resume, masked tool outputs, a request taken back) updates the messages
//!   it names and drops only a trailing run it leaves out;
//! - `{"$rewindTo": ID}`: that message and every one after it are dropped.
//!
//! A tool result rewritten as Gemini masked it (`<tool_output_masked>`, by a
//! later line of its message or a snapshot) keeps the output recorded first:
//! the calls before the masking sent it whole. The masking is kept aside
//! ([`Masking`]) for the reader to record as the agent's clearing.
//!
//! Anything else is kept for the reader to count as an unknown record.

use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// A recording folded: the document, the file line of each of its messages,
/// the lines that are not JSON objects, and the records of no known kind.
pub(super) struct Folded {
    pub doc: Value,
    pub lines: Vec<u64>,
    pub bad: Vec<(u64, String)>,
    pub unknown: Vec<(u64, Value)>,
    /// Compressions: the line of each snapshot that replaced earlier turns,
    /// and the messages (indices into `doc.messages`) it brought.
    pub compressions: Vec<(u64, Range<usize>)>,
    /// How many of the first messages a resume of a legacy `.json` session
    /// copied from it: Gemini then writes that session's header (with its
    /// `lastUpdated`) and its messages, then the new ones. The leading
    /// messages no newer than the first header's `lastUpdated`.
    pub migrated: usize,
    /// Tool outputs masked after they were recorded whole.
    pub maskings: Vec<Masking>,
}

/// A tool output Gemini CLI masked after recording it whole: from the
/// message recorded next on, the call's result was sent as `sent`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Masking {
    /// The line that rewrote the result.
    pub line: u64,
    /// How many messages were recorded then (the index of the next).
    pub at: usize,
    /// The tool call's id.
    pub call: String,
    /// The result as masked.
    pub sent: Value,
}

/// Whether a text is Gemini CLI's masked form of a tool output.
pub(super) fn is_masked_text(s: &str) -> bool {
    s.starts_with("<tool_output_masked>") || s.starts_with("[Observation Masked]")
}

/// Whether a tool result holds Gemini CLI's masked form of an output
/// (`<tool_output_masked>`, earlier `[Observation Masked]`).
pub(super) fn is_masked(v: &Value) -> bool {
    match v {
        Value::String(s) => is_masked_text(s),
        Value::Array(a) => a.iter().any(is_masked),
        Value::Object(o) => o.values().any(is_masked),
        _ => false,
    }
}

/// The messages so far, in order, with the line each one was last written at.
#[derive(Default)]
struct History {
    messages: Vec<(Value, u64)>,
    by_id: HashMap<String, usize>,
    compressions: Vec<(u64, Range<usize>)>,
    /// How many of `messages` are turns ([`is_turn`]).
    turns: usize,
    maskings: Vec<Masking>,
    /// The calls whose masking is recorded.
    masked: HashSet<String>,
}

/// A message's `id`.
fn id_of(m: &Value) -> Option<&str> {
    m.get("id").and_then(Value::as_str)
}

/// A user or model message with an id: what a compression can drop.
fn is_turn(m: &Value) -> bool {
    id_of(m).is_some() && matches!(m.get("type").and_then(Value::as_str), Some("user" | "gemini"))
}

impl History {
    fn put(&mut self, m: Value, line: u64) {
        let id = m.get("id").and_then(Value::as_str).map(str::to_string);
        self.turns += usize::from(is_turn(&m));
        match id.as_ref().and_then(|id| self.by_id.get(id)) {
            Some(&i) => {
                self.turns -= usize::from(is_turn(&self.messages[i].0));
                let m = self.keep_unmasked(i, m, line);
                self.messages[i] = (m, line);
            }
            None => {
                if let Some(id) = id {
                    self.by_id.insert(id, self.messages.len());
                }
                self.messages.push((m, line));
            }
        }
    }

    /// `new`, the message at `i` written again, with each tool result it
    /// masks restored to the output recorded before; the maskings kept aside.
    fn keep_unmasked(&mut self, i: usize, mut new: Value, line: u64) -> Value {
        let old = self.messages[i].0.get("toolCalls").and_then(Value::as_array);
        let Some((old, calls)) = old.zip(new.get_mut("toolCalls").and_then(Value::as_array_mut)) else {
            return new;
        };
        // Most rewrites (tokens, a call's status) mask nothing: no index then.
        if !calls.iter().any(|c| c.get("result").is_some_and(is_masked)) {
            return new;
        }
        // By id, the first of each: a message may hold thousands of calls.
        let mut results: HashMap<&str, &Value> = HashMap::new();
        for c in old {
            if let (Some(id), Some(r)) = (id_of(c), c.get("result")) {
                results.entry(id).or_insert(r);
            }
        }
        for call in calls.iter_mut() {
            let Some(id) = call.get("id").and_then(Value::as_str).map(str::to_string) else { continue };
            let before = results.get(id.as_str()).copied();
            let (Some(before), Some(result)) = (before, call.get_mut("result")) else { continue };
            if !is_masked(result) || is_masked(before) {
                continue;
            }
            let sent = std::mem::replace(result, before.clone());
            if self.masked.insert(id.clone()) {
                self.maskings.push(Masking { line, at: self.messages.len(), call: id, sent });
            }
        }
        new
    }

    /// Drop message `id` and every one after it (nothing when unknown).
    fn rewind(&mut self, id: &str) {
        if let Some(&i) = self.by_id.get(id) {
            self.turns -= self.messages[i..].iter().filter(|(m, _)| is_turn(m)).count();
            self.messages.truncate(i);
            self.by_id.retain(|_, &mut j| j < i);
            self.compressions.retain_mut(|(_, r)| {
                r.end = r.end.min(i);
                r.start < r.end
            });
        }
    }

    /// Drop the last message.
    fn pop(&mut self) {
        if let Some((m, _)) = self.messages.pop() {
            self.turns -= usize::from(is_turn(&m));
            if let Some(id) = id_of(&m)
                && self.by_id.get(id) == Some(&self.messages.len())
            {
                self.by_id.remove(id);
            }
        }
    }

    /// A `$set.messages` snapshot, the history the model sees from now on.
    /// Gemini writes one whenever it sets that history: on a resume and when
    /// it masks old tool outputs (the same messages, some updated), after a
    /// failed request (fewer: the last ones left out), and after compressing
    /// it (a summary and the turns it kept, all under new ids, in place of the
    /// earlier turns). A snapshot that brings new messages and leaves earlier
    /// turns out is such a compression: the earlier turns stay, as the calls
    /// they were, and the new messages follow them as what the compression
    /// inserted. Any other updates each message it names where it is, appends
    /// the new ones, and drops only a trailing run it leaves out (a request
    /// taken back), never what a compression replaced.
    fn snapshot(&mut self, snapshot: &[Value], line: u64) {
        let ids: HashSet<&str> = snapshot.iter().filter_map(id_of).collect();
        let brings = snapshot.iter().any(|m| id_of(m).is_none_or(|id| !self.by_id.contains_key(id)));
        // Work in the snapshot's size: the turns it names against the count.
        let named = ids.iter().filter(|id| self.by_id.get(**id).is_some_and(|&i| is_turn(&self.messages[i].0))).count();
        let compression = brings && named < self.turns;
        if !compression {
            let floor = self.compressions.last().map_or(0, |(_, r)| r.end);
            while self.messages.len() > floor
                && self.messages.last().is_some_and(|(m, _)| id_of(m).is_none_or(|id| !ids.contains(id)))
            {
                self.pop();
            }
        }
        let start = self.messages.len();
        for m in snapshot {
            self.put(m.clone(), line);
        }
        if compression && self.messages.len() > start {
            self.compressions.push((line, start..self.messages.len()));
        }
    }
}

/// Fold a JSONL recording; `None` when no line is a JSON object (a torn
/// `.json` document, or no Gemini recording at all).
pub(super) fn fold(data: &[u8]) -> Option<Folded> {
    let mut header = Map::new();
    let mut opened: Option<i64> = None;
    let mut history = History::default();
    let (mut bad, mut unknown, mut objects) = (Vec::new(), Vec::new(), 0usize);
    for (line, text) in super::lines(data) {
        let v = match super::parse_line(text) {
            Ok(v) => v,
            Err(reason) => {
                bad.push((line, reason));
                continue;
            }
        };
        let Value::Object(o) = v else {
            bad.push((line, "record is not a JSON object".to_string()));
            continue;
        };
        objects += 1;
        if let Some(to) = o.get("$rewindTo") {
            match to.as_str() {
                Some(id) => history.rewind(id),
                None => unknown.push((line, Value::Object(o))),
            }
        } else if o.get("id").is_some_and(Value::is_string) {
            history.put(Value::Object(o), line);
        } else if let Some(set) = o.get("$set").and_then(Value::as_object) {
            for (k, v) in set {
                if k != "messages" {
                    header.insert(k.clone(), v.clone());
                    continue;
                }
                match v.as_array() {
                    Some(snapshot) if !snapshot.is_empty() => history.snapshot(snapshot, line),
                    _ => {}
                }
            }
        } else if o.contains_key("sessionId") && o.contains_key("projectHash") {
            if header.is_empty() {
                opened = o.get("lastUpdated").and_then(super::time::parse_value);
            }
            header.extend(o);
        } else {
            unknown.push((line, Value::Object(o)));
        }
    }
    if objects == 0 {
        return None;
    }
    let (messages, lines): (Vec<Value>, Vec<u64>) = history.messages.into_iter().unzip();
    let written = |m: &Value| m.get("timestamp").and_then(super::time::parse_value);
    let migrated = opened.map_or(0, |t| messages.iter().take_while(|m| written(m).is_some_and(|w| w <= t)).count());
    header.insert("messages".to_string(), Value::Array(messages));
    Some(Folded {
        doc: Value::Object(header),
        lines,
        bad,
        unknown,
        compressions: history.compressions,
        migrated,
        maskings: history.maskings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One step of a recording: a message (id, type), a snapshot of messages,
    /// or a rewind.
    fn step() -> impl Strategy<Value = (u8, Vec<(u8, bool)>)> {
        (0u8..3, proptest::collection::vec((0u8..6, any::<bool>()), 0..5))
    }

    proptest! {
        /// The turn count a snapshot is judged by stays the count of turns
        /// held, every id points at its message, and a compression's range
        /// lies within the messages.
        #[test]
        fn the_turn_count_follows_the_history(steps in proptest::collection::vec(step(), 0..30)) {
            let msg = |id: u8, user: bool| serde_json::json!({"id": format!("m{id}"), "type": if user { "user" } else { "info" }});
            let mut h = History::default();
            for (line, (op, items)) in steps.into_iter().enumerate() {
                let line = line as u64;
                match (op, items.first()) {
                    (0, Some(&(id, user))) => h.put(msg(id, user), line),
                    (1, _) => h.snapshot(&items.iter().map(|&(id, user)| msg(id, user)).collect::<Vec<_>>(), line),
                    (_, Some(&(id, _))) => h.rewind(&format!("m{id}")),
                    _ => {}
                }
                prop_assert_eq!(h.turns, h.messages.iter().filter(|(m, _)| is_turn(m)).count());
                for (id, &i) in &h.by_id {
                    prop_assert_eq!(h.messages.get(i).and_then(|(m, _)| id_of(m)), Some(id.as_str()));
                }
                prop_assert!(h.compressions.iter().all(|(_, r)| r.start < r.end && r.end <= h.messages.len()));
            }
        }
    }
}
