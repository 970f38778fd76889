//! The baseline's context at each call (following the agent's own recorded
//! compactions) and the recorded usage's gap spread over the messages behind it.

use super::engine;
use crate::model::Session;

/// The baseline context size before each message: the full history, reset at
/// each recorded compaction to its kept range (+ what follows), less what the
/// agent's recorded clearings took off the messages it still held. O(n) to
/// build, plus the cleared messages.
pub(super) struct Baseline {
    /// `before[i]` = tokens of the agent's context just before message `i`.
    before: Vec<u64>,
    /// Positions where a recorded compaction takes effect, sorted.
    resets: Vec<usize>,
    /// The ranges each of those compactions kept.
    kept: Vec<[std::ops::Range<usize>; 2]>,
    /// Per reset: the context just before it (what the agent held when it
    /// compacted), and its index in `Session::recorded_compactions`.
    pre: Vec<(u64, usize)>,
    /// (where a recorded clearing takes effect, the context's tokens before
    /// the first message it took something from), sorted.
    cuts: Vec<(usize, u64)>,
}

impl Baseline {
    /// `cleared`: [`Session::clearing_deltas`] by the estimator of `est`.
    pub fn new(session: &Session, est: &dyn Fn(usize) -> u64, cleared: &[Vec<(usize, u64)>]) -> Baseline {
        let n = session.messages.len();
        let mut prefix = Vec::with_capacity(n + 1);
        prefix.push(0u64);
        for i in 0..n {
            prefix.push(prefix[i].saturating_add(est(i)));
        }
        let range_sum = |r: &std::ops::Range<usize>| {
            let (a, b) = (r.start.min(n), r.end.min(n));
            if a < b { prefix[b].saturating_sub(prefix[a]) } else { 0 }
        };
        // Where each recorded compaction takes effect: at its first inserted message.
        let mut resets: Vec<(usize, u64, [std::ops::Range<usize>; 2], usize)> = session
            .recorded_compactions
            .iter()
            .enumerate()
            .map(|(j, c)| {
                let kept = c.kept_ranges(n);
                (c.inserted.start, kept.iter().map(range_sum).sum(), kept, j)
            })
            .collect();
        resets.sort_by_key(|r| (r.0, r.3));
        let mut pre = Vec::with_capacity(resets.len());
        let mut clearings: Vec<(usize, &[(usize, u64)])> =
            session.recorded_clearings.iter().zip(cleared).map(|(c, d)| (c.at, d.as_slice())).collect();
        clearings.sort_by_key(|c| c.0);
        let mut before = Vec::with_capacity(n + 1);
        let mut cuts = Vec::with_capacity(clearings.len());
        let mut sum = 0u64;
        let (mut r, mut k) = (0, 0);
        // What the clearings since the last compaction took, by message (all
        // held: a compaction empties it).
        let mut taken = Taken::new(n);
        for i in 0..=n {
            while r < resets.len() && resets[r].0 == i {
                pre.push((sum, resets[r].3));
                sum = resets[r].1;
                taken.clear();
                r += 1;
            }
            // A clearing takes off what it cleared of the messages the context
            // still holds: those since the last compaction, and those it kept.
            // The context stays the same up to its first such message: the
            // prefix a cache still holds.
            while k < clearings.len() && clearings[k].0 <= i {
                let (from, kept) = r.checked_sub(1).map_or((0, None), |j| (resets[j].0, Some(&resets[j].2)));
                let held = |m: usize| m < i && (m >= from || kept.is_some_and(|k| k.iter().any(|r| r.contains(&m))));
                let first = clearings[k].1.iter().map(|c| c.0).filter(|&m| held(m)).min();
                if let Some(first) = first {
                    let upto = |r: &std::ops::Range<usize>| range_sum(&(r.start..r.end.min(first)));
                    let whole: u64 = kept.map_or(0, |k| k.iter().map(upto).sum::<u64>()) + upto(&(from..first));
                    let gone = taken.before(first);
                    cuts.push((clearings[k].0, whole.saturating_sub(gone)));
                }
                for &(m, d) in clearings[k].1.iter().filter(|c| held(c.0)) {
                    sum = sum.saturating_sub(d);
                    taken.add(m, d);
                }
                k += 1;
            }
            before.push(sum);
            if i < n {
                sum = sum.saturating_add(est(i));
            }
        }
        Baseline {
            before,
            resets: resets.iter().map(|r| r.0).collect(),
            kept: resets.into_iter().map(|r| r.2).collect(),
            pre,
            cuts,
        }
    }

