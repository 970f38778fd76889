//! Text that looks like what coding agents read and write: prose, source code in a
//! few languages, build and test logs, unified diffs, grep hits, file listings.
//!
//! Nothing here has to be meaningful, only shaped right for the things the
//! benchmarks measure: JSON escaping (quotes, backslashes, newlines, non-ASCII),
//! BPE tokenization (identifiers, punctuation, indentation, numbers) and the byte
//! sizes of each kind of content. Generators append to a `String` and stop at the
//! first line that reaches the requested size, so sizes are close to what was asked.

use super::Rng;
use std::fmt::Write;

const WORDS: &[&str] = &[
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "this",
    "with",
    "on",
    "as",
    "be",
    "we",
    "now",
    "file",
    "function",
    "test",
    "tests",
    "error",
    "value",
    "change",
    "update",
    "call",
    "return",
    "check",
    "first",
    "next",
    "then",
    "because",
    "when",
    "only",
    "still",
    "should",
    "would",
    "could",
    "need",
    "needs",
    "look",
    "see",
    "run",
    "build",
    "fix",
    "add",
    "remove",
    "move",
    "rename",
    "keep",
    "make",
    "use",
    "used",
    "using",
    "case",
    "path",
    "type",
    "types",
    "field",
    "struct",
    "module",
    "import",
    "export",
    "parser",
    "reader",
    "session",
    "token",
    "tokens",
    "message",
    "messages",
    "context",
    "window",
    "summary",
    "result",
    "results",
    "tool",
    "output",
    "input",
    "line",
    "lines",
    "config",
    "option",
    "flag",
    "command",
    "code",
    "logic",
    "bug",
    "issue",
    "behaviour",
    "missing",
    "wrong",
    "empty",
    "new",
    "old",
    "same",
    "different",
    "here",
    "there",
    "both",
    "each",
    "every",
    "all",
    "some",
    "instead",
    "also",
    "already",
    "again",
    "before",
    "after",
    "so",
    "but",
    "not",
    "no",
    "yes",
    "can",
    "will",
    "let's",
];

const IDENTS: &[&str] = &[
    "config", "session", "parser", "buffer", "result", "handler", "request", "response", "token", "message", "context",
    "index", "value", "item", "state", "error", "path", "reader", "writer", "cache", "store", "policy", "window",
    "usage", "record", "event", "stream", "client", "server", "builder", "options", "entry", "node", "tree", "list",
    "count", "total", "limit", "offset", "line", "block", "span", "chunk", "frame", "header", "body", "payload",
    "summary", "estimate", "budget", "prompt", "turn", "call", "tool", "output", "input", "user", "agent", "model",
    "schema", "route", "query", "field", "key", "data", "file", "dir", "meta", "stats", "report", "trace",
];

const TYPES: &[&str] = &[
    "String",
    "Vec<u8>",
    "Option<usize>",
    "Result<(), Error>",
    "HashMap<String, Value>",
    "&str",
    "u64",
    "bool",
    "Arc<Mutex<State>>",
    "Vec<Message>",
    "Promise<void>",
    "number",
    "string[]",
    "Record<string, unknown>",
    "Session | null",
];

const DIRS: &[&str] = &[
    "src",
    "src/read",
    "src/cli",
    "src/output",
    "tests",
    "lib",
    "app/components",
    "app/routes",
    "packages/core/src",
    "packages/ui/src/hooks",
    "scripts",
    "server/api",
    "crates/engine/src",
];

const EXTS: &[&str] = &[".rs", ".ts", ".tsx", ".py", ".go", ".rs", ".ts", ".md", ".json", ".toml"];

