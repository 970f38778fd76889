//! `report.html`: one self-contained page (no network, no JavaScript) with
//! inline SVG charts, written by `replay`, `compare` and `sweep`:
//! - per session (the largest ones when there are many), the context size per
//!   call: baseline, recorded usage, each policy, the context window, compaction
//!   markers;
//! - the distribution of per-session savings (and FRR when measured) per policy;
//! - the policies side by side (the compare table);
//! - the compactions the logs record, scored, each in a `<details>`;
//! - for a sweep, the Pareto front and the best points.
//!
//! The page is maud templates: every string from a log (session ids, paths,
//! model names, policy names from files) is escaped by the template, and only
//! markup built here from numbers and fixed strings is spliced in unescaped.
//! Numbers are formatted with fixed precision so the bytes are the same run to run.

use super::Report;
use super::compare::{PolicyColumn, rows};
use super::svg::{Frame, MAX_LINE_POINTS, PALETTE, d1, empty, legend, polyline, short, ticks};
use crate::num::{shown, thousands};
use crate::pipeline::SessionResults;
use crate::pipeline::results::SessionRow;
use crate::replay::{Event, SessionTrace};
use crate::sweep::SweepResult;
use maud::{DOCTYPE, Markup, html};

/// Sessions drawn by default; the others are listed in sessions.csv.
pub const DEFAULT_MAX_SESSIONS: usize = 12;

const BASELINE: &str = "#555555";
const RECORDED: &str = "#bcbd22";
const WINDOW: &str = "#d62728";

