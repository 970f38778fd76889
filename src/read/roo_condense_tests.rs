//! Roo Code's condense summaries read as the compactions they are, in each
//! version's shape, and its other insertions kept out of the model calls.

use super::*;
use crate::model::CompactionKind;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::ops::Range;

fn read(history: &[Value], ui: &[Value]) -> Session {
    let history = serde_json::to_vec(history).unwrap();
    let ui = serde_json::to_vec(ui).unwrap();
    read_history_bytes(Path::new("/t/roo-task"), &history, Some(&ui), None).remove(0)
}

fn warned(s: &Session, text: &str) -> bool {
    s.diagnostics.messages.iter().any(|d| d.message.contains(text))
}

fn user(text: &str, parent: Option<&str>) -> Value {
    let mut m = json!({"role": "user", "content": [{"type": "text", "text": text}]});
    if let Some(p) = parent {
        m["condenseParent"] = json!(p);
    }
    m
}

fn assistant(text: &str, parent: Option<&str>) -> Value {
    let mut m = json!({"role": "assistant", "content": [{"type": "text", "text": text}]});
    if let Some(p) = parent {
        m["condenseParent"] = json!(p);
    }
    m
}

fn summary(role: &str, id: Option<&str>, parent: Option<&str>) -> Value {
    let mut m = json!({"role": role, "content": "## Conversation Summary\nedited src/lib.rs", "isSummary": true});
    if let Some(id) = id {
        m["condenseId"] = json!(id);
    }
    if let Some(p) = parent {
        m["condenseParent"] = json!(p);
    }
    m
}

/// (head, kept, inserted) of each recorded compaction, all condenses.
fn shapes(s: &Session) -> Vec<(Range<usize>, Range<usize>, Range<usize>)> {
    assert!(s.recorded_compactions.iter().all(|c| c.kind == CompactionKind::RooCondense));
    s.recorded_compactions.iter().map(|c| (c.head.clone(), c.kept.clone(), c.inserted.clone())).collect()
}

const T0: i64 = 1_730_000_000_000;

fn at(mut m: Value, ts: i64) -> Value {
    m["ts"] = json!(T0 + ts);
    m
}

fn marker(id: &str) -> Value {
    let mut m = assistant("[Sliding window truncation: 2 messages hidden to reduce context]", None);
    m["isTruncationMarker"] = json!(true);
    m["truncationId"] = json!(id);
    m
}

fn truncated(mut m: Value, id: &str) -> Value {
    m["truncationParent"] = json!(id);
    m
}

fn api_req(tokens_in: u64) -> Value {
    let text = json!({"tokensIn": tokens_in, "tokensOut": 5, "cacheWrites": 0, "cacheReads": 0});
    json!({"type": "say", "say": "api_req_started", "text": text.to_string()})
}

/// The fresh-start model (current Roo Code): every element so far tagged,
/// the summary appended as a user element; a second condense tags what
/// came after the first summary, the summary included.
#[test]
fn fresh_start_summaries_replace_everything_before_them() {
    let c1 = Some("c1");
    let c2 = Some("c2");
    let history = [
        user("<task>fix the bug</task>", c1),
        assistant("reading", c1),
        user("file body", c1),
        summary("user", c1, c2),
        assistant("editing", c2),
        user("done editing", c2),
        summary("user", c2, None),
        assistant("all done", None),
    ];
    let s = read(&history, &[]);
    assert_eq!(shapes(&s), [(0..0, 3..3, 3..4), (0..0, 6..6, 6..7)]);
    assert_eq!(s.messages[3].origin, Origin::CompactSummary);
    assert_eq!(s.messages[6].origin, Origin::CompactSummary);
    // The summaries are no model call: three assistant responses, three calls.
    assert_eq!(s.calls.iter().map(|c| c.message_index).collect::<Vec<_>>(), [1, 4, 7]);
    assert!(!warned(&s, "Roo Code"), "{:?}", s.diagnostics.messages);
}

