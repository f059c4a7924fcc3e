//! Mistakes in `InternalCallbackScope` (`src/api/callback.cc`), beside the
//! right functions of [`crate::callback_scope`], and the two variants of the
//! lazy condition.

use super::{Mistake, Mutated};
use crate::async_hooks::{self, Path};
use crate::callback_scope::{can_be_lazy, enter_lazily, enter_scope};
use model::env::resources::{Heap, NativeSlot, ScopeSerial};
use model::env::{AsyncHooks, AsyncIdStack, Died};
use model::vocab::{AsyncContext, AsyncId};

/// Decision 2, a variant: every scope takes the lazy path, hooks or not.
#[derive(Debug)]
pub struct AlwaysLazy;

impl Mistake for AlwaysLazy {
    fn enter_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
    ) -> Result<Path, Died> {
        enter_lazily(ah, context, resource, serial, heap)
    }
}

/// Decision 2, a variant: no scope takes the lazy path (Node's push).
#[derive(Debug)]
pub struct NeverLazy;

impl Mistake for NeverLazy {
    fn enter_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        context: AsyncContext,
        resource: NativeSlot,
        _: ScopeSerial,
        heap: &Heap,
    ) -> Result<Path, Died> {
        ah.check_resource(&resource, heap)?;
        ah.push_async_context(context.async_id, context.trigger_async_id, Some(resource))?;
        Ok(Path::Pushed)
    }
}

/// Decision 4 undone, the simplest reading of the pull request's "swaps the
/// two ids in place": each lazy scope's close undoes its own swap, whatever
/// entry is innermost.
#[derive(Debug)]
pub struct LazyCloseRestoresOwn;

impl Mistake for LazyCloseRestoresOwn {
    fn leave_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
        entered: Path,
        serial: ScopeSerial,
    ) -> Result<(), Died> {
        if entered == Path::Lazy {
            return restore_own_pair(ah, async_id, serial);
        }
        Mutated::pop_async_context(ah, async_id).map(drop)
    }
}

/// The close of [`LazyCloseRestoresOwn`]: check, then unlink the scope's own
/// link from wherever it is in the chain and restore the pair it saved.
fn restore_own_pair(
    ah: &mut AsyncHooks<Mutated>,
    async_id: AsyncId,
    serial: ScopeSerial,
) -> Result<(), Died> {
    ah.check_corrupted_stack(async_id)?;
    let chain = &mut ah.store.lazy;
    if let Some(at) = chain
        .lazy_scopes
        .iter()
        .rposition(|link| link.owner == serial)
    {
        let lazy = chain.lazy_scopes.remove(at);
        chain.k_lazy_scopes -= 1;
        async_hooks::restore_lazy_pair(ah, lazy.saved);
    }
    Ok(())
}

/// Decision 6 undone: the lazy path skips `push_async_context`'s CHECKs
/// (`CHECK_GE(async_id, -1)`, the non-empty Global).
#[derive(Debug)]
pub struct LazySkipsIdCheck;

impl Mistake for LazySkipsIdCheck {
    fn enter_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
    ) -> Result<Path, Died> {
        if !can_be_lazy(&ah.fields) {
            return enter_scope(ah, context, resource, serial, heap);
        }
        async_hooks::link_lazy_scope(ah, context, resource, serial);
        Ok(Path::Lazy)
    }
}

/// Decision 13 undone: a lazy scope reads its resource (a Global's object)
/// when it opens, not when asked.
#[derive(Debug)]
pub struct GlobalReadAtOpen;

impl Mistake for GlobalReadAtOpen {
    fn enter_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
    ) -> Result<Path, Died> {
        let path = enter_scope(ah, context, resource, serial, heap)?;
        if path == Path::Lazy {
            let link = ah.store.lazy.lazy_scopes.last_mut().expect("just linked");
            link.resource = NativeSlot::Local(resource.read(heap), serial);
        }
        Ok(path)
    }
}

/// Decision 16 undone: the `kTotals` CHECK at the outermost close is skipped
/// for a lazy scope.
#[derive(Debug)]
pub struct OutermostCheckSkippedWhenLazy;

impl Mistake for OutermostCheckSkippedWhenLazy {
    fn checks_outermost_close(&self, entered: Path) -> bool {
        entered != Path::Lazy
    }
}

/// Decision 19 undone: a lazy scope's close does not put the prior
/// `AsyncContextFrame` back: `Close` restores it under `if (pushed_ids_)`,
/// and the lazy path, which skips the push, leaves `pushed_ids_` false.
#[derive(Debug)]
pub struct LazyCloseSkipsFrameRestore;

impl Mistake for LazyCloseSkipsFrameRestore {
    fn restores_context_frame(&self, entered: Path) -> bool {
        entered != Path::Lazy
    }
}
