//! clap definitions. They only describe flags; commands resolve them into
//! settings before any work starts.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "compactor",
    version,
    about = "Replay AI coding-agent session logs through context-management policies",
    long_about = "Reads the JSONL session logs of Claude Code, Codex CLI, pi/OpenClaw, Gemini CLI, Cline \
and plain OpenAI/Anthropic message logs, replays every session call by call through \
tool-output pruning and history compaction policies, and reports tokens and money saved, \
context overflows avoided, and how much of what the agent needed later survived.",
    after_help = "Examples:\n  compactor inspect fixtures/\n  compactor replay ~/.claude/projects --preset nous --out report/\n  compactor presets"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay sessions through one or more policies and write reports.
    Replay(ReplayArgs),
    /// Replay and compare against a baseline report; exit 1 on regression.
    Check(CheckArgs),
    /// Replay over a grid of policy parameters and print the Pareto front.
    #[command(long_about = "Replays every session at every point of a grid of policy parameters (a base policy \
with some keys varied, see below) and prints, per point, tokens and money saved against doing nothing, \
calls over the window, compactions and FRR; the points on the Pareto front of savings against FRR; and \
one recommended point with the reason it won. The recommendation passes check's hallucination gate and \
--min-frr; it says when it sits at an end of an axis (extend the grid there) and which window it was \
tuned for. With --out it writes sweep.csv, sweep.md, report.html and recommended.toml, a policy file \
for replay --policy.")]
    Sweep(SweepArgs),
    /// Several presets on the same sessions, side by side.
    #[command(
        long_about = "Replays the same sessions through several policies (default: the presets default, nous, \
vibe, opal, dotnet and spec008; or the --preset and --policy given) and prints one column per policy: \
tokens and money saved against doing nothing, overflows, compactions, what the summaries kept of what \
was needed later (FRR), artifact recall and hallucination. With --out it writes the same files as replay.",
        after_help = "Examples:
  compactor compare ~/.claude/projects
  compactor compare logs/ --preset nous --preset opal --set context_window=32000
  compactor compare logs/ --policy mine.toml --preset default --out compare/"
    )]
    Compare(ReplayArgs),
    /// Describe sessions: formats, messages, tool calls, where the tokens go.
    #[command(after_help = "Examples:
  compactor inspect                  # the logs found in every agent's default place
  compactor inspect logs/ --sessions
  compactor inspect session.jsonl --json")]
    Inspect(InspectArgs),
    /// List the built-in presets, one line each; `presets NAME` prints its TOML.
    Presets(PresetsArgs),
    /// What each compaction lost: the agents' own (and each --preset's), its
    /// summary, every atom needed after it and where the agent used it first.
    Explain(ExplainArgs),
    /// Ask a model recall questions about what each compaction left it, and
    /// put its accuracy next to FRR.
    #[command(
        long_about = "Recall probes: for each compaction (the agents' own, each --preset's, and the extractive \
summary at the same points and size), questions are made from the atoms the agent needed after it (which \
file did we modify, what was the exact error, which command). A model (--llm-*) answers them from the \
summary and the kept messages only; each answer is graded by exact match of the atom. It prints probe \
accuracy next to FRR per candidate, and their rank correlation across compactions: how well FRR predicts \
what a model recalls. Answers are cached like summaries.",
        after_help = "Examples:
  compactor probe logs/ --llm-base-url http://127.0.0.1:11434/v1 \\
      --llm-model qwen3:8b
  compactor probe session.jsonl --preset opal --llm-model gpt-4.1-mini
  compactor probe logs/ --llm-model gpt-4.1-mini --out probes/ --json"
    )]
    Probe(ProbeArgs),
    /// Print a shell completion script: bash, zsh, fish, powershell or elvish.
    #[command(after_help = "Examples:
  echo 'source <(compactor completions bash)' >> ~/.bashrc
  compactor completions zsh > ~/.zfunc/_compactor
  compactor completions fish > ~/.config/fish/completions/compactor.fish")]
    Completions(CompletionsArgs),
    /// Join the partial outputs of a sharded run (--shard K/N) into the
    /// outputs one run writes.
    #[command(long_about = "Joins the partial outputs that `replay`, `compare`, `check` or `sweep` wrote with \
