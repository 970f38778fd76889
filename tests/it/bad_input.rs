//! Hostile and broken inputs through the real `compactor inspect` and `compactor
//! replay` binaries (and the library where that is simpler): each bad file is
//! read next to a good session, and every test checks, for both commands, that
//! nothing panics, memory stays bounded, the diagnostic names the file (and the
//! line, when a line is at fault) without quoting content, and the good session
//! is still reported — one bad file never costs the batch. `replay` must also
//! exit 0 and write every output (report.json, the CSVs, report.md, the good
//! session's transcript).
//!
//! The big inputs are generated at test time into a temporary directory. Their
//! default sizes keep a debug build under ~20 s per test; the full sizes of the
//! reliability issue (a 200 MB line, a million messages) run with
//! `COMPACTOR_BIG_INPUTS=1`, best in release (`cargo test --release --test
//! bad_input`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use assert_cmd::cargo::cargo_bin_cmd;
use compactor::inspect::InspectReport;
use compactor::model::Format;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Text planted in bad inputs: no diagnostic may quote it.
const SECRET: &str = "sk-ant-SECRETCANARY";

fn big_inputs() -> bool {
    std::env::var("COMPACTOR_BIG_INPUTS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// A good generic session next to the bad input; its session id is `good`.
fn write_good(dir: &Path) -> PathBuf {
    let p = dir.join("good.jsonl");
    std::fs::write(&p, "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"hello\"}\n")
        .unwrap();
    p
}

struct Run {
    report: InspectReport,
    /// stderr of `compactor inspect`.
    stderr: String,
    /// stderr of `compactor replay` on the same inputs.
    replay_stderr: String,
}

impl Run {
    /// Both commands printed the diagnostic (see [`has_diag`]).
    fn diag(&self, path: &Path, line: u64, what: &str) -> bool {
        let inspect = has_diag(&self.stderr, path, line, what);
        let replay = has_diag(&self.replay_stderr, path, line, what);
        assert_eq!(
            inspect,
            replay,
            "inspect and replay disagree on {}:{line} {what}:\n{}",
            path.display(),
            tail(&self.replay_stderr)
        );
        inspect
    }
}

/// `compactor inspect --json BAD good.jsonl` under a data-size limit of
/// `limit_mb` (RLIMIT_DATA, through the shell's `ulimit -d`): an allocation past
/// it fails and the process aborts, so a passing run proves the bound.
fn inspect_with_limit(bad: &[&Path], good: &Path, limit_mb: u64) -> Run {
    let bin = assert_cmd::cargo::cargo_bin!("compactor");
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -d {} && exec \"$0\" \"$@\"", limit_mb * 1024))
        .arg(bin)
        .args(["inspect", "--json", "--jobs", "2"])
        .args(bad)
        .arg(good);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "panic:\n{stderr}");
    assert_eq!(out.status.code(), Some(0), "exit status {:?}, stderr:\n{}", out.status, tail(&stderr));
    assert!(!stderr.contains("SECRETCANARY"), "a diagnostic quotes content:\n{}", tail(&stderr));
    let report: InspectReport = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report.sessions.iter().any(|s| s.id == "good" && s.source_path == good),
        "the good session is missing next to {bad:?}"
    );
    let replay_stderr = replay_with_limit(bad, good, limit_mb);
    Run { report, stderr, replay_stderr }
}

/// `compactor replay --out OUT BAD good.jsonl` under the same limit: exit 0, no
/// panic, no quoted content, every output written, the good session replayed
/// (the rest of the batch is never lost to a bad file). Returns stderr.
fn replay_with_limit(bad: &[&Path], good: &Path, limit_mb: u64) -> String {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out");
    let bin = assert_cmd::cargo::cargo_bin!("compactor");
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -d {} && exec \"$0\" \"$@\"", limit_mb * 1024))
        .arg(bin)
        .args(["replay", "--jobs", "2", "--out"])
        .arg(&out)
        .args(bad)
        .arg(good);
    let o = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "replay panicked:\n{stderr}");
    assert_eq!(o.status.code(), Some(0), "replay exit status {:?}, stderr:\n{}", o.status, tail(&stderr));
    assert!(!stderr.contains("SECRETCANARY"), "a replay diagnostic quotes content:\n{}", tail(&stderr));
    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let row = report.sessions.iter().find(|r| r.session_id == "good" && Path::new(&r.source_path) == good);
    let row = row.unwrap_or_else(|| panic!("replay lost the good session next to {bad:?}"));
    assert!(row.error.is_none() && row.metrics.calls == 1, "{row:?}");
    for name in ["sessions.csv", "calls.csv", "report.md"] {
        assert!(out.join(name).is_file(), "replay did not write {name}");
    }
    let transcripts = out.join("transcripts").join(&report.policies[0].name);
    assert!(transcripts.join("good.jsonl").is_file(), "no transcript of the good session");
    stderr
}

