//! The metric itself: needed-atom rules, mutation tests (each mutation of a
//! perfect summary lowers its matching component), reference points, pruning
//! loss, aggregation, determinism, and a property test on arbitrary input.

// Message spans are lists of ranges; a list with one span is not a mistake.
#![allow(clippy::single_range_in_vec_init)]

use super::*;
use crate::model::{Block, Message, Origin, Role};
use crate::tokens::{Chars4, Estimator};
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::json;

const CWD: &str = "/w/proj";
const SHA: &str = "9fceb02d0ae598e95dc970b74767f19372d61af8";

fn user(text: &str) -> Message {
    Message::new(Role::User, Origin::Human, vec![Block::text(text)])
}

fn assistant(blocks: Vec<Block>) -> Message {
    Message::new(Role::Assistant, Origin::Model, blocks)
}

fn say(text: &str) -> Block {
    Block::text(text)
}

fn call(id: &str, name: &str, input: serde_json::Value) -> Block {
    Block::ToolUse { id: id.into(), name: name.into(), input }
}

fn result(id: &str, text: &str, is_error: bool) -> Message {
    Message::new(
        Role::User,
        Origin::ToolResult,
        vec![Block::ToolResult { tool_use_id: id.into(), content: vec![Block::text(text)], is_error: Some(is_error) }],
    )
}

/// P = 0..9, T = 9..11, F = 11..15.
fn session() -> Vec<Message> {
    vec![
        user("Fix the parser in src/parser.rs. Never modify Cargo.lock."),
        assistant(vec![call("t1", "Read", json!({"file_path": "/w/proj/src/parser.rs"}))]),
        result("t1", "fn parse_expr(tokens: &[Token]) -> Expr { todo!() }", false),
        assistant(vec![call("t2", "Bash", json!({"command": "cargo test --lib parser"}))]),
        result("t2", "error[E0308]: mismatched types\n --> src/parser.rs:42:9", true),
        assistant(vec![call(
            "t3",
            "Edit",
            json!({"file_path": "/w/proj/src/parser.rs", "old_string": "todo!()", "new_string": "parse_expr(&tokens)"}),
        )]),
        result("t3", "ok", false),
        assistant(vec![call("t4", "Bash", json!({"command": "git log -1 --format=%H"}))]),
        result("t4", SHA, false),
        // T
        assistant(vec![say("Now checking the lexer."), call("t5", "Read", json!({"file_path": "src/lexer.rs"}))]),
        result("t5", "pub fn lex() {}", false),
        // F
        assistant(vec![
            say("The earlier E0308 came from `parse_expr`; cherry-picking 9fceb02."),
            call("t6", "Bash", json!({"command": format!("git cherry-pick {SHA}")})),
        ]),
        result("t6", "ok", false),
        assistant(vec![
            call("t7", "Edit", json!({"file_path": "src/parser.rs", "old_string": "a", "new_string": "b"})),
            call("t8", "Bash", json!({"command": "cargo test --lib parser"})),
        ]),
        result("t8", "test result: ok", false),
    ]
}

fn point() -> CompactionPoint {
    CompactionPoint::new(0..9, 9..11, 11..15)
}

const FULL: &str = "## Goal\nFix the parser in src/parser.rs.\n\n## Constraints\n- Never modify Cargo.lock.\n\n\
## Files modified\n- src/parser.rs (`parse_expr`)\n\n## Commands\n- `cargo test --lib parser` failed with \
error[E0308]: mismatched types\n\n## Ids\n- HEAD commit 9fceb02d0ae598e95dc970b74767f19372d61af8\n";

fn needed_of(msgs: &[Message], p: &CompactionPoint) -> Vec<(AtomKind, String)> {
    let atoms = SessionAtoms::new(msgs, Some(CWD));
    let prepared = atoms.prepare(p, &Chars4);
    prepared.needed().iter().map(|n| (n.kind, n.value.clone())).collect()
}

fn score(summary: &str) -> CompactionQuality {
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    atoms.prepare(&point(), &Chars4).score("test", summary)
}

#[test]
fn needed_atoms_of_the_hand_built_compaction() {
    assert_eq!(
        needed_of(&session(), &point()),
        vec![
            (AtomKind::ModifiedPath, "src/parser.rs".to_string()),
            (AtomKind::Error, "E0308".to_string()),
            (AtomKind::Id, SHA.to_ascii_uppercase()),
            (AtomKind::Constraint, "Never modify Cargo.lock.".to_string()),
            (AtomKind::Command, "cargo test --lib parser".to_string()),
            (AtomKind::Symbol, "parse_expr".to_string()),
        ]
    );
}

