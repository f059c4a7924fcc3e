//! `InternalCallbackScope` (`src/api/callback.cc`) as the pull request
//! changes it: a scope opened under [`can_be_lazy`] swaps the ids in place
//! and joins the chain; otherwise it pushes, as Node does today.

use crate::async_hooks::{self, LazyStore, Path};
use model::env::async_id_stack::FrameExchange;
use model::env::context_frame::ContextFrame;
use model::env::fields::Fields;
use model::env::resources::{Heap, NativeSlot, ScopeSerial};
use model::env::{AsyncHooks, Died};
use model::vocab::AsyncContext;

/// The lazy condition (PR 66511: "no async hook and no executionAsyncResource()
/// user"). It reads `fields_[kTotals]` and `fields_[kUsesExecutionAsyncResource]`
/// and nothing else (decision 2).
pub fn can_be_lazy(fields: &Fields) -> bool {
    fields.k_totals == 0 && fields.k_uses_execution_async_resource == 0
}

/// The constructor from its frame exchange to its push: the
/// `AsyncContextFrame` exchanged in first, on either path, exactly where
/// Node's constructor does it before `push_async_context` (decision 20);
/// then the lazy path when the condition holds, else `push_async_context`
/// at the eager depth. Returns the path and the prior frame, which the
/// scope keeps for its close.
pub fn enter_scope<S: LazyStore>(
    ah: &mut AsyncHooks<S>,
    context: AsyncContext,
    resource: NativeSlot,
    serial: ScopeSerial,
    heap: &Heap,
    frame: FrameExchange<'_>,
) -> Result<(Path, ContextFrame), Died> {
    let prior = frame.exchange();
    Ok((push_or_link(ah, context, resource, serial, heap)?, prior))
}

/// The push of the constructor, after its frame exchange: the lazy path
/// when the condition holds, else `push_async_context` at the eager depth.
pub fn push_or_link<S: LazyStore>(
    ah: &mut AsyncHooks<S>,
    context: AsyncContext,
    resource: NativeSlot,
    serial: ScopeSerial,
    heap: &Heap,
) -> Result<Path, Died> {
    if can_be_lazy(&ah.fields) {
        return enter_lazily(ah, context, resource, serial, heap);
    }
    ah.check_resource(&resource, heap)?;
    ah.push_async_context(context.async_id, context.trigger_async_id, Some(resource))?;
    Ok(Path::Pushed)
}

/// The lazy path: `push_async_context`'s CHECKs (decision 6), then link the
/// scope, keeping the resource as the pointer it was given (decision 13).
pub fn enter_lazily<S: LazyStore>(
    ah: &mut AsyncHooks<S>,
    context: AsyncContext,
    resource: NativeSlot,
    serial: ScopeSerial,
    heap: &Heap,
) -> Result<Path, Died> {
    ah.check_resource(&resource, heap)?;
    ah.check_async_ids(context.async_id, context.trigger_async_id)?;
    async_hooks::link_lazy_scope(ah, context, resource, serial);
    Ok(Path::Lazy)
}
