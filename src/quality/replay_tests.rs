//! `evaluate_trace` on hand-built sessions replayed through hand-built
//! policies, where the compaction point, the needed atoms and every score are
//! known: the P/T/F mapping of a `CompactionEvent`, the references at the same
//! point, pruning loss, chained compactions, CSV rows and determinism.

use super::*;
use crate::model::Session;
use crate::policy::{Compact, CutKind, Flush, Policy, Prune, TriggerKind};
use crate::replay::testkit::{CountingEstimator, SessionBuilder, filler};
use crate::replay::{PruneKind, ReplayContext, ReplayOptions, SessionTrace, replay_session};
use crate::summarize::{Extractive, SummarizerKind};
use crate::tokens::{Chars4, EstimatorKind};
use pretty_assertions::assert_eq;
use serde_json::json;

const SHA: &str = "9fceb02d0ae598e95dc970b74767f19372d61af8";

/// No system prompt, no per-message overhead, chars/4, nothing enabled.
fn bare() -> Policy {
    Policy {
        name: "test".into(),
        source: String::new(),
        context_window: 1_000_000,
        max_output_tokens: 0,
        system_tokens: Some(0),
        estimator: EstimatorKind::Chars4,
        message_overhead_tokens: 0,
        prune: Prune::default(),
        compact: Compact::default(),
        flush: Flush::default(),
        check: Default::default(),
    }
}

/// Compact the whole history once it exceeds 500 tokens, extractive summary.
fn whole_history() -> Policy {
    let mut p = bare();
    p.compact = Compact {
        enabled: true,
        trigger: TriggerKind::Tokens,
        trigger_tokens: 500,
        cut: CutKind::WholeHistory,
        summarizer: SummarizerKind::Extractive,
        summary_max_tokens: 1_000,
        min_gain_tokens: 0,
        ..Compact::default()
    };
    p
}

fn replay(s: &Session, p: &Policy) -> SessionTrace {
    let ctx = ReplayContext {
        estimator: &Chars4,
        summarizer: &Extractive,
        message_tokens: None,
        meter_tokens: None,
        facts: None,
        options: ReplayOptions::default(),
    };
    match replay_session(s, p, &ctx) {
        Ok(t) => t,
        Err(e) => panic!("replay failed: {e}"),
    }
}

fn edit(path: &str) -> (&'static str, serde_json::Value) {
    ("Edit", json!({"file_path": path, "old_string": "a", "new_string": "b"}))
}

fn bash(cmd: &str) -> (&'static str, serde_json::Value) {
    ("Bash", json!({ "command": cmd }))
}

/// P = 0..3 (the request, an edit, a big result), compacted at call 1; F = 3..7
/// uses the edited file again (message 6, two agent turns in) and the user's
/// constraint applies from the first agent turn.
fn session() -> Session {
    SessionBuilder::new("s1")
        .human("Fix the parser in src/parser.rs. Never modify Cargo.lock.")
        .tool_calls("", &[edit("src/parser.rs")])
        .results(&[(filler(2_400, 7), false, false)])
        .tool_calls("", &[bash("cargo test --lib parser")])
        .results(&[("error[E0308]: mismatched types".into(), true, false)])
        .assistant("The test still fails.")
        .tool_calls("", &[edit("src/parser.rs")])
        .build()
}

fn evaluate(s: &Session, t: &SessionTrace, p: &Policy) -> SessionQuality {
    let atoms = SessionAtoms::from_session(s);
    evaluate_trace(s, t, &atoms, &Chars4, &QualityOptions::for_policy(p))
}

fn row<'q>(e: &'q EventQuality, name: &str) -> &'q CompactionQuality {
    match e.rows.iter().find(|r| r.summarizer == name) {
        Some(r) => r,
        None => panic!("no {name} row in {:?}", e.rows.iter().map(|r| &r.summarizer).collect::<Vec<_>>()),
    }
}

