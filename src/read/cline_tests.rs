use super::*;
use crate::model::ApiErrorKind;
use crate::testing::fixtures_dir;
use pretty_assertions::assert_eq;

fn task_dir() -> std::path::PathBuf {
    fixtures_dir().join("cline").join("1730000000000")
}

/// (uncached input, cache read, cache write, output) of every call.
fn split(s: &Session) -> Vec<(u64, u64, u64, u64)> {
    s.calls
        .iter()
        .map(|c| c.usage.unwrap())
        .map(|u| (u.uncached_input, u.cache_read, u.cache_write, u.output))
        .collect()
}

fn prompts(s: &Session) -> Vec<u64> {
    s.calls.iter().map(|c| c.usage.unwrap().prompt_tokens()).collect()
}

fn warned(s: &Session, text: &str) -> bool {
    s.diagnostics.messages.iter().any(|d| d.message.contains(text))
}

fn result_ids(m: &Message) -> Vec<&str> {
    m.blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn task_folder_with_positional_text_results_and_ui_usage() {
    let dir = task_dir();
    let history = std::fs::read(dir.join("api_conversation_history.json")).unwrap();
    assert_eq!(crate::read::detect(&history), Some(Format::Cline));
    // Discovery turns the folder into a ClineTask input.
    let (inputs, _) = crate::read::discover(std::slice::from_ref(&dir));
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].kind, crate::read::InputKind::Folder(Format::Cline));

    let s = crate::read::read_input(&inputs[0], None).unwrap().remove(0);
    assert_eq!(s.id, "1730000000000");
    assert_eq!(s.format, Format::Cline);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/proj"));
    assert_eq!(s.meta.models, ["claude-sonnet-4-5", "claude-opus-4-5"]);
    let shape: Vec<(Role, Origin, u64)> = s.messages.iter().map(|m| (m.role, m.origin, m.source_line)).collect();
    use Origin::*;
    use Role::*;
    assert_eq!(
        shape,
        [
            (User, Human, 1),    // <task>
            (User, Injected, 1), // <environment_details>
            (Assistant, Model, 2),
            (User, ToolResult, 3), // two text results, paired by position
            (User, Injected, 3),
            (Assistant, Model, 4),
            (User, ToolResult, 5), // native tool_result
            (User, Human, 5),      // <feedback>
            (Assistant, Model, 6),
        ]
    );
    assert_eq!(result_ids(&s.messages[3]), ["toolu_01", "toolu_02"]);
    // The header block becomes the result; the block after it is its content, and
    // text after the header line in the same block is content too.
    match &s.messages[3].blocks[..] {
        [Block::ToolResult { content: a, .. }, Block::ToolResult { content: b, .. }] => {
            assert_eq!(a, &[Block::text("for i in range(len(xs) + 1):\n    print(xs[i])")]);
            assert_eq!(b, &[Block::text("main.py\nREADME.md")]);
        }
        other => panic!("unexpected blocks {other:?}"),
    }
    assert_eq!(result_ids(&s.messages[6]), ["toolu_03"]);
    assert!(
        matches!(&s.messages[5].blocks[0], Block::Thinking { opaque_len, .. } if *opaque_len == "c2lnbmF0dXJl".len())
    );
    assert_eq!(s.tool_call_count(), 3);

    // Usage: ui request 1, then (the failed request skipped) request 3; the last
    // assistant message has its own metrics (prompt 7, cached 4000), which agree
    // with request 4, so they take its read/write split.
    assert_eq!(s.calls.len(), 3);
    assert_eq!(split(&s), [(10, 0, 3000, 100), (5, 3000, 200, 50), (7, 3900, 100, 40)]);
    assert_eq!(prompts(&s), [3010, 3205, 4007]);
    assert!(s.calls.iter().all(|c| c.usage.unwrap().provenance == UsageProvenance::Cline));
    assert_eq!(s.calls[2].model.as_deref(), Some("claude-opus-4-5"));
    assert_eq!(s.calls[0].timestamp, Some(1_730_000_001_000));
    assert_eq!(s.stats.records, 6);
    assert_eq!(s.stats.usage_records, 3);

    assert_eq!(s.errors.len(), 1);
    assert_eq!(s.errors[0].kind, ApiErrorKind::RateLimit);
    assert_eq!(s.errors[0].source_line, 3);
    assert!(s.diagnostics.messages.is_empty(), "{:?}", s.diagnostics.messages);
}

