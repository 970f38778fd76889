//! Reading session logs: discovery of input files, dispatch to the per-format
//! readers through the registry of [`format`], and the helpers they share (line
//! splitting, timestamps, API-error classification).
//!
//! Readers never fail on content: a malformed line becomes a diagnostic naming the
//! file and line, an unknown record kind is counted and kept raw. Only an input
//! that cannot be opened at all is an error, and the batch goes on without it.

pub mod claude;
pub mod cline;
pub mod codex;
pub mod codex_exec;
pub mod compressed;
pub mod copies;
pub mod discover;
pub mod errors;
pub mod format;
pub mod gemini;
mod gemini_jsonl;
pub mod generic;
mod json;
pub mod locations;
mod openclaw_db;
mod openclaw_store;
pub mod pi;
pub mod threads;
pub mod time;

use crate::model::{Diagnostic, Format, Session, Severity};
use std::path::Path;

pub use discover::{Input, InputKind, discover};
pub use format::{DETECT_RECORDS, detect};
pub use json::parse_line;
pub(crate) use json::{from_utf8_line, parse_document, parse_json, parse_json_str};
pub use locations::{Home, Location, Os};

/// Largest token count a reader takes from a log (2^40, about 1.1e12: far above
/// any real prompt). Logs are untrusted: a corrupt or hostile count such as
/// `u64::MAX` is clamped here so that what is computed from it downstream (prompt
/// = uncached + cache read + cache write, prompt + output, usage summed over
/// millions of calls) cannot overflow.
pub const MAX_TOKENS: u64 = 1 << 40;

/// A token count as read from a log, clamped to [`MAX_TOKENS`].
pub fn clamp_tokens(n: u64) -> u64 {
    n.min(MAX_TOKENS)
}

/// The result of reading a batch of inputs.
#[derive(Debug, Default)]
pub struct Batch {
    pub sessions: Vec<Session>,
    /// Inputs that could not be read at all (also the file-level warnings that do
    /// not belong to a session).
    pub failures: Vec<Diagnostic>,
    pub inputs_read: usize,
}

/// Read one input. `format` overrides detection. Errors only when the input cannot
/// be read at all (I/O error, or no format recognized).
pub fn read_input(input: &Input, format: Option<Format>) -> Result<Vec<Session>, Diagnostic> {
    match &input.kind {
        InputKind::Folder(f) => match format::of(*f) {
            Some(reader) => reader.read_folder(&input.path),
            None => Err(Diagnostic {
                severity: Severity::Error,
                path: input.path.clone(),
                line: 0,
                message: format!("no reader for {} folders", f.name()),
            }),
        },
        InputKind::File => {
            let data = read_input_file(&input.path)?;
            read_maybe_compressed(&input.path, &data, format)
        }
        InputKind::Stdin => {
            use std::io::Read;
            let mut data = Vec::new();
            std::io::stdin().lock().read_to_end(&mut data).map_err(|e| Diagnostic {
                severity: Severity::Error,
                path: input.path.clone(),
                line: 0,
                message: format!("cannot read standard input: {e}"),
            })?;
            read_maybe_compressed(&input.path, &data, format)
        }
    }
}

/// An input file's bytes ([`read_regular_file`]), its failure as a diagnostic.
fn read_input_file(path: &Path) -> Result<Vec<u8>, Diagnostic> {
    read_regular_file(path).map_err(|e| file_error(path, format!("cannot read: {e}")))
}

/// A Zstandard log's decompressed bytes ([`compressed`]), its failure as a
/// diagnostic naming `path`.
fn decompressed(path: &Path, data: &[u8]) -> Result<Vec<u8>, Diagnostic> {
    compressed::decompress(data, compressed::MAX_DECOMPRESSED)
        .map_err(|message| file_error(path, format!("cannot decompress: {message}")))
}

/// An input file's plain bytes: read, and decompressed when it is a Zstandard log.
pub(crate) fn read_plain_file(path: &Path) -> Result<Vec<u8>, Diagnostic> {
    let data = read_input_file(path)?;
    if compressed::is_zstd(&data) { decompressed(path, &data) } else { Ok(data) }
}

pub(crate) fn file_error(path: &Path, message: String) -> Diagnostic {
    Diagnostic { severity: Severity::Error, path: path.to_path_buf(), line: 0, message }
}

