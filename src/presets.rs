//! Presets: one policy per reference design (DESIGN.md §4). Each constant carries
//! the section of its source: `specs/00N` for the five specs in
//! `../shared/specs/`, and the source keys of `../shared/docs/compaction-anchors.md`
//! (OC-*, PI-*, CX-*, OP-*, CC-RE, AN-CE) for the production agents.
//!
//! What is not in a source is compactor's own choice and says so: the context
//! window is each session's own (`auto`: the log's record, else its model's),
//! the non-LLM summarizer standing in for an LLM one
//! (`extractive`, with the source's summary budget), and `min_gain_tokens` (the
//! no-progress guard, DESIGN.md §3, which no source has).

use crate::policy::SummarizerKind;
use crate::policy::{
    AUTO_WINDOW, AgeUnit, ClearToolUses, Compact, CutKind, CutPoints, Fallback, Flush, Measure, Placement, Policy,
    PolicyError, Prune, TriggerKind,
};
use crate::tokens::EstimatorKind;

/// The `default` preset.
impl Default for Policy {
    fn default() -> Policy {
        default_policy()
    }
}

impl Policy {
    /// Read a policy from TOML. Keys not in the file keep the values of the base:
    /// the preset named by a top-level `base = "NAME"` key, else `default`.
    /// In its [`Policy::effective`] form, as presets are.
    pub fn from_toml(text: &str) -> Result<Policy, PolicyError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| PolicyError::Toml(e.to_string()))?;
        let mut policy = match table.get("base") {
            Some(toml::Value::String(b)) => get(b).ok_or_else(|| PolicyError::UnknownPreset(b.clone()))?,
            Some(other) => return Err(crate::policy::keys::invalid_toml("base", other, "a preset name")),
            None => Policy::default(),
        };
        policy.set_table(&table)?;
        Ok(policy.effective())
    }
}

/// A preset: its name, one line of description, and the policy.
pub struct Preset {
    pub name: &'static str,
    pub summary: &'static str,
    pub build: fn() -> Policy,
}

impl Preset {
    /// The policy, in its [`Policy::effective`] form.
    pub fn policy(&self) -> Policy {
        (self.build)().effective()
    }
}

/// Every preset, in the order `compactor presets` lists them.
pub fn all() -> Vec<Preset> {
    vec![
        Preset {
            name: "default",
            summary: "compactor's recommendation (tuned by sweep on the corpus)",
            build: default_policy,
        },
        Preset {
            name: "nous",
            summary: "Nous spec 008.1: two layers, 100K trigger, keep 20K, checkpoint pair",
            build: nous,
        },
        Preset {
            name: "vibe",
            summary: "Vibe middleware: 200K absolute, whole history -> summary + last request",
            build: vibe,
        },
        Preset { name: "opal", summary: "Opal: 80% of window, keep window/4, split turn >= 5", build: opal },
        Preset {
            name: "dotnet",
            summary: ".NET SummarizeCompaction: 80K, first + last 6, previews 500+200",
            build: dotnet,
        },
        Preset {
            name: "spec008",
            summary: "SPEC-008 chatServer: window - reserve, keep 5 turns, prune 3 turns, flush",
            build: spec008,
        },
        Preset { name: "openclaw", summary: "OpenClaw: cache-TTL pruning + pi compaction, floor 20K", build: openclaw },
        Preset { name: "pi", summary: "pi-coding-agent: window - 16384, keep 20K, split turns", build: pi },
        Preset {
            name: "codex",
            summary: "Codex CLI: 90% of window, whole history + 20K of user messages",
            build: codex,
        },
        Preset {
            name: "opencode",
            summary: "opencode: prune beyond 40K of tool output, compact at window - 20K",
            build: opencode,
        },
        Preset {
            name: "claude-code",
            summary: "Claude Code [RE]: window - 33K, whole history -> summary",
            build: claude_code,
        },
        Preset {
            name: "anthropic-clear-tool-uses",
            summary: "Anthropic clear_tool_uses: clear old results over 100K, keep 3",
            build: anthropic_clear_tool_uses,
        },
    ]
}

