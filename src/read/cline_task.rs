//! A Cline-format task folder read whole: the history with its sidecars, and
//! which agent wrote it (Roo Code and Kilo Code write Cline's folders too).

use super::cline_cache;
use super::{EXTENSIONS, HISTORY, ROO_CODE, read_history_bytes};
use crate::model::{Diagnostic, Session, Severity};
use crate::read::generic::str_of;
use crate::read::{parse_json, read_regular_file, strip_bom};
use serde_json::Value;
use std::path::Path;

/// Roo Code's record of a task, beside its history (newer versions).
pub(super) const HISTORY_ITEM: &str = "history_item.json";

/// Read a task folder. Errors only when the history file cannot be read.
/// Besides the history and the UI messages (read by
/// [`read_history_bytes`]), a folder may hold `task_metadata.json` (the
/// models used) and, from Roo Code, `history_item.json` (the workspace,
/// which is the task's working directory, and its title).
pub fn read_task_dir(dir: &Path) -> Result<Vec<Session>, Diagnostic> {
    let history = dir.join(HISTORY);
    let data = read_regular_file(&history).map_err(|e| Diagnostic {
        severity: Severity::Error,
        path: history.clone(),
        line: 0,
        message: format!("cannot read: {e}"),
    })?;
    let read = |name: &str| read_regular_file(&dir.join(name)).ok();
    let (ui, context) = (read("ui_messages.json"), read("context_history.json"));
    let mut sessions = read_history_bytes(dir, &data, ui.as_deref(), context.as_deref());
    if let Some(meta) = read("task_metadata.json")
        && let Ok(meta) = parse_json::<Value>(&meta)
    {
        let usage = meta.get("model_usage").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for s in &mut sessions {
            for u in usage {
                if let Some(m) = str_of(u, "model_id") {
                    s.meta.add_model(m);
                }
            }
            let providers = usage.iter().filter_map(|u| str_of(u, "model_provider_id"));
            cline_cache::warn_cache_in_input(s, dir, providers);
        }
    }
    let item = read(HISTORY_ITEM);
    let agent = agent_of(dir, item.is_some());
    let item = item.map(|bytes| parse_json::<Value>(strip_bom(&bytes)));
    for s in &mut sessions {
        if let Some(agent) = agent {
            s.meta.agent = agent.map(str::to_string);
        }
        match &item {
            Some(Ok(v)) => apply_history_item(s, v),
            Some(Err(_)) => s.diagnostics.warn(
                &dir.join(HISTORY_ITEM),
                0,
                "not valid JSON: the task's workspace and title are read from its history instead",
            ),
            None => {}
        }
    }
    Ok(sessions)
}

/// The agent that wrote the task folder at `dir`, when the folder says:
/// `Some(None)` for Cline, whose extension storage holds it; `Some(fork)`
/// for a fork's storage, or for Roo Code when the folder holds its
/// `history_item.json` (Cline writes none); `None` when it does not say (the
/// history's own tags may: [`read_history_bytes`]).
fn agent_of(dir: &Path, has_history_item: bool) -> Option<Option<&'static str>> {
    let by_storage = dir.ancestors().filter_map(Path::file_name).find_map(|name| {
        let name = name.to_string_lossy().to_ascii_lowercase();
        EXTENSIONS.iter().find(|e| name == e.id).map(|e| e.label)
    });
    by_storage.or(has_history_item.then_some(Some(ROO_CODE)))
}

/// What Roo Code's `history_item.json` adds: the workspace (the task's
/// working directory, in place of the one its environment details name) and
/// the title it gave the task.
fn apply_history_item(s: &mut Session, item: &Value) {
    let text = |k: &str| str_of(item, k).map(str::trim).filter(|t| !t.is_empty());
    if let Some(w) = text("workspace") {
        s.meta.cwd = Some(w.to_string());
    }
    if let Some(t) = text("title") {
        s.meta.title = Some(t.to_string());
    }
}