/// [`read_bytes`], after decompressing a Zstandard log ([`compressed`]): read
/// under the name it had before, reported under its own.
fn read_maybe_compressed(path: &Path, data: &[u8], format: Option<Format>) -> Result<Vec<Session>, Diagnostic> {
    if !compressed::is_zstd(data) {
        return read_bytes(path, data, format);
    }
    let plain = decompressed(path, data)?;
    let inner = compressed::inner_path(path).unwrap_or_else(|| path.to_path_buf());
    let own = |p: &mut std::path::PathBuf| {
        if *p == inner {
            *p = path.to_path_buf();
        }
    };
    let mut sessions = read_bytes(&inner, &plain, format).map_err(|mut d| {
        own(&mut d.path);
        d
    })?;
    for s in &mut sessions {
        own(&mut s.source_path);
        s.diagnostics.messages.iter_mut().for_each(|d| own(&mut d.path));
    }
    Ok(sessions)
}

/// Read a whole input or sidecar file, opened read-only, refusing anything but a
/// regular file: a FIFO or a device named like a session file (or linked to one)
/// would block the read forever or never end.
pub fn read_regular_file(path: &Path) -> std::io::Result<Vec<u8>> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    std::fs::read(path)
}

/// Read an in-memory log. `path` is used for diagnostics and session ids only,
/// but for a SQLite database (OpenClaw's), which is read from its file, and
/// for the OpenClaw session store beside a transcript file (its window).
pub fn read_bytes(path: &Path, data: &[u8], format: Option<Format>) -> Result<Vec<Session>, Diagnostic> {
    let format = match format.or_else(|| detect(data)) {
        Some(f) => f,
        None => {
            return Err(Diagnostic {
                severity: Severity::Error,
                path: path.to_path_buf(),
                line: 0,
                message: if data.iter().all(u8::is_ascii_whitespace) {
                    "empty file: no session records".to_string()
                } else {
                    "no known session-log format recognized in the first records (use --format to force one)"
                        .to_string()
                },
            });
        }
    };
    let Some(reader) = format::of(format) else {
        return Err(Diagnostic {
            severity: Severity::Error,
            path: path.to_path_buf(),
            line: 0,
            message: format!("no reader for the {} format", format.name()),
        });
    };
    Ok(reader.read(path, data))
}

/// Read every input (in parallel), then link sub-agent sessions to their parents.
/// Sessions come back sorted by (source path, id) whatever the thread count.
pub fn read_all(inputs: &[Input], format: Option<Format>) -> Batch {
    use rayon::prelude::*;
    let families = copies::families(inputs, format);
    // The streams of one thread are read together, as the family's first
    // input; every other input on its own.
    let items: Vec<usize> = (0..inputs.len()).filter(|&i| !families.joined(i) || families.of(i) == Some(i)).collect();
    let groups = families.by_first();
    let results: Vec<(usize, Result<Vec<Session>, Diagnostic>)> = items
        .par_iter()
        // After Ctrl-C, the inputs not started yet are skipped (the run is over).
        .flat_map_iter(|&i| {
            let thread = groups.get(&i).filter(|_| families.joined(i));
            if crate::interrupt::requested() {
                return thread.map_or_else(|| vec![i], Clone::clone).into_iter().map(|m| (m, Ok(Vec::new()))).collect();
            }
            match thread {
                Some(members) => threads::read_thread(inputs, members),
                None => vec![(i, read_input(&inputs[i], format))],
            }
        })
        .collect();
    let mut batch = Batch::default();
    for (_, r) in results {
        match r {
            Ok(s) => {
                batch.inputs_read += 1;
                batch.sessions.extend(s);
            }
            Err(d) => batch.failures.push(d),
        }
    }
    // Copies first, among the sessions as read: a fork the log marks is
    // settled next, by whether its parent is in the batch.
    copies::settle_batch(&mut batch.sessions, inputs, &families);
    format::link_across_files(&mut batch.sessions);
    batch.sessions.sort_by(|a, b| a.source_path.cmp(&b.source_path).then_with(|| a.id.cmp(&b.id)));
    batch
}

/// Remove a UTF-8 byte-order mark.
pub fn strip_bom(data: &[u8]) -> &[u8] {
    data.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(data)
}

/// Iterate over non-blank lines with their 1-based line numbers, tolerating CRLF,
/// a BOM and a missing final newline.
pub fn lines(data: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    raw_lines(data).map(|l| (l.number, l.text))
}

/// One line of a JSONL file, as [`raw_lines`] yields it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawLine<'a> {
    /// 1-based line number.
    pub number: u64,
    /// The line without its newline, carriage return or (on line 1) BOM.
    pub text: &'a [u8],
    /// Bytes the line occupies in the file: BOM, CR and newline included, so
    /// the lengths of all lines (blank ones too) add up to the file size.
    pub raw_len: u64,
}

