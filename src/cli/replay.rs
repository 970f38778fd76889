//! `compactor replay` and `compactor compare`: resolve the policies, replay every
//! session through each of them in parallel, write the reports under `--out`, and
//! print a summary (or report.json with `--json`). Sessions stream: each is read,
//! replayed, written and dropped by one worker; only its report rows stay.

use super::args::{CostArgs, LlmArgs, PolicyArgs, ReplayArgs};
use super::load::{discover, print_failures, print_session_warnings};
use super::{EXIT_ERROR, EXIT_OK, EXIT_REGRESSION};
use anyhow::{Context, bail};
use compactor::cost::{CacheTtl, CostSettings, PriceTable};
use compactor::model::Session;
use compactor::pipeline::{InputList, Prepare, SessionKey, SessionResults, Stages, StreamProgress, replay_stream};
use compactor::policy::Policy;
use compactor::presets;
use compactor::replay::{BuiltinResolver, ReplayError, ReplayOptions, Resolver};
use compactor::report::html::KeptCharts;
use compactor::report::partial::{Header, PartialSession, ReplayPartial, SummarizerCounts};
use compactor::report::write::{SessionWriter, WriteOptions, Written};
use compactor::report::{self, Report, SessionSummary};
use compactor::summarize::{Summarizer, SummarizerKind};
use compactor::tokens::{self, Estimator, EstimatorKind, Meter};
use std::io::Write;
use std::sync::Arc;