/// One word of a word list (`Rng::pick` on `&[&str]` confuses deref coercion at
/// `push_str` call sites).
fn pick(rng: &mut Rng, xs: &[&'static str]) -> &'static str {
    xs[rng.below(xs.len() as u64) as usize]
}

const LEVELS: &[&str] = &["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"];

/// Append about `bytes` of prose: sentences with the occasional `identifier` or path.
pub fn prose(rng: &mut Rng, out: &mut String, bytes: usize) {
    let start = out.len();
    while out.len() - start < bytes {
        let len = rng.range(6, 18);
        for i in 0..len {
            if i > 0 {
                out.push(' ');
            }
            match rng.below(14) {
                0 => {
                    out.push('`');
                    ident(rng, out);
                    out.push('`');
                }
                1 => path(rng, out),
                _ => {
                    let w = pick(rng, WORDS);
                    if i == 0 {
                        capitalize(out, w);
                    } else {
                        out.push_str(w);
                    }
                }
            }
        }
        out.push_str(match rng.below(10) {
            0 => ":\n",
            1 => ".\n\n",
            2 => "?",
            _ => ". ",
        });
    }
}

/// Markdown-ish assistant answer: paragraphs, a bullet list, sometimes a code fence.
pub fn answer(rng: &mut Rng, out: &mut String, bytes: usize) {
    let start = out.len();
    while out.len() - start < bytes {
        match rng.below(5) {
            0 => {
                for _ in 0..rng.range(2, 5) {
                    out.push_str("- ");
                    {
                        let n = rng.range(30, 120) as usize;
                        prose(rng, out, n);
                    }
                    out.push('\n');
                }
            }
            1 => {
                out.push_str("```\n");
                {
                    let n = rng.range(120, 600) as usize;
                    code(rng, out, n, 0);
                }
                out.push_str("```\n");
            }
            _ => {
                {
                    let n = rng.range(80, 400) as usize;
                    prose(rng, out, n);
                }
                out.push_str("\n\n");
            }
        }
    }
}

fn capitalize(out: &mut String, w: &str) {
    let mut cs = w.chars();
    if let Some(c) = cs.next() {
        out.extend(c.to_uppercase());
        out.push_str(cs.as_str());
    }
}

/// `snake_case` identifier of one or two words.
pub fn ident(rng: &mut Rng, out: &mut String) {
    out.push_str(pick(rng, IDENTS));
    if rng.chance(0.5) {
        out.push('_');
        out.push_str(pick(rng, IDENTS));
    }
}

fn camel(rng: &mut Rng, out: &mut String) {
    capitalize(out, pick(rng, IDENTS));
    capitalize(out, pick(rng, IDENTS));
}

/// A relative source path such as `src/read/session_reader.rs`.
pub fn path(rng: &mut Rng, out: &mut String) {
    out.push_str(pick(rng, DIRS));
    out.push('/');
    ident(rng, out);
    out.push_str(pick(rng, EXTS));
}

/// One source line at the given indentation (in units of 4 spaces).
fn code_line(rng: &mut Rng, out: &mut String, indent: usize) {
    for _ in 0..indent {
        out.push_str("    ");
    }
    let id = |rng: &mut Rng| pick(rng, IDENTS);
    let n = rng.below(4096);
    // The templates mix Rust, TypeScript and Python lines; the tokenizer and the
    // JSON escaper only care about the characters.
    let _ = match rng.below(16) {
        0 => write!(
            out,
            "pub fn {}_{}(&self, {}: {}) -> {} {{",
            id(rng),
            id(rng),
            id(rng),
            pick(rng, TYPES),
            pick(rng, TYPES)
        ),
        1 => write!(out, "let {} = self.{}.{}({}, {n})?;", id(rng), id(rng), id(rng), id(rng)),
        2 => write!(out, "if {}.{}() > {n} {{", id(rng), id(rng)),
        3 => write!(
            out,
            "return Err(Error::Invalid(format!(\"{} {{}} not found in {{:?}}\", {}, {})));",
            id(rng),
            id(rng),
            id(rng)
        ),
        4 => write!(out, "// {} the {} before the {} is {}.", id(rng), id(rng), id(rng), id(rng)),
        5 => write!(out, "import {{ {}, {} }} from \"@/{}/{}\";", id(rng), id(rng), id(rng), id(rng)),
        6 => write!(
            out,
            "export const {} = async ({}: {}) => await {}.{}({});",
            id(rng),
            id(rng),
            pick(rng, TYPES),
            id(rng),
            id(rng),
            id(rng)
        ),
        7 => write!(out, "{}: {n},", id(rng)),
        8 => write!(out, "def {}_{}(self, {}, {}=None):", id(rng), id(rng), id(rng), id(rng)),
        9 => write!(out, "self.{}[\"{}\"] = {}.get(\"{}\", {n})", id(rng), id(rng), id(rng), id(rng)),
        10 => write!(out, "for (const {} of {}.{}) {{ total += {}.length; }}", id(rng), id(rng), id(rng), id(rng)),
        11 => write!(out, "assert_eq!({}.{}(), {n}, \"{} mismatch\");", id(rng), id(rng), id(rng)),
        12 => {
            write!(out, "match {} {{ Some(x) => x.{}(), None => {}::default() }}", id(rng), id(rng), pick(rng, TYPES))
        }
        13 => write!(out, "}}"),
        14 => Ok(()),
        _ => write!(out, "const {} = {}.{}(\"{}\\n\").split('\\t');", id(rng), id(rng), id(rng), id(rng)),
    };
    out.push('\n');
}

/// Source code, roughly `bytes` long.
pub fn code(rng: &mut Rng, out: &mut String, bytes: usize, base_indent: usize) {
    let start = out.len();
    let mut indent = 0usize;
    while out.len() - start < bytes {
        indent = match rng.below(4) {
            0 => indent.saturating_sub(1),
            1 if indent < 4 => indent + 1,
            _ => indent,
        };
        code_line(rng, out, base_indent + indent);
    }
}

/// `cat -n` style listing as Claude Code's Read tool returns it:
/// right-aligned line number, an arrow, the line.
pub fn numbered(text: &str, first: usize, out: &mut String) {
    for (i, line) in text.lines().enumerate() {
        let _ = writeln!(out, "{:>6}\u{2192}{line}", first + i);
    }
}

/// Build/test/server log output.
pub fn log(rng: &mut Rng, out: &mut String, bytes: usize) {
    let start = out.len();
    let mut t = rng.range(1_700_000_000, 1_800_000_000);
    while out.len() - start < bytes {
        t += rng.below(3);
        let _ = match rng.below(8) {
            0 | 1 => {
                write!(out, "test {}::tests::{}_{} ... ok", pick(rng, IDENTS), pick(rng, IDENTS), pick(rng, IDENTS))
            }
            2 => write!(
                out,
                "   Compiling {}-{} v0.{}.{}",
                pick(rng, IDENTS),
                pick(rng, IDENTS),
                rng.below(20),
                rng.below(9)
            ),
            3 => write!(
                out,
                " \u{2713} {} ({} tests) {}ms",
                {
                    let mut p = String::new();
                    path(rng, &mut p);
                    p
                },
                rng.range(1, 40),
                rng.range(2, 900)
            ),
            4 => write!(
                out,
                "warning: unused variable: `{}`\n  --> src/{}.rs:{}:{}",
                pick(rng, IDENTS),
                pick(rng, IDENTS),
                rng.range(1, 900),
                rng.range(1, 80)
            ),
            _ => write!(
                out,
                "[{t}] {} {}::{}: {} {}={} elapsed={}ms",
                pick(rng, LEVELS),
                pick(rng, IDENTS),
                pick(rng, IDENTS),
                pick(rng, WORDS),
                pick(rng, IDENTS),
                rng.below(100_000),
                rng.below(5000)
            ),
        };
        out.push('\n');
    }
}

/// A unified diff of one or more hunks.
pub fn diff(rng: &mut Rng, out: &mut String, bytes: usize) {
    let start = out.len();
    while out.len() - start < bytes {
        let mut p = String::new();
        path(rng, &mut p);
        let _ = writeln!(
            out,
            "diff --git a/{p} b/{p}\nindex {:07x}..{:07x} 100644\n--- a/{p}\n+++ b/{p}",
            rng.below(1 << 28),
            rng.below(1 << 28)
        );
        for _ in 0..rng.range(1, 4) {
            let at = rng.range(1, 800);
            let _ =
                writeln!(out, "@@ -{at},{} +{at},{} @@ fn {}()", rng.range(3, 12), rng.range(3, 12), pick(rng, IDENTS));
            for _ in 0..rng.range(4, 16) {
                out.push(match rng.below(5) {
                    0 => '-',
                    1 => '+',
                    _ => ' ',
                });
                {
                    let n = rng.below(3) as usize;
                    code_line(rng, out, n);
                }
            }
            if out.len() - start >= bytes {
                break;
            }
        }
    }
}

/// `path:line:match` hits, as Grep in content mode prints them.
pub fn grep_hits(rng: &mut Rng, out: &mut String, bytes: usize) {
    let start = out.len();
    while out.len() - start < bytes {
        path(rng, out);
        let _ = write!(out, ":{}:", rng.range(1, 2000));
        {
            let n = rng.below(3) as usize;
            code_line(rng, out, n);
        }
    }
}

/// One absolute path per line (Glob, Grep in files mode, `find`).
pub fn file_list(rng: &mut Rng, out: &mut String, root: &str, bytes: usize) {
    let start = out.len();
    while out.len() - start < bytes {
        out.push_str(root);
        out.push('/');
        path(rng, out);
        out.push('\n');
    }
}

/// `git status` / `ls -la` style command output.
pub fn shell_listing(rng: &mut Rng, out: &mut String, bytes: usize) {
    let start = out.len();
    if rng.chance(0.5) {
        out.push_str("On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n");
        while out.len() - start < bytes {
            out.push_str("\tmodified:   ");
            path(rng, out);
            out.push('\n');
        }
    } else {
        let _ = writeln!(out, "total {}", rng.range(8, 400));
        while out.len() - start < bytes {
            let _ = write!(
                out,
                "-rw-r--r--  1 dev  staff  {:>6} Oct {:>2} {:02}:{:02} ",
                rng.below(90_000),
                rng.range(1, 31),
                rng.below(24),
                rng.below(60)
            );
            ident(rng, out);
            out.push_str(pick(rng, EXTS));
            out.push('\n');
        }
    }
}

/// A shell command line an agent would run.
pub fn command(rng: &mut Rng, out: &mut String) {
    let _ = match rng.below(10) {
        0 => write!(out, "cargo test {} -- --nocapture", pick(rng, IDENTS)),
        1 => write!(out, "cargo build --release 2>&1 | tail -40"),
        2 => write!(out, "npm run test -- {}", pick(rng, IDENTS)),
        3 => write!(out, "git status && git diff --stat"),
        4 => write!(out, "git diff HEAD~1 -- src/{}", pick(rng, IDENTS)),
        5 => write!(out, "ls -la src/{}", pick(rng, IDENTS)),
        6 => write!(out, "rg -n \"{}\" src/ | head -50", pick(rng, IDENTS)),
        7 => write!(out, "pnpm lint --fix && pnpm typecheck"),
        8 => write!(out, "pytest -q tests/test_{}.py -x", pick(rng, IDENTS)),
        _ => write!(out, "go test ./... -run Test{}", {
            let mut c = String::new();
            camel(rng, &mut c);
            c
        }),
    };
}

/// A regex an agent would grep for.
pub fn pattern(rng: &mut Rng, out: &mut String) {
    let _ = match rng.below(4) {
        0 => write!(out, "fn {}", pick(rng, IDENTS)),
        1 => write!(out, "{}\\.{}\\(", pick(rng, IDENTS), pick(rng, IDENTS)),
        2 => write!(out, "struct {}", {
            let mut c = String::new();
            camel(rng, &mut c);
            c
        }),
        _ => write!(out, "TODO|FIXME"),
    };
}
