//! [`SessionLens`]: the atoms of each of a session's messages, read once on first
//! need and shared by the summarizer and the metric, whatever the number of policies.

use super::{Ctx, Found, constraints, failure_line, has_nonzero_exit, normalize_cwd, scan_text, scan_tool_use};
use crate::model::{Block, Message, Origin, Role, Session};
use std::sync::OnceLock;

/// What one block of a message names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BlockAtoms {
    /// The atoms of the block, in the order the scan found them (a tool
    /// result's include the first line of a failed result, as an error).
    pub found: Vec<Found>,
    /// Constraint sentences and their keywords (text a person typed only).
    pub constraints: Vec<(String, Vec<String>)>,
    /// A tool result that failed: `is_error`, or no flag and a non-zero exit code.
    pub failed: bool,
}

/// What one message names, block by block (parallel to `Message::blocks`),
/// each block read the first time a reader asks for it: the summarizer never
/// asks for a thinking block's, the metric asks for every block's.
#[derive(Debug, Default)]
pub(crate) struct MessageAtoms {
    blocks: Box<[OnceLock<BlockAtoms>]>,
}

impl MessageAtoms {
    /// Room for the atoms of `m`'s blocks, none read yet.
    pub(crate) fn new(m: &Message) -> MessageAtoms {
        MessageAtoms { blocks: m.blocks.iter().map(|_| OnceLock::new()).collect() }
    }
}

/// A message with its atoms, read on demand (`cwd` already normalized).
#[derive(Clone, Copy)]
pub(crate) struct MessageView<'a> {
    message: &'a Message,
    atoms: &'a MessageAtoms,
    cwd: Option<&'a str>,
}

/// The atoms of a block past the end of a message: none.
static NO_ATOMS: BlockAtoms = BlockAtoms { found: Vec::new(), constraints: Vec::new(), failed: false };

impl<'a> MessageView<'a> {
    /// `message`'s atoms kept in `atoms` (made by [`MessageAtoms::new`] for it).
    pub(crate) fn new(message: &'a Message, atoms: &'a MessageAtoms, cwd: Option<&'a str>) -> MessageView<'a> {
        MessageView { message, atoms, cwd }
    }

    /// The atoms of block `bi` (read now if no one has yet).
    pub(crate) fn block(&self, bi: usize) -> &'a BlockAtoms {
        match (self.message.blocks.get(bi), self.atoms.blocks.get(bi)) {
            (Some(b), Some(slot)) => slot.get_or_init(|| read_block(self.message, b, self.cwd)),
            _ => &NO_ATOMS,
        }
    }

    /// Every block with its atoms, in order.
    pub(crate) fn blocks(self) -> impl Iterator<Item = (&'a Block, &'a BlockAtoms)> {
        self.message.blocks.iter().enumerate().map(move |(bi, b)| (b, self.block(bi)))
    }
}

/// Read one block of `m` (`cwd` already normalized, [`normalize_cwd`]).
fn read_block(m: &Message, block: &Block, cwd: Option<&str>) -> BlockAtoms {
    #[cfg(test)]
    READS_HERE.with(|n| n.set(n.get() + 1));
    let human = m.role == Role::User && m.origin == Origin::Human;
    let text_ctx = if m.origin == Origin::ToolResult { Ctx::Code } else { Ctx::Prose };
    let mut b = BlockAtoms::default();
    match block {
        Block::Text { text } => {
            scan_text(text, text_ctx, cwd, &mut b.found);
            if human {
                b.constraints = constraints(text);
            }
        }
        Block::Thinking { text, .. } => scan_text(text, Ctx::Prose, cwd, &mut b.found),
        Block::ToolUse { name, input, .. } => scan_tool_use(name, input, cwd, &mut b.found),
        Block::ToolResult { content, is_error, .. } => {
            let flagged = *is_error == Some(true);
            b.failed = flagged;
            let mut text_seen = false;
            for c in content {
                let Block::Text { text } = c else { continue };
                scan_text(text, Ctx::Code, cwd, &mut b.found);
                if flagged && !text_seen {
                    if let Some(line) = failure_line(text) {
                        b.found.push(Found::new(super::AtomKind::Error, line));
                    }
                    text_seen = true;
                }
                if is_error.is_none() && has_nonzero_exit(text) {
                    b.failed = true;
                }
            }
        }
        Block::Image { .. } | Block::Other { .. } => {}
    }
    b
}

/// The atoms of a session's messages, each message read the first time any
/// reader asks (the summarizer of any policy, or the quality pass) and kept
/// until the session is done. One per session; safe to share between threads.
pub struct SessionLens<'s> {
    messages: &'s [Message],
    /// The working directory, normalized: absolute paths under it read as relative.
    cwd: Option<String>,
    slots: Vec<OnceLock<MessageAtoms>>,
    /// Whether atoms read are kept for the next reader; a lens with one
    /// reader that keeps what it made of them ([`SessionLens::single_reader`])
    /// keeps none.
    keep: bool,
}

impl<'s> SessionLens<'s> {
    /// A lens on `messages`, paths read relative to `cwd`.
    pub fn new(messages: &'s [Message], cwd: Option<&str>) -> SessionLens<'s> {
        SessionLens {
            messages,
            cwd: cwd.and_then(normalize_cwd),
            slots: (0..messages.len()).map(|_| OnceLock::new()).collect(),
            keep: true,
        }
    }

    /// This lens for a session with one reader, which keeps what it made of
    /// each message's atoms (a replay without quality pass, one summarizer):
    /// nothing is kept here, and [`SessionLens::message`] gives `None` so the
    /// reader reads each message itself and drops its atoms once used.
    pub fn single_reader(mut self) -> SessionLens<'s> {
        self.keep = false;
        self.slots = Vec::new();
        self
    }

    /// A lens on a session's messages, with its working directory.
    pub fn of(session: &'s Session) -> SessionLens<'s> {
        SessionLens::new(&session.messages, session.meta.cwd.as_deref())
    }

    pub fn messages(&self) -> &'s [Message] {
        self.messages
    }

    /// The normalized working directory.
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// Message `i` with its atoms (each block read the first time any reader
    /// asks); `None` past the end.
    pub(crate) fn message(&self, i: usize) -> Option<MessageView<'_>> {
        if !self.keep {
            return None;
        }
        let m = self.messages.get(i)?;
        let atoms = self.slots.get(i)?.get_or_init(|| MessageAtoms::new(m));
        Some(MessageView::new(m, atoms, self.cwd.as_deref()))
    }

    /// Message `i` and its atoms, taken out of the lens (blocks no one read yet
    /// are read on demand from the returned atoms): for the last reader of a
    /// session, which drops each message's atoms once used, so they are not
    /// held next to what it builds from them. `None` past the end.
    pub(crate) fn take(&mut self, i: usize) -> Option<(&'s Message, MessageAtoms)> {
        let m = self.messages.get(i)?;
        let kept = self.slots.get_mut(i).and_then(OnceLock::take);
        Some((m, kept.unwrap_or_else(|| MessageAtoms::new(m))))
    }

    /// How many blocks were read: each at most once, whoever asked.
    pub fn blocks_read(&self) -> usize {
        self.slots.iter().filter_map(OnceLock::get).flat_map(|a| a.blocks.iter()).filter(|b| b.get().is_some()).count()
    }
}

#[cfg(test)]
thread_local! {
    /// Blocks read into atoms on this thread (`read_block`), by any reader:
    /// tests count how often a block is read.
    pub(crate) static READS_HERE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}
