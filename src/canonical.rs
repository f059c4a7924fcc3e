//! Canonical states for the fixpoint explorer ([`crate::fixpoint`]): the
//! async ids `newAsyncId()` handed out (`lib/internal/async_hooks.js`,
//! `newAsyncId`: `++async_id_fields[kAsyncIdCounter]`) renamed so that two
//! states that differ only in which fresh numbers they drew are one state
//! (symmetry reduction).
//!
//! What a program can observe of an id is its value compared with the ids
//! it names (the explorer's alphabet names ids up to [`crate::explore::ALPHABET_MAX_ID`])
//! and with other ids, and the order of ids where Node compares them
//! (`trigger_async_id < -1`, the stack's ids against the expected one). So
//! the renaming keeps every id up to the alphabet's largest, `T`, as it is,
//! and maps the ids above `T` present in either side, sorted, onto `T + 1`,
//! `T + 2`, ... (order kept); the counter becomes `T + n` for `n` such ids.
//! The next `newAsyncId()` is then above every id of the state before and
//! after renaming alike, which is all a program can tell of it. While the
//! counter is at most `T`, a fresh id may still coincide with an id the
//! alphabet names, so nothing is renamed. Both sides are renamed by one
//! map; when their counters differ (a side under test that draws ids
//! differently), nothing is renamed.
//!
//! Every place an environment holds an async id is visited
//! ([`visit_env_ids`]): the `async_id_fields` but the counter, the id stack
//! (to its capacity), the resource arrays (tick objects, microtask
//! resources and promises are named by their id), every frame (native
//! scopes and what a tick run or a checkpoint holds, runInAsyncScope,
//! defaultTriggerAsyncIdScope, ticks, microtasks), the tick and microtask
//! queues, the pending rejections, the destroy list, the N-API async
//! contexts (`napi-async-init`), the resources v20 keeps stores on, and
//! the lazy store's
//! chain ([`visit_lazy_ids`]). `tests/explore.rs` checks on generated
//! states that the canonical state answers every op as the original does,
//! ids renamed.
//!
//! Canonical states also forget what nothing can read again
//! ([`forget_stale`]): the stale pairs, repeated jobs and destroy list, and
//! whether the program has an `uncaughtException` listener outside the
//! modes that read it ([`forget_unread_listener`]).

use lazy::{LazyStack, LazyStore};
use model::env::callback_scope::InternalCallbackScope;
use model::env::microtasks::{Checkpoint, Microtask, PromiseIds, RunningMicrotask};
use model::env::resources::NativeSlot;
use model::env::ticks::TickRun;
use model::env::{AlsRestore, AsyncIdStack, Environment, Frame};
use model::vocab::{AsyncId, HookEvent, Observation, RejectionsMode, ResourceView};

/// A visitor of async ids, each by mutable reference.
pub type IdVisitor<'a> = dyn FnMut(&mut AsyncId) + 'a;

fn view(v: &mut ResourceView, f: &mut IdVisitor) {
    match v {
        ResourceView::TickObject(id)
        | ResourceView::Immediate(id)
        | ResourceView::Microtask(id)
        | ResourceView::Promise(id)
        | ResourceView::Timeout(id) => f(id),
        ResourceView::Resource(_)
        | ResourceView::Main
        | ResourceView::TopLevel
        | ResourceView::Process
        | ResourceView::Unspecified
        | ResourceView::Undefined => {}
    }
}

fn slot(s: &mut NativeSlot, f: &mut IdVisitor) {
    match s {
        NativeSlot::Local(v, _) => view(v, f),
        NativeSlot::Global(_) => {}
    }
}

fn pair(p: &mut (AsyncId, AsyncId), f: &mut IdVisitor) {
    f(&mut p.0);
    f(&mut p.1);
}

fn promise(p: &mut PromiseIds, f: &mut IdVisitor) {
    if let Some(p) = p {
        pair(p, f);
    }
}

fn scope<S: AsyncIdStack>(sc: &mut InternalCallbackScope<S>, f: &mut IdVisitor) {
    f(&mut sc.async_context.async_id);
    f(&mut sc.async_context.trigger_async_id);
    slot(&mut sc.resource, f);
    if let Some(t) = &mut sc.trampoline {
        view(&mut t.resource, f);
    }
}

fn timeout_ids(t: &mut model::env::timers::Timeout, f: &mut IdVisitor) {
    f(&mut t.async_id);
    f(&mut t.trigger_async_id);
}

fn tick_run<S: AsyncIdStack>(run: &mut TickRun<S>, f: &mut IdVisitor) {
    match run {
        TickRun::Close(sc) => scope(sc, f),
        TickRun::TickCallback => {}
    }
}

