//! `report.html`: one self-contained page (no network, no JavaScript) with
//! inline SVG charts, written by `replay`, `compare` and `sweep`:
//! - per session (the largest ones when there are many), the context size per
//!   call: baseline, recorded usage, each policy, the context window, compaction
//!   markers;
//! - the distribution of per-session savings (and FRR when measured) per policy;
//! - the policies side by side (the compare table);
//! - for a sweep, the Pareto front and the best points.
//!
//! Every string from a log (session ids, paths, model names, policy names from
//! files) goes through [`escape`]. Numbers are formatted with fixed precision so
//! the bytes are the same run to run.

use super::Report;
use super::compare::{PolicyColumn, rows};
use crate::pipeline::SessionResults;
use crate::replay::{Event, SessionTrace};
use crate::sweep::SweepResult;
use std::fmt::Write as _;

/// Sessions drawn by default; the others are listed in sessions.csv.
pub const DEFAULT_MAX_SESSIONS: usize = 12;

/// Most points a line is drawn with; longer series are sampled evenly.
const MAX_LINE_POINTS: usize = 800;

const PALETTE: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
const BASELINE: &str = "#555555";
const RECORDED: &str = "#bcbd22";
const WINDOW: &str = "#d62728";

/// Text made safe inside HTML elements and quoted attributes: `& < > " '` become
/// entities and control characters other than newline and tab become U+FFFD
/// (they are not valid in HTML text).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

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

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222;max-width:1200px}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em;margin-bottom:4px}\
table{border-collapse:collapse;margin:8px 0;font-size:0.9em}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}\
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}.note{color:#666;font-size:0.9em}\
.chart{margin:8px 0 20px 0}.legend span{margin-right:14px;font-size:0.85em}.sw{display:inline-block;width:12px;height:3px;vertical-align:middle;margin-right:4px}\
.meta{color:#666;font-size:0.85em;word-break:break-all}svg text{font-family:inherit}";

/// The whole page.
pub fn report_html(page: &Page<'_>) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = format!("compactor {}", page.command);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    if let Some(r) = page.report {
        let _ = writeln!(
            out,
            "<p>{} session(s) from {} input(s); {} polic{}: {}.</p>",
            r.run.sessions,
            r.run.inputs_read,
            r.policies.len(),
            if r.policies.len() == 1 { "y" } else { "ies" },
            r.policies.iter().map(|p| format!("<code>{}</code>", escape(&p.name))).collect::<Vec<_>>().join(", ")
        );
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(&r.run.meter.sentence()));
        if let Some(cm) = &r.cost_model {
            let _ = writeln!(
                out,
                "<p class=\"note\">Costs simulate the prompt cache (TTL {}): the part of a request equal to the previous request, within the TTL, is billed as cache read, the rest as cache write. Unknown models are priced as <code>{}</code>.</p>",
                escape(cm.ttl.name()),
                escape(&cm.fallback_family)
            );
        }
    }
    if let Some(s) = page.sweep {
        sweep_section(&mut out, s);
    }
    if !page.columns.is_empty() {
        out.push_str("<h2>Policies side by side</h2>\n");
        compare_table(&mut out, page.columns);
    }
    if let Some(r) = page.report {
        distributions(&mut out, r, page.frr);
        session_charts(&mut out, r, page.charts);
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn compare_table(out: &mut String, cols: &[PolicyColumn]) {
    out.push_str("<table>\n<tr><th></th>");
    for c in cols {
        let _ = write!(out, "<th>{}</th>", escape(&c.policy));
    }
    out.push_str("</tr>\n");
    for (label, vals) in rows(cols) {
        let _ = write!(out, "<tr><td>{}</td>", escape(&label));
        for v in vals {
            let _ = write!(out, "<td>{}</td>", escape(&v));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    if cols.iter().all(|c| c.quality.is_none()) {
        out.push_str("<p class=\"note\">FRR, artifact recall and hallucination: not measured (--no-quality).</p>\n");
    }
}

// ---------------------------------------------------------------- SVG charts

/// Plot area inside an SVG of `w` × `h` with margins for axes.
struct Frame {
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    fn new(w: f64, h: f64, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> Frame {
        let (x1, y1) = (if x1 > x0 { x1 } else { x0 + 1.0 }, if y1 > y0 { y1 } else { y0 + 1.0 });
        Frame { w, h, left: 64.0, right: 16.0, top: 12.0, bottom: 36.0, x0, x1, y0, y1 }
    }
    fn x(&self, v: f64) -> f64 {
        self.left + (v - self.x0) / (self.x1 - self.x0) * (self.w - self.left - self.right)
    }
    fn y(&self, v: f64) -> f64 {
        self.h - self.bottom - (v - self.y0) / (self.y1 - self.y0) * (self.h - self.top - self.bottom)
    }
    fn open(&self, out: &mut String, label: &str) {
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{:.0}\" viewBox=\"0 0 {:.0} {:.0}\" role=\"img\" aria-label=\"{}\">",
            self.w,
            self.h,
            self.w,
            self.h,
            escape(label)
        );
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#fcfcfc\" stroke=\"#ccc\"/>",
            self.left,
            self.top,
            self.w - self.left - self.right,
            self.h - self.top - self.bottom
        );
    }
    /// A horizontal grid line at `t` with its label on the y axis.
    fn y_gridline(&self, out: &mut String, t: f64, label: &str) {
        let y = self.y(t);
        let _ = write!(
            out,
            "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\" fill=\"#555\">{}</text>",
            self.left,
            self.w - self.right,
            self.left - 4.0,
            y + 3.0,
            escape(label)
        );
    }

    /// Ticks and labels on both axes.
    fn axes(&self, out: &mut String, x_label: &str, y_label: &str, fmt_y: &dyn Fn(f64) -> String) {
        for t in ticks(self.y0, self.y1) {
            self.y_gridline(out, t, &fmt_y(t));
        }
        for t in ticks(self.x0, self.x1) {
            let x = self.x(t);
            let _ = write!(
                out,
                "<text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
                self.h - self.bottom + 13.0,
                escape(&short(t))
            );
        }
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\">{}</text>",
            self.left + (self.w - self.left - self.right) / 2.0,
            self.h - 4.0,
            escape(x_label)
        );
        let _ = write!(
            out,
            "<text x=\"12\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\" transform=\"rotate(-90 12 {:.1})\">{}</text>",
            self.top + (self.h - self.top - self.bottom) / 2.0,
            self.top + (self.h - self.top - self.bottom) / 2.0,
            escape(y_label)
        );
    }
}

/// About five round ticks in [lo, hi].
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return vec![lo];
    }
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 12 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// 1234567 → "1.2M", 45000 → "45K", 0.5 → "0.5".
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.0}K", v / 1e3)
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn polyline(out: &mut String, f: &Frame, pts: &[(f64, f64)], color: &str, width: f64, dash: Option<&str>) {
    if pts.is_empty() {
        return;
    }
    let stride = pts.len().div_ceil(MAX_LINE_POINTS).max(1);
    let mut d = String::with_capacity(pts.len().min(MAX_LINE_POINTS) * 14);
    for (i, (x, y)) in pts.iter().enumerate() {
        if i % stride != 0 && i + 1 != pts.len() {
            continue;
        }
        let _ = write!(d, "{:.1},{:.1} ", f.x(*x), f.y(*y));
    }
    let _ = write!(
        out,
        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"{width:.1}\"{} points=\"{}\"/>",
        dash.map(|d| format!(" stroke-dasharray=\"{d}\"")).unwrap_or_default(),
        d.trim_end()
    );
}

