//! The summary `compactor replay` prints: per policy, what compaction would
//! have saved (tokens, money, overflows) and what its summaries kept of what
//! the agent needed later, with the window and trigger it ran at, every
//! column said in words, and why when the savings are near zero or negative.

use super::Report;
use crate::num::{signed, thousands};
use crate::policy::Policy;
use crate::quality::{CANDIDATE_POLICY, CANDIDATE_RECORDED};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write;

/// Savings under this share of the billed input are "near zero".
const NEAR_ZERO_PCT: f64 = 1.0;

/// The printed summary: the run line, the table, what each column means and
/// why the savings are what they are. `table_only`: just the table (`-q`).
pub fn summary(report: &Report, table_only: bool) -> String {
    let mut out = String::new();
    if !table_only {
        out.push_str(&run_line(report));
    }
    table(&mut out, report);
    if table_only {
        return out;
    }
    out.push('\n');
    for why in reasons(report) {
        let _ = writeln!(out, "why: {why}");
    }
    out.push_str(LEGEND);
    for a in report.aggregates.iter().filter(|a| a.no_progress_compactions > 0) {
        let _ = writeln!(
            out,
            "  {} of {}'s compaction attempts would have freed too little and were not made (no progress).",
            thousands(a.no_progress_compactions),
            a.policy
        );
    }
    out
}

const LEGEND: &str = "  tokens saved: input tokens the policy would not have sent, against what the agent sent.
  money saved: the same, priced with the prompt cache (a pruned prompt is no longer a cached prefix).
  overflows avoided: calls over the context window that the policy brought under it, less those it took over.
  kept for later: of what the agent needed after each compaction, the weighted share its summary kept (FRR).
";

/// How many sessions, under which window, measured with what.
fn run_line(report: &Report) -> String {
    let mut windows: BTreeMap<u64, usize> = BTreeMap::new();
    let mut seen = HashSet::new();
    for r in report.sessions.iter().filter(|r| r.error.is_none()) {
        if seen.insert((&r.session_id, &r.source_path)) {
            *windows.entry(r.context_window).or_default() += 1;
        }
    }
    let window = match windows.len() {
        0 => "no window".to_string(),
        1 => format!("window of {} tokens", short(windows.keys().next().copied().unwrap_or(0))),
        _ => {
            let mut by: Vec<(u64, usize)> = windows.into_iter().collect();
            by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let parts: Vec<String> = by.iter().map(|(w, n)| format!("{} ({n})", short(*w))).collect();
            format!("windows of {} tokens (sessions)", parts.join(", "))
        }
    };
    let m = &report.run.meter;
    let mut out = format!(
        "{} session(s), {} polic{}, {window}\n",
        report.run.sessions,
        report.policies.len(),
        if report.policies.len() == 1 { "y" } else { "ies" }
    );
    let _ = writeln!(
        out,
        "sizes from recorded usage for {} call(s), estimated for {} (meter: {})",
        thousands(m.calls_recorded),
        thousands(m.calls_estimated),
        m.name
    );
    out.push('\n');
    out
}

/// What must be said even under `-q` (on stderr), a line each: the
/// [`notices`], `warning: ` or `note: ` before each.
pub fn warnings(report: &Report) -> String {
    let mut out = String::new();
    for (warning, text) in notices(report) {
        let _ = writeln!(out, "{}: {text}", if warning { "warning" } else { "note" });
    }
    out
}

/// What a run says of its numbers besides them, in order, each a warning
/// (`true`) or a note: policies whose trigger lies above every session's
/// window, calls priced as the fallback or as their agent's default model,
/// fast calls and how they were priced.
pub fn notices(report: &Report) -> Vec<(bool, String)> {
    let mut out: Vec<(bool, String)> = super::trigger_above_window(report)
        .into_iter()
        .map(|w| (true, w.sentence(&w.policy, &thousands(w.trigger), &thousands(w.window))))
        .collect();
    out.extend(fallback_note(report).map(|w| (true, w)));
    out.extend(agent_model_note(report).map(|n| (false, n)));
    let (fast, standard) = fast_notes(report);
    out.extend(standard.map(|w| (true, w)));
    out.extend(fast.map(|n| (false, n)));
    let (off_peak, untimed) = off_peak_notes(report);
    out.extend(untimed.map(|w| (true, w)));
    out.extend(off_peak.map(|n| (false, n)));
    out.extend(agent_summaries_note(report).map(|n| (false, n)));
    out
}

