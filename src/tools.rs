//! The one table of tool names: what each agent's tools do (read, edit, run a
//! command…) and where they keep a path or a command, for readers, file tracking,
//! the summarizer and the metric alike, so that none of them can disagree.
//!
//! Names checked against the agents' own tool definitions: Claude Code's tool list
//! (Read, Edit, MultiEdit, Write, NotebookEdit, Bash, Grep, Glob, LS, WebFetch,
//! WebSearch, Task, later Agent, TodoWrite); Codex CLI `codex-rs/core/src/tools/spec.rs`
//! (`shell` 0.40 with an argv `command`, `shell_command` 0.77, `exec_command` with
//! `cmd`, `local_shell`, `unified_exec`, `apply_patch` with `input`, `read_file`,
//! `list_dir` with `dir_path`, `grep_files`, `update_plan`, `view_image`); pi
//! (`read`, `edit`, `write`, `bash`, `grep`, `find`, `ls`); Gemini CLI
//! `docs/tools/file-system.md` (`read_file` with `absolute_path`, `read_many_files`,
//! `write_file`, `replace`, `run_shell_command`, `search_file_content` renamed
//! `grep_search`, `glob`, `list_directory`, `web_fetch`, `google_web_search`,
//! `write_todos`; `packages/core/src/tools/tool-names.ts`); OpenClaw (pi's tools
//! plus `exec`, its shell, with `command`); Cline `ToolExecutor.ts`
//! (`read_file`, `write_to_file`, `replace_in_file`, `execute_command`,
//! `search_files`, `list_files`, `list_code_definition_names`, `browser_action`).

/// What a tool does, whatever an agent calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Reads one or more files.
    Read,
    /// Changes part of a file (edit, replace, patch).
    Edit,
    /// Writes, creates, moves or deletes a whole file.
    Write,
    /// Anthropic's text editor: its `command` argument says read (`view`) or write.
    Editor,
    /// Runs a shell command.
    Command,
    /// Searches file contents or names.
    Search,
    /// Lists a directory.
    List,
    /// Fetches or searches the web.
    Fetch,
    /// Starts a sub-agent.
    Task,
    /// Updates the agent's plan or todo list.
    Plan,
    /// Anything else (MCP tools, questions to the user…).
    Other,
}

impl ToolKind {
    /// Does a call of this kind modify the files named in its arguments?
    /// (An editor call does unless its command is `view`: see [`modifies`].)
    pub fn writes(self) -> bool {
        matches!(self, ToolKind::Edit | ToolKind::Write)
    }
}

/// Agents that use a name (bits), for the few readers that keep a name per agent.
const CLAUDE: u8 = 1;
const CODEX: u8 = 2;
const PI: u8 = 4;
const GEMINI: u8 = 8;
const CLINE: u8 = 16;
/// Other agents and editors (opencode, Roo, Cursor, Anthropic's editor tool…).
const OTHER: u8 = 32;

/// Every known tool name, lower-cased, with its kind and the agents using it.
const TOOLS: &[(&str, ToolKind, u8)] = {
    use ToolKind::*;
    &[
        // Reads.
        ("read", Read, CLAUDE | PI | OTHER),
        ("read_file", Read, CODEX | GEMINI | CLINE | OTHER),
        ("readfile", Read, OTHER),
        ("read_many_files", Read, GEMINI),
        ("read_text_file", Read, OTHER),
        ("notebookread", Read, CLAUDE),
        ("view", Read, OTHER),
        ("view_file", Read, OTHER),
        ("open_file", Read, OTHER),
        ("cat", Read, OTHER),
        ("get_file_contents", Read, OTHER),
        ("view_image", Other, CODEX),
        // Edits.
        ("edit", Edit, CLAUDE | PI | OTHER),
        ("multiedit", Edit, CLAUDE),
        ("multi_edit", Edit, OTHER),
        ("notebookedit", Edit, CLAUDE),
        ("edit_notebook", Edit, OTHER),
        ("replace", Edit, GEMINI),
        ("replace_in_file", Edit, CLINE),
        ("edit_file", Edit, OTHER),
        ("apply_diff", Edit, OTHER),
        ("insert_content", Edit, OTHER),
        ("search_replace", Edit, OTHER),
        ("str_replace", Edit, OTHER),
        ("insert", Edit, OTHER),
        ("apply_patch", Edit, CODEX),
        ("patch", Edit, OTHER),
        // `codex exec --json` reports a patch as a `file_change` item.
        ("file_change", Edit, CODEX),
        // Writes.
        ("write", Write, CLAUDE | PI | OTHER),
        ("write_file", Write, GEMINI | OTHER),
        ("write_to_file", Write, CLINE),
        ("create_file", Write, OTHER),
        ("delete_file", Write, OTHER),
        ("move_file", Write, OTHER),
        // Anthropic's text editor tool (every version's name).
        ("str_replace_editor", Editor, OTHER),
        ("str_replace_based_edit_tool", Editor, OTHER),
        ("text_editor", Editor, OTHER),
        // Shell commands.
        ("bash", Command, CLAUDE | PI | OTHER),
        ("shell", Command, CODEX),
        ("shell_command", Command, CODEX),
        ("exec_command", Command, CODEX),
        ("local_shell", Command, CODEX),
        ("unified_exec", Command, CODEX),
        ("container.exec", Command, CODEX),
        // `codex exec --json` reports a command as a `command_execution` item.
        ("command_execution", Command, CODEX),
        ("run_shell_command", Command, GEMINI),
        // OpenClaw's shell (`process` only polls or kills what it started).
        ("exec", Command, OTHER),
        ("execute_command", Command, CLINE),
        ("run_command", Command, OTHER),
        ("run_terminal_cmd", Command, OTHER),
        ("terminal", Command, OTHER),
        ("command", Command, OTHER),
        // Searches.
        ("grep", Search, CLAUDE | PI),
        ("glob", Search, CLAUDE | GEMINI),
        ("find", Search, PI),
        ("grep_files", Search, CODEX),
        ("search_file_content", Search, GEMINI),
        ("grep_search", Search, GEMINI),
        ("search_files", Search, CLINE),
        ("list_code_definition_names", Search, CLINE),
        // Listings.
        ("ls", List, CLAUDE | PI),
        ("list_dir", List, CODEX),
        ("list_directory", List, GEMINI),
        ("list_files", List, CLINE),
        // The web.
        ("webfetch", Fetch, CLAUDE),
        ("websearch", Fetch, CLAUDE),
        ("web_fetch", Fetch, GEMINI),
        ("google_web_search", Fetch, GEMINI),
        ("web_search", Fetch, CODEX),
        ("browser_action", Fetch, CLINE),
        // Sub-agents and plans.
        ("task", Task, CLAUDE),
        ("agent", Task, CLAUDE),
        ("todowrite", Plan, CLAUDE),
        ("update_plan", Plan, CODEX),
        ("write_todos", Plan, GEMINI),
    ]
};

