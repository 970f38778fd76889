//! Writing results: report files, transcripts, and the file-system rules they
//! follow (sanitized names, atomic writes, never outside `--out`, a run's files
//! put in place only once it is complete).

pub mod fsutil;
pub mod stage;
