//! Setting a policy by key: `--set KEY=VALUE`, TOML files and sweep grids all
//! go through one table of dotted keys, each with its parser.

use super::*;
use serde::de::IntoDeserializer;

/// A value to assign: text from the command line or a typed TOML value.
#[derive(Clone, Copy)]
enum Raw<'a> {
    Text(&'a str),
    Toml(&'a toml::Value),
}

impl Raw<'_> {
    fn shown(&self) -> String {
        match self {
            Raw::Text(s) => (*s).to_string(),
            Raw::Toml(v) => v.to_string(),
        }
    }
}

/// The error for a TOML `value` of `key` that is not `expected`.
pub fn invalid_toml(key: &str, value: &toml::Value, expected: &str) -> PolicyError {
    invalid(key, Raw::Toml(value), expected)
}

fn invalid(key: &str, v: Raw<'_>, expected: &str) -> PolicyError {
    PolicyError::InvalidValue { key: key.to_string(), value: v.shown(), expected: expected.to_string() }
}

fn parse_window(key: &str, v: Raw<'_>) -> Result<u64, PolicyError> {
    let auto = match v {
        Raw::Text(s) => s.trim().eq_ignore_ascii_case("auto"),
        Raw::Toml(toml::Value::String(s)) => s.trim().eq_ignore_ascii_case("auto"),
        Raw::Toml(_) => false,
    };
    if auto {
        return Ok(AUTO_WINDOW);
    }
    match parse_u64(key, v)? {
        0 => Err(invalid(key, v, "a positive number of tokens (`200000`, `200k`) or `auto`")),
        n => Ok(n),
    }
}

pub(super) fn is_off(s: &str) -> bool {
    matches!(s.trim().to_ascii_lowercase().as_str(), "off" | "none" | "auto" | "")
}

fn parse_u64(key: &str, v: Raw<'_>) -> Result<u64, PolicyError> {
    const EXPECTED: &str = "a non-negative integer (`100000`, `100_000` or `100k`)";
    match v {
        Raw::Toml(toml::Value::Integer(i)) => u64::try_from(*i).map_err(|_| invalid(key, v, EXPECTED)),
        Raw::Toml(toml::Value::String(s)) => parse_u64(key, Raw::Text(s)),
        Raw::Toml(_) => Err(invalid(key, v, EXPECTED)),
        Raw::Text(s) => {
            let t = s.trim().replace('_', "").to_ascii_lowercase();
            let (digits, mult) = if let Some(d) = t.strip_suffix('k') {
                (d, 1_000)
            } else if let Some(d) = t.strip_suffix('m') {
                (d, 1_000_000)
            } else {
                (t.as_str(), 1)
            };
            digits.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)).ok_or_else(|| invalid(key, v, EXPECTED))
        }
    }
}

fn parse_opt_u64(key: &str, v: Raw<'_>) -> Result<Option<u64>, PolicyError> {
    match v {
        Raw::Text(s) if is_off(s) => Ok(None),
        Raw::Toml(toml::Value::String(s)) if is_off(s) => Ok(None),
        _ => parse_u64(key, v).map(Some).map_err(|_| invalid(key, v, "a non-negative integer or `off`")),
    }
}

fn parse_f64(key: &str, v: Raw<'_>) -> Result<f64, PolicyError> {
    let x = match v {
        Raw::Toml(toml::Value::Float(f)) => Some(*f),
        Raw::Toml(toml::Value::Integer(i)) => Some(*i as f64),
        Raw::Toml(toml::Value::String(s)) => s.trim().parse::<f64>().ok(),
        Raw::Toml(_) => None,
        Raw::Text(s) => s.trim().parse::<f64>().ok(),
    };
    x.filter(|f| f.is_finite()).ok_or_else(|| invalid(key, v, "a number"))
}

fn parse_opt_f64(key: &str, v: Raw<'_>) -> Result<Option<f64>, PolicyError> {
    match v {
        Raw::Text(s) if is_off(s) => Ok(None),
        Raw::Toml(toml::Value::String(s)) if is_off(s) => Ok(None),
        _ => parse_f64(key, v).map(Some).map_err(|_| invalid(key, v, "a number or `off`")),
    }
}