fn inspect(bad: &[&Path], good: &Path) -> Run {
    inspect_with_limit(bad, good, 1024)
}

fn tail(s: &str) -> &str {
    let start = s.len().saturating_sub(2000);
    let mut i = start;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

/// stderr has a `path:line: …` (line > 0) or `path: …` (line 0) diagnostic
/// containing `what`.
fn has_diag(stderr: &str, path: &Path, line: u64, what: &str) -> bool {
    let prefix = if line > 0 { format!("{}:{line}: ", path.display()) } else { format!("{}: ", path.display()) };
    stderr.lines().any(|l| l.starts_with(&prefix) && l.contains(what))
}

fn session<'r>(r: &'r InspectReport, path: &Path) -> &'r compactor::inspect::SessionReport {
    r.sessions.iter().find(|s| s.source_path == path).unwrap_or_else(|| panic!("no session of {}", path.display()))
}

#[test]
fn empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let bad = dir.path().join("empty.jsonl");
    std::fs::write(&bad, "").unwrap();
    let blank = dir.path().join("blank.jsonl");
    std::fs::write(&blank, "\n \r\n\t\n").unwrap();
    let run = inspect(&[&bad, &blank], &good);
    assert!(run.diag(&bad, 0, "empty file"), "{}", run.stderr);
    assert!(run.diag(&blank, 0, "empty file"), "{}", run.stderr);
    assert_eq!(run.report.totals.inputs_failed, 2);
}

#[test]
fn binary_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let bad = dir.path().join("garbage.jsonl");
    // A fixed pseudo-random stream (xorshift), NULs and high bytes included.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let bytes: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&bad, bytes).unwrap();
    let run = inspect(&[&bad], &good);
    assert!(run.diag(&bad, 0, "no known session-log format"), "{}", run.stderr);
    // Forced, the reader reports line by line instead of failing the file.
    let sessions = compactor::read::read_bytes(&bad, &std::fs::read(&bad).unwrap(), Some(Format::ClaudeCode)).unwrap();
    assert!(sessions[0].diagnostics.bad_lines > 0);
}

#[test]
fn non_utf8_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let bad = dir.path().join("latin1.jsonl");
    let mut data = Vec::new();
    data.extend_from_slice(b"{\"role\":\"user\",\"content\":\"caf\xe9 ");
    data.extend_from_slice(SECRET.as_bytes());
    data.extend_from_slice(
        b"\"}\n{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"assistant\",\"content\":\"\xff\xfe\"}\n",
    );
    std::fs::write(&bad, data).unwrap();
    let run = inspect(&[&bad], &good);
    assert!(run.diag(&bad, 1, "malformed JSON record"), "{}", run.stderr);
    assert!(run.diag(&bad, 3, "malformed JSON record"), "{}", run.stderr);
    assert_eq!(session(&run.report, &bad).counts.messages, 1);
}

/// One line of `mb` MB: a Claude user record whose text is the whole line.
fn write_big_line(path: &Path, mb: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(
        f,
        "{{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"sessionId\":\"big\",\"message\":{{\"role\":\"user\",\"content\":\"{SECRET} "
    )
    .unwrap();
    // Words, so tokenizers see realistic pre-tokens rather than one giant run.
    let chunk = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod ".repeat(1000);
    let mut left = mb << 20;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk.as_bytes()[..n]).unwrap();
        left -= n;
    }
    writeln!(f, "\"}}}}").unwrap();
}

