//! One drawing of ops, for every generator of op sequences: [`draw_op`]
//! builds an op of a given [`OpKind`] with arguments drawn from a source of
//! [`Choices`] and from the state the op will run in, and [`enabled_op`]
//! picks a kind by weight and keeps drawing until the model enables the op
//! ([`Environment::enabled`]), with the [`weights`] of each kind. The random
//! check draws from a ChaCha8 stream (`src/generate.rs`), the fuzz decoder
//! from the fuzzer's bytes (`arbitrary::Unstructured`, `src/fuzzing.rs`): a
//! new op's arguments and weights are written here once.
//!
//! Arguments come from small pools, chosen so that ids and resources
//! collide: ids of the frames and stack entries open now, the current ids,
//! a destroyed id, 0, -1, fresh ids, now and then any small number;
//! resources `R1`..`R4`, hooks `H1`..`H3` (mostly one that fits: a disabled
//! hook to enable, an enabled one to disable), storages `A1`, `A2`, stores
//! 1..=3.

use model::env::{AsyncIdStack, Environment, Frame};
use model::vocab::{
    AlsId, AsyncContext, AsyncId, Holder, HookCallbacks, HookId, NativeResource, NodeVersion, Op,
    OpKind, RejectionsMode, ResourceId, ScopeFlags, ScopeKind,
};

/// Resources the generators use: `R1`..`R4`.
pub const RESOURCES: u32 = 4;
/// Hooks the generators use: `H1`..`H3`.
pub const HOOKS: u32 = 3;
/// `AsyncLocalStorage` instances the generators use: `A1`, `A2`.
pub const STORAGES: u32 = 2;
/// Store values the generators use: 1..=3.
pub const STORE_VALUES: u32 = 3;
/// How many times [`enabled_op`] draws a kind's arguments again when the
/// model's refusal is about them ([`model::env::Refusal::is_about_arguments`]).
pub const TRIES: usize = 3;

/// What a kind does to the depth a random case builds up to (`src/generate.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Opens a frame or pushes a context: favoured while a case builds up
    /// to its target depth.
    Deepens,
    /// Ends a frame, pops a context or ends the process: held back while a
    /// case builds up to its target depth.
    Unwinds,
    /// Ends a JS frame, a tick's or a microtask's callback: unwinds, and is
    /// kept in every phase (a case whose frames cannot end cannot do much
    /// else once one is open).
    EndsJs,
    /// Neither.
    Other,
}

/// How often each generator draws a kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weight {
    /// The base weight in the random check's uniform mix (`src/generate.rs`).
    pub random: u32,
    /// What the kind does to the depth a random case builds up to.
    pub role: Role,
    /// The weight in the fuzz byte form (`src/fuzzing.rs`).
    pub bytes: u32,
}

const fn weight(random: u32, role: Role, bytes: u32) -> Weight {
    Weight {
        random,
        role,
        bytes,
    }
}