fn frame<S: AsyncIdStack>(fr: &mut Frame<S>, f: &mut IdVisitor) {
    match fr {
        Frame::Native(sc) => scope(sc, f),
        Frame::RunInAsyncScope { async_id, .. } => f(async_id),
        Frame::DefaultTriggerScope {
            old_default_trigger_async_id,
        } => f(old_default_trigger_async_id),
        Frame::AlsRun {
            restore: AlsRestore::ResourceStore(v, _),
            ..
        } => view(v, f),
        Frame::AlsRun { .. } | Frame::Listener => {}
        Frame::Timer { timeout, .. } => timeout_ids(timeout, f),
        Frame::Tick { tick, run, .. } => {
            f(&mut tick.async_id);
            f(&mut tick.trigger_async_id);
            tick_run(run, f);
        }
        Frame::Microtask {
            job, checkpoint, ..
        } => {
            match job {
                RunningMicrotask::Callback { resource } => promise(resource, f),
                RunningMicrotask::Reaction { promise: p } => promise(p, f),
                RunningMicrotask::ModuleBody => {}
            }
            match checkpoint {
                Checkpoint::Close(sc) => scope(sc, f),
                Checkpoint::TickRun(run) => tick_run(run, f),
                Checkpoint::NextTicks => {}
            }
        }
    }
}

/// Visit every async id `env` holds but `kAsyncIdCounter` and what its
/// store holds beyond the id stack (for the lazy store, [`visit_lazy_ids`]).
pub fn visit_env_ids<S: AsyncIdStack>(env: &mut Environment<S>, f: &mut IdVisitor) {
    let ah = &mut env.async_hooks;
    let ids = &mut ah.async_id_fields;
    f(&mut ids.k_execution_async_id);
    f(&mut ids.k_trigger_async_id);
    f(&mut ids.k_default_trigger_async_id);
    for p in &mut ah.async_ids_stack {
        pair(p, f);
    }
    for s in ah.native_execution_async_resources.iter_mut().flatten() {
        slot(s, f);
    }
    let js = &mut ah.js_execution_async_resources;
    for i in 0..js.items().len() {
        if let Some(mut v) = js.items()[i] {
            let before = v;
            view(&mut v, f);
            if v != before {
                js.set(i, Some(v));
            }
        }
    }
    for fr in &mut env.frames {
        frame(fr, f);
    }
    for t in &mut env.ticks.queue {
        f(&mut t.async_id);
        f(&mut t.trigger_async_id);
    }
    for t in &mut env.timers.waiting {
        timeout_ids(t, f);
    }
    for m in &mut env.microtasks.queue {
        match m {
            Microtask::Callback { resource, .. } => promise(resource, f),
            Microtask::Reaction { promise: p, .. } => promise(p, f),
            Microtask::DisablePromiseHook | Microtask::ModuleRejection { .. } => {}
        }
    }
    for p in &mut env.rejections.pending {
        promise(p, f);
    }
    if let Some(p) = &mut env.rejections.reported {
        promise(p, f);
    }
    for p in &mut env.rejections.handled_late {
        promise(p, f);
    }
    for id in &mut env.destroy_async_id_list {
        f(id);
    }
    for c in env.js_objects.async_contexts_mut() {
        f(&mut c.async_id);
        f(&mut c.trigger_async_id);
    }
    env.js_objects.rename_store_resources(&mut |v| view(v, f));
}

/// Forget what no answer reads: the id stack's pairs past `kStackLength`
/// (left by pops and `clearAsyncIdStack()`, overwritten before any read:
/// `AsyncHooks::push_async_context` writes `async_ids_stack_[offset]`
/// before `kStackLength` counts it) become `(0, 0)`, as a new stack's are.
///
/// And two `disablePromiseHookIfNecessary` jobs in a row on the microtask
/// queue are one: the second runs straight after the first, with no JS
/// between, and does what the first did (`Microtasks` in the model: it
/// reads `wantPromiseHook` and clears the installed hooks). Every
/// `disable-hook` queues one, so without this the queue would grow with
/// every enable and disable.
///
/// And the destroy list (`env->destroy_async_id_list()`): the model queues
/// ids there for the destroy hooks, which run from a native immediate the
/// model does not run (`emitDestroyScript` in the model), so no answer
/// reads it; every tick run with a destroy hook would otherwise add an id.
///
/// And whether the program has an `uncaughtException` listener, where
/// nothing reads it ([`forget_unread_listener`]).
pub fn forget_stale<S: AsyncIdStack>(env: &mut Environment<S>) {
    forget_unread_listener(env);
    env.destroy_async_id_list.clear();
    let ah = &mut env.async_hooks;
    let len = ah.fields.k_stack_length as usize;
    for p in ah.async_ids_stack.iter_mut().skip(len) {
        *p = (0, 0);
    }
    let queue = &mut env.microtasks.queue;
    let twice = |q: &std::collections::VecDeque<Microtask>| {
        q.iter().zip(q.iter().skip(1)).any(|(a, b)| {
            matches!(a, Microtask::DisablePromiseHook) && matches!(b, Microtask::DisablePromiseHook)
        })
    };
    if twice(queue) {
        let mut kept = std::collections::VecDeque::with_capacity(queue.len());
        for m in queue.drain(..) {
            let repeat = matches!(m, Microtask::DisablePromiseHook)
                && matches!(kept.back(), Some(Microtask::DisablePromiseHook));
            if !repeat {
                kept.push_back(m);
            }
        }
        *queue = kept;
    }
}