/// A single 200 MB line (20 MB by default, see the file header): read, counted,
/// reported, in bounded memory (a few copies of the line at most).
#[test]
fn huge_single_line() {
    let mb = if big_inputs() { 200 } else { 20 };
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let bad = dir.path().join("big.jsonl");
    write_big_line(&bad, mb);
    // Not JSON at all: the same size of bytes on one line.
    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, "x".repeat(mb << 20)).unwrap();
    let started = Instant::now();
    let run = inspect_with_limit(&[&bad, &junk], &good, (mb as u64) * 8 + 512);
    let s = session(&run.report, &bad);
    assert_eq!(s.counts.messages, 1);
    assert!(s.counts.context["text:user"].bytes >= (mb as u64) << 20);
    assert!(run.diag(&junk, 0, "no known session-log format"), "{}", run.stderr);
    eprintln!("{mb} MB line: {:.1?}", started.elapsed());
}

#[test]
fn deeply_nested_json() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let bad = dir.path().join("nested.jsonl");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    // Just inside serde_json's depth limit (128): parsed and kept.
    let inside = format!("{}1{}", "[".repeat(120), "]".repeat(120));
    let lines = [
        "{\"role\":\"user\",\"content\":\"first\"}".to_string(),
        deep.clone(),
        format!("{{\"role\":\"user\",\"content\":{deep}}}"),
        format!(
            "{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":{inside}}}]}}"
        ),
        "{\"role\":\"assistant\",\"content\":\"last\"}".to_string(),
    ];
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let run = inspect(&[&bad], &good);
    for line in [2, 3] {
        assert!(run.diag(&bad, line, "recursion limit"), "{}", run.stderr);
    }
    assert_eq!(session(&run.report, &bad).counts.messages, 3);
    // A whole-document format gets the same limit.
    let doc = dir.path().join("nested.json");
    std::fs::write(&doc, format!("{{\"sessionId\":\"s\",\"projectHash\":\"p\",\"messages\":{deep}}}")).unwrap();
    let run = inspect(&[&doc], &good);
    assert!(run.diag(&doc, 0, "recursion limit"), "{}", run.stderr);
}

#[test]
fn object_with_a_million_keys() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let bad = dir.path().join("keys.jsonl");
    let mut line = String::from("{\"role\":\"user\",\"content\":\"x\"");
    for i in 0..1_000_000 {
        line.push_str(&format!(",\"k{i}\":{i}"));
    }
    line.push('}');
    let tool_input = line.replacen("{\"role\":\"user\",\"content\":\"x\",", "{", 1);
    let assistant = format!(
        "{{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{{\"id\":\"c1\",\"function\":{{\"name\":\"big\",\"arguments\":{}}}}}]}}",
        serde_json::to_string(&tool_input).unwrap()
    );
    std::fs::write(&bad, format!("{line}\n{assistant}\n")).unwrap();
    let run = inspect(&[&bad], &good);
    let s = session(&run.report, &bad);
    assert_eq!(s.counts.messages, 2);
    assert_eq!(s.counts.tool_calls, 1);
}

#[test]
fn truncated_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let src = compactor::testing::fixtures_dir().join("codex/v077_exit_code.jsonl");
    let data = std::fs::read_to_string(src).unwrap();
    let n = data.lines().count() as u64;
    let bad = dir.path().join("torn.jsonl");
    std::fs::write(&bad, &data[..data.trim_end().len() - 20]).unwrap();
    let run = inspect(&[&bad], &good);
    assert!(run.diag(&bad, n, "truncated JSON record"), "{}", run.stderr);
    assert!(session(&run.report, &bad).counts.messages > 0);
}

