//! Microtasks and promise hooks: `queueMicrotask` and `runMicrotask`
//! (`lib/internal/process/task_queues.js`), a promise reaction
//! (`Promise.resolve().then(cb)`), the promise hooks that
//! `updatePromiseHookMode` installs (`lib/internal/async_hooks.js`), and the
//! microtask checkpoint (`MicrotaskQueue::PerformCheckpoint` in
//! `InternalCallbackScope::Close`, `runMicrotasks()` in
//! `processTicksAndRejections` and `runNextTicks`). Node 26's JavaScript,
//! read from the binary; v20 differs in `queueMicrotask` (below), checked
//! on v20.20's.

use super::callback_scope::InternalCallbackScope;
use super::context_frame::ContextFrame;
use super::ticks::TickRun;
use super::{not_in_family, AsyncIdStack, Died, Environment, Frame, Refusal};
use crate::vocab::{
    AsyncId, HookEvent, NodeVersion, Observation, Op, OpKind, ResourceView, SIGTRAP,
};
use std::collections::VecDeque;

/// A promise's `[async_id_symbol]` and `[trigger_async_id_symbol]`, once
/// `trackPromise` gave it some.
pub type PromiseIds = Option<(AsyncId, AsyncId)>;

/// One job of V8's microtask queue.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Microtask {
    /// `queueMicrotask(cb)`: with an `AsyncResource('Microtask')` (its id
    /// and trigger id) when a hook was enabled, else the bare callback
    /// (Node 26's fast path; v20 always makes the resource).
    Callback {
        /// The `AsyncResource`'s ids, if one was made.
        resource: Option<(AsyncId, AsyncId)>,
        /// The callback has a body (`queue-microtask-body`).
        body: bool,
        /// The `AsyncContextFrame` current when it was queued: V8 keeps the
        /// continuation-preserved embedder data in the microtask and makes
        /// it current while the job runs (the `AsyncResource`, if any,
        /// captured the same frame and `runInAsyncScope` exchanges it in).
        context_frame: ContextFrame,
    },
    /// The reaction job of `Promise.resolve().then(cb)`: the derived
    /// promise's ids, if it was tracked when created.
    Reaction {
        /// The derived promise's ids.
        promise: PromiseIds,
        /// The reaction has a body (`promise-then-body`).
        body: bool,
        /// The `AsyncContextFrame` current at `.then` (V8 keeps it in the
        /// reaction job and makes it current while the job runs).
        context_frame: ContextFrame,
    },
    /// `disablePromiseHookIfNecessary`, queued by `disableHooks()`.
    DisablePromiseHook,
    /// An ES module's top-level throw on its way to the loader's `catch`:
    /// the rejection of the module's evaluation walks `await`
    /// continuations, each a reaction job queued when the one before runs;
    /// the last (`hops` = 1) calls `triggerUncaughtException(err, true)`
    /// ([`Environment::module_rejection_hops`]). No hook sees these jobs
    /// (the promise hooks are off in a module program).
    /// The handler runs with whatever `uncaughtException` listener the
    /// program has then (the throw set it; a later throw may change it).
    ModuleRejection {
        /// The jobs left, this one included.
        hops: u8,
    },
}

/// A microtask with a body whose callback is running: what is left of its
/// job when `end-microtask` comes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RunningMicrotask {
    /// `runMicrotask` of a `queueMicrotask` (its `AsyncResource`'s ids, if
    /// one was made), or the bare callback.
    Callback {
        /// The `AsyncResource`'s ids, if one was made.
        resource: Option<(AsyncId, AsyncId)>,
    },
    /// A promise reaction: the derived promise's ids as `promiseBeforeHook`
    /// left them (`None` when no promise hook was installed at its start
    /// and the promise was never tracked).
    Reaction {
        /// The derived promise's ids.
        promise: PromiseIds,
    },
    /// The body of an ES module entry (`entry-module`): `ModuleJob.run`
    /// evaluates the module after an `await`
    /// (`lib/internal/modules/esm/module_job.js`), so the body is the
    /// continuation of an async function, a V8 `PromiseReactionJob` run by
    /// the checkpoint of the outermost `InternalCallbackScope::Close`. It
    /// has no resource and no promise the model tracks (promise hooks are
    /// off in an `entry-module` program: [`Microtasks::module_entry`]); its
    /// end is the trace's `close` of the main script.
    ModuleBody,
}

