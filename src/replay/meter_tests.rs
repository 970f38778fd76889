//! The meter's promises (DESIGN.md §3 "Meter vs estimator"): in one run the
//! baseline is the same whatever each policy's estimator, a call with
//! recorded usage measures exactly as recorded, and a policy that changes
//! nothing measures exactly as the baseline.

use super::proptests::{build_from, scaled, step};
use super::*;
use crate::model::{Usage, UsageProvenance};
use crate::summarize::Extractive;
use crate::tokens::{Chars4, Cl100k, O200k, PerBlock};
use proptest::prelude::*;

const ESTIMATORS: [EstimatorKind; 5] = [
    EstimatorKind::Chars4,
    EstimatorKind::PerBlock,
    EstimatorKind::O200k,
    EstimatorKind::Cl100k,
    EstimatorKind::Calibrated,
];

fn counter(kind: EstimatorKind) -> &'static dyn Estimator {
    match kind.message_counter() {
        EstimatorKind::PerBlock => &PerBlock,
        EstimatorKind::O200k => &O200k,
        EstimatorKind::Cl100k => &Cl100k,
        _ => &Chars4,
    }
}

fn replay(s: &Session, p: &Policy, meter: Meter) -> SessionTrace {
    let ctx = ReplayContext {
        estimator: counter(p.estimator),
        summarizer: &Extractive,
        message_tokens: None,
        meter_tokens: None,
        facts: None,
        options: ReplayOptions { check_invariants: true, verify_totals: true, keep_transcript: false, meter },
    };
    match replay_session(s, p, &ctx) {
        Ok(t) => {
            assert!(t.violations.is_empty(), "{}: {:?}", p.name, t.violations);
            t
        }
        Err(e) => panic!("{}: {e}", p.name),
    }
}

/// Recorded usage on the calls `keep` selects: the chars/4 count of the
/// request scaled by `factor` percent plus a system prompt, as a real
/// tokenizer would differ.
fn with_usage(mut s: Session, keep: &[bool], factor: u64, system: u64) -> Session {
    let mut acc = 0u64;
    let mut upto = 0usize;
    for (ci, call) in s.calls.iter_mut().enumerate() {
        while upto < call.message_index {
            acc += Chars4.message_tokens(&s.messages[upto]);
            upto += 1;
        }
        if keep.get(ci).copied().unwrap_or(true) {
            call.usage = Some(Usage {
                uncached_input: system + acc * factor / 100,
                cache_read: 0,
                cache_write: 0,
                output: 0,
                reasoning: 0,
                provenance: UsageProvenance::Anthropic,
            });
        }
    }
    s
}

/// Per call: tokens, cache prefix, overflow.
type BaselineColumns = Vec<(u64, u64, bool)>;

fn baseline_columns(t: &SessionTrace) -> BaselineColumns {
    t.calls
        .iter()
        .map(|r| (r.tokens_baseline, r.prefix_baseline, r.events.contains(&Event::OverflowBaseline)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(16)
    ))]

    /// Every preset, each with another estimator: one baseline.
    #[test]
    fn one_baseline_whatever_the_estimator(
        steps in prop::collection::vec(step(), 1..30),
        start in 0u8..4,
        keep in prop::collection::vec(prop::bool::weighted(0.7), 0..40),
        factor in 70u64..140,
        system in 0u64..3_000,
        meter in prop::sample::select(Meter::ALL.to_vec()),
    ) {
        let s = with_usage(build_from(start, &steps, false), &keep, factor, system);
        let mut first: Option<(String, BaselineColumns)> = None;
        for (i, name) in crate::presets::names().into_iter().enumerate() {
            let mut p = scaled(name);
            p.estimator = ESTIMATORS[i % ESTIMATORS.len()];
            let t = replay(&s, &p, meter);
            let cols = baseline_columns(&t);
            match &first {
                None => first = Some((p.name.clone(), cols)),
                Some((n, want)) => prop_assert_eq!(&cols, want, "{} against {}", p.name, n),
            }
        }
    }

    /// Every call with usage: the baseline is the recorded usage, call by call
    /// and in sum; a policy that prunes and compacts nothing measures the same.
    #[test]
    fn recorded_usage_is_the_baseline(
        steps in prop::collection::vec(step(), 1..30),
        start in 0u8..4,
        factor in 70u64..140,
        system in 0u64..3_000,
        estimator in prop::sample::select(ESTIMATORS.to_vec()),
    ) {
        let s = with_usage(build_from(start, &steps, false), &[], factor, system);
        let mut p = crate::policy::Policy { name: "none".into(), ..Policy::default() };
        p.prune.enabled = false;
        p.compact.enabled = false;
        p.estimator = estimator;
        let t = replay(&s, &p, Meter::Recorded);
        let recorded: Vec<u64> = t.calls.iter().map(|r| r.tokens_recorded.unwrap_or(u64::MAX)).collect();
        prop_assert_eq!(t.calls.iter().map(|r| r.tokens_baseline).collect::<Vec<_>>(), recorded.clone());
        prop_assert_eq!(t.calls.iter().map(|r| r.tokens_policy).collect::<Vec<_>>(), recorded);
        prop_assert_eq!(t.metrics.input_tokens_baseline, t.metrics.input_tokens_recorded);
        prop_assert_eq!(t.metrics.input_tokens_policy, t.metrics.input_tokens_baseline);
    }
}
