//! `report.md` (the human report, also fit for a CI step summary) and the short
//! summary printed on stdout after a replay.

use super::{Aggregate, Report};
use crate::metrics::{self, Totals, view};
pub use crate::num::{signed, thousands};
use std::fmt::Write as _;

/// Longest diagnostic report.md lists (a path and a sentence fit).
const DIAGNOSTIC_CHARS: usize = 1000;

/// A table cell from untrusted text: no pipes, no newlines, no HTML, bounded.
pub fn cell(s: &str) -> String {
    inline(s, 80)
}

/// A session's cell: its name (project and title) where the log has one, then
/// its id, both inert.
fn session_cell(id: &str, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("{} ({})", cell(n), cell(id)),
        None => cell(id),
    }
}

/// Untrusted text made inert in markdown (as [`cell`]), at most `max` characters.
fn inline(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    for c in s.chars().take(max) {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '`' => out.push('\''),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    if s.chars().count() > max {
        out.push('…');
    }
    out
}

fn aggregate_table(out: &mut String, aggs: &[Aggregate]) {
    let shown: Vec<_> = metrics::of_view(view::REPLAY).collect();
    out.push_str("| policy |");
    for m in &shown {
        let _ = write!(out, " {} |", m.compact_label());
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(shown.len()));
    out.push('\n');
    for a in aggs {
        let t = Totals::from_aggregate(a, None);
        let _ = write!(out, "| {} |", cell(&a.policy));
        for m in &shown {
            let _ = write!(out, " {} |", m.cell(&t));
        }
        out.push('\n');
    }
}

/// The whole `report.md`.
pub fn report_md(report: &Report) -> String {
    let mut out = String::new();
    out.push_str("# compactor replay report\n\n");
    let _ = writeln!(
        out,
        "{} session(s) from {} input(s), {} polic{}: {}.\n",
        report.run.sessions,
        report.run.inputs_read,
        report.policies.len(),
        if report.policies.len() == 1 { "y" } else { "ies" },
        report.policies.iter().map(|p| format!("`{}`", cell(&p.name))).collect::<Vec<_>>().join(", ")
    );
    if let Some(notice) = report.diagnostics.llm_summaries.as_ref().and_then(super::LlmSummaries::notice) {
        // Up front: the summaries (and the quality measured on them) are not
        // the LLM's.
        let _ = writeln!(out, "> **Warning:** {}\n", inline(&notice, 800));
    }
    if let Some(notice) = report.diagnostics.command_summaries.as_ref().and_then(|c| c.notice()) {
        let _ = writeln!(out, "> **Warning:** {}\n", inline(&notice, 800));
    }
    out.push_str(
        "Billed input = Σ over calls of the request size (each call re-sends its context). \
Baseline = what the agent sent (following its own recorded compactions); policy = what the \
policy would have sent. ",
    );
    let _ = writeln!(
        out,
        "{} The baseline and every policy are measured alike; a policy's `estimator` only decides when it \
prunes and compacts.\n",
        report.run.meter.sentence()
    );
    windows_note(&mut out, report);
    for w in super::trigger_above_window(report) {
        let trigger = format!("{} tokens", thousands(w.trigger));
        let _ = writeln!(out, "**Warning:** {}.\n", w.sentence(&cell(&w.policy), &trigger, &thousands(w.window)));
    }
    if let Some(note) = super::terminal::fallback_note(report) {
        let _ = writeln!(out, "**Warning:** {}.\n", inline(&note, 800));
    }
    if let Some(note) = super::terminal::agent_model_note(report) {
        let _ = writeln!(out, "Note: {}.\n", inline(&note, 800));
    }
    let (fast, standard) = super::terminal::fast_notes(report);
    if let Some(note) = standard {
        let _ = writeln!(out, "**Warning:** {}.\n", inline(&note, 800));
    }
    if let Some(note) = fast {
        let _ = writeln!(out, "Note: {}.\n", inline(&note, 800));
    }
    let (off_peak, untimed) = super::terminal::off_peak_notes(report);
    if let Some(note) = untimed {
        let _ = writeln!(out, "**Warning:** {}.\n", inline(&note, 800));
    }
    if let Some(note) = off_peak {
        let _ = writeln!(out, "Note: {}.\n", inline(&note, 800));
    }
    if let Some(note) = super::terminal::agent_summaries_note(report) {
        let _ = writeln!(out, "Note: {}.\n", inline(&note, 800));
    }
    out.push_str("## Totals per policy\n\n");
    aggregate_table(&mut out, &report.aggregates);
    out.push('\n');
    if report.policies.len() > 1 {
        out.push_str("## Side by side\n\n");
        let quality = super::quality::policy_scores(report);
        out.push_str(&super::compare::compare_md(&super::compare::columns(report, &quality)));
        out.push('\n');
    }
    out.push_str(&super::compare::cost_md(report));
    super::quality::markdown_section(&mut out, report);
    super::quality::recorded_section(&mut out, report);
    out.push_str("## Policies\n\n");
    out.push_str("| policy | window | estimator | compacts at | summarizer | source |\n|---|---:|---|---:|---|---|\n");
    for p in &report.policies {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            cell(&p.name),
            if p.window_is_auto() { "auto".to_string() } else { thousands(p.context_window) },
            p.estimator,
            compacts_at(p),
            p.compact.summarizer.name(),
            cell(&p.source)
        );
    }
    out.push('\n');
    out.push_str("## Sessions\n\n");
    out.push_str(
        "| session | format | policy | calls | baseline | policy | savings | peak (baseline → policy) | overflow calls | compactions | pruned |\n",
    );
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in &report.sessions {
        let m = &r.metrics;
        if let Some(e) = &r.error {
            let _ = writeln!(
                out,
                "| {} | {} | {} | error: {} | | | | | | | |",
                session_cell(&r.session_id, r.name.as_deref()),
                r.format,
                cell(&r.policy),
                cell(e)
            );
            continue;
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {:.1}% | {} → {} | {} → {} | {}{} | {} |",
            session_cell(&r.session_id, r.name.as_deref()),
            r.format,
            cell(&r.policy),
            m.calls,
            thousands(m.input_tokens_baseline),
            thousands(m.input_tokens_policy),
            crate::num::shown(m.savings_pct, 1),
            thousands(m.peak_baseline),
            thousands(m.peak_policy),
            m.overflow_calls_baseline,
            m.overflow_calls_policy,
            m.compactions,
            if m.no_progress_compactions > 0 {
                format!(" ({} no-progress)", m.no_progress_compactions)
            } else {
                String::new()
            },
            m.pruned_soft + m.pruned_hard,
        );
    }
    out.push('\n');
    let d = &report.diagnostics;
    if !d.failed_inputs.is_empty() || !d.warnings.is_empty() {
        out.push_str("## Diagnostics\n\n");
        let _ = writeln!(out, "{} malformed line(s) skipped.\n", d.bad_lines);
        // List items, not cells: a diagnostic is read whole (bounded all the same).
        for f in &d.failed_inputs {
            let _ = writeln!(out, "- unreadable: {}", inline(&f.to_string(), DIAGNOSTIC_CHARS));
        }
        for w in d.warnings.iter().take(50) {
            let _ = writeln!(out, "- {}", inline(w, DIAGNOSTIC_CHARS));
        }
        if d.warnings.len() > 50 {
            let _ = writeln!(out, "- … and {} more (see report.json)", d.warnings.len() - 50);
        }
    }
    out
}

