//! `InternalCallbackScope` (`src/api/callback.cc`) as the pull request
//! changes it: a scope opened under [`can_be_lazy`] swaps the ids in place
//! and joins the chain; otherwise it pushes, as Node does today.

use crate::async_hooks::{self, LazyHooks, LazyStack};
use model::env::fields::Fields;
use model::env::resources::{Heap, NativeSlot, ScopeSerial};
use model::env::{AsyncIdStack, Died};
use model::vocab::{AsyncContext, AsyncId};

/// How a scope entered its context: the path its constructor took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Path {
    /// `push_async_context`, as in Node today (or nothing, when JS could not run).
    #[default]
    Pushed,
    /// The lazy path: ids swapped in place, the scope linked in the chain.
    Lazy,
}

/// The lazy condition (PR 66511: "no async hook and no executionAsyncResource()
/// user"). It reads `fields_[kTotals]` and `fields_[kUsesExecutionAsyncResource]`
/// and nothing else (decision 2).
pub fn can_be_lazy(fields: &Fields) -> bool {
    fields.k_totals == 0 && fields.k_uses_execution_async_resource == 0
}

/// The constructor's push: the lazy path when the condition holds, keeping
/// the resource as the pointer it was given (decision 13); else
/// `push_async_context` at the eager depth.
pub fn enter_scope(
    ah: &mut LazyHooks,
    context: AsyncContext,
    resource: NativeSlot,
    serial: ScopeSerial,
    heap: &Heap,
) -> Result<Path, Died> {
    let decisions = ah.store.decisions;
    if !decisions.takes_lazy_path(&ah.fields) {
        ah.check_resource(&resource, heap)?;
        ah.push_async_context(context.async_id, context.trigger_async_id, Some(resource))?;
        return Ok(Path::Pushed);
    }
    if decisions.checks_ids_on_lazy_path() {
        ah.check_resource(&resource, heap)?;
    }
    let resource = if decisions.reads_global_when_asked() {
        resource
    } else {
        NativeSlot::Local(resource.read(heap), serial)
    };
    async_hooks::link_lazy_scope(ah, context, resource, serial)?;
    Ok(Path::Lazy)
}

/// `Close`'s pop: whatever entry is innermost (decision 4), through the
/// lazy-aware `pop_async_context`.
pub fn leave_scope(
    ah: &mut LazyHooks,
    async_id: AsyncId,
    entered: Path,
    serial: ScopeSerial,
) -> Result<(), Died> {
    if entered == Path::Lazy && !ah.store.decisions.close_pops_innermost() {
        return restore_own_pair(ah, async_id, serial);
    }
    LazyStack::pop_async_context(ah, async_id).map(drop)
}

/// The close of the simplest reading of the pull request's "swaps the two ids
/// in place" (the mutant `lazy-close-restores-own`): each scope undoes its
/// own swap: check, then unlink the scope's own link, from wherever it is in
/// the chain, and restore the pair it saved, whatever entry is innermost.
fn restore_own_pair(
    ah: &mut LazyHooks,
    async_id: AsyncId,
    serial: ScopeSerial,
) -> Result<(), Died> {
    ah.check_corrupted_stack(async_id)?;
    let chain = &mut ah.store.lazy_scopes;
    if let Some(at) = chain.iter().rposition(|link| link.owner == serial) {
        let lazy = chain.remove(at);
        ah.store.k_lazy_scopes -= 1;
        (
            ah.async_id_fields.k_execution_async_id,
            ah.async_id_fields.k_trigger_async_id,
        ) = lazy.saved;
    }
    Ok(())
}

/// `Close`'s `async_context_frame::exchange(isolate, prior_context_frame_)`,
/// which Node runs under `if (pushed_ids_)`, right after the pop. A lazy scope
/// skips `push_async_context`, but it must still count as having pushed here
/// (decision 19): its constructor exchanged the frame, so its close must put
/// the prior one back, or the caller's `AsyncLocalStorage` stores are gone
/// after the callback (`docs/findings.md`, "The AsyncContextFrame of a lazy
/// scope").
pub fn restores_context_frame(ah: &LazyHooks, entered: Path) -> bool {
    entered != Path::Lazy || ah.store.decisions.lazy_close_restores_frame()
}
