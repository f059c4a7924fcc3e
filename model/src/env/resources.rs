//! The two resource arrays beside the id stack: `native_execution_async_resources_`
//! (`src/env.h`) and the JS array `execution_async_resources`.

use crate::vocab::{ResourceId, ResourceView};
use std::collections::BTreeSet;

/// One entry of `native_execution_async_resources_`: on Node's main branch a
/// `std::variant<Local<Object>*, Global<Object>*>`, read when asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NativeSlot {
    /// A `Local<Object>*`: the object it pointed to when pushed.
    Local(ResourceView),
    /// A `Global<Object>*`: empty once the Global is reset.
    Global(ResourceId),
}

impl NativeSlot {
    /// Dereference the pointer as `AsyncHooks::native_execution_async_resource`
    /// does; a reset Global is an empty handle, which JS sees as `undefined`.
    pub fn read(&self, reset_globals: &BTreeSet<ResourceId>) -> ResourceView {
        match self {
            NativeSlot::Local(view) => *view,
            NativeSlot::Global(id) if reset_globals.contains(id) => ResourceView::Undefined,
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