#[test]
fn one_compaction_scored_with_its_references_at_the_same_point() {
    let s = session();
    let p = whole_history();
    let t = replay(&s, &p);
    assert_eq!(t.compactions.iter().filter(|c| c.applied).count(), 1);
    let q = evaluate(&s, &t, &p);
    assert_eq!((q.session_id.as_str(), q.policy.as_str(), q.summarizer.as_str()), ("s1", "test", "extractive"));
    assert_eq!(q.compactions, 1);
    let e = &q.events[0];
    assert_eq!(
        e.info,
        EventInfo {
            event: 0,
            call: 1,
            future_start: 3,
            reason: crate::replay::CompactionReason::Threshold,
            outcome: crate::replay::SummaryOutcome::Summarizer,
            summarizer: "extractive".into(),
            chained: false,
            split_turn: false,
            replaced_messages: 3,
            kept_messages: 0,
            future_messages: 4,
        }
    );
    let names: Vec<&str> = e.rows.iter().map(|r| r.summarizer.as_str()).collect();
    assert_eq!(names, vec![CANDIDATE_POLICY, REF_TRUNCATE, REF_MASKING, REF_ORACLE, REF_MASKING_BUDGET]);

    // N: the edited file (used as an edit argument after 2 agent turns of F)
    // and the constraint (from the first agent turn).
    let w_path = 3.0 / (1.0 + 2.0 / 20.0) * 1.5;
    let w_constraint = 2.0;
    let policy = row(e, CANDIDATE_POLICY);
    assert_eq!(policy.needed_atoms, 2);
    assert_eq!((policy.needed_modified_path, policy.needed_constraint), (1, 1));
    assert!((policy.needed_weight - (w_path + w_constraint)).abs() < 1e-9, "{}", policy.needed_weight);
    // The checkpoint names both; `truncate` lists the file but not the rule.
    assert_eq!(policy.frr, Some(1.0));
    assert_eq!(policy.hallucination_rate, Some(0.0));
    let truncate = row(e, REF_TRUNCATE);
    let want = w_path / (w_path + w_constraint);
    assert!(truncate.frr.is_some_and(|f| (f - want).abs() < 1e-9), "{:?} != {want}", truncate.frr);
    assert_eq!(truncate.recall_constraint, Some(0.0));
    // P has one tool result, under M = 10: masking keeps all of P.
    let masking = row(e, REF_MASKING);
    assert_eq!(masking.frr, Some(1.0));
    assert_eq!(masking.summary_tokens, masking.replaced_tokens);
    assert_eq!(row(e, REF_ORACLE).frr, Some(1.0));
    // At the policy summary's size masking cannot keep the 600-token result,
    // the newest message of P, so it keeps nothing.
    let at_budget = row(e, REF_MASKING_BUDGET);
    assert_eq!((at_budget.frr, at_budget.summary_tokens), (Some(0.0), 0));
    // All rows share the point.
    assert!(e.rows.iter().all(|r| r.replaced_tokens == policy.replaced_tokens && r.kept_tokens == 0));

    // The per-session statistics are those of the single event.
    let stats = q.candidate(REF_TRUNCATE).map(|c| (c.events, c.frr_pooled));
    assert_eq!(stats, Some((1, truncate.frr)));
    assert_eq!(q.pruning, PruningLoss::default());
}

#[test]
fn chained_compaction_puts_the_previous_summary_in_p() {
    // Two rounds of "big result, then more work": each crosses the trigger.
    let s = SessionBuilder::new("s2")
        .human("Fix the parser in src/parser.rs.")
        .tool_calls("", &[edit("src/parser.rs")])
        .results(&[(filler(2_400, 1), false, false)])
        .tool_calls("", &[bash("cargo build")])
        .results(&[(filler(2_400, 2), false, false)])
        .tool_calls("", &[bash("cargo test")])
        .results(&[("ok".into(), false, false)])
        .tool_calls("", &[edit("src/parser.rs")])
        .build();
    let mut p = whole_history();
    p.compact.iterative_update = true;
    let t = replay(&s, &p);
    let applied: Vec<&crate::replay::CompactionEvent> = t.compactions.iter().filter(|c| c.applied).collect();
    assert_eq!(applied.len(), 2);
    let points = trace_points(&s, &t, false);
    assert_eq!(points[0].point.replaced_text, Vec::<String>::new());
    assert_eq!(points[1].point.replaced_text, vec![applied[0].summary.clone()]);
    assert_eq!(points[1].point.kept_text, Vec::<String>::new());
    let q = evaluate(&s, &t, &p);
    assert_eq!(q.events.iter().map(|e| e.info.chained).collect::<Vec<_>>(), vec![false, true]);
    // The edited file, named only by the previous summary and message 1 (both
    // in P), is needed at the last edit and kept by the chained summary.
    let second = row(&q.events[1], CANDIDATE_POLICY);
    assert_eq!(second.needed_modified_path, 1);
    assert_eq!(second.recall_modified_path, Some(1.0));
}

