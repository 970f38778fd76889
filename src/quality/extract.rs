//! Deterministic atom extraction and normalization (quality.md §c.2).
//!
//! One text is scanned by a fixed list of linear-time regexes, compiled once,
//! and by the hand-written matchers of `words` for the shapes that match most
//! often (paths, symbols, hex values, long numbers). Families run in priority
//! order and claim the byte spans they match, so a URL is not also read as a
//! path, and a path is not also read as a symbol. Only the head and tail of
//! huge texts are scanned ([`SCAN_HEAD`], [`SCAN_TAIL`]): a multi-megabyte
//! tool output costs a bounded amount of work.
//!
//! Normalization per type:
//! - paths: relative to cwd when absolute under it, `./` stripped, `.`/`..`
//!   collapsed lexically, `\` → `/` for Windows paths, case kept;
//! - symbols: exact, case-sensitive;
//! - errors: whitespace folded, the fingerprint cut to 80 characters, case kept;
//! - commands: `argv[0]` + subcommand words + flags + path arguments, shell wrappers
//!   (`bash -lc '…'`) removed, free-text arguments (quoted strings with spaces)
//!   dropped, whitespace folded;
//! - ids: hex and UUIDs upper-cased, URLs without trailing punctuation or `/`;
//! - constraints and asks: lower-cased keyword sets without stop words.

use super::AtomKind;
use super::line_memo::LineMemo;
use super::words;
use crate::tokens::ascii_space;
use memchr::memmem;
use regex::{Captures, Regex};
use serde_json::Value;
use std::sync::LazyLock;

/// Bytes scanned from the start of one text.
pub(crate) const SCAN_HEAD: usize = 192 * 1024;
/// Bytes scanned from the end of one text (after the head).
pub(crate) const SCAN_TAIL: usize = 64 * 1024;
/// Longest atom value kept; longer matches are noise (base64, minified code).
const MAX_VALUE_LEN: usize = 512;
/// Error fingerprints: exception class + message prefix (quality.md §c.2).
pub(crate) const ERROR_FINGERPRINT_CHARS: usize = 80;
const COMMAND_CHARS: usize = 200;
const CONSTRAINT_CHARS: usize = 300;
/// Most keywords kept per constraint (OpenClaw keeps 12 per ask).
pub(crate) const CONSTRAINT_KEYWORDS: usize = 16;
pub(crate) const ASK_KEYWORDS: usize = 12;
/// Most bytes of one shell command normalized.
const MAX_COMMAND_INPUT: usize = 16 * 1024;
/// JSON nesting followed inside tool inputs.
const MAX_JSON_DEPTH: usize = 8;

/// How a text is read: `Code` (tool arguments and results) makes every symbol an
/// atom; `Prose` (user and assistant text) only the symbols in code spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ctx {
    Prose,
    Code,
}

/// One atom found in a text or a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub kind: AtomKind,
    pub value: String,
    /// False for symbol-shaped words in prose: they count as occurrences (uses,
    /// re-introductions, matches) but never create a needed or summary atom.
    pub strong: bool,
    /// A path argument of an edit/write/patch tool.
    pub modified: bool,
}

impl Found {
    fn new(kind: AtomKind, value: String) -> Found {
        Found { kind, value, strong: true, modified: false }
    }
}

/// The regex families; paths, hex values, long numbers and code symbols are
/// matched by hand in `words` (same matches, a fraction of the work).
struct Patterns {
    url: Regex,
    uuid: Regex,
    diff: Regex,
    winpath: Regex,
    hostport: Regex,
    semver: Regex,
    issue: Regex,
    err_class: Regex,
    err_generic: Regex,
    err_panic: Regex,
    err_code: Regex,
    exit: Regex,
    constraint: Regex,
}

/// ASCII word boundary: the Unicode one would force the slower engines on
/// non-ASCII text. Digits are ASCII (`[0-9]`, not `\d`) for the same reason
/// and because the tests that skip a search ([`Chars`], the `_near` gates)
/// look for ASCII digits: with `\d`, `v١.٢.3` was a version in a text that
/// also held `1.2.3` (the gate let it through) and not in one that did not.
const B: &str = r"(?-u:\b)";

impl Patterns {
    fn build() -> Result<Patterns, regex::Error> {
        let re = |p: &str| Regex::new(&p.replace("\\B", B));
        Ok(Patterns {
            url: re(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'*+,;=%]+")?,
            uuid: re(r"\B[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\B")?,
            diff: re(r"(?m)^(?:\+\+\+ b/|--- a/)([^\s]+)|^diff --git a/([^\s]+) b/([^\s]+)")?,
            winpath: re(r#"\B[A-Za-z]:\\[^\s"'<>|*?`]+"#)?,
            hostport: re(
                r"\B(?:localhost|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)+):[0-9]{2,5}\B",
            )?,
            semver: re(r"\Bv?[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z][0-9A-Za-z.\-]*)?\B")?,
            issue: re(r"#[0-9]{1,7}\B")?,
            err_class: re(r"\B[A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception)\B(?::[^\n]*)?")?,
            err_generic: re(r"(?i)\B(?:error|fatal)(?:\[[A-Za-z0-9_\-]{1,20}\])?:[^\n]*")?,
            err_panic: re(r"panicked at [^\n]*")?,
            err_code: re(r"\B(?:E[0-9]{3,5}|TS[0-9]{4,5}|CS[0-9]{4})\B")?,
            exit: re(r#"(?i)\bexit(?:ed)?[ _]?(?:with[ _])?(?:code|status)"?\s*[:=]?\s*([0-9]{1,3})\B"#)?,
            constraint: re(r"(?i)\B(?:must|never|always|only|don[’']?t|do not|make sure|should ?n[o’']t|avoid)\B")?,
        })
    }
}

static PATTERNS: LazyLock<Option<Patterns>> = LazyLock::new(|| Patterns::build().ok());

/// The compiled patterns; `None` only if a constant pattern failed to compile,
/// which the unit tests rule out. Extraction then finds nothing instead of
/// panicking.
fn patterns() -> Option<&'static Patterns> {
    PATTERNS.as_ref()
}

#[cfg(test)]
pub(crate) fn patterns_compile() -> bool {
    Patterns::build().is_ok()
}

// ---------------------------------------------------------------------------
// Small text helpers

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

/// File extensions accepted for a bare file name (`main.rs`): prose is full of
/// `e.g.`, `example.com` and `v1.2`, so a bare name needs a known extension.
const KNOWN_EXT: &[&str] = &[
    "rs", "toml", "md", "json", "jsonl", "js", "mjs", "cjs", "ts", "mts", "cts", "tsx", "jsx", "py", "pyi", "go",
    "java", "kt", "kts", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "rb", "php", "swift", "scala", "sh", "bash",
    "zsh", "fish", "ps1", "yaml", "yml", "txt", "lock", "html", "htm", "css", "scss", "sass", "less", "sql", "xml",
    "cfg", "ini", "conf", "vue", "svelte", "ex", "exs", "erl", "zig", "lua", "gradle", "proto", "csv", "tsv", "ipynb",
    "dart", "hs", "ml", "mli", "pl", "pm", "tf", "tfvars", "nix", "mk", "cmake", "bat", "el", "clj", "cljs", "edn",
    "graphql", "gql", "rst", "tex", "svg", "png", "jpg", "jpeg", "gif", "webp", "pdf", "wasm", "so", "dylib", "dll",
    "exe", "patch", "diff", "tmpl", "j2", "hbs", "ejs", "astro", "mdx", "ron", "jl", "vim", "snap", "pem", "lockb",
    "sum", "mod",
];

/// Top-level domains that make `foo.com` a host, not a symbol.
const TLDS: &[&str] = &["com", "org", "net", "io", "dev", "ai", "app", "co", "uk", "de", "fr", "us", "gov", "edu"];

/// Is `ext` one of [`KNOWN_EXT`], in any case? Every file-name-like word of
/// every message asks: comparing it with each of the 117 in turn was nearly
/// 4 % of a replay, and a string set's UTF-8 check and hash of the
/// lower-cased word still cost 240 instructions a question. The extensions
/// are at most 8 bytes: each is one word, its bytes packed little-endian, and
/// the question is a binary search of the sorted words.
fn known_ext(ext: &str) -> bool {
    static WORDS: LazyLock<Vec<u64>> = LazyLock::new(|| {
        let mut words: Vec<u64> = KNOWN_EXT.iter().filter_map(|e| ext_word(e)).collect();
        words.sort_unstable();
        words
    });
    // The entries are lower-case ASCII: a byte outside ASCII matches none.
    ext_word(ext).is_some_and(|w| WORDS.binary_search(&w).is_ok())
}

/// The bytes of a word of 1 to 8, ASCII lower-cased and packed little-endian
/// (zero-padded); `None` for a longer or empty word, or one with a NUL byte
/// (it would read as the padding of a shorter one; no extension holds one).
fn ext_word(ext: &str) -> Option<u64> {
    let b = ext.as_bytes();
    if b.is_empty() || b.len() > 8 || b.contains(&0) {
        return None;
    }
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    w.make_ascii_lowercase();
    Some(u64::from_le_bytes(w))
}

/// Extension of a file name: what follows its last `.`, if that is 1–10
/// alphanumerics with a letter (after a stem, or none: a dot-file).
///
/// Read back from the end, at most 11 bytes: every path token of every text
/// asks, and a search for the last `.` from the end cost twice the rest.
fn extension(name: &str) -> Option<&str> {
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
fn already_normal<'s>(s: &'s str, cwd: Option<&str>) -> Option<&'s str> {
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
fn normalize_segments(s: &str, cwd: Option<&str>) -> Option<String> {
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
fn accept_path_token(t: &str) -> bool {
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

/// Spans already claimed by a higher-priority family; sorted, non-overlapping.
#[derive(Default)]
struct Claimed {
    spans: Vec<(usize, usize)>,
    fresh: Vec<(usize, usize)>,
}

impl Claimed {
    fn overlaps(&self, s: usize, e: usize) -> bool {
        let i = self.spans.partition_point(|&(a, _)| a < e);
        i > 0 && self.spans[i - 1].1 > s
    }
    /// Claim a span; visible to the next family (matches of one family never
    /// overlap each other).
    fn claim(&mut self, s: usize, e: usize) {
        self.fresh.push((s, e));
    }
    fn commit(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        self.spans.append(&mut self.fresh);
        self.spans.sort_unstable();
    }
}

/// Code spans (fenced blocks, inline backticks) of a prose text.
fn code_spans(text: &str) -> Vec<(usize, usize)> {
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

fn in_spans(spans: &[(usize, usize)], at: usize) -> bool {
    let i = spans.partition_point(|&(a, _)| a <= at);
    i > 0 && spans[i - 1].1 > at
}

fn byte_before(text: &str, i: usize) -> Option<u8> {
    if i == 0 { None } else { text.as_bytes().get(i - 1).copied() }
}

/// Control words and ubiquitous builtins that look like calls but name nothing.
const CALL_KEYWORDS: &[&str] = &[
    "if", "for", "while", "switch", "return", "catch", "match", "print", "println", "printf", "format", "function",
    "def", "elif", "else", "and", "not", "with", "assert", "typeof", "sizeof", "new", "delete", "super", "self",
    "this", "require", "import", "export", "lambda", "len", "str", "int", "float", "list", "dict", "set", "tuple",
    "range", "type", "echo", "eval", "exec", "Some", "None", "Ok", "Err", "vec", "main",
];

fn accept_symbol(m: &str) -> Option<&str> {
    let call = m.ends_with('(');
    let s = m.trim_end_matches('(');
    if s.len() < 3 || s.len() > 128 {
        return None;
    }
    let qualified_dot = s.contains('.');
    // `::` found from its first byte (a vector search), not by the two-way
    // string search, whose set-up costs more than these short words.
    let b = s.as_bytes();
    let qualified_colons = || memchr::memchr_iter(b':', b).any(|i| b.get(i + 1) == Some(&b':'));
    if qualified_dot || qualified_colons() {
        let (mut short, mut last) = (true, None);
        for seg in s.split(['.', ':']).filter(|x| !x.is_empty()) {
            short &= seg.len() <= 2;
            last = Some(seg);
        }
        if short {
            return None;
        }
        if qualified_dot
            && let Some(last) = last
            && (known_ext(last) || TLDS.iter().any(|t| t.eq_ignore_ascii_case(last)))
        {
            return None;
        }
    } else if call && CALL_KEYWORDS.contains(&s) {
        return None;
    }
    Some(s)
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

fn trim_url(u: &str) -> &str {
    let mut u = u.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', '*', ']']);
    u = u.trim_end_matches('/');
    u
}

// ---------------------------------------------------------------------------
// Text scanning

/// Which characters a text holds. A pattern that needs a character the text
/// lacks cannot match, and skipping its search saves the search's fixed cost,
/// most of the scan of a short text (a request, a tool argument). Each test
/// below is a necessary condition of its pattern, so skipping changes nothing.
struct Chars {
    dot: bool,
    slash: bool,
    colon: bool,
    dash: bool,
    upper_e: bool,
    upper_s: bool,
    hash: bool,
    backslash: bool,
    digit: bool,
    /// Longest run of hex digits and of decimal digits.
    hex_run: usize,
    digit_run: usize,
}

/// Above this size a text holds every character the tests ask for (and a
/// search's fixed cost is small next to its length): not worth a pass.
const CHARS_MAX_LEN: usize = 512;

/// What [`Chars::of`] notes of a byte, one bit each, looked up in one table
/// (a `match` and two digit tests per byte cost 15 instructions a byte, most
/// of the scan of a short line).
const C_DOT: u16 = 1;
const C_SLASH: u16 = 1 << 1;
const C_COLON: u16 = 1 << 2;
const C_DASH: u16 = 1 << 3;
const C_UPPER_E: u16 = 1 << 4;
const C_UPPER_S: u16 = 1 << 5;
const C_HASH: u16 = 1 << 6;
const C_BACKSLASH: u16 = 1 << 7;
const C_HEX: u16 = 1 << 8;
const C_DIGIT: u16 = 1 << 9;

static CHAR_BITS: [u16; 256] = char_bits();

const fn char_bits() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let mut c = match b {
            b'.' => C_DOT,
            b'/' => C_SLASH,
            b':' => C_COLON,
            b'-' => C_DASH,
            b'E' => C_UPPER_E,
            b'S' => C_UPPER_S,
            b'#' => C_HASH,
            b'\\' => C_BACKSLASH,
            _ => 0,
        };
        if b.is_ascii_hexdigit() {
            c |= C_HEX;
        }
        if b.is_ascii_digit() {
            c |= C_DIGIT;
        }
        t[i] = c;
        i += 1;
    }
    t
}

impl Chars {
    fn of(text: &str) -> Chars {
        if text.len() > CHARS_MAX_LEN {
            return Chars::any();
        }
        let (mut seen, mut hex, mut dec, mut hex_run, mut digit_run) = (0u16, 0usize, 0usize, 0usize, 0usize);
        for &b in text.as_bytes() {
            let c = CHAR_BITS[usize::from(b)];
            seen |= c;
            // A run goes on through its class and restarts at 0 after it.
            hex = if c & C_HEX != 0 { hex + 1 } else { 0 };
            dec = if c & C_DIGIT != 0 { dec + 1 } else { 0 };
            hex_run = hex_run.max(hex);
            digit_run = digit_run.max(dec);
        }
        let has = |bit: u16| seen & bit != 0;
        Chars {
            dot: has(C_DOT),
            slash: has(C_SLASH),
            colon: has(C_COLON),
            dash: has(C_DASH),
            upper_e: has(C_UPPER_E),
            upper_s: has(C_UPPER_S),
            hash: has(C_HASH),
            backslash: has(C_BACKSLASH),
            digit: digit_run > 0,
            hex_run,
            digit_run,
        }
    }

    /// Every test passes.
    fn any() -> Chars {
        Chars {
            dot: true,
            slash: true,
            colon: true,
            dash: true,
            upper_e: true,
            upper_s: true,
            hash: true,
            backslash: true,
            digit: true,
            hex_run: usize::MAX,
            digit_run: usize::MAX,
        }
    }

    /// `https?://`
    fn url(&self) -> bool {
        self.colon && self.slash
    }
    /// Five hex groups joined by `-`, the last of 12 digits.
    fn uuid(&self) -> bool {
        self.dash && self.hex_run >= 12
    }
    /// `host:port`
    fn hostport(&self) -> bool {
        self.colon && self.digit
    }
    /// `1.2.3`
    fn semver(&self) -> bool {
        self.dot && self.digit
    }
    /// `Error`, `Exception`
    fn err_class(&self) -> bool {
        self.upper_e
    }
    /// `error:`, `fatal:`
    fn err_generic(&self) -> bool {
        self.colon
    }
    /// `E0425`, `TS2304`, `CS0103`
    fn err_code(&self) -> bool {
        self.digit_run >= 3 && (self.upper_e || self.upper_s)
    }
    /// `exit code 3`
    fn exit(&self) -> bool {
        self.digit
    }
    /// `#123`
    fn issue(&self) -> bool {
        self.hash && self.digit
    }
    /// `C:\Users`
    fn winpath(&self) -> bool {
        self.colon && self.backslash
    }
    /// `--- a/x`, `+++ b/x`, `diff --git a/x b/x`: every alternative has a `/`.
    fn diff(&self) -> bool {
        self.slash
    }
}

/// The matches of `re` in `text`, or none, without a search, when `ok` (a
/// [`Chars`] test or a gate) says it has none: even a search of nothing pays
/// the regex's set-up (about 230 instructions), which a short line paid for
/// up to nine patterns.
fn matches_if<'t>(re: &Regex, ok: bool, text: &'t str) -> impl Iterator<Item = regex::Match<'t>> {
    ok.then(|| re.find_iter(text)).into_iter().flatten()
}

/// Scan a text (head and tail when huge) and append what it names.
pub(crate) fn scan_text(text: &str, ctx: Ctx, cwd: Option<&str>, out: &mut Vec<Found>) {
    for piece in pieces(text) {
        if !piece.is_empty() {
            scan_piece(piece, ctx, cwd, Exits::Scan, out);
        }
    }
}

/// Whether a scan reads exit codes: the one pattern whose match can span
/// lines (`exit code:` and its number on the next one).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Exits {
    Scan,
    Skip,
}

