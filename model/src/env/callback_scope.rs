//! `InternalCallbackScope` and `InternalMakeCallback` (`src/api/callback.cc`),
//! with the JS `callbackTrampoline` (`lib/internal/async_hooks.js`).

use super::async_id_stack::{FrameExchange, FrameRestore};
use super::context_frame::{ContextFrame, NapiAsyncContext};
use super::microtasks::Checkpoint;
use super::resources::{NativeSlot, ScopeSerial};
use super::ticks::TickRun;
use super::{not_in_family, AsyncIdStack, Died, Environment, Frame, Refusal};
use crate::vocab::{
    AsyncContext, FailedCheck, Holder, NativeResource, NodeVersion, Observation, Op, OpKind,
    ResourceId, ResourceView, ScopeFlags, ScopeKind,
};

/// The part of `InternalMakeCallback` that runs in JS around the callback
/// when `use_async_hooks_trampoline` is true.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Trampoline {
    /// The resource `callbackTrampoline` writes into `execution_async_resources`.
    pub resource: ResourceView,
}

/// One open `InternalCallbackScope`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InternalCallbackScope<S: AsyncIdStack> {
    /// How it was opened.
    pub kind: ScopeKind,
    /// `async_context_`.
    pub async_context: AsyncContext,
    /// The resource pointer handed to `push_async_context`.
    pub resource: NativeSlot,
    /// `skip_hooks_` (`kSkipAsyncHooks`).
    pub skip_hooks: bool,
    /// `skip_task_queues_` (`kSkipTaskQueues`).
    pub skip_task_queues: bool,
    /// `failed_`: `MarkAsFailed()` was called, or JS could not run at open.
    pub failed: bool,
    /// `pushed_ids_`.
    pub pushed_ids: bool,
    /// `prior_context_frame_`: the `AsyncContextFrame` current when the
    /// constructor exchanged in its own (none: see [`super::context_frame`]),
    /// put back by `Close` under `pushed_ids_`.
    pub prior_context_frame: ContextFrame,
    /// Its place in the order scopes opened ([`super::resources::Heap`]).
    pub serial: ScopeSerial,
    /// What the store kept of how the scope entered its context.
    pub entered: S::Entered,
    /// The JS trampoline around the callback (MakeCallback with hooks).
    pub trampoline: Option<Trampoline>,
    /// The main script's scope (`StartExecution`, `src/node.cc`): a bare
    /// `InternalCallbackScope`, which no `TryCatch` marks failed.
    pub main_script: bool,
    /// `Environment::RunTimers`' scope: bare, `{0, 0}`, resource `process`.
    pub run_timers: bool,
    /// An uncaught exception thrown while it was the innermost scope was
    /// handled; whether its JS goes on depends on who opened it.
    pub handled_exception: bool,
    /// Its callback threw (an `uncaught-exception` op) and returned: nothing
    /// of it runs any more, only its close can follow.
    pub threw: bool,
    /// `napi_make_callback` opened it (on the async context of
    /// `napi-async-init`).
    pub napi: bool,
}

impl<S: AsyncIdStack> InternalCallbackScope<S> {
    /// A bare `InternalCallbackScope` that Node opens itself (the main
    /// script's, `RunTimers`'): no `TryCatch` of its own marks it failed.
    pub fn is_bare(&self) -> bool {
        self.main_script || self.run_timers
    }

