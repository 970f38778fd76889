//! Rounding and digit grouping shared by every number compactor writes: fixed decimals keep reports
//! short and byte-identical, whichever layer computed the value.

/// For `skip_serializing_if`: a count of zero is left out of a report, so a
/// field most logs never fill keeps their outputs as they were.
pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Round to 4 decimals; a non-finite value becomes 0 so JSON stays valid.
pub fn round4(x: f64) -> f64 {
    if x.is_finite() { (x * 10_000.0).round() / 10_000.0 } else { 0.0 }
}

/// (baseline − policy) / baseline × 100, rounded to 4 decimals so the JSON is
/// stable and short.
pub fn savings_pct(baseline: u64, policy: u64) -> f64 {
    if baseline == 0 {
        return 0.0;
    }
    round4((baseline as f64 - policy as f64) / baseline as f64 * 100.0)
}

/// The median (mean of the two middle values for an even count), unrounded;
/// `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 })
}

/// Thousands separators: 1234567 → "1,234,567".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `v` to format with `decimals` decimals: itself, or a positive zero when it
/// rounds to zero, so that no report shows "-0.0".
pub fn shown(v: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    if (v * scale).round() == 0.0 { 0.0 } else { v }
}

/// [`thousands`] with a minus sign: -1234 → "-1,234".
pub fn signed(n: i64) -> String {
    if n < 0 { format!("-{}", thousands(n.unsigned_abs())) } else { thousands(n as u64) }
}

/// Dollars with `decimals` places, the sign before the `$` as the other
/// signed numbers print theirs: -0.0298 → "-$0.0298"; nothing that shows as
/// zero gets a sign.
pub fn usd(v: f64, decimals: usize) -> String {
    let v = shown(v, decimals as i32);
    let sign = if v < 0.0 { "-" } else { "" };
    format!("{sign}${:.*}", decimals, v.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_puts_its_sign_before_the_dollar() {
        assert_eq!(usd(-0.02981, 4), "-$0.0298");
        assert_eq!(usd(0.05, 2), "$0.05");
        assert_eq!(usd(-0.004, 2), "$0.00");
        assert_eq!(usd(-0.00004, 4), "$0.0000");
        assert_eq!(usd(1234.5, 2), "$1234.50");
    }

    /// No negative zero, whatever rounds to zero.
    #[test]
    fn shown_has_no_negative_zero() {
        for (v, d, want) in
            [(-0.04, 1, "0.0"), (-0.0, 1, "0.0"), (-0.06, 1, "-0.1"), (-0.004, 2, "0.00"), (0.26, 1, "0.3")]
        {
            let text = match d {
                1 => format!("{:.1}", shown(v, d)),
                _ => format!("{:.2}", shown(v, d)),
            };
            assert_eq!(text, want, "{v}");
        }
        assert_eq!(format!("{:+.1}", shown(-0.01, 1)), "+0.0");
        assert_eq!(format!("{:.4}", shown(-0.00001, 4)), "0.0000");
    }

    #[test]
    fn rounds_and_guards() {
        assert_eq!(round4(1.234_56), 1.2346);
        assert_eq!(round4(f64::NAN), 0.0);
        assert_eq!(savings_pct(0, 5), 0.0);
        assert_eq!(savings_pct(200, 50), 75.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
