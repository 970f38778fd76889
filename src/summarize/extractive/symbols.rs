//! The summarizer's choice among code symbols (the shape rules are the one filter of
//! `text::symbols`) and the vendored trees it leaves out.

/// `s` without any repeats of `prefix` at its start: `trim_start_matches`,
/// without building a substring searcher for each call (a previous summary's
/// every line is stripped of its bullets).
pub(super) fn strip_all<'s>(mut s: &'s str, prefix: &str) -> &'s str {
    while let Some(rest) = s.strip_prefix(prefix).filter(|_| !prefix.is_empty()) {
        s = rest;
    }
    s
}

/// A symbol match worth listing, without its call parenthesis: a symbol by
/// the one filter ([`crate::text::symbols::accept_symbol`]), and not an
/// error-like flag or field (`isError`, `event.isError`), which would read as
/// an exception class and name an error that never happened.
pub(super) fn accept_symbol(m: &str) -> Option<&str> {
    crate::text::symbols::accept_symbol(m).filter(|s| !error_like(s))
}

/// An error-like flag or field (`isError`, `event.isError`), not a class.
pub(super) fn error_like(s: &str) -> bool {
    (s.ends_with("Error") || s.ends_with("Exception"))
        && (s.contains('.') || s.starts_with(|c: char| c.is_ascii_lowercase()))
}

/// Byte ranges of the identifier segments of a qualified symbol
/// (`this.state.todos` → `this`, `state`, `todos`): any run of them is a
/// symbol the whole one spells out between identifier boundaries.
pub(super) fn segment_cuts(s: &str) -> Vec<(usize, usize)> {
    let mut cuts = Vec::new();
    let mut start = None;
    for (i, b) in s.bytes().enumerate() {
        let inner = b.is_ascii_alphanumeric() || b == b'_';
        match (inner, start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                cuts.push((st, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(st) = start {
        cuts.push((st, s.len()));
    }
    cuts
}

/// Paths inside dependency, VCS and build trees.
pub(super) fn is_vendored(s: &str) -> bool {
    // Each tree's marker ends in a `/`, so one occurs iff the text up to some
    // `/` ends with it: one pass over the slashes (most identifiers have
    // none) instead of a substring search per marker, for every occurrence
    // an iterative scan counts.
    memchr::memchr_iter(b'/', s.as_bytes()).any(|i| {
        let head = &s.as_bytes()[..=i];
        VENDORED.iter().any(|d| head.ends_with(d.as_bytes()))
    })
}

/// Vendored and generated trees (see [`is_vendored`]); each ends in `/`.
pub(super) const VENDORED: [&str; 8] =
    ["node_modules/", ".git/", "/.next/", "/dist/", "/target/", "site-packages/", "/.venv/", "/vendor/"];
