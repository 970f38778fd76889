//! `compactor probe PATH... --llm-…`: recall questions about each compaction,
//! answered by a model from what the compaction left it (the summary and the
//! kept messages), graded by exact match, next to FRR (docs/probe.md).

use super::args::{PolicyArgs, ProbeArgs};
use super::replay::{CliResolver, resolve_policies};
use anyhow::Context;
use compactor::llm::{LlmConfig, LlmSummarizer};
use compactor::model::{Message, Session};
use compactor::pipeline::replay_many;
use compactor::policy::Policy;
use compactor::quality::probe::{self, Probe};
use compactor::quality::{Explained, RecordedStatus, explain_masking, explain_reference, explain_session};
use compactor::replay::ReplayOptions;
use compactor::summarize::{Extractive, InputLimits, serialize_transcript};
use compactor::tokens::Meter;
use rayon::prelude::*;
use serde::Serialize;
use std::fmt::Write as _;

/// The kept messages as the model reads them: tool results previewed, the
/// whole capped (the atoms asked about are, by definition, not in them).
const KEPT_LIMITS: InputLimits =
    InputLimits { preview_head_chars: Some(2_000), preview_tail_chars: 500, input_cap_chars: Some(200_000) };

/// One question, asked and graded.
#[derive(Debug, Clone, Serialize)]
struct Asked {
    #[serde(flatten)]
    probe: Probe,
    answer: Option<String>,
    correct: bool,
}

/// The probes of one compaction under one candidate.
#[derive(Debug, Clone, Serialize)]
struct Probed {
    session: String,
    /// `recorded`, a policy's name, `extractive@POLICY` or `masking@POLICY`.
    candidate: String,
    /// Index among the candidate's compactions in the session.
    index: u32,
    frr: Option<f64>,
    /// Share of the questions whose atom is in what the model was given.
    in_context: Option<f64>,
    /// Share answered right; `None` when the request failed.
    accuracy: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    probes: Vec<Asked>,
}

/// Per candidate, over its compactions.
#[derive(Debug, Clone, Serialize)]
struct Total {
    candidate: String,
    compactions: usize,
    probes: usize,
    in_context: Option<f64>,
    accuracy: Option<f64>,
    frr: Option<f64>,
    /// Spearman's rank correlation of FRR and accuracy across compactions.
    rank_correlation: Option<f64>,
    failed: usize,
}

#[derive(Debug, Serialize)]
struct Output {
    model: String,
    totals: Vec<Total>,
    compactions: Vec<Probed>,
}