/// Forget whether the program has an `uncaughtException` listener
/// (`Rejections::uncaught_listener`: the header's, then what the last
/// `uncaught-exception` or ES module throw said) where nothing can read it
/// again. Only two places read it: a rejection reported to
/// `triggerUncaughtException(err, true)`, which happens in `strict` mode,
/// or in `throw` mode without an `unhandledRejection` listener
/// (`unhandledRejectionsMode`, `lib/internal/process/promises.js`), and an
/// ES module's rejected evaluation, which only an `entry-module` program
/// has. The mode, the listener and the entry are the header's, fixed once
/// the program starts; without them the flag is written and never read,
/// and two states that differ only in it answer every op alike. At
/// nesting 1 it was a third of the states (issue 57, `docs/performance.md`
/// "Where the nesting-1 space grew").
pub fn forget_unread_listener<S: AsyncIdStack>(env: &mut Environment<S>) {
    let r = &env.rejections;
    let read = env.microtasks.module_entry
        || match r.mode {
            RejectionsMode::Strict => true,
            RejectionsMode::Throw => !r.listener,
            RejectionsMode::None | RejectionsMode::Warn | RejectionsMode::WarnWithErrorCode => {
                false
            }
        };
    if !read {
        env.rejections.uncaught_listener = false;
    }
}

/// Visit every async id of the lazy store's chain: each lazy scope's own
/// id, the pair it saved, its resource.
pub fn visit_lazy_ids(store: &mut LazyStack, f: &mut IdVisitor) {
    for link in &mut store.lazy_scopes {
        f(&mut link.async_id);
        pair(&mut link.saved, f);
        slot(&mut link.resource, f);
    }
}

/// Visit every async id an observation names.
pub fn visit_observation_ids(o: &mut Observation, f: &mut IdVisitor) {
    match o {
        Observation::ExecutionAsyncId(id)
        | Observation::TriggerAsyncId(id)
        | Observation::DefaultTriggerAsyncId(id)
        | Observation::NewAsyncId(id) => f(id),
        Observation::ExecutionAsyncResource(v) => view(v, f),
        Observation::Hook {
            event,
            execution_async_id,
            trigger_async_id,
            ..
        } => {
            match event {
                HookEvent::Init {
                    async_id,
                    trigger_async_id,
                    resource,
                    ..
                } => {
                    f(async_id);
                    f(trigger_async_id);
                    view(resource, f);
                }
                HookEvent::Before(id)
                | HookEvent::After(id)
                | HookEvent::Destroy(id)
                | HookEvent::PromiseResolve(id) => f(id),
            }
            f(execution_async_id);
            f(trigger_async_id);
        }
        Observation::UnhandledRejection {
            execution_async_id,
            trigger_async_id,
        }
        | Observation::RejectionHandled {
            execution_async_id,
            trigger_async_id,
        }
        | Observation::Microtask {
            execution_async_id,
            trigger_async_id,
            ..
        } => {
            f(execution_async_id);
            f(trigger_async_id);
        }
        Observation::Tick {
            async_id,
            execution_async_id,
            trigger_async_id,
            resource,
        } => {
            f(async_id);
            f(execution_async_id);
            f(trigger_async_id);
            if let Some(v) = resource {
                view(v, f);
            }
        }
        Observation::Timeout {
            async_id,
            execution_async_id,
            trigger_async_id,
        } => {
            f(async_id);
            f(execution_async_id);
            f(trigger_async_id);
        }
        Observation::TickStore { async_id, .. } | Observation::TimeoutStore { async_id, .. } => {
            f(async_id)
        }
        Observation::CorruptedStack {
            actual, expected, ..
        } => {
            f(actual);
            f(expected);
        }
        Observation::Store { .. }
        | Observation::ExceptionLost
        | Observation::CheckFailed(_)
        | Observation::Exit(_)
        | Observation::Aborted(_) => {}
    }
}

