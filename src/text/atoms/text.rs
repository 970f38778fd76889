//! Small text helpers and per-kind normalization: char boundaries, whitespace
//! folding, paths, symbols and ids, shared by every scanner in `extract`.

use super::*;
#[cfg(test)]
pub(crate) use crate::text::symbols::KNOWN_EXT;
pub(crate) use crate::text::symbols::{accept_symbol, known_ext};

/// Largest char boundary ≤ `i`.
pub(crate) fn floor_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Smallest char boundary ≥ `i`.
fn ceil_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The parts of a text that are scanned: all of it when small, else its head and
/// its tail.
pub(crate) fn pieces(text: &str) -> [&str; 2] {
    if text.len() <= SCAN_HEAD + SCAN_TAIL {
        return [text, ""];
    }
    let head = floor_boundary(text, SCAN_HEAD);
    let tail = ceil_boundary(text, text.len() - SCAN_TAIL);
    [&text[..head], &text[tail..]]
}

/// Whitespace runs folded to one space, trimmed.
pub(crate) fn fold_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    fold_ws_into(&mut out, s);
    out
}

/// [`fold_ws`] of `s`, appended to `out`. What `split_whitespace` splits at,
/// read a byte at a time with a character decoded only where a byte is not
/// ASCII (every summary's text is folded for substring matches, and most of
/// it is ASCII), and copied a run of words at a time: a run whose words are
/// apart by single spaces is already folded.
pub(crate) fn fold_ws_into(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let n = bytes.len();
    // The length of the whitespace character at `i`, 0 if none.
    let space_at = |i: usize| -> usize {
        match bytes[i] {
            b if ascii_space(b) => 1,
            b if b < 0x80 => 0,
            _ => s.get(i..).and_then(|r| r.chars().next()).filter(|c| c.is_whitespace()).map_or(0, char::len_utf8),
        }
    };
    let mut first = true;
    let mut i = 0;
    while i < n {
        let w = space_at(i);
        if w > 0 {
            i += w;
            continue;
        }
        let start = i;
        loop {
            while i < n && bytes[i] < 0x80 && !ascii_space(bytes[i]) {
                i += 1;
            }
            if i >= n {
                break;
            }
            if bytes[i] >= 0x80 {
                // Not whitespace: part of the word (a continuation byte is
                // no character start, so `space_at` says 0 for it).
                if space_at(i) > 0 {
                    break;
                }
                i += 1;
            } else if bytes[i] == b' ' && i + 1 < n && space_at(i + 1) == 0 {
                // One space between two words: already folded.
                i += 1;
            } else {
                break;
            }
        }
        if !first {
            out.push(' ');
        }
        first = false;
        out.push_str(&s[start..i]);
    }
}

/// At most `n` characters of `s`.
pub(crate) fn truncate_chars(s: &str, n: usize) -> &str {
    // No more bytes than `n`: no more characters either (most commands and
    // values are short, and counting characters walks them all).
    if s.len() <= n {
        return s;
    }
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Last `/`-segment of a path.
pub(crate) fn basename(p: &str) -> &str {
    // A reverse byte search: `rsplit('/')` sets up a char searcher, which
    // cost more than the search on the short paths asked here (every path
    // a summary names, once per row). `/` is ASCII: a char boundary.
    match memchr::memrchr(b'/', p.as_bytes()) {
        Some(i) => &p[i + 1..],
        None => p,
    }
}

/// Extension of a file name: what follows its last `.`, if that is 1–10
/// alphanumerics with a letter (after a stem, or none: a dot-file).
///
/// Read back from the end, at most 11 bytes: every path token of every text
/// asks, and a search for the last `.` from the end cost twice the rest.
pub(super) fn extension(name: &str) -> Option<&str> {
    let b = name.as_bytes();
    // Up to 10 alphanumerics end the name; the byte before them must be the
    // dot (an 11th alphanumeric, or any other byte, leaves no extension).
    let run = b.iter().rev().take(10).take_while(|x| x.is_ascii_alphanumeric()).count();
    let dot = b.len().checked_sub(run + 1)?;
    if b[dot] != b'.' {
        return None;
    }
    // After an ASCII `.`: a character boundary. Empty, it has no letter.
    let ext = name.get(dot + 1..)?;
    ext.bytes().any(|x| x.is_ascii_alphabetic()).then_some(ext)
}

/// Normalized working directory (no trailing `/`, `\` → `/`, drive upper-cased).
pub(crate) fn normalize_cwd(cwd: &str) -> Option<String> {
    let c = windows_slashes(cwd.trim());
    let c = c.trim_end_matches('/');
    if c.is_empty() { None } else { Some(c.to_string()) }
}

fn windows_slashes(s: &str) -> String {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        let mut out = String::with_capacity(s.len());
        out.push(char::from(b[0].to_ascii_uppercase()));
        out.push_str(&s[1..].replace('\\', "/"));
        out
    } else {
        s.to_string()
    }
}

