//! Gemini CLI's JSONL recordings (v0.39 on), folded into the one-object
//! document the older `.json` files hold, so one reader reads both. Lines:
//! - the header `{sessionId, projectHash, startTime, lastUpdated, kind?}`;
//! - a message (it has an `id`), appended whole: a later line with the same
//!   `id` replaces it in place (tokens, tool calls and masked results arrive
//!   that way);
//! - `{"$set": {...}}`: metadata merged into the header; a non-empty
//!   `messages` among it is a snapshot that replaces the history so far
//!   (later lines still apply);
//! - `{"$rewindTo": ID}`: that message and every one after it are dropped.
//!
//! Anything else is kept for the reader to count as an unknown record.

use serde_json::{Map, Value};
use std::collections::HashMap;

/// A recording folded: the document, the file line of each of its messages,
/// the lines that are not JSON objects, and the records of no known kind.
pub(super) struct Folded {
    pub doc: Value,
    pub lines: Vec<u64>,
    pub bad: Vec<(u64, String)>,
    pub unknown: Vec<(u64, Value)>,
}

/// The messages so far, in order, with the line each one was last written at.
#[derive(Default)]
struct History {
    messages: Vec<(Value, u64)>,
    by_id: HashMap<String, usize>,
}

impl History {
    fn put(&mut self, m: Value, line: u64) {
        let id = m.get("id").and_then(Value::as_str).map(str::to_string);
        match id.as_ref().and_then(|id| self.by_id.get(id)) {
            Some(&i) => self.messages[i] = (m, line),
            None => {
                if let Some(id) = id {
                    self.by_id.insert(id, self.messages.len());
                }
                self.messages.push((m, line));
            }
        }
    }

    /// Drop message `id` and every one after it (nothing when unknown).
    fn rewind(&mut self, id: &str) {
        if let Some(&i) = self.by_id.get(id) {
            self.messages.truncate(i);
            self.by_id.retain(|_, &mut j| j < i);
        }
    }

    fn clear(&mut self) {
        self.messages.clear();
        self.by_id.clear();
    }
}

/// Fold a JSONL recording; `None` when no line is a JSON object (a torn
/// `.json` document, or no Gemini recording at all).
pub(super) fn fold(data: &[u8]) -> Option<Folded> {
    let mut header = Map::new();
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
                    Some(snapshot) if !snapshot.is_empty() => {
                        history.clear();
                        for m in snapshot {
                            history.put(m.clone(), line);
                        }
                    }
                    _ => {}
                }
            }
        } else if o.contains_key("sessionId") && o.contains_key("projectHash") {
            header.extend(o);
        } else {
            unknown.push((line, Value::Object(o)));
        }
    }
    if objects == 0 {
        return None;
    }
    let (messages, lines): (Vec<Value>, Vec<u64>) = history.messages.into_iter().unzip();
    header.insert("messages".to_string(), Value::Array(messages));
    Some(Folded { doc: Value::Object(header), lines, bad, unknown })
}