fn parse_bool(key: &str, v: Raw<'_>) -> Result<bool, PolicyError> {
    let text = match v {
        Raw::Toml(toml::Value::Boolean(b)) => return Ok(*b),
        Raw::Toml(toml::Value::String(s)) => s.as_str(),
        Raw::Toml(_) => return Err(invalid(key, v, "true or false")),
        Raw::Text(s) => s,
    };
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(invalid(key, v, "true or false")),
    }
}

fn parse_string(key: &str, v: Raw<'_>) -> Result<String, PolicyError> {
    match v {
        Raw::Toml(toml::Value::String(s)) => Ok(s.clone()),
        Raw::Toml(_) => Err(invalid(key, v, "a string")),
        // A quoted value is a TOML string, so `\n` escapes work on the command line.
        Raw::Text(s) if s.trim_start().starts_with('"') => toml::from_str::<toml::Table>(&format!("v = {s}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .and_then(|v| v.as_str().map(str::to_string))
            .ok_or_else(|| invalid(key, v, "a string (quoted values are TOML strings)")),
        Raw::Text(s) => Ok(s.to_string()),
    }
}

/// A program and its arguments: a TOML array of strings, or one string split
/// as a POSIX shell would split it (quotes, no expansion).
fn parse_argv(key: &str, v: Raw<'_>) -> Result<Vec<String>, PolicyError> {
    const EXPECTED: &str = "a program and its arguments (`[\"python3\", \"s.py\"]` or `python3 s.py`)";
    let text = match v {
        Raw::Toml(toml::Value::Array(a)) => {
            let argv = a.iter().map(|x| x.as_str().map(str::to_string)).collect::<Option<Vec<_>>>();
            return argv.ok_or_else(|| invalid(key, v, EXPECTED));
        }
        Raw::Toml(toml::Value::String(s)) => s.as_str(),
        Raw::Text(s) => s,
        Raw::Toml(_) => return Err(invalid(key, v, EXPECTED)),
    };
    if text.trim_start().starts_with('[') {
        return parse_list(key, Raw::Text(text));
    }
    shlex::split(text).ok_or_else(|| invalid(key, v, EXPECTED))
}

fn parse_list(key: &str, v: Raw<'_>) -> Result<Vec<String>, PolicyError> {
    const EXPECTED: &str = "a list of names (`a,b` or `[\"a\", \"b\"]`)";
    let from_array = |a: &[toml::Value]| -> Option<Vec<String>> {
        a.iter().map(|x| x.as_str().map(str::to_string)).collect::<Option<Vec<_>>>()
    };
    match v {
        Raw::Toml(toml::Value::Array(a)) => from_array(a).ok_or_else(|| invalid(key, v, EXPECTED)),
        Raw::Toml(_) => Err(invalid(key, v, EXPECTED)),
        Raw::Text(s) if s.trim_start().starts_with('[') => toml::from_str::<toml::Table>(&format!("v = {s}"))
            .ok()
            .and_then(|t| t.get("v").and_then(|x| x.as_array()).and_then(|a| from_array(a)))
            .ok_or_else(|| invalid(key, v, EXPECTED)),
        Raw::Text(s) => Ok(s.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string).collect()),
    }
}

fn parse_enum<T: for<'de> Deserialize<'de>>(key: &str, v: Raw<'_>) -> Result<T, PolicyError> {
    let text = match v {
        Raw::Text(s) => s.trim(),
        Raw::Toml(toml::Value::String(s)) => s.trim(),
        Raw::Toml(_) => return Err(invalid(key, v, "a name")),
    };
    let de: serde::de::value::StrDeserializer<'_, serde::de::value::Error> = text.into_deserializer();
    T::deserialize(de).map_err(|e| {
        // serde says "unknown variant `x`, expected one of `a`, `b`": keep the list.
        let msg = e.to_string();
        let expected = msg.split_once("expected ").map_or("a known name", |(_, rest)| rest).to_string();
        PolicyError::InvalidValue { key: key.to_string(), value: text.to_string(), expected }
    })
}

/// Generates `Policy::KEYS` and the key dispatch from one table, so the list of
/// settable keys cannot drift from what `set` accepts.
macro_rules! policy_keys {
    ($( $key:literal => $($field:ident).+ : $parse:ident ),* $(,)?) => {
        impl Policy {
            /// Every settable key, dotted as in the TOML layout.
            pub const KEYS: &'static [&'static str] = &[$($key),*];

            fn set_raw(&mut self, key: &str, v: Raw<'_>) -> Result<(), PolicyError> {
                match key {
                    $( $key => { self.$($field).+ = $parse(key, v)?; } )*
                    _ => return Err(unknown_key(key)),
                }
                Ok(())
            }
        }
    };
}

