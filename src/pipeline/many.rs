//! Many sessions through many policies: one rayon task per session (largest
//! first, so a long session does not start last and hold the batch), policies of
//! a session run one after the other and share per-message token counts when they
//! use the same estimator. Results come back sorted by (session id, source path,
//! input position), so every output is byte-identical at any thread count.

use crate::model::Session;
use crate::policy::Policy;
use crate::policy::SummarizerKind;
use crate::quality::QualityPlan;
use crate::quality::SessionQuality;
use crate::replay::{
    ReplayContext, ReplayError, ReplayOptions, Resolver, SessionFacts, SessionTrace, count_message_tokens,
    replay_session,
};
use crate::summarize::{Extractive, Summarizer};
use crate::text::atoms::SessionLens;
use crate::tokens::Estimator;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Reported after each session.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    pub done: usize,
    pub total: usize,
    pub session_id: &'a str,
    pub messages: usize,
}

/// The replays of one session, one per policy, in the order of the policies.
#[derive(Debug, Clone)]
pub struct SessionResults {
    pub session_id: String,
    /// Project and title ([`Session::display_name`]).
    pub name: Option<String>,
    pub source_path: PathBuf,
    pub traces: Vec<Result<SessionTrace, ReplayError>>,
    /// Summary quality of each trace, parallel to `traces` (`None` where the
    /// replay failed); empty when quality was not asked for. Computed in the
    /// session's own task, right after its replays, so reports are built from
    /// these small values and never walk the traces again.
    pub quality: Vec<Option<crate::quality::SessionQuality>>,
    /// The compactions the log itself records, scored once whatever the
    /// policies (with quality only).
    pub recorded: Option<crate::quality::RecordedQuality>,
}

type Resolved = Result<(Arc<dyn Estimator>, Arc<dyn Summarizer>), ReplayError>;

/// Policies resolved once for a batch: their estimator and summarizer objects,
/// and which policies share token counts.
pub struct Prepared<'p> {
    policies: &'p [Policy],
    resolved: Vec<Resolved>,
    /// `group[i]` = the first policy with the same estimator object as policy `i`:
    /// policies sharing an estimator share its token counts.
    group: Vec<usize>,
    /// `summ_group[i]`: the first policy with the same summarizer object as
    /// policy `i`: they share one summarizer bound to each session
    /// ([`Summarizer::for_session`]), which reads each message once.
    summ_group: Vec<Option<usize>>,
}

