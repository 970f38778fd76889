//! What a text names, indexed for matching: a summary S, the system prompt, or a
//! replaced previous summary. Also the matching rule `match(a, S)` of quality.md
//! §c.3 (1 exact, 0.5 partial, 0 otherwise).
//!
//! "Found in S" means, per type:
//! - path / modified_path: the normalized path is a path atom of S, or occurs in
//!   S's normalized text (cwd prefix removed, whitespace folded) between path
//!   boundaries, or it is a bare file name and S names a path ending in it
//!   (the agent said `parser.rs`, S lists `src/parser.rs`) → 1; only its
//!   basename is named in S → 0.5;
//! - symbol: a symbol atom or identifier token of S, or a bounded substring → 1;
//!   for a qualified symbol (`Foo::bar`), the last segment alone → 0.5;
//! - error: an error atom of S or a substring of S's normalized text → 1; the
//!   exception class alone (`TypeError`) → 0.5;
//! - command: a normalized command of a line or code span of S, or a substring →
//!   1; argv[0] + subcommand alone (`cargo test`) → 0.5;
//! - id: hex ids match when one is a prefix of the other (≥ 7 digits, so a short
//!   SHA names the full one but one changed digit does not); others exact atom
//!   or bounded substring → 1;
//! - constraint: share of its keywords present in S ≥ 0.75 → 1, ≥ 0.5 → 0.5.

use super::block_tokens::BlockSelection;
use super::runs::{RunLookup, Runs, contains_bounded, ident_inner, word_char};
use super::{AtomKind, CLASSES};
use crate::text::atoms::{self as extract, Found};
use crate::text::line_memo::LineMemo;
use foldhash::HashSet;
use std::borrow::Cow;
use std::sync::{Arc, LazyLock, OnceLock};

/// A needed or target atom, with the keyword set of constraints.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Target {
    pub kind: AtomKind,
    pub value: String,
    pub keywords: Vec<String>,
    /// What [`TextView::match_score_with`] derives from the value and the
    /// keywords, made once: a target is matched against every row of its
    /// event (and `compare` scores several policies at one point).
    folded: Option<String>,
    constraint_key: Option<String>,
}

impl Target {
    pub(crate) fn new(kind: AtomKind, value: String, keywords: Vec<String>) -> Target {
        // The view's text is whitespace-folded; so must the needle be (a path
        // argument may hold a run of spaces).
        let folded = value.contains(char::is_whitespace).then(|| extract::fold_ws(&value));
        let constraint_key = (kind == AtomKind::Constraint).then(|| extract::constraint_key(&keywords));
        Target { kind, value, keywords, folded, constraint_key }
    }
}

/// Atoms a view names without holding them in its own key sets:
/// observation masking's P, held as session atom ids
/// (`event::HeldAtoms`) rather than as a copy of each key. Answers what the
/// view's sets would, had its keys been added to them.
pub(crate) trait HeldKeys {
    /// Is `v` a key of class `class` ([`AtomKind::class`])?
    fn has_key(&self, class: usize, v: &str) -> bool;
    /// Is `v` the basename of a path key?
    fn has_basename(&self, v: &str) -> bool;
    /// Does `f` hold for a hex id key?
    fn any_hex(&self, f: &mut dyn FnMut(&str) -> bool) -> bool;
    /// Does `f` hold for a command key?
    fn any_command(&self, f: &mut dyn FnMut(&str) -> bool) -> bool;
}

/// Everything a text names.
#[derive(Debug, Default, Clone)]
pub(crate) struct TextView {
    /// All occurrences (strong and weak) by class.
    pub keys: [HashSet<Arc<str>>; CLASSES],
    /// Strong path, symbol, error and id atoms, for hallucination and precision.
    pub atoms: Vec<(AtomKind, Arc<str>)>,
    pub hex: Vec<String>,
    pub basenames: HashSet<String>,
    /// The texts read for identifier and word tokens ([`TextView::has_ident`],
    /// [`TextView::has_word`]).
    tokens: TokenText,
    /// Session blocks whose tokens the view also has, read from the
    /// session's token index rather than copied into `tokens` (observation
    /// masking's P).
    blocks: Vec<BlockSelection>,
    pub commands: HashSet<String>,
    pub constraints: Vec<(String, Vec<String>)>,
    /// Normalized text for substring matches; empty when the view was built from
    /// already-extracted atoms (observation masking). Set once, when the view
    /// is read.
    text: String,
    /// The identifier and path questions asked of `text`.
    text_idents: RunLookup,
    text_paths: RunLookup,
}

