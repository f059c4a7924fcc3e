//! `AsyncHooks` (`src/env.h`, `src/env.cc`) as the pull request changes it:
//! the field `kLazyScopes`, the chain of lazy scopes, and the C++ readers and
//! writers of the stack that know about them.

use crate::mutant::Decisions;
use model::env::resources::{Heap, NativeSlot, ScopeSerial};
use model::env::{AsyncHooks, AsyncIdStack, Died};
use model::vocab::{AsyncContext, AsyncId, ResourceView};

/// One lazy scope in the chain: the pair it swapped out, its resource
/// pointer, and where it sits among the stack entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LazyScope {
    /// The scope's own async id.
    pub async_id: AsyncId,
    /// The (execution, trigger) pair it saved instead of pushing.
    pub saved: (AsyncId, AsyncId),
    /// The resource pointer it was given.
    pub resource: NativeSlot,
    /// `kStackLength` when it was linked: it sits above that many stack entries.
    pub stack_position: u32,
    /// The scope it belongs to (an intrusive chain keeps the link inside it).
    pub owner: ScopeSerial,
}

/// The lazy store: what the pull request adds to `AsyncHooks`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LazyStack {
    /// `fields_[kLazyScopes]` (new): lazy scopes in the chain; JS reads it.
    pub k_lazy_scopes: u32,
    /// The chain of lazy scopes, outermost first (`last()` is the innermost).
    pub lazy_scopes: Vec<LazyScope>,
    /// How each design decision is taken (as designed, unless a mutant is on).
    pub decisions: Decisions,
}

/// `AsyncHooks` with the lazy store.
pub type LazyHooks = AsyncHooks<LazyStack>;

/// Which entry is innermost: a lazy scope, a stack entry, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Top {
    /// Nothing: eager Node's stack would be empty.
    Empty,
    /// The innermost lazy scope.
    Lazy,
    /// The top entry of `async_ids_stack_`.
    Stack,
}

/// The depth eager Node would have: `kStackLength + kLazyScopes`.
pub fn depth(ah: &LazyHooks) -> usize {
    (ah.fields.k_stack_length + ah.store.k_lazy_scopes) as usize
}

/// Whether the innermost entry is a lazy scope: the innermost lazy scope
/// was linked when `kStackLength` was what it is now.
pub fn top(ah: &LazyHooks) -> Top {
    match ah.store.lazy_scopes.last() {
        Some(l) if l.stack_position == ah.fields.k_stack_length => Top::Lazy,
        _ if ah.fields.k_stack_length > 0 => Top::Stack,
        _ => Top::Empty,
    }
}

/// Drop native resources left past `depth`, as eager Node's push
/// (`resize(offset + 1)`) and pop (`resize(offset)`) do on the way (decision 14).
fn drop_stale_native_resources(ah: &mut LazyHooks, depth: usize) {
    if ah.store.decisions.drops_stale_native_resources()
        && ah.native_execution_async_resources.len() > depth
    {
        ah.native_execution_async_resources.truncate(depth);
        ah.cost.resource_writes += 1;
    }
}

/// The lazy path of the scope constructor: save the current pair in the
/// scope (decision 1), write the new one in place, link the scope. No stack
/// or resource write; the id checks (decision 6) and the stack's growth at
/// the eager depth (decision 17) stay.
pub fn link_lazy_scope(
    ah: &mut LazyHooks,
    context: AsyncContext,
    resource: NativeSlot,
    owner: ScopeSerial,
) -> Result<(), Died> {
    let (async_id, trigger_async_id) = (context.async_id, context.trigger_async_id);
    let decisions = ah.store.decisions;
    if decisions.checks_ids_on_lazy_path() {
        ah.check_async_ids(async_id, trigger_async_id)?;
    }
    drop_stale_native_resources(ah, depth(ah));
    if LazyStack::grows_at(ah) >= ah.stack_capacity_pairs {
        ah.grow_async_ids_stack();
    }
    let ids = &mut ah.async_id_fields;
    let saved = if decisions.saves_pair_before_writing() {
        (ids.k_execution_async_id, ids.k_trigger_async_id)
    } else {
        (async_id, trigger_async_id)
    };
    ah.store.lazy_scopes.push(LazyScope {
        async_id,
        saved,
        resource,
        stack_position: ah.fields.k_stack_length,
        owner,
    });
    ah.store.k_lazy_scopes += 1;
    ah.cost.chain_writes += 1;
    ids.k_execution_async_id = async_id;
    ids.k_trigger_async_id = trigger_async_id;
    Ok(())
}

/// Unlink the innermost lazy scope.
pub fn unlink(ah: &mut LazyHooks) -> LazyScope {
    let lazy = ah.store.lazy_scopes.pop().expect("top() saw a lazy scope");
    ah.store.k_lazy_scopes -= 1;
    ah.cost.chain_writes += 1;
    lazy
}

/// Put back the pair a lazy scope saved: both ids (decision 15).
pub fn restore_lazy_pair(ah: &mut LazyHooks, saved: (AsyncId, AsyncId)) {
    ah.async_id_fields.k_execution_async_id = saved.0;
    if ah.store.decisions.pop_restores_trigger() {
        ah.async_id_fields.k_trigger_async_id = saved.1;
    }
}

/// `AsyncHooks::pop_async_context`, lazy-aware: pop whatever is innermost
/// (decision 4), a stack entry as Node does, or a lazy scope (restore the
/// pair it saved, unlink it), after the same corrupted-stack check (decision 5).
pub fn pop_async_context(ah: &mut LazyHooks, async_id: AsyncId) -> Result<bool, Died> {
    match top(ah) {
        Top::Empty => Ok(false),
        Top::Stack => ah.pop_async_context(async_id),
        Top::Lazy => {
            if ah.store.decisions.pop_checks_lazy_entry() {
                ah.check_corrupted_stack(async_id)?;
            }
            let offset = depth(ah) - 1;
            let lazy = unlink(ah);
            drop_stale_native_resources(ah, offset);
            restore_lazy_pair(ah, lazy.saved);
            ah.truncate_js_resources(offset);
            Ok(offset > 0)
        }
    }
}

/// `clear_async_id_stack`, lazy-aware: also empty the chain and zero
/// `kLazyScopes` (decision 10), so that the lazy scopes' later closes find
/// nothing to pop.
pub fn clear_async_id_stack(ah: &mut LazyHooks, can_call_into_js: bool) {
    ah.clear_async_id_stack(can_call_into_js);
    let decisions = ah.store.decisions;
    if decisions.clear_empties_chain() {
        if !ah.store.lazy_scopes.is_empty() {
            ah.store.lazy_scopes.clear();
            ah.cost.chain_writes += 1;
        }
        if decisions.clear_zeroes_count() {
            ah.store.k_lazy_scopes = 0;
        }
    }
}

/// `native_execution_async_resource(index)`, lazy-aware: the innermost
/// lazy scope's resource when it is the entry at `index` (decision 12),
/// dereferenced now (decision 13); else the array, as Node reads it.
pub fn native_execution_async_resource(ah: &LazyHooks, index: usize, heap: &Heap) -> ResourceView {
    let innermost_lazy = top(ah) == Top::Lazy && index + 1 == depth(ah);
    match ah.store.lazy_scopes.last() {
        Some(lazy) if innermost_lazy && ah.store.decisions.native_read_sees_chain() => {
            lazy.resource.read(heap)
        }
        _ => ah.native_execution_async_resource(index, heap),
    }
}
