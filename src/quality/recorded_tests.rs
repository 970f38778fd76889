//! The agent's own compactions: every recorded shape read and scored (or
//! said why not), and the recorded candidate's metrics move as they must.

use super::*;
use crate::model::{Block, Format};
use crate::testing::fixtures_dir;
use crate::tokens::Chars4;

fn session(rel: &str) -> Session {
    let path = fixtures_dir().join(rel);
    let data = std::fs::read(&path).unwrap();
    let mut sessions = crate::read::read_bytes(&path, &data, None).unwrap();
    assert_eq!(sessions.len(), 1, "{rel}");
    sessions.remove(0)
}

fn scored(s: &Session) -> RecordedQuality {
    let atoms = SessionAtoms::from_session(s);
    evaluate_recorded(s, &atoms, &Chars4).expect("the log records compactions")
}

fn row<'e>(e: &'e RecordedEvent, name: &str) -> &'e CompactionQuality {
    e.rows.iter().find(|r| r.summarizer == name).unwrap_or_else(|| panic!("no {name} row"))
}

/// Each recorded-compaction shape: Claude 2.x (boundary, preserved segment),
/// Claude 1.0.x (a summary line, no boundary), a continuation file that
/// starts with the summary, Codex readable (with and without a replacement
/// history) and encrypted, pi by entry index and by entry id.
#[test]
fn every_recorded_shape_is_scored_or_said_why_not() {
    use RecordedStatus::{Continuation, Scored, Unreadable};
    let cases: &[(&str, Format, &[RecordedStatus])] = &[
        ("claude-code/compaction.jsonl", Format::ClaudeCode, &[Scored, Scored]),
        ("claude-code/compaction-v1.jsonl", Format::ClaudeCode, &[Scored]),
        ("claude-code/continuation.jsonl", Format::ClaudeCode, &[Continuation]),
        ("codex/compacted.jsonl", Format::Codex, &[Scored, Scored]),
        ("codex/compacted-encrypted.jsonl", Format::Codex, &[Unreadable]),
        ("pi/v1-compaction.jsonl", Format::Pi, &[Scored]),
        ("pi/v3-tree.jsonl", Format::Pi, &[Scored]),
    ];
    for &(rel, format, statuses) in cases {
        let s = session(rel);
        let q = scored(&s);
        assert_eq!(q.agent, format.name(), "{rel}");
        let got: Vec<RecordedStatus> = q.events.iter().map(|e| e.status).collect();
        assert_eq!(got, statuses, "{rel}");
        for e in &q.events {
            let names: Vec<&str> = e.rows.iter().map(|r| r.summarizer.as_str()).collect();
            if e.status == Scored {
                assert_eq!(
                    names,
                    [CANDIDATE_RECORDED, REF_EXTRACTIVE_BUDGET, REF_TRUNCATE, REF_MASKING_BUDGET, REF_ORACLE],
                    "{rel}"
                );
                assert!(e.replaced_messages > 0 || e.chained, "{rel}: nothing dropped");
                let recorded = row(e, CANDIDATE_RECORDED);
                assert!(recorded.summary_tokens > 0, "{rel}");
                // The references are held to the recorded summary's budget.
                for r in [REF_EXTRACTIVE_BUDGET, REF_MASKING_BUDGET] {
                    let t = row(e, r).summary_tokens;
                    assert!(t <= recorded.summary_tokens + 16, "{rel}: {r} {t} > {}", recorded.summary_tokens);
                }
                assert_eq!(row(e, REF_ORACLE).frr.unwrap_or(1.0), 1.0, "{rel}");
            } else {
                assert!(names.is_empty(), "{rel}: an unscored compaction has rows");
            }
        }
    }
}