/// Whether a prose text is read line by line ([`scan_prose_line`] on each
/// line and [`scan_exit_codes`] on the whole find what [`scan_text`] finds,
/// as a set): no atom pattern but the exit codes matches across a newline,
/// and prose code spans are per line unless the text has a fenced block.
/// Summaries of one session repeat most of their lines (an iterative update
/// carries the previous checkpoint; a sweep's points write near-identical
/// ones: 435 distinct summaries of the corpus's 72-point grid hold 4.6 MB of
/// lines, 1.2 MB of them distinct), so a line read once can be remembered.
/// Not for a fenced text or one read as a head and a tail (scanned whole).
pub(crate) fn read_by_line(text: &str) -> bool {
    text.len() <= SCAN_HEAD + SCAN_TAIL && !has_fence_line(text)
}

/// Whether a line of `text` (split at `\n`) starts with ```` ``` ```` after
/// whitespace. Found from the backticks, with a vector search, rather than
/// line by line: only a run of them can start such a line, and it does when
/// what comes before it on its line is whitespace (a later run on the line
/// has the first one before it).
///
/// Linear in the text: each run's line start is searched for back to the
/// previous run only, and only a line's first run is checked (it decides the
/// line), so a line of thousands of runs after a long indent is not walked
/// once per run.
fn has_fence_line(text: &str) -> bool {
    static FENCE: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("```"));
    let b = text.as_bytes();
    let (mut line_start, mut searched_to, mut decided) = (0, 0, None);
    FENCE.find_iter(b).any(|i| {
        if let Some(n) = memchr::memrchr(b'\n', &b[searched_to..i]) {
            line_start = searched_to + n + 1;
        }
        searched_to = i;
        if decided == Some(line_start) {
            return false;
        }
        decided = Some(line_start);
        // Both ends are at ASCII bytes (`\n`, a backtick): char boundaries.
        text.get(line_start..i).is_some_and(|before| before.trim_start().is_empty())
    })
}

/// [`scan_prose_line_in`], asking [`list_items`] itself.
#[cfg(test)]
pub(crate) fn scan_prose_line(line: &str, cwd: Option<&str>) -> Vec<Found> {
    scan_prose_line_in(line, list_items(line), cwd)
}

/// What [`scan_text`] finds on one line of a prose text that
/// [`read_by_line`] accepts, but exit codes; `items` are the line's
/// [`list_items`].
pub(crate) fn scan_prose_line_in(line: &str, items: ListItems<'_>, cwd: Option<&str>) -> Vec<Found> {
    // A checkpoint packs its code symbols and identifiers into lines that
    // differ from one summary to the next while the items recur: most of the
    // new lines a sweep's summaries bring. Their items are scanned, each once.
    let Some((list, sep)) = items else { return scan_item(line, cwd) };
    static ITEMS: LazyLock<LineMemo<Found>> = LazyLock::new(Default::default);
    let mut v = Vec::new();
    for item in super::words::split_str(list, sep) {
        v.extend(ITEMS.get(cwd, item, MEMO_MIN_LINE, || scan_item(item, cwd)).iter().cloned());
    }
    v
}

/// What [`scan_text`] finds on a line or a list item, but exit codes.
fn scan_item(item: &str, cwd: Option<&str>) -> Vec<Found> {
    let mut v = Vec::new();
    scan_piece(item, Ctx::Prose, cwd, Exits::Skip, &mut v);
    v
}

/// A list line's items and their separator ([`list_items`]); `None` for any
/// other line.
pub(crate) type ListItems<'a> = Option<(&'a str, &'static str)>;

/// Separators of a list's items: code symbols, identifiers.
const SYMBOL_SEP: &str = ", ";
const IDENT_SEP: &str = " · ";

/// A bulleted list line whose items, scanned one by one, find what the
/// line scanned whole finds: the list after the bullet and its separator.
/// In both shapes every match stays within one item. The bullet and the
/// separators are not word characters, so the `\b` at an item's ends stands
/// as at a text's, and no match can start in them; what the checks read next
/// to a match (`/`, `(`, `.` and a digit, `\`, `%`…) they find neither in a
/// separator nor at the end of a text.
pub(crate) fn list_items(line: &str) -> ListItems<'_> {
    let list = line.strip_prefix("- ")?;
    if symbol_list(list) {
        Some((list, SYMBOL_SEP))
    } else if ident_list(list) {
        Some((list, IDENT_SEP))
    } else {
        None
    }
}

/// Code symbols: `Foo::bar, state.todos, parse_args`. Every item is a run of
/// ASCII letters, digits, `_`, `.` and `:` (colons only in runs of two or
/// more), and no `Error:` or `Exception:` occurs. No pattern's match can then
/// hold a `,` or a space: a URL needs a `/`, a Windows path a `\`, `panicked
/// at` a space after a word, an error class a `:` tail; an `error:` or
/// `fatal:` match, whose tail runs to the end of the line, starts a `::` and
/// is dropped as a code path either way. No item holds a backtick: nothing is
/// in a code span either way.
fn symbol_list(list: &str) -> bool {
    if list.contains("Error:") || list.contains("Exception:") {
        return false;
    }
    let symbol_byte = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':');
    super::words::split_str(list, SYMBOL_SEP)
        .all(|item| !item.is_empty() && item.as_bytes().iter().all(symbol_byte) && lone_colon_free(item))
}

