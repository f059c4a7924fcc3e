//! How the process starts and stops: the command line
//! (`--no-force-async-hooks-checks`, `AsyncHooks::no_force_checks` in
//! `src/env.cc`; `--abort-on-uncaught-exception`), an ES module entry (`asyncRunEntryPointWithESMLoader`,
//! `lib/internal/modules/run_main.js`), the node version, and
//! `Environment::ExitEnv` from another thread (`src/env.cc`).

use super::async_id_stack::FrameRestore;
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
            Op::EntryModule => match self.frames.as_slice() {
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
            Op::EntryModule => self.enter_module(),
            Op::NodeVersion(version) => {
                self.version = *version;
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

    /// `entry-module`: `StartExecution` opened the main-script scope and the
    /// ES module loader runs the module body in the microtask checkpoint of
    /// that scope's `Close`, after its `pop_async_context(1)`: the frame
    /// stays (depth 1), its context is gone, and its close does the rest of
    /// `Close` (the `kTotals` CHECK, the ticks).
    fn enter_module(&mut self) -> Result<(), Died> {
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
        if let Some(Frame::Native(main)) = self.frames.first_mut() {
            main.pushed_ids = false;
        }
        Ok(())
    }
}
