//! OpenClaw 2026.8+ keeps an agent's sessions in SQLite, not in JSONL files:
//! `agents/<id>/agent/openclaw-agent.sqlite`, one row per pi session entry.
//!
//! Table `transcript_events (session_id, seq, event_json, …)` holds each
//! entry's original JSON, the session header first, in `seq` order; from
//! schema 23 an entry of 1 KiB or more may be stored instead as a zstd frame
//! (`event_zstd`) with its length (`event_utf8_bytes`). Each session's
//! entries, one per line, are read by the pi reader: line N of a diagnostic
//! is the session's N-th entry. The database is opened read-only and never
//! written: `immutable` when no write-ahead log is beside it, else read with
//! that log, which holds the latest writes.
//!
//! The database holds the session store too: table `session_nodes`, one row
//! per session key with its current session (`current_session_id`) and its
//! entry as JSON (`entry_json`), whose `contextTokens` is the window the
//! session last ran under, as `sessions.json` records it beside JSONL
//! transcripts ([`super::openclaw_store`]).

use crate::model::{Diagnostic, Session, Severity};
use rusqlite::{Connection, OpenFlags};
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The database file that makes `agents/<id>/agent` an OpenClaw agent folder.
pub const DB: &str = "openclaw-agent.sqlite";

/// Largest entry OpenClaw stores (its schema's bound), compressed or not.
const MAX_EVENT: u64 = 4 * 1024 * 1024;

/// The first bytes of every SQLite database file.
pub const MAGIC: &[u8] = b"SQLite format 3\0";

/// Read every session of the agent database in `dir`. Errors when the file
/// cannot be opened as an OpenClaw agent database.
pub fn read_dir(dir: &Path) -> Result<Vec<Session>, Diagnostic> {
    read_db(&dir.join(DB))
}

/// Read a database file given by itself (a copy under another name): as in
/// its folder, or one session holding why it could not be.
pub fn read_file(path: &Path) -> Vec<Session> {
    let read = if path.is_file() {
        read_db(path)
    } else {
        let message = "a SQLite database is read from its file, not from standard input: give its path".to_string();
        Err(Diagnostic { severity: Severity::Error, path: path.to_path_buf(), line: 0, message })
    };
    read.unwrap_or_else(|d| {
        let mut s = Session::new(super::stem_id(path), crate::model::Format::Pi, path);
        s.diagnostics.bad_line(path, 0, d.message);
        vec![s]
    })
}

fn read_db(path: &Path) -> Result<Vec<Session>, Diagnostic> {
    let path = path.to_path_buf();
    let fail = |message: String| Diagnostic { severity: Severity::Error, path: path.clone(), line: 0, message };
    let conn = open(&path).map_err(|e| fail(format!("cannot open as SQLite: {e}")))?;
    let columns = columns(&conn).map_err(|e| fail(format!("cannot read: {e}")))?;
    if columns.is_empty() {
        return Err(fail("no transcript_events table: not an OpenClaw agent database".into()));
    }
    let compressed = ["event_zstd", "event_utf8_bytes"].iter().all(|c| columns.iter().any(|k| k == c));
    let sql = if compressed {
        "SELECT session_id, event_json, event_zstd, event_utf8_bytes FROM transcript_events ORDER BY session_id, seq"
    } else {
        "SELECT session_id, event_json, NULL, NULL FROM transcript_events ORDER BY session_id, seq"
    };
    let windows = store_windows(&conn);
    let mut sessions = Vec::new();
    let mut stream: Option<Stream> = None;
    let mut stmt = conn.prepare(sql).map_err(|e| fail(format!("cannot read transcript_events: {e}")))?;
    let mut rows = stmt.query([]).map_err(|e| fail(format!("cannot read transcript_events: {e}")))?;
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => break,
            Err(e) => return Err(fail(format!("cannot read transcript_events: {e}"))),
        };
        let id: String = row.get::<_, Option<String>>(0).ok().flatten().unwrap_or_default();
        // One session's entries at a time: a large database is never held whole.
        if stream.as_ref().is_none_or(|s| s.id != id) {
            sessions.extend(stream.take().map(|s| s.read(&path, &windows)).into_iter().flatten());
        }
        let s = stream.get_or_insert_with(|| Stream { id, data: Vec::new(), entries: 0, problems: Vec::new() });
        s.entries += 1;
        let json: Option<String> = row.get(1).ok().flatten();
        let event = match json {
            Some(text) => Ok(text.into_bytes()),
            None => {
                let blob: Option<Vec<u8>> = row.get(2).ok().flatten();
                let len: Option<i64> = row.get(3).ok().flatten();
                decompress(blob.as_deref(), len)
            }
        };
        match event {
            Ok(mut bytes) => {
                // A raw line break can only be whitespace between JSON tokens:
                // one entry stays one line.
                bytes.iter_mut().filter(|b| matches!(b, b'\n' | b'\r')).for_each(|b| *b = b' ');
                s.data.extend_from_slice(&bytes);
            }
            Err(why) => s.problems.push((s.entries, why)),
        }
        s.data.push(b'\n');
    }
    sessions.extend(stream.map(|s| s.read(&path, &windows)).into_iter().flatten());
    Ok(sessions)
}

