//! [`SessionAtoms`]: every message of a session read once into atoms, with an
//! index of where each atom occurs, so that evaluating many compaction points is
//! a matter of lookups and binary searches rather than rescans.

use super::block_tokens::BlockTokens;
use super::view::TextView;
use super::{AtomKind, CLASSES};
use crate::model::{Block, Message, Origin, Role, Session};
use crate::text::atoms::{self as extract, Found, MessageView, SessionLens};
use crate::tokens::{Estimator, EstimatorKind};
use foldhash::{HashMap, HashMapExt as _};
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

/// The atoms naming one thing ([`SessionAtoms::family`]): most atoms are
/// alone, and an event asks for the family of each of its candidates.
pub(crate) enum Family {
    One([u32; 1]),
    Many(Vec<u32>),
}

impl std::ops::Deref for Family {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        match self {
            Family::One(id) => id,
            Family::Many(ids) => ids,
        }
    }
}

/// `prefix[m]` = the sum of the first `m` counts.
fn running_sums(counts: impl Iterator<Item = u64>) -> Arc<[u64]> {
    let mut sum = 0u64;
    std::iter::once(0)
        .chain(counts.map(|c| {
            sum = sum.saturating_add(c);
            sum
        }))
        .collect()
}

/// Flags of one occurrence.
pub(crate) mod flag {
    /// Created by a rule of quality.md §c.2 (not a symbol-shaped word in prose).
    pub const STRONG: u8 = 1;
    /// In an assistant message: the agent used it.
    pub const USE: u8 = 2;
    /// In a tool-call argument.
    pub const ARG: u8 = 4;
    /// A path argument of an edit/write/patch tool.
    pub const MODIFIED: u8 = 8;
    /// In a tool result.
    pub const TOOL_RESULT: u8 = 16;
    /// A command whose tool result failed (is_error or non-zero exit code).
    pub const FAILED: u8 = 32;
    /// In text a person typed.
    pub const HUMAN: u8 = 64;
}

/// Most distinct atoms kept per message: bounds memory on hostile input.
const MAX_ENTRIES_PER_MESSAGE: usize = 20_000;

#[derive(Debug, Clone)]
pub(crate) struct AtomDef {
    pub class: usize,
    pub key: Arc<str>,
    /// Display value when it differs from the key (the sentence of a constraint).
    pub display: Option<Box<str>>,
    /// Keywords of a constraint.
    pub keywords: Box<[String]>,
}

impl AtomDef {
    pub fn value(&self) -> &str {
        self.display.as_deref().unwrap_or(&self.key)
    }
}

/// One atom in one block of one message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub atom: u32,
    pub block: u32,
    pub flags: u8,
}

/// One occurrence of an atom, in session order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Occ {
    pub msg: u32,
    pub block: u32,
    pub flags: u8,
}

/// The atoms of a whole session, extracted once and indexed by message and by
/// atom. Build it once per session and evaluate every compaction point of every
/// policy against it.
pub struct SessionAtoms<'a> {
    pub(crate) messages: &'a [Message],
    pub(crate) cwd: Option<String>,
    pub(crate) defs: Vec<AtomDef>,
    lookup: Vec<HashMap<Arc<str>, u32>>,
    /// Hex ids by their first 7 digits (short and full SHAs of one commit).
    hex7: HashMap<String, Vec<u32>>,
    pub(crate) entries: Vec<Entry>,
    /// `entries[msg_start[m]..msg_start[m + 1]]` are message `m`'s, sorted by
    /// (block, atom).
    msg_start: Vec<usize>,
    pub(crate) occ: Vec<Vec<Occ>>,
    /// Indices of assistant messages, ascending (turn counting).
    pub(crate) assistants: Vec<usize>,
    /// Indices of messages a person typed, ascending (the pending ask).
    pub(crate) humans: Vec<usize>,
    pub(crate) system: TextView,
    /// Running sums of the messages' tokens per estimator (`prefix[m]` = the
    /// tokens of messages `0..m`), built at the first event that needs them.
    token_prefix: Mutex<Vec<(EstimatorKind, Arc<[u64]>)>>,
    /// Whether masking views name their blocks from `block_tokens` (see
    /// [`SessionAtoms::share_block_tokens`]).
    share_block_tokens: bool,
    /// The tokens of every block but the tool results, read at the first
    /// masking view ([`SessionAtoms::block_tokens`]).
    block_tokens: OnceLock<Option<Arc<BlockTokens>>>,
    /// The session's path, error and hex atoms by what an event's grounding
    /// asks of them, built at the first event ([`SessionAtoms::ground_keys`]).
    ground_keys: OnceLock<GroundKeys>,
    /// [`Block::text_chars`] of every block, message after message, and the
    /// offset of each message's first ([`SessionAtoms::block_chars`]).
    block_chars: OnceLock<(Vec<usize>, Vec<u64>)>,
}

