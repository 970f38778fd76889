//! `compactor explain PATH...`: what each compaction lost. With no selector it
//! lists the compactions (the agents' own, and each `--preset`'s) with their
//! FRR; `--compaction N` prints one in full: its summary, every atom the agent
//! needed after it, how much the summary kept, and where the agent used it first.

use super::args::{ExplainArgs, PolicyArgs};
use super::inspect::clean;
use super::replay::{CliResolver, resolve_policies};
use anyhow::{Context, bail};
use compactor::pipeline::replay_many;
use compactor::quality::{Explained, RecordedStatus, explain_session};
use compactor::replay::{ReplayOptions, Resolver};
use compactor::tokens::Meter;
use std::fmt::Write as _;

/// Longest log value shown on one line.
const MAX_VALUE: usize = 80;
/// Lines of a summary shown in full view (the rest counted).
const SUMMARY_LINES: usize = 60;

pub fn run(args: ExplainArgs) -> anyhow::Result<u8> {
    let policy_args = PolicyArgs { presets: args.presets.clone(), sets: args.sets.clone(), ..PolicyArgs::default() };
    let policies = resolve_policies(&policy_args, &[])?;
    if let Some(only) = args.policy.as_deref() {
        check_policy_filter(only, &policies)?;
    }
    let quiet = args.input.quiet;
    let loaded = super::load::load(args.input.clone())?;
    let resolver = CliResolver::new(None, None);
    let options =
        ReplayOptions { check_invariants: false, verify_totals: false, keep_transcript: false, meter: Meter::Recorded };
    let mut sessions: Vec<&compactor::model::Session> = loaded
        .batch
        .sessions
        .iter()
        .filter(|s| args.session.as_deref().is_none_or(|id| s.id.starts_with(id)))
        .collect();
    sessions.sort_by(|a, b| (&a.id, &a.source_path).cmp(&(&b.id, &b.source_path)));
    if sessions.is_empty() {
        bail!("no session matches --session {}", args.session.as_deref().unwrap_or(""));
    }
    let owned: Vec<compactor::model::Session> = sessions.iter().map(|s| (*s).clone()).collect();
    let results = loaded.pool.install(|| replay_many(&owned, &policies, &resolver, options, &loaded.pool, None));
    let meter = options.meter.counter();
    let mut rows: Vec<(&compactor::model::Session, Explained)> = Vec::new();
    for (s, r) in owned.iter().zip(&results) {
        let traces = replayed(&policies, r, &resolver)?;
        let given: Vec<_> =
            traces.iter().map(|(p, t, est)| (p.name.as_str(), *t, est.as_ref(), p.compact.file_ops)).collect();
        for e in explain_session(s, &given, meter) {
            if args.policy.as_deref().is_none_or(|p| p == e.policy) {
                rows.push((s, e));
            }
        }
    }
    let out = match args.compaction {
        None if args.json => json(rows.iter().map(|(_, e)| e))?,
        // No table of nothing: stderr says why the list is empty.
        None if rows.is_empty() => String::new(),
        None => list(&rows),
        Some(n) => {
            let Some((s, e)) = rows.get(n) else {
                bail!("no compaction {n}: {} listed (run without --compaction to see them)", rows.len());
            };
            if args.json { json(std::iter::once(e))? } else { detail(s, e) }
        }
    };
    if rows.is_empty() && !quiet {
        eprintln!("{}", why_none(args.policy.as_deref(), &policies));
    }
    super::print_stdout(&out)
}

/// Name of the agents' own compactions for `--policy`.
const RECORDED: &str = "recorded";

/// `--policy` names `recorded` or a policy given with `--preset`: anything
/// else would list nothing and look like a log without compactions.
fn check_policy_filter(only: &str, policies: &[compactor::policy::Policy]) -> anyhow::Result<()> {
    if only == RECORDED || policies.iter().any(|p| p.name == only) {
        return Ok(());
    }
    let names: Vec<String> =
        std::iter::once(RECORDED).chain(policies.iter().map(|p| p.name.as_str())).map(|n| format!("`{n}`")).collect();
    let add = if policies.is_empty() { ", or the name of a --preset you add" } else { "" };
    bail!(
        "--policy `{}` names no compaction list here: the choices are {}{add}",
        clean(only, MAX_VALUE),
        names.join(", ")
    )
}

/// Why the list is empty, and what would fill it.
fn why_none(only: Option<&str>, policies: &[compactor::policy::Policy]) -> String {
    let smaller = "try a smaller window, e.g. --set context_window=32000";
    match only {
        Some(RECORDED) => "no compaction: the logs record none".to_string(),
        Some(name) => {
            format!("no compaction: policy `{}` compacted none of these sessions; {smaller}", clean(name, 40))
        }
        None if policies.is_empty() => {
            "no compaction: the logs record none; add --preset NAME to replay a policy".to_string()
        }
        None => format!("no compaction: the logs record none, and no --preset compacted at its window; {smaller}"),
    }
}

