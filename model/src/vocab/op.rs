//! Operations: one per entry point of Node's async-context machinery.
//!
//! The `Display` impl is the trace syntax (one op per line); `trace::parse`
//! reads it back.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An async id. Node stores ids as doubles (`async_id_fields_`, `node::async_id`);
/// the model restricts them to integers, which is all Node ever assigns, and
/// keeps 0 and -1 meaningful as they are in Node.
pub type AsyncId = i64;

/// `node::async_context` (`src/node.h`): the pair a scope runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AsyncContext {
    /// `async_context::async_id`: becomes `executionAsyncId()`.
    pub async_id: AsyncId,
    /// `async_context::trigger_async_id`: becomes `triggerAsyncId()`.
    pub trigger_async_id: AsyncId,
}

/// A JavaScript object chosen by the trace, by identity (`R1`, `R2`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ResourceId(pub u32);

/// How a native scope holds its resource (`InternalCallbackScope`'s
/// `std::variant<Local<Object>*, Global<Object>*>` on Node's main branch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Holder {
    /// A `Local<Object>` that lives as long as the scope.
    Local,
    /// A `Global<Object>*` (an fs callback's request object); `reset-global`
    /// can empty it while the scope is open.
    Global,
}

/// The resource argument of a native scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NativeResource {
    /// Which object.
    pub id: ResourceId,
    /// How the scope holds it.
    pub holder: Holder,
}

/// How a native scope is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScopeKind {
    /// `node::CallbackScope` / `InternalCallbackScope` opened directly.
    CallbackScope,
    /// `InternalMakeCallback` (`src/api/callback.cc`): the scope plus, while
    /// hooks are enabled, the JS `callbackTrampoline`.
    MakeCallback,
}

/// `InternalCallbackScope` flags (`src/node_internals.h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScopeFlags {
    /// `kSkipAsyncHooks`: no `before` / `after`.
    pub skip_async_hooks: bool,
    /// `kSkipTaskQueues`: no microtasks or ticks at the outermost close.
    pub skip_task_queues: bool,
}

/// An `AsyncLocalStorage` instance chosen by the trace, by identity (`A1`,
/// `A2`, ...): `new AsyncLocalStorage()` (`lib/async_hooks.js`), made when
/// the trace first names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AlsId(pub u32);

/// A store value a trace gives `AsyncLocalStorage` (`run`, `enterWith`): a
/// number, so that `getStore()` answers compare as text. `undefined` is
/// written as the absence of a value.
pub type StoreValue = u32;

/// Which Node.js release line the model describes: the node version.
/// Where the two differ observably in the modelled code, `docs/spec.md`
/// ("Node versions") names the difference with its source and what each
/// binary printed.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub enum NodeVersion {
    /// node v20 (the oracle: v20.20.2): no `Global<Object>*` callback scopes,
    /// `AsyncLocalStorage` built on async hooks.
    V20,
    /// Node 26 (the oracle: v26.12.1), the release line of main, where the
    /// pull request lands: `Global<Object>*` scopes, `AsyncContextFrame`.
    #[default]
    V26,
}

impl NodeVersion {
    /// Every node version, the default last.
    pub const ALL: [NodeVersion; 2] = [NodeVersion::V20, NodeVersion::V26];

    /// The major version number.
    pub fn major(self) -> u32 {
        match self {
            NodeVersion::V20 => 20,
            NodeVersion::V26 => 26,
        }
    }

    /// The node version the model takes for a binary with this major
    /// version: 20 and below are v20's, 21 and above 26's (the differences
    /// modelled landed before 26: `AsyncContextFrame` became the default in
    /// 24).
    pub fn of_major(major: u32) -> NodeVersion {
        if major <= 20 {
            NodeVersion::V20
        } else {
            NodeVersion::V26
        }
    }
}

impl fmt::Display for NodeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.major())
    }
}

impl std::str::FromStr for NodeVersion {
    type Err = String;

    /// `20` or `26`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "20" => Ok(NodeVersion::V20),
            "26" => Ok(NodeVersion::V26),
            other => Err(format!(
                "node version `{other}`: the model has the node versions 20 and 26"
            )),
        }
    }
}

/// A hook created by `async_hooks.createHook` (`H1`, `H2`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HookId(pub u32);

