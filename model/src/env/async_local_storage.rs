//! `AsyncLocalStorage` on v20, built on async hooks (`lib/async_hooks.js` of
//! v20; Node 26's `--no-async-context-frame` one,
//! `lib/internal/async_local_storage/async_hooks.js`, differs in
//! `defaultValue` and is not modelled: `docs/node-findings.md`, F3). A store is a property
//! of a resource object (`resource[this.kResourceStore]`) read through
//! `executionAsyncResource()`; `storageHook`, an init hook enabled while
//! some storage is (`storageList`), copies the current resource's stores to
//! every new resource (`_propagate`). So the first `run` or `enterWith`
//! enables an init hook and sets `kUsesExecutionAsyncResource`: every later
//! scope is eager.

use super::hooks::{STORAGE_HOOK, STORAGE_HOOK_CALLBACKS};
use super::{AlsRestore, AsyncIdStack, Environment, Frame, Refusal};
use crate::vocab::{AlsId, Op, ResourceView, StoreValue};
use std::collections::BTreeMap;

/// `storageList` and the stores kept on resource objects.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceStores {
    /// `storageList`: the enabled storages, in the order `_enable` added
    /// them. `storageHook` is enabled exactly while it is not empty.
    storage_list: Vec<AlsId>,
    /// `resource[als.kResourceStore]` that is not `undefined`, by resource
    /// object and storage.
    stores: BTreeMap<(ResourceView, AlsId), StoreValue>,
}

impl ResourceStores {
    /// `als.enabled`.
    pub fn is_enabled(&self, als: AlsId) -> bool {
        self.storage_list.contains(&als)
    }

    /// Whether `storageHook` is enabled (`storageList` is not empty).
    pub fn hook_enabled(&self) -> bool {
        !self.storage_list.is_empty()
    }

    /// `resource[als.kResourceStore]`.
    pub fn get(&self, resource: ResourceView, als: AlsId) -> Option<StoreValue> {
        self.stores.get(&(resource, als)).copied()
    }

    /// `resource[als.kResourceStore] = value`.
    fn set(&mut self, resource: ResourceView, als: AlsId, value: Option<StoreValue>) {
        match value {
            Some(v) => self.stores.insert((resource, als), v),
            None => self.stores.remove(&(resource, als)),
        };
    }

    /// Each resource a store is kept on, to rename in place (the fixpoint
    /// explorer renames the async ids that name tick objects, microtasks
    /// and promises: `src/canonical.rs`).
    pub fn rename_resources(&mut self, rename: &mut dyn FnMut(&mut ResourceView)) {
        let stores = std::mem::take(&mut self.stores);
        for ((mut r, als), v) in stores {
            rename(&mut r);
            self.stores.insert((r, als), v);
        }
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// v20 only: what reads stores on `executionAsyncResource()` needs a
    /// resource object there. `run` and `enterWith` always read it,
    /// `getStore()` of an enabled storage does, and so does `storageHook`'s
    /// init while a storage is enabled, in every op that makes a resource
    /// (the handler's `setImmediate` after a handled exception among them).
    /// It is `undefined` in a JS context pushed without a resource
    /// (`emit-before` without `R`), where Node throws a `TypeError` (the
    /// model has no op that throws; in the init hook it is fatal), and
    /// unspecified where Node reads freed memory (`docs/spec.md`, M3);
    /// `emit-init` without a resource makes `_propagate` write on
    /// `undefined`. Ops that read no store stay enabled (an `emit-after`
    /// pops that context).
    pub(super) fn resource_stores_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        let stores = self.js_objects.resource_stores();
        let hook_enabled = stores.is_some_and(ResourceStores::hook_enabled);
        let throws_on_undefined = match op {
            Op::AlsRun { .. } | Op::AlsEnterWith { .. } => true,
            Op::AlsGetStore(als) => stores.is_some_and(|s| s.is_enabled(*als)),
            _ => false,
        };
        let reads = throws_on_undefined
            || match op {
                Op::EmitInit { .. }
                | Op::NextTick { .. }
                | Op::NextTickBody
                | Op::QueueMicrotask
                | Op::QueueMicrotaskBody
                | Op::PromiseThen
                | Op::PromiseThenBody
                | Op::PromiseReject
                | Op::PromiseCatch
                | Op::NapiAsyncInit(_)
                | Op::UncaughtException { .. }
                | Op::EndListener => hook_enabled,
                _ => false,
            };
        if !reads {
            return Ok(());
        }
        match self.peek_execution_async_resource() {
            view @ ResourceView::Undefined if throws_on_undefined => {
                Err(Refusal::StoreWithoutResource(op, view))
            }
            view @ ResourceView::Unspecified => Err(Refusal::StoreWithoutResource(op, view)),
            _ => Ok(()),
        }
    }

    /// `this._enable()`: add `als` to `storageList` and `storageHook.enable()`
    /// (which does nothing when the hook is enabled already).
    fn als_enable_v20(&mut self, als: AlsId) {
        let stores = self.js_objects.resource_stores_mut();
        if stores.is_enabled(als) {
            return;
        }
        let hook_was_enabled = stores.hook_enabled();
        stores.storage_list.push(als);
        if !hook_was_enabled {
            self.hooks.active.push(STORAGE_HOOK);
            self.add_hook_callbacks(STORAGE_HOOK_CALLBACKS);
        }
    }

