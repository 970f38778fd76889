//! A team's own summary prompt (`compact.llm.prompt_file`,
//! `compact.llm.update_prompt_file`): Markdown with `{conversation}`,
//! `{previous_summary}` and `{budget_tokens}` placeholders, so a prompt change
//! can be gated by `compactor check` like a code change.

use super::prompt::{PromptPair, SUMMARIZER_ROLE};
use std::path::Path;

/// The placeholders a prompt file may hold.
pub const PLACEHOLDERS: [&str; 3] = ["{conversation}", "{previous_summary}", "{budget_tokens}"];

/// The two prompts, read once per run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptFiles {
    /// For the first summary of a session.
    pub first: String,
    /// For a summary that updates the previous one.
    pub update: String,
    /// blake3 of both texts: part of every cached answer's key (through the
    /// request) and of a baseline's run settings.
    pub hash: String,
}

impl PromptFiles {
    /// Read `first` and `update` (`first` when not given). Each must hold
    /// `{conversation}`, and the update prompt `{previous_summary}` too: a
    /// prompt without them would summarize nothing, or lose the summary so far.
    pub fn read(first: &Path, update: Option<&Path>) -> Result<PromptFiles, String> {
        let load =
            |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("cannot read prompt file {}: {e}", p.display()));
        let first_text = load(first)?;
        let update_text = match update {
            Some(u) => load(u)?,
            None => first_text.clone(),
        };
        for (text, path) in [(&first_text, first), (&update_text, update.unwrap_or(first))] {
            if !text.contains("{conversation}") {
                return Err(format!("prompt file {} has no {{conversation}} placeholder", path.display()));
            }
        }
        if update.is_some() && !update_text.contains("{previous_summary}") {
            let path = update.unwrap_or(first);
            return Err(format!(
                "update prompt file {} has no {{previous_summary}} placeholder: the summary so far would be lost",
                path.display()
            ));
        }
        let mut h = blake3::Hasher::new();
        for t in [&first_text, &update_text] {
            h.update(&(t.len() as u64).to_le_bytes());
            h.update(t.as_bytes());
        }
        Ok(PromptFiles { first: first_text, update: update_text, hash: h.finalize().to_hex().to_string() })
    }

    /// The request for `transcript`: the update prompt when there is a summary
    /// so far. With one prompt file for both, a previous summary the file does
    /// not place is put before the conversation, so it is never lost.
    pub fn render(&self, transcript: &str, previous: Option<&str>, budget_tokens: u32) -> PromptPair {
        let template = if previous.is_some() { &self.update } else { &self.first };
        let conversation = format!("<conversation>\n{transcript}\n</conversation>");
        let mut user = template
            .replace("{previous_summary}", previous.unwrap_or(""))
            .replace("{budget_tokens}", &budget_tokens.to_string());
        if let Some(prev) = previous
            && !template.contains("{previous_summary}")
        {
            user = format!("<previous-summary>\n{prev}\n</previous-summary>\n\n{user}");
        }
        // Last, so a transcript that happens to hold a placeholder is left as it is.
        let user = user.replace("{conversation}", &conversation);
        PromptPair { system: SUMMARIZER_ROLE.to_string(), user }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_required() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("p.md");
        std::fs::write(&first, "Keep every path. Budget {budget_tokens}.\n{conversation}").unwrap();
        let p = PromptFiles::read(&first, None).unwrap();
        let r = p.render("[User]: fix src/a.rs {budget_tokens}", None, 300);
        assert_eq!(
            r.user,
            "Keep every path. Budget 300.\n<conversation>\n[User]: fix src/a.rs {budget_tokens}\n</conversation>"
        );
        // One file for both: the summary so far is put first.
        let r = p.render("x", Some("SO FAR"), 300);
        assert!(r.user.starts_with("<previous-summary>\nSO FAR\n"), "{}", r.user);

        let update = dir.path().join("u.md");
        std::fs::write(&update, "Update {previous_summary} with {conversation}").unwrap();
        let both = PromptFiles::read(&first, Some(&update)).unwrap();
        assert_eq!(both.render("x", Some("S"), 1).user, "Update S with <conversation>\nx\n</conversation>");
        assert_ne!(both.hash, p.hash, "the hash covers both files");

        std::fs::write(&update, "Update with {conversation}").unwrap();
        let e = PromptFiles::read(&first, Some(&update)).unwrap_err();
        assert!(e.contains("{previous_summary}"), "{e}");
        std::fs::write(&first, "no placeholder").unwrap();
        let e = PromptFiles::read(&first, None).unwrap_err();
        assert!(e.contains("p.md") && e.contains("{conversation}"), "{e}");
        let e = PromptFiles::read(&dir.path().join("missing.md"), None).unwrap_err();
        assert!(e.contains("cannot read prompt file"), "{e}");
    }
}
