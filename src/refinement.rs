//! The refinement check: an abstraction function from the lazy state to the
//! eager one. Each lazy scope is put back where eager Node would have pushed
//! it: above the `stack_position` stack entries below it, its saved pair as
//! the stack entry and its resource in the native array. After every op the
//! abstraction of the lazy state must equal the eager state (minus the cost
//! counters and the id stack's spare capacity), which catches a divergence
//! before it becomes observable. `docs/refinement.md` gives the argument.

use lazy::LazyStore;
use model::env::callback_scope::InternalCallbackScope;
use model::env::context_frame::ContextFrame;
use model::env::microtasks::{Checkpoint, RunningMicrotask};
use model::env::resources::{Heap, NativeSlot};
use model::env::ticks::TickRun;
use model::env::{AlsRestore, AsyncHooks, AsyncIdStack, Environment, Frame};
use model::vocab::{AlsId, AsyncContext, AsyncId, HookCallbacks, HookId, ResourceView, ScopeKind};
use model::Eager;
use std::collections::BTreeMap;

/// A frame of the call stack, side-independent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AbstractFrame {
    /// An open native scope.
    Native {
        /// How it was opened.
        kind: ScopeKind,
        /// Its ids.
        context: AsyncContext,
        /// Its resource.
        resource: NativeSlot,
        /// kSkipAsyncHooks.
        skip_hooks: bool,
        /// kSkipTaskQueues.
        skip_task_queues: bool,
        /// MarkAsFailed was called.
        failed: bool,
        /// It entered its context (pushed or linked).
        pushed_ids: bool,
        /// The MakeCallback trampoline runs around it (its resource).
        trampoline: Option<ResourceView>,
        /// The main script's scope.
        main_script: bool,
        /// RunTimers' scope.
        run_timers: bool,
        /// Its callback threw.
        threw: bool,
        /// The `AsyncContextFrame` its close puts back.
        prior_context_frame: ContextFrame,
    },
    /// Inside runInAsyncScope (the frame its `finally` sets back).
    RunInAsyncScope(AsyncId, ContextFrame),
    /// Inside defaultTriggerAsyncIdScope (the old default).
    DefaultTriggerScope(AsyncId),
    /// Inside `als.run` / `als.exit`: the storage, what the `finally` puts
    /// back.
    AlsRun(AlsId, AlsRestore),
    /// Inside a tick's callback: the tick (id, trigger), the closing scope
    /// that called the run, if `Close` did, and the prior frame.
    Tick(AsyncId, AsyncId, Option<Box<AbstractFrame>>, ContextFrame),
    /// Inside a microtask's callback: what is left of the job, where its
    /// checkpoint goes on (the closing scope, if a `Close` ran the
    /// checkpoint or the tick run that did), and the prior frame.
    Microtask(
        RunningMicrotask,
        AbstractCheckpoint,
        Option<Box<AbstractFrame>>,
        ContextFrame,
    ),
    /// Inside the `uncaughtException` listener.
    Listener,
    /// Inside a Timeout's callback: the Timeout, how many due are left, and
    /// the prior frame.
    Timer(model::env::timers::Timeout, u32, ContextFrame),
}

/// Who performed a microtask checkpoint, without the scope it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AbstractCheckpoint {
    /// The outermost `Close`.
    Close,
    /// The end of a tick run.
    TickRun,
    /// `runNextTicks`.
    NextTicks,
}

/// A queued tick: id, trigger, whether it asks for its resource, its
/// frame, and whether it has a body.
pub type AbstractTick = (AsyncId, AsyncId, bool, ContextFrame, bool);

