//! Summary quality in the replay report (DESIGN.md §6 "Quality", §7): attaches
//! each (session, policy)'s [`SessionQuality`] to its report row and the
//! per-policy [`QualityAggregate`] to its totals, and renders the quality parts
//! of `sessions.csv`, `quality.csv` (one row per compaction event and
//! candidate) and `report.md`.
//!
//! Every component is published on its own (FRR, recall per atom type,
//! artifact trail, hallucination, constraints, ask, dead ends, compression),
//! never only the composite, and always next to the reference points
//! (truncate, observation masking, masking at the policy's budget, oracle)
//! evaluated at the same compaction points.

use super::Report;
use super::markdown::{cell, thousands};
use crate::metrics::{self, view};
use crate::quality::QualityScore;
use crate::quality::{
    CANDIDATE_POLICY, CANDIDATE_RECORDED, QualityAggregate, QualityStats, REF_EXTRACTIVE_BUDGET, REF_LLM_BUDGET,
    REF_MASKING, REF_MASKING_BUDGET, REF_ORACLE, REF_TRUNCATE, SessionQuality,
};
use serde::Serialize;
use std::fmt::Write as _;

/// Quality columns appended to `sessions.csv`, in order: the policy's FRR and
/// the reference points', the quality components of the metric table, then the
/// summary sizes and what was lost. Empty cells when a value does not exist (no
/// compaction, no needed atom, `--no-quality`).
pub fn session_columns() -> Vec<&'static str> {
    let head = [
        "quality_compactions",
        "needed_atoms",
        "frr",
        "frr_truncate",
        "frr_masking",
        "frr_masking_budget",
        "frr_oracle",
    ];
    let tail = [
        "summary_tokens_mean",
        "masking_tokens_mean",
        "quality_composite",
        "lost_modified_paths",
        "pruning_needed_lost",
        "pruning_needed_lost_weight",
    ];
    head.into_iter().chain(metrics::of_view(view::COMPONENTS).map(|m| m.column)).chain(tail).collect()
}

fn num(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.4}")).unwrap_or_default()
}

/// The cells of [`session_columns`] for one row.
pub fn session_cells(q: Option<&SessionQuality>) -> Vec<String> {
    let Some(q) = q else { return vec![String::new(); session_columns().len()] };
    let policy = q.candidate(CANDIDATE_POLICY);
    let frr = |name: &str| num(q.candidate(name).and_then(|c| c.frr_pooled));
    let p = |f: fn(&QualityStats) -> Option<f64>| num(policy.and_then(f));
    let lost: usize = q.events.iter().map(|e| e.lost_modified_paths.len()).sum();
    let components = metrics::of_view(view::COMPONENTS).map(|m| num(policy.and_then(|c| m.of_stats(c))));
    let head = [
        q.compactions.to_string(),
        policy.map(|c| c.needed_atoms.to_string()).unwrap_or_default(),
        frr(CANDIDATE_POLICY),
        frr(REF_TRUNCATE),
        frr(REF_MASKING),
        frr(REF_MASKING_BUDGET),
        frr(REF_ORACLE),
    ];
    let tail = [
        p(|c| c.summary_tokens_mean),
        num(q.candidate(REF_MASKING).and_then(|c| c.summary_tokens_mean)),
        p(|c| c.quality_mean),
        lost.to_string(),
        q.pruning.needed_lost.to_string(),
        format!("{:.4}", q.pruning.needed_lost_weight + 0.0),
    ];
    head.into_iter().chain(components).chain(tail).collect()
}

/// The session, policy and source of a `quality.csv` row.
#[derive(Serialize)]
struct RowKey<'a> {
    session_id: &'a str,
    source_path: &'a str,
    policy: &'a str,
}

/// `quality.csv`: one row per (session, policy, compaction event, candidate),
/// the event's context columns then every metric of that candidate.
pub fn quality_csv(report: &Report) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in &report.sessions {
        let Some(q) = &r.quality else { continue };
        let key = RowKey { session_id: &r.session_id, source_path: &r.source_path, policy: &r.policy };
        for (info, row) in q.rows() {
            let _ = w.serialize((&key, info, row));
        }
    }
    let out = w.into_inner().unwrap_or_default();
    if out.is_empty() {
        // No row, no header from serde: the same header as a file with
        // rows, so a script reading the columns works on either.
        return quality_csv_header();
    }
    out
}