/// What a page shows; every part is optional.
pub struct Page<'a> {
    /// `replay`, `compare` or `sweep`.
    pub command: &'a str,
    pub report: Option<&'a Report>,
    /// The per-call charts of the largest sessions behind `report`.
    pub charts: &'a Charts,
    /// Policies side by side.
    pub columns: &'a [PolicyColumn],
    /// Per policy (in report order), per-session FRR when measured.
    pub frr: Option<&'a [Vec<f64>]>,
    pub sweep: Option<&'a SweepResult>,
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em;margin-bottom:4px}\
table{border-collapse:collapse;margin:8px 0;font-size:0.9em}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}\
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}.note{color:#666;font-size:0.9em}.warn{color:#8a3b00}\
.chart{margin:8px 0 20px 0}.legend span{margin-right:14px;font-size:0.85em}.sw{display:inline-block;width:12px;height:3px;vertical-align:middle;margin-right:4px}\
.meta{color:#666;font-size:0.85em;word-break:break-all}svg text{font-family:inherit}\
.chart svg{width:100%;height:auto;max-height:420px}";

/// The whole page. maud writes no whitespace between elements: each `"\n"` is
/// a line break of the page.
pub fn report_html(page: &Page<'_>) -> String {
    let title = format!("compactor {}", page.command);
    let markup = html! {
        (DOCTYPE) "\n"
        html lang="en" {
            "\n"
            head {
                "\n"
                meta charset="utf-8"; "\n"
                meta http-equiv="Content-Security-Policy"
                    content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"; "\n"
                meta name="viewport" content="width=device-width, initial-scale=1"; "\n"
                title { (title) } "\n"
                // A constant without `& < > "`: escaping leaves it as it is.
                style { (STYLE) } "\n"
            }
            "\n"
            body {
                "\n"
                h1 { (title) } "\n"
                @if let Some(r) = page.report { (run_summary(r)) }
                @if let Some(s) = page.sweep { (sweep_section(s)) }
                @if !page.columns.is_empty() {
                    h2 { "Policies side by side" } "\n"
                    (compare_table(page.columns))
                }
                @if let Some(r) = page.report {
                    (session_charts(r, page.charts))
                    (sent_more(r))
                    (distributions(r, page.frr))
                    (super::html_compactions::recorded_section(r))
                    (super::html_compactions::policy_compactions(r))
                }
            }
            "\n"
        }
        "\n"
    };
    without_controls(markup.into_string())
}

/// `html` with every control character a log string brought (HTML forbids
/// them; the template writes none but line breaks) replaced by U+FFFD: one
/// pass over the page, so no string can bring one in by omission.
fn without_controls(html: String) -> String {
    let forbidden = |c: char| c.is_control() && !matches!(c, '\n' | '\t' | '\r');
    if !html.contains(forbidden) {
        return html;
    }
    html.chars().map(|c| if forbidden(c) { '\u{FFFD}' } else { c }).collect()
}

/// What ran: sessions, inputs, policies, the meter and the cost model.
fn run_summary(r: &Report) -> Markup {
    html! {
        p {
            (r.run.sessions) " session(s) from " (r.run.inputs_read) " input(s); "
            (r.policies.len()) " polic" (if r.policies.len() == 1 { "y" } else { "ies" }) ": "
            @for (i, p) in r.policies.iter().enumerate() {
                @if i > 0 { ", " }
                code { (p.name) }
            }
            "."
        }
        "\n"
        p class="note" { (r.run.meter.sentence()) } "\n"
        @if let Some(cm) = &r.cost_model {
            p class="note" {
                "Costs simulate the prompt cache (" (super::compare::ttl_phrase(cm.ttl)) "): the part of a request equal to the \
                previous request, within the TTL, is billed as cache read, the rest as cache write. Unknown models \
                are priced as " code { (cm.fallback_family) } "."
            }
            "\n"
        }
        // What the printed summary and report.md warn of, in their words.
        @for (warning, text) in super::terminal::notices(r) {
            @if warning {
                p class="warn" { strong { "Warning: " } (text) } "\n"
            } @else {
                p class="note" { (text) } "\n"
            }
        }
    }
}

fn compare_table(cols: &[PolicyColumn]) -> Markup {
    html! {
        table {
            "\n"
            tr { th {} @for c in cols { th { (c.policy) } } } "\n"
            @for (label, vals) in rows(cols) {
                tr { td { (label) } @for v in vals { td { (v) } } } "\n"
            }
        }
        "\n"
        @if cols.iter().all(|c| c.quality.is_none()) {
            p class="note" { "FRR, artifact recall and hallucination: not measured (--no-quality)." } "\n"
        }
    }
}

// ------------------------------------------------------- per-session charts

/// What the context chart of one session needs, copied out of its traces so
/// they can be dropped (a streaming replay keeps only the charts it draws).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionChart {
    pub session_id: String,
    /// Project and title, where the log has them.
    pub name: Option<String>,
    pub source_path: String,
    /// Per call of the first replayed policy: (call, baseline tokens, recorded tokens).
    pub base: Vec<(usize, u64, Option<u64>)>,
    /// Per replayed policy: its index and its line.
    pub lines: Vec<(usize, PolicyLine)>,
    /// Something happened: a policy compacted, a call went over the window
    /// (the agent's or a policy's), or the log records a compaction.
    pub eventful: bool,
}

/// Per call: (call, the policy's tokens, whether it compacted there).
pub type PolicyLine = Vec<(usize, u64, bool)>;

impl SessionChart {
    /// A session's rank among the charts: whether something happened in it,
    /// then its peak baseline context; `None` when it has nothing to draw.
    pub fn rank(r: &SessionResults) -> Option<(bool, u64)> {
        let peak = r.traces.iter().flatten().map(|t| t.metrics.peak_baseline).max().unwrap_or(0);
        (peak > 0 || r.traces.iter().flatten().any(|t| !t.calls.is_empty())).then_some((Self::eventful(r), peak))
    }

    fn eventful(r: &SessionResults) -> bool {
        let m = |t: &SessionTrace| {
            t.metrics.compactions > 0 || t.metrics.overflow_calls_baseline > 0 || t.metrics.overflow_calls_policy > 0
        };
        r.traces.iter().flatten().any(m) || r.recorded.as_ref().is_some_and(|q| !q.events.is_empty())
    }

    pub fn new(r: &SessionResults) -> SessionChart {
        let traces: Vec<(usize, &SessionTrace)> =
            r.traces.iter().enumerate().filter_map(|(k, t)| t.as_ref().ok().map(|t| (k, t))).collect();
        let base = traces
            .first()
            .map(|(_, t)| t.calls.iter().map(|c| (c.call, c.tokens_baseline, c.tokens_recorded)).collect())
            .unwrap_or_default();
        let lines = traces
            .iter()
            .map(|&(k, t)| {
                (k, t.calls.iter().map(|c| (c.call, c.tokens_policy, c.events.contains(&Event::Compact))).collect())
            })
            .collect();
        SessionChart {
            session_id: r.session_id.clone(),
            name: r.name.clone(),
            source_path: r.source_path.display().to_string(),
            base,
            lines,
            eventful: Self::eventful(r),
        }
    }
}

/// The charts a page draws: the sessions where something happened first,
/// then the largest by peak context (ties in report order), at most `max`;
/// how many sessions had something to draw, and how many of them nothing
/// happened in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Charts {
    pub max: usize,
    pub candidates: usize,
    pub quiet: usize,
    pub sessions: Vec<SessionChart>,
}

