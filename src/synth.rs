//! Deterministic synthetic Claude Code session logs, for benchmarks and tests
//! (DESIGN.md §9, `scripts/bench.sh`). Not part of the public API.
//!
//! The logs are shaped like the real ones (log-formats.md §1) in the ways that cost
//! time downstream:
//! - one API response is written one content block per line, every line repeating
//!   `message.id`, `requestId` and the usage, early lines with a partial
//!   `output_tokens` and the last with the final count;
//! - tool results are separate user records carrying both the `tool_result` block
//!   and the duplicated structured `toolUseResult`, so that together they make
//!   about 60% of the bytes, as in real logs;
//! - thinking blocks with signatures (full text in older versions, empty in 2.1.9x),
//!   a few small base64 images, `is_error` results, bookkeeping lines;
//! - usage grows with the context the way a real session's does (cache read = the
//!   previous prompt, cache creation = what was added since), and the agent
//!   auto-compacts (`compact_boundary` + `isCompactSummary`) when the context
//!   passes a threshold, so long sessions keep plausible numbers.
//!
//! Everything comes from one seed through a small splitmix64 generator: the same
//! seed gives the same bytes (on a given platform; log-normal draws use `f64`).

mod encode;
pub mod floor;
mod style;
mod text;
mod tools;

use style::{STYLES, Style};

#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use encode::*;
pub use encode::{iso8601, json_str};

/// Bumped whenever the output for a given seed changes, so cached corpora made by
/// an older generator are not reused.
pub const SYNTH_VERSION: u32 = 1;
/// Largest session a corpus plan asks for.
pub const MAX_SESSION_BYTES: u64 = 40_000_000;
/// Smallest session a corpus plan asks for (one short turn is about this size).
pub const MIN_SESSION_BYTES: u64 = 8_000;
/// Context size (estimated tokens) above which the synthetic agent auto-compacts,
/// about where Claude Code does for a 200K window.
pub const DEFAULT_COMPACT_AT: u64 = 160_000;

/// splitmix64: tiny, fast, and good enough for shaping test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift (no modulo bias worth caring about).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n.max(1))) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo) + 1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Log-normal with the given median and shape.
    pub fn log_normal(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }

    /// Log-normal size clamped to `[lo, hi]`.
    pub fn size(&mut self, median: f64, sigma: f64, lo: usize, hi: usize) -> usize {
        (self.log_normal(median, sigma) as usize).clamp(lo, hi.max(lo))
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

/// How long a generated session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// Exactly this many human prompts (for replay-time linearity runs).
    Turns(usize),
    /// Stop after the turn that reaches this many bytes; tool outputs shrink as the
    /// budget runs out so the session lands close to it.
    Bytes(u64),
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionSpec {
    pub seed: u64,
    pub length: Length,
    /// Auto-compact when the estimated context passes this many tokens; `None`
    /// lets the context grow without bound (usage then stops being realistic).
    pub compact_at: Option<u64>,
    /// Which synthetic project (working directory) the session belongs to.
    pub project: u32,
}

impl SessionSpec {
    pub fn turns(seed: u64, turns: usize) -> SessionSpec {
        SessionSpec { seed, length: Length::Turns(turns), compact_at: Some(DEFAULT_COMPACT_AT), project: 0 }
    }

    pub fn bytes(seed: u64, bytes: u64) -> SessionSpec {
        SessionSpec { seed, length: Length::Bytes(bytes), compact_at: Some(DEFAULT_COMPACT_AT), project: 0 }
    }
}

/// What the generator wrote, for tests to compare with what a reader finds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SynthStats {
    pub lines: u64,
    pub human_turns: u64,
    /// API responses (each one `message.id`, written over several lines).
    pub calls: u64,
    /// Lines carrying `message.usage` (every block-line of a response).
    pub usage_lines: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    pub thinking_blocks: u64,
    pub images: u64,
    pub compactions: u64,
    /// Bytes of the tool-result user records, newline included.
    pub tool_result_bytes: u64,
}