#[test]
fn pruning_loss_counts_a_needed_atom_only_in_a_cleared_result() {
    let s = SessionBuilder::new("s3")
        .human("Cherry-pick the last commit onto the release branch.")
        .tool_calls("", &[bash("git log -1 --format=%H")])
        .results(&[(SHA.into(), false, false)])
        .tool_calls("", &[bash("git status")])
        .results(&[("clean".into(), false, false)])
        .tool_calls("", &[bash("git branch")])
        .results(&[("main".into(), false, false)])
        .tool_calls("", &[bash(&format!("git cherry-pick {SHA}"))])
        .build();
    let mut p = bare();
    p.prune = Prune { enabled: true, keep_last: 1, hard_clear_after: Some(2), ..Prune::default() };
    let t = replay(&s, &p);
    // The SHA's result is cleared at the call that uses it.
    let cleared: Vec<(usize, usize, PruneKind)> = t.prunes.iter().map(|e| (e.call, e.message_index, e.kind)).collect();
    assert_eq!(cleared, vec![(3, 2, PruneKind::Hard)]);
    let q = evaluate(&s, &t, &p);
    assert_eq!(q.compactions, 0);
    assert_eq!(q.pruning.pruned_results, 1);
    assert_eq!(q.pruning.needed_lost, 1);
    let lost = &q.pruning.atoms[0];
    assert_eq!(
        (lost.kind, lost.value.as_str(), lost.first_use, lost.tool_arg),
        (AtomKind::Id, "9FCEB02D0AE598E95DC970B74767F19372D61AF8", 7, true)
    );
    // Id weight 2, used at once, as a tool argument.
    assert_eq!(q.pruning.needed_lost_weight, 3.0);

    // Still in the request (the result was not cleared): nothing lost.
    p.prune.hard_clear_after = Some(5);
    let kept = evaluate(&s, &replay(&s, &p), &p);
    assert_eq!(kept.pruning, PruningLoss::default());
}

#[test]
fn pruning_loss_spares_what_a_soft_trim_kept() {
    // The SHA sits in the head of a long result that gets trimmed to its head
    // and tail: still visible, not lost.
    let long = format!("commit {SHA}\n{}", filler(6_000, 3));
    let s = SessionBuilder::new("s4")
        .human("Cherry-pick the last commit.")
        .tool_calls("", &[bash("git log -1")])
        .results(&[(long, false, false)])
        .tool_calls("", &[bash("git status")])
        .results(&[("clean".into(), false, false)])
        .tool_calls("", &[bash(&format!("git cherry-pick {SHA}"))])
        .build();
    let mut p = bare();
    p.prune = Prune {
        enabled: true,
        keep_last: 1,
        soft_trim_chars: Some(4_000),
        head: 1_500,
        tail: 1_500,
        ..Prune::default()
    };
    let t = replay(&s, &p);
    assert!(t.prunes.iter().any(|e| e.kind == PruneKind::Soft && e.message_index == 2), "{:?}", t.prunes);
    let q = evaluate(&s, &t, &p);
    assert_eq!(q.pruning.needed_lost, 0, "{:?}", q.pruning.atoms);
}

#[test]
fn same_inputs_give_identical_quality_and_bytes() {
    let s = session();
    let p = whole_history();
    let t = replay(&s, &p);
    let a = evaluate(&s, &t, &p);
    let b = evaluate(&s, &replay(&s, &p), &p);
    assert_eq!(a, b);
    let (ja, jb) = (serde_json::to_vec(&a), serde_json::to_vec(&b));
    assert!(ja.is_ok());
    assert_eq!(ja.ok(), jb.ok());
}

