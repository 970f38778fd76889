//! `compactor-bench quality`: the harness behind "extractive must beat truncate
//! and observation masking at the same token budget" (DESIGN.md §5).
//!
//! Reads a corpus, replays it through presets with a small `context_window` (so
//! the corpus's short sessions compact), scores every applied compaction with
//! `pipeline::evaluate_results`, and prints per preset: savings, compactions,
//! and per candidate (the policy's summary, truncate, masking, oracle) pooled
//! FRR, artifact-trail recall, hallucination rate and summary tokens.
//!
//! `--budget` also re-runs `extractive` at every point with the token budget
//! each reference used there (`extractive@truncate`, `extractive@masking`):
//! the equal-budget comparison of quality.md §c.4. `--audit PRESET` lists the
//! needed atoms the policy's summaries missed most and what they invented.

use anyhow::{Context, Result, bail};
use compactor::model::Session;
use compactor::pipeline::{SessionResults, evaluate_results, replay_many};
use compactor::policy::Policy;
use compactor::quality::{
    CANDIDATE_POLICY, CompactionQuality, QualityStats, SessionAtoms, SessionQuality, aggregate, aggregate_sessions,
    summarize_at, trace_points,
};
use compactor::read::{discover, read_all};
use compactor::replay::{EveryEstimatorResolver, ReplayOptions, Resolver};
use compactor::summarize::Extractive;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Corpus files or directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Comma-separated preset names.
    #[arg(long, default_value = "nous,opal,dotnet,codex,default")]
    presets: String,
    /// `context_window` set on every preset.
    #[arg(long, default_value_t = 32_000)]
    window: u64,
    /// Also run extractive at each reference's token budget.
    #[arg(long)]
    budget: bool,
    /// Print the atoms this preset's summaries missed and invented.
    #[arg(long, value_name = "PRESET")]
    audit: Option<String>,
    /// With --audit: write each event's summary and audit under this directory.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
    /// Write the per-preset aggregates as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

