//! [`LineMemo`]: a process-wide memo for pure functions of one line of a
//! summary (a line in, a list of items out), keyed by the line itself. A
//! sweep's summaries, `compare`'s and a replay's iterative checkpoints repeat
//! most of their lines, and the views that score them read each line's atoms
//! and commands: a lookup (a fast hash and a `memcmp`) instead of a scan.
//!
//! The memo changes no result: the function must depend on the line (and the
//! scope given with it) alone. Short lines are computed directly (hashing and
//! locking would cost more); each shard is cleared when the lines and values
//! it holds fill it ([`Weigh`]), which bounds the memory.

use std::sync::{Arc, Mutex};

const SHARDS: usize = 16;
/// Entries per shard before it is cleared.
const SHARD_CAP: usize = 8_192;

/// Lines longer than this are computed directly by a [`LineMemo`] (a text
/// that long is not a line a summary repeats; it would only take the room).
const LINE_MAX: usize = 16 * 1024;
/// Bytes of lines and of their values ([`Weigh`]) a [`LineMemo`] shard keeps
/// before it is cleared: a memo holds at most 16 times this.
const SHARD_BYTES: usize = 1024 * 1024;

/// The bytes a remembered value holds (its own size and its heap), counted
/// against its shard's bound with its line: a line's values can outweigh it.
pub trait Weigh {
    fn weight(&self) -> usize;
}

impl Weigh for Box<str> {
    fn weight(&self) -> usize {
        size_of::<Self>() + self.len()
    }
}

impl Weigh for String {
    fn weight(&self) -> usize {
        size_of::<Self>() + self.capacity()
    }
}

impl<A: Weigh, B: Weigh> Weigh for (A, B) {
    fn weight(&self) -> usize {
        self.0.weight() + self.1.weight()
    }
}

impl<T: Weigh> Weigh for Vec<T> {
    fn weight(&self) -> usize {
        size_of::<Self>() + self.iter().map(Weigh::weight).sum::<usize>()
    }
}

/// The remembered lines of one scope.
type Lines<T> = foldhash::HashMap<Box<str>, Arc<[T]>>;

/// One shard: by scope, then by line.
#[derive(Default)]
struct LineShard<T> {
    /// Lines read without a scope (no working directory: not the same as an
    /// empty one).
    unscoped: Lines<T>,
    scopes: foldhash::HashMap<Box<str>, Lines<T>>,
    entries: usize,
    bytes: usize,
}

/// A process-wide memo for pure functions of one line read in a context
/// (`scope`, such as the session's working directory, when the function
/// depends on it), keyed by the exact (scope, line) pair: no hash collision
/// can give one line another's result.
pub struct LineMemo<T = Box<str>> {
    shards: [Mutex<LineShard<T>>; SHARDS],
}

impl<T> Default for LineMemo<T> {
    fn default() -> LineMemo<T> {
        LineMemo {
            shards: std::array::from_fn(|_| {
                Mutex::new(LineShard { unscoped: Default::default(), scopes: Default::default(), entries: 0, bytes: 0 })
            }),
        }
    }
}