/// Build the policies named by `--preset` / `--policy`, then apply `--estimator`,
/// `--summarizer` and every `--set` to each. Errors name the preset, file or key.
pub fn resolve_policies(args: &PolicyArgs, default_presets: &[&str]) -> anyhow::Result<Vec<Policy>> {
    let mut policies = Vec::new();
    for name in &args.presets {
        let p = presets::get(name).with_context(|| super::suggest::unknown_preset(name))?;
        policies.push(p);
    }
    for file in &args.policy_files {
        let text = std::fs::read_to_string(file).with_context(|| format!("cannot read policy {}", file.display()))?;
        let mut p = Policy::from_toml(&text).with_context(|| format!("invalid policy {}", file.display()))?;
        if p.name.trim().is_empty() {
            p.name = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "policy".into());
        }
        anchor_paths(&mut p, file.parent().unwrap_or(std::path::Path::new("")));
        policies.push(p);
    }
    let defaulted = policies.is_empty();
    if defaulted {
        for name in default_presets {
            policies.push(presets::require(name)?);
        }
    }
    let mut kept = Vec::with_capacity(policies.len());
    let mut first_error = None;
    for mut p in policies {
        match apply_overrides(&mut p, args) {
            Ok(()) => kept.push(p),
            // Of several presets the user did not name, one the overrides make
            // invalid (a window smaller than its reserve) is left out, said so.
            Err(e) if defaulted && default_presets.len() > 1 => {
                eprintln!(
                    "warning: default preset `{}` left out: {:#} (--preset NAME chooses the presets)",
                    p.name,
                    e.root_cause()
                );
                first_error.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    if let (true, Some(e)) = (kept.is_empty(), first_error) {
        return Err(e);
    }
    let mut policies = kept;
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

/// Paths in a policy file are read from the file's folder: the summarizer
/// program's folder (the file's own when not set) and the prompt files.
fn anchor_paths(p: &mut Policy, dir: &std::path::Path) {
    let anchored = |path: &str| -> String {
        if path.trim().is_empty() || std::path::Path::new(path).is_absolute() || dir.as_os_str().is_empty() {
            return path.to_string();
        }
        dir.join(path).to_string_lossy().into_owned()
    };
    let c = &mut p.compact;
    if !c.command.is_empty() {
        c.command_dir = match c.command_dir.trim() {
            "" if dir.as_os_str().is_empty() => String::new(),
            "" => dir.to_string_lossy().into_owned(),
            d => anchored(d),
        };
    }
    c.llm.prompt_file = anchored(&c.llm.prompt_file);
    c.llm.update_prompt_file = anchored(&c.llm.update_prompt_file);
}

/// Apply `--estimator`, `--summarizer` and every `--set` to `p`, then
/// validate it. Errors name the flag and the policy.
pub fn apply_overrides(p: &mut Policy, args: &PolicyArgs) -> anyhow::Result<()> {
    if let Some(e) = &args.estimator {
        p.set("estimator", e).with_context(|| format!("--estimator {e}"))?;
    }
    if let Some(s) = &args.summarizer {
        p.set("compact.summarizer", s).with_context(|| format!("--summarizer {s}"))?;
    }
    if let Some(cmd) = &args.summarizer_command {
        let what = || format!("--summarizer-command {cmd}");
        p.set("compact.command", cmd).with_context(what)?;
        p.compact.summarizer = SummarizerKind::Command;
        // Relative to where the command is typed.
        p.compact.command_dir = String::new();
    }
    for kv in &args.sets {
        p.apply_assignment(kv).with_context(|| format!("--set {kv} (policy `{}`)", p.name))?;
        let key = kv.split_once('=').map_or(kv.as_str(), |(k, _)| k).trim();
        if let Some(why) = p.ineffective(key) {
            eprintln!("warning: --set {kv} changes nothing in policy `{}`: {why}", p.name);
        }
    }
    p.validate().with_context(|| format!("policy `{}`", p.name))?;
    Ok(())
}

/// Estimators and summarizers for the CLI: every estimator, the built-in
/// summarizers, and the LLM summarizer when configured. One shared object per
/// kind, so policies with the same estimator share token counts.
pub struct CliResolver {
    estimators: Vec<(EstimatorKind, Arc<dyn Estimator>)>,
    llm: Option<Arc<super::llm::LlmAdapters>>,
    commands: Option<Arc<super::command::Commands>>,
}

impl CliResolver {
    pub fn new(
        llm: Option<Arc<super::llm::LlmAdapters>>,
        commands: Option<Arc<super::command::Commands>>,
    ) -> CliResolver {
        let kinds = [EstimatorKind::Chars4, EstimatorKind::PerBlock, EstimatorKind::O200k, EstimatorKind::Cl100k];
        let estimators = kinds.iter().map(|&k| (k, Arc::new(StaticEstimator(tokens::estimator(k))) as _)).collect();
        CliResolver { estimators, llm, commands }
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
    fn tokens_of_chars(&self, chars: u64) -> Option<u64> {
        self.0.tokens_of_chars(chars)
    }
    fn adds_up_over_lines(&self) -> bool {
        self.0.adds_up_over_lines()
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
            SummarizerKind::Command => {
                Err(ReplayError::Summarizer("command (give compact.command or --summarizer-command)".to_string()))
            }
            other => BuiltinResolver.summarizer(other),
        }
    }

    fn summarizer_for(&self, policy: &Policy) -> Result<Arc<dyn Summarizer>, ReplayError> {
        match policy.compact.summarizer {
            SummarizerKind::Llm => self.llm.as_ref().and_then(|l| l.for_policy(policy)).ok_or_else(|| {
                ReplayError::Summarizer("llm (give --llm-base-url and --llm-model to use it)".to_string())
            }),
            SummarizerKind::Command => self.commands.as_ref().and_then(|c| c.for_policy(policy)).ok_or_else(|| {
                ReplayError::Summarizer("command (give compact.command or --summarizer-command)".to_string())
            }),
            other => BuiltinResolver.summarizer(other),
        }
    }
}

/// The command a replay runs for: its default presets, and the name its
/// shards record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    Replay,
    Compare,
    Check,
}

impl Run {
    fn default_presets(self) -> &'static [&'static str] {
        match self {
            Run::Compare => COMPARE_DEFAULT,
            Run::Replay | Run::Check => &["default"],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Run::Replay => "replay",
            Run::Compare => "compare",
            Run::Check => "check",
        }
    }
}

/// What a replay produced: the report, and the outputs already written under
/// `--out` (transcripts and calls.csv rows, put in place by [`finish`]).
pub struct Replayed {
    pub report: Report,
    outputs: Option<Outputs>,
    /// A shard's run (`--shard`): what its partial.json records besides the
    /// files' places and the charts, which the writer adds.
    partial: Option<ReplayPartial>,
}

struct Outputs {
    writer: SessionWriter,
    /// Per session in report order.
    written: Vec<(SessionKey, Written)>,
}

impl Replayed {
    /// Write the reports under `--out` now (each session's own files were
    /// written while it was replayed); without `--out`, nothing. `finish`
    /// does this itself; `compactor check`, which prints its own output,
    /// calls it.
    pub fn write_reports(&mut self) -> std::io::Result<()> {
        if let Some(outputs) = self.outputs.take() {
            write_outputs(&self.report, outputs, self.partial.take())?;
        }
        Ok(())
    }

    /// What `check` records in a shard's partial for the merge to compare.
    pub fn set_check(&mut self, check: serde_json::Value) {
        if let Some(p) = &mut self.partial {
            p.check = Some(check);
        }
    }

    /// The shard this run is, if it is one.
    pub fn shard(&self) -> Option<compactor::pipeline::Shard> {
        self.partial.as_ref().map(|p| p.header.shard)
    }
}

/// The reports, and for a shard its partial.json with each session's files
/// and the charts kept.
fn write_outputs(
    report: &Report,
    outputs: Outputs,
    partial: Option<ReplayPartial>,
) -> std::io::Result<Vec<std::path::PathBuf>> {
    let Outputs { writer, written } = outputs;
    let sessions: Vec<(&SessionKey, &Written)> = written.iter().map(|(k, w)| (k, w)).collect();
    let make = partial.map(|mut p| -> compactor::report::write::MakePartial<'_> {
        Box::new(move |files, charts| {
            for (s, f) in p.sessions.iter_mut().zip(files) {
                s.files = f;
            }
            p.charts = charts;
            if p.redact {
                redact_partial(&mut p)?;
            }
            serde_json::to_vec(&p).map_err(std::io::Error::other)
        })
    });
    writer.finish_with(report, &sessions, make)
}

