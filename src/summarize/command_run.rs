//! One run of a summarizer program: its request on stdin, its answer from
//! stdout, the end of its stderr, all under a deadline. A program that hangs,
//! floods its output or leaves children behind is stopped with everything it
//! started (its own process group), so a run always ends.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a program is run with.
pub struct Spec<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub dir: &'a Path,
    pub env: &'a [(String, std::ffi::OsString)],
    pub timeout: Duration,
    /// Bytes of stdout read at most; more stops the program.
    pub max_stdout: usize,
    /// Bytes of the end of stderr kept.
    pub stderr_tail: usize,
}

/// A run that ended by itself.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// A run that did not end by itself.
#[derive(Debug)]
pub enum Stopped {
    /// It could not be started.
    Spawn(std::io::Error),
    TimedOut {
        stderr: String,
    },
    /// It wrote more than `max_stdout` bytes.
    TooMuchOutput {
        stderr: String,
    },
    /// Ctrl-C.
    Interrupted,
    /// It ended, but something it started kept its stdout open.
    PipesHeld {
        stderr: String,
    },
}

/// Run the program once with `input` on its stdin.
pub fn run(spec: &Spec<'_>, input: Vec<u8>) -> Result<Finished, Stopped> {
    let mut cmd = Command::new(spec.program);
    cmd.args(spec.args)
        .current_dir(spec.dir)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().map_err(Stopped::Spawn)?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    // A program may answer before reading all of its input, or never read it:
    // the request is written on its own thread so neither side can block the other.
    let writer = std::thread::spawn(move || {
        if let Some(mut s) = stdin {
            let _ = s.write_all(&input);
        }
    });
    let max = spec.max_stdout;
    let flooded = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = flooded.clone();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stdout {
            let _ = s.take(max as u64 + 1).read_to_end(&mut buf);
        }
        if buf.len() > max {
            flag.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        buf
    });
    let keep = spec.stderr_tail.max(1);
    let err_reader = std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        if let Some(mut s) = stderr {
            let mut chunk = [0u8; 8192];
            while let Ok(n) = s.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&chunk[..n]);
                if tail.len() > 2 * keep {
                    tail.drain(..tail.len() - keep);
                }
            }
        }
        let start = tail.len().saturating_sub(keep);
        String::from_utf8_lossy(&tail[start..]).into_owned()
    });

    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    let outcome = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(Stopped::Spawn(e)),
        }
        if flooded.load(std::sync::atomic::Ordering::Relaxed) {
            break Err(Stopped::TooMuchOutput { stderr: String::new() });
        }
        if start.elapsed() >= spec.timeout {
            break Err(Stopped::TimedOut { stderr: String::new() });
        }
        if crate::interrupt::requested() {
            break Err(Stopped::Interrupted);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    // Whatever it started goes with it: a child left running would hold the
    // pipes open and keep the readers waiting.
    kill_group(&mut child);
    let _ = child.wait();
    // A process that left the group (setsid) can still hold a pipe: the
    // threads on it are given a moment, then left behind.
    let until = Instant::now() + Duration::from_secs(2);
    let _ = settle(writer, until);
    let stderr = settle(err_reader, until).unwrap_or_default();
    let Some(stdout) = settle(out_reader, until) else {
        return Err(Stopped::PipesHeld { stderr });
    };
    match outcome {
        Ok(_) if stdout.len() > max => Err(Stopped::TooMuchOutput { stderr }),
        Ok(status) => Ok(Finished { status, stdout, stderr }),
        Err(Stopped::TimedOut { .. }) => Err(Stopped::TimedOut { stderr }),
        Err(Stopped::TooMuchOutput { .. }) => Err(Stopped::TooMuchOutput { stderr }),
        Err(other) => Err(other),
    }
}

/// The thread's result once it has finished, waiting until `until` at most;
/// `None` (the thread left running) past it.
fn settle<T>(h: std::thread::JoinHandle<T>, until: Instant) -> Option<T> {
    while !h.is_finished() {
        if Instant::now() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    h.join().ok()
}

#[cfg(unix)]
fn kill_group(child: &mut std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group the
        // program leads (set at spawn); it touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

#[cfg(not(unix))]
fn kill_group(child: &mut std::process::Child) {
    let _ = child.kill();
}