/// One generated session file.
#[derive(Debug, Clone)]
pub struct GeneratedSession {
    pub session_id: String,
    /// The working directory recorded in the session.
    pub cwd: String,
    pub data: Vec<u8>,
    pub stats: SynthStats,
}

impl GeneratedSession {
    /// Where Claude Code would keep this file, relative to `~/.claude/projects`:
    /// `<encoded cwd>/<session id>.jsonl`.
    pub fn relative_path(&self) -> String {
        format!("{}/{}.jsonl", encode_cwd(&self.cwd), self.session_id)
    }
}

/// Claude Code's project directory name: the cwd with `/` and `.` replaced by `-`.
pub fn encode_cwd(cwd: &str) -> String {
    cwd.chars().map(|c| if c == '/' || c == '.' { '-' } else { c }).collect()
}

const PROJECTS: &[&str] =
    &["api-server", "web-app", "compactor", "infra", "data-pipeline", "mobile", "docs-site", "ml-eval", "cli-tools"];

/// Working directory of synthetic project `p`.
pub fn project_cwd(p: u32) -> String {
    let name = PROJECTS[p as usize % PROJECTS.len()];
    match p as usize / PROJECTS.len() {
        0 => format!("/home/dev/src/{name}"),
        n => format!("/home/dev/src/{name}-{n}"),
    }
}

/// The sessions of a corpus of about `total_bytes`: log-normal sizes (median
/// 200 KB, a long tail clamped at [`MAX_SESSION_BYTES`]), the last one taking the
/// remainder so the total lands on the request.
pub fn plan_corpus(seed: u64, total_bytes: u64) -> Vec<SessionSpec> {
    let mut rng = Rng::new(seed ^ 0xC0FF_EE00_5EED_0001);
    let projects = (total_bytes / 8_000_000).clamp(1, 200);
    let mut planned = 0u64;
    let mut out = Vec::new();
    while planned < total_bytes {
        let remaining = total_bytes - planned;
        let mut size = (rng.log_normal(200_000.0, 1.8) as u64).clamp(MIN_SESSION_BYTES, MAX_SESSION_BYTES);
        if remaining < size + MIN_SESSION_BYTES {
            size = remaining.max(MIN_SESSION_BYTES);
        }
        let spec = SessionSpec {
            seed: rng.next_u64(),
            length: Length::Bytes(size),
            compact_at: Some(DEFAULT_COMPACT_AT),
            project: rng.below(projects) as u32,
        };
        out.push(spec);
        planned += size;
    }
    out
}

/// Parse a size such as `500MB`, `50M`, `1.5GB`, `64KiB` or `1000` (bytes).
/// Decimal units are powers of 1000, `KiB`/`MiB`/`GiB` powers of 1024.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = n * mult;
    (bytes.is_finite() && bytes >= 1.0).then_some(bytes as u64)
}

/// Generate one session.
pub fn generate_session(spec: &SessionSpec) -> GeneratedSession {
    let mut g = Gen::new(spec);
    g.run(spec.length);
    GeneratedSession { session_id: g.session_id, cwd: g.cwd, data: g.out, stats: g.stats }
}

