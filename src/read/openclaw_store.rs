//! OpenClaw's session store, `sessions.json` beside an agent's transcripts,
//! records the context window each session last ran under (`contextTokens`,
//! the model's or a configured cap): the log's own record of its window.

use crate::model::Session;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

/// The store's file name.
pub const STORE: &str = "sessions.json";
/// Largest store read.
const MAX_STORE: u64 = 64 << 20;
/// Largest window believed.
const MAX_WINDOW: u64 = 100_000_000;

/// What a store says of use here.
#[derive(Debug, Default)]
struct Windows {
    /// Transcript file name (`sessionFile`'s, else `<sessionId>.jsonl`) → window.
    by_file: HashMap<String, u64>,
    /// Why the store could not be read.
    problem: Option<String>,
}

/// Stores already read, by path: every transcript of a folder asks for the
/// same one, and a store can be large.
static STORES: LazyLock<Mutex<HashMap<PathBuf, Arc<Windows>>>> = LazyLock::new(Default::default);

/// Give each session of the transcript at `path` that records no window the
/// one the store beside it records for that transcript. A store that cannot
/// be read is said on each session it leaves without one.
pub fn apply_windows(path: &Path, sessions: &mut [Session]) {
    if sessions.iter().all(|s| s.meta.context_window.is_some()) {
        return;
    }
    let (Some(dir), Some(file)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    // A log read from standard input has no folder. A compressed transcript
    // is read under its name before compression, which the store knows.
    if dir.as_os_str().is_empty() {
        return;
    }
    let store = dir.join(STORE);
    if !store.is_file() {
        return;
    }
    let windows = load(&store);
    for s in sessions.iter_mut().filter(|s| s.meta.context_window.is_none()) {
        match (&windows.problem, windows.by_file.get(file)) {
            (Some(why), _) => {
                s.diagnostics.warn(&store, 0, format!("{why}: the context window it records was not read"))
            }
            (None, Some(&w)) => s.meta.context_window = Some(w),
            (None, None) => {}
        }
    }
}

fn load(store: &Path) -> Arc<Windows> {
    let mut cache = STORES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(w) = cache.get(store) {
        return Arc::clone(w);
    }
    let w = Arc::new(read_store(store));
    cache.insert(store.to_path_buf(), Arc::clone(&w));
    w
}

fn read_store(store: &Path) -> Windows {
    let problem = |why: &str| Windows { problem: Some(why.to_string()), ..Windows::default() };
    match std::fs::metadata(store) {
        Ok(m) if m.len() > MAX_STORE => return problem("the session store is over 64 MiB"),
        Ok(_) => {}
        Err(_) => return problem("the session store cannot be read"),
    }
    let Ok(data) = super::read_regular_file(store) else { return problem("the session store cannot be read") };
    match super::parse_document::<Value>(super::strip_bom(&data)) {
        Ok(Value::Object(entries)) => windows_of(&entries),
        Ok(_) | Err(_) => problem("the session store is not a JSON object of sessions"),
    }
}

/// The windows of a store's entries (`{"<session key>": {"sessionId", "sessionFile", "contextTokens", …}}`).
fn windows_of(entries: &serde_json::Map<String, Value>) -> Windows {
    let mut by_file = HashMap::new();
    for entry in entries.values() {
        let Some(w) = window_of(entry) else { continue };
        let file = entry.get("sessionFile").and_then(Value::as_str).and_then(|f| f.rsplit(['/', '\\']).next());
        let id = entry.get("sessionId").and_then(Value::as_str).map(|id| format!("{id}.jsonl"));
        for name in file.map(str::to_string).into_iter().chain(id).filter(|n| !n.is_empty()) {
            by_file.insert(name, w);
        }
    }
    Windows { by_file, problem: None }
}

/// The window a session entry records (`contextTokens`), when believable.
/// The database's store (`session_nodes.entry_json`) holds the same entries.
pub(super) fn window_of(entry: &Value) -> Option<u64> {
    entry.get("contextTokens").and_then(Value::as_u64).filter(|&w| w > 0 && w <= MAX_WINDOW)
}

#[cfg(test)]
#[path = "openclaw_store_tests.rs"]
mod tests;