#[test]
fn rows_write_as_flat_csv_records() {
    let s = session();
    let p = whole_history();
    let q = evaluate(&s, &replay(&s, &p), &p);
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in q.rows() {
        if let Err(e) = w.serialize(r) {
            panic!("csv: {e}");
        }
    }
    let bytes = match w.into_inner() {
        Ok(b) => b,
        Err(e) => panic!("csv: {e}"),
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    assert!(header.starts_with("event,call,future_start,reason,outcome,policy_summarizer,chained,"), "{header}");
    assert!(header.contains(",summarizer,summary_tokens,") && header.ends_with(",quality,hallucinated"), "{header}");
    assert_eq!(lines.count(), 5, "one record per candidate");
}

#[test]
fn aggregate_pools_sessions_per_policy_and_flags_domination() {
    let s = session();
    let p = whole_history();
    let q = evaluate(&s, &replay(&s, &p), &p);
    let mut other = q.clone();
    other.session_id = "s1-copy".into();
    let aggs = aggregate_sessions([&q, &other]);
    assert_eq!(aggs.len(), 1);
    let a = &aggs[0];
    assert_eq!((a.policy.as_str(), a.sessions, a.sessions_with_compactions, a.compactions), ("test", 2, 2, 2));
    let policy = a.candidate(CANDIDATE_POLICY).map(|c| (c.events, c.frr_pooled));
    assert_eq!(policy, Some((2, Some(1.0))));
    // Nothing reaches FRR 1 with fewer tokens than the checkpoint.
    assert_eq!(a.dominated_by, Vec::<String>::new());

    // A summary that kept nothing at a huge size is dominated by every
    // reference that is not an upper bound.
    let mut bad = q.clone();
    for e in &mut bad.events {
        for r in e.rows.iter_mut().filter(|r| r.summarizer == CANDIDATE_POLICY) {
            r.frr = Some(0.0);
            r.frr_hit_weight = 0.0;
            r.summary_tokens = 100_000;
        }
    }
    let a = &aggregate_sessions([&bad])[0];
    assert_eq!(a.dominated_by, vec![REF_MASKING.to_string(), REF_MASKING_BUDGET.to_string(), REF_TRUNCATE.to_string()]);
}

/// The three ways to score a trace agree on the policy's row: the replay's
/// per-session pass (`replay_many_scored`), `evaluate_trace`, and the sweep's
/// hook (which skips the references). And the pass is the same at 1 and 2
/// threads.
#[test]
fn replay_many_scored_and_the_sweep_hook_agree_with_evaluate_trace() {
    use crate::pipeline::replay_many_scored;
    use crate::quality::QualityHook;
    use crate::replay::BuiltinResolver;
    let s = session();
    let p = whole_history();
    let direct = evaluate(&s, &replay(&s, &p), &p);
    let frr = direct.score().frr();
    assert!(frr.is_some_and(|f| f > 0.0), "the fixture needs a scored compaction: {direct:?}");
    let plan = QualityPlan::new(std::slice::from_ref(&p), &BuiltinResolver);
    let sessions = vec![s.clone(), SessionBuilder::new("s2").human("hello").build()];
    let mut runs = Vec::new();
    for jobs in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().unwrap();
        let opts = ReplayOptions::default();
        let out =
            replay_many_scored(&sessions, std::slice::from_ref(&p), &BuiltinResolver, opts, &pool, None, Some(&plan));
        let q: Vec<Option<SessionQuality>> = out.iter().flat_map(|r| r.quality.clone()).collect();
        runs.push(q);
    }
    assert_eq!(runs[0], runs[1]);
    let s1 = runs[0].iter().flatten().find(|q| q.session_id == "s1").unwrap();
    assert_eq!(s1, &direct);
    let s2 = runs[0].iter().flatten().find(|q| q.session_id == "s2").unwrap();
    assert_eq!(s2.compactions, 0);
    let hook = TraceQualityHook::new(&BuiltinResolver);
    let prepared = hook.prepare(&s);
    assert_eq!(prepared.evaluate(&p, &replay(&s, &p)), direct.score());
}

/// Scoring a replay sums the per-message counts the replay made: the
/// estimator sees each message once, not once more for the quality pass.
#[test]
fn scoring_reuses_the_replays_token_counts() {
    use crate::pipeline::replay_many_scored;
    use crate::replay::{BuiltinResolver, ReplayError, Resolver};
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    struct One(Arc<CountingEstimator>);
    impl Resolver for One {
        fn estimator(&self, _: EstimatorKind) -> Result<Arc<dyn crate::tokens::Estimator>, ReplayError> {
            Ok(self.0.clone())
        }
        fn summarizer(&self, kind: SummarizerKind) -> Result<Arc<dyn crate::summarize::Summarizer>, ReplayError> {
            BuiltinResolver.summarizer(kind)
        }
    }
    let s = session();
    let p = whole_history();
    let est = Arc::new(CountingEstimator::default());
    let resolver = One(est.clone());
    let plan = QualityPlan::new(std::slice::from_ref(&p), &resolver);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let sessions = vec![s.clone()];
    let out = replay_many_scored(
        &sessions,
        std::slice::from_ref(&p),
        &resolver,
        ReplayOptions::default(),
        &pool,
        None,
        Some(&plan),
    );
    let q = out[0].quality[0].as_ref().unwrap();
    assert!(q.compactions > 0, "{q:?}");
    assert_eq!(q, &evaluate(&s, &replay(&s, &p), &p));
    // The replay estimates each message once (pruned copies and summaries
    // are text); scoring adds no message estimate.
    let replay_only = {
        let c = CountingEstimator::default();
        let ctx = ReplayContext {
            estimator: &c,
            summarizer: &Extractive,
            message_tokens: None,
            meter_tokens: None,
            facts: None,
            options: ReplayOptions::default(),
        };
        replay_session(&s, &p, &ctx).unwrap();
        c.messages.load(Ordering::Relaxed)
    };
    assert_eq!(est.messages.load(Ordering::Relaxed), replay_only);
}

