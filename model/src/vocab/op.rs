//! Operations: one per entry point of Node's async-context machinery, and
//! their syntax. An op is written here once: its variant of [`Op`], its
//! kind with its [`Facts`] in [`OpKind`]'s list, its text both ways (the
//! `Display` of [`Op`], one op per line, and `Op::parse`, which reads it
//! back: `super::op_syntax`; `super::trace` handles lines, comments and
//! `=>` expectations).
//! What it does is its [`Family`]'s module of `model/src/env/`.

use super::args::{
    AlsId, AsyncContext, AsyncId, Holder, HookCallbacks, HookId, NativeResource, NodeVersion,
    RejectionsMode, ResourceId, ScopeFlags, ScopeKind, StoreValue,
};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One operation of a trace: an entry point of Node's async-context code.
///
/// Native scopes and the JS frames (`run-in-async-scope`,
/// `default-trigger-scope`) nest strictly: a close or an exit always ends the
/// innermost frame, and must name its kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    /// `--no-force-async-hooks-checks` (`AsyncHooks::no_force_checks`): a
    /// header op, before any other op but `entry-module`.
    NoForceAsyncHooksChecks,
    /// The main entry point is an ES module: its body is a microtask job,
    /// run in the checkpoint of the main-script scope's `Close` after the
    /// pop, so at (0, 0) on an empty stack, and ended by `close`. A header
    /// op, like `no-force-async-hooks-checks`. `entry-module tla`: the
    /// module has a top-level `await` in its source (executed or not),
    /// which V8 evaluates as an async module: a throw out of its body takes
    /// one more job to reach the loader.
    EntryModule {
        /// The source has a top-level `await`.
        tla: bool,
    },
    /// Open a native scope (`InternalCallbackScope` constructor, or
    /// `InternalMakeCallback` up to the call of the callback).
    OpenScope {
        /// CallbackScope or MakeCallback.
        kind: ScopeKind,
        /// The ids the callback runs under.
        context: AsyncContext,
        /// The resource and how it is held.
        resource: NativeResource,
        /// kSkipAsyncHooks / kSkipTaskQueues.
        flags: ScopeFlags,
    },
    /// Close the innermost native scope (`InternalCallbackScope::Close`);
    /// `threw` is a callback that threw (`MarkAsFailed`).
    CloseScope {
        /// The callback threw: `after` and the queues are skipped.
        threw: bool,
    },
    /// `napi_close_callback_scope` (`src/node_api.cc`) on an open
    /// `node::CallbackScope` that is not the innermost native scope: it
    /// deletes the heap-allocated scope, whose destructor runs
    /// `InternalCallbackScope::Close`. `outer` native scopes are inside it.
    CloseOuter {
        /// How many open native scopes are inside the one closed (at least 1).
        outer: u32,
    },
    /// `Environment::RunTimers` (`src/env.cc`) opens its scope, a bare
    /// `InternalCallbackScope(env, process, {0, 0})`, around a loop of calls
    /// with a verbose `TryCatch`: JS goes on in it after a handled exception.
    TimersScope,
    /// `Global<Object>::Reset()` on a resource held as a Global.
    ResetGlobal(ResourceId),
    /// `async_hooks.createHook(callbacks)`: not enabled yet.
    CreateHook {
        /// Its name in the trace.
        hook: HookId,
        /// Which callbacks it has.
        callbacks: HookCallbacks,
    },
    /// `AsyncHook.prototype.enable`.
    EnableHook(HookId),
    /// `AsyncHook.prototype.disable`.
    DisableHook(HookId),
    /// `emitInit(asyncId, type, triggerAsyncId, resource)` (internal embedder API).
    EmitInit {
        /// The new resource's id.
        async_id: AsyncId,
        /// Its type string.
        type_name: String,
        /// Its trigger id.
        trigger_async_id: AsyncId,
        /// The resource object, or `undefined`.
        resource: Option<ResourceId>,
    },
    /// `emitBefore(asyncId, triggerAsyncId, resource)`.
    EmitBefore {
        /// Pushed as the execution id.
        async_id: AsyncId,
        /// Pushed as the trigger id.
        trigger_async_id: AsyncId,
        /// The resource object, or `undefined`.
        resource: Option<ResourceId>,
    },
    /// `emitAfter(asyncId)`.
    EmitAfter {
        /// The id expected on top of the stack.
        async_id: AsyncId,
    },
    /// `emitDestroy(asyncId)`: queued for the destroy hooks.
    EmitDestroy {
        /// The destroyed id.
        async_id: AsyncId,
    },
    /// `AsyncResource.prototype.runInAsyncScope`: up to the call of `fn`.
    EnterRunInAsyncScope {
        /// The AsyncResource's id.
        async_id: AsyncId,
        /// The AsyncResource's trigger id.
        trigger_async_id: AsyncId,
        /// The AsyncResource object.
        resource: ResourceId,
    },
    /// The `finally` of the innermost `runInAsyncScope`.
    ExitRunInAsyncScope,
    /// `defaultTriggerAsyncIdScope(triggerAsyncId, block)`: up to the call of `block`.
    EnterDefaultTriggerScope {
        /// The default trigger id inside the block.
        trigger_async_id: AsyncId,
    },
    /// The `finally` of the innermost `defaultTriggerAsyncIdScope`.
    ExitDefaultTriggerScope,
    /// `process.nextTick(cb)`; the callback records what it sees, and calls
    /// `executionAsyncResource()` too when `query_resource`.
    NextTick {
        /// The tick callback also calls `executionAsyncResource()`.
        query_resource: bool,
    },
    /// `process._tickCallback()`: `processTicksAndRejections` now.
    TickCallback,
    /// `async_hooks.executionAsyncId()`.
    ExecutionAsyncId,
    /// `async_hooks.triggerAsyncId()`.
    TriggerAsyncId,
    /// `async_hooks.executionAsyncResource()`.
    ExecutionAsyncResource,
    /// `getDefaultTriggerAsyncId()` (internal).
    DefaultTriggerAsyncId,
    /// `newAsyncId()` (internal).
    NewAsyncId,
    /// An exception thrown in the innermost native scope's callback reaches
    /// `onGlobalUncaughtException`; `handled` is an `uncaughtException` listener.
    UncaughtException {
        /// A listener handled it.
        handled: bool,
    },
    /// `clearAsyncIdStack()` (internal; `AsyncHooks::clear_async_id_stack`).
    ClearAsyncIdStack,
    /// The caller's JavaScript catches the exception in flight: the one a
    /// bare make-callback's callback threw, which `node::MakeCallback`
    /// handed back to the JavaScript that called the addon (`close threw`;
    /// docs/node-findings.md F8). Nothing observable.
    Catch,
    /// As `uncaught-exception handled`, and the program's
    /// `uncaughtException` listener does things: the ops that follow run in
    /// it, where the handler emits the event, up to `end-listener`.
    UncaughtExceptionListener,
    /// The `uncaughtException` listener returns; the handler goes on.
    EndListener,
    /// Another thread calls `Environment::ExitEnv` (`worker.terminate()`).
    Stop,
    /// The node version of the process (`node-version 20|26`): a header
    /// op, before any other op but `no-force-async-hooks-checks` and
    /// `entry-module`. Without it, the node version is 26.
    NodeVersion(NodeVersion),
    /// `als.run(store, fn)` (`internal/async_local_storage/async_context_frame`
    /// on Node 26): up to the call of `fn`.
    AlsRun {
        /// The `AsyncLocalStorage`.
        als: AlsId,
        /// The store `fn` runs with.
        store: StoreValue,
    },
    /// `als.exit(fn)` = `als.run(undefined, fn)`: up to the call of `fn`.
    AlsExit(AlsId),
    /// The `finally` of the innermost `als-run` or `als-exit`.
    EndAlsRun,
    /// `als.enterWith(store)`.
    AlsEnterWith {
        /// The `AsyncLocalStorage`.
        als: AlsId,
        /// The store entered.
        store: StoreValue,
    },
    /// `als.getStore()`.
    AlsGetStore(AlsId),
    /// `new AsyncResource(...)` for the trace's object `R`, as far as the
    /// frame goes: the constructor's `this[contextFrameSymbol] =
    /// AsyncContextFrame.current()` (Node 26). A later `run-in-async-scope
    /// ... R` runs in that frame. Its ids are the ones `run-in-async-scope`
    /// names (the model takes none here).
    AsyncResource(ResourceId),
    /// `process.nextTick(cb)` where `cb` does things: when the tick runs
    /// (at an outermost `close` or a `tick-callback`), after its
    /// `tick N sees [..]` observation, the ops that follow run inside `cb`,
    /// up to `end-tick` (it returns) or `uncaught-exception` (it throws).
    NextTickBody,
    /// The innermost tick callback (of a `next-tick-body`) returns.
    EndTick,
    /// `queueMicrotask(cb)`; the callback records what it sees.
    QueueMicrotask,
    /// `Promise.resolve().then(cb)`; the reaction records what it sees.
    PromiseThen,
    /// `Promise.reject(reason)`, never handled: an unhandled rejection,
    /// which the next `processTicksAndRejections` reports to the program's
    /// `unhandledRejection` listener (which records what it sees).
    PromiseReject,
    /// `promise.catch(cb)` on the most recent rejected promise that has no
    /// handler (a `promise-reject`'s, or a reaction's derived promise that a
    /// throw rejected): `handledRejection`, and `cb` records what it sees as
    /// a promise reaction. Once reported, the rejection is then handled late:
    /// the next `processPromiseRejections` emits `rejectionHandled`.
    PromiseCatch,
    /// `queueMicrotask(cb)` where `cb` does things: when the microtask runs
    /// (in a microtask checkpoint: an outermost `close`, the end of a tick
    /// run, a `tick-callback`), after its `microtask sees ..` observation,
    /// the ops that follow run inside `cb`, up to `end-microtask`.
    QueueMicrotaskBody,
    /// `Promise.resolve().then(cb)` where `cb` does things: the reaction job
    /// runs the ops that follow, up to `end-microtask`.
    PromiseThenBody,
    /// The innermost microtask callback (of a `queue-microtask-body` or a
    /// `promise-then-body`) returns.
    EndMicrotask,
    /// `new AsyncLocalStorage({ defaultValue })` for the trace's `A<n>`
    /// (`lib/internal/async_local_storage/async_context_frame.js`, Node 26;
    /// v20's constructor takes no options): `getStore()` answers `value`
    /// wherever the current frame lacks the storage. A header op: the
    /// trace's storages with a default are made before everything else (a
    /// second one for the same storage replaces it).
    AlsDefault {
        /// The `AsyncLocalStorage`.
        als: AlsId,
        /// Its `defaultValue`.
        value: StoreValue,
    },
    /// `node --abort-on-uncaught-exception`: an uncaught exception aborts
    /// the process instead of reaching the uncaught-exception handler. A
    /// header op.
    AbortOnUncaughtException,
    /// `node --unhandled-rejections=MODE`, and the program's listeners: with
    /// `on-unhandled-rejection` a `process.on('unhandledRejection')` that
    /// records what it sees, with `on-uncaught-exception` a
    /// `process.on('uncaughtException')` that does nothing. A header op;
    /// without it the program runs in `throw` mode with the first and
    /// without the second (`unhandled-rejections throw on-unhandled-rejection`).
    UnhandledRejections {
        /// `--unhandled-rejections`.
        mode: RejectionsMode,
        /// An `unhandledRejection` listener.
        listener: bool,
        /// An `uncaughtException` listener from the start.
        uncaught_listener: bool,
    },
    // Issue 24: native scopes that enter a stored frame.
    /// `napi_async_init(env, R, name, &context)` (`src/node_api.cc`,
    /// `v8impl::AsyncContext`; `new node::AsyncResource(isolate, R, name)`
    /// does the same): an async context on the trace's object `R`, with
    /// `newAsyncId()` and `getDefaultTriggerAsyncId()`, the init hooks
    /// (`AsyncWrap::EmitAsyncInit`), and on Node 26 the current
    /// `AsyncContextFrame`, captured. `R`'s later `napi-make-callback`s use
    /// the latest.
    NapiAsyncInit(ResourceId),
    /// `napi_make_callback(env, context, R, cb, ...)` on the async context
    /// of `napi-async-init R`: `InternalMakeCallback` with the context's
    /// ids and resource, and on Node 26 the frame the context captured,
    /// which its scope enters; ended by `close`.
    NapiMakeCallback(ResourceId),
    // Issue 24: `als.disable()`.
    /// `als.disable()` on Node 26 (`AsyncContextFrame.disable(this)`,
    /// `lib/internal/async_context_frame.js`): the storage deleted from the
    /// current frame *object* in place (`this.delete(store)`), so every
    /// callback holding that same object loses it for good; other frames
    /// keep it, and a later `run` or `enterWith` works (no enabled flag).
    AlsDisable(AlsId),
    /// `setTimeout(cb, ms)` (`lib/timers.js`), with a duration of its own
    /// (a `TimersList` of its own): `initAsyncResource(timeout, 'Timeout')`
    /// (`lib/internal/timers.js`), then the Timeout waits.
    SetTimeout,
    /// In `RunTimers`' scope, `processTimers` runs the oldest waiting
    /// Timeout (`listOnTimeout`): the ops that follow run in its callback,
    /// up to `end-timer` (it returns) or `uncaught-exception` (it throws).
    Timer,
    /// The innermost Timeout's callback returns; `listOnTimeout` goes on.
    EndTimer,
    /// `clearTimeout(timeout)` (`lib/timers.js`, `unenroll`) on the Timeout
    /// with this id, waiting or running its callback.
    ClearTimeout(AsyncId),
}

