//! Every integration test in one binary: one link instead of twenty on a
//! 2-core machine. Each module is one area, as its own file was before.

mod architecture;
mod bad_input;
mod bench_cli;
mod clearings;
mod cli_check;
mod cli_command;
mod cli_compare;
mod cli_completions;
mod cli_explain;
mod cli_inspect;
mod cli_llm;
mod cli_llm_fallbacks;
mod cli_prices;
mod cli_probe;
mod cli_prompt_file;
mod cli_replay;
mod cli_safety;
mod cli_shard;
mod cli_signals;
mod cli_sweep;
mod corpus;
mod corpus_invariants;
mod discovery;
mod forks;
mod fuzz_readers;
mod fuzz_replay;
mod fuzz_runner;
mod fuzz_support;
mod html_report;
mod llm;
mod quality_corpus;
mod readme;
mod spec000;
mod spec004;
