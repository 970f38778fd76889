//! Property tests: the invariants of DESIGN.md §3 for every preset over random
//! sessions (user/assistant/tool sequences, tool results of random sizes, parallel
//! calls answered in one message or several, images, errors, idle gaps), with
//! windows scaled down so compactions chain. Also: replay_many is deterministic
//! across thread counts.

use super::testkit::{SessionBuilder, filler};
use super::*;
use crate::invariants::{self, CheckOptions};
use crate::pipeline::{Progress, replay_many};
use crate::presets;
use crate::summarize::Extractive;
use crate::tokens::Chars4;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::json;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub(super) enum Step {
    Human(usize),
    Injected(usize),
    Reply(usize),
    /// Tool calls: (size, is_error, image) per result, answered in one message
    /// or one message each, with a tool name per call.
    Tools {
        results: Vec<(usize, bool, bool, usize)>,
        split: bool,
    },
    Gap(i64),
}

const TOOLS: [&str; 5] = ["Read", "Bash", "Edit", "skill", "Grep"];

pub(super) fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => (10usize..3_000).prop_map(Step::Human),
        1 => (10usize..800).prop_map(Step::Injected),
        2 => (5usize..1_500).prop_map(Step::Reply),
        6 => (prop::collection::vec((1usize..12_000, prop::bool::weighted(0.15), prop::bool::weighted(0.05), 0usize..5), 1..4), any::<bool>())
            .prop_map(|(results, split)| Step::Tools { results, split }),
        1 => (1i64..900).prop_map(Step::Gap),
    ]
}

/// How a log starts: a user request, injected context first, a system message
/// first, or mid-turn (a resumed log whose first message is a tool call).
pub(super) fn build_from(start: u8, steps: &[Step], trailing_human: bool) -> Session {
    let b = SessionBuilder::new("prop");
    let mut b = match start % 4 {
        0 => b.human(filler(200, 0)),
        1 => b.injected(filler(300, 0)).human(filler(200, 0)),
        2 => b.system(filler(300, 0)).human(filler(200, 0)),
        _ => b.tool_calls("", &[("Read", json!({"file_path": "/repo/start.rs"}))]).results(&[(
            filler(3_000, 0),
            false,
            false,
        )]),
    };
    for (i, s) in steps.iter().enumerate() {
        b = match s {
            Step::Human(n) => b.human(filler(*n, i)),
            Step::Injected(n) => b.injected(filler(*n, i)),
            Step::Reply(n) => b.assistant(filler(*n, i)),
            Step::Gap(g) => b.gap(*g),
            Step::Tools { results, split } => {
                let calls: Vec<(&str, serde_json::Value)> = results
                    .iter()
                    .enumerate()
                    .map(|(j, r)| {
                        let name = TOOLS[r.3];
                        let input = match name {
                            "Bash" => json!({"command": format!("cargo test -p crate{i}")}),
                            _ => json!({"file_path": format!("/repo/src/m{i}_{j}.rs")}),
                        };
                        (name, input)
                    })
                    .collect();
                let b = b.tool_calls("", &calls);
                let rs: Vec<(String, bool, bool)> =
                    results.iter().enumerate().map(|(j, r)| (filler(r.0, i * 7 + j), r.1, r.2)).collect();
                if *split { rs.into_iter().fold(b, |b, r| b.results(std::slice::from_ref(&r))) } else { b.results(&rs) }
            }
        };
    }
    // Every round of tool calls ends with a reply, so the session is well formed.
    b = b.assistant(filler(50, 999));
    if trailing_human {
        b = b.human(filler(100, 1000));
    }
    b.build()
}

fn build(steps: &[Step], trailing_human: bool) -> Session {
    build_from(0, steps, trailing_human)
}

/// A preset with its token constants scaled to a 12K window, so random sessions
/// of a few hundred thousand characters compact several times.
pub(super) fn scaled(name: &str) -> Policy {
    super::testkit::scaled(presets::get(name).unwrap_or_default(), 12_000)
}

