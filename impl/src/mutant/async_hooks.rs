//! Mistakes in `AsyncHooks` (`src/env.cc`), beside the right functions of
//! [`crate::async_hooks`].

use super::{Mistake, Mutated};
use crate::async_hooks::{self, Path, Top};
use crate::callback_scope;
use model::env::async_id_stack::FrameExchange;
use model::env::context_frame::ContextFrame;
use model::env::resources::{Heap, NativeSlot, ScopeSerial};
use model::env::{AsyncHooks, Died};
use model::vocab::{AsyncContext, AsyncId, ResourceView};

/// Decision 1 undone: a lazy scope saves the ids after writing its own, so
/// its pop puts its own pair back.
#[derive(Debug)]
pub struct LinkSavesOwnIds;

impl Mistake for LinkSavesOwnIds {
    fn enter_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        let (path, prior) =
            callback_scope::enter_scope(ah, context, resource, serial, heap, frame)?;
        if path == Path::Lazy {
            link_saving_own_ids(ah);
        }
        Ok((path, prior))
    }
}

/// The save of [`async_hooks::link_lazy_scope`] made after the write: the
/// innermost link keeps the pair that is current now, its own.
fn link_saving_own_ids(ah: &mut AsyncHooks<Mutated>) {
    let ids = &ah.async_id_fields;
    let link = ah.store.lazy.lazy_scopes.last_mut().expect("just linked");
    link.saved = (ids.k_execution_async_id, ids.k_trigger_async_id);
}

/// Decision 5 undone: a pop whose innermost entry is a lazy scope skips the
/// corrupted-stack check.
#[derive(Debug)]
pub struct LazyPopSkipsCheck;

impl Mistake for LazyPopSkipsCheck {
    fn pop_async_context(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
    ) -> Result<bool, Died> {
        pop_async_context_unchecked(ah, async_id)
    }
}

/// [`async_hooks::pop_async_context`] without the check on a lazy scope.
fn pop_async_context_unchecked(
    ah: &mut AsyncHooks<Mutated>,
    async_id: AsyncId,
) -> Result<bool, Died> {
    match async_hooks::top(ah) {
        Top::Lazy => Ok(async_hooks::pop_lazy_scope(ah)),
        _ => async_hooks::pop_async_context(ah, async_id),
    }
}

/// Decision 10 undone: `clearAsyncIdStack()` leaves the chain and
/// `kLazyScopes` as they are (Node's clear, unchanged).
#[derive(Debug)]
pub struct ClearKeepsChain;

impl Mistake for ClearKeepsChain {
    fn clear_async_id_stack(&self, ah: &mut AsyncHooks<Mutated>, can_call_into_js: bool) {
        ah.clear_async_id_stack(can_call_into_js);
    }
}

/// Decision 10 undone by half: `clearAsyncIdStack()` empties the chain but
/// leaves `kLazyScopes`.
#[derive(Debug)]
pub struct ClearForgetsCount;

impl Mistake for ClearForgetsCount {
    fn clear_async_id_stack(&self, ah: &mut AsyncHooks<Mutated>, can_call_into_js: bool) {
        let count = ah.store.lazy.k_lazy_scopes;
        async_hooks::clear_async_id_stack(ah, can_call_into_js);
        ah.store.lazy.k_lazy_scopes = count;
    }
}

/// Decision 12 undone in C++: `executionAsyncResource_(index)` does not look
/// at the chain (Node's read, unchanged).
#[derive(Debug)]
pub struct NativeReadIgnoresChain;

impl Mistake for NativeReadIgnoresChain {
    fn native_execution_async_resource(
        &self,
        ah: &AsyncHooks<Mutated>,
        index: usize,
        heap: &Heap,
    ) -> ResourceView {
        ah.native_execution_async_resource(index, heap)
    }
}

/// Decision 14 undone: native resources left past the top are not dropped
/// when a lazy scope is linked or popped (an eager push or pop resizes the
/// vector).
#[derive(Debug)]
pub struct KeepsStaleNativeResources;

impl Mistake for KeepsStaleNativeResources {
    fn enter_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        let lazy = callback_scope::can_be_lazy(&ah.fields);
        keeping_native_resources(ah, lazy, |ah| {
            callback_scope::enter_scope(ah, context, resource, serial, heap, frame)
        })
    }

    fn pop_async_context(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
    ) -> Result<bool, Died> {
        let lazy = async_hooks::top(ah) == Top::Lazy;
        keeping_native_resources(ah, lazy, |ah| async_hooks::pop_async_context(ah, async_id))
    }
}

/// `step`, and when it links or pops a lazy scope (`lazy`), the native
/// array as it was before: what `drop_stale_native_resources` would have
/// dropped stays.
fn keeping_native_resources<T>(
    ah: &mut AsyncHooks<Mutated>,
    lazy: bool,
    step: impl FnOnce(&mut AsyncHooks<Mutated>) -> T,
) -> T {
    let before = ah.native_execution_async_resources.clone();
    let answer = step(ah);
    if lazy {
        ah.native_execution_async_resources = before;
    }
    answer
}

/// Decision 15 undone: popping a lazy scope restores the execution id but
/// not the trigger id, from C++ and from JS.
#[derive(Debug)]
pub struct LazyPopKeepsTrigger;

impl Mistake for LazyPopKeepsTrigger {
    fn pop_async_context(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
    ) -> Result<bool, Died> {
        keeping_trigger(ah, |ah| async_hooks::pop_async_context(ah, async_id))
    }

    fn pop_async_context_js(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
    ) -> Result<bool, Died> {
        keeping_trigger(ah, |ah| crate::js::pop_async_context_js(ah, async_id))
    }
}

/// [`async_hooks::restore_lazy_pair`] without the trigger id: `pop`, and
/// when it pops a lazy scope, the trigger id it found.
fn keeping_trigger(
    ah: &mut AsyncHooks<Mutated>,
    pop: impl FnOnce(&mut AsyncHooks<Mutated>) -> Result<bool, Died>,
) -> Result<bool, Died> {
    let lazy = async_hooks::top(ah) == Top::Lazy;
    let trigger = ah.async_id_fields.k_trigger_async_id;
    let answer = pop(ah);
    if lazy {
        ah.async_id_fields.k_trigger_async_id = trigger;
    }
    answer
}

/// Decision 17 undone for the stack's room: it grows when `kStackLength`
/// (not the eager depth) reaches it, so it stays smaller than eager Node's.
#[derive(Debug)]
pub struct GrowsByStackLength;

impl Mistake for GrowsByStackLength {
    fn grows_at(&self, ah: &AsyncHooks<Mutated>) -> usize {
        ah.fields.k_stack_length as usize
    }
}