/// The atoms a summary atom can be grounded in by spelling rather than by
/// id (`PreparedEvent::grounded`): paths by basename and by stem, errors,
/// hex ids; and commands, which a masking view's partial command match
/// scans. An event asks which of them are in its P ∪ T, a set of ids;
/// building its own maps of those names, from every entry of P ∪ T, was a
/// third of preparing an event.
#[derive(Debug, Default)]
pub(crate) struct GroundKeys {
    /// Path atoms by basename.
    by_basename: HashMap<Box<str>, Vec<u32>>,
    /// Path atoms by stem (the basename up to its first `.`).
    by_stem: HashMap<Box<str>, Vec<u32>>,
    /// Error atoms.
    pub errors: Vec<u32>,
    /// Hex id atoms.
    pub hex: Vec<u32>,
    /// Command atoms.
    pub commands: Vec<u32>,
}

impl GroundKeys {
    fn of(defs: &[AtomDef]) -> GroundKeys {
        let mut keys = GroundKeys::default();
        for (id, def) in defs.iter().enumerate() {
            // Ids come from `intern`, which bounds them by `u32`.
            let id = u32::try_from(id).unwrap_or(u32::MAX);
            match def.class {
                0 => {
                    let base = extract::basename(&def.key);
                    let stem = base.split('.').next().unwrap_or(base);
                    keys.by_basename.entry(base.into()).or_default().push(id);
                    keys.by_stem.entry(stem.into()).or_default().push(id);
                }
                2 => keys.errors.push(id),
                3 => keys.commands.push(id),
                4 if extract::is_hex_value(&def.key) => keys.hex.push(id),
                _ => {}
            }
        }
        keys
    }

    /// Path atoms whose basename is `base`.
    pub fn with_basename(&self, base: &str) -> &[u32] {
        self.by_basename.get(base).map_or(&[], Vec::as_slice)
    }

    /// Path atoms whose stem is `stem`.
    pub fn with_stem(&self, stem: &str) -> &[u32] {
        self.by_stem.get(stem).map_or(&[], Vec::as_slice)
    }
}

/// How the index reads a session's lens: `Keep` leaves each message's atoms
/// there for other readers (a sweep's later summaries), `Drain` takes them
/// out as it goes (the last reader).
enum Lens<'l, 'a> {
    Keep(&'l SessionLens<'a>),
    Drain(&'l mut SessionLens<'a>),
}

impl<'a> Lens<'_, 'a> {
    fn lens(&self) -> &SessionLens<'a> {
        match self {
            Lens::Keep(l) => l,
            Lens::Drain(l) => l,
        }
    }
}

/// The messages that exist only because the agent compacted
/// ([`RecordedCompaction::inserted`]): a policy replay never has them.
///
/// [`RecordedCompaction::inserted`]: crate::model::RecordedCompaction::inserted
fn recorded_insertions(session: &Session) -> Vec<Range<usize>> {
    session.recorded_compactions.iter().map(|c| c.inserted.clone()).collect()
}

