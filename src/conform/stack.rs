//! The stack node runs with, and how deep a trace can nest on it.
//!
//! A trace's frames (native scopes, `runInAsyncScope`, the default trigger
//! scope) become nested calls in node while the program runs (the program's
//! source nests nothing: `emit`). Each level takes a few kB of node's
//! main-thread stack: the interpreter's frame, `runInAsyncScope` or the
//! addon's function, and under a native scope `node::CallbackScope` and V8's
//! entry frames. With its defaults (an 8 MiB `ulimit -s`, V8's
//! `--stack-size` of 984 kB) node manages about 500 nested native scopes.
//! So the harness raises the stack limit of the node process it starts
//! (`RLIMIT_STACK`, up to the hard limit) and tells V8 to use it
//! (`--stack-size`), and refuses, before anything runs, a trace that nests
//! deeper than that stack holds ([`NodeStack::max_nesting`]).

use std::process::Command;

/// The stack the harness asks for node's main thread: 1 GiB (address space;
/// only the pages a deep trace touches become memory).
pub const WANTED_STACK_BYTES: u64 = 1 << 30;

/// Node's stack when the limit cannot be changed (not Unix): V8's default
/// `--stack-size`, 984 kB.
const DEFAULT_V8_STACK_BYTES: u64 = 984 << 10;

/// An upper bound of the node stack one level of nesting takes, in bytes,
/// with a margin of almost 3: the most measured (node v20.20.2, x86-64) was
/// 2.1 kB per level for nested `make-callback`s, 1.8 kB for
/// `callback-scope`s, under 0.75 kB for `run-in-async-scope` and
/// `default-trigger-scope`: the deepest trace of each kind (with
/// `execution-async-resource`, a tick and `tick-callback` at the bottom)
/// that still agreed under a 14 MiB `--stack-size`.
/// `tests/conform_deep.rs` checks that traces exactly as deep as
/// [`NodeStack::max_nesting`] allows run, on a 16 MiB stack.
pub const BYTES_PER_LEVEL: u64 = 6 << 10;

/// Stack below V8's limit kept for the C++ that runs after V8 says "too
/// deep" and for node's own frames under the program's: an eighth of the
/// stack.
const fn margin(bytes: u64) -> u64 {
    bytes / 8
}

/// The stack a node process gets from the harness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeStack {
    /// The stack size limit node runs with, in bytes.
    pub bytes: u64,
    /// Set when the harness must raise the soft `RLIMIT_STACK` to `bytes` in
    /// the child (the current soft limit is lower).
    pub raise: bool,
    /// `--stack-size` for V8, in kB (1024 bytes): `bytes` less the margin.
    pub v8_stack_kb: u64,
}

impl NodeStack {
    /// The stack for this process's children: [`WANTED_STACK_BYTES`], or
    /// the hard limit if that is lower (an unlimited soft limit stays).
    pub fn get() -> NodeStack {
        Self::from_limits(stack_limits())
    }

    /// The stack given the current `(soft, hard)` stack limits (`None`:
    /// unknown, node keeps its defaults).
    pub fn from_limits(limits: Option<(u64, u64)>) -> NodeStack {
        let Some((soft, hard)) = limits else {
            return NodeStack {
                bytes: DEFAULT_V8_STACK_BYTES,
                raise: false,
                v8_stack_kb: DEFAULT_V8_STACK_BYTES >> 10,
            };
        };
        let bytes = WANTED_STACK_BYTES.min(hard);
        NodeStack {
            bytes,
            raise: soft < bytes,
            v8_stack_kb: (bytes - margin(bytes)) >> 10,
        }
    }

    /// The deepest nesting (open frames, the main script's scope included)
    /// a trace may have to run on this stack.
    pub fn max_nesting(&self) -> usize {
        usize::try_from((self.v8_stack_kb << 10) / BYTES_PER_LEVEL).unwrap_or(usize::MAX)
    }

    /// Give `cmd` (a node command, before its other arguments) this stack:
    /// `--stack-size`, and on Unix the raised `RLIMIT_STACK`.
    pub fn apply(&self, cmd: &mut Command) {
        if !cfg!(unix) {
            return;
        }
        cmd.arg(format!("--stack-size={}", self.v8_stack_kb));
        #[cfg(unix)]
        if self.raise {
            let bytes = self.bytes;
            // SAFETY: the closure runs in the child between fork and exec
            // and calls only `setrlimit`, which is async-signal-safe.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(cmd, move || raise_stack(bytes));
            }
        }
    }
}

/// `(soft, hard)` `RLIMIT_STACK` of this process, `u64::MAX` for unlimited.
// `rlim_t` is `u64` on Linux, not on every Unix: the conversions stay.
#[cfg(unix)]
#[allow(clippy::useless_conversion)]
fn stack_limits() -> Option<(u64, u64)> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut limit) } != 0 {
        return None;
    }
    let value = |v: libc::rlim_t| {
        if v == libc::RLIM_INFINITY {
            u64::MAX
        } else {
            u64::try_from(v).unwrap_or(u64::MAX)
        }
    };
    Some((value(limit.rlim_cur), value(limit.rlim_max)))
}

#[cfg(not(unix))]
fn stack_limits() -> Option<(u64, u64)> {
    None
}

/// Set the soft `RLIMIT_STACK` to `bytes`, keeping the hard limit.
#[cfg(unix)]
#[allow(clippy::useless_conversion)]
fn raise_stack(bytes: u64) -> std::io::Result<()> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the struct they are given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_STACK, &mut limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        limit.rlim_cur = libc::rlim_t::try_from(bytes).unwrap_or(limit.rlim_max);
        if libc::setrlimit(libc::RLIMIT_STACK, &limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_follows_the_limits() {
        // The usual Linux limits: 8 MiB soft, unlimited hard: raised to 1 GiB.
        let s = NodeStack::from_limits(Some((8 << 20, u64::MAX)));
        assert_eq!(s.bytes, WANTED_STACK_BYTES);
        assert!(s.raise);
        assert_eq!(
            s.v8_stack_kb,
            (WANTED_STACK_BYTES - WANTED_STACK_BYTES / 8) >> 10
        );
        assert!(s.max_nesting() >= 100_000, "{}", s.max_nesting());
        // Unlimited soft limit: nothing to raise.
        let s = NodeStack::from_limits(Some((u64::MAX, u64::MAX)));
        assert!(!s.raise);
        assert_eq!(s.bytes, WANTED_STACK_BYTES);
        // A hard limit of 8 MiB: that is all node gets, and the nesting
        // bound follows.
        let s = NodeStack::from_limits(Some((8 << 20, 8 << 20)));
        assert_eq!(s.bytes, 8 << 20);
        assert!(!s.raise);
        assert_eq!(s.max_nesting(), (7 << 20) / (6 << 10));
        // Unknown: node's defaults.
        let s = NodeStack::from_limits(None);
        assert_eq!(s.v8_stack_kb, 984);
    }
}
