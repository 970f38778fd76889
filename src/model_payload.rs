//! What a block's content weighs as prompt text: media payloads a provider
//! decodes rather than reads, plain text joined, JSON sizes without allocating.

use super::Block;
use std::borrow::Cow;

/// Shortest string of an unknown block read as an encoded binary payload.
pub const MEDIA_PAYLOAD_MIN: usize = 1024;

/// Is `s` an encoded binary payload: a `data:…;base64,` URI, or a run of at
/// least [`MEDIA_PAYLOAD_MIN`] base64 characters with no space or newline
/// (text has them)? A provider decodes such a string as media (an image, a
/// PDF); it is not prompt text, and counting its characters as text would
/// make one image or document weigh more than a whole context window.
pub fn is_media_payload(s: &str) -> bool {
    if s.len() < MEDIA_PAYLOAD_MIN {
        return false;
    }
    let body = match s.strip_prefix("data:") {
        Some(rest) => match rest.split_once(";base64,") {
            Some((_, data)) => data,
            None => return false,
        },
        None => s,
    };
    body.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'-' | b'_'))
}

/// How many strings of `v` are media payloads ([`is_media_payload`]).
fn media_payloads(v: &serde_json::Value) -> u64 {
    use serde_json::Value;
    match v {
        Value::String(s) => u64::from(is_media_payload(s)),
        Value::Array(a) => a.iter().map(media_payloads).sum(),
        Value::Object(o) => o.values().map(media_payloads).sum(),
        _ => 0,
    }
}

/// An unknown block's JSON split into its text, `v` with its media payloads
/// emptied (borrowed when it has none), and how many media payloads it had.
pub fn split_media(v: &serde_json::Value) -> (Cow<'_, serde_json::Value>, u64) {
    fn blank(v: &mut serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::String(s) if is_media_payload(s) => s.clear(),
            Value::Array(a) => a.iter_mut().for_each(blank),
            Value::Object(o) => o.values_mut().for_each(blank),
            _ => {}
        }
    }
    let n = media_payloads(v);
    if n == 0 {
        return (Cow::Borrowed(v), 0);
    }
    let mut owned = v.clone();
    blank(&mut owned);
    (Cow::Owned(owned), n)
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The bytes of `w` (little-endian) that JSON escapes (a control character,
/// `"` or `\`), as the high bit of each: the lowest set bit is exact (the
/// "has a zero / smaller byte" tricks only err on bytes above the first
/// match), so `trailing_zeros() / 8` is the offset of the first byte to
/// escape, and 0 means none. Shared by the transcript writer, which escapes
/// those bytes, and the chars/4 count of a tool input, which counts them.
pub(crate) fn json_escape_mask(w: u64) -> u64 {
    let lt_space = w.wrapping_sub(LO * 0x20) & !w & HI;
    let q = w ^ (LO * u64::from(b'"'));
    let bs = w ^ (LO * u64::from(b'\\'));
    let quote = q.wrapping_sub(LO) & !q & HI;
    let backslash = bs.wrapping_sub(LO) & !bs & HI;
    lt_space | quote | backslash
}

/// The text blocks of `blocks`, joined by newlines (tool calls, results,
/// thinking and images left out): borrowed when there is one. The one way a
/// message, a tool result or a record reads as plain text.
pub fn joined_text(blocks: &[Block]) -> Cow<'_, str> {
    let mut texts = blocks.iter().filter_map(|b| match b {
        Block::Text { text } => Some(text.as_str()),
        _ => None,
    });
    match (texts.next(), texts.next()) {
        (None, _) => Cow::Borrowed(""),
        (Some(one), None) => Cow::Borrowed(one),
        (Some(a), Some(b)) => {
            let mut s = String::with_capacity(a.len() + b.len() + 1);
            s.push_str(a);
            s.push('\n');
            s.push_str(b);
            for t in texts {
                s.push('\n');
                s.push_str(t);
            }
            Cow::Owned(s)
        }
    }
}

/// Length of the compact JSON serialization of a value, without allocating it.
pub fn json_len(v: &serde_json::Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    match v {
        serde_json::Value::String(s) => s.len(),
        _ => {
            let mut c = Counter(0);
            // Serializing a Value into a counting writer cannot fail.
            let _ = serde_json::to_writer(&mut c, v);
            c.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_media_payload_is_long_base64_or_a_data_uri() {
        let b64 = |n: usize| "QUJD".repeat(n.div_ceil(4))[..n].to_string();
        assert!(is_media_payload(&b64(MEDIA_PAYLOAD_MIN)));
        assert!(!is_media_payload(&b64(MEDIA_PAYLOAD_MIN - 1)));
        assert!(is_media_payload(&format!("data:image/png;base64,{}", b64(2000))));
        assert!(!is_media_payload(&format!("data:text/plain,{}", b64(2000))));
        // Text has spaces or newlines; a hyphen or slash is base64url or base64.
        assert!(!is_media_payload(&format!("{} {}", b64(900), b64(900))));
        assert!(!is_media_payload(&format!("{}\n{}", b64(900), b64(900))));
        assert!(is_media_payload(&format!("{}-_/+=", b64(2000))));
        let v = serde_json::json!({"a": [b64(2000), "short"], "b": {"c": b64(3000)}, "d": 1});
        let (text, n) = split_media(&v);
        assert_eq!((text.as_ref(), n), (&serde_json::json!({"a": ["", "short"], "b": {"c": ""}, "d": 1}), 2));
        let plain = serde_json::json!({"a": "short"});
        assert!(matches!(split_media(&plain), (Cow::Borrowed(_), 0)));
    }

    proptest::proptest! {
        /// A message reads as its text blocks joined by newlines, whatever
        /// else it holds; one text block is borrowed, not copied.
        #[test]
        fn joined_text_is_the_text_blocks_joined(parts in proptest::collection::vec((0u8..3, "[a-z\n]{0,6}"), 0..6)) {
            let blocks: Vec<Block> = parts
                .iter()
                .map(|(k, t)| match k {
                    0 => Block::text(t.as_str()),
                    1 => Block::Thinking { text: t.clone(), opaque_len: 0 },
                    _ => Block::ToolResult { tool_use_id: "t".into(), content: vec![Block::text(t.as_str())], is_error: None },
                })
                .collect();
            let texts: Vec<&str> = parts.iter().filter(|(k, _)| *k == 0).map(|(_, t)| t.as_str()).collect();
            let joined = joined_text(&blocks);
            proptest::prop_assert_eq!(joined.as_ref(), texts.join("\n"));
            proptest::prop_assert_eq!(matches!(joined, Cow::Borrowed(_)), texts.len() <= 1);
        }
    }
}
