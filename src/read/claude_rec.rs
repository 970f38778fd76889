//! One Claude Code JSONL record, parsed into the fields the reader uses.
//!
//! Fast path: serde into typed structs that borrow from the line, skipping what
//! the reader never reads (`toolUseResult` repeats every tool result; snapshots,
//! metadata) without building it. Parsing every line into a `serde_json::Value`
//! was 70% of a whole replay.
//!
//! The typed structs are strict: a field of an unexpected type, an array where
//! an object belongs, or a content block the typed model cannot represent exactly
//! (unknown block type, a text block without text) makes the fast path give up,
//! and the line is parsed as a `Value` and read the way it always was
//! ([`Rec::from_value`]). Fields the reader does not use are skipped without
//! decoding them (a tool's whole output, again, in `toolUseResult`): their
//! syntax is checked (escapes, control characters), and the fast path takes
//! only UTF-8 lines. A repeated key keeps its last value, as in a `Value`. So
//! both paths read a line the same way; the fast one only covers the common
//! shapes. Where they differ is in what a skipped field may hold: a lone
//! surrogate, which the `Value` path reads as U+FFFD, a number beyond `f64`
//! or nesting deeper than 128, which it rejects.

use crate::model::{Block, Usage};
use crate::read::time;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
pub(super) use usage::{Advisor, advisors_of, as_u64};
use usage::{usage_of, writes_by_ttl};

#[path = "claude_usage.rs"]
mod usage;

/// One parsed line.
pub(super) struct Rec<'a> {
    pub line: u64,
    pub raw: &'a [u8],
    pub f: Fields<'a>,
    /// `message`, when it is an object.
    pub msg: Option<Msg<'a>>,
}

/// A struct read from a JSON object only (never an array, which derived structs
/// would accept by position), whose fields are read as their types say; other
/// keys are skipped, their syntax checked; a repeated key keeps its last value.
macro_rules! json_object {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident<$lt:lifetime> {
            $( $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty = $key:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Default)]
        $vis struct $name<$lt> {
            $( $(#[$fmeta])* $fvis $field: $ty, )*
            _borrows: PhantomData<&$lt ()>,
        }

        impl<'de: $lt, $lt> Deserialize<'de> for $name<$lt> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V<$lt>(PhantomData<&$lt ()>);
                impl<'de: $lt, $lt> Visitor<'de> for V<$lt> {
                    type Value = $name<$lt>;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str(concat!("an object (", stringify!($name), ")"))
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                        let mut out = $name::default();
                        while let Some(key) = map.next_key::<Key<'de>>()? {
                            match key.as_str() {
                                $( $key => out.$field = map.next_value()?, )*
                                _ => {
                                    map.next_value::<IgnoredAny>()?;
                                }
                            }
                        }
                        Ok(out)
                    }
                }
                d.deserialize_map(V(PhantomData))
            }
        }
    };
}

json_object! {
    /// The top-level fields the reader reads. Strings borrow from the line unless
    /// they hold escapes.
    pub(super) struct Fields<'a> {
        pub kind: Option<Str<'a>> = "type",
        pub subtype: Option<Str<'a>> = "subtype",
        pub uuid: Option<Str<'a>> = "uuid",
        pub parent_uuid: Option<Str<'a>> = "parentUuid",
        pub logical_parent_uuid: Option<Str<'a>> = "logicalParentUuid",
        pub session_id: Option<Str<'a>> = "sessionId",
        pub version: Option<Str<'a>> = "version",
        pub cwd: Option<Str<'a>> = "cwd",
        pub agent_id: Option<Str<'a>> = "agentId",
        pub custom_title: Option<Str<'a>> = "customTitle",
        pub ai_title: Option<Str<'a>> = "aiTitle",
        pub summary: Option<Str<'a>> = "summary",
        pub leaf_uuid: Option<Str<'a>> = "leafUuid",
        pub timestamp: Timestamp = "timestamp",
        pub is_sidechain: Option<bool> = "isSidechain",
        pub is_meta: Option<bool> = "isMeta",
        pub is_compact_summary: Option<bool> = "isCompactSummary",
        pub is_api_error_message: Option<bool> = "isApiErrorMessage",
        /// Display only (the REPL's inner tool calls): never sent.
        pub is_virtual: Option<bool> = "isVirtual",
        /// Present at all (even `null`): a sign of an API error record.
        pub error: Present = "error",
        pub api_error_status: Option<u64> = "apiErrorStatus",
        pub compact_metadata: Option<Value> = "compactMetadata",
        pub microcompact_metadata: Option<Value> = "microcompactMetadata",
        pub attachment: Option<Value> = "attachment",
        /// A record a branch (`/branch`, `--fork-session`) copied from the
        /// session it was forked from.
        pub forked_from: Present = "forkedFrom",
        /// Who started a user turn (Claude Code 2.1): `origin.kind` (`human`,
        /// `task-notification`, `peer`…) and `promptSource` (`typed`, `sdk`,
        /// `system`).
        pub origin: Option<TurnOrigin<'a>> = "origin",
        pub prompt_source: Option<Str<'a>> = "promptSource",
        message: Option<TMsg<'a>> = "message",
    }
}

