//! Which dotted/called names count as code symbols: the shape rules that keep file
//! names, domains, keywords and vendored paths out of the symbol list.

/// File extensions and top-level domains: `page.tsx` and `github.com` are not
/// member accesses.
/// (`.log` and `.map` are left out: `console.log` and `items.map` are code.)
pub(super) const NOT_MEMBERS: [&str; 38] = [
    "rs", "py", "ts", "tsx", "js", "jsx", "mjs", "cjs", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp", "cs", "rb",
    "md", "toml", "json", "jsonl", "yaml", "yml", "txt", "sh", "sql", "html", "css", "lock", "xml", "com", "org",
    "net", "io", "dev", "ai", "app",
];

/// The longest of [`NOT_MEMBERS`]: a longer last segment is none of them.
pub(super) const NOT_MEMBER_MAX: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < NOT_MEMBERS.len() {
        if NOT_MEMBERS[i].len() > max {
            max = NOT_MEMBERS[i].len();
        }
        i += 1;
    }
    max
};

/// Words that look like calls (`if (`) but are syntax.
pub(super) const CALL_KEYWORDS: [&str; 12] =
    ["if", "for", "while", "switch", "return", "catch", "function", "match", "elif", "and", "not", "with"];

/// `s` without any repeats of `prefix` at its start: `trim_start_matches`,
/// without building a substring searcher for each call (a previous summary's
/// every line is stripped of its bullets).
pub(super) fn strip_all<'s>(mut s: &'s str, prefix: &str) -> &'s str {
    while let Some(rest) = s.strip_prefix(prefix).filter(|_| !prefix.is_empty()) {
        s = rest;
    }
    s
}

/// A symbol match worth listing, without its call parenthesis.
pub(super) fn accept_symbol(m: &str) -> Option<&str> {
    let call = m.ends_with('(');
    let s = m.trim_end_matches('(');
    if s.len() < 3 || s.len() > 80 {
        return None;
    }
    if rejected_shape(s, call) {
        return None;
    }
    // `isError`, `event.isError`: flags and fields, which read as error names
    // (an exception class) and would name an error that never happened.
    let error_like = s.ends_with("Error") || s.ends_with("Exception");
    if error_like && (s.contains('.') || s.starts_with(|c: char| c.is_ascii_lowercase())) {
        return None;
    }
    Some(s)
}

/// A qualified name (`.` or `::`) whose segments are all one or two bytes
/// long, or a dotted one whose last segment is a file extension or a domain
/// (`main.rs`, `example.com`); a call of a syntax keyword (`if (`).
pub(super) fn rejected_shape(s: &str, call: bool) -> bool {
    // Byte tests and one pass over the segments, not `contains("::")` and
    // `split(['.', ':'])`: setting up a substring or char searcher cost more
    // than this whole check on a symbol's few bytes.
    let b = s.as_bytes();
    let dotted = b.contains(&b'.');
    if dotted || b.windows(2).any(|w| w == b"::") {
        // Its segments between `.` and `:`, empty ones aside: is one longer
        // than 2, and which is the last?
        let (mut long, mut last): (bool, &[u8]) = (false, &[]);
        for seg in b.split(|&c| c == b'.' || c == b':').filter(|x| !x.is_empty()) {
            long |= seg.len() > 2;
            last = seg;
        }
        !long
            || (dotted
                && last.len() <= NOT_MEMBER_MAX
                && NOT_MEMBERS.iter().any(|n| n.as_bytes().eq_ignore_ascii_case(last)))
    } else {
        call && CALL_KEYWORDS.contains(&s)
    }
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