#[test]
fn weights_follow_type_decay_and_action_bonus() {
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let prepared = atoms.prepare(&point(), &Chars4);
    let w = |kind: AtomKind| prepared.needed().iter().find(|n| n.kind == kind).map(|n| (n.weight, n.turns, n.tool_arg));
    // Edited again at the second agent turn of F: 3 × 1/(1 + 1/20) × 1.5.
    assert_eq!(w(AtomKind::ModifiedPath), Some((3.0 / 1.05 * 1.5, 1, true)));
    // Named in the first turn's text: no decay, no bonus.
    assert_eq!(w(AtomKind::Error), Some((2.0, 0, false)));
    // Used as an argument in the first turn.
    assert_eq!(w(AtomKind::Id), Some((3.0, 0, true)));
    assert_eq!(w(AtomKind::Constraint), Some((2.0, 0, false)));
}

#[test]
fn full_summary_keeps_everything() {
    let q = score(FULL);
    assert_eq!(q.frr, Some(1.0));
    for r in
        [q.recall_modified_path, q.recall_error, q.recall_id, q.recall_constraint, q.recall_command, q.recall_symbol]
    {
        assert_eq!(r, Some(1.0));
    }
    assert_eq!(q.artifact_trail_recall, Some(1.0));
    assert_eq!(q.constraint_retention, Some(1.0));
    assert_eq!(q.hallucination_rate, Some(0.0));
    assert_eq!(q.ask_covered, Some(true));
    assert_eq!(q.dead_end_retention, Some(1.0));
}

fn assert_lower(name: &str, base: Option<f64>, mutated: Option<f64>) {
    let (b, m) = (base.unwrap_or(f64::NAN), mutated.unwrap_or(f64::NAN));
    assert!(m < b, "{name}: mutated {m} should be below {b}");
}

#[test]
fn mutation_delete_a_needed_path() {
    let base = score(FULL);
    let q = score(&FULL.replace("src/parser.rs", "the parser file"));
    assert_lower("recall_modified_path", base.recall_modified_path, q.recall_modified_path);
    assert_lower("artifact_trail_recall", base.artifact_trail_recall, q.artifact_trail_recall);
    assert_lower("frr", base.frr, q.frr);
    assert_eq!(q.recall_error, base.recall_error, "other components unchanged");
}

#[test]
fn mutation_change_one_digit_of_the_hash() {
    let base = score(FULL);
    // Position 20, well past the 7-digit short form: a prefix rule must not
    // forgive it.
    let mut wrong = SHA.to_string();
    wrong.replace_range(20..21, "0");
    assert_ne!(wrong, SHA);
    let q = score(&FULL.replace(SHA, &wrong));
    assert_lower("recall_id", base.recall_id, q.recall_id);
    assert_lower("frr", base.frr, q.frr);
    assert!(q.hallucinated_atoms > base.hallucinated_atoms, "the wrong hash is invented");
}

#[test]
fn mutation_swap_an_error_code() {
    let base = score(FULL);
    let q = score(&FULL.replace("E0308", "E0382"));
    assert_lower("recall_error", base.recall_error, q.recall_error);
    assert_lower("dead_end_retention", base.dead_end_retention, q.dead_end_retention);
    assert_lower("frr", base.frr, q.frr);
}

#[test]
fn mutation_drop_a_constraint() {
    let base = score(FULL);
    let q = score(&FULL.replace("- Never modify Cargo.lock.\n", ""));
    assert_lower("constraint_retention", base.constraint_retention, q.constraint_retention);
    assert_lower("recall_constraint", base.recall_constraint, q.recall_constraint);
    assert_lower("frr", base.frr, q.frr);
}

#[test]
fn mutation_drop_a_command_and_a_symbol() {
    let base = score(FULL);
    let q = score(&FULL.replace("`cargo test --lib parser` failed with ", "tests failed: "));
    assert_lower("recall_command", base.recall_command, q.recall_command);
    let q = score(&FULL.replace(" (`parse_expr`)", ""));
    assert_lower("recall_symbol", base.recall_symbol, q.recall_symbol);
}

#[test]
fn mutation_add_unrelated_identifiers_raises_hallucination() {
    let base = score(FULL);
    let q = score(&format!(
        "{FULL}\nAlso see src/unrelated/thing.rs, commit abcdef1234567, https://example.org/x and `frobnicate_all`.\n"
    ));
    assert!(
        q.hallucination_rate > base.hallucination_rate,
        "{:?} vs {:?}",
        q.hallucination_rate,
        base.hallucination_rate
    );
    assert_eq!(q.hallucinated_atoms, 4);
    assert_eq!(q.frr, base.frr, "recall is unchanged by additions");
    assert!(q.artifact_trail_precision < Some(1.0), "an untouched path lowers precision");
}