impl<T: Weigh> LineMemo<T> {
    /// `f()` for `line` read in `scope`: from the memo when this pair was seen
    /// before; empty lines, lines shorter than `min_len` and lines longer
    /// than 16 KB are computed directly.
    pub fn get(&self, scope: Option<&str>, line: &str, min_len: usize, f: impl FnOnce() -> Vec<T>) -> Arc<[T]> {
        let b = line.as_bytes();
        let (Some(&last), false) = (b.last(), b.len() < min_len || b.len() > LINE_MAX) else {
            return f().into();
        };
        // The shard from the line's length, last and middle bytes: no second
        // hash of the line (the map hashes it once more anyway).
        let mix = b.len() ^ usize::from(last) ^ (usize::from(b[b.len() / 2]) << 3);
        let shard = &self.shards[mix % SHARDS];
        let stored = |s: &LineShard<T>| match scope {
            Some(scope) => s.scopes.get(scope).and_then(|m| m.get(line)).cloned(),
            None => s.unscoped.get(line).cloned(),
        };
        if let Some(v) = shard.lock().ok().and_then(|s| stored(&s)) {
            return v;
        }
        let v: Arc<[T]> = f().into();
        let weight = line.len() + scope.map_or(0, str::len) + v.iter().map(Weigh::weight).sum::<usize>();
        if let Ok(mut s) = shard.lock() {
            if s.entries >= SHARD_CAP || s.bytes + weight > SHARD_BYTES {
                s.scopes.clear();
                s.unscoped.clear();
                s.entries = 0;
                s.bytes = 0;
            }
            let lines = match scope {
                None => &mut s.unscoped,
                Some(scope) => match s.scopes.get_mut(scope) {
                    Some(m) => m,
                    None => s.scopes.entry(scope.into()).or_default(),
                },
            };
            if lines.insert(line.into(), v.clone()).is_none() {
                s.entries += 1;
                s.bytes += weight;
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn lines_are_remembered_per_scope() {
        let memo: LineMemo<Box<str>> = LineMemo::default();
        let calls = AtomicUsize::new(0);
        let count = |n: usize| {
            calls.fetch_add(1, Ordering::Relaxed);
            vec![Box::<str>::from(n.to_string())]
        };
        let line = "a line long enough to be remembered";
        assert_eq!(&*memo.get(Some("/w"), line, 24, || count(1)), &[Box::from("1")]);
        assert_eq!(&*memo.get(Some("/w"), line, 24, || count(2)), &[Box::from("1")]);
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        // Another scope, and a scope/text split of the same bytes, are other keys.
        assert_eq!(&*memo.get(Some("/x"), line, 24, || count(3)), &[Box::from("3")]);
        assert_eq!(&*memo.get(Some("/wa"), &line[1..], 24, || count(4)), &[Box::from("4")]);
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        // No scope is not the empty scope.
        assert_eq!(&*memo.get(None, line, 24, || count(6)), &[Box::from("6")]);
        assert_eq!(&*memo.get(Some(""), line, 24, || count(7)), &[Box::from("7")]);
        assert_eq!(&*memo.get(None, line, 24, || count(8)), &[Box::from("6")]);
        assert_eq!(calls.load(Ordering::Relaxed), 5);
        // Short texts are computed every time; so is an empty one, whatever
        // the floor.
        memo.get(Some("/w"), "short", 24, || count(5));
        memo.get(Some("/w"), "short", 24, || count(5));
        assert_eq!(calls.load(Ordering::Relaxed), 7);
        assert_eq!(&*memo.get(None, "", 0, || count(9)), &[Box::from("9")]);
        assert_eq!(calls.load(Ordering::Relaxed), 8);
    }

    /// A shard is bounded by its lines and their values: lines whose values
    /// outweigh them are dropped sooner than their bytes alone would say.
    #[test]
    fn values_count_against_the_bound() {
        let memo: LineMemo<Box<str>> = LineMemo::default();
        let heavy = || vec![Box::<str>::from("x".repeat(64 * 1024))];
        let lines: Vec<String> = (0..64).map(|i| format!("line {i:04} long enough to be remembered")).collect();
        for l in &lines {
            memo.get(None, l, 0, heavy);
        }
        let held: usize = memo.shards.iter().map(|s| s.lock().map_or(0, |s| s.bytes)).sum();
        let kept: usize = memo.shards.iter().map(|s| s.lock().map_or(0, |s| s.entries)).sum();
        assert!(held <= SHARDS * SHARD_BYTES, "{held}");
        // 64 lines of 64 KB values would be 4 MB: the bound drops some.
        assert!(kept < lines.len() && kept > 0, "{kept}");
        assert!(held >= kept * 64 * 1024, "the values are counted: {held} for {kept}");
    }
}