/// Who performed the microtask checkpoint a microtask with a body runs in,
/// and so where the checkpoint goes on after `end-microtask` (once the queue
/// is empty).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Checkpoint<S: AsyncIdStack> {
    /// `MicrotaskQueue::PerformCheckpoint` in the outermost
    /// `InternalCallbackScope::Close` (`src/api/callback.cc`): then
    /// `perform_stopping_check`, the `kTotals` CHECK and the ticks. The
    /// scope is still alive (the callback-scope depth counts it).
    Close(Box<InternalCallbackScope<S>>),
    /// `runMicrotasks()` at the end of `processTicksAndRejections`
    /// (`lib/internal/process/task_queues.js`): then its `do { } while
    /// (!queue.isEmpty() ...)` loop, which runs the ticks the microtasks
    /// scheduled, and the run returns to its caller.
    TickRun(TickRun<S>),
    /// `runMicrotasks()` in `runNextTicks` (`process._tickCallback()`):
    /// then `processTicksAndRejections` if a tick is scheduled.
    NextTicks,
}

/// The `init` promise hook `updatePromiseHookMode` chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PromiseInitHook {
    /// `promiseInitHook` (or `promiseInitHookWithDestroyTracking`): track,
    /// then `emitInitScript(id, 'PROMISE', trigger, promise)`.
    Init,
    /// `destroyTracking`: track only (no init hook existed).
    DestroyTracking,
}

/// The promise hooks installed by `updatePromiseHookMode`
/// (`promiseHooks.createHook`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PromiseHookMode {
    /// `init`: chosen from `initHooksExist()` / `destroyHooksExist()` then.
    pub init: Option<PromiseInitHook>,
    /// `settled`: `promiseResolveHook` if `promiseResolveHooksExist()` then.
    pub settled: bool,
}

/// The microtask queue and the promise-hook state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Microtasks {
    /// V8's microtask queue.
    pub queue: VecDeque<Microtask>,
    /// `wantPromiseHook`.
    pub want_promise_hook: bool,
    /// `stopPromiseHook` is set: the hooks installed.
    pub installed: Option<PromiseHookMode>,
    /// The program is an ES module entry (`entry-module`), which runs with
    /// the promise hooks off: its harness (the conformance runtime, the
    /// exported test) makes `internal/promise_hooks`' `createHook` a no-op,
    /// so `update_promise_hook_mode` installs nothing. Why:
    /// once installed, the ES module loader's own `await`s after the body
    /// (`await this.module.evaluate()`, `lib/internal/modules/esm/module_job.js`)
    /// make promises whose hooks run in the body's checkpoint, ids and jobs
    /// that differ per node version and belong to the loader, not the
    /// program (docs/spec.md, `entry-module`).
    pub module_entry: bool,
    /// The ES module has a top-level `await` in its source (`entry-module
    /// tla`): V8 evaluates it as an async module
    /// (`SourceTextModule::ExecuteAsyncModule`,
    /// `deps/v8/src/objects/source-text-module.cc`), whose rejection reaches
    /// the promise `evaluate()` returned through one more reaction.
    pub module_top_level_await: bool,
}

