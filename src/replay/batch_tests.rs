//! The batch runner over the engine: policies of a session share its token
//! counts and a summarizer bound to it, with the same traces as alone.

use super::linear_tests::long_session;
use super::testkit::CountingEstimator as Counting;
use super::tests::bare;
use super::*;
use crate::pipeline::replay_many;
use crate::presets;
use crate::summarize::{Extractive, SummarizeError, Summary, SummaryRequest};
use crate::tokens::{Chars4, EstimatorKind};
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn replay_many_shares_token_counts_between_policies() {
    struct Shared(std::sync::Arc<Counting>);
    impl Resolver for Shared {
        fn estimator(&self, _: EstimatorKind) -> Result<std::sync::Arc<dyn crate::tokens::Estimator>, ReplayError> {
            Ok(self.0.clone())
        }
        fn summarizer(
            &self,
            kind: crate::summarize::SummarizerKind,
        ) -> Result<std::sync::Arc<dyn Summarizer>, ReplayError> {
            BuiltinResolver.summarizer(kind)
        }
    }
    let est = std::sync::Arc::new(Counting { messages: AtomicUsize::new(0) });
    let sessions = vec![long_session(20), long_session(35)];
    let n: usize = sessions.iter().map(|s| s.messages.len()).sum();
    let mut a = bare();
    a.name = "a".into();
    let mut b = bare();
    b.name = "b".into();
    b.system_tokens = Some(1_000);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let out = replay_many(&sessions, &[a, b], &Shared(est.clone()), ReplayOptions::default(), &pool, None);
    assert_eq!(out.len(), 2);
    // One estimate per message for both policies together.
    assert_eq!(est.messages.load(Ordering::Relaxed), n);
    let (ta, tb) = (out[0].traces[0].as_ref().unwrap(), out[0].traces[1].as_ref().unwrap());
    assert_eq!(tb.calls[0].tokens_policy, ta.calls[0].tokens_policy + 1_000);
    assert_eq!((ta.policy.as_str(), tb.policy.as_str()), ("a", "b"));
}

/// Counts the sessions it is bound to; answers like [`Extractive`].
struct Binding {
    binds: AtomicUsize,
}

impl Summarizer for Binding {
    fn name(&self) -> &str {
        "binding"
    }
    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        Extractive.summarize(req)
    }
    fn for_session<'s>(&'s self, lens: &'s crate::text::atoms::SessionLens<'s>) -> Option<Box<dyn Summarizer + 's>> {
        self.binds.fetch_add(1, Ordering::Relaxed);
        Extractive.for_session(lens)
    }
}

#[test]
fn policies_sharing_a_summarizer_share_it_bound_to_each_session() {
    struct One(std::sync::Arc<Binding>);
    impl Resolver for One {
        fn estimator(&self, kind: EstimatorKind) -> Result<std::sync::Arc<dyn crate::tokens::Estimator>, ReplayError> {
            BuiltinResolver.estimator(kind)
        }
        fn summarizer(
            &self,
            _: crate::summarize::SummarizerKind,
        ) -> Result<std::sync::Arc<dyn Summarizer>, ReplayError> {
            Ok(self.0.clone())
        }
    }
    let sessions = vec![long_session(40), long_session(25)];
    let policies = three_scaled_presets();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let binding = std::sync::Arc::new(Binding { binds: AtomicUsize::new(0) });
    let out = replay_many(&sessions, &policies, &One(binding.clone()), ReplayOptions::default(), &pool, None);
    // Bound once per session, shared by the three policies.
    assert_eq!(binding.binds.load(Ordering::Relaxed), sessions.len());
    let mut compactions = 0;
    // Both sessions are named `long`: results keep the input order.
    for (s, r) in sessions.iter().zip(&out) {
        for (p, t) in policies.iter().zip(&r.traces) {
            let ctx = ReplayContext {
                estimator: &Chars4,
                summarizer: &Extractive,
                message_tokens: None,
                meter_tokens: None,
                facts: None,
                options: ReplayOptions::default(),
            };
            let plain = replay_session(s, p, &ctx).unwrap();
            compactions += plain.metrics.compactions;
            assert_eq!(t.as_ref().unwrap(), &plain, "{}", p.name);
        }
    }
    assert!(compactions > 0);
    // A summarizer only one policy uses is bound too: it reads the atoms
    // of the session's lens, which the quality pass shares.
    let alone = std::sync::Arc::new(Binding { binds: AtomicUsize::new(0) });
    replay_many(&sessions, &policies[..1], &One(alone.clone()), ReplayOptions::default(), &pool, None);
    assert_eq!(alone.binds.load(Ordering::Relaxed), sessions.len());
}