/// The names of every preset.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|p| p.name).collect()
}

/// A preset by name (case-insensitive; `_` and `-` are the same).
pub fn get(name: &str) -> Option<Policy> {
    let want = name.trim().to_ascii_lowercase().replace('_', "-");
    all().into_iter().find(|p| p.name == want).map(|p| p.policy())
}

/// A preset by name, or an error listing the known ones.
pub fn require(name: &str) -> Result<Policy, PolicyError> {
    get(name).ok_or_else(|| PolicyError::UnknownPreset(format!("{name}` (known: {}", names().join(", ") + ")")))
}

/// A preset rendered as TOML for `compactor presets`: a comment header with its
/// source, then every key (optional ones as `"off"`).
pub fn render_toml(policy: &Policy) -> Result<String, PolicyError> {
    let body = policy.to_toml()?;
    Ok(format!("# preset: {}\n# source: {}\n{body}", policy.name, policy.source))
}

fn base(name: &str, source: &str) -> Policy {
    Policy {
        name: name.to_string(),
        source: source.to_string(),
        // The window of each session's model (`auto`): every document below
        // states the window of the model it was written for, not a choice.
        context_window: AUTO_WINDOW,
        max_output_tokens: 32_000,
        system_tokens: None,
        estimator: EstimatorKind::Chars4,
        message_overhead_tokens: 0,
        prune: Prune::default(),
        compact: Compact::default(),
        flush: Flush::default(),
        check: Default::default(),
    }
}

/// compactor's own recommendation: reasoned from the evidence, then tuned by
/// `compactor sweep --grid grids/default.toml` on the corpus (72 points at a 64K
/// window; docs/sweep.md, "Tuning the default preset").
/// - Observation masking alone halves cost without hurting solve rate (Complexity
///   Trap, quality.md a.1), so Layer 1 does most of the work: old tool output is
///   cleared in batches (opencode-style protect/minimum), which sheds tokens while
///   breaking the prompt-cache prefix rarely — per-call age-based clearing moves
///   the cut every call and pays cache writes each time. On the corpus the
///   pruning axes of the sweep barely matter once compaction triggers at 70%
///   (protect 5K/20K/40K, OpenClaw's cache-TTL gate on or off: savings 67.1%
///   at every point, cost saved 53.6–54.0%), so they keep their reasoned values.
/// - Oversized results are capped at ingestion so one huge output cannot dominate.
/// - Layer 2 is the safety net: at 70% of the window (the sweep: 0.7 beat the
///   0.8 of Opal/goose on savings, cost and FRR at once; 0.6 saved more but kept
///   less of what the agent needed later), keep ~1/8 of the window, cut at user
///   or assistant boundaries with split-turn summaries (pi), extractive
///   checkpoint with iterative update and cumulative file tracking (the artifact
///   trail is the weakest dimension of every vendor, quality.md b).
pub fn default_policy() -> Policy {
    let mut p = base("default", "compactor recommendation (evidence-based; tuned by `compactor sweep` on the corpus)");
    p.estimator = EstimatorKind::Calibrated;
    p.prune = Prune {
        enabled: true,
        placeholder: "[Old tool result cleared to save context; re-run the tool if you need it]".to_string(),
        protect_tokens: Some(20_000),
        minimum_tokens: 20_000,
        skip_last_user_turns: 1,
        cap_chars: Some(50_000),
        // Pruning breaks the cached prefix: a session far from its window
        // keeps the agent's own requests (docs/sweep.md).
        start_ratio: Some(0.5),
        ..Prune::default()
    };
    p.compact = Compact {
        enabled: true,
        trigger: TriggerKind::Ratio,
        trigger_ratio: 0.7,
        inclusive: true,
        measure: Measure::View,
        cut: CutKind::KeepRecentTokens,
        cut_points: CutPoints::UserOrAssistant,
        keep_recent_tokens: 25_000,
        keep_recent_ratio: Some(0.125),
        split_turn_min_messages: Some(2),
        placement: Placement::User,
        summary_template: "[Conversation summary: earlier messages were compacted]\n\n{summary}".to_string(),
        summarizer: SummarizerKind::Extractive,
        fallback: Fallback::Truncate,
        summary_max_tokens: 3_000,
        preview_head_chars: Some(2_000),
        preview_tail_chars: 500,
        iterative_update: true,
        file_ops: true,
        min_gain_tokens: 5_000,
        ..Compact::default()
    };
    p
}

