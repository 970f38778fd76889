//! `--shard K/N`: which inputs a shard reads, what its partial output records
//! of the run's settings (so `compactor merge` refuses partials that do not
//! belong together), and the note a shard prints.

use super::args::{InputArgs, LlmArgs};
use anyhow::{Context, bail};
use compactor::cost::CostSettings;
use compactor::model::Format;
use compactor::pipeline::Shard;
use compactor::policy::Policy;
use compactor::read::Input;
use compactor::read::copies::Families;
use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::Path;

/// A shard needs somewhere to write its partial.
pub fn require_out(shard: Option<Shard>, out: Option<&Path>, flag: &str) -> anyhow::Result<()> {
    if let (Some(s), None) = (shard, out) {
        bail!("{flag} {s} needs --out DIR: a shard writes its partial output there, for `compactor merge`");
    }
    Ok(())
}

/// Per input, whether the shard reads it (`None` without `--shard`), and the
/// families of inputs that share responses, found among all of them so that
/// a family stays in one shard (`None` without `--shard`: a run finds them
/// among what it reads).
pub fn select(
    shard: Option<Shard>,
    inputs: &[Input],
    format: Option<Format>,
) -> anyhow::Result<(Option<Vec<bool>>, Option<Families>)> {
    let Some(s) = shard else { return Ok((None, None)) };
    let families = compactor::read::copies::families(inputs, format);
    let select = s.select(inputs, &families).map_err(|e| anyhow::anyhow!("--shard {s}: {e}"))?;
    Ok((Some(select), Some(families)))
}

/// The inputs `select` keeps (all without a selection).
pub fn selected(inputs: &[Input], select: Option<&[bool]>) -> Vec<Input> {
    match select {
        Some(s) => inputs.iter().zip(s).filter(|(_, x)| **x).map(|(i, _)| i.clone()).collect(),
        None => inputs.to_vec(),
    }
}

/// What changes a run's results besides its policies, by name: the format,
/// the meter, the passes run, the prices and the summarizers' identities.
/// Two partials merge only when these are equal.
pub fn settings(
    input: &InputArgs,
    llm: &LlmArgs,
    policies: &[Policy],
    cost: &CostSettings,
    flags: &[(&str, bool)],
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut s: BTreeMap<String, String> = super::check::run_settings(input, llm, policies)?.into_iter().collect();
    s.insert("meter".into(), cost.meter.name().to_string());
    s.insert("cache_ttl".into(), serde_json::to_string(&cost.ttl).context("cache ttl")?);
    if let Some(m) = &cost.model_override {
        s.insert("model".into(), m.clone());
    }
    if let Some(m) = &cost.summarizer_model {
        s.insert("summarizer_model".into(), m.clone());
    }
    let table = serde_json::to_vec(&cost.table).context("cannot record the prices")?;
    s.insert("prices".into(), blake3::hash(&table).to_hex()[..16].to_string());
    for (name, on) in flags {
        s.insert((*name).to_string(), on.to_string());
    }
    Ok(s)
}

/// What a shard prints after its own output: what it wrote and what to do
/// next. `what` names the shard (`shard 2/4`, `sweep shard 1/1, points 2/3`).
pub fn note(what: impl Display, out: &Path, sessions: usize, inputs: usize) -> String {
    format!(
        "{what}: {sessions} session(s) from {inputs} input(s); partial written to {} \
         (join every shard's with `compactor merge PARTIAL... --out DIR`)\n",
        out.display()
    )
}