json_object! {
    /// A user record's `origin`.
    pub(super) struct TurnOrigin<'a> {
        pub kind: Option<Str<'a>> = "kind",
    }
}

/// `message`, normalized for the builder.
pub(super) struct Msg<'a> {
    pub id: Option<Cow<'a, str>>,
    pub model: Option<Cow<'a, str>>,
    /// `usage` is there and not null.
    pub carries_usage: bool,
    pub usage: Option<Usage>,
    /// Its cache writes by lifetime, 5 minutes and 1 hour, when the usage
    /// says (`cache_creation`, [`writes_by_ttl`]).
    pub writes_by_ttl: Option<(u64, u64)>,
    /// The advisor's requests inside this response ([`advisors_of`]).
    pub advisors: Vec<Advisor>,
    /// Served in fast mode (`usage.speed: "fast"`), billed at a multiple of
    /// the standard rates.
    pub fast: bool,
    pub content: Content<'a>,
}

/// `message.content`: typed (fast path) or the JSON value (fallback).
pub(super) enum Content<'a> {
    None,
    Typed(TContent<'a>),
    Value(Value),
}

/// One element of an assistant record's content, with its identity for merging a
/// response's lines.
pub(super) enum RawBlock<'a> {
    Typed(TBlock<'a>),
    Value(Value),
}

json_object! {
    struct TMsg<'a> {
        id: Option<Str<'a>> = "id",
        model: Option<Str<'a>> = "model",
        usage: Option<TUsage<'a>> = "usage",
        content: Option<TContent<'a>> = "content",
    }
}

json_object! {
    /// Usage numbers stay JSON values (numbers allocate nothing) so they are read
    /// by the same lenient rule as on the fallback path.
    struct TUsage<'a> {
        input_tokens: Option<Value> = "input_tokens",
        output_tokens: Option<Value> = "output_tokens",
        cache_read_input_tokens: Option<Value> = "cache_read_input_tokens",
        cache_creation_input_tokens: Option<Value> = "cache_creation_input_tokens",
        cache_creation: Option<TCacheCreation<'a>> = "cache_creation",
        iterations: Option<Value> = "iterations",
        speed: Option<Str<'a>> = "speed",
    }
}

json_object! {
    /// `usage.cache_creation`: typed, so that reading it builds no map.
    struct TCacheCreation<'a> {
        m5: Option<Value> = "ephemeral_5m_input_tokens",
        h1: Option<Value> = "ephemeral_1h_input_tokens",
    }
}

/// `content`: a string or an array of blocks (anything else: fallback).
pub(super) enum TContent<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<TBlock<'a>>),
}

/// A content element: a bare string or a block object.
pub(super) enum TBlock<'a> {
    Str(Cow<'a, str>),
    Obj(Box<TBlockObj<'a>>),
}

json_object! {
    /// A content block, flat: `type` says which fields count.
    pub(super) struct TBlockObj<'a> {
        kind: Option<Str<'a>> = "type",
        text: Option<Str<'a>> = "text",
        thinking: Option<Str<'a>> = "thinking",
        signature: Option<Str<'a>> = "signature",
        data: Option<Str<'a>> = "data",
        id: Option<Str<'a>> = "id",
        name: Option<Str<'a>> = "name",
        /// Present even when `null` (the model keeps a null input as null).
        input: Present = "input",
        tool_use_id: Option<Str<'a>> = "tool_use_id",
        content: Option<TContent<'a>> = "content",
        is_error: Option<bool> = "is_error",
        source: Option<TSource<'a>> = "source",
    }
}

