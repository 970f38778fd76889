//! Tests of the format registry: every format once, detection of every fixture,
//! and the cross-file linking a streaming batch asks it for.

use super::*;
use crate::read::{InputKind, discover, read_regular_file};
use crate::testing::fixtures_dir;

#[test]
fn the_registry_holds_every_format_once_with_distinct_names() {
    for f in Format::ALL {
        let n = FORMATS.iter().filter(|r| r.id() == f).count();
        assert_eq!(n, 1, "{} is in the registry {n} times", f.name());
        assert_eq!(of(f).map(|r| r.id()), Some(f));
    }
    assert_eq!(FORMATS.len(), Format::ALL.len());
    let mut names: Vec<&str> = FORMATS.iter().map(|f| f.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), FORMATS.len(), "two formats share a name");
    for f in FORMATS {
        assert_eq!(Format::from_name(f.name()), Some(f.id()), "--format {} must name it", f.name());
    }
}

/// Discovery knows no format by name: a folder holding a format's marker
/// file is one input of that format (found by a walk, or given as the marker
/// itself), read by the format's folder reader; the names a format calls
/// sidecars or skipped folders are left out of a walk.
#[test]
fn discovery_asks_the_registry_for_session_folders_and_sidecars() {
    let dir = tempfile::tempdir().unwrap();
    let marked: Vec<_> = FORMATS.iter().filter_map(|f| Some((f.id(), f.folder_marker()?))).collect();
    assert!(!marked.is_empty(), "no format has session folders");
    for (f, marker) in &marked {
        let task = dir.path().join(f.name()).join("task-1");
        std::fs::create_dir_all(&task).unwrap();
        if marker.ends_with(".sqlite") {
            // An OpenClaw agent database with no session.
            let db = rusqlite::Connection::open(task.join(marker)).unwrap();
            db.execute_batch("CREATE TABLE transcript_events (session_id TEXT, seq INTEGER, event_json TEXT);")
                .unwrap();
        } else {
            std::fs::write(task.join(marker), "[]").unwrap();
        }
        // Any other file of the folder belongs to it, not to the walk.
        std::fs::write(task.join("notes.json"), "{}").unwrap();
        let (walked, problems) = discover(std::slice::from_ref(&dir.path().join(f.name())));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(walked, [crate::read::Input { path: task.clone(), kind: InputKind::Folder(*f) }]);
        let (given, _) = discover(&[task.join(marker)]);
        assert_eq!(given, walked, "the marker file stands for its folder");
        let read = crate::read::read_input(&given[0], None).map(|s| s.len());
        assert!(read.is_ok(), "{}: {read:?}", f.name());
    }
    let side = dir.path().join("sidecars");
    std::fs::create_dir_all(side.join("tool-results")).unwrap();
    std::fs::write(side.join("tool-results/out.jsonl"), "{}").unwrap();
    for name in [
        "sessions-index.json",
        "history.jsonl",
        "ui_messages.json",
        "sessions.json",
        "logs.json",
        "a.meta.json",
        "history_item.json",
    ] {
        assert!(is_sidecar(name), "{name}");
        std::fs::write(side.join(name), "{}").unwrap();
    }
    std::fs::write(side.join("s.jsonl"), "{}").unwrap();
    let (inputs, _) = discover(std::slice::from_ref(&side));
    assert_eq!(inputs, [crate::read::Input { path: side.join("s.jsonl"), kind: InputKind::File }]);
}

/// Every fixture is detected as the format of the folder it is in
/// (`fixtures/<format name>/…`), and every format has a fixture.
#[test]
fn detection_picks_the_format_of_every_fixture() {
    let dir = fixtures_dir();
    let (inputs, problems) = discover(std::slice::from_ref(&dir));
    assert!(problems.is_empty(), "{problems:?}");
    let mut seen = Vec::new();
    for input in &inputs {
        let rel = input.path.strip_prefix(&dir).unwrap_or(&input.path);
        let folder = rel.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned());
        let Some(expected) = folder.as_deref().and_then(Format::from_name) else {
            panic!("{}: not under a folder named after a format", rel.display());
        };
        let file = match input.kind {
            InputKind::Folder(f) => input.path.join(super::of(f).and_then(|r| r.folder_marker()).unwrap_or_default()),
            _ => input.path.clone(),
        };
        let mut data = read_regular_file(&file).unwrap();
        if crate::read::compressed::is_zstd(&data) {
            data = crate::read::compressed::decompress(&data, 1 << 30).unwrap();
        }
        assert_eq!(detect(&data), Some(expected), "{}", file.display());
        seen.push(expected);
    }
    for f in Format::ALL {
        assert!(seen.contains(&f), "no fixture of {}", f.name());
    }
}

