//! `sweep.csv` (one row per grid point) and `sweep.md` (the axes, the
//! recommendation, the Pareto fronts and the best points), plus the lines the
//! CLI prints. Bytes and strings, except [`write_all`], which stages the
//! files and puts them under `--out` together ([`crate::output::stage`]).

use super::markdown::cell;
use crate::metrics::{self, Totals, view};
use crate::num::shown;
use crate::sweep::{Point, SweepResult};
use std::fmt::Write as _;

/// The columns of `sweep.csv` after `point` and one column per axis: the sweep
/// metrics of the metric table, then the fronts, the recommendation and the error.
pub fn columns() -> Vec<&'static str> {
    let mut cols: Vec<&str> = metrics::of_view(view::SWEEP_CSV).map(|m| m.column).collect();
    cols.extend(["front_savings_frr", "front_cost_frr", "recommended", "error"]);
    cols
}

/// `sweep.csv`. FRR, artifact recall and hallucination are empty when quality
/// was not measured.
pub fn sweep_csv(r: &SweepResult) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = vec!["point"];
    header.extend(r.axes.iter().map(String::as_str));
    header.extend(columns());
    let _ = w.write_record(&header);
    for (i, p) in r.points.iter().enumerate() {
        let t = Totals::from_outcome(&p.totals);
        let mut rec: Vec<String> = vec![p.index.to_string()];
        rec.extend(p.values.iter().cloned());
        rec.extend(metrics::of_view(view::SWEEP_CSV).map(|m| m.csv(m.of_totals(&t))));
        rec.extend([
            u8::from(p.front_savings).to_string(),
            u8::from(p.front_cost).to_string(),
            u8::from(r.recommended == Some(i)).to_string(),
            p.error.clone().unwrap_or_default(),
        ]);
        let _ = w.write_record(&rec);
    }
    w.into_inner().unwrap_or_default()
}

fn pct_or_na(v: Option<f64>) -> String {
    v.map(|x| format!("{:.1}%", shown(x * 100.0, 1))).unwrap_or_else(|| "n/a".into())
}

