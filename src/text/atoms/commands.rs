//! Shell commands: the lexer that splits a command line into simple commands
//! and the normalization of each to argv[0], subcommands, flags and paths.

use super::scan::IDENT_SEP;
use super::text::{extension, known_ext};
use super::*;

#[derive(Debug)]
struct Token {
    text: String,
    /// Quoted and containing whitespace: free text (messages, patterns).
    free_text: bool,
}

/// A token as [`normalize_simple`] reads it: a lexed [`Token`], or a word of
/// a line the lexer would only split at its spaces (never free text).
trait Word {
    fn text(&self) -> &str;
    fn free_text(&self) -> bool;
}

impl Word for Token {
    fn text(&self) -> &str {
        &self.text
    }
    fn free_text(&self) -> bool {
        self.free_text
    }
}

impl Word for &str {
    fn text(&self) -> &str {
        self
    }
    fn free_text(&self) -> bool {
        false
    }
}

/// Pipeline filters: what they do to output is not a command worth keeping.
const FILTERS: &[&str] = &[
    "head", "tail", "grep", "rg", "sort", "uniq", "wc", "less", "more", "cut", "tr", "sed", "awk", "xargs", "tee",
    "jq", "cat", "column", "fold", "nl",
];
/// git subcommands that any agent re-derives without help: needing them later
/// says nothing about what a summary kept (pitfall 10, deny lists).
const TRIVIAL_GIT: &[&str] =
    &["status", "diff", "add", "log", "show", "branch", "stash", "fetch", "pull", "push", "commit"];

/// The parts of a normalized command, joined by single spaces as they come
/// (one string, no allocation per part), with what [`Parts::trivial`] asks of
/// them.
struct Parts {
    joined: String,
    count: usize,
    /// Byte ranges of the first two parts in `joined`.
    first: (usize, usize),
    second: (usize, usize),
    /// Are all parts after the first / after the second flags (or `.`)?
    flags_after_first: bool,
    flags_after_second: bool,
}

impl Parts {
    fn new() -> Parts {
        Parts {
            joined: String::new(),
            count: 0,
            first: (0, 0),
            second: (0, 0),
            flags_after_first: true,
            flags_after_second: true,
        }
    }

    fn push(&mut self, part: &str) {
        if self.count > 0 {
            self.joined.push(' ');
        }
        let start = self.joined.len();
        self.joined.push_str(part);
        let flag = part.starts_with('-') || part == ".";
        match self.count {
            0 => self.first = (start, self.joined.len()),
            1 => {
                self.second = (start, self.joined.len());
                self.flags_after_first &= flag;
            }
            _ => {
                self.flags_after_first &= flag;
                self.flags_after_second &= flag;
            }
        }
        self.count += 1;
    }

    /// A command of only a trivial program (or git subcommand) and flags.
    fn trivial(&self) -> bool {
        let part = |(a, b): (usize, usize)| self.joined.get(a..b).unwrap_or("");
        let prog = part(self.first);
        if matches!(prog, "ls" | "pwd" | "tree" | "whoami" | "date" | "clear") {
            return self.flags_after_first;
        }
        prog == "git" && self.count >= 2 && TRIVIAL_GIT.contains(&part(self.second)) && self.flags_after_second
    }

    /// The command: its first [`COMMAND_CHARS`] characters, trimmed.
    fn finish(mut self) -> String {
        let end = truncate_chars(&self.joined, COMMAND_CHARS).trim_end().len();
        self.joined.truncate(end);
        self.joined
    }
}

/// Commands that only move around or print.
const TRIVIAL: &[&str] =
    &["cd", "echo", "printf", "true", "false", "exit", "set", "export", "source", ".", "pwd", "clear"];
const PREFIXES: &[&str] = &["sudo", "time", "nohup", "exec", "env", "command"];

/// Normalized commands of one shell command line (one per simple command).
pub(crate) fn normalize_commands(raw: &str, cwd: Option<&str>) -> Vec<String> {
    let raw = &raw[..floor_boundary(raw, MAX_COMMAND_INPUT)];
    let inner = unwrap_shell(raw.trim());
    // A heredoc body is data, not commands.
    let inner = match inner.find("<<") {
        Some(i) => &inner[..i],
        None => inner,
    };
    let mut out = Vec::new();
    for (tokens, after_pipe) in split_simple_commands(inner) {
        if let Some(c) = normalize_simple(&tokens, after_pipe, cwd)
            && !out.contains(&c)
        {
            out.push(c);
        }
    }
    out
}

