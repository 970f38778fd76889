//! `compactor inspect`, library side: describe sessions as read — what they hold,
//! where their context goes, what the agent recorded (usage, compactions, API
//! errors), what the reader could not map — and how well each token estimator
//! matches the recorded prompt sizes. Pure: returns an [`InspectReport`], never
//! prints (the CLI renders it as tables or `--json`).
//!
//! Cost: every message is counted once per estimator (chars/4, per-block, o200k,
//! cl100k; `calibrated` reuses the chars/4 counts). BPE dominates, so sessions and
//! the messages of long sessions are counted in parallel (rayon).

use crate::accuracy::{AccuracyAccumulator, AccuracyRow, session_errors};
use crate::model::{
    ApiErrorKind, Block, CompactionKind, Diagnostic, Format, Message, Origin, Role, Session, UsageProvenance, json_len,
};
use crate::read::Batch;
use crate::tokens::{BPE_MESSAGE_OVERHEAD, Chars4, Cl100k, Estimator, EstimatorKind, MessageTokens, O200k, PerBlock};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Version of the `inspect --json` schema (docs/outputs.md, "inspect --json schema"). Bump on
/// any change that renames or removes a field or changes a field's meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// Tool name used in `tool_result:<tool>` when a result's `tool_use_id` matches no
/// tool call of the session.
pub const UNKNOWN_TOOL: &str = "?";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InspectReport {
    pub schema_version: u32,
    /// Sorted by (source path, id).
    pub sessions: Vec<SessionReport>,
    pub totals: Totals,
    /// Estimator accuracy; see [`crate::accuracy`].
    pub accuracy: Vec<AccuracyRow>,
    /// Inputs that could not be read at all.
    pub failures: Vec<Diagnostic>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub inputs_read: u64,
    pub inputs_failed: u64,
    pub sessions: u64,
    pub sessions_by_format: BTreeMap<Format, u64>,
    /// The per-session counts, summed (`usage.max_prompt` is the maximum).
    pub counts: Counts,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionReport {
    pub id: String,
    /// Project and title ([`crate::model::Session::display_name`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub format: Format,
    /// The agent that wrote the log where its format is written by several
    /// (`roo-code`, `kilo-code` for Cline's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub source_path: PathBuf,
    pub versions: Vec<String>,
    pub models: Vec<String>,
    /// Sub-agent kind (`Explore`, …) when known.
    pub agent_type: Option<String>,
    /// Parent session id when this is a sub-agent.
    pub parent: Option<String>,
    pub subagents: Vec<String>,
    /// Messages copied from the parent at the top of the log
    /// ([`crate::model::Session::inherited`]), and the parent's compactions
    /// among them (not in `compactions`).
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub inherited_messages: u64,
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub inherited_compactions: u64,
    pub counts: Counts,
    /// The session's own recorded compactions.
    pub compactions: Vec<CompactionSummary>,
}

/// Counts of one session, or of all of them in [`Totals`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub messages: u64,
    pub messages_by_role: BTreeMap<Role, u64>,
    pub messages_by_origin: BTreeMap<Origin, u64>,
    pub calls: u64,
    pub calls_with_usage: u64,
    /// Of those, calls whose usage is a share of a sum the log records over
    /// several requests (`codex exec --json`).
    pub calls_with_shared_usage: u64,
    pub tool_calls: u64,
    pub tool_calls_by_tool: BTreeMap<String, u64>,
    pub tool_results: u64,
    /// Tool results flagged as errors (`is_error: true`).
    pub tool_errors: u64,
    /// Where the context goes, by block kind; keys in [`ContextKey`].
    pub context: BTreeMap<String, KindStats>,
    /// Whole-message estimates of all messages (what the estimators count; differs
    /// from the sum of `context` by chars/4 rounding and BPE per-message framing).
    pub tokens: EstimatorTotals,
    pub usage: UsageTotals,
    pub compactions: u64,
    /// Tool outputs the agent's own clearings (Claude Code microcompacts,
    /// Gemini CLI masking) stopped sending in full.
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub cleared_outputs: u64,
    /// Responses the agent kept in its log but never sent on (pi's aborted
    /// and failed turns): in no later request.
    #[serde(default, skip_serializing_if = "crate::num::is_zero")]
    pub unsent_messages: u64,
    pub api_errors: BTreeMap<ApiErrorKind, u64>,
    pub diagnostics: DiagnosticCounts,
}