#[test]
fn a_known_file_name_in_another_directory_is_invented() {
    let base = score(FULL);
    let ok = score(&format!("{FULL}\nSee parser.rs and /w/other/root/src/parser.rs.\n"));
    assert_eq!(ok.hallucinated_atoms, base.hallucinated_atoms, "bare name and longer prefix name the file");
    let wrong = score(&format!("{FULL}\nSee lib/parser.rs.\n"));
    assert_eq!(wrong.hallucinated_atoms, base.hallucinated_atoms + 1);
    assert!(wrong.artifact_trail_precision < Some(1.0));
}

#[test]
fn partial_credit_for_basename_and_short_sha() {
    let q = score(&FULL.replace("src/parser.rs", "parser.rs").replace(SHA, "9fceb02"));
    assert_eq!(q.recall_modified_path, Some(0.5), "basename only");
    assert_eq!(q.recall_id, Some(1.0), "a short SHA names the commit");
}

#[test]
fn a_bare_file_name_is_named_by_its_full_path() {
    // The agent calls the file by its bare name in P and again in F.
    let msgs = vec![
        user("Check the lexer."),
        assistant(vec![call("t1", "Read", json!({"file_path": "/w/proj/src/lexer.rs"}))]),
        result("t1", "pub fn lex() {}", false),
        assistant(vec![say("I read `lexer.rs`.")]),
        user("go on"),
        assistant(vec![call("t2", "Grep", json!({"pattern": "lex", "path": "lexer.rs"}))]),
    ];
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let p = atoms.prepare(&CompactionPoint::new(0..4, 4..5, 5..6), &Chars4);
    assert!(p.needed().iter().any(|n| n.kind == AtomKind::Path && n.value == "lexer.rs"), "{:?}", p.needed());
    assert_eq!(p.score("full", "Files read: `src/lexer.rs`").recall_path, Some(1.0));
    assert_eq!(p.score("bare", "Files read: `lexer.rs`").recall_path, Some(1.0));
    assert_eq!(p.score("other", "Files read: `src/parser.rs`").recall_path, Some(0.0));
}

#[test]
fn empty_summary_scores_zero_and_oracle_scores_one() {
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let prepared = atoms.prepare(&point(), &Chars4);
    let empty = prepared.score("empty", "");
    assert_eq!(empty.frr, Some(0.0));
    assert_eq!(empty.artifact_trail_recall, Some(0.0));
    assert_eq!(empty.hallucination_rate, None, "no atoms, no rate");
    assert_eq!(empty.summary_tokens, 0);
    let oracle = prepared.score(REF_ORACLE, &prepared.oracle_summary());
    assert_eq!(oracle.frr, Some(1.0));
    assert_eq!(oracle.hallucination_rate, Some(0.0));
    assert!(oracle.summary_tokens > 0);
}

#[test]
fn atom_reintroduced_by_a_tool_result_before_use_is_not_needed() {
    let mut msgs = session();
    // The agent runs `git log` again before using the hash: the result brings
    // it back, so the summary did not have to carry it.
    msgs.insert(11, assistant(vec![call("r1", "Bash", json!({"command": "git log -1"}))]));
    msgs.insert(12, result("r1", &format!("commit {SHA}"), false));
    let p = CompactionPoint::new(0..9, 9..11, 11..msgs.len());
    let needed = needed_of(&msgs, &p);
    assert!(!needed.iter().any(|(k, _)| *k == AtomKind::Id), "{needed:?}");
    assert!(needed.iter().any(|(k, _)| *k == AtomKind::ModifiedPath));
}

#[test]
fn atom_reintroduced_by_a_user_message_is_not_needed() {
    let mut msgs = session();
    msgs.insert(11, user("The failing thing was E0308, and please keep going on src/parser.rs."));
    let p = CompactionPoint::new(0..9, 9..11, 11..msgs.len());
    let needed = needed_of(&msgs, &p);
    assert!(!needed.iter().any(|(k, _)| matches!(k, AtomKind::Error | AtomKind::ModifiedPath)), "{needed:?}");
}