impl Charts {
    /// From every session's results, in report order.
    pub fn from_results(results: &[SessionResults], max: usize) -> Charts {
        let mut keeper = ChartKeeper::new(max);
        for (i, r) in results.iter().enumerate() {
            keeper.offer(i, r);
        }
        keeper.finish()
    }
}

/// Keeps the charts of the `max` largest sessions as they arrive, in any
/// order: `K` is a session's place in the report, which breaks ties, so the
/// same sessions are kept whatever the arrival order. Only the kept sessions'
/// series are copied.
#[derive(Debug)]
pub struct ChartKeeper<K> {
    max: usize,
    candidates: usize,
    quiet: usize,
    /// Best first: eventful first, peak descending, then `K` ascending.
    best: Vec<((bool, u64), K, SessionChart)>,
}

impl<K: Ord> ChartKeeper<K> {
    pub fn new(max: usize) -> ChartKeeper<K> {
        ChartKeeper { max, candidates: 0, quiet: 0, best: Vec::new() }
    }

    pub fn offer(&mut self, key: K, r: &SessionResults) {
        let Some(peak) = SessionChart::rank(r) else { return };
        self.candidates += 1;
        self.quiet += usize::from(!peak.0);
        self.place(peak, key, || SessionChart::new(r));
    }

    pub fn finish(self) -> Charts {
        self.into_kept().charts()
    }

    /// What the keeper holds, to be written and merged with another's.
    pub fn into_kept(self) -> KeptCharts<K> {
        KeptCharts { max: self.max, candidates: self.candidates, quiet: self.quiet, best: self.best }
    }

    /// Take in what another keeper kept (of other sessions): the charts the
    /// page draws from both are among the ones each kept.
    pub fn absorb(&mut self, other: KeptCharts<K>) {
        self.candidates += other.candidates;
        self.quiet += other.quiet;
        for (rank, key, chart) in other.best {
            self.place(rank, key, || chart);
        }
    }

    fn place(&mut self, peak: (bool, u64), key: K, chart: impl FnOnce() -> SessionChart) {
        let before = |(p, k): ((bool, u64), &K), (q, l): ((bool, u64), &K)| p > q || (p == q && k < l);
        let at = self.best.partition_point(|(q, l, _)| before((*q, l), (peak, &key)));
        if at >= self.max {
            return;
        }
        self.best.insert(at, (peak, key, chart()));
        self.best.truncate(self.max);
    }
}

/// A [`ChartKeeper`]'s charts with their ranks and keys.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KeptCharts<K> {
    pub max: usize,
    pub candidates: usize,
    pub quiet: usize,
    pub best: Vec<((bool, u64), K, SessionChart)>,
}

impl<K> KeptCharts<K> {
    pub fn empty(max: usize) -> KeptCharts<K> {
        KeptCharts { max, candidates: 0, quiet: 0, best: Vec::new() }
    }

    pub fn charts(self) -> Charts {
        Charts {
            max: self.max,
            candidates: self.candidates,
            quiet: self.quiet,
            sessions: self.best.into_iter().map(|b| b.2).collect(),
        }
    }
}

