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

/// Bytes a [`BlockMasks`] covers: one bit of a `u64` each.
const BLOCK: usize = 64;

/// The lowest `n` bits (all 64 for `n` = 64).
fn low_bits(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// Where a block of up to [`BLOCK`] bytes has word bytes, and which of
/// them are no hex digit, no decimal digit, a capital, `_`: bit `i` for
/// byte `i`, the [`SEEN`] classes as bit planes; and where it has a `.`,
/// `:` or `(` (what can follow a symbol's first word).
#[derive(Debug, Default, PartialEq, Eq)]
struct BlockMasks {
    word: u64,
    not_hex: u64,
    not_digit: u64,
    cap: u64,
    under: u64,
    follow: u64,
}

impl BlockMasks {
    /// The masks of `chunk` (at most [`BLOCK`] bytes; those past it are 0).
    fn of(chunk: &[u8]) -> BlockMasks {
        let mut block = [0u8; BLOCK];
        let bytes = match <&[u8; BLOCK]>::try_from(chunk) {
            Ok(full) => full,
            Err(_) => {
                // A NUL is no word byte: padding adds no bit.
                let n = chunk.len().min(BLOCK);
                block[..n].copy_from_slice(&chunk[..n]);
                &block
            }
        };
        Self::of_block(bytes)
    }

    /// The masks of a full block, with the vector instructions every
    /// x86-64 has.
    #[cfg(target_arch = "x86_64")]
    fn of_block(block: &[u8; BLOCK]) -> BlockMasks {
        // SAFETY: SSE2 is part of the x86-64 baseline: every x86-64
        // processor has it.
        unsafe { Self::of_block_sse2(block) }
    }

    /// SSE2: a compare per class and a `movemask` per plane, 16 bytes at a
    /// time.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    fn of_block_sse2(block: &[u8; BLOCK]) -> BlockMasks {
        use std::arch::x86_64::{
            __m128i, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_cmplt_epi8, _mm_loadu_si128,
            _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        };
        // Signed compares: a byte of 0x80 or more is negative, below every
        // bound, so in no class (the classes are ASCII).
        let between = |v: __m128i, lo: u8, hi: u8| {
            _mm_and_si128(
                _mm_cmpgt_epi8(v, _mm_set1_epi8(lo as i8 - 1)),
                _mm_cmplt_epi8(v, _mm_set1_epi8(hi as i8 + 1)),
            )
        };
        let plane = |v: __m128i| u64::from(_mm_movemask_epi8(v) as u16);
        let mut m = BlockMasks::default();
        for (k, lane) in block.chunks_exact(16).enumerate() {
            // SAFETY: `lane` is 16 readable bytes, and the load is unaligned.
            let v = unsafe { _mm_loadu_si128(lane.as_ptr().cast()) };
            // `| 0x20` folds A-Z onto a-z and moves no other byte into a-z.
            let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let digit = between(v, b'0', b'9');
            let upper = between(v, b'A', b'Z');
            let under = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8));
            let word = _mm_or_si128(_mm_or_si128(digit, between(folded, b'a', b'z')), under);
            let hex = _mm_or_si128(digit, between(folded, b'a', b'f'));
            let at = 16 * k;
            m.word |= plane(word) << at;
            m.not_hex |= plane(_mm_andnot_si128(hex, word)) << at;
            m.not_digit |= plane(_mm_andnot_si128(digit, word)) << at;
            m.cap |= plane(upper) << at;
            m.under |= plane(under) << at;
            let eq = |x: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(x as i8));
            m.follow |= plane(_mm_or_si128(_mm_or_si128(eq(b'.'), eq(b':')), eq(b'('))) << at;
        }
        m
    }

    /// Elsewhere, from the [`SEEN`] table, a byte at a time (no branch).
    #[cfg(not(target_arch = "x86_64"))]
    fn of_block(block: &[u8; BLOCK]) -> BlockMasks {
        Self::of_table(block)
    }

    /// The masks from the [`SEEN`] table: the portable path, and the
    /// oracle of the vector one. Built on x86-64 too (only the tests call it
    /// there), so the path other targets take is compiled and checked here.
    #[cfg_attr(all(target_arch = "x86_64", not(test)), expect(dead_code))]
    fn of_table(block: &[u8; BLOCK]) -> BlockMasks {
        let mut m = BlockMasks::default();
        for (i, &x) in block.iter().enumerate() {
            let s = SEEN[usize::from(x)];
            let word = u64::from(s & WORD);
            // Within a word only: the table marks other bytes as no digit.
            let bit = |flag: u8| (u64::from(s & flag != 0) & word) << i;
            m.word |= word << i;
            m.not_hex |= bit(NOT_HEX);
            m.not_digit |= bit(NOT_DIGIT);
            m.cap |= bit(CAP);
            m.under |= bit(UNDER);
            m.follow |= u64::from(matches!(x, b'.' | b':' | b'(')) << i;
        }
        m
    }

    /// The [`SEEN`] bits of the bytes under `bits` (word bytes), OR-ed; no
    /// branch.
    fn seen(&self, bits: u64) -> u8 {
        let has = |plane: u64, flag: u8| u8::from(plane & bits != 0) * flag;
        has(self.not_hex, NOT_HEX) | has(self.not_digit, NOT_DIGIT) | has(self.cap, CAP) | has(self.under, UNDER)
    }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Word {
    start: usize,
    end: usize,
    /// The [`SEEN`] bits of its bytes, OR-ed.
    seen: u8,
}

