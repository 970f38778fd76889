//! `compactor check`: replay (with invariant checks and the quality pass),
//! compare with a baseline, print the markdown table, exit 1 on a regression.
//! The rules and the table live in `compactor::check`; this file resolves the
//! flags, reads and writes the files, and picks the exit code.

use super::args::{CheckArgs, PolicyArgs, ReplayArgs};
use super::replay::run_replay;
use super::{EXIT_OK, EXIT_REGRESSION, print_stdout};
use anyhow::{Context, bail};
use compactor::check::{self, Baseline, MustKeep, ReplaySettings, Tolerances};
use compactor::output::fsutil::atomic_write;
use std::collections::HashMap;
use std::path::Path;

fn policy_args_empty(p: &PolicyArgs) -> bool {
    p.presets.is_empty()
        && p.policy_files.is_empty()
        && p.sets.is_empty()
        && p.estimator.is_none()
        && p.summarizer.is_none()
}

fn read_baseline(path: &Path) -> anyhow::Result<Baseline> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read baseline {}", path.display()))?;
    Baseline::from_report_json(&bytes).with_context(|| format!("invalid baseline {}", path.display()))
}

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let CheckArgs {
        input,
        mut policy,
        llm,
        baseline,
        write_baseline,
        summary,
        must_keep,
        max_frr_drop,
        max_savings_drop,
        max_hallucination,
        out,
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
    let base = baseline.as_deref().map(read_baseline).transpose()?;
    // Without policy flags, replay what the baseline was made with.
    if policy_args_empty(&policy)
        && let Some(b) = &base
    {
        let ReplaySettings { presets, sets, estimator, summarizer } = b.replay.clone();
        policy = PolicyArgs { presets, policy_files: Vec::new(), sets, estimator, summarizer };
    }
    let mut globs = must_keep;
    if let Some(b) = &base {
        globs.extend(b.must_keep.iter().cloned());
    }
    let marks = MustKeep::new(&globs)?;
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
    };
    let mut replayed = run_replay(&replay_args, input, &["default"])?;
    let sessions = &replayed.report.sessions;
    if !sessions.is_empty() && sessions.iter().all(|r| r.error.is_some()) {
        bail!("no session could be replayed");
    }
    if let Some(dir) = &out {
        replayed.write_reports().with_context(|| format!("cannot write the reports to {}", dir.display()))?;
    }
    let rep = &replayed.report;
    let mut now = Baseline::from_report(rep, marks.globs());
    if policy.policy_files.is_empty() {
        now.replay = ReplaySettings {
            presets: policy.presets.clone(),
            sets: policy.sets.clone(),
            estimator: policy.estimator.clone(),
            summarizer: policy.summarizer.clone(),
        };
    }
    let tolerances: HashMap<String, Tolerances> = rep
        .policies
        .iter()
        .map(|p| {
            let mut t = Tolerances::from(&p.check);
            t.max_frr_drop = max_frr_drop.unwrap_or(t.max_frr_drop);
            t.max_savings_drop = max_savings_drop.unwrap_or(t.max_savings_drop);
            t.max_hallucination = max_hallucination.unwrap_or(t.max_hallucination);
            (p.name.clone(), t)
        })
        .collect();
    // Writing a baseline alone compares the run with itself: the table shows
    // the values recorded, and the absolute rules (hallucination, must-keep)
    // still apply.
    let outcome = check::compare(base.as_ref().unwrap_or(&now), &now, &tolerances, &marks);
    let mut text = check::markdown(&outcome);
    if let Some(path) = &write_baseline {
        atomic_write(path, &now.to_json()).with_context(|| format!("cannot write baseline {}", path.display()))?;
        text.push_str(&format!("\nBaseline written to `{}`.\n", path.display()));
    }
    if let Some(path) = &summary {
        std::fs::write(path, &text).with_context(|| format!("cannot write the summary to {}", path.display()))?;
    }
    let code = print_stdout(&text)?;
    super::llm::warn_fallbacks(rep.diagnostics.llm_summaries.as_ref());
    if code != EXIT_OK {
        return Ok(code);
    }
    if outcome.regressed() {
        eprintln!("compactor check: {} regression(s); see the table above", outcome.failures.len());
        return Ok(EXIT_REGRESSION);
    }
    Ok(EXIT_OK)
}
