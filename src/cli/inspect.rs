//! `compactor inspect PATH...`: read sessions, build the library's
//! [`InspectReport`], print it as aligned tables (or JSON with `--json`), and send
//! the readers' warnings to stderr as `path:line: reason`.
//!
//! Exit 2 only when nothing could be read at all (no input found, or every input
//! failed); unreadable inputs next to readable ones are reported and skipped.

use super::args::InspectArgs;
use anyhow::Context;
use compactor::accuracy::AccuracyRow;
use compactor::inspect::{Counts, InspectReport, KindStats, SessionReport, inspect_with_progress};
use compactor::model::Format;
use compactor::tokens::EstimatorKind;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Terminal width the human output is laid out for.
const WIDTH: usize = 100;

pub fn run(args: InspectArgs) -> anyhow::Result<u8> {
    let InspectArgs { input, json, sessions } = args;
    let quiet = input.quiet;
    let super::load::Loaded { batch, pool, .. } = super::load::load(input)?;
    let report = pool.install(|| {
        let bar = super::load::progress_bar("inspecting {pos}/{len} sessions", batch.sessions.len() as u64, quiet);
        let report = inspect_with_progress(&batch, &|| bar.inc(1));
        bar.finish_and_clear();
        report
    });

    let out = if json {
        let mut s = serde_json::to_string_pretty(&report).context("cannot serialize the report")?;
        s.push('\n');
        s
    } else {
        render(&for_terminal(&report), sessions)
    };
    super::print_stdout(&out)
}

/// The human report: a table per agent, all sessions together, then the
/// estimator accuracy tables; with `sessions`, one block per session first.
/// Deterministic: sessions in report order, every list sorted.
pub fn render(r: &InspectReport, sessions: bool) -> String {
    let mut out = String::new();
    if sessions {
        for s in &r.sessions {
            render_session(&mut out, s);
            out.push('\n');
        }
    }
    render_by_format(&mut out, r);
    if !sessions {
        out.push_str("(one block per session: --sessions; everything: --json)\n");
    }
    out.push('\n');
    render_totals(&mut out, r);
    out.push('\n');
    render_accuracy(&mut out, &r.accuracy);
    out
}

fn render_session(out: &mut String, s: &SessionReport) {
    let _ = writeln!(out, "session {} ({})", s.id, s.format);
    if let Some(n) = &s.name {
        field(out, "name", n);
    }
    field(out, "source", &s.source_path.display().to_string());
    field(out, "versions", &or_dash(&s.versions.join(", ")));
    field(out, "models", &or_dash(&s.models.join(", ")));
    if let Some(t) = &s.agent_type {
        field(out, "agent type", t);
    }
    if let Some(p) = &s.parent {
        field(out, "parent", p);
    }
    if s.inherited_messages > 0 {
        field(
            out,
            "inherited",
            &format!(
                "{} message(s) and {} compaction(s) copied from the parent: context, not this session's calls",
                num(s.inherited_messages),
                num(s.inherited_compactions)
            ),
        );
    }
    if !s.subagents.is_empty() {
        field(out, "sub-agents", &format!("{}: {}", s.subagents.len(), s.subagents.join(", ")));
    }
    render_counts(out, &s.counts);
    if !s.compactions.is_empty() {
        let items: Vec<String> = s
            .compactions
            .iter()
            .map(|c| {
                let mut t = format!("{} at line {}", snake(&c.kind), c.source_line);
                if let Some(tr) = &c.trigger {
                    let _ = write!(t, " {tr}");
                }
                if let Some(b) = c.tokens_before {
                    let _ = write!(t, " ({} tokens before)", num(b));
                }
                t
            })
            .collect();
        field(out, "compactions", &format!("{}: {}", s.compactions.len(), items.join("; ")));
    }
    render_cleared(out, &s.counts);
    render_context(out, &s.counts.context);
}

