//! The rules of `compactor check` on hand-built baselines: each rule fires on
//! exactly the change it names, tolerances come from the map, must-keep globs
//! match ids, file names and paths, a report.json reads as a baseline, and
//! `coverage` names every policy, parameter and setting that differs.

use super::*;
use crate::report::check::markdown;
use pretty_assertions::assert_eq;

fn preset(policy: &str) -> PresetMetrics {
    PresetMetrics {
        policy: policy.to_string(),
        sessions: 2,
        savings_pct: 40.0,
        compactions: 3,
        frr: Some(60.0),
        frr_truncate: Some(20.0),
        frr_masking: Some(50.0),
        frr_masking_budget: Some(30.0),
        frr_oracle: Some(100.0),
        artifact_recall: Some(90.0),
        hallucination: Some(0.5),
        summary_tokens_mean: Some(900.0),
        ..PresetMetrics::default()
    }
}

fn session(id: &str, policy: &str) -> SessionMetrics {
    SessionMetrics {
        session_id: id.to_string(),
        file: format!("{id}.jsonl"),
        policy: policy.to_string(),
        savings_pct: 40.0,
        compactions: 1,
        frr: Some(60.0),
        source_path: format!("logs/{id}.jsonl"),
        ..SessionMetrics::default()
    }
}

fn baseline() -> Baseline {
    Baseline {
        presets: vec![preset("nous"), preset("opal")],
        sessions: vec![session("a", "nous"), session("b", "nous"), session("a", "opal"), session("b", "opal")],
        ..Baseline::empty(&[])
    }
}

fn run(base: &Baseline, now: &Baseline) -> Outcome {
    compare(base, now, &HashMap::new(), &MustKeep::new(&[]).unwrap())
}

fn rules(o: &Outcome) -> Vec<(String, Rule)> {
    o.failures.iter().map(|f| (f.policy.clone(), f.rule)).collect()
}

#[test]
fn identical_runs_pass() {
    let o = run(&baseline(), &baseline());
    assert!(!o.regressed(), "{:?}", o.failures);
    assert!(o.lines.iter().all(|l| l.status != Status::Regression));
    assert!(markdown(&o).starts_with("## compactor check: no regression\n"));
}

#[test]
fn frr_drop_beyond_the_tolerance_fails() {
    let mut now = baseline();
    now.presets[0].frr = Some(58.5); // −1.5: within the default 2 points
    assert!(!run(&baseline(), &now).regressed());
    now.presets[0].frr = Some(57.9); // −2.1
    let o = run(&baseline(), &now);
    assert_eq!(rules(&o), vec![("nous".to_string(), Rule::Drop("frr_pooled"))]);
    // A wider tolerance for that preset accepts it.
    let wide = HashMap::from([(
        "nous".to_string(),
        Tolerances { max_frr_drop: 3.0, max_savings_drop: 1.0, max_hallucination: 1.0 },
    )]);
    assert!(!compare(&baseline(), &now, &wide, &MustKeep::new(&[]).unwrap()).regressed());
}

#[test]
fn savings_drop_fails() {
    let mut now = baseline();
    now.presets[1].savings_pct = 38.5;
    assert_eq!(rules(&run(&baseline(), &now)), vec![("opal".to_string(), Rule::Drop("savings_pct"))]);
    now.presets[1].savings_pct = 55.0; // better is fine
    assert!(!run(&baseline(), &now).regressed());
}

#[test]
fn hallucination_above_one_percent_fails_whatever_the_baseline() {
    let mut now = baseline();
    now.presets[0].hallucination = Some(1.2);
    let mut base = baseline();
    base.presets[0].hallucination = Some(1.5);
    assert_eq!(rules(&run(&base, &now)), vec![("nous".to_string(), Rule::Ceiling("hallucination_rate"))]);
}

