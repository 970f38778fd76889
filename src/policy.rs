//! Context-management policies (DESIGN.md §4): plain data that says when and how
//! a replay prunes tool output (Layer 1) and compacts history (Layer 2).
//!
//! A policy comes from a preset (`crate::presets`), a TOML file, and `--set
//! key=value` overrides whose dotted keys mirror the TOML layout
//! (`prune.soft_trim_chars`, `compact.keep_recent_tokens`, …). Every key is listed
//! in [`Policy::KEYS`]; unknown keys are rejected with the key named, so a typo in a
//! sweep grid fails loudly instead of silently measuring the default.
//!
//! Optional parameters serialize as the string `"off"` (TOML has no null), which
//! keeps `compactor presets` output complete and makes every preset round-trip
//! through TOML exactly.

use crate::tokens::EstimatorKind;
use serde::{Deserialize, Serialize};

pub(crate) mod keys;

/// A complete context-management policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Preset name or a user label; used in reports and output paths.
    pub name: String,
    /// Where the constants come from (spec section / source key).
    pub source: String,
    /// Context window of the model, in tokens. Calls whose request exceeds it are
    /// counted as overflows. `"auto"` ([`AUTO_WINDOW`]): each session's own, as
    /// its log records it or its model has it (resolved by the replay).
    #[serde(with = "window")]
    pub context_window: u64,
    /// The `max_tokens` the agent requests; some triggers include it.
    pub max_output_tokens: u64,
    /// Size of the system prompt + tool schemas, which most logs do not contain.
    /// `off` = calibrate from the first recorded usage: max(0, recorded − estimate).
    #[serde(with = "off")]
    pub system_tokens: Option<u64>,
    /// How request sizes are estimated. `calibrated` = the base estimator plus the
    /// gap between the last recorded usage and the estimate at that call.
    pub estimator: EstimatorKind,
    /// Tokens added per message for role/structure (specs/000: 4; Opal: 10).
    pub message_overhead_tokens: u64,
    pub prune: Prune,
    pub compact: Compact,
    pub flush: Flush,
    /// Tolerances of `compactor check` for this policy (flags override them).
    #[serde(default)]
    pub check: CheckTolerances,
}

/// How the age of a tool result is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgeUnit {
    /// Number of newer tool-result messages (specs/000).
    ToolResults,
    /// Number of newer assistant messages (specs/004, OpenClaw).
    AssistantTurns,
}

/// Layer 1: tool-output pruning. Applied per request to the view; `persist`
/// writes it into history instead (opencode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Prune {
    pub enabled: bool,
    /// Pruned content replaces history (the summarizer and transcript see it).
    pub persist: bool,
    pub age_unit: AgeUnit,
    /// Tool results younger than this (in `age_unit`) are never touched.
    pub keep_last: u64,
    /// Soft-trim results longer than this many characters to head + tail.
    #[serde(with = "off")]
    pub soft_trim_chars: Option<u64>,
    pub head: u64,
    pub tail: u64,
    /// Layout of a soft-trimmed result. Placeholders: `{head}`, `{tail}` (the
    /// kept text), `{head_chars}`, `{tail_chars}`, `{total_chars}`.
    pub trim_template: String,
    /// Hard-clear results at least this old (in `age_unit`).
    #[serde(with = "off")]
    pub hard_clear_after: Option<u64>,
    /// Text that replaces a hard-cleared result.
    pub placeholder: String,
    /// Tool names whose results are never pruned.
    pub protect_tools: Vec<String>,
    /// Results containing images are never pruned (soft-trim always skips them).
    pub skip_images: bool,
    /// OpenClaw: only the N newest image results are protected from hard-clear.
    #[serde(with = "off")]
    pub protect_recent_images: Option<u64>,
    /// OpenClaw "bootstrap safety": nothing before the first user message.
    pub protect_before_first_user: bool,
    /// OpenClaw: soft-trim only when the request is at least this share of the window.
    #[serde(with = "off")]
    pub soft_trim_ratio: Option<f64>,
    /// OpenClaw: hard-clear oldest first while the request is at least this share.
    #[serde(with = "off")]
    pub hard_clear_ratio: Option<f64>,
    /// OpenClaw: hard-clear only when prunable tool output is at least this many chars.
    pub min_prunable_tool_chars: u64,
    /// Truncate every result longer than this at ingestion, whatever its age
    /// (OpenClaw `maxToolResultChars`, specs/003 `MaxToolResultChars`).
    #[serde(with = "off")]
    pub cap_chars: Option<u64>,
    /// opencode: tokens of the newest tool output that are never pruned.
    #[serde(with = "off")]
    pub protect_tokens: Option<u64>,
    /// opencode: prune only when more than this many tokens would be freed.
    pub minimum_tokens: u64,
    /// opencode: tool output of the last N user turns is skipped.
    pub skip_last_user_turns: u64,
    /// OpenClaw cache-ttl mode: prune only when at least this many seconds passed
    /// since the previous call (the prompt cache has expired); other calls send
    /// the full history.
    #[serde(with = "off")]
    pub cache_ttl_secs: Option<u64>,
    /// Prune only once the full request reaches this share of the window; the
    /// calls before send the full history, as the agent did, so a session that
    /// never nears its window keeps its prompt cache whole and costs what it
    /// cost. With `cache_ttl_secs`, both must hold.
    #[serde(default, with = "off")]
    pub start_ratio: Option<f64>,
    pub clear_tool_uses: ClearToolUses,
}