/// One row per log format: sessions, calls, messages, the largest recorded
/// prompt and the compactions the logs record.
fn render_by_format(out: &mut String, r: &InspectReport) {
    let mut by: std::collections::BTreeMap<&str, (u64, Counts)> = std::collections::BTreeMap::new();
    for s in &r.sessions {
        let e = by.entry(s.format.name()).or_default();
        e.0 += 1;
        e.1.merge(&s.counts);
    }
    let header = ["agent", "sessions", "calls", "messages", "tool calls", "largest prompt", "compactions"];
    let mut rows: Vec<[String; 7]> = by
        .iter()
        .map(|(f, (n, c))| {
            [
                f.to_string(),
                num(*n),
                num(c.calls),
                num(c.messages),
                num(c.tool_calls),
                if c.usage.max_prompt > 0 { num(c.usage.max_prompt) } else { "–".to_string() },
                num(c.compactions),
            ]
        })
        .collect();
    let t = &r.totals.counts;
    rows.push([
        "all".to_string(),
        num(r.totals.sessions),
        num(t.calls),
        num(t.messages),
        num(t.tool_calls),
        if t.usage.max_prompt > 0 { num(t.usage.max_prompt) } else { "–".to_string() },
        num(t.compactions),
    ]);
    let mut widths = header.map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            let pad = " ".repeat(w.saturating_sub(c.chars().count()));
            if i == 0 { l.push_str(&format!("{c}{pad}")) } else { l.push_str(&format!("  {pad}{c}")) }
        }
        l + "\n"
    };
    out.push_str(&line(&header.map(str::to_string)));
    for r in &rows {
        out.push_str(&line(r));
    }
}

fn render_totals(out: &mut String, r: &InspectReport) {
    let t = &r.totals;
    let formats: Vec<String> = t.sessions_by_format.iter().map(|(f, n)| format!("{f} {n}")).collect();
    let _ = writeln!(
        out,
        "all sessions: {} from {} input(s){}",
        t.sessions,
        t.inputs_read,
        if t.inputs_failed > 0 { format!(", {} input(s) failed", t.inputs_failed) } else { String::new() }
    );
    field(out, "formats", &or_dash(&formats.join(", ")));
    render_counts(out, &t.counts);
    if t.counts.compactions > 0 {
        field(out, "compactions", &num(t.counts.compactions));
    }
    render_cleared(out, &t.counts);
    render_context_top(out, &t.counts.context, CONTEXT_SHOWN);
}

/// What the agent stopped sending while keeping it in its log: tool outputs
/// it cleared, responses it never sent on.
fn render_cleared(out: &mut String, c: &Counts) {
    if c.cleared_outputs > 0 {
        let text = format!(
            "{} tool output(s) the agent stopped sending in full (cleared, masked or trimmed)",
            num(c.cleared_outputs)
        );
        field(out, "cleared", &text);
    }
    if c.unsent_messages > 0 {
        let text = format!(
            "{} response(s) the agent kept but never sent on (aborted or failed turns)",
            num(c.unsent_messages)
        );
        field(out, "never sent", &text);
    }
}

