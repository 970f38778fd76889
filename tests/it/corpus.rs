//! Golden test over the real public corpus (`../shared/corpus`): every file reads
//! with no fatal error, and per file the tool-call and usage-record counts equal
//! the numbers in MANIFEST.md. Fails loudly in CI when the corpus is missing,
//! skips with a printed reason elsewhere.

#![allow(clippy::expect_used, clippy::unwrap_used)] // test code: a panic is the failure report

use compactor::read::{discover, read_all};
use std::collections::BTreeMap;
use std::path::PathBuf;

struct Row {
    file: String,
    tool_calls: usize,
    usage_records: u64,
    compactions: Option<usize>,
}

fn manifest_rows(corpus: &std::path::Path) -> Vec<Row> {
    let text = std::fs::read_to_string(corpus.join("MANIFEST.md")).expect("MANIFEST.md readable");
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        // | file | repo | source path | commit | format | bytes | lines | tool calls | usage recs | versions | markers |
        let file = cols[1].trim_matches('`').to_string();
        let tool_calls = cols[8].parse().unwrap_or_else(|_| panic!("tool calls of {file}: {:?}", cols[8]));
        let usage_records = cols[9].parse().unwrap_or_else(|_| panic!("usage recs of {file}: {:?}", cols[9]));
        let compactions = cols[11]
            .split(',')
            .map(str::trim)
            .find_map(|m| m.strip_prefix("compaction="))
            .map(|n| n.parse().expect("compaction count"));
        rows.push(Row { file, tool_calls, usage_records, compactions });
    }
    rows
}

#[test]
fn every_corpus_file_matches_the_manifest() {
    let Some(corpus) = compactor::testing::corpus_dir() else { return };
    let rows = manifest_rows(&corpus);
    assert!(rows.len() >= 27, "MANIFEST lists {} files", rows.len());
    let (inputs, problems) = discover(std::slice::from_ref(&corpus));
    assert!(problems.is_empty(), "{problems:?}");
    let batch = read_all(&inputs, None);
    assert!(batch.failures.is_empty(), "files that could not be read: {:#?}", batch.failures);

    let mut by_file: BTreeMap<PathBuf, (usize, u64, usize, usize)> = BTreeMap::new();
    for s in &batch.sessions {
        let e = by_file.entry(s.source_path.clone()).or_default();
        e.0 += s.tool_call_count();
        e.1 += s.stats.usage_records;
        e.2 += s.recorded_compactions.len();
        e.3 += s.messages.len();
    }
    let mut mismatches = Vec::new();
    for row in &rows {
        let path = corpus.join(&row.file);
        let Some(&(tools, usage, compactions, messages)) = by_file.get(&path) else {
            mismatches.push(format!("{}: no session read", row.file));
            continue;
        };
        if messages == 0 && row.tool_calls > 0 {
            mismatches.push(format!("{}: no messages", row.file));
        }
        if tools != row.tool_calls {
            mismatches.push(format!("{}: tool calls {tools}, manifest {}", row.file, row.tool_calls));
        }
        if usage != row.usage_records {
            mismatches.push(format!("{}: usage records {usage}, manifest {}", row.file, row.usage_records));
        }
        if let Some(c) = row.compactions
            && c != compactions
        {
            mismatches.push(format!("{}: compactions {compactions}, manifest {c}", row.file));
        }
    }
    assert!(mismatches.is_empty(), "corpus does not match MANIFEST.md:\n{}", mismatches.join("\n"));
}