/// Anthropic `clear_tool_uses_20250919` context edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClearToolUses {
    pub enabled: bool,
    /// Clear when the full request exceeds this many input tokens.
    pub trigger_tokens: u64,
    /// Most recent tool uses kept.
    pub keep: u64,
    /// Clear only when at least this many tokens would be cleared.
    pub clear_at_least: u64,
    /// Tools whose results are never cleared.
    pub exclude_tools: Vec<String>,
}

/// What fires a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerKind {
    /// size > `trigger_tokens` (absolute).
    Tokens,
    /// size > `trigger_ratio` × `context_window`.
    Ratio,
    /// size > `context_window` − `reserve_tokens`.
    Reserve,
}

impl TriggerKind {
    /// As `compact.trigger` spells it.
    pub fn name(self) -> &'static str {
        match self {
            TriggerKind::Tokens => "tokens",
            TriggerKind::Ratio => "ratio",
            TriggerKind::Reserve => "reserve",
        }
    }
}

/// The keys nothing reads in a policy whose `compact.trigger` is `trigger`
/// (an unknown one, `""`, reads every size), whose `keep_recent_ratio` is on
/// or off, and whose `compact.summarizer` is `summarizer` (`""` reads every
/// summarizer's keys): the sizes of the other triggers, `keep_recent_tokens`
/// under a ratio, a program's keys without the `command` summarizer and the
/// prompt files without `llm`. One rule for rendering, normalizing, warning
/// and comparing.
pub fn unread_keys<'a>(
    trigger: &'a str,
    keep_ratio_on: bool,
    summarizer: &'a str,
) -> impl Iterator<Item = &'static str> + 'a {
    const SIZES: [(&str, &str); 3] = [
        ("compact.trigger_tokens", "tokens"),
        ("compact.trigger_ratio", "ratio"),
        ("compact.reserve_tokens", "reserve"),
    ];
    let sizes = SIZES.into_iter().filter(move |(_, kind)| !trigger.is_empty() && *kind != trigger).map(|(k, _)| k);
    let unless = move |kind: &str, keys: &'static [&'static str]| {
        (!summarizer.is_empty() && summarizer != kind).then_some(keys).into_iter().flatten().copied()
    };
    sizes
        .chain(keep_ratio_on.then_some("compact.keep_recent_tokens"))
        .chain(unless("command", &COMMAND_KEYS))
        .chain(unless("llm", &PROMPT_FILE_KEYS))
}

/// The keys only the `command` summarizer reads.
pub const COMMAND_KEYS: [&str; 4] =
    ["compact.command", "compact.command_dir", "compact.command_env", "compact.command_timeout_secs"];
/// The keys only the `llm` summarizer reads, of those it alone has.
pub const PROMPT_FILE_KEYS: [&str; 2] = ["compact.llm.prompt_file", "compact.llm.update_prompt_file"];

/// Which size the trigger looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// The unpruned history (the agent estimates its stored messages).
    History,
    /// The request as sent, after pruning (agents that read the last usage).
    View,
}