/// A session of a million tiny messages (100,000 by default, see the header).
#[test]
fn a_million_tiny_messages() {
    let n = if big_inputs() { 1_000_000 } else { 100_000 };
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let bad = dir.path().join("many.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&bad).unwrap());
    for i in 0..n {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        writeln!(f, "{{\"role\":\"{role}\",\"content\":\"m{i}\"}}").unwrap();
    }
    drop(f);
    let started = Instant::now();
    let run = inspect_with_limit(&[&bad], &good, 2048);
    assert_eq!(session(&run.report, &bad).counts.messages, n);
    eprintln!("{n} messages: {:.1?}", started.elapsed());
}

#[test]
fn crlf_line_endings_and_bom() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let mut want = Vec::new();
    let mut bad = Vec::new();
    for (i, f) in
        ["claude-code/dag-order.jsonl", "codex/v0118_exec_command.jsonl", "pi/v3-tree.jsonl"].iter().enumerate()
    {
        let src = compactor::testing::fixtures_dir().join(f);
        let lf = std::fs::read_to_string(&src).unwrap();
        let plain = compactor::read::read_bytes(&src, lf.as_bytes(), None).unwrap();
        want.push(plain[0].messages.len() as u64);
        let crlf = dir.path().join(format!("crlf{i}.jsonl"));
        std::fs::write(&crlf, lf.replace('\n', "\r\n")).unwrap();
        let bom = dir.path().join(format!("bom{i}.jsonl"));
        std::fs::write(&bom, format!("\u{feff}{}", lf.replace('\n', "\r\n"))).unwrap();
        bad.push(crlf);
        bad.push(bom);
    }
    let paths: Vec<&Path> = bad.iter().map(PathBuf::as_path).collect();
    let run = inspect(&paths, &good);
    for (i, p) in bad.iter().enumerate() {
        assert_eq!(session(&run.report, p).counts.messages, want[i / 2], "{}", p.display());
        assert_eq!(session(&run.report, p).counts.diagnostics.bad_lines, 0, "{}", p.display());
    }
}

#[test]
fn duplicate_ids() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    // Claude: every record twice (a resumed file), and a uuid reused by another record.
    let claude = dir.path().join("dup-claude.jsonl");
    let rec = |uuid: &str, parent: &str, text: &str| {
        format!(
            "{{\"type\":\"user\",\"uuid\":\"{uuid}\",\"parentUuid\":{parent},\"sessionId\":\"d\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n"
        )
    };
    let body = rec("a", "null", "one") + &rec("b", "\"a\"", "two") + &rec("a", "\"b\"", "other");
    std::fs::write(&claude, body.repeat(3)).unwrap();
    // Codex: two tool calls and outputs with the same call id.
    let codex = dir.path().join("dup-codex.jsonl");
    let item =
        |p: &str| format!("{{\"timestamp\":\"2025-01-01T00:00:00Z\",\"type\":\"response_item\",\"payload\":{p}}}\n");
    let call = item("{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"shell\",\"arguments\":\"{}\"}");
    let out = item("{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":\"Exit code: 1\"}");
    std::fs::write(&codex, [call.clone(), out.clone(), call, out].concat()).unwrap();
    // pi: two entries with one id.
    let pi = dir.path().join("dup-pi.jsonl");
    std::fs::write(
        &pi,
        "{\"type\":\"session\",\"version\":3,\"id\":\"p\",\"cwd\":\"/\"}\n\
         {\"type\":\"message\",\"id\":\"1\",\"parentId\":null,\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n\
         {\"type\":\"message\",\"id\":\"1\",\"parentId\":null,\"message\":{\"role\":\"user\",\"content\":\"b\"}}\n\
         {\"type\":\"message\",\"id\":\"2\",\"parentId\":\"1\",\"message\":{\"role\":\"user\",\"content\":\"c\"}}\n",
    )
    .unwrap();
    let run = inspect(&[&claude, &codex, &pi], &good);
    let c = session(&run.report, &claude);
    assert_eq!(c.counts.messages, 2);
    assert_eq!(c.counts.diagnostics.skipped_kinds["duplicate-uuid"], 7);
    assert_eq!(session(&run.report, &codex).counts.tool_calls, 2);
    assert!(session(&run.report, &pi).counts.messages >= 1);
}

#[test]
fn tool_result_without_its_tool_use() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let bad = dir.path().join("orphan.jsonl");
    std::fs::write(
        &bad,
        "{\"type\":\"user\",\"uuid\":\"a\",\"parentUuid\":null,\"sessionId\":\"o\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"nowhere\",\"content\":\"out\"}]}}\n\
         {\"type\":\"user\",\"uuid\":\"b\",\"parentUuid\":\"a\",\"sessionId\":\"o\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"content\":[{\"type\":\"text\",\"text\":\"no id\"}]}]}}\n",
    )
    .unwrap();
    let run = inspect(&[&bad], &good);
    let s = session(&run.report, &bad);
    assert_eq!(s.counts.tool_results, 2);
    assert_eq!(s.counts.context["tool_result:?"].blocks, 2);
}

