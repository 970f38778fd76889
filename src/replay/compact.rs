//! Layer 2: history compaction (DESIGN.md §4 `compact`).
//!
//! History is laid out as `[kept head][replaced region][kept tail]`:
//! - the kept head is the first message (specs/003) or the leading injected
//!   context (Codex, Claude Code);
//! - the region starts with any earlier summary/acknowledgement and ends at the cut;
//! - the cut follows the policy's rule (recent tokens snapped to a cut point,
//!   first + tail messages, recent turns, whole history), is pulled back so no kept
//!   tool result loses its tool use, and may split a turn (specs/002: the turn
//!   prefix then gets its own summary).
//!
//! The summary goes where the placement says, with the synthetic acknowledgement
//! when the next kept message would otherwise repeat the user role. Its budget
//! is bounded by what the region frees, so a compaction never grows history. A
//! compaction that would free less than `min_gain_tokens` (or finds nothing to
//! replace) is not applied: it is a no-progress compaction, reported once, after
//! which the policy waits for the history to grow (`Engine::back_off`: at least
//! the shortfall, and a doubling multiple of `min_gain_tokens`) before trying
//! again, instead of looping as real agents do. Work is proportional to the
//! region replaced (plus, for a recent-tokens cut, the walk back over what is
//! kept).

use super::engine::{Engine, Item, Kind};
use super::{CompactionEvent, CompactionReason, SummaryOutcome};
use crate::model::{Block, Message, Origin, Role};
use crate::policy::{CutKind, CutPoints, Fallback, Placement};
use crate::summarize::{
    Extractive, InputLimits, RequestContext, Summarizer, SummarizerUsage, Summary, SummaryPart, SummaryRequest,
    Truncate, head_chars, tail_chars,
};
use crate::text::filetrack::FileOps;
use std::borrow::Cow;

struct Plan {
    /// First position of the replaced region (end of the kept head).
    a: usize,
    /// First non-synthetic position of the region.
    syn_end: usize,
    /// First kept position after the region.
    cut: usize,
    /// Start of the split turn whose prefix `[turn_start, cut)` is summarized apart.
    turn_start: Option<usize>,
}

enum Got {
    Summary(Summary, bool),
    /// Dropped without a summary, because the summarizer failed so.
    Drop(String),
    Skip,
}

fn human_text(m: &Message) -> String {
    m.text().into_owned()
}

