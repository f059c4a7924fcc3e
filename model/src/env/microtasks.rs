//! Microtasks and promise hooks: `queueMicrotask` and `runMicrotask`
//! (`lib/internal/process/task_queues.js`), a promise reaction
//! (`Promise.resolve().then(cb)`), the promise hooks that
//! `updatePromiseHookMode` installs (`lib/internal/async_hooks.js`), and the
//! microtask checkpoint (`MicrotaskQueue::PerformCheckpoint` in
//! `InternalCallbackScope::Close`, `runMicrotasks()` in
//! `processTicksAndRejections` and `runNextTicks`). Node 26's JavaScript,
//! read from the binary; v20 differs in `queueMicrotask` (below), checked
//! on v20.20's.

use super::{impossible, AsyncIdStack, Died, Environment, Halt};
use crate::vocab::{AsyncId, HookEvent, NodeVersion, Observation, ResourceView};
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
    },
    /// The reaction job of `Promise.resolve().then(cb)`: the derived
    /// promise's ids, if it was tracked when created.
    Reaction {
        /// The derived promise's ids.
        promise: PromiseIds,
    },
    /// `disablePromiseHookIfNecessary`, queued by `disableHooks()`.
    DisablePromiseHook,
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
}

impl<S: AsyncIdStack> Environment<S> {
    /// `updatePromiseHookMode()`, called by `AsyncHook.prototype.enable`
    /// for every hook it enables (`lib/async_hooks.js`).
    pub(crate) fn update_promise_hook_mode(&mut self) {
        let f = &self.async_hooks.fields;
        self.microtasks.want_promise_hook = true;
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
    /// trigger below -1; the model has no op that throws, so it refuses.
    pub(crate) fn queue_microtask(&mut self) -> Result<(), Halt> {
        let resource = if self.queue_microtask_fast_path() {
            None
        } else {
            let trigger_async_id = self.get_default_trigger_async_id();
            if self.queue_microtask_throws() {
                return impossible(format!(
                    "queue-microtask: queueMicrotask makes an AsyncResource('Microtask') here, whose constructor throws ERR_INVALID_ASYNC_ID for its trigger getDefaultTriggerAsyncId() = {trigger_async_id} (below -1); the model has no op that throws (write `uncaught-exception` for the throw)"
                ));
            }
            let async_id = self.new_async_id();
            self.emit_init_script(
                async_id,
                "Microtask",
                trigger_async_id,
                Some(ResourceView::Microtask(async_id)),
            );
            Some((async_id, trigger_async_id))
        };
        self.microtasks
            .queue
            .push_back(Microtask::Callback { resource });
        Ok(())
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
                    // stays unset (it is never read here again).
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
            if self.hooks.created[&hook].promise_resolve {
                self.observe_hook(hook, HookEvent::PromiseResolve(async_id));
            }
        }
    }

    /// `Promise.resolve().then(cb)`: the resolved promise (`init`, then
    /// `settled`), the derived promise (`init` with the first as parent),
    /// and the reaction job queued.
    pub(crate) fn promise_then(&mut self) {
        let mut resolved = self.promise_init(None);
        resolved = self.promise_settled(resolved);
        let derived = self.promise_init(Some(&mut resolved));
        self.microtasks
            .queue
            .push_back(Microtask::Reaction { promise: derived });
    }

    /// Run the microtask queue until it is empty (`PerformCheckpoint`,
    /// `runMicrotasks()`).
    pub(crate) fn run_microtasks(&mut self) -> Result<(), Died> {
        while let Some(job) = self.microtasks.queue.pop_front() {
            match job {
                Microtask::Callback { resource: None } => self.observe_microtask(false),
                Microtask::Callback {
                    resource: Some((async_id, trigger_async_id)),
                } => {
                    // runMicrotask: runInAsyncScope(() => { try { cb() }
                    // finally { this.emitDestroy() } }).
                    self.emit_before_script(
                        async_id,
                        trigger_async_id,
                        Some(ResourceView::Microtask(async_id)),
                    )?;
                    self.observe_microtask(false);
                    self.emit_destroy_script(async_id);
                    self.run_in_async_scope_finally(async_id)?;
                }
                Microtask::Reaction { promise } => self.run_reaction(promise)?,
                Microtask::DisablePromiseHook => {
                    if !self.microtasks.want_promise_hook {
                        self.microtasks.installed = None;
                    }
                }
            }
        }
        Ok(())
    }

    /// A promise reaction job: `promiseBeforeHook` (track, then
    /// `emitBeforeScript`, which pushes), the callback, the derived promise
    /// settling (`promiseResolveHook`), `promiseAfterHook` (`emitAfterNative`
    /// with after hooks, then `popAsyncContext(asyncId)` only when
    /// `asyncId === executionAsyncId()`).
    fn run_reaction(&mut self, promise: PromiseIds) -> Result<(), Died> {
        if self.microtasks.installed.is_none() {
            self.observe_microtask(true);
            return Ok(());
        }
        let (async_id, trigger_async_id) = self.track_promise(promise, None);
        self.emit_before_script(
            async_id,
            trigger_async_id,
            Some(ResourceView::Promise(async_id)),
        )?;
        self.observe_microtask(true);
        self.promise_settled(Some((async_id, trigger_async_id)));
        if self.async_hooks.fields.k_after > 0 {
            self.emit_hook(super::hooks::HookKind::After, async_id);
        }
        if async_id == self.async_hooks.async_id_fields.k_execution_async_id {
            self.pop_async_context_js(async_id)?;
        }
        Ok(())
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
