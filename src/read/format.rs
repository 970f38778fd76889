//! Every log format behind one trait and one registry, so that detection, reading,
//! default locations and cross-file linking ask the formats instead of naming them.

use super::locations::{Home, Location};
use super::{claude, lines, strip_bom};
use super::{cline, codex, codex_exec, gemini, generic, pi};
use crate::model::{Diagnostic, Format, Session, Severity};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::Path;

/// How many leading records format detection looks at.
pub const DETECT_RECORDS: usize = 200;

/// How far into a whole-file document that does not parse
/// [`LogFormat::detect_torn`] looks.
const TORN_HEAD: usize = 64 * 1024;

/// Every format, once. The order is detection's precedence: when two formats
/// claim the same evidence, the earlier one wins. It is also the order of the
/// default locations.
pub static FORMATS: &[&dyn LogFormat] = &[
    &claude::ClaudeCode,
    &codex::Codex,
    &codex_exec::CodexExec,
    &pi::Pi,
    &gemini::Gemini,
    &cline::Cline,
    &generic::Generic,
];

/// What one record says about the format of its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Nothing.
    No,
    /// Only this format writes such a record: detection stops at it.
    Sure,
    /// Likely this format: decides when no record is sure.
    Likely,
    /// A shape several formats share: decides when no record is sure or likely.
    Weak,
}

/// One log format: its name, how to recognize and read a file of it, where the
/// agent keeps its logs, and how sessions of different files link.
pub trait LogFormat: Sync {
    /// The format sessions read by it carry.
    fn id(&self) -> Format;

    /// The name `--format` takes and reports print.
    fn name(&self) -> &'static str {
        self.id().name()
    }

    /// A whole-file JSON document (parsed whole) that is this format.
    fn detect_document(&self, _doc: &Value) -> bool {
        false
    }

    /// What one JSONL record (an object) says about this format.
    fn detect_record(&self, _rec: &Map<String, Value>) -> Signal {
        Signal::No
    }

    /// A whole-file document that does not parse (caught half-written), by the
    /// first bytes of its text: it still goes to the reader that reports the damage.
    fn detect_torn(&self, _head: &[u8]) -> bool {
        false
    }

    /// Read a file of this format. Never fails on content (see [`super`]).
    fn read(&self, path: &Path, data: &[u8]) -> Vec<Session>;

    /// The file that makes a folder holding it one session of this format,
    /// read whole by [`LogFormat::read_folder`] (a Cline task folder); `None`
    /// when the format's sessions are files.
    fn folder_marker(&self) -> Option<&'static str> {
        None
    }

    /// Read a session folder: one holding [`LogFormat::folder_marker`].
    /// Errors only when the folder cannot be read at all.
    fn read_folder(&self, dir: &Path) -> Result<Vec<Session>, Diagnostic> {
        Err(Diagnostic {
            severity: Severity::Error,
            path: dir.to_path_buf(),
            line: 0,
            message: format!("{} sessions are files, not folders", self.name()),
        })
    }

    /// A file the agent keeps next to its sessions that is no session (an
    /// index, a prompt history, a task's UI log), by its name: a directory
    /// walk leaves it out.
    fn is_sidecar(&self, _name: &str) -> bool {
        false
    }

    /// A folder under the agent's sessions that holds no session (spilled tool
    /// outputs, file snapshots), by its name: a directory walk skips it.
    fn is_skipped_dir(&self, _name: &str) -> bool {
        false
    }

    /// Where the agent keeps its logs, looked in when no path is given (those
    /// that exist): under `home`, moved by the variables the agent reads.
    fn default_locations(&self, _home: &Home) -> Vec<Location> {
        Vec::new()
    }

    /// A file whose sessions link to sessions of other files (they are replayed
    /// after every other file: [`is_linked_file`]).
    fn is_linked_file(&self, _path: &Path) -> bool {
        false
    }

    /// A session linked to one read from elsewhere, left for after the others.
    fn is_linked_session(&self, _s: &Session) -> bool {
        false
    }

    /// The keys a top-level session owns, that linked sessions may replay.
    fn owned_keys(&self, _s: &Session, _out: &mut Vec<String>) {}

    /// Drop from a linked session what it replays of `owned` (every top-level
    /// session's [`LogFormat::owned_keys`]).
    fn drop_replayed(&self, _s: &mut Session, _owned: &HashSet<String>) {}

    /// Link the sessions of a whole batch read into memory (parents, sub-agents,
    /// replayed copies): what the other linking methods do file by file.
    fn link_across_files(&self, _sessions: &mut [Session]) {}

    /// The file a linked file belongs with when work is split into shards:
    /// its parent's, so a sub-agent is replayed where its parent is. `None`:
    /// the file stands alone.
    fn shard_group(&self, _path: &Path) -> Option<std::path::PathBuf> {
        None
    }

    /// The sessions a file's name says it holds (`session:ID`), for the
    /// agents that name their logs by session id: a fork's parent is then
    /// known to be in the run from the list of inputs, whichever shard reads it.
    fn path_keys(&self, _path: &Path, _out: &mut Vec<String>) {}

    /// The model the agent runs when nothing in its log names one (a `codex
    /// exec` stream never does): what a call of no recorded model is priced
    /// as, and whose window a session of none has. `None` for agents that
    /// run many providers' models, or whose logs always name the model.
    fn default_model(&self) -> Option<&'static str> {
        None
    }
}