fn legend(out: &mut String, items: &[(String, &str)]) {
    out.push_str("<div class=\"legend\">");
    for (name, color) in items {
        let _ = write!(out, "<span><i class=\"sw\" style=\"background:{color}\"></i>{}</span>", escape(name));
    }
    out.push_str("</div>\n");
}

// ------------------------------------------------------- per-session charts

/// What the context chart of one session needs, copied out of its traces so
/// they can be dropped (a streaming replay keeps only the charts it draws).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionChart {
    pub session_id: String,
    pub source_path: String,
    /// Per call of the first replayed policy: (call, baseline tokens, recorded tokens).
    pub base: Vec<(usize, u64, Option<u64>)>,
    /// Per replayed policy: its index and its line.
    pub lines: Vec<(usize, PolicyLine)>,
}

/// Per call: (call, the policy's tokens, whether it compacted there).
pub type PolicyLine = Vec<(usize, u64, bool)>;

impl SessionChart {
    /// A session's rank among the charts, its peak baseline context; `None` when
    /// it has nothing to draw.
    pub fn rank(r: &SessionResults) -> Option<u64> {
        let peak = r.traces.iter().flatten().map(|t| t.metrics.peak_baseline).max().unwrap_or(0);
        (peak > 0 || r.traces.iter().flatten().any(|t| !t.calls.is_empty())).then_some(peak)
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
        SessionChart { session_id: r.session_id.clone(), source_path: r.source_path.display().to_string(), base, lines }
    }
}

