//! The crate's layers (ARCHITECTURE.md) as a test: every `crate::` edge between
//! top-level modules of the library points down the stack, and none forms a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom first. A module may use modules of its own layer or below; within a
/// layer the edges must not form a cycle. Keep in step with ARCHITECTURE.md.
const LAYERS: &[(&str, &[&str])] = &[
    ("model", &["model", "num", "tools", "interrupt", "output"]),
    ("read", &["read"]),
    ("tokens", &["tokens", "accuracy"]),
    ("text", &["text"]),
    ("policy", &["policy", "presets"]),
    ("summarize", &["summarize", "llm"]),
    ("replay", &["replay", "invariants"]),
    ("quality", &["quality"]),
    ("cost", &["cost"]),
    ("pipeline", &["pipeline", "outcome", "check", "sweep", "inspect", "metrics"]),
    ("report", &["report", "redact"]),
];

/// Test and benchmark support: only test code and other support may use it.
const SUPPORT: &[&str] = &["synth", "testing"];

/// Files that are test code by name; each must be declared under `#[cfg(test)]`.
fn is_test_file(path: &Path) -> bool {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem == "tests" || stem == "proptests" || stem.ends_with("_tests") || stem == "testkit"
}

/// `text` without comments, string and char literals, and `#[cfg(test)]` items.
/// Literals go first, so a brace or a `;` inside one cannot end an item early.
fn code_only(text: &str) -> String {
    let code = without_literals(text);
    let b = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while let Some(at) = code[i..].find("#[cfg(test)]") {
        out.push_str(&code[i..i + at]);
        i = skip_item(b, i + at + "#[cfg(test)]".len());
    }
    out.push_str(&code[i..]);
    out
}

