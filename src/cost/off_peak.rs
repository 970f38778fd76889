//! Prices by time of day: a family billed at a share of its listed prices outside
//! its peak hours (DeepSeek's since 2026-08-16), decided per call from its timestamp.

use serde::{Deserialize, Serialize};

/// When a family's calls are billed at its off-peak prices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OffPeak {
    /// Off-peak prices as a share of the family's listed (peak) prices.
    pub share: f64,
    /// Peak windows as minutes of the UTC day, `[start, end)`; a window whose
    /// end is before its start runs past midnight.
    pub peak_utc: Vec<(u16, u16)>,
    /// Saturdays and Sundays (UTC) are off-peak all day.
    pub weekends_off_peak: bool,
}

const MINUTE_MS: i64 = 60_000;
const DAY_MINUTES: i64 = 24 * 60;

impl OffPeak {
    /// DeepSeek's schedule: half price outside 01:00–04:00 and 06:00–10:00 UTC on
    /// weekdays (sources in `prices.rs`).
    pub(crate) fn deepseek() -> OffPeak {
        OffPeak { share: 0.5, peak_utc: vec![(60, 240), (360, 600)], weekends_off_peak: true }
    }

    /// Is the instant `at_ms` (milliseconds since the Unix epoch, UTC) in a peak window?
    pub fn is_peak(&self, at_ms: i64) -> bool {
        let minutes = at_ms.div_euclid(MINUTE_MS);
        let day = minutes.div_euclid(DAY_MINUTES);
        // 1970-01-01 was a Thursday: Monday is 0, Saturday 5, Sunday 6.
        if self.weekends_off_peak && (day + 3).rem_euclid(7) >= 5 {
            return false;
        }
        let m = minutes.rem_euclid(DAY_MINUTES) as u16;
        self.peak_utc
            .iter()
            .any(|&(start, end)| if start <= end { (start..end).contains(&m) } else { m >= start || m < end })
    }

    /// The multiple of the listed prices a call at `at_ms` is billed at: 1 at
    /// peak, and when the time is unknown (the listed price, an upper bound).
    pub fn multiple(&self, at_ms: Option<i64>) -> f64 {
        match at_ms {
            Some(t) if !self.is_peak(t) => self.share,
            _ => 1.0,
        }
    }

    /// A prices file's `peak_utc` window, `"HH:MM-HH:MM"` (`24:00` ends a day).
    pub(crate) fn parse_window(s: &str) -> Result<(u16, u16), String> {
        let bad = || format!("`peak_utc`: `{}` is not a window like \"01:00-04:00\" (UTC)", s.escape_debug());
        let (a, b) = s.split_once('-').ok_or_else(bad)?;
        let minute = |t: &str| -> Option<u16> {
            let (h, m) = t.trim().split_once(':')?;
            let (h, m): (u16, u16) = (h.parse().ok()?, m.parse().ok()?);
            (m < 60 && (h < 24 || (h == 24 && m == 0))).then_some(h * 60 + m)
        };
        let (start, end) = (minute(a).ok_or_else(bad)?, minute(b).ok_or_else(bad)?);
        if start == end || start == DAY_MINUTES as u16 {
            return Err(bad());
        }
        Ok((start, end % DAY_MINUTES as u16))
    }
}

/// `[families.NAME.off_peak]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OffPeakFile {
    share: Option<f64>,
    peak_utc: Option<Vec<String>>,
    weekends_off_peak: Option<bool>,
}

impl OffPeakFile {
    /// Over the family's schedule (`old`), or a new one (which needs `share`
    /// and `peak_utc`).
    pub(super) fn apply_to(self, old: Option<OffPeak>) -> Result<OffPeak, String> {
        let mut o = match (old, self.share, &self.peak_utc) {
            (Some(o), ..) => o,
            (None, Some(share), Some(_)) => OffPeak { share, peak_utc: Vec::new(), weekends_off_peak: false },
            (None, ..) => return Err("a new `off_peak` schedule needs `share` and `peak_utc`".to_string()),
        };
        if let Some(share) = self.share {
            o.share = share;
        }
        if let Some(windows) = &self.peak_utc {
            o.peak_utc = windows.iter().map(|w| OffPeak::parse_window(w)).collect::<Result<_, _>>()?;
        }
        if let Some(w) = self.weekends_off_peak {
            o.weekends_off_peak = w;
        }
        if !(o.share.is_finite() && o.share >= 0.0) {
            return Err("`off_peak`: `share` must be a non-negative number".to_string());
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-30 was a Monday: `at(day, h, m)` is that Monday plus `day` days, UTC.
    fn at(day: i64, h: i64, m: i64) -> i64 {
        const MONDAY_2026_11_30: i64 = 1_795_996_800_000;
        MONDAY_2026_11_30 + ((day * 24 + h) * 60 + m) * MINUTE_MS
    }

    #[test]
    fn deepseeks_peak_is_two_windows_on_weekdays() {
        let d = OffPeak::deepseek();
        for (day, h, m, peak) in [
            (0, 0, 59, false),
            (0, 1, 0, true),
            (0, 3, 59, true),
            (0, 4, 0, false),
            (0, 5, 30, false),
            (0, 6, 0, true),
            (4, 9, 59, true),
            (4, 10, 0, false),
            (0, 23, 0, false),
            // Saturday and Sunday.
            (5, 2, 0, false),
            (6, 7, 0, false),
            (7, 2, 0, true),
        ] {
            assert_eq!(d.is_peak(at(day, h, m)), peak, "day {day} {h:02}:{m:02}");
        }
        assert_eq!(d.multiple(Some(at(0, 2, 0))), 1.0);
        assert_eq!(d.multiple(Some(at(0, 12, 0))), 0.5);
        assert_eq!(d.multiple(None), 1.0, "an unknown time is billed at the listed price");
    }

    #[test]
    fn times_before_the_epoch_and_windows_past_midnight() {
        let night = OffPeak { share: 0.25, peak_utc: vec![(22 * 60, 2 * 60)], weekends_off_peak: false };
        assert!(night.is_peak(at(0, 23, 0)));
        assert!(night.is_peak(at(0, 1, 59)));
        assert!(!night.is_peak(at(0, 2, 0)));
        assert!(!night.is_peak(at(0, 12, 0)));
        // 1969-12-31 23:30 UTC.
        assert!(night.is_peak(-30 * MINUTE_MS));
        assert!(!OffPeak::deepseek().is_peak(i64::MIN));
        assert!(!OffPeak::deepseek().is_peak(i64::MAX));
    }

    #[test]
    fn a_window_is_read_as_minutes_of_the_utc_day() {
        assert_eq!(OffPeak::parse_window("01:00-04:00"), Ok((60, 240)));
        assert_eq!(OffPeak::parse_window(" 22:30 - 24:00 "), Ok((1350, 0)));
        for bad in ["1-4", "01:00", "25:00-26:00", "01:60-02:00", "03:00-03:00", "24:00-01:00", "a:b-c:d"] {
            let e = OffPeak::parse_window(bad).unwrap_err();
            assert!(e.contains("peak_utc") && e.contains("01:00-04:00"), "{bad}: {e}");
        }
    }
}