/// The charts a page draws: the `max` largest sessions by peak context (ties
/// in report order), and how many sessions had something to draw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Charts {
    pub max: usize,
    pub candidates: usize,
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
    /// Best first: peak descending, then `K` ascending.
    best: Vec<(u64, K, SessionChart)>,
}

impl<K: Ord> ChartKeeper<K> {
    pub fn new(max: usize) -> ChartKeeper<K> {
        ChartKeeper { max, candidates: 0, best: Vec::new() }
    }

    pub fn offer(&mut self, key: K, r: &SessionResults) {
        let Some(peak) = SessionChart::rank(r) else { return };
        self.candidates += 1;
        let before = |(p, k): (u64, &K), (q, l): (u64, &K)| p > q || (p == q && k < l);
        let at = self.best.partition_point(|(q, l, _)| before((*q, l), (peak, &key)));
        if at >= self.max {
            return;
        }
        self.best.insert(at, (peak, key, SessionChart::new(r)));
        self.best.truncate(self.max);
    }

    pub fn finish(self) -> Charts {
        Charts { max: self.max, candidates: self.candidates, sessions: self.best.into_iter().map(|b| b.2).collect() }
    }
}

fn session_charts(out: &mut String, r: &Report, charts: &Charts) {
    let policies: Vec<&str> = r.policies.iter().map(|p| p.name.as_str()).collect();
    let max = charts.max;
    out.push_str("<h2>Context size per call</h2>\n");
    if charts.candidates > max {
        let _ = writeln!(
            out,
            "<p class=\"note\">Showing the {max} largest of {} sessions (by peak context); every session is in sessions.csv and calls.csv.</p>",
            charts.candidates
        );
    }
    if charts.candidates == 0 {
        out.push_str("<p class=\"note\">No session has recorded calls.</p>\n");
        return;
    }
    // The window each policy used for each session (`auto`: the session's own).
    let window_of: std::collections::HashMap<(&str, &str, &str), u64> = r
        .sessions
        .iter()
        .map(|row| ((row.session_id.as_str(), row.source_path.as_str(), row.policy.as_str()), row.context_window))
        .collect();
    for s in &charts.sessions {
        let traces = &s.lines;
        if traces.is_empty() {
            continue;
        }
        let windows: Vec<u64> = r
            .policies
            .iter()
            .map(|p| {
                let key = (s.session_id.as_str(), s.source_path.as_str(), p.name.as_str());
                window_of.get(&key).copied().unwrap_or(p.context_window)
            })
            .collect();
        let _ = writeln!(
            out,
            "<h3>{}</h3>\n<div class=\"meta\">{} · {} calls</div>",
            escape(&s.session_id),
            escape(&s.source_path),
            s.base.len()
        );
        let base: Vec<(f64, f64)> = s.base.iter().map(|&(call, b, _)| (call as f64, b as f64)).collect();
        let rec: Vec<(f64, f64)> =
            s.base.iter().filter_map(|&(call, _, r)| r.map(|t| (call as f64, t as f64))).collect();
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
        out.push_str("<div class=\"chart\">");
        f.open(out, &format!("context size per call of session {}", s.session_id));
        f.axes(out, "call", "tokens in the request", &short);
        if show_window {
            let mut seen = Vec::new();
            for (k, _) in traces {
                let w = windows.get(*k).copied().unwrap_or(0);
                if w == 0 || seen.contains(&w) || (w as f64) > ymax * 1.05 {
                    continue;
                }
                seen.push(w);
                let y = f.y(w as f64);
                let _ = write!(
                    out,
                    "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{WINDOW}\" stroke-dasharray=\"6 4\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\" fill=\"{WINDOW}\">window {}</text>",
                    f.left,
                    f.w - f.right,
                    f.w - f.right - 4.0,
                    y - 3.0,
                    short(w as f64)
                );
            }
        }
        polyline(out, &f, &base, BASELINE, 2.0, None);
        for (x, y) in rec.iter().step_by(rec.len().div_ceil(MAX_LINE_POINTS).max(1)) {
            let _ = write!(out, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"1.8\" fill=\"{RECORDED}\"/>", f.x(*x), f.y(*y));
        }
        for (k, t) in traces {
            let color = PALETTE[k % PALETTE.len()];
            let pts: Vec<(f64, f64)> = t.iter().map(|c| (c.0 as f64, c.1 as f64)).collect();
            polyline(out, &f, &pts, color, 1.5, None);
            for &(call, tokens, _) in t.iter().filter(|c| c.2) {
                let (x, y) = (f.x(call as f64), f.y(tokens as f64));
                let _ = write!(
                    out,
                    "<path d=\"M{:.1},{:.1} L{:.1},{:.1} L{x:.1},{:.1} Z\" fill=\"{color}\"><title>compaction at call {} ({})</title></path>",
                    x - 5.0,
                    y - 10.0,
                    x + 5.0,
                    y - 10.0,
                    y - 2.0,
                    call,
                    escape(policies.get(*k).copied().unwrap_or(""))
                );
            }
        }
        out.push_str("</svg>");
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
        legend(out, &items);
        out.push_str("<div class=\"note\">▼ = compaction</div></div>\n");
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

fn histogram(out: &mut String, title: &str, labels: &[&str], series: &[(String, Vec<f64>)]) {
    let counts: Vec<[u64; BINS]> = series.iter().map(|(_, v)| bins(v)).collect();
    let ymax = counts.iter().flat_map(|c| c.iter()).copied().max().unwrap_or(0).max(1) as f64;
    let f = Frame::new(1000.0, 240.0, (0.0, BINS as f64), (0.0, ymax * 1.1));
    let _ = write!(out, "<h3>{}</h3>", escape(title));
    out.push_str("<div class=\"chart\">");
    f.open(out, title);
    // Counts: whole ticks only.
    for t in ticks(0.0, ymax * 1.1).into_iter().filter(|t| t.fract() == 0.0) {
        f.y_gridline(out, t, &short(t));
    }
    let slot = (f.x(1.0) - f.x(0.0)) * 0.8;
    let bar = slot / series.len().max(1) as f64;
    for (b, label) in labels.iter().enumerate() {
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
            f.x(b as f64 + 0.5),
            f.h - f.bottom + 13.0,
            escape(label)
        );
        for (k, c) in counts.iter().enumerate() {
            if c[b] == 0 {
                continue;
            }
            let x = f.x(b as f64) + (f.x(1.0) - f.x(0.0)) * 0.1 + bar * k as f64;
            let y = f.y(c[b] as f64);
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {} session(s)</title></rect>",
                bar.max(1.0),
                f.y(0.0) - y,
                PALETTE[k % PALETTE.len()],
                escape(&series[k].0),
                c[b]
            );
        }
    }
    let _ = write!(
        out,
        "<text x=\"12\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\" transform=\"rotate(-90 12 {:.1})\">sessions</text>",
        f.h / 2.0,
        f.h / 2.0
    );
    out.push_str("</svg>");
    let items: Vec<(String, &str)> =
        series.iter().enumerate().map(|(k, (n, _))| (n.clone(), PALETTE[k % PALETTE.len()])).collect();
    legend(out, &items);
    out.push_str("</div>\n");
}

