//! `sessions.csv` (one row per session and policy) and `calls.csv` (one row per
//! session, policy and call), written with the csv crate so quoting of ids and
//! paths from untrusted logs is always right.
//!
//! Text cells are also defused against CSV injection (OWASP): a spreadsheet
//! runs a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return
//! as a formula, and session ids, paths and error texts come from untrusted
//! logs. Such a cell gets a leading `'` (see [`text_cell`]); numeric columns are
//! written as numbers and never touched.

use super::Report;
use crate::pipeline::SessionResults;
use crate::replay::Event;

/// Column names of `sessions.csv`, in order.
pub const SESSION_COLUMNS: &[&str] = &[
    "session_id",
    "source_path",
    "format",
    "parent",
    "policy",
    "messages",
    "calls",
    "calls_with_usage",
    "system_tokens",
    "system_tokens_source",
    "context_window",
    "window_source",
    "input_tokens_baseline",
    "input_tokens_policy",
    "input_tokens_recorded",
    "savings_pct",
    "peak_baseline",
    "peak_policy",
    "overflow_calls_baseline",
    "overflow_calls_policy",
    "compactions",
    "no_progress_compactions",
    "pruned_soft",
    "pruned_hard",
    "pruned_chars_freed",
    "flush_points",
    "summarizer_tokens",
    "net_savings_tokens",
    "violations",
    "cost_family",
    "cost_baseline_usd",
    "cost_policy_usd",
    "cost_saved_usd",
    "cost_saved_pct",
    "sheds_tokens_costs_more",
    "error",
];

pub fn sessions_csv(report: &Report) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Summary-quality columns follow (`report::quality::session_columns`).
    let _ = w.write_record(SESSION_COLUMNS.iter().copied().chain(super::quality::session_columns()));
    for r in &report.sessions {
        let m = &r.metrics;
        let mut rec: Vec<String> = vec![
            text_cell(&r.session_id),
            text_cell(&r.source_path),
            r.format.name().to_string(),
            text_cell(r.parent.as_deref().unwrap_or_default()),
            text_cell(&r.policy),
            r.messages.to_string(),
            m.calls.to_string(),
            m.calls_with_usage.to_string(),
            r.system_tokens.to_string(),
            r.system_tokens_source.clone(),
            r.context_window.to_string(),
            r.window_source.clone(),
            m.input_tokens_baseline.to_string(),
            m.input_tokens_policy.to_string(),
            m.input_tokens_recorded.to_string(),
            format!("{:.2}", m.savings_pct),
            m.peak_baseline.to_string(),
            m.peak_policy.to_string(),
            m.overflow_calls_baseline.to_string(),
            m.overflow_calls_policy.to_string(),
            m.compactions.to_string(),
            m.no_progress_compactions.to_string(),
            m.pruned_soft.to_string(),
            m.pruned_hard.to_string(),
            m.pruned_chars_freed.to_string(),
            m.flush_points.to_string(),
            m.summarizer_tokens.to_string(),
            m.net_savings_tokens.to_string(),
            r.violations.to_string(),
        ];
        // What the session cost under the baseline and the policy (prompt
        // cache included, the summarizer in the policy's); empty unpriced.
        match &r.cost {
            Some(c) => rec.extend([
                text_cell(&c.family),
                format!("{:.6}", c.baseline_usd()),
                format!("{:.6}", c.policy.usd + c.summarizer_usd),
                format!("{:.6}", c.saved_usd),
                format!("{:.2}", c.saved_pct),
                u8::from(c.sheds_tokens_costs_more).to_string(),
            ]),
            None => rec.extend(std::iter::repeat_n(String::new(), 6)),
        }
        rec.push(text_cell(r.error.as_deref().unwrap_or_default()));
        rec.extend(super::quality::session_cells(r.quality.as_ref()));
        let _ = w.write_record(&rec);
    }
    w.into_inner().unwrap_or_default()
}

/// Column names of `calls.csv`, in order.
pub const CALL_COLUMNS: &[&str] = &[
    "session_id",
    "source_path",
    "policy",
    "call",
    "message_index",
    "timestamp_ms",
    "tokens_baseline",
    "tokens_policy",
    "tokens_recorded",
    "pruned_soft",
    "pruned_hard",
    "events",
];

/// `calls.csv` from the traces; `policies` names them in trace order.
pub fn calls_csv(results: &[SessionResults], policies: &[String]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(CALL_COLUMNS);
    for r in results {
        call_rows(&mut w, r, policies);
    }
    w.into_inner().unwrap_or_default()
}

/// The `calls.csv` rows of one session, no header: a streaming replay writes
/// them per session and puts them in report order at the end.
pub fn session_call_rows(r: &SessionResults, policies: &[String]) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    call_rows(&mut w, r, policies);
    w.into_inner().unwrap_or_default()
}

fn call_rows(w: &mut csv::Writer<Vec<u8>>, r: &SessionResults, policies: &[String]) {
    let path = text_cell(&r.source_path.display().to_string());
    let id = text_cell(&r.session_id);
    for (name, trace) in policies.iter().zip(&r.traces) {
        let Ok(t) = trace else { continue };
        let name = text_cell(name);
        for c in &t.calls {
            let events: Vec<&str> = c.events.iter().map(|e| event_name(*e)).collect();
            let rec = [
                id.as_str(),
                path.as_str(),
                name.as_str(),
                &c.call.to_string(),
                &c.message_index.to_string(),
                &c.timestamp.map(|t| t.to_string()).unwrap_or_default(),
                &c.tokens_baseline.to_string(),
                &c.tokens_policy.to_string(),
                &c.tokens_recorded.map(|t| t.to_string()).unwrap_or_default(),
                &c.pruned_soft.to_string(),
                &c.pruned_hard.to_string(),
                &events.join(";"),
            ];
            let _ = w.write_record(rec);
        }
    }
}

/// A text cell a spreadsheet will not run as a formula: a leading `'` when the
/// text starts with `=`, `+`, `-`, `@`, a tab or a carriage return (OWASP "CSV
/// Injection"). Use it for every cell whose text is not a number compactor made.
pub fn text_cell(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{s}") } else { s.to_string() }
}

/// The snake_case name of an event, as in report.json.
pub fn event_name(e: Event) -> &'static str {
    match e {
        Event::Compact => "compact",
        Event::NoProgress => "no_progress",
        Event::PruneSoft => "prune_soft",
        Event::PruneHard => "prune_hard",
        Event::Flush => "flush",
        Event::OverflowBaseline => "overflow_baseline",
        Event::OverflowPolicy => "overflow_policy",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_prefixes_are_defused() {
        for (cell, want) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+1+1", "'+1+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("session-1", "session-1"),
            ("a=b", "a=b"),
            ("", ""),
        ] {
            assert_eq!(text_cell(cell), want, "{cell:?}");
        }
    }
}