/// Argument keys that hold one path, in the order they are looked at.
pub const PATH_KEYS: &[&str] = &[
    "file_path",
    "filepath",
    "filePath",
    "path",
    "notebook_path",
    "absolute_path",
    "filename",
    "file",
    "target_file",
    "dir_path",
    "directory",
    "relative_workspace_path",
    "target_directory",
    "source",
    "destination",
];
/// Argument keys that hold a list of paths.
pub const PATHS_KEYS: &[&str] = &["paths", "file_paths", "files", "absolute_paths"];
/// Argument keys that hold a shell command (a string or an argv array).
pub const COMMAND_KEYS: &[&str] = &["command", "cmd", "commands", "script"];

/// A tool name without an MCP `server__` prefix.
fn base_name(name: &str) -> &str {
    name.rsplit("__").next().unwrap_or(name)
}

fn entry(name: &str) -> Option<&'static (&'static str, ToolKind, u8)> {
    let base = base_name(name);
    TOOLS.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(base))
}

/// The kind of a tool, by its name in any agent's spelling (case-insensitive,
/// MCP prefix ignored).
pub fn tool_kind(name: &str) -> ToolKind {
    entry(name).map_or(ToolKind::Other, |e| e.1)
}

/// Does this call modify the files its arguments name? An editor call does
/// unless its `command` is `view`.
pub fn modifies(name: &str, input: &serde_json::Value) -> bool {
    match tool_kind(name) {
        ToolKind::Editor => input.get("command").and_then(serde_json::Value::as_str).is_some_and(|c| c != "view"),
        k => k.writes(),
    }
}

/// Does this tool run a shell command?
pub fn is_command(name: &str) -> bool {
    tool_kind(name) == ToolKind::Command
}

/// The one name of a Codex tool across Codex versions and formats, for metrics
/// that must not split one tool into several: every Codex shell variant is
/// `shell`, a `file_change` is `apply_patch`. Other names pass through.
pub fn codex_canonical(name: &str) -> &str {
    match TOOLS.iter().find(|(n, _, _)| *n == name) {
        Some((_, ToolKind::Command, agents)) if agents & CODEX != 0 => "shell",
        Some(("file_change", _, _)) => "apply_patch",
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_lower_case_and_listed_once() {
        for (i, (n, _, _)) in TOOLS.iter().enumerate() {
            assert_eq!(*n, n.to_ascii_lowercase(), "{n}");
            assert!(TOOLS[..i].iter().all(|(m, _, _)| m != n), "{n} listed twice");
        }
    }

    #[test]
    fn every_agents_shell_is_a_command() {
        for n in ["Bash", "bash", "shell", "shell_command", "exec_command", "local_shell", "unified_exec"] {
            assert!(is_command(n), "{n}");
        }
        for n in ["container.exec", "run_shell_command", "execute_command", "mcp__x__run_terminal_cmd", "exec"] {
            assert!(is_command(n), "{n}");
        }
        assert!(!is_command("Read"));
        assert!(!is_command("process"), "OpenClaw's process polls a command exec started");
    }

    #[test]
    fn renamed_tools_keep_their_kind() {
        assert_eq!(tool_kind("Agent"), tool_kind("Task"));
        assert_eq!(tool_kind("grep_search"), tool_kind("search_file_content"));
        assert_eq!(tool_kind("write_todos"), ToolKind::Plan);
    }

    #[test]
    fn codex_names_fold_as_before() {
        for n in ["shell", "shell_command", "exec_command", "local_shell", "container.exec", "unified_exec"] {
            assert_eq!(codex_canonical(n), "shell");
        }
        assert_eq!(codex_canonical("command_execution"), "shell");
        assert_eq!(codex_canonical("file_change"), "apply_patch");
        assert_eq!(codex_canonical("bash"), "bash");
        assert_eq!(codex_canonical("update_plan"), "update_plan");
    }
}