/// The Claude 1.0.x session: what the agent needed after its compaction
/// (the edited file, the test command, `refreshToken`) against its summary.
#[test]
fn a_recorded_summary_is_scored_on_what_the_agent_needed_next() {
    let s = session("claude-code/compaction-v1.jsonl");
    let q = scored(&s);
    assert_eq!(q.version.as_deref(), Some("1.0.51"));
    let e = &q.events[0];
    assert_eq!((e.kind, e.chained, e.kept_messages), (CompactionKind::ClaudeBoundary, false, 0));
    let recorded = row(e, CANDIDATE_RECORDED);
    assert_eq!(recorded.needed_modified_path, 1, "{recorded:?}");
    assert_eq!(recorded.recall_modified_path, Some(1.0));
    assert_eq!(recorded.needed_command, 1);
    assert_eq!(recorded.recall_command, Some(1.0));
    // The summary never names `refreshToken`, which the agent used next.
    let audit = e.audit.as_ref().expect("a scored compaction has its audit");
    let held = |v: &str| audit.needed.iter().find(|a| a.value == v).map(|a| a.score);
    assert_eq!(held("refreshToken"), Some(0.0), "{audit:?}");
    assert_eq!(held("src/auth/session.ts"), Some(1.0), "{audit:?}");
    assert_eq!(held("npm test"), Some(1.0), "{audit:?}");
    assert!(recorded.recall_symbol.is_some_and(|r| r < 1.0));
    assert!(recorded.frr.is_some_and(|f| f > 0.5 && f < 1.0), "{recorded:?}");
    assert_eq!(recorded.hallucination_rate, Some(0.0), "{recorded:?}");
    assert!(e.lost_modified_paths.is_empty());
    // Extractive copies only what the log holds, at any budget.
    assert_eq!(row(e, REF_EXTRACTIVE_BUDGET).hallucination_rate.unwrap_or(0.0), 0.0);
}

/// `s` with its (first) recorded summary's text replaced by `edit` of it.
fn with_summary(s: &Session, edit: impl Fn(&str) -> String) -> Session {
    let mut s = s.clone();
    let at = s.recorded_compactions[0].inserted.clone();
    for m in &mut s.messages[at] {
        if m.origin == Origin::CompactSummary {
            for b in &mut m.blocks {
                if let Block::Text { text } = b {
                    *text = edit(text);
                }
            }
        }
    }
    s
}

/// Mutation checks of the recorded candidate: a needed path deleted from the
/// summary lowers its FRR, a fabricated identifier raises its hallucination
/// rate; the references at the same point do not move.
#[test]
fn deleting_a_needed_path_or_inventing_an_identifier_moves_the_recorded_row() {
    let s = session("claude-code/compaction-v1.jsonl");
    let base = scored(&s);
    let base_row = row(&base.events[0], CANDIDATE_RECORDED).clone();

    let without = with_summary(&s, |t| t.replace("src/auth/session.ts", "the session module"));
    let q = scored(&without);
    let r = row(&q.events[0], CANDIDATE_RECORDED);
    assert!(r.frr < base_row.frr, "FRR {:?} !< {:?}", r.frr, base_row.frr);
    assert_eq!(r.recall_modified_path, Some(0.0));
    assert_eq!(q.events[0].lost_modified_paths, ["src/auth/session.ts"]);
    assert_eq!(row(&q.events[0], REF_ORACLE), row(&base.events[0], REF_ORACLE));

    let invented =
        with_summary(&s, |t| format!("{t}\n5. Also changed src/auth/token_store_v2.ts (commit 9f8e7d6c5b4a)."));
    let q = scored(&invented);
    let r = row(&q.events[0], CANDIDATE_RECORDED);
    assert!(r.hallucinated_atoms > base_row.hallucinated_atoms, "{r:?}");
    assert!(r.hallucination_rate > base_row.hallucination_rate);
    assert_eq!(row(&q.events[0], REF_ORACLE), row(&base.events[0], REF_ORACLE));
    let listed = q.events[0].audit.as_ref().map(|a| a.hallucinated.iter().map(|h| h.value.clone()).collect::<Vec<_>>());
    assert!(listed.is_some_and(|l| l.iter().any(|v| v.contains("token_store_v2"))), "the invented path is listed");
}

/// A chained compaction (the second Codex one) has the first one's summary
/// and replacement history in P, as extra texts.
#[test]
fn a_second_compaction_drops_the_first_ones_summary() {
    let q = scored(&session("codex/compacted.jsonl"));
    assert_eq!(q.events.iter().map(|e| e.chained).collect::<Vec<_>>(), [false, true]);
    assert!(q.events[1].replaced_messages > 0);
}

