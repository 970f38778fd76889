//! Tests that each fast path (prefilter, hand-written matcher) agrees with
//! the plain reading it replaces.

use super::Patterns;
use super::scan::Chars;
use proptest::prelude::*;

/// [`super::text::extension`] as it reads: the tail after the last `.`.
fn extension_by_last_dot(name: &str) -> Option<&str> {
    let ext = &name[name.rfind('.')? + 1..];
    let ok = (1..=10).contains(&ext.len())
        && ext.bytes().all(|b| b.is_ascii_alphanumeric())
        && ext.bytes().any(|b| b.is_ascii_alphabetic());
    ok.then_some(ext)
}

#[test]
fn extensions_at_their_edges() {
    let cases = [
        ("a.rs", Some("rs")),
        (".bashrc", Some("bashrc")),
        ("x.abcdefghij", Some("abcdefghij")),
        ("x.abcdefghijk", None),
        ("x.0123456789", None),
        ("x.mp4", Some("mp4")),
        ("a.b.c", Some("c")),
        ("a.rs/", None),
        ("a.", None),
        ("rs", None),
        ("a.r-s", None),
        ("é.rs", Some("rs")),
        ("a.ré", None),
        ("", None),
    ];
    for (name, want) in cases {
        assert_eq!(super::text::extension(name), want, "{name:?}");
        assert_eq!(extension_by_last_dot(name), want, "{name:?} (the oracle)");
    }
}

const PIECES: &[&str] = &[
    "https://a.io/x",
    "550e8400-e29b-41d4-a716-446655440000",
    "localhost:3000",
    "10.0.0.1:80",
    "src/a.rs",
    "deadbeef1",
    "v1.2.3",
    "1234567",
    "#12",
    "Foo::bar",
    "foo(",
    "snake_case",
    "CamelCase",
    "camelCase",
    "TypeError: x",
    "IOException",
    "error: y",
    "FATAL: z",
    "error[E1]: w",
    "E0425",
    "TS2304",
    "CS0103",
    "exit code 3",
    "Exited with status: 12",
    "word",
    " ",
    "\n",
    ".",
    "-",
];

/// Fragments of near misses of the gated patterns: a UUID's, a version's,
/// a `host:port`'s, an exception class's, an `error:` line's and an error
/// code's parts, apart or glued; and a digit that is not ASCII.
const NEAR: &[&str] = &[
    "1234abcd",
    "٣",
    "error",
    "FATAL",
    "Fatal",
    "[",
    "]",
    "E",
    "TS",
    "CS",
    "S",
    "e89b",
    "12d3-",
    "426614174000",
    "1",
    "22",
    ".",
    ":",
    "a",
    "Z",
    "-",
    "_",
    "v",
    "Error",
    "Exception",
    "Err",
    " ",
    "\n",
    "é",
    "a.",
    ".Error",
    "a-:",
    "x.y-",
    "#",
    "#42",
    "C:\\",
    "\\",
    "--- a/",
    "+++ b/",
    "diff --git a/x b/y",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~\n]{0,80}",
        prop::collection::vec(prop::sample::select(PIECES), 0..8).prop_map(|v| v.concat()),
        prop::collection::vec(prop::sample::select(NEAR), 0..16).prop_map(|v| v.concat()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Reading back from the end finds the extension the last dot gives.
    #[test]
    fn the_extension_is_the_tail_after_the_last_dot(name in "[a-zA-Z0-9./_é-]{0,16}") {
        prop_assert_eq!(super::text::extension(&name), extension_by_last_dot(&name));
    }

    /// `Chars::of` notes what its fields say of a short text: each
    /// character present, and the longest runs of hex and decimal digits.
    #[test]
    fn chars_notes_each_character_and_the_longest_digit_runs(text in text()) {
        prop_assume!(text.len() <= super::scan::CHARS_MAX_LEN);
        let c = Chars::of(&text);
        let longest = |class: fn(&char) -> bool| {
            text.split(|x: char| !class(&x)).map(str::len).max().unwrap_or(0)
        };
        let flags = [c.dot, c.slash, c.colon, c.dash, c.upper_e, c.upper_s, c.hash, c.backslash];
        let want = ['.', '/', ':', '-', 'E', 'S', '#', '\\'].map(|x| text.contains(x));
        prop_assert_eq!(flags, want);
        prop_assert_eq!(c.hex_run, longest(char::is_ascii_hexdigit));
        prop_assert_eq!(c.digit_run, longest(char::is_ascii_digit));
        prop_assert_eq!(c.digit, c.digit_run > 0);
    }

    /// Each test of `Chars`, and each gate (`semver_near` …), is a
    /// necessary condition of its pattern: when a pattern matches, its test
    /// passes (so skipping a search on a failed test loses nothing).
    #[test]
    fn a_pattern_matches_only_texts_its_test_admits(text in text()) {
        let p = Patterns::build().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let c = Chars::of(&text);
        let cases = [
            ("url", &p.url, c.url()),
            ("uuid", &p.uuid, c.uuid()),
            ("hostport", &p.hostport, c.hostport()),
            ("semver", &p.semver, c.semver()),
            ("err_class", &p.err_class, c.err_class()),
            ("err_generic", &p.err_generic, c.err_generic()),
            ("err_code", &p.err_code, c.err_code()),
            ("exit", &p.exit, c.exit()),
            ("issue", &p.issue, c.issue()),
            ("winpath", &p.winpath, c.winpath()),
            ("diff", &p.diff, c.diff()),
        ];
        for (name, re, admitted) in cases {
            prop_assert!(admitted || !re.is_match(&text), "{name} matches {text:?} but its test fails");
        }
        let b = text.as_bytes();
        let near = [
            ("uuid", &p.uuid, super::scan::uuid_near(b)),
            ("semver", &p.semver, super::scan::semver_near(b)),
            ("hostport", &p.hostport, super::scan::hostport_near(b)),
            ("err_class", &p.err_class, super::scan::err_class_near(b)),
            ("err_generic", &p.err_generic, super::scan::err_generic_near(b)),
            ("err_code", &p.err_code, super::scan::err_code_near(b)),
        ];
        for (name, re, admitted) in near {
            prop_assert!(admitted || !re.is_match(&text), "{name} matches {text:?} but its gate fails");
        }
    }
}

