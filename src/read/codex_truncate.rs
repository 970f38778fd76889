//! What Codex sends of a tool output the rollout keeps whole: since its
//! truncation policy (late 2025), each output is cut to a budget when it enters
//! the history the requests are built from, while the rollout is written from
//! the item before the cut. The budget is the one the log records: the turn's
//! `turn_context.truncation_policy` with Codex's 20 % allowance, or a line's own
//! `metadata.fallback_token_limit_override` (tokens, allowance included).

use super::Reader;
use serde_json::Value;

/// Bytes a token is taken for, in Codex's estimate.
const BYTES_PER_TOKEN: usize = 4;

/// A budget for one tool output, as Codex states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Budget {
    Bytes(usize),
    Tokens(usize),
}

impl Budget {
    /// `{"mode":"bytes"|"tokens","limit":N}`, the serialized policy; None for
    /// any other shape.
    pub(super) fn from_policy(v: &Value) -> Option<Budget> {
        let limit = usize::try_from(v.get("limit")?.as_u64()?).ok()?;
        match v.get("mode")?.as_str()? {
            "bytes" => Some(Budget::Bytes(limit)),
            "tokens" => Some(Budget::Tokens(limit)),
            _ => None,
        }
    }

    /// The budget a turn's policy gives a tool output: the limit and a fifth
    /// more, rounded up, for the output's serialization.
    pub(super) fn with_allowance(self) -> Budget {
        let grow = |n: usize| n.saturating_add(n.div_ceil(5));
        match self {
            Budget::Bytes(n) => Budget::Bytes(grow(n)),
            Budget::Tokens(n) => Budget::Tokens(grow(n)),
        }
    }

    fn bytes(self) -> usize {
        match self {
            Budget::Bytes(n) => n,
            Budget::Tokens(n) => n.saturating_mul(BYTES_PER_TOKEN),
        }
    }

    /// What a text costs against this budget.
    fn cost(self, text: &str) -> usize {
        match self {
            Budget::Bytes(_) => text.len(),
            Budget::Tokens(_) => text.len().div_ceil(BYTES_PER_TOKEN),
        }
    }

    fn of_same_kind(self, n: usize) -> Budget {
        match self {
            Budget::Bytes(_) => Budget::Bytes(n),
            Budget::Tokens(_) => Budget::Tokens(n),
        }
    }
}

impl Reader<'_> {
    /// A `turn_context`'s `truncation_policy`: the budget of the turn's tool
    /// outputs. A turn without one (a version before the policy, or `null`)
    /// cuts nothing.
    pub(super) fn truncation_policy(&mut self, policy: Option<&Value>, line: u64) {
        self.output_budget = match policy.filter(|p| !p.is_null()).map(Budget::from_policy) {
            None => None,
            Some(Some(b)) => Some(b.with_allowance()),
            Some(None) => {
                if !self.s.diagnostics.messages.iter().any(|d| d.message == ODD_POLICY) {
                    self.s.diagnostics.warn(self.path, line, ODD_POLICY);
                }
                None
            }
        };
    }
}

const ODD_POLICY: &str =
    "turn_context: a truncation policy of a shape not read: the turn's tool outputs are counted whole, as logged";

/// The first Codex version that cuts tool outputs in the history its requests
/// are built from rather than when they are made; its rollouts record the
/// budget only from late 2025.
const CUTS_IN_HISTORY: (u64, u64) = (0, 52);

/// The smallest budget Codex has cut outputs to without recording it: 10 KiB
/// (and 256 lines), then 10,000 bytes or 10,000 tokens by model.
const UNRECORDED_BUDGET: usize = 10_240;

