//! `AsyncHooks` (`src/env.h`, `src/env.cc`) as the pull request changes it:
//! the field `kLazyScopes`, the chain of lazy scopes, and the C++ readers and
//! writers of the stack that know about them.

use model::env::resources::{Heap, NativeSlot, ScopeSerial};
use model::env::{AsyncHooks, AsyncIdStack, Died, TrackedVec};
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
    pub lazy_scopes: TrackedVec<LazyScope>,
}

/// How an `InternalCallbackScope` entered its context: the path its
/// constructor took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Path {
    /// `push_async_context`, as in Node today (or nothing, when JS could not run).
    #[default]
    Pushed,
    /// The lazy path: ids swapped in place, the scope linked in the chain.
    Lazy,
}

/// A store that holds the chain: [`LazyStack`], or a store wrapping it. The
/// functions of this crate are written over it, so that each calls the
/// store's own methods (`S::grows_at`, `S::pop_async_context`), as Node's
/// members of `AsyncHooks` call each other.
pub trait LazyStore: AsyncIdStack<Entered = Path> {
    /// `kLazyScopes` and the chain.
    fn lazy(&self) -> &LazyStack;
    /// `kLazyScopes` and the chain, to change.
    fn lazy_mut(&mut self) -> &mut LazyStack;
}

impl LazyStore for LazyStack {
    fn lazy(&self) -> &LazyStack {
        self
    }

    fn lazy_mut(&mut self) -> &mut LazyStack {
        self
    }
}

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
pub fn depth<S: LazyStore>(ah: &AsyncHooks<S>) -> usize {
    (ah.fields.k_stack_length + ah.store.lazy().k_lazy_scopes) as usize
}

/// Whether the innermost entry is a lazy scope: the innermost lazy scope
/// was linked when `kStackLength` was what it is now.
pub fn top<S: LazyStore>(ah: &AsyncHooks<S>) -> Top {
    match ah.store.lazy().lazy_scopes.last() {
        Some(l) if l.stack_position == ah.fields.k_stack_length => Top::Lazy,
        _ if ah.fields.k_stack_length > 0 => Top::Stack,
        _ => Top::Empty,
    }
}

/// Drop native resources left past `depth`, as eager Node's push
/// (`resize(offset + 1)`) and pop (`resize(offset)`) do on the way (decision 14).
fn drop_stale_native_resources<S>(ah: &mut AsyncHooks<S>, depth: usize) {
    if ah.native_execution_async_resources.len() > depth {
        ah.native_execution_async_resources.truncate(depth);
        ah.cost.resource_writes += 1;
    }
}

/// The lazy path of the scope constructor, past `push_async_context`'s
/// CHECKs: save the current pair in the scope (decision 1), write the new one
/// in place, link the scope. No stack or resource write; the stack still
/// grows at the eager depth (decision 17).
pub fn link_lazy_scope<S: LazyStore>(
    ah: &mut AsyncHooks<S>,
    context: AsyncContext,
    resource: NativeSlot,
    owner: ScopeSerial,
) {
    drop_stale_native_resources(ah, depth(ah));
    if S::grows_at(ah) >= ah.stack_capacity_pairs {
        ah.grow_async_ids_stack();
    }
    let ids = &mut ah.async_id_fields;
    let chain = ah.store.lazy_mut();
    chain.lazy_scopes.push(LazyScope {
        async_id: context.async_id,
        saved: (ids.k_execution_async_id, ids.k_trigger_async_id),
        resource,
        stack_position: ah.fields.k_stack_length,
        owner,
    });
    chain.k_lazy_scopes += 1;
    ah.cost.chain_writes += 1;
    ids.k_execution_async_id = context.async_id;
    ids.k_trigger_async_id = context.trigger_async_id;
}

/// Unlink the innermost lazy scope.
pub fn unlink<S: LazyStore>(ah: &mut AsyncHooks<S>) -> LazyScope {
    let chain = ah.store.lazy_mut();
    let lazy = chain.lazy_scopes.pop().expect("top() saw a lazy scope");
    chain.k_lazy_scopes -= 1;
    ah.cost.chain_writes += 1;
    lazy
}

/// Put back the pair a lazy scope saved: both ids (decision 15).
pub fn restore_lazy_pair<S>(ah: &mut AsyncHooks<S>, saved: (AsyncId, AsyncId)) {
    ah.async_id_fields.k_execution_async_id = saved.0;
    ah.async_id_fields.k_trigger_async_id = saved.1;
}

/// `AsyncHooks::pop_async_context`, lazy-aware: pop whatever is innermost
/// (decision 4), a stack entry as Node does, or a lazy scope after the same
/// corrupted-stack check (decision 5).
pub fn pop_async_context<S: LazyStore>(
    ah: &mut AsyncHooks<S>,
    async_id: AsyncId,
) -> Result<bool, Died> {
    match top(ah) {
        Top::Empty => Ok(false),
        Top::Stack => ah.pop_async_context(async_id),
        Top::Lazy => {
            ah.check_corrupted_stack(async_id)?;
            Ok(pop_lazy_scope(ah))
        }
    }
}

/// Pop the innermost entry, a lazy scope: unlink it, drop the native
/// resources past it (decision 14), restore the pair it saved. Returns
/// whether entries remain.
pub fn pop_lazy_scope<S: LazyStore>(ah: &mut AsyncHooks<S>) -> bool {
    let offset = depth(ah) - 1;
    let lazy = unlink(ah);
    drop_stale_native_resources(ah, offset);
    restore_lazy_pair(ah, lazy.saved);
    ah.truncate_js_resources(offset);
    offset > 0
}

/// `clear_async_id_stack`, lazy-aware: also empty the chain and zero
/// `kLazyScopes` (decision 10), so that the lazy scopes' later closes find
/// nothing to pop.
pub fn clear_async_id_stack<S: LazyStore>(ah: &mut AsyncHooks<S>, can_call_into_js: bool) {
    ah.clear_async_id_stack(can_call_into_js);
    let chain = ah.store.lazy_mut();
    if !chain.lazy_scopes.is_empty() {
        chain.lazy_scopes.clear();
        ah.cost.chain_writes += 1;
    }
    chain.k_lazy_scopes = 0;
}

/// `native_execution_async_resource(index)`, lazy-aware: the innermost
/// lazy scope's resource when it is the entry at `index` (decision 12),
/// dereferenced now (decision 13); else the array, as Node reads it.
pub fn native_execution_async_resource<S: LazyStore>(
    ah: &AsyncHooks<S>,
    index: usize,
    heap: &Heap,
) -> ResourceView {
    let innermost_lazy = top(ah) == Top::Lazy && index + 1 == depth(ah);
    match ah.store.lazy().lazy_scopes.last() {
        Some(lazy) if innermost_lazy => lazy.resource.read(heap),
        _ => ah.native_execution_async_resource(index, heap),
    }
}