fn render_counts(out: &mut String, c: &Counts) {
    let roles = pairs(c.messages_by_role.iter().map(|(k, v)| (snake(k), *v)));
    let origins = pairs(c.messages_by_origin.iter().map(|(k, v)| (snake(k), *v)));
    field(out, "messages", &format!("{}: {roles} | {origins}", num(c.messages)));
    let shared = match c.calls_with_shared_usage {
        0 => String::new(),
        n => format!(", {} shared from a total over several requests", num(n)),
    };
    field(out, "calls", &format!("{} ({} with usage{shared})", num(c.calls), num(c.calls_with_usage)));
    let mut tools: Vec<(&String, &u64)> = c.tool_calls_by_tool.iter().collect();
    // Most used first; the name breaks ties so the order is stable.
    tools.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut tc = num(c.tool_calls);
    if !tools.is_empty() {
        let _ = write!(tc, ": {}", pairs(tools.into_iter().map(|(k, v)| (k.clone(), *v))));
    }
    field(out, "tool calls", &tc);
    field(out, "tool results", &format!("{} ({} flagged as errors)", num(c.tool_results), num(c.tool_errors)));
    let u = &c.usage;
    if c.calls_with_usage > 0 {
        field(
            out,
            "usage",
            &format!(
                "uncached input {}, cache read {}, cache write {}, output {}, reasoning {}, max prompt {}",
                num(u.uncached_input),
                num(u.cache_read),
                num(u.cache_write),
                num(u.output),
                num(u.reasoning),
                num(u.max_prompt)
            ),
        );
    }
    let t = &c.tokens;
    field(
        out,
        "est. tokens",
        &format!(
            "chars4 {}, per_block {}, o200k {}, cl100k {} (all messages)",
            num(t.chars4),
            num(t.per_block),
            num(t.o200k),
            num(t.cl100k)
        ),
    );
    if !c.api_errors.is_empty() {
        field(out, "api errors", &pairs(c.api_errors.iter().map(|(k, v)| (snake(k), *v))));
    }
    let d = &c.diagnostics;
    field(out, "diagnostics", &format!("{} bad lines, {} warnings", num(d.bad_lines), num(d.warnings)));
    if !d.unknown_kinds.is_empty() {
        field(out, "unknown kinds", &pairs(d.unknown_kinds.iter().map(|(k, v)| (k.clone(), *v))));
    }
    if !d.skipped_kinds.is_empty() {
        // Known and left out on purpose: the most frequent, the rest counted.
        let mut kinds: Vec<(&String, &u64)> = d.skipped_kinds.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let more = kinds.len().saturating_sub(SKIPPED_SHOWN);
        let mut text = pairs(kinds.into_iter().take(SKIPPED_SHOWN).map(|(k, v)| (k.clone(), *v)));
        if more > 0 {
            let _ = write!(text, ", and {more} more (--json lists them)");
        }
        field(out, "skipped kinds", &text);
    }
    if !d.sent_otherwise.is_empty() {
        field(out, "sent as", &pairs(d.sent_otherwise.iter().map(|(k, v)| (k.clone(), *v))));
    }
}

/// Skipped record kinds a block lists, most frequent first.
const SKIPPED_SHOWN: usize = 16;

/// "Where the context goes": block kinds by o200k tokens, largest first.
/// Block kinds the table of all sessions lists; the rest are summed in one row.
const CONTEXT_SHOWN: usize = 12;

fn render_context(out: &mut String, context: &std::collections::BTreeMap<String, KindStats>) {
    render_context_top(out, context, usize::MAX);
}

fn render_context_top(out: &mut String, context: &std::collections::BTreeMap<String, KindStats>, shown: usize) {
    if context.is_empty() {
        return;
    }
    let total: u64 = context.values().map(|k| k.o200k).sum();
    let mut kinds: Vec<(&String, &KindStats)> = context.iter().collect();
    kinds.sort_by(|a, b| b.1.o200k.cmp(&a.1.o200k).then(b.1.bytes.cmp(&a.1.bytes)).then(a.0.cmp(b.0)));
    let mut rows = vec![row(["context by block kind", "blocks", "bytes", "chars4", "o200k", "share"])];
    let mut sum = KindStats::default();
    let mut rest = (0usize, KindStats::default());
    for (i, (k, s)) in kinds.into_iter().enumerate() {
        sum.blocks += s.blocks;
        sum.bytes += s.bytes;
        sum.chars4 += s.chars4;
        sum.o200k += s.o200k;
        if i >= shown {
            rest.0 += 1;
            rest.1.blocks += s.blocks;
            rest.1.bytes += s.bytes;
            rest.1.chars4 += s.chars4;
            rest.1.o200k += s.o200k;
            continue;
        }
        rows.push(vec![
            truncate(k, 40),
            num(s.blocks),
            num(s.bytes),
            num(s.chars4),
            num(s.o200k),
            share(s.o200k, total),
        ]);
    }
    if rest.0 > 0 {
        let r = rest.1;
        let label = format!("{} more kinds", rest.0);
        rows.push(vec![label, num(r.blocks), num(r.bytes), num(r.chars4), num(r.o200k), share(r.o200k, total)]);
    }
    rows.push(vec![
        "total".to_string(),
        num(sum.blocks),
        num(sum.bytes),
        num(sum.chars4),
        num(sum.o200k),
        share(sum.o200k, total),
    ]);
    table(out, "  ", &rows, &[false, true, true, true, true, true]);
}

