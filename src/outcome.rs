//! What one replay (one session under one policy) comes to, in the few numbers
//! `compare` columns and `sweep` points are made of: tokens, money, overflows,
//! compactions and summary quality. [`SessionOutcome`] is computed per
//! (session, policy) and dropped with its trace; [`OutcomeTotals`] folds them per
//! policy, in session order so sums are byte-identical at any thread count.
//!
//! Summary quality (FRR, artifact-trail recall, hallucination rate) comes through
//! [`crate::quality::QualityHook`]. Without a hook the quality columns read "n/a".

use crate::cost::{CostTotals, SessionCost};
use crate::quality::QualityScore;
use crate::replay::SessionMetrics;
use serde::{Deserialize, Serialize};

/// One replay, reduced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionOutcome {
    pub metrics: SessionMetrics,
    pub cost: SessionCost,
    /// `None` when no quality hook is wired.
    pub quality: Option<QualityScore>,
}

/// One policy over every session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutcomeTotals {
    pub sessions: u64,
    pub sessions_failed: u64,
    pub calls: u64,
    pub input_tokens_baseline: u64,
    pub input_tokens_policy: u64,
    pub savings_pct: f64,
    pub overflow_calls_baseline: u64,
    pub overflow_calls_policy: u64,
    pub compactions: u64,
    pub no_progress_compactions: u64,
    pub summarizer_tokens: u64,
    pub cost: CostTotals,
    pub quality: Option<QualityScore>,
}

impl OutcomeTotals {
    pub fn add(&mut self, o: &SessionOutcome) {
        let m = &o.metrics;
        self.sessions += 1;
        self.calls += m.calls;
        self.input_tokens_baseline += m.input_tokens_baseline;
        self.input_tokens_policy += m.input_tokens_policy;
        self.overflow_calls_baseline += m.overflow_calls_baseline;
        self.overflow_calls_policy += m.overflow_calls_policy;
        self.compactions += m.compactions;
        self.no_progress_compactions += m.no_progress_compactions;
        self.summarizer_tokens += m.summarizer_tokens;
        self.cost.add(&o.cost);
        if let Some(q) = &o.quality {
            self.quality.get_or_insert_with(QualityScore::default).add(q);
        }
    }

    pub fn add_failure(&mut self) {
        self.sessions_failed += 1;
    }

    pub fn finish(mut self) -> OutcomeTotals {
        self.savings_pct = crate::num::savings_pct(self.input_tokens_baseline, self.input_tokens_policy);
        self.cost = self.cost.finish();
        self
    }
}
