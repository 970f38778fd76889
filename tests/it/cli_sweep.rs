//! `compactor sweep`, the cost flags and `compactor compare`'s columns, end to
//! end: files written, stability across thread counts, the recommendation read
//! back as a policy, and usage errors (exit 2, naming the problem).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use std::path::Path;

const GRID: &str = r#"
[base]
context_window = 6000
"compact.reserve_tokens" = 1000
"compact.keep_recent_ratio" = "off"
max_output_tokens = 2000
[grid]
"compact.keep_recent_tokens" = [500, 1500]
"compact.trigger_ratio" = { from = 0.5, to = 0.7, step = 0.1 }
"prune.enabled" = [true, false]
"#;

fn sweep(dir: &Path, grid: &str, extra: &[&str]) -> std::process::Output {
    let file = dir.join("grid.toml");
    std::fs::write(&file, grid).unwrap();
    cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["sweep", "fixtures", "--quiet", "--grid"])
        .arg(&file)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn sweep_writes_its_reports_the_same_at_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let one = sweep(dir.path(), GRID, &["--jobs", "1", "--out", a.to_str().unwrap()]);
    let two = sweep(dir.path(), GRID, &["--jobs", "2", "--out", b.to_str().unwrap()]);
    assert_eq!(one.status.code(), Some(0), "{}", String::from_utf8_lossy(&one.stderr));
    assert_eq!(two.status.code(), Some(0), "{}", String::from_utf8_lossy(&two.stderr));
    for f in ["sweep.csv", "sweep.md", "recommended.toml", "report.html"] {
        let (x, y) = (std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap());
        assert!(x == y, "{f} differs between --jobs 1 and 2");
    }
    let stdout = String::from_utf8(one.stdout).unwrap();
    assert!(stdout.starts_with("12 grid point(s) over "), "{stdout}");
    assert!(stdout.contains("recommended: point "), "{stdout}");
    // The recommended point is in the printed table, marked, with why it won
    // and the window it was tuned for.
    let rec: usize =
        stdout.split("recommended: point ").nth(1).and_then(|r| r.split(' ').next()).unwrap().parse().unwrap();
    assert!(stdout.lines().any(|l| l.trim_start().starts_with(&format!("{rec}* "))), "{stdout}");
    assert!(stdout.contains("\n  why: "), "{stdout}");
    assert!(stdout.contains("\n  window: 6,000 tokens (context_window)\n"), "{stdout}");
    let csv = std::fs::read_to_string(a.join("sweep.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("point,compact.keep_recent_tokens,compact.trigger_ratio,prune.enabled,sessions,"),
        "{header}"
    );
    for col in [
        "savings_pct",
        "cost_saved_usd",
        "overflow_calls_policy",
        "compactions",
        "frr",
        "front_savings_frr",
        "recommended",
    ] {
        assert!(header.split(',').any(|c| c == col), "{col} missing from {header}");
    }
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 12);
    assert_eq!(rows.iter().filter(|r| r.ends_with(",1,")).count(), 1, "exactly one recommended point:\n{csv}");
    let md = std::fs::read_to_string(a.join("sweep.md")).unwrap();
    assert!(md.contains("## Pareto front") && md.contains("## Recommendation"));
    // The recommendation replays as a policy file.
    cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures", "--quiet", "--policy"])
        .arg(a.join("recommended.toml"))
        .assert()
        .code(0);
    let html = std::fs::read_to_string(a.join("report.html")).unwrap();
    assert!(html.contains("Pareto front") && html.contains("<svg"));
    // --json: the same sweep for machines, its recommended point the CSV's.
    let j = sweep(dir.path(), GRID, &["--json"]);
    assert_eq!(j.status.code(), Some(0), "{}", String::from_utf8_lossy(&j.stderr));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["points"].as_array().map(Vec::len), Some(12));
    let rec = v["recommended"].as_u64().unwrap() as usize;
    let point = v["points"][rec]["index"].as_u64().unwrap();
    assert!(rows.iter().any(|r| r.starts_with(&format!("{point},")) && r.ends_with(",1,")), "{point}\n{csv}");
}