#[test]
fn detection_precedence_sure_then_likely_then_weak() {
    // A generic-looking line first, then a pi message: pi is likely, generic weak.
    let data = b"{\"role\":\"user\",\"content\":\"hi\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\"}}\n";
    assert_eq!(detect(data), Some(Format::Pi));
    // A sure record anywhere in the first records wins over earlier likely ones.
    let data = b"{\"type\":\"message\",\"message\":{\"role\":\"user\"}}\n{\"type\":\"thread.started\"}\n";
    assert_eq!(detect(data), Some(Format::CodexExec));
    assert_eq!(detect(b"{\"role\":\"user\",\"content\":\"hi\"}\n{\"x\":1}\n"), Some(Format::Generic));
    assert_eq!(detect(b"  \n"), None);
    assert_eq!(detect(b"{\"x\":1}\n"), None);
}

/// The linking a streaming batch does file by file, asked through the registry:
/// the sub-agent files are linked files, their sessions linked sessions, and a
/// `/btw` aside drops the responses its parent owns.
#[test]
fn claude_sub_agents_link_through_the_registry() {
    let dir = fixtures_dir().join("claude-code/project");
    let (inputs, _) = discover(std::slice::from_ref(&dir));
    let linked: Vec<bool> = inputs.iter().map(|i| is_linked_file(&i.path)).collect();
    assert_eq!(linked.iter().filter(|&&l| l).count(), 3, "{inputs:?}");
    let mut owned = Vec::new();
    let mut subagents = Vec::new();
    for (input, linked) in inputs.iter().zip(linked) {
        let data = read_regular_file(&input.path).unwrap();
        for s in crate::read::read_bytes(&input.path, &data, None).unwrap() {
            assert_eq!(is_linked_session(&s), linked, "{}", s.id);
            if linked {
                subagents.push(s);
            } else {
                owned_keys(&s, &mut owned);
            }
        }
    }
    assert!(!owned.is_empty());
    let owned: HashSet<String> = owned.into_iter().collect();
    let calls_before: usize = subagents.iter().map(|s| s.calls.len()).sum();
    for s in &mut subagents {
        drop_replayed(s, &owned);
    }
    let calls_after: usize = subagents.iter().map(|s| s.calls.len()).sum();
    assert!(calls_after < calls_before, "the aside's replayed responses are dropped");
    // Other formats link nothing.
    assert!(!is_linked_file(&fixtures_dir().join("codex/compacted.jsonl")));
}

#[test]
fn a_logs_path_names_the_sessions_its_agent_wrote_into_it() {
    let keys = |p: &str| {
        let mut out = Vec::new();
        path_keys(Path::new(p), &mut out);
        out
    };
    let id = "019f1a00-0000-7000-8000-000000000a01";
    assert_eq!(
        keys(&format!("/h/.codex/sessions/2026/10/02/rollout-2026-10-02T09-00-00-{id}.jsonl")),
        [format!("file:rollout-2026-10-02T09-00-00-{id}.jsonl"), format!("session:{id}")]
    );
    assert_eq!(keys(&format!("/p/{id}.jsonl")), [format!("file:{id}.jsonl"), format!("session:{id}")], "Claude Code");
    // Names that carry no id give only themselves.
    assert_eq!(
        keys("/x/rollout-2026-10-02T09-00-00-notauuid.jsonl"),
        ["file:rollout-2026-10-02T09-00-00-notauuid.jsonl"]
    );
    assert_eq!(keys("/x/notes.jsonl"), ["file:notes.jsonl"]);
    assert_eq!(keys("/x/rollout-.jsonl"), ["file:rollout-.jsonl"], "a short name is no panic");
}
