//! Tests of the shell-command lexer against a one-character-at-a-time
//! reference.

use proptest::prelude::*;

/// The lexer as it was, one character at a time: the reference the one
/// copying runs of plain characters must agree with.
fn reference(s: &str) -> Vec<(Vec<(String, bool)>, bool)> {
    let (mut cmds, mut tokens) = (Vec::new(), Vec::new());
    let (mut cur, mut free, mut in_token, mut quote, mut after_pipe) = (String::new(), false, false, None, false);
    let mut chars = s.chars().peekable();
    let flush = |tokens: &mut Vec<(String, bool)>, cur: &mut String, free: &mut bool, in_token: &mut bool| {
        if *in_token {
            tokens.push((std::mem::take(cur), *free));
        }
        (*free, *in_token) = (false, false);
    };
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else {
                free |= c.is_whitespace();
                cur.push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => (quote, in_token) = (Some(c), true),
            '\\' => {
                if let Some(n) = chars.next().filter(|&n| n != '\n') {
                    cur.push(n);
                    in_token = true;
                }
            }
            '&' if (in_token && cur.ends_with('>')) || chars.peek() == Some(&'>') => {
                cur.push(c);
                in_token = true;
            }
            ';' | '\n' | '&' | '|' | '(' | ')' => {
                flush(&mut tokens, &mut cur, &mut free, &mut in_token);
                if !tokens.is_empty() {
                    cmds.push((std::mem::take(&mut tokens), after_pipe));
                }
                let pipe = c == '|' && chars.peek() != Some(&'|');
                if matches!(c, '&' | '|') && chars.peek() == Some(&c) {
                    chars.next();
                }
                after_pipe = pipe;
            }
            c if c.is_whitespace() => flush(&mut tokens, &mut cur, &mut free, &mut in_token),
            _ => {
                cur.push(c);
                in_token = true;
            }
        }
    }
    flush(&mut tokens, &mut cur, &mut free, &mut in_token);
    if !tokens.is_empty() {
        cmds.push((tokens, after_pipe));
    }
    cmds
}

const PIECES: &[&str] = &[
    "cargo",
    "-p",
    "x.rs",
    "a/b",
    "é",
    "日本",
    " ",
    "  ",
    "\t",
    "\u{a0}",
    "\u{3000}",
    "\n",
    "'",
    "\"",
    "\\",
    "\\\n",
    "\\ ",
    "&",
    "&&",
    ">",
    ">>",
    "2>&1",
    "&>",
    "|",
    "||",
    ";",
    "(",
    ")",
    "''",
    "'a b'",
    "\"x\"",
    "=",
    "K=v",
    "$HOME",
    "#",
    "\u{b}",
    "\u{c}",
    "\r",
    "'é\tx'",
    "\"a\u{b}b\"",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Same commands, tokens and free-text flags as the reference, on
    /// scripts of quotes, escapes, separators, redirections and ASCII and
    /// Unicode whitespace (the vertical tab included).
    #[test]
    fn the_lexer_splits_as_the_reference_does(
        parts in proptest::collection::vec(proptest::sample::select(PIECES), 0..24),
    ) {
        let script = parts.concat();
        let got: Vec<(Vec<(String, bool)>, bool)> = super::split_simple_commands(&script)
            .into_iter()
            .map(|(ts, pipe)| (ts.into_iter().map(|t| (t.text, t.free_text)).collect(), pipe))
            .collect();
        prop_assert_eq!(got, reference(&script), "{:?}", script);
    }
}