/// Calls whose model no price family matches (or unnamed) were priced as the
/// fallback family: the money columns assume it.
pub(super) fn fallback_note(report: &Report) -> Option<String> {
    let model = report.cost_model.as_ref()?;
    if model.model_override.is_some() {
        return None;
    }
    let cost = report.aggregates.iter().filter_map(|a| a.cost.as_ref()).max_by_key(|c| c.fallback_calls)?;
    (cost.fallback_calls > 0).then(|| {
        format!(
            "{} call(s) of a model no price family matches, or of none named, priced as `{}`{} (--prices FILE prices them; docs/cost.md)",
            thousands(cost.fallback_calls),
            model.fallback_family,
            unknown_models(&cost.unknown_models),
        )
    })
}

/// The unknown model names of the most calls, most first: "; unknown: `a`
/// (12 calls), `b` (3 calls), others". A name a secret pattern matches is
/// not shown.
fn unknown_models(models: &std::collections::BTreeMap<String, u64>) -> String {
    const SHOWN: usize = 5;
    let mut named: Vec<(&str, u64)> = Vec::new();
    let mut hidden = false;
    for (m, &n) in models {
        let plain =
            m != crate::cost::OTHER_UNKNOWN_MODELS && matches!(crate::redact::redact(m), std::borrow::Cow::Borrowed(_));
        if plain {
            named.push((m, n));
        } else {
            hidden = true;
        }
    }
    // Most calls first; at equal counts, by name (the map's order).
    named.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    let mut list: Vec<String> =
        named.iter().take(SHOWN).map(|(m, n)| format!("`{m}` ({} call{})", thousands(*n), plural(*n))).collect();
    if named.len() > SHOWN || hidden {
        list.push("others".to_string());
    }
    if list.is_empty() { String::new() } else { format!("; unknown: {}", list.join(", ")) }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Calls of logs that name no model were priced as their agent's default
/// model (Codex's for a `codex exec` stream): the money columns assume it.
pub(super) fn agent_model_note(report: &Report) -> Option<String> {
    let model = report.cost_model.as_ref()?;
    if model.model_override.is_some() {
        return None;
    }
    let calls = report.aggregates.iter().filter_map(|a| a.cost.as_ref()).map(|c| c.agent_model_calls).max()?;
    if calls == 0 {
        return None;
    }
    let agents: std::collections::BTreeSet<String> = report
        .sessions
        .iter()
        .filter(|r| r.cost.as_ref().is_some_and(|c| c.agent_model_calls > 0))
        .filter_map(|r| crate::read::format::default_model(r.format).map(|m| format!("`{m}` for {}", r.format.name())))
        .collect();
    Some(format!(
        "{} call(s) name no model: priced as their agent's default model ({}); --model NAME prices them otherwise",
        thousands(calls),
        agents.into_iter().collect::<Vec<_>>().join(", ")
    ))
}

/// Calls served in fast mode: a note of those priced at their family's
/// fast-mode multiple, and a warning of those priced at the standard rates
/// (no multiple known for their family).
pub(super) fn fast_notes(report: &Report) -> (Option<String>, Option<String>) {
    let standard = most_calls(report, |c| c.fast_at_standard_calls);
    let fast = most_calls(report, |c| c.fast_calls).saturating_sub(standard);
    (
        (fast > 0).then(|| {
            format!("{} call(s) served in fast mode, priced at their model's fast-mode multiple", thousands(fast))
        }),
        (standard > 0).then(|| {
            format!(
                "{} call(s) served in fast mode priced at the standard rates: no fast-mode multiple is known for \
their model (`fast = MULTIPLE` in a --prices FILE sets one; docs/cost.md)",
                thousands(standard)
            )
        }),
    )
}

/// Calls of a model priced by time of day or by date: a note of those billed
/// at its off-peak prices and of those billed at the prices of an earlier
/// date, and a warning of those of no timestamp, billed at its latest listed
/// (peak) prices.
pub(super) fn off_peak_notes(report: &Report) -> (Option<String>, Option<String>) {
    let off_peak = most_calls(report, |c| c.off_peak_calls);
    let earlier = most_calls(report, |c| c.earlier_price_calls);
    let untimed = most_calls(report, |c| c.untimed_listed_calls);
    let notes: Vec<String> = [
        (off_peak > 0).then(|| {
            format!(
                "{} call(s) of a model priced by time of day sent off-peak, priced at its off-peak rates",
                thousands(off_peak)
            )
        }),
        (earlier > 0).then(|| {
            format!(
                "{} call(s) sent before a price change of their model, priced at the rates of their date",
                thousands(earlier)
            )
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    (
        (!notes.is_empty()).then(|| notes.join("; ")),
        (untimed > 0).then(|| {
            format!(
                "{} call(s) of a model priced by time of day or by date have no timestamp: priced at its latest \
rates, at peak where priced by the hour (docs/cost.md)",
                thousands(untimed)
            )
        }),
    )
}

/// The requests that wrote the agent's own compactions' summaries: what the
/// baseline's cost includes of them, and how many it leaves out.
pub(super) fn agent_summaries_note(report: &Report) -> Option<String> {
    // Every policy bills the same baseline: the first priced one says it.
    let a = report.aggregates.iter().filter_map(|a| a.cost.as_ref()).map(|c| c.agent_summaries).next()?;
    let priced = (a.requests > 0).then(|| {
        format!(
            "the baseline's cost includes the {} request(s) that wrote the summaries of Claude Code's own \
compactions (${:.4}), which a policy replay does not send",
            thousands(a.requests),
            a.bill.usd
        )
    });
    let unpriced = (a.unpriced > 0).then(|| {
        format!(
            "{} of the agent's own compaction(s) are billed without the request that wrote their summary (those \
of Codex, pi, Gemini CLI and Roo Code, and any whose summarized history is in another log; docs/cost.md)",
            thousands(a.unpriced)
        )
    });
    let notes: Vec<String> = [priced, unpriced].into_iter().flatten().collect();
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// The most calls any policy counts of a kind (every policy prices the same calls).
fn most_calls(report: &Report, f: fn(&crate::cost::CostTotals) -> u64) -> u64 {
    report.aggregates.iter().filter_map(|a| a.cost.as_ref()).map(f).max().unwrap_or(0)
}

/// A token count in K or M when it is a whole number of them.
fn short(n: u64) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}K", n / 1_000),
        n => thousands(n),
    }
}

/// A percentage with one decimal, never "-0.0".
fn pct(v: f64) -> String {
    format!("{:.1}%", crate::num::shown(v, 1))
}

fn table(out: &mut String, report: &Report) {
    let header =
        ["policy", "compacts at", "tokens saved", "money saved", "overflows avoided", "compactions", "kept for later"];
    let rows: Vec<[String; 7]> = report
        .aggregates
        .iter()
        .map(|a| {
            let policy = report.policies.iter().find(|p| p.name == a.policy);
            let saved = a.input_tokens_baseline as i64 - a.input_tokens_policy as i64;
            let money = a.cost.as_ref().map_or_else(
                || "–".to_string(),
                |c| format!("{} ({})", crate::num::usd(c.saved_usd, 2), pct(c.saved_pct)),
            );
            let avoided = a.overflow_calls_baseline as i64 - a.overflow_calls_policy as i64;
            let overflows = match a.overflow_calls_baseline {
                0 if avoided == 0 => "none to avoid".to_string(),
                base => format!("{} of {}", signed(avoided), thousands(base)),
            };
            let frr = a
                .quality
                .as_ref()
                .and_then(|q| q.candidate(CANDIDATE_POLICY))
                .and_then(|s| s.frr_pooled)
                .map_or_else(|| "–".to_string(), |f| pct(f * 100.0));
            [
                a.policy.clone(),
                policy.map_or_else(|| "–".to_string(), Policy::trigger_words),
                format!("{} ({})", signed(saved), pct(a.savings_pct)),
                money,
                overflows,
                thousands(a.compactions),
                frr,
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            let pad = w.saturating_sub(c.chars().count());
            match i {
                0 | 1 => l.push_str(&format!("{c}{}", " ".repeat(pad))),
                _ => l.push_str(&format!("{}{c}", " ".repeat(pad))),
            }
            if i + 1 < cells.len() {
                l.push_str("  ");
            }
        }
        l.trim_end().to_string() + "\n"
    };
    out.push_str(&line(&header.map(str::to_string)));
    for r in &rows {
        out.push_str(&line(r));
    }
}

/// The policy's money saving is not negative (or not priced).
fn money_ok(a: &super::Aggregate) -> bool {
    a.cost.as_ref().is_none_or(|c| c.saved_pct >= 0.0)
}

/// The lowest point at which `policy` compacts over the run's sessions
/// (`None` when it does not compact).
fn lowest_trigger(report: &Report, policy: &str) -> Option<u64> {
    let p = report.policies.iter().find(|p| p.name == policy).filter(|p| p.compact.enabled)?;
    report
        .sessions
        .iter()
        .filter(|r| r.policy == policy && r.error.is_none())
        .filter_map(|r| p.with_window(r.context_window).ok().map(|q| q.trigger_point()))
        .min()
}

/// One line per policy whose savings are near zero or negative, saying why.
fn reasons(report: &Report) -> Vec<String> {
    let recorded_frr = report
        .recorded_aggregates
        .iter()
        .filter_map(|a| a.candidate(CANDIDATE_RECORDED))
        .filter_map(|s| s.frr_pooled.map(|f| (f, u64::from(s.events))))
        .fold(None, |acc: Option<(f64, u64)>, (f, n)| {
            let (sum, m) = acc.map_or((0.0, 0), |(s, m)| (s * m as f64, m));
            let total = m + n;
            Some(((sum + f * n as f64) / total.max(1) as f64, total))
        });
    let mut out = Vec::new();
    for a in &report.aggregates {
        let near_zero = a.savings_pct.abs() < NEAR_ZERO_PCT;
        if !near_zero && a.savings_pct > 0.0 && money_ok(a) {
            continue;
        }
        let p = a.policy.as_str();
        if a.compactions == 0 {
            let at = lowest_trigger(report, p);
            out.push(match at {
                Some(t) if a.peak_baseline <= t => format!(
                    "no request reached {p}'s trigger: the largest was {} tokens, the trigger {} or more.",
                    thousands(a.peak_baseline),
                    thousands(t)
                ),
                Some(_) if a.no_progress_compactions > 0 => format!(
                    "{p} reached its trigger, but each of its {} attempt(s) would have freed too little to compact.",
                    thousands(a.no_progress_compactions)
                ),
                Some(_) => format!(
                    "{p} made no compaction: its own size estimate (`{}`) stayed under its trigger, or its cut \
                     found nothing to summarize.",
                    report
                        .policies
                        .iter()
                        .find(|x| x.name == p)
                        .map_or("?", |x| crate::replay::estimator_name(x.estimator))
                ),
                None => format!("{p} does not compact; what it saved, pruning saved."),
            });
            if a.savings_pct >= 0.0 && money_ok(a) {
                continue;
            }
        }
        if a.savings_pct < 0.0 && a.compactions == 0 {
            // Pruning only shortens: what a policy that never compacts sends
            // past the baseline is what the agent's own compactions and
            // clearings (microcompacts) dropped.
            out.push(format!(
                "{p} sent more than the agent did ({}): the agent's own compactions and cleared tool outputs \
                 dropped what {p}, which made no compaction, kept sending.",
                pct(a.savings_pct)
            ));
        } else if a.savings_pct < 0.0 {
            out.push(format!(
                "{p} sent more than the agent did ({}): its summaries and kept messages, and what the agent's own \
                 compactions and cleared tool outputs dropped, outweighed what {p} dropped.",
                pct(a.savings_pct)
            ));
        } else if near_zero {
            let rows = || report.sessions.iter().filter(|r| r.policy == p && r.error.is_none());
            let acted =
                rows().filter(|r| r.metrics.compactions + r.metrics.pruned_soft + r.metrics.pruned_hard > 0).count();
            out.push(format!(
                "{p} saved little: it compacted or pruned in {acted} of {} session(s) ({} compaction(s), {} pruned output(s)).",
                rows().count(),
                thousands(a.compactions),
                thousands(a.pruned_soft + a.pruned_hard)
            ));
        }
        // Sending more costs more; what needs saying is a policy that sends no
        // more and still costs more.
        if let Some(c) = a.cost.as_ref().filter(|c| c.saved_pct < 0.0 && a.savings_pct >= 0.0) {
            out.push(format!(
                "{p} costs more ({}): pruning and compaction change the prompt's prefix, so cached input is written again \
                 ({} session(s) shed tokens but cost more).",
                pct(-c.saved_pct),
                c.sessions_sheds_tokens_costs_more
            ));
        }
        let frr = a.quality.as_ref().and_then(|q| q.candidate(CANDIDATE_POLICY)).and_then(|s| s.frr_pooled);
        if let (Some((rec, n)), Some(frr)) = (recorded_frr, frr)
            && rec > frr
        {
            out.push(format!(
                "the agents' own {n} compaction(s) kept more of what was needed later than {p}'s (FRR {} vs {}).",
                pct(rec * 100.0),
                pct(frr * 100.0)
            ));
        }
    }
    out
}
