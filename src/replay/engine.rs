//! The state of one replay: the policy's history as a deque of items, the queue
//! of prunable tool results, running token totals, and the per-call step.
//!
//! Items are created once and referenced by id; the history holds ids. A source
//! message is never copied into history (an item points at it); only synthetic
//! messages (summaries, acknowledgements, retained user messages) and pruned
//! replacement blocks are owned.

use super::totals::{Fenwick, MeterState};
use super::{CallRow, CompactionEvent, CompactionReason, Event, PruneEvent, ReplayContext};
use crate::model::{Block, Message, Origin, Role, Session};
use crate::policy::{Measure, Policy};
use crate::summarize::Summarizer;
use crate::text::filetrack::FileOps;
use crate::tokens::Estimator;
use foldhash::{HashMap as FastMap, HashSet as FastSet};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet, VecDeque};

/// What kind of message an item is; decides cut points and pruning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A user message typed by a person.
    Human,
    /// A user message the harness injected (reminders, environment, AGENTS.md).
    Injected,
    /// A user message carrying tool results.
    ToolResult,
    Assistant,
    System,
    /// A summary written by this replay.
    Summary,
    /// The synthetic assistant acknowledgement after a summary.
    Ack,
    /// A user message re-inserted verbatim by a compaction (Codex).
    Retained,
    /// The first message with the summary appended (specs/003).
    Merged,
}

impl Kind {
    /// A user message that is not a tool result: the start of a turn, a cut point
    /// that splits nothing.
    pub(super) fn turn_start(self) -> bool {
        matches!(self, Kind::Human | Kind::Injected | Kind::Retained)
    }
    pub(super) fn synthetic(self) -> bool {
        matches!(self, Kind::Summary | Kind::Ack | Kind::Retained | Kind::Merged)
    }
}

pub(super) struct Item {
    pub src: Option<usize>,
    /// Synthetic or modified message; `None` = the source message as is.
    pub owned: Option<Message>,
    pub kind: Kind,
    /// Append order of source items (their order in history never changes).
    pub seq: u64,
    /// Tokens as stored in history (+ overhead).
    pub tokens: u64,
    /// Tokens in the request view, after pruning (+ overhead).
    pub view_tokens: u64,
    /// Replacement blocks of the view, by block index (sorted).
    pub pruned: Vec<(u32, Block)>,
    /// Number of prunable units (tool results) of this item.
    pub units: u32,
    pub dirty: bool,
    /// For `Retained`: the source message it copies.
    pub copy_of: Option<usize>,
    /// Calibrated estimator: this source message's share of the gap between
    /// recorded usage and the estimate (see `Engine::calibrate`).
    pub corr: i64,
    /// The same three in the meter's units (see [`MeterState`]).
    pub mtokens: u64,
    pub mview: u64,
    pub mcorr: i64,
    /// Still in history (a source item is dropped by a compaction only once).
    pub live: bool,
}

/// Pruning state of a tool result; it only moves forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum UnitState {
    Kept,
    Capped,
    Trimmed,
    Cleared,
}

/// One prunable tool result.
pub(super) struct Unit {
    pub item: u32,
    pub block: u32,
    /// Ordinal of its tool-result message among all appended ones.
    pub msg_ord: u64,
    /// Assistant / human messages appended before it.
    pub asst_before: u64,
    pub human_before: u64,
    /// Image-bearing units before it.
    pub img_ord: u64,
    pub has_image: bool,
    /// Never pruned (protected tool, before the first user message).
    pub protected: bool,
    /// Excluded from `clear_tool_uses`.
    pub ctu_excluded: bool,
    /// Characters of the original result text and of its current representation.
    pub chars: u64,
    pub cur_chars: u64,
    /// chars/4, for the token-budget rules (opencode, clear_tool_uses).
    pub tokens: u64,
    /// Σ `tokens` of the unprotected units appended before it (opencode window).
    pub oc_cum: u64,
    pub state: UnitState,
}

/// Where one kind of compaction stands after no-progress attempts.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Backoff {
    /// No attempt before `hist_tokens` reaches this.
    pub retry_at: Option<u64>,
    /// No-progress attempts in a row (since the last applied compaction).
    pub streak: u32,
}

