//! The BPE estimators against the reference tokenizers' counts, and their caches.

use super::*;
use crate::model::{Origin, Role};
use serde_json::json;

#[test]
fn known_strings() {
    assert_eq!(O200k.text_tokens("hello world"), 2);
    assert_eq!(Cl100k.text_tokens("hello world"), 2);
    assert_eq!(O200k.text_tokens(""), 0);
    // tiktoken README: cl100k encodes "tiktoken is great!" as 6 tokens.
    assert_eq!(Cl100k.text_tokens("tiktoken is great!"), 6);
    // A long run of one character (base64-like blobs) stays linear and sane.
    let blob = "a".repeat(100_000);
    let n = O200k.text_tokens(&blob);
    assert!(n > 1_000 && n < 100_000, "{n}");
}

proptest::proptest! {
    /// The piece cache changes nothing: counts equal the tokenizer's own,
    /// on first sight of a text and again from the cache.
    #[test]
    fn cached_counts_equal_the_tokenizers(text in "(\\PC|[ \\n\\t]|[a-z]{1,8}|[A-Z][a-z]+|[0-9]{1,5}|[\\{\\}\\(\\)\\.,;:'\"/\\\\-]){0,80}") {
        for _ in 0..2 {
            proptest::prop_assert_eq!(O200k.text_tokens(&text), bpe_openai::o200k_base().count(text.as_str()) as u64);
            proptest::prop_assert_eq!(Cl100k.text_tokens(&text), bpe_openai::cl100k_base().count(text.as_str()) as u64);
        }
    }
}

proptest::proptest! {
    /// A BPE count adds up over `line_segments` (what
    /// `adds_up_over_lines` promises), on lines full of what could join
    /// a piece across a newline: whitespace of every kind, slashes,
    /// punctuation runs, contractions, digits, letters of any script.
    #[test]
    fn bpe_counts_add_up_over_line_segments(
        lines in proptest::collection::vec(
            r#"([ \t\r\n/]|\u{a0}|\u{85}|\u{2028}|'s|'T|[a-z]{1,6}|[A-Z][a-z]+|[0-9]{1,5}|[`#*.,;:'"\\()\[\]{}<>=-]{1,3}|\PC){0,12}"#,
            0..8,
        ),
        end in "[\n]{0,2}",
    ) {
        let text = lines.join("\n") + &end;
        let segments: Vec<&str> = crate::tokens::line_segments(&text).collect();
        proptest::prop_assert_eq!(segments.concat(), text.clone());
        for est in [&O200k as &dyn Estimator, &Cl100k] {
            let sum: u64 = segments.iter().map(|s| est.text_tokens(s)).sum();
            proptest::prop_assert_eq!(sum, est.text_tokens(&text), "{:?}", segments);
        }
    }
}

/// The hand-cut pieces of an ASCII text and the tokenizer's, per vocabulary.
fn both_ways(text: &str) -> Vec<(Vec<&str>, Vec<&str>)> {
    [Vocab::O200k, Vocab::Cl100k]
        .into_iter()
        .map(|vocab| (HandPieces { vocab, text, at: 0 }.collect(), vocab.tokenizer().split(text).collect()))
        .collect()
}

proptest::proptest! {
    /// The hand-cut pieces of a text of ASCII and known symbols are the
    /// tokenizer's own.
    #[test]
    fn hand_pieces_are_the_tokenizers(
        text in r#"([a-z]{1,6}|[A-Z]{1,3}[a-z]{0,4}|[0-9]{1,5}|[ \t\n\r\x0B\x0C]{1,4}|'([sStTmMdD]|re|VE|Ll|x)|[\x00-\x7F]|[/\\(){}.,;:`"'#*=-]{1,3}|[→✓—’│]{1,2}){0,40}"#
    ) {
        for (mine, want) in both_ways(&text) {
            proptest::prop_assert_eq!(mine, want);
        }
    }
}

