//! Which estimator and summarizer objects a policy names: the library's built-in
//! ones here, the CLI adds the BPE estimators and the LLM summarizer.

use super::ReplayError;
use crate::policy::Policy;
use crate::summarize::{self, Summarizer, SummarizerKind};
use crate::tokens::{Chars4, Estimator, EstimatorKind};
use std::sync::Arc;

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