/// The patterns' digits are ASCII, as the tests that skip their search
/// assume: a number in other digits is not an atom of any of them.
#[test]
fn the_patterns_read_ascii_digits_only() {
    let p = Patterns::build().expect("the patterns compile");
    let cases = [
        ("hostport", &p.hostport, "localhost:٨0", "localhost:80"),
        ("semver", &p.semver, "v١.٢.3", "v1.2.3"),
        ("issue", &p.issue, "#١2", "#12"),
        ("err_code", &p.err_code, "E٠٤2", "E042"),
        ("exit", &p.exit, "exit code ١3", "exit code 13"),
    ];
    for (name, re, other, ascii) in cases {
        assert!(!re.is_match(other), "{name} matches {other:?}");
        assert!(re.is_match(ascii), "{name} misses {ascii:?}");
    }
}

/// `err_generic_near` compares `error` and `fatal` in ASCII case: right
/// only while no character but the ASCII letters folds to their letters
/// under the pattern's Unicode `(?i)` (as the Kelvin sign folds to `k`).
#[test]
fn no_other_character_folds_to_the_letters_of_error_and_fatal() {
    let letters = regex::Regex::new("(?i)[aeflort]").expect("the class compiles");
    let others: String = ('\u{80}'..=char::MAX).collect();
    assert!(letters.find(&others).is_none(), "{:?}", letters.find(&others).map(|m| m.as_str().to_string()));
    assert!(regex::Regex::new("(?i)k").expect("the class compiles").is_match("\u{212A}"), "the check finds a fold");
}