fn session_charts(r: &Report, charts: &Charts) -> Markup {
    // The window each policy used for each session (`auto`: the session's own).
    let window_of: WindowOf<'_> = r
        .sessions
        .iter()
        .map(|row| ((row.session_id.as_str(), row.source_path.as_str(), row.policy.as_str()), row.context_window))
        .collect();
    let eventful = charts.candidates - charts.quiet;
    // Quiet sessions are drawn only when no session has anything to show.
    let drawn: Vec<&SessionChart> = charts.sessions.iter().filter(|s| s.eventful || eventful == 0).collect();
    html! {
        h2 { "Context size per call" } "\n"
        @if charts.candidates == 0 {
            p class="note" { "No session has recorded calls." } "\n"
        } @else {
            p class="note" {
                @if eventful == 0 {
                    "Nothing happened in any session: no policy compacted, no call went over the window, and no log \
                     records a compaction. The largest are drawn."
                } @else {
                    "Sessions where a policy compacted, a call went over the window, or the agent compacted, largest \
                     first" @if eventful > drawn.len() { " (" (drawn.len()) " of " (eventful) ")" } "."
                    @if charts.quiet > 0 {
                        " In the other " (charts.quiet) " session(s) nothing happened: every policy sent what the agent \
                         sent, or only pruned; they are in sessions.csv and calls.csv."
                    }
                }
            }
            "\n"
            @for s in drawn { (session_chart(r, &window_of, s)) }
        }
    }
}

/// At most this many rows in the list of sessions where a policy sent or paid more.
const MAX_SENT_MORE: usize = 50;

/// Sessions where a policy sent more tokens than the agent did, or paid
/// more for fewer (a pruned prompt is no longer a cached prefix): most extra
/// money first. Nothing when there is none.
fn sent_more(r: &Report) -> Markup {
    let paid = |row: &SessionRow| row.cost.as_ref().map(|c| -c.saved_usd);
    let mut rows: Vec<&SessionRow> = r
        .sessions
        .iter()
        .filter(|row| row.error.is_none())
        .filter(|row| {
            row.metrics.input_tokens_policy > row.metrics.input_tokens_baseline || paid(row).is_some_and(|p| p > 0.0)
        })
        .collect();
    if rows.is_empty() {
        return html! {};
    }
    rows.sort_by(|a, b| paid(b).unwrap_or(0.0).total_cmp(&paid(a).unwrap_or(0.0)));
    let signed_pct = |base: f64, now: f64| {
        if base > 0.0 { format!("{:+.1}%", shown((now - base) / base * 100.0, 1)) } else { "–".into() }
    };
    html! {
        h2 { "Where a policy sent or paid more than the agent" } "\n"
        p class="note" {
            "Sessions where a policy sent more input tokens than the agent did (its summaries and kept messages, \
             and what the agent's own compactions and cleared tool outputs dropped, outweighed what it dropped), or paid more while sending fewer (pruning or compaction broke the cached \
             prefix and the session ended before the rewrite paid back). Most extra money first."
            @if rows.len() > MAX_SENT_MORE { " Showing " (MAX_SENT_MORE) " of " (rows.len()) "; all are in sessions.csv." }
        } "\n"
        table {
            tr { th { "session" } th { "policy" } th { "tokens (agent → policy)" } th { "change" } th { "cost (agent → policy)" } th { "change" } } "\n"
            @for row in rows.iter().take(MAX_SENT_MORE) {
                @let m = &row.metrics;
                tr {
                    td { (row.name.as_deref().unwrap_or(&row.session_id)) }
                    td { (row.policy) }
                    td { (thousands(m.input_tokens_baseline)) " → " (thousands(m.input_tokens_policy)) }
                    td { (signed_pct(m.input_tokens_baseline as f64, m.input_tokens_policy as f64)) }
                    @match &row.cost {
                        Some(c) => {
                            @let now = c.policy.usd + c.summarizer_usd;
                            td { (format!("${:.4} → ${:.4}", c.baseline_usd(), now)) }
                            td { (signed_pct(c.baseline_usd(), now)) }
                        }
                        None => { td { "–" } td { "–" } }
                    }
                } "\n"
            }
        } "\n"
    }
}