json_object! {
    struct TSource<'a> {
        media_type: Option<Str<'a>> = "media_type",
        data: Option<Str<'a>> = "data",
        url: Option<Str<'a>> = "url",
    }
}

impl<'a> Rec<'a> {
    /// Parse one line: the typed fast path, else the `Value` path. `Err` is the
    /// reason the line is malformed (never quoting it).
    pub fn parse(line: u64, raw: &'a [u8], typed: bool) -> Result<Rec<'a>, String> {
        if typed && let Some(rec) = Rec::typed(line, raw) {
            return Ok(rec);
        }
        match crate::read::parse_line(raw) {
            Ok(v) if v.is_object() => Ok(Rec::from_value(line, raw, v)),
            Ok(_) => Err(format!("JSON record is not an object ({} bytes)", raw.len())),
            Err(reason) => Err(reason),
        }
    }

    /// The fast path; `None` when the line needs the `Value` path.
    pub fn typed(line: u64, raw: &'a [u8]) -> Option<Rec<'a>> {
        // Derived structs also accept arrays; a record must be an object.
        if raw.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        // A line that is not UTF-8 fails here, wherever its bad bytes sit (a
        // skipped field is not decoded): the `Value` path then reports it.
        let mut f: Fields<'a> = crate::read::from_utf8_line(raw)?;
        let msg = match f.message.take() {
            None => None,
            Some(m) => {
                if m.content.as_ref().is_some_and(|c| !c.representable()) {
                    return None;
                }
                Some(Msg {
                    id: m.id.map(|s| s.0),
                    model: m.model.map(|s| s.0),
                    carries_usage: m.usage.is_some(),
                    advisors: m.usage.as_ref().map_or_else(Vec::new, |u| advisors_of(u.iterations.as_ref())),
                    fast: m.usage.as_ref().is_some_and(|u| u.speed.as_deref() == Some("fast")),
                    writes_by_ttl: m.usage.as_ref().and_then(|u| u.cache_creation.as_ref()).and_then(|c| {
                        writes_by_ttl(|k| match k {
                            "ephemeral_5m_input_tokens" => c.m5.as_ref(),
                            "ephemeral_1h_input_tokens" => c.h1.as_ref(),
                            _ => None,
                        })
                    }),
                    usage: m.usage.map(|u| {
                        usage_of(|k| match k {
                            "input_tokens" => u.input_tokens.as_ref(),
                            "output_tokens" => u.output_tokens.as_ref(),
                            "cache_read_input_tokens" => u.cache_read_input_tokens.as_ref(),
                            "cache_creation_input_tokens" => u.cache_creation_input_tokens.as_ref(),
                            "iterations" => u.iterations.as_ref(),
                            _ => None,
                        })
                    }),
                    content: m.content.map_or(Content::None, Content::Typed),
                })
            }
        };
        Some(Rec { line, raw, f, msg })
    }

    /// The reader's original reading of a record parsed as a `Value` object.
    pub fn from_value(line: u64, raw: &'a [u8], mut v: Value) -> Rec<'a> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(|s| Str(Cow::Owned(s.to_string())));
        let b = |k: &str| v.get(k).and_then(Value::as_bool);
        let f = Fields {
            kind: s("type"),
            subtype: s("subtype"),
            uuid: s("uuid"),
            parent_uuid: s("parentUuid"),
            logical_parent_uuid: s("logicalParentUuid"),
            session_id: s("sessionId"),
            version: s("version"),
            cwd: s("cwd"),
            agent_id: s("agentId"),
            custom_title: s("customTitle"),
            ai_title: s("aiTitle"),
            summary: s("summary"),
            leaf_uuid: s("leafUuid"),
            timestamp: Timestamp(v.get("timestamp").and_then(time::parse_value)),
            is_sidechain: b("isSidechain"),
            is_meta: b("isMeta"),
            is_compact_summary: b("isCompactSummary"),
            is_api_error_message: b("isApiErrorMessage"),
            is_virtual: b("isVirtual"),
            error: Present(v.get("error").cloned()),
            api_error_status: v.get("apiErrorStatus").and_then(Value::as_u64),
            compact_metadata: v.get("compactMetadata").cloned(),
            microcompact_metadata: v.get("microcompactMetadata").cloned(),
            attachment: v.get("attachment").cloned(),
            forked_from: Present(v.get("forkedFrom").cloned()),
            origin: v.get("origin").filter(|o| o.is_object()).map(|o| TurnOrigin {
                kind: o.get("kind").and_then(Value::as_str).map(|s| Str(Cow::Owned(s.to_string()))),
                _borrows: PhantomData,
            }),
            prompt_source: s("promptSource"),
            message: None,
            _borrows: PhantomData,
        };
        let msg = match v.get_mut("message") {
            Some(Value::Object(m)) => {
                let s = |k: &str| m.get(k).and_then(Value::as_str).map(|s| Cow::Owned(s.to_string()));
                let (id, model) = (s("id"), s("model"));
                let usage = m.get("usage");
                Some(Msg {
                    id,
                    model,
                    carries_usage: usage.is_some_and(|u| !u.is_null()),
                    usage: usage.and_then(Value::as_object).map(|o| usage_of(|k| o.get(k))),
                    advisors: advisors_of(usage.and_then(|u| u.get("iterations"))),
                    fast: usage.and_then(|u| u.get("speed")).and_then(Value::as_str) == Some("fast"),
                    writes_by_ttl: usage
                        .and_then(|u| u.get("cache_creation"))
                        .and_then(Value::as_object)
                        .and_then(|o| writes_by_ttl(|k| o.get(k))),
                    // Moved out, not cloned: a huge text is never held twice.
                    content: m.get_mut("content").map_or(Content::None, |c| Content::Value(std::mem::take(c))),
                })
            }
            _ => None,
        };
        Rec { line, raw, f, msg }
    }

    pub fn kind(&self) -> &str {
        self.f.kind.as_deref().unwrap_or("(no type)")
    }
    /// Copied by a branch from the session it was forked from (`forkedFrom`).
    pub fn is_copied(&self) -> bool {
        self.f.forked_from.0.as_ref().is_some_and(|v| !v.is_null())
    }

    /// The id of the session a branch copied this record from.
    pub fn copied_from(&self) -> Option<&str> {
        self.f.forked_from.0.as_ref()?.get("sessionId").and_then(Value::as_str).filter(|s| !s.is_empty())
    }
    pub fn uuid(&self) -> Option<&str> {
        self.f.uuid.as_deref().filter(|u| !u.is_empty())
    }
    pub fn is_sidechain(&self) -> bool {
        self.f.is_sidechain.unwrap_or(false)
    }
    /// Whether `message.content` holds a tool result: a user record that
    /// answers a tool call, not a prompt.
    pub fn holds_tool_result(&self) -> bool {
        match self.msg.as_ref().map(|m| &m.content) {
            Some(Content::Typed(TContent::Blocks(v))) => {
                v.iter().any(|b| matches!(b, TBlock::Obj(o) if o.kind.as_deref() == Some("tool_result")))
            }
            Some(Content::Value(Value::Array(v))) => {
                v.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            }
            _ => false,
        }
    }
    pub fn carries_usage(&self) -> bool {
        self.msg.as_ref().is_some_and(|m| m.carries_usage)
    }
    /// Move `message.content` out of the record: the builder moves its strings
    /// into blocks. Nothing reads the content of a record twice.
    pub fn take_content(&mut self) -> Content<'a> {
        self.msg.as_mut().map_or(Content::None, |m| std::mem::replace(&mut m.content, Content::None))
    }
}

impl<'a> Content<'a> {
    /// The content as blocks of a user message: a string is one text block.
    pub fn into_blocks(self) -> Vec<Block> {
        match self {
            Content::None => Vec::new(),
            Content::Typed(c) => typed_blocks(c),
            Content::Value(v) => super::content_blocks(Some(v)),
        }
    }

