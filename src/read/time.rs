//! Lenient timestamp parsing: ISO-8601 / RFC 3339 strings and epoch seconds or
//! milliseconds, all to milliseconds since the Unix epoch. Logs are untrusted, so
//! anything out of shape is `None`, never a panic.

/// Parse `2025-09-25T01:22:20.083Z`, `2025-09-25T01:22:20+02:00`,
/// `2025-09-25 01:22:20`, with or without fractional seconds.
pub fn parse_iso(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    if b.get(i) == Some(&b'.') || b.get(i) == Some(&b',') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 3 {
                millis = millis * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        for _ in (i - start)..3 {
            millis *= 10;
        }
    }
    let offset_min = match b.get(i) {
        None | Some(b'Z') | Some(b'z') => 0,
        Some(&c @ (b'+' | b'-')) => {
            let h = num(i + 1..i + 3)?;
            let m = if b.get(i + 3) == Some(&b':') { num(i + 4..i + 6)? } else { num(i + 3..i + 5).unwrap_or(0) };
            let o = h * 60 + m;
            if c == b'-' { -o } else { o }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    Some(((days * 86_400 + hour * 3600 + min * 60 + sec) - offset_min * 60) * 1000 + millis)
}

/// A date (`2026-05-01`: the day's start in UTC) or an ISO time, as a
/// prices file or a dated price gives them.
pub fn parse_day_or_iso(s: &str) -> Option<i64> {
    let s = s.trim();
    match s.len() {
        10 => parse_iso(&format!("{s}T00:00:00Z")),
        _ => parse_iso(s),
    }
}

/// A JSON timestamp: string (ISO) or number (epoch seconds if < 1e11, else ms).
pub fn parse_value(v: &serde_json::Value) -> Option<i64> {
    match v {
        serde_json::Value::String(s) => parse_iso(s),
        serde_json::Value::Number(n) => {
            let f = n.as_f64()?;
            if !f.is_finite() || !(0.0..=1e15).contains(&f) {
                return None;
            }
            Some(if f < 1e11 { (f * 1000.0) as i64 } else { f as i64 })
        }
        _ => None,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_variants() {
        assert_eq!(parse_iso("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_iso("2025-09-25T01:22:20.083Z"), Some(1_758_763_340_083));
        assert_eq!(parse_iso("2025-09-25T03:22:20.083+02:00"), Some(1_758_763_340_083));
        assert_eq!(parse_iso("2025-09-25 01:22:20"), Some(1_758_763_340_000));
        assert_eq!(parse_iso("2025-09-25T01:22:20.1Z"), Some(1_758_763_340_100));
        assert_eq!(parse_iso("not a date at all!!"), None);
        assert_eq!(parse_iso("2025-13-25T01:22:20Z"), None);
        assert_eq!(parse_iso("2025-09-25T01:22:20Q"), None);
    }

    #[test]
    fn a_day_is_its_start_in_utc() {
        assert_eq!(parse_day_or_iso(" 1970-01-02 "), Some(86_400_000));
        assert_eq!(parse_day_or_iso("1970-01-02T01:00:00+01:00"), Some(86_400_000));
        assert_eq!(parse_day_or_iso("1970-1-2"), None);
        assert_eq!(parse_day_or_iso("last year"), None);
    }

    #[test]
    fn epoch_numbers() {
        assert_eq!(parse_value(&serde_json::json!(1765233665292i64)), Some(1_765_233_665_292));
        assert_eq!(parse_value(&serde_json::json!(1765233665)), Some(1_765_233_665_000));
        assert_eq!(parse_value(&serde_json::json!(-5)), None);
    }
}
