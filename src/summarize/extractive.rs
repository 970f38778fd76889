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
//! Each replaced message is read into [`Step`]s (a request, a constraint, a
//! file touched, identifier occurrences…) that are then applied at its
//! position. A sweep or `compare` replaces the same messages under many
//! policies: [`SessionExtractive`] reads each of a session's messages once
//! (naming each identifier and symbol once, by id) and applies the kept steps
//! at every compaction.

use super::{
    SummarizeError, Summarizer, SummarizerUsage, Summary, SummaryPart, SummaryRequest, head_chars, tool_result_text,
};
use crate::filetrack::FileOps;
use crate::model::{Block, Message, Origin, Role};
use crate::quality::words::{Words, split_str};
use foldhash::{HashMap, HashMapExt as _, HashSet, HashSetExt as _};
use regex::Regex;
use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

pub struct Extractive;

impl Summarizer for Extractive {
    fn name(&self) -> &str {
        "extractive"
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        Ok(summarize(req, None))
    }

    fn for_session<'s>(&'s self, messages: &'s [Message]) -> Option<Box<dyn Summarizer + 's>> {
        Some(Box::new(SessionExtractive::new(messages)))
    }
}

/// The extractive summarizer for one session's requests: it reads each of the
/// session's messages once and keeps what it found (the message's [`Step`]s),
/// so the compactions of a sweep's or `compare`'s policies, which replace the
/// same messages again and again, only apply them. Same answers as
/// [`Extractive`]; held until the session's last replay.
pub struct SessionExtractive<'s> {
    messages: &'s [Message],
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
    pub fn new(messages: &'s [Message]) -> SessionExtractive<'s> {
        SessionExtractive {
            messages,
            read: (0..messages.len()).map(|_| OnceLock::new()).collect(),
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
    fn steps(&self, i: usize, m: &Message, kind: Kind, calls: &Calls<'_>) -> Cow<'_, [Step]> {
        let refs = if kind == Kind::ToolResults { call_refs(m, calls) } else { Vec::new() };
        let names = &self.names;
        let Some(slot) = self.read.get(i).filter(|_| !refs.contains(&CallRef::Foreign)) else {
            return Cow::Owned(read_message(m, kind, calls, names));
        };
        let read = slot.get_or_init(|| {
            self.reads.fetch_add(1, Ordering::Relaxed);
            Read { calls: refs.clone(), steps: read_message(m, kind, calls, names) }
        });
        if read.calls == refs { Cow::Borrowed(&read.steps) } else { Cow::Owned(read_message(m, kind, calls, names)) }
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
    let mut facts = Facts { names: memory.map(|m| m.names.clone()).unwrap_or_default(), ..Facts::default() };
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
    Summary { text, file_ops: facts.file_ops, usage: SummarizerUsage::default() }
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

fn re(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

static CONSTRAINT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)(must|never|always|don'?t|do not|only|should ?n[o']t|avoid|make sure|ensure|required?|prefer|without)(?-u:\b)",
    )
});
static DECISION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)(decided|decision|instead of|i'?ll use|we'?ll use|i will use|chose|choose|going with|switch(?:ed)? to|the fix is|root cause|the problem is|the issue is|because)(?-u:\b)",
    )
});
static DONE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"(?i)^\s*(done|fixed|implemented|added|updated|created|removed|refactored|renamed|all tests pass|tests pass|i'?ve|i have|successfully|the build (now )?passes)(?-u:\b)",
    )
});
static INTENT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(r"(?i)^\s*(now,? (i'?ll|let me)|let me|i'?ll|i will|next,? i|i'?m going to|i am going to)(?-u:\b)")
});
static ERROR_LINE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"(?i)((?-u:\b)error(?-u:\b)|(?-u:\b)failed(?-u:\b)|(?-u:\b)failure(?-u:\b)|panicked|traceback|exception|fatal:|no such file|not found|cannot |permission denied|segmentation fault|(?-u:\b)E\d{4}(?-u:\b))",
    )
});
static EXIT_CODE: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"(?i)(?:exit code:?|exited with(?: code)?|exit status:?|process exited with code)\s*(-?\d+)"));
/// Identifier patterns, one alternation so a text is scanned once: URL, UUID,
/// path, file name, hex hash, version, error code, ticket, issue, code symbol
/// (`mod::item`, snake_case, camelCase). Matching is
/// leftmost-first, so a path inside a URL or a file name inside a path is part of
/// the larger identifier, not another one.
static IDENTS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    // ASCII classes and word boundaries keep the whole alternation in the fast
    // DFA engines (Unicode `\b` is not supported there).
    let parts = [
        r#"https?://[^\s<>"'`)\]]+"#,
        r"(?-u:\b)[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?-u:\b)",
        r"(?:~|\.{1,2})?/?(?:[A-Za-z0-9_.@+-]+/)+[A-Za-z0-9_.@+-]+",
        r"(?-u:\b)[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.(?:rs|py|ts|tsx|js|jsx|mjs|go|java|kt|c|h|cc|cpp|hpp|cs|rb|ex|exs|swift|php|md|toml|json|jsonl|yaml|yml|txt|sh|sql|html|css|lock|cfg|ini|xml|proto|ipynb)(?-u:\b)",
        r"(?-u:\b)[0-9a-f]{7,40}(?-u:\b)",
        r"(?-u:\b)v?[0-9]+\.[0-9]+\.[0-9]+(?:[-+][A-Za-z0-9_.]+)?(?-u:\b)",
        r"(?-u:\b)[A-Z]{1,5}[0-9]{3,5}(?-u:\b)",
        r"(?-u:\b)[A-Z][A-Z0-9]{1,9}-[0-9]{1,6}(?-u:\b)",
        r"#[0-9]{2,6}(?-u:\b)",
    ];
    re(&parts.iter().map(|p| format!("(?:{p})")).collect::<Vec<_>>().join("|"))
});

/// Tool output scanned for identifiers and errors when the policy sets no
/// preview: the head and tail of each result (bulk output in the middle of a long
/// listing rarely fits a bounded summary, and scanning it all would make the
/// summarizer cost grow with output size rather than with the number of facts).
const SCAN_HEAD: usize = 24_000;
const SCAN_TAIL: usize = 4_000;

fn matches(r: &LazyLock<Option<Regex>>, s: &str) -> bool {
    r.as_ref().is_some_and(|r| r.is_match(s))
}

/// Sentences of a text: lines, then `. `/`? ` boundaries.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.lines().flat_map(sentence_pieces).map(str::trim).filter(|s| {
        // Skip code-ish noise: fences, very short fragments.
        s.len() > 3 && !s.starts_with("```")
    })
}

/// The pieces of a line, each ending right after a `. ` or a `? ` (or at the
/// line's end): what `split_inclusive(". ")` and then `split_inclusive("? ")`
/// give, found by looking for spaces rather than by two substring searchers
/// per line (0.7 % of a chars4 replay of the 200 MB benchmark corpus).
fn sentence_pieces(line: &str) -> impl Iterator<Item = &str> {
    let b = line.as_bytes();
    let mut start = 0;
    let mut spaces = memchr::memchr_iter(b' ', b);
    std::iter::from_fn(move || {
        if start >= line.len() {
            return None;
        }
        let from = start;
        // The byte before a space is ASCII when it is `.` or `?`, so the cut
        // right after the space is a character boundary.
        start = spaces.find(|&i| i > from && matches!(b[i - 1], b'.' | b'?')).map_or(line.len(), |i| i + 1);
        line.get(from..start)
    })
}

const SHELL_TOOLS: [&str; 10] = [
    "bash",
    "shell",
    "exec_command",
    "run_shell_command",
    "execute_command",
    "run_terminal_cmd",
    "local_shell",
    "command",
    "terminal",
    "run_command",
];

fn is_shell(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    SHELL_TOOLS.contains(&n.rsplit("__").next().unwrap_or(&n))
}

/// The command string of a shell tool call (`["bash","-lc","cmd"]` → `cmd`).
fn command_of(input: &serde_json::Value) -> Option<String> {
    let c = input.get("command").or_else(|| input.get("cmd"))?;
    match c {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(a) => {
            let parts: Vec<&str> = a.iter().filter_map(|x| x.as_str()).collect();
            match parts.as_slice() {
                [sh, flag, cmd] if (sh.ends_with("sh")) && flag.starts_with('-') => Some((*cmd).to_string()),
                _ => Some(parts.join(" ")),
            }
        }
        _ => None,
    }
}