    /// The constructor: `PushAsyncCallbackScope`; if JS cannot run, mark
    /// failed and push nothing; else the store's frame exchange and push
    /// ([`AsyncIdStack::enter_scope`]: `context_frame` in,
    /// `prior_context_frame_` out, then `push_async_context`) and
    /// `EmitBefore` unless hooks are skipped or the id is 0.
    pub fn open(
        env: &mut Environment<S>,
        async_context: AsyncContext,
        resource: NativeSlot,
        flags: ScopeFlags,
        context_frame: ContextFrame,
    ) -> Result<Self, Died> {
        let mut scope = InternalCallbackScope {
            kind: ScopeKind::CallbackScope,
            async_context,
            resource,
            skip_hooks: flags.skip_async_hooks,
            skip_task_queues: flags.skip_task_queues,
            failed: false,
            pushed_ids: false,
            prior_context_frame: ContextFrame::default(),
            serial: env.heap.next_scope,
            entered: S::Entered::default(),
            trampoline: None,
            main_script: false,
            run_timers: false,
            handled_exception: false,
            threw: false,
            napi: false,
        };
        env.async_callback_scope_depth += 1;
        env.heap.live_scopes.insert(scope.serial);
        env.heap.next_scope += 1;
        if env.stopping() {
            scope.failed = true;
            return Ok(scope);
        }
        let frame = FrameExchange {
            current: &mut env.context_frame,
            entered: context_frame,
        };
        (scope.entered, scope.prior_context_frame) = S::enter_scope(
            &mut env.async_hooks,
            async_context,
            resource,
            scope.serial,
            &env.heap,
            frame,
        )?;
        scope.pushed_ids = true;
        if async_context.async_id != 0 && !scope.skip_hooks {
            env.async_wrap_emit_before(async_context.async_id);
        }
        Ok(scope)
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// When a native scope op can happen, beyond what
    /// [`Environment::enabled`] asks of every op: `node::MakeCallback` takes
    /// a `Local` and no flags; `RunTimers` runs from the event loop; a close
    /// ends the innermost frame, a `close-outer` an addon's scope with
    /// others inside it.
    #[inline]
    pub(super) fn callback_scope_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        match op {
            Op::OpenScope {
                kind: ScopeKind::MakeCallback | ScopeKind::BareMakeCallback,
                resource,
                flags,
                ..
            } => {
                if resource.holder == Holder::Global {
                    return Err(Refusal::MakeCallbackGlobal);
                }
                let bare = matches!(
                    op,
                    Op::OpenScope {
                        kind: ScopeKind::BareMakeCallback,
                        ..
                    }
                );
                if bare && self.async_hooks.abort_on_uncaught_exception {
                    return Err(Refusal::BareMakeCallbackWithAbort);
                }
                if *flags != ScopeFlags::default() {
                    return Err(Refusal::MakeCallbackFlags);
                }
                Ok(())
            }
            Op::OpenScope {
                kind: ScopeKind::CallbackScope,
                ..
            }
            | Op::ResetGlobal(_)
            | Op::NapiAsyncInit(_) => Ok(()),
            Op::NapiMakeCallback(r) if self.js_objects.async_context(r).is_none() => {
                Err(Refusal::NoAsyncContext(*r))
            }
            Op::NapiMakeCallback(_) => Ok(()),
            Op::TimersScope if self.async_callback_scope_depth > 0 => {
                Err(Refusal::TimersInsideScope)
            }
            Op::TimersScope => Ok(()),
            // The module body's end is the main script's: `close`, never
            // `close threw` (a bare scope).
            Op::CloseScope { threw: true }
                if self.frames.last().is_some_and(Frame::is_module_body) =>
            {
                Err(Refusal::BareScopeThrew)
            }
            Op::CloseScope { threw: true } if self.bare_throw_pending() => {
                if self.js_below_innermost() {
                    Ok(())
                } else {
                    // From the event loop: no JavaScript below to take it.
                    Err(Refusal::BareThrowFromEventLoop)
                }
            }
            Op::CloseScope { .. } => self.innermost_is(OpKind::CloseScope, |f| {
                matches!(f, Frame::Native(_)) || f.is_module_body()
            }),
            Op::CloseOuter { outer } => {
                let Some(index) = self.outer_scope_index(*outer) else {
                    let open = self.frames.iter().filter(|f| matches!(f, Frame::Native(_)));
                    return Err(Refusal::TooFewNativeScopes {
                        outer: *outer,
                        open: open.count(),
                    });
                };
                let frame = &self.frames[index];
                match frame {
                    Frame::Native(scope) if is_addon_scope(scope) => Ok(()),
                    _ => Err(Refusal::NotAnAddonScope {
                        outer: *outer,
                        scope: frame.name(),
                    }),
                }
            }
            _ => not_in_family(op),
        }
    }