/// Size of one kind of content.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindStats {
    /// Blocks of this kind (a tool result counts once, whatever its content blocks).
    pub blocks: u64,
    /// Bytes as logged: UTF-8 text, compact JSON of tool inputs, encoded image
    /// payloads, opaque thinking payloads.
    pub bytes: u64,
    /// chars/4 tokens, rounded up per block.
    pub chars4: u64,
    /// o200k tokens.
    pub o200k: u64,
}

impl KindStats {
    fn add(&mut self, o: &KindStats) {
        self.blocks += o.blocks;
        self.bytes += o.bytes;
        self.chars4 += o.chars4;
        self.o200k += o.o200k;
    }
}

/// Σ per-message estimates over all messages of the session(s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EstimatorTotals {
    pub chars4: u64,
    pub per_block: u64,
    pub o200k: u64,
    pub cl100k: u64,
}

/// Recorded usage summed over calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageTotals {
    pub uncached_input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub output: u64,
    pub reasoning: u64,
    /// Largest recorded prompt (uncached + cache read + cache write) of one call.
    pub max_prompt: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticCounts {
    pub bad_lines: u64,
    /// Reader warnings (each is also printed as `path:line: reason`).
    pub warnings: u64,
    pub unknown_kinds: BTreeMap<String, u64>,
    pub skipped_kinds: BTreeMap<String, u64>,
    /// Content read as the agent sent it rather than as logged, by what was done.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sent_otherwise: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionSummary {
    pub kind: CompactionKind,
    pub source_line: u64,
    pub trigger: Option<String>,
    pub tokens_before: Option<u64>,
    pub kept_messages: u64,
    pub inserted_messages: u64,
}

/// The kinds of content `Counts::context` is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ContextKey<'a> {
    /// `text:user`, `text:assistant`, `text:system` by role; user-role text that is
    /// not typed by a person gets its origin instead: `text:injected`,
    /// `text:compact_summary`, `text:synthetic_error`.
    Text(&'a str),
    /// `thinking`: thinking text.
    Thinking,
    /// `thinking_opaque`: signatures / encrypted reasoning (bytes only, 0 tokens).
    ThinkingOpaque,
    /// `tool_use`: tool names + JSON inputs.
    ToolUse,
    /// `tool_result:<tool>`: tool output by the name of the tool that produced it.
    ToolResult(&'a str),
    /// `image`: images anywhere, tool results included.
    Image,
    /// `document`: PDFs and other media that are not images, anywhere.
    Document,
    /// `other`: blocks the reader kept raw.
    Other,
}

impl ContextKey<'_> {
    pub fn key(&self) -> String {
        match self {
            ContextKey::Text(who) => format!("text:{who}"),
            ContextKey::Thinking => "thinking".to_string(),
            ContextKey::ThinkingOpaque => "thinking_opaque".to_string(),
            ContextKey::ToolUse => "tool_use".to_string(),
            ContextKey::ToolResult(tool) => format!("tool_result:{tool}"),
            ContextKey::Image => "image".to_string(),
            ContextKey::Document => "document".to_string(),
            ContextKey::Other => "other".to_string(),
        }
    }
}

fn text_owner(m: &Message) -> &'static str {
    match (m.role, m.origin) {
        (_, Origin::Injected) => "injected",
        (_, Origin::CompactSummary) => "compact_summary",
        (_, Origin::SyntheticError) => "synthetic_error",
        (Role::User, _) => "user",
        (Role::Assistant, _) => "assistant",
        (Role::System, _) => "system",
    }
}

/// One message counted once: its estimates and its content by kind.
struct MessageScan<'a> {
    chars4: u64,
    per_block: u64,
    o200k: u64,
    cl100k: u64,
    kinds: Vec<(ContextKey<'a>, KindStats)>,
}

fn scan_message<'a>(m: &'a Message, tool_of: &HashMap<&'a str, &'a str>) -> MessageScan<'a> {
    let mut kinds = Vec::with_capacity(m.blocks.len());
    for b in &m.blocks {
        classify(b, text_owner(m), None, tool_of, &mut kinds);
    }
    // The o200k leaves add up to the message count minus framing (asserted in tests),
    // so the most expensive count runs once.
    let o200k = BPE_MESSAGE_OVERHEAD + kinds.iter().map(|(_, k)| k.o200k).sum::<u64>();
    MessageScan {
        chars4: Chars4.message_tokens(m),
        per_block: PerBlock.message_tokens(m),
        o200k,
        cl100k: Cl100k.message_tokens(m),
        kinds,
    }
}

