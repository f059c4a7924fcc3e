//! SIGINT (Ctrl-C) and SIGTERM for the long runs (`check`, `explore`,
//! `conform`): the first one sets a flag that the runs poll between cases
//! or states, so that they stop, print what they had and exit with
//! 128 + the signal's number; a second one ends the process at once, with
//! the same code, after SIGKILL to the process group of every child still
//! running ([`register_child`]: each child of [`crate::process`] runs in a
//! group of its own, which the terminal's signal does not reach). Without
//! [`install`] (the library, the tests) nothing is ever requested.
//!
//! The handlers only load and store atomics and call `kill(2)` and
//! `_exit(2)`, which is all a signal handler may do safely (the flags are
//! `signal-hook`'s `flag::register*`; the second signal's is
//! `low_level::register`).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// How many children's process groups the second signal can end: more than
/// `conform`'s workers (at most 8) run at once.
const CHILD_SLOTS: usize = 64;

/// The process group of each child running now (its leader's pid, not yet
/// reaped, so that the id is not reused), 0 for a free slot.
static CHILD_GROUPS: [AtomicI32; CHILD_SLOTS] = [const { AtomicI32::new(0) }; CHILD_SLOTS];

/// Note the process group `pgid` of a child that has started, for the
/// second signal to end; its slot, for [`unregister_child`] (`None` when
/// every slot is taken: that child is then ended only by its own
/// runner).
pub fn register_child(pgid: i32) -> Option<usize> {
    (CHILD_GROUPS.iter()).position(|slot| {
        slot.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
}

/// The child of `slot` is about to be reaped: the second signal leaves its
/// group alone from now on.
pub fn unregister_child(slot: usize) {
    if let Some(s) = CHILD_GROUPS.get(slot) {
        s.store(0, Ordering::SeqCst);
    }
}

/// SIGKILL to every registered child's process group (async-signal-safe:
/// atomic loads and `kill(2)`).
#[cfg(unix)]
fn kill_children() {
    for slot in &CHILD_GROUPS {
        let pgid = slot.load(Ordering::SeqCst);
        if pgid > 0 {
            // SAFETY: kill(2) with a negative pid signals that process
            // group; async-signal-safe.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

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
        // left it: the second signal ends the children, then the process.
        let got = Arc::clone(&flags.got);
        let second = move || {
            if got.load(Ordering::SeqCst) {
                kill_children();
                signal_hook::low_level::exit(128 + signal);
            }
        };
        // SAFETY: the action only loads atomics and calls kill(2) and
        // _exit(2), all async-signal-safe; it allocates nothing and takes
        // no lock.
        unsafe { signal_hook::low_level::register(signal, second) }?;
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