/// The gates on the edges of their patterns: each admits the shortest
/// texts its pattern matches, and turns away near misses.
#[test]
fn the_gates_admit_the_shortest_matches_and_turn_away_near_misses() {
    /// A pattern's name, the pattern, its gate, texts it matches, near misses.
    type Case<'a> = (&'a str, &'a regex::Regex, fn(&[u8]) -> bool, &'a [&'a str], &'a [&'a str]);
    let p = Patterns::build().expect("the patterns compile");
    let cases: [Case<'_>; 6] = [
        (
            "uuid",
            &p.uuid,
            super::scan::uuid_near,
            &["123e4567-e89b-12d3-a456-426614174000", "x ABCDEF01-2345-6789-abcd-ef0123456789."],
            &["123e456-e89b-12d3-a456-426614174000", "123e4567-e89b12d3", "123e4567-e8g9-", "-e89b-", "123e4567-e89b"],
        ),
        (
            "semver",
            &p.semver,
            super::scan::semver_near,
            &["1.2.3", "v10.20.30-rc.1", "x 0.0.0 y"],
            &["1.2", "1.2.x", "1..2.3", ".1.2", "1.2."],
        ),
        (
            "hostport",
            &p.hostport,
            super::scan::hostport_near,
            &["localhost:80", "10.0.0.1:8080", "a.b-:12", "api.example.com:443"],
            &["a:1", "a :12", "a: 12", ":12", "a:b12"],
        ),
        (
            "err_class",
            &p.err_class,
            super::scan::err_class_near,
            &["TypeError", "a.Error", "_Exception: boom", "x9Error."],
            &["Error", "Errors", "a.Errors", "ErrorKind", " Exception", "IOExceptional"],
        ),
        (
            "err_generic",
            &p.err_generic,
            super::scan::err_generic_near,
            &["error:", "FATAL: x", "Error[E0425]: y", "fatal[abcdefghijklmnopqrst]:"],
            &["error", "errors:", "error :", "err:", "error[E1] :", "error[abcdefghijklmnopqrstu]:", "x]:"],
        ),
        (
            "err_code",
            &p.err_code,
            super::scan::err_code_near,
            &["E042", "x TS2304 y", "CS0103", "E12345"],
            &["E12", "e0425", "S1234", "TS123", "XS1234", "C S1234", "E 123"],
        ),
    ];
    for (name, re, gate, hits, misses) in cases {
        for t in hits {
            assert!(re.is_match(t), "{name} should match {t:?}");
            assert!(gate(t.as_bytes()), "{name}'s gate turns away {t:?}, which it matches");
        }
        for t in misses {
            assert!(!gate(t.as_bytes()), "{name}'s gate admits the near miss {t:?}");
        }
    }
}

/// What prose lines hold beyond the atom shapes: fences, backticks,
/// bullets, diff headers, Windows paths, CR, and an exit code whose number
/// is on the next line.
const LINE_PIECES: &[&str] = &[
    "```",
    "`",
    "\n",
    "\n",
    "\r",
    "- [x] ",
    "  ",
    "--- a/src/x.rs",
    "+++ b/y.py",
    "diff --git a/p b/q",
    "C:\\w\\z.rs",
    "exit code:\n",
    "exit status\n 7",
    "a longer line of plain words, ",
    "~/notes.md",
];

/// Items of symbol lists: qualified names, error classes and `error::`
/// paths, versions, hex, codes, hosts.
const SYMBOL_ITEMS: &[&str] = &[
    "Foo::bar",
    "state.todos",
    "parse_args",
    "FooError",
    "IOException",
    "error::kind",
    "fatal::x",
    "ERROR::y",
    "Error::Io",
    "E0425",
    "TS2304",
    "deadbeef12",
    "1234567",
    "v1.2.3",
    "1.2.3",
    "10.0.0.1",
    "a.b.c",
    "x",
    "_x",
    "x_",
    ".",
    "::",
    ":::",
    "main.rs",
    "foo",
    "CamelCase",
    "camelCase",
    "snake_case",
    "panicked",
    "at",
    "localhost",
    "3000",
    "a.io",
    "Error",
    "x.FooError",
];
/// What makes a line no symbol list: a lone colon (an `error:` tail, a
/// port), an error class with a colon tail, an empty item, non-ASCII.
const NOT_SYMBOL_ITEMS: &[&str] =
    &["a:b", "b:", "error:x", "Fatal:y", "a.io:3000", "FooError::new", "FooError:", "", "é"];

/// Items of identifier lists: paths (under the cwd too), URLs, ids,
/// hosts, versions, codes, Windows paths, diff markers, calls.
const IDENT_ITEMS: &[&str] = &[
    "`src/a.rs`",
    "`/w/src/b.ts`",
    "`https://x.io/p?a=1&b=(2),c`",
    "`deadbeef12`",
    "`550e8400-e29b-41d4-a716-446655440000`",
    "`localhost:3000`",
    "`10.0.0.1:80`",
    "`v1.2.3`",
    "`1.2.3.4`",
    "`1234567`",
    "`#12`",
    "`Foo::bar`",
    "`foo(`",
    "`C:\\w\\z.rs`",
    "`~/notes.md`",
    "`E0425`",
    "`x`",
    "`--- a/x`",
    "`diff`",
    "`%2F`",
    "`node_modules/x.js`",
    "`@scope/pkg`",
    "`.`",
];
/// Items with spaces and non-ASCII letters, and what makes a line no
/// identifier list: error words, an unclosed span, a bare word.
const NOT_IDENT_ITEMS: &[&str] =
    &["`error:x`", "`FooError:`", "`Fatal`", "`panicked`", "`IOException`", "``", "`a b`", "`é`", "`", "x", "`a`b`"];

fn prose() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select([PIECES, LINE_PIECES].concat()), 0..40).prop_map(|v| v.concat())
}

