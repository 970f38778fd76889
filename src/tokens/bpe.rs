//! Real BPE counts with OpenAI's o200k_base and cl100k_base vocabularies
//! (`bpe-openai`, vocabularies compiled into the binary: works offline).
//!
//! The tokenizers are built lazily, once per process: `bpe_openai::o200k_base()`
//! hands out a `&'static` behind the crate's own `LazyLock`, so a second
//! `OnceLock` here would add nothing. Building costs ~30–60 ms on first use, paid
//! only by runs that ask for a BPE estimator.
//!
//! Claude's tokenizer is not public: on Claude logs these counts approximate the
//! provider's, which is exactly what `compactor inspect` measures.

use super::{Estimator, EstimatorKind, IMAGE_TOKENS, ascii_space, tool_input_text};
use crate::model::{Block, Message};
use bpe_openai::Tokenizer;
use bpe_openai::byte_pair_encoding::BytePairEncoding;
use std::ops::Range;

/// Tokens of chat-format framing per message (role and separators): OpenAI's
/// "How to count tokens with tiktoken" cookbook uses `tokens_per_message = 3` for
/// current chat models. Added by [`O200k`] and [`Cl100k`] per message.
pub const BPE_MESSAGE_OVERHEAD: u64 = 3;

/// Which vocabulary a count is for (each has its own piece cache).
#[derive(Clone, Copy)]
enum Vocab {
    O200k,
    Cl100k,
}

impl Vocab {
    fn tokenizer(self) -> &'static Tokenizer {
        match self {
            Vocab::O200k => bpe_openai::o200k_base(),
            Vocab::Cl100k => bpe_openai::cl100k_base(),
        }
    }
}

/// Pieces longer than this are counted without the cache: long pieces (runs of
/// one character, base64) rarely repeat and would crowd the cache.
const MAX_CACHED_PIECE: usize = 64;
/// Entries per thread and vocabulary before the cache starts over (~10 MB).
const MAX_CACHED_PIECES: usize = 1 << 17;

/// Hashed with foldhash, not SipHash: every piece of every counted text is
/// looked up, and SipHash was a tenth of an o200k replay. The pieces are at
/// most [`MAX_CACHED_PIECE`] bytes, the table is bounded and starts over at
/// [`MAX_CACHED_PIECES`], and foldhash is seeded per process: hostile input
/// cannot build long probe chains worth the name.
#[derive(Default)]
struct PieceCache {
    /// The last count looked up in each slot, by short key: most pieces
    /// are a few thousand common words and symbols, found here in a few
    /// instructions and without a miss of the processor's caches. Empty
    /// until the first piece (a key is never 0: pieces are not empty).
    recent: Box<[(u128, u32)]>,
    /// Pieces of at most 15 bytes, keyed by [`short_key`].
    short: foldhash::HashMap<u128, u32>,
    /// Longer pieces, up to [`MAX_CACHED_PIECE`] bytes.
    long: foldhash::HashMap<Box<[u8]>, u32>,
}

thread_local! {
    static O200K_PIECES: std::cell::RefCell<PieceCache> = Default::default();
    static CL100K_PIECES: std::cell::RefCell<PieceCache> = Default::default();
}

/// Tokens of `text`: what `Tokenizer::count` returns, which is the sum of the BPE
/// counts of the pre-tokenized pieces. Words, identifiers and punctuation runs
/// repeat all over a log, so each distinct piece is encoded once per thread and
/// its count remembered: the BPE step (half of raw counting, mostly allocation of
/// its encoder) is paid once per distinct piece instead of once per occurrence.
fn count(vocab: Vocab, text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let cache = match vocab {
        Vocab::O200k => &O200K_PIECES,
        Vocab::Cl100k => &CL100K_PIECES,
    };
    let bpe = &vocab.tokenizer().bpe;
    cache.with(|cache| {
        let mut cache = cache.borrow_mut();
        let mut n = 0u64;
        // Hand-cut groups in a plain loop, not a chain of (boxed)
        // iterators: a piece is ~4 bytes, so whatever a step costs is paid
        // per 4 bytes of a log.
        for_each_group(text, |hand, group| {
            let b = group.as_bytes();
            if hand {
                let mut at = 0;
                while at < b.len() {
                    let end = piece_end(vocab, b, at);
                    n += cache.count(bpe, b, at..end);
                    at = end;
                }
            } else {
                for piece in vocab.tokenizer().split(group) {
                    n += cache.count(bpe, piece.as_bytes(), 0..piece.len());
                }
            }
        });
        n
    })
}

