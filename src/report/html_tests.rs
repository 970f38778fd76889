//! report.html: escaping of untrusted text and the page's structure.

use super::*;
use proptest::prelude::*;

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

#[test]
fn escape_handles_markup_quotes_and_controls() {
    assert_eq!(escape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
    assert_eq!(escape(r#"a "b" & 'c'"#), "a &quot;b&quot; &amp; &#39;c&#39;");
    assert_eq!(escape("x\u{0}y\u{1b}[31m\n\tz"), "x\u{FFFD}y\u{FFFD}[31m\n\tz");
    assert_eq!(escape("&amp;"), "&amp;amp;");
}

#[test]
fn bins_split_negative_zero_and_tens() {
    let b = bins(&[-5.0, 0.0, 0.0, 0.1, 10.0, 10.5, 99.0, 100.0]);
    assert_eq!(b, [1, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 2]);
}

#[test]
fn ticks_are_round_and_cover_the_range() {
    assert_eq!(ticks(0.0, 100.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
    assert_eq!(ticks(0.0, 1.0), vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]);
    assert_eq!(ticks(5.0, 5.0), vec![5.0]);
    assert_eq!(short(1_250_000.0), "1.2M");
    assert_eq!(short(45_000.0), "45K");
}

proptest! {
    /// Whatever the input, the output has no markup characters, every `&`
    /// starts one of the five entities, and (without control characters)
    /// unescaping gives the input back.
    #[test]
    fn escaped_text_is_inert(s in any::<String>()) {
        let e = escape(&s);
        prop_assert!(!e.contains(['<', '>', '"', '\'']));
        for (i, _) in e.match_indices('&') {
            let rest = &e[i..];
            prop_assert!(["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].iter().any(|x| rest.starts_with(x)), "{}", rest);
        }
        prop_assert!(!e.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
        if !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
            prop_assert_eq!(unescape(&e), s);
        }
    }

    #[test]
    fn markup_in_text_never_survives(a in "[a-z<>/\"' =&]{0,40}", b in "[a-z]{0,10}") {
        let e = escape(&format!("<{b}>{a}</{b}>"));
        prop_assert!(!e.contains('<'));
    }
}
