//! `process.nextTick` and `processTicksAndRejections`
//! (`lib/internal/process/task_queues.js`).

use super::callback_scope::InternalCallbackScope;
use super::context_frame::ContextFrame;
use super::microtasks::Checkpoint;
use super::{not_in_family, AsyncIdStack, Died, Environment, Frame, Refusal};
use crate::vocab::{AsyncId, Observation, Op, OpKind, ResourceView};
use std::collections::VecDeque;

/// A queued tick object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TickObject {
    /// `tickObject[async_id_symbol]`.
    pub async_id: AsyncId,
    /// `tickObject[trigger_async_id_symbol]`.
    pub trigger_async_id: AsyncId,
    /// The callback also calls `executionAsyncResource()`.
    pub query_resource: bool,
    /// `this[async_context_frame] = AsyncContextFrame.current()` (Node 26).
    pub context_frame: ContextFrame,
    /// The callback has a body (`next-tick-body`): the ops after the one
    /// that runs it are inside it, up to `end-tick`.
    pub body: bool,
    /// The callback is `doEmitWarning` (`process.emitWarning`,
    /// `lib/internal/process/warning.js`), not the trace's: it records
    /// nothing (the program runs with `--no-warnings`, so no listener
    /// writes the warning).
    pub warning: bool,
}

/// Who called the tick callback (`processTicksAndRejections`), and so where
/// a run returns when the queue is empty.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TickRun<S: AsyncIdStack> {
    /// The outermost `InternalCallbackScope::Close` (`src/api/callback.cc`)
    /// called `tick_callback_function()`: the scope, still alive (the
    /// callback-scope depth counts it), finishes its `Close` and its
    /// destructor when the run ends.
    Close(Box<InternalCallbackScope<S>>),
    /// JS called `process._tickCallback()` (`runNextTicks`).
    TickCallback,
}

/// The tick `queue` and `tickInfo[kHasTickScheduled]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TickQueue {
    /// `queue` (a `FixedQueue`).
    pub queue: VecDeque<TickObject>,
    /// `tickInfo[kHasTickScheduled]`.
    pub has_tick_scheduled: bool,
}