/// Declares [`OpKind`] from one list of `Variant = "trace-name" => facts`
/// entries: the enum (each variant documented by its name), [`OpKind::ALL`],
/// [`OpKind::name`] and [`OpKind::facts`] cannot disagree.
macro_rules! op_kinds {
    ($($(#[$doc:meta])* $kind:ident = $name:literal => $facts:expr,)*) => {
        /// The kind of an [`Op`]: its keyword in the trace syntax. This is the
        /// one list of op kinds; whatever must handle every kind (the trace
        /// syntax, [`Op::kind`], the generators' weights and arguments)
        /// matches on it exhaustively, so that a new op is a compile error
        /// wherever it must be handled; what the rest of the suite needs to
        /// know of a kind is one of its [`Facts`], written beside its name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpKind {
            $(#[doc = concat!("`", $name, "`.")] $(#[$doc])* $kind,)*
        }

        impl OpKind {
            /// Every kind, in declaration order: `OpKind::ALL[k as usize] == k`.
            pub const ALL: &'static [OpKind] = &[$(OpKind::$kind,)*];

            /// The op's keyword in the trace syntax.
            pub const fn name(self) -> &'static str {
                match self {
                    $(OpKind::$kind => $name,)*
                }
            }

            /// What the vocabulary knows of the kind beside its name (a
            /// table look-up: the check asks it several times per op).
            #[inline]
            pub const fn facts(self) -> Facts {
                const FACTS: &[Facts] = &[$($facts,)*];
                FACTS[self as usize]
            }
        }
    };
}

/// Which part of Node's code an op enters: the module of the model
/// (`model/src/env/`) that holds its action, its enabling conjuncts and its
/// effect. `Environment::enabled` and its dispatch route an op by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// How the process starts and stops (`src/node.cc`, `src/env.cc`):
    /// `env/process.rs`.
    Process,
    /// Native callback scopes (`src/api/callback.cc`):
    /// `env/callback_scope.rs`.
    CallbackScope,
    /// `async_hooks.createHook` and its `enable` / `disable`
    /// (`lib/async_hooks.js`): `env/hooks.rs`.
    Hooks,
    /// The JS side of async context (`lib/internal/async_hooks.js`,
    /// `AsyncResource.prototype.runInAsyncScope`): `env/js.rs`.
    Js,
    /// `process.nextTick` and its queue
    /// (`lib/internal/process/task_queues.js`): `env/ticks.rs`.
    Ticks,
    /// `queueMicrotask` and promise reactions: `env/microtasks.rs`.
    Microtasks,
    /// Unhandled promise rejections (`lib/internal/process/promises.js`):
    /// `env/rejections.rs`.
    Rejections,
    /// `onGlobalUncaughtException` (`lib/internal/process/execution.js`):
    /// `env/exceptions.rs`.
    Exceptions,
    /// `setTimeout` and `processTimers` (`lib/internal/timers.js`):
    /// `env/timers.rs`.
    Timers,
    /// `AsyncContextFrame` and `AsyncLocalStorage` (Node 26):
    /// `env/context_frame.rs`.
    ContextFrame,
}

