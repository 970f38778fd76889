//! `compactor check`: replay (with invariant checks and the quality pass),
//! compare with a baseline, print the markdown table, exit 1 on a regression.
//! The rules and the table live in `compactor::check`; this file resolves the
//! flags, checks that the outputs can be written and that the run can be
//! compared with the baseline (same policies, parameters and run settings:
//! exit 2 otherwise, before replaying), reads and writes the files, and picks
//! the exit code.

use super::args::{CheckArgs, InputArgs, LlmArgs, PolicyArgs, ReplayArgs};
use super::load::parse_format;
use super::preflight;
use super::replay::{resolve_policies, run_replay};
use super::{EXIT_OK, EXIT_REGRESSION, print_stdout};
use anyhow::{Context, bail};
use compactor::check::{self, Baseline, Coverage, MustKeep, ReplaySettings, RunSettings, Tolerances};
use compactor::output::fsutil::atomic_write;
use compactor::policy::Policy;
use compactor::report::export::{self, CheckRun};
use compactor::summarize::SummarizerKind;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// The run settings a baseline records besides the policies: what changes the
/// results without being a policy parameter. The `--llm-*` flags only when a
/// policy summarizes with the LLM (otherwise they change nothing); timeouts,
/// retries, concurrency and the cache are left out, as they do not change
/// what a summary says.
pub(super) fn run_settings(input: &InputArgs, llm: &LlmArgs, policies: &[Policy]) -> anyhow::Result<RunSettings> {
    let mut settings = RunSettings::new();
    let format = parse_format(input.format.clone())?;
    settings.insert("format".into(), format.map_or("auto", |f| f.name()).to_string());
    // What every size is measured with (`check` always uses the default meter).
    settings.insert("meter".into(), compactor::tokens::Meter::default().name().to_string());
    if policies.iter().any(|p| p.compact.summarizer == SummarizerKind::Llm) {
        let LlmArgs { llm_base_url, llm_api, llm_model, llm_max_tokens, llm_temperature, .. } = llm;
        for (key, value) in [
            ("llm.api", llm_api.clone()),
            ("llm.base_url", llm_base_url.clone()),
            ("llm.model", llm_model.clone()),
            ("llm.max_tokens", llm_max_tokens.map(|t| t.to_string())),
            ("llm.temperature", llm_temperature.map(|t| t.to_string())),
        ] {
            if let Some(v) = value {
                settings.insert(key.into(), v);
            }
        }
    }
    // What summarizes: a program's argv and files, a prompt file's text.
    settings.extend(super::command::identities(policies));
    settings.extend(super::llm::prompt_identities(policies)?);
    Ok(settings)
}

/// What may differ between the run and the baseline.
struct Allow {
    /// `--allow-new`.
    new: bool,
    /// `--allow-param-changes`.
    params: bool,
    /// `--write-baseline`: the baseline is being rewritten, so every
    /// difference is listed, none is an error.
    rewriting: bool,
}

/// Fail (exit 2) on what makes the run incomparable with the baseline; return
/// the notes for what is allowed or could not be compared.
fn gate(cov: &Coverage, path: &Path, allow: &Allow, quiet: bool) -> anyhow::Result<Vec<String>> {
    let mut errors = Vec::new();
    let mut notes = Vec::new();
    if !(allow.new || allow.rewriting) {
        // With --allow-new, `check::compare` marks them "not compared".
        for p in &cov.new_policies {
            errors.push(format!(
                "policy `{p}` is not in the baseline: nothing of it would be compared (--allow-new replays it anyway)"
            ));
        }
    }
    if !allow.rewriting {
        for p in &cov.missing_policies {
            errors.push(format!(
                "policy `{p}` is in the baseline but not replayed (give --preset {p}, or the --policy file that \
                 defines it)"
            ));
        }
    }
    let why = if allow.rewriting { "the baseline is rewritten" } else { "--allow-param-changes" };
    for c in cov.changed_values() {
        if allow.params || allow.rewriting {
            notes.push(format!("{c} (compared anyway: {why})"));
        } else {
            errors.push(c.to_string());
        }
    }
    for c in cov.unmatched_keys() {
        notes.push(format!("{c}: a key of another compactor version, not compared"));
    }
    let unrecorded = match (cov.params_unrecorded, cov.settings_unrecorded) {
        (true, _) => Some("policy parameters and run settings"),
        (false, true) => Some("run settings (--format, --llm-*)"),
        (false, false) => None,
    };
    if let Some(what) = unrecorded {
        let note = format!(
            "baseline {} records no {what} (an older baseline, or a report.json): they could not be compared; \
             rewrite it with --write-baseline to record them",
            path.display()
        );
        if !quiet {
            eprintln!("warning: {note}");
        }
        notes.push(note);
    }
    if !errors.is_empty() {
        bail!(
            "this run cannot be compared with baseline {}:\n  {}\nAfter an intended change, rewrite the baseline \
             (--baseline FILE --write-baseline FILE); to compare anyway, give --allow-param-changes (changed \
             parameters) or --allow-new (policies new to the baseline).",
            path.display(),
            errors.join("\n  ")
        );
    }
    Ok(notes)
}

