//! What `compactor replay` must never do, through the real binary: write outside
//! `--out` (hostile session ids), leave a partial file when killed (SIGKILL) or
//! interrupted (SIGINT, exit 130), delete an existing `--out`, start work on an
//! `--out` it cannot write, need write access to its inputs, emit a spreadsheet
//! formula from a log (CSV injection), or output a secret under `--redact`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static Path {
    assert_cmd::cargo::cargo_bin!("compactor")
}

/// A Claude Code session file: `turns` of (user text, assistant content blocks).
/// Each session's responses have ids of their own, as the API gives them (a
/// response id in two logs makes one a copy of the other).
fn claude_session(id: &str, turns: &[(Value, Value)]) -> String {
    let own = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let mut out = String::new();
    let mut parent = Value::Null;
    for (i, (user, assistant)) in turns.iter().enumerate() {
        let u = format!("u{i}");
        let a = format!("a{i}");
        let rec = json!({"type": "user", "uuid": u, "parentUuid": parent, "sessionId": id,
            "timestamp": format!("2025-01-01T00:{:02}:00Z", i % 60),
            "message": {"role": "user", "content": user}});
        out.push_str(&format!("{rec}\n"));
        let rec = json!({"type": "assistant", "uuid": a, "parentUuid": u, "sessionId": id,
            "timestamp": format!("2025-01-01T00:{:02}:30Z", i % 60),
            "message": {"id": format!("msg_{own:x}_{i}"), "role": "assistant", "model": "claude-test", "content": assistant,
                "usage": {"input_tokens": 1000 + 500 * i, "output_tokens": 50}}});
        out.push_str(&format!("{rec}\n"));
        parent = json!(a);
    }
    out
}

/// A plain session of `n` turns with tool calls, big enough to compact under a
/// small window.
fn plain_turns(n: usize) -> Vec<(Value, Value)> {
    (0..n)
        .map(|i| {
            let user = if i == 0 || i % 3 != 0 {
                json!(format!("please look at file {i} and fix the bug {}", "detail ".repeat(200)))
            } else {
                json!([{"type": "tool_result", "tool_use_id": format!("t{}", i - 1), "content": "output line\n".repeat(300)}])
            };
            let assistant = if i % 3 == 2 {
                json!([{"type": "tool_use", "id": format!("t{i}"), "name": "Read", "input": {"file_path": format!("/repo/f{i}.rs")}}])
            } else {
                json!([{"type": "text", "text": format!("done with step {i}")}])
            };
            (user, assistant)
        })
        .collect()
}

/// Every regular file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    v.sort();
    v
}