fn replay(s: &Session, p: &Policy) -> SessionTrace {
    let ctx = ReplayContext {
        estimator: &Chars4,
        summarizer: &Extractive,
        message_tokens: None,
        meter_tokens: None,
        facts: None,
        options: ReplayOptions {
            check_invariants: true,
            verify_totals: true,
            keep_transcript: true,
            ..ReplayOptions::default()
        },
    };
    match replay_session(s, p, &ctx) {
        Ok(t) => t,
        Err(e) => panic!("{}: {e}", p.name),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
    ))]

    /// A replay given the session's facts (tool result sizes, file operations
    /// of tool calls, as a sweep shares them) is the replay that reads them
    /// from the messages, for every preset.
    #[test]
    fn shared_facts_change_nothing(steps in prop::collection::vec(step(), 1..40), start in 0u8..4) {
        let s = build_from(start, &steps, true);
        let facts = SessionFacts::of(&s);
        prop_assert_eq!(facts.len(), s.messages.len());
        for name in presets::names() {
            let p = scaled(name);
            let ctx = ReplayContext {
                estimator: &Chars4,
                summarizer: &Extractive,
                message_tokens: None,
                meter_tokens: None,
                facts: Some(&facts),
                options: ReplayOptions { check_invariants: true, verify_totals: true, keep_transcript: true, ..ReplayOptions::default() },
            };
            let shared = replay_session(&s, &p, &ctx).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(shared, replay(&s, &p), "{}", name);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
    ))]

    /// Every preset's transcript of one session, written one after another
    /// sharing the lines of unchanged session messages (as a `compare`
    /// writes them), is byte for byte the transcript written alone; and
    /// the sharing is used, so this compares something.
    #[test]
    fn transcripts_sharing_lines_are_the_transcripts_written_alone(
        steps in prop::collection::vec(step(), 1..40),
        start in 0u8..4,
    ) {
        let s = build_from(start, &steps, true);
        let traces: Vec<SessionTrace> = presets::names().iter().map(|name| replay(&s, &scaled(name))).collect();
        let mut shared = crate::report::SourceLines::default();
        let mut reused = 0;
        for (k, t) in traces.iter().enumerate() {
            let mut got = Vec::new();
            crate::report::write_transcript_sharing(&mut got, t, Some(&mut shared), k + 1 < traces.len())
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let alone = crate::report::transcript_jsonl(t);
            prop_assert!(got == alone, "{}: {}\n!=\n{}", t.policy, String::from_utf8_lossy(&got), String::from_utf8_lossy(&alone));
            if k > 0 {
                reused += t.transcript_sources.iter().flatten().count();
            }
        }
        // The closing request reaches every transcript as it was read.
        prop_assert!(reused > 0);
    }
}

proptest! {
    // 24 cases by default (debug builds are slow); PROPTEST_CASES=N for a soak.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
    ))]

    #[test]
    fn invariants_hold_for_every_preset(
        steps in prop::collection::vec(step(), 1..50),
        trailing in any::<bool>(),
        start in 0u8..4,
    ) {
        let s = build_from(start, &steps, trailing);
        for name in presets::names() {
            let p = scaled(name);
            let t = replay(&s, &p);
            // Per call: pairing, alternation, pruning only touches tool results,
            // incremental totals equal a recomputation.
            prop_assert!(t.violations.is_empty(), "{name}: {:?}", t.violations);
            // Compaction never grows history.
            for c in t.compactions.iter().filter(|c| c.applied) {
                prop_assert!(c.tokens_after < c.tokens_before, "{name}: {c:?}");
            }
            // The final transcript is well formed too (after chained compactions).
            let unpaired = invariants::source_unpaired_ids(&s);
            let opts = CheckOptions {
                alternation: p.compact.alternation,
                allow_pending_tool_uses: true,
                ignore_ids: Some(&unpaired),
                images_untouchable: false,
                made: None,
            };
            prop_assert!(invariants::check(&t.transcript, &opts).is_ok(), "{name}: {:?}", invariants::check(&t.transcript, &opts));
            // A transcript message said to be a session message is that
            // message, as read.
            prop_assert_eq!(t.transcript_sources.len(), t.transcript.len(), "{}", name);
            for (m, i) in t.transcript.iter().zip(&t.transcript_sources) {
                if let Some(i) = i {
                    prop_assert_eq!(Some(m), s.messages.get(*i as usize), "{}", name);
                }
            }
            // No-progress back-off: never two attempts at the same call for the threshold.
            let mut calls: Vec<(usize, CompactionReason)> = t.compactions.iter().map(|c| (c.call, c.reason)).collect();
            calls.dedup();
            prop_assert_eq!(calls.len(), t.compactions.len(), "{}", name);

            // Pruning alone never makes a request bigger than the baseline.
            let mut q = p.clone();
            q.compact.enabled = false;
            let t = replay(&s, &q);
            prop_assert!(t.violations.is_empty(), "{name} prune-only: {:?}", t.violations);
            for c in &t.calls {
                prop_assert!(c.tokens_policy <= c.tokens_baseline, "{name}: call {} {} > {}", c.call, c.tokens_policy, c.tokens_baseline);
            }
        }
    }
}

