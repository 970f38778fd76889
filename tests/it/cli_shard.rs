//! Sharded runs (`--shard K/N`, `--shard-points K/N`) and `compactor merge`,
//! end to end: the corpus split into 1, 2, 3 and 7 shards and merged in a
//! shuffled order writes and prints what one run does, byte for byte, for
//! replay, compare, check and sweep; and every kind of partial that does not
//! belong is refused (exit 2) with its reason.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use assert_cmd::cargo::cargo_bin_cmd;
use std::path::{Path, PathBuf};
use std::process::Output;

use super::cli_replay::tree;

fn run(args: &[&str]) -> Output {
    cargo_bin_cmd!("compactor").current_dir(env!("CARGO_MANIFEST_DIR")).args(args).output().unwrap()
}

fn assert_same_tree(expected: &Path, got: &Path, what: &str) {
    let (e, g) = (tree(expected), tree(got));
    let names = |t: &[(PathBuf, Vec<u8>)]| t.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&g), names(&e), "{what}: file names");
    for (x, y) in g.iter().zip(&e) {
        assert!(x.1 == y.1, "{what}: {} differs", x.0.display());
    }
}

/// Stdout with the output folder's path replaced, so runs writing to other
/// folders compare.
fn shown(out: &Output, dir: &Path) -> String {
    String::from_utf8_lossy(&out.stdout).replace(dir.to_str().unwrap(), "OUT")
}

/// A fixed shuffle of 0..n (never the identity for n > 1).
fn shuffled(n: usize) -> Vec<usize> {
    (0..n).map(|i| (i * 5 + 3) % n).collect()
}

