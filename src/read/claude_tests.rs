//! Tests of the Claude Code reader: synthetic fixtures (`fixtures/claude-code/`)
//! for each behaviour, the real corpus against MANIFEST.md, and robustness.

use super::typed_tests::read_any;
use super::*;
use crate::model::{ApiErrorKind, Block, Origin, Role, Session};
use crate::testing::{corpus_dir, fixtures_dir};
use std::path::PathBuf;

pub(super) fn fixture(name: &str) -> PathBuf {
    fixtures_dir().join("claude-code").join(name)
}

/// Read one fixture file with the reader alone (no cross-file linking).
pub(super) fn read_fixture(name: &str) -> Vec<Session> {
    let path = fixture(name);
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    read(&path, &data)
}

pub(super) fn text_of(b: &Block) -> &str {
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

// ---------------------------------------------------------------------------
// Synthetic fixtures

#[test]
fn block_lines_merge_into_one_response() {
    let sessions = read_fixture("merge-blocks.jsonl");
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert_eq!(s.id, "5b1e2c4a-0d3e-4c51-9a8e-3f2b7c6d9e01");
    // 4 block-lines of msg_01MergeA + 1 line of msg_01MergeB, each with usage.
    assert_eq!(s.stats.usage_records, 5);
    assert_eq!(s.stats.records, 8);
    assert_eq!(s.calls.len(), 2, "usage counted once per response");
    let a = &s.calls[0];
    assert_eq!(a.response_id.as_deref(), Some("msg_01MergeA"));
    assert_eq!(a.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    let u = a.usage.unwrap();
    assert_eq!(u.output, 366, "largest output_tokens, not the first or the sum");
    assert_eq!((u.uncached_input, u.cache_read, u.cache_write), (3, 11158, 4946));
    assert_eq!(u.provenance, crate::model::UsageProvenance::Anthropic);
    assert_eq!(u.prompt_tokens(), 3 + 11158 + 4946);
    assert_eq!(a.timestamp, crate::read::time::parse_iso("2025-10-24T20:50:03.000Z"));

    let m = &s.messages[a.message_index];
    assert_eq!((m.role, m.origin, m.source_line), (Role::Assistant, Origin::Model, 2));
    assert_eq!(m.blocks.len(), 4);
    assert!(
        matches!(&m.blocks[0], Block::Thinking { text, opaque_len } if text.starts_with("The test fails") && *opaque_len == 28)
    );
    assert_eq!(text_of(&m.blocks[1]), "Let me look at the test and the source.");
    let tools: Vec<&str> = m.tool_uses().map(|(_, name, _)| name).collect();
    assert_eq!(tools, ["Read", "Bash"]);
    // Messages: prompt, merged response, two separate tool-result messages, answer.
    let shape: Vec<(Role, Origin)> = s.messages.iter().map(|m| (m.role, m.origin)).collect();
    assert_eq!(
        shape,
        [
            (Role::User, Origin::Human),
            (Role::Assistant, Origin::Model),
            (Role::User, Origin::ToolResult),
            (Role::User, Origin::ToolResult),
            (Role::Assistant, Origin::Model),
        ]
    );
    assert_eq!(s.calls[1].message_index, 4);
    assert_eq!(s.calls[1].usage.unwrap().output, 42);
    assert_eq!(s.tool_call_count(), 2);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/todo-app"));
    assert_eq!(s.meta.versions, ["2.0.28"]);
    assert_eq!(s.meta.models, ["claude-sonnet-4-5-20250929"]);
}

#[test]
fn tool_error_flags_and_polymorphic_tool_use_result() {
    let s = &read_fixture("merge-blocks.jsonl")[0];
    // Read result: string content, is_error absent, object toolUseResult.
    assert!(matches!(&s.messages[2].blocks[0],
        Block::ToolResult { tool_use_id, content, is_error: None }
            if tool_use_id == "toolu_01Read" && content.len() == 1 && text_of(&content[0]).contains("nextId")));
    // Bash failure: is_error true, string toolUseResult.
    assert!(matches!(&s.messages[3].blocks[0], Block::ToolResult { is_error: Some(true), .. }));
    let d = &read_fixture("duplicate-uuids.jsonl")[0];
    assert!(matches!(&d.messages[2].blocks[0], Block::ToolResult { is_error: Some(false), .. }));
}

#[test]
fn duplicated_uuids_are_kept_once() {
    let s = &read_fixture("duplicate-uuids.jsonl")[0];
    // Every line is a record as it appears; the replayed uuids are not messages.
    assert_eq!(s.stats.records, 6);
    assert_eq!(s.stats.usage_records, 3);
    assert_eq!(s.diagnostics.skipped.get("duplicate-uuid"), Some(&2));
    assert_eq!(s.messages.len(), 4);
    assert_eq!(s.calls.len(), 2);
    assert_eq!(s.tool_call_count(), 1);
    let lines: Vec<u64> = s.messages.iter().map(|m| m.source_line).collect();
    assert_eq!(lines, [1, 2, 3, 6], "the earliest copy is kept");
}

/// A response whose lines took different paths (the second carries a status of
/// an odd type, so it is read as a `Value`) still keeps a block it repeats once,
/// on both paths: a block's identity does not depend on the rest of its line.
#[test]
fn a_block_repeated_on_a_line_read_as_a_value_is_kept_once() {
    let call = r#"{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}"#;
    let typed = format!(
        r#"{{"type":"assistant","message":{{"id":"m1","content":[{{"type":"text","text":"same"}},{{"type":"thinking","thinking":"t","signature":"c2ln"}},{call}]}}}}"#
    );
    // The same blocks, one with a key the reader ignores, plus a new block.
    let value = format!(
        r#"{{"type":"assistant","apiErrorStatus":429.0,"message":{{"id":"m1","content":[{call},{{"type":"thinking","thinking":"t","signature":"c2ln"}},{{"type":"text","text":"same","citations":null}},"new"]}}}}"#
    );
    assert!(rec::Rec::typed(1, typed.as_bytes()).is_some());
    assert!(rec::Rec::typed(2, value.as_bytes()).is_none(), "the second line must take the Value path");
    for data in [format!("{typed}\n{value}\n"), format!("{value}\n{typed}\n")] {
        read_any("x.jsonl", data.as_bytes());
        let s = &read(Path::new("x.jsonl"), data.as_bytes())[0];
        assert_eq!(s.messages.len(), 1);
        let texts: Vec<&str> = s.messages[0].blocks.iter().map(text_of).filter(|t| !t.is_empty()).collect();
        assert_eq!(texts.len(), 2, "{:?}", s.messages[0].blocks);
        assert!(texts.contains(&"same") && texts.contains(&"new"));
        assert_eq!(s.messages[0].tool_uses().count(), 1);
        assert_eq!(s.messages[0].blocks.len(), 4, "one thinking block, one call, two texts");
    }
}

#[test]
fn dag_order_dangling_parent_and_cycle() {
    let s = &read_fixture("dag-order.jsonl")[0];
    let lines: Vec<u64> = s.messages.iter().map(|m| m.source_line).collect();
    // The tool result (line 2) follows the assistant line it answers (line 3); the
    // dangling record and the cycle are kept, in file order.
    assert_eq!(lines, [1, 3, 2, 4, 5, 6, 7]);
    assert_eq!(s.messages[1].role, Role::Assistant);
    assert_eq!(s.messages[2].origin, Origin::ToolResult);
    assert_eq!(s.calls.iter().map(|c| c.message_index).collect::<Vec<_>>(), [1, 3]);
    let cycle_warnings: Vec<_> = s.diagnostics.messages.iter().filter(|d| d.message.contains("cycle")).collect();
    assert_eq!(cycle_warnings.len(), 1);
    assert_eq!(cycle_warnings[0].line, 6);
    assert_eq!(s.diagnostics.bad_lines, 0);
}

#[test]
fn inline_sidechain_is_a_linked_session() {
    let sessions = read_fixture("inline-sidechain.jsonl");
    assert_eq!(sessions.len(), 2);
    let (main, side) = (&sessions[0], &sessions[1]);
    assert_eq!(side.id, format!("{}#agent-s-3003", main.id), "keyed by the sidechain root uuid");
    assert_eq!(side.parent.as_deref(), Some(main.id.as_str()));
    assert_eq!(main.subagents, std::slice::from_ref(&side.id));
    assert_eq!((main.stats.records, side.stats.records), (4, 4));
    assert_eq!((main.stats.usage_records, side.stats.usage_records), (2, 2));
    assert_eq!(
        main.stats.bytes + side.stats.bytes,
        std::fs::metadata(fixture("inline-sidechain.jsonl")).unwrap().len()
    );
    assert_eq!((main.tool_call_count(), side.tool_call_count()), (1, 1));
    assert_eq!((main.calls.len(), side.calls.len()), (2, 2));
    // The sub-agent's type and description come from the parent's Task call.
    assert_eq!(side.meta.agent_type.as_deref(), Some("general-purpose"));
    assert_eq!(side.meta.description.as_deref(), Some("Locate list component"));
    assert_eq!(side.meta.versions, ["1.0.98"]);
    assert!(side.messages[0].blocks.iter().any(|b| text_of(b).starts_with("Find where")));
    // The main session does not see the sidechain's messages.
    assert_eq!(main.messages.len(), 4);
}

#[test]
fn subagent_files_link_to_parent_and_asides_are_not_double_counted() {
    let dir = fixture("project");
    let (inputs, problems) = crate::read::discover(&[dir]);
    assert!(problems.is_empty());
    assert_eq!(inputs.len(), 4, "main, flat agent, nested agent, aside; not the .meta.json");
    let batch = crate::read::read_all(&inputs, None);
    assert!(batch.failures.is_empty(), "{:?}", batch.failures);
    let main_id = "9f5c6a8e-4b7c-4a95-9ecd-7d6fba0b1245";
    let by_id = |id: &str| batch.sessions.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("no session {id}"));
    let main = by_id(main_id);
    let flat = by_id(&format!("{main_id}#agent-a1b2c3d"));
    let nested = by_id(&format!("{main_id}#agent-a0123456789abcdef"));
    let aside = by_id(&format!("{main_id}#agent-aside_question-0f1e2d3c4b5a6978"));
    assert_eq!(batch.sessions.len(), 4);

    assert!(main.parent.is_none());
    let mut subs = main.subagents.clone();
    subs.sort();
    let mut want = vec![flat.id.clone(), nested.id.clone(), aside.id.clone()];
    want.sort();
    assert_eq!(subs, want);
    for s in [flat, nested, aside] {
        assert_eq!(s.parent.as_deref(), Some(main_id));
    }
    assert_eq!(nested.meta.agent_type.as_deref(), Some("Explore"));
    assert_eq!(nested.meta.description.as_deref(), Some("Find Todo model"));
    assert_eq!(flat.meta.versions, ["2.0.65"]);
    assert_eq!((flat.calls.len(), flat.tool_call_count()), (2, 1));
    assert_eq!((nested.calls.len(), nested.tool_call_count()), (2, 1));

    // The aside replays the parent's two responses (same message.id, new
    // requestId) and their context: only its own question and answer remain.
    assert_eq!(main.calls.len(), 3);
    assert_eq!(aside.calls.len(), 1);
    assert_eq!(aside.calls[0].response_id.as_deref(), Some("msg_01AsideOwn"));
    assert_eq!(aside.tool_call_count(), 0);
    assert_eq!(aside.messages.len(), 2);
    assert_eq!(aside.messages[0].origin, Origin::Human);
    assert!(text_of(&aside.messages[0].blocks[0]).starts_with("btw"));
    assert_eq!(aside.calls[0].message_index, 1);
    assert_eq!(aside.diagnostics.skipped.get("replayed-response"), Some(&2));
    assert_eq!(aside.diagnostics.skipped.get("replayed-message"), Some(&3), "prompt and two tool results");
    assert!(!main.diagnostics.skipped.contains_key("replayed-response"));
    // Raw counts still describe the file as written (3 replayed block-lines with
    // usage + its own answer).
    assert_eq!(aside.stats.usage_records, 4);
    let total_calls: usize = batch.sessions.iter().map(|s| s.calls.len()).sum();
    assert_eq!(total_calls, 3 + 2 + 2 + 1);

    // Read alone, without the batch, the aside keeps its replayed copies.
    let path =
        fixture("project/9f5c6a8e-4b7c-4a95-9ecd-7d6fba0b1245/subagents/agent-aside_question-0f1e2d3c4b5a6978.jsonl");
    let alone = read(&path, &std::fs::read(&path).unwrap());
    assert_eq!(alone[0].calls.len(), 3);
    assert_eq!(alone[0].tool_call_count(), 2);
}

#[test]
fn compact_boundary_and_summary() {
    let s = &read_fixture("compaction.jsonl")[0];
    assert_eq!(s.recorded_compactions.len(), 2);
    let c1 = &s.recorded_compactions[0];
    assert_eq!(c1.kind, crate::model::CompactionKind::ClaudeBoundary);
    assert_eq!(c1.source_line, 5);
    assert_eq!(c1.trigger.as_deref(), Some("auto"));
    assert_eq!(c1.tokens_before, Some(155328));
    // The re-attached file and the summary exist only because of the compaction.
    assert_eq!(c1.inserted, 4..6);
    assert!(c1.kept.is_empty());
    assert_eq!(s.messages[4].origin, Origin::Injected);
    assert_eq!(s.messages[5].origin, Origin::CompactSummary);
    assert!(text_of(&s.messages[5].blocks[0]).starts_with("This session is being continued"));
    // The earlier history stays in the log.
    assert_eq!(s.messages[0].origin, Origin::Human);
    assert!(!s.is_inserted(3) && s.is_inserted(5) && !s.is_inserted(6));

    let c2 = &s.recorded_compactions[1];
    assert_eq!((c2.trigger.as_deref(), c2.tokens_before), (Some("manual"), Some(90211)));
    assert_eq!(c2.inserted, 7..8);
    assert_eq!(c2.kept, 5..7, "preservedSegment head..=tail");
    assert_eq!(s.messages.len(), 9);
    assert_eq!(s.calls.len(), 3);
    assert_eq!(s.diagnostics.skipped.get("system/compact_boundary"), None);
}

#[test]
fn summary_lines_are_titles_not_compactions() {
    let s = &read_fixture("titles.jsonl")[0];
    assert!(s.recorded_compactions.is_empty());
    // The summary naming this session's leaf wins over the other session's title
    // and over the ai-title.
    assert_eq!(s.meta.title.as_deref(), Some("Todo app: due dates"));
    assert_eq!(s.diagnostics.skipped.get("summary"), Some(&2));
    assert_eq!(s.messages.len(), 2);
}

#[test]
fn synthetic_api_errors_are_errors_not_calls() {
    let s = &read_fixture("api-errors.jsonl")[0];
    assert!(s.calls.is_empty(), "no real request behind <synthetic> records");
    assert_eq!(s.stats.usage_records, 5, "the lines still carry a usage object");
    assert!(s.meta.models.is_empty());
    let kinds: Vec<(u64, ApiErrorKind)> = s.errors.iter().map(|e| (e.source_line, e.kind)).collect();
    assert_eq!(kinds, [(2, ApiErrorKind::RateLimit), (4, ApiErrorKind::ContextOverflow), (9, ApiErrorKind::Other)]);
    assert!(s.errors[0].message.starts_with("You've hit your limit"));
    assert_eq!(s.diagnostics.skipped.get("duplicate-api-error"), Some(&1));
    // Claude Code never sends a placeholder marked both ways (isApiErrorMessage
    // and the <synthetic> model): an error, and no message.
    assert_eq!(s.diagnostics.skipped.get("assistant/api-error (not sent)"), Some(&2));
    let origins: Vec<(u64, Origin)> = s.messages.iter().map(|m| (m.source_line, m.origin)).collect();
    assert_eq!(
        origins,
        [
            (1, Origin::Human),
            (3, Origin::Human),
            (6, Origin::Human),
            // "No response requested." (isApiErrorMessage: false) is a harness notice.
            (7, Origin::Injected),
            (8, Origin::Human),
            // An error of a version without the flag stays in the context.
            (9, Origin::SyntheticError),
        ]
    );
}

#[test]
fn content_shapes() {
    let s = &read_fixture("content-shapes.jsonl")[0];
    let m = &s.messages;
    // isMeta caveat, local-command output, attachment: injected, not human.
    assert_eq!((m[0].origin, m[1].origin, m[2].origin), (Origin::Injected, Origin::Injected, Origin::Injected));
    assert_eq!(m[2].role, Role::User);
    let att = text_of(&m[2].blocks[0]);
    // As Claude Code words it (claude_attachments.rs).
    assert_eq!(att, "<system-reminder>\nContents of /home/dev/todo-app/CLAUDE.md:\n\nUse pnpm.\n</system-reminder>");
    // Pasted image: media type and payload length only.
    assert_eq!(m[3].origin, Origin::Human);
    assert!(matches!(&m[3].blocks[1], Block::Image { media_type, bytes } if media_type == "image/png" && *bytes == 96));
    // Redacted thinking keeps its opaque length.
    assert!(matches!(&m[4].blocks[0], Block::Thinking { text, opaque_len: 25 } if text.is_empty()));
    assert_eq!(m[4].tool_uses().count(), 4);
    assert_eq!(s.calls[0].usage.unwrap().output, 77);
    // Tool result with an image block, is_error false.
    assert!(matches!(&m[5].blocks[0], Block::ToolResult { content, is_error: Some(false), .. }
        if matches!(content[..], [Block::Image { bytes: 96, .. }])));
    // Persisted-output spill note kept verbatim as text.
    assert!(matches!(&m[6].blocks[0], Block::ToolResult { content, is_error: None, .. }
        if text_of(&content[0]).starts_with("<persisted-output>\nOutput too large")));
    // tool_reference → Other.
    assert!(matches!(&m[7].blocks[0], Block::ToolResult { content, .. }
        if matches!(&content[0], Block::Other { raw } if raw["tool_name"] == "WebFetch")));
    assert!(matches!(&m[8].blocks[0], Block::ToolResult { is_error: Some(true), .. }));
    assert!(m[5..9].iter().all(|m| m.origin == Origin::ToolResult));
    assert_eq!((m[10].origin, text_of(&m[10].blocks[0])), (Origin::Human, "Thanks"));
    assert_eq!(s.calls.len(), 2);
}

/// A PDF the Read tool returns, or the user attaches, is a `document` block:
/// media (its size kept, like an image's), not base64 counted as text; a
/// text document is the text the model reads.
#[test]
fn documents_are_media_or_text() {
    let s = &read_fixture("pdf-documents.jsonl")[0];
    let m = &s.messages;
    let Block::ToolResult { content, .. } = &m[2].blocks[0] else { panic!("{:?}", m[2].blocks) };
    assert!(text_of(&content[0]).starts_with("PDF file read"));
    assert!(
        matches!(&content[1], Block::Image { media_type, bytes } if media_type == "application/pdf" && *bytes > 8000)
    );
    assert!(matches!(&m[4].blocks[1], Block::Image { media_type, .. } if media_type == "application/pdf"));
    assert_eq!(text_of(&m[4].blocks[2]), "Shipping is VAT-exempt for EU B2B customers with a valid VAT ID.");
    // Each PDF weighs an image, not its 8,000 characters of base64.
    use crate::tokens::Estimator as _;
    assert_eq!(crate::tokens::Chars4.block_tokens(&content[1]), crate::tokens::IMAGE_TOKENS);
    // A source of no known shape leaves the block as it was written.
    for raw in [
        serde_json::json!({"type": "document", "source": "docs/a.pdf", "title": "a"}),
        serde_json::json!({"type": "document", "source": {"type": "text"}}),
        serde_json::json!({"type": "document", "source": {"type": "s3", "key": "a.pdf"}}),
        serde_json::json!({"type": "document"}),
    ] {
        assert_eq!(convert_block(raw.clone()), Block::Other { raw });
    }
}

#[test]
fn truncated_and_malformed_lines_are_reported_without_content() {
    let s = &read_fixture("truncated.jsonl")[0];
    assert_eq!(s.diagnostics.bad_lines, 2);
    let lines: Vec<u64> = s.diagnostics.messages.iter().map(|d| d.line).collect();
    assert_eq!(lines, [2, 4]);
    assert!(s.diagnostics.messages[1].message.contains("truncated"));
    for d in &s.diagnostics.messages {
        assert!(!d.message.contains("SECRET"), "diagnostics never quote content: {d}");
        assert!(d.path.ends_with("truncated.jsonl"));
    }
    assert_eq!(s.stats.records, 4);
    assert_eq!(s.messages.len(), 2);
    assert_eq!(s.calls.len(), 1);
}

/// Claude Code 2.1 says who started a user turn. A background task's notice,
/// a harness prompt (`promptSource: system`), another session's message and
/// a `!` command's output are not the person's words; a typed or SDK prompt
/// and the `!` command itself are.
#[test]
fn user_turns_the_harness_started_are_injected() {
    use Origin::{Human, Injected, Model, ToolResult};
    let s = &read_fixture("turn-origins.jsonl")[0];
    let origins: Vec<Origin> = s.messages.iter().map(|m| m.origin).collect();
    assert_eq!(
        origins,
        [Human, Model, ToolResult, Model, Injected, Model, Injected, Human, Injected, Injected, Human, Model]
    );
    assert_eq!(s.calls.len(), 4);
    // The same records read whole (the `Value` path) say the same.
    let path = fixture("turn-origins.jsonl");
    let data = std::fs::read(&path).unwrap_or_default();
    let slow: Vec<Origin> = read_with(&path, &data, false)[0].messages.iter().map(|m| m.origin).collect();
    assert_eq!(slow, origins);
}

/// A response served in fast mode is billed at a multiple of the standard
/// rates: its call says so, once per response however many lines it spans,
/// and a response at standard speed does not.
#[test]
fn fast_mode_responses_mark_their_calls() {
    let s = &read_fixture("fast-mode.jsonl")[0];
    let fast: Vec<bool> = s.calls.iter().map(|c| c.fast).collect();
    assert_eq!(fast, [true, false]);
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
    assert!(read_fixture("cache-1h.jsonl")[0].calls.iter().all(|c| !c.fast));
    // Both parse paths read it.
    let path = fixture("fast-mode.jsonl");
    let data = std::fs::read(&path).unwrap_or_default();
    let slow: Vec<bool> = read_with(&path, &data, false)[0].calls.iter().map(|c| c.fast).collect();
    assert_eq!(slow, fast);
}

/// Claude Code before 2.1.132 cut a failed tool's output inside an emoji and
/// wrote the half it kept as a lone surrogate escape (`\ud83d`). The record
/// is read, the half as U+FFFD, and a whole pair elsewhere is kept.
#[test]
fn a_tool_result_cut_inside_an_emoji_is_read() {
    let s = &read_fixture("lone-surrogate.jsonl")[0];
    assert_eq!(s.diagnostics.bad_lines, 0, "{:?}", s.diagnostics.messages);
    assert_eq!(s.messages.len(), 4);
    assert_eq!(s.calls.len(), 2);
    let Block::ToolResult { content, is_error, .. } = &s.messages[2].blocks[0] else {
        panic!("a tool result: {:?}", s.messages[2].blocks)
    };
    assert_eq!(*is_error, Some(true));
    assert!(text_of(&content[0]).ends_with("Last heading: Launch \u{FFFD}"), "{content:?}");
    assert!(text_of(&s.messages[3].blocks[0]).starts_with("The \u{1F680} heading"));
}

#[test]
fn unknown_kinds_are_counted_and_kept() {
    let s = &read_fixture("unknown-kinds.jsonl")[0];
    assert_eq!(s.diagnostics.unknown_kinds.get("cost-state"), Some(&2));
    assert_eq!(s.diagnostics.unknown_kinds.get("atis-latch"), Some(&1));
    assert_eq!(s.diagnostics.unknown_kinds.get("(no type)"), Some(&1));
    let raw_lines: Vec<u64> = s.diagnostics.unknown_raw.iter().map(|(l, _)| *l).collect();
    assert_eq!(raw_lines, [2, 3, 4, 6]);
    assert!(s.diagnostics.unknown_raw[0].1.contains("\"latched\":true"));
    assert_eq!(s.messages.len(), 2);
    assert_eq!(s.diagnostics.bad_lines, 0);
}

#[test]
fn string_and_array_user_content() {
    let data = br#"{"type":"user","uuid":"p1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"plain"}}
{"type":"user","uuid":"p2","parentUuid":"p1","sessionId":"s","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}
{"type":"user","uuid":"p3","parentUuid":"p2","sessionId":"s","message":{"role":"user","content":null}}
{"type":"user","uuid":"p4","parentUuid":"p3","sessionId":"s","message":{"role":"user","content":7}}
{"type":"assistant","uuid":"p5","parentUuid":"p4","sessionId":"s","message":{"id":"m","role":"assistant","content":"bare string"}}
{"type":"user","uuid":"p6","parentUuid":"p5","sessionId":"s"}
[1,2,3]
"#;
    let s = &read(Path::new("inline.jsonl"), data)[0];
    assert_eq!(s.id, "s");
    assert_eq!(s.messages[0].blocks, [Block::text("plain")]);
    assert_eq!(s.messages[1].blocks, [Block::text("a"), Block::text("b")]);
    assert!(s.messages[2].blocks.is_empty());
    assert!(matches!(s.messages[3].blocks[..], [Block::Other { .. }]));
    assert_eq!(s.messages[4].blocks, [Block::text("bare string")]);
    assert_eq!(s.calls.len(), 1);
    assert!(s.calls[0].usage.is_none());
    assert_eq!(s.diagnostics.bad_lines, 2, "a user record without message, a non-object line");
    assert_eq!(s.stats.records, 7);
}

/// The cache writes of each response by the lifetime it asked for
/// (`usage.cache_creation`), counted once per response, whatever the number
/// of lines it was written over; a log without them says nothing.
#[test]
fn cache_writes_by_lifetime_are_summed_per_response() {
    let s = read_fixture("cache-1h.jsonl").remove(0);
    assert_eq!(s.meta.cache_writes_by_ttl, Some((0, 14_200 + 180 + 40)));
    // The same response written over two lines (as Claude Code writes one
    // line per content block) is counted once.
    let path = fixture("cache-1h.jsonl");
    let data = std::fs::read_to_string(&path).unwrap();
    let first_response = data.lines().nth(1).unwrap();
    let twice = format!("{first_response}\n{data}");
    let s = read(&path, twice.as_bytes()).remove(0);
    assert_eq!(s.meta.cache_writes_by_ttl, Some((0, 14_200 + 180 + 40)));
    assert_eq!(read_fixture("titles.jsonl")[0].meta.cache_writes_by_ttl, Some((4_946, 0)));
    assert_eq!(read_fixture("compaction-v1.jsonl")[0].meta.cache_writes_by_ttl, None);
}