/// The weights of each kind. The random check's were tuned by measuring
/// the share of cases that reach each situation of `src/coverage/situations.rs` (the
/// JS frame ends and `emit-after` high, so that a `runInAsyncScope` often
/// ends with only lazy scopes left; `execution-async-resource` low, since
/// one call makes every later scope eager; `no-force-async-hooks-checks`
/// high, since cases without the checks live longer): `docs/performance.md`,
/// "Reach". It gives `timers-scope` and `node-version` none: the first is
/// drawn when no scope is open, the second now and then as a first op. The
/// byte form's are about the uniform mix's; each op that ends a frame weighs
/// as much as any other there (only the end of the innermost frame is ever
/// enabled).
pub const fn weights(kind: OpKind) -> Weight {
    use OpKind as K;
    use Role::*;
    match kind {
        K::NoForceAsyncHooksChecks => weight(8, Other, 1),
        K::CallbackScope => weight(4, Deepens, 6),
        K::MakeCallback => weight(3, Deepens, 4),
        // `close threw` one time in seven ([`draw_op`]).
        K::CloseScope => weight(7, Unwinds, 8),
        K::ResetGlobal => weight(1, Other, 1),
        K::CreateHook => weight(3, Other, 2),
        K::EnableHook => weight(4, Other, 3),
        K::DisableHook => weight(8, Other, 2),
        K::EmitInit => weight(1, Other, 1),
        K::EmitBefore => weight(5, Deepens, 3),
        K::EmitAfter => weight(6, Unwinds, 3),
        K::EmitDestroy => weight(1, Other, 1),
        K::EnterRunInAsyncScope => weight(5, Deepens, 2),
        K::ExitRunInAsyncScope => weight(12, EndsJs, 8),
        K::EnterDefaultTriggerScope => weight(1, Other, 1),
        K::ExitDefaultTriggerScope => weight(6, EndsJs, 8),
        K::NextTick => weight(2, Other, 2),
        K::TickCallback => weight(1, Other, 1),
        K::ExecutionAsyncId => weight(2, Other, 1),
        K::TriggerAsyncId => weight(1, Other, 1),
        K::ExecutionAsyncResource => weight(2, Other, 3),
        K::DefaultTriggerAsyncId => weight(1, Other, 1),
        K::NewAsyncId => weight(1, Other, 1),
        K::UncaughtException => weight(4, Unwinds, 1),
        K::ClearAsyncIdStack => weight(1, Unwinds, 1),
        // Issue 55: enabled only with an exception in flight, where its
        // one rival is `uncaught-exception`.
        K::Catch => weight(4, Other, 1),
        K::Stop => weight(1, Unwinds, 1),
        K::EntryModule => weight(4, Other, 1),
        K::TimersScope => weight(0, Other, 1),
        K::CloseOuter => weight(6, Unwinds, 2),
        K::NodeVersion => weight(0, Other, 1),
        K::AlsRun => weight(2, Other, 2),
        K::AlsExit => weight(1, Other, 1),
        K::EndAlsRun => weight(6, EndsJs, 8),
        K::AlsEnterWith => weight(1, Other, 1),
        K::AlsGetStore => weight(1, Other, 2),
        K::AsyncResource => weight(2, Other, 1),
        K::NextTickBody => weight(2, Other, 2),
        K::EndTick => weight(6, EndsJs, 8),
        K::QueueMicrotask => weight(1, Other, 1),
        K::PromiseThen => weight(10, Other, 1),
        K::PromiseReject => weight(3, Other, 1),
        K::PromiseCatch => weight(2, Other, 1),
        K::QueueMicrotaskBody => weight(1, Other, 1),
        K::PromiseThenBody => weight(7, Other, 2),
        K::EndMicrotask => weight(8, EndsJs, 8),
        K::AlsDefault => weight(4, Other, 1),
        // Issue 24: native scopes that enter a stored frame.
        K::NapiAsyncInit => weight(2, Other, 1),
        K::NapiMakeCallback => weight(3, Deepens, 2),
        // Issue 24: `als.disable()`.
        K::AlsDisable => weight(1, Other, 1),
        // Issue 25: `--unhandled-rejections` and the program's listeners.
        K::UnhandledRejections => weight(1, Other, 1),
        // Drawn by the generator's steer only (it ends a case at its first
        // uncaught exception).
        K::AbortOnUncaughtException => weight(0, Other, 1),
        K::UncaughtExceptionListener => weight(1, Other, 1),
        K::EndListener => weight(8, EndsJs, 8),
        // Issue 53: Timeouts (`timer` is enabled only in RunTimers' scope).
        K::SetTimeout => weight(6, Other, 3),
        K::Timer => weight(12, Deepens, 8),
        K::EndTimer => weight(8, EndsJs, 8),
        K::ClearTimeout => weight(1, Other, 1),
    }
}

/// A source of choices: where the arguments of a drawn op come from.
pub trait Choices {
    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: u32) -> u32;

    /// `true` `num` times in `den`.
    fn ratio(&mut self, num: u32, den: u32) -> bool {
        self.below(den) < num
    }

    /// Out of 8: how often an id argument is the expected one (the current
    /// execution id for `emit-after`) rather than any.
    fn id_care(&self) -> u32 {
        6
    }
}