/// Which callbacks a hook has (`AsyncHook` constructor, `lib/async_hooks.js`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HookCallbacks {
    /// `init`.
    pub init: bool,
    /// `before`.
    pub before: bool,
    /// `after`.
    pub after: bool,
    /// `destroy`.
    pub destroy: bool,
    /// `promiseResolve`.
    pub promise_resolve: bool,
}

impl HookCallbacks {
    /// A hook with all five callbacks, as `test/async-hooks/init-hooks.js` makes.
    pub const ALL: HookCallbacks = HookCallbacks {
        init: true,
        before: true,
        after: true,
        destroy: true,
        promise_resolve: true,
    };
}

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
    /// The main entry point is an ES module: its body runs in the microtask
    /// checkpoint of the main-script scope's `Close`, after the pop, so at
    /// (0, 0) on an empty stack. A header op, like `no-force-async-hooks-checks`.
    EntryModule,
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
}

/// Declares [`OpKind`] from one list of `Variant = "trace-name"` pairs: the
/// enum, [`OpKind::ALL`] and [`OpKind::name`] cannot disagree.
macro_rules! op_kinds {
    ($($(#[$doc:meta])* $kind:ident = $name:literal,)*) => {
        /// The kind of an [`Op`]: its keyword in the trace syntax. This is the
        /// one list of op kinds; whatever must handle every kind (the trace
        /// parser, [`Op::kind`], the generators, coverage) matches on it
        /// exhaustively, so that a new op is a compile error wherever it
        /// must be handled.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpKind {
            $($(#[$doc])* $kind,)*
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
        }
    };
}

op_kinds! {
    /// `no-force-async-hooks-checks`.
    NoForceAsyncHooksChecks = "no-force-async-hooks-checks",
    /// `callback-scope`: [`Op::OpenScope`] of a [`ScopeKind::CallbackScope`].
    CallbackScope = "callback-scope",
    /// `make-callback`: [`Op::OpenScope`] of a [`ScopeKind::MakeCallback`].
    MakeCallback = "make-callback",
    /// `close` and `close threw`.
    CloseScope = "close",
    /// `reset-global`.
    ResetGlobal = "reset-global",
    /// `create-hook`.
    CreateHook = "create-hook",
    /// `enable-hook`.
    EnableHook = "enable-hook",
    /// `disable-hook`.
    DisableHook = "disable-hook",
    /// `emit-init`.
    EmitInit = "emit-init",
    /// `emit-before`.
    EmitBefore = "emit-before",
    /// `emit-after`.
    EmitAfter = "emit-after",
    /// `emit-destroy`.
    EmitDestroy = "emit-destroy",
    /// `run-in-async-scope`.
    EnterRunInAsyncScope = "run-in-async-scope",
    /// `end-run-in-async-scope`.
    ExitRunInAsyncScope = "end-run-in-async-scope",
    /// `default-trigger-scope`.
    EnterDefaultTriggerScope = "default-trigger-scope",
    /// `end-default-trigger-scope`.
    ExitDefaultTriggerScope = "end-default-trigger-scope",
    /// `next-tick`.
    NextTick = "next-tick",
    /// `tick-callback`.
    TickCallback = "tick-callback",
    /// `execution-async-id`.
    ExecutionAsyncId = "execution-async-id",
    /// `trigger-async-id`.
    TriggerAsyncId = "trigger-async-id",
    /// `execution-async-resource`.
    ExecutionAsyncResource = "execution-async-resource",
    /// `default-trigger-async-id`.
    DefaultTriggerAsyncId = "default-trigger-async-id",
    /// `new-async-id`.
    NewAsyncId = "new-async-id",
    /// `uncaught-exception`.
    UncaughtException = "uncaught-exception",
    /// `clear-async-id-stack`.
    ClearAsyncIdStack = "clear-async-id-stack",
    /// `stop`.
    Stop = "stop",
    /// `entry-module`.
    EntryModule = "entry-module",
    /// `timers-scope`.
    TimersScope = "timers-scope",
    /// `close-outer`.
    CloseOuter = "close-outer",
    /// `node-version`.
    NodeVersion = "node-version",
    /// `als-run`.
    AlsRun = "als-run",
    /// `als-exit`.
    AlsExit = "als-exit",
    /// `end-als-run`.
    EndAlsRun = "end-als-run",
    /// `als-enter-with`.
    AlsEnterWith = "als-enter-with",
    /// `als-get-store`.
    AlsGetStore = "als-get-store",
    /// `async-resource`.
    AsyncResource = "async-resource",
    /// `next-tick-body`.
    NextTickBody = "next-tick-body",
    /// `end-tick`.
    EndTick = "end-tick",
    /// `queue-microtask`.
    QueueMicrotask = "queue-microtask",
    /// `promise-then`.
    PromiseThen = "promise-then",
    /// `promise-reject`.
    PromiseReject = "promise-reject",
    /// `queue-microtask-body`.
    QueueMicrotaskBody = "queue-microtask-body",
    /// `promise-then-body`.
    PromiseThenBody = "promise-then-body",
    /// `end-microtask`.
    EndMicrotask = "end-microtask",
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
    pub const fn exists_on(self, version: NodeVersion) -> bool {
        matches!(version, NodeVersion::V26) || !self.facts().1
    }

    /// What ops of this kind do to the frames of the call stack.
    pub const fn nesting(self) -> Nesting {
        self.facts().0
    }

    /// What the vocabulary knows of each kind beside its name: its
    /// [`Nesting`], and whether it exists on node version 26 only.
    const fn facts(self) -> (Nesting, bool) {
        use Nesting::*;
        use OpKind as K;
        match self {
            K::CallbackScope
            | K::MakeCallback
            | K::TimersScope
            | K::EnterRunInAsyncScope
            | K::EnterDefaultTriggerScope => (Opens, false),
            K::AlsRun | K::AlsExit => (Opens, true),
            K::CloseScope | K::CloseOuter | K::ExitRunInAsyncScope | K::ExitDefaultTriggerScope => {
                (Ends, false)
            }
            K::EndAlsRun => (Ends, true),
            K::ResetGlobal | K::AlsEnterWith | K::AlsGetStore | K::AsyncResource => (Neither, true),
            K::NoForceAsyncHooksChecks
            | K::CreateHook
            | K::EnableHook
            | K::DisableHook
            | K::EmitInit
            | K::EmitBefore
            | K::EmitAfter
            | K::EmitDestroy
            | K::NextTick
            | K::TickCallback
            | K::ExecutionAsyncId
            | K::TriggerAsyncId
            | K::ExecutionAsyncResource
            | K::DefaultTriggerAsyncId
            | K::NewAsyncId
            | K::UncaughtException
            | K::ClearAsyncIdStack
            | K::Stop
            | K::EntryModule
            | K::NodeVersion
            | K::NextTickBody
            | K::EndTick
            | K::QueueMicrotask
            | K::PromiseThen
            | K::PromiseReject
            | K::QueueMicrotaskBody
            | K::PromiseThenBody
            | K::EndMicrotask => (Neither, false),
        }
    }

    /// A header op: it describes how the process starts
    /// (`no-force-async-hooks-checks`, `entry-module`, `node-version`), so it
    /// comes before every other op.
    pub const fn is_header(self) -> bool {
        matches!(
            self,
            OpKind::NoForceAsyncHooksChecks | OpKind::EntryModule | OpKind::NodeVersion
        )
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Op {
    /// The op's kind (its keyword in the trace syntax).
    pub fn kind(&self) -> OpKind {
        match self {
            Op::NoForceAsyncHooksChecks => OpKind::NoForceAsyncHooksChecks,
            Op::EntryModule => OpKind::EntryModule,
            Op::OpenScope {
                kind: ScopeKind::CallbackScope,
                ..
            } => OpKind::CallbackScope,
            Op::OpenScope {
                kind: ScopeKind::MakeCallback,
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
            Op::Stop => OpKind::Stop,
            Op::NextTickBody => OpKind::NextTickBody,
            Op::EndTick => OpKind::EndTick,
            Op::QueueMicrotask => OpKind::QueueMicrotask,
            Op::PromiseThen => OpKind::PromiseThen,
            Op::PromiseReject => OpKind::PromiseReject,
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

    /// Whether the op opens a frame that a later op must end.
    pub fn opens_frame(&self) -> bool {
        self.kind().nesting() == Nesting::Opens
    }

    /// Whether the op ends a frame (the innermost one, but for `close-outer`);
    /// not `end-tick` and `end-microtask` ([`Nesting::Neither`]).
    pub fn closes_frame(&self) -> bool {
        self.kind().nesting() == Nesting::Ends
    }
}

impl fmt::Display for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "R{}", self.0)
    }
}

impl fmt::Display for AlsId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "A{}", self.0)
    }
}

impl fmt::Display for HookId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "H{}", self.0)
    }
}