pub fn run(args: ProbeArgs) -> anyhow::Result<u8> {
    if let Some(dir) = &args.out {
        super::preflight::out_dir("--out", dir)?;
    }
    let policy_args = PolicyArgs { presets: args.presets.clone(), sets: args.sets.clone(), ..PolicyArgs::default() };
    let policies = resolve_policies(&policy_args, &["default"])?;
    let flags = super::llm::merged_flags(&args.llm, &Policy::default())?;
    let config = LlmConfig::from_flags(&flags).context("the model that answers the probes")?;
    let model = config.model.clone();
    let concurrency = config.concurrency;
    let client = LlmSummarizer::new(config).context("the model that answers the probes")?;
    let llm = super::llm::adapter(&args.llm, &policies)?;
    let commands = super::command::programs(&args.llm, &policies)?;
    let mut loaded = super::load::load(args.input.clone())?;
    let resolver = CliResolver::new(llm, commands);
    let options =
        ReplayOptions { check_invariants: false, verify_totals: false, keep_transcript: false, meter: Meter::Recorded };
    let mut sessions: Vec<Session> = std::mem::take(&mut loaded.batch.sessions);
    sessions.sort_by(|a, b| (&a.id, &a.source_path).cmp(&(&b.id, &b.source_path)));
    let results = loaded.pool.install(|| replay_many(&sessions, &policies, &resolver, options, &loaded.pool, None));
    let meter = options.meter.counter();
    // A session a policy cannot replay has nothing to ask: said, not skipped quietly.
    for (s, r) in sessions.iter().zip(&results) {
        for (p, t) in policies.iter().zip(&r.traces) {
            if let (Err(e), false) = (t, loaded.quiet) {
                eprintln!("warning: policy `{}` cannot replay session {}: {e}", p.name, s.id);
            }
        }
    }
    // Every compaction of every candidate, scored per session in parallel,
    // kept in session order.
    let explain = |s: &Session, r: &compactor::pipeline::SessionResults| -> anyhow::Result<Vec<Explained>> {
        let traces = super::explain::replayed(&policies, r, &resolver)?;
        let given: Vec<_> =
            traces.iter().map(|(p, t, est)| (p.name.as_str(), *t, est.as_ref(), p.compact.file_ops)).collect();
        let mut out = explain_session(s, &given, meter);
        for (p, t, est) in &traces {
            out.extend(explain_reference(s, p, t, est.as_ref(), &Extractive, &format!("extractive@{}", p.name)));
            out.extend(explain_masking(s, p, t, est.as_ref(), &format!("masking@{}", p.name)));
        }
        Ok(out)
    };
    let per_session: Vec<anyhow::Result<Vec<Explained>>> =
        loaded.pool.install(|| sessions.par_iter().zip(&results).map(|(s, r)| explain(s, r)).collect());
    let mut explained: Vec<(&Session, Explained)> = Vec::new();
    for (s, e) in sessions.iter().zip(per_session) {
        explained.extend(e?.into_iter().map(|e| (s, e)));
    }
    explained.retain(|(_, e)| e.status == RecordedStatus::Scored && !e.needed.is_empty());
    let pool = super::load::thread_pool(Some(concurrency.max(loaded.pool.current_num_threads())))?;
    let max = args.max_probes.max(1);
    let bar = super::load::progress_bar("asking {pos}/{len} compactions", explained.len() as u64, loaded.quiet);
    let probed: Vec<Probed> = pool.install(|| {
        explained
            .par_iter()
            .map(|(s, e)| {
                let p = ask(&client, s, e, max);
                bar.inc(1);
                p
            })
            .collect()
    });
    bar.finish_and_clear();
    if compactor::interrupt::requested() {
        anyhow::bail!("interrupted");
    }
    let out = Output { model, totals: totals(&probed), compactions: probed };
    let failed: Vec<&Probed> = out.compactions.iter().filter(|p| p.error.is_some()).collect();
    if let Some(first) = failed.first() {
        eprintln!(
            "warning: {} of {} probe requests failed and are left out of the accuracy, the first because {}",
            failed.len(),
            out.compactions.len(),
            first.error.as_deref().unwrap_or_default()
        );
    }
    if let Some(dir) = &args.out {
        write(dir, &out).with_context(|| format!("cannot write the probes to {}", dir.display()))?;
    }
    let text = if args.json {
        serde_json::to_string_pretty(&out).context("cannot serialize the probes")? + "\n"
    } else {
        table(&out)
    };
    if out.compactions.is_empty() && !loaded.quiet {
        eprintln!("no compaction with needed atoms to ask about");
    }
    super::print_stdout(&text)
}

