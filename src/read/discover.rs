//! Input discovery: files, directories (recursive, knowing the agents' layouts),
//! globs, and `-` for standard input. Output order is sorted so runs are
//! deterministic.
//!
//! What a directory walk includes: `*.jsonl` and `*.json` session files (also
//! compressed: `.zst`, `.zstd`), and
//! session folders (a folder holding a format's marker file is one input, read
//! by that format). What it leaves out, on purpose: the files and folders the
//! formats name as no sessions (indexes, prompt histories, spilled tool
//! outputs), configuration files, and credentials (`auth.json` is never opened).

use super::format;
use crate::model::{Diagnostic, Format, Severity};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum InputKind {
    File,
    /// A folder that is one session of a format (a Cline task folder).
    Folder(Format),
    Stdin,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Input {
    pub path: PathBuf,
    pub kind: InputKind,
}

/// Expand user-given paths into inputs. Paths that match nothing are reported.
pub fn discover(paths: &[PathBuf]) -> (Vec<Input>, Vec<Diagnostic>) {
    let mut inputs = Vec::new();
    let mut problems = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            inputs.push(Input { path: PathBuf::from("<stdin>"), kind: InputKind::Stdin });
            continue;
        }
        if p.is_dir() {
            walk_dir(p, &mut inputs);
        } else if p.is_file() {
            // A folder's marker file given by itself stands for its folder.
            if let Some(f) = format::marker_format(p)
                && let Some(dir) = p.parent()
            {
                inputs.push(Input { path: dir.to_path_buf(), kind: InputKind::Folder(f) });
                continue;
            }
            inputs.push(Input { path: p.clone(), kind: InputKind::File });
        } else if is_glob(p) {
            let before = inputs.len();
            // An invalid pattern is reported once, as invalid.
            if expand_glob(p, &mut inputs, &mut problems) && inputs.len() == before {
                problems.push(problem(p, "the pattern matches no session file"));
            }
        } else if p.exists() {
            // A FIFO, socket or device: reading it could block or never end.
            problems.push(problem(p, "not a regular file or directory"));
        } else {
            problems.push(problem(p, "no such file or directory"));
        }
    }
    inputs.sort();
    inputs.dedup();
    (inputs, problems)
}

fn problem(p: &Path, msg: &str) -> Diagnostic {
    Diagnostic { severity: Severity::Error, path: p.to_path_buf(), line: 0, message: msg.to_string() }
}

fn is_glob(p: &Path) -> bool {
    p.to_string_lossy().contains(['*', '?', '[', '{'])
}

/// Whether a file found by a directory walk is a session log.
fn is_session_file(path: &Path) -> bool {
    // Lossy: a session file whose name is not UTF-8 is still a session file.
    let Some(name) = path.file_name().map(|n| n.to_string_lossy()) else { return false };
    // A compressed log is judged by the name it had before.
    let name = super::compressed::strip_suffix(&name).unwrap_or(&name);
    if !(name.ends_with(".jsonl") || name.ends_with(".json")) {
        return false;
    }
    // Credentials and configuration, whatever the agent; then what a format
    // names as its own non-session files.
    !matches!(name, "auth.json" | "settings.json" | "config.json" | "package.json") && !format::is_sidecar(name)
}

fn walk_dir(dir: &Path, inputs: &mut Vec<Input>) {
    let mut it = walkdir::WalkDir::new(dir).follow_links(false).sort_by_file_name().into_iter();
    while let Some(entry) = it.next() {
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        if entry.file_type().is_dir() {
            if entry.depth() > 0 && path.file_name().is_some_and(|n| format::is_skipped_dir(&n.to_string_lossy())) {
                it.skip_current_dir();
                continue;
            }
            if let Some(f) = format::folder_format(path) {
                inputs.push(Input { path: path.to_path_buf(), kind: InputKind::Folder(f) });
                it.skip_current_dir();
            }
            continue;
        }
        if entry.file_type().is_file() && is_session_file(path) {
            inputs.push(Input { path: path.to_path_buf(), kind: InputKind::File });
        }
    }
}

/// Expand a glob; false when the pattern is invalid (reported in `problems`).
fn expand_glob(pattern: &Path, inputs: &mut Vec<Input>, problems: &mut Vec<Diagnostic>) -> bool {
    let text = pattern.to_string_lossy().into_owned();
    let glob = match globset::GlobBuilder::new(&text).literal_separator(true).build() {
        Ok(g) => g.compile_matcher(),
        Err(e) => {
            problems.push(problem(pattern, &format!("invalid glob: {e}")));
            return false;
        }
    };
    // Walk from the longest leading part without glob characters.
    let mut base = PathBuf::new();
    for comp in pattern.components() {
        let s = comp.as_os_str().to_string_lossy();
        if s.contains(['*', '?', '[', '{']) {
            break;
        }
        base.push(comp);
    }
    if base.as_os_str().is_empty() {
        base = PathBuf::from(".");
    }
    let strip_dot = !text.starts_with("./") && base == Path::new(".");
    for entry in walkdir::WalkDir::new(&base).follow_links(false).sort_by_file_name().into_iter().flatten() {
        let path = entry.path();
        let candidate = if strip_dot { path.strip_prefix(".").unwrap_or(path) } else { path };
        if !glob.is_match(candidate) {
            continue;
        }
        if entry.file_type().is_dir() {
            walk_dir(path, inputs);
        } else if entry.file_type().is_file() {
            inputs.push(Input { path: path.to_path_buf(), kind: InputKind::File });
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_and_filters() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("proj/sess/subagents")).unwrap();
        std::fs::create_dir_all(d.join("proj/sess/tool-results")).unwrap();
        std::fs::create_dir_all(d.join("tasks/123")).unwrap();
        for f in [
            "proj/a.jsonl",
            "proj/agent-1234567.jsonl",
            "proj/sess/subagents/agent-abc.jsonl",
            "proj/sess/subagents/agent-abc.meta.json",
            "proj/sess/tool-results/toolu_1.jsonl",
            "auth.json",
            "history.jsonl",
            "tasks/123/api_conversation_history.json",
            "tasks/123/ui_messages.json",
            "notes.txt",
        ] {
            std::fs::write(d.join(f), "{}").unwrap();
        }
        let (inputs, problems) = discover(&[d.to_path_buf()]);
        assert!(problems.is_empty());
        let names: Vec<String> =
            inputs.iter().map(|i| i.path.strip_prefix(d).unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(
            names,
            ["proj/a.jsonl", "proj/agent-1234567.jsonl", "proj/sess/subagents/agent-abc.jsonl", "tasks/123"]
        );
        assert_eq!(inputs[3].kind, InputKind::Folder(Format::Cline));
    }

    #[test]
    fn globs_and_missing() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("x.jsonl"), "{}").unwrap();
        std::fs::write(d.join("y.json"), "{}").unwrap();
        let (inputs, problems) = discover(&[d.join("*.jsonl"), d.join("missing.jsonl"), d.join("*.none")]);
        assert_eq!(inputs.len(), 1);
        assert_eq!(problems.len(), 2);
        assert!(problems[0].message.contains("no such file"));
    }
}