#[test]
fn cycle_in_parent_links() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let claude = dir.path().join("cycle.jsonl");
    let rec = |uuid: &str, parent: &str| {
        format!(
            "{{\"type\":\"user\",\"uuid\":\"{uuid}\",\"parentUuid\":\"{parent}\",\"sessionId\":\"c\",\"message\":{{\"role\":\"user\",\"content\":\"{uuid}\"}}}}\n"
        )
    };
    // a → c → b → a, and a self-parent.
    std::fs::write(&claude, rec("a", "c") + &rec("b", "a") + &rec("c", "b") + &rec("d", "d")).unwrap();
    let pi = dir.path().join("cycle-pi.jsonl");
    std::fs::write(
        &pi,
        "{\"type\":\"session\",\"version\":3,\"id\":\"p\",\"cwd\":\"/\"}\n\
         {\"type\":\"message\",\"id\":\"1\",\"parentId\":\"2\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n\
         {\"type\":\"message\",\"id\":\"2\",\"parentId\":\"1\",\"message\":{\"role\":\"user\",\"content\":\"b\"}}\n",
    )
    .unwrap();
    let run = inspect(&[&claude, &pi], &good);
    assert!(run.diag(&claude, 1, "parentUuid cycle"), "{}", run.stderr);
    assert_eq!(session(&run.report, &claude).counts.messages, 4);
    // pi follows the path back from the last entry: the cycle closes there.
    assert!(run.diag(&pi, 3, "cycle in the entry tree"), "{}", run.stderr);
}

/// FIFOs named like session files, and a Cline task whose sidecars are FIFOs:
/// opening one for reading would block forever.
#[test]
#[cfg(unix)]
fn fifos_are_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let mkfifo = |p: &Path| {
        let ok = std::process::Command::new("mkfifo").arg(p).status().is_ok_and(|s| s.success());
        assert!(ok, "mkfifo {}", p.display());
    };
    let walked = dir.path().join("walk");
    std::fs::create_dir(&walked).unwrap();
    mkfifo(&walked.join("pipe.jsonl"));
    let task = walked.join("task-1");
    std::fs::create_dir(&task).unwrap();
    std::fs::copy(
        compactor::testing::fixtures_dir().join("cline/1730000000000/api_conversation_history.json"),
        task.join("api_conversation_history.json"),
    )
    .unwrap();
    mkfifo(&task.join("ui_messages.json"));
    mkfifo(&task.join("task_metadata.json"));
    let explicit = dir.path().join("explicit.jsonl");
    mkfifo(&explicit);
    // Given by name, a FIFO is a path that names no log: a usage error.
    let mut cmd = cargo_bin_cmd!("compactor");
    cmd.args(["inspect", "--json"]).arg(&walked).arg(&explicit).arg(&good).timeout(Duration::from_secs(60));
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(has_diag(&stderr, &explicit, 0, "not a regular file"), "{stderr}");
    // Found in folders, FIFOs are passed over.
    let mut cmd = cargo_bin_cmd!("compactor");
    cmd.args(["inspect", "--json"]).arg(&walked).arg(&good).timeout(Duration::from_secs(60));
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: InspectReport = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.sessions.iter().any(|s| s.source_path == task));
    assert!(report.sessions.iter().any(|s| s.id == "good"));
}

/// Inputs whose naive handling is quadratic (each found by review): they must
/// stay fast. The sizes make a quadratic reader take minutes even in release,
/// while a linear one needs well under a second.
mod scaling {
    use super::*;

    fn read(name: &str, format: Format, data: &str) -> Duration {
        let started = Instant::now();
        let sessions = compactor::read::read_bytes(Path::new(name), data.as_bytes(), Some(format)).unwrap();
        assert!(!sessions.is_empty());
        let took = started.elapsed();
        eprintln!("{name}: {} bytes read in {took:.1?}", data.len());
        took
    }

