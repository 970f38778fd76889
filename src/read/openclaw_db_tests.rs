use super::*;
use crate::model::{Block, CompactionKind, Format, Origin};
use crate::testing::fixtures_dir;
use pretty_assertions::assert_eq;

fn agent_dir() -> PathBuf {
    fixtures_dir().join("pi/openclaw/agents/main/agent")
}

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    n.sort();
    n
}

/// The fixture database (scripts/make-openclaw-db-fixture.py): two sessions,
/// one with a compaction and a window in the store, one with an entry stored
/// as a zstd frame.
#[test]
fn an_agent_database_holds_pi_sessions() {
    let before = names(&agent_dir());
    let sessions = read_dir(&agent_dir()).unwrap();
    assert_eq!(names(&agent_dir()), before, "nothing is written beside the database");
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["1b2c3d4e-5f60-4718-9a0b-c1d2e3f40516", "9f1c2d3e-0a4b-4c5d-8e6f-7a8b9c0d1e2f"]);
    for s in &sessions {
        assert_eq!(s.format, Format::Pi);
        assert_eq!(s.source_path, agent_dir().join(DB));
        assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
        assert_eq!(s.meta.cwd.as_deref(), Some("/srv/payments"));
    }
    // The compressed entry: the tool result, whole.
    // The window the database's store records for the first session; none for the other.
    let windows: Vec<Option<u64>> = sessions.iter().map(|s| s.meta.context_window).collect();
    assert_eq!(windows, [None, Some(160_000)]);
    let b = &sessions[0];
    assert_eq!((b.messages.len(), b.calls.len()), (4, 2));
    assert_eq!(b.messages[2].origin, Origin::ToolResult);
    let Block::ToolResult { content, .. } = &b.messages[2].blocks[0] else { panic!("{:?}", b.messages[2]) };
    let text = crate::model::joined_text(content);
    assert_eq!(text.lines().count(), 60);
    assert!(text.ends_with("2026-09-20T08:59:00Z worker-3 retry queue=payments attempt=3 status=timeout"));
    // The compaction, by entry id, as in a JSONL session.
    let a = &sessions[1];
    assert_eq!(a.recorded_compactions.len(), 1);
    let c = &a.recorded_compactions[0];
    assert_eq!((c.kind, c.source_line, c.tokens_before), (CompactionKind::PiCompaction, 7, Some(3990)));
    assert_eq!(a.calls.len(), 4);
}

/// A database, its rows written by `rows` into a `transcript_events` of
/// `columns` (the older schema has no compressed columns).
/// A row: session id, seq, `event_json`, `event_zstd`, `event_utf8_bytes`.
type Row<'a> = (&'a str, i64, Option<&'a str>, Option<Vec<u8>>, Option<i64>);

fn database(dir: &Path, columns: &str, rows: &[Row<'_>]) {
    let db = Connection::open(dir.join(DB)).unwrap();
    db.execute_batch(&format!("CREATE TABLE transcript_events ({columns}, PRIMARY KEY (session_id, seq));")).unwrap();
    for (id, seq, json, blob, len) in rows {
        if columns.contains("event_zstd") {
            db.execute(
                "INSERT INTO transcript_events VALUES (?1, ?2, ?3, 0, ?4, ?5)",
                rusqlite::params![id, seq, json, blob, len],
            )
            .unwrap();
        } else {
            db.execute("INSERT INTO transcript_events VALUES (?1, ?2, ?3, 0)", rusqlite::params![id, seq, json])
                .unwrap();
        }
    }
}

const OLD: &str = "session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT NOT NULL, created_at INTEGER";
const NEW: &str = "session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER, \
event_zstd BLOB, event_utf8_bytes INTEGER";

const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","cwd":"/w"}"#;
const USER: &str = r#"{"type":"message","id":"m1","parentId":null,"message":{"role":"user","content":"hi"}}"#;

/// Entries are read in `seq` order, whatever order they were written in;
/// a session without a header takes its id from its rows.
#[test]
fn entries_are_read_in_seq_order_and_a_headless_session_keeps_its_row_id() {
    let tmp = tempfile::tempdir().unwrap();
    database(
        tmp.path(),
        OLD,
        &[
            ("s1", 2, Some(USER), None, None),
            ("s1", 1, Some(HEADER), None, None),
            ("orphan", 1, Some(USER), None, None),
        ],
    );
    let sessions = read_dir(tmp.path()).unwrap();
    let got: Vec<(&str, usize)> = sessions.iter().map(|s| (s.id.as_str(), s.messages.len())).collect();
    assert_eq!(got, [("orphan", 1), ("s1", 1)]);
    assert_eq!(sessions[1].meta.cwd.as_deref(), Some("/w"), "the header came first");
}

/// A compressed entry that does not decode, or whose length disagrees, is a
/// bad line of its session, at its place; the rest is read.
#[test]
fn a_bad_compressed_entry_is_reported_at_its_place() {
    let tmp = tempfile::tempdir().unwrap();
    database(
        tmp.path(),
        NEW,
        &[
            ("s1", 1, Some(HEADER), None, None),
            ("s1", 2, None, Some(b"not zstd".to_vec()), Some(8)),
            ("s1", 3, None, None, None),
            ("s1", 4, Some(USER), None, None),
        ],
    );
    let s = read_dir(tmp.path()).unwrap().remove(0);
    assert_eq!(s.messages.len(), 1);
    let d: Vec<(u64, &str)> = s.diagnostics.messages.iter().map(|d| (d.line, d.message.as_str())).collect();
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(d[0].0, 2);
    assert!(d[0].1.starts_with("session s1: bad zstd frame"), "{d:?}");
    assert_eq!(d[1], (3, "session s1: entry holds neither event_json nor event_zstd"));
    assert_eq!(s.diagnostics.bad_lines, 2);
}

/// A file by that name that is no OpenClaw database says so.
#[test]
fn what_is_not_an_agent_database_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join(DB), b"{\"type\":\"session\"}\n").unwrap();
    let e = read_dir(tmp.path()).unwrap_err();
    assert!(e.message.starts_with("cannot read: file is not a database"), "{e}");
    std::fs::remove_file(tmp.path().join(DB)).unwrap();
    Connection::open(tmp.path().join(DB)).unwrap().execute_batch("CREATE TABLE t (x);").unwrap();
    let e = read_dir(tmp.path()).unwrap_err();
    assert_eq!(e.message, "no transcript_events table: not an OpenClaw agent database");
}

