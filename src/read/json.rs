//! JSON text as the agents write it. A JavaScript agent that cuts a string
//! inside an emoji writes half a UTF-16 surrogate pair (`"\ud83d"`), which
//! serde_json rejects; such a record is read with U+FFFD in its place, as the
//! agents themselves read it back, rather than dropped as malformed.

use memchr::memmem;
use serde::de::DeserializeOwned;

/// Deserialize one JSONL line that is UTF-8, borrowing from it; `None` for a
/// line that is not UTF-8 or not a `T`. The line is checked as UTF-8 once,
/// whole, and parsed as text: serde_json's byte parser checks every string it
/// reads with a call of its own (a fifth of a parse, in many short calls),
/// and none of the strings in the fields a type skips.
pub(crate) fn from_utf8_line<'a, T: serde::Deserialize<'a>>(line: &'a [u8]) -> Option<T> {
    serde_json::from_str(std::str::from_utf8(line).ok()?).ok()
}

/// Deserialize one JSON text: [`from_utf8_line`]'s way when it is UTF-8,
/// else the byte parser's, for its error. Lone surrogates are an error here.
fn from_json_line<T: DeserializeOwned>(line: &[u8]) -> serde_json::Result<T> {
    match std::str::from_utf8(line) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(line),
    }
}

/// Deserialize a JSON text (a line or a whole document), a lone surrogate
/// escape read as U+FFFD. A text that parses is parsed once: the repair is
/// tried only after a failure at such an escape.
pub(crate) fn parse_json<T: DeserializeOwned>(text: &[u8]) -> serde_json::Result<T> {
    from_json_line(text).or_else(|e| parse_repaired(text, e))
}

/// [`parse_json`] of a text that may well not be one JSON document (a JSONL
/// file tried whole): parsed as bytes, so it fails where it stops being one
/// document, without a first pass over all of it for UTF-8.
pub(crate) fn parse_document<T: DeserializeOwned>(text: &[u8]) -> serde_json::Result<T> {
    serde_json::from_slice(text).or_else(|e| parse_repaired(text, e))
}

/// `text` parsed again with its lone surrogates repaired, when `failure`
/// was at one; else `failure`.
fn parse_repaired<T: DeserializeOwned>(text: &[u8], failure: serde_json::Error) -> serde_json::Result<T> {
    // serde_json's messages for a lone half: "lone leading surrogate in hex
    // escape", "unexpected end of hex escape".
    let at_surrogate = failure.is_syntax() && {
        let m = failure.to_string();
        m.contains("surrogate") || m.contains("end of hex escape")
    };
    match at_surrogate.then(|| repair_lone_surrogates(text)).flatten() {
        Some(fixed) => from_json_line(&fixed),
        None => Err(failure),
    }
}

/// [`parse_json`] of a JSON text held in a string (a tool call's arguments):
/// already UTF-8, so not checked again.
pub(crate) fn parse_json_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    serde_json::from_str(text).or_else(|e| parse_repaired(text.as_bytes(), e))
}

/// Parse one JSONL line, turning failure into a short reason for a diagnostic.
/// The reason never quotes the line's content (logs may hold secrets).
pub fn parse_line(line: &[u8]) -> Result<serde_json::Value, String> {
    parse_json(line).map_err(|e: serde_json::Error| {
        if e.is_eof() {
            format!("truncated JSON record ({} bytes): {}", line.len(), e)
        } else {
            format!("malformed JSON record ({} bytes): {}", line.len(), e)
        }
    })
}

/// `text` with every `\u` escape of a lone UTF-16 surrogate (a high one not
/// followed by a low one's escape, a low one not preceded by a high one's)
/// rewritten as `\ufffd`, the same length, so a later error's column still
/// points into the line as written; `None` when there is none.
///
/// An escape is a `\u` after an even run of backslashes (`\\u` is a
/// backslash and a `u`). Linear: the runs counted back from two finds are
/// separated by the `u` of the first.
pub(crate) fn repair_lone_surrogates(text: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut paired_to = 0;
    for i in memmem::find_iter(text, b"\\u") {
        if i < paired_to || !escapes(text, i) {
            continue;
        }
        let lone = match unit_at(text, i) {
            Some(0xD800..=0xDBFF) => {
                let low = text.get(i + 6..i + 8) == Some(b"\\u".as_slice())
                    && matches!(unit_at(text, i + 6), Some(0xDC00..=0xDFFF));
                if low {
                    paired_to = i + 12;
                }
                !low
            }
            Some(0xDC00..=0xDFFF) => true,
            _ => false,
        };
        if lone {
            let fixed = out.get_or_insert_with(|| text.to_vec());
            fixed[i + 2..i + 6].copy_from_slice(b"fffd");
        }
    }
    out
}

