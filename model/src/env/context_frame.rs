//! `AsyncContextFrame` and the frame-based `AsyncLocalStorage` of Node 26
//! (the default since Node 24): `lib/internal/async_context_frame.js`,
//! `lib/internal/async_local_storage/async_context_frame.js`, and the native
//! side `src/async_context_frame.cc` (`async_context_frame::exchange`).
//!
//! The current frame is V8's continuation-preserved embedder data: a `Map`
//! from `AsyncLocalStorage` instance to store, replaced (never changed in
//! place, but for `disable`) by `enterWith`. Since `disable` deletes a
//! storage from one frame *object*, every holder of that object included, a
//! frame has an identity (the serial of the `enterWith` that made it), and
//! the deletions are kept beside the objects (`JsObjects`). Who saves and puts
//! back the current frame:
//!
//! * `InternalCallbackScope` (`src/api/callback.cc`): its constructor
//!   `prior_context_frame_.Reset(isolate, async_context_frame::exchange(isolate,
//!   context_frame))` after the `can_call_into_js()` check, before
//!   `push_async_context`; its `Close` puts the prior frame back with
//!   `async_context_frame::exchange(isolate, prior_context_frame_.Get(isolate))`
//!   right after `pop_async_context`, under `if (pushed_ids_)` (so also after
//!   a failed callback, and not when the environment is stopping). The
//!   exchange and the restore go through the seam
//!   (`AsyncIdStack::enter_scope` / `leave_scope`, `FrameExchange` /
//!   `FrameRestore`). The public `node::CallbackScope` passes no frame (the
//!   default, an empty `Local`), the public `node::MakeCallback`
//!   `Undefined`, `StartExecution` and `Environment::RunTimers` the
//!   default: JavaScript sees no frame inside. `napi_make_callback`
//!   (`src/node_api.cc`) passes the frame its async context captured at
//!   `napi_async_init` (`napi-async-init R`, kept in [`JsObjects`]).
//! * `process.nextTick` (`lib/internal/process/task_queues.js`): the
//!   `TickObject` constructor captures `AsyncContextFrame.current()`;
//!   `processTicksAndRejections` exchanges it in before `emitBefore` and sets
//!   the prior one back after `emitAfter`.
//! * `AsyncResource` (`lib/async_hooks.js`): the constructor captures the
//!   frame; `runInAsyncScope` exchanges it in after `emitBefore` and, in its
//!   `finally`, sets the prior one back before `hasAsyncIdStack()` /
//!   `emitAfter`. `async-resource R` is that capture for the trace's object
//!   `R`; a `run-in-async-scope` of an `R` never captured is an
//!   `AsyncResource` made right there, which captures the current frame.
//!
//! On v20 (and on Node 26 with `--no-async-context-frame`)
//! `AsyncLocalStorage` is built on async hooks instead (an init hook and
//! `executionAsyncResource()`): node version 20's is
//! [`super::async_local_storage`].

use super::async_local_storage::ResourceStores;
use super::{not_in_family, AlsRestore, AsyncIdStack, Died, Environment, Frame, Refusal};
use crate::vocab::NodeVersion;
use crate::vocab::{
    AlsId, AsyncContext, Observation, Op, OpKind, ResourceId, ResourceView, StoreValue,
};
use std::collections::BTreeMap;

/// An `AsyncContextFrame`: each `AsyncLocalStorage` in it, and its store
/// (`None`: `undefined`). A storage set to `undefined` is left out unless it
/// has a `defaultValue` (`als-default`): without one, `getStore()` answers
/// `undefined` for a storage set to `undefined` and for one not in the frame
/// alike; with one, the second answers the default. `None` is no frame at all (`undefined`, what native scopes
/// exchange in); `Some` is a frame object, which `queueMicrotask` tests for
/// truth even when it holds no store (after `als.exit` or `enterWith` of
/// `undefined`). One pointer, so that the states the explorer stores (a
/// frame in every open scope and queued tick) grow by 8 bytes per frame,
/// not by a map.
// The box is the point: 8 bytes where a `BTreeMap` takes 24.
#[allow(clippy::box_collection)]
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ContextFrame(Option<Box<FrameObject>>);