#[test]
fn atom_in_kept_tail_or_system_prompt_is_not_needed() {
    let mut msgs = session();
    msgs[9] = assistant(vec![
        say(&format!("Noting commit {SHA}.")),
        call("t5", "Read", json!({"file_path": "src/lexer.rs"})),
    ]);
    let needed = needed_of(&msgs, &point());
    assert!(!needed.iter().any(|(k, _)| *k == AtomKind::Id), "in T: {needed:?}");

    let msgs = session();
    let atoms =
        SessionAtoms::new(&msgs, Some(CWD)).with_system_prompt("Rules: never modify Cargo.lock. Use `parse_expr`.");
    let kinds: Vec<AtomKind> = atoms.prepare(&point(), &Chars4).needed().iter().map(|n| n.kind).collect();
    assert!(!kinds.contains(&AtomKind::Constraint) && !kinds.contains(&AtomKind::Symbol), "{kinds:?}");

    let mut p = point();
    p.kept_text = vec!["Previously: E0308 in the parser.".to_string()];
    let needed = needed_of(&session(), &p);
    assert!(!needed.iter().any(|(k, _)| *k == AtomKind::Error), "in a kept text: {needed:?}");
}

#[test]
fn atom_used_only_by_the_agent_is_needed_and_unused_atoms_are_not() {
    let needed = needed_of(&session(), &point());
    // src/parser.rs is only ever mentioned again by the agent's own Edit.
    assert!(needed.contains(&(AtomKind::ModifiedPath, "src/parser.rs".to_string())));
    // `git log -1 --format=%H` and Cargo.lock (the path) are never used in F.
    assert!(!needed.iter().any(|(_, v)| v.starts_with("git log") || v == "Cargo.lock"), "{needed:?}");
}

#[test]
fn api_error_placeholders_are_not_agent_uses() {
    let mut msgs = session();
    let mut err = assistant(vec![say(&format!("API Error: 500 while handling {SHA} E0308"))]);
    err.origin = Origin::SyntheticError;
    msgs.insert(11, err);
    msgs.insert(12, user("The tests pass now, thanks."));
    let p = CompactionPoint::new(0..9, 9..11, 11..msgs.len());
    let needed = needed_of(&msgs, &p);
    assert!(!needed.iter().any(|(k, _)| matches!(k, AtomKind::Id | AtomKind::Error)), "{needed:?}");
}

#[test]
fn messages_inserted_by_a_recorded_compaction_are_not_in_the_index() {
    use crate::model::{CompactionKind, Format, RecordedCompaction, Session};
    let mut msgs = session();
    // The original agent's own summary, inserted at the start of F, names the
    // hash; a policy replay never had it, so it must not re-introduce it.
    let mut summary = user(&format!("Summary: commit {SHA}, error E0308."));
    summary.origin = Origin::CompactSummary;
    msgs.insert(11, summary);
    let mut s = Session::new("s", Format::ClaudeCode, "x.jsonl");
    s.meta.cwd = Some(CWD.to_string());
    s.messages = msgs;
    s.recorded_compactions.push(RecordedCompaction {
        kind: CompactionKind::ClaudeBoundary,
        source_line: 0,
        inserted: 11..12,
        kept: 11..11,
        head: 0..0,
        tokens_before: None,
        trigger: None,
    });
    let p = CompactionPoint::new(0..9, 9..11, 11..s.messages.len());
    let kinds = |atoms: &SessionAtoms<'_>| -> Vec<AtomKind> {
        atoms.prepare(&p, &Chars4).needed().iter().map(|n| n.kind).collect()
    };
    let with = kinds(&SessionAtoms::from_session(&s));
    assert!(with.contains(&AtomKind::Id) && with.contains(&AtomKind::Error), "{with:?}");
    let naive = kinds(&SessionAtoms::new(&s.messages, Some(CWD)));
    assert!(!naive.contains(&AtomKind::Id), "{naive:?}");
}

#[test]
fn a_restated_constraint_is_not_needed() {
    let mut msgs = session();
    msgs.insert(11, user("Reminder: never modify Cargo.lock."));
    let p = CompactionPoint::new(0..9, 9..11, 11..msgs.len());
    let needed = needed_of(&msgs, &p);
    assert!(!needed.iter().any(|(k, _)| *k == AtomKind::Constraint), "{needed:?}");
}

#[test]
fn chained_compaction_reads_the_replaced_summary() {
    // Event 2 replaces the first summary plus T; the hash only survives in that
    // summary, which counts as part of P.
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let p = CompactionPoint {
        replaced: vec![9..11],
        replaced_text: vec![FULL.to_string()],
        kept: vec![],
        kept_text: vec![],
        future: 11..15,
        ..CompactionPoint::default()
    };
    let prepared = atoms.prepare(&p, &Chars4);
    let kinds: Vec<AtomKind> = prepared.needed().iter().map(|n| n.kind).collect();
    assert!(kinds.contains(&AtomKind::Id) && kinds.contains(&AtomKind::ModifiedPath), "{kinds:?}");
    assert_eq!(prepared.score("copy", FULL).frr, Some(1.0));
    assert!(prepared.score("drop", "nothing").frr < Some(0.5));
}