/// A file written by compactor is complete: it parses as what its name says.
fn assert_complete(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(!name.starts_with('.'), "a temporary file was left: {}", path.display());
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => {
            serde_json::from_slice::<Value>(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        Some("jsonl") => {
            assert!(bytes.is_empty() || bytes.ends_with(b"\n"), "{}: no final newline", path.display());
            for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                serde_json::from_slice::<Value>(line).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
        }
        Some("csv") => {
            let mut r = csv::Reader::from_reader(bytes.as_slice());
            let width = r.headers().unwrap().len();
            for rec in r.records() {
                assert_eq!(rec.unwrap_or_else(|e| panic!("{}: {e}", path.display())).len(), width);
            }
            assert!(bytes.ends_with(b"\n"), "{}: cut short", path.display());
        }
        _ => {
            let text = String::from_utf8(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(text.ends_with('\n'), "{}: cut short", path.display());
        }
    }
}

fn replay(args: &[&str], inputs: &[&Path], out: &Path) -> Output {
    cargo_bin_cmd!("compactor")
        .arg("replay")
        .args(args)
        .args(inputs)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Session ids that are paths, NUL bytes, 10,000 characters or spreadsheet
/// formulas become safe file names inside --out and inert CSV cells.
#[test]
fn hostile_session_ids_stay_inside_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let inputs = root.join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    let long = "x".repeat(10_000);
    let ids = [
        "../../etc/x",
        "/abs/path/session",
        "a\u{0}b",
        long.as_str(),
        "..",
        "=HYPERLINK(\"http://evil\",\"x\")",
        "@SUM(1+1)",
        "+1+1",
        "-2+3",
        "\ttab",
    ];
    for (i, id) in ids.iter().enumerate() {
        std::fs::write(inputs.join(format!("s{i}.jsonl")), claude_session(id, &plain_turns(4))).unwrap();
    }
    let out = root.join("out");
    let o = replay(&["--preset", "nous", "--preset", "opal"], &[&inputs], &out);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Nothing but `in` and `out` under the root; nothing written anywhere else.
    let mut top: Vec<String> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    top.sort();
    assert_eq!(top, ["in", "out"]);
    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let mut seen: Vec<&str> = report.sessions.iter().map(|r| r.session_id.as_str()).collect();
    seen.dedup();
    let mut want: Vec<&str> = ids.to_vec();
    want.sort();
    assert_eq!(seen, want, "the report keeps the ids as they are");
    let out_canon = out.canonicalize().unwrap();
    for policy in ["nous", "opal"] {
        let names: Vec<PathBuf> = files(&out.join("transcripts").join(policy));
        assert_eq!(names.len(), ids.len(), "{policy}: one transcript per session: {names:?}");
        for p in names {
            assert!(p.canonicalize().unwrap().starts_with(&out_canon), "{} escapes --out", p.display());
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.len() <= 255 && !name.starts_with('.'), "{name}");
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)), "{name}");
        }
    }
    for p in files(&out) {
        assert_complete(&p);
    }
    // CSV injection: no cell of either CSV starts with a formula character.
    for csv_name in ["sessions.csv", "calls.csv"] {
        let mut r = csv::Reader::from_path(out.join(csv_name)).unwrap();
        let mut defused = 0;
        for rec in r.records() {
            for cell in rec.unwrap().iter() {
                assert!(!cell.starts_with(['=', '+', '@', '\t', '\r']), "{csv_name}: formula cell {cell:?}");
                // A leading `-` stays only in numbers compactor wrote.
                assert!(!cell.starts_with('-') || cell.parse::<f64>().is_ok(), "{csv_name}: {cell:?}");
                defused += usize::from(cell.starts_with("'=") || cell.starts_with("'@"));
            }
        }
        assert!(defused >= 2, "{csv_name}: the formula ids are missing");
    }
}

/// An existing --out keeps everything compactor does not write; --out naming a
/// file is an error that leaves the file alone.
#[test]
fn an_existing_out_is_never_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("s.jsonl");
    std::fs::write(&input, claude_session("keep-test", &plain_turns(3))).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("mine/deeper")).unwrap();
    std::fs::write(out.join("notes.txt"), "my notes").unwrap();
    std::fs::write(out.join("mine/deeper/data.bin"), [0u8, 1, 2]).unwrap();
    std::fs::create_dir_all(out.join("transcripts/other-policy")).unwrap();
    std::fs::write(out.join("transcripts/other-policy/old.jsonl"), "{}\n").unwrap();
    for _ in 0..2 {
        let o = replay(&["--preset", "nous"], &[&input], &out);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).unwrap(), "my notes");
    assert_eq!(std::fs::read(out.join("mine/deeper/data.bin")).unwrap(), [0u8, 1, 2]);
    assert_eq!(std::fs::read_to_string(out.join("transcripts/other-policy/old.jsonl")).unwrap(), "{}\n");
    assert!(out.join("report.json").is_file());

    let file = dir.path().join("a-file");
    std::fs::write(&file, "precious").unwrap();
    let o = replay(&["--preset", "nous"], &[&input], &file);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is an existing file, not a directory"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
}

