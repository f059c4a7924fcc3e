//! `AsyncHooks` (`src/env.h`, `src/env.cc`): the id fields, `async_ids_stack_`,
//! the two resource arrays, and the store ([`AsyncIdStack`]) beside them.

use super::async_id_stack::AsyncIdStack;
use super::fields::{AsyncIdFields, Fields};
use super::resources::{Heap, JsArray, NativeSlot};
use super::tracked::{Tracked, TrackedVec};
use super::Died;
use crate::vocab::{AsyncId, Cost, FailedCheck, Observation, ResourceView};

/// Pairs `async_ids_stack_` has room for at first (`AsyncHooks::AsyncHooks`:
/// 16 * 2 doubles); JS pushes fall back to C++ past it.
pub const INITIAL_STACK_PAIRS: usize = 16;

/// `class AsyncHooks` (`src/env.h`): everything Node keeps per environment for
/// async context.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AsyncHooks<S> {
    /// `fields_`.
    pub fields: Tracked<Fields>,
    /// `async_id_fields_`.
    pub async_id_fields: AsyncIdFields,
    /// `async_ids_stack_`: the saved (execution, trigger) pairs; `len()` is
    /// not the stack length, `fields.k_stack_length` is.
    pub async_ids_stack: TrackedVec<(AsyncId, AsyncId)>,
    /// Pairs that `async_ids_stack_` can hold before `grow_async_ids_stack`.
    pub stack_capacity_pairs: usize,
    /// `native_execution_async_resources_`.
    pub native_execution_async_resources: TrackedVec<Option<NativeSlot>>,
    /// `js_execution_async_resources_` (`execution_async_resources` in JS).
    pub js_execution_async_resources: Tracked<JsArray>,
    /// What the store keeps beside Node's fields.
    pub store: S,
    /// Work done, in the shared units.
    pub cost: Cost,
    /// `env()->abort_on_uncaught_exception()` (`--abort-on-uncaught-exception`).
    pub abort_on_uncaught_exception: bool,
}

impl<S: AsyncIdStack> AsyncHooks<S> {
    /// `AsyncHooks::AsyncHooks` (`src/env.cc`).
    pub fn new(store: S) -> Self {
        AsyncHooks {
            fields: Tracked::new(Fields::new()),
            async_id_fields: AsyncIdFields::new(),
            async_ids_stack: TrackedVec::new(vec![(0, 0); INITIAL_STACK_PAIRS]),
            stack_capacity_pairs: INITIAL_STACK_PAIRS,
            native_execution_async_resources: TrackedVec::default(),
            js_execution_async_resources: Tracked::default(),
            store,
            cost: Cost::default(),
            abort_on_uncaught_exception: false,
        }
    }

    /// The store's [`AsyncIdStack::depth`]: `kStackLength` in Node today.
    pub fn depth(&self) -> usize {
        S::depth(self)
    }

    /// `AsyncHooks::grow_async_ids_stack` (`src/env.cc`): triple the room and
    /// hand JS the new buffer.
    pub fn grow_async_ids_stack(&mut self) {
        self.stack_capacity_pairs *= 3;
        self.async_ids_stack
            .resize(self.stack_capacity_pairs, (0, 0));
        self.cost.allocations += 1;
    }

    /// The `CHECK_GE(async_id, -1)` and `CHECK_GE(trigger_async_id, -1)` of
    /// `push_async_context`, while `kCheck > 0`.
    pub fn check_async_ids(
        &self,
        async_id: AsyncId,
        trigger_async_id: AsyncId,
    ) -> Result<(), Died> {
        if self.fields.k_check == 0 {
            return Ok(());
        }
        if async_id < -1 {
            return Err(Died(Observation::CheckFailed(
                FailedCheck::AsyncIdAtLeastMinusOne,
            )));
        }
        if trigger_async_id < -1 {
            return Err(Died(Observation::CheckFailed(
                FailedCheck::TriggerAsyncIdAtLeastMinusOne,
            )));
        }
        Ok(())
    }

