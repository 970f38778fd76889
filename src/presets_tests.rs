//! The presets against their sources: every key a source fixes, and the round trip through TOML.

use super::*;

#[test]
fn every_preset_is_valid_and_named() {
    for pr in all() {
        let p = pr.policy();
        assert_eq!(p.name, pr.name);
        p.validate().unwrap_or_else(|e| panic!("{}: {e}", pr.name));
        assert!(get(pr.name).is_some());
    }
    assert!(get("CLAUDE_CODE").is_some());
    assert!(get("nope").is_none());
    assert!(require("nope").unwrap_err().to_string().contains("known: default, nous"));
}

#[test]
fn toml_round_trip_of_every_preset() {
    for pr in all() {
        let p = pr.policy();
        let text = p.to_toml().unwrap();
        let back = Policy::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", pr.name));
        assert_eq!(back, p, "{}", pr.name);
        let rendered = render_toml(&p).unwrap();
        assert!(rendered.starts_with(&format!("# preset: {}", pr.name)));
    }
}

/// Each preset's key constants against its source (the section is cited next
/// to the constant in the preset itself).
#[test]
fn key_constants_match_their_sources() {
    struct Row {
        preset: &'static str,
        key: &'static str,
        want: &'static str,
    }
    let rows = [
        // specs/000
        Row { preset: "nous", key: "compact.trigger_tokens", want: "100000" },
        Row { preset: "nous", key: "compact.include_max_output", want: "true" },
        Row { preset: "nous", key: "compact.keep_recent_tokens", want: "20000" },
        Row { preset: "nous", key: "compact.placement", want: "\"user_assistant_pair\"" },
        Row { preset: "nous", key: "prune.soft_trim_chars", want: "4000" },
        Row { preset: "nous", key: "prune.head", want: "1500" },
        Row { preset: "nous", key: "prune.tail", want: "1500" },
        Row { preset: "nous", key: "prune.hard_clear_after", want: "6" },
        Row { preset: "nous", key: "prune.keep_last", want: "2" },
        Row { preset: "nous", key: "prune.age_unit", want: "\"tool_results\"" },
        Row { preset: "nous", key: "prune.skip_images", want: "true" },
        Row { preset: "nous", key: "message_overhead_tokens", want: "4" },
        // specs/001
        Row { preset: "vibe", key: "compact.trigger_tokens", want: "200000" },
        Row { preset: "vibe", key: "compact.inclusive", want: "true" },
        Row { preset: "vibe", key: "compact.cut", want: "\"whole_history\"" },
        Row { preset: "vibe", key: "compact.append_last_user_request", want: "true" },
        // specs/002
        Row { preset: "opal", key: "compact.trigger_ratio", want: "0.8" },
        Row { preset: "opal", key: "compact.keep_recent_ratio", want: "0.25" },
        Row { preset: "opal", key: "compact.split_turn_min_messages", want: "5" },
        Row { preset: "opal", key: "compact.fallback", want: "\"truncate\"" },
        Row { preset: "opal", key: "compact.file_ops", want: "true" },
        Row { preset: "opal", key: "compact.overflow_keep_ratio", want: "0.2" },
        Row { preset: "opal", key: "estimator", want: "\"calibrated\"" },
        // specs/003
        Row { preset: "dotnet", key: "compact.trigger_tokens", want: "80000" },
        Row { preset: "dotnet", key: "compact.keep_tail_messages", want: "6" },
        Row { preset: "dotnet", key: "compact.keep_first_messages", want: "1" },
        Row { preset: "dotnet", key: "compact.preview_head_chars", want: "500" },
        Row { preset: "dotnet", key: "compact.preview_tail_chars", want: "200" },
        Row { preset: "dotnet", key: "compact.input_cap_chars", want: "100000" },
        Row { preset: "dotnet", key: "compact.summary_max_tokens", want: "4096" },
        Row { preset: "dotnet", key: "compact.placement", want: "\"merge_first\"" },
        Row { preset: "dotnet", key: "estimator", want: "\"per_block\"" },
        // specs/004
        Row { preset: "spec008", key: "compact.trigger", want: "\"reserve\"" },
        Row { preset: "spec008", key: "compact.reserve_tokens", want: "20000" },
        Row { preset: "spec008", key: "compact.keep_recent_turns", want: "5" },
        Row { preset: "spec008", key: "compact.placement", want: "\"system\"" },
        Row { preset: "spec008", key: "prune.keep_last", want: "3" },
        Row { preset: "spec008", key: "prune.age_unit", want: "\"assistant_turns\"" },
        Row { preset: "spec008", key: "prune.soft_trim_chars", want: "4000" },
        Row { preset: "spec008", key: "flush.threshold_tokens", want: "4000" },
        Row { preset: "spec008", key: "flush.reserve_tokens", want: "20000" },
        // anchors
        Row { preset: "openclaw", key: "prune.soft_trim_ratio", want: "0.3" },
        Row { preset: "openclaw", key: "prune.hard_clear_ratio", want: "0.5" },
        Row { preset: "openclaw", key: "prune.min_prunable_tool_chars", want: "50000" },
        Row { preset: "openclaw", key: "prune.cache_ttl_secs", want: "300" },
        Row { preset: "openclaw", key: "prune.keep_last", want: "3" },
        Row { preset: "openclaw", key: "compact.reserve_tokens", want: "20000" },
        Row { preset: "openclaw", key: "flush.threshold_tokens", want: "8000" },
        Row { preset: "pi", key: "compact.reserve_tokens", want: "16384" },
        Row { preset: "pi", key: "compact.keep_recent_tokens", want: "20000" },
        Row { preset: "codex", key: "compact.trigger_ratio", want: "0.9" },
        Row { preset: "codex", key: "compact.user_message_budget_tokens", want: "20000" },
        Row { preset: "opencode", key: "prune.protect_tokens", want: "40000" },
        Row { preset: "opencode", key: "prune.minimum_tokens", want: "20000" },
        Row { preset: "opencode", key: "prune.skip_last_user_turns", want: "2" },
        Row { preset: "opencode", key: "prune.protect_tools", want: "[\"skill\"]" },
        Row { preset: "opencode", key: "compact.reserve_tokens", want: "20000" },
        Row { preset: "claude-code", key: "compact.reserve_tokens", want: "33000" },
        Row { preset: "anthropic-clear-tool-uses", key: "prune.clear_tool_uses.trigger_tokens", want: "100000" },
        Row { preset: "anthropic-clear-tool-uses", key: "prune.clear_tool_uses.keep", want: "3" },
    ];
    for row in rows {
        let p = get(row.preset).unwrap();
        let value: toml::Table = toml::from_str(&p.to_toml().unwrap()).unwrap();
        let mut v: &toml::Value = &toml::Value::Table(value);
        for part in row.key.split('.') {
            v = v.get(part).unwrap_or_else(|| panic!("{}: no {}", row.preset, row.key));
        }
        assert_eq!(v.to_string(), row.want, "{} {}", row.preset, row.key);
    }
}