/// How the part to keep verbatim is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutKind {
    /// Keep the newest `keep_recent_tokens`, cut snapped to a valid cut point.
    KeepRecentTokens,
    /// Keep the first `keep_first_messages` and the last `keep_tail_messages`,
    /// boundary pulled back so no tool pair is split (specs/003).
    FirstPlusTailMessages,
    /// Keep the last `keep_recent_turns` assistant turns (specs/004).
    KeepRecentTurns,
    /// Replace everything (Vibe, Codex, opencode, Claude Code).
    WholeHistory,
}

/// Where a `keep_recent_tokens` cut may land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutPoints {
    /// A user message that is not a tool result (start of a turn).
    User,
    /// A user message or an assistant message (pi): an assistant cut splits a turn.
    UserOrAssistant,
}

/// Where the summary goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// User message + synthetic assistant acknowledgement (specs/000).
    UserAssistantPair,
    /// One user message.
    User,
    /// Appended to the first kept message (specs/003), acknowledgement if needed.
    MergeFirst,
    /// A system message (specs/004).
    System,
}

/// What happens when the summarizer fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fallback {
    Truncate,
    Extractive,
    /// Remove the messages without a summary (specs/000, specs/003 trimming).
    Drop,
    /// Give up this compaction.
    Skip,
}

/// Layer 2: history compaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Compact {
    pub enabled: bool,
    pub trigger: TriggerKind,
    pub trigger_tokens: u64,
    pub trigger_ratio: f64,
    pub reserve_tokens: u64,
    /// Add `max_output_tokens` to the measured size (specs/000).
    pub include_max_output: bool,
    /// Fire at `>=` instead of `>`.
    pub inclusive: bool,
    pub measure: Measure,
    pub cut: CutKind,
    pub cut_points: CutPoints,
    pub keep_recent_tokens: u64,
    /// Overrides `keep_recent_tokens` with a share of the window (Opal: window/4).
    #[serde(with = "off")]
    pub keep_recent_ratio: Option<f64>,
    pub keep_first_messages: u64,
    pub keep_tail_messages: u64,
    /// Minimum messages in the compaction zone (specs/003: 2).
    pub min_compact_messages: u64,
    pub keep_recent_turns: u64,
    /// Codex: newest user messages kept verbatim up to this many tokens.
    #[serde(with = "off")]
    pub user_message_budget_tokens: Option<u64>,
    /// Vibe: append "Last request from user was: …" to the summary.
    pub append_last_user_request: bool,
    /// Keep leading injected context (AGENTS.md, environment) verbatim (Codex).
    pub keep_initial_context: bool,
    /// A cut inside a turn whose compacted prefix has at least this many
    /// messages gets a separate turn-prefix summary (Opal 5, pi 1).
    #[serde(with = "off")]
    pub split_turn_min_messages: Option<u64>,
    pub placement: Placement,
    /// Text of the summary message; `{summary}` is replaced by the summary.
    pub summary_template: String,
    /// Synthetic assistant acknowledgement (pair and merge_first placements).
    pub ack_text: String,
    /// The preset's API needs strict user/assistant alternation at the seams.
    pub alternation: bool,
    pub summarizer: SummarizerKind,
    pub fallback: Fallback,
    /// Upper bound of the summary size, in tokens.
    pub summary_max_tokens: u64,
    /// Summarizer sees only this head of each tool result (specs/003: 500).
    #[serde(with = "off")]
    pub preview_head_chars: Option<u64>,
    pub preview_tail_chars: u64,
    /// Summarizer input is capped at this many characters (specs/003: 100K).
    #[serde(with = "off")]
    pub input_cap_chars: Option<u64>,
    /// Merge the previous summary instead of re-summarizing it as a message.
    pub iterative_update: bool,
    /// Track read/modified files cumulatively across compactions.
    pub file_ops: bool,
    /// A compaction that frees less than this is a no-progress compaction; the
    /// policy then waits until the request has grown by this much.
    pub min_gain_tokens: u64,
    /// Opal overflow recovery: when a request exceeds the window, compact again
    /// keeping this share of the window, forcing a cut.
    #[serde(with = "off")]
    pub overflow_keep_ratio: Option<f64>,
    /// `summarizer = "command"`: the program that writes each summary, an argv
    /// list run without a shell (docs/command-summarizer.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// The program's working directory, against which relative paths in
    /// `command` are read. A policy file sets it to its own folder when empty;
    /// empty otherwise means the current directory.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub command_dir: String,
    /// Environment variables the program gets besides `PATH`; nothing else of
    /// compactor's environment reaches it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command_env: Vec<String>,
    /// Seconds one run of the program may take before it is stopped and the
    /// compaction falls back to extractive.
    #[serde(skip_serializing_if = "is_default_command_timeout")]
    pub command_timeout_secs: u64,
    /// The LLM summarizer's endpoint and request settings (`summarizer = "llm"`).
    pub llm: LlmSettings,
}

