//! Tests of the Codex rollout reader: synthetic fixtures (`fixtures/codex/`), the
//! real corpus against MANIFEST.md (both Codex folders), and robustness.

use super::*;
use crate::model::{ApiErrorKind, Session, UsageProvenance};
use crate::testing::{corpus_dir, fixtures_dir};
use proptest::prelude::*;

fn fixture(name: &str) -> Session {
    let path = fixtures_dir().join("codex").join(name);
    let data = std::fs::read(&path).unwrap();
    let mut sessions = read(&path, &data);
    assert_eq!(sessions.len(), 1);
    sessions.pop().unwrap()
}

/// `(tool_use_id, is_error)` of every tool result, in order.
fn results(s: &Session) -> Vec<(String, Option<bool>)> {
    s.messages
        .iter()
        .flat_map(|m| m.blocks.iter())
        .filter_map(|b| match b {
            Block::ToolResult { tool_use_id, is_error, .. } => Some((tool_use_id.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

fn result_text(s: &Session, id: &str) -> String {
    for b in s.messages.iter().flat_map(|m| m.blocks.iter()) {
        if let Block::ToolResult { tool_use_id, content, .. } = b
            && tool_use_id == id
        {
            return content
                .iter()
                .map(|c| match c {
                    Block::Text { text } => text.as_str(),
                    _ => "",
                })
                .collect();
        }
    }
    panic!("no result for {id}");
}

fn usage(input: u64, cached: u64, output: u64, reasoning: u64) -> Usage {
    Usage {
        uncached_input: input - cached,
        cache_read: cached,
        cache_write: 0,
        output,
        reasoning,
        provenance: UsageProvenance::OpenAi,
    }
}

#[test]
fn v040_json_in_string_outputs_and_usage_before_items() {
    let s = fixture("v040_json_output.jsonl");
    assert_eq!(s.format, Format::Codex);
    assert_eq!(s.id, "0199aaaa-0040-7000-8000-000000000040");
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/proj"));
    assert_eq!(s.meta.versions, vec!["0.40.0"]);
    assert_eq!(s.meta.models, vec!["gpt-5-codex"]);
    assert_eq!(s.tool_call_count(), 3);
    // Inner output text, exit code from metadata; the sandbox failure text.
    assert_eq!(
        results(&s),
        vec![
            ("call_ls".to_string(), Some(false)),
            ("call_build".to_string(), Some(true)),
            ("call_sandbox".to_string(), Some(true))
        ]
    );
    assert_eq!(result_text(&s, "call_ls"), "Cargo.toml\nsrc\n");
    // Origins: environment context injected, the IDE-wrapped prompt is human.
    assert_eq!(s.messages[0].origin, Origin::Injected);
    assert_eq!(s.messages[1].origin, Origin::Human);
    // Reasoning: joined summaries, encrypted content by length.
    let Block::Thinking { text, opaque_len } = &s.messages[2].blocks[0] else { panic!("{:?}", s.messages[2]) };
    assert_eq!(text, "**Listing files**\n\nThen the build.");
    assert_eq!(*opaque_len, 100);
    // function_call arguments parsed into a JSON value.
    let (_, name, input) = s.messages[2].tool_uses().next().unwrap();
    assert_eq!(name, "shell");
    assert_eq!(input["command"][2], "ls");
    // Four responses; usage preceded each; the repeated last token_count counts once.
    assert_eq!(s.calls.len(), 4);
    assert_eq!(s.usage_count(), 4);
    assert_eq!(s.stats.usage_records, 5);
    assert_eq!(s.calls[0].usage, Some(usage(1000, 200, 50, 20)));
    assert_eq!(s.calls[3].usage, Some(usage(1700, 1400, 60, 10)));
    assert_eq!(s.calls[0].model.as_deref(), Some("gpt-5-codex"));
    assert_eq!(s.calls[0].timestamp, time::parse_iso("2025-09-25T01:00:02.000Z"));
    for c in &s.calls {
        assert_eq!(s.messages[c.message_index].role, Role::Assistant);
    }
    let last = &s.messages[s.calls[3].message_index];
    assert!(matches!(&last.blocks[1], Block::Text { text } if text.starts_with("The build fails")));
    // Event duplicates are skipped, not messages.
    assert_eq!(s.diagnostics.skipped.get("event_msg/agent_message"), Some(&1));
    assert_eq!(s.diagnostics.skipped.get("event_msg/user_message"), Some(&1));
    assert_eq!(s.diagnostics.skipped.get("event_msg/token_count (repeat)"), Some(&1));
    assert_eq!(s.messages.len(), 9);
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
    assert_eq!(s.stats.records, 25);
    assert_eq!(s.stats.bytes, std::fs::metadata(fixtures_dir().join("codex/v040_json_output.jsonl")).unwrap().len());
}

#[test]
fn v077_exit_code_text_custom_tool_and_usage_after_items() {
    let s = fixture("v077_exit_code.jsonl");
    assert_eq!(s.meta.models, vec!["gpt-5.2-codex"]);
    // developer → system/injected; AGENTS.md and environment → injected.
    assert_eq!((s.messages[0].role, s.messages[0].origin), (Role::System, Origin::Injected));
    assert_eq!(s.messages[1].origin, Origin::Injected);
    assert_eq!(s.messages[2].origin, Origin::Injected);
    assert_eq!(s.messages[3].origin, Origin::Human);
    // The header says 101; the "Exit code: 0" inside the output is not read.
    assert_eq!(
        results(&s),
        vec![
            ("call_t1".to_string(), Some(true)),
            ("call_patch".to_string(), Some(false)),
            ("call_t2".to_string(), Some(false)),
            ("call_legacy".to_string(), Some(false)),
        ]
    );
    // apply_patch input is raw text.
    let patch = s.messages.iter().flat_map(|m| m.tool_uses()).find(|(id, ..)| *id == "call_patch").unwrap();
    assert_eq!(patch.1, "apply_patch");
    assert!(matches!(patch.2, Value::String(t) if t.starts_with("*** Begin Patch")));
    // The two outputs after the second response form one user message.
    let two = s.messages.iter().find(|m| m.blocks.len() == 2 && m.has_tool_results()).unwrap();
    assert_eq!(two.origin, Origin::ToolResult);
    // Four responses, usage from the token_count after each; info:null and the
    // repeat ignored.
    assert_eq!(s.calls.len(), 4);
    assert_eq!(s.calls[0].usage, Some(usage(2000, 0, 80, 40)));
    assert_eq!(s.calls[1].usage, Some(usage(2500, 1900, 120, 60)));
    assert_eq!(s.calls[3].usage, Some(usage(2800, 2600, 30, 0)));
    assert_eq!(s.stats.usage_records, 5);
    assert_eq!(s.diagnostics.skipped.get("event_msg/token_count (info: null)"), Some(&1));
    assert_eq!(s.diagnostics.skipped.get("response_item/ghost_snapshot"), Some(&1));
    // reasoning (no summary) + custom tool + function call = one message.
    let m = &s.messages[s.calls[1].message_index];
    assert_eq!(m.blocks.len(), 3);
    assert!(matches!(m.blocks[0], Block::Thinking { ref text, opaque_len: 36 } if text.is_empty()));
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
}

#[test]
fn v0118_exec_command_exit_codes_and_events() {
    let s = fixture("v0118_exec_command.jsonl");
    assert_eq!(s.meta.versions, vec!["0.118.0"]);
    assert_eq!(s.messages[0].origin, Origin::Injected); // <user_instructions>
    let prompt = &s.messages[1];
    assert_eq!(prompt.origin, Origin::Human);
    assert!(matches!(prompt.blocks[1], Block::Image { ref media_type, bytes: 15 } if media_type == "image/png"));
    assert_eq!(
        results(&s),
        vec![
            ("call_bun".to_string(), Some(true)),   // Process exited with code 1
            ("call_npm".to_string(), None),         // still running: unknown
            ("call_poll".to_string(), Some(false)), // from exec_command_end
        ]
    );
    // commentary message + reasoning + exec_command + web search: one response.
    let first = &s.messages[s.calls[0].message_index];
    assert_eq!(first.blocks.len(), 4);
    assert!(matches!(first.blocks[3], Block::Other { .. }));
    assert_eq!(s.tool_call_count(), 3);
    assert_eq!(s.calls.len(), 4);
    assert_eq!(s.usage_count(), 4);
    assert_eq!(s.calls[0].model.as_deref(), Some("gpt-5.4"));
}

#[test]
fn compacted_replacement_history_is_inserted() {
    let s = fixture("compacted.jsonl");
    assert_eq!(s.recorded_compactions.len(), 2);
    let c = &s.recorded_compactions[0];
    assert_eq!(c.kind, CompactionKind::CodexCompacted);
    assert_eq!(c.inserted, 5..8);
    assert!(c.kept.is_empty());
    let origins: Vec<Origin> = s.messages[c.inserted.clone()].iter().map(|m| m.origin).collect();
    assert_eq!(origins, vec![Origin::Injected, Origin::Human, Origin::CompactSummary]);
    assert!(s.is_inserted(7) && !s.is_inserted(8));
    // context_compacted after compacted is the same compaction.
    assert_eq!(s.diagnostics.skipped.get("event_msg/context_compacted"), Some(&1));
    // Message-only compaction with no summary prefix: the history bridge,
    // with the person's messages since the last compaction and the summary.
    let c2 = &s.recorded_compactions[1];
    assert_eq!(c2.inserted.len(), 1);
    assert_eq!(c2.head, 0..1);
    let m = &s.messages[c2.inserted.start];
    assert_eq!((m.role, m.origin), (Role::User, Origin::CompactSummary));
    let bridge = m.text();
    let joined = "install bun\n\nAnother language model started to solve this problem";
    assert!(
        bridge.contains(joined) && bridge.contains("npm tests pass.\n\nnow run the tests with bun\n\n"),
        "{bridge}"
    );
    assert!(bridge.ends_with("Summary: bun installed, tests pass."), "{bridge}");
    // Inserted messages are never calls; the compaction's own request is unpaired.
    assert_eq!(s.calls.len(), 4);
    assert_eq!(s.usage_count(), 4);
    assert!(s.calls.iter().all(|c| !s.is_inserted(c.message_index)));
    assert_eq!(s.calls[2].usage, Some(usage(900, 0, 40, 0)));
    assert_eq!(s.diagnostics.messages.len(), 1);
    assert!(s.diagnostics.messages[0].message.starts_with("1 token_count"));
}

/// `(origin, text)` of the messages compaction `c` inserted.
fn inserted(s: &Session, c: &RecordedCompaction) -> Vec<(Origin, String)> {
    s.messages[c.inserted.clone()].iter().map(|m| (m.origin, m.text().into_owned())).collect()
}

/// Codex 0.40–0.4x record a compaction as its summary alone and rebuild the
/// history as the initial context and one bridge message joining every user
/// message of the history (an earlier bridge too) with the summary.
#[test]
fn a_summary_alone_of_the_first_versions_gets_the_history_bridge() {
    let s = fixture("compacted-bridge.jsonl");
    let [a, b] = &s.recorded_compactions[..] else { panic!("{:?}", s.recorded_compactions) };
    // The instructions and the environment are kept, as Codex sends them again.
    assert_eq!((a.head.clone(), b.head.clone()), (0..2, 0..2));
    assert!(a.kept.is_empty() && b.kept.is_empty());
    let first = inserted(&s, a);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].0, Origin::CompactSummary);
    let bridge = &first[0].1;
    assert!(bridge.starts_with("You were originally given instructions from a user over one or more turns."));
    assert!(bridge.contains(
        "\n\nWhy does checkout charge shipping twice for split orders?\n\nFix it so only the first shipment pays shipping.\n\n"
    ));
    assert!(bridge.ends_with("line 58 now adds nothing. Tests not run yet."), "{bridge}");
    // The second joins the first bridge and the prompt after it.
    let second = inserted(&s, b);
    assert_eq!(second.len(), 1);
    assert!(second[0].1.contains(&format!("{bridge}\n\nNow run the tests.\n\n")), "{}", second[0].1);
    assert_eq!(second[0].1.matches("Why does checkout").count(), 1);
    // Inserted messages are never calls, and every call keeps its usage.
    assert_eq!(s.calls.len(), 6);
    assert!(s.calls.iter().all(|c| !s.is_inserted(c.message_index) && c.usage.is_some()));
}

/// Later versions open the summary with Codex's summary prefix and keep the
/// person's newest messages as messages of their own, earlier summaries left
/// out.
#[test]
fn a_prefixed_summary_alone_keeps_the_persons_messages_as_messages() {
    let s = fixture("compacted-summary-prefix.jsonl");
    let [a, b] = &s.recorded_compactions[..] else { panic!("{:?}", s.recorded_compactions) };
    assert_eq!((a.head.clone(), b.head.clone()), (0..2, 0..2));
    let first = inserted(&s, a);
    let human = |t: &str| (Origin::Human, t.to_string());
    assert_eq!(
        first[..2],
        [
            human("Why does checkout charge shipping twice for split orders?"),
            human("Fix it so only the first shipment pays shipping.")
        ]
    );
    assert_eq!(first.len(), 3);
    assert_eq!(first[2].0, Origin::CompactSummary);
    assert!(first[2].1.starts_with("Another language model started to solve this problem"));
    let second = inserted(&s, b);
    let origins: Vec<Origin> = second.iter().map(|m| m.0).collect();
    assert_eq!(origins, [Origin::Human, Origin::Human, Origin::Human, Origin::CompactSummary]);
    assert_eq!(second[2], human("Now run the tests."));
    assert!(!second[..3].iter().any(|m| m.1.contains("Tests not run yet")), "an earlier summary is left out");
    // Each `context_compacted` event is its record's compaction.
    assert_eq!(s.diagnostics.skipped.get("event_msg/context_compacted"), Some(&2));
    assert!(s.calls.iter().all(|c| !s.is_inserted(c.message_index)));
}

#[test]
fn errors_unknown_kinds_and_bad_lines() {
    let s = fixture("errors_unknown_truncated.jsonl");
    assert_eq!(s.id, "019d0000-e000-7000-8000-00000000e000");
    let kinds: Vec<ApiErrorKind> = s.errors.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec![ApiErrorKind::ContextOverflow, ApiErrorKind::RateLimit]);
    assert_eq!(s.errors[0].source_line, 4);
    assert_eq!(s.diagnostics.skipped.get("event_msg/turn_aborted"), Some(&1));
    for k in ["brand_new_record", "event_msg/brand_new_event", "response_item/brand_new_item"] {
        assert_eq!(s.diagnostics.unknown_kinds.get(k), Some(&1), "{k}");
    }
    assert_eq!(s.diagnostics.unknown_raw.len(), 3);
    assert_eq!(s.diagnostics.bad_lines, 2);
    let lines: Vec<u64> = s.diagnostics.messages.iter().map(|d| d.line).collect();
    assert_eq!(lines, vec![10, 11]);
    assert!(s.diagnostics.messages[1].message.starts_with("truncated JSON record"));
    // Reasons never quote the content.
    assert!(s.diagnostics.messages.iter().all(|d| !d.message.contains("not json")));
    assert_eq!(s.stats.records, 11);
    assert_eq!(s.messages.len(), 1);
}

#[test]
fn canonical_tool_names() {
    for n in ["shell", "shell_command", "exec_command", "local_shell", "command_execution"] {
        assert_eq!(canonical_tool(n), "shell", "{n}");
    }
    assert_eq!(canonical_tool("apply_patch"), "apply_patch");
    assert_eq!(canonical_tool("file_change"), "apply_patch");
    assert_eq!(canonical_tool("update_plan"), "update_plan");
}

#[test]
fn text_status_reads_only_the_header() {
    assert_eq!(text_status("Exit code: 0\nWall time: 1 seconds\nOutput:\nx"), Some(false));
    assert_eq!(text_status("Exit code: 2\nOutput:\n"), Some(true));
    assert_eq!(
        text_status("Command: ls\nChunk ID: 1\nWall time: 0\nProcess exited with code 0\nOutput:\n"),
        Some(false)
    );
    assert_eq!(text_status("Command: x\nProcess exited with code -1\n"), Some(true));
    assert_eq!(text_status("Output:\nExit code: 1\n"), None);
    assert_eq!(text_status("Plan updated"), None);
    assert_eq!(text_status("patch rejected by user"), Some(true));
    assert_eq!(text_status("execution error: No such file or directory (os error 2)"), Some(true));
}

#[test]
fn token_count_without_last_usage_uses_total_deltas() {
    let lines = [
        r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"}]}}"#,
        r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":10}}}}"#,
        r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"more"}]}}"#,
        r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"b"}]}}"#,
        r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":250,"cached_input_tokens":140,"output_tokens":15}}}}"#,
        r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":250,"cached_input_tokens":140,"output_tokens":15}}}}"#,
    ];
    let data = lines.join("\n");
    let s = read(Path::new("x.jsonl"), data.as_bytes()).pop().unwrap();
    assert_eq!(s.id, "x");
    assert_eq!(s.calls.len(), 2);
    assert_eq!(s.calls[0].usage, Some(usage(100, 40, 10, 0)));
    assert_eq!(s.calls[1].usage, Some(usage(150, 100, 5, 0)));
    assert_eq!(s.stats.usage_records, 3);
}