    /// What a native scope op does.
    #[inline]
    pub(super) fn callback_scope_effect(&mut self, op: &Op) -> Result<(), Died> {
        match op {
            Op::OpenScope {
                kind,
                context,
                resource,
                flags,
            } => self.open_scope(*kind, *context, *resource, *flags),
            Op::TimersScope => {
                // `InternalCallbackScope scope(env, process, {0, 0})`.
                let context = AsyncContext {
                    async_id: 0,
                    trigger_async_id: 0,
                };
                let process = self.heap.local_of_next_scope(ResourceView::Process);
                let scope = InternalCallbackScope::open(
                    self,
                    context,
                    process,
                    ScopeFlags::default(),
                    ContextFrame::default(),
                )?;
                self.frames.push(Frame::Native(InternalCallbackScope {
                    run_timers: true,
                    ..scope
                }));
                Ok(())
            }
            // `close` at the end of an ES module's body (`entry-module`):
            // the body's job returns (no `finally`, no hook), V8 puts back
            // the frame current before it, and the checkpoint of the main
            // script's `Close` goes on: every microtask the body queued,
            // then the rest of `Close` (`perform_stopping_check`, the
            // `kTotals` CHECK, the ticks). Checked on v20.20.2 and 26.12.1
            // (`tests/scenarios/esm-body-is-a-microtask-job*.trace`).
            Op::CloseScope { .. } if self.frames.last().is_some_and(Frame::is_module_body) => {
                self.end_microtask()
            }
            Op::CloseScope { threw } => self.close_scope(*threw),
            Op::CloseOuter { outer } => self.close_outer(*outer),
            Op::ResetGlobal(r) => {
                self.heap.reset_globals.insert(*r);
                Ok(())
            }
            Op::NapiAsyncInit(r) => {
                self.napi_async_init(*r);
                Ok(())
            }
            Op::NapiMakeCallback(r) => self.napi_make_callback(*r),
            _ => not_in_family(op),
        }
    }

    /// The innermost frame is a bare make-callback whose callback has not
    /// thrown yet: a `close threw` now is its callback's throw.
    fn bare_throw_pending(&self) -> bool {
        matches!(self.frames.last(), Some(Frame::Native(s)) if s.kind == ScopeKind::BareMakeCallback && !s.threw)
    }

    /// JavaScript runs below the innermost frame, to take what it throws:
    /// a frame below it, and a native scope open besides its own (after a
    /// `close-outer` the frames below may have none left, as from the
    /// event loop).
    pub(super) fn js_below_innermost(&self) -> bool {
        self.frames.len() > 1 && self.async_callback_scope_depth > 1
    }

    /// `node::CallbackScope` (a `Local<Object>` or a `Global<Object>*`
    /// resource) or `InternalMakeCallback` up to the callback.
    fn open_scope(
        &mut self,
        kind: ScopeKind,
        context: AsyncContext,
        resource: NativeResource,
        flags: ScopeFlags,
    ) -> Result<(), Died> {
        let slot = match resource.holder {
            Holder::Local => self
                .heap
                .local_of_next_scope(ResourceView::Resource(resource.id)),
            Holder::Global => NativeSlot::Global(resource.id),
        };
        match kind {
            ScopeKind::CallbackScope => {
                // The public `node::CallbackScope` passes no frame.
                let none = ContextFrame::default();
                let scope = InternalCallbackScope::open(self, context, slot, flags, none)?;
                self.frames.push(Frame::Native(scope));
                Ok(())
            }
            // `node::MakeCallback` passes `Undefined`: no frame.
            ScopeKind::MakeCallback => {
                self.internal_make_callback(context, resource.id, ContextFrame::default())
            }
            // The same scope; what its callback throws goes to the caller
            // ([`Self::close_scope`]).
            ScopeKind::BareMakeCallback => {
                self.internal_make_callback(context, resource.id, ContextFrame::default())?;
                if let Some(Frame::Native(scope)) = self.frames.last_mut() {
                    scope.kind = ScopeKind::BareMakeCallback;
                }
                Ok(())
            }
        }
    }

    /// The index in [`Environment::frames`] of the native scope with
    /// `outer` native scopes inside it (`close-outer`), if there is one.
    pub fn outer_scope_index(&self, outer: u32) -> Option<usize> {
        (self.frames.iter().enumerate())
            .filter(|(_, f)| matches!(f, Frame::Native(_)))
            .map(|(i, _)| i)
            .rev()
            .nth(outer as usize)
    }

    /// `napi_async_init` on `r` (`src/node_api.cc`, `v8impl::AsyncContext`'s
    /// constructor): `new_async_id()`, `get_default_trigger_async_id()`,
    /// `context_frame_` (the current frame), then
    /// `AsyncWrap::EmitAsyncInit` (`src/async_wrap.cc`): the init hooks
    /// while `kInit > 0`, with the name the addon gives (`test`, as Node's own Node-API tests name theirs).
    fn napi_async_init(&mut self, r: ResourceId) {
        let async_id = self.new_async_id();
        let trigger_async_id = self.get_default_trigger_async_id();
        let context = AsyncContext {
            async_id,
            trigger_async_id,
        };
        let frame = ContextFrame::clone(&self.context_frame);
        (self.js_objects).set_async_context(r, NapiAsyncContext { context, frame });
        if self.async_hooks.fields.k_init > 0 {
            let view = ResourceView::Resource(r);
            self.emit_init_native(async_id, "test", trigger_async_id, view);
        }
    }