/// What the replay keeps of each session once it is written and dropped.
struct Kept {
    summary: SessionSummary,
    /// The session's calls (none under a `--format` that does not fit).
    calls: usize,
    written: Option<std::io::Result<Written>>,
}

/// Discover, then read, replay and write each session as a stream (memory holds
/// the sessions in flight, not the corpus), and build the report.
pub fn run_replay(args: &ReplayArgs, input: super::args::InputArgs, command: Run) -> anyhow::Result<Replayed> {
    let policies = resolve_policies(&args.policy, command.default_presets())?;
    let cost = cost_settings(&args.cost, &args.llm)?;
    let llm = super::llm::adapter(&args.llm, &policies)?;
    let commands = super::command::programs(&args.llm, &policies)?;
    let found = discover(input)?;
    let shard = args.split.shard;
    super::shard::require_out(shard, args.out.as_deref(), "--shard")?;
    let (select, families) = super::shard::select(shard, &found.inputs, found.format)?;
    let resolver = CliResolver::new(llm.clone(), commands.clone());
    let options = ReplayOptions {
        check_invariants: args.check_invariants,
        verify_totals: false,
        keep_transcript: args.out.is_some() && !args.no_transcripts,
        meter: cost.meter,
    };
    let in_run = select.as_ref().map_or(found.inputs.len(), |s| s.iter().filter(|x| **x).count());
    let bar = super::load::progress_bar("replaying {pos}/{len} files", in_run as u64, found.quiet);
    let tick = |p: StreamProgress| bar.set_position(p.inputs_done as u64);
    // An LLM summarizer blocks the replay thread that asks it; to keep
    // --llm-concurrency requests in flight, replay on at least that many threads
    // (the CPU work stays bounded by the cores anyway).
    let waiting = llm.as_ref().map_or(0, |a| a.concurrency()) + commands.as_ref().map_or(0, |c| c.concurrency());
    let wide = super::load::wide_pool(&found.pool, waiting)?;
    let pool = wide.as_ref().unwrap_or(&found.pool);
    let names: Vec<String> = policies.iter().map(|p| p.name.clone()).collect();
    let writer = args
        .out
        .as_ref()
        .map(|out| SessionWriter::new(out, &names, WriteOptions { transcripts: !args.no_transcripts }));
    let sink = |key: &SessionKey, session: &Session, results: SessionResults| Kept {
        summary: report::summarize(session, &policies, &results, Some(&cost)),
        calls: session.calls.len(),
        written: writer.as_ref().map(|w| w.write_session(key, &results)),
    };
    // Each session's own window (`context_window = "auto"`), found after reading.
    let redact_too = args.redact;
    let prepare = |s: &mut Session| {
        s.meta.window = Some(cost.table.windows.resolve(s));
        if redact_too {
            compactor::redact::redact_session(s);
        }
    };
    // Quality is scored inside each session's task, right after its replays.
    let plan = (!args.no_quality).then(|| compactor::quality::QualityPlan::new(&policies, &resolver));
    let stages = Stages {
        prepare: Some(&prepare as Prepare<'_>),
        quality: plan.as_ref(),
        sink: &sink,
        select: select.as_deref(),
        families: families.as_ref(),
    };
    let streamed =
        replay_stream(&found.inputs, found.format, &policies, &resolver, options, pool, Some(&tick), &stages);
    bar.finish_and_clear();

    // Diagnostics as reading everything first printed them: failed inputs,
    // then each session's warnings by source path.
    print_failures(&streamed.failures, found.quiet);
    if !found.quiet {
        let mut by_path: Vec<&(SessionKey, Kept)> = streamed.sessions.iter().collect();
        by_path.sort_by(|a, b| {
            (&a.0.source_path, &a.0.session_id, a.0.input, a.0.index).cmp(&(
                &b.0.source_path,
                &b.0.session_id,
                b.0.input,
                b.0.index,
            ))
        });
        for (key, kept) in by_path {
            print_session_warnings(&key.source_path, &kept.summary.warnings, kept.summary.unlisted_warnings);
        }
    }

    // Returning drops the writer, and with it the files staged so far: --out
    // keeps what an earlier run left there.
    if compactor::interrupt::requested() {
        bail!("interrupted");
    }
    // A shard may hold nothing; the merge tells whether the run read anything.
    if streamed.inputs_read == 0 && shard.is_none() {
        bail!("no session could be read ({} input(s) failed)", streamed.failures.len());
    }
    let calls = streamed.sessions.iter().map(|(k, kept)| (k.source_path.as_path(), kept.calls));
    let mine = super::shard::selected(&found.inputs, select.as_deref());
    super::preflight::require_calls(found.format, &mine, &streamed.failures, calls, shard.is_none())?;
    let mut summaries = Vec::with_capacity(streamed.sessions.len());
    let mut written = Vec::with_capacity(streamed.sessions.len());
    // A shard's sessions: key and calls now, the summary once the report has
    // copied its rows.
    let mut keys = Vec::new();
    let mut write_error = None;
    for (key, kept) in streamed.sessions {
        if shard.is_some() {
            keys.push((key.clone(), kept.calls));
        }
        summaries.push(kept.summary);
        match kept.written {
            Some(Ok(w)) => written.push((key, w)),
            Some(Err(e)) => write_error = write_error.or(Some(e)),
            None => {}
        }
    }
    if let (Some(e), Some(out)) = (write_error, &args.out) {
        return Err(anyhow::Error::new(e).context(format!("cannot write the reports to {}", out.display())));
    }
    let mut report = report::build_from_summaries(
        &found.paths,
        streamed.inputs_read,
        &streamed.failures,
        &policies,
        &summaries,
        args.check_invariants,
    );
    report.run.meter = report::MeterInfo::of(cost.meter, &report.sessions);
    if let Some(a) = &llm {
        report.diagnostics.summarizer_fallbacks = a.fallbacks();
        report.diagnostics.llm_summaries = Some(a.summaries());
    }
    if let Some(c) = &commands {
        report.diagnostics.summarizer_fallbacks.extend(c.failures());
        report.diagnostics.summarizer_fallbacks.sort();
        report.diagnostics.command_summaries = Some(c.stats());
    }
    report.total_costs(&cost);
    let partial = match shard {
        Some(s) => {
            let mut header = Header::new(command.name(), s, &found.paths, InputList::of(&found.inputs), &policies);
            let flags = [
                ("check_invariants", args.check_invariants),
                ("no_quality", args.no_quality),
                ("no_transcripts", args.no_transcripts),
                ("redact", args.redact),
            ];
            header.settings = super::shard::settings(&args.input, &args.llm, &policies, &cost, &flags)?;
            let d = &report.diagnostics;
            Some(ReplayPartial {
                header,
                check_invariants: args.check_invariants,
                cost: cost.clone(),
                redact: args.redact,
                inputs_read: streamed.inputs_read,
                failures: streamed.failures.clone(),
                sessions: keys
                    .into_iter()
                    .zip(summaries)
                    .map(|((key, calls), summary)| PartialSession::new(key, summary, calls))
                    .collect(),
                charts: KeptCharts::empty(0),
                summarizers: SummarizerCounts {
                    fallbacks: d.summarizer_fallbacks.clone(),
                    llm: d.llm_summaries.clone(),
                    command: d.command_summaries.clone(),
                },
                check: None,
            })
        }
        None => None,
    };
    if args.redact {
        // A last pass for text made after reading: error and fallback reasons
        // (which can quote a server's answer), paths.
        report = compactor::redact::redact_serde(&report).context("cannot redact the report")?;
    }
    Ok(Replayed { report, outputs: writer.map(|writer| Outputs { writer, written }), partial })
}

/// `--prices`, `--model`, `--cache-ttl` (and `--llm-model` for the summaries'
/// price) as cost settings. A bad prices file, or a `--model` that names no
/// family of the table, fails before any work starts.
pub fn cost_settings(args: &CostArgs, llm: &LlmArgs) -> anyhow::Result<CostSettings> {
    let table = match &args.prices {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read prices {}", path.display()))?;
            PriceTable::from_toml(&text).with_context(|| format!("invalid prices {}", path.display()))?
        }
        None => PriceTable::builtin(),
    };
    if let Some(model) = &args.model {
        super::suggest::require_model(&table, model)?;
    }
    let ttl = match &args.cache_ttl {
        Some(t) => CacheTtl::parse(t).context("--cache-ttl")?,
        None => CacheTtl::Auto,
    };
    let meter = match &args.meter {
        Some(m) => m.parse::<Meter>().context("--meter")?,
        None => Meter::Recorded,
    };
    Ok(CostSettings { table, ttl, model_override: args.model.clone(), summarizer_model: llm.llm_model.clone(), meter })
}

