use super::memo::MemoSummarizer;
use super::*;
use crate::cost::CostSettings;
use crate::replay::testkit::session;
use crate::replay::{BuiltinResolver, ReplayContext, ReplayOptions, replay_session};
use crate::summarize::Extractive;
use crate::tokens::Chars4;

fn small_policy() -> Policy {
    let mut p = crate::presets::get("nous").expect("preset");
    p.context_window = 6_000;
    p.compact.trigger_tokens = 3_000;
    p.compact.keep_recent_tokens = 800;
    p.compact.min_gain_tokens = 100;
    p
}

fn long_session() -> Session {
    let mut desc = String::from("u400");
    for k in 0..30 {
        desc.push_str(&format!(" t1 r{} a120", 600 + 37 * k));
        if k % 7 == 6 {
            desc.push_str(" u200");
        }
    }
    session(&desc)
}

#[test]
fn the_memo_answers_a_repeated_replay_and_changes_nothing() {
    let s = long_session();
    let p = small_policy();
    let ctx_plain = ReplayContext {
        estimator: &Chars4,
        summarizer: &Extractive,
        message_tokens: None,
        meter_tokens: None,
        facts: None,
        options: ReplayOptions { keep_transcript: true, ..ReplayOptions::default() },
    };
    let plain = replay_session(&s, &p, &ctx_plain).unwrap();
    assert!(plain.metrics.compactions >= 2, "{:?}", plain.metrics);
    // No working directory: the unbound summarizer reads paths as written.
    let lens = SessionLens::new(&s.messages, None);
    let memo = MemoSummarizer::new(&Extractive, &lens);
    let ctx = ReplayContext { summarizer: &memo, ..ctx_plain };
    let first = replay_session(&s, &p, &ctx).unwrap();
    let misses = memo.misses.load(Ordering::Relaxed);
    assert_eq!(memo.hits.load(Ordering::Relaxed), 0);
    let second = replay_session(&s, &p, &ctx).unwrap();
    assert_eq!(memo.hits.load(Ordering::Relaxed), misses, "every request of the second replay is remembered");
    assert_eq!(first, plain);
    assert_eq!(second, plain);
}

/// Requests that differ only in their last message, or in a gap inside a run
/// of the session's messages, or in a previous summary, are different
/// questions (the key holds runs of indices and an id per previous summary);
/// the same request again is remembered.
#[test]
fn the_memo_tells_requests_apart_by_their_last_message() {
    use crate::model::Message;
    use crate::summarize::{InputLimits, Summarizer, SummaryPart, SummaryRequest};
    use crate::text::filetrack::FileOps;
    let s = long_session();
    let n = s.messages.len();
    assert!(n > 3);
    // No working directory: the unbound summarizer reads paths as written.
    let lens = SessionLens::new(&s.messages, None);
    let memo = MemoSummarizer::new(&Extractive, &lens);
    let ops = FileOps::default();
    let ask_after = |msgs: &[&Message], previous: Option<&str>| {
        let req = SummaryRequest {
            part: SummaryPart::History,
            messages: msgs,
            previous_summary: previous,
            file_ops: &ops,
            max_tokens: 500,
            limits: InputLimits::default(),
            estimator: &Chars4,
            context: None,
        };
        memo.summarize(&req).map(|r| r.text).unwrap_or_default()
    };
    let ask = |msgs: &[&Message]| ask_after(msgs, None);
    let a: Vec<&Message> = s.messages[..n - 1].iter().collect();
    let mut b = a.clone();
    b[n - 2] = &s.messages[n - 1];
    // The same messages but one: a run broken by a gap, a shorter run, and
    // one as long that starts later.
    let gap: Vec<&Message> = a.iter().enumerate().filter(|&(i, _)| i != 1).map(|(_, m)| *m).collect();
    let shorter = &a[..a.len() - 1];
    let later = &a[1..];
    ask(&a);
    ask(&b);
    ask(&gap);
    ask(shorter);
    ask(later);
    ask(&a);
    assert_eq!(memo.misses.load(Ordering::Relaxed), 5);
    assert_eq!(memo.hits.load(Ordering::Relaxed), 1);
    // Two previous summaries, each asked twice: two more questions.
    for previous in ["the first summary", "another summary", "the first summary", "another summary"] {
        ask_after(shorter, Some(previous));
    }
    assert_eq!(memo.misses.load(Ordering::Relaxed), 7);
    assert_eq!(memo.hits.load(Ordering::Relaxed), 3);
}

