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
    Check(ReplayArgs),
    /// Replay over a grid of policy parameters and print the Pareto front.
    Sweep(ReplayArgs),
    /// Several presets on the same sessions, side by side.
    Compare(ReplayArgs),
    /// Describe sessions: formats, messages, tool calls, where the tokens go.
    Inspect(InspectArgs),
    /// List the built-in presets with every parameter.
    Presets(PresetsArgs),
}

#[derive(Debug, Args)]
pub struct InputArgs {
    /// Session files, directories, globs, or - for stdin. Default: ~/.claude/projects and
    /// ~/.codex/sessions where they exist.
    pub paths: Vec<PathBuf>,
    /// Force a log format instead of detecting it: claude-code, codex, codex-exec, pi,
    /// gemini, cline, generic.
    #[arg(long)]
    pub format: Option<String>,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// No progress bar and no warnings on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub input: InputArgs,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print the machine-readable report (JSON) on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PresetsArgs {
    /// Print presets as JSON.
    #[arg(long)]
    pub json: bool,
}
