//! Codex usage: pairing `token_usage_record`s and `token_count` events with the
//! model responses they measure, and reading OpenAI-shaped usage objects (also
//! for `codex exec`).

use super::{Reader, UsageOrder};
use crate::model::{Usage, UsageProvenance};
use serde_json::Value;

/// Cumulative counters of `total_token_usage`, for deltas when an event has no
/// `last_token_usage` (very old rollouts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Totals {
    input: u64,
    cached: u64,
    output: u64,
    reasoning: u64,
}

impl Reader<'_> {
    /// Pairing of `token_count` usage with model responses.
    ///
    /// Rule: an event counts only when its totals differ from the previous one
    /// (Codex repeats events; `info: null` carries rate limits only). Its usage is
    /// `info.last_token_usage`, else the delta of `info.total_token_usage`. A
    /// counted event ends the current response. Then, by the file's layout:
    /// - `Follows` (0.77+: items, then the event): the usage goes to the latest
    ///   `Call` if it has none yet;
    /// - `Precedes` (0.40: the event, then the items): the usage waits for the
    ///   next `Call`, which is the response it measured.
    ///
    /// Usage that finds no response (the model call of a compaction, a response
    /// that recorded no item, a second event before any item) is not attached to
    /// a neighbour: it is counted and reported as unpaired, so one missing event
    /// never shifts the usage of every later call.
    pub(super) fn token_count(&mut self, p: &Value) {
        let Some(info) = p.get("info").filter(|i| i.is_object()) else {
            self.s.diagnostics.skip("event_msg/token_count (info: null)");
            return;
        };
        // MANIFEST "usage recs": records carrying usage as they appear in the file,
        // repeats included (like Claude's repeated block-lines).
        self.s.stats.usage_records += 1;
        // The window the agent worked with (272000 in 0.40-era rollouts).
        if let Some(w) = info.get("model_context_window").and_then(Value::as_u64).filter(|&w| w > 0) {
            let w = w.min(crate::read::MAX_TOKENS);
            self.s.meta.context_window = Some(self.s.meta.context_window.map_or(w, |old| old.max(w)));
        }
        if self.usage_records {
            // The file's usage records measure each response; the event's
            // usage may be an estimate or a repeat.
            self.s.diagnostics.skip("event_msg/token_count (usage from token_usage_record)");
            return;
        }
        let total = info.get("total_token_usage").filter(|v| v.is_object());
        let last = info.get("last_token_usage").filter(|v| v.is_object());
        let key = match total {
            Some(t) => (t.clone(), Value::Null),
            None => (Value::Null, last.cloned().unwrap_or(Value::Null)),
        };
        if self.last_usage_key.as_ref() == Some(&key) {
            self.s.diagnostics.skip("event_msg/token_count (repeat)");
            return;
        }
        self.last_usage_key = Some(key);
        let totals = total.map(totals_of);
        let usage = match (last.and_then(openai_usage), totals) {
            (Some(u), _) => Some(u),
            (None, Some(t)) => {
                let prev = self.prev_totals.unwrap_or_default();
                Some(usage_of(Totals {
                    input: t.input.saturating_sub(prev.input),
                    cached: t.cached.saturating_sub(prev.cached),
                    output: t.output.saturating_sub(prev.output),
                    reasoning: t.reasoning.saturating_sub(prev.reasoning),
                }))
            }
            (None, None) => None,
        };
        if totals.is_some() {
            self.prev_totals = totals;
        }
        let Some(usage) = usage else { return };
        self.open_assistant = None;
        self.response_open = false;
        match self.order {
            UsageOrder::Unknown => {
                self.order = UsageOrder::Precedes;
                self.pending_usage = Some(usage);
            }
            UsageOrder::Precedes => {
                if self.pending_usage.replace(usage).is_some() {
                    self.unpaired_usage += 1;
                }
            }
            UsageOrder::Follows => match self.s.calls.last_mut() {
                Some(c) if c.usage.is_none() => c.usage = Some(usage),
                _ => self.unpaired_usage += 1,
            },
        }
    }

    /// `token_usage_record` (0.147+): the usage of one completed model
    /// response, written after the response's items and before its tools'
    /// outputs. From the first one on, the file's usage comes from these
    /// records and `token_count` events give only the context window.
    ///
    /// A record measures the open response when that response has no usage
    /// yet. Any other (a compaction's own request, a request that recorded no
    /// item) is counted and reported, never attached to a neighbour. A record
    /// naming another thread (a sub-agent's usage written into its parent's
    /// file) is not this thread's.
    pub(super) fn usage_record(&mut self, p: &Value) {
        let thread = p.get("thread_id").and_then(Value::as_str);
        if let (Some(t), Some(own)) = (thread, self.thread.as_deref())
            && t != own
        {
            self.s.diagnostics.skip("token_usage_record (another thread)");
            return;
        }
        let Some(usage) = p.get("usage").and_then(openai_usage) else {
            self.s.diagnostics.skip("token_usage_record (no usage)");
            return;
        };
        self.s.stats.usage_records += 1;
        if !std::mem::replace(&mut self.usage_records, true) {
            // Usage a `token_count` left waiting belongs to no response now.
            self.order = UsageOrder::Follows;
            if self.pending_usage.take().is_some() {
                self.unpaired_usage += 1;
            }
        }
        match self.s.calls.last_mut() {
            Some(c) if self.response_open && c.usage.is_none() => c.usage = Some(usage),
            _ => self.unpaired_records += 1,
        }
        self.open_assistant = None;
        self.response_open = false;
    }
}

/// A token count under the first of `keys` present, clamped to [`crate::read::MAX_TOKENS`].
fn num(v: &Value, keys: &[&str]) -> u64 {
    crate::read::clamp_tokens(keys.iter().find_map(|k| v.pointer(k).and_then(Value::as_u64)).unwrap_or(0))
}

fn totals_of(v: &Value) -> Totals {
    Totals {
        input: num(v, &["/input_tokens"]),
        cached: num(v, &["/cached_input_tokens", "/input_tokens_details/cached_tokens"]),
        output: num(v, &["/output_tokens"]),
        reasoning: num(v, &["/reasoning_output_tokens", "/output_tokens_details/reasoning_tokens"]),
    }
}

/// OpenAI semantics: input includes cached input, output includes reasoning.
fn usage_of(t: Totals) -> Usage {
    Usage {
        uncached_input: t.input.saturating_sub(t.cached),
        cache_read: t.cached,
        cache_write: 0,
        output: t.output,
        reasoning: t.reasoning,
        provenance: UsageProvenance::OpenAi,
    }
}

/// An OpenAI/Codex usage object (`{input_tokens, cached_input_tokens,
/// output_tokens, reasoning_output_tokens}` or the Responses API's `*_details`
/// shape), normalized. None when it has no token counts at all.
pub(crate) fn openai_usage(v: &Value) -> Option<Usage> {
    let o = v.as_object()?;
    if !o.contains_key("input_tokens") && !o.contains_key("output_tokens") {
        return None;
    }
    Some(usage_of(totals_of(v)))
}
