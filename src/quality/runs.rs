//! "Is this token in the text?" for a text asked many times: the bounded
//! searches of `view` (an identifier, a path, a word with no token character
//! right before or after it), answered by search for a text's first
//! [`SEARCHES`] questions and then by an index of the text's runs.
//!
//! Most texts are asked about a few atoms, and indexing each token of a
//! summary, or of all of P for observation masking, costs more than those
//! searches. But a text scored against every atom a long session needs later
//! is asked thousands of times, and a search per question made scoring grow
//! with the square of the session's length.
//!
//! A bounded occurrence of a needle made only of a class's inner bytes is a
//! run of that class (or, for paths, a run cut before a `.`), so the index of
//! the runs answers exactly what the search does. A needle with other bytes is
//! searched, unless one of its own runs is missing from the index.

use crate::text::words;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{LazyLock, OnceLock};

/// Questions a text answers by search before it is indexed. A text asked
/// this many is mostly asked many more (a view is asked about each needed
/// atom it does not list). The count is measured (docs/perf.md).
pub(crate) const SEARCHES: u32 = 8;

/// The three kinds of bounded token a text is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    /// A maximal run of ASCII letters, digits and `_` ([`ident_inner`]).
    Ident,
    /// A path: a run of [`path_inner`] bytes, which a `.` may also end (the
    /// full stop of a sentence); so `src/a` is bounded in `src/a.rs`.
    Path,
    /// A maximal run of [`word_char`] characters, in a lower-cased text.
    Word,
}

impl Runs {
    /// Does `hay` hold `needle` with no inner character right before or after
    /// it? The search, for any needle.
    pub(crate) fn search(self, hay: &str, needle: &str) -> bool {
        match self {
            Runs::Ident => contains_bounded(hay, needle, ident_inner, ident_inner),
            Runs::Path => contains_bounded(hay, needle, path_inner, path_inner_after),
            Runs::Word => has_word_in(hay, needle),
        }
    }

    /// Can a run of this class be `needle`: is it made of inner characters
    /// only? (The index answers for those; others are searched.)
    fn fits(self, needle: &str) -> bool {
        needle.chars().all(|c| self.inner(c))
    }

    /// The maximal runs of inner characters of a needle that does not fit.
    fn pieces(self, needle: &str) -> impl Iterator<Item = &str> {
        needle.split(move |c: char| !self.inner(c)).filter(|p| !p.is_empty())
    }

    fn inner(self, c: char) -> bool {
        match self {
            Runs::Ident => c.is_ascii() && ident_inner(c as u8),
            Runs::Path => c.is_ascii() && path_inner(c as u8),
            Runs::Word => word_char(c),
        }
    }

    /// Each bounded token of `text` as a byte range, repeats included.
    pub(crate) fn each(self, text: &str, f: &mut impl FnMut(usize, usize)) {
        // Byte classes tell identifiers and paths, and the words of an ASCII
        // text (a word's ASCII characters are identifier bytes). Each class
        // gets its own copy of the loop, which is most of the cost of an
        // index: one table lookup per byte, not a call.
        let b = text.as_bytes();
        match self {
            Runs::Ident => each_run(b, ident_inner, false, f),
            Runs::Path => each_run(b, path_inner, true, f),
            Runs::Word if text.is_ascii() => each_run(b, ident_inner, false, f),
            Runs::Word => each_word(text, f),
        }
    }
}

/// The maximal runs of `inner` bytes of `b` (and, with `dots`, each run's
/// head before each of its `.`), as byte ranges.
fn each_run(b: &[u8], inner: impl Fn(u8) -> bool, dots: bool, f: &mut impl FnMut(usize, usize)) {
    walk_runs(b, inner, dots, (), |(), _| (), &mut |start, end, ()| f(start, end));
}

/// [`each_run`], with each run's [`token_hash`], made as the run is walked
/// (hashing each token again once found was a quarter of an index's cost).
fn each_run_hashed(b: &[u8], inner: impl Fn(u8) -> bool, dots: bool, key: u64, f: &mut impl FnMut(usize, usize, u64)) {
    walk_runs(b, inner, dots, HASH_START, hash_step, &mut |start, end, h| f(start, end, hash_finish(h, key)));
}

