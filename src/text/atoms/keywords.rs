//! Constraints, asks and keywords: the word tokenizer, stop words, and the
//! sentence-level constraint extraction.

use super::*;

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
pub(super) fn unicode_word_tokens(piece: &str, f: &mut impl FnMut(&str)) {
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
