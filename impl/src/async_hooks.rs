//! `AsyncHooks` with the pull request's additions: the field `kLazyScopes`
//! and the chain of lazy scopes.

use crate::mutant::Mutant;
use crate::resources::{JsArray, NativeSlot};
use crate::Died;
use model::vocab::{AsyncId, Cost, FailedCheck, Observation, ResourceId, ResourceView};
use std::collections::BTreeSet;

/// Pairs `async_ids_stack_` has room for at first.
pub const INITIAL_STACK_PAIRS: usize = 16;

/// `AsyncHooks::fields_`, with `kLazyScopes` added.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fields {
    /// `kInit`.
    pub k_init: u32,
    /// `kBefore`.
    pub k_before: u32,
    /// `kAfter`.
    pub k_after: u32,
    /// `kDestroy`.
    pub k_destroy: u32,
    /// `kPromiseResolve`.
    pub k_promise_resolve: u32,
    /// `kTotals`.
    pub k_totals: u32,
    /// `kCheck`.
    pub k_check: u32,
    /// `kStackLength`: entries on the id stack proper (lazy scopes are not there).
    pub k_stack_length: u32,
    /// `kUsesExecutionAsyncResource`.
    pub k_uses_execution_async_resource: u32,
    /// `kLazyScopes` (new): lazy scopes in the chain; JS reads it.
    pub k_lazy_scopes: u32,
}

/// `AsyncHooks::async_id_fields_`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AsyncIdFields {
    /// `kExecutionAsyncId`.
    pub k_execution_async_id: AsyncId,
    /// `kTriggerAsyncId`.
    pub k_trigger_async_id: AsyncId,
    /// `kAsyncIdCounter`.
    pub k_async_id_counter: AsyncId,
    /// `kDefaultTriggerAsyncId`.
    pub k_default_trigger_async_id: AsyncId,
}

/// One lazy scope in the chain: the pair it swapped out, its resource
/// pointer, and where it sits among the stack entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LazyScope {
    /// The scope's own async id.
    pub async_id: AsyncId,
    /// The (execution, trigger) pair it saved instead of pushing.
    pub saved: (AsyncId, AsyncId),
    /// The resource pointer it was given.
    pub resource: NativeSlot,
    /// `kStackLength` when it was linked: it sits above that many stack entries.
    pub stack_position: u32,
}

/// `class AsyncHooks` as the pull request changes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AsyncHooks {
    /// `fields_`.
    pub fields: Fields,
    /// `async_id_fields_`.
    pub async_id_fields: AsyncIdFields,
    /// `async_ids_stack_`.
    pub async_ids_stack: Vec<(AsyncId, AsyncId)>,
    /// Pairs the stack holds before it grows.
    pub stack_capacity_pairs: usize,
    /// `native_execution_async_resources_`, indexed by eager depth.
    pub native_execution_async_resources: Vec<Option<NativeSlot>>,
    /// `execution_async_resources` (JS), indexed by eager depth.
    pub js_execution_async_resources: JsArray,
    /// The chain of lazy scopes, outermost first (`last()` is the innermost).
    pub lazy_scopes: Vec<LazyScope>,
    /// Work done.
    pub cost: Cost,
    /// The deliberate mistake switched on, if any (none in normal use).
    pub mutant: Option<Mutant>,
}

/// Which entry is innermost: a lazy scope, a stack entry, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Top {
    /// Nothing: eager Node's stack would be empty.
    Empty,
    /// The innermost lazy scope.
    Lazy,
    /// The top entry of `async_ids_stack_`.
    Stack,
}

impl AsyncHooks {
    /// `AsyncHooks::AsyncHooks`.
    pub fn new() -> Self {
        AsyncHooks {
            fields: Fields {
                k_check: 1,
                ..Fields::default()
            },
            async_id_fields: AsyncIdFields {
                k_execution_async_id: 0,
                k_trigger_async_id: 0,
                k_async_id_counter: 1,
                k_default_trigger_async_id: -1,
            },
            async_ids_stack: vec![(0, 0); INITIAL_STACK_PAIRS],
            stack_capacity_pairs: INITIAL_STACK_PAIRS,
            native_execution_async_resources: Vec::new(),
            js_execution_async_resources: JsArray::default(),
            lazy_scopes: Vec::new(),
            cost: Cost::default(),
            mutant: None,
        }
    }

