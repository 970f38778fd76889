//! report.html's sections on compactions: the agents' own (a table per agent
//! and version) and, per session, each compaction (the agent's or a policy's)
//! in a `<details>`: its summary, what it lost of what the agent needed next,
//! and where the agent used each lost item first. No JavaScript; every log
//! string escaped by the template.

use super::Report;
use crate::quality::{
    CANDIDATE_POLICY, CANDIDATE_RECORDED, CompactionQuality, LostDetail, REF_EXTRACTIVE_BUDGET, REF_LLM_BUDGET,
    REF_MASKING_BUDGET, REF_ORACLE, RecordedStatus,
};
use maud::{Markup, html};
use std::collections::BTreeMap;

/// Sessions whose compactions are shown one by one; the others are in report.json.
const MAX_SESSIONS: usize = 30;
/// A policy's compactions shown per session.
const MAX_PER_POLICY: usize = 20;

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{:.1}", x * 100.0))
}

/// The section; nothing when no log records a compaction (or no quality pass).
pub fn recorded_section(r: &Report) -> Markup {
    if r.recorded_aggregates.is_empty() {
        return html! {};
    }
    let shown: Vec<_> =
        r.recorded.iter().filter(|q| q.events.iter().any(|e| e.status == RecordedStatus::Scored)).collect();
    // The LLM's column only when the run had one (`--summarizer llm`).
    let llm = r.recorded_aggregates.iter().any(|a| a.candidate(REF_LLM_BUDGET).is_some());
    html! {
        h2 { "The agent's own compactions" } "\n"
        p class="note" {
            "Compactions the logs record, the summary the agent's model wrote (recorded) scored against what the \
             agent needed later, next to compactor's extractive summarizer within the same tokens, observation \
             masking at that budget (and the run's LLM summarizer within the same tokens, with --summarizer llm, over the \
             compactions where it did not fall back) and the oracle, at the same points. FRR and hallucination in %."
        } "\n"
        table {
            tr { th { "agent" } th { "version" } th { "compactions" } th { "scored" } th { "FRR recorded" }
                 th { "FRR extractive@budget" } @if llm { th { "FRR llm@budget" } } th { "FRR masking@budget" } th { "FRR oracle" }
                 th { "hallucination recorded" } th { "summary tokens" } } "\n"
            @for a in &r.recorded_aggregates {
                @let frr = |n: &str| match a.candidate(n) {
                    Some(s) if s.events < a.scored => format!("{} ({} of {})", pct(s.frr_pooled), s.events, a.scored),
                    s => pct(s.and_then(|s| s.frr_pooled)),
                };
                tr {
                    td { (a.agent) } td { (a.version.as_deref().unwrap_or("–")) } td { (a.compactions) } td { (a.scored) }
                    td { (frr(CANDIDATE_RECORDED)) } td { (frr(REF_EXTRACTIVE_BUDGET)) } @if llm { td { (frr(REF_LLM_BUDGET)) } } td { (frr(REF_MASKING_BUDGET)) }
                    td { (frr(REF_ORACLE)) }
                    td { (pct(a.candidate(CANDIDATE_RECORDED).and_then(|s| s.hallucination_rate_mean))) }
                    td { (a.candidate(CANDIDATE_RECORDED).and_then(|s| s.summary_tokens_mean).map_or_else(|| "–".to_string(), |t| format!("{t:.0}"))) }
                } "\n"
            }
        } "\n"
        @if shown.len() > MAX_SESSIONS {
            p class="note" { "Showing the compactions of " (MAX_SESSIONS) " of " (shown.len()) " sessions; all are in report.json." } "\n"
        }
        @for q in shown.iter().take(MAX_SESSIONS) {
            h3 { (q.session_id) } "\n"
            @if let Some(n) = r.sessions.iter().find(|s| s.session_id == q.session_id).and_then(|s| s.name.as_deref()) {
                div class="meta" { b { (n) } } "\n"
            }
            @for e in q.events.iter().filter(|e| e.status == RecordedStatus::Scored) {
                @let row = e.rows.iter().find(|x| x.summarizer == CANDIDATE_RECORDED);
                (compaction(&format!("compaction {} (line {})", e.index, e.source_line), row, e.detail.as_ref()))
            }
        }
    }
}