/// specs/000 (Nous spec 008.1 v3).
pub fn nous() -> Policy {
    let mut p = base("nous", "specs/000 Nous spec 008.1 v3");
    // §Token Budget Model: Sonnet 4.6, 200K context (the model's window: `auto`);
    // output headroom ~16K `max_tokens`.
    p.max_output_tokens = 16_000;
    // §Token Estimation: chars/4, plus `total += 4  # role + structural overhead per message`.
    p.estimator = EstimatorKind::Chars4;
    p.message_overhead_tokens = 4;
    p.prune = Prune {
        // §Layer 1 Configuration: tool_pruning_enabled=True.
        enabled: true,
        // §Key Rules 5: mutates the in-turn list in place; history is not rewritten.
        persist: false,
        // §How It Works: age counted in tool-result messages from the end.
        age_unit: AgeUnit::ToolResults,
        // keep_last_tool_results = 2.
        keep_last: 2,
        // tool_soft_trim_chars = 4000, head 1500, tail 1500.
        soft_trim_chars: Some(4_000),
        head: 1_500,
        tail: 1_500,
        // §Soft-trim marker.
        trim_template: crate::policy::DEFAULT_TRIM_TEMPLATE.to_string(),
        // tool_hard_clear_after = 6.
        hard_clear_after: Some(6),
        // §Hard-clear placeholder.
        placeholder: "[Tool output cleared — content was processed in earlier turns]".to_string(),
        // §Key Rules 3: skip results containing image content.
        skip_images: true,
        ..Prune::default()
    };
    p.compact = Compact {
        // §Configuration Summary: compaction_enabled=False (opt-in flag); the preset
        // replays the design with the flag on.
        enabled: true,
        // §Trigger: COMPACTION_THRESHOLD = 100_000; system + history + max_tokens > threshold.
        trigger: TriggerKind::Tokens,
        trigger_tokens: 100_000,
        include_max_output: true,
        inclusive: false,
        // §_format_messages: estimated over the stored conversation (before Layer 1).
        measure: Measure::History,
        // §Cut Point Selection: keep_recent_tokens = 20_000, snapped to a user message.
        cut: CutKind::KeepRecentTokens,
        cut_points: CutPoints::User,
        keep_recent_tokens: 20_000,
        split_turn_min_messages: None,
        // §Message Rebuild: user "[Previous conversation summary]" + assistant ack.
        placement: Placement::UserAssistantPair,
        summary_template: "[Previous conversation summary]\n\n{summary}".to_string(),
        ack_text: "I have the context from our previous conversation. Let's continue.".to_string(),
        // §Risk Assessment: alternation violations are a named risk (Anthropic API).
        alternation: true,
        // §Structured Checkpoint Format (LLM); `extractive` renders the same sections.
        summarizer: SummarizerKind::Extractive,
        // §Summarization Failure Fallback: keep recent messages only, no summary.
        fallback: Fallback::Drop,
        // §Token Budget Model: conversation summary ~3K.
        summary_max_tokens: 3_000,
        // §Iterative Update with UPDATE_SYSTEM_PROMPT.
        iterative_update: true,
        // §Phase 4: tool-call/file tracking is future work.
        file_ops: false,
        min_gain_tokens: 1_000,
        ..Compact::default()
    };
    // §Pre-Compaction Event is emitted at compaction time, not as a flush turn.
    p.flush.enabled = false;
    p
}

