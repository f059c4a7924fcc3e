//! The JavaScript layer: `lib/internal/async_hooks.js` (and `runInAsyncScope`
//! from `lib/async_hooks.js`).

use crate::async_hooks::Top;
use crate::hooks::HookKind;
use crate::mutant::Mutant;
use crate::{Died, Lazy};
use model::vocab::{AsyncId, ResourceView};

impl Lazy {
    /// `pushAsyncContext(asyncId, triggerAsyncId, resource)`: the resource
    /// goes at the eager depth `kStackLength + kLazyScopes`, the pair at
    /// `kStackLength`, or through `pushAsyncContext_` when the JS view is full.
    pub(crate) fn push_async_context_js(
        &mut self,
        async_id: AsyncId,
        trigger_async_id: AsyncId,
        resource: Option<ResourceView>,
    ) -> Result<(), Died> {
        let ah = &mut self.async_hooks;
        let depth = if ah.mutant == Some(Mutant::ResourceIndexByStackLength) {
            ah.fields.k_stack_length as usize
        } else {
            ah.depth()
        };
        ah.js_execution_async_resources.set(depth, resource);
        ah.cost.resource_writes += 1;
        let offset = ah.fields.k_stack_length as usize;
        let room_needed = if ah.mutant == Some(Mutant::FallbackByStackLength) {
            offset
        } else {
            ah.depth()
        };
        if room_needed >= ah.stack_capacity_pairs {
            ah.cost.crossings += 1;
            return ah.push_async_context(async_id, trigger_async_id, None);
        }
        ah.async_ids_stack[offset] = (
            ah.async_id_fields.k_execution_async_id,
            ah.async_id_fields.k_trigger_async_id,
        );
        ah.cost.stack_writes += 2;
        ah.fields.k_stack_length += 1;
        ah.async_id_fields.k_execution_async_id = async_id;
        ah.async_id_fields.k_trigger_async_id = trigger_async_id;
        Ok(())
    }

    /// `popAsyncContext(asyncId)`, lazy-aware: nothing when both the stack and
    /// the chain are empty; the same corrupted-stack check; while
    /// `kLazyScopes != 0` JS asks C++ whether the innermost entry is a lazy
    /// scope, and if so C++ unlinks it, restores the pair it saved and leaves
    /// its resource in the native array (where an eager push left it); then
    /// `execution_async_resources.pop()` as before.
    pub(crate) fn pop_async_context_js(&mut self, async_id: AsyncId) -> Result<bool, Died> {
        let ah = &mut self.async_hooks;
        let ignores_lazy = ah.mutant == Some(Mutant::JsPopIgnoresLazy);
        if ah.fields.k_stack_length == 0 && (ah.fields.k_lazy_scopes == 0 || ignores_lazy) {
            return Ok(false);
        }
        if ah.fields.k_check > 0 && ah.async_id_fields.k_execution_async_id != async_id {
            ah.cost.crossings += 1;
            return ah.pop_async_context(async_id);
        }
        if ah.fields.k_lazy_scopes != 0 && !ignores_lazy {
            ah.cost.crossings += 1;
            if ah.top() == Top::Lazy {
                let index = ah.depth() - 1;
                let lazy = ah.lazy_scopes.pop().expect("top() saw a lazy scope");
                ah.fields.k_lazy_scopes -= 1;
                ah.cost.chain_writes += 1;
                if ah.mutant != Some(Mutant::JsPopLazyForgetsResource) {
                    let natives = &mut ah.native_execution_async_resources;
                    if natives.len() <= index {
                        natives.resize(index + 1, None);
                    }
                    natives[index] = Some(lazy.resource);
                    ah.cost.resource_writes += 1;
                }
                ah.async_id_fields.k_execution_async_id = lazy.saved.0;
                if ah.mutant != Some(Mutant::LazyPopKeepsTrigger) {
                    ah.async_id_fields.k_trigger_async_id = lazy.saved.1;
                }
                ah.js_execution_async_resources.pop();
                ah.cost.resource_writes += 1;
                return Ok(ah.depth() > 0);
            }
        }
        let offset = ah.fields.k_stack_length as usize - 1;
        let (execution, trigger) = ah.async_ids_stack[offset];
        ah.async_id_fields.k_execution_async_id = execution;
        ah.async_id_fields.k_trigger_async_id = trigger;
        ah.js_execution_async_resources.pop();
        ah.cost.resource_writes += 1;
        ah.fields.k_stack_length = offset as u32;
        Ok(ah.depth() > 0)
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

    /// `hasAsyncIdStack()`, lazy-aware: `kStackLength > 0 || kLazyScopes > 0`.
    pub(crate) fn has_async_id_stack(&self) -> bool {
        let f = &self.async_hooks.fields;
        if self.is(Mutant::HasAsyncIdStackIgnoresLazy) {
            return f.k_stack_length > 0;
        }
        f.k_stack_length > 0 || f.k_lazy_scopes > 0
    }

    /// The `finally` of `runInAsyncScope`: `if (hasAsyncIdStack()) emitAfter(asyncId)`.
    pub(crate) fn run_in_async_scope_finally(&mut self, async_id: AsyncId) -> Result<(), Died> {
        if self.has_async_id_stack() {
            self.emit_after_script(async_id)?;
        }
        Ok(())
    }

    /// `executionAsyncResource()`, lazy-aware: the index is the eager depth
    /// `kStackLength + kLazyScopes - 1`; when the JS entry there is falsy, C++
    /// answers, with the innermost lazy scope's resource if that is the entry.
    pub(crate) fn execution_async_resource(&mut self) -> ResourceView {
        let ah = &mut self.async_hooks;
        ah.fields.k_uses_execution_async_resource = 1;
        if ah.mutant == Some(Mutant::ResourceIgnoresJsAbove) {
            if let Some(lazy) = ah.lazy_scopes.last() {
                return lazy.resource.read(&self.reset_globals);
            }
        }
        let stack_length = if ah.mutant == Some(Mutant::ResourceIndexByStackLength) {
            ah.fields.k_stack_length as usize
        } else {
            ah.depth()
        };
        if stack_length == 0 {
            return ResourceView::TopLevel;
        }
        let index = stack_length - 1;
        if let Some(r) = ah.js_execution_async_resources.get(index) {
            return r;
        }
        ah.cost.crossings += 1;
        ah.native_execution_async_resource(index, &self.reset_globals)
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