/// The context window of each (session id, source path, policy).
type WindowOf<'a> = std::collections::HashMap<(&'a str, &'a str, &'a str), u64>;

/// One session's heading and context chart; nothing when no policy replayed it.
fn session_chart(r: &Report, window_of: &WindowOf<'_>, s: &SessionChart) -> Markup {
    let policies: Vec<&str> = r.policies.iter().map(|p| p.name.as_str()).collect();
    let traces = &s.lines;
    if traces.is_empty() {
        return html! {};
    }
    let windows: Vec<u64> = r
        .policies
        .iter()
        .map(|p| {
            let key = (s.session_id.as_str(), s.source_path.as_str(), p.name.as_str());
            window_of.get(&key).copied().unwrap_or(p.context_window)
        })
        .collect();
    let base: Vec<(f64, f64)> = s.base.iter().map(|&(call, b, _)| (call as f64, b as f64)).collect();
    let rec: Vec<(f64, f64)> = s.base.iter().filter_map(|&(call, _, r)| r.map(|t| (call as f64, t as f64))).collect();
    let mut ymax = base.iter().map(|p| p.1).fold(0.0, f64::max);
    ymax = rec.iter().map(|p| p.1).fold(ymax, f64::max);
    for (_, t) in traces {
        ymax = t.iter().map(|c| c.1 as f64).fold(ymax, f64::max);
    }
    let wmin = traces.iter().map(|(k, _)| windows.get(*k).copied().unwrap_or(0)).min().unwrap_or(0);
    // Show the window line when it is in view (not far above everything).
    let show_window = wmin > 0 && (wmin as f64) < ymax * 3.0;
    if show_window {
        ymax = ymax.max(wmin as f64);
    }
    let xmax = s.base.last().map(|c| c.0 as f64).unwrap_or(0.0);
    let f = Frame::new(1000.0, 260.0, (0.0, xmax.max(1.0)), (0.0, ymax * 1.05));
    // Each window once, when in view.
    let mut shown_windows: Vec<u64> = Vec::new();
    if show_window {
        for (k, _) in traces {
            let w = windows.get(*k).copied().unwrap_or(0);
            if w != 0 && !shown_windows.contains(&w) && (w as f64) <= ymax * 1.05 {
                shown_windows.push(w);
            }
        }
    }
    let body = html! {
        (f.axes("call", "tokens in the request", &short, true))
        @for w in &shown_windows {
            @let y = f.y(*w as f64);
            (empty("line", &[
                ("x1", &d1(f.left)),
                ("y1", &d1(y)),
                ("x2", &d1(f.w - f.right)),
                ("y2", &d1(y)),
                ("stroke", &WINDOW),
                ("stroke-dasharray", &"6 4"),
            ]))
            text x=(d1(f.w - f.right - 4.0)) y=(d1(y - 3.0)) font-size="10" text-anchor="end" fill=(WINDOW) {
                "window " (short(*w as f64))
            }
        }
        @for (x, y) in rec.iter().step_by(rec.len().div_ceil(MAX_LINE_POINTS).max(1)) {
            (empty("circle", &[("cx", &d1(f.x(*x))), ("cy", &d1(f.y(*y))), ("r", &"1.8"), ("fill", &RECORDED)]))
        }
        @for (k, t) in traces {
            @let color = PALETTE[k % PALETTE.len()];
            @let pts: Vec<(f64, f64)> = t.iter().map(|c| (c.0 as f64, c.1 as f64)).collect();
            (polyline(&f, &pts, color, 1.5, None))
            @for &(call, tokens, _) in t.iter().filter(|c| c.2) {
                @let (x, y) = (f.x(call as f64), f.y(tokens as f64));
                // A triangle pointing down at the call, from numbers only.
                path d=(format!("M{:.1},{:.1} L{:.1},{:.1} L{x:.1},{:.1} Z", x - 5.0, y - 10.0, x + 5.0, y - 10.0, y - 2.0))
                    fill=(color) {
                    title { "compaction at call " (call) " (" (policies.get(*k).copied().unwrap_or("")) ")" }
                }
            }
        }
        // The baseline last and dashed: on top of the policies' lines, which
        // show through its gaps where they are the same.
        (polyline(&f, &base, BASELINE, 2.0, Some("7 5")))
    };
    let mut items = vec![("baseline (what the agent sent)".to_string(), BASELINE)];
    if !rec.is_empty() {
        items.push(("recorded usage".to_string(), RECORDED));
    }
    for (k, _) in traces {
        items.push((policies.get(*k).copied().unwrap_or("").to_string(), PALETTE[k % PALETTE.len()]));
    }
    if show_window {
        items.push(("context window".to_string(), WINDOW));
    }
    html! {
        h3 { (s.session_id) } "\n"
        div class="meta" { @if let Some(n) = &s.name { b { (n) } " · " } (s.source_path) " · " (s.base.len()) " calls" } "\n"
        div class="chart" {
            (f.svg(&format!("context size per call of session {}", s.session_id), body))
            (legend(&items))
            div class="note" { "▼ = compaction" }
        }
        "\n"
    }
}

