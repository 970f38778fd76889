//! Tests of what Claude Code sends of its own records: a slash command and its
//! output (`system/local_command`) are user messages of the context, and the
//! attachments it never sends are left out.

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