/// One session's entries as JSONL, and what could not be read of them.
struct Stream {
    id: String,
    data: Vec<u8>,
    entries: u64,
    problems: Vec<(u64, String)>,
}

impl Stream {
    fn read(self, path: &Path, windows: &StoreWindows) -> Vec<Session> {
        let mut sessions = super::pi::read(path, &self.data);
        for s in &mut sessions {
            // Without a header naming it, the session is the row's.
            if s.id == super::stem_id(path) && !self.id.is_empty() {
                s.id.clone_from(&self.id);
            }
            windows.apply(s, path, &self.id);
            for (entry, why) in &self.problems {
                s.diagnostics.bad_line(path, *entry, format!("session {}: {why}", self.id));
            }
        }
        sessions
    }
}

/// What the database's session store says of each current session's
/// window, by session id.
#[derive(Default)]
struct StoreWindows {
    by_id: HashMap<String, u64>,
    /// Sessions whose store entry is not JSON.
    unreadable: HashSet<String>,
    /// Why the store could not be read at all.
    problem: Option<String>,
}

impl StoreWindows {
    /// Give `s` (read from the rows of `row_id`) the window the store
    /// records for it, unless its log records one; say why when the store
    /// could not tell.
    fn apply(&self, s: &mut Session, path: &Path, row_id: &str) {
        if s.meta.context_window.is_some() {
            return;
        }
        let ids = [s.id.as_str(), row_id];
        if let Some(&w) = ids.iter().find_map(|id| self.by_id.get(*id)) {
            s.meta.context_window = Some(w);
        } else if let Some(why) = &self.problem {
            s.diagnostics.warn(path, 0, format!("{why}: the context window it records was not read"));
        } else if ids.iter().any(|id| self.unreadable.contains(*id)) {
            let why = "its entry in session_nodes is not JSON: the context window it records was not read";
            s.diagnostics.warn(path, 0, why);
        }
    }
}

/// The windows `session_nodes` records (`entry_json.contextTokens` of each
/// row's current session). A database without that table (older schemas,
/// a copy of the transcripts alone) records none.
fn store_windows(conn: &Connection) -> StoreWindows {
    let mut out = StoreWindows::default();
    let has = table_columns(conn, "session_nodes").unwrap_or_default();
    if !["current_session_id", "entry_json"].iter().all(|c| has.iter().any(|k| k == c)) {
        return out;
    }
    let read = || -> rusqlite::Result<Vec<(Option<String>, Option<String>)>> {
        let mut stmt = conn.prepare("SELECT current_session_id, entry_json FROM session_nodes")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0).ok().flatten(), r.get(1).ok().flatten())))?;
        rows.collect()
    };
    match read() {
        Ok(rows) => {
            for (id, entry) in rows {
                let Some(id) = id.filter(|id| !id.is_empty()) else { continue };
                match entry.as_deref().map(serde_json::from_str::<serde_json::Value>) {
                    Some(Ok(v)) => {
                        if let Some(w) = super::openclaw_store::window_of(&v) {
                            out.by_id.insert(id, w);
                        }
                    }
                    Some(Err(_)) | None => {
                        out.unreadable.insert(id);
                    }
                }
            }
        }
        Err(e) => out.problem = Some(format!("the session store (session_nodes) cannot be read ({e})")),
    }
    out
}

/// Open read-only, writing nothing beside the file: `immutable` (no locks,
/// no shared-memory file) unless a write-ahead log is there to be read.
fn open(path: &Path) -> rusqlite::Result<Connection> {
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    let mode = if wal.is_file() { "mode=ro" } else { "immutable=1" };
    let uri = format!("file:{}?{mode}", uri_path(path));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(uri, flags)
}

/// A path as the path of a `file:` URI: `%`, `?` and `#` escaped.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// The columns of `transcript_events` (none when there is no such table).
fn columns(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    table_columns(conn, "transcript_events")
}

/// The columns of `table` (none when there is no such table).
fn table_columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = stmt.query_map([table], |r| r.get::<_, String>(0))?;
    names.collect()
}

/// A compressed entry, checked against its recorded length.
fn decompress(blob: Option<&[u8]>, len: Option<i64>) -> Result<Vec<u8>, String> {
    let blob = blob.ok_or("entry holds neither event_json nor event_zstd")?;
    let len = len.and_then(|l| u64::try_from(l).ok()).filter(|l| *l <= MAX_EVENT).ok_or("bad event_utf8_bytes")?;
    let decoder = ruzstd::decoding::StreamingDecoder::new(blob).map_err(|e| format!("bad zstd frame: {e}"))?;
    let mut out = Vec::new();
    decoder.take(len + 1).read_to_end(&mut out).map_err(|e| format!("bad zstd frame: {e}"))?;
    if out.len() as u64 != len {
        return Err(format!("event_zstd holds {} bytes, event_utf8_bytes says {len}", out.len()));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "openclaw_db_tests.rs"]
mod tests;