impl TextView {
    /// Read a free text (summary, system prompt). `constraints` also reads its
    /// constraint sentences (for texts that carry user instructions).
    pub fn from_text(text: &str, cwd: Option<&str>, constraints: bool) -> TextView {
        TextView::read(text, cwd, constraints, extract::read_by_line(text))
    }

    /// [`TextView::from_text`], line by line (`by_line`, for a text
    /// [`extract::read_by_line`] accepts) or whole.
    fn read(text: &str, cwd: Option<&str>, constraints: bool, by_line: bool) -> TextView {
        let mut v = TextView::default();
        // What the text names, as a set: the view does not depend on the order.
        let constraint_list = if by_line {
            v.read_lines(text, cwd, constraints)
        } else {
            let mut found = Vec::new();
            extract::scan_text(text, extract::Ctx::Prose, cwd, &mut found);
            found.iter().for_each(|f| v.add_found(f));
            for piece in extract::pieces(text) {
                command_candidates(piece, cwd, &mut v.commands);
            }
            if constraints { extract::constraints(text) } else { Vec::new() }
        };
        v.add_tokens(text);
        for c in &v.commands {
            v.keys[3].insert(Arc::from(c.as_str()));
        }
        for (sentence, kw) in constraint_list {
            v.keys[5].insert(Arc::from(extract::constraint_key(&kw)));
            v.constraints.push((sentence, kw));
        }
        let mut norm = String::with_capacity(text.len().min(extract::SCAN_HEAD + extract::SCAN_TAIL) + 1);
        let prefix = cwd.map(|c| format!("{c}/"));
        for piece in extract::pieces(text) {
            let piece = match &prefix {
                Some(p) if piece.contains(p.as_str()) => Cow::Owned(piece.replace(p.as_str(), "")),
                _ => Cow::Borrowed(piece),
            };
            if !norm.is_empty() {
                norm.push(' ');
            }
            extract::fold_ws_into(&mut norm, &piece);
        }
        v.text = norm;
        v.finish();
        v
    }

    /// The atoms and commands of a text that [`extract::read_by_line`]
    /// accepts, line by line, each line through a process-wide memo; returns
    /// its constraint sentences when `constraints`. What reading it whole
    /// finds: the atoms of its lines and its exit codes, the commands of its
    /// first 4,096 lines, the constraint sentences of every line, each once.
    fn read_lines(&mut self, text: &str, cwd: Option<&str>, constraints: bool) -> Vec<(String, Vec<String>)> {
        // Most of a summary's lines were read before (an iterative update
        // carries its previous checkpoint, a sweep's points write near-identical
        // ones): one lookup per line for its atoms, commands and constraints.
        static MEMO: LazyLock<LineMemo<LineView>> = LazyLock::new(Default::default);
        // Lines split at `\n`, where the atoms are scanned; `str::lines`,
        // which the whole read uses for commands and constraints, also drops
        // the `\r` of a `\r\n` and a last empty line, neither of which names
        // anything (both reads trim a line before reading it).
        // An empty line names nothing (a test checks it); a checkpoint has a
        // blank line before every heading.
        static EMPTY: LazyLock<Arc<[LineView]>> = LazyLock::new(|| Arc::new([LineView::default()]));
        let views: Vec<Arc<[LineView]>> = text
            .split('\n')
            .map(|line| match line {
                "" => EMPTY.clone(),
                _ => MEMO.get(cwd, line, extract::MEMO_MIN_LINE, || vec![LineView::of(line, cwd)]),
            })
            .collect();
        let lines = views.iter().filter_map(|v| v.first());
        for f in lines.clone().flat_map(|l| &l.found) {
            self.add_found(f);
        }
        for f in &extract::scan_exit_codes(text) {
            self.add_found(f);
        }
        for l in lines.clone().take(COMMAND_LINES) {
            // `String::from`, not `to_string`: a `Box<str>` has no
            // specialized `ToString` and would go through the formatter.
            self.commands.extend(l.commands.iter().map(|c| String::from(&**c)));
        }
        let mut out = Vec::new();
        if constraints {
            for l in lines {
                extract::add_constraints(&mut out, &l.constraints);
            }
        }
        out
    }