/// Non-blank lines with their raw lengths. One pass, searching newlines with
/// memchr's vector search: splitting byte by byte was a tenth of a whole
/// replay, and a search eight bytes at a time still 1 % of one.
pub fn raw_lines(data: &[u8]) -> impl Iterator<Item = RawLine<'_>> {
    let mut pos = 0usize;
    let mut number = 0u64;
    std::iter::from_fn(move || {
        while pos < data.len() {
            let start = pos;
            let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
            pos = end + 1;
            number += 1;
            let raw_len = (pos.min(data.len()) - start) as u64;
            let mut l = &data[start..end];
            if start == 0 {
                l = strip_bom(l);
            }
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            if !l.iter().all(u8::is_ascii_whitespace) {
                return Some(RawLine { number, text: l, raw_len });
            }
        }
        None
    })
}

/// The compact JSON text of an unknown record, cut at
/// [`crate::model::MAX_UNKNOWN_RAW_LEN`] bytes (the length diagnostics keep):
/// serialization stops there, so a huge record is never copied whole.
pub fn raw_json(v: &serde_json::Value) -> String {
    struct Bounded(Vec<u8>);
    impl std::io::Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = crate::model::MAX_UNKNOWN_RAW_LEN - self.0.len();
            if buf.len() > room {
                self.0.extend_from_slice(&buf[..room]);
                // Stops the serializer: the rest would be cut anyway.
                return Err(std::io::Error::other("full"));
            }
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = Bounded(Vec::new());
    let _ = serde_json::to_writer(&mut w, v);
    let mut bytes = w.0;
    // The cut may fall inside a character.
    let valid = match std::str::from_utf8(&bytes) {
        Ok(_) => bytes.len(),
        Err(e) => e.valid_up_to(),
    };
    bytes.truncate(valid);
    String::from_utf8(bytes).unwrap_or_default()
}

/// A session id derived from a file name when the log has none.
pub fn stem_id(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "session".to_string())
}

/// Truncate a string to at most `max` bytes on a char boundary.
pub fn truncate_str(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Whether `s` has the shape of a UUID (8-4-4-4-12 hex digits), as the
/// session ids agents write into their log names.
pub(crate) fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter()
            .enumerate()
            .all(|(i, c)| if matches!(i, 8 | 13 | 18 | 23) { *c == b'-' } else { c.is_ascii_hexdigit() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The straightforward definition `raw_lines` must agree with: split on
    /// newlines (after the BOM), number every segment, skip blank ones.
    fn reference(data: &[u8]) -> Vec<(u64, Vec<u8>, u64)> {
        let mut lens: Vec<u64> = data.split(|&b| b == b'\n').map(|l| l.len() as u64 + 1).collect();
        if let Some(last) = lens.last_mut() {
            *last -= 1;
        }
        strip_bom(data)
            .split(|&b| b == b'\n')
            .enumerate()
            .filter_map(|(i, l)| {
                let l = l.strip_suffix(b"\r").unwrap_or(l);
                (!l.iter().all(u8::is_ascii_whitespace)).then(|| (i as u64 + 1, l.to_vec(), lens[i]))
            })
            .collect()
    }

    fn ours(data: &[u8]) -> Vec<(u64, Vec<u8>, u64)> {
        raw_lines(data).map(|l| (l.number, l.text.to_vec(), l.raw_len)).collect()
    }

    #[test]
    fn lines_edge_cases() {
        for data in [
            &b""[..],
            b"\n",
            b"a",
            b"a\n",
            b"a\r\nb",
            b"\xEF\xBB\xBF{}\n\n  \n{\"x\":1}\r\n",
            b"\xEF\xBB\xBF",
            b"0123456789abcdef\n0123456789abcdefg",
        ] {
            assert_eq!(ours(data), reference(data), "{data:?}");
        }
        // Raw lengths of the non-blank lines of a file without blank lines add up
        // to its size.
        let data = b"\xEF\xBB\xBF{\"a\":1}\r\n{\"b\":2}\n{\"c\":3}";
        assert_eq!(raw_lines(data).map(|l| l.raw_len).sum::<u64>(), data.len() as u64);
    }

    proptest! {
        #[test]
        fn raw_lines_match_the_reference(data in proptest::collection::vec(
            prop_oneof![Just(b'\n'), Just(b'\r'), Just(b' '), Just(b'x'), Just(0xEFu8), Just(0xBBu8), Just(0xBFu8), any::<u8>()],
            0..200,
        )) {
            prop_assert_eq!(ours(&data), reference(&data));
        }

    }
}
