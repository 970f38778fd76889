//! Tests of the extractive summarizer, kept apart so the summarizer reads on its own.

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
        context: None,
    };
    f(&req)
}

fn summarize(msgs: &[Message], prev: Option<&str>, max: u64) -> String {
    with_request(msgs, prev, max, |req| Extractive.summarize(req).unwrap().text)
}

/// A request for `refs` as a turn prefix or a history, with a previous
/// summary or not.
fn request<'a>(refs: &'a [&'a Message], prev: Option<&'a str>, prefix: bool, ops: &'a FileOps) -> SummaryRequest<'a> {
    SummaryRequest {
        part: if prefix { SummaryPart::TurnPrefix } else { SummaryPart::History },
        messages: refs,
        previous_summary: prev,
        file_ops: ops,
        max_tokens: 2_000,
        limits: InputLimits::default(),
        estimator: &Chars4,
        context: None,
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
        let lens_bound = SessionLens::new(&msgs, None);
        let bound = SessionExtractive::new(&lens_bound);
        // A lens for one reader keeps no atom: the same answers.
        let lens_single = SessionLens::new(&msgs, None).single_reader();
        let single = SessionExtractive::new(&lens_single);
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
            proptest::prop_assert_eq!(&single.summarize(&req).unwrap(), &plain);
            prev = Some(plain.text);
        }
    }
}

#[test]
fn the_session_bound_summarizer_reads_each_message_once() {
    let msgs = session();
    let lens_bound = SessionLens::new(&msgs, None);
    let bound = SessionExtractive::new(&lens_bound);
    let ops = FileOps::default();
    let all: Vec<&Message> = msgs.iter().collect();
    let first = bound.summarize(&request(&all, None, false, &ops)).unwrap();
    assert_eq!(bound.reads(), msgs.len());
    assert_eq!(bound.summarize(&request(&all, None, false, &ops)).unwrap(), first);
    assert_eq!(bound.reads(), msgs.len(), "the second request reuses every message");
    assert!(lens_bound.blocks_read() > 0);
    // One reader: its steps are kept, the lens's atoms are not.
    let lens_single = SessionLens::new(&msgs, None).single_reader();
    let single = SessionExtractive::new(&lens_single);
    assert_eq!(single.summarize(&request(&all, None, false, &ops)).unwrap(), first);
    assert_eq!(single.summarize(&request(&all, None, false, &ops)).unwrap(), first);
    assert_eq!((single.reads(), lens_single.blocks_read()), (msgs.len(), 0));
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
    let lens_first = SessionLens::new(&msgs, None);
    let first = SessionExtractive::new(&lens_first);
    assert_eq!(first.summarize(&request(&all, None, false, &ops)).unwrap(), plain);
    let mut seen: Vec<(u32, Arc<str>)> =
        first.names.ids.lock().unwrap().iter().map(|(t, &(id, _))| (id, t.clone())).collect();
    seen.sort_by_key(|&(id, _)| std::cmp::Reverse(id));
    assert!(seen.len() >= 5, "{}", seen.len());
    let lens_reversed = SessionLens::new(&msgs, None);
    let reversed = SessionExtractive::new(&lens_reversed);
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
        "`cargo test -p parser` → exit code 101",
        "error[E0308]: mismatched types at src/parser.rs:42",
        "`https://github.com/acme/parser/pull/17`",
        "`1.4.2`",
        "Bash: E0308",
        // Code symbols are listed bare, comma-packed (a backtick pair is a
        // token per symbol).
        "### Code symbols\n- parse",
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
    // Named in prose only, outside a code span: the metric makes no symbol
    // atom of it, so the symbol list does not carry it.
    assert_eq!(third.matches(", parse_header").count() + third.matches("- parse_header").count(), 0, "{third}");
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
        assert_eq!(ranked(map.iter().map(|(k, s)| (k.as_str(), s)), 40, top), full[..top.min(full.len())], "top {top}");
    }
}

#[test]
fn deterministic() {
    assert_eq!(summarize(&session(), None, 500), summarize(&session(), None, 500));
}
