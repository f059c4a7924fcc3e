//! `Lazy`: the async-context scopes of Node.js pull request 66511
//! (<https://github.com/nodejs/node/pull/66511>). While no async hook is
//! enabled and nothing has called `executionAsyncResource()`, an
//! `InternalCallbackScope` swaps the two ids in place instead of pushing them,
//! and joins a chain of lazy scopes counted in `kLazyScopes`.
//!
//! This crate holds the pull request's change and nothing else: the lazy
//! store ([`LazyStack`]), run by Node's unchanged environment
//! ([`model::Environment`]). Modules, one per place in Node the pull request
//! changes: [`async_hooks`] (`src/env.h`, `src/env.cc`: `kLazyScopes`, the
//! chain, the pops), [`callback_scope`] (`src/api/callback.cc`: the lazy
//! path), [`js`] (`lib/internal/async_hooks.js`), and [`mutant`] (the
//! design decisions as switches, and the deliberate mistakes).

pub mod async_hooks;
pub mod callback_scope;
pub mod js;
pub mod mutant;

pub use async_hooks::LazyStack;
pub use callback_scope::{can_be_lazy, Path};

use async_hooks::LazyHooks;
use js::eager_depth_or_stack_length;
use model::env::resources::{Heap, NativeSlot, ScopeSerial};
use model::env::{AsyncIdStack, Died, Environment};
use model::vocab::{AsyncContext, AsyncId, ResourceView};

/// The lazy implementation: one Node.js `Environment` with PR 66511 applied.
pub type Lazy = Environment<LazyStack>;

/// A lazy environment with a deliberate mistake switched on (`None` is
/// `Lazy::new()`).
pub fn with_mutant(mutant: Option<mutant::Mutant>) -> Lazy {
    Lazy::with_store(LazyStack {
        decisions: mutant::Decisions { mutant },
        ..LazyStack::default()
    })
}

/// Each method names the module that holds the pull request's version;
/// the ones not here are Node's code, unchanged.
impl AsyncIdStack for LazyStack {
    type Entered = Path;

    fn depth(ah: &LazyHooks) -> usize {
        async_hooks::depth(ah)
    }

    fn grows_at(ah: &LazyHooks) -> usize {
        eager_depth_or_stack_length(ah, ah.store.decisions.grows_by_eager_depth())
    }

    fn js_push_falls_back_at(ah: &LazyHooks) -> usize {
        eager_depth_or_stack_length(ah, ah.store.decisions.js_falls_back_by_eager_depth())
    }

    fn resource_index(ah: &LazyHooks) -> usize {
        eager_depth_or_stack_length(ah, ah.store.decisions.resources_indexed_by_eager_depth())
    }

    fn trampoline_index(ah: &LazyHooks) -> usize {
        eager_depth_or_stack_length(ah, ah.store.decisions.trampoline_indexed_by_eager_depth()) - 1
    }

    fn enter_scope(
        ah: &mut LazyHooks,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
    ) -> Result<Path, Died> {
        callback_scope::enter_scope(ah, context, resource, serial, heap)
    }

    fn leave_scope(
        ah: &mut LazyHooks,
        async_id: AsyncId,
        entered: Path,
        serial: ScopeSerial,
    ) -> Result<(), Died> {
        callback_scope::leave_scope(ah, async_id, entered, serial)
    }

    fn restores_context_frame(ah: &LazyHooks, entered: Path) -> bool {
        callback_scope::restores_context_frame(ah, entered)
    }

    fn checks_outermost_close(ah: &LazyHooks, entered: Path) -> bool {
        entered != Path::Lazy || ah.store.decisions.outermost_close_checks_lazy()
    }

    fn pop_async_context(ah: &mut LazyHooks, async_id: AsyncId) -> Result<bool, Died> {
        async_hooks::pop_async_context(ah, async_id)
    }

    fn clear_async_id_stack(ah: &mut LazyHooks, can_call_into_js: bool) {
        async_hooks::clear_async_id_stack(ah, can_call_into_js);
    }

    fn pop_async_context_js(ah: &mut LazyHooks, async_id: AsyncId) -> Result<bool, Died> {
        js::pop_async_context_js(ah, async_id)
    }

    fn has_async_id_stack(ah: &LazyHooks) -> bool {
        js::has_async_id_stack(ah)
    }

    fn execution_async_resource(ah: &mut LazyHooks, heap: &Heap) -> ResourceView {
        js::execution_async_resource(ah, heap)
    }

    fn rename_scopes(store: &mut LazyStack, rename: &dyn Fn(ScopeSerial) -> ScopeSerial) {
        for link in &mut store.lazy_scopes {
            link.owner = rename(link.owner);
            link.resource = link.resource.renamed(rename);
        }
    }

    fn native_execution_async_resource(ah: &LazyHooks, index: usize, heap: &Heap) -> ResourceView {
        async_hooks::native_execution_async_resource(ah, index, heap)
    }
}