#[test]
fn without_ui_messages_calls_have_no_usage() {
    let dir = task_dir();
    let history = std::fs::read(dir.join("api_conversation_history.json")).unwrap();
    let s = read_history_bytes(&dir.join("api_conversation_history.json"), &history, None, None).remove(0);
    assert_eq!(s.id, "1730000000000");
    assert_eq!(s.calls.len(), 3);
    // Only the message carrying its own metrics has usage. Its previous call's
    // size is unknown, so nothing bounds the cache read: all 4000 read.
    assert_eq!(s.usage_count(), 1);
    let u = s.calls[2].usage.unwrap();
    assert_eq!((u.uncached_input, u.cache_read, u.cache_write, u.output), (7, 4000, 0, 40));
    assert!(warned(&s, "no ui_messages.json: 2 call(s) carry no usage"), "{:?}", s.diagnostics.messages);
    assert!(warned(&s, "1 call(s) report cached tokens without a cache read/write split"));
}

#[test]
fn xml_era_headers_without_tool_use_stay_text() {
    let data = br#"[
 {"role":"user","content":"<task>go</task>"},
 {"role":"assistant","content":"<read_file><path>a</path></read_file>"},
 {"role":"user","content":[{"type":"text","text":"[read_file for 'a'] Result:\nhello"},{"type":"text","text":"[ERROR] You did not use a tool"}]},
 {"role":"system","content":"?"}
]"#;
    let s = read_history_bytes(Path::new("/t/task-9"), data, Some(b"not json"), None).remove(0);
    assert_eq!(s.id, "task-9");
    assert_eq!(s.messages[2].origin, Origin::ToolResult);
    assert!(!s.messages[2].has_tool_results());
    assert_eq!(s.messages[3].origin, Origin::Injected);
    assert!(s.diagnostics.messages.iter().any(|d| d.message.contains("no tool_use to answer")));
    assert!(s.diagnostics.messages.iter().any(|d| d.message.contains("ui_messages.json is unreadable")));
    assert_eq!(s.diagnostics.unknown_kinds.get("role:system"), Some(&1));
}

/// A whole task's history is one JSON document: half an emoji anywhere in it
/// (a lone surrogate escape, as JavaScript writes one) must not lose it all,
/// nor the UI messages' usage.
#[test]
fn a_lone_surrogate_does_not_lose_the_task() {
    let history =
        br#"[{"role":"user","content":"<task>fix \ud83d</task>"},{"role":"assistant","content":"ok \udc00"}]"#;
    let ui = br#"[{"ts":1,"type":"say","say":"api_req_started","text":"{\"request\":\"x \\ud83d\",\"tokensIn\":120,\"tokensOut\":7}"}]"#;
    let s = read_history_bytes(Path::new("/t/task-7"), history, Some(ui), None).remove(0);
    assert_eq!(s.diagnostics.bad_lines, 0, "{:?}", s.diagnostics.messages);
    assert_eq!(s.messages.len(), 2);
    assert!(
        s.diagnostics.messages.iter().all(|d| !d.message.contains("ui_messages.json")),
        "{:?}",
        s.diagnostics.messages
    );
    assert_eq!(s.calls.first().and_then(|c| c.usage.as_ref()).map(|u| u.uncached_input), Some(120));
}

#[test]
fn invalid_history_yields_a_reported_session() {
    let s = read_history_bytes(Path::new("/t/task-1"), b"[{\"role\":\"user\",\"content\":", None, None).remove(0);
    assert!(s.messages.is_empty());
    assert_eq!(s.diagnostics.bad_lines, 1);
    let s = read_history_bytes(Path::new("/t/task-1"), b"{}", None, None).remove(0);
    assert_eq!(s.diagnostics.bad_lines, 1);
    let err = read_task_dir(Path::new("/definitely/not/here")).unwrap_err();
    assert!(err.message.contains("cannot read"));
}

