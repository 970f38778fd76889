//! Token estimators (DESIGN.md §4 `estimator`): one trait, several
//! implementations, and the helpers the replay engine needs around them.
//!
//! - [`Chars4`] — characters / 4 per message, rounded up (specs/000's heuristic,
//!   counted the way pi counts it).
//! - [`PerBlock`] — specs/003's per-block character sum / 4.
//! - [`O200k`], [`Cl100k`] — real BPE counts (`bpe-openai`, vocabularies compiled in).
//! - [`Calibrated`] — specs/002's hybrid. Per message it counts like [`Chars4`];
//!   the calibration against recorded usage lives in [`Calibrator`], because it
//!   depends on the conversation's history, not on one message.
//!
//! Each message is counted once and cached ([`MessageTokens`]): BPE counting is the
//! expensive part of a replay (~20 MB/s), everything else is arithmetic on the cache.
//!
//! "Characters" are Unicode scalar values (Python's `len`, which specs/000 uses),
//! not bytes: counting UTF-8 bytes would triple the estimate of CJK text.

mod bpe;
mod cache;
mod calibrator;
mod meter;

pub use bpe::{BPE_MESSAGE_OVERHEAD, Cl100k, O200k};
pub use cache::MessageTokens;
pub use calibrator::Calibrator;
pub use meter::{Meter, UnknownMeter};

use crate::model::{Block, Message};
use serde::{Deserialize, Serialize};

/// Characters an image stands for in the chars/4 estimators: pi counts each image
/// as 4,800 chars ≈ 1,200 tokens (pi-mono `compaction.ts` `estimateTokens`). OpenClaw's
/// pruner uses 8,000 chars ([`OPENCLAW_IMAGE_CHARS`]); we follow pi because the
/// `calibrated` estimator is pi's hybrid and both should agree.
pub const IMAGE_CHARS: u64 = 4_800;
/// Tokens per image for every estimator except `per_block`: [`IMAGE_CHARS`] / 4.
/// The log keeps only the encoded size of an image, not its pixel size, so the
/// real provider cost (Anthropic ≈ w·h/750, OpenAI 85 + 170 per 512² tile) cannot be
/// computed; a flat cost per image is what the reference agents do too.
pub const IMAGE_TOKENS: u64 = IMAGE_CHARS / 4;
/// OpenClaw's per-image estimate in chars (`context-pruning/pruner.ts`), kept for
/// presets that follow OpenClaw.
pub const OPENCLAW_IMAGE_CHARS: u64 = 8_000;
/// specs/000 adds 4 tokens of "role + structural overhead" per message on top of
/// chars/4. [`Chars4`] does not (it counts like pi, and `calibrated` relies on
/// that); a preset that follows specs/000 literally adds this per message.
pub const SPEC000_MESSAGE_OVERHEAD: u64 = 4;

/// The estimator names accepted by `--estimator` and policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EstimatorKind {
    /// characters / 4 (specs/000).
    Chars4,
    /// Per-block estimate (specs/003): text, tool_use name + input, tool_result text.
    PerBlock,
    /// Real o200k_base BPE.
    O200k,
    /// Real cl100k_base BPE.
    Cl100k,
    /// Hybrid: last recorded usage + chars/4 of what arrived since (specs/002, pi).
    Calibrated,
}

impl EstimatorKind {
    pub const ALL: [EstimatorKind; 5] = [
        EstimatorKind::Chars4,
        EstimatorKind::PerBlock,
        EstimatorKind::O200k,
        EstimatorKind::Cl100k,
        EstimatorKind::Calibrated,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EstimatorKind::Chars4 => "chars4",
            EstimatorKind::PerBlock => "per_block",
            EstimatorKind::O200k => "o200k",
            EstimatorKind::Cl100k => "cl100k",
            EstimatorKind::Calibrated => "calibrated",
        }
    }

    /// The estimator whose per-message counts this kind uses (`calibrated` counts
    /// messages with chars/4 and calibrates the sum, see [`Calibrator`]).
    pub fn message_counter(self) -> EstimatorKind {
        match self {
            EstimatorKind::Calibrated => EstimatorKind::Chars4,
            k => k,
        }
    }
}

