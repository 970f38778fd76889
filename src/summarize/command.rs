//! The `command` summarizer: a team's own program writes each summary, so a
//! recorded session can gate their compaction code offline. One JSON request
//! on its stdin, the summary on its stdout (docs/command-summarizer.md).
//!
//! Runs are bounded (a timeout, a limit on programs running at once, a cap on
//! the answer) and cached on disk by the program, the files it names and the
//! request, so a rerun or a sweep runs nothing twice. A failure never stops the
//! replay: the extractive summarizer writes that summary, and the reason (exit
//! status, the end of stderr) is kept with the compaction and counted.

use super::command_run::{self, Finished, Spec, Stopped};
use super::{Extractive, SummarizeError, Summarizer, SummarizerUsage, Summary, SummaryPart, SummaryRequest};
use crate::model::Message;
use crate::output::fsutil::atomic_write;
use crate::policy::Policy;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Version of the request a program reads; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;
/// Bytes of stdout read at most: an answer past this is a failure.
pub const MAX_ANSWER_BYTES: usize = 4 << 20;
/// Characters of the end of stderr kept with a failure.
pub const STDERR_KEPT_CHARS: usize = 1_000;
/// A summary over this many times its budget (by the replay's estimator) is a
/// failure: the program ignored `budget_tokens`.
pub const OVERSIZE_FACTOR: f64 = 1.5;
/// Bumped when the cache's layout or entry format changes.
const LAYOUT: &str = "v1";

/// How the program is run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandConfig {
    /// The program and its arguments (`compact.command`).
    pub argv: Vec<String>,
    /// Its working directory (`compact.command_dir`, else the current one).
    pub dir: PathBuf,
    /// Environment variables passed through besides `PATH`.
    pub env: Vec<String>,
    pub timeout: Duration,
    /// Programs running at once, at most (`--command-concurrency`).
    pub concurrency: usize,
    /// Where answers are cached; `None`: not cached (`--no-cache`).
    pub cache_dir: Option<PathBuf>,
}

impl CommandConfig {
    /// The program of `policy`'s `compact.command`.
    pub fn of_policy(policy: &Policy, concurrency: usize, cache_dir: Option<PathBuf>) -> CommandConfig {
        let c = &policy.compact;
        let dir = if c.command_dir.trim().is_empty() { PathBuf::from(".") } else { PathBuf::from(&c.command_dir) };
        CommandConfig {
            argv: c.command.clone(),
            dir,
            env: c.command_env.clone(),
            timeout: Duration::from_secs(c.command_timeout_secs.max(1)),
            concurrency: concurrency.max(1),
            cache_dir,
        }
    }

    /// The program to start: a path with a separator is read from `dir`; a bare
    /// name is looked up on `PATH`.
    fn program(&self) -> PathBuf {
        let p = Path::new(self.argv.first().map_or("", String::as_str));
        let here = self.dir.as_os_str().is_empty() || self.dir == Path::new(".");
        if p.is_relative() && p.components().count() > 1 && !here { self.dir.join(p) } else { p.to_path_buf() }
    }
}

/// What the run's program did, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandStats {
    /// Summaries asked of the program.
    pub requested: u64,
    /// Times the program was started (a cached answer starts none). Not in
    /// report.json, which is the same with a cold or a warm cache.
    #[serde(skip)]
    pub runs: u64,
    /// Answers read from the cache (not in report.json either).
    #[serde(skip)]
    pub cache_hits: u64,
    /// Summaries the extractive summarizer wrote because the program failed.
    pub fell_back: u64,
    /// Why the first of them fell back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_reason: Option<String>,
}

impl CommandStats {
    pub fn add(&mut self, o: &CommandStats) {
        self.requested += o.requested;
        self.runs += o.runs;
        self.cache_hits += o.cache_hits;
        self.fell_back += o.fell_back;
        if self.first_reason.is_none() {
            self.first_reason.clone_from(&o.first_reason);
        }
    }

    /// Whether summaries were asked and the extractive summarizer wrote
    /// every one: nothing the run measured came from the program.
    pub fn all_fell_back(&self) -> bool {
        self.fell_back > 0 && self.fell_back >= self.requested
    }