/// A number in `lo..=hi` from `c`.
fn range(c: &mut impl Choices, lo: i64, hi: i64) -> i64 {
    lo + i64::from(c.below((hi - lo + 1) as u32))
}

/// One of `items`, which is not empty.
fn pick<T: Copy>(c: &mut impl Choices, items: &[T]) -> T {
    items[c.below(items.len() as u32) as usize]
}

/// An op of `kind`, its arguments drawn from `c` and from the state `env`
/// is in. The model may still refuse it ([`enabled_op`] asks).
pub fn draw_op<S: AsyncIdStack>(kind: OpKind, env: &Environment<S>, c: &mut impl Choices) -> Op {
    match kind {
        OpKind::NoForceAsyncHooksChecks => Op::NoForceAsyncHooksChecks,
        OpKind::CallbackScope => open_scope(ScopeKind::CallbackScope, env, c),
        // One in three is a bare one (no TryCatch in the addon): what
        // its callback throws goes to the caller, or is lost (Node 26).
        OpKind::MakeCallback if c.ratio(1, 3) => open_scope(ScopeKind::BareMakeCallback, env, c),
        OpKind::MakeCallback => open_scope(ScopeKind::MakeCallback, env, c),
        OpKind::CloseScope => Op::CloseScope {
            threw: c.ratio(1, 7),
        },
        OpKind::ResetGlobal => Op::ResetGlobal(resource(c)),
        OpKind::CreateHook => Op::CreateHook {
            hook: new_hook(env, c),
            callbacks: callbacks(c),
        },
        OpKind::EnableHook => Op::EnableHook(hook(env, c, false)),
        OpKind::DisableHook => Op::DisableHook(hook(env, c, true)),
        OpKind::EmitInit => Op::EmitInit {
            async_id: id(env, c),
            type_name: "event".to_string(),
            trigger_async_id: id(env, c),
            resource: maybe_resource(c),
        },
        OpKind::EmitBefore => Op::EmitBefore {
            async_id: id(env, c),
            trigger_async_id: id(env, c),
            resource: maybe_resource(c),
        },
        OpKind::EmitAfter => {
            let async_id = if c.below(8) < c.id_care() {
                env.async_hooks.async_id_fields.k_execution_async_id
            } else {
                id(env, c)
            };
            Op::EmitAfter { async_id }
        }
        OpKind::EmitDestroy => Op::EmitDestroy {
            async_id: id(env, c),
        },
        OpKind::EnterRunInAsyncScope => Op::EnterRunInAsyncScope {
            async_id: id(env, c),
            trigger_async_id: id(env, c),
            resource: resource(c),
        },
        OpKind::ExitRunInAsyncScope => Op::ExitRunInAsyncScope,
        OpKind::EnterDefaultTriggerScope => Op::EnterDefaultTriggerScope {
            trigger_async_id: id(env, c),
        },
        OpKind::ExitDefaultTriggerScope => Op::ExitDefaultTriggerScope,
        OpKind::NextTick => Op::NextTick {
            query_resource: c.ratio(1, 2),
        },
        OpKind::TickCallback => Op::TickCallback,
        OpKind::ExecutionAsyncId => Op::ExecutionAsyncId,
        OpKind::TriggerAsyncId => Op::TriggerAsyncId,
        OpKind::ExecutionAsyncResource => Op::ExecutionAsyncResource,
        OpKind::DefaultTriggerAsyncId => Op::DefaultTriggerAsyncId,
        OpKind::NewAsyncId => Op::NewAsyncId,
        OpKind::UncaughtException => Op::UncaughtException {
            handled: !c.ratio(1, 6),
        },
        OpKind::ClearAsyncIdStack => Op::ClearAsyncIdStack,
        OpKind::Catch => Op::Catch,
        OpKind::Stop => Op::Stop,
        OpKind::EntryModule => Op::EntryModule { tla: c.ratio(3, 4) },
        OpKind::TimersScope => Op::TimersScope,
        OpKind::CloseOuter => close_outer(env, c),
        OpKind::NodeVersion => Op::NodeVersion(if c.ratio(1, 2) {
            NodeVersion::V20
        } else {
            NodeVersion::V26
        }),
        OpKind::AlsRun => Op::AlsRun {
            als: storage(c),
            store: store(c),
        },
        OpKind::AlsExit => Op::AlsExit(storage(c)),
        OpKind::EndAlsRun => Op::EndAlsRun,
        OpKind::AlsEnterWith => Op::AlsEnterWith {
            als: storage(c),
            store: store(c),
        },
        OpKind::AlsGetStore => Op::AlsGetStore(storage(c)),
        OpKind::AsyncResource => Op::AsyncResource(resource(c)),
        OpKind::NextTickBody => Op::NextTickBody,
        OpKind::EndTick => Op::EndTick,
        OpKind::UncaughtExceptionListener => Op::UncaughtExceptionListener,
        OpKind::EndListener => Op::EndListener,
        OpKind::SetTimeout => Op::SetTimeout,
        OpKind::Timer => Op::Timer,
        OpKind::EndTimer => Op::EndTimer,
        OpKind::ClearTimeout => Op::ClearTimeout(timeout(env, c)),
        OpKind::QueueMicrotask => Op::QueueMicrotask,
        OpKind::PromiseThen => Op::PromiseThen,
        OpKind::PromiseReject => Op::PromiseReject,
        OpKind::PromiseCatch => Op::PromiseCatch,
        OpKind::QueueMicrotaskBody => Op::QueueMicrotaskBody,
        OpKind::PromiseThenBody => Op::PromiseThenBody,
        OpKind::EndMicrotask => Op::EndMicrotask,
        OpKind::AlsDefault => Op::AlsDefault {
            als: storage(c),
            value: store(c),
        },
        OpKind::NapiAsyncInit => Op::NapiAsyncInit(resource(c)),
        OpKind::NapiMakeCallback => Op::NapiMakeCallback(napi_resource(env, c)),
        OpKind::AlsDisable => Op::AlsDisable(storage(c)),
        OpKind::AbortOnUncaughtException => Op::AbortOnUncaughtException,
        OpKind::UnhandledRejections => Op::UnhandledRejections {
            mode: pick(c, &RejectionsMode::ALL),
            listener: c.ratio(1, 2),
            // Mostly a listener: the handled exception goes on.
            uncaught_listener: c.ratio(3, 4),
        },
    }
}

