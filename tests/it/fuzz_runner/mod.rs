//! The proptest side of the fuzz suites (`tests/fuzz_readers.rs`,
//! `tests/fuzz_replay.rs`): a byte-string strategy fed to a structure-aware
//! generator, a watchdog that saves a hanging case and ends the process, a quiet
//! panic hook (shrinking re-runs a failing case hundreds of times), and the
//! failing input saved under `target/fuzz-failures/`, ready to become a regression
//! file under `fixtures/regressions/`. Not shared with the cargo-fuzz targets
//! (they have libFuzzer for all of this).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The generator's seed: `COMPACTOR_FUZZ_SEED`; else a fixed one under
/// `CI=true`, so a build fails only for a change, never for the luck of the draw
/// (the same cases every run: a regression suite); else a new one each run, so
/// local runs keep exploring. Printed with the results, to reproduce a failure.
fn seed() -> u64 {
    if let Some(s) = std::env::var("COMPACTOR_FUZZ_SEED").ok().and_then(|v| v.parse().ok()) {
        return s;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        return 0x00c0_ffee;
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    now.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)
}

/// Cases per target: `COMPACTOR_FUZZ_CASES`, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("COMPACTOR_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Longest one case may take before it counts as a hang.
fn case_budget() -> Duration {
    let secs = std::env::var("COMPACTOR_FUZZ_CASE_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    Duration::from_secs(secs)
}

pub fn failures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures")
}

/// Saves the case being run (a hang or a panic) and returns the main file.
pub type Saver = Box<dyn Fn(&str) -> PathBuf + Send>;

/// How to save the current case, for the watchdog to call when it hangs.
static CURRENT: Mutex<Option<Saver>> = Mutex::new(None);
/// Milliseconds since `EPOCH` when the current case started; 0 = idle.
static STARTED: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// A thread that ends the process when one case runs past the budget: a hang
/// would otherwise stall CI until its own time limit, with no input to show.
fn start_watchdog() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let budget = case_budget();
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(250));
                let started = STARTED.load(Ordering::SeqCst);
                if started == 0 {
                    continue;
                }
                let now = epoch().elapsed().as_millis() as u64;
                if now.saturating_sub(started) > budget.as_millis() as u64 {
                    if let Ok(cur) = CURRENT.lock()
                        && let Some(save) = cur.as_ref()
                    {
                        let file = save("hang");
                        eprintln!("fuzz case ran over {budget:?} (a hang?): input saved to {}", file.display());
                    }
                    std::process::exit(101);
                }
            }
        });
    });
}

/// The panic of the current case (message and location), captured by a quiet hook.
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_case = STARTED.load(Ordering::SeqCst) != 0;
            if in_case {
                let loc = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
                let msg = info
                    .payload()
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                if let Ok(mut p) = LAST_PANIC.lock() {
                    *p = format!("{msg} at {loc}");
                }
            } else {
                default(info);
            }
        }));
    });
}

/// One fuzz target for the runner: build a case from bytes, check it, save it.
pub trait Target: Sync {
    type Case: Clone + Send + 'static;
    fn name(&self) -> String;
    fn build(&self, bytes: &[u8]) -> Self::Case;
    fn check(&self, case: &Self::Case);
    /// Write the case under `failures_dir()` as `NAME-WHAT…`; return the main file.
    fn save(name: &str, what: &str, case: &Self::Case) -> PathBuf;
}

/// Run `cases` random byte strings of at most `max_len` bytes through `target`;
/// panics with the (shrunk) failure and where its input was saved.
pub fn run<T: Target>(target: &T, cases: u32, max_len: usize) {
    start_watchdog();
    quiet_panics();
    let seed = seed();
    let config = Config {
        cases,
        // The failing input is saved as a file instead (see `Target::save`).
        failure_persistence: None,
        max_shrink_iters: 2000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let started = Instant::now();
    let name = target.name();
    // Every failing case shrinking accepts replaces the previous one, so the last
    // one seen is the minimal input proptest reports.
    let last_failure: Mutex<Option<T::Case>> = Mutex::new(None);
    let run_count = AtomicU64::new(0);
    let result = runner.run(&prop::collection::vec(any::<u8>(), 0..max_len), |bytes| {
        // Progress of long runs (`COMPACTOR_FUZZ_CASES=100000`): executions so far.
        let k = run_count.fetch_add(1, Ordering::Relaxed) + 1;
        if k.is_multiple_of(100) {
            eprintln!("fuzz {name}: {k} executions in {:.0?}", started.elapsed());
        }
        let case = target.build(&bytes);
        if let Ok(mut c) = CURRENT.lock() {
            let (n, k) = (name.clone(), case.clone());
            *c = Some(Box::new(move |what: &str| T::save(&n, what, &k)));
        }
        STARTED.store(epoch().elapsed().as_millis().max(1) as u64, Ordering::SeqCst);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target.check(&case)));
        STARTED.store(0, Ordering::SeqCst);
        match outcome {
            Ok(()) => Ok(()),
            Err(_) => {
                let msg = LAST_PANIC.lock().map(|p| p.clone()).unwrap_or_default();
                if let Ok(mut f) = last_failure.lock() {
                    *f = Some(case);
                }
                Err(TestCaseError::fail(msg))
            }
        }
    });
    eprintln!(
        "fuzz {name}: {} executions ({cases} cases, COMPACTOR_FUZZ_SEED={seed}) in {:.1?}",
        run_count.into_inner(),
        started.elapsed()
    );
    if let Err(e) = result {
        let saved = last_failure.lock().ok().and_then(|f| f.clone()).map(|case| T::save(&name, "panic", &case));
        let at = saved.map(|p| format!(" (input saved to {})", p.display())).unwrap_or_default();
        panic!("fuzz {name} failed: {e}{at}");
    }
}