/// The header line of `quality.csv`, from the row types' field names (what
/// serde writes before the first row).
fn quality_csv_header() -> Vec<u8> {
    use crate::replay::{CompactionReason, SummaryOutcome};
    let key = RowKey { session_id: "", source_path: "", policy: "" };
    let info = crate::quality::EventInfo {
        event: 0,
        call: 0,
        future_start: 0,
        reason: CompactionReason::Threshold,
        outcome: SummaryOutcome::None,
        summarizer: String::new(),
        chained: false,
        split_turn: false,
        replaced_messages: 0,
        kept_messages: 0,
        future_messages: 0,
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.serialize((&key, &info, &crate::quality::CompactionQuality::default()));
    let out = w.into_inner().unwrap_or_default();
    // Field names hold no newline: the header is the first line.
    let end = out.iter().position(|&b| b == b'\n').map_or(out.len(), |i| i + 1);
    out[..end].to_vec()
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{:.1}", x * 100.0)).unwrap_or_else(|| "–".to_string())
}

fn tokens(v: Option<f64>) -> String {
    v.map(|x| thousands(x.round().max(0.0) as u64)).unwrap_or_else(|| "–".to_string())
}

/// The `## Summary quality` section of `report.md`; nothing when no policy
/// was scored (`--no-quality`).
pub fn markdown_section(out: &mut String, report: &Report) {
    let aggs: Vec<&QualityAggregate> = report.aggregates.iter().filter_map(|a| a.quality.as_ref()).collect();
    if aggs.is_empty() {
        return;
    }
    out.push_str("## Summary quality\n\n");
    out.push_str(
        "Each applied compaction is scored against the rest of its log (no LLM): the *needed* atoms are \
the paths, errors, ids, constraints, commands and symbols of the replaced part that the agent used later \
before seeing them again. FRR = weighted share of them the summary still names. The reference points are \
scored at the same compaction points: `truncate` (the truncate summarizer), `masking` (observation masking, \
the last 10 tool outputs kept), `masking@budget` (masking cut to the policy summary's tokens) and `oracle` \
(every needed atom listed). Percentages; pooled over events.\n\n",
    );
    out.push_str(
        "| policy | compactions | needed atoms | FRR | truncate | masking | masking@budget | oracle | summary tokens | masking tokens | dominated by |\n",
    );
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for a in &aggs {
        let c = |n: &str| a.candidate(n);
        let frr = |n: &str| pct(c(n).and_then(|s| s.frr_pooled));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&a.policy),
            a.compactions,
            thousands(c(CANDIDATE_POLICY).map_or(0, |s| s.needed_atoms)),
            frr(CANDIDATE_POLICY),
            frr(REF_TRUNCATE),
            frr(REF_MASKING),
            frr(REF_MASKING_BUDGET),
            frr(REF_ORACLE),
            tokens(c(CANDIDATE_POLICY).and_then(|s| s.summary_tokens_mean)),
            tokens(c(REF_MASKING).and_then(|s| s.summary_tokens_mean)),
            if a.dominated_by.is_empty() { "–".to_string() } else { cell(&a.dominated_by.join(", ")) },
        );
    }
    out.push('\n');
    out.push_str("Components of the policy's summaries (recall per atom type pooled over needed atoms; the rest are means over events):\n\n");
    let shown: Vec<_> = metrics::of_view(view::COMPONENTS).collect();
    out.push_str("| policy |");
    for m in &shown {
        let _ = write!(out, " {} |", m.label);
    }
    out.push_str(" composite |\n|---|");
    out.push_str(&"---:|".repeat(shown.len() + 1));
    out.push('\n');
    for a in &aggs {
        let Some(s) = a.candidate(CANDIDATE_POLICY) else {
            let _ = writeln!(out, "| {} | no compaction |{}", cell(&a.policy), "|".repeat(shown.len()));
            continue;
        };
        let _ = write!(out, "| {} |", cell(&a.policy));
        for m in &shown {
            let _ = write!(out, " {} |", pct(m.of_stats(s)));
        }
        let _ = writeln!(out, " {} |", s.quality_mean.map(|q| format!("{q:.1}")).unwrap_or_else(|| "–".to_string()));
    }
    out.push('\n');
    lost_table(out, &aggs);
    out.push_str(
        "Layer-1 pruning loss: needed atoms that were only in tool results pruning cleared or trimmed \
(each counted once, at the call where its last copy left the request).\n\n",
    );
    out.push_str("| policy | pruned results | atoms lost | needed atoms lost | weight |\n|---|---:|---:|---:|---:|\n");
    for a in &aggs {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.1} |",
            cell(&a.policy),
            thousands(a.pruned_results),
            thousands(a.pruning_lost_atoms),
            thousands(a.pruning_needed_lost),
            // `+ 0.0`: an empty f64 sum is -0.0, printed "-0.0".
            a.pruning_needed_lost_weight + 0.0,
        );
    }
    out.push('\n');
}

/// What each policy's summaries lost most often of what the agent needed
/// next: part of the `## Summary quality` section.
fn lost_table(out: &mut String, aggs: &[&QualityAggregate]) {
    if aggs.iter().all(|a| a.lost.is_empty()) {
        return;
    }
    out.push_str(
        "Lost most often: the needed atoms each policy's summaries did not hold in full, by the number of \
compactions after which the agent needed them (weight: Σ of their weights times the share not held; \
`compactor explain` shows each compaction).\n\n",
    );
    out.push_str("| policy | kind | value | compactions | weight |\n|---|---|---|---:|---:|\n");
    for a in aggs {
        for l in &a.lost {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.1} |",
                cell(&a.policy),
                l.kind.name(),
                cell(crate::summarize::head_chars(&l.value, 80)),
                l.compactions,
                l.weight
            );
        }
    }
    out.push('\n');
}