/// The first non-destructive version: the first exchange and the last three
/// elements stay, the summary (an assistant element) goes before the three.
#[test]
fn a_summary_before_the_kept_elements_keeps_the_first_one_as_head() {
    let c1 = Some("c1");
    let history = [
        user("<task>fix the bug</task>", None),
        assistant("reading", c1),
        user("file body", c1),
        summary("assistant", c1, None),
        assistant("editing", None),
        user("done editing", None),
        assistant("all done", None),
    ];
    let s = read(&history, &[api_req(100), api_req(200), api_req(300)]);
    assert_eq!(shapes(&s), [(0..1, 3..3, 3..4)]);
    // Each response takes its own request: the summary takes none.
    let calls: Vec<(usize, u64)> =
        s.calls.iter().map(|c| (c.message_index, c.usage.map_or(0, |u| u.uncached_input))).collect();
    assert_eq!(calls, [(1, 100), (4, 200), (6, 300)]);
}

/// A fork that keeps every earlier summary visible: the last run kept is
/// recorded, and the earlier summary it still sent is said to count as dropped.
#[test]
fn kept_summaries_apart_from_each_other_are_reported() {
    let history = [
        user("<task>a</task>", Some("c1")),
        summary("user", Some("c1"), None),
        user("b", Some("c2")),
        summary("user", Some("c2"), None),
        user("c", Some("c3")),
        summary("user", Some("c3"), None),
    ];
    let s = read(&history, &[]);
    assert_eq!(shapes(&s), [(0..0, 1..1, 1..2), (0..0, 1..2, 3..4), (0..0, 3..4, 5..6)]);
    assert!(
        warned(&s, "1 message(s) Roo Code still sent after a condense or truncation lie apart"),
        "{:?}",
        s.diagnostics.messages
    );
}

/// A truncation timed by its UI message takes effect where it happened:
/// its marker (stored after the first element) is placed before the first
/// element written after it, the first exchange and the elements it did not
/// hide are kept, and it is scored with no summary.
#[test]
fn a_timed_truncation_is_a_compaction_where_it_happened() {
    use crate::quality::{RecordedStatus, SessionAtoms, evaluate_recorded};
    let history = [
        at(user("<task>fix src/app.rs</task>", None), 0),
        at(marker("t1"), 2999),
        at(truncated(assistant("reading src/app.rs", None), "t1"), 1000),
        at(truncated(user("fn main() {}", None), "t1"), 2000),
        at(assistant("editing src/app.rs", None), 3000),
        at(user("edited", None), 4000),
        at(assistant("checking src/app.rs", None), 6000),
    ];
    let info = json!({"truncationId": "t1", "messagesRemoved": 2, "prevContextTokens": 900, "newContextTokens": 400});
    let ui = [json!({"ts": T0 + 5000, "type": "say", "say": "sliding_window_truncation", "contextTruncation": info})];
    let s = read(&history, &ui);
    let got: Vec<_> = s
        .recorded_compactions
        .iter()
        .map(|c| (c.kind, c.head.clone(), c.kept.clone(), c.inserted.clone(), c.tokens_before, c.source_line))
        .collect();
    assert_eq!(got, [(CompactionKind::RooTruncation, 0..1, 3..5, 5..6, Some(900), 2)]);
    assert!(s.messages[5].text().starts_with("[Sliding window truncation"));
    assert_eq!(s.calls.iter().map(|c| c.message_index).collect::<Vec<_>>(), [1, 3, 6]);
    assert!(!warned(&s, "Roo Code"), "{:?}", s.diagnostics.messages);
    let q = evaluate_recorded(&s, &SessionAtoms::from_session(&s), &crate::tokens::Chars4).unwrap();
    let e = &q.events[0];
    assert_eq!((e.status, e.replaced_messages, e.kept_messages), (RecordedStatus::Scored, 2, 3));
}

/// A truncation marker no UI message times is no call and no compaction; a
/// summary without an id is text Roo Code sent. Both are said.
#[test]
fn untimed_truncation_markers_and_summaries_without_an_id_are_read_as_text_and_said() {
    let history = [
        user("<task>fix</task>", None),
        marker("t1"),
        truncated(assistant("reading", None), "t1"),
        truncated(user("file body", None), "t1"),
        summary("assistant", None, None),
        assistant("done", None),
    ];
    let s = read(&history, &[]);
    assert!(s.recorded_compactions.is_empty());
    assert_eq!(s.messages[1].origin, Origin::Injected);
    assert_eq!(s.messages[4].origin, Origin::Injected);
    assert_eq!(s.calls.iter().map(|c| c.message_index).collect::<Vec<_>>(), [2, 5]);
    assert!(warned(&s, "1 sliding-window truncation(s) by Roo Code are not read as compactions"));
    assert!(warned(&s, "the 2 message(s) they hid are counted as sent"));
    assert!(warned(&s, "1 condense summary(ies) without a condenseId"));
}

