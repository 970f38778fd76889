//! Shared scoring: one summary view judged against a prepared compaction's needed
//! atoms (FRR, artifact trail, hallucination, the composite), for every candidate row.

use super::*;

impl PreparedEvent<'_, '_> {
    /// Score a view, with `held` the atoms it names by session id (a masking
    /// view's P), listing each needed atom's score and each hallucinated
    /// atom in `audit` when given. Only an audit asks for them: every row of
    /// a replay would copy each needed atom's value once more, to drop it.
    pub(super) fn score_view(
        &self,
        name: &str,
        view: &TextView,
        held: Option<&HeldAtoms<'_, '_>>,
        tokens: u64,
        chars: u64,
        mut audit: Option<&mut CompactionAudit>,
    ) -> CompactionQuality {
        let held_keys = held.map(|h| h as &dyn HeldKeys);
        let kinds = AtomKind::SCORED;
        let mut need_w = [0.0f64; 7];
        let mut hit_w = [0.0f64; 7];
        let mut count = [0u32; 7];
        if let Some(a) = audit.as_deref_mut() {
            a.needed.reserve(self.needed.len());
        }
        let (mut total_w, mut total_hit) = (0.0, 0.0);
        for (n, t) in self.needed.iter().zip(&self.targets) {
            let s = view.match_score_with(t, held_keys);
            let k = kinds.iter().position(|&k| k == n.kind).unwrap_or(0);
            need_w[k] += n.weight;
            hit_w[k] += n.weight * s;
            count[k] += 1;
            total_w += n.weight;
            total_hit += n.weight * s;
            if let Some(a) = audit.as_deref_mut() {
                a.needed.push(AuditAtom {
                    kind: n.kind,
                    value: n.value.clone(),
                    weight: n.weight,
                    score: s,
                    first_use: n.first_use,
                });
            }
        }
        let ratio = |hit: f64, w: f64| (w > 0.0).then(|| (hit / w).clamp(0.0, 1.0));
        let recall = |k: usize| ratio(hit_w[k], need_w[k]);
        let mean_score = |ts: &[Target]| {
            (!ts.is_empty())
                .then(|| ts.iter().map(|t| view.match_score_with(t, held_keys)).sum::<f64>() / ts.len() as f64)
        };

        // Hallucination and artifact precision over S's own atoms.
        let mut hallucinated = 0u32;
        // All of them (they are few), sorted so the listing does not depend on
        // the order a view holds its atoms in.
        let mut invented_atoms: Vec<(AtomKind, String)> = Vec::new();
        let mut invented = |kind: AtomKind, value: &str| {
            invented_atoms.push((kind, value.to_string()));
            hallucinated += 1;
            if let Some(a) = audit.as_deref_mut() {
                a.hallucinated.push(Atom { kind, value: value.to_string() });
            }
        };
        let (mut paths, mut touched) = (0u32, 0u32);
        let mut summary_atoms = 0u32;
        for (kind, value) in &view.atoms {
            // Looked up once for the three questions (a path's class is the
            // one `touched` asks of).
            let id = self.atoms.id_of(*kind, value);
            // Counted with the held ones.
            if held.is_some_and(|h| h.lists(id)) {
                continue;
            }
            summary_atoms += 1;
            if !self.grounded(*kind, value, id) {
                invented(*kind, value);
            }
            if *kind == AtomKind::Path {
                paths += 1;
                if self.touched(value, id) {
                    touched += 1;
                }
            }
        }
        if let Some(h) = held {
            for id in h.listed.iter() {
                summary_atoms += 1;
                let kind = AtomKind::of_class(self.atoms.defs[id as usize].class);
                let value = h.key(id);
                // `id` is what looking its key up would give: a key is
                // interned once per class.
                if !self.grounded(kind, value, Some(id)) {
                    invented(kind, value);
                }
                if kind == AtomKind::Path {
                    paths += 1;
                    if self.touched(value, Some(id)) {
                        touched += 1;
                    }
                }
            }
        }
        let hallucination_rate = (summary_atoms > 0).then(|| f64::from(hallucinated) / f64::from(summary_atoms));
        invented_atoms.sort();
        let listed = invented_atoms
            .iter()
            .take(HALLUCINATED_LISTED)
            .map(|(k, v)| format!("{}:{v}", k.name()))
            .collect::<Vec<_>>()
            .join("; ");

        let (ask_keywords, ask_coverage, ask_covered) = match &self.ask {
            Some(a) => {
                let share = view.keyword_share(&a.keywords);
                let hits = a.keywords.iter().filter(|k| view.has_word(k)).count();
                let need = if a.keywords.len() >= 3 { 2 } else { 1 };
                (a.keywords.len() as u32, Some(share), Some(hits >= need))
            }
            None => (0, None, None),
        };

        let p_t = self.replaced_tokens + self.kept_tokens;
        let compression = (p_t > 0).then(|| 1.0 - (tokens + self.kept_tokens) as f64 / p_t as f64);
        let summary_reduction = (self.replaced_tokens > 0).then(|| 1.0 - tokens as f64 / self.replaced_tokens as f64);
        let frr = ratio(total_hit, total_w);
        let artifact_trail_recall = mean_score(&self.modified);
        let constraint_retention = mean_score(&self.constraints);
        let dead_end_retention = mean_score(&self.dead_ends);
        let quality = composite(&[
            (0.45, frr),
            (0.20, artifact_trail_recall),
            (0.10, constraint_retention),
            (0.10, ask_coverage),
            (0.05, dead_end_retention),
            (0.10, hallucination_rate.map(|h| 1.0 - h)),
        ]);
        CompactionQuality {
            summarizer: name.to_string(),
            summary_tokens: tokens,
            summary_chars: chars,
            replaced_tokens: self.replaced_tokens,
            kept_tokens: self.kept_tokens,
            compression,
            summary_reduction,
            needed_atoms: self.needed.len() as u32,
            needed_weight: total_w,
            frr_hit_weight: total_hit,
            frr,
            needed_modified_path: count[0],
            recall_modified_path: recall(0),
            needed_path: count[1],
            recall_path: recall(1),
            needed_error: count[2],
            recall_error: recall(2),
            needed_id: count[3],
            recall_id: recall(3),
            needed_constraint: count[4],
            recall_constraint: recall(4),
            needed_command: count[5],
            recall_command: recall(5),
            needed_symbol: count[6],
            recall_symbol: recall(6),
            modified_paths: self.modified.len() as u32,
            artifact_trail_recall,
            artifact_trail_precision: (paths > 0).then(|| f64::from(touched) / f64::from(paths)),
            summary_atoms,
            hallucinated_atoms: hallucinated,
            hallucination_rate,
            constraints: self.constraints.len() as u32,
            constraint_retention,
            ask_keywords,
            ask_coverage,
            ask_covered,
            dead_ends: self.dead_ends.len() as u32,
            dead_end_retention,
            quality,
            hallucinated: listed,
        }
    }