/// Each policy's trace of a session that it replayed, with its estimator
/// (a policy that failed on the session has none).
pub(super) fn replayed<'p>(
    policies: &'p [compactor::policy::Policy],
    r: &'p compactor::pipeline::SessionResults,
    resolver: &CliResolver,
) -> anyhow::Result<Vec<Traced<'p>>> {
    let mut traces = Vec::new();
    for (p, t) in policies.iter().zip(&r.traces) {
        let Ok(t) = t else { continue };
        let est = resolver.estimator(p.estimator).with_context(|| format!("policy `{}`", p.name))?;
        traces.push((p, t, est));
    }
    Ok(traces)
}

/// A policy, its trace of one session, and its estimator.
pub(super) type Traced<'p> = (
    &'p compactor::policy::Policy,
    &'p compactor::replay::SessionTrace,
    std::sync::Arc<dyn compactor::tokens::Estimator>,
);

fn json<'e>(rows: impl Iterator<Item = &'e Explained>) -> anyhow::Result<String> {
    let v: Vec<&Explained> = rows.collect();
    let mut s = serde_json::to_string_pretty(&v).context("cannot serialize")?;
    s.push('\n');
    Ok(s)
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{:.1}%", x * 100.0))
}

/// One line per compaction, numbered for `--compaction N`.
fn list(rows: &[(&compactor::model::Session, Explained)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>3}  {:<14} {:<12} {:>4} {:>7} {:>12} {:>6} {:>5} {:>8}  name",
        "#", "session", "policy", "no.", "message", "FRR", "needed", "lost", "invented"
    );
    for (i, (s, e)) in rows.iter().enumerate() {
        let lost = e.needed.iter().filter(|n| n.held < 1.0).count();
        let frr = match e.status {
            RecordedStatus::Scored => pct(e.frr),
            other => other.name().to_string(),
        };
        let _ = writeln!(
            out,
            "{i:>3}  {:<14} {:<12} {:>4} {:>7} {:>12} {:>6} {:>5} {:>8}  {}",
            clean(&s.id, 14),
            clean(&e.policy, 12),
            e.index,
            e.future_start,
            frr,
            e.needed.len(),
            lost,
            e.hallucinated.len(),
            s.display_name().map_or_else(String::new, |n| clean(&n, 40))
        );
    }
    out.push_str(
        "\nmessage: where the agent's context starts again after it; needed: what the agent used later \
and had only before the compaction; lost: those the summary does not hold in full; invented: what the summary \
names that the log never did. `--compaction N` shows one in full.\n",
    );
    out
}

/// One compaction in full.
fn detail(s: &compactor::model::Session, e: &Explained) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "session  {}  ({})",
        clean(&s.id, MAX_VALUE),
        clean(&s.source_path.display().to_string(), MAX_VALUE)
    );
    if let Some(n) = s.display_name() {
        let _ = writeln!(out, "name     {}", clean(&n, MAX_VALUE));
    }
    let _ = writeln!(
        out,
        "policy   {}, compaction {}, context restarts at message {}",
        clean(&e.policy, MAX_VALUE),
        e.index,
        e.future_start
    );
    if e.status != RecordedStatus::Scored {
        let _ = writeln!(out, "not scored: {}", e.status.name());
        return out;
    }
    let _ = writeln!(
        out,
        "FRR {}, hallucination {}, {} summary tokens, {} needed atoms\n",
        pct(e.frr),
        pct(e.hallucination_rate),
        e.summary_tokens,
        e.needed.len()
    );
    out.push_str("Summary:\n");
    let lines: Vec<&str> = e.summary.lines().collect();
    for l in lines.iter().take(SUMMARY_LINES) {
        let _ = writeln!(out, "  | {}", clean(l, 200));
    }
    if lines.len() > SUMMARY_LINES {
        let _ = writeln!(out, "  | … {} more lines", lines.len() - SUMMARY_LINES);
    }
    out.push_str("\nNeeded later (lost modified paths and errors first):\n");
    let _ = writeln!(out, "  {:<6} {:<13} {:>6}  {:<40} first use", "held", "kind", "weight", "value");
    for n in &e.needed {
        let held = if n.held >= 1.0 {
            "kept".to_string()
        } else if n.held <= 0.0 {
            "LOST".to_string()
        } else {
            format!("{:.0}%", n.held * 100.0)
        };
        let place = match (n.call, &n.tool) {
            (Some(c), Some(t)) => format!("call {c}, {}", clean(t, 30)),
            (Some(c), None) => format!("call {c}"),
            (None, _) => format!("message {}", n.message),
        };
        let _ =
            writeln!(out, "  {held:<6} {:<13} {:>6.2}  {:<40} {place}", n.kind.name(), n.weight, clean(&n.value, 40));
        if !n.excerpt.is_empty() {
            let _ = writeln!(out, "  {:>29}  ↳ {}", "", clean(&n.excerpt, 110));
        }
    }
    if !e.hallucinated.is_empty() {
        out.push_str("\nNamed by the summary, found nowhere before it:\n");
        for a in &e.hallucinated {
            let _ = writeln!(out, "  {:<13} {}", a.kind.name(), clean(&a.value, MAX_VALUE));
        }
    }
    out
}