/// Where the windows of `auto` policies came from, in one sentence.
/// When a policy compacts: the point itself for a fixed window, with its rule
/// when that is relative to it; the rule alone for each session's own window.
fn compacts_at(p: &crate::policy::Policy) -> String {
    let words = p.trigger_words();
    if p.window_is_auto() || !p.compact.enabled {
        return words;
    }
    match p.compact.trigger {
        crate::policy::TriggerKind::Tokens => words,
        _ => format!("{} ({words})", thousands(p.trigger_point())),
    }
}

fn windows_note(out: &mut String, report: &Report) {
    let sources = super::window_sources(report);
    if sources.is_empty() {
        return;
    }
    let words = |s: &str| match s {
        "log" => "from the log's own record",
        "model" => "from their model (window table)",
        "long_context" => "1M: a Claude model whose recorded prompt went past 200K",
        "agent" => "from their agent's default model (the log names none)",
        "default" => "assumed 200K (no record, model unknown)",
        _ => "fixed",
    };
    let parts: Vec<String> = sources.iter().map(|(s, n)| format!("{n} session(s) {}", words(s))).collect();
    let _ = writeln!(out, "Context windows (`auto`): {}.\n", parts.join(", "));
}

/// What the printed summary of `compare` starts with: how many
/// sessions, the meter, where the windows came from, and policies that could
/// not compact.
pub fn run_header(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} session(s) replayed under {} policy(ies)",
        thousands(report.run.sessions as u64),
        report.policies.len()
    );
    let m = &report.run.meter;
    let _ = writeln!(
        out,
        "meter: {} ({} call(s) measured from recorded usage, {} estimated)",
        m.name,
        thousands(m.calls_recorded),
        thousands(m.calls_estimated)
    );
    let sources = super::window_sources(report);
    if !sources.is_empty() {
        let parts: Vec<String> = sources.iter().map(|(s, n)| format!("{n} {s}")).collect();
        let _ = writeln!(out, "context windows (auto) by source: {}", parts.join(", "));
    }
    out.push_str(&super::terminal::warnings(report));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_and_cells() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(signed(-1234), "-1,234");
        assert_eq!(cell("a|b\n<script>"), "a\\|b &lt;script&gt;");
    }

    /// Where a policy compacts: never "0" for each session's own window.
    #[test]
    fn the_policies_table_says_where_each_compacts() {
        let at = |name: &str, sets: &[&str]| {
            let mut p = crate::presets::require(name).unwrap_or_else(|e| panic!("{e}"));
            for kv in sets {
                p.apply_assignment(kv).unwrap_or_else(|e| panic!("{e}"));
            }
            compacts_at(&p)
        };
        assert_eq!(at("default", &[]), "70% of window");
        assert_eq!(at("default", &["context_window=32000"]), "22,400 (70% of window)");
        assert_eq!(at("nous", &["context_window=32000"]), "100,000 tokens");
        assert_eq!(at("pi", &[]), "window − 16,384");
        assert_eq!(at("pi", &["context_window=32000"]), "15,616 (window − 16,384)");
        assert_eq!(at("anthropic-clear-tool-uses", &["context_window=32000"]), "never (prunes only)");
    }

    /// `compare`'s header groups its counts as the replay summary does.
    #[test]
    fn the_compare_header_groups_its_counts() {
        use crate::pipeline::results::{MeterInfo, RunInfo, ToolInfo};
        let report = Report {
            schema_version: crate::pipeline::results::SCHEMA_VERSION,
            tool: ToolInfo { name: "compactor".into(), version: "0".into() },
            run: RunInfo {
                inputs: Vec::new(),
                inputs_read: 1,
                sessions: 1234,
                check_invariants: false,
                meter: MeterInfo { calls_recorded: 12345, calls_estimated: 1000, ..MeterInfo::default() },
            },
            policies: Vec::new(),
            sessions: Vec::new(),
            aggregates: Vec::new(),
            diagnostics: Default::default(),
            cost_model: None,
            recorded: Vec::new(),
            recorded_aggregates: Vec::new(),
        };
        let head = run_header(&report);
        assert!(head.starts_with("1,234 session(s) replayed under 0 policy(ies)\n"), "{head}");
        assert!(head.contains("(12,345 call(s) measured from recorded usage, 1,000 estimated)"), "{head}");
    }
}
