//! Deterministic atom extraction and normalization (quality.md §c.2): the one
//! reading of paths, ids, errors, commands and symbols that the summarizer and
//! the metric share.
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

use super::line_memo::LineMemo;
use crate::text::words;
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

impl crate::text::line_memo::Weigh for Found {
    fn weight(&self) -> usize {
        size_of::<Self>() + self.value.capacity()
    }
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

mod commands;
mod keywords;
mod kind;
mod scan;
mod session;
mod text;
mod tool_use;

#[cfg(test)]
pub(crate) use commands::line_as_commands;
pub(crate) use commands::{line_as_commands_in, normalize_commands};
#[cfg(test)]
pub(crate) use keywords::word_tokens;
pub(crate) use keywords::{add_constraints, constraint_key, constraints, constraints_of_line, keywords, words_text};
pub use kind::AtomKind;
pub(crate) use kind::CLASSES;
#[cfg(test)]
pub(crate) use scan::scan_prose_line;
pub(crate) use scan::{
    ListItems, MEMO_MIN_LINE, failure_line, has_nonzero_exit, list_items, read_by_line, scan_exit_codes,
    scan_prose_line_in, scan_text,
};
pub use session::SessionLens;
pub(crate) use session::{MessageAtoms, MessageView};
pub(crate) use text::{
    basename, fingerprint, floor_boundary, fold_ws, fold_ws_into, hex_compatible, is_hex_value, normalize_cwd,
    normalize_path, pieces, truncate_chars,
};
pub(crate) use tool_use::scan_tool_use;

/// Blocks read into atoms on this thread so far (tests count reads).
#[cfg(test)]
pub(crate) fn session_reads_here() -> usize {
    session::READS_HERE.with(std::cell::Cell::get)
}

#[cfg(test)]
#[path = "fast_path_tests.rs"]
mod fast_path_tests;