policy_keys! {
    "name" => name: parse_string,
    "source" => source: parse_string,
    "context_window" => context_window: parse_window,
    "max_output_tokens" => max_output_tokens: parse_u64,
    "system_tokens" => system_tokens: parse_opt_u64,
    "estimator" => estimator: parse_enum,
    "message_overhead_tokens" => message_overhead_tokens: parse_u64,
    "prune.enabled" => prune.enabled: parse_bool,
    "prune.persist" => prune.persist: parse_bool,
    "prune.age_unit" => prune.age_unit: parse_enum,
    "prune.keep_last" => prune.keep_last: parse_u64,
    "prune.soft_trim_chars" => prune.soft_trim_chars: parse_opt_u64,
    "prune.head" => prune.head: parse_u64,
    "prune.tail" => prune.tail: parse_u64,
    "prune.trim_template" => prune.trim_template: parse_string,
    "prune.hard_clear_after" => prune.hard_clear_after: parse_opt_u64,
    "prune.placeholder" => prune.placeholder: parse_string,
    "prune.protect_tools" => prune.protect_tools: parse_list,
    "prune.skip_images" => prune.skip_images: parse_bool,
    "prune.protect_recent_images" => prune.protect_recent_images: parse_opt_u64,
    "prune.protect_before_first_user" => prune.protect_before_first_user: parse_bool,
    "prune.soft_trim_ratio" => prune.soft_trim_ratio: parse_opt_f64,
    "prune.hard_clear_ratio" => prune.hard_clear_ratio: parse_opt_f64,
    "prune.min_prunable_tool_chars" => prune.min_prunable_tool_chars: parse_u64,
    "prune.cap_chars" => prune.cap_chars: parse_opt_u64,
    "prune.protect_tokens" => prune.protect_tokens: parse_opt_u64,
    "prune.minimum_tokens" => prune.minimum_tokens: parse_u64,
    "prune.skip_last_user_turns" => prune.skip_last_user_turns: parse_u64,
    "prune.cache_ttl_secs" => prune.cache_ttl_secs: parse_opt_u64,
    "prune.start_ratio" => prune.start_ratio: parse_opt_f64,
    "prune.clear_tool_uses.enabled" => prune.clear_tool_uses.enabled: parse_bool,
    "prune.clear_tool_uses.trigger_tokens" => prune.clear_tool_uses.trigger_tokens: parse_u64,
    "prune.clear_tool_uses.keep" => prune.clear_tool_uses.keep: parse_u64,
    "prune.clear_tool_uses.clear_at_least" => prune.clear_tool_uses.clear_at_least: parse_u64,
    "prune.clear_tool_uses.exclude_tools" => prune.clear_tool_uses.exclude_tools: parse_list,
    "compact.enabled" => compact.enabled: parse_bool,
    "compact.trigger" => compact.trigger: parse_enum,
    "compact.trigger_tokens" => compact.trigger_tokens: parse_u64,
    "compact.trigger_ratio" => compact.trigger_ratio: parse_f64,
    "compact.reserve_tokens" => compact.reserve_tokens: parse_u64,
    "compact.include_max_output" => compact.include_max_output: parse_bool,
    "compact.inclusive" => compact.inclusive: parse_bool,
    "compact.measure" => compact.measure: parse_enum,
    "compact.cut" => compact.cut: parse_enum,
    "compact.cut_points" => compact.cut_points: parse_enum,
    "compact.keep_recent_tokens" => compact.keep_recent_tokens: parse_u64,
    "compact.keep_recent_ratio" => compact.keep_recent_ratio: parse_opt_f64,
    "compact.keep_first_messages" => compact.keep_first_messages: parse_u64,
    "compact.keep_tail_messages" => compact.keep_tail_messages: parse_u64,
    "compact.min_compact_messages" => compact.min_compact_messages: parse_u64,
    "compact.keep_recent_turns" => compact.keep_recent_turns: parse_u64,
    "compact.user_message_budget_tokens" => compact.user_message_budget_tokens: parse_opt_u64,
    "compact.append_last_user_request" => compact.append_last_user_request: parse_bool,
    "compact.keep_initial_context" => compact.keep_initial_context: parse_bool,
    "compact.split_turn_min_messages" => compact.split_turn_min_messages: parse_opt_u64,
    "compact.placement" => compact.placement: parse_enum,
    "compact.summary_template" => compact.summary_template: parse_string,
    "compact.ack_text" => compact.ack_text: parse_string,
    "compact.alternation" => compact.alternation: parse_bool,
    "compact.summarizer" => compact.summarizer: parse_enum,
    "compact.fallback" => compact.fallback: parse_enum,
    "compact.summary_max_tokens" => compact.summary_max_tokens: parse_u64,
    "compact.preview_head_chars" => compact.preview_head_chars: parse_opt_u64,
    "compact.preview_tail_chars" => compact.preview_tail_chars: parse_u64,
    "compact.input_cap_chars" => compact.input_cap_chars: parse_opt_u64,
    "compact.iterative_update" => compact.iterative_update: parse_bool,
    "compact.file_ops" => compact.file_ops: parse_bool,
    "compact.min_gain_tokens" => compact.min_gain_tokens: parse_u64,
    "compact.overflow_keep_ratio" => compact.overflow_keep_ratio: parse_opt_f64,
    "compact.command" => compact.command: parse_argv,
    "compact.command_dir" => compact.command_dir: parse_string,
    "compact.command_env" => compact.command_env: parse_list,
    "compact.command_timeout_secs" => compact.command_timeout_secs: parse_u64,
    "compact.llm.api" => compact.llm.api: parse_string,
    "compact.llm.base_url" => compact.llm.base_url: parse_string,
    "compact.llm.model" => compact.llm.model: parse_string,
    "compact.llm.api_key_env" => compact.llm.api_key_env: parse_string,
    "compact.llm.max_tokens" => compact.llm.max_tokens: parse_opt_u64,
    "compact.llm.temperature" => compact.llm.temperature: parse_opt_f64,
    "compact.llm.timeout_secs" => compact.llm.timeout_secs: parse_opt_u64,
    "compact.llm.prompt" => compact.llm.prompt: parse_string,
    "compact.llm.prompt_file" => compact.llm.prompt_file: parse_string,
    "compact.llm.update_prompt_file" => compact.llm.update_prompt_file: parse_string,
    "flush.enabled" => flush.enabled: parse_bool,
    "flush.reserve_tokens" => flush.reserve_tokens: parse_u64,
    "flush.threshold_tokens" => flush.threshold_tokens: parse_u64,
    "check.max_frr_drop" => check.max_frr_drop: parse_f64,
    "check.max_savings_drop" => check.max_savings_drop: parse_f64,
    "check.max_hallucination" => check.max_hallucination: parse_f64,
}