pub(super) struct Output {
    pub compactions: Vec<CompactionEvent>,
    pub prunes: Vec<PruneEvent>,
    pub transcript: Vec<Message>,
    /// For each transcript message, the index of the session message it is
    /// unchanged; `None` for one the replay built or pruned.
    pub transcript_sources: Vec<Option<u32>>,
}

pub(super) struct Engine<'a> {
    pub s: &'a Session,
    pub p: &'a Policy,
    pub est: &'a dyn Estimator,
    pub summarizer: &'a dyn Summarizer,
    pub facts: Option<&'a super::SessionFacts>,
    pub toks: &'a [u64],
    pub overhead: u64,
    pub system: u64,
    pub items: Vec<Item>,
    pub hist: VecDeque<u32>,
    pub hist_tokens: u64,
    pub view_tokens: u64,
    pub units: VecDeque<Unit>,
    // Counters over everything appended (never decremented).
    pub tool_msgs: u64,
    pub assistants: u64,
    pub humans: u64,
    pub images: u64,
    pub oc_total: u64,
    pub next_seq: u64,
    pub seen_first_user: bool,
    /// tool_use id → tool name, and → seq of the item holding its result.
    /// Borrowed from the session and hashed with foldhash (only looked up,
    /// never iterated): a sweep builds these once per point.
    pub tool_names: FastMap<&'a str, &'a str>,
    pub result_seq: FastMap<&'a str, u64>,
    /// Every tool_use id the replayed stream answers at some point: a use
    /// whose result has not arrived yet but will is not cut off from it.
    pub answered: FastSet<&'a str>,
    // Monotone pointers into `units` (see prune.rs).
    pub keep_ptr: usize,
    pub soft_ptr: usize,
    pub hard_ptr: usize,
    pub oc_skip: usize,
    pub oc_ptr: usize,
    pub oc_c: usize,
    pub ctu_ptr: usize,
    pub ctu_scan: usize,
    pub ctu_pending: u64,
    pub ctu_cleared: u64,
    /// Current chars of unprotected units below `keep_ptr` (OpenClaw minimum).
    pub prunable_chars: u64,
    pub dirty: Vec<u32>,
    // Compaction state.
    pub last_summary: Option<String>,
    pub file_ops: FileOps,
    /// No-progress back-off of threshold compactions and of overflow recovery
    /// (`Engine::back_off`): each has its own cut, so its own retry point.
    pub backoff: [Backoff; 2],
    pub flushed: bool,
    pub call_idx: usize,
    pub compactions: Vec<CompactionEvent>,
    pub prunes: Vec<PruneEvent>,
    /// Counts of this call's pruning transitions (soft/cap, hard).
    pub call_soft: u32,
    pub call_hard: u32,
    /// Tool ids unpaired in the source itself (not the policy's doing).
    pub(super) unpaired: Option<HashSet<String>>,
    // Prompt-cache prefix tracking (see `prefix_since_last`).
    pub fen: Fenwick,
    /// View tokens of the synthetic items (summary, ack, retained) in history.
    pub synth_view: u64,
    /// Seq of the first source item after the synthetic block.
    pub tail_start_seq: u64,
    /// Source items whose view differs from history (pruned blocks).
    pub pruned_seqs: BTreeSet<u64>,
    /// Smallest seq whose view changed since the previous request.
    pub changed_seq: Option<u64>,
    /// Tokens (with system) of the previous request that survive a compaction.
    pub compaction_prefix: Option<u64>,
    prev_body: Option<u64>,
    pub prev_pruned: bool,
    pub(super) last_prefix: u64,
    /// The previous request's messages (verify mode only).
    pub(super) last_request: Option<Vec<Message>>,
    /// Item of each source message (`u32::MAX`: not appended, or skipped).
    item_of_src: Vec<u32>,
    /// Calibrated estimator: Σ `corr` of the items in history, and the part of
    /// the last recorded gap no message could take (see `calibrate`).
    pub hist_corr: i64,
    residual: i64,
    /// The same request sizes in the meter's units.
    pub mt: MeterState<'a>,
}