fn human_text(m: &Message) -> String {
    m.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The accepted identifiers of a text, one entry per occurrence, in order.
/// Not memoized by text: a session's messages are read once each
/// ([`SessionExtractive`]; a single replay's compactions replace each message
/// once), so hashing every text to look it up found next to nothing, at the
/// price of a tenth of the summarizer's reading.
fn idents_of(text: &str) -> Vec<&str> {
    let Some(r) = IDENTS.as_ref() else { return Vec::new() };
    let mut out = Vec::new();
    for m in r.find_iter(text) {
        let s = m.as_str().trim_end_matches(['.', ',', ':', ';']);
        // `response.json()` is a method call, not a file; `@file.txt` and
        // `x.file.txt` are not the file `file.txt`.
        let glued = !s.contains('/')
            && text[..m.start()].chars().next_back().is_some_and(|c| c.is_alphanumeric() || "@.-_$".contains(c));
        if !plausible_ident(s) || glued || text[m.end()..].starts_with('(') {
            continue;
        }
        out.push(s);
    }
    out
}

/// The accepted code symbols of a text (the shapes of quality.md §c.2, as
/// atom extraction matches them), one entry per occurrence, in order; not
/// memoized either (see [`idents_of`]).
fn symbols_of(text: &str) -> Vec<&str> {
    let words = Words::of(text);
    words.symbols().filter_map(|(start, end)| accept_symbol(&text[start..end])).collect()
}

/// An identifier or code symbol, with its id among its [`Names`].
#[derive(Clone)]
struct Name {
    id: u32,
    text: Arc<str>,
    /// In a vendored or generated tree ([`is_vendored`]).
    vendored: bool,
}

/// Identifier and symbol texts, each with an id. The facts of a request count
/// occurrences in a table indexed by id ([`Tally`]): a text is hashed once,
/// when its message is read, rather than at every occurrence by every
/// compaction that replaces the message (a sweep's policies replace the same
/// messages hundreds of times). Ids follow the order texts were first seen,
/// which across threads is not fixed, so nothing is ordered by them.
#[derive(Default)]
struct Names {
    ids: Mutex<HashMap<Arc<str>, (u32, bool)>>,
}

impl Names {
    /// The names of `texts`, in order (borrowed from the text they were
    /// found in: only a name seen for the first time is copied).
    fn all(&self, texts: &[&str]) -> Arc<[Name]> {
        // A poisoned lock (a panic elsewhere) still holds whole entries.
        let mut ids = self.ids.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        texts.iter().map(|t| Self::intern(&mut ids, t)).collect()
    }

    fn name(&self, text: &str) -> Name {
        Self::intern(&mut self.ids.lock().unwrap_or_else(std::sync::PoisonError::into_inner), text)
    }

    fn intern(ids: &mut HashMap<Arc<str>, (u32, bool)>, text: &str) -> Name {
        if let Some((t, &(id, vendored))) = ids.get_key_value(text) {
            return Name { id, text: t.clone(), vendored };
        }
        // Beyond u32::MAX distinct texts (not reachable in memory) ids
        // would be shared, merging counts, never out of bounds.
        let id = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        let vendored = is_vendored(text);
        let text: Arc<str> = Arc::from(text);
        ids.insert(text.clone(), (id, vendored));
        Name { id, text, vendored }
    }
}

/// The occurrences of names, by id, in the order names were first counted.
#[derive(Default)]
struct Tally {
    /// Per id, 1 + the index of its entry; 0 when not counted yet.
    slot: Vec<u32>,
    entries: Vec<(Arc<str>, Seen)>,
}

impl Tally {
    /// Count an occurrence of `name` (weight `w`, position `pos`).
    fn add(&mut self, name: &Name, w: f64, pos: u64) {
        let id = name.id as usize;
        if id >= self.slot.len() {
            self.slot.resize(id + 1, 0);
        }
        let k = match self.slot[id] {
            0 => {
                self.entries.push((name.text.clone(), Seen::default()));
                self.slot[id] = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
                self.entries.len() - 1
            }
            k => k as usize - 1,
        };
        if let Some((_, seen)) = self.entries.get_mut(k) {
            seen.add(w, pos);
        }
    }

    fn iter(&self) -> impl Iterator<Item = (&str, &Seen)> {
        self.entries.iter().map(|(t, s)| (&**t, s))
    }
}

/// How a message takes part in a scan.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Human,
    /// A previous summary replayed as a message (no iterative update).
    Summary,
    Assistant,
    ToolResults,
    Other,
}

fn kind_of(m: &Message) -> Kind {
    match (m.role, m.origin) {
        (Role::User, Origin::Human) if !m.has_tool_results() => Kind::Human,
        (_, Origin::CompactSummary) => Kind::Summary,
        (Role::Assistant, _) => Kind::Assistant,
        (Role::User, _) if m.has_tool_results() => Kind::ToolResults,
        _ => Kind::Other,
    }
}

/// Where a tool result's call was found: what was read of a result can be
/// reused when its calls are the same ones.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum CallRef {
    /// Not in the request: the result reads as an unknown tool's.
    Missing,
    /// Block `.1` of the session's message `.0`.
    At(usize, usize),
    /// In a message that is not one of the session's own (a copy): nothing
    /// identifies it from one request to the next.
    Foreign,
}

/// A tool call seen earlier in the request, for the results that follow.
#[derive(Clone, Copy)]
struct Call<'m> {
    name: &'m str,
    input: &'m serde_json::Value,
    at: CallRef,
}

type Calls<'m> = HashMap<&'m str, Call<'m>>;

/// Record the tool calls of an assistant message (`index`: its place in the
/// session, when it is one of the session's messages).
fn note_calls<'m>(m: &'m Message, index: Option<usize>, calls: &mut Calls<'m>) {
    for (bi, b) in m.blocks.iter().enumerate() {
        if let Block::ToolUse { id, name, input } = b {
            let at = index.map_or(CallRef::Foreign, |i| CallRef::At(i, bi));
            calls.insert(id.as_str(), Call { name: name.as_str(), input, at });
        }
    }
}

/// The calls a message's tool results answer, in block order.
fn call_refs(m: &Message, calls: &Calls<'_>) -> Vec<CallRef> {
    m.blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { tool_use_id, .. } => {
                Some(calls.get(tool_use_id.as_str()).map_or(CallRef::Missing, |c| c.at))
            }
            _ => None,
        })
        .collect()
}

/// What one replaced message adds to the facts, in the order the scan reads
/// it. A function of the message (and of the calls its results answer), not of
/// the facts so far: a session's messages are read once and their steps
/// applied at every compaction that replaces them ([`SessionExtractive`]).
#[derive(Clone)]
enum Step {
    /// A human request (clipped): the goal when there is none yet, the first
    /// and the last request; it ends what was in progress.
    Request(String),
    Constraint(String),
    Done(String),
    InProgress(String),
    Decision(String),
    Command(String),
    Error(String),
    File(crate::filetrack::FileOpKind, String),
    /// Identifier occurrences and their weight.
    Idents(Arc<[Name]>, u32),
    /// Code symbol occurrences and their weight.
    Symbols(Arc<[Name]>, f64),
}

fn push_idents(steps: &mut Vec<Step>, text: &str, weight: u32, names: &Names) {
    let found = idents_of(text);
    if !found.is_empty() {
        steps.push(Step::Idents(names.all(&found), weight));
    }
}

fn push_symbols(steps: &mut Vec<Step>, text: &str, weight: f64, names: &Names) {
    let found = symbols_of(text);
    if !found.is_empty() {
        steps.push(Step::Symbols(names.all(&found), weight));
    }
}

