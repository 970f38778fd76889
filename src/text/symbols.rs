//! The one symbol filter: which dotted or called words are code symbols, for the
//! metric's atoms and the extractive summarizer alike (a symbol one lists is one the other reads).
//!
//! The metric's rules won over the summarizer's older ones: they know every file
//! extension a bare file name may carry (the summarizer's shorter list let `globe.svg`
//! and `image.png` through as symbols, which the metric then read as invented paths),
//! and 128 bytes, not 80, so a long qualified name is not silently dropped by one side.

use std::sync::LazyLock;

/// File extensions accepted for a bare file name (`main.rs`): prose is full of
/// `e.g.`, `example.com` and `v1.2`, so a bare name needs a known extension.
pub(crate) const KNOWN_EXT: &[&str] = &[
    "rs", "toml", "md", "json", "jsonl", "js", "mjs", "cjs", "ts", "mts", "cts", "tsx", "jsx", "py", "pyi", "go",
    "java", "kt", "kts", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "rb", "php", "swift", "scala", "sh", "bash",
    "zsh", "fish", "ps1", "yaml", "yml", "txt", "lock", "html", "htm", "css", "scss", "sass", "less", "sql", "xml",
    "cfg", "ini", "conf", "vue", "svelte", "ex", "exs", "erl", "zig", "lua", "gradle", "proto", "csv", "tsv", "ipynb",
    "dart", "hs", "ml", "mli", "pl", "pm", "tf", "tfvars", "nix", "mk", "cmake", "bat", "el", "clj", "cljs", "edn",
    "graphql", "gql", "rst", "tex", "svg", "png", "jpg", "jpeg", "gif", "webp", "pdf", "wasm", "so", "dylib", "dll",
    "exe", "patch", "diff", "tmpl", "j2", "hbs", "ejs", "astro", "mdx", "ron", "jl", "vim", "snap", "pem", "lockb",
    "sum", "mod",
];

/// Top-level domains that make `foo.com` a host, not a symbol.
const TLDS: &[&str] = &["com", "org", "net", "io", "dev", "ai", "app", "co", "uk", "de", "fr", "us", "gov", "edu"];

/// Is `ext` one of [`KNOWN_EXT`], in any case? Every file-name-like word of
/// every message asks: comparing it with each of the 117 in turn was nearly
/// 4 % of a replay, and a string set's UTF-8 check and hash of the
/// lower-cased word still cost 240 instructions a question. The extensions
/// are at most 8 bytes: each is one word, its bytes packed little-endian, and
/// the question is a binary search of the sorted words.
pub(crate) fn known_ext(ext: &str) -> bool {
    static WORDS: LazyLock<Vec<u64>> = LazyLock::new(|| {
        let mut words: Vec<u64> = KNOWN_EXT.iter().filter_map(|e| ext_word(e)).collect();
        words.sort_unstable();
        words
    });
    // The entries are lower-case ASCII: a byte outside ASCII matches none.
    ext_word(ext).is_some_and(|w| WORDS.binary_search(&w).is_ok())
}

/// The bytes of a word of 1 to 8, ASCII lower-cased and packed little-endian
/// (zero-padded); `None` for a longer or empty word, or one with a NUL byte
/// (it would read as the padding of a shorter one; no extension holds one).
fn ext_word(ext: &str) -> Option<u64> {
    let b = ext.as_bytes();
    if b.is_empty() || b.len() > 8 || b.contains(&0) {
        return None;
    }
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    w.make_ascii_lowercase();
    Some(u64::from_le_bytes(w))
}

/// Control words and ubiquitous builtins that look like calls but name nothing.
const CALL_KEYWORDS: &[&str] = &[
    "if", "for", "while", "switch", "return", "catch", "match", "print", "println", "printf", "format", "function",
    "def", "elif", "else", "and", "not", "with", "assert", "typeof", "sizeof", "new", "delete", "super", "self",
    "this", "require", "import", "export", "lambda", "len", "str", "int", "float", "list", "dict", "set", "tuple",
    "range", "type", "echo", "eval", "exec", "Some", "None", "Ok", "Err", "vec", "main",
];

pub(crate) fn accept_symbol(m: &str) -> Option<&str> {
    let call = m.ends_with('(');
    let s = m.trim_end_matches('(');
    if s.len() < 3 || s.len() > 128 {
        return None;
    }
    let qualified_dot = s.contains('.');
    // `::` found from its first byte (a vector search), not by the two-way
    // string search, whose set-up costs more than these short words.
    let b = s.as_bytes();
    let qualified_colons = || memchr::memchr_iter(b':', b).any(|i| b.get(i + 1) == Some(&b':'));
    if qualified_dot || qualified_colons() {
        let (mut short, mut last) = (true, None);
        for seg in s.split(['.', ':']).filter(|x| !x.is_empty()) {
            short &= seg.len() <= 2;
            last = Some(seg);
        }
        if short {
            return None;
        }
        if qualified_dot
            && let Some(last) = last
            && (known_ext(last) || TLDS.iter().any(|t| t.eq_ignore_ascii_case(last)))
        {
            return None;
        }
    } else if call && CALL_KEYWORDS.contains(&s) {
        return None;
    }
    Some(s)
}
