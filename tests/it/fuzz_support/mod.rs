//! Structure-aware input generation and the checks every fuzz case runs, shared by
//! the proptest suite (`tests/fuzz_readers.rs`, run by CI) and the cargo-fuzz
//! targets (`fuzz/`, long local runs), which include this file by path.
//!
//! An input is built from a byte string the fuzzer controls: the bytes pick a real
//! fixture of the target's format, then a sequence of mutations that real logs and
//! hostile ones produce — fields deleted, types swapped, strings replaced by huge,
//! empty, unicode, `../` or NUL text, ids copied between records (duplicates,
//! cycles, dangling links), arrays nested past the parser's depth limit, records
//! duplicated, reordered or dropped, lines truncated, joined, CRLF'd, BOM'd, bytes
//! flipped. Decoding never fails: exhausted bytes read as zeros, so any byte string
//! (and any shrink of it) is a valid case. A case whose first byte is `0xFF` skips
//! the structure and uses the remaining bytes as the file, so random bytes are
//! covered too.
//!
//! [`check`] runs detection, the reader (forced format or detected), the
//! cross-file linking and `inspect` on the result, and asserts what must hold for
//! any input: no panic, diagnostics that name the input and never quote its
//! content, and a model whose indexes (calls, compaction ranges) stay in bounds so
//! later stages can slice with them.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

mod palette;
pub mod replay;

use compactor::model::{Format, Session};
use compactor::read::{self, Batch};
use palette::{KEYS, RAW_SNIPPETS, number_palette, string_palette, value_palette};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Text planted in generated strings: no diagnostic message may contain it.
pub const CANARY: &str = "SECRETCANARY";

/// Upper bound of a generated input, so one case stays fast in a debug build.
pub const MAX_INPUT: usize = 3 << 20;

/// A fuzz target: a reader (by forced format), or detection + auto-read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Reader(Format),
    /// `read_bytes` with detection, over seeds of every format.
    Detect,
    /// Cline with both of its files (`api_conversation_history.json` and
    /// `ui_messages.json`).
    ClineTask,
}

impl Target {
    pub fn name(self) -> String {
        match self {
            Target::Reader(f) => f.name().to_string(),
            Target::Detect => "detect".to_string(),
            Target::ClineTask => "cline-task".to_string(),
        }
    }
}

/// One seed file, split into records (JSONL lines) or kept whole (JSON document).
#[derive(Debug, Clone)]
pub struct Seed {
    pub records: Vec<Value>,
    /// Whole-file JSON document (Gemini, Cline, generic `.json`).
    pub document: bool,
    /// For a Cline task: the `ui_messages.json` array.
    pub ui: Option<Value>,
    /// For a Cline task: its `context_history.json`.
    pub context: Option<Value>,
}

/// The fixture folders of each format.
fn fixture_dirs(target: Target) -> Vec<&'static str> {
    match target {
        Target::Reader(Format::ClaudeCode) => vec!["claude-code"],
        Target::Reader(Format::Codex) => vec!["codex"],
        Target::Reader(Format::CodexExec) => vec!["codex-exec"],
        Target::Reader(Format::Pi) => vec!["pi"],
        Target::Reader(Format::Gemini) => vec!["gemini"],
        Target::Reader(Format::Generic) => vec!["generic"],
        Target::Reader(Format::Cline) | Target::ClineTask => vec!["cline"],
        Target::Detect => vec!["claude-code", "codex", "codex-exec", "pi", "gemini", "generic", "cline"],
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Load the seeds of a target from `fixtures` (the repository's `fixtures/`).
pub fn load_seeds(fixtures: &Path, target: Target) -> Vec<Seed> {
    let mut seeds = Vec::new();
    for d in fixture_dirs(target) {
        let mut files = Vec::new();
        files_under(&fixtures.join(d), &mut files);
        for f in files {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let Ok(data) = std::fs::read(&f) else { continue };
            let sidecars = ["ui_messages.json", "task_metadata.json", "context_history.json"];
            if sidecars.contains(&name) || name.ends_with(".meta.json") {
                continue;
            }
            if name.ends_with(".json") {
                // A whole document; a torn one (a fixture on purpose) is kept as
                // the lines that parse, still useful material.
                if let Ok(v) = serde_json::from_slice::<Value>(&data) {
                    let beside = |file: &str| {
                        (name == "api_conversation_history.json")
                            .then(|| std::fs::read(f.with_file_name(file)).ok())
                            .flatten()
                            .and_then(|u| serde_json::from_slice(&u).ok())
                    };
                    let (ui, context) = (beside("ui_messages.json"), beside("context_history.json"));
                    seeds.push(Seed { records: vec![v], document: true, ui, context });
                    continue;
                }
            }
            let records: Vec<Value> =
                data.split(|&b| b == b'\n').filter_map(|l| serde_json::from_slice::<Value>(l).ok()).collect();
            if !records.is_empty() {
                seeds.push(Seed { records, document: false, ui: None, context: None });
            }
        }
    }
    assert!(!seeds.is_empty(), "no seeds for {target:?} under {}", fixtures.display());
    seeds
}

/// Reads decisions from the fuzzer's bytes; zeros once they run out.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data, pos: 0 }
    }
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }
    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    pub fn u16(&mut self) -> u16 {
        u16::from(self.u8()) << 8 | u16::from(self.u8())
    }
    /// An index below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let v = if n <= 256 { usize::from(self.u8()) } else { usize::from(self.u16()) << 8 | usize::from(self.u8()) };
        v % n
    }
    pub fn rest(&mut self) -> &'a [u8] {
        let r = self.data.get(self.pos..).unwrap_or(&[]);
        self.pos = self.data.len();
        r
    }
}

