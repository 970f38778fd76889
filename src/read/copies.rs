//! Claude Code logs that open with another log's responses, written again
//! under their own session id and with no mark (`--fork-session`, the SDK's
//! `forkSession`; a log file copied whole): each response is counted once.
//! The files of a run that share a response id are found first by a scan of
//! their bytes (families), then, among a family's sessions, which copies which.

use super::format;
use super::{Input, InputKind, compressed};
use crate::model::{Format, Session};
use foldhash::{HashMap, HashMapExt as _};
use memchr::memmem;
use rayon::prelude::*;
use std::path::Path;

/// Per input, the family it belongs to: the index of the family's first input,
/// for an input that shares a response id with another; `None` alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Families {
    of: Vec<Option<usize>>,
}

impl Families {
    /// No input in a family (nothing scanned).
    pub fn none(inputs: usize) -> Families {
        Families { of: vec![None; inputs] }
    }

    /// The family of input `i`, when it has one.
    pub fn of(&self, i: usize) -> Option<usize> {
        self.of.get(i).copied().flatten()
    }

    /// The families of two inputs or more, each as its inputs in order.
    pub fn groups(&self) -> Vec<Vec<usize>> {
        let mut by: std::collections::BTreeMap<usize, Vec<usize>> = std::collections::BTreeMap::new();
        for (i, f) in self.of.iter().enumerate() {
            if let Some(f) = f {
                by.entry(*f).or_default().push(i);
            }
        }
        by.into_values().collect()
    }
}

/// Find the families among `inputs` (files only: standard input cannot be read
/// twice, a folder is one agent's database) whose format is Claude Code's and
/// that are not sub-agent files.
pub fn families(inputs: &[Input], forced: Option<Format>) -> Families {
    families_where(inputs, forced, &|_| true)
}

/// [`families`] among the inputs `keep` names (by index), the others alone.
pub fn families_where(inputs: &[Input], forced: Option<Format>, keep: &(dyn Fn(usize) -> bool + Sync)) -> Families {
    if forced.is_some_and(|f| f != Format::ClaudeCode) {
        return Families::none(inputs.len());
    }
    let scanned: Vec<Vec<Box<str>>> = inputs
        .par_iter()
        .enumerate()
        .with_max_len(1)
        .map(|(i, input)| match input.kind {
            // After Ctrl-C nothing more is read: the run is over.
            _ if crate::interrupt::requested() => Vec::new(),
            InputKind::File if keep(i) && !format::is_linked_file(&input.path) => scan_file(&input.path, forced),
            _ => Vec::new(),
        })
        .collect();
    families_of(&scanned)
}

/// Union the inputs whose scans share an id.
fn families_of(scanned: &[Vec<Box<str>>]) -> Families {
    let mut parent: Vec<usize> = (0..scanned.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut first: HashMap<&str, usize> = HashMap::new();
    let mut shared = vec![false; scanned.len()];
    for (i, ids) in scanned.iter().enumerate() {
        for id in ids {
            match first.get(id.as_ref()) {
                None => {
                    first.insert(id, i);
                }
                Some(&j) => {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    // The smaller index is the root, so a family goes by its first input.
                    parent[a.max(b)] = a.min(b);
                    shared[i] = true;
                    shared[j] = true;
                }
            }
        }
    }
    let of = (0..scanned.len()).map(|i| shared[i].then(|| root(&mut parent, i))).collect();
    Families { of }
}

/// How much of a file tells its format, before it is read whole.
const HEAD: u64 = 256 << 10;

/// The response ids of one file, when it is a Claude Code log (decompressed
/// first); none when it cannot be read (its reading reports why). A file
/// whose first records are another format's is not read further.
fn scan_file(path: &Path, forced: Option<Format>) -> Vec<Box<str>> {
    use std::io::Read;
    // Only a regular file, as reading it does: a FIFO would never end.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Vec::new();
    }
    let Ok(mut file) = std::fs::File::open(path) else { return Vec::new() };
    let mut data = Vec::new();
    if (&mut file).take(HEAD).read_to_end(&mut data).is_err() {
        return Vec::new();
    }
    let compressed = compressed::is_zstd(&data);
    if !compressed && forced.is_none() && format::detect(&data).is_some_and(|f| f != Format::ClaudeCode) {
        return Vec::new();
    }
    if file.read_to_end(&mut data).is_err() {
        return Vec::new();
    }
    let plain;
    let data = if compressed {
        match compressed::decompress(&data, compressed::MAX_DECOMPRESSED) {
            Ok(p) => {
                plain = p;
                &plain[..]
            }
            Err(_) => return Vec::new(),
        }
    } else {
        &data[..]
    };
    if forced.or_else(|| format::detect(data)) != Some(Format::ClaudeCode) {
        return Vec::new();
    }
    response_ids(data)
}

