//! Anthropic usage as Claude Code records it on each response: the counts a
//! call is measured and priced by, the advisor's requests, the cache lifetime.

use crate::model::Usage;
use serde_json::Value;

/// `usage.cache_creation {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}`
/// (`get` reads that object): the cache writes of a response by the lifetime
/// asked for, when recorded.
pub(super) fn writes_by_ttl<'v>(get: impl Fn(&str) -> Option<&'v Value>) -> Option<(u64, u64)> {
    let (m5, h1) =
        (get("ephemeral_5m_input_tokens").and_then(as_u64), get("ephemeral_1h_input_tokens").and_then(as_u64));
    (m5.is_some() || h1.is_some()).then(|| (m5.unwrap_or(0), h1.unwrap_or(0)))
}

/// Anthropic usage: `input_tokens` excludes cache reads and cache writes. A
/// count is a non-negative number (floats truncated), clamped; anything else is 0.
pub(super) fn usage_of<'v>(get: impl Fn(&str) -> Option<&'v Value>) -> Usage {
    let f = |k: &str| get(k).and_then(as_u64).unwrap_or(0);
    let mut u = Usage {
        uncached_input: f("input_tokens"),
        cache_read: f("cache_read_input_tokens"),
        cache_write: f("cache_creation_input_tokens"),
        output: f("output_tokens"),
        reasoning: 0,
        provenance: crate::model::UsageProvenance::Anthropic,
    };
    if let Some(last) = last_request(get("iterations")) {
        let g = |k: &str| last.get(k).and_then(as_u64).unwrap_or(0);
        (u.uncached_input, u.cache_read, u.cache_write) =
            (g("input_tokens"), g("cache_read_input_tokens"), g("cache_creation_input_tokens"));
    }
    u
}

/// The last of a response's model requests, when it made more than one. A
/// server tool that runs mid-response (the advisor) makes the model answer
/// again on a longer prompt; the top-level usage then sums the prompts of
/// every request, while `iterations` lists each (`type: "message"`; the
/// advisor's own, on another model, are `advisor_message` and outside the
/// totals). The call's context is the last request's prompt; its output, the
/// total.
fn last_request(iterations: Option<&Value>) -> Option<&Value> {
    let mut requests =
        iterations?.as_array()?.iter().filter(|i| i.get("type").and_then(Value::as_str) == Some("message"));
    requests.next()?;
    requests.next_back()
}

/// One request the advisor (a server tool answering on another model) made
/// inside a response: an `advisor_message` iteration. Its tokens are billed
/// on its model and are in none of the response's totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Advisor {
    pub model: String,
    /// Input, cache reads and cache writes.
    pub prompt: u64,
    pub output: u64,
}

/// The advisor's requests listed in a response's `usage.iterations`.
pub(crate) fn advisors_of(iterations: Option<&Value>) -> Vec<Advisor> {
    let Some(items) = iterations.and_then(Value::as_array) else { return Vec::new() };
    items
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("advisor_message"))
        .map(|i| {
            let g = |k: &str| i.get(k).and_then(as_u64).unwrap_or(0);
            let prompt = ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"];
            Advisor {
                model: i.get("model").and_then(Value::as_str).unwrap_or("an unnamed model").to_string(),
                prompt: prompt.iter().map(|k| g(k)).fold(0, u64::saturating_add),
                output: g("output_tokens"),
            }
        })
        .collect()
}

/// A token count (usage, `preTokens`), clamped to [`crate::read::MAX_TOKENS`].
pub(crate) fn as_u64(v: &Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| f.is_finite() && *f >= 0.0).map(|f| f as u64))
        .map(crate::read::clamp_tokens)
}