/// Eager Node's state, as both sides can be mapped to it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Abstract {
    /// kInit, kBefore, kAfter, kDestroy, kPromiseResolve, kTotals, kCheck,
    /// kUsesExecutionAsyncResource.
    pub counts: [u32; 8],
    /// Execution, trigger, counter, default trigger.
    pub ids: [AsyncId; 4],
    /// The eager stack: the saved pair of every entry, outermost first.
    pub stack: Vec<(AsyncId, AsyncId)>,
    /// `native_execution_async_resources_`, trailing empties dropped.
    pub native: Vec<Option<NativeSlot>>,
    /// `execution_async_resources`.
    pub js: Vec<Option<ResourceView>>,
    /// The call stack.
    pub frames: Vec<AbstractFrame>,
    /// Hooks created; hooks active in order; the trampoline installed.
    pub hooks: (BTreeMap<HookId, HookCallbacks>, Vec<HookId>, bool),
    /// Queued ticks and kHasTickScheduled.
    pub ticks: (Vec<AbstractTick>, bool),
    /// The current `AsyncContextFrame`, the trace's objects as far as frames
    /// go (the frame each AsyncResource captured), and the node version.
    pub context: (
        ContextFrame,
        model::env::context_frame::JsObjects,
        model::vocab::NodeVersion,
    ),
    /// Open native scopes.
    pub depth: u32,
    /// The microtask queue and the promise hooks.
    pub microtasks: model::env::microtasks::Microtasks,
    /// Unhandled rejections waiting, and kHasRejectionToWarn.
    pub rejections: model::env::rejections::Rejections,
    /// The timer lists.
    pub timers: model::env::timers::Timers,
    /// The heap (reset Globals, open scopes), stopping, destroy queue, exited.
    pub env: (Heap, bool, Vec<AsyncId>, bool),
}

fn trim(mut v: Vec<Option<NativeSlot>>) -> Vec<Option<NativeSlot>> {
    while v.last() == Some(&None) {
        v.pop();
    }
    v
}

fn abstract_frame<S: AsyncIdStack>(frame: &Frame<S>) -> AbstractFrame {
    match frame {
        Frame::Native(sc) => abstract_scope(sc),
        Frame::RunInAsyncScope {
            async_id,
            prior_context_frame,
        } => AbstractFrame::RunInAsyncScope(*async_id, prior_context_frame.clone()),
        Frame::AlsRun { als, restore } => AbstractFrame::AlsRun(*als, *restore),
        Frame::DefaultTriggerScope {
            old_default_trigger_async_id,
        } => AbstractFrame::DefaultTriggerScope(*old_default_trigger_async_id),
        Frame::Tick {
            tick,
            run,
            prior_context_frame,
        } => AbstractFrame::Tick(
            tick.async_id,
            tick.trigger_async_id,
            match run {
                TickRun::Close(sc) => Some(Box::new(abstract_scope(sc))),
                TickRun::TickCallback => None,
            },
            prior_context_frame.clone(),
        ),
        Frame::Microtask {
            job,
            checkpoint,
            prior_context_frame,
        } => {
            let (site, scope) = match checkpoint {
                Checkpoint::Close(sc) => (AbstractCheckpoint::Close, Some(sc)),
                Checkpoint::TickRun(TickRun::Close(sc)) => (AbstractCheckpoint::TickRun, Some(sc)),
                Checkpoint::TickRun(TickRun::TickCallback) => (AbstractCheckpoint::TickRun, None),
                Checkpoint::NextTicks => (AbstractCheckpoint::NextTicks, None),
            };
            AbstractFrame::Microtask(
                job.clone(),
                site,
                scope.map(|sc| Box::new(abstract_scope(sc))),
                prior_context_frame.clone(),
            )
        }
        Frame::Listener => AbstractFrame::Listener,
        Frame::Timer {
            timeout,
            due_after,
            prior_context_frame,
        } => AbstractFrame::Timer(timeout.clone(), *due_after, prior_context_frame.clone()),
    }
}

