//! Text scanning: the character prefilter and the per-family passes that
//! turn a text into [`Found`] atoms, claiming spans in priority order.

use super::text::{
    Claimed, accept_path_token, accept_symbol, ambiguous_path, byte_before, code_spans, in_spans, known_ext, trim_url,
};
use super::*;

/// Which characters a text holds. A pattern that needs a character the text
/// lacks cannot match, and skipping its search saves the search's fixed cost,
/// most of the scan of a short text (a request, a tool argument). Each test
/// below is a necessary condition of its pattern, so skipping changes nothing.
pub(super) struct Chars {
    pub(super) dot: bool,
    pub(super) slash: bool,
    pub(super) colon: bool,
    pub(super) dash: bool,
    pub(super) upper_e: bool,
    pub(super) upper_s: bool,
    pub(super) hash: bool,
    pub(super) backslash: bool,
    pub(super) digit: bool,
    /// Longest run of hex digits and of decimal digits.
    pub(super) hex_run: usize,
    pub(super) digit_run: usize,
}

/// Above this size a text holds every character the tests ask for (and a
/// search's fixed cost is small next to its length): not worth a pass.
pub(super) const CHARS_MAX_LEN: usize = 512;

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
    pub(super) fn of(text: &str) -> Chars {
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
    pub(super) fn any() -> Chars {
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
    pub(super) fn url(&self) -> bool {
        self.colon && self.slash
    }
    /// Five hex groups joined by `-`, the last of 12 digits.
    pub(super) fn uuid(&self) -> bool {
        self.dash && self.hex_run >= 12
    }
    /// `host:port`
    pub(super) fn hostport(&self) -> bool {
        self.colon && self.digit
    }
    /// `1.2.3`
    pub(super) fn semver(&self) -> bool {
        self.dot && self.digit
    }
    /// `Error`, `Exception`
    pub(super) fn err_class(&self) -> bool {
        self.upper_e
    }
    /// `error:`, `fatal:`
    pub(super) fn err_generic(&self) -> bool {
        self.colon
    }
    /// `E0425`, `TS2304`, `CS0103`
    pub(super) fn err_code(&self) -> bool {
        self.digit_run >= 3 && (self.upper_e || self.upper_s)
    }
    /// `exit code 3`
    pub(super) fn exit(&self) -> bool {
        self.digit
    }
    /// `#123`
    pub(super) fn issue(&self) -> bool {
        self.hash && self.digit
    }
    /// `C:\Users`
    pub(super) fn winpath(&self) -> bool {
        self.colon && self.backslash
    }
    /// `--- a/x`, `+++ b/x`, `diff --git a/x b/x`: every alternative has a `/`.
    pub(super) fn diff(&self) -> bool {
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
pub(super) enum Exits {
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
pub(super) fn has_fence_line(text: &str) -> bool {
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
pub(super) const IDENT_SEP: &str = " · ";

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
pub(super) fn has_error_word(b: &[u8]) -> bool {
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

pub(super) fn scan_piece(text: &str, ctx: Ctx, cwd: Option<&str>, exits: Exits, out: &mut Vec<Found>) {
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

    // Backticked and fenced spans of prose: code there, as in a tool's text.
    let spans = if ctx == Ctx::Prose { code_spans(text) } else { Vec::new() };
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
            // `reset/compact/switchSession` in prose is as likely a list of
            // words as a path: like a symbol-shaped word, it counts where it
            // occurs but makes no needed or summary atom of its own.
            let strong = ctx == Ctx::Code || in_spans(&spans, start) || !ambiguous_path(t);
            out.push(Found { kind: AtomKind::Path, value: v, strong, modified: false });
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
pub(super) fn semver_near(b: &[u8]) -> bool {
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
pub(super) fn uuid_near(b: &[u8]) -> bool {
    memchr::memchr_iter(b'-', b).any(|i| {
        i >= 8
            && b[i - 8..i].iter().all(u8::is_ascii_hexdigit)
            && b.get(i + 1..i + 5).is_some_and(|g| g.iter().all(u8::is_ascii_hexdigit))
            && b.get(i + 5) == Some(&b'-')
    })
}

/// `hostport`: a `:` after a host's last character (a letter, digit or `-`)
/// and before two digits.
pub(super) fn hostport_near(b: &[u8]) -> bool {
    memchr::memchr_iter(b':', b).any(|i| {
        i > 0
            && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-')
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
            && b.get(i + 2).is_some_and(u8::is_ascii_digit)
    })
}

/// `err_class`: `Error` or `Exception` ending a word (no word byte after it)
/// that has at least one name character before it (`TypeError`, `x.IOError`).
pub(super) fn err_class_near(b: &[u8]) -> bool {
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
pub(super) fn err_generic_near(b: &[u8]) -> bool {
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
pub(super) fn err_code_near(b: &[u8]) -> bool {
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
