//! How a run prices calls and says so: `--model`, fast mode at its multiple,
//! DeepSeek's hours, the names of the models no price family matches, and the
//! corpus's bill.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use crate::cli_replay::replay;
use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use std::path::Path;

fn cost(out: &Path) -> compactor::cost::CostTotals {
    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    report.aggregates[0].cost.clone().unwrap()
}

/// The fallback warning names the unknown models, most calls first, so that
/// a prices file can be written for them; a model field holding a secret or
/// markup is counted, never shown.
#[test]
fn the_fallback_warning_names_the_unknown_models() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("chat.jsonl");
    let turn = |model: &str| {
        format!(
            "{{\"role\": \"user\", \"content\": \"go on\"}}\n{{\"role\": \"assistant\", \"content\": \"done\", \"model\": \"{model}\", \"usage\": {{\"prompt_tokens\": 900, \"completion_tokens\": 20}}}}\n"
        )
    };
    // A Google API key's shape: short enough to be listed, screened when printed.
    let secret = "AIzaSyD4x9Qm2Lk7Vb3Nc8Wr1Tz6Hy5Jp0Fg2Ks";
    let mut text = String::from("{\"role\": \"system\", \"content\": \"You code.\"}\n");
    for m in ["qwen3-coder-plus", "qwen3-coder-plus", "glm-4.7-flash", secret, "<b>x</b>", "z-ai/glm-4.6"] {
        text.push_str(&turn(m));
    }
    std::fs::write(&log, text).unwrap();
    let out = dir.path().join("out");
    let o = replay(&[log.to_str().unwrap(), "--preset", "default"], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let expect = "warning: 5 call(s) of a model no price family matches, or of none named, priced as \
                  `claude-sonnet-4`; unknown: `qwen3-coder-plus` (2 calls), `glm-4.7-flash` (1 call), others \
                  (--prices FILE prices them; docs/cost.md)";
    assert!(stderr.contains(expect), "{stderr}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("unknown: 'qwen3-coder-plus' (2 calls), 'glm-4.7-flash' (1 call), others"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("<strong>Warning: </strong>5 call(s) of a model no price family matches")
            && html.contains("unknown: `qwen3-coder-plus` (2 calls), `glm-4.7-flash` (1 call), others"),
        "{html}"
    );
    for text in [&*stderr, &md] {
        assert!(!text.contains("AIza") && !text.contains("<b>"), "{text}");
    }
    assert!(!html.contains("AIza") && !html.contains("x</b>"), "{html}");
    // report.json counts the calls of each name; the odd ones under one key.
    let c = cost(&out);
    assert_eq!(c.fallback_calls, 5);
    let names: Vec<(&str, u64)> = c.unknown_models.iter().map(|(m, n)| (m.as_str(), *n)).collect();
    assert!(names.contains(&("qwen3-coder-plus", 2)) && names.contains(&("glm-4.7-flash", 1)), "{names:?}");
    assert!(names.contains(&(compactor::cost::OTHER_UNKNOWN_MODELS, 1)), "{names:?}");
    assert_eq!(names.iter().map(|(_, n)| n).sum::<u64>(), 5);

    // A prices file that prices them silences the warning.
    let prices = dir.path().join("prices.toml");
    std::fs::write(
        &prices,
        "fallback = \"claude-sonnet-4\"\n[families.qwen3-coder-plus]\ninput = 0.30\noutput = 1.20\n\
         [families.glm-4-7-flash]\ninput = 0.07\noutput = 0.40\n[families.mine]\ninput = 1\noutput = 2\nmatch = [\"aizasyd4x9qm2lk7vb3nc8wr1tz6hy5jp0fg2ks\", \"b>\"]\n",
    )
    .unwrap();
    let out = dir.path().join("priced");
    let o = replay(&[log.to_str().unwrap(), "--preset", "default", "--prices", prices.to_str().unwrap()], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("no price family matches"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(cost(&out).fallback_calls, 0);
}

/// A response served in fast mode is priced at its model's fast-mode multiple
/// (Opus 5: 2×), and the run says so; a prices file that removes the multiple
/// prices it at the standard rates, and the run warns of it, under --quiet too.
#[test]
fn fast_mode_calls_are_priced_at_their_multiple_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let log = "fixtures/claude-code/fast-mode.jsonl";
    let out = dir.path().join("fast");
    let o = replay(&[log, "--preset", "default"], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("note: 1 call(s) served in fast mode, priced at their model's fast-mode multiple"),
        "{stderr}"
    );
    assert!(!stderr.contains("at the standard rates"), "{stderr}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Note: 1 call(s) served in fast mode, priced at their model's fast-mode multiple."), "{md}");
    let fast = cost(&out);
    assert_eq!((fast.fast_calls, fast.fast_at_standard_calls), (1, 0));

    let prices = dir.path().join("prices.toml");
    std::fs::write(&prices, "[families.claude-opus-4-8]\nfast = false\n").unwrap();
    let out = dir.path().join("standard");
    let o = replay(&[log, "--preset", "default", "--prices", prices.to_str().unwrap()], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("warning: 1 call(s) served in fast mode priced at the standard rates: no fast-mode multiple"),
        "{stderr}"
    );
    let standard = cost(&out);
    assert_eq!((standard.fast_calls, standard.fast_at_standard_calls), (1, 1));
    // The fast call is the first: its 12,006 prompt tokens, all written to
    // the cache, and its 48 output tokens (the response's last line) cost
    // twice as much at 2×.
    let first = (12_006.0 * 6.25 + 48.0 * 25.0) / 1e6;
    let diff = fast.baseline.usd - standard.baseline.usd;
    assert!((diff - first).abs() < 2e-6, "fast costs {diff} more, not {first}");
}