/// Every `"id": "msg_…"` of a log's bytes (Anthropic's response ids; the id of
/// a message a Claude Code record holds), sorted and without repeats. A
/// superset of the response ids its reader takes: the scan does not know
/// which object a key is in.
pub fn response_ids(data: &[u8]) -> Vec<Box<str>> {
    let mut out: Vec<Box<str>> = Vec::new();
    let ws = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    // From each `"msg_` (rarer than `"id"`), back to the key it is the value of.
    for at in memmem::find_iter(data, b"\"msg_") {
        let mut p = at;
        while p > 0 && ws(data[p - 1]) {
            p -= 1;
        }
        if p == 0 || data[p - 1] != b':' {
            continue;
        }
        p -= 1;
        while p > 0 && ws(data[p - 1]) {
            p -= 1;
        }
        if p < 4 || &data[p - 4..p] != b"\"id\"" {
            continue;
        }
        let start = at + 1;
        let len = data[start..].iter().position(|&b| !(b.is_ascii_alphanumeric() || b == b'_'));
        let Some(len) = len.filter(|&n| n > "msg_".len()) else { continue };
        // An id ends at its closing quote; one with an escape or any other
        // character is not in Anthropic's form.
        if data.get(start + len) == Some(&b'"')
            && let Ok(id) = std::str::from_utf8(&data[start..start + len])
        {
            out.push(id.into());
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether a response id is in the form [`response_ids`] finds.
fn scannable(id: &str) -> bool {
    id.len() > "msg_".len() && id.starts_with("msg_") && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Whether `s` takes part in finding copies: a top-level Claude Code session
/// that is not already known to be a fork.
fn takes_part(s: &Session) -> bool {
    s.format == Format::ClaudeCode && s.parent.is_none() && s.forked_from.is_none() && !format::is_linked_session(s)
}

/// What finding the copies needs of a session: its rank and its response ids
/// in order. Kept instead of the session, so that a family of many logs is
/// not held in memory at once.
#[derive(Debug, Clone)]
pub struct Facts {
    rank: Rank,
    /// The session's id, which a copy of it names as its parent.
    id: String,
    responses: Vec<Option<Box<str>>>,
}

/// Which of two sessions holding a response keeps it (the smaller): the one
/// whose first message is older (one without a time last), then the one with
/// fewer calls (a log forked from its end and not continued), then by id and
/// path.
type Rank = (bool, Option<i64>, usize, String, std::path::PathBuf);

/// The facts of a session that takes part: a top-level Claude Code session
/// that is not already known to be a fork (decided as read).
pub fn facts(s: &Session) -> Option<Facts> {
    if !takes_part(s) {
        return None;
    }
    let t = s.messages.iter().find_map(|m| m.timestamp);
    let rank = (t.is_none(), t, s.calls.len(), s.id.clone(), s.source_path.clone());
    let responses =
        s.calls.iter().map(|c| c.response_id.as_deref().filter(|id| scannable(id)).map(Box::from)).collect();
    Some(Facts { rank, id: s.id.clone(), responses })
}

/// A copy found: how many of its first calls it copied, and from which session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    pub calls: usize,
    pub from: String,
}

/// Among the sessions of one family (their [`facts`], `None` for those that
/// take no part), the copies: a session whose first calls are responses a
/// better-ranked session also holds copied them from the best-ranked holder
/// of its first one.
pub fn find(facts: &[Option<Facts>]) -> Vec<Option<Copy>> {
    let mut holders: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, f) in facts.iter().enumerate() {
        for id in f.iter().flat_map(|f| f.responses.iter().flatten()) {
            let h = holders.entry(id).or_default();
            if h.last() != Some(&i) {
                h.push(i);
            }
        }
    }
    let rank = |i: usize| facts[i].as_ref().map(|f| &f.rank);
    facts
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let f = f.as_ref()?;
            let mut copied = 0;
            let mut from = None;
            for id in &f.responses {
                let Some(h) = id.as_deref().and_then(|id| holders.get(id)) else { break };
                let Some(&best) = h.iter().filter(|&&j| j != i).min_by_key(|&&j| rank(j)) else { break };
                if rank(best) >= rank(i) {
                    break;
                }
                from.get_or_insert(best);
                copied += 1;
            }
            Some(Copy { calls: copied, from: facts[from?].as_ref()?.id.clone() })
        })
        .collect()
}

/// Settle `s` as a copy: its first messages, through the last response it
/// copied, are context; their calls and errors are counted in the other log.
pub fn settle(s: &mut Session, copy: &Copy) {
    let Some(last) = copy.calls.checked_sub(1).and_then(|k| s.calls.get(k)) else { return };
    s.inherited = last.message_index + 1;
    s.forked_from = Some(copy.from.clone());
    s.settle_fork(true);
    s.diagnostics.skip_n("copied-response", copy.calls as u64);
}

/// [`find`] and [`settle`] the copies among the sessions of one family, all
/// in memory. Returns how many were settled.
pub fn settle_copies(sessions: &mut [&mut Session]) -> usize {
    let facts: Vec<Option<Facts>> = sessions.iter().map(|s| facts(s)).collect();
    let copies = find(&facts);
    let mut n = 0;
    for (s, copy) in sessions.iter_mut().zip(&copies) {
        if let Some(c) = copy {
            settle(s, c);
            n += 1;
        }
    }
    n
}

/// Settle the copies among a batch read whole: within each family of `inputs`
/// (sessions go by their source path).
pub fn settle_batch(sessions: &mut [Session], inputs: &[Input], families: &Families) {
    let groups = families.groups();
    if groups.is_empty() {
        return;
    }
    let mut family_of: HashMap<&Path, usize> = HashMap::new();
    for (g, members) in groups.iter().enumerate() {
        for &i in members {
            family_of.insert(inputs[i].path.as_path(), g);
        }
    }
    let mut by_family: Vec<Vec<&mut Session>> = (0..groups.len()).map(|_| Vec::new()).collect();
    for s in sessions.iter_mut() {
        if let Some(&g) = family_of.get(s.source_path.as_path()) {
            by_family[g].push(s);
        }
    }
    for mut family in by_family {
        settle_copies(&mut family);
    }
}

#[cfg(test)]
#[path = "copies_tests.rs"]
mod tests;
