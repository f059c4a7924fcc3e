//! Child processes that cannot hang the tool: `conform` runs node (its
//! probes, each program) and the compiler through [`run`] or
//! [`run_streaming`].
//!
//! Each child runs in a process group of its own, under a time limit; the
//! group is killed with SIGKILL when the limit passes, when SIGINT or
//! SIGTERM asks the tool to stop ([`crate::interrupt`]), when the child
//! prints more than its bound, and as soon as the child itself has ended,
//! so that a process it left behind (`sleep &` in a wrapper script) cannot
//! keep its output open. Output is read as it comes (`poll(2)`, no
//! threads), stdin is written as the child reads it, and every path ends
//! with the group killed and the child reaped.

use std::io::{self, Read};
use std::process::{Command, ExitStatus};
use std::time::Duration;

/// Bounds of one child process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall time from the start; then the group is killed.
    pub timeout: Duration,
    /// Bytes the child may write to stdout; past that it is killed.
    pub max_stdout: u64,
    /// Bytes the child may write to stderr; past that it is killed.
    pub max_stderr: u64,
}

impl Limits {
    /// `timeout`, with 64 MiB for stdout and 16 MiB for stderr.
    pub fn new(timeout: Duration) -> Limits {
        Limits {
            timeout,
            max_stdout: 64 << 20,
            max_stderr: 16 << 20,
        }
    }
}

/// How long the output may stay open after the child has ended and its
/// group was killed: only a process that left the group (`setsid`) can
/// hold it that long.
pub const GRACE: Duration = Duration::from_secs(2);

/// Why a child did not run to its end.
#[derive(Debug)]
pub enum Failure {
    /// It could not be started.
    Spawn(io::Error),
    /// It ran past its time limit; the group was killed.
    TimedOut(Duration),
    /// It wrote more than its bound to `stream` (`stdout`, `stderr`); the
    /// group was killed.
    TooMuchOutput {
        /// Which stream.
        stream: &'static str,
        /// The bound, in bytes.
        limit: u64,
    },
    /// SIGINT or SIGTERM (the signal's number) asked the tool to stop; the
    /// group was killed.
    Interrupted(i32),
    /// The child ended, but its output stayed open [`GRACE`] after its
    /// group was killed: a process outside the group holds it.
    OutputHeld,
    /// Reading, writing or waiting failed.
    Io(io::Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Spawn(e) => write!(f, "cannot start it: {e}"),
            Failure::TimedOut(t) => write!(
                f,
                "it ran past its time limit of {} s and was killed with its process group",
                t.as_secs_f64()
            ),
            Failure::TooMuchOutput { stream, limit } => write!(
                f,
                "it wrote more than {} MiB to {stream} and was killed with its process group",
                limit >> 20
            ),
            Failure::Interrupted(signal) => {
                write!(f, "interrupted (signal {signal}); it was killed with its process group")
            }
            Failure::OutputHeld => write!(
                f,
                "it ended, but its output was still open {} s later: a process it started outside its process group holds it",
                GRACE.as_secs()
            ),
            Failure::Io(e) => write!(f, "I/O with it failed: {e}"),
        }
    }
}

/// A child that did not run to its end, and what it had written.
#[derive(Debug)]
pub struct RunError {
    /// Why.
    pub failure: Failure,
    /// Its stdout so far ([`run`] only; [`run_streaming`] passed it on).
    pub stdout: Vec<u8>,
    /// Its stderr so far (at most the bound).
    pub stderr: Vec<u8>,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.failure.fmt(f)
    }
}

impl std::error::Error for RunError {}

/// How a child that ran to its end ended.
#[derive(Debug)]
pub struct Output {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
}

/// Run `command` with `stdin` (none: `/dev/null`) within `limits`, and
/// collect its output (at most the bounds).
pub fn run(
    command: &mut Command,
    stdin: Option<&[u8]>,
    limits: &Limits,
) -> Result<Output, RunError> {
    let mut stdout = Vec::new();
    let mut input = stdin;
    let result = run_streaming(
        command,
        input.as_mut().map(|b| b as &mut dyn Read),
        &mut |chunk| stdout.extend_from_slice(chunk),
        limits,
    );
    match result {
        Ok((status, stderr)) => Ok(Output {
            status,
            stdout,
            stderr,
        }),
        Err(mut e) => {
            e.stdout = stdout;
            Err(e)
        }
    }
}