/// The id of a Timeout waiting or running its callback, else any id.
fn timeout<S: AsyncIdStack>(env: &Environment<S>, c: &mut impl Choices) -> AsyncId {
    let running = env.frames.iter().filter_map(|f| match f {
        Frame::Timer { timeout, .. } => Some(timeout.async_id),
        _ => None,
    });
    let ids: Vec<AsyncId> = (env.timers.waiting.iter().map(|t| t.async_id))
        .chain(running)
        .collect();
    if ids.is_empty() {
        id(env, c)
    } else {
        pick(c, &ids)
    }
}

/// An op that `env` enables, of a kind picked from `weights` (by
/// `kind as usize`) with its arguments from [`draw_op`]. When the model
/// refuses the op, its kind is dropped from `weights` for this pick, after
/// up to [`TRIES`] draws when the refusal is about the arguments; picking
/// among the kinds left gives each kind the share its weight has among
/// those enabled. `None` when no kind is left.
pub fn enabled_op<S: AsyncIdStack>(
    env: &Environment<S>,
    weights: &mut [u32; OpKind::COUNT],
    c: &mut impl Choices,
) -> Option<Op> {
    let mut total: u32 = weights.iter().sum();
    while total > 0 {
        let kind = pick_kind(weights, total, c);
        if let Some(op) = draw_enabled(kind, env, c) {
            return Some(op);
        }
        total -= std::mem::take(&mut weights[kind as usize]);
    }
    None
}

/// An op of `kind` that `env` enables ([`draw_op`]), drawn up to [`TRIES`]
/// times while the model's refusal is about the arguments; `None` when it
/// refuses the kind here.
pub fn draw_enabled<S: AsyncIdStack>(
    kind: OpKind,
    env: &Environment<S>,
    c: &mut impl Choices,
) -> Option<Op> {
    for _ in 0..TRIES {
        let op = draw_op(kind, env, c);
        match env.enabled(&op) {
            Ok(()) => return Some(op),
            Err(refusal) if refusal.is_about_arguments() => continue,
            Err(_) => return None,
        }
    }
    None
}

