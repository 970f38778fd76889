//! Recall probes (Factory's method, offline): questions made from the atoms the
//! agent needed after a compaction, asked of a model that sees only what the
//! compaction left it (the summary S and the kept messages T), graded by exact
//! match with no judge model. They tell how well FRR predicts what a model
//! actually recalls. Building, grading and correlating; the CLI asks.

use super::AtomKind;
use super::shown::NeededShown;
use serde::{Deserialize, Serialize};

/// An answer longer than this is not graded as a match: a model that pastes
/// its whole context would otherwise "recall" everything.
pub const MAX_ANSWER_CHARS: usize = 400;

/// The words a probe's question stands for when it shows where the atom was used.
const BLANK: &str = "____";

/// One question about one needed atom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub kind: AtomKind,
    /// The atom: what a right answer holds.
    pub value: String,
    pub weight: f64,
    pub question: String,
    /// The atom is written in what the model is given (S ∪ T).
    pub in_context: bool,
}

/// The probes of one compaction: its needed atoms, heaviest first (then by
/// value), at most `max`; the pending ask is not a fact to recall.
pub fn probes(needed: &[NeededShown], context: &str, max: usize) -> Vec<Probe> {
    let mut atoms: Vec<&NeededShown> = needed.iter().filter(|n| n.kind != AtomKind::Ask).collect();
    atoms.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.value.cmp(&b.value)));
    let lower = context.to_lowercase();
    atoms
        .into_iter()
        .take(max)
        .map(|n| Probe {
            kind: n.kind,
            value: n.value.clone(),
            weight: n.weight,
            question: question(n),
            in_context: present_lower(n.kind, &n.value, &lower),
        })
        .collect()
}

/// The question about `n`: what kind of fact is asked, and where the agent
/// used it next with the atom blanked out (left out when it cannot be blanked).
fn question(n: &NeededShown) -> String {
    let what = match n.kind {
        AtomKind::ModifiedPath => "Which file did we modify earlier? Answer with its exact path.",
        AtomKind::Path => "Which file or folder was this about? Answer with its exact path.",
        AtomKind::Error => "What was the exact error we got earlier? Quote it.",
        AtomKind::Id => "Which exact identifier (hash, URL, number, version) was it?",
        AtomKind::Constraint => "What did the user say we must (or must never) do? Quote the rule.",
        AtomKind::Command => "What exact command did we run earlier?",
        AtomKind::Symbol => "Which code name (function, type, variable) was it? Answer with it exactly.",
        AtomKind::Ask => "What did the user ask for?",
    };
    let when = n.call.map_or_else(String::new, |c| format!(" at call {c}"));
    match (blanked(&n.excerpt, &n.value), &n.tool) {
        (Some(used), _) => format!("{what} It is used next{when}: «{used}»"),
        (None, Some(tool)) => format!("{what} It is used next{when} by the tool {tool}."),
        (None, None) if when.is_empty() => what.to_string(),
        (None, None) => format!("{what} It is used next{when}."),
    }
}

/// `excerpt` with every occurrence of `value` (any case) blanked; `None` when
/// it does not hold `value`, or holds it in a way the blank would not hide.
fn blanked(excerpt: &str, value: &str) -> Option<String> {
    if value.is_empty() || excerpt.is_empty() {
        return None;
    }
    let (e, v) = (excerpt.to_lowercase(), value.to_lowercase());
    // Lower-casing can change lengths (rare scripts): then do not try.
    if e.len() != excerpt.len() || v.len() != value.len() || !e.contains(&v) {
        return None;
    }
    let mut out = String::new();
    let mut rest = 0;
    for (i, _) in e.match_indices(&v) {
        out.push_str(&excerpt[rest..i]);
        out.push_str(BLANK);
        rest = i + v.len();
    }
    out.push_str(&excerpt[rest..]);
    Some(out)
}

/// Whether `text` holds the atom: its value in any case, or for a
/// constraint (a keyword set) every keyword.
pub fn present(kind: AtomKind, value: &str, text: &str) -> bool {
    present_lower(kind, value, &text.to_lowercase())
}

fn present_lower(kind: AtomKind, value: &str, lower: &str) -> bool {
    let v = value.to_lowercase();
    match kind {
        AtomKind::Constraint | AtomKind::Ask => {
            let mut words = v.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).peekable();
            words.peek().is_some() && words.all(|w| lower.contains(w))
        }
        _ => !v.trim().is_empty() && lower.contains(v.trim()),
    }
}

/// Whether `answer` is right: it holds the atom and is short.
pub fn grade(probe: &Probe, answer: Option<&str>) -> bool {
    answer.is_some_and(|a| a.chars().count() <= MAX_ANSWER_CHARS && present(probe.kind, &probe.value, a))
}

/// The instructions of a probe request.
pub const SYSTEM: &str = "You answer questions about an earlier part of your work as a coding assistant, using ONLY \
the context given: a summary of the earlier conversation and the messages kept after it. Do not guess. For each \
question, write one line: its number, a period, and the answer alone (a path, an error, a command, a name), or \
`unknown` when the context does not say.";