impl<'a> SessionAtoms<'a> {
    /// Extract and index the atoms of `messages` (the session's full message
    /// list; the engine refers to messages by their index in it). `cwd` makes
    /// absolute paths under the workspace relative.
    pub fn new(messages: &'a [Message], cwd: Option<&str>) -> SessionAtoms<'a> {
        SessionAtoms::build_excluding(Lens::Drain(&mut SessionLens::new(messages, cwd)), &[])
    }

    /// Index a session: cwd from its metadata, and the messages that only exist
    /// because the agent compacted ([`RecordedCompaction::inserted`]) left out,
    /// since a policy replay never has them in context (they must not count as
    /// re-introductions in F). Message indices stay those of `session.messages`.
    ///
    /// [`RecordedCompaction::inserted`]: crate::model::RecordedCompaction::inserted
    pub fn from_session(session: &'a Session) -> SessionAtoms<'a> {
        SessionAtoms::from_lens_draining(session, SessionLens::of(session))
    }

    /// [`SessionAtoms::from_session`] reading each message's atoms from the
    /// session's `lens` (read there once, shared with the summarizer), which
    /// keeps them for its other readers.
    pub fn from_lens(session: &'a Session, lens: &SessionLens<'a>) -> SessionAtoms<'a> {
        SessionAtoms::build_excluding(Lens::Keep(lens), &recorded_insertions(session))
    }

    /// [`SessionAtoms::from_lens`] as the lens's last reader: each message's
    /// atoms are dropped once indexed, so a session's atoms are never held
    /// twice (in the lens and in the index).
    pub fn from_lens_draining(session: &'a Session, mut lens: SessionLens<'a>) -> SessionAtoms<'a> {
        SessionAtoms::build_excluding(Lens::Drain(&mut lens), &recorded_insertions(session))
    }