/// The steps of one message of kind `kind` (not [`Kind::Summary`], which
/// is merged as a previous summary).
fn read_message(m: &Message, kind: Kind, calls: &Calls<'_>, names: &Names) -> Vec<Step> {
    let mut steps = Vec::new();
    match kind {
        Kind::Human => {
            let text = human_text(m);
            if text.trim().is_empty() {
                return steps;
            }
            steps.push(Step::Request(clip_block(&text, REQUEST_MAX)));
            for s in sentences(&text) {
                if matches(&CONSTRAINT, s) {
                    steps.push(Step::Constraint(clip_item(s, ITEM_MAX)));
                }
            }
            push_idents(&mut steps, &text, 3, names);
            push_symbols(&mut steps, &text, 2.0, names);
        }
        Kind::Assistant => {
            for b in &m.blocks {
                match b {
                    Block::Text { text } => {
                        for s in sentences(text) {
                            if matches(&DONE, s) {
                                steps.push(Step::Done(clip_item(s, ITEM_MAX)));
                            } else if matches(&INTENT, s) {
                                steps.push(Step::InProgress(clip_item(s, ITEM_MAX)));
                            }
                            if matches(&DECISION, s) {
                                steps.push(Step::Decision(clip_item(s, ITEM_MAX)));
                            }
                        }
                        push_idents(&mut steps, text, 2, names);
                        push_symbols(&mut steps, text, 2.0, names);
                    }
                    Block::ToolUse { name, input, .. } => {
                        for (k, path) in crate::filetrack::tool_file_ops(name, input) {
                            steps.push(Step::File(k, path));
                        }
                        if is_shell(name) {
                            if let Some(c) = command_of(input) {
                                push_idents(&mut steps, &c, 3, names);
                                push_symbols(&mut steps, &c, 3.0, names);
                            }
                        } else {
                            read_json(input, 0, &mut steps, names);
                        }
                    }
                    _ => {}
                }
            }
        }
        Kind::ToolResults => {
            for b in &m.blocks {
                let Block::ToolResult { tool_use_id, content, is_error } = b else { continue };
                let full = tool_result_text(content);
                // The policy's preview limits bound what an LLM summarizer
                // is sent; this one reads the output itself, bounded by
                // its own window.
                let text = preview_words(&full, SCAN_HEAD, SCAN_TAIL);
                let (name, input) = calls.get(tool_use_id.as_str()).map_or(("tool", &NULL), |c| (c.name, c.input));
                let failed = *is_error == Some(true);
                let exit = EXIT_CODE
                    .as_ref()
                    .and_then(|r| r.captures(&text))
                    .and_then(|c| c.get(1))
                    .and_then(|g| g.as_str().parse::<i64>().ok());
                if is_shell(name)
                    && let Some(cmd) = command_of(input)
                {
                    let status = match (exit, failed) {
                        (Some(code), _) => format!("exit {code}"),
                        (None, true) => "failed".to_string(),
                        (None, false) => "ok".to_string(),
                    };
                    steps.push(Step::Command(format!("`{}` → {status}", clip_item(&cmd, 160))));
                }
                let nonzero = exit.is_some_and(|c| c != 0);
                // Error-looking lines count from what a command printed or
                // a call that failed: in a file the agent read, `catch
                // (error)` is code, not a failure.
                let may_err = failed || nonzero || is_shell(name);
                // Otherwise no line is looked at (nor split off: the test
                // below would walk every line of the output to find none).
                let searched = if may_err { text.as_ref() } else { "" };
                let mut error_lines = searched.lines().filter(|l| matches(&ERROR_LINE, l)).take(2).peekable();
                if failed || nonzero || error_lines.peek().is_some() {
                    let lines: Vec<String> = error_lines.map(|l| clip_item(l, 200)).collect();
                    let shown = if lines.is_empty() {
                        text.lines().find(|l| !l.trim().is_empty()).map(|l| clip_item(l, 200)).unwrap_or_default()
                    } else {
                        lines.join(" | ")
                    };
                    if !shown.is_empty() {
                        steps.push(Step::Error(format!("{name}: {shown}")));
                    }
                    // Identifiers on error lines matter more than those in bulk output.
                    push_idents(&mut steps, &shown, 2, names);
                }
                push_idents(&mut steps, &text, 1, names);
                push_symbols(&mut steps, &text, 2.0, names);
            }
        }
        Kind::Summary | Kind::Other => {}
    }
    steps
}

/// The strings of a tool call's arguments: code the agent wrote (edit/write
/// contents, patterns) is what it works on next. Bounded like tool output.
fn read_json(v: &serde_json::Value, depth: usize, steps: &mut Vec<Step>, names: &Names) {
    if depth > 8 {
        return;
    }
    match v {
        serde_json::Value::String(s) => {
            let text = preview_words(s, SCAN_HEAD, SCAN_TAIL);
            push_idents(steps, &text, 3, names);
            push_symbols(steps, &text, 3.0, names);
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| read_json(x, depth + 1, steps, names)),
        serde_json::Value::Object(o) => o.values().for_each(|x| read_json(x, depth + 1, steps, names)),
        _ => {}
    }
}

impl Facts {
    /// Count the identifiers (paths, file names, ids, error codes) of one text.
    fn ident(&mut self, text: &str, weight: u32) {
        let found = self.names.all(&idents_of(text));
        self.count_idents(&found, weight);
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
            let index = memory.and_then(|mem| super::index_in(mem.messages, m));
            match kind {
                Kind::Summary => {
                    self.absorb_previous(&human_text(m));
                    continue;
                }
                Kind::Other => continue,
                Kind::Assistant => note_calls(m, index, &mut calls),
                Kind::Human | Kind::ToolResults => {}
            }
            match memory.zip(index) {
                Some((mem, i)) => match mem.steps(i, m, kind, &calls) {
                    Cow::Borrowed(steps) => steps.iter().for_each(|s| self.apply(s)),
                    Cow::Owned(steps) => steps.iter().for_each(|s| self.apply(s)),
                },
                None => read_message(m, kind, &calls, &names).iter().for_each(|s| self.apply(s)),
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
        let mut listed = HashSet::with_capacity(ops.read.len() + ops.modified.len());
        listed.extend(ops.read.iter().chain(&ops.modified).map(String::as_str));
        ranked(self.idents.iter().filter(|(s, _)| !listed.contains(s)), self.pos, LIST_CAP)
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

static NULL: serde_json::Value = serde_json::Value::Null;

/// File extensions and top-level domains: `page.tsx` and `github.com` are not
/// member accesses.
/// (`.log` and `.map` are left out: `console.log` and `items.map` are code.)
const NOT_MEMBERS: [&str; 38] = [
    "rs", "py", "ts", "tsx", "js", "jsx", "mjs", "cjs", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp", "cs", "rb",
    "md", "toml", "json", "jsonl", "yaml", "yml", "txt", "sh", "sql", "html", "css", "lock", "xml", "com", "org",
    "net", "io", "dev", "ai", "app",
];

/// The longest of [`NOT_MEMBERS`]: a longer last segment is none of them.
const NOT_MEMBER_MAX: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < NOT_MEMBERS.len() {
        if NOT_MEMBERS[i].len() > max {
            max = NOT_MEMBERS[i].len();
        }
        i += 1;
    }
    max
};

/// Words that look like calls (`if (`) but are syntax.
const CALL_KEYWORDS: [&str; 12] =
    ["if", "for", "while", "switch", "return", "catch", "function", "match", "elif", "and", "not", "with"];

/// `s` without any repeats of `prefix` at its start: `trim_start_matches`,
/// without building a substring searcher for each call (a previous summary's
/// every line is stripped of its bullets).
fn strip_all<'s>(mut s: &'s str, prefix: &str) -> &'s str {
    while let Some(rest) = s.strip_prefix(prefix).filter(|_| !prefix.is_empty()) {
        s = rest;
    }
    s
}

/// A symbol match worth listing, without its call parenthesis.
fn accept_symbol(m: &str) -> Option<&str> {
    let call = m.ends_with('(');
    let s = m.trim_end_matches('(');
    if s.len() < 3 || s.len() > 80 {
        return None;
    }
    if rejected_shape(s, call) {
        return None;
    }
    // `isError`, `event.isError`: flags and fields, which read as error names
    // (an exception class) and would name an error that never happened.
    let error_like = s.ends_with("Error") || s.ends_with("Exception");
    if error_like && (s.contains('.') || s.starts_with(|c: char| c.is_ascii_lowercase())) {
        return None;
    }
    Some(s)
}

