//! Reader for the `codex` format (see docs/log-formats.md). Not yet implemented.

use crate::model::{Format, Session};
use std::path::Path;

pub fn read(path: &Path, _data: &[u8]) -> Vec<Session> {
    let mut s = Session::new(super::stem_id(path), Format::Generic, path);
    s.diagnostics.warn(path, 0, "reader not implemented yet");
    vec![s]
}
