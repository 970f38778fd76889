//! Planning of multi-stage summarization for inputs larger than the summarizer's
//! window, after OpenClaw's `summarizeInStages` (compaction-anchors.md §(a)):
//! split the history by token share into `parts`, summarize each part in chunks
//! that fit the window (threading the running summary through the update prompt),
//! then merge the part summaries. Messages too large for any request are left out
//! with a note.
//!
//! Everything here is pure arithmetic over per-item token estimates, so it is
//! tested without a server. Items are serialized messages (after previews), which
//! is what is actually sent; the estimate is chars/4 like the rest of compactor.
//! Unlike OpenClaw we need no tool-call pair safety: the summarizer receives a
//! text transcript, never a provider message array.

use super::config::ChunkConfig;
use std::ops::Range;

/// chars/4, rounded up.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Chunk ratio of the window: `base` unless the average item (inflated by the
/// safety margin) exceeds 10 % of the window, then smaller, down to `min`.
pub fn adaptive_chunk_ratio(tokens: &[u64], window: u64, cfg: &ChunkConfig) -> f64 {
    if tokens.is_empty() || window == 0 {
        return cfg.base_chunk_ratio;
    }
    let total: u64 = tokens.iter().sum();
    let avg_ratio = (total as f64 / tokens.len() as f64) * cfg.safety_margin / window as f64;
    if avg_ratio > 0.1 {
        let reduction = (avg_ratio * 2.0).min(cfg.base_chunk_ratio - cfg.min_chunk_ratio);
        (cfg.base_chunk_ratio - reduction).max(cfg.min_chunk_ratio)
    } else {
        cfg.base_chunk_ratio
    }
}

/// Largest chunk of transcript tokens per request: `window · ratio − overhead`.
pub fn max_chunk_tokens(tokens: &[u64], window: u64, cfg: &ChunkConfig) -> u64 {
    let ratio = adaptive_chunk_ratio(tokens, window, cfg);
    ((window as f64 * ratio) as u64).saturating_sub(cfg.overhead_tokens).max(1)
}

/// Whether one request of `input` tokens plus `completion` output fits `window`.
pub fn fits_single(input: u64, completion: u64, window: u64, cfg: &ChunkConfig) -> bool {
    input as f64 * cfg.safety_margin + completion as f64 <= window as f64
}

/// Items whose estimate (with margin) is above `oversized_share` of the window: no
/// request can carry them.
pub fn oversized(tokens: &[u64], window: u64, cfg: &ChunkConfig) -> Vec<bool> {
    let limit = window as f64 * cfg.oversized_share;
    tokens.iter().map(|&t| t as f64 * cfg.safety_margin > limit).collect()
}

/// The note that replaces an oversized item in the summary (OpenClaw's wording).
pub fn oversized_note(role: &str, tokens: u64) -> String {
    format!("[Large {role} (~{}K tokens) omitted from summary]", (tokens + 500) / 1000)
}

/// Split into at most `parts` consecutive non-empty ranges of about equal tokens.
pub fn split_by_share(tokens: &[u64], parts: usize) -> Vec<Range<usize>> {
    let parts = parts.clamp(1, tokens.len().max(1));
    if parts <= 1 || tokens.is_empty() {
        return std::iter::once(0..tokens.len()).collect();
    }
    let total: u64 = tokens.iter().sum();
    let target = total as f64 / parts as f64;
    let mut out = Vec::with_capacity(parts);
    let (mut start, mut current) = (0usize, 0u64);
    for (i, &t) in tokens.iter().enumerate() {
        if out.len() < parts - 1 && i > start && (current + t) as f64 > target {
            out.push(start..i);
            start = i;
            current = 0;
        }
        current += t;
    }
    out.push(start..tokens.len());
    out
}

/// Consecutive ranges of at most `max` tokens each; an item larger than `max` is a
/// range of its own.
pub fn chunk_by_max(tokens: &[u64], max: u64) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut current) = (0usize, 0u64);
    for (i, &t) in tokens.iter().enumerate() {
        if i > start && current + t > max {
            out.push(start..i);
            start = i;
            current = 0;
        }
        current += t;
    }
    if start < tokens.len() {
        out.push(start..tokens.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn openclaw_constants_are_the_defaults() {
        let c = ChunkConfig::default();
        assert_eq!((c.base_chunk_ratio, c.min_chunk_ratio, c.safety_margin), (0.4, 0.15, 1.2));
        assert_eq!((c.overhead_tokens, c.parts, c.min_messages_for_split), (4096, 2, 4));
    }

    #[test]
    fn ratio_adapts_to_large_messages() {
        let c = ChunkConfig::default();
        assert_eq!(adaptive_chunk_ratio(&[100; 10], 100_000, &c), 0.4);
        // avg 20K of 100K window → 0.24 > 0.1 → reduction min(0.48, 0.25) → 0.15.
        assert!((adaptive_chunk_ratio(&[20_000; 4], 100_000, &c) - 0.15).abs() < 1e-9);
        // avg 10K → 0.12 → reduction 0.24 → 0.16.
        assert!((adaptive_chunk_ratio(&[10_000; 4], 100_000, &c) - 0.16).abs() < 1e-9);
        assert_eq!(max_chunk_tokens(&[100; 10], 100_000, &c), 40_000 - 4096);
        assert_eq!(max_chunk_tokens(&[100; 10], 1_000, &c), 1);
    }

    #[test]
    fn splits_by_share() {
        assert_eq!(split_by_share(&[10, 10, 10, 10], 2), vec![0..2, 2..4]);
        assert_eq!(split_by_share(&[30, 1, 1, 1], 2), vec![0..1, 1..4]);
        assert_eq!(split_by_share(&[5], 2).len(), 1);
        assert_eq!(split_by_share(&[5], 2)[0], 0..1);
        assert_eq!(split_by_share(&[], 2)[0], 0..0);
    }

    #[test]
    fn chunks_by_max() {
        assert_eq!(chunk_by_max(&[3, 3, 3, 10, 1], 6), vec![0..2, 2..3, 3..4, 4..5]);
        assert!(chunk_by_max(&[], 6).is_empty());
    }

    #[test]
    fn oversized_items() {
        let c = ChunkConfig::default();
        assert_eq!(oversized(&[100, 5_000], 8_000, &c), vec![false, true]);
        assert_eq!(oversized_note("user", 12_345), "[Large user (~12K tokens) omitted from summary]");
    }

    proptest! {
        #[test]
        fn ranges_cover_everything_in_order(tokens in proptest::collection::vec(0u64..5000, 0..60), parts in 1usize..5, max in 1u64..8000) {
            for ranges in [split_by_share(&tokens, parts), chunk_by_max(&tokens, max)] {
                let mut next = 0;
                for r in &ranges {
                    prop_assert_eq!(r.start, next);
                    prop_assert!(r.end > r.start || tokens.is_empty());
                    next = r.end;
                }
                prop_assert_eq!(next, tokens.len());
            }
            prop_assert!(split_by_share(&tokens, parts).len() <= parts.max(1));
            for r in chunk_by_max(&tokens, max) {
                let sum: u64 = tokens[r.clone()].iter().sum();
                prop_assert!(sum <= max || r.len() == 1);
            }
        }
    }
}
