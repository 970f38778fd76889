//! The grid file of `compactor sweep --grid FILE`:
//!
//! ```toml
//! # Fixed overrides of the base policy, applied before the grid (optional).
//! [base]
//! context_window = "auto"
//!
//! # One axis per policy key (dotted as in `compactor presets`): a list of
//! # values, or a range { from, to, step } (to included).
//! [grid]
//! "compact.trigger_ratio" = [0.6, 0.7, 0.8]
//! "compact.keep_recent_ratio" = { from = 0.05, to = 0.25, step = 0.05 }
//! prune.soft_trim_chars = [2000, 4000, "off"]
//! ```
//!
//! Keys may be quoted (`"prune.keep_last"`) or dotted (`prune.keep_last`, which TOML
//! reads as nested tables). Points are the cartesian product of the axes in key
//! order, the first axis varying slowest.

use crate::policy::{Policy, PolicyError};

/// Most points a grid may have: a typo in a range step must not start a sweep
/// of a million replays.
pub const MAX_POINTS: usize = 10_000;

/// One swept parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub key: String,
    pub values: Vec<toml::Value>,
}

/// A parsed grid file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grid {
    /// `[base]` overrides, in key order.
    pub base: Vec<(String, toml::Value)>,
    pub axes: Vec<Axis>,
}

/// Why a grid file cannot be used; names the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GridError {
    #[error("grid TOML: {0}")]
    Toml(String),
    #[error("grid: no [grid] table with at least one key")]
    Empty,
    #[error("grid: unknown top-level key `{0}` (expected [base] and [grid])")]
    UnknownSection(String),
    #[error("grid: `{key}`: {reason}")]
    Axis { key: String, reason: String },
    #[error("grid: {0} points is more than the limit of {MAX_POINTS}")]
    TooLarge(usize),
    /// The policy error is in the message, not a source: a chain of causes
    /// would print it twice.
    #[error("grid: `{key}`: {error}")]
    Policy { key: String, error: PolicyError },
}

impl Grid {
    pub fn from_toml(text: &str) -> Result<Grid, GridError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| GridError::Toml(e.to_string()))?;
        let mut grid = Grid::default();
        for (k, v) in &table {
            match (k.as_str(), v) {
                ("base", toml::Value::Table(t)) => flatten("", t, &mut grid.base, false),
                ("grid", toml::Value::Table(t)) => {
                    let mut leaves = Vec::new();
                    flatten("", t, &mut leaves, true);
                    for (key, value) in leaves {
                        let values = axis_values(&key, &value)?;
                        grid.axes.push(Axis { key, values });
                    }
                }
                (other, _) => return Err(GridError::UnknownSection(other.to_string())),
            }
        }
        if grid.axes.is_empty() {
            return Err(GridError::Empty);
        }
        let n = grid.points();
        if n > MAX_POINTS {
            return Err(GridError::TooLarge(n));
        }
        // Every key must be a policy key and every value one it accepts: a typo
        // fails now, naming the key, not after an hour of replays.
        let mut probe = Policy::default();
        for (key, value) in &grid.base {
            probe.set_toml(key, value).map_err(|error| GridError::Policy { key: key.clone(), error })?;
        }
        for axis in &grid.axes {
            for value in &axis.values {
                probe
                    .clone()
                    .set_toml(&axis.key, value)
                    .map_err(|error| GridError::Policy { key: axis.key.clone(), error })?;
            }
        }
        Ok(grid)
    }

    /// Number of points (the product of the axis lengths).
    pub fn points(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).fold(1usize, |n, l| n.saturating_mul(l))
    }

    /// The value index of each axis at point `i` (first axis slowest).
    pub fn coordinates(&self, mut i: usize) -> Vec<usize> {
        let mut out = vec![0; self.axes.len()];
        for (k, a) in self.axes.iter().enumerate().rev() {
            let n = a.values.len().max(1);
            out[k] = i % n;
            i /= n;
        }
        out
    }

    /// The values of point `i`, rendered as in the policy TOML.
    pub fn labels(&self, i: usize) -> Vec<String> {
        self.coordinates(i).iter().zip(&self.axes).map(|(&c, a)| render(&a.values[c])).collect()
    }

    /// The base policy with `[base]` applied.
    pub fn apply_base(&self, base: &Policy) -> Result<Policy, PolicyError> {
        let mut p = base.clone();
        for (k, v) in &self.base {
            p.set_toml(k, v)?;
        }
        Ok(p)
    }

    /// The first value of an axis (in grid order) with which no point makes
    /// a valid policy: a value wrong in itself (`trigger_ratio = 1.7`), not
    /// one invalid only beside some values of another axis (a combination,
    /// which the sweep leaves out and counts). `policies[i]` is point `i`'s
    /// ([`Grid::policy`]). `(key, value, why)`.
    pub fn invalid_value(&self, policies: &[Result<Policy, PolicyError>]) -> Option<(String, String, PolicyError)> {
        let results: Vec<(Vec<usize>, &Result<Policy, PolicyError>)> =
            policies.iter().enumerate().map(|(i, r)| (self.coordinates(i), r)).collect();
        for (k, axis) in self.axes.iter().enumerate() {
            for (c, value) in axis.values.iter().enumerate() {
                let mut with = results.iter().filter(|(at, _)| at[k] == c).map(|(_, r)| *r);
                let first = with.next()?;
                if let Err(e) = first
                    && with.all(Result::is_err)
                {
                    return Some((axis.key.clone(), render(value), e.clone()));
                }
            }
        }
        None
    }

    /// The policy of point `i` on top of `base` (with `[base]` already applied),
    /// named `NAME@i`; validated.
    pub fn policy(&self, base: &Policy, i: usize) -> Result<Policy, PolicyError> {
        let mut p = base.clone();
        for (&c, a) in self.coordinates(i).iter().zip(&self.axes) {
            p.set_toml(&a.key, &a.values[c])?;
        }
        p.name = format!("{}@{}", base.name, i + 1);
        p.validate()?;
        Ok(p)
    }
}

