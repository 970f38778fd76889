//! The words of the attachments Claude Code sends, kind by kind, and the
//! field-by-field rendering of what this reader does not know.

use super::attachment_blocks;
use crate::model::Block;
use serde_json::{Value, json};

fn text(att: Value) -> String {
    match attachment_blocks(Some(&att)).as_slice() {
        [Block::Text { text }] => text.clone(),
        other => panic!("one text block expected, got {other:?}"),
    }
}

#[test]
fn a_text_file_is_the_read_call_and_its_numbered_lines() {
    let att = json!({"type": "file", "filename": "/r/a.rs", "displayPath": "a.rs",
        "content": {"type": "text", "file": {"filePath": "/r/a.rs", "content": "fn a() {}\n}", "numLines": 2, "startLine": 7, "totalLines": 8}}});
    assert_eq!(
        text(att),
        "<system-reminder>\nCalled the Read tool with the following input: {\"file_path\":\"/r/a.rs\"}\n</system-reminder>\n\
         <system-reminder>\nResult of calling the Read tool:\n7\tfn a() {}\n8\t}\n</system-reminder>"
    );
}

#[test]
fn a_truncated_file_says_so_and_an_empty_one_warns() {
    let att = json!({"type": "file", "filename": "/r/big.txt", "truncated": true,
        "content": {"type": "text", "file": {"filePath": "/r/big.txt", "content": "x"}}});
    let t = text(att);
    assert!(t.ends_with("truncated to the first 2000 lines. Don't tell the user about this truncation. Use Read to read more of the file if you need.\n</system-reminder>"), "{t}");
    let att = json!({"type": "file", "filename": "/r/e.txt", "content": {"type": "text", "file": {"content": ""}}});
    assert!(text(att).contains("Result of calling the Read tool:\n<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"));
}

#[test]
fn an_image_file_is_its_call_and_the_image() {
    let att = json!({"type": "file", "filename": "/r/p.png",
        "content": {"type": "image", "file": {"base64": "QUJD", "type": "image/png", "originalSize": 3}}});
    let blocks = attachment_blocks(Some(&att));
    assert!(matches!(&blocks[1], Block::Image { media_type, bytes: 4 } if media_type == "image/png"));
    assert!(matches!(&blocks[0], Block::Text { text } if text.contains("{\"file_path\":\"/r/p.png\"}")));
}

#[test]
fn each_kind_in_its_own_words() {
    let cases = [
        (
            json!({"type": "edited_text_file", "filename": "src/s.ts", "snippet": "3\tlet a = 1;"}),
            "<system-reminder>\nNote: src/s.ts was modified, either by the user or by a linter.",
            "(shown with line numbers):\n3\tlet a = 1;\n</system-reminder>",
        ),
        (
            json!({"type": "skill_listing", "content": "- pdf: read PDFs", "skillCount": 1}),
            "<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n- pdf: read PDFs",
            "read PDFs\n</system-reminder>",
        ),
        (
            json!({"type": "deferred_tools_delta", "addedNames": ["WebFetch", "Agent"], "removedNames": []}),
            "<system-reminder>\nThe following deferred tools are now available via ToolSearch:\nAgent\nWebFetch",
            "WebFetch\n</system-reminder>",
        ),
        (
            json!({"type": "mcp_instructions_delta", "addedNames": ["t"], "addedBlocks": ["## t\nReply through the tool."]}),
            "<system-reminder>\n# MCP Server Instructions\n\n",
            "resources:\n\n## t\nReply through the tool.\n</system-reminder>",
        ),
        (
            json!({"type": "hook_additional_context", "hookName": "SessionStart", "content": ["branch main", "clean"]}),
            "<system-reminder>\nSessionStart hook additional context: branch main\nclean",
            "clean\n</system-reminder>",
        ),
        (
            json!({"type": "hook_success", "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit", "content": "ok"}),
            "<system-reminder>\nUserPromptSubmit hook success: ok",
            "ok\n</system-reminder>",
        ),
        (
            json!({"type": "queued_command", "prompt": "also the docs"}),
            "<system-reminder>\nThe user sent a new message while you were working:\nalso the docs\n\nIMPORTANT:",
            "Do not ignore it.\n</system-reminder>",
        ),
        (
            json!({"type": "queued_command", "prompt": "<task-notification>done</task-notification>", "commandMode": "task-notification"}),
            "<system-reminder>\nA background agent completed a task:\n<task-notification>",
            "</task-notification>\n</system-reminder>",
        ),
        (
            json!({"type": "todo_reminder", "content": [{"content": "Fix rounding", "status": "pending"}, {"content": "Ship", "status": "completed"}], "itemCount": 2}),
            "<system-reminder>\nThe TodoWrite tool hasn't been used recently.",
            "contents of your todo list:\n\n[1. [pending] Fix rounding\n2. [completed] Ship]\n</system-reminder>",
        ),
        (
            json!({"type": "plan_file_reference", "planFilePath": "/p/plan.md", "planContent": "# Plan"}),
            "<system-reminder>\nA plan file exists from plan mode at: /p/plan.md\n\nPlan contents:\n\n# Plan\n\n",
            "continue working on it.\n</system-reminder>",
        ),
        (
            json!({"type": "relevant_memories", "memories": [{"path": "/m/a.md", "content": "A", "header": "Memory (saved today): /m/a.md:"}, {"path": "/m/b.md", "content": "B"}]}),
            "<system-reminder>\nMemory (saved today): /m/a.md:\n\nA\n</system-reminder>\n<system-reminder>\nMemory: /m/b.md:\n\nB",
            "B\n</system-reminder>",
        ),
        (
            json!({"type": "invoked_skills", "skills": [{"name": "pdf", "path": "/s/pdf/SKILL.md", "content": "Use pdftotext."}]}),
            "<system-reminder>\nThe following skills were invoked in this session.",
            "### Skill: pdf\nPath: /s/pdf/SKILL.md\n\nUse pdftotext.\n</system-reminder>",
        ),
        (
            json!({"type": "selected_lines_in_ide", "filename": "/r/x.py", "lineStart": 1, "lineEnd": 2, "content": "print(1)"}),
            "<system-reminder>\nThe user selected the lines 1 to 2 from /r/x.py:\nprint(1)\n\n",
            "current task.\n</system-reminder>",
        ),
        (
            json!({"type": "date_change", "newDate": "2026-11-30"}),
            "<system-reminder>\nThe date has changed. Today's date is now 2026-11-30.",
            "already aware.\n</system-reminder>",
        ),
    ];
    for (att, head, tail) in cases {
        let t = text(att.clone());
        assert!(t.starts_with(head) && t.ends_with(tail), "{att}\n---\n{t}");
    }
}

