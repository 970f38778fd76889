//! OpenClaw's tool-result projections (`custom` entries `openclaw.cache-ttl`):
//! which tool outputs every later request sent trimmed, cleared or cut, while
//! the log keeps them whole. From openclaw `cache-ttl-checkpoint.ts` and
//! `tool-result-truncation.ts`.
//!
//! - An entry is a snapshot of the projections (`prunedToolResults`,
//!   `ambiguousToolResultBaseKeys`, `frozenToolResults`) or a `cacheTtlDelta`
//!   of them against the state before it (`set`, then `remove`d keys); a
//!   `reset` starts from none. A delta with no snapshot before it, or after a
//!   damaged one, changes nothing (OpenClaw reads back the last good state). An
//!   entry with only a `timestamp` is a touch: timing, no projection.
//! - A key names a tool result: `tool:<toolCallId>:<timestamp>`, the message's
//!   own numeric timestamp. A `soft` mark sends the result's text trimmed to
//!   its first and last 1,500 characters when over 4,000 (images named); a
//!   `hard` mark sends its placeholder; a frozen result with `texts` sends them
//!   in place of its text blocks (a cut to the per-request cap). A frozen
//!   result whose `sourceHash` is not that of the logged text blocks was sent
//!   as logged.
//! - OpenClaw writes an entry before the request it applies to; from there on
//!   every request sends the projection, until a compaction or reset drops it.
//!   Each change becomes a [`RecordedClearing`] at that point.

use super::{Reader, str_of};
use crate::model::{Block, ClearedBlock, RecordedClearing};
use base64::Engine;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The `customType` of the entries.
pub(super) const CUSTOM_TYPE: &str = "openclaw.cache-ttl";
/// A soft trim leaves a text of at most this many UTF-16 units whole.
const SOFT_MAX: usize = 4_000;
/// UTF-16 units a soft trim keeps from each end.
const SOFT_KEEP: usize = 1_500;
/// What a soft trim puts in place of an image.
const IMAGE_MARKER: &str = "[image removed during context pruning]";
/// The fields that make an entry more than a touch.
const PROJECTION_FIELDS: [&str; 4] =
    ["prunedToolResults", "ambiguousToolResultBaseKeys", "frozenToolResults", "cacheTtlDelta"];

#[derive(Clone, Debug, PartialEq, Eq)]
enum Pruned {
    Soft,
    Hard(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Frozen {
    source_hash: String,
    texts: Option<Vec<String>>,
}

/// The projections as of one entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct State {
    pruned: BTreeMap<String, Pruned>,
    ambiguous: BTreeSet<String>,
    frozen: BTreeMap<String, Frozen>,
}

struct Changes<T> {
    set: Vec<(String, T)>,
    remove: Vec<String>,
}

struct Delta {
    pruned: Changes<Pruned>,
    ambiguous: Changes<()>,
    frozen: Changes<Frozen>,
}

enum Record {
    Touch,
    Snapshot(State),
    Delta(Delta),
    Damaged,
}

/// What the reader keeps of the projections while it reads a session.
#[derive(Default)]
pub(super) struct CacheTtl {
    state: State,
    /// A snapshot was read since the session (or its last reset) began.
    based: bool,
    /// A damaged entry was read since the last snapshot: deltas wait for one.
    damaged: bool,
    /// (message, block) → the content the clearings so far send for it.
    sent: HashMap<(usize, usize), Vec<Block>>,
    /// Tool result key → the entries holding it, over `segment[..indexed]`.
    keys: HashMap<String, Vec<usize>>,
    indexed: usize,
    /// Messages before it are out of the agent's context (a compaction).
    floor: usize,
    /// The first touch's line, and how many there were.
    touches: (u64, u64),
    projections: u64,
    /// Keys of marks naming a tool result this log does not hold once.
    unresolved: BTreeSet<String>,
    /// Results sent whole again while in context, which a clearing cannot say.
    restored: u64,
    damaged_line: Option<u64>,
}

impl Reader {
    /// An `openclaw.cache-ttl` entry.
    pub(super) fn cache_ttl(&mut self, entries: &[(u64, Value)], v: &Value, line: u64) {
        let changed: BTreeSet<String> = match classify(v.get("data")) {
            Record::Touch => {
                let t = &mut self.ttl.touches;
                *t = (if t.1 == 0 { line } else { t.0 }, t.1 + 1);
                self.s.diagnostics.skip("openclaw.cache-ttl touch");
                return;
            }
            Record::Damaged => {
                self.ttl.damaged = true;
                self.ttl.damaged_line.get_or_insert(line);
                return;
            }
            Record::Snapshot(next) => {
                let old = std::mem::replace(&mut self.ttl.state, next);
                self.ttl.based = true;
                self.ttl.damaged = false;
                if old.ambiguous == self.ttl.state.ambiguous {
                    changed_keys(&old, &self.ttl.state)
                } else {
                    self.ttl.keys_in_state(&old)
                }
            }
            Record::Delta(d) => {
                if !self.ttl.based || self.ttl.damaged {
                    return;
                }
                let st = &mut self.ttl.state;
                let mut changed: BTreeSet<String> = BTreeSet::new();
                apply(&mut st.pruned, d.pruned, &mut changed);
                apply(&mut st.frozen, d.frozen, &mut changed);
                let mut ambiguity_changed = false;
                for k in &d.ambiguous.remove {
                    ambiguity_changed |= st.ambiguous.remove(k);
                }
                for (k, ()) in d.ambiguous.set {
                    ambiguity_changed |= st.ambiguous.insert(k);
                }
                if ambiguity_changed { self.ttl.keys_in_state(&State::default()) } else { changed }
            }
        };
        self.ttl.projections += 1;
        self.project(entries, changed, line);
    }