/// `--redact` on what a partial holds of the sessions, as on the report (the
/// keys stay: they name the shard's files, and the merged report is redacted
/// again).
fn redact_partial(p: &mut ReplayPartial) -> std::io::Result<()> {
    use compactor::redact::redact_serde;
    let failed = || std::io::Error::other("cannot redact the partial");
    for s in &mut p.sessions {
        s.summary = redact_serde(&s.summary).ok_or_else(failed)?;
    }
    p.failures = redact_serde(&p.failures).ok_or_else(failed)?;
    p.summarizers = redact_serde(&p.summarizers).ok_or_else(failed)?;
    Ok(())
}

/// Put the outputs in place and print; the exit code says whether invariants held.
pub fn finish(args: &ReplayArgs, replayed: Replayed, stdout_text: String) -> anyhow::Result<u8> {
    let Replayed { report, outputs, partial } = replayed;
    let shard = partial.as_ref().map(|p| p.header.shard);
    if let (Some(outputs), Some(out)) = (outputs, &args.out) {
        write_outputs(&report, outputs, partial)
            .with_context(|| format!("cannot write the reports to {}", out.display()))?;
    }
    let mut text = stdout_text;
    if let (Some(s), Some(out), false) = (shard, &args.out, args.json) {
        let inputs = report.run.inputs_read + report.diagnostics.failed_inputs.len();
        text.push_str(&super::shard::note(format_args!("shard {s}"), out, report.run.sessions, inputs));
    }
    conclude(&report, args.json, args.check_invariants, shard.is_none(), text)
}