#[test]
fn new_violations_and_no_progress_compactions_fail_per_session() {
    let mut now = baseline();
    now.sessions[1].violations = 1;
    now.sessions[2].no_progress_compactions = 2;
    let o = run(&baseline(), &now);
    assert_eq!(rules(&o), vec![("nous".to_string(), Rule::NewViolations), ("opal".to_string(), Rule::NewNoProgress)]);
    assert!(o.failures[0].detail.contains("b (0 → 1)"), "{:?}", o.failures);
    // The same counts in the baseline are not new.
    assert!(!run(&now, &now).regressed());
    // A session unknown to the baseline starts from zero.
    let mut extra = baseline();
    let mut c = session("c", "nous");
    c.no_progress_compactions = 1;
    extra.sessions.push(c);
    assert_eq!(rules(&run(&baseline(), &extra)), vec![("nous".to_string(), Rule::NewNoProgress)]);
}

#[test]
fn must_keep_sessions_may_not_lose_a_modified_path() {
    let mut now = baseline();
    now.sessions[0].lost_modified_paths = vec!["src/parser.rs".into()];
    // Not marked: no rule.
    assert!(!run(&baseline(), &now).regressed());
    for glob in ["a", "a.jsonl", "logs/*", "*"] {
        let marks = MustKeep::new(&[glob.to_string()]).unwrap();
        let o = compare(&baseline(), &now, &HashMap::new(), &marks);
        assert_eq!(rules(&o), vec![("nous".to_string(), Rule::MustKeepLost)], "{glob}");
        assert!(o.failures[0].detail.contains("a: src/parser.rs"), "{:?}", o.failures);
    }
    let other = MustKeep::new(&["b*".to_string()]).unwrap();
    assert!(!compare(&baseline(), &now, &HashMap::new(), &other).regressed());
    assert!(matches!(MustKeep::new(&["[".to_string()]), Err(CheckError::Glob { .. })));
}

#[test]
fn presets_missing_on_either_side_are_notes_not_failures() {
    let mut now = baseline();
    now.presets.push(preset("codex"));
    now.presets.remove(1);
    let o = run(&baseline(), &now);
    assert!(!o.regressed());
    assert!(o.notes.iter().any(|n| n.contains("`codex` is not in the baseline")), "{:?}", o.notes);
    assert!(o.notes.iter().any(|n| n.contains("`opal` is in the baseline but was not replayed")), "{:?}", o.notes);
}

#[test]
fn baseline_files_round_trip_and_versions_are_checked() {
    let mut b = baseline();
    b.must_keep = vec!["fix-*".into()];
    b.replay.presets = vec!["nous".into()];
    let back = Baseline::from_report_json(&b.to_json()).unwrap();
    // The source path is not stored.
    let mut expected = b.clone();
    for s in &mut expected.sessions {
        s.source_path.clear();
    }
    assert_eq!(back, expected);
    let newer = String::from_utf8(b.to_json()).unwrap().replace("\"version\": 1", "\"version\": 99");
    assert!(matches!(Baseline::from_report_json(newer.as_bytes()), Err(CheckError::Version { found: 99 })));
    assert!(matches!(Baseline::from_report_json(b"{}"), Err(CheckError::Unknown)));
    assert!(matches!(Baseline::from_report_json(b"not json"), Err(CheckError::Json(_))));
}