pub fn run(args: &Args) -> Result<()> {
    let t = Instant::now();
    let (inputs, problems) = discover(&args.paths);
    if !problems.is_empty() {
        bail!("{problems:?}");
    }
    let batch = read_all(&inputs, None);
    let sessions = batch.sessions;
    let read_s = t.elapsed().as_secs_f64();

    let mut policies = Vec::new();
    for name in args.presets.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let mut p = compactor::presets::get(name).with_context(|| format!("unknown preset {name}"))?;
        p.set("context_window", &args.window.to_string())?;
        policies.push(p);
    }
    let pool = rayon::ThreadPoolBuilder::new().build()?;
    let opts = ReplayOptions { keep_transcript: false, ..ReplayOptions::default() };

    let t = Instant::now();
    let results = replay_many(&sessions, &policies, &EveryEstimatorResolver, opts, &pool, None);
    let replay_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let quality = evaluate_results(&sessions, &results, &policies, &EveryEstimatorResolver, &pool);
    let quality_s = t.elapsed().as_secs_f64();
    // Atom extraction alone, to split the cost.
    let t = Instant::now();
    let atom_count: usize =
        pool.install(|| sessions.par_iter().map(|s| SessionAtoms::from_session(s).atom_count()).sum());
    let atoms_s = t.elapsed().as_secs_f64();

    println!(
        "quality: {} sessions, {} messages, window {} (read {read_s:.2} s, replay {replay_s:.3} s, quality {quality_s:.3} s \
         of which atoms ~{atoms_s:.3} s for {atom_count} atoms; {} threads)",
        sessions.len(),
        sessions.iter().map(|s| s.messages.len()).sum::<usize>(),
        args.window,
        pool.current_num_threads()
    );

    let mut json = Vec::new();
    for (pi, policy) in policies.iter().enumerate() {
        let sq: Vec<&SessionQuality> = quality.iter().filter_map(|q| q.get(pi)?.as_ref()).collect();
        let (base, pol): (u64, u64) = results
            .iter()
            .filter_map(|r| r.traces.get(pi)?.as_ref().ok())
            .fold((0, 0), |(b, p), t| (b + t.metrics.input_tokens_baseline, p + t.metrics.input_tokens_policy));
        let failed = results.iter().filter(|r| r.traces.get(pi).is_some_and(Result::is_err)).count();
        let agg = aggregate_sessions(sq.iter().copied());
        let Some(agg) = agg.into_iter().next() else {
            println!("\n{}: no sessions ({failed} replays failed)", policy.name);
            continue;
        };
        println!(
            "\n{} (summarizer {}, summary_max_tokens {}): savings {:.1}%, {} compactions in {}/{} sessions, \
             pruning lost {} needed atoms ({:.1} weight) over {} pruned results{}",
            policy.name,
            policy.compact.summarizer.name(),
            policy.compact.summary_max_tokens,
            100.0 * (base as f64 - pol as f64) / base.max(1) as f64,
            agg.compactions,
            agg.sessions_with_compactions,
            agg.sessions,
            agg.pruning_needed_lost,
            agg.pruning_needed_lost_weight,
            agg.pruned_results,
            if failed > 0 { format!(" ({failed} replays failed)") } else { String::new() }
        );
        let mut stats = agg.candidates.clone();
        if args.budget {
            stats.extend(budget_rows(&sessions, &results, pi, policy, &quality));
        }
        print_table(&stats);
        if !agg.dominated_by.is_empty() {
            println!("  DOMINATED by {}", agg.dominated_by.join(", "));
        }
        if args.audit.as_deref() == Some(policy.name.as_str()) {
            audit(&sessions, &results, pi, policy, args.dump.as_deref())?;
        }
        json.push(serde_json::json!({ "aggregate": agg, "extra": stats }));
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn fmt(v: Option<f64>, scale: f64, prec: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{:.prec$}", x * scale))
}

fn print_table(stats: &[QualityStats]) {
    println!(
        "  {:<22} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8} {:>7}",
        "candidate", "events", "FRR", "FRRmean", "artif", "halluc", "constr", "ask", "tok_mean", "tok_med", "quality"
    );
    let order = |s: &QualityStats| match s.summarizer.as_str() {
        CANDIDATE_POLICY => 0,
        "truncate" => 2,
        "masking" => 4,
        "masking@budget" => 5,
        "oracle" => 7,
        n if n.ends_with("@truncate") => 3,
        n if n.ends_with("@masking") => 6,
        _ => 8,
    };
    let mut sorted: Vec<&QualityStats> = stats.iter().collect();
    sorted.sort_by_key(|s| order(s));
    for s in sorted {
        println!(
            "  {:<22} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8} {:>7}",
            s.summarizer,
            s.events,
            fmt(s.frr_pooled, 100.0, 1),
            fmt(s.frr_mean, 100.0, 1),
            fmt(s.artifact_trail_recall_mean, 100.0, 1),
            fmt(s.hallucination_rate_mean, 100.0, 2),
            fmt(s.constraint_retention_mean, 100.0, 1),
            fmt(s.ask_coverage_mean, 100.0, 1),
            fmt(s.summary_tokens_mean, 1.0, 0),
            fmt(s.summary_tokens_median, 1.0, 0),
            fmt(s.quality_mean, 1.0, 1),
        );
    }
}

/// Extractive at each reference's budget, at the same points.
fn budget_rows(
    sessions: &[Session],
    results: &[SessionResults],
    pi: usize,
    policy: &Policy,
    quality: &[Vec<Option<SessionQuality>>],
) -> Vec<QualityStats> {
    let est = EveryEstimatorResolver.estimator(policy.estimator).ok();
    let Some(est) = est.as_deref() else { return Vec::new() };
    let rows: Vec<CompactionQuality> = results
        .par_iter()
        .zip(quality.par_iter())
        .flat_map_iter(|(r, q)| {
            let mut out = Vec::new();
            let (Some(Ok(trace)), Some(Some(sq))) = (r.traces.get(pi), q.get(pi)) else { return out };
            let Some(session) = sessions.iter().find(|s| s.id == r.session_id && s.source_path == r.source_path) else {
                return out;
            };
            let atoms = SessionAtoms::from_session(session);
            for (tp, ev) in trace_points(session, trace, policy.compact.file_ops).iter().zip(&sq.events) {
                let prepared = atoms.prepare(&tp.point, est);
                for reference in ["truncate", "masking"] {
                    let Some(row) = ev.rows.iter().find(|r| r.summarizer == reference) else { continue };
                    // Never above the policy's own cap: the comparison is at
                    // the reference's budget or less.
                    let budget = row.summary_tokens.min(policy.compact.summary_max_tokens);
                    let text = summarize_at(session, tp, policy, &Extractive, est, budget);
                    let q = prepared.score(&format!("extractive@{reference}"), &text);
                    out.push(q);
                }
            }
            out
        })
        .collect();
    aggregate(&rows)
}

/// What the policy's summaries missed (by weight) and invented.
fn audit(
    sessions: &[Session],
    results: &[SessionResults],
    pi: usize,
    policy: &Policy,
    dump: Option<&std::path::Path>,
) -> Result<()> {
    let Ok(est) = EveryEstimatorResolver.estimator(policy.estimator) else { return Ok(()) };
    if let Some(d) = dump {
        std::fs::create_dir_all(d)?;
    }
    let mut missed: BTreeMap<(String, String), (f64, u32)> = BTreeMap::new();
    let mut kinds: BTreeMap<String, (f64, f64, u32)> = BTreeMap::new();
    let mut invented: BTreeMap<(String, String), u32> = BTreeMap::new();
    for r in results {
        let Some(Ok(trace)) = r.traces.get(pi) else { continue };
        let Some(session) = sessions.iter().find(|s| s.id == r.session_id && s.source_path == r.source_path) else {
            continue;
        };
        let atoms = SessionAtoms::from_session(session);
        for tp in trace_points(session, trace, policy.compact.file_ops) {
            let prepared = atoms.prepare(&tp.point, est.as_ref());
            let summary = &trace.compactions[tp.compaction].summary;
            let (q, a) = prepared.score_with_audit(CANDIDATE_POLICY, summary);
            if let Some(d) = dump {
                let name: String =
                    r.session_id.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).take(60).collect();
                let missed: Vec<String> = a
                    .needed
                    .iter()
                    .filter(|n| n.score < 1.0)
                    .map(|n| format!("{:.2} [{}] {}", n.weight, n.kind, n.value))
                    .collect();
                let text = format!(
                    "FRR {:?} tokens {} needed {}\n--- missed\n{}\n--- invented\n{:?}\n--- summary\n{summary}\n",
                    q.frr,
                    q.summary_tokens,
                    q.needed_atoms,
                    missed.join("\n"),
                    a.hallucinated
                );
                std::fs::write(d.join(format!("{name}-{:03}.txt", tp.info.event)), text)?;
            }
            for n in &a.needed {
                let k = kinds.entry(n.kind.to_string()).or_default();
                k.0 += n.weight;
                k.1 += n.weight * n.score;
                k.2 += 1;
                if n.score < 1.0 {
                    let e = missed.entry((n.kind.to_string(), n.value.clone())).or_default();
                    e.0 += n.weight * (1.0 - n.score);
                    e.1 += 1;
                }
            }
            for h in &a.hallucinated {
                *invented.entry((h.kind.to_string(), h.value.clone())).or_default() += 1;
            }
        }
    }
    println!("  audit {}: recall by kind (weighted hits / weight, needed count)", policy.name);
    for (k, (w, h, c)) in &kinds {
        println!("    {k:<14} {:>6.1}%  ({c})", 100.0 * h / w.max(1e-9));
    }
    let mut m: Vec<_> = missed.into_iter().collect();
    m.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.0.cmp(&b.0)));
    println!("  missed (lost weight, events), top 8 per kind:");
    for kind in kinds.keys() {
        for ((k, v), (w, c)) in m.iter().filter(|e| &e.0.0 == kind).take(8) {
            println!("    {w:>6.2} {c:>3}  [{k}] {}", v.chars().take(120).collect::<String>());
        }
    }
    let mut inv: Vec<_> = invented.into_iter().collect();
    inv.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!("  invented ({}):", inv.len());
    for ((k, v), c) in inv.iter().take(20) {
        println!("    {c:>3}  [{k}] {}", v.chars().take(120).collect::<String>());
    }
    Ok(())
}