    /// Record one extracted atom.
    pub fn add_found(&mut self, f: &Found) {
        self.add_key(f.kind, &f.value, f.strong);
    }

    pub fn add_key(&mut self, kind: AtomKind, value: &str, strong: bool) {
        let Some(class) = kind.class() else { return };
        let new = !self.keys[class].contains(value);
        let listed = strong
            && matches!(
                kind,
                AtomKind::Path | AtomKind::ModifiedPath | AtomKind::Symbol | AtomKind::Error | AtomKind::Id
            );
        // A key seen before brought its basename, hex entry or command with
        // it (a line names the same atoms as the lines before it, mostly).
        if !new && !listed {
            return;
        }
        // One allocation at most, for the key and the atom list both.
        let kept: Arc<str> = Arc::from(value);
        if new {
            self.keys[class].insert(kept.clone());
            match kind {
                AtomKind::Path | AtomKind::ModifiedPath => {
                    self.basenames.insert(extract::basename(value).to_string());
                }
                AtomKind::Id if extract::is_hex_value(value) => self.hex.push(value.to_string()),
                AtomKind::Command => {
                    self.commands.insert(value.to_string());
                }
                _ => {}
            }
        }
        if listed {
            let k = if kind == AtomKind::ModifiedPath { AtomKind::Path } else { kind };
            self.atoms.push((k, kept));
        }
    }

    /// Add everything another view names (its normalized text is not carried:
    /// substring matching stays within one text).
    pub fn merge(&mut self, other: &TextView) {
        for (mine, theirs) in self.keys.iter_mut().zip(&other.keys) {
            mine.extend(theirs.iter().cloned());
        }
        self.atoms.extend(other.atoms.iter().cloned());
        self.hex.extend(other.hex.iter().cloned());
        self.basenames.extend(other.basenames.iter().cloned());
        self.tokens.push(&other.tokens.raw);
        self.blocks.extend(other.blocks.iter().cloned());
        self.commands.extend(other.commands.iter().cloned());
        self.constraints.extend(other.constraints.iter().cloned());
    }

    /// Identifier and word tokens of a text (its scanned pieces).
    pub fn add_tokens(&mut self, text: &str) {
        for piece in extract::pieces(text) {
            self.tokens.push(piece);
        }
    }

    /// Identifier and word tokens of the session's blocks in `blocks` (tool
    /// results aside), as [`TextView::add_tokens`] of each of their texts
    /// adds them.
    pub(crate) fn add_blocks(&mut self, blocks: BlockSelection) {
        self.blocks.push(blocks);
    }

    /// Is `v` an identifier token of the texts read: a maximal run of ASCII
    /// letters, digits and `_`, at least 2 long? Answered by a bounded search
    /// (not a set of every token: most views are asked about a few atoms),
    /// then from an index once the view has been asked many (`quality::runs`).
    pub fn has_ident(&self, v: &str) -> bool {
        v.len() >= 2
            && v.bytes().all(ident_inner)
            && (self.tokens.idents.contains(Runs::Ident, &self.tokens.raw, v)
                || self.blocks.iter().any(|b| b.has_ident(v)))
    }

    /// Is `w` one of the lower-cased word tokens ([`extract::word_tokens`]) of
    /// the texts read?
    pub fn has_word(&self, w: &str) -> bool {
        if w.is_empty() || !w.chars().all(word_char) {
            return false;
        }
        if self.blocks.iter().any(|b| b.has_word(w)) {
            return true;
        }
        let lower = self.tokens.lower.get_or_init(|| extract::words_text(&self.tokens.raw));
        self.tokens.words.contains(Runs::Word, lower, w)
    }

    /// Sort and deduplicate the atom list (determinism). Unstable sorts: equal
    /// entries are identical, so the order is the same, without the stable
    /// sort's buffer (a masking view holds thousands of atoms).
    pub fn finish(&mut self) {
        self.atoms.sort_unstable();
        self.atoms.dedup();
        self.hex.sort_unstable();
        self.hex.dedup();
    }

    /// [`TextView::finish`] for a view whose atoms are only counted, never
    /// listed (observation masking's, thousands of atoms): duplicates dropped
    /// by hash, in first-seen order, without sorting the strings.
    pub(crate) fn finish_unordered(&mut self) {
        let mut seen: HashSet<(AtomKind, Arc<str>)> = HashSet::default();
        seen.reserve(self.atoms.len());
        self.atoms.retain(|(kind, value)| seen.insert((*kind, value.clone())));
        self.hex.sort_unstable();
        self.hex.dedup();
    }

