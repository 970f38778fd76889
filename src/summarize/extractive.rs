//! The `extractive` summarizer: a structured checkpoint (specs/000 headings) built
//! deterministically from the log, no LLM.
//!
//! - Goal: the first human request. Constraints & Preferences: user sentences with
//!   must/never/always/don't/only…
//! - Progress: Done (assistant sentences reporting completed work) and In Progress
//!   (what the assistant said it was doing after the last request).
//! - Key Decisions: assistant sentences that choose or explain.
//! - Next Steps: the last pending user request.
//! - Critical Context: last user request, files read/modified (from tool calls),
//!   commands and exit status, errors seen (error lines, failed tool results) and
//!   identifiers (paths, hashes, UUIDs, URLs, versions, error codes) of the
//!   compacted part, ranked by where and how often they occur.
//!
//! Size is bounded by `max_tokens`: lines are admitted by priority (goal and the
//! pending request first, old "done" items last) and then printed in the fixed
//! section order. With a previous summary (iterative update, specs/000), its
//! items are parsed back and merged, older items yielding first when space runs out.
//!
//! Identifiers, symbols, commands, errors and constraints are the metric's
//! atoms (`text::atoms`), read once per message by the session's
//! [`SessionLens`] and shared with the quality pass: the summary lists what
//! the metric looks for, spelled as the metric reads it back.
//!
//! Each replaced message is read into [`Step`]s (a request, a constraint, a
//! file touched, identifier occurrences…) that are then applied at its
//! position. A sweep or `compare` replaces the same messages under many
//! policies: [`SessionExtractive`] reads each of a session's messages once
//! (naming each identifier and symbol once, by id) and applies the kept steps
//! at every compaction.

use super::{SummarizeError, Summarizer, SummarizerUsage, Summary, SummaryPart, SummaryRequest, head_chars};
use crate::model::{Block, Message, Origin, Role};
use crate::text::atoms::{AtomKind, Ctx, Found, MessageAtoms, MessageView, SessionLens, normalize_path, scan_text};
use crate::text::filetrack::FileOps;
use crate::text::words::split_str;
use crate::tools::is_command;
use foldhash::{HashMap, HashMapExt as _, HashSet, HashSetExt as _};
use regex::Regex;
use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

mod doc;
mod read;
mod symbols;

use doc::*;
use read::*;
use symbols::*;

pub struct Extractive;

impl Summarizer for Extractive {
    fn name(&self) -> &str {
        "extractive"
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        Ok(summarize(req, None))
    }

    fn for_session<'s>(&'s self, lens: &'s SessionLens<'s>) -> Option<Box<dyn Summarizer + 's>> {
        Some(Box::new(SessionExtractive::new(lens)))
    }
}

/// The extractive summarizer for one session's requests: it takes each
/// message's atoms from the session's lens (read once, shared with the
/// quality pass) and keeps what it made of them (the message's [`Step`]s),
/// so the compactions of a sweep's or `compare`'s policies, which replace the
/// same messages again and again, only apply them. Same answers as
/// [`Extractive`] when the lens has no working directory (with one, paths
/// read relative to it); held until the session's last replay.
pub struct SessionExtractive<'s> {
    /// The session's atoms, shared with the quality pass.
    lens: &'s SessionLens<'s>,
    read: Vec<OnceLock<Read>>,
    /// The identifiers and symbols of the steps read, and of the previous
    /// summaries absorbed, by id.
    names: Arc<Names>,
    /// Messages read (not reused from an earlier request).
    reads: AtomicUsize,
}

/// One message's steps, and the calls its tool results were read with.
struct Read {
    calls: Vec<CallRef>,
    steps: Vec<Step>,
}

