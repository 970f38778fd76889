//! Hand-written matchers for the four word-shaped atom patterns: path-like
//! tokens, code symbols, hex values and long numbers. (The extractive
//! summarizer finds code symbols with the same matcher.) Also [`split_str`],
//! the splitter both use for a checkpoint's packed lists.
//!
//! These four match most often, on every text, and a regex search pays a
//! reverse scan and a restart for every match: on tool output they cost more
//! than the rest of atom extraction. Each shape reduces to a property of the
//! runs of a byte class (a path is a run of path bytes holding `.` or `/`; a
//! hex value is a whole word of hex digits), which one pass over the bytes
//! finds. Each matcher yields exactly the leftmost-first matches of the regex
//! written in its doc, in order, as byte ranges; the tests keep those regexes
//! as the oracle the matchers are checked against. All classes are ASCII, and
//! an ASCII byte never occurs inside a multi-byte UTF-8 sequence, so every
//! range starts and ends on a char boundary.

/// Byte classes, one bit each, looked up in one table.
const WORD: u8 = 1; // [A-Za-z0-9_], the `(?-u:\b)` word bytes
const PATH: u8 = 2; // [A-Za-z0-9_@+\-./]
const HEX: u8 = 4; // [0-9A-Fa-f]
const DIGIT: u8 = 8; // [0-9]
const UPPER: u8 = 16; // [A-Z]
const LOWER_DIGIT: u8 = 32; // [a-z0-9]
const ID_START: u8 = 64; // [A-Za-z_]
const UNDERSCORE: u8 = 128; // _

static CLASS: [u8; 256] = classes();

const fn classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let (upper, lower, digit) = (b.is_ascii_uppercase(), b.is_ascii_lowercase(), b.is_ascii_digit());
        let mut c = 0;
        if upper || lower || digit || b == b'_' {
            c |= WORD;
        }
        if upper || lower || digit || matches!(b, b'_' | b'@' | b'+' | b'-' | b'.' | b'/') {
            c |= PATH;
        }
        if b.is_ascii_hexdigit() {
            c |= HEX;
        }
        if digit {
            c |= DIGIT;
        }
        if upper {
            c |= UPPER;
        }
        if lower || digit {
            c |= LOWER_DIGIT;
        }
        if upper || lower || b == b'_' {
            c |= ID_START;
        }
        if b == b'_' {
            c |= UNDERSCORE;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// What [`Words::of`] learns of a word, OR-ed over its bytes (one operation
/// a byte): bits for a byte that is no hex digit, one that is no decimal
/// digit, a capital, `_`; and [`WORD`], which every byte of a word has.
const NOT_HEX: u8 = 2;
const NOT_DIGIT: u8 = 4;
const CAP: u8 = 8;
const UNDER: u8 = 16;

static SEEN: [u8; 256] = seen();

const fn seen() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = CLASS[i];
        let mut s = c & WORD;
        if c & HEX == 0 {
            s |= NOT_HEX;
        }
        if c & DIGIT == 0 {
            s |= NOT_DIGIT;
        }
        if c & UPPER != 0 {
            s |= CAP;
        }
        if c & UNDERSCORE != 0 {
            s |= UNDER;
        }
        t[i] = s;
        i += 1;
    }
    t
}

fn class(x: u8) -> u8 {
    CLASS[usize::from(x)]
}

/// `[A-Za-z0-9_]`: a byte of an identifier (and of a `(?-u:\b)` word).
pub(crate) fn is_word_byte(x: u8) -> bool {
    class(x) & WORD != 0
}

/// `[A-Za-z0-9_@+\-./]`: a byte of a path.
pub(crate) fn is_path_byte(x: u8) -> bool {
    class(x) & PATH != 0
}

/// Whether the byte at `i` (none past the end) is in `class`.
fn is(b: &[u8], i: usize, c: u8) -> bool {
    b.get(i).is_some_and(|&x| class(x) & c != 0)
}

/// The end of the run of `c` bytes starting at `i`.
fn run_end(b: &[u8], i: usize, c: u8) -> usize {
    b.get(i..).map_or(i, |rest| i + rest.iter().take_while(|&&x| class(x) & c != 0).count())
}

