//! Record order within a file: which sidechain tree each record belongs to, and
//! the parent-uuid DAG ordering of a group's records, and the branches a rewind left.

use super::rec::Rec;
use crate::model::Session;
use foldhash::{HashMap, HashMapExt as _, HashSet, HashSetExt as _};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

/// Group index per record: 0 for the file's own session, 1.. for each inline
/// sidechain (keyed by `agentId`, else by the root `uuid` of its tree), numbered in
/// order of first appearance; with the agent id of each sidechain group (group g
/// at index g-1).
pub(super) fn sidechain_groups(recs: &[Rec]) -> (Vec<usize>, Vec<String>) {
    // uuid → parentUuid among sidechain records only: a sidechain's root is the
    // first record whose parent is not itself a sidechain record.
    let mut parent_of: HashMap<&str, Option<&str>> = HashMap::new();
    for r in recs.iter().filter(|r| r.is_sidechain()) {
        if let Some(u) = r.uuid() {
            parent_of.entry(u).or_insert_with(|| r.f.parent_uuid.as_deref());
        }
    }
    let mut root_cache: HashMap<&str, &str> = HashMap::new();
    let mut keys: HashMap<String, usize> = HashMap::new();
    let mut agent_ids: Vec<String> = Vec::new();
    let mut last_side: Option<usize> = None;
    let mut out = Vec::with_capacity(recs.len());
    for r in recs {
        if !r.is_sidechain() {
            out.push(0);
            continue;
        }
        let key = match (r.f.agent_id.as_deref(), r.uuid()) {
            (Some(a), _) if !a.is_empty() => Some(a),
            (_, Some(u)) => Some(sidechain_root(u, &parent_of, &mut root_cache)),
            _ => None,
        };
        let g = match key {
            Some(k) => match keys.get(k) {
                Some(&g) => g,
                None => {
                    agent_ids.push(k.to_string());
                    keys.insert(k.to_string(), agent_ids.len());
                    agent_ids.len()
                }
            },
            // A sidechain record without uuid or agentId joins the latest sidechain.
            None => last_side.unwrap_or(0),
        };
        if g != 0 {
            last_side = Some(g);
        }
        out.push(g);
    }
    (out, agent_ids)
}

/// Root uuid of a sidechain record's tree, memoized; cycles stop at the first
/// repeated node.
pub(super) fn sidechain_root<'a>(
    start: &'a str,
    parent_of: &HashMap<&'a str, Option<&'a str>>,
    cache: &mut HashMap<&'a str, &'a str>,
) -> &'a str {
    let mut path: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut cur = start;
    let root = loop {
        if let Some(&r) = cache.get(cur) {
            break r;
        }
        if !seen.insert(cur) {
            break cur;
        }
        path.push(cur);
        match parent_of.get(cur).copied().flatten() {
            Some(p) if parent_of.contains_key(p) => cur = p,
            _ => break cur,
        }
    };
    for p in path {
        cache.insert(p, root);
    }
    root
}