#[test]
fn a_report_json_reads_as_a_baseline() {
    let report = serde_json::json!({
        "schema_version": 2,
        "tool": {"name": "compactor", "version": "0.1.0"},
        "some_future_field": [1, 2, 3],
        "aggregates": [{
            "policy": "nous", "sessions": 1, "savings_pct": 12.5, "compactions": 2,
            "no_progress_compactions": 0, "violations": 0,
            "quality": {"candidates": [
                {"summarizer": "policy", "frr_pooled": 0.61234, "hallucination_rate_mean": 0.004,
                 "artifact_trail_recall_mean": 0.9},
                {"summarizer": "truncate", "frr_pooled": 0.1}
            ]}
        }],
        "sessions": [{
            "session_id": "s1", "source_path": "/x/logs/s1.jsonl", "policy": "nous",
            "metrics": {"savings_pct": 12.5, "compactions": 2, "no_progress_compactions": 1},
            "violations": 0, "error": null,
            "quality": {"candidates": [{"summarizer": "policy", "frr_pooled": 0.5}],
                        "events": [{"lost_modified_paths": ["b.rs", "a.rs"]}, {"lost_modified_paths": ["a.rs"]}]}
        }]
    });
    let b = Baseline::from_report_json(report.to_string().as_bytes()).unwrap();
    assert_eq!(b.tool_version, "0.1.0");
    // No policies in this report: nothing recorded, and no run settings ever.
    assert!(b.policies.is_empty() && b.settings.is_none());
    let p = &b.presets[0];
    assert_eq!(
        (p.frr, p.frr_truncate, p.hallucination, p.artifact_recall),
        (Some(61.234), Some(10.0), Some(0.4), Some(90.0))
    );
    assert_eq!(p.frr_oracle, None);
    let s = &b.sessions[0];
    assert_eq!((s.file.as_str(), s.no_progress_compactions, s.frr), ("s1.jsonl", 1, Some(50.0)));
    assert_eq!(s.lost_modified_paths, vec!["a.rs".to_string(), "b.rs".to_string()]);
    // A schema-1 report (no quality) still loads, with no FRR to compare.
    let old = serde_json::json!({"schema_version": 1, "aggregates": [{"policy": "nous", "savings_pct": 3.0}], "sessions": []});
    let b = Baseline::from_report_json(old.to_string().as_bytes()).unwrap();
    assert_eq!((b.presets[0].savings_pct, b.presets[0].frr), (3.0, None));
}

#[test]
fn markdown_escapes_untrusted_names() {
    let mut now = baseline();
    now.sessions[0].session_id = "<script>|x".into();
    now.sessions[0].violations = 1;
    let md = markdown(&run(&baseline(), &now));
    assert!(md.contains("&lt;script&gt;"), "{md}");
    assert!(!md.contains("<script>"), "{md}");
}

/// A policy as `presets --json` prints it (only the keys a test needs).
fn policy_json(name: &str, window: u64) -> serde_json::Value {
    serde_json::json!({
        "name": name, "source": "specs/000", "context_window": window, "estimator": "chars4",
        "compact": {"trigger_ratio": 0.8, "llm": {"model": "", "api_key_env": "KEY"}},
        "check": {"max_frr_drop": 2.0}
    })
}

fn recorded() -> Baseline {
    Baseline {
        policies: vec![policy_json("nous", 32000), policy_json("opal", 32000)],
        settings: Some(RunSettings::from([("format".to_string(), "auto".to_string())])),
        ..baseline()
    }
}

#[test]
fn coverage_of_the_same_run_is_empty() {
    let b = recorded();
    let c = coverage(&b, &b.policies, b.settings.as_ref().unwrap());
    assert_eq!(c, Coverage::default());
}

#[test]
fn coverage_names_policies_on_one_side_only() {
    let b = recorded();
    let now = [policy_json("nous", 32000), policy_json("codex", 32000)];
    let c = coverage(&b, &now, b.settings.as_ref().unwrap());
    assert_eq!((c.new_policies, c.missing_policies), (vec!["codex".to_string()], vec!["opal".to_string()]));
    assert!(c.changes.is_empty(), "{:?}", c.changes);
}

#[test]
fn coverage_names_each_changed_value_but_not_the_ignored_keys() {
    let b = recorded();
    let mut opal = policy_json("opal", 64000);
    opal["compact"]["trigger_ratio"] = serde_json::json!(0.7);
    // Not compared: description, tolerances, the API-key variable's name.
    opal["source"] = serde_json::json!("elsewhere");
    opal["check"]["max_frr_drop"] = serde_json::json!(5.0);
    opal["compact"]["llm"]["api_key_env"] = serde_json::json!("OTHER");
    let settings =
        RunSettings::from([("format".to_string(), "codex".to_string()), ("llm.model".to_string(), "m".to_string())]);
    let c = coverage(&b, &[policy_json("nous", 32000), opal], &settings);
    let shown: Vec<String> = c.changed_values().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "policy `opal`: compact.trigger_ratio 0.8 → 0.7",
            "policy `opal`: context_window 32000 → 64000",
            "run setting format: auto → codex",
            "run setting llm.model: (not set) → m",
        ]
    );
    assert_eq!(c.unmatched_keys().count(), 0);
}

