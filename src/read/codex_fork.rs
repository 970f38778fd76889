//! Codex forks and sub-agents: their rollout opens with a copy of the parent's
//! history, which is context they start from, not calls they made.
//!
//! A thread forked (`forked_from_id`) or spawned as a sub-agent
//! (`source.subagent.thread_spawn.parent_thread_id`) writes its own
//! `session_meta`, then every line of the parent's rollout as it was (the
//! parent's `session_meta` first, its items, usage events and compactions),
//! re-stamped with the time of the copy, then its own turns. Read as its own
//! next to its parent, the copy would count each of the parent's calls again
//! in every fork. The reader marks where the copy ends
//! ([`Session::inherited`](crate::model::Session::inherited)); the batch
//! settles the rest ([`Session::settle_fork`](crate::model::Session::settle_fork)).
//!
//! Where the copy ends: paginated rollouts number their lines (`ordinal`) and
//! a sub-agent's `session_meta` names its first own line
//! (`subagent_history_start_ordinal`), which settles it. Other files are read
//! by the time of the lines and the ids of the turns.

use super::Reader;
use crate::read::is_uuid;
use serde_json::Value;

/// What the first `session_meta` said about where the thread came from.
pub(super) struct Fork {
    /// Time (ms) in the thread's own id when it is a UUIDv7: any turn id of
    /// that kind made before it is the parent's.
    own_ms: Option<u64>,
    /// Timestamp of the last copied line.
    last_ts: Option<i64>,
    /// The first line (`ordinal`) that is the thread's own.
    start_ordinal: Option<u64>,
}

/// Above this gap between two lines the copy is over: Codex writes the copied
/// lines in one burst, milliseconds apart, and the thread's first own turn
/// comes after the fork or spawn has returned.
const COPY_GAP_MS: i64 = 1000;

/// The parent a `session_meta` payload names: the thread it was forked from,
/// or the one that spawned it as a sub-agent.
fn parent_of(p: &Value) -> Option<&str> {
    let spawn = || p.pointer("/source/subagent/thread_spawn/parent_thread_id");
    p.get("forked_from_id").or_else(spawn).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// `subagent_history_start_ordinal`: a number, or a number written as a
/// string by some builds.
fn start_ordinal(p: &Value) -> Option<u64> {
    match p.get("subagent_history_start_ordinal")? {
        Value::String(s) => s.trim().parse().ok(),
        v => v.as_u64(),
    }
}

/// The milliseconds of a UUIDv7 (its first 48 bits), `None` for any other
/// string.
pub(super) fn uuid7_ms(s: &str) -> Option<u64> {
    if !is_uuid(s) || s.as_bytes()[14] != b'7' {
        return None;
    }
    let hex: String = s[..8].chars().chain(s[9..13].chars()).collect();
    u64::from_str_radix(&hex, 16).ok()
}

impl Reader<'_> {
    /// The first `session_meta` of a fork or sub-agent: its parent, and how its
    /// own turns will be told from the copied ones.
    pub(super) fn note_fork(&mut self, p: &Value, own_id: &str) {
        if let Some(parent) = parent_of(p) {
            self.s.forked_from = Some(parent.to_string());
            self.fork = Some(Fork { own_ms: uuid7_ms(own_id), last_ts: None, start_ordinal: start_ordinal(p) });
        }
        if let Some(spawner) = p.pointer("/source/subagent/thread_spawn/parent_thread_id").and_then(Value::as_str) {
            self.s.parent = Some(spawner.to_string());
        }
    }

    /// A later `session_meta` of a fork: another thread's opens the copy (when
    /// the thread has made no call yet), its own ends it. Returns whether the
    /// line belongs to the copy.
    pub(super) fn fork_meta(&mut self, id: Option<&str>, ts: Option<i64>, ordinal: Option<u64>) -> bool {
        let Some(id) = id.filter(|_| self.fork.is_some()) else { return self.copying };
        if id == self.s.id || self.own_ordinal(ordinal) == Some(true) {
            self.end_copy();
            return false;
        }
        if !self.copying && self.s.calls.is_empty() {
            self.copying = true;
            if let Some(f) = &mut self.fork {
                f.last_ts = ts;
            }
        }
        self.copying
    }

    /// Ends the copy before a line that cannot be part of it: one numbered
    /// from the thread's own start, or else one written well after the copied
    /// burst, or a turn whose UUIDv7 id is newer than the thread itself. A
    /// line numbered below that start is the copy's.
    pub(super) fn copy_check(&mut self, ts: Option<i64>, turn_id: Option<&str>, ordinal: Option<u64>) {
        if let Some(own) = self.own_ordinal(ordinal) {
            if own {
                self.end_copy();
            } else if !self.copying && self.s.calls.is_empty() {
                // A copy that does not open with the parent's session_meta.
                self.copying = true;
            }
            return;
        }
        let Some(f) = self.fork.as_mut().filter(|_| self.copying) else { return };
        let late = matches!((f.last_ts, ts), (Some(last), Some(now)) if now.saturating_sub(last) > COPY_GAP_MS);
        let own_turn = matches!((f.own_ms, turn_id.and_then(uuid7_ms)), (Some(own), Some(t)) if t >= own);
        if ts.is_some() {
            f.last_ts = ts;
        }
        if late || own_turn {
            self.end_copy();
        }
    }

    /// Whether a numbered line is the thread's own, when its rollout says
    /// where its own lines start.
    fn own_ordinal(&self, ordinal: Option<u64>) -> Option<bool> {
        let start = self.fork.as_ref()?.start_ordinal?;
        Some(ordinal? >= start)
    }

    /// The messages read so far are the parent's: in context, not this
    /// thread's calls.
    pub(super) fn end_copy(&mut self) {
        if std::mem::take(&mut self.copying) {
            self.boundary();
            self.s.inherited = self.s.messages.len();
        }
    }
}