impl PieceCache {
    /// The BPE count of the piece `b[piece]`, remembered if it is at most
    /// [`MAX_CACHED_PIECE`] bytes long.
    #[inline]
    fn count(&mut self, bpe: &BytePairEncoding, b: &[u8], piece: Range<usize>) -> u64 {
        let Some(key) = short_key(b, piece.clone()) else {
            return self.count_long(bpe, b.get(piece).unwrap_or_default());
        };
        let slot = recent_slot(key);
        if let Some(&(seen, k)) = self.recent.get(slot)
            && seen == key
        {
            return u64::from(k);
        }
        let k = match self.short.get(&key) {
            Some(&k) => k,
            None => self.count_new(bpe, b.get(piece).unwrap_or_default(), Some(key)),
        };
        if self.recent.is_empty() {
            self.recent = vec![(0, 0); RECENT_SLOTS].into_boxed_slice();
        }
        if let Some(entry) = self.recent.get_mut(slot) {
            *entry = (key, k);
        }
        u64::from(k)
    }

    /// The count of a piece of more than 15 bytes.
    #[inline(never)]
    fn count_long(&mut self, bpe: &BytePairEncoding, piece: &[u8]) -> u64 {
        if piece.len() > MAX_CACHED_PIECE {
            return bpe.count(piece) as u64;
        }
        match self.long.get(piece) {
            Some(&k) => u64::from(k),
            None => u64::from(self.count_new(bpe, piece, None)),
        }
    }

    /// Encodes a piece not seen before (of at most [`MAX_CACHED_PIECE`]
    /// bytes) and remembers its count, under `short` if it has a short key.
    #[inline(never)]
    fn count_new(&mut self, bpe: &BytePairEncoding, piece: &[u8], short: Option<u128>) -> u32 {
        // A piece of at most 64 bytes has at most 64 tokens.
        let k = bpe.count(piece) as u32;
        if self.short.len() + self.long.len() >= MAX_CACHED_PIECES {
            self.short.clear();
            self.long.clear();
        }
        match short {
            Some(key) => self.short.insert(key, k),
            None => self.long.insert(piece.into(), k),
        };
        k
    }
}

/// Slots of [`PieceCache::recent`]: 128 KB, which stays in a core's L2
/// cache, where the tables behind it (up to [`MAX_CACHED_PIECES`] entries)
/// do not.
const RECENT_SLOTS: usize = 1 << 12;

/// The slot of [`PieceCache::recent`] a short key goes to: the top bits of
/// a multiplicative hash. Not seeded: input built to collide only sends
/// lookups on to the tables behind, which are.
fn recent_slot(key: u128) -> usize {
    let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(23);
    (folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - RECENT_SLOTS.trailing_zeros())) as usize
}

/// A piece `b[piece]` of at most 15 bytes as one number: its bytes from
/// the lowest byte up, its length in the highest (so `a` and `a\0` differ).
/// Most pieces are this short; hashing and comparing one `u128` is cheaper
/// than hashing and comparing a string, and the key needs no allocation.
/// Where 16 bytes of `b` start at the piece, they are read at once and the
/// bytes past the piece masked off.
fn short_key(b: &[u8], piece: Range<usize>) -> Option<u128> {
    let len = piece.len();
    if len > 15 {
        return None;
    }
    let bytes = match b.get(piece.start..piece.start + 16) {
        Some(window) => {
            let word = u128::from_le_bytes(window.try_into().ok()?);
            word & ((1u128 << (8 * len)) - 1)
        }
        None => b.get(piece)?.iter().rev().fold(0u128, |acc, &x| (acc << 8) | u128::from(x)),
    };
    Some(bytes | (len as u128) << 120)
}

