//! Turning facts into text under a token budget: ranking, packing and clipping
//! items, and the [`Doc`] that admits lines by priority and prints them by section.

use super::*;

/// The `top` best keys by recency-weighted score, best first; ties by text.
/// The order is total, so selecting the top before sorting them gives the
/// same list as sorting all (a session names thousands of symbols; a
/// checkpoint lists a few hundred).
pub(super) fn ranked<'m>(entries: impl Iterator<Item = (&'m str, &'m Seen)>, last: u64, top: usize) -> Vec<&'m str> {
    // `f64::total_cmp`'s order as an integer, computed once per key rather
    // than twice per comparison (a session names thousands of symbols).
    let total_order = |x: f64| {
        let b = x.to_bits() as i64;
        b ^ (((b >> 63) as u64) >> 1) as i64
    };
    let mut v: Vec<(&str, i64)> = entries.map(|(k, s)| (k, total_order(s.score(last)))).collect();
    let order = |a: &(&str, i64), b: &(&str, i64)| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0));
    if v.len() > top {
        v.select_nth_unstable_by(top, order);
        v.truncate(top);
    }
    // Keys are distinct, so no two entries tie and an unstable sort gives
    // the stable one's order.
    v.sort_unstable_by(order);
    v.into_iter().map(|(k, _)| k).collect()
}

