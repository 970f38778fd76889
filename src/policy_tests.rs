//! Tests of policy parsing, rendering and validation.

use super::keys::flatten;
use super::*;

#[test]
fn set_parses_every_kind_of_value() {
    let mut p = Policy::default();
    p.set("context_window", "128k").unwrap();
    assert_eq!(p.context_window, 128_000);
    p.set("compact.keep_recent_tokens", "30_000").unwrap();
    assert_eq!(p.compact.keep_recent_tokens, 30_000);
    p.set("prune.soft_trim_chars", "off").unwrap();
    assert_eq!(p.prune.soft_trim_chars, None);
    p.set("prune.soft_trim_chars", "5000").unwrap();
    assert_eq!(p.prune.soft_trim_chars, Some(5_000));
    p.set("compact.trigger_ratio", "0.75").unwrap();
    assert_eq!(p.compact.trigger_ratio, 0.75);
    p.set("prune.skip_images", "no").unwrap();
    assert!(!p.prune.skip_images);
    p.set("estimator", "o200k").unwrap();
    assert_eq!(p.estimator, EstimatorKind::O200k);
    p.set("compact.summarizer", "truncate").unwrap();
    assert_eq!(p.compact.summarizer, SummarizerKind::Truncate);
    p.set("prune.protect_tools", "skill, Read").unwrap();
    assert_eq!(p.prune.protect_tools, vec!["skill", "Read"]);
    p.set("prune.clear_tool_uses.exclude_tools", r#"["a", "b"]"#).unwrap();
    assert_eq!(p.prune.clear_tool_uses.exclude_tools, vec!["a", "b"]);
    p.set("compact.summary_template", r#""[S]\n\n{summary}""#).unwrap();
    assert_eq!(p.compact.summary_template, "[S]\n\n{summary}");
    p.set("compact.ack_text", "OK, continuing.").unwrap();
    assert_eq!(p.compact.ack_text, "OK, continuing.");
    p.apply_assignment("system_tokens=auto").unwrap();
    assert_eq!(p.system_tokens, None);
    p.apply_assignment("flush.enabled=true").unwrap();
    assert!(p.flush.enabled);
}

#[test]
fn set_errors_name_the_key() {
    let mut p = Policy::default();
    let e = p.set("keep_last", "3").unwrap_err();
    assert_eq!(e.to_string(), "unknown policy key `keep_last` (did you mean prune.keep_last?)");
    assert!(matches!(p.set("prune.nope", "1"), Err(PolicyError::UnknownKey { .. })));
    let e = p.set("compact.keep_recnt_tokens", "3").unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown policy key `compact.keep_recnt_tokens` (did you mean compact.keep_recent_tokens?)"
    );
    // A key is matched whole: a key it starts with is no closer.
    let e = p.set("compact.trigger_ratoi", "1").unwrap_err();
    assert_eq!(e.to_string(), "unknown policy key `compact.trigger_ratoi` (did you mean compact.trigger_ratio?)");
    assert_eq!(p.set("zzzz.qqq", "1").unwrap_err().to_string(), "unknown policy key `zzzz.qqq`", "no far guess");
    let e = p.set("context_window", "big").unwrap_err();
    assert!(
        e.to_string().starts_with("invalid value `big` for `context_window`: expected a non-negative integer"),
        "{e}"
    );
    let e = p.set("compact.cut", "middle").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid value `middle` for `compact.cut`: expected one of `keep_recent_tokens`, `first_plus_tail_messages`, `keep_recent_turns`, `whole_history`"
    );
    let e = p.set("prune.hard_clear_ratio", "-").unwrap_err();
    assert!(e.to_string().contains("`prune.hard_clear_ratio`: expected a number or `off`"), "{e}");
    assert!(matches!(p.set("prune.enabled", "maybe"), Err(PolicyError::InvalidValue { .. })));
    assert_eq!(p.apply_assignment("novalue"), Err(PolicyError::BadAssignment("novalue".into())));
}