/// What an op does to the frames of the program's call stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nesting {
    /// It opens a frame that a later op must end.
    Opens,
    /// It ends a frame (the innermost one, but for `close-outer`).
    Ends,
    /// Neither. `end-tick` and `end-microtask` are here: the frame they end
    /// is opened by whichever op runs the tick or the microtask, which the
    /// op sequence alone does not say.
    Neither,
}

/// What the vocabulary knows of an op kind beside its name, written beside
/// it in [`OpKind`]'s list with the builders below (`js(Family::Ticks)`,
/// `native(Family::CallbackScope).opens()`, `header(Family::Process)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// Where its action is.
    pub family: Family,
    /// What it does to the frames of the call stack.
    pub nesting: Nesting,
    /// It is JavaScript the program calls, so it needs what JavaScript
    /// needs: a native scope open and the environment not stopping
    /// (`Environment::enabled` asks that before the family's own conjuncts).
    pub runs_js: bool,
    /// It describes how the process starts, so it comes before every other
    /// op (`no-force-async-hooks-checks`, `entry-module`, `node-version`,
    /// `als-default`).
    pub header: bool,
    /// It exists on node version 26 only (`docs/spec.md`, "Node versions").
    pub node26_only: bool,
}

/// An op that is not JavaScript: native code, a `finally` that ends a frame,
/// a callback that returns.
const fn native(family: Family) -> Facts {
    Facts {
        family,
        nesting: Nesting::Neither,
        runs_js: false,
        header: false,
        node26_only: false,
    }
}