fn abstract_scope<S: AsyncIdStack>(sc: &InternalCallbackScope<S>) -> AbstractFrame {
    AbstractFrame::Native {
        kind: sc.kind,
        context: sc.async_context,
        resource: sc.resource,
        skip_hooks: sc.skip_hooks,
        skip_task_queues: sc.skip_task_queues,
        failed: sc.failed,
        pushed_ids: sc.pushed_ids,
        trampoline: sc.trampoline.map(|t| t.resource),
        main_script: sc.main_script,
        run_timers: sc.run_timers,
        threw: sc.threw,
        prior_context_frame: sc.prior_context_frame.clone(),
    }
}

/// The fields Node's unchanged code keeps, the same on either store, with
/// the eager stack and the native resource array as the store stands for them.
fn abstract_env<S: AsyncIdStack>(
    s: &Environment<S>,
    stack: Vec<(AsyncId, AsyncId)>,
    native: Vec<Option<NativeSlot>>,
) -> Abstract {
    let ah = &s.async_hooks;
    let f = &ah.fields;
    let ids = &ah.async_id_fields;
    Abstract {
        counts: [
            f.k_init,
            f.k_before,
            f.k_after,
            f.k_destroy,
            f.k_promise_resolve,
            f.k_totals,
            f.k_check,
            f.k_uses_execution_async_resource,
        ],
        ids: [
            ids.k_execution_async_id,
            ids.k_trigger_async_id,
            ids.k_async_id_counter,
            ids.k_default_trigger_async_id,
        ],
        stack,
        native: trim(native),
        js: ah.js_execution_async_resources.items().to_vec(),
        frames: s.frames.iter().map(abstract_frame).collect(),
        hooks: (
            s.hooks.created.clone(),
            s.hooks.active.clone(),
            s.hooks.trampoline_installed,
        ),
        ticks: (
            s.ticks
                .queue
                .iter()
                .map(|t| {
                    (
                        t.async_id,
                        t.trigger_async_id,
                        t.query_resource,
                        t.context_frame.clone(),
                        t.body,
                    )
                })
                .collect(),
            s.ticks.has_tick_scheduled,
        ),
        context: (
            (*s.context_frame).clone(),
            (*s.js_objects).clone(),
            s.version,
        ),
        depth: s.async_callback_scope_depth,
        microtasks: (*s.microtasks).clone(),
        rejections: (*s.rejections).clone(),
        timers: (*s.timers).clone(),
        env: (
            (*s.heap).clone(),
            s.is_stopping,
            (*s.destroy_async_id_list).clone(),
            s.exited,
        ),
    }
}

fn natives<S>(ah: &AsyncHooks<S>) -> Vec<Option<NativeSlot>> {
    (*ah.native_execution_async_resources).clone()
}

/// The eager state itself, in the common shape.
pub fn abstract_eager(e: &Eager) -> Abstract {
    let ah = &e.async_hooks;
    let len = ah.fields.k_stack_length as usize;
    abstract_env(e, ah.async_ids_stack[..len].to_vec(), natives(ah))
}

/// The abstraction function: the eager state the lazy state stands for.
pub fn abstract_lazy<S: LazyStore>(l: &Environment<S>) -> Abstract {
    let ah = &l.async_hooks;
    let len = ah.fields.k_stack_length as usize;
    // Merge: the lazy scopes linked at stack position p sit above the p-th
    // stack entry, in chain order.
    let mut stack = Vec::with_capacity(ah.depth());
    let mut native = natives(ah);
    let mut chain = ah.store.lazy().lazy_scopes.iter().peekable();
    for position in 0..=len {
        while let Some(link) = chain.next_if(|link| link.stack_position as usize == position) {
            let index = stack.len();
            if native.len() <= index {
                native.resize(index + 1, None);
            }
            native[index] = Some(link.resource);
            stack.push(link.saved);
        }
        if position < len {
            stack.push(ah.async_ids_stack[position]);
        }
    }
    abstract_env(l, stack, native)
}