#[test]
fn compression_uses_the_estimator() {
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let prepared = atoms.prepare(&point(), &Chars4);
    let q = prepared.score("s", "abcd");
    let p: u64 = msgs[0..9].iter().map(|m| Chars4.message_tokens(m)).sum();
    let t: u64 = msgs[9..11].iter().map(|m| Chars4.message_tokens(m)).sum();
    assert_eq!((q.replaced_tokens, q.kept_tokens, q.summary_tokens), (p, t, 1));
    assert_eq!(q.compression, Some(1.0 - (1 + t) as f64 / (p + t) as f64));
    assert_eq!(q.summary_reduction, Some(1.0 - 1.0 / p as f64));
    // Known counts from the engine win over the estimator.
    let mut pt = point();
    pt.replaced_tokens = Some(1000);
    pt.kept_tokens = Some(0);
    assert_eq!(atoms.prepare(&pt, &Chars4).score("s", "abcd").compression, Some(1.0 - 1.0 / 1000.0));
}

#[test]
fn reference_rows_truncate_masking_oracle() {
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let refs = ReferenceOptions { truncate: Some("[Compacted 9 messages: user 5, assistant 4]"), ..Default::default() };
    let rows = atoms.evaluate_candidates(&point(), &Chars4, &[Candidate { name: "extractive", summary: FULL }], &refs);
    let names: Vec<&str> = rows.iter().map(|r| r.summarizer.as_str()).collect();
    assert_eq!(names, ["extractive", REF_TRUNCATE, REF_MASKING, REF_ORACLE]);
    assert_eq!(rows[1].frr, Some(0.0), "truncation keeps nothing needed");
    assert_eq!(rows[2].frr, Some(1.0), "M=10 masks nothing here");
    assert_eq!(rows[2].hallucination_rate, Some(0.0));
    assert_eq!(rows[3].frr, Some(1.0));
    assert!(rows.iter().all(|r| r.replaced_tokens == rows[0].replaced_tokens));
    // Masking keeps every item of P: its budget is P's size.
    assert_eq!(rows[2].summary_tokens, rows[2].replaced_tokens);
}

#[test]
fn masking_drops_old_tool_outputs() {
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let prepared = atoms.prepare(&point(), &Chars4);
    // T holds one tool result: keeping the last 1 masks every result of P.
    let q = prepared.masking(1);
    assert_eq!(q.recall_id, Some(0.0), "the hash was only in a masked output");
    assert_eq!(q.recall_modified_path, Some(1.0), "tool calls are kept");
    assert_eq!(q.recall_constraint, Some(1.0), "user text is kept");
    assert!(q.summary_tokens < prepared.masking(10).summary_tokens);
    // Keeping the last 2 unmasks the newest result of P (the hash).
    assert_eq!(prepared.masking(2).recall_id, Some(1.0));
    // The text a model is given masks the same results.
    let masked = |keep| prepared.masking_text(keep, None, &[]).matches(MASK_PLACEHOLDER).count();
    assert!(masked(1) > 0);
    assert_eq!(masked(2), masked(1) - 1, "one result fewer masked");
    // Under a budget, only the newest messages that fit.
    let whole = prepared.masking_text(1, None, &[]);
    let cut = prepared.masking_text(1, Some(q.summary_tokens / 2), &[]);
    assert!(cut.len() < whole.len() && whole.ends_with(&cut[cut.find('\n').unwrap_or(0)..]), "{cut}");
    // Masking nothing costs exactly P, multi-block messages included.
    let wide = atoms.prepare(&CompactionPoint::new(0..11, 11..11, 11..15), &Chars4);
    let q = wide.masking(10);
    assert_eq!(q.summary_tokens, q.replaced_tokens);
    assert_eq!(q.compression, Some(0.0));
}

#[test]
fn pruning_loss_counts_needed_atoms_only_in_cleared_results() {
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let cleared = [PrunedResult { message: 8, block: 0, kept: "[cleared]" }];
    let loss = atoms.pruning_loss(&[0..11], &[], &cleared, 11..15);
    assert_eq!(loss.pruned_results, 1);
    assert_eq!(loss.needed_lost, 1);
    assert_eq!(loss.atoms[0].kind, AtomKind::Id);
    // A soft trim that kept the hash loses nothing.
    let trimmed = [PrunedResult { message: 8, block: 0, kept: SHA }];
    assert_eq!(atoms.pruning_loss(&[0..11], &[], &trimmed, 11..15).needed_lost, 0);
    // The parser source result: `parse_expr` is also in the Edit call (view),
    // so clearing that result loses nothing needed.
    let src = [PrunedResult { message: 2, block: 0, kept: "" }];
    assert_eq!(atoms.pruning_loss(&[0..11], &[], &src, 11..15).needed_lost, 0);
    // ...unless the view no longer holds the Edit call either.
    assert_eq!(atoms.pruning_loss(&[0..5], &[], &src, 11..15).needed_lost, 1);
}