/// Ask the model one compaction's questions, in one request.
fn ask(client: &LlmSummarizer, s: &Session, e: &Explained, max: usize) -> Probed {
    let kept: Vec<&Message> = e.kept.iter().flat_map(|r| r.clone()).filter_map(|i| s.messages.get(i)).collect();
    let kept_text = serialize_transcript(&kept, &KEPT_LIMITS);
    let probes = probe::probes(&e.needed, &format!("{}\n{kept_text}", e.summary), max);
    let user = probe::prompt(&e.summary, &kept_text, &probes);
    let max_tokens = u32::try_from(64 * probes.len() + 256).unwrap_or(u32::MAX);
    let asked = client.ask_blocking(probe::SYSTEM, &user, max_tokens);
    let (answers, error) = match asked.answer {
        Ok(text) => (probe::parse_answers(&text, probes.len()), None),
        Err(why) => (vec![None; probes.len()], Some(why)),
    };
    let n = probes.len().max(1) as f64;
    let in_context = probes.iter().filter(|p| p.in_context).count() as f64 / n;
    let graded: Vec<Asked> = probes
        .into_iter()
        .zip(answers)
        .map(|(probe, answer)| {
            let correct = error.is_none() && probe::grade(&probe, answer.as_deref());
            Asked { probe, answer, correct }
        })
        .collect();
    let right = graded.iter().filter(|a| a.correct).count() as f64;
    Probed {
        session: s.id.clone(),
        candidate: e.policy.clone(),
        index: e.index,
        frr: e.frr,
        in_context: Some(in_context),
        accuracy: error.is_none().then_some(right / n),
        error,
        probes: graded,
    }
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// Totals per candidate, in order of first appearance.
fn totals(probed: &[Probed]) -> Vec<Total> {
    let mut names: Vec<&str> = Vec::new();
    for p in probed {
        if !names.contains(&p.candidate.as_str()) {
            names.push(&p.candidate);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mine: Vec<&Probed> = probed.iter().filter(|p| p.candidate == name).collect();
            let answered: Vec<&&Probed> = mine.iter().filter(|p| p.error.is_none()).collect();
            let asked: Vec<&Asked> = answered.iter().flat_map(|p| &p.probes).collect();
            let pairs: Vec<(f64, f64)> = answered.iter().filter_map(|p| Some((p.frr?, p.accuracy?))).collect();
            let (xs, ys): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
            let share = |f: fn(&Asked) -> bool| {
                (!asked.is_empty()).then(|| asked.iter().filter(|a| f(a)).count() as f64 / asked.len() as f64)
            };
            Total {
                candidate: name.to_string(),
                compactions: mine.len(),
                probes: asked.len(),
                in_context: share(|a| a.probe.in_context),
                accuracy: share(|a| a.correct),
                frr: mean(answered.iter().filter_map(|p| p.frr)),
                rank_correlation: probe::spearman(&xs, &ys),
                failed: mine.len() - answered.len(),
            }
        })
        .collect()
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |x| format!("{:.1}%", x * 100.0))
}

fn table(out: &Output) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<24} {:>11} {:>7} {:>10} {:>9} {:>7} {:>9}",
        "candidate", "compactions", "probes", "in S ∪ T", "accuracy", "FRR", "rank ρ"
    );
    for t in &out.totals {
        let rho = t.rank_correlation.map_or_else(|| "–".into(), |r| format!("{r:+.2}"));
        let _ = writeln!(
            s,
            "{:<24} {:>11} {:>7} {:>10} {:>9} {:>7} {:>9}",
            super::inspect::clean(&t.candidate, 24),
            t.compactions,
            t.probes,
            pct(t.in_context),
            pct(t.accuracy),
            pct(t.frr),
            rho
        );
    }
    let _ = writeln!(
        s,
        "\nanswered by {}. in S ∪ T: questions whose atom is in the summary or the kept messages; accuracy: \
answers that hold the atom exactly; rank ρ: Spearman's correlation of FRR and accuracy across compactions.",
        out.model
    );
    s
}

/// probes.json (everything) and probes.csv (one row per question).
fn write(dir: &std::path::Path, out: &Output) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_vec_pretty(out)?;
    compactor::output::fsutil::atomic_write(&dir.join("probes.json"), &json)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "session",
        "candidate",
        "compaction",
        "frr",
        "kind",
        "value",
        "weight",
        "in_context",
        "answer",
        "correct",
        "question",
    ])?;
    for p in &out.compactions {
        for a in &p.probes {
            w.write_record([
                p.session.as_str(),
                &p.candidate,
                &p.index.to_string(),
                &p.frr.map_or_else(String::new, |f| f.to_string()),
                a.probe.kind.name(),
                &a.probe.value,
                &a.probe.weight.to_string(),
                &a.probe.in_context.to_string(),
                a.answer.as_deref().unwrap_or(""),
                &a.correct.to_string(),
                &a.probe.question,
            ])?;
        }
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    compactor::output::fsutil::atomic_write(&dir.join("probes.csv"), &bytes)?;
    Ok(())
}
