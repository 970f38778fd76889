//! Arbitrary sessions for the replay fuzzers (`tests/fuzz_replay.rs` in CI,
//! `fuzz/fuzz_targets/replay.rs` for long local runs), and the checks every case
//! runs.
//!
//! A case is decoded from the fuzzer's bytes ([`Bytes`]: exhausted bytes read as
//! zeros, so every byte string is a valid case and shrinks well) straight into the
//! normalized model, not through a reader: the replay must hold for any
//! [`Session`] a reader, a future reader or a library user can build. Steps are
//! what real and broken logs contain — human, injected and system messages,
//! replies, thinking with opaque payloads, tool calls answered in order, out of
//! order, twice, never, or by results whose tool use does not exist (orphans),
//! empty and huge blocks, images, nested results, messages without blocks,
//! agent-written summaries — then calls are mutated (out of order, duplicated,
//! pointing at user messages or past the end), usage gets extreme values
//! (`u64::MAX`, 2^40), timestamps run backwards or sit at `i64::MIN/MAX`, and
//! recorded compactions get odd ranges (empty, reversed, overlapping, out of
//! bounds).
//!
//! [`check`] replays the session through every preset, at its own window and at
//! a small one (constants scaled, so compactions chain), with the per-call
//! invariant checks of `--check-invariants` and the totals cross-check on, and
//! builds every report output from the result. It asserts: no panic; an error
//! only for a call that points past the last message; no invariant violation;
//! applied compactions never grow history; the final transcript is well paired;
//! totals are consistent (saturating, never wrapped).

use super::Bytes;
use compactor::invariants::{self, CheckOptions};
use compactor::model::{
    Block, Call, CompactionKind, Format, Message, Origin, RecordedCompaction, Role, Session, Usage, UsageProvenance,
};
use compactor::pipeline::SessionResults;
use compactor::policy::Policy;
use compactor::replay::{ReplayContext, ReplayError, ReplayOptions, replay_session};
use compactor::summarize::{self, SummarizerKind};
use compactor::tokens::{self, EstimatorKind};
use serde_json::{Value, json};

/// Total characters of text a case may hold, so one case stays fast in a
/// debug build (the checks recompute totals at every call).
const MAX_CHARS: usize = 256 << 10;

/// Most steps (messages, roughly) of a case.
const MAX_STEPS: usize = 80;

struct Gen<'a, 'b> {
    b: &'b mut Bytes<'a>,
    s: Session,
    /// Tool-use ids waiting for a result, in call order.
    pending: Vec<String>,
    /// Every tool-use id issued (for duplicates and cross-links).
    issued: Vec<String>,
    next_id: usize,
    clock: Option<i64>,
    chars: usize,
}

/// Text of about `n` characters: filler words, or a hostile piece.
fn text(b: &mut Bytes, n: usize, salt: usize) -> String {
    match b.u8() % 16 {
        0 => String::new(),
        1 => "\0".repeat(n.min(64)),
        2 => "🦀é中\u{202E}\u{200B}".repeat(n / 5 + 1),
        3 => "-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----".to_string(),
        4 => "\r\n".repeat(n / 2 + 1),
        5 => "Exit code: -99999999999999999999\nerror[E0425]: cannot find value `x`".to_string(),
        6 => "/repo/src/lib.rs ../../etc/passwd C:\\Windows\\x".to_string(),
        _ => {
            let word = format!("w{salt} lorem ipsum ");
            word.chars().cycle().take(n).collect()
        }
    }
}

/// A size for a block of text: mostly small, sometimes huge, sometimes empty.
fn size(b: &mut Bytes) -> usize {
    match b.u8() % 16 {
        0 => 0,
        1..=6 => b.below(200),
        7..=10 => 200 + b.below(3_000),
        11 | 12 => 3_000 + b.below(20_000),
        13 => 20_000 + b.below(30_000),
        14 => 100_000,
        _ => 1 + b.below(8),
    }
}

fn usage_value(b: &mut Bytes) -> u64 {
    match b.u8() % 10 {
        0 => u64::MAX,
        1 => u64::MAX / 2,
        2 => 1 << 40,
        3 => 0,
        4 => i64::MAX as u64,
        _ => b.below(300_000) as u64,
    }
}

