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

use super::{
    SummarizeError, Summarizer, SummarizerUsage, Summary, SummaryPart, SummaryRequest, clip_line, preview,
    tool_result_text,
};
use crate::filetrack::FileOps;
use crate::model::{Block, Message, Origin, Role};
use regex::Regex;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::LazyLock;

pub struct Extractive;

impl Summarizer for Extractive {
    fn name(&self) -> &str {
        "extractive"
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        let mut facts = Facts::default();
        if let Some(prev) = req.previous_summary {
            facts.absorb_previous(prev);
        }
        facts.scan(req);
        facts.file_ops.merge(req.file_ops);
        let text = match req.part {
            SummaryPart::History => facts.render_checkpoint(req),
            SummaryPart::TurnPrefix => facts.render_turn_prefix(req),
        };
        Ok(Summary { text, file_ops: facts.file_ops, usage: SummarizerUsage::default() })
    }
}

/// Printed as the last request when it is the goal itself.
const GOAL_ABOVE: &str = "(the goal above)";

/// Longest goal / request kept, in characters.
const REQUEST_MAX: usize = 1_200;
/// Longest list item, in characters.
const ITEM_MAX: usize = 300;
/// Bounds on candidates per list, so ranking stays cheap on huge inputs.
const LIST_CAP: usize = 200;

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
    /// identifier → (score, last position seen).
    idents: BTreeMap<String, (u32, u64)>,
    seq: u64,
    file_ops: FileOps,
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
        r"(?-u:\b)[A-Za-z0-9_-]+\.(?:rs|py|ts|tsx|js|jsx|mjs|go|java|kt|c|h|cc|cpp|hpp|cs|rb|ex|exs|swift|php|md|toml|json|jsonl|yaml|yml|txt|sh|sql|html|css|lock|cfg|ini|xml|proto|ipynb)(?-u:\b)",
        r"(?-u:\b)[0-9a-f]{7,40}(?-u:\b)",
        r"(?-u:\b)v?[0-9]+\.[0-9]+\.[0-9]+(?:[-+][A-Za-z0-9_.]+)?(?-u:\b)",
        r"(?-u:\b)[A-Z]{1,5}[0-9]{3,5}(?-u:\b)",
        r"(?-u:\b)[A-Z][A-Z0-9]{1,9}-[0-9]{1,6}(?-u:\b)",
        r"#[0-9]{2,6}(?-u:\b)",
        // Symbols: qualified paths (`a::b`), snake_case, camelCase / PascalCase.
        r"(?-u:\b)[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)+",
        r"(?-u:\b)[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+(?-u:\b)",
        r"(?-u:\b)[a-z]+[A-Z][A-Za-z0-9]*(?-u:\b)",
        r"(?-u:\b)[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*(?-u:\b)",
    ];
    re(&parts.iter().map(|p| format!("(?:{p})")).collect::<Vec<_>>().join("|"))
});

/// Markdown code spans in user and assistant text name symbols and commands.
static CODE_SPAN: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"`([^`\n]{2,80})`"));

/// Tool output scanned for identifiers and errors when the policy sets no
/// preview: the head and tail of each result (bulk output in the middle of a long
/// listing rarely fits a bounded summary, and scanning it all would make the
/// summarizer cost grow with output size rather than with the number of facts).
const SCAN_HEAD: usize = 6_000;
const SCAN_TAIL: usize = 2_000;

fn matches(r: &LazyLock<Option<Regex>>, s: &str) -> bool {
    r.as_ref().is_some_and(|r| r.is_match(s))
}

/// Sentences of a text: lines, then `. `/`? `/`! ` boundaries.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.lines().flat_map(|l| l.split_inclusive(". ").flat_map(|s| s.split_inclusive("? "))).map(str::trim).filter(
        |s| {
            // Skip code-ish noise: fences, very short fragments.
            s.len() > 3 && !s.starts_with("```")
        },
    )
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