impl<S: AsyncIdStack> Environment<S> {
    /// When a tick op can happen, beyond what [`Environment::enabled`] asks
    /// of every op: `end-tick` ends the innermost frame, a tick's callback.
    #[inline]
    pub(super) fn ticks_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        match op {
            Op::EndTick => self.innermost_is(OpKind::EndTick, |f| matches!(f, Frame::Tick { .. })),
            Op::NextTick { .. } | Op::NextTickBody | Op::TickCallback => Ok(()),
            _ => not_in_family(op),
        }
    }

    /// What a tick op does.
    #[inline]
    pub(super) fn ticks_effect(&mut self, op: &Op) -> Result<(), Died> {
        match op {
            Op::NextTick { query_resource } => {
                self.next_tick(*query_resource, false);
                Ok(())
            }
            Op::NextTickBody => {
                self.next_tick(false, true);
                Ok(())
            }
            Op::EndTick => self.end_tick(),
            Op::TickCallback => self.run_next_ticks(),
            _ => not_in_family(op),
        }
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// `nextTick(callback)`: capture `newAsyncId()` and
    /// `getDefaultTriggerAsyncId()`, emit init (`TickObject`), queue it.
    pub(crate) fn next_tick(&mut self, query_resource: bool, body: bool) {
        self.queue_tick(query_resource, body, false);
    }

    /// `process.nextTick(doEmitWarning, warning)` in `process.emitWarning`.
    pub(crate) fn warning_tick(&mut self) {
        self.queue_tick(false, false, true);
    }

    /// `nextTick`, for a callback of the trace or a warning's.
    fn queue_tick(&mut self, query_resource: bool, body: bool, warning: bool) {
        if self.ticks.queue.is_empty() {
            self.ticks.has_tick_scheduled = true;
        }
        let (async_id, trigger_async_id, context_frame) =
            self.init_core_resource("TickObject", ResourceView::TickObject);
        self.ticks.queue.push_back(TickObject {
            async_id,
            trigger_async_id,
            query_resource,
            context_frame,
            body,
            warning,
        });
    }

    /// `processTicksAndRejections()` (`lib/internal/process/task_queues.js`),
    /// from where the queue stands: each tick between `emitBefore` and
    /// `emitAfter`, with `emitDestroy` in the `finally` when destroy hooks
    /// exist (v20's `destroyHooksExist()`; Node 26 calls `emitDestroy`, which
    /// checks the same count). On Node 26 each tick runs in its own frame,
    /// exchanged in before `emitBefore`; the prior one is set back after
    /// `emitAfter` (not in a `finally`). A tick with a body (`next-tick-body`) stops
    /// the run inside its callback: a [`Frame::Tick`] is pushed, and the ops
    /// that follow run in the callback until `end-tick` ([`Self::end_tick`])
    /// resumes the run, or an exception leaves it ([`Self::tick_threw`]).
    /// When the queue is empty: `runMicrotasks()` (which may stop in a
    /// microtask's body, [`Checkpoint::TickRun`]), then the do-while
    /// ([`Self::tick_run_after_microtasks`]).
    pub(crate) fn process_ticks_and_rejections(&mut self, run: TickRun<S>) -> Result<(), Died> {
        while let Some(tock) = self.ticks.queue.pop_front() {
            let async_id = tock.async_id;
            let prior_context_frame =
                std::mem::replace(&mut *self.context_frame, tock.context_frame.clone());
            self.emit_before_script(
                async_id,
                tock.trigger_async_id,
                Some(ResourceView::TickObject(async_id)),
            )?;
            if !tock.warning {
                self.tick_sees(&tock);
            }
            if tock.body {
                self.frames.push(Frame::Tick {
                    tick: tock,
                    run,
                    prior_context_frame,
                });
                return Ok(());
            }
            self.tick_finally(async_id);
            self.emit_after_script(async_id)?;
            *self.context_frame = prior_context_frame;
        }
        // runMicrotasks(), which may stop in a microtask's body
        // (`Checkpoint::TickRun`); then the do-while.
        match self.run_microtasks(Checkpoint::TickRun(run))? {
            Some(Checkpoint::TickRun(run)) => self.tick_run_after_microtasks(run),
            Some(_) => unreachable!("run_microtasks gives its site back"),
            None => Ok(()),
        }
    }

    /// The end of `processTicksAndRejections`' `do { } while
    /// (!queue.isEmpty() || processPromiseRejections())` after
    /// `runMicrotasks()` (Node 26 first tests `hasRejectionToWarn()`, set
    /// whenever one is pending): a microtask may have queued a tick, or a
    /// rejection was reported, and the run goes round again; else
    /// `setHasTickScheduled(false)`, `setHasRejectionToWarn(false)` and the
    /// run returns to its caller ([`TickRun`]).
    pub(crate) fn tick_run_after_microtasks(&mut self, run: TickRun<S>) -> Result<(), Died> {
        if !self.ticks.queue.is_empty() || self.process_promise_rejections()? {
            return self.process_ticks_and_rejections(run);
        }
        self.ticks.has_tick_scheduled = false;
        self.rejections.has_rejection_to_warn = false;
        match run {
            TickRun::TickCallback => Ok(()),
            TickRun::Close(scope) => {
                self.finish_close(*scope, false);
                Ok(())
            }
        }
    }

    /// What the callback of a trace's tick records: the ids (and the
    /// resource), then every storage's store.
    fn tick_sees(&mut self, tock: &TickObject) {
        let async_id = tock.async_id;
        let ids = &self.async_hooks.async_id_fields;
        let (execution_async_id, trigger_async_id) =
            (ids.k_execution_async_id, ids.k_trigger_async_id);
        let resource = tock.query_resource.then(|| self.execution_async_resource());
        self.out.push(Observation::Tick {
            async_id,
            execution_async_id,
            trigger_async_id,
            resource,
        });
        for (als, value) in self.stores_seen() {
            self.out.push(Observation::TickStore {
                async_id,
                als,
                value,
            });
        }
    }

    /// `runNextTicks()` (`process._tickCallback`): the microtasks when no
    /// tick is scheduled and no rejection is to be reported, then
    /// `processTicksAndRejections` if one is.
    pub(crate) fn run_next_ticks(&mut self) -> Result<(), Died> {
        let nothing =
            |env: &Self| !env.ticks.has_tick_scheduled && !env.rejections.has_rejection_to_warn;
        if nothing(self) && self.run_microtasks(Checkpoint::NextTicks)?.is_none() {
            return Ok(());
        }
        self.next_ticks_after_microtasks()
    }

    /// The rest of `runNextTicks()` after its `runMicrotasks()`: return if
    /// no tick is scheduled and no rejection is to be reported, else
    /// `processTicksAndRejections()`.
    pub(crate) fn next_ticks_after_microtasks(&mut self) -> Result<(), Died> {
        if !self.ticks.has_tick_scheduled && !self.rejections.has_rejection_to_warn {
            return Ok(());
        }
        self.process_ticks_and_rejections(TickRun::TickCallback)
    }

    /// The `finally` around a tick's callback: `emitDestroy(asyncId)` when
    /// destroy hooks exist (queued only).
    fn tick_finally(&mut self, async_id: AsyncId) {
        if self.async_hooks.fields.k_destroy > 0 {
            self.emit_destroy_script(async_id);
        }
    }

    /// `end-tick`: the innermost tick's callback returns. Its `finally`
    /// (`emitDestroy`), `emitAfter(asyncId)`, `AsyncContextFrame.set(prior)`,
    /// and the run goes on with the next tick. While the environment is stopping the callback was
    /// terminated instead: no `finally`, no `emitAfter`, the run is over,
    /// and a `Close` that called it sees the empty result (`failed_`) and
    /// clears the stack (`perform_stopping_check`).
    pub(crate) fn end_tick(&mut self) -> Result<(), Died> {
        let Some(Frame::Tick {
            tick,
            run,
            prior_context_frame,
        }) = self.frames.pop()
        else {
            unreachable!("enabled checked that the innermost frame is a tick")
        };
        if self.is_stopping {
            if let TickRun::Close(scope) = run {
                self.finish_close(*scope, true);
            }
            return Ok(());
        }
        self.tick_finally(tick.async_id);
        self.emit_after_script(tick.async_id)?;
        *self.context_frame = prior_context_frame;
        self.process_ticks_and_rejections(run)
    }

    /// `uncaught-exception` while the innermost frame is a tick's callback:
    /// the callback threw. Its `finally` runs (`emitDestroy`), its
    /// `emitAfter` and the frame's restore do not (they are not in a
    /// `finally`), and the exception
    /// leaves `processTicksAndRejections` with the rest of the queue
    /// waiting (`kHasTickScheduled` stays set). If `Close` called the tick
    /// callback, V8 reports the exception as `Call` returns into C++
    /// (`onGlobalUncaughtException`), and `Close` sets `failed_`, runs
    /// `perform_stopping_check` and returns. If JS called
    /// `process._tickCallback()`, the exception goes on through that JS:
    /// the `finally` blocks of the frames it leaves run (an enclosing tick
    /// throws in turn) until it reaches a native scope, where it is reported
    /// as any exception there (`on_global_uncaught_exception`), or a
    /// microtask's callback, which throws it as its own (`microtask_threw`).
    pub(crate) fn tick_threw(&mut self, handled: bool) -> Result<(), Died> {
        loop {
            match self.frames.pop() {
                Some(Frame::Tick { tick, run, .. }) => {
                    self.tick_finally(tick.async_id);
                    if let TickRun::Close(scope) = run {
                        self.on_global_uncaught_exception(handled)?;
                        self.finish_close(*scope, true);
                        return Ok(());
                    }
                }
                Some(Frame::RunInAsyncScope {
                    async_id,
                    prior_context_frame,
                }) => {
                    *self.context_frame = prior_context_frame;
                    self.run_in_async_scope_finally(async_id)?;
                }
                Some(Frame::AlsRun { als, restore }) => self.als_run_finally(als, restore),
                Some(Frame::DefaultTriggerScope {
                    old_default_trigger_async_id,
                }) => {
                    self.async_hooks.async_id_fields.k_default_trigger_async_id =
                        old_default_trigger_async_id;
                }
                Some(native @ Frame::Native(_)) => {
                    self.frames.push(native);
                    return self.on_global_uncaught_exception(handled);
                }
                Some(microtask @ Frame::Microtask { .. }) => {
                    // `process._tickCallback()` ran the tick in a microtask's
                    // callback: the exception goes on out of that callback.
                    self.frames.push(microtask);
                    return self.microtask_threw(handled);
                }
                Some(timer @ Frame::Timer { .. }) => {
                    // `process._tickCallback()` in a Timeout's callback: the
                    // exception leaves it, and reaches RunTimers' scope.
                    self.frames.push(timer);
                    self.timer_threw();
                }
                Some(Frame::Listener) => {
                    unreachable!("an exception while the listener runs is refused")
                }
                None => unreachable!("JavaScript runs only inside a native scope or a Close"),
            }
        }
    }
}