/// Seconds a summarizer program may run by default.
pub const DEFAULT_COMMAND_TIMEOUT_SECS: u64 = 120;

fn is_default_command_timeout(secs: &u64) -> bool {
    *secs == DEFAULT_COMMAND_TIMEOUT_SECS
}

/// `[compact.llm]`: where and how this policy's LLM summarizer asks (DESIGN.md
/// §5). Empty strings and `"off"` mean "not set": the `--llm-*` flags, then the
/// client's defaults, decide. A flag given on the command line wins over the
/// policy, so one run can point every policy at a local server. The key itself is
/// never part of a policy: only the name of the variable that holds it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSettings {
    /// `openai` (chat completions) or `anthropic` (messages); inferred from the
    /// base URL when empty.
    pub api: String,
    pub base_url: String,
    pub model: String,
    /// Name of the environment variable holding the API key.
    pub api_key_env: String,
    /// Output limit of one summarization request.
    #[serde(with = "off")]
    pub max_tokens: Option<u64>,
    /// `off` leaves the provider's default (reasoning models accept no other).
    #[serde(with = "off")]
    pub temperature: Option<f64>,
    /// Whole-request timeout in seconds.
    #[serde(with = "off")]
    pub timeout_secs: Option<u64>,
    /// Prompt family: `checkpoint` (specs/000), `vibe`, `dotnet`, `spec008`;
    /// empty: the one of the preset the policy is named after, else checkpoint.
    pub prompt: String,
    /// A Markdown prompt of the team's own for the first summary, with
    /// `{conversation}`, `{previous_summary}` and `{budget_tokens}`
    /// placeholders; replaces `prompt`. Relative to the policy file.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub prompt_file: String,
    /// The same for a summary that updates the previous one; empty: `prompt_file`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub update_prompt_file: String,
}

/// Pre-compaction memory flush (specs/004, OpenClaw): reported, not executed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Flush {
    pub enabled: bool,
    pub reserve_tokens: u64,
    pub threshold_tokens: u64,
}

impl Default for Prune {
    fn default() -> Prune {
        Prune {
            enabled: false,
            persist: false,
            age_unit: AgeUnit::ToolResults,
            keep_last: 0,
            soft_trim_chars: None,
            head: 0,
            tail: 0,
            trim_template: DEFAULT_TRIM_TEMPLATE.to_string(),
            hard_clear_after: None,
            placeholder: "[Tool result cleared]".to_string(),
            protect_tools: Vec::new(),
            skip_images: true,
            protect_recent_images: None,
            protect_before_first_user: false,
            soft_trim_ratio: None,
            hard_clear_ratio: None,
            min_prunable_tool_chars: 0,
            cap_chars: None,
            protect_tokens: None,
            minimum_tokens: 0,
            skip_last_user_turns: 0,
            cache_ttl_secs: None,
            start_ratio: None,
            clear_tool_uses: ClearToolUses::default(),
        }
    }
}

impl Default for ClearToolUses {
    fn default() -> ClearToolUses {
        ClearToolUses { enabled: false, trigger_tokens: 100_000, keep: 3, clear_at_least: 0, exclude_tools: Vec::new() }
    }
}

