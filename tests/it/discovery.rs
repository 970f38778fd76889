//! With no path, compactor reads every agent's logs where that agent keeps
//! them: a fake `$HOME` holds each agent's layout (and the files next to the
//! sessions that are none), the run says where it looked and what it found,
//! and the variables that move an agent's folders move where it looks.

// clippy's allow-unwrap-in-tests covers #[test] functions, not their helpers.
#![allow(clippy::unwrap_used)]

use assert_cmd::cargo::cargo_bin_cmd;
use std::path::Path;

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(rel)
}

fn put(dst: &Path, src: &str) {
    std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
    std::fs::copy(fixture(src), dst).unwrap();
}

fn put_text(dst: &Path, text: &str) {
    std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
    std::fs::write(dst, text).unwrap();
}

/// Each agent's sessions where it keeps them under `home` (`config`: the
/// per-user application folder of the OS, `~/.config` on Linux), with the
/// files around them that are no session.
fn lay_out(home: &Path, claude: &Path, codex: &Path, pi: &Path, openclaw: &Path, gemini: &Path, cline: &Path) {
    let _ = home;
    put(
        &claude.join("projects/-home-dev-auth-svc/5b1c0e4a-2f3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl"),
        "claude-code/compaction-v1.jsonl",
    );
    put(&codex.join("sessions/2025/07/01/rollout-2025-07-01T10-00-00-0197c0de.jsonl"), "codex/compacted.jsonl");
    put_text(&codex.join("history.jsonl"), "{\"session_id\":\"x\",\"ts\":1,\"text\":\"hi\"}\n");
    put(&pi.join("--home-dev-x--/2025-07-01T10-00-00-000Z_0197.jsonl"), "pi/v1-compaction.jsonl");
    let sessions = openclaw.join("agents/main/sessions");
    put(&sessions.join("0198.jsonl"), "pi/v3-tree.jsonl");
    // The store, a checkpoint (a copy of the session) and a trajectory: no session.
    put_text(
        &sessions.join("sessions.json"),
        r#"{"agent:main:main": {"sessionId": "0198", "updatedAt": 1751364000000, "contextTokens": 150000}}"#,
    );
    put(&sessions.join("0198.checkpoint.4c2e.jsonl"), "pi/v3-tree.jsonl");
    put_text(&sessions.join("0198.trajectory.jsonl"), "{\"kind\":\"step\"}\n");
    let project = gemini.join("tmp/auth-svc");
    put(&project.join("chats/session-2025-07-01T10-00-abcd1234.json"), "gemini/session-failed-tool.json");
    put_text(&project.join("logs.json"), "[]");
    put_text(&project.join("checkpoint-before-refactor.json"), "[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}]");
    let task = cline.join("tasks/1730000000000");
    for f in ["api_conversation_history.json", "task_metadata.json", "ui_messages.json"] {
        put(&task.join(f), &format!("cline/1730000000000/{f}"));
    }
}

/// Each agent's sessions in its default places under `home` (Linux).
fn lay_out_at_home(h: &Path) {
    let cline = h.join(".config/Code/User/globalStorage/saoudrizwan.claude-dev");
    lay_out(
        h,
        &h.join(".claude"),
        &h.join(".codex"),
        &h.join(".pi/agent/sessions"),
        &h.join(".openclaw"),
        &h.join(".gemini"),
        &cline,
    );
}

/// `compactor inspect --json` with no path, in a clean environment.
fn inspect(home: &Path, vars: &[(&str, &Path)]) -> (serde_json::Value, String) {
    let mut cmd = cargo_bin_cmd!("compactor");
    cmd.env_clear().env("HOME", home).args(["inspect", "--json"]);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    (serde_json::from_slice(&o.stdout).unwrap(), stderr)
}

/// Sessions per format, and every source path.
fn found(json: &serde_json::Value) -> (std::collections::BTreeMap<String, usize>, Vec<String>) {
    let mut by = std::collections::BTreeMap::new();
    let mut paths = Vec::new();
    for s in json["sessions"].as_array().unwrap() {
        *by.entry(s["format"].as_str().unwrap().to_string()).or_insert(0) += 1;
        paths.push(s["source_path"].as_str().unwrap().to_string());
    }
    (by, paths)
}