/// Findings as a sorted list (a multiset).
fn sorted(mut found: Vec<super::Found>) -> Vec<String> {
    let mut v: Vec<String> = found.drain(..).map(|f| format!("{f:?}")).collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The packed-word search answers as comparing with each extension in
    /// any case: words cut from the extensions, in mixed case, with a NUL,
    /// a non-ASCII letter or a byte too many.
    #[test]
    fn known_ext_answers_as_the_list_does(
        pick in 0..super::text::KNOWN_EXT.len(),
        cut in 0usize..10,
        upper in any::<u16>(),
        extra in prop::option::of(prop::sample::select(vec!["\0", "é", "x", "S", "\u{212a}"])),
    ) {
        let base = super::text::KNOWN_EXT[pick];
        let mut w: String = base
            .chars()
            .take(cut.max(1))
            .enumerate()
            .map(|(i, c)| if upper >> (i % 16) & 1 == 1 { c.to_ascii_uppercase() } else { c })
            .collect();
        if let Some(e) = extra {
            w.push_str(e);
        }
        let each = w.len() <= 8 && super::text::KNOWN_EXT.iter().any(|e| e.eq_ignore_ascii_case(&w));
        prop_assert_eq!(super::text::known_ext(&w), each, "{:?}", w);
    }

    /// A prose text that `read_by_line` accepts: its lines' findings and
    /// its exit codes are what scanning it whole finds.
    #[test]
    fn prose_lines_find_what_the_whole_text_does(text in prose(), cwd in prop::option::of(Just("/w"))) {
        prop_assume!(super::read_by_line(&text));
        let mut whole = Vec::new();
        super::scan_text(&text, super::Ctx::Prose, cwd, &mut whole);
        let mut lines: Vec<super::Found> = text.split('\n').flat_map(|l| super::scan_prose_line(l, cwd)).collect();
        lines.extend(super::scan_exit_codes(&text));
        prop_assert_eq!(sorted(lines), sorted(whole), "{:?}", text);
    }

    /// A text with a fence line is scanned whole: per line, a code span
    /// could open on one line and close on another.
    #[test]
    fn a_fenced_text_is_not_read_by_line(head in prose(), tail in prose()) {
        let text = format!("{head}\n  ```\n{tail}");
        prop_assert!(!super::read_by_line(&text));
    }

    /// The fence lines found from the backticks are the lines that start
    /// with them after whitespace.
    #[test]
    fn fence_lines_are_found_from_their_backticks(
        text in "(```|``|`|x|\n| |\t|\u{a0}|\u{3000}|é|\r)*"
    ) {
        let by_line = text.split('\n').any(|l| l.trim_start().starts_with("```"));
        prop_assert_eq!(super::scan::has_fence_line(&text), by_line, "{:?}", text);
    }
}