    /// `match(a, S)`: 1 exact, 0.5 partial, 0 otherwise (see the module docs).
    pub fn match_score(&self, t: &Target) -> f64 {
        self.match_score_with(t, None)
    }

    /// [`TextView::match_score`] of this view together with `held`, atoms it
    /// names without holding them in its own sets.
    pub(crate) fn match_score_with(&self, t: &Target, held: Option<&dyn HeldKeys>) -> f64 {
        let has_key = |class: usize, v: &str| self.keys[class].contains(v) || held.is_some_and(|h| h.has_key(class, v));
        let has_basename = |v: &str| self.basenames.contains(v) || held.is_some_and(|h| h.has_basename(v));
        // The view's text is whitespace-folded; so is the needle (made so
        // by `Target::new`), unless a key holds the value as it is.
        let v = match &t.folded {
            Some(folded) if !(0..CLASSES).any(|c| has_key(c, &t.value)) => folded.as_str(),
            _ => t.value.as_str(),
        };
        match t.kind {
            AtomKind::Path | AtomKind::ModifiedPath => {
                if has_key(0, v)
                    || self.text_paths.contains(Runs::Path, &self.text, v)
                    || (!v.contains('/') && has_basename(v))
                {
                    1.0
                } else if v.contains('/') && has_basename(extract::basename(v)) {
                    0.5
                } else {
                    0.0
                }
            }
            AtomKind::Symbol => {
                if has_key(1, v) || self.has_ident(v) || self.text_idents.contains(Runs::Ident, &self.text, v) {
                    1.0
                } else {
                    // After the last `.` or `:` (ASCII: a char boundary).
                    let last = v.bytes().rposition(|b| b == b'.' || b == b':').map_or(v, |i| &v[i + 1..]);
                    if last != v && last.len() >= 3 && self.has_ident(last) { 0.5 } else { 0.0 }
                }
            }
            AtomKind::Error => {
                if has_key(2, v)
                    || (!self.text.is_empty() && memchr::memmem::find(self.text.as_bytes(), v.as_bytes()).is_some())
                {
                    1.0
                } else {
                    match error_class(v) {
                        Some(class) if self.has_ident(class) => 0.5,
                        _ => 0.0,
                    }
                }
            }
            AtomKind::Command => {
                if self.commands.contains(v)
                    || held.is_some_and(|h| h.has_key(3, v))
                    || contains_bounded(&self.text, v, cmd_inner, cmd_inner)
                {
                    1.0
                } else {
                    let mut it = v.splitn(3, ' ');
                    match (it.next(), it.next(), it.next()) {
                        (Some(a), Some(b), Some(_)) => {
                            let head = format!("{a} {b}");
                            let spaced = format!("{head} ");
                            let named = |c: &str| c == head || c.starts_with(&spaced);
                            let hit = self.commands.iter().any(|c| named(c))
                                || held.is_some_and(|h| h.any_command(&mut |c| named(c)))
                                || contains_bounded(&self.text, &head, cmd_inner, cmd_inner);
                            if hit { 0.5 } else { 0.0 }
                        }
                        _ => 0.0,
                    }
                }
            }
            AtomKind::Id => {
                if extract::is_hex_value(v) {
                    let compatible = |h: &str| extract::hex_compatible(h, v);
                    let hit = self.hex.iter().any(|h| compatible(h))
                        || held.is_some_and(|h| h.any_hex(&mut |x| compatible(x)));
                    if hit { 1.0 } else { 0.0 }
                } else if has_key(4, v) || self.text_idents.contains(Runs::Ident, &self.text, v) {
                    1.0
                } else {
                    0.0
                }
            }
            AtomKind::Constraint => {
                if t.constraint_key.as_deref().is_some_and(|k| has_key(5, k)) {
                    return 1.0;
                }
                let share = self.keyword_share(&t.keywords);
                if share >= 0.75 {
                    1.0
                } else if share >= 0.5 {
                    0.5
                } else {
                    0.0
                }
            }
            AtomKind::Ask => self.keyword_share(&t.keywords),
        }
    }