/// While OpenClaw runs, its latest writes are in the write-ahead log: read
/// with it, and without writing beside it.
#[test]
fn the_write_ahead_log_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    database(tmp.path(), OLD, &[("s1", 1, Some(HEADER), None, None)]);
    let writer = Connection::open(tmp.path().join(DB)).unwrap();
    writer.pragma_update(None, "journal_mode", "WAL").unwrap();
    writer.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    writer.execute("INSERT INTO transcript_events VALUES ('s1', 2, ?1, 0)", [USER]).unwrap();
    let before = names(tmp.path());
    assert!(before.iter().any(|n| n.ends_with("-wal")), "{before:?}");
    let s = read_dir(tmp.path()).unwrap().remove(0);
    assert_eq!(s.messages.len(), 1, "the row only the log holds");
    assert_eq!(names(tmp.path()), before);
    drop(writer);
}

/// A walk finds the agent folder by its database, and the database given by
/// itself stands for its folder.
#[test]
fn discovery_finds_the_agent_folder() {
    let want = crate::read::InputKind::Folder(Format::Pi);
    for p in [fixtures_dir().join("pi/openclaw"), agent_dir().join(DB)] {
        let (inputs, problems) = crate::read::discover(std::slice::from_ref(&p));
        assert!(problems.is_empty(), "{problems:?}");
        let got: Vec<_> = inputs.iter().map(|i| (i.path.clone(), i.kind.clone())).collect();
        assert_eq!(got, [(agent_dir(), want.clone())], "{}", p.display());
    }
}

/// A copy of the database under another name, given as a file, is detected
/// and read the same; a torn copy is one session that says why.
#[test]
fn a_database_given_as_a_file_is_read_as_in_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("backup.db");
    std::fs::copy(agent_dir().join(DB), &copy).unwrap();
    let data = std::fs::read(&copy).unwrap();
    assert_eq!(crate::read::format::detect(&data), Some(Format::Pi));
    let sessions = crate::read::read_bytes(&copy, &data, None).unwrap();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[1].recorded_compactions.len(), 1);
    std::fs::write(&copy, &data[..100]).unwrap();
    let torn = crate::read::read_bytes(&copy, &data[..100], None).unwrap();
    assert_eq!(torn.len(), 1);
    assert!(torn[0].diagnostics.messages[0].message.starts_with("cannot"), "{:?}", torn[0].diagnostics.messages);
}

/// The session store inside the database (`session_nodes`): each row's
/// current session takes the window its entry records, unless its log
/// records one; an entry that is not JSON is said on its session; a
/// window out of bounds, or another key's, is not taken.
#[test]
fn the_store_in_the_database_gives_each_current_session_its_window() {
    let tmp = tempfile::tempdir().unwrap();
    let header = |id: &str| format!(r#"{{"type":"session","version":3,"id":"{id}","cwd":"/w"}}"#);
    let (h1, h2, h3, h4) = (header("s1"), header("s2"), header("s3"), header("s4"));
    database(
        tmp.path(),
        OLD,
        &[
            ("s1", 1, Some(&h1), None, None),
            ("s2", 1, Some(&h2), None, None),
            ("s3", 1, Some(&h3), None, None),
            ("s4", 1, Some(&h4), None, None),
        ],
    );
    let db = Connection::open(tmp.path().join(DB)).unwrap();
    db.execute_batch(
        "CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY, current_session_id TEXT NOT NULL, \
         entry_json TEXT NOT NULL, updated_at INTEGER NOT NULL);",
    )
    .unwrap();
    let rows = [
        ("agent:main:a", "s1", r#"{"sessionId":"s1","contextTokens":128000,"updatedAt":5}"#),
        ("agent:main:b", "s2", "{not json"),
        ("agent:main:c", "s3", r#"{"sessionId":"s3","contextTokens":0}"#),
        ("agent:main:d", "gone", r#"{"sessionId":"gone","contextTokens":64000}"#),
    ];
    for (key, id, entry) in rows {
        db.execute("INSERT INTO session_nodes VALUES (?1, ?2, ?3, 0)", [key, id, entry]).unwrap();
    }
    drop(db);
    let sessions = read_dir(tmp.path()).unwrap();
    let got: Vec<(&str, Option<u64>, usize)> =
        sessions.iter().map(|s| (s.id.as_str(), s.meta.context_window, s.diagnostics.messages.len())).collect();
    assert_eq!(got, [("s1", Some(128_000), 0), ("s2", None, 1), ("s3", None, 0), ("s4", None, 0)]);
    let said = &sessions[1].diagnostics.messages[0].message;
    assert_eq!(said, "its entry in session_nodes is not JSON: the context window it records was not read");
}
