//! Robustness of the Claude Code reader: the typed fast path reads every
//! line exactly as the `Value` path does, odd records included, and never panics.

use super::tests::fixture;
use super::*;
use crate::testing::{corpus_dir, fixtures_dir};

/// Every line of every fixture file, as raw bytes.
fn fixture_lines() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(fixtures_dir().join("claude-code")).into_iter().flatten() {
        if entry.path().extension().is_some_and(|e| e == "jsonl") {
            let data = std::fs::read(entry.path()).unwrap();
            out.extend(data.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec));
        }
    }
    out
}

/// Whatever the input, reading returns at least one session and never panics,
/// and the typed fast path reads it exactly as the `Value` path does.
pub(super) fn read_any(path: &str, data: &[u8]) {
    let mut sessions = read(Path::new(path), data);
    assert_eq!(sessions, read_with(Path::new(path), data, false), "typed and Value paths differ");
    assert!(!sessions.is_empty());
    let records: u64 = sessions.iter().map(|s| s.stats.records).sum();
    assert_eq!(records, crate::read::lines(data).count() as u64);
    link_across_files(&mut sessions);
}

/// The typed fast path against the `Value` path on every fixture and every
/// corpus file (whatever its format: a foreign file exercises the fallbacks).
#[test]
fn typed_fast_path_reads_every_file_like_the_value_path() {
    let mut dirs = vec![fixtures_dir()];
    dirs.extend(corpus_dir());
    let mut n = 0;
    for dir in dirs {
        for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
            if entry.path().extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let data = std::fs::read(entry.path()).unwrap();
            let fast = read(entry.path(), &data);
            assert_eq!(fast, read_with(entry.path(), &data, false), "{}", entry.path().display());
            n += 1;
        }
    }
    assert!(n >= 20, "only {n} files");
}

/// The fast path is the one taken: every line of a synthetic session and of the
/// real Claude Code corpus parses typed (a regression here would not change any
/// output, only make reading several times slower).
#[test]
fn typed_fast_path_covers_real_and_synthetic_logs() {
    let synth = crate::synth::generate_session(&crate::synth::SessionSpec::turns(7, 40)).data;
    let mut files = vec![("synthetic".to_string(), synth)];
    if let Some(dir) = corpus_dir() {
        for e in std::fs::read_dir(dir.join("claude-code")).unwrap().flatten() {
            files.push((e.path().display().to_string(), std::fs::read(e.path()).unwrap()));
        }
    }
    for (name, data) in &files {
        let lines: Vec<_> = crate::read::raw_lines(data).collect();
        let typed = lines.iter().filter(|l| rec::Rec::typed(l.number, l.text).is_some()).count();
        let valid = lines.iter().filter(|l| crate::read::parse_line(l.text).is_ok()).count();
        assert_eq!(typed, valid, "{name}: {} of {valid} valid lines need the Value path", valid - typed);
    }
}

/// Record fragments in every shape the typed structs must either read like the
/// `Value` path or hand over to it: wrong types, nulls, duplicate keys, arrays
/// where objects belong, unknown and incomplete blocks.
const ODD_BLOCKS: &[&str] = &[
    r#"{"type":"text","text":"hello\nworld"}"#,
    r#"{"type":"text"}"#,
    r#"{"type":"text","text":5}"#,
    r#"{"text":"no type"}"#,
    r#"{"type":"text","text":"a","text":"b"}"#,
    r#"{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}"#,
    r#"{"type":"tool_use","id":"t1","name":"Bash","input":null}"#,
    r#"{"type":"tool_use","name":"Read"}"#,
    r#"{"type":"tool_use","id":7,"name":"Read","input":[1]}"#,
    r#"{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"out"}],"is_error":true}"#,
    r#"{"type":"tool_result","tool_use_id":"t1","content":"plain","is_error":"yes"}"#,
    r#"{"type":"tool_result","tool_use_id":"t1","content":{"odd":1}}"#,
    r#"{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"tool_reference","name":"x"}]}"#,
    r#"{"type":"image","source":{"media_type":"image/jpeg","url":"https://x/y.jpg","data":null}}"#,
    r#"{"type":"image","source":["not","an","object"]}"#,
    r#"{"type":"thinking","thinking":"hmm","signature":"c2ln"}"#,
    r#"{"type":"thinking","signature":"c2ln"}"#,
    r#"{"type":"redacted_thinking","data":"zzzz"}"#,
    r#"{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}"#,
    r#""a bare string""#,
    r#"42"#,
    r#"null"#,
];

