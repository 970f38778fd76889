//! Tests of the format registry: every format once, detection of every fixture,
//! and the cross-file linking a streaming batch asks it for.

use super::*;
use crate::read::{InputKind, discover, read_regular_file};
use crate::testing::fixtures_dir;

#[test]
fn the_registry_holds_every_format_once_with_distinct_names() {
    for f in Format::ALL {
        let n = FORMATS.iter().filter(|r| r.id() == f).count();
        assert_eq!(n, 1, "{} is in the registry {n} times", f.name());
        assert_eq!(of(f).map(|r| r.id()), Some(f));
    }
    assert_eq!(FORMATS.len(), Format::ALL.len());
    let mut names: Vec<&str> = FORMATS.iter().map(|f| f.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), FORMATS.len(), "two formats share a name");
    for f in FORMATS {
        assert_eq!(Format::from_name(f.name()), Some(f.id()), "--format {} must name it", f.name());
    }
}

/// Every fixture is detected as the format of the folder it is in
/// (`fixtures/<format name>/…`), and every format has a fixture.
#[test]
fn detection_picks_the_format_of_every_fixture() {
    let dir = fixtures_dir();
    let (inputs, problems) = discover(std::slice::from_ref(&dir));
    assert!(problems.is_empty(), "{problems:?}");
    let mut seen = Vec::new();
    for input in &inputs {
        let rel = input.path.strip_prefix(&dir).unwrap_or(&input.path);
        let folder = rel.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned());
        let Some(expected) = folder.as_deref().and_then(Format::from_name) else {
            panic!("{}: not under a folder named after a format", rel.display());
        };
        let file = match input.kind {
            InputKind::ClineTask => input.path.join("api_conversation_history.json"),
            _ => input.path.clone(),
        };
        let data = read_regular_file(&file).unwrap();
        assert_eq!(detect(&data), Some(expected), "{}", file.display());
        seen.push(expected);
    }
    for f in Format::ALL {
        assert!(seen.contains(&f), "no fixture of {}", f.name());
    }
}

#[test]
fn detection_precedence_sure_then_likely_then_weak() {
    // A generic-looking line first, then a pi message: pi is likely, generic weak.
    let data = b"{\"role\":\"user\",\"content\":\"hi\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\"}}\n";
    assert_eq!(detect(data), Some(Format::Pi));
    // A sure record anywhere in the first records wins over earlier likely ones.
    let data = b"{\"type\":\"message\",\"message\":{\"role\":\"user\"}}\n{\"type\":\"thread.started\"}\n";
    assert_eq!(detect(data), Some(Format::CodexExec));
    assert_eq!(detect(b"{\"role\":\"user\",\"content\":\"hi\"}\n{\"x\":1}\n"), Some(Format::Generic));
    assert_eq!(detect(b"  \n"), None);
    assert_eq!(detect(b"{\"x\":1}\n"), None);
}

/// The linking a streaming batch does file by file, asked through the registry:
/// the sub-agent files are linked files, their sessions linked sessions, and a
/// `/btw` aside drops the responses its parent owns.
#[test]
fn claude_sub_agents_link_through_the_registry() {
    let dir = fixtures_dir().join("claude-code/project");
    let (inputs, _) = discover(std::slice::from_ref(&dir));
    let linked: Vec<bool> = inputs.iter().map(|i| is_linked_file(&i.path)).collect();
    assert_eq!(linked.iter().filter(|&&l| l).count(), 3, "{inputs:?}");
    let mut owned = Vec::new();
    let mut subagents = Vec::new();
    for (input, linked) in inputs.iter().zip(linked) {
        let data = read_regular_file(&input.path).unwrap();
        for s in crate::read::read_bytes(&input.path, &data, None).unwrap() {
            assert_eq!(is_linked_session(&s), linked, "{}", s.id);
            if linked {
                subagents.push(s);
            } else {
                owned_keys(&s, &mut owned);
            }
        }
    }
    assert!(!owned.is_empty());
    let owned: HashSet<String> = owned.into_iter().collect();
    let calls_before: usize = subagents.iter().map(|s| s.calls.len()).sum();
    for s in &mut subagents {
        drop_replayed(s, &owned);
    }
    let calls_after: usize = subagents.iter().map(|s| s.calls.len()).sum();
    assert!(calls_after < calls_before, "the aside's replayed responses are dropped");
    // Other formats link nothing.
    assert!(!is_linked_file(&fixtures_dir().join("codex/compacted.jsonl")));
}
