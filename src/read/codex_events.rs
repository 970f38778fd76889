//! Codex `event_msg` records: the UI and telemetry stream beside the items.
//! Only usage, errors, compactions, exit statuses and turn boundaries matter
//! to the model's context; the rest repeats items or is for the screen.

use super::{MAX_ERROR_LEN, Reader, raw_text};
use crate::model::Origin;
use crate::model::RecordedError;
use crate::read::{errors, truncate_str};
use serde_json::Value;

impl Reader<'_> {
    pub(super) fn event(&mut self, p: &Value, line: u64, raw: &[u8]) {
        let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "token_count" => self.token_count(p),
            "error" => {
                let msg = p.get("message").and_then(Value::as_str).unwrap_or("");
                self.s.errors.push(RecordedError {
                    source_line: line,
                    kind: errors::classify(msg),
                    message: truncate_str(msg, MAX_ERROR_LEN).to_string(),
                });
            }
            "context_compacted" => {
                self.boundary();
                if self.open_compaction.is_some() {
                    // The `compacted` record of the same compaction came first.
                    self.s.diagnostics.skip("event_msg/context_compacted");
                } else {
                    let n = self.s.messages.len();
                    self.add_compaction(line, n..n, true);
                }
            }
            "exec_command_end" => {
                if let (Some(id), Some(code)) =
                    (p.get("call_id").and_then(Value::as_str), p.get("exit_code").and_then(Value::as_i64))
                {
                    self.exit_by_call.insert(id.to_string(), code != 0);
                }
                self.s.diagnostics.skip("event_msg/exec_command_end");
            }
            "patch_apply_end" => {
                if let (Some(id), Some(ok)) =
                    (p.get("call_id").and_then(Value::as_str), p.get("success").and_then(Value::as_bool))
                {
                    self.exit_by_call.insert(id.to_string(), !ok);
                }
                self.s.diagnostics.skip("event_msg/patch_apply_end");
            }
            "turn_aborted" | "task_started" | "task_complete" | "turn_started" | "turn_complete" => {
                self.boundary();
                self.s.diagnostics.skip(&format!("event_msg/{ty}"));
            }
            // A thread's settings after a change (`/fast`, `/model`…): its
            // service tier holds for the requests that follow; a snapshot
            // without one runs at the standard tier.
            "thread_settings_applied" => {
                let tier = p.pointer("/thread_settings/service_tier").and_then(Value::as_str);
                self.fast_tier = matches!(tier, Some("priority" | "fast"));
                self.s.diagnostics.skip("event_msg/thread_settings_applied");
            }
            "thread_rolled_back" => {
                self.boundary();
                self.s.diagnostics.skip("event_msg/thread_rolled_back");
                let turns = p.get("num_turns").and_then(Value::as_u64).unwrap_or(0);
                self.roll_back(turns, line);
            }
            // Duplicates of response items, UI and telemetry: nothing for the model.
            "user_message"
            | "agent_message"
            | "agent_message_delta"
            | "agent_reasoning"
            | "agent_reasoning_delta"
            | "agent_reasoning_raw_content"
            | "agent_reasoning_raw_content_delta"
            | "agent_reasoning_section_break"
            | "entered_review_mode"
            | "exited_review_mode"
            | "exec_command_begin"
            | "exec_command_output_delta"
            | "patch_apply_begin"
            | "mcp_tool_call_begin"
            | "mcp_tool_call_end"
            | "web_search_begin"
            | "web_search_end"
            | "image_generation_begin"
            | "image_generation_end"
            | "view_image_tool_call"
            | "item_started"
            | "item_completed"
            | "plan_update"
            | "turn_diff"
            | "stream_error"
            | "warning"
            | "background_event"
            | "session_configured"
            | "thread_name_updated"
            | "undo_started"
            | "undo_completed"
            | "request_user_input"
            | "collab_agent_spawn_begin"
            | "collab_agent_spawn_end"
            | "collab_agent_interaction_begin"
            | "collab_agent_interaction_end"
            | "collab_waiting_begin"
            | "collab_waiting_end"
            | "collab_close_begin"
            | "collab_close_end" => self.s.diagnostics.skip(&format!("event_msg/{ty}")),
            _ => {
                let kind = format!("event_msg/{}", if ty.is_empty() { "(no type)" } else { ty });
                self.s.diagnostics.unknown(&kind, line, &raw_text(raw));
            }
        }
    }

    /// `thread_rolled_back`: the user took back the last `turns` turns, and
    /// Codex drops them from the history it sends (codex-rs
    /// `drop_last_n_user_turns`): from the `turns`-th last prompt a person
    /// typed (with the context updates written just before it), or from the
    /// first when there are fewer. Like an abandoned branch of pi or a Gemini
    /// rewind, those messages and their calls are left out: they were sent, but
    /// never again part of the context. A rollback never reaches into what a
    /// compaction or a fork's copy put before it.
    fn roll_back(&mut self, turns: u64, line: u64) {
        if turns == 0 {
            return;
        }
        // Compactions are recorded in the order of their messages: the last
        // one ends the furthest.
        let floor = self.s.recorded_compactions.last().map_or(0, |c| c.inserted.end).max(self.s.inherited);
        let first = self.prompts.partition_point(|&p| p < floor);
        if first == self.prompts.len() {
            let why = "thread rollback with no prompt of a person to take back: nothing dropped";
            self.s.diagnostics.warn(self.path, line, why);
            return;
        }
        let back = usize::try_from(turns).unwrap_or(usize::MAX);
        let kept = self.prompts.len().saturating_sub(back).max(first);
        let mut cut = self.prompts[kept];
        self.prompts.truncate(kept);
        while cut > floor && self.s.messages[cut - 1].origin == Origin::Injected {
            cut -= 1;
        }
        let messages = self.s.messages.len() - cut;
        self.s.messages.truncate(cut);
        // A call is made on the message pushed with it: calls are in message
        // order, and those taken back are the last ones.
        let mut calls = 0;
        while self.s.calls.last().is_some_and(|c| c.message_index >= cut) {
            self.s.calls.pop();
            calls += 1;
        }
        self.open_compaction = None;
        self.s.diagnostics.skip_n("rolled-back message", messages as u64);
        self.s.diagnostics.warn(
            self.path,
            line,
            format!(
                "thread rollback of {turns} turn(s): the {messages} message(s) and {calls} call(s) it took back are \
                 left out (they were sent, but never again part of the context)"
            ),
        );
    }
}