impl<'a> Engine<'a> {
    pub fn new(
        s: &'a Session,
        p: &'a Policy,
        ctx: &ReplayContext<'a>,
        toks: &'a [u64],
        system: u64,
        meter: (&'a [u64], u64),
        hidden: &[bool],
    ) -> Engine<'a> {
        let results = || {
            (0..s.messages.len())
                .filter(|&i| !hidden.get(i).copied().unwrap_or(false))
                .flat_map(|i| s.messages[i].blocks.iter())
                .filter_map(|b| match b {
                    Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                    _ => None,
                })
        };
        // The tool maps sized once for the session's results: a sweep builds
        // an engine per point, and growing them step by step rehashed each.
        let calls = results().count();
        let mut answered = FastSet::with_capacity_and_hasher(calls, Default::default());
        answered.extend(results());
        Engine {
            s,
            p,
            est: ctx.estimator,
            summarizer: ctx.summarizer,
            // Facts made for another session (of another length) are not read.
            facts: ctx.facts.filter(|f| f.len() == s.messages.len()),
            toks,
            overhead: p.message_overhead_tokens,
            system,
            // Room for the items compactions add (summaries, acks, merged
            // copies) as well: growing past the session's length copied every
            // item once per replay that compacts.
            items: Vec::with_capacity(s.messages.len() + s.messages.len() / 4 + 16),
            hist: VecDeque::with_capacity(s.messages.len()),
            hist_tokens: 0,
            view_tokens: 0,
            units: VecDeque::new(),
            tool_msgs: 0,
            assistants: 0,
            humans: 0,
            images: 0,
            oc_total: 0,
            next_seq: 0,
            seen_first_user: false,
            tool_names: FastMap::with_capacity_and_hasher(calls, Default::default()),
            result_seq: FastMap::with_capacity_and_hasher(calls, Default::default()),
            answered,
            keep_ptr: 0,
            soft_ptr: 0,
            hard_ptr: 0,
            oc_skip: 0,
            oc_ptr: 0,
            oc_c: 0,
            ctu_ptr: 0,
            ctu_scan: 0,
            ctu_pending: 0,
            ctu_cleared: 0,
            prunable_chars: 0,
            dirty: Vec::new(),
            last_summary: None,
            file_ops: FileOps::default(),
            backoff: [Backoff::default(); 2],
            flushed: false,
            call_idx: 0,
            compactions: Vec::new(),
            prunes: Vec::new(),
            call_soft: 0,
            call_hard: 0,
            unpaired: None,
            fen: Fenwick::new(s.messages.len()),
            synth_view: 0,
            tail_start_seq: 0,
            pruned_seqs: BTreeSet::new(),
            changed_seq: None,
            compaction_prefix: None,
            prev_body: None,
            prev_pruned: false,
            last_prefix: 0,
            last_request: None,
            item_of_src: vec![u32::MAX; s.messages.len()],
            hist_corr: 0,
            residual: 0,
            mt: MeterState {
                est: ctx.options.meter.counter(),
                toks: meter.0,
                same: p.message_overhead_tokens == 0
                    && ctx.estimator.kind().message_counter() == ctx.options.meter.counter().kind(),
                system: meter.1,
                hist: 0,
                view: 0,
                synth_view: 0,
                fen: Fenwick::new(s.messages.len()),
                hist_corr: 0,
                residual: 0,
                compaction_prefix: None,
                prev_body: None,
                last_prefix: 0,
            },
        }
    }

    /// The message of an item as stored in history.
    pub fn msg(&self, id: u32) -> &Message {
        let it = &self.items[id as usize];
        match (&it.owned, it.src) {
            (Some(m), _) => m,
            (None, Some(i)) => &self.s.messages[i],
            // Items are built with one or the other; an empty message is harmless.
            (None, None) => &EMPTY,
        }
    }