    /// Share of keywords present among the words of this view (0 when none).
    pub fn keyword_share(&self, keywords: &[String]) -> f64 {
        if keywords.is_empty() {
            return 0.0;
        }
        let hits = keywords.iter().filter(|k| self.has_word(k)).count();
        hits as f64 / keywords.len() as f64
    }
}

/// The pieces of the texts a view read, joined by a newline (a separator for
/// identifiers and words alike, so no token spans two pieces).
#[derive(Debug, Default, Clone)]
struct TokenText {
    raw: String,
    /// `raw` as [`extract::word_tokens`] lower-cases it, made at the first word
    /// query (most views are asked none).
    lower: OnceLock<String>,
    /// The identifier questions asked of `raw`, and the word questions of
    /// `lower`.
    idents: RunLookup,
    words: RunLookup,
}

impl TokenText {
    fn push(&mut self, piece: &str) {
        if piece.is_empty() {
            return;
        }
        push_piece(&mut self.raw, piece);
        self.lower = OnceLock::new();
        self.idents = RunLookup::default();
        self.words = RunLookup::default();
    }
}

/// Append a text's scanned piece to a token text, after a newline when it
/// is not the first (no token spans two pieces); an empty piece adds nothing.
/// The session's token index joins a block's pieces the same way.
pub(super) fn push_piece(raw: &mut String, piece: &str) {
    if piece.is_empty() {
        return;
    }
    if !raw.is_empty() {
        raw.push('\n');
    }
    raw.push_str(piece);
}

/// The exception class or error head of a fingerprint (`TypeError` of
/// `TypeError: x is undefined`), when it is specific enough to name the error.
fn error_class(fp: &str) -> Option<&str> {
    let head = fp.split([':', '[', ' ']).next()?;
    let generic = ["error", "fatal", "panicked", "exit", "warning"];
    (head.len() >= 5 && !generic.iter().any(|g| g.eq_ignore_ascii_case(head))).then_some(head)
}