proptest::proptest! {
    /// The pieces of a text with non-ASCII lines, cut line segment by line
    /// segment, are the tokenizer's own.
    #[test]
    fn pieces_of_mixed_text_are_the_tokenizers(
        lines in proptest::collection::vec(
            r##"([a-z]{1,6}|[A-Z][a-z]{0,4}|[0-9]{1,4}|[ \t\r/]{1,3}|'s|[.,:;(){}`"#*=-]{1,2}|é|ü|→|—|日本|\u{a0}|\u{85}|\u{300}|\PC){0,12}"##,
            0..8,
        )
    ) {
        // Lines that start with what may continue a piece across a
        // newline ('/', whitespace) and end with what may carry one
        // (punctuation), ASCII next to non-ASCII.
        let ends = ["", "/", " ", ".", "`", "\t", "é"];
        let text = lines
            .iter()
            .enumerate()
            .map(|(i, l)| [ends[i % ends.len()], l.as_str(), ends[(i * 3 + 1) % ends.len()]].concat())
            .collect::<Vec<_>>()
            .join("\n");
        for vocab in [Vocab::O200k, Vocab::Cl100k] {
            let mine = pieces(vocab, &text);
            let want: Vec<&str> = vocab.tokenizer().split(&text).collect();
            proptest::prop_assert_eq!(mine, want);
        }
    }
}

proptest::proptest! {
    /// Whether a text is cut by hand: its characters are all ASCII or
    /// known symbols, at any position and next to each other.
    #[test]
    fn hand_cuttable_is_ascii_or_known_symbols(
        text in r"([a-z \n.]{0,9}|[→✓—’│]|é|日|\u{a0}|\PC){0,24}"
    ) {
        let want = text.chars().all(|c| c.is_ascii() || known_symbol(c));
        proptest::prop_assert_eq!(hand_cuttable(&text), want);
    }
}