#[test]
fn grids_parse_lists_ranges_and_dotted_keys() {
    let g = Grid::from_toml(
        r#"
[base]
context_window = 64000
[grid]
"compact.trigger_ratio" = { from = 0.6, to = 0.8, step = 0.1 }
prune.keep_last = [1, 3]
"prune.soft_trim_chars" = [4000, "off"]
"compact.keep_recent_tokens" = { from = 10000, to = 30000, step = 10000 }
"#,
    )
    .unwrap();
    assert_eq!(g.base, vec![("context_window".to_string(), toml::Value::Integer(64_000))]);
    let keys: Vec<&str> = g.axes.iter().map(|a| a.key.as_str()).collect();
    assert!(keys.contains(&"prune.keep_last") && keys.contains(&"compact.trigger_ratio"), "{keys:?}");
    let ratio = g.axes.iter().find(|a| a.key == "compact.trigger_ratio").unwrap();
    assert_eq!(ratio.values, vec![toml::Value::Float(0.6), toml::Value::Float(0.7), toml::Value::Float(0.8)]);
    let keep = g.axes.iter().find(|a| a.key == "compact.keep_recent_tokens").unwrap();
    assert_eq!(
        keep.values,
        vec![toml::Value::Integer(10_000), toml::Value::Integer(20_000), toml::Value::Integer(30_000)]
    );
    assert_eq!(g.points(), 3 * 2 * 2 * 3);
    // Every point is a distinct combination, the first axis varying slowest.
    let all: std::collections::BTreeSet<Vec<String>> = (0..g.points()).map(|i| g.labels(i)).collect();
    assert_eq!(all.len(), g.points());
    assert_eq!(g.coordinates(0), vec![0; 4]);
    assert_eq!(g.coordinates(g.points() - 1), g.axes.iter().map(|a| a.values.len() - 1).collect::<Vec<_>>());
    let base = g.apply_base(&Policy::default()).unwrap();
    let last = g.policy(&base, g.points() - 1).unwrap();
    assert_eq!(last.context_window, 64_000);
    assert_eq!(last.name, format!("default@{}", g.points()));
}

#[test]
fn grid_errors_name_the_key() {
    let err = |t: &str| Grid::from_toml(t).unwrap_err().to_string();
    assert_eq!(err("[grid]\n"), "grid: no [grid] table with at least one key");
    assert!(err("[grid]\n\"prune.keep_lst\" = [1]\n").contains("unknown policy key `prune.keep_lst`"));
    assert!(err("[grid]\n\"prune.keep_last\" = [\"many\"]\n").contains("`prune.keep_last`"));
    assert_eq!(err("[grid]\n\"prune.keep_last\" = []\n"), "grid: `prune.keep_last`: an empty list of values");
    assert_eq!(
        err("[grid]\n\"prune.keep_last\" = { from = 5, to = 1 }\n"),
        "grid: `prune.keep_last`: `to` must not be below `from`"
    );
    assert_eq!(
        err("[grid]\n\"prune.keep_last\" = { from = 1, to = 5, step = 0 }\n"),
        "grid: `prune.keep_last`: `step` must be positive"
    );
    assert!(err("[grid]\na = { from = 0, to = 1000000, step = 1 }\n").contains("limit"));
    assert_eq!(err("[sweep]\nx = 1\n"), "grid: unknown top-level key `sweep` (expected [base] and [grid])");
    assert!(err("not toml").starts_with("grid TOML:"));
}

fn point(index: usize, savings: f64, cost: f64, frr: Option<f64>, overflows: u64) -> Point {
    let mut t = crate::outcome::OutcomeTotals {
        sessions: 1,
        savings_pct: savings,
        overflow_calls_policy: overflows,
        ..Default::default()
    };
    t.cost.saved_pct = cost;
    t.cost.saved_usd = cost / 100.0;
    t.quality = frr.map(|f| crate::quality::QualityScore {
        frr_events: 1,
        frr_sum: f,
        frr_hit_weight: f,
        frr_needed_weight: 1.0,
        ..Default::default()
    });
    Point {
        index,
        values: vec![index.to_string()],
        policy: Some(crate::policy::Policy::default()),
        error: None,
        totals: t,
        front_savings: false,
        front_cost: false,
    }
}

