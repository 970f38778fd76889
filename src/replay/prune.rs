//! Layer 1: tool-output pruning (DESIGN.md §4 `prune`).
//!
//! Every rule is a frontier over the queue of tool results in history order. A
//! result's age only grows and its state only moves forward (kept → capped →
//! trimmed → cleared), so each frontier is a pointer that only advances and each
//! result is visited a bounded number of times over the whole session:
//!
//! - `keep_ptr`: results before it are old enough to leave the `keep_last`
//!   protection (age in tool-result messages or assistant turns);
//! - `soft_ptr`: soft-trim (specs/000, specs/004, OpenClaw), optionally only when
//!   the request is at least `soft_trim_ratio` of the window;
//! - `hard_ptr`: hard-clear by age (`hard_clear_after`) or, OpenClaw-style,
//!   oldest first while the request is at least `hard_clear_ratio` of the window
//!   and prunable output reaches `min_prunable_tool_chars`;
//! - `oc_*`: opencode — keep the newest `protect_tokens` of tool output outside the
//!   last user turns, clear the rest in one batch once it exceeds `minimum_tokens`;
//! - `ctu_*`: Anthropic `clear_tool_uses` — once the request exceeds `trigger`,
//!   clear all but the last `keep` tool uses, if at least `clear_at_least` goes.
//!
//! A rule that a per-request design re-evaluates from scratch (OpenClaw's ratios)
//! is approximated by never un-pruning: after a compaction lowers the ratio, what
//! was pruned stays pruned.

use super::engine::{Engine, UnitState};
use super::{PruneEvent, PruneKind};
use crate::model::Block;
use crate::policy::AgeUnit;
use crate::summarize::{head_chars, tail_chars, tool_result_text};