/// A bulleted list of `items` joined by `sep`, now and then with a near
/// miss among them.
fn list_line(
    items: &'static [&'static str],
    near_misses: &'static [&'static str],
    sep: &'static str,
) -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![8 => prop::sample::select(items), 1 => prop::sample::select(near_misses)], 1..10)
        .prop_map(move |v| format!("- {}", v.join(sep)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// A list of code symbols or identifiers scanned item by item (twice:
    /// the second time from the memo) finds what scanning the line whole
    /// finds; so does a near miss, which is scanned whole.
    #[test]
    fn a_list_line_is_scanned_as_the_whole_line(
        line in prop_oneof![
            list_line(SYMBOL_ITEMS, NOT_SYMBOL_ITEMS, ", "),
            list_line(IDENT_ITEMS, NOT_IDENT_ITEMS, " · "),
        ],
        cwd in prop::option::of(Just("/w")),
    ) {
        let mut whole = Vec::new();
        super::scan::scan_piece(&line, super::Ctx::Prose, cwd, super::scan::Exits::Skip, &mut whole);
        let whole = sorted(whole);
        for _ in 0..2 {
            prop_assert_eq!(&sorted(super::scan_prose_line(&line, cwd)), &whole, "{:?}", line);
        }
    }
}

/// Identifier items that read as command words: programs, prefixes,
/// assignments, flags, redirections, paths, and the near misses the
/// list's words must leave to the lexer (quotes, operators, a heredoc,
/// Unicode spaces, a shell, an empty span).
const COMMAND_IDENT_ITEMS: &[&str] = &[
    "`cargo`",
    "`test`",
    "`-p`",
    "`-m`",
    "`--message`",
    "`>`",
    "`2>`",
    "`>out.txt`",
    "`FOO=1`",
    "`sudo`",
    "`env`",
    "`cd`",
    "`ls`",
    "`git`",
    "`status`",
    "`src/a.rs`",
    "`/w/b.ts`",
    "`$HOME`",
    "`#x`",
    "`é·x`",
    "`·`",
    "`a.rs`",
    "`x.y`",
    "`-`",
    "`.`",
];
const NOT_COMMAND_IDENT_ITEMS: &[&str] = &[
    "`bash`",
    "`sh`",
    "`/bin/zsh`",
    "`a<<b`",
    "`x'y`",
    "`a\"b`",
    "`a\u{a0}b`",
    "`a\u{2003}b`",
    "`a|b`",
    "`a;b`",
    "`(x)`",
    "`\\n`",
    "`a&b`",
    "``",
    "`a b`",
];
const COMMAND_SYMBOL_ITEMS: &[&str] =
    &["time", "env", "cd", "ls", "git", "status", "sh", "bash", "a.rs", "x.y.z", "Foo::bar", "_x", "9a"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// A packed list line read as a command from its words gives what
    /// lexing it gives; a line the words cannot stand for is lexed.
    #[test]
    fn a_list_line_reads_as_the_command_the_lexer_reads(
        line in prop_oneof![
            list_line(COMMAND_SYMBOL_ITEMS, NOT_SYMBOL_ITEMS, ", "),
            list_line(SYMBOL_ITEMS, COMMAND_SYMBOL_ITEMS, ", "),
            list_line(COMMAND_IDENT_ITEMS, NOT_COMMAND_IDENT_ITEMS, " · "),
            list_line(IDENT_ITEMS, NOT_IDENT_ITEMS, " · "),
        ],
        cwd in prop::option::of(Just("/w")),
    ) {
        prop_assert_eq!(super::line_as_commands(&line, cwd), super::commands::line_as_commands_lexed(&line, cwd), "{:?}", line);
    }
}

/// The extension set answers as comparing with each extension in any
/// case does; its entries are lower-case ASCII, which the lookup needs.
#[test]
fn known_extensions_are_found_in_any_case() {
    assert!(super::text::KNOWN_EXT.iter().all(|e| e.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())));
    let each = |x: &str| x.len() <= 8 && super::text::KNOWN_EXT.iter().any(|e| e.eq_ignore_ascii_case(x));
    for ext in ["rs", "RS", "Rs", "tsx", "TSX", "jsonl", "JSONL", "ipynb", "tfvars", "graphql", "GraphQL", "lockb"] {
        assert!(super::text::known_ext(ext), "{ext}");
    }
    for ext in ["", "r", "rss", "json5", "graphqls", "é", "rś", "txt\n", "verylongext", "c\u{0}", "PS1x"] {
        assert_eq!(super::text::known_ext(ext), each(ext), "{ext:?}");
    }
    for ext in super::text::KNOWN_EXT {
        assert!(super::text::known_ext(&ext.to_ascii_uppercase()), "{ext}");
    }
}

/// A symbol qualified by `::` (anywhere, even after a single `:`) is read
/// segment by segment, as one qualified by `.` is; single colons are not a
/// qualifier.
#[test]
fn double_colons_qualify_a_symbol_wherever_they_are() {
    for (m, want) in [
        ("ab::cd", None),
        ("a:b::cd", None),
        ("abc::de", Some("abc::de")),
        ("Foo::bar(", Some("Foo::bar")),
        ("ab:cd", Some("ab:cd")),
        ("ab:", Some("ab:")),
        ("ab::", None),
        ("x::config.json", None),
    ] {
        assert_eq!(super::text::accept_symbol(m), want, "{m:?}");
    }
}

/// The one-pass error-word test answers as searching for each word does,
/// in any case, at either end of a text or inside a word.
#[test]
fn error_words_are_found_in_one_pass() {
    const WORDS: [&[u8]; 4] = [b"error", b"fatal", b"exception", b"panicked"];
    let each = |b: &[u8]| WORDS.iter().any(|w| b.windows(w.len()).any(|x| x.eq_ignore_ascii_case(w)));
    for text in [
        "error",
        "`IOError`",
        "x FATAL",
        "NullPointerException",
        "thread panicked at",
        "PaNiCkEd",
        "eRrOr",
        "erro",
        "fata",
        "panic",
        "xception",
        "exceptio",
        "ferror",
        "",
        "e",
        "p",
        "f",
        "·error·",
        "err or",
    ] {
        assert_eq!(super::scan::has_error_word(text.as_bytes()), each(text.as_bytes()), "{text:?}");
    }
}