/// Identifiers: `` `src/a.rs` · `https://x.io/p` · `deadbeef1` ``. Every
/// item is one code span, and no error word (`error`, `fatal`, `exception`,
/// `panicked`, in any case) occurs. No pattern but the error ones (whose
/// tails run to the end of the line) matches a backtick, so every match is
/// within one span, and each item is the same code span either way.
fn ident_list(list: &str) -> bool {
    if has_error_word(list.as_bytes()) {
        return false;
    }
    super::words::split_str(list, IDENT_SEP).all(|item| {
        let inner = item.strip_prefix('`').and_then(|i| i.strip_suffix('`'));
        inner.is_some_and(|i| !i.contains('`'))
    })
}

/// Whether `b` holds `error`, `fatal`, `exception` or `panicked`, in any
/// case. One pass that only looks closer at an `e`, `f` or `p`: every line of
/// every summary is asked (searching for each word in turn cost four passes).
fn has_error_word(b: &[u8]) -> bool {
    const WORDS: [&[u8]; 4] = [b"error", b"fatal", b"exception", b"panicked"];
    b.iter().enumerate().any(|(i, &c)| {
        // `| 0x20` lower-cases a letter; only `E`/`e` become `e` (and so on).
        matches!(c | 0x20, b'e' | b'f' | b'p')
            && WORDS.iter().any(|w| b.get(i..i + w.len()).is_some_and(|x| x.eq_ignore_ascii_case(w)))
    })
}

/// No `:` stands alone (`a:b`): every run of colons is two or more long.
fn lone_colon_free(s: &str) -> bool {
    !s.as_bytes().chunk_by(|a, b| a == b).any(|run| run == b":")
}

/// The exit codes [`scan_text`] finds in a text [`read_by_line`] accepts.
pub(crate) fn scan_exit_codes(text: &str) -> Vec<Found> {
    let mut found = Vec::new();
    if let Some(p) = patterns() {
        scan_exits(p, text, &Chars::of(text), &mut found);
    }
    found
}

/// Lines of a summary shorter than this are read directly, not through a
/// memo. Only blank and one-character lines: an exact-keyed lookup costs a
/// few hundred instructions, while running the patterns over even a short
/// heading (`## Goal`, `- (none)`, repeated in every summary) costs thousands.
pub(crate) const MEMO_MIN_LINE: usize = 2;

fn scan_piece(text: &str, ctx: Ctx, cwd: Option<&str>, exits: Exits, out: &mut Vec<Found>) {
    let Some(p) = patterns() else { return };
    let mut claimed = Claimed::default();
    let has = Chars::of(text);

    for m in matches_if(&p.url, has.url(), text) {
        let v = trim_url(m.as_str());
        if v.len() > "https://".len() && v.len() <= MAX_VALUE_LEN {
            out.push(Found::new(AtomKind::Id, v.to_string()));
        }
        claimed.claim(m.start(), m.end());
    }
    claimed.commit();

    for m in matches_if(&p.uuid, has.uuid() && uuid_near(text.as_bytes()), text) {
        if !claimed.overlaps(m.start(), m.end()) {
            out.push(Found::new(AtomKind::Id, m.as_str().to_ascii_uppercase()));
            claimed.claim(m.start(), m.end());
        }
    }
    claimed.commit();

    if has.diff() && [&*DIFF_OLD, &*DIFF_NEW, &*DIFF_GIT].iter().any(|f| f.find(text.as_bytes()).is_some()) {
        for c in p.diff.captures_iter(text) {
            for g in c.iter().skip(1).flatten() {
                if !claimed.overlaps(g.start(), g.end()) {
                    if let Some(v) = normalize_path(g.as_str(), cwd) {
                        out.push(Found::new(AtomKind::Path, v));
                    }
                    claimed.claim(g.start(), g.end());
                }
            }
        }
        claimed.commit();
    }

    if has.winpath() && DRIVE.find(text.as_bytes()).is_some() {
        for m in p.winpath.find_iter(text) {
            if !claimed.overlaps(m.start(), m.end()) {
                if let Some(v) = normalize_path(m.as_str(), cwd) {
                    out.push(Found::new(AtomKind::Path, v));
                }
                claimed.claim(m.start(), m.end());
            }
        }
        claimed.commit();
    }

    for m in matches_if(&p.hostport, has.hostport() && hostport_near(text.as_bytes()), text) {
        let s = m.as_str();
        let host = s.rsplit_once(':').map_or(s, |(h, _)| h);
        let tld = host.rsplit('.').next().unwrap_or(host);
        let numeric_host = host.bytes().all(|b| b.is_ascii_digit() || b == b'.');
        let ok_host = host == "localhost"
            || numeric_host
            || (tld.bytes().all(|b| b.is_ascii_alphabetic()) && !known_ext(tld) && host.contains('.'));
        let prev_ok = !matches!(byte_before(text, m.start()), Some(b'/' | b'.' | b'-' | b'_' | b'@'));
        if ok_host && prev_ok && !claimed.overlaps(m.start(), m.end()) {
            out.push(Found::new(AtomKind::Id, s.to_ascii_lowercase()));
            claimed.claim(m.start(), m.end());
        }
    }
    claimed.commit();

    for (start, end) in words::pathish(text) {
        let t = text[start..end].trim_end_matches(['.', '-']);
        if t.is_empty() || claimed.overlaps(start, end) || !accept_path_token(t) {
            continue;
        }
        // `a/b` right after `@` or `:` is an npm scope or a URL-ish tail, and a
        // word glued to a backslash is a Windows path remainder.
        if matches!(byte_before(text, start), Some(b'\\' | b'%')) {
            continue;
        }
        // `response.json(` and `console.log(` are calls, not files.
        if !t.contains('/') && text.as_bytes().get(start + t.len()) == Some(&b'(') {
            continue;
        }
        if let Some(v) = normalize_path(t, cwd) {
            out.push(Found::new(AtomKind::Path, v));
            claimed.claim(start, start + t.len());
        }
    }
    claimed.commit();

    let words = words::Words::of(text);
    for (start, end) in words.hex() {
        let v = &text[start..end];
        if is_hex_value(v) && !claimed.overlaps(start, end) {
            out.push(Found::new(AtomKind::Id, v.to_ascii_uppercase()));
            claimed.claim(start, end);
        }
    }
    claimed.commit();

    for m in matches_if(&p.semver, has.semver() && semver_near(text.as_bytes()), text) {
        let after = &text.as_bytes()[m.end()..];
        let ip_like = after.len() >= 2 && after[0] == b'.' && after[1].is_ascii_digit();
        if !ip_like && !claimed.overlaps(m.start(), m.end()) {
            out.push(Found::new(AtomKind::Id, m.as_str().trim_start_matches('v').to_string()));
            claimed.claim(m.start(), m.end());
        }
    }
    claimed.commit();

    for (start, end) in words.numbers() {
        if !claimed.overlaps(start, end) {
            out.push(Found::new(AtomKind::Id, text[start..end].to_string()));
            claimed.claim(start, end);
        }
    }
    claimed.commit();

    for m in matches_if(&p.issue, has.issue(), text) {
        let prev = byte_before(text, m.start());
        if prev.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'&' || b == b'#') {
            continue;
        }
        if !claimed.overlaps(m.start(), m.end()) {
            out.push(Found::new(AtomKind::Id, m.as_str().to_string()));
            claimed.claim(m.start(), m.end());
        }
    }
    claimed.commit();

    scan_errors(p, text, &has, out);
    if exits == Exits::Scan {
        scan_exits(p, text, &has, out);
    }

    let spans = if ctx == Ctx::Prose { code_spans(text) } else { Vec::new() };
    for (start, end) in words.symbols() {
        if claimed.overlaps(start, end) {
            continue;
        }
        if let Some(s) = accept_symbol(&text[start..end]) {
            let strong = ctx == Ctx::Code || in_spans(&spans, start);
            out.push(Found { kind: AtomKind::Symbol, value: s.to_string(), strong, modified: false });
        }
    }
}

/// Literals `scan_piece` and `scan_errors` look for before running a
/// pattern, searched with SIMD finders built once (`str::contains` searched
/// byte by byte, four times for each piece of each message).
static DIFF_OLD: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("--- a/"));
static DIFF_NEW: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("+++ b/"));
static DIFF_GIT: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("diff --git"));
static DRIVE: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(":\\"));
static ERROR_WORD: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("Error"));
static EXCEPTION_WORD: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("Exception"));

/// The places six patterns must pass through (the `_near` gates from here
/// on), looked for with a vector search before the pattern's own: the
/// patterns start with a class, so their search walks every byte of a long
/// tool output with the lazy DFA, and most outputs hold no UUID, version,
/// `host:port`, exception class, `error:` or error code.
/// Each is a necessary condition of its pattern (a property test checks it),
/// so a text that fails one is one the pattern finds nothing in.
///
/// `semver` (`1.2.3`): a `.` between digits, whose digits run on to another
/// `.` and a digit.
fn semver_near(b: &[u8]) -> bool {
    memchr::memchr_iter(b'.', b).any(|i| {
        let digits = b.get(i + 1..).map_or(0, |rest| rest.iter().take_while(|x| x.is_ascii_digit()).count());
        let next = i + 1 + digits;
        i > 0
            && b[i - 1].is_ascii_digit()
            && digits > 0
            && b.get(next) == Some(&b'.')
            && b.get(next + 1).is_some_and(u8::is_ascii_digit)
    })
}

/// `uuid`: a `-` with eight hex digits before it and four hex digits and a
/// `-` after it (the pattern's first two groups). [`Chars`] sees no hex run
/// in a long text, which it does not read.
fn uuid_near(b: &[u8]) -> bool {
    memchr::memchr_iter(b'-', b).any(|i| {
        i >= 8
            && b[i - 8..i].iter().all(u8::is_ascii_hexdigit)
            && b.get(i + 1..i + 5).is_some_and(|g| g.iter().all(u8::is_ascii_hexdigit))
            && b.get(i + 5) == Some(&b'-')
    })
}

/// `hostport`: a `:` after a host's last character (a letter, digit or `-`)
/// and before two digits.
fn hostport_near(b: &[u8]) -> bool {
    memchr::memchr_iter(b':', b).any(|i| {
        i > 0
            && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-')
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
            && b.get(i + 2).is_some_and(u8::is_ascii_digit)
    })
}

/// `err_class`: `Error` or `Exception` ending a word (no word byte after it)
/// that has at least one name character before it (`TypeError`, `x.IOError`).
fn err_class_near(b: &[u8]) -> bool {
    let ends_class = |f: &memmem::Finder<'_>, len: usize| {
        f.find_iter(b).any(|i| {
            i > 0
                && (b[i - 1].is_ascii_alphanumeric() || matches!(b[i - 1], b'_' | b'.'))
                && !b.get(i + len).is_some_and(|&x| x.is_ascii_alphanumeric() || x == b'_')
        })
    };
    ends_class(&ERROR_WORD, "Error".len()) || ends_class(&EXCEPTION_WORD, "Exception".len())
}

/// `err_generic`: a `:` right after `error` or `fatal` (in any case), or
/// after a `]` that closes a bracket of at most 20 bytes right after one
/// (`error[E0425]:`). ASCII case is the pattern's Unicode case for these
/// letters: no other character folds to any of them (a test checks it).
fn err_generic_near(b: &[u8]) -> bool {
    let word_ends_at = |end: usize| {
        end >= 5 && (b[end - 5..end].eq_ignore_ascii_case(b"error") || b[end - 5..end].eq_ignore_ascii_case(b"fatal"))
    };
    memchr::memchr_iter(b':', b).any(|i| {
        word_ends_at(i)
            || (i > 0
                && b[i - 1] == b']'
                && b[..i - 1].iter().rev().take(21).position(|&x| x == b'[').is_some_and(|k| word_ends_at(i - 2 - k)))
    })
}

