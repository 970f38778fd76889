//! `compactor explain` end to end: the list of compactions, one in full, a
//! policy's next to the agent's own, JSON, and what it refuses.

// clippy's allow-unwrap-in-tests covers #[test] functions, not their helpers.
#![allow(clippy::unwrap_used)]

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;

/// `compactor explain ARGS...` run from the repository, for its exit code and streams.
fn explain_cmd(args: &[&str]) -> assert_cmd::assert::Assert {
    cargo_bin_cmd!("compactor").current_dir(env!("CARGO_MANIFEST_DIR")).arg("explain").args(args).assert()
}

fn explain(args: &[&str]) -> String {
    String::from_utf8(explain_cmd(args).code(0).get_output().stdout.clone()).unwrap()
}

/// Every recorded shape of the fixtures listed, scored or said why not.
#[test]
fn lists_the_agents_own_compactions() {
    let out = explain(&[
        "fixtures/claude-code/compaction.jsonl",
        "fixtures/claude-code/compaction-v1.jsonl",
        "fixtures/claude-code/continuation.jsonl",
        "fixtures/codex/compacted-encrypted.jsonl",
        "fixtures/pi/v3-tree.jsonl",
    ]);
    insta::assert_snapshot!("explain_list", out);
}

/// One compaction in full: the summary, each needed atom with what the
/// summary kept and where it was used first, lost modified paths and errors first.
#[test]
fn shows_one_compaction_in_full() {
    let out = explain(&["fixtures/claude-code/compaction-v1.jsonl", "--compaction", "0"]);
    insta::assert_snapshot!("explain_detail", out);
    assert!(out.contains("LOST   symbol          1.00  refreshToken"), "{out}");
}

/// A replayed policy's compactions are listed after the agent's own, and
/// `--policy` keeps one of them.
#[test]
fn a_policys_compactions_next_to_the_agents_own() {
    let args = ["fixtures/claude-code/long-tool-loop.jsonl", "--preset", "opal", "--set", "context_window=6000"];
    let all = explain(&args);
    assert!(all.contains(" opal "), "{all}");
    let only: Vec<&str> = [&args[..], &["--policy", "opal"]].concat();
    let out = explain(&only);
    let rows: Vec<&str> = out.lines().skip(1).take_while(|l| !l.is_empty()).collect();
    assert!(!rows.is_empty() && rows.iter().all(|l| l.contains(" opal ")), "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&explain(&[&only[..], &["--compaction", "0", "--json"]].concat())).unwrap();
    assert_eq!(json[0]["policy"], "opal");
    assert!(json[0]["summary"].as_str().is_some_and(|s| !s.is_empty()));
}

#[test]
fn a_compaction_past_the_list_is_an_error_naming_the_count() {
    explain_cmd(&["fixtures/claude-code/compaction-v1.jsonl", "--compaction", "5"])
        .code(2)
        .stderr(predicate::str::contains("no compaction 5: 1 listed"));
}

/// A log with no compaction prints no table, and stderr says what would list
/// some: a --preset, or a smaller window when the presets given compacted none.
#[test]
fn an_empty_list_says_what_would_fill_it() {
    let log = "fixtures/claude-code/long-tool-loop.jsonl";
    for (extra, says) in [
        (&[][..], "the logs record none; add --preset NAME to replay a policy"),
        (&["--preset", "opal"][..], "no --preset compacted at its window; try a smaller window"),
        (&["--preset", "opal", "--policy", "opal"][..], "policy `opal` compacted none of these sessions"),
        (&["--preset", "opal", "--policy", "recorded"][..], "no compaction: the logs record none\n"),
    ] {
        explain_cmd(&[&[log][..], extra].concat()).code(0).stdout("").stderr(predicate::str::contains(says));
    }
    // --json still prints its (empty) list.
    explain_cmd(&[log, "--json"]).code(0).stdout("[]\n");
}

/// `--policy` naming neither `recorded` nor a --preset given is refused
/// with the choices, rather than listing nothing.
#[test]
fn a_policy_filter_that_names_nothing_is_refused_with_the_choices() {
    explain_cmd(&["fixtures/claude-code/compaction-v1.jsonl", "--preset", "opal", "--policy", "nous"]).code(2).stderr(
        predicate::str::contains("--policy `nous` names no compaction list here: the choices are `recorded`, `opal`"),
    );
    explain_cmd(&["fixtures/claude-code/compaction-v1.jsonl", "--policy", "opal"])
        .code(2)
        .stderr(predicate::str::contains("the choices are `recorded`, or the name of a --preset you add"));
}