impl<'a, 'b> Gen<'a, 'b> {
    fn text(&mut self, salt: usize) -> String {
        let n = size(self.b).min(MAX_CHARS.saturating_sub(self.chars));
        let t = text(self.b, n, salt);
        self.chars += t.len();
        t
    }

    fn tick(&mut self) -> Option<i64> {
        self.clock = match self.b.u8() % 16 {
            0 => None,
            1 => Some(i64::MIN),
            2 => Some(i64::MAX),
            3 => self.clock.map(|c| c.saturating_sub(3_600_000)),
            4 => self.clock.map(|c| c.saturating_add(7_200_000)),
            5 => Some(0),
            _ => Some(self.clock.unwrap_or(1_700_000_000_000).saturating_add(1_000)),
        };
        self.clock
    }

    fn push(&mut self, role: Role, origin: Origin, blocks: Vec<Block>) -> usize {
        let mut m = Message::new(role, origin, blocks);
        m.timestamp = self.tick();
        m.source_line = match self.b.u8() % 8 {
            0 => 0,
            1 => u64::MAX,
            _ => self.s.messages.len() as u64 + 1,
        };
        self.s.messages.push(m);
        self.s.messages.len() - 1
    }

    fn call(&mut self, index: usize) {
        let usage = match self.b.u8() % 4 {
            0 | 1 => None,
            _ => Some(Usage {
                uncached_input: usage_value(self.b),
                cache_read: usage_value(self.b),
                cache_write: usage_value(self.b),
                output: usage_value(self.b),
                reasoning: usage_value(self.b),
                provenance: match self.b.u8() % 5 {
                    0 => UsageProvenance::Anthropic,
                    1 => UsageProvenance::OpenAi,
                    2 => UsageProvenance::Pi,
                    3 => UsageProvenance::Gemini,
                    _ => UsageProvenance::Cline,
                },
            }),
        };
        let timestamp = if self.b.u8().is_multiple_of(4) { self.tick() } else { self.s.messages[index].timestamp };
        self.s.calls.push(Call { message_index: index, model: None, usage, timestamp, response_id: None, fast: false });
    }

    fn tool_id(&mut self) -> String {
        let id = match self.b.u8() % 16 {
            0 if !self.issued.is_empty() => {
                let i = self.b.below(self.issued.len());
                self.issued[i].clone()
            }
            1 => String::new(),
            2 => "../../etc/x".to_string(),
            3 => "x".repeat(10_000),
            _ => {
                self.next_id += 1;
                format!("toolu_{:03}", self.next_id)
            }
        };
        self.issued.push(id.clone());
        id
    }

    fn tool_input(&mut self, salt: usize) -> Value {
        match self.b.u8() % 8 {
            0 => Value::Null,
            1 => json!({"command": self.text(salt)}),
            2 => {
                // Nested just inside the depth a reader's parser accepts.
                let depth = self.b.below(120);
                (0..depth).fold(json!(1), |v, _| json!([v]))
            }
            3 => json!({"file_path": "/repo/../../etc/passwd", "content": self.text(salt), "n": u64::MAX}),
            4 => json!("not an object"),
            _ => json!({"file_path": format!("/repo/src/m{salt}.rs")}),
        }
    }

    fn result_content(&mut self, salt: usize) -> Vec<Block> {
        let mut content = Vec::new();
        for j in 0..self.b.below(4) {
            content.push(match self.b.u8() % 10 {
                0 => Block::Image { media_type: "image/png".into(), bytes: self.b.below(1 << 20) },
                1 => Block::Other { raw: json!({"type": "weird", "x": [1, 2]}) },
                2 => Block::ToolResult {
                    tool_use_id: "nested".into(),
                    content: vec![Block::text(self.text(salt + j))],
                    is_error: None,
                },
                _ => Block::text(self.text(salt + j)),
            });
        }
        content
    }

    fn is_error(&mut self) -> Option<bool> {
        match self.b.u8() % 4 {
            0 => None,
            1 => Some(true),
            _ => Some(false),
        }
    }