fn values(r: &SweepResult, p: &Point) -> String {
    r.axes.iter().zip(&p.values).map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// One line describing the recommended point (or why there is none), for stdout.
pub fn recommendation_text(r: &SweepResult) -> String {
    let mut out = String::new();
    match r.recommended.and_then(|i| r.points.get(i)) {
        Some(p) => {
            let t = &p.totals;
            let _ = writeln!(out, "recommended: point {} of {}: {}", p.index, r.points.len(), values(r, p));
            let _ = writeln!(
                out,
                "  savings {:.1}% of billed input, cost ${:.4} → ${:.4} ({:.1}% saved), overflow calls {} → {}, compactions {}, FRR {}",
                shown(t.savings_pct, 1),
                t.cost.baseline_usd(),
                t.cost.policy.usd + t.cost.summarizer_usd,
                shown(t.cost.saved_pct, 1),
                t.overflow_calls_baseline,
                t.overflow_calls_policy,
                t.compactions,
                pct_or_na(p.frr()),
            );
            if let Some(rec) = &r.recommendation {
                let _ = writeln!(out, "  why: {}", rec.reason);
                // The best of the grid may still be worse than what the agent did.
                if t.cost.saved_usd < 0.0 && t.overflow_calls_policy >= t.overflow_calls_baseline {
                    let _ = writeln!(
                        out,
                        "  warning: no point of this grid does better than the agent's own run: this one costs more \
                         (${:.4}) and avoids no call over the window; widen the grid or keep the agent's settings",
                        -t.cost.saved_usd
                    );
                }
                for e in &rec.edges {
                    let _ = writeln!(
                        out,
                        "  note: {} = {} is the {} value of its axis: the best may lie beyond, extend the grid",
                        e.axis, e.value, e.side
                    );
                }
            }
        }
        None => {
            let _ = writeln!(out, "no point qualifies");
        }
    }
    let x = &r.excluded;
    let mut left_out = Vec::new();
    if x.hallucination > 0 {
        left_out.push(format!("{} over the hallucination gate of check (check.max_hallucination)", x.hallucination));
    }
    if x.below_min_frr > 0 {
        left_out.push(format!("{} below --min-frr {}", x.below_min_frr, r.min_frr.unwrap_or_default()));
    }
    if x.invalid > 0 {
        left_out.push(format!("{} whose values make no valid policy", x.invalid));
    }
    if x.failed > 0 {
        left_out.push(format!("{} that failed on a session", x.failed));
    }
    if !left_out.is_empty() {
        let _ = writeln!(out, "  not recommended: {}", left_out.join("; "));
    }
    if !r.window.is_empty() {
        let _ = writeln!(out, "  window: {}", r.window);
    }
    if !r.quality_measured {
        let _ = writeln!(
            out,
            "note: summary quality (FRR) is not measured; the fronts rank savings only{}",
            if r.min_frr.is_some() { " and --min-frr is not applied" } else { "" }
        );
    }
    out
}

/// The short table printed on stdout: the fronts and the recommendation.
pub fn summary_text(r: &SweepResult) -> String {
    let mut out = String::new();
    let ok = r.points.iter().filter(|p| p.ok()).count();
    let _ = writeln!(
        out,
        "{} grid point(s) over {} session(s) ({} ran, {} invalid or failed); axes: {}",
        r.points.len(),
        r.sessions,
        ok,
        r.points.len() - ok,
        r.axes.join(", ")
    );
    let _ = writeln!(
        out,
        "{:>6}  {:>8}  {:>10}  {:>10}  {:>9}  {:>11}  {:>7}  front  values",
        "point", "savings", "cost saved", "cost %", "overflows", "compactions", "FRR"
    );
    // Points with the same figures as one shown are counted, not repeated.
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut same = 0;
    for (i, p) in
        r.points.iter().enumerate().filter(|&(i, p)| p.front_savings || p.front_cost || r.recommended == Some(i))
    {
        let t = &p.totals;
        let figures =
            format!("{:?}", (t.savings_pct, t.cost.saved_usd, t.overflow_calls_policy, t.compactions, p.frr()));
        if !seen.insert(figures) && r.recommended != Some(i) {
            same += 1;
            continue;
        }
        let mark = if r.recommended == Some(i) { "*" } else { " " };
        let _ = writeln!(
            out,
            "{:>5}{}  {:>7.1}%  {:>10}  {:>9.1}%  {:>9}  {:>11}  {:>7}  {:<5}  {}",
            p.index,
            mark,
            shown(t.savings_pct, 1),
            crate::num::usd(t.cost.saved_usd, 4),
            shown(t.cost.saved_pct, 1),
            t.overflow_calls_policy,
            t.compactions,
            pct_or_na(p.frr()),
            front_label(p),
            values(r, p),
        );
    }
    if same > 0 {
        let _ = writeln!(
            out,
            "  … and {same} more point(s) on the fronts with the same figures as one above (sweep.csv has them all)"
        );
    }
    out.push_str(
        "(* recommended; front: on the Pareto front of token savings (tok) or cost savings (cost) against FRR)\n",
    );
    out.push_str(&recommendation_text(r));
    out
}

fn front_label(p: &Point) -> &'static str {
    match (p.front_savings, p.front_cost) {
        (true, true) => "both",
        (true, false) => "tok",
        (false, true) => "cost",
        (false, false) => "",
    }
}