/// A chat log of one user turn and one `model` reply of 1,000 prompt and 100
/// completion tokens per entry of `times` (RFC 3339, or none).
fn chat_log(model: &str, times: &[Option<&str>]) -> String {
    let turn = |time: &Option<&str>| {
        let ts = time.map(|t| format!(", \"timestamp\": \"{t}\"")).unwrap_or_default();
        format!(
            "{{\"role\": \"user\", \"content\": \"go on\"{ts}}}\n{{\"role\": \"assistant\", \"content\": \"done\", \"model\": \"{model}\", \"usage\": {{\"prompt_tokens\": 1000, \"completion_tokens\": 100}}{ts}}}\n"
        )
    };
    times.iter().map(turn).collect()
}

/// Each call's `tokens_baseline` from calls.csv in `out`, and the file's text.
fn baseline_tokens(out: &Path) -> (Vec<f64>, String) {
    let calls = std::fs::read_to_string(out.join("calls.csv")).unwrap();
    let head: Vec<&str> = calls.lines().next().unwrap().split(',').collect();
    let col = head.iter().position(|h| *h == "tokens_baseline").expect("tokens_baseline column");
    let tokens = calls.lines().skip(1).map(|l| l.split(',').nth(col).unwrap().parse().unwrap()).collect();
    (tokens, calls)
}

