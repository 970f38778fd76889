//! `codex exec --json` reports at each `turn.completed` the thread's running
//! usage total, summed over every model request so far: this turns the totals
//! into one usage per request, so that prompts are not counted once per request.

use crate::model::{Usage, UsageProvenance};

/// A request whose usage the stream has not reported yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pending {
    /// Its call, an index into `Session::calls`.
    pub call: usize,
    /// Characters of the messages read before the request's response.
    pub before: u64,
    /// Characters of its response.
    pub out: u64,
}

/// What `total` adds to `prev`, the thread's previous running total: the
/// usage of the requests since. `Err(total)` when a count went down, which a
/// running total never does.
pub(super) fn since(total: Usage, prev: Option<Usage>) -> Result<Usage, Usage> {
    let Some(p) = prev else { return Ok(total) };
    let parts = [
        (total.uncached_input, p.uncached_input),
        (total.cache_read, p.cache_read),
        (total.cache_write, p.cache_write),
        (total.output, p.output),
        (total.reasoning, p.reasoning),
    ];
    if parts.iter().any(|&(t, q)| t < q) || total.prompt_tokens() < p.prompt_tokens() {
        return Err(total);
    }
    Ok(Usage {
        uncached_input: total.uncached_input - p.uncached_input,
        cache_read: total.cache_read - p.cache_read,
        cache_write: total.cache_write - p.cache_write,
        output: total.output - p.output,
        reasoning: total.reasoning - p.reasoning,
        provenance: total.provenance,
    })
}

/// `sum` (the usage of the `reqs`, in order) as one usage per request.
///
/// One request keeps the sum as recorded. Several share it, each count
/// summing exactly to the recorded one (so cost is unchanged):
/// - prompts grow by what the requests before added (4 characters a token):
///   request j's prompt is the first one's plus that growth, the first one's
///   being what is left of the sum spread evenly; when the growth alone
///   exceeds the sum (the log does not hold everything sent), the sum is
///   shared in proportion to the growth instead;
/// - cached and cache-write tokens in proportion to each prompt (never more
///   than it), the rest uncached;
/// - output in proportion to each response's characters, reasoning in
///   proportion to each output (never more than it).
///
/// Each share is marked [`UsageProvenance::OpenAiShare`]: a model of the
/// recorded sum, not a measure of the request.
pub(super) fn split(sum: Usage, reqs: &[Pending]) -> Vec<Usage> {
    match reqs {
        [] => Vec::new(),
        [_] => vec![sum],
        [first, ..] => {
            let growth: Vec<u64> = reqs.iter().map(|r| r.before.saturating_sub(first.before) / 4).collect();
            let prompt = sum.prompt_tokens();
            let total_growth: u64 = growth.iter().sum();
            let prompts = match prompt.checked_sub(total_growth) {
                Some(rest) => {
                    let base = share_exact(rest, &vec![1; reqs.len()]);
                    base.iter().zip(&growth).map(|(b, g)| b + g).collect()
                }
                None => share_exact(prompt, &growth.iter().map(|g| g + 1).collect::<Vec<_>>()),
            };
            let cached = share_exact(sum.cache_read, &prompts);
            let room: Vec<u64> = prompts.iter().zip(&cached).map(|(p, c)| p - c).collect();
            let written = share_exact(sum.cache_write, &room);
            let outputs = share_exact(sum.output, &reqs.iter().map(|r| r.out / 4 + 1).collect::<Vec<_>>());
            let reasoning = share_exact(sum.reasoning.min(sum.output), &outputs);
            (0..reqs.len())
                .map(|j| Usage {
                    uncached_input: room[j] - written[j],
                    cache_read: cached[j],
                    cache_write: written[j],
                    output: outputs[j],
                    reasoning: reasoning[j],
                    provenance: UsageProvenance::OpenAiShare,
                })
                .collect()
        }
    }
}