impl Default for Compact {
    fn default() -> Compact {
        Compact {
            enabled: false,
            trigger: TriggerKind::Ratio,
            trigger_tokens: 0,
            trigger_ratio: 0.8,
            reserve_tokens: 0,
            include_max_output: false,
            inclusive: false,
            measure: Measure::History,
            cut: CutKind::KeepRecentTokens,
            cut_points: CutPoints::User,
            keep_recent_tokens: 20_000,
            keep_recent_ratio: None,
            keep_first_messages: 1,
            keep_tail_messages: 6,
            min_compact_messages: 1,
            keep_recent_turns: 5,
            user_message_budget_tokens: None,
            append_last_user_request: false,
            keep_initial_context: false,
            split_turn_min_messages: None,
            placement: Placement::User,
            summary_template: "{summary}".to_string(),
            ack_text: "Understood.".to_string(),
            alternation: false,
            summarizer: SummarizerKind::Extractive,
            fallback: Fallback::Truncate,
            summary_max_tokens: 4_000,
            preview_head_chars: None,
            preview_tail_chars: 0,
            input_cap_chars: None,
            iterative_update: true,
            file_ops: true,
            min_gain_tokens: 1_000,
            overflow_keep_ratio: None,
            command: Vec::new(),
            command_dir: String::new(),
            command_env: Vec::new(),
            command_timeout_secs: DEFAULT_COMMAND_TIMEOUT_SECS,
            llm: LlmSettings::default(),
        }
    }
}

/// How far `compactor check` lets this policy's results move from the
/// baseline before it reports a regression (percentage points).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckTolerances {
    /// Largest accepted drop of the pooled FRR, in points (0–100 scale).
    pub max_frr_drop: f64,
    /// Largest accepted drop of the billed-input savings %, in points.
    pub max_savings_drop: f64,
    /// Highest accepted hallucination rate of the summaries, in percent.
    pub max_hallucination: f64,
}

impl Default for CheckTolerances {
    fn default() -> CheckTolerances {
        CheckTolerances { max_frr_drop: 2.0, max_savings_drop: 1.0, max_hallucination: 1.0 }
    }
}

impl Default for Flush {
    fn default() -> Flush {
        Flush { enabled: false, reserve_tokens: 20_000, threshold_tokens: 4_000 }
    }
}

/// The specs/000 trim marker, also compactor's default.
pub const DEFAULT_TRIM_TEMPLATE: &str =
    "{head}\n\n--- trimmed (kept {head_chars} head + {tail_chars} tail of {total_chars} chars) ---\n\n{tail}";

/// A policy could not be built or is inconsistent. Every variant names the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolicyError {
    #[error("unknown policy key `{key}`{hint}")]
    UnknownKey { key: String, hint: String },
    #[error("invalid value `{value}` for `{key}`: expected {expected}")]
    InvalidValue { key: String, value: String, expected: String },
    #[error("`{key}`: {reason}")]
    Invalid { key: String, reason: String },
    #[error("unknown preset `{0}` (see `compactor presets`)")]
    UnknownPreset(String),
    #[error("policy TOML: {0}")]
    Toml(String),
    #[error("`--set` expects KEY=VALUE, got `{0}`")]
    BadAssignment(String),
}

/// `context_window = "auto"` as the field holds it: resolved per session by the
/// replay ([`Policy::with_window`]), never used as a size.
pub const AUTO_WINDOW: u64 = 0;

impl Policy {
    /// Whether the window is each session's own (`"auto"`).
    pub fn window_is_auto(&self) -> bool {
        self.context_window == AUTO_WINDOW
    }

    /// This policy with an `"auto"` window resolved to `tokens` (a fixed window
    /// stays), checked again: a reserve or flush point may not fit the window
    /// found.
    pub fn with_window(&self, tokens: u64) -> Result<Policy, PolicyError> {
        let mut p = self.clone();
        if p.window_is_auto() {
            p.context_window = tokens.max(1);
        }
        p.validate()?;
        Ok(p)
    }

    /// The request size above which the compaction trigger fires.
    pub fn trigger_point(&self) -> u64 {
        let c = &self.compact;
        match c.trigger {
            TriggerKind::Tokens => c.trigger_tokens,
            TriggerKind::Ratio => (c.trigger_ratio * self.context_window as f64) as u64,
            TriggerKind::Reserve => self.context_window.saturating_sub(c.reserve_tokens),
        }
    }

    /// When it compacts, in words: `80% of window`, `100,000 tokens`,
    /// `window − 16,384`, `never (prunes only)`.
    pub fn trigger_words(&self) -> String {
        let c = &self.compact;
        if !c.enabled {
            return "never (prunes only)".to_string();
        }
        match c.trigger {
            TriggerKind::Tokens => format!("{} tokens", crate::num::thousands(c.trigger_tokens)),
            TriggerKind::Ratio => format!("{}% of window", (c.trigger_ratio * 100.0).round()),
            TriggerKind::Reserve => format!("window − {}", crate::num::thousands(c.reserve_tokens)),
        }
    }