impl<'s> SessionExtractive<'s> {
    pub fn new(lens: &'s SessionLens<'s>) -> SessionExtractive<'s> {
        SessionExtractive {
            lens,
            read: (0..lens.messages().len()).map(|_| OnceLock::new()).collect(),
            names: Arc::default(),
            reads: 0.into(),
        }
    }

    /// How many messages were read rather than reused.
    pub fn reads(&self) -> usize {
        self.reads.load(Ordering::Relaxed)
    }

    /// The steps of the session's message `i` (`m`) read with `calls`: kept
    /// from the first request that read it, unless its results answer other
    /// calls this time.
    fn steps(&self, i: usize, m: &Message, kind: Kind, calls: &Calls<'_>, atoms: MessageView<'_>) -> Cow<'_, [Step]> {
        let refs = if kind == Kind::ToolResults { call_refs(m, calls) } else { Vec::new() };
        let names = &self.names;
        let Some(slot) = self.read.get(i).filter(|_| !refs.contains(&CallRef::Foreign)) else {
            return Cow::Owned(read_message(m, kind, calls, names, atoms));
        };
        let read = slot.get_or_init(|| {
            self.reads.fetch_add(1, Ordering::Relaxed);
            Read { calls: refs.clone(), steps: read_message(m, kind, calls, names, atoms) }
        });
        if read.calls == refs {
            Cow::Borrowed(&read.steps)
        } else {
            Cow::Owned(read_message(m, kind, calls, names, atoms))
        }
    }
}

impl Summarizer for SessionExtractive<'_> {
    fn name(&self) -> &str {
        "extractive"
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        Ok(summarize(req, Some(self)))
    }
}

fn summarize(req: &SummaryRequest<'_>, memory: Option<&SessionExtractive<'_>>) -> Summary {
    let mut facts = Facts {
        names: memory.map(|m| m.names.clone()).unwrap_or_default(),
        cwd: memory.and_then(|m| m.lens.cwd()).map(str::to_string),
        ..Facts::default()
    };
    if let Some(prev) = req.previous_summary {
        facts.absorb_previous(prev);
    }
    facts.scan_start = facts.pos;
    facts.scan(req, memory);
    facts.file_ops.merge(req.file_ops);
    let text = match req.part {
        SummaryPart::History => facts.render_checkpoint(req),
        SummaryPart::TurnPrefix => facts.render_turn_prefix(req),
    };
    Summary { text, file_ops: facts.file_ops, usage: SummarizerUsage::default(), fallback: None }
}

/// Printed as the last request when it is the goal itself.
const GOAL_ABOVE: &str = "(the goal above)";

/// Longest goal / request kept, in characters.
const REQUEST_MAX: usize = 1_200;
/// Longest list item, in characters.
const ITEM_MAX: usize = 300;
/// Bounds on candidates per list, so ranking stays cheap on huge inputs.
const LIST_CAP: usize = 200;
/// Below this summary budget the checkpoint is rendered tight (see
/// `render_checkpoint`), with prose clipped to [`TIGHT_PROSE`] characters.
const TIGHT_BUDGET: u64 = 600;
const TIGHT_PROSE: usize = 200;
/// Lines offered again against the real size of the rendered text.
const FILL_TRIES: usize = 24;

/// Priorities of the checkpoint's parts: 0 is admitted first, [`SKIP`] never.
struct Prio {
    goal: u8,
    constraints: u8,
    narrative: u8,
    in_progress: u8,
    narrative_old: u8,
    next: u8,
    last: u8,
    modified: u8,
    read: u8,
    /// Files only carried from a previous summary or the engine's cumulative
    /// list, not touched in the replaced messages.
    modified_old: u8,
    read_old: u8,
    commands: u8,
    commands_old: u8,
    errors: u8,
    errors_old: u8,
    /// Top identifier and symbol lines, and the rest of them.
    top: u8,
    rest: u8,
    earlier: u8,
}

const SKIP: u8 = u8::MAX;

const ROOMY: Prio = Prio {
    goal: 0,
    constraints: 2,
    narrative: 4,
    in_progress: 2,
    narrative_old: 6,
    next: 1,
    last: 0,
    modified: 1,
    read: 3,
    modified_old: 1,
    read_old: 3,
    commands: 3,
    commands_old: 5,
    errors: 1,
    errors_old: 3,
    top: 3,
    rest: 5,
    earlier: 6,
};

const TIGHT: Prio = Prio {
    // The goal is clipped to TIGHT_PROSE characters; without it a tight
    // checkpoint lists facts with no task to hang them on (after the files,
    // which are what an agent re-fetches).
    goal: 2,
    constraints: 4,
    narrative: 6,
    in_progress: 5,
    narrative_old: SKIP,
    next: SKIP,
    last: 2,
    modified: 0,
    read: 0,
    // At a few hundred tokens, the files this part touched come first, then
    // the ones carried from before it.
    modified_old: 1,
    read_old: 1,
    commands: 4,
    commands_old: SKIP,
    errors: 2,
    errors_old: 5,
    top: 2,
    rest: 3,
    earlier: SKIP,
};

