//! `Lazy`: the async-context scopes of Node.js pull request 66511
//! (<https://github.com/nodejs/node/pull/66511>). While no async hook is
//! enabled and nothing has called `executionAsyncResource()`, an
//! `InternalCallbackScope` swaps the two ids in place instead of pushing them,
//! and joins a chain of lazy scopes counted in `kLazyScopes`.
//!
//! The pull request's change is the lazy store ([`LazyStack`]), run by Node's
//! unchanged environment ([`model::Environment`]), in one module per place in
//! Node it changes: [`async_hooks`] (`src/env.h`, `src/env.cc`: `kLazyScopes`,
//! the chain, the pops), [`callback_scope`] (`src/api/callback.cc`: the lazy
//! path), [`js`] (`lib/internal/async_hooks.js`). Beside it, [`mutant`] is
//! the catalogue of deliberate mistakes, one per design decision.

pub mod async_hooks;
pub mod callback_scope;
pub mod js;
pub mod mutant;

pub use async_hooks::{LazyStack, LazyStore, Path};
pub use callback_scope::can_be_lazy;

use model::env::async_id_stack::FrameExchange;
use model::env::context_frame::ContextFrame;
use model::env::resources::{Heap, NativeSlot, ScopeSerial};
use model::env::{AsyncHooks, AsyncIdStack, Died, Environment};
use model::vocab::{AsyncContext, AsyncId, ResourceView};

/// The lazy implementation: one Node.js `Environment` with PR 66511 applied.
pub type Lazy = Environment<LazyStack>;

/// The methods the pull request changes, each in the module of its Node
/// file; the others are Node's code at the eager depth [`Self::depth`].
impl AsyncIdStack for LazyStack {
    type Entered = Path;

    fn depth(ah: &AsyncHooks<Self>) -> usize {
        async_hooks::depth(ah)
    }

    fn enter_scope(
        ah: &mut AsyncHooks<Self>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        callback_scope::enter_scope(ah, context, resource, serial, heap, frame)
    }

    fn pop_async_context(ah: &mut AsyncHooks<Self>, async_id: AsyncId) -> Result<bool, Died> {
        async_hooks::pop_async_context(ah, async_id)
    }

    fn clear_async_id_stack(ah: &mut AsyncHooks<Self>, can_call_into_js: bool) {
        async_hooks::clear_async_id_stack(ah, can_call_into_js);
    }

    fn pop_async_context_js(ah: &mut AsyncHooks<Self>, async_id: AsyncId) -> Result<bool, Died> {
        js::pop_async_context_js(ah, async_id)
    }

    fn native_execution_async_resource(
        ah: &AsyncHooks<Self>,
        index: usize,
        heap: &Heap,
    ) -> ResourceView {
        async_hooks::native_execution_async_resource(ah, index, heap)
    }

    fn rename_scopes(store: &mut Self, rename: &dyn Fn(ScopeSerial) -> ScopeSerial) {
        for link in &mut store.lazy_scopes {
            link.owner = rename(link.owner);
            link.resource = link.resource.renamed(rename);
        }
    }
}