/// One `AsyncContextFrame` object: its identity and its map.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct FrameObject {
    /// Which `enterWith` made it (0 for a frame made by `with` alone).
    serial: u32,
    /// Each storage in it and its store.
    map: BTreeMap<AlsId, Option<StoreValue>>,
}

impl ContextFrame {
    /// `frame?.has(als) ? frame.get(als)`: the store of `als` in this frame,
    /// `None` when the frame lacks it (deletions by `disable` aside: ask
    /// [`JsObjects::disabled_in`]).
    pub fn lookup(&self, als: AlsId) -> Option<Option<StoreValue>> {
        self.0.as_ref().and_then(|o| o.map.get(&als).copied())
    }

    /// `new AsyncContextFrame(als, data)`, the frame object numbered
    /// `serial`: a copy of this frame, but for the storages `disable`
    /// deleted from it (`deleted`), with `als` set to `data`; `undefined` is
    /// kept only when `keep_undefined` (the storage has a default, which a
    /// frame without it would answer).
    fn copy_with(
        &self,
        als: AlsId,
        data: Option<StoreValue>,
        keep_undefined: bool,
        serial: u32,
        deleted: &[AlsId],
    ) -> ContextFrame {
        let mut map = self.0.as_ref().map(|o| o.map.clone()).unwrap_or_default();
        map.retain(|k, _| !deleted.contains(k));
        if data.is_some() || keep_undefined {
            map.insert(als, data);
        } else {
            map.remove(&als);
        }
        ContextFrame(Some(Box::new(FrameObject { serial, map })))
    }

    /// The frame object's identity, if there is one.
    fn serial(&self) -> Option<u32> {
        self.0.as_ref().map(|o| o.serial)
    }

    /// Each storage in this frame, with or without a store.
    fn storages(&self) -> impl Iterator<Item = AlsId> + '_ {
        self.0.iter().flat_map(|o| o.map.keys().copied())
    }

    /// Whether there is no frame object (`AsyncContextFrame.current()` is
    /// `undefined`).
    pub fn is_undefined(&self) -> bool {
        self.0.is_none()
    }

    /// Whether some storage has a store here.
    pub fn has_stores(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|o| o.map.values().any(Option::is_some))
    }
}

/// The trace's objects, as far as `AsyncContextFrame` goes: the frame each
/// `AsyncResource` captured at construction (`async-resource R`,
/// `this[contextFrameSymbol]`), each `AsyncLocalStorage`'s `defaultValue`
/// (`als-default`, `#defaultValue`), and the N-API async context made on
/// an object (`napi-async-init R`: its ids and the frame it captured). One
/// pointer, `None` while there is nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct JsObjects(Option<Box<Objects>>);

/// What [`JsObjects`] holds once there is something.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Objects {
    /// The frame each `AsyncResource` captured, by its object.
    resource_frames: BTreeMap<ResourceId, ContextFrame>,
    /// The `defaultValue` of each storage made with one.
    defaults: BTreeMap<AlsId, StoreValue>,
    /// The latest N-API async context made on each object.
    async_contexts: BTreeMap<ResourceId, NapiAsyncContext>,
    /// Frame objects made by `enterWith` so far (the next one's serial).
    frames_made: u32,
    /// Each storage `disable` deleted from a frame object, by the object's
    /// serial.
    disabled: std::collections::BTreeSet<(u32, AlsId)>,
    /// v20: `storageList` and the stores kept on resource objects.
    resource_stores: ResourceStores,
}

/// A `v8impl::AsyncContext` (`src/node_api.cc`): what `napi_async_init`
/// keeps for `napi_make_callback`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NapiAsyncContext {
    /// `{async_id_, trigger_async_id_}`.
    pub context: AsyncContext,
    /// `context_frame_`: `async_context_frame::current(isolate)` when it was
    /// made (Node 26).
    pub frame: ContextFrame,
}

impl JsObjects {
    /// The frame `R` captured, if `async-resource R` ran.
    pub fn resource_frame(&self, r: &ResourceId) -> Option<&ContextFrame> {
        self.0.as_ref().and_then(|o| o.resource_frames.get(r))
    }

