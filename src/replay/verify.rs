//! The debug checks of a replay (`--check-invariants`, and the totals
//! recomputed from scratch in tests): O(history) per call.

use super::ReplayOptions;
use super::engine::Engine;
use crate::invariants::{self, CheckOptions, Violation};
use crate::model::Message;

impl Engine<'_> {
    /// Invariant and totals checks on the current view (debug; O(history)).
    pub fn check(&mut self, _ci: usize, opts: ReplayOptions) -> Vec<Violation> {
        let mut out = Vec::new();
        if opts.verify_totals {
            // The cache prefix, recomputed by comparing this request with the last.
            let pruned_now = self.p.prune.enabled && self.prev_pruned;
            let request: Vec<Message> = self
                .hist
                .iter()
                .map(|&id| if pruned_now { self.view_msg(id).into_owned() } else { self.hist_msg(id).into_owned() })
                .collect();
            if let Some(last) = &self.last_request {
                let common = last.iter().zip(&request).take_while(|(a, b)| a == b).count();
                let want = self.system + last[..common].iter().map(|m| self.tokens_of(m)).sum::<u64>();
                if want != self.last_prefix {
                    out.push(Violation::PrefixMismatch { incremental: self.last_prefix, recomputed: want });
                }
                let mwant = self.mt.system + last[..common].iter().map(|m| self.mtokens_of(m)).sum::<u64>();
                if mwant != self.mt.last_prefix {
                    out.push(Violation::PrefixMismatch { incremental: self.mt.last_prefix, recomputed: mwant });
                }
            }
            self.last_request = Some(request);
            let (mut h, mut v, mut mh, mut mv) = (0u64, 0u64, 0u64, 0u64);
            for &id in &self.hist {
                let hm = self.hist_msg(id);
                let vm = self.view_msg(id);
                h += self.tokens_of(&hm);
                v += self.tokens_of(&vm);
                mh += self.mtokens_of(&hm);
                mv += self.mtokens_of(&vm);
            }
            let corr: i64 = self.hist.iter().map(|&id| self.items[id as usize].corr).sum();
            if corr != self.hist_corr {
                out.push(Violation::CalibrationMismatch { incremental: self.hist_corr, recomputed: corr });
            }
            let mcorr: i64 = self.hist.iter().map(|&id| self.items[id as usize].mcorr).sum();
            if mcorr != self.mt.hist_corr {
                out.push(Violation::CalibrationMismatch { incremental: self.mt.hist_corr, recomputed: mcorr });
            }
            for (hi, hr, vi, vr) in [(self.hist_tokens, h, self.view_tokens, v), (self.mt.hist, mh, self.mt.view, mv)] {
                if hi != hr || vi != vr {
                    out.push(Violation::TotalsMismatch {
                        history_incremental: hi,
                        history_recomputed: hr,
                        view_incremental: vi,
                        view_recomputed: vr,
                    });
                }
            }
        }
        if opts.check_invariants {
            if self.unpaired.is_none() {
                // Over what the policy replays: a tool use (or result) that a
                // recorded compaction inserted is skipped, leaving its partner alone.
                self.unpaired = Some(invariants::source_unpaired_ids(self.s));
            }
            let view = self.view_messages();
            let history: Vec<Message> = self.hist.iter().map(|&id| self.hist_msg(id).into_owned()).collect();
            let made: Vec<bool> = self.hist.iter().map(|&id| self.items[id as usize].src.is_none()).collect();
            let copts = CheckOptions {
                made: Some(&made),
                alternation: self.p.compact.alternation,
                allow_pending_tool_uses: true,
                ignore_ids: self.unpaired.as_ref(),
                images_untouchable: self.p.prune.skip_images && self.p.prune.protect_recent_images.is_none(),
            };
            if let Err(v) = invariants::check(&view, &copts) {
                out.extend(v);
            }
            if let Err(v) = invariants::check_pruning(&history, &view, &copts) {
                out.extend(v);
            }
            for c in self.compactions.iter().filter(|c| c.call == self.call_idx && c.applied) {
                if c.tokens_after > c.tokens_before {
                    out.push(Violation::CompactionGrew { before: c.tokens_before, after: c.tokens_after });
                }
            }
        }
        out
    }
}