/// The plausible identifiers of a text, each once, in order of first
/// occurrence. A pure function of the text, memoized: the same tool outputs are
/// scanned again at every compaction and by every policy of a sweep.
fn idents_of(text: &str) -> std::sync::Arc<[Box<str>]> {
    static MEMO: LazyLock<super::text_memo::TextMemo> = LazyLock::new(Default::default);
    MEMO.get(text, |text| {
        let Some(r) = IDENTS.as_ref() else { return Vec::new() };
        let mut seen: HashSet<&str> = HashSet::new();
        let mut out = Vec::new();
        for m in r.find_iter(text) {
            let s = m.as_str().trim_end_matches(['.', ',', ':', ';']);
            if plausible_ident(s) && seen.insert(s) {
                out.push(Box::from(s));
            }
        }
        out
    })
}

impl Facts {
    /// Count the identifiers of one text, each once per text: a symbol repeated
    /// all over one long output is one occurrence, not fifty.
    fn ident(&mut self, text: &str, weight: u32) {
        for s in idents_of(text).iter() {
            self.count_ident(s, weight);
        }
    }

    fn count_ident(&mut self, s: &str, weight: u32) {
        self.seq += 1;
        let e = self.idents.entry(s.to_string()).or_insert((0, 0));
        e.0 = e.0.saturating_add(weight);
        e.1 = self.seq;
    }

    /// Code spans of prose (`` `parse_header` ``, `` `cargo test` ``) are exact
    /// names the writer chose to mark.
    fn code_spans(&mut self, text: &str, weight: u32) {
        let Some(r) = CODE_SPAN.as_ref() else { return };
        let spans: Vec<&str> = r.captures_iter(text).filter_map(|c| c.get(1)).map(|m| m.as_str().trim()).collect();
        for s in spans {
            if s.split_whitespace().count() <= 4 && plausible_ident(s) {
                self.count_ident(s, weight);
            }
        }
    }