// ------------------------------------------------------------ distributions

const BINS: usize = 12;

/// Bins of a percentage distribution: below 0, exactly 0 (nothing changed),
/// then (0, 10], (10, 20], … (90, 100].
fn bins(values: &[f64]) -> [u64; BINS] {
    let mut b = [0u64; BINS];
    for v in values {
        let i = if *v < 0.0 {
            0
        } else if *v == 0.0 {
            1
        } else {
            2 + ((*v / 10.0).ceil() as usize).saturating_sub(1).min(9)
        };
        b[i] += 1;
    }
    b
}

fn histogram(title: &str, labels: &[&str], series: &[(String, Vec<f64>)]) -> Markup {
    let counts: Vec<[u64; BINS]> = series.iter().map(|(_, v)| bins(v)).collect();
    let ymax = counts.iter().flat_map(|c| c.iter()).copied().max().unwrap_or(0).max(1) as f64;
    let f = Frame::new(1000.0, 240.0, (0.0, BINS as f64), (0.0, ymax * 1.1));
    let slot = (f.x(1.0) - f.x(0.0)) * 0.8;
    let bar = slot / series.len().max(1) as f64;
    let body = html! {
        // Counts: whole ticks only.
        @for t in ticks(0.0, ymax * 1.1).into_iter().filter(|t| t.fract() == 0.0) {
            (f.y_gridline(t, &short(t)))
        }
        @for (b, label) in labels.iter().enumerate() {
            text x=(d1(f.x(b as f64 + 0.5))) y=(d1(f.h - f.bottom + 13.0)) font-size="10" text-anchor="middle" fill="#555" {
                (label)
            }
            @for (k, c) in counts.iter().enumerate().filter(|(_, c)| c[b] != 0) {
                @let x = f.x(b as f64) + (f.x(1.0) - f.x(0.0)) * 0.1 + bar * k as f64;
                @let y = f.y(c[b] as f64);
                rect x=(d1(x)) y=(d1(y)) width=(d1(bar.max(1.0))) height=(d1(f.y(0.0) - y)) fill=(PALETTE[k % PALETTE.len()]) {
                    title { (series[k].0) ": " (c[b]) " session(s)" }
                }
            }
        }
        (f.y_title(f.h / 2.0, "sessions"))
    };
    let items: Vec<(String, &str)> =
        series.iter().enumerate().map(|(k, (n, _))| (n.clone(), PALETTE[k % PALETTE.len()])).collect();
    html! {
        h3 { (title) }
        div class="chart" { (f.svg(title, body)) (legend(&items)) }
        "\n"
    }
}

const PCT_LABELS: [&str; BINS] =
    ["< 0%", "0%", "0–10", "10–20", "20–30", "30–40", "40–50", "50–60", "60–70", "70–80", "80–90", "90–100"];