/// `err_code`: an `E` before three digits, or a `TS` or `CS` before four.
fn err_code_near(b: &[u8]) -> bool {
    let digits = |from: usize, n: usize| b.get(from..from + n).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    memchr::memchr2_iter(b'E', b'S', b).any(|i| {
        if b[i] == b'E' { digits(i + 1, 3) } else { i > 0 && matches!(b[i - 1], b'T' | b'C') && digits(i + 1, 4) }
    })
}

/// `error::usage`, `Error::Invalid`: a path into a module or enum (a list of
/// code symbols), not an error message.
fn is_code_path(m: &str) -> bool {
    m.find(':').is_some_and(|i| m[i + 1..].starts_with(':'))
}

fn scan_errors(p: &Patterns, text: &str, has: &Chars, out: &mut Vec<Found>) {
    // A class name ends in one of two words: looking for them first skips
    // the search on most long tool outputs (where every byte test passes).
    for m in matches_if(&p.err_class, has.err_class() && err_class_near(text.as_bytes()), text) {
        if !is_code_path(m.as_str()) {
            out.push(Found::new(AtomKind::Error, fingerprint(m.as_str())));
        }
    }
    let generic = has.err_generic() && err_generic_near(text.as_bytes());
    for (re, ok) in [(&p.err_generic, generic), (&p.err_panic, true)] {
        for m in matches_if(re, ok, text) {
            if is_code_path(m.as_str()) {
                continue;
            }
            let f = fingerprint(m.as_str());
            // `error:` with nothing after it names nothing.
            if f.len() > "error:".len() {
                out.push(Found::new(AtomKind::Error, f));
            }
        }
    }
    for m in matches_if(&p.err_code, has.err_code() && err_code_near(text.as_bytes()), text) {
        out.push(Found::new(AtomKind::Error, m.as_str().to_string()));
    }
}

fn scan_exits(p: &Patterns, text: &str, has: &Chars, out: &mut Vec<Found>) {
    if !has.exit() {
        return;
    }
    for c in p.exit.captures_iter(text) {
        if let Some(code) = exit_code(&c) {
            out.push(Found::new(AtomKind::Error, format!("exit code {code}")));
        }
    }
}

fn exit_code(c: &Captures<'_>) -> Option<u32> {
    let n: u32 = c.get(1)?.as_str().parse().ok()?;
    (n != 0).then_some(n)
}

/// A non-zero exit code mentioned in a tool result (Codex has no error flag).
pub(crate) fn has_nonzero_exit(text: &str) -> bool {
    let Some(p) = patterns() else { return false };
    pieces(text).iter().any(|piece| p.exit.captures_iter(piece).any(|c| exit_code(&c).is_some()))
}

/// The first line of a failed tool result as an error fingerprint (OpenClaw's
/// `collectToolFailures`), unless it is only an exit-code line (already an atom).
pub(crate) fn failure_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let lower = line.to_ascii_lowercase();
    if lower.starts_with("exit code") || lower.starts_with("exit status") || lower.starts_with("error: exit code") {
        return None;
    }
    let f = fingerprint(line);
    (f.len() >= 4).then_some(f)
}

// ---------------------------------------------------------------------------
// Constraints, asks, keywords

/// Words that carry no meaning for keyword overlap.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "to", "of", "in", "on", "at", "for", "and", "or", "but", "is", "are", "be", "was", "were", "it",
    "its", "this", "that", "these", "those", "with", "as", "by", "from", "i", "you", "we", "me", "my", "your", "our",
    "us", "please", "can", "could", "would", "will", "just", "so", "if", "then", "there", "here", "do", "does", "did",
    "have", "has", "had", "any", "some", "also", "about", "into", "up", "out", "let", "lets", "ok", "okay", "now",
    "what", "which", "who", "how", "when", "where", "why", "all", "get", "got", "make", "want", "need", "should",
    "thanks", "thank", "hi", "hello", "yes", "no", "too", "very", "like", "them", "they", "he", "she", "him", "her",
    "am", "been", "being", "than", "via", "per", "each", "use",
];

/// Lower-cased word tokens; `n't` becomes `not` so negations survive.
pub(crate) fn word_tokens(text: &str, mut f: impl FnMut(&str)) {
    for piece in pieces(text) {
        if ascii_words_suffice(piece) {
            ascii_word_tokens(piece, &mut f);
        } else {
            unicode_word_tokens(piece, &mut f);
        }
    }
}

/// A whole text (not cut into pieces) lower-cased as [`word_tokens`] reads
/// it: its word tokens are its runs of alphanumeric characters and `_`.
pub(crate) fn words_text(text: &str) -> String {
    if ascii_words_suffice(text) { ascii_words_text(text) } else { unicode_words_text(text) }
}

fn unicode_words_text(piece: &str) -> String {
    piece.to_lowercase().replace("n't", " not").replace("n’t", " not")
}

fn ascii_words_text(piece: &str) -> String {
    let lower = piece.to_ascii_lowercase();
    // Most texts hold no `n't`: a vector search says so without the copy
    // `replace` makes (and its own search, one byte at a time).
    if N_T.find(lower.as_bytes()).is_none() { lower } else { lower.replace("n't", " not") }
}

static N_T: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("n't"));

/// [`word_tokens`] of any text.
fn unicode_word_tokens(piece: &str, f: &mut impl FnMut(&str)) {
    let lower = unicode_words_text(piece);
    for w in lower.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if !w.is_empty() {
            f(w);
        }
    }
}

/// Whether the ASCII path gives a text's words: when every non-ASCII character
/// in it is a separator that lower-casing leaves alone and not the `’` of `n’t`
/// — the `→`, `…` and `·` of a summary, box drawing, emoji. Words are then
/// runs of ASCII letters, digits and `_` either way.
fn ascii_words_suffice(piece: &str) -> bool {
    piece.is_ascii()
        || piece.chars().filter(|c| !c.is_ascii()).all(|c| {
            !c.is_alphanumeric() && c != '\u{2019}' && {
                let mut lower = c.to_lowercase();
                lower.next() == Some(c) && lower.next().is_none()
            }
        })
}

/// [`word_tokens`] of a text [`ascii_words_suffice`] admits, byte by byte:
/// there Unicode lower-casing and letters are the ASCII ones and `n’t` cannot
/// occur, so the words are the same, without decoding characters (this runs
/// over each summary view). A non-ASCII byte is a separator; a word never
/// starts inside a multi-byte character, whose bytes are all separators.
fn ascii_word_tokens(piece: &str, f: &mut impl FnMut(&str)) {
    let lower = ascii_words_text(piece);
    let mut start = 0;
    for (i, &b) in lower.as_bytes().iter().enumerate() {
        if !(b.is_ascii_alphanumeric() || b == b'_') {
            if i > start {
                f(&lower[start..i]);
            }
            start = i + 1;
        }
    }
    if start < lower.len() {
        f(&lower[start..]);
    }
}

/// Keyword set of a sentence: first-seen order, stop words dropped, at most
/// `max` keywords.
pub(crate) fn keywords(text: &str, max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let text = &text[..floor_boundary(text, 4096)];
    word_tokens(text, |w| {
        if out.len() < max && w.chars().count() >= 2 && !STOP_WORDS.contains(&w) && !out.iter().any(|k| k == w) {
            out.push(w.to_string());
        }
    });
    out
}

/// User sentences that state a constraint, with their keyword sets. Fenced code
/// is skipped: a pasted stack trace is not an instruction.
pub(crate) fn constraints(text: &str) -> Vec<(String, Vec<String>)> {
    // Summaries repeat most of their lines from one checkpoint to the next,
    // and a line's constraint sentences depend on the line alone.
    static MEMO: LazyLock<LineMemo<(String, Vec<String>)>> = LazyLock::new(Default::default);
    let Some(p) = patterns() else { return Vec::new() };
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let text = pieces(text)[0];
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        add_constraints(&mut out, &MEMO.get(None, line, MEMO_MIN_LINE, || line_constraints(p, line)));
    }
    out
}

/// Add a line's constraint sentences to a text's, each sentence once.
pub(crate) fn add_constraints(out: &mut Vec<(String, Vec<String>)>, line: &[(String, Vec<String>)]) {
    for (value, kw) in line {
        if !out.iter().any(|(v, _)| v == value) {
            out.push((value.clone(), kw.clone()));
        }
    }
}

/// The constraint sentences of one line of a text without code fences (what
/// [`constraints`] reads from each line), with their keywords, in order.
pub(crate) fn constraints_of_line(line: &str) -> Vec<(String, Vec<String>)> {
    patterns().map_or_else(Vec::new, |p| line_constraints(p, line))
}

/// The constraint sentences of one line (outside code fences), with their
/// keywords, in order (repeats included).
fn line_constraints(p: &Patterns, line: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for sentence in sentences(line) {
        let s = sentence.trim();
        if s.len() < 6 || !p.constraint.is_match(s) {
            continue;
        }
        let kw = keywords(s, CONSTRAINT_KEYWORDS);
        if kw.len() < 2 {
            continue;
        }
        out.push((fold_ws(truncate_chars(s, CONSTRAINT_CHARS)), kw));
    }
    out
}