    /// The context before the first message a clearing in `(a, b]` took
    /// something from (the least, when several did): what a cache of the
    /// request before message `a` still holds of the request before `b`.
    pub fn cut_between(&self, a: usize, b: usize) -> Option<u64> {
        let i = self.cuts.partition_point(|c| c.0 <= a);
        self.cuts[i..].iter().take_while(|c| c.0 <= b).map(|c| c.1).min()
    }

    /// The agent's context just before message `m`: the ranges kept by its
    /// last compaction, then everything from where that compaction took effect.
    pub fn context(&self, m: usize) -> ([std::ops::Range<usize>; 2], usize) {
        match self.resets.partition_point(|&r| r <= m).checked_sub(1) {
            Some(i) => (self.kept[i].clone(), self.resets[i]),
            None => ([0..0, 0..0], 0),
        }
    }

    pub fn at(&self, i: usize) -> u64 {
        self.before.get(i).copied().unwrap_or(0)
    }

    /// The recorded compactions that took effect in `(a, b]` (`a = None`:
    /// from the start), in order: (index in `Session::recorded_compactions`,
    /// the context just before it).
    pub fn resets_between(&self, a: Option<usize>, b: usize) -> impl Iterator<Item = (usize, u64)> + '_ {
        let from = a.map_or(0, |a| self.resets.partition_point(|&r| r <= a));
        // A reset past the last message (a corrupt session) has no size.
        let to = self.resets.partition_point(|&r| r <= b).min(self.pre.len());
        self.pre[from.min(to)..to].iter().map(|&(size, j)| (j, size))
    }

    /// Whether a recorded compaction took effect in `(a, b]`.
    pub fn reset_between(&self, a: usize, b: usize) -> bool {
        let i = self.resets.partition_point(|&r| r <= a);
        i < self.resets.len() && self.resets[i] <= b
    }
}

/// Tokens taken off messages, summed over the messages before any point in
/// O(log n) (a Fenwick tree): a log of many clearings stays linear.
struct Taken {
    tree: Vec<u64>,
    touched: Vec<usize>,
}

impl Taken {
    fn new(n: usize) -> Taken {
        Taken { tree: vec![0; n + 1], touched: Vec::new() }
    }

    fn add(&mut self, m: usize, d: u64) {
        let mut i = m + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].saturating_add(d);
            self.touched.push(i);
            i += i & i.wrapping_neg();
        }
    }

    /// Σ taken off messages `< m`.
    fn before(&self, m: usize) -> u64 {
        let mut i = m.min(self.tree.len().saturating_sub(1));
        let mut sum = 0u64;
        while i > 0 {
            sum = sum.saturating_add(self.tree[i]);
            i -= i & i.wrapping_neg();
        }
        sum
    }

    fn clear(&mut self) {
        for i in self.touched.drain(..) {
            self.tree[i] = 0;
        }
    }
}

/// The calibrated estimator's gap (recorded usage − estimate), spread over the
/// messages that produced it, so that a policy that compacts those messages
/// away also sheds their share.
///
/// The gap is an estimate of what chars/4 misses: content the log does not
/// carry (attachments a harness adds to a tool result, tool schemas) and the
/// tokenizer's difference. Carried whole, as the usage of the baseline's
/// context, it would stay in the policy's estimate after the policy replaced
/// the messages it came from: the trigger would keep firing on a history with
/// nothing left to replace (the no-progress loop). Each recorded usage covers
/// the baseline's context; what its gap adds to the gap of the messages already
/// covered is shared by the messages new since the previous usage, in
/// proportion to their estimates (a message never below zero tokens). The first
/// usage's gap, and what no message can take, stays on the whole request (the
/// residual), as before. With no compaction by the policy the policy's estimate
/// equals the baseline's. O(n) per session: shares are assigned once, in
/// message order, and summed with prefix sums.
pub(super) struct Calibration {
    corr: Vec<i64>,
    /// `prefix[i]` = Σ `corr[..i]`, for `i ≤ covered`.
    prefix: Vec<i64>,
    /// Messages before this have their share.
    covered: usize,
    /// The first usage's gap (None before it): the system prompt's.
    base: Option<i64>,
}

impl Calibration {
    pub fn new(n: usize) -> Calibration {
        let mut prefix = Vec::with_capacity(n + 1);
        prefix.push(0);
        Calibration { corr: vec![0; n], prefix, covered: 0, base: None }
    }