/// The number of distinct sessions of `b`, and whether `now` shares one.
fn shares_a_session(base: &Baseline, now: &Baseline) -> (usize, bool) {
    let ids = |b: &Baseline| b.sessions.iter().map(|s| (s.session_id.clone(), s.file.clone())).collect::<BTreeSet<_>>();
    let (old, new) = (ids(base), ids(now));
    (new.len(), old.is_empty() || new.is_empty() || !old.is_disjoint(&new))
}

/// What the comparison after the replay needs: recorded in a shard's partial
/// so that `compactor merge` compares the merged run as check would have.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Conclusion {
    /// The baseline's path and text.
    baseline: Option<(std::path::PathBuf, String)>,
    globs: Vec<String>,
    settings: RunSettings,
    notes: Vec<String>,
    /// The flags the baseline records (`None` with a --policy file).
    replay: Option<ReplaySettings>,
    max_frr_drop: Option<f64>,
    max_savings_drop: Option<f64>,
    max_hallucination: Option<f64>,
    /// `--write-baseline`, given to a shard: the merge writes it.
    write_baseline: Option<std::path::PathBuf>,
}

/// How the outcome is shown and where it goes.
pub struct Show<'a> {
    pub out: Option<&'a Path>,
    pub json: bool,
    pub verbose: bool,
    pub summary: Option<&'a Path>,
    pub write_baseline: Option<&'a Path>,
}

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let CheckArgs {
        input,
        mut policy,
        llm,
        baseline,
        write_baseline,
        summary,
        verbose,
        json,
        must_keep,
        max_frr_drop,
        max_savings_drop,
        max_hallucination,
        out,
        allow_new,
        allow_param_changes,
        split,
    } = args;
    for (flag, v) in [
        ("--max-frr-drop", max_frr_drop),
        ("--max-savings-drop", max_savings_drop),
        ("--max-hallucination", max_hallucination),
    ] {
        if v.is_some_and(|v| !(0.0..=100.0).contains(&v)) {
            bail!("{flag} must be between 0 and 100 (percentage points)");
        }
    }
    super::shard::require_out(split.shard, out.as_deref(), "--shard")?;
    if let (Some(s), Some(_)) = (split.shard, &summary) {
        bail!("--shard {s}: --summary is written by the merge: give it to `compactor merge`");
    }
    // Every output first: a path that cannot be written fails now, not after
    // the replay.
    if let Some(dir) = &out {
        preflight::out_dir("--out", dir)?;
    }
    if let Some(file) = &write_baseline {
        preflight::out_file("--write-baseline", file)?;
    }
    if let Some(file) = &summary {
        preflight::out_file("--summary", file)?;
    }
    let base_text = baseline
        .as_deref()
        .map(|p| std::fs::read(p).with_context(|| format!("cannot read baseline {}", p.display())))
        .transpose()?;
    let base = match (&baseline, &base_text) {
        (Some(p), Some(b)) => {
            Some(Baseline::from_report_json(b).with_context(|| format!("invalid baseline {}", p.display()))?)
        }
        _ => None,
    };
    // Without presets or policy files, replay what the baseline was made
    // with, the flags given on top (a report.json records no flags: its
    // policies that are presets, by name).
    if policy.presets.is_empty()
        && policy.policy_files.is_empty()
        && let Some(b) = &base
    {
        let ReplaySettings { mut presets, mut sets, estimator, summarizer, summarizer_command } = b.replay.clone();
        if presets.is_empty() && b.replay.is_empty() {
            presets = b.presets.iter().filter(|p| !p.recorded).map(|p| p.policy.clone()).collect();
            presets.retain(|name| compactor::presets::get(name).is_some());
        }
        sets.append(&mut policy.sets);
        policy = PolicyArgs {
            presets,
            policy_files: Vec::new(),
            sets,
            estimator: policy.estimator.or(estimator),
            summarizer: policy.summarizer.or(summarizer),
            summarizer_command: policy.summarizer_command.or(summarizer_command),
        };
    }
    let mut globs = must_keep;
    if let Some(b) = &base {
        globs.extend(b.must_keep.iter().cloned());
    }
    let marks = MustKeep::new(&globs)?;
    // The policies and settings of this run, resolved before replaying so
    // that a run that cannot be compared with the baseline fails at once.
    let policies = resolve_policies(&policy, &["default"])?;
    let settings = run_settings(&input, &llm, &policies)?;
    let mut notes = Vec::new();
    if let (Some(b), Some(path)) = (&base, &baseline) {
        let as_json: Vec<serde_json::Value> = policies
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<_, _>>()
            .context("cannot record the policies")?;
        let allow = Allow { new: allow_new, params: allow_param_changes, rewriting: write_baseline.is_some() };
        notes = gate(&check::coverage(b, &as_json, &settings), path, &allow, input.quiet)?;
    }
    let replay_args = ReplayArgs {
        input: input.clone(),
        policy: policy.clone(),
        llm,
        out: out.clone(),
        json: false,
        check_invariants: true,
        no_transcripts: true,
        no_quality: false,
        cost: Default::default(),
        redact: false,
        split,
    };
    let mut replayed = run_replay(&replay_args, input, super::replay::Run::Check)?;
    let conclusion = Conclusion {
        baseline: baseline.zip(
            base_text.map(|b| String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())),
        ),
        globs: marks.globs().to_vec(),
        settings,
        notes,
        replay: policy.policy_files.is_empty().then(|| ReplaySettings {
            presets: policy.presets.clone(),
            sets: policy.sets.clone(),
            estimator: policy.estimator.clone(),
            summarizer: policy.summarizer.clone(),
            summarizer_command: policy.summarizer_command.clone(),
        }),
        max_frr_drop,
        max_savings_drop,
        max_hallucination,
        write_baseline: write_baseline.clone(),
    };
    if let (Some(s), Some(dir)) = (replayed.shard(), &out) {
        // A shard writes its partial; the merge compares the whole run.
        replayed.set_check(serde_json::to_value(&conclusion).context("cannot record the check")?);
        replayed.write_reports().with_context(|| format!("cannot write the reports to {}", dir.display()))?;
        let r = &replayed.report;
        let inputs = r.run.inputs_read + r.diagnostics.failed_inputs.len();
        return print_stdout(&super::shard::note(format_args!("shard {s}"), dir, r.run.sessions, inputs));
    }
    let sessions = &replayed.report.sessions;
    if !sessions.is_empty() && sessions.iter().all(|r| r.error.is_some()) {
        bail!("no session could be replayed");
    }
    if let Some(dir) = &out {
        replayed.write_reports().with_context(|| format!("cannot write the reports to {}", dir.display()))?;
    }
    let show = Show {
        out: out.as_deref(),
        json,
        verbose,
        summary: summary.as_deref(),
        write_baseline: write_baseline.as_deref(),
    };
    conclude(conclusion, base, &replayed.report, &show)
}

