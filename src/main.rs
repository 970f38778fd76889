//! The `compactor` binary: parse arguments, run one command, map the outcome to an
//! exit code (0 ok, 1 `check` found a regression, 2 usage or input error).

mod allocator;
mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