    /// One line saying how many summaries fell back and why the first did.
    pub fn notice(&self) -> Option<String> {
        if self.fell_back == 0 {
            return None;
        }
        let reason = self.first_reason.as_deref().unwrap_or("no reason recorded");
        let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
        Some(format!(
            "{} of {} summaries of the summarizer program fell back to extractive, the first because {reason}",
            self.fell_back,
            self.requested.max(self.fell_back)
        ))
    }
}

/// A program's answer as cached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    summary: String,
    #[serde(default)]
    usage: SummarizerUsage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
}

/// The JSON answer a program may write instead of plain text.
#[derive(Deserialize)]
struct JsonAnswer {
    summary: String,
    #[serde(default)]
    usage: Option<JsonUsage>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
struct JsonUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

/// At most `n` programs at once.
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    fn take(&self) -> SlotGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        SlotGuard(self)
    }
}

struct SlotGuard<'a>(&'a Slots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.0.freed.notify_one();
    }
}

/// The summarizer of one program, shared by every thread of a run.
pub struct CommandSummarizer {
    config: CommandConfig,
    program: PathBuf,
    /// Hash of the argv and of the contents of every file it names.
    identity: String,
    env: Vec<(String, OsString)>,
    slots: Slots,
    stats: Mutex<CommandStats>,
    failures: Mutex<Vec<String>>,
}

impl std::fmt::Debug for CommandSummarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandSummarizer").field("argv", &self.config.argv).finish_non_exhaustive()
    }
}

impl CommandSummarizer {
    /// Read the files the argv names (for the cache key) and the environment
    /// the program gets. Fails when there is no program or its folder is missing.
    pub fn new(config: CommandConfig) -> Result<CommandSummarizer, String> {
        if config.argv.first().is_none_or(|p| p.trim().is_empty()) {
            return Err("no program: compact.command is empty".into());
        }
        if !config.dir.is_dir() {
            return Err(format!("the program's folder {} does not exist (compact.command_dir)", config.dir.display()));
        }
        let program = config.program();
        let identity = identity(&config.argv, &config.dir, &program);
        let mut env: Vec<(String, OsString)> = Vec::new();
        for name in std::iter::once("PATH").chain(config.env.iter().map(String::as_str)) {
            if let Some(v) = std::env::var_os(name)
                && !env.iter().any(|(k, _)| k == name)
            {
                env.push((name.to_string(), v));
            }
        }
        let slots = Slots { free: Mutex::new(config.concurrency.max(1)), freed: Condvar::new() };
        Ok(CommandSummarizer {
            config,
            program,
            identity,
            env,
            slots,
            stats: Mutex::new(CommandStats::default()),
            failures: Mutex::new(Vec::new()),
        })
    }

    pub fn config(&self) -> &CommandConfig {
        &self.config
    }

    /// A hash naming the program: its argv and the contents of the files it
    /// names. Part of the cache key, and of a baseline's parameters.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The counts so far; the reason shown is that of the first failure in
    /// sorted order, the same at any number of threads.
    pub fn stats(&self) -> CommandStats {
        let mut s = self.stats.lock().map(|s| s.clone()).unwrap_or_default();
        s.first_reason = self.failures().into_iter().next();
        s
    }

    /// Every failure so far, one line each, sorted (threads finish in any order).
    pub fn failures(&self) -> Vec<String> {
        let mut v = self.failures.lock().map(|f| f.clone()).unwrap_or_default();
        v.sort();
        v
    }

    fn count(&self, f: impl FnOnce(&mut CommandStats)) {
        if let Ok(mut s) = self.stats.lock() {
            f(&mut s);
        }
    }