/// The first field where the two abstract states differ, by name.
pub fn first_difference(e: &Abstract, l: &Abstract) -> Option<String> {
    if e.env.3 && l.env.3 {
        // Both processes ended: there is no Node state left to stand for.
        return None;
    }
    macro_rules! cmp {
        ($($f:ident),*) => {
            $(if e.$f != l.$f {
                return Some(format!("{}: eager {:?}, lazy (abstracted) {:?}", stringify!($f), e.$f, l.$f));
            })*
        };
    }
    cmp!(
        counts, ids, stack, native, js, frames, hooks, ticks, context, depth, microtasks,
        rejections, timers, env
    );
    None
}

/// Check the refinement relation for a pair of states: [`holds`] decides
/// (comparing only what changed since its last success on this pair), and
/// only when it fails are the two abstract states built to name the first
/// field that differs.
pub fn verify<S: LazyStore>(e: &mut Eager, l: &mut Environment<S>) -> Result<(), String> {
    if holds(e, l) {
        return Ok(());
    }
    explain(e, l)
}

/// [`verify`] with every field compared ([`holds_full`]): for a pair whose
/// marks cannot be cleared (shared borrows) or that was not checked after
/// every op.
pub fn verify_full<S: LazyStore>(e: &Eager, l: &Environment<S>) -> Result<(), String> {
    if holds_full(e, l) {
        return Ok(());
    }
    explain(e, l)
}

fn explain<S: LazyStore>(e: &Eager, l: &Environment<S>) -> Result<(), String> {
    match first_difference(&abstract_eager(e), &abstract_lazy(l)) {
        None => Err(
            "the fast refinement check and the abstraction disagree (a bug of the check)"
                .to_string(),
        ),
        Some(d) => Err(d),
    }
}

/// Whether `abstract_eager(e) == abstract_lazy(l)`, decided field by field
/// on the states themselves, without building either abstraction (no
/// allocation): the lazy chain is merged into the stack on the fly, as
/// [`abstract_lazy`] merges it. Every field is compared; [`holds`] decides
/// the same, skipping what has not changed. `tests/refinement.rs` checks
/// that this agrees with the abstraction, on passing runs and on mutants
/// that break the relation, and that [`holds`] agrees with this.
pub fn holds_full<S: LazyStore>(e: &Eager, l: &Environment<S>) -> bool {
    if e.exited && l.exited {
        // Both processes ended (an abort, a fatal exception): nothing of
        // either state is observable any more, so there is nothing to stand
        // for; what they had done before dying is compared op by op.
        return true;
    }
    same_scalars(e, l)
        && stack_and_native_agree(&e.async_hooks, &l.async_hooks)
        && same_js_resources(e, l)
        && same_frames(e, l)
        && same_hooks(e, l)
        && same_ticks(e, l)
        && e.context_frame == l.context_frame
        && e.js_objects == l.js_objects
        && e.microtasks == l.microtasks
        && e.rejections == l.rejections
        && e.timers == l.timers
        && e.heap == l.heap
        && e.destroy_async_id_list == l.destroy_async_id_list
}

