//! `compactor compare`: the presets it runs when none is named.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use assert_cmd::cargo::cargo_bin_cmd;

/// `compare` without presets runs its six; a window too small for one of
/// them leaves that one out, said so, while a preset the user named is an
/// error.
#[test]
fn compare_leaves_out_a_default_preset_the_window_makes_invalid() {
    let run = |extra: &[&str]| {
        cargo_bin_cmd!("compactor")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["compare", "fixtures/pi", "--no-quality", "--json", "--set", "context_window=6000"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("default preset `spec008` left out: `compact.reserve_tokens`"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = report["policies"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["default", "nous", "vibe", "opal", "dotnet"]);
    let named = run(&["--preset", "spec008"]);
    assert_eq!(named.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&named.stderr).contains("policy `spec008`"));
}