    /// Generous for a loaded debug build (the linear readers take 5-15 s here on
    /// two busy cores); at these sizes the quadratic versions took many minutes.
    const BUDGET: Duration = Duration::from_secs(60);

    /// pi: every compaction looked its `firstKeptEntryId` up by a scan of all entries.
    #[test]
    fn pi_compactions_with_missing_first_kept_ids() {
        let mut data = String::from("{\"type\":\"session\",\"version\":3,\"id\":\"p\",\"cwd\":\"/\"}\n");
        for i in 0..100_000 {
            data.push_str(&format!(
                "{{\"type\":\"compaction\",\"id\":\"e{i}\",\"parentId\":{},\"summary\":\"s\",\"firstKeptEntryId\":\"missing\"}}\n",
                if i == 0 { "null".to_string() } else { format!("\"e{}\"", i - 1) }
            ));
        }
        assert!(read("p.jsonl", Format::Pi, &data) < BUDGET);
    }

    /// generic: each legacy `function` result searched all unanswered calls.
    #[test]
    fn generic_unanswered_function_calls() {
        let mut data = String::new();
        for i in 0..100_000 {
            data.push_str(&format!(
                "{{\"role\":\"assistant\",\"content\":null,\"function_call\":{{\"name\":\"f{i}\",\"arguments\":\"{{}}\"}}}}\n"
            ));
        }
        for _ in 0..100_000 {
            data.push_str("{\"role\":\"function\",\"name\":\"other\",\"content\":\"x\"}\n");
        }
        assert!(read("g.jsonl", Format::Generic, &data) < BUDGET);
    }

    /// Cline: each call of a turn was checked against every native result.
    #[test]
    fn cline_turn_with_many_calls_and_results() {
        let n = 100_000;
        let uses: Vec<String> = (0..n)
            .map(|i| format!("{{\"type\":\"tool_use\",\"id\":\"t{i}\",\"name\":\"x\",\"input\":{{}}}}"))
            .collect();
        let results: Vec<String> = (0..n)
            .map(|i| format!("{{\"type\":\"tool_result\",\"tool_use_id\":\"r{i}\",\"content\":\"o\"}}"))
            .chain((0..n).map(|_| "{\"type\":\"text\",\"text\":\"[x] Result:\\nok\"}".to_string()))
            .collect();
        let data = format!(
            "[{{\"role\":\"user\",\"content\":\"<task>t</task>\"}},{{\"role\":\"assistant\",\"content\":[{}]}},{{\"role\":\"user\",\"content\":[{}]}}]",
            uses.join(","),
            results.join(",")
        );
        assert!(read("api_conversation_history.json", Format::Cline, &data) < BUDGET);
    }

    /// Claude: each inline sub-agent was matched against every agent call of the parent.
    #[test]
    fn claude_many_sidechains_and_agent_calls() {
        let n = 30_000;
        let mut data = String::new();
        for i in 0..n {
            data.push_str(&format!(
                "{{\"type\":\"assistant\",\"uuid\":\"a{i}\",\"sessionId\":\"s\",\"message\":{{\"id\":\"m{i}\",\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t{i}\",\"name\":\"Task\",\"input\":{{\"prompt\":\"p{i}\",\"subagent_type\":\"x\"}}}}]}}}}\n"
            ));
        }
        for i in 0..n {
            data.push_str(&format!(
                "{{\"type\":\"user\",\"uuid\":\"s{i}\",\"isSidechain\":true,\"agentId\":\"g{i}\",\"sessionId\":\"s\",\"message\":{{\"role\":\"user\",\"content\":\"q{i}\"}}}}\n"
            ));
        }
        assert!(read("s.jsonl", Format::ClaudeCode, &data) < BUDGET);
    }

    /// Every record naming a new version/model: each addition scanned all earlier ones.
    #[test]
    fn distinct_version_on_every_record() {
        let mut data = String::new();
        for i in 0..200_000 {
            data.push_str(&format!(
                "{{\"type\":\"system\",\"subtype\":\"x\",\"uuid\":\"u{i}\",\"sessionId\":\"s\",\"version\":\"v{i}\"}}\n"
            ));
        }
        assert!(read("v.jsonl", Format::ClaudeCode, &data) < BUDGET);
        let sessions = compactor::read::read_bytes(Path::new("v.jsonl"), data.as_bytes(), None).unwrap();
        assert_eq!(sessions[0].meta.versions.len(), compactor::model::MAX_META_VALUES);
    }
}

