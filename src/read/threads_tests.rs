use super::*;
use crate::model::Usage;
use crate::read::copies;
use crate::testing::fixtures_dir;
use proptest::prelude::*;

const THREAD: &str = "019a7e10-5c3d-7a21-9b40-3e5f6a7b8c9d";

/// One turn of a stream: an answer after one command, and the thread's
/// running totals (input, cached, output) at its end.
fn turn(n: usize, total: (u64, u64, u64)) -> String {
    format!(
        concat!(
            "{{\"type\":\"turn.started\"}}\n",
            "{{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{n}a\",\"type\":\"command_execution\",",
            "\"command\":\"bash -lc ls\",\"aggregated_output\":\"file{n}.rs\\n\",\"exit_code\":0,\"status\":\"completed\"}}}}\n",
            "{{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{n}b\",\"type\":\"agent_message\",\"text\":\"step {n} done\"}}}}\n",
            "{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":{i},\"cached_input_tokens\":{c},\"output_tokens\":{o}}}}}\n",
        ),
        n = n,
        i = total.0,
        c = total.1,
        o = total.2
    )
}

fn started() -> String {
    format!("{{\"type\":\"thread.started\",\"thread_id\":\"{THREAD}\"}}\n")
}

/// A stream of `turns` (running totals), each run opening with the thread.
fn stream(turns: &[(u64, u64, u64)], first: usize) -> String {
    let mut s = started();
    for (k, t) in turns.iter().enumerate() {
        s.push_str(&turn(first + k, *t));
    }
    s
}

/// Running totals of `steps` turns, each adding (input, cached ≤ input, output).
fn running(steps: &[(u64, u64, u64)]) -> Vec<(u64, u64, u64)> {
    let mut t = (0, 0, 0);
    steps
        .iter()
        .map(|&(i, c, o)| {
            t = (t.0 + i, t.1 + c.min(i), t.2 + o);
            t
        })
        .collect()
}

fn files(dir: &Path, texts: &[&str]) -> Vec<Input> {
    texts
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let path = dir.join(format!("run-{k}.jsonl"));
            std::fs::write(&path, t).unwrap_or_else(|e| panic!("{e}"));
            Input { path, kind: InputKind::File }
        })
        .collect()
}

fn usages(s: &Session) -> Vec<Usage> {
    s.calls.iter().filter_map(|c| c.usage).collect()
}

#[test]
fn a_stream_names_the_thread_it_opens() {
    assert_eq!(first_thread(started().as_bytes()).as_deref(), Some(THREAD));
    let late = format!("{{\"type\":\"turn.started\"}}\n{}", started());
    assert_eq!(first_thread(late.as_bytes()).as_deref(), Some(THREAD));
    assert_eq!(first_thread(b"{\"type\":\"thread.started\",\"thread_id\":\"\"}\n"), None);
    assert_eq!(first_thread(b"{\"type\":\"turn.started\"}\n"), None);
    assert_eq!(first_thread(b"{\"note\":\"thread.started\"}\n"), None);
}

#[test]
fn the_resumed_runs_of_the_bundled_thread_read_as_one_session() {
    let dir = fixtures_dir().join("codex-exec/resumed");
    let mut inputs: Vec<Input> = ["resumed-run.jsonl", "first-run.jsonl"]
        .iter()
        .map(|f| Input { path: dir.join(f), kind: InputKind::File })
        .collect();
    let families = copies::families(&inputs, None);
    assert_eq!(families.groups(), [vec![0, 1]]);
    assert!(families.joined(0) && families.joined(1));
    let read = read_thread(&inputs, &[0, 1]);
    // The first run, placed first by its totals, holds the session.
    assert!(matches!(&read[0], (0, Ok(v)) if v.is_empty()));
    let (_, Ok(sessions)) = &read[1] else { panic!("the first run is readable") };
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert_eq!(s.id, THREAD);
    assert_eq!(s.source_path, dir.join("first-run.jsonl"));
    // Each running total counted once: the calls sum to the last one.
    let sum = usages(s).iter().map(Usage::prompt_tokens).sum::<u64>();
    assert_eq!(sum, 26_900);
    assert_eq!(usages(s).iter().map(|u| u.output).sum::<u64>(), 1_020);
    // The second run's messages count their lines after the first run's 7.
    let last = s.messages.last().unwrap_or_else(|| panic!("messages"));
    assert_eq!(last.source_line, 7 + 7);
    // Each run numbers its items from `item_0`: the tool ids stay distinct.
    let ids: Vec<&str> = s.messages.iter().flat_map(|m| m.tool_uses()).map(|(id, _, _)| id).collect();
    assert_eq!(ids, ["item_1", "item_1@run2", "item_2@run2"]);
    // Whatever the order of the inputs.
    inputs.reverse();
    let again = read_thread(&inputs, &[0, 1]);
    let (_, Ok(v)) = &again[0] else { panic!("readable") };
    assert_eq!(v[0].messages, s.messages);
    assert_eq!(v[0].calls, s.calls);
}