#[test]
fn every_key_is_settable_from_its_own_rendering() {
    // The keys left out of a rendering at their defaults, set.
    let mut p = Policy::default();
    let c = &mut p.compact;
    c.command = vec!["python3".into(), "s.py".into(), "a b.md".into()];
    c.command_dir = "ci".into();
    c.command_env = vec!["OPENAI_API_KEY".into()];
    c.command_timeout_secs = 30;
    c.llm.prompt_file = "prompt.md".into();
    c.llm.update_prompt_file = "update.md".into();
    // (A program's keys are rendered under the summarizer that reads them.)
    c.summarizer = SummarizerKind::Command;
    let layout = toml::Table::try_from(&p).unwrap();
    let mut all = Vec::new();
    flatten("", &layout, &mut all);
    let mut sorted: Vec<&str> = all.iter().map(|(k, _)| k.as_str()).collect();
    let mut keys: Vec<&str> = Policy::KEYS.to_vec();
    keys.sort_unstable();
    sorted.sort_unstable();
    assert_eq!(sorted, keys, "KEYS and the TOML layout differ");
    // Every key the rendering writes (those that take effect) reads back as it was.
    let table: toml::Table = toml::from_str(&p.to_toml().unwrap()).unwrap();
    let mut leaves = Vec::new();
    flatten("", &table, &mut leaves);
    for (k, v) in &leaves {
        let mut q = p.clone();
        q.set_toml(k, v).unwrap_or_else(|e| panic!("{k}: {e}"));
        assert_eq!(q, p, "{k}");
    }
}

#[test]
fn toml_files_start_from_a_base_and_reject_unknown_keys() {
    let p = Policy::from_toml("base = \"nous\"\nname = \"mine\"\n[compact]\nkeep_recent_tokens = 10000\n").unwrap();
    assert_eq!(p.name, "mine");
    assert_eq!(p.compact.keep_recent_tokens, 10_000);
    assert_eq!(p.compact.trigger_tokens, 100_000);
    let e = Policy::from_toml("[compact]\nkeep_recent = 1\n").unwrap_err();
    assert!(matches!(e, PolicyError::UnknownKey { ref key, .. } if key == "compact.keep_recent"), "{e}");
    assert!(matches!(Policy::from_toml("base = \"x\""), Err(PolicyError::UnknownPreset(_))));
    assert!(matches!(Policy::from_toml("= ="), Err(PolicyError::Toml(_))));
    // serde's own reading of the layout agrees with `set`.
    let q: Policy = toml::from_str(&p.to_toml().unwrap()).unwrap();
    assert_eq!(q, p);
}

#[test]
fn validate_names_the_bad_key() {
    let bad = |f: fn(&mut Policy)| {
        let mut p = Policy::default();
        f(&mut p);
        match p.validate() {
            Err(PolicyError::Invalid { key, .. }) => key,
            other => panic!("{other:?}"),
        }
    };
    // `auto` is valid until resolved; a reserve that does not fit the
    // window found is named then.
    let mut auto = crate::presets::get("spec008").unwrap();
    auto.context_window = AUTO_WINDOW;
    assert!(auto.validate().is_ok());
    assert_eq!(auto.with_window(272_000).unwrap().context_window, 272_000);
    let e = auto.with_window(10_000).unwrap_err().to_string();
    assert!(e.contains("compact.reserve_tokens"), "{e}");
    assert!(auto.set("context_window", "0").is_err());
    auto.set("context_window", "AUTO").unwrap();
    assert!(auto.window_is_auto());
    let back = Policy::from_toml(&auto.to_toml().unwrap()).unwrap();
    assert_eq!(back.effective(), auto.effective());
    assert!(auto.to_toml().unwrap().contains("context_window = \"auto\""));
    assert_eq!(
        bad(|p| {
            p.prune.soft_trim_chars = Some(100);
            p.prune.head = 100;
        }),
        "prune.soft_trim_chars"
    );
    assert_eq!(bad(|p| p.compact.trigger_ratio = 1.5), "compact.trigger_ratio");
    assert_eq!(bad(|p| p.compact.summary_template = "no placeholder".into()), "compact.summary_template");
    assert_eq!(
        bad(|p| {
            p.prune.keep_last = 4;
            p.prune.hard_clear_after = Some(2);
        }),
        "prune.hard_clear_after"
    );
    assert!(Policy::default().validate().is_ok());
}

