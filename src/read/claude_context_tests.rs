//! Tests of the context a Claude Code session starts from and keeps: a
//! branch's or a resume's copied history, the messages a compaction
//! preserved, and the prompt of a response that made several model requests.

use super::tests::{read_fixture, text_of};
use crate::model::Usage;
use crate::testing::fixtures_dir;
use std::path::Path;

fn prompt_and_output(u: &Usage) -> (u64, u64, u64, u64) {
    (u.uncached_input, u.cache_read, u.cache_write, u.output)
}

#[test]
fn a_response_with_several_requests_has_the_last_ones_prompt() {
    // The advisor ran mid-response: the top-level usage sums the prompts of the
    // two requests (19,200 read); the response ended on the second (10,200).
    let s = &read_fixture("advisor-iterations.jsonl")[0];
    let usage: Vec<_> = s.calls.iter().map(|c| prompt_and_output(c.usage.as_ref().unwrap())).collect();
    assert_eq!(usage, [(2, 10_200, 450, 345), (4, 10_650, 120, 30)], "one request: the totals as they are");
    assert_eq!(s.meta.models, ["claude-sonnet-4-6"]);
    // The advisor's own request, on another model, is in no call: said, once
    // though every line of the response lists it.
    let warnings: Vec<_> = s.diagnostics.messages.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        warnings,
        ["1 advisor request(s) on 1 other model(s) inside responses (10,400 input, 900 output tokens): \
not in the calls' usage, not replayed, not priced"]
    );
}

#[test]
fn a_branch_starts_from_the_history_it_copied_without_its_calls() {
    // `/branch` writes the parent's records again, each marked `forkedFrom`.
    let mut s = read_fixture("branch.jsonl").remove(0);
    assert_eq!(s.inherited, 4);
    assert_eq!(s.forked_from.as_deref(), Some("d41c8b2e-9f3a-4e7d-b6c5-0a1f2e3d4c5b"));
    assert_eq!((s.messages.len(), s.calls.len()), (6, 3), "read alone, the copy's responses are calls");
    s.settle_fork(true);
    let calls: Vec<_> = s.calls.iter().map(|c| (c.message_index, c.usage.as_ref().map(Usage::prompt_tokens))).collect();
    assert_eq!(calls, [(5, Some(4_388))], "the parent's two responses are its own calls");
}

const RESUMED: &str = "8a7b6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d";
const ORIGINAL: &str = "5f1e2d3c-4b5a-4c6d-8e7f-9a0b1c2d3e4f";

#[test]
fn a_resume_into_a_new_file_starts_from_the_history_it_copied_without_its_calls() {
    // Versions that resume into a new file copy the history there, each
    // record under the id of the session it came from.
    let mut s = read_fixture(&format!("resumed/{RESUMED}.jsonl")).remove(0);
    assert_eq!(s.id, RESUMED, "the file's name is its session's id");
    assert_eq!((s.inherited, s.forked_from.as_deref()), (4, Some(ORIGINAL)));
    assert_eq!((s.messages.len(), s.calls.len()), (8, 4), "read alone, the copy's responses are calls");
    s.settle_fork(true);
    let calls: Vec<_> = s.calls.iter().map(|c| c.response_id.as_deref()).collect();
    assert_eq!(calls, [Some("msg_01ResC"), Some("msg_01ResD")]);
    // The session it resumed is read as it is: nothing in it is a copy.
    let s = read_fixture(&format!("resumed/{ORIGINAL}.jsonl")).remove(0);
    assert_eq!((s.id.as_str(), s.inherited, s.forked_from.as_deref()), (ORIGINAL, 0, None));
}

#[test]
fn a_file_not_named_by_a_session_id_is_the_session_its_first_record_names() {
    // A file renamed by hand (or a fixture) gives no id to compare with:
    // nothing in it is taken for a copy.
    let path = fixtures_dir().join("claude-code/resumed").join(format!("{RESUMED}.jsonl"));
    let data = std::fs::read(&path).unwrap();
    let s = super::read(Path::new("renamed.jsonl"), &data).remove(0);
    assert_eq!((s.id.as_str(), s.inherited, s.forked_from.as_deref()), (ORIGINAL, 0, None));
    assert_eq!(s.calls.len(), 4);
}

#[test]
fn preserved_messages_are_the_kept_part_of_a_compaction() {
    // Newer Claude Code names the messages a partial compaction kept by their
    // uuids (`preservedMessages`), with no `preservedSegment`.
    let s = &read_fixture("preserved-messages.jsonl")[0];
    assert_eq!(s.recorded_compactions.len(), 2);
    let c1 = &s.recorded_compactions[0];
    assert_eq!((c1.trigger.as_deref(), c1.tokens_before), (Some("manual"), Some(6100)));
    assert_eq!(c1.inserted, 7..8);
    assert_eq!(c1.kept, 4..7, "the three listed uuids, in the order of the file");
    assert_eq!(text_of(&s.messages[4].blocks[0]), "Do it, and keep the Decimal type");
    // Listed messages with one between them that is not listed: kept from the
    // first to the last, and said.
    let c2 = &s.recorded_compactions[1];
    assert_eq!((c2.inserted.clone(), c2.kept.clone()), (12..13, 9..12));
    let warnings: Vec<_> = s.diagnostics.messages.iter().map(|d| (d.line, d.message.as_str())).collect();
    assert_eq!(
        warnings,
        [(
            14,
            "compact_boundary: the preserved messages are not one run; \
             the 1 message(s) between them are counted as kept too"
        )]
    );
    assert_eq!(s.calls.len(), 6);
}

#[test]
fn an_advisor_request_repeated_on_every_line_of_a_response_is_counted_once() {
    let line = |uuid: &str, parent: &str, block: &str| {
        format!(
            r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":"{parent}","sessionId":"s","message":{{"id":"msg_1","model":"claude-sonnet-4-6","role":"assistant","content":[{block}],"usage":{{"input_tokens":2,"output_tokens":30,"iterations":[{{"type":"message","input_tokens":1,"output_tokens":5}},{{"type":"advisor_message","model":"claude-opus-4-8","input_tokens":700,"cache_read_input_tokens":300,"output_tokens":40}},{{"type":"message","input_tokens":1,"output_tokens":25}}]}}}}}}"#
        )
    };
    let user =
        r#"{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"go"}}"#;
    let data = [
        user.to_string(),
        line("a1", "u", r#"{"type":"text","text":"one"}"#),
        line("a2", "a1", r#"{"type":"text","text":"two"}"#),
    ]
    .join("\n");
    let s = super::read(std::path::Path::new("/t/s.jsonl"), data.as_bytes()).remove(0);
    assert_eq!(s.calls.len(), 1);
    let warnings: Vec<_> = s.diagnostics.messages.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        warnings,
        ["1 advisor request(s) on 1 other model(s) inside responses (1,000 input, 40 output tokens): \
not in the calls' usage, not replayed, not priced"]
    );
}
