//! Unhandled promise rejections (`lib/internal/process/promises.js`): V8's
//! promise reject callback (`promiseRejectHandler`, then
//! `unhandledRejection`), `tickInfo[kHasRejectionToWarn]`, and
//! `processPromiseRejections`, which `processTicksAndRejections` calls
//! after its microtasks, with the mode of `--unhandled-rejections`
//! (`unhandled-rejections`; `throw` by default, with the program's
//! `unhandledRejection` listener, so that nothing throws).

use super::context_frame::ContextFrame;
use super::microtasks::{Microtask, PromiseIds};
use super::resources::{NativeSlot, ScopeSerial};
use super::{not_in_family, AsyncIdStack, Died, Environment, Frame, Refusal};
use crate::vocab::{NodeVersion, Observation, Op, RejectionsMode, ResourceView, SIGABRT};

/// The rejections not reported yet, the flag that makes an outermost
/// `Close` call the tick callback with no tick queued, and what reporting
/// one does (the mode, the program's listeners).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rejections {
    /// `pendingUnhandledRejections`: each rejected promise's ids, if
    /// `trackPromise` gave it some.
    pub pending: Vec<PromiseIds>,
    /// `tickInfo[kHasRejectionToWarn]`.
    pub has_rejection_to_warn: bool,
    /// `unhandledRejectionsMode` (`--unhandled-rejections`).
    pub mode: RejectionsMode,
    /// The program has an `unhandledRejection` listener (`process.emit`
    /// returns true).
    pub listener: bool,
    /// The program has an `uncaughtException` listener: given by the
    /// header, then whatever the last `uncaught-exception` said.
    pub uncaught_listener: bool,
    /// The last rejection `processPromiseRejections` reported
    /// (`maybeUnhandledPromises`, `warned`) and no handler was attached to
    /// since: the one `promise-catch` handles when none is pending (the
    /// earlier reported ones are out of the trace's reach).
    pub reported: Option<PromiseIds>,
    /// `asyncHandledRejections`: reported rejections handled since, each a
    /// `rejectionHandled` at the next `processPromiseRejections`.
    pub handled_late: Vec<PromiseIds>,
}

impl Default for Rejections {
    /// The program without the header: `throw`, an `unhandledRejection`
    /// listener, no `uncaughtException` listener.
    fn default() -> Self {
        Rejections {
            pending: Vec::new(),
            has_rejection_to_warn: false,
            mode: RejectionsMode::Throw,
            listener: true,
            uncaught_listener: false,
            reported: None,
            handled_late: Vec::new(),
        }
    }
}

impl Rejections {
    /// Reporting a rejection runs `triggerUncaughtException`: `strict`, or
    /// `throw` with no `unhandledRejection` listener.
    pub fn throws(&self) -> bool {
        match self.mode {
            RejectionsMode::Strict => true,
            RejectionsMode::Throw => !self.listener,
            _ => false,
        }
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// When `promise-reject` can happen: whenever JavaScript can run
    /// ([`Environment::enabled`] asks that).
    #[inline]
    pub(super) fn rejections_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        match op {
            Op::PromiseReject | Op::UnhandledRejections { .. } => Ok(()),
            Op::PromiseCatch
                if self.rejections.pending.is_empty() && self.rejections.reported.is_none() =>
            {
                Err(Refusal::NoRejectedPromise)
            }
            Op::PromiseCatch => Ok(()),
            _ => not_in_family(op),
        }
    }