    /// Results for the pending tool uses: in order, reversed, some dropped, plus
    /// orphans; in one message or one message each.
    fn results(&mut self, salt: usize) {
        let mut ids = std::mem::take(&mut self.pending);
        match self.b.u8() % 8 {
            0 => ids.reverse(),
            1 if !ids.is_empty() => {
                let k = self.b.below(ids.len());
                ids.remove(k);
            }
            2 => ids.push(format!("orphan-{salt}")),
            3 if !ids.is_empty() => ids.push(ids[0].clone()),
            _ => {}
        }
        let mut blocks = Vec::new();
        for (j, id) in ids.into_iter().enumerate() {
            let content = self.result_content(salt * 7 + j);
            let is_error = self.is_error();
            blocks.push(Block::ToolResult { tool_use_id: id, content, is_error });
        }
        if self.b.u8().is_multiple_of(3) {
            for blk in blocks {
                self.push(Role::User, Origin::ToolResult, vec![blk]);
            }
        } else {
            if self.b.u8().is_multiple_of(8) {
                let t = self.text(salt);
                blocks.push(Block::text(t));
            }
            self.push(Role::User, Origin::ToolResult, blocks);
        }
    }

    fn step(&mut self, i: usize) {
        match self.b.u8() % 20 {
            0..=2 => {
                let mut blocks = vec![Block::text(self.text(i))];
                if self.b.u8().is_multiple_of(6) {
                    blocks.push(Block::Image { media_type: "image/jpeg".into(), bytes: self.b.below(1 << 22) });
                }
                self.push(Role::User, Origin::Human, blocks);
            }
            3 => {
                let t = self.text(i);
                self.push(Role::User, Origin::Injected, vec![Block::text(t)]);
            }
            4 => {
                let t = self.text(i);
                self.push(Role::System, Origin::Injected, vec![Block::text(t)]);
            }
            5..=7 => {
                let mut blocks = Vec::new();
                if self.b.u8().is_multiple_of(3) {
                    let opaque_len = match self.b.u8() % 4 {
                        0 => 100_000_000,
                        _ => self.b.below(10_000),
                    };
                    blocks.push(Block::Thinking { text: self.text(i), opaque_len });
                }
                blocks.push(Block::text(self.text(i)));
                let m = self.push(Role::Assistant, Origin::Model, blocks);
                if !self.b.u8().is_multiple_of(8) {
                    self.call(m);
                }
            }
            8..=12 => {
                let k = self.b.below(5);
                let mut blocks = Vec::new();
                if self.b.u8().is_multiple_of(4) {
                    blocks.push(Block::text(self.text(i)));
                }
                for j in 0..k {
                    let id = self.tool_id();
                    self.pending.push(id.clone());
                    let name = ["Read", "Bash", "Edit", "skill", "Grep", ""][self.b.below(6)].to_string();
                    let input = self.tool_input(i * 5 + j);
                    blocks.push(Block::ToolUse { id, name, input });
                }
                let m = self.push(Role::Assistant, Origin::Model, blocks);
                if !self.b.u8().is_multiple_of(8) {
                    self.call(m);
                }
            }
            13..=15 => self.results(i),
            16 => {
                let role = [Role::User, Role::Assistant, Role::System][self.b.below(3)];
                let m = self.push(role, Origin::Model, Vec::new());
                if role == Role::Assistant {
                    self.call(m);
                }
            }
            17 => {
                // The agent's own compaction: a summary message and the record.
                let t = self.text(i);
                let at = self.push(Role::User, Origin::CompactSummary, vec![Block::text(t)]);
                let kept_from = self.b.below(at + 1);
                self.s.recorded_compactions.push(RecordedCompaction {
                    kind: CompactionKind::ClaudeBoundary,
                    source_line: 0,
                    inserted: at..at + 1,
                    kept: kept_from..at,
                    head: 0..0,
                    tokens_before: Some(usage_value(self.b)),
                    trigger: None,
                });
            }
            18 => {
                let t = self.text(i);
                let m = self.push(Role::Assistant, Origin::SyntheticError, vec![Block::text(t)]);
                if self.b.u8().is_multiple_of(2) {
                    self.call(m);
                }
                // A response the agent never sent on (pi's failed turns).
                if self.b.u8().is_multiple_of(2) {
                    self.s.messages[m].unsent = true;
                }
            }
            _ => {
                let t = self.text(i);
                self.push(Role::User, Origin::ToolResult, vec![Block::text(t)]);
            }
        }
    }

    /// Odd ranges: empty, reversed, overlapping, past the end.
    fn range(&mut self) -> std::ops::Range<usize> {
        let n = self.s.messages.len();
        let end_of = |b: &mut Bytes| match b.u8() % 8 {
            0 => n + b.below(4),
            1 => usize::MAX,
            _ => b.below(n + 1),
        };
        let a = end_of(self.b);
        let z = end_of(self.b);
        // A reversed range is empty when iterated, but its bounds still get used.
        a..z
    }