    /// The message of an item as sent in the request (pruned blocks replaced).
    pub fn view_msg(&self, id: u32) -> Cow<'_, Message> {
        let it = &self.items[id as usize];
        let base = self.msg(id);
        if it.pruned.is_empty() {
            return Cow::Borrowed(base);
        }
        let mut m = base.clone();
        for (b, blk) in &it.pruned {
            if let Some(slot) = m.blocks.get_mut(*b as usize) {
                *slot = blk.clone();
            }
        }
        Cow::Owned(m)
    }

    /// The message as history holds it: pruned when pruning persists.
    pub fn hist_msg(&self, id: u32) -> Cow<'_, Message> {
        if self.p.prune.persist { self.view_msg(id) } else { Cow::Borrowed(self.msg(id)) }
    }

    /// The message as the previous request carried it (pruned or full).
    pub fn request_msg(&self, id: u32) -> Cow<'_, Message> {
        if self.prev_pruned { self.view_msg(id) } else { self.hist_msg(id) }
    }

    pub fn kind_at(&self, pos: usize) -> Kind {
        self.items[self.hist[pos] as usize].kind
    }

    /// Tokens of a message built by the replay (+ overhead).
    pub fn tokens_of(&self, m: &Message) -> u64 {
        self.est.message_tokens(m) + self.overhead
    }

    /// Tokens of a message by the meter.
    pub fn mtokens_of(&self, m: &Message) -> u64 {
        self.mt.est.message_tokens(m)
    }

    /// [`Engine::tokens_of`] and [`Engine::mtokens_of`], counting once when the
    /// meter counts as the policy does.
    pub fn both_of(&self, m: &Message) -> (u64, u64) {
        let t = self.tokens_of(m);
        (t, if self.mt.same { t } else { self.mtokens_of(m) })
    }

    pub fn push_item(&mut self, item: Item) -> u32 {
        let id = self.items.len() as u32;
        self.items.push(item);
        id
    }

    /// Append source message `i` to history.
    pub fn append(&mut self, i: usize) {
        let s: &'a Session = self.s;
        let m = &s.messages[i];
        let kind = match m.role {
            Role::System => Kind::System,
            Role::Assistant => Kind::Assistant,
            Role::User if m.has_tool_results() => Kind::ToolResult,
            Role::User if m.origin == Origin::Human => Kind::Human,
            Role::User => Kind::Injected,
        };
        let tokens = self.toks[i] + self.overhead;
        let mtokens = self.mt.toks.get(i).copied().unwrap_or(0);
        let seq = self.next_seq;
        self.next_seq += 1;
        let id = self.push_item(Item {
            src: Some(i),
            owned: None,
            kind,
            seq,
            tokens,
            view_tokens: tokens,
            pruned: Vec::new(),
            units: 0,
            dirty: false,
            copy_of: None,
            corr: 0,
            mtokens,
            mview: mtokens,
            mcorr: 0,
            live: true,
        });
        self.item_of_src[i] = id;
        self.hist.push_back(id);
        self.hist_tokens += tokens;
        self.view_tokens += tokens;
        self.fen.add(seq, tokens as i64);
        self.mt.hist += mtokens;
        self.mt.view += mtokens;
        self.mt.fen.add(seq, mtokens as i64);
        match kind {
            Kind::Assistant => {
                for (tid, name, _) in m.tool_uses() {
                    self.tool_names.insert(tid, name);
                }
                self.assistants += 1;
            }
            Kind::Human | Kind::Injected => {
                self.seen_first_user = true;
                if kind == Kind::Human {
                    self.humans += 1;
                }
            }
            Kind::ToolResult => self.add_units(id, i, seq),
            _ => {}
        }
    }

    fn add_units(&mut self, id: u32, i: usize, seq: u64) {
        let m: &'a Message = &self.s.messages[i];
        let pr = &self.p.prune;
        let mut n = 0u32;
        let results = m.blocks.iter().enumerate().filter_map(|(b, blk)| match blk {
            Block::ToolResult { tool_use_id, content, .. } => Some((b, tool_use_id, content)),
            _ => None,
        });
        for (k, (b, tool_use_id, content)) in results.enumerate() {
            self.result_seq.insert(tool_use_id.as_str(), seq);
            let name = self.tool_names.get(tool_use_id.as_str()).copied().unwrap_or("");
            let has_image = content.iter().any(|c| matches!(c, Block::Image { .. }));
            let chars = self.facts.and_then(|f| f.result_chars(i, k)).unwrap_or_else(|| result_chars(content));
            let protected = pr.protect_tools.iter().any(|t| t.eq_ignore_ascii_case(name))
                || (pr.protect_before_first_user && !self.seen_first_user);
            let ctu_excluded = pr.clear_tool_uses.exclude_tools.iter().any(|t| t.eq_ignore_ascii_case(name));
            let tokens = chars.div_ceil(4);
            let unit = Unit {
                item: id,
                block: b as u32,
                msg_ord: self.tool_msgs,
                asst_before: self.assistants,
                human_before: self.humans,
                img_ord: self.images,
                has_image,
                protected,
                ctu_excluded,
                chars,
                cur_chars: chars,
                tokens,
                oc_cum: self.oc_total,
                state: UnitState::Kept,
            };
            if !protected {
                self.oc_total += tokens;
            }
            self.images += u64::from(has_image);
            self.units.push_back(unit);
            n += 1;
            if pr.enabled
                && let Some(cap) = pr.cap_chars
                && chars > cap
                && !has_image
            {
                let k = self.units.len() - 1;
                self.transition(k, UnitState::Capped);
            }
        }
        self.items[id as usize].units = n;
        self.tool_msgs += 1;
        if !self.dirty.is_empty() {
            self.flush_dirty();
        }
    }

    /// Recompute the view tokens of items whose blocks changed (batched so an item
    /// with several results changing at once is re-estimated once).
    pub fn flush_dirty(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        for id in dirty {
            let (t, mt) = self.both_of(&self.view_msg(id));
            let it = &mut self.items[id as usize];
            it.dirty = false;
            let delta = t as i64 - it.view_tokens as i64;
            let mdelta = mt as i64 - it.mview as i64;
            self.view_tokens = self.view_tokens + t - it.view_tokens;
            it.view_tokens = t;
            self.mt.view = self.mt.view + mt - it.mview;
            it.mview = mt;
            if self.p.prune.persist {
                self.hist_tokens = self.hist_tokens + t - it.tokens;
                it.tokens = t;
                self.mt.hist = self.mt.hist + mt - it.mtokens;
                it.mtokens = mt;
            }
            if it.kind.synthetic() {
                // A merged first message: the request changes from its start.
                self.synth_view = self.synth_view.saturating_add_signed(delta);
                self.compaction_prefix = Some(self.system);
                self.mt.synth_view = self.mt.synth_view.saturating_add_signed(mdelta);
                self.mt.compaction_prefix = Some(self.mt.system);
            } else {
                let seq = it.seq;
                self.fen.add(seq, delta);
                self.mt.fen.add(seq, mdelta);
                self.pruned_seqs.insert(seq);
                self.changed_seq = Some(self.changed_seq.map_or(seq, |c| c.min(seq)));
            }
        }
    }

    /// Calibrated estimator: source message `src` is `corr` tokens bigger than
    /// estimated (its share of what the recorded usage showed), and `residual`
    /// of the last recorded gap belongs to no message the replay holds. A
    /// message's share leaves the request with it when a compaction replaces
    /// it; the residual stays. Pruning does not change a share.
    pub fn calibrate(&mut self, src: usize, corr: i64) {
        let Some(&id) = self.item_of_src.get(src) else { return };
        let Some(it) = self.items.get_mut(id as usize) else { return };
        if it.live {
            self.hist_corr += corr - it.corr;
        }
        it.corr = corr;
    }

    pub fn set_residual(&mut self, residual: i64) {
        self.residual = residual;
    }

    /// [`Engine::calibrate`] for the meter.
    pub fn mcalibrate(&mut self, src: usize, corr: i64) {
        let Some(&id) = self.item_of_src.get(src) else { return };
        let Some(it) = self.items.get_mut(id as usize) else { return };
        if it.live {
            self.mt.hist_corr += corr - it.mcorr;
        }
        it.mcorr = corr;
    }

    pub fn mset_residual(&mut self, residual: i64) {
        self.mt.residual = residual;
    }

    /// What the calibration adds to the estimate of the current request.
    pub fn offset(&self) -> i64 {
        self.hist_corr + self.residual
    }

    /// Request size the trigger sees.
    fn measured(&self, gate_open: bool) -> u64 {
        let body =
            if self.p.compact.measure == Measure::View && gate_open { self.view_tokens } else { self.hist_tokens };
        let mut v = self.system + body;
        if self.p.compact.include_max_output {
            v += self.p.max_output_tokens;
        }
        super::apply_drift(v, self.offset())
    }

    fn fires(&self, size: u64, point: u64) -> bool {
        if self.p.compact.inclusive { size >= point } else { size > point }
    }

    fn trigger_fires(&self, size: u64) -> bool {
        self.fires(size, self.p.trigger_point())
    }

    /// One recorded call: flush point, Layer 2, Layer 1, the policy's size.
    /// Start call `ci`: pruning done while appending its messages (`cap_chars`)
    /// is attributed to it.
    pub fn begin_call(&mut self, ci: usize) {
        self.call_idx = ci;
        self.call_soft = 0;
        self.call_hard = 0;
    }

    pub fn call(&mut self, ci: usize, m: usize, ts: Option<i64>, gap_ms: Option<i64>) -> CallRow {
        self.call_idx = ci;
        let mut events = Vec::new();
        // OpenClaw cache-ttl mode: prune only once the cache has expired; and
        // with `start_ratio`, only once the full request nears the window. The
        // other requests carry the full history.
        let expired = match self.p.prune.cache_ttl_secs {
            Some(ttl) => gap_ms.is_some_and(|g| g >= (ttl as i64).saturating_mul(1000)),
            None => true,
        };
        let near =
            self.p.prune.start_ratio.is_none_or(|r| self.measured(false) as f64 >= r * self.p.context_window as f64);
        let gate_open = expired && near;
        let pruning = self.p.prune.enabled && gate_open;
        if pruning && self.p.compact.measure == Measure::View {
            self.prune_pass();
        }
        let size = self.measured(gate_open);
        let f = &self.p.flush;
        if f.enabled
            && !self.flushed
            && size > self.p.context_window.saturating_sub(f.reserve_tokens + f.threshold_tokens)
        {
            self.flushed = true;
            events.push(Event::Flush);
        }
        if self.p.compact.enabled && self.may_attempt(CompactionReason::Threshold) && self.trigger_fires(size) {
            self.compact(CompactionReason::Threshold, size, None, false);
        }
        if pruning {
            self.prune_pass();
        }
        let policy_tokens = self.request_tokens(pruning);
        // Overflow recovery (specs/002): compact again keeping window/5, forcing a cut.
        if self.p.compact.enabled
            && policy_tokens > self.p.context_window
            && self.may_attempt(CompactionReason::Overflow)
            && let Some(r) = self.p.compact.overflow_keep_ratio
        {
            let keep = (r * self.p.context_window as f64) as u64;
            self.compact(CompactionReason::Overflow, policy_tokens, Some(keep), true);
            if pruning {
                self.prune_pass();
            }
        }
        // One event per kind and call: a call with a threshold compaction and an
        // overflow recovery shows `compact` once (the trace has both events).
        for c in self.compactions.iter().rev().take_while(|c| c.call == ci) {
            events.push(if c.applied { Event::Compact } else { Event::NoProgress });
        }
        if self.call_soft > 0 {
            events.push(Event::PruneSoft);
        }
        if self.call_hard > 0 {
            events.push(Event::PruneHard);
        }
        // What the report measures: the same request in the meter's units.
        let mbody = if pruning { self.mt.view } else { self.mt.hist };
        let metered = super::apply_drift(self.mt.system + mbody, self.mt.offset());
        let mprefix = self.prefix_since_last(pruning);
        self.prev_body = Some(if pruning { self.view_tokens } else { self.hist_tokens });
        self.mt.prev_body = Some(mbody);
        self.prev_pruned = pruning;
        let prefix_policy = if mprefix == 0 { 0 } else { super::apply_drift(mprefix, self.mt.offset()).min(metered) };
        CallRow {
            call: ci,
            message_index: m,
            timestamp: ts,
            tokens_baseline: 0,
            tokens_policy: metered,
            tokens_recorded: None,
            pruned_soft: self.call_soft,
            pruned_hard: self.call_hard,
            prefix_baseline: 0,
            prefix_policy,
            events,
        }
    }

    /// Not backing off: the back-off is on the history the policy can compact,
    /// not on the trigger's measure (which with a calibrated estimate also moves
    /// with the recorded usage, so it would reopen without anything to compact).
    fn may_attempt(&self, reason: CompactionReason) -> bool {
        self.backoff[reason as usize].retry_at.is_none_or(|r| self.hist_tokens >= r)
    }

    /// Tokens (system included, before calibration) of this request equal to the
    /// start of the previous request: what a prompt cache could serve. The
    /// previous request is a prefix of this one unless something before its end
    /// changed: a compaction (everything after the kept head), a pruning
    /// transition (everything from the first changed message), or the cache-TTL
    /// gate switching between the pruned and the full history. Kept in both
    /// units; returns the meter's.
    fn prefix_since_last(&mut self, pruning: bool) -> u64 {
        let first_change = if pruning != self.prev_pruned {
            self.pruned_seqs.first().copied()
        } else if pruning {
            self.changed_seq
        } else {
            None
        };
        let tail_start = self.tail_start_seq;
        let prefix = |system: u64, prev: Option<u64>, cp: Option<u64>, fen: &Fenwick, synth: u64| match prev {
            None => 0,
            Some(prev) => {
                let mut p = system + prev;
                if let Some(cp) = cp {
                    p = p.min(cp);
                }
                if let Some(seq) = first_change {
                    let before = fen.prefix(seq) + if seq >= tail_start { synth } else { 0 };
                    p = p.min(system + before);
                }
                p
            }
        };
        let p = prefix(self.system, self.prev_body, self.compaction_prefix, &self.fen, self.synth_view);
        let mt = &self.mt;
        let mp = prefix(mt.system, mt.prev_body, mt.compaction_prefix, &mt.fen, mt.synth_view);
        self.changed_seq = None;
        self.compaction_prefix = None;
        self.mt.compaction_prefix = None;
        self.last_prefix = p;
        self.mt.last_prefix = mp;
        mp
    }

    fn request_tokens(&self, pruned: bool) -> u64 {
        let body = if pruned { self.view_tokens } else { self.hist_tokens };
        super::apply_drift(self.system + body, self.offset())
    }

    /// The request view as messages.
    pub fn view_messages(&self) -> Vec<Message> {
        self.hist.iter().map(|&id| self.view_msg(id).into_owned()).collect()
    }

    pub fn finish(self, keep_transcript: bool) -> Output {
        let (mut transcript, mut transcript_sources) = (Vec::new(), Vec::new());
        if keep_transcript {
            transcript.reserve(self.hist.len());
            transcript_sources.reserve(self.hist.len());
            for &id in &self.hist {
                let m = self.hist_msg(id);
                // Borrowed from the session itself: the message as read.
                let source = match (&m, &self.items[id as usize]) {
                    (Cow::Borrowed(_), Item { owned: None, src: Some(i), .. }) => u32::try_from(*i).ok(),
                    _ => None,
                };
                transcript.push(m.into_owned());
                transcript_sources.push(source);
            }
        }
        Output { compactions: self.compactions, prunes: self.prunes, transcript, transcript_sources }
    }
}

static EMPTY: Message = Message::new(Role::User, Origin::Injected, Vec::new());

/// Characters of a tool result's text ([`crate::summarize::tool_result_text`]:
/// its text blocks joined by newlines), without joining them.
pub(crate) fn result_chars(content: &[Block]) -> u64 {
    let (mut chars, mut texts) = (0u64, 0u64);
    for b in content {
        if let Block::Text { text } = b {
            chars += text.chars().count() as u64;
            texts += 1;
        }
    }
    chars + texts.saturating_sub(1)
}

#[cfg(test)]
mod result_chars_tests {
    use super::*;

    #[test]
    fn result_chars_counts_the_joined_text() {
        let image = Block::Image { media_type: "image/png".into(), bytes: 10 };
        let cases: Vec<Vec<Block>> = vec![
            vec![],
            vec![image.clone()],
            vec![Block::text("héllo")],
            vec![Block::text("a→b"), image.clone(), Block::text(""), Block::text("xyz")],
        ];
        for content in cases {
            let joined = crate::summarize::tool_result_text(&content).chars().count() as u64;
            assert_eq!(result_chars(&content), joined, "{content:?}");
        }
    }
}