/// Normalize a path as written in a log. `None` for things that are not a usable
/// path (globs, URLs, the workspace root itself, empty).
pub(crate) fn normalize_path(raw: &str, cwd: Option<&str>) -> Option<String> {
    let s = raw.trim().trim_matches(|c| matches!(c, '"' | '\'' | '`'));
    let s = s.trim_start_matches(['(', '[', '<', '{']);
    let s = s.trim_end_matches([',', ';', ':', '!', '?', ')', ']', '}', '>', '"', '\'', '`']);
    let s = s.trim_end_matches('.');
    if s.is_empty() || s.len() > MAX_VALUE_LEN {
        return None;
    }
    // A URL (`://`) or a character no path holds, in one pass over the bytes
    // (every path candidate of every message comes here).
    let b = s.as_bytes();
    let not_a_path = b.iter().enumerate().any(|(i, &c)| {
        matches!(c, b'*' | b'?' | b'{' | b'}' | b'$' | b'<' | b'>' | b'|' | b'\n' | b'\r' | b'\t' | b'"')
            || (c == b':' && b[i + 1..].starts_with(b"//"))
    });
    if not_a_path {
        return None;
    }
    if let Some(v) = already_normal(s, cwd) {
        return Some(v.to_string());
    }
    normalize_segments(s, cwd)
}

/// `s` itself when normalizing would not change it (most paths in a log): no
/// drive letter, not under `cwd`, and no empty, `.` or `..` segment.
pub(super) fn already_normal<'s>(s: &'s str, cwd: Option<&str>) -> Option<&'s str> {
    let b = s.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if drive || cwd.is_some_and(|c| s.starts_with(c)) {
        return None;
    }
    let body = s.strip_prefix('/').unwrap_or(s).as_bytes();
    let plain =
        !body.is_empty() && body.split(|&c| c == b'/').all(|seg| !seg.is_empty() && seg != b"." && seg != b"..");
    plain.then_some(s)
}

/// [`normalize_path`] of a trimmed candidate, segment by segment.
pub(super) fn normalize_segments(s: &str, cwd: Option<&str>) -> Option<String> {
    let s = windows_slashes(s);
    let mut rest: &str = &s;
    if let Some(cwd) = cwd {
        if rest == cwd {
            return None;
        }
        if let Some(r) = rest.strip_prefix(cwd).and_then(|r| r.strip_prefix('/')) {
            rest = r;
        }
    }
    let absolute = rest.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in rest.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            _ => parts.push(seg),
        }
    }
    if parts.is_empty() {
        return None;
    }
    let joined = parts.join("/");
    Some(if absolute { format!("/{joined}") } else { joined })
}