    /// `text` with the value of every variable passed to the program (an API
    /// key in `compact.command_env`) replaced: a program that prints its key
    /// on stderr does not put it in the report.
    fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (name, value) in &self.env {
            if let Some(v) = value.to_str().filter(|v| name != "PATH" && v.trim().len() >= 8) {
                out = out.replace(v.trim(), &format!("[${name}]"));
            }
        }
        out
    }

    fn cache_path(&self, key: &str) -> Option<PathBuf> {
        let dir = self.config.cache_dir.as_ref()?;
        Some(dir.join("command").join(LAYOUT).join(&key[..2]).join(format!("{key}.json")))
    }

    /// The program's answer to `request`: from the cache, else from a run.
    fn answer(&self, req: &SummaryRequest<'_>, request: &Value) -> Result<Entry, String> {
        let key = self.cache_key(request);
        if let Some(path) = self.cache_path(&key)
            && let Ok(bytes) = std::fs::read(&path)
            && let Ok(hit) = serde_json::from_slice::<Entry>(&bytes)
        {
            self.count(|s| s.cache_hits += 1);
            return Ok(hit);
        }
        let input = serde_json::to_vec(request).map_err(|e| format!("cannot write the request: {e}"))?;
        let finished = {
            let _slot = self.slots.take();
            self.count(|s| s.runs += 1);
            let spec = Spec {
                program: &self.program,
                args: self.config.argv.get(1..).unwrap_or_default(),
                dir: &self.config.dir,
                env: &self.env,
                timeout: self.config.timeout,
                max_stdout: MAX_ANSWER_BYTES,
                stderr_tail: STDERR_KEPT_CHARS * 4,
            };
            command_run::run(&spec, input)
        };
        let entry = self.read_answer(req, finished)?;
        if let Some(path) = self.cache_path(&key) {
            let written = path.parent().map(std::fs::create_dir_all).transpose().and_then(|_| {
                serde_json::to_vec_pretty(&entry).map_err(std::io::Error::other).and_then(|b| atomic_write(&path, &b))
            });
            // An unwritable cache costs a rerun, nothing else.
            let _ = written;
        }
        Ok(entry)
    }

    fn read_answer(&self, req: &SummaryRequest<'_>, run: Result<Finished, Stopped>) -> Result<Entry, String> {
        let secs = self.config.timeout.as_secs_f64();
        let f = match run {
            Ok(f) => f,
            Err(Stopped::Spawn(e)) => {
                return Err(format!("cannot start `{}` in {}: {e}", self.program.display(), self.config.dir.display()));
            }
            Err(Stopped::TimedOut { stderr }) => {
                return Err(with_stderr(format!("it ran past its timeout of {secs} s and was stopped"), &stderr));
            }
            Err(Stopped::TooMuchOutput { stderr }) => {
                let msg = format!("its answer is larger than {} MiB", MAX_ANSWER_BYTES >> 20);
                return Err(with_stderr(msg, &stderr));
            }
            Err(Stopped::Interrupted) => return Err("interrupted".into()),
            Err(Stopped::PipesHeld { stderr }) => {
                let msg = "it ended, but a process it started in a session of its own kept its output open";
                return Err(with_stderr(msg.into(), &stderr));
            }
        };
        if !f.status.success() {
            return Err(with_stderr(format!("it exited with {}", exit_text(f.status)), &f.stderr));
        }
        let text = String::from_utf8(f.stdout).map_err(|e| {
            with_stderr(
                format!("its answer is not UTF-8 (invalid byte at {})", e.utf8_error().valid_up_to()),
                &f.stderr,
            )
        })?;
        let trimmed = text.trim();
        let entry = if trimmed.starts_with('{') {
            let a: JsonAnswer = serde_json::from_str(trimmed).map_err(|e| {
                let msg =
                    format!("its answer starts with `{{` but is not the JSON answer {{summary, usage?, model?}}: {e}");
                with_stderr(msg, &f.stderr)
            })?;
            let usage = a.usage.map_or_else(SummarizerUsage::default, |u| SummarizerUsage {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
                calls: 1,
            });
            Entry { summary: a.summary.trim().to_string(), usage, model: a.model }
        } else {
            Entry { summary: trimmed.to_string(), usage: SummarizerUsage::default(), model: None }
        };
        if entry.summary.is_empty() {
            return Err(with_stderr("its answer is empty".into(), &f.stderr));
        }
        let tokens = req.estimator.text_tokens(&entry.summary);
        let limit = (req.max_tokens as f64 * OVERSIZE_FACTOR).ceil() as u64;
        if tokens > limit {
            return Err(format!(
                "its summary of ~{tokens} tokens is more than {OVERSIZE_FACTOR} times its budget of {} tokens",
                req.max_tokens
            ));
        }
        Ok(entry)
    }

    fn cache_key(&self, request: &Value) -> String {
        // The policy's name is for the program's logs: two policies (sweep
        // points) asking the same share one answer.
        let mut keyed = request.clone();
        if let Some(o) = keyed.as_object_mut() {
            o.remove("policy");
        }
        let mut h = blake3::Hasher::new();
        for part in [LAYOUT, self.identity.as_str()] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update(serde_json::to_string(&keyed).unwrap_or_default().as_bytes());
        h.finalize().to_hex().to_string()
    }
}