#[test]
fn result_header_shapes() {
    assert_eq!(result_header("[read_file for 'a.rs'] Result:"), Some(("read_file", "")));
    assert_eq!(result_header("[attempt_completion] Result:\nok"), Some(("attempt_completion", "ok")));
    assert_eq!(result_header("[execute_command for 'ls [x]'] Result:"), Some(("execute_command", "")));
    assert_eq!(result_header("[link](http://x) Result:"), None);
    assert_eq!(result_header("no header"), None);
}

fn read_fixture(id: &str) -> Session {
    let dir = fixtures_dir().join("cline").join(id);
    let (inputs, _) = crate::read::discover(std::slice::from_ref(&dir));
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].kind, crate::read::InputKind::Folder(Format::Cline));
    crate::read::read_input(&inputs[0], None).unwrap().remove(0)
}

/// Newer Cline with only `metrics.tokens` (no ui_messages.json): `prompt` is the
/// uncached input and `cached` (writes + reads) comes on top of it, split by the
/// inference of `MetricsTokens::usage`.
#[test]
fn metrics_tokens_only_task() {
    let s = read_fixture("1730000100000");
    assert_eq!(s.calls.len(), 4);
    assert_eq!(s.tool_call_count(), 4);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/tool"));
    // First call: nothing of the task is cached yet, so all of `cached` is a
    // write; later calls read at most the previous call's prompt, and write the
    // rest.
    assert_eq!(split(&s), [(12, 0, 9600, 310), (8, 9612, 738, 120), (6, 10358, 662, 95), (9, 11026, 774, 60)]);
    assert_eq!(prompts(&s), [9612, 10358, 11026, 11809]);
    assert!(s.calls.iter().all(|c| c.usage.unwrap().provenance == UsageProvenance::Cline));
    assert_eq!(s.calls[0].timestamp, Some(1_730_000_104_000));
    assert_eq!(s.stats.usage_records, 4);
    // The inferred split is reported; the missing ui_messages.json costs no
    // usage, so it is not.
    assert_eq!(s.diagnostics.messages.len(), 1, "{:?}", s.diagnostics.messages);
    assert!(warned(&s, "4 call(s) report cached tokens without a cache read/write split"));
}

/// Newer Cline with both files: each message's metrics agree with its request's
/// `api_req_started`, whose read/write split wins. A request that failed and was
/// retried under the same `api_req_started` still pairs.
#[test]
fn metrics_tokens_with_ui_split_task() {
    let s = read_fixture("1730000200000");
    assert_eq!(s.calls.len(), 3);
    assert_eq!(split(&s), [(10, 0, 9500, 250), (4, 9500, 640, 180), (7, 10140, 410, 90)]);
    assert_eq!(prompts(&s), [9510, 10144, 10557]);
    assert_eq!(s.calls[1].timestamp, Some(1_730_000_209_000));
    assert_eq!(s.stats.usage_records, 3);
    assert_eq!(s.errors.len(), 1);
    assert_eq!(s.errors[0].source_line, 3);
    // Usage whose messages this history lacks is said, not paired: requests a
    // checkpoint restore deleted (12 + 800 + 9,000 in, 300 out), a sub-agent's.
    let notes: Vec<&str> = s.diagnostics.messages.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(warned(&s, "usage of 1 request(s) deleted by a checkpoint restore (9,812 input, 300 output tokens)"));
    assert!(warned(&s, "usage of 1 sub-agent run(s) (17,040 input, 700 output tokens) whose messages"));

    // Without the split the prompt sizes are the same; only the split is inferred.
    let dir = fixtures_dir().join("cline").join("1730000200000");
    let history = std::fs::read(dir.join("api_conversation_history.json")).unwrap();
    let alone = read_history_bytes(&dir, &history, None, None).remove(0);
    assert_eq!(prompts(&alone), [9510, 10144, 10557]);
    assert_eq!(split(&alone)[1], (4, 9510, 630, 180));
}

