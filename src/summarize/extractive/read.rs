//! Reading one message into [`Step`]s: the sentence patterns, the tool-call
//! bookkeeping, and the message's atoms (the metric's, from the session's lens)
//! sorted into the checkpoint's identifiers, symbols, commands and errors.

use super::*;

pub(super) fn re(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

pub(super) static DECISION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)(decided|decision|instead of|i'?ll use|we'?ll use|i will use|chose|choose|going with|switch(?:ed)? to|the fix is|root cause|the problem is|the issue is|because)(?-u:\b)",
    )
});
pub(super) static DONE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"(?i)^\s*(done|fixed|implemented|added|updated|created|removed|refactored|renamed|all tests pass|tests pass|i'?ve|i have|successfully|the build (now )?passes)(?-u:\b)",
    )
});
pub(super) static INTENT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(r"(?i)^\s*(now,? (i'?ll|let me)|let me|i'?ll|i will|next,? i|i'?m going to|i am going to)(?-u:\b)")
});
pub(super) fn matches(r: &LazyLock<Option<Regex>>, s: &str) -> bool {
    r.as_ref().is_some_and(|r| r.is_match(s))
}

/// Sentences of a text: lines, then `. `/`? ` boundaries.
pub(super) fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.lines().flat_map(sentence_pieces).map(str::trim).filter(|s| {
        // Skip code-ish noise: fences, very short fragments.
        s.len() > 3 && !s.starts_with("```")
    })
}

