//! `createOnGlobalUncaughtException` (`lib/internal/process/execution.js`).

use super::callback_scope::InternalCallbackScope;
use super::microtasks::RunningMicrotask;
use super::ticks::TickRun;
use super::{not_in_family, AsyncIdStack, Died, Environment, Frame, Refusal};
use crate::vocab::{Observation, Op, OpKind, ResourceView, ScopeKind, SIGTRAP};

impl<S: AsyncIdStack> Environment<S> {
    /// When `uncaught-exception` can happen, beyond what
    /// [`Environment::enabled`] asks of every op (the throw is JavaScript):
    /// in a native scope's, a tick's, a microtask's or a Timeout's callback, not while
    /// the `uncaughtException` listener runs; with a listener body, in a
    /// native scope's callback only.
    #[inline]
    pub(super) fn exceptions_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        let throws = matches!(
            op,
            Op::UncaughtException { .. } | Op::UncaughtExceptionListener
        );
        let bare =
            |f: &Frame<S>| matches!(f, Frame::Native(s) if s.kind == ScopeKind::BareMakeCallback);
        match op {
            Op::Catch if !self.exception_in_flight => Err(Refusal::NothingToCatch),
            Op::Catch => Ok(()),
            // A bare make-callback called from JavaScript has JavaScript
            // below it; only from the event loop is nothing there.
            _ if throws && self.frames.last().is_some_and(bare) && self.js_below_innermost() => {
                Err(Refusal::BareThrowGoesToCaller)
            }
            _ if throws && self.frames.iter().any(|f| matches!(f, Frame::Listener)) => {
                Err(Refusal::ThrowInListener(op))
            }
            _ if throws && self.abort_inside_reaction() => Err(Refusal::AbortInsideReaction),
            Op::UncaughtExceptionListener => match self.frames.last() {
                Some(Frame::Native(_)) => Ok(()),
                Some(f @ (Frame::Tick { .. } | Frame::Microtask { .. } | Frame::Timer { .. })) => {
                    Err(Refusal::ListenerOnlyAtNativeScope(f.name()))
                }
                Some(other) => Err(Refusal::ThrowInsideJsFrame(other.name())),
                None => Err(Refusal::NothingOpen(OpKind::UncaughtException)),
            },
            Op::EndListener => {
                self.innermost_is(OpKind::EndListener, |f| matches!(f, Frame::Listener))
            }
            Op::UncaughtException { .. } => match self.frames.last() {
                Some(Frame::Native(_)) => Ok(()),
                Some(Frame::Microtask { .. }) => Ok(()),
                Some(Frame::Tick { .. }) => Ok(()),
                Some(Frame::Timer { .. }) => Ok(()),
                Some(other) => Err(Refusal::ThrowInsideJsFrame(other.name())),
                None => Err(Refusal::NothingOpen(OpKind::UncaughtException)),
            },
            _ => not_in_family(op),
        }
    }

    /// What `uncaught-exception` does: a tick's callback threw, a
    /// microtask's callback (a promise reaction's rejects its derived
    /// promise), a Timeout's (reported at `RunTimers`' scope, which calls
    /// `processTimers` again), or the callback of the innermost native scope.
    #[inline]
    pub(super) fn exceptions_effect(&mut self, op: &Op) -> Result<(), Died> {
        if let Op::UncaughtException { .. } | Op::UncaughtExceptionListener = op {
            self.abort_at_throw()?;
        }
        // What was in flight is caught, or is the exception reported now.
        self.exception_in_flight = false;
        match op {
            Op::Catch => Ok(()),
            Op::UncaughtExceptionListener => {
                self.mark_reporting_scope();
                self.emit_uncaught_exception(true)?;
                self.frames.push(Frame::Listener);
                Ok(())
            }
            // While stopping, the termination leaves the listener and the
            // handler with it.
            Op::EndListener => {
                self.frames.pop();
                if self.is_stopping {
                    return Ok(());
                }
                self.after_uncaught_exception_listener()
            }
            Op::UncaughtException { handled } => match self.frames.last() {
                Some(Frame::Tick { .. }) => self.tick_threw(*handled),
                Some(Frame::Microtask { .. }) => self.microtask_threw(*handled),
                Some(Frame::Timer { .. }) => {
                    self.timer_threw();
                    self.on_global_uncaught_exception(*handled)
                }
                _ => self.on_global_uncaught_exception(*handled),
            },
            _ => not_in_family(op),
        }
    }

    /// `--abort-on-uncaught-exception`, and the exception is thrown in a
    /// native scope (or JS frame, or a tick run there) above a promise
    /// reaction's callback.
    fn abort_inside_reaction(&self) -> bool {
        let reaction = |f: &Frame<S>| {
            matches!(
                f,
                Frame::Microtask {
                    job: RunningMicrotask::Reaction { .. },
                    ..
                }
            )
        };
        self.async_hooks.abort_on_uncaught_exception
            && self.catching_microtask().is_none()
            && self.frames.iter().any(reaction)
    }

    /// Where an exception thrown in the innermost frame is caught: it
    /// leaves tick callbacks run by `process._tickCallback()` and JS frames
    /// until a microtask's callback (its index in the frames: the job takes
    /// it, [`Self::microtask_threw`]) or the `Close` that ran the ticks or a
    /// native scope's callback (`None`).
    pub fn catching_microtask(&self) -> Option<usize> {
        for (i, frame) in self.frames.iter().enumerate().rev() {
            match frame {
                Frame::Microtask { .. } => return Some(i),
                Frame::Tick {
                    run: TickRun::Close(_),
                    ..
                }
                | Frame::Native(_) => return None,
                _ => {}
            }
        }
        None
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// `--abort-on-uncaught-exception`: V8 aborts as the exception is thrown
    /// (`Isolate::Throw`, when it predicts no JavaScript catch, or only
    /// C++'s, and node's `ShouldAbortOnUncaughtException` agrees), before
    /// any `finally` or handler runs. Not when a microtask's callback is
    /// where it goes ([`Self::catching_microtask`]): a
    /// promise reaction's promise catches what it throws, and V8's microtask
    /// runner reports a `queueMicrotask` callback's after the job's `finally`
    /// blocks ([`Self::microtask_threw`]).
    pub(crate) fn abort_at_throw(&self) -> Result<(), Died> {
        let verbose = self.innermost_scope().is_some_and(|s| !s.napi);
        self.abort_at_throw_into(verbose)
    }

    /// [`Self::abort_at_throw`] for a throw into a `TryCatch` that is
    /// `verbose` or not. V8's walk stops at a non-verbose external
    /// `TryCatch` (an external catch: abort); past a verbose one it goes on
    /// into the JavaScript below, where a `napi-make-callback`'s caller
    /// catches what `napi_make_callback` hands back: no abort, the
    /// exception is reported as without the flag.
    pub(crate) fn abort_at_throw_into(&self, verbose: bool) -> Result<(), Died> {
        let caught_below = verbose && self.native_scopes().skip(1).any(|s| s.napi);
        if self.async_hooks.abort_on_uncaught_exception
            && self.catching_microtask().is_none()
            && !caught_below
        {
            return Err(Died(Observation::Aborted(SIGTRAP)));
        }
        Ok(())
    }

    /// The scopes whose `Close` has not finished, innermost first: the open
    /// native scopes and those running ticks or a checkpoint.
    fn native_scopes(&self) -> impl Iterator<Item = &InternalCallbackScope<S>> {
        self.frames.iter().rev().filter_map(Frame::held_scope)
    }

    /// The innermost of [`Self::native_scopes`]: whose `TryCatch` a throw
    /// meets first.
    fn innermost_scope(&self) -> Option<&InternalCallbackScope<S>> {
        self.native_scopes().next()
    }

    /// The handler C++ calls for an uncaught exception: clear the default
    /// trigger id; unhandled, exit with 1; handled, `setImmediate(noop)` (an
    /// id and an init hook of type Immediate), then run `after` for every
    /// entry (`emitAfter(executionAsyncId())`, or `popAsyncContext(0)` for id
    /// 0) while `hasAsyncIdStack()` when after hooks exist, then
    /// `clearAsyncIdStack()`. Whether the scope is marked failed, and whether
    /// JS goes on in it, depends on who opened it (below).
    pub(crate) fn on_global_uncaught_exception(&mut self, handled: bool) -> Result<(), Died> {
        if handled {
            self.mark_reporting_scope();
        }
        self.uncaught_exception_handler(handled)
    }

    /// What the exception does to the innermost native scope, whose
    /// callback threw it (not for one a microtask's job threw: V8 reports
    /// that from its checkpoint, and the scope's callback goes on).
    fn mark_reporting_scope(&mut self) {
        if let Some(Frame::Native(scope)) = self.frames.last_mut() {
            // Who marks the scope failed, and whether its JS goes on, is the
            // entry point's: the main script's body stops (bare scope, not
            // failed); `InternalMakeCallback` sees the empty result, marks it
            // failed and returns; `node::CallbackScope`'s `TryCatch` marks it
            // failed at destruction, and the addon may call JS again before;
            // `RunTimers` loops on (bare scope, not failed).
            scope.handled_exception = true;
            scope.threw = scope.main_script || scope.kind.makes_callback();
            scope.failed = !scope.is_bare();
        }
    }

    /// `createOnGlobalUncaughtException`'s handler itself
    /// (`lib/internal/process/execution.js`), as
    /// [`Self::on_global_uncaught_exception`] describes it.
    pub(crate) fn uncaught_exception_handler(&mut self, handled: bool) -> Result<(), Died> {
        self.emit_uncaught_exception(handled)?;
        self.after_uncaught_exception_listener()
    }

    /// The handler up to the listener: `clearDefaultTriggerAsyncId()`, then
    /// `process.emit('uncaughtException')`, which exits with 1 when no
    /// listener handles it.
    fn emit_uncaught_exception(&mut self, handled: bool) -> Result<(), Died> {
        // The program's listener is now what this exception found.
        self.rejections.uncaught_listener = handled;
        self.async_hooks.async_id_fields.k_default_trigger_async_id = -1;
        if !handled {
            return Err(Died(Observation::Exit(1)));
        }
        Ok(())
    }

    /// The handler after its listener returned: `setImmediate(noop)`, the
    /// `after` loop, `clearAsyncIdStack()`.
    fn after_uncaught_exception_listener(&mut self) -> Result<(), Died> {
        // `require('timers').setImmediate(noop)`: the Immediate takes an id
        // (`initAsyncResource`, lib/internal/timers.js).
        let async_id = self.new_async_id();
        let trigger_async_id = self.get_default_trigger_async_id();
        self.emit_init_script(
            async_id,
            "Immediate",
            trigger_async_id,
            Some(ResourceView::Immediate(async_id)),
        );
        if self.async_hooks.fields.k_after > 0 {
            loop {
                let depth = self.async_hooks.depth();
                let async_id = self.async_hooks.async_id_fields.k_execution_async_id;
                if async_id == 0 {
                    self.pop_async_context_js(0)?;
                } else {
                    self.emit_after_script(async_id)?;
                }
                if !self.has_async_id_stack() {
                    break;
                }
                // Every pass pops one entry of a correct store; one that pops
                // nothing would spin forever in Node. Report it as a failure
                // of that store instead of hanging the harness.
                assert!(
                    self.async_hooks.depth() < depth,
                    "the uncaught-exception loop pops nothing: Node would hang here"
                );
            }
        }
        self.async_hooks.cost.crossings += 1;
        S::clear_async_id_stack(&mut self.async_hooks, true);
        Ok(())
    }
}
