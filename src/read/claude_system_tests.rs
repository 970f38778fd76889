//! Tests of the `system` records Claude Code sends: a slash command and its
//! output (`local_command`) are user messages of the context; the others are
//! the harness's own.

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