    /// [`SessionAtoms::new`] reading each message's atoms from `lens`.
    #[cfg(test)]
    pub(crate) fn from_lens_of(messages: &'a [Message], lens: &SessionLens<'a>) -> SessionAtoms<'a> {
        debug_assert!(std::ptr::eq(messages, lens.messages()));
        SessionAtoms::build_excluding(Lens::Keep(lens), &[])
    }

    fn build_excluding(mut lens: Lens<'_, 'a>, excluded: &[Range<usize>]) -> SessionAtoms<'a> {
        /// Keys of each lookup class a message brings, about (sized by
        /// class, so a new class cannot go without an estimate).
        const PER_MESSAGE: [usize; CLASSES] = [6, 8, 1, 1, 1, 0];
        let messages = lens.lens().messages();
        let cwd = lens.lens().cwd().map(str::to_string);
        // Sized once from the message count rather than grown (and rehashed)
        // atom by atom: the 50 MB synthetic corpus has about 20 atoms per
        // message (8 paths, 10 symbols), 30 entries. Capped at 16K
        // messages (about 30 MB reserved, touched only as it fills), so a
        // session of many short messages does not reserve for atoms it
        // lacks; a longer one grows from there.
        let m = messages.len().min(1 << 14);
        let mut s = SessionAtoms {
            messages,
            cwd,
            defs: Vec::with_capacity(m * 16),
            lookup: PER_MESSAGE.iter().map(|&k| HashMap::with_capacity(m * k)).collect(),
            hex7: HashMap::new(),
            entries: Vec::with_capacity(m * 24),
            msg_start: Vec::with_capacity(messages.len() + 1),
            occ: Vec::new(),
            assistants: Vec::new(),
            humans: Vec::new(),
            system: TextView::default(),
            token_prefix: Mutex::default(),
            share_block_tokens: false,
            block_tokens: OnceLock::new(),
            ground_keys: OnceLock::new(),
            block_chars: OnceLock::new(),
        };
        s.build(&mut lens, excluded);
        s
    }

    /// The system prompt (and AGENTS.md or other context the harness re-injects
    /// after every compaction): atoms found there are trivially available and
    /// never needed.
    pub fn with_system_prompt(mut self, text: &str) -> SessionAtoms<'a> {
        self.system = TextView::from_text(text, self.cwd.as_deref(), true);
        self
    }

    /// The tokens of the messages in `ranges` (within the session). Each event
    /// sums P and T, which in a long session is most of it, and a sweep scores
    /// hundreds of events of one session: running sums make each sum O(1). The
    /// estimators are the process's fixed ones, so the kind names the counts
    /// (as the sweep's shared scores assume).
    pub(crate) fn tokens_in(&self, est: &dyn Estimator, ranges: &[Range<usize>]) -> u64 {
        let prefix = self.token_prefix(est);
        let at = |i: usize| prefix.get(i).copied().unwrap_or(0);
        ranges.iter().map(|r| at(r.end).saturating_sub(at(r.start))).sum()
    }

    /// Take the per-message counts a replay already made with an estimator
    /// of `kind` (one per message, in order), so [`SessionAtoms::tokens_in`]
    /// does not estimate every message a second time (with o200k, a tenth of
    /// a replay). Counts of another length are ignored.
    pub(crate) fn seed_token_counts(&self, kind: EstimatorKind, counts: &[u64]) {
        if counts.len() == self.messages.len() {
            self.keep_prefix(kind, || running_sums(counts.iter().copied()));
        }
    }

    /// `prefix[m]` = the tokens of messages `0..m` (built once per estimator).
    pub(crate) fn token_prefix(&self, est: &dyn Estimator) -> Arc<[u64]> {
        self.keep_prefix(est.kind(), || running_sums(self.messages.iter().map(|m| est.message_tokens(m))))
    }

    /// The running sums for `kind`: the kept ones, else `make()`'s, kept.
    fn keep_prefix(&self, kind: EstimatorKind, make: impl FnOnce() -> Arc<[u64]>) -> Arc<[u64]> {
        let cached = |c: &Vec<(EstimatorKind, Arc<[u64]>)>| c.iter().find(|(k, _)| *k == kind).map(|(_, p)| p.clone());
        if let Some(p) = self.token_prefix.lock().ok().and_then(|c| cached(&c)) {
            return p;
        }
        let prefix = make();
        if let Ok(mut c) = self.token_prefix.lock()
            && cached(&c).is_none()
        {
            c.push((kind, prefix.clone()));
        }
        prefix
    }

    /// What a free text (a summary) names, read with this session's cwd, as
    /// [`SessionAtoms::prepare`] reads extra texts and `score` reads summaries.
    pub(crate) fn text_view(&self, text: &str) -> TextView {
        TextView::from_text(text, self.cwd.as_deref(), true)
    }

    /// Let observation-masking views name their blocks' tokens from one
    /// index of the session's ([`SessionAtoms::block_tokens`]) instead of
    /// each copying P's text. The index costs more than one view, so it pays
    /// only from three policies scored on the session (docs/perf.md).
    pub(crate) fn share_block_tokens(&mut self, on: bool) {
        self.share_block_tokens = on;
    }

    /// Where each token of the session's blocks (but tool results) occurs,
    /// read at the first masking view that asks, whichever policy's; `None`
    /// unless [`SessionAtoms::share_block_tokens`], or for a session past
    /// `u32` ids.
    pub(crate) fn block_tokens(&self) -> Option<Arc<BlockTokens>> {
        if !self.share_block_tokens {
            return None;
        }
        self.block_tokens.get_or_init(|| BlockTokens::of(self.messages).map(Arc::new)).clone()
    }

    /// Path, error, hex and command atoms by name (see [`GroundKeys`]).
    pub(crate) fn ground_keys(&self) -> &GroundKeys {
        self.ground_keys.get_or_init(|| GroundKeys::of(&self.defs))
    }

    /// [`Block::text_chars`] of each block of message `m` (empty past the
    /// end): counted once per session, not at each masking view that keeps
    /// the message (a tool call's arguments are measured by serializing them).
    pub(crate) fn block_chars(&self, m: usize) -> &[u64] {
        let (starts, chars) = self.block_chars.get_or_init(|| {
            let mut starts = Vec::with_capacity(self.messages.len() + 1);
            let mut chars = Vec::new();
            for msg in self.messages {
                starts.push(chars.len());
                chars.extend(msg.blocks.iter().map(|b| b.text_chars() as u64));
            }
            starts.push(chars.len());
            (starts, chars)
        });
        match starts.get(m..).and_then(|s| s.get(..2)) {
            Some(&[a, b]) => chars.get(a..b).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Number of messages indexed.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    fn build(&mut self, lens: &mut Lens<'_, 'a>, excluded: &[Range<usize>]) {
        let cwd = self.cwd.clone();
        // Command entries of each tool call, by tool_use id, so a failed result
        // can flag them.
        let mut pending: HashMap<String, Vec<usize>> = HashMap::new();
        // A message's (atom, block) flags: one map for all messages, drained
        // after each, so it is not grown again from nothing per message.
        let mut local: HashMap<(u32, u32), u8> = HashMap::new();
        let mut items: Vec<((u32, u32), u8)> = Vec::new();
        let messages = self.messages;
        for (mi, msg) in messages.iter().enumerate() {
            self.msg_start.push(self.entries.len());
            if excluded.iter().any(|r| r.contains(&mi)) {
                continue;
            }
            // An API-error placeholder is not the agent speaking: no use, no turn.
            let assistant = msg.role == Role::Assistant && msg.origin != Origin::SyntheticError;
            let human = msg.role == Role::User && msg.origin == Origin::Human;
            if assistant {
                self.assistants.push(mi);
            }
            if human && msg.blocks.iter().any(|b| matches!(b, Block::Text { text } if !text.trim().is_empty())) {
                self.humans.push(mi);
            }
            // A message's atoms taken from a draining lens live for this
            // iteration only.
            let taken;
            let read = match lens {
                Lens::Keep(l) => l.message(mi),
                Lens::Drain(l) => {
                    taken = l.take(mi);
                    taken.as_ref().map(|(m, atoms)| MessageView::new(m, atoms, cwd.as_deref()))
                }
            };
            let Some(read) = read else { continue };
            let base = if assistant { flag::USE } else { 0 };
            let mut tool_ids: Vec<(u32, &str)> = Vec::new();
            let mut failed_results: Vec<&str> = Vec::new();
            for (bi, (block, atoms)) in read.blocks().enumerate() {
                let bi = u32::try_from(bi).unwrap_or(u32::MAX);
                let found = &atoms.found;
                match block {
                    Block::Text { .. } => {
                        let f = base | if human { flag::HUMAN } else { 0 };
                        self.add_all(&mut local, bi, found, f);
                        for (sentence, kw) in &atoms.constraints {
                            let id = self.intern_constraint(sentence, kw);
                            add_local(&mut local, id, bi, flag::STRONG | flag::HUMAN);
                        }
                    }
                    Block::Thinking { .. } => self.add_all(&mut local, bi, found, base),
                    Block::ToolUse { id, .. } => {
                        self.add_all(&mut local, bi, found, base | flag::ARG);
                        tool_ids.push((bi, id.as_str()));
                    }
                    Block::ToolResult { tool_use_id, .. } => {
                        self.add_all(&mut local, bi, found, base | flag::TOOL_RESULT);
                        if atoms.failed {
                            failed_results.push(tool_use_id.as_str());
                        }
                    }
                    Block::Image { .. } | Block::Other { .. } => {}
                }
            }
            items.clear();
            items.extend(local.drain());
            items.sort_unstable_by_key(|&((atom, block), _)| (block, atom));
            items.truncate(MAX_ENTRIES_PER_MESSAGE);
            let first = self.entries.len();
            for &((atom, block), flags) in &items {
                self.entries.push(Entry { atom, block, flags });
            }
            for &(bi, id) in &tool_ids {
                for (k, e) in self.entries[first..].iter().enumerate() {
                    if e.block == bi && self.defs[e.atom as usize].class == 3 {
                        pending.entry(id.to_string()).or_default().push(first + k);
                    }
                }
            }
            for id in failed_results {
                if let Some(idx) = pending.get(id) {
                    for &i in idx {
                        self.entries[i].flags |= flag::FAILED;
                    }
                }
            }
        }
        self.msg_start.push(self.entries.len());
        // Each atom's list sized to its count first: most atoms occur a few
        // times, and growing a session's thousands of small lists one push at
        // a time reallocated each of them several times.
        let mut counts = vec![0usize; self.defs.len()];
        for e in &self.entries {
            counts[e.atom as usize] += 1;
        }
        self.occ = counts.into_iter().map(Vec::with_capacity).collect();
        for m in 0..self.messages.len() {
            for e in &self.entries[self.msg_start[m]..self.msg_start[m + 1]] {
                let msg = u32::try_from(m).unwrap_or(u32::MAX);
                self.occ[e.atom as usize].push(Occ { msg, block: e.block, flags: e.flags });
            }
        }
    }

    fn add_all(&mut self, local: &mut HashMap<(u32, u32), u8>, block: u32, found: &[Found], base: u8) {
        for f in found {
            let Some(class) = f.kind.class() else { continue };
            let id = self.intern(class, &f.value);
            let mut flags = base;
            if f.strong {
                flags |= flag::STRONG;
            }
            if f.modified {
                flags |= flag::MODIFIED;
            }
            add_local(local, id, block, flags);
        }
    }

    fn intern(&mut self, class: usize, key: &str) -> u32 {
        if let Some(&id) = self.lookup[class].get(key) {
            return id;
        }
        let id = u32::try_from(self.defs.len()).unwrap_or(u32::MAX);
        // One copy of the key, shared by the definition and the lookup (a
        // session interns a new atom every few hundred bytes of text).
        let shared: Arc<str> = Arc::from(key);
        self.lookup[class].insert(shared.clone(), id);
        self.defs.push(AtomDef { class, key: shared, display: None, keywords: Box::new([]) });
        if class == 4 && extract::is_hex_value(key) {
            self.hex7.entry(key[..7].to_string()).or_default().push(id);
        }
        id
    }

    fn intern_constraint(&mut self, sentence: &str, keywords: &[String]) -> u32 {
        let key = extract::constraint_key(keywords);
        if let Some(&id) = self.lookup[5].get(key.as_str()) {
            return id;
        }
        let id = self.intern(5, &key);
        let def = &mut self.defs[id as usize];
        def.display = Some(sentence.into());
        def.keywords = keywords.into();
        id
    }

    /// Id of an atom by lookup class ([`AtomKind::class`]) and key.
    pub(crate) fn id_in(&self, class: usize, key: &str) -> Option<u32> {
        self.lookup.get(class)?.get(key).copied()
    }

    /// Id of an atom by kind and normalized value.
    pub(crate) fn id_of(&self, kind: AtomKind, key: &str) -> Option<u32> {
        self.lookup[kind.class()?].get(key).copied()
    }

    /// The atoms that name the same thing as `id`: for hex ids every interned
    /// hex id that is prefix-compatible (short and full SHA), else itself.
    pub(crate) fn family(&self, id: u32) -> Family {
        let def = &self.defs[id as usize];
        if def.class == 4 && extract::is_hex_value(&def.key) {
            let key = &def.key;
            if let Some(ids) = self.hex7.get(&key[..7]) {
                return Family::Many(
                    ids.iter().copied().filter(|&o| extract::hex_compatible(&self.defs[o as usize].key, key)).collect(),
                );
            }
        }
        Family::One([id])
    }

    /// Entries of message `m` (empty when out of range).
    pub(crate) fn entries_of(&self, m: usize) -> &[Entry] {
        if m + 1 >= self.msg_start.len() {
            return &[];
        }
        &self.entries[self.msg_start[m]..self.msg_start[m + 1]]
    }

    /// Occurrences of `id` in message range `r`.
    pub(crate) fn occ_in(&self, id: u32, r: &Range<usize>) -> &[Occ] {
        let occs = &self.occ[id as usize];
        let lo = occs.partition_point(|o| (o.msg as usize) < r.start);
        let hi = occs.partition_point(|o| (o.msg as usize) < r.end);
        &occs[lo..hi.max(lo)]
    }

    /// Assistant messages in `[from, to)`.
    pub(crate) fn turns_between(&self, from: usize, to: usize) -> usize {
        let a = self.assistants.partition_point(|&m| m < from);
        let b = self.assistants.partition_point(|&m| m < to);
        b.saturating_sub(a)
    }

    /// The kind an atom of class `class` takes given its flags.
    pub(crate) fn kind_of(&self, id: u32, flags: u8) -> AtomKind {
        let class = self.defs[id as usize].class;
        if class == 0 && flags & flag::MODIFIED != 0 { AtomKind::ModifiedPath } else { AtomKind::of_class(class) }
    }

    /// Was the path `id` modified anywhere before message `before`?
    /// Does the atom occur in a message before `before`?
    pub(crate) fn occurs_before(&self, id: u32, before: usize) -> bool {
        self.occ.get(id as usize).and_then(|o| o.first()).is_some_and(|o| (o.msg as usize) < before)
    }

    pub(crate) fn modified_before(&self, id: u32, before: usize) -> bool {
        self.occ[id as usize].iter().take_while(|o| (o.msg as usize) < before).any(|o| o.flags & flag::MODIFIED != 0)
    }

    /// Number of distinct atoms in the session.
    pub fn atom_count(&self) -> usize {
        self.defs.len()
    }
}

fn add_local(local: &mut HashMap<(u32, u32), u8>, id: u32, block: u32, flags: u8) {
    *local.entry((id, block)).or_insert(0) |= flags;
}