    /// After a compaction that keeps messages from `floor` on: the clearings
    /// so far end with it, and the projections of the results it kept go on.
    pub(super) fn cache_ttl_compacted(&mut self, entries: &[(u64, Value)], floor: usize, line: u64) {
        if self.ttl.projections == 0 {
            return;
        }
        self.ttl.sent.clear();
        self.ttl.floor = floor;
        let all = self.ttl.keys_in_state(&State::default());
        self.project(entries, all, line);
    }

    /// The warnings of what could not be read as sent, once per session.
    pub(super) fn cache_ttl_finish(&mut self) {
        let t = std::mem::take(&mut self.ttl);
        let path = self.s.source_path.clone();
        let d = &mut self.s.diagnostics;
        if t.projections == 0 && t.touches.1 > 0 {
            let why = "OpenClaw's cache-TTL pruning was on, and this version records no projection: \
                       the tool outputs it trimmed or cleared in its requests, if any, are counted whole";
            d.warn(&path, t.touches.0, why);
        }
        if let Some(line) = t.damaged_line {
            let why = "openclaw.cache-ttl entry of a shape not read: the projections before it stand \
                       until the next snapshot";
            d.warn(&path, line, why);
        }
        if !t.unresolved.is_empty() {
            let why = format!(
                "openclaw.cache-ttl: {} projection(s) name a tool result this log does not hold once: \
                 those outputs are counted as logged",
                t.unresolved.len()
            );
            d.warn(&path, 0, why);
        }
        if t.restored > 0 {
            let why = format!(
                "openclaw.cache-ttl: {} tool output(s) were sent whole again after a projection: \
                 counted as projected until the next compaction",
                t.restored
            );
            d.warn(&path, 0, why);
        }
    }

