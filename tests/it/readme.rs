//! Every command README.md shows runs, as written, in a shell: the `sh`
//! blocks line by line (a fake `$HOME` holds sessions where Claude Code keeps
//! them, so a command with no path finds some), the GitHub Actions workflow's
//! `compactor` steps with `$GITHUB_STEP_SUMMARY` set, and the sample output is
//! what its command prints today.

// clippy's allow-unwrap-in-tests covers #[test] functions, not their helpers.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

/// The code blocks of `text` as (language, lines).
fn blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        match (line.strip_prefix("```"), open.take()) {
            (Some(_), Some(block)) => out.push(block),
            (Some(lang), None) => open = Some((lang.trim().to_string(), Vec::new())),
            (None, Some(mut block)) => {
                block.1.push(line.to_string());
                open = Some(block);
            }
            (None, None) => {}
        }
    }
    out
}

/// Run `line` with `sh` in `cwd`, `compactor` on the PATH; its stdout.
fn sh(line: &str, cwd: &Path, home: &Path, bin: &Path, env: &[(&str, &Path)]) -> String {
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(line).current_dir(cwd).env("HOME", home).env("PATH", path);
    for var in ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "XDG_CONFIG_HOME", "GEMINI_CLI_HOME"] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "`{line}` failed ({}):\n{}", o.status, String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn every_readme_command_runs_as_written() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (cwd, home, bin) = (dir.path().join("work"), dir.path().join("home"), dir.path().join("bin"));
    for d in [&cwd, &bin, &home.join(".claude/projects/-home-dev-auth-svc")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_compactor"), bin.join("compactor")).unwrap();
    for d in ["fixtures", "grids"] {
        std::os::unix::fs::symlink(repo.join(d), cwd.join(d)).unwrap();
    }
    std::fs::copy(
        repo.join("fixtures/claude-code/compaction-v1.jsonl"),
        home.join(".claude/projects/-home-dev-auth-svc/5b1c0e4a.jsonl"),
    )
    .unwrap();

    let all = blocks(&readme);
    let mut ran = 0;
    for (lang, lines) in &all {
        for line in lines.iter().map(|l| l.split("  #").next().unwrap_or("").trim()).filter(|l| !l.is_empty()) {
            let line = match lang.as_str() {
                "sh" if line.starts_with("cargo test") || line.starts_with("cargo install") => continue,
                "sh" => line.replace("cargo run --release --", "compactor"),
                "yaml" => match line.strip_prefix("- run: ").filter(|c| c.starts_with("compactor ")) {
                    Some(c) => c.to_string(),
                    None => continue,
                },
                _ => continue,
            };
            let summary = dir.path().join("step-summary.md");
            sh(&line, &cwd, &home, &bin, &[("GITHUB_STEP_SUMMARY", &summary)]);
            if line.contains("GITHUB_STEP_SUMMARY") {
                let table = std::fs::read_to_string(&summary).unwrap();
                assert!(table.contains("compactor check: no regression"), "{table}");
            }
            ran += 1;
        }
    }
    assert!(ran >= 12, "only {ran} README commands found");

    // The sample output is what its command prints.
    let sample = all.iter().find(|(lang, _)| lang == "text").map(|(_, l)| l.join("\n") + "\n").unwrap();
    let command = readme
        .lines()
        .take_while(|l| !l.starts_with("```text"))
        .filter_map(|l| l.strip_prefix('`')?.split('`').next())
        .filter(|c| c.starts_with("compactor "))
        .last()
        .unwrap();
    assert_eq!(sh(command, &cwd, &home, &bin, &[]), sample, "README's sample output of `{command}`");
}