fn render_accuracy(out: &mut String, rows: &[AccuracyRow]) {
    let _ =
        writeln!(out, "estimator accuracy: |estimate - recorded prompt| / recorded, over calls with recorded usage");
    if rows.iter().all(|r| r.calls == 0) {
        let _ = writeln!(out, "  no call with recorded usage");
        return;
    }
    let _ = writeln!(
        out,
        "  \"raw\" counts the logged messages only; \"+offset\" adds a system-prompt offset calibrated on\n  \
         each session's first call (recorded - estimate, floored at 0; that call is left out)."
    );
    // Formats in order, the all-formats row last.
    let mut formats: Vec<Option<Format>> = Vec::new();
    for r in rows {
        if !formats.contains(&r.format) {
            formats.push(r.format);
        }
    }
    formats.sort_by_key(|f| (f.is_none(), *f));
    let kinds: Vec<EstimatorKind> =
        EstimatorKind::ALL.into_iter().filter(|k| rows.iter().any(|r| r.estimator == *k)).collect();
    let find = |k: EstimatorKind, f: Option<Format>| rows.iter().find(|r| r.estimator == k && r.format == f);
    type Cell = fn(&AccuracyRow) -> (u64, String);
    let views: [(&str, Cell); 3] = [
        ("raw: median p90", |r| (r.calls, format!("{:>6} {:>6}", pct(r.median), pct(r.p90)))),
        ("+offset: median p90", |r| (r.calls_offset, format!("{:>6} {:>6}", pct(r.median_offset), pct(r.p90_offset)))),
        ("bias: median signed error", |r| (r.calls, pct(r.median_signed))),
    ];
    for (title, cell) in views {
        let _ = writeln!(out, "  {title}");
        let mut header = vec!["format".to_string(), "calls".to_string()];
        header.extend(kinds.iter().map(|k| k.name().to_string()));
        let mut table_rows = vec![header];
        for f in &formats {
            let mut line = vec![f.map_or("all".to_string(), |f| f.name().to_string()), String::new()];
            for k in &kinds {
                match find(*k, *f) {
                    Some(r) => {
                        let (n, c) = cell(r);
                        line[1] = num(n);
                        line.push(c);
                    }
                    None => line.push("-".to_string()),
                }
            }
            table_rows.push(line);
        }
        let mut right = vec![false, true];
        right.extend(kinds.iter().map(|_| true));
        table(out, "    ", &table_rows, &right);
    }
}

/// `  label        value`, the value wrapped at [`WIDTH`] on `, ` boundaries.
fn field(out: &mut String, label: &str, value: &str) {
    const INDENT: usize = 16;
    let mut line = format!("  {label:<width$} ", width = INDENT - 3);
    let mut col = line.len();
    let mut first = true;
    for (i, part) in value.split(", ").enumerate() {
        let piece = if i == 0 { part.to_string() } else { format!(", {part}") };
        // Keep one column for the comma a wrap leaves at the end of the line.
        if !first && col + piece.len() + 1 > WIDTH {
            line.push_str(",\n");
            line.push_str(&" ".repeat(INDENT));
            col = INDENT;
            let rest = piece.trim_start_matches(", ");
            line.push_str(rest);
            col += rest.len();
        } else {
            line.push_str(&piece);
            col += piece.len();
        }
        first = false;
    }
    out.push_str(&line);
    out.push('\n');
}

fn row<const N: usize>(cells: [&str; N]) -> Vec<String> {
    cells.iter().map(|s| s.to_string()).collect()
}

/// Print rows as columns padded to their widest cell, two spaces apart.
fn table(out: &mut String, indent: &str, rows: &[Vec<String>], right: &[bool]) {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..cols).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect();
    for r in rows {
        let mut line = indent.to_string();
        for (c, cell) in r.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = widths[c].saturating_sub(cell.chars().count());
            if right.get(c).copied().unwrap_or(false) {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

fn pairs(items: impl Iterator<Item = (String, u64)>) -> String {
    let v: Vec<String> = items.map(|(k, n)| format!("{k} {}", num(n))).collect();
    if v.is_empty() { "-".to_string() } else { v.join(", ") }
}

/// The serde name of an enum value (`tool_result`, `context_overflow`).
fn snake<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".to_string(),
    }
}

/// Longest value taken from a log (id, model, tool or kind name) the human report
/// shows; `--json` keeps it whole.
const MAX_SHOWN: usize = 200;

