//! Every file a command writes from its results goes through one trait, and each
//! command's results have one registry of exporters, in the order they are written
//! (the last one marks a complete run).

use super::Report;
use super::html::{Charts, Page, report_html};
use crate::sweep::SweepResult;

/// One output file made from a command's results `T`.
pub trait Exporter<T: ?Sized>: Sync {
    /// The file's name under `--out`.
    fn file_name(&self) -> &'static str;
    /// The file's bytes; `None` when the results have nothing for it.
    fn export(&self, results: &T) -> Option<Vec<u8>>;
}

/// What `replay` and `compare` export: the report and the charts kept for it.
/// (`calls.csv` and the transcripts are streamed while the replay runs.)
pub struct ReplayRun<'a> {
    pub report: &'a Report,
    pub charts: &'a Charts,
}

/// A replay's reports; report.json last, so its presence means the run completed.
pub static REPLAY: &[&dyn for<'a> Exporter<ReplayRun<'a>>] = &[&SessionsCsv, &QualityCsv, &Markdown, &Html, &Json];

/// What `check` exports: its outcome, and the baseline it wrote, if any.
pub struct CheckRun<'a> {
    pub outcome: &'a crate::check::Outcome,
    pub baseline_written: Option<&'a std::path::Path>,
}

/// A check's report: the markdown it prints, that `--summary FILE` writes (for
/// `$GITHUB_STEP_SUMMARY`) and that `--out DIR` keeps beside the replay's reports.
pub static CHECK: &[&dyn for<'a> Exporter<CheckRun<'a>>] = &[&CheckMd];

/// A sweep's reports.
pub static SWEEP: &[&dyn Exporter<SweepResult>] = &[&SweepCsv, &SweepMd, &RecommendedToml, &SweepHtml];

/// Every file any command writes at the top of `--out`: each command's run
/// owns them all ([`crate::output::stage::Staged::owning`]), so a run never
/// leaves another run's report beside its own, whichever command wrote it (a
/// sweep's `recommended.toml` beside a replay, a shard's `partial.json`
/// beside a whole run, for `merge` to read back).
pub fn run_files() -> impl Iterator<Item = &'static str> {
    let replay = REPLAY.iter().map(|e| e.file_name());
    let check = CHECK.iter().map(|e| e.file_name());
    let sweep = SWEEP.iter().map(|e| e.file_name());
    ["calls.csv", super::partial::PARTIAL_FILE].into_iter().chain(replay).chain(check).chain(sweep)
}

struct SessionsCsv;
struct QualityCsv;
struct Markdown;
struct Html;
struct Json;
struct CheckMd;
struct SweepCsv;
struct SweepMd;
struct RecommendedToml;
struct SweepHtml;

impl<'a> Exporter<ReplayRun<'a>> for SessionsCsv {
    fn file_name(&self) -> &'static str {
        "sessions.csv"
    }
    fn export(&self, r: &ReplayRun<'a>) -> Option<Vec<u8>> {
        Some(super::csv_out::sessions_csv(r.report))
    }
}

impl<'a> Exporter<ReplayRun<'a>> for QualityCsv {
    fn file_name(&self) -> &'static str {
        "quality.csv"
    }
    /// Nothing when no session was scored (`--no-quality`): a file of no
    /// rows would read as a run whose compactions lost nothing.
    fn export(&self, r: &ReplayRun<'a>) -> Option<Vec<u8>> {
        let scored = r.report.sessions.is_empty() || r.report.sessions.iter().any(|s| s.quality.is_some());
        scored.then(|| super::quality::quality_csv(r.report))
    }
}

impl<'a> Exporter<ReplayRun<'a>> for Markdown {
    fn file_name(&self) -> &'static str {
        "report.md"
    }
    fn export(&self, r: &ReplayRun<'a>) -> Option<Vec<u8>> {
        Some(super::markdown::report_md(r.report).into_bytes())
    }
}

impl<'a> Exporter<ReplayRun<'a>> for Html {
    fn file_name(&self) -> &'static str {
        "report.html"
    }
    fn export(&self, r: &ReplayRun<'a>) -> Option<Vec<u8>> {
        Some(super::write::html_page(r.report, r.charts).into_bytes())
    }
}

impl<'a> Exporter<ReplayRun<'a>> for Json {
    fn file_name(&self) -> &'static str {
        "report.json"
    }
    fn export(&self, r: &ReplayRun<'a>) -> Option<Vec<u8>> {
        Some(super::to_json(r.report))
    }
}

impl Exporter<SweepResult> for SweepCsv {
    fn file_name(&self) -> &'static str {
        "sweep.csv"
    }
    fn export(&self, r: &SweepResult) -> Option<Vec<u8>> {
        Some(super::sweep::sweep_csv(r))
    }
}

impl Exporter<SweepResult> for SweepMd {
    fn file_name(&self) -> &'static str {
        "sweep.md"
    }
    fn export(&self, r: &SweepResult) -> Option<Vec<u8>> {
        Some(super::sweep::sweep_md(r).into_bytes())
    }
}

impl Exporter<SweepResult> for RecommendedToml {
    fn file_name(&self) -> &'static str {
        "recommended.toml"
    }
    fn export(&self, r: &SweepResult) -> Option<Vec<u8>> {
        super::sweep::recommended_toml(r).map(String::into_bytes)
    }
}

impl Exporter<SweepResult> for SweepHtml {
    fn file_name(&self) -> &'static str {
        "report.html"
    }
    fn export(&self, r: &SweepResult) -> Option<Vec<u8>> {
        let page = Page {
            command: "sweep",
            report: None,
            charts: &Charts::default(),
            columns: &[],
            frr: None,
            sweep: Some(r),
        };
        Some(report_html(&page).into_bytes())
    }
}

impl<'a> Exporter<CheckRun<'a>> for CheckMd {
    fn file_name(&self) -> &'static str {
        "check.md"
    }
    fn export(&self, r: &CheckRun<'a>) -> Option<Vec<u8>> {
        Some(super::check::document(r, true).into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each registry names each file once, and a replay's report.json comes last.
    #[test]
    fn registries_name_each_file_once() {
        let replay: Vec<&str> = REPLAY.iter().map(|e| e.file_name()).collect();
        let sweep: Vec<&str> = SWEEP.iter().map(|e| e.file_name()).collect();
        let check: Vec<&str> = CHECK.iter().map(|e| e.file_name()).collect();
        for names in [&replay, &sweep, &check] {
            let set: std::collections::BTreeSet<_> = names.iter().collect();
            assert_eq!(set.len(), names.len(), "{names:?}");
        }
        assert_eq!(replay.last(), Some(&"report.json"));
        // check --out writes the replay's files and its own: none may overwrite another.
        assert!(check.iter().all(|c| !replay.contains(c)), "{check:?}");
    }
}