/// The sweep hook shares text views and event scores between the policies of
/// one session: whatever order the policies come in, repeated or after a
/// release, each score equals a fresh `evaluate_trace` of that trace.
#[test]
fn shared_event_scores_change_no_score_whatever_the_order() {
    use crate::quality::QualityHook;
    use crate::replay::BuiltinResolver;
    let s = session();
    // Same cut with a smaller summary budget: the same point, another summary.
    let mut policies = Vec::new();
    for t in [300u64, 400, 500, 700, 900] {
        for cut in [CutKind::WholeHistory, CutKind::KeepRecentTokens] {
            for budget in [1_000, 25] {
                let mut p = whole_history();
                p.compact.trigger_tokens = t;
                p.compact.cut = cut;
                p.compact.keep_recent_tokens = 200;
                p.compact.summary_max_tokens = budget;
                policies.push(p);
            }
        }
    }
    let expected: Vec<_> = policies.iter().map(|p| evaluate(&s, &replay(&s, p), p).score()).collect();
    assert!(expected.iter().filter(|q| q.frr_events > 0).count() >= 2, "the fixture needs scored compactions");
    assert!(
        expected.chunks(2).any(|pair| pair[0] != pair[1]),
        "the fixture needs a budget that changes the score at the same point"
    );
    let hook = TraceQualityHook::new(&BuiltinResolver);
    let prepared = hook.prepare(&s);
    let forward: Vec<usize> = (0..policies.len()).collect();
    let backward: Vec<usize> = forward.iter().rev().copied().collect();
    for order in [&forward, &backward, &forward] {
        for &i in order {
            assert_eq!(prepared.evaluate(&policies[i], &replay(&s, &policies[i])), expected[i], "policy {i}");
        }
    }
    prepared.release();
    for &i in &backward {
        assert_eq!(prepared.evaluate(&policies[i], &replay(&s, &policies[i])), expected[i], "policy {i} after release");
    }
}

/// What a policy's summaries lost: the needed atoms its summary does not hold
/// in full, per session and summed over sessions per policy; none when the
/// summary holds them all.
#[test]
fn the_atoms_a_summary_lost_are_tallied_per_session_and_policy() {
    let s = session();
    let full = whole_history();
    let q = evaluate(&s, &replay(&s, &full), &full);
    assert_eq!(row(&q.events[0], CANDIDATE_POLICY).frr, Some(1.0));
    assert!(q.lost.is_empty(), "{:?}", q.lost);

    // The same summary without the edited file's path.
    let mut t = replay(&s, &full);
    for c in &mut t.compactions {
        c.summary = c.summary.replace("src/parser.rs", "the parser module");
    }
    let q = evaluate(&s, &t, &full);
    assert!(q.lost.iter().any(|l| l.value == "src/parser.rs"), "{:?}", q.lost);
    let r = row(&q.events[0], CANDIDATE_POLICY);
    assert!(r.frr.is_some_and(|f| f < 1.0), "{r:?}");
    assert!(!q.lost.is_empty());
    assert!(q.lost.iter().all(|l| l.compactions == 1 && l.weight > 0.0), "{:?}", q.lost);
    // Each lost atom is a needed one: the lost weight is what FRR misses.
    let missed = r.needed_weight - r.frr_hit_weight;
    let lost: f64 = q.lost.iter().map(|l| l.weight).sum();
    assert!((lost - missed).abs() < 1e-9, "{lost} vs {missed}");

    let mut other = q.clone();
    other.session_id = "s1-copy".into();
    let a = &aggregate_sessions([&q, &other])[0];
    assert_eq!(a.lost.len(), q.lost.len().min(10));
    assert!(a.lost.iter().all(|l| l.compactions == 2));
    assert_eq!(a.lost[0].value, q.lost[0].value);
}