    /// Σ shares over `r` (messages not covered yet have none).
    fn sum(&self, r: std::ops::Range<usize>) -> i64 {
        let at = |i: usize| self.prefix[i.min(self.covered)];
        if r.start < r.end { at(r.end) - at(r.start) } else { 0 }
    }

    /// Usage recorded for the request made of messages before `m`, `gap` tokens
    /// more than the baseline's estimate of it.
    pub fn record(
        &mut self,
        m: usize,
        gap: i64,
        baseline: &Baseline,
        est: &dyn Fn(usize) -> u64,
        eng: &mut engine::Engine<'_>,
        units: Units,
    ) {
        let (kept, from) = baseline.context(m);
        let lo = self.covered.max(from);
        let m = m.min(self.corr.len());
        // The first usage also measures the system prompt: its gap is not the
        // messages'. A message never shrinks below zero tokens.
        let base = *self.base.get_or_insert(gap);
        let kept: i64 = kept.into_iter().map(|r| self.sum(r)).sum();
        let known = base + kept + self.sum(from..lo);
        let weight: i64 = (lo..m).map(|i| est(i) as i64).sum();
        let share = if weight == 0 { 0 } else { (gap - known).max(-weight) };
        let mut acc = 0i64;
        let mut given = 0i64;
        for i in lo..m {
            acc += est(i) as i64;
            // Cumulative rounding: the shares add up to `share` exactly.
            let upto = ((share as i128 * acc as i128).div_euclid(weight.max(1) as i128)) as i64;
            self.corr[i] = upto - given;
            given = upto;
            if self.corr[i] != 0 {
                match units {
                    Units::Policy => eng.calibrate(i, self.corr[i]),
                    Units::Meter => eng.mcalibrate(i, self.corr[i]),
                }
            }
        }
        for i in self.covered..m {
            let next = self.prefix[i] + self.corr[i];
            self.prefix.push(next);
        }
        self.covered = self.covered.max(m);
        let residual = gap - (kept + self.sum(from..m));
        match units {
            Units::Policy => eng.set_residual(residual),
            Units::Meter => eng.mset_residual(residual),
        }
    }
}

/// Which of the engine's calibrations a [`Calibration`] feeds.
#[derive(Clone, Copy)]
pub(super) enum Units {
    /// The calibrated estimator the policy decides with (past usage only).
    Policy,
    /// The meter (every usage up to the call measured).
    Meter,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Block, CompactionKind, Format, Message, Origin, RecordedCompaction, Role};

    /// After a compaction that keeps the session's start and a run before its
    /// summary, the baseline's context is both runs, the summary and what follows.
    #[test]
    fn the_baseline_after_a_compaction_holds_both_kept_runs() {
        let mut s = Session::new("s", Format::Cline, "t");
        s.messages = (0..7)
            .map(|i| {
                let (role, origin) =
                    if i % 2 == 0 { (Role::User, Origin::Human) } else { (Role::Assistant, Origin::Model) };
                Message::at(role, origin, vec![Block::text("x")], i + 1, None)
            })
            .collect();
        s.recorded_compactions.push(RecordedCompaction {
            kind: CompactionKind::ClineDeletedRange,
            source_line: 5,
            inserted: 4..5,
            kept: 3..4,
            head: 0..1,
            tokens_before: None,
            trigger: None,
        });
        let est = |i: usize| 1u64 << i;
        let b = Baseline::new(&s, &est, &[]);
        assert_eq!(b.at(3), 1 + 2 + 4, "before the compaction: everything");
        assert_eq!(b.at(4), 1 + 8, "where it takes effect: the head and the kept run");
        assert_eq!(b.at(5), 1 + 8 + 16, "then the summary");
        assert_eq!(b.at(6), 1 + 8 + 16 + 32);
        assert_eq!(b.context(6), ([0..1, 3..4], 4));
    }

    proptest::proptest! {
        /// The tree's sums are the plain sums, across clears.
        #[test]
        fn taken_sums_what_was_added_since_the_last_clear(
            ops in proptest::collection::vec((0usize..12, 0u64..1000, proptest::bool::weighted(0.1)), 0..60),
        ) {
            let mut t = Taken::new(10);
            let mut plain = [0u64; 10];
            for (m, d, clear) in ops {
                if clear {
                    t.clear();
                    plain = [0; 10];
                } else if m < 10 {
                    t.add(m, d);
                    plain[m] += d;
                }
                for upto in 0..=12 {
                    proptest::prop_assert_eq!(t.before(upto), plain[..upto.min(10)].iter().sum::<u64>());
                }
            }
        }
    }
}