/// The pieces of a line, each ending right after a `. ` or a `? ` (or at the
/// line's end): what `split_inclusive(". ")` and then `split_inclusive("? ")`
/// give, found by looking for spaces rather than by two substring searchers
/// per line (0.7 % of a chars4 replay of the 200 MB benchmark corpus).
pub(super) fn sentence_pieces(line: &str) -> impl Iterator<Item = &str> {
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

pub(super) fn human_text(m: &Message) -> String {
    m.text().into_owned()
}

/// An identifier or code symbol, with its id among its [`Names`].
#[derive(Clone)]
pub(super) struct Name {
    pub(super) id: u32,
    pub(super) text: Arc<str>,
    /// In a vendored or generated tree ([`is_vendored`]).
    pub(super) vendored: bool,
}

/// Identifier and symbol texts, each with an id. The facts of a request count
/// occurrences in a table indexed by id ([`Tally`]): a text is hashed once,
/// when its message is read, rather than at every occurrence by every
/// compaction that replaces the message (a sweep's policies replace the same
/// messages hundreds of times). Ids follow the order texts were first seen,
/// which across threads is not fixed, so nothing is ordered by them.
#[derive(Default)]
pub(super) struct Names {
    pub(super) ids: Mutex<HashMap<Arc<str>, (u32, bool)>>,
}

impl Names {
    /// The names of `texts`, in order (borrowed from the text they were
    /// found in: only a name seen for the first time is copied).
    pub(super) fn all(&self, texts: &[&str]) -> Arc<[Name]> {
        // A poisoned lock (a panic elsewhere) still holds whole entries.
        let mut ids = self.ids.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        texts.iter().map(|t| Self::intern(&mut ids, t)).collect()
    }

    pub(super) fn name(&self, text: &str) -> Name {
        Self::intern(&mut self.ids.lock().unwrap_or_else(std::sync::PoisonError::into_inner), text)
    }

    pub(super) fn intern(ids: &mut HashMap<Arc<str>, (u32, bool)>, text: &str) -> Name {
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
pub(super) struct Tally {
    /// Per id, 1 + the index of its entry; 0 when not counted yet.
    pub(super) slot: Vec<u32>,
    pub(super) entries: Vec<(Arc<str>, Seen)>,
}

impl Tally {
    /// Count an occurrence of `name` (weight `w`, position `pos`).
    pub(super) fn add(&mut self, name: &Name, w: f64, pos: u64) {
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

    pub(super) fn iter(&self) -> impl Iterator<Item = (&str, &Seen)> {
        self.entries.iter().map(|(t, s)| (&**t, s))
    }
}

/// How a message takes part in a scan.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Human,
    /// A previous summary replayed as a message (no iterative update).
    Summary,
    Assistant,
    ToolResults,
    Other,
}

pub(super) fn kind_of(m: &Message) -> Kind {
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
pub(super) enum CallRef {
    /// Not in the request: the result reads as an unknown tool's.
    Missing,
    /// Block `.1` of the session's message `.0`.
    At(usize, usize),
    /// In a message that is not one of the session's own (a copy): nothing
    /// identifies it from one request to the next.
    Foreign,
}

/// A tool call seen earlier in the request, for the results that follow.
#[derive(Clone)]
pub(super) struct Call<'m> {
    pub(super) name: &'m str,
    pub(super) at: CallRef,
    /// The command atoms of the call (a shell tool's), in order.
    pub(super) commands: Vec<String>,
}

pub(super) type Calls<'m> = HashMap<&'m str, Call<'m>>;

/// Record the tool calls of an assistant message (`index`: its place in the
/// session, when it is one of the session's messages; `atoms`: what it names).
pub(super) fn note_calls<'m>(m: &'m Message, index: Option<usize>, atoms: MessageView<'_>, calls: &mut Calls<'m>) {
    for (bi, b) in m.blocks.iter().enumerate() {
        if let Block::ToolUse { id, name, .. } = b {
            let at = index.map_or(CallRef::Foreign, |i| CallRef::At(i, bi));
            let commands = if is_command(name) {
                atoms.block(bi).found.iter().filter(|f| f.kind == AtomKind::Command).map(|f| f.value.clone()).collect()
            } else {
                Vec::new()
            };
            calls.insert(id.as_str(), Call { name: name.as_str(), at, commands });
        }
    }
}

/// The calls a message's tool results answer, in block order.
pub(super) fn call_refs(m: &Message, calls: &Calls<'_>) -> Vec<CallRef> {
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
pub(super) enum Step {
    /// A human request (clipped): the goal when there is none yet, the first
    /// and the last request; it ends what was in progress.
    Request(String),
    Constraint(String),
    Done(String),
    InProgress(String),
    Decision(String),
    Command(String),
    Error(String),
    File(crate::text::filetrack::FileOpKind, String),
    /// Identifier occurrences and their weight.
    Idents(Arc<[Name]>, u32),
    /// Code symbol occurrences and their weight.
    Symbols(Arc<[Name]>, f64),
}

/// How a found atom is spelled in a checkpoint: its normalized value (what the
/// metric reads back), hashes and UUIDs in the lower case `git` prints.
pub(super) fn spelled(f: &Found) -> Cow<'_, str> {
    let v = f.value.as_str();
    if f.kind == AtomKind::Id
        && v.bytes().any(|b| b.is_ascii_uppercase())
        && v.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
    {
        Cow::Owned(v.to_ascii_lowercase())
    } else {
        Cow::Borrowed(v)
    }
}

/// The identifier and symbol steps of one block's atoms: paths, ids and (with
/// `errors`) error atoms as identifiers of weight `ident_w`, code symbols of
/// weight `symbol_w`. Only the atoms the metric creates (not symbol-shaped
/// words of prose); commands go with their results.
pub(super) fn push_atoms(
    steps: &mut Vec<Step>,
    found: &[Found],
    ident_w: u32,
    symbol_w: f64,
    errors: bool,
    names: &Names,
) {
    let mut idents: Vec<Cow<'_, str>> = Vec::new();
    let mut symbols: Vec<&str> = Vec::new();
    for f in found.iter().filter(|f| f.strong) {
        match f.kind {
            AtomKind::Path | AtomKind::ModifiedPath | AtomKind::Id => idents.push(spelled(f)),
            // Codes only (`E0308`): a fingerprint runs to the end of its line
            // when read back, so it gets a line of its own (Errors seen).
            AtomKind::Error if errors && !f.value.contains(char::is_whitespace) => idents.push(spelled(f)),
            // Already a symbol by the one filter; listed unless error-like.
            AtomKind::Symbol if !error_like(&f.value) => symbols.push(&f.value),
            _ => {}
        }
    }
    if !idents.is_empty() {
        let texts: Vec<&str> = idents.iter().map(|c| c.as_ref()).collect();
        steps.push(Step::Idents(names.all(&texts), ident_w));
    }
    if !symbols.is_empty() {
        steps.push(Step::Symbols(names.all(&symbols), symbol_w));
    }
}

/// Most error atoms quoted for one tool result.
const ERRORS_PER_RESULT: usize = 3;

/// The steps of one message of kind `kind` (not [`Kind::Summary`], which
/// is merged as a previous summary), `atoms` being what it names.
pub(super) fn read_message(
    m: &Message,
    kind: Kind,
    calls: &Calls<'_>,
    names: &Names,
    atoms: MessageView<'_>,
) -> Vec<Step> {
    let mut steps = Vec::new();
    // The blocks this kind reads, with their atoms (a thinking block's are
    // never read).
    let blocks = |keep: fn(&Block) -> bool| {
        m.blocks.iter().enumerate().filter(move |(_, b)| keep(b)).map(move |(bi, b)| (b, atoms.block(bi)))
    };
    match kind {
        Kind::Human => {
            let text = human_text(m);
            if text.trim().is_empty() {
                return steps;
            }
            steps.push(Step::Request(clip_block(&text, REQUEST_MAX)));
            let text = |b: &Block| matches!(b, Block::Text { .. });
            for (_, a) in blocks(text) {
                for (sentence, _) in &a.constraints {
                    steps.push(Step::Constraint(clip_item(sentence, ITEM_MAX)));
                }
            }
            for (_, a) in blocks(text) {
                push_atoms(&mut steps, &a.found, 3, 2.0, true, names);
            }
        }
        Kind::Assistant => {
            for (b, a) in blocks(|b| matches!(b, Block::Text { .. } | Block::ToolUse { .. })) {
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
                        push_atoms(&mut steps, &a.found, 2, 2.0, true, names);
                    }
                    Block::ToolUse { name, input, .. } => {
                        for (k, path) in crate::text::filetrack::tool_file_ops(name, input) {
                            steps.push(Step::File(k, path));
                        }
                        push_atoms(&mut steps, &a.found, 3, 3.0, true, names);
                    }
                    _ => {}
                }
            }
        }
        Kind::ToolResults => {
            for (b, a) in blocks(|b| matches!(b, Block::ToolResult { .. })) {
                let Block::ToolResult { tool_use_id, .. } = b else { continue };
                let (name, commands) =
                    calls.get(tool_use_id.as_str()).map_or(("tool", &[][..]), |c| (c.name, c.commands.as_slice()));
                let shell = is_command(name);
                let errors: Vec<&Found> = a.found.iter().filter(|f| f.strong && f.kind == AtomKind::Error).collect();
                let exit = errors.iter().find_map(|f| f.value.strip_prefix("exit code "));
                if shell && !commands.is_empty() {
                    let status = match (exit, a.failed) {
                        // As the metric reads an exit code back.
                        (Some(code), _) => format!("exit code {code}"),
                        (None, true) => "failed".to_string(),
                        (None, false) => "ok".to_string(),
                    };
                    let shown: Vec<String> = commands.iter().map(|c| ["`", c, "`"].concat()).collect();
                    steps.push(Step::Command(format!("{} → {status}", shown.join(", "))));
                }
                // Error atoms are failures in what a command printed or a
                // call that failed: in a file the agent read, `catch (error)`
                // is code (an identifier, not an error seen).
                let failure = a.failed || shell;
                // A command's exit code is in its status line.
                let in_status = |v: &str| shell && !commands.is_empty() && v.starts_with("exit code ");
                let (quoted, rest): (Vec<&str>, Vec<&str>) = if failure {
                    let all: Vec<&str> = errors.iter().map(|f| f.value.as_str()).filter(|v| !in_status(v)).collect();
                    let cut = all.len().min(ERRORS_PER_RESULT);
                    (all[..cut].to_vec(), all[cut..].to_vec())
                } else {
                    (Vec::new(), Vec::new())
                };
                for e in &quoted {
                    steps.push(Step::Error(format!("{name}: {}", whole_words(e))));
                }
                let codes: Vec<&str> = rest.into_iter().filter(|e| !e.contains(char::is_whitespace)).collect();
                if !codes.is_empty() {
                    steps.push(Step::Idents(names.all(&codes), 1));
                }
                push_atoms(&mut steps, &a.found, 1, 2.0, !failure, names);
            }
        }
        Kind::Summary | Kind::Other => {}
    }
    steps
}

/// An error fingerprint as a summary quotes it: one cut at its length limit
/// ends at its last whole word, marked `…` (half a path or a symbol would read
/// as one the log never named; the metric takes a `…` for a cut).
pub(super) fn whole_words(e: &str) -> Cow<'_, str> {
    if e.chars().count() < crate::text::atoms::ERROR_FINGERPRINT_CHARS {
        return Cow::Borrowed(e);
    }
    match e.rfind(' ') {
        Some(i) if i > 0 => Cow::Owned(format!("{} …", e[..i].trim_end())),
        _ => Cow::Borrowed(e),
    }
}
