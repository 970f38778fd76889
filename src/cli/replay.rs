//! `compactor replay` and `compactor compare`: resolve the policies, replay every
//! session through each of them in parallel, write the reports under `--out`, and
//! print a summary (or report.json with `--json`).

use super::args::{CostArgs, LlmArgs, PolicyArgs, ReplayArgs};
use super::load::load;
use super::{EXIT_ERROR, EXIT_OK, EXIT_REGRESSION};
use anyhow::{Context, bail};
use compactor::cost::{CacheTtl, CostSettings, PriceTable};
use compactor::policy::Policy;
use compactor::presets;
use compactor::replay::{BuiltinResolver, ReplayError, ReplayOptions, Resolver, SessionResults, replay_many_scored};
use compactor::report::{self, Report, write::WriteOptions};
use compactor::summarize::{Summarizer, SummarizerKind};
use compactor::tokens::{self, Estimator, EstimatorKind};
use std::io::{IsTerminal, Write};
use std::sync::Arc;

/// Build the policies named by `--preset` / `--policy`, then apply `--estimator`,
/// `--summarizer` and every `--set` to each. Errors name the preset, file or key.
pub fn resolve_policies(args: &PolicyArgs, default_presets: &[&str]) -> anyhow::Result<Vec<Policy>> {
    let mut policies = Vec::new();
    for name in &args.presets {
        let p = presets::get(name).with_context(|| {
            format!("unknown preset `{name}` (known: {}; see `compactor presets`)", presets::names().join(", "))
        })?;
        policies.push(p);
    }
    for file in &args.policy_files {
        let text = std::fs::read_to_string(file).with_context(|| format!("cannot read policy {}", file.display()))?;
        let mut p = Policy::from_toml(&text).with_context(|| format!("invalid policy {}", file.display()))?;
        if p.name.trim().is_empty() {
            p.name = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "policy".into());
        }
        policies.push(p);
    }
    if policies.is_empty() {
        for name in default_presets {
            policies.push(presets::require(name)?);
        }
    }
    for p in &mut policies {
        if let Some(e) = &args.estimator {
            p.set("estimator", e).with_context(|| format!("--estimator {e}"))?;
        }
        if let Some(s) = &args.summarizer {
            p.set("compact.summarizer", s).with_context(|| format!("--summarizer {s}"))?;
        }
        for kv in &args.sets {
            p.apply_assignment(kv).with_context(|| format!("--set {kv} (policy `{}`)", p.name))?;
        }
        p.validate().with_context(|| format!("policy `{}`", p.name))?;
    }
    // Names key the report rows and the transcript folders: keep them unique.
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for p in &mut policies {
        let n = seen.entry(p.name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            p.name = format!("{}-{}", p.name, n);
        }
    }
    Ok(policies)
}

/// Estimators and summarizers for the CLI: every estimator, the built-in
/// summarizers, and the LLM summarizer when configured. One shared object per
/// kind, so policies with the same estimator share token counts.
pub struct CliResolver {
    estimators: Vec<(EstimatorKind, Arc<dyn Estimator>)>,
    llm: Option<Arc<super::llm::LlmAdapters>>,
}

impl CliResolver {
    pub fn new(llm: Option<Arc<super::llm::LlmAdapters>>) -> CliResolver {
        let kinds = [EstimatorKind::Chars4, EstimatorKind::PerBlock, EstimatorKind::O200k, EstimatorKind::Cl100k];
        let estimators = kinds.iter().map(|&k| (k, Arc::new(StaticEstimator(tokens::estimator(k))) as _)).collect();
        CliResolver { estimators, llm }
    }
}