/// A value nothing reads (a trigger size of another trigger, the token keep
/// size under a ratio) is no change: a baseline written when such values were
/// still recorded compares equal to the same policy now.
#[test]
fn values_nothing_reads_are_not_compared() {
    let b = recorded();
    let mut opal = policy_json("opal", 32000);
    opal["compact"]["trigger"] = serde_json::json!("ratio");
    opal["compact"]["reserve_tokens"] = serde_json::json!(16384);
    opal["compact"]["keep_recent_ratio"] = serde_json::json!(0.25);
    opal["compact"]["keep_recent_tokens"] = serde_json::json!(5);
    let mut old = b.clone();
    old.policies[1]["compact"]["trigger"] = serde_json::json!("ratio");
    old.policies[1]["compact"]["reserve_tokens"] = serde_json::json!(0);
    old.policies[1]["compact"]["keep_recent_ratio"] = serde_json::json!(0.25);
    old.policies[1]["compact"]["keep_recent_tokens"] = serde_json::json!(20000);
    let c = coverage(&old, &[policy_json("nous", 32000), opal.clone()], b.settings.as_ref().unwrap());
    assert!(c.changes.is_empty(), "{:?}", c.changes);
    // What is read is still compared.
    opal["compact"]["trigger_ratio"] = serde_json::json!(0.7);
    opal["compact"]["keep_recent_ratio"] = "off".into();
    let c = coverage(&old, &[policy_json("nous", 32000), opal], b.settings.as_ref().unwrap());
    let shown: Vec<String> = c.changed_values().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        ["policy `opal`: compact.keep_recent_ratio 0.25 → off", "policy `opal`: compact.trigger_ratio 0.8 → 0.7"]
    );
}

#[test]
fn keys_of_another_compactor_version_are_not_changed_values() {
    let b = recorded();
    let mut nous = policy_json("nous", 32000);
    nous["compact"]["new_knob"] = serde_json::json!(3);
    let c = coverage(&b, &[nous, policy_json("opal", 32000)], b.settings.as_ref().unwrap());
    assert_eq!(c.changed_values().count(), 0);
    let odd: Vec<String> = c.unmatched_keys().map(ToString::to_string).collect();
    assert_eq!(odd, ["policy `nous`: compact.new_knob (no such key) → 3"]);
}

#[test]
fn a_baseline_without_parameters_says_so_and_compares_none() {
    let b = baseline();
    let c = coverage(&b, &[policy_json("nous", 1), policy_json("opal", 2)], &RunSettings::new());
    assert!(c.params_unrecorded && c.settings_unrecorded);
    assert!(c.changes.is_empty() && c.new_policies.is_empty() && c.missing_policies.is_empty());
    // Written and read back, the recorded ones survive.
    let back = Baseline::from_report_json(&recorded().to_json()).unwrap();
    assert_eq!((back.policies, back.settings), (recorded().policies, recorded().settings));
}

#[test]
fn every_gated_metric_of_the_table_is_checked_and_lines_use_its_labels() {
    let o = run(&baseline(), &baseline());
    let labels: Vec<&str> = o.lines.iter().filter(|l| l.policy == "nous").map(|l| l.metric).collect();
    // Table order, then the per-session rules.
    let table: Vec<&str> = crate::metrics::of_view(crate::metrics::view::CHECK).map(|m| m.label).collect();
    assert_eq!(labels[..table.len()], table[..]);
    for m in crate::metrics::METRICS.iter().filter(|m| m.gate.is_some()) {
        assert!(m.views & crate::metrics::view::CHECK != 0, "{} is gated but not shown by check", m.key);
    }
    // A gate fires on the metric it belongs to, in the metric's own points.
    let mut now = baseline();
    now.presets[1].artifact_recall = Some(10.0); // no gate: shown, never fails
    now.presets[1].hallucination = Some(1.01);
    let o = run(&baseline(), &now);
    assert_eq!(rules(&o), vec![("opal".to_string(), Rule::Ceiling("hallucination_rate"))]);
    assert_eq!(o.failures[0].detail, "hallucination rate 1.01%, ceiling 1.00%");
    assert_eq!(Rule::Drop("frr_pooled").name(), "FRR drop");
}
