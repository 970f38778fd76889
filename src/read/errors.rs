//! Classification of recorded API errors into context overflow, rate limit or
//! other, with the pattern lists of compaction-anchors.md §(b).
//!
//! The broad substrings Opal uses (`max_tokens`, `context window`) are left out on
//! purpose: they match ordinary text about output limits and rate-limit notices.
//! Groq-style TPM ceilings ("Limit n, Requested m" on a 413/429 about tokens per
//! minute) are rate limits, not overflows.

use crate::model::ApiErrorKind;
use regex::RegexSet;
use std::sync::OnceLock;

const OVERFLOW: &[&str] = &[
    // pi-mono overflow.ts
    r"prompt is too long",
    r"input is too long for (requested model|the model|this model)",
    r"exceeds the context window",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"model_context_window_exceeded",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"^4(00|13)\s*(status code)?\s*\(no body\)",
    // opencode error.ts
    r"request entity too large",
    r"context length is only \d+ tokens",
    r"input length.*exceeds.*context (length|limit)",
    // Vibe exceptions.py
    r"context too long",
    r"maximum context length",
    r"couldn't fit with truncation",
    r"model_context_exceeded",
    r"prompt_too_long",
    // OpenClaw corpus
    r"request_too_large",
    r"request exceeds the maximum size",
    r"request size exceeds model context window",
    r"input length and max_tokens exceed context limit",
    r"exceeds the model's maximum context length",
    r"max_tokens would exceed context window",
    r"input length would exceed context budget",
    r"input length \d+ tokens exceeds the model limit",
    r"input exceeds the maximum number of tokens",
    r"input is too long",
    r"context size has been exceeded",
    r"exceeds the available context size",
    r"configured context size is \d+ tokens",
    r"must have less than \d+ tokens",
    r"tokens \+ `max_new_tokens` must be <=",
    r"context_window_exceeded",
    r"ran out of room in the model's context window",
    r"context overflow",
    r"total tokens exceeds the model's maximum limit",
    r"model_max_prompt_tokens_exceeded",
    r"上下文过长|请压缩上下文|上下文超出限制|超出最大上下文长度",
];

const RATE_LIMIT: &[&str] = &[
    r"rate[_ ]limit",
    r"\b429\b",
    r"too many requests",
    r"hit your limit",
    r"usage limit",
    r"quota",
    r"overloaded",
    r"resource_exhausted",
    r"tokens per minute|\btpm\b|requests per minute|\brpm\b",
    r"limit \d+,? requested \d+",
    r"try again in \d+",
];

/// The pattern sets, matched against a lower-cased message. The patterns are
/// lower case (a test checks it) and compiled as they are: with `(?i)` on
/// each, building the sets took 3 times as long (6 ms, most of a small
/// replay that meets one API error).
fn sets() -> &'static (RegexSet, RegexSet) {
    static SETS: OnceLock<(RegexSet, RegexSet)> = OnceLock::new();
    SETS.get_or_init(|| {
        // The patterns are constants checked by the unit tests below.
        let build = |pats: &[&str]| RegexSet::new(pats).unwrap_or_else(|_| RegexSet::empty());
        (build(OVERFLOW), build(RATE_LIMIT))
    })
}

/// Classify an error message, in any case. A rate-limit signal wins over a
/// size-ceiling match (Groq TPM 413s mention tokens but are not overflows).
pub fn classify(message: &str) -> ApiErrorKind {
    let (overflow, rate) = sets();
    // Bound the work on hostile input.
    let m = super::truncate_str(message, 16 * 1024).to_ascii_lowercase();
    let is_rate = rate.is_match(&m);
    if overflow.is_match(&m) && !(is_rate && m.contains("per minute")) {
        return ApiErrorKind::ContextOverflow;
    }
    if is_rate {
        return ApiErrorKind::RateLimit;
    }
    ApiErrorKind::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile() {
        for p in OVERFLOW.iter().chain(RATE_LIMIT) {
            assert!(regex::Regex::new(p).is_ok(), "{p}");
        }
    }

    /// The message is lower-cased before matching: a pattern with a capital
    /// letter would never match.
    #[test]
    fn patterns_are_lower_case() {
        for p in OVERFLOW.iter().chain(RATE_LIMIT) {
            assert!(!p.bytes().any(|b| b.is_ascii_uppercase()), "{p}");
        }
    }

    #[test]
    fn classifies_known_messages() {
        use ApiErrorKind::*;
        let cases = [
            ("prompt is too long: 208423 tokens > 200000 maximum", ContextOverflow),
            (
                "Your input exceeds the context window of this model. Please adjust your input and try again.",
                ContextOverflow,
            ),
            ("request (66202 tokens) exceeds the available context size (65536 tokens)", ContextOverflow),
            ("input length and max_tokens exceed context limit: 196758 + 8192 > 200000", ContextOverflow),
            ("Codex ran out of room in the model's context window. Start a new thread", ContextOverflow),
            ("上下文过长", ContextOverflow),
            ("PROMPT IS TOO LONG", ContextOverflow),
            ("Rate Limit reached for requests", RateLimit),
            ("You've hit your limit · resets 11pm (Asia/Shanghai)", RateLimit),
            ("429 Too Many Requests", RateLimit),
            ("Request too large for gpt-4o on tokens per minute (TPM): Limit 30000, Requested 41234", RateLimit),
            ("API Error: Connection error.", Other),
            ("max_tokens must be at least 1", Other),
            ("The context window is a useful concept", Other),
        ];
        for (msg, want) in cases {
            assert_eq!(classify(msg), want, "{msg}");
        }
    }
}
