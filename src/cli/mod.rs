//! Command-line interface: clap definitions and the commands. The only code that
//! prints. Exit codes: 0 ok, 1 regression, 2 usage or input error, 130 (143)
//! interrupted by SIGINT (SIGTERM).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod check;
mod command;
mod explain;
mod fallbacks;
mod inspect;
mod llm;
mod load;
mod merge;
mod preflight;
mod presets_cmd;
mod probe;
mod replay;
mod shard;
mod suggest;
mod sweep;

use args::{Cli, Command};
use clap::Parser;
use std::process::ExitCode;

/// `compactor completions SHELL`: the completion script, on stdout.
fn completions(shell: clap_complete::Shell) -> anyhow::Result<u8> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut args::Cli::command(), "compactor", &mut out);
    print_stdout(&String::from_utf8_lossy(&out))
}

/// Exit codes of the documented contract.
pub const EXIT_OK: u8 = 0;
pub const EXIT_REGRESSION: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout with exit 0, usage errors with 2.
            let code = if e.use_stderr() { EXIT_ERROR } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // Ctrl-C sets a flag the long loops check (compactor::interrupt).
    compactor::interrupt::install();
    let result = match cli.command {
        Command::Replay(a) => replay::replay(a),
        Command::Check(a) => check::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Compare(a) => replay::compare(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Presets(a) => presets_cmd::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Completions(a) => completions(a.shell),
        Command::Merge(a) => merge::run(a),
    };
    // Interrupted: whatever the command returned, it stopped early, before
    // putting its outputs in place: --out is as it was (output::stage).
    if let Some(code) = compactor::interrupt::exit_code() {
        eprintln!("interrupted");
        return ExitCode::from(code);
    }
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Print to stdout; a closed pipe (`compactor … | head`) is not an error.
pub fn print_stdout(text: &str) -> anyhow::Result<u8> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(EXIT_OK),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(EXIT_OK),
        Err(e) => {
            eprintln!("error: cannot write to standard output: {e}");
            Ok(EXIT_ERROR)
        }
    }
}
