//! The two resource arrays beside the id stack: `native_execution_async_resources_`
//! (`src/env.h`) and the JS array `execution_async_resources`.

use crate::vocab::{ResourceId, ResourceView};
use std::collections::BTreeSet;

/// The serial number of an `InternalCallbackScope`, in the order they opened
/// (the main script's is 0).
pub type ScopeSerial = u32;

/// One entry of `native_execution_async_resources_`: on Node's main branch a
/// `std::variant<Local<Object>*, Global<Object>*>`, read when asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NativeSlot {
    /// A `Local<Object>*` into the storage of the scope with this serial
    /// (`node::CallbackScope::resource_storage_`, `InternalMakeCallback`'s
    /// argument): the object it points to while that scope is open, freed
    /// memory after.
    Local(ResourceView, ScopeSerial),
    /// A `Global<Object>*` that the caller keeps alive: empty once reset.
    Global(ResourceId),
}

/// What dereferencing a resource pointer depends on: the Globals reset so
/// far, and which scopes are still open (whose storage a `Local<Object>*`
/// may point into).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Heap {
    /// Resources held as Globals that were reset.
    pub reset_globals: BTreeSet<ResourceId>,
    /// The scopes not yet destroyed.
    pub live_scopes: BTreeSet<ScopeSerial>,
    /// The serial the next scope to open gets.
    pub next_scope: ScopeSerial,
}

impl Heap {
    /// A `Local<Object>*` into the storage of the scope about to open.
    pub fn local_of_next_scope(&self, view: ResourceView) -> NativeSlot {
        NativeSlot::Local(view, self.next_scope)
    }
}

impl NativeSlot {
    /// The same pointer with its scope serial renamed by `rename`.
    pub fn renamed(self, rename: &dyn Fn(ScopeSerial) -> ScopeSerial) -> NativeSlot {
        match self {
            NativeSlot::Local(view, owner) => NativeSlot::Local(view, rename(owner)),
            global => global,
        }
    }

    /// Dereference the pointer as `AsyncHooks::native_execution_async_resource`
    /// does: a reset Global is an empty handle, which JS sees as `undefined`;
    /// a `Local<Object>*` into a scope that has returned reads freed memory,
    /// which is [`ResourceView::Unspecified`].
    pub fn read(&self, heap: &Heap) -> ResourceView {
        match self {
            NativeSlot::Local(view, owner) if heap.live_scopes.contains(owner) => *view,
            NativeSlot::Local(..) => ResourceView::Unspecified,
            NativeSlot::Global(id) if heap.reset_globals.contains(id) => ResourceView::Undefined,
            NativeSlot::Global(id) => ResourceView::Resource(*id),
        }
    }
}

/// The JS array `execution_async_resources`, with JS array semantics: holes
/// and `undefined` entries are both falsy, `pop()` drops the last element
/// whatever its index, and `length = n` truncates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct JsArray {
    items: Vec<Option<ResourceView>>,
}

impl JsArray {
    /// `array[i] = value` (extends the array with holes when needed).
    pub fn set(&mut self, i: usize, value: Option<ResourceView>) {
        if i >= self.items.len() {
            self.items.resize(i + 1, None);
        }
        self.items[i] = value;
    }

    /// `array[i]` when truthy.
    pub fn get(&self, i: usize) -> Option<ResourceView> {
        self.items.get(i).copied().flatten()
    }

    /// `array.pop()`.
    pub fn pop(&mut self) {
        self.items.pop();
    }

    /// `array.length`.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// `array.length === 0`.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// `array.length = n` with `n <= length`.
    pub fn truncate(&mut self, n: usize) {
        self.items.truncate(n);
    }

    /// Every element, holes as `None`.
    pub fn items(&self) -> &[Option<ResourceView>] {
        &self.items
    }
}