impl std::fmt::Display for EstimatorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An estimator name that is not one of [`EstimatorKind::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown estimator `{0}` (expected one of: chars4, per_block, o200k, cl100k, calibrated)")]
pub struct UnknownEstimator(pub String);

impl std::str::FromStr for EstimatorKind {
    type Err = UnknownEstimator;

    /// Accepts the canonical names, `-` for `_`, any case, and the tiktoken
    /// encoding names (`o200k_base`, `cl100k_base`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        let kind = match norm.as_str() {
            "chars4" | "chars_4" | "chars/4" => EstimatorKind::Chars4,
            "per_block" | "perblock" => EstimatorKind::PerBlock,
            "o200k" | "o200k_base" => EstimatorKind::O200k,
            "cl100k" | "cl100k_base" => EstimatorKind::Cl100k,
            "calibrated" | "hybrid" => EstimatorKind::Calibrated,
            _ => return Err(UnknownEstimator(s.to_string())),
        };
        Ok(kind)
    }
}

/// Counts tokens of messages. Implementations are pure and thread-safe.
pub trait Estimator: Send + Sync {
    fn kind(&self) -> EstimatorKind;
    /// Tokens of a piece of text.
    fn text_tokens(&self, text: &str) -> u64;
    /// When [`Estimator::text_tokens`] of every text is a function of its
    /// [`char_count`] alone (the chars/4 estimators), that function's value
    /// for `chars`: a caller that knows the size of a text it has not built
    /// yet need not build it to count it. `None` (the default): count the text.
    fn tokens_of_chars(&self, chars: u64) -> Option<u64> {
        let _ = chars;
        None
    }
    /// Whether [`Estimator::text_tokens`] adds up over [`line_segments`]:
    /// the count of a text is the sum of the counts of its segments. True of
    /// the BPE estimators, whose pre-tokenizers never carry a piece across a
    /// newline into a next character that is neither whitespace nor `/`;
    /// false (the default) of chars/4, which rounds the whole. A caller that
    /// counts many texts made of the same lines ([`SegmentCounter`]) then
    /// counts each line once.
    fn adds_up_over_lines(&self) -> bool {
        false
    }
    /// Tokens of one message as it would be sent. Not always the sum of
    /// [`Estimator::block_tokens`]: chars/4 rounds per message, BPE adds a
    /// per-message overhead.
    fn message_tokens(&self, m: &Message) -> u64 {
        m.blocks.iter().map(|b| self.block_tokens(b)).sum()
    }
    fn block_tokens(&self, b: &Block) -> u64;
    /// Tokens of a list of messages (each counted with [`Estimator::message_tokens`]).
    fn messages_tokens(&self, ms: &[Message]) -> u64 {
        ms.iter().map(|m| self.message_tokens(m)).sum()
    }
}

static CHARS4: Chars4 = Chars4;
static PER_BLOCK: PerBlock = PerBlock;
static O200K: O200k = O200k;
static CL100K: Cl100k = Cl100k;
static CALIBRATED: Calibrated = Calibrated;

/// The estimator of a kind. All are stateless statics; the BPE vocabularies are
/// loaded on first use only.
pub fn estimator(kind: EstimatorKind) -> &'static dyn Estimator {
    match kind {
        EstimatorKind::Chars4 => &CHARS4,
        EstimatorKind::PerBlock => &PER_BLOCK,
        EstimatorKind::O200k => &O200K,
        EstimatorKind::Cl100k => &CL100K,
        EstimatorKind::Calibrated => &CALIBRATED,
    }
}

/// The segments of a text, cut after each `\n` that is followed by a
/// character other than whitespace and `/`. Neither o200k's nor cl100k's
/// pre-tokenizer makes a piece that holds such a newline and the character
/// after it: the only pieces that hold a newline are runs of whitespace and a
/// punctuation run with its trailing newlines (and, in o200k, slashes). So a
/// BPE count of the text is the sum of the counts of its segments
/// ([`Estimator::adds_up_over_lines`]; a property test checks it on both
/// vocabularies).
pub fn line_segments(text: &str) -> impl Iterator<Item = &str> {
    let b = text.as_bytes();
    let mut start = 0;
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(i) = memchr::memchr(b'\n', &b[from..]).map(|i| from + i) {
            from = i + 1;
            // A cut after the newline when the next character is neither
            // whitespace nor `/`; `text[from..]` starts at a character
            // boundary, a newline being one byte.
            let next = text[from..].chars().next();
            if next.is_some_and(|c| !c.is_whitespace() && c != '/') {
                let seg = &text[start..from];
                start = from;
                return Some(seg);
            }
        }
        (start < text.len()).then(|| {
            let seg = &text[start..];
            start = text.len();
            seg
        })
    })
}

/// Counts texts that share most of their lines (a summary rebuilt with one
/// line more or less, try after try): with an estimator that
/// [adds up over lines](Estimator::adds_up_over_lines), each segment is
/// counted once and remembered; with any other, each text is counted whole.
pub struct SegmentCounter<'e> {
    est: &'e dyn Estimator,
    memo: Option<foldhash::HashMap<Box<str>, u64>>,
}

impl<'e> SegmentCounter<'e> {
    pub fn new(est: &'e dyn Estimator) -> SegmentCounter<'e> {
        SegmentCounter { est, memo: est.adds_up_over_lines().then(Default::default) }
    }

    /// What `est.text_tokens(text)` returns.
    pub fn count(&mut self, text: &str) -> u64 {
        let Some(memo) = &mut self.memo else { return self.est.text_tokens(text) };
        let mut n = 0u64;
        for seg in line_segments(text) {
            n += match memo.get(seg) {
                Some(&k) => k,
                None => {
                    let k = self.est.text_tokens(seg);
                    memo.insert(seg.into(), k);
                    k
                }
            };
        }
        n
    }
}

/// An ASCII whitespace character, as `char::is_whitespace` and the
/// tokenizers' `\s` have them (with the vertical tab, which
/// `u8::is_ascii_whitespace` leaves out).
pub(crate) const fn ascii_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

/// Number of Unicode scalar values in a string.
pub fn char_count(s: &str) -> u64 {
    // The standard library counts a word of bytes at a time; the byte filter it
    // replaced cost several instructions per byte of every message.
    s.chars().count() as u64
}

/// Characters of the compact JSON serialization of a value; a bare string counts
/// its own characters (no quotes), like [`crate::model::json_len`] does for bytes.
///
/// Summed over the value rather than serialized into a counter: serde_json
/// writes a tool input (a file's whole content, say) in many small pieces,
/// escaping as it goes, and counting each piece's bytes was 1 % of a chars4
/// replay.
pub fn json_chars(v: &serde_json::Value) -> u64 {
    match v {
        serde_json::Value::String(s) => char_count(s),
        _ => value_chars(v),
    }
}

/// [`json_chars`] of any value, a string with its quotes and escapes.
fn value_chars(v: &serde_json::Value) -> u64 {
    use serde_json::Value;
    // Separators: one `,` between items (and a `:` per entry).
    let commas = |n: usize| n.saturating_sub(1) as u64;
    match v {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        // As serde_json writes it (itoa, ryu): ASCII, so bytes are chars.
        Value::Number(_) => crate::model::json_len(v) as u64,
        Value::String(s) => string_chars(s),
        Value::Array(a) => 2 + commas(a.len()) + a.iter().map(value_chars).sum::<u64>(),
        Value::Object(o) => {
            2 + commas(o.len()) + o.iter().map(|(k, v)| string_chars(k) + 1 + value_chars(v)).sum::<u64>()
        }
    }
}

/// Characters of a JSON string as serde_json writes it: its quotes, its
/// characters, one more for each `"`, `\` and control character it escapes
/// in two (`\n`), and five more for each control character it writes as
/// `\u00XX`.
fn string_chars(s: &str) -> u64 {
    let extra = |x: &u8| -> u64 {
        match x {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0A | 0x0C | 0x0D => 1,
            0x00..=0x1F => 5,
            _ => 0,
        }
    };
    // Eight bytes at a time: most words of a text hold nothing to escape.
    let mut chunks = s.as_bytes().chunks_exact(8);
    let mut escaped: u64 = 0;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        if crate::model::json_escape_mask(u64::from_le_bytes(w)) != 0 {
            escaped += c.iter().map(extra).sum::<u64>();
        }
    }
    escaped += chunks.remainder().iter().map(extra).sum::<u64>();
    2 + char_count(s) + escaped
}

