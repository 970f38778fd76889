//! A `codex exec` thread continued across files (`codex exec resume`, each
//! run's stream saved apart): its streams are read as one, in order, since a
//! resumed run's first running total counts every run before it.

use super::codex_exec;
use super::{Input, InputKind, parse_line};
use crate::model::{Diagnostic, Session};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The thread a `codex exec --json` stream opens with: the id of its first
/// `thread.started` record, among the lines of `head`.
pub(super) fn first_thread(head: &[u8]) -> Option<String> {
    super::lines(head)
        .filter(|(_, l)| memchr::memmem::find(l, b"thread.started").is_some())
        .filter_map(|(_, l)| parse_line(l).ok())
        .find(|v| v.get("type").and_then(Value::as_str) == Some("thread.started"))
        .and_then(|v| v.get("thread_id").and_then(Value::as_str).map(str::to_string))
        .filter(|id| !id.is_empty())
}

/// One file of a thread, read into memory.
struct Part {
    /// Its place among the members.
    member: usize,
    path: PathBuf,
    data: Vec<u8>,
    /// The thread's running prompt total at its first and last `turn.completed`.
    first: Option<u64>,
    last: Option<u64>,
}

/// Read the inputs `members` (files of one thread, [`super::copies::families`]):
/// per member, in the order given, what reading it gives. The streams that
/// continue one another, ordered by their running totals, are read as one
/// ([`codex_exec::read_parts`]) and their sessions go to the first of them;
/// the others are read, and give none of their own. A stream that records no
/// total cannot be placed, and one whose first total is not above the last
/// total of the stream before it continues none (a copy, or another thread's
/// run under the same id): each is read on its own.
pub fn read_thread(inputs: &[Input], members: &[usize]) -> Vec<(usize, Result<Vec<Session>, Diagnostic>)> {
    let mut out: Vec<(usize, Result<Vec<Session>, Diagnostic>)> =
        members.iter().map(|&i| (i, Ok(Vec::new()))).collect();
    let mut parts = Vec::new();
    for (member, &i) in members.iter().enumerate() {
        match part(&inputs[i], member) {
            Ok(p) => parts.push(p),
            Err(d) => out[member].1 = Err(d),
        }
    }
    // Placed by their totals, the path breaking ties; those that cannot be
    // placed last, each on its own.
    parts.sort_by(|a, b| (a.first.is_none(), a.first, &a.path).cmp(&(b.first.is_none(), b.first, &b.path)));
    let mut chains: Vec<Vec<Part>> = Vec::new();
    for p in parts {
        let continues = match (chains.last().and_then(|c| c.last()), p.first) {
            (Some(prev), Some(first)) => prev.last.is_some_and(|last| first > last),
            _ => false,
        };
        match chains.last_mut() {
            Some(chain) if continues => chain.push(p),
            _ => chains.push(vec![p]),
        }
    }
    for chain in &chains {
        let Some(head) = chain.first() else { continue };
        let joined: Vec<(&Path, &[u8])> = chain.iter().map(|p| (p.path.as_path(), p.data.as_slice())).collect();
        let mut sessions = codex_exec::read_parts(&joined);
        if chain.len() == 1 && chains.len() > 1 {
            let why = if head.first.is_none() {
                "a stream of a thread also saved in other files records no running total, so its place among them is unknown: read on its own"
            } else {
                "a stream of a thread also saved in other files continues none of them (its first running total is not above the last one before it): read on its own"
            };
            for s in &mut sessions {
                s.diagnostics.warn(&head.path, 0, why);
            }
        }
        out[head.member].1 = Ok(sessions);
    }
    out
}

/// Read one member: its plain bytes and its first and last running totals.
fn part(input: &Input, member: usize) -> Result<Part, Diagnostic> {
    if input.kind != InputKind::File {
        return Err(super::file_error(&input.path, "a thread's stream is read from a file".to_string()));
    }
    let data = super::read_plain_file(&input.path)?;
    let (first, last) = totals(&data);
    Ok(Part { member, path: input.path.clone(), data, first, last })
}

/// The running prompt total of a stream's first and last `turn.completed`.
fn totals(data: &[u8]) -> (Option<u64>, Option<u64>) {
    let mut seen = super::lines(data)
        .filter(|(_, l)| memchr::memmem::find(l, b"turn.completed").is_some())
        .filter_map(|(_, l)| parse_line(l).ok())
        .filter(|v| v.get("type").and_then(Value::as_str) == Some("turn.completed"))
        .filter_map(|v| v.get("usage").and_then(super::codex::openai_usage))
        .map(|u| u.prompt_tokens());
    let first = seen.next();
    let last = seen.last().or(first);
    (first, last)
}

#[cfg(test)]
#[path = "threads_tests.rs"]
mod tests;