fn distributions(r: &Report, frr: Option<&[Vec<f64>]>) -> Markup {
    let savings: Vec<(String, Vec<f64>)> = r
        .policies
        .iter()
        .map(|p| {
            let v = r
                .sessions
                .iter()
                .filter(|s| s.policy == p.name && s.error.is_none() && s.metrics.calls > 0)
                .map(|s| s.metrics.savings_pct)
                .collect();
            (p.name.clone(), v)
        })
        .collect();
    let cost: Option<Vec<(String, Vec<f64>)>> = r.sessions.iter().any(|s| s.cost.is_some()).then(|| {
        r.policies
            .iter()
            .map(|p| {
                let v = r
                    .sessions
                    .iter()
                    .filter(|s| s.policy == p.name && s.metrics.calls > 0)
                    .filter_map(|s| s.cost.as_ref().map(|c| c.saved_pct))
                    .collect();
                (p.name.clone(), v)
            })
            .collect()
    });
    let frr: Option<Vec<(String, Vec<f64>)>> = frr.map(|per_policy| {
        r.policies
            .iter()
            .zip(per_policy)
            .map(|(p, v)| (format!("{} FRR", p.name), v.iter().map(|x| x * 100.0).collect()))
            .collect()
    });
    html! {
        h2 { "Savings across sessions" } "\n"
        (histogram("Per-session token savings (sessions per bin)", &PCT_LABELS, &savings))
        @if let Some(cost) = &cost {
            (histogram(
                "Per-session cost savings, prompt cache included (below 0%: the policy costs more)",
                &PCT_LABELS,
                cost,
            ))
        }
        h2 { "Summary quality across sessions" } "\n"
        @if let Some(series) = &frr {
            (histogram("Per-session FRR", &PCT_LABELS, series))
        } @else {
            p class="note" { "FRR is not measured (--no-quality)." } "\n"
        }
    }
}

// -------------------------------------------------------------------- sweep

fn sweep_section(s: &SweepResult) -> Markup {
    let ok: Vec<usize> = (0..s.points.len()).filter(|&i| s.points[i].ok()).collect();
    // x = token savings; y = FRR when measured, else cost savings.
    let with_frr = s.quality_measured && ok.iter().any(|&i| s.points[i].frr().is_some());
    let y_of = |i: usize| -> f64 {
        let p = &s.points[i];
        if with_frr { p.frr().unwrap_or(0.0) * 100.0 } else { p.cost_saved_pct() }
    };
    let front = |i: usize| {
        if with_frr { s.points[i].front_savings } else { s.points[i].front_savings || s.points[i].front_cost }
    };
    let recommendation = super::sweep::recommendation_text(s);
    html! {
        h2 { "Sweep: Pareto front" } "\n"
        p {
            @for (n, line) in recommendation.split('\n').enumerate() {
                @if n > 0 { br; }
                (line)
            }
        }
        "\n"
        p {
            (s.points.len()) " grid point(s) over " (s.sessions) " session(s), " (ok.len()) " ran. Axes: "
            @for (n, a) in s.axes.iter().enumerate() {
                @if n > 0 { ", " }
                code { (a) }
            }
            "."
        }
        "\n"
        @if !ok.is_empty() { (sweep_chart(s, &ok, with_frr, &y_of, &front)) }
        // The front and the recommendation as a table.
        table {
            "\n"
            tr {
                th { "point" }
                @for a in &s.axes {
                    // Long dotted keys may wrap after a dot or an underscore.
                    th {
                        @for piece in a.split_inclusive(['.', '_']) {
                            (piece)
                            @if piece.ends_with(['.', '_']) { wbr; }
                        }
                    }
                }
                th { "token savings" } th { "cost saved" } th { "overflow calls" } th { "compactions" } th { "FRR" }
                th { "front" }
            }
            "\n"
            @for (i, p) in s.points.iter().enumerate().filter(|(i, p)| p.ok() && (front(*i) || s.recommended == Some(*i))) {
                @let t = &p.totals;
                tr {
                    td { (p.index) @if s.recommended == Some(i) { " ★" } }
                    @for v in &p.values { td { (v) } }
                    td { (d1(t.savings_pct)) "%" }
                    td { (crate::num::usd(t.cost.saved_usd, 4)) " (" (d1(t.cost.saved_pct)) "%)" }
                    td { (t.overflow_calls_baseline) " → " (t.overflow_calls_policy) }
                    td { (t.compactions) }
                    td { (p.frr().map(|f| format!("{:.1}%", f * 100.0)).unwrap_or_else(|| "n/a".into())) }
                    td { @if front(i) { "yes" } }
                }
                "\n"
            }
        }
        "\n"
    }
}

