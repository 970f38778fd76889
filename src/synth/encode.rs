//! How values are spelled in the log: JSON strings and arrays, UUIDs, base62 and
//! base64 noise, ISO 8601 timestamps.

use super::*;

/// `fmt::Write` into a byte buffer, for `write!` of JSON fragments.
pub(super) struct Sink<'a>(pub(super) &'a mut Vec<u8>);

impl std::fmt::Write for Sink<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Append `s` as a JSON string literal. Non-ASCII is written as UTF-8, as
/// Claude Code (and serde_json) do.
pub fn json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => {
                out.extend_from_slice(&bytes[start..i]);
                let _ = write!(Sink(out), "\\u{b:04x}");
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(esc);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

pub(super) fn push_json_string(out: &mut String, s: &str) {
    let mut v = Vec::with_capacity(s.len() + 2);
    json_str(&mut v, s);
    out.push_str(&String::from_utf8_lossy(&v));
}

pub(super) fn json_str_array(out: &mut Vec<u8>, items: &[&str]) {
    out.push(b'[');
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_str(out, s);
    }
    out.push(b']');
}

/// A random version-4 UUID string.
pub(super) fn uuid(rng: &mut Rng) -> String {
    let a = rng.next_u64();
    let b = rng.next_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

pub(super) fn base62(rng: &mut Rng, n: usize) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    (0..n).map(|_| ALPHABET[rng.below(62) as usize] as char).collect()
}

/// `n` base64 characters of random payload after a fixed prefix (a PNG header, a
/// signature's first bytes).
pub(super) fn base64_random(rng: &mut Rng, n: usize, prefix: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(n + prefix.len());
    s.push_str(prefix);
    let body = n.saturating_sub(prefix.len()) / 4 * 4;
    let mut word = 0u64;
    for i in 0..body {
        if i % 10 == 0 {
            word = rng.next_u64();
        }
        s.push(ALPHABET[(word & 63) as usize] as char);
        word >>= 6;
    }
    s
}

/// `2026-04-27T18:40:29.529Z` from milliseconds since the epoch (proleptic
/// Gregorian, days-from-civil inverse).
pub fn iso8601(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}