/// Lines of identifiers in the first priority tier (the rest only fill what
/// is left).
const IDENT_TOP: usize = 12;
/// Code symbols considered, the longest line of them, and the lines in the
/// first priority tier.
const SYMBOL_CAP: usize = 800;
const SYMBOL_TOP_LINES: usize = 8;
/// Longest line of packed identifiers or symbols, in characters.
const PACK_LINE: usize = 110;

/// An insertion-ordered list without duplicates; re-adding moves an item to the end
/// (most recent), so trimming from the front drops the stalest facts.
#[derive(Default)]
struct Recent {
    items: Vec<String>,
    seen: HashSet<String>,
}

impl Recent {
    fn push(&mut self, s: String) {
        if s.is_empty() {
            return;
        }
        if self.seen.contains(&s) {
            self.items.retain(|x| x != &s);
        } else {
            self.seen.insert(s.clone());
        }
        self.items.push(s);
        if self.items.len() > LIST_CAP {
            let old = self.items.remove(0);
            self.seen.remove(&old);
        }
    }
}

#[derive(Default)]
struct Facts {
    goal: Option<String>,
    constraints: Recent,
    done: Recent,
    in_progress: Recent,
    decisions: Recent,
    commands: Recent,
    errors: Recent,
    last_request: Option<String>,
    /// First human request of this part (the turn's request for a turn prefix).
    first_request: Option<String>,
    prev_next_steps: Vec<String>,
    earlier: Recent,
    /// Identifiers (paths, URLs, hashes, versions, codes) and code symbols,
    /// with where they were seen.
    /// Tallied by name id, in the order first counted: [`ranked`] orders
    /// them totally (score, then name), so neither that order nor the ids
    /// show in a summary.
    idents: Tally,
    symbols: Tally,
    /// Where the ids of `idents` and `symbols` come from: the session's
    /// names when the request is about its session.
    names: Arc<Names>,
    /// Position in the compacted part: one step per message (or per line of a
    /// previous summary), for recency.
    pos: u64,
    file_ops: FileOps,
    /// Last position each file was touched, to list the newest first.
    file_seen: HashMap<String, u64>,
    /// Position where the replaced messages start (after a previous summary):
    /// files touched after it were used in this part, the others are carried.
    scan_start: u64,
    /// The session's working directory (normalized), which atoms' paths are
    /// relative to.
    cwd: Option<String>,
}

/// The occurrences of one identifier, as Σw, Σw·t and Σw·t² over their
/// positions t, so that the recency-weighted score Σ w·(a + t/T)² can be
/// computed once the scan knows the last position T.
#[derive(Default, Clone, Copy)]
struct Seen {
    w: f64,
    wt: f64,
    wtt: f64,
}

/// Weight of an occurrence at the very start relative to one at the end:
/// (RECENCY_FLOOR / (RECENCY_FLOOR + 1))². What the agent touched last is what
/// it is likeliest to need right after the compaction.
const RECENCY_FLOOR: f64 = 0.5;

impl Seen {
    fn add(&mut self, w: f64, t: u64) {
        let t = t as f64;
        self.w += w;
        self.wt += w * t;
        self.wtt += w * t * t;
    }

    fn score(&self, last: u64) -> f64 {
        let a = RECENCY_FLOOR;
        let t = last.max(1) as f64;
        a * a * self.w + 2.0 * a * self.wt / t + self.wtt / (t * t)
    }
}

impl Facts {
    /// Count the identifiers (paths, ids, errors) of one line of text.
    fn ident(&mut self, text: &str, weight: u32) {
        let mut found = Vec::new();
        scan_text(text, Ctx::Prose, self.cwd.as_deref(), &mut found);
        let mut steps = Vec::new();
        push_atoms(&mut steps, &found, weight, 0.0, true, &self.names);
        if let Some(Step::Idents(names, w)) = steps.first() {
            self.count_idents(&names.clone(), *w);
        }
    }

