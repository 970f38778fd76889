//! The agents' own clearings through the command a user runs: after a Claude
//! Code microcompact, a Gemini CLI masking or a Cline notice, the baseline is
//! the usage the agent recorded, and a policy that changes nothing sends the
//! outputs the agent no longer sent.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use assert_cmd::cargo::cargo_bin_cmd;

/// Per call of `fixture` replayed with the default preset:
/// (message index, baseline, policy, recorded).
fn calls(fixture: &str) -> Vec<(u64, u64, u64, u64)> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = cargo_bin_cmd!("compactor")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", fixture, "--preset", "default", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("calls.csv")).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let col = |c: &str| h.iter().position(|x| x == c).unwrap();
    let n = |rec: &csv::StringRecord, c: &str| rec[col(c)].parse::<u64>().unwrap();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            (n(&rec, "message_index"), n(&rec, "tokens_baseline"), n(&rec, "tokens_policy"), n(&rec, "tokens_recorded"))
        })
        .collect()
}

/// The calls before message `at` send what the agent sent; from it on, the
/// policy sends `kept` tokens more: what the clearing took off (chars/4).
fn assert_cleared_from(calls: &[(u64, u64, u64, u64)], at: u64, kept: u64) {
    assert!(calls.iter().any(|c| c.0 >= at) && calls.iter().any(|c| c.0 < at), "{calls:?}");
    for &(m, baseline, policy, recorded) in calls {
        assert_eq!(baseline, recorded, "message {m}: the baseline is the recorded usage");
        let more = if m < at { 0 } else { kept };
        assert_eq!(policy, baseline + more, "message {m}: {calls:?}");
    }
}

#[test]
fn after_a_claude_microcompact_a_policy_that_keeps_the_outputs_pays_them() {
    // The Read and Grep outputs (2,245 + 1,513) less the note sent for each (9).
    assert_cleared_from(&calls("fixtures/claude-code/microcompact.jsonl"), 7, 2_245 + 1_513 - 2 * 9);
}

#[test]
fn after_a_gemini_masking_a_policy_that_keeps_the_outputs_pays_them() {
    // The read_file and shell outputs (3,175 + 1,755) less their previews (181 + 252).
    let calls = calls("fixtures/gemini/session-2026-08-05T11-00-3a7b9c1d.jsonl");
    assert_cleared_from(&calls, 6, 3_175 + 1_755 - 181 - 252);
}

#[test]
fn after_a_cline_notice_a_policy_that_keeps_the_older_read_pays_it() {
    // The first read of src/auth.ts (1,510) less the notice (39).
    assert_cleared_from(&calls("fixtures/cline/1730000400000"), 11, 1_510 - 39);
}
