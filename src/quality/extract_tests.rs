//! Extraction and normalization, one atom type at a time: what must be found,
//! what must not, and the normalized value.

use super::{Atom, AtomKind, extract_atoms, extract_tool_call_atoms};
use crate::text::atoms::{self as extract, Ctx};
use pretty_assertions::assert_eq;
use serde_json::json;

const CWD: &str = "/home/u/proj";

fn of(kind: AtomKind, text: &str) -> Vec<String> {
    extract_atoms(text, Some(CWD)).into_iter().filter(|a| a.kind == kind).map(|a| a.value).collect()
}

fn tool(name: &str, input: serde_json::Value) -> Vec<Atom> {
    extract_tool_call_atoms(name, &input, Some(CWD))
}

fn tool_of(kind: AtomKind, name: &str, input: serde_json::Value) -> Vec<String> {
    tool(name, input).into_iter().filter(|a| a.kind == kind).map(|a| a.value).collect()
}

/// Symbols as a tool result (code context) names them.
fn code_symbols(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    extract::scan_text(text, Ctx::Code, Some(CWD), &mut found);
    let mut v: Vec<String> =
        found.into_iter().filter(|f| f.kind == AtomKind::Symbol && f.strong).map(|f| f.value).collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn patterns_compile() {
    assert!(extract::patterns_compile());
}

#[test]
fn paths_are_found_and_normalized() {
    let text = "Edited /home/u/proj/src/main.rs and ./lib/util.rs, see ../other/x.py and src/a/../b.rs:42:5. \
                Also Cargo.toml, /usr/bin/env and ~/notes/todo.md.";
    assert_eq!(
        of(AtomKind::Path, text),
        vec![
            "../other/x.py",
            "/usr/bin/env",
            "Cargo.toml",
            "lib/util.rs",
            "src/b.rs",
            "src/main.rs",
            "~/notes/todo.md"
        ]
    );
}

#[test]
fn prose_slashes_and_dots_are_not_paths() {
    let text = "Use and/or, 10 km/s, e.g. example.com, I/O, N/A, v1.2, 3/4, 12/05/2024, /compact and /tmp.";
    assert_eq!(of(AtomKind::Path, text), Vec::<String>::new());
}

/// A slash-joined list of words reads like a relative path with no extension:
/// in prose it makes no atom, though it still counts where it occurs; in
/// backticks, a fence or a tool's text it is a path, as is any path with a
/// dot, a leading `./`, `/` or `~/`, or a trailing `/`.
#[test]
fn extensionless_relative_paths_need_code_context() {
    let prose = "Listeners survive reset/compact/switchSession; the code is in src/auth/middleware.";
    assert_eq!(of(AtomKind::Path, prose), Vec::<String>::new());
    let mut found = Vec::new();
    extract::scan_text(prose, Ctx::Prose, Some(CWD), &mut found);
    let weak: Vec<&str> = found.iter().filter(|f| f.kind == AtomKind::Path).map(|f| f.value.as_str()).collect();
    assert_eq!(weak, ["reset/compact/switchSession", "src/auth/middleware"], "still occurrences");
    let coded = "See `src/auth/middleware`, ./scripts/build, src/auth/ and src/v1.2/api.\n```\nsrc/lib/core\n```";
    assert_eq!(
        of(AtomKind::Path, coded),
        ["scripts/build", "src/auth", "src/auth/middleware", "src/lib/core", "src/v1.2/api"]
    );
    let mut found = Vec::new();
    extract::scan_text(prose, Ctx::Code, Some(CWD), &mut found);
    assert!(found.iter().filter(|f| f.kind == AtomKind::Path).all(|f| f.strong));
}

#[test]
fn windows_paths_are_relative_to_a_windows_cwd() {
    let atoms = extract_atoms(r"Opened C:\Users\me\proj\src\lib.rs and D:\data\x.csv", Some(r"C:\Users\me\proj"));
    let paths: Vec<&str> = atoms.iter().filter(|a| a.kind == AtomKind::Path).map(|a| a.value.as_str()).collect();
    assert_eq!(paths, vec!["D:/data/x.csv", "src/lib.rs"]);
}

#[test]
fn urls_are_ids_not_paths() {
    let text = "(see https://github.com/o/r/blob/main/src/x.rs).";
    assert_eq!(of(AtomKind::Path, text), Vec::<String>::new());
    assert_eq!(of(AtomKind::Id, text), vec!["https://github.com/o/r/blob/main/src/x.rs"]);
}

#[test]
fn diff_headers_name_the_file() {
    let text = "diff --git a/src/x.rs b/src/x.rs\n--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1 +1 @@";
    assert_eq!(of(AtomKind::Path, text), vec!["src/x.rs"]);
}

#[test]
fn normalize_path_rules() {
    let n = |p: &str| extract::normalize_path(p, Some(CWD));
    assert_eq!(n("/home/u/proj/src/./a/../b.rs").as_deref(), Some("src/b.rs"));
    assert_eq!(n("`./src/lib.rs`,").as_deref(), Some("src/lib.rs"));
    assert_eq!(n("/home/u/proj/../other/c.rs").as_deref(), Some("../other/c.rs"));
    assert_eq!(n("/home/u/projx/c.rs").as_deref(), Some("/home/u/projx/c.rs"));
    assert_eq!(n("/home/u/proj"), None, "the workspace root itself names nothing");
    assert_eq!(n("src/**/*.rs"), None, "globs are not paths");
    assert_eq!(n("https://x.org/a"), None);
}

#[test]
fn modified_paths_for_every_agent() {
    let m = |name: &str, input: serde_json::Value| tool_of(AtomKind::ModifiedPath, name, input);
    assert_eq!(
        m("Edit", json!({"file_path": "/home/u/proj/src/a.rs", "old_string": "x", "new_string": "y"})),
        ["src/a.rs"]
    );
    assert_eq!(m("Write", json!({"file_path": "src/b.rs", "content": "fn main() {}"})), ["src/b.rs"]);
    assert_eq!(m("MultiEdit", json!({"file_path": "src/c.rs", "edits": []})), ["src/c.rs"]);
    assert_eq!(m("NotebookEdit", json!({"notebook_path": "nb/x.ipynb", "new_source": ""})), ["nb/x.ipynb"]);
    assert_eq!(m("edit", json!({"path": "src/pi.ts", "oldText": "a", "newText": "b"})), ["src/pi.ts"]);
    assert_eq!(m("write", json!({"path": "src/pi2.ts", "content": ""})), ["src/pi2.ts"]);
    assert_eq!(m("write_file", json!({"file_path": "/home/u/proj/g.py", "content": ""})), ["g.py"]);
    assert_eq!(m("replace", json!({"file_path": "g2.py", "old_string": "", "new_string": ""})), ["g2.py"]);
    assert_eq!(m("write_to_file", json!({"path": "cline.cs", "content": ""})), ["cline.cs"]);
    assert_eq!(m("replace_in_file", json!({"path": "cline2.cs", "diff": ""})), ["cline2.cs"]);
    assert_eq!(m("mcp__fs__edit_file", json!({"path": "mcp.rs"})), ["mcp.rs"]);
    assert_eq!(m("str_replace_based_edit_tool", json!({"command": "str_replace", "path": "e.rs"})), ["e.rs"]);
    assert_eq!(m("str_replace_based_edit_tool", json!({"command": "view", "path": "e.rs"})), Vec::<String>::new());
}

#[test]
fn reads_are_paths_not_modified() {
    let atoms = tool("Read", json!({"file_path": "/home/u/proj/src/a.rs"}));
    assert_eq!(atoms, vec![Atom { kind: AtomKind::Path, value: "src/a.rs".into() }]);
    assert_eq!(tool_of(AtomKind::Path, "read_file", json!({"absolute_path": "/home/u/proj/x/y.go"})), ["x/y.go"]);
    assert_eq!(tool_of(AtomKind::Path, "Grep", json!({"pattern": "fn main", "path": "src"})), ["src"]);
}

#[test]
fn codex_apply_patch_headers_are_modified_paths() {
    let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: src/new.rs\n+fn f() {}\n\
                 *** Delete File: old.txt\n*** Update File: src/mv.rs\n*** Move to: src/moved.rs\n*** End Patch";
    let custom = tool_of(AtomKind::ModifiedPath, "apply_patch", json!(patch));
    assert_eq!(custom, vec!["old.txt", "src/a.rs", "src/moved.rs", "src/mv.rs", "src/new.rs"]);
    let function = tool_of(AtomKind::ModifiedPath, "apply_patch", json!({"input": patch}));
    assert_eq!(function, custom);
    // Older Codex: apply_patch through the shell, as a heredoc.
    let shell = json!({"command": ["bash", "-lc", format!("apply_patch <<'EOF'\n{patch}\nEOF")]});
    assert_eq!(tool_of(AtomKind::ModifiedPath, "shell", shell.clone()), custom);
    assert_eq!(tool_of(AtomKind::Command, "shell", shell), ["apply_patch"]);
}

#[test]
fn shell_commands_for_every_agent() {
    let c = |name: &str, input: serde_json::Value| tool_of(AtomKind::Command, name, input);
    assert_eq!(
        c(
            "Bash",
            json!({"command": "cd /home/u/proj && cargo test --lib quality 2>&1 | tail -50", "description": "x"})
        ),
        ["cargo test --lib quality"]
    );
    assert_eq!(
        c("shell", json!({"command": ["bash", "-lc", "rg \"TeamSheet\" src/"], "workdir": CWD})),
        ["rg TeamSheet src"]
    );
    assert_eq!(c("shell_command", json!({"command": "git checkout main"})), ["git checkout main"]);
    assert_eq!(c("exec_command", json!({"cmd": "ls -la src"})), ["ls -la src"]);
    assert_eq!(c("local_shell", json!({"type": "exec", "command": ["cargo", "build"]})), ["cargo build"]);
    assert_eq!(c("bash", json!({"command": "npm run build"})), ["npm run build"]);
    assert_eq!(
        c("run_shell_command", json!({"command": "pytest tests/test_x.py -k slow"})),
        ["pytest tests/test_x.py -k slow"]
    );
    assert_eq!(c("execute_command", json!({"command": "make"})), ["make"]);
    assert_eq!(c("Read", json!({"command": "make"})), Vec::<String>::new(), "not a shell tool");
}

#[test]
fn command_normalization_keeps_argv0_words_flags_and_paths() {
    let n = |s: &str| extract::normalize_commands(s, Some(CWD));
    assert_eq!(n("git tag -a v1 -m \"release notes here\""), ["git tag -a v1 -m"]);
    assert_eq!(n("RUST_LOG=debug   cargo   run --release"), ["cargo run --release"]);
    assert_eq!(
        n("bash -lc 'cargo fmt && cargo clippy --all-targets -- -D warnings'"),
        ["cargo fmt", "cargo clippy --all-targets -- -D warnings"]
    );
    assert_eq!(n("python /home/u/proj/scripts/gen.py > out.txt"), ["python scripts/gen.py"]);
    assert_eq!(n("cat <<'EOF' > f.txt\nhello world\nEOF"), ["cat"]);
    assert_eq!(n("echo hi; cd src; make test"), ["make test"]);
    assert_eq!(n("sudo apt-get install -y jq"), ["apt-get install -y jq"]);
    assert_eq!(n(""), Vec::<String>::new());
}

#[test]
fn trivially_rederived_commands_are_not_atoms() {
    let n = |s: &str| extract::normalize_commands(s, Some(CWD));
    for cmd in ["git status", "git add -A", "git commit -m \"wip\"", "git diff --stat", "ls -la", "pwd"] {
        assert_eq!(n(cmd), Vec::<String>::new(), "{cmd}");
    }
    assert_eq!(n("git diff src/a.rs"), ["git diff src/a.rs"], "a path makes it specific");
    for cmd in ["ls", "ls .", "git status .", "git log --oneline -5 --all", "tree -a"] {
        assert_eq!(n(cmd), Vec::<String>::new(), "{cmd}");
    }
    for (cmd, kept) in [
        ("git", "git"),
        ("git tag", "git tag"),
        ("git status src", "git status src"),
        ("tree -L 2", "tree -L 2"),
        ("ls src", "ls src"),
        ("ls -la src/a.rs", "ls -la src/a.rs"),
        ("/usr/bin/git status", "/usr/bin/git status"),
    ] {
        assert_eq!(n(cmd), [kept], "{cmd}");
    }
}

#[test]
fn a_long_command_is_cut_at_200_characters_and_trimmed() {
    let n = |s: &str| extract::normalize_commands(s, Some(CWD));
    // `run` and one-letter words: the 200th character is a space.
    let out = n(&format!("run {}", "a ".repeat(120)));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].len(), 199, "{:?}", out[0]);
    assert!(out[0].starts_with("run a a") && out[0].ends_with('a'));
}

