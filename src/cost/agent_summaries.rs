//! What the agent paid to write its own compactions' summaries: requests the
//! baseline sent and a policy replay does not, billed like its calls.

use super::{Bill, CacheTtl, PriceTable, SessionModels, split_request};
use crate::model::Session;
use crate::replay::{SessionTrace, agent_summary_priced, agent_summary_unpriced};
use serde::{Deserialize, Serialize};

/// The summary requests of the agent's own compactions, over a session or a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentSummaries {
    /// Requests priced (Claude Code's: `replay::agent_summary_priced`), and
    /// their bill: input through the cache simulation, output the summary.
    pub requests: u64,
    pub bill: Bill,
    /// The agent's own compactions whose summary came from a request that
    /// is not priced (Codex, pi, Gemini CLI, Roo Code; Claude Code's when
    /// what it summarized is in another log): the baseline leaves out what
    /// those cost.
    pub unpriced: u64,
}

impl AgentSummaries {
    pub fn is_empty(&self) -> bool {
        self.requests == 0 && self.unpriced == 0
    }

    pub(super) fn add(&mut self, o: &AgentSummaries) {
        self.requests += o.requests;
        self.bill.add(&o.bill);
        self.unpriced += o.unpriced;
    }

    pub(super) fn rounded(mut self) -> AgentSummaries {
        self.bill = self.bill.rounded();
        self
    }
}

/// Bill a replay's summary requests of the agent's own: each at the prices
/// of its call's family on its date, its input split by the cache simulation
/// against the request before it.
pub(super) fn bill(
    session: &Session,
    trace: &SessionTrace,
    table: &PriceTable,
    models: &SessionModels,
    ttl: CacheTtl,
) -> AgentSummaries {
    let own = || session.recorded_compactions.iter().filter(|c| c.inserted.start >= session.inherited);
    // Those of other agents, and Claude Code's whose request the replay
    // could not size (what they summarized is in another log).
    let priced = own().filter(|c| agent_summary_priced(c.kind)).count();
    let unpriced =
        own().filter(|c| agent_summary_unpriced(c.kind)).count() + priced.saturating_sub(trace.agent_summaries.len());
    let mut out = AgentSummaries { unpriced: unpriced as u64, ..AgentSummaries::default() };
    for r in &trace.agent_summaries {
        let (fi, _) = r.call.and_then(|c| models.calls.get(c).copied()).unwrap_or(models.unknown);
        let family = table.families.get(fi).unwrap_or(&table.families[table.fallback]);
        let prices = family.prices_when(r.tokens, false, r.timestamp);
        let split = split_request(r.tokens, r.prefix, false, r.gap_ms, ttl);
        out.requests += 1;
        out.bill.add_input(&split, split.usd(&prices, ttl));
        out.bill.output += r.output;
        out.bill.usd += r.output as f64 * prices.output / 1e6;
    }
    out
}