/// Print a replay's outcome (report.json with `json`, else `text`) and pick
/// the exit code: what `replay` and `compare` do once their outputs are
/// written, and a merge of their shards. `whole`: a run, not one shard of it.
pub fn conclude(report: &Report, json: bool, check_invariants: bool, whole: bool, text: String) -> anyhow::Result<u8> {
    for row in report.sessions.iter().filter(|r| r.error.is_some()) {
        eprintln!(
            "{}: session {} under `{}`: {}",
            row.source_path,
            row.session_id,
            row.policy,
            row.error.as_deref().unwrap_or_default()
        );
    }
    let text = if json { String::from_utf8_lossy(&report::to_json(report)).into_owned() } else { text };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("error: cannot write to standard output: {e}");
            return Ok(EXIT_ERROR);
        }
    }
    if report.sessions.iter().all(|r| r.error.is_some()) && !report.sessions.is_empty() && whole {
        bail!("no session could be replayed");
    }
    let d = &report.diagnostics;
    let fallbacks =
        super::fallbacks::Fallbacks { llm: d.llm_summaries.as_ref(), command: d.command_summaries.as_ref() };
    fallbacks.warn(!whole);
    if whole {
        fallbacks.refuse(super::fallbacks::Then::WentOn)?;
    }
    let violations: u64 = report.aggregates.iter().map(|a| a.violations).sum();
    if check_invariants && violations > 0 {
        eprint!("{}", violations_text(report, violations));
        // A shard's partial is written: the merge gives the run's exit code.
        return Ok(if whole { EXIT_REGRESSION } else { EXIT_OK });
    }
    Ok(EXIT_OK)
}