    /// `R` captures `frame`.
    fn capture(&mut self, r: ResourceId, frame: ContextFrame) {
        let objects = self.0.get_or_insert_with(Default::default);
        objects.resource_frames.insert(r, frame);
    }

    /// `als` is made with `defaultValue: value`.
    fn set_default(&mut self, als: AlsId, value: StoreValue) {
        let objects = self.0.get_or_insert_with(Default::default);
        objects.defaults.insert(als, value);
    }

    /// The `defaultValue` of `als`, if it was made with one.
    pub fn default_of(&self, als: AlsId) -> Option<StoreValue> {
        self.0.as_ref().and_then(|o| o.defaults.get(&als).copied())
    }

    /// The N-API async context last made on `r`, if any.
    pub fn async_context(&self, r: &ResourceId) -> Option<&NapiAsyncContext> {
        self.0.as_ref().and_then(|o| o.async_contexts.get(r))
    }

    /// Each N-API async context's ids, to change in place (the fixpoint
    /// explorer renames the ids `newAsyncId()` drew: `src/canonical.rs`).
    pub fn async_contexts_mut(&mut self) -> impl Iterator<Item = &mut AsyncContext> {
        (self.0.iter_mut()).flat_map(|o| o.async_contexts.values_mut().map(|n| &mut n.context))
    }

    /// `napi_async_init` on `r` made `context`.
    pub(crate) fn set_async_context(&mut self, r: ResourceId, context: NapiAsyncContext) {
        let objects = self.0.get_or_insert_with(Default::default);
        objects.async_contexts.insert(r, context);
    }

    /// The storages `disable` deleted from `frame`'s object.
    pub fn disabled_in(&self, frame: &ContextFrame) -> Vec<AlsId> {
        let (Some(o), Some(serial)) = (self.0.as_ref(), frame.serial()) else {
            return Vec::new();
        };
        let from = (serial, AlsId(0));
        (o.disabled.range(from..))
            .take_while(|(s, _)| *s == serial)
            .map(|&(_, als)| als)
            .collect()
    }

    /// A new frame object's serial.
    fn next_frame_serial(&mut self) -> u32 {
        let objects = self.0.get_or_insert_with(Default::default);
        objects.frames_made += 1;
        objects.frames_made
    }

    /// `disable` deletes `als` from `frame`'s object (none: nothing).
    fn disable_in(&mut self, frame: &ContextFrame, als: AlsId) {
        if let Some(serial) = frame.serial() {
            let objects = self.0.get_or_insert_with(Default::default);
            objects.disabled.insert((serial, als));
        }
    }

    /// v20's `storageList` and resource stores, if anything was stored.
    pub fn resource_stores(&self) -> Option<&ResourceStores> {
        self.0.as_ref().map(|o| &o.resource_stores)
    }

    /// Rename in place each resource a v20 store is kept on (the fixpoint
    /// explorer renames the ids that name tick objects and promises:
    /// `src/canonical.rs`).
    pub fn rename_store_resources(&mut self, rename: &mut dyn FnMut(&mut ResourceView)) {
        if let Some(o) = self.0.as_mut() {
            o.resource_stores.rename_resources(rename);
        }
    }

    /// The same, to change.
    pub(crate) fn resource_stores_mut(&mut self) -> &mut ResourceStores {
        &mut self.0.get_or_insert_with(Default::default).resource_stores
    }

    /// Each storage made with a default.
    fn with_defaults(&self) -> impl Iterator<Item = AlsId> + '_ {
        self.0.iter().flat_map(|o| o.defaults.keys().copied())
    }

    /// Renumber the frame objects by `renumber` (each frame the trace's
    /// objects hold, in object order), then keep only what `disable` deleted
    /// from the objects still held, and count `held` objects made.
    pub(super) fn renumber_frames(&mut self, renumber: &mut Renumbering) {
        let Some(o) = self.0.as_mut() else {
            return;
        };
        for frame in o.resource_frames.values_mut() {
            renumber.frame(frame);
        }
        for context in o.async_contexts.values_mut() {
            renumber.frame(&mut context.frame);
        }
        o.frames_made = renumber.held();
        o.disabled = std::mem::take(&mut o.disabled)
            .into_iter()
            .filter_map(|(serial, als)| renumber.renamed(serial).map(|s| (s, als)))
            .collect();
    }

    /// Frame objects made by `enterWith` so far.
    pub(super) fn frames_made(&self) -> u32 {
        self.0.as_ref().map_or(0, |o| o.frames_made)
    }
}

