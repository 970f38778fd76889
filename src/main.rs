//! The `compactor` binary: parse arguments, run one command, map the outcome to an
//! exit code (0 ok, 1 `check` found a regression, 2 usage or input error).

mod cli;

use std::process::ExitCode;

// A replay allocates and frees millions of small strings and vectors (atoms,
// summary lines, views); with glibc's malloc a fifth of a sweep was spent in
// the allocator. mimalloc: sweep -24 %, replay -17 % (user time, `--jobs 1`,
// the corpus), for ~35 MB more resident memory.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::main()
}