    fn count_idents(&mut self, found: &[Name], weight: u32) {
        for n in found {
            // Vendored and generated trees are listed by `find`/`ls` but rarely
            // what the agent goes back to.
            let w = if n.vendored { f64::from(weight) * 0.1 } else { f64::from(weight) };
            self.idents.add(n, w, self.pos);
        }
    }

    /// Apply one message's step at the current position.
    fn apply(&mut self, step: &Step) {
        match step {
            Step::Request(r) => {
                if self.goal.is_none() {
                    self.goal = Some(r.clone());
                }
                if self.first_request.is_none() {
                    self.first_request = Some(r.clone());
                }
                self.last_request = Some(r.clone());
                // A new request: what was "in progress" belongs to the old one.
                self.in_progress = Recent::default();
            }
            Step::Constraint(s) => self.constraints.push(s.clone()),
            Step::Done(s) => self.done.push(s.clone()),
            Step::InProgress(s) => self.in_progress.push(s.clone()),
            Step::Decision(s) => self.decisions.push(s.clone()),
            Step::Command(s) => self.commands.push(s.clone()),
            Step::Error(s) => self.errors.push(s.clone()),
            Step::File(k, path) => {
                self.file_seen.insert(path.clone(), self.pos);
                self.file_ops.add(*k, path.clone());
            }
            Step::Idents(found, weight) => self.count_idents(found, *weight),
            // Code symbols (quality.md §c.2 shapes: `foo(`, `Foo.bar`,
            // `snake_case`, `CamelCase`, `camelCase`).
            Step::Symbols(found, weight) => {
                for n in found.iter() {
                    self.symbols.add(n, *weight, self.pos);
                }
            }
        }
    }

    /// Read the replaced messages, through `memory` when the request is about
    /// its session (each message is then read once per session).
    fn scan(&mut self, req: &SummaryRequest<'_>, memory: Option<&SessionExtractive<'_>>) {
        let mut calls: Calls<'_> = HashMap::new();
        let names = self.names.clone();
        for &m in req.messages {
            self.pos += 1;
            let kind = kind_of(m);
            let index = memory.and_then(|mem| super::index_in(mem.lens.messages(), m));
            match kind {
                Kind::Summary => {
                    self.absorb_previous(&human_text(m));
                    continue;
                }
                Kind::Other => continue,
                Kind::Assistant | Kind::Human | Kind::ToolResults => {}
            }
            // The session's atoms of the message, or (a copy, no session, or
            // a lens that keeps nothing) its atoms read now.
            let owned;
            let atoms = match memory.zip(index).and_then(|(mem, i)| mem.lens.message(i)) {
                Some(a) => a,
                None => {
                    owned = MessageAtoms::new(m);
                    MessageView::new(m, &owned, self.cwd.as_deref())
                }
            };
            if kind == Kind::Assistant {
                note_calls(m, index, atoms, &mut calls);
            }
            match memory.zip(index) {
                Some((mem, i)) => match mem.steps(i, m, kind, &calls, atoms) {
                    Cow::Borrowed(steps) => steps.iter().for_each(|s| self.apply(s)),
                    Cow::Owned(steps) => steps.iter().for_each(|s| self.apply(s)),
                },
                None => read_message(m, kind, &calls, &names, atoms).iter().for_each(|s| self.apply(s)),
            }
        }
    }