impl Microtasks {
    /// A job with a body (`queue-microtask-body`, `promise-then-body`) is
    /// queued.
    pub fn has_body_queued(&self) -> bool {
        self.queue.iter().any(|job| match job {
            Microtask::Callback { body, .. } | Microtask::Reaction { body, .. } => *body,
            Microtask::DisablePromiseHook | Microtask::ModuleRejection { .. } => false,
        })
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// When a microtask op can happen, beyond what [`Environment::enabled`]
    /// asks of every op: `queueMicrotask` does not throw for its trigger
    /// (the model has no op that throws); `end-microtask` ends the innermost
    /// frame, a microtask's callback.
    #[inline]
    pub(super) fn microtasks_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        match op {
            Op::QueueMicrotask | Op::QueueMicrotaskBody if self.queue_microtask_throws() => {
                let trigger = self.get_default_trigger_async_id();
                Err(Refusal::MicrotaskTriggerInvalid(trigger))
            }
            Op::EndMicrotask => self.innermost_is(OpKind::EndMicrotask, |f| {
                matches!(f, Frame::Microtask { job, .. } if *job != RunningMicrotask::ModuleBody)
            }),
            Op::QueueMicrotask | Op::QueueMicrotaskBody | Op::PromiseThen | Op::PromiseThenBody => {
                Ok(())
            }
            _ => not_in_family(op),
        }
    }