    /// The resource check at the start of `push_async_context` (Node 26,
    /// `src/env.cc`): `CHECK_IMPLIES(ptr != nullptr, !ptr->IsEmpty())` on a
    /// `Global<Object>*`, whatever `kCheck` is.
    pub fn check_resource(&self, resource: &NativeSlot, heap: &Heap) -> Result<(), Died> {
        match resource {
            NativeSlot::Global(id) if heap.reset_globals.contains(id) => Err(Died(
                Observation::CheckFailed(FailedCheck::GlobalResourceNotEmpty),
            )),
            _ => Ok(()),
        }
    }

    /// Save the current pair at `async_ids_stack_[kStackLength]` and install
    /// the new one (the body shared by the C++ and the JS push).
    pub fn save_and_install(&mut self, async_id: AsyncId, trigger_async_id: AsyncId) {
        let offset = self.fields.k_stack_length as usize;
        let ids = &mut self.async_id_fields;
        self.async_ids_stack[offset] = (ids.k_execution_async_id, ids.k_trigger_async_id);
        self.cost.stack_writes += 2;
        self.fields.k_stack_length += 1;
        ids.k_execution_async_id = async_id;
        ids.k_trigger_async_id = trigger_async_id;
    }

    /// Put back the pair saved at `async_ids_stack_[kStackLength - 1]` and
    /// drop the entry (the body shared by the C++ and the JS pop).
    pub fn restore_saved(&mut self) {
        let offset = self.fields.k_stack_length as usize - 1;
        let (execution, trigger) = self.async_ids_stack[offset];
        self.async_id_fields.k_execution_async_id = execution;
        self.async_id_fields.k_trigger_async_id = trigger;
        self.fields.k_stack_length = offset as u32;
    }

    /// `AsyncHooks::push_async_context` (`src/env.cc`): check the ids, grow
    /// the stack when it is full, save the current pair, install the new one,
    /// record a native resource if there is one (a push from JS passes none).
    pub fn push_async_context(
        &mut self,
        async_id: AsyncId,
        trigger_async_id: AsyncId,
        resource: Option<NativeSlot>,
    ) -> Result<(), Died> {
        self.check_async_ids(async_id, trigger_async_id)?;
        let offset = self.depth();
        if S::grows_at(self) >= self.stack_capacity_pairs {
            self.grow_async_ids_stack();
        }
        self.save_and_install(async_id, trigger_async_id);
        if let Some(slot) = resource {
            let natives = &mut self.native_execution_async_resources;
            if offset + 1 > natives.capacity() {
                self.cost.allocations += 1;
            }
            natives.resize(offset + 1, None);
            natives[offset] = Some(slot);
            self.cost.resource_writes += 1;
        }
        Ok(())
    }

    /// The corrupted-stack check of `pop_async_context`: with `kCheck > 0`
    /// and a current execution id other than `async_id`,
    /// `FailWithCorruptedAsyncStack(async_id)`.
    pub fn check_corrupted_stack(&self, async_id: AsyncId) -> Result<(), Died> {
        if self.fields.k_check > 0 && self.async_id_fields.k_execution_async_id != async_id {
            return Err(self.fail_with_corrupted_async_stack(async_id));
        }
        Ok(())
    }

    /// `AsyncHooks::pop_async_context` (`src/env.cc`): return early on an
    /// empty stack; die with `FailWithCorruptedAsyncStack` when checks are on
    /// and the current id is not `async_id`; else restore the saved pair.
    /// Returns whether entries remain.
    pub fn pop_async_context(&mut self, async_id: AsyncId) -> Result<bool, Died> {
        if self.fields.k_stack_length == 0 {
            return Ok(false);
        }
        self.check_corrupted_stack(async_id)?;
        let offset = self.depth() - 1;
        self.restore_saved();
        if matches!(
            self.native_execution_async_resources.get(offset),
            Some(Some(_))
        ) {
            self.native_execution_async_resources.truncate(offset);
            self.cost.resource_writes += 1;
        }
        self.truncate_js_resources(offset);
        Ok(offset > 0)
    }

    /// `js_execution_async_resources_->Set(length, offset)` in
    /// `pop_async_context`, when the JS array reaches past `offset`.
    pub fn truncate_js_resources(&mut self, offset: usize) {
        if self.js_execution_async_resources.len() > offset {
            self.js_execution_async_resources.truncate(offset);
            self.cost.resource_writes += 1;
        }
    }

