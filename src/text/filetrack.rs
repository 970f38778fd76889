//! File operations read from tool calls: which files the agent read and which it
//! modified (specs/002 "cumulative file-op tracking", pi `extractFileOpsFromMessage`).
//!
//! Tool names differ per agent; the classification and the path keys are those
//! of the one tool table ([`crate::tools`]).

use crate::tools::{self, PATH_KEYS, ToolKind};

use crate::model::{Block, Message};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Files read and modified. Sorted sets keep every rendering deterministic.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileOps {
    pub read: BTreeSet<String>,
    pub modified: BTreeSet<String>,
}

/// `into` ∪= `from`. A policy that carries file operations merges every path
/// the session has touched at each compaction, three times (the engine, the
/// summarizer, the summary back into the engine's set); inserting each path
/// (a copy, then a search of the tree, the copy dropped when the path was
/// there) made merging grow with the square of the session's length: 4 % of
/// the replay of a 1,600-turn session, 1 % at 400 turns. A few paths into
/// many are still inserted; otherwise `append` merges the two sorted sets in
/// one pass and builds the tree in bulk.
fn union_into(into: &mut BTreeSet<String>, from: &BTreeSet<String>) {
    if from.len() <= into.len() / 16 {
        for p in from {
            if !into.contains(p) {
                into.insert(p.clone());
            }
        }
        return;
    }
    into.append(&mut from.clone());
}

/// What a tool does to the files named in its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOpKind {
    Read,
    Modified,
}

impl FileOps {
    pub fn is_empty(&self) -> bool {
        self.read.is_empty() && self.modified.is_empty()
    }

    /// Union with another set of operations.
    pub fn merge(&mut self, other: &FileOps) {
        union_into(&mut self.read, &other.read);
        union_into(&mut self.modified, &other.modified);
    }

    /// Files only read (a file read and later modified counts as modified, as
    /// Opal's `merge_file_ops` and pi's `computeFileLists` do).
    pub fn read_only(&self) -> impl Iterator<Item = &str> {
        self.read.iter().filter(|p| !self.modified.contains(*p)).map(String::as_str)
    }

    pub fn add(&mut self, kind: FileOpKind, path: String) {
        match kind {
            FileOpKind::Read => self.read.insert(path),
            FileOpKind::Modified => self.modified.insert(path),
        };
    }

    /// Add the operations of every tool call in a message.
    pub fn add_message(&mut self, m: &Message) {
        for (kind, path) in message_file_ops(m) {
            self.add(kind, path);
        }
    }

    pub fn from_messages<'a>(messages: impl IntoIterator<Item = &'a Message>) -> FileOps {
        let mut ops = FileOps::default();
        for m in messages {
            ops.add_message(m);
        }
        ops
    }
}

/// The file operations of every tool call in a message, in order.
pub fn message_file_ops(m: &Message) -> impl Iterator<Item = (FileOpKind, String)> + '_ {
    m.blocks.iter().flat_map(|b| match b {
        Block::ToolUse { name, input, .. } => tool_file_ops(name, input),
        _ => Vec::new(),
    })
}

/// How a tool name touches files, when it is a file tool.
pub fn classify_tool(name: &str) -> Option<FileOpKind> {
    match tools::tool_kind(name) {
        ToolKind::Read => Some(FileOpKind::Read),
        k if k.writes() => Some(FileOpKind::Modified),
        _ => None,
    }
}

/// The file operations of one tool call.
pub fn tool_file_ops(name: &str, input: &serde_json::Value) -> Vec<(FileOpKind, String)> {
    let mut out = Vec::new();
    // A patch anywhere in the arguments (Codex `apply_patch`, or `shell` running it).
    let patch = find_patch(input);
    if let Some(p) = patch {
        out.extend(patch_paths(p).into_iter().map(|path| (FileOpKind::Modified, path)));
    }
    // Anthropic's text editor tool: `command` says whether it reads or writes.
    if tools::tool_kind(name) == ToolKind::Editor {
        let kind = if tools::modifies(name, input) { FileOpKind::Modified } else { FileOpKind::Read };
        if let Some(p) = path_arg(input) {
            out.push((kind, p));
        }
        return out;
    }
    let Some(kind) = classify_tool(name) else {
        return out;
    };
    if let Some(p) = path_arg(input) {
        out.push((kind, p));
    }
    if let Some(paths) = input.get("paths").and_then(|v| v.as_array()) {
        out.extend(paths.iter().filter_map(|p| p.as_str()).map(|p| (kind, p.to_string())));
    }
    // Cline/opencode multi-file edits carry a list of `{path}` objects.
    if let Some(edits) = input.get("edits").and_then(|v| v.as_array()) {
        out.extend(edits.iter().filter_map(path_arg).map(|p| (FileOpKind::Modified, p)));
    }
    out
}