/// How [`count`] cuts `text` into the pieces `Tokenizer::split` makes. Most
/// of a log is ASCII: the pieces of ASCII text are cut by hand
/// ([`piece_end`]), the same pieces as the tokenizer's regex at a fraction
/// of its cost (one anchored regex search a piece was most of counting),
/// and so are those of text whose other characters are a few common
/// symbols ([`known_symbol`]). Any other text is cut into
/// [`line_segments`](super::line_segments), whose pieces are the text's (no
/// piece spans a cut), and only the runs of segments the hand cut does not
/// know go through the regex.
///
/// Calls `f` with each run of `text`'s line segments that is cut the same
/// way (by hand, or by the tokenizer's regex), in order, with whether it is
/// cut by hand. The runs are contiguous and make up `text`.
fn for_each_group<'t>(text: &'t str, mut f: impl FnMut(bool, &'t str)) {
    if hand_cuttable(text) {
        return f(true, text);
    }
    let (mut start, mut end, mut kind) = (0, 0, None);
    for seg in super::line_segments(text) {
        let hand = hand_cuttable(seg);
        if kind.is_some_and(|k| k != hand) {
            f(kind == Some(true), text.get(start..end).unwrap_or_default());
            start = end;
        }
        kind = Some(hand);
        end += seg.len();
    }
    if let Some(hand) = kind {
        f(hand, text.get(start..end).unwrap_or_default());
    }
}

/// The pieces [`count`] counts, as strings: the tests compare them with
/// `Tokenizer::split`'s.
#[cfg(test)]
fn pieces(vocab: Vocab, text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for_each_group(text, |hand, group| {
        if hand {
            out.extend(HandPieces { vocab, text: group, at: 0 });
        } else {
            out.extend(vocab.tokenizer().split(group));
        }
    });
    out
}

/// The pieces [`piece_end`] cuts a [`hand_cuttable`] text into.
#[cfg(test)]
struct HandPieces<'t> {
    vocab: Vocab,
    text: &'t str,
    at: usize,
}

#[cfg(test)]
impl<'t> Iterator for HandPieces<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let start = self.at;
        if start >= self.text.len() {
            return None;
        }
        let end = piece_end(self.vocab, self.text.as_bytes(), start);
        self.at = end;
        // A piece ends after an ASCII byte or a whole symbol (runs of
        // "other" stop at an ASCII byte): a character boundary.
        self.text.get(start..end)
    }
}

/// Whether [`HandPieces`] cuts `text` as the tokenizers do: its characters
/// are ASCII or [`known_symbol`]s.
fn hand_cuttable(text: &str) -> bool {
    // From one character that is not ASCII to the next, eight bytes at a
    // time: a text with an arrow on every line (a file Claude Code read) is
    // not decoded character by character.
    let mut at = 0;
    while let Some(off) = text.as_bytes().get(at..).and_then(first_non_ascii) {
        let Some(c) = text.get(at + off..).and_then(|rest| rest.chars().next()) else { return false };
        if !known_symbol(c) {
            return false;
        }
        at += off + c.len_utf8();
    }
    true
}