/// `text` with comments removed and every string or char literal emptied.
fn without_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i = rest.find('\n').map_or(b.len(), |e| i + e);
        } else if rest.starts_with("/*") {
            i = rest.find("*/").map_or(b.len(), |e| i + e + 2);
        } else if let Some(hashes) = raw_string_hashes(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let open = 2 + hashes;
            i = rest[open..].find(&close).map_or(b.len(), |e| i + open + e + close.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if let Some(len) = char_literal(rest) {
            i += len;
            out.push_str("' '");
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// `r"…"` or `r#"…"#`: the number of `#`.
fn raw_string_hashes(rest: &str) -> Option<usize> {
    let after = rest.strip_prefix('r')?;
    let hashes = after.len() - after.trim_start_matches('#').len();
    after[hashes..].starts_with('"').then_some(hashes)
}

/// The length of a char literal at the start of `rest` (`'x'`, `'\''`, `'"'`),
/// not a lifetime (`'a`).
fn char_literal(rest: &str) -> Option<usize> {
    let body = rest.strip_prefix('\'')?;
    let len = if let Some(esc) = body.strip_prefix('\\') {
        // The escaped char, then whatever the escape holds (`u{…}`) up to the quote.
        let first = esc.chars().next()?.len_utf8();
        1 + first + esc[first..].find('\'')?
    } else {
        body.chars().next()?.len_utf8()
    };
    body[len..].starts_with('\'').then_some(len + 2)
}

/// The end of the item that starts at `i`: a `;` before any `{`, or the brace
/// matching the first `{`.
fn skip_item(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b';' if depth == 0 => return i + 1,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// The top-level modules each path `crate::a::…` or `crate::{a, b::…}` names.
fn crate_refs(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(p) = rest.find("crate::") {
        let before = rest[..p].chars().next_back();
        rest = &rest[p + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `compactor::…`-style paths of another crate, or `$crate`
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += i32::from(c == '{') - i32::from(c == '}');
                    depth == 0
                })
                .map_or(group.len(), |(e, _)| e);
            let mut d = 0;
            for part in group[..end].split(|c| {
                d += i32::from(c == '{') - i32::from(c == '}');
                c == ',' && d == 0
            }) {
                let name: String = part.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != "self" {
                    out.insert(name);
                }
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn rs_files_here(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    out.extend(entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "rs")));
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `(from, to)` -> the files with that edge.
type Edges = BTreeMap<(String, String), Vec<String>>;

/// Edges `(from, to) -> files` between top-level modules of the library under
/// `src`, from non-test code. Also the test files not declared under `cfg(test)`.
fn edges(src: &Path) -> (Edges, Vec<String>) {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let mut out: Edges = BTreeMap::new();
    let mut undeclared = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap_or(f);
        let first = rel.components().next().and_then(|c| c.as_os_str().to_str()).unwrap_or("");
        let top = first.trim_end_matches(".rs").to_string();
        // The binary (`main.rs`, `cli/`, `bin/`) sits above every layer.
        if matches!(top.as_str(), "main" | "lib" | "cli" | "bin") {
            continue;
        }
        if is_test_file(rel) {
            if !declared_for_tests(f) {
                undeclared.push(rel.display().to_string());
            }
            continue;
        }
        let Ok(text) = std::fs::read_to_string(f) else { continue };
        for to in crate_refs(&code_only(&text)) {
            if to != top {
                out.entry((top.clone(), to)).or_default().push(rel.display().to_string());
            }
        }
    }
    (out, undeclared)
}

/// Whether the module file `f` is declared under `#[cfg(test)]` by its parent.
fn declared_for_tests(f: &Path) -> bool {
    let Some(stem) = f.file_stem().and_then(|s| s.to_str()) else { return false };
    let Some(dir) = f.parent() else { return false };
    // A sibling (`mod.rs`, or `a.rs` with `#[path = "a_tests.rs"]`), or the
    // parent's `dir.rs`.
    let mut parents = Vec::new();
    rs_files_here(dir, &mut parents);
    if let (Some(up), Some(name)) = (dir.parent(), dir.file_name()) {
        parents.push(up.join(format!("{}.rs", name.to_string_lossy())));
    }
    parents.iter().filter_map(|p| std::fs::read_to_string(p).ok()).any(|text| {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines.iter().enumerate().any(|(i, l)| {
            let declares = l.ends_with(&format!("mod {stem};"))
                || (l.starts_with("#[path") && l.contains(&format!("\"{stem}.rs\"")));
            declares
                && lines[i.saturating_sub(2)..i]
                    .iter()
                    .any(|p| p.starts_with("#[cfg(test)]") || p.starts_with("#[cfg(any(test, feature = \"testkit\"))]"))
        })
    })
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

/// Every way the edges break the rules, one line each.
fn violations(edges: &BTreeMap<(String, String), Vec<String>>, modules: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for m in modules {
        if layer_of(m).is_none() && !SUPPORT.contains(&m.as_str()) {
            out.push(format!("module `{m}` has no layer: add it to LAYERS here and in ARCHITECTURE.md"));
        }
    }
    for ((from, to), files) in edges {
        if !modules.contains(to) {
            continue; // a macro or crate-level item, not a module
        }
        let at = files.join(", ");
        if SUPPORT.contains(&to.as_str()) && !SUPPORT.contains(&from.as_str()) {
            out.push(format!("`{from}` uses test support `{to}` outside tests ({at})"));
            continue;
        }
        if let (Some(a), Some(b)) = (layer_of(from), layer_of(to))
            && b > a
        {
            out.push(format!(
                "`{from}` (layer {}, {}) points up to `{to}` (layer {}, {}) in {at}",
                a + 1,
                LAYERS[a].0,
                b + 1,
                LAYERS[b].0
            ));
        }
    }
    for cycle in cycles(edges, modules) {
        out.push(format!("cycle: {}", cycle.join(" -> ")));
    }
    out
}

/// One cycle per strongly connected component of more than one module, as a path
/// that returns to its start.
fn cycles(edges: &BTreeMap<(String, String), Vec<String>>, modules: &BTreeSet<String>) -> Vec<Vec<String>> {
    let next = |m: &str| -> Vec<&str> {
        edges.keys().filter(|(f, t)| f == m && modules.contains(t)).map(|(_, t)| t.as_str()).collect()
    };
    let reaches = |from: &str, to: &str| -> Option<Vec<String>> {
        // Breadth-first, so the path shown is a shortest one.
        let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([from]);
        while let Some(m) = queue.pop_front() {
            for n in next(m) {
                if n == to {
                    let mut path = vec![to.to_string(), m.to_string()];
                    let mut at = m;
                    while at != from {
                        at = prev[at];
                        path.push(at.to_string());
                    }
                    path.reverse();
                    return Some(path);
                }
                if n != from && !prev.contains_key(n) {
                    prev.insert(n, m);
                    queue.push_back(n);
                }
            }
        }
        None
    };
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    for m in modules {
        if seen.contains(m) {
            continue;
        }
        if let Some(path) = reaches(m, m) {
            seen.extend(path.iter().cloned());
            out.push(path);
        }
    }
    out
}

fn modules(src: &Path) -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap_or_default();
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod").or_else(|| l.trim().strip_prefix("mod")))
        .map(|r| r.trim().trim_end_matches(';').to_string())
        .collect()
}

#[test]
fn every_edge_points_down_and_none_forms_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = modules(&src);
    assert!(modules.len() > 10, "read the modules of {}", src.display());
    let (edges, undeclared) = edges(&src);
    assert!(edges.len() > 20, "found only {} edges", edges.len());
    let mut bad = violations(&edges, &modules);
    bad.extend(undeclared.iter().map(|f| format!("{f} is named as test code but not declared under #[cfg(test)]")));
    assert!(bad.is_empty(), "the layers of ARCHITECTURE.md are broken:\n{}", bad.join("\n"));
}

/// The checker itself: a cycle, an upward edge, test support used by library
/// code and a module without a layer are each reported.
#[test]
fn the_checker_reports_each_kind_of_break() {
    let modules: BTreeSet<String> =
        ["model", "read", "report", "pipeline", "outcome", "sweep", "testing", "newthing"].map(String::from).into();
    let mut e: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut add = |a: &str, b: &str| e.insert((a.into(), b.into()), vec![format!("{a}.rs")]);
    add("read", "model");
    add("model", "report");
    add("outcome", "sweep");
    add("sweep", "pipeline");
    add("pipeline", "outcome");
    add("read", "testing");
    let v = violations(&e, &modules);
    let has = |s: &str| v.iter().any(|l| l.contains(s));
    assert!(has("module `newthing` has no layer"), "{v:#?}");
    assert!(has("`model` (layer 1, model) points up to `report` (layer 11, report) in model.rs"), "{v:#?}");
    assert!(has("`read` uses test support `testing`"), "{v:#?}");
    assert!(has("cycle: outcome -> sweep -> pipeline -> outcome"), "{v:#?}");
    assert_eq!(v.len(), 4, "{v:#?}");
}

#[test]
fn references_are_read_from_code_only() {
    let code = code_only(
        "use crate::{a, b::{c, d}, self};\n// crate::commented\nlet s = \"crate::quoted\";\n\
         let q = '\"'; let e = '\\''; fn f<'a>(_: &'a str) { crate::h::x(); }\nlet r = r#\"crate::raw\"#;\n\
         #[cfg(test)]\nmod t { const X: &str = \"}\"; use crate::hidden; }\n\
         #[cfg(test)]\nmod tests { use crate::in_tests; }\nfn f() { crate::e::g(); compactor::x::y(); }\n",
    );
    let refs: Vec<String> = crate_refs(&code).into_iter().collect();
    assert_eq!(refs, ["a", "b", "e", "h"]);
}
