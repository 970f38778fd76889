//! The `truncate` summarizer (specs/002 `:truncate`): no LLM, just what was
//! dropped — `[Compacted N messages: 3 assistant, 2 tool_result, 1 user]` followed
//! by `<read-files>` / `<modified-files>` tags. The floor every other summarizer
//! must beat.

use super::{SummarizeError, Summarizer, SummarizerUsage, Summary, SummaryRequest};
use crate::model::{Origin, Role};
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub struct Truncate;

impl Summarizer for Truncate {
    fn name(&self) -> &str {
        "truncate"
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        // Role frequencies, alphabetical like Elixir's `Enum.frequencies` over atoms.
        let mut roles: BTreeMap<&str, usize> = BTreeMap::new();
        for m in req.messages {
            let r = match (m.role, m.origin) {
                (Role::System, _) => "system",
                (Role::Assistant, _) => "assistant",
                (Role::User, Origin::ToolResult) => "tool_result",
                (Role::User, _) => "user",
            };
            *roles.entry(r).or_default() += 1;
        }
        let mut n = req.messages.len();
        if req.previous_summary.is_some() {
            // The previous summary was one of the compacted messages (a user one).
            *roles.entry("user").or_default() += 1;
            n += 1;
        }
        let role_str = roles.iter().map(|(r, c)| format!("{c} {r}")).collect::<Vec<_>>().join(", ");
        let mut text = format!("[Compacted {n} messages: {role_str}]");
        let read: Vec<&str> = req.file_ops.read_only().collect();
        if !read.is_empty() {
            let _ = write!(text, "\n\n<read-files>\n{}\n</read-files>", read.join("\n"));
        }
        if !req.file_ops.modified.is_empty() {
            let modified: Vec<&str> = req.file_ops.modified.iter().map(String::as_str).collect();
            let _ = write!(text, "\n\n<modified-files>\n{}\n</modified-files>", modified.join("\n"));
        }
        Ok(Summary { text, file_ops: req.file_ops.clone(), usage: SummarizerUsage::default(), fallback: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Block, Message};
    use crate::summarize::{InputLimits, SummaryPart};
    use crate::text::filetrack::{FileOpKind, FileOps};
    use crate::tokens::Chars4;

    #[test]
    fn role_counts_and_file_tags() {
        let msgs = [
            Message::new(Role::User, Origin::Human, vec![Block::text("do it")]),
            Message::new(Role::Assistant, Origin::Model, vec![Block::text("ok")]),
            Message::new(Role::User, Origin::ToolResult, vec![]),
            Message::new(Role::Assistant, Origin::Model, vec![Block::text("done")]),
        ];
        let refs: Vec<&Message> = msgs.iter().collect();
        let mut ops = FileOps::default();
        ops.add(FileOpKind::Read, "src/a.rs".into());
        ops.add(FileOpKind::Modified, "src/b.rs".into());
        let req = SummaryRequest {
            part: SummaryPart::History,
            messages: &refs,
            previous_summary: None,
            file_ops: &ops,
            max_tokens: 100,
            limits: InputLimits::default(),
            estimator: &Chars4,
            context: None,
        };
        let s = Truncate.summarize(&req).unwrap();
        assert_eq!(
            s.text,
            "[Compacted 4 messages: 2 assistant, 1 tool_result, 1 user]\n\n<read-files>\nsrc/a.rs\n</read-files>\n\n<modified-files>\nsrc/b.rs\n</modified-files>"
        );
        assert_eq!(s.usage.total(), 0);
    }
}