    /// `napi_make_callback` on the async context of `r`
    /// (`AsyncContext::MakeCallback`): `InternalMakeCallback` with the
    /// context's ids, `r` as its resource, and the frame the context
    /// captured, which its scope enters.
    fn napi_make_callback(&mut self, r: ResourceId) -> Result<(), Died> {
        let Some(napi) = self.js_objects.async_context(&r).cloned() else {
            unreachable!("enabled checked that napi-async-init {r} ran")
        };
        self.internal_make_callback(napi.context, r, napi.frame)?;
        if let Some(Frame::Native(scope)) = self.frames.last_mut() {
            scope.napi = true;
        }
        Ok(())
    }

    /// `InternalMakeCallback` up to the call of the callback, its scope
    /// entering `context_frame`: with the trampoline installed the scope
    /// skips hooks, and `callbackTrampoline` runs when `kBefore + kAfter +
    /// kUsesExecutionAsyncResource > 0`; it writes
    /// `execution_async_resources[kStackLength - 1]` and emits `before`.
    pub(crate) fn internal_make_callback(
        &mut self,
        context: AsyncContext,
        resource: ResourceId,
        context_frame: ContextFrame,
    ) -> Result<(), Died> {
        let installed = self.hooks.trampoline_installed;
        let f = &self.async_hooks.fields;
        let use_trampoline =
            installed && f.k_before + f.k_after + f.k_uses_execution_async_resource > 0;
        let flags = ScopeFlags {
            skip_async_hooks: installed,
            skip_task_queues: false,
        };
        let view = ResourceView::Resource(resource);
        let slot = self.heap.local_of_next_scope(view);
        let mut scope = InternalCallbackScope::open(self, context, slot, flags, context_frame)?;
        scope.kind = ScopeKind::MakeCallback;
        if !scope.failed && use_trampoline {
            scope.trampoline = Some(Trampoline { resource: view });
            self.async_hooks.cost.crossings += 1;
            let index = S::trampoline_index(&self.async_hooks);
            self.async_hooks
                .js_execution_async_resources
                .set(index, Some(view));
            self.async_hooks.cost.resource_writes += 1;
            if context.async_id != 0 && self.async_hooks.fields.k_before > 0 {
                self.emit_hook(super::hooks::HookKind::Before, context.async_id);
            }
        }
        self.frames.push(Frame::Native(scope));
        Ok(())
    }

    /// Close the innermost native scope. A MakeCallback scope first finishes
    /// `callbackTrampoline` (emit `after`, `execution_async_resources.pop()`)
    /// unless the callback threw; then `InternalCallbackScope::Close` and the
    /// destructor's `PopAsyncCallbackScope`. A bare make-callback's throw
    /// then goes to its caller ([`Self::bare_make_callback_threw`]).
    pub(crate) fn close_scope(&mut self, threw: bool) -> Result<(), Died> {
        if threw && self.bare_throw_pending() {
            return self.bare_make_callback_threw();
        }
        if threw {
            match self.frames.last() {
                // A callback that threw (`uncaught-exception`) throws nothing
                // more: a make-callback's exception goes on through its
                // caller's frames as thrown (V8 predicted its catch at the
                // throw), and a `node::CallbackScope`'s one that throws now
                // meets its verbose `TryCatch`.
                Some(Frame::Native(s)) if s.threw => {}
                Some(Frame::Native(s)) if s.kind == ScopeKind::CallbackScope => {
                    self.abort_at_throw_into(true)?
                }
                // A make-callback's throw, into the caller's `TryCatch`, which
                // swallows it (the addon's, N-API's): an external catch.
                _ => self.abort_at_throw_into(false)?,
            }
        }
        let Some(Frame::Native(mut scope)) = self.frames.pop() else {
            unreachable!("enabled checked that the innermost frame is a native scope")
        };
        if threw {
            scope.failed = true;
        }
        if let (Some(_), false, false) = (scope.trampoline, scope.failed, self.is_stopping) {
            let async_id = scope.async_context.async_id;
            if async_id != 0 && self.async_hooks.fields.k_after > 0 {
                self.emit_hook(super::hooks::HookKind::After, async_id);
            }
            self.async_hooks.js_execution_async_resources.pop();
            self.async_hooks.cost.resource_writes += 1;
        }
        self.destroy_scope(scope)
    }