/// One step of a path into a JSON value.
#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Paths of the nodes of `v` in pre-order (at most `cap`).
fn node_paths(v: &Value, cap: usize) -> Vec<Vec<Seg>> {
    fn walk(v: &Value, path: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>, cap: usize) {
        if out.len() >= cap {
            return;
        }
        out.push(path.clone());
        match v {
            Value::Object(o) => {
                for (k, c) in o {
                    path.push(Seg::Key(k.clone()));
                    walk(c, path, out, cap);
                    path.pop();
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    path.push(Seg::Index(i));
                    walk(c, path, out, cap);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out, cap);
    out
}

fn node_mut<'v>(v: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
    let mut cur = v;
    for s in path {
        cur = match s {
            Seg::Key(k) => cur.get_mut(k.as_str())?,
            Seg::Index(i) => cur.get_mut(*i)?,
        };
    }
    Some(cur)
}

fn node<'v>(v: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    let mut cur = v;
    for s in path {
        cur = match s {
            Seg::Key(k) => cur.get(k.as_str())?,
            Seg::Index(i) => cur.get(*i)?,
        };
    }
    Some(cur)
}

/// Pick a node of record `r` (deep documents: nodes of all their elements).
fn pick_path(b: &mut Bytes, v: &Value) -> Vec<Seg> {
    let paths = node_paths(v, 4096);
    let i = b.below(paths.len());
    paths.into_iter().nth(i).unwrap_or_default()
}

/// Id-like values found in the records (for cross-linking records).
fn id_values(records: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for r in records {
        for k in ["uuid", "id", "parentUuid", "parentId", "call_id", "tool_use_id", "sessionId"] {
            if let Some(v) = r.get(k).filter(|v| v.is_string()) {
                out.push(v.clone());
            }
        }
        if let Some(v) = r.pointer("/message/id").filter(|v| v.is_string()) {
            out.push(v.clone());
        }
    }
    out
}

/// Apply one value-level mutation to `records`.
fn mutate_value(b: &mut Bytes, records: &mut Vec<Value>) {
    if records.is_empty() {
        records.push(Value::Object(Map::new()));
    }
    let op = b.u8() % 16;
    let r = b.below(records.len());
    match op {
        // Delete a field.
        0 | 1 => {
            let path = pick_path(b, &records[r]);
            let k = b.u8();
            if let Some(Value::Object(o)) = node_mut(&mut records[r], &path)
                && !o.is_empty()
            {
                let key = o.keys().nth(usize::from(k) % o.len()).cloned();
                if let Some(key) = key {
                    o.remove(&key);
                }
            }
        }
        // Swap a node's type / replace its value.
        2 | 3 => {
            let path = pick_path(b, &records[r]);
            let new = value_palette(b);
            if let Some(n) = node_mut(&mut records[r], &path) {
                *n = new;
            }
        }
        // Replace a string (strings are where content goes).
        4 | 5 => {
            let paths: Vec<Vec<Seg>> = node_paths(&records[r], 4096)
                .into_iter()
                .filter(|p| node(&records[r], p).is_some_and(Value::is_string))
                .collect();
            let i = b.below(paths.len());
            let s = string_palette(b);
            if let Some(p) = paths.get(i)
                && let Some(n) = node_mut(&mut records[r], p)
            {
                *n = Value::String(s);
            }
        }
        // Replace a number.
        6 => {
            let paths: Vec<Vec<Seg>> = node_paths(&records[r], 4096)
                .into_iter()
                .filter(|p| node(&records[r], p).is_some_and(Value::is_number))
                .collect();
            let i = b.below(paths.len());
            let n = number_palette(b);
            if let Some(p) = paths.get(i)
                && let Some(v) = node_mut(&mut records[r], p)
            {
                *v = n;
            }
        }
        // Nest a node in arrays/objects, around the parser's depth limit.
        7 => {
            let path = pick_path(b, &records[r]);
            let depth = [1usize, 10, 100, 126, 127, 128, 129, 200][usize::from(b.u8() % 8)];
            let as_object = b.u8().is_multiple_of(2);
            if let Some(n) = node_mut(&mut records[r], &path) {
                let mut v = std::mem::take(n);
                for _ in 0..depth {
                    v = if as_object {
                        let mut m = Map::new();
                        m.insert("content".to_string(), v);
                        Value::Object(m)
                    } else {
                        Value::Array(vec![v])
                    };
                }
                *n = v;
            }
        }
        // Duplicate an array element, possibly many times.
        8 => {
            let path = pick_path(b, &records[r]);
            let times = [1usize, 2, 10, 1000][usize::from(b.u8() % 4)];
            let k = b.u8();
            if let Some(Value::Array(a)) = node_mut(&mut records[r], &path)
                && !a.is_empty()
            {
                let e = a[usize::from(k) % a.len()].clone();
                for _ in 0..times {
                    a.push(e.clone());
                }
            }
        }
        // Graft a node of another record here (crossover).
        9 => {
            let o = b.below(records.len());
            let from = pick_path(b, &records[o]);
            let graft = node(&records[o], &from).cloned();
            let to = pick_path(b, &records[r]);
            if let (Some(g), Some(n)) = (graft, node_mut(&mut records[r], &to)) {
                *n = g;
            }
        }
        // Add a key the readers look at, with a palette value or another id.
        10 | 11 => {
            let path = pick_path(b, &records[r]);
            let key = KEYS[b.below(KEYS.len())];
            let ids = id_values(records);
            let v = if !ids.is_empty() && b.u8().is_multiple_of(2) {
                ids[b.below(ids.len())].clone()
            } else {
                value_palette(b)
            };
            if let Some(Value::Object(o)) = node_mut(&mut records[r], &path) {
                o.insert(key.to_string(), v);
            }
        }
        // Link records: a parent/link field set to another record's id (cycles,
        // self-parents, duplicates, dangling links).
        12 => {
            let ids = id_values(records);
            let key =
                ["parentUuid", "parentId", "uuid", "id", "tool_use_id", "call_id", "logicalParentUuid", "leafUuid"]
                    [usize::from(b.u8() % 8)];
            if let (false, Some(Value::Object(o))) = (ids.is_empty(), records.get_mut(r)) {
                let v = ids[usize::from(b.u8()) % ids.len()].clone();
                o.insert(key.to_string(), v);
            }
        }
        // Record-level: duplicate, drop, swap, reverse.
        13 => {
            let times = [1usize, 2, 100][usize::from(b.u8() % 3)];
            let rec = records[r].clone();
            for _ in 0..times {
                records.insert(r, rec.clone());
            }
        }
        14 => {
            match b.u8() % 3 {
                0 => {
                    records.remove(r);
                }
                1 => {
                    let o = b.below(records.len());
                    records.swap(r, o);
                }
                _ => records.reverse(),
            };
        }
        // Make a document's message array long and repetitive.
        _ => {
            if let Some(Value::Array(a)) = records[r].get_mut("messages")
                && !a.is_empty()
            {
                let k = b.below(a.len());
                let e = a[k].clone();
                for _ in 0..200 {
                    a.push(e.clone());
                }
            }
        }
    }
}

/// Apply one text-level mutation to the serialized file.
fn mutate_text(b: &mut Bytes, data: &mut Vec<u8>) {
    let newline_positions =
        |d: &[u8]| -> Vec<usize> { d.iter().enumerate().filter(|(_, c)| **c == b'\n').map(|(i, _)| i).collect() };
    match b.u8() % 12 {
        // Truncate the file (a torn last line) or a line in the middle.
        0 => {
            let at = b.below(data.len() + 1);
            data.truncate(at);
        }
        1 => {
            let nl = newline_positions(data);
            if !nl.is_empty() {
                let i = nl[b.below(nl.len())];
                let cut = b.below(i + 1);
                data.drain(cut..i);
            }
        }
        // Garbage line: invalid UTF-8, NUL, control bytes.
        2 => {
            let at = nl_or_end(b, data);
            let n = 1 + b.below(64);
            let mut garbage: Vec<u8> = (0..n).map(|_| b.u8()).collect();
            garbage.push(b'\n');
            data.splice(at..at, garbage);
        }
        // CRLF everywhere.
        3 => {
            let mut out = Vec::with_capacity(data.len() + data.len() / 16);
            for &c in data.iter() {
                if c == b'\n' {
                    out.push(b'\r');
                }
                out.push(c);
            }
            *data = out;
        }
        // BOM (sometimes twice).
        4 => {
            let bom = [0xEF, 0xBB, 0xBF];
            data.splice(0..0, bom);
            if b.u8().is_multiple_of(4) {
                data.splice(0..0, bom);
            }
        }
        // Join two lines.
        5 => {
            let nl = newline_positions(data);
            if !nl.is_empty() {
                let i = nl[b.below(nl.len())];
                data.remove(i);
            }
        }
        // Blank and whitespace-only lines.
        6 => {
            let at = nl_or_end(b, data);
            data.splice(at..at, b"\n \t\n\r\n\x0b\n".iter().copied());
        }
        // Flip bytes.
        7 | 8 => {
            for _ in 0..1 + b.below(8) {
                if data.is_empty() {
                    break;
                }
                let i = b.below(data.len());
                data[i] ^= b.u8() | 1;
            }
        }
        // Plant a raw token.
        9 | 10 => {
            let at = b.below(data.len() + 1);
            let s = RAW_SNIPPETS[b.below(RAW_SNIPPETS.len())];
            data.splice(at..at, s.iter().copied());
        }
        // Duplicate a line.
        _ => {
            let lines: Vec<&[u8]> = data.split(|&c| c == b'\n').collect();
            if !lines.is_empty() {
                let l = lines[b.below(lines.len())].to_vec();
                let at = nl_or_end(b, data);
                let mut ins = l;
                ins.push(b'\n');
                data.splice(at..at, ins);
            }
        }
    }
}

/// A position right after a newline (or 0, or the end).
fn nl_or_end(b: &mut Bytes, data: &[u8]) -> usize {
    let starts: Vec<usize> =
        std::iter::once(0).chain(data.iter().enumerate().filter(|(_, c)| **c == b'\n').map(|(i, _)| i + 1)).collect();
    starts[b.below(starts.len())]
}

fn serialize(records: &[Value], document: bool, pretty: bool) -> Vec<u8> {
    if document {
        let doc = records.first().cloned().unwrap_or(Value::Null);
        return if pretty { serde_json::to_vec_pretty(&doc) } else { serde_json::to_vec(&doc) }.unwrap_or_default();
    }
    let mut out = Vec::new();
    for r in records {
        out.extend(serde_json::to_vec(r).unwrap_or_default());
        out.push(b'\n');
    }
    out
}

/// A generated case: the file (and for a Cline task, `ui_messages.json`), and the
/// path it is read under.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub data: Vec<u8>,
    pub ui: Option<Vec<u8>>,
    pub context: Option<Vec<u8>>,
}

