//! "Did you mean …": the closest known name to a mistyped one, for the flags
//! whose values are names from a fixed list (`--model`, `--preset`).

use anyhow::bail;
use compactor::cost::{PriceTable, normalize_model};

/// Edit distance (Levenshtein, over chars) between `cand` and the closest
/// prefix of `name`: what follows in `name` is free, as a model name matches a
/// family by fragment (`claude-sonnet-4-5-20250929` holds `claude-sonnet-4`).
fn distance(name: &str, cand: &str) -> usize {
    let cand: Vec<char> = cand.chars().collect();
    let mut row: Vec<usize> = (0..=cand.len()).collect();
    let mut best = row[cand.len()];
    for (i, a) in name.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &c) in cand.iter().enumerate() {
            let next = (diag + usize::from(a != c)).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
        best = best.min(row[cand.len()]);
    }
    best
}

/// The candidate closest to `name`, as (spelled, shown) pairs: each spelling
/// and its tails at `-` (`sonnet-4` for `claude-sonnet-4`, since the vendor
/// prefix is often left out) are compared with [`distance`]; the closest wins,
/// then the longest spelling, then the first. Only when at most a third of
/// the spelling's characters differ: a far name gets no suggestion.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<&'a str> {
    let mut best: Option<(usize, usize, &str)> = None;
    for (spelled, shown) in candidates {
        let tails = std::iter::once(spelled).chain(spelled.match_indices('-').map(|(i, _)| &spelled[i + 1..]));
        for tail in tails {
            let len = tail.chars().count();
            let d = distance(name, tail);
            if len < 3 || d * 3 > len {
                continue;
            }
            if best.is_none_or(|(bd, blen, _)| (d, std::cmp::Reverse(len)) < (bd, std::cmp::Reverse(blen))) {
                best = Some((d, len, shown));
            }
        }
    }
    best.map(|(_, _, shown)| shown)
}

/// The error for a preset name no preset has: the closest one, and every one.
pub fn unknown_preset(name: &str) -> String {
    let names = compactor::presets::names();
    let hint =
        closest(name, names.iter().map(|k| (*k, *k))).map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
    format!("unknown preset `{name}` ({hint}known: {}; see `compactor presets`)", names.join(", "))
}

/// `--model NAME` must name a family of the price table: a family name, or a
/// model name that holds one of a family's fragments. Otherwise every call
/// would silently be priced as the fallback family.
pub fn require_model(table: &PriceTable, model: &str) -> anyhow::Result<()> {
    if table.find(model).is_some() {
        return Ok(());
    }
    let norm = normalize_model(model);
    // Family names and their fragments (`claude-3-5-sonnet` is a fragment of
    // `claude-sonnet-4`): the suggestion is the family.
    let spelled = table.families.iter().flat_map(|f| {
        std::iter::once((f.name.as_str(), f.name.as_str()))
            .chain(f.patterns.iter().map(|p| (p.as_str(), f.name.as_str())))
    });
    let hint = closest(&norm, spelled).map(|f| format!("; did you mean `{f}`?")).unwrap_or_default();
    let names: Vec<&str> = table.families.iter().map(|f| f.name.as_str()).collect();
    bail!(
        "unknown --model `{model}`{hint} (known model families: {}; a model name matches a family when it \
         contains the family's name, e.g. claude-sonnet-4-5-20250929 → claude-sonnet-4; add a family with \
         --prices FILE.toml)",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits_and_ignores_what_follows() {
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("gpt5", "gpt-5"), 1);
        assert_eq!(distance("claude-sonet-4", "claude-sonnet-4"), 1);
        assert_eq!(distance("claude-sonet-4-5-20250929", "claude-sonnet-4"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_picks_the_nearest_and_refuses_far_ones() {
        let c = [("claude-sonnet-4", "claude-sonnet-4"), ("claude-opus-4", "claude-opus-4"), ("gpt-5", "gpt-5")];
        assert_eq!(closest("claude-sonet-4", c), Some("claude-sonnet-4"));
        assert_eq!(closest("gpt5", c), Some("gpt-5"));
        assert_eq!(closest("sonnet-4-5", c), Some("claude-sonnet-4"), "the vendor prefix left out");
        assert_eq!(closest("llama-3-70b-instruct", c), None);
    }

    #[test]
    fn an_unknown_model_names_the_families_and_the_closest() {
        let table = PriceTable::builtin();
        assert!(require_model(&table, "claude-sonnet-4-5-20250929").is_ok());
        let e = require_model(&table, "claude-sonet-4-5").map(|_| ()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("unknown --model `claude-sonet-4-5`; did you mean `claude-sonnet-4`?"), "{e}");
        assert!(e.contains("gpt-5") && e.contains("claude-haiku-4-5"), "{e}");
    }
}