/// Whether the backslash at `i` starts an escape: the run of backslashes
/// ending there is odd.
fn escapes(text: &[u8], i: usize) -> bool {
    text[..=i].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
}

/// The code unit of the `\uXXXX` escape at `i`, if its four digits are hex.
fn unit_at(text: &[u8], i: usize) -> Option<u16> {
    let digits = std::str::from_utf8(text.get(i + 2..i + 6)?).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn repaired(s: &str) -> Option<String> {
        repair_lone_surrogates(s.as_bytes()).map(|v| String::from_utf8(v).unwrap_or_default())
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character() {
        assert_eq!(repaired(r#"{"a":"cut \ud83d"}"#).as_deref(), Some(r#"{"a":"cut \ufffd"}"#));
        assert_eq!(repaired(r#"{"a":"\uDE00 tail"}"#).as_deref(), Some(r#"{"a":"\ufffd tail"}"#));
        // A high one before anything but a low one's escape, twice in a row.
        assert_eq!(repaired(r#"["\ud83d\ud83dx"]"#).as_deref(), Some(r#"["\ufffd\ufffdx"]"#));
        assert_eq!(repaired(r#"["\ud83d\n"]"#).as_deref(), Some(r#"["\ufffd\n"]"#));
        // The second high one pairs with the low one after it.
        assert_eq!(repaired(r#"["\ud83d\ud83d\ude00"]"#).as_deref(), Some(r#"["\ufffd\ud83d\ude00"]"#));
        // A high one before an escaped backslash and a `u`.
        assert_eq!(repaired(r#"["\ud83d\\ude00"]"#).as_deref(), Some(r#"["\ufffd\\ude00"]"#));
    }

    #[test]
    fn pairs_other_escapes_and_literal_backslashes_are_left_alone() {
        for s in [
            r#"{"a":"\ud83d\ude00 \uD83D\uDE00"}"#,
            r#"{"a":"\u001b[0m \u00e9 \uffff"}"#,
            r#"{"a":"\\ud83d and \\\\udc00"}"#,
            r#"{"a":"\u12"}"#,
            r#"{"a":"\uzzzz"}"#,
            "plain",
        ] {
            assert_eq!(repaired(s), None, "{s}");
        }
        // An odd run: the last backslash escapes the `u`.
        assert_eq!(repaired(r#"["\\\ud83d"]"#).as_deref(), Some(r#"["\\\ufffd"]"#));
    }

    #[test]
    fn a_record_with_a_lone_surrogate_is_read_not_dropped() {
        let line = br#"{"type":"user","text":"emoji cut \ud83d here","n":1}"#;
        assert!(from_json_line::<Value>(line).is_err(), "serde_json rejects it");
        let v: Value = parse_json(line).unwrap_or_default();
        assert_eq!(v, json!({"type": "user", "text": "emoji cut \u{FFFD} here", "n": 1}));
        assert!(parse_line(line).is_ok());
        assert_eq!(parse_document::<Value>(line).ok(), Some(v));
        // Two records are not one document, whatever they hold.
        assert!(parse_document::<Value>(b"{\"a\":\"\\ud83d\"}\n{}").is_err());
        // A line broken otherwise keeps its error, at the column as written.
        let bad = br#"{"a":"\ud83d","b":}"#;
        let reason = parse_line(bad).err().unwrap_or_default();
        assert!(reason.starts_with("malformed JSON record (19 bytes)") && reason.contains("column 19"), "{reason}");
    }

    proptest! {
        /// Whatever the text, the repair keeps its length and touches only
        /// the digits of escapes, and a JSON string of any UTF-16 (a lone
        /// half anywhere) parses once repaired, each lone half read as U+FFFD.
        #[test]
        fn any_utf16_string_reads_once_repaired(units in proptest::collection::vec(
            prop_oneof![Just(0xD83Du16), Just(0xDE00u16), Just(0x5Cu16), Just(0x75u16), 0x20u16..0x7F, Just(0xE9u16)], 0..40)
        ) {
            let mut text = String::from("\"");
            for &u in &units {
                match u {
                    0xD800..=0xDFFF => text.push_str(&format!("\\u{u:04x}")),
                    0x5C => text.push_str("\\\\"),
                    0x22 => text.push_str("\\\""),
                    _ => text.push(char::from_u32(u32::from(u)).unwrap_or('?')),
                }
            }
            text.push('"');
            let fixed = repair_lone_surrogates(text.as_bytes()).unwrap_or_else(|| text.as_bytes().to_vec());
            prop_assert_eq!(fixed.len(), text.len());
            let got: Result<String, _> = parse_json(text.as_bytes());
            let want: String = char::decode_utf16(units.iter().copied()).map(|c| c.unwrap_or('\u{FFFD}')).collect();
            prop_assert_eq!(got.ok(), Some(want));
        }
    }
}