/// The issue's shape: a long task whose every prompt is 10 uncached tokens on
/// top of a growing cache. Its largest prompt is the cache plus 10, not 10.
#[test]
fn a_long_metrics_task_reports_its_real_prompt_sizes() {
    let mut history = vec![serde_json::json!({"role": "user", "content": "<task>go</task>"})];
    for k in 0..47u64 {
        history.push(serde_json::json!({
            "role": "assistant",
            "content": [{"type": "text", "text": format!("step {k}")}],
            "metrics": {"tokens": {"prompt": 10, "completion": 50, "cached": 9000 + 500 * k}},
        }));
        history.push(serde_json::json!({"role": "user", "content": "<environment_details>\n</environment_details>"}));
    }
    let data = serde_json::to_vec(&history).unwrap();
    let s = read_history_bytes(Path::new("/t/long"), &data, None, None).remove(0);
    assert_eq!(s.calls.len(), 47);
    let max_prompt = s.calls.iter().map(|c| c.usage.unwrap().prompt_tokens()).max();
    assert_eq!(max_prompt, Some(10 + 9000 + 500 * 46));
    let read: u64 = s.calls.iter().map(|c| c.usage.unwrap().cache_read).sum();
    let written: u64 = s.calls.iter().map(|c| c.usage.unwrap().cache_write).sum();
    let cached: u64 = (0..47).map(|k| 9000 + 500 * k).sum();
    assert_eq!(read + written, cached);
    assert!(read > cached * 9 / 10, "a running task mostly re-reads its cache: {read} of {cached}");
}

/// Times in the inline tasks below are milliseconds after this.
const T0: i64 = 1_730_000_000_000;

/// An assistant message stored at `T0 + ts`, with `metrics.tokens` when given.
fn turn(ts: i64, metrics: Option<(u64, u64, u64)>) -> serde_json::Value {
    let mut m = serde_json::json!({"role": "assistant", "content": "ok", "ts": T0 + ts});
    if let Some((prompt, completion, cached)) = metrics {
        m["metrics"] = serde_json::json!({"tokens": {"prompt": prompt, "completion": completion, "cached": cached}});
    }
    m
}

/// An `api_req_started` at `T0 + ts` with its split.
fn started(ts: i64, tokens_in: u64, out: u64, writes: u64, reads: u64) -> serde_json::Value {
    let text = serde_json::json!({"tokensIn": tokens_in, "tokensOut": out, "cacheWrites": writes, "cacheReads": reads});
    serde_json::json!({"ts": T0 + ts, "type": "say", "say": "api_req_started", "text": text.to_string()})
}

fn read_pair(history: &[serde_json::Value], ui: &[serde_json::Value]) -> Session {
    let history = serde_json::to_vec(history).unwrap();
    let ui = serde_json::to_vec(ui).unwrap();
    read_history_bytes(Path::new("/t/task-p"), &history, Some(&ui), None).remove(0)
}

/// An extra request with tokens between two messages (a request that produced
/// no message) is passed over: the later message still gets its own request.
#[test]
fn an_extra_request_does_not_shift_later_calls() {
    let user = serde_json::json!({"role": "user", "content": "<task>go</task>"});
    let history = [user.clone(), turn(2000, Some((10, 100, 5000))), user, turn(6000, Some((3, 60, 5400)))];
    let ui = [started(1000, 10, 100, 5000, 0), started(3000, 9, 0, 0, 5000), started(4000, 3, 60, 300, 5100)];
    let s = read_pair(&history, &ui);
    assert_eq!(split(&s), [(10, 0, 5000, 100), (3, 5100, 300, 60)]);
    assert!(warned(&s, "1 completed api request(s) in ui_messages.json pair with no assistant message"));
    assert_eq!(s.diagnostics.messages.len(), 1, "{:?}", s.diagnostics.messages);
}

