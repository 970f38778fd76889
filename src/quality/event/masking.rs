//! Observation masking as a reference point: P with old tool outputs replaced
//! by a placeholder, whole or cut to a token budget, scored from the index.

use super::*;

impl PreparedEvent<'_, '_> {
    /// Observation masking as the "summary" of P: every user, assistant and
    /// tool-call item of P kept, tool outputs older than the last `keep` of the
    /// history (P ∪ T) replaced by [`MASK_PLACEHOLDER`]. Its atoms come from the
    /// session index (no re-extraction); its budget is the tokens of what it
    /// keeps plus the placeholders.
    pub fn masking(&self, keep: usize) -> CompactionQuality {
        self.masking_within(REF_MASKING, keep, None)
    }

    /// What masking keeps of P (see [`PreparedEvent::masking_within`]).
    fn mask_plan(&self, keep: usize, budget: Option<u64>) -> MaskPlan {
        let msgs = self.atoms.messages;
        let results_of = |m: usize| msgs[m].blocks.iter().filter(|b| matches!(b, Block::ToolResult { .. })).count();
        let results_in =
            |ranges: &[Range<usize>]| -> usize { ranges.iter().flat_map(Clone::clone).map(results_of).sum() };
        let keep_in_p = keep.saturating_sub(results_in(&self.kept));
        let masked = results_in(&self.replaced).saturating_sub(keep_in_p);
        let placeholder = self.est.text_tokens(MASK_PLACEHOLDER);
        // Cost of each message of P as masking leaves it.
        let mut costs: Vec<(usize, u64)> = Vec::new();
        let mut seen_results = 0;
        // Whole messages cost what the session's running sums say: estimated
        // once per session, not once per event.
        let prefix = self.atoms.token_prefix(self.est);
        let whole = |m: usize| prefix.get(m + 1).zip(prefix.get(m)).map_or(0, |(b, a)| b.saturating_sub(*a));
        for m in self.replaced.iter().flat_map(Clone::clone) {
            let results = results_of(m);
            // A message with nothing masked (its results all come after the
            // first `masked` of P) costs what it costs in P.
            let cost = if results == 0 || seen_results >= masked {
                whole(m)
            } else {
                let mut c = 0;
                let mut seen = seen_results;
                for block in &msgs[m].blocks {
                    if matches!(block, Block::ToolResult { .. }) {
                        seen += 1;
                        if seen <= masked {
                            c += placeholder;
                            continue;
                        }
                    }
                    c += self.est.block_tokens(block);
                }
                c
            };
            seen_results += results;
            costs.push((m, cost));
        }
        // Under a budget, the newest messages that fit.
        let mut first = 0;
        let mut with_text = true;
        if let Some(b) = budget {
            let mut used = 0u64;
            first = costs.len();
            while first > 0 && used + costs[first - 1].1 <= b {
                used += costs[first - 1].1;
                first -= 1;
            }
            with_text = first == 0 && used + self.replaced_text_tokens <= b;
        }
        MaskPlan { costs, first, with_text, masked }
    }

    /// The text a model reads of observation masking within `budget`: the
    /// messages masking keeps, masked results as [`MASK_PLACEHOLDER`], after
    /// `replaced_text` (P's previous summary) when it fits. What `compactor
    /// probe` gives a model for the masking candidate.
    pub fn masking_text(&self, keep: usize, budget: Option<u64>, replaced_text: &[String]) -> String {
        let msgs = self.atoms.messages;
        let MaskPlan { costs, first, with_text, masked } = self.mask_plan(keep, budget);
        let results_of = |m: usize| msgs[m].blocks.iter().filter(|b| matches!(b, Block::ToolResult { .. })).count();
        let mut seen: usize = costs[..first].iter().map(|&(m, _)| results_of(m)).sum();
        let mut kept: Vec<crate::model::Message> = Vec::new();
        for &(m, _) in &costs[first..] {
            let mut msg = msgs[m].clone();
            for b in &mut msg.blocks {
                if let Block::ToolResult { content, .. } = b {
                    seen += 1;
                    if seen <= masked {
                        *content = vec![Block::Text { text: MASK_PLACEHOLDER.to_string() }];
                    }
                }
            }
            kept.push(msg);
        }
        let refs: Vec<&crate::model::Message> = kept.iter().collect();
        let text = crate::summarize::serialize_transcript(&refs, &crate::summarize::InputLimits::default());
        if with_text && !replaced_text.is_empty() { format!("{}\n\n{text}", replaced_text.join("\n\n")) } else { text }
    }