    fn mutate_calls(&mut self) {
        let n = self.s.messages.len();
        for _ in 0..self.b.below(4) {
            let c = self.s.calls.len();
            match self.b.u8() % 8 {
                0 if c >= 2 => {
                    let (x, y) = (self.b.below(c), self.b.below(c));
                    self.s.calls.swap(x, y);
                }
                1 if c >= 1 => {
                    let x = self.b.below(c);
                    let dup = self.s.calls[x].clone();
                    self.s.calls.insert(x, dup);
                }
                2 if c >= 1 && n >= 1 => {
                    let x = self.b.below(c);
                    self.s.calls[x].message_index = self.b.below(n);
                }
                3 if c >= 1 => {
                    let x = self.b.below(c);
                    self.s.calls.remove(x);
                }
                4 if c >= 1 && self.b.u8().is_multiple_of(8) => {
                    // Past the end: the replay must refuse it, not index with it.
                    let x = self.b.below(c);
                    self.s.calls[x].message_index = n + self.b.below(3);
                }
                _ => {}
            }
        }
        for _ in 0..self.b.below(3) {
            let (inserted, kept) = (self.range(), self.range());
            self.s.recorded_compactions.push(RecordedCompaction {
                kind: CompactionKind::Other,
                source_line: 0,
                inserted,
                kept,
                head: 0..0,
                tokens_before: None,
                trigger: None,
            });
        }
    }
}

fn session_id(b: &mut Bytes) -> String {
    match b.u8() % 8 {
        0 => "../../etc/x".to_string(),
        1 => "/abs/path".to_string(),
        2 => "a\0b".to_string(),
        3 => "x".repeat(10_000),
        4 => String::new(),
        _ => format!("fuzz-{}", b.u8()),
    }
}

/// A session and the small window it also runs at. Regression files
/// (`fixtures/regressions/replay--WHAT.bin`) hold it as JSON, so they survive
/// changes to the generator.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ReplayCase {
    pub session: Session,
    pub small_window: u64,
}

/// Decode a case from the fuzzer's bytes.
pub fn build(input: &[u8]) -> ReplayCase {
    let mut b = Bytes::new(input);
    let id = session_id(&mut b);
    let format = Format::ALL[b.below(Format::ALL.len())];
    let small_window = 2_000 + b.below(30_000) as u64;
    let mut g = Gen {
        b: &mut b,
        s: Session::new(id, format, "/fuzz/session.jsonl"),
        pending: Vec::new(),
        issued: Vec::new(),
        next_id: 0,
        clock: Some(1_700_000_000_000),
        chars: 0,
    };
    let steps = g.b.below(MAX_STEPS);
    for i in 0..steps {
        g.step(i);
        if g.b.is_empty() {
            break;
        }
    }
    g.mutate_calls();
    ReplayCase { session: g.s, small_window }
}

/// The CLI's mapping of estimator kinds to objects (`calibrated` corrects chars/4).
fn estimator(kind: EstimatorKind) -> &'static dyn tokens::Estimator {
    tokens::estimator(if kind == EstimatorKind::Calibrated { EstimatorKind::Chars4 } else { kind })
}

