//! Ctrl-C (SIGINT) and SIGTERM sent to the real binary in the middle of
//! `replay`, `compare`, `check` and `sweep`: the process exits 130 (143), and
//! `--out`, which holds the outputs of an earlier complete run, is left byte for
//! byte as it was: no partial file, no temporary file or folder, nothing of the
//! interrupted run, nothing of the earlier run changed.
//!
//! Robust on a slow, loaded machine without relying on timing: the signal goes
//! only once the run is visibly at work (it has used CPU time, and a replay has
//! already written some of its new outputs into its staging folder). A run that
//! ends before the signal, or completes although signalled, proves nothing: the
//! test then doubles the corpus and tries again, and fails if no size was ever
//! interrupted mid-run, so it never passes without an interrupted run.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmd {
    Replay,
    Compare,
    Check,
    Sweep,
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

/// The command line of `cmd` on `input`, writing to `out`.
fn command(cmd: Cmd, input: &Path, out: &Path, grid: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_compactor"));
    let args: &[&str] = match cmd {
        Cmd::Replay => &["replay", "--preset", "nous"],
        Cmd::Compare => &["compare", "--preset", "nous", "--preset", "opal"],
        Cmd::Check => &["check", "--preset", "opal"],
        Cmd::Sweep => &["sweep", "--grid"],
    };
    c.args(args);
    if cmd == Cmd::Sweep {
        c.arg(grid);
    }
    if cmd == Cmd::Check {
        // Next to --out: written only by a run that completes.
        c.arg("--write-baseline").arg(grid.with_file_name("baseline.json"));
    }
    c.args(["--estimator", "chars4", "--jobs", "2"]).arg(input).arg("--out").arg(out);
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

/// Every entry under `dir` (folders too, hidden ones too), with each file's
/// bytes: two equal trees hold the same names and the same bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut v: Vec<(PathBuf, Option<Vec<u8>>)> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| {
            let e = e.unwrap();
            let bytes = e.file_type().is_file().then(|| std::fs::read(e.path()).unwrap());
            (e.path().strip_prefix(dir).unwrap().to_path_buf(), bytes)
        })
        .collect();
    v.sort();
    v
}

/// The staging folders of runs in `out`.
fn staging(out: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(out) else { return Vec::new() };
    dir.map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(".compactor-tmp-"))
        .collect()
}

/// CPU time the process `pid` has used (user + system), from /proc.
fn cpu_time(pid: u32) -> Duration {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return Duration::ZERO };
    // Fields after the command name, which ends with the last ')'.
    let rest = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here.
    let ticks: u64 = fields.get(11..13).map_or(0, |f| f.iter().filter_map(|t| t.parse::<u64>().ok()).sum());
    // SAFETY: sysconf only reads a system constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_millis(ticks * 1000 / hz)
}

/// Whether the run is at work: it has used some CPU, and a replay has started
/// writing its new outputs (a transcript of `replay`/`compare`, the staging
/// folder of `check`). `sweep` stages its files only at the end: CPU time only.
fn at_work(cmd: Cmd, child: &Child, out: &Path) -> bool {
    if cpu_time(child.id()) < Duration::from_millis(500) {
        return false;
    }
    let staged = staging(out);
    match cmd {
        Cmd::Replay | Cmd::Compare => staged.iter().any(|s| {
            walkdir::WalkDir::new(s.join("transcripts"))
                .into_iter()
                .filter_map(Result::ok)
                .any(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "jsonl"))
        }),
        Cmd::Check => !staged.is_empty(),
        Cmd::Sweep => true,
    }
}

fn wait(child: &mut Child, limit: Duration, what: &str) -> (std::process::ExitStatus, String) {
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    (status, err)
}

/// A complete run of `cmd` into `out`.
fn complete_run(cmd: Cmd, input: &Path, out: &Path, grid: &Path) {
    let mut child = command(cmd, input, out, grid).spawn().unwrap();
    let (status, err) = wait(&mut child, Duration::from_secs(900), "complete run");
    assert_eq!(status.code(), Some(0), "{cmd:?}: {err}");
    assert!(staging(out).is_empty(), "{cmd:?}: a staging folder stayed after a complete run");
}