    /// `AsyncHooks::FailWithCorruptedAsyncStack` (`src/env.cc`): prints
    /// `actual` (the current execution id) and `expected`, exits with 1, or
    /// with `--abort-on-uncaught-exception` aborts (`ABORT_NO_BACKTRACE`).
    pub fn fail_with_corrupted_async_stack(&self, expected_async_id: AsyncId) -> Died {
        Died(Observation::CorruptedStack {
            actual: self.async_id_fields.k_execution_async_id,
            expected: expected_async_id,
            abort: self.abort_on_uncaught_exception,
        })
    }

    /// `AsyncHooks::clear_async_id_stack` (`src/env.cc`): empty both resource
    /// arrays (the JS one only while JS can run), context (0, 0), length 0.
    pub fn clear_async_id_stack(&mut self, can_call_into_js: bool) {
        if can_call_into_js && !self.js_execution_async_resources.is_empty() {
            self.js_execution_async_resources.truncate(0);
            self.cost.resource_writes += 1;
        }
        if !self.native_execution_async_resources.is_empty() {
            self.cost.resource_writes += 1;
        }
        self.native_execution_async_resources = TrackedVec::default();
        self.async_id_fields.k_execution_async_id = 0;
        self.async_id_fields.k_trigger_async_id = 0;
        self.fields.k_stack_length = 0;
    }

    /// `pushAsyncContext(asyncId, triggerAsyncId, resource)`
    /// (`lib/internal/async_hooks.js`): write the resource at `kStackLength`,
    /// then push in JS, or through `pushAsyncContext_` (C++, no resource)
    /// when the JS view of the stack is full.
    pub fn push_async_context_js(
        &mut self,
        async_id: AsyncId,
        trigger_async_id: AsyncId,
        resource: Option<ResourceView>,
    ) -> Result<(), Died> {
        let offset = S::resource_index(self);
        self.js_execution_async_resources.set(offset, resource);
        self.cost.resource_writes += 1;
        if S::js_push_falls_back_at(self) >= self.stack_capacity_pairs {
            self.cost.crossings += 1;
            return self.push_async_context(async_id, trigger_async_id, None);
        }
        self.save_and_install(async_id, trigger_async_id);
        Ok(())
    }

    /// `popAsyncContext(asyncId)` (`lib/internal/async_hooks.js`): false on an
    /// empty stack; with checks on and the wrong id, `popAsyncContext_` (C++)
    /// dies; else pop in JS, including `execution_async_resources.pop()`
    /// whatever entry that last element is.
    pub fn pop_async_context_js(&mut self, async_id: AsyncId) -> Result<bool, Died> {
        if self.fields.k_stack_length == 0 {
            return Ok(false);
        }
        if self.check_corrupted_stack(async_id).is_err() {
            self.cost.crossings += 1;
            return S::pop_async_context(self, async_id);
        }
        self.restore_saved();
        self.pop_js_resource();
        Ok(self.depth() > 0)
    }

    /// `execution_async_resources.pop()` in `popAsyncContext`.
    pub fn pop_js_resource(&mut self) {
        self.js_execution_async_resources.pop();
        self.cost.resource_writes += 1;
    }

    /// `executionAsyncResource()` (`lib/internal/async_hooks.js`) for a stack
    /// of `stack_length` entries: the top level resource on an empty stack;
    /// else the JS array entry at `stack_length - 1` if truthy, or the native
    /// one (`executionAsyncResource_`).
    pub fn execution_async_resource_at(
        &mut self,
        stack_length: usize,
        heap: &Heap,
    ) -> ResourceView {
        if stack_length == 0 {
            return ResourceView::TopLevel;
        }
        let index = stack_length - 1;
        if let Some(r) = self.js_execution_async_resources.get(index) {
            return r;
        }
        self.cost.crossings += 1;
        S::native_execution_async_resource(self, index, heap)
    }

    /// `AsyncHooks::native_execution_async_resource(i)` (`src/env-inl.h`):
    /// an empty handle (JS `undefined`) past the end or in a JS-pushed slot.
    pub fn native_execution_async_resource(&self, index: usize, heap: &Heap) -> ResourceView {
        match self.native_execution_async_resources.get(index) {
            Some(Some(slot)) => slot.read(heap),
            _ => ResourceView::Undefined,
        }
    }
}

impl<S: AsyncIdStack> Default for AsyncHooks<S> {
    fn default() -> Self {
        Self::new(S::default())
    }
}