fn path_arg(input: &serde_json::Value) -> Option<String> {
    PATH_KEYS.iter().find_map(|k| input.get(*k).and_then(|v| v.as_str())).filter(|p| !p.is_empty()).map(str::to_string)
}

/// The text of an `apply_patch` envelope in the arguments, if any.
fn find_patch(input: &serde_json::Value) -> Option<&str> {
    match input {
        serde_json::Value::String(s) if s.contains("*** Begin Patch") => Some(s),
        serde_json::Value::Array(a) => a.iter().find_map(find_patch),
        serde_json::Value::Object(o) => o.values().find_map(find_patch),
        _ => None,
    }
}

/// Paths named in an `apply_patch` envelope (`*** Update File: p`, …).
pub fn patch_paths(patch: &str) -> Vec<String> {
    const MARKERS: [&str; 4] = ["*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: "];
    patch
        .lines()
        .filter_map(|l| MARKERS.iter().find_map(|m| l.trim_start().strip_prefix(m)))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Paths from a small alphabet, so that two sets share some.
    fn paths(max: usize) -> impl Strategy<Value = BTreeSet<String>> {
        proptest::collection::btree_set("[ab/.é]{0,4}", 0..max)
    }

    proptest! {
        /// A merge is the union of the sets, whatever their sizes: empty
        /// ones, a few paths into many, and sets of like size.
        #[test]
        fn merge_is_the_union(
            read in paths(80), modified in paths(6), more_read in paths(6), more_modified in paths(80),
        ) {
            let mut ops = FileOps { read: read.clone(), modified: modified.clone() };
            let other = FileOps { read: more_read.clone(), modified: more_modified.clone() };
            ops.merge(&other);
            let union = |a: &BTreeSet<String>, b: &BTreeSet<String>| a.union(b).cloned().collect::<BTreeSet<_>>();
            prop_assert_eq!(&ops.read, &union(&read, &more_read));
            prop_assert_eq!(&ops.modified, &union(&modified, &more_modified));
            // And the other way round.
            let mut back = other.clone();
            back.merge(&FileOps { read: read.clone(), modified: modified.clone() });
            prop_assert_eq!(back, ops);
        }
    }

    #[test]
    fn classifies_tools_of_every_agent() {
        let cases = [
            ("Read", json!({"file_path": "/a.rs"}), Some((FileOpKind::Read, "/a.rs"))),
            ("Edit", json!({"file_path": "/b.rs", "old_string": "x"}), Some((FileOpKind::Modified, "/b.rs"))),
            ("write", json!({"path": "c.md"}), Some((FileOpKind::Modified, "c.md"))),
            ("read_file", json!({"absolute_path": "/d"}), Some((FileOpKind::Read, "/d"))),
            ("replace", json!({"file_path": "/e"}), Some((FileOpKind::Modified, "/e"))),
            ("write_to_file", json!({"path": "f"}), Some((FileOpKind::Modified, "f"))),
            ("edit", json!({"filePath": "g"}), Some((FileOpKind::Modified, "g"))),
            ("NotebookEdit", json!({"notebook_path": "n.ipynb"}), Some((FileOpKind::Modified, "n.ipynb"))),
            ("mcp__fs__read_file", json!({"path": "/m"}), Some((FileOpKind::Read, "/m"))),
            ("Bash", json!({"command": "ls"}), None),
        ];
        for (name, input, want) in cases {
            let got = tool_file_ops(name, &input);
            assert_eq!(got.first().map(|(k, p)| (*k, p.as_str())), want, "{name}");
        }
    }

    #[test]
    fn text_editor_view_is_a_read() {
        let ops = tool_file_ops("str_replace_based_edit_tool", &json!({"command": "view", "path": "/x"}));
        assert_eq!(ops, vec![(FileOpKind::Read, "/x".to_string())]);
        let ops = tool_file_ops("str_replace_based_edit_tool", &json!({"command": "str_replace", "path": "/x"}));
        assert_eq!(ops, vec![(FileOpKind::Modified, "/x".to_string())]);
    }

    #[test]
    fn apply_patch_inside_shell_arguments() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: src/b.rs\n+z\n*** End Patch";
        let ops = tool_file_ops("shell", &json!({"command": ["apply_patch", patch]}));
        assert_eq!(
            ops,
            vec![(FileOpKind::Modified, "src/a.rs".to_string()), (FileOpKind::Modified, "src/b.rs".to_string())]
        );
    }

    #[test]
    fn read_then_modified_is_modified_only() {
        let mut ops = FileOps::default();
        ops.add(FileOpKind::Read, "a".into());
        ops.add(FileOpKind::Read, "b".into());
        ops.add(FileOpKind::Modified, "a".into());
        assert_eq!(ops.read_only().collect::<Vec<_>>(), vec!["b"]);
    }
}