/// Position of the first byte of `b` from 0x80 up.
fn first_non_ascii(b: &[u8]) -> Option<usize> {
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut chunks = b.chunks_exact(8);
    let mut i = 0;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let high = u64::from_le_bytes(w) & HI;
        if high != 0 {
            return Some(i + (high.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    chunks.remainder().iter().position(|&x| x >= 0x80).map(|p| i + p)
}

/// Symbols and punctuation common in agent logs (Claude Code numbers the
/// lines of a file it reads with `→`; tests print `✓`), all of general
/// categories Sm, So, Sc, Pd, Po, Pi, Pf: `[^\s\p{L}\p{N}]` and no mark, as
/// each of their bytes reads in [`piece_end`]. The tests cut every one of
/// them in every context of the patterns.
fn known_symbol(c: char) -> bool {
    matches!(
        c,
        '→' | '←'
            | '↑'
            | '↓'
            | '✓'
            | '✔'
            | '✗'
            | '✘'
            | '✅'
            | '❌'
            | '⚠'
            | '—'
            | '–'
            | '…'
            | '•'
            | '·'
            | '×'
            | '°'
            | '─'
            | '│'
            | '└'
            | '├'
            | '┌'
            | '┐'
            | '┘'
            | '┤'
            | '═'
            | '║'
            | '▶'
            | '►'
            | '★'
            | '“'
            | '”'
            | '‘'
            | '’'
            | '«'
            | '»'
            | '©'
            | '®'
            | '™'
            | '€'
            | '£'
    )
}

/// The UTF-8 length of the character whose first byte is `b`.
fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// The pre-tokenizer of o200k or cl100k on a [`hand_cuttable`] text, cut by
/// hand: where the piece that starts at `s` (< `b.len()`, a character
/// boundary of such a text) ends, as `Tokenizer::split` would cut it. The
/// patterns, alternatives in order of preference at each start
/// (leftmost-first), restricted to such
/// text (`\p{L}` = `[A-Za-z]`, `\p{N}` = `[0-9]`, `\s` = `[\t\n\x0B\x0C\r ]`;
/// no character of it is `\p{Lt}`, `\p{Lm}`, `\p{Lo}` or `\p{M}`, and every
/// byte of a [`known_symbol`] reads as `[^\s\p{L}\p{N}]`), `C` for
/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)`:
///
/// ```text
/// o200k                                          cl100k
/// [^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+C?        C
/// [^\r\n\p{L}\p{N}]?[\p{Lu}…]+[\p{Ll}…]*C?        [^\r\n\p{L}\p{N}]?\p{L}+
/// \p{N}{1,3}                                      \p{N}{1,3}
///  ?[^\s\p{L}\p{N}]+[\r\n/]*                      ?[^\s\p{L}\p{N}]+[\r\n]*
/// then, both:
/// \s*[\r\n]+
/// \s+$
/// \s+(?!\S)   (bpe-openai: `\s+\s`, the last character given back)
/// \s+
/// ```
///
/// Property tests compare the pieces with the tokenizers' on random text and
/// exhaustively on every short string of a small alphabet.
fn piece_end(vocab: Vocab, b: &[u8], s: usize) -> usize {
    let n = b.len();
    // A run of bytes of the classes in `mask` from `i`: a table lookup a
    // byte, a piece being mostly one or two such runs.
    let run = |mut i: usize, mask: u8| {
        while i < n && class(b[i]) & mask != 0 {
            i += 1;
        }
        i
    };
    let c = b[s];
    let cc = class(c);
    // The optional first character of a word is taken when it can be (a
    // letter cannot follow otherwise: `c` is no letter then).
    let t = if cc & (BREAK | LETTER | DIGIT) == 0 { s + utf8_len(c) } else { s };
    let after_punct = match vocab {
        Vocab::O200k => {
            let upper = run(t, UPPER);
            let lower = run(upper, LOWER);
            // The first needs a lower-case letter after the capitals (giving
            // capitals back cannot help: they are not lower-case); else the
            // second needs a capital.
            if lower > upper || upper > t {
                return contraction(b, lower);
            }
            BREAK | SLASH
        }
        Vocab::Cl100k => {
            let e = contraction(b, s);
            if e > s {
                return e;
            }
            let e = run(t, LETTER);
            if e > t {
                return e;
            }
            BREAK
        }
    };
    if cc & DIGIT != 0 {
        return run(s, DIGIT).min(s + 3);
    }
    let t = if c == b' ' { s + 1 } else { s };
    if t < n && class(b[t]) & OTHER != 0 {
        let e = run(t, OTHER);
        return run(e, after_punct);
    }
    // Whitespace from here on: `c` is neither a letter, a digit nor other.
    let r = run(s, SPACE);
    // `\s*[\r\n]+`: up to the run's last line break.
    if let Some(j) = b[s..r].iter().rposition(|&x| x == b'\r' || x == b'\n') {
        return s + j + 1;
    }
    // `\s+$`, `\s+(?!\S)`, `\s+`.
    if r == n || r - s == 1 { r } else { r - 1 }
}

/// Byte classes of [`piece_end`], as bits of [`CLASSES`].
const UPPER: u8 = 1;
const LOWER: u8 = 2;
const LETTER: u8 = UPPER | LOWER;
const DIGIT: u8 = 4;
/// `\s`: `[\t\n\x0B\x0C\r ]`.
const SPACE: u8 = 8;
/// `[^\s\p{L}\p{N}]`: ASCII punctuation, symbols and control characters, and
/// every byte of a [`known_symbol`] (every byte from 0x80 up).
const OTHER: u8 = 16;
const BREAK: u8 = 32;
const SLASH: u8 = 64;

/// The classes of each byte.
static CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b.is_ascii_uppercase() {
            UPPER
        } else if b.is_ascii_lowercase() {
            LOWER
        } else if b.is_ascii_digit() {
            DIGIT
        } else if ascii_space(b) {
            SPACE | if matches!(b, b'\r' | b'\n') { BREAK } else { 0 }
        } else {
            OTHER | if b == b'/' { SLASH } else { 0 }
        };
        i += 1;
    }
    t
};

