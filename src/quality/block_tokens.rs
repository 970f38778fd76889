//! The identifier and word tokens of every block of a session but its tool
//! results, indexed by token: observation-masking views name the blocks they
//! hold instead of copying and indexing P's text again, which a `compare`
//! with several policies paid for every event (figures in docs/perf.md).
//!
//! The tokens are those a view's token text has ([`TextView::has_ident`],
//! [`TextView::has_word`]): that text is the scanned pieces of each block's
//! texts joined by newlines, and a newline ends every token (and is the edge
//! of lower-casing's context), so the tokens of the whole are the union of
//! each piece's.
//!
//! [`SessionAtoms::share_block_tokens`]: super::index::SessionAtoms::share_block_tokens
//! [`TextView::has_ident`]: super::view::TextView::has_ident
//! [`TextView::has_word`]: super::view::TextView::has_word

use super::runs::Runs;
use super::view::push_piece;
use crate::model::{Block, Message};
use crate::text::atoms as extract;
use foldhash::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// Where each token of a session's blocks (not tool results) occurs. Blocks
/// have ids in session order: message `m`'s are
/// `first_block[m]..first_block[m + 1]`.
pub(crate) struct BlockTokens {
    first_block: Vec<u32>,
    idents: Postings,
    words: Postings,
}

/// Sizes, not contents: a view that holds the index is printed whole by
/// `{:?}` (a failed assertion), and the index is a whole session's tokens.
impl std::fmt::Debug for BlockTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockTokens")
            .field("blocks", &self.first_block.last().copied().unwrap_or(0))
            .field("idents", &self.idents.ids.len())
            .field("words", &self.words.ids.len())
            .finish()
    }
}

/// One kind of token: each token's id, and for each id the blocks holding
/// it, ascending.
#[derive(Default)]
struct Postings {
    ids: HashMap<Box<str>, u32>,
    blocks: Lists,
}

/// Ascending block lists, one per token id, in one buffer: list `t` is
/// `blocks[start[t]..start[t + 1]]`.
#[derive(Default)]
struct Lists {
    start: Vec<u32>,
    blocks: Vec<u32>,
}

impl Lists {
    fn of(&self, token: u32) -> &[u32] {
        let at = |i: usize| self.start.get(i).map_or(0, |&s| s as usize);
        let t = token as usize;
        self.blocks.get(at(t)..at(t + 1)).unwrap_or_default()
    }