    /// What `promise-reject` does.
    #[inline]
    pub(super) fn rejections_effect(&mut self, op: &Op) -> Result<(), Died> {
        match op {
            Op::PromiseReject => self.promise_reject(),
            Op::PromiseCatch => self.promise_catch(),
            Op::UnhandledRejections {
                mode,
                listener,
                uncaught_listener,
            } => {
                let r = &mut *self.rejections;
                (r.mode, r.listener, r.uncaught_listener) = (*mode, *listener, *uncaught_listener);
                Ok(())
            }
            _ => not_in_family(op),
        }
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// `Promise.reject(reason)` with no handler: the promise's `init` and
    /// `settled` hooks (as for `Promise.resolve()`), then V8's reject
    /// callback (`kPromiseRejectWithNoHandler`), `PromiseRejectCallback`
    /// (`src/node_task_queue.cc`): for a promise with ids, a native
    /// `push_async_context(id, trigger, &promise_as_obj)` (with its CHECKs),
    /// the JS `unhandledRejection`, which records it in
    /// `pendingUnhandledRejections` and calls `setHasRejectionToWarn(true)`,
    /// and `pop_async_context(id)` when the id is still the current one.
    pub(crate) fn promise_reject(&mut self) -> Result<(), Died> {
        let ids = self.promise_init(None);
        let ids = self.promise_settled(ids);
        self.reject_callback_no_handler(ids)
    }

    /// V8's reject callback for a promise rejected with no handler
    /// (`kPromiseRejectWithNoHandler`), as [`Self::promise_reject`] describes
    /// it: `ids` are the promise's, if it was tracked.
    pub(crate) fn reject_callback_no_handler(&mut self, ids: PromiseIds) -> Result<(), Died> {
        self.promise_reject_callback(ids, |r| {
            r.pending.push(ids);
            r.has_rejection_to_warn = true;
        })
    }

    /// `PromiseRejectCallback` (`src/node_task_queue.cc`) for a promise with
    /// `ids`: the native push (with its CHECKs) when it has both, the JS
    /// handler (`js`), and the pop if the id is still the current one.
    /// `GetAssignedPromiseAsyncId` reads each symbol and takes anything but
    /// a number as `kInvalidAsyncId` (-1), and the push needs both ids
    /// valid: a promise that `getOrSetAsyncId` gave an id only, as the
    /// parent of a `.catch` (its trigger -1 here), is not pushed, and the
    /// native resource entries stay as they are.
    fn promise_reject_callback(
        &mut self,
        ids: PromiseIds,
        js: impl FnOnce(&mut Rejections),
    ) -> Result<(), Died> {
        let ids =
            ids.filter(|&(async_id, trigger_async_id)| async_id != -1 && trigger_async_id != -1);
        if let Some((async_id, trigger_async_id)) = ids {
            // `&promise_as_obj`: a local of PromiseRejectCallback, gone (like
            // a returned scope's storage) once it returns; popped before.
            let slot = NativeSlot::Local(ResourceView::Promise(async_id), ScopeSerial::MAX);
            self.async_hooks
                .push_async_context(async_id, trigger_async_id, Some(slot))?;
        }
        js(&mut self.rejections);
        if let Some((async_id, _)) = ids {
            if self.async_hooks.async_id_fields.k_execution_async_id == async_id {
                S::pop_async_context(&mut self.async_hooks, async_id)?;
            }
        }
        Ok(())
    }

    /// `processPromiseRejections()`: for each pending rejection, in order,
    /// `pushAsyncContext(promiseAsyncId, promiseTriggerAsyncId, promise)`
    /// when the promise has ids, the mode's handler
    /// ([`Self::unhandled_rejections_mode`]), and
    /// `popAsyncContext(promiseAsyncId)` in the `finally` unless the handler
    /// said not to (`needPop`). Whether it reported any
    /// (`maybeScheduledTicksOrMicrotasks`).
    pub(crate) fn process_promise_rejections(&mut self) -> Result<bool, Died> {
        // `rejectionHandled` for each reported rejection handled since, in
        // the current context; a warning (a tick) where no listener took it.
        let handled_late = std::mem::take(&mut self.rejections.handled_late);
        for _ in &handled_late {
            if self.rejections.listener {
                let fields = &self.async_hooks.async_id_fields;
                self.out.push(Observation::RejectionHandled {
                    execution_async_id: fields.k_execution_async_id,
                    trigger_async_id: fields.k_trigger_async_id,
                });
            } else {
                self.warning_tick();
            }
        }
        let pending = std::mem::take(&mut self.rejections.pending);
        for ids in &pending {
            // `maybeUnhandledPromises.set(promise, promiseInfo)`, warned.
            self.rejections.reported = Some(*ids);
            if let Some((async_id, trigger_async_id)) = *ids {
                self.push_async_context_js(
                    async_id,
                    trigger_async_id,
                    Some(ResourceView::Promise(async_id)),
                )?;
            }
            let need_pop = self.unhandled_rejections_mode(*ids)?;
            if let (true, Some((async_id, _))) = (need_pop, *ids) {
                self.pop_async_context_js(async_id)?;
            }
        }
        Ok(!pending.is_empty() || !handled_late.is_empty())
    }

    /// `promise.catch(cb)` on the most recent rejected promise without a
    /// handler: the derived promise's `init` (its parent the rejected
    /// promise, which `trackPromise` gives ids if it had none), V8's reject
    /// callback with `kPromiseHandlerAddedAfterReject`, whose
    /// `handledRejection` drops a pending rejection (it is never reported)
    /// or queues a reported one for `rejectionHandled`
    /// (`asyncHandledRejections`, `setHasRejectionToWarn(true)`); then the
    /// reaction job, `cb`, queued.
    pub(crate) fn promise_catch(&mut self) -> Result<(), Died> {
        let pending = !self.rejections.pending.is_empty();
        let mut ids = match (self.rejections.pending.last(), self.rejections.reported) {
            (Some(ids), _) => *ids,
            (None, Some(ids)) => ids,
            (None, None) => unreachable!("enabled checked that a rejected promise is left"),
        };
        let derived = self.promise_init(Some(&mut ids));
        self.promise_reject_callback(ids, |r| {
            if pending {
                r.pending.pop();
            } else {
                r.reported = None;
                r.handled_late.push(ids);
                r.has_rejection_to_warn = true;
            }
        })?;
        self.microtasks.queue.push_back(Microtask::Reaction {
            promise: derived,
            body: false,
            context_frame: ContextFrame::clone(&self.context_frame),
        });
        Ok(())
    }

    /// The handler of `--unhandled-rejections` (`throwUnhandledRejectionsMode`
    /// and the others): `needPop`. `triggerUncaughtException(err, true)`
    /// runs the uncaught-exception handler (exit 1 without a listener; with
    /// one it clears the stack, "don't clear it after"), the warnings queue
    /// ticks.
    fn unhandled_rejections_mode(&mut self, ids: PromiseIds) -> Result<bool, Died> {
        match self.rejections.mode {
            RejectionsMode::Throw => {
                if self.emit_unhandled_rejection() {
                    return Ok(true);
                }
                self.trigger_uncaught_exception_from_promise()?;
                Ok(false)
            }
            RejectionsMode::Strict => {
                self.trigger_uncaught_exception_from_promise()?;
                if let Some((async_id, trigger_async_id)) = ids {
                    self.push_async_context_js(
                        async_id,
                        trigger_async_id,
                        Some(ResourceView::Promise(async_id)),
                    )?;
                }
                if !self.emit_unhandled_rejection() {
                    self.emit_unhandled_rejection_warning();
                }
                Ok(true)
            }
            RejectionsMode::None => {
                self.emit_unhandled_rejection();
                Ok(true)
            }
            RejectionsMode::Warn => {
                self.emit_unhandled_rejection();
                self.emit_unhandled_rejection_warning();
                Ok(true)
            }
            RejectionsMode::WarnWithErrorCode => {
                if !self.emit_unhandled_rejection() {
                    // `process.exitCode = 1`: the process ends with 1 after
                    // the event loop, which the model does not reach; no
                    // state here, since no answer reads it.
                    self.emit_unhandled_rejection_warning();
                }
                Ok(true)
            }
        }
    }

    /// `emitUnhandledRejection`: `process.emit('unhandledRejection')`; the
    /// program's listener, if any, records what it sees. Whether one did.
    fn emit_unhandled_rejection(&mut self) -> bool {
        if self.rejections.listener {
            let fields = &self.async_hooks.async_id_fields;
            self.out.push(Observation::UnhandledRejection {
                execution_async_id: fields.k_execution_async_id,
                trigger_async_id: fields.k_trigger_async_id,
            });
        }
        self.rejections.listener
    }

    /// `emitUnhandledRejectionWarning`: two `process.emitWarning` calls
    /// (the reason, then the `UnhandledPromiseRejectionWarning`), each a
    /// `process.nextTick(doEmitWarning, warning)`
    /// (`lib/internal/process/warning.js`).
    fn emit_unhandled_rejection_warning(&mut self) {
        self.warning_tick();
        self.warning_tick();
    }

    /// `triggerUncaughtException(err, true /* fromPromise */)`
    /// (`TriggerUncaughtException`, `src/node_errors.cc`): with
    /// `--abort-on-uncaught-exception` an abort, else the JS handler with
    /// the program's `uncaughtException` listener, exit 1 without one.
    fn trigger_uncaught_exception_from_promise(&mut self) -> Result<(), Died> {
        // The binding's own check: `ReportFatalException`, then `Abort()`.
        if self.async_hooks.abort_on_uncaught_exception {
            return Err(Died(Observation::Aborted(SIGABRT)));
        }
        // Node 26 (not v20): entered again while the handler of an earlier
        // exception runs (its listener, here), `TriggerUncaughtException`
        // prints "FATAL ERROR: Re-entrant uncaught exception detected" and
        // aborts (`src/node_errors.cc`; the binary's, not in the sources
        // the model was first written from).
        let in_listener = self.frames.iter().any(|f| matches!(f, Frame::Listener));
        if in_listener && self.version != NodeVersion::V20 {
            return Err(Died(Observation::Aborted(SIGABRT)));
        }
        let handled = self.rejections.uncaught_listener;
        self.uncaught_exception_handler(handled)
    }
}
