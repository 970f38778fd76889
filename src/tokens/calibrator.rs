//! The `calibrated` estimator's state: specs/002's hybrid estimate (Opal
//! `usage_tracker.ex`), as pi does it (`compaction.ts` `estimateContextTokens`).
//!
//! The current prompt ≈ the last recorded usage (prompt + output of the last call
//! that reported usage: that output is the assistant message now in context) + a
//! chars/4 estimate of every message appended since. Without usage (first call, or
//! right after a compaction, whose usage no longer describes the context — pi and
//! Opal both reset it) the estimate falls back to chars/4 of the whole context plus
//! the system prompt.
//!
//! Protocol for the replay engine, per session, in message order:
//! 1. [`Calibrator::add`] every message appended to the context (chars/4 count from
//!    the [`super::MessageTokens`] cache of [`super::Chars4`]), the recorded
//!    assistant message of a call included;
//! 2. right after adding the assistant message of a call, [`Calibrator::observe`]
//!    its recorded usage;
//! 3. before call *i*, [`Calibrator::estimate`] is the estimated prompt of call *i*;
//! 4. when the policy prunes, [`Calibrator::remove`] the tokens it freed; when it
//!    compacts, [`Calibrator::reset`] with the chars/4 size of the new context.

use crate::model::Usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Calibrator {
    /// Added to the heuristic estimate only: a recorded prompt already contains it.
    system_tokens: u64,
    /// chars/4 of everything in context (the fallback).
    total: u64,
    /// prompt + output of the last usage report that still describes the context.
    anchor: Option<u64>,
    /// chars/4 of the messages added since `anchor`.
    since: u64,
}

impl Calibrator {
    /// `system_tokens`: the system prompt's size (not in the logs), added when no
    /// usage is available.
    pub fn new(system_tokens: u64) -> Calibrator {
        Calibrator { system_tokens, ..Calibrator::default() }
    }

    /// A message of `tokens` (chars/4) was appended to the context.
    pub fn add(&mut self, tokens: u64) {
        self.total += tokens;
        self.since += tokens;
    }

    /// `tokens` (chars/4) left the context without a compaction (pruning). The
    /// anchored estimate drops by as much: the freed tokens are in messages the
    /// last usage report counted.
    pub fn remove(&mut self, tokens: u64) {
        self.total = self.total.saturating_sub(tokens);
        if let Some(a) = &mut self.anchor {
            *a = a.saturating_sub(tokens);
        }
    }

    /// Recorded usage of the call whose assistant message was just added. A usage
    /// with an empty prompt (API-error placeholders, aborted requests) is ignored, as
    /// pi skips aborted and errored assistant messages.
    pub fn observe(&mut self, usage: &Usage) {
        self.observe_tokens(usage.prompt_tokens(), usage.output);
    }

    /// [`Calibrator::observe`] with raw numbers.
    pub fn observe_tokens(&mut self, prompt: u64, output: u64) {
        if prompt == 0 {
            return;
        }
        self.anchor = Some(prompt + output);
        self.since = 0;
    }

    /// The context was replaced (compaction): it now holds `context_tokens` (chars/4)
    /// and no usage report describes it yet.
    pub fn reset(&mut self, context_tokens: u64) {
        self.total = context_tokens;
        self.anchor = None;
        self.since = 0;
    }

    /// Estimated prompt of the next call.
    pub fn estimate(&self) -> u64 {
        match self.anchor {
            Some(a) => a + self.since,
            None => self.heuristic(),
        }
    }

    /// Whether [`Calibrator::estimate`] rests on recorded usage.
    pub fn is_calibrated(&self) -> bool {
        self.anchor.is_some()
    }

    /// The pure chars/4 estimate of the context, system prompt included.
    pub fn heuristic(&self) -> u64 {
        self.system_tokens + self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::UsageProvenance;

    fn usage(input: u64, cache_read: u64, output: u64) -> Usage {
        Usage {
            uncached_input: input,
            cache_read,
            cache_write: 0,
            output,
            reasoning: 0,
            provenance: UsageProvenance::Anthropic,
        }
    }

    #[test]
    fn falls_back_to_chars4_then_calibrates() {
        let mut c = Calibrator::new(100);
        c.add(40); // user message
        assert!(!c.is_calibrated());
        assert_eq!(c.estimate(), 140); // system + chars4
        c.add(10); // assistant message of call 0
        c.observe(&usage(500, 1000, 30)); // recorded prompt 1500 + output 30
        assert!(c.is_calibrated());
        assert_eq!(c.estimate(), 1530);
        c.add(25); // tool result
        assert_eq!(c.estimate(), 1555);
        assert_eq!(c.heuristic(), 175);
        // Pruning frees 20 tokens of an old message.
        c.remove(20);
        assert_eq!(c.estimate(), 1535);
        assert_eq!(c.heuristic(), 155);
        // A zero-prompt usage (API error placeholder) does not re-anchor.
        c.add(5);
        c.observe(&usage(0, 0, 0));
        assert_eq!(c.estimate(), 1540);
        // Compaction: usage no longer applies.
        c.reset(60);
        assert!(!c.is_calibrated());
        assert_eq!(c.estimate(), 160);
        c.add(4);
        assert_eq!(c.estimate(), 164);
        c.observe_tokens(900, 100);
        assert_eq!(c.estimate(), 1000);
    }
}