    /// Lists from (token, block) pairs given in ascending block order: a
    /// counting sort by token keeps each list's blocks ascending.
    fn from_pairs(pairs: &[(u32, u32)], tokens: usize) -> Lists {
        let mut start = vec![0u32; tokens + 1];
        for &(t, _) in pairs {
            start[t as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut next = start.clone();
        let mut blocks = vec![0u32; pairs.len()];
        for &(t, b) in pairs {
            let slot = &mut next[t as usize];
            blocks[*slot as usize] = b;
            *slot += 1;
        }
        Lists { start, blocks }
    }
}

/// Postings while they are read: each token's id, the block it was last seen
/// in (a block names a token once), and the (token, block) pairs.
#[derive(Default)]
struct Reading {
    ids: HashMap<Box<str>, u32>,
    last: Vec<u32>,
    pairs: Vec<(u32, u32)>,
}

impl Reading {
    fn add(&mut self, token: &str, block: u32) {
        let id = match self.ids.get(token) {
            Some(&id) => id,
            None => {
                // No wrap: there are fewer distinct tokens than bytes
                // read, which `BlockTokens::of` keeps within `u32`.
                let id = self.ids.len() as u32;
                self.ids.insert(token.into(), id);
                self.last.push(u32::MAX);
                id
            }
        };
        let last = &mut self.last[id as usize];
        if *last == block {
            return;
        }
        *last = block;
        self.pairs.push((id, block));
    }

    fn finish(self) -> Postings {
        let n = self.ids.len();
        Postings { ids: self.ids, blocks: Lists::from_pairs(&self.pairs, n) }
    }
}

impl BlockTokens {
    /// Read every block of `messages` (but tool results). `None` past `u32`
    /// ids (blocks, or 4 GB of text read): the caller then copies the text
    /// as before.
    pub(crate) fn of(messages: &[Message]) -> Option<BlockTokens> {
        let mut first_block = Vec::with_capacity(messages.len() + 1);
        let (mut idents, mut words) = (Reading::default(), Reading::default());
        let mut block = 0u32;
        let mut bytes = 0usize;
        // A block's pieces joined as a view joins them: one pass of each
        // kind per block, not per string argument of a tool call.
        let mut joined = String::new();
        for msg in messages {
            first_block.push(block);
            for b in &msg.blocks {
                if !matches!(b, Block::ToolResult { .. }) {
                    joined.clear();
                    super::event::visit_block_text(b, &mut |text| {
                        for piece in extract::pieces(text) {
                            push_piece(&mut joined, piece);
                        }
                    });
                    let lower = extract::words_text(&joined);
                    // A token is a byte at least: with the texts' bytes
                    // checked before their tokens are counted, token ids
                    // and list offsets fit in `u32`.
                    bytes = bytes.saturating_add(joined.len()).saturating_add(lower.len());
                    u32::try_from(bytes).ok()?;
                    // Identifiers of one character are never asked.
                    Runs::Ident.each(&joined, &mut |s, e| {
                        if e - s >= 2 {
                            idents.add(&joined[s..e], block);
                        }
                    });
                    Runs::Word.each(&lower, &mut |s, e| words.add(&lower[s..e], block));
                }
                block = block.checked_add(1)?;
            }
        }
        first_block.push(block);
        Some(BlockTokens { first_block, idents: idents.finish(), words: words.finish() })
    }

    /// The ids of message `m`'s blocks (empty past the end).
    pub(crate) fn blocks_of(&self, m: usize) -> Range<u32> {
        let at = |i: usize| self.first_block.get(i).copied().unwrap_or(0);
        at(m)..at(m + 1).max(at(m))
    }
}

/// Some blocks of a session, as a view holds them: the blocks in `ranges`
/// (ascending, apart) that are not tool results.
#[derive(Debug, Clone)]
pub(crate) struct BlockSelection {
    pub index: Arc<BlockTokens>,
    pub ranges: Vec<Range<u32>>,
}

impl BlockSelection {
    /// Is `token` an identifier token (a maximal run of ASCII letters,
    /// digits and `_`, at least 2 long) of a block held?
    pub(crate) fn has_ident(&self, token: &str) -> bool {
        self.holds(&self.index.idents, token)
    }

    /// Is `token` a word token of a block held, lower-cased as
    /// [`extract::words_text`] does?
    pub(crate) fn has_word(&self, token: &str) -> bool {
        self.holds(&self.index.words, token)
    }

    fn holds(&self, postings: &Postings, token: &str) -> bool {
        let Some(&id) = postings.ids.get(token) else { return false };
        let blocks = postings.blocks.of(id);
        self.ranges.iter().any(|r| any_within(blocks, r.start, r.end))
    }
}

/// Does the ascending `blocks` hold one in `lo..hi`?
fn any_within(blocks: &[u32], lo: u32, hi: u32) -> bool {
    lo < hi && blocks.get(blocks.partition_point(|&b| b < lo)).is_some_and(|&b| b < hi)
}

#[cfg(test)]
mod tests {
    use super::{BlockSelection, BlockTokens};
    use crate::model::{Block, Message, Origin, Role};
    use crate::quality::event::visit_block_text;
    use crate::quality::view::TextView;
    use proptest::prelude::*;
    use serde_json::json;
    use std::sync::Arc;

    /// Pieces of text where the token rules differ: identifier and word
    /// characters, `n't` and `n’t` (words lower-case them to `not`), letters
    /// whose lower case is longer or depends on context (`İ`, final `Σ`),
    /// separators, newlines.
    const PIECE: &str = "(ab|Ab|_|1|x2|n't|N’T|’|'|Σ|σ|İ|é|ß|\\.|/| |\n|→|😀)";

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(PIECE, 0..12).prop_map(|p| p.concat())
    }

    fn block() -> impl Strategy<Value = Block> {
        prop_oneof![
            text().prop_map(Block::text),
            text().prop_map(|text| Block::Thinking { text, opaque_len: 0 }),
            (text(), text()).prop_map(|(a, b)| Block::ToolUse {
                id: "t".into(),
                name: "Bash".into(),
                input: json!({"command": a, "args": [b, 1]}),
            }),
            text().prop_map(|t| Block::ToolResult {
                tool_use_id: "t".into(),
                content: vec![Block::text(t)],
                is_error: None
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// A view holding some messages' blocks through the index answers
        /// every identifier and word question as a view that copied those
        /// blocks' texts (tool results left out, as the index leaves them).
        #[test]
        fn a_selection_answers_as_the_copied_text(
            blocks in proptest::collection::vec(proptest::collection::vec(block(), 0..4), 0..8),
            spans in proptest::collection::vec((0usize..9, 0usize..4), 0..3),
            extra in proptest::collection::vec(text(), 0..6),
        ) {
            let msgs: Vec<Message> =
                blocks.into_iter().map(|b| Message::new(Role::Assistant, Origin::Model, b)).collect();
            let index = Arc::new(BlockTokens::of(&msgs).expect("a small session has ids"));
            // Apart, ascending message spans, as masking holds P's.
            let mut from = 0;
            let mut copied = TextView::default();
            let mut ranges = Vec::new();
            let mut needles: Vec<String> = extra;
            for (skip, len) in spans {
                let (a, b) = ((from + skip).min(msgs.len()), (from + skip + len).min(msgs.len()));
                from = b + 1;
                for m in &msgs[a..b] {
                    for block in m.blocks.iter().filter(|b| !matches!(b, Block::ToolResult { .. })) {
                        visit_block_text(block, &mut |t| copied.add_tokens(t));
                    }
                }
                if a < b {
                    ranges.push(index.blocks_of(a).start..index.blocks_of(b - 1).end);
                }
            }
            for m in &msgs {
                for block in &m.blocks {
                    visit_block_text(block, &mut |t| {
                        for w in t.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                            needles.push(w.to_string());
                            needles.push(w.to_lowercase());
                        }
                    });
                }
            }
            let mut named = TextView::default();
            named.add_blocks(BlockSelection { index, ranges });
            for n in &needles {
                prop_assert_eq!(named.has_ident(n), copied.has_ident(n), "identifier {:?}", n);
                prop_assert_eq!(named.has_word(n), copied.has_word(n), "word {:?}", n);
            }
        }
    }

    /// A message's blocks are the ids after the previous message's, and a
    /// token is held only by the blocks that name it.
    #[test]
    // One span held is a list of one range, on purpose.
    #[allow(clippy::single_range_in_vec_init)]
    fn blocks_have_ids_in_session_order() {
        let msgs = vec![
            Message::new(Role::User, Origin::Human, vec![Block::text("alpha beta")]),
            Message::new(Role::Assistant, Origin::Model, vec![Block::text("gamma"), Block::text("beta")]),
            Message::new(Role::User, Origin::Human, vec![]),
            Message::new(Role::User, Origin::Human, vec![Block::text("delta")]),
        ];
        let Some(index) = BlockTokens::of(&msgs) else { panic!("no index") };
        let ids: Vec<_> = (0..5).map(|m| index.blocks_of(m)).collect();
        assert_eq!(ids, [0..1, 1..3, 3..3, 3..4, 4..4]);
        let index = Arc::new(index);
        let held = |ranges| BlockSelection { index: index.clone(), ranges };
        assert!(held(vec![2..3]).has_word("beta") && !held(vec![2..3]).has_word("gamma"));
        assert!(held(vec![0..1, 3..4]).has_ident("delta") && !held(vec![1..2, 3..3]).has_ident("delta"));
    }
}