    /// Does an atom of S name something the log held before the future F (P, T,
    /// what earlier compactions dropped), in extra texts or the system prompt?
    /// Lenient on spelling (basename of a known path, prefix of a known error or
    /// SHA): hallucination is about invented facts, not imprecise ones. `id`
    /// is the session's id of `value` in `kind`'s class, if any.
    fn grounded(&self, kind: AtomKind, value: &str, id: Option<u32>) -> bool {
        let g = &self.grounding;
        if id.is_some_and(|id| g.ids.contains(id) || self.atoms.occurs_before(id, self.history_end)) {
            return true;
        }
        let Some(class) = kind.class() else { return true };
        let views = self.extra_views.iter().map(|v| v.as_ref()).chain(std::iter::once(&self.atoms.system));
        for v in views {
            if v.keys[class].contains(value) {
                return true;
            }
            if class == 0 && !value.contains('/') && v.basenames.contains(value) {
                return true;
            }
            if class == 4 && v.hex.iter().any(|h| extract::hex_compatible(h, value)) {
                return true;
            }
        }
        let keys = self.atoms.ground_keys();
        let known = |ids: &[u32]| ids.iter().any(|&id| g.ids.contains(id));
        match kind {
            AtomKind::Path | AtomKind::ModifiedPath => {
                related_path(value, |base| self.atoms.keys_among(keys.with_basename(base), &g.ids))
            }
            AtomKind::Symbol => known(keys.with_stem(value)) || known(keys.with_basename(value)),
            AtomKind::Id => {
                extract::is_hex_value(value)
                    && self.atoms.keys_among(&keys.hex, &g.ids).any(|h| extract::hex_compatible(h, value))
            }
            // A shortened or reworded error that carries a known code or
            // fingerprint (`error: E0308 mismatched types`) is not invented,
            // nor one a summary clipped (its `…` mark is not part of it).
            AtomKind::Error => {
                let clipped = value.strip_suffix('…').map_or(value, str::trim_end);
                self.atoms
                    .keys_among(&keys.errors, &g.ids)
                    .any(|e| (clipped.len() >= 8 && e.starts_with(clipped)) || (e.len() >= 5 && value.contains(e)))
            }
            _ => false,
        }
    }

    /// Did a tool call of P ∪ T touch this path (read, edit, write, list…)?
    /// `id` is the session's id of the path, if any.
    fn touched(&self, path: &str, id: Option<u32>) -> bool {
        let g = &self.grounding;
        let keys = self.atoms.ground_keys();
        id.is_some_and(|id| g.touched.contains(id))
            || related_path(path, |base| self.atoms.keys_among(keys.with_basename(base), &g.touched))
    }
}

/// A summary path names a known file when it is that file's bare name, or one
/// path is the other with a directory prefix (`parser.rs`, `src/parser.rs` and
/// `/abs/repo/src/parser.rs`), but not when it puts the name in another
/// directory (`lib/parser.rs`). `known(base)` lists the known paths whose
/// basename is `base`: one path ending in the other after a `/` has the
/// other's basename.
pub(super) fn related_path<'k, I: Iterator<Item = &'k str>>(value: &str, known: impl Fn(&str) -> I) -> bool {
    if !value.contains('/') {
        return known(value).next().is_some();
    }
    known(extract::basename(value)).any(|k| {
        (k.len() > value.len() && k.ends_with(value) && k.as_bytes()[k.len() - value.len() - 1] == b'/')
            || (value.len() > k.len() && value.ends_with(k) && value.as_bytes()[value.len() - k.len() - 1] == b'/')
    })
}

/// quality.md §c.4 composite, ×100, weights renormalized over the components
/// present.
pub(super) fn composite(parts: &[(f64, Option<f64>)]) -> Option<f64> {
    let (mut w, mut s) = (0.0, 0.0);
    for (weight, v) in parts {
        if let Some(v) = v {
            w += weight;
            s += weight * v;
        }
    }
    (w > 0.0).then(|| 100.0 * s / w)
}