/// [`LogFormat::default_model`] of `format`.
pub fn default_model(format: Format) -> Option<&'static str> {
    of(format).and_then(|f| f.default_model())
}

/// The registry entry of a format.
pub fn of(format: Format) -> Option<&'static dyn LogFormat> {
    FORMATS.iter().copied().find(|f| f.id() == format)
}

/// Detect the format by scanning up to [`DETECT_RECORDS`] records for signature
/// keys. Never decides from the first line alone: Claude Code files often start
/// with bookkeeping lines that any format could have.
pub fn detect(data: &[u8]) -> Option<Format> {
    let data = strip_bom(data);
    let first = data.iter().position(|b| !b.is_ascii_whitespace())?;
    let body = &data[first..];
    // Whole-file JSON documents (Gemini session, Cline history, generic arrays).
    // A JSONL file also starts with '{': only a document that parses whole counts.
    if matches!(body.first(), Some(b'{' | b'['))
        && let Ok(doc) = super::parse_document::<Value>(body)
        && let Some(f) = FORMATS.iter().find(|f| f.detect_document(&doc))
    {
        return Some(f.id());
    }
    let mut likely: Option<Format> = None;
    let mut weak: Option<Format> = None;
    for (_, line) in lines(data).take(DETECT_RECORDS) {
        let Ok(v) = super::parse_json::<Value>(line) else { continue };
        let Some(obj) = v.as_object() else { continue };
        for f in FORMATS {
            match f.detect_record(obj) {
                Signal::Sure => return Some(f.id()),
                Signal::Likely => likely = likely.or(Some(f.id())),
                Signal::Weak => weak = weak.or(Some(f.id())),
                Signal::No => {}
            }
        }
    }
    likely.or(weak).or_else(|| {
        let head = &body[..body.len().min(TORN_HEAD)];
        FORMATS.iter().find(|f| f.detect_torn(head)).map(|f| f.id())
    })
}

/// Whether `needle` occurs in `head`.
pub(crate) fn contains(head: &[u8], needle: &str) -> bool {
    memchr::memmem::find(head, needle.as_bytes()).is_some()
}

/// The format whose session folders `dir` is one of (it holds the format's
/// [`LogFormat::folder_marker`]).
pub fn folder_format(dir: &Path) -> Option<Format> {
    FORMATS.iter().find(|f| f.folder_marker().is_some_and(|m| dir.join(m).is_file())).map(|f| f.id())
}

/// The format whose [`LogFormat::folder_marker`] `file` is: the file given
/// by itself stands for its folder.
pub fn marker_format(file: &Path) -> Option<Format> {
    let name = file.file_name()?;
    FORMATS.iter().find(|f| f.folder_marker().is_some_and(|m| name == m)).map(|f| f.id())
}