/// Run `command` within `limits`: `stdin` (none: `/dev/null`) is copied to
/// the child as it reads it, each chunk of its stdout is handed to
/// `on_stdout` as it comes (nothing of it is kept here), its stderr is
/// kept (at most the bound). The exit status and the stderr.
#[cfg(unix)]
pub fn run_streaming(
    command: &mut Command,
    stdin: Option<&mut dyn Read>,
    on_stdout: &mut dyn FnMut(&[u8]),
    limits: &Limits,
) -> Result<(ExitStatus, Vec<u8>), RunError> {
    unix::run_streaming(command, stdin, on_stdout, limits)
}

/// [`run_streaming`] where there are no process groups: no time limit,
/// output collected whole.
#[cfg(not(unix))]
pub fn run_streaming(
    command: &mut Command,
    stdin: Option<&mut dyn Read>,
    on_stdout: &mut dyn FnMut(&[u8]),
    _limits: &Limits,
) -> Result<(ExitStatus, Vec<u8>), RunError> {
    use std::io::Write;
    use std::process::Stdio;
    let fail = |e| RunError {
        failure: Failure::Io(e),
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    let mut input = Vec::new();
    if let Some(r) = stdin {
        r.read_to_end(&mut input).map_err(fail)?;
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| RunError {
            failure: Failure::Spawn(e),
            stdout: Vec::new(),
            stderr: Vec::new(),
        })?;
    if let Some(mut w) = child.stdin.take() {
        let _ = w.write_all(&input);
    }
    let out = child.wait_with_output().map_err(fail)?;
    on_stdout(&out.stdout);
    Ok((out.status, out.stderr))
}

#[cfg(unix)]
mod unix {
    use super::{Failure, Limits, RunError, GRACE};
    use std::io::{self, Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, ExitStatus, Stdio};
    use std::time::{Duration, Instant};

    /// How long one `poll` waits before the clocks and the flags are looked at.
    const TICK_MS: i32 = 20;

    /// The child and its process group: killed and reaped when dropped,
    /// whatever path leaves.
    struct Group {
        child: Child,
        reaped: bool,
        /// Its slot in [`crate::interrupt`]'s registry of groups, which a
        /// second SIGINT or SIGTERM kills before the tool exits.
        slot: Option<usize>,
    }

    impl Group {
        /// SIGKILL to every process of the group. Sent only while the
        /// leader is not reaped, so the group id cannot have been reused.
        fn kill(&self) {
            if self.reaped {
                return;
            }
            if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
                // SAFETY: kill(2) with a negative pid signals that process group.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
        }

        /// Whether the leader has ended, without reaping it.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        fn ended(&mut self) -> io::Result<bool> {
            let pid = libc::id_t::from(self.child.id());
            // SAFETY: waitid writes the siginfo it is given; WNOWAIT leaves
            // the child waitable.
            unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
                if libc::waitid(libc::P_PID, pid, &mut info, flags) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(info.si_pid() != 0)
            }
        }

        /// Whether the leader has ended (reaped: other Unixes).
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        fn ended(&mut self) -> io::Result<bool> {
            Ok(self.child.try_wait()?.is_some())
        }

        /// Kill what is left of the group and reap the leader (taken off
        /// the registry first, while its id cannot be reused).
        fn finish(&mut self) -> io::Result<ExitStatus> {
            self.kill();
            if let Some(slot) = self.slot.take() {
                crate::interrupt::unregister_child(slot);
            }
            let status = self.child.wait();
            self.reaped = true;
            status
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            if !self.reaped {
                let _ = self.finish();
            }
        }
    }

    fn nonblocking(fd: i32) -> io::Result<()> {
        // SAFETY: fcntl on a descriptor this process owns.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Read what `pipe` has now, until `total` passes `max`; `Ok(false)`
    /// at its end.
    fn drain(
        pipe: &mut impl Read,
        buf: &mut [u8],
        total: &mut u64,
        max: u64,
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<bool> {
        loop {
            match pipe.read(buf) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    *total += n as u64;
                    sink(&buf[..n]);
                    if *total > max {
                        return Ok(true);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    pub(super) fn run_streaming(
        command: &mut Command,
        mut stdin: Option<&mut dyn Read>,
        on_stdout: &mut dyn FnMut(&[u8]),
        limits: &Limits,
    ) -> Result<(ExitStatus, Vec<u8>), RunError> {
        let mut stderr = Vec::new();
        let child = command
            .process_group(0)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(e) => {
                return Err(RunError {
                    failure: Failure::Spawn(e),
                    stdout: Vec::new(),
                    stderr,
                })
            }
        };
        let slot = i32::try_from(child.id())
            .ok()
            .and_then(crate::interrupt::register_child);
        let mut group = Group {
            child,
            reaped: false,
            slot,
        };
        let result = pump(&mut group, &mut stdin, on_stdout, &mut stderr, limits);
        let status = group.finish();
        match (result, status) {
            (Ok(()), Ok(status)) => Ok((status, stderr)),
            (Ok(()), Err(e)) => Err(RunError {
                failure: Failure::Io(e),
                stdout: Vec::new(),
                stderr,
            }),
            (Err(failure), _) => Err(RunError {
                failure,
                stdout: Vec::new(),
                stderr,
            }),
        }
    }

    /// Move the bytes until the child has ended and its output is closed,
    /// or until a limit, a signal or an error stops it.
    fn pump(
        group: &mut Group,
        stdin: &mut Option<&mut dyn Read>,
        on_stdout: &mut dyn FnMut(&[u8]),
        stderr: &mut Vec<u8>,
        limits: &Limits,
    ) -> Result<(), Failure> {
        let mut child_in = group.child.stdin.take();
        let mut out = group.child.stdout.take();
        let mut err = group.child.stderr.take();
        for fd in [
            child_in.as_ref().map(AsRawFd::as_raw_fd),
            out.as_ref().map(AsRawFd::as_raw_fd),
            err.as_ref().map(AsRawFd::as_raw_fd),
        ]
        .into_iter()
        .flatten()
        {
            nonblocking(fd).map_err(Failure::Io)?;
        }
        let start = Instant::now();
        let mut ended_at: Option<Instant> = None;
        let mut buf = vec![0u8; 64 << 10];
        let mut pending: Vec<u8> = Vec::new();
        let mut written = 0usize;
        let (mut out_len, mut err_len) = (0u64, 0u64);
        loop {
            if let Some(signal) = crate::interrupt::requested() {
                return Err(Failure::Interrupted(signal));
            }
            match ended_at {
                None if start.elapsed() > limits.timeout => {
                    return Err(Failure::TimedOut(limits.timeout))
                }
                Some(_) if out.is_none() && err.is_none() => return Ok(()),
                Some(t) if t.elapsed() > GRACE => return Err(Failure::OutputHeld),
                _ => {}
            }
            // The next chunk of stdin, once the last one is written.
            if child_in.is_some() && written == pending.len() {
                pending.resize(64 << 10, 0);
                let n = match stdin.as_mut() {
                    Some(r) => r.read(&mut pending).map_err(Failure::Io)?,
                    None => 0,
                };
                pending.truncate(n);
                written = 0;
                if n == 0 {
                    child_in = None;
                }
            }
            let mut fds: Vec<libc::pollfd> = Vec::with_capacity(3);
            let entry = |fd: i32, events: i16| libc::pollfd {
                fd,
                events,
                revents: 0,
            };
            if let Some(w) = &child_in {
                fds.push(entry(w.as_raw_fd(), libc::POLLOUT));
            }
            if let Some(r) = &out {
                fds.push(entry(r.as_raw_fd(), libc::POLLIN));
            }
            if let Some(r) = &err {
                fds.push(entry(r.as_raw_fd(), libc::POLLIN));
            }
            if fds.is_empty() {
                std::thread::sleep(Duration::from_millis(TICK_MS as u64));
            } else {
                // SAFETY: poll reads and writes the array it is given, of
                // the length given.
                let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, TICK_MS) };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(Failure::Io(e));
                    }
                }
            }
            let ready = |fd: i32| fds.iter().any(|p| p.fd == fd && p.revents != 0);
            if let Some(w) = child_in.as_mut() {
                if ready(w.as_raw_fd()) {
                    match w.write(&pending[written..]) {
                        Ok(n) => written += n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        // The child does not read its stdin (any more).
                        Err(_) => child_in = None,
                    }
                }
            }
            if let Some(r) = out.as_mut() {
                if ready(r.as_raw_fd()) {
                    let open = drain(r, &mut buf, &mut out_len, limits.max_stdout, on_stdout)
                        .map_err(Failure::Io)?;
                    if out_len > limits.max_stdout {
                        return Err(Failure::TooMuchOutput {
                            stream: "stdout",
                            limit: limits.max_stdout,
                        });
                    }
                    if !open {
                        out = None;
                    }
                }
            }
            if let Some(r) = err.as_mut() {
                if ready(r.as_raw_fd()) {
                    let max = limits.max_stderr;
                    let open = drain(r, &mut buf, &mut err_len, max, &mut |chunk| {
                        let room = (max as usize).saturating_sub(stderr.len());
                        stderr.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    })
                    .map_err(Failure::Io)?;
                    if err_len > max {
                        return Err(Failure::TooMuchOutput {
                            stream: "stderr",
                            limit: max,
                        });
                    }
                    if !open {
                        err = None;
                    }
                }
            }
            if ended_at.is_none() && group.ended().map_err(Failure::Io)? {
                // What it left behind in its group goes now: its output
                // then closes, unless something outside the group holds it.
                ended_at = Some(Instant::now());
                group.kill();
                child_in = None;
            }
        }
    }
}