/// [`line_as_commands_in`], asking [`list_items`] itself.
#[cfg(test)]
pub(crate) fn line_as_commands(line: &str, cwd: Option<&str>) -> Vec<String> {
    line_as_commands_in(line, list_items(line), cwd)
}

/// The commands of a line of free text read as a command line: without its
/// bullet or prompt (`-`, `*`, `$`, `>`, `•`) and without backticks; `items`
/// are the line's [`list_items`].
pub(crate) fn line_as_commands_in(line: &str, items: ListItems<'_>, cwd: Option<&str>) -> Vec<String> {
    match list_words(items) {
        Some(words) => normalize_simple(&words, false, cwd).into_iter().collect(),
        None => line_as_commands_lexed(line, cwd),
    }
}

/// [`line_as_commands_in`] through the lexer, for any line.
pub(super) fn line_as_commands_lexed(line: &str, cwd: Option<&str>) -> Vec<String> {
    let l = line.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '-' | '*' | '$' | '>' | '•'));
    normalize_commands(&l.replace('`', ""), cwd)
}

/// The tokens [`line_as_commands_in`] would lex from a packed list line
/// ([`list_items`]: code symbols, or identifiers in code spans) whose items
/// are plain words: no whitespace, quote, backslash or shell operator in
/// them, no `<<`, no shell as the first. Such a line, its bullet and
/// backticks dropped, is one simple command whose tokens are its
/// space-separated words (the `·` separators among them), and no shell
/// wraps it; lexing it character by character was most of the cost of
/// reading a summary's new lines in a sweep.
pub(super) fn list_words(items: ListItems<'_>) -> Option<Vec<&str>> {
    let (list, sep) = items?;
    if list.len() > MAX_COMMAND_INPUT || list.contains("<<") {
        return None;
    }
    let plain = |w: &str| {
        w.bytes().all(plain_byte)
            || w.chars().all(|c| if c.is_ascii() { plain_byte(c as u8) } else { !c.is_whitespace() })
    };
    let mut words = Vec::new();
    if sep == IDENT_SEP {
        for (k, item) in super::words::split_str(list, sep).enumerate() {
            let inner = item.strip_prefix('`').and_then(|x| x.strip_suffix('`'))?;
            if inner.is_empty() || !plain(inner) {
                return None;
            }
            if k > 0 {
                words.push("·");
            }
            words.push(inner);
        }
    } else {
        // Code symbols hold no space: the words are the items, each but the
        // last with the comma after it.
        for w in list.split(' ') {
            if w.is_empty() || !plain(w) {
                return None;
            }
            words.push(w);
        }
    }
    let first = words.first()?;
    if matches!(basename(first), "bash" | "sh" | "zsh" | "dash") {
        return None;
    }
    Some(words)
}

/// `bash -lc '…'` / `sh -c "…"` → the inner script.
fn unwrap_shell(s: &str) -> &str {
    let mut rest = s;
    let Some((first, tail)) = rest.split_once(char::is_whitespace) else { return s };
    let prog = basename(first);
    if !matches!(prog, "bash" | "sh" | "zsh" | "dash") {
        return s;
    }
    rest = tail.trim_start();
    let Some((flag, script)) = rest.split_once(char::is_whitespace) else { return s };
    if !(flag.starts_with('-') && flag.ends_with('c')) {
        return s;
    }
    let script = script.trim();
    for q in ['\'', '"'] {
        if script.len() >= 2 && script.starts_with(q) && script.ends_with(q) {
            return &script[1..script.len() - 1];
        }
    }
    script
}