    /// Parse a previous checkpoint (ours or any markdown with `## ` headings) back
    /// into facts so an iterative update keeps them.
    fn absorb_previous(&mut self, text: &str) {
        let mut heading = String::new();
        let mut goal_lines: Vec<&str> = Vec::new();
        let mut request_lines: Vec<&str> = Vec::new();
        for line in text.lines() {
            self.pos += 1;
            let t = line.trim();
            if let Some(h) = t.strip_prefix("### ").or_else(|| t.strip_prefix("## ")) {
                heading = h.trim().to_ascii_lowercase();
                continue;
            }
            if t.is_empty() || t == "- (none)" || t == "(none)" {
                continue;
            }
            let unbulleted = strip_all(strip_all(strip_all(t, "- [x] "), "- [ ] "), "- ");
            let item = strip_all(unbulleted.trim_start_matches(|c: char| c.is_ascii_digit()), ". ");
            match heading.as_str() {
                "goal" => goal_lines.push(t),
                // A turn prefix's request is the one the cut turn answered:
                // the latest, not the session's goal.
                "original request" => request_lines.push(t),
                "constraints & preferences" => self.constraints.push(item.to_string()),
                "done" | "early progress" => self.done.push(item.to_string()),
                "in progress" => self.in_progress.push(item.to_string()),
                "key decisions" => self.decisions.push(item.to_string()),
                "next steps" => self.prev_next_steps.push(item.to_string()),
                "last user request" => request_lines.push(t),
                "files read" => {
                    let f = item.trim_matches('`').to_string();
                    self.file_seen.insert(f.clone(), self.pos);
                    self.file_ops.read.insert(f);
                }
                "files modified" => {
                    let f = item.trim_matches('`').to_string();
                    self.file_seen.insert(f.clone(), self.pos);
                    self.file_ops.modified.insert(f);
                }
                "commands run" => self.commands.push(item.to_string()),
                "errors seen" => self.errors.push(item.to_string()),
                "identifiers" => {
                    // Carried identifiers keep a moderate rank: they mattered once.
                    for id in split_str(item, " · ") {
                        let id = id.trim().trim_matches('`');
                        if !id.is_empty() {
                            let n = self.names.name(id);
                            self.idents.add(&n, 2.0, self.pos);
                        }
                    }
                }
                "code symbols" => {
                    for sym in split_str(item, ", ") {
                        if let Some(sym) = accept_symbol(sym.trim().trim_matches('`')) {
                            let n = self.names.name(sym);
                            self.symbols.add(&n, 2.0, self.pos);
                        }
                    }
                }
                _ => {
                    self.earlier.push(clip_item(t, ITEM_MAX));
                    self.ident(t, 1);
                }
            }
        }
        if self.goal.is_none() && !goal_lines.is_empty() {
            self.goal = Some(goal_lines.join("\n"));
        }
        if self.last_request.is_none() && !request_lines.is_empty() {
            let r = request_lines.join("\n");
            self.last_request = if r == GOAL_ABOVE { self.goal.clone() } else { Some(r) };
        }
    }

