//! Many sessions through many policies: one rayon task per session (largest
//! first, so a long session does not start last and hold the batch), policies of
//! a session run one after the other and share per-message token counts when they
//! use the same estimator. Results come back sorted by (session id, source path,
//! input position), so every output is byte-identical at any thread count.

use super::{
    ReplayContext, ReplayError, ReplayOptions, SessionFacts, SessionTrace, count_message_tokens, replay_session,
};
use crate::model::Session;
use crate::policy::Policy;
use crate::quality::QualityPlan;
use crate::summarize::{self, Summarizer, SummarizerKind};
use crate::tokens::{Chars4, Estimator, EstimatorKind};
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Supplies the estimator and summarizer objects a policy names. The CLI wraps
/// this to add the BPE estimators and the LLM summarizer.
pub trait Resolver: Sync {
    /// For `calibrated`, the base estimator the calibration corrects (chars/4 in
    /// pi and Opal); the engine applies the recorded-usage correction itself.
    fn estimator(&self, kind: EstimatorKind) -> Result<Arc<dyn Estimator>, ReplayError>;
    fn summarizer(&self, kind: SummarizerKind) -> Result<Arc<dyn Summarizer>, ReplayError>;
    /// The summarizer of one policy: by default the one of its kind. A resolver
    /// overrides this when policies of the same kind need different objects
    /// (LLM policies with their own prompt, model or endpoint).
    fn summarizer_for(&self, policy: &Policy) -> Result<Arc<dyn Summarizer>, ReplayError> {
        self.summarizer(policy.compact.summarizer)
    }
}

/// What the library has built in: `chars4` (also the base of `calibrated`),
/// `truncate` and `extractive`. Other kinds are an error naming the kind.
pub struct BuiltinResolver;

impl Resolver for BuiltinResolver {
    fn estimator(&self, kind: EstimatorKind) -> Result<Arc<dyn Estimator>, ReplayError> {
        match kind {
            EstimatorKind::Chars4 | EstimatorKind::Calibrated => Ok(Arc::new(Chars4)),
            other => Err(ReplayError::Estimator(estimator_name(other).to_string())),
        }
    }

    fn summarizer(&self, kind: SummarizerKind) -> Result<Arc<dyn Summarizer>, ReplayError> {
        summarize::builtin(kind).ok_or_else(|| ReplayError::Summarizer(kind.name().to_string()))
    }
}

/// Every estimator the library has, each kind by its message counter
/// (`calibrated` counts with chars/4; the engine calibrates), and the built-in
/// summarizers: for tools and tests that replay with `o200k`, `cl100k` or
/// `per_block` too (the CLI builds its own, shared, estimators).
pub struct EveryEstimatorResolver;

impl Resolver for EveryEstimatorResolver {
    fn estimator(&self, kind: EstimatorKind) -> Result<Arc<dyn Estimator>, ReplayError> {
        Ok(match kind.message_counter() {
            EstimatorKind::PerBlock => Arc::new(crate::tokens::PerBlock),
            EstimatorKind::O200k => Arc::new(crate::tokens::O200k),
            EstimatorKind::Cl100k => Arc::new(crate::tokens::Cl100k),
            _ => Arc::new(Chars4),
        })
    }

    fn summarizer(&self, kind: SummarizerKind) -> Result<Arc<dyn Summarizer>, ReplayError> {
        BuiltinResolver.summarizer(kind)
    }
}

/// The name of an estimator as policies spell it.
pub fn estimator_name(kind: EstimatorKind) -> &'static str {
    match kind {
        EstimatorKind::Chars4 => "chars4",
        EstimatorKind::PerBlock => "per_block",
        EstimatorKind::O200k => "o200k",
        EstimatorKind::Cl100k => "cl100k",
        EstimatorKind::Calibrated => "calibrated",
    }
}

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
    pub source_path: PathBuf,
    pub traces: Vec<Result<SessionTrace, ReplayError>>,
    /// Summary quality of each trace, parallel to `traces` (`None` where the
    /// replay failed); empty when quality was not asked for. Computed in the
    /// session's own task, right after its replays, so reports are built from
    /// these small values and never walk the traces again.
    pub quality: Vec<Option<crate::quality::SessionQuality>>,
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
    /// `summ_group[i]`: the same for the summarizer object, when at least two
    /// policies use it: they share one summarizer bound to each session
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
                let same: Vec<usize> = (0..resolved.len())
                    .filter(|&j| resolved[j].as_ref().is_ok_and(|(_, sj)| Arc::ptr_eq(si, sj)))
                    .collect();
                (same.len() >= 2).then(|| same[0])
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
        // Each shared summarizer bound to this session, at its first policy.
        let bound: Vec<Option<Box<dyn Summarizer + '_>>> = (0..self.resolved.len())
            .map(|i| match &self.resolved[i] {
                Ok((_, summ)) if self.summ_group[i] == Some(i) => summ.for_session(&s.messages),
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
        let quality = quality.map(|plan| plan.evaluate_counted(s, &traces, &counts)).unwrap_or_default();
        SessionResults { session_id: s.id.clone(), source_path: s.source_path.clone(), traces, quality }
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
