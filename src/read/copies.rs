//! Claude Code logs that open with another log's responses, written again
//! under their own session id and with no mark (`--fork-session`, the SDK's
//! `forkSession`; a log file copied whole): each response is counted once.
//! A copy shows in its first records; only when one may be a copy are the
//! logs scanned for the response ids they share (families), then, among a
//! family's sessions, which copies which. The `codex exec` streams of one
//! thread are a family too, read as one ([`super::threads`]).

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
    /// Per input, whether its family is one thread's streams, read as one
    /// ([`super::threads::read_thread`]) rather than settled as copies.
    joined: Vec<bool>,
}

impl Families {
    /// No input in a family (nothing scanned).
    pub fn none(inputs: usize) -> Families {
        Families { of: vec![None; inputs], joined: vec![false; inputs] }
    }

    /// Whether input `i`'s family is one `codex exec` thread's streams.
    pub fn joined(&self, i: usize) -> bool {
        self.joined.get(i).copied().unwrap_or(false)
    }

    /// The family of input `i`, when it has one.
    pub fn of(&self, i: usize) -> Option<usize> {
        self.of.get(i).copied().flatten()
    }

    /// [`Families::groups`] by the family's first input.
    pub fn by_first(&self) -> std::collections::HashMap<usize, Vec<usize>> {
        self.groups().into_iter().filter_map(|g| Some((*g.first()?, g))).collect()
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
/// that are not sub-agent files, and the `codex exec` streams that open the
/// same thread.
pub fn families(inputs: &[Input], forced: Option<Format>) -> Families {
    families_where(inputs, forced, &|_| true)
}

/// [`families`] among the inputs `keep` names (by index), the others alone.
pub fn families_where(inputs: &[Input], forced: Option<Format>, keep: &(dyn Fn(usize) -> bool + Sync)) -> Families {
    if forced.is_some_and(|f| f != Format::ClaudeCode && f != Format::CodexExec) {
        return Families::none(inputs.len());
    }
    let read = |i: usize, input: &Input| {
        // After Ctrl-C nothing more is read: the run is over.
        !crate::interrupt::requested()
            && input.kind == InputKind::File
            && keep(i)
            && !format::is_linked_file(&input.path)
    };
    let heads: Vec<Head> = inputs
        .par_iter()
        .enumerate()
        .with_max_len(1)
        .map(|(i, input)| if read(i, input) { head_of(&input.path, forced) } else { Head::Other })
        .collect();
    let candidates = candidates(&heads);
    let mut families = if candidates.iter().any(|c| *c) {
        let scanned: Vec<Vec<Box<str>>> = inputs
            .par_iter()
            .zip(&heads)
            .with_max_len(1)
            .map(|(input, head)| match head {
                Head::Opens(_) | Head::MayCopy => scan_file(&input.path, forced),
                Head::Other | Head::Thread(_) => Vec::new(),
            })
            .collect();
        families_of(&scanned, &candidates)
    } else {
        Families::none(inputs.len())
    };
    join_threads(&heads, &mut families);
    families
}

/// Make the `codex exec` streams that open the same thread one family each,
/// read as one.
fn join_threads(heads: &[Head], families: &mut Families) {
    let mut by: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, h) in heads.iter().enumerate() {
        if let Head::Thread(id) = h {
            by.entry(id.as_str()).or_default().push(i);
        }
    }
    for members in by.values().filter(|m| m.len() > 1) {
        for &i in members {
            families.of[i] = Some(members[0]);
            families.joined[i] = true;
        }
    }
}

/// What a log's first records say of it being a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Head {
    /// Not a Claude Code log, or one with no conversation.
    Other,
    /// A Claude Code log whose conversation opens with this record: a copy
    /// made of a log that had not compacted opens with that log's first one.
    Opens(String),
    /// A Claude Code log that may be a copy whatever the others: it opens
    /// with a compaction (a copy of a log that had compacted opens with its
    /// last one), or its first records do not tell.
    MayCopy,
    /// A `codex exec --json` stream that opens this thread.
    Thread(String),
}

/// Per input, whether it may be a copy: by its own head, or by opening with
/// the record another input opens with.
fn candidates(heads: &[Head]) -> Vec<bool> {
    let mut opens: HashMap<&str, usize> = HashMap::new();
    for h in heads {
        if let Head::Opens(u) = h {
            *opens.entry(u.as_str()).or_default() += 1;
        }
    }
    heads
        .iter()
        .map(|h| match h {
            Head::Other | Head::Thread(_) => false,
            Head::MayCopy => true,
            Head::Opens(u) => opens.get(u.as_str()).is_some_and(|n| *n > 1),
        })
        .collect()
}