    /// Sends each of `keys` as the state projects it from the next message on.
    fn project(&mut self, entries: &[(u64, Value)], keys: BTreeSet<String>, line: u64) {
        self.index_tool_results(entries);
        let mut blocks = Vec::new();
        for key in keys {
            let (mi, bi, e) = match self.resolve(entries, &key) {
                Some(Some(found)) => found,
                // Out of the agent's context: nothing to send.
                Some(None) => continue,
                // A key only frozen (sent as logged) is no projection to miss.
                None => {
                    if self.ttl.state.projects(&key) {
                        self.ttl.unresolved.insert(key);
                    }
                    continue;
                }
            };
            let content = entries[e].1.pointer("/message/content").unwrap_or(&Value::Null);
            let logged = match self.s.messages[mi].blocks.get(bi) {
                Some(Block::ToolResult { content, .. }) => content.as_slice(),
                _ => continue,
            };
            match self.ttl.state.sent_as(&key, content, logged) {
                Some(sent) => {
                    if self.ttl.sent.get(&(mi, bi)) != Some(&sent) {
                        self.ttl.sent.insert((mi, bi), sent.clone());
                        blocks.push(ClearedBlock::new(mi, bi, sent));
                    }
                }
                None => {
                    if self.ttl.sent.remove(&(mi, bi)).is_some() {
                        self.ttl.restored += 1;
                    }
                }
            }
        }
        if blocks.is_empty() {
            return;
        }
        blocks.sort_by_key(|b| (b.message, b.block));
        self.s.recorded_clearings.push(RecordedClearing {
            source_line: line,
            at: self.s.messages.len(),
            blocks,
            tokens_saved: None,
            trigger: None,
        });
    }

    /// Indexes the tool results read since the last call by their keys.
    fn index_tool_results(&mut self, entries: &[(u64, Value)]) {
        if self.ttl.indexed > self.segment.len() {
            self.ttl.keys.clear();
            self.ttl.indexed = 0;
        }
        for &e in &self.segment[self.ttl.indexed..] {
            if let Some(key) = entries.get(e).and_then(|(_, v)| base_key(v)) {
                self.ttl.keys.entry(key).or_default().push(e);
            }
        }
        self.ttl.indexed = self.segment.len();
    }

    /// The tool result a key names: (message, block, entry); Some(None) when
    /// it is out of the agent's context, None when the log does not hold it once.
    fn resolve(&self, entries: &[(u64, Value)], key: &str) -> Option<Option<(usize, usize, usize)>> {
        let e = match self.ttl.keys.get(key).map(Vec::as_slice) {
            Some(&[e]) if !self.ttl.state.ambiguous.contains(key) => e,
            // Fallback keys (a tool call id and timestamp seen twice) name
            // results by identities the log does not hold.
            _ => return None,
        };
        let Some(mi) = self.entry_msg.get(e).copied().flatten().filter(|&mi| mi >= self.ttl.floor) else {
            return Some(None);
        };
        let id = entries[e].1.pointer("/message/toolCallId").and_then(Value::as_str).unwrap_or("");
        let bi = self.s.messages.get(mi).and_then(|m| {
            m.blocks.iter().position(|b| matches!(b, Block::ToolResult { tool_use_id, .. } if tool_use_id == id))
        });
        Some(bi.map(|bi| (mi, bi, e)))
    }
}

impl CacheTtl {
    /// Every key the state or `old` projects.
    fn keys_in_state(&self, old: &State) -> BTreeSet<String> {
        let s = &self.state;
        s.pruned.keys().chain(s.frozen.keys()).chain(old.pruned.keys()).chain(old.frozen.keys()).cloned().collect()
    }
}

impl State {
    /// Whether the state may send the result `key` names otherwise than logged.
    fn projects(&self, key: &str) -> bool {
        self.pruned.contains_key(key) || self.frozen.get(key).is_some_and(|f| f.texts.is_some())
    }

    /// The content a tool result is sent as, or None when sent as logged.
    fn sent_as(&self, key: &str, content: &Value, logged: &[Block]) -> Option<Vec<Block>> {
        if !self.projects(key) {
            return None;
        }
        let pruned = self.pruned.get(key);
        let frozen = self.frozen.get(key);
        let texts = frozen.and_then(|f| f.texts.as_ref());
        let logged_texts = text_blocks(content);
        if frozen.is_some_and(|f| f.source_hash != source_hash(&logged_texts)) {
            return None;
        }
        match (pruned, texts) {
            (Some(Pruned::Hard(placeholder)), _) => Some(vec![Block::text(placeholder.as_str())]),
            (Some(Pruned::Soft), _) => soft_trim(content).map(|t| vec![Block::text(t)]),
            (None, Some(texts)) if !content.is_array() => Some(texts.iter().map(|t| Block::text(t.as_str())).collect()),
            (None, Some(texts)) if texts.len() == logged_texts.len() => {
                let mut next = texts.iter();
                let sent: Vec<Block> = logged
                    .iter()
                    .map(|b| match b {
                        Block::Text { .. } => Block::text(next.next().map_or("", String::as_str)),
                        other => other.clone(),
                    })
                    .collect();
                (sent != logged).then_some(sent)
            }
            _ => None,
        }
    }
}

/// Keys whose marks differ between two states.
fn changed_keys(old: &State, new: &State) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    diff(&old.pruned, &new.pruned, &mut out);
    diff(&old.frozen, &new.frozen, &mut out);
    out
}