#[test]
fn fronts_and_recommendation() {
    // (savings, cost saved, FRR): 2 dominates 1; 3 and 4 trade savings for FRR;
    // 5 is best on cost but worst on FRR.
    let mut pts = vec![
        point(1, 10.0, 5.0, Some(0.80), 0),
        point(2, 20.0, 10.0, Some(0.90), 0),
        point(3, 40.0, 20.0, Some(0.85), 0),
        point(4, 15.0, 8.0, Some(0.95), 0),
        point(5, 35.0, 30.0, Some(0.50), 0),
    ];
    mark_fronts(&mut pts);
    let front = |f: fn(&Point) -> bool| pts.iter().filter(|p| f(p)).map(|p| p.index).collect::<Vec<_>>();
    assert_eq!(front(|p| p.front_savings), vec![2, 3, 4]);
    assert_eq!(front(|p| p.front_cost), vec![2, 3, 4, 5]);
    // Most money saved wins; under an FRR floor the best point that reaches it.
    assert_eq!(recommend(&pts, None), Some(4));
    assert_eq!(recommend(&pts, Some(0.84)), Some(2));
    assert_eq!(recommend(&pts, Some(0.99)), None);
    // Fewer overflows come first.
    pts[4].totals.overflow_calls_policy = 3;
    pts[2].totals.overflow_calls_policy = 1;
    assert_eq!(recommend(&pts, None).map(|i| pts[i].index), Some(2));
    // A failed point is never recommended nor on a front.
    pts[1].error = Some("bad".into());
    mark_fronts(&mut pts);
    assert!(!pts[1].front_savings && !pts[1].front_cost);
    assert_ne!(recommend(&pts, None), Some(1));
    // Left out as failed; as invalid when its values made no policy.
    let left_out = |pts: &[Point]| recommend_why(pts, None).1;
    assert_eq!((left_out(&pts).failed, left_out(&pts).invalid), (1, 0));
    pts[1].policy = None;
    assert_eq!((left_out(&pts).failed, left_out(&pts).invalid), (0, 1));
}

/// The recommendation passes check's hallucination gate, says why it won
/// and whether it sits at an end of an axis.
#[test]
fn the_recommendation_passes_the_gates_and_says_why() {
    let with_h = |mut p: Point, h: f64| {
        if let Some(q) = p.totals.quality.as_mut() {
            q.hallucination_events = 1;
            q.hallucination_sum = h;
        }
        p
    };
    let mut pts = vec![
        with_h(point(1, 10.0, 5.0, Some(0.80), 0), 0.0),
        with_h(point(2, 40.0, 30.0, Some(0.90), 0), 0.02),
        with_h(point(3, 20.0, 10.0, Some(0.85), 0), 0.005),
    ];
    // Point 2 saves most but its summaries invent 2 % (the gate is 1 %).
    let (best, excluded) = recommend_why(&pts, None);
    assert_eq!(best.map(|i| pts[i].index), Some(3));
    assert_eq!(excluded, Excluded { hallucination: 1, ..Excluded::default() });
    assert!(
        reason(&pts, 2, None)
            .starts_with("most money saved ($0.1000, 10.0% of the cost; the next best point saves $0.0500)")
    );
    // A policy's own gate applies.
    let mut loose = crate::policy::Policy::default();
    loose.check.max_hallucination = 5.0;
    pts[1].policy = Some(loose);
    assert_eq!(recommend(&pts, None).map(|i| pts[i].index), Some(2));
    assert!(reason(&pts, 1, Some(0.99)).contains("the only point"));
    pts[0].totals.overflow_calls_policy = 2;
    pts[2].totals.overflow_calls_policy = 1;
    assert_eq!(reason(&pts, 1, None), "fewest calls over the window (0; the next best point has 1)");
    // Edges: numeric axes at their lowest or highest value only.
    let axes = vec!["a".to_string(), "b".to_string(), "c".to_string()];
    for (p, v) in pts.iter_mut().zip([["1", "off", "5"], ["2", "off", "5"], ["3", "off", "5"]]) {
        p.values = v.iter().map(|s| s.to_string()).collect();
    }
    assert_eq!(edges(&axes, &pts, 1), vec![]);
    assert_eq!(edges(&axes, &pts, 2), vec![Edge { axis: "a".into(), value: "3".into(), side: "highest" }]);
    assert_eq!(edges(&axes, &pts, 0)[0].side, "lowest");
    // An axis whose other values give the same figures says nothing.
    let mut tied = vec![pts[0].clone(), pts[0].clone()];
    tied[1].values[0] = "9".into();
    tied[1].index = 2;
    assert_eq!(edges(&axes, &tied, 0), vec![]);
}

