//! `compactor sweep`: read the grid, resolve the base policy, load the sessions
//! once, replay every grid point (`compactor::sweep::run`), print the Pareto
//! front and the recommendation, and write sweep.csv, sweep.md,
//! recommended.toml and report.html under `--out`.
//!
//! The base policy is built in this order, each step over the one before:
//! the `--preset`/`--policy` (default `default`), the grid's `[base]`, then
//! `--estimator`, `--summarizer` and `--set`; the grid's axes vary that base.
//! A flag on a key the grid varies is an error: it would silently lose.

use super::args::{PolicyArgs, SweepArgs};
use super::load::load;
use super::replay::{CliResolver, apply_overrides, cost_settings, resolve_policies};
use super::{EXIT_OK, print_stdout};
use anyhow::{Context, bail};
use compactor::sweep::{self, Grid};

pub fn run(args: SweepArgs) -> anyhow::Result<u8> {
    let SweepArgs { input, policy, llm, cost, grid, min_frr, out, json } = args;
    if let Some(m) = min_frr
        && !(0.0..=1.0).contains(&m)
    {
        bail!("--min-frr {m}: expected a share between 0 and 1 (e.g. 0.9)");
    }
    if let Some(dir) = &out {
        super::preflight::out_dir("--out", dir)?;
    }
    let text = std::fs::read_to_string(&grid).with_context(|| format!("cannot read grid {}", grid.display()))?;
    let grid_def = Grid::from_toml(&text).with_context(|| format!("invalid grid {}", grid.display()))?;
    refuse_flags_on_axes(&policy, &grid_def, &grid)?;
    // The preset or policy file alone; the flags come after the grid's [base].
    let chosen =
        PolicyArgs { presets: policy.presets.clone(), policy_files: policy.policy_files.clone(), ..Default::default() };
    let bases = resolve_policies(&chosen, &["default"])?;
    if bases.len() != 1 {
        bail!("sweep varies one base policy: give one --preset or one --policy (got {})", bases.len());
    }
    let mut base = grid_def
        .apply_base(&bases[0])
        .with_context(|| format!("grid {}: [base] on `{}`", grid.display(), bases[0].name))?;
    apply_overrides(&mut base, &policy)?;
    // [base] is in `base` now, under the flags: the sweep applies the axes only.
    let grid_def = Grid { base: Vec::new(), ..grid_def };
    let points: Vec<_> = (0..grid_def.points()).filter_map(|i| grid_def.policy(&base, i).ok()).collect();
    if points.is_empty() {
        bail!(
            "grid {}: no point gives a valid policy (run `compactor presets {}` to see the base)",
            grid.display(),
            base.name
        );
    }
    // An axis no point reads would make every value of it the same point.
    for axis in &grid_def.axes {
        if let Some(why) = points.iter().map(|p| p.ineffective(&axis.key)).collect::<Option<Vec<_>>>() {
            bail!(
                "grid {}: axis `{}` changes nothing in `{}`: {} (in the grid's [base] or with --set)",
                grid.display(),
                axis.key,
                base.name,
                why.first().map_or("", String::as_str)
            );
        }
    }
    let cost = cost_settings(&cost, &llm)?;
    let llm_args = llm;
    let llm = super::llm::adapter(&llm_args, &points)?;
    let format = super::load::parse_format(input.format.clone())?;
    let mut loaded = load(input)?;
    let calls = loaded.batch.sessions.iter().map(|s| (s.source_path.as_path(), s.calls.len()));
    super::preflight::require_calls(format, &loaded.inputs, &loaded.batch.failures, calls)?;
    // Each session's own window (`context_window = "auto"`).
    for s in &mut loaded.batch.sessions {
        s.meta.window = Some(cost.table.windows.resolve(s));
    }
    let commands = super::command::programs(&llm_args, &points)?;
    let resolver = CliResolver::new(llm.clone(), commands.clone());
    let sessions = &loaded.batch.sessions;
    let bar = super::load::progress_bar(
        "sweeping {pos}/{len} replays",
        (sessions.len() * grid_def.points()) as u64,
        loaded.quiet,
    );
    let tick = |_: usize, _: usize| bar.inc(1);
    let waiting = llm.as_ref().map_or(0, |a| a.concurrency()) + commands.as_ref().map_or(0, |c| c.concurrency());
    let wide = super::load::wide_pool(&loaded.pool, waiting)?;
    let pool = wide.as_ref().unwrap_or(&loaded.pool);
    // FRR, artifact recall and hallucination of each (session, point) trace.
    let hook = compactor::quality::TraceQualityHook::new(&resolver);
    let result = sweep::run(sessions, &base, &grid_def, &resolver, &cost, Some(&hook), min_frr, pool, Some(&tick))
        .with_context(|| format!("grid {}", grid.display()))?;
    bar.finish_and_clear();
    if compactor::interrupt::requested() {
        bail!("interrupted");
    }
    for p in result.points.iter().filter(|p| p.error.is_some()) {
        eprintln!("grid point {}: {}", p.index, p.error.as_deref().unwrap_or_default());
    }
    let mut text = if json {
        serde_json::to_string_pretty(&result).context("cannot serialize the sweep")? + "\n"
    } else {
        compactor::report::sweep::summary_text(&result)
    };
    if let Some(dir) = &out {
        compactor::report::sweep::write_all(dir, &result)
            .with_context(|| format!("cannot write the sweep reports to {}", dir.display()))?;
        if !json {
            text.push_str(&format!("reports written to {}\n", dir.display()));
        }
    }
    let warn = || {
        super::llm::warn_fallbacks(llm.as_ref().map(|a| a.summaries()).as_ref());
        super::command::warn_fallbacks(commands.as_ref().map(|c| c.stats()).as_ref());
    };
    if result.points.iter().all(|p| !p.ok()) {
        print_stdout(&text)?;
        warn();
        bail!("no grid point could be replayed");
    }
    print_stdout(&text)?;
    warn();
    Ok(EXIT_OK)
}

/// `--set`, `--estimator` or `--summarizer` on a key the grid varies: the
/// axis would overwrite it at every point, so the flag would silently lose.
fn refuse_flags_on_axes(policy: &PolicyArgs, grid: &Grid, file: &std::path::Path) -> anyhow::Result<()> {
    let mut flags: Vec<(String, String)> = policy
        .sets
        .iter()
        .map(|kv| (kv.split_once('=').map_or(kv.as_str(), |(k, _)| k).trim().to_string(), format!("--set {kv}")))
        .collect();
    if let Some(e) = &policy.estimator {
        flags.push(("estimator".into(), format!("--estimator {e}")));
    }
    if let Some(s) = &policy.summarizer {
        flags.push(("compact.summarizer".into(), format!("--summarizer {s}")));
    }
    for (key, flag) in flags {
        if grid.axes.iter().any(|a| a.key == key) {
            bail!(
                "{flag}: `{key}` is an axis of grid {}, which gives it every value of the axis; remove the flag, \
                 or the axis (a fixed value belongs in the grid's [base] or on the command line)",
                file.display()
            );
        }
    }
    Ok(())
}