const PCT_LABELS: [&str; BINS] =
    ["< 0%", "0%", "0–10", "10–20", "20–30", "30–40", "40–50", "50–60", "60–70", "70–80", "80–90", "90–100"];

fn distributions(out: &mut String, r: &Report, frr: Option<&[Vec<f64>]>) {
    out.push_str("<h2>Savings across sessions</h2>\n");
    let series: Vec<(String, Vec<f64>)> = r
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
    histogram(out, "Per-session token savings (sessions per bin)", &PCT_LABELS, &series);
    if r.sessions.iter().any(|s| s.cost.is_some()) {
        let series: Vec<(String, Vec<f64>)> = r
            .policies
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
            .collect();
        histogram(
            out,
            "Per-session cost savings, prompt cache included (below 0%: the policy costs more)",
            &PCT_LABELS,
            &series,
        );
    }
    out.push_str("<h2>Summary quality across sessions</h2>\n");
    match frr {
        Some(per_policy) => {
            let series: Vec<(String, Vec<f64>)> = r
                .policies
                .iter()
                .zip(per_policy)
                .map(|(p, v)| (format!("{} FRR", p.name), v.iter().map(|x| x * 100.0).collect()))
                .collect();
            histogram(out, "Per-session FRR", &PCT_LABELS, &series);
        }
        None => out.push_str("<p class=\"note\">FRR is not measured (--no-quality).</p>\n"),
    }
}

// -------------------------------------------------------------------- sweep