/// specs/001 (Mistral Vibe-style middleware).
pub fn vibe() -> Policy {
    let mut p = base("vibe", "specs/001 Vibe AutoCompactMiddleware");
    // specs/001 gives no window: the model's own (`auto`).
    // §2 Context Token Tracking: context_tokens from the last usage (prompt +
    // completion): the calibrated estimate.
    p.estimator = EstimatorKind::Calibrated;
    p.compact = Compact {
        enabled: true,
        // §2 AutoCompactMiddleware: contextTokens >= threshold, default 200_000.
        trigger: TriggerKind::Tokens,
        trigger_tokens: 200_000,
        inclusive: true,
        include_max_output: false,
        measure: Measure::History,
        // §5 Post-Compaction: [system, user(summary + last request)].
        cut: CutKind::WholeHistory,
        append_last_user_request: true,
        placement: Placement::User,
        summary_template: "{summary}".to_string(),
        alternation: false,
        summarizer: SummarizerKind::Extractive,
        // §3: errors propagate (no compaction).
        fallback: Fallback::Skip,
        // Not specified; §9 example 200,000 → 15,000 tokens. compactor: 4K.
        summary_max_tokens: 4_000,
        // §3: the whole history (previous summary included) is re-summarized.
        iterative_update: false,
        file_ops: false,
        min_gain_tokens: 1_000,
        ..Compact::default()
    };
    p
}

/// specs/002 (Opal).
pub fn opal() -> Policy {
    let mut p = base("opal", "specs/002 Opal compaction");
    // §Context Window Sizes: from LLMDB per model, as `auto` does.
    // §Auto-Compaction Estimation: hybrid — last prompt_tokens + ~4 chars/token since.
    p.estimator = EstimatorKind::Calibrated;
    p.compact = Compact {
        enabled: true,
        // §Auto-Compaction Trigger: estimated context >= 80% of the window.
        trigger: TriggerKind::Ratio,
        trigger_ratio: 0.8,
        inclusive: true,
        measure: Measure::History,
        // §1 Find Cut Point: keep_recent_tokens = contextWindow / 4, user boundary.
        cut: CutKind::KeepRecentTokens,
        cut_points: CutPoints::User,
        keep_recent_tokens: 20_000,
        keep_recent_ratio: Some(0.25),
        // §2 Detect Split Turns: turn prefix >= 5 messages.
        split_turn_min_messages: Some(5),
        // §4 Replace Messages: a single summary message (role :user).
        placement: Placement::User,
        summary_template: "[Conversation summary — older messages were compacted]\n\n{summary}".to_string(),
        alternation: false,
        // §3 Generate Summary: :summarize (LLM) with :truncate fallback.
        summarizer: SummarizerKind::Extractive,
        fallback: Fallback::Truncate,
        // Not specified; compactor: 4K.
        summary_max_tokens: 4_000,
        // Opal serializes tool output previews of 500 chars (compaction.ex).
        preview_head_chars: Some(500),
        preview_tail_chars: 0,
        // §3 Iterative updates; §5 Cumulative File-Op Tracking.
        iterative_update: true,
        file_ops: true,
        // §Overflow Recovery: emergency compaction with window/5, force.
        overflow_keep_ratio: Some(0.2),
        min_gain_tokens: 1_000,
        ..Compact::default()
    };
    p
}

