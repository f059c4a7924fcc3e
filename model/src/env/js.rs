//! The JavaScript layer: `lib/internal/async_hooks.js` (and `runInAsyncScope`
//! from `lib/async_hooks.js`).

use super::context_frame::ContextFrame;
use super::hooks::HookKind;
use super::{not_in_family, AsyncIdStack, Died, Environment, Frame, Refusal};
use crate::vocab::{AsyncId, Observation, Op, OpKind, ResourceView, SIGABRT};

impl<S: AsyncIdStack> Environment<S> {
    /// When a JS op of `lib/internal/async_hooks.js` can happen, beyond what
    /// [`Environment::enabled`] asks of every op (the calls are JavaScript):
    /// the `finally` of `runInAsyncScope` or `defaultTriggerAsyncIdScope`
    /// ends the innermost frame, which must be its own.
    #[inline]
    pub(super) fn js_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        match op {
            Op::ExitRunInAsyncScope => self.innermost_is(OpKind::ExitRunInAsyncScope, |f| {
                matches!(f, Frame::RunInAsyncScope { .. })
            }),
            Op::ExitDefaultTriggerScope => self
                .innermost_is(OpKind::ExitDefaultTriggerScope, |f| {
                    matches!(f, Frame::DefaultTriggerScope { .. })
                }),
            Op::EmitInit { .. }
            | Op::EmitBefore { .. }
            | Op::EmitAfter { .. }
            | Op::EmitDestroy { .. }
            | Op::EnterRunInAsyncScope { .. }
            | Op::EnterDefaultTriggerScope { .. }
            | Op::ExecutionAsyncId
            | Op::TriggerAsyncId
            | Op::ExecutionAsyncResource
            | Op::DefaultTriggerAsyncId
            | Op::NewAsyncId
            | Op::ClearAsyncIdStack => Ok(()),
            _ => not_in_family(op),
        }
    }

    /// What a JS op of `lib/internal/async_hooks.js` does.
    #[inline]
    pub(super) fn js_effect(&mut self, op: &Op) -> Result<(), Died> {
        match op {
            Op::EmitInit {
                async_id,
                type_name,
                trigger_async_id,
                resource,
            } => {
                self.emit_init_script(
                    *async_id,
                    type_name,
                    *trigger_async_id,
                    resource.map(ResourceView::Resource),
                );
                Ok(())
            }
            Op::EmitBefore {
                async_id,
                trigger_async_id,
                resource,
            } => self.emit_before_script(
                *async_id,
                *trigger_async_id,
                resource.map(ResourceView::Resource),
            ),
            Op::EmitAfter { async_id } => self.emit_after_script(*async_id),
            Op::EmitDestroy { async_id } => {
                self.emit_destroy_script(*async_id);
                Ok(())
            }
            Op::EnterRunInAsyncScope {
                async_id,
                trigger_async_id,
                resource,
            } => {
                // The frame the AsyncResource captured when it was made
                // (`async-resource R`), else it is made here and captures
                // the current one; `runInAsyncScope` exchanges it in after
                // `emitBefore`.
                let captured = (self.js_objects.resource_frame(resource))
                    .unwrap_or(&self.context_frame)
                    .clone();
                self.emit_before_script(
                    *async_id,
                    *trigger_async_id,
                    Some(ResourceView::Resource(*resource)),
                )?;
                let prior_context_frame = std::mem::replace(&mut *self.context_frame, captured);
                self.frames.push(Frame::RunInAsyncScope {
                    async_id: *async_id,
                    prior_context_frame,
                });
                Ok(())
            }
            Op::ExitRunInAsyncScope => {
                let Some(Frame::RunInAsyncScope {
                    async_id,
                    prior_context_frame,
                }) = self.frames.pop()
                else {
                    unreachable!("enabled checked that the innermost frame is a run-in-async-scope")
                };
                if !self.is_stopping {
                    // `AsyncContextFrame.set(prior)`, then the rest of the `finally`.
                    *self.context_frame = prior_context_frame;
                    self.run_in_async_scope_finally(async_id)?;
                }
                Ok(())
            }
            Op::EnterDefaultTriggerScope { trigger_async_id } => {
                let old = self.enter_default_trigger_scope(*trigger_async_id);
                self.frames.push(Frame::DefaultTriggerScope {
                    old_default_trigger_async_id: old,
                });
                Ok(())
            }
            Op::ExitDefaultTriggerScope => {
                let Some(Frame::DefaultTriggerScope {
                    old_default_trigger_async_id,
                }) = self.frames.pop()
                else {
                    unreachable!(
                        "enabled checked that the innermost frame is a default-trigger-scope"
                    )
                };
                if !self.is_stopping {
                    self.async_hooks.async_id_fields.k_default_trigger_async_id =
                        old_default_trigger_async_id;
                }
                Ok(())
            }
            Op::ExecutionAsyncId => {
                let id = self.async_hooks.async_id_fields.k_execution_async_id;
                self.out.push(Observation::ExecutionAsyncId(id));
                Ok(())
            }
            Op::TriggerAsyncId => {
                let id = self.async_hooks.async_id_fields.k_trigger_async_id;
                self.out.push(Observation::TriggerAsyncId(id));
                Ok(())
            }
            Op::ExecutionAsyncResource => {
                let r = self.execution_async_resource();
                self.out.push(Observation::ExecutionAsyncResource(r));
                Ok(())
            }
            Op::DefaultTriggerAsyncId => {
                let id = self.get_default_trigger_async_id();
                self.out.push(Observation::DefaultTriggerAsyncId(id));
                Ok(())
            }
            Op::NewAsyncId => {
                let id = self.new_async_id();
                self.out.push(Observation::NewAsyncId(id));
                Ok(())
            }
            Op::ClearAsyncIdStack => {
                self.async_hooks.cost.crossings += 1;
                S::clear_async_id_stack(&mut self.async_hooks, !self.is_stopping);
                Ok(())
            }
            _ => not_in_family(op),
        }
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// `pushAsyncContext(asyncId, triggerAsyncId, resource)`, as the store does it.
    pub(crate) fn push_async_context_js(
        &mut self,
        async_id: AsyncId,
        trigger_async_id: AsyncId,
        resource: Option<ResourceView>,
    ) -> Result<(), Died> {
        S::push_async_context_js(&mut self.async_hooks, async_id, trigger_async_id, resource)
    }

    /// `popAsyncContext(asyncId)`, as the store does it.
    pub(crate) fn pop_async_context_js(&mut self, async_id: AsyncId) -> Result<bool, Died> {
        S::pop_async_context_js(&mut self.async_hooks, async_id)
    }

    /// `emitInitScript`: nothing without init hooks.
    pub(crate) fn emit_init_script(
        &mut self,
        async_id: AsyncId,
        type_name: &str,
        trigger_async_id: AsyncId,
        resource: Option<ResourceView>,
    ) {
        if self.async_hooks.fields.k_init == 0 {
            return;
        }
        self.emit_init_native(
            async_id,
            type_name,
            trigger_async_id,
            resource.unwrap_or(ResourceView::Undefined),
        );
    }

    /// `emitBeforeScript`: `pushAsyncContext`, then the before hooks.
    pub(crate) fn emit_before_script(
        &mut self,
        async_id: AsyncId,
        trigger_async_id: AsyncId,
        resource: Option<ResourceView>,
    ) -> Result<(), Died> {
        self.push_async_context_js(async_id, trigger_async_id, resource)?;
        if self.async_hooks.fields.k_before > 0 {
            self.emit_hook(HookKind::Before, async_id);
        }
        Ok(())
    }

    /// `emitAfterScript`: the after hooks, then `popAsyncContext`.
    pub(crate) fn emit_after_script(&mut self, async_id: AsyncId) -> Result<(), Died> {
        if self.async_hooks.fields.k_after > 0 {
            self.emit_hook(HookKind::After, async_id);
        }
        self.pop_async_context_js(async_id)?;
        Ok(())
    }

    /// `emitDestroyScript`: queue the id (`queueDestroyAsyncId`) when destroy
    /// hooks exist and the id is positive. The destroy hooks run later from a
    /// native immediate, which the model does not run.
    pub(crate) fn emit_destroy_script(&mut self, async_id: AsyncId) {
        if self.async_hooks.fields.k_destroy == 0 || async_id <= 0 {
            return;
        }
        self.async_hooks.cost.crossings += 1;
        self.destroy_async_id_list.push(async_id);
    }

    /// `hasAsyncIdStack()`, as the store answers it.
    pub(crate) fn has_async_id_stack(&self) -> bool {
        S::has_async_id_stack(&self.async_hooks)
    }

    /// The `finally` of `runInAsyncScope`: `if (hasAsyncIdStack()) emitAfter(asyncId)`.
    pub(crate) fn run_in_async_scope_finally(&mut self, async_id: AsyncId) -> Result<(), Died> {
        if self.has_async_id_stack() {
            self.emit_after_script(async_id)?;
        }
        Ok(())
    }

    /// `executionAsyncResource()`: set `kUsesExecutionAsyncResource`, then
    /// the store's lookup ([`AsyncIdStack::execution_async_resource`]).
    pub(crate) fn execution_async_resource(&mut self) -> ResourceView {
        self.async_hooks.fields.k_uses_execution_async_resource = 1;
        S::execution_async_resource(&mut self.async_hooks, &self.heap)
    }

    /// `fatalError(e)` (`lib/internal/async_hooks.js`), for an exception in
    /// a hook callback: print it, then `process.abort()` under
    /// `--abort-on-uncaught-exception` (SIGABRT), else `process.exit(1)`.
    /// The process ends there; what the op does after it never happens
    /// ([`crate::vocab::Runtime::apply`] drops it).
    pub(crate) fn fatal_error(&mut self) {
        if self.fatal.is_none() {
            let terminal = if self.async_hooks.abort_on_uncaught_exception {
                Observation::Aborted(SIGABRT)
            } else {
                Observation::Exit(1)
            };
            self.fatal = Some((self.out.len(), terminal));
        }
    }

    /// What `executionAsyncResource()` would answer now, without its
    /// effects (for [`Environment::enabled`], which changes nothing).
    pub(crate) fn peek_execution_async_resource(&self) -> ResourceView {
        let mut ah = self.async_hooks.clone();
        S::execution_async_resource(&mut ah, &self.heap)
    }

    /// `getDefaultTriggerAsyncId()`: the default trigger id if set (>= 0),
    /// else the execution id.
    pub(crate) fn get_default_trigger_async_id(&self) -> AsyncId {
        let ids = &self.async_hooks.async_id_fields;
        if ids.k_default_trigger_async_id < 0 {
            ids.k_execution_async_id
        } else {
            ids.k_default_trigger_async_id
        }
    }

    /// What the constructor of a resource of Node's own JavaScript does for
    /// its async context: a `TickObject`'s
    /// (`lib/internal/process/task_queues.js`) and a Timeout's
    /// `initAsyncResource` (`lib/internal/timers.js`) alike. `newAsyncId()`,
    /// `getDefaultTriggerAsyncId()`, on Node 26
    /// `this[async_context_frame] = AsyncContextFrame.current()`, then
    /// `emitInit(asyncId, type, triggerAsyncId, this)` if init hooks exist.
    /// Returns the ids and the frame the resource keeps.
    pub(crate) fn init_core_resource(
        &mut self,
        type_name: &str,
        resource: fn(AsyncId) -> ResourceView,
    ) -> (AsyncId, AsyncId, ContextFrame) {
        let async_id = self.new_async_id();
        let trigger_async_id = self.get_default_trigger_async_id();
        let context_frame = ContextFrame::clone(&self.context_frame);
        if self.async_hooks.fields.k_init > 0 {
            self.emit_init_native(async_id, type_name, trigger_async_id, resource(async_id));
        }
        (async_id, trigger_async_id, context_frame)
    }

    /// `newAsyncId()`: `++async_id_fields[kAsyncIdCounter]`.
    pub(crate) fn new_async_id(&mut self) -> AsyncId {
        self.async_hooks.async_id_fields.k_async_id_counter += 1;
        self.async_hooks.async_id_fields.k_async_id_counter
    }

    /// `defaultTriggerAsyncIdScope(triggerAsyncId, block)` up to the block:
    /// set `kDefaultTriggerAsyncId`, return the old value for the `finally`.
    pub(crate) fn enter_default_trigger_scope(&mut self, trigger_async_id: AsyncId) -> AsyncId {
        let ids = &mut self.async_hooks.async_id_fields;
        std::mem::replace(&mut ids.k_default_trigger_async_id, trigger_async_id)
    }
}
