//! "Did you mean …": the closest known name to a mistyped one, for every
//! value from a fixed list (policy keys, presets, model families).

/// Edit distance (Levenshtein, over chars) between `cand` and the closest
/// prefix of `name`: what follows in `name` is free, as a model name matches a
/// family by fragment (`claude-sonnet-4-5-20250929` holds `claude-sonnet-4`).
pub fn distance(name: &str, cand: &str) -> usize {
    edits(name, cand).0
}

/// Edit distance between the whole of `name` and `cand`: for names nothing
/// may follow (policy keys).
pub fn whole_distance(name: &str, cand: &str) -> usize {
    edits(name, cand).1
}

/// Levenshtein distances from `cand` to the closest prefix of `name`, and to
/// the whole of it.
fn edits(name: &str, cand: &str) -> (usize, usize) {
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
    (best, row[cand.len()])
}

/// The candidate nearest to the whole of `name` ([`whole_distance`]), when
/// at most a third of its characters differ; the first at equal distance.
pub fn closest_whole<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (whole_distance(name, c), c))
        .filter(|&(d, c)| d * 3 <= c.chars().count())
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
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
    fn a_key_is_matched_whole() {
        let keys = ["compact.trigger", "compact.trigger_ratio", "compact.trigger_tokens"];
        assert_eq!(whole_distance("compact.trigger_ratoi", "compact.trigger"), 6);
        assert_eq!(closest_whole("compact.trigger_ratoi", keys), Some("compact.trigger_ratio"));
        assert_eq!(closest_whole("compact.triger", keys), Some("compact.trigger"));
        assert_eq!(closest_whole("summary.style", keys), None);
    }
}