#[test]
fn streams_that_continue_none_are_read_alone_and_say_so() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let one = stream(&running(&[(5000, 0, 100), (3000, 2000, 50)]), 0);
    // The same stream twice (a copy), and a stream with no total.
    let no_total = format!("{}{{\"type\":\"turn.started\"}}\n", started());
    let inputs = files(tmp.path(), &[&one, &one, &no_total]);
    let read = read_thread(&inputs, &[0, 1, 2]);
    for (k, (i, r)) in read.iter().enumerate() {
        assert_eq!(*i, k);
        let Ok(v) = r else { panic!("readable") };
        assert_eq!(v.len(), 1, "each read on its own");
        let warned = &v[0].diagnostics.messages;
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert_eq!(warned[0].path, inputs[k].path);
    }
    let totals: Vec<u64> = read
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok())
        .map(|v| usages(&v[0]).iter().map(Usage::prompt_tokens).sum())
        .collect();
    assert_eq!(totals, [8000, 8000, 0]);
}

#[test]
fn an_unreadable_stream_fails_alone_and_a_bad_line_names_its_own_file() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let t = running(&[(5000, 0, 100), (3000, 2000, 50)]);
    let second = format!("{}{{broken\n", stream(&t[1..], 1));
    let mut inputs = files(tmp.path(), &[&stream(&t[..1], 0), &second]);
    inputs.push(Input { path: tmp.path().join("gone.jsonl"), kind: InputKind::File });
    let read = read_thread(&inputs, &[0, 1, 2]);
    assert!(matches!(&read[2], (2, Err(d)) if d.path == inputs[2].path));
    let (_, Ok(v)) = &read[0] else { panic!("readable") };
    let bad = &v[0].diagnostics.messages;
    assert_eq!(bad.len(), 1, "{bad:?}");
    // Line 6 of the second file: its thread, four records of a turn, then the bad line.
    assert_eq!((&bad[0].path, bad[0].line), (&inputs[1].path, 6));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A thread saved as several files reads as its runs appended to one file
    /// (`>>`): the same messages, lines and calls, each usage the same share.
    #[test]
    fn a_thread_split_into_runs_reads_as_one_stream(
        steps in prop::collection::vec((1u64..50_000, 0u64..50_000, 1u64..5_000), 1..7),
        cuts in prop::collection::btree_set(1usize..7, 0..4),
        reversed in any::<bool>(),
    ) {
        let totals = running(&steps);
        let mut bounds: Vec<usize> = cuts.into_iter().filter(|&c| c < totals.len()).collect();
        bounds.insert(0, 0);
        bounds.push(totals.len());
        let runs: Vec<String> = bounds.windows(2).map(|w| stream(&totals[w[0]..w[1]], w[0])).collect();
        let whole = runs.concat();
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut texts: Vec<&str> = runs.iter().map(String::as_str).collect();
        if reversed {
            texts.reverse();
        }
        let inputs = files(tmp.path(), &texts);
        let members: Vec<usize> = (0..inputs.len()).collect();
        let read = read_thread(&inputs, &members);
        let sessions: Vec<&Session> =
            read.iter().filter_map(|(_, r)| r.as_ref().ok()).flatten().collect();
        prop_assert_eq!(sessions.len(), 1);
        let one = codex_exec::read(Path::new("whole.jsonl"), whole.as_bytes());
        prop_assert_eq!(one.len(), 1);
        prop_assert_eq!(&sessions[0].calls, &one[0].calls);
        prop_assert_eq!(&sessions[0].messages, &one[0].messages);
        prop_assert!(sessions[0].diagnostics.messages.is_empty());
    }
}

/// A run's stream kept compressed (`.jsonl.zst`) joins its thread as the
/// plain one does: one session, each running total counted once.
#[test]
fn a_compressed_run_joins_its_thread() {
    use ruzstd::encoding::{CompressionLevel, compress_to_vec};
    let dir = fixtures_dir().join("codex-exec/resumed");
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let first = tmp.path().join("first-run.jsonl");
    std::fs::copy(dir.join("first-run.jsonl"), &first).unwrap_or_else(|e| panic!("{e}"));
    let resumed = tmp.path().join("resumed-run.jsonl.zst");
    let plain = std::fs::read(dir.join("resumed-run.jsonl")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&resumed, compress_to_vec(&plain[..], CompressionLevel::Fastest)).unwrap_or_else(|e| panic!("{e}"));
    let inputs: Vec<Input> = [resumed, first].into_iter().map(|path| Input { path, kind: InputKind::File }).collect();
    let families = copies::families(&inputs, None);
    assert_eq!(families.groups(), [vec![0, 1]]);
    assert!(families.joined(0) && families.joined(1));
    let read = read_thread(&inputs, &[0, 1]);
    let (_, Ok(sessions)) = &read[1] else { panic!("the first run is readable") };
    assert!(matches!(&read[0], (0, Ok(v)) if v.is_empty()));
    assert_eq!(sessions.len(), 1);
    assert_eq!(usages(&sessions[0]).iter().map(Usage::prompt_tokens).sum::<u64>(), 26_900);
}