/// How many invariants broke, and the first few: policy, session, call (as
/// `calls.csv` numbers them) and what broke.
fn violations_text(report: &Report, violations: u64) -> String {
    const SHOWN: usize = 5;
    let mut text = format!("{violations} invariant violation(s):\n");
    let listed = report.sessions.iter().flat_map(|r| r.violations_listed.iter().map(move |v| (r, v)));
    for (r, v) in listed.take(SHOWN) {
        text.push_str(&format!(
            "  {}: session {} ({}), call {}: {}\n",
            r.policy,
            r.session_id,
            r.source_path,
            v.call,
            v.violation.describe()
        ));
    }
    text.push_str("  each session's, in report.json (--out DIR, or --json): sessions[].violations_listed\n");
    text
}

/// What `replay` prints: warnings on stderr, the summary (and where the
/// reports went) returned.
pub fn replay_text(report: &Report, out: Option<&std::path::Path>, quiet: bool) -> String {
    eprint!("{}", report::terminal::warnings(report));
    let mut text = report::terminal::summary(report, quiet);
    if let (Some(out), false) = (out, quiet) {
        text.push_str(&format!("reports written to {}\n", out.display()));
    }
    text
}

/// What `compare` prints: the run and the policies side by side.
pub fn compare_text(r: &Report, out: Option<&std::path::Path>) -> String {
    let mut text = report::markdown::run_header(r);
    let quality = report::quality::policy_scores(r);
    text.push_str(&report::compare::compare_text(&report::compare::columns(r, &quality)));
    if let Some(out) = out {
        text.push_str(&format!("reports written to {}\n", out.display()));
    }
    text
}

pub fn replay(args: ReplayArgs) -> anyhow::Result<u8> {
    if let Some(out) = &args.out {
        super::preflight::out_dir("--out", out)?;
    }
    let input = args.input.clone();
    let replayed = run_replay(&args, input, Run::Replay)?;
    let text = replay_text(&replayed.report, args.out.as_deref(), args.input.quiet);
    finish(&args, replayed, text)
}

/// The presets `compare` runs when none is named: the five reference designs.
pub const COMPARE_DEFAULT: &[&str] = &["default", "nous", "vibe", "opal", "dotnet", "spec008"];

pub fn compare(args: ReplayArgs) -> anyhow::Result<u8> {
    if let Some(out) = &args.out {
        super::preflight::out_dir("--out", out)?;
    }
    let input = args.input.clone();
    let replayed = run_replay(&args, input, Run::Compare)?;
    let text = compare_text(&replayed.report, args.out.as_deref());
    finish(&args, replayed, text)
}
