//! What Claude Code adds to a request besides the conversation: attachments
//! (those it sends, rendered; those it never sends, left out) and slash
//! commands with their output (`system/local_command`); and what it logs but
//! never sends (display-only messages).

use super::{Builder, Rec};
use crate::model::{Block, Origin, Role};
use serde_json::Value;

impl Builder<'_> {
    /// `system/local_command`: a slash command (`<command-name>`…) or its
    /// output (`<local-command-stdout>`…), in `content`. Of the system
    /// records, Claude Code sends these alone, as user messages
    /// (`normalizeMessagesForAPI`). The field is read from the line itself:
    /// few records have it.
    pub(super) fn local_command(&mut self, r: &Rec) {
        let content = crate::read::parse_json::<Value>(r.raw).ok();
        match content.as_ref().and_then(|v| v.get("content")).and_then(Value::as_str).filter(|t| !t.is_empty()) {
            Some(text) => {
                self.push(r, Role::User, Origin::Injected, vec![Block::text(text)]);
            }
            None => self.s.diagnostics.skip("system/local_command (no content)"),
        }
    }

    /// A `user` or `assistant` record marked `isVirtual`: display only (the
    /// REPL's inner tool calls), which `normalizeMessagesForAPI` leaves out of
    /// every request. No message and no call; where it stood is kept for the
    /// compactions that name it. (Claude Code clears the mark before it logs a
    /// message for most users, and those are sent: the flag alone decides.)
    pub(super) fn virtual_message(&mut self, r: &Rec) {
        self.s.diagnostics.skip(&format!("{}/virtual (not sent)", r.kind()));
        if let Some(u) = r.uuid() {
            self.unsent_at.insert(u.to_string(), self.s.messages.len());
        }
    }

    /// `type:"attachment"` records are context the harness injects into the next
    /// request (memory files, edited-file snippets, tool deltas…): a user message
    /// with a compact text rendering. Those Claude Code never sends are left
    /// out, and where they stood is kept for the compactions that name them.
    pub(super) fn attachment(&mut self, r: &Rec) {
        if let Some(kind) = unsent_attachment(r.f.attachment.as_ref()) {
            self.s.diagnostics.skip(&format!("attachment/{kind} (not sent)"));
            if let Some(u) = r.uuid() {
                self.unsent_at.insert(u.to_string(), self.s.messages.len());
            }
            return;
        }
        let blocks = super::attachments::attachment_blocks(r.f.attachment.as_ref());
        self.push(r, Role::User, Origin::Injected, blocks);
    }
}

/// Attachment kinds Claude Code never sends (`normalizeAttachmentForAPI`
/// returns nothing for them, 2.1.88): what the UI shows of hooks, reads it
/// skipped, permissions, structured output, and its legacy kinds.
const UNSENT_ATTACHMENTS: &[&str] = &[
    "already_read_file",
    "command_permissions",
    "edited_image_file",
    "hook_cancelled",
    "hook_error_during_execution",
    "hook_non_blocking_error",
    "hook_system_message",
    "structured_output",
    "hook_permission_decision",
    "dynamic_skill",
    "autocheckpointing",
    "background_task_status",
    "todo",
    "task_progress",
    "ultramemory",
];

/// The kind of an attachment Claude Code does not send, if it is one: an
/// unsent kind, or a hook's output outside the events whose output reaches
/// the model (`SessionStart`, `UserPromptSubmit`), or an empty one. A kind
/// this list does not know is rendered and counted (a newer version may send
/// it).
fn unsent_attachment(att: Option<&Value>) -> Option<&'static str> {
    let att = att?.as_object()?;
    let kind = att.get("type").and_then(Value::as_str)?;
    if let Some(k) = UNSENT_ATTACHMENTS.iter().find(|k| **k == kind) {
        return Some(k);
    }
    if kind == "hook_success" {
        let event = att.get("hookEvent").and_then(Value::as_str);
        let empty = att.get("content").and_then(Value::as_str) == Some("");
        if empty || !matches!(event, Some("SessionStart" | "UserPromptSubmit")) {
            return Some("hook_success");
        }
    }
    None
}