#[test]
fn aggregate_means_medians_and_pooled() {
    let mut a = score(FULL);
    let mut b = score("");
    a.summarizer = "x".into();
    b.summarizer = "x".into();
    b.needed_weight *= 3.0;
    let mut c = score(FULL);
    c.summarizer = "y".into();
    let stats = aggregate([&a, &b, &c]);
    assert_eq!(stats.len(), 2);
    assert_eq!(stats[0].summarizer, "x");
    assert_eq!(stats[0].events, 2);
    assert_eq!(stats[0].frr_mean, Some(0.5));
    assert_eq!(stats[0].frr_median, Some(0.5));
    assert_eq!(stats[0].frr_pooled, Some(a.needed_weight / (a.needed_weight + b.needed_weight)));
    assert_eq!(stats[0].recall_modified_path, Some(0.5));
    assert_eq!(stats[1].frr_mean, Some(1.0));
}

#[test]
fn rows_are_byte_identical_across_runs() {
    let run = || {
        let msgs = session();
        let atoms = SessionAtoms::new(&msgs, Some(CWD));
        let rows = atoms.evaluate_candidates(
            &point(),
            &Chars4,
            &[Candidate { name: "a", summary: FULL }],
            &ReferenceOptions::default(),
        );
        serde_json::to_string(&rows).unwrap_or_default()
    };
    let first = run();
    assert!(first.len() > 100);
    assert_eq!(first, run());
}

#[test]
fn rows_serialize_to_csv() {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(score(FULL)).unwrap();
    w.serialize(score("")).unwrap();
    let out = String::from_utf8(w.into_inner().unwrap()).unwrap();
    assert_eq!(out.lines().count(), 3);
    assert!(out.starts_with("summarizer,summary_tokens,"));
}

/// A reversed range, as a buggy caller could pass one.
fn reversed() -> std::ops::Range<usize> {
    std::ops::Range { start: 50, end: 10 }
}

/// Found by the property test: a path argument with a run of spaces, needed
/// in a future that overlaps P. The oracle must still reach FRR 1.
#[test]
fn oracle_matches_paths_with_whitespace_runs() {
    let input = json!({"command": "0  a", "file_path": "0  a"});
    let msgs = vec![user(""), assistant(vec![call("t", "Bash", input)])];
    let atoms = SessionAtoms::new(&msgs, Some("/w"));
    let prepared = atoms.prepare(&CompactionPoint::new(0..2, 2..2, 0..2), &Chars4);
    assert!(!prepared.needed().is_empty());
    assert_eq!(prepared.score(REF_ORACLE, &prepared.oracle_summary()).frr, Some(1.0));
}

#[test]
fn out_of_range_points_are_clamped() {
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let p = CompactionPoint::new(5..100, 200..300, 400..500);
    let q = atoms.prepare(&p, &Chars4).score("s", FULL);
    assert_eq!(q.frr, None, "no future, nothing needed");
    let loss = atoms.pruning_loss(&[0..99], &[], &[PrunedResult { message: 99, block: 7, kept: "" }], reversed());
    assert_eq!(loss.lost_atoms, 0);
}

// ---------------------------------------------------------------------------
// Property test: arbitrary text and message shapes never panic, and every ratio
// stays in [0, 1].

pub(super) fn arb_block() -> impl Strategy<Value = Block> {
    let text = prop_oneof![
        any::<String>(),
        "[a-zA-Z0-9_/. :#()\\[\\]`'\"\\-\n]{0,80}",
        Just(format!("see src/a.rs {SHA} E0308 `foo_bar`")),
    ];
    let tool_name =
        prop_oneof![Just("Bash"), Just("Edit"), Just("Read"), Just("apply_patch"), Just("shell"), Just("x")];
    prop_oneof![
        text.clone().prop_map(Block::text),
        (tool_name, text.clone()).prop_map(|(n, t)| Block::ToolUse {
            id: "t".into(),
            name: n.into(),
            input: json!({"command": t.clone(), "file_path": t.clone(), "cmd": [t.clone(), "-lc", t]})
        }),
        (text.clone(), any::<Option<bool>>()).prop_map(|(t, e)| Block::ToolResult {
            tool_use_id: "t".into(),
            content: vec![Block::text(t)],
            is_error: e
        }),
        text.prop_map(|t| Block::ToolUse { id: "u".into(), name: "apply_patch".into(), input: json!(t) }),
    ]
}

