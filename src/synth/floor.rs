//! The raw parse floor of the benchmarks: serde_json over Claude Code JSONL into a
//! minimal typed model (envelope, message, content blocks, usage), borrowing
//! strings from the input where no unescaping is needed.
//!
//! This is the least work any reader has to do to see every field the replay
//! uses, so `compactor replay` throughput is judged against it (issue target:
//! replay with chars4 ≥ 0.6× this, single thread). It also extracts the strings an
//! estimator counts, for the raw o200k counting baseline.

use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// One JSONL record. Fields the replay never looks at (`toolUseResult`,
/// snapshots, metadata) are skipped by serde without being built.
#[derive(Debug, Deserialize)]
pub struct Record<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub subtype: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub uuid: Option<Cow<'a, str>>,
    #[serde(rename = "parentUuid", borrow)]
    pub parent_uuid: Option<Cow<'a, str>>,
    #[serde(rename = "logicalParentUuid", borrow)]
    pub logical_parent_uuid: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub cwd: Option<Cow<'a, str>>,
    #[serde(rename = "requestId", borrow)]
    pub request_id: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain")]
    pub is_sidechain: Option<bool>,
    #[serde(rename = "isMeta")]
    pub is_meta: Option<bool>,
    #[serde(rename = "isCompactSummary")]
    pub is_compact_summary: Option<bool>,
    #[serde(borrow)]
    pub message: Option<ApiMessage<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct ApiMessage<'a> {
    #[serde(borrow)]
    pub role: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub content: Option<Content<'a>>,
    pub usage: Option<Usage>,
}

/// The four usage numbers the replay calibrates against.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
}

/// `message.content` and `tool_result.content`: a string or an array of blocks.
/// Deserialized by hand because `#[serde(untagged)]` would buffer every value.
#[derive(Debug)]
pub enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

/// One content block, flat: `type` says which fields are set. (An internally
/// tagged enum would buffer the block whenever `type` is not its first key, which
/// in real logs it often is not.)
#[derive(Debug, Deserialize)]
pub struct Block<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub signature: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub name: Option<Cow<'a, str>>,
    /// Tool input: arbitrary JSON, kept as a value like the normalized model does.
    pub input: Option<serde_json::Value>,
    #[serde(borrow)]
    pub tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub content: Option<Content<'a>>,
    pub is_error: Option<bool>,
    #[serde(borrow)]
    pub source: Option<ImageSource<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct ImageSource<'a> {
    #[serde(borrow)]
    pub media_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub data: Option<Cow<'a, str>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(s)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                while let Some(b) = seq.next_element()? {
                    blocks.push(b);
                }
                Ok(Content::Blocks(blocks))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// What one pass saw; printed so the work cannot be optimized away and so runs
/// can be sanity-checked against the generator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FloorStats {
    pub bytes: u64,
    pub lines: u64,
    pub bad_lines: u64,
    pub blocks: u64,
    pub tool_uses: u64,
    pub tool_results: u64,
    pub usage_lines: u64,
    /// Bytes of the strings an estimator counts (see [`estimator_texts`]).
    pub text_bytes: u64,
}

impl FloorStats {
    pub fn add(&mut self, o: &FloorStats) {
        self.bytes += o.bytes;
        self.lines += o.lines;
        self.bad_lines += o.bad_lines;
        self.blocks += o.blocks;
        self.tool_uses += o.tool_uses;
        self.tool_results += o.tool_results;
        self.usage_lines += o.usage_lines;
        self.text_bytes += o.text_bytes;
    }
}

/// Parse every line of a JSONL file into [`Record`]s, calling `f` on each.
/// Returns (lines, bad lines).
pub fn for_each_record(data: &[u8], mut f: impl FnMut(&Record<'_>)) -> (u64, u64) {
    let (mut lines, mut bad) = (0, 0);
    for (_, line) in crate::read::lines(data) {
        lines += 1;
        // As the reader parses its lines.
        match crate::read::from_utf8_line::<Record>(line) {
            Some(r) => f(&r),
            None => bad += 1,
        }
    }
    (lines, bad)
}

/// The parse floor over one file's bytes.
pub fn parse(data: &[u8]) -> FloorStats {
    let mut s = FloorStats { bytes: data.len() as u64, ..FloorStats::default() };
    let (lines, bad) = for_each_record(data, |r| {
        let Some(m) = &r.message else { return };
        s.usage_lines += u64::from(m.usage.is_some());
        if let Some(c) = &m.content {
            tally(c, &mut s);
        }
    });
    s.lines = lines;
    s.bad_lines = bad;
    s
}

fn tally(c: &Content, s: &mut FloorStats) {
    match c {
        Content::Text(t) => s.text_bytes += t.len() as u64,
        Content::Blocks(bs) => {
            for b in bs {
                s.blocks += 1;
                match b.kind.as_deref() {
                    Some("tool_use") => s.tool_uses += 1,
                    Some("tool_result") => s.tool_results += 1,
                    _ => {}
                }
                for t in [&b.text, &b.thinking, &b.name].into_iter().flatten() {
                    s.text_bytes += t.len() as u64;
                }
                if let Some(c) = &b.content {
                    tally(c, s);
                }
            }
        }
    }
}

/// Call `f` on each string an estimator counts in a message, in order: text,
/// thinking text, tool name, the tool input as compact JSON, tool-result text
/// (recursively). Mirrors `model::Block::text_chars`; images and signatures are
/// not text.
pub fn estimator_texts(data: &[u8], mut f: impl FnMut(&str)) -> (u64, u64) {
    let mut json = String::new();
    for_each_record(data, |r| {
        if let Some(c) = r.message.as_ref().and_then(|m| m.content.as_ref()) {
            content_texts(c, &mut json, &mut f);
        }
    })
}

fn content_texts(c: &Content, json: &mut String, f: &mut impl FnMut(&str)) {
    match c {
        Content::Text(t) => f(t),
        Content::Blocks(bs) => {
            for b in bs {
                for t in [&b.text, &b.thinking, &b.name].into_iter().flatten() {
                    if !t.is_empty() {
                        f(t);
                    }
                }
                if let Some(input) = &b.input {
                    json.clear();
                    // Serializing a Value into a String cannot fail.
                    if let Ok(s) = serde_json::to_string(input) {
                        json.push_str(&s);
                    }
                    f(json);
                }
                if let Some(c) = &b.content {
                    content_texts(c, json, f);
                }
            }
        }
    }
}