    /// The content as the raw elements of an assistant response line.
    pub fn into_raw_blocks(self) -> Vec<RawBlock<'a>> {
        match self {
            Content::None => Vec::new(),
            Content::Typed(TContent::Text(s)) => vec![RawBlock::Typed(TBlock::Str(s))],
            Content::Typed(TContent::Blocks(bs)) => bs.into_iter().map(RawBlock::Typed).collect(),
            Content::Value(Value::Array(a)) => a.into_iter().map(RawBlock::Value).collect(),
            Content::Value(Value::Null) => Vec::new(),
            Content::Value(v) => vec![RawBlock::Value(v)],
        }
    }
}

impl RawBlock<'_> {
    /// Identity of a block for merging a response's lines: a tool call by its id,
    /// any other block by its content. One identity whichever path read the line:
    /// a response's lines can take different paths (one line has a field of an
    /// odd type), and a block repeated across them must still be kept once.
    pub fn hash(&self) -> u64 {
        match self {
            RawBlock::Typed(b) => typed_hash(b),
            RawBlock::Value(v) => value_hash(v),
        }
    }

    pub fn into_block(self) -> Block {
        match self {
            RawBlock::Typed(b) => typed_block(b),
            RawBlock::Value(v) => super::convert_block(v),
        }
    }
}