/// A qualified name (`.` or `::`) whose segments are all one or two bytes
/// long, or a dotted one whose last segment is a file extension or a domain
/// (`main.rs`, `example.com`); a call of a syntax keyword (`if (`).
fn rejected_shape(s: &str, call: bool) -> bool {
    // Byte tests and one pass over the segments, not `contains("::")` and
    // `split(['.', ':'])`: setting up a substring or char searcher cost more
    // than this whole check on a symbol's few bytes.
    let b = s.as_bytes();
    let dotted = b.contains(&b'.');
    if dotted || b.windows(2).any(|w| w == b"::") {
        // Its segments between `.` and `:`, empty ones aside: is one longer
        // than 2, and which is the last?
        let (mut long, mut last): (bool, &[u8]) = (false, &[]);
        for seg in b.split(|&c| c == b'.' || c == b':').filter(|x| !x.is_empty()) {
            long |= seg.len() > 2;
            last = seg;
        }
        !long
            || (dotted
                && last.len() <= NOT_MEMBER_MAX
                && NOT_MEMBERS.iter().any(|n| n.as_bytes().eq_ignore_ascii_case(last)))
    } else {
        call && CALL_KEYWORDS.contains(&s)
    }
}

/// Byte ranges of the identifier segments of a qualified symbol
/// (`this.state.todos` → `this`, `state`, `todos`): any run of them is a
/// symbol the whole one spells out between identifier boundaries.
fn segment_cuts(s: &str) -> Vec<(usize, usize)> {
    let mut cuts = Vec::new();
    let mut start = None;
    for (i, b) in s.bytes().enumerate() {
        let inner = b.is_ascii_alphanumeric() || b == b'_';
        match (inner, start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                cuts.push((st, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(st) = start {
        cuts.push((st, s.len()));
    }
    cuts
}

/// Paths inside dependency, VCS and build trees.
fn is_vendored(s: &str) -> bool {
    // Each tree's marker ends in a `/`, so one occurs iff the text up to some
    // `/` ends with it: one pass over the slashes (most identifiers have
    // none) instead of a substring search per marker, for every occurrence
    // an iterative scan counts.
    memchr::memchr_iter(b'/', s.as_bytes()).any(|i| {
        let head = &s.as_bytes()[..=i];
        VENDORED.iter().any(|d| head.ends_with(d.as_bytes()))
    })
}

/// Vendored and generated trees (see [`is_vendored`]); each ends in `/`.
const VENDORED: [&str; 8] =
    ["node_modules/", ".git/", "/.next/", "/dist/", "/target/", "site-packages/", "/.venv/", "/vendor/"];

/// The `top` best keys by recency-weighted score, best first; ties by text.
/// The order is total, so selecting the top before sorting them gives the
/// same list as sorting all (a session names thousands of symbols; a
/// checkpoint lists a few hundred).
fn ranked<'m>(entries: impl Iterator<Item = (&'m str, &'m Seen)>, last: u64, top: usize) -> Vec<&'m str> {
    // `f64::total_cmp`'s order as an integer, computed once per key rather
    // than twice per comparison (a session names thousands of symbols).
    let total_order = |x: f64| {
        let b = x.to_bits() as i64;
        b ^ (((b >> 63) as u64) >> 1) as i64
    };
    let mut v: Vec<(&str, i64)> = entries.map(|(k, s)| (k, total_order(s.score(last)))).collect();
    let order = |a: &(&str, i64), b: &(&str, i64)| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0));
    if v.len() > top {
        v.select_nth_unstable_by(top, order);
        v.truncate(top);
    }
    // Keys are distinct, so no two entries tie and an unstable sort gives
    // the stable one's order.
    v.sort_unstable_by(order);
    v.into_iter().map(|(k, _)| k).collect()
}

/// Items joined by `sep` into lines of at most about `width` characters, in
/// order: one list item per line costs a bullet and a newline per identifier.
fn pack<S: AsRef<str>>(items: impl Iterator<Item = S>, sep: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    // Lines are about `width` long: allocated once, not grown item by item.
    let mut line = String::with_capacity(width);
    for s in items {
        let s = s.as_ref();
        if !line.is_empty() && line.len() + s.len() + sep.len() > width {
            lines.push(std::mem::replace(&mut line, String::with_capacity(width)));
        }
        if !line.is_empty() {
            line.push_str(sep);
        }
        line.push_str(s);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Head and tail of a long text, each cut on whitespace so the scan never
/// sees half a path or identifier at the seams.
fn preview_words(s: &str, head: usize, tail: usize) -> Cow<'_, str> {
    if s.len() <= head + tail {
        return Cow::Borrowed(s);
    }
    let h = head_chars(s, head);
    let h = h.rfind(char::is_whitespace).map_or(h, |i| &h[..i]);
    let t = super::tail_chars(s, tail);
    let t = t.find(char::is_whitespace).map_or(t, |i| &t[i..]);
    Cow::Owned(format!("{h}\n[…]\n{t}"))
}

/// One line of at most `max` characters, cut on whitespace: a half-written
/// path or identifier names nothing that exists (it would read as invented).
/// Only a line that is a single huge token is cut inside it.
fn clip_item(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let head = head_chars(&one, max.saturating_sub(1));
    match head.rfind(' ') {
        Some(i) if i > 0 => format!("{} …", &head[..i]),
        _ => format!("{head}…"),
    }
}

fn plausible_ident(s: &str) -> bool {
    let n = s.chars().count();
    if !(3..=200).contains(&n) {
        return false;
    }
    // A hex run must mix digits and letters to be a hash, not a word or a number.
    if s.chars().all(|c| c.is_ascii_hexdigit()) {
        return s.chars().any(|c| c.is_ascii_digit()) && s.chars().any(|c| c.is_ascii_alphabetic());
    }
    // `a/b` fragments of prose ("and/or") are not paths.
    !s.contains('/') || s.contains('.') || s.matches('/').count() != 1 || s.starts_with('/')
}

/// A multi-line block clipped to `max` characters.
fn clip_block(s: &str, max: usize) -> String {
    let t = s.trim();
    if t.chars().count() <= max { t.to_string() } else { format!("{}…", super::head_chars(t, max.saturating_sub(1))) }
}

/// Fewest tokens worth a clipped block: below this the head says nothing.
const MIN_CLIP_TOKENS: u64 = 8;

/// The longest word-boundary head of `text` (ending in `…`) that costs at
/// most `room`; `None` when not even a few words fit.
fn clip_to_tokens(text: &str, room: u64, cost: &dyn Fn(&str) -> u64) -> Option<String> {
    if room < MIN_CLIP_TOKENS {
        return None;
    }
    // Binary search on the character count: the cost grows with the head.
    let (mut lo, mut hi) = (0usize, text.chars().count());
    let mut best = None;
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let head = clip_item(text, mid);
        if cost(&head) <= room {
            best = Some(head);
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    best.filter(|h| h.chars().any(char::is_alphanumeric))
}

/// A document whose lines are admitted by priority under a token budget and
/// printed in section order.
struct Doc<'a> {
    req: &'a SummaryRequest<'a>,
    /// (line, priority, rank within priority: lower first, section index)
    lines: Vec<(String, u8, usize)>,
    /// Sections that got no admitted item print `- (none)`.
    section_of: Vec<usize>,
    sections: Vec<String>,
    /// Which sections take a "(none)" placeholder when empty.
    list_sections: Vec<bool>,
    /// Parallel to `lines`: prose blocks (the goal, the last request) that are
    /// clipped to the room left rather than dropped whole.
    clippable: Vec<bool>,
    /// Print only sections with content (also chosen by `render` when the
    /// headings alone would take a quarter of the budget).
    compact: bool,
}

impl<'a> Doc<'a> {
    fn new(req: &'a SummaryRequest<'a>) -> Doc<'a> {
        Doc {
            req,
            lines: Vec::new(),
            section_of: Vec::new(),
            sections: Vec::new(),
            list_sections: Vec::new(),
            clippable: Vec::new(),
            compact: false,
        }
    }

    fn section(&mut self, title: &str) {
        self.sections.push(title.to_string());
        self.list_sections.push(false);
    }

    fn cur(&self) -> usize {
        self.sections.len().saturating_sub(1)
    }

    fn push(&mut self, line: String, prio: u8, rank: usize) {
        if prio == SKIP {
            return;
        }
        let s = self.cur();
        self.lines.push((line, prio, rank));
        self.section_of.push(s);
        self.clippable.push(false);
    }

    /// A prose block: when it does not fit whole, its head is kept (a goal
    /// longer than the budget still says what the goal was).
    fn block(&mut self, prio: u8, text: String) {
        let n = self.lines.len();
        self.push(text, prio, 0);
        if let Some(c) = self.clippable.get_mut(n) {
            *c = true;
        }
    }

    /// A list; `newest_first` ranks later items first (they were seen last).
    fn list(&mut self, prio: u8, bullet: &str, items: &[String], newest_first: bool) {
        let s = self.cur();
        self.list_sections[s] = true;
        let n = items.len();
        for (i, it) in items.iter().enumerate() {
            let rank = if newest_first { n - 1 - i } else { i };
            self.push([bullet, it.as_str()].concat(), prio, rank);
        }
    }

    /// A list in time order whose newest `recent` items get `prio_recent` and
    /// the older ones `prio_old`, newest first within each.
    fn list_split(&mut self, prio_recent: u8, prio_old: u8, bullet: &str, items: &[String], recent: usize) {
        let s = self.cur();
        self.list_sections[s] = true;
        let n = items.len();
        for (i, it) in items.iter().enumerate() {
            let age = n - 1 - i;
            let prio = if age < recent { prio_recent } else { prio_old };
            self.push([bullet, it.as_str()].concat(), prio, age);
        }
    }

    /// A list ranked best first: the first `top` items get `prio_top`, the
    /// rest `prio_rest`.
    fn ranked(&mut self, prio_top: u8, prio_rest: u8, bullet: &str, items: &[String], top: usize) {
        let s = self.cur();
        self.list_sections[s] = true;
        for (i, it) in items.iter().enumerate() {
            let prio = if i < top { prio_top } else { prio_rest };
            self.push([bullet, it.as_str()].concat(), prio, i);
        }
    }

    fn numbered(&mut self, prio: u8, items: &[String]) {
        let s = self.cur();
        self.list_sections[s] = true;
        for (i, it) in items.iter().enumerate() {
            self.push(format!("{}. {it}", i + 1), prio, i);
        }
    }

    fn render(self) -> String {
        let est = self.req.estimator;
        let budget = self.req.max_tokens;
        let cost = |t: &str| est.text_tokens(t) + 1;
        // What `cost` gives for a text of `chars` characters: without reading
        // the text again when the estimator counts characters only. Headings
        // and lines are counted once, for these costs and for the tries below.
        let priced = |chars: u64, t: &str| est.tokens_of_chars(chars).map_or_else(|| cost(t), |n| n + 1);
        let title_chars: Vec<u64> = self.sections.iter().map(|t| crate::tokens::char_count(t)).collect();
        let skeleton: u64 = self.sections.iter().zip(&title_chars).map(|(h, &n)| priced(n, h)).sum();
        // The full skeleton (every heading, `(none)` for empty lists) is the
        // checkpoint format; when it would take more than a quarter of a small
        // budget, only sections with content are printed, so the budget goes
        // to facts rather than headings.
        let compact = self.compact || skeleton.saturating_mul(4) > budget;
        // `### X` sections belong to the `## Y` before them.
        // (A compact render prints no parent headings: a `###` title says
        // enough on its own.)
        let parent: Vec<Option<usize>> = (0..self.sections.len())
            .map(|si| {
                if compact || !self.sections[si].starts_with("### ") {
                    return None;
                }
                (0..si).rev().find(|&p| self.sections[p].starts_with("## "))
            })
            .collect();
        let mut order: Vec<usize> = (0..self.lines.len()).collect();
        order.sort_by_key(|&i| (self.lines[i].1, self.lines[i].2, i));
        let mut admitted = vec![false; self.lines.len()];
        let mut open = vec![!compact; self.sections.len()];
        let mut used = if compact { 0 } else { skeleton };
        let mut texts: Vec<String> = self.lines.iter().map(|l| l.0.clone()).collect();
        let mut line_chars: Vec<u64> = texts.iter().map(|t| crate::tokens::char_count(t)).collect();
        for i in order {
            let si = self.section_of[i];
            let line_cost = priced(line_chars[i], &texts[i]);
            let mut c = line_cost;
            if !open[si] {
                c += priced(title_chars[si], &self.sections[si]);
                if let Some(p) = parent[si].filter(|&p| !open[p]) {
                    c += priced(title_chars[p], &self.sections[p]);
                }
            }
            if used + c > budget && self.clippable[i] {
                let room = budget.saturating_sub(used + (c - line_cost));
                if let Some(head) = clip_to_tokens(&texts[i], room, &cost) {
                    c = c - line_cost + cost(&head);
                    line_chars[i] = crate::tokens::char_count(&head);
                    texts[i] = head;
                }
            }
            if used + c <= budget {
                used += c;
                admitted[i] = true;
                open[si] = true;
                if let Some(p) = parent[si] {
                    open[p] = true;
                }
            }
        }
        // Lines of each section in order: `build` runs up to FILL_TRIES times
        // and more, so it must not scan every line once per section.
        let mut by_section: Vec<Vec<usize>> = vec![Vec::new(); self.sections.len()];
        for (li, &si) in self.section_of.iter().enumerate() {
            if let Some(v) = by_section.get_mut(si) {
                v.push(li);
            }
        }
        // Everything at once, with separators: no rebuild grows its string.
        let capacity = texts.iter().chain(&self.sections).map(|t| t.len() + 1).sum::<usize>()
            + self.sections.len() * "\n- (none)\n".len();
        let build = |admitted: &[bool]| -> String {
            let shown: Vec<bool> = by_section.iter().map(|ls| ls.iter().any(|&li| admitted[li])).collect();
            let mut out = String::with_capacity(capacity);
            for (si, title) in self.sections.iter().enumerate() {
                let has_child = (si + 1..self.sections.len()).take_while(|&c| parent[c] == Some(si)).any(|c| shown[c]);
                if compact && !shown[si] && !has_child {
                    continue;
                }
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(title);
                out.push('\n');
                for &li in by_section[si].iter().filter(|&&li| admitted[li]) {
                    out.push_str(&texts[li]);
                    out.push('\n');
                }
                if !shown[si] && self.list_sections[si] {
                    out.push_str("- (none)\n");
                }
            }
            let end = out.trim_end().len();
            out.truncate(end);
            out
        };
        // The characters `build(admitted)` would have, from the parts' sizes,
        // when the text's last piece does not end in whitespace (`trim_end`
        // then takes only the last newline); else `None`.
        let chars_of = |admitted: &[bool]| -> Option<u64> {
            let shown: Vec<bool> = by_section.iter().map(|ls| ls.iter().any(|&li| admitted[li])).collect();
            let (mut chars, mut emitted) = (0u64, 0u64);
            let mut last: Option<&str> = None;
            for (si, title) in self.sections.iter().enumerate() {
                let has_child = (si + 1..self.sections.len()).take_while(|&c| parent[c] == Some(si)).any(|c| shown[c]);
                if compact && !shown[si] && !has_child {
                    continue;
                }
                emitted += 1;
                chars += title_chars[si] + 1;
                last = Some(title);
                for &li in by_section[si].iter().filter(|&&li| admitted[li]) {
                    chars += line_chars[li] + 1;
                    last = Some(&texts[li]);
                }
                if !shown[si] && self.list_sections[si] {
                    chars += "- (none)\n".len() as u64;
                    last = Some("- (none)");
                }
            }
            // A newline before every section but the first.
            chars += emitted.saturating_sub(1);
            match last {
                None => Some(0),
                Some(p) if p.chars().next_back().is_some_and(|c| !c.is_whitespace()) => Some(chars - 1),
                Some(_) => None,
            }
        };
        // The tokens `build(admitted)` would have, without building it when the
        // estimator counts characters only.
        let tokens_of = |admitted: &[bool]| -> Option<u64> { est.tokens_of_chars(chars_of(admitted)?) };
        let mut text = build(&admitted);
        // The size of `text`, counted once per rebuild; with a BPE estimator,
        // each of its lines once per render (a rebuild changes a line or two,
        // and counting the whole again was an eighth of an o200k replay).
        let mut whole = crate::tokens::SegmentCounter::new(est);
        let mut size = whole.count(&text);
        // Per-line costs round up, so the joined text is usually smaller than
        // their sum: offer the next lines in order again against the real size
        // (a bounded number of tries, each one a rebuild, or with a
        // characters-only estimator a sum, most tries failing).
        let mut pending: Vec<usize> = (0..self.lines.len()).filter(|&i| !admitted[i]).collect();
        pending.sort_by_key(|&i| (self.lines[i].1, self.lines[i].2, i));
        for i in pending.into_iter().take(FILL_TRIES) {
            if size >= budget {
                break;
            }
            admitted[i] = true;
            match tokens_of(&admitted) {
                Some(t_size) if t_size > budget => admitted[i] = false,
                Some(t_size) => {
                    text = build(&admitted);
                    size = t_size;
                }
                None => {
                    let t = build(&admitted);
                    let t_size = whole.count(&t);
                    if t_size <= budget {
                        text = t;
                        size = t_size;
                    } else {
                        admitted[i] = false;
                    }
                }
            }
        }
        // Per-line costs are an estimate of the joined text; drop the least
        // important admitted lines until the whole fits.
        let mut by_prio: Vec<usize> = (0..self.lines.len()).filter(|&i| admitted[i]).collect();
        by_prio.sort_by_key(|&i| std::cmp::Reverse((self.lines[i].1, self.lines[i].2, i)));
        let mut k = 0;
        while size > budget && k < by_prio.len() {
            admitted[by_prio[k]] = false;
            k += 1;
            text = build(&admitted);
            size = whole.count(&text);
        }
        if size > budget {
            // Not even one line fits: cut the text itself, at a line or word
            // end so nothing is left half-written.
            let head = head_chars(&text, (budget as usize).saturating_mul(4));
            let end = head.rfind('\n').or_else(|| head.rfind(' ')).unwrap_or(0);
            text = head[..end].trim_end().to_string();
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Message;
    use crate::summarize::InputLimits;
    use crate::tokens::{Chars4, Estimator};
    use serde_json::json;

    /// A symbol that a better ranked one spells out as a run of its
    /// segments is left out; one sharing only a segment is kept.
    #[test]
    fn a_symbol_spelled_out_by_a_better_one_is_left_out() {
        let mut f = Facts { pos: 10, ..Facts::default() };
        for (s, w) in [
            ("state.todos.filter", 6.0),
            ("Foo::bar", 5.0),
            ("state.todos", 4.0),
            ("todos", 3.0),
            ("Foo", 2.5),
            ("other_thing", 2.0),
            ("filter.map", 1.0),
        ] {
            let n = f.names.name(s);
            f.symbols.add(&n, w, 10);
        }
        assert_eq!(f.symbol_lines(1000), vec!["state.todos.filter, Foo::bar, other_thing, filter.map"]);
    }

    /// The identifier list leaves out the files the file lists already name
    /// (read or modified), and keeps the rest, best first.
    #[test]
    fn identifiers_the_file_lists_name_are_left_out() {
        let mut f = Facts { pos: 10, ..Facts::default() };
        for (s, w) in [("src/read.rs", 5.0), ("https://x.io/a", 4.0), ("src/edit.rs", 3.0), ("v1.2.3", 2.0)] {
            let n = f.names.name(s);
            f.idents.add(&n, w, 10);
        }
        f.file_ops.read.insert("src/read.rs".to_string());
        f.file_ops.modified.insert("src/edit.rs".to_string());
        assert_eq!(f.ranked_idents(), vec!["https://x.io/a", "v1.2.3"]);
    }

    fn user(t: &str) -> Message {
        Message::new(Role::User, Origin::Human, vec![Block::text(t)])
    }
    fn asst(blocks: Vec<Block>) -> Message {
        Message::new(Role::Assistant, Origin::Model, blocks)
    }
    fn result(id: &str, t: &str, err: bool) -> Message {
        Message::new(
            Role::User,
            Origin::ToolResult,
            vec![Block::ToolResult { tool_use_id: id.into(), content: vec![Block::text(t)], is_error: Some(err) }],
        )
    }
    fn tool(id: &str, name: &str, input: serde_json::Value) -> Block {
        Block::ToolUse { id: id.into(), name: name.into(), input }
    }

    fn session() -> Vec<Message> {
        vec![
            user("Fix the failing test in src/parser.rs. You must not change the public API. Never use unwrap."),
            asst(vec![
                Block::text("Let me look at the parser."),
                tool("t1", "Read", json!({"file_path": "/repo/src/parser.rs"})),
            ]),
            result("t1", "fn parse() {}", false),
            asst(vec![
                Block::text("The root cause is an off-by-one in parse_header because the index starts at 1."),
                tool("t2", "Bash", json!({"command": "cargo test -p parser"})),
            ]),
            result(
                "t2",
                "running 3 tests\nerror[E0308]: mismatched types at src/parser.rs:42\ntest result: FAILED\nExit code: 101",
                true,
            ),
            asst(vec![tool(
                "t3",
                "Edit",
                json!({"file_path": "/repo/src/parser.rs", "old_string": "1", "new_string": "0"}),
            )]),
            result("t3", "ok", false),
            user("Also bump the version to 1.4.2 and push to https://github.com/acme/parser/pull/17"),
        ]
    }

    /// `f` on a history request for `msgs` (no file operations, chars/4).
    fn with_request<R>(msgs: &[Message], prev: Option<&str>, max: u64, f: impl FnOnce(&SummaryRequest<'_>) -> R) -> R {
        let refs: Vec<&Message> = msgs.iter().collect();
        let ops = FileOps::default();
        let req = SummaryRequest {
            part: SummaryPart::History,
            messages: &refs,
            previous_summary: prev,
            file_ops: &ops,
            max_tokens: max,
            limits: InputLimits::default(),
            estimator: &Chars4,
        };
        f(&req)
    }

    fn summarize(msgs: &[Message], prev: Option<&str>, max: u64) -> String {
        with_request(msgs, prev, max, |req| Extractive.summarize(req).unwrap().text)
    }

    /// A request for `refs` as a turn prefix or a history, with a previous
    /// summary or not.
    fn request<'a>(
        refs: &'a [&'a Message],
        prev: Option<&'a str>,
        prefix: bool,
        ops: &'a FileOps,
    ) -> SummaryRequest<'a> {
        SummaryRequest {
            part: if prefix { SummaryPart::TurnPrefix } else { SummaryPart::History },
            messages: refs,
            previous_summary: prev,
            file_ops: ops,
            max_tokens: 2_000,
            limits: InputLimits::default(),
            estimator: &Chars4,
        }
    }

    /// chars/4 that does not tell it counts characters only: the render
    /// then builds every text it sizes.
    struct OpaqueChars4;

    impl crate::tokens::Estimator for OpaqueChars4 {
        fn kind(&self) -> crate::tokens::EstimatorKind {
            crate::tokens::EstimatorKind::Chars4
        }
        fn text_tokens(&self, text: &str) -> u64 {
            Chars4.text_tokens(text)
        }
        fn block_tokens(&self, b: &Block) -> u64 {
            Chars4.block_tokens(b)
        }
    }

    /// Sizing the lines offered again from their characters gives the text
    /// that building and counting each candidate gives: at every budget from
    /// a heading's worth to the whole checkpoint (compact and full renders),
    /// as a history and a turn prefix, with a previous summary or not.
    #[test]
    fn sizing_by_characters_renders_what_counting_renders() {
        // Enough files, commands, symbols and identifiers that a budget
        // between a heading's worth and the whole leaves lines to offer again.
        let mut msgs = session();
        for i in 0..40 {
            let id = format!("r{i}");
            msgs.push(asst(vec![
                Block::text(format!("Next, check parse_field_{i} in Module{i}::Reader{i} (commit {i:07x}abc).")),
                tool(&id, "Bash", json!({"command": format!("cargo test -p crate_{i} -- --nocapture")})),
            ]));
            msgs.push(result(
                &id,
                &format!("error[E{:04}]: bad field at src/m{i}/reader.rs:{i}\nExit code: 1", 300 + i),
                true,
            ));
            msgs.push(asst(vec![tool(
                &format!("e{i}"),
                "Edit",
                json!({"file_path": format!("/repo/src/m{i}/reader.rs"), "old_string": "a", "new_string": "b"}),
            )]));
            msgs.push(result(&format!("e{i}"), "ok", false));
        }
        // A request whose last line ends in spaces.
        msgs.push(user("Then tidy up the README:\n- keep the badges   \n- drop the old table \t"));
        let refs: Vec<&Message> = msgs.iter().collect();
        let ops = FileOps::default();
        let prev = "## Goal\nShip it.   \n\n## Files Modified\n- `src/a.rs`  \n## Identifiers\n- `abc1234` \t\n";
        let mut compared = 0;
        for prefix in [false, true] {
            for previous in [None, Some(prev)] {
                for max in (10..2_400).step_by(7) {
                    let mut req = request(&refs, previous, prefix, &ops);
                    req.max_tokens = max;
                    let fast = Extractive.summarize(&req).unwrap().text;
                    req.estimator = &OpaqueChars4;
                    let counted = Extractive.summarize(&req).unwrap().text;
                    assert_eq!(fast, counted, "budget {max}, prefix {prefix}, previous {}", previous.is_some());
                    compared += usize::from(!fast.is_empty());
                }
            }
        }
        assert!(compared > 600, "{compared}");
    }

    /// A text whose last line ends in whitespace loses it to `trim_end`, so
    /// its size does not follow from its lines' sizes: such candidates are
    /// built and counted (no checkpoint line ends so today; a document can).
    #[test]
    fn a_text_ending_in_whitespace_is_sized_by_building_it() {
        let msgs = session();
        let refs: Vec<&Message> = msgs.iter().collect();
        let ops = FileOps::default();
        let items: Vec<String> = (0..12).map(|i| format!("item {i}{}", " ".repeat(i % 4))).collect();
        let render = |max: u64, est: &dyn crate::tokens::Estimator| {
            let mut req = request(&refs, None, false, &ops);
            req.max_tokens = max;
            req.estimator = est;
            let mut doc = Doc::new(&req);
            doc.section("## Goal");
            doc.block(0, "the goal \t ".to_string());
            doc.section("## Items");
            doc.list(1, "- ", &items, false);
            doc.section("## Tail");
            doc.list(2, "- ", &["last  ".to_string(), "   ".to_string()], false);
            doc.render()
        };
        for max in 1..120 {
            assert_eq!(render(max, &Chars4), render(max, &OpaqueChars4), "budget {max}");
        }
    }

    use proptest::strategy::Strategy as _;

    /// [`rejected_shape`] as `accept_symbol` read it with `str::split`, the
    /// oracle of the byte pass that replaced it.
    fn rejected_shape_by_split(s: &str, call: bool) -> bool {
        if s.contains('.') || s.contains("::") {
            let mut segs = s.split(['.', ':']).filter(|x| !x.is_empty());
            segs.clone().all(|x| x.len() <= 2)
                || (s.contains('.')
                    && segs.next_back().is_some_and(|last| NOT_MEMBERS.iter().any(|n| n.eq_ignore_ascii_case(last))))
        } else {
            call && CALL_KEYWORDS.contains(&s)
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2048, ..Default::default() })]

        /// The byte pass rejects what the split did: qualified names with
        /// short, long, empty and extension-like segments, keywords, with
        /// multi-byte letters among them.
        #[test]
        fn rejecting_a_shape_by_bytes_is_rejecting_it_by_split(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "ab", "abc", "Foo", "x1", "_", ".", "::", ":", "(", "rs", "JSON", "Jsonl", "com", "if",
                    "Error", "Exception", "é", "Σσ", "tsx",
                ]),
                0..9,
            )
        ) {
            let s: String = parts.concat();
            for call in [false, true] {
                proptest::prop_assert_eq!(rejected_shape(&s, call), rejected_shape_by_split(&s, call), "{:?}", s);
            }
        }
    }

    proptest::proptest! {
        /// A line is cut where `split_inclusive(". ")` and then
        /// `split_inclusive("? ")` cut it, empty pieces aside (the sentence
        /// filter drops them).
        #[test]
        fn sentence_pieces_cut_where_the_substring_splits_do(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![". ", "? ", ".", "?", " ", "  ", "a", "é", "?. ", ".? ", "x.y", "!"]),
                0..14,
            )
        ) {
            let line: String = parts.concat();
            let split: Vec<&str> = line
                .split_inclusive(". ")
                .flat_map(|s| s.split_inclusive("? "))
                .filter(|s| !s.is_empty())
                .collect();
            let ours: Vec<&str> = sentence_pieces(&line).filter(|s| !s.is_empty()).collect();
            proptest::prop_assert_eq!(ours, split, "{:?}", line);
        }
    }

    proptest::proptest! {
        /// The slash-anchored test names a vendored tree exactly when the
        /// text contains one of the markers (the plain definition).
        #[test]
        fn vendored_is_containing_a_marker(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(VENDORED.to_vec()).prop_map(String::from),
                    proptest::sample::select(vec!["/", "node_modules", ".git", "dist", "src/", "a", "target/x", "/.", "é/"])
                        .prop_map(String::from),
                    "[a-z./_-]{0,5}",
                ],
                0..8,
            )
        ) {
            let s: String = parts.concat();
            let plain = VENDORED.iter().any(|d| s.contains(d));
            proptest::prop_assert_eq!(is_vendored(&s), plain, "{:?}", s);
        }
    }

    proptest::proptest! {
        /// Any sequence of requests over a session's messages (any cut, with
        /// or without the calls its results answer, with a copy of a call
        /// that is not the session's own, iterative or not) gets from the
        /// session-bound summarizer exactly the plain summarizer's answers.
        #[test]
        fn the_session_bound_summarizer_answers_like_the_plain_one(
            asks in proptest::collection::vec((0usize..=8, 0usize..=8, proptest::bool::ANY, proptest::bool::ANY, proptest::bool::ANY), 1..10)
        ) {
            let msgs = session();
            // A copy of the call whose result is message 4.
            let copy = msgs[3].clone();
            let bound = SessionExtractive::new(&msgs);
            let ops = FileOps::default();
            let mut prev: Option<String> = None;
            for (a, b, iterative, with_copy, prefix) in asks {
                let mut refs: Vec<&Message> = msgs[a.min(b)..a.max(b)].iter().collect();
                if with_copy {
                    refs.insert(0, &copy);
                }
                let req = request(&refs, prev.as_deref().filter(|_| iterative), prefix, &ops);
                let plain = Extractive.summarize(&req).unwrap();
                proptest::prop_assert_eq!(&bound.summarize(&req).unwrap(), &plain);
                prev = Some(plain.text);
            }
        }
    }

    #[test]
    fn the_session_bound_summarizer_reads_each_message_once() {
        let msgs = session();
        let bound = SessionExtractive::new(&msgs);
        let ops = FileOps::default();
        let all: Vec<&Message> = msgs.iter().collect();
        let first = bound.summarize(&request(&all, None, false, &ops)).unwrap();
        assert_eq!(bound.reads(), msgs.len());
        assert_eq!(bound.summarize(&request(&all, None, false, &ops)).unwrap(), first);
        assert_eq!(bound.reads(), msgs.len(), "the second request reuses every message");
        // Without its call (message 3) the result of `cargo test` reads as an
        // unknown tool's: not what was kept, so it is read again, and the
        // answer is the plain one (no command line for it).
        let cut: Vec<&Message> = msgs[4..].iter().collect();
        let answer = bound.summarize(&request(&cut, None, false, &ops)).unwrap();
        assert_eq!(answer, Extractive.summarize(&request(&cut, None, false, &ops)).unwrap());
        assert!(!answer.text.contains("cargo test -p parser"), "{}", answer.text);
        assert!(first.text.contains("cargo test -p parser"), "{}", first.text);
        assert_eq!(bound.reads(), msgs.len());
    }

    /// Ids follow the order names are first seen, which differs between
    /// threads reading a session's messages: a summarizer that handed them
    /// out in reverse (as if the last message had been read first) answers
    /// the same, with and without a previous summary to absorb.
    #[test]
    fn answers_do_not_depend_on_the_order_names_got_their_ids() {
        let msgs = session();
        let ops = FileOps::default();
        let all: Vec<&Message> = msgs.iter().collect();
        let later: Vec<&Message> = msgs[4..].iter().collect();
        let plain = Extractive.summarize(&request(&all, None, false, &ops)).unwrap();
        let first = SessionExtractive::new(&msgs);
        assert_eq!(first.summarize(&request(&all, None, false, &ops)).unwrap(), plain);
        let mut seen: Vec<(u32, Arc<str>)> =
            first.names.ids.lock().unwrap().iter().map(|(t, &(id, _))| (id, t.clone())).collect();
        seen.sort_by_key(|&(id, _)| std::cmp::Reverse(id));
        assert!(seen.len() >= 5, "{}", seen.len());
        let reversed = SessionExtractive::new(&msgs);
        for (_, t) in &seen {
            reversed.names.name(t);
        }
        assert_eq!(reversed.names.name(&seen[0].1).id, 0);
        assert_eq!(reversed.summarize(&request(&all, None, false, &ops)).unwrap(), plain);
        let update = request(&later, Some(&plain.text), false, &ops);
        assert_eq!(reversed.summarize(&update).unwrap(), Extractive.summarize(&update).unwrap());
        assert!(plain.text.contains("parse_header"), "{}", plain.text);
    }

    /// The mechanism behind an empty `## Goal` (seen in the fixtures'
    /// transcript): a priority-0 prose block larger than the room the skeleton
    /// leaves was skipped whole. It is clipped to the room instead.
    #[test]
    fn a_block_larger_than_the_room_left_is_clipped_to_it() {
        let goal: String = (0..200).map(|k| format!("word{k} ")).collect();
        let out = with_request(&[], None, 200, |req| {
            let mut doc = Doc::new(req);
            doc.section("## Goal");
            doc.block(0, clip_item(&goal, 5_000));
            doc.section("## Files");
            doc.list(1, "- ", &["src/a.rs".to_string()], false);
            doc.render()
        });
        assert!(Chars4.text_tokens(&out) <= 200, "{out}");
        assert!(out.starts_with("## Goal\nword0 word1 word2"), "{out}");
        let line = out.lines().nth(1).unwrap_or_default();
        assert!(line.ends_with('…') && line.len() > 300, "{line}");
    }

    /// A first request longer than the whole budget used to leave `## Goal`
    /// empty (the block was skipped whole); its head is kept instead, and the
    /// summary stays within the budget.
    #[test]
    fn a_goal_longer_than_the_budget_is_clipped_not_dropped() {
        let mut long = String::from("Migrate the billing service to the new ledger API");
        for k in 0..400 {
            long.push_str(&format!(" and keep step {k} of the rollout in mind"));
        }
        let mut msgs = session();
        msgs[0] = user(&long);
        for budget in [120u64, 300, 600] {
            let s = summarize(&msgs, None, budget);
            assert!(Chars4.text_tokens(&s) <= budget, "{budget}: {} tokens\n{s}", Chars4.text_tokens(&s));
            let goal = s.split("## Goal\n").nth(1).and_then(|r| r.lines().next()).unwrap_or_default();
            assert!(goal.starts_with("Migrate the billing service"), "{budget}: goal line {goal:?}\n{s}");
            assert!(goal.ends_with('…'), "{budget}: {goal:?}");
        }
    }

    #[test]
    fn checkpoint_carries_goal_constraints_files_errors_and_ids() {
        let s = summarize(&session(), None, 2_000);
        for needle in [
            "## Goal\nFix the failing test in src/parser.rs",
            "## Constraints & Preferences",
            "You must not change the public API.",
            "Never use unwrap.",
            "### Done",
            "### In Progress",
            "## Key Decisions",
            "root cause is an off-by-one",
            "## Next Steps\n1. Continue with the last user request: Also bump the version to 1.4.2",
            "### Files modified\n- `/repo/src/parser.rs`",
            "`cargo test -p parser` → exit 101",
            "error[E0308]: mismatched types at src/parser.rs:42",
            "`https://github.com/acme/parser/pull/17`",
            "`1.4.2`",
            "`E0308`",
            // Code symbols are listed bare, comma-packed (a backtick pair is a
            // token per symbol).
            "### Code symbols\n- parse_header",
        ] {
            assert!(s.contains(needle), "missing {needle:?} in\n{s}");
        }
        // Read then modified: listed as modified only.
        assert!(s.contains("### Files read\n- (none)"), "{s}");
    }

    /// Error-looking lines count from what a command printed or a call that
    /// failed, not from a file the agent read.
    #[test]
    fn error_lines_come_from_commands_and_failures_not_from_files_read() {
        let msgs = vec![
            user("Look at the handler."),
            asst(vec![tool("t1", "Read", json!({"file_path": "/repo/src/handler.ts"}))]),
            result("t1", "try { run() }\ncatch (err) { log('fatal: bad handler state') }", false),
            asst(vec![tool("t2", "Bash", json!({"command": "npm test"}))]),
            result("t2", "PASS a.test.ts\nerror: cannot find module 'zod'\ndone", false),
        ];
        let s = summarize(&msgs, None, 2_000);
        assert!(s.contains("Bash: error: cannot find module 'zod'"), "{s}");
        assert!(!s.contains("bad handler state"), "{s}");
    }

    #[test]
    fn bounded_by_max_tokens() {
        let mut msgs = session();
        for i in 0..300 {
            msgs.push(user(&format!("Step {i}: never touch /etc/file{i}.conf and always log to /var/log/x{i}.log")));
        }
        for max in [60, 200, 800] {
            let s = summarize(&msgs, None, max);
            assert!(Chars4.text_tokens(&s) <= max, "{} > {max}", Chars4.text_tokens(&s));
        }
        // The goal survives even a small budget; bulk items go first.
        let s = summarize(&msgs, None, 200);
        assert!(s.contains("## Goal\nFix the failing test"), "{s}");
    }

    #[test]
    fn iterative_update_keeps_previous_facts() {
        let first = summarize(&session(), None, 2_000);
        let later = vec![user("Now document it in README.md")];
        let second = summarize(&later, Some(&first), 2_000);
        assert!(second.contains("## Goal\nFix the failing test in src/parser.rs"), "{second}");
        assert!(second.contains("Never use unwrap."), "{second}");
        assert!(second.contains("`/repo/src/parser.rs`"), "{second}");
        assert!(second.contains("Continue with the last user request: Now document it in README.md"), "{second}");
        // A first summary whose last request is its goal keeps it through an update.
        let early = summarize(&session()[..3], None, 2_000);
        assert!(early.contains("### Last user request\n(the goal above)"), "{early}");
        let updated = summarize(&[], Some(&early), 2_000);
        assert!(updated.contains("1. Continue with the last user request: Fix the failing test"), "{updated}");
        // Idempotent shape: summarizing the summary again does not duplicate items.
        let third = summarize(&[], Some(&second), 2_000);
        assert_eq!(third.matches("- Never use unwrap.").count(), 1, "{third}");
        // Listed once, under Files modified: Identifiers leave out what the file
        // lists already name.
        assert_eq!(third.matches("- `/repo/src/parser.rs`").count(), 1, "{third}");
        // Named in the decision and once in the symbol list, as in `second`.
        assert_eq!(third.matches("parse_header").count(), second.matches("parse_header").count(), "{third}");
        assert_eq!(third.matches(", parse_header").count() + third.matches("- parse_header").count(), 1, "{third}");
    }

    #[test]
    fn ranking_the_top_gives_the_head_of_the_full_ranking() {
        // Many ties in score (broken by text) and more keys than the top.
        let mut map: HashMap<String, Seen> = HashMap::new();
        for i in 0..500u64 {
            map.entry(format!("k{:03}", (i * 7919) % 500)).or_default().add((i % 5) as f64 + 1.0, i % 37);
        }
        let mut all: Vec<(&String, f64)> = map.iter().map(|(k, s)| (k, s.score(40))).collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        let full: Vec<&str> = all.iter().map(|(k, _)| k.as_str()).collect();
        for top in [0, 1, 37, 499, 500, 800] {
            assert_eq!(
                ranked(map.iter().map(|(k, s)| (k.as_str(), s)), 40, top),
                full[..top.min(full.len())],
                "top {top}"
            );
        }
    }

    #[test]
    fn deterministic() {
        assert_eq!(summarize(&session(), None, 500), summarize(&session(), None, 500));
    }
}
