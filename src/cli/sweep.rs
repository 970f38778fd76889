//! `compactor sweep`: read the grid, resolve the base policy, load the sessions
//! once, replay every grid point (`compactor::sweep::run_table`, then `fold`), print the Pareto
//! front and the recommendation, and write sweep.csv, sweep.md,
//! recommended.toml and report.html under `--out`.
//!
//! The base policy is built in this order, each step over the one before:
//! the `--preset`/`--policy` (default `default`), the grid's `[base]`, then
//! `--estimator`, `--summarizer` and `--set`; the grid's axes vary that base.
//! A flag on a key the grid varies is an error: it would silently lose.

use super::args::{MergeArgs, PolicyArgs, SweepArgs};
use super::load::{load, load_shard};
use super::replay::{CliResolver, apply_overrides, cost_settings, resolve_policies};
use super::{EXIT_OK, print_stdout};
use anyhow::anyhow;
use anyhow::{Context, bail};
use compactor::output::fsutil::atomic_write;
use compactor::pipeline::Shard;
use compactor::report::partial::{self, Header, Read, SummarizerCounts, SweepPartial};
use compactor::sweep::{self, Grid, SweepResult};
use std::path::{Path, PathBuf};

pub fn run(args: SweepArgs) -> anyhow::Result<u8> {
    let SweepArgs { input, policy, llm, cost, grid, min_frr, out, json, split, shard_points } = args;
    super::shard::require_out(split.shard, out.as_deref(), "--shard")?;
    super::shard::require_out(shard_points, out.as_deref(), "--shard-points")?;
    let sharded = split.shard.is_some() || shard_points.is_some();
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
    let policies: Vec<_> = (0..grid_def.points()).map(|i| grid_def.policy(&base, i)).collect();
    if let Some((key, value, why)) = grid_def.invalid_value(&policies) {
        bail!("grid {}: `{key}` = {value} gives no valid policy with any other value: {why}", grid.display());
    }
    let points: Vec<_> = policies.into_iter().filter_map(Result::ok).collect();
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
    let input_args = input.clone();
    let mut loaded = if sharded { load_shard(input, split.shard)? } else { load(input)? };
    let calls = loaded.batch.sessions.iter().map(|s| (s.source_path.as_path(), s.calls.len()));
    super::preflight::require_calls(format, &loaded.inputs, &loaded.batch.failures, calls, !sharded)?;
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
    let mine = |pi: usize| shard_points.is_none_or(|s| s.holds_point(pi));
    let table =
        sweep::run_table(sessions, &base, &grid_def, &resolver, &cost, Some(&hook), Some(&mine), pool, Some(&tick))
            .with_context(|| format!("grid {}", grid.display()))?;
    bar.finish_and_clear();
    if compactor::interrupt::requested() {
        bail!("interrupted");
    }
    let counts = SummarizerCounts {
        fallbacks: Vec::new(),
        llm: llm.as_ref().map(|a| a.summaries()),
        command: commands.as_ref().map(|c| c.stats()),
    };
    if let Some(dir) = out.as_deref().filter(|_| sharded) {
        let shard = split.shard.unwrap_or(Shard::ALL);
        let mut header = Header::new("sweep", shard, &loaded.paths, loaded.input_list, &[base.clone()]);
        header.points = shard_points;
        header.settings = super::shard::settings(&input_args, &llm_args, &points, &cost, &[])?;
        header.settings.insert("grid".into(), blake3::hash(text.as_bytes()).to_hex()[..16].to_string());
        header.settings.insert("min_frr".into(), format!("{min_frr:?}"));
        let partial = SweepPartial {
            header,
            min_frr,
            sessions: sessions.iter().map(|s| (s.source_path.clone(), s.id.clone())).collect(),
            details: SweepPartial::details_of(&table),
            table,
            summarizers: counts,
        };
        let bytes = serde_json::to_vec(&partial).context("cannot record the partial")?;
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(compactor::report::partial::PARTIAL_FILE);
        atomic_write(&path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
        let what = match shard_points {
            Some(p) => format!("{shard}, points {p}"),
            None => shard.to_string(),
        };
        let inputs = loaded.batch.inputs_read + loaded.batch.failures.len();
        return print_stdout(&super::shard::note(format_args!("sweep shard {what}"), dir, sessions.len(), inputs));
    }
    let result = sweep::fold(&table, min_frr);
    finish(result, out.as_deref(), json, &counts)
}

/// Print the front and the recommendation (or the sweep as JSON), write the
/// reports under `out`, warn about summaries that fell back: what `sweep`
/// does once its table is folded, and a merge of its shards.
pub fn finish(result: SweepResult, out: Option<&Path>, json: bool, counts: &SummarizerCounts) -> anyhow::Result<u8> {
    for p in result.points.iter().filter(|p| p.error.is_some()) {
        eprintln!("grid point {}: {}", p.index, p.error.as_deref().unwrap_or_default());
    }
    let mut text = if json {
        serde_json::to_string_pretty(&result).context("cannot serialize the sweep")? + "\n"
    } else {
        compactor::report::sweep::summary_text(&result)
    };
    if let Some(dir) = out {
        compactor::report::sweep::write_all(dir, &result)
            .with_context(|| format!("cannot write the sweep reports to {}", dir.display()))?;
        if !json {
            text.push_str(&format!("reports written to {}\n", dir.display()));
        }
    }
    print_stdout(&text)?;
    let fallbacks = super::fallbacks::Fallbacks { llm: counts.llm.as_ref(), command: counts.command.as_ref() };
    if result.points.iter().all(|p| !p.ok()) {
        fallbacks.warn(true);
        bail!("no grid point could be replayed");
    }
    fallbacks.warn(false);
    fallbacks.refuse(super::fallbacks::Then::WentOn)?;
    Ok(EXIT_OK)
}

/// `compactor merge` of a sweep's partials.
pub fn merge(args: &MergeArgs, read: Vec<(PathBuf, Header)>) -> anyhow::Result<u8> {
    let mut parts = Vec::with_capacity(read.len());
    for (dir, _) in read {
        let partial: SweepPartial = partial::parse(&dir).map_err(|e| anyhow!(e))?;
        parts.push(Read { dir, partial });
    }
    let (table, min_frr, counts) =
        partial::merge_sweep(parts).map_err(|e| anyhow!("cannot merge these partials: {e}"))?;
    if table.windows.is_empty() {
        bail!("no session could be read");
    }
    finish(sweep::fold(&table, min_frr), args.out.as_deref(), args.json, &counts)
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