    /// What a microtask op does.
    #[inline]
    pub(super) fn microtasks_effect(&mut self, op: &Op) -> Result<(), Died> {
        match op {
            Op::QueueMicrotask | Op::QueueMicrotaskBody => {
                self.queue_microtask(matches!(op, Op::QueueMicrotaskBody));
                Ok(())
            }
            Op::PromiseThen | Op::PromiseThenBody => {
                self.promise_then(matches!(op, Op::PromiseThenBody));
                Ok(())
            }
            Op::EndMicrotask => self.end_microtask(),
            _ => not_in_family(op),
        }
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// `updatePromiseHookMode()`, called by `AsyncHook.prototype.enable`
    /// for every hook it enables (`lib/async_hooks.js`).
    pub(crate) fn update_promise_hook_mode(&mut self) {
        let f = &self.async_hooks.fields;
        self.microtasks.want_promise_hook = true;
        if self.microtasks.module_entry {
            // `createHook` is the harness's no-op: nothing is installed.
            return;
        }
        let init = if f.k_init > 0 {
            Some(PromiseInitHook::Init)
        } else if f.k_destroy > 0 {
            Some(PromiseInitHook::DestroyTracking)
        } else {
            None
        };
        self.microtasks.installed = Some(PromiseHookMode {
            init,
            settled: f.k_promise_resolve > 0,
        });
    }

    /// The promise part of `disableHooks()`: `wantPromiseHook = false`, and
    /// `enqueueMicrotask(disablePromiseHookIfNecessary)` ("we might
    /// currently be between the `before` and `after` calls of a Promise").
    pub(crate) fn disable_promise_hook_later(&mut self) {
        self.microtasks.want_promise_hook = false;
        self.microtasks
            .queue
            .push_back(Microtask::DisablePromiseHook);
    }

    /// Whether `queueMicrotask` would queue the bare callback now (Node 26,
    /// no frame object current, no hook enabled).
    pub fn queue_microtask_fast_path(&self) -> bool {
        self.version != NodeVersion::V20
            && self.context_frame.is_undefined()
            && self.hooks.active.is_empty()
    }

    /// Whether `queueMicrotask` would throw now: it makes an
    /// `AsyncResource` whose trigger, `getDefaultTriggerAsyncId()`, is below
    /// -1 (`ERR_INVALID_ASYNC_ID`). The model refuses `queue-microtask` then.
    pub fn queue_microtask_throws(&self) -> bool {
        !self.queue_microtask_fast_path() && self.get_default_trigger_async_id() < -1
    }

    /// `queueMicrotask(callback)`: `new AsyncResource('Microtask',
    /// { requireManualDestroy: true })` (trigger `getDefaultTriggerAsyncId()`,
    /// then `newAsyncId()`, then `emitInit`). Node 26 makes it only when a
    /// frame object is current (`AsyncContextFrame.current()`) or a hook is
    /// enabled (`enabledHooksExist()`), else queues the bare callback; v20
    /// always makes it. The constructor throws `ERR_INVALID_ASYNC_ID` for a
    /// trigger below -1; the model has no op that throws, so `enabled`
    /// refuses it then ([`Self::queue_microtask_throws`]).
    pub(crate) fn queue_microtask(&mut self, body: bool) {
        let resource = if self.queue_microtask_fast_path() {
            None
        } else {
            let trigger_async_id = self.get_default_trigger_async_id();
            let async_id = self.new_async_id();
            self.emit_init_script(
                async_id,
                "Microtask",
                trigger_async_id,
                Some(ResourceView::Microtask(async_id)),
            );
            Some((async_id, trigger_async_id))
        };
        self.microtasks.queue.push_back(Microtask::Callback {
            resource,
            body,
            context_frame: ContextFrame::clone(&self.context_frame),
        });
    }

    /// `trackPromise(promise, parent)`: a promise without ids takes the
    /// trigger (the parent's id through `getOrSetAsyncId`, else
    /// `getDefaultTriggerAsyncId()`) and then `newAsyncId()`.
    fn track_promise(
        &mut self,
        ids: PromiseIds,
        parent: Option<&mut PromiseIds>,
    ) -> (AsyncId, AsyncId) {
        if let Some(ids) = ids {
            return ids;
        }
        let trigger_async_id = match parent {
            Some(p) => match p {
                Some((id, _)) => *id,
                None => {
                    // getOrSetAsyncId: an id only; the parent's trigger
                    // stays unset, which PromiseRejectCallback reads as
                    // kInvalidAsyncId (-1): no push for a `.catch` parent.
                    let id = self.new_async_id();
                    *p = Some((id, -1));
                    id
                }
            },
            None => self.get_default_trigger_async_id(),
        };
        (self.new_async_id(), trigger_async_id)
    }

    /// The `init` promise hook for a new promise, if one is installed.
    pub(crate) fn promise_init(&mut self, parent: Option<&mut PromiseIds>) -> PromiseIds {
        let init = self.microtasks.installed.and_then(|m| m.init)?;
        let (async_id, trigger_async_id) = self.track_promise(None, parent);
        if init == PromiseInitHook::Init {
            self.emit_init_script(
                async_id,
                "PROMISE",
                trigger_async_id,
                Some(ResourceView::Promise(async_id)),
            );
        }
        Some((async_id, trigger_async_id))
    }

    /// The `settled` promise hook, `promiseResolveHook`: track, then
    /// `emitPromiseResolveNative(id)`.
    pub(crate) fn promise_settled(&mut self, ids: PromiseIds) -> PromiseIds {
        if !self.microtasks.installed.is_some_and(|m| m.settled) {
            return ids;
        }
        let ids = self.track_promise(ids, None);
        self.emit_promise_resolve(ids.0);
        Some(ids)
    }

    /// `emitPromiseResolveNative(asyncId)`: every active hook with a
    /// `promiseResolve` callback.
    fn emit_promise_resolve(&mut self, async_id: AsyncId) {
        if self.async_hooks.fields.k_promise_resolve == 0 {
            return;
        }
        for hook in self.hooks.active.clone() {
            if self.hooks.callbacks(hook).promise_resolve {
                self.observe_hook(hook, HookEvent::PromiseResolve(async_id));
            }
        }
    }

    /// `Promise.resolve().then(cb)`: the resolved promise (`init`, then
    /// `settled`), the derived promise (`init` with the first as parent),
    /// and the reaction job queued.
    pub(crate) fn promise_then(&mut self, body: bool) {
        let mut resolved = self.promise_init(None);
        resolved = self.promise_settled(resolved);
        let derived = self.promise_init(Some(&mut resolved));
        self.microtasks.queue.push_back(Microtask::Reaction {
            promise: derived,
            body,
            context_frame: ContextFrame::clone(&self.context_frame),
        });
    }

    /// Whether a microtask callback is running: V8's `PerformCheckpoint`
    /// does nothing then (`IsRunningMicrotasks()`), so a `runMicrotasks()`
    /// or an outermost `Close` inside a microtask body runs none.
    fn running_microtasks(&self) -> bool {
        (self.frames.iter()).any(|f| matches!(f, Frame::Microtask { .. }))
    }

    /// Run the microtask queue until it is empty (`PerformCheckpoint`,
    /// `runMicrotasks()`), for the checkpoint `site`. Each job runs in the
    /// frame captured when it was queued, and the one current before is put
    /// back after it. A job with a body stops the checkpoint inside its
    /// callback: a [`Frame::Microtask`] keeps the job and the site, and
    /// `Ok(None)` says so; [`Self::end_microtask`] resumes. `Ok(Some(site))`:
    /// the queue is empty (or a microtask is running already), the caller
    /// goes on.
    pub(crate) fn run_microtasks(
        &mut self,
        site: Checkpoint<S>,
    ) -> Result<Option<Checkpoint<S>>, Died> {
        if self.running_microtasks() {
            return Ok(Some(site));
        }
        while let Some(job) = self.microtasks.queue.pop_front() {
            let (running, body, frame) = match job {
                Microtask::Callback {
                    resource,
                    body,
                    context_frame,
                } => {
                    let prior = std::mem::replace(&mut *self.context_frame, context_frame);
                    // runMicrotask: runInAsyncScope(() => { try { cb() }
                    // finally { this.emitDestroy() } }).
                    if let Some((async_id, trigger_async_id)) = resource {
                        self.emit_before_script(
                            async_id,
                            trigger_async_id,
                            Some(ResourceView::Microtask(async_id)),
                        )?;
                    }
                    self.observe_microtask(false);
                    (RunningMicrotask::Callback { resource }, body, prior)
                }
                Microtask::Reaction {
                    promise,
                    body,
                    context_frame,
                } => {
                    let prior = std::mem::replace(&mut *self.context_frame, context_frame);
                    let promise = self.promise_before(promise)?;
                    self.observe_microtask(true);
                    (RunningMicrotask::Reaction { promise }, body, prior)
                }
                Microtask::DisablePromiseHook => {
                    if !self.microtasks.want_promise_hook {
                        self.microtasks.installed = None;
                    }
                    continue;
                }
                Microtask::ModuleRejection { hops } => {
                    if hops > 1 {
                        let next = Microtask::ModuleRejection { hops: hops - 1 };
                        self.microtasks.queue.push_back(next);
                    } else {
                        // triggerUncaughtException(err, true): the
                        // handler, in this job, at the checkpoint's ids.
                        let handled = self.rejections.uncaught_listener;
                        self.uncaught_exception_handler(handled)?;
                    }
                    continue;
                }
            };
            if body {
                self.frames.push(Frame::Microtask {
                    job: running,
                    checkpoint: site,
                    prior_context_frame: frame,
                });
                return Ok(None);
            }
            self.finish_microtask(running)?;
            *self.context_frame = frame;
        }
        Ok(Some(site))
    }

    /// The end of a job once its callback returned: for `runMicrotask`,
    /// the `finally` (`emitDestroy`) and `runInAsyncScope`'s `finally`
    /// (`hasAsyncIdStack()` then `emitAfter`); for a reaction, the derived
    /// promise settling and `promiseAfterHook`.
    fn finish_microtask(&mut self, job: RunningMicrotask) -> Result<(), Died> {
        match job {
            RunningMicrotask::Callback { resource: None } => Ok(()),
            RunningMicrotask::Callback {
                resource: Some((async_id, _)),
            } => {
                self.emit_destroy_script(async_id);
                self.run_in_async_scope_finally(async_id)
            }
            RunningMicrotask::Reaction { promise } => self.promise_after(promise),
            RunningMicrotask::ModuleBody => Ok(()),
        }
    }

    /// `promiseBeforeHook`, if the promise hooks are installed when the
    /// reaction starts (V8 reads them at each hook): track, then
    /// `emitBeforeScript`, which pushes. The promise's ids after it.
    fn promise_before(&mut self, promise: PromiseIds) -> Result<PromiseIds, Died> {
        if self.microtasks.installed.is_none() {
            return Ok(promise);
        }
        let (async_id, trigger_async_id) = self.track_promise(promise, None);
        self.emit_before_script(
            async_id,
            trigger_async_id,
            Some(ResourceView::Promise(async_id)),
        )?;
        Ok(Some((async_id, trigger_async_id)))
    }

    /// After the reaction's callback, if the promise hooks are installed
    /// now (a body may have enabled the first hook): the derived promise
    /// settling (`promiseResolveHook`), then `promiseAfterHook`
    /// (`lib/internal/async_hooks.js`): `trackPromise`, `emitAfterNative`
    /// with after hooks, then `popAsyncContext(asyncId)` only when `asyncId
    /// === executionAsyncId()`, which "might not be true if async_hooks was
    /// enabled during the promise callback execution".
    fn promise_after(&mut self, promise: PromiseIds) -> Result<(), Died> {
        if self.microtasks.installed.is_none() {
            return Ok(());
        }
        let promise = self.promise_settled(promise);
        self.promise_after_hook(promise).map(|_| ())
    }

    /// `promiseAfterHook` alone, the derived promise settled already: its
    /// ids after it (`trackPromise` gives an untracked promise some).
    fn promise_after_hook(&mut self, promise: PromiseIds) -> Result<PromiseIds, Died> {
        if self.microtasks.installed.is_none() {
            return Ok(promise);
        }
        let ids = self.track_promise(promise, None);
        let async_id = ids.0;
        if self.async_hooks.fields.k_after > 0 {
            self.emit_hook(super::hooks::HookKind::After, async_id);
        }
        if async_id == self.async_hooks.async_id_fields.k_execution_async_id {
            self.pop_async_context_js(async_id)?;
        }
        Ok(Some(ids))
    }

    /// `uncaught-exception` in a `queueMicrotask` callback: the exception
    /// goes through `runMicrotask`'s `finally` blocks as a return does
    /// (`emitDestroy`, then `runInAsyncScope`'s `emitAfter`), leaves the
    /// job, and V8's checkpoint reports it to Node's message listener
    /// (`PerIsolateMessageListener` → `TriggerUncaughtException`,
    /// `src/node_errors.cc`) once the frame current before the job is back;
    /// handled, the checkpoint goes on with the next job, and the callback
    /// of the native scope around it goes on too (nothing marks that scope
    /// failed: its callback threw nothing). Checked on v20.20
    /// and 26.12 (`tests/scenarios/queue-microtask-throws.trace`).
    ///
    /// In a promise reaction's callback the exception rejects the derived
    /// promise instead (V8's `PromiseReactionJob`): its settled hook, V8's
    /// reject callback with no handler (reported later to the
    /// `unhandledRejection` listener, [`Self::reject_callback_no_handler`]),
    /// then `promiseAfterHook`; no uncaught-exception handler runs, whatever
    /// `handled` says. Checked on v20.20 and 26.12
    /// (`tests/scenarios/promise-reaction-throws.trace`).
    pub(crate) fn microtask_threw(&mut self, handled: bool) -> Result<(), Died> {
        let (job, checkpoint, prior_context_frame) = self.pop_microtask();
        match job {
            RunningMicrotask::Reaction { promise } => {
                let promise = self.promise_settled(promise);
                self.reject_callback_no_handler(promise)?;
                let tracked = self.promise_after_hook(promise)?;
                // processPromiseRejections reads the promise's ids when it
                // reports it: the ones promiseAfterHook gave it, if it had
                // none at the rejection.
                if let Some(pending) = self.rejections.pending.last_mut() {
                    *pending = tracked;
                }
                *self.context_frame = prior_context_frame;
            }
            RunningMicrotask::Callback { .. } => {
                self.finish_microtask(job)?;
                *self.context_frame = prior_context_frame;
                // V8 reports it from its microtask runner: with
                // --abort-on-uncaught-exception it aborts there, after the
                // job's `finally` blocks ran.
                if self.async_hooks.abort_on_uncaught_exception {
                    return Err(Died(Observation::Aborted(SIGTRAP)));
                }
                self.uncaught_exception_handler(handled)?;
            }
            RunningMicrotask::ModuleBody => {
                // The body's job ends; V8 rejects the promise `evaluate()`
                // returned, and the loader's awaits carry it on.
                // The program's listener is the one this throw chose.
                *self.context_frame = prior_context_frame;
                self.rejections.uncaught_listener = handled;
                let hops = self.module_rejection_hops();
                (self.microtasks.queue).push_back(Microtask::ModuleRejection { hops });
            }
        }
        self.resume_checkpoint(checkpoint)
    }

    /// How many jobs, after the body's, an ES module's top-level throw takes
    /// to reach `triggerUncaughtException(err, true /* fromPromise */)`,
    /// which the last of them calls: each `await` between the evaluation
    /// and the loader's `catch` is one reaction job. v20: 3 (`module_job.js` L325
    /// `await this.module.evaluate()` → `loader.js` L606 `await
    /// moduleJob.run()` → `run_main.js` L117, catch L118-L126). Node 26: 4
    /// (`module_job.js` L569 → `loader.js` L650, the async arrow inside
    /// `onImport.tracePromise` → the job that rejects `import()`'s own
    /// promise, `loader.js` L635 → `run_main.js` L105, catch L106-L114).
    /// One more for a module with a top-level `await` in its source.
    pub fn module_rejection_hops(&self) -> u8 {
        let loader = match self.version {
            NodeVersion::V20 => 3,
            NodeVersion::V26 => 4,
        };
        loader + u8::from(self.microtasks.module_top_level_await)
    }

    /// The innermost frame, a microtask's callback, taken off: its job,
    /// its checkpoint, and the frame current before it.
    fn pop_microtask(&mut self) -> (RunningMicrotask, Checkpoint<S>, ContextFrame) {
        let Some(Frame::Microtask {
            job,
            checkpoint,
            prior_context_frame,
        }) = self.frames.pop()
        else {
            unreachable!("enabled checked that the innermost frame is a microtask")
        };
        (job, checkpoint, prior_context_frame)
    }

    /// `end-microtask`: the innermost microtask callback returns. The job
    /// finishes ([`Self::finish_microtask`]), the frame current before it
    /// is put back, and its checkpoint goes on: the rest of the queue, then
    /// what the site does next ([`Checkpoint`]). While the environment is
    /// stopping the callback was terminated instead: no `finally`, no after
    /// hook; V8 drops the rest of the queue (`MicrotaskQueue::RunMicrotasks`
    /// on termination), the JS that ran the checkpoint is terminated too,
    /// and a `Close` that ran it (or ran the tick run that did) marks itself
    /// failed and clears the stack (`perform_stopping_check`), as after a
    /// terminated tick.
    pub(crate) fn end_microtask(&mut self) -> Result<(), Died> {
        let (job, checkpoint, prior_context_frame) = self.pop_microtask();
        if self.is_stopping {
            self.microtasks.queue.clear();
            match checkpoint {
                Checkpoint::Close(scope) | Checkpoint::TickRun(TickRun::Close(scope)) => {
                    self.finish_close(*scope, true)
                }
                Checkpoint::TickRun(TickRun::TickCallback) | Checkpoint::NextTicks => {}
            }
            return Ok(());
        }
        self.finish_microtask(job)?;
        *self.context_frame = prior_context_frame;
        self.resume_checkpoint(checkpoint)
    }

    /// The checkpoint `site` goes on: the rest of the queue, then the site's
    /// own continuation.
    pub(crate) fn resume_checkpoint(&mut self, site: Checkpoint<S>) -> Result<(), Died> {
        match self.run_microtasks(site)? {
            None => Ok(()),
            Some(Checkpoint::Close(scope)) => self.close_after_checkpoint(*scope, true),
            Some(Checkpoint::TickRun(run)) => self.tick_run_after_microtasks(run),
            Some(Checkpoint::NextTicks) => self.next_ticks_after_microtasks(),
        }
    }

    fn observe_microtask(&mut self, promise: bool) {
        let ids = &self.async_hooks.async_id_fields;
        self.out.push(Observation::Microtask {
            promise,
            execution_async_id: ids.k_execution_async_id,
            trigger_async_id: ids.k_trigger_async_id,
        });
    }
}
