//! A summarizer wrapper that remembers its answers for one session across the
//! points of a sweep. Grid points that compact the same messages the same way
//! (same cut, same previous summary, same limits) ask the same question; a
//! deterministic summarizer gives the same answer, so it is computed once.
//!
//! The key holds everything in the request, compared exactly: the part, the
//! previous summary (by an id: the same text gets the same one), the limits,
//! the estimator, the file operations, and the messages — runs of indices for
//! the session's own messages (the engine passes them by reference, so the
//! address identifies them), else their content (summaries, pruned copies).
//! A hash of it all (BLAKE3 before) cost more than a map that compares keys.
//!
//! Below the memo, the summarizer bound to the session
//! ([`Summarizer::for_session`]) keeps what it read of each message, for the
//! questions the memo has not seen (another cut over mostly the same messages).

use crate::model::Message;
use crate::summarize::{SummarizeError, Summarizer, Summary, SummaryPart, SummaryRequest};
use crate::text::atoms::SessionLens;
use foldhash::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the summarizer answered to one request.
type Answer = Result<Summary, SummarizeError>;

pub struct MemoSummarizer<'a> {
    inner: &'a dyn Summarizer,
    /// `inner` bound to the session ([`Summarizer::for_session`]), when it
    /// keeps what it read of the messages; dropped with the memo, after the
    /// session's last point.
    session: Option<Box<dyn Summarizer + 'a>>,
    messages: &'a [Message],
    cache: Mutex<HashMap<Box<[u8]>, Answer>>,
    /// Previous summaries by content, each with its id in the keys.
    previous: Mutex<HashMap<Box<str>, u64>>,
    pub hits: AtomicU64,
    pub misses: AtomicU64,
}

impl<'a> MemoSummarizer<'a> {
    pub fn new(inner: &'a dyn Summarizer, lens: &'a SessionLens<'a>) -> MemoSummarizer<'a> {
        MemoSummarizer {
            inner,
            session: inner.for_session(lens),
            messages: lens.messages(),
            cache: Mutex::default(),
            previous: Mutex::default(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The request's key, or `None` if a poisoned lock (a panic elsewhere)
    /// keeps the previous summary from getting its id: the caller then asks
    /// the summarizer.
    fn key(&self, req: &SummaryRequest<'_>) -> Option<Box<[u8]>> {
        let mut k: Vec<u8> = Vec::with_capacity(256);
        fn num(k: &mut Vec<u8>, v: u64) {
            k.extend_from_slice(&v.to_le_bytes());
        }
        k.push(match req.part {
            SummaryPart::History => 0,
            SummaryPart::TurnPrefix => 1,
        });
        match req.previous_summary {
            Some(s) => {
                let mut ids = self.previous.lock().ok()?;
                let next = ids.len() as u64;
                let id = match ids.get(s) {
                    Some(&id) => id,
                    None => *ids.entry(s.into()).or_insert(next),
                };
                num(&mut k, id + 1);
            }
            None => num(&mut k, 0),
        }
        num(&mut k, req.max_tokens);
        let l = &req.limits;
        for v in [
            l.preview_head_chars.map(|v| v as u64 + 1).unwrap_or(0),
            l.preview_tail_chars as u64,
            l.input_cap_chars.map(|v| v as u64 + 1).unwrap_or(0),
        ] {
            num(&mut k, v);
        }
        let estimator = crate::replay::estimator_name(req.estimator.kind());
        num(&mut k, estimator.len() as u64);
        k.extend_from_slice(estimator.as_bytes());
        for set in [&req.file_ops.read, &req.file_ops.modified] {
            num(&mut k, set.len() as u64);
            for f in set {
                num(&mut k, f.len() as u64);
                k.extend_from_slice(f.as_bytes());
            }
        }
        num(&mut k, req.messages.len() as u64);
        // The session's own messages as runs of consecutive indices (a
        // request replaces a range or two): a few bytes, not nine a message.
        let mut run: Option<(usize, usize)> = None;
        let end_run = |k: &mut Vec<u8>, run: &mut Option<(usize, usize)>| {
            if let Some((start, len)) = run.take() {
                k.push(1);
                num(k, start as u64);
                num(k, len as u64);
            }
        };
        for m in req.messages {
            match crate::summarize::index_in(self.messages, m) {
                Some(i) => match &mut run {
                    Some((start, len)) if *start + *len == i => *len += 1,
                    _ => {
                        end_run(&mut k, &mut run);
                        run = Some((i, 1));
                    }
                },
                None => {
                    end_run(&mut k, &mut run);
                    k.push(2);
                    // Serializing the model's own types cannot fail; the length
                    // prefix keeps consecutive messages apart.
                    let bytes = serde_json::to_vec(m).unwrap_or_default();
                    num(&mut k, bytes.len() as u64);
                    k.extend_from_slice(&bytes);
                }
            }
        }
        end_run(&mut k, &mut run);
        Some(k.into_boxed_slice())
    }
}

impl Summarizer for MemoSummarizer<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        let key = self.key(req);
        let cached = key.as_ref().and_then(|k| self.cache.lock().ok().and_then(|c| c.get(k).cloned()));
        if let Some(r) = cached {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return r;
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let r = match &self.session {
            Some(s) => s.summarize(req),
            None => self.inner.summarize(req),
        };
        if let (Some(key), Ok(mut c)) = (key, self.cache.lock()) {
            c.insert(key, r.clone());
        }
        r
    }
}
