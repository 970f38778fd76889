//! Token estimators (DESIGN.md §4 `estimator`): one trait, several
//! implementations. Each message is counted once by the caller and cached.

use crate::model::{Block, Message};
use serde::{Deserialize, Serialize};

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

/// Counts tokens of messages. Implementations are pure and thread-safe.
pub trait Estimator: Send + Sync {
    fn kind(&self) -> EstimatorKind;
    /// Tokens of a piece of text.
    fn text_tokens(&self, text: &str) -> u64;
    /// Tokens of one message as it would be sent.
    fn message_tokens(&self, m: &Message) -> u64 {
        m.blocks.iter().map(|b| self.block_tokens(b)).sum()
    }
    fn block_tokens(&self, b: &Block) -> u64;
}

/// characters / 4, rounded up, per message (specs/000).
pub struct Chars4;

impl Estimator for Chars4 {
    fn kind(&self) -> EstimatorKind {
        EstimatorKind::Chars4
    }
    fn text_tokens(&self, text: &str) -> u64 {
        (text.chars().count() as u64).div_ceil(4)
    }
    fn message_tokens(&self, m: &Message) -> u64 {
        (m.blocks.iter().map(Block::text_chars).sum::<usize>() as u64).div_ceil(4)
    }
    fn block_tokens(&self, b: &Block) -> u64 {
        (b.text_chars() as u64).div_ceil(4)
    }
}
