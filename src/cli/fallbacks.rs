//! The end of a run whose summaries fell back to extractive: a warning when
//! some did, an error (exit 2) when every one did, since its numbers then
//! measure the fallback rather than the summarizer the run was asked to measure.

use anyhow::bail;
use compactor::report::LlmSummaries;
use compactor::summarize::command::CommandStats;

/// The summaries of a run: the LLM's and the summarizer programs'.
#[derive(Clone, Copy)]
pub struct Fallbacks<'a> {
    pub llm: Option<&'a LlmSummaries>,
    pub command: Option<&'a CommandStats>,
}

/// What a run whose every summary fell back has done by the time it says so.
#[derive(Clone, Copy)]
pub enum Then {
    /// It went on to print and write its reports (replay, compare, sweep).
    WentOn,
    /// It compares nothing and writes no baseline (check).
    NotCompared,
}

impl Fallbacks<'_> {
    /// `(notice, every one fell back, what it measured instead)` of each.
    fn notices(self) -> [(Option<String>, bool, &'static str); 2] {
        [
            (
                self.llm.and_then(LlmSummaries::notice),
                self.llm.is_some_and(LlmSummaries::all_fell_back),
                "the LLM summarizer: check --llm-base-url, --llm-model and --llm-api-key-env",
            ),
            (
                self.command.and_then(CommandStats::notice),
                self.command.is_some_and(CommandStats::all_fell_back),
                "your summarizer program: check --summarizer-command",
            ),
        ]
    }

    /// Say on stderr, at the end of a run, how many summaries fell back to
    /// extractive and why the first did; nothing when none did. Printed even
    /// under `--quiet`: the summaries are not what the run was asked to
    /// measure. Those of which every one fell back are left to [`Self::refuse`],
    /// unless `all` (a shard's partial, whose merge decides).
    pub fn warn(self, all: bool) {
        for (notice, every, _) in self.notices() {
            if let Some(n) = notice.filter(|_| all || !every) {
                eprintln!("warning: {n}");
            }
        }
    }

    /// `Err` when every summary asked of the LLM, or of the summarizer
    /// program, fell back: the run measured the extractive fallback only.
    pub fn refuse(self, then: Then) -> anyhow::Result<()> {
        let failed: Vec<String> = self
            .notices()
            .into_iter()
            .filter(|(_, every, _)| *every)
            .filter_map(|(n, _, what)| {
                Some(match then {
                    Then::WentOn => {
                        format!("{}. The run went on, but its numbers measure the extractive fallback, not {what}", n?)
                    }
                    Then::NotCompared => format!(
                        "{}. Nothing is compared and no baseline written: the numbers would measure the extractive \
                         fallback, not {what}",
                        n?
                    ),
                })
            })
            .collect();
        if failed.is_empty() {
            return Ok(());
        }
        bail!("{}", failed.join("\n"))
    }
}