/// A TOML value as text (strings without quotes).
pub fn render(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Float(f) => format_float(*f),
        other => other.to_string(),
    }
}

fn format_float(f: f64) -> String {
    let s = format!("{f}");
    if s.contains('.') || s.contains('e') || s.contains("inf") || s.contains("NaN") { s } else { format!("{s}.0") }
}

fn is_range(t: &toml::Table) -> bool {
    t.contains_key("from") && t.contains_key("to") && t.keys().all(|k| matches!(k.as_str(), "from" | "to" | "step"))
}

fn flatten(prefix: &str, t: &toml::Table, out: &mut Vec<(String, toml::Value)>, ranges: bool) {
    for (k, v) in t {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            toml::Value::Table(inner) if !(ranges && is_range(inner)) => flatten(&key, inner, out, ranges),
            _ => out.push((key, v.clone())),
        }
    }
}

fn axis_values(key: &str, v: &toml::Value) -> Result<Vec<toml::Value>, GridError> {
    let bad = |reason: &str| GridError::Axis { key: key.to_string(), reason: reason.to_string() };
    match v {
        toml::Value::Array(a) if a.is_empty() => Err(bad("an empty list of values")),
        toml::Value::Array(a) => Ok(a.clone()),
        toml::Value::Table(t) => range(t).map_err(|r| bad(&r)),
        other => Ok(vec![other.clone()]),
    }
}

/// `{ from, to, step }`, `to` included; integers when all three are integers.
fn range(t: &toml::Table) -> Result<Vec<toml::Value>, String> {
    let num = |k: &str| match t.get(k) {
        Some(toml::Value::Integer(i)) => Ok(Some((*i as f64, true))),
        Some(toml::Value::Float(f)) if f.is_finite() => Ok(Some((*f, false))),
        Some(_) => Err(format!("`{k}` must be a number")),
        None => Ok(None),
    };
    let (Some((from, fi)), Some((to, ti))) = (num("from")?, num("to")?) else {
        return Err("a range needs `from` and `to`".into());
    };
    let (step, si) = num("step")?.unwrap_or((1.0, true));
    if step <= 0.0 {
        return Err("`step` must be positive".into());
    }
    if to < from {
        return Err("`to` must not be below `from`".into());
    }
    let n = ((to - from) / step + 1e-9).floor() as usize + 1;
    if n > MAX_POINTS {
        return Err(format!("the range has {n} values (limit {MAX_POINTS})"));
    }
    let ints = fi && ti && si;
    Ok((0..n)
        .map(|k| {
            let x = from + step * k as f64;
            if ints {
                toml::Value::Integer(x.round() as i64)
            } else {
                // 0.1 steps without 0.30000000000000004.
                toml::Value::Float((x * 1e9).round() / 1e9)
            }
        })
        .collect())
}
