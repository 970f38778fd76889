//! Per-message token counts, computed once per (session, estimator) and shared by
//! everything downstream. Replaying a session asks for the size of overlapping
//! prefixes at every call; recounting them would be O(n²) BPE work, so counts are
//! cached and range sums come from prefix sums in O(1).

use super::Estimator;
use crate::model::Message;
use rayon::prelude::*;
use std::ops::Range;

/// Below this many messages per rayon task the split is not worth it: chars/4 of
/// one message costs well under a microsecond.
const MIN_MESSAGES_PER_TASK: usize = 32;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageTokens {
    counts: Vec<u64>,
    /// `prefix[i]` = Σ `counts[..i]`; one longer than `counts`.
    prefix: Vec<u64>,
}

impl MessageTokens {
    /// Count every message once with `estimator`. Parallel (rayon) over messages:
    /// a long session is otherwise one sequential BPE job while other cores idle.
    pub fn new(messages: &[Message], estimator: &dyn Estimator) -> MessageTokens {
        let counts: Vec<u64> =
            messages.par_iter().with_min_len(MIN_MESSAGES_PER_TASK).map(|m| estimator.message_tokens(m)).collect();
        MessageTokens::from_counts(counts)
    }

    /// Wrap counts computed elsewhere (e.g. in one pass that also classifies blocks).
    pub fn from_counts(counts: Vec<u64>) -> MessageTokens {
        let mut prefix = Vec::with_capacity(counts.len() + 1);
        let mut acc = 0u64;
        prefix.push(0);
        for &c in &counts {
            acc += c;
            prefix.push(acc);
        }
        MessageTokens { counts, prefix }
    }

    /// Tokens of message `i` (0 when out of range).
    pub fn get(&self, i: usize) -> u64 {
        self.counts.get(i).copied().unwrap_or(0)
    }

    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Σ tokens of `messages[range]`, in O(1). The range is clamped to the session.
    pub fn sum(&self, range: Range<usize>) -> u64 {
        let end = range.end.min(self.counts.len());
        let start = range.start.min(end);
        self.prefix[end] - self.prefix[start]
    }

    /// Σ tokens of all messages.
    pub fn total(&self) -> u64 {
        self.prefix[self.counts.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Block, Origin, Role};
    use crate::tokens::{Chars4, O200k};

    #[test]
    fn counts_once_and_sums_ranges() {
        let msgs: Vec<Message> =
            (0..100).map(|i| Message::new(Role::User, Origin::Human, vec![Block::text("x".repeat(i * 4))])).collect();
        let mt = MessageTokens::new(&msgs, &Chars4);
        assert_eq!(mt.len(), 100);
        assert_eq!(mt.get(7), 7);
        assert_eq!(mt.get(1000), 0);
        assert_eq!(mt.sum(0..100), (0..100).sum::<u64>());
        assert_eq!(mt.total(), mt.sum(0..100));
        assert_eq!(mt.sum(10..13), 10 + 11 + 12);
        assert_eq!(mt.sum(5..5), 0);
        assert_eq!(mt.sum(98..500), 98 + 99);
        assert_eq!(mt.sum(200..300), 0);
        // Same counts as counting one by one, in order, whatever the thread count.
        let bpe = MessageTokens::new(&msgs, &O200k);
        let one_by_one: Vec<u64> = msgs.iter().map(|m| O200k.message_tokens(m)).collect();
        assert_eq!(bpe.counts(), one_by_one.as_slice());
        let empty = MessageTokens::new(&[], &Chars4);
        assert!(empty.is_empty());
        assert_eq!(empty.total(), 0);
        assert_eq!(empty.sum(0..3), 0);
    }
}