/// An `--out` that cannot be written is an error before anything is read or
/// replayed, for every command that writes one: the input given does not
/// exist, and the error is about `--out`, not about the input.
#[test]
fn an_out_that_cannot_be_written_fails_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "precious").unwrap();
    let grid = dir.path().join("grid.toml");
    std::fs::write(&grid, "[grid]\n\"compact.trigger_ratio\" = [0.6, 0.7]\n").unwrap();
    let missing_input = dir.path().join("no-such-input");
    let under_file = file.join("reports");
    let run = |cmd: &[&str], out: &Path| {
        let mut c = cargo_bin_cmd!("compactor");
        c.args(cmd).arg(&missing_input).arg("--out").arg(out);
        if cmd[0] == "sweep" {
            c.arg("--grid").arg(&grid);
        }
        if cmd[0] == "check" {
            c.arg("--write-baseline").arg(dir.path().join("b.json"));
        }
        c.output().unwrap()
    };
    for cmd in [&["replay"][..], &["compare"], &["sweep"], &["check"]] {
        for (out, says) in [
            (&file, format!("--out {}: is an existing file, not a directory", file.display())),
            (&under_file, format!("cannot be created: {} is a file", file.display())),
        ] {
            let o = run(cmd, out);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd:?} --out {}: {err}", out.display());
            assert!(err.contains(&says), "{cmd:?}: {err}");
            assert!(!err.contains("no-such-input"), "{cmd:?} looked at the input before --out: {err}");
        }
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
    assert!(!dir.path().join("b.json").exists());
    // A directory nobody may write in (root included): /proc.
    #[cfg(target_os = "linux")]
    {
        let o = run(&["replay"], Path::new("/proc/compactor-out"));
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("--out /proc/compactor-out: cannot write in /proc"), "{}", stderr(&o));
    }
    // check's own output files are checked as early.
    let ok = dir.path().join("ok.json");
    for (flag, target, mode) in
        [("--write-baseline", under_file.join("b.json"), None), ("--summary", dir.path().to_path_buf(), Some(&ok))]
    {
        let mut c = cargo_bin_cmd!("compactor");
        c.arg("check").arg(&missing_input).arg(flag).arg(&target);
        if let Some(m) = mode {
            c.arg("--write-baseline").arg(m);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("{flag} {}", target.display())), "{}", stderr(&o));
        assert!(!stderr(&o).contains("no-such-input"), "{}", stderr(&o));
    }
}

/// Inputs are only read: a read-only file in a read-only directory works, and
/// is left byte-for-byte and timestamp-for-timestamp as it was.
#[test]
#[cfg(unix)]
fn read_only_inputs_work_and_stay_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let input = ro.join("s.jsonl");
    let data = claude_session("ro-test", &plain_turns(6));
    std::fs::write(&input, &data).unwrap();
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = std::fs::metadata(&input).unwrap().modified().unwrap();
    let out = dir.path().join("out");
    let o = replay(&["--preset", "opal", "--set", "context_window=3000"], &[&ro], &out);
    // Give write access back so the temporary directory can be removed.
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&input).unwrap(), data);
    assert_eq!(std::fs::metadata(&input).unwrap().modified().unwrap(), before);
    assert_eq!(std::fs::read_dir(&ro).unwrap().count(), 1, "something was created next to the input");
    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report.sessions.len(), 1);
    assert!(report.sessions[0].error.is_none());
}

/// A synthetic corpus of about `mb` MB (Claude Code shaped) under `dir`.
fn write_corpus(dir: &Path, mb: u64) {
    for spec in compactor::synth::plan_corpus(7, mb << 20) {
        let s = compactor::synth::generate_session(&spec);
        let p = dir.join(s.relative_path());
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, &s.data).unwrap();
    }
}

/// `compactor replay` on `input` with outputs under `out`, not waited for.
fn spawn_replay(input: &Path, out: &Path) -> std::process::Child {
    Command::new(bin())
        .args(["replay", "--preset", "nous", "--preset", "opal", "--estimator", "chars4", "--jobs", "2"])
        .arg(input)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Whether the run has started writing transcripts (into its staging folder
/// in `out`, or, once complete, `out` itself).
fn writing(out: &Path) -> bool {
    out.join("transcripts").exists()
        || std::fs::read_dir(out).into_iter().flatten().flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with(".compactor-tmp-") && e.path().join("transcripts").exists()
        })
}

fn signal(child: &std::process::Child, sig: &str) {
    let ok = Command::new("kill").args([sig, &child.id().to_string()]).status().unwrap().success();
    assert!(ok, "kill {sig}");
}

