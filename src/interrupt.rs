//! Cooperative interruption (Ctrl-C). A signal handler only sets a flag; the
//! long loops (reading inputs, replaying sessions and calls, waiting for an LLM
//! answer, writing outputs) check [`requested`] and wind down: workers stop
//! taking sessions, a replay in progress stops at its next call, the outputs
//! staged so far are thrown away (see [`crate::output::stage`]: what an
//! earlier run left under `--out` stays as it was), and the binary exits 130
//! (128 + SIGINT), or 143 for SIGTERM.
//!
//! Putting a run's outputs in place is the point of no return: [`commit`]
//! says whether a stop was asked for before it (then nothing is put in
//! place), and once it has said no, the run counts as complete: a signal
//! after it no longer makes the exit status 130, since `--out` then holds
//! the new, complete outputs.
//!
//! The handler is installed with `SA_RESETHAND`: a second Ctrl-C gets the default
//! action and ends the process at once, for when winding down takes too long.
//!
//! The flag is process-global on purpose: it is what a signal handler can reach,
//! and every loop that must stop can see it without threading a token through
//! every signature. Library users that never call [`install`] never see it set
//! (unless they call [`request`]).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The signal that asked to stop; 0 = none.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Set by [`commit`]: the run's outputs are being put in place.
static COMMITTED: AtomicBool = AtomicBool::new(false);

/// SIGINT's number on every Unix (and what [`request`] records).
pub const SIGINT: i32 = 2;
/// SIGTERM's number on every Unix.
pub const SIGTERM: i32 = 15;

/// Whether a stop was asked for. Cheap (one relaxed load): call it per item.
pub fn requested() -> bool {
    SIGNAL.load(Ordering::Relaxed) != 0
}

/// Ask every loop to stop, as Ctrl-C does.
pub fn request() {
    record(SIGINT);
}

/// The point of no return of a run that writes outputs: `false` when a stop
/// was asked for already (put nothing in place), else `true`, and from then on
/// the run is complete whatever signal comes ([`exit_code`] is `None`).
///
/// A signal landing just after the check finds the commit recorded: the
/// outputs go in place and the exit status is the command's own. Either way
/// `--out` holds one run's complete outputs.
pub fn commit() -> bool {
    if SIGNAL.load(Ordering::SeqCst) != 0 {
        return false;
    }
    COMMITTED.store(true, Ordering::SeqCst);
    true
}

/// The exit status of a run stopped by a signal: 128 + its number. `None`
/// when no signal came, or only after the run [`commit`]ted its outputs.
pub fn exit_code() -> Option<u8> {
    if COMMITTED.load(Ordering::SeqCst) {
        return None;
    }
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => u8::try_from(128 + s).ok(),
    }
}

fn record(signal: i32) {
    let _ = SIGNAL.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
}

#[cfg(unix)]
extern "C" fn on_signal(signal: libc::c_int) {
    // Async-signal-safe: an atomic store and nothing else.
    record(signal);
}

/// Install the SIGINT and SIGTERM handlers. Returns false when the system
/// refused (the default action then stays: the process ends at once).
#[cfg(unix)]
pub fn install() -> bool {
    let mut ok = true;
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `sigaction` is given a zeroed, fully initialized struct whose
        // handler is an `extern "C" fn(c_int)` that only touches an atomic.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            ok &= libc::sigaction(signal, &action, std::ptr::null_mut()) == 0;
        }
    }
    ok
}

/// No signals to catch here: Ctrl-C keeps its default action.
#[cfg(not(unix))]
pub fn install() -> bool {
    false
}
