//! `compactor check`'s markdown: the verdict, one table (baseline against now,
//! per metric and preset) and the regressions in detail, fit for
//! `$GITHUB_STEP_SUMMARY`.

use super::markdown::cell;
use crate::check::{Outcome, Rule, Status};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The markdown report: a verdict line, one table (baseline vs now, per metric,
/// per preset) and the regressions in detail. Fit for `$GITHUB_STEP_SUMMARY`.
pub fn markdown(outcome: &Outcome) -> String {
    markdown_rows(outcome, true)
}

/// What `check` prints and writes (check.md, `--summary`): [`markdown_rows`]
/// and where the baseline was written.
pub fn document(run: &super::export::CheckRun<'_>, all: bool) -> String {
    let mut text = markdown_rows(run.outcome, all);
    if let Some(path) = run.baseline_written {
        text.push_str(&format!("\nBaseline written to `{}`.\n", path.display()));
    }
    text
}

/// [`markdown`] with the table's informational rows (no rule: the reference
/// points, counts) only when `all`; the verdict and every gated row always.
pub fn markdown_rows(outcome: &Outcome, all: bool) -> String {
    let mut out = String::new();
    if outcome.regressed() {
        let _ = writeln!(out, "## compactor check: {} regression(s)\n", outcome.failures.len());
    } else {
        out.push_str("## compactor check: no regression\n\n");
    }
    out.push_str("| preset | metric | baseline | now | change | rule | result |\n");
    out.push_str("|---|---|---:|---:|---:|---|---|\n");
    let hidden = outcome.lines.iter().filter(|l| !all && l.status == Status::Info).count();
    for l in outcome.lines.iter().filter(|l| all || l.status != Status::Info) {
        let status = match l.status {
            Status::Ok => "ok",
            Status::Regression => "**REGRESSION**",
            Status::Info => "",
            Status::New => "new",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            cell(&l.policy),
            l.metric,
            l.baseline,
            l.now,
            l.change,
            l.rule,
            status
        );
    }
    out.push('\n');
    if hidden > 0 {
        let _ = writeln!(out, "{hidden} row(s) without a rule not shown (`-v` shows them; check.md has them all).\n");
    }
    out.push_str(
        "FRR = weighted share of what the agent needed after each compaction that its summary kept \
(points, pooled over events); the truncate / masking / oracle rows are the reference points at the same \
compaction points.\n",
    );
    if !outcome.failures.is_empty() {
        out.push_str("\n### Regressions\n\n");
        let mut by: BTreeMap<(&str, Rule), Vec<&str>> = BTreeMap::new();
        for f in &outcome.failures {
            by.entry((f.policy.as_str(), f.rule)).or_default().push(&f.detail);
        }
        for ((policy, rule), details) in by {
            let _ = writeln!(out, "- `{}` {}: {}", cell(policy), rule.name(), cell_long(&details.join("; ")));
        }
    }
    if !outcome.notes.is_empty() {
        out.push_str("\n### Notes\n\n");
        for n in &outcome.notes {
            let _ = writeln!(out, "- {}", cell_long(n));
        }
    }
    out
}

/// Like [`cell`] but with a longer bound, for the detail lists (session ids and
/// paths come from untrusted logs).
fn cell_long(s: &str) -> String {
    let bounded: String = s.chars().take(2_000).collect();
    let mut out = String::with_capacity(bounded.len());
    for c in bounded.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    if s.chars().count() > 2_000 {
        out.push('…');
    }
    out
}
