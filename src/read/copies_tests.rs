use super::*;
use crate::model::{Block, Call, Message, Origin, Role};
use crate::testing::fixtures_dir;

#[test]
fn the_scan_finds_response_ids_in_any_spacing_and_nothing_else() {
    let log = br#"{"message":{"id":"msg_01A","content":[{"type":"tool_use","id":"toolu_01X"}]}}
{"message": {"id" : "msg_01B" }}
{"message":{"id":"msg_01A"},"note":"{\"id\":\"msg_01Quoted\"}"}
{"id":"msg_01Esc\u0041","other":{"id":"msg_"}}
{"id":"msg_01Cut
"#;
    let found = response_ids(log);
    let ids: Vec<&str> = found.iter().map(|s| &**s).collect();
    // A repeat is listed once; an id in a quoted string, one with an escape,
    // a bare prefix and one cut by the end of a line are not ids.
    assert_eq!(ids, ["msg_01A", "msg_01B"]);
    // Read a byte at a time, each id still whole with its key, wherever the
    // reads fall; a long spacing is as far as the scan looks.
    let spaced = format!("{{\"id\"{}:  \"msg_01Far\"}}", " ".repeat(super::MAX_SPACE + 1));
    let mut data = br#"{"id" : "msg_01A"} "#.to_vec();
    data.extend_from_slice(spaced.as_bytes());
    data.extend_from_slice(&[b'x'; 600]);
    data.extend_from_slice(br#"{"id":"msg_01Last"}"#);
    assert_eq!(scan_chunks(Vec::new(), &data[..], 1), response_ids(&data));
    assert_eq!(response_ids(&data), [Box::from("msg_01A"), Box::from("msg_01Last")]);
}

#[test]
fn files_that_share_an_id_form_a_family_named_by_its_first() {
    let ids = |v: &[&str]| v.iter().map(|s| Box::<str>::from(*s)).collect::<Vec<_>>();
    let scanned = vec![ids(&["msg_a"]), ids(&["msg_b", "msg_c"]), ids(&["msg_d"]), ids(&["msg_c", "msg_a"]), ids(&[])];
    let f = families_of(&scanned, &[false, false, false, true, false]);
    assert_eq!((0..5).map(|i| f.of(i)).collect::<Vec<_>>(), [Some(0), Some(0), None, Some(0), None]);
    assert_eq!(f.groups(), [vec![0, 1, 3]]);
    assert!(families_of(&[ids(&["msg_a"]), ids(&["msg_b"])], &[true, true]).groups().is_empty());
    // Ids shared by logs neither of which can be a copy join nothing.
    let f = families_of(&scanned, &[false, true, false, false, false]);
    assert_eq!(f.groups(), [vec![1, 3]], "msg_c, which the candidate holds");
    assert!(families_of(&scanned, &[false; 5]).groups().is_empty());
}

/// Which logs may be copies, from their first records alone: one opening with
/// a compaction or its summary, and two opening with the same record.
#[test]
fn a_copy_shows_in_the_first_records() {
    let head = |lines: &[&str]| {
        let tmp = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(tmp.path(), lines.join("\n")).unwrap_or_else(|e| panic!("{e}"));
        head_of(tmp.path(), Some(Format::ClaudeCode))
    };
    let snapshot = r#"{"type":"file-history-snapshot","messageId":"m"}"#;
    let side = r#"{"type":"user","isSidechain":true,"uuid":"s1","message":{"role":"user","content":"x"}}"#;
    let user = r#"{"type":"user","uuid":"u1","message":{"role":"user","content":"x"}}"#;
    let boundary = r#"{"type":"system","subtype":"compact_boundary","uuid":"b1"}"#;
    let summary = r#"{"type":"user","uuid":"u2","isCompactSummary":true,"message":{"role":"user","content":"x"}}"#;
    assert_eq!(head(&[snapshot, side, user, boundary]), Head::Opens("u1".into()));
    assert_eq!(head(&[snapshot, boundary, user]), Head::MayCopy);
    assert_eq!(head(&[summary, user]), Head::MayCopy);
    assert_eq!(head(&[snapshot]), Head::Other, "no conversation");
    let heads =
        [Head::Opens("u1".into()), Head::Opens("u9".into()), Head::Opens("u1".into()), Head::MayCopy, Head::Other];
    assert_eq!(candidates(&heads), [true, false, true, true, false]);
}

/// A session of `calls` responses (ids), one user message before each, the
/// first at `t0` seconds.
fn session(id: &str, t0: i64, calls: &[&str]) -> Session {
    let mut s = Session::new(id, Format::ClaudeCode, format!("{id}.jsonl"));
    for (k, rid) in calls.iter().enumerate() {
        let t = Some((t0 + k as i64) * 1000);
        let mut u = Message::new(Role::User, Origin::Human, vec![Block::text("go on")]);
        u.timestamp = t;
        let mut a = Message::new(Role::Assistant, Origin::Model, vec![Block::text(*rid)]);
        a.timestamp = t;
        s.messages.extend([u, a]);
        s.calls.push(Call {
            message_index: s.messages.len() - 1,
            model: None,
            usage: None,
            timestamp: t,
            response_id: Some((*rid).to_string()),
            fast: false,
        });
    }
    s
}

fn kept(s: &Session) -> Vec<&str> {
    s.calls.iter().filter_map(|c| c.response_id.as_deref()).collect()
}

fn settle(mut sessions: Vec<Session>) -> Vec<Session> {
    let mut refs: Vec<&mut Session> = sessions.iter_mut().collect();
    settle_copies(&mut refs);
    sessions
}

#[test]
fn a_copy_keeps_what_follows_the_responses_it_copied() {
    // The parent compacted before the fork: its first message is older.
    let parent = session("p", 0, &["msg_1", "msg_2", "msg_3", "msg_4"]);
    let copy = session("c", 1, &["msg_2", "msg_3", "msg_c1", "msg_c2", "msg_c3"]);
    let out = settle(vec![copy, parent]);
    assert_eq!(kept(&out[0]), ["msg_c1", "msg_c2", "msg_c3"]);
    assert_eq!(kept(&out[1]), ["msg_1", "msg_2", "msg_3", "msg_4"]);
    assert_eq!((out[0].forked_from.as_deref(), out[0].inherited), (Some("p"), 4));
    assert_eq!(out[0].diagnostics.skipped.get("copied-response"), Some(&2));
    assert_eq!((out[1].forked_from.as_deref(), out[1].inherited), (None, 0));
}

#[test]
fn of_two_logs_starting_together_the_one_with_fewer_calls_keeps_them() {
    // Forked from its end and not continued: the parent has fewer calls, and
    // its id sorts after the copy's, so the id does not decide.
    let parent = session("z-parent", 0, &["msg_1", "msg_2"]);
    let copy = session("a-copy", 0, &["msg_1", "msg_2", "msg_c"]);
    let out = settle(vec![parent, copy]);
    assert_eq!(kept(&out[0]), ["msg_1", "msg_2"]);
    assert_eq!(kept(&out[1]), ["msg_c"]);
    // Both the same: the id decides; the same id too, the path.
    let out = settle(vec![session("b", 0, &["msg_1"]), session("a", 0, &["msg_1"])]);
    assert_eq!((kept(&out[0]), kept(&out[1])), (vec![], vec!["msg_1"]));
    let mut twin = session("a", 0, &["msg_1"]);
    twin.source_path = "backup/a.jsonl".into();
    let out = settle(vec![session("a", 0, &["msg_1"]), twin]);
    assert_eq!((kept(&out[0]), kept(&out[1])), (vec!["msg_1"], vec![]), "a.jsonl sorts after backup/");
}

#[test]
fn every_response_is_kept_by_exactly_one_log_of_a_fork_of_a_fork() {
    let p = session("p", 0, &["msg_1", "msg_2"]);
    let f1 = session("f1", 0, &["msg_1", "msg_2", "msg_a", "msg_b", "msg_x"]);
    let f2 = session("f2", 0, &["msg_1", "msg_2", "msg_a", "msg_b", "msg_y", "msg_z"]);
    let out = settle(vec![f2, p, f1]);
    let mut all: Vec<&str> = out.iter().flat_map(kept).collect();
    all.sort_unstable();
    assert_eq!(all, ["msg_1", "msg_2", "msg_a", "msg_b", "msg_x", "msg_y", "msg_z"]);
    assert_eq!(kept(&out[1]), ["msg_1", "msg_2"]);
    assert_eq!(kept(&out[2]), ["msg_a", "msg_b", "msg_x"]);
    assert_eq!(kept(&out[0]), ["msg_y", "msg_z"]);
}

#[test]
fn only_the_leading_shared_responses_are_a_copy() {
    // A shared response after one of its own is not copied history: kept.
    let p = session("p", 0, &["msg_1", "msg_2"]);
    let s = session("s", 5, &["msg_own", "msg_2"]);
    let out = settle(vec![p, s]);
    assert_eq!(kept(&out[1]), ["msg_own", "msg_2"]);
    assert!(out[1].forked_from.is_none());
    // Ids not in Anthropic's form are not compared (the scan could not have
    // grouped their files).
    let out = settle(vec![session("p", 0, &["gen-1"]), session("s", 5, &["gen-1", "gen-2"])]);
    assert_eq!(kept(&out[1]), ["gen-1", "gen-2"]);
}

#[test]
fn sub_agents_marked_forks_and_other_formats_take_no_part() {
    let p = session("p", 0, &["msg_1"]);
    let mut agent = session("p#agent-1", 5, &["msg_1", "msg_2"]);
    agent.parent = Some("p".into());
    let mut marked = session("m", 5, &["msg_1", "msg_3"]);
    marked.forked_from = Some("p".into());
    let mut pi = session("q", 5, &["msg_1", "msg_4"]);
    pi.format = Format::Pi;
    let out = settle(vec![p, agent, marked, pi]);
    for s in &out[1..] {
        assert_eq!(kept(s).len(), 2, "{}", s.id);
        assert_eq!(s.inherited, 0, "{}", s.id);
    }
}

/// The fixture's pair: a session and a `--fork-session` copy of its first
/// two responses, each continued. Read together, each response is counted
/// once; the copy read alone is the only record of them and keeps them.
#[test]
fn a_fork_session_copy_read_with_its_parent_counts_each_response_once() {
    let dir = fixtures_dir().join("claude-code/forked");
    let (inputs, _) = super::super::discover(std::slice::from_ref(&dir));
    assert_eq!(inputs.len(), 2);
    let families = families(&inputs, None);
    assert_eq!(families.groups(), [vec![0, 1]]);
    let batch = super::super::read_all(&inputs, None);
    let by_id = |id: &str| batch.sessions.iter().find(|s| s.id.starts_with(id)).expect(id);
    let (parent, copy) = (by_id("5a1e"), by_id("1b2c"));
    assert_eq!(kept(parent), ["msg_01ForkA", "msg_01ForkB", "msg_01ForkC", "msg_01ForkD"]);
    assert_eq!(kept(copy), ["msg_01ForkE", "msg_01ForkF", "msg_01ForkG"]);
    assert_eq!(copy.forked_from.as_deref(), Some(parent.id.as_str()));
    assert_eq!(copy.inherited, 4, "the question, the search, its result and the answer");
    assert_eq!(copy.messages.len(), 10, "the copied history stays, as context");

    let alone = super::super::read_all(&inputs[..1], None);
    let copy_alone = &alone.sessions[0];
    assert!(copy_alone.id.starts_with("1b2c"));
    assert_eq!(copy_alone.calls.len(), 5);
    assert_eq!(copy_alone.inherited, 0);
    // Told to read another format, nothing is scanned.
    assert!(super::families(&inputs, Some(Format::Pi)).groups().is_empty());
}

/// A copy of a log that compacted opens with its last compaction: the
/// boundary, the summary and what followed, its responses included. The
/// compaction is the parent's (scored there), the copy keeps its own call.
#[test]
fn a_copy_made_after_a_compaction_starts_from_it() {
    let dir = fixtures_dir().join("claude-code");
    let inputs: Vec<Input> = ["compaction.jsonl", "compaction-fork.jsonl"]
        .iter()
        .map(|n| Input { path: dir.join(n), kind: InputKind::File })
        .collect();
    assert_eq!(families(&inputs, None).groups(), [vec![0, 1]]);
    let batch = super::super::read_all(&inputs, None);
    let by_path = |n: &str| batch.sessions.iter().find(|s| s.source_path.ends_with(n)).expect(n);
    let (parent, copy) = (by_path("compaction.jsonl"), by_path("compaction-fork.jsonl"));
    assert_eq!(kept(parent), ["msg_01CompA", "msg_01CompB", "msg_01CompC"]);
    assert_eq!(kept(copy), ["msg_01CompForkA"]);
    assert_eq!(copy.forked_from.as_deref(), Some(parent.id.as_str()));
    assert!(!copy.recorded_compactions.is_empty() && !copy.has_own_compactions());
    // What the policy replaying the copy starts from: the summary and after.
    let hidden = copy.hidden_from_policy();
    let summary = copy.messages.iter().position(|m| m.origin == Origin::CompactSummary).expect("the summary");
    assert!(!hidden[summary..].iter().any(|h| *h), "{hidden:?}");
}

proptest::proptest! {
    /// On any bytes the scan ends, and finds only ids in Anthropic's form
    /// that the bytes hold as an `"id"`'s value.
    #[test]
    fn the_scan_takes_any_bytes(parts in proptest::collection::vec(
        proptest::prop_oneof![
            proptest::collection::vec(proptest::num::u8::ANY, 0..12),
            proptest::strategy::Just(b"\"id\"".to_vec()),
            proptest::strategy::Just(b" : ".to_vec()),
            proptest::strategy::Just(vec![b' '; 70]),
            proptest::strategy::Just(b"\"msg_".to_vec()),
            proptest::strategy::Just(b"01Ab\"".to_vec()),
        ],
        0..24,
    )) {
        let data: Vec<u8> = parts.concat();
        // Read a few bytes at a time, after a head of any length, the scan
        // finds what one pass over the whole finds.
        for (head, chunk) in [(0, 1), (3, 7), (10, 64), (data.len(), 1)] {
            let head = head.min(data.len());
            let chunked = scan_chunks(data[..head].to_vec(), &data[head..], chunk);
            proptest::prop_assert_eq!(&chunked, &response_ids(&data), "head {}, chunk {}", head, chunk);
        }
        for id in response_ids(&data) {
            proptest::prop_assert!(scannable(&id), "{id}");
            let quoted = format!("\"{id}\"");
            proptest::prop_assert!(data.windows(quoted.len()).any(|w| w == quoted.as_bytes()), "{id}");
        }
    }
}

/// Only Claude Code logs are scanned: two logs of another format holding the
/// same id are no family.
#[test]
fn logs_of_other_formats_are_no_family() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let codex = std::fs::read_dir(fixtures_dir().join("codex"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a Codex fixture");
    let claude = fixtures_dir().join("claude-code/forked/5a1e0c3b-2f4d-4e6a-9b8c-7d0e1f2a3b4c.jsonl");
    let mut inputs = Vec::new();
    for (n, src) in [("a", &codex), ("b", &codex), ("c", &claude), ("d", &claude)] {
        let mut data = std::fs::read(src).unwrap_or_default();
        data.extend_from_slice(b"{\"id\":\"msg_01Same\"}\n");
        let path = tmp.path().join(format!("{n}.jsonl"));
        std::fs::write(&path, data).unwrap_or_else(|e| panic!("{e}"));
        inputs.push(Input { path, kind: InputKind::File });
    }
    assert_eq!(families(&inputs, None).groups(), [vec![2, 3]]);
}