fn diff<T: PartialEq>(old: &BTreeMap<String, T>, new: &BTreeMap<String, T>, out: &mut BTreeSet<String>) {
    for (k, v) in new {
        if old.get(k) != Some(v) {
            out.insert(k.clone());
        }
    }
    out.extend(old.keys().filter(|k| !new.contains_key(*k)).cloned());
}

/// A delta's changes: the removed keys go, then the set values are put.
fn apply<T>(map: &mut BTreeMap<String, T>, c: Changes<T>, changed: &mut BTreeSet<String>) {
    for k in c.remove {
        if map.remove(&k).is_some() {
            changed.insert(k);
        }
    }
    for (k, v) in c.set {
        changed.insert(k.clone());
        map.insert(k, v);
    }
}

fn classify(data: Option<&Value>) -> Record {
    let Some(Value::Object(o)) = data else {
        return Record::Damaged;
    };
    if o.contains_key("cacheTtlDelta") {
        return delta(o.get("cacheTtlDelta")).map_or(Record::Damaged, Record::Delta);
    }
    if let Some(s) = snapshot(o) {
        return Record::Snapshot(s);
    }
    let touch = o.get("timestamp").and_then(Value::as_f64).is_some_and(f64::is_finite)
        && !PROJECTION_FIELDS.iter().any(|f| o.contains_key(*f));
    if touch { Record::Touch } else { Record::Damaged }
}

fn snapshot(o: &serde_json::Map<String, Value>) -> Option<State> {
    let pruned = o.get("prunedToolResults")?.as_array()?.iter().map(pruned).collect::<Option<_>>()?;
    let ambiguous = match o.get("ambiguousToolResultBaseKeys") {
        None => BTreeSet::new(),
        Some(v) => strings(v)?.into_iter().collect(),
    };
    let frozen = match o.get("frozenToolResults") {
        None => BTreeMap::new(),
        Some(v) => v.as_array()?.iter().map(frozen).collect::<Option<_>>()?,
    };
    Some(State { pruned, ambiguous, frozen })
}

fn delta(d: Option<&Value>) -> Option<Delta> {
    let d = d?;
    let changes = |field: &str| -> Option<(&Vec<Value>, Vec<String>)> {
        let c = d.get(field)?;
        Some((c.get("set")?.as_array()?, strings(c.get("remove")?)?))
    };
    let (set, remove) = changes("prunedToolResults")?;
    let pruned = Changes { set: set.iter().map(pruned).collect::<Option<_>>()?, remove };
    let (set, remove) = changes("ambiguousToolResultBaseKeys")?;
    let set = set.iter().map(|k| k.as_str().map(|k| (k.to_string(), ()))).collect::<Option<_>>()?;
    let ambiguous = Changes { set, remove };
    let (set, remove) = changes("frozenToolResults")?;
    let frozen = Changes { set: set.iter().map(frozen).collect::<Option<_>>()?, remove };
    Some(Delta { pruned, ambiguous, frozen })
}

fn pruned(v: &Value) -> Option<(String, Pruned)> {
    let key = str_of(v, "key")?.to_string();
    match str_of(v, "mode")? {
        "soft" => Some((key, Pruned::Soft)),
        "hard" => Some((key, Pruned::Hard(str_of(v, "placeholder")?.to_string()))),
        _ => None,
    }
}