/// Run `cmd` into an `--out` holding an earlier run's outputs, signal it
/// mid-run, and check the exit code and that `--out` did not change.
fn interrupted_run_leaves_out_as_it_was(cmd: Cmd, signal: libc::c_int) {
    let code = 128 + signal;
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.toml");
    std::fs::write(&grid, "[grid]\n\"compact.trigger_ratio\" = [0.6, 0.7, 0.8, 0.9]\n").unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "not compactor's").unwrap();
    // The earlier run: a small corpus, so its outputs differ from the next run's.
    let small = dir.path().join("small");
    write_corpus(&small, 1);
    complete_run(cmd, &small, &out, &grid);
    let main_file = if cmd == Cmd::Sweep { "sweep.md" } else { "report.json" };
    assert!(out.join(main_file).is_file(), "{cmd:?}: no {main_file}");
    let baseline = dir.path().join("baseline.json");
    let mut before = (tree(&out), std::fs::read(&baseline).ok());

    let mut mb = 16;
    loop {
        let input = dir.path().join(format!("in-{mb}"));
        write_corpus(&input, mb);
        let mut child = command(cmd, &input, &out, &grid).spawn().unwrap();
        let started = Instant::now();
        let ended_first = loop {
            if child.try_wait().unwrap().is_some() {
                break true;
            }
            if at_work(cmd, &child, &out) {
                break false;
            }
            assert!(started.elapsed() < Duration::from_secs(900), "{cmd:?}: not at work after 15 minutes");
            std::thread::sleep(Duration::from_millis(5));
        };
        let signalled = Instant::now();
        // SAFETY: `kill` on the pid of the child, which is not reaped yet (so
        // the pid is not reused): at worst it has just exited and ignores it.
        let sent = !ended_first && unsafe { libc::kill(child.id() as libc::pid_t, signal) } == 0;
        let (status, err) = wait(&mut child, Duration::from_secs(300), "signalled run");
        assert!(!err.contains("panicked"), "{cmd:?}: {err}");
        if status.code() == Some(0) {
            // The run ended (or put its outputs in place) before the signal:
            // they are the new reference, and a bigger corpus is needed.
            eprintln!("{cmd:?}: {mb} MB finished before the signal (signal sent: {sent}); doubling");
            assert!(staging(&out).is_empty(), "{cmd:?}: a staging folder stayed after a complete run");
            before = (tree(&out), std::fs::read(&baseline).ok());
            assert!(mb < 256, "{cmd:?}: never interrupted mid-run, even on {mb} MB");
            let _ = std::fs::remove_dir_all(&input);
            mb *= 2;
            continue;
        }
        eprintln!(
            "{cmd:?}: signal {signal} after {:.1?} of work on {mb} MB, exit {status} {:.1?} later",
            signalled - started,
            signalled.elapsed()
        );
        assert!(sent, "{cmd:?}: kill failed");
        assert_eq!(status.code(), Some(code), "{cmd:?}: {status}\n{err}");
        assert!(err.contains("interrupted"), "{cmd:?}: {err}");
        let after = tree(&out);
        let names = |t: &[(PathBuf, Option<Vec<u8>>)]| t.iter().map(|e| e.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&after), names(&before.0), "{cmd:?}: --out does not hold the same files");
        for (a, b) in after.iter().zip(&before.0) {
            assert!(a.1 == b.1, "{cmd:?}: {} changed", a.0.display());
        }
        // `check --write-baseline` writes it only once the run is complete.
        assert!(std::fs::read(&baseline).ok() == before.1, "{cmd:?}: the baseline changed");
        return;
    }
}

#[test]
fn replay_sigint() {
    interrupted_run_leaves_out_as_it_was(Cmd::Replay, libc::SIGINT);
}

#[test]
fn replay_sigterm() {
    interrupted_run_leaves_out_as_it_was(Cmd::Replay, libc::SIGTERM);
}

#[test]
fn compare_sigterm() {
    interrupted_run_leaves_out_as_it_was(Cmd::Compare, libc::SIGTERM);
}

#[test]
fn check_sigint() {
    interrupted_run_leaves_out_as_it_was(Cmd::Check, libc::SIGINT);
}

#[test]
fn sweep_sigterm() {
    interrupted_run_leaves_out_as_it_was(Cmd::Sweep, libc::SIGTERM);
}

#[test]
fn sweep_sigint() {
    interrupted_run_leaves_out_as_it_was(Cmd::Sweep, libc::SIGINT);
}

/// The staged outputs of a run killed outright (SIGKILL, which no process can
/// catch) stay hidden in their folder; the next run into the same `--out`
/// removes that folder.
#[test]
fn a_killed_runs_staging_folder_is_removed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.toml");
    let small = dir.path().join("small");
    write_corpus(&small, 1);
    let mut mb = 16;
    let out = loop {
        let input = dir.path().join(format!("in-{mb}"));
        let out = dir.path().join(format!("out-{mb}"));
        write_corpus(&input, mb);
        let mut child = command(Cmd::Replay, &input, &out, &grid).spawn().unwrap();
        let started = Instant::now();
        while child.try_wait().unwrap().is_none() && !at_work(Cmd::Replay, &child, &out) {
            assert!(started.elapsed() < Duration::from_secs(900), "not at work after 15 minutes");
            std::thread::sleep(Duration::from_millis(5));
        }
        // A no-op when the child has ended and was reaped (std knows).
        let _ = child.kill();
        let (status, _) = wait(&mut child, Duration::from_secs(60), "killed run");
        if status.code().is_some() {
            assert!(mb < 256, "never killed mid-run, even on {mb} MB");
            let _ = std::fs::remove_dir_all(&input);
            mb *= 2;
            continue;
        }
        break out;
    };
    assert_eq!(staging(&out).len(), 1, "the killed run's staging folder");
    assert!(!out.join("report.json").exists());
    complete_run(Cmd::Replay, &small, &out, &grid);
    assert!(out.join("report.json").is_file());
}
