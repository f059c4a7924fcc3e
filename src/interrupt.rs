//! SIGINT (Ctrl-C) and SIGTERM for the long runs (`check`, `explore`,
//! `conform`): the first one sets a flag that the runs poll between cases
//! or states, so that they stop, print what they had and exit with
//! 128 + the signal's number; a second one ends the process at once, with
//! the same code. Without [`install`] (the library, the tests) nothing is
//! ever requested.
//!
//! The handlers are `signal-hook`'s (`flag::register*`): they only store
//! to atomics, which is all a signal handler may do safely.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The flags the handlers set: whether a signal came, and which.
struct Flags {
    got: Arc<AtomicBool>,
    which: Arc<AtomicUsize>,
}

static FLAGS: OnceLock<Flags> = OnceLock::new();

/// SIGINT's number.
pub const SIGINT: i32 = 2;
/// SIGTERM's number.
pub const SIGTERM: i32 = 15;

/// Catch SIGINT and SIGTERM for the rest of the process (idempotent).
#[cfg(unix)]
pub fn install() -> std::io::Result<()> {
    if FLAGS.get().is_some() {
        return Ok(());
    }
    let flags = Flags {
        got: Arc::new(AtomicBool::new(false)),
        which: Arc::new(AtomicUsize::new(0)),
    };
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // Registered first, so that it sees the flag as the previous signal
        // left it: the second signal ends the process.
        signal_hook::flag::register_conditional_shutdown(
            signal,
            128 + signal,
            Arc::clone(&flags.got),
        )?;
        signal_hook::flag::register_usize(signal, Arc::clone(&flags.which), signal as usize)?;
        signal_hook::flag::register(signal, Arc::clone(&flags.got))?;
    }
    let _ = FLAGS.set(flags);
    Ok(())
}

/// Catch SIGINT and SIGTERM: nothing to do where there are no such signals.
#[cfg(not(unix))]
pub fn install() -> std::io::Result<()> {
    Ok(())
}

/// The signal that asked the run to stop, if one did.
pub fn requested() -> Option<i32> {
    let flags = FLAGS.get()?;
    if !flags.got.load(Ordering::Relaxed) {
        return None;
    }
    match flags.which.load(Ordering::Relaxed) {
        0 => Some(SIGINT),
        n => i32::try_from(n).ok(),
    }
}