/// A side whose async ids can be renamed: its counter and a visitor of the
/// rest.
pub trait RenameIds {
    /// `kAsyncIdCounter`, or `None` when this side cannot be renamed (then
    /// no state of the pair is).
    fn id_counter(&self) -> Option<AsyncId>;
    /// Set `kAsyncIdCounter`.
    fn set_id_counter(&mut self, counter: AsyncId);
    /// Visit every other async id the side holds.
    fn visit_ids(&mut self, f: &mut IdVisitor);
    /// [`forget_stale`] on this side.
    fn forget_stale(&mut self);
}

/// The renaming [`canonicalise_ids`] applied: the ids above `max_fixed`
/// present in the state, sorted, onto `max_fixed + 1, ...`, and the ids
/// above the old counter (the fresh ones to come) shifted with it.
#[derive(Clone, Debug)]
pub struct Renaming {
    above: Vec<AsyncId>,
    max_fixed: AsyncId,
    old_counter: AsyncId,
    new_counter: AsyncId,
}

impl Renaming {
    /// The new name of `id`.
    pub fn apply(&self, id: AsyncId) -> AsyncId {
        if id <= self.max_fixed {
            return id;
        }
        match self.above.binary_search(&id) {
            Ok(i) => self.max_fixed + 1 + i as AsyncId,
            // Not in the state: a fresh id drawn after it (or one no longer
            // held, which no op can name again): shifted with the counter.
            Err(_) => id - self.old_counter + self.new_counter,
        }
    }
}

/// Rename the ids of both sides canonically (see the module's doc); the
/// renaming applied, if any.
pub fn canonicalise_ids(
    eager: &mut dyn RenameIds,
    lazy: &mut dyn RenameIds,
    max_fixed: AsyncId,
) -> Option<Renaming> {
    eager.forget_stale();
    lazy.forget_stale();
    let counter = eager.id_counter()?;
    if lazy.id_counter()? != counter || counter <= max_fixed {
        return None;
    }
    let mut above = Vec::new();
    let mut collect = |id: &mut AsyncId| {
        if *id > max_fixed {
            above.push(*id);
        }
    };
    eager.visit_ids(&mut collect);
    lazy.visit_ids(&mut collect);
    above.sort_unstable();
    above.dedup();
    let renaming = Renaming {
        new_counter: max_fixed + above.len() as AsyncId,
        above,
        max_fixed,
        old_counter: counter,
    };
    let mut rename = |id: &mut AsyncId| *id = renaming.apply(*id);
    eager.visit_ids(&mut rename);
    lazy.visit_ids(&mut rename);
    eager.set_id_counter(renaming.new_counter);
    lazy.set_id_counter(renaming.new_counter);
    Some(renaming)
}

/// A store's async ids beyond the id stack, for [`RenameIds`].
pub trait StoreIds {
    /// Visit every async id the store holds beyond the id stack.
    fn visit_store_ids(&mut self, f: &mut IdVisitor);
}

/// The eager store holds nothing but the id stack.
impl StoreIds for model::eager::EagerStack {
    fn visit_store_ids(&mut self, _: &mut IdVisitor) {}
}

/// The pull request's store: its chain ([`visit_lazy_ids`]).
impl StoreIds for LazyStack {
    fn visit_store_ids(&mut self, f: &mut IdVisitor) {
        visit_lazy_ids(self, f);
    }
}

/// A mutant's store: the chain of the lazy store it wraps.
impl StoreIds for lazy::mutant::Mutated {
    fn visit_store_ids(&mut self, f: &mut IdVisitor) {
        visit_lazy_ids(self.lazy_mut(), f);
    }
}

/// An environment over any store whose ids can be visited.
impl<S: AsyncIdStack + StoreIds> RenameIds for Environment<S> {
    fn id_counter(&self) -> Option<AsyncId> {
        Some(self.async_hooks.async_id_fields.k_async_id_counter)
    }

    fn set_id_counter(&mut self, counter: AsyncId) {
        self.async_hooks.async_id_fields.k_async_id_counter = counter;
    }

    fn visit_ids(&mut self, f: &mut IdVisitor) {
        visit_env_ids(self, f);
        self.async_hooks.store.visit_store_ids(f);
    }

    fn forget_stale(&mut self) {
        forget_stale(self);
    }
}