/// The words stand for the lexer on the lists a checkpoint writes, and
/// leave it what they cannot stand for.
#[test]
fn list_words_take_plain_lists_only() {
    let words = |line| super::commands::list_words(super::list_items(line));
    assert_eq!(words("- `cargo` · `src/a.rs`"), Some(vec!["cargo", "·", "src/a.rs"]));
    assert_eq!(words("- parse_args, Foo::bar"), Some(vec!["parse_args,", "Foo::bar"]));
    for line in ["- `a b` · `c`", "- `bash` · `-c`", "- `x'y`", "- `a<<b`", "- ``", "- a:b, c", "ran tests"] {
        assert_eq!(words(line), None, "{line:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The ASCII path of `word_tokens` yields the words of the general one,
    /// also on texts with non-ASCII separators (and letters, which send
    /// the text down the general path).
    #[test]
    fn ascii_words_are_the_unicode_words(
        text in "[ -~\n]{0,80}|(n't|don't|Foo_Bar|x1|  |\\.|-|→|…|·|─|é|É|ß|Σ|ǅ|İ|n’t|’|Ⅳ|Ⓐ|٣|😀)*"
    ) {
        let mut general = Vec::new();
        super::keywords::unicode_word_tokens(&text, &mut |w| general.push(w.to_string()));
        let mut ascii = Vec::new();
        super::word_tokens(&text, |w| ascii.push(w.to_string()));
        prop_assert_eq!(ascii, general);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Folding whitespace a byte at a time gives what joining
    /// `split_whitespace`'s words gives, on texts mixing ASCII and Unicode
    /// whitespace (vertical tab, NEL, no-break and ideographic spaces,
    /// line separator) with multi-byte letters around them; appending
    /// keeps what was there.
    #[test]
    fn folding_whitespace_joins_the_words_of_split_whitespace(
        text in "([ \t\n\r]|\x0B|\x0C|\u{85}|\u{A0}|\u{2003}|\u{2028}|\u{3000}|\u{200B}|a|Z|é|→|😀|x y)*",
        head in "(|ab|a b )",
    ) {
        let expected = text.split_whitespace().collect::<Vec<_>>().join(" ");
        prop_assert_eq!(&super::fold_ws(&text), &expected, "{:?}", text);
        let mut out = head.clone();
        super::fold_ws_into(&mut out, &text);
        prop_assert_eq!(out, format!("{head}{expected}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// A path `already_normal` passes through is what normalizing its
    /// segments gives.
    #[test]
    fn already_normal_paths_normalize_to_themselves(
        lead in "(/|~/|\\./|C:|c:\\\\|)",
        segs in proptest::collection::vec("(src|a\\.rs|\\.|\\.\\.|||home|u|proj|x\\\\y|C:)", 1..6),
        cwd in proptest::option::of("(/home/u/proj|/home/u|C:/w)"),
        under_cwd in proptest::bool::ANY,
    ) {
        let mut s = format!("{lead}{}", segs.join("/"));
        if let Some(c) = cwd.as_deref().filter(|_| under_cwd) {
            s = format!("{c}/{s}");
        }
        if let Some(v) = super::text::already_normal(&s, cwd.as_deref()) {
            prop_assert_eq!(Some(v.to_string()), super::text::normalize_segments(&s, cwd.as_deref()), "{}", s);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// The byte search finds the segment `rsplit('/')` gives last, on
    /// paths with multi-byte characters beside the slashes.
    #[test]
    fn basename_is_the_last_slash_segment(p in "(/|a|é|😀|\\.|//|x/)*") {
        prop_assert_eq!(super::basename(&p), p.rsplit('/').next().unwrap_or(&p));
    }
}

#[test]
fn tests_fail_on_plain_prose() {
    let c = Chars::of("the quick brown fox jumps over the lazy dog");
    assert!(!(c.url() || c.uuid() || c.hostport() || c.semver()));
    assert!(!(c.err_class() || c.err_generic() || c.err_code() || c.exit()));
    assert!(Chars::of(&"x".repeat(super::scan::CHARS_MAX_LEN + 1)).exit());
}