/// File names the readers treat differently (sub-agent files, nested layouts).
const NAMES: &[&str] = &[
    "session.jsonl",
    "agent-a1b2c3.jsonl",
    "sess-1/subagents/agent-x.jsonl",
    "agent-.jsonl",
    "agent-aside_question-9.jsonl",
    "rollout-ü🦀.jsonl",
    "../../up.jsonl",
    "api_conversation_history.json",
    "session.json",
];

/// Build a case from the fuzzer's bytes.
pub fn build_case(seeds: &[Seed], input: &[u8]) -> Case {
    let mut b = Bytes::new(input);
    let mode = b.u8();
    let name = NAMES[b.below(NAMES.len())].to_string();
    if mode == 0xFF {
        let data = b.rest().to_vec();
        return Case { name, data, ui: None, context: None };
    }
    let seed = &seeds[b.below(seeds.len())];
    let mut records = seed.records.clone();
    let mut ui = seed.ui.clone().map(|u| vec![u]);
    let mut context = seed.context.clone().map(|c| vec![c]);
    let value_ops = b.below(12);
    for _ in 0..value_ops {
        // A Cline task's usage and context files get their share of the mutations.
        match (&mut ui, &mut context, b.u8() % 8) {
            (Some(u), _, 0 | 1) => mutate_value(&mut b, u),
            (_, Some(c), 2 | 3) => mutate_value(&mut b, c),
            _ => mutate_value(&mut b, &mut records),
        }
    }
    let pretty = b.u8().is_multiple_of(4);
    let mut data = serialize(&records, seed.document, pretty);
    let text_ops = b.below(6);
    for _ in 0..text_ops {
        mutate_text(&mut b, &mut data);
    }
    data.truncate(MAX_INPUT);
    let ui = ui.map(|u| serialize(&u, true, false));
    let context = context.map(|c| serialize(&c, true, false));
    Case { name, data, ui, context }
}