#[test]
fn sweep_usage_errors_exit_2_and_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let bad_key = sweep(dir.path(), "[grid]\n\"prune.keep_lst\" = [1, 2]\n", &[]);
    assert_eq!(bad_key.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad_key.stderr);
    assert!(err.contains("grid.toml") && err.contains("prune.keep_lst"), "{err}");
    // The policy's reason is said once, not again as a cause of itself.
    assert_eq!(err.matches("unknown policy key").count(), 1, "{err}");
    let two_bases = sweep(dir.path(), GRID, &["--preset", "opal", "--preset", "nous"]);
    assert_eq!(two_bases.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&two_bases.stderr).contains("one base policy"));
    let frr = sweep(dir.path(), GRID, &["--min-frr", "2"]);
    assert_eq!(frr.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&frr.stderr).contains("--min-frr"));
    for (args, says) in [(&["--grid", "no/such/grid.toml"][..], "no/such/grid.toml"), (&[][..], "--grid")] {
        cargo_bin_cmd!("compactor")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["sweep", "fixtures"])
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
}

/// A grid value wrong in itself is a usage error naming it, as the same
/// value given to `replay` is; a value invalid only beside another axis's
/// value leaves that point out, and the run says why.
#[test]
fn a_bad_grid_value_is_an_error_and_a_bad_combination_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let o = sweep(dir.path(), "[grid]\n\"compact.trigger_ratio\" = [0.6, 1.7]\n", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("grid.toml: `compact.trigger_ratio` = 1.7 gives no valid policy with any other value")
            && err.contains("must be in (0, 1]"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "a table was printed before the error");

    // soft_trim_ratio 0.6 with hard_clear_ratio 0.5 is refused; the other three run.
    let grid = "[base]\ncontext_window = 6000\n[grid]\n\"prune.soft_trim_ratio\" = [0.3, 0.6]\n\"prune.hard_clear_ratio\" = [0.5, 0.8]\n";
    let o = sweep(dir.path(), grid, &[]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.starts_with("4 grid point(s) over ") && out.contains("(3 ran, 1 invalid or failed)"), "{out}");
    assert!(out.contains("not recommended: 1 whose values make no valid policy\n"), "{out}");
    assert!(!out.contains("failed on a session"), "{out}");
    assert!(err.contains("grid point 3: `prune.soft_trim_ratio`: must not exceed prune.hard_clear_ratio"), "{err}");
}

