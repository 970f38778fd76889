//! The text/atoms layer: how a message reads as text, what a tool call did to
//! files, and which atoms (paths, ids, errors, commands, symbols, constraints)
//! it names, read once per message ([`atoms::SessionLens`]) and shared by the
//! summarizer and the metric so the two read a log through one lens.

pub mod atoms;
pub mod filetrack;
pub(crate) mod line_memo;
pub mod suggest;
pub mod symbols;
pub mod words;

use serde_json::Value;

/// JSON nesting followed inside tool arguments.
pub const MAX_JSON_DEPTH: usize = 8;

/// Every string of a JSON value, in document order, down to [`MAX_JSON_DEPTH`]
/// levels of arrays and objects (tool arguments are hostile input).
pub fn visit_strings(v: &Value, f: &mut dyn FnMut(&str)) {
    visit_at(v, 0, f);
}

fn visit_at(v: &Value, depth: usize, f: &mut dyn FnMut(&str)) {
    if depth > MAX_JSON_DEPTH {
        return;
    }
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|i| visit_at(i, depth + 1, f)),
        Value::Object(map) => map.values().for_each(|i| visit_at(i, depth + 1, f)),
        _ => {}
    }
}
