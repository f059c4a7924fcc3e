//! The seam: [`AsyncIdStack`], the part of Node that pull request 66511
//! changes. Everything else in [`super`] is Node's unchanged code, written
//! once and run over either store.
//!
//! Each method is one place in Node that reads or writes the async id stack.
//! Its default body is Node as it is today (`src/env.cc`, `src/api/callback.cc`,
//! `lib/internal/async_hooks.js`); the eager store ([`crate::eager::EagerStack`])
//! takes every default, and the lazy store (the `lazy-scopes` crate) overrides
//! the places the pull request changes, each beside the decision it takes.

use super::async_hooks::AsyncHooks;
use super::context_frame::ContextFrame;
use super::resources::{Heap, NativeSlot, ScopeSerial};
use super::{Died, Frame};
use crate::vocab::{AsyncContext, AsyncId, ResourceView};
use std::fmt::Debug;
use std::hash::Hash;

/// The `AsyncContextFrame` exchange of an `InternalCallbackScope`'s
/// constructor: the current frame (V8's continuation-preserved embedder
/// data) and the frame the scope enters (its `context_frame` argument).
#[derive(Debug)]
pub struct FrameExchange<'a> {
    /// The current frame.
    pub current: &'a mut ContextFrame,
    /// The frame the scope was given: none for the public
    /// `node::CallbackScope` and `node::MakeCallback`, the one its async
    /// context captured for `napi_make_callback`.
    pub entered: ContextFrame,
}

impl FrameExchange<'_> {
    /// `async_context_frame::exchange(isolate, context_frame)`
    /// (`src/async_context_frame.cc`): make the scope's frame current and
    /// answer the prior one.
    pub fn exchange(self) -> ContextFrame {
        std::mem::replace(self.current, self.entered)
    }
}

/// The `AsyncContextFrame` restore of an `InternalCallbackScope`'s `Close`:
/// the current frame, the closing scope's `prior_context_frame_`, and the
/// frames still open (where the other scopes keep theirs).
#[derive(Debug)]
pub struct FrameRestore<'a, S: AsyncIdStack> {
    /// The current frame.
    pub current: &'a mut ContextFrame,
    /// The closing scope's `prior_context_frame_`.
    pub prior: ContextFrame,
    /// The program's open frames, the closing scope no longer among them.
    pub open: &'a [Frame<S>],
}

impl<S: AsyncIdStack> FrameRestore<'_, S> {
    /// `async_context_frame::exchange(isolate, prior_context_frame_.Get(isolate))`.
    pub fn restore(self) {
        *self.current = self.prior;
    }

    /// The `prior_context_frame_` of the open scope `serial`, if it is open.
    pub fn prior_of(&self, serial: ScopeSerial) -> Option<&ContextFrame> {
        (self.open.iter())
            .filter_map(Frame::held_scope)
            .find(|s| s.serial == serial)
            .map(|s| &s.prior_context_frame)
    }
}