/// Split a line into sentences at `.`, `!`, `?` followed by a space or the end
/// (so `main.rs` and `v1.2` stay whole).
fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut start = 0;
    for i in 0..b.len() {
        if matches!(b[i], b'.' | b'!' | b'?') && (i + 1 == b.len() || b[i + 1] == b' ') {
            out.push(&line[start..=i]);
            start = i + 1;
        }
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

/// Key of a constraint: its sorted keyword set.
pub(crate) fn constraint_key(keywords: &[String]) -> String {
    let mut k: Vec<&str> = keywords.iter().map(String::as_str).collect();
    k.sort_unstable();
    k.join(" ")
}

// ---------------------------------------------------------------------------
// Shell commands

#[derive(Debug)]
struct Token {
    text: String,
    /// Quoted and containing whitespace: free text (messages, patterns).
    free_text: bool,
}

/// A token as [`normalize_simple`] reads it: a lexed [`Token`], or a word of
/// a line the lexer would only split at its spaces (never free text).
trait Word {
    fn text(&self) -> &str;
    fn free_text(&self) -> bool;
}

impl Word for Token {
    fn text(&self) -> &str {
        &self.text
    }
    fn free_text(&self) -> bool {
        self.free_text
    }
}

impl Word for &str {
    fn text(&self) -> &str {
        self
    }
    fn free_text(&self) -> bool {
        false
    }
}

/// Pipeline filters: what they do to output is not a command worth keeping.
const FILTERS: &[&str] = &[
    "head", "tail", "grep", "rg", "sort", "uniq", "wc", "less", "more", "cut", "tr", "sed", "awk", "xargs", "tee",
    "jq", "cat", "column", "fold", "nl",
];
/// git subcommands that any agent re-derives without help: needing them later
/// says nothing about what a summary kept (pitfall 10, deny lists).
const TRIVIAL_GIT: &[&str] =
    &["status", "diff", "add", "log", "show", "branch", "stash", "fetch", "pull", "push", "commit"];

/// The parts of a normalized command, joined by single spaces as they come
/// (one string, no allocation per part), with what [`Parts::trivial`] asks of
/// them.
struct Parts {
    joined: String,
    count: usize,
    /// Byte ranges of the first two parts in `joined`.
    first: (usize, usize),
    second: (usize, usize),
    /// Are all parts after the first / after the second flags (or `.`)?
    flags_after_first: bool,
    flags_after_second: bool,
}

impl Parts {
    fn new() -> Parts {
        Parts {
            joined: String::new(),
            count: 0,
            first: (0, 0),
            second: (0, 0),
            flags_after_first: true,
            flags_after_second: true,
        }
    }

    fn push(&mut self, part: &str) {
        if self.count > 0 {
            self.joined.push(' ');
        }
        let start = self.joined.len();
        self.joined.push_str(part);
        let flag = part.starts_with('-') || part == ".";
        match self.count {
            0 => self.first = (start, self.joined.len()),
            1 => {
                self.second = (start, self.joined.len());
                self.flags_after_first &= flag;
            }
            _ => {
                self.flags_after_first &= flag;
                self.flags_after_second &= flag;
            }
        }
        self.count += 1;
    }

    /// A command of only a trivial program (or git subcommand) and flags.
    fn trivial(&self) -> bool {
        let part = |(a, b): (usize, usize)| self.joined.get(a..b).unwrap_or("");
        let prog = part(self.first);
        if matches!(prog, "ls" | "pwd" | "tree" | "whoami" | "date" | "clear") {
            return self.flags_after_first;
        }
        prog == "git" && self.count >= 2 && TRIVIAL_GIT.contains(&part(self.second)) && self.flags_after_second
    }

    /// The command: its first [`COMMAND_CHARS`] characters, trimmed.
    fn finish(mut self) -> String {
        let end = truncate_chars(&self.joined, COMMAND_CHARS).trim_end().len();
        self.joined.truncate(end);
        self.joined
    }
}

/// Commands that only move around or print.
const TRIVIAL: &[&str] =
    &["cd", "echo", "printf", "true", "false", "exit", "set", "export", "source", ".", "pwd", "clear"];
const PREFIXES: &[&str] = &["sudo", "time", "nohup", "exec", "env", "command"];

/// Normalized commands of one shell command line (one per simple command).
pub(crate) fn normalize_commands(raw: &str, cwd: Option<&str>) -> Vec<String> {
    let raw = &raw[..floor_boundary(raw, MAX_COMMAND_INPUT)];
    let inner = unwrap_shell(raw.trim());
    // A heredoc body is data, not commands.
    let inner = match inner.find("<<") {
        Some(i) => &inner[..i],
        None => inner,
    };
    let mut out = Vec::new();
    for (tokens, after_pipe) in split_simple_commands(inner) {
        if let Some(c) = normalize_simple(&tokens, after_pipe, cwd)
            && !out.contains(&c)
        {
            out.push(c);
        }
    }
    out
}

/// [`line_as_commands_in`], asking [`list_items`] itself.
#[cfg(test)]
pub(crate) fn line_as_commands(line: &str, cwd: Option<&str>) -> Vec<String> {
    line_as_commands_in(line, list_items(line), cwd)
}

/// The commands of a line of free text read as a command line: without its
/// bullet or prompt (`-`, `*`, `$`, `>`, `•`) and without backticks; `items`
/// are the line's [`list_items`].
pub(crate) fn line_as_commands_in(line: &str, items: ListItems<'_>, cwd: Option<&str>) -> Vec<String> {
    match list_words(items) {
        Some(words) => normalize_simple(&words, false, cwd).into_iter().collect(),
        None => line_as_commands_lexed(line, cwd),
    }
}

/// [`line_as_commands_in`] through the lexer, for any line.
fn line_as_commands_lexed(line: &str, cwd: Option<&str>) -> Vec<String> {
    let l = line.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '-' | '*' | '$' | '>' | '•'));
    normalize_commands(&l.replace('`', ""), cwd)
}

/// The tokens [`line_as_commands_in`] would lex from a packed list line
/// ([`list_items`]: code symbols, or identifiers in code spans) whose items
/// are plain words: no whitespace, quote, backslash or shell operator in
/// them, no `<<`, no shell as the first. Such a line, its bullet and
/// backticks dropped, is one simple command whose tokens are its
/// space-separated words (the `·` separators among them), and no shell
/// wraps it; lexing it character by character was most of the cost of
/// reading a summary's new lines in a sweep.
fn list_words(items: ListItems<'_>) -> Option<Vec<&str>> {
    let (list, sep) = items?;
    if list.len() > MAX_COMMAND_INPUT || list.contains("<<") {
        return None;
    }
    let plain = |w: &str| {
        w.bytes().all(plain_byte)
            || w.chars().all(|c| if c.is_ascii() { plain_byte(c as u8) } else { !c.is_whitespace() })
    };
    let mut words = Vec::new();
    if sep == IDENT_SEP {
        for (k, item) in super::words::split_str(list, sep).enumerate() {
            let inner = item.strip_prefix('`').and_then(|x| x.strip_suffix('`'))?;
            if inner.is_empty() || !plain(inner) {
                return None;
            }
            if k > 0 {
                words.push("·");
            }
            words.push(inner);
        }
    } else {
        // Code symbols hold no space: the words are the items, each but the
        // last with the comma after it.
        for w in list.split(' ') {
            if w.is_empty() || !plain(w) {
                return None;
            }
            words.push(w);
        }
    }
    let first = words.first()?;
    if matches!(basename(first), "bash" | "sh" | "zsh" | "dash") {
        return None;
    }
    Some(words)
}

/// `bash -lc '…'` / `sh -c "…"` → the inner script.
fn unwrap_shell(s: &str) -> &str {
    let mut rest = s;
    let Some((first, tail)) = rest.split_once(char::is_whitespace) else { return s };
    let prog = basename(first);
    if !matches!(prog, "bash" | "sh" | "zsh" | "dash") {
        return s;
    }
    rest = tail.trim_start();
    let Some((flag, script)) = rest.split_once(char::is_whitespace) else { return s };
    if !(flag.starts_with('-') && flag.ends_with('c')) {
        return s;
    }
    let script = script.trim();
    for q in ['\'', '"'] {
        if script.len() >= 2 && script.starts_with(q) && script.ends_with(q) {
            return &script[1..script.len() - 1];
        }
    }
    script
}

/// Lex a script into simple commands, respecting quotes; the flag says the
/// command reads a pipe.
fn split_simple_commands(s: &str) -> Vec<(Vec<Token>, bool)> {
    let mut cmds: Vec<(Vec<Token>, bool)> = Vec::new();
    let mut tokens: Vec<Token> = Vec::new();
    let mut cur = String::new();
    let mut cur_free = false;
    let mut in_token = false;
    let mut quote: Option<char> = None;
    let mut after_pipe = false;
    let flush = |tokens: &mut Vec<Token>, cur: &mut String, cur_free: &mut bool, in_token: &mut bool| {
        if *in_token {
            tokens.push(Token { text: std::mem::take(cur), free_text: *cur_free });
        }
        *cur_free = false;
        *in_token = false;
    };
    let char_at = |i: usize| s.get(i..).and_then(|rest| rest.chars().next());
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(c) = char_at(i) {
        // A run of ASCII characters that only join the token is copied at
        // once: every line of every summary is also read as a command, and
        // most of a line is such runs.
        let run = match quote {
            None => b[i..].iter().take_while(|&&x| plain_byte(x)).count(),
            Some(q) => b[i..].iter().take_while(|&&x| x.is_ascii() && x != q as u8 && !ascii_space(x)).count(),
        };
        if run > 0 {
            cur.push_str(&s[i..i + run]);
            in_token = true;
            i += run;
            continue;
        }
        i += c.len_utf8();
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else {
                if c.is_whitespace() {
                    cur_free = true;
                }
                cur.push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                in_token = true;
            }
            '\\' => {
                if let Some(n) = char_at(i) {
                    i += n.len_utf8();
                    if n != '\n' {
                        cur.push(n);
                        in_token = true;
                    }
                }
            }
            // `2>&1` and `&>`: an `&` in a redirection is not a separator.
            '&' if (in_token && cur.ends_with('>')) || char_at(i) == Some('>') => {
                cur.push(c);
                in_token = true;
            }
            ';' | '\n' | '&' | '|' | '(' | ')' => {
                flush(&mut tokens, &mut cur, &mut cur_free, &mut in_token);
                if !tokens.is_empty() {
                    cmds.push((std::mem::take(&mut tokens), after_pipe));
                }
                let next = char_at(i);
                let pipe = c == '|' && next != Some('|');
                if matches!(c, '&' | '|') && next == Some(c) {
                    i += 1;
                }
                after_pipe = pipe;
            }
            c if c.is_whitespace() => flush(&mut tokens, &mut cur, &mut cur_free, &mut in_token),
            _ => {
                cur.push(c);
                in_token = true;
            }
        }
    }
    flush(&mut tokens, &mut cur, &mut cur_free, &mut in_token);
    if !tokens.is_empty() {
        cmds.push((tokens, after_pipe));
    }
    cmds
}

/// An ASCII character that, outside quotes, only joins the current token.
fn plain_byte(b: u8) -> bool {
    b.is_ascii() && !ascii_space(b) && !matches!(b, b'\'' | b'"' | b'\\' | b'&' | b';' | b'|' | b'(' | b')')
}

#[cfg(test)]
mod lexer_tests {
    use proptest::prelude::*;

    /// The lexer as it was, one character at a time: the reference the one
    /// copying runs of plain characters must agree with.
    fn reference(s: &str) -> Vec<(Vec<(String, bool)>, bool)> {
        let (mut cmds, mut tokens) = (Vec::new(), Vec::new());
        let (mut cur, mut free, mut in_token, mut quote, mut after_pipe) = (String::new(), false, false, None, false);
        let mut chars = s.chars().peekable();
        let flush = |tokens: &mut Vec<(String, bool)>, cur: &mut String, free: &mut bool, in_token: &mut bool| {
            if *in_token {
                tokens.push((std::mem::take(cur), *free));
            }
            (*free, *in_token) = (false, false);
        };
        while let Some(c) = chars.next() {
            if let Some(q) = quote {
                if c == q {
                    quote = None;
                } else {
                    free |= c.is_whitespace();
                    cur.push(c);
                }
                continue;
            }
            match c {
                '\'' | '"' => (quote, in_token) = (Some(c), true),
                '\\' => {
                    if let Some(n) = chars.next().filter(|&n| n != '\n') {
                        cur.push(n);
                        in_token = true;
                    }
                }
                '&' if (in_token && cur.ends_with('>')) || chars.peek() == Some(&'>') => {
                    cur.push(c);
                    in_token = true;
                }
                ';' | '\n' | '&' | '|' | '(' | ')' => {
                    flush(&mut tokens, &mut cur, &mut free, &mut in_token);
                    if !tokens.is_empty() {
                        cmds.push((std::mem::take(&mut tokens), after_pipe));
                    }
                    let pipe = c == '|' && chars.peek() != Some(&'|');
                    if matches!(c, '&' | '|') && chars.peek() == Some(&c) {
                        chars.next();
                    }
                    after_pipe = pipe;
                }
                c if c.is_whitespace() => flush(&mut tokens, &mut cur, &mut free, &mut in_token),
                _ => {
                    cur.push(c);
                    in_token = true;
                }
            }
        }
        flush(&mut tokens, &mut cur, &mut free, &mut in_token);
        if !tokens.is_empty() {
            cmds.push((tokens, after_pipe));
        }
        cmds
    }

    const PIECES: &[&str] = &[
        "cargo",
        "-p",
        "x.rs",
        "a/b",
        "é",
        "日本",
        " ",
        "  ",
        "\t",
        "\u{a0}",
        "\u{3000}",
        "\n",
        "'",
        "\"",
        "\\",
        "\\\n",
        "\\ ",
        "&",
        "&&",
        ">",
        ">>",
        "2>&1",
        "&>",
        "|",
        "||",
        ";",
        "(",
        ")",
        "''",
        "'a b'",
        "\"x\"",
        "=",
        "K=v",
        "$HOME",
        "#",
        "\u{b}",
        "\u{c}",
        "\r",
        "'é\tx'",
        "\"a\u{b}b\"",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// Same commands, tokens and free-text flags as the reference, on
        /// scripts of quotes, escapes, separators, redirections and ASCII and
        /// Unicode whitespace (the vertical tab included).
        #[test]
        fn the_lexer_splits_as_the_reference_does(
            parts in proptest::collection::vec(proptest::sample::select(PIECES), 0..24),
        ) {
            let script = parts.concat();
            let got: Vec<(Vec<(String, bool)>, bool)> = super::split_simple_commands(&script)
                .into_iter()
                .map(|(ts, pipe)| (ts.into_iter().map(|t| (t.text, t.free_text)).collect(), pipe))
                .collect();
            prop_assert_eq!(got, reference(&script), "{:?}", script);
        }
    }
}