/// A kind picked from `weights`, whose sum is `total` (> 0).
fn pick_kind(weights: &[u32; OpKind::COUNT], total: u32, c: &mut impl Choices) -> OpKind {
    let mut at = c.below(total);
    for &kind in OpKind::ALL {
        let w = weights[kind as usize];
        if at < w {
            return kind;
        }
        at -= w;
    }
    unreachable!("at < total")
}

/// An id worth trying now: one of an open scope or JS context, a saved
/// stack entry, the current execution or trigger id, a destroyed id, 0,
/// -1, a fresh one, or (rarely) any small number.
fn id<S: AsyncIdStack>(env: &Environment<S>, c: &mut impl Choices) -> AsyncId {
    let f = &env.async_hooks.async_id_fields;
    match c.below(16) {
        0..=2 => f.k_execution_async_id,
        3 => f.k_trigger_async_id,
        4..=6 => match env.frames.len() {
            0 => f.k_execution_async_id,
            n => match &env.frames[c.below(n as u32) as usize] {
                Frame::Native(s) if c.ratio(1, 2) => s.async_context.trigger_async_id,
                Frame::Native(s) => s.async_context.async_id,
                Frame::RunInAsyncScope { async_id, .. } => *async_id,
                Frame::AlsRun { .. } => f.k_execution_async_id,
                Frame::DefaultTriggerScope {
                    old_default_trigger_async_id,
                } => *old_default_trigger_async_id,
                Frame::Tick { tick, .. } => tick.async_id,
                Frame::Timer { timeout, .. } => timeout.async_id,
                Frame::Microtask { .. } | Frame::Listener => f.k_execution_async_id,
            },
        },
        7 => {
            let ah = &env.async_hooks;
            match ah.fields.k_stack_length {
                0 => 0,
                n => {
                    let (e, t) = ah.async_ids_stack[c.below(n) as usize];
                    if c.ratio(1, 2) {
                        e
                    } else {
                        t
                    }
                }
            }
        }
        8 => match env.destroy_async_id_list.len() {
            0 => -1,
            n => env.destroy_async_id_list[c.below(n as u32) as usize],
        },
        9 => 0,
        10 => -1,
        11..=13 => f.k_async_id_counter + pick(c, &[0, 1, 2, 7]),
        _ => range(c, -2, 11),
    }
}

fn resource(c: &mut impl Choices) -> ResourceId {
    ResourceId(1 + c.below(RESOURCES))
}

/// A resource with an N-API async context (`napi-async-init`), any of
/// `R1`..`R4` when there is none.
fn napi_resource<S: AsyncIdStack>(env: &Environment<S>, c: &mut impl Choices) -> ResourceId {
    let with: Vec<ResourceId> = (1..=RESOURCES)
        .map(ResourceId)
        .filter(|r| env.js_objects.async_context(r).is_some())
        .collect();
    if with.is_empty() {
        return resource(c);
    }
    pick(c, &with)
}

fn maybe_resource(c: &mut impl Choices) -> Option<ResourceId> {
    c.ratio(1, 2).then(|| resource(c))
}

fn storage(c: &mut impl Choices) -> AlsId {
    AlsId(1 + c.below(STORAGES))
}

fn store(c: &mut impl Choices) -> u32 {
    1 + c.below(STORE_VALUES)
}

/// A hook of `H1`..`H3` not created yet (any, when all are).
fn new_hook<S: AsyncIdStack>(env: &Environment<S>, c: &mut impl Choices) -> HookId {
    let free: Vec<HookId> = (1..=HOOKS)
        .map(HookId)
        .filter(|h| !env.hooks.created.contains_key(h))
        .collect();
    if free.is_empty() {
        return HookId(1 + c.below(HOOKS));
    }
    pick(c, &free)
}