/// The points that ran, savings against quality: the front as a dashed line,
/// the recommended point circled.
fn sweep_chart(
    s: &SweepResult,
    ok: &[usize],
    with_frr: bool,
    y_of: &dyn Fn(usize) -> f64,
    front: &dyn Fn(usize) -> bool,
) -> Markup {
    let xs: Vec<f64> = ok.iter().map(|&i| s.points[i].totals.savings_pct).collect();
    let ys: Vec<f64> = ok.iter().map(|&i| y_of(i)).collect();
    let (xlo, xhi) =
        (xs.iter().copied().fold(f64::INFINITY, f64::min), xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let (ylo, yhi) =
        (ys.iter().copied().fold(f64::INFINITY, f64::min), ys.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let pad = |lo: f64, hi: f64| {
        let p = ((hi - lo) * 0.08).max(0.5);
        (lo - p, hi + p)
    };
    let f = Frame::new(800.0, 380.0, pad(xlo, xhi), pad(ylo, yhi));
    let y_label = if with_frr { "FRR (%)" } else { "cost saved (%)" };
    let mut fr: Vec<(f64, f64)> =
        ok.iter().filter(|&&i| front(i)).map(|&i| (s.points[i].totals.savings_pct, y_of(i))).collect();
    fr.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let body = html! {
        (f.axes("token savings (%)", y_label, &|v| format!("{v:.0}"), false))
        (polyline(&f, &fr, PALETTE[1], 1.5, Some("4 3")))
        @for &i in ok {
            @let p = &s.points[i];
            @let (x, y) = (f.x(p.totals.savings_pct), f.y(y_of(i)));
            @let on = front(i);
            @let label = format!(
                "point {}: {} | savings {:.1}%, cost saved {:.1}%",
                p.index,
                s.axes.iter().zip(&p.values).map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
                shown(p.totals.savings_pct, 1),
                shown(p.cost_saved_pct(), 1)
            );
            circle cx=(d1(x)) cy=(d1(y)) r=(if on { "5" } else { "3.5" }) fill=(if on { PALETTE[1] } else { "#999" })
                fill-opacity="0.8" {
                title { (label) }
            }
            @if s.recommended == Some(i) {
                // The label goes on the side with room.
                @let (tx, anchor) = if x > f.w / 2.0 { (x - 12.0, "end") } else { (x + 12.0, "start") };
                (empty("circle", &[
                    ("cx", &d1(x)),
                    ("cy", &d1(y)),
                    ("r", &"10"),
                    ("fill", &"none"),
                    ("stroke", &PALETTE[2]),
                    ("stroke-width", &"2"),
                ]))
                text x=(d1(tx)) y=(d1((y - 8.0).max(f.top + 10.0))) font-size="11" text-anchor=(anchor) fill=(PALETTE[2]) {
                    "recommended (point " (p.index) ")"
                }
            }
        }
    };
    html! {
        div class="chart" {
            (f.svg("sweep points: savings against quality", body))
            (legend(&[
                ("Pareto front".to_string(), PALETTE[1]),
                ("other points".to_string(), "#999"),
                ("recommended".to_string(), PALETTE[2]),
            ]))
            @if !with_frr {
                p class="note" {
                    "FRR is not measured: the chart plots cost savings instead, and the front is on savings only."
                }
            }
        }
        "\n"
    }
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