/// Metrics that no request agrees with are kept (the message carries them
/// itself), with the split inferred, and both disagreements are reported.
#[test]
fn disagreeing_counts_keep_the_messages_own_metrics() {
    let user = serde_json::json!({"role": "user", "content": "<task>go</task>"});
    let history = [user.clone(), turn(2000, Some((10, 100, 5000))), user, turn(6000, Some((3, 60, 5400)))];
    let ui = [started(1000, 0, 0, 0, 0), started(4000, 3, 60, 300, 5100)];
    let s = read_pair(&history, &ui);
    assert_eq!(split(&s), [(10, 0, 5000, 100), (3, 5100, 300, 60)]);
    assert!(warned(&s, "1 assistant message(s) have metrics.tokens that no api_req_started"));
    assert!(warned(&s, "1 call(s) report cached tokens without a cache read/write split"));
    assert!(warned(&s, "1 completed api request(s) in ui_messages.json pair with no assistant message"));
}

/// Older Cline (no metrics) pairs in order, but never with a request that
/// started after the message was stored; what is left over is reported.
#[test]
fn order_pairing_skips_a_request_started_after_the_message() {
    let user = serde_json::json!({"role": "user", "content": "<task>go</task>"});
    let history = [user.clone(), turn(2000, None), user, turn(6000, None)];
    let ui = [started(3000, 4, 40, 0, 900)];
    let s = read_pair(&history, &ui);
    assert_eq!(s.calls[0].usage, None);
    assert_eq!(s.calls[1].usage.map(|u| u.prompt_tokens()), Some(904));
    assert_eq!(s.calls[1].timestamp, Some(T0 + 6000));
    assert!(warned(&s, "1 assistant message(s) have neither metrics.tokens nor an api_req_started"));
    // Without times, the same request pairs with the first message, in order.
    let history = [turn(0, None), turn(0, None)].map(|mut m| {
        m.as_object_mut().unwrap().remove("ts");
        m
    });
    let s = read_pair(&history, &[started(3000, 4, 40, 0, 900)]);
    assert_eq!(s.calls[0].usage.map(|u| u.prompt_tokens()), Some(904));
    assert_eq!(s.calls[0].timestamp, Some(T0 + 3000));
    assert_eq!(s.calls[1].usage, None);
}

/// A provider whose handler counts the cache inside `tokensIn` too: said, with
/// the requests that recorded cache, whichever file names the provider.
#[test]
fn a_provider_that_counts_the_cache_in_its_input_is_said_to() {
    let user = serde_json::json!({"role": "user", "content": "<task>go</task>"});
    let with = |provider: &str| {
        let mut t = turn(2000, None);
        t["modelInfo"] = serde_json::json!({"modelId": "m", "providerId": provider, "mode": "act"});
        t
    };
    let ui = |reads: u64| [started(1000, 900, 10, 0, reads)];
    let warned_of = |s: &Session| s.diagnostics.messages.iter().filter(|d| d.message.starts_with("Cline's ")).count();
    let s = read_pair(&[user.clone(), with("litellm")], &ui(600));
    assert_eq!(warned_of(&s), 1);
    assert!(warned(&s, "Cline's `litellm` provider reports"), "{:?}", s.diagnostics.messages);
    assert!(warned(&s, "the prompt sizes of 1 request(s) that recorded cache tokens may count them twice"));
    // Another provider, or no cache recorded: nothing to say.
    assert_eq!(warned_of(&read_pair(&[user.clone(), with("anthropic")], &ui(600))), 0);
    assert_eq!(warned_of(&read_pair(&[user.clone(), with("openai")], &ui(0))), 0);
    // Named by the task's metadata alone.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(HISTORY), serde_json::to_vec(&[user, turn(2000, None)]).unwrap()).unwrap();
    std::fs::write(dir.path().join("ui_messages.json"), serde_json::to_vec(&ui(600)).unwrap()).unwrap();
    let meta = serde_json::json!({"model_usage": [{"ts": T0, "model_id": "grok-4", "model_provider_id": "xai", "mode": "act"}]});
    std::fs::write(dir.path().join("task_metadata.json"), meta.to_string()).unwrap();
    let s = read_task_dir(dir.path()).unwrap().remove(0);
    assert_eq!(warned_of(&s), 1);
    assert!(warned(&s, "Cline's `xai` provider reports"));
}