/// Invariants of a session read from `path`; panics with the reason.
pub fn check_session(s: &Session, path: &Path) {
    let n = s.messages.len();
    for c in &s.calls {
        assert!(c.message_index < n, "{}: call points at message {} of {n}", s.id, c.message_index);
    }
    for c in &s.recorded_compactions {
        for (what, r) in [("inserted", &c.inserted), ("kept", &c.kept), ("head", &c.head)] {
            assert!(r.start <= r.end && r.end <= n, "{}: compaction {what} {r:?} out of 0..{n}", s.id);
        }
        let ordered = c.head.is_empty() || (c.head.end <= c.kept.start.max(c.inserted.start));
        assert!(ordered, "{}: compaction head {:?} overlaps what follows it", s.id, c.head);
    }
    for c in &s.recorded_clearings {
        assert!(c.at <= n, "{}: clearing at {} of {n}", s.id, c.at);
        for b in &c.blocks {
            let block = s.messages.get(b.message).and_then(|m| m.blocks.get(b.block));
            assert!(
                block.is_some(),
                "{}: clearing names message {} block {}, not a block of the session",
                s.id,
                b.message,
                b.block
            );
        }
    }
    for d in &s.diagnostics.messages {
        assert!(!d.message.contains(CANARY), "diagnostic quotes content: {d}");
        assert!(d.message.len() <= 1024, "diagnostic of {} bytes", d.message.len());
        assert!(d.path.starts_with(path.parent().unwrap_or(path)), "diagnostic names another file: {d}");
    }
    for (_, raw) in &s.diagnostics.unknown_raw {
        assert!(raw.len() <= compactor::model::MAX_UNKNOWN_RAW_LEN);
    }
    assert!(s.diagnostics.unknown_raw.len() <= compactor::model::MAX_UNKNOWN_RAW);
}