fn is_assignment(t: &str) -> bool {
    match t.split_once('=') {
        Some((k, _)) => {
            !k.is_empty()
                && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !k.as_bytes()[0].is_ascii_digit()
        }
        None => false,
    }
}

fn normalize_simple<W: Word>(tokens: &[W], after_pipe: bool, cwd: Option<&str>) -> Option<String> {
    let mut i = 0;
    while i < tokens.len() && (is_assignment(tokens[i].text()) || PREFIXES.contains(&tokens[i].text())) {
        i += 1;
    }
    let argv0 = tokens.get(i)?;
    let argv0_text = argv0.text();
    if argv0.free_text() || argv0_text.is_empty() || argv0_text.starts_with(['-', '$', '>', '<', '#']) {
        return None;
    }
    let prog = basename(argv0_text);
    if TRIVIAL.contains(&prog) || (after_pipe && FILTERS.contains(&prog)) {
        return None;
    }
    let mut parts = Parts::new();
    match argv0_text.contains('/').then(|| normalize_path(argv0_text, cwd)).flatten() {
        Some(p) => parts.push(&p),
        None => parts.push(argv0_text),
    }
    let mut skip_next = false;
    for t in &tokens[i + 1..] {
        if skip_next {
            skip_next = false;
            continue;
        }
        let s = t.text();
        if t.free_text() || s.is_empty() || s.starts_with('$') || s.starts_with('#') {
            continue;
        }
        if s.starts_with(['>', '<']) || s.starts_with("2>") || s.starts_with("1>") || s.starts_with("&>") {
            // `> file` drops the operator and its target; `>file` only itself.
            skip_next = matches!(s, ">" | ">>" | "<" | "2>" | "1>" | "&>" | "2>>");
            continue;
        }
        if s.starts_with('-') {
            if s.len() > 1 && s.len() <= 64 {
                parts.push(s);
            }
            // A message argument is free text even when it is one word.
            skip_next = matches!(s, "-m" | "--message");
            continue;
        }
        if s.contains('/') || extension(s).is_some_and(known_ext) {
            if let Some(p) = normalize_path(s, cwd) {
                parts.push(&p);
            }
            continue;
        }
        let word_like = s.len() <= 64
            && s.as_bytes()[0].is_ascii_alphanumeric()
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.:@+=,-".contains(&b));
        if word_like {
            parts.push(s);
        }
    }
    (!parts.trivial()).then(|| parts.finish())
}

// ---------------------------------------------------------------------------
// Tool calls

/// Tools whose path arguments are modified files (all agents' spellings,
/// compared case-insensitively).
const EDIT_TOOLS: &[&str] = &[
    "edit",
    "write",
    "multiedit",
    "notebookedit",
    "write_file",
    "replace",
    "write_to_file",
    "replace_in_file",
    "create_file",
    "edit_file",
    "apply_diff",
    "insert_content",
    "search_replace",
    "apply_patch",
    "patch",
    "delete_file",
    "str_replace",
    "insert",
];
/// Editor tools with a `command` argument where only `view` reads.
const EDITOR_TOOLS: &[&str] = &["str_replace_editor", "str_replace_based_edit_tool", "text_editor"];
/// Shell tools of Claude, Codex, pi, Gemini, Cline and others.
const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "shell_command",
    "exec_command",
    "local_shell",
    "run_shell_command",
    "execute_command",
    "run_command",
    "run_terminal_cmd",
    "terminal",
    "container.exec",
];
/// Argument keys that hold one path.
const PATH_KEYS: &[&str] = &[
    "file_path",
    "filepath",
    "filePath",
    "path",
    "notebook_path",
    "absolute_path",
    "filename",
    "file",
    "target_file",
    "dir_path",
    "directory",
    "relative_workspace_path",
    "target_directory",
    "source",
    "destination",
];
/// Argument keys that hold a list of paths.
const PATHS_KEYS: &[&str] = &["paths", "file_paths", "files", "absolute_paths"];

/// Tool name without an MCP `server__` prefix, lower-cased.
fn tool_base_name(name: &str) -> String {
    name.rsplit("__").next().unwrap_or(name).to_ascii_lowercase()
}

/// Scan one tool call: path arguments, shell commands, patch headers, then every
/// string argument as code.
pub(crate) fn scan_tool_use(name: &str, input: &Value, cwd: Option<&str>, out: &mut Vec<Found>) {
    let base = tool_base_name(name);
    let parsed;
    let input = match input {
        Value::String(s) if s.trim_start().starts_with('{') => {
            parsed = serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
            if parsed.is_object() { &parsed } else { input }
        }
        _ => input,
    };
    let editor_write = EDITOR_TOOLS.contains(&base.as_str())
        && input.get("command").and_then(Value::as_str).is_some_and(|c| c != "view");
    let modifies = EDIT_TOOLS.contains(&base.as_str()) || editor_write;

    if let Value::Object(map) = input {
        for key in PATH_KEYS {
            if let Some(Value::String(s)) = map.get(*key)
                && let Some(v) = normalize_path(s, cwd)
            {
                out.push(Found { kind: AtomKind::Path, value: v, strong: true, modified: modifies });
            }
        }
        for key in PATHS_KEYS {
            if let Some(Value::Array(items)) = map.get(*key) {
                for item in items.iter().take(256) {
                    let s = match item {
                        Value::String(s) => Some(s.as_str()),
                        Value::Object(o) => o.get("path").or_else(|| o.get("file_path")).and_then(Value::as_str),
                        _ => None,
                    };
                    if let Some(v) = s.and_then(|s| normalize_path(s, cwd)) {
                        out.push(Found { kind: AtomKind::Path, value: v, strong: true, modified: modifies });
                    }
                }
            }
        }
    }

    if SHELL_TOOLS.contains(&base.as_str()) {
        let cmd = match input {
            Value::String(s) => Some(s.clone()),
            Value::Array(_) => command_text(input),
            _ => ["command", "cmd", "commands", "script"].iter().find_map(|k| input.get(*k).and_then(command_text)),
        };
        if let Some(cmd) = cmd {
            for c in normalize_commands(&cmd, cwd) {
                out.push(Found::new(AtomKind::Command, c));
            }
        }
    }

    let mut budget = SCAN_HEAD + SCAN_TAIL;
    visit_strings(input, 0, &mut |s| {
        if s.contains("*** ") {
            patch_files(s, cwd, out);
        }
        if budget > 0 {
            let take = &s[..floor_boundary(s, budget)];
            budget -= take.len();
            scan_text(take, Ctx::Code, cwd, out);
        }
    });
}

/// A shell command given as a string or an argv array (Codex `["bash","-lc",…]`).
fn command_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let argv: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            if argv.is_empty() {
                return None;
            }
            let prog = basename(argv[0]);
            if matches!(prog, "bash" | "sh" | "zsh" | "dash")
                && argv.len() >= 3
                && argv[1].starts_with('-')
                && argv[1].ends_with('c')
            {
                return Some(argv[2].to_string());
            }
            // Free-text arguments keep their quotes so they stay free text.
            let quoted: Vec<String> =
                argv.iter()
                    .map(|a| {
                        if a.contains(char::is_whitespace) {
                            format!("'{}'", a.replace('\'', ""))
                        } else {
                            a.to_string()
                        }
                    })
                    .collect();
            Some(quoted.join(" "))
        }
        _ => None,
    }
}

fn visit_strings(v: &Value, depth: usize, f: &mut dyn FnMut(&str)) {
    if depth > MAX_JSON_DEPTH {
        return;
    }
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|i| visit_strings(i, depth + 1, f)),
        Value::Object(map) => map.values().for_each(|i| visit_strings(i, depth + 1, f)),
        _ => {}
    }
}