/// Fill `{name}` placeholders in one pass (values are never re-scanned, so a
/// tool output containing `{tail}` is copied verbatim).
pub(super) fn render_template(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + vars.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hit = after.find('}').and_then(|close| {
            let name = &after[..close];
            vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (close, *v))
        });
        match hit {
            Some((close, v)) => {
                out.push_str(v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

impl Engine<'_> {
    fn age(&self, k: usize) -> u64 {
        let u = &self.units[k];
        match self.p.prune.age_unit {
            AgeUnit::ToolResults => self.tool_msgs.saturating_sub(u.msg_ord + 1),
            AgeUnit::AssistantTurns => self.assistants.saturating_sub(u.asst_before),
        }
    }

    /// Share of the window the current view takes (OpenClaw counts the messages,
    /// not the system prompt).
    fn ratio(&self) -> f64 {
        self.view_tokens as f64 / self.p.context_window as f64
    }

    /// An image result is protected from hard-clear: always with `skip_images`,
    /// or (OpenClaw) when it is among the newest N image results still prunable.
    fn image_protected(&self, k: usize) -> bool {
        match self.p.prune.protect_recent_images {
            Some(n) => {
                let imgs_below_keep =
                    if self.keep_ptr < self.units.len() { self.units[self.keep_ptr].img_ord } else { self.images };
                imgs_below_keep.saturating_sub(self.units[k].img_ord + 1) < n
            }
            None => self.p.prune.skip_images,
        }
    }

    fn clearable(&self, k: usize) -> bool {
        let u = &self.units[k];
        !u.protected && u.state != UnitState::Cleared && !(u.has_image && self.image_protected(k))
    }

    /// Advance every pruning frontier for the current call.
    pub(super) fn prune_pass(&mut self) {
        let pr = &self.p.prune;
        // Leave the keep_last protection.
        while self.keep_ptr < self.units.len() && self.age(self.keep_ptr) >= pr.keep_last {
            let u = &self.units[self.keep_ptr];
            if !u.protected {
                self.prunable_chars += u.cur_chars;
            }
            self.keep_ptr += 1;
        }

        // Soft-trim.
        if let Some(limit) = pr.soft_trim_chars
            && pr.soft_trim_ratio.is_none_or(|r| self.ratio() >= r)
        {
            while self.soft_ptr < self.keep_ptr {
                let k = self.soft_ptr;
                let u = &self.units[k];
                // Images are skipped: hard to trim partially without losing them.
                if !u.protected && !u.has_image && u.state < UnitState::Trimmed && u.chars > limit {
                    self.transition(k, UnitState::Trimmed);
                }
                self.soft_ptr += 1;
            }
            self.flush_dirty();
        }

        // Hard-clear by age.
        if let Some(h) = pr.hard_clear_after {
            while self.hard_ptr < self.keep_ptr && self.age(self.hard_ptr) >= h {
                if self.clearable(self.hard_ptr) {
                    self.transition(self.hard_ptr, UnitState::Cleared);
                }
                self.hard_ptr += 1;
            }
            self.flush_dirty();
        }

        // Hard-clear by ratio (OpenClaw), oldest first until under the ratio.
        if let Some(hr) = pr.hard_clear_ratio
            && self.ratio() >= hr
            && self.prunable_chars >= pr.min_prunable_tool_chars
        {
            while self.hard_ptr < self.keep_ptr && self.ratio() >= hr {
                if self.clearable(self.hard_ptr) {
                    self.transition(self.hard_ptr, UnitState::Cleared);
                    self.flush_dirty();
                }
                self.hard_ptr += 1;
            }
        }

        if pr.protect_tokens.is_some() {
            self.prune_opencode();
        }
        if pr.clear_tool_uses.enabled {
            self.prune_clear_tool_uses();
        }
    }

    /// opencode `prune()`: walking back from the newest output outside the last
    /// user turns, outputs beyond the first `protect_tokens` are candidates; they
    /// are cleared together once they exceed `minimum_tokens`.
    fn prune_opencode(&mut self) {
        let pr = &self.p.prune;
        let protect = pr.protect_tokens.unwrap_or(0);
        // opencode prunes when a turn ends, skipping the last N user turns; before
        // the first request of the next turn that is the last N+1 counting it.
        let skip = pr.skip_last_user_turns + 1;
        while self.oc_skip < self.units.len() && self.units[self.oc_skip].human_before + skip <= self.humans {
            self.oc_skip += 1;
        }
        let cum_at = |e: &Engine<'_>, k: usize| if k < e.units.len() { e.units[k].oc_cum } else { e.oc_total };
        let cum_s = cum_at(self, self.oc_skip);
        self.oc_c = self.oc_c.max(self.oc_ptr);
        while self.oc_c < self.oc_skip && cum_s - self.units[self.oc_c].oc_cum > protect {
            self.oc_c += 1;
        }
        if self.oc_c == self.oc_ptr {
            return;
        }
        let pruned = cum_at(self, self.oc_c) - cum_at(self, self.oc_ptr);
        if pruned > pr.minimum_tokens {
            for k in self.oc_ptr..self.oc_c {
                if self.clearable(k) {
                    self.transition(k, UnitState::Cleared);
                }
            }
            self.oc_ptr = self.oc_c;
            self.flush_dirty();
        }
    }

    /// Anthropic `clear_tool_uses_20250919`: evaluated on the full request (the
    /// client sends everything; the server clears).
    fn prune_clear_tool_uses(&mut self) {
        let ctu = &self.p.prune.clear_tool_uses;
        let full = super::apply_drift(self.system + self.hist_tokens, self.offset());
        if full <= ctu.trigger_tokens {
            return;
        }
        let end = self.units.len().saturating_sub(ctu.keep as usize);
        self.ctu_scan = self.ctu_scan.max(self.ctu_ptr);
        while self.ctu_scan < end {
            if self.ctu_eligible(self.ctu_scan) {
                self.ctu_pending += self.units[self.ctu_scan].tokens;
            }
            self.ctu_scan += 1;
        }
        if self.ctu_pending == 0 || self.ctu_cleared + self.ctu_pending < ctu.clear_at_least {
            return;
        }
        for k in self.ctu_ptr..self.ctu_scan {
            if self.ctu_candidate(k) {
                self.ctu_cleared += self.units[k].tokens;
                self.transition(k, UnitState::Cleared);
            }
        }
        self.ctu_ptr = self.ctu_scan;
        self.ctu_pending = 0;
        self.flush_dirty();
    }

    fn ctu_candidate(&self, k: usize) -> bool {
        !self.units[k].ctu_excluded && self.clearable(k)
    }

    /// The part of `ctu_candidate` that never changes (for the pending sum).
    fn ctu_eligible(&self, k: usize) -> bool {
        !self.units[k].ctu_excluded && !self.units[k].protected
    }

    /// Move unit `k` to state `to`: replace its block in the view (or history,
    /// when pruning persists) and record the event. Never makes a result longer.
    pub(super) fn transition(&mut self, k: usize, to: UnitState) -> bool {
        let pr = &self.p.prune;
        let (item_id, block_idx, cur, chars) = {
            let u = &self.units[k];
            (u.item, u.block as usize, u.cur_chars, u.chars)
        };
        let Some(src) = self.items[item_id as usize].src else { return false };
        let Some(Block::ToolResult { tool_use_id, content, is_error }) = self.s.messages[src].blocks.get(block_idx)
        else {
            return false;
        };
        let text = tool_result_text(content);
        let new_text = match to {
            UnitState::Capped => {
                let cap = pr.cap_chars.unwrap_or(chars) as usize;
                format!("{}\n\n[… truncated: kept the first {cap} of {chars} chars]", head_chars(&text, cap))
            }
            UnitState::Trimmed => {
                if pr.head + pr.tail >= chars {
                    return false;
                }
                render_template(
                    &pr.trim_template,
                    &[
                        ("head", head_chars(&text, pr.head as usize)),
                        ("tail", tail_chars(&text, pr.tail as usize)),
                        ("head_chars", &pr.head.to_string()),
                        ("tail_chars", &pr.tail.to_string()),
                        ("total_chars", &chars.to_string()),
                    ],
                )
            }
            UnitState::Cleared => pr.placeholder.clone(),
            UnitState::Kept => return false,
        };
        let new_chars = new_text.chars().count() as u64;
        if new_chars >= cur {
            // Not worth it (the marker or placeholder would be longer); the state
            // still moves so the frontier does not revisit it.
            self.units[k].state = self.units[k].state.max(to);
            return false;
        }
        let block = Block::ToolResult {
            tool_use_id: tool_use_id.clone(),
            content: vec![Block::text(new_text)],
            is_error: *is_error,
        };
        let it = &mut self.items[item_id as usize];
        match it.pruned.binary_search_by_key(&(block_idx as u32), |(b, _)| *b) {
            Ok(i) => it.pruned[i].1 = block,
            Err(i) => it.pruned.insert(i, (block_idx as u32, block)),
        }
        if !it.dirty {
            it.dirty = true;
            self.dirty.push(item_id);
        }
        let u = &mut self.units[k];
        if k < self.keep_ptr && !u.protected {
            self.prunable_chars = self.prunable_chars.saturating_sub(cur - new_chars);
        }
        u.cur_chars = new_chars;
        u.state = to;
        let kind = match to {
            UnitState::Capped => PruneKind::Cap,
            UnitState::Trimmed => PruneKind::Soft,
            _ => PruneKind::Hard,
        };
        if kind == PruneKind::Hard {
            self.call_hard += 1;
        } else {
            self.call_soft += 1;
        }
        self.prunes.push(PruneEvent {
            call: self.call_idx,
            message_index: src,
            block: block_idx,
            tool_use_id: tool_use_id.clone(),
            kind,
            original_chars: chars,
            chars_before: cur,
            chars_after: new_chars,
        });
        true
    }

    /// Forget units `[start, start + count)` (their items left history) and
    /// shift every frontier accordingly.
    pub(super) fn remove_units(&mut self, start: usize, count: usize) {
        if count == 0 {
            return;
        }
        let end = start + count;
        for k in start..end {
            let u = &self.units[k];
            if k < self.keep_ptr && !u.protected {
                self.prunable_chars = self.prunable_chars.saturating_sub(u.cur_chars);
            }
            if k >= self.ctu_ptr && k < self.ctu_scan && self.ctu_eligible(k) {
                self.ctu_pending = self.ctu_pending.saturating_sub(u.tokens);
            }
        }
        self.units.drain(start..end);
        let shift = |p: &mut usize| {
            if *p > start {
                *p -= (*p).min(end) - start;
            }
        };
        for p in [
            &mut self.keep_ptr,
            &mut self.soft_ptr,
            &mut self.hard_ptr,
            &mut self.oc_skip,
            &mut self.oc_ptr,
            &mut self.oc_c,
            &mut self.ctu_ptr,
            &mut self.ctu_scan,
        ] {
            shift(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::render_template;

    #[test]
    fn template_is_single_pass() {
        let t = "{head}|{tail}|{n}|{x";
        assert_eq!(render_template(t, &[("head", "a{tail}"), ("tail", "b"), ("n", "3")]), "a{tail}|b|3|{x");
    }
}
