use super::read_task_dir;
use crate::model::Session;
use crate::testing::fixtures_dir;
use pretty_assertions::assert_eq;
use std::path::Path;

fn fixture(id: &str) -> Session {
    read_task_dir(&fixtures_dir().join("cline").join(id)).unwrap().remove(0)
}

/// A task folder at `dir` holding a one-exchange history whose environment
/// details name `env_dir`, and `history_item.json` when given.
fn write_task(dir: &Path, env_dir: &str, item: Option<&str>) {
    std::fs::create_dir_all(dir).unwrap();
    let history = serde_json::json!([
        {"role": "user", "content": [
            {"type": "text", "text": "<task>\nFix src/a.rs\n</task>"},
            {"type": "text", "text": format!("<environment_details>\n# Current Working Directory ({env_dir}) Files\nsrc/a.rs\n</environment_details>")}
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}
    ]);
    std::fs::write(dir.join("api_conversation_history.json"), history.to_string()).unwrap();
    if let Some(item) = item {
        std::fs::write(dir.join("history_item.json"), item).unwrap();
    }
}

fn read(dir: &Path) -> Session {
    read_task_dir(dir).unwrap().remove(0)
}

#[test]
fn roo_codes_workspace_line_names_the_working_directory() {
    // Roo Code writes `# Current Workspace Directory (DIR) Files`.
    assert_eq!(fixture("1730000600000").meta.cwd.as_deref(), Some("/home/dev/shop"));
    // Cline's own line still reads, and a directory may hold `)`.
    let tmp = tempfile::tempdir().unwrap();
    write_task(&tmp.path().join("t"), "/home/dev/a (copy)", None);
    assert_eq!(read(&tmp.path().join("t")).meta.cwd.as_deref(), Some("/home/dev/a (copy)"));
}

#[test]
fn history_item_gives_the_workspace_and_title() {
    let s = fixture("1730000700000");
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/notes"));
    assert_eq!(s.meta.title.as_deref(), Some("Sort notes by date"));
    // The item's workspace wins over the environment details'; blank fields are not read.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    write_task(&dir, "/old/place", Some(r#"{"workspace": "/home/dev/proj", "title": "  "}"#));
    let s = read(&dir);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/proj"));
    assert_eq!(s.meta.title, None);
    assert!(!s.diagnostics.messages.iter().any(|d| d.path.ends_with("history_item.json")));
    // An unreadable item is said, and the history's directory stands.
    write_task(&dir, "/old/place", Some("{not json"));
    let s = read(&dir);
    assert_eq!(s.meta.cwd.as_deref(), Some("/old/place"));
    let d = s.diagnostics.messages.iter().find(|d| d.path.ends_with("history_item.json")).expect("warned");
    assert!(d.message.contains("not valid JSON"), "{}", d.message);
}

#[test]
fn the_agent_is_named_where_a_fork_wrote_the_folder() {
    // A Cline task: no agent beyond the format's.
    assert_eq!(fixture("1730000000000").meta.agent, None);
    // Roo Code's tags, and its history item.
    assert_eq!(fixture("1730000600000").meta.agent.as_deref(), Some("roo-code"));
    assert_eq!(fixture("1730000700000").meta.agent.as_deref(), Some("roo-code"));
    // The extension storage that holds the folder names it, whatever else it holds.
    let tmp = tempfile::tempdir().unwrap();
    let storage = |id: &str| tmp.path().join("Code/User/globalStorage").join(id).join("tasks/1730000000001");
    let kilo = storage("kilocode.kilo-code");
    write_task(&kilo, "/p", Some("{}"));
    assert_eq!(read(&kilo).meta.agent.as_deref(), Some("kilo-code"));
    let roo = storage("RooVeterinaryInc.roo-cline");
    write_task(&roo, "/p", None);
    assert_eq!(read(&roo).meta.agent.as_deref(), Some("roo-code"));
    let cline = storage("saoudrizwan.claude-dev");
    write_task(&cline, "/p", Some("{}"));
    assert_eq!(read(&cline).meta.agent, None);
}
