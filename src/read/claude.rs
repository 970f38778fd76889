//! Reader for Claude Code session JSONL (`~/.claude/projects`). Not yet implemented.

use crate::model::{Format, Session};
use std::path::Path;

pub fn read(path: &Path, _data: &[u8]) -> Vec<Session> {
    let mut s = Session::new(super::stem_id(path), Format::ClaudeCode, path);
    s.diagnostics.warn(path, 0, "reader not implemented yet");
    vec![s]
}

/// Link sub-agent sessions read from separate files to their parents.
pub fn link_across_files(_sessions: &mut [Session]) {}