/// Replay `session` through `policy` with every check on; panics with the reason
/// when something that must hold does not.
pub fn check_policy(session: &Session, policy: &Policy) -> Option<compactor::replay::SessionTrace> {
    let summarizer = match policy.compact.summarizer {
        SummarizerKind::Llm => summarize::builtin(SummarizerKind::Extractive),
        k => summarize::builtin(k),
    }
    .expect("built-in summarizer");
    let ctx = ReplayContext {
        estimator: estimator(policy.estimator),
        summarizer: summarizer.as_ref(),
        message_tokens: None,
        meter_tokens: None,
        facts: None,
        options: ReplayOptions {
            check_invariants: true,
            verify_totals: true,
            keep_transcript: true,
            ..ReplayOptions::default()
        },
    };
    let n = session.messages.len();
    // The policy's name in the failure: a panic inside the engine says where, not under which policy.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| replay_session(session, policy, &ctx)));
    let result = result.unwrap_or_else(|e| {
        let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
        panic!("{}: the replay panicked: {}", policy.name, msg.unwrap_or_default())
    });
    let t = match result {
        Ok(t) => t,
        Err(ReplayError::BadCall { index, .. }) => {
            assert!(index >= n, "{}: BadCall for an index in range", policy.name);
            return None;
        }
        Err(e) => panic!("{}: unexpected error {e}", policy.name),
    };
    assert!(session.calls.iter().all(|c| c.message_index < n));
    // Known and open: when the system prompt alone is over the window (a
    // calibration from absurd recorded usage), every call force-compacts and the
    // incremental cache prefix is conservative (it assumes the whole request
    // changed; the recomputation finds the first messages intact). Only the
    // prompt-cache estimate is affected. Minimal case:
    // fixtures/regressions/replay--prefix-with-system-over-window.bin.
    let degenerate = t.system_tokens >= t.context_window;
    let violations: Vec<_> = t
        .violations
        .iter()
        .filter(|v| !(degenerate && matches!(v.violation, invariants::Violation::PrefixMismatch { .. })))
        .collect();
    assert!(violations.is_empty(), "{}: {:?}", policy.name, violations);
    assert_eq!(t.calls.len(), session.calls.len());
    for c in t.compactions.iter().filter(|c| c.applied) {
        assert!(c.tokens_after <= c.tokens_before, "{}: compaction grew history: {c:?}", policy.name);
    }
    let unpaired = invariants::source_unpaired_ids(session);
    let opts = CheckOptions {
        alternation: policy.compact.alternation,
        allow_pending_tool_uses: true,
        ignore_ids: Some(&unpaired),
        images_untouchable: false,
        made: None,
    };
    if let Err(v) = invariants::check(&t.transcript, &opts) {
        panic!("{}: final transcript: {v:?}", policy.name);
    }
    let m = &t.metrics;
    assert!(m.peak_baseline <= m.input_tokens_baseline || m.input_tokens_baseline == u64::MAX);
    assert!(m.peak_policy <= m.input_tokens_policy || m.input_tokens_policy == u64::MAX);
    assert!(m.calls_with_usage <= m.calls);
    Some(t)
}

/// Every preset at its own window and at the case's small window, then every
/// report output built from the results.
pub fn check(case: &ReplayCase) {
    let s = &case.session;
    let mut policies = Vec::new();
    for name in compactor::presets::names() {
        let p = compactor::presets::get(name).expect("preset");
        let mut small = compactor::replay::testkit::scaled(p.clone(), case.small_window);
        small.name = format!("{name}-small");
        policies.push(p);
        policies.push(small);
    }
    let mut traces = Vec::new();
    for p in &policies {
        traces.push(check_policy(s, p).ok_or(ReplayError::BadCall { call: 0, index: 0, len: 0 }));
    }
    let results = vec![SessionResults {
        session_id: s.id.clone(),
        name: s.display_name(),
        source_path: s.source_path.clone(),
        traces,
        quality: Vec::new(),
        recorded: None,
    }];
    let report = compactor::report::build(&["fuzz".into()], 1, std::slice::from_ref(s), &[], &policies, &results, true);
    // Totals saturate: an aggregate is at least each of its sessions.
    for (a, p) in report.aggregates.iter().zip(&policies) {
        for r in report.sessions.iter().filter(|r| r.policy == p.name && r.error.is_none()) {
            assert!(a.input_tokens_recorded >= r.metrics.input_tokens_recorded, "{}: recorded total wrapped", p.name);
            assert!(a.input_tokens_baseline >= r.metrics.input_tokens_baseline, "{}: baseline total wrapped", p.name);
        }
    }
    let json = compactor::report::to_json(&report);
    let back: compactor::report::Report = serde_json::from_slice(&json).expect("report.json parses back");
    assert_eq!(back.sessions.len(), report.sessions.len());
    let names: Vec<String> = policies.iter().map(|p| p.name.clone()).collect();
    let _ = compactor::report::csv_out::sessions_csv(&report);
    let _ = compactor::report::csv_out::calls_csv(&results, &names);
    let _ = compactor::report::markdown::report_md(&report);
    for t in results[0].traces.iter().flatten() {
        let jsonl = compactor::report::transcript_jsonl(t);
        assert_eq!(jsonl.iter().filter(|&&c| c == b'\n').count(), t.transcript.len());
    }
}