/// A JavaScript call of the program.
const fn js(family: Family) -> Facts {
    Facts {
        runs_js: true,
        ..native(family)
    }
}

/// A header op.
const fn header(family: Family) -> Facts {
    Facts {
        header: true,
        ..native(family)
    }
}

impl Facts {
    /// It opens a frame.
    const fn opens(self) -> Facts {
        Facts {
            nesting: Nesting::Opens,
            ..self
        }
    }

    /// It ends a frame.
    const fn ends(self) -> Facts {
        Facts {
            nesting: Nesting::Ends,
            ..self
        }
    }

    /// It exists on node version 26 only.
    const fn node26(self) -> Facts {
        Facts {
            node26_only: true,
            ..self
        }
    }
}

use Family::{
    CallbackScope, ContextFrame, Exceptions, Hooks, Js, Microtasks, Process, Rejections, Ticks,
    Timers,
};

op_kinds! {
    NoForceAsyncHooksChecks = "no-force-async-hooks-checks" => header(Process),
    /// [`Op::OpenScope`] of a [`ScopeKind::CallbackScope`].
    CallbackScope = "callback-scope" => native(CallbackScope).opens(),
    /// [`Op::OpenScope`] of a [`ScopeKind::MakeCallback`].
    MakeCallback = "make-callback" => native(CallbackScope).opens(),
    /// With `threw`: `close threw`.
    CloseScope = "close" => native(CallbackScope).ends(),
    ResetGlobal = "reset-global" => native(CallbackScope).node26(),
    CreateHook = "create-hook" => js(Hooks),
    EnableHook = "enable-hook" => js(Hooks),
    DisableHook = "disable-hook" => js(Hooks),
    EmitInit = "emit-init" => js(Js),
    EmitBefore = "emit-before" => js(Js),
    EmitAfter = "emit-after" => js(Js),
    EmitDestroy = "emit-destroy" => js(Js),
    EnterRunInAsyncScope = "run-in-async-scope" => js(Js).opens(),
    ExitRunInAsyncScope = "end-run-in-async-scope" => native(Js).ends(),
    EnterDefaultTriggerScope = "default-trigger-scope" => js(Js).opens(),
    ExitDefaultTriggerScope = "end-default-trigger-scope" => native(Js).ends(),
    NextTick = "next-tick" => js(Ticks),
    TickCallback = "tick-callback" => js(Ticks),
    ExecutionAsyncId = "execution-async-id" => js(Js),
    TriggerAsyncId = "trigger-async-id" => js(Js),
    ExecutionAsyncResource = "execution-async-resource" => js(Js),
    DefaultTriggerAsyncId = "default-trigger-async-id" => js(Js),
    NewAsyncId = "new-async-id" => js(Js),
    UncaughtException = "uncaught-exception" => js(Exceptions),
    // Issue 55: what a bare make-callback hands back to its caller.
    Catch = "catch" => js(Exceptions),
    ClearAsyncIdStack = "clear-async-id-stack" => js(Js),
    Stop = "stop" => native(Process),
    EntryModule = "entry-module" => header(Process),
    TimersScope = "timers-scope" => native(CallbackScope).opens(),
    CloseOuter = "close-outer" => native(CallbackScope).ends(),
    NodeVersion = "node-version" => header(Process),
    AlsRun = "als-run" => js(ContextFrame).opens(),
    AlsExit = "als-exit" => js(ContextFrame).opens(),
    EndAlsRun = "end-als-run" => native(ContextFrame).ends(),
    AlsEnterWith = "als-enter-with" => js(ContextFrame),
    AlsGetStore = "als-get-store" => js(ContextFrame),
    AsyncResource = "async-resource" => js(ContextFrame).node26(),
    NextTickBody = "next-tick-body" => js(Ticks),
    EndTick = "end-tick" => native(Ticks),
    QueueMicrotask = "queue-microtask" => js(Microtasks),
    PromiseThen = "promise-then" => js(Microtasks),
    PromiseReject = "promise-reject" => js(Rejections),
    QueueMicrotaskBody = "queue-microtask-body" => js(Microtasks),
    PromiseThenBody = "promise-then-body" => js(Microtasks),
    EndMicrotask = "end-microtask" => native(Microtasks),
    AlsDefault = "als-default" => header(ContextFrame),
    // Issue 24: native scopes that enter a stored frame.
    NapiAsyncInit = "napi-async-init" => js(CallbackScope),
    NapiMakeCallback = "napi-make-callback" => native(CallbackScope).opens(),
    // Issue 24: `als.disable()`.
    AlsDisable = "als-disable" => js(ContextFrame),
    // Issue 25: `--unhandled-rejections` and the program's listeners.
    UnhandledRejections = "unhandled-rejections" => header(Rejections),
    AbortOnUncaughtException = "abort-on-uncaught-exception" => header(Process),
    PromiseCatch = "promise-catch" => js(Rejections),
    UncaughtExceptionListener = "uncaught-exception-listener" => js(Exceptions).opens(),
    EndListener = "end-listener" => native(Exceptions).ends(),
    // Issue 53: Timeouts, whose callbacks run in their own frames.
    SetTimeout = "set-timeout" => js(Timers),
    Timer = "timer" => js(Timers).opens(),
    EndTimer = "end-timer" => native(Timers).ends(),
    ClearTimeout = "clear-timeout" => js(Timers),
}

