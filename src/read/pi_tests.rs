use super::*;
use crate::model::{ApiErrorKind, Block, CompactionKind, Diagnostic, Origin, Role, UsageProvenance};
use crate::testing::{corpus_dir, fixtures_dir};
use pretty_assertions::assert_eq;

fn read_fixture(name: &str) -> Session {
    let path = fixtures_dir().join("pi").join(name);
    let data = std::fs::read(&path).unwrap();
    assert_eq!(crate::read::detect(&data), Some(Format::Pi), "{name} must be detected as pi");
    let mut sessions = read(&path, &data);
    assert_eq!(sessions.len(), 1);
    sessions.remove(0)
}

fn texts(m: &Message) -> Vec<&str> {
    m.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn v1_linear_session_with_compaction() {
    let s = read_fixture("v1-compaction.jsonl");
    assert_eq!(s.id, "pi-v1-fixture");
    assert_eq!(s.meta.cwd.as_deref(), Some("/work/proj"));
    assert_eq!(s.meta.versions, ["pi v1"]);
    assert_eq!(s.meta.models, ["claude-sonnet-4-5", "gpt-5.1-codex", "claude-opus-4-5"]);
    let shape: Vec<(Role, Origin, u64)> = s.messages.iter().map(|m| (m.role, m.origin, m.source_line)).collect();
    use Origin::*;
    use Role::*;
    assert_eq!(
        shape,
        [
            (User, Human, 2),
            (Assistant, Model, 3),
            (User, ToolResult, 4),
            (Assistant, Model, 5),
            (User, ToolResult, 6), // lines 6 and 7 merged
            (Assistant, Model, 8),
            (User, Human, 9),
            (Assistant, Model, 10),
            (User, CompactSummary, 12),
            (User, Human, 13),
            // line 14: aborted, empty, zero usage: dropped
            (User, Injected, 15),
            (User, Human, 16),
            // line 17: failed, no usage: an error, never sent, no message
        ]
    );
    // Thinking keeps its signature length, not its bytes.
    assert_eq!(
        s.messages[1].blocks[0],
        Block::Thinking { text: "I should read the file first.".into(), opaque_len: "SIGNATURE0123456789".len() }
    );
    assert_eq!(s.tool_call_count(), 3);
    match &s.messages[2].blocks[0] {
        Block::ToolResult { tool_use_id, is_error, content } => {
            assert_eq!(tool_use_id, "toolu_01");
            assert_eq!(*is_error, Some(true));
            assert_eq!(content.len(), 1);
        }
        other => panic!("expected a tool result, got {other:?}"),
    }
    let merged: Vec<&str> = s.messages[4]
        .blocks
        .iter()
        .map(|b| match b {
            Block::ToolResult { tool_use_id, .. } => tool_use_id.as_str(),
            _ => "",
        })
        .collect();
    assert_eq!(merged, ["toolu_02", "toolu_03"]);
    assert!(
        matches!(&s.messages[6].blocks[1], Block::Image { media_type, bytes } if media_type == "image/png" && *bytes > 0)
    );
    assert_eq!(s.messages[0].timestamp, Some(1_765_233_661_000));

    // Compaction: summary inserted, kept = from entry index 8 (file line 9) up to it.
    assert_eq!(s.recorded_compactions.len(), 1);
    let c = &s.recorded_compactions[0];
    assert_eq!(c.kind, CompactionKind::PiCompaction);
    assert_eq!(c.source_line, 12);
    assert_eq!(c.inserted, 8..9);
    assert_eq!(c.kept, 6..8);
    assert_eq!(s.messages[c.kept.start].source_line, 9);
    assert_eq!(c.tokens_before, Some(12345));
    assert!(texts(&s.messages[8])[0].contains("<summary>\n# Context Checkpoint"));
    assert!(s.is_inserted(8));

    // Shell escape: the text pi puts in context.
    assert_eq!(texts(&s.messages[10]), ["Ran `cat app.toml`\n```\nport = 80\n```\n\nCommand exited with code 1"]);

    // Calls: one per assistant message with usage; the zero-usage error is none.
    let idx: Vec<usize> = s.calls.iter().map(|c| c.message_index).collect();
    assert_eq!(idx, [1, 3, 5, 7]);
    let u = s.calls[0].usage.unwrap();
    assert_eq!((u.uncached_input, u.output, u.cache_read, u.cache_write), (10, 20, 1000, 500));
    assert_eq!(u.provenance, UsageProvenance::Pi);
    assert_eq!(s.calls[3].model.as_deref(), Some("gpt-5.1-codex"));
    assert_eq!(s.stats.usage_records, 6);

    // The overflow error, classified; pi never sends the failed turn.
    assert_eq!(s.errors.len(), 1);
    assert_eq!(s.errors[0].kind, ApiErrorKind::ContextOverflow);
    assert_eq!(s.errors[0].source_line, 17);
    assert_eq!(s.messages.len(), 12);

    // Bookkeeping, unknown kinds, the truncated last line.
    assert_eq!(s.diagnostics.skipped.get("aborted turn without usage"), Some(&1));
    assert_eq!(s.diagnostics.skipped.get("failed turn without usage"), Some(&1));
    assert_eq!(s.diagnostics.skipped.get("model_change"), Some(&1));
    assert_eq!(s.diagnostics.unknown_kinds.get("mystery_entry"), Some(&1));
    assert_eq!(s.diagnostics.bad_lines, 1);
    assert_eq!(s.diagnostics.messages[0].line, 19);
    assert!(!s.diagnostics.messages[0].message.contains("\"te"), "diagnostics never quote content");
    assert_eq!(s.stats.records, 19);
}

#[test]
fn v3_tree_follows_the_active_branch() {
    let s = read_fixture("v3-tree.jsonl");
    assert_eq!(s.id, "pi-v3-fixture");
    assert_eq!(s.meta.versions, ["pi v3"]);
    assert_eq!(s.meta.title.as_deref(), Some("Refactor session"));
    let lines: Vec<u64> = s.messages.iter().map(|m| m.source_line).collect();
    // Lines 4-5 (approach A) are on the abandoned branch.
    assert_eq!(lines, [2, 3, 6, 7, 8, 9, 10, 13, 14, 15]);
    assert!(s.messages.iter().all(|m| !texts(m).iter().any(|t| t.contains("approach A answer"))));
    assert_eq!(s.diagnostics.skipped.get("abandoned branch entry"), Some(&2));
    assert!(texts(&s.messages[2])[0].contains("Tried approach A"));
    assert_eq!(s.messages[2].origin, Origin::Injected);
    assert_eq!(s.messages[7].origin, Origin::Injected); // custom_message
    assert_eq!(s.messages[8].origin, Origin::Injected); // role custom
    let c = &s.recorded_compactions[0];
    assert_eq!((c.inserted.clone(), c.kept.clone()), (6..7, 3..6));
    assert_eq!(s.messages[3].source_line, 7, "firstKeptEntryId c1 is line 7");
    assert_eq!(s.calls.iter().map(|c| c.message_index).collect::<Vec<_>>(), [1, 4, 9]);
    // The file still holds four usage records, abandoned branch included.
    assert_eq!(s.stats.usage_records, 4);
    assert_eq!(s.diagnostics.skipped.get("custom"), Some(&1));
    assert_eq!(s.diagnostics.skipped.get("label"), Some(&1));
}

#[test]
fn tree_edge_cases_do_not_panic() {
    // Cycle, dangling parent, missing header, bad first-kept index.
    let data = br#"{"type":"message","id":"x","parentId":"y","message":{"role":"user","content":"a"}}
{"type":"message","id":"y","parentId":"x","message":{"role":"assistant","content":[{"type":"text","text":"b"}]}}
{"type":"compaction","id":"z","parentId":"q","summary":"s","firstKeptEntryId":"nope","tokensBefore":1}
"#;
    let s = read(Path::new("t.jsonl"), data).remove(0);
    assert_eq!(s.recorded_compactions.len(), 1);
    assert!(s.recorded_compactions[0].kept.is_empty());
    assert!(s.diagnostics.messages.iter().any(|d| d.message.contains("no `session` header")));
    let data = br#"{"type":"session","id":"s","cwd":"/"}
{"type":"compaction","summary":"s","firstKeptEntryIndex":99}
{"type":"message","message":{"role":"bashExecution","command":"secret","output":"x","excludeFromContext":true}}
{"type":"message","message":{"role":"alien"}}
[1,2]
"#;
    let s = read(Path::new("t.jsonl"), data).remove(0);
    assert!(s.recorded_compactions[0].kept.is_empty());
    assert_eq!(s.messages.len(), 1);
    assert_eq!(s.diagnostics.skipped.get("bashExecution excluded from context"), Some(&1));
    assert_eq!(s.diagnostics.unknown_kinds.get("message role:alien"), Some(&1));
    assert_eq!(s.diagnostics.bad_lines, 1);
}

/// (tool calls, usage recs) of a corpus file from MANIFEST.md, by column name.
pub(crate) fn manifest_counts(corpus: &Path, file: &str) -> (usize, u64) {
    let manifest = std::fs::read_to_string(corpus.join("MANIFEST.md")).unwrap();
    let cells = |l: &str| l.split('|').map(|c| c.trim().trim_matches('`').to_string()).collect::<Vec<_>>();
    let header = manifest.lines().map(cells).find(|c| c.iter().any(|x| x == "tool calls")).unwrap();
    let col = |name: &str| header.iter().position(|c| c == name).unwrap();
    let row = manifest.lines().map(cells).find(|c| c.get(1).is_some_and(|f| f == file)).unwrap();
    (row[col("tool calls")].parse().unwrap(), row[col("usage recs")].parse().unwrap())
}

#[test]
fn corpus_matches_manifest() {
    let Some(corpus) = corpus_dir() else { return };
    let mut files: Vec<_> = std::fs::read_dir(corpus.join("pi")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 2);
    for path in files {
        let name = format!("pi/{}", path.file_name().unwrap().to_string_lossy());
        let data = std::fs::read(&path).unwrap();
        assert_eq!(crate::read::detect(&data), Some(Format::Pi), "{name}");
        let s = read(&path, &data).remove(0);
        let (tools, usage) = manifest_counts(&corpus, &name);
        assert_eq!(s.tool_call_count(), tools, "{name}: tool calls");
        assert_eq!(s.stats.usage_records, usage, "{name}: usage records");
        assert_eq!(s.diagnostics.bad_lines, 0, "{name}");
        assert!(s.diagnostics.unknown_kinds.is_empty(), "{name}");
        if name.contains("before-compaction") {
            let c = &s.recorded_compactions;
            assert_eq!(c.len(), 2, "{name}: compactions");
            assert_eq!(c.iter().map(|c| c.tokens_before).collect::<Vec<_>>(), [Some(175_004), Some(185_014)]);
            // firstKeptEntryIndex 293 / 551 index entries with the header at 0:
            // the kept runs start at the user messages on lines 294 / 552.
            for (c, line) in c.iter().zip([294, 552]) {
                assert_eq!(s.messages[c.kept.start].source_line, line);
                assert_eq!(s.messages[c.kept.start].origin, Origin::Human);
                assert_eq!(c.kept.end, c.inserted.start);
            }
        } else {
            assert!(s.recorded_compactions.is_empty());
        }
    }
}

#[test]
fn a_fork_starts_from_the_entries_it_copied_without_their_calls() {
    // `/fork` writes a header naming the parent file, then the parent's path
    // of entries as they were (with their own, earlier times), then its own.
    let mut s = read_fixture("v3-fork.jsonl");
    assert_eq!(s.inherited, 4, "the request, the read call, its result and the answer");
    assert!(s.forked_from.as_deref().is_some_and(|p| p.ends_with("_pi-parent.jsonl")));
    assert_eq!(s.calls.len(), 3, "read alone, the copy's responses are calls");
    s.settle_fork(true);
    let calls: Vec<_> = s.calls.iter().map(|c| (c.message_index, c.usage.map(|u| u.prompt_tokens()))).collect();
    assert_eq!(calls, [(s.messages.len() - 1, Some(2150))]);
    assert_eq!(s.parent, None, "a fork is no sub-agent");
}

/// A v1 branch (`/branch`) writes the messages it copies as new entries,
/// timed at the copy; each message keeps the time it was made at. The copies
/// are the branch's inherited history, not calls of its own.
#[test]
fn a_v1_branch_inherits_the_messages_it_rewrote() {
    let mut s = read_fixture("v1-branch.jsonl");
    assert_eq!(s.inherited, 4, "the request, the call, its result and the answer");
    assert!(s.forked_from.as_deref().is_some_and(|p| p.ends_with("_pi-v1-parent.jsonl")));
    s.settle_fork(true);
    let calls: Vec<_> = s.calls.iter().map(|c| (c.message_index, c.usage.map(|u| u.prompt_tokens()))).collect();
    assert_eq!(calls, [(5, Some(1100))], "only the branch's own response is its call");
}

/// OpenClaw's usage fields: `cacheWrite1h`, the part of `cacheWrite` written
/// for an hour (the cache lifetime `auto` prices by), and `responseModel`,
/// the model that answered for an alias such as OpenRouter's `auto`.
#[test]
fn openclaw_hour_long_cache_writes_and_the_answering_model() {
    let s = read_fixture("openclaw-usage-fields.jsonl");
    assert_eq!(s.meta.cache_writes_by_ttl, Some((20, 19_251)));
    let models: Vec<_> = s.calls.iter().map(|c| c.model.as_deref()).collect();
    assert_eq!(models, [Some("anthropic/claude-sonnet-4.6"); 2]);

    // An empty name names no model: the one asked for stands.
    let log = concat!(
        r#"{"type":"session","version":3,"id":"e","timestamp":"2026-09-02T09:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-09-02T09:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"model":"gpt-5","responseModel":"","usage":{"input":10,"output":1}}}"#,
        "\n"
    );
    let s = read(Path::new("e.jsonl"), log.as_bytes()).remove(0);
    assert_eq!(s.calls[0].model.as_deref(), Some("gpt-5"));
}

#[test]
fn a_new_session_naming_a_parent_copies_nothing() {
    // `newSession({ parentSession })` (a hand-over) writes no parent entry:
    // every entry is newer than the header.
    let log = concat!(
        r#"{"type":"session","version":3,"id":"h","timestamp":"2026-07-14T16:30:00.000Z","cwd":"/w","parentSession":"/p.jsonl"}"#,
        "\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-07-14T16:30:01.000Z","message":{"role":"user","content":"go"}}"#,
        "\n",
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-07-14T16:30:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input":10,"output":1}}}"#,
        "\n"
    );
    let s = read(Path::new("h.jsonl"), log.as_bytes()).remove(0);
    assert_eq!((s.inherited, s.calls.len()), (0, 1));
}