/// A time limit from the environment variable `name` (seconds, a decimal
/// number above 0), else `default`.
pub fn timeout_from_env(name: &str, default: Duration) -> Duration {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(default, Duration::from_secs_f64)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::Instant;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn output_and_status_come_back() {
        let out = run(
            &mut sh("cat; echo err >&2; exit 3"),
            Some(b"hello"),
            &Limits::new(Duration::from_secs(10)),
        )
        .expect("it runs");
        assert_eq!(out.stdout, b"hello");
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn a_sleeper_is_killed_at_its_time_limit() {
        let start = Instant::now();
        let e = run(
            &mut sh("echo started; sleep 30"),
            None,
            &Limits::new(Duration::from_millis(300)),
        )
        .expect_err("it times out");
        assert!(matches!(e.failure, Failure::TimedOut(_)), "{e}");
        assert_eq!(e.stdout, b"started\n");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_child_left_holding_the_output_does_not_hang_the_run() {
        // The shell ends at once; the sleeper it forked keeps stdout open.
        let start = Instant::now();
        let out = run(
            &mut sh("sleep 30 & echo done"),
            None,
            &Limits::new(Duration::from_secs(20)),
        )
        .expect("it ends when the shell does");
        assert_eq!(out.stdout, b"done\n");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn too_much_output_is_cut_and_reported() {
        let limits = Limits {
            max_stdout: 1 << 20,
            ..Limits::new(Duration::from_secs(20))
        };
        let e = run(&mut sh("yes"), None, &limits).expect_err("it prints without end");
        assert!(
            matches!(
                e.failure,
                Failure::TooMuchOutput {
                    stream: "stdout",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.stdout.len() < (1 << 20) + (64 << 10) + 1);
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let e = run(
            &mut Command::new("/nonexistent/scopecheck-no-such-program"),
            None,
            &Limits::new(Duration::from_secs(1)),
        )
        .expect_err("no such program");
        assert!(matches!(e.failure, Failure::Spawn(_)), "{e}");
    }
}
