use super::*;
use crate::quality::AtomKind;
use std::collections::HashSet;

fn totals() -> Totals {
    Totals {
        sessions: 3,
        sessions_failed: 1,
        input_tokens_baseline: 1_234_567,
        input_tokens_policy: 1000,
        savings_pct: 12.345,
        overflow_calls_baseline: 1500,
        overflow_calls_policy: 2,
        compactions: 7,
        no_progress_compactions: 1,
        pruned_soft: Some(4),
        pruned_hard: Some(5),
        net_savings_tokens: Some(-1234.0),
        quality_measured: true,
        frr: Some(0.7731),
        hallucination: Some(0.0),
        ..Totals::default()
    }
}

#[test]
fn keys_and_columns_are_unique_and_every_pair_names_a_metric() {
    let keys: HashSet<&str> = METRICS.iter().map(|m| m.key).collect();
    assert_eq!(keys.len(), METRICS.len(), "duplicate metric key");
    for view in [view::SWEEP_CSV, view::COMPONENTS] {
        let cols: Vec<&str> = of_view(view).map(|m| m.column).collect();
        let set: HashSet<&str> = cols.iter().copied().collect();
        assert_eq!(set.len(), cols.len(), "duplicate column in view {view}: {cols:?}");
    }
    for m in METRICS {
        if let Some(p) = m.pair {
            assert!(get(pair_key(p)).is_some(), "{} pairs with an unknown metric", m.key);
        }
    }
}

#[test]
fn gates_follow_the_direction() {
    for m in METRICS {
        match m.gate {
            Some(Gate::MaxDrop(_)) => assert_eq!(m.better, Better::Higher, "{}", m.key),
            Some(Gate::Ceiling(_)) => assert_eq!(m.better, Better::Lower, "{}", m.key),
            None => {}
        }
    }
    let t = CheckTolerances { max_frr_drop: 2.0, max_savings_drop: 1.0, max_hallucination: 0.5 };
    let tol = |key: &str| match get(key).and_then(|m| m.gate) {
        Some(Gate::MaxDrop(f) | Gate::Ceiling(f)) => f(&t),
        None => f64::NAN,
    };
    assert_eq!(tol("frr_pooled"), 2.0);
    assert_eq!(tol("savings_pct"), 1.0);
    assert_eq!(tol("hallucination_rate"), 0.5);
}

#[test]
fn per_type_recalls_carry_the_type_weights() {
    let w = |key: &str| get(key).and_then(|m| m.weight);
    assert_eq!(w("recall_modified_path"), Some(AtomKind::ModifiedPath.weight()));
    assert_eq!(w("recall_symbol"), Some(AtomKind::Symbol.weight()));
    assert_eq!(w("frr"), None);
    assert_eq!(of_view(view::COMPONENTS).filter(|m| m.weight.is_some()).count(), 7);
}

#[test]
fn units_print_alike_in_every_view() {
    let t = totals();
    let m = |k: &str| get(k).unwrap_or_else(|| panic!("no metric {k}"));
    assert_eq!(m("input_tokens_baseline").cell(&t), "1,234,567");
    assert_eq!(m("savings_pct").cell(&t), "12.3%");
    assert_eq!(m("savings_pct").csv(Some(t.savings_pct)), "12.35");
    assert_eq!(m("savings_pct").points(Some(t.savings_pct)), "12.35");
    assert_eq!(m("frr").cell(&t), "77.3%");
    assert_eq!(m("frr").csv(t.frr), "0.7731");
    assert_eq!(m("frr").points(t.frr), "77.31");
    assert_eq!(m("artifact_recall").cell(&t), "n/a");
    assert_eq!(m("artifact_recall").csv(None), "");
    assert_eq!(m("artifact_recall").points(None), "–");
    assert_eq!(m("overflow_calls_policy").cell(&t), "1,500 → 2");
    assert_eq!(m("overflow_calls_policy").compact_label(), "overflow calls (baseline → policy)");
    assert_eq!(m("compactions").cell(&t), "7 (1)");
    assert_eq!(m("compactions").compact_label(), "compactions (no-progress)");
    assert_eq!(m("sessions").cell(&t), "3 (1 failed)");
    assert_eq!(m("pruned_soft").cell(&t), "4 / 5");
    assert_eq!(m("net_savings_tokens").cell(&t), "-1,234");
    assert_eq!(m("cost_baseline_usd").cell(&t), "n/a", "no prices, no dollars");
}

#[test]
fn totals_of_a_sweep_point_and_of_a_compare_column_agree() {
    let mut q = QualityScore::default();
    // FRR is pooled: (1 + 6) / (2 + 6), not the mean of 0.5 and 1.
    let row = |frr: f64, needed: f64, artifact, hallucination| crate::quality::RowScore {
        frr: Some(frr),
        hit_weight: frr * needed,
        needed_weight: needed,
        artifact,
        hallucination,
    };
    q.add_row(row(0.5, 2.0, Some(1.0), None));
    q.add_row(row(1.0, 6.0, None, Some(0.25)));
    let o = OutcomeTotals {
        sessions: 2,
        input_tokens_baseline: 100,
        input_tokens_policy: 40,
        savings_pct: 60.0,
        compactions: 2,
        quality: Some(q),
        ..OutcomeTotals::default()
    };
    let t = Totals::from_outcome(&o);
    assert_eq!((t.frr, t.artifact_recall, t.hallucination), (Some(0.875), Some(1.0), Some(0.25)));
    assert!(t.quality_measured);
    let a = Aggregate {
        policy: "p".into(),
        sessions: 2,
        input_tokens_baseline: 100,
        input_tokens_policy: 40,
        savings_pct: 60.0,
        compactions: 2,
        ..Aggregate::default()
    };
    let c = Totals::from_aggregate(&a, Some(q));
    for m in METRICS.iter().filter(|m| m.views & view::SWEEP_CSV != 0) {
        if m.key.starts_with("cost") || m.key.contains("usd") || m.key == "sessions_sheds_tokens_costs_more" {
            continue; // the aggregate was not priced
        }
        assert_eq!(m.of_totals(&t), m.of_totals(&c), "{}", m.key);
    }
    assert!(!Totals::from_outcome(&OutcomeTotals::default()).quality_measured);
}