impl<'p> Prepared<'p> {
    pub fn new(policies: &'p [Policy], resolver: &dyn Resolver) -> Prepared<'p> {
        let resolved: Vec<Resolved> = policies
            .iter()
            .map(|p| {
                p.validate()?;
                Ok((resolver.estimator(p.estimator)?, resolver.summarizer_for(p)?))
            })
            .collect();
        let group: Vec<usize> = (0..resolved.len())
            .map(|i| {
                (0..i)
                    .find(|&j| match (&resolved[i], &resolved[j]) {
                        (Ok((a, _)), Ok((b, _))) => Arc::ptr_eq(a, b),
                        _ => false,
                    })
                    .unwrap_or(i)
            })
            .collect();
        let summ_group: Vec<Option<usize>> = (0..resolved.len())
            .map(|i| {
                let (_, si) = resolved[i].as_ref().ok()?;
                (0..resolved.len()).find(|&j| resolved[j].as_ref().is_ok_and(|(_, sj)| Arc::ptr_eq(si, sj)))
            })
            .collect();
        Prepared { policies, resolved, group, summ_group }
    }

    /// One session through every policy, in policy order. Each message is
    /// estimated once per estimator, whatever the number of policies using it.
    pub fn replay(&self, s: &Session, options: ReplayOptions) -> SessionResults {
        self.replay_scored(s, options, None)
    }

    /// [`Prepared::replay`], and with a [`QualityPlan`] (made for the same
    /// policies) the traces are scored right after, while the session is in
    /// memory: [`SessionResults::quality`].
    pub fn replay_scored(&self, s: &Session, options: ReplayOptions, quality: Option<&QualityPlan>) -> SessionResults {
        let mut cache: Vec<Option<Vec<u64>>> = vec![None; self.resolved.len()];
        // The session's atoms, each message's read once for the summarizers
        // of every policy and the quality pass; kept only when a second
        // reader follows the first summarizer (each keeps its own steps).
        let readers = (0..self.resolved.len()).filter(|&i| self.summ_group[i] == Some(i)).count();
        let lens = SessionLens::of(s);
        let lens = if quality.is_none() && readers <= 1 { lens.single_reader() } else { lens };
        // Each summarizer bound to this session, at its first policy.
        let bound: Vec<Option<Box<dyn Summarizer + '_>>> = (0..self.resolved.len())
            .map(|i| match &self.resolved[i] {
                Ok((_, summ)) if self.summ_group[i] == Some(i) => summ.for_session(&lens),
                _ => None,
            })
            .collect();
        let mut traces = Vec::with_capacity(self.policies.len());
        // The meter's per-message counts: a policy group's, or its own.
        let (mut meter_group, mut meter_own): (Option<usize>, Option<Vec<u64>>) = (None, None);
        // Worth making once only when several policies read them.
        let facts = (self.policies.len() > 1).then(|| SessionFacts::of(s));
        for (pi, policy) in self.policies.iter().enumerate() {
            // After Ctrl-C the sessions not started yet cost nothing.
            if crate::interrupt::requested() {
                traces.push(Err(ReplayError::Interrupted));
                continue;
            }
            let (est, summ) = match &self.resolved[pi] {
                Ok(r) => r,
                Err(e) => {
                    traces.push(Err(e.clone()));
                    continue;
                }
            };
            let g = self.group[pi];
            if cache[g].is_none() {
                cache[g] = Some(count_message_tokens(s, est.as_ref()));
            }
            let summarizer = self.summ_group[pi].and_then(|g| bound[g].as_deref()).unwrap_or(summ.as_ref());
            let meter = options.meter.counter();
            // The meter counts as this policy's estimator does: its counts serve.
            if meter_group.is_none() && meter_own.is_none() {
                if est.kind().message_counter() == meter.kind() {
                    meter_group = Some(g);
                } else {
                    meter_own = Some(count_message_tokens(s, meter));
                }
            }
            let meter_tokens = meter_own.as_deref().or_else(|| meter_group.and_then(|mg| cache[mg].as_deref()));
            let ctx = ReplayContext {
                estimator: est.as_ref(),
                summarizer,
                message_tokens: cache[g].as_deref(),
                meter_tokens,
                facts: facts.as_ref(),
                options,
            };
            traces.push(replay_session(s, policy, &ctx));
        }
        let counts: Vec<Option<&[u64]>> = (0..self.policies.len()).map(|pi| cache[self.group[pi]].as_deref()).collect();
        let meter = Some(options.meter.counter());
        // The recorded compactions' extractive rows, written by the replays'
        // extractive summarizer when one is bound (its reads serve again).
        let written = quality.and_then(|plan| {
            let extractive = (0..self.policies.len())
                .find(|&i| self.policies[i].compact.summarizer == SummarizerKind::Extractive && bound[i].is_some())
                .and_then(|i| bound[i].as_deref())
                .filter(|b| b.name() == Extractive.name());
            plan.recorded_written(s, &lens, extractive, meter)
        });
        drop(bound);
        let (quality, recorded) =
            quality.map(|plan| plan.evaluate_with(s, lens, &traces, &counts, meter, written)).unwrap_or_default();
        SessionResults {
            session_id: s.id.clone(),
            name: s.display_name(),
            source_path: s.source_path.clone(),
            traces,
            quality,
            recorded,
        }
    }
}

/// Replay every session through every policy on `pool` (`--jobs`).
pub fn replay_many(
    sessions: &[Session],
    policies: &[Policy],
    resolver: &dyn Resolver,
    options: ReplayOptions,
    pool: &rayon::ThreadPool,
    progress: Option<&(dyn Fn(Progress<'_>) + Sync)>,
) -> Vec<SessionResults> {
    replay_many_scored(sessions, policies, resolver, options, pool, progress, None)
}

/// [`replay_many`], and with a [`QualityPlan`] (made for the same `policies`)
/// each session's traces are scored in the same task, while the session is
/// in memory: [`SessionResults::quality`].
pub fn replay_many_scored(
    sessions: &[Session],
    policies: &[Policy],
    resolver: &dyn Resolver,
    options: ReplayOptions,
    pool: &rayon::ThreadPool,
    progress: Option<&(dyn Fn(Progress<'_>) + Sync)>,
    quality: Option<&QualityPlan>,
) -> Vec<SessionResults> {
    let prepared = Prepared::new(policies, resolver);
    let mut order: Vec<usize> = (0..sessions.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(sessions[i].messages.len()), i));
    let done = AtomicUsize::new(0);
    let total = sessions.len();
    let mut results: Vec<(usize, SessionResults)> = pool.install(|| {
        order
            .par_iter()
            .with_max_len(1)
            .map(|&i| {
                let s = &sessions[i];
                let r = prepared.replay_scored(s, options, quality);
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(cb) = progress {
                    cb(Progress { done: n, total, session_id: &s.id, messages: s.messages.len() });
                }
                (i, r)
            })
            .collect()
    });
    results.sort_by(|a, b| (&a.1.session_id, &a.1.source_path, a.0).cmp(&(&b.1.session_id, &b.1.source_path, b.0)));
    results.into_iter().map(|(_, r)| r).collect()
}

/// Score the output of [`replay_many`]: one entry
/// per `results` entry, in the same order, with `None` where the replay failed
/// or the session is not in `sessions`. Sessions run in parallel on `pool`.
pub fn evaluate_results(
    sessions: &[Session],
    results: &[SessionResults],
    policies: &[Policy],
    resolver: &dyn Resolver,
    pool: &rayon::ThreadPool,
) -> Vec<Vec<Option<SessionQuality>>> {
    use rayon::prelude::*;
    let plan = QualityPlan::new(policies, resolver);
    // `replay_many` sorts its results by (id, path); find each one's session.
    let mut by_key: HashMap<(&str, &Path), Vec<usize>> = HashMap::new();
    for (i, s) in sessions.iter().enumerate().rev() {
        by_key.entry((s.id.as_str(), s.source_path.as_path())).or_default().push(i);
    }
    let index: Vec<Option<usize>> = results
        .iter()
        .map(|r| by_key.get_mut(&(r.session_id.as_str(), r.source_path.as_path())).and_then(Vec::pop))
        .collect();
    pool.install(|| {
        results
            .par_iter()
            .zip(index.par_iter())
            .with_max_len(1)
            .map(|(r, &si)| match si.map(|i| &sessions[i]) {
                Some(session) => plan.evaluate(session, &r.traces),
                None => vec![None; r.traces.len()],
            })
            .collect()
    })
}
