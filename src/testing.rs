//! Helpers shared by unit tests, integration tests and benchmarks: where the real
//! corpus and the bundled fixtures are. Not part of the public API.

use std::path::PathBuf;

/// The bundled synthetic fixtures (`fixtures/` in this repository).
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The real public corpus at `../shared/corpus`, or `COMPACTOR_CORPUS` when set.
///
/// In CI (`CI` set to anything but `false`/`0`) a missing corpus is a failure:
/// this panics with the reason. Elsewhere it prints why the test is skipped and
/// returns `None`.
#[allow(clippy::print_stderr)]
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("COMPACTOR_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    if dir.join("MANIFEST.md").is_file() {
        return Some(dir);
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if in_ci {
        panic!("the corpus is missing at {} (CI=true requires it; set COMPACTOR_CORPUS)", dir.display());
    }
    eprintln!("skipping: corpus not found at {} (set COMPACTOR_CORPUS to run this test)", dir.display());
    None
}
