//! The resource arrays, as the pull request leaves them: the JS array
//! `execution_async_resources` and `native_execution_async_resources_`, both
//! indexed by the depth an eager Node would have (`kStackLength + kLazyScopes`).

use model::vocab::{ResourceId, ResourceView};
use std::collections::BTreeSet;

/// A resource pointer as a scope holds it (`Local<Object>*` or `Global<Object>*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NativeSlot {
    /// A `Local<Object>*`.
    Local(ResourceView),
    /// A `Global<Object>*`: empty once reset.
    Global(ResourceId),
}

impl NativeSlot {
    /// Dereference the pointer now: a reset Global is `undefined`.
    pub fn read(&self, reset_globals: &BTreeSet<ResourceId>) -> ResourceView {
        match self {
            NativeSlot::Local(view) => *view,
            NativeSlot::Global(id) if reset_globals.contains(id) => ResourceView::Undefined,
            NativeSlot::Global(id) => ResourceView::Resource(*id),
        }
    }
}

/// A JS array of resources: holes and `undefined` are falsy, `pop()` drops
/// the last element, `length = n` truncates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct JsArray {
    items: Vec<Option<ResourceView>>,
}

impl JsArray {
    /// `array[i] = value`.
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

    /// Every element, holes as `None` (for the refinement check).
    pub fn items(&self) -> &[Option<ResourceView>] {
        &self.items
    }
}