fn class(b: u8) -> u8 {
    CLASSES[b as usize]
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `i`: where it ends.
fn contraction(b: &[u8], i: usize) -> usize {
    if b.get(i) != Some(&b'\'') {
        return i;
    }
    let at = |k: usize| b.get(i + k).map(u8::to_ascii_lowercase);
    match (at(1), at(2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => i + 2,
        (Some(b'r'), Some(b'e')) | (Some(b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => i + 3,
        _ => i,
    }
}

/// Tokens of a block with a given tokenizer. Same accounting as chars/4: tool call
/// = name + compact JSON input, tool result = its content, thinking = its text
/// (not the opaque payload), image = [`IMAGE_TOKENS`], unknown block = its raw
/// JSON, each encoded image or document in it [`IMAGE_TOKENS`].
fn block_tokens(tok: Vocab, b: &Block) -> u64 {
    match b {
        Block::Text { text } => count(tok, text),
        Block::Thinking { text, .. } => count(tok, text),
        Block::ToolUse { name, input, .. } => count(tok, name) + count(tok, &tool_input_text(input)),
        Block::ToolResult { content, .. } => content.iter().map(|c| block_tokens(tok, c)).sum(),
        Block::Image { .. } => IMAGE_TOKENS,
        Block::Other { raw } => {
            let (text, media) = crate::model::split_media(raw);
            count(tok, &tool_input_text(&text)) + media * IMAGE_TOKENS
        }
    }
}

fn message_tokens(tok: Vocab, m: &Message) -> u64 {
    BPE_MESSAGE_OVERHEAD + m.blocks.iter().map(|b| block_tokens(tok, b)).sum::<u64>()
}

/// o200k_base (GPT-4o and later).
#[derive(Debug, Clone, Copy, Default)]
pub struct O200k;

impl Estimator for O200k {
    fn kind(&self) -> EstimatorKind {
        EstimatorKind::O200k
    }
    fn adds_up_over_lines(&self) -> bool {
        true
    }
    fn text_tokens(&self, text: &str) -> u64 {
        count(Vocab::O200k, text)
    }
    fn message_tokens(&self, m: &Message) -> u64 {
        message_tokens(Vocab::O200k, m)
    }
    fn block_tokens(&self, b: &Block) -> u64 {
        block_tokens(Vocab::O200k, b)
    }
}

/// cl100k_base (GPT-4, GPT-3.5).
#[derive(Debug, Clone, Copy, Default)]
pub struct Cl100k;

impl Estimator for Cl100k {
    fn kind(&self) -> EstimatorKind {
        EstimatorKind::Cl100k
    }
    fn adds_up_over_lines(&self) -> bool {
        true
    }
    fn text_tokens(&self, text: &str) -> u64 {
        count(Vocab::Cl100k, text)
    }
    fn message_tokens(&self, m: &Message) -> u64 {
        message_tokens(Vocab::Cl100k, m)
    }
    fn block_tokens(&self, b: &Block) -> u64 {
        block_tokens(Vocab::Cl100k, b)
    }
}

#[cfg(test)]
#[path = "bpe_tests.rs"]
mod tests;
