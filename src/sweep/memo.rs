//! A summarizer wrapper that remembers its answers for one session across the
//! points of a sweep. Grid points that compact the same messages the same way
//! (same cut, same previous summary, same limits) ask the same question; a
//! deterministic summarizer gives the same answer, so it is computed once.
//!
//! The key is a BLAKE3 hash of everything in the request: the part, the
//! previous summary, the limits, the estimator, the file operations, and each
//! message — by its index when it is one of the session's own messages (the
//! engine passes them by reference, so the address identifies them), else by its
//! content (summaries, pruned copies).
//!
//! Below the memo, the summarizer bound to the session
//! ([`Summarizer::for_session`]) keeps what it read of each message, for the
//! questions the memo has not seen (another cut over mostly the same messages).

use crate::model::Message;
use crate::summarize::{SummarizeError, Summarizer, Summary, SummaryPart, SummaryRequest};
use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

pub struct MemoSummarizer<'a> {
    inner: &'a dyn Summarizer,
    /// `inner` bound to the session ([`Summarizer::for_session`]), when it
    /// keeps what it read of the messages; dropped by [`MemoSummarizer::clear`].
    session: RwLock<Option<Box<dyn Summarizer + 'a>>>,
    messages: &'a [Message],
    cache: Mutex<HashMap<[u8; 32], Result<Summary, SummarizeError>>>,
    pub hits: AtomicU64,
    pub misses: AtomicU64,
}

impl<'a> MemoSummarizer<'a> {
    pub fn new(inner: &'a dyn Summarizer, messages: &'a [Message]) -> MemoSummarizer<'a> {
        MemoSummarizer {
            inner,
            session: RwLock::new(inner.for_session(messages)),
            messages,
            cache: Mutex::new(HashMap::new()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Forget every answer (the session's last replay is done).
    pub fn clear(&self) {
        if let Ok(mut c) = self.cache.lock() {
            *c = HashMap::new();
        }
        if let Ok(mut s) = self.session.write() {
            *s = None;
        }
    }

    fn key(&self, req: &SummaryRequest<'_>) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        {
            // A field per message (most of them a 9-byte index): written
            // through a buffer, so the hasher sees a few large updates of the
            // same bytes (the same key) instead of one small update each.
            let mut w = std::io::BufWriter::with_capacity(8192, &mut h);
            // Writing into a hasher cannot fail.
            let mut put = |b: &[u8]| {
                let _ = w.write_all(b);
            };
            put(&[match req.part {
                SummaryPart::History => 0,
                SummaryPart::TurnPrefix => 1,
            }]);
            match req.previous_summary {
                Some(s) => {
                    put(&[1]);
                    put(&(s.len() as u64).to_le_bytes());
                    put(s.as_bytes());
                }
                None => put(&[0]),
            }
            put(&req.max_tokens.to_le_bytes());
            let l = &req.limits;
            for v in [
                l.preview_head_chars.map(|v| v as u64 + 1).unwrap_or(0),
                l.preview_tail_chars as u64,
                l.input_cap_chars.map(|v| v as u64 + 1).unwrap_or(0),
            ] {
                put(&v.to_le_bytes());
            }
            put(crate::replay::estimator_name(req.estimator.kind()).as_bytes());
            for set in [&req.file_ops.read, &req.file_ops.modified] {
                put(&(set.len() as u64).to_le_bytes());
                for f in set {
                    put(&(f.len() as u64).to_le_bytes());
                    put(f.as_bytes());
                }
            }
            put(&(req.messages.len() as u64).to_le_bytes());
            for m in req.messages {
                match crate::summarize::index_in(self.messages, m) {
                    Some(i) => {
                        put(&[1]);
                        put(&(i as u64).to_le_bytes());
                    }
                    None => {
                        put(&[2]);
                        // Serializing the model's own types cannot fail; the length
                        // prefix keeps consecutive messages apart.
                        let bytes = serde_json::to_vec(m).unwrap_or_default();
                        put(&(bytes.len() as u64).to_le_bytes());
                        put(&bytes);
                    }
                }
            }
            let _ = w.flush();
        }
        *h.finalize().as_bytes()
    }
}

impl Summarizer for MemoSummarizer<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn summarize(&self, req: &SummaryRequest<'_>) -> Result<Summary, SummarizeError> {
        let key = self.key(req);
        if let Some(r) = self.cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return r;
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let r = match self.session.read().as_deref() {
            Ok(Some(s)) => s.summarize(req),
            _ => self.inner.summarize(req),
        };
        if let Ok(mut c) = self.cache.lock() {
            c.insert(key, r.clone());
        }
        r
    }
}
