//! Masking of secret-looking text (`--redact`, DESIGN.md §8): API keys (OpenAI
//! and Anthropic `sk-…`, AWS `AKIA…`/`ASIA…`, GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/
//! `ghr_`/`github_pat_`, Slack `xox[abprse]-`, Google `AIza…`), JWTs, private-key
//! blocks (`-----BEGIN … PRIVATE KEY-----` to its `END` line, or to the end of the
//! text when a trim cut it off), `password=`/`api_key: `/`token=`-style
//! assignments, `Bearer`/`Basic` credentials and `user:password@` in URLs.
//!
//! Session logs are untrusted text full of other people's secrets: tool output
//! that printed an `.env`, a pasted key, a `curl -H "Authorization: …"`. The
//! CLI applies [`redact_session`] to every session as soon as it is read, so
//! nothing downstream (the replay, summarizers — including requests to an LLM —,
//! quality atoms, transcripts, reports, HTML) ever holds a secret, and
//! [`redact_serde`] to the report as a last pass over text produced later (error
//! and fallback reasons that quote a server). Any new output that takes text
//! from somewhere else should call [`redact`] on it.
//!
//! Token estimates under `--redact` are those of the masked text (a mask is
//! usually a few tokens shorter than the secret it replaces).
//!
//! Patterns err on the side of masking: `password: string` in a TypeScript
//! snippet loses its `string`. Ids (tool-use ids, session ids) are never
//! replaced by the bare mask, which would make distinct ids equal and pair the
//! wrong tool results: a secret-looking id becomes `redacted-<hash>`.

use crate::model::{Block, Message, Session};
use regex::Regex;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::LazyLock;

/// What a secret is replaced with.
pub const MASK: &str = "[REDACTED]";

/// The names an assignment's key may end with to count as a secret.
const SECRET_NAMES: &str = r"password|passwd|passphrase|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|session[_-]?token|token|credentials?";

struct Rules {
    /// Self-identifying tokens: masked whole.
    tokens: Regex,
    private_key: Regex,
    /// `name = value`, `name: value`, `"name": "value"`: the value is masked.
    assignment: Regex,
    /// `Bearer <credential>`, `Basic <credential>`.
    auth_scheme: Regex,
    /// `scheme://user:password@host`.
    url_password: Regex,
    /// A JSON object key that names a secret (its string value is masked).
    secret_key: Regex,
}

static RULES: LazyLock<Option<Rules>> = LazyLock::new(|| {
    let tokens = Regex::new(concat!(
        r"\bsk-[A-Za-z0-9_\-]{16,}",
        r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        r"|\bgh[pousr]_[A-Za-z0-9]{20,}",
        r"|\bgithub_pat_[A-Za-z0-9_]{20,}",
        r"|\bxox[abprse]-[A-Za-z0-9\-]{8,}",
        r"|\bAIza[0-9A-Za-z_\-]{30,}",
        r"|\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
    ))
    .ok()?;
    let private_key = Regex::new(
        r"(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
    )
    .ok()?;
    let assignment = Regex::new(&format!(
        r#"(?i)\b([A-Za-z0-9_.\-]*?(?:{SECRET_NAMES}))\b(\s*["']?\s*(?:[:=]|=>)\s*)(["']?)([^\s"'`,;&<>]+)"#
    ))
    .ok()?;
    let auth_scheme = Regex::new(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=\-]{8,}").ok()?;
    let url_password = Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+):[^\s/@]+@").ok()?;
    let secret_key = Regex::new(&format!(r"(?i)^[A-Za-z0-9_.\-]*(?:{SECRET_NAMES})$")).ok()?;
    Some(Rules { tokens, private_key, assignment, auth_scheme, url_password, secret_key })
});

fn rules() -> Option<&'static Rules> {
    RULES.as_ref()
}

/// `text` with every secret-looking part masked; borrowed when nothing matched.
pub fn redact(text: &str) -> Cow<'_, str> {
    let Some(r) = rules() else {
        // The patterns are constants; they always compile. Should they not, the
        // safe answer is to hide everything rather than nothing.
        return if text.is_empty() { Cow::Borrowed(text) } else { Cow::Borrowed(MASK) };
    };
    let mut out = Cow::Borrowed(text);
    for (re, with) in [
        (&r.private_key, MASK),
        (&r.tokens, MASK),
        (&r.auth_scheme, "${1}${2}[REDACTED]"),
        (&r.url_password, "${1}:[REDACTED]@"),
        (&r.assignment, "${1}${2}${3}[REDACTED]"),
    ] {
        if let Cow::Owned(s) = re.replace_all(&out, with) {
            out = Cow::Owned(s);
        }
    }
    out
}

/// Redact a string in place.
pub fn redact_string(s: &mut String) {
    if let Cow::Owned(o) = redact(s) {
        *s = o;
    }
}

