//! One lens: the summarizer and the metric read a shell call into the same
//! command atoms, and the summarizer's summary is scored on what it collected.

use super::*;

/// One lens: a Codex `shell_command` (0.77, a `command` string) and an
/// `exec_command` (a `cmd` string) are commands for the summarizer, which
/// lists them with their outcome, and for the metric, which finds them
/// needed (run again later) and held by that summary.
#[test]
fn codex_shell_commands_are_collected_and_scored_alike() {
    use crate::model::{Block, Message, Origin, Role};
    use crate::summarize::{Extractive, InputLimits, Summarizer, SummaryPart, SummaryRequest};
    use crate::text::filetrack::FileOps;
    use crate::tokens::Chars4;
    use serde_json::json;
    let user = |t: &str| Message::new(Role::User, Origin::Human, vec![Block::text(t)]);
    let asst = |b: Vec<Block>| Message::new(Role::Assistant, Origin::Model, b);
    let tool =
        |id: &str, name: &str, input: serde_json::Value| Block::ToolUse { id: id.into(), name: name.into(), input };
    let result = |id: &str, t: &str, err: bool| {
        Message::new(
            Role::User,
            Origin::ToolResult,
            vec![Block::ToolResult { tool_use_id: id.into(), content: vec![Block::text(t)], is_error: Some(err) }],
        )
    };
    let msgs = vec![
        user("Run the parser tests and the linter."),
        asst(vec![tool("c1", "shell_command", json!({"command": "cargo test -p parser", "workdir": "/repo"}))]),
        result("c1", "test result: ok. 3 passed", false),
        asst(vec![tool("c2", "exec_command", json!({"cmd": "cargo clippy --all-targets", "workdir": "/repo"}))]),
        result("c2", "Finished", false),
        user("Run them again."),
        asst(vec![
            tool("c3", "shell_command", json!({"command": "cargo test -p parser"})),
            tool("c4", "exec_command", json!({"cmd": "cargo clippy --all-targets"})),
        ]),
    ];
    let refs: Vec<&Message> = msgs[..5].iter().collect();
    let ops = FileOps::default();
    let req = SummaryRequest {
        part: SummaryPart::History,
        messages: &refs,
        previous_summary: None,
        file_ops: &ops,
        max_tokens: 2_000,
        limits: InputLimits::default(),
        estimator: &Chars4,
        context: None,
    };
    let summary = match Extractive.summarize(&req) {
        Ok(s) => s.text,
        Err(e) => panic!("extractive: {e}"),
    };
    for c in ["cargo test -p parser", "cargo clippy --all-targets"] {
        assert!(summary.contains(c), "{c} not collected:\n{summary}");
    }
    let atoms = SessionAtoms::new(&msgs, Some("/repo"));
    let row = atoms.prepare(&CompactionPoint::new(0..5, 5..5, 5..msgs.len()), &Chars4).score("extractive", &summary);
    assert_eq!(row.needed_command, 2, "{row:?}");
    assert_eq!(row.recall_command, Some(1.0), "{row:?}");
    assert_eq!(row.hallucinated_atoms, 0, "{}", row.hallucinated);
}

/// One extraction: what the summarizer collects from a Codex `shell_command`
/// and a Claude `Bash` call and their results (identifiers, symbols,
/// commands, errors) is exactly what the metric extracts from them, as the
/// atoms the session's lens read once for both.
#[test]
fn the_summarizer_collects_exactly_the_metric_atoms_of_shell_calls() {
    use crate::text::atoms::SessionLens;
    let msgs = shell_session();
    let lens = SessionLens::new(&msgs, Some("/repo"));
    let summarizer = crate::summarize::extractive::collected(&lens);
    let reads = lens.blocks_read();
    let atoms = SessionAtoms::from_lens_of(&msgs, &lens);
    assert_eq!(lens.blocks_read(), reads, "the metric read the lens's atoms");
    // The metric's atoms that some message creates (strong), hashes spelled
    // as the summarizer prints them.
    let metric: std::collections::BTreeSet<String> = (0..atoms.atom_count())
        .filter(|&id| atoms.occ[id].iter().any(|o| o.flags & super::index::flag::STRONG != 0))
        .map(|id| {
            let v = &atoms.defs[id].key;
            if crate::text::atoms::is_hex_value(v) { v.to_ascii_lowercase() } else { v.to_string() }
        })
        .collect();
    assert!(metric.contains("cargo test -p parser --lib parse_header"), "{metric:?}");
    assert!(metric.contains("src/parser.rs"), "{metric:?}");
    assert!(metric.iter().any(|v| v.starts_with("ValueError")), "{metric:?}");
    assert_eq!(summarizer, metric);
}