/// `~?[A-Za-z0-9_@+\-.]*[./][A-Za-z0-9_@+\-./]*`: a maximal run of path bytes
/// holding a `.` or a `/`, with the `~` right before it. (The first class
/// lacks only `/`, so wherever a match can start in a run it can start at the
/// run's first byte, and the greedy tail always reaches the run's end.) Runs
/// are found from their `.` and `/`, which a vector search skips to.
pub(crate) fn pathish(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        let dot = i + memchr::memchr2(b'.', b'/', b.get(i..)?)?;
        // The previous match ended before a byte that is no path byte, so the
        // run holding this dot starts after it.
        let start = dot - b[..dot].iter().rev().take_while(|&&x| class(x) & PATH != 0).count();
        i = run_end(b, dot, PATH);
        let start = if start > 0 && b[start - 1] == b'~' { start - 1 } else { start };
        Some((start, i))
    })
}

/// The words of a text that can start a match of one of the three patterns
/// that start at a word boundary (maximal runs of `(?-u:\b)` word bytes),
/// read once for the three. A word none of them can match (most words of
/// prose and output: lower-case, not followed by `.`, `:` or `(`) is not
/// kept, so each pattern walks only the candidates.
#[derive(Debug)]
pub(crate) struct Words<'t> {
    text: &'t [u8],
    words: Vec<Word>,
}

#[derive(Debug, Clone, Copy)]
struct Word {
    start: usize,
    end: usize,
    /// The [`SEEN`] bits of its bytes, OR-ed.
    seen: u8,
}

impl<'t> Words<'t> {
    pub(crate) fn of(text: &'t str) -> Words<'t> {
        let b = text.as_bytes();
        // About a candidate per 10 bytes of text (what logs hold): sized once
        // rather than grown push by push; capped, so a huge text with few
        // words reserves little (one with many grows from there).
        let mut words = Vec::with_capacity((b.len() / 10).min(1 << 15));
        let mut i = 0;
        while i < b.len() {
            let first = SEEN[usize::from(b[i])];
            i += 1;
            if first & WORD == 0 {
                continue;
            }
            let start = i - 1;
            let mut seen = first;
            while let Some(&x) = b.get(i) {
                let s = SEEN[usize::from(x)];
                if s & WORD == 0 {
                    break;
                }
                seen |= s;
                i += 1;
            }
            // What `hex`, `numbers` and `symbols` ask of a word, in two
            // tests (a number is hex digits too, and 6 to 64 of them covers
            // both lengths): most words fail all three, and are not kept.
            let w = Word { start, end: i, seen };
            if w.shaped(b) || w.whole(NOT_HEX, 6..=64) {
                words.push(w);
            }
            // The byte that ended the word is no word byte: skipped.
            i += 1;
        }
        Words { text: b, words }
    }

    /// `\b[0-9A-Fa-f]{7,64}\b`: a whole word of 7 to 64 hex digits.
    pub(crate) fn hex(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.words.iter().filter(|w| w.hex()).map(|w| (w.start, w.end))
    }

    /// `\b\d{6,20}\b`: a whole word of 6 to 20 decimal digits.
    pub(crate) fn numbers(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.words.iter().filter(|w| w.number()).map(|w| (w.start, w.end))
    }

    /// The code-symbol pattern, alternatives in priority order:
    ///
    /// ```text
    /// \b(?:[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)+   qualified
    ///     |[A-Za-z_][A-Za-z0-9_]{2,}\(                                    call
    ///     |[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+                         snake_case
    ///     |[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+                              PascalCase
    ///     |[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+)                             camelCase
    /// ```
    ///
    /// Every alternative starts with a word byte after a boundary: a match can
    /// start only at a word's first byte. No alternative can end where its
    /// greedy loop stops by backtracking (what a loop stops at is never what
    /// its next part needs), so each alternative is one forward walk. A word
    /// with no capital and no `_`, followed by none of `.`, `:`, `(`, matches
    /// none of them.
    pub(crate) fn symbols(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let b = self.text;
        let mut from = 0;
        self.words.iter().filter_map(move |w| {
            // A qualified name or a call goes on past its first word.
            if w.start < from {
                return None;
            }
            if !w.shaped(b) {
                return None;
            }
            let m = symbol_at(b, w.start, w.end)?;
            from = m;
            Some((w.start, m))
        })
    }
}

impl Word {
    /// The words made only of one class (no byte `not` of it) with a length
    /// in a range: with a boundary on both sides a match can only be a whole
    /// word.
    fn whole(&self, not: u8, len: std::ops::RangeInclusive<usize>) -> bool {
        self.seen & not == 0 && len.contains(&(self.end - self.start))
    }