/// A file some format keeps next to its sessions that is no session.
pub fn is_sidecar(name: &str) -> bool {
    FORMATS.iter().any(|f| f.is_sidecar(name))
}

/// A folder some format keeps under its sessions that holds none.
pub fn is_skipped_dir(name: &str) -> bool {
    FORMATS.iter().any(|f| f.is_skipped_dir(name))
}

/// A file some format says links to sessions of other files: a batch replays it
/// after every other file, once the owned keys of those are known.
pub fn is_linked_file(path: &Path) -> bool {
    FORMATS.iter().any(|f| f.is_linked_file(path))
}

/// A session its format says links to one read from elsewhere, or a fork
/// whose copied history waits for the batch ([`Session::settle_fork`]).
pub fn is_linked_session(s: &Session) -> bool {
    is_unsettled_fork(s) || of(s.format).is_some_and(|f| f.is_linked_session(s))
}

fn is_unsettled_fork(s: &Session) -> bool {
    s.forked_from.is_some() && s.inherited > 0
}

/// Add to `out` the keys a session read in the first pass owns: those its
/// format names, and its id and file name, which a fork names its parent by.
pub fn owned_keys(s: &Session, out: &mut Vec<String>) {
    if let Some(f) = of(s.format) {
        f.owned_keys(s, out);
    }
    out.extend(fork_keys(s));
}

/// The keys a fork may name `s` by: its id, and what its log's path says.
fn fork_keys(s: &Session) -> impl Iterator<Item = String> {
    let mut keys = vec![format!("session:{}", s.id)];
    path_keys(&s.source_path, &mut keys);
    keys.into_iter()
}

/// The keys a fork may name a session of the file at `path` by, from the path
/// alone: its file name, and the session ids formats write into their names.
/// A run adds those of every input, so that a fork whose parent's file is in
/// another shard is settled as in the whole run.
pub fn path_keys(path: &Path, out: &mut Vec<String>) {
    // A compressed log goes by the name it had before too.
    let inner = super::compressed::inner_path(path);
    for p in std::iter::once(path).chain(inner.as_deref()) {
        if let Some(n) = p.file_name() {
            out.push(format!("file:{}", n.to_string_lossy()));
        }
    }
    let named = inner.as_deref().unwrap_or(path);
    for f in FORMATS {
        f.path_keys(named, out);
    }
}

/// Whether `owned` holds the session `forked_from` names: by id, or (pi) by
/// the file name of the log path it gives.
fn parent_read(forked_from: &str, owned: &HashSet<String>) -> bool {
    let name = forked_from.rsplit(['/', '\\']).next().unwrap_or(forked_from);
    owned.contains(&format!("session:{forked_from}")) || owned.contains(&format!("file:{name}"))
}

/// Settle `s` if it is a fork still unsettled, by whether `owned` holds its
/// parent.
fn settle(s: &mut Session, owned: &HashSet<String>) {
    if let Some(from) = s.forked_from.clone().filter(|_| is_unsettled_fork(s)) {
        s.settle_fork(parent_read(&from, owned));
    }
}

/// Drop from a linked session what it replays of `owned`, and settle a fork
/// by whether its parent is among them.
pub fn drop_replayed(s: &mut Session, owned: &HashSet<String>) {
    settle(s, owned);
    if let Some(f) = of(s.format) {
        f.drop_replayed(s, owned);
    }
}

/// The path that decides an input's shard: its parent's for a linked file
/// (as its format says), its own otherwise.
pub fn shard_group(path: &Path) -> std::path::PathBuf {
    FORMATS
        .iter()
        .filter(|f| f.is_linked_file(path))
        .find_map(|f| f.shard_group(path))
        .unwrap_or_else(|| path.to_path_buf())
}

/// Link a batch read whole into memory, format by format, and settle its
/// forks by whether their parents are in it.
pub fn link_across_files(sessions: &mut [Session]) {
    let owned: HashSet<String> = sessions.iter().flat_map(fork_keys).collect();
    for s in sessions.iter_mut() {
        settle(s, &owned);
    }
    for f in FORMATS {
        f.link_across_files(sessions);
    }
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
