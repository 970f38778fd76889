//! Sessions from a compact description, for tests and benchmarks (the readers
//! are built elsewhere; the engine is tested against the model directly).
//!
//! `session("u400 t2 r300,5000 a50")` builds, in order:
//! - `u<N>` a human message of N characters; `i<N>` an injected user message;
//!   `s<N>` a system message;
//! - `a<N>` an assistant text reply (a recorded call);
//! - `t<K>` an assistant message with K `Read` tool calls (a recorded call),
//!   `t<K>:<Name>` with another tool name;
//! - `r<N>,<N>,…` one tool-result message answering the pending calls in order
//!   (`!` after a size marks an error, `+img` adds an image);
//! - `R<N>,<N>,…` the same results, one message each (split parallel results);
//! - `g<S>` a gap of S seconds before the next message (timestamps start at a
//!   fixed epoch and advance one second per message).
//!
//! Texts are deterministic filler of exactly N characters.

use crate::model::{Block, Call, Format, Message, Origin, RecordedCompaction, Role, Session, Usage, UsageProvenance};
use crate::policy::Policy;
use serde_json::json;
use std::collections::VecDeque;
use std::ops::Range;

/// Builds a [`Session`] message by message.
pub struct SessionBuilder {
    session: Session,
    pending: VecDeque<String>,
    next_id: usize,
    clock: i64,
}

/// Deterministic text of exactly `n` ASCII characters.
pub fn filler(n: usize, seed: usize) -> String {
    let word = format!("w{seed} ");
    word.chars().cycle().take(n).collect()
}

impl SessionBuilder {
    pub fn new(id: &str) -> SessionBuilder {
        SessionBuilder {
            session: Session::new(id, Format::Generic, format!("{id}.jsonl")),
            pending: VecDeque::new(),
            next_id: 0,
            clock: 1_700_000_000_000,
        }
    }

    fn push(&mut self, mut m: Message) -> usize {
        self.clock += 1_000;
        m.timestamp = Some(self.clock);
        m.source_line = self.session.messages.len() as u64 + 1;
        self.session.messages.push(m);
        self.session.messages.len() - 1
    }

    fn call(&mut self, index: usize) {
        let timestamp = self.session.messages[index].timestamp;
        self.session.calls.push(Call {
            message_index: index,
            model: None,
            usage: None,
            timestamp,
            response_id: None,
            fast: false,
        });
    }

    pub fn human(mut self, text: impl Into<String>) -> Self {
        self.push(Message::new(Role::User, Origin::Human, vec![Block::text(text)]));
        self
    }

    pub fn injected(mut self, text: impl Into<String>) -> Self {
        self.push(Message::new(Role::User, Origin::Injected, vec![Block::text(text)]));
        self
    }

    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.push(Message::new(Role::System, Origin::Injected, vec![Block::text(text)]));
        self
    }

    /// An assistant text reply: a recorded call.
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        let i = self.push(Message::new(Role::Assistant, Origin::Model, vec![Block::text(text)]));
        self.call(i);
        self
    }

    /// An assistant message with tool calls (a recorded call); their ids become
    /// pending until answered by [`SessionBuilder::results`].
    pub fn tool_calls(mut self, text: &str, calls: &[(&str, serde_json::Value)]) -> Self {
        let mut blocks = Vec::new();
        if !text.is_empty() {
            blocks.push(Block::text(text));
        }
        for (name, input) in calls {
            let id = format!("toolu_{:03}", self.next_id);
            self.next_id += 1;
            self.pending.push_back(id.clone());
            blocks.push(Block::ToolUse { id, name: (*name).to_string(), input: input.clone() });
        }
        let i = self.push(Message::new(Role::Assistant, Origin::Model, blocks));
        self.call(i);
        self
    }

    /// One user message answering the next pending calls: (text, is_error, image).
    pub fn results(mut self, results: &[(String, bool, bool)]) -> Self {
        let mut blocks = Vec::new();
        for (text, err, img) in results {
            let id = self.pending.pop_front().unwrap_or_else(|| "toolu_orphan".to_string());
            let mut content = vec![Block::text(text.clone())];
            if *img {
                content.push(Block::Image { media_type: "image/png".into(), bytes: 1_000 });
            }
            blocks.push(Block::ToolResult { tool_use_id: id, content, is_error: Some(*err) });
        }
        self.push(Message::new(Role::User, Origin::ToolResult, blocks));
        self
    }

    /// Record usage (prompt size) on the last call.
    pub fn usage(mut self, prompt_tokens: u64) -> Self {
        if let Some(c) = self.session.calls.last_mut() {
            c.usage = Some(Usage {
                uncached_input: prompt_tokens,
                cache_read: 0,
                cache_write: 0,
                output: 0,
                reasoning: 0,
                provenance: UsageProvenance::Anthropic,
            });
        }
        self
    }

    /// Advance the clock (for cache-TTL gating).
    pub fn gap(mut self, secs: i64) -> Self {
        self.clock += secs * 1_000;
        self
    }

    /// Add a recorded compaction of the agent itself.
    pub fn recorded_compaction(mut self, kept: Range<usize>, inserted: Range<usize>) -> Self {
        self.session.recorded_compactions.push(RecordedCompaction {
            kind: crate::model::CompactionKind::Other,
            source_line: 0,
            inserted,
            kept,
            head: 0..0,
            tokens_before: None,
            trigger: None,
        });
        self
    }

    /// Add a recorded clearing of the agent itself: from message `at` on, the
    /// tool results at `blocks` are sent as `[cleared]`.
    pub fn recorded_clearing(mut self, at: usize, blocks: &[(usize, usize)]) -> Self {
        self.session.recorded_clearings.push(crate::model::RecordedClearing {
            source_line: 0,
            at,
            blocks: blocks
                .iter()
                .map(|&(m, b)| crate::model::ClearedBlock::new(m, b, vec![Block::text("[cleared]")]))
                .collect(),
            tokens_saved: None,
            trigger: None,
        });
        self
    }

    pub fn len(&self) -> usize {
        self.session.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.session.messages.is_empty()
    }

    pub fn build(self) -> Session {
        self.session
    }

    /// Apply one token of the description language (see the module doc).
    pub fn step(self, tok: &str) -> Self {
        let (head, rest) = tok.split_at(1);
        let num = |s: &str| s.trim_end_matches(['!']).parse::<usize>().unwrap_or(0);
        let seed = self.session.messages.len();
        match head {
            "u" => self.human(filler(num(rest), seed)),
            "i" => self.injected(filler(num(rest), seed)),
            "s" => self.system(filler(num(rest), seed)),
            "a" => self.assistant(filler(num(rest), seed)),
            "g" => self.gap(num(rest) as i64),
            "t" => {
                let (k, name) = rest.split_once(':').unwrap_or((rest, "Read"));
                let calls: Vec<(&str, serde_json::Value)> =
                    (0..num(k)).map(|j| (name, json!({"file_path": format!("/src/f{}_{j}.rs", seed)}))).collect();
                self.tool_calls("", &calls)
            }
            "r" | "R" => {
                let results: Vec<(String, bool, bool)> = rest
                    .split(',')
                    .enumerate()
                    .map(|(j, r)| {
                        let img = r.contains("+img");
                        let r = r.replace("+img", "");
                        (filler(num(&r), seed * 31 + j), r.ends_with('!'), img)
                    })
                    .collect();
                if head == "r" {
                    self.results(&results)
                } else {
                    results.into_iter().fold(self, |b, r| b.results(std::slice::from_ref(&r)))
                }
            }
            _ => self,
        }
    }
}