/// [`holds_full`], comparing a field only if it may have changed since this
/// function last found it equal on this pair: each compared
/// field of the state is a [`model::env::Tracked`], marked by any mutable
/// access to it; a group of fields is compared when a field of it is marked
/// on either side, and its marks are cleared once it compares equal. A
/// group unmarked on both sides holds the values it held when it last
/// compared equal (nothing wrote to it since), so it is still equal. The
/// marks start set (a new or cloned state), so the first call on a pair
/// compares everything; a call may be skipped (marks only accumulate), and
/// a failed call leaves the groups it did not find equal marked. The fields
/// that are plain numbers and flags are compared every time. The marks of
/// a side mean "unchanged since found equal to its partner": a state is
/// checked against the partner it was made (or cloned) with, never against
/// another one (`Pair` keeps the two together). `tests/refinement.rs` shows
/// it deciding as [`holds_full`] does at every op, and failing at the same
/// op as [`holds_full`] on every mutant.
pub fn holds<S: LazyStore>(e: &mut Eager, l: &mut Environment<S>) -> bool {
    if e.exited && l.exited {
        // As in `holds_full`; the marks stay as they are.
        return true;
    }
    if !same_scalars(e, l) {
        return false;
    }
    // Compare the group if any of its fields is marked; clear the marks
    // only when it compared equal.
    macro_rules! group {
        ($same:expr, $($field:expr),+) => {
            if $($field.is_dirty())||+ {
                if !$same {
                    return false;
                }
                $($field.mark_compared();)+
            }
        };
    }
    {
        let (ea, la) = (&mut e.async_hooks, &mut l.async_hooks);
        // The eager store is not part of the relation (abstract_eager does
        // not read it); of the lazy one only the chain is.
        let chain_dirty = la.store.lazy().lazy_scopes.is_dirty();
        if ea.fields.is_dirty()
            || ea.async_ids_stack.is_dirty()
            || ea.native_execution_async_resources.is_dirty()
            || la.fields.is_dirty()
            || la.async_ids_stack.is_dirty()
            || la.native_execution_async_resources.is_dirty()
            || chain_dirty
        {
            let merged = merged_links(la);
            let from = stack_untouched_below(ea, la, merged);
            if !stack_and_native_agree_from(ea, la, merged, from) {
                return false;
            }
            let (e_len, l_len) = (ea.fields.k_stack_length, la.fields.k_stack_length);
            ea.fields.mark_compared();
            ea.async_ids_stack.mark_compared_up_to(e_len as usize);
            ea.native_execution_async_resources.mark_compared();
            la.fields.mark_compared();
            la.async_ids_stack.mark_compared_up_to(l_len as usize);
            la.native_execution_async_resources.mark_compared();
            (la.store.lazy_mut().lazy_scopes).mark_compared_up_to(merged);
        }
    }
    group!(
        same_js_resources(e, l),
        e.async_hooks.js_execution_async_resources,
        l.async_hooks.js_execution_async_resources
    );
    if e.frames.is_dirty() || l.frames.is_dirty() {
        // The frames below the first either side touched were equal when
        // last compared and have not changed since: only the rest is read.
        let from = e.frames.untouched().min(l.frames.untouched());
        if !same_frames_from(e, l, from) {
            return false;
        }
        e.frames.mark_compared();
        l.frames.mark_compared();
    }
    group!(same_hooks(e, l), e.hooks, l.hooks);
    group!(same_ticks(e, l), e.ticks, l.ticks);
    group!(
        e.context_frame == l.context_frame,
        e.context_frame,
        l.context_frame
    );
    group!(e.js_objects == l.js_objects, e.js_objects, l.js_objects);
    group!(e.microtasks == l.microtasks, e.microtasks, l.microtasks);
    group!(e.rejections == l.rejections, e.rejections, l.rejections);
    group!(e.timers == l.timers, e.timers, l.timers);
    group!(e.heap == l.heap, e.heap, l.heap);
    group!(
        e.destroy_async_id_list == l.destroy_async_id_list,
        e.destroy_async_id_list,
        l.destroy_async_id_list
    );
    true
}

/// The counts (every field but kStackLength), the ids and the environment's
/// plain flags: no [`model::env::Tracked`] field.
fn same_scalars<S: LazyStore>(e: &Eager, l: &Environment<S>) -> bool {
    let (ea, la) = (&e.async_hooks, &l.async_hooks);
    let (ef, lf) = (&ea.fields, &la.fields);
    ef.k_init == lf.k_init
        && ef.k_before == lf.k_before
        && ef.k_after == lf.k_after
        && ef.k_destroy == lf.k_destroy
        && ef.k_promise_resolve == lf.k_promise_resolve
        && ef.k_totals == lf.k_totals
        && ef.k_check == lf.k_check
        && ef.k_uses_execution_async_resource == lf.k_uses_execution_async_resource
        && ea.async_id_fields == la.async_id_fields
        && e.version == l.version
        && e.async_callback_scope_depth == l.async_callback_scope_depth
        && e.is_stopping == l.is_stopping
        && e.exited == l.exited
}

