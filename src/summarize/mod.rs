//! Summarizers (DESIGN.md §5): given the messages a compaction replaces (plus the
//! previous summary and, for a split turn, the turn prefix), produce the summary
//! text, its file-operation metadata and the tokens the summarizer itself spent.
//!
//! The trait is synchronous on purpose: the replay engine is pure CPU work on
//! rayon threads, and a future LLM summarizer blocks on its own runtime inside
//! `summarize` (with its cache and bounded concurrency) instead of forcing async
//! through the engine.

pub mod command;
mod command_run;
pub mod extractive;
pub mod truncate;

use crate::model::{Block, Message};
use crate::text::atoms::SessionLens;
use crate::text::filetrack::FileOps;
use crate::tokens::Estimator;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

pub use extractive::Extractive;
pub use truncate::Truncate;

pub use crate::policy::SummarizerKind;

/// Which summary a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryPart {
    /// The history before the cut (or before the split turn).
    History,
    /// The compacted beginning of a turn that the cut splits (specs/002): what the
    /// user asked in this turn and what was tried, as context for the kept suffix.
    TurnPrefix,
}

/// Limits on what a summarizer reads (specs/003: tool-result previews of 500 head
/// + 200 tail characters, input capped at 100K characters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputLimits {
    pub preview_head_chars: Option<usize>,
    pub preview_tail_chars: usize,
    pub input_cap_chars: Option<usize>,
}

/// One summarization request.
pub struct SummaryRequest<'a> {
    pub part: SummaryPart,
    /// The messages being replaced, in order (for `TurnPrefix`, the turn prefix).
    pub messages: &'a [&'a Message],
    /// The summary this one updates (iterative update), when there is one.
    pub previous_summary: Option<&'a str>,
    /// File operations to report: cumulative ones from earlier compactions merged
    /// with those of `messages` (when the policy tracks them), else just these.
    pub file_ops: &'a FileOps,
    /// Upper bound of the summary size in tokens (`compact.summary_max_tokens`).
    pub max_tokens: u64,
    pub limits: InputLimits,
    /// The replay's estimator, to keep the summary within `max_tokens`.
    pub estimator: &'a dyn Estimator,
    /// The session and policy the compaction belongs to, for summarizers that
    /// tell their program (the engine always gives it; `None` in tests).
    pub context: Option<RequestContext<'a>>,
}

/// Where a summary request comes from.
#[derive(Debug, Clone, Copy)]
pub struct RequestContext<'a> {
    pub session: &'a crate::model::Session,
    pub policy: &'a str,
}

/// Tokens a summarizer spent (0 for the non-LLM ones): the cost of a compaction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummarizerUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Requests made (several for chunked or split-turn summaries).
    pub calls: u64,
}

impl SummarizerUsage {
    // Saturating: an LLM server reports these, and a broken one can say anything.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
    pub fn add(&mut self, other: &SummarizerUsage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.calls += other.calls;
    }
}

/// What a summarizer returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub text: String,
    pub file_ops: FileOps,
    pub usage: SummarizerUsage,
    /// Why the policy's summarizer did not write `text` and a fallback
    /// summarizer did (it failed, and said why); `None` when it wrote it.
    pub fallback: Option<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SummarizeError {
    /// The summarizer ran and failed (API error, empty answer, timeout…); the
    /// policy's `fallback` decides what happens.
    #[error("summarizer failed: {0}")]
    Failed(String),
}

/// A summarizer. Implementations must be deterministic for a given request
/// (LLM ones through their response cache) so replays are reproducible.
pub trait Summarizer: Send + Sync {
    fn name(&self) -> &str;
    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError>;

    /// This summarizer for requests about one session (`lens`: its messages
    /// and their atoms, read once and shared with the quality pass), when it
    /// reads the session's atoms or can remember what it read from one
    /// request to the next: a sweep or `compare` compacts the same messages
    /// under many policies. `None`: the summarizer itself serves.
    fn for_session<'s>(&'s self, _lens: &'s SessionLens<'s>) -> Option<Box<dyn Summarizer + 's>> {
        None
    }
}

/// The index of `m` in `messages` when it is one of them (by address: the
/// engine hands summarizers the session's own messages by reference, and
/// copies — pruned or synthetic messages — live elsewhere).
pub fn index_in(messages: &[Message], m: &Message) -> Option<usize> {
    let size = std::mem::size_of::<Message>();
    let base = messages.as_ptr() as usize;
    let off = (m as *const Message as usize).checked_sub(base)?;
    (off % size == 0 && off / size < messages.len()).then_some(off / size)
}

/// The summarizers built into the library (`llm` is supplied by the CLI).
///
/// One shared object per kind: policies using the same built-in get the same
/// object, which is how a sweep and `compare` know they can share its answers
/// (objects of other summarizers, LLM ones per policy, are never merged).
pub fn builtin(kind: SummarizerKind) -> Option<Arc<dyn Summarizer>> {
    static TRUNCATE: LazyLock<Arc<dyn Summarizer>> = LazyLock::new(|| Arc::new(Truncate));
    static EXTRACTIVE: LazyLock<Arc<dyn Summarizer>> = LazyLock::new(|| Arc::new(Extractive));
    match kind {
        SummarizerKind::Truncate => Some(TRUNCATE.clone()),
        SummarizerKind::Extractive => Some(EXTRACTIVE.clone()),
        SummarizerKind::Llm | SummarizerKind::Command => None,
    }
}