/// Every string of up to 5 characters of an alphabet with a member of each
/// class the patterns tell apart: the same pieces as the tokenizers'.
#[test]
fn hand_pieces_on_every_short_string() {
    let alphabet = ['a', 's', 'B', '1', ' ', '\t', '\n', '\r', '\'', '/', '.', '\u{1}', '→'];
    let mut text = String::new();
    let mut checked = 0;
    for len in 0..=5u32 {
        for mut code in 0..alphabet.len().pow(len) {
            text.clear();
            for _ in 0..len {
                text.push(alphabet[code % alphabet.len()]);
                code /= alphabet.len();
            }
            for (mine, want) in both_ways(&text) {
                assert_eq!(mine, want, "{text:?}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, (0..=5).map(|l| 13usize.pow(l)).sum::<usize>());
}

/// Each known symbol next to each class of character, where each pattern
/// could take it: the same pieces as the tokenizers'. A letter, a digit,
/// a mark or a space among them would fail here.
#[test]
fn every_known_symbol_in_every_context() {
    let symbols: Vec<char> = (0x80u32..0x3_0000).filter_map(char::from_u32).filter(|&c| known_symbol(c)).collect();
    assert_eq!(symbols.len(), 42);
    let contexts = [
        "#", "a#", "#a", "#Ab", "#AB", " #", " #a", "##", ".#", "#.", "#\n/", "\t#x", "1#2", "'#s", "#'s", "#'S",
        "# \n", "  #", "#/", "a #\n\nb", "#\r\n",
    ];
    for c in symbols {
        assert!(hand_cuttable(&c.to_string()));
        for ctx in contexts {
            let text = ctx.replace('#', &c.to_string());
            for (mine, want) in both_ways(&text) {
                assert_eq!(mine, want, "{text:?}");
            }
        }
    }
    // Anything else goes through the regex.
    assert!(!hand_cuttable("é") && !hand_cuttable("\u{a0}") && !hand_cuttable("✅\u{fe0f}"));
}

#[test]
fn hand_pieces_on_real_text() {
    // This file and every fixture (code, prose, JSON lines of every log
    // format): the lines the hand cut knows, one text per file, and the
    // whole file as counting cuts it.
    let mut files = vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src/tokens/bpe.rs"))];
    let mut dirs = vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"))];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() { dirs.push(path) } else { files.push(path) }
        }
    }
    let mut bytes = 0;
    for f in &files {
        let Ok(t) = std::fs::read_to_string(f) else { continue };
        let known: Vec<&str> = t.split_inclusive('\n').filter(|l| hand_cuttable(l)).collect();
        let text = known.concat();
        for (mine, want) in both_ways(&text) {
            assert_eq!(mine, want, "{}", f.display());
        }
        for vocab in [Vocab::O200k, Vocab::Cl100k] {
            let mine = pieces(vocab, &t);
            let want: Vec<&str> = vocab.tokenizer().split(&t).collect();
            assert_eq!(mine, want, "{}", f.display());
        }
        bytes += text.len();
    }
    assert!(bytes > 100_000, "{bytes} bytes of hand-cut text in {} files", files.len());
}

proptest::proptest! {
    /// Two pieces share a short key only if they are the same bytes,
    /// whether the key is read from a window of 16 bytes or byte by
    /// byte at the end of a text, and NUL bytes included.
    #[test]
    fn short_keys_tell_pieces_apart(
        a in proptest::collection::vec(proptest::prop_oneof![proptest::strategy::Just(0u8), proptest::strategy::Just(b'a'), proptest::num::u8::ANY], 0..18),
        b in proptest::collection::vec(proptest::prop_oneof![proptest::strategy::Just(0u8), proptest::strategy::Just(b'a'), proptest::num::u8::ANY], 0..18),
        pad in 0usize..20,
    ) {
        let in_text = |p: &[u8]| {
            let mut text = p.to_vec();
            text.extend(std::iter::repeat_n(b'z', pad));
            short_key(&text, 0..p.len())
        };
        let (ka, kb) = (in_text(&a), in_text(&b));
        proptest::prop_assert_eq!(ka.is_some(), a.len() <= 15);
        proptest::prop_assert_eq!(ka, short_key(&a, 0..a.len()));
        if let (Some(ka), Some(kb)) = (ka, kb) {
            proptest::prop_assert_eq!(ka == kb, a == b);
        }
    }
}

#[test]
fn a_segment_counter_counts_what_the_estimator_counts() {
    let summary = "## Goal\nfix the parser\n\n## Files\n- `src/a.rs`\n/abs/path.rs\n  indented\n- don't stop\n";
    for est in [&O200k as &dyn Estimator, &Cl100k] {
        assert!(est.adds_up_over_lines());
        let mut counter = crate::tokens::SegmentCounter::new(est);
        // Twice: the second time from the memo.
        for text in [summary, summary, &summary[..40], "", "x"] {
            assert_eq!(counter.count(text), est.text_tokens(text), "{text:?}");
        }
    }
}

#[test]
fn cached_counts_on_long_pieces_and_real_text() {
    let long = format!("{} {} x", "a".repeat(5_000), "é".repeat(300));
    let code = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/tokens/bpe.rs")).unwrap();
    for text in [long.as_str(), code.as_str(), "don't   stop\r\n\n  believin' 12345678"] {
        for _ in 0..2 {
            assert_eq!(O200k.text_tokens(text), bpe_openai::o200k_base().count(text) as u64);
            assert_eq!(Cl100k.text_tokens(text), bpe_openai::cl100k_base().count(text) as u64);
        }
    }
}

#[test]
fn message_and_blocks() {
    let m = Message::new(
        Role::Assistant,
        Origin::Model,
        vec![
            Block::text("hello world"),
            Block::Thinking { text: String::new(), opaque_len: 5000 },
            Block::Image { media_type: "image/png".into(), bytes: 10 },
        ],
    );
    // 2 (text) + 0 (empty thinking) + 1200 (image) + 3 (framing).
    assert_eq!(O200k.message_tokens(&m), 2 + IMAGE_TOKENS + BPE_MESSAGE_OVERHEAD);
    let tu = Block::ToolUse { id: "x".into(), name: "hello".into(), input: json!("world") };
    // "hello" = 1, "world" = 1.
    assert_eq!(O200k.block_tokens(&tu), 2);
    assert_eq!(Cl100k.block_tokens(&tu), 2);
    let tr = Block::ToolResult { tool_use_id: "x".into(), content: vec![Block::text("hello world")], is_error: None };
    assert_eq!(O200k.block_tokens(&tr), 2);
}