    fn hex(&self) -> bool {
        self.whole(NOT_HEX, 7..=64)
    }

    fn number(&self) -> bool {
        self.whole(NOT_DIGIT, 6..=20)
    }

    /// Whether the word (of the text `b`) can start a code symbol: only a
    /// word with a capital or `_`, or followed by `.`, `:` or `(`, matches
    /// one of the alternatives of [`Words::symbols`].
    fn shaped(&self, b: &[u8]) -> bool {
        self.seen & (CAP | UNDER) != 0 || matches!(b.get(self.end), Some(b'.' | b':' | b'('))
    }
}

/// The end of the symbol match starting at the word `b[start..end]`.
fn symbol_at(b: &[u8], start: usize, end: usize) -> Option<usize> {
    let first = class(b[start]);
    if first & ID_START != 0 {
        // Qualified: the word, then `.` or `::` and a word that starts an
        // identifier, as often as they follow.
        let mut j = end;
        let mut parts = 0;
        loop {
            let next = match b.get(j) {
                Some(b'.') => j + 1,
                Some(b':') if b.get(j + 1) == Some(&b':') => j + 2,
                _ => break,
            };
            if !is(b, next, ID_START) {
                break;
            }
            j = run_end(b, next, WORD);
            parts += 1;
        }
        if parts > 0 {
            return Some(j);
        }
        // A call: a word of three or more, then `(`.
        if end - start >= 3 && b.get(end) == Some(&b'(') {
            return Some(end + 1);
        }
    }
    if first & (UPPER | LOWER_DIGIT) != 0 && first & DIGIT == 0 {
        // snake_case: alphanumerics, then `_` and alphanumerics, repeated.
        let mut j = run_end(b, start + 1, UPPER | LOWER_DIGIT);
        let mut parts = 0;
        while b.get(j) == Some(&b'_') && is(b, j + 1, UPPER | LOWER_DIGIT) {
            j = run_end(b, j + 1, UPPER | LOWER_DIGIT);
            parts += 1;
        }
        if parts > 0 {
            return Some(j);
        }
        // PascalCase needs a lower-case letter or digit after the first
        // capital; camelCase starts lower-case. Both go on with humps.
        let j = run_end(b, start + 1, LOWER_DIGIT);
        if first & UPPER == 0 || j > start + 1 {
            let mut k = j;
            let mut humps = 0;
            while is(b, k, UPPER) {
                k = run_end(b, k + 1, LOWER_DIGIT);
                humps += 1;
            }
            if humps > 0 {
                return Some(k);
            }
        }
    }
    None
}

/// `s.split(sep)` for a separator of a few bytes: a `memchr` skip to its
/// first byte instead of a two-way search, whose set-up cost more than the
/// search on the short lists split here (a checkpoint's identifier and symbol
/// lines, item by item). `sep` must not be empty (an empty one yields `s`).
pub(crate) fn split_str<'a>(s: &'a str, sep: &'a str) -> SplitStr<'a> {
    SplitStr { rest: Some(s), sep }
}

pub(crate) struct SplitStr<'a> {
    rest: Option<&'a str>,
    sep: &'a str,
}

