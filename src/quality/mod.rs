//! Summary-quality measurement (DESIGN.md §6 "Quality", docs/quality.md §c): how
//! much of what the agent needed later survived a compaction, judged against the
//! future of the same log, with no LLM.
//!
//! The pieces, in the order the replay engine uses them:
//! - [`SessionAtoms::from_session`] (or [`SessionAtoms::new`] on a message slice)
//!   extracts typed, normalized *atoms* (paths, modified paths, symbols, errors,
//!   commands, ids, user constraints) from every message once, and indexes where
//!   each atom occurs. Everything after that is lookups and binary searches, so
//!   evaluating dozens of compactions of one session stays roughly linear in the
//!   session's text. [`SessionAtoms::with_system_prompt`] adds the system prompt
//!   (and re-injected AGENTS.md): atoms there are trivially available.
//! - [`SessionAtoms::prepare`] takes one [`CompactionPoint`] (P replaced, T kept,
//!   F the future, as message ranges of the session, plus non-message texts such
//!   as a previous summary) and computes the needed atoms N (rules in `event`).
//! - [`PreparedEvent::score`] judges one summary S against N and returns a flat,
//!   serializable [`CompactionQuality`] row (JSON or CSV);
//!   [`SessionAtoms::evaluate_candidates`] scores several summarizers plus the
//!   reference points (truncate, observation masking, oracle) at the same point,
//!   each with its token count, so FRR can be compared at equal budgets.
//! - [`SessionAtoms::pruning_loss`] measures what Layer-1 tool-output pruning lost.
//! - [`aggregate`] folds rows into per-summarizer statistics (per session or
//!   over a run); components are always published next to the composite.
//! - [`evaluate_trace`] does all of the above for one replay: every applied
//!   compaction of a `SessionTrace` with its references, and the trace's
//!   pruning loss, into a [`SessionQuality`]; [`aggregate_sessions`] folds
//!   those per policy into [`QualityAggregate`]s.
//!
//! How "found in S" is decided per atom type is documented in `view`; how atoms
//! are extracted and normalized in `text::atoms`, shared with the summarizer.
//!
//! This module never prints and never panics on log content: logs are hostile
//! input, so every scan is bounded and every regex is linear-time.

mod aggregate;
mod block_tokens;
mod event;
mod explain;
mod hook;
mod index;
pub mod probe;
mod prune;
mod recorded;
mod replay;
mod runs;
mod score;
mod shown;
mod view;

#[cfg(test)]
#[path = "extract_tests.rs"]
mod extract_tests;

#[cfg(test)]
#[path = "event_tests.rs"]
mod event_tests;
#[cfg(test)]
#[path = "lens_tests.rs"]
mod lens_tests;

#[cfg(test)]
#[path = "replay_tests.rs"]
mod replay_tests;

pub use aggregate::{QualityStats, aggregate};
pub use event::{
    AuditAtom, Candidate, CompactionAudit, CompactionPoint, CompactionQuality, HALLUCINATED_LISTED, MASK_PLACEHOLDER,
    NeededAtom, PreparedEvent, REF_MASKING, REF_ORACLE, REF_TRUNCATE, ReferenceOptions,
};
pub use explain::{Explained, explain_masking, explain_reference, explain_session};
pub use hook::{PreparedQuality, QualityHook, QualityScore, RowScore};
pub use index::SessionAtoms;
pub use prune::{PrunedResult, PruningLoss};
pub use recorded::{
    CANDIDATE_RECORDED, REF_EXTRACTIVE_BUDGET, REF_LLM_BUDGET, RecordedAggregate, RecordedEvent, RecordedQuality,
    RecordedStatus, aggregate_recorded, evaluate_recorded,
};
pub use replay::{
    CANDIDATE_POLICY, EventInfo, EventQuality, QualityAggregate, QualityOptions, QualityPlan, REF_MASKING_BUDGET,
    REFERENCES, SessionQuality, TracePoint, aggregate_sessions, evaluate_trace, summarize_at, trace_points,
};
pub use score::TraceQualityHook;
pub use shown::{LostDetail, NeededShown};

use crate::text::atoms as extract;
use serde::{Deserialize, Serialize};

pub use crate::text::atoms::AtomKind;
pub(crate) use crate::text::atoms::CLASSES;

/// Scoring of atom kinds (the kind itself is the text layer's).
impl AtomKind {
    /// The kinds that can be needed atoms, in report order.
    pub const SCORED: [AtomKind; 7] = [
        AtomKind::ModifiedPath,
        AtomKind::Path,
        AtomKind::Error,
        AtomKind::Id,
        AtomKind::Constraint,
        AtomKind::Command,
        AtomKind::Symbol,
    ];

    /// Type weight of quality.md §c.3. `Ask` has none there: it is measured by
    /// ask coverage, not by FRR, so it weighs 0.
    pub const fn weight(self) -> f64 {
        match self {
            AtomKind::ModifiedPath => 3.0,
            AtomKind::Error | AtomKind::Id | AtomKind::Constraint => 2.0,
            AtomKind::Path | AtomKind::Command => 1.5,
            AtomKind::Symbol => 1.0,
            AtomKind::Ask => 0.0,
        }
    }
}

/// One extracted atom: its type and normalized value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Atom {
    pub kind: AtomKind,
    pub value: String,
}

/// Extract the atoms of a piece of free text (an assistant message, a summary):
/// every path, error, id and constraint sentence, and the symbols inside code
/// spans. Sorted and deduplicated. Used by tests and by `inspect`-style tools; the
/// metric itself goes through [`SessionAtoms`].
pub fn extract_atoms(text: &str, cwd: Option<&str>) -> Vec<Atom> {
    let cwd = cwd.and_then(extract::normalize_cwd);
    let mut found = Vec::new();
    extract::scan_text(text, extract::Ctx::Prose, cwd.as_deref(), &mut found);
    let mut atoms: Vec<Atom> =
        found.into_iter().filter(|f| f.strong).map(|f| Atom { kind: f.kind, value: f.value }).collect();
    for (sentence, _) in extract::constraints(text) {
        atoms.push(Atom { kind: AtomKind::Constraint, value: sentence });
    }
    atoms.sort();
    atoms.dedup();
    atoms
}

/// Extract the atoms of one tool call (name + JSON input) as the agent issued it:
/// path arguments (as `modified_path` for edit/write/patch tools), shell commands,
/// and everything found in its string arguments. Sorted and deduplicated.
pub fn extract_tool_call_atoms(name: &str, input: &serde_json::Value, cwd: Option<&str>) -> Vec<Atom> {
    let cwd = cwd.and_then(extract::normalize_cwd);
    let mut found = Vec::new();
    extract::scan_tool_use(name, input, cwd.as_deref(), &mut found);
    let mut atoms: Vec<Atom> = found
        .into_iter()
        .filter(|f| f.strong)
        .map(|f| Atom { kind: if f.modified { AtomKind::ModifiedPath } else { f.kind }, value: f.value })
        .collect();
    atoms.sort();
    atoms.dedup();
    atoms
}
