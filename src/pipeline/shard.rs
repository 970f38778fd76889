//! Splitting a run into shards that separate processes or machines run: a
//! deterministic subset of the inputs, chosen by a stable hash of each file's
//! path (its parent's for a sub-agent file), the same on every machine.

use crate::read::copies::Families;
use crate::read::{Input, InputKind, format};
use serde::{Deserialize, Serialize};

/// Shard `index` of `count` (1-based), as `--shard K/N` gives it; read from
/// a partial, checked the same way (1 ≤ K ≤ N ≤ [`MAX_SHARDS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawShard")]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// The most shards a run may be split into.
pub const MAX_SHARDS: u32 = 100_000;

#[derive(Deserialize)]
struct RawShard {
    index: u32,
    count: u32,
}

impl TryFrom<RawShard> for Shard {
    type Error = String;
    fn try_from(r: RawShard) -> Result<Shard, String> {
        Shard::new(r.index, r.count).map_err(|why| format!("shard {}/{}: {why}", r.index, r.count))
    }
}

impl Shard {
    fn new(index: u32, count: u32) -> Result<Shard, String> {
        if index == 0 || index > count {
            return Err("expected K/N, shard K of N, with 1 ≤ K ≤ N (e.g. 2/4)".into());
        }
        if count > MAX_SHARDS {
            return Err(format!("at most {MAX_SHARDS} shards"));
        }
        Ok(Shard { index, count })
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}`: expected K/N, shard K of N, with 1 ≤ K ≤ N (e.g. 2/4)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        Shard::new(index, count).map_err(|why| format!("`{s}`: {why}"))
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// The whole run, unsplit.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Whether the item keyed `key` is this shard's: a 64-bit FNV-1a of the
    /// key, mixed (splitmix64's finalizer) so that its low bits spread evenly.
    pub fn holds(&self, key: &[u8]) -> bool {
        let mut h = crate::output::fsutil::fnv1a(key);
        h ^= h >> 30;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 27;
        h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
        h % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// Which of `inputs` are this shard's. A file goes by its path as found
    /// (so every shard must be given the same paths), a sub-agent file by its
    /// parent's, so a sub-agent is replayed with its parent, and a file of a
    /// family that shares responses ([`crate::read::copies`]) by the family's
    /// first file, so the copies among them are found as in the whole run;
    /// standard input cannot be split.
    pub fn select(&self, inputs: &[Input], families: &Families) -> Result<Vec<bool>, String> {
        let group = |i: usize| {
            let path = &inputs[families.of(i).unwrap_or(i)].path;
            format::shard_group(path).to_string_lossy().into_owned()
        };
        inputs
            .iter()
            .enumerate()
            .map(|(n, i)| match i.kind {
                InputKind::Stdin if self.count > 1 => Err("standard input cannot be split into shards".to_string()),
                InputKind::Stdin => Ok(true),
                InputKind::File => Ok(self.holds(group(n).as_bytes())),
                InputKind::Folder(_) => Ok(self.holds(i.path.to_string_lossy().as_bytes())),
            })
            .collect()
    }

    /// The grid points (0-based) that are this shard's: every `count`-th,
    /// from `index - 1`, so each shard gets neighbours of every region.
    pub fn holds_point(&self, point: usize) -> bool {
        point % self.count as usize == (self.index - 1) as usize
    }
}

/// What identifies the list of inputs a run found, so that partial runs made
/// over different lists are not merged: how many, and a hash of their paths
/// in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputList {
    pub count: usize,
    pub hash: u64,
}

impl InputList {
    pub fn of(inputs: &[Input]) -> InputList {
        let mut bytes = Vec::new();
        for i in inputs {
            bytes.extend_from_slice(i.path.to_string_lossy().as_bytes());
            bytes.push(0);
        }
        InputList { count: inputs.len(), hash: crate::output::fsutil::fnv1a(&bytes) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_k_of_n() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "-1/2", "1/200000"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        // Read from a partial, the same rules.
        assert_eq!(serde_json::from_str::<Shard>(r#"{"index":2,"count":4}"#).ok(), Some(Shard { index: 2, count: 4 }));
        for bad in [r#"{"index":0,"count":4}"#, r#"{"index":1,"count":0}"#, r#"{"index":1,"count":4000000000}"#] {
            assert!(serde_json::from_str::<Shard>(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        /// Every key is in exactly one shard of N, whatever N.
        #[test]
        fn each_key_in_one_shard(keys in prop::collection::vec(".{0,40}", 1..40), n in 1u32..12) {
            for k in &keys {
                let owners = (1..=n).filter(|&i| Shard { index: i, count: n }.holds(k.as_bytes())).count();
                prop_assert_eq!(owners, 1);
                let points = (1..=n).filter(|&i| Shard { index: i, count: n }.holds_point(k.len())).count();
                prop_assert_eq!(points, 1);
            }
        }
    }

    /// The split is even enough that no shard of 4 is empty or holds most of
    /// 400 paths.
    #[test]
    fn spreads_paths() {
        for i in 1..=4 {
            let s = Shard { index: i, count: 4 };
            let n = (0..400).filter(|k| s.holds(format!("logs/session-{k}.jsonl").as_bytes())).count();
            assert!((60..140).contains(&n), "shard {i}: {n}");
        }
    }
}