/// Maps every estimator to chars/4 so presets naming others can run here.
struct TestResolver;
impl Resolver for TestResolver {
    fn estimator(&self, _: crate::tokens::EstimatorKind) -> Result<Arc<dyn crate::tokens::Estimator>, ReplayError> {
        Ok(Arc::new(Chars4))
    }
    fn summarizer(
        &self,
        kind: crate::summarize::SummarizerKind,
    ) -> Result<Arc<dyn crate::summarize::Summarizer>, ReplayError> {
        BuiltinResolver.summarizer(kind)
    }
}

#[test]
fn replay_many_is_identical_at_any_thread_count() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut sessions = Vec::new();
    for k in 0..8 {
        let steps = prop::collection::vec(step(), 5..40).new_tree(&mut runner).map(|t| t.current()).unwrap_or_default();
        let mut s = build(&steps, k % 2 == 0);
        // Duplicate ids on purpose: ordering must still be stable.
        s.id = format!("session-{}", k % 7);
        s.source_path = format!("/logs/{k}.jsonl").into();
        sessions.push(s);
    }
    let policies: Vec<Policy> = presets::names().into_iter().map(scaled).collect();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let cb = |p: Progress<'_>| {
            assert!(p.done <= p.total);
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let out = replay_many(&sessions, &policies, &TestResolver, ReplayOptions::default(), &pool, Some(&cb));
        assert_eq!(seen.into_inner(), sessions.len());
        let json: Vec<String> = out
            .iter()
            .map(|r| {
                let traces: Vec<&SessionTrace> = r.traces.iter().map(|t| t.as_ref().unwrap()).collect();
                format!("{} {} {}", r.session_id, r.source_path.display(), serde_json::to_string(&traces).unwrap())
            })
            .collect();
        json
    };
    // The generated sessions do chain compactions under every compacting preset.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let out = replay_many(&sessions, &policies, &TestResolver, ReplayOptions::default(), &pool, None);
    for (pi, p) in policies.iter().enumerate().filter(|(_, p)| p.compact.enabled) {
        let most = out.iter().map(|r| r.traces[pi].as_ref().map_or(0, |t| t.metrics.compactions)).max();
        assert!(most >= Some(2), "{}: at most {most:?} compactions per session", p.name);
    }
    let one = run(1);
    let two = run(2);
    assert_eq!(one.len(), sessions.len());
    assert!(one == two, "replay_many differs between 1 and 2 threads");
    // Sorted by (id, path).
    let keys: Vec<&str> = one.iter().map(|l| l.split(' ').next().unwrap_or("")).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}

#[test]
fn builtin_resolver_names_what_it_lacks() {
    let err = BuiltinResolver.estimator(crate::tokens::EstimatorKind::O200k).err();
    assert_eq!(err, Some(ReplayError::Estimator("o200k".into())));
    assert!(BuiltinResolver.summarizer(crate::summarize::SummarizerKind::Llm).is_err());
    let s = build(&[Step::Human(10)], false);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let out = replay_many(&[s], &[presets::dotnet()], &BuiltinResolver, ReplayOptions::default(), &pool, None);
    assert_eq!(out[0].traces[0], Err(ReplayError::Estimator("per_block".into())));
}