/// Tool search: a client-run search pairs its call (the query) with the
/// schemas it loaded, which the model reads; a server-run one has no call id
/// and is kept whole. An image the model generated counts as an image.
#[test]
fn tool_search_and_generated_images() {
    let s = fixture("tool-search-and-images.jsonl");
    let uses: Vec<(&str, &str)> =
        s.messages.iter().flat_map(|m| m.tool_uses()).map(|(id, name, _)| (id, name)).collect();
    assert_eq!(uses, [("call_ts1", "tool_search"), ("call_ev1", "mcp__calendar__create_event")]);
    assert_eq!(results(&s), [("call_ts1".to_string(), Some(false)), ("call_ev1".to_string(), None)]);
    assert!(result_text(&s, "call_ts1").contains("\"name\":\"mcp__calendar__create_event\""));
    let others: Vec<&Value> = s
        .messages
        .iter()
        .flat_map(|m| &m.blocks)
        .filter_map(|b| match b {
            Block::Other { raw } => Some(raw),
            _ => None,
        })
        .collect();
    let kinds: Vec<&str> = others.iter().filter_map(|r| r["type"].as_str()).collect();
    assert_eq!(kinds, ["tool_search_call", "tool_search_output", "image_generation_call"]);
    // The generated image (8,544 characters of base64) weighs one image.
    use crate::tokens::Estimator as _;
    let image = Block::Other { raw: others[2].clone() };
    let tokens = crate::tokens::Chars4.block_tokens(&image);
    assert!((crate::tokens::IMAGE_TOKENS..crate::tokens::IMAGE_TOKENS + 100).contains(&tokens), "{tokens}");
    assert!(s.diagnostics.unknown_kinds.is_empty(), "{:?}", s.diagnostics.unknown_kinds);
}

