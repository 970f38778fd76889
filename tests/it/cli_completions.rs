//! `compactor completions SHELL` prints a script each shell loads; bash's,
//! sourced in a real bash, completes subcommands and flags.

#![allow(clippy::unwrap_used)]

use assert_cmd::cargo::cargo_bin_cmd;

#[test]
fn every_shell_gets_a_script_and_bash_completes_with_it() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = cargo_bin_cmd!("compactor").args(["completions", shell]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{shell}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("compactor"), "{shell}");
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("compactor.bash");
    let o = cargo_bin_cmd!("compactor").args(["completions", "bash"]).output().unwrap();
    std::fs::write(&script, o.stdout).unwrap();
    let complete = |words: &str| -> String {
        let n = words.split(' ').count() - 1;
        let probe = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={n}; _compactor compactor \"${{COMP_WORDS[{n}]}}\" \"${{COMP_WORDS[{}]}}\"; echo \"${{COMPREPLY[@]}}\"",
            script.display(),
            n.saturating_sub(1)
        );
        let o = std::process::Command::new("bash").arg("-c").arg(probe).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let subcommands = complete("compactor re");
    assert!(subcommands.split_whitespace().any(|w| w == "replay"), "{subcommands}");
    let flags = complete("compactor replay --pre");
    assert!(flags.split_whitespace().any(|w| w == "--preset"), "{flags}");
}