pub(super) fn arb_message() -> impl Strategy<Value = Message> {
    let role = prop_oneof![Just(Role::User), Just(Role::Assistant), Just(Role::System)];
    let origin =
        prop_oneof![Just(Origin::Human), Just(Origin::ToolResult), Just(Origin::Model), Just(Origin::Injected)];
    (role, origin, prop::collection::vec(arb_block(), 0..4)).prop_map(|(r, o, b)| Message::new(r, o, b))
}

fn in_unit(v: Option<f64>) -> bool {
    v.is_none_or(|x| (0.0..=1.0).contains(&x))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn extraction_never_panics(text in any::<String>(), cwd in prop::option::of("[/a-z]{0,12}")) {
        let _ = extract_atoms(&text, cwd.as_deref());
        let _ = extract_tool_call_atoms("Bash", &json!({"command": text.clone()}), cwd.as_deref());
        let _ = extract_tool_call_atoms("apply_patch", &json!(text), cwd.as_deref());
    }

    /// The session's block sizes, counted once for masking views, are each
    /// message's own, past the end included.
    #[test]
    fn block_chars_are_each_messages_own(msgs in prop::collection::vec(arb_message(), 0..14)) {
        let atoms = SessionAtoms::new(&msgs, Some("/w"));
        for m in 0..msgs.len() + 2 {
            let want: Vec<u64> =
                msgs.get(m).map_or(Vec::new(), |msg| msg.blocks.iter().map(|b| b.text_chars() as u64).collect());
            prop_assert_eq!(atoms.block_chars(m), &want[..], "message {}", m);
        }
    }

    #[test]
    fn evaluation_never_panics_and_ratios_stay_in_unit(
        msgs in prop::collection::vec(arb_message(), 0..14),
        cut in (0usize..16, 0usize..16, 0usize..16),
        summary in any::<String>(),
        keep in 0usize..4,
    ) {
        let atoms = SessionAtoms::new(&msgs, Some("/w"));
        let (a, b, c) = cut;
        let p = CompactionPoint::new(0..a, a..b, b..c.max(b));
        let rows = atoms.evaluate_candidates(
            &p,
            &Chars4,
            &[Candidate { name: "s", summary: &summary }],
            &ReferenceOptions { truncate: Some(&summary), masking_keep: Some(keep), oracle: true },
        );
        for r in &rows {
            prop_assert!(in_unit(r.frr), "frr {:?}", r.frr);
            for v in [r.recall_path, r.recall_modified_path, r.recall_error, r.recall_id, r.recall_command,
                      r.recall_symbol, r.recall_constraint, r.artifact_trail_recall, r.artifact_trail_precision,
                      r.hallucination_rate, r.constraint_retention, r.ask_coverage, r.dead_end_retention] {
                prop_assert!(in_unit(v), "{:?}", r);
            }
            prop_assert!(r.quality.is_none_or(|q| (0.0..=100.0).contains(&q)));
        }
        let oracle = rows.iter().find(|r| r.summarizer == REF_ORACLE);
        prop_assert!(oracle.is_some_and(|o| o.frr.is_none_or(|f| f == 1.0)), "oracle {:?}", oracle);
        let pruned: Vec<PrunedResult<'_>> = (0..msgs.len()).map(|m| PrunedResult { message: m, block: 0, kept: "" }).collect();
        let loss = atoms.pruning_loss(&[0..msgs.len()], &[&summary], &pruned, b..msgs.len());
        prop_assert!(loss.needed_lost <= loss.lost_atoms);
    }

    /// Observation masking scores the same whether its views copy P's text
    /// or name P's blocks from the session's token index (several policies).
    #[test]
    fn masking_rows_do_not_depend_on_the_session_token_index(
        msgs in prop::collection::vec(arb_message(), 0..14),
        cut in (0usize..16, 0usize..16, 0usize..16),
        keep in 0usize..4,
        budget in prop::option::of(0u64..400),
    ) {
        let copied = SessionAtoms::new(&msgs, Some("/w"));
        let mut named = SessionAtoms::new(&msgs, Some("/w"));
        named.share_block_tokens(true);
        let (a, b, c) = cut;
        let p = CompactionPoint::new(0..a, a..b, b..c.max(b));
        let row = |atoms: &SessionAtoms<'_>| atoms.prepare(&p, &Chars4).masking_within(REF_MASKING, keep, budget);
        prop_assert_eq!(row(&named), row(&copied));
    }
}

