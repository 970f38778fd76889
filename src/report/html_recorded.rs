//! report.html's section on the agents' own compactions: the table per agent
//! and version, then per session each scored compaction in a `<details>`: its
//! summary, what it kept and lost of what the agent needed next, and where the
//! agent used each lost item first. No JavaScript; every log string escaped by
//! the template.

use super::Report;
use crate::quality::{CANDIDATE_RECORDED, REF_EXTRACTIVE_BUDGET, REF_MASKING_BUDGET, REF_ORACLE, RecordedStatus};
use maud::{Markup, html};

/// Sessions whose compactions are shown one by one; the others are in report.json.
const MAX_SESSIONS: usize = 30;
/// Summary characters shown per compaction.
const SUMMARY_CHARS: usize = 6_000;

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
    html! {
        h2 { "The agent's own compactions" } "\n"
        p class="note" {
            "Compactions the logs record, the summary the agent's model wrote (recorded) scored against what the \
             agent needed later, next to compactor's extractive summarizer within the same tokens, observation \
             masking at that budget and the oracle, at the same points. FRR and hallucination in %."
        } "\n"
        table {
            tr { th { "agent" } th { "version" } th { "compactions" } th { "scored" } th { "FRR recorded" }
                 th { "FRR extractive@budget" } th { "FRR masking@budget" } th { "FRR oracle" }
                 th { "hallucination recorded" } th { "summary tokens" } } "\n"
            @for a in &r.recorded_aggregates {
                @let frr = |n: &str| pct(a.candidate(n).and_then(|s| s.frr_pooled));
                tr {
                    td { (a.agent) } td { (a.version.as_deref().unwrap_or("–")) } td { (a.compactions) } td { (a.scored) }
                    td { (frr(CANDIDATE_RECORDED)) } td { (frr(REF_EXTRACTIVE_BUDGET)) } td { (frr(REF_MASKING_BUDGET)) }
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
            @for e in q.events.iter().filter(|e| e.status == RecordedStatus::Scored) {
                @let row = e.rows.iter().find(|x| x.summarizer == CANDIDATE_RECORDED);
                @let needed = e.audit.as_ref().map(|a| a.needed.as_slice()).unwrap_or_default();
                @let lost = needed.iter().filter(|n| n.score < 1.0).count();
                details {
                    summary {
                        "compaction " (e.index) " (line " (e.source_line) "): FRR " (pct(row.and_then(|x| x.frr)))
                        ", " (needed.len()) " needed, " (lost) " not kept in full"
                    }
                    pre { (e.summary.chars().take(SUMMARY_CHARS).collect::<String>()) }
                    @if !needed.is_empty() {
                        table {
                            tr { th { "kept" } th { "kind" } th { "value" } th { "weight" } th { "first used at message" } } "\n"
                            @for n in needed {
                                tr {
                                    td { (format!("{:.0}%", n.score * 100.0)) } td { (n.kind.name()) } td { (n.value) }
                                    td { (format!("{:.2}", n.weight)) } td { (n.first_use) }
                                } "\n"
                            }
                        }
                    }
                    @if let Some(a) = &e.audit {
                        @if !a.hallucinated.is_empty() {
                            p { "Named by the summary, found nowhere before it: "
                                @for (i, h) in a.hallucinated.iter().enumerate() {
                                    @if i > 0 { ", " } code { (h.value) }
                                }
                            }
                        }
                    }
                } "\n"
            }
        }
    }
}
