//! The rows a compaction's scoring yields: the flat quality row (JSON or CSV), the
//! needed atoms, and the audit of one summary.

use super::*;

/// A needed atom with its weight and where the agent first used it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeededAtom {
    pub kind: AtomKind,
    pub value: String,
    pub weight: f64,
    /// Session index of the message of the first use.
    pub first_use: usize,
    /// Assistant turns in F before that use.
    pub turns: usize,
    /// Used as a tool-call argument (the ×1.5 action bonus).
    pub tool_arg: bool,
}

/// Quality of one summary at one compaction point: one flat row (JSON or CSV).
/// Ratios are `None` when their denominator is empty (no needed atoms, no
/// modified paths…), so aggregates skip them instead of counting a fake 0 or 1.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompactionQuality {
    pub summarizer: String,
    pub summary_tokens: u64,
    pub summary_chars: u64,
    pub replaced_tokens: u64,
    pub kept_tokens: u64,
    /// 1 − tok(S ∪ T) / tok(P ∪ T); negative when S is larger than P.
    pub compression: Option<f64>,
    /// 1 − tok(S) / tok(P): the per-compaction reduction of quality.md §b.
    pub summary_reduction: Option<f64>,
    pub needed_atoms: u32,
    pub needed_weight: f64,
    /// Σ w(a)·match(a, S) over N.
    pub frr_hit_weight: f64,
    /// Weighted future-reference recall.
    pub frr: Option<f64>,
    pub needed_modified_path: u32,
    pub recall_modified_path: Option<f64>,
    pub needed_path: u32,
    pub recall_path: Option<f64>,
    pub needed_error: u32,
    pub recall_error: Option<f64>,
    pub needed_id: u32,
    pub recall_id: Option<f64>,
    pub needed_constraint: u32,
    pub recall_constraint: Option<f64>,
    pub needed_command: u32,
    pub recall_command: Option<f64>,
    pub needed_symbol: u32,
    pub recall_symbol: Option<f64>,
    /// Modified paths of P (all, used later or not).
    pub modified_paths: u32,
    pub artifact_trail_recall: Option<f64>,
    /// Share of S's paths that a tool call of P ∪ T touched.
    pub artifact_trail_precision: Option<f64>,
    pub summary_atoms: u32,
    pub hallucinated_atoms: u32,
    /// Share of S's atoms found nowhere in P ∪ T ∪ system prompt (see
    /// `PreparedEvent::grounded` for the spelling tolerance).
    pub hallucination_rate: Option<f64>,
    pub constraints: u32,
    pub constraint_retention: Option<f64>,
    pub ask_keywords: u32,
    /// Share of the pending ask's keywords found in S; `None` when the ask is in
    /// T (kept verbatim) or there is none.
    pub ask_coverage: Option<f64>,
    /// OpenClaw's rule: ≥ 2 keyword matches when the ask has ≥ 3, else ≥ 1.
    pub ask_covered: Option<bool>,
    pub dead_ends: u32,
    /// Share of P's failed commands and error fingerprints found in S.
    pub dead_end_retention: Option<f64>,
    /// quality.md §c.4 composite (0–100), weights renormalized over the
    /// components that exist. Always published next to its components.
    pub quality: Option<f64>,
    /// The first [`HALLUCINATED_LISTED`] atoms counted in `hallucinated_atoms`,
    /// as `kind:value` joined by `; `, so a reader can check each one. A string,
    /// not a list, so the row stays one flat CSV record.
    pub hallucinated: String,
}

/// How many hallucinated atoms a row lists (its count is `hallucinated_atoms`).
pub const HALLUCINATED_LISTED: usize = 8;

/// A needed atom with its match score in one summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditAtom {
    pub kind: AtomKind,
    pub value: String,
    pub weight: f64,
    pub score: f64,
    /// Session index of the message that used it first after the compaction.
    #[serde(default)]
    pub first_use: usize,
}

/// What one summary kept and invented, for debugging a score (pitfall 10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionAudit {
    pub summarizer: String,
    pub needed: Vec<AuditAtom>,
    pub hallucinated: Vec<Atom>,
}
