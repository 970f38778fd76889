//! A process-wide memo for pure functions of a text (a text in, a list of
//! strings or other items out), keyed by the text's BLAKE3 hash. Summarizers
//! and text views scan the same texts over and over — a sweep replays every
//! session under dozens of policies, `compare` under several, and each
//! compaction re-reads the messages it replaces — while hashing a text costs a
//! small fraction of running regexes over it.
//!
//! The memo changes no result: the function must depend on the text alone.
//! Short texts are computed directly (hashing and locking would cost more);
//! each shard is cleared when it fills, which bounds the memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Texts shorter than this are not memoized.
const MIN_LEN: usize = 256;
const SHARDS: usize = 16;
/// Entries per shard before it is cleared.
const SHARD_CAP: usize = 8_192;

type Shard<T> = Mutex<HashMap<[u8; 16], Arc<[T]>>>;

pub struct TextMemo<T = Box<str>> {
    shards: [Shard<T>; SHARDS],
}

impl<T> Default for TextMemo<T> {
    fn default() -> TextMemo<T> {
        TextMemo { shards: std::array::from_fn(|_| Mutex::new(HashMap::new())) }
    }
}

impl<T> TextMemo<T> {
    /// `f(text)`, from the memo when this text was seen before.
    pub fn get(&self, text: &str, f: impl FnOnce(&str) -> Vec<T>) -> Arc<[T]> {
        self.get_min(text, MIN_LEN, f)
    }

    /// [`TextMemo::get`] with another length below which `f` runs directly
    /// (for functions that cost much more per byte than hashing).
    pub fn get_min(&self, text: &str, min_len: usize, f: impl FnOnce(&str) -> Vec<T>) -> Arc<[T]> {
        if text.len() < min_len {
            return f(text).into();
        }
        self.lookup(blake3::hash(text.as_bytes()), || f(text))
    }

    /// `f()` for a text read in a context (`scope`, such as the session's
    /// working directory, when `f` depends on it): from the memo when this
    /// (scope, text) pair was seen before; texts shorter than `min_len` are
    /// computed directly. The pair is hashed as it is, not joined first.
    pub fn get_scoped(&self, scope: &str, text: &str, min_len: usize, f: impl FnOnce() -> Vec<T>) -> Arc<[T]> {
        if text.len() < min_len {
            return f().into();
        }
        let mut h = blake3::Hasher::new();
        // Length-prefixed: no scope/text split gives another pair's bytes.
        h.update(&(scope.len() as u64).to_le_bytes());
        h.update(scope.as_bytes());
        h.update(text.as_bytes());
        self.lookup(h.finalize(), f)
    }

    fn lookup(&self, hash: blake3::Hash, f: impl FnOnce() -> Vec<T>) -> Arc<[T]> {
        let mut key = [0u8; 16];
        key.copy_from_slice(&hash.as_bytes()[..16]);
        let shard = &self.shards[usize::from(key[0]) % SHARDS];
        if let Some(v) = shard.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return v;
        }
        let v: Arc<[T]> = f().into();
        if let Ok(mut m) = shard.lock() {
            if m.len() >= SHARD_CAP {
                m.clear();
            }
            m.insert(key, v.clone());
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn long_texts_are_computed_once_short_ones_every_time() {
        let memo = TextMemo::default();
        let calls = AtomicUsize::new(0);
        let words = |t: &str| -> Vec<Box<str>> {
            calls.fetch_add(1, Ordering::Relaxed);
            t.split_whitespace().map(Box::from).collect()
        };
        let long = "alpha beta ".repeat(40);
        let a = memo.get(&long, words);
        let b = memo.get(&long, words);
        assert_eq!(a, b);
        assert_eq!(a.len(), 80);
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        let other = "gamma ".repeat(60);
        assert_eq!(memo.get(&other, words).len(), 60);
        assert_eq!(calls.load(Ordering::Relaxed), 2);
        memo.get("short text", words);
        memo.get("short text", words);
        assert_eq!(calls.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn scoped_texts_are_remembered_per_scope() {
        let memo: TextMemo<usize> = TextMemo::default();
        let calls = AtomicUsize::new(0);
        let count = |n: usize| {
            calls.fetch_add(1, Ordering::Relaxed);
            vec![n]
        };
        let line = "a line long enough to be remembered";
        assert_eq!(&*memo.get_scoped("/w", line, 24, || count(1)), &[1]);
        assert_eq!(&*memo.get_scoped("/w", line, 24, || count(2)), &[1]);
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        // Another scope, and a scope/text split of the same bytes, are other keys.
        assert_eq!(&*memo.get_scoped("/x", line, 24, || count(3)), &[3]);
        assert_eq!(&*memo.get_scoped("/wa", &line[1..], 24, || count(4)), &[4]);
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        // Short texts are computed every time.
        memo.get_scoped("/w", "short", 24, || count(5));
        memo.get_scoped("/w", "short", 24, || count(5));
        assert_eq!(calls.load(Ordering::Relaxed), 5);
    }
}