/// A key that another key overrides is named, with what overrides it: the
/// CLI warns on such a `--set`, and a sweep refuses such an axis.
#[test]
fn keys_that_change_nothing_are_named() {
    let opal = crate::presets::get("opal").unwrap();
    let why = opal.ineffective("compact.keep_recent_tokens").unwrap_or_default();
    assert!(why.contains("keep_recent_ratio = 0.25 overrides it"), "{why}");
    assert_eq!(opal.ineffective("compact.keep_recent_ratio"), None);
    assert_eq!(opal.ineffective("compact.trigger_ratio"), None, "opal triggers on a ratio");
    let why = opal.ineffective("compact.reserve_tokens").unwrap_or_default();
    assert!(why.contains(r#"trigger = "ratio"; set compact.trigger = "reserve""#), "{why}");
    let nous = crate::presets::get("nous").unwrap();
    assert!(nous.ineffective("compact.trigger_ratio").is_some());
    assert_eq!(nous.ineffective("compact.trigger_tokens"), None);
    assert_eq!(nous.ineffective("compact.keep_recent_tokens"), None);
    assert_eq!(nous.ineffective("prune.enabled"), None);
    // A summarizer's own keys under another summarizer.
    let why = nous.ineffective("compact.command_timeout_secs").unwrap_or_default();
    assert!(why.contains(r#"summarizer = "extractive"; set compact.summarizer = "command""#), "{why}");
    let why = nous.ineffective("compact.llm.prompt_file").unwrap_or_default();
    assert!(why.contains(r#"set compact.summarizer = "llm""#), "{why}");
    let mut mine = nous.clone();
    mine.apply_assignment("compact.summarizer=command").unwrap();
    assert_eq!(mine.ineffective("compact.command"), None);
    assert!(mine.ineffective("compact.llm.update_prompt_file").is_some());
    // Nor are they rendered there.
    mine.apply_assignment("compact.llm.prompt_file=p.md").unwrap();
    assert!(!mine.to_toml().unwrap().contains("prompt_file"));
}

/// Rendered TOML never names two settings of which only one applies, and
/// reads back to a policy that replays alike.
#[test]
fn rendered_toml_has_no_contradictory_keys() {
    for pr in crate::presets::all() {
        let mut p = pr.policy();
        // As the preset is, then with both keep sizes set (the ratio applies).
        for both in [false, true] {
            if both {
                p.apply_assignment("compact.keep_recent_tokens=9000").unwrap();
                p.apply_assignment("compact.keep_recent_ratio=0.3").unwrap();
            }
            let text = p.to_toml().unwrap();
            let table: toml::Table = toml::from_str(&text).unwrap();
            let c = table.get("compact").and_then(toml::Value::as_table).unwrap();
            let sizes =
                ["trigger_tokens", "trigger_ratio", "reserve_tokens"].iter().filter(|k| c.contains_key(**k)).count();
            assert_eq!(sizes, 1, "{}: one trigger size\n{text}", pr.name);
            let ratio_on = c.get("keep_recent_ratio").is_some_and(|v| v.as_str() != Some("off"));
            assert!(!(ratio_on && c.contains_key("keep_recent_tokens")), "{}: both keep sizes\n{text}", pr.name);
            let back = Policy::from_toml(&text).unwrap();
            assert_eq!(back.effective(), p.effective(), "{}", pr.name);
        }
    }
}