#[test]
fn an_applications_developer_message_is_sent_as_instructions() {
    let log = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-10-01T10:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-10-01T10:00:01.000Z","message":{"role":"developer","content":"Answer in French from now on.","timestamp":1}}"#,
        "\n",
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-10-01T10:00:02.000Z","message":{"role":"user","content":"hello","timestamp":2}}"#,
        "\n"
    );
    let s = read(Path::new("d.jsonl"), log.as_bytes()).remove(0);
    assert!(s.diagnostics.unknown_kinds.is_empty(), "{:?}", s.diagnostics.unknown_kinds);
    assert_eq!(s.messages.len(), 2);
    assert_eq!((s.messages[0].role, s.messages[0].origin), (Role::System, Origin::Injected));
    assert_eq!(s.messages[0].text(), "Answer in French from now on.");
}

fn openclaw_resets(edit: impl Fn(String) -> String) -> Vec<Session> {
    let path = fixtures_dir().join("pi").join("openclaw-resets.jsonl");
    let log = edit(std::fs::read_to_string(&path).unwrap());
    read(&path, log.as_bytes())
}

fn all_texts(s: &Session) -> Vec<String> {
    s.messages.iter().map(|m| m.text().into_owned()).collect()
}

#[test]
fn an_openclaw_reset_goes_on_as_a_session_that_starts_from_the_tail_it_kept() {
    let sessions = openclaw_resets(|l| l);
    let id = "0198f0aa-1c2d-7e3f-8a4b-5c6d7e8f9a0b";
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, [id.to_string(), format!("{id}.reset1"), format!("{id}.reset2")]);
    let calls = |s: &Session| s.calls.iter().map(|c| c.message_index).collect::<Vec<_>>();
    assert_eq!((sessions[0].messages.len(), calls(&sessions[0])), (6, vec![1, 3, 5]));
    // A daily reset keeps the last turn: context the next session starts
    // from, not its calls.
    let texts = all_texts(&sessions[1]);
    assert_eq!(texts[..2], ["Move the dentist to Friday.", "Done: the dentist is on Friday at 14:00."]);
    assert_eq!(calls(&sessions[1]), [3, 5]);
    // An explicit /new keeps nothing.
    assert_eq!(all_texts(&sessions[2])[0], "New topic: book a table for four tonight.");
    assert_eq!(calls(&sessions[2]), [1]);
    assert!(sessions.iter().all(|s| s.diagnostics.unknown_kinds.is_empty()));
}