/// Files named by an apply_patch envelope (`*** Update File:`, `*** Add File:`,
/// `*** Delete File:`, `*** Move to:`): all modified.
pub(crate) fn patch_files(text: &str, cwd: Option<&str>, out: &mut Vec<Found>) {
    for piece in pieces(text) {
        for line in piece.lines() {
            let Some(rest) = line.strip_prefix("*** ") else { continue };
            let path = ["Update File:", "Add File:", "Delete File:", "Move to:"]
                .iter()
                .find_map(|h| rest.strip_prefix(h))
                .map(str::trim);
            if let Some(v) = path.and_then(|p| normalize_path(p, cwd)) {
                out.push(Found { kind: AtomKind::Path, value: v, strong: true, modified: true });
            }
        }
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::{Chars, Patterns};
    use proptest::prelude::*;

    /// [`super::extension`] as it reads: the tail after the last `.`.
    fn extension_by_last_dot(name: &str) -> Option<&str> {
        let ext = &name[name.rfind('.')? + 1..];
        let ok = (1..=10).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext.bytes().any(|b| b.is_ascii_alphabetic());
        ok.then_some(ext)
    }

    #[test]
    fn extensions_at_their_edges() {
        let cases = [
            ("a.rs", Some("rs")),
            (".bashrc", Some("bashrc")),
            ("x.abcdefghij", Some("abcdefghij")),
            ("x.abcdefghijk", None),
            ("x.0123456789", None),
            ("x.mp4", Some("mp4")),
            ("a.b.c", Some("c")),
            ("a.rs/", None),
            ("a.", None),
            ("rs", None),
            ("a.r-s", None),
            ("é.rs", Some("rs")),
            ("a.ré", None),
            ("", None),
        ];
        for (name, want) in cases {
            assert_eq!(super::extension(name), want, "{name:?}");
            assert_eq!(extension_by_last_dot(name), want, "{name:?} (the oracle)");
        }
    }

    const PIECES: &[&str] = &[
        "https://a.io/x",
        "550e8400-e29b-41d4-a716-446655440000",
        "localhost:3000",
        "10.0.0.1:80",
        "src/a.rs",
        "deadbeef1",
        "v1.2.3",
        "1234567",
        "#12",
        "Foo::bar",
        "foo(",
        "snake_case",
        "CamelCase",
        "camelCase",
        "TypeError: x",
        "IOException",
        "error: y",
        "FATAL: z",
        "error[E1]: w",
        "E0425",
        "TS2304",
        "CS0103",
        "exit code 3",
        "Exited with status: 12",
        "word",
        " ",
        "\n",
        ".",
        "-",
    ];

    /// Fragments of near misses of the gated patterns: a UUID's, a version's,
    /// a `host:port`'s, an exception class's, an `error:` line's and an error
    /// code's parts, apart or glued; and a digit that is not ASCII.
    const NEAR: &[&str] = &[
        "1234abcd",
        "٣",
        "error",
        "FATAL",
        "Fatal",
        "[",
        "]",
        "E",
        "TS",
        "CS",
        "S",
        "e89b",
        "12d3-",
        "426614174000",
        "1",
        "22",
        ".",
        ":",
        "a",
        "Z",
        "-",
        "_",
        "v",
        "Error",
        "Exception",
        "Err",
        " ",
        "\n",
        "é",
        "a.",
        ".Error",
        "a-:",
        "x.y-",
        "#",
        "#42",
        "C:\\",
        "\\",
        "--- a/",
        "+++ b/",
        "diff --git a/x b/y",
    ];

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[ -~\n]{0,80}",
            prop::collection::vec(prop::sample::select(PIECES), 0..8).prop_map(|v| v.concat()),
            prop::collection::vec(prop::sample::select(NEAR), 0..16).prop_map(|v| v.concat()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Reading back from the end finds the extension the last dot gives.
        #[test]
        fn the_extension_is_the_tail_after_the_last_dot(name in "[a-zA-Z0-9./_é-]{0,16}") {
            prop_assert_eq!(super::extension(&name), extension_by_last_dot(&name));
        }

        /// `Chars::of` notes what its fields say of a short text: each
        /// character present, and the longest runs of hex and decimal digits.
        #[test]
        fn chars_notes_each_character_and_the_longest_digit_runs(text in text()) {
            prop_assume!(text.len() <= super::CHARS_MAX_LEN);
            let c = Chars::of(&text);
            let longest = |class: fn(&char) -> bool| {
                text.split(|x: char| !class(&x)).map(str::len).max().unwrap_or(0)
            };
            let flags = [c.dot, c.slash, c.colon, c.dash, c.upper_e, c.upper_s, c.hash, c.backslash];
            let want = ['.', '/', ':', '-', 'E', 'S', '#', '\\'].map(|x| text.contains(x));
            prop_assert_eq!(flags, want);
            prop_assert_eq!(c.hex_run, longest(char::is_ascii_hexdigit));
            prop_assert_eq!(c.digit_run, longest(char::is_ascii_digit));
            prop_assert_eq!(c.digit, c.digit_run > 0);
        }

        /// Each test of `Chars`, and each gate (`semver_near` …), is a
        /// necessary condition of its pattern: when a pattern matches, its test
        /// passes (so skipping a search on a failed test loses nothing).
        #[test]
        fn a_pattern_matches_only_texts_its_test_admits(text in text()) {
            let p = Patterns::build().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let c = Chars::of(&text);
            let cases = [
                ("url", &p.url, c.url()),
                ("uuid", &p.uuid, c.uuid()),
                ("hostport", &p.hostport, c.hostport()),
                ("semver", &p.semver, c.semver()),
                ("err_class", &p.err_class, c.err_class()),
                ("err_generic", &p.err_generic, c.err_generic()),
                ("err_code", &p.err_code, c.err_code()),
                ("exit", &p.exit, c.exit()),
                ("issue", &p.issue, c.issue()),
                ("winpath", &p.winpath, c.winpath()),
                ("diff", &p.diff, c.diff()),
            ];
            for (name, re, admitted) in cases {
                prop_assert!(admitted || !re.is_match(&text), "{name} matches {text:?} but its test fails");
            }
            let b = text.as_bytes();
            let near = [
                ("uuid", &p.uuid, super::uuid_near(b)),
                ("semver", &p.semver, super::semver_near(b)),
                ("hostport", &p.hostport, super::hostport_near(b)),
                ("err_class", &p.err_class, super::err_class_near(b)),
                ("err_generic", &p.err_generic, super::err_generic_near(b)),
                ("err_code", &p.err_code, super::err_code_near(b)),
            ];
            for (name, re, admitted) in near {
                prop_assert!(admitted || !re.is_match(&text), "{name} matches {text:?} but its gate fails");
            }
        }
    }

    /// The patterns' digits are ASCII, as the tests that skip their search
    /// assume: a number in other digits is not an atom of any of them.
    #[test]
    fn the_patterns_read_ascii_digits_only() {
        let p = Patterns::build().expect("the patterns compile");
        let cases = [
            ("hostport", &p.hostport, "localhost:٨0", "localhost:80"),
            ("semver", &p.semver, "v١.٢.3", "v1.2.3"),
            ("issue", &p.issue, "#١2", "#12"),
            ("err_code", &p.err_code, "E٠٤2", "E042"),
            ("exit", &p.exit, "exit code ١3", "exit code 13"),
        ];
        for (name, re, other, ascii) in cases {
            assert!(!re.is_match(other), "{name} matches {other:?}");
            assert!(re.is_match(ascii), "{name} misses {ascii:?}");
        }
    }

    /// `err_generic_near` compares `error` and `fatal` in ASCII case: right
    /// only while no character but the ASCII letters folds to their letters
    /// under the pattern's Unicode `(?i)` (as the Kelvin sign folds to `k`).
    #[test]
    fn no_other_character_folds_to_the_letters_of_error_and_fatal() {
        let letters = regex::Regex::new("(?i)[aeflort]").expect("the class compiles");
        let others: String = ('\u{80}'..=char::MAX).collect();
        assert!(letters.find(&others).is_none(), "{:?}", letters.find(&others).map(|m| m.as_str().to_string()));
        assert!(regex::Regex::new("(?i)k").expect("the class compiles").is_match("\u{212A}"), "the check finds a fold");
    }

    /// The gates on the edges of their patterns: each admits the shortest
    /// texts its pattern matches, and turns away near misses.
    #[test]
    fn the_gates_admit_the_shortest_matches_and_turn_away_near_misses() {
        /// A pattern's name, the pattern, its gate, texts it matches, near misses.
        type Case<'a> = (&'a str, &'a regex::Regex, fn(&[u8]) -> bool, &'a [&'a str], &'a [&'a str]);
        let p = Patterns::build().expect("the patterns compile");
        let cases: [Case<'_>; 6] = [
            (
                "uuid",
                &p.uuid,
                super::uuid_near,
                &["123e4567-e89b-12d3-a456-426614174000", "x ABCDEF01-2345-6789-abcd-ef0123456789."],
                &[
                    "123e456-e89b-12d3-a456-426614174000",
                    "123e4567-e89b12d3",
                    "123e4567-e8g9-",
                    "-e89b-",
                    "123e4567-e89b",
                ],
            ),
            (
                "semver",
                &p.semver,
                super::semver_near,
                &["1.2.3", "v10.20.30-rc.1", "x 0.0.0 y"],
                &["1.2", "1.2.x", "1..2.3", ".1.2", "1.2."],
            ),
            (
                "hostport",
                &p.hostport,
                super::hostport_near,
                &["localhost:80", "10.0.0.1:8080", "a.b-:12", "api.example.com:443"],
                &["a:1", "a :12", "a: 12", ":12", "a:b12"],
            ),
            (
                "err_class",
                &p.err_class,
                super::err_class_near,
                &["TypeError", "a.Error", "_Exception: boom", "x9Error."],
                &["Error", "Errors", "a.Errors", "ErrorKind", " Exception", "IOExceptional"],
            ),
            (
                "err_generic",
                &p.err_generic,
                super::err_generic_near,
                &["error:", "FATAL: x", "Error[E0425]: y", "fatal[abcdefghijklmnopqrst]:"],
                &["error", "errors:", "error :", "err:", "error[E1] :", "error[abcdefghijklmnopqrstu]:", "x]:"],
            ),
            (
                "err_code",
                &p.err_code,
                super::err_code_near,
                &["E042", "x TS2304 y", "CS0103", "E12345"],
                &["E12", "e0425", "S1234", "TS123", "XS1234", "C S1234", "E 123"],
            ),
        ];
        for (name, re, gate, hits, misses) in cases {
            for t in hits {
                assert!(re.is_match(t), "{name} should match {t:?}");
                assert!(gate(t.as_bytes()), "{name}'s gate turns away {t:?}, which it matches");
            }
            for t in misses {
                assert!(!gate(t.as_bytes()), "{name}'s gate admits the near miss {t:?}");
            }
        }
    }

    /// What prose lines hold beyond the atom shapes: fences, backticks,
    /// bullets, diff headers, Windows paths, CR, and an exit code whose number
    /// is on the next line.
    const LINE_PIECES: &[&str] = &[
        "```",
        "`",
        "\n",
        "\n",
        "\r",
        "- [x] ",
        "  ",
        "--- a/src/x.rs",
        "+++ b/y.py",
        "diff --git a/p b/q",
        "C:\\w\\z.rs",
        "exit code:\n",
        "exit status\n 7",
        "a longer line of plain words, ",
        "~/notes.md",
    ];

    /// Items of symbol lists: qualified names, error classes and `error::`
    /// paths, versions, hex, codes, hosts.
    const SYMBOL_ITEMS: &[&str] = &[
        "Foo::bar",
        "state.todos",
        "parse_args",
        "FooError",
        "IOException",
        "error::kind",
        "fatal::x",
        "ERROR::y",
        "Error::Io",
        "E0425",
        "TS2304",
        "deadbeef12",
        "1234567",
        "v1.2.3",
        "1.2.3",
        "10.0.0.1",
        "a.b.c",
        "x",
        "_x",
        "x_",
        ".",
        "::",
        ":::",
        "main.rs",
        "foo",
        "CamelCase",
        "camelCase",
        "snake_case",
        "panicked",
        "at",
        "localhost",
        "3000",
        "a.io",
        "Error",
        "x.FooError",
    ];
    /// What makes a line no symbol list: a lone colon (an `error:` tail, a
    /// port), an error class with a colon tail, an empty item, non-ASCII.
    const NOT_SYMBOL_ITEMS: &[&str] =
        &["a:b", "b:", "error:x", "Fatal:y", "a.io:3000", "FooError::new", "FooError:", "", "é"];

    /// Items of identifier lists: paths (under the cwd too), URLs, ids,
    /// hosts, versions, codes, Windows paths, diff markers, calls.
    const IDENT_ITEMS: &[&str] = &[
        "`src/a.rs`",
        "`/w/src/b.ts`",
        "`https://x.io/p?a=1&b=(2),c`",
        "`deadbeef12`",
        "`550e8400-e29b-41d4-a716-446655440000`",
        "`localhost:3000`",
        "`10.0.0.1:80`",
        "`v1.2.3`",
        "`1.2.3.4`",
        "`1234567`",
        "`#12`",
        "`Foo::bar`",
        "`foo(`",
        "`C:\\w\\z.rs`",
        "`~/notes.md`",
        "`E0425`",
        "`x`",
        "`--- a/x`",
        "`diff`",
        "`%2F`",
        "`node_modules/x.js`",
        "`@scope/pkg`",
        "`.`",
    ];
    /// Items with spaces and non-ASCII letters, and what makes a line no
    /// identifier list: error words, an unclosed span, a bare word.
    const NOT_IDENT_ITEMS: &[&str] = &[
        "`error:x`",
        "`FooError:`",
        "`Fatal`",
        "`panicked`",
        "`IOException`",
        "``",
        "`a b`",
        "`é`",
        "`",
        "x",
        "`a`b`",
    ];

    fn prose() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select([PIECES, LINE_PIECES].concat()), 0..40).prop_map(|v| v.concat())
    }

    /// Findings as a sorted list (a multiset).
    fn sorted(mut found: Vec<super::Found>) -> Vec<String> {
        let mut v: Vec<String> = found.drain(..).map(|f| format!("{f:?}")).collect();
        v.sort();
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// The packed-word search answers as comparing with each extension in
        /// any case: words cut from the extensions, in mixed case, with a NUL,
        /// a non-ASCII letter or a byte too many.
        #[test]
        fn known_ext_answers_as_the_list_does(
            pick in 0..super::KNOWN_EXT.len(),
            cut in 0usize..10,
            upper in any::<u16>(),
            extra in prop::option::of(prop::sample::select(vec!["\0", "é", "x", "S", "\u{212a}"])),
        ) {
            let base = super::KNOWN_EXT[pick];
            let mut w: String = base
                .chars()
                .take(cut.max(1))
                .enumerate()
                .map(|(i, c)| if upper >> (i % 16) & 1 == 1 { c.to_ascii_uppercase() } else { c })
                .collect();
            if let Some(e) = extra {
                w.push_str(e);
            }
            let each = w.len() <= 8 && super::KNOWN_EXT.iter().any(|e| e.eq_ignore_ascii_case(&w));
            prop_assert_eq!(super::known_ext(&w), each, "{:?}", w);
        }

        /// A prose text that `read_by_line` accepts: its lines' findings and
        /// its exit codes are what scanning it whole finds.
        #[test]
        fn prose_lines_find_what_the_whole_text_does(text in prose(), cwd in prop::option::of(Just("/w"))) {
            prop_assume!(super::read_by_line(&text));
            let mut whole = Vec::new();
            super::scan_text(&text, super::Ctx::Prose, cwd, &mut whole);
            let mut lines: Vec<super::Found> = text.split('\n').flat_map(|l| super::scan_prose_line(l, cwd)).collect();
            lines.extend(super::scan_exit_codes(&text));
            prop_assert_eq!(sorted(lines), sorted(whole), "{:?}", text);
        }

        /// A text with a fence line is scanned whole: per line, a code span
        /// could open on one line and close on another.
        #[test]
        fn a_fenced_text_is_not_read_by_line(head in prose(), tail in prose()) {
            let text = format!("{head}\n  ```\n{tail}");
            prop_assert!(!super::read_by_line(&text));
        }

        /// The fence lines found from the backticks are the lines that start
        /// with them after whitespace.
        #[test]
        fn fence_lines_are_found_from_their_backticks(
            text in "(```|``|`|x|\n| |\t|\u{a0}|\u{3000}|é|\r)*"
        ) {
            let by_line = text.split('\n').any(|l| l.trim_start().starts_with("```"));
            prop_assert_eq!(super::has_fence_line(&text), by_line, "{:?}", text);
        }
    }

    /// A bulleted list of `items` joined by `sep`, now and then with a near
    /// miss among them.
    fn list_line(
        items: &'static [&'static str],
        near_misses: &'static [&'static str],
        sep: &'static str,
    ) -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![8 => prop::sample::select(items), 1 => prop::sample::select(near_misses)],
            1..10,
        )
        .prop_map(move |v| format!("- {}", v.join(sep)))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// A list of code symbols or identifiers scanned item by item (twice:
        /// the second time from the memo) finds what scanning the line whole
        /// finds; so does a near miss, which is scanned whole.
        #[test]
        fn a_list_line_is_scanned_as_the_whole_line(
            line in prop_oneof![
                list_line(SYMBOL_ITEMS, NOT_SYMBOL_ITEMS, ", "),
                list_line(IDENT_ITEMS, NOT_IDENT_ITEMS, " · "),
            ],
            cwd in prop::option::of(Just("/w")),
        ) {
            let mut whole = Vec::new();
            super::scan_piece(&line, super::Ctx::Prose, cwd, super::Exits::Skip, &mut whole);
            let whole = sorted(whole);
            for _ in 0..2 {
                prop_assert_eq!(&sorted(super::scan_prose_line(&line, cwd)), &whole, "{:?}", line);
            }
        }
    }

    /// Identifier items that read as command words: programs, prefixes,
    /// assignments, flags, redirections, paths, and the near misses the
    /// list's words must leave to the lexer (quotes, operators, a heredoc,
    /// Unicode spaces, a shell, an empty span).
    const COMMAND_IDENT_ITEMS: &[&str] = &[
        "`cargo`",
        "`test`",
        "`-p`",
        "`-m`",
        "`--message`",
        "`>`",
        "`2>`",
        "`>out.txt`",
        "`FOO=1`",
        "`sudo`",
        "`env`",
        "`cd`",
        "`ls`",
        "`git`",
        "`status`",
        "`src/a.rs`",
        "`/w/b.ts`",
        "`$HOME`",
        "`#x`",
        "`é·x`",
        "`·`",
        "`a.rs`",
        "`x.y`",
        "`-`",
        "`.`",
    ];
    const NOT_COMMAND_IDENT_ITEMS: &[&str] = &[
        "`bash`",
        "`sh`",
        "`/bin/zsh`",
        "`a<<b`",
        "`x'y`",
        "`a\"b`",
        "`a\u{a0}b`",
        "`a\u{2003}b`",
        "`a|b`",
        "`a;b`",
        "`(x)`",
        "`\\n`",
        "`a&b`",
        "``",
        "`a b`",
    ];
    const COMMAND_SYMBOL_ITEMS: &[&str] =
        &["time", "env", "cd", "ls", "git", "status", "sh", "bash", "a.rs", "x.y.z", "Foo::bar", "_x", "9a"];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// A packed list line read as a command from its words gives what
        /// lexing it gives; a line the words cannot stand for is lexed.
        #[test]
        fn a_list_line_reads_as_the_command_the_lexer_reads(
            line in prop_oneof![
                list_line(COMMAND_SYMBOL_ITEMS, NOT_SYMBOL_ITEMS, ", "),
                list_line(SYMBOL_ITEMS, COMMAND_SYMBOL_ITEMS, ", "),
                list_line(COMMAND_IDENT_ITEMS, NOT_COMMAND_IDENT_ITEMS, " · "),
                list_line(IDENT_ITEMS, NOT_IDENT_ITEMS, " · "),
            ],
            cwd in prop::option::of(Just("/w")),
        ) {
            prop_assert_eq!(super::line_as_commands(&line, cwd), super::line_as_commands_lexed(&line, cwd), "{:?}", line);
        }
    }

    /// The extension set answers as comparing with each extension in any
    /// case does; its entries are lower-case ASCII, which the lookup needs.
    #[test]
    fn known_extensions_are_found_in_any_case() {
        assert!(super::KNOWN_EXT.iter().all(|e| e.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())));
        let each = |x: &str| x.len() <= 8 && super::KNOWN_EXT.iter().any(|e| e.eq_ignore_ascii_case(x));
        for ext in ["rs", "RS", "Rs", "tsx", "TSX", "jsonl", "JSONL", "ipynb", "tfvars", "graphql", "GraphQL", "lockb"]
        {
            assert!(super::known_ext(ext), "{ext}");
        }
        for ext in ["", "r", "rss", "json5", "graphqls", "é", "rś", "txt\n", "verylongext", "c\u{0}", "PS1x"] {
            assert_eq!(super::known_ext(ext), each(ext), "{ext:?}");
        }
        for ext in super::KNOWN_EXT {
            assert!(super::known_ext(&ext.to_ascii_uppercase()), "{ext}");
        }
    }

    /// A symbol qualified by `::` (anywhere, even after a single `:`) is read
    /// segment by segment, as one qualified by `.` is; single colons are not a
    /// qualifier.
    #[test]
    fn double_colons_qualify_a_symbol_wherever_they_are() {
        for (m, want) in [
            ("ab::cd", None),
            ("a:b::cd", None),
            ("abc::de", Some("abc::de")),
            ("Foo::bar(", Some("Foo::bar")),
            ("ab:cd", Some("ab:cd")),
            ("ab:", Some("ab:")),
            ("ab::", None),
            ("x::config.json", None),
        ] {
            assert_eq!(super::accept_symbol(m), want, "{m:?}");
        }
    }

    /// The one-pass error-word test answers as searching for each word does,
    /// in any case, at either end of a text or inside a word.
    #[test]
    fn error_words_are_found_in_one_pass() {
        const WORDS: [&[u8]; 4] = [b"error", b"fatal", b"exception", b"panicked"];
        let each = |b: &[u8]| WORDS.iter().any(|w| b.windows(w.len()).any(|x| x.eq_ignore_ascii_case(w)));
        for text in [
            "error",
            "`IOError`",
            "x FATAL",
            "NullPointerException",
            "thread panicked at",
            "PaNiCkEd",
            "eRrOr",
            "erro",
            "fata",
            "panic",
            "xception",
            "exceptio",
            "ferror",
            "",
            "e",
            "p",
            "f",
            "·error·",
            "err or",
        ] {
            assert_eq!(super::has_error_word(text.as_bytes()), each(text.as_bytes()), "{text:?}");
        }
    }

    /// The words stand for the lexer on the lists a checkpoint writes, and
    /// leave it what they cannot stand for.
    #[test]
    fn list_words_take_plain_lists_only() {
        let words = |line| super::list_words(super::list_items(line));
        assert_eq!(words("- `cargo` · `src/a.rs`"), Some(vec!["cargo", "·", "src/a.rs"]));
        assert_eq!(words("- parse_args, Foo::bar"), Some(vec!["parse_args,", "Foo::bar"]));
        for line in ["- `a b` · `c`", "- `bash` · `-c`", "- `x'y`", "- `a<<b`", "- ``", "- a:b, c", "ran tests"] {
            assert_eq!(words(line), None, "{line:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// The ASCII path of `word_tokens` yields the words of the general one,
        /// also on texts with non-ASCII separators (and letters, which send
        /// the text down the general path).
        #[test]
        fn ascii_words_are_the_unicode_words(
            text in "[ -~\n]{0,80}|(n't|don't|Foo_Bar|x1|  |\\.|-|→|…|·|─|é|É|ß|Σ|ǅ|İ|n’t|’|Ⅳ|Ⓐ|٣|😀)*"
        ) {
            let mut general = Vec::new();
            super::unicode_word_tokens(&text, &mut |w| general.push(w.to_string()));
            let mut ascii = Vec::new();
            super::word_tokens(&text, |w| ascii.push(w.to_string()));
            prop_assert_eq!(ascii, general);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// Folding whitespace a byte at a time gives what joining
        /// `split_whitespace`'s words gives, on texts mixing ASCII and Unicode
        /// whitespace (vertical tab, NEL, no-break and ideographic spaces,
        /// line separator) with multi-byte letters around them; appending
        /// keeps what was there.
        #[test]
        fn folding_whitespace_joins_the_words_of_split_whitespace(
            text in "([ \t\n\r]|\x0B|\x0C|\u{85}|\u{A0}|\u{2003}|\u{2028}|\u{3000}|\u{200B}|a|Z|é|→|😀|x y)*",
            head in "(|ab|a b )",
        ) {
            let expected = text.split_whitespace().collect::<Vec<_>>().join(" ");
            prop_assert_eq!(&super::fold_ws(&text), &expected, "{:?}", text);
            let mut out = head.clone();
            super::fold_ws_into(&mut out, &text);
            prop_assert_eq!(out, format!("{head}{expected}"));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// A path `already_normal` passes through is what normalizing its
        /// segments gives.
        #[test]
        fn already_normal_paths_normalize_to_themselves(
            lead in "(/|~/|\\./|C:|c:\\\\|)",
            segs in proptest::collection::vec("(src|a\\.rs|\\.|\\.\\.|||home|u|proj|x\\\\y|C:)", 1..6),
            cwd in proptest::option::of("(/home/u/proj|/home/u|C:/w)"),
            under_cwd in proptest::bool::ANY,
        ) {
            let mut s = format!("{lead}{}", segs.join("/"));
            if let Some(c) = cwd.as_deref().filter(|_| under_cwd) {
                s = format!("{c}/{s}");
            }
            if let Some(v) = super::already_normal(&s, cwd.as_deref()) {
                prop_assert_eq!(Some(v.to_string()), super::normalize_segments(&s, cwd.as_deref()), "{}", s);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// The byte search finds the segment `rsplit('/')` gives last, on
        /// paths with multi-byte characters beside the slashes.
        #[test]
        fn basename_is_the_last_slash_segment(p in "(/|a|é|😀|\\.|//|x/)*") {
            prop_assert_eq!(super::basename(&p), p.rsplit('/').next().unwrap_or(&p));
        }
    }

    #[test]
    fn tests_fail_on_plain_prose() {
        let c = Chars::of("the quick brown fox jumps over the lazy dog");
        assert!(!(c.url() || c.uuid() || c.hostport() || c.semver()));
        assert!(!(c.err_class() || c.err_generic() || c.err_code() || c.exit()));
        assert!(Chars::of(&"x".repeat(super::CHARS_MAX_LEN + 1)).exit());
    }
}