    /// `als.disable()` on v20: if enabled, take it out of `storageList`, and
    /// `storageHook.disable()` when the list is empty. The stores stay on
    /// their resources (a later `run` or `enterWith` finds them again).
    pub(crate) fn als_disable_v20(&mut self, als: AlsId) {
        let stores = self.js_objects.resource_stores_mut();
        let Some(i) = stores.storage_list.iter().position(|a| *a == als) else {
            return;
        };
        stores.storage_list.remove(i);
        if !stores.hook_enabled() {
            self.hooks.active.retain(|h| *h != STORAGE_HOOK);
            self.remove_hook_callbacks(STORAGE_HOOK_CALLBACKS);
        }
    }

    /// `als.getStore()` on v20: `executionAsyncResource()[this.kResourceStore]`
    /// if enabled, else `undefined`.
    pub(crate) fn als_get_store_v20(&mut self, als: AlsId) -> Option<StoreValue> {
        if !self.storage_is_enabled(als) {
            return None;
        }
        let resource = self.execution_async_resource();
        self.js_objects.resource_stores()?.get(resource, als)
    }

    /// `als.enterWith(store)` on v20: `_enable()`, then
    /// `executionAsyncResource()[this.kResourceStore] = store`.
    pub(crate) fn als_enter_with_v20(&mut self, als: AlsId, store: StoreValue) {
        self.als_enable_v20(als);
        let resource = self.execution_async_resource();
        (self.js_objects.resource_stores_mut()).set(resource, als, Some(store));
    }

    /// `als.run(store, fn)` (`data` is `Some`) or `als.exit(fn)` (`None`) on
    /// v20, up to the call of `fn`. `run`: if `store` is `getStore()`
    /// (`ObjectIs`), just call `fn`; else `_enable()`, and set the store on
    /// `executionAsyncResource()`, whose old store the `finally` puts back.
    /// `exit`: if enabled, `disable()`, and the `finally` `_enable()`s again.
    pub(crate) fn als_run_v20(&mut self, als: AlsId, data: Option<StoreValue>) {
        let restore = match data {
            Some(store) => {
                if self.als_get_store_v20(als) == Some(store) {
                    AlsRestore::Nothing
                } else {
                    self.als_enable_v20(als);
                    let resource = self.execution_async_resource();
                    let stores = self.js_objects.resource_stores_mut();
                    let old = stores.get(resource, als);
                    stores.set(resource, als, Some(store));
                    AlsRestore::ResourceStore(resource, old)
                }
            }
            None if self.storage_is_enabled(als) => {
                self.als_disable_v20(als);
                AlsRestore::Enable
            }
            None => AlsRestore::Nothing,
        };
        self.frames.push(Frame::AlsRun { als, restore });
    }

    /// The `finally` of a v20 `run` or `exit`.
    pub(crate) fn end_als_run_v20(&mut self, als: AlsId, restore: AlsRestore) {
        match restore {
            AlsRestore::ResourceStore(resource, old) => {
                (self.js_objects.resource_stores_mut()).set(resource, als, old)
            }
            AlsRestore::Enable => self.als_enable_v20(als),
            AlsRestore::Nothing | AlsRestore::EnterWith(_) => {}
        }
    }

    /// `storageHook`'s `init(asyncId, type, triggerAsyncId, resource)`:
    /// `const currentResource = executionAsyncResource()`, then each storage
    /// of `storageList` in order `_propagate`s:
    /// `resource[kResourceStore] = currentResource[kResourceStore]`. With
    /// either `undefined` that throws a `TypeError` (`Err`). An unspecified
    /// current resource (freed memory) is read as one without stores: the
    /// ops where the model can tell are refused instead
    /// ([`Self::resource_stores_enabled`]).
    pub(crate) fn storage_hook_init(&mut self, resource: ResourceView) -> Result<(), ()> {
        let current = self.execution_async_resource();
        if current == ResourceView::Undefined || resource == ResourceView::Undefined {
            return Err(());
        }
        let stores = self.js_objects.resource_stores_mut();
        for als in stores.storage_list.clone() {
            let store = stores.get(current, als);
            stores.set(resource, als, store);
        }
        Ok(())
    }

    /// `getStore()` of every enabled storage on v20, in storage order, those
    /// that are not `undefined` (what a tick's callback writes; a storage
    /// not enabled answers `undefined` without reading anything).
    pub(crate) fn stores_seen_v20(&mut self) -> Vec<(AlsId, StoreValue)> {
        let Some(stores) = self.js_objects.resource_stores() else {
            return Vec::new();
        };
        let mut enabled = stores.storage_list.clone();
        if enabled.is_empty() {
            return Vec::new();
        }
        enabled.sort();
        let resource = self.execution_async_resource();
        let Some(stores) = self.js_objects.resource_stores() else {
            return Vec::new();
        };
        (enabled.into_iter())
            .filter_map(|als| stores.get(resource, als).map(|v| (als, v)))
            .collect()
    }

    fn storage_is_enabled(&self, als: AlsId) -> bool {
        (self.js_objects.resource_stores()).is_some_and(|s| s.is_enabled(als))
    }
}
