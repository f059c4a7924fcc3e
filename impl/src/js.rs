//! The JavaScript readers of the stack (`lib/internal/async_hooks.js`) as the
//! pull request changes them: they ask C++ for the innermost lazy scope while
//! `kLazyScopes` is not zero. `hasAsyncIdStack()` and the indices of
//! `pushAsyncContext`, `executionAsyncResource()` and `callbackTrampoline`
//! are Node's code at the eager depth ([`crate::async_hooks::depth`];
//! decisions 9, 11, 17).

use crate::async_hooks::{self, LazyStore, Top};
use model::env::{AsyncHooks, Died};
use model::vocab::AsyncId;

/// `popAsyncContext(asyncId)`, lazy-aware (decision 7): Node's code while
/// `kLazyScopes` is 0; else the same corrupted-stack check, then JS asks C++
/// whether the innermost entry is a lazy scope, and if so C++ unlinks it,
/// restores the pair it saved and leaves its resource in the native array
/// where an eager push left it (decision 8); then
/// `execution_async_resources.pop()` as before.
pub fn pop_async_context_js<S: LazyStore>(
    ah: &mut AsyncHooks<S>,
    async_id: AsyncId,
) -> Result<bool, Died> {
    if ah.store.lazy().k_lazy_scopes == 0 {
        return ah.pop_async_context_js(async_id);
    }
    ah.cost.crossings += 1;
    if ah.check_corrupted_stack(async_id).is_err() {
        return S::pop_async_context(ah, async_id);
    }
    if async_hooks::top(ah) == Top::Lazy {
        unlink_lazy_scope_js(ah);
    } else {
        ah.restore_saved();
    }
    ah.pop_js_resource();
    Ok(async_hooks::depth(ah) > 0)
}

/// The C++ half of a JS pop of a lazy scope: unlink the innermost lazy
/// scope, leave its resource in the native array at its depth, where an
/// eager push left it (decision 8), and restore the pair it saved.
pub fn unlink_lazy_scope_js<S: LazyStore>(ah: &mut AsyncHooks<S>) {
    let index = async_hooks::depth(ah) - 1;
    let lazy = async_hooks::unlink(ah);
    let natives = &mut ah.native_execution_async_resources;
    if natives.len() <= index {
        natives.resize(index + 1, None);
    }
    natives[index] = Some(lazy.resource);
    ah.cost.resource_writes += 1;
    async_hooks::restore_lazy_pair(ah, lazy.saved);
}