impl TContent<'_> {
    /// Every block (recursively) is one the typed conversion reads exactly as the
    /// `Value` path would.
    fn representable(&self) -> bool {
        match self {
            TContent::Text(_) => true,
            TContent::Blocks(bs) => bs.iter().all(TBlock::representable),
        }
    }
}

impl TBlock<'_> {
    /// The typed conversion reads this block exactly as the `Value` path would.
    fn representable(&self) -> bool {
        match self {
            TBlock::Str(_) => true,
            TBlock::Obj(o) => match o.kind.as_deref() {
                Some("text") => o.text.is_some(),
                Some("thinking" | "redacted_thinking" | "tool_use" | "image") => true,
                Some("tool_result") => o.content.as_ref().is_none_or(TContent::representable),
                _ => false,
            },
        }
    }
}

fn owned(s: Option<Str<'_>>) -> String {
    s.map(|s| s.0.into_owned()).unwrap_or_default()
}

fn typed_blocks(c: TContent<'_>) -> Vec<Block> {
    match c {
        TContent::Text(text) => vec![Block::Text { text: text.into_owned() }],
        TContent::Blocks(bs) => bs.into_iter().map(typed_block).collect(),
    }
}

/// The conversion of `claude::convert_block`, for representable blocks.
fn typed_block(b: TBlock<'_>) -> Block {
    let o = match b {
        TBlock::Str(text) => return Block::Text { text: text.into_owned() },
        TBlock::Obj(o) => *o,
    };
    match o.kind.as_deref() {
        Some("thinking") => {
            Block::Thinking { opaque_len: o.signature.as_deref().map_or(0, str::len), text: owned(o.thinking) }
        }
        Some("redacted_thinking") => {
            Block::Thinking { text: String::new(), opaque_len: o.data.as_deref().map_or(0, str::len) }
        }
        Some("tool_use") => Block::ToolUse {
            id: owned(o.id),
            name: owned(o.name),
            input: o.input.0.unwrap_or_else(|| Value::Object(Default::default())),
        },
        Some("tool_result") => Block::ToolResult {
            is_error: o.is_error,
            tool_use_id: owned(o.tool_use_id),
            content: o.content.map(typed_blocks).unwrap_or_default(),
        },
        Some("image") => {
            let src = o.source;
            let media_type = src.as_ref().and_then(|s| s.media_type.as_deref()).unwrap_or_default().to_string();
            let bytes = src.as_ref().and_then(|s| s.data.as_deref().or(s.url.as_deref())).map_or(0, str::len);
            Block::Image { media_type, bytes }
        }
        // "text" (with text, see `representable`); nothing else reaches here.
        _ => Block::Text { text: owned(o.text) },
    }
}