/// Text from a log or a file name, made safe for a terminal: control characters
/// (an ESC sequence in a tool name or a file name could rewrite the screen or the
/// window title; a newline could forge report lines) and bidi controls are shown
/// as `\u{…}` escapes, and a value longer than `max` chars is cut.
pub(super) fn clean(s: &str, max: usize) -> String {
    let unsafe_char = |c: char| {
        c.is_control() || matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(unsafe_char) && s.len() <= max {
        return s.to_string();
    }
    let long = s.chars().nth(max).is_some();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if long && i + 1 >= max {
            out.push('…');
            break;
        }
        if unsafe_char(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// The report with every log-derived string passed through [`clean`], for the
/// human renderer.
fn for_terminal(r: &InspectReport) -> InspectReport {
    let c = |s: &String| clean(s, MAX_SHOWN);
    let keys = |m: &std::collections::BTreeMap<String, u64>| -> std::collections::BTreeMap<String, u64> {
        m.iter().map(|(k, v)| (c(k), *v)).collect()
    };
    let counts = |k: &Counts| {
        let mut k = k.clone();
        k.tool_calls_by_tool = keys(&k.tool_calls_by_tool);
        k.diagnostics.unknown_kinds = keys(&k.diagnostics.unknown_kinds);
        k.diagnostics.skipped_kinds = keys(&k.diagnostics.skipped_kinds);
        k.context = k.context.iter().map(|(key, v)| (c(key), *v)).collect();
        k
    };
    let mut out = r.clone();
    for s in &mut out.sessions {
        s.id = c(&s.id);
        s.name = s.name.as_ref().map(c);
        s.source_path = PathBuf::from(clean(&s.source_path.display().to_string(), usize::MAX));
        s.versions = s.versions.iter().map(c).collect();
        s.models = s.models.iter().map(c).collect();
        s.agent_type = s.agent_type.as_ref().map(c);
        s.parent = s.parent.as_ref().map(c);
        s.subagents = s.subagents.iter().map(c).collect();
        s.counts = counts(&s.counts);
        for comp in &mut s.compactions {
            comp.trigger = comp.trigger.as_ref().map(c);
        }
    }
    out.totals.counts = counts(&out.totals.counts);
    out
}

fn or_dash(s: &str) -> String {
    if s.is_empty() { "-".to_string() } else { s.to_string() }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max - 1).collect();
    t.push('…');
    t
}

/// 1234567 → "1,234,567".
fn num(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn share(part: u64, total: u64) -> String {
    if total == 0 { "-".to_string() } else { format!("{:.1}%", part as f64 * 100.0 / total as f64) }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |x| format!("{:.1}%", x * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(num(0), "0");
        assert_eq!(num(999), "999");
        assert_eq!(num(1000), "1,000");
        assert_eq!(num(1234567), "1,234,567");
        assert_eq!(pct(Some(0.3167)), "31.7%");
        assert_eq!(pct(None), "-");
        assert_eq!(share(1, 3), "33.3%");
        assert_eq!(truncate("abcdef", 4), "abc…");
    }

    #[test]
    fn log_text_is_made_safe_for_a_terminal() {
        assert_eq!(clean("Bash", MAX_SHOWN), "Bash");
        assert_eq!(clean("é🦀中", MAX_SHOWN), "é🦀中");
        assert_eq!(clean("a\u{1b}]0;pwned\u{7}b", MAX_SHOWN), "a\\u{1b}]0;pwned\\u{7}b");
        assert_eq!(clean("x\ny\r", MAX_SHOWN), "x\\u{a}y\\u{d}");
        assert_eq!(clean("\u{202E}txt.exe", MAX_SHOWN), "\\u{202e}txt.exe");
        assert_eq!(clean(&"m".repeat(500), 10), format!("{}…", "m".repeat(9)));
        assert_eq!(clean(&"m".repeat(10), 10), "m".repeat(10));
    }

    /// A hand-built batch: two sessions of different formats, with usage, a
    /// compaction, sub-agents, API errors and diagnostics.
    fn report() -> InspectReport {
        use compactor::model::*;
        use serde_json::json;
        let usage = |prompt: u64, output: u64| Usage {
            uncached_input: 3,
            cache_read: prompt - 3,
            cache_write: 0,
            output,
            reasoning: 0,
            provenance: UsageProvenance::Anthropic,
        };
        let call = |i: usize, u: Option<Usage>| Call {
            message_index: i,
            model: None,
            usage: u,
            timestamp: None,
            response_id: None,
            fast: false,
        };
        let mut a = Session::new("main-session", Format::ClaudeCode, "/logs/a.jsonl");
        a.meta.add_version("2.0.28");
        a.meta.add_model("claude-sonnet-4-5");
        a.subagents = vec!["main-session#agent-1".into()];
        let mut msgs = vec![Message::new(Role::User, Origin::Human, vec![Block::text("Please refactor the parser.")])];
        for i in 0..12 {
            let id = format!("t{i}");
            let tool = ["Read", "Bash", "Edit", "Grep"][i % 4];
            msgs.push(Message::new(
                Role::Assistant,
                Origin::Model,
                vec![Block::ToolUse { id: id.clone(), name: tool.into(), input: json!({"arg": "x".repeat(i * 10)}) }],
            ));
            msgs.push(Message::new(
                Role::User,
                Origin::ToolResult,
                vec![Block::ToolResult {
                    tool_use_id: id,
                    content: vec![Block::text("line of output\n".repeat(i * 5 + 1))],
                    is_error: Some(i == 3),
                }],
            ));
        }
        msgs.push(Message::new(Role::User, Origin::CompactSummary, vec![Block::text("Summary: parser refactored.")]));
        msgs.push(Message::new(Role::Assistant, Origin::Model, vec![Block::text("Done.")]));
        a.messages = msgs;
        a.calls = (0..12).map(|i| call(1 + 2 * i, Some(usage(3000 + 250 * i as u64, 40)))).collect();
        a.calls.push(call(26, Some(usage(900, 10))));
        a.recorded_compactions = vec![RecordedCompaction {
            kind: CompactionKind::ClaudeBoundary,
            source_line: 40,
            inserted: 25..26,
            kept: 0..1,
            head: 0..0,
            tokens_before: Some(6100),
            trigger: Some("auto".into()),
        }];
        a.errors = vec![RecordedError { source_line: 12, kind: ApiErrorKind::RateLimit, message: "429".into() }];
        a.diagnostics.unknown("atis-latch", 3, "{}");
        a.diagnostics.skip("file-history-snapshot");
        let mut b = Session::new("rollout-1", Format::Codex, "/logs/b.jsonl");
        b.messages = vec![
            Message::new(
                Role::User,
                Origin::Injected,
                vec![Block::text("<environment_context>cwd=/repo</environment_context>")],
            ),
            Message::new(Role::User, Origin::Human, vec![Block::text("list files")]),
            Message::new(
                Role::Assistant,
                Origin::Model,
                vec![
                    Block::Thinking { text: String::new(), opaque_len: 1200 },
                    Block::ToolUse { id: "c1".into(), name: "shell".into(), input: json!({"command": ["ls"]}) },
                ],
            ),
            Message::new(
                Role::User,
                Origin::ToolResult,
                vec![Block::ToolResult {
                    tool_use_id: "c1".into(),
                    content: vec![Block::text("a.rs\nb.rs\n")],
                    is_error: None,
                }],
            ),
            Message::new(Role::Assistant, Origin::Model, vec![Block::text("Two files: a.rs and b.rs.")]),
        ];
        b.calls = vec![call(2, Some(usage(2500, 30))), call(4, Some(usage(2560, 12)))];
        let batch = compactor::read::Batch { sessions: vec![a, b], failures: vec![], inputs_read: 2 };
        compactor::inspect::inspect(&batch)
    }

    #[test]
    fn human_output() {
        let out = render(&report(), true);
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        // Same input, same bytes.
        assert_eq!(out, render(&report(), true));
        insta::assert_snapshot!(out);
    }

    #[test]
    fn fields_wrap_at_width() {
        let mut out = String::new();
        let value: Vec<String> = (0..40).map(|i| format!("tool{i} {i}")).collect();
        field(&mut out, "tool calls", &value.join(", "));
        assert!(out.lines().count() > 1);
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(out.lines().skip(1).all(|l| l.starts_with(&" ".repeat(16))));
    }
}