/// The text a tool call puts in context: its input as compact JSON (a bare string
/// input as is). Allocates; used by the BPE counters, which need the text itself.
pub fn tool_input_text(input: &serde_json::Value) -> String {
    match input {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// Characters a block stands for in the chars/4 estimators.
///
/// Thinking counts its text only: `opaque_len` is a signature or encrypted
/// reasoning blob. Providers verify or decrypt it server-side; it is not re-read as
/// prompt text (Anthropic even drops earlier turns' thinking from the context
/// window), so counting base64 length / 4 would grossly overstate the context.
/// For the same reason an unknown block's encoded images and documents
/// ([`crate::model::is_media_payload`]) count as images.
pub fn chars4_block_chars(b: &Block) -> u64 {
    match b {
        Block::Text { text } => char_count(text),
        Block::Thinking { text, .. } => char_count(text),
        Block::ToolUse { name, input, .. } => char_count(name) + json_chars(input),
        Block::ToolResult { content, .. } => content.iter().map(chars4_block_chars).sum(),
        Block::Image { .. } => IMAGE_CHARS,
        // An encoded image or document inside counts as one image.
        Block::Other { raw } => {
            let (text, media) = crate::model::split_media(raw);
            json_chars(&text) + media * IMAGE_CHARS
        }
    }
}

/// characters / 4, rounded up, per message (specs/000's heuristic; rounding and
/// tool-call text as pi's `estimateTokens`: tool call = name + JSON arguments,
/// image = [`IMAGE_CHARS`]). No per-message overhead, see [`SPEC000_MESSAGE_OVERHEAD`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Chars4;

impl Estimator for Chars4 {
    fn kind(&self) -> EstimatorKind {
        EstimatorKind::Chars4
    }
    fn text_tokens(&self, text: &str) -> u64 {
        char_count(text).div_ceil(4)
    }
    fn tokens_of_chars(&self, chars: u64) -> Option<u64> {
        Some(chars.div_ceil(4))
    }
    fn message_tokens(&self, m: &Message) -> u64 {
        m.blocks.iter().map(chars4_block_chars).sum::<u64>().div_ceil(4)
    }
    fn block_tokens(&self, b: &Block) -> u64 {
        chars4_block_chars(b).div_ceil(4)
    }
}

/// Characters a block stands for in specs/003's table, exactly: `TextContent`
/// text, `ToolUseContent` name + input JSON, `ToolResultContent` the sum of its
/// nested *text* blocks. Every other block kind (thinking, images, images inside
/// tool results, unknown blocks) is not in the table and counts 0.
pub fn per_block_chars(b: &Block) -> u64 {
    match b {
        Block::Text { text } => char_count(text),
        Block::ToolUse { name, input, .. } => char_count(name) + json_chars(input),
        Block::ToolResult { content, .. } => content
            .iter()
            .map(|c| match c {
                Block::Text { text } => char_count(text),
                _ => 0,
            })
            .sum(),
        Block::Thinking { .. } | Block::Image { .. } | Block::Other { .. } => 0,
    }
}

/// specs/003 (`SummarizeCompactionStrategy`): characters per block as in its table,
/// total / 4 with integer division (C# `int / int`). The spec divides the
/// conversation total; we divide per message so counts can be cached per message
/// (the sum differs by less than one token per message).
#[derive(Debug, Clone, Copy, Default)]
pub struct PerBlock;

impl Estimator for PerBlock {
    fn kind(&self) -> EstimatorKind {
        EstimatorKind::PerBlock
    }
    fn text_tokens(&self, text: &str) -> u64 {
        char_count(text) / 4
    }
    fn tokens_of_chars(&self, chars: u64) -> Option<u64> {
        Some(chars / 4)
    }
    fn message_tokens(&self, m: &Message) -> u64 {
        m.blocks.iter().map(per_block_chars).sum::<u64>() / 4
    }
    fn block_tokens(&self, b: &Block) -> u64 {
        per_block_chars(b) / 4
    }
}

/// specs/002's hybrid estimator. Per message it is [`Chars4`] (the "heuristic for
/// messages added since"); the calibration itself needs the conversation's recorded
/// usage and is done by [`Calibrator`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Calibrated;

impl Estimator for Calibrated {
    fn kind(&self) -> EstimatorKind {
        EstimatorKind::Calibrated
    }
    fn text_tokens(&self, text: &str) -> u64 {
        Chars4.text_tokens(text)
    }
    fn tokens_of_chars(&self, chars: u64) -> Option<u64> {
        Chars4.tokens_of_chars(chars)
    }
    fn message_tokens(&self, m: &Message) -> u64 {
        Chars4.message_tokens(m)
    }
    fn block_tokens(&self, b: &Block) -> u64 {
        Chars4.block_tokens(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Origin, Role};
    use proptest::prelude::*;
    use serde_json::json;

    fn msg(blocks: Vec<Block>) -> Message {
        Message::new(Role::Assistant, Origin::Model, blocks)
    }

    #[test]
    fn parse_names() {
        for k in EstimatorKind::ALL {
            assert_eq!(k.name().parse::<EstimatorKind>(), Ok(k));
            assert_eq!(estimator(k).kind(), k);
            // The serde name is the CLI name.
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{}\"", k.name()));
        }
        assert_eq!("per-block".parse::<EstimatorKind>(), Ok(EstimatorKind::PerBlock));
        assert_eq!("O200K_BASE".parse::<EstimatorKind>(), Ok(EstimatorKind::O200k));
        assert_eq!("cl100k_base".parse::<EstimatorKind>(), Ok(EstimatorKind::Cl100k));
        let err = "gpt2".parse::<EstimatorKind>().unwrap_err();
        assert!(err.to_string().contains("gpt2") && err.to_string().contains("per_block"));
    }

    #[test]
    fn line_segments_cut_only_before_a_character_that_starts_a_piece() {
        fn cut(t: &str) -> Vec<&str> {
            line_segments(t).collect()
        }
        assert_eq!(cut("a\nb\n- c"), ["a\n", "b\n", "- c"]);
        // Not before whitespace, a newline or a slash: a piece may go on there.
        assert_eq!(cut("a\n b\n\nc\n/d\n\u{a0}e"), ["a\n b\n\n", "c\n/d\n\u{a0}e"]);
        assert_eq!(cut("a\n"), ["a\n"]);
        assert_eq!(cut("\nb"), ["\n", "b"]);
        assert!(cut("").is_empty());
        // Multi-byte characters on either side of a cut.
        assert_eq!(cut("é\nü\n"), ["é\n", "ü\n"]);
    }

    #[test]
    fn chars4_counts_whole_texts_in_a_segment_counter() {
        // chars/4 rounds the whole: "a\n" and "b" are a token each, "a\nb" is
        // one. It must not claim to add up over lines.
        assert!(!Chars4.adds_up_over_lines() && !PerBlock.adds_up_over_lines());
        let mut counter = SegmentCounter::new(&Chars4);
        assert_eq!(counter.count("a\nb"), 1);
        assert_eq!(Chars4.text_tokens("a\n") + Chars4.text_tokens("b"), 2);
    }

    #[test]
    fn chars4_exact() {
        let e = Chars4;
        assert_eq!(e.text_tokens(""), 0);
        assert_eq!(e.text_tokens("abcd"), 1);
        assert_eq!(e.text_tokens("abcde"), 2);
        // Characters, not bytes: 4 × 'é' (8 bytes) is 4 chars → 1 token.
        assert_eq!(e.text_tokens("éééé"), 1);
        // Tool call: name (4) + {"a":1} (7) = 11 chars → 3 tokens.
        let tu = Block::ToolUse { id: "t1".into(), name: "Read".into(), input: json!({"a": 1}) };
        assert_eq!(e.block_tokens(&tu), 3);
        // A string input counts without quotes: 4 + 5 = 9 → 3.
        let tu_s = Block::ToolUse { id: "t2".into(), name: "Bash".into(), input: json!("ls -l") };
        assert_eq!(e.block_tokens(&tu_s), 3);
        // Thinking: text only, never the opaque signature.
        let th = Block::Thinking { text: String::new(), opaque_len: 4000 };
        assert_eq!(e.block_tokens(&th), 0);
        let th2 = Block::Thinking { text: "hmm?".into(), opaque_len: 4000 };
        assert_eq!(e.block_tokens(&th2), 1);
        // Image: 4,800 chars = 1,200 tokens, also inside a tool result.
        let img = Block::Image { media_type: "image/png".into(), bytes: 123_456 };
        assert_eq!(e.block_tokens(&img), 1200);
        let tr = Block::ToolResult {
            tool_use_id: "t1".into(),
            content: vec![Block::text("0123456789"), img.clone()],
            is_error: None,
        };
        assert_eq!(e.block_tokens(&tr), (10 + 4800u64).div_ceil(4));
        // Message: rounding is per message, not per block: 1 + 1 + 1 chars → 1 token.
        let m = msg(vec![Block::text("a"), Block::text("b"), Block::text("c")]);
        assert_eq!(e.message_tokens(&m), 1);
        // 5 + 11 + 0 + 4800 = 4816 chars → 1204.
        let m2 = msg(vec![Block::text("hello"), tu, th, img]);
        assert_eq!(e.message_tokens(&m2), 1204);
        assert_eq!(e.messages_tokens(&[m, m2]), 1205);
        // Other blocks count their raw JSON: {"x":true} = 10 chars → 3.
        assert_eq!(e.block_tokens(&Block::Other { raw: json!({"x": true}) }), 3);
    }

    /// An unknown block that carries an encoded image or PDF (Codex's
    /// `image_generation_call`, a document block) counts it as one image,
    /// not as base64 text, in every estimator that counts unknown blocks.
    #[test]
    fn an_encoded_payload_in_an_unknown_block_counts_as_an_image() {
        let payload = "QUJD".repeat(50_000); // 200,000 base64 characters
        let with = |data: &str| Block::Other {
            raw: json!({"type": "image_generation_call", "revised_prompt": "a cat", "result": data}),
        };
        let text_part =
            Block::Other { raw: json!({"type": "image_generation_call", "revised_prompt": "a cat", "result": ""}) };
        for est in [&Chars4 as &dyn Estimator, &Calibrated, &O200k] {
            let media = est.block_tokens(&with(&payload));
            assert_eq!(media, est.block_tokens(&text_part) + IMAGE_TOKENS, "{:?}", est.kind());
            // A data URI, too; a short or spaced string stays text.
            let uri = format!("data:application/pdf;base64,{payload}");
            assert_eq!(est.block_tokens(&with(&uri)), media, "{:?}", est.kind());
            let prose = "a cat ".repeat(400);
            assert!(est.block_tokens(&with(&prose)) > est.block_tokens(&text_part) + 100, "{:?}", est.kind());
        }
        assert_eq!(with(&payload).text_chars(), text_part.text_chars());
    }

    #[test]
    fn per_block_exact() {
        let e = PerBlock;
        assert_eq!(e.text_tokens("abcdefg"), 1); // floor(7/4)
        let tu = Block::ToolUse { id: "t1".into(), name: "Edit".into(), input: json!({"path": "a.rs"}) };
        // 4 + {"path":"a.rs"} (15) = 19 → 4.
        assert_eq!(e.block_tokens(&tu), 4);
        // Tool result: nested text only; the image inside counts 0.
        let tr = Block::ToolResult {
            tool_use_id: "t1".into(),
            content: vec![
                Block::text("0123456789"),
                Block::Image { media_type: "image/png".into(), bytes: 999 },
                Block::text("ab"),
            ],
            is_error: Some(false),
        };
        assert_eq!(e.block_tokens(&tr), 3); // 12 / 4
        // Not in specs/003's table: thinking, images, other.
        assert_eq!(e.block_tokens(&Block::Thinking { text: "long thought".into(), opaque_len: 9 }), 0);
        assert_eq!(e.block_tokens(&Block::Image { media_type: "image/png".into(), bytes: 999 }), 0);
        assert_eq!(e.block_tokens(&Block::Other { raw: json!({"x": 1}) }), 0);
        // Message: total chars / 4 with integer division: 3 + 19 + 12 = 34 → 8.
        let m = msg(vec![Block::text("abc"), tu, tr]);
        assert_eq!(e.message_tokens(&m), 8);
    }

    #[test]
    fn calibrated_counts_messages_like_chars4() {
        let m = msg(vec![Block::text("hello world, this is a test")]);
        assert_eq!(Calibrated.message_tokens(&m), Chars4.message_tokens(&m));
        assert_eq!(EstimatorKind::Calibrated.message_counter(), EstimatorKind::Chars4);
        assert_eq!(EstimatorKind::O200k.message_counter(), EstimatorKind::O200k);
    }

    /// JSON values with what escaping and counting can get wrong: quotes,
    /// backslashes, every control character, non-ASCII text, numbers of each
    /// kind, nesting.
    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let string = "[a\"\\\\\u{0}-\u{1f}\u{7f}é😀/ ]{0,40}";
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(serde_json::Value::from),
            string.prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::vec((string, inner), 0..6)
                    .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// The sum over the value is the count of its serialization.
        #[test]
        fn json_chars_counts_the_serialization(v in json_value()) {
            let want = match &v {
                serde_json::Value::String(s) => s.chars().count(),
                v => v.to_string().chars().count(),
            };
            prop_assert_eq!(json_chars(&v), want as u64);
        }
    }

    #[test]
    fn json_chars_counts_characters() {
        assert_eq!(json_chars(&json!({"k": "é"})), 9); // {"k":"é"}
        assert_eq!(crate::model::json_len(&json!({"k": "é"})), 10);
        assert_eq!(json_chars(&json!("abc")), 3);
        assert_eq!(tool_input_text(&json!({"a": [1, 2]})), r#"{"a":[1,2]}"#);
        assert_eq!(tool_input_text(&json!("x y")), "x y");
    }
}