/// Attribute a block (and for a tool result, its content) to context keys.
fn classify<'a>(
    b: &'a Block,
    owner: &'a str,
    in_result_of: Option<&'a str>,
    tool_of: &HashMap<&'a str, &'a str>,
    out: &mut Vec<(ContextKey<'a>, KindStats)>,
) {
    let leaf = |bytes: usize, blocks: u64| KindStats {
        blocks,
        bytes: bytes as u64,
        chars4: Chars4.block_tokens(b),
        o200k: O200k.block_tokens(b),
    };
    // Content inside a tool result belongs to the result (it is not a block of the
    // message), except images, which are reported as images wherever they are.
    let blocks = u64::from(in_result_of.is_none());
    match b {
        Block::Text { text } => {
            let key = in_result_of.map_or(ContextKey::Text(owner), ContextKey::ToolResult);
            out.push((key, leaf(text.len(), blocks)));
        }
        Block::Thinking { text, opaque_len } => {
            out.push((ContextKey::Thinking, leaf(text.len(), blocks)));
            if *opaque_len > 0 {
                let opaque = KindStats { blocks, bytes: *opaque_len as u64, chars4: 0, o200k: 0 };
                out.push((ContextKey::ThinkingOpaque, opaque));
            }
        }
        Block::ToolUse { name, input, .. } => {
            out.push((ContextKey::ToolUse, leaf(name.len() + json_len(input), blocks)));
        }
        Block::ToolResult { tool_use_id, content, .. } => {
            let tool = tool_of.get(tool_use_id.as_str()).copied().unwrap_or(UNKNOWN_TOOL);
            out.push((ContextKey::ToolResult(tool), KindStats { blocks: 1, ..KindStats::default() }));
            for c in content {
                classify(c, owner, Some(tool), tool_of, out);
            }
        }
        Block::Image { bytes, media_type } => {
            let document = ["application/", "text/"].iter().any(|p| media_type.starts_with(p));
            let key = if document { ContextKey::Document } else { ContextKey::Image };
            out.push((key, leaf(*bytes, 1)));
        }
        Block::Other { raw } => {
            let key = in_result_of.map_or(ContextKey::Other, ContextKey::ToolResult);
            out.push((key, leaf(json_len(raw), blocks)));
        }
    }
}

/// A path as the report holds it: serde cannot write a non-UTF-8 path as JSON, and
/// one such file name must not make `--json` fail for the whole batch, so the
/// report keeps it lossily (invalid bytes become U+FFFD).
fn utf8_path(p: &std::path::Path) -> PathBuf {
    match p.to_str() {
        Some(_) => p.to_path_buf(),
        None => PathBuf::from(p.to_string_lossy().into_owned()),
    }
}

/// Below this many messages per rayon task splitting a session costs more than it
/// saves.
const MIN_MESSAGES_PER_TASK: usize = 16;