/// Estimated tokens of a text (chars / 4), the generator's notion of context size.
fn tokens_of(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

struct Gen {
    rng: Rng,
    style: Style,
    out: Vec<u8>,
    stats: SynthStats,
    session_id: String,
    cwd: String,
    branch: String,
    /// Milliseconds since the epoch of the next record.
    now: i64,
    last_uuid: Option<String>,
    budget: Option<u64>,
    compact_at: Option<u64>,
    thinking: bool,
    /// Estimated tokens of the system prompt and tool definitions.
    system_tokens: u64,
    /// Estimated tokens the next request sends (system + history).
    context: u64,
    /// Tokens of the prompt prefix cached by the previous request.
    cached: u64,
    /// Files the agent has touched, reused so Reads and Edits hit the same paths.
    files: Vec<String>,
    last_prompt: String,
}

impl Gen {
    fn new(spec: &SessionSpec) -> Gen {
        let mut rng = Rng::new(spec.seed);
        let style = *rng.pick(STYLES);
        let session_id = uuid(&mut rng);
        let branch = match rng.below(4) {
            0 => "main".to_string(),
            1 => "HEAD".to_string(),
            _ => {
                let mut b = String::from("feat/");
                text::ident(&mut rng, &mut b);
                b.replace('_', "-")
            }
        };
        // 2025-06-01 .. 2026-05-01
        let now = 1_748_736_000_000 + rng.below(334 * 86_400_000) as i64;
        let system_tokens = rng.range(9_000, 24_000);
        let thinking = rng.chance(0.8);
        let budget = match spec.length {
            Length::Bytes(b) => Some(b),
            Length::Turns(_) => None,
        };
        let cap = match spec.length {
            Length::Bytes(b) => (b as usize).saturating_add(64 * 1024),
            Length::Turns(n) => n.saturating_mul(40 * 1024),
        };
        Gen {
            rng,
            style,
            out: Vec::with_capacity(cap.min(64 << 20)),
            stats: SynthStats::default(),
            session_id,
            cwd: project_cwd(spec.project),
            branch,
            now,
            last_uuid: None,
            budget,
            compact_at: spec.compact_at,
            thinking,
            system_tokens,
            context: system_tokens,
            cached: 0,
            files: Vec::new(),
            last_prompt: String::new(),
        }
    }

    /// Bytes still wanted, or `None` when the length is a turn count.
    fn room(&self) -> Option<usize> {
        self.budget.map(|b| b.saturating_sub(self.out.len() as u64) as usize)
    }

    /// Whether the session should wrap up: the closing call of a turn (answer,
    /// usage-laden envelopes) takes about this much, so stop starting new work
    /// before the budget is quite gone.
    fn over_budget(&self) -> bool {
        self.room().is_some_and(|r| r <= 2_000)
    }

    /// Cap a content size so that a session near its byte budget does not overshoot
    /// it by one huge tool output.
    fn fit(&self, want: usize) -> usize {
        match self.room() {
            Some(r) => want.min((r / 3).max(64)),
            None => want,
        }
    }

    /// A log-normal content size, fitted to the remaining budget.
    fn sized(&mut self, median: f64, sigma: f64, lo: usize, hi: usize) -> usize {
        let n = self.rng.size(median, sigma, lo, hi);
        self.fit(n)
    }

    fn run(&mut self, length: Length) {
        self.preamble();
        let mut turn = 0usize;
        loop {
            let more = match length {
                Length::Turns(n) => turn < n,
                Length::Bytes(_) => turn == 0 || !self.over_budget(),
            };
            if !more {
                break;
            }
            self.human_turn(turn);
            turn += 1;
        }
        self.epilogue();
    }

    // ---------------------------------------------------------------- records

    fn tick(&mut self, lo: u64, hi: u64) {
        self.now += self.rng.range(lo, hi) as i64;
    }

    /// Start a conversation record: `{"parentUuid":…,` … `"gitBranch":…,`.
    fn head(&mut self, parent: Option<&str>) {
        self.out.extend_from_slice(b"{\"parentUuid\":");
        match parent {
            Some(p) => json_str(&mut self.out, p),
            None => self.out.extend_from_slice(b"null"),
        }
        self.out.extend_from_slice(b",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":");
        json_str(&mut self.out, &self.cwd);
        self.out.extend_from_slice(b",\"sessionId\":");
        json_str(&mut self.out, &self.session_id);
        self.out.extend_from_slice(b",\"version\":");
        json_str(&mut self.out, self.style.version);
        self.out.extend_from_slice(b",\"gitBranch\":");
        json_str(&mut self.out, &self.branch);
        self.out.push(b',');
    }

    /// Finish a conversation record: `"type":…,"uuid":…,"timestamp":…}` and a newline.
    /// The record becomes the parent of the next one.
    fn tail(&mut self, kind: &str, uuid: String) {
        self.out.extend_from_slice(b"\"type\":");
        json_str(&mut self.out, kind);
        self.out.extend_from_slice(b",\"uuid\":");
        json_str(&mut self.out, &uuid);
        self.out.extend_from_slice(b",\"timestamp\":");
        json_str(&mut self.out, &iso8601(self.now));
        self.out.extend_from_slice(b"}\n");
        self.stats.lines += 1;
        self.last_uuid = Some(uuid);
    }

    /// A bookkeeping line (no uuid, no timestamp), written as given.
    fn bookkeeping(&mut self, line: &str) {
        self.out.extend_from_slice(line.as_bytes());
        self.out.push(b'\n');
        self.stats.lines += 1;
    }

    fn preamble(&mut self) {
        if self.style.v21 {
            let line = format!(
                "{{\"type\":\"permission-mode\",\"permissionMode\":\"default\",\"sessionId\":\"{}\"}}",
                self.session_id
            );
            self.bookkeeping(&line);
        } else {
            // Older versions start files with resume-picker titles that name other
            // sessions' leaves.
            for _ in 0..self.rng.below(3) {
                let mut title = String::new();
                text::prose(&mut self.rng, &mut title, 30);
                let title = title.trim().trim_end_matches(['.', ':', '?']).to_string();
                let leaf = uuid(&mut self.rng);
                let mut line = String::from("{\"type\":\"summary\",\"summary\":");
                push_json_string(&mut line, &title);
                let _ = write!(line, ",\"leafUuid\":\"{leaf}\"}}");
                self.bookkeeping(&line);
            }
        }
    }

    fn epilogue(&mut self) {
        if self.style.v21 && !self.last_prompt.is_empty() {
            let mut line = String::from("{\"type\":\"last-prompt\",\"lastPrompt\":");
            let prompt: String = self.last_prompt.chars().take(200).collect();
            push_json_string(&mut line, &prompt);
            let _ = write!(line, ",\"sessionId\":\"{}\"}}", self.session_id);
            self.bookkeeping(&line);
        }
    }

    // ---------------------------------------------------------------- turns

    fn human_turn(&mut self, turn: usize) {
        // Auto-compaction happens before the prompt that would overflow.
        if turn > 0
            && let Some(limit) = self.compact_at
            && self.context > limit
        {
            self.compaction();
        }
        // A human pause: minutes, sometimes long enough for the cache to expire.
        self.tick(8_000, 600_000);
        if turn > 0 && self.rng.chance(0.12) {
            self.cached = 0;
        }

        let prompt_uuid = uuid(&mut self.rng);
        let snapshot = format!(
            "{{\"type\":\"file-history-snapshot\",\"messageId\":\"{prompt_uuid}\",\"snapshot\":{{\"messageId\":\"{prompt_uuid}\",\"trackedFileBackups\":{{}},\"timestamp\":\"{}\"}},\"isSnapshotUpdate\":false}}",
            iso8601(self.now)
        );
        self.bookkeeping(&snapshot);

        let mut prompt = String::new();
        let want = self.rng.size(220.0, 0.9, 20, 2_000);
        text::prose(&mut self.rng, &mut prompt, want);
        if self.rng.chance(0.15) {
            // Pasted error output or code.
            prompt.push_str("\n\n```\n");
            let pasted = self.sized(1_500.0, 0.8, 200, 12_000);
            if self.rng.chance(0.5) {
                text::log(&mut self.rng, &mut prompt, pasted);
            } else {
                text::code(&mut self.rng, &mut prompt, pasted, 0);
            }
            prompt.push_str("```");
        }
        let image = self.rng.chance(0.02);
        let parent = self.last_uuid.take();
        self.head(parent.as_deref());
        if self.style.v21 {
            let pid = uuid(&mut self.rng);
            let _ = write!(Sink(&mut self.out), "\"promptId\":\"{pid}\",\"permissionMode\":\"default\",");
        }
        self.out.extend_from_slice(b"\"message\":{\"role\":\"user\",\"content\":");
        let mut image_tokens = 0;
        if image {
            prompt.insert_str(0, "[Image #1]\n");
            self.out.extend_from_slice(b"[{\"type\":\"text\",\"text\":");
            json_str(&mut self.out, &prompt);
            self.out.extend_from_slice(b"},");
            image_tokens = self.image_block();
            self.out.extend_from_slice(b"]}");
            self.out.extend_from_slice(b",\"imagePasteIds\":[1],");
        } else {
            json_str(&mut self.out, &prompt);
            self.out.extend_from_slice(b"},");
        }
        self.tail("user", prompt_uuid);
        self.stats.human_turns += 1;
        self.context += tokens_of(prompt.len()) + image_tokens;
        self.last_prompt = prompt;

        let turn_start = self.now;
        // Agentic loop: a few tool rounds, heavy tail.
        let calls = self.rng.size(4.0, 0.8, 1, 40);
        for c in 0..calls {
            let last = c + 1 == calls || self.over_budget();
            self.call(last);
            if last {
                break;
            }
        }
        if self.style.v21 {
            self.tick(5, 50);
            let parent = self.last_uuid.take();
            self.head(parent.as_deref());
            let ms = self.now - turn_start;
            let _ = write!(
                Sink(&mut self.out),
                "\"subtype\":\"turn_duration\",\"durationMs\":{ms},\"messageCount\":{},\"isMeta\":false,",
                calls * 2 + 1
            );
            let id = uuid(&mut self.rng);
            self.tail("system", id);
        }
    }

    /// An auto-compaction: boundary record, then the summary user record. The
    /// context restarts from the system prompt plus the summary.
    fn compaction(&mut self) {
        self.tick(20_000, 90_000);
        let logical = self.last_uuid.take();
        self.head(None);
        if let Some(l) = &logical {
            self.out.extend_from_slice(b"\"logicalParentUuid\":");
            json_str(&mut self.out, l);
            self.out.push(b',');
        }
        let _ = write!(
            Sink(&mut self.out),
            "\"subtype\":\"compact_boundary\",\"content\":\"Conversation compacted\",\"isMeta\":false,\"level\":\"info\",\"compactMetadata\":{{\"trigger\":\"auto\",\"preTokens\":{}}},",
            self.context
        );
        let id = uuid(&mut self.rng);
        self.tail("system", id);

        let mut summary = String::from(
            "This session is being continued from a previous conversation that ran out of context. \
             The conversation is summarized below:\nAnalysis:\n",
        );
        let n = self.rng.size(2_500.0, 0.4, 800, 8_000);
        text::prose(&mut self.rng, &mut summary, n);
        summary.push_str("\n\nSummary:\n1. Primary Request and Intent:\n");
        let n = self.rng.size(3_000.0, 0.5, 800, 12_000);
        text::answer(&mut self.rng, &mut summary, n);
        summary.push_str("\n2. Key Files:\n");
        for _ in 0..self.rng.range(3, 10) {
            let f = self.file_path();
            let _ = writeln!(summary, "- {f}");
        }
        let parent = self.last_uuid.take();
        self.head(parent.as_deref());
        self.out.extend_from_slice(b"\"message\":{\"role\":\"user\",\"content\":");
        json_str(&mut self.out, &summary);
        self.out.extend_from_slice(b"},\"isVisibleInTranscriptOnly\":true,\"isCompactSummary\":true,");
        let id = uuid(&mut self.rng);
        self.tail("user", id);
        self.stats.compactions += 1;
        self.context = self.system_tokens + tokens_of(summary.len());
        self.cached = 0;
    }

    /// One API call: the response's block-lines, then a result record per tool use.
    fn call(&mut self, last: bool) {
        let msg_id = format!("msg_01{}", base62(&mut self.rng, 22));
        let req_id = format!("req_011C{}", base62(&mut self.rng, 20));
        // Usage: Claude Code caches up to the end of each prompt, so the prompt of
        // this call = what the previous one cached + what was added since.
        let prompt = self.context;
        let uncached = self.rng.range(1, 9).min(prompt);
        let cache_read = if self.cached == 0 {
            // Cold cache: the shared system prompt is usually still warm.
            if self.rng.chance(0.7) { self.system_tokens * 3 / 4 } else { 0 }
        } else {
            self.cached
        }
        .min(prompt - uncached);
        let cache_write = prompt - uncached - cache_read;

        // Blocks, rendered first: the final output_tokens must be known for the
        // last line.
        let mut blocks: Vec<Vec<u8>> = Vec::new();
        let mut visible = 0usize;
        let mut hidden = 0u64;
        if self.thinking && self.rng.chance(0.7) {
            let mut b = Vec::new();
            b.extend_from_slice(b"{\"type\":\"thinking\",\"thinking\":");
            if self.style.thinking_text {
                let mut t = String::new();
                let n = self.sized(700.0, 0.9, 40, 12_000);
                text::prose(&mut self.rng, &mut t, n);
                json_str(&mut b, &t);
                hidden += tokens_of(t.len());
            } else {
                b.extend_from_slice(b"\"\"");
                hidden += self.rng.range(40, 1_200);
            }
            b.extend_from_slice(b",\"signature\":");
            let sig_len = self.rng.size(600.0, 0.6, 120, 4_000);
            let sig = base64_random(&mut self.rng, sig_len, "Er");
            json_str(&mut b, &sig);
            b.push(b'}');
            blocks.push(b);
            self.stats.thinking_blocks += 1;
        }
        if last || self.rng.chance(0.45) {
            let mut t = String::new();
            if last {
                let n = self.sized(900.0, 0.8, 40, 10_000);
                text::answer(&mut self.rng, &mut t, n);
            } else {
                let n = self.rng.size(120.0, 0.6, 20, 800);
                text::prose(&mut self.rng, &mut t, n);
            }
            let mut b = Vec::new();
            b.extend_from_slice(b"{\"type\":\"text\",\"text\":");
            json_str(&mut b, t.trim_end());
            b.push(b'}');
            visible += t.len();
            blocks.push(b);
        }
        let mut tools = Vec::new();
        if !last {
            let n = match self.rng.below(100) {
                0..75 => 1,
                75..93 => 2,
                _ => 3,
            };
            for _ in 0..n {
                tools.push(self.tool_call());
            }
        }
        for t in &tools {
            let mut b = Vec::new();
            b.extend_from_slice(b"{\"type\":\"tool_use\",\"id\":");
            json_str(&mut b, &t.id);
            b.extend_from_slice(b",\"name\":");
            json_str(&mut b, t.tool.name());
            b.extend_from_slice(b",\"input\":");
            b.extend_from_slice(&t.input);
            if self.style.v21 {
                b.extend_from_slice(b",\"caller\":{\"type\":\"direct\"}");
            }
            b.push(b'}');
            visible += t.input.len() + t.tool.name().len();
            blocks.push(b);
        }
        if blocks.is_empty() {
            let mut b = Vec::new();
            b.extend_from_slice(b"{\"type\":\"text\",\"text\":\"Done.\"}");
            visible += 5;
            blocks.push(b);
        }
        let output = tokens_of(visible) + hidden;
        let partial = self.rng.range(1, 12).min(output);
        let stop = if tools.is_empty() { "end_turn" } else { "tool_use" };

        self.tick(800, 9_000);
        let n = blocks.len();
        let mut assistant_uuid = String::new();
        for (i, b) in blocks.iter().enumerate() {
            let final_line = i + 1 == n;
            let parent = self.last_uuid.take();
            self.head(parent.as_deref());
            self.out.extend_from_slice(b"\"message\":{\"model\":");
            json_str(&mut self.out, self.style.model);
            self.out.extend_from_slice(b",\"id\":");
            json_str(&mut self.out, &msg_id);
            self.out.extend_from_slice(b",\"type\":\"message\",\"role\":\"assistant\",\"content\":[");
            self.out.extend_from_slice(b);
            self.out.extend_from_slice(b"],\"stop_reason\":");
            if final_line || self.style.stop_every_line {
                json_str(&mut self.out, stop);
            } else {
                self.out.extend_from_slice(b"null");
            }
            self.out.extend_from_slice(b",\"stop_sequence\":null,\"usage\":");
            let out_tokens = if final_line { output } else { partial };
            self.usage(uncached, cache_write, cache_read, out_tokens);
            self.out.extend_from_slice(b"},\"requestId\":");
            json_str(&mut self.out, &req_id);
            self.out.push(b',');
            let id = uuid(&mut self.rng);
            assistant_uuid.clone_from(&id);
            self.tail("assistant", id);
            self.stats.usage_lines += 1;
            self.tick(5, 400);
        }
        self.stats.calls += 1;
        self.cached = prompt;
        self.context += tokens_of(visible);

        for t in tools {
            // Tool execution time.
            self.tick(30, 20_000);
            let start = self.out.len();
            let parent = self.last_uuid.take();
            self.head(parent.as_deref());
            self.out.extend_from_slice(b"\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":");
            json_str(&mut self.out, &t.id);
            self.out.extend_from_slice(b",\"type\":\"tool_result\",\"content\":");
            self.out.extend_from_slice(&t.content);
            if t.is_error {
                self.out.extend_from_slice(b",\"is_error\":true");
            } else if self.style.v21 {
                self.out.extend_from_slice(b",\"is_error\":false");
            }
            self.out.extend_from_slice(b"}]},\"toolUseResult\":");
            self.out.extend_from_slice(&t.tool_use_result);
            self.out.push(b',');
            if self.style.v21 {
                self.out.extend_from_slice(b"\"sourceToolAssistantUUID\":");
                json_str(&mut self.out, &assistant_uuid);
                self.out.push(b',');
            }
            let id = uuid(&mut self.rng);
            self.tail("user", id);
            self.stats.tool_result_bytes += (self.out.len() - start) as u64;
            self.stats.tool_calls += 1;
            self.stats.tool_errors += u64::from(t.is_error);
            self.context += t.result_tokens;
        }
    }

    fn usage(&mut self, uncached: u64, cache_write: u64, cache_read: u64, output: u64) {
        let o = &mut Sink(&mut self.out);
        if self.style.v21 {
            let _ = write!(
                o,
                "{{\"input_tokens\":{uncached},\"cache_creation_input_tokens\":{cache_write},\"cache_read_input_tokens\":{cache_read},\"output_tokens\":{output},\"server_tool_use\":{{\"web_search_requests\":0,\"web_fetch_requests\":0}},\"service_tier\":\"standard\",\"cache_creation\":{{\"ephemeral_1h_input_tokens\":{cache_write},\"ephemeral_5m_input_tokens\":0}},\"inference_geo\":\"\",\"iterations\":[],\"speed\":\"standard\"}}"
            );
        } else {
            let _ = write!(
                o,
                "{{\"input_tokens\":{uncached},\"cache_creation_input_tokens\":{cache_write},\"cache_read_input_tokens\":{cache_read},\"cache_creation\":{{\"ephemeral_5m_input_tokens\":{cache_write},\"ephemeral_1h_input_tokens\":0}},\"output_tokens\":{output},\"service_tier\":\"standard\"}}"
            );
        }
    }

    /// Write a small base64 PNG image block; returns its estimated tokens.
    fn image_block(&mut self) -> u64 {
        let n = self.rng.size(6_000.0, 0.6, 1_500, 40_000);
        let data = base64_random(&mut self.rng, n, "iVBORw0KGgoAAAANSUhEUgAA");
        self.out.extend_from_slice(
            b"{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":",
        );
        json_str(&mut self.out, &data);
        self.out.extend_from_slice(b"}}");
        self.stats.images += 1;
        self.rng.range(800, 1_600)
    }

    // ---------------------------------------------------------------- tools

    /// An absolute path under the project, often one already touched.
    fn file_path(&mut self) -> String {
        if !self.files.is_empty() && self.rng.chance(0.6) {
            return self.rng.pick(&self.files).clone();
        }
        let mut p = self.cwd.clone();
        p.push('/');
        text::path(&mut self.rng, &mut p);
        if self.files.len() < 64 {
            self.files.push(p.clone());
        } else {
            let i = self.rng.below(64) as usize;
            self.files[i].clone_from(&p);
        }
        p
    }
}