/// Run detection, the target's reader, linking and `inspect` on one case.
pub fn check(target: Target, case: &Case) {
    let path = Path::new("/nonexistent-fuzz-dir").join(&case.name);
    let _ = read::detect(&case.data);
    let sessions = match target {
        Target::ClineTask => {
            read::cline::read_history_bytes(&path, &case.data, case.ui.as_deref(), case.context.as_deref())
        }
        Target::Reader(f) => match read::read_bytes(&path, &case.data, Some(f)) {
            Ok(s) => s,
            Err(d) => panic!("a forced format must not fail: {d}"),
        },
        Target::Detect => match read::read_bytes(&path, &case.data, None) {
            Ok(s) => s,
            Err(d) => {
                assert_eq!(d.path, path);
                assert!(!d.message.contains(CANARY));
                Vec::new()
            }
        },
    };
    let mut sessions = sessions;
    read::claude::link_across_files(&mut sessions);
    for s in &sessions {
        check_session(s, &path);
    }
    let batch = Batch { inputs_read: 1, sessions, failures: Vec::new() };
    let report = compactor::inspect::inspect(&batch);
    assert_eq!(report.sessions.len(), batch.sessions.len());
    let json = serde_json::to_string(&report).expect("the report serializes");
    assert!(!json.is_empty());
}