/// The `## The agent's own compactions` section of `report.md`: the
/// compactions the logs record, per agent and version, the recorded summary
/// next to compactor's summarizers at the same points and budget. Nothing
/// when no log records one (or `--no-quality`).
pub fn recorded_section(out: &mut String, report: &Report) {
    if report.recorded_aggregates.is_empty() {
        return;
    }
    out.push_str(
        "## The agent's own compactions

",
    );
    let llm = report.recorded_aggregates.iter().any(|a| a.candidate(REF_LLM_BUDGET).is_some());
    let truncations =
        report.recorded.iter().flat_map(|q| &q.events).any(|e| e.kind.may_truncate() && e.summary.is_empty());
    let _ = write!(
        out,
        "Compactions the logs record, with the summary the agent's model wrote (`recorded`), scored like \
a policy's against the rest of the log. At the same point and on the same dropped part: \
`extractive@budget` (compactor's extractive summarizer within the recorded summary's tokens), {}\
`truncate`, `masking@budget` (observation masking cut to that budget) and `oracle`. {}Not scored: \
summaries stored unreadable (encrypted) and continuations (what was dropped is in an earlier file). \
Percentages; FRR pooled over compactions, the rest means.\n\n",
        if llm {
            "`llm@budget` (the run's LLM summarizer asked the same, scored where it wrote the summary itself: \
the row says over how many compactions when that is not all), "
        } else {
            ""
        },
        if truncations {
            "A truncation writes no summary (Cline's deleted range, Roo Code's sliding window): it is scored with an empty one, so \
`recorded` says what it kept. "
        } else {
            ""
        }
    );
    let shown: Vec<_> = metrics::of_view(view::COMPONENTS).collect();
    out.push_str("| agent | version | compactions (scored, unreadable, continuation) | summary | FRR |");
    for m in &shown {
        let _ = write!(out, " {} |", m.label);
    }
    out.push_str(" summary tokens |\n|---|---|---|---|---:|");
    out.push_str(&"---:|".repeat(shown.len() + 1));
    out.push('\n');
    for a in &report.recorded_aggregates {
        let counts = format!("{} ({}, {}, {})", a.compactions, a.scored, a.unreadable, a.continuations);
        let version = a.version.as_deref().map_or_else(|| "–".to_string(), cell);
        if a.candidates.is_empty() {
            let _ =
                writeln!(out, "| {} | {version} | {counts} | – |{}", cell(&a.agent), " – |".repeat(shown.len() + 2));
            continue;
        }
        for name in RECORDED_ROWS {
            let Some(s) = a.candidate(name) else { continue };
            let label =
                if s.events < a.scored { format!("{name} ({} of {})", s.events, a.scored) } else { name.to_string() };
            let _ = write!(out, "| {} | {version} | {counts} | {label} | {} |", cell(&a.agent), pct(s.frr_pooled));
            for m in &shown {
                let _ = write!(out, " {} |", pct(m.of_stats(s)));
            }
            let _ = writeln!(out, " {} |", tokens(s.summary_tokens_mean));
        }
    }
    out.push('\n');
}

/// The rows of a recorded compaction, in report order.
const RECORDED_ROWS: [&str; 6] =
    [CANDIDATE_RECORDED, REF_EXTRACTIVE_BUDGET, REF_LLM_BUDGET, REF_MASKING_BUDGET, REF_TRUNCATE, REF_ORACLE];

/// The compare columns' quality (FRR, artifact recall, hallucination, means
/// over compactions) of each policy, in aggregate order, summed from the
/// rows' per-session values; `None` for a policy no row was scored for.
pub fn policy_scores(report: &Report) -> Vec<Option<QualityScore>> {
    report
        .aggregates
        .iter()
        .map(|a| {
            let mut rows = report.sessions.iter().filter(|r| r.policy == a.policy).filter_map(|r| r.quality.as_ref());
            let first = rows.next()?.score();
            Some(rows.fold(first, |mut acc, q| {
                acc.add(&q.score());
                acc
            }))
        })
        .collect()
}

/// Per-session FRR (pooled over the session's compactions) of each policy, in
/// policy order, for report.html's distribution; `None` when nothing was
/// scored (`--no-quality`).
pub fn session_frr(report: &Report) -> Option<Vec<Vec<f64>>> {
    if report.sessions.iter().all(|r| r.quality.is_none()) {
        return None;
    }
    Some(
        report
            .policies
            .iter()
            .map(|p| {
                report
                    .sessions
                    .iter()
                    .filter(|r| r.policy == p.name)
                    .filter_map(|r| r.quality.as_ref()?.candidate(CANDIDATE_POLICY)?.frr_pooled)
                    .collect()
            })
            .collect(),
    )
}