/// The renumbering of frame objects in order of appearance: the `n`-th
/// distinct serial met becomes `n` (1, 2, ...).
#[derive(Debug, Default)]
pub(super) struct Renumbering {
    /// The old serial of each new one, new serial `i + 1` at index `i`.
    met: Vec<u32>,
}

impl Renumbering {
    /// Renumber the frame object `frame` holds, if any.
    pub(super) fn frame(&mut self, frame: &mut ContextFrame) {
        if let Some(object) = frame.0.as_mut() {
            let old = object.serial;
            object.serial = match self.renamed(old) {
                Some(new) => new,
                None => {
                    self.met.push(old);
                    self.held()
                }
            };
        }
    }

    /// The new serial of the object that was `old`, if it was met.
    fn renamed(&self, old: u32) -> Option<u32> {
        (self.met.iter().position(|&m| m == old)).map(|i| i as u32 + 1)
    }

    /// How many distinct objects were met.
    fn held(&self) -> u32 {
        self.met.len() as u32
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// When an `AsyncLocalStorage` op can happen, beyond what
    /// [`Environment::enabled`] asks of every op (they are JavaScript of
    /// Node 26): the `finally` of `als.run` ends the innermost frame, which
    /// must be its own.
    #[inline]
    pub(super) fn context_frame_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        match op {
            Op::EndAlsRun => {
                self.innermost_is(OpKind::EndAlsRun, |f| matches!(f, Frame::AlsRun { .. }))
            }
            Op::AlsRun { .. }
            | Op::AlsExit(_)
            | Op::AlsEnterWith { .. }
            | Op::AlsGetStore(_)
            | Op::AsyncResource(_)
            | Op::AlsDefault { .. }
            | Op::AlsDisable(_) => Ok(()),
            _ => not_in_family(op),
        }
    }

    /// What an `AsyncLocalStorage` op does: Node 26's, or on node version
    /// 20 the one built on async hooks ([`super::async_local_storage`]).
    #[inline]
    pub(super) fn context_frame_effect(&mut self, op: &Op) -> Result<(), Died> {
        if self.version == NodeVersion::V20 {
            self.async_local_storage_v20(op);
            return Ok(());
        }
        match op {
            Op::AlsRun { als, store } => self.als_run(*als, Some(*store)),
            Op::AlsExit(als) => self.als_run(*als, None),
            Op::EndAlsRun => self.end_als_run(),
            Op::AlsEnterWith { als, store } => self.als_enter_with(*als, Some(*store)),
            Op::AlsGetStore(als) => {
                let value = self.als_get_store(*als);
                self.out.push(Observation::Store { als: *als, value });
            }
            Op::AsyncResource(r) => self.async_resource(*r),
            Op::AlsDefault { als, value } => self.js_objects.set_default(*als, *value),
            Op::AlsDisable(als) => self.als_disable(*als),
            _ => not_in_family(op),
        }
        Ok(())
    }