impl fmt::Display for HookCallbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (self.init, "init"),
            (self.before, "before"),
            (self.after, "after"),
            (self.destroy, "destroy"),
            (self.promise_resolve, "promiseResolve"),
        ];
        let mut first = true;
        for (on, name) in names {
            if on {
                if !first {
                    f.write_str(" ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("none")?;
        }
        Ok(())
    }
}

fn opt_resource(r: &Option<ResourceId>) -> String {
    match r {
        Some(r) => format!(" {r}"),
        None => String::new(),
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = self.kind();
        match self {
            Op::OpenScope {
                context,
                resource,
                flags,
                ..
            } => {
                write!(f, "{k} {} {}", context.async_id, context.trigger_async_id)?;
                match resource.holder {
                    Holder::Local => write!(f, " {}", resource.id)?,
                    Holder::Global => write!(f, " global {}", resource.id)?,
                }
                if flags.skip_async_hooks {
                    f.write_str(" skip-hooks")?;
                }
                if flags.skip_task_queues {
                    f.write_str(" skip-queues")?;
                }
                Ok(())
            }
            Op::CloseScope { threw } => {
                if *threw {
                    write!(f, "{k} threw")
                } else {
                    write!(f, "{k}")
                }
            }
            Op::CloseOuter { outer } => write!(f, "{k} {outer}"),
            Op::ResetGlobal(r) | Op::AsyncResource(r) => write!(f, "{k} {r}"),
            Op::CreateHook { hook, callbacks } => write!(f, "{k} {hook} {callbacks}"),
            Op::EnableHook(h) | Op::DisableHook(h) => write!(f, "{k} {h}"),
            Op::EmitInit {
                async_id,
                type_name,
                trigger_async_id,
                resource,
            } => write!(
                f,
                "{k} {async_id} {type_name} {trigger_async_id}{}",
                opt_resource(resource)
            ),
            Op::EmitBefore {
                async_id,
                trigger_async_id,
                resource,
            } => write!(
                f,
                "{k} {async_id} {trigger_async_id}{}",
                opt_resource(resource)
            ),
            Op::EmitAfter { async_id } | Op::EmitDestroy { async_id } => {
                write!(f, "{k} {async_id}")
            }
            Op::EnterRunInAsyncScope {
                async_id,
                trigger_async_id,
                resource,
            } => write!(f, "{k} {async_id} {trigger_async_id} {resource}"),
            Op::EnterDefaultTriggerScope { trigger_async_id } => {
                write!(f, "{k} {trigger_async_id}")
            }
            Op::NextTick { query_resource } => {
                if *query_resource {
                    write!(f, "{k} resource")
                } else {
                    write!(f, "{k}")
                }
            }
            Op::UncaughtException { handled } => {
                write!(f, "{k} {}", if *handled { "handled" } else { "unhandled" })
            }
            Op::NodeVersion(v) => write!(f, "{k} {v}"),
            Op::AlsRun { als, store } | Op::AlsEnterWith { als, store } => {
                write!(f, "{k} {als} {store}")
            }
            Op::AlsExit(als) | Op::AlsGetStore(als) => write!(f, "{k} {als}"),
            Op::NoForceAsyncHooksChecks
            | Op::EndAlsRun
            | Op::EntryModule
            | Op::TimersScope
            | Op::ExitRunInAsyncScope
            | Op::ExitDefaultTriggerScope
            | Op::TickCallback
            | Op::ExecutionAsyncId
            | Op::TriggerAsyncId
            | Op::ExecutionAsyncResource
            | Op::DefaultTriggerAsyncId
            | Op::NewAsyncId
            | Op::ClearAsyncIdStack
            | Op::Stop
            | Op::NextTickBody
            | Op::EndTick
            | Op::QueueMicrotask
            | Op::PromiseThen
            | Op::PromiseReject
            | Op::QueueMicrotaskBody
            | Op::PromiseThenBody
            | Op::EndMicrotask => f.write_str(k.name()),
        }
    }
}
