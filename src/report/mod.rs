//! The replay report (DESIGN.md §7): one versioned structure built from the
//! replay results, and pure exporters that turn it into bytes (`report.json`,
//! `sessions.csv`, `calls.csv`, `report.md`, transcripts). Nothing here touches
//! the file system; `write` puts the bytes under `--out` through
//! `output::fsutil` (sanitized names, atomic writes).

pub mod check;
pub mod compare;
pub mod csv_out;
pub mod export;
pub mod html;
mod html_compactions;
pub mod jsonl;
pub mod markdown;
pub mod partial;
pub mod quality;
mod svg;
pub mod sweep;
pub mod terminal;
pub mod write;

pub use crate::num::{round4, savings_pct};
pub use crate::pipeline::results::*;
use crate::replay::SessionTrace;

/// `report.json`: pretty-printed, newline-terminated.
pub fn to_json(report: &Report) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(report).unwrap_or_default();
    out.push(b'\n');
    out
}

/// One transcript as JSONL: one normalized message per line; summaries carry
/// `"origin": "compact_summary"`.
pub fn transcript_jsonl(trace: &SessionTrace) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = write_transcript(&mut out, trace);
    out
}

/// [`transcript_jsonl`] written to `w` in chunks of about 100 KB: a
/// transcript runs to tens of MB, and growing one buffer for all of it
/// copied it over and over (and held it whole, for each policy). Chunks of
/// 96 KB or more pass a 64 KB buffered writer by; larger ones held more
/// memory for no fewer instructions (measured).
pub fn write_transcript(w: &mut dyn std::io::Write, trace: &SessionTrace) -> std::io::Result<()> {
    write_transcript_sharing(w, trace, None, false)
}

/// The JSONL lines of session messages that transcripts carry unchanged
/// ([`SessionTrace::transcript_sources`]), kept while one session's
/// transcripts are written: under several policies most of a session's
/// messages reach every transcript as they were read, and escaping them
/// again for each policy was most of what writing transcripts cost in a
/// `compare`. Lives for one session, so it holds at most that session's
/// messages once.
#[derive(Debug, Default)]
pub struct SourceLines {
    bytes: Vec<u8>,
    /// By session message index: its line's range in `bytes`, once written.
    at: Vec<Option<std::ops::Range<usize>>>,
}

impl SourceLines {
    fn get(&self, i: usize) -> Option<&[u8]> {
        self.at.get(i)?.clone().and_then(|r| self.bytes.get(r))
    }

    fn keep(&mut self, i: usize, line: &[u8]) {
        if self.at.len() <= i {
            self.at.resize(i + 1, None);
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(line);
        self.at[i] = Some(start..self.bytes.len());
    }
}

/// [`write_transcript`], taking the lines of unchanged session messages
/// from `shared` and, when `keep_new`, keeping there the ones it writes
/// first. The last transcript of a session need not keep any: nothing
/// after it reads them.
pub fn write_transcript_sharing(
    w: &mut dyn std::io::Write,
    trace: &SessionTrace,
    mut shared: Option<&mut SourceLines>,
    keep_new: bool,
) -> std::io::Result<()> {
    const CHUNK: usize = 128 * 1024;
    let mut chunk = Vec::with_capacity(CHUNK);
    for (k, m) in trace.transcript.iter().enumerate() {
        let source = trace.transcript_sources.get(k).copied().flatten().map(|i| i as usize);
        match (shared.as_deref_mut(), source) {
            (Some(lines), Some(i)) => match lines.get(i) {
                Some(line) => chunk.extend_from_slice(line),
                None => {
                    let start = chunk.len();
                    jsonl::push_message(&mut chunk, m);
                    if keep_new {
                        lines.keep(i, &chunk[start..]);
                    }
                }
            },
            _ => jsonl::push_message(&mut chunk, m),
        }
        chunk.push(b'\n');
        // Written whole, a chunk bypasses a buffered writer's own buffer.
        if chunk.len() >= CHUNK * 3 / 4 {
            w.write_all(&chunk)?;
            chunk.clear();
        }
    }
    w.write_all(&chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::SessionMetrics;

    /// A transcript is written in chunks of about 100 KB (plus the message
    /// that crosses the mark), whose bytes are the JSONL of its messages, one
    /// a line, in order.
    #[test]
    fn a_long_transcript_is_written_in_bounded_chunks() {
        use crate::model::{Block, Message, Origin, Role};
        use crate::replay::SystemTokensSource;
        use crate::tokens::EstimatorKind;
        struct Chunks(Vec<Vec<u8>>);
        impl std::io::Write for Chunks {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.push(b.to_vec());
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let transcript: Vec<Message> = (0..400)
            .map(|i| {
                Message::new(Role::User, Origin::Human, vec![Block::text(format!("{i} {}\n\"q\"", "x".repeat(i * 37)))])
            })
            .collect();
        let mut expected = Vec::new();
        for m in &transcript {
            jsonl::push_message(&mut expected, m);
            expected.push(b'\n');
        }
        let trace = SessionTrace {
            session_id: "s".into(),
            policy: "p".into(),
            estimator: EstimatorKind::Chars4,
            context_window: 200_000,
            window_source: crate::model::WindowSource::Default,
            system_tokens: 0,
            system_tokens_source: SystemTokensSource::Zero,
            calls: Vec::new(),
            compactions: Vec::new(),
            prunes: Vec::new(),
            transcript,
            transcript_sources: Vec::new(),
            metrics: SessionMetrics::default(),
            violations: Vec::new(),
            agent_summaries: Vec::new(),
        };
        let mut w = Chunks(Vec::new());
        write_transcript(&mut w, &trace).unwrap();
        assert!(expected.len() > 2 << 20, "{}", expected.len());
        assert!(w.0.len() > 8, "{} writes", w.0.len());
        assert!(w.0.iter().all(|c| c.len() < 128 * 1024 + 16 * 1024), "a chunk grew past the mark");
        assert_eq!(w.0.concat(), expected);
        assert_eq!(transcript_jsonl(&trace), expected);
    }
}