fn same_js_resources<S: LazyStore>(e: &Eager, l: &Environment<S>) -> bool {
    e.async_hooks.js_execution_async_resources.items()
        == l.async_hooks.js_execution_async_resources.items()
}

fn same_frames<S: LazyStore>(e: &Eager, l: &Environment<S>) -> bool {
    same_frames_from(e, l, 0)
}

/// The lengths, and the frames from index `from` on.
fn same_frames_from<S: LazyStore>(e: &Eager, l: &Environment<S>, from: usize) -> bool {
    e.frames.len() == l.frames.len()
        && e.frames[from..]
            .iter()
            .zip(&l.frames[from..])
            .all(|(a, b)| same_frame(a, b))
}

fn same_hooks<S: LazyStore>(e: &Eager, l: &Environment<S>) -> bool {
    e.hooks.created == l.hooks.created
        && e.hooks.active == l.hooks.active
        && e.hooks.trampoline_installed == l.hooks.trampoline_installed
}

fn same_ticks<S: LazyStore>(e: &Eager, l: &Environment<S>) -> bool {
    e.ticks.has_tick_scheduled == l.ticks.has_tick_scheduled
        && e.ticks.queue.len() == l.ticks.queue.len()
        && e.ticks.queue.iter().zip(&l.ticks.queue).all(|(a, b)| {
            (
                a.async_id,
                a.trigger_async_id,
                a.query_resource,
                &a.context_frame,
                a.body,
            ) == (
                b.async_id,
                b.trigger_async_id,
                b.query_resource,
                &b.context_frame,
                b.body,
            )
        })
}

/// Whether `abstract_frame(a) == abstract_frame(b)`, compared in place.
fn same_frame<E: AsyncIdStack, S: AsyncIdStack>(a: &Frame<E>, b: &Frame<S>) -> bool {
    use Frame::*;
    match (a, b) {
        (Native(x), Native(y)) => same_scope(x, y),
        (
            RunInAsyncScope {
                async_id: i,
                prior_context_frame: p,
            },
            RunInAsyncScope {
                async_id: j,
                prior_context_frame: q,
            },
        ) => (i, p) == (j, q),
        (
            DefaultTriggerScope {
                old_default_trigger_async_id: i,
            },
            DefaultTriggerScope {
                old_default_trigger_async_id: j,
            },
        ) => i == j,
        (
            AlsRun { als, restore },
            AlsRun {
                als: a2,
                restore: r2,
            },
        ) => (als, restore) == (a2, r2),
        (
            Tick {
                tick: t,
                run: r,
                prior_context_frame: p,
            },
            Tick {
                tick: u,
                run: s,
                prior_context_frame: q,
            },
        ) => {
            (t.async_id, t.trigger_async_id, p) == (u.async_id, u.trigger_async_id, q)
                && same_tick_run(r, s)
        }
        (
            Microtask {
                job: j,
                checkpoint: c,
                prior_context_frame: p,
            },
            Microtask {
                job: k,
                checkpoint: d,
                prior_context_frame: q,
            },
        ) => {
            (j, p) == (k, q)
                && match (c, d) {
                    (Checkpoint::Close(x), Checkpoint::Close(y)) => same_scope(x, y),
                    (Checkpoint::TickRun(r), Checkpoint::TickRun(s)) => same_tick_run(r, s),
                    (Checkpoint::NextTicks, Checkpoint::NextTicks) => true,
                    _ => false,
                }
        }
        (Listener, Listener) => true,
        (
            Timer {
                timeout: t,
                due_after: n,
                prior_context_frame: p,
            },
            Timer {
                timeout: u,
                due_after: m,
                prior_context_frame: q,
            },
        ) => (t, n, p) == (u, m, q),
        _ => false,
    }
}