/// One compaction in a `<details>`: `title`, FRR and counts on its line; the
/// summary's head, the lost items with their first use and what the summary
/// named that the log never did inside.
fn compaction(title: &str, row: Option<&CompactionQuality>, d: Option<&LostDetail>) -> Markup {
    html! {
        details {
            summary {
                (title) ": FRR " (pct(row.and_then(|x| x.frr))) @if row.is_some_and(|x| x.frr.is_some()) { "%" }
                @if let Some(d) = d { ", " (d.needed) " needed, " (d.lost) " not kept in full" }
            }
            @if let Some(d) = d {
                pre { (d.summary_head) @if d.summary_cut { "…" } }
                @if !d.shown.is_empty() {
                    table {
                        tr { th { "held" } th { "kind" } th { "value" } th { "weight" } th { "first used" } th { "there" } } "\n"
                        @for n in &d.shown {
                            tr {
                                td { (format!("{:.0}%", n.held * 100.0)) } td { (n.kind.name()) } td { code { (n.value) } }
                                td { (format!("{:.2}", n.weight)) }
                                td {
                                    @match n.call { Some(c) => { "call " (c) }, None => { "message " (n.message) } }
                                    @if let Some(t) = &n.tool { ", " (t) }
                                }
                                td { (n.excerpt) }
                            } "\n"
                        }
                    }
                    @if (d.shown.len() as u32) < d.lost {
                        p class="note" { "The first " (d.shown.len()) " of " (d.lost) " lost items; lost modified paths and errors first." }
                    }
                }
            }
            @if let Some(r) = row.filter(|r| !r.hallucinated.is_empty()) {
                p { "Named by the summary, found nowhere before it: " code { (r.hallucinated) } }
            }
        } "\n"
    }
}

/// Per session, each policy's compactions: what each summary lost. Nothing
/// without a quality pass or a compaction.
pub fn policy_compactions(r: &Report) -> Markup {
    // Sessions in report order, each with its policies' scored events.
    let mut sessions: BTreeMap<&str, Vec<(&str, &crate::quality::SessionQuality)>> = BTreeMap::new();
    let mut order: Vec<(&str, Option<&str>)> = Vec::new();
    for row in &r.sessions {
        let Some(q) = row.quality.as_ref().filter(|q| !q.events.is_empty()) else { continue };
        let entry = sessions.entry(row.session_id.as_str()).or_default();
        if entry.is_empty() {
            order.push((row.session_id.as_str(), row.name.as_deref()));
        }
        entry.push((row.policy.as_str(), q));
    }
    if order.is_empty() {
        return html! {};
    }
    html! {
        h2 { "What each compaction lost" } "\n"
        p class="note" {
            "Per session and policy, each compaction: the head of its summary and the items the agent needed \
             afterwards that neither the summary nor the kept messages held in full, lost modified paths and errors \
             first, with where the agent used each one first. The full summaries are in the transcripts; "
            code { "compactor explain" } " shows any compaction in full."
        } "\n"
        @if order.len() > MAX_SESSIONS {
            p class="note" { "Showing " (MAX_SESSIONS) " of " (order.len()) " sessions; all are in report.json." } "\n"
        }
        @for (id, name) in order.iter().take(MAX_SESSIONS) {
            h3 { (id) } "\n"
            @if let Some(n) = name { div class="meta" { b { (n) } } "\n" }
            @for (policy, q) in sessions.get(id).map(Vec::as_slice).unwrap_or_default() {
                @for e in q.events.iter().take(MAX_PER_POLICY) {
                    @let row = e.rows.iter().find(|x| x.summarizer == CANDIDATE_POLICY);
                    (compaction(&format!("{policy}, compaction {} (call {})", e.info.event, e.info.call + 1), row, e.detail.as_ref()))
                }
                @if q.events.len() > MAX_PER_POLICY {
                    p class="note" { (policy) ": the first " (MAX_PER_POLICY) " of " (q.events.len()) " compactions." } "\n"
                }
            }
        }
    }
}
