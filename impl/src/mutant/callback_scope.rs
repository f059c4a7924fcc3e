//! Mistakes in `InternalCallbackScope` (`src/api/callback.cc`), beside the
//! right functions of [`crate::callback_scope`], and the two variants of the
//! lazy condition.

use super::{Mistake, Mutated};
use crate::async_hooks::{self, Path};
use crate::callback_scope::{can_be_lazy, enter_lazily, enter_scope, push_or_link};
use model::env::async_id_stack::{FrameExchange, FrameRestore};
use model::env::context_frame::ContextFrame;
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
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        let prior = frame.exchange();
        Ok((enter_lazily(ah, context, resource, serial, heap)?, prior))
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
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        let prior = frame.exchange();
        ah.check_resource(&resource, heap)?;
        ah.push_async_context(context.async_id, context.trigger_async_id, Some(resource))?;
        Ok((Path::Pushed, prior))
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
        frame: FrameRestore<'_, Mutated>,
    ) -> Result<(), Died> {
        if entered == Path::Lazy {
            restore_own_pair(ah, async_id, serial)?;
        } else {
            Mutated::pop_async_context(ah, async_id)?;
        }
        if Mutated::restores_context_frame(ah, entered) {
            frame.restore();
        }
        Ok(())
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
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        if !can_be_lazy(&ah.fields) {
            return enter_scope(ah, context, resource, serial, heap, frame);
        }
        let prior = frame.exchange();
        async_hooks::link_lazy_scope(ah, context, resource, serial);
        Ok((Path::Lazy, prior))
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
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        let (path, prior) = enter_scope(ah, context, resource, serial, heap, frame)?;
        if path == Path::Lazy {
            let link = ah.store.lazy.lazy_scopes.last_mut().expect("just linked");
            link.resource = NativeSlot::Local(resource.read(heap), serial);
        }
        Ok((path, prior))
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

/// Decision 20 undone: the lazy path skips the `AsyncContextFrame`
/// exchange (it is written beside the push it replaces, which the lazy
/// path leaves out), so a lazy scope's callback runs in its caller's frame,
/// not in the one the scope was given; its close puts back the frame that
/// was current, which it never left.
#[derive(Debug)]
pub struct LazySkipsFrameExchange;

impl Mistake for LazySkipsFrameExchange {
    fn enter_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        if !can_be_lazy(&ah.fields) {
            return enter_scope(ah, context, resource, serial, heap, frame);
        }
        let prior = frame.current.clone();
        Ok((enter_lazily(ah, context, resource, serial, heap)?, prior))
    }
}

/// Decision 20, a variant and not a mistake: the lazy path exchanges the
/// frame in after it links the scope, not before. Nothing runs between the
/// two (the link's CHECKs abort), so the order cannot be seen.
#[derive(Debug)]
pub struct LazyExchangesAfterLink;

impl Mistake for LazyExchangesAfterLink {
    fn enter_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        let path = push_or_link(ah, context, resource, serial, heap)?;
        Ok((path, frame.exchange()))
    }
}

/// Decision 21 undone: a lazy scope's close puts back the prior frame of
/// the lazy scope whose link its pop removed (an intrusive chain reaches
/// it: `innermost_lazy->prior_context_frame_`), as the lazy pop restores
/// that link's ids. In order that link is the scope's own; closed out of
/// order (`napi_close_callback_scope` on an outer scope) it is the
/// innermost one's, and the frame of the code that opened the outer scope
/// is lost.
#[derive(Debug)]
pub struct LazyCloseRestoresPoppedFrame;

impl Mistake for LazyCloseRestoresPoppedFrame {
    fn leave_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
        entered: Path,
        serial: ScopeSerial,
        mut frame: FrameRestore<'_, Mutated>,
    ) -> Result<(), Died> {
        let popped = match async_hooks::top(ah) {
            async_hooks::Top::Lazy => ah.store.lazy.lazy_scopes.last().map(|l| l.owner),
            _ => None,
        };
        Mutated::pop_async_context(ah, async_id)?;
        if entered == Path::Lazy {
            let other = popped.filter(|&owner| owner != serial);
            if let Some(prior) = other.and_then(|owner| frame.prior_of(owner)).cloned() {
                frame.prior = prior;
            }
        }
        if Mutated::restores_context_frame(ah, entered) {
            frame.restore();
        }
        Ok(())
    }
}