impl<'a> Iterator for SplitStr<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        let (hay, needle) = (rest.as_bytes(), self.sep.as_bytes());
        let found = needle.first().and_then(|&first| {
            let mut from = 0;
            while let Some(p) = memchr::memchr(first, hay.get(from..)?) {
                let i = from + p;
                if hay[i..].starts_with(needle) {
                    return Some(i);
                }
                from = i + 1;
            }
            None
        });
        // A match starts and ends on char boundaries (`sep` is a whole
        // string, and no UTF-8 character starts inside another); `get` keeps
        // that from being a panic if it were not so.
        match found.and_then(|i| Some((rest.get(..i)?, rest.get(i + needle.len()..)?))) {
            Some((head, tail)) => {
                self.rest = Some(tail);
                Some(head)
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use regex::Regex;
    use std::sync::LazyLock;

    /// The patterns as extraction wrote them before these matchers: the
    /// oracle. `\b` is the ASCII word boundary there too.
    const ORACLES: [(&str, &str); 4] = [
        ("pathish", r"~?[A-Za-z0-9_@+\-.]*[./][A-Za-z0-9_@+\-./]*"),
        ("hex", r"(?-u:\b)[0-9A-Fa-f]{7,64}(?-u:\b)"),
        ("number", r"(?-u:\b)\d{6,20}(?-u:\b)"),
        (
            "symbol",
            concat!(
                r"(?-u:\b)(?:[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)+",
                r"|[A-Za-z_][A-Za-z0-9_]{2,}\(",
                r"|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+",
                r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+",
                r"|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+)",
            ),
        ),
    ];

    fn matcher(name: &str, text: &str) -> Vec<(usize, usize)> {
        match name {
            "pathish" => pathish(text).collect(),
            "hex" => Words::of(text).hex().collect(),
            "number" => Words::of(text).numbers().collect(),
            _ => Words::of(text).symbols().collect(),
        }
    }

    /// The oracles compiled once (thousands of cases run).
    static COMPILED: LazyLock<Vec<(&str, Result<Regex, regex::Error>)>> =
        LazyLock::new(|| ORACLES.iter().map(|&(name, pattern)| (name, Regex::new(pattern))).collect());

    fn check(text: &str) -> Result<(), TestCaseError> {
        for (name, re) in COMPILED.iter() {
            let re = re.as_ref().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let want: Vec<(usize, usize)> = re.find_iter(text).map(|m| (m.start(), m.end())).collect();
            prop_assert_eq!(matcher(name, text), want, "{} on {:?}", name, text);
        }
        Ok(())
    }

    /// Bytes every alternative turns on: both cases, digits (hex and not),
    /// `_`, the separators, `~`, `(`, boundaries of every kind, non-ASCII.
    const ALPHABET: &str = "aAbBfFgGzZ01789_.:/~(@+- \n\té";

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        #[test]
        fn each_matcher_finds_what_its_regex_finds(
            chars in prop::collection::vec(prop::sample::select(ALPHABET.chars().collect::<Vec<_>>()), 0..40)
        ) {
            check(&chars.into_iter().collect::<String>())?;
        }

        /// Longer words, for the length bounds (7–64 hex, 6–20 digits).
        #[test]
        fn long_words_are_bounded_as_the_regexes_bound_them(
            words in prop::collection::vec(("[0-9a-fA-F]{0,70}", "[ 0-9g_./]{0,2}"), 0..4)
        ) {
            check(&words.into_iter().map(|(w, sep)| w + &sep).collect::<String>())?;
        }
    }

    #[test]
    fn each_shape_is_found_where_the_regex_finds_it() {
        for text in [
            "see ~/src/main.rs and a.b.c, not plain words",
            "std::fs::read_to_string(path) and obj.method() with foo_bar_ and __x",
            "HttpClient parseJSON Ab ABc aB9 9ab a_b__c _a.b x::y::",
            "deadbeef 0123456789abcdef 12345 123456 123456789012345678901 é1234567é",
            "",
        ] {
            if let Err(e) = check(text) {
                panic!("{e}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// The same pieces as `str::split`, with separators that overlap
        /// themselves (`aa`), are multi-byte (` · `), or start with a byte
        /// frequent in the text, at both ends and repeated.
        #[test]
        fn split_str_is_str_split(
            text in "(a|b|,| |·|, | · |aa|é|x)*",
            sep in "(, | · |aa|a|·|é ,)",
        ) {
            let ours: Vec<&str> = split_str(&text, &sep).collect();
            let std: Vec<&str> = text.split(sep.as_str()).collect();
            prop_assert_eq!(ours, std);
        }
    }
}