/// specs/003 (.NET SummarizeCompactionStrategy).
pub fn dotnet() -> Policy {
    let mut p = base("dotnet", "specs/003 .NET SummarizeCompactionStrategy");
    // §Rationale: Claude Sonnet/Haiku 200K window (the model's: `auto`); response ~8K tokens.
    p.max_output_tokens = 8_000;
    // §Token Estimation: per block (text, tool_use name + input JSON, tool_result text) / 4.
    p.estimator = EstimatorKind::PerBlock;
    p.prune = Prune {
        // §Problem 1: TruncateToolResult clips outputs at MaxToolResultChars (40,000)
        // at ingestion; kept after compaction shipped (§What This Omits).
        enabled: true,
        persist: true,
        cap_chars: Some(40_000),
        ..Prune::default()
    };
    p.compact = Compact {
        enabled: true,
        // §Configuration: CompactionThresholdTokens = 80,000 (estimated > threshold).
        trigger: TriggerKind::Tokens,
        trigger_tokens: 80_000,
        inclusive: false,
        measure: Measure::History,
        // §Message Protection: message[0] + ProtectedTailMessages = 6, pair-safe.
        cut: CutKind::FirstPlusTailMessages,
        keep_first_messages: 1,
        keep_tail_messages: 6,
        // §Trigger Decision: compaction zone has >= 2 messages.
        min_compact_messages: 2,
        // §Message Reconstruction: "original request + [CONTEXT SUMMARY]", ack only
        // when needed for alternation. A later compaction rebuilds it from the
        // original request (the old summary is summarized with the zone), so the
        // first message does not accumulate summaries.
        placement: Placement::MergeFirst,
        summary_template: "\n\n[CONTEXT SUMMARY]\n{summary}\n[END CONTEXT SUMMARY]".to_string(),
        ack_text: "Understood. Continuing with the current task.".to_string(),
        alternation: true,
        summarizer: SummarizerKind::Extractive,
        // §Fallback: trim history (message count) without a summary. The
        // MaxConversationMessages (50) backstop after compaction is not modeled: it
        // drops from index 0 without regard for tool pairs.
        fallback: Fallback::Drop,
        // §Named Constants: SummarizationMaxTokens = 4,096.
        summary_max_tokens: 4_096,
        // §Named Constants: ToolResultHeadChars 500, ToolResultTailChars 200,
        // MaxSummarizationInputChars 100,000.
        preview_head_chars: Some(500),
        preview_tail_chars: 200,
        input_cap_chars: Some(100_000),
        iterative_update: false,
        file_ops: false,
        min_gain_tokens: 1_000,
        ..Compact::default()
    };
    p
}

/// specs/004 (SPEC-008 chatServer).
pub fn spec008() -> Policy {
    let mut p = base("spec008", "specs/004 SPEC-008 context management");
    // §Configuration Defaults: context_window 200_000 (a default for the
    // model's window: `auto`), reserve_tokens 20_000.
    // §Unit 1: estimate_tokens = chars / 4.
    p.estimator = EstimatorKind::Chars4;
    p.prune = Prune {
        enabled: true,
        // §Unit 2: pruned list is for the LLM call only; history stays intact.
        persist: false,
        // AC-4/AC-5: age in assistant turns; prune_keep_last_assistants = 3.
        age_unit: AgeUnit::AssistantTurns,
        keep_last: 3,
        // prune_soft_trim_chars = 4_000; AC-4: first 1500 + last 1500 with `...`.
        soft_trim_chars: Some(4_000),
        head: 1_500,
        tail: 1_500,
        trim_template: "{head}...{tail}".to_string(),
        // AC-5 names M without a default and Unit 2's signature has no hard clear.
        hard_clear_after: None,
        // AC-5 placeholder.
        placeholder: "[Tool result cleared]".to_string(),
        // §Unit 2 design decisions: image/attachment blocks are skipped.
        skip_images: true,
        ..Prune::default()
    };
    p.compact = Compact {
        enabled: true,
        // AC-13, should_compact: estimated > context_window - reserve_tokens.
        trigger: TriggerKind::Reserve,
        reserve_tokens: 20_000,
        inclusive: false,
        // §Integration in chat.py: estimate on the loaded history, then prune.
        measure: Measure::History,
        // AC-17, keep_recent_turns = 5.
        cut: CutKind::KeepRecentTurns,
        keep_recent_turns: 5,
        // AC-14: a single system message.
        placement: Placement::System,
        summary_template: "[Session compacted. Summary of prior conversation:]\n\n{summary}".to_string(),
        alternation: false,
        // AC-18: a cheaper model (Haiku); non-LLM stand-in here.
        summarizer: SummarizerKind::Extractive,
        fallback: Fallback::Skip,
        // §Cost Analysis: summary output ~500-1000 tokens.
        summary_max_tokens: 1_000,
        iterative_update: false,
        file_ops: false,
        min_gain_tokens: 1_000,
        ..Compact::default()
    };
    // AC-8/AC-12: flush at window - reserve - flush_threshold (4_000), once per cycle.
    p.flush = Flush { enabled: true, reserve_tokens: 20_000, threshold_tokens: 4_000 };
    p
}

