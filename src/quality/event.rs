//! One compaction event: the needed atoms N (quality.md §c.3) and the scores of
//! any number of summaries against them, including the reference points of
//! §c.4 (truncate, observation masking, oracle).
//!
//! Needed atoms. An atom `a` is in N when:
//! - it occurs in P (strong occurrences only: a symbol-shaped word in prose does
//!   not create an atom, quality.md §c.2);
//! - it is referenced in F by the agent (tool-call argument, assistant text or
//!   thinking, file edit) before any tool result or user message in F brings it
//!   back. A user message mentioning the atom re-introduces it (the model reads
//!   it again), so user mentions never make an atom needed; this follows
//!   quality.md §c.3 where DESIGN.md §6 also lists "by the user";
//! - it is not in T, the kept extra texts, or the system prompt.
//!
//! Constraints are standing instructions: a user constraint of P is referenced by
//! the first agent turn of F (Δturns = 0), unless a user message restates it
//! before that turn.
//!
//! Weights: `type weight × 1/(1 + Δturns/20) × 1.5 when used as a tool-call
//! argument`, Δturns = assistant messages in F before the first use.

use super::block_tokens::BlockSelection;
use super::index::{Occ, SessionAtoms, flag};
use super::view::{HeldKeys, Target, TextView};
use super::{Atom, AtomKind};
use crate::model::Block;
use crate::text::atoms as extract;
use crate::tokens::Estimator;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ops::Range;

/// Row name of the truncation reference.
pub const REF_TRUNCATE: &str = "truncate";
/// Row name of the observation-masking reference.
pub const REF_MASKING: &str = "masking";
/// Row name of the oracle (every needed atom, listed).
pub const REF_ORACLE: &str = "oracle";

/// The placeholder observation masking puts in place of an old tool output.
pub const MASK_PLACEHOLDER: &str = "[Old tool output omitted]";

/// Occurrences followed per atom when looking for its first use in F.
const SCAN_CAP: usize = 4096;

/// One compaction point, as message ranges of the session given to
/// [`SessionAtoms::new`]. Extra texts are history items that are not session
/// messages (a previous summary being re-summarized goes in `replaced_text`; a
/// retained summary in `kept_text`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionPoint {
    /// P: the messages the compaction replaces.
    pub replaced: Vec<Range<usize>>,
    pub replaced_text: Vec<String>,
    /// T: the messages kept verbatim.
    pub kept: Vec<Range<usize>>,
    pub kept_text: Vec<String>,
    /// F: the messages after the compaction (usually to the end of the session).
    pub future: Range<usize>,
    /// Tokens of P and of T when the engine already knows them; computed with
    /// the estimator otherwise.
    pub replaced_tokens: Option<u64>,
    pub kept_tokens: Option<u64>,
}

impl CompactionPoint {
    /// The common case: contiguous P, T and F.
    pub fn new(replaced: Range<usize>, kept: Range<usize>, future: Range<usize>) -> CompactionPoint {
        CompactionPoint { replaced: vec![replaced], kept: vec![kept], future, ..CompactionPoint::default() }
    }
}

/// A summarizer's output to score.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'c> {
    pub name: &'c str,
    pub summary: &'c str,
}

/// Which reference rows [`SessionAtoms::evaluate_candidates`] adds.
#[derive(Debug, Clone, Copy)]
pub struct ReferenceOptions<'r> {
    /// The text the `truncate` summarizer produced at this point.
    pub truncate: Option<&'r str>,
    /// Observation masking keeping the last M tool outputs (quality.md: M = 10).
    pub masking_keep: Option<usize>,
    pub oracle: bool,
}

impl Default for ReferenceOptions<'_> {
    fn default() -> Self {
        ReferenceOptions { truncate: None, masking_keep: Some(10), oracle: true }
    }
}

/// Atoms of P ∪ T, against which a summary's atoms are checked for
/// hallucination and precision: ids as bits, one bit set per entry of P ∪ T.
/// What else a check asks (known paths of a basename, errors, hex ids) is
/// the session's [`GroundKeys`](super::index::GroundKeys) filtered by these.
#[derive(Default)]
struct Grounding {
    ids: Bits,
    /// Those a tool call of P ∪ T took as an argument.
    touched: Bits,
}