    /// Files, most recently touched first (ties and files only known from the
    /// engine's cumulative list by name), rendered with `f`.
    fn newest_first<'s>(&self, files: impl Iterator<Item = &'s str>, f: impl Fn(&str) -> String) -> Vec<String> {
        let mut v: Vec<(u64, &str)> = files.map(|p| (self.file_seen.get(p).copied().unwrap_or(0), p)).collect();
        v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        v.into_iter().map(|(_, p)| f(p)).collect()
    }

    /// [`Facts::newest_first`] split into the files touched in the replaced
    /// messages and the ones only carried from earlier.
    fn recent_first<'s>(
        &self,
        files: impl Iterator<Item = &'s str>,
        f: impl Fn(&str) -> String,
    ) -> (Vec<String>, Vec<String>) {
        let (recent, old): (Vec<&str>, Vec<&str>) =
            files.partition(|p| self.file_seen.get(*p).is_some_and(|&t| t > self.scan_start));
        (self.newest_first(recent.into_iter(), &f), self.newest_first(old.into_iter(), &f))
    }

    /// Identifiers, best first: recency-weighted score, then text
    /// (deterministic). Those the file lists already name are left out.
    fn ranked_idents(&self) -> Vec<&str> {
        // One hashed set of the listed files, made per checkpoint: each of
        // thousands of identifiers was two B-tree searches of string
        // compares (0.85 % of a chars4 replay of 50 MB).
        let ops = &self.file_ops;
        let mut listed: HashSet<Cow<'_, str>> = HashSet::with_capacity(2 * (ops.read.len() + ops.modified.len()));
        for p in ops.read.iter().chain(&ops.modified) {
            // Listed as the tool call spelled it; an atom names it relative
            // to the working directory.
            if let Some(n) = normalize_path(p, self.cwd.as_deref()).filter(|n| n != p) {
                listed.insert(Cow::Owned(n));
            }
            listed.insert(Cow::Borrowed(p.as_str()));
        }
        ranked(self.idents.iter().filter(|(s, _)| !listed.contains(*s)), self.pos, LIST_CAP)
    }

    /// Code symbols, best first, packed into lines. A symbol that a better
    /// ranked one already spells out (`state.todos` in `state.todos.filter`)
    /// is left out: the longer one names it.
    fn symbol_lines(&self, width: usize) -> Vec<String> {
        let mut kept: Vec<&str> = Vec::new();
        // Every run of whole segments of a kept qualified symbol: what it
        // spells out besides itself (the symbols are distinct keys, so no
        // later one is a kept symbol itself).
        let ranked = ranked(self.symbols.iter(), self.pos, SYMBOL_CAP);
        // Sized up front for about two runs a symbol: growing it from empty
        // rehashed it over and over (a tenth of this function's cost).
        let mut named: HashSet<&str> = HashSet::with_capacity(2 * ranked.len());
        for s in ranked {
            if !named.is_empty() && named.contains(s) {
                continue;
            }
            kept.push(s);
            // Most symbols are one segment (`snake_case`, `CamelCase`): they
            // name only themselves.
            if s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                continue;
            }
            let cuts = segment_cuts(s);
            for (i, &(start, _)) in cuts.iter().enumerate() {
                for &(_, end) in &cuts[i..] {
                    named.insert(&s[start..end]);
                }
            }
        }
        pack(kept.into_iter(), ", ", width)
    }

    fn render_checkpoint(&self, req: &SummaryRequest<'_>) -> String {
        // A summary of a few hundred tokens cannot hold the checkpoint: it
        // drops the headings of empty sections and puts the files and
        // identifiers the agent reuses before prose (what `truncate` keeps, and
        // more of it).
        let tight = req.max_tokens < TIGHT_BUDGET;
        let p = if tight { &TIGHT } else { &ROOMY };
        // A request is quoted up to a sixth of the budget (about 4 characters
        // a token), so one long message cannot crowd out the facts.
        let prose_max = (req.max_tokens.saturating_mul(4) / 6).clamp(TIGHT_PROSE as u64, REQUEST_MAX as u64) as usize;
        let prose = |s: &str| clip_item(s, prose_max);
        let mut doc = Doc::new(req);
        doc.compact = tight;
        let none = "(none)".to_string();
        // Section order is fixed; the priority decides what survives the
        // budget (0 = kept first). Within one priority, the items of every
        // section take turns (rank 0 of each, then rank 1…), so a long list
        // cannot starve the others. Narrative (done, intents, decisions) keeps
        // its newest items; the rest of the budget goes to the facts the agent
        // reuses: files, commands, errors, identifiers and code symbols.
        doc.section("## Goal");
        doc.block(p.goal, prose(self.goal.as_deref().unwrap_or("(none)")));
        doc.section("## Constraints & Preferences");
        doc.list(p.constraints, "- ", &self.constraints.items, true);
        doc.section("## Progress");
        doc.section("### Done");
        doc.list_split(p.narrative, p.narrative_old, "- [x] ", &self.done.items, 3);
        doc.section("### In Progress");
        doc.list_split(p.in_progress, p.narrative_old, "- [ ] ", &self.in_progress.items, 3);
        doc.section("## Key Decisions");
        doc.list_split(p.narrative, p.narrative_old, "- ", &self.decisions.items, 3);
        doc.section("## Next Steps");
        let next: Vec<String> = match &self.last_request {
            Some(r) => vec![format!("Continue with the last user request: {}", clip_item(r, ITEM_MAX))],
            None => self.prev_next_steps.clone(),
        };
        doc.numbered(p.next, &next);
        doc.section("## Critical Context");
        doc.section("### Last user request");
        // Often the goal itself early in a session: say so instead of repeating it.
        let last = match &self.last_request {
            Some(r) if Some(r) == self.goal.as_ref() => GOAL_ABOVE.to_string(),
            Some(r) => prose(r),
            None => none,
        };
        doc.block(p.last, last);
        // Tight: bare paths, one per line (a bullet and backticks are a token
        // per file).
        let bullet = if tight { "" } else { "- " };
        let file = |p: &str| if tight { p.to_string() } else { ["`", p, "`"].concat() };
        doc.section("### Files modified");
        let (recent, old) = self.recent_first(self.file_ops.modified.iter().map(String::as_str), file);
        doc.list(p.modified, bullet, &recent, false);
        doc.list(p.modified_old, bullet, &old, false);
        doc.section("### Files read");
        let (recent, old) = self.recent_first(self.file_ops.read_only(), file);
        doc.list(p.read, bullet, &recent, false);
        doc.list(p.read_old, bullet, &old, false);
        doc.section("### Commands run");
        doc.list_split(p.commands, p.commands_old, "- ", &self.commands.items, 10);
        doc.section("### Errors seen");
        // The newest errors are the likeliest to matter next.
        doc.list_split(p.errors, p.errors_old, "- ", &self.errors.items, 5);
        doc.section("### Identifiers");
        // Shorter lines under a tight budget: the last one that fits is closer
        // to the budget.
        let width = if tight { PACK_LINE / 2 } else { PACK_LINE };
        let ids = pack(self.ranked_idents().into_iter().map(|s| ["`", s, "`"].concat()), " · ", width);
        doc.ranked(p.top, p.rest, "- ", &ids, IDENT_TOP);
        doc.section("### Code symbols");
        doc.ranked(p.top, p.rest, "- ", &self.symbol_lines(width), SYMBOL_TOP_LINES);
        if !self.earlier.items.is_empty() {
            doc.section("### Earlier context");
            doc.list(p.earlier, "- ", &self.earlier.items, true);
        }
        doc.render()
    }

    fn render_turn_prefix(&self, req: &SummaryRequest<'_>) -> String {
        let mut doc = Doc::new(req);
        doc.section("## Original Request");
        let request = self.first_request.clone().or_else(|| self.last_request.clone());
        doc.block(0, request.unwrap_or_else(|| "(none)".to_string()));
        doc.section("## Early Progress");
        let mut progress: Vec<String> = self.done.items.clone();
        progress.extend(
            self.newest_first(self.file_ops.modified.iter().map(String::as_str), |p| format!("modified `{p}`")),
        );
        progress.extend(self.commands.items.iter().cloned());
        doc.list_split(2, 4, "- ", &progress, 10);
        doc.section("## Context for Suffix");
        let mut ctx: Vec<String> = self.in_progress.items.clone();
        ctx.extend(self.errors.items.iter().cloned());
        ctx.extend(self.decisions.items.iter().cloned());
        ctx.extend(self.newest_first(self.file_ops.read_only(), |p| format!("read `{p}`")));
        doc.list_split(1, 4, "- ", &ctx, 8);
        // The turn being cut is the freshest work: its identifiers and symbols
        // are the likeliest to be used next.
        doc.section("### Identifiers");
        let ids = pack(self.ranked_idents().into_iter().map(|s| ["`", s, "`"].concat()), " · ", PACK_LINE);
        doc.ranked(2, 5, "- ", &ids, IDENT_TOP);
        doc.section("### Code symbols");
        doc.ranked(2, 5, "- ", &self.symbol_lines(PACK_LINE), SYMBOL_TOP_LINES);
        doc.render()
    }
}