/// The request a program reads (schema in docs/command-summarizer.md).
pub fn request_json(req: &SummaryRequest<'_>) -> Value {
    let none: &[&Message] = &[];
    let (part, messages, prefix) = match req.part {
        SummaryPart::History => ("history", req.messages, none),
        SummaryPart::TurnPrefix => ("turn_prefix", none, req.messages),
    };
    let session = req.context.map(|c| {
        let s = c.session;
        json!({
            "id": s.id,
            "format": s.format.name(),
            "cwd": s.meta.cwd,
            "model": s.meta.models.first(),
        })
    });
    json!({
        "schema_version": SCHEMA_VERSION,
        "part": part,
        "session": session,
        "policy": req.context.map(|c| c.policy),
        "messages": messages,
        "previous_summary": req.previous_summary,
        "turn_prefix": prefix,
        "budget_tokens": req.max_tokens,
        "file_ops": req.file_ops,
    })
}

fn exit_text(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("signal {sig}");
        }
    }
    match status.code() {
        Some(c) => format!("status {c}"),
        None => "an unknown status".into(),
    }
}

/// `msg`, and the end of stderr when it said anything.
fn with_stderr(msg: String, stderr: &str) -> String {
    let s = stderr.trim();
    if s.is_empty() {
        return msg;
    }
    let n = s.chars().count();
    let tail = super::tail_chars(s, STDERR_KEPT_CHARS);
    let cut = if n > STDERR_KEPT_CHARS { "…" } else { "" };
    format!("{msg}; stderr: {cut}{tail}")
}

/// Hash of the argv and of every file it names (read from `dir`), so an edit
/// to the program or its prompt is a new cache key.
fn identity(argv: &[String], dir: &Path, program: &Path) -> String {
    let mut h = blake3::Hasher::new();
    for a in argv {
        h.update(&(a.len() as u64).to_le_bytes());
        h.update(a.as_bytes());
    }
    let files = std::iter::once(program.to_path_buf()).chain(argv.iter().skip(1).map(|a| dir.join(a)));
    for path in files {
        if path.is_file()
            && let Ok(bytes) = std::fs::read(&path)
        {
            h.update(b"file");
            h.update(blake3::hash(&bytes).as_bytes());
        }
    }
    h.finalize().to_hex().to_string()
}

impl Summarizer for CommandSummarizer {
    fn name(&self) -> &str {
        "command"
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        self.count(|s| s.requested += 1);
        let request = request_json(req);
        match self.answer(req, &request) {
            Ok(entry) => {
                let file_ops = Extractive.summarize(req).map(|s| s.file_ops).unwrap_or_default();
                Ok(Summary { text: entry.summary, file_ops, usage: entry.usage, fallback: None })
            }
            Err(reason) => {
                let reason = format!("the summarizer program failed: {}", self.scrub(&reason));
                let where_ = match req.context {
                    Some(c) => format!("session {}, policy {}", c.session.id, c.policy),
                    None => "a compaction".into(),
                };
                let line = req.messages.first().map_or(0, |m| m.source_line);
                if let Ok(mut f) = self.failures.lock() {
                    f.push(format!("{where_}, compaction at source line {line}: {reason}"));
                }
                self.count(|s| s.fell_back += 1);
                let mut s = Extractive.summarize(req)?;
                s.fallback = Some(reason);
                Ok(s)
            }
        }
    }
}