    /// `close threw` of a bare make-callback called from JavaScript: the
    /// callback's `Call` comes back empty, `InternalMakeCallback` marks its
    /// scope failed and returns, and `~InternalCallbackScope` closes it
    /// (`src/api/callback.cc`): no trampoline epilogue (`callbackTrampoline`,
    /// `lib/internal/async_hooks.js`, pops `execution_async_resources` only
    /// on a normal return), no `after`, no queues, but the pop
    /// (`AsyncHooks::pop_async_context`, `src/env.cc`), which shortens the
    /// JS resource array with `Set(length)` while the exception is still
    /// pending in the isolate. No `v8::TryCatch` stands between
    /// MakeCallback and the JavaScript that called the addon, so:
    ///
    /// - Node 26, when the pop shortened the JS array (the trampoline on
    ///   the path wrote its slot, or other JavaScript wrote past the
    ///   stack: `f8d.js`), so `pop_async_context` called into V8: V8
    ///   clears a pending exception on entry to the API
    ///   (`CallDepthScope`, `deps/v8/src/api/api-inl.h`); the exception is
    ///   lost ([`Observation::ExceptionLost`]) and the caller goes on.
    /// - Otherwise (v20, whose V8 has moved the exception to the scheduled
    ///   slot, which API calls leave alone; or no V8 call): it is in
    ///   flight in the caller
    ///   ([`Environment::exception_in_flight`]), which catches it (`catch`)
    ///   or lets it go on (`uncaught-exception`).
    ///
    /// While stopping, the callback was terminated: nothing is handed on.
    /// docs/node-findings.md F8; checked on v20.20.2 and v26.12.1
    /// (`tests/scenarios/make-callback-bare-*.trace`).
    fn bare_make_callback_threw(&mut self) -> Result<(), Died> {
        let Some(Frame::Native(mut scope)) = self.frames.pop() else {
            unreachable!("enabled checked that the innermost frame is a bare make-callback")
        };
        scope.failed = true;
        let length = self.async_hooks.js_execution_async_resources.len();
        self.destroy_scope(scope)?;
        if self.is_stopping {
            // Terminated: there is no exception to hand on.
            return Ok(());
        }
        // `pop_async_context` called `Set(length)` iff it shortened the
        // array: the slot the trampoline wrote (or any write past the
        // stack) is what makes the V8 call.
        let called_v8 = self.async_hooks.js_execution_async_resources.len() < length;
        if self.version == NodeVersion::V26 && called_v8 {
            self.out.push(Observation::ExceptionLost);
        } else {
            self.exception_in_flight = true;
        }
        Ok(())
    }

    /// `napi_close_callback_scope` (`src/node_api.cc`): `delete` a
    /// `node::CallbackScope` that is not the innermost native scope; only a
    /// counter (`open_callback_scopes`) is checked. Its destructor runs
    /// `Close` as for any scope, which pops whatever entry is on top.
    pub(crate) fn close_outer(&mut self, outer: u32) -> Result<(), Died> {
        let index = self.outer_scope_index(outer);
        let Some(Frame::Native(scope)) = index.map(|i| self.frames.remove(i)) else {
            unreachable!("enabled checked that close-outer {outer} names a native scope")
        };
        self.destroy_scope(scope)
    }

    /// `~InternalCallbackScope`: `Close()`, then `PopAsyncCallbackScope`
    /// (which [`Self::finish_close`] does, now or when a tick run that
    /// `Close` started ends).
    fn destroy_scope(&mut self, scope: InternalCallbackScope<S>) -> Result<(), Died> {
        self.internal_callback_scope_close(scope)
    }

    /// The end of `InternalCallbackScope::Close` after the tick callback, and
    /// the destructor's `PopAsyncCallbackScope`: `failed_` if the tick
    /// callback's `Call` came back empty (`threw`), `perform_stopping_check`
    /// (clear the stack if stopping), then the scope is gone.
    pub(crate) fn finish_close(&mut self, mut scope: InternalCallbackScope<S>, threw: bool) {
        if threw {
            scope.failed = true;
        }
        if self.stopping() {
            scope.failed = true;
            S::clear_async_id_stack(&mut self.async_hooks, false);
        }
        self.pop_async_callback_scope(&scope);
    }

