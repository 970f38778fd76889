//! The summarizer programs of a run (`compact.summarizer = "command"`): one
//! per distinct program, shared by the policies and sweep points that name
//! it, with the run's cache and `--command-concurrency`.

use super::args::LlmArgs;
use compactor::policy::Policy;
use compactor::summarize::command::{CommandConfig, CommandStats, CommandSummarizer};
use compactor::summarize::{Summarizer, SummarizerKind};
use std::sync::Arc;

pub struct Commands {
    programs: Vec<(Program, Arc<CommandSummarizer>)>,
}

/// What tells two programs apart: argv, folder, environment, timeout.
type Program = (Vec<String>, String, Vec<String>, u64);

fn program_of(p: &Policy) -> Program {
    let c = &p.compact;
    (c.command.clone(), c.command_dir.clone(), c.command_env.clone(), c.command_timeout_secs)
}

/// The summarizer programs of `policies`; `None` when no policy has one.
/// Fails before any log is read when a program's folder is missing.
pub fn programs(args: &LlmArgs, policies: &[Policy]) -> anyhow::Result<Option<Arc<Commands>>> {
    let concurrency = args
        .command_concurrency
        .map(|n| n as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from));
    let cache = if args.no_cache { None } else { args.cache_dir.clone().or_else(compactor::llm::default_cache_dir) };
    let mut programs: Vec<(Program, Arc<CommandSummarizer>)> = Vec::new();
    for p in policies.iter().filter(|p| p.compact.summarizer == SummarizerKind::Command) {
        let key = program_of(p);
        if programs.iter().any(|(k, _)| *k == key) {
            continue;
        }
        let s = CommandSummarizer::new(CommandConfig::of_policy(p, concurrency, cache.clone()))
            .map_err(|e| anyhow::anyhow!("summarizer program of policy `{}`: {e}", p.name))?;
        programs.push((key, Arc::new(s)));
    }
    Ok((!programs.is_empty()).then(|| Arc::new(Commands { programs })))
}

impl Commands {
    /// The program of this policy.
    pub fn for_policy(&self, policy: &Policy) -> Option<Arc<dyn Summarizer>> {
        let want = program_of(policy);
        self.programs.iter().find(|(k, _)| *k == want).map(|(_, s)| s.clone() as Arc<dyn Summarizer>)
    }

    /// Programs running at once, at most, over all of them.
    pub fn concurrency(&self) -> usize {
        self.programs.iter().map(|(_, s)| s.config().concurrency).sum()
    }

    /// Every failure so far, sorted.
    pub fn failures(&self) -> Vec<String> {
        let mut v: Vec<String> = self.programs.iter().flat_map(|(_, s)| s.failures()).collect();
        v.sort();
        v
    }

    /// What the programs did, counted over all of them.
    pub fn stats(&self) -> CommandStats {
        let mut total = CommandStats::default();
        for (_, s) in &self.programs {
            total.add(&s.stats());
        }
        total.first_reason = self.failures().into_iter().next();
        total
    }
}

/// The identity (argv and the files it names, hashed) of each policy's
/// program, as run settings a baseline records: an edit to the program is a
/// change `check` names.
pub fn identities(policies: &[Policy]) -> Vec<(String, String)> {
    policies
        .iter()
        .filter(|p| p.compact.summarizer == SummarizerKind::Command)
        .filter_map(|p| {
            let s = CommandSummarizer::new(CommandConfig::of_policy(p, 1, None)).ok()?;
            Some((format!("command.{}", p.name), s.identity().to_string()))
        })
        .collect()
}
