//! Layer-1 pruning loss (DESIGN.md §6): the needed atoms that a request lost
//! because the only place they were in the context was a tool result that the
//! pruning layer trimmed (head + tail kept) or cleared (placeholder).
//!
//! An atom of a pruned result is *lost* when it is not in what the pruned result
//! kept, not in any other kept result, not in the view's extra texts (a summary),
//! and not in any other block of the messages of the view. A lost atom is
//! *needed* by the same rule as for compaction: the agent uses it in F before a
//! tool result or user message re-introduces it.

use super::AtomKind;
use super::event::NeededAtom;
use super::index::{SessionAtoms, flag};
use super::view::TextView;
use crate::text::atoms as extract;
use foldhash::{HashSet, HashSetExt as _};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::ops::Range;

/// One tool result as the pruned view sent it.
#[derive(Debug, Clone, Copy)]
pub struct PrunedResult<'t> {
    /// Session index of the message holding the tool result.
    pub message: usize,
    /// Index of the `ToolResult` block in that message.
    pub block: usize,
    /// What the view kept of it: head + marker + tail for a soft trim, the
    /// placeholder (or nothing) for a hard clear.
    pub kept: &'t str,
}

/// What pruning lost at one request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PruningLoss {
    pub pruned_results: u32,
    /// Atoms that were only in the pruned parts of tool results.
    pub lost_atoms: u32,
    /// Lost atoms the agent used later before seeing them again.
    pub needed_lost: u32,
    pub needed_lost_weight: f64,
    /// The needed lost atoms, sorted by kind and value.
    pub atoms: Vec<NeededAtom>,
}

impl SessionAtoms<'_> {
    /// Pruning loss of one request. `view` are the session messages the request
    /// contains, `view_text` its other texts (a summary), `pruned` the tool
    /// results it trimmed or cleared, `future` the messages from the request's
    /// response on. Pass the results pruned at this request (or only the ones
    /// whose state changed, to count each loss once).
    pub fn pruning_loss(
        &self,
        view: &[Range<usize>],
        view_text: &[&str],
        pruned: &[PrunedResult<'_>],
        future: Range<usize>,
    ) -> PruningLoss {
        let views: Vec<TextView> = view_text.iter().map(|t| self.text_view(t)).collect();
        let refs: Vec<&TextView> = views.iter().collect();
        self.pruning_loss_with(view, &refs, pruned, &HashSet::new(), future)
    }

    /// [`SessionAtoms::pruning_loss`] with the view's extra texts already read
    /// (a replay meets the same summary at every call until the next
    /// compaction) and the tool results of the view that were cleared earlier:
    /// `cleared` lists their (message, block), whose content is gone from the
    /// view too, so an atom also found there did not survive. They are not
    /// themselves counted again (the replay evaluates each transition once, at
    /// the call where it happened).
    pub(crate) fn pruning_loss_with(
        &self,
        view: &[Range<usize>],
        view_text: &[&TextView],
        pruned: &[PrunedResult<'_>],
        cleared: &HashSet<(usize, usize)>,
        future: Range<usize>,
    ) -> PruningLoss {
        let n = self.len();
        let future = future.start.min(n)..future.end.min(n).max(future.start.min(n));
        let cwd = self.cwd.as_deref();
        // What the pruned results still show, read as tool output is read at
        // indexing; only its keys matter here.
        let mut kept = TextView::default();
        let mut found = Vec::new();
        for p in pruned {
            found.clear();
            extract::scan_text(p.kept, extract::Ctx::Code, cwd, &mut found);
            for f in &found {
                kept.add_found(f);
            }
        }
        let views: Vec<&TextView> = view_text.iter().copied().chain(std::iter::once(&kept)).collect();
        let pruned_blocks: HashSet<(usize, usize)> = pruned.iter().map(|p| (p.message, p.block)).collect();
        let mut lost: BTreeSet<u32> = BTreeSet::new();
        for p in pruned {
            for e in self.entries_of(p.message) {
                if e.block as usize == p.block && e.flags & flag::STRONG != 0 && self.defs[e.atom as usize].class != 5 {
                    lost.insert(e.atom);
                }
            }
        }
        let mut out = PruningLoss { pruned_results: pruned.len() as u32, ..PruningLoss::default() };
        let mut done: HashSet<u32> = HashSet::new();
        for id in lost {
            if done.contains(&id) {
                continue;
            }
            let family = self.family(id);
            done.extend(family.iter().copied());
            let def = &self.defs[id as usize];
            let survived = family.iter().any(|&f| {
                let d = &self.defs[f as usize];
                views.iter().any(|v| v.keys[d.class].contains(&*d.key))
                    || view.iter().any(|r| {
                        self.occ_in(f, r).iter().any(|o| {
                            let at = (o.msg as usize, o.block as usize);
                            !pruned_blocks.contains(&at) && !cleared.contains(&at)
                        })
                    })
            }) || (def.class == 4
                && views.iter().any(|v| v.hex.iter().any(|h| extract::hex_compatible(h, &def.key))));
            if survived {
                continue;
            }
            out.lost_atoms += 1;
            let Some(first) = self.first_use(&family, &future) else { continue };
            let kind = if def.class == 0 && self.modified_before(id, future.start) {
                AtomKind::ModifiedPath
            } else {
                AtomKind::of_class(def.class)
            };
            let turns = self.turns_between(future.start, first.msg);
            let weight = kind.weight() / (1.0 + turns as f64 / 20.0) * if first.arg { 1.5 } else { 1.0 };
            out.needed_lost += 1;
            out.atoms.push(NeededAtom {
                kind,
                value: def.value().to_string(),
                weight,
                first_use: first.msg,
                turns,
                tool_arg: first.arg,
            });
        }
        out.atoms.sort_by(|a, b| (a.kind, &a.value).cmp(&(b.kind, &b.value)));
        out.needed_lost_weight = out.atoms.iter().map(|a| a.weight).sum();
        out
    }
}