#[test]
fn a_long_selection_is_cut_at_2000_characters() {
    let att = json!({"type": "selected_lines_in_ide", "filename": "f", "lineStart": 1, "lineEnd": 9, "content": "é".repeat(2500)});
    let t = text(att);
    assert!(t.contains(&format!("{}\n... (truncated)\n\nThis may", "é".repeat(2000))), "{t}");
}

#[test]
fn an_unknown_kind_or_shape_is_rendered_field_by_field() {
    let t = text(json!({"type": "brand_new_kind", "note": "hello", "n": 3, "gone": null}));
    assert_eq!(t, "[attachment: brand_new_kind]\nnote: hello\nn: 3");
    // A known kind whose fields are not where they were: every field, not a
    // template with holes.
    let t = text(json!({"type": "nested_memory", "path": "/r/CLAUDE.md", "content": {"text": "Use pnpm."}}));
    assert!(t.starts_with("[attachment: nested_memory]") && t.contains("Use pnpm."), "{t}");
    assert_eq!(attachment_blocks(None).len(), 1);
    assert_eq!(text(json!("not an object")), "[attachment]");
}

#[test]
fn a_first_line_number_near_the_top_of_the_range_does_not_overflow() {
    let att = json!({"type": "file", "filename": "f",
        "content": {"type": "text", "file": {"content": "a\nb", "startLine": u64::MAX}}});
    assert!(text(att).contains(&format!("{}\ta\n{}\tb", u64::MAX, u64::MAX)));
}

#[test]
fn a_delta_lists_what_came_and_what_went_and_nothing_when_empty() {
    let t = text(json!({"type": "deferred_tools_delta", "addedNames": ["B", "A"], "removedNames": ["C"]}));
    assert_eq!(
        t,
        "<system-reminder>\nThe following deferred tools are now available via ToolSearch:\nA\nB\n\n\
         The following deferred tools are no longer available (their MCP server disconnected). \
         Do not search for them — ToolSearch will return no match:\nC\n</system-reminder>"
    );
    let t = text(json!({"type": "mcp_instructions_delta", "removedNames": ["linear"]}));
    assert_eq!(
        t,
        "<system-reminder>\nThe following MCP servers have disconnected. Their instructions above no longer apply:\nlinear\n</system-reminder>"
    );
}

#[test]
fn a_hook_without_its_name_is_rendered_field_by_field() {
    let t = text(json!({"type": "hook_additional_context", "content": ["branch main"]}));
    assert_eq!(t, "[attachment: hook_additional_context]\ncontent: [\"branch main\"]");
}