/// Terminal control sequences in log text (a tool name, a model, a kind name) and
/// in a file name never reach the terminal raw, in the report or in diagnostics.
#[test]
fn control_characters_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let bad = dir.path().join("esc\u{1b}]0;pwned\u{7}.jsonl");
    std::fs::write(
        &bad,
        "{\"role\":\"assistant\",\"model\":\"m\\u001b[2J\",\"content\":null,\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"t\\u001b[31mred\\nfake line\",\"arguments\":\"{}\"}}]}\n\
         {\"type\":\"x\\u001b[0m\"}\n\
         not json\n",
    )
    .unwrap();
    let out = cargo_bin_cmd!("compactor").arg("inspect").arg(&bad).arg(&good).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'), "{stdout}\n{stderr}");
    assert!(!stdout.contains("\nfake line"), "{stdout}");
    assert!(stdout.contains("t\\u{1b}[31mred\\u{a}fake line"), "{stdout}");
    assert!(stderr.contains(":3: malformed JSON record"), "{stderr}");
}

/// Discovery over a hostile tree: non-UTF-8 and control-character names, symlink
/// loops, dangling links, a directory named like a session file, a Cline history
/// that is a directory, deep nesting, and a broken glob.
#[test]
#[cfg(unix)]
fn hostile_directory_tree() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    let good = write_good(&root);
    let weird = root.join(std::ffi::OsStr::from_bytes(b"bad-\xff\xfe-\x1b.jsonl"));
    std::fs::write(&weird, "{\"role\":\"user\",\"content\":\"w\"}\n").unwrap();
    std::os::unix::fs::symlink(&root, root.join("loop")).unwrap();
    std::os::unix::fs::symlink(root.join("missing.jsonl"), root.join("dangling.jsonl")).unwrap();
    std::fs::create_dir(root.join("dir.jsonl")).unwrap();
    std::fs::create_dir_all(root.join("task/api_conversation_history.json")).unwrap();
    let mut deep = root.clone();
    for _ in 0..200 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("deep.jsonl"), "{\"role\":\"user\",\"content\":\"deep\"}\n").unwrap();
    let (inputs, problems) = compactor::read::discover(&[root.clone(), root.join("[")]);
    assert_eq!(problems.len(), 1, "{problems:?}");
    let names: Vec<&Path> = inputs.iter().map(|i| i.path.as_path()).collect();
    assert!(names.contains(&good.as_path()) && names.contains(&weird.as_path()), "{names:?}");
    assert!(names.iter().any(|p| p.ends_with("deep.jsonl")), "{names:?}");
    let out = cargo_bin_cmd!("compactor").args(["inspect", "--json"]).arg(&root).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: InspectReport = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.sessions.len(), 3);
}

/// A file of a huge number of bad lines: every one is counted, a bounded number
/// listed (each kept diagnostic costs memory and a line of stderr).
#[test]
fn millions_of_bad_lines() {
    let n = if big_inputs() { 2_000_000 } else { 200_000 };
    let dir = tempfile::tempdir().unwrap();
    let good = write_good(dir.path());
    let bad = dir.path().join("badlines.jsonl");
    let mut data = String::from(
        "{\"type\":\"user\",\"uuid\":\"u\",\"parentUuid\":null,\"sessionId\":\"b\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    );
    data.push_str(&"x\n".repeat(n));
    std::fs::write(&bad, data).unwrap();
    let run = inspect_with_limit(&[&bad], &good, 1024);
    let s = session(&run.report, &bad);
    assert_eq!(s.counts.diagnostics.bad_lines, n as u64);
    assert_eq!(s.counts.diagnostics.warnings, n as u64);
    let listed = run.stderr.lines().filter(|l| l.starts_with(&bad.display().to_string())).count();
    assert!(listed <= compactor::model::MAX_LISTED_WARNINGS + 1, "{listed} lines of stderr");
    assert!(run.diag(&bad, 0, "more warning(s) not listed"), "{}", tail(&run.stderr));
}