/// Items joined by `sep` into lines of at most about `width` characters, in
/// order: one list item per line costs a bullet and a newline per identifier.
pub(super) fn pack<S: AsRef<str>>(items: impl Iterator<Item = S>, sep: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    // Lines are about `width` long: allocated once, not grown item by item.
    let mut line = String::with_capacity(width);
    for s in items {
        let s = s.as_ref();
        if !line.is_empty() && line.len() + s.len() + sep.len() > width {
            lines.push(std::mem::replace(&mut line, String::with_capacity(width)));
        }
        if !line.is_empty() {
            line.push_str(sep);
        }
        line.push_str(s);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// One line of at most `max` characters, cut on whitespace: a half-written
/// path or identifier names nothing that exists (it would read as invented).
/// Only a line that is a single huge token is cut inside it.
pub(super) fn clip_item(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let head = head_chars(&one, max.saturating_sub(1));
    match head.rfind(' ') {
        Some(i) if i > 0 => format!("{} …", &head[..i]),
        _ => format!("{head}…"),
    }
}

/// A multi-line block clipped to `max` characters.
pub(super) fn clip_block(s: &str, max: usize) -> String {
    let t = s.trim();
    if t.chars().count() <= max {
        t.to_string()
    } else {
        format!("{}…", super::super::head_chars(t, max.saturating_sub(1)))
    }
}

/// Fewest tokens worth a clipped block: below this the head says nothing.
pub(super) const MIN_CLIP_TOKENS: u64 = 8;

/// The longest word-boundary head of `text` (ending in `…`) that costs at
/// most `room`; `None` when not even a few words fit.
pub(super) fn clip_to_tokens(text: &str, room: u64, cost: &dyn Fn(&str) -> u64) -> Option<String> {
    if room < MIN_CLIP_TOKENS {
        return None;
    }
    // Binary search on the character count: the cost grows with the head.
    let (mut lo, mut hi) = (0usize, text.chars().count());
    let mut best = None;
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let head = clip_item(text, mid);
        if cost(&head) <= room {
            best = Some(head);
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    best.filter(|h| h.chars().any(char::is_alphanumeric))
}

/// A document whose lines are admitted by priority under a token budget and
/// printed in section order.
pub(super) struct Doc<'a> {
    pub(super) req: &'a SummaryRequest<'a>,
    /// (line, priority, rank within priority: lower first, section index)
    pub(super) lines: Vec<(String, u8, usize)>,
    /// Sections that got no admitted item print `- (none)`.
    pub(super) section_of: Vec<usize>,
    pub(super) sections: Vec<String>,
    /// Which sections take a "(none)" placeholder when empty.
    pub(super) list_sections: Vec<bool>,
    /// Parallel to `lines`: prose blocks (the goal, the last request) that are
    /// clipped to the room left rather than dropped whole.
    pub(super) clippable: Vec<bool>,
    /// Print only sections with content (also chosen by `render` when the
    /// headings alone would take a quarter of the budget).
    pub(super) compact: bool,
}

impl<'a> Doc<'a> {
    pub(super) fn new(req: &'a SummaryRequest<'a>) -> Doc<'a> {
        Doc {
            req,
            lines: Vec::new(),
            section_of: Vec::new(),
            sections: Vec::new(),
            list_sections: Vec::new(),
            clippable: Vec::new(),
            compact: false,
        }
    }

    pub(super) fn section(&mut self, title: &str) {
        self.sections.push(title.to_string());
        self.list_sections.push(false);
    }

    pub(super) fn cur(&self) -> usize {
        self.sections.len().saturating_sub(1)
    }

    pub(super) fn push(&mut self, line: String, prio: u8, rank: usize) {
        if prio == SKIP {
            return;
        }
        let s = self.cur();
        self.lines.push((line, prio, rank));
        self.section_of.push(s);
        self.clippable.push(false);
    }

    /// A prose block: when it does not fit whole, its head is kept (a goal
    /// longer than the budget still says what the goal was).
    pub(super) fn block(&mut self, prio: u8, text: String) {
        let n = self.lines.len();
        self.push(text, prio, 0);
        if let Some(c) = self.clippable.get_mut(n) {
            *c = true;
        }
    }

    /// A list; `newest_first` ranks later items first (they were seen last).
    pub(super) fn list(&mut self, prio: u8, bullet: &str, items: &[String], newest_first: bool) {
        let s = self.cur();
        self.list_sections[s] = true;
        let n = items.len();
        for (i, it) in items.iter().enumerate() {
            let rank = if newest_first { n - 1 - i } else { i };
            self.push([bullet, it.as_str()].concat(), prio, rank);
        }
    }

    /// A list in time order whose newest `recent` items get `prio_recent` and
    /// the older ones `prio_old`, newest first within each.
    pub(super) fn list_split(&mut self, prio_recent: u8, prio_old: u8, bullet: &str, items: &[String], recent: usize) {
        let s = self.cur();
        self.list_sections[s] = true;
        let n = items.len();
        for (i, it) in items.iter().enumerate() {
            let age = n - 1 - i;
            let prio = if age < recent { prio_recent } else { prio_old };
            self.push([bullet, it.as_str()].concat(), prio, age);
        }
    }

    /// A list ranked best first: the first `top` items get `prio_top`, the
    /// rest `prio_rest`.
    pub(super) fn ranked(&mut self, prio_top: u8, prio_rest: u8, bullet: &str, items: &[String], top: usize) {
        let s = self.cur();
        self.list_sections[s] = true;
        for (i, it) in items.iter().enumerate() {
            let prio = if i < top { prio_top } else { prio_rest };
            self.push([bullet, it.as_str()].concat(), prio, i);
        }
    }

    pub(super) fn numbered(&mut self, prio: u8, items: &[String]) {
        let s = self.cur();
        self.list_sections[s] = true;
        for (i, it) in items.iter().enumerate() {
            self.push(format!("{}. {it}", i + 1), prio, i);
        }
    }

    pub(super) fn render(self) -> String {
        let est = self.req.estimator;
        let budget = self.req.max_tokens;
        let cost = |t: &str| est.text_tokens(t) + 1;
        // What `cost` gives for a text of `chars` characters: without reading
        // the text again when the estimator counts characters only. Headings
        // and lines are counted once, for these costs and for the tries below.
        let priced = |chars: u64, t: &str| est.tokens_of_chars(chars).map_or_else(|| cost(t), |n| n + 1);
        let title_chars: Vec<u64> = self.sections.iter().map(|t| crate::tokens::char_count(t)).collect();
        let skeleton: u64 = self.sections.iter().zip(&title_chars).map(|(h, &n)| priced(n, h)).sum();
        // The full skeleton (every heading, `(none)` for empty lists) is the
        // checkpoint format; when it would take more than a quarter of a small
        // budget, only sections with content are printed, so the budget goes
        // to facts rather than headings.
        let compact = self.compact || skeleton.saturating_mul(4) > budget;
        // `### X` sections belong to the `## Y` before them.
        // (A compact render prints no parent headings: a `###` title says
        // enough on its own.)
        let parent: Vec<Option<usize>> = (0..self.sections.len())
            .map(|si| {
                if compact || !self.sections[si].starts_with("### ") {
                    return None;
                }
                (0..si).rev().find(|&p| self.sections[p].starts_with("## "))
            })
            .collect();
        let mut order: Vec<usize> = (0..self.lines.len()).collect();
        order.sort_by_key(|&i| (self.lines[i].1, self.lines[i].2, i));
        let mut admitted = vec![false; self.lines.len()];
        let mut open = vec![!compact; self.sections.len()];
        let mut used = if compact { 0 } else { skeleton };
        let mut texts: Vec<String> = self.lines.iter().map(|l| l.0.clone()).collect();
        let mut line_chars: Vec<u64> = texts.iter().map(|t| crate::tokens::char_count(t)).collect();
        for i in order {
            let si = self.section_of[i];
            let line_cost = priced(line_chars[i], &texts[i]);
            let mut c = line_cost;
            if !open[si] {
                c += priced(title_chars[si], &self.sections[si]);
                if let Some(p) = parent[si].filter(|&p| !open[p]) {
                    c += priced(title_chars[p], &self.sections[p]);
                }
            }
            if used + c > budget && self.clippable[i] {
                let room = budget.saturating_sub(used + (c - line_cost));
                if let Some(head) = clip_to_tokens(&texts[i], room, &cost) {
                    c = c - line_cost + cost(&head);
                    line_chars[i] = crate::tokens::char_count(&head);
                    texts[i] = head;
                }
            }
            if used + c <= budget {
                used += c;
                admitted[i] = true;
                open[si] = true;
                if let Some(p) = parent[si] {
                    open[p] = true;
                }
            }
        }
        // Lines of each section in order: `build` runs up to FILL_TRIES times
        // and more, so it must not scan every line once per section.
        let mut by_section: Vec<Vec<usize>> = vec![Vec::new(); self.sections.len()];
        for (li, &si) in self.section_of.iter().enumerate() {
            if let Some(v) = by_section.get_mut(si) {
                v.push(li);
            }
        }
        // Everything at once, with separators: no rebuild grows its string.
        let capacity = texts.iter().chain(&self.sections).map(|t| t.len() + 1).sum::<usize>()
            + self.sections.len() * "\n- (none)\n".len();
        let build = |admitted: &[bool]| -> String {
            let shown: Vec<bool> = by_section.iter().map(|ls| ls.iter().any(|&li| admitted[li])).collect();
            let mut out = String::with_capacity(capacity);
            for (si, title) in self.sections.iter().enumerate() {
                let has_child = (si + 1..self.sections.len()).take_while(|&c| parent[c] == Some(si)).any(|c| shown[c]);
                if compact && !shown[si] && !has_child {
                    continue;
                }
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(title);
                out.push('\n');
                for &li in by_section[si].iter().filter(|&&li| admitted[li]) {
                    out.push_str(&texts[li]);
                    out.push('\n');
                }
                if !shown[si] && self.list_sections[si] {
                    out.push_str("- (none)\n");
                }
            }
            let end = out.trim_end().len();
            out.truncate(end);
            out
        };
        // The characters `build(admitted)` would have, from the parts' sizes,
        // when the text's last piece does not end in whitespace (`trim_end`
        // then takes only the last newline); else `None`.
        let chars_of = |admitted: &[bool]| -> Option<u64> {
            let shown: Vec<bool> = by_section.iter().map(|ls| ls.iter().any(|&li| admitted[li])).collect();
            let (mut chars, mut emitted) = (0u64, 0u64);
            let mut last: Option<&str> = None;
            for (si, title) in self.sections.iter().enumerate() {
                let has_child = (si + 1..self.sections.len()).take_while(|&c| parent[c] == Some(si)).any(|c| shown[c]);
                if compact && !shown[si] && !has_child {
                    continue;
                }
                emitted += 1;
                chars += title_chars[si] + 1;
                last = Some(title);
                for &li in by_section[si].iter().filter(|&&li| admitted[li]) {
                    chars += line_chars[li] + 1;
                    last = Some(&texts[li]);
                }
                if !shown[si] && self.list_sections[si] {
                    chars += "- (none)\n".len() as u64;
                    last = Some("- (none)");
                }
            }
            // A newline before every section but the first.
            chars += emitted.saturating_sub(1);
            match last {
                None => Some(0),
                Some(p) if p.chars().next_back().is_some_and(|c| !c.is_whitespace()) => Some(chars - 1),
                Some(_) => None,
            }
        };
        // The tokens `build(admitted)` would have, without building it when the
        // estimator counts characters only.
        let tokens_of = |admitted: &[bool]| -> Option<u64> { est.tokens_of_chars(chars_of(admitted)?) };
        let mut text = build(&admitted);
        // The size of `text`, counted once per rebuild; with a BPE estimator,
        // each of its lines once per render (a rebuild changes a line or two,
        // and counting the whole again was an eighth of an o200k replay).
        let mut whole = crate::tokens::SegmentCounter::new(est);
        let mut size = whole.count(&text);
        // Per-line costs round up, so the joined text is usually smaller than
        // their sum: offer the next lines in order again against the real size
        // (a bounded number of tries, each one a rebuild, or with a
        // characters-only estimator a sum, most tries failing).
        let mut pending: Vec<usize> = (0..self.lines.len()).filter(|&i| !admitted[i]).collect();
        pending.sort_by_key(|&i| (self.lines[i].1, self.lines[i].2, i));
        for i in pending.into_iter().take(FILL_TRIES) {
            if size >= budget {
                break;
            }
            admitted[i] = true;
            match tokens_of(&admitted) {
                Some(t_size) if t_size > budget => admitted[i] = false,
                Some(t_size) => {
                    text = build(&admitted);
                    size = t_size;
                }
                None => {
                    let t = build(&admitted);
                    let t_size = whole.count(&t);
                    if t_size <= budget {
                        text = t;
                        size = t_size;
                    } else {
                        admitted[i] = false;
                    }
                }
            }
        }
        // Per-line costs are an estimate of the joined text; drop the least
        // important admitted lines until the whole fits.
        let mut by_prio: Vec<usize> = (0..self.lines.len()).filter(|&i| admitted[i]).collect();
        by_prio.sort_by_key(|&i| std::cmp::Reverse((self.lines[i].1, self.lines[i].2, i)));
        let mut k = 0;
        while size > budget && k < by_prio.len() {
            admitted[by_prio[k]] = false;
            k += 1;
            text = build(&admitted);
            size = whole.count(&text);
        }
        if size > budget {
            // Not even one line fits: cut the text itself, at a line or word
            // end so nothing is left half-written.
            let head = head_chars(&text, (budget as usize).saturating_mul(4));
            let end = head.rfind('\n').or_else(|| head.rfind(' ')).unwrap_or(0);
            text = head[..end].trim_end().to_string();
        }
        text
    }
}