fn unknown_key(key: &str) -> PolicyError {
    // Suggest keys sharing the last segment (`keep_last` → `prune.keep_last`), the
    // usual mistake being a missing or wrong section prefix.
    let last = key.rsplit('.').next().unwrap_or(key);
    let close: Vec<&str> = Policy::KEYS.iter().copied().filter(|k| k.rsplit('.').next() == Some(last)).collect();
    // Else the key nearest in spelling (`compact.keep_recnt_tokens`).
    let near = || crate::text::suggest::closest_whole(key, Policy::KEYS.iter().copied());
    let hint = match (close.is_empty(), near()) {
        (false, _) => format!(" (did you mean {}?)", close.join(" or ")),
        (true, Some(k)) => format!(" (did you mean {k}?)"),
        (true, None) => String::new(),
    };
    PolicyError::UnknownKey { key: key.to_string(), hint }
}

impl Policy {
    /// Set one key from command-line text (`--set key=value`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), PolicyError> {
        self.set_raw(key.trim(), Raw::Text(value))
    }

    /// The keys nothing reads in this policy ([`unread_keys`]).
    pub fn unread(&self) -> impl Iterator<Item = &'static str> {
        unread_keys(
            self.compact.trigger.name(),
            self.compact.keep_recent_ratio.is_some(),
            self.compact.summarizer.name(),
        )
    }

    /// Why setting `key` changes nothing in this policy, when it does not:
    /// the trigger size of a trigger the policy does not use,
    /// `compact.keep_recent_tokens` under a `keep_recent_ratio`, or a key of
    /// a summarizer the policy does not use.
    pub fn ineffective(&self, key: &str) -> Option<String> {
        if !self.unread().any(|k| k == key) {
            return None;
        }
        let c = &self.compact;
        let summarizer_of = |kind: SummarizerKind| {
            format!(
                "its summarizer is compact.summarizer = \"{}\"; set compact.summarizer = \"{}\" to use it",
                c.summarizer.name(),
                kind.name()
            )
        };
        if COMMAND_KEYS.contains(&key) {
            return Some(summarizer_of(SummarizerKind::Command));
        }
        if PROMPT_FILE_KEYS.contains(&key) {
            return Some(summarizer_of(SummarizerKind::Llm));
        }
        Some(match (key, c.keep_recent_ratio) {
            ("compact.keep_recent_tokens", Some(r)) => {
                format!(
                    "compact.keep_recent_ratio = {r} overrides it; set compact.keep_recent_ratio = \"off\" to use it"
                )
            }
            _ => {
                let wanted = match key {
                    "compact.trigger_tokens" => TriggerKind::Tokens,
                    "compact.trigger_ratio" => TriggerKind::Ratio,
                    _ => TriggerKind::Reserve,
                };
                format!(
                    "its trigger is compact.trigger = \"{}\"; set compact.trigger = \"{}\" to use it",
                    c.trigger.name(),
                    wanted.name()
                )
            }
        })
    }

    /// Apply a `KEY=VALUE` assignment.
    pub fn apply_assignment(&mut self, assignment: &str) -> Result<(), PolicyError> {
        let (k, v) = assignment.split_once('=').ok_or_else(|| PolicyError::BadAssignment(assignment.to_string()))?;
        self.set(k, v)
    }

    /// Set one key from a typed TOML value (TOML files, sweep grids).
    pub fn set_toml(&mut self, key: &str, value: &toml::Value) -> Result<(), PolicyError> {
        self.set_raw(key, Raw::Toml(value))
    }

    /// Set every key of a TOML table but `base` (which names the preset the
    /// table starts from: `presets` reads it, see `Policy::from_toml`).
    pub fn set_table(&mut self, table: &toml::Table) -> Result<(), PolicyError> {
        let mut leaves = Vec::new();
        flatten("", table, &mut leaves);
        for (key, value) in leaves {
            if key == "base" {
                continue;
            }
            self.set_toml(&key, value)?;
        }
        Ok(())
    }

    /// Render as TOML: every key that takes effect (optional ones as `"off"`).
    /// Of the trigger sizes only the one `compact.trigger` uses is written, and
    /// `compact.keep_recent_tokens` only when `keep_recent_ratio` is off, so no
    /// file says two things at once. `from_toml` of the result gives back the
    /// policy's [`Policy::effective`] form.
    pub fn to_toml(&self) -> Result<String, PolicyError> {
        let err = |e: &dyn std::fmt::Display| PolicyError::Toml(e.to_string());
        let mut table = toml::Table::try_from(self).map_err(|e| err(&e))?;
        for key in self.unread() {
            remove_dotted(&mut table, key);
        }
        toml::to_string(&table).map_err(|e| err(&e))
    }

    /// This policy with the values nothing reads (the trigger sizes of the
    /// other triggers, `keep_recent_tokens` under a ratio) at their defaults:
    /// the form presets and policy files take, so two policies that replay
    /// alike are equal and report the same parameters.
    pub fn effective(&self) -> Policy {
        let mut p = self.clone();
        let d = Compact::default();
        for key in self.unread() {
            let c = &mut p.compact;
            match key {
                "compact.trigger_tokens" => c.trigger_tokens = d.trigger_tokens,
                "compact.trigger_ratio" => c.trigger_ratio = d.trigger_ratio,
                "compact.reserve_tokens" => c.reserve_tokens = d.reserve_tokens,
                "compact.keep_recent_tokens" => c.keep_recent_tokens = d.keep_recent_tokens,
                _ => {}
            }
        }
        p
    }
}

/// Remove the dotted `key` (`compact.llm.prompt_file`) from `t`.
fn remove_dotted(t: &mut toml::Table, key: &str) {
    match key.split_once('.') {
        Some((head, rest)) => {
            if let Some(toml::Value::Table(sub)) = t.get_mut(head) {
                remove_dotted(sub, rest);
            }
        }
        None => {
            t.remove(key);
        }
    }
}

pub(super) fn flatten<'a>(prefix: &str, table: &'a toml::Table, out: &mut Vec<(String, &'a toml::Value)>) {
    for (k, v) in table {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            toml::Value::Table(t) => flatten(&key, t, out),
            _ => out.push((key, v)),
        }
    }
}