impl OpKind {
    /// Number of kinds.
    pub const COUNT: usize = OpKind::ALL.len();

    /// The kind whose keyword is `name`.
    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Whether ops of this kind exist on node version `version`: on v20 there
    /// is no `reset-global` (no `Global<Object>*` resource) and no
    /// frame-based `AsyncLocalStorage` (`docs/spec.md`, "Node versions").
    #[inline]
    pub const fn exists_on(self, version: NodeVersion) -> bool {
        matches!(version, NodeVersion::V26) || !self.facts().node26_only
    }

    /// What ops of this kind do to the frames of the call stack.
    #[inline]
    pub const fn nesting(self) -> Nesting {
        self.facts().nesting
    }

    /// Where the action of ops of this kind is.
    #[inline]
    pub const fn family(self) -> Family {
        self.facts().family
    }

    /// A header op: it describes how the process starts
    /// (`no-force-async-hooks-checks`, `entry-module`, `node-version`,
    /// `als-default`), so it comes before every other op.
    #[inline]
    pub const fn is_header(self) -> bool {
        self.facts().header
    }

    /// Every op keyword, comma-separated, for error messages.
    pub fn names() -> String {
        let names: Vec<&str> = OpKind::ALL.iter().map(|k| k.name()).collect();
        names.join(", ")
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Op {
    /// The op's kind (its keyword in the trace syntax).
    #[inline]
    pub fn kind(&self) -> OpKind {
        match self {
            Op::NoForceAsyncHooksChecks => OpKind::NoForceAsyncHooksChecks,
            Op::EntryModule { .. } => OpKind::EntryModule,
            Op::OpenScope {
                kind: ScopeKind::CallbackScope,
                ..
            } => OpKind::CallbackScope,
            Op::OpenScope {
                kind: ScopeKind::MakeCallback | ScopeKind::BareMakeCallback,
                ..
            } => OpKind::MakeCallback,
            Op::TimersScope => OpKind::TimersScope,
            Op::CloseScope { .. } => OpKind::CloseScope,
            Op::CloseOuter { .. } => OpKind::CloseOuter,
            Op::ResetGlobal(_) => OpKind::ResetGlobal,
            Op::CreateHook { .. } => OpKind::CreateHook,
            Op::EnableHook(_) => OpKind::EnableHook,
            Op::DisableHook(_) => OpKind::DisableHook,
            Op::EmitInit { .. } => OpKind::EmitInit,
            Op::EmitBefore { .. } => OpKind::EmitBefore,
            Op::EmitAfter { .. } => OpKind::EmitAfter,
            Op::EmitDestroy { .. } => OpKind::EmitDestroy,
            Op::EnterRunInAsyncScope { .. } => OpKind::EnterRunInAsyncScope,
            Op::ExitRunInAsyncScope => OpKind::ExitRunInAsyncScope,
            Op::EnterDefaultTriggerScope { .. } => OpKind::EnterDefaultTriggerScope,
            Op::ExitDefaultTriggerScope => OpKind::ExitDefaultTriggerScope,
            Op::NextTick { .. } => OpKind::NextTick,
            Op::TickCallback => OpKind::TickCallback,
            Op::ExecutionAsyncId => OpKind::ExecutionAsyncId,
            Op::TriggerAsyncId => OpKind::TriggerAsyncId,
            Op::ExecutionAsyncResource => OpKind::ExecutionAsyncResource,
            Op::DefaultTriggerAsyncId => OpKind::DefaultTriggerAsyncId,
            Op::NewAsyncId => OpKind::NewAsyncId,
            Op::UncaughtException { .. } => OpKind::UncaughtException,
            Op::ClearAsyncIdStack => OpKind::ClearAsyncIdStack,
            Op::Catch => OpKind::Catch,
            Op::Stop => OpKind::Stop,
            Op::NextTickBody => OpKind::NextTickBody,
            Op::EndTick => OpKind::EndTick,
            Op::QueueMicrotask => OpKind::QueueMicrotask,
            Op::PromiseThen => OpKind::PromiseThen,
            Op::PromiseReject => OpKind::PromiseReject,
            Op::PromiseCatch => OpKind::PromiseCatch,
            Op::QueueMicrotaskBody => OpKind::QueueMicrotaskBody,
            Op::PromiseThenBody => OpKind::PromiseThenBody,
            Op::EndMicrotask => OpKind::EndMicrotask,
            Op::NodeVersion(_) => OpKind::NodeVersion,
            Op::AlsRun { .. } => OpKind::AlsRun,
            Op::AlsExit(_) => OpKind::AlsExit,
            Op::EndAlsRun => OpKind::EndAlsRun,
            Op::AlsEnterWith { .. } => OpKind::AlsEnterWith,
            Op::AlsGetStore(_) => OpKind::AlsGetStore,
            Op::AsyncResource(_) => OpKind::AsyncResource,
            Op::AlsDefault { .. } => OpKind::AlsDefault,
            Op::UnhandledRejections { .. } => OpKind::UnhandledRejections,
            Op::AbortOnUncaughtException => OpKind::AbortOnUncaughtException,
            Op::NapiAsyncInit(_) => OpKind::NapiAsyncInit,
            Op::NapiMakeCallback(_) => OpKind::NapiMakeCallback,
            Op::AlsDisable(_) => OpKind::AlsDisable,
            Op::UncaughtExceptionListener => OpKind::UncaughtExceptionListener,
            Op::EndListener => OpKind::EndListener,
            Op::SetTimeout => OpKind::SetTimeout,
            Op::Timer => OpKind::Timer,
            Op::EndTimer => OpKind::EndTimer,
            Op::ClearTimeout(_) => OpKind::ClearTimeout,
        }
    }

    /// Whether the op exists on node version 26 only: a `global`
    /// resource holder, and the kinds that do not exist on v20
    /// ([`OpKind::exists_on`]; `docs/spec.md`, "Node versions").
    pub fn needs_node26(&self) -> bool {
        match self {
            Op::OpenScope { resource, .. } => resource.holder == Holder::Global,
            op => !op.kind().exists_on(NodeVersion::V20),
        }
    }

    /// The async ids the op names (a scope's or an `AsyncResource`'s id and
    /// trigger id, an emit's ids, a default trigger id), in its text's order.
    pub fn ids(&self) -> Vec<AsyncId> {
        let mut ids = Vec::new();
        self.clone().visit_ids(&mut |id| ids.push(*id));
        ids
    }

    /// The op with each async id it names ([`Op::ids`]) replaced by `f(id)`.
    pub fn map_ids(&self, f: &mut dyn FnMut(AsyncId) -> AsyncId) -> Op {
        let mut op = self.clone();
        op.visit_ids(&mut |id| *id = f(*id));
        op
    }

    /// Visit each async id the op names, in its text's order.
    fn visit_ids(&mut self, f: &mut dyn FnMut(&mut AsyncId)) {
        match self {
            Op::OpenScope { context, .. } => {
                f(&mut context.async_id);
                f(&mut context.trigger_async_id);
            }
            Op::EmitInit {
                async_id,
                trigger_async_id,
                ..
            }
            | Op::EmitBefore {
                async_id,
                trigger_async_id,
                ..
            }
            | Op::EnterRunInAsyncScope {
                async_id,
                trigger_async_id,
                ..
            } => {
                f(async_id);
                f(trigger_async_id);
            }
            Op::EmitAfter { async_id }
            | Op::EmitDestroy { async_id }
            | Op::ClearTimeout(async_id) => f(async_id),
            Op::EnterDefaultTriggerScope { trigger_async_id } => f(trigger_async_id),
            Op::NoForceAsyncHooksChecks
            | Op::EntryModule { .. }
            | Op::AbortOnUncaughtException
            | Op::CloseScope { .. }
            | Op::CloseOuter { .. }
            | Op::TimersScope
            | Op::ResetGlobal(_)
            | Op::CreateHook { .. }
            | Op::EnableHook(_)
            | Op::DisableHook(_)
            | Op::ExitRunInAsyncScope
            | Op::ExitDefaultTriggerScope
            | Op::NextTick { .. }
            | Op::TickCallback
            | Op::ExecutionAsyncId
            | Op::TriggerAsyncId
            | Op::ExecutionAsyncResource
            | Op::DefaultTriggerAsyncId
            | Op::NewAsyncId
            | Op::UncaughtException { .. }
            | Op::ClearAsyncIdStack
            | Op::Catch
            | Op::Stop
            | Op::NodeVersion(_)
            | Op::AlsRun { .. }
            | Op::AlsExit(_)
            | Op::EndAlsRun
            | Op::AlsEnterWith { .. }
            | Op::AlsGetStore(_)
            | Op::AsyncResource(_)
            | Op::NextTickBody
            | Op::EndTick
            | Op::QueueMicrotask
            | Op::PromiseThen
            | Op::PromiseReject
            | Op::PromiseCatch
            | Op::QueueMicrotaskBody
            | Op::PromiseThenBody
            | Op::EndMicrotask
            | Op::AlsDefault { .. }
            | Op::UnhandledRejections { .. }
            | Op::NapiAsyncInit(_)
            | Op::NapiMakeCallback(_)
            | Op::AlsDisable(_)
            | Op::UncaughtExceptionListener
            | Op::EndListener
            | Op::SetTimeout
            | Op::Timer
            | Op::EndTimer => {}
        }
    }

    /// Whether the op opens a frame that a later op must end.
    pub fn opens_frame(&self) -> bool {
        self.kind().nesting() == Nesting::Opens
    }

    /// Whether the op ends a frame (the innermost one, but for `close-outer`);
    /// not `end-tick` and `end-microtask` ([`Nesting::Neither`]).
    pub fn closes_frame(&self) -> bool {
        self.kind().nesting() == Nesting::Ends
    }

    /// Whether the op ends the innermost frame: [`Op::closes_frame`], or a
    /// tick's or a microtask's callback returning (`end-tick`,
    /// `end-microtask`).
    pub fn ends_frame(&self) -> bool {
        self.closes_frame() || matches!(self, Op::EndTick | Op::EndMicrotask)
    }
}