/// Read the first records of a log: its [`Head`].
fn head_of(path: &Path, forced: Option<Format>) -> Head {
    let Some((_, data)) = open_head(path) else { return Head::Other };
    let whole = data.len() < HEAD;
    if compressed::is_zstd(&data) {
        // A compressed `codex exec` stream joins its thread like a plain one;
        // any other compressed log is scanned whole (`scan_file`).
        let plain = compressed::decompress_head(&data, HEAD);
        if forced.or_else(|| format::detect(&plain)) == Some(Format::CodexExec)
            && let Some(id) = super::threads::first_thread(&plain)
        {
            return Head::Thread(id);
        }
        return Head::MayCopy;
    }
    match forced.or_else(|| format::detect(&data)) {
        Some(Format::ClaudeCode) => {}
        Some(Format::CodexExec) => return super::threads::first_thread(&data).map_or(Head::Other, Head::Thread),
        Some(_) => return Head::Other,
        None if whole => return Head::Other,
        None => return Head::MayCopy,
    }
    for (_, line) in super::lines(&data) {
        let Ok(v) = super::parse_json::<serde_json::Value>(line) else { continue };
        if v.get("isSidechain").and_then(serde_json::Value::as_bool) == Some(true) {
            continue;
        }
        let kind = v.get("type").and_then(serde_json::Value::as_str);
        let boundary =
            kind == Some("system") && v.get("subtype").and_then(serde_json::Value::as_str) == Some("compact_boundary");
        if !(boundary || matches!(kind, Some("user" | "assistant"))) {
            continue;
        }
        if boundary || v.get("isCompactSummary").and_then(serde_json::Value::as_bool) == Some(true) {
            return Head::MayCopy;
        }
        return match v.get("uuid").and_then(serde_json::Value::as_str) {
            Some(u) if !u.is_empty() => Head::Opens(u.to_string()),
            _ => Head::MayCopy,
        };
    }
    if whole { Head::Other } else { Head::MayCopy }
}

/// Union the inputs whose scans share an id that a candidate
/// ([`candidates`]) holds: logs that share responses when neither can be a
/// copy are left apart, so that a family never depends on logs outside it.
fn families_of(scanned: &[Vec<Box<str>>], candidates: &[bool]) -> Families {
    let mut parent: Vec<usize> = (0..scanned.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut holders: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, ids) in scanned.iter().enumerate() {
        for id in ids {
            holders.entry(id).or_default().push(i);
        }
    }
    let mut shared = vec![false; scanned.len()];
    for h in holders.values().filter(|h| h.len() > 1) {
        if !h.iter().any(|&i| candidates.get(i).copied().unwrap_or(false)) {
            continue;
        }
        for &i in h {
            let (a, b) = (root(&mut parent, i), root(&mut parent, h[0]));
            // The smaller index is the root, so a family goes by its first input.
            parent[a.max(b)] = a.min(b);
            shared[i] = true;
        }
    }
    let of = (0..scanned.len()).map(|i| shared[i].then(|| root(&mut parent, i))).collect();
    Families { of, joined: vec![false; scanned.len()] }
}

/// How much of a file tells its format, before it is read further.
const HEAD: usize = 256 << 10;

/// How much of a file is read at a time once it is known to be Claude
/// Code's: the scan needs no more in memory.
const CHUNK: usize = 1 << 20;

/// Longest run of spacing around an id's `:`, and longest id, the scan takes:
/// bounds that let it go chunk by chunk and find what one pass over the
/// whole file finds.
const MAX_SPACE: usize = 64;
const MAX_ID: usize = 256;

/// Bytes a chunk keeps of the one before (the key and spacing of an id that
/// starts in it) and holds back for the next (an id that may run past it).
const LOOKBACK: usize = 2 * MAX_SPACE + 8;
const LOOKAHEAD: usize = MAX_ID + 2;