/// The text of a tool result's content: text blocks joined with newlines (the
/// way OpenClaw's pruner measures it); images are not text.
pub use crate::model::joined_text as tool_result_text;

/// The first `n` characters of `s` (whole string when shorter).
pub fn head_chars(s: &str, n: usize) -> &str {
    // ASCII text (most tool output): the n-th character is the n-th byte.
    if let Some(head) = s.as_bytes().get(..n)
        && head.is_ascii()
    {
        return &s[..n];
    }
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The last `n` characters of `s`.
pub fn tail_chars(s: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    if let Some(start) = s.len().checked_sub(n)
        && s.as_bytes()[start..].is_ascii()
    {
        return &s[start..];
    }
    match s.char_indices().rev().nth(n - 1) {
        Some((i, _)) => &s[i..],
        None => s,
    }
}

/// A preview of a long text: head + tail with a marker, as summarizer inputs use.
pub fn preview(s: &str, head: usize, tail: usize) -> Cow<'_, str> {
    let total = s.chars().count();
    if total <= head + tail {
        return Cow::Borrowed(s);
    }
    let omitted = total - head - tail;
    Cow::Owned(format!("{}\n[… {omitted} chars omitted …]\n{}", head_chars(s, head), tail_chars(s, tail)))
}

/// One line, at most `max` characters, with an ellipsis when cut.
pub fn clip_line(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max { one } else { format!("{}…", head_chars(&one, max.saturating_sub(1))) }
}

/// Render messages as a transcript for an LLM summarizer: wrapped in
/// `<conversation>` (specs/002 anti-continuation), tool results previewed and the
/// whole capped per `limits`.
pub fn serialize_transcript(messages: &[&Message], limits: &InputLimits) -> String {
    use std::fmt::Write as _;
    let mut body = String::new();
    for m in messages {
        let role = match (m.role, m.origin) {
            (crate::model::Role::System, _) => "System",
            (crate::model::Role::Assistant, _) => "Assistant",
            (_, crate::model::Origin::ToolResult) => "Tool result",
            (_, crate::model::Origin::CompactSummary) => "Summary",
            _ => "User",
        };
        for b in &m.blocks {
            match b {
                Block::Text { text } => {
                    let _ = writeln!(body, "[{role}]: {text}");
                }
                Block::Thinking { text, .. } if !text.is_empty() => {
                    let _ = writeln!(body, "[{role} thinking]: {text}");
                }
                Block::ToolUse { name, input, .. } => {
                    let args = input.to_string();
                    let _ = writeln!(body, "[{role} tool call]: {name}({})", preview(&args, 200, 0));
                }
                Block::ToolResult { content, is_error, .. } => {
                    let text = tool_result_text(content);
                    let shown = match limits.preview_head_chars {
                        Some(h) => preview(&text, h, limits.preview_tail_chars),
                        None => Cow::Borrowed(text.as_ref()),
                    };
                    let err = if *is_error == Some(true) { " (error)" } else { "" };
                    let _ = writeln!(body, "[{role}{err}]: {shown}");
                }
                Block::Image { media_type, .. } => {
                    let _ = writeln!(body, "[{role}]: [image {media_type}]");
                }
                _ => {}
            }
        }
    }
    if let Some(cap) = limits.input_cap_chars {
        // Cut from the middle so the start (the task) and the end (current work)
        // both survive, as specs/003 does.
        let total = body.chars().count();
        if total > cap {
            let half = cap / 2;
            body = format!(
                "{}\n[… {} chars truncated …]\n{}",
                head_chars(&body, half),
                total - 2 * half,
                tail_chars(&body, half)
            );
        }
    }
    format!("<conversation>\n{body}</conversation>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_respect_char_boundaries() {
        assert_eq!(head_chars("héllo", 2), "hé");
        assert_eq!(tail_chars("héllo", 4), "éllo");
        assert_eq!(tail_chars("ab", 5), "ab");
        assert_eq!(tail_chars("ab", 0), "");
    }

    proptest::proptest! {
        /// The ASCII shortcuts cut where walking the characters does.
        #[test]
        fn head_and_tail_cut_by_characters(s in "[a-z é€😀\n]{0,40}", n in 0usize..45) {
            let head = s.char_indices().nth(n).map_or(s.as_str(), |(i, _)| &s[..i]);
            proptest::prop_assert_eq!(head_chars(&s, n), head);
            let tail = if n == 0 { "" } else { s.char_indices().rev().nth(n - 1).map_or(s.as_str(), |(i, _)| &s[i..]) };
            proptest::prop_assert_eq!(tail_chars(&s, n), tail);
        }
    }

    #[test]
    fn preview_keeps_head_and_tail() {
        let s = "a".repeat(10) + &"b".repeat(10);
        assert_eq!(preview(&s, 3, 2), "aaa\n[… 15 chars omitted …]\nbb");
        assert_eq!(preview("short", 3, 2), "short");
    }
}