    /// Observation masking cut to a token budget: of the masked history (see
    /// [`PreparedEvent::masking`]) only the newest messages that fit `budget`
    /// are kept, the older ones (and a previous summary) dropped. The
    /// equal-budget point of quality.md §c.4: masking at the summary's size.
    pub fn masking_within(&self, name: &str, keep: usize, budget: Option<u64>) -> CompactionQuality {
        let msgs = self.atoms.messages;
        let MaskPlan { costs, first, with_text, masked } = self.mask_plan(keep, budget);
        let results_of = |m: usize| msgs[m].blocks.iter().filter(|b| matches!(b, Block::ToolResult { .. })).count();
        let mut view = TextView::default();
        let (mut tokens, mut chars) = (0u64, 0u64);
        if with_text {
            tokens += self.replaced_text_tokens;
            chars += self.replaced_text_chars;
            for v in &self.replaced_views {
                view.merge(v);
            }
        }
        // Result ordinal of the first kept message, to know which are masked.
        let mut seen_results: usize = costs[..first].iter().map(|&(m, _)| results_of(m)).sum();
        // P's atoms, by id.
        let n_atoms = self.atoms.defs.len();
        let mut p_atoms =
            HeldAtoms { atoms: self.atoms, keys: Bits::with_len(n_atoms), listed: Bits::with_len(n_atoms) };
        // The tokens of blocks other than tool results: named from the
        // session's index (each event of each policy asks P's), or, past its
        // ids, copied into the view as the results' are.
        let index = self.atoms.block_tokens();
        let mut held: Vec<Range<u32>> = Vec::new();
        for &(m, cost) in &costs[first..] {
            tokens += cost;
            if let Some(index) = &index {
                let blocks = index.blocks_of(m);
                match held.last_mut() {
                    Some(last) if last.end == blocks.start => last.end = blocks.end,
                    _ => held.push(blocks),
                }
            }
            // Sorted by (block, atom): each block's are the next run.
            let mut entries = self.atoms.entries_of(m);
            let block_chars = self.atoms.block_chars(m);
            for (bi, block) in msgs[m].blocks.iter().enumerate() {
                let here = entries.iter().take_while(|e| e.block as usize <= bi).count();
                let (in_block, rest) = entries.split_at(here);
                entries = rest;
                if matches!(block, Block::ToolResult { .. }) {
                    seen_results += 1;
                    if seen_results <= masked {
                        chars += MASK_PLACEHOLDER.len() as u64;
                        continue;
                    }
                }
                chars += block_chars.get(bi).copied().unwrap_or_else(|| block.text_chars() as u64);
                for e in in_block.iter().filter(|e| e.block as usize == bi) {
                    p_atoms.add(e.atom, e.flags);
                }
                if index.is_none() || matches!(block, Block::ToolResult { .. }) {
                    visit_block_text(block, &mut |t| view.add_tokens(t));
                }
            }
        }
        if let Some(index) = index {
            view.add_blocks(BlockSelection { index, ranges: held });
        }
        // Its atoms are counted, never listed (no audit is made of a
        // masking row): no sort needed.
        view.finish_unordered();
        self.score_view(name, &view, Some(&p_atoms), tokens, chars, None)
    }
}

/// What masking keeps of P: each message with its cost as masked, the first
/// one kept under the budget, whether P's text fits, and how many of P's tool
/// results (oldest first) are masked.
struct MaskPlan {
    costs: Vec<(usize, u64)>,
    first: usize,
    with_text: bool,
    masked: usize,
}

/// Every piece of text in a block (tool-call string arguments, tool-result
/// text), for word and identifier tokens.
pub(in crate::quality) fn visit_block_text(block: &Block, f: &mut dyn FnMut(&str)) {
    match block {
        Block::Text { text } | Block::Thinking { text, .. } => f(text),
        Block::ToolUse { name, input, .. } => {
            f(name);
            crate::text::visit_strings(input, f);
        }
        Block::ToolResult { content, .. } => content.iter().for_each(|c| visit_block_text(c, f)),
        Block::Image { .. } | Block::Other { .. } => {}
    }
}
