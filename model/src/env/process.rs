//! How the process starts and stops: the command line
//! (`--no-force-async-hooks-checks`, `AsyncHooks::no_force_checks` in
//! `src/env.cc`; `--abort-on-uncaught-exception`), an ES module entry (`asyncRunEntryPointWithESMLoader`,
//! `lib/internal/modules/run_main.js`), the node version, and
//! `Environment::ExitEnv` from another thread (`src/env.cc`).

use super::async_id_stack::FrameRestore;
use super::context_frame::ContextFrame;
use super::microtasks::{Checkpoint, RunningMicrotask};
use super::{not_in_family, AsyncIdStack, Died, Environment, Frame, Refusal};
use crate::vocab::Op;

impl<S: AsyncIdStack> Environment<S> {
    /// When a process op can happen, beyond what [`Environment::enabled`]
    /// asks of every op: the checks are switched off once; the ES module
    /// entry is the main script's first act.
    #[inline]
    pub(super) fn process_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        match op {
            Op::NoForceAsyncHooksChecks if self.async_hooks.fields.k_check == 0 => {
                Err(Refusal::ChecksAlreadyOff)
            }
            Op::NodeVersion(_) if self.version_named => {
                Err(Refusal::VersionAlreadyNamed(self.version))
            }
            Op::EntryModule { .. } => match self.frames.as_slice() {
                [Frame::Native(main)] if main.pushed_ids => Ok(()),
                _ => Err(Refusal::ModuleNotFirst),
            },
            Op::NoForceAsyncHooksChecks
            | Op::NodeVersion(_)
            | Op::Stop
            | Op::AbortOnUncaughtException => Ok(()),
            _ => not_in_family(op),
        }
    }

    /// What a process op does.
    #[inline]
    pub(super) fn process_effect(&mut self, op: &Op) -> Result<(), Died> {
        match op {
            Op::NoForceAsyncHooksChecks => {
                self.async_hooks.fields.k_check -= 1;
                Ok(())
            }
            Op::EntryModule { tla } => self.enter_module(*tla),
            Op::NodeVersion(version) => {
                self.version = *version;
                self.version_named = true;
                Ok(())
            }
            Op::Stop => {
                self.is_stopping = true;
                Ok(())
            }
            Op::AbortOnUncaughtException => {
                self.async_hooks.abort_on_uncaught_exception = true;
                Ok(())
            }
            _ => not_in_family(op),
        }
    }

    /// `entry-module`: `StartExecution` opened the main-script scope
    /// (`src/node.cc`), and `asyncRunEntryPointWithESMLoader`
    /// (`lib/internal/modules/run_main.js`) runs the module body as a V8
    /// microtask job: `ModuleJob.run` evaluates it after an `await`
    /// (`lib/internal/modules/esm/module_job.js`). That job runs in the
    /// microtask checkpoint of the outermost `InternalCallbackScope::Close`
    /// (`src/api/callback.cc`), after its `pop_async_context`: Node 26's
    /// main-script scope; on v20, whose loader reads the file with
    /// `fs/promises`, the `Close` of the last file request's
    /// `InternalCallbackScope` (`FileHandle::CloseReq::Resolve`,
    /// `src/node_file.cc`), which the model does not tell apart (both at
    /// callback-scope depth 1, on an empty stack, at (0, 0)). So the main
    /// scope is popped here, and the body is a [`Frame::Microtask`] of job
    /// [`RunningMicrotask::ModuleBody`] whose checkpoint is that `Close`:
    /// while it runs, V8's `PerformCheckpoint` returns at once
    /// (`IsRunningMicrotasks()`), so `process._tickCallback()` runs ticks
    /// and no microtask, and a native scope's `Close` inside it runs
    /// neither (depth 2). The trace's `close` ends the body's job: the rest
    /// of the queue, then the rest of `Close` (the `kTotals` CHECK, the
    /// ticks). From here on the promise hooks stay off
    /// ([`super::microtasks::Microtasks::module_entry`]).
    fn enter_module(&mut self, tla: bool) -> Result<(), Died> {
        let Some(Frame::Native(main)) = self.frames.first() else {
            unreachable!("enabled checked that the main-script scope is open")
        };
        let (async_id, entered, serial) = (main.async_context.async_id, main.entered, main.serial);
        // `Close`'s pop, and the prior frame put back right after it.
        let frame = FrameRestore {
            current: &mut self.context_frame,
            prior: main.prior_context_frame.clone(),
            open: &self.frames,
        };
        S::leave_scope(&mut self.async_hooks, async_id, entered, serial, frame)?;
        let Some(Frame::Native(mut main)) = self.frames.pop() else {
            unreachable!("the main-script scope is the one frame")
        };
        main.pushed_ids = false;
        main.prior_context_frame = ContextFrame::default();
        self.microtasks.module_entry = true;
        self.microtasks.module_top_level_await = tla;
        // The checkpoint: V8 runs the job in the frame it captured (none
        // yet), and puts back the current one after it.
        self.frames.push(Frame::Microtask {
            job: RunningMicrotask::ModuleBody,
            checkpoint: Checkpoint::Close(Box::new(main)),
            prior_context_frame: ContextFrame::clone(&self.context_frame),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::vocab::{NodeVersion, Op, OpError, Runtime};
    use crate::Eager;

    /// `node-version` is given once: a second one is refused, whichever it
    /// names (before issue 51 the last one won silently).
    #[test]
    fn a_second_node_version_is_refused() {
        for (first, second) in [
            (NodeVersion::V20, NodeVersion::V26),
            (NodeVersion::V26, NodeVersion::V20),
            (NodeVersion::V20, NodeVersion::V20),
        ] {
            let mut env = Eager::new();
            assert!(env.apply(&Op::NodeVersion(first)).is_ok());
            match env.apply(&Op::NodeVersion(second)) {
                Err(OpError::Impossible(why)) => {
                    assert!(why.contains("given once"), "{why}")
                }
                other => panic!("node-version {first} then {second}: {other:?}"),
            }
            assert_eq!(env.version, first);
        }
        // A version the environment was built for is not one the trace named.
        let mut env = Eager::for_version(NodeVersion::V20);
        assert!(env.apply(&Op::NodeVersion(NodeVersion::V20)).is_ok());
    }
}