/// Conversation order of a group: parent before child, file position breaking ties
/// (so a consistent file keeps its order, and parallel tool results written as
/// siblings stay where they were written). A dangling parent starts a new root; a
/// cycle is broken at its earliest record.
pub(super) fn dag_order(recs: &[&Rec], s: &mut Session, path: &Path) -> Vec<usize> {
    let n = recs.len();
    let mut pos: HashMap<&str, usize> = HashMap::with_capacity(n);
    for (i, r) in recs.iter().enumerate() {
        if let Some(u) = r.uuid() {
            pos.entry(u).or_insert(i);
        }
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut has_parent = vec![false; n];
    for (i, r) in recs.iter().enumerate() {
        // A compact boundary starts a new root but logically follows
        // `logicalParentUuid`.
        let parent = r.f.parent_uuid.as_deref().or(r.f.logical_parent_uuid.as_deref());
        if let Some(&p) = parent.and_then(|p| pos.get(p)) {
            children[p].push(i);
            has_parent[i] = true;
        }
    }
    let mut heap: BinaryHeap<Reverse<usize>> = (0..n).filter(|&i| !has_parent[i]).map(Reverse).collect();
    let mut emitted = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut scan = 0usize;
    while order.len() < n {
        let Some(Reverse(i)) = heap.pop() else {
            // Everything left hangs off a parentUuid cycle: break it at the
            // earliest record.
            while scan < n && emitted[scan] {
                scan += 1;
            }
            if scan >= n {
                break;
            }
            s.diagnostics.warn(path, recs[scan].line, "parentUuid cycle broken at this record");
            heap.push(Reverse(scan));
            continue;
        };
        if emitted[i] {
            continue;
        }
        emitted[i] = true;
        order.push(i);
        for &c in &children[i] {
            if !emitted[c] {
                heap.push(Reverse(c));
            }
        }
    }
    order
}

/// Records on the branches a conversation was rewound from. A rewind (`/rewind`,
/// an edited prompt) appends a new prompt whose parent is an earlier record,
/// and the prompts written after that record stay in the file; Claude Code
/// rebuilds the conversation by walking parents from its last record. So on
/// the path from the last conversation record to its root, a prompt
/// (`is_prompt`) that has an earlier sibling prompt replaced it: that sibling
/// and everything below it were never again sent. Siblings that are not both
/// prompts (a hook's record beside a response) are left as they are.
pub(super) fn rewound(recs: &[&Rec], is_prompt: impl Fn(&Rec) -> bool) -> Vec<bool> {
    let n = recs.len();
    let mut gone = vec![false; n];
    let parent_uuid = |i: usize| {
        let r = recs[i];
        r.f.parent_uuid.as_deref().or(r.f.logical_parent_uuid.as_deref())
    };
    // Prompts are few: only a parent with two of them can be a rewind.
    let prompts: Vec<usize> = (0..n).filter(|&i| recs[i].uuid().is_some() && is_prompt(recs[i])).collect();
    let mut seen: HashSet<Option<&str>> = HashSet::with_capacity(prompts.len());
    if prompts.iter().all(|&i| seen.insert(parent_uuid(i))) {
        return gone;
    }
    let mut pos: HashMap<&str, usize> = HashMap::with_capacity(n);
    for (i, r) in recs.iter().enumerate() {
        if let Some(u) = r.uuid() {
            pos.entry(u).or_insert(i);
        }
    }
    let parent_of = |i: usize| parent_uuid(i).and_then(|p| pos.get(p).copied());
    // Prompts by the parent they name (`None`: one that starts the
    // conversation); a parent named but missing from the file (a record
    // Claude Code failed to write) makes no sibling of a first prompt.
    let mut by_parent: HashMap<Option<&str>, Vec<usize>> = HashMap::new();
    for &i in &prompts {
        by_parent.entry(parent_uuid(i)).or_default().push(i);
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        if let Some(p) = parent_of(i) {
            children[p].push(i);
        }
    }
    let Some(leaf) = (0..n).rev().find(|&i| recs[i].uuid().is_some() && matches!(recs[i].kind(), "user" | "assistant"))
    else {
        return gone;
    };
    let mut on_path = vec![false; n];
    let mut cur = Some(leaf);
    while let Some(i) = cur.filter(|&i| !on_path[i]) {
        on_path[i] = true;
        cur = parent_of(i);
    }
    for &i in prompts.iter().filter(|&&i| on_path[i]) {
        let siblings = by_parent.get(&parent_uuid(i)).map_or(&[][..], Vec::as_slice);
        for &s in siblings.iter().filter(|&&s| s < i && !on_path[s]) {
            let mut stack = vec![s];
            while let Some(k) = stack.pop() {
                if !gone[k] && !on_path[k] {
                    gone[k] = true;
                    stack.extend_from_slice(&children[k]);
                }
            }
        }
    }
    gone
}