impl Grounding {
    fn add(&mut self, id: u32, flags: u8) {
        self.ids.insert(id);
        if flags & flag::ARG != 0 {
            self.touched.insert(id);
        }
    }
}

/// The candidate atoms of an event, with the flags of their occurrences.
struct Cand {
    flags: Vec<u8>,
    /// The ids with flags, read in ascending order from their bits: sorting
    /// a list of them cost 300K instructions an event in a `compare`.
    ids: Bits,
}

impl Cand {
    fn add(&mut self, id: u32, flags: u8) {
        if let Some(slot) = self.flags.get_mut(id as usize) {
            if *slot == 0 {
                self.ids.insert(id);
            }
            // Never 0 again: every candidate flag set holds STRONG.
            *slot |= flags | flag::STRONG;
        }
    }

    fn get(&self, id: u32) -> u8 {
        self.flags.get(id as usize).copied().unwrap_or(0)
    }
}

/// A set of atom ids as bits.
#[derive(Default)]
struct Bits(Vec<u64>);

impl Bits {
    fn with_len(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }

    /// Add `id`; whether it was new.
    fn insert(&mut self, id: u32) -> bool {
        let (w, b) = (id as usize / 64, 1u64 << (id % 64));
        if w >= self.0.len() {
            self.0.resize(w + 1, 0);
        }
        let new = self.0[w] & b == 0;
        self.0[w] |= b;
        new
    }

    fn contains(&self, id: u32) -> bool {
        self.0.get(id as usize / 64).is_some_and(|w| w & (1u64 << (id % 64)) != 0)
    }

    /// The ids in the set, ascending.
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().zip(0u32..).flat_map(|(&word, w)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros();
                    rest &= rest - 1;
                    w * 64 + bit
                })
            })
        })
    }
}

/// Observation masking's view of P's atoms as session atom ids: what the
/// view's key sets and atom list would hold had each key been added to them
/// (a masking view holds every atom of P, and hashing thousands of keys
/// into fresh sets at each event was most of building it).
struct HeldAtoms<'s, 'a> {
    atoms: &'s SessionAtoms<'a>,
    /// Every atom of the blocks kept, strong or weak (the key sets).
    keys: Bits,
    /// The strong path, symbol, error and id atoms among them (the atom list).
    listed: Bits,
}

impl HeldAtoms<'_, '_> {
    fn add(&mut self, id: u32, flags: u8) {
        self.keys.insert(id);
        let class = self.atoms.defs.get(id as usize).map(|d| d.class);
        if flags & flag::STRONG != 0 && matches!(class, Some(0 | 1 | 2 | 4)) {
            self.listed.insert(id);
        }
    }

    /// Is this atom (as a view lists it, by its id if the session has it)
    /// one of the listed ones?
    fn lists(&self, id: Option<u32>) -> bool {
        id.is_some_and(|id| self.listed.contains(id))
    }

    fn key(&self, id: u32) -> &str {
        &self.atoms.defs[id as usize].key
    }
}

impl HeldKeys for HeldAtoms<'_, '_> {
    fn has_key(&self, class: usize, v: &str) -> bool {
        self.atoms.id_in(class, v).is_some_and(|id| self.keys.contains(id))
    }

    fn has_basename(&self, v: &str) -> bool {
        self.atoms.ground_keys().with_basename(v).iter().any(|&id| self.keys.contains(id))
    }

    fn any_hex(&self, f: &mut dyn FnMut(&str) -> bool) -> bool {
        self.atoms.keys_among(&self.atoms.ground_keys().hex, &self.keys).any(f)
    }

    fn any_command(&self, f: &mut dyn FnMut(&str) -> bool) -> bool {
        self.atoms.keys_among(&self.atoms.ground_keys().commands, &self.keys).any(f)
    }
}

impl SessionAtoms<'_> {
    /// The keys of those atoms of `ids` (a [`GroundKeys`](super::index::GroundKeys)
    /// list) that `set` holds: the session's names, filtered by an event's ids.
    fn keys_among<'k>(&'k self, ids: &'k [u32], set: &'k Bits) -> impl Iterator<Item = &'k str> + 'k {
        ids.iter().filter(|&&id| set.contains(id)).map(|&id| &*self.defs[id as usize].key)
    }
}

