//! `AsyncHooks` (`src/env.h`, `src/env.cc`): the id fields, `async_ids_stack_`,
//! and the native side of the resource stack.

use super::fields::{AsyncIdFields, Fields};
use super::resources::{JsArray, NativeSlot};
use super::Died;
use crate::vocab::{AsyncId, Cost, FailedCheck, Observation, ResourceId, ResourceView};
use std::collections::BTreeSet;

/// Pairs `async_ids_stack_` has room for at first (`AsyncHooks::AsyncHooks`:
/// 16 * 2 doubles); JS pushes fall back to C++ past it.
pub const INITIAL_STACK_PAIRS: usize = 16;

/// `class AsyncHooks` (`src/env.h`): everything Node keeps per environment for
/// async context.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AsyncHooks {
    /// `fields_`.
    pub fields: Fields,
    /// `async_id_fields_`.
    pub async_id_fields: AsyncIdFields,
    /// `async_ids_stack_`: the saved (execution, trigger) pairs; `len()` is
    /// not the stack length, `fields.k_stack_length` is.
    pub async_ids_stack: Vec<(AsyncId, AsyncId)>,
    /// Pairs that `async_ids_stack_` can hold before `grow_async_ids_stack`.
    pub stack_capacity_pairs: usize,
    /// `native_execution_async_resources_`.
    pub native_execution_async_resources: Vec<Option<NativeSlot>>,
    /// `js_execution_async_resources_` (`execution_async_resources` in JS).
    pub js_execution_async_resources: JsArray,
    /// Work done, in the shared units.
    pub cost: Cost,
}

impl AsyncHooks {
    /// `AsyncHooks::AsyncHooks` (`src/env.cc`).
    pub fn new() -> Self {
        AsyncHooks {
            fields: Fields::new(),
            async_id_fields: AsyncIdFields::new(),
            async_ids_stack: vec![(0, 0); INITIAL_STACK_PAIRS],
            stack_capacity_pairs: INITIAL_STACK_PAIRS,
            native_execution_async_resources: Vec::new(),
            js_execution_async_resources: JsArray::default(),
            cost: Cost::default(),
        }
    }

    /// `AsyncHooks::grow_async_ids_stack` (`src/env.cc`): triple the room and
    /// hand JS the new buffer.
    pub fn grow_async_ids_stack(&mut self) {
        self.stack_capacity_pairs *= 3;
        self.async_ids_stack
            .resize(self.stack_capacity_pairs, (0, 0));
        self.cost.allocations += 1;
    }

    /// `AsyncHooks::push_async_context` (`src/env.cc`): save the current pair,
    /// install the new one, record a native resource if there is one (a push
    /// from JS passes none).
    pub fn push_async_context(
        &mut self,
        async_id: AsyncId,
        trigger_async_id: AsyncId,
        resource: Option<NativeSlot>,
    ) -> Result<(), Died> {
        if self.fields.k_check > 0 {
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
        }
        let offset = self.fields.k_stack_length as usize;
        if offset >= self.stack_capacity_pairs {
            self.grow_async_ids_stack();
        }
        self.async_ids_stack[offset] = (
            self.async_id_fields.k_execution_async_id,
            self.async_id_fields.k_trigger_async_id,
        );
        self.cost.stack_writes += 2;
        self.fields.k_stack_length += 1;
        self.async_id_fields.k_execution_async_id = async_id;
        self.async_id_fields.k_trigger_async_id = trigger_async_id;
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

    /// `AsyncHooks::pop_async_context` (`src/env.cc`): return early on an
    /// empty stack; die with `FailWithCorruptedAsyncStack` when checks are on
    /// and the current id is not `async_id`; else restore the saved pair.
    /// Returns whether entries remain.
    pub fn pop_async_context(&mut self, async_id: AsyncId) -> Result<bool, Died> {
        if self.fields.k_stack_length == 0 {
            return Ok(false);
        }
        if self.fields.k_check > 0 && self.async_id_fields.k_execution_async_id != async_id {
            return Err(self.fail_with_corrupted_async_stack(async_id));
        }
        let offset = self.fields.k_stack_length as usize - 1;
        let (execution, trigger) = self.async_ids_stack[offset];
        self.async_id_fields.k_execution_async_id = execution;
        self.async_id_fields.k_trigger_async_id = trigger;
        self.fields.k_stack_length = offset as u32;
        if matches!(
            self.native_execution_async_resources.get(offset),
            Some(Some(_))
        ) {
            self.native_execution_async_resources.truncate(offset);
            self.cost.resource_writes += 1;
        }
        if self.js_execution_async_resources.len() > offset {
            self.js_execution_async_resources.truncate(offset);
            self.cost.resource_writes += 1;
        }
        Ok(offset > 0)
    }

    /// `AsyncHooks::FailWithCorruptedAsyncStack` (`src/env.cc`): prints
    /// `actual` (the current execution id) and `expected`, exits with 1.
    pub fn fail_with_corrupted_async_stack(&self, expected_async_id: AsyncId) -> Died {
        Died(Observation::CorruptedStack {
            actual: self.async_id_fields.k_execution_async_id,
            expected: expected_async_id,
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
        self.native_execution_async_resources = Vec::new();
        self.async_id_fields.k_execution_async_id = 0;
        self.async_id_fields.k_trigger_async_id = 0;
        self.fields.k_stack_length = 0;
    }

    /// `AsyncHooks::native_execution_async_resource(i)` (`src/env-inl.h`):
    /// an empty handle (JS `undefined`) past the end or in a JS-pushed slot.
    pub fn native_execution_async_resource(
        &self,
        index: usize,
        reset_globals: &BTreeSet<ResourceId>,
    ) -> ResourceView {
        match self.native_execution_async_resources.get(index) {
            Some(Some(slot)) => slot.read(reset_globals),
            _ => ResourceView::Undefined,
        }
    }
}

impl Default for AsyncHooks {
    fn default() -> Self {
        Self::new()
    }
}