/// A session from the description language (see the module doc).
pub fn session(desc: &str) -> Session {
    desc.split_whitespace().fold(SessionBuilder::new("test"), SessionBuilder::step).build()
}

/// A policy with every token constant scaled from its own window to `window`
/// (and a chars/4-based estimator), so small sessions reach the thresholds that
/// real ones reach at full size: compactions chain, pruning fires.
pub fn scaled(mut p: Policy, window: u64) -> Policy {
    let w = window.max(1);
    let from = if p.window_is_auto() { super::DEFAULT_WINDOW } else { p.context_window.max(1) };
    let f = |x: u64| x.saturating_mul(w) / from;
    p.estimator = match p.estimator {
        crate::tokens::EstimatorKind::Calibrated => crate::tokens::EstimatorKind::Calibrated,
        _ => crate::tokens::EstimatorKind::Chars4,
    };
    p.max_output_tokens = f(p.max_output_tokens);
    p.compact.trigger_tokens = f(p.compact.trigger_tokens);
    p.compact.reserve_tokens = f(p.compact.reserve_tokens);
    p.compact.keep_recent_tokens = f(p.compact.keep_recent_tokens);
    p.compact.summary_max_tokens = f(p.compact.summary_max_tokens).max(150);
    p.compact.user_message_budget_tokens = p.compact.user_message_budget_tokens.map(f);
    p.compact.min_gain_tokens = f(p.compact.min_gain_tokens);
    p.flush.reserve_tokens = f(p.flush.reserve_tokens);
    p.flush.threshold_tokens = f(p.flush.threshold_tokens);
    p.prune.clear_tool_uses.trigger_tokens = f(p.prune.clear_tool_uses.trigger_tokens);
    p.prune.protect_tokens = p.prune.protect_tokens.map(f);
    p.prune.minimum_tokens = f(p.prune.minimum_tokens);
    p.prune.min_prunable_tool_chars = f(p.prune.min_prunable_tool_chars);
    p.context_window = w;
    p
}

/// chars/4 that counts its message estimates: for tests that check how often
/// messages are estimated (once per message, shared between policies and
/// with the quality pass).
#[derive(Default)]
pub struct CountingEstimator {
    pub messages: std::sync::atomic::AtomicUsize,
}

impl crate::tokens::Estimator for CountingEstimator {
    fn kind(&self) -> crate::tokens::EstimatorKind {
        crate::tokens::EstimatorKind::Chars4
    }
    fn text_tokens(&self, text: &str) -> u64 {
        crate::tokens::Chars4.text_tokens(text)
    }
    fn message_tokens(&self, m: &Message) -> u64 {
        self.messages.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        crate::tokens::Chars4.message_tokens(m)
    }
    fn block_tokens(&self, b: &Block) -> u64 {
        crate::tokens::Chars4.block_tokens(b)
    }
}