impl<'t> Words<'t> {
    /// The words of `text`, found from bit masks of 64-byte blocks
    /// ([`BlockMasks`]): a word is a run of set bits, found with two
    /// trailing-zero counts, and what it holds is a test of each mask
    /// against its bits. A byte loop branched at every word's start and end,
    /// on the text itself, which no predictor guesses (docs/perf.md).
    pub(crate) fn of(text: &'t str) -> Words<'t> {
        let b = text.as_bytes();
        // About a candidate per 10 bytes of text (what logs hold): sized once
        // rather than grown push by push; capped, so a huge text with few
        // words reserves little (one with many grows from there).
        let mut words = Vec::with_capacity((b.len() / 10).min(1 << 15));
        // What `hex`, `numbers` and `symbols` ask of a word, in two tests (a
        // number is hex digits too, and 6 to 64 of them covers both lengths):
        // most words fail all three, and are not kept. `followed`: the byte
        // after it is `.`, `:` or `(` ([`Word::shaped`]). Decided without a
        // branch, and the word written and then kept or not by the length:
        // whether a word is kept is as hard to predict as where it ends.
        let mut keep = |w: Word, followed: bool| {
            let kept = (w.seen & (CAP | UNDER) != 0) | followed | w.whole(NOT_HEX, 6..=64);
            let n = words.len();
            words.push(w);
            words.truncate(n + usize::from(kept));
        };
        let follows = |m: &BlockMasks, at: u32| (m.follow >> at) & 1 != 0;
        // A word running on into the next block: its start and its bits so far.
        let mut open: Option<(usize, u8)> = None;
        for (k, chunk) in b.chunks(BLOCK).enumerate() {
            let base = k * BLOCK;
            let m = BlockMasks::of(chunk);
            let mut rest = m.word;
            if let Some((start, seen)) = open.take() {
                // Its bytes at the block's start, up to the first that is no
                // word byte (bits past a short last block are 0).
                let run = (!rest).trailing_zeros();
                let bits = low_bits(run);
                let seen = seen | m.seen(bits);
                if run as usize == BLOCK {
                    open = Some((start, seen));
                    continue;
                }
                keep(Word { start, end: base + run as usize, seen }, follows(&m, run));
                rest &= !bits;
            }
            while rest != 0 {
                let at = rest.trailing_zeros();
                // Its length: the set bits from `at` (to the block's end, the
                // bits shifted in above being 0).
                let run = (!(rest >> at)).trailing_zeros();
                let bits = low_bits(run) << at;
                let seen = WORD | m.seen(bits);
                let start = base + at as usize;
                if (at + run) as usize == BLOCK {
                    open = Some((start, seen));
                    break;
                }
                keep(Word { start, end: start + run as usize, seen }, follows(&m, at + run));
                rest &= !bits;
            }
        }
        if let Some((start, seen)) = open {
            keep(Word { start, end: b.len(), seen }, false);
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

    /// [`Words::of`] as a byte loop (what it was before the block masks):
    /// the oracle of the masks and of the runs found from them.
    fn words_bytewise(b: &[u8]) -> Vec<Word> {
        let mut words = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let first = SEEN[usize::from(b[i])];
            i += 1;
            if first & WORD == 0 {
                continue;
            }
            let start = i - 1;
            let mut seen = first;
            while let Some(&x) = b.get(i).filter(|&&x| SEEN[usize::from(x)] & WORD != 0) {
                seen |= SEEN[usize::from(x)];
                i += 1;
            }
            let w = Word { start, end: i, seen };
            if w.shaped(b) || w.whole(NOT_HEX, 6..=64) {
                words.push(w);
            }
        }
        words
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// Texts across several blocks, words across their edges and longer
        /// than one block: the words found from the masks are the byte
        /// loop's, with the same bits; and the regexes agree.
        #[test]
        fn words_from_block_masks_are_the_byte_loops(
            parts in prop::collection::vec(
                prop_oneof![
                    prop::sample::select(ALPHABET.chars().collect::<Vec<_>>()).prop_map(String::from),
                    "[a-zA-Z0-9_]{1,140}",
                    "[0-9a-f]{1,70}",
                    "[ .:(é\x00\x7f\u{80}-\u{10ffff}]{1,3}",
                ],
                0..24,
            )
        ) {
            let text: String = parts.concat();
            prop_assert_eq!(&Words::of(&text).words, &words_bytewise(text.as_bytes()), "{:?}", text);
            check(&text)?;
        }

        /// Every byte value, in every position of a block: the vector masks
        /// are the table's.
        #[test]
        fn block_masks_are_the_tables(block in prop::array::uniform32(any::<u8>()), at in 0usize..33) {
            let mut full = [0u8; BLOCK];
            full[at..at + 32].copy_from_slice(&block);
            prop_assert_eq!(BlockMasks::of_block(&full), BlockMasks::of_table(&full));
        }
    }

    /// Each of the 256 byte values alone, at each end of a block.
    #[test]
    fn each_byte_value_is_classed_as_the_table_classes_it() {
        for x in 0..=255u8 {
            for at in [0, 15, 16, 63] {
                let mut block = [b' '; BLOCK];
                block[at] = x;
                assert_eq!(BlockMasks::of_block(&block), BlockMasks::of_table(&block), "byte {x:#04x} at {at}");
            }
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
