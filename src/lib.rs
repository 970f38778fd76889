//! compactor: replay AI coding-agent session logs through context-management
//! policies (tool-output pruning, history compaction) and measure what they save
//! and what they lose.
//!
//! This library never prints; the `compactor` binary (`src/main.rs`, `src/cli/`)
//! owns stdout, stderr and exit codes.

pub mod accuracy;
pub mod check;
pub mod cost;
pub mod inspect;
pub mod interrupt;
pub mod invariants;
pub mod llm;
pub mod metrics;
pub mod model;
pub mod num;
pub mod outcome;
pub mod output;
pub mod pipeline;
pub mod policy;
pub mod presets;
pub mod quality;
pub mod read;
pub mod redact;
pub mod replay;
pub mod report;
pub mod summarize;
pub mod sweep;
#[cfg(any(test, feature = "testkit"))]
pub mod synth;
#[cfg(any(test, feature = "testkit"))]
pub mod testing;
pub mod text;
pub mod tokens;
pub mod tools;