/// An async-context store: what `AsyncHooks` keeps beside Node's own fields
/// (nothing today; the chain of lazy scopes and `kLazyScopes` with the pull
/// request), and how each reader and writer of the id stack uses it.
///
/// The methods are associated functions over the whole [`AsyncHooks`], as
/// Node's are members of `AsyncHooks`: a store reads Node's fields and its own.
pub trait AsyncIdStack: Clone + Debug + Default + Eq + Hash + Send + Sync + 'static {
    /// What an `InternalCallbackScope` keeps of how it entered its context,
    /// for its `Close` (nothing in Node today).
    type Entered: Copy + Debug + Default + Eq + Hash + Send + Sync;

    /// Entries on the stack as Node today counts them: `kStackLength`. The
    /// resource arrays are indexed by it.
    fn depth(ah: &AsyncHooks<Self>) -> usize {
        ah.fields.k_stack_length as usize
    }

    /// The offset `push_async_context` compares with the room of
    /// `async_ids_stack_` before `grow_async_ids_stack` (`kStackLength`).
    fn grows_at(ah: &AsyncHooks<Self>) -> usize {
        Self::depth(ah)
    }

    /// The offset JS `pushAsyncContext` compares with the room of
    /// `async_ids_stack` before it falls back to `pushAsyncContext_` (`kStackLength`).
    fn js_push_falls_back_at(ah: &AsyncHooks<Self>) -> usize {
        Self::depth(ah)
    }

    /// Where JS `pushAsyncContext` writes its resource and
    /// `executionAsyncResource()` reads (`kStackLength`, before the `- 1`).
    fn resource_index(ah: &AsyncHooks<Self>) -> usize {
        Self::depth(ah)
    }

    /// The `InternalCallbackScope` constructor from its frame exchange to
    /// its push (`src/api/callback.cc`), for the scope `serial`:
    /// `prior_context_frame_.Reset(isolate,
    /// async_context_frame::exchange(isolate, context_frame))`, then
    /// `async_hooks->push_async_context(async_id, trigger_async_id,
    /// resource)`. `heap` is what a resource pointer is read through.
    /// Returns what the scope keeps for its close and its prior frame.
    fn enter_scope(
        ah: &mut AsyncHooks<Self>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
        frame: FrameExchange<'_>,
    ) -> Result<(Self::Entered, ContextFrame), Died> {
        let _ = serial;
        let prior = frame.exchange();
        ah.check_resource(&resource, heap)?;
        ah.push_async_context(context.async_id, context.trigger_async_id, Some(resource))?;
        Ok((Self::Entered::default(), prior))
    }

    /// `InternalCallbackScope::Close` under `if (pushed_ids_)` for the scope
    /// `serial`: `pop_async_context(async_context_.async_id)`, then
    /// `async_context_frame::exchange(isolate, prior_context_frame_.Get(isolate))`
    /// (when [`Self::restores_context_frame`]): the scope puts back the
    /// frame that was current at its own open, whatever entry its pop took.
    fn leave_scope(
        ah: &mut AsyncHooks<Self>,
        async_id: AsyncId,
        entered: Self::Entered,
        serial: ScopeSerial,
        frame: FrameRestore<'_, Self>,
    ) -> Result<(), Died> {
        let _ = serial;
        Self::pop_async_context(ah, async_id)?;
        if Self::restores_context_frame(ah, entered) {
            frame.restore();
        }
        Ok(())
    }

    /// Whether `Close` puts the prior `AsyncContextFrame` back after its pop
    /// (`async_context_frame::exchange(isolate, prior_context_frame_.Get(isolate))`
    /// under `if (pushed_ids_)`, `src/api/callback.cc`): always, for every
    /// scope whose constructor got past `can_call_into_js()`.
    fn restores_context_frame(ah: &AsyncHooks<Self>, entered: Self::Entered) -> bool {
        let _ = (ah, entered);
        true
    }

    /// Whether the outermost `Close` runs its `CHECK_EQ(execution_async_id, 0)`
    /// pair when `kTotals` is non-zero: always.
    fn checks_outermost_close(ah: &AsyncHooks<Self>, entered: Self::Entered) -> bool {
        let _ = (ah, entered);
        true
    }

    /// `AsyncHooks::pop_async_context` (`src/env.cc`), also `popAsyncContext_`
    /// from JS. Returns whether entries remain.
    fn pop_async_context(ah: &mut AsyncHooks<Self>, async_id: AsyncId) -> Result<bool, Died> {
        ah.pop_async_context(async_id)
    }

    /// `AsyncHooks::clear_async_id_stack` (`src/env.cc`), also `clearAsyncIdStack` from JS.
    fn clear_async_id_stack(ah: &mut AsyncHooks<Self>, can_call_into_js: bool) {
        ah.clear_async_id_stack(can_call_into_js);
    }

    /// `pushAsyncContext(asyncId, triggerAsyncId, resource)` (`lib/internal/async_hooks.js`).
    fn push_async_context_js(
        ah: &mut AsyncHooks<Self>,
        async_id: AsyncId,
        trigger_async_id: AsyncId,
        resource: Option<ResourceView>,
    ) -> Result<(), Died> {
        ah.push_async_context_js(async_id, trigger_async_id, resource)
    }

    /// `popAsyncContext(asyncId)` (`lib/internal/async_hooks.js`). Returns
    /// whether entries remain.
    fn pop_async_context_js(ah: &mut AsyncHooks<Self>, async_id: AsyncId) -> Result<bool, Died> {
        ah.pop_async_context_js(async_id)
    }

    /// `hasAsyncIdStack()` (`lib/internal/async_hooks.js`): `kStackLength > 0`.
    fn has_async_id_stack(ah: &AsyncHooks<Self>) -> bool {
        Self::depth(ah) > 0
    }

    /// `executionAsyncResource()` after it sets `kUsesExecutionAsyncResource`.
    fn execution_async_resource(ah: &mut AsyncHooks<Self>, heap: &Heap) -> ResourceView {
        ah.execution_async_resource_at(Self::resource_index(ah), heap)
    }

    /// `AsyncHooks::native_execution_async_resource(index)` (`src/env-inl.h`),
    /// behind the `executionAsyncResource_` binding.
    fn native_execution_async_resource(
        ah: &AsyncHooks<Self>,
        index: usize,
        heap: &Heap,
    ) -> ResourceView {
        ah.native_execution_async_resource(index, heap)
    }

    /// Rename the scope serials the store keeps (in resource pointers, in
    /// links) by `rename`: nothing in Node today. For the explorer, which
    /// numbers scopes canonically ([`super::Environment::canonicalise_scope_serials`]).
    fn rename_scopes(store: &mut Self, rename: &dyn Fn(ScopeSerial) -> ScopeSerial) {
        let _ = (store, rename);
    }

    /// `callbackTrampoline`'s `execution_async_resources[kStackLength - 1]`
    /// (`lib/internal/async_hooks.js`).
    fn trampoline_index(ah: &AsyncHooks<Self>) -> usize {
        Self::depth(ah) - 1
    }
}