/// A created hook; mostly one that is `enabled` (for a disable) or not (for
/// an enable), so that hooks go on and off. Any of `H1`..`H3` when none was
/// created.
fn hook<S: AsyncIdStack>(env: &Environment<S>, c: &mut impl Choices, enabled: bool) -> HookId {
    let created: Vec<HookId> = env.hooks.created.keys().copied().collect();
    if created.is_empty() {
        return HookId(1 + c.below(HOOKS));
    }
    let fitting: Vec<HookId> = (created.iter().copied())
        .filter(|h| env.hooks.active.contains(h) == enabled)
        .collect();
    if !fitting.is_empty() && c.ratio(3, 4) {
        return pick(c, &fitting);
    }
    pick(c, &created)
}

fn callbacks(c: &mut impl Choices) -> HookCallbacks {
    if c.ratio(3, 5) {
        return HookCallbacks::ALL;
    }
    let bits = c.below(32);
    HookCallbacks {
        init: bits & 1 != 0,
        before: bits & 2 != 0,
        after: bits & 4 != 0,
        destroy: bits & 8 != 0,
        promise_resolve: bits & 16 != 0,
    }
}

/// `callback-scope` (one in five with a Global resource, one in seven with
/// flags) or `make-callback` (bare or not), with ids worth trying.
fn open_scope<S: AsyncIdStack>(kind: ScopeKind, env: &Environment<S>, c: &mut impl Choices) -> Op {
    let async_id = id(env, c);
    let trigger_async_id = id(env, c);
    let id = resource(c);
    let (holder, flags) = match kind {
        ScopeKind::MakeCallback | ScopeKind::BareMakeCallback => {
            (Holder::Local, ScopeFlags::default())
        }
        ScopeKind::CallbackScope => {
            // Global holders exist on node version 26 only (`Op::needs_node26`).
            let holder = if c.ratio(1, 5) && env.version != NodeVersion::V20 {
                Holder::Global
            } else {
                Holder::Local
            };
            let flags = if c.ratio(1, 7) {
                ScopeFlags {
                    skip_async_hooks: c.ratio(1, 2),
                    skip_task_queues: c.ratio(1, 2),
                }
            } else {
                ScopeFlags::default()
            };
            (holder, flags)
        }
    };
    Op::OpenScope {
        kind,
        context: AsyncContext {
            async_id,
            trigger_async_id,
        },
        resource: NativeResource { id, holder },
        flags,
    }
}

/// `op`, a `make-callback` (bare or not), made one of `kind` (any other op
/// as it is).
pub fn with_make_callback_kind(op: Op, kind: ScopeKind) -> Op {
    match op {
        Op::OpenScope {
            kind: ScopeKind::MakeCallback | ScopeKind::BareMakeCallback,
            context,
            resource,
            flags,
        } if kind.makes_callback() => Op::OpenScope {
            kind,
            context,
            resource,
            flags,
        },
        op => op,
    }
}

/// `close-outer K` for a `K` the model enables now; mostly one whose scope's
/// id is current, so that its check passes and the case goes on with the
/// scope's entry left dangling. `close-outer 1` when there is none.
fn close_outer<S: AsyncIdStack>(env: &Environment<S>, c: &mut impl Choices) -> Op {
    let natives: Vec<AsyncId> = (env.frames.iter().rev())
        .filter_map(|f| match f {
            Frame::Native(s) => Some(s.async_context.async_id),
            _ => None,
        })
        .collect();
    let enabled: Vec<u32> = (1..natives.len() as u32)
        .filter(|&outer| env.enabled(&Op::CloseOuter { outer }).is_ok())
        .collect();
    if enabled.is_empty() {
        return Op::CloseOuter { outer: 1 };
    }
    let current = env.async_hooks.async_id_fields.k_execution_async_id;
    let passing: Vec<u32> = (enabled.iter().copied())
        .filter(|&k| natives[k as usize] == current)
        .collect();
    let pool = if !passing.is_empty() && c.ratio(3, 4) {
        passing
    } else {
        enabled
    };
    Op::CloseOuter {
        outer: pick(c, &pool),
    }
}