#[test]
fn a_sweep_shares_counts_and_is_the_same_at_any_thread_count() {
    let sessions = vec![long_session(), session("u300 t1 r900 a80 t1 r1200 a60")];
    let grid = Grid::from_toml(
        "[grid]\n\"compact.keep_recent_tokens\" = [600, 1200]\n\"prune.keep_last\" = [1, 2]\n\"prune.soft_trim_chars\" = [1000, 4000]\n",
    )
    .unwrap();
    let base = small_policy();
    let run_at = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let t = run_table(&sessions, &base, &grid, &BuiltinResolver, &CostSettings::default(), None, None, &pool, None);
        fold(&t.unwrap(), None)
    };
    let one = run_at(1);
    let two = run_at(2);
    assert_eq!(one, two);
    assert_eq!(one.points.len(), 8);
    // soft_trim_chars = 1000 is not above head + tail (1500 + 1500): invalid.
    assert_eq!(one.points.iter().filter(|p| p.error.is_some()).count(), 4);
    // Each valid point equals a plain replay of its policy.
    for p in one.points.iter().filter(|p| p.ok()) {
        let policy = p.policy.as_ref().unwrap();
        let mut input = 0;
        for s in &sessions {
            let ctx = ReplayContext {
                estimator: &Chars4,
                summarizer: &Extractive,
                message_tokens: None,
                meter_tokens: None,
                facts: None,
                options: ReplayOptions::default(),
            };
            input += replay_session(s, policy, &ctx).unwrap().metrics.input_tokens_policy;
        }
        assert_eq!(p.totals.input_tokens_policy, input, "point {}", p.index);
        assert_eq!(p.totals.sessions, 2);
    }
    assert!(one.recommended.is_some());
    let csv = String::from_utf8(crate::report::sweep::sweep_csv(&one)).unwrap();
    assert_eq!(csv.lines().count(), 9);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .starts_with("point,compact.keep_recent_tokens,prune.keep_last,prune.soft_trim_chars,sessions,")
    );
}

/// A summarizer named like the CLI's LLM adapters (one object per policy, all
/// named `llm`) that answers with its policy's prompt name.
struct Named(String);

impl crate::summarize::Summarizer for Named {
    fn name(&self) -> &str {
        "llm"
    }
    fn summarize(
        &self,
        _: &crate::summarize::SummaryRequest<'_>,
    ) -> Result<crate::summarize::Summary, crate::summarize::SummarizeError> {
        Ok(crate::summarize::Summary {
            text: self.0.clone(),
            file_ops: Default::default(),
            usage: Default::default(),
            fallback: None,
        })
    }
}

struct PerPolicy;

impl Resolver for PerPolicy {
    fn estimator(&self, kind: crate::tokens::EstimatorKind) -> Result<Arc<dyn Estimator>, crate::replay::ReplayError> {
        BuiltinResolver.estimator(kind)
    }
    fn summarizer(
        &self,
        kind: crate::summarize::SummarizerKind,
    ) -> Result<Arc<dyn crate::summarize::Summarizer>, crate::replay::ReplayError> {
        BuiltinResolver.summarizer(kind)
    }
    fn summarizer_for(
        &self,
        policy: &Policy,
    ) -> Result<Arc<dyn crate::summarize::Summarizer>, crate::replay::ReplayError> {
        let words = if policy.compact.llm.prompt == "vibe" { 400 } else { 10 };
        Ok(Arc::new(Named("summary ".repeat(words))))
    }
}

#[test]
fn points_with_summarizers_of_one_name_keep_their_own() {
    // Before: summarizers were merged by name, and every point used the
    // first point's (a grid over `compact.llm.prompt` measured one prompt).
    let sessions = vec![long_session()];
    let grid = Grid::from_toml("[grid]\n\"compact.llm.prompt\" = [\"checkpoint\", \"vibe\"]\n").unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let t = run_table(&sessions, &small_policy(), &grid, &PerPolicy, &CostSettings::default(), None, None, &pool, None);
    let r = fold(&t.unwrap(), None);
    let [a, b] = [&r.points[0], &r.points[1]];
    assert!(a.ok() && b.ok(), "{a:?} {b:?}");
    assert!(a.totals.compactions > 0);
    let direct = |p: &Point| {
        let policy = p.policy.as_ref().unwrap();
        let summ = PerPolicy.summarizer_for(policy).unwrap();
        let ctx = ReplayContext {
            estimator: &Chars4,
            summarizer: summ.as_ref(),
            message_tokens: None,
            meter_tokens: None,
            facts: None,
            options: ReplayOptions::default(),
        };
        replay_session(&sessions[0], policy, &ctx).unwrap().metrics.input_tokens_policy
    };
    assert_eq!(a.totals.input_tokens_policy, direct(a));
    assert_eq!(b.totals.input_tokens_policy, direct(b));
    assert!(b.totals.input_tokens_policy > a.totals.input_tokens_policy, "{a:?} {b:?}");
}