/// A DeepSeek call is billed at half price off-peak, by its timestamp, and at
/// the listed (peak) price when it has none; the run says how many of each.
#[test]
fn deepseek_calls_are_priced_by_the_hour_they_were_sent() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("chat.jsonl");
    // Monday 2026-11-30: 02:00 UTC is peak, 12:00 off-peak; the last call has no time.
    let times = [Some("2026-11-30T02:00:00Z"), Some("2026-11-30T12:00:00Z"), Some("2026-11-30T12:01:00Z"), None];
    std::fs::write(&log, chat_log("deepseek-flash", &times)).unwrap();
    let out = dir.path().join("out");
    let o = replay(&[log.to_str().unwrap(), "--preset", "default", "--cache-ttl", "off"], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("note: 2 call(s) of a model priced by time of day sent off-peak, priced at its off-peak rates"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "warning: 1 call(s) of a model priced by time of day or by date have no timestamp: priced at its latest \
rates, at peak where priced by the hour"
        ),
        "{stderr}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Note: 2 call(s) of a model priced by time of day sent off-peak"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains(
            "<strong>Warning: </strong>1 call(s) of a model priced by time of day or by date have no timestamp"
        ),
        "{html}"
    );
    let c = cost(&out);
    assert_eq!((c.off_peak_calls, c.untimed_listed_calls, c.fallback_calls), (2, 1, 0));
    // Each request is the history so far (a growing prompt): price it from the
    // tokens the replay measured, at the multiple of its hour.
    let (tokens, calls) = baseline_tokens(&out);
    assert_eq!(tokens.len(), 4, "{calls}");
    let share = [1.0, 0.5, 0.5, 1.0];
    let expect: f64 = tokens.iter().zip(share).map(|(t, m)| (t * 0.30 + 100.0 * 1.20) * m).sum::<f64>() / 1e6;
    assert!((c.baseline.usd - expect).abs() < 2e-6, "baseline {} against {expect}", c.baseline.usd);
}