    /// The same ops on node version 20. `als-default` does nothing there:
    /// v20's constructor takes no options.
    fn async_local_storage_v20(&mut self, op: &Op) {
        match op {
            Op::AlsRun { als, store } => self.als_run_v20(*als, Some(*store)),
            Op::AlsExit(als) => self.als_run_v20(*als, None),
            Op::EndAlsRun => self.end_als_run(),
            Op::AlsEnterWith { als, store } => self.als_enter_with_v20(*als, *store),
            Op::AlsGetStore(als) => {
                let value = self.als_get_store_v20(*als);
                self.out.push(Observation::Store { als: *als, value });
            }
            Op::AlsDisable(als) => self.als_disable_v20(*als),
            Op::AlsDefault { .. } => {}
            _ => not_in_family(op),
        }
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// `als.enterWith(data)`: `AsyncContextFrame.set(new AsyncContextFrame(als, data))`.
    /// A new frame object, the copy of the current one (the `SafeMap`
    /// constructor copies what the object holds now, so a storage `disable`
    /// deleted from it is not copied).
    pub(crate) fn als_enter_with(&mut self, als: AlsId, data: Option<StoreValue>) {
        let has_default = self.js_objects.default_of(als).is_some();
        let deleted = self.js_objects.disabled_in(&self.context_frame);
        let serial = self.js_objects.next_frame_serial();
        *self.context_frame =
            (self.context_frame).copy_with(als, data, has_default, serial, &deleted);
    }

    /// `als.getStore()`: `if (!frame?.has(this)) return this.#defaultValue;
    /// return frame?.get(this)`, with `frame = AsyncContextFrame.current()`
    /// (which lacks a storage `disable` deleted from it).
    pub(crate) fn als_get_store(&self, als: AlsId) -> Option<StoreValue> {
        let deleted = || {
            self.js_objects
                .disabled_in(&self.context_frame)
                .contains(&als)
        };
        match self.context_frame.lookup(als) {
            Some(store) if !deleted() => store,
            _ => self.js_objects.default_of(als),
        }
    }

    /// `als.disable()` (`AsyncContextFrame.disable(this)`:
    /// `getContinuationPreservedEmbedderData()?.disable(store)`, a
    /// `SafeMap.delete` on the current frame object): every holder of that
    /// object (a tick, a microtask, an `AsyncResource`, an N-API async
    /// context, a scope's prior frame) loses `als` with it. No frame: nothing.
    pub(crate) fn als_disable(&mut self, als: AlsId) {
        self.js_objects.disable_in(&self.context_frame, als);
    }

    /// `getStore()` of every storage, in storage order, those that are not
    /// `undefined`: what a tick's callback writes (the node side reads every
    /// storage the program made). A storage absent from the current frame
    /// answers its default, if it has one, else `undefined`.
    pub(crate) fn stores_seen(&mut self) -> Vec<(AlsId, StoreValue)> {
        if self.version == NodeVersion::V20 {
            return self.stores_seen_v20();
        }
        let storages: std::collections::BTreeSet<AlsId> = (self.context_frame.storages())
            .chain(self.js_objects.with_defaults())
            .collect();
        (storages.into_iter())
            .filter_map(|als| self.als_get_store(als).map(|v| (als, v)))
            .collect()
    }

    /// `als.run(data, fn)` up to the call of `fn` (`als.exit(fn)` is
    /// `run(undefined, fn)`): `prior = this.getStore()`; if `prior` is
    /// `data` (`ObjectIs`), just call `fn`; else `enterWith(data)`, and the
    /// `finally` will `enterWith(prior)`.
    pub(crate) fn als_run(&mut self, als: AlsId, data: Option<StoreValue>) {
        let prior = self.als_get_store(als);
        let restore = if prior != data {
            self.als_enter_with(als, data);
            AlsRestore::EnterWith(prior)
        } else {
            AlsRestore::Nothing
        };
        self.frames.push(Frame::AlsRun { als, restore });
    }

    /// The `finally` of the innermost `als.run` or `als.exit`: on Node 26
    /// `this.enterWith(prior)` on whatever frame is current now (a store
    /// entered inside `fn` by another storage stays); on v20
    /// [`Self::end_als_run_v20`]. It does not run once JS is terminated.
    pub(crate) fn end_als_run(&mut self) {
        let Some(Frame::AlsRun { als, restore }) = self.frames.pop() else {
            unreachable!("enabled checked that the innermost frame is an als-run")
        };
        if !self.is_stopping {
            self.als_run_finally(als, restore);
        }
    }

    /// What the `finally` of an `als.run` or `als.exit` puts back.
    pub(crate) fn als_run_finally(&mut self, als: AlsId, restore: AlsRestore) {
        match restore {
            AlsRestore::EnterWith(prior) => self.als_enter_with(als, prior),
            AlsRestore::Nothing => {}
            v20 => self.end_als_run_v20(als, v20),
        }
    }

    /// `new AsyncResource()` for the object `r`, as far as the frame goes:
    /// `this[contextFrameSymbol] = AsyncContextFrame.current()`.
    pub(crate) fn async_resource(&mut self, r: ResourceId) {
        self.js_objects
            .capture(r, ContextFrame::clone(&self.context_frame));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enter_with_copies_the_frame_and_undefined_leaves_the_storage_out() {
        let empty = ContextFrame::default();
        let a = empty.copy_with(AlsId(1), Some(3), false, 1, &[]);
        let b = a.copy_with(AlsId(2), Some(4), false, 2, &[]);
        assert_eq!(
            (a.lookup(AlsId(1)), a.lookup(AlsId(2))),
            (Some(Some(3)), None)
        );
        assert_eq!(
            (b.lookup(AlsId(1)), b.lookup(AlsId(2))),
            (Some(Some(3)), Some(Some(4)))
        );
        // `exit` is `run(undefined)`: the same answers as a frame without it.
        let exited_b = b.copy_with(AlsId(1), None, false, 3, &[]);
        assert_eq!(exited_b.lookup(AlsId(1)), None);
        assert_eq!(exited_b.lookup(AlsId(2)), Some(Some(4)));
        // A storage `disable` deleted from `b` is not copied.
        let copied = b.copy_with(AlsId(3), Some(5), false, 4, &[AlsId(1)]);
        assert_eq!(copied.lookup(AlsId(1)), None);
        assert_eq!(copied.lookup(AlsId(3)), Some(Some(5)));
        assert!(empty.is_undefined() && !empty.has_stores());
        assert!(!a.is_undefined() && a.has_stores());
        // A frame object with no store left is still a frame (truthy).
        let exited = a.copy_with(AlsId(1), None, false, 5, &[]);
        assert!(!exited.is_undefined() && !exited.has_stores());
        // A storage with a default keeps `undefined`: the frame has it.
        let kept = a.copy_with(AlsId(1), None, true, 6, &[]);
        assert_eq!(kept.lookup(AlsId(1)), Some(None));
        assert!(!kept.has_stores());
    }
}

#[cfg(test)]
mod renumbering_tests {
    use crate::vocab::{Observation, Op, Runtime};
    use crate::Eager;

    fn run(env: &mut Eager, ops: &[&str]) -> Vec<Observation> {
        let mut seen = Vec::new();
        for op in ops {
            let op: Op = op.parse().expect("an op");
            seen.extend(env.apply(&op).expect("the op runs"));
        }
        seen
    }

    /// Renumbering answers every op as the state it stands for, merges
    /// states that differ only in the objects dropped, and has teeth: with
    /// the count of frames made one short, the next `enterWith` reuses a
    /// held object's serial, and `disable` reaches that object too.
    #[test]
    fn renumbered_frames_answer_as_before_and_a_reused_serial_is_caught() {
        let mut original = Eager::new();
        // Object 1 is dropped; object 2 is current and held by a tick.
        run(
            &mut original,
            &["als-enter-with A1 1", "als-enter-with A1 2", "next-tick"],
        );
        let mut canonical = original.clone();
        canonical.canonicalise_frame_serials();
        assert_ne!(canonical, original, "object 2 became object 1");
        let mut fewer = Eager::new();
        run(&mut fewer, &["als-enter-with A1 2", "next-tick"]);
        fewer.ops_applied = canonical.ops_applied;
        assert_eq!(canonical, fewer);
        let mut again = canonical.clone();
        again.canonicalise_frame_serials();
        assert_eq!(again, canonical);

        let mut reused = canonical.clone();
        if let Some(objects) = reused.js_objects.0.as_mut() {
            objects.frames_made -= 1;
        }
        let then = [
            "als-enter-with A1 3",
            "als-disable A1",
            "als-get-store A1",
            "close",
        ];
        let expected = run(&mut original, &then);
        let tick_sees_2 = |seen: &[Observation]| {
            (seen.iter()).any(|o| matches!(o, Observation::TickStore { value: 2, .. }))
        };
        assert!(tick_sees_2(&expected), "{expected:?}");
        assert_eq!(run(&mut canonical, &then), expected);
        let wrong = run(&mut reused, &then);
        assert!(!tick_sees_2(&wrong), "{wrong:?}");
    }
}