/// The runs of [`each_run`], each with the state `step` folds over its bytes
/// from `init` (nothing, or a hash: each caller gets its own copy of the loop).
fn walk_runs<S: Copy>(
    b: &[u8],
    inner: impl Fn(u8) -> bool,
    dots: bool,
    init: S,
    step: impl Fn(S, u8) -> S,
    f: &mut impl FnMut(usize, usize, S),
) {
    let mut i = 0;
    while i < b.len() {
        if !inner(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut state = step(init, b[i]);
        i += 1;
        while let Some(&byte) = b.get(i).filter(|&&byte| inner(byte)) {
            if dots && byte == b'.' {
                f(start, i, state);
            }
            state = step(state, byte);
            i += 1;
        }
        f(start, i, state);
    }
}

/// The word tokens ([`word_char`] runs) of any text, as byte ranges.
fn each_word(text: &str, f: &mut impl FnMut(usize, usize)) {
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (word_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                f(s, i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        f(s, text.len());
    }
}

/// One text's questions of one [`Runs`] kind: counted, and answered from an
/// index of its runs once they pass [`SEARCHES`]. Reset it when the text
/// changes.
#[derive(Debug, Default)]
pub(crate) struct RunLookup {
    asked: AtomicU32,
    index: OnceLock<Option<RunIndex>>,
}

impl Clone for RunLookup {
    fn clone(&self) -> RunLookup {
        RunLookup { asked: AtomicU32::new(self.asked.load(Ordering::Relaxed)), index: self.index.clone() }
    }
}

impl RunLookup {
    /// [`Runs::search`] of `needle` in `text` (always the same text for one
    /// lookup), from the index when it is made.
    pub(crate) fn contains(&self, runs: Runs, text: &str, needle: &str) -> bool {
        let index = match self.index.get() {
            Some(index) => index.as_ref(),
            None if self.asked.fetch_add(1, Ordering::Relaxed) >= SEARCHES => {
                self.index.get_or_init(|| RunIndex::of(runs, text)).as_ref()
            }
            None => None,
        };
        let Some(index) = index else { return runs.search(text, needle) };
        if runs.fits(needle) {
            // Or searched when the needle's hash is another token's.
            return index.find(text, needle).unwrap_or_else(|| runs.search(text, needle));
        }
        // A needle with other characters (`state.todos`, a path with a
        // space): each of its runs is a token of the text wherever it occurs
        // bounded (the first and last are bounded by the search, the others
        // by the characters between them), so one missing run rules it out,
        // and most needles asked of a text are not in it.
        runs.pieces(needle).all(|piece| index.knows(piece)) && runs.search(text, needle)
    }
}

/// The bounded tokens of a text, as the hash of each and where it first
/// occurs: one hash probe and one compare per question instead of a scan.
#[derive(Debug, Clone)]
struct RunIndex {
    first: TokenMap,
    /// The process's [`HASH_KEY`], read once.
    key: u64,
}

/// Token hashes to where each first occurs. The keys are [`token_hash`]es,
/// already spread over all 64 bits: the map uses them as they are.
type TokenMap = std::collections::HashMap<u64, (u32, u32), BuildHasherDefault<KeyIsHash>>;

/// The [`Hasher`] of a map whose `u64` keys are hashes already.
#[derive(Default)]
struct KeyIsHash(u64);

impl Hasher for KeyIsHash {
    fn write(&mut self, bytes: &[u8]) {
        // Not called for `u64` keys; any bytes still hash.
        self.0 = bytes.iter().fold(self.0, |h, &b| hash_step(h, b));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl RunIndex {
    /// `None` for a text past `u32` offsets (4 GB), which is searched.
    fn of(runs: Runs, text: &str) -> Option<RunIndex> {
        u32::try_from(text.len()).ok()?;
        // About a token per 8 bytes of text, a third of them new: sized once
        // rather than grown (and rehashed) insert by insert, up to 64K
        // tokens (a huge text of few distinct tokens reserves no more).
        let mut first = TokenMap::with_capacity_and_hasher((text.len() / 24).min(1 << 16), Default::default());
        let key = *HASH_KEY;
        let bytes = text.as_bytes();
        // In range: the text's length fits in `u32`.
        let mut add = |start: usize, end: usize, hash: u64| {
            first.entry(hash).or_insert((start as u32, end as u32));
        };
        match runs {
            Runs::Ident => each_run_hashed(bytes, ident_inner, false, key, &mut add),
            Runs::Path => each_run_hashed(bytes, path_inner, true, key, &mut add),
            Runs::Word if text.is_ascii() => each_run_hashed(bytes, ident_inner, false, key, &mut add),
            Runs::Word => each_word(text, &mut |start, end| add(start, end, token_hash(&bytes[start..end], key))),
        }
        Some(RunIndex { first, key })
    }

    /// Is `token` possibly one of the text's tokens (a hash of one)?
    fn knows(&self, token: &str) -> bool {
        self.first.contains_key(&token_hash(token.as_bytes(), self.key))
    }

    /// `Some(answer)` when the index knows, `None` when only a search of
    /// `text` (the text indexed) can tell: the needle's hash is another
    /// token's.
    fn find(&self, text: &str, needle: &str) -> Option<bool> {
        let Some(&(start, end)) = self.first.get(&token_hash(needle.as_bytes(), self.key)) else { return Some(false) };
        let token = text.as_bytes().get(start as usize..end as usize);
        (token == Some(needle.as_bytes())).then_some(true)
    }
}

/// The hash of a token: FNV-1a over its bytes, which an index computes as it
/// walks each run ([`each_run_hashed`]), then `key` mixed in and a finalizer
/// (MurmurHash3's) that spreads it over all 64 bits. A collision costs a
/// search, never a wrong answer: a found token's bytes are compared, and a
/// missing one is only ever ruled out by its hash being absent.
fn token_hash(token: &[u8], key: u64) -> u64 {
    hash_finish(token.iter().fold(HASH_START, |h, &b| hash_step(h, b)), key)
}

/// A key drawn once per process and mixed into every token hash. The map
/// places tokens by their hash as it is, and a log is untrusted input: with a
/// fixed hash its author could choose tokens that all fall in one bucket and
/// make each index quadratic to build. The answers do not depend on it.
static HASH_KEY: LazyLock<u64> = LazyLock::new(|| RandomState::new().build_hasher().finish());

const HASH_START: u64 = 0xcbf2_9ce4_8422_2325;

fn hash_step(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
}

fn hash_finish(h: u64, key: u64) -> u64 {
    let mut h = h ^ key;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A character of a word token.
pub(crate) fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn path_inner(b: u8) -> bool {
    words::is_path_byte(b)
}

/// After a path a `.` may end the sentence: a path byte but `.`.
fn path_inner_after(b: u8) -> bool {
    b != b'.' && words::is_path_byte(b)
}

pub(crate) fn ident_inner(b: u8) -> bool {
    words::is_word_byte(b)
}

/// `needle` occurs in `hay` with no inner character right before or after it.
pub(crate) fn contains_bounded(hay: &str, needle: &str, before: fn(u8) -> bool, after: fn(u8) -> bool) -> bool {
    if needle.is_empty() || hay.len() < needle.len() {
        return false;
    }
    let bytes = hay.as_bytes();
    // memmem, not `str::match_indices`: a summary is searched for every atom
    // an event needs that is not one of its keys, and the SIMD search is
    // several times faster on texts of kilobytes. Same matches: leftmost,
    // non-overlapping.
    memchr::memmem::find_iter(bytes, needle.as_bytes()).any(|i| {
        let end = i + needle.len();
        let ok_before = i == 0 || !before(bytes[i - 1]);
        let ok_after = end == bytes.len() || !after(bytes[end]);
        ok_before && ok_after
    })
}

/// `w` occurs in the lower-cased word text `lower` with no word character
/// right before or after it.
fn has_word_in(lower: &str, w: &str) -> bool {
    if w.is_empty() {
        return false;
    }
    memchr::memmem::find_iter(lower.as_bytes(), w.as_bytes()).any(|i| {
        // A valid UTF-8 needle matches at character boundaries only; were
        // it not so, `get` declines the match rather than panic.
        let (Some(head), Some(tail)) = (lower.get(..i), lower.get(i + w.len()..)) else { return false };
        !head.chars().next_back().is_some_and(word_char) && !tail.chars().next().is_some_and(word_char)
    })
}

#[cfg(test)]
mod tests {
    use super::{RunLookup, Runs, SEARCHES};
    use proptest::prelude::*;

    /// A lookup asked enough to have made its index.
    fn indexed(runs: Runs, text: &str) -> RunLookup {
        let lookup = RunLookup::default();
        for _ in 0..=SEARCHES {
            lookup.contains(runs, text, "");
        }
        assert!(lookup.index.get().is_some_and(Option::is_some), "not indexed after {SEARCHES} questions");
        lookup
    }

    /// Texts and needles made of the characters the classes tell apart:
    /// inner ASCII, `.` (inner to paths only, and a path's full stop), `/`,
    /// `:`, spaces, non-ASCII letters and separators.
    const PIECE: &str = "(ab|a|b|_|1|\\.|/|::|-|@| |\n|é|Σ|→|·|😀)";

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// The index answers what the search answers, for needles that are
        /// one token and needles with other characters, found or not.
        #[test]
        fn the_index_answers_as_the_search(
            text in proptest::collection::vec(PIECE, 0..24).prop_map(|p| p.concat()),
            needles in proptest::collection::vec(proptest::collection::vec(PIECE, 0..5).prop_map(|p| p.concat()), 0..12),
            cuts in proptest::collection::vec((any::<prop::sample::Index>(), 1usize..12), 0..8),
        ) {
            // Needles cut from the text too, so that many are found.
            let starts: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
            let cut = cuts.iter().filter_map(|(at, len)| {
                let i = starts[at.index(starts.len())];
                let j = (i + len..=text.len()).find(|&j| text.is_char_boundary(j))?;
                Some(text[i..j].to_string())
            });
            let needles: Vec<String> = needles.into_iter().chain(cut).collect();
            for runs in [Runs::Ident, Runs::Path, Runs::Word] {
                let lookup = indexed(runs, &text);
                for n in &needles {
                    prop_assert_eq!(lookup.contains(runs, &text, n), runs.search(&text, n), "{:?} {:?} in {:?}", runs, n, text);
                }
            }
        }
    }

    /// A path is also a token up to each of its dots (`src/a` ends a
    /// sentence in `see src/a.`), not past a character paths do not hold.
    #[test]
    fn path_tokens_end_at_dots_and_at_the_run_end() {
        let mut tokens = Vec::new();
        let text = "see src/a.rs.bak, x.y é/z";
        Runs::Path.each(text, &mut |s, e| tokens.push(&text[s..e]));
        assert_eq!(tokens, ["see", "src/a", "src/a.rs", "src/a.rs.bak", "x", "x.y", "/z"]);
        let lookup = indexed(Runs::Path, text);
        for (needle, found) in [("src/a", true), ("src/a.rs.bak", true), ("a.rs", false), ("/z", true), ("x.y", true)] {
            assert_eq!(lookup.contains(Runs::Path, text, needle), found, "{needle}");
        }
    }

    /// A text asked fewer than `SEARCHES` questions is searched, not indexed.
    #[test]
    fn a_text_asked_a_few_questions_is_not_indexed() {
        let lookup = RunLookup::default();
        for _ in 0..SEARCHES {
            assert!(lookup.contains(Runs::Ident, "foo bar", "bar"));
        }
        assert!(lookup.index.get().is_none());
        assert!(lookup.contains(Runs::Ident, "foo bar", "bar"));
        assert!(lookup.index.get().is_some());
    }
}
