//! Mistakes in the JavaScript readers of the stack
//! (`lib/internal/async_hooks.js`), beside the right functions of
//! [`crate::js`] and Node's code at the eager depth.

use super::{Mistake, Mutated};
use crate::async_hooks::{self, Top};
use model::env::resources::Heap;
use model::env::{AsyncHooks, AsyncIdStack, Died};
use model::vocab::{AsyncId, ResourceView};

/// Decision 7 undone: JS `popAsyncContext` ignores lazy scopes (Node's pop,
/// which sees only `kStackLength`).
#[derive(Debug)]
pub struct JsPopIgnoresLazy;

impl Mistake for JsPopIgnoresLazy {
    fn pop_async_context_js(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
    ) -> Result<bool, Died> {
        ah.pop_async_context_js(async_id)
    }
}

/// Decision 8 undone: a JS pop of a lazy scope does not leave its resource
/// in the native array, where an eager push would have left it.
#[derive(Debug)]
pub struct JsPopLazyForgetsResource;

impl Mistake for JsPopLazyForgetsResource {
    fn pop_async_context_js(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
    ) -> Result<bool, Died> {
        pop_async_context_js_forgetting_resource(ah, async_id)
    }
}

/// [`crate::js::pop_async_context_js`] without the write of the lazy
/// scope's resource: the native array as it was before the pop.
fn pop_async_context_js_forgetting_resource(
    ah: &mut AsyncHooks<Mutated>,
    async_id: AsyncId,
) -> Result<bool, Died> {
    let lazy = async_hooks::top(ah) == Top::Lazy;
    let before = ah.native_execution_async_resources.clone();
    let answer = crate::js::pop_async_context_js(ah, async_id);
    if lazy {
        ah.native_execution_async_resources = before;
    }
    answer
}

/// Decision 7 undone in its other half: while `kLazyScopes != 0`, JS
/// `popAsyncContext` asks C++ only whether a lazy scope is linked, not
/// whether it is the innermost entry, so it unlinks the innermost lazy scope
/// even under a context JS pushed above it (a Timeout's `emitBefore` above
/// `Environment::RunTimers`' lazy scope; the pull request's 21a6ea2 tests "a
/// context pushed on the stack above a lazy scope").
#[derive(Debug)]
pub struct JsPopIgnoresJsAbove;

impl Mistake for JsPopIgnoresJsAbove {
    fn pop_async_context_js(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
    ) -> Result<bool, Died> {
        pop_async_context_js_taking_lazy(ah, async_id)
    }
}

/// [`crate::js::pop_async_context_js`] with its question "is the innermost
/// entry lazy?" answered by `kLazyScopes != 0`: past the same check, the
/// innermost lazy scope is unlinked whatever is above it, and the JS
/// context above it stays on the stack.
fn pop_async_context_js_taking_lazy(
    ah: &mut AsyncHooks<Mutated>,
    async_id: AsyncId,
) -> Result<bool, Died> {
    if ah.store.lazy.k_lazy_scopes == 0 || async_hooks::top(ah) == Top::Lazy {
        return crate::js::pop_async_context_js(ah, async_id);
    }
    ah.cost.crossings += 1;
    if ah.check_corrupted_stack(async_id).is_err() {
        return Mutated::pop_async_context(ah, async_id);
    }
    crate::js::unlink_lazy_scope_js(ah);
    ah.pop_js_resource();
    Ok(async_hooks::depth(ah) > 0)
}

/// Decision 9 undone: `hasAsyncIdStack()` reads only `kStackLength`.
#[derive(Debug)]
pub struct HasAsyncIdStackIgnoresLazy;

impl Mistake for HasAsyncIdStackIgnoresLazy {
    fn has_async_id_stack(&self, ah: &AsyncHooks<Mutated>) -> bool {
        ah.fields.k_stack_length > 0
    }
}

/// Decision 11 undone: JS indexes `execution_async_resources` by
/// `kStackLength` instead of the eager depth `kStackLength + kLazyScopes`.
#[derive(Debug)]
pub struct ResourceIndexByStackLength;

impl Mistake for ResourceIndexByStackLength {
    fn resource_index(&self, ah: &AsyncHooks<Mutated>) -> usize {
        ah.fields.k_stack_length as usize
    }
}

/// Decision 11 undone for `callbackTrampoline`: it writes its resource at
/// `kStackLength - 1`.
#[derive(Debug)]
pub struct TrampolineIndexByStackLength;

impl Mistake for TrampolineIndexByStackLength {
    fn trampoline_index(&self, ah: &AsyncHooks<Mutated>) -> usize {
        ah.fields.k_stack_length as usize - 1
    }
}

/// Decision 12 undone in JS: `executionAsyncResource()` returns the innermost
/// lazy scope's resource whenever `kLazyScopes != 0`, ignoring JS contexts
/// above it.
#[derive(Debug)]
pub struct ResourceIgnoresJsAbove;

impl Mistake for ResourceIgnoresJsAbove {
    fn execution_async_resource(&self, ah: &mut AsyncHooks<Mutated>, heap: &Heap) -> ResourceView {
        match ah.store.lazy.lazy_scopes.last() {
            Some(lazy) => lazy.resource.read(heap),
            None => ah.execution_async_resource_at(Mutated::resource_index(ah), heap),
        }
    }
}

/// Decision 17 undone for JS: `pushAsyncContext` falls back to the native
/// push when `kStackLength` (not the eager depth) reaches the room the id
/// stack has.
#[derive(Debug)]
pub struct FallbackByStackLength;

impl Mistake for FallbackByStackLength {
    fn js_push_falls_back_at(&self, ah: &AsyncHooks<Mutated>) -> usize {
        ah.fields.k_stack_length as usize
    }
}