/// OpenClaw: session pruning (cache-ttl mode) + pi compaction with a 20K floor.
pub fn openclaw() -> Policy {
    let mut p = base("openclaw", "OpenClaw (compaction-anchors.md: OC-PRS, OC-PRN, OC-PRX, OC-FL, PI-CMP)");
    // PI-CMP via OC: trigger on usage tokens (last usage + trailing estimate).
    p.estimator = EstimatorKind::Calibrated;
    p.prune = Prune {
        // OC-PRS: opt-in `mode: "cache-ttl"`, in memory only, per request.
        enabled: true,
        persist: false,
        // OC-PRN: keepLastAssistants 3.
        age_unit: AgeUnit::AssistantTurns,
        keep_last: 3,
        // OC-PRS: softTrim {maxChars 4000, headChars 1500, tailChars 1500} + note.
        soft_trim_chars: Some(4_000),
        head: 1_500,
        tail: 1_500,
        trim_template:
            "{head}\n...\n{tail}\n\n[Tool result trimmed: kept first {head_chars} chars and last {tail_chars} chars of {total_chars} chars.]"
                .to_string(),
        // OC-PRS: softTrimRatio 0.3, hardClearRatio 0.5, minPrunableToolChars 50,000.
        soft_trim_ratio: Some(0.3),
        hard_clear_ratio: Some(0.5),
        min_prunable_tool_chars: 50_000,
        hard_clear_after: None,
        // OC-PRS: hardClear.placeholder.
        placeholder: "[Old tool result content cleared]".to_string(),
        // OC-PRN: soft-trim skips image results; only the newest 3 are protected from hard-clear.
        skip_images: true,
        protect_recent_images: Some(3),
        // OC-PRN: bootstrap safety, nothing before the first user message.
        protect_before_first_user: true,
        // OC-PRS: maxToolResultChars 50,000 on every turn.
        cap_chars: Some(50_000),
        // OC-PRS/OC-PRX: ttl 5m; prune only when the cache has expired.
        cache_ttl_secs: Some(300),
        ..Prune::default()
    };
    p.compact = Compact {
        enabled: true,
        // OC-FL: pi's rule `tokens > CW - reserveTokens`, reserve floored at 20,000.
        trigger: TriggerKind::Reserve,
        reserve_tokens: 20_000,
        inclusive: false,
        // Usage reflects the pruned request.
        measure: Measure::View,
        // PI-CMP: keepRecentTokens 20000; cut at user or assistant, split turns.
        cut: CutKind::KeepRecentTokens,
        cut_points: CutPoints::UserOrAssistant,
        keep_recent_tokens: 20_000,
        split_turn_min_messages: Some(1),
        placement: Placement::User,
        summary_template: PI_SUMMARY_TEMPLATE.to_string(),
        alternation: false,
        summarizer: SummarizerKind::Extractive,
        // OC-CMP: full → partial → annotation-only fallback ≈ truncate.
        fallback: Fallback::Truncate,
        // PI-CMP: maxTokens = 0.8 × reserveTokens.
        summary_max_tokens: 16_000,
        // PI-UT: TOOL_RESULT_MAX_CHARS = 2000 for the summarizer input.
        preview_head_chars: Some(2_000),
        iterative_update: true,
        file_ops: true,
        min_gain_tokens: 1_000,
        ..Compact::default()
    };
    // OC-FL: tokens >= CW - reserveTokensFloor(20k) - softThresholdTokens(8000), once per cycle.
    p.flush = Flush { enabled: true, reserve_tokens: 20_000, threshold_tokens: 8_000 };
    p
}