/// Is this word-run from prose or code a path? (See the module docs for why
/// each rule exists.)
pub(super) fn accept_path_token(t: &str) -> bool {
    if t.is_empty() || t.len() > MAX_VALUE_LEN {
        return false;
    }
    if !t.contains('/') {
        let Some(ext) = extension(t) else { return false };
        let stem = &t[..t.len() - ext.len() - 1];
        return known_ext(ext) && !stem.is_empty() && stem.bytes().any(|b| b.is_ascii_alphabetic());
    }
    // Counted, not collected: this runs for every path-like run of a text.
    let (mut segs, mut last, mut numeric) = (0usize, "", true);
    for seg in t.split('/').filter(|s| !s.is_empty()) {
        segs += 1;
        last = seg;
        numeric &= seg.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    }
    if segs == 0 || numeric {
        return false;
    }
    let prefixed = t.starts_with("./") || t.starts_with("../") || t.starts_with("~/");
    if prefixed {
        return true;
    }
    if t.starts_with('/') {
        return segs >= 2;
    }
    if extension(last).is_some() {
        return true;
    }
    (t.ends_with('/') && segs >= 2) || segs >= 3
}

/// A path token [`accept_path_token`] takes on its segment count alone: no
/// `./`, `~/` or `/` before it, no `/` after it, no extension on its last
/// segment and no dot anywhere (`src/auth/middleware`, but also the word list
/// `reset/compact/switchSession`). Its context decides.
pub(super) fn ambiguous_path(t: &str) -> bool {
    !(t.starts_with('.') || t.starts_with('~') || t.starts_with('/') || t.ends_with('/') || t.contains('.'))
        && t.contains('/')
}

/// Spans already claimed by a higher-priority family; sorted, non-overlapping.
#[derive(Default)]
pub(super) struct Claimed {
    spans: Vec<(usize, usize)>,
    fresh: Vec<(usize, usize)>,
}

impl Claimed {
    pub(super) fn overlaps(&self, s: usize, e: usize) -> bool {
        let i = self.spans.partition_point(|&(a, _)| a < e);
        i > 0 && self.spans[i - 1].1 > s
    }
    /// Claim a span; visible to the next family (matches of one family never
    /// overlap each other).
    pub(super) fn claim(&mut self, s: usize, e: usize) {
        self.fresh.push((s, e));
    }
    pub(super) fn commit(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        self.spans.append(&mut self.fresh);
        self.spans.sort_unstable();
    }
}

/// Code spans (fenced blocks, inline backticks) of a prose text.
pub(super) fn code_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut in_fence = false;
    let mut off = 0;
    for line in text.split_inclusive('\n') {
        let start = off;
        off += line.len();
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            spans.push((start, off));
            continue;
        }
        let mut open: Option<usize> = None;
        for (i, b) in line.bytes().enumerate() {
            if b == b'`' {
                match open.take() {
                    Some(o) => spans.push((start + o, start + i + 1)),
                    None => open = Some(i),
                }
            }
        }
    }
    spans
}

pub(super) fn in_spans(spans: &[(usize, usize)], at: usize) -> bool {
    let i = spans.partition_point(|&(a, _)| a <= at);
    i > 0 && spans[i - 1].1 > at
}

pub(super) fn byte_before(text: &str, i: usize) -> Option<u8> {
    if i == 0 { None } else { text.as_bytes().get(i - 1).copied() }
}

/// `exception class + message prefix`, whitespace folded, ≤ 80 characters.
pub(crate) fn fingerprint(s: &str) -> String {
    let f = fold_ws(truncate_chars(s, ERROR_FINGERPRINT_CHARS * 4));
    truncate_chars(&f, ERROR_FINGERPRINT_CHARS).trim_end().to_string()
}

fn is_hex_id(v: &str) -> bool {
    v.len() >= 7 && v.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A hex id: at least 7 hex digits with at least one digit and one letter (pure
/// letters are words like `defaced`, pure digits are numbers).
pub(crate) fn is_hex_value(v: &str) -> bool {
    is_hex_id(v) && v.bytes().any(|b| b.is_ascii_digit()) && v.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Two hex ids name the same object when one is a prefix of the other (a git
/// short SHA and the full SHA), with at least 7 digits in common.
pub(crate) fn hex_compatible(a: &str, b: &str) -> bool {
    a.len() >= 7 && b.len() >= 7 && (a.starts_with(b) || b.starts_with(a))
}

pub(super) fn trim_url(u: &str) -> &str {
    let mut u = u.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', '*', ']']);
    u = u.trim_end_matches('/');
    u
}