/// Identity of a block read on the `Value` path: the typed identity whenever
/// the typed path could have read the block, else its compact JSON. A block's
/// identity so depends on the block, not on whether some other field of its line
/// sent the line down the `Value` path.
fn value_hash(v: &Value) -> u64 {
    // A tool call with an id is its id on both paths: hashed without reading
    // it as typed, which would copy its input (a whole file, for a write).
    let call = v.get("type").and_then(Value::as_str) == Some("tool_use") && v.get("id").is_some_and(Value::is_string);
    if !call
        && let Ok(b) = TBlock::deserialize(v)
        && b.representable()
    {
        return typed_hash(&b);
    }
    super::block_hash(v)
}

/// Identity of a typed block: every field it was read with, so two lines
/// carrying the same block hash the same and blocks that differ do not.
fn typed_hash(b: &TBlock<'_>) -> u64 {
    let mut h = super::block_hasher();
    match b {
        TBlock::Str(s) => (0u8, s.as_ref()).hash(&mut h),
        TBlock::Obj(o) => match (o.kind.as_deref(), o.id.as_deref()) {
            // As on the `Value` path: a tool call is its id.
            (Some("tool_use"), Some(id)) => ("tool_use", id).hash(&mut h),
            _ => {
                1u8.hash(&mut h);
                for s in [&o.kind, &o.text, &o.thinking, &o.signature, &o.data, &o.id, &o.name, &o.tool_use_id] {
                    s.as_deref().hash(&mut h);
                }
                match &o.input.0 {
                    Some(v) => {
                        1u8.hash(&mut h);
                        super::hash_json(v, &mut h);
                    }
                    None => 0u8.hash(&mut h),
                }
                match &o.content {
                    None => 0u8.hash(&mut h),
                    Some(TContent::Text(t)) => (1u8, t.as_ref()).hash(&mut h),
                    Some(TContent::Blocks(bs)) => {
                        2u8.hash(&mut h);
                        bs.len().hash(&mut h);
                        for b in bs {
                            typed_hash(b).hash(&mut h);
                        }
                    }
                }
                o.is_error.hash(&mut h);
                match &o.source {
                    None => 0u8.hash(&mut h),
                    Some(s) => {
                        1u8.hash(&mut h);
                        for f in [&s.media_type, &s.data, &s.url] {
                            f.as_deref().hash(&mut h);
                        }
                    }
                }
            }
        },
    }
    h.finish()
}

/// A string field: borrowed from the line unless it holds escapes. (serde's own
/// `Cow<str>` always copies: it borrows only through `#[serde(borrow)]`, which
/// hand-written visitors cannot use.)
pub(super) struct Str<'a>(pub Cow<'a, str>);

impl std::ops::Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

/// A key of an object: borrowed from the line unless it holds escapes.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Key::Borrowed(s))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Key::Owned(s.to_owned()))
            }
        }
        d.deserialize_str(V)
    }
}

/// Any value, `null` included, as `Some`; `None` when the key is missing.
#[derive(Default)]
pub(super) struct Present(pub Option<Value>);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|v| Present(Some(v)))
    }
}

/// `timestamp` read as `time::parse_value` reads it, without building a `Value`
/// for the string.
#[derive(Default)]
pub(super) struct Timestamp(pub Option<i64>);

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<i64>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a timestamp")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(time::parse_iso(s))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Self::Value, E> {
                Ok(time::parse_value(&Value::from(n)))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Self::Value, E> {
                Ok(time::parse_value(&Value::from(n)))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Self::Value, E> {
                Ok(time::parse_value(&Value::from(n)))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
        }
        d.deserialize_any(V).map(Timestamp)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for TContent<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = TContent<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(TContent::Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(TContent::Text(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(TContent::Text(Cow::Owned(s)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                while let Some(b) = seq.next_element()? {
                    blocks.push(b);
                }
                Ok(TContent::Blocks(blocks))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for TBlock<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = TBlock<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a content block object")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(TBlock::Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(TBlock::Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(TBlock::Str(Cow::Owned(s)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                TBlockObj::deserialize(MapAccessDeserializer::new(map)).map(|o| TBlock::Obj(Box::new(o)))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}