/// `total` in integer parts proportional to `weights` that sum to it exactly
/// (largest remainders, the later part first at a tie, so that parts of
/// non-decreasing weights do not decrease); equal parts when
/// every weight is 0. A part never exceeds its exact share rounded up, so
/// with `total ≤ Σ weights` no part exceeds its weight.
fn share_exact(total: u64, weights: &[u64]) -> Vec<u64> {
    if weights.is_empty() {
        return Vec::new();
    }
    let all_zero = weights.iter().all(|&w| w == 0);
    let w = |i: usize| if all_zero { 1 } else { u128::from(weights[i]) };
    let sum: u128 = (0..weights.len()).map(w).sum();
    let t = u128::from(total);
    let mut parts: Vec<u64> = Vec::with_capacity(weights.len());
    let mut rems: Vec<(u128, usize)> = Vec::with_capacity(weights.len());
    for i in 0..weights.len() {
        let exact = t * w(i);
        // The quotient is at most `total`: it fits.
        parts.push(u64::try_from(exact / sum).unwrap_or(u64::MAX));
        rems.push((exact % sum, i));
    }
    let given: u64 = parts.iter().sum();
    let left = usize::try_from(total - given).unwrap_or(usize::MAX);
    rems.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    for &(_, i) in rems.iter().take(left) {
        parts[i] += 1;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn usage(uncached: u64, cached: u64, write: u64, output: u64, reasoning: u64) -> Usage {
        Usage {
            uncached_input: uncached,
            cache_read: cached,
            cache_write: write,
            output,
            reasoning,
            provenance: UsageProvenance::OpenAi,
        }
    }

    fn req(call: usize, before: u64, out: u64) -> Pending {
        Pending { call, before, out }
    }

    #[test]
    fn a_running_total_less_the_previous_one() {
        let first = usage(1000, 2000, 0, 100, 40);
        let second = usage(1500, 6000, 0, 180, 40);
        assert_eq!(since(first, None), Ok(first));
        assert_eq!(since(second, Some(first)), Ok(usage(500, 4000, 0, 80, 0)));
        // A count that went down is no running total.
        assert_eq!(since(first, Some(second)), Err(first));
    }

    #[test]
    fn one_request_keeps_the_sum_as_recorded() {
        let u = usage(3000, 5000, 0, 129, 64);
        assert_eq!(split(u, &[req(0, 0, 400)]), vec![u]);
        assert!(split(u, &[]).is_empty());
    }

    #[test]
    fn prompts_grow_by_what_came_before() {
        // Two requests, 6,040 prompt tokens in all; the second one's prompt
        // holds the first response and its result (400 characters: 100 tokens).
        let sum = usage(1048, 4992, 0, 129, 0);
        let v = split(sum, &[req(0, 1000, 200), req(1, 1400, 120)]);
        assert_eq!(v[0].prompt_tokens(), 2970);
        assert_eq!(v[1].prompt_tokens(), 3070);
        assert_eq!(v.iter().map(|u| u.cache_read).sum::<u64>(), 4992);
        // Output in proportion to each response (51 and 31 weights).
        assert_eq!(v.iter().map(|u| u.output).collect::<Vec<_>>(), vec![80, 49]);
        assert!(v.iter().all(|u| u.provenance == UsageProvenance::OpenAiShare));
    }

    #[test]
    fn growth_beyond_the_sum_shares_it_by_growth() {
        // 1,000 tokens of growth recorded, a sum of 300: the log holds more
        // than was sent, or the sum is not what it should be.
        let sum = usage(300, 0, 0, 10, 0);
        let v = split(sum, &[req(0, 0, 0), req(1, 4000, 0)]);
        assert_eq!(v.iter().map(Usage::prompt_tokens).collect::<Vec<_>>(), vec![0, 300]);
    }

    #[test]
    fn shares_sum_exactly_with_largest_remainders() {
        assert_eq!(share_exact(10, &[1, 1, 1]), vec![3, 3, 4]);
        assert_eq!(share_exact(7, &[0, 0]), vec![3, 4]);
        assert_eq!(share_exact(5, &[3, 0, 1]), vec![4, 0, 1]);
        assert!(share_exact(5, &[]).is_empty());
    }

    proptest! {
        #[test]
        fn shares_keep_every_count_and_its_bounds(
            uncached in 0u64..5_000_000, cached in 0u64..5_000_000, write in 0u64..100_000,
            output in 0u64..1_000_000, reasoning in 0u64..1_000_000,
            reqs in prop::collection::vec((0u64..2_000_000, 0u64..200_000), 1..12),
        ) {
            let sum = usage(uncached, cached, write, output, reasoning);
            let mut before = 0;
            let pending: Vec<Pending> = reqs.iter().enumerate().map(|(i, &(grow, out))| {
                before += grow;
                req(i, before, out)
            }).collect();
            let v = split(sum, &pending);
            prop_assert_eq!(v.len(), pending.len());
            let total = |f: fn(&Usage) -> u64| v.iter().map(f).sum::<u64>();
            prop_assert_eq!(total(|u| u.uncached_input), uncached);
            prop_assert_eq!(total(|u| u.cache_read), cached);
            prop_assert_eq!(total(|u| u.cache_write), write);
            prop_assert_eq!(total(|u| u.output), output);
            if pending.len() > 1 {
                prop_assert_eq!(total(|u| u.reasoning), reasoning.min(output));
                prop_assert!(v.iter().all(|u| u.reasoning <= u.output));
            }
            // Prompts never shrink from one request to the next.
            prop_assert!(v.windows(2).all(|w| w[0].prompt_tokens() <= w[1].prompt_tokens()));
        }
    }
}
