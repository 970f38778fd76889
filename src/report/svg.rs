//! The SVG pieces report.html draws its charts with (plot frame, axes, lines,
//! legend), as maud markup, so every label is escaped like any other text.

use maud::{Markup, PreEscaped, Render, html};

/// Most points a line is drawn with; longer series are sampled evenly.
pub(super) const MAX_LINE_POINTS: usize = 800;

pub(super) const PALETTE: [&str; 8] =
    ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];

/// `v` with one decimal, as every coordinate on the page is written.
pub(super) fn d1(v: f64) -> String {
    format!("{v:.1}")
}

/// `v` rounded to a whole number.
pub(super) fn d0(v: f64) -> String {
    format!("{v:.0}")
}

/// An SVG element without content, `<name a="v" …/>`: maud writes a void
/// element as `<name …>`, which does not close an element inside `<svg>`.
/// Names are fixed strings; each value is rendered (so escaped) by maud's
/// `Render`, like any value in a template. The result is trusted markup.
pub(super) fn empty(name: &'static str, attrs: &[(&'static str, &dyn Render)]) -> Markup {
    let mut w = String::with_capacity(16 + attrs.len() * 16);
    w.push('<');
    w.push_str(name);
    for (key, value) in attrs {
        w.push(' ');
        w.push_str(key);
        w.push_str("=\"");
        value.render_to(&mut w);
        w.push('"');
    }
    w.push_str("/>");
    PreEscaped(w)
}

/// Plot area inside an SVG of `w` × `h` with margins for axes.
pub(super) struct Frame {
    pub w: f64,
    pub h: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    pub fn new(w: f64, h: f64, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> Frame {
        let (x1, y1) = (if x1 > x0 { x1 } else { x0 + 1.0 }, if y1 > y0 { y1 } else { y0 + 1.0 });
        Frame { w, h, left: 64.0, right: 16.0, top: 12.0, bottom: 36.0, x0, x1, y0, y1 }
    }
    pub fn x(&self, v: f64) -> f64 {
        self.left + (v - self.x0) / (self.x1 - self.x0) * (self.w - self.left - self.right)
    }
    pub fn y(&self, v: f64) -> f64 {
        self.h - self.bottom - (v - self.y0) / (self.y1 - self.y0) * (self.h - self.top - self.bottom)
    }

    /// The `<svg>` element: the plot area's background, then `body`.
    pub fn svg(&self, label: &str, body: Markup) -> Markup {
        let (w, h) = (d0(self.w), d0(self.h));
        html! {
            svg xmlns="http://www.w3.org/2000/svg" width=(w) height=(h) viewBox=(format!("0 0 {w} {h}"))
                role="img" aria-label=(label) {
                (empty("rect", &[
                    ("x", &d1(self.left)),
                    ("y", &d1(self.top)),
                    ("width", &d1(self.w - self.left - self.right)),
                    ("height", &d1(self.h - self.top - self.bottom)),
                    ("fill", &"#fcfcfc"),
                    ("stroke", &"#ccc"),
                ]))
                (body)
            }
        }
    }

    /// A horizontal grid line at `t` with its label on the y axis.
    pub fn y_gridline(&self, t: f64, label: &str) -> Markup {
        let y = d1(self.y(t));
        html! {
            (empty("line", &[
                ("x1", &d1(self.left)),
                ("y1", &y),
                ("x2", &d1(self.w - self.right)),
                ("y2", &y),
                ("stroke", &"#eee"),
            ]))
            text x=(d1(self.left - 4.0)) y=(d1(self.y(t) + 3.0)) font-size="10" text-anchor="end" fill="#555" { (label) }
        }
    }

    /// Ticks and labels on both axes; with `whole_x`, only whole numbers on
    /// the x axis (calls are counted, not measured).
    pub fn axes(&self, x_label: &str, y_label: &str, fmt_y: &dyn Fn(f64) -> String, whole_x: bool) -> Markup {
        html! {
            @for t in ticks(self.y0, self.y1) {
                (self.y_gridline(t, &fmt_y(t)))
            }
            @for t in ticks(self.x0, self.x1).into_iter().filter(|t| !whole_x || t.fract() == 0.0) {
                text x=(d1(self.x(t))) y=(d1(self.h - self.bottom + 13.0)) font-size="10" text-anchor="middle" fill="#555" {
                    (short(t))
                }
            }
            text x=(d1(self.left + (self.w - self.left - self.right) / 2.0)) y=(d1(self.h - 4.0)) font-size="11"
                text-anchor="middle" fill="#333" { (x_label) }
            (self.y_title(self.top + (self.h - self.top - self.bottom) / 2.0, y_label))
        }
    }

    /// The y axis's title, turned to read upwards, centred on `y`.
    pub fn y_title(&self, y: f64, label: &str) -> Markup {
        html! {
            text x="12" y=(d1(y)) font-size="11" text-anchor="middle" fill="#333"
                transform=(format!("rotate(-90 12 {})", d1(y))) { (label) }
        }
    }
}

/// About five round ticks in [lo, hi].
pub(super) fn ticks(lo: f64, hi: f64) -> Vec<f64> {
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
pub(super) fn short(v: f64) -> String {
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

/// A line through `pts` (sampled down to [`MAX_LINE_POINTS`]); nothing when empty.
pub(super) fn polyline(f: &Frame, pts: &[(f64, f64)], color: &str, width: f64, dash: Option<&str>) -> Markup {
    if pts.is_empty() {
        return html! {};
    }
    let stride = pts.len().div_ceil(MAX_LINE_POINTS).max(1);
    let mut points = String::with_capacity(pts.len().min(MAX_LINE_POINTS) * 14);
    for (i, (x, y)) in pts.iter().enumerate() {
        if i % stride != 0 && i + 1 != pts.len() {
            continue;
        }
        if !points.is_empty() {
            points.push(' ');
        }
        points.push_str(&format!("{:.1},{:.1}", f.x(*x), f.y(*y)));
    }
    let width = d1(width);
    let mut attrs: Vec<(&'static str, &dyn Render)> =
        vec![("fill", &"none"), ("stroke", &color), ("stroke-width", &width)];
    if let Some(d) = &dash {
        attrs.push(("stroke-dasharray", d));
    }
    attrs.push(("points", &points));
    empty("polyline", &attrs)
}

/// Colour swatches and names under a chart, then a newline.
pub(super) fn legend(items: &[(String, &str)]) -> Markup {
    html! {
        div class="legend" {
            @for (name, color) in items {
                span { i class="sw" style=(format!("background:{color}")) {} (name) }
            }
        }
        "\n"
    }
}