/// Every identifier, symbol, command and quoted error the summarizer takes
/// from the messages of `lens` (read as one request), as it spells them.
#[cfg(test)]
pub(crate) fn collected(lens: &SessionLens<'_>) -> std::collections::BTreeSet<String> {
    let names = Names::default();
    let mut calls: Calls<'_> = HashMap::new();
    let mut out = std::collections::BTreeSet::new();
    for (i, m) in lens.messages().iter().enumerate() {
        let kind = kind_of(m);
        let Some(atoms) = lens.message(i) else { continue };
        if kind == Kind::Assistant {
            note_calls(m, Some(i), atoms, &mut calls);
        }
        for step in read_message(m, kind, &calls, &names, atoms) {
            match step {
                Step::Idents(found, _) | Step::Symbols(found, _) => {
                    out.extend(found.iter().map(|n| n.text.to_string()))
                }
                Step::Command(line) => {
                    let (cmds, status) = line.rsplit_once(" → ").unwrap_or((line.as_str(), ""));
                    out.extend(split_str(cmds, ", ").map(|c| c.trim_matches('`').to_string()));
                    if status.starts_with("exit code ") {
                        out.insert(status.to_string());
                    }
                }
                Step::Error(line) => {
                    out.insert(line.split_once(": ").map_or(line.as_str(), |(_, e)| e).to_string());
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "extractive_tests.rs"]
mod tests;