#[test]
fn openclaws_leaf_rows_and_side_entries_steer_the_branch_and_stay_out_of_it() {
    let sessions = openclaw_resets(|l| l);
    let texts = all_texts(&sessions[1]);
    assert!(!texts.iter().any(|t| t.contains("Telegram")), "a side delivery is not in the conversation: {texts:?}");
    assert_eq!(
        texts[3..5],
        ["Two from Sam, both about the offsite.", "Summarize them."],
        "the leaf row leads on to its target"
    );
    assert_eq!(sessions[0].diagnostics.skipped.get("branch control or side entry"), Some(&2));
    assert!(!sessions[0].diagnostics.skipped.contains_key("abandoned branch entry"));
}

#[test]
fn a_resets_tail_keeps_only_the_tool_results_of_calls_inside_it() {
    // From the tool result on: its call is before the tail, so it goes.
    let from_result = openclaw_resets(|l| l.replace(r#""firstKeptEntryId":"a5""#, r#""firstKeptEntryId":"a3""#));
    assert_eq!(all_texts(&from_result[1])[0], "Standup at 9, dentist at 14.");
    // From the call on: the pair stays.
    let from_call = openclaw_resets(|l| l.replace(r#""firstKeptEntryId":"a5""#, r#""firstKeptEntryId":"a2""#));
    assert_eq!(from_call[1].messages[1].origin, Origin::ToolResult);
    assert_eq!(from_call[1].calls.iter().map(|c| c.message_index).collect::<Vec<_>>(), [6, 8]);
    // A kept entry that is not there keeps nothing, and says so.
    let lost = openclaw_resets(|l| l.replace(r#""firstKeptEntryId":"a5""#, r#""firstKeptEntryId":"zz""#));
    assert_eq!(all_texts(&lost[1])[0], "Any emails from Sam?");
    assert!(lost[0].diagnostics.messages.iter().any(|d| d.message.starts_with("reset's first kept entry")));
}

#[test]
fn any_message_excluded_from_context_is_left_out() {
    // OpenClaw's compaction divider: a custom message shown, never sent.
    let log = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-10-01T10:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-10-01T10:00:01.000Z","message":{"role":"custom","customType":"openclaw.context-compaction","content":"Context compacted","display":true,"excludeFromContext":true,"timestamp":1}}"#,
        "\n",
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-10-01T10:00:02.000Z","message":{"role":"user","content":"hello","timestamp":2}}"#,
        "\n"
    );
    let s = read(Path::new("x.jsonl"), log.as_bytes()).remove(0);
    assert_eq!(s.messages.len(), 1);
    assert_eq!(s.messages[0].text(), "hello");
    assert_eq!(s.diagnostics.skipped.get("custom excluded from context"), Some(&1));
}

#[test]
fn a_reset_that_keeps_a_whole_conversation_keeps_its_last_64_messages() {
    let mut log =
        String::from(r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-10-01T10:00:00.000Z","cwd":"/w"}"#);
    let mut parent = "null".to_string();
    for k in 0..70 {
        log.push_str(&format!(
            "\n{{\"type\":\"message\",\"id\":\"m{k}\",\"parentId\":{parent},\"timestamp\":\"2026-10-01T10:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"turn {k}\",\"timestamp\":1}}}}"
        ));
        parent = format!("\"m{k}\"");
    }
    log.push_str(&format!(
        "\n{{\"type\":\"reset\",\"id\":\"r\",\"parentId\":{parent},\"timestamp\":\"2026-10-01T10:00:02.000Z\",\"reason\":\"daily\",\"firstKeptEntryId\":\"m0\"}}\n"
    ));
    let sessions = read(Path::new("r.jsonl"), log.as_bytes());
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[1].messages.len(), 64);
    assert_eq!(sessions[1].messages[0].text(), "turn 6");
    assert!(sessions[0].diagnostics.messages.iter().any(|d| d.message.starts_with("reset keeps more than 64")));
}

/// Aborted and failed turns pi leaves out of every later request: a call
/// each (the provider reported usage), their responses never sent on.
#[test]
fn aborted_and_failed_turns_are_calls_whose_responses_are_never_sent() {
    let s = read_fixture("aborted-turns.jsonl");
    let shape: Vec<(Origin, bool)> = s.messages.iter().map(|m| (m.origin, m.unsent)).collect();
    use Origin::*;
    assert_eq!(
        shape,
        [(Human, false), (Model, true), (Human, false), (SyntheticError, true), (Human, false), (Model, false)]
    );
    let calls: Vec<(usize, u64)> =
        s.calls.iter().map(|c| (c.message_index, c.usage.map_or(0, |u| u.prompt_tokens()))).collect();
    assert_eq!(calls, [(1, 1202), (3, 1233), (5, 1244)]);
    assert_eq!(s.errors.len(), 1);
    assert_eq!(s.errors[0].source_line, 5);
    // The aborted write is all but gone from the next request (as recorded):
    // the replay leaves it out too.
    let hidden = s.hidden_from_policy();
    assert_eq!(hidden, [false, true, false, true, false, false]);
}

#[test]
fn an_openclaw_turn_is_sent_as_its_model_prompt_projection() {
    let s = read_fixture("openclaw-prompt-projection.jsonl");
    let users: Vec<&Message> = s.messages.iter().filter(|m| m.origin == Origin::Human).collect();
    // What hooks put before and after the prompt is in every request.
    let first = texts(users[0]);
    assert_eq!(first.len(), 1);
    assert!(first[0].starts_with("Relevant memories:\n- The user's dentist is Dr. Okafor"), "{}", first[0]);
    assert!(first[0].contains("\n\nBook me a dentist appointment next week\n\nToday is Thursday"), "{}", first[0]);
    // A list's first text block is replaced; its image stays.
    assert_eq!(texts(users[1]), ["yes, and send me the route\n\nToday is Thursday 2026-08-14. Calendar sync: ok."]);
    assert!(users[1].blocks.iter().any(|b| matches!(b, Block::Image { .. })));
    // The session is named by what the person typed.
    assert_eq!(s.display_name().as_deref(), Some("assistant · Book me a dentist appointment next week"));
    assert_eq!(s.diagnostics.sent_otherwise.get("prompt sent as its projection"), Some(&2));
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
}

#[test]
fn a_projection_openclaw_would_not_send_leaves_the_turn_as_logged_and_is_said() {
    let header = r#"{"type":"session","version":3,"id":"p","timestamp":"2026-08-14T07:30:00.000Z","cwd":"/w"}"#;
    let user = |id: &str, parent: &str, content: &str, projection: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-08-14T07:30:01.000Z","message":{{"role":"user","content":{content},"timestamp":1,"__openclaw":{{"modelPromptProjection":{projection}}}}}}}"#
        )
    };
    let log = [
        header.to_string(),
        user("u1", "null", r#""typed""#, r#"{"version":2,"text":"sent"}"#),
        user(
            "u2",
            r#""u1""#,
            r#"[{"type":"image","data":"AAAA","mimeType":"image/png"}]"#,
            r#"{"version":1,"text":"sent"}"#,
        ),
        // No projection: nothing to say.
        user("u3", r#""u2""#, r#""plain""#, "null"),
    ]
    .join("\n");
    let s = read(Path::new("p.jsonl"), log.as_bytes()).remove(0);
    assert_eq!(s.messages[0].text(), "typed");
    assert_eq!(s.messages[2].text(), "plain");
    let warnings: Vec<_> = s.diagnostics.messages.iter().map(|d| (d.line, d.message.as_str())).collect();
    assert_eq!(
        warnings,
        [(2, "a model prompt projection of a version or shape not read: the message is counted as logged")]
    );
    assert_eq!(s.diagnostics.skipped.get("user/model prompt projection (no text to replace)"), Some(&1));
}

/// pi-ai's Google providers before March 2026 recorded `input` with the
/// cached tokens in it; `totalTokens` says so, and the cache is counted once.
#[test]
fn a_google_usage_with_the_cache_inside_input() {
    let s = read_fixture("google-cache-in-input.jsonl");
    let u: Vec<Usage> = s.calls.iter().map(|c| c.usage.unwrap()).collect();
    // Nothing cached: as recorded.
    assert_eq!((u[0].uncached_input, u[0].cache_read, u[0].prompt_tokens()), (5200, 0, 5200));
    // 4,096 cached inside an input of 5,330: the prompt is 5,330, not 9,426.
    assert_eq!((u[1].uncached_input, u[1].cache_read, u[1].prompt_tokens()), (1234, 4096, 5330));
    // A later pi-ai: input without the cache, the total their sum.
    assert_eq!((u[2].uncached_input, u[2].cache_read, u[2].prompt_tokens()), (1300, 4096, 5396));
    let warned: Vec<&Diagnostic> =
        s.diagnostics.messages.iter().filter(|d| d.message.contains("cached tokens inside `input`")).collect();
    assert_eq!(warned.len(), 1);
    assert_eq!(warned[0].line, 5);
    assert!(warned[0].message.starts_with("1 usage(s)"));
}

#[test]
fn usage_without_a_total_or_a_cache_is_read_as_recorded() {
    let of = |v: serde_json::Value| usage_of(&v);
    // No total: nothing says the input held the cache.
    let (u, inside) = of(serde_json::json!({"input": 500, "output": 5, "cacheRead": 400}));
    assert_eq!((u.uncached_input, inside), (500, false));
    // A total equal to input + output without a cache read is the usual shape.
    let (u, inside) = of(serde_json::json!({"input": 500, "output": 5, "cacheRead": 0, "totalTokens": 505}));
    assert_eq!((u.uncached_input, inside), (500, false));
    // The cache read larger than the input cannot be inside it.
    let (u, inside) = of(serde_json::json!({"input": 300, "output": 5, "cacheRead": 400, "totalTokens": 305}));
    assert_eq!((u.uncached_input, inside), (300, false));
    // With a cache write, the total still counts every part once.
    let (u, inside) =
        of(serde_json::json!({"input": 900, "output": 10, "cacheRead": 600, "cacheWrite": 50, "totalTokens": 960}));
    assert_eq!((u.uncached_input, u.cache_write, inside), (300, 50, true));
}

/// A later compaction whose kept entries reach back over an earlier one, the
/// earlier one recorded between a tool call and its result (a compaction a
/// hook asked for mid-turn): pi renders every entry of the kept range, the
/// earlier compaction as its summary, so that summary stays in the context.
#[test]
fn a_chained_compaction_keeps_an_earlier_summary_inside_its_kept_entries() {
    let data = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-10-01T10:00:00.000Z","cwd":"/w"}
{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"start"}}
{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.rs"}}]}}
{"type":"message","id":"r1","parentId":"a1","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"fn a() {}"}]}}
{"type":"message","id":"a2","parentId":"r1","message":{"role":"assistant","content":[{"type":"toolCall","id":"c2","name":"read","arguments":{"path":"b.rs"}}]}}
{"type":"compaction","id":"k1","parentId":"a2","summary":"first","firstKeptEntryId":"a1","tokensBefore":900,"fromHook":true}
{"type":"message","id":"r2","parentId":"k1","message":{"role":"toolResult","toolCallId":"c2","toolName":"read","content":[{"type":"text","text":"fn b() {}"}]}}
{"type":"message","id":"a3","parentId":"r2","message":{"role":"assistant","content":[{"type":"text","text":"both read"}]}}
{"type":"compaction","id":"k2","parentId":"a3","summary":"second","firstKeptEntryId":"a2","tokensBefore":800}
{"type":"message","id":"u2","parentId":"k2","message":{"role":"user","content":"go on"}}
"#;
    let s = read(Path::new("t.jsonl"), data).remove(0);
    let lines: Vec<u64> = s.messages.iter().map(|m| m.source_line).collect();
    assert_eq!(lines, [2, 3, 4, 5, 6, 7, 8, 9, 10]);
    let c = &s.recorded_compactions;
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].inserted.clone(), c[0].kept.clone()), (4..5, 1..4));
    assert_eq!(c[0].trigger.as_deref(), Some("extension"));
    // a2 (the call), the first summary, r2 (its result) and a3.
    assert_eq!((c[1].inserted.clone(), c[1].kept.clone()), (7..8, 3..7));
    assert_eq!(s.messages[4].origin, Origin::CompactSummary);
    assert!(texts(&s.messages[4])[0].contains("<summary>\nfirst\n</summary>"));
    assert!(texts(&s.messages[7])[0].contains("<summary>\nsecond\n</summary>"));
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
}
