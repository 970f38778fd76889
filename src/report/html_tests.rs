//! report.html: the chart arithmetic, and untrusted text escaped wherever the
//! sweep section shows it (the replay sections: tests/it/html_report.rs).

use super::*;
use crate::outcome::OutcomeTotals;
use crate::sweep::Point;
use proptest::prelude::*;

#[test]
fn bins_split_negative_zero_and_tens() {
    let b = bins(&[-5.0, 0.0, 0.0, 0.1, 10.0, 10.5, 99.0, 100.0]);
    assert_eq!(b, [1, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 2]);
}

/// A chart of calls labels whole calls only, however few there are.
#[test]
fn call_axes_show_whole_numbers() {
    let f = crate::report::svg::Frame::new(400.0, 200.0, (0.0, 2.0), (0.0, 100.0));
    let labels = |whole: bool| -> Vec<String> {
        let svg = f.axes("call", "tokens", &short, whole).into_string();
        svg.split("text-anchor=\"middle\" fill=\"#555\">")
            .skip(1)
            .filter_map(|t| t.split('<').next())
            .map(str::to_string)
            .collect()
    };
    assert!(labels(false).iter().any(|l| l.contains('.')), "the test needs fractional ticks: {:?}", labels(false));
    let whole = labels(true);
    assert!(!whole.is_empty() && whole.iter().all(|l| !l.contains('.')), "{whole:?}");
}

#[test]
fn ticks_are_round_and_cover_the_range() {
    assert_eq!(ticks(0.0, 100.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
    assert_eq!(ticks(0.0, 1.0), vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]);
    assert_eq!(ticks(5.0, 5.0), vec![5.0]);
    assert_eq!(short(1_250_000.0), "1.2M");
    assert_eq!(short(45_000.0), "45K");
}

/// What maud makes of text: `& < > "` as entities.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A sweep of two points on one axis, the first recommended and on the front.
fn sweep(axis: &str, value: &str) -> SweepResult {
    let point = |index: usize, value: &str, savings_pct: f64| Point {
        index,
        values: vec![value.to_string()],
        policy: None,
        error: None,
        totals: OutcomeTotals { sessions: 1, calls: 3, savings_pct, ..OutcomeTotals::default() },
        front_savings: index == 1,
        front_cost: false,
    };
    SweepResult {
        axes: vec![axis.to_string()],
        points: vec![point(1, value, 40.0), point(2, "7", 10.0)],
        recommended: Some(0),
        recommendation: None,
        excluded: Default::default(),
        window: "32,000 tokens (context_window)".into(),
        min_frr: None,
        quality_measured: false,
        sessions: 1,
    }
}

fn sweep_page(s: &SweepResult) -> String {
    report_html(&Page {
        command: "sweep",
        report: None,
        charts: &Charts::default(),
        columns: &[],
        frr: None,
        sweep: Some(s),
    })
}

const SCRIPT: &str = "<script>alert(1)</script>";
const IMG: &str = "\"><img src=x onerror=alert(2)>";

#[test]
fn sweep_axes_and_values_are_escaped_everywhere_they_are_shown() {
    let axis = format!("{SCRIPT}&amp;x.y");
    let value = format!("{IMG}&amp;");
    let page = sweep_page(&sweep(&axis, &value));
    let lower = page.to_ascii_lowercase();
    assert!(!lower.contains("<script") && !lower.contains("<img"), "{page}");
    let (a, v) = (escaped(&axis), escaped(&value));
    assert!(a.contains("&amp;amp;") && v.contains("&quot;&gt;&lt;img"));
    // The axes line, the table header (a break allowed after the dot), a value cell.
    assert!(page.contains(&format!("<code>{a}</code>")), "{page}");
    assert!(page.contains(&format!("<th>{}<wbr>y</th>", escaped(&format!("{SCRIPT}&amp;x.")))), "{page}");
    assert!(page.contains(&format!("<td>{v}</td>")), "{page}");
    // The recommendation and a point's tooltip.
    assert!(page.contains(&format!("recommended: point 1 of 2: {a}={v}<br>")), "{page}");
    assert!(page.contains(&format!("<title>point 1: {a}={v} | savings 40.0%")), "{page}");
}

proptest! {
    /// Whatever a point's value, the page has the same markup: as many `<`,
    /// `>` and `"` as with a plain value, and the value itself as escaped text.
    #[test]
    fn a_value_never_adds_markup(value in any::<String>()) {
        let page = sweep_page(&sweep("compact.threshold", &value));
        let plain = sweep_page(&sweep("compact.threshold", "v"));
        for c in ['<', '>', '"'] {
            prop_assert_eq!(page.matches(c).count(), plain.matches(c).count(), "{:?}", c);
        }
        let cell = format!("<td>{}</td>", escaped(&value));
        prop_assert!(page.contains(&cell));
    }
}

/// The sessions where a policy sent or paid more than the agent are listed,
/// most extra money first, by name; the others are not.
#[test]
fn sessions_where_a_policy_sent_or_paid_more_are_listed() {
    use crate::replay::testkit::session;
    let sessions = vec![session("u100 t1 r400 a20"), session("u100 t1 r400 a20")];
    let mut sessions = sessions;
    sessions[1].id = "s2".into();
    sessions[0].meta.title = Some("First".into());
    sessions[1].meta.title = Some("Second <b>".into());
    let policies = vec![crate::presets::get("nous").unwrap()];
    let results = crate::pipeline::replay_many(
        &sessions,
        &policies,
        &crate::replay::BuiltinResolver,
        crate::replay::ReplayOptions::default(),
        &rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap(),
        None,
    );
    let mut r = crate::pipeline::results::build(&[], 0, &sessions, &[], &policies, &results, false);
    assert_eq!(sent_more(&r).into_string(), "", "nothing when no policy sent or paid more");
    let mut cost = crate::cost::SessionCost::default();
    cost.baseline.usd = 1.0;
    cost.policy.usd = 1.5;
    cost.saved_usd = -0.5;
    let row = r.sessions.iter_mut().find(|s| s.session_id == "s2").unwrap();
    row.cost = Some(cost);
    let row = r.sessions.iter_mut().find(|s| s.session_id != "s2").unwrap();
    row.metrics.input_tokens_policy = row.metrics.input_tokens_baseline + 10;
    let html = sent_more(&r).into_string();
    assert!(html.contains("Where a policy sent or paid more than the agent"), "{html}");
    let (first, second) = (html.find("Second &lt;b&gt;").unwrap(), html.find("<td>First</td>").unwrap());
    assert!(first < second, "most extra money first: {html}");
    assert!(html.contains("$1.0000 → $1.5000") && html.contains("+50.0%"), "{html}");
}