/// pi's compaction summary message (PI messages.ts `COMPACTION_SUMMARY_PREFIX`).
const PI_SUMMARY_TEMPLATE: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n{summary}\n</summary>";

/// pi-mono coding agent.
pub fn pi() -> Policy {
    let mut p = base("pi", "pi-mono coding-agent (compaction-anchors.md: PI-CMP, PI-UT, PI-SES)");
    // PI-CMP: last non-aborted usage + chars/4 for trailing messages.
    p.estimator = EstimatorKind::Calibrated;
    p.compact = Compact {
        enabled: true,
        // PI-CMP: contextTokens > contextWindow - reserveTokens; reserveTokens = 16384.
        trigger: TriggerKind::Reserve,
        reserve_tokens: 16_384,
        inclusive: false,
        measure: Measure::History,
        // PI-CMP findCutPoint: keepRecentTokens = 20000, user or assistant cut points.
        cut: CutKind::KeepRecentTokens,
        cut_points: CutPoints::UserOrAssistant,
        keep_recent_tokens: 20_000,
        // PI-CMP: any split turn gets a turn-prefix summary.
        split_turn_min_messages: Some(1),
        placement: Placement::User,
        summary_template: PI_SUMMARY_TEMPLATE.to_string(),
        alternation: false,
        summarizer: SummarizerKind::Extractive,
        // PI-CMP: a failed summary throws; the compaction does not happen.
        fallback: Fallback::Skip,
        // PI-CMP: maxTokens = floor(0.8 × 16384).
        summary_max_tokens: 13_107,
        // PI-UT: TOOL_RESULT_MAX_CHARS = 2000.
        preview_head_chars: Some(2_000),
        // PI-CMP: UPDATE_SUMMARIZATION_PROMPT with <previous-summary>; file lists.
        iterative_update: true,
        file_ops: true,
        min_gain_tokens: 1_000,
        ..Compact::default()
    };
    p
}

/// OpenAI Codex CLI (local compaction).
pub fn codex() -> Policy {
    let mut p = base("codex", "OpenAI Codex CLI (compaction-anchors.md: CX-CMP, CX-MOD, CX-PR)");
    // CX-CMP: server token_usage of the last response.
    p.estimator = EstimatorKind::Calibrated;
    p.compact = Compact {
        enabled: true,
        // CX-MOD: total tokens >= auto_compact_token_limit = 90% of the window.
        trigger: TriggerKind::Ratio,
        trigger_ratio: 0.9,
        inclusive: true,
        measure: Measure::History,
        // CX-CMP: no assistant/tool items kept; initial context rebuilt; recent user
        // messages verbatim up to COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000.
        cut: CutKind::WholeHistory,
        keep_initial_context: true,
        user_message_budget_tokens: Some(20_000),
        placement: Placement::User,
        // CX-PR: summary_prefix.md + "\n" + summary.
        summary_template: "Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:\n{summary}".to_string(),
        alternation: false,
        summarizer: SummarizerKind::Extractive,
        // CX-CMP FALLBACK_SUMMARY_TEXT: "Summary unavailable…" ≈ truncate.
        fallback: Fallback::Truncate,
        // Not specified; compactor: 4K.
        summary_max_tokens: 4_000,
        // CX-CMP: the previous summary is just a message of the history.
        iterative_update: false,
        file_ops: false,
        min_gain_tokens: 1_000,
        ..Compact::default()
    };
    p
}