/// Aggregates group by agent and version and count what was not scored.
#[test]
fn aggregates_count_each_agent_version_and_what_was_not_scored() {
    let qs: Vec<RecordedQuality> = [
        "claude-code/compaction-v1.jsonl",
        "claude-code/continuation.jsonl",
        "codex/compacted.jsonl",
        "codex/compacted-encrypted.jsonl",
    ]
    .iter()
    .map(|rel| scored(&session(rel)))
    .collect();
    let aggs = aggregate_recorded(&qs);
    /// Agent, version, compactions, scored, unreadable, continuations.
    type Counts<'a> = (&'a str, Option<&'a str>, u32, u32, u32, u32);
    let key: Vec<Counts<'_>> = aggs
        .iter()
        .map(|a| (a.agent.as_str(), a.version.as_deref(), a.compactions, a.scored, a.unreadable, a.continuations))
        .collect();
    assert_eq!(
        key,
        [
            ("claude-code", Some("1.0.51"), 2, 1, 0, 1),
            ("codex", Some("0.118.0"), 2, 2, 0, 0),
            ("codex", Some("0.125.0"), 1, 0, 1, 0),
        ]
    );
    let claude = &aggs[0];
    assert_eq!(claude.candidate(CANDIDATE_RECORDED).map(|c| c.events), Some(1));
    assert!(aggs[2].candidates.is_empty());
}

/// Cline: a truncation (a deleted range, no summary) is scored with none, so
/// its `recorded` row is what it kept; the summary a `summarize_task` call
/// wrote is scored like any other. The kept part is the first exchange and
/// what follows the range.
#[test]
fn a_cline_truncation_and_condense_are_scored() {
    let dir = fixtures_dir().join("cline/1730000300000");
    let s = crate::read::cline::read_task_dir(&dir).unwrap().remove(0);
    let q = scored(&s);
    assert_eq!(q.agent, "cline");
    let got: Vec<RecordedStatus> = q.events.iter().map(|e| e.status).collect();
    assert_eq!(got, [RecordedStatus::Scored, RecordedStatus::Scored]);

    let cut = &q.events[0];
    // Elements 2–3 dropped (a result and its environment details, a call);
    // element 0 (two messages), 1 and 4 (two messages) kept.
    assert_eq!((cut.replaced_messages, cut.kept_messages, cut.chained), (3, 5, false));
    let recorded = row(cut, CANDIDATE_RECORDED);
    assert_eq!(recorded.summary_tokens, 0);
    assert_eq!(recorded.frr, Some(0.0), "nothing of what it dropped survives");
    let lost: Vec<&str> = cut.audit.iter().flat_map(|a| &a.needed).map(|n| n.value.as_str()).collect();
    assert!(lost.contains(&"pytest tests/test_parser.py"), "{lost:?}");
    assert!(!lost.contains(&"src/parser.py"), "the task, kept in the first exchange, names it: {lost:?}");

    let condense = &q.events[1];
    assert_eq!((condense.replaced_messages, condense.kept_messages), (6, 4));
    assert!(condense.summary.contains("rerun pytest tests/test_parser.py"));
    assert_eq!(row(condense, CANDIDATE_RECORDED).frr, Some(1.0));
}

/// Ranges a reader never writes (reversed, past the end) do not stop the
/// scoring: what they name is empty.
#[test]
fn reversed_or_outlying_kept_ranges_are_empty() {
    let mut s = crate::read::cline::read_task_dir(&fixtures_dir().join("cline/1730000300000")).unwrap().remove(0);
    let n = s.messages.len();
    #[allow(clippy::reversed_empty_ranges)]
    for c in &mut s.recorded_compactions {
        c.head = 5..2;
        c.kept = n + 3..n + 9;
    }
    let q = scored(&s);
    assert_eq!(q.events.len(), 2);
    assert!(q.events.iter().all(|e| e.kept_messages == 0), "{:?}", q.events);
}