/// Killed with SIGKILL while it writes (the moment it creates the transcripts,
/// and a little later), a run leaves every file in --out either absent or
/// complete: writes are atomic, and temporary files have no name until complete
/// (what it staged stays in its hidden staging folder, every file complete).
#[test]
#[cfg(unix)]
fn sigkill_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write_corpus(&input, 12);
    for delay_ms in [0u64, 30, 150] {
        let out = dir.path().join(format!("out-{delay_ms}"));
        let mut child = spawn_replay(&input, &out);
        let started = Instant::now();
        // Wait for the writing phase: the first transcript folder.
        while !writing(&out) {
            if child.try_wait().unwrap().is_some() {
                panic!("the run ended before it was killed: make the corpus bigger");
            }
            assert!(started.elapsed() < Duration::from_secs(600), "no output after 10 minutes");
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        let written = files(&out);
        eprintln!("killed after {delay_ms} ms of writing ({status}): {} files", written.len());
        for p in &written {
            assert_complete(p);
        }
    }
}

/// Ctrl-C: the workers stop, nothing partial is left in --out, exit code 130.
#[test]
#[cfg(unix)]
fn sigint_stops_promptly_with_exit_130() {
    let dir = tempfile::tempdir().unwrap();
    // A corpus whose full run takes at least 2 s on this build and machine, so
    // signals sent at fixed shares of that time land mid-run (a fixed size is
    // too small for an optimized build on a fast machine, too slow otherwise).
    let mut mb = 6;
    let (input, full) = loop {
        let input = dir.path().join(format!("in-{mb}"));
        write_corpus(&input, mb);
        let started = Instant::now();
        let status = spawn_replay(&input, &dir.path().join(format!("full-{mb}"))).wait().unwrap();
        assert!(status.success(), "uninterrupted run: {status}");
        let took = started.elapsed();
        if took >= Duration::from_secs(2) || mb >= 192 {
            break (input, took);
        }
        mb *= 2;
    };
    let at = |share: f64| full.mul_f64(share).as_millis() as u64;
    // Interrupted while reading, while replaying, and while writing.
    for (phase, wait) in [("reading", at(0.1)), ("replaying", at(0.5)), ("writing", 0)] {
        let out = dir.path().join(format!("out-{phase}"));
        // Other tests share the CPUs: a run may end sooner than the timed one
        // did. Try again, signalling earlier, before calling it a failure.
        let (mut child, started) = (0..3)
            .find_map(|attempt| {
                let _ = std::fs::remove_dir_all(&out);
                let mut child = spawn_replay(&input, &out);
                let started = Instant::now();
                if phase == "writing" {
                    while !writing(&out) && child.try_wait().unwrap().is_none() {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                } else {
                    std::thread::sleep(Duration::from_millis(wait >> attempt));
                }
                if child.try_wait().unwrap().is_none() {
                    return Some((child, started));
                }
                eprintln!("{phase}: the run ended before the signal (attempt {attempt})");
                None
            })
            .unwrap_or_else(|| panic!("{phase}: the run ended before the signal, three times"));
        signal(&child, "-INT");
        let signalled = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(signalled.elapsed() < Duration::from_secs(60), "{phase}: still running a minute after SIGINT");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        eprintln!("{phase}: SIGINT after {:.1?}, exit after {:.1?} more", signalled - started, signalled.elapsed());
        assert_eq!(status.code(), Some(130), "{phase}: {status}\n{err}");
        assert!(err.contains("interrupted"), "{phase}: {err}");
        assert!(!err.contains("panicked"), "{phase}: {err}");
        for p in files(&out) {
            assert_complete(&p);
        }
        assert!(!out.join("report.json").exists(), "{phase}: report.json means a complete run");
    }
}

/// Fake secrets, assembled at run time so no scanner mistakes this file for a leak.
pub(crate) fn planted() -> Vec<String> {
    let body = ["Q7r8S9t0", "U1v2W3x4", "Y5z6A7b8", "C9d0E1f2", "G3h4"].concat();
    vec![
        ["sk-ant-api03-", &body].concat(),
        ["sk-proj-", &body].concat(),
        ["AKIA", "Q7R8S9T0U1V2W3X4"].concat(),
        ["ghp_", &body].concat(),
        ["github_pat_", "11AB_", &body].concat(),
        ["xoxb-", "1234-", &body].concat(),
        ["AIza", &body, "Zz"].concat(),
        ["eyJhbGciOiJIUzI1NiJ9", ".eyJzdWIiOiIxIn0.", &body].concat(),
        ["hunter2-", "correct-horse"].concat(),
        ["MIIEvQIBADANBgkqhkiG9w0B", "AQEFAASC"].concat(),
    ]
}

/// A session with the secrets planted where logs carry them: typed by the user,
/// in tool inputs (a command line, a JSON field), in tool output (an .env dump,
/// a private key, a JWT), in the assistant's text and thinking.
pub(crate) fn secrets_session() -> String {
    let s = planted();
    let mut turns = plain_turns(9);
    turns[0].0 = json!(format!("use the key {} and deploy; my password={} ok", s[0], s[8]));
    turns[2].1 = json!([
        {"type": "thinking", "thinking": format!("the token is {}", s[3]), "signature": "sig"},
        {"type": "tool_use", "id": "t2", "name": "Bash",
         "input": {"command": format!("curl -H 'Authorization: Bearer {}' https://api", s[7]), "password": s[8]}}
    ]);
    turns[3].0 = json!([{"type": "tool_result", "tool_use_id": "t2", "content": format!(
        "OPENAI_API_KEY={}\nAWS_ACCESS_KEY_ID={}\nGITHUB_TOKEN={}\nSLACK={}\nGOOGLE={}\n-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n{}",
        s[1], s[2], s[4], s[5], s[6], s[9], "filler line\n".repeat(400))}]);
    turns[4].1 = json!([{"type": "text", "text": format!("I used {} as asked", s[0])}]);
    claude_session("secrets-session", &turns)
}

/// `--redact`: none of the planted secrets appears in any output file, on stdout
/// or on stderr, under policies that compact (summaries quote the log) and prune
/// (trims cut through tool output). Without it, they do appear: the check can fail.
#[test]
fn redact_masks_planted_secrets_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("secrets.jsonl");
    std::fs::write(&input, secrets_session()).unwrap();
    let run = |redact: bool, out: &Path| {
        let mut cmd = cargo_bin_cmd!("compactor");
        cmd.args(["replay", "--preset", "nous", "--preset", "opal", "--preset", "spec008", "--preset", "codex"])
            .args(["--set", "context_window=4000", "--set", "compact.reserve_tokens=500"])
            .args(["--set", "flush.reserve_tokens=500", "--set", "flush.threshold_tokens=500"])
            .arg(&input)
            .arg("--out")
            .arg(out)
            .arg("--json");
        if redact {
            cmd.arg("--redact");
        }
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let mut all = String::from_utf8_lossy(&o.stdout).into_owned();
        all.push_str(&stderr(&o));
        for p in files(out) {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(p).unwrap()));
        }
        all
    };
    let plain = run(false, &dir.path().join("plain"));
    let secrets = planted();
    let leaked: Vec<&String> = secrets.iter().filter(|s| plain.contains(s.as_str())).collect();
    assert!(leaked.len() >= 8, "without --redact the secrets should be in the outputs: {leaked:?}");
    let out = dir.path().join("redacted");
    let redacted = run(true, &out);
    for secret in planted() {
        assert!(!redacted.contains(&secret), "{secret} leaked");
        // Nor a long piece of one (a trim can cut a key in two).
        let body = &secret[secret.len() - 12..];
        assert!(!redacted.contains(body), "a piece of {secret} leaked");
    }
    assert!(redacted.contains("[REDACTED]"));
    // The replay did compact and prune, so summaries and trims were written.
    let report: compactor::report::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert!(report.aggregates.iter().any(|a| a.compactions > 0), "no compaction");
    assert!(report.aggregates.iter().any(|a| a.pruned_soft + a.pruned_hard > 0), "no pruning");
}
