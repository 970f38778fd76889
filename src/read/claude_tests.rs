//! Tests of the Claude Code reader: synthetic fixtures (`fixtures/claude-code/`)
//! for each behaviour, the real corpus against MANIFEST.md, and robustness.

use super::*;
use crate::model::{ApiErrorKind, Block, Origin, Role, Session};
use crate::testing::{corpus_dir, fixtures_dir};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    fixtures_dir().join("claude-code").join(name)
}

/// Read one fixture file with the reader alone (no cross-file linking).
fn read_fixture(name: &str) -> Vec<Session> {
    let path = fixture(name);
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    read(&path, &data)
}

fn text_of(b: &Block) -> &str {
    match b {
        Block::Text { text } => text,
        _ => "",
    }
}

// ---------------------------------------------------------------------------
// Real corpus

/// One row of MANIFEST.md for a corpus file.
struct ManifestRow {
    bytes: u64,
    lines: u64,
    tool_calls: usize,
    usage_recs: u64,
    versions: String,
    markers: String,
}

fn manifest_row(manifest: &str, file: &str) -> ManifestRow {
    let key = format!("| `claude-code/{file}` |");
    let row = manifest.lines().find(|l| l.starts_with(&key)).unwrap_or_else(|| panic!("{file} not in MANIFEST"));
    let cols: Vec<&str> = row.split('|').map(str::trim).collect();
    // | file | repo | source path | commit | format | bytes | lines | tool calls | usage recs | versions | markers |
    let num = |i: usize| cols[i].parse::<u64>().unwrap_or_else(|_| panic!("column {i} of {file}: {:?}", cols[i]));
    ManifestRow {
        bytes: num(6),
        lines: num(7),
        tool_calls: num(8) as usize,
        usage_recs: num(9),
        versions: cols[10].to_string(),
        markers: cols[11].to_string(),
    }
}

fn marker(markers: &str, name: &str) -> Option<u64> {
    markers.split(',').map(str::trim).find_map(|m| m.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
}

#[test]
fn corpus_matches_manifest() {
    let Some(corpus) = corpus_dir() else { return };
    let manifest = std::fs::read_to_string(corpus.join("MANIFEST.md")).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus.join("claude-code"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 8, "the corpus has 8 Claude Code files");
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let want = manifest_row(&manifest, &name);
        let data = std::fs::read(&path).unwrap();
        let sessions = read(&path, &data);

        let tool_calls: usize = sessions.iter().map(Session::tool_call_count).sum();
        let usage_recs: u64 = sessions.iter().map(|s| s.stats.usage_records).sum();
        let records: u64 = sessions.iter().map(|s| s.stats.records).sum();
        let bytes: u64 = sessions.iter().map(|s| s.stats.bytes).sum();
        assert_eq!(tool_calls, want.tool_calls, "{name}: tool calls");
        assert_eq!(usage_recs, want.usage_recs, "{name}: usage records");
        assert_eq!(records, want.lines, "{name}: records");
        assert_eq!(bytes, want.bytes, "{name}: bytes");

        let main = &sessions[0];
        assert!(main.parent.is_none(), "{name}");
        assert!(main.meta.versions.contains(&want.versions), "{name}: versions {:?}", main.meta.versions);
        for s in &sessions {
            assert_eq!(s.diagnostics.bad_lines, 0, "{name}: {:?}", s.diagnostics.messages);
            assert!(s.diagnostics.unknown_kinds.is_empty(), "{name}: {:?}", s.diagnostics.unknown_kinds);
            assert!(s.diagnostics.messages.is_empty(), "{name}: {:?}", s.diagnostics.messages);
            // Every merged response is one call with usage, pointing at an
            // assistant message; usage is never the sum of the block-lines.
            for c in &s.calls {
                assert_eq!(s.messages[c.message_index].role, Role::Assistant, "{name}");
                assert!(c.usage.is_some(), "{name}");
                assert!(c.response_id.is_some(), "{name}");
            }
        }

        // Markers: sidechain records land in sub-agent sessions, tool errors keep
        // their flag, summary lines are titles (skipped), never compactions.
        let side_records: u64 = sessions[1..].iter().map(|s| s.stats.records).sum();
        assert_eq!(side_records, marker(&want.markers, "sidechain").unwrap_or(0), "{name}: sidechain records");
        for s in &sessions[1..] {
            assert_eq!(s.parent.as_deref(), Some(main.id.as_str()), "{name}");
            assert!(main.subagents.contains(&s.id), "{name}");
            assert!(s.id.starts_with(&format!("{}#agent-", main.id)), "{name}: {}", s.id);
        }
        if let Some(errs) = marker(&want.markers, "tool_err") {
            let flagged: u64 = sessions
                .iter()
                .flat_map(|s| &s.messages)
                .flat_map(|m| &m.blocks)
                .filter(|b| matches!(b, Block::ToolResult { is_error: Some(true), .. }))
                .count() as u64;
            assert_eq!(flagged, errs, "{name}: tool errors");
        }
        let summaries = marker(&want.markers, "summary").unwrap_or(0);
        assert_eq!(main.diagnostics.skipped.get("summary").copied().unwrap_or(0), summaries, "{name}");
        assert!(sessions.iter().all(|s| s.recorded_compactions.is_empty()), "{name}");
    }
}

/// Usage is merged per response with the largest `output_tokens` on the real file
/// whose block-lines carry partial counts (`[30,30,30,30,285]`).
#[test]
fn corpus_partial_output_tokens() {
    let Some(corpus) = corpus_dir() else { return };
    let path = corpus.join("claude-code/d-kimuson__claude-code-viewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    let sessions = read(&path, &std::fs::read(&path).unwrap());
    let s = &sessions[0];
    assert_eq!(s.calls.len(), 7, "7 distinct message ids");
    let outputs: Vec<u64> = s.calls.iter().map(|c| c.usage.unwrap().output).collect();
    assert_eq!(outputs, [322, 285, 146, 41, 1, 86, 72]);
    assert_eq!(s.messages[s.calls[1].message_index].tool_uses().count(), 5);
}