fn cmd_inner(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Commands a summary names: each line (bullets, prompts and backticks removed)
/// and each code span, read as a shell command line. Junk candidates are
/// harmless: they only ever match an exact normalized command.
fn command_candidates(text: &str, cwd: Option<&str>, out: &mut HashSet<String>) {
    // Summaries of one session repeat most of their lines (an iterative update
    // keeps the previous checkpoint; a sweep's points write near-identical
    // ones), and lexing a line costs ~20× looking it up: remembered per
    // (cwd, line), process-wide.
    static MEMO: LazyLock<LineMemo> = LazyLock::new(Default::default);
    for line in text.lines().take(COMMAND_LINES) {
        let commands =
            MEMO.get(cwd, line, extract::MEMO_MIN_LINE, || line_commands(line, extract::list_items(line), cwd));
        out.extend(commands.iter().map(|c| String::from(&**c)));
    }
}

/// Lines of a text read for commands (a text longer than this is not a
/// summary; its commands are in its first lines).
const COMMAND_LINES: usize = 4096;

/// What one line of a text read by line contributes to its view.
#[derive(Debug, Default)]
struct LineView {
    found: Vec<Found>,
    commands: Vec<Box<str>>,
    constraints: Vec<(String, Vec<String>)>,
}

impl crate::text::line_memo::Weigh for LineView {
    fn weight(&self) -> usize {
        size_of::<Self>() + self.found.weight() + self.commands.weight() + self.constraints.weight()
    }
}

impl LineView {
    fn of(line: &str, cwd: Option<&str>) -> LineView {
        // Both reads ask whether it is a packed list: asked once.
        let items = extract::list_items(line);
        LineView {
            found: extract::scan_prose_line_in(line, items, cwd),
            commands: line_commands(line, items, cwd),
            constraints: extract::constraints_of_line(line),
        }
    }
}

/// The commands one line of free text names: the line itself read as a command
/// (bullets and prompts stripped, backticks removed), and each code span.
fn line_commands(line: &str, items: extract::ListItems<'_>, cwd: Option<&str>) -> Vec<Box<str>> {
    let mut out: Vec<Box<str>> = extract::line_as_commands_in(line, items, cwd).into_iter().map(Box::from).collect();
    // A checkpoint's lines are new from one summary to the next, but its code
    // spans (paths, ids, commands) recur in many of them: each is read once.
    static SPANS: LazyLock<LineMemo> = LazyLock::new(Default::default);
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else { break };
        let span = &after[..close];
        let commands = SPANS.get(cwd, span, extract::MEMO_MIN_LINE, || {
            extract::normalize_commands(span, cwd).into_iter().map(Box::from).collect()
        });
        out.extend(commands.iter().cloned());
        rest = &after[close + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::TextView;
    use crate::text::atoms as extract;
    use foldhash::HashSet;
    use proptest::prelude::*;

    /// The token sets the view used to build: every identifier (ASCII runs of
    /// letters, digits and `_`, ≥ 2 long) and every word of each text's pieces.
    fn token_sets(texts: &[String]) -> (HashSet<String>, HashSet<String>) {
        let (mut idents, mut words) = (HashSet::default(), HashSet::default());
        for text in texts {
            for piece in extract::pieces(text) {
                for w in piece.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                    if w.len() >= 2 {
                        idents.insert(w.to_string());
                    }
                }
            }
            extract::word_tokens(text, |w| {
                words.insert(w.to_string());
            });
        }
        (idents, words)
    }

    /// Summary-like lines: atoms, packed lists, commands in code spans and as
    /// lines, constraint sentences, exit codes across a newline, CR, fences.
    const SUMMARY_PIECES: &[&str] = &[
        "## Critical Context",
        "- `src/a.rs` · `b.ts` · `https://x.io/p`",
        "- parse_args, Foo::bar, state.todos",
        "- [x] ran `cargo test -p core`",
        "- `git status -sb` → ok",
        "$ ls -la /w/src",
        "You must never push to main.",
        " Always run the tests first!",
        "TypeError: bad input",
        "exit code:",
        " 3",
        "`",
        "```",
        " · ",
        "\n",
        "\n",
        "\r\n",
        "\r",
        "  ",
    ];

    /// A view field by field (its token text is compared through queries by
    /// the test above).
    fn fields(v: &TextView) -> impl PartialEq + std::fmt::Debug + '_ {
        (&v.keys, &v.atoms, &v.hex, &v.basenames, &v.commands, &v.constraints, &v.text)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Reading a text line by line (through the line memo: the second
        /// time from it) gives the view reading it whole gives.
        #[test]
        fn a_text_read_by_line_is_read_as_a_whole(
            parts in proptest::collection::vec(proptest::sample::select(SUMMARY_PIECES), 0..30),
            cwd in proptest::option::of(Just("/w")),
        ) {
            let text = parts.concat();
            let whole = TextView::read(&text, cwd, true, false);
            for _ in 0..2 {
                let v = TextView::from_text(&text, cwd, true);
                prop_assert_eq!(fields(&v), fields(&whole), "{:?}", text);
            }
        }
    }

    /// Commands are read from the first 4,096 lines of a text, line by line
    /// as whole.
    #[test]
    fn commands_come_from_the_first_lines_only() {
        // Blank lines count as lines (a read by line does not read them).
        for filler in ["- (none)\n", "\n"] {
            let mut text = filler.repeat(4095);
            text.push_str("`cargo build --release`\n`cargo test --workspace`\n");
            for by_line in [true, false] {
                let v = TextView::read(&text, None, true, by_line);
                assert!(v.commands.contains("cargo build --release"), "by line: {by_line}, {filler:?}");
                assert!(!v.commands.contains("cargo test --workspace"), "by line: {by_line}, {filler:?}");
            }
        }
    }

    /// A read by line takes an empty line's view as empty without reading it.
    #[test]
    fn an_empty_line_names_nothing() {
        for cwd in [None, Some("/w")] {
            let v = super::LineView::of("", cwd);
            assert!(v.found.is_empty() && v.commands.is_empty() && v.constraints.is_empty(), "{v:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Identifier and word queries answer what sets of every token would,
        /// over several texts (one read into a second view and merged), on
        /// texts with non-ASCII letters and separators, `n't`, and a text long
        /// enough to be read as a head and a tail.
        #[test]
        fn token_queries_answer_as_token_sets(
            texts in proptest::collection::vec(
                "(Foo_bar|x1|ab|AB|don't|DON'T|n’t|é|É|ß|Σ|ΑΣ|İ|ǅ|→|…|·|-|\\.|/|::| |\n|😀|٣|Ⅳ|_){0,12}", 1..4),
            long in proptest::option::of(0usize..3),
            queries in proptest::collection::vec("(foo_bar|Foo_bar|x1|ab|AB|don|do|not|t|é|ß|σ|ς|ασ|i̇|ǆ|٣|ⅳ|_|a b|x|)", 0..8),
        ) {
            let mut texts = texts;
            if let Some(i) = long {
                let i = i % texts.len();
                // Past the scanned head: the middle is not read.
                texts[i] = format!("head_tok {} mid_tok {} tail_tok", "z ".repeat(extract::SCAN_HEAD / 2), "y ".repeat(extract::SCAN_TAIL));
            }
            let mut view = TextView::default();
            view.add_tokens(&texts[0]);
            let mut other = TextView::default();
            for t in &texts[1..] {
                other.add_tokens(t);
            }
            // A query before more text is read must not freeze the answers.
            let _ = view.has_word("ab");
            view.merge(&other);
            let (idents, words) = token_sets(&texts);
            for w in idents.iter().chain(&words).map(String::as_str).chain(queries.iter().map(String::as_str)).chain(["head_tok", "mid_tok", "tail_tok"]) {
                prop_assert_eq!(view.has_ident(w), idents.contains(w), "ident {:?} in {:?}", w, texts);
                prop_assert_eq!(view.has_word(w), words.contains(w), "word {:?} in {:?}", w, texts);
            }
        }
    }
}

#[cfg(test)]
mod index_tests {
    use super::{Target, TextView};
    use crate::quality::AtomKind;
    use proptest::prelude::*;

    /// Pieces of a summary and of the atoms asked about it: paths with dots,
    /// identifiers, dotted and qualified symbols, a command, an error, ids.
    const PIECES: &[&str] = &[
        "src/a.rs",
        "src/a",
        "a.rs",
        "parse_args",
        "Foo::bar",
        "state.todos",
        "cargo test -p core",
        "TypeError: bad",
        "abc1234",
        "ticket-42",
        " ",
        "\n",
        "- ",
        "`",
        ". ",
        "/w/",
        "é",
    ];
    const KINDS: &[AtomKind] =
        &[AtomKind::Path, AtomKind::ModifiedPath, AtomKind::Symbol, AtomKind::Error, AtomKind::Command, AtomKind::Id];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// A view scores an atom the same whether it searches its texts (its
        /// first questions) or answers from their token index (after many).
        #[test]
        fn a_view_scores_the_same_before_and_after_it_indexes(
            text in proptest::collection::vec(proptest::sample::select(PIECES), 0..24).prop_map(|p| p.concat()),
            asked in proptest::collection::vec(
                (proptest::sample::select(KINDS), proptest::collection::vec(proptest::sample::select(PIECES), 1..4)),
                1..16),
        ) {
            let targets: Vec<Target> = asked
                .into_iter()
                .map(|(kind, parts)| Target::new(kind, parts.concat().trim().to_string(), Vec::new()))
                .collect();
            let warm = TextView::from_text(&text, Some("/w"), false);
            // Enough questions of every kind for each of the view's texts to
            // be indexed.
            for _ in 0..=crate::quality::runs::SEARCHES {
                for t in &targets {
                    warm.match_score(t);
                }
                for kind in KINDS {
                    warm.match_score(&Target::new(*kind, "zz_unknown".into(), Vec::new()));
                }
            }
            for t in &targets {
                let cold = TextView::from_text(&text, Some("/w"), false);
                prop_assert_eq!(warm.match_score(t), cold.match_score(t), "{:?} in {:?}", t, text);
            }
        }
    }

    proptest! {
        /// The unordered finish keeps the atoms the sorted one keeps, each
        /// once, in the order first added.
        #[test]
        fn the_unordered_finish_keeps_the_same_atoms(
            atoms in proptest::collection::vec((0usize..7, "[ab/.]{0,3}", any::<bool>()), 0..40),
        ) {
            let mut view = TextView::default();
            for (kind, value, strong) in &atoms {
                view.add_key(crate::quality::AtomKind::SCORED[*kind], value, *strong);
            }
            let mut first_seen = Vec::new();
            for a in &view.atoms {
                if !first_seen.contains(a) {
                    first_seen.push(a.clone());
                }
            }
            let (mut sorted, mut unordered) = (view.clone(), view);
            sorted.finish();
            unordered.finish_unordered();
            prop_assert_eq!(&unordered.atoms, &first_seen);
            first_seen.sort();
            prop_assert_eq!(first_seen, sorted.atoms);
            prop_assert_eq!(unordered.hex, sorted.hex);
        }
    }
}