/// A summary atom is grounded by spelling (a path's bare name or stem, a
/// shortened error, a short SHA) only in what P ∪ T hold: the same names
/// seen only later, in F, are invented. The session's name tables cover F
/// too, so each answer must be filtered by the event's own atoms.
#[test]
fn grounding_by_spelling_reads_p_and_t_only() {
    let mut msgs = session();
    msgs.push(assistant(vec![call("t9", "Bash", json!({"command": "cargo build"}))]));
    msgs.push(result(
        "t9",
        "error[E0499]: cannot borrow `state` as mutable more than once\n --> src/later_mod.rs:3:1\n\
         commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        true,
    ));
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let invented = |summary: &str| -> Vec<String> {
        let (_, audit) = atoms.prepare(&point(), &Chars4).score_with_audit("test", summary);
        audit.hallucinated.iter().map(|a| format!("{}:{}", a.kind, a.value)).collect()
    };
    // Known in P: the bare name and stem of src/parser.rs, a prefix of its
    // error, a short form of its SHA.
    let known = "See parser.rs and `parser`; error[E0308]: mismatched; commit 9fceb02.\n";
    assert_eq!(invented(known), Vec::<String>::new());
    // The same shapes of what only F holds.
    let later = "See later_mod.rs and `later_mod`; error[E0499]: cannot borrow; commit 4b825dc.\n";
    let got = invented(later);
    for name in ["later_mod.rs", "later_mod", "E0499", "4B825DC"] {
        assert!(got.iter().any(|g| g.contains(name)), "{name} not invented: {got:?}");
    }
}

/// A score without its audit (every row of a replay) is the score with it,
/// and the audit lists what the score counts: each needed atom with its
/// match, and as many invented atoms as the row reports.
#[test]
fn a_score_is_the_same_with_or_without_its_audit() {
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let prepared = atoms.prepare(&point(), &Chars4);
    let summaries = [
        "",
        "Edited src/parser.rs; error[E0308]: mismatched types; commit 9fceb02.\n",
        "- [path] `src/parser.rs`\n- invented `src/nowhere.rs` and deadbeef1234 and `made_up_fn()`\n",
        &prepared.oracle_summary(),
    ];
    for summary in summaries {
        let (audited, audit) = prepared.score_with_audit("s", summary);
        assert_eq!(prepared.score("s", summary), audited, "{summary:?}");
        assert_eq!(audit.needed.len(), audited.needed_atoms as usize, "{summary:?}");
        assert_eq!(audit.hallucinated.len(), audited.hallucinated_atoms as usize, "{summary:?}");
        let hit: f64 = audit.needed.iter().map(|a| a.weight * a.score).sum();
        assert!((hit - audited.frr_hit_weight).abs() < 1e-9, "{summary:?}: {hit} vs {}", audited.frr_hit_weight);
    }
    // The point has needed atoms, so the audit's list was checked non-empty.
    assert!(prepared.score("s", "").needed_atoms > 0);
    let invented = prepared.score_with_audit("s", summaries[2]).1.hallucinated;
    assert!(invented.iter().any(|a| a.value.contains("nowhere.rs")), "{invented:?}");
}

/// The oracle lists each needed atom on a line of its own, labelled with
/// its kind: paths, ids, commands and symbols in backticks, errors and
/// constraints (sentences) bare.
#[test]
fn the_oracle_lists_each_needed_atom_on_its_own_line() {
    let msgs = session();
    let atoms = SessionAtoms::new(&msgs, Some(CWD));
    let prepared = atoms.prepare(&point(), &Chars4);
    let oracle = prepared.oracle_summary();
    let lines: Vec<&str> = oracle.lines().collect();
    assert_eq!(lines.len(), prepared.needed().len());
    assert!(oracle.ends_with('\n'));
    let kinds: Vec<AtomKind> = prepared.needed().iter().map(|n| n.kind).collect();
    assert!(kinds.contains(&AtomKind::Error) && kinds.contains(&AtomKind::Constraint), "{kinds:?}");
    assert!(kinds.iter().any(|k| !matches!(k, AtomKind::Error | AtomKind::Constraint)), "{kinds:?}");
    for (line, n) in lines.iter().zip(prepared.needed()) {
        let bare = matches!(n.kind, AtomKind::Error | AtomKind::Constraint);
        let head = format!("- [{}] ", n.kind.name());
        let body = line.strip_prefix(head.as_str()).unwrap_or_else(|| panic!("{line:?} lacks {head:?}"));
        if bare {
            assert!(!body.starts_with('`'), "{line:?}");
        } else {
            assert!(body.starts_with('`') && body.ends_with('`') && body.len() >= 2, "{line:?}");
        }
    }
    assert_eq!(prepared.score(REF_ORACLE, &oracle).frr, Some(1.0));
}