fn sweep_section(out: &mut String, s: &SweepResult) {
    out.push_str("<h2>Sweep: Pareto front</h2>\n");
    let _ = writeln!(out, "<p>{}</p>", escape(&super::sweep::recommendation_text(s)).replace('\n', "<br>"));
    let ok: Vec<usize> = (0..s.points.len()).filter(|&i| s.points[i].ok()).collect();
    let _ = writeln!(
        out,
        "<p>{} grid point(s) over {} session(s), {} ran. Axes: {}.</p>",
        s.points.len(),
        s.sessions,
        ok.len(),
        s.axes.iter().map(|a| format!("<code>{}</code>", escape(a))).collect::<Vec<_>>().join(", ")
    );
    // x = token savings; y = FRR when measured, else cost savings.
    let with_frr = s.quality_measured && ok.iter().any(|&i| s.points[i].frr().is_some());
    let y_of = |i: usize| -> f64 {
        let p = &s.points[i];
        if with_frr { p.frr().unwrap_or(0.0) * 100.0 } else { p.cost_saved_pct() }
    };
    let front = |i: usize| {
        if with_frr { s.points[i].front_savings } else { s.points[i].front_savings || s.points[i].front_cost }
    };
    if !ok.is_empty() {
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
        out.push_str("<div class=\"chart\">");
        f.open(out, "sweep points: savings against quality");
        let y_label = if with_frr { "FRR (%)" } else { "cost saved (%)" };
        f.axes(out, "token savings (%)", y_label, &|v| format!("{v:.0}"));
        let mut fr: Vec<(f64, f64)> =
            ok.iter().filter(|&&i| front(i)).map(|&i| (s.points[i].totals.savings_pct, y_of(i))).collect();
        fr.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        polyline(out, &f, &fr, PALETTE[1], 1.5, Some("4 3"));
        for &i in &ok {
            let p = &s.points[i];
            let (x, y) = (f.x(p.totals.savings_pct), f.y(y_of(i)));
            let on = front(i);
            let label = format!(
                "point {}: {} | savings {:.1}%, cost saved {:.1}%",
                p.index,
                s.axes.iter().zip(&p.values).map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
                p.totals.savings_pct,
                p.cost_saved_pct()
            );
            let _ = write!(
                out,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{}\" fill=\"{}\" fill-opacity=\"0.8\"><title>{}</title></circle>",
                if on { "5" } else { "3.5" },
                if on { PALETTE[1] } else { "#999" },
                escape(&label)
            );
            if s.recommended == Some(i) {
                // The label goes on the side with room.
                let (tx, anchor) = if x > f.w / 2.0 { (x - 12.0, "end") } else { (x + 12.0, "start") };
                let _ = write!(
                    out,
                    "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"10\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/><text x=\"{tx:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"{anchor}\" fill=\"{}\">recommended (point {})</text>",
                    PALETTE[2],
                    (y - 8.0).max(f.top + 10.0),
                    PALETTE[2],
                    p.index
                );
            }
        }
        out.push_str("</svg>");
        legend(
            out,
            &[
                ("Pareto front".to_string(), PALETTE[1]),
                ("other points".to_string(), "#999"),
                ("recommended".to_string(), PALETTE[2]),
            ],
        );
        if !with_frr {
            out.push_str("<p class=\"note\">FRR is not measured: the chart plots cost savings instead, and the front is on savings only.</p>");
        }
        out.push_str("</div>\n");
    }
    // The front and the recommendation as a table.
    out.push_str("<table>\n<tr><th>point</th>");
    for a in &s.axes {
        // Long dotted keys may wrap after a dot or an underscore.
        let _ = write!(out, "<th>{}</th>", escape(a).replace('.', ".<wbr>").replace('_', "_<wbr>"));
    }
    out.push_str("<th>token savings</th><th>cost saved</th><th>overflow calls</th><th>compactions</th><th>FRR</th><th>front</th></tr>\n");
    for (i, p) in s.points.iter().enumerate().filter(|(i, p)| p.ok() && (front(*i) || s.recommended == Some(*i))) {
        let _ = write!(out, "<tr><td>{}{}</td>", p.index, if s.recommended == Some(i) { " ★" } else { "" });
        for v in &p.values {
            let _ = write!(out, "<td>{}</td>", escape(v));
        }
        let t = &p.totals;
        let _ = writeln!(
            out,
            "<td>{:.1}%</td><td>${:.4} ({:.1}%)</td><td>{} → {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            t.savings_pct,
            t.cost.saved_usd,
            t.cost.saved_pct,
            t.overflow_calls_baseline,
            t.overflow_calls_policy,
            t.compactions,
            p.frr().map(|f| format!("{:.1}%", f * 100.0)).unwrap_or_else(|| "n/a".into()),
            if front(i) { "yes" } else { "" }
        );
    }
    out.push_str("</table>\n");
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
