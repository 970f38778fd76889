//! Writing results: report files, transcripts, and the file-system rules they
//! follow (sanitized names, atomic writes, never outside `--out`).

pub mod fsutil;