/// Describe one session; also returns its estimator-accuracy samples.
pub fn inspect_session(s: &Session) -> (SessionReport, AccuracyAccumulator) {
    let tool_of: HashMap<&str, &str> =
        s.messages.iter().flat_map(|m| m.tool_uses()).map(|(id, name, _)| (id, name)).collect();
    let scans: Vec<MessageScan<'_>> =
        s.messages.par_iter().with_min_len(MIN_MESSAGES_PER_TASK).map(|m| scan_message(m, &tool_of)).collect();

    let mut c = Counts { messages: s.messages.len() as u64, ..Counts::default() };
    let mut context: BTreeMap<ContextKey<'_>, KindStats> = BTreeMap::new();
    for (m, scan) in s.messages.iter().zip(&scans) {
        *c.messages_by_role.entry(m.role).or_default() += 1;
        *c.messages_by_origin.entry(m.origin).or_default() += 1;
        c.unsent_messages += u64::from(m.unsent);
        for b in &m.blocks {
            match b {
                Block::ToolUse { name, .. } => {
                    c.tool_calls += 1;
                    *c.tool_calls_by_tool.entry(name.clone()).or_default() += 1;
                }
                Block::ToolResult { is_error, .. } => {
                    c.tool_results += 1;
                    c.tool_errors += u64::from(*is_error == Some(true));
                }
                _ => {}
            }
        }
        for (k, st) in &scan.kinds {
            context.entry(*k).or_default().add(st);
        }
        c.tokens.chars4 += scan.chars4;
        c.tokens.per_block += scan.per_block;
        c.tokens.o200k += scan.o200k;
        c.tokens.cl100k += scan.cl100k;
    }
    c.context = context.into_iter().map(|(k, v)| (k.key(), v)).collect();

    c.calls = s.calls.len() as u64;
    // Readers clamp each count (`read::MAX_TOKENS`), but a batch can hold any
    // number of calls: the sums saturate rather than wrap or panic.
    for u in s.calls.iter().filter_map(|call| call.usage.as_ref()) {
        c.calls_with_usage += 1;
        c.calls_with_shared_usage += u64::from(u.provenance == UsageProvenance::OpenAiShare);
        c.usage.uncached_input = c.usage.uncached_input.saturating_add(u.uncached_input);
        c.usage.cache_read = c.usage.cache_read.saturating_add(u.cache_read);
        c.usage.cache_write = c.usage.cache_write.saturating_add(u.cache_write);
        c.usage.output = c.usage.output.saturating_add(u.output);
        c.usage.reasoning = c.usage.reasoning.saturating_add(u.reasoning);
        c.usage.max_prompt = c.usage.max_prompt.max(u.prompt_tokens());
    }
    let own = |rc: &&crate::model::RecordedCompaction| rc.inserted.start >= s.inherited;
    c.compactions = s.recorded_compactions.iter().filter(own).count() as u64;
    // Each output once, however often it was cleared again (a trim, then a
    // clearing; a projection restated after a compaction).
    let cleared: std::collections::HashSet<(usize, usize)> =
        s.recorded_clearings.iter().flat_map(|rc| rc.blocks.iter().map(|b| (b.message, b.block))).collect();
    c.cleared_outputs = cleared.len() as u64;
    for e in &s.errors {
        *c.api_errors.entry(e.kind).or_default() += 1;
    }
    let d = &s.diagnostics;
    c.diagnostics = DiagnosticCounts {
        bad_lines: d.bad_lines,
        warnings: d.messages.len() as u64 + d.unlisted,
        unknown_kinds: d.unknown_kinds.clone(),
        skipped_kinds: d.skipped.clone(),
        sent_otherwise: d.sent_otherwise.clone(),
    };

    let counts = |f: fn(&MessageScan<'_>) -> u64| MessageTokens::from_counts(scans.iter().map(f).collect());
    let chars4 = counts(|x| x.chars4);
    let mut acc = AccuracyAccumulator::default();
    for kind in EstimatorKind::ALL {
        let samples = match kind {
            EstimatorKind::Chars4 | EstimatorKind::Calibrated => session_errors(s, kind, &chars4),
            EstimatorKind::PerBlock => session_errors(s, kind, &counts(|x| x.per_block)),
            EstimatorKind::O200k => session_errors(s, kind, &counts(|x| x.o200k)),
            EstimatorKind::Cl100k => session_errors(s, kind, &counts(|x| x.cl100k)),
        };
        acc.add(kind, s.format, &samples);
    }

    let report = SessionReport {
        id: s.id.clone(),
        name: s.display_name(),
        format: s.format,
        agent: s.meta.agent.clone(),
        source_path: utf8_path(&s.source_path),
        versions: s.meta.versions.clone(),
        models: s.meta.models.clone(),
        agent_type: s.meta.agent_type.clone(),
        parent: s.parent.clone(),
        subagents: s.subagents.clone(),
        inherited_messages: s.inherited as u64,
        inherited_compactions: (s.recorded_compactions.len() as u64).saturating_sub(c.compactions),
        counts: c,
        compactions: s
            .recorded_compactions
            .iter()
            .filter(own)
            .map(|rc| CompactionSummary {
                kind: rc.kind,
                source_line: rc.source_line,
                trigger: rc.trigger.clone(),
                tokens_before: rc.tokens_before,
                kept_messages: rc.kept_len() as u64,
                inserted_messages: rc.inserted.len() as u64,
            })
            .collect(),
    };
    (report, acc)
}

impl Counts {
    /// Add another session's counts (`usage.max_prompt` takes the maximum).
    pub fn merge(&mut self, o: &Counts) {
        fn add_map<K: Ord + Clone>(a: &mut BTreeMap<K, u64>, b: &BTreeMap<K, u64>) {
            for (k, v) in b {
                *a.entry(k.clone()).or_default() += v;
            }
        }
        self.messages += o.messages;
        add_map(&mut self.messages_by_role, &o.messages_by_role);
        add_map(&mut self.messages_by_origin, &o.messages_by_origin);
        self.calls += o.calls;
        self.calls_with_usage += o.calls_with_usage;
        self.calls_with_shared_usage += o.calls_with_shared_usage;
        self.tool_calls += o.tool_calls;
        add_map(&mut self.tool_calls_by_tool, &o.tool_calls_by_tool);
        self.tool_results += o.tool_results;
        self.tool_errors += o.tool_errors;
        for (k, v) in &o.context {
            self.context.entry(k.clone()).or_default().add(v);
        }
        self.tokens.chars4 += o.tokens.chars4;
        self.tokens.per_block += o.tokens.per_block;
        self.tokens.o200k += o.tokens.o200k;
        self.tokens.cl100k += o.tokens.cl100k;
        self.usage.uncached_input = self.usage.uncached_input.saturating_add(o.usage.uncached_input);
        self.usage.cache_read = self.usage.cache_read.saturating_add(o.usage.cache_read);
        self.usage.cache_write = self.usage.cache_write.saturating_add(o.usage.cache_write);
        self.usage.output = self.usage.output.saturating_add(o.usage.output);
        self.usage.reasoning = self.usage.reasoning.saturating_add(o.usage.reasoning);
        self.usage.max_prompt = self.usage.max_prompt.max(o.usage.max_prompt);
        self.compactions += o.compactions;
        self.cleared_outputs += o.cleared_outputs;
        self.unsent_messages += o.unsent_messages;
        add_map(&mut self.api_errors, &o.api_errors);
        self.diagnostics.bad_lines += o.diagnostics.bad_lines;
        self.diagnostics.warnings += o.diagnostics.warnings;
        add_map(&mut self.diagnostics.unknown_kinds, &o.diagnostics.unknown_kinds);
        add_map(&mut self.diagnostics.skipped_kinds, &o.diagnostics.skipped_kinds);
        add_map(&mut self.diagnostics.sent_otherwise, &o.diagnostics.sent_otherwise);
    }
}

/// Inspect a batch. Sessions keep the batch's order (sorted by path and id), so the
/// report is the same whatever the thread count.
pub fn inspect(batch: &Batch) -> InspectReport {
    inspect_with_progress(batch, &|| {})
}

/// [`inspect`], calling `on_session` after each session (from worker threads) so the
/// caller can drive a progress bar.
pub fn inspect_with_progress(batch: &Batch, on_session: &(dyn Fn() + Sync)) -> InspectReport {
    let results: Vec<(SessionReport, AccuracyAccumulator)> = batch
        .sessions
        .par_iter()
        .map(|s| {
            let r = inspect_session(s);
            on_session();
            r
        })
        .collect();
    let mut totals = Totals {
        inputs_read: batch.inputs_read as u64,
        inputs_failed: batch.failures.iter().filter(|d| d.severity == crate::model::Severity::Error).count() as u64,
        sessions: results.len() as u64,
        ..Totals::default()
    };
    let mut acc = AccuracyAccumulator::default();
    let mut sessions = Vec::with_capacity(results.len());
    for (r, a) in results {
        *totals.sessions_by_format.entry(r.format).or_default() += 1;
        totals.counts.merge(&r.counts);
        acc.merge(&a);
        sessions.push(r);
    }
    InspectReport {
        schema_version: SCHEMA_VERSION,
        sessions,
        totals,
        accuracy: acc.rows(),
        failures: batch.failures.iter().map(|d| Diagnostic { path: utf8_path(&d.path), ..d.clone() }).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Call, RecordedError, Severity, Usage, UsageProvenance};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn usage(prompt: u64, output: u64) -> Usage {
        Usage {
            uncached_input: 10,
            cache_read: prompt - 10,
            cache_write: 0,
            output,
            reasoning: 1,
            provenance: UsageProvenance::Anthropic,
        }
    }

    /// A small session exercising every block kind.
    fn session() -> Session {
        let mut s = Session::new("abc", Format::Pi, "/logs/abc.jsonl");
        s.meta.add_version("1.2.3");
        s.meta.add_model("claude-x");
        s.parent = Some("parent-1".into());
        s.messages = vec![
            Message::new(Role::User, Origin::Injected, vec![Block::text("AGENTS.md: be nice")]), // 18 chars
            Message::new(Role::User, Origin::Human, vec![Block::text("fix the bug")]),           // 11
            Message::new(
                Role::Assistant,
                Origin::Model,
                vec![
                    Block::Thinking { text: "look".into(), opaque_len: 100 },
                    Block::text("ok"),
                    Block::ToolUse { id: "t1".into(), name: "read".into(), input: json!({"path": "a.rs"}) },
                    Block::ToolUse { id: "t2".into(), name: "bash".into(), input: json!({"cmd": "ls"}) },
                ],
            ),
            Message::new(
                Role::User,
                Origin::ToolResult,
                vec![
                    Block::ToolResult {
                        tool_use_id: "t1".into(),
                        content: vec![
                            Block::text("fn main() {}"),
                            Block::Image { media_type: "image/png".into(), bytes: 2000 },
                        ],
                        is_error: None,
                    },
                    Block::ToolResult {
                        tool_use_id: "t2".into(),
                        content: vec![Block::text("error: boom")],
                        is_error: Some(true),
                    },
                    Block::ToolResult { tool_use_id: "zz".into(), content: vec![], is_error: None },
                ],
            ),
            Message::new(Role::Assistant, Origin::Model, vec![Block::text("done"), Block::Other { raw: json!(1) }]),
        ];
        s.calls = vec![
            Call {
                message_index: 2,
                model: None,
                usage: Some(usage(100, 20)),
                timestamp: None,
                response_id: None,
                fast: false,
            },
            Call { message_index: 4, model: None, usage: None, timestamp: None, response_id: None, fast: false },
        ];
        s.errors = vec![
            RecordedError { source_line: 3, kind: ApiErrorKind::RateLimit, message: "429".into() },
            RecordedError { source_line: 4, kind: ApiErrorKind::ContextOverflow, message: "too long".into() },
            RecordedError { source_line: 5, kind: ApiErrorKind::RateLimit, message: "429".into() },
        ];
        s.diagnostics.bad_line(std::path::Path::new("/logs/abc.jsonl"), 7, "truncated");
        s.diagnostics.unknown("weird", 8, "{}");
        s.diagnostics.unknown("weird", 9, "{}");
        s.diagnostics.skip("title");
        s.diagnostics.sent_otherwise("tool output cut to its budget");
        s
    }

    fn ks(blocks: u64, bytes: u64, chars4: u64, o200k: u64) -> KindStats {
        KindStats { blocks, bytes, chars4, o200k }
    }

    #[test]
    fn session_counts_exact() {
        let s = session();
        let (r, _) = inspect_session(&s);
        let c = &r.counts;
        assert_eq!(c.messages, 5);
        assert_eq!(c.messages_by_role, BTreeMap::from([(Role::User, 3), (Role::Assistant, 2)]));
        assert_eq!(
            c.messages_by_origin,
            BTreeMap::from([(Origin::Human, 1), (Origin::ToolResult, 1), (Origin::Injected, 1), (Origin::Model, 2)])
        );
        assert_eq!((c.calls, c.calls_with_usage), (2, 1));
        assert_eq!(c.tool_calls, 2);
        assert_eq!(c.tool_calls_by_tool, BTreeMap::from([("bash".to_string(), 1), ("read".to_string(), 1)]));
        assert_eq!((c.tool_results, c.tool_errors), (3, 1));
        let o = |t: &str| O200k.text_tokens(t);
        let want: BTreeMap<String, KindStats> = [
            ("text:injected", ks(1, 18, 5, o("AGENTS.md: be nice"))),
            ("text:user", ks(1, 11, 3, o("fix the bug"))),
            ("text:assistant", ks(2, 6, 2, o("ok") + o("done"))),
            ("thinking", ks(1, 4, 1, o("look"))),
            ("thinking_opaque", ks(1, 100, 0, 0)),
            // read{"path":"a.rs"} = 4 + 15 → 5; bash{"cmd":"ls"} = 4 + 12 → 4.
            ("tool_use", ks(2, 35, 9, o("read") + o(r#"{"path":"a.rs"}"#) + o("bash") + o(r#"{"cmd":"ls"}"#))),
            ("tool_result:read", ks(1, 12, 3, o("fn main() {}"))),
            ("tool_result:bash", ks(1, 11, 3, o("error: boom"))),
            ("tool_result:?", ks(1, 0, 0, 0)),
            ("image", ks(1, 2000, 1200, 1200)),
            ("other", ks(1, 1, 1, o("1"))),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(c.context, want);
        // Whole-message estimates equal the estimators' own message counts.
        let each = |e: &dyn Estimator| s.messages.iter().map(|m| e.message_tokens(m)).sum::<u64>();
        assert_eq!(
            c.tokens,
            EstimatorTotals {
                chars4: each(&Chars4),
                per_block: each(&PerBlock),
                o200k: each(&O200k),
                cl100k: each(&Cl100k)
            }
        );
        assert_eq!(
            c.usage,
            UsageTotals {
                uncached_input: 10,
                cache_read: 90,
                cache_write: 0,
                output: 20,
                reasoning: 1,
                max_prompt: 100
            }
        );
        assert_eq!(c.api_errors, BTreeMap::from([(ApiErrorKind::ContextOverflow, 1), (ApiErrorKind::RateLimit, 2)]));
        assert_eq!(
            c.diagnostics,
            DiagnosticCounts {
                bad_lines: 1,
                warnings: 1,
                unknown_kinds: BTreeMap::from([("weird".to_string(), 2)]),
                skipped_kinds: BTreeMap::from([("title".to_string(), 1)]),
                sent_otherwise: BTreeMap::from([("tool output cut to its budget".to_string(), 1)]),
            }
        );
        assert_eq!(r.versions, ["1.2.3"]);
        assert_eq!(r.models, ["claude-x"]);
        assert_eq!(r.parent.as_deref(), Some("parent-1"));
    }

    fn batch() -> Batch {
        let mut other = crate::accuracy::tests::session();
        other.source_path = "/logs/z.jsonl".into();
        Batch {
            sessions: vec![session(), other],
            failures: vec![Diagnostic {
                severity: Severity::Error,
                path: "/logs/bad.jsonl".into(),
                line: 0,
                message: "cannot read".into(),
            }],
            inputs_read: 2,
        }
    }

    #[test]
    fn report_totals_and_accuracy() {
        let r = inspect(&batch());
        assert_eq!(r.schema_version, SCHEMA_VERSION);
        assert_eq!(r.sessions.len(), 2);
        let t = &r.totals;
        assert_eq!((t.inputs_read, t.inputs_failed, t.sessions), (2, 1, 2));
        assert_eq!(t.sessions_by_format, BTreeMap::from([(Format::ClaudeCode, 1), (Format::Pi, 1)]));
        assert_eq!(t.counts.messages, 5 + 11);
        assert_eq!(t.counts.compactions, 1);
        assert_eq!(t.counts.calls_with_usage, 1 + 4);
        assert_eq!(t.counts.usage.max_prompt, 300);
        assert_eq!(r.sessions[1].compactions.len(), 1);
        assert_eq!(r.sessions[1].compactions[0].kept_messages, 2);
        // 5 estimators × (2 formats + all).
        assert_eq!(r.accuracy.len(), 15);
        let chars4_all = r.accuracy.iter().find(|a| a.estimator == EstimatorKind::Chars4 && a.format.is_none());
        assert_eq!(chars4_all.map(|a| a.calls), Some(5));
    }

    #[test]
    fn json_round_trip() {
        let r = inspect(&batch());
        let text = serde_json::to_string(&r).unwrap();
        let back: InspectReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schema_version"], json!(SCHEMA_VERSION));
        assert_eq!(v["sessions"][0]["counts"]["messages_by_role"]["user"], json!(3));
        assert_eq!(v["sessions"][0]["counts"]["api_errors"]["context_overflow"], json!(1));
        assert_eq!(v["accuracy"][0]["estimator"], json!("chars4"));
    }

    #[test]
    fn empty_batch() {
        let r = inspect(&Batch::default());
        assert!(r.sessions.is_empty() && r.accuracy.is_empty());
        assert_eq!(r.totals, Totals::default());
    }
}