/// Lex a script into simple commands, respecting quotes; the flag says the
/// command reads a pipe.
fn split_simple_commands(s: &str) -> Vec<(Vec<Token>, bool)> {
    let mut cmds: Vec<(Vec<Token>, bool)> = Vec::new();
    let mut tokens: Vec<Token> = Vec::new();
    let mut cur = String::new();
    let mut cur_free = false;
    let mut in_token = false;
    let mut quote: Option<char> = None;
    let mut after_pipe = false;
    let flush = |tokens: &mut Vec<Token>, cur: &mut String, cur_free: &mut bool, in_token: &mut bool| {
        if *in_token {
            tokens.push(Token { text: std::mem::take(cur), free_text: *cur_free });
        }
        *cur_free = false;
        *in_token = false;
    };
    let char_at = |i: usize| s.get(i..).and_then(|rest| rest.chars().next());
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(c) = char_at(i) {
        // A run of ASCII characters that only join the token is copied at
        // once: every line of every summary is also read as a command, and
        // most of a line is such runs.
        let run = match quote {
            None => b[i..].iter().take_while(|&&x| plain_byte(x)).count(),
            Some(q) => b[i..].iter().take_while(|&&x| x.is_ascii() && x != q as u8 && !ascii_space(x)).count(),
        };
        if run > 0 {
            cur.push_str(&s[i..i + run]);
            in_token = true;
            i += run;
            continue;
        }
        i += c.len_utf8();
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else {
                if c.is_whitespace() {
                    cur_free = true;
                }
                cur.push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                in_token = true;
            }
            '\\' => {
                if let Some(n) = char_at(i) {
                    i += n.len_utf8();
                    if n != '\n' {
                        cur.push(n);
                        in_token = true;
                    }
                }
            }
            // `2>&1` and `&>`: an `&` in a redirection is not a separator.
            '&' if (in_token && cur.ends_with('>')) || char_at(i) == Some('>') => {
                cur.push(c);
                in_token = true;
            }
            ';' | '\n' | '&' | '|' | '(' | ')' => {
                flush(&mut tokens, &mut cur, &mut cur_free, &mut in_token);
                if !tokens.is_empty() {
                    cmds.push((std::mem::take(&mut tokens), after_pipe));
                }
                let next = char_at(i);
                let pipe = c == '|' && next != Some('|');
                if matches!(c, '&' | '|') && next == Some(c) {
                    i += 1;
                }
                after_pipe = pipe;
            }
            c if c.is_whitespace() => flush(&mut tokens, &mut cur, &mut cur_free, &mut in_token),
            _ => {
                cur.push(c);
                in_token = true;
            }
        }
    }
    flush(&mut tokens, &mut cur, &mut cur_free, &mut in_token);
    if !tokens.is_empty() {
        cmds.push((tokens, after_pipe));
    }
    cmds
}

/// An ASCII character that, outside quotes, only joins the current token.
fn plain_byte(b: u8) -> bool {
    b.is_ascii() && !ascii_space(b) && !matches!(b, b'\'' | b'"' | b'\\' | b'&' | b';' | b'|' | b'(' | b')')
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod lexer_tests;

fn is_assignment(t: &str) -> bool {
    match t.split_once('=') {
        Some((k, _)) => {
            !k.is_empty()
                && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !k.as_bytes()[0].is_ascii_digit()
        }
        None => false,
    }
}

fn normalize_simple<W: Word>(tokens: &[W], after_pipe: bool, cwd: Option<&str>) -> Option<String> {
    let mut i = 0;
    while i < tokens.len() && (is_assignment(tokens[i].text()) || PREFIXES.contains(&tokens[i].text())) {
        i += 1;
    }
    let argv0 = tokens.get(i)?;
    let argv0_text = argv0.text();
    if argv0.free_text() || argv0_text.is_empty() || argv0_text.starts_with(['-', '$', '>', '<', '#']) {
        return None;
    }
    let prog = basename(argv0_text);
    if TRIVIAL.contains(&prog) || (after_pipe && FILTERS.contains(&prog)) {
        return None;
    }
    let mut parts = Parts::new();
    match argv0_text.contains('/').then(|| normalize_path(argv0_text, cwd)).flatten() {
        Some(p) => parts.push(&p),
        None => parts.push(argv0_text),
    }
    let mut skip_next = false;
    for t in &tokens[i + 1..] {
        if skip_next {
            skip_next = false;
            continue;
        }
        let s = t.text();
        if t.free_text() || s.is_empty() || s.starts_with('$') || s.starts_with('#') {
            continue;
        }
        if s.starts_with(['>', '<']) || s.starts_with("2>") || s.starts_with("1>") || s.starts_with("&>") {
            // `> file` drops the operator and its target; `>file` only itself.
            skip_next = matches!(s, ">" | ">>" | "<" | "2>" | "1>" | "&>" | "2>>");
            continue;
        }
        if s.starts_with('-') {
            if s.len() > 1 && s.len() <= 64 {
                parts.push(s);
            }
            // A message argument is free text even when it is one word.
            skip_next = matches!(s, "-m" | "--message");
            continue;
        }
        if s.contains('/') || extension(s).is_some_and(known_ext) {
            if let Some(p) = normalize_path(s, cwd) {
                parts.push(&p);
            }
            continue;
        }
        let word_like = s.len() <= 64
            && s.as_bytes()[0].is_ascii_alphanumeric()
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.:@+=,-".contains(&b));
        if word_like {
            parts.push(s);
        }
    }
    (!parts.trivial()).then(|| parts.finish())
}