impl Engine<'_> {
    /// The cut, or `Err(need)`: no cut is possible now, and none before the
    /// history grows by at least `need` tokens (0 when unknown).
    fn plan(&self, keep_override: Option<u64>, force: bool) -> Result<Plan, u64> {
        let c = &self.p.compact;
        let len = self.hist.len();
        let a = match c.cut {
            CutKind::FirstPlusTailMessages => (c.keep_first_messages as usize).min(len),
            _ if c.keep_initial_context => {
                (0..len).take_while(|&p| matches!(self.kind_at(p), Kind::Injected | Kind::System)).count()
            }
            _ => 0,
        };
        let syn_end = a + (a..len).take_while(|&p| self.kind_at(p).synthetic()).count();
        let cut = match c.cut {
            CutKind::KeepRecentTokens => {
                let keep = keep_override.unwrap_or_else(|| self.p.keep_recent());
                let mut acc = 0u64;
                let mut found = None;
                for pos in (syn_end..len).rev() {
                    acc += self.items[self.hist[pos] as usize].tokens;
                    if acc >= keep {
                        found = Some(pos);
                        break;
                    }
                }
                match found {
                    Some(i) => self.snap(i, syn_end).ok_or(0u64)?,
                    None if force => self.force_cut(syn_end).ok_or(0u64)?,
                    // All of it is within the recent tokens kept: nothing can be
                    // replaced before the history outgrows them.
                    None => return Err(keep - acc),
                }
            }
            CutKind::FirstPlusTailMessages => {
                // specs/003 §Boundary Adjustment: never start the tail with a tool
                // result; pull the boundary back onto its tool use.
                let tail = c.keep_tail_messages as usize;
                if len <= a + tail {
                    return Err(0);
                }
                let mut end = len - tail;
                while end > a + 1 && self.kind_at(end) == Kind::ToolResult {
                    end -= 1;
                }
                if self.kind_at(end) == Kind::ToolResult {
                    return Err(0);
                }
                end
            }
            CutKind::KeepRecentTurns => {
                let n = c.keep_recent_turns as usize;
                let p = (syn_end..len)
                    .rev()
                    .filter(|&p| self.kind_at(p) == Kind::Assistant)
                    .nth(n.saturating_sub(1))
                    .ok_or(0u64)?;
                // Keep the user message that opened the turn with its answer.
                if p > syn_end && self.kind_at(p - 1).turn_start() { p - 1 } else { p }
            }
            CutKind::WholeHistory => len,
        };
        let cut = self.pair_safe(syn_end, cut).ok_or(0u64)?;
        if cut <= syn_end || ((cut - a) as u64) < c.min_compact_messages {
            return Err(0);
        }
        // A kept head that calls tools answered inside the region (a log that
        // starts mid-turn) cannot lose those answers: no compaction then.
        if a > 0 {
            let lo = self.items[self.hist[syn_end] as usize].seq;
            let hi = if cut < len { self.items[self.hist[cut] as usize].seq } else { u64::MAX };
            let split = (0..a).any(|q| {
                self.msg(self.hist[q])
                    .tool_uses()
                    .any(|(t, _, _)| self.result_seq.get(t).is_some_and(|&rs| rs >= lo && rs < hi))
            });
            if split {
                return Err(0);
            }
        }
        let turn_start = match c.split_turn_min_messages {
            Some(min) if cut < len && !self.kind_at(cut).turn_start() => (syn_end..cut)
                .rev()
                .find(|&p| matches!(self.kind_at(p), Kind::Human | Kind::Injected))
                .filter(|&t| (cut - t) as u64 >= min),
            _ => None,
        };
        Ok(Plan { a, syn_end, cut, turn_start })
    }

    /// The nearest cut point at or after `i` (the policy's kind, then any
    /// assistant message), else the nearest pair-safe point before it.
    fn snap(&self, i: usize, lo: usize) -> Option<usize> {
        let len = self.hist.len();
        let ok = |k: Kind| match self.p.compact.cut_points {
            CutPoints::User => k.turn_start(),
            CutPoints::UserOrAssistant => k.turn_start() || k == Kind::Assistant,
        };
        let safe = |k: Kind| k.turn_start() || k == Kind::Assistant;
        (i..len)
            .find(|&p| ok(self.kind_at(p)))
            .or_else(|| (i..len).find(|&p| safe(self.kind_at(p))))
            .or_else(|| (lo + 1..i).rev().find(|&p| safe(self.kind_at(p))))
    }

    /// Opal `force: true`: compact all but the last 2 messages (pair-safe).
    fn force_cut(&self, lo: usize) -> Option<usize> {
        // Never past the end: with an empty history (a request over the window
        // from the system prompt alone) there is nothing to compact.
        let mut cut = self.hist.len().saturating_sub(2).max(lo + 1).min(self.hist.len());
        while cut > lo && cut < self.hist.len() && self.kind_at(cut) == Kind::ToolResult {
            cut -= 1;
        }
        (cut > lo).then_some(cut)
    }

    /// Pull the cut back until no kept tool result answers a replaced tool use
    /// (results can arrive late, or the cut rule may land between a pair), and
    /// no tool use whose result is still to come is replaced.
    fn pair_safe(&self, lo: usize, mut cut: usize) -> Option<usize> {
        loop {
            // Nothing kept (a whole-history cut): only uses still waiting for
            // their results hold the cut back.
            let cut_seq = match self.hist.get(cut) {
                Some(&id) => self.items[id as usize].seq,
                None => u64::MAX,
            };
            let violating = (lo..cut).find(|&pos| {
                let id = self.hist[pos];
                self.items[id as usize].kind == Kind::Assistant
                    && self.msg(id).tool_uses().any(|(t, _, _)| match self.result_seq.get(t) {
                        Some(&rs) => rs >= cut_seq,
                        // Not answered yet: kept only if it ever will be.
                        None => self.answered.contains(t),
                    })
            });
            match violating {
                Some(p) if p > lo => cut = p,
                Some(_) => return None,
                None => return Some(cut),
            }
        }
    }

    fn run_summarizer(&self, req: &SummaryRequest<'_>) -> Got {
        match self.summarizer.summarize(req) {
            Ok(s) => {
                let fell_back = s.fallback.is_some();
                Got::Summary(s, fell_back)
            }
            Err(e) => {
                let why = |mut s: Summary| {
                    s.fallback = Some(e.to_string());
                    Got::Summary(s, true)
                };
                match self.p.compact.fallback {
                    Fallback::Truncate => Truncate.summarize(req).map_or(Got::Skip, why),
                    Fallback::Extractive => Extractive.summarize(req).map_or(Got::Skip, why),
                    Fallback::Drop => Got::Drop(e.to_string()),
                    Fallback::Skip => Got::Skip,
                }
            }
        }
    }

    /// Attempt a compaction. `measured` is the size that fired it.
    ///
    /// An attempt that would free less than `min_gain_tokens` is not applied: it
    /// is reported once as a no-progress compaction and the policy backs off
    /// (`back_off`). To make the most of a small region, the summary's budget is
    /// what the region frees beyond `min_gain_tokens` once the other new
    /// messages (template, acknowledgement, retained user messages, rebuilt first
    /// message) are paid for, capped by `summary_max_tokens`; a region that
    /// cannot pay for them is given up without calling the summarizer.
    pub(super) fn compact(&mut self, reason: CompactionReason, measured: u64, keep_override: Option<u64>, force: bool) {
        let p = self.p;
        let c = &p.compact;
        let before = self.hist_tokens;
        let Plan { a, syn_end, cut, turn_start } = match self.plan(keep_override, force) {
            Ok(plan) => plan,
            Err(need) => {
                // Worth trying again once the history outgrows what is kept by
                // at least the minimum gain.
                let need = if need > 0 { need.saturating_add(c.min_gain_tokens) } else { 0 };
                self.compactions.push(self.event(reason, measured, before, before, SummaryOutcome::None));
                self.back_off(reason, need);
                return;
            }
        };
        let len = self.hist.len();
        let hist_end = turn_start.unwrap_or(cut);
        let prev_pos = (a..syn_end).rev().find(|&q| self.kind_at(q) == Kind::Summary);
        // specs/003 merges "original request + summary" into the first message: a
        // later compaction replaces that summary block (it does not pile up).
        let prev_merged: Option<Message> = (c.placement == Placement::MergeFirst && a >= 1)
            .then(|| self.hist[a - 1])
            .filter(|&id| self.items[id as usize].kind == Kind::Merged)
            .and_then(|id| self.msg(id).blocks.last().cloned())
            .map(|b| Message::new(Role::User, Origin::CompactSummary, vec![b]));
        let had_previous = prev_pos.is_some() || prev_merged.is_some();
        let iterative = c.iterative_update && had_previous && self.last_summary.is_some();

        // Verbatim user messages (Codex), newest first within the budget.
        let mut retained: Vec<(Option<usize>, Message)> = Vec::new();
        if let Some(budget) = c.user_message_budget_tokens {
            let mut remaining = budget;
            for q in (a..cut).rev() {
                if remaining == 0 {
                    break;
                }
                let id = self.hist[q];
                let it = &self.items[id as usize];
                if !matches!(it.kind, Kind::Human | Kind::Retained) {
                    continue;
                }
                let m = self.msg(id);
                let text = human_text(m);
                let tokens = (text.len() as u64).div_ceil(4);
                let kept = if tokens <= remaining {
                    remaining -= tokens;
                    text
                } else {
                    let chars = (remaining * 4) as usize;
                    remaining = 0;
                    truncate_middle(&text, chars)
                };
                let mut copy = Message::new(Role::User, Origin::Human, vec![Block::text(kept)]);
                copy.source_line = m.source_line;
                copy.timestamp = m.timestamp;
                retained.push((it.src.or(it.copy_of), copy));
            }
            retained.reverse();
        }

        // The summary's room: what the region frees, less the new messages that
        // are not the summary, less the minimum gain.
        let summary_text_of = |body: &str| {
            let mut t = c.summary_template.replacen("{summary}", body, 1);
            if c.append_last_user_request
                && let Some(q) = (a..cut).rev().find(|&q| matches!(self.kind_at(q), Kind::Human | Kind::Retained))
            {
                t.push_str("\n\nLast request from user was: ");
                t.push_str(&human_text(self.msg(self.hist[q])));
            }
            t
        };
        // The first kept message that takes part in alternation: system messages
        // do not (the Anthropic API sends them apart), so look past them.
        let next_is_user =
            (cut..len).map(|q| self.msg(self.hist[q]).role).find(|&r| r != Role::System) == Some(Role::User);
        let merge_target = (c.placement == Placement::MergeFirst && a >= 1)
            .then(|| a - 1)
            .filter(|&q| self.msg(self.hist[q]).role == Role::User);
        // The first message as a merge rebuilds it: the original request, not a
        // previously merged one.
        let merge_base = |q: usize| {
            let id = self.hist[q];
            let mut m = match self.items[id as usize].src {
                Some(src) => self.s.messages[src].clone(),
                None => self.msg(id).clone(),
            };
            m.origin = Origin::CompactSummary;
            m
        };
        let summary_msg = |role, text: String| Message::new(role, Origin::CompactSummary, vec![Block::text(text)]);
        let ack = || Message::new(Role::Assistant, Origin::Injected, vec![Block::text(c.ack_text.clone())]);
        let removed_tokens: u64 = (a..cut).map(|q| self.items[self.hist[q] as usize].tokens).sum();
        let merged_old = merge_target.map_or(0, |q| self.items[self.hist[q] as usize].tokens);
        // Estimated from texts and cached counts (no message is estimated twice);
        // the exact size is checked once the summary exists.
        let text_msg = |t: &str| self.est.text_tokens(t) + self.overhead;
        let frame = text_msg(&summary_text_of(""))
            + merge_target.map_or(0, |q| {
                let it = &self.items[self.hist[q] as usize];
                it.src.map_or(it.tokens, |src| self.toks[src] + self.overhead)
            });
        let acks = if next_is_user && matches!(c.placement, Placement::UserAssistantPair | Placement::MergeFirst) {
            text_msg(&c.ack_text)
        } else {
            0
        };
        let fixed = frame + acks + retained.iter().map(|(_, m)| text_msg(&human_text(m))).sum::<u64>();
        let freeable = removed_tokens + merged_old;
        // What the calibrated estimate of the replaced messages adds (content
        // the log does not show, tokenizer error) goes with them: it counts for
        // the gain. The estimate itself must still shrink.
        let removed_corr: i64 = (a..cut).map(|q| self.items[self.hist[q] as usize].corr).sum();
        let gain_room = (freeable as i64).saturating_add(removed_corr) - (fixed + c.min_gain_tokens) as i64;
        let room = freeable.saturating_sub(fixed + 1).min(gain_room.max(0) as u64);
        if room == 0 {
            // Even an empty summary would not free enough: worth trying again
            // once the region is bigger by the difference.
            let need = (fixed + c.min_gain_tokens + 1).saturating_sub(freeable.saturating_add_signed(removed_corr));
            self.compactions.push(self.event(reason, measured, before, before, SummaryOutcome::None));
            self.back_off(reason, need);
            return;
        }
        let summary_max = c.summary_max_tokens.min(room);

        // Summarizer inputs: the history part and, for a split turn, its prefix.
        // Without iterative update a previous summary is summarized as a message.
        let keep_in_input = |k: Kind| k != Kind::Ack && !(iterative && k == Kind::Summary);
        let mut hist_msgs: Vec<Cow<'_, Message>> = Vec::new();
        if let (Some(m), false) = (&prev_merged, iterative) {
            hist_msgs.push(Cow::Owned(m.clone()));
        }
        hist_msgs
            .extend((a..hist_end).filter(|&q| keep_in_input(self.kind_at(q))).map(|q| self.hist_msg(self.hist[q])));
        let prefix_msgs: Vec<Cow<'_, Message>> =
            turn_start.map(|t| (t..cut).map(|q| self.hist_msg(self.hist[q])).collect()).unwrap_or_default();
        let hist_refs: Vec<&Message> = hist_msgs.iter().map(|m| m.as_ref()).collect();
        let prefix_refs: Vec<&Message> = prefix_msgs.iter().map(|m| m.as_ref()).collect();
        let mut ops = FileOps::default();
        for &m in hist_refs.iter().chain(&prefix_refs) {
            // The session's own messages (not pruned copies) have their
            // operations listed once per session when a caller made the facts.
            let known =
                self.facts.zip(crate::summarize::index_in(&self.s.messages, m)).and_then(|(f, i)| f.file_ops(i));
            match known {
                Some(list) => list.iter().for_each(|(kind, path)| ops.add(*kind, path.clone())),
                None => ops.add_message(m),
            }
        }
        if c.file_ops {
            ops.merge(&self.file_ops);
        }
        let limits = InputLimits {
            preview_head_chars: c.preview_head_chars.map(|x| x as usize),
            preview_tail_chars: c.preview_tail_chars as usize,
            input_cap_chars: c.input_cap_chars.map(|x| x as usize),
        };
        let previous = if iterative { self.last_summary.as_deref() } else { None };
        let split = turn_start.is_some();
        // A split summary shares the budget: 60% history, 40% turn prefix, less
        // room for the two headings that join them.
        let (max_hist, max_prefix) = if split {
            let room = summary_max.saturating_sub(16).max(2);
            (room * 3 / 5, room * 2 / 5)
        } else {
            (summary_max, 0)
        };
        let history_part = if split && hist_refs.is_empty() && previous.is_none() {
            None
        } else {
            Some(self.run_summarizer(&SummaryRequest {
                part: SummaryPart::History,
                messages: &hist_refs,
                previous_summary: previous,
                file_ops: &ops,
                max_tokens: max_hist.max(1),
                limits,
                estimator: self.est,
                context: Some(RequestContext { session: self.s, policy: &self.p.name }),
            }))
        };
        let prefix_part = split.then(|| {
            self.run_summarizer(&SummaryRequest {
                part: SummaryPart::TurnPrefix,
                messages: &prefix_refs,
                previous_summary: None,
                file_ops: &ops,
                max_tokens: max_prefix.max(1),
                limits,
                estimator: self.est,
                context: Some(RequestContext { session: self.s, policy: &self.p.name }),
            })
        });
        let mut usage = SummarizerUsage::default();
        let mut fallback = false;
        let mut result_ops = ops;
        let mut texts: Vec<Option<String>> = Vec::new();
        let mut outcome_drop = false;
        let mut outcome_skip = false;
        let mut reasons: Vec<String> = Vec::new();
        for part in [history_part, prefix_part] {
            match part {
                None => texts.push(None),
                Some(Got::Summary(s, fb)) => {
                    usage.add(&s.usage);
                    fallback |= fb;
                    reasons.extend(s.fallback);
                    result_ops.merge(&s.file_ops);
                    texts.push(Some(s.text));
                }
                Some(Got::Drop(why)) => {
                    outcome_drop = true;
                    reasons.push(why);
                }
                Some(Got::Skip) => outcome_skip = true,
            }
        }
        drop(hist_msgs);
        drop(prefix_msgs);
        if outcome_skip {
            let mut ev = self.event(reason, measured, before, before, SummaryOutcome::None);
            ev.summarizer_usage = usage;
            self.compactions.push(ev);
            self.back_off(reason, 0);
            return;
        }
        let body: Option<String> = if outcome_drop {
            None
        } else {
            let mut parts = texts.into_iter();
            Some(match (parts.next().flatten(), parts.next().flatten()) {
                (Some(h), Some(t)) => {
                    format!("## History Summary\n\n{h}\n\n---\n\n## Turn Context (split turn)\n\n{t}")
                }
                (None, Some(t)) => format!("## Turn Context (split turn)\n\n{t}"),
                (Some(h), None) => h,
                (None, None) => String::new(),
            })
        };

        // The summary message(s), per placement.
        let summary_text = body.as_deref().map(summary_text_of);
        let mut new_msgs: Vec<(Kind, Option<usize>, Message)> =
            retained.into_iter().map(|(src, m)| (Kind::Retained, src, m)).collect();
        let retained_srcs: Vec<usize> = new_msgs.iter().filter_map(|(_, s, _)| *s).collect();
        let mut merged: Option<Message> = None;
        if let Some(text) = &summary_text {
            match c.placement {
                Placement::User => new_msgs.push((Kind::Summary, None, summary_msg(Role::User, text.clone()))),
                Placement::System => new_msgs.push((Kind::Summary, None, summary_msg(Role::System, text.clone()))),
                Placement::UserAssistantPair => {
                    new_msgs.push((Kind::Summary, None, summary_msg(Role::User, text.clone())));
                    if next_is_user {
                        new_msgs.push((Kind::Ack, None, ack()));
                    }
                }
                Placement::MergeFirst => {
                    match merge_target {
                        Some(q) => {
                            let mut m = merge_base(q);
                            m.blocks.push(Block::text(text.clone()));
                            merged = Some(m);
                        }
                        None => new_msgs.push((Kind::Summary, None, summary_msg(Role::User, text.clone()))),
                    }
                    if next_is_user {
                        new_msgs.push((Kind::Ack, None, ack()));
                    }
                }
            }
        }

        // Decide on token totals before touching anything.
        let new_tokens: Vec<(u64, u64)> = new_msgs.iter().map(|(_, _, m)| self.both_of(m)).collect();
        // As history will hold it: with persisted pruning, the merge target's
        // pruned blocks stay pruned in the rebuilt message.
        let merged_tokens = merged.as_ref().map(|m| match merge_target.map(|q| &self.items[self.hist[q] as usize]) {
            Some(it) if self.p.prune.persist && !it.pruned.is_empty() => {
                let mut m = m.clone();
                for (b, blk) in &it.pruned {
                    if let Some(slot) = m.blocks.get_mut(*b as usize) {
                        *slot = blk.clone();
                    }
                }
                self.both_of(&m)
            }
            _ => self.both_of(m),
        });
        let after = before - removed_tokens
            + new_tokens.iter().map(|t| t.0).sum::<u64>()
            + merged_tokens.map_or(merged_old, |t| t.0)
            - merged_old;
        let freed = (before as i64 - after as i64).saturating_add(removed_corr).max(0) as u64;
        // Not applied unless it frees the minimum (and shrinks the estimate): a
        // compaction that frees less is the loop real agents fall into.
        let applied = after < before && freed >= c.min_gain_tokens;
        let outcome = match (&body, fallback) {
            (None, _) => SummaryOutcome::Dropped,
            (Some(_), true) => SummaryOutcome::Fallback,
            (Some(_), false) => SummaryOutcome::Summarizer,
        };
        let mut ev = self.event(reason, measured, before, if applied { after } else { before }, outcome);
        ev.replaced = (a..cut).filter_map(|q| self.items[self.hist[q] as usize].src).collect();
        ev.replaced_previous_summary = had_previous;
        ev.kept_head = (0..a).filter_map(|q| self.items[self.hist[q] as usize].src).collect();
        ev.retained_user_messages = retained_srcs;
        ev.kept_from = (cut < len).then(|| self.items[self.hist[cut] as usize].src).flatten();
        ev.split_turn = split;
        ev.summary = body.clone().unwrap_or_default();
        ev.summary_tokens = summary_text.as_deref().map_or(0, |t| self.est.text_tokens(t));
        ev.file_ops = result_ops.clone();
        ev.summarizer_usage = usage;
        ev.fallback_reason = (!reasons.is_empty()).then(|| reasons.join("; "));
        ev.applied = applied;
        ev.no_progress = !applied;
        if !applied {
            self.compactions.push(ev);
            // The summary came out bigger than its room (an estimator that does
            // not add up, a summarizer that overshoots): the region must grow by
            // the shortfall.
            self.back_off(reason, c.min_gain_tokens.saturating_sub(freed));
            return;
        }
        // The history changed: whatever blocked either kind of attempt is stale.
        self.backoff = Default::default();

        // Apply: the cache prefix that survives, units, history, totals.
        let head_end = merge_target.unwrap_or(a);
        // As the previous request carried an item, in both units.
        let sent = |it: &Item| if self.prev_pruned { (it.view_tokens, it.mview) } else { (it.tokens, it.mtokens) };
        let (head, mhead) = (0..head_end).map(|q| sent(&self.items[self.hist[q] as usize])).fold((0, 0), add2);
        // After the head, the new messages may still start like the old ones (an
        // identical summary, re-compacting an unchanged history): those bytes are
        // still a cache hit. Compared message by message until the first difference.
        let (mut same, mut msame) = (0u64, 0u64);
        {
            let new_front: Vec<&Message> = merged.iter().chain(new_msgs.iter().map(|x| &x.2)).collect();
            let (old_front, tail) = (cut - head_end, len - cut);
            let mut j = 0;
            loop {
                if j >= old_front && j >= new_front.len() {
                    // Both sides continue with the same kept tail: nothing changed.
                    (same, msame) = (u64::MAX / 2, u64::MAX / 2);
                    break;
                }
                let new_m: Option<Cow<'_, Message>> = if j < new_front.len() {
                    Some(Cow::Borrowed(new_front[j]))
                } else if j - new_front.len() < tail {
                    Some(self.request_msg(self.hist[cut + j - new_front.len()]))
                } else {
                    None
                };
                let old_q = if j < old_front { head_end + j } else { cut + j - old_front };
                let (Some(new_m), true) = (new_m, old_q < len) else { break };
                if *new_m != *self.request_msg(self.hist[old_q]) {
                    break;
                }
                (same, msame) = add2((same, msame), sent(&self.items[self.hist[old_q] as usize]));
                j += 1;
            }
        }
        let kept = (self.system + head).saturating_add(same);
        self.compaction_prefix = Some(self.compaction_prefix.map_or(kept, |p| p.min(kept)));
        let mkept = (self.mt.system + mhead).saturating_add(msame);
        self.mt.compaction_prefix = Some(self.mt.compaction_prefix.map_or(mkept, |p| p.min(mkept)));
        self.tail_start_seq = if cut < len { self.items[self.hist[cut] as usize].seq } else { self.next_seq };
        for q in a..cut {
            let it = &mut self.items[self.hist[q] as usize];
            it.live = false;
            if it.kind.synthetic() {
                self.synth_view -= it.view_tokens;
                self.mt.synth_view -= it.mview;
            } else {
                self.fen.add(it.seq, -(it.view_tokens as i64));
                self.mt.fen.add(it.seq, -(it.mview as i64));
                self.pruned_seqs.remove(&it.seq);
            }
        }
        self.hist_corr -= removed_corr;
        self.mt.hist_corr -= (a..cut).map(|q| self.items[self.hist[q] as usize].mcorr).sum::<i64>();
        let unit_start: usize = (0..a).map(|q| self.items[self.hist[q] as usize].units as usize).sum();
        let unit_count: usize = (a..cut).map(|q| self.items[self.hist[q] as usize].units as usize).sum();
        self.remove_units(unit_start, unit_count);
        let removed_view: u64 = (a..cut).map(|q| self.items[self.hist[q] as usize].view_tokens).sum();
        let (removed_m, removed_mview) =
            (a..cut).map(|q| &self.items[self.hist[q] as usize]).map(|it| (it.mtokens, it.mview)).fold((0, 0), add2);
        self.hist.drain(a..cut);
        self.hist_tokens -= removed_tokens;
        self.view_tokens -= removed_view;
        self.mt.hist -= removed_m;
        self.mt.view -= removed_mview;
        if let (Some(q), Some(m), Some((t, mt))) = (merge_target, merged, merged_tokens) {
            let id = self.hist[q];
            let was_synthetic = self.items[id as usize].kind.synthetic();
            let (old_tokens, old_view, old_m, old_mview, seq) = {
                let it = &mut self.items[id as usize];
                it.owned = Some(m);
                it.kind = Kind::Merged;
                (it.tokens, it.view_tokens, it.mtokens, it.mview, it.seq)
            };
            // Pruned blocks of the first message keep their indices in the merged one.
            let (view, mview) =
                if self.items[id as usize].pruned.is_empty() { (t, mt) } else { self.both_of(&self.view_msg(id)) };
            let it = &mut self.items[id as usize];
            self.hist_tokens = self.hist_tokens + t - old_tokens;
            self.view_tokens = self.view_tokens + view - old_view;
            self.mt.hist = self.mt.hist + mt - old_m;
            self.mt.view = self.mt.view + mview - old_mview;
            it.tokens = t;
            it.view_tokens = view;
            it.mtokens = mt;
            it.mview = mview;
            if was_synthetic {
                self.synth_view = self.synth_view + view - old_view;
                self.mt.synth_view = self.mt.synth_view + mview - old_mview;
            } else {
                self.fen.add(seq, -(old_view as i64));
                self.mt.fen.add(seq, -(old_mview as i64));
                self.pruned_seqs.remove(&seq);
                self.synth_view += view;
                self.mt.synth_view += mview;
            }
        }
        for (j, ((kind, copy_of, m), (t, mt))) in new_msgs.into_iter().zip(new_tokens).enumerate() {
            let id = self.push_item(Item {
                src: None,
                owned: Some(m),
                kind,
                seq: u64::MAX,
                tokens: t,
                view_tokens: t,
                pruned: Vec::new(),
                units: 0,
                dirty: false,
                copy_of,
                corr: 0,
                mtokens: mt,
                mview: mt,
                mcorr: 0,
                live: true,
            });
            self.hist.insert(a + j, id);
            self.hist_tokens += t;
            self.view_tokens += t;
            self.synth_view += t;
            self.mt.hist += mt;
            self.mt.view += mt;
            self.mt.synth_view += mt;
        }
        self.flushed = false;
        self.last_summary = body;
        if c.file_ops {
            self.file_ops = result_ops;
        }
        self.compactions.push(ev);
    }

    /// After a no-progress attempt: no attempt of the same kind until the
    /// history (`hist_tokens`) has grown by `need` (a lower bound on the growth
    /// that could make it worth it, when known) and by at least
    /// `min_gain_tokens × 2^(k−1)` after the k-th no-progress attempt in a row.
    /// The doubling is what stops the every-other-call loop when each call adds
    /// about `min_gain_tokens` and the summary grows with the region: k attempts
    /// need the history to grow by `min_gain_tokens × (2^k − 1)`. An applied
    /// compaction resets both kinds.
    ///
    /// Threshold compactions and overflow recovery back off separately: their
    /// cuts differ (Opal's recovery keeps less and forces a cut), so one may
    /// make progress where the other cannot.
    fn back_off(&mut self, reason: CompactionReason, need: u64) {
        let hist = self.hist_tokens;
        let b = &mut self.backoff[reason as usize];
        b.streak = b.streak.saturating_add(1);
        let step = self.p.compact.min_gain_tokens.max(1).saturating_mul(1u64 << (b.streak - 1).min(40));
        b.retry_at = Some(hist.saturating_add(step.max(need)));
    }

    fn event(
        &self,
        reason: CompactionReason,
        measured: u64,
        before: u64,
        after: u64,
        outcome: SummaryOutcome,
    ) -> CompactionEvent {
        CompactionEvent {
            call: self.call_idx,
            reason,
            measured_tokens: measured,
            tokens_before: before,
            tokens_after: after,
            replaced: Vec::new(),
            replaced_previous_summary: false,
            kept_head: Vec::new(),
            retained_user_messages: Vec::new(),
            kept_from: None,
            split_turn: false,
            summary: String::new(),
            summary_tokens: 0,
            summarizer: self.summarizer.name().to_string(),
            outcome,
            file_ops: FileOps::default(),
            summarizer_usage: SummarizerUsage::default(),
            fallback_reason: None,
            applied: false,
            no_progress: true,
        }
    }
}

/// Keep `max` characters of `s`: half from the start, half from the end (Codex
/// truncates the user message that overflows its budget).
fn truncate_middle(s: &str, max: usize) -> String {
    let total = s.chars().count();
    if total <= max {
        return s.to_string();
    }
    let half = max / 2;
    format!("{}…{} chars truncated…{}", head_chars(s, half), total - 2 * half, tail_chars(s, half))
}

/// Component-wise sum of two pairs of token counts.
fn add2(a: (u64, u64), b: (u64, u64)) -> (u64, u64) {
    (a.0 + b.0, a.1 + b.1)
}
