//! The JavaScript readers of the stack (`lib/internal/async_hooks.js`) as the
//! pull request changes them: indexed by the eager depth, and asking C++ for
//! the innermost lazy scope while `kLazyScopes` is not zero.

use crate::async_hooks::{self, LazyHooks, LazyStack, Top};
use model::env::resources::Heap;
use model::env::{AsyncIdStack, Died};
use model::vocab::{AsyncId, ResourceView};

/// `popAsyncContext(asyncId)`, lazy-aware (decision 7): Node's code while
/// `kLazyScopes` is 0; else the same corrupted-stack check, then JS asks C++
/// whether the innermost entry is a lazy scope, and if so C++ unlinks it,
/// restores the pair it saved and leaves its resource in the native array
/// where an eager push left it (decision 8); then
/// `execution_async_resources.pop()` as before.
pub fn pop_async_context_js(ah: &mut LazyHooks, async_id: AsyncId) -> Result<bool, Died> {
    let decisions = ah.store.decisions;
    if ah.store.k_lazy_scopes == 0 || !decisions.js_pop_sees_chain() {
        return ah.pop_async_context_js(async_id);
    }
    if ah.check_corrupted_stack(async_id).is_err() {
        ah.cost.crossings += 1;
        return LazyStack::pop_async_context(ah, async_id);
    }
    ah.cost.crossings += 1;
    if async_hooks::top(ah) == Top::Lazy {
        let index = async_hooks::depth(ah) - 1;
        let lazy = async_hooks::unlink(ah);
        if decisions.js_pop_keeps_lazy_resource() {
            let natives = &mut ah.native_execution_async_resources;
            if natives.len() <= index {
                natives.resize(index + 1, None);
            }
            natives[index] = Some(lazy.resource);
            ah.cost.resource_writes += 1;
        }
        async_hooks::restore_lazy_pair(ah, lazy.saved);
    } else {
        ah.restore_saved();
    }
    ah.pop_js_resource();
    Ok(async_hooks::depth(ah) > 0)
}

/// `hasAsyncIdStack()`, lazy-aware: `kStackLength > 0 || kLazyScopes > 0`
/// (decision 9).
pub fn has_async_id_stack(ah: &LazyHooks) -> bool {
    if ah.store.decisions.has_stack_counts_chain() {
        async_hooks::depth(ah) > 0
    } else {
        ah.fields.k_stack_length > 0
    }
}

/// `executionAsyncResource()`, lazy-aware: Node's lookup at the eager depth
/// (decisions 11 and 12); C++ answers for the innermost lazy scope.
pub fn execution_async_resource(ah: &mut LazyHooks, heap: &Heap) -> ResourceView {
    if !ah.store.decisions.resource_reads_js_above_lazy() {
        if let Some(lazy) = ah.store.lazy_scopes.last() {
            return lazy.resource.read(heap);
        }
    }
    ah.execution_async_resource_at(LazyStack::resource_index(ah), heap)
}

/// The eager depth where `pick` says so, else `kStackLength`: how the
/// indexing decisions (11, 17) read.
pub fn eager_depth_or_stack_length(ah: &LazyHooks, pick: bool) -> usize {
    if pick {
        async_hooks::depth(ah)
    } else {
        ah.fields.k_stack_length as usize
    }
}