/// A sweep with no recommendation into the `--out` of one that had one
/// leaves no `recommended.toml`: `replay --policy` must not read a point of
/// another run.
#[test]
fn no_recommendation_leaves_no_recommended_toml_of_an_earlier_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = sweep(dir.path(), GRID, &["--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("recommended.toml").is_file());
    let o = sweep(dir.path(), GRID, &["--out", out.to_str().unwrap(), "--min-frr", "1"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("no point qualifies"), "{stdout}");
    assert!(!out.join("recommended.toml").exists(), "the earlier sweep's recommendation stays");
    assert!(out.join("sweep.csv").is_file());
}

/// The policy of the recommended point, as written to recommended.toml.
fn recommended(dir: &Path, extra: &[&str]) -> toml::Table {
    let out = dir.join(format!("out-{}", extra.join("_").replace(['=', '.', '/'], "-")));
    let o = sweep(dir, GRID, &[extra, &["--out", out.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
    toml::from_str(&std::fs::read_to_string(out.join("recommended.toml")).unwrap()).unwrap()
}

/// Precedence, lowest first: the preset, the grid's [base], the command
/// line's --set/--estimator/--summarizer; the axes vary what they vary.
#[test]
fn the_command_line_wins_over_the_grids_base() {
    let dir = tempfile::tempdir().unwrap();
    // GRID's [base] sets context_window = 6000 over the preset's.
    let base = recommended(dir.path(), &[]);
    assert_eq!(base["context_window"].as_integer(), Some(6000));
    let set = recommended(dir.path(), &["--set", "context_window=9000", "--estimator", "per_block"]);
    assert_eq!(set["context_window"].as_integer(), Some(9000), "--set wins over [base]");
    assert_eq!(set["estimator"].as_str(), Some("per_block"));
    // [base] keys the command line leaves alone still apply, over the preset.
    assert_eq!(set["max_output_tokens"].as_integer(), Some(2000));
    // Only the settings that take effect: the ratio trigger's size alone, and
    // the token keep size with the ratio off.
    assert!(set["compact"].get("reserve_tokens").is_none() && set["compact"].get("trigger_tokens").is_none());
    assert_eq!(set["compact"]["keep_recent_ratio"].as_str(), Some("off"));
    let opal = recommended(dir.path(), &["--preset", "opal"]);
    assert_eq!(opal["context_window"].as_integer(), Some(6000), "[base] wins over the preset");
    assert_eq!(opal["compact"]["placement"], base_of("opal")["compact"]["placement"]);
}

/// The TOML of a built-in preset.
fn base_of(preset: &str) -> toml::Table {
    let o = cargo_bin_cmd!("compactor").args(["presets", preset]).output().unwrap();
    toml::from_str(&String::from_utf8(o.stdout).unwrap()).unwrap()
}

#[test]
fn a_flag_on_a_grid_axis_is_an_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let o = sweep(dir.path(), GRID, &["--set", "compact.trigger_ratio=0.6"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--set compact.trigger_ratio=0.6: `compact.trigger_ratio` is an axis of grid "), "{err}");
    assert!(err.contains("grid.toml"), "{err}");
    // An axis that no point reads: opal keeps a share of the window.
    let o = sweep(dir.path(), "[grid]\n\"compact.keep_recent_tokens\" = [1000, 2000]\n", &["--preset", "opal"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "axis `compact.keep_recent_tokens` changes nothing in `opal`: compact.keep_recent_ratio = 0.25 overrides it"
        ),
        "{err}"
    );
    let grid = "[grid]\nestimator = [\"chars4\", \"per_block\"]\n";
    let o = sweep(dir.path(), grid, &["--estimator", "o200k"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--estimator o200k: `estimator` is an axis of grid "), "{err}");
}

/// sweep reads every session before the first point: a --format that reads
/// the files as nothing stops it there.
#[test]
fn sweep_with_a_format_that_yields_no_call_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("grid.toml");
    std::fs::write(&file, GRID).unwrap();
    let o = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["sweep", "fixtures/claude-code/compaction.jsonl", "--quiet", "--format", "gemini", "--grid"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--format gemini: 1 file(s) yield no call") && err.contains("compaction.jsonl"), "{err}");
}

#[test]
fn compare_prints_one_column_per_preset_and_costs() {
    let out = tempfile::tempdir().unwrap();
    let o = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["compare", "fixtures", "--quiet", "--preset", "opal", "--preset", "spec008", "--preset", "nous"])
        .args(["--set", "context_window=6000", "--set", "compact.reserve_tokens=1000", "--set", "flush.enabled=false"])
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    // After the run's header lines (sessions, meter, windows, warnings).
    let header = text.lines().find(|l| l.starts_with(' ')).unwrap();
    let cols: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(cols, ["opal", "spec008", "nous"], "{text}");
    for row in
        ["token savings", "cost savings", "overflow calls", "compactions", "FRR", "artifact recall", "hallucination"]
    {
        let line = text.lines().find(|l| l.starts_with(row)).unwrap_or_else(|| panic!("{row} missing:\n{text}"));
        // The label may carry a note such as "(baseline → policy)": values start
        // after the first run of two spaces.
        let (_, rest) = line.split_once("  ").unwrap_or_else(|| panic!("no values: {line}"));
        let values = rest.split("  ").filter(|v| !v.trim().is_empty()).count();
        assert_eq!(values, 3, "{row}: {line}");
    }
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(md.contains("## Side by side") && md.contains("## Cost"), "{md}");
    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.path().join("report.json")).unwrap()).unwrap();
    assert!(report.aggregates.iter().all(|a| a.cost.as_ref().is_some_and(|c| c.baseline.usd > 0.0)));
    assert!(report.sessions.iter().filter(|r| r.error.is_none()).all(|r| r.cost.is_some()));
}

#[test]
fn cost_flags_change_the_price_and_reject_bad_values() {
    let run = |extra: &[&str]| {
        let o = cargo_bin_cmd!("compactor")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["replay", "fixtures/claude-code", "--quiet", "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let r: compactor::report::Report = serde_json::from_slice(&o.stdout).unwrap();
        r.aggregates[0].cost.clone().unwrap()
    };
    // Every call priced as one model (the fixtures record several).
    let sonnet = run(&["--model", "claude-sonnet-4"]);
    let opus = run(&["--model", "claude-opus-4-1"]);
    // Opus 4.1 costs 5× Sonnet 4 on every rate; rounding aside the bill follows.
    assert!(
        (opus.baseline.usd / sonnet.baseline.usd - 5.0).abs() < 0.01,
        "{} vs {}",
        opus.baseline.usd,
        sonnet.baseline.usd
    );
    let off = run(&["--cache-ttl", "off"]);
    assert_eq!((off.baseline.cache_read, off.baseline.cache_write), (0, 0));
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.toml");
    std::fs::write(
        &prices,
        "[families.claude-sonnet-4]\ninput = 0.0\noutput = 0.0\ncache_read = 0.0\ncache_write_5m = 0.0\n",
    )
    .unwrap();
    let free = run(&["--prices", prices.to_str().unwrap()]);
    assert!(free.baseline.usd < run(&[]).baseline.usd);
    cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures", "--cache-ttl", "2h"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown cache TTL `2h`"));
    std::fs::write(&prices, "[families.x]\ninput = 1.0\n").unwrap();
    cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "fixtures", "--prices"])
        .arg(&prices)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("prices.toml").and(predicate::str::contains("`x`")));
}

/// The sweep on the real corpus with the grid kept in the repository: every
/// point runs, a recommendation is written, and the default preset (which
/// this grid tuned) is one of its points.
#[test]
fn corpus_sweep_with_the_default_grid() {
    let Some(corpus) = compactor::testing::corpus_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let o = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("sweep")
        .arg(&corpus)
        .args(["--grid", "grids/default.toml", "--quiet", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.path().join("sweep.csv")).unwrap();
    let rows = csv.lines().count() - 1;
    assert!(rows >= 50, "{rows} points");
    // The last column is the error: empty on every row.
    assert!(csv.lines().skip(1).all(|l| l.ends_with(',')), "a grid point failed:\n{csv}");
    assert!(out.path().join("recommended.toml").is_file());

    // The default preset is one of the points of the grid that tuned it: its
    // replay under the grid's [base] comes to the totals of a row of
    // sweep.csv. (`scripts/bench.sh --sweep` times the sweep against that
    // replay, and checks the same.)
    // The grid's own reader: [base] as dotted keys, values as `--set` takes them.
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("grids/default.toml")).unwrap();
    let grid = compactor::sweep::Grid::from_toml(&text).unwrap();
    let mut replay = cargo_bin_cmd!("compactor");
    replay.current_dir(env!("CARGO_MANIFEST_DIR")).arg("replay").arg(&corpus);
    replay.args(["--preset", "default", "--quiet", "--out"]).arg(out.path().join("replay"));
    for (key, value) in &grid.base {
        replay.arg("--set").arg(format!("{key}={}", compactor::sweep::grid::render(value)));
    }
    let o = replay.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    const TOTALS: [&str; 3] = ["calls", "input_tokens_policy", "compactions"];
    let sessions = csv_rows(&out.path().join("replay/sessions.csv"));
    let replayed: Vec<u64> =
        TOTALS.iter().map(|c| sessions.iter().map(|r| r[*c].parse::<u64>().unwrap()).sum()).collect();
    let points = csv_rows(&out.path().join("sweep.csv"));
    let is_a_point =
        points.iter().any(|r| TOTALS.iter().zip(&replayed).all(|(c, v)| r[*c].parse::<u64>().unwrap() == *v));
    assert!(is_a_point, "no point of the grid has the totals {replayed:?} of the default preset's replay");
}

/// The records of a CSV file, each as header → field.
fn csv_rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| headers.iter().map(String::from).zip(r.unwrap().iter().map(String::from)).collect())
        .collect()
}

/// A grid whose best point still costs more than the agent's own run and
/// avoids no overflow says so beside its recommendation; one that does
/// better does not.
#[test]
fn a_recommendation_worse_than_the_agents_run_is_warned() {
    let dir = tempfile::tempdir().unwrap();
    // At each session's own window nothing compacts; always-on pruning only
    // breaks the cached prefix.
    let worse = "[base]\ncontext_window = \"auto\"\n\"prune.start_ratio\" = \"off\"\n[grid]\n\"prune.protect_tokens\" = [20000, 40000]\n";
    let o = sweep(dir.path(), worse, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("warning: no point of this grid does better than the agent's own run"), "{out}");
    let o = sweep(dir.path(), GRID, &[]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("no point of this grid does better"));
}