/// A compaction point with its needed atoms computed; score summaries with
/// [`PreparedEvent::score`].
pub struct PreparedEvent<'s, 'a> {
    atoms: &'s SessionAtoms<'a>,
    est: &'s dyn Estimator,
    replaced: Vec<Range<usize>>,
    kept: Vec<Range<usize>>,
    replaced_views: Vec<Cow<'s, TextView>>,
    replaced_text_tokens: u64,
    replaced_text_chars: u64,
    needed: Vec<NeededAtom>,
    targets: Vec<Target>,
    modified: Vec<Target>,
    constraints: Vec<Target>,
    dead_ends: Vec<Target>,
    ask: Option<Target>,
    grounding: Grounding,
    /// Where F starts: an atom the log holds before it is not invented, even
    /// outside P ∪ T (a fact an earlier compaction replaced and its summary
    /// carried on, such as the files the session touched).
    history_end: usize,
    extra_views: Vec<Cow<'s, TextView>>,
    replaced_tokens: u64,
    kept_tokens: u64,
}

pub(crate) struct FirstUse {
    pub msg: usize,
    pub arg: bool,
}

impl<'a> SessionAtoms<'a> {
    /// Compute the needed atoms of one compaction point. Ranges beyond the
    /// session are clamped.
    pub fn prepare<'s>(&'s self, point: &CompactionPoint, est: &'s dyn Estimator) -> PreparedEvent<'s, 'a> {
        let cwd = self.cwd.as_deref();
        let view = |s: &String| Cow::Owned(TextView::from_text(s, cwd, true));
        let replaced_views = point.replaced_text.iter().map(view).collect();
        let kept_views = point.kept_text.iter().map(view).collect();
        self.prepare_views(point, est, replaced_views, kept_views)
    }

    /// [`SessionAtoms::prepare`] with the views of `point.replaced_text` and
    /// `point.kept_text` already built ([`SessionAtoms::text_view`]): a replay
    /// meets each summary again at the next compactions, and reading a text is
    /// the expensive part of scoring.
    pub(crate) fn prepare_views<'s>(
        &'s self,
        point: &CompactionPoint,
        est: &'s dyn Estimator,
        replaced_views: Vec<Cow<'s, TextView>>,
        kept_views: Vec<Cow<'s, TextView>>,
    ) -> PreparedEvent<'s, 'a> {
        let n = self.len();
        let clamp = |r: &Range<usize>| {
            let s = r.start.min(n);
            s..r.end.min(n).max(s)
        };
        let replaced: Vec<Range<usize>> = point.replaced.iter().map(clamp).collect();
        let kept: Vec<Range<usize>> = point.kept.iter().map(clamp).collect();
        let future = clamp(&point.future);

        let replaced_text_tokens: u64 = point.replaced_text.iter().map(|s| est.text_tokens(s)).sum();
        let replaced_tokens =
            point.replaced_tokens.unwrap_or_else(|| self.tokens_in(est, &replaced) + replaced_text_tokens);
        let kept_tokens = point.kept_tokens.unwrap_or_else(|| {
            self.tokens_in(est, &kept) + point.kept_text.iter().map(|s| est.text_tokens(s)).sum::<u64>()
        });

        // Candidates of P, in session order (ids are assigned in first-seen order).
        let mut grounding =
            Grounding { ids: Bits::with_len(self.defs.len()), touched: Bits::with_len(self.defs.len()) };
        // Flags by atom id (0: not a candidate) and the set of ids: one array
        // write per entry of P, not a tree insert.
        let mut cand = Cand { flags: vec![0; self.defs.len()], ids: Bits::with_len(self.defs.len()) };
        for r in &replaced {
            for m in r.clone() {
                for e in self.entries_of(m) {
                    grounding.add(e.atom, e.flags);
                    if e.flags & flag::STRONG != 0 {
                        cand.add(e.atom, e.flags);
                    }
                }
            }
        }
        for r in &kept {
            for m in r.clone() {
                for e in self.entries_of(m) {
                    grounding.add(e.atom, e.flags);
                }
            }
        }
        for v in &replaced_views {
            let mut add = |kind: AtomKind, key: &str| {
                if let Some(id) = self.id_of(kind, key) {
                    let mut f = flag::STRONG;
                    if kind.class() == Some(0) && self.modified_before(id, future.start) {
                        f |= flag::MODIFIED;
                    }
                    cand.add(id, f);
                }
            };
            for (kind, key) in &v.atoms {
                add(*kind, key);
            }
            for c in &v.commands {
                add(AtomKind::Command, c);
            }
            for (_, kw) in &v.constraints {
                add(AtomKind::Constraint, &extract::constraint_key(kw));
            }
        }
        let mut needed: Vec<(NeededAtom, Target)> = Vec::new();
        let mut modified = Vec::new();
        let mut constraints = Vec::new();
        let mut dead_ends = Vec::new();
        let mut done = Bits::with_len(self.defs.len());
        for id in cand.ids.iter() {
            let flags = cand.get(id);
            if done.contains(id) {
                continue;
            }
            let family = self.family(id);
            // One hex object, however many spellings P has: keep the longest.
            let rep = family
                .iter()
                .copied()
                .filter(|&f| cand.get(f) != 0)
                .max_by_key(|&f| (self.defs[f as usize].key.len(), std::cmp::Reverse(f)))
                .unwrap_or(id);
            family.iter().for_each(|&f| {
                done.insert(f);
            });
            let flags = family.iter().fold(flags, |a, &f| a | cand.get(f));
            let def = &self.defs[rep as usize];
            let kind = self.kind_of(rep, flags);
            // Built only for the lists that take it: most candidates are
            // available in what was kept, or never used again.
            let target = || Target::new(kind, def.value().to_string(), def.keywords.to_vec());
            match def.class {
                0 if kind == AtomKind::ModifiedPath => modified.push(target()),
                2 => dead_ends.push(target()),
                3 if flags & flag::FAILED != 0 => dead_ends.push(target()),
                5 => constraints.push(target()),
                _ => {}
            }
            if self.trivially_available(def.class, &def.key, &def.keywords, &family, &kept, &kept_views) {
                continue;
            }
            let first =
                if def.class == 5 { self.constraint_use(rep, &future) } else { self.first_use(&family, &future) };
            let Some(first) = first else { continue };
            let turns = self.turns_between(future.start, first.msg);
            let weight = kind.weight() / (1.0 + turns as f64 / 20.0) * if first.arg { 1.5 } else { 1.0 };
            let target = target();
            needed.push((
                NeededAtom {
                    kind,
                    value: target.value.clone(),
                    weight,
                    first_use: first.msg,
                    turns,
                    tool_arg: first.arg,
                },
                target,
            ));
        }
        needed.sort_by(|a, b| (a.0.kind, &a.0.value).cmp(&(b.0.kind, &b.0.value)));
        for list in [&mut modified, &mut constraints, &mut dead_ends] {
            list.sort_by(|a, b| (a.kind, &a.value).cmp(&(b.kind, &b.value)));
        }
        let ask = self.pending_ask(&replaced, &kept);
        let (needed, targets) = needed.into_iter().unzip();
        let mut extra_views = replaced_views.clone();
        extra_views.extend(kept_views);
        let replaced_text_chars = point.replaced_text.iter().map(|s| s.chars().count() as u64).sum();
        PreparedEvent {
            atoms: self,
            est,
            replaced,
            kept,
            replaced_views,
            replaced_text_tokens,
            replaced_text_chars,
            needed,
            targets,
            modified,
            constraints,
            dead_ends,
            ask,
            grounding,
            history_end: future.start,
            extra_views,
            replaced_tokens,
            kept_tokens,
        }
    }

    /// Score several summarizers and the reference points at one compaction
    /// point: one row per candidate (in order), then `truncate`, `masking` and
    /// `oracle` as `refs` asks.
    pub fn evaluate_candidates(
        &self,
        point: &CompactionPoint,
        est: &dyn Estimator,
        candidates: &[Candidate<'_>],
        refs: &ReferenceOptions<'_>,
    ) -> Vec<CompactionQuality> {
        let prepared = self.prepare(point, est);
        let mut rows: Vec<CompactionQuality> = candidates.iter().map(|c| prepared.score(c.name, c.summary)).collect();
        rows.extend(prepared.reference_rows(refs));
        rows
    }

    fn trivially_available(
        &self,
        class: usize,
        key: &str,
        keywords: &[String],
        family: &[u32],
        kept: &[Range<usize>],
        kept_views: &[Cow<'_, TextView>],
    ) -> bool {
        if family.iter().any(|&f| kept.iter().any(|r| !self.occ_in(f, r).is_empty())) {
            return true;
        }
        if class == 5 && kept.iter().any(|r| self.restated(keywords, r)) {
            return true;
        }
        let views = kept_views.iter().map(|v| v.as_ref()).chain(std::iter::once(&self.system));
        for v in views {
            if v.keys[class].contains(key) {
                return true;
            }
            if class == 5 && v.keyword_share(keywords) >= 0.75 {
                return true;
            }
            if class == 4 && extract::is_hex_value(key) && v.hex.iter().any(|h| extract::hex_compatible(h, key)) {
                return true;
            }
        }
        false
    }

    /// First agent use in F before any re-introduction, over all spellings.
    pub(crate) fn first_use(&self, family: &[u32], future: &Range<usize>) -> Option<FirstUse> {
        // Each spelling's occurrences in F, found once for both passes (two
        // binary searches each; most families are one atom).
        let (one, many): ([&[Occ]; 1], Vec<&[Occ]>);
        let occs: &[&[Occ]] = match family {
            [f] => {
                one = [self.occ_in(*f, future)];
                &one
            }
            _ => {
                many = family.iter().map(|&f| self.occ_in(f, future)).collect();
                &many
            }
        };
        let mut intro = (usize::MAX, u32::MAX);
        for occ in occs {
            if let Some(o) = occ.iter().take(SCAN_CAP).find(|o| o.flags & flag::USE == 0) {
                intro = intro.min((o.msg as usize, o.block));
            }
        }
        let mut first: Option<(usize, u32)> = None;
        let mut arg = false;
        for occ in occs {
            for o in occ.iter().take(SCAN_CAP) {
                let pos = (o.msg as usize, o.block);
                if pos >= intro {
                    break;
                }
                if o.flags & flag::USE != 0 {
                    first = Some(first.map_or(pos, |p| p.min(pos)));
                    arg |= o.flags & flag::ARG != 0;
                }
            }
        }
        first.map(|(msg, _)| FirstUse { msg, arg })
    }

    /// A standing constraint is referenced by the first agent turn of F, unless
    /// a user message restates it first.
    fn constraint_use(&self, id: u32, future: &Range<usize>) -> Option<FirstUse> {
        let i = self.assistants.partition_point(|&m| m < future.start);
        let a = *self.assistants.get(i).filter(|&&m| m < future.end)?;
        let keywords = &self.defs[id as usize].keywords;
        if self.restated(keywords, &(future.start..a)) {
            return None;
        }
        Some(FirstUse { msg: a, arg: false })
    }

    /// Does a human message in `range` state a constraint covering ≥ 75 % of
    /// these keywords (the same instruction, reworded)?
    fn restated(&self, keywords: &[String], range: &Range<usize>) -> bool {
        if keywords.is_empty() {
            return false;
        }
        let lo = self.humans.partition_point(|&h| h < range.start);
        self.humans[lo..].iter().take_while(|&&h| h < range.end).take(SCAN_CAP).any(|&h| {
            self.entries_of(h).iter().any(|e| {
                let d = &self.defs[e.atom as usize];
                d.class == 5 && {
                    let hits = keywords.iter().filter(|k| d.keywords.contains(k)).count();
                    hits as f64 / keywords.len() as f64 >= 0.75
                }
            })
        })
    }

    /// The last human message of P ∪ T; `None` when it is in T (kept verbatim).
    fn pending_ask(&self, replaced: &[Range<usize>], kept: &[Range<usize>]) -> Option<Target> {
        let last_in = |ranges: &[Range<usize>]| {
            ranges
                .iter()
                .filter_map(|r| {
                    let i = self.humans.partition_point(|&h| h < r.end);
                    (i > 0 && self.humans[i - 1] >= r.start).then(|| self.humans[i - 1])
                })
                .max()
        };
        let in_p = last_in(replaced)?;
        if last_in(kept).is_some_and(|t| t > in_p) {
            return None;
        }
        let text = self.messages[in_p].text().into_owned();
        let keywords = extract::keywords(&text, extract::ASK_KEYWORDS);
        if keywords.is_empty() {
            return None;
        }
        let value = extract::fold_ws(extract::truncate_chars(&text, 300));
        Some(Target::new(AtomKind::Ask, value, keywords))
    }
}

impl PreparedEvent<'_, '_> {
    /// The needed atoms N, sorted by kind and value.
    pub fn needed(&self) -> &[NeededAtom] {
        &self.needed
    }

    /// Score one summary text.
    pub fn score(&self, name: &str, summary: &str) -> CompactionQuality {
        self.score_text_view(name, summary, &self.atoms.text_view(summary))
    }

    /// Score one summary text and list what it kept and invented.
    pub fn score_with_audit(&self, name: &str, summary: &str) -> (CompactionQuality, CompactionAudit) {
        self.score_text_view_audited(name, summary, &self.atoms.text_view(summary))
    }

    /// Modified paths of P that a summary does not name in full (a basename
    /// alone is partial credit, so it is listed too), sorted: the artifact
    /// trail a must-keep check fails on.
    pub(crate) fn missing_modified(&self, view: &TextView) -> Vec<String> {
        let mut v: Vec<String> =
            self.modified.iter().filter(|t| view.match_score(t) < 1.0).map(|t| t.value.clone()).collect();
        v.sort();
        v.dedup();
        v
    }

    /// Score a summary whose view is already built ([`SessionAtoms::text_view`]).
    pub(crate) fn score_text_view(&self, name: &str, summary: &str, view: &TextView) -> CompactionQuality {
        let (tokens, chars) = self.size_of(summary);
        self.score_view(name, view, None, tokens, chars, None)
    }

    /// [`PreparedEvent::score_text_view`] with its audit: each needed atom
    /// and how much the summary holds of it.
    pub(crate) fn score_text_view_audited(
        &self,
        name: &str,
        summary: &str,
        view: &TextView,
    ) -> (CompactionQuality, CompactionAudit) {
        let mut audit = CompactionAudit { summarizer: name.to_string(), needed: Vec::new(), hallucinated: Vec::new() };
        let (tokens, chars) = self.size_of(summary);
        let q = self.score_view(name, view, None, tokens, chars, Some(&mut audit));
        (q, audit)
    }

    /// A summary's size: tokens, characters.
    fn size_of(&self, summary: &str) -> (u64, u64) {
        (self.est.text_tokens(summary), summary.chars().count() as u64)
    }

    /// The oracle summary: every needed atom, one per line (the FRR upper bound
    /// at the smallest budget that reaches it).
    pub fn oracle_summary(&self) -> String {
        // Pieces pushed, not `format!`ed: a line per needed atom of every
        // event, and the formatter cost more than the line.
        let mut out = String::new();
        for (n, t) in self.needed.iter().zip(&self.targets) {
            // `[kind]` labels: `error: …` would itself read as a new error.
            let quote = if matches!(n.kind, AtomKind::Constraint | AtomKind::Error) { "" } else { "`" };
            for piece in ["- [", n.kind.name(), "] ", quote, &t.value, quote, "\n"] {
                out.push_str(piece);
            }
        }
        out
    }

    /// Reference rows: `truncate` (when given), observation masking, oracle.
    pub fn reference_rows(&self, refs: &ReferenceOptions<'_>) -> Vec<CompactionQuality> {
        let mut rows = Vec::new();
        if let Some(t) = refs.truncate {
            rows.push(self.score(REF_TRUNCATE, t));
        }
        if let Some(m) = refs.masking_keep {
            rows.push(self.masking(m));
        }
        if refs.oracle {
            rows.push(self.score(REF_ORACLE, &self.oracle_summary()));
        }
        rows
    }
}

mod masking;
pub(super) use masking::visit_block_text;
mod row;
mod score;
pub use row::{AuditAtom, CompactionAudit, CompactionQuality, HALLUCINATED_LISTED, NeededAtom};
#[cfg(test)]
use score::related_path;

#[cfg(test)]
#[path = "event/unit_tests.rs"]
mod unit_tests;