/// An identifier that must stay distinct from other identifiers: when it looks
/// secret, it becomes `redacted-<hash of the original>`.
pub fn redact_id(s: &mut String) {
    if matches!(redact(s), Cow::Owned(_)) {
        *s = format!("redacted-{:016x}", crate::output::fsutil::fnv1a(s.as_bytes()));
    }
}

/// Whether a JSON object key names a secret (`password`, `api_key`, `GITHUB_TOKEN`…).
pub fn is_secret_key(key: &str) -> bool {
    rules().is_some_and(|r| r.secret_key.is_match(key))
}

/// Redact every string of a JSON value. With `by_key`, the string or number value
/// of a key that names a secret is masked whole (`{"password": "hunter2"}`):
/// right for tool inputs and raw records from logs, wrong for compactor's own
/// typed structures (a field would change type).
pub fn redact_json(v: &mut Value, by_key: bool) {
    match v {
        Value::String(s) => redact_string(s),
        Value::Array(a) => a.iter_mut().for_each(|x| redact_json(x, by_key)),
        Value::Object(o) => {
            if o.keys().any(|k| matches!(redact(k), Cow::Owned(_))) {
                let old = std::mem::take(o);
                for (mut k, x) in old {
                    redact_string(&mut k);
                    o.insert(k, x);
                }
            }
            for (k, x) in o.iter_mut() {
                let masked = by_key
                    && is_secret_key(k)
                    && match x {
                        Value::String(s) => !s.is_empty(),
                        Value::Number(_) => true,
                        _ => false,
                    };
                if masked {
                    *x = Value::String(MASK.to_string());
                } else {
                    redact_json(x, by_key);
                }
            }
        }
        _ => {}
    }
}

/// Redact one content block (ids stay distinct: see [`redact_id`]).
pub fn redact_block(b: &mut Block) {
    match b {
        Block::Text { text } | Block::Thinking { text, .. } => redact_string(text),
        Block::ToolUse { id, name, input } => {
            redact_id(id);
            redact_string(name);
            redact_json(input, true);
        }
        Block::ToolResult { tool_use_id, content, .. } => {
            redact_id(tool_use_id);
            content.iter_mut().for_each(redact_block);
        }
        Block::Image { media_type, .. } => redact_string(media_type),
        Block::Other { raw } => redact_json(raw, true),
    }
}

pub fn redact_message(m: &mut Message) {
    m.blocks.iter_mut().for_each(redact_block);
}

/// Redact everything of a session that came from the log's text: messages, ids
/// (kept distinct and consistent, so parent/sub-agent links still match), meta,
/// recorded errors and diagnostics. File paths are the user's own and stay.
pub fn redact_session(s: &mut Session) {
    redact_id(&mut s.id);
    if let Some(p) = &mut s.parent {
        redact_id(p);
    }
    s.subagents.iter_mut().for_each(redact_id);
    let meta = &mut s.meta;
    for v in [&mut meta.cwd, &mut meta.title, &mut meta.agent_type, &mut meta.description].into_iter().flatten() {
        redact_string(v);
    }
    meta.versions.iter_mut().chain(meta.models.iter_mut()).for_each(redact_string);
    s.messages.iter_mut().for_each(redact_message);
    for c in &mut s.calls {
        if let Some(m) = &mut c.model {
            redact_string(m);
        }
        if let Some(r) = &mut c.response_id {
            redact_id(r);
        }
    }
    for c in &mut s.recorded_compactions {
        if let Some(t) = &mut c.trigger {
            redact_string(t);
        }
    }
    for c in &mut s.recorded_clearings {
        if let Some(t) = &mut c.trigger {
            redact_string(t);
        }
        // What the agent sent in place of an output can quote it (Gemini's preview).
        c.blocks.iter_mut().flat_map(|b| b.sent.iter_mut()).for_each(redact_block);
    }
    s.errors.iter_mut().for_each(|e| redact_string(&mut e.message));
    let d = &mut s.diagnostics;
    d.messages.iter_mut().for_each(|m| redact_string(&mut m.message));
    d.unknown_raw.iter_mut().for_each(|(_, raw)| redact_string(raw));
    for map in [&mut d.unknown_kinds, &mut d.skipped] {
        if map.keys().any(|k| matches!(redact(k), Cow::Owned(_))) {
            let old = std::mem::take(map);
            for (mut k, n) in old {
                redact_string(&mut k);
                *map.entry(k).or_default() += n;
            }
        }
    }
}