    /// `Environment::PopAsyncCallbackScope` in the destructor: the scope has
    /// returned, its `Local<Object>` with it.
    fn pop_async_callback_scope(&mut self, scope: &InternalCallbackScope<S>) {
        self.async_callback_scope_depth -= 1;
        self.heap.live_scopes.remove(&scope.serial);
    }

    /// `InternalCallbackScope::Close` (`src/api/callback.cc`), up to the tick
    /// callback, which may stop in a tick's body ([`TickRun::Close`]).
    fn internal_callback_scope_close(
        &mut self,
        mut scope: InternalCallbackScope<S>,
    ) -> Result<(), Died> {
        if self.stopping() {
            scope.failed = true;
            S::clear_async_id_stack(&mut self.async_hooks, false);
            self.pop_async_callback_scope(&scope);
            return Ok(());
        }
        let async_id = scope.async_context.async_id;
        if !scope.failed && async_id != 0 && !scope.skip_hooks {
            self.async_wrap_emit_after(async_id);
        }
        if scope.pushed_ids {
            // The pop, then the frame's restore, still under `if
            // (pushed_ids_)`: also after a failed callback.
            let frame = FrameRestore {
                current: &mut self.context_frame,
                prior: std::mem::take(&mut scope.prior_context_frame),
                open: &self.frames,
            };
            S::leave_scope(
                &mut self.async_hooks,
                async_id,
                scope.entered,
                scope.serial,
                frame,
            )?;
        }
        if scope.failed || self.async_callback_scope_depth > 1 || scope.skip_task_queues {
            self.pop_async_callback_scope(&scope);
            return Ok(());
        }
        if !self.ticks.has_tick_scheduled {
            // PerformCheckpoint, which may stop in a microtask's body.
            match self.run_microtasks(Checkpoint::Close(Box::new(scope)))? {
                Some(Checkpoint::Close(s)) => scope = *s,
                Some(_) => unreachable!("run_microtasks gives its site back"),
                None => return Ok(()),
            }
            return self.close_after_checkpoint(scope, true);
        }
        self.close_after_checkpoint(scope, false)
    }

    /// The rest of the outermost `InternalCallbackScope::Close` after the
    /// microtask checkpoint (`checkpointed`; there is none when a tick is
    /// scheduled): `perform_stopping_check()` after the checkpoint, the
    /// `kTotals` CHECK, then the tick callback if a tick is scheduled and
    /// JS can run (`can_call_into_js()`). Outside a loom build nothing
    /// stops the environment between the start of `Close` and here but a
    /// `stop` in a microtask's body, which [`Self::end_microtask`] handles.
    pub(crate) fn close_after_checkpoint(
        &mut self,
        mut scope: InternalCallbackScope<S>,
        checkpointed: bool,
    ) -> Result<(), Died> {
        if checkpointed && self.stopping() {
            scope.failed = true;
            S::clear_async_id_stack(&mut self.async_hooks, false);
        }
        if self.async_hooks.fields.k_totals != 0
            && S::checks_outermost_close(&self.async_hooks, scope.entered)
        {
            let ids = &self.async_hooks.async_id_fields;
            if ids.k_execution_async_id != 0 {
                return Err(Died(Observation::CheckFailed(
                    FailedCheck::ExecutionAsyncIdIsZero,
                )));
            }
            if ids.k_trigger_async_id != 0 {
                return Err(Died(Observation::CheckFailed(
                    FailedCheck::TriggerAsyncIdIsZero,
                )));
            }
        }
        if (!self.ticks.has_tick_scheduled && !self.rejections.has_rejection_to_warn)
            || self.stopping()
        {
            self.pop_async_callback_scope(&scope);
            return Ok(());
        }
        self.async_hooks.cost.crossings += 1;
        self.process_ticks_and_rejections(TickRun::Close(Box::new(scope)))
    }
}

/// A `node::CallbackScope` an addon opened, which `napi_close_callback_scope`
/// may delete out of order: not the main script's, RunTimers' or a
/// MakeCallback's.
fn is_addon_scope<S: AsyncIdStack>(scope: &InternalCallbackScope<S>) -> bool {
    !scope.is_bare() && scope.kind == ScopeKind::CallbackScope
}
