//! Reader for Cline / Roo Code task folders. Not yet implemented.

use crate::model::{Diagnostic, Format, Session};
use std::path::Path;

pub fn read_task_dir(dir: &Path) -> Result<Vec<Session>, Diagnostic> {
    Ok(read_history_bytes(dir, b"", None))
}

pub fn read_history_bytes(path: &Path, _data: &[u8], _ui_messages: Option<&[u8]>) -> Vec<Session> {
    let mut s = Session::new(super::stem_id(path), Format::Cline, path);
    s.diagnostics.warn(path, 0, "reader not implemented yet");
    vec![s]
}