/// Run `command` whole into `single`, then split into `n` shards and merge
/// them in a shuffled order: the files, stdout and exit code must be the same.
fn split_and_merge(tmp: &Path, name: &str, args: &[&str], splits: &[(&str, u32)], single: (&Path, &Output)) {
    for &(flag, n) in splits {
        let parts: Vec<PathBuf> = (1..=n).map(|k| tmp.join(format!("{name}-{n}-part{k}"))).collect();
        for (k, part) in parts.iter().enumerate() {
            let shard = format!("{}/{n}", k + 1);
            let mut a = args.to_vec();
            a.extend([flag, &shard, "--out", part.to_str().unwrap()]);
            let out = run(&a);
            assert_eq!(out.status.code(), Some(0), "{name} {flag} {shard}: {}", String::from_utf8_lossy(&out.stderr));
            assert!(part.join("partial.json").is_file(), "{name} {flag} {shard}: no partial.json");
        }
        let merged = tmp.join(format!("{name}-{n}-merged"));
        let mut a = vec!["merge", "--quiet", "--out", merged.to_str().unwrap()];
        let order: Vec<&str> = shuffled(parts.len()).into_iter().map(|i| parts[i].to_str().unwrap()).collect();
        a.extend(order);
        let out = run(&a);
        let what = format!("{name} in {n} ({flag})");
        assert_eq!(out.status.code(), single.1.status.code(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
        assert_same_tree(single.0, &merged, &what);
        assert_eq!(shown(&out, &merged), shown(single.1, single.0), "{what}: stdout");
    }
}

fn whole(tmp: &Path, name: &str, args: &[&str]) -> (PathBuf, Output) {
    let dir = tmp.join(format!("{name}-single"));
    let mut a = args.to_vec();
    a.extend(["--out", dir.to_str().unwrap()]);
    let out = run(&a);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    (dir, out)
}

const SPLITS: &[(&str, u32)] = &[("--shard", 1), ("--shard", 2), ("--shard", 3), ("--shard", 7)];

#[test]
fn replay_and_compare_in_shards_merge_to_one_run() {
    let Some(corpus) = compactor::testing::corpus_dir() else { return };
    let corpus = corpus.to_str().unwrap().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let replay = [
        "replay",
        &corpus,
        "--quiet",
        "--preset",
        "default",
        "--preset",
        "opal",
        "--preset",
        "nous",
        "--set",
        "context_window=32000",
    ];
    let (dir, out) = whole(tmp.path(), "replay", &replay);
    split_and_merge(tmp.path(), "replay", &replay, SPLITS, (&dir, &out));
    // compare prints its table; sessions of every format, transcripts and
    // the costs under another meter and TTL.
    let compare = ["compare", &corpus, "--quiet", "--preset", "vibe", "--preset", "spec008", "--meter", "chars4"];
    let compare: Vec<&str> = compare.iter().copied().chain(["--cache-ttl", "1h"]).collect();
    let (dir, out) = whole(tmp.path(), "compare", &compare);
    split_and_merge(tmp.path(), "compare", &compare, &[("--shard", 3)], (&dir, &out));
}

/// The fixtures hold every layout of sub-agents (a folder per parent, agent
/// files beside it, a `/btw` aside), inline sidechains and bad lines.
#[test]
fn sub_agents_stay_with_their_parents() {
    let tmp = tempfile::tempdir().unwrap();
    let replay =
        ["replay", "fixtures", "--quiet", "--set", "context_window=6000", "--set", "compact.reserve_tokens=1000"];
    let (dir, out) = whole(tmp.path(), "fixtures", &replay);
    split_and_merge(tmp.path(), "fixtures", &replay, &[("--shard", 2), ("--shard", 7)], (&dir, &out));
    // Redacted: the partials hold no planted secret either, and merge the same.
    let input = tmp.path().join("in");
    copy_dir(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/pi")), &input);
    std::fs::write(input.join("secrets.jsonl"), super::cli_safety::secrets_session()).unwrap();
    let redacted = ["replay", input.to_str().unwrap(), "--quiet", "--redact", "--set", "context_window=6000"];
    let (dir, out) = whole(tmp.path(), "redacted", &redacted);
    split_and_merge(tmp.path(), "redacted", &redacted, &[("--shard", 3)], (&dir, &out));
    for k in 1..=3 {
        let json = std::fs::read_to_string(tmp.path().join(format!("redacted-3-part{k}/partial.json"))).unwrap();
        for secret in super::cli_safety::planted() {
            assert!(!json.contains(&secret), "partial {k} holds {secret}");
        }
    }
}

/// Claude Code sub-agent files, in a folder per parent or beside it, are in
/// their parent's shard; split where the files alone would part, the merge is
/// still the whole run (the sub-agents drop what they replay of the parent).
#[test]
fn sub_agent_files_follow_their_parent_into_its_shard() {
    let dir = PathBuf::from("fixtures/claude-code");
    let (inputs, _) = compactor::read::discover(std::slice::from_ref(&dir));
    let name = |i: &compactor::read::Input| i.path.to_string_lossy().into_owned();
    let parent = inputs.iter().position(|i| name(i).ends_with("project/9f5c6a8e-4b7c-4a95-9ecd-7d6fba0b1245.jsonl"));
    let parent = parent.expect("the fixture's parent session");
    let agents: Vec<usize> = (0..inputs.len()).filter(|&i| name(&inputs[i]).contains("/agent-")).collect();
    assert_eq!(agents.len(), 3, "both layouts of sub-agent files");
    let mut parting = None;
    for &a in &agents {
        let n = kept_together(&inputs, a, parent);
        // The `/btw` aside replays its parent's responses: apart from it, it
        // would keep them.
        if name(&inputs[a]).contains("agent-aside_") {
            parting = n;
        }
    }
    let n = parting.expect("some split would part the aside from its parent by its own path");
    fixtures_merge_to_one_run_at("fixtures/claude-code", n);
}

/// Assert that every split into 2 to 9 shards puts inputs `a` and `b` in one
/// shard; the first count whose split by their own paths would part them.
fn kept_together(inputs: &[compactor::read::Input], a: usize, b: usize) -> Option<u32> {
    use compactor::pipeline::Shard;
    let families = compactor::read::copies::families(inputs, None);
    let name = |i: usize| inputs[i].path.to_string_lossy().into_owned();
    let mut parting = None;
    for n in 2..=9 {
        for k in 1..=n {
            let shard = Shard { index: k, count: n };
            let sel = shard.select(inputs, &families).unwrap();
            assert_eq!(sel[a], sel[b], "{} and {} in shard {shard}", name(a), name(b));
            if shard.holds(name(a).as_bytes()) != shard.holds(name(b).as_bytes()) {
                parting.get_or_insert(n);
            }
        }
    }
    parting
}

/// The fixtures of `dir` split into `n` shards merge to the whole run.
fn fixtures_merge_to_one_run_at(dir: &str, n: u32) {
    let tmp = tempfile::tempdir().unwrap();
    let replay = ["replay", dir, "--quiet", "--set", "context_window=6000"];
    let (out_dir, out) = whole(tmp.path(), "fixtures", &replay);
    split_and_merge(tmp.path(), "fixtures", &replay, &[("--shard", n)], (&out_dir, &out));
}

/// A `--fork-session` copy and its parent share responses: every shard split
/// keeps them together, so the copy is found as in the whole run, also where
/// their paths alone would part them.
#[test]
fn a_copy_and_its_parent_share_a_shard() {
    let dir = PathBuf::from("fixtures/claude-code");
    let (inputs, _) = compactor::read::discover(std::slice::from_ref(&dir));
    let families = compactor::read::copies::families(&inputs, None);
    let name = |i: usize| inputs[i].path.to_string_lossy().into_owned();
    let pair: Vec<usize> = (0..inputs.len()).filter(|&i| name(i).contains("/forked/")).collect();
    assert_eq!(pair.len(), 2);
    assert!(families.of(pair[0]).is_some() && families.of(pair[0]) == families.of(pair[1]));
    let n = kept_together(&inputs, pair[0], pair[1]).expect("some split would part the pair by their own paths");
    fixtures_merge_to_one_run_at("fixtures/claude-code", n);
}

/// The runs of one `codex exec` thread are read as one: every shard split
/// keeps them together.
#[test]
fn the_runs_of_a_codex_exec_thread_share_a_shard() {
    let dir = PathBuf::from("fixtures/codex-exec");
    let (inputs, _) = compactor::read::discover(std::slice::from_ref(&dir));
    let name = |i: usize| inputs[i].path.to_string_lossy().into_owned();
    let pair: Vec<usize> = (0..inputs.len()).filter(|&i| name(i).contains("/resumed/")).collect();
    assert_eq!(pair.len(), 2);
    let n = kept_together(&inputs, pair[0], pair[1]).expect("some split would part the runs by their own paths");
    fixtures_merge_to_one_run_at("fixtures/codex-exec", n);
}

#[test]
fn check_in_shards_merges_to_one_check() {
    let Some(corpus) = compactor::testing::corpus_dir() else { return };
    let corpus = corpus.to_str().unwrap().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let check = ["check", &corpus, "--quiet", "--baseline", "baselines/corpus.json"];
    let (dir, out) = whole(tmp.path(), "check", &check);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    split_and_merge(tmp.path(), "check", &check, SPLITS, (&dir, &out));
}

/// A check that fails fails the same way merged: exit 1, the same table.
#[test]
fn a_regression_found_in_shards_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base.json");
    // opal compacts often at a 6K window: several points of savings to lose.
    let set = ["--preset", "opal", "--set", "context_window=6000"];
    let mut a = vec!["check", "fixtures", "--quiet", "--write-baseline", base.to_str().unwrap()];
    a.extend(set);
    assert_eq!(run(&a).status.code(), Some(0));
    // Compacting at a 200K window saves less: a savings drop.
    let mut check = vec!["check", "fixtures", "--quiet", "--baseline", base.to_str().unwrap(), "--allow-param-changes"];
    check.extend(set);
    check.extend(["--set", "context_window=200000"]);
    let (dir, out) = whole(tmp.path(), "regressed", &check);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    split_and_merge(tmp.path(), "regressed", &check, &[("--shard", 3)], (&dir, &out));
}

#[test]
fn sweep_in_shards_and_by_point_merges_to_one_sweep() {
    let Some(corpus) = compactor::testing::corpus_dir() else { return };
    let corpus = corpus.to_str().unwrap().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let grid = tmp.path().join("grid.toml");
    std::fs::write(
        &grid,
        "[base]\ncontext_window = 32000\n[grid]\n\"compact.trigger_ratio\" = [0.6, 0.8]\n\
         \"compact.keep_recent_ratio\" = [0.1, 0.3]\n\"prune.enabled\" = [true, false]\n",
    )
    .unwrap();
    let sweep = ["sweep", &corpus, "--quiet", "--grid", grid.to_str().unwrap()];
    let (dir, out) = whole(tmp.path(), "sweep", &sweep);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    split_and_merge(tmp.path(), "sweep", &sweep, SPLITS, (&dir, &out));
    split_and_merge(tmp.path(), "sweep-points", &sweep, &[("--shard-points", 3)], (&dir, &out));
    // Both ways at once: 2 session shards × 3 point shards, in any order.
    let mut parts = Vec::new();
    for k in 1..=2 {
        for j in 1..=3 {
            let part = tmp.path().join(format!("cross-{k}-{j}"));
            let (s, p) = (format!("{k}/2"), format!("{j}/3"));
            let mut a = sweep.to_vec();
            a.extend(["--shard", &s, "--shard-points", &p, "--out", part.to_str().unwrap()]);
            assert_eq!(run(&a).status.code(), Some(0));
            parts.push(part);
        }
    }
    parts.reverse();
    let merged = tmp.path().join("cross-merged");
    let mut a = vec!["merge", "--quiet", "--out", merged.to_str().unwrap()];
    a.extend(parts.iter().map(|p| p.to_str().unwrap()));
    let got = run(&a);
    assert_eq!(got.status.code(), Some(0), "{}", String::from_utf8_lossy(&got.stderr));
    assert_same_tree(&dir, &merged, "sweep 2 × 3");
    assert_eq!(shown(&got, &merged), shown(&out, &dir));
}

/// Partials of one run, made on the fixtures.
fn parts(tmp: &Path, name: &str, n: u32, extra: &[&str]) -> Vec<PathBuf> {
    (1..=n)
        .map(|k| {
            let part = tmp.join(format!("{name}{k}"));
            let shard = format!("{k}/{n}");
            let mut a = vec!["replay", "fixtures", "--quiet", "--shard", &shard, "--out", part.to_str().unwrap()];
            a.extend(extra);
            let out = run(&a);
            assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
            part
        })
        .collect()
}

fn refused(parts: &[&Path]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let mut a = vec!["merge".to_string(), "--out".into(), out_dir.to_str().unwrap().into()];
    a.extend(parts.iter().map(|p| p.to_str().unwrap().to_string()));
    let out = cargo_bin_cmd!("compactor").current_dir(env!("CARGO_MANIFEST_DIR")).args(&a).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(!out_dir.exists(), "a refused merge wrote its output");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn partials_that_do_not_belong_together_are_refused_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let a = parts(t, "a", 3, &[]);
    // A shard missing.
    let err = refused(&[&a[0], &a[2]]);
    assert!(err.contains("missing 1 of 3 shard(s): shard 2/3"), "{err}");
    // A shard twice (overlap), from another folder.
    let copy = t.join("copy");
    let out = run(&["replay", "fixtures", "--quiet", "--shard", "2/3", "--out", copy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let err = refused(&[&a[0], &a[1], &copy, &a[2]]);
    assert!(err.contains("are the same shard (shard 2/3)"), "{err}");
    // Split another way.
    let b = parts(t, "b", 2, &[]);
    let err = refused(&[&a[0], &a[1], &b[1]]);
    assert!(err.contains("other numbers of shards"), "{err}");
    // Other policy parameters.
    let c = parts(t, "c", 3, &["--set", "context_window=8000"]);
    let err = refused(&[&a[0], &a[1], &c[2]]);
    assert!(err.contains("other policies: policy `default`: `context_window` is auto vs 8000"), "{err}");
    // Other settings: the meter, quality pass.
    let d = parts(t, "d", 3, &["--meter", "chars4"]);
    let err = refused(&[&a[0], &d[1], &a[2]]);
    assert!(err.contains("other settings: `meter`: recorded vs chars4"), "{err}");
    let e = parts(t, "e", 3, &["--no-quality"]);
    assert!(refused(&[&e[0], &a[1], &a[2]]).contains("`no_quality`: true vs false"));
    // Other paths.
    let f: Vec<PathBuf> = (1..=3)
        .map(|k| {
            let part = t.join(format!("f{k}"));
            let shard = format!("{k}/3");
            let args = ["replay", "fixtures/pi", "--quiet", "--shard", &shard, "--out", part.to_str().unwrap()];
            assert_eq!(run(&args).status.code(), Some(0));
            part
        })
        .collect();
    assert!(refused(&[&a[0], &f[1], &a[2]]).contains("were given other paths"));
    // Another command.
    let compare = t.join("compare");
    let args = ["compare", "fixtures", "--quiet", "--preset", "default", "--shard", "2/3"];
    assert_eq!(run(&[&args[..], &["--out", compare.to_str().unwrap()]].concat()).status.code(), Some(0));
    assert!(refused(&[&a[0], &compare, &a[2]]).contains("other commands: replay vs compare"));
    // Another compactor version.
    let old = t.join("old");
    copy_dir(&a[1], &old);
    let json = std::fs::read_to_string(old.join("partial.json")).unwrap();
    let version = format!("\"version\":\"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(json.contains(&version));
    std::fs::write(old.join("partial.json"), json.replacen(&version, "\"version\":\"0.0.1\"", 1)).unwrap();
    assert!(refused(&[&a[0], &old, &a[2]]).contains("other compactor versions: "));
    // Not a partial.
    let err = refused(&[&a[0], Path::new("fixtures"), &a[2]]);
    assert!(err.contains("fixtures: no partial.json: not a partial output"), "{err}");
}

/// A partial is input: a path in it that leaves its folder is refused,
/// nothing is written.
#[test]
fn a_partial_naming_files_outside_it_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let a = parts(tmp.path(), "a", 1, &[]);
    let json = std::fs::read_to_string(a[0].join("partial.json")).unwrap();
    let evil = json.replacen("\"transcripts/", "\"../../transcripts/", 1);
    assert_ne!(json, evil);
    std::fs::write(a[0].join("partial.json"), evil).unwrap();
    let err = refused(&[&a[0]]);
    assert!(err.contains("not a file of the partial"), "{err}");
}

#[test]
fn a_shard_needs_somewhere_to_write_and_a_file_to_split() {
    let out = run(&["replay", "fixtures", "--shard", "1/2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--shard 1/2 needs --out DIR"));
    let out = run(&["replay", "fixtures", "--shard", "3/2", "--out", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("with 1 ≤ K ≤ N"));
    let tmp = tempfile::tempdir().unwrap();
    let out = cargo_bin_cmd!("compactor")
        .args(["replay", "-", "--shard", "1/2", "--out"])
        .arg(tmp.path().join("o"))
        .write_stdin("{}\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("standard input cannot be split"));
}

/// More shards than files: the empty ones write their partial too, and the
/// merge is the whole run.
#[test]
fn empty_shards_write_partials_and_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let replay = ["replay", "fixtures/pi", "--quiet"];
    let (dir, out) = whole(tmp.path(), "pi", &replay);
    let parts = parts_of(tmp.path(), &replay, 7);
    let empty =
        parts.iter().filter(|(_, o)| String::from_utf8_lossy(&o.stdout).contains(": 0 session(s) from 0 input(s)"));
    assert!(empty.count() > 0, "no shard of 7 is empty over fixtures/pi");
    split_and_merge(tmp.path(), "pi", &replay, &[("--shard", 7)], (&dir, &out));
}

fn parts_of(tmp: &Path, args: &[&str], n: u32) -> Vec<(PathBuf, Output)> {
    (1..=n)
        .map(|k| {
            let part = tmp.join(format!("of{k}"));
            let shard = format!("{k}/{n}");
            let mut a = args.to_vec();
            a.extend(["--shard", &shard, "--out", part.to_str().unwrap()]);
            let out = run(&a);
            assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
            (part, out)
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from).into_iter().filter_map(Result::ok) {
        let rel = e.path().strip_prefix(from).unwrap();
        if e.file_type().is_dir() {
            std::fs::create_dir_all(to.join(rel)).unwrap();
        } else {
            std::fs::copy(e.path(), to.join(rel)).unwrap();
        }
    }
}