/// A response the agent never sent on was in no context its compaction
/// dropped or kept: the point leaves it out, and only it.
#[test]
fn an_unsent_response_is_neither_dropped_nor_kept_by_a_recorded_compaction() {
    let s = session("pi/v1-compaction.jsonl");
    let before = points(&s);
    let (event, Some(point)) = &before[0] else { panic!("the compaction is scored") };
    let all: Vec<usize> = point.point.replaced.iter().flat_map(Range::clone).collect();
    assert!(all.len() >= 3, "{all:?}");
    let kept: Vec<usize> = point.point.kept.iter().flat_map(Range::clone).collect();
    let mut u = s.clone();
    let (gone, held) = (all[1], kept[0]);
    u.messages[gone].unsent = true;
    u.messages[held].unsent = true;
    let after = points(&u);
    let (e2, Some(p2)) = &after[0] else { panic!("still scored") };
    let all2: Vec<usize> = p2.point.replaced.iter().flat_map(Range::clone).collect();
    let kept2: Vec<usize> = p2.point.kept.iter().flat_map(Range::clone).collect();
    assert_eq!(all2, all.iter().copied().filter(|&i| i != gone).collect::<Vec<_>>());
    assert_eq!(kept2, kept.iter().copied().filter(|&i| i != held).collect::<Vec<_>>());
    assert_eq!(e2.replaced_messages + 1, event.replaced_messages);
    assert_eq!(e2.kept_messages + 1, event.kept_messages);
}

#[test]
fn without_takes_points_out_of_ranges() {
    assert_eq!(without([0..5, 7..9, 9..9], &[0, 2, 3, 8, 20]), [1..2, 4..5, 7..8]);
    assert_eq!(without(std::iter::once(0..3), &[]), vec![std::ops::Range { start: 0, end: 3 }]);
}

/// A test summarizer: writes `text`, or falls back to extractive (as the LLM
/// adapter does when every stage failed), or fails outright.
struct Scripted(Result<Option<&'static str>, ()>);

impl crate::summarize::Summarizer for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn summarize(
        &self,
        req: &crate::summarize::SummaryRequest<'_>,
    ) -> Result<crate::summarize::Summary, crate::summarize::SummarizeError> {
        match self.0 {
            Ok(Some(text)) => Ok(crate::summarize::Summary {
                text: text.to_string(),
                file_ops: req.file_ops.clone(),
                usage: Default::default(),
                fallback: None,
            }),
            Ok(None) => {
                let mut s = Extractive.summarize(req)?;
                s.fallback = Some("HTTP 500".to_string());
                Ok(s)
            }
            Err(()) => Err(crate::summarize::SummarizeError::Failed("down".to_string())),
        }
    }
}

/// A row of a written summary (`llm@budget`) exists only where its
/// summarizer wrote: one that fell back to extractive, or failed, leaves the
/// compaction without that row instead of scoring extractive's text (or an
/// empty one) under its name.
#[test]
fn a_summarizer_that_fell_back_writes_no_row() {
    let s = session("claude-code/compaction.jsonl");
    let atoms = SessionAtoms::from_session(&s);
    let rows = |summarizer: &Scripted| {
        let written = recorded_summaries(&s, summarizer, &Chars4);
        let q = evaluate_recorded_with(&s, &atoms, &Chars4, &[(REF_LLM_BUDGET, written)]).unwrap();
        q.events.iter().map(|e| e.rows.iter().filter(|r| r.summarizer == REF_LLM_BUDGET).count()).collect::<Vec<_>>()
    };
    assert_eq!(rows(&Scripted(Ok(Some("## Goal\nfix the login flow")))), [1, 1]);
    assert_eq!(rows(&Scripted(Ok(None))), [0, 0]);
    assert_eq!(rows(&Scripted(Err(()))), [0, 0]);
    // The aggregate counts the row over the compactions it has.
    let mut written = recorded_summaries(&s, &Scripted(Ok(Some("## Goal\nfix it"))), &Chars4);
    written[1] = None;
    let q = evaluate_recorded_with(&s, &atoms, &Chars4, &[(REF_LLM_BUDGET, written)]).unwrap();
    let a = &aggregate_recorded([&q])[0];
    assert_eq!((a.scored, a.candidate(REF_LLM_BUDGET).map(|c| c.events)), (2, Some(1)));
}