/// One lens per session: three policies compact it with the extractive
/// summarizer and the quality pass scores every compaction, and each block
/// of each message is still read into atoms once (here, on this thread),
/// not once per policy and once more for the metric.
#[test]
fn a_block_is_read_into_atoms_once_for_every_policy_and_the_metric() {
    use crate::pipeline::Prepared;
    use crate::quality::QualityPlan;
    use crate::text::atoms::session_reads_here as reads;
    let s = long_session(80);
    let policies = three_scaled_presets();
    let plan = QualityPlan::new(&policies, &BuiltinResolver);
    let prepared = Prepared::new(&policies, &BuiltinResolver);
    let before = reads();
    let r = prepared.replay_scored(&s, ReplayOptions::default(), Some(&plan));
    let read = reads() - before;
    let compacting = r.traces.iter().filter(|t| t.as_ref().is_ok_and(|t| t.metrics.compactions > 0)).count();
    assert_eq!(compacting, 3, "every policy compacts");
    assert!(r.quality.iter().all(|q| q.as_ref().is_some_and(|q| q.compactions > 0)), "every replay is scored");
    let blocks: usize = s.messages.iter().map(|m| m.blocks.len()).sum();
    assert!(read <= blocks, "{read} reads of {blocks} blocks");
    // The metric alone reads every block: the summarizers added nothing.
    let before = reads();
    drop(crate::quality::SessionAtoms::from_session(&s));
    assert_eq!(reads() - before, blocks);
    assert_eq!(read, blocks);
}

/// nous, default and spec008 scaled to a 30K window, each under its own name.
fn three_scaled_presets() -> Vec<Policy> {
    ["nous", "default", "spec008"]
        .iter()
        .map(|name| {
            let mut p = testkit::scaled(presets::get(name).unwrap(), 30_000);
            p.name = (*name).into();
            p
        })
        .collect()
}

/// The recorded compactions' `extractive@budget` rows are written by the
/// extractive summarizer the replays bound to the session (its reads of the
/// messages serve again), and equal what a fresh one writes.
#[test]
fn recorded_rows_written_by_the_replays_extractive_summarizer_equal_a_fresh_ones() {
    use crate::model::{CompactionKind, Origin, RecordedCompaction};
    use crate::pipeline::Prepared;
    use crate::quality::{QualityPlan, SessionAtoms, evaluate_recorded};
    // A long session whose agent compacted at message 60: its summary
    // message is inserted there.
    let mut s = long_session(80);
    let mut summary = s.messages[60].clone();
    summary.origin = Origin::CompactSummary;
    s.messages.insert(60, summary);
    s.recorded_compactions.push(RecordedCompaction {
        kind: CompactionKind::ClaudeBoundary,
        source_line: 0,
        inserted: 60..61,
        kept: 60..60,
        head: 0..0,
        tokens_before: None,
        trigger: None,
    });
    assert!(s.has_own_compactions());
    let mut policy = three_scaled_presets().remove(1);
    policy.compact.summarizer = crate::summarize::SummarizerKind::Extractive;
    let policies = [policy];
    let plan = QualityPlan::new(&policies, &BuiltinResolver);
    let options = ReplayOptions::default();
    let r = Prepared::new(&policies, &BuiltinResolver).replay_scored(&s, options, Some(&plan));
    let compactions = r.traces[0].as_ref().unwrap().metrics.compactions;
    assert!(compactions > 0, "the policy compacts, so its summarizer read messages");
    let reused = r.recorded.expect("the log records compactions");
    let fresh = evaluate_recorded(&s, &SessionAtoms::from_session(&s), options.meter.counter()).unwrap();
    let rows = |q: &crate::quality::RecordedQuality| -> Vec<String> {
        q.events.iter().flat_map(|e| &e.rows).map(|r| serde_json::to_string(r).unwrap()).collect()
    };
    assert!(reused.events.iter().any(|e| e.rows.iter().any(|r| r.summarizer == "extractive@budget")));
    assert_eq!(rows(&reused), rows(&fresh));
}