const ODD_CONTENT: &[&str] = &[r#""text content""#, "null", "5", r#"{"type":"text","text":"obj"}"#, "[]"];

const ODD_FIELDS: &[&str] = &[
    r#""uuid":"u1""#,
    r#""uuid":"u2","parentUuid":"u1""#,
    r#""uuid":5"#,
    r#""uuid":"""#,
    r#""parentUuid":null"#,
    r#""sessionId":"s-1""#,
    r#""timestamp":"2025-09-25T01:22:20.083Z""#,
    r#""timestamp":1765233665"#,
    r#""timestamp":-3.5"#,
    r#""timestamp":true"#,
    r#""timestamp":{"a":1}"#,
    r#""isSidechain":true,"agentId":"a1""#,
    r#""isSidechain":"yes""#,
    r#""isMeta":true"#,
    r#""isCompactSummary":true"#,
    r#""isApiErrorMessage":false"#,
    r#""error":null"#,
    r#""error":"rate_limit""#,
    r#""apiErrorStatus":429"#,
    r#""apiErrorStatus":429.0"#,
    r#""subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":1234.5}"#,
    r#""attachment":{"type":"file","path":"/a"}"#,
    r#""cwd":"/home/x","version":"2.0.1""#,
    r#""toolUseResult":{"stdout":"ignored","big":[1,2,3]}"#,
];

const ODD_MESSAGES: &[&str] = &[
    r#""message":null"#,
    r#""message":["role","user"]"#,
    r#""message":{"role":"assistant","id":"m1","model":"claude-x","usage":{"input_tokens":10,"output_tokens":2.7,"cache_read_input_tokens":"3","cache_creation_input_tokens":null,"server_tool_use":{"web":1}}}"#,
    r#""message":{"id":"m1","model":"<synthetic>"}"#,
    r#""message":{"id":5,"model":"m","usage":7}"#,
    r#""message":{"id":"m2","usage":null}"#,
];

fn odd_record(kind: &str, fields: &[usize], message: usize, content: Option<Result<usize, Vec<usize>>>) -> String {
    let mut parts = vec![format!(r#""type":"{kind}""#)];
    parts.extend(fields.iter().map(|&i| ODD_FIELDS[i].to_string()));
    let msg = ODD_MESSAGES[message];
    let content = match content {
        None => None,
        Some(Ok(c)) => Some(ODD_CONTENT[c].to_string()),
        Some(Err(blocks)) => Some(format!("[{}]", blocks.iter().map(|&b| ODD_BLOCKS[b]).collect::<Vec<_>>().join(","))),
    };
    match (msg.strip_suffix('}'), content) {
        (Some(open), Some(c)) if msg.contains('{') => parts.push(format!(r#"{open},"content":{c}}}"#)),
        _ => parts.push(msg.to_string()),
    }
    format!("{{{}}}", parts.join(","))
}

mod robustness {
    use super::*;
    use proptest::prelude::*;
    use proptest::sample::Index;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn odd_records_read_the_same_on_both_paths(
            records in proptest::collection::vec((
                prop_oneof![Just("user"), Just("assistant"), Just("system"), Just("attachment"), Just("summary"), Just("weird")],
                proptest::collection::vec(0..ODD_FIELDS.len(), 0..5),
                0..ODD_MESSAGES.len(),
                proptest::option::of(prop_oneof![
                    (0..ODD_CONTENT.len()).prop_map(Ok),
                    proptest::collection::vec(0..ODD_BLOCKS.len(), 0..4).prop_map(Err),
                ]),
            ), 1..12),
        ) {
            let data: String = records
                .iter()
                .map(|(kind, fields, message, content)| odd_record(kind, fields, *message, content.clone()) + "\n")
                .collect();
            read_any("x.jsonl", data.as_bytes());
            read_any("agent-a1.jsonl", data.as_bytes());
        }

        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
            read_any("x.jsonl", &data);
            read_any("agent-a1.jsonl", &data);
        }

        #[test]
        fn mutated_real_lines_never_panic(
            picks in proptest::collection::vec((any::<Index>(), 0u8..6, any::<Index>(), any::<u8>()), 1..24),
        ) {
            let lines = fixture_lines();
            let mut data = Vec::new();
            for (pick, op, at, byte) in picks {
                let mut line = pick.get(&lines).clone();
                let i = at.index(line.len().max(1));
                match op {
                    0 => line.truncate(i),
                    1 => if let Some(b) = line.get_mut(i) { *b = byte },
                    2 => line.insert(i.min(line.len()), byte),
                    3 if i < line.len() => { line.remove(i); }
                    // Cross-wire DAG links: every uuid becomes a parent of itself.
                    4 => line = String::from_utf8_lossy(&line).replace("\"parentUuid\":\"", "\"parentUuid\":\"u-").into_bytes(),
                    _ => {}
                }
                data.extend_from_slice(&line);
                data.push(b'\n');
            }
            read_any("x.jsonl", &data);
            read_any("agent-aside_question-1.jsonl", &data);
        }
    }

    /// The whole fixture set shuffled into one file, then every line reversed in
    /// order: DAG ordering must still hold parent before child.
    #[test]
    fn reversed_fixture_lines_keep_parents_first() {
        let mut lines = fixture_lines();
        lines.reverse();
        let data = lines.join(&b'\n');
        read_any("x.jsonl", &data);
        let merge = std::fs::read(fixture("merge-blocks.jsonl")).unwrap();
        let mut rev: Vec<&[u8]> = merge.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
        rev.reverse();
        let s = &read(Path::new("rev.jsonl"), &rev.join(&b'\n'))[0];
        let lines: Vec<u64> = s.messages.iter().map(|m| m.source_line).collect();
        // Reversed file: the root is the last line (8); the merged response sits
        // where its first block-line is in DAG order, its blocks in DAG order.
        assert_eq!(s.messages.len(), 5);
        assert_eq!(lines[0], 8);
        assert_eq!(s.calls[0].usage.unwrap().output, 366);
        let m = &s.messages[1];
        assert!(matches!(m.blocks[0], Block::Thinking { .. }), "blocks in DAG order, not file order");
        assert_eq!(m.tool_uses().map(|(_, n, _)| n).collect::<Vec<_>>(), ["Read", "Bash"]);
    }
}

/// A line that is not UTF-8 never takes the typed path, wherever its bad
/// bytes are (a field it reads, a field it skips, a key), and reads as the
/// `Value` path reads it: a malformed record, reported. A UTF-8 line with
/// escapes and non-ASCII text does take it.
#[test]
fn a_line_that_is_not_utf8_is_left_to_the_value_path() {
    let lines: [&[u8]; 3] = [
        b"{\"type\":\"user\",\"uuid\":\"u1\",\"junk\":\"\xff\xfe\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}",
        b"{\"type\":\"user\",\"uuid\":\"u1\",\"message\":{\"role\":\"user\",\"content\":\"h\xffi\"}}",
        b"{\"type\":\"user\",\"uuid\":\"u1\",\"k\xff\":1,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}",
    ];
    for line in lines {
        assert!(rec::Rec::typed(1, line).is_none());
        assert!(crate::read::parse_line(line).is_err());
        read_any("x.jsonl", line);
    }
    let good = r#"{"type":"user","uuid":"u1","message":{"role":"user","content":"h\u00e9 \"q\" é"}}"#;
    assert!(rec::Rec::typed(1, good.as_bytes()).is_some());
}

/// A field the reader skips is not decoded on the fast path: what it holds
/// cannot cost the record. Half an emoji there reads the same on both paths
/// (the `Value` path repairs it); a number beyond `f64` or nesting deeper
/// than 128 only the fast path accepts.
#[test]
fn what_a_skipped_field_holds_does_not_cost_the_record() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let record = |skipped: &str| {
        format!(
            r#"{{"type":"user","uuid":"u1","sessionId":"s1","toolUseResult":{skipped},"message":{{"role":"user","content":"hi"}}}}"#
        )
    };
    let half = record(r#""cut \ud83d""#);
    assert!(rec::Rec::typed(1, half.as_bytes()).is_some());
    let path = Path::new("s1.jsonl");
    assert_eq!(read_with(path, half.as_bytes(), true), read_with(path, half.as_bytes(), false));
    for odd in [record("1e400"), record(&deep)] {
        assert!(rec::Rec::typed(1, odd.as_bytes()).is_some(), "{odd:.80}");
        assert!(crate::read::parse_line(odd.as_bytes()).is_err(), "{odd:.80}");
        let s = &read_with(path, odd.as_bytes(), true)[0];
        assert_eq!((s.messages.len(), s.diagnostics.bad_lines), (1, 0));
    }
}
