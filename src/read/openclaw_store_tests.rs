//! The window an OpenClaw session store records, found for each transcript
//! beside it, through the reader as a run reads a file.

use crate::model::{Format, Session};
use std::path::Path;

const HEADER: &str = r#"{"type":"session","version":3,"id":"ID","timestamp":"2026-10-01T10:00:00.000Z","cwd":"/w"}"#;
const TURN: &str = r#"{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"hi"}}
{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"usage":{"input":900,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":910}}}"#;

fn transcript(dir: &Path, file: &str, id: &str) -> std::path::PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, format!("{}\n{TURN}\n", HEADER.replace("ID", id))).unwrap();
    path
}

fn read(path: &Path) -> Vec<Session> {
    let data = std::fs::read(path).unwrap();
    crate::read::read_bytes(path, &data, Some(Format::Pi)).unwrap()
}

/// By `sessionFile` (a topic transcript), else by `<sessionId>.jsonl`; a
/// transcript the store does not list, or lists without a window, keeps none.
#[test]
fn each_transcript_takes_the_window_its_store_entry_records() {
    let dir = tempfile::tempdir().unwrap();
    let store = r#"{
      "agent:main:main": {"sessionId": "abc", "updatedAt": 1, "contextTokens": 100000, "totalTokens": 5000},
      "agent:main:telegram:group:-100:topic:7": {"sessionId": "def", "sessionFile": "/home/u/.openclaw/agents/main/sessions/def-topic-7.jsonl", "contextTokens": 64000},
      "agent:main:cron": {"sessionId": "nowin", "contextTokens": 0},
      "agent:main:odd": {"sessionId": "big", "contextTokens": 1e30},
      "agent:main:cut": {"sessionId": "cut", "label": "half an emoji \ud83d", "contextTokens": 32000}
    }"#;
    std::fs::write(dir.path().join("sessions.json"), store).unwrap();
    let window = |file: &str, id: &str| read(&transcript(dir.path(), file, id))[0].meta.context_window;
    assert_eq!(window("abc.jsonl", "abc"), Some(100_000));
    assert_eq!(window("def-topic-7.jsonl", "def"), Some(64_000));
    assert_eq!(window("nowin.jsonl", "nowin"), None);
    assert_eq!(window("big.jsonl", "big"), None);
    // A label cut inside an emoji (a lone surrogate) costs nothing.
    assert_eq!(window("cut.jsonl", "cut"), Some(32_000));
    assert_eq!(window("other.jsonl", "other"), None);
}

/// Without a store, or read from memory (standard input), nothing changes;
/// a store that is not a JSON object of sessions is said, naming its path.
#[test]
fn a_missing_or_broken_store_is_no_window_and_a_broken_one_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = transcript(dir.path(), "abc.jsonl", "abc");
    let s = &read(&path)[0];
    assert_eq!((s.meta.context_window, s.diagnostics.messages.len()), (None, 0));
    let data = std::fs::read(&path).unwrap();
    std::fs::write(dir.path().join("sessions.json"), r#"{"k": {"sessionId": "abc", "contextTokens": 1000}}"#).unwrap();
    let s = &crate::read::read_bytes(Path::new("-"), &data, Some(Format::Pi)).unwrap()[0];
    assert_eq!(s.meta.context_window, None);

    let broken = tempfile::tempdir().unwrap();
    let path = transcript(broken.path(), "abc.jsonl", "abc");
    std::fs::write(broken.path().join("sessions.json"), "[1, 2").unwrap();
    let s = &read(&path)[0];
    assert_eq!(s.meta.context_window, None);
    let said: Vec<_> = s.diagnostics.messages.iter().filter(|d| d.path.ends_with("sessions.json")).collect();
    assert_eq!(said.len(), 1, "{:?}", s.diagnostics.messages);
    assert!(said[0].message.contains("not a JSON object of sessions"), "{}", said[0].message);
}

/// A transcript kept compressed (`abc.jsonl.zst`) is found in the store
/// under the name it had before compression.
#[test]
fn a_compressed_transcript_takes_its_window_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sessions.json"), r#"{"k": {"sessionId": "abc", "contextTokens": 90000}}"#).unwrap();
    let plain = std::fs::read(transcript(dir.path(), "plain.jsonl", "abc")).unwrap();
    let path = dir.path().join("abc.jsonl.zst");
    let packed = ruzstd::encoding::compress_to_vec(&plain[..], ruzstd::encoding::CompressionLevel::Fastest);
    std::fs::write(&path, packed).unwrap();
    let input = crate::read::discover::Input { path: path.clone(), kind: crate::read::discover::InputKind::File };
    let s = crate::read::read_input(&input, None).unwrap().remove(0);
    assert_eq!((s.meta.context_window, s.source_path.as_path()), (Some(90_000), path.as_path()));
}