/// Plain Cline histories carry none of this and are read as before.
#[test]
fn a_history_without_roo_tags_has_no_roo_compaction_or_notice() {
    let s = read(&[user("<task>go</task>", None), assistant("ok", None)], &[]);
    assert!(s.recorded_compactions.is_empty());
    assert!(!warned(&s, "Roo Code"));
}

/// Each condense is scored like any agent's compaction: P is what its
/// summary replaced (the first summary, for the second), F what came after.
#[test]
fn roo_condenses_are_scored_as_recorded_compactions() {
    use crate::quality::{RecordedStatus, SessionAtoms, evaluate_recorded};
    let history = [
        user("<task>fix the bug in src/parser.rs</task>", Some("c1")),
        assistant("reading src/parser.rs", Some("c1")),
        user("fn parse() {}", Some("c1")),
        summary("user", Some("c1"), Some("c2")),
        assistant("editing src/parser.rs and src/lexer.rs", Some("c2")),
        user("done editing", Some("c2")),
        summary("user", Some("c2"), None),
        assistant("checking src/lexer.rs again", None),
    ];
    let s = read(&history, &[]);
    let q = evaluate_recorded(&s, &SessionAtoms::from_session(&s), &crate::tokens::Chars4).unwrap();
    // Cline writes no such tags: its agent is Roo Code, not the format's.
    assert_eq!(q.agent, "roo-code");
    let got: Vec<(RecordedStatus, bool, u32)> =
        q.events.iter().map(|e| (e.status, e.chained, e.replaced_messages)).collect();
    assert_eq!(got, [(RecordedStatus::Scored, false, 3), (RecordedStatus::Scored, true, 2)]);
}

/// The bundled Roo Code task: two fresh-start condenses, each recorded and
/// scored, and every response paired with its own request (the summaries
/// and the UI's condense notices take none).
#[test]
fn the_bundled_roo_code_task_records_its_two_condenses() {
    use crate::quality::{RecordedStatus, SessionAtoms, evaluate_recorded};
    let dir = crate::testing::fixtures_dir().join("cline/1730000600000");
    let s = read_task_dir(&dir).unwrap().remove(0);
    assert_eq!(shapes(&s), [(0..0, 6..6, 6..7), (0..0, 11..11, 11..12)]);
    // The UI's condense notices name their summaries, with the tokens before.
    let before: Vec<Option<u64>> = s.recorded_compactions.iter().map(|c| c.tokens_before).collect();
    assert_eq!(before, [Some(3600), Some(1800)]);
    let ins: Vec<u64> = s.calls.iter().map(|c| c.usage.map_or(0, |u| u.uncached_input)).collect();
    assert_eq!(ins, [3200, 3500, 1400, 1700, 1300, 1500]);
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
    let q = evaluate_recorded(&s, &SessionAtoms::from_session(&s), &crate::tokens::Chars4).unwrap();
    assert!(q.events.iter().all(|e| e.status == RecordedStatus::Scored));
    assert_eq!(q.events.iter().map(|e| e.chained).collect::<Vec<_>>(), [false, true]);
}

/// The bundled Roo Code task with a sliding-window truncation: timed by its
/// UI message, it takes effect after the edit's result, and every response
/// keeps its own request.
#[test]
fn the_bundled_roo_code_truncation_takes_effect_when_its_ui_message_says() {
    let dir = crate::testing::fixtures_dir().join("cline/1730000700000");
    let s = read_task_dir(&dir).unwrap().remove(0);
    let got: Vec<_> =
        s.recorded_compactions.iter().map(|c| (c.kind, c.head.clone(), c.kept.clone(), c.inserted.clone())).collect();
    // Task and environment (0, 1), hidden read (2, 3), kept edit (4, 5), marker (6).
    assert_eq!(got, [(CompactionKind::RooTruncation, 0..2, 4..6, 6..7)]);
    let ins: Vec<u64> = s.calls.iter().map(|c| c.usage.map_or(0, |u| u.uncached_input)).collect();
    assert_eq!(ins, [2100, 2900, 2300, 2500, 2600]);
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
}