/// An `Arc`-able handle on one of the estimator statics.
struct StaticEstimator(&'static dyn Estimator);

impl Estimator for StaticEstimator {
    fn kind(&self) -> EstimatorKind {
        self.0.kind()
    }
    fn text_tokens(&self, text: &str) -> u64 {
        self.0.text_tokens(text)
    }
    fn message_tokens(&self, m: &compactor::model::Message) -> u64 {
        self.0.message_tokens(m)
    }
    fn block_tokens(&self, b: &compactor::model::Block) -> u64 {
        self.0.block_tokens(b)
    }
}

impl Resolver for CliResolver {
    fn estimator(&self, kind: EstimatorKind) -> Result<Arc<dyn Estimator>, ReplayError> {
        // `calibrated` corrects chars/4 with recorded usage (pi, Opal).
        let base = if kind == EstimatorKind::Calibrated { EstimatorKind::Chars4 } else { kind };
        self.estimators
            .iter()
            .find(|(k, _)| *k == base)
            .map(|(_, e)| e.clone())
            .ok_or_else(|| ReplayError::Estimator(kind.to_string()))
    }

    fn summarizer(&self, kind: SummarizerKind) -> Result<Arc<dyn Summarizer>, ReplayError> {
        match kind {
            // LLM summarizers are per policy (prompt, endpoint): see summarizer_for.
            SummarizerKind::Llm => {
                Err(ReplayError::Summarizer("llm (give --llm-base-url and --llm-model to use it)".to_string()))
            }
            other => BuiltinResolver.summarizer(other),
        }
    }

    fn summarizer_for(&self, policy: &Policy) -> Result<Arc<dyn Summarizer>, ReplayError> {
        match policy.compact.summarizer {
            SummarizerKind::Llm => self.llm.as_ref().and_then(|l| l.for_policy(policy)).ok_or_else(|| {
                ReplayError::Summarizer("llm (give --llm-base-url and --llm-model to use it)".to_string())
            }),
            other => BuiltinResolver.summarizer(other),
        }
    }
}

/// Everything a replay produced, before it is written.
pub struct Replayed {
    pub results: Vec<SessionResults>,
    pub report: Report,
}

/// Load, resolve, replay, build the report.
pub fn run_replay(
    args: &ReplayArgs,
    input: super::args::InputArgs,
    default_presets: &[&str],
) -> anyhow::Result<Replayed> {
    let policies = resolve_policies(&args.policy, default_presets)?;
    let cost = cost_settings(&args.cost, &args.llm)?;
    let llm = super::llm::adapter(&args.llm, &policies)?;
    let mut loaded = load(input)?;
    if args.redact {
        use rayon::prelude::*;
        loaded.pool.install(|| loaded.batch.sessions.par_iter_mut().for_each(compactor::redact::redact_session));
    }
    let resolver = CliResolver::new(llm.clone());
    let options = ReplayOptions {
        check_invariants: args.check_invariants,
        verify_totals: false,
        keep_transcript: args.out.is_some() && !args.no_transcripts,
    };
    let sessions = &loaded.batch.sessions;
    let bar = progress_bar(sessions.len() as u64, loaded.quiet);
    let tick = |_: compactor::replay::Progress<'_>| bar.inc(1);
    // An LLM summarizer blocks the replay thread that asks it; to keep
    // --llm-concurrency requests in flight, replay on at least that many threads
    // (the CPU work stays bounded by the cores anyway).
    let wide;
    let pool = match &llm {
        Some(a) if a.concurrency() > loaded.pool.current_num_threads() => {
            wide = super::load::thread_pool(Some(a.concurrency()))?;
            &wide
        }
        _ => &loaded.pool,
    };
    // Quality is scored inside each session's task, right after its replays.
    let plan = (!args.no_quality).then(|| compactor::quality::QualityPlan::new(&policies, &resolver));
    let results = replay_many_scored(sessions, &policies, &resolver, options, pool, Some(&tick), plan.as_ref());
    bar.finish_and_clear();
    if compactor::interrupt::requested() {
        bail!("interrupted");
    }
    let mut report = report::build(
        &loaded.paths,
        loaded.batch.inputs_read,
        sessions,
        &loaded.batch.failures,
        &policies,
        &results,
        args.check_invariants,
    );
    if let Some(a) = &llm {
        report.diagnostics.summarizer_fallbacks = a.fallbacks();
    }
    compactor::cost::attach(&mut report, sessions, &results, &cost);
    if args.redact {
        // A last pass for text made after reading: error and fallback reasons
        // (which can quote a server's answer), paths.
        report = compactor::redact::redact_serde(&report).context("cannot redact the report")?;
    }
    Ok(Replayed { results, report })
}

/// `--prices`, `--model`, `--cache-ttl` (and `--llm-model` for the summaries'
/// price) as cost settings. A bad prices file fails before any work starts.
pub fn cost_settings(args: &CostArgs, llm: &LlmArgs) -> anyhow::Result<CostSettings> {
    let table = match &args.prices {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read prices {}", path.display()))?;
            PriceTable::from_toml(&text).with_context(|| format!("invalid prices {}", path.display()))?
        }
        None => PriceTable::builtin(),
    };
    let ttl = match &args.cache_ttl {
        Some(t) => CacheTtl::parse(t).context("--cache-ttl")?,
        None => CacheTtl::FiveMinutes,
    };
    Ok(CostSettings { table, ttl, model_override: args.model.clone(), summarizer_model: llm.llm_model.clone() })
}