impl Reader<'_> {
    /// A tool output read whole with no budget recorded: counted when the
    /// version cut outputs in its history and this one is over any budget it
    /// used, to say so once ([`Reader::warn_uncut`]).
    pub(super) fn unrecorded_budget(&mut self, output: Option<&Value>, line: u64) {
        let cuts = self.last_version.as_deref().and_then(major_minor).is_some_and(|v| v >= CUTS_IN_HISTORY);
        let len = match output {
            Some(Value::String(s)) => s.len(),
            Some(Value::Array(items)) => {
                items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).map(str::len).sum()
            }
            _ => 0,
        };
        if cuts && len > UNRECORDED_BUDGET {
            let (first, n) = self.uncut;
            self.uncut = (if n == 0 { line } else { first }, n + 1);
        }
    }

    pub(super) fn warn_uncut(&mut self) {
        let (line, n) = self.uncut;
        // A policy of a shape not read already says its outputs are whole.
        if n > 0 && !self.s.diagnostics.messages.iter().any(|d| d.message == ODD_POLICY) {
            let why = format!(
                "{n} tool output(s) over 10 KB are counted whole: this Codex version cut each output over its \
                 budget (10 KB, or 10,000 tokens for codex models, unless configured) in the history its requests \
                 were built from, and the rollout does not record that budget, so the agent's context is \
                 overstated from each on"
            );
            self.s.diagnostics.warn(self.path, line, why);
        }
    }
}

/// `0.63.0`, `0.63.0-alpha.2` → (0, 63).
fn major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.split(['.', '-']);
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The output as Codex sends it, or None when it fits (or is of a shape Codex
/// does not cut): a text is cut in its middle; a list of content items spends
/// the budget on its texts in order, cutting the first that does not fit and
/// leaving out the texts after it (named in a last item), images kept.
pub(super) fn truncate_output(output: &Value, budget: Budget) -> Option<Value> {
    match output {
        Value::String(s) => (s.len() > budget.bytes()).then(|| Value::String(truncate_text(s, budget))),
        Value::Array(items) => {
            let cut = truncate_items(items, budget);
            (cut != *items).then_some(Value::Array(cut))
        }
        _ => None,
    }
}

/// A text cut to `budget`: a head and a tail of half the budget's bytes each,
/// on character boundaries, around a note of what was cut.
pub(super) fn truncate_text(s: &str, budget: Budget) -> String {
    let max = budget.bytes();
    if s.len() <= max {
        return s.to_string();
    }
    let left = max / 2;
    let tail_from = s.len().saturating_sub(max - left);
    let mut head_end = 0;
    let mut tail_start = s.len();
    let mut removed_chars = 0usize;
    for (i, c) in s.char_indices() {
        let end = i + c.len_utf8();
        if end <= left {
            head_end = end;
        } else if i >= tail_from {
            tail_start = tail_start.min(i);
        } else {
            removed_chars += 1;
        }
    }
    let tail_start = tail_start.max(head_end);
    let note = match budget {
        Budget::Bytes(_) => format!("…{removed_chars} chars truncated…"),
        Budget::Tokens(_) => format!("…{} tokens truncated…", (s.len() - max).div_ceil(BYTES_PER_TOKEN)),
    };
    let (head, tail) = (&s[..head_end], &s[tail_start..]);
    let mut out = String::with_capacity(head.len() + note.len() + tail.len());
    out.push_str(head);
    out.push_str(&note);
    out.push_str(tail);
    out
}

/// Content items (`input_text`, `input_image`…) cut to `budget`.
fn truncate_items(items: &[Value], budget: Budget) -> Vec<Value> {
    let mut left = match budget {
        Budget::Bytes(n) | Budget::Tokens(n) => n,
    };
    let mut out = Vec::with_capacity(items.len());
    let mut omitted = 0usize;
    for item in items {
        let text = match item.get("type").and_then(Value::as_str) {
            Some("input_text") => item.get("text").and_then(Value::as_str),
            _ => None,
        };
        let Some(text) = text else {
            out.push(item.clone());
            continue;
        };
        if text.is_empty() {
            continue;
        }
        if left == 0 {
            omitted += 1;
            continue;
        }
        let cost = budget.cost(text);
        if cost <= left {
            out.push(item.clone());
            left -= cost;
            continue;
        }
        let snippet = truncate_text(text, budget.of_same_kind(left));
        left = 0;
        if snippet.is_empty() {
            omitted += 1;
            continue;
        }
        let mut cut = item.clone();
        if let Some(o) = cut.as_object_mut() {
            o.insert("text".into(), Value::String(snippet));
        }
        out.push(cut);
    }
    if omitted > 0 {
        out.push(serde_json::json!({"type": "input_text", "text": format!("[omitted {omitted} text items ...]")}));
    }
    out
}

#[cfg(test)]
#[path = "codex_truncate_tests.rs"]
mod tests;