#[test]
fn calls_are_not_bare_file_names() {
    assert_eq!(
        of(AtomKind::Path, "const r = await response.json(); console.log(r); process.env.HOME"),
        Vec::<String>::new()
    );
}

#[test]
fn symbols_in_code_context() {
    let text = "fn parse_args() { let m = HashMap::new(); self.items.len(); MAX_TOKENS; parseJson(x); TypeError }";
    assert_eq!(
        code_symbols(text),
        vec!["HashMap::new", "MAX_TOKENS", "TypeError", "parseJson", "parse_args", "self.items.len"]
    );
}

#[test]
fn symbols_in_prose_need_a_code_span() {
    assert_eq!(of(AtomKind::Symbol, "I renamed parse_args to ParseArgs."), Vec::<String>::new());
    assert_eq!(of(AtomKind::Symbol, "I renamed `parse_args` to `ParseArgs`."), ["ParseArgs", "parse_args"]);
    assert_eq!(of(AtomKind::Symbol, "```rust\nlet x = build_index(&msgs);\n```"), ["build_index"]);
}

#[test]
fn symbol_negatives() {
    // Keywords that look like calls, file names, hosts, abbreviations.
    assert_eq!(code_symbols("if(x) print(y) return(z) e.g. i.e. main.rs example.com"), Vec::<String>::new());
}

