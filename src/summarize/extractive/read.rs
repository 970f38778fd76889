//! Reading one message into [`Step`]s: the sentence and identifier patterns, the
//! tool-call bookkeeping, and the per-message scan that the checkpoint applies later.

use super::*;

pub(super) fn re(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

pub(super) static CONSTRAINT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)(must|never|always|don'?t|do not|only|should ?n[o']t|avoid|make sure|ensure|required?|prefer|without)(?-u:\b)",
    )
});
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
pub(super) static ERROR_LINE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"(?i)((?-u:\b)error(?-u:\b)|(?-u:\b)failed(?-u:\b)|(?-u:\b)failure(?-u:\b)|panicked|traceback|exception|fatal:|no such file|not found|cannot |permission denied|segmentation fault|(?-u:\b)E\d{4}(?-u:\b))",
    )
});
pub(super) static EXIT_CODE: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"(?i)(?:exit code:?|exited with(?: code)?|exit status:?|process exited with code)\s*(-?\d+)"));
/// Identifier patterns, one alternation so a text is scanned once: URL, UUID,
/// path, file name, hex hash, version, error code, ticket, issue, code symbol
/// (`mod::item`, snake_case, camelCase). Matching is
/// leftmost-first, so a path inside a URL or a file name inside a path is part of
/// the larger identifier, not another one.
pub(super) static IDENTS: LazyLock<Option<Regex>> = LazyLock::new(|| {
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
pub(super) const SCAN_HEAD: usize = 24_000;
pub(super) const SCAN_TAIL: usize = 4_000;

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

/// A shell tool of any agent, by the one tool table (Codex `shell_command`
/// and `exec_command` included, as the metric reads them).
pub(super) fn is_shell(name: &str) -> bool {
    crate::tools::is_command(name)
}

/// The command string of a shell tool call (`["bash","-lc","cmd"]` → `cmd`).
pub(super) fn command_of(input: &serde_json::Value) -> Option<String> {
    let c = crate::tools::COMMAND_KEYS.iter().find_map(|k| input.get(*k))?;
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

pub(super) fn human_text(m: &Message) -> String {
    crate::text::message_text(m)
}

/// The accepted identifiers of a text, one entry per occurrence, in order.
/// Not memoized by text: a session's messages are read once each
/// ([`SessionExtractive`]; a single replay's compactions replace each message
/// once), so hashing every text to look it up found next to nothing, at the
/// price of a tenth of the summarizer's reading.
pub(super) fn idents_of(text: &str) -> Vec<&str> {
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
pub(super) fn symbols_of(text: &str) -> Vec<&str> {
    let words = Words::of(text);
    words.symbols().filter_map(|(start, end)| accept_symbol(&text[start..end])).collect()
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
#[derive(Clone, Copy)]
pub(super) struct Call<'m> {
    pub(super) name: &'m str,
    pub(super) input: &'m serde_json::Value,
    pub(super) at: CallRef,
}

pub(super) type Calls<'m> = HashMap<&'m str, Call<'m>>;

/// Record the tool calls of an assistant message (`index`: its place in the
/// session, when it is one of the session's messages).
pub(super) fn note_calls<'m>(m: &'m Message, index: Option<usize>, calls: &mut Calls<'m>) {
    for (bi, b) in m.blocks.iter().enumerate() {
        if let Block::ToolUse { id, name, input } = b {
            let at = index.map_or(CallRef::Foreign, |i| CallRef::At(i, bi));
            calls.insert(id.as_str(), Call { name: name.as_str(), input, at });
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

pub(super) fn push_idents(steps: &mut Vec<Step>, text: &str, weight: u32, names: &Names) {
    let found = idents_of(text);
    if !found.is_empty() {
        steps.push(Step::Idents(names.all(&found), weight));
    }
}

pub(super) fn push_symbols(steps: &mut Vec<Step>, text: &str, weight: f64, names: &Names) {
    let found = symbols_of(text);
    if !found.is_empty() {
        steps.push(Step::Symbols(names.all(&found), weight));
    }
}

/// The steps of one message of kind `kind` (not [`Kind::Summary`], which
/// is merged as a previous summary).
pub(super) fn read_message(m: &Message, kind: Kind, calls: &Calls<'_>, names: &Names) -> Vec<Step> {
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
                        for (k, path) in crate::text::filetrack::tool_file_ops(name, input) {
                            steps.push(Step::File(k, path));
                        }
                        if is_shell(name) {
                            if let Some(c) = command_of(input) {
                                push_idents(&mut steps, &c, 3, names);
                                push_symbols(&mut steps, &c, 3.0, names);
                            }
                        } else {
                            read_json(input, &mut steps, names);
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
pub(super) fn read_json(v: &serde_json::Value, steps: &mut Vec<Step>, names: &Names) {
    crate::text::visit_strings(v, &mut |s| {
        let text = preview_words(s, SCAN_HEAD, SCAN_TAIL);
        push_idents(steps, &text, 3, names);
        push_symbols(steps, &text, 3.0, names);
    });
}

pub(super) static NULL: serde_json::Value = serde_json::Value::Null;