    /// The depth eager Node would have: `kStackLength + kLazyScopes`. The
    /// resource arrays are indexed by it.
    pub fn depth(&self) -> usize {
        (self.fields.k_stack_length + self.fields.k_lazy_scopes) as usize
    }

    /// Whether the innermost entry is a lazy scope: the innermost lazy scope
    /// was linked when `kStackLength` was what it is now.
    pub fn top(&self) -> Top {
        match self.lazy_scopes.last() {
            Some(l) if l.stack_position == self.fields.k_stack_length => Top::Lazy,
            _ if self.fields.k_stack_length > 0 => Top::Stack,
            _ => Top::Empty,
        }
    }

    /// The `CHECK_GE(id, -1)` pair of `push_async_context`, kept on both paths.
    pub fn check_ids(&self, async_id: AsyncId, trigger_async_id: AsyncId) -> Result<(), Died> {
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
        Ok(())
    }

    /// Drop native resources left past `depth` (the eager push's
    /// `resize(offset + 1)` and pop's `resize(offset)` do it as a side effect).
    fn drop_stale_native_resources(&mut self, depth: usize) {
        if self.mutant == Some(Mutant::KeepsStaleNativeResources) {
            return;
        }
        if self.native_execution_async_resources.len() > depth {
            self.native_execution_async_resources.truncate(depth);
            self.cost.resource_writes += 1;
        }
    }

    /// `grow_async_ids_stack` when the eager depth reaches the room the stack
    /// has, as an eager push at that depth would: the JS view of the stack then
    /// has the same size on both sides, so JS falls back to the native push
    /// (and its `CHECK_GE`) at the same ops.
    pub fn grow_async_ids_stack_for(&mut self, depth: usize) {
        let by = if self.mutant == Some(Mutant::GrowsByStackLength) {
            self.fields.k_stack_length as usize
        } else {
            depth
        };
        if by >= self.stack_capacity_pairs {
            self.stack_capacity_pairs *= 3;
            self.async_ids_stack
                .resize(self.stack_capacity_pairs, (0, 0));
            self.cost.allocations += 1;
        }
    }

    /// The lazy path of the scope constructor: save the pair in the scope,
    /// write the new one in place, link the scope. No stack or resource write.
    pub fn link_lazy_scope(
        &mut self,
        async_id: AsyncId,
        trigger_async_id: AsyncId,
        resource: NativeSlot,
    ) -> Result<(), Died> {
        if self.mutant != Some(Mutant::LazySkipsIdCheck) {
            self.check_ids(async_id, trigger_async_id)?;
        }
        let depth = self.depth();
        self.drop_stale_native_resources(depth);
        self.grow_async_ids_stack_for(depth);
        let ids = &mut self.async_id_fields;
        let saved = if self.mutant == Some(Mutant::LinkSavesOwnIds) {
            (async_id, trigger_async_id)
        } else {
            (ids.k_execution_async_id, ids.k_trigger_async_id)
        };
        self.lazy_scopes.push(LazyScope {
            async_id,
            saved,
            resource,
            stack_position: self.fields.k_stack_length,
        });
        ids.k_execution_async_id = async_id;
        ids.k_trigger_async_id = trigger_async_id;
        self.fields.k_lazy_scopes += 1;
        self.cost.chain_writes += 1;
        Ok(())
    }