#[test]
fn errors_fingerprints_codes_and_exit_codes() {
    let text = "TypeError: Cannot read properties of undefined (reading 'map')\n\
                error[E0308]: mismatched types\n\
                Exit code 1\nProcess exited with code 2\nexit code 0\n\
                thread 'main' panicked at src/main.rs:10:5:";
    assert_eq!(
        of(AtomKind::Error, text),
        vec![
            "E0308",
            "TypeError: Cannot read properties of undefined (reading 'map')",
            "error[E0308]: mismatched types",
            "exit code 1",
            "exit code 2",
            "panicked at src/main.rs:10:5:",
        ]
    );
}

#[test]
fn code_paths_through_error_modules_are_not_errors() {
    // A symbol list as a summary writes it, and Rust source in a tool result.
    let text = "- error::result, error::tests::message_node, field::client\n\
                return Err(Error::Invalid(\"x\".into()));\nfatal::abort()";
    assert_eq!(of(AtomKind::Error, text), Vec::<String>::new());
    assert_eq!(of(AtomKind::Error, "error: could not compile `x`"), vec!["error: could not compile `x`"]);
}

#[test]
fn error_fingerprint_is_folded_and_cut_to_80_chars() {
    let long = format!("ValueError:   {}", "x ".repeat(100));
    let f = of(AtomKind::Error, &long);
    assert_eq!(f.len(), 1);
    assert!(f[0].chars().count() <= 80, "{}", f[0]);
    assert!(f[0].starts_with("ValueError: x x"));
}