fn same_tick_run<E: AsyncIdStack, S: AsyncIdStack>(a: &TickRun<E>, b: &TickRun<S>) -> bool {
    match (a, b) {
        (TickRun::Close(x), TickRun::Close(y)) => same_scope(x, y),
        (TickRun::TickCallback, TickRun::TickCallback) => true,
        _ => false,
    }
}

/// Whether `abstract_scope(a) == abstract_scope(b)`, compared in place.
fn same_scope<E: AsyncIdStack, S: AsyncIdStack>(
    a: &InternalCallbackScope<E>,
    b: &InternalCallbackScope<S>,
) -> bool {
    let trampoline = |t: &Option<model::env::callback_scope::Trampoline>| t.map(|t| t.resource);
    (
        a.kind,
        a.async_context,
        a.resource,
        trampoline(&a.trampoline),
    ) == (
        b.kind,
        b.async_context,
        b.resource,
        trampoline(&b.trampoline),
    ) && (a.skip_hooks, a.skip_task_queues, a.failed, a.pushed_ids)
        == (b.skip_hooks, b.skip_task_queues, b.failed, b.pushed_ids)
        && (a.main_script, a.run_timers, a.threw) == (b.main_script, b.run_timers, b.threw)
        && a.prior_context_frame == b.prior_context_frame
}

/// The links of the chain [`abstract_lazy`] merges: in chain order while
/// their positions do not go down and stay within the stack (it never
/// takes a link past one it cannot place).
fn merged_links<S: LazyStore>(la: &AsyncHooks<S>) -> usize {
    let l_len = la.fields.k_stack_length as usize;
    let mut last = 0;
    (la.store.lazy().lazy_scopes.iter())
        .take_while(|link| {
            let at = link.stack_position as usize;
            let placed = at >= last && at <= l_len;
            last = at;
            placed
        })
        .count()
}

/// A merged stack index below which every entry and native resource of
/// both sides is what it was when the stack group was last found equal
/// (the marks of [`model::env::TrackedVec`]), so that the entries below it
/// need no comparison. Eager: below the untouched prefixes of its stack
/// (marked up to `kStackLength`) and of its native array (if it was
/// reached at all), and below its length. Lazy: below the untouched native
/// prefix (likewise), below the merged index
/// of the first stack entry past the untouched prefix of its stack, and,
/// if a link of the chain was touched (or one unplaced at the last
/// comparison may be placed now), below the merged index just after the
/// last untouched link: the first touched link, the one it replaced, or a
/// link placed since, cannot have been placed lower than that (placed
/// positions do not go down), so below it the merged order is the one of
/// the last comparison. 0 when the last untouched link is the first.
/// `merged` is [`merged_links`].
fn stack_untouched_below<E, S: LazyStore>(
    ea: &AsyncHooks<E>,
    la: &AsyncHooks<S>,
    merged: usize,
) -> usize {
    // A native array no access reached is the same at every index, the
    // empties past its end included; one that was reached, below its
    // untouched prefix only.
    let natives = |v: &model::env::TrackedVec<Option<NativeSlot>>| match v.is_dirty() {
        true => v.untouched(),
        false => usize::MAX,
    };
    let e_len = ea.fields.k_stack_length as usize;
    let eager = (ea.async_ids_stack.untouched())
        .min(natives(&ea.native_execution_async_resources))
        .min(e_len);
    let l_len = la.fields.k_stack_length as usize;
    let chain = &la.store.lazy().lazy_scopes;
    let untouched_links = chain.untouched().min(merged);
    let links_bound = if !chain.is_dirty() && chain.untouched() == chain.len() {
        // No link changed and every link was placed: the links placed now
        // are a prefix of those (fewer, if the stack got shorter).
        usize::MAX
    } else if untouched_links == 0 {
        0
    } else {
        chain[untouched_links - 1].stack_position as usize + untouched_links
    };
    // The merged index of stack entry `p`: `p` plus the placed links at or
    // below it.
    let p = la.async_ids_stack.untouched().min(l_len);
    // (Placed positions do not go down.)
    let below_p = chain[..merged].partition_point(|link| link.stack_position as usize <= p);
    let stack_bound = p + below_p;
    eager
        .min(natives(&la.native_execution_async_resources))
        .min(links_bound)
        .min(stack_bound)
}

