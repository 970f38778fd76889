//! The meter: what every report measures with, one per run, the same for the
//! baseline and every policy (a policy's own estimator only decides).

use super::{Chars4, Cl100k, Estimator, O200k, PerBlock};
use serde::{Deserialize, Serialize};

/// How request sizes are measured in reports (DESIGN.md §3 "Meter vs estimator").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Meter {
    /// The recorded prompt size where a call has usage (the baseline of such a
    /// call *is* its recorded usage); elsewhere chars/4 calibrated on the
    /// recorded usage, the gap spread over the messages that produced it.
    #[default]
    Recorded,
    /// chars/4 of every request, recorded usage ignored.
    Chars4,
    /// specs/003's per-block estimate, recorded usage ignored.
    PerBlock,
    /// o200k_base BPE, recorded usage ignored.
    O200k,
    /// cl100k_base BPE, recorded usage ignored.
    Cl100k,
}

/// A meter name that is not one of [`Meter::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown meter `{0}` (expected one of: recorded, chars4, per_block, o200k, cl100k)")]
pub struct UnknownMeter(pub String);

impl Meter {
    pub const ALL: [Meter; 5] = [Meter::Recorded, Meter::Chars4, Meter::PerBlock, Meter::O200k, Meter::Cl100k];

    pub fn name(self) -> &'static str {
        match self {
            Meter::Recorded => "recorded",
            Meter::Chars4 => "chars4",
            Meter::PerBlock => "per_block",
            Meter::O200k => "o200k",
            Meter::Cl100k => "cl100k",
        }
    }

    /// Whether recorded usage sets the measure (else the counter alone does).
    pub fn uses_usage(self) -> bool {
        self == Meter::Recorded
    }

    /// What counts a message's tokens (for `recorded`: between recorded usages).
    pub fn counter(self) -> &'static dyn Estimator {
        match self {
            Meter::Recorded | Meter::Chars4 => &Chars4,
            Meter::PerBlock => &PerBlock,
            Meter::O200k => &O200k,
            Meter::Cl100k => &Cl100k,
        }
    }
}

impl std::fmt::Display for Meter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Meter {
    type Err = UnknownMeter;

    fn from_str(s: &str) -> Result<Meter, UnknownMeter> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        Ok(match norm.as_str() {
            "recorded" | "usage" => Meter::Recorded,
            "chars4" | "chars_4" | "chars/4" => Meter::Chars4,
            "per_block" | "perblock" => Meter::PerBlock,
            "o200k" | "o200k_base" => Meter::O200k,
            "cl100k" | "cl100k_base" => Meter::Cl100k,
            _ => return Err(UnknownMeter(s.to_string())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for m in Meter::ALL {
            assert_eq!(m.name().parse::<Meter>(), Ok(m));
        }
        assert_eq!("O200K_BASE".parse::<Meter>(), Ok(Meter::O200k));
        assert!("calibrated".parse::<Meter>().unwrap_err().to_string().contains("recorded, chars4"));
    }

    #[test]
    fn only_recorded_reads_usage() {
        assert_eq!(Meter::ALL.iter().filter(|m| m.uses_usage()).count(), 1);
        assert_eq!(Meter::default(), Meter::Recorded);
    }
}