    /// `AsyncHooks::push_async_context`: the eager path, unchanged except that
    /// the native resource goes at the eager depth.
    pub fn push_async_context(
        &mut self,
        async_id: AsyncId,
        trigger_async_id: AsyncId,
        resource: Option<NativeSlot>,
    ) -> Result<(), Died> {
        self.check_ids(async_id, trigger_async_id)?;
        let depth = self.depth();
        let offset = self.fields.k_stack_length as usize;
        self.grow_async_ids_stack_for(depth);
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
            if depth + 1 > natives.capacity() {
                self.cost.allocations += 1;
            }
            natives.resize(depth + 1, None);
            natives[depth] = Some(slot);
            self.cost.resource_writes += 1;
        }
        Ok(())
    }

    /// `AsyncHooks::pop_async_context`, lazy-aware: pop whatever is innermost,
    /// a lazy scope (restore the pair it saved, unlink it) or a stack entry,
    /// after the same corrupted-stack check. Returns whether entries remain.
    pub fn pop_async_context(&mut self, async_id: AsyncId) -> Result<bool, Died> {
        let top = self.top();
        if top == Top::Empty {
            return Ok(false);
        }
        let skip = top == Top::Lazy && self.mutant == Some(Mutant::LazyPopSkipsCheck);
        if self.fields.k_check > 0 && self.async_id_fields.k_execution_async_id != async_id && !skip
        {
            return Err(self.fail_with_corrupted_async_stack(async_id));
        }
        let offset = self.depth() - 1;
        let (execution, trigger) = match top {
            Top::Lazy => {
                let lazy = self.lazy_scopes.pop().expect("top() saw a lazy scope");
                self.fields.k_lazy_scopes -= 1;
                self.cost.chain_writes += 1;
                self.drop_stale_native_resources(offset);
                if self.mutant == Some(Mutant::LazyPopKeepsTrigger) {
                    (lazy.saved.0, self.async_id_fields.k_trigger_async_id)
                } else {
                    lazy.saved
                }
            }
            _ => {
                let stack_offset = self.fields.k_stack_length as usize - 1;
                self.fields.k_stack_length -= 1;
                if matches!(
                    self.native_execution_async_resources.get(offset),
                    Some(Some(_))
                ) {
                    self.native_execution_async_resources.truncate(offset);
                    self.cost.resource_writes += 1;
                }
                self.async_ids_stack[stack_offset]
            }
        };
        self.async_id_fields.k_execution_async_id = execution;
        self.async_id_fields.k_trigger_async_id = trigger;
        if self.js_execution_async_resources.len() > offset {
            self.js_execution_async_resources.truncate(offset);
            self.cost.resource_writes += 1;
        }
        Ok(offset > 0)
    }

    /// `FailWithCorruptedAsyncStack`: the check stays on every path.
    pub fn fail_with_corrupted_async_stack(&self, expected_async_id: AsyncId) -> Died {
        Died(Observation::CorruptedStack {
            actual: self.async_id_fields.k_execution_async_id,
            expected: expected_async_id,
        })
    }

    /// `clear_async_id_stack`, lazy-aware: also empty the chain and zero
    /// `kLazyScopes`, so that the lazy scopes' later closes find nothing to pop.
    pub fn clear_async_id_stack(&mut self, can_call_into_js: bool) {
        if can_call_into_js && !self.js_execution_async_resources.is_empty() {
            self.js_execution_async_resources.truncate(0);
            self.cost.resource_writes += 1;
        }
        if !self.native_execution_async_resources.is_empty() {
            self.cost.resource_writes += 1;
        }
        self.native_execution_async_resources = Vec::new();
        if self.mutant != Some(Mutant::ClearKeepsChain) {
            if !self.lazy_scopes.is_empty() {
                self.lazy_scopes.clear();
                self.cost.chain_writes += 1;
            }
            if self.mutant != Some(Mutant::ClearForgetsCount) {
                self.fields.k_lazy_scopes = 0;
            }
        }
        self.async_id_fields.k_execution_async_id = 0;
        self.async_id_fields.k_trigger_async_id = 0;
        self.fields.k_stack_length = 0;
    }

    /// `native_execution_async_resource(index)`, lazy-aware: the innermost
    /// lazy scope's resource when it is the entry at `index`, else the array.
    pub fn native_execution_async_resource(
        &self,
        index: usize,
        reset_globals: &BTreeSet<ResourceId>,
    ) -> ResourceView {
        let looks_at_chain = self.mutant != Some(Mutant::NativeReadIgnoresChain);
        if looks_at_chain && self.top() == Top::Lazy && index + 1 == self.depth() {
            let lazy = self.lazy_scopes.last().expect("top() saw a lazy scope");
            return lazy.resource.read(reset_globals);
        }
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