/// `sweep.md`.
pub fn sweep_md(r: &SweepResult) -> String {
    let mut out = String::new();
    out.push_str("# compactor sweep\n\n");
    let _ = writeln!(
        out,
        "{} grid point(s) over {} session(s). Axes: {}.\n",
        r.points.len(),
        r.sessions,
        r.axes.iter().map(|a| format!("`{}`", cell(a))).collect::<Vec<_>>().join(", ")
    );
    out.push_str("## Recommendation\n\n");
    for line in recommendation_text(r).lines() {
        let _ = writeln!(out, "{}  ", cell_line(line));
    }
    if let Some(p) = r.recommended.and_then(|i| r.points.get(i))
        && let Some(policy) = &p.policy
    {
        let _ = writeln!(
            out,
            "\nThe full policy is in `recommended.toml` (`compactor replay --policy recommended.toml`); it is `{}` with:\n",
            cell(&policy.name)
        );
        for (k, v) in r.axes.iter().zip(&p.values) {
            let _ = writeln!(out, "- `{}` = `{}`", cell(k), cell(v));
        }
    }
    out.push_str(
        "\nRanking: among points that ran on every session, pass the hallucination gate of `check` and reach the FRR floor (when quality is measured): fewest calls over the window, then most money saved, then most tokens saved.\n\n",
    );
    out.push_str("## Pareto front\n\n");
    out.push_str(
        "`tok` = on the front of token savings vs FRR, `cost` = of cost savings vs FRR (no other point is at least as good on both and better on one).\n\n",
    );
    let rec = r.recommended.and_then(|i| r.points.get(i)).map(|p| p.index);
    table(&mut out, r, |p| p.front_savings || p.front_cost || Some(p.index) == rec);
    out.push_str("\n## All points\n\n");
    table(&mut out, r, |_| true);
    out
}

/// Markdown cells are built from the same escaping as report.md.
fn cell_line(s: &str) -> String {
    s.replace('|', "\\|").replace('<', "&lt;").replace('>', "&gt;")
}

fn table(out: &mut String, r: &SweepResult, keep: impl Fn(&Point) -> bool) {
    let shown: Vec<_> = metrics::of_view(view::SWEEP_MD).collect();
    out.push_str("| point |");
    for a in &r.axes {
        let _ = write!(out, " {} |", cell(a));
    }
    for m in &shown {
        let _ = write!(out, " {} |", m.compact_label());
    }
    out.push_str(" front |\n|---:|");
    for _ in &r.axes {
        out.push_str("---|");
    }
    out.push_str(&"---:|".repeat(shown.len()));
    out.push_str("---|\n");
    for (i, p) in r.points.iter().enumerate().filter(|(_, p)| keep(p)) {
        let _ = write!(out, "| {}{} |", p.index, if r.recommended == Some(i) { " ★" } else { "" });
        for v in &p.values {
            let _ = write!(out, " {} |", cell(v));
        }
        if let Some(e) = &p.error {
            let _ = writeln!(out, " error: {} |{}", cell(e), " |".repeat(shown.len()));
            continue;
        }
        let t = Totals::from_outcome(&p.totals);
        for m in &shown {
            let _ = write!(out, " {} |", m.cell(&t));
        }
        let _ = writeln!(out, " {} |", front_label(p));
    }
}

/// The recommended policy as TOML (`compactor replay --policy` reads it back).
pub fn recommended_toml(r: &SweepResult) -> Option<String> {
    let p = r.recommended.and_then(|i| r.points.get(i))?;
    let policy = p.policy.as_ref()?;
    let body = policy.to_toml().ok()?;
    let mut out = format!("# Recommended by `compactor sweep`: point {} of {}.\n", p.index, r.points.len());
    for (k, v) in r.axes.iter().zip(&p.values) {
        let _ = writeln!(out, "# {k} = {v}");
    }
    out.push('\n');
    out.push_str(&body);
    Some(out)
}

/// Write sweep.csv, sweep.md, recommended.toml (when a point is recommended) and
/// report.html under `out`, all or none: staged, then put in place (a stop
/// asked for before leaves `out` as it was), an earlier run's other reports
/// removed ([`super::export::run_files`]); returns the paths written.
pub fn write_all(out: &std::path::Path, r: &SweepResult) -> std::io::Result<Vec<std::path::PathBuf>> {
    use crate::output::fsutil::atomic_write;
    let files = super::export::run_files().map(std::path::PathBuf::from);
    let staged = crate::output::stage::Staged::new(out, Vec::new()).owning(files);
    staged.create()?;
    let mut written = Vec::new();
    for e in super::export::SWEEP {
        let Some(bytes) = e.export(r) else { continue };
        atomic_write(&staged.dir().join(e.file_name()), &bytes)?;
        written.push(out.join(e.file_name()));
    }
    staged.commit()?;
    Ok(written)
}
