//! Running token totals of a replay: prefix sums over append order, and the
//! same request sizes in the meter's units beside the policy's own.

use crate::tokens::Estimator;

/// Prefix sums over append order (Fenwick tree): the view tokens of the source
/// items still in history, so the tokens before any item are O(log n) away.
pub(super) struct Fenwick {
    t: Vec<i64>,
}

impl Fenwick {
    pub fn new(n: usize) -> Fenwick {
        Fenwick { t: vec![0; n + 1] }
    }

    pub fn add(&mut self, i: u64, d: i64) {
        let mut i = i as usize + 1;
        while i < self.t.len() {
            self.t[i] += d;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum over `[0, i)`.
    pub fn prefix(&self, i: u64) -> u64 {
        let mut i = (i as usize).min(self.t.len() - 1);
        let mut s = 0i64;
        while i > 0 {
            s += self.t[i];
            i -= i & i.wrapping_neg();
        }
        s.max(0) as u64
    }
}

/// The request sizes in the meter's units ([`crate::tokens::Meter`]): what the
/// reports measure. The engine's own totals are in the policy's estimator, which
/// only decides (trigger, cut, pruning ratios); both move at the same steps.
pub(super) struct MeterState<'a> {
    pub est: &'a dyn Estimator,
    /// Per-message counts of the meter's counter.
    pub toks: &'a [u64],
    /// The meter counts a message exactly as the policy does (same counter, no
    /// per-message overhead): its counts are copied, not made again.
    pub same: bool,
    pub system: u64,
    pub hist: u64,
    pub view: u64,
    pub synth_view: u64,
    pub fen: Fenwick,
    /// The recorded usage's gap, spread as for the calibrated estimator, but
    /// from every recorded usage up to and including the current call.
    pub hist_corr: i64,
    pub residual: i64,
    pub compaction_prefix: Option<u64>,
    pub prev_body: Option<u64>,
    pub last_prefix: u64,
}

impl MeterState<'_> {
    pub fn offset(&self) -> i64 {
        self.hist_corr + self.residual
    }
}
