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

use super::{Estimator, EstimatorKind, IMAGE_TOKENS, tool_input_text};
use crate::model::{Block, Message};
use bpe_openai::Tokenizer;

/// Tokens of chat-format framing per message (role and separators): OpenAI's
/// "How to count tokens with tiktoken" cookbook uses `tokens_per_message = 3` for
/// current chat models. Added by [`O200k`] and [`Cl100k`] per message.
pub const BPE_MESSAGE_OVERHEAD: u64 = 3;

fn count(tok: &Tokenizer, text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    tok.count(text) as u64
}

/// Tokens of a block with a given tokenizer. Same accounting as chars/4: tool call
/// = name + compact JSON input, tool result = its content, thinking = its text
/// (not the opaque payload), image = [`IMAGE_TOKENS`], unknown block = its raw JSON.
fn block_tokens(tok: &Tokenizer, b: &Block) -> u64 {
    match b {
        Block::Text { text } => count(tok, text),
        Block::Thinking { text, .. } => count(tok, text),
        Block::ToolUse { name, input, .. } => count(tok, name) + count(tok, &tool_input_text(input)),
        Block::ToolResult { content, .. } => content.iter().map(|c| block_tokens(tok, c)).sum(),
        Block::Image { .. } => IMAGE_TOKENS,
        Block::Other { raw } => count(tok, &tool_input_text(raw)),
    }
}

fn message_tokens(tok: &Tokenizer, m: &Message) -> u64 {
    BPE_MESSAGE_OVERHEAD + m.blocks.iter().map(|b| block_tokens(tok, b)).sum::<u64>()
}

/// o200k_base (GPT-4o and later).
#[derive(Debug, Clone, Copy, Default)]
pub struct O200k;

impl Estimator for O200k {
    fn kind(&self) -> EstimatorKind {
        EstimatorKind::O200k
    }
    fn text_tokens(&self, text: &str) -> u64 {
        count(bpe_openai::o200k_base(), text)
    }
    fn message_tokens(&self, m: &Message) -> u64 {
        message_tokens(bpe_openai::o200k_base(), m)
    }
    fn block_tokens(&self, b: &Block) -> u64 {
        block_tokens(bpe_openai::o200k_base(), b)
    }
}

/// cl100k_base (GPT-4, GPT-3.5).
#[derive(Debug, Clone, Copy, Default)]
pub struct Cl100k;

impl Estimator for Cl100k {
    fn kind(&self) -> EstimatorKind {
        EstimatorKind::Cl100k
    }
    fn text_tokens(&self, text: &str) -> u64 {
        count(bpe_openai::cl100k_base(), text)
    }
    fn message_tokens(&self, m: &Message) -> u64 {
        message_tokens(bpe_openai::cl100k_base(), m)
    }
    fn block_tokens(&self, b: &Block) -> u64 {
        block_tokens(bpe_openai::cl100k_base(), b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Origin, Role};
    use serde_json::json;

    #[test]
    fn known_strings() {
        assert_eq!(O200k.text_tokens("hello world"), 2);
        assert_eq!(Cl100k.text_tokens("hello world"), 2);
        assert_eq!(O200k.text_tokens(""), 0);
        // tiktoken README: cl100k encodes "tiktoken is great!" as 6 tokens.
        assert_eq!(Cl100k.text_tokens("tiktoken is great!"), 6);
        // A long run of one character (base64-like blobs) stays linear and sane.
        let blob = "a".repeat(100_000);
        let n = O200k.text_tokens(&blob);
        assert!(n > 1_000 && n < 100_000, "{n}");
    }

    #[test]
    fn message_and_blocks() {
        let m = Message::new(
            Role::Assistant,
            Origin::Model,
            vec![
                Block::text("hello world"),
                Block::Thinking { text: String::new(), opaque_len: 5000 },
                Block::Image { media_type: "image/png".into(), bytes: 10 },
            ],
        );
        // 2 (text) + 0 (empty thinking) + 1200 (image) + 3 (framing).
        assert_eq!(O200k.message_tokens(&m), 2 + IMAGE_TOKENS + BPE_MESSAGE_OVERHEAD);
        let tu = Block::ToolUse { id: "x".into(), name: "hello".into(), input: json!("world") };
        // "hello" = 1, "world" = 1.
        assert_eq!(O200k.block_tokens(&tu), 2);
        assert_eq!(Cl100k.block_tokens(&tu), 2);
        let tr =
            Block::ToolResult { tool_use_id: "x".into(), content: vec![Block::text("hello world")], is_error: None };
        assert_eq!(O200k.block_tokens(&tr), 2);
    }
}