    /// What a compaction keeps verbatim, in words.
    pub fn keeps_words(&self) -> String {
        let c = &self.compact;
        match c.cut {
            CutKind::KeepRecentTokens => match c.keep_recent_ratio {
                Some(r) => format!("last {}% of window", (r * 100.0).round()),
                None => format!("last {} tokens", crate::num::thousands(c.keep_recent_tokens)),
            },
            CutKind::FirstPlusTailMessages => {
                format!("first {} + last {} messages", c.keep_first_messages, c.keep_tail_messages)
            }
            CutKind::KeepRecentTurns => format!("last {} turns", c.keep_recent_turns),
            CutKind::WholeHistory => match c.user_message_budget_tokens {
                Some(b) => format!("user messages ≤ {} tokens", crate::num::thousands(b)),
                None => "nothing (summary only)".to_string(),
            },
        }
    }

    /// Tokens kept verbatim by a `keep_recent_tokens` cut.
    pub fn keep_recent(&self) -> u64 {
        match self.compact.keep_recent_ratio {
            Some(r) => (r * self.context_window as f64) as u64,
            None => self.compact.keep_recent_tokens,
        }
    }

    /// Check the policy for values that cannot work. Names the first bad key.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let bad =
            |key: &str, reason: &str| Err(PolicyError::Invalid { key: key.to_string(), reason: reason.to_string() });
        let ratio_ok = |r: f64| r > 0.0 && r <= 1.0;
        // What depends on the window is checked once it is known.
        let window = if self.window_is_auto() { u64::MAX } else { self.context_window };
        let p = &self.prune;
        if let Some(st) = p.soft_trim_chars {
            if p.head + p.tail >= st {
                return bad("prune.soft_trim_chars", "must exceed prune.head + prune.tail");
            }
            if !p.trim_template.contains("{head}") || !p.trim_template.contains("{tail}") {
                return bad("prune.trim_template", "must contain {head} and {tail}");
            }
        }
        if let Some(h) = p.hard_clear_after
            && h < p.keep_last
        {
            return bad(
                "prune.hard_clear_after",
                "must be at least prune.keep_last (protected results are never cleared)",
            );
        }
        for (key, r) in [
            ("prune.soft_trim_ratio", p.soft_trim_ratio),
            ("prune.hard_clear_ratio", p.hard_clear_ratio),
            ("prune.start_ratio", p.start_ratio),
        ] {
            if r.is_some_and(|r| !ratio_ok(r)) {
                return bad(key, "must be in (0, 1]");
            }
        }
        if let (Some(s), Some(h)) = (p.soft_trim_ratio, p.hard_clear_ratio)
            && s > h
        {
            return bad("prune.soft_trim_ratio", "must not exceed prune.hard_clear_ratio");
        }
        if p.cap_chars == Some(0) {
            return bad("prune.cap_chars", "must be positive or off");
        }
        let c = &self.compact;
        if c.enabled {
            match c.trigger {
                TriggerKind::Tokens if c.trigger_tokens == 0 => {
                    return bad("compact.trigger_tokens", "must be positive");
                }
                TriggerKind::Ratio if !ratio_ok(c.trigger_ratio) => {
                    return bad("compact.trigger_ratio", "must be in (0, 1]");
                }
                TriggerKind::Reserve if c.reserve_tokens >= window => {
                    return bad("compact.reserve_tokens", "must be smaller than context_window");
                }
                _ => {}
            }
            if c.keep_recent_ratio.is_some_and(|r| !(r > 0.0 && r < 1.0)) {
                return bad("compact.keep_recent_ratio", "must be in (0, 1)");
            }
            if c.overflow_keep_ratio.is_some_and(|r| !(r > 0.0 && r < 1.0)) {
                return bad("compact.overflow_keep_ratio", "must be in (0, 1)");
            }
            if !c.summary_template.contains("{summary}") {
                return bad("compact.summary_template", "must contain {summary}");
            }
            if c.summary_max_tokens == 0 {
                return bad("compact.summary_max_tokens", "must be positive");
            }
            if c.summarizer == SummarizerKind::Command && c.command.first().is_none_or(|p| p.trim().is_empty()) {
                return bad(
                    "compact.command",
                    "summarizer = \"command\" needs the program as an argv list (compact.command = [\"python3\", \"summarize.py\"]) or --summarizer-command",
                );
            }
            if c.command_timeout_secs == 0 {
                return bad("compact.command_timeout_secs", "must be positive");
            }
            if c.cut == CutKind::KeepRecentTurns && c.keep_recent_turns == 0 {
                return bad("compact.keep_recent_turns", "must be positive");
            }
            if matches!(c.placement, Placement::UserAssistantPair | Placement::MergeFirst) && c.ack_text.is_empty() {
                return bad("compact.ack_text", "must not be empty for this placement");
            }
            if c.split_turn_min_messages == Some(0) {
                return bad("compact.split_turn_min_messages", "must be at least 1 or off");
            }
            let l = &c.llm;
            if !matches!(l.api.trim().to_ascii_lowercase().as_str(), "" | "openai" | "anthropic") {
                return bad("compact.llm.api", "must be openai or anthropic");
            }
            if !matches!(
                l.prompt.trim().to_ascii_lowercase().as_str(),
                "" | "checkpoint" | "nous" | "structured" | "vibe" | "dotnet" | "spec008"
            ) {
                return bad("compact.llm.prompt", "must be checkpoint, vibe, dotnet or spec008");
            }
            if l.max_tokens == Some(0) || l.max_tokens.is_some_and(|t| t > u64::from(u32::MAX)) {
                return bad("compact.llm.max_tokens", "must be between 1 and 4294967295, or off");
            }
            if l.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
                return bad("compact.llm.temperature", "must be in [0, 2] or off");
            }
            if l.timeout_secs == Some(0) {
                return bad("compact.llm.timeout_secs", "must be positive or off");
            }
        }
        if self.flush.enabled && self.flush.reserve_tokens + self.flush.threshold_tokens >= window {
            return bad("flush.threshold_tokens", "flush point must be inside the window");
        }
        let t = &self.check;
        for (key, v) in [
            ("check.max_frr_drop", t.max_frr_drop),
            ("check.max_savings_drop", t.max_savings_drop),
            ("check.max_hallucination", t.max_hallucination),
        ] {
            if !(0.0..=100.0).contains(&v) {
                return bad(key, "must be between 0 and 100 (percentage points)");
            }
        }
        Ok(())
    }
}