/// Open a log and read its first [`HEAD`] bytes; the file is left at the
/// rest. `None` when it cannot be read (its reading reports why) or is not a
/// regular file (a FIFO would never end).
fn open_head(path: &Path) -> Option<(std::fs::File, Vec<u8>)> {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut file = std::fs::File::open(path).ok()?;
    // Room for the whole head first: growing to it would copy it over and over.
    let mut data = Vec::with_capacity(HEAD);
    (&mut file).take(HEAD as u64).read_to_end(&mut data).ok()?;
    Some((file, data))
}

/// The response ids of one file, when it is a Claude Code log (decompressed
/// first); none when it cannot be read (its reading reports why). A file
/// whose first records are another format's is not read further; a Claude
/// Code log is scanned a chunk at a time.
fn scan_file(path: &Path, forced: Option<Format>) -> Vec<Box<str>> {
    use std::io::Read;
    let Some((mut file, mut data)) = open_head(path) else { return Vec::new() };
    let head = if compressed::is_zstd(&data) { None } else { forced.or_else(|| format::detect(&data)) };
    match head {
        Some(Format::ClaudeCode) => scan_chunks(data, file, CHUNK),
        Some(_) => Vec::new(),
        // Compressed, or a head too short to tell: the whole file decides.
        None => {
            if file.read_to_end(&mut data).is_err() {
                return Vec::new();
            }
            let plain;
            let data = if compressed::is_zstd(&data) {
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
    }
}

/// [`response_ids`] of what `buf` holds and the rest of `rest`, read `chunk`
/// bytes at a time.
fn scan_chunks(mut buf: Vec<u8>, mut rest: impl std::io::Read, chunk: usize) -> Vec<Box<str>> {
    use std::io::Read;
    let mut out = Vec::new();
    let mut from = 0;
    buf.reserve(chunk);
    loop {
        let had = buf.len();
        // Appended into the spare room as it is: nothing zeroed first.
        if (&mut rest).take(chunk as u64).read_to_end(&mut buf).is_err() {
            return Vec::new();
        }
        let n = buf.len() - had;
        let eof = n == 0;
        let limit = if eof { buf.len() } else { buf.len().saturating_sub(LOOKAHEAD) };
        ids_in(&buf, from, limit, &mut out);
        if eof {
            break;
        }
        let keep = limit.max(from).saturating_sub(LOOKBACK);
        buf.drain(..keep);
        from = limit.max(from) - keep;
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Every `"id": "msg_…"` of a log's bytes (Anthropic's response ids; the id of
/// a message a Claude Code record holds), sorted and without repeats. A
/// superset of the response ids its reader takes (the scan does not know
/// which object a key is in), but for ids longer than [`MAX_ID`] or spacing
/// longer than [`MAX_SPACE`].
pub fn response_ids(data: &[u8]) -> Vec<Box<str>> {
    let mut out = Vec::new();
    ids_in(data, 0, data.len(), &mut out);
    out.sort_unstable();
    out.dedup();
    out
}

/// Add to `out` the ids whose `"msg_` starts in `data[from..limit]`.
fn ids_in(data: &[u8], from: usize, limit: usize, out: &mut Vec<Box<str>>) {
    let ws = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    // Back over at most MAX_SPACE spacing bytes before `p`.
    let back = |mut p: usize| {
        let stop = p.saturating_sub(MAX_SPACE);
        while p > stop && ws(data[p - 1]) {
            p -= 1;
        }
        p
    };
    let Some(tail) = data.get(from..) else { return };
    // From each `"msg_` (rarer than `"id"`), back to the key it is the value of.
    for at in memmem::find_iter(tail, b"\"msg_").map(|a| a + from) {
        if at >= limit {
            break;
        }
        let p = back(at);
        if p == 0 || data[p - 1] != b':' {
            continue;
        }
        let p = back(p - 1);
        if p < 4 || &data[p - 4..p] != b"\"id\"" {
            continue;
        }
        let start = at + 1;
        let body = &data[start..data.len().min(start + MAX_ID + 1)];
        let len = body.iter().position(|&b| !(b.is_ascii_alphanumeric() || b == b'_'));
        let Some(len) = len.filter(|&n| n > "msg_".len()) else { continue };
        // An id ends at its closing quote; one with an escape or any other
        // character is not in Anthropic's form.
        if data.get(start + len) == Some(&b'"')
            && let Ok(id) = std::str::from_utf8(&data[start..start + len])
        {
            out.push(id.into());
        }
    }
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
    let groups: Vec<Vec<usize>> =
        families.groups().into_iter().filter(|g| g.first().is_some_and(|&i| !families.joined(i))).collect();
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