/// A copy of any serializable structure with every string redacted (through a
/// `serde_json::Value`, so numbers keep their exact values). `None` when the
/// structure does not survive the round trip: callers must then not output it.
pub fn redact_serde<T: Serialize + DeserializeOwned>(t: &T) -> Option<T> {
    let mut v = serde_json::to_value(t).ok()?;
    redact_json(&mut v, false);
    serde_json::from_value(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Fake secrets, assembled so no scanner mistakes this file for a leak.
    fn fakes() -> Vec<String> {
        let body = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
        vec![
            format!("sk-ant-api03-{body}"),
            format!("sk-proj-{body}"),
            format!("AKIA{}", "IOSFODNN7EXAMPLE"),
            format!("ghp_{body}"),
            format!("gho_{body}"),
            format!("github_pat_11ABCDEFG_{body}"),
            format!("xoxb-1234567890-{body}"),
            format!("AIza{}", &body[..35.min(body.len())]),
            format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{body}"),
        ]
    }

    #[test]
    fn masks_every_kind_of_key() {
        for key in fakes() {
            let text = format!("before {key} after");
            let out = redact(&text);
            assert_eq!(out, format!("before {MASK} after"), "{key}");
        }
    }

    #[test]
    fn masks_private_key_blocks_even_when_cut() {
        let block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
        assert_eq!(redact(&format!("x {block} y")), format!("x {MASK} y"));
        let cut = "cat id_rsa\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7";
        assert_eq!(redact(cut), format!("cat id_rsa\n{MASK}"));
        // A public key is not a secret.
        let public = "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----";
        assert_eq!(redact(public), public);
    }

    #[test]
    fn masks_assignments_keeping_the_name() {
        for (text, want) in [
            ("password=hunter2", "password=[REDACTED]"),
            ("DB_PASSWORD = 'hunter2'", "DB_PASSWORD = '[REDACTED]'"),
            ("api_key: abc123", "api_key: [REDACTED]"),
            (r#"{"token": "abc123"}"#, r#"{"token": "[REDACTED]"}"#),
            ("export GITHUB_TOKEN=abc123; ls", "export GITHUB_TOKEN=[REDACTED]; ls"),
            ("curl -H 'Authorization: Bearer abcdefgh12345'", "curl -H 'Authorization: Bearer [REDACTED]'"),
            ("git clone https://me:s3cret@example.com/r.git", "git clone https://me:[REDACTED]@example.com/r.git"),
        ] {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for text in [
            "max_tokens: 4096",
            "input_tokens=12 tokens_before: 5",
            "the sk-learn library",
            "fn main() { println!(\"hi\"); }",
            "AKIA is a prefix",
            "",
        ] {
            assert!(matches!(redact(text), Cow::Borrowed(_)), "{text} → {}", redact(text));
        }
    }

    #[test]
    fn json_values_by_key_and_by_content() {
        let key = &fakes()[0];
        let mut v = json!({"command": format!("deploy --key {key}"), "password": "hunter2", "port": 22, "secret": 1234,
            "env": {"API_KEY": "x"}, "nested": [{"token": ""}]});
        redact_json(&mut v, true);
        assert_eq!(
            v,
            json!({"command": "deploy --key [REDACTED]", "password": MASK, "port": 22, "secret": MASK,
                "env": {"API_KEY": MASK}, "nested": [{"token": ""}]})
        );
    }

    /// What an agent sent in place of a cleared output (Gemini's masked
    /// preview) is log text like any other.
    #[test]
    fn a_clearings_sent_text_is_redacted_with_the_session() {
        let key = &fakes()[0];
        let mut s = Session::new("s", crate::model::Format::Gemini, "s.jsonl");
        s.recorded_clearings.push(crate::model::RecordedClearing {
            source_line: 1,
            at: 0,
            blocks: vec![crate::model::ClearedBlock::new(
                0,
                0,
                vec![Block::text(format!("<tool_output_masked>{key}"))],
            )],
            tokens_saved: None,
            trigger: Some(key.clone()),
        });
        redact_session(&mut s);
        let json = serde_json::to_string(&s).unwrap();
        assert!(!json.contains(key.as_str()) && json.contains("<tool_output_masked>"), "{json}");
    }

    #[test]
    fn ids_stay_distinct() {
        let fakes = fakes();
        let (mut a, mut b) = (fakes[0].clone(), fakes[1].clone());
        redact_id(&mut a);
        redact_id(&mut b);
        assert!(a.starts_with("redacted-") && b.starts_with("redacted-") && a != b);
        let mut plain = "toolu_01ABC".to_string();
        redact_id(&mut plain);
        assert_eq!(plain, "toolu_01ABC");
    }

    #[test]
    fn round_trip_keeps_numbers_exact() {
        #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        struct Row {
            note: String,
            pct: f64,
            big: u64,
        }
        let row = Row { note: format!("key {}", fakes()[3]), pct: 0.1 + 0.2, big: u64::MAX };
        let out = redact_serde(&row).unwrap();
        assert_eq!(out, Row { note: format!("key {MASK}"), pct: 0.1 + 0.2, big: u64::MAX });
    }

    #[test]
    fn idempotent() {
        for key in fakes() {
            let once = redact(&format!("password={key} {key}")).into_owned();
            assert_eq!(redact(&once), once);
        }
    }
}