    fn scan(&mut self, req: &SummaryRequest<'_>) {
        // tool_use id → (name, input) for the results that follow.
        let mut calls: HashMap<&str, (&str, &serde_json::Value)> = HashMap::new();
        for m in req.messages {
            match (m.role, m.origin) {
                (Role::User, Origin::Human) if !m.has_tool_results() => {
                    let text = human_text(m);
                    if text.trim().is_empty() {
                        continue;
                    }
                    let clipped = clip_block(&text, REQUEST_MAX);
                    if self.goal.is_none() {
                        self.goal = Some(clipped.clone());
                    }
                    if self.first_request.is_none() {
                        self.first_request = Some(clipped.clone());
                    }
                    self.last_request = Some(clipped);
                    // A new request: what was "in progress" belongs to the old one.
                    self.in_progress = Recent::default();
                    for s in sentences(&text) {
                        if matches(&CONSTRAINT, s) {
                            self.constraints.push(clip_line(s, ITEM_MAX));
                        }
                    }
                    self.ident(&text, 3);
                    self.code_spans(&text, 3);
                }
                (_, Origin::CompactSummary) => {
                    // A previous summary replayed as a message (no iterative update).
                    let text = human_text(m);
                    self.absorb_previous(&text);
                }
                (Role::Assistant, _) => {
                    for b in &m.blocks {
                        match b {
                            Block::Text { text } => {
                                for s in sentences(text) {
                                    if matches(&DONE, s) {
                                        self.done.push(clip_line(s, ITEM_MAX));
                                    } else if matches(&INTENT, s) {
                                        self.in_progress.push(clip_line(s, ITEM_MAX));
                                    }
                                    if matches(&DECISION, s) {
                                        self.decisions.push(clip_line(s, ITEM_MAX));
                                    }
                                }
                                self.ident(text, 2);
                                self.code_spans(text, 2);
                            }
                            Block::ToolUse { id, name, input } => {
                                calls.insert(id.as_str(), (name.as_str(), input));
                                for (k, path) in crate::filetrack::tool_file_ops(name, input) {
                                    self.file_ops.add(k, path);
                                }
                                if is_shell(name) {
                                    if let Some(c) = command_of(input) {
                                        self.ident(&c, 3);
                                    }
                                } else {
                                    self.ident_json(input);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                (Role::User, _) if m.has_tool_results() => {
                    for b in &m.blocks {
                        let Block::ToolResult { tool_use_id, content, is_error } = b else { continue };
                        let full = tool_result_text(content);
                        let text: Cow<'_, str> = match req.limits.preview_head_chars {
                            Some(h) => preview(&full, h, req.limits.preview_tail_chars),
                            None => preview(&full, SCAN_HEAD, SCAN_TAIL),
                        };
                        let (name, input) = calls.get(tool_use_id.as_str()).copied().unwrap_or(("tool", &NULL));
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
                            self.commands.push(format!("`{}` → {status}", clip_line(&cmd, 160)));
                        }
                        let nonzero = exit.is_some_and(|c| c != 0);
                        let mut error_lines = text.lines().filter(|l| matches(&ERROR_LINE, l)).take(2).peekable();
                        if failed || nonzero || error_lines.peek().is_some() {
                            let lines: Vec<String> = error_lines.map(|l| clip_line(l, 200)).collect();
                            let shown = if lines.is_empty() {
                                text.lines()
                                    .find(|l| !l.trim().is_empty())
                                    .map(|l| clip_line(l, 200))
                                    .unwrap_or_default()
                            } else {
                                lines.join(" | ")
                            };
                            if !shown.is_empty() {
                                self.errors.push(format!("{name}: {shown}"));
                            }
                            // Identifiers on error lines matter more than those in bulk output.
                            self.ident(&shown, 2);
                        }
                        self.ident(&text, 1);
                    }
                }
                _ => {}
            }
        }
    }

    fn ident_json(&mut self, v: &serde_json::Value) {
        match v {
            serde_json::Value::String(s) => self.ident(s, 3),
            serde_json::Value::Array(a) => a.iter().for_each(|x| self.ident_json(x)),
            serde_json::Value::Object(o) => o.values().for_each(|x| self.ident_json(x)),
            _ => {}
        }
    }

    /// Parse a previous checkpoint (ours or any markdown with `## ` headings) back
    /// into facts so an iterative update keeps them.
    fn absorb_previous(&mut self, text: &str) {
        let mut heading = String::new();
        let mut goal_lines: Vec<&str> = Vec::new();
        let mut request_lines: Vec<&str> = Vec::new();
        for line in text.lines() {
            let t = line.trim();
            if let Some(h) = t.strip_prefix("### ").or_else(|| t.strip_prefix("## ")) {
                heading = h.trim().to_ascii_lowercase();
                continue;
            }
            if t.is_empty() || t == "- (none)" || t == "(none)" {
                continue;
            }
            let item = t
                .trim_start_matches("- [x] ")
                .trim_start_matches("- [ ] ")
                .trim_start_matches("- ")
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start_matches(". ")
                .to_string();
            match heading.as_str() {
                "goal" | "original request" => goal_lines.push(t),
                "constraints & preferences" => self.constraints.push(item),
                "done" | "early progress" => self.done.push(item),
                "in progress" => self.in_progress.push(item),
                "key decisions" => self.decisions.push(item),
                "next steps" => self.prev_next_steps.push(item),
                "last user request" => request_lines.push(t),
                "files read" => {
                    self.file_ops.read.insert(item.trim_matches('`').to_string());
                }
                "files modified" => {
                    self.file_ops.modified.insert(item.trim_matches('`').to_string());
                }
                "commands run" => self.commands.push(item),
                "errors seen" => self.errors.push(item),
                "identifiers" => {
                    let id = item.trim_matches('`').to_string();
                    self.seq += 1;
                    let e = self.idents.entry(id).or_insert((0, 0));
                    // Carried identifiers keep a moderate rank: they mattered once.
                    e.0 = e.0.saturating_add(2);
                    e.1 = self.seq;
                }
                _ => {
                    self.earlier.push(clip_line(t, ITEM_MAX));
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

    /// Identifiers, best first: score, then recency, then text (deterministic).
    fn ranked_idents(&self) -> Vec<&str> {
        let mut v: Vec<(&String, &(u32, u64))> = self.idents.iter().collect();
        v.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(b.1.1.cmp(&a.1.1)).then(a.0.cmp(b.0)));
        v.into_iter().take(LIST_CAP).map(|(k, _)| k.as_str()).collect()
    }

    fn render_checkpoint(&self, req: &SummaryRequest<'_>) -> String {
        let mut doc = Doc::new(req);
        let none = "(none)".to_string();
        // Section order is fixed; the second number is the priority (0 = kept first).
        doc.section("## Goal");
        doc.block(0, self.goal.clone().unwrap_or(none.clone()));
        doc.section("## Constraints & Preferences");
        doc.list(2, "- ", &self.constraints.items, true);
        doc.section("## Progress");
        doc.section("### Done");
        doc.list(5, "- [x] ", &self.done.items, true);
        doc.section("### In Progress");
        doc.list(2, "- [ ] ", &self.in_progress.items, true);
        doc.section("## Key Decisions");
        doc.list(4, "- ", &self.decisions.items, true);
        doc.section("## Next Steps");
        let next: Vec<String> = match &self.last_request {
            Some(r) => vec![format!("Continue with the last user request: {}", clip_line(r, ITEM_MAX))],
            None => self.prev_next_steps.clone(),
        };
        doc.numbered(1, &next);
        doc.section("## Critical Context");
        doc.section("### Last user request");
        // Often the goal itself early in a session: say so instead of repeating it.
        let last = match &self.last_request {
            Some(r) if Some(r) == self.goal.as_ref() => GOAL_ABOVE.to_string(),
            Some(r) => r.clone(),
            None => none,
        };
        doc.block(0, last);
        doc.section("### Files modified");
        let modified: Vec<String> = self.file_ops.modified.iter().map(|p| format!("`{p}`")).collect();
        doc.list(1, "- ", &modified, false);
        doc.section("### Files read");
        let read: Vec<String> = self.file_ops.read_only().map(|p| format!("`{p}`")).collect();
        doc.list(3, "- ", &read, false);
        doc.section("### Commands run");
        doc.list(3, "- ", &self.commands.items, true);
        doc.section("### Errors seen");
        // The newest errors are the likeliest to matter next.
        let n = self.errors.items.len();
        let (old, recent) = self.errors.items.split_at(n.saturating_sub(5));
        doc.list_split(1, 3, "- ", old, recent);
        doc.section("### Identifiers");
        let ids: Vec<String> = self.ranked_idents().into_iter().map(|s| format!("`{s}`")).collect();
        doc.list(4, "- ", &ids, false);
        if !self.earlier.items.is_empty() {
            doc.section("### Earlier context");
            doc.list(5, "- ", &self.earlier.items, true);
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
        progress.extend(self.file_ops.modified.iter().map(|p| format!("modified `{p}`")));
        progress.extend(self.commands.items.iter().cloned());
        doc.list(2, "- ", &progress, true);
        doc.section("## Context for Suffix");
        let mut ctx: Vec<String> = self.in_progress.items.clone();
        ctx.extend(self.errors.items.iter().cloned());
        ctx.extend(self.decisions.items.iter().cloned());
        ctx.extend(self.file_ops.read_only().map(|p| format!("read `{p}`")));
        doc.list(1, "- ", &ctx, true);
        let ids: Vec<String> = self.ranked_idents().into_iter().map(|s| format!("`{s}`")).collect();
        doc.list(3, "- ", &ids, false);
        doc.render()
    }
}

static NULL: serde_json::Value = serde_json::Value::Null;

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
}

impl<'a> Doc<'a> {
    fn new(req: &'a SummaryRequest<'a>) -> Doc<'a> {
        Doc { req, lines: Vec::new(), section_of: Vec::new(), sections: Vec::new(), list_sections: Vec::new() }
    }

    fn section(&mut self, title: &str) {
        self.sections.push(title.to_string());
        self.list_sections.push(false);
    }

    fn cur(&self) -> usize {
        self.sections.len().saturating_sub(1)
    }

    fn push(&mut self, line: String, prio: u8, rank: usize) {
        let s = self.cur();
        self.lines.push((line, prio, rank));
        self.section_of.push(s);
    }

    fn block(&mut self, prio: u8, text: String) {
        self.push(text, prio, 0);
    }

    /// A list; `newest_first` ranks later items first (they were seen last).
    fn list(&mut self, prio: u8, bullet: &str, items: &[String], newest_first: bool) {
        let s = self.cur();
        self.list_sections[s] = true;
        let n = items.len();
        for (i, it) in items.iter().enumerate() {
            let rank = if newest_first { n - 1 - i } else { i };
            self.push(format!("{bullet}{it}"), prio, rank);
        }
    }

    fn list_split(&mut self, prio_recent: u8, prio_old: u8, bullet: &str, old: &[String], recent: &[String]) {
        let s = self.cur();
        self.list_sections[s] = true;
        let n = old.len();
        for (i, it) in old.iter().enumerate() {
            self.push(format!("{bullet}{it}"), prio_old, n - 1 - i);
        }
        let m = recent.len();
        for (i, it) in recent.iter().enumerate() {
            self.push(format!("{bullet}{it}"), prio_recent, m - 1 - i);
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
        // Skeleton: headings and blank lines are always printed.
        let skeleton: u64 = self.sections.iter().map(|h| est.text_tokens(h) + 1).sum();
        let mut order: Vec<usize> = (0..self.lines.len()).collect();
        order.sort_by_key(|&i| (self.lines[i].1, self.lines[i].2, i));
        let mut admitted = vec![false; self.lines.len()];
        let mut used = skeleton;
        for i in order {
            let cost = est.text_tokens(&self.lines[i].0) + 1;
            if used + cost <= budget {
                used += cost;
                admitted[i] = true;
            }
        }
        let build = |admitted: &[bool]| -> String {
            let mut out = String::new();
            for (si, title) in self.sections.iter().enumerate() {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(title);
                out.push('\n');
                let mut any = false;
                for (li, (line, _, _)) in self.lines.iter().enumerate() {
                    if self.section_of[li] == si && admitted[li] {
                        out.push_str(line);
                        out.push('\n');
                        any = true;
                    }
                }
                if !any && self.list_sections[si] {
                    out.push_str("- (none)\n");
                }
            }
            out.trim_end().to_string()
        };
        let mut text = build(&admitted);
        // Per-line costs are an estimate of the joined text; drop the least
        // important admitted lines until the whole fits.
        let mut by_prio: Vec<usize> = (0..self.lines.len()).filter(|&i| admitted[i]).collect();
        by_prio.sort_by_key(|&i| std::cmp::Reverse((self.lines[i].1, self.lines[i].2, i)));
        let mut k = 0;
        while est.text_tokens(&text) > budget && k < by_prio.len() {
            admitted[by_prio[k]] = false;
            k += 1;
            text = build(&admitted);
        }
        if est.text_tokens(&text) > budget {
            // Even the skeleton does not fit a tiny budget: cut the text itself.
            let chars = (budget as usize).saturating_mul(4);
            text = super::head_chars(&text, chars).to_string();
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

    fn summarize(msgs: &[Message], prev: Option<&str>, max: u64) -> String {
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
        Extractive.summarize(&req).unwrap().text
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
            "`parse_header`",
        ] {
            assert!(s.contains(needle), "missing {needle:?} in\n{s}");
        }
        // Read then modified: listed as modified only.
        assert!(s.contains("### Files read\n- (none)"), "{s}");
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
        assert_eq!(third.matches("- `/repo/src/parser.rs`").count(), 2, "{third}");
    }

    #[test]
    fn deterministic() {
        assert_eq!(summarize(&session(), None, 500), summarize(&session(), None, 500));
    }
}