#[test]
fn error_negatives() {
    assert_eq!(of(AtomKind::Error, "No errors found. stderr: empty. The error was fixed."), Vec::<String>::new());
}

#[test]
fn ids_hashes_uuids_urls_issues_versions() {
    let text = "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (short 9fceb02), session \
                1af7fc5e-8455-4414-9ccd-011d40f70b2a, see https://example.org/a/b/., fixes #123, \
                bump to v1.2.3, listen on localhost:8080, build 1234567";
    assert_eq!(
        of(AtomKind::Id, text),
        vec![
            "#123",
            "1.2.3",
            "1234567",
            "1AF7FC5E-8455-4414-9CCD-011D40F70B2A",
            "9FCEB02",
            "9FCEB02D0AE598E95DC970B74767F19372D61AF8",
            "https://example.org/a/b",
            "localhost:8080",
        ]
    );
}

#[test]
fn id_negatives() {
    // Pure-letter hex words, short numbers, HTML entities, IPs as versions,
    // file:line as host:port.
    let text = "defaced facade 12345 &#123; 10.0.0.1 main.rs:42 a#1";
    assert_eq!(of(AtomKind::Id, text), Vec::<String>::new());
}

#[test]
fn constraints_from_user_sentences() {
    let text = "Fix the parser in src/parser.rs. Never modify Cargo.lock! Don't use unwrap in library code.\n\
                I only want one commit.\nHello there.\n```\nyou must not see this\n```";
    assert_eq!(
        of(AtomKind::Constraint, text),
        vec!["Don't use unwrap in library code.", "I only want one commit.", "Never modify Cargo.lock!"]
    );
}

#[test]
fn keywords_drop_stop_words_and_keep_negations() {
    assert_eq!(extract::keywords("Don't use unwrap in the library code!", 16), ["not", "unwrap", "library", "code"]);
    assert_eq!(extract::keywords("Please make sure to ALWAYS run tests", 3), ["sure", "always", "run"]);
}

#[test]
fn huge_texts_scan_only_head_and_tail() {
    let filler = "lorem ipsum ".repeat(60_000);
    let text = format!("start src/head.rs {filler} middle src/middle.rs {filler} end src/tail.rs");
    assert!(text.len() > 1_000_000);
    assert_eq!(of(AtomKind::Path, &text), vec!["src/head.rs", "src/tail.rs"]);
}

#[test]
fn hostile_inputs_do_not_blow_up() {
    for text in [
        "a".repeat(1_000_000),
        "/".repeat(100_000),
        "`".repeat(100_001),
        "é/".repeat(50_000),
        "_".repeat(100_000),
        format!("https://{}", "x".repeat(100_000)),
        "\u{0}\u{ffff}\u{10ffff}".repeat(1000),
    ] {
        let _ = extract_atoms(&text, Some(CWD));
        let _ = extract::normalize_commands(&text, Some(CWD));
    }
}

#[test]
fn extraction_is_deterministic() {
    let text = "Edit src/a.rs: TypeError: x at 9fceb02d0ae5 `foo_bar` https://a.org/x #12";
    assert_eq!(extract_atoms(text, Some(CWD)), extract_atoms(text, Some(CWD)));
}