/// The user message: the context, then the numbered questions.
pub fn prompt(summary: &str, kept: &str, probes: &[Probe]) -> String {
    let mut out =
        format!("<summary>\n{summary}\n</summary>\n\n<kept-messages>\n{kept}\n</kept-messages>\n\nQuestions:\n");
    for (i, p) in probes.iter().enumerate() {
        out.push_str(&format!("{}. {}\n", i + 1, p.question));
    }
    out
}

/// The answers of a numbered list (`1. x`, `1) x`, `1: x`), by question;
/// `None` where a number is missing or the answer is `unknown`.
pub fn parse_answers(text: &str, n: usize) -> Vec<Option<String>> {
    let mut out = vec![None; n];
    for line in text.lines() {
        let line = line.trim().trim_start_matches(['-', '*', '#', ' ']);
        let digits: String = line.chars().take_while(char::is_ascii_digit).collect();
        let Ok(k) = digits.parse::<usize>() else { continue };
        let rest = line[digits.len()..].trim_start_matches(['.', ')', ':']).trim();
        let rest = rest.trim_matches('`').trim();
        if (1..=n).contains(&k) && out[k - 1].is_none() && !rest.is_empty() && !rest.eq_ignore_ascii_case("unknown") {
            out[k - 1] = Some(rest.to_string());
        }
    }
    out
}

/// Spearman's rank correlation of paired values (ties share their mean rank);
/// `None` under three pairs or when either side is constant.
pub fn spearman(xs: &[f64], ys: &[f64]) -> Option<f64> {
    if xs.len() != ys.len() || xs.len() < 3 {
        return None;
    }
    let (rx, ry) = (ranks(xs), ranks(ys));
    let mean = (xs.len() as f64 + 1.0) / 2.0;
    let (mut num, mut dx, mut dy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        num += (a - mean) * (b - mean);
        dx += (a - mean).powi(2);
        dy += (b - mean).powi(2);
    }
    (dx > 0.0 && dy > 0.0).then(|| num / (dx * dy).sqrt())
}

fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut out = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            out[k] = rank;
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needed(kind: AtomKind, value: &str, weight: f64, excerpt: &str) -> NeededShown {
        NeededShown {
            kind,
            value: value.into(),
            weight,
            held: 0.0,
            message: 0,
            call: None,
            tool: Some("Edit".into()),
            excerpt: excerpt.into(),
        }
    }

    #[test]
    fn probes_blank_the_atom_and_know_what_the_context_holds() {
        let n = [
            needed(AtomKind::Symbol, "parse_args", 1.0, "call parse_args() again"),
            needed(AtomKind::ModifiedPath, "src/Main.rs", 3.0, "Edit SRC/main.rs line 4"),
            needed(AtomKind::Error, "E0308", 2.0, "no excerpt with it"),
            needed(AtomKind::Ask, "fix build", 9.0, ""),
        ];
        let p = probes(&n, "Summary: we changed src/main.rs.", 10);
        assert_eq!(p.iter().map(|p| p.value.as_str()).collect::<Vec<_>>(), ["src/Main.rs", "E0308", "parse_args"]);
        assert!(p[0].question.ends_with("It is used next: «Edit ____ line 4»"), "{}", p[0].question);
        assert!(!p[0].question.to_lowercase().contains("main.rs"));
        assert!(p[1].question.ends_with("used next by the tool Edit."), "{}", p[1].question);
        assert_eq!(p.iter().map(|p| p.in_context).collect::<Vec<_>>(), [true, false, false]);
        assert_eq!(probes(&n, "", 1).len(), 1);
    }

    #[test]
    fn grading_is_exact_match_of_the_atom_in_a_short_answer() {
        let p = Probe {
            kind: AtomKind::Path,
            value: "src/a.rs".into(),
            weight: 1.0,
            question: String::new(),
            in_context: true,
        };
        assert!(grade(&p, Some("SRC/A.RS")));
        assert!(!grade(&p, Some("src/b.rs")));
        assert!(!grade(&p, None));
        assert!(!grade(&p, Some(&format!("{} src/a.rs", "x".repeat(MAX_ANSWER_CHARS)))));
        let c = Probe { kind: AtomKind::Constraint, value: "never push main".into(), ..p };
        assert!(grade(&c, Some("Never push to main.")));
        assert!(!grade(&c, Some("never push")));
    }

    #[test]
    fn answers_are_read_by_number() {
        let a = parse_answers("1. src/a.rs\n2) unknown\n- 3: `cargo test`\nnoise\n9. too far\n1. again", 3);
        assert_eq!(a, [Some("src/a.rs".to_string()), None, Some("cargo test".to_string())]);
        assert_eq!(parse_answers("", 2), [None, None]);
    }

    #[test]
    fn spearman_ranks_with_ties() {
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]), Some(1.0));
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(spearman(&[1.0, 2.0], &[1.0, 2.0]), None);
        let r = spearman(&[1.0, 2.0, 2.0, 4.0], &[1.0, 3.0, 2.0, 4.0]).unwrap();
        assert!((r - 0.9486832980505138).abs() < 1e-12, "{r}");
    }
}
