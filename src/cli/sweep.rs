//! `compactor sweep`: read the grid, resolve the base policy, load the sessions
//! once, replay every grid point (`compactor::sweep::run`), print the Pareto
//! front and the recommendation, and write sweep.csv, sweep.md,
//! recommended.toml and report.html under `--out`.

use super::args::SweepArgs;
use super::load::load;
use super::replay::{CliResolver, cost_settings, resolve_policies};
use super::{EXIT_OK, print_stdout};
use anyhow::{Context, bail};
use compactor::sweep::{self, Grid};
use std::io::IsTerminal;

pub fn run(args: SweepArgs) -> anyhow::Result<u8> {
    let SweepArgs { input, policy, llm, cost, grid, min_frr, out } = args;
    if let Some(m) = min_frr
        && !(0.0..=1.0).contains(&m)
    {
        bail!("--min-frr {m}: expected a share between 0 and 1 (e.g. 0.9)");
    }
    let text = std::fs::read_to_string(&grid).with_context(|| format!("cannot read grid {}", grid.display()))?;
    let grid_def = Grid::from_toml(&text).with_context(|| format!("invalid grid {}", grid.display()))?;
    let mut bases = resolve_policies(&policy, &["default"])?;
    if bases.len() != 1 {
        bail!("sweep varies one base policy: give one --preset or one --policy (got {})", bases.len());
    }
    let base = bases.remove(0);
    let base_applied =
        grid_def.apply_base(&base).with_context(|| format!("grid {}: [base] on `{}`", grid.display(), base.name))?;
    let points: Vec<_> = (0..grid_def.points()).filter_map(|i| grid_def.policy(&base_applied, i).ok()).collect();
    if points.is_empty() {
        bail!(
            "grid {}: no point gives a valid policy (run `compactor presets {}` to see the base)",
            grid.display(),
            base.name
        );
    }
    let cost = cost_settings(&cost, &llm)?;
    let llm = super::llm::adapter(&llm, &points)?;
    let loaded = load(input)?;
    let resolver = CliResolver::new(llm.clone());
    let sessions = &loaded.batch.sessions;
    let bar = progress_bar((sessions.len() * grid_def.points()) as u64, loaded.quiet);
    let tick = |_: usize, _: usize| bar.inc(1);
    let wide;
    let pool = match &llm {
        Some(a) if a.concurrency() > loaded.pool.current_num_threads() => {
            wide = super::load::thread_pool(Some(a.concurrency()))?;
            &wide
        }
        _ => &loaded.pool,
    };
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
    let mut text = sweep::report::summary_text(&result);
    if let Some(dir) = &out {
        sweep::report::write_all(dir, &result)
            .with_context(|| format!("cannot write the sweep reports to {}", dir.display()))?;
        text.push_str(&format!("reports written to {}\n", dir.display()));
    }
    let warn = || super::llm::warn_fallbacks(llm.as_ref().map(|a| a.summaries()).as_ref());
    if result.points.iter().all(|p| !p.ok()) {
        print_stdout(&text)?;
        warn();
        bail!("no grid point could be replayed");
    }
    print_stdout(&text)?;
    warn();
    Ok(EXIT_OK)
}

fn progress_bar(len: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template(" {spinner} sweeping {pos}/{len} replays {wide_bar} {eta}")
    {
        bar.set_style(style);
    }
    bar
}