/// opencode.
pub fn opencode() -> Policy {
    let mut p = base("opencode", "opencode (compaction-anchors.md: OP-CMP, OP-OVF, OP-MSG)");
    // OP-OVF: last assistant tokens.total (+ estimate).
    p.estimator = EstimatorKind::Calibrated;
    p.max_output_tokens = 32_000;
    p.prune = Prune {
        enabled: true,
        // OP-CMP: sets state.time.compacted on the stored part.
        persist: true,
        // OP-CMP: PRUNE_PROTECT = 40_000, PRUNE_MINIMUM = 20_000, skip last 2 user turns.
        protect_tokens: Some(40_000),
        minimum_tokens: 20_000,
        skip_last_user_turns: 2,
        // OP-CMP: PRUNE_PROTECTED_TOOLS = ["skill"].
        protect_tools: vec!["skill".to_string()],
        // OP-MSG placeholder.
        placeholder: "[Old tool result content cleared]".to_string(),
        ..Prune::default()
    };
    p.compact = Compact {
        enabled: true,
        // OP-OVF: count >= usable, usable = window - min(20_000, maxOutputTokens).
        trigger: TriggerKind::Reserve,
        reserve_tokens: 20_000,
        inclusive: true,
        measure: Measure::View,
        // OP-CMP: the summary replaces history, no tail.
        cut: CutKind::WholeHistory,
        placement: Placement::User,
        summary_template: "{summary}".to_string(),
        alternation: false,
        summarizer: SummarizerKind::Extractive,
        fallback: Fallback::Skip,
        // Not specified; compactor: 4K.
        summary_max_tokens: 4_000,
        iterative_update: false,
        file_ops: false,
        min_gain_tokens: 1_000,
        ..Compact::default()
    };
    p
}

/// Claude Code, from third-party reverse engineering (CC-RE).
pub fn claude_code() -> Policy {
    let mut p = base("claude-code", "Claude Code [RE] (compaction-anchors.md: CC-RE)");
    p.estimator = EstimatorKind::Calibrated;
    p.max_output_tokens = 32_000;
    p.compact = Compact {
        enabled: true,
        // CC-RE: trigger = window - min(max_output, 20000) - 13000 = window - 33000.
        trigger: TriggerKind::Reserve,
        reserve_tokens: 33_000,
        inclusive: false,
        measure: Measure::History,
        // CC-RE: the summary (with an "All user messages" section) replaces history;
        // CLAUDE.md is re-injected.
        cut: CutKind::WholeHistory,
        keep_initial_context: true,
        placement: Placement::User,
        summary_template: "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n{summary}".to_string(),
        alternation: false,
        summarizer: SummarizerKind::Extractive,
        fallback: Fallback::Skip,
        // Not specified; compactor: 8K (Claude Code summaries are long).
        summary_max_tokens: 8_000,
        iterative_update: false,
        file_ops: true,
        min_gain_tokens: 1_000,
        ..Compact::default()
    };
    p
}

/// Anthropic API context editing `clear_tool_uses_20250919` alone.
pub fn anthropic_clear_tool_uses() -> Policy {
    let mut p = base("anthropic-clear-tool-uses", "Anthropic context editing (compaction-anchors.md: AN-CE)");
    // The API counts input tokens; the calibrated estimate is closest offline.
    p.estimator = EstimatorKind::Calibrated;
    p.prune = Prune {
        enabled: true,
        // AN-CE: server-side per request; the client keeps the full history.
        persist: false,
        // AN-CE: placeholder text (its exact wording is not published).
        placeholder: "[Tool result cleared]".to_string(),
        skip_images: false,
        // AN-CE defaults: trigger 100K input tokens, keep 3 tool uses, clear_at_least none.
        clear_tool_uses: ClearToolUses {
            enabled: true,
            trigger_tokens: 100_000,
            keep: 3,
            clear_at_least: 0,
            exclude_tools: Vec::new(),
        },
        ..Prune::default()
    };
    p.compact.enabled = false;
    p
}

#[cfg(test)]
#[path = "presets_tests.rs"]
mod tests;