--shard K/N (and sweep's --shard-points K/N) into exactly what the command writes and prints when run \
whole: byte-identical reports, CSVs, report.html and transcripts, in any order of the partials. A merge \
of check's partials compares the merged run with the baseline and exits as check does.")]
    Merge(MergeArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Session files, directories, globs, or - for stdin. Default: where each agent keeps
    /// its logs (Claude Code, Codex, pi, OpenClaw, Gemini CLI, Cline, Roo Code, Kilo Code;
    /// docs/discovery.md).
    pub paths: Vec<PathBuf>,
    /// Force a log format instead of detecting it: claude-code, codex, codex-exec, pi,
    /// gemini, cline, generic. When replaying, a file that yields no call under it
    /// is an error.
    #[arg(long)]
    pub format: Option<String>,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// No progress bar, and no notes on stderr about the inputs read (bad lines,
    /// skipped records, where logs were looked for); warnings on what the
    /// numbers mean (a policy that cannot compact, calls priced as the
    /// fallback family) still print.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Which policies to replay, and overrides of their parameters.
#[derive(Debug, Args, Clone, Default)]
pub struct PolicyArgs {
    /// A built-in policy (repeatable: several are replayed side by side on the same
    /// sessions). See `compactor presets`. Default when no --policy: `default`
    /// (`compare`: its six, less any the --set values make invalid).
    #[arg(long = "preset", value_name = "NAME")]
    pub presets: Vec<String>,
    /// A policy from a TOML file (repeatable). Keys as printed by `compactor presets`.
    #[arg(long = "policy", value_name = "FILE.toml")]
    pub policy_files: Vec<PathBuf>,
    /// Override a parameter of every policy (repeatable), dotted keys as in the TOML:
    /// `context_window=32000`, `compact.keep_recent_tokens=8000`, `prune.enabled=false`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Token estimator for every policy: chars4, per_block, o200k, cl100k, calibrated.
    #[arg(long, value_name = "NAME")]
    pub estimator: Option<String>,
    /// Summarizer for every policy: truncate, extractive, llm, command.
    #[arg(long, value_name = "NAME")]
    pub summarizer: Option<String>,
    /// Your own summarizer program for every policy, run once per summary
    /// without a shell: `--summarizer-command "python3 my_summarizer.py"`
    /// (docs/command-summarizer.md). Sets --summarizer command.
    #[arg(long, value_name = "CMD")]
    pub summarizer_command: Option<String>,
}

/// The LLM summarizer's endpoint (used with `--summarizer llm`).
#[derive(Debug, Args, Clone, Default)]
pub struct LlmArgs {
    /// Base URL of an OpenAI-compatible or Anthropic API (e.g. https://api.openai.com,
    /// https://api.anthropic.com, http://127.0.0.1:11434 for Ollama).
    #[arg(long, value_name = "URL")]
    pub llm_base_url: Option<String>,
    /// API shape: openai or anthropic (default: inferred from the base URL).
    #[arg(long, value_name = "KIND")]
    pub llm_api: Option<String>,
    /// Model name sent to the API.
    #[arg(long, value_name = "NAME")]
    pub llm_model: Option<String>,
    /// Name of the environment variable that holds the API key (the key itself is
    /// never accepted on the command line).
    #[arg(long, value_name = "VAR")]
    pub llm_api_key_env: Option<String>,
    /// Output limit of one summarization request (default 4096).
    #[arg(long, value_name = "N")]
    pub llm_max_tokens: Option<u32>,
    /// Sampling temperature (default 0).
    #[arg(long, value_name = "T")]
    pub llm_temperature: Option<f32>,
    /// Summarization requests in flight at once, per endpoint (default 8).
    #[arg(long, value_name = "N")]
    pub llm_concurrency: Option<usize>,
    /// Response cache directory (default: ~/.cache/compactor).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the response cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Summarizer programs running at once, at most (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub command_concurrency: Option<u32>,
    /// Seconds one summarization request may take, connecting included
    /// (default 180; decimals allowed: 0.5). A request that times out is not
    /// retried: the compaction falls back to the extractive summary.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub llm_timeout: Option<f64>,
    /// Retries of a request answered with 429, 5xx or a connection error
    /// (default 3).
    #[arg(long, value_name = "N")]
    pub llm_retries: Option<u32>,
    /// Seconds before the first retry; doubles each time, with jitter (default
    /// 1). A `Retry-After` from the server takes precedence.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub llm_retry_backoff: Option<f64>,
}

/// A non-negative, finite number of seconds.
fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}` is not a number of seconds between 0 and 86400")),
    }
}

/// How money is counted (the prompt-cache cost model).
#[derive(Debug, Args, Clone, Default)]
pub struct CostArgs {
    /// Prices to use instead of (or besides) the built-in table: a TOML file of
    /// `[families.NAME]` tables with `input`, `output`, `cache_read`,
    /// `cache_write_5m`, `cache_write_1h` in USD per million tokens, `match`
    /// name fragments and a `long` long-context tier (docs/cost.md).
    #[arg(long, value_name = "FILE.toml")]
    pub prices: Option<PathBuf>,
    /// Price every call as this model (e.g. claude-sonnet-4-5, gpt-5) instead of the
    /// model recorded in the log. A name that matches no price family is an error.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Prompt-cache lifetime of the cost simulation: auto (default: each
    /// session's own, 1h where its log records 1-hour cache writes, else 5m),
    /// 5m, 1h, or off.
    #[arg(long, value_name = "TTL")]
    pub cache_ttl: Option<String>,
    /// What every reported size is measured with, the same for the baseline and
    /// every policy: `recorded` (default: a call's recorded prompt size where the
    /// log has usage, elsewhere chars/4 calibrated on the usage around it), or
    /// an estimator alone: chars4, per_block, o200k, cl100k. A policy's own
    /// `estimator` only decides when it prunes and compacts.
    #[arg(long, value_name = "NAME")]
    pub meter: Option<String>,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  compactor replay --out report/            # the logs in every agent's default place
  compactor replay logs/*.jsonl --preset nous --preset opal --out out/
  compactor replay logs/ --preset codex --set context_window=32000 -q
  compactor replay session.jsonl --policy mine.toml --json
  compactor replay ~/.claude/projects --redact --out shareable/")]
pub struct ReplayArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
    #[command(flatten)]
    pub cost: CostArgs,
    /// Write report.json, sessions.csv, calls.csv, report.md, report.html and transcripts/ here
    /// (created if missing; existing files of the same names are replaced, nothing
    /// else is touched). Checked before any work: an existing file, or a path that
    /// cannot be created or written, is an error.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print report.json on stdout instead of the summary table.
    #[arg(long)]
    pub json: bool,
    /// Check the replay invariants (no orphan tool pairs, alternation, untouched
    /// user/assistant content, compaction never grows history) at every call;
    /// exit 1 if any is violated.
    #[arg(long)]
    pub check_invariants: bool,
    /// Do not write the compacted transcripts.
    #[arg(long)]
    pub no_transcripts: bool,
    /// Skip the summary-quality pass (FRR and the reference points of every
    /// compaction, pruning loss): faster, and report.json has no `quality`.
    #[arg(long)]
    pub no_quality: bool,
    /// Mask secret-looking text (API keys, tokens, JWTs, private keys,
    /// `password=…` assignments) in sessions as soon as they are read, so no
    /// transcript, report or summarizer request holds it. Token counts are then
    /// those of the masked text.
    #[arg(long)]
    pub redact: bool,
    #[command(flatten)]
    pub split: ShardArgs,
}

/// Splitting a run over processes or machines (docs/scale-out.md).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct ShardArgs {
    /// Run shard K of N only: the inputs whose path (a sub-agent file's, its
    /// parent's) hashes to K. Writes this shard's reports and partial.json to
    /// --out; `compactor merge` joins every shard's into what one run writes.
    /// Give every shard the same paths and flags.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<compactor::pipeline::Shard>,
}

#[derive(Debug, Args)]
#[command(after_help = "Exit codes: those of the command the partials come from (replay, compare, check \
or sweep); 2 when the partials cannot be merged: written by other compactor versions or commands, \
over other inputs, with other policies or settings, split another way, a shard given twice or one \
missing. The reason names the partials.

Examples:
  compactor replay logs/ --shard 1/2 --out part1
  compactor replay logs/ --shard 2/2 --out part2
  compactor merge part1 part2 --out report
  compactor merge parts/* --out report --summary \"$GITHUB_STEP_SUMMARY\"")]
pub struct MergeArgs {
    /// The partial outputs, in any order: folders written with --shard K/N --out
    /// (or their partial.json).
    #[arg(required = true, value_name = "PARTIAL")]
    pub partials: Vec<PathBuf>,
    /// Write here what the command would have written with --out.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print JSON as the command does with --json (report.json, check's
    /// outcome, the sweep).
    #[arg(long)]
    pub json: bool,
    /// No warnings on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// check: also write the markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// check: write the merged run's metrics as a baseline to FILE.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// check: print every row of the table.
    #[arg(short, long)]
    pub verbose: bool,
}

#[derive(Debug, Args)]
#[command(
    group(clap::ArgGroup::new("mode").required(true).multiple(true).args(["baseline", "write_baseline"])),
    after_help = "Exit codes: 0 nothing regressed, 1 a regression (listed), 2 usage or input error, or a run \
that cannot be compared with the baseline.

What is compared: the baseline records every policy with all its parameters (as `compactor presets \
--json` prints them) and the run settings (--format, and the --llm-* endpoint flags when a policy \
uses the LLM summarizer). Before replaying, the run must match it, else exit 2 naming what differs:
  - a policy replayed that the baseline lacks (--allow-new replays it, marked \"not compared\");
  - a policy of the baseline that is not replayed;
  - a parameter or setting with another value (policy `opal`: context_window 32000 → 64000).
A changed parameter is an error, not a warning: the comparison would then measure the new \
parameters, not the change of code, and a gate that passes or fails for that reason misleads. \
After an intended change, rewrite the baseline (with --write-baseline, differences are listed, \
not errors); to measure a parameter change against the old baseline, give --allow-param-changes. \
The check.* tolerances and a policy's name and source are not compared. A baseline written \
before parameters were recorded still loads; the output says they could not be compared.

Examples:
  compactor check logs/ --preset nous --write-baseline base.json
  compactor check logs/ --baseline base.json --summary \"$GITHUB_STEP_SUMMARY\"
  compactor check logs/ --baseline base.json --write-baseline base.json
  compactor check logs/ --baseline base.json --json
  compactor check logs/ --baseline base.json --max-frr-drop 1 --must-keep 'fix-*'"
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Policies to replay. Without --preset, --policy, --set, --estimator or --summarizer,
    /// the ones recorded in the --baseline file are used.
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
    /// Compare with this baseline: a file written by --write-baseline, or a report.json.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write this run's metrics as a baseline (a small versioned JSON) to FILE.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Also write the markdown table to FILE (e.g. "$GITHUB_STEP_SUMMARY").
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Print every row of the table, the reference points and counts too (by
    /// default only the rows a rule gates; check.md and --summary have them all).
    #[arg(short, long)]
    pub verbose: bool,
    /// Print the outcome as JSON on stdout instead of the table: `regressed`, every
    /// row (`lines`), the regressions (`failures`) and `notes`. The exit code is the same.
    #[arg(long)]
    pub json: bool,
    /// Mark sessions must-keep (repeatable): a glob matched against the session id, the
    /// log's file name and its path. On those, a compaction whose summary does not name
    /// every file the replaced part modified is a regression. Stored in the baseline.
    #[arg(long = "must-keep", value_name = "GLOB")]
    pub must_keep: Vec<String>,
    /// Largest accepted FRR drop, in points (default: each policy's check.max_frr_drop, 2).
    #[arg(long, value_name = "POINTS")]
    pub max_frr_drop: Option<f64>,
    /// Largest accepted savings drop, in points (default: check.max_savings_drop, 1).
    #[arg(long, value_name = "POINTS")]
    pub max_savings_drop: Option<f64>,
    /// Highest accepted hallucination rate, in percent (default: check.max_hallucination, 1).
    #[arg(long, value_name = "PERCENT")]
    pub max_hallucination: Option<f64>,
    /// Also write the full replay reports here (as `replay --out`, without transcripts).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replay policies the baseline does not have; they are shown as "not
    /// compared" (without this flag, such a policy is an error).
    #[arg(long)]
    pub allow_new: bool,
    /// Compare even when a policy's parameters or the run settings differ
    /// from the baseline's; each difference is listed in the notes (without
    /// this flag, it is an error).
    #[arg(long)]
    pub allow_param_changes: bool,
    #[command(flatten)]
    pub split: ShardArgs,
}

#[derive(Debug, Args)]
#[command(after_help = "Grid file (TOML): a [grid] table of dotted policy keys, each a list of values or a
range { from, to, step }; an optional [base] table of fixed overrides of the base policy:

  [base]
  context_window = \"auto\"
  [grid]
  \"compact.trigger_ratio\" = [0.6, 0.7, 0.8]
  \"compact.keep_recent_ratio\" = { from = 0.05, to = 0.25, step = 0.05 }
  \"prune.soft_trim_chars\" = [2000, 4000, \"off\"]

Precedence, each step over the one before: the --preset or --policy (default: `default`),
then the grid's [base], then --estimator, --summarizer and --set; the [grid] axes then vary
that policy. So `--set context_window=128000` wins over a [base] context_window. A flag on a
key that is also a [grid] axis is an error naming the key: the axis would overwrite it at
every point.

Examples:
  compactor sweep ~/.claude/projects --grid grids/default.toml --out sweep/
  compactor sweep logs/ --preset opal --grid my-grid.toml --min-frr 0.9
  compactor sweep logs/ --grid grids/default.toml --cache-ttl 1h --json")]
pub struct SweepArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The base policy the grid varies: one --preset or one --policy (default:
    /// `default`), then the grid's [base], then --estimator, --summarizer and
    /// --set (see the precedence below).
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
    #[command(flatten)]
    pub cost: CostArgs,
    /// The grid file (TOML, see below).
    #[arg(long, value_name = "FILE.toml")]
    pub grid: PathBuf,
    /// Only recommend points whose summaries keep at least this future-reference
    /// recall (0 to 1).
    #[arg(long, value_name = "X")]
    pub min_frr: Option<f64>,
    /// Write sweep.csv, sweep.md, recommended.toml and report.html here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the sweep as JSON on stdout instead of the front: the axes, every point
    /// with its values and totals, and the recommended point.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub split: ShardArgs,
    /// Run every K-th grid point only (every session): writes a partial output
    /// to --out, for `compactor merge`. Combines with --shard.
    #[arg(long, value_name = "K/N")]
    pub shard_points: Option<compactor::pipeline::Shard>,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print the machine-readable report (JSON) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also print one block per session (format, models, messages, tool calls, usage,
    /// where the context goes, compactions).
    #[arg(long)]
    pub sessions: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  compactor explain session.jsonl                  # the agent's own compactions
  compactor explain session.jsonl --compaction 0   # the first one in full
  compactor explain logs/ --session 5b1c --preset opal --policy opal
  compactor explain session.jsonl --compaction 0 --json")]
pub struct ExplainArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Also replay this built-in policy and list its compactions (repeatable).
    /// Default: none, only the compactions the logs record.
    #[arg(long = "preset", value_name = "NAME")]
    pub presets: Vec<String>,
    /// Override a parameter of every --preset (repeatable): `context_window=32000`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Only sessions whose id starts with this.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only the compactions of this policy: `recorded` (the agent's own) or a --preset's name.
    #[arg(long, value_name = "NAME")]
    pub policy: Option<String>,
    /// Show compaction N of the list in full.
    #[arg(long, value_name = "N")]
    pub compaction: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Replay this built-in policy and probe its compactions (repeatable).
    /// Default: default.
    #[arg(long = "preset", value_name = "NAME")]
    pub presets: Vec<String>,
    /// Override a parameter of every --preset (repeatable): `context_window=32000`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    #[command(flatten)]
    pub llm: LlmArgs,
    /// Questions per compaction and candidate, at most: its heaviest needed atoms.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub max_probes: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write probes.json and probes.csv (one row per question) to this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  compactor presets\n  compactor presets nous > mine.toml      # edit, then: --policy mine.toml\n  compactor presets --json"
)]
pub struct PresetsArgs {
    /// Only this preset.
    pub name: Option<String>,
    /// Print presets as JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every example in the help is a whole line in an 80-column terminal, so
    /// it can be copied as it is: clap wraps long lines of after-help text.
    #[test]
    fn help_examples_are_whole_lines_at_80_columns() {
        let root = Cli::command().term_width(80);
        let mut commands = vec![root.clone()];
        commands.extend(root.get_subcommands().cloned());
        let mut examples = 0;
        for mut c in commands {
            let name = c.get_name().to_string();
            let source = c.get_after_help().map(ToString::to_string).unwrap_or_default();
            let rendered = c.render_help().to_string();
            for line in source.lines().filter(|l| l.starts_with("  compactor ") || l.starts_with("  echo ")) {
                examples += 1;
                assert!(rendered.lines().any(|r| r == line), "`{name} --help` wraps the example `{line}`:\n{rendered}");
            }
        }
        assert!(examples >= 20, "only {examples} examples found");
    }
}