/// A Codex `shell_command` and a Claude `Bash` call, with their results.
fn shell_session() -> Vec<crate::model::Message> {
    use crate::model::{Block, Message, Origin, Role};
    use serde_json::json;
    let asst = |b: Vec<Block>| Message::new(Role::Assistant, Origin::Model, b);
    let tool =
        |id: &str, name: &str, input: serde_json::Value| Block::ToolUse { id: id.into(), name: name.into(), input };
    let result = |id: &str, t: &str, err: Option<bool>| {
        Message::new(
            Role::User,
            Origin::ToolResult,
            vec![Block::ToolResult { tool_use_id: id.into(), content: vec![Block::text(t)], is_error: err }],
        )
    };
    vec![
        asst(vec![tool(
            "c1",
            "shell_command",
            json!({"command": "cargo test -p parser --lib parse_header && git show 1a2b3c4d", "workdir": "/repo"}),
        )]),
        result(
            "c1",
            "error[E0308]: mismatched types\n --> /repo/src/parser.rs:10:5\ncommit 1a2b3c4d5e6f\nProcess exited with code 101",
            None,
        ),
        asst(vec![tool(
            "t1",
            "Bash",
            json!({"command": "cd /repo && pytest -q tests/test_header.py -k header_bytes", "description": "Run the header tests"}),
        )]),
        result(
            "t1",
            "FAILED tests/test_header.py::test_header_bytes - ValueError: bad magic 0xCAFE\nexit code 1",
            Some(true),
        ),
    ]
}

/// The quality pass is the lens's last reader: it takes each message's atoms
/// out as it indexes them. The index is the one a keeping read builds, and no
/// block is read twice (what the summarizer read is taken, not read again).
#[test]
fn a_draining_index_is_the_keeping_one_and_reads_no_block_twice() {
    use crate::model::{Block, Format, Message, Origin, Role, Session};
    use crate::text::atoms::{SessionLens, session_reads_here as reads};
    let mut session = Session::new("s", Format::Codex, "s.jsonl");
    session.messages = shell_session();
    // A thinking block: the metric reads it, the summarizer never does.
    let thought = Block::Thinking { text: "Check `parse_header` in src/parser.rs first.".into(), opaque_len: 0 };
    session.messages.insert(0, Message::new(Role::Assistant, Origin::Model, vec![thought]));
    session.meta.cwd = Some("/repo".into());
    /// Each atom's key and its occurrences (message, block, flags).
    type Shape = Vec<(String, Vec<(u32, u32, u8)>)>;
    let shape = |a: &SessionAtoms<'_>| -> Shape {
        (0..a.atom_count())
            .map(|id| (a.defs[id].key.to_string(), a.occ[id].iter().map(|o| (o.msg, o.block, o.flags)).collect()))
            .collect()
    };

    let keeping = SessionLens::of(&session);
    let start = reads();
    let summary = crate::summarize::extractive::collected(&keeping);
    let kept = SessionAtoms::from_lens(&session, &keeping);
    let keeping_reads = reads() - start;
    assert_eq!(keeping.blocks_read(), keeping_reads, "every block read once, and kept");

    let draining = SessionLens::of(&session);
    let start = reads();
    assert_eq!(crate::summarize::extractive::collected(&draining), summary);
    let by_summarizer = reads() - start;
    assert!(by_summarizer > 0 && by_summarizer < keeping_reads, "the summarizer reads some blocks, not all");
    let drained = SessionAtoms::from_lens_draining(&session, draining);
    assert_eq!(reads() - start, keeping_reads, "no block read twice");
    assert!(!shape(&kept).is_empty());
    assert_eq!(shape(&drained), shape(&kept));
}