/// Serde helper: `Option<T>` as the value or the string `"off"`.
mod off {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, T: Serialize>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(x) => x.serialize(s),
            None => s.serialize_str("off"),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OrOff<T> {
            Off(String),
            Val(T),
        }
        match OrOff::<T>::deserialize(d)? {
            OrOff::Val(v) => Ok(Some(v)),
            OrOff::Off(s) if super::keys::is_off(&s) => Ok(None),
            OrOff::Off(s) => Err(serde::de::Error::custom(format!("expected a value or \"off\", got \"{s}\""))),
        }
    }
}

/// `context_window`: a number, or `"auto"` for [`AUTO_WINDOW`].
mod window {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        if *v == super::AUTO_WINDOW { s.serialize_str("auto") } else { s.serialize_u64(*v) }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OrAuto {
            Auto(String),
            Val(u64),
        }
        match OrAuto::deserialize(d)? {
            OrAuto::Val(0) => Err(serde::de::Error::custom("expected a positive window or \"auto\", got 0")),
            OrAuto::Val(v) => Ok(v),
            OrAuto::Auto(s) if s.trim().eq_ignore_ascii_case("auto") => Ok(super::AUTO_WINDOW),
            OrAuto::Auto(s) => Err(serde::de::Error::custom(format!("expected a window or \"auto\", got \"{s}\""))),
        }
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;

/// The summarizer names accepted by policies and `--summarizer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummarizerKind {
    /// `[Compacted N messages: …]` with role counts and file-op tags (specs/002).
    Truncate,
    /// Deterministic structured checkpoint built from the log (the default).
    Extractive,
    /// An LLM endpoint (provided by the CLI; not built into the library).
    Llm,
    /// The user's own program (`compact.command`), run once per summary.
    Command,
}

impl SummarizerKind {
    pub fn name(self) -> &'static str {
        match self {
            SummarizerKind::Truncate => "truncate",
            SummarizerKind::Extractive => "extractive",
            SummarizerKind::Llm => "llm",
            SummarizerKind::Command => "command",
        }
    }
}