fn expected() -> std::collections::BTreeMap<String, usize> {
    [("claude-code", 1), ("codex", 1), ("pi", 2), ("gemini", 1), ("cline", 1)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

#[test]
fn every_agent_is_found_where_it_keeps_its_logs() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    lay_out_at_home(h);
    let (json, stderr) = inspect(h, &[]);
    let (by, paths) = found(&json);
    assert_eq!(by, expected(), "{paths:#?}");
    assert!(paths.iter().all(|p| !p.contains("checkpoint") && !p.contains("trajectory")), "{paths:#?}");
    // Where it looked, and what it found there.
    for line in [
        "no path given: read the agents' logs where they keep them",
        "Claude Code  ~/.claude/projects",
        "Codex CLI    ~/.codex/sessions",
        "pi           ~/.pi/agent/sessions",
        "OpenClaw     ~/.openclaw/agents",
        "Gemini CLI   ~/.gemini/tmp",
        "Cline        ~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks",
    ] {
        assert!(stderr.contains(line), "no `{line}` in:\n{stderr}");
    }
    let row = |needle: &str| stderr.lines().find(|l| l.contains(needle)).unwrap_or_default().to_string();
    assert!(row("~/.claude/projects").ends_with("1 session file(s)"), "{stderr}");
    assert!(row("~/.openclaw/agents").ends_with("1 session file(s)"), "{stderr}");
    // A missing place of an agent found elsewhere is not listed (-v lists
    // every place): the agent is not said to have nothing.
    assert!(!stderr.contains("~/.codex/archived_sessions") && !stderr.contains("~/.cline/data/tasks"), "{stderr}");
    // Only the agents laid out nowhere (Cline's forks) are said to have nothing.
    assert!(stderr.contains("  nothing where Roo Code, Kilo Code keep theirs"), "{stderr}");
    // Agents with no place at all are named, on one line.
    let only_claude = tempfile::tempdir().unwrap();
    put(&only_claude.path().join(".claude/projects/p1/s.jsonl"), "claude-code/compaction.jsonl");
    let (_, stderr) = inspect(only_claude.path(), &[]);
    let line = stderr.lines().find(|l| l.contains("nothing where")).unwrap_or_default();
    assert!(line.contains("Codex CLI, pi, OpenClaw, Gemini CLI, Cline, Roo Code, Kilo Code keep theirs"), "{stderr}");
    assert!(!line.contains("Claude Code"), "{stderr}");
    // --quiet says nothing of it.
    let o = cargo_bin_cmd!("compactor").env_clear().env("HOME", h).args(["inspect", "--quiet"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("no path given"));
}

#[test]
fn the_agents_variables_move_where_it_looks() {
    let home = tempfile::tempdir().unwrap();
    let (h, elsewhere) = (home.path().join("home"), home.path().join("elsewhere"));
    std::fs::create_dir_all(&h).unwrap();
    let e = |d: &str| elsewhere.join(d);
    // Moved: ~/.claude, ~/.codex, ~/.pi/agent, the OpenClaw state, the home
    // Gemini puts .gemini in, ~/.config (the standalone Cline's ~/.cline stays).
    lay_out(
        &h,
        &e("claude"),
        &e("codex"),
        &e("pi/sessions"),
        &e("openclaw"),
        &e("gemini-home/.gemini"),
        &e("xdg/Code/User/globalStorage/saoudrizwan.claude-dev"),
    );
    let vars: Vec<(&str, std::path::PathBuf)> = vec![
        ("CLAUDE_CONFIG_DIR", e("claude")),
        ("CODEX_HOME", e("codex")),
        ("PI_CODING_AGENT_DIR", e("pi")),
        ("OPENCLAW_STATE_DIR", e("openclaw")),
        ("GEMINI_CLI_HOME", e("gemini-home")),
        ("XDG_CONFIG_HOME", e("xdg")),
    ];
    let refs: Vec<(&str, &Path)> = vars.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let (json, stderr) = inspect(&h, &refs);
    let (by, paths) = found(&json);
    assert_eq!(by, expected(), "{paths:#?}\n{stderr}");
    assert!(paths.iter().all(|p| p.starts_with(&elsewhere.display().to_string())), "{paths:#?}");
    // Nothing set: nothing found at home, and the error lists where it looked.
    let o = cargo_bin_cmd!("compactor").env_clear().env("HOME", &h).arg("inspect").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no input") && err.contains("~/.claude/projects") && err.contains("~/.gemini/tmp"), "{err}");
}

/// OpenClaw under a former name when only that one exists, and pi's
/// sessions where its settings put them.
#[test]
fn former_openclaw_folders_and_pi_settings() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    put(&h.join(".clawdbot/agents/main/sessions/0198.jsonl"), "pi/v3-tree.jsonl");
    put_text(&h.join(".pi/agent/settings.json"), "{\"sessionDir\": \"~/pi-logs\"}");
    put(&h.join("pi-logs/0197.jsonl"), "pi/v1-compaction.jsonl");
    let (json, stderr) = inspect(h, &[]);
    let (by, paths) = found(&json);
    assert_eq!(by.get("pi"), Some(&2), "{paths:#?}\n{stderr}");
    assert!(
        stderr.contains("OpenClaw     ~/.clawdbot/agents") && stderr.contains("pi           ~/pi-logs"),
        "{stderr}"
    );
}

/// OpenClaw 2026.8 and later keep an agent's sessions in one SQLite database
/// and write no JSONL: with no path, that database is found and read.
#[test]
fn an_openclaw_database_is_found_where_openclaw_keeps_it() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let agent = h.join(".openclaw/agents/main/agent");
    put(&agent.join("openclaw-agent.sqlite"), "pi/openclaw/agents/main/agent/openclaw-agent.sqlite");
    // What else OpenClaw keeps there is no session.
    put_text(&agent.join("models.json"), "{\"providers\":{}}");
    // The JSONL sessions its move to SQLite imported, archived: copies of rows
    // of the database.
    put(&h.join(".openclaw/agents/main/session-sqlite-import-archive/0198.jsonl"), "pi/v3-tree.jsonl");
    let (json, stderr) = inspect(h, &[]);
    let (by, paths) = found(&json);
    assert_eq!(by, [("pi".to_string(), 2)].into_iter().collect(), "{stderr}");
    assert!(paths.iter().all(|p| p.ends_with("agents/main/agent/openclaw-agent.sqlite")), "{paths:#?}");
    let row = stderr.lines().find(|l| l.contains("~/.openclaw/agents")).unwrap_or_default();
    assert!(row.starts_with("  OpenClaw") && row.ends_with("1 session file(s)"), "{stderr}");
    let names: Vec<String> =
        std::fs::read_dir(&agent).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names.len(), 2, "nothing written beside the database: {names:?}");
}