/// One history element of a random Roo Code log: role, kind (0 plain,
/// 1 summary, 2 marker), its id, its condense and truncation parents (ids
/// 0..4, or none), its time.
type Element = (bool, u8, u8, Option<u8>, Option<u8>, Option<u16>);

fn element((assistant_role, kind, id, cp, tp, ts): Element) -> Value {
    let mut m = if assistant_role { assistant("a", None) } else { user("u", None) };
    match kind % 3 {
        1 => {
            m["isSummary"] = json!(true);
            m["condenseId"] = json!(format!("c{}", id % 4));
        }
        2 => {
            m["isTruncationMarker"] = json!(true);
            m["truncationId"] = json!(format!("t{}", id % 4));
        }
        _ => {}
    }
    if let Some(p) = cp {
        m["condenseParent"] = json!(format!("c{}", p % 4));
    }
    if let Some(p) = tp {
        m["truncationParent"] = json!(format!("t{}", p % 4));
    }
    if let Some(t) = ts {
        m["ts"] = json!(T0 + i64::from(t));
    }
    m
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

    /// Whatever the tags and times (ids repeated, parents with no summary,
    /// markers timed before their own element), reading never panics, every
    /// message is kept, and every compaction is well formed: its head, kept
    /// and inserted messages in order, within the session, and each call a
    /// model's message.
    #[test]
    fn any_roo_tags_give_well_formed_compactions(
        elements in proptest::collection::vec(
            proptest::prelude::any::<(bool, u8, u8, Option<u8>, Option<u8>, Option<u16>)>(), 0..24),
        truncations in proptest::collection::vec((0u8..4, proptest::prelude::any::<u16>()), 0..4),
    ) {
        let history: Vec<Value> = elements.iter().copied().map(element).collect();
        let ui: Vec<Value> = truncations
            .iter()
            .map(|&(id, t)| {
                let info = json!({"truncationId": format!("t{id}"), "prevContextTokens": 10});
                json!({"ts": T0 + i64::from(t), "type": "say", "say": "sliding_window_truncation", "contextTruncation": info})
            })
            .collect();
        let s = read(&history, &ui);
        let n = s.messages.len();
        let markers = elements.iter().filter(|e| e.1 % 3 == 2).count();
        let others = elements.len() - markers;
        // Every element is at least one message, markers exactly one.
        proptest::prop_assert!(n >= others + markers, "{n} messages of {} elements", elements.len());
        for c in &s.recorded_compactions {
            proptest::prop_assert!(c.head.start <= c.head.end && c.head.end <= c.kept.start.max(c.head.end));
            proptest::prop_assert!(c.kept.start <= c.kept.end && c.kept.end <= c.inserted.start);
            proptest::prop_assert!(c.inserted.start <= c.inserted.end && c.inserted.end <= n);
        }
        for call in &s.calls {
            let m = &s.messages[call.message_index];
            proptest::prop_assert!(m.role == crate::model::Role::Assistant && m.origin == Origin::Model);
        }
        // Each compaction keeps what a plain rescan of the tags gives: the
        // messages before it whose element no compaction up to it hides.
        let tag = |m: &crate::model::Message| elements.get(m.source_line as usize - 1).copied();
        let id = |c: &crate::model::RecordedCompaction| {
            tag(&s.messages[c.inserted.start]).map(|e| (c.kind == CompactionKind::RooCondense, e.2 % 4))
        };
        for (q, c) in s.recorded_compactions.iter().enumerate() {
            let ids: Vec<(bool, u8)> = s.recorded_compactions[..=q].iter().filter_map(id).collect();
            let hidden = |e: Element| {
                e.3.is_some_and(|p| ids.contains(&(true, p % 4))) || e.4.is_some_and(|p| ids.contains(&(false, p % 4)))
            };
            let mut runs: Vec<Range<usize>> = Vec::new();
            for m in (0..c.inserted.start).filter(|&m| !tag(&s.messages[m]).is_some_and(hidden)) {
                match runs.last_mut() {
                    Some(r) if r.end == m => r.end = m + 1,
                    _ => runs.push(m..m + 1),
                }
            }
            let head = if runs.first().is_some_and(|r| r.start == 0) { runs.remove(0) } else { 0..0 };
            let kept = runs.pop().unwrap_or(c.inserted.start..c.inserted.start);
            proptest::prop_assert_eq!((&c.head, &c.kept), (&head, &kept), "compaction {}", q);
        }
    }
}
