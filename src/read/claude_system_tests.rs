//! Tests of what Claude Code sends of its own records: a slash command and its
//! output (`system/local_command`) are user messages of the context, and the
//! attachments and bookkeeping records it never sends are left out.

use super::tests::read_fixture;
use crate::model::{Origin, Role};

#[test]
fn a_slash_command_and_its_output_are_context_the_next_request_sends() {
    let s = &read_fixture("local-command.jsonl")[0];
    let commands: Vec<_> = s.messages.iter().filter(|m| m.text().contains("<command-name>/context")).collect();
    assert_eq!(commands.len(), 1);
    assert_eq!((commands[0].role, commands[0].origin), (Role::User, Origin::Injected));
    let output = s.messages.iter().position(|m| m.text().starts_with("<local-command-stdout>Context Usage")).unwrap();
    // Before the second response, in the context it was sent with.
    assert!(output < s.calls[1].message_index);
    assert_eq!(s.calls.len(), 2);
    assert!(!s.diagnostics.skipped.contains_key("system/local_command"));
}

#[test]
fn attachments_claude_code_never_sends_are_left_out() {
    let s = &read_fixture("local-command.jsonl")[0];
    let texts: Vec<String> = s.messages.iter().map(|m| m.text().into_owned()).collect();
    // A prompt hook's output is sent; a Stop hook's and a todo list are not.
    assert!(texts.iter().any(|t| t.contains("2 files changed since the last commit")), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("lint ok") || t.contains("Fix rounding")), "{texts:?}");
    assert_eq!(s.diagnostics.skipped.get("attachment/hook_success (not sent)"), Some(&1));
    assert_eq!(s.diagnostics.skipped.get("attachment/todo (not sent)"), Some(&1));
    assert_eq!(s.calls.len(), 2);
}

#[test]
fn a_preserved_segment_that_starts_at_an_unsent_attachment_starts_at_the_message_after_it() {
    let path = crate::testing::fixtures_dir().join("claude-code").join("compaction.jsonl");
    let log = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    // A todo list (never sent) between c-8006 and c-8007, named as the head.
    let todo = lines[6]
        .split(r#""uuid":"c-8007""#)
        .next()
        .map(|head| {
            format!(
                r#"{head}"uuid":"c-att","timestamp":"2025-10-24T20:56:00.000Z","type":"attachment","attachment":{{"type":"todo","content":[],"itemCount":0}}}}"#
            )
        })
        .unwrap();
    let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    edited[6] = edited[6].replace(r#""parentUuid":"c-8006""#, r#""parentUuid":"c-att""#);
    edited.insert(6, todo);
    let edited = edited.join("\n").replace(r#""headUuid":"c-8007""#, r#""headUuid":"c-att""#);
    let s = super::read(&path, edited.as_bytes()).remove(0);
    assert_eq!(s.diagnostics.skipped.get("attachment/todo (not sent)"), Some(&1));
    assert_eq!(s.recorded_compactions[1].kept, 5..7, "the segment still starts at c-8007");
}

/// A session whose requests carry attachments of several kinds: each is a
/// user message in Claude Code's words, before the response it was sent with.
#[test]
fn attachments_are_sent_in_claude_codes_words() {
    let s = &read_fixture("attachments.jsonl")[0];
    let injected: Vec<(u64, String)> = s
        .messages
        .iter()
        .filter(|m| m.origin == Origin::Injected)
        .map(|m| (m.source_line, m.text().into_owned()))
        .collect();
    let lines: Vec<u64> = injected.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [2, 3, 4, 6, 7]);
    assert!(injected.iter().all(|(_, t)| t.starts_with("<system-reminder>\n") && t.ends_with("\n</system-reminder>")));
    // The file @-mentioned, numbered as the Read tool numbers it.
    assert!(injected[2].1.contains(
        "Result of calling the Read tool:\n1\texport function total(items: Item[]): number {\n2\t  let sum = 0;"
    ));
    assert!(injected[3].1.contains("src/total.ts was modified, either by the user or by a linter."));
    assert!(injected[4].1.contains("The user sent a new message while you were working:\nand drop the rounding"));
    // Sent with the first request, and with the second.
    assert_eq!(s.calls.iter().map(|c| c.message_index).collect::<Vec<_>>(), [4, 8]);
    assert!(s.diagnostics.unknown_kinds.is_empty());
}

#[test]
fn bookkeeping_lines_are_skipped_and_counted() {
    let s = &read_fixture("bookkeeping.jsonl")[0];
    assert_eq!(s.stats.records, 19);
    assert_eq!(s.messages.len(), 2);
    assert_eq!(s.meta.title.as_deref(), Some("greeting-test"), "a custom title wins");
    for kind in [
        "task-summary",
        "tag",
        "agent-color",
        "mode",
        "worktree-state",
        "attribution-snapshot",
        "speculation-accept",
        "permission-mode",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "system/turn_duration",
        "system/stop_hook_summary",
        "last-prompt",
        "custom-title",
        "agent-name",
        "ai-title",
    ] {
        assert_eq!(s.diagnostics.skipped.get(kind), Some(&1), "{kind}");
    }
    assert!(s.diagnostics.unknown_kinds.is_empty());
    // The assistant line's parent is a progress record: order still follows it.
    assert_eq!(s.messages[1].role, Role::Assistant);
}