impl Conclusion {
    /// The baseline the partials carry, parsed (a merge has no other copy).
    pub fn parsed_baseline(&self) -> anyhow::Result<Option<Baseline>> {
        self.baseline
            .as_ref()
            .map(|(path, text)| {
                Baseline::from_report_json(text.as_bytes())
                    .with_context(|| format!("invalid baseline {}", path.display()))
            })
            .transpose()
    }
}

/// Compare a replayed run with the baseline (`base`, `c`'s parsed), write
/// and print the outcome, and pick the exit code: what `check` does after its
/// replay, and what a merge of its shards does.
pub fn conclude(
    c: Conclusion,
    base: Option<Baseline>,
    rep: &compactor::report::Report,
    show: &Show<'_>,
) -> anyhow::Result<u8> {
    let d = &rep.diagnostics;
    let fallbacks =
        super::fallbacks::Fallbacks { llm: d.llm_summaries.as_ref(), command: d.command_summaries.as_ref() };
    fallbacks.refuse(super::fallbacks::Then::NotCompared)?;
    let marks = MustKeep::new(&c.globs)?;
    let write_baseline = show.write_baseline.or(c.write_baseline.as_deref());
    let mut now = Baseline::from_report(rep, marks.globs());
    now.settings = Some(c.settings);
    if let (Some(b), Some((path, _))) = (&base, &c.baseline) {
        let (n, shared) = shares_a_session(b, &now);
        if !shared && write_baseline.is_none() {
            bail!(
                "none of the {n} session(s) replayed is in baseline {}: nothing to compare (was it written from \
                 other logs?)",
                path.display()
            );
        }
    }
    if let Some(r) = c.replay {
        now.replay = r;
    }
    let flags = |mut t: Tolerances| {
        t.max_frr_drop = c.max_frr_drop.unwrap_or(t.max_frr_drop);
        t.max_savings_drop = c.max_savings_drop.unwrap_or(t.max_savings_drop);
        t.max_hallucination = c.max_hallucination.unwrap_or(t.max_hallucination);
        t
    };
    let mut tolerances: HashMap<String, Tolerances> =
        rep.policies.iter().map(|p| (p.name.clone(), flags(p.check.clone()))).collect();
    // The agents' own compactions: the default tolerances and the flags.
    tolerances.entry(check::RECORDED_ROW.to_string()).or_insert_with(|| flags(Tolerances::default()));
    // Writing a baseline alone compares the run with itself: the table shows
    // the values recorded, and the absolute rules (hallucination, must-keep)
    // still apply.
    let mut outcome = check::compare(base.as_ref().unwrap_or(&now), &now, &tolerances, &marks);
    outcome.notes.extend(c.notes);
    for glob in marks.unmatched(&now.sessions) {
        outcome.notes.push(format!("--must-keep `{glob}` matches no session of this run: it gates nothing"));
    }
    if let Some(path) = write_baseline {
        atomic_write(path, &now.to_json()).with_context(|| format!("cannot write baseline {}", path.display()))?;
    }
    let run = CheckRun { outcome: &outcome, baseline_written: write_baseline };
    let mut text = String::new();
    for e in export::CHECK {
        let Some(bytes) = e.export(&run) else { continue };
        if let Some(dir) = show.out {
            let path = dir.join(e.file_name());
            atomic_write(&path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
        }
        text.push_str(&String::from_utf8_lossy(&bytes));
    }
    if let Some(path) = show.summary {
        std::fs::write(path, &text).with_context(|| format!("cannot write the summary to {}", path.display()))?;
    }
    // On the terminal, the gated rows; the files keep every row.
    let shown = if show.json {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            regressed: bool,
            #[serde(flatten)]
            outcome: &'a compactor::check::Outcome,
            #[serde(skip_serializing_if = "Option::is_none")]
            baseline_written: Option<&'a std::path::Path>,
        }
        let j = Json { regressed: outcome.regressed(), outcome: &outcome, baseline_written: write_baseline };
        serde_json::to_string_pretty(&j).context("cannot serialize the outcome")? + "\n"
    } else if show.verbose {
        text
    } else {
        compactor::report::check::document(&run, false)
    };
    let code = print_stdout(&shown)?;
    if code != EXIT_OK {
        return Ok(code);
    }
    fallbacks.warn(false);
    if outcome.regressed() {
        let where_ = if show.json { "`failures` in the JSON above" } else { "the table above" };
        eprintln!("compactor check: {} regression(s); see {where_}", outcome.failures.len());
        return Ok(EXIT_REGRESSION);
    }
    Ok(EXIT_OK)
}