fn progress_bar(len: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template(" {spinner} replaying {pos}/{len} sessions {wide_bar} {eta}")
    {
        bar.set_style(style);
    }
    bar
}

/// Write outputs and print; the exit code says whether invariants held.
pub fn finish(args: &ReplayArgs, replayed: &Replayed, stdout_text: String) -> anyhow::Result<u8> {
    let Replayed { report, results, .. } = replayed;
    for row in report.sessions.iter().filter(|r| r.error.is_some()) {
        eprintln!(
            "{}: session {} under `{}`: {}",
            row.source_path,
            row.session_id,
            row.policy,
            row.error.as_deref().unwrap_or_default()
        );
    }
    if let Some(out) = &args.out {
        report::write::write_all(out, report, results, WriteOptions { transcripts: !args.no_transcripts })
            .with_context(|| format!("cannot write the reports to {}", out.display()))?;
    }
    let text = if args.json { String::from_utf8_lossy(&report::to_json(report)).into_owned() } else { stdout_text };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("error: cannot write to standard output: {e}");
            return Ok(EXIT_ERROR);
        }
    }
    if report.sessions.iter().all(|r| r.error.is_some()) && !report.sessions.is_empty() {
        bail!("no session could be replayed");
    }
    let violations: u64 = report.aggregates.iter().map(|a| a.violations).sum();
    if args.check_invariants && violations > 0 {
        eprintln!("{violations} invariant violation(s): see report.json (sessions[].violations)");
        return Ok(EXIT_REGRESSION);
    }
    Ok(EXIT_OK)
}

pub fn replay(args: ReplayArgs) -> anyhow::Result<u8> {
    let input = args.input.clone();
    let replayed = run_replay(&args, input, &["default"])?;
    let mut text = report::markdown::summary_text(&replayed.report);
    text.push_str(&report::compare::cost_lines(&replayed.report));
    if let Some(out) = &args.out {
        text.push_str(&format!("reports written to {}\n", out.display()));
    }
    finish(&args, &replayed, text)
}

/// The presets `compare` runs when none is named: the five reference designs.
pub const COMPARE_DEFAULT: &[&str] = &["default", "nous", "vibe", "opal", "dotnet", "spec008"];

pub fn compare(args: ReplayArgs) -> anyhow::Result<u8> {
    let input = args.input.clone();
    let replayed = run_replay(&args, input, COMPARE_DEFAULT)?;
    let r = &replayed.report;
    let mut text = format!("{} session(s) replayed under {} policy(ies)\n", r.run.sessions, r.policies.len());
    let quality = report::quality::policy_scores(r);
    text.push_str(&report::compare::compare_text(&report::compare::columns(r, &quality)));
    if let Some(out) = &args.out {
        text.push_str(&format!("reports written to {}\n", out.display()));
    }
    finish(&args, &replayed, text)
}