fn frozen(v: &Value) -> Option<(String, Frozen)> {
    let key = str_of(v, "key")?.to_string();
    let source_hash = str_of(v, "sourceHash")?.to_string();
    let texts = match v.get("texts") {
        None => None,
        Some(t) => Some(strings(t)?),
    };
    Some((key, Frozen { source_hash, texts }))
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?.iter().map(|s| s.as_str().map(str::to_string)).collect()
}

/// A tool result entry's key: `tool:<toolCallId>:<timestamp>` (without the
/// timestamp when it has none), `timestamp:<timestamp>` without a call id.
fn base_key(entry: &Value) -> Option<String> {
    let m = entry.get("message").filter(|_| str_of(entry, "type") == Some("message"))?;
    if str_of(m, "role") != Some("toolResult") {
        return None;
    }
    let ts = m.get("timestamp").and_then(Value::as_number).map(js_number);
    match (str_of(m, "toolCallId").filter(|id| !id.is_empty()), ts) {
        (Some(id), Some(ts)) => Some(format!("tool:{id}:{ts}")),
        (Some(id), None) => Some(format!("tool:{id}")),
        (None, Some(ts)) => Some(format!("timestamp:{ts}")),
        (None, None) => None,
    }
}

/// A number as JavaScript writes it in a template string (integers whole).
fn js_number(n: &serde_json::Number) -> String {
    match (n.as_u64(), n.as_i64(), n.as_f64()) {
        (Some(u), _, _) => u.to_string(),
        (_, Some(i), _) => i.to_string(),
        (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
        _ => n.to_string(),
    }
}

/// A tool result's text blocks as OpenClaw hashes them (a text block
/// without a string text counts as empty; a string content has none).
fn text_blocks(content: &Value) -> Vec<&str> {
    let Some(parts) = content.as_array() else {
        return Vec::new();
    };
    parts.iter().filter(|b| str_of(b, "type") == Some("text")).map(|b| str_of(b, "text").unwrap_or("")).collect()
}

/// `sha256(JSON.stringify(texts))`, base64url without padding.
fn source_hash(texts: &[&str]) -> String {
    let json = serde_json::to_string(texts).unwrap_or_default();
    let digest = ring::digest::digest(&ring::digest::SHA256, json.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// A tool result's content as a soft mark sends it: its texts and image
/// markers joined by newlines, trimmed to both ends when over 4,000 UTF-16
/// units; None when sent as logged (no image, and short enough).
fn soft_trim(content: &Value) -> Option<String> {
    let parts = content.as_array().map_or(&[][..], Vec::as_slice);
    let mut has_image = false;
    let mut pieces: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    for b in parts {
        match str_of(b, "type") {
            Some("text") => pieces.push(match b.get("text").and_then(Value::as_str) {
                Some(t) => t.into(),
                None => serde_json::to_string(b).unwrap_or_default().into(),
            }),
            Some("image") => {
                has_image = true;
                pieces.push(IMAGE_MARKER.into());
            }
            _ => {}
        }
    }
    let text = pieces.join("\n");
    let units: usize = text.chars().map(char::len_utf16).sum();
    if units <= SOFT_MAX {
        return has_image.then_some(text);
    }
    let (head, tail) = (utf16_head(&text, SOFT_KEEP), utf16_tail(&text, SOFT_KEEP));
    Some(format!(
        "{head}\n...\n{tail}\n\n[Tool result trimmed: kept first {SOFT_KEEP} chars and last {SOFT_KEEP} chars of {units} chars.]"
    ))
}

/// The longest start of `s` of at most `n` UTF-16 units, whole characters.
fn utf16_head(s: &str, n: usize) -> &str {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > n {
            return &s[..i];
        }
    }
    s
}

/// The longest end of `s` of at most `n` UTF-16 units, whole characters.
fn utf16_tail(s: &str, n: usize) -> &str {
    let mut units = 0;
    for (i, c) in s.char_indices().rev() {
        units += c.len_utf16();
        if units > n {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

#[cfg(test)]
#[path = "pi_cache_ttl_tests.rs"]
mod tests;