/// The `stack` and `native` fields of the two abstractions, compared entry
/// by entry while merging the lazy chain in (as [`abstract_lazy`] does).
fn stack_and_native_agree<E, S: LazyStore>(ea: &AsyncHooks<E>, la: &AsyncHooks<S>) -> bool {
    stack_and_native_agree_from(ea, la, merged_links(la), 0)
}

/// [`stack_and_native_agree`], the entries and native resources at merged
/// indices below `from` taken as equal (the lengths, and the native
/// resources past the eager stack, always compared); `merged` is
/// [`merged_links`].
fn stack_and_native_agree_from<E, S: LazyStore>(
    ea: &AsyncHooks<E>,
    la: &AsyncHooks<S>,
    merged: usize,
    from: usize,
) -> bool {
    let e_len = ea.fields.k_stack_length as usize;
    let e_stack = &ea.async_ids_stack[..e_len];
    let e_native = &ea.native_execution_async_resources;
    let l_native = &la.native_execution_async_resources;
    let native_at = |v: &[Option<NativeSlot>], i: usize| v.get(i).copied().flatten();
    let l_len = la.fields.k_stack_length as usize;
    let l_stack = &la.async_ids_stack[..l_len];
    let chain = &la.store.lazy().lazy_scopes[..merged];
    if e_len != l_len + merged {
        return false;
    }
    // Between two links the merged stack is a run of the lazy side's own
    // entries, at the same native indices on both sides: compared as slices.
    let same_natives = |from: usize, to: usize| {
        let e = e_native.get(from.min(e_native.len())..to.min(e_native.len()));
        let l = l_native.get(from.min(l_native.len())..to.min(l_native.len()));
        match (e, l) {
            (Some(e), Some(l)) if e.len() == l.len() => e == l,
            _ => (from..to).all(|i| native_at(e_native, i) == native_at(l_native, i)),
        }
    };
    // A run of `run` lazy entries from `position`, at merged `index`: the
    // part at merged indices from `from` on.
    let same_run = |index: usize, position: usize, run: usize| {
        let skip = from.saturating_sub(index).min(run);
        let (index, position, run) = (index + skip, position + skip, run - skip);
        e_stack[index..index + run] == l_stack[position..position + run]
            && same_natives(index, index + run)
    };
    // Link k sits at merged index `stack_position + k`, which goes up with
    // k: start at the first link at or past `from`, just after the one
    // before it.
    let (mut first, mut above) = (0, chain.len());
    while first < above {
        let mid = (first + above) / 2;
        if chain[mid].stack_position as usize + mid < from {
            first = mid + 1;
        } else {
            above = mid;
        }
    }
    let (mut index, mut position) = match first {
        0 => (0, 0),
        k => {
            let at = chain[k - 1].stack_position as usize;
            (at + k, at)
        }
    };
    for link in &chain[first..] {
        let at = link.stack_position as usize;
        let run = at - position;
        if !same_run(index, position, run) {
            return false;
        }
        index += run;
        position = at;
        if index >= from
            && (e_stack[index] != link.saved || native_at(e_native, index) != Some(link.resource))
        {
            return false;
        }
        index += 1;
    }
    if !same_run(index, position, l_len - position) {
        return false;
    }
    // Past the merged stack, the native arrays as they are (trailing
    // empties do not count: compare with empties past either end).
    (e_len..e_native.len().max(l_native.len()))
        .all(|i| native_at(e_native, i) == native_at(l_native, i))
}