/// An o3 call is billed at the prices o3 had on the day it was sent: before
/// OpenAI's cut of 2025-06-10 at $10 / $40, after it at $2 / $8; the run
/// says how many calls it billed at an earlier date's prices.
#[test]
fn calls_are_priced_at_the_rates_of_the_day_they_were_sent() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("chat.jsonl");
    let times = [Some("2025-06-08T12:00:00Z"), Some("2025-06-09T12:00:00Z"), Some("2025-06-10T12:00:00Z")];
    std::fs::write(&log, chat_log("o3", &times)).unwrap();
    let out = dir.path().join("out");
    let o = replay(&[log.to_str().unwrap(), "--preset", "default", "--cache-ttl", "off"], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let note = "2 call(s) sent before a price change of their model, priced at the rates of their date";
    assert!(stderr.contains(&format!("note: {note}")), "{stderr}");
    assert!(!stderr.contains("no timestamp"), "{stderr}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains(&format!("Note: {note}")), "{md}");
    let c = cost(&out);
    assert_eq!((c.earlier_price_calls, c.untimed_listed_calls, c.fallback_calls), (2, 0, 0));
    let (tokens, calls) = baseline_tokens(&out);
    assert_eq!(tokens.len(), 3, "{calls}");
    let rates = [(10.0, 40.0), (10.0, 40.0), (2.0, 8.0)];
    let expect: f64 = tokens.iter().zip(rates).map(|(t, (i, o))| t * i + 100.0 * o).sum::<f64>() / 1e6;
    assert!((c.baseline.usd - expect).abs() < 2e-6, "baseline {} against {expect}", c.baseline.usd);
}

/// A `--model` that names no price family would price every call as the
/// fallback family: an error listing the families, with the closest one.
#[test]
fn an_unknown_model_is_an_error_that_suggests_the_closest_family() {
    for (cmd, model, closest) in [
        ("replay", "claude-sonet-4-5", "claude-sonnet-4"),
        ("compare", "gpt5", "gpt-5"),
        ("replay", "sonnet-4-5", "claude-sonnet-4"),
    ] {
        let o = cargo_bin_cmd!("compactor")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([cmd, "fixtures", "--quiet", "--model", model])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd} --model {model}: {err}");
        assert!(err.contains(&format!("unknown --model `{model}`; did you mean `{closest}`?")), "{err}");
        assert!(err.contains("claude-opus-4-5") && err.contains("gpt-4o-mini") && err.contains("o4-mini"), "{err}");
        assert!(o.stdout.is_empty(), "nothing was replayed: {}", String::from_utf8_lossy(&o.stdout));
    }
    // Far from every family: the list, no guess.
    let o = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures", "--model", "llama-3-70b-instruct"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown --model `llama-3-70b-instruct` (known model families: "));
    assert!(!String::from_utf8_lossy(&o.get_output().stderr).contains("did you mean"));
    // A model name holding a family's name is known; so is a family of a --prices file.
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.toml");
    std::fs::write(&prices, "[families.my-model]\ninput = 0.2\noutput = 0.8\n").unwrap();
    for args in [&["--model", "claude-sonnet-4-5-20250929"][..], &["--model", "my-model-large", "--prices"]] {
        let mut c = cargo_bin_cmd!("compactor");
        c.current_dir(env!("CARGO_MANIFEST_DIR")).args(["replay", "fixtures/pi", "--quiet"]).args(args);
        if args.contains(&"--prices") {
            c.arg(&prices);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// At each session's own window, the `default` preset leaves alone every
/// corpus session whose requests stay under half the window: the same
/// requests as the agent's, so the same bill, to the cent.
#[test]
fn corpus_default_costs_what_the_agent_paid_far_from_the_window() {
    let Some(corpus) = compactor::testing::corpus_dir() else { return };
    let o = cargo_bin_cmd!("compactor")
        .arg("replay")
        .arg(&corpus)
        .args(["--preset", "default", "--json", "--quiet", "--no-quality"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let sessions = report["sessions"].as_array().unwrap();
    let far: Vec<_> = sessions
        .iter()
        .filter(|s| s["metrics"]["peak_baseline"].as_u64().unwrap() * 2 < s["context_window"].as_u64().unwrap())
        .collect();
    assert!(far.len() >= 20, "only {} sessions far from their window", far.len());
    for s in &far {
        let m = &s["metrics"];
        assert_eq!(
            (m["pruned_soft"].as_u64(), m["pruned_hard"].as_u64(), m["compactions"].as_u64()),
            (Some(0), Some(0), Some(0))
        );
        assert_eq!(s["cost"]["policy"], s["cost"]["baseline"], "{}", s["session_id"]);
    }
    // The sessions that near their window are where it saves.
    assert!(sessions.iter().any(|s| s["cost"]["saved_usd"].as_f64().unwrap() > 0.0));
}

/// Claude Code's own compactions cost it the requests that wrote their
/// summaries: the baseline bills them (read from the cache while it is
/// warm), what a policy saved is taken against them, and the run says so.
#[test]
fn claude_codes_own_summary_requests_are_in_the_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &Path, extra: &[&str]| {
        let o = cargo_bin_cmd!("compactor")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["replay", "fixtures/claude-code/compaction.jsonl", "--preset", "default"])
            .args(extra)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let out = dir.path().join("warm");
    let stderr = run(&out, &[]);
    assert!(
        stderr.contains(
            "the baseline's cost includes the 2 request(s) that wrote the summaries of Claude Code's own compactions"
        ),
        "{stderr}"
    );
    let c = cost(&out);
    let a = c.agent_summaries;
    assert_eq!((a.requests, a.unpriced), (2, 0));
    assert!(a.bill.cache_read > 0 && a.bill.output > 0 && a.bill.usd > 0.0, "{a:?}");
    assert!((c.baseline_usd() - (c.baseline.usd + a.bill.usd)).abs() < 1e-9);
    assert!((c.saved_usd - (c.baseline_usd() - c.policy.usd - c.summarizer_usd)).abs() < 1e-5);
    // sessions.csv's baseline is what the agent paid.
    let mut r = csv::Reader::from_path(out.join("sessions.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let base = h.iter().position(|x| x == "cost_baseline_usd").unwrap();
    let sum: f64 = r.records().map(|x| x.unwrap()[base].parse::<f64>().unwrap()).sum();
    assert!((sum - c.baseline_usd()).abs() < 1e-4, "{sum} vs {}", c.baseline_usd());
    // With no cache, the same input at the input price: dearer.
    let cold = dir.path().join("off");
    run(&cold, &["--cache-ttl", "off"]);
    let off = cost(&cold).agent_summaries;
    assert_eq!((off.bill.cache_read, off.bill.uncached), (0, a.bill.cache_read + a.bill.cache_write));
    assert!(off.bill.usd > a.bill.usd, "{off:?} vs {a:?}");
}
