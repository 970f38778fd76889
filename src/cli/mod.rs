//! Command-line interface: clap definitions and the commands. The only code that
//! prints.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod inspect;

use args::{Cli, Command};
use clap::Parser;
use std::process::ExitCode;

/// Exit codes of the documented contract.
pub const EXIT_OK: u8 = 0;
#[allow(dead_code)] // used by `check`
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
    let result = match cli.command {
        Command::Replay(_) => not_built("replay"),
        Command::Check(_) => not_built("check"),
        Command::Sweep(_) => not_built("sweep"),
        Command::Compare(_) => not_built("compare"),
        Command::Inspect(a) => inspect::run(a),
        Command::Presets(_) => not_built("presets"),
    };
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

fn not_built(name: &str) -> anyhow::Result<u8> {
    eprintln!("compactor {name}: not built yet in this version");
    Ok(EXIT_ERROR)
}