/// An OpenClaw session found where OpenClaw keeps it runs at the window its
/// session store records for it (`contextTokens`), reported as the log's own;
/// the pi session beside it, with no store, at its model's or the default.
#[test]
fn an_openclaw_session_runs_at_the_window_its_store_records() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    lay_out_at_home(h);
    let out = h.join("out");
    let o = cargo_bin_cmd!("compactor")
        .env_clear()
        .env("HOME", h)
        .args(["replay", "--preset", "default", "--no-quality", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("sessions.csv")).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let col = |c: &str| h.iter().position(|x| x == c).unwrap();
    let (src, w, ws) = (col("source_path"), col("context_window"), col("window_source"));
    let rows: Vec<(String, String, String)> =
        r.records().map(|x| x.unwrap()).map(|x| (x[src].to_string(), x[w].to_string(), x[ws].to_string())).collect();
    let openclaw: Vec<_> = rows.iter().filter(|r| r.0.contains(".openclaw")).collect();
    assert!(!openclaw.is_empty(), "{rows:#?}");
    assert!(openclaw.iter().all(|r| r.1 == "150000" && r.2 == "log"), "{openclaw:#?}");
    let pi: Vec<_> = rows.iter().filter(|r| r.0.contains(".pi/")).collect();
    assert!(!pi.is_empty() && pi.iter().all(|r| r.2 != "log"), "{pi:#?}");
}

/// Roo Code's and Kilo Code's tasks, Cline's folders under their own
/// extension ids, are found in every editor's storage and read as Cline's.
#[test]
fn roo_code_and_kilo_code_tasks_are_found_where_their_editors_keep_them() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let storage = h.join(".config/Cursor/User/globalStorage");
    for (id, task) in [("rooveterinaryinc.roo-cline", "1740000000000"), ("kilocode.kilo-code", "1750000000000")] {
        for f in ["api_conversation_history.json", "task_metadata.json", "ui_messages.json"] {
            put(&storage.join(id).join("tasks").join(task).join(f), &format!("cline/1730000000000/{f}"));
        }
    }
    let (json, stderr) = inspect(h, &[]);
    let (by, paths) = found(&json);
    assert_eq!(by.get("cline"), Some(&2), "{paths:#?}");
    for row in [
        "Roo Code     ~/.config/Cursor/User/globalStorage/rooveterinaryinc.roo-cline/tasks",
        "Kilo Code    ~/.config/Cursor/User/globalStorage/kilocode.kilo-code/tasks",
    ] {
        let line = stderr.lines().find(|l| l.contains(row)).unwrap_or_default();
        assert!(line.ends_with("1 session file(s)"), "no `{row}` with its session in:\n{stderr}");
    }
    let line = stderr.lines().find(|l| l.contains("nothing where")).unwrap_or_default();
    assert!(!line.contains("Roo Code") && !line.contains("Kilo Code") && line.contains("Cline"), "{stderr}");
}