/// The MANIFEST.md row of a corpus file: (tool calls, usage recs).
fn manifest_counts(manifest: &str, rel: &str) -> (usize, u64) {
    let key = format!("| `{rel}` |");
    let row = manifest.lines().find(|l| l.starts_with(&key)).unwrap_or_else(|| panic!("{rel} not in MANIFEST"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // | file | repo | source path | commit | format | bytes | lines | tool calls | usage recs | …
    (cells[8].parse().unwrap(), cells[9].parse().unwrap())
}

#[test]
fn corpus_matches_manifest() {
    let Some(corpus) = corpus_dir() else { return };
    let manifest = std::fs::read_to_string(corpus.join("MANIFEST.md")).unwrap();
    let mut checked = 0;
    for (folder, format) in [("codex", Format::Codex), ("codex-exec-json", Format::CodexExec)] {
        let mut files: Vec<_> = std::fs::read_dir(corpus.join(folder)).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for path in files {
            let data = std::fs::read(&path).unwrap();
            assert_eq!(crate::read::detect(&data), Some(format), "{}", path.display());
            let sessions = match format {
                Format::Codex => read(&path, &data),
                _ => super::super::codex_exec::read(&path, &data),
            };
            assert_eq!(sessions.len(), 1);
            let s = &sessions[0];
            let rel = format!("{folder}/{}", path.file_name().unwrap().to_string_lossy());
            let (tools, usage_recs) = manifest_counts(&manifest, &rel);
            assert_eq!(s.tool_call_count(), tools, "tool calls of {rel}");
            assert_eq!(s.stats.usage_records, usage_recs, "usage recs of {rel}");
            assert_eq!(s.diagnostics.bad_lines, 0, "{rel}");
            assert!(s.diagnostics.unknown_kinds.is_empty(), "{rel}: {:?}", s.diagnostics.unknown_kinds);
            // Every tool call has its result and the reverse.
            let uses: std::collections::BTreeSet<&str> =
                s.messages.iter().flat_map(|m| m.tool_uses()).map(|(id, ..)| id).collect();
            let res: std::collections::BTreeSet<&str> = s
                .messages
                .iter()
                .flat_map(|m| m.blocks.iter())
                .filter_map(|b| match b {
                    Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(uses, res, "{rel}");
            if format == Format::Codex {
                // Every model response of these 0.40 files has its usage.
                assert_eq!(s.usage_count(), s.calls.len(), "{rel}");
                assert!(s.diagnostics.messages.is_empty(), "{rel}: {:?}", s.diagnostics.messages);
                assert_eq!(s.stats.records, data.iter().filter(|&&b| b == b'\n').count() as u64, "{rel}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 11);
}

/// Lines of every fixture of both readers, as mutation seeds.
fn seed_lines() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["codex", "codex-exec"] {
        let list = |d: &std::path::Path| -> Vec<std::path::PathBuf> {
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()).collect()
        };
        // The files of the folder and of the folders in it (one thread's runs).
        let mut files: Vec<_> = list(&fixtures_dir().join(dir))
            .into_iter()
            .flat_map(|p| if p.is_dir() { list(&p) } else { vec![p] })
            .collect();
        files.sort();
        for f in files {
            let mut data = std::fs::read(f).unwrap();
            if crate::read::compressed::is_zstd(&data) {
                data = crate::read::compressed::decompress(&data, 1 << 30).unwrap();
            }
            out.extend(String::from_utf8(data).unwrap().lines().map(str::to_string));
        }
    }
    out
}

fn mutate(line: &str, op: u8, at: usize, byte: u8) -> Vec<u8> {
    let mut b = line.as_bytes().to_vec();
    let at = if b.is_empty() { 0 } else { at % b.len() };
    match op % 5 {
        0 => b.truncate(at),
        1 => {
            if !b.is_empty() {
                b[at] = byte;
            }
        }
        2 => b.insert(at, byte),
        3 => {
            if !b.is_empty() {
                b.remove(at);
            }
        }
        // Swap a value for another type: the readers must not trust shapes.
        _ => {
            let s = String::from_utf8_lossy(&b).replace("\"text\":", "\"text\":[1,{}],\"x\":").replace(":0", ":-1");
            b = s.into_bytes();
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = read(Path::new("fuzz.jsonl"), &data);
        let _ = super::super::codex_exec::read(Path::new("fuzz.jsonl"), &data);
    }

    #[test]
    fn mutated_fixture_lines_never_panic(
        picks in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<usize>(), any::<u8>()), 1..40)
    ) {
        let seeds = seed_lines();
        let mut data = Vec::new();
        for (i, op, at, byte) in picks {
            let line = &seeds[i % seeds.len()];
            data.extend(if op % 3 == 0 { line.as_bytes().to_vec() } else { mutate(line, op, at, byte) });
            data.push(b'\n');
        }
        let s = read(Path::new("fuzz.jsonl"), &data);
        prop_assert_eq!(s.len(), 1);
        for c in &s[0].calls {
            prop_assert!(c.message_index < s[0].messages.len());
        }
        for c in &s[0].recorded_compactions {
            prop_assert!(c.inserted.end <= s[0].messages.len());
        }
        let e = super::super::codex_exec::read(Path::new("fuzz.jsonl"), &data);
        for s in &e {
            for c in &s.calls {
                prop_assert!(c.message_index < s.messages.len());
            }
        }
    }
}

#[test]
fn a_fork_starts_from_the_parents_copied_history_without_its_calls() {
    // The parent's lines, copied at the fork instant, then the fork's own turn
    // (its turn id, a UUIDv7, is newer than the fork's own id).
    let read = fixture("rollout-2026-06-20T11-00-00-019ee4af-ff80-7c11-8d12-e13f14a15b16.jsonl");
    assert_eq!(read.id, "019ee4af-ff80-7c11-8d12-e13f14a15b16", "the first session_meta names the thread");
    assert_eq!(read.forked_from.as_deref(), Some("019ee479-1100-7a01-8b02-c03d04e05f06"));
    assert_eq!(read.parent, None, "a fork is no sub-agent");
    assert_eq!(read.inherited, 10, "4 messages, the compaction's 2, then 4");
    assert_eq!(read.messages[10].text(), "Try the other fix instead: drop line 41.");
    assert_eq!(read.meta.models, ["gpt-5.4"], "the parent's model made none of the fork's calls");
    assert_eq!(read.meta.versions, ["0.150.0"]);
    let calls = |s: &Session| -> Vec<(usize, Option<u64>)> {
        s.calls.iter().map(|c| (c.message_index, c.usage.as_ref().map(|u| u.uncached_input + u.cache_read))).collect()
    };
    // Without its parent in the batch, the log is the only record of the
    // parent's four responses: read whole.
    let mut alone = read.clone();
    alone.settle_fork(false);
    assert_eq!((alone.inherited, alone.calls.len(), alone.errors.len()), (0, 6, 1));
    // With it, they and the parent's error are the parent's.
    let mut s = read;
    s.settle_fork(true);
    assert_eq!(calls(&s), [(11, Some(3500)), (13, Some(3700))], "the fork's own, with their own usage");
    assert!(s.errors.is_empty(), "the parent's error is counted in its own rollout");
    // The parent's compaction still shapes the context the fork starts from,
    // but it is not the fork's own.
    assert_eq!(s.recorded_compactions.len(), 1);
    assert_eq!(s.recorded_compactions[0].inserted, 4..6);
    assert!(!s.has_own_compactions());
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
}

#[test]
fn a_sub_agent_without_uuid_turn_ids_ends_the_copy_at_the_first_late_line() {
    // An older build: turn ids "1", "2". The copied burst is milliseconds
    // apart; the sub-agent's own turn comes seconds later.
    let mut s = fixture("rollout-2026-06-21T09-30-00-6f2b9c1e-4d3a-4b8e-9f10-2a7c5e8d1b34.jsonl");
    assert_eq!(s.parent.as_deref(), Some("3c9d0e7a-1b2f-4e6c-8a5d-9f0b1c2d3e4f"), "spawned by it");
    assert_eq!(s.forked_from, s.parent);
    assert_eq!(s.inherited, 2);
    s.settle_fork(true);
    let calls: Vec<(usize, Option<u64>)> =
        s.calls.iter().map(|c| (c.message_index, c.usage.as_ref().map(|u| u.uncached_input + u.cache_read))).collect();
    assert_eq!(calls, [(3, Some(5500)), (5, Some(5800))]);
}

#[test]
fn a_thread_that_is_no_fork_reads_a_second_session_meta_as_before() {
    // Without a fork marker, a foreign session_meta (a resume) copies nothing.
    let v7 = "019ee4af-ff80-7c11-8d12-e13f14a15b16";
    let log = format!(
        concat!(
            r#"{{"timestamp":"2026-06-20T11:00:00.000Z","type":"session_meta","payload":{{"id":"{}","cwd":"/w"}}}}"#,
            "\n",
            r#"{{"timestamp":"2026-06-20T11:00:00.001Z","type":"session_meta","payload":{{"id":"other","cwd":"/w"}}}}"#,
            "\n",
            r#"{{"timestamp":"2026-06-20T11:00:00.002Z","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"hi"}}]}}}}"#,
            "\n"
        ),
        v7
    );
    let s = read(Path::new("r.jsonl"), log.as_bytes()).pop().unwrap();
    assert_eq!((s.inherited, s.calls.len(), s.forked_from.as_deref()), (0, 1, None));
}

#[test]
fn uuid7_time_is_read_only_from_a_uuid_v7() {
    assert_eq!(fork::uuid7_ms("019ee4af-ff80-7c11-8d12-e13f14a15b16"), Some(0x019e_e4af_ff80));
    assert_eq!(fork::uuid7_ms("019ee4af-ff80-4c11-8d12-e13f14a15b16"), None, "a v4 carries no time");
    assert_eq!(fork::uuid7_ms("turn-1"), None);
    assert_eq!(fork::uuid7_ms("019ee4af-ff80-7c11-8d12-e13f14a15b1g"), None);
    assert_eq!(fork::uuid7_ms("019ee4afÿff80-7c11-8d12-e13f14a15b16"), None, "not ASCII");
}

#[test]
fn a_rollback_leaves_out_the_turns_it_took_back_with_their_context_updates() {
    let s = fixture("rollback.jsonl");
    let texts: Vec<String> = s.messages.iter().map(|m| m.text().into_owned()).collect();
    assert_eq!(texts[0], "List the routes in app.py.");
    assert_eq!(texts[3], "Three routes: /, /login and /logout.");
    assert_eq!(
        texts[4], "Rename /login to /signin instead.",
        "the taken-back prompt and the environment before it are gone"
    );
    assert_eq!(texts.len(), 6);
    let prompts: Vec<Option<u64>> = s.calls.iter().map(|c| c.usage.as_ref().map(|u| u.prompt_tokens())).collect();
    assert_eq!(prompts, [Some(3000), Some(3400), Some(3600)], "the calls of the taken-back turn are left out");
    assert_eq!(s.diagnostics.skipped.get("rolled-back message"), Some(&5));
    let d = &s.diagnostics.messages;
    assert_eq!((d.len(), d[0].line), (1, 17), "{d:?}");
    assert!(d[0].message.starts_with("thread rollback of 1 turn(s): the 5 message(s) and 2 call(s)"), "{d:?}");
}

#[test]
fn a_rollback_of_more_turns_than_there_are_keeps_what_came_before_the_first_prompt() {
    let path = fixtures_dir().join("codex").join("rollback.jsonl");
    let log = std::fs::read_to_string(&path).unwrap();
    let all = log.replace(r#""num_turns":1"#, r#""num_turns":9"#);
    let s = read(Path::new("r.jsonl"), all.as_bytes()).pop().unwrap();
    let texts: Vec<String> = s.messages.iter().map(|m| m.text().into_owned()).collect();
    assert_eq!(texts[0], "Rename /login to /signin instead.");
    assert_eq!(s.calls.len(), 1);
    let none = log.replace(r#""num_turns":1"#, r#""num_turns":0"#);
    let s = read(Path::new("r.jsonl"), none.as_bytes()).pop().unwrap();
    assert_eq!((s.messages.len(), s.calls.len()), (11, 5), "a rollback of no turn takes nothing back");
    assert!(s.diagnostics.messages.is_empty());
}

#[test]
fn rollbacks_one_after_another_each_take_back_the_last_turn_left() {
    let path = fixtures_dir().join("codex").join("rollback.jsonl");
    let mut log = std::fs::read_to_string(&path).unwrap();
    let line = |ty: &str, payload: &str| {
        format!(r#"{{"timestamp":"2026-09-14T08:01:00.000Z","type":"{ty}","payload":{payload}}}"#)
    };
    let prompt = |t: &str| {
        line(
            "response_item",
            &format!(r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{t}"}}]}}"#),
        )
    };
    let rollback = line("event_msg", r#"{"type":"thread_rolled_back","num_turns":1}"#);
    for l in [prompt("Try A."), rollback.clone(), prompt("Try B."), rollback.clone(), rollback] {
        log.push_str(&l);
        log.push('\n');
    }
    let s = read(Path::new("r.jsonl"), log.as_bytes()).pop().unwrap();
    let texts: Vec<String> = s.messages.iter().map(|m| m.text().into_owned()).collect();
    // A and B go, then the rename turn the fixture kept.
    assert_eq!(texts.last().map(String::as_str), Some("Three routes: /, /login and /logout."));
    assert_eq!(s.calls.len(), 2);
}

/// `/fast` puts a thread at the priority service tier, recorded as the
/// `service_tier` of a `thread_settings_applied` event: the requests after it
/// are fast until a snapshot without it (or at another tier) says otherwise.
#[test]
fn the_service_tier_of_the_threads_settings_marks_its_calls_fast() {
    let s = fixture("service-tier.jsonl");
    let fast: Vec<bool> = s.calls.iter().map(|c| c.fast).collect();
    assert_eq!(fast, [false, true, false]);
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
    // Either name of the tier, and the standard one.
    let data = std::fs::read(fixtures_dir().join("codex/service-tier.jsonl")).unwrap();
    let text = String::from_utf8(data).unwrap();
    for (tier, want) in [("fast", [false, true, false]), ("default", [false; 3]), ("flex", [false; 3])] {
        let t = text.replace(r#""service_tier":"priority""#, &format!(r#""service_tier":"{tier}""#));
        let got: Vec<bool> = read(Path::new("t.jsonl"), t.as_bytes())[0].calls.iter().map(|c| c.fast).collect();
        assert_eq!(got, want, "{tier}");
    }
}
