//! Observations: everything a Node.js program can see of an op.

use super::args::{AlsId, AsyncId, HookId, ResourceId, StoreValue};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What `executionAsyncResource()` (or an init hook's `resource`) returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ResourceView {
    /// A resource named by the trace.
    Resource(ResourceId),
    /// The `Object::New()` that `StartExecution` (`src/node.cc`) gives the
    /// main-script scope.
    Main,
    /// The tick object of the tick with this async id
    /// (`lib/internal/process/task_queues.js`, `nextTick`).
    TickObject(AsyncId),
    /// The `Immediate` that `setImmediate` made, by its async id (the
    /// uncaught-exception handler makes one).
    Immediate(AsyncId),
    /// `topLevelResource` (`lib/internal/async_hooks.js`): the stack is empty.
    TopLevel,
    /// The `process` object (`Environment::RunTimers` gives it to its scope).
    Process,
    /// Unspecified: Node reads a native entry through a pointer into a scope
    /// that has returned (freed memory). Any answer is Node's; the lockstep
    /// and the conformance comparisons accept any answer here.
    Unspecified,
    /// `undefined`: a JS entry without a resource, a native entry whose
    /// resource is gone, or a reset Global.
    Undefined,
    /// The `AsyncResource('Microtask')` of a `queueMicrotask`, by its id.
    Microtask(AsyncId),
    /// A promise that the promise hooks track, by its async id.
    Promise(AsyncId),
    /// The `Timeout` that `setTimeout` made, by its async id
    /// (`lib/internal/timers.js`).
    Timeout(AsyncId),
}

/// One hook callback invocation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    /// `init(asyncId, type, triggerAsyncId, resource)`.
    Init {
        /// The new resource's id.
        async_id: AsyncId,
        /// Its type string.
        type_name: String,
        /// Its trigger id.
        trigger_async_id: AsyncId,
        /// The resource argument.
        resource: ResourceView,
    },
    /// `before(asyncId)`.
    Before(AsyncId),
    /// `after(asyncId)`.
    After(AsyncId),
    /// `destroy(asyncId)`.
    Destroy(AsyncId),
    /// `promiseResolve(asyncId)`.
    PromiseResolve(AsyncId),
}

/// Why the process aborted on a `CHECK` (`src/util.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FailedCheck {
    /// `CHECK_EQ(env_->execution_async_id(), 0)` at the outermost
    /// `InternalCallbackScope::Close` while `kTotals` is non-zero.
    ExecutionAsyncIdIsZero,
    /// `CHECK_EQ(env_->trigger_async_id(), 0)`, same place.
    TriggerAsyncIdIsZero,
    /// `CHECK_GE(async_id, -1)` in `AsyncHooks::push_async_context`.
    AsyncIdAtLeastMinusOne,
    /// `CHECK_GE(trigger_async_id, -1)`, same place.
    TriggerAsyncIdAtLeastMinusOne,
    /// `CHECK_IMPLIES(ptr != nullptr, !ptr->IsEmpty())` at the start of
    /// `AsyncHooks::push_async_context` on Node 26 (`src/env.cc`): a scope
    /// opened on a `Global<Object>*` that is already empty. Not gated by `kCheck`.
    GlobalResourceNotEmpty,
}

/// Everything an op lets a program see.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Observation {
    /// `executionAsyncId()`.
    ExecutionAsyncId(AsyncId),
    /// `triggerAsyncId()`.
    TriggerAsyncId(AsyncId),
    /// `executionAsyncResource()`.
    ExecutionAsyncResource(ResourceView),
    /// `getDefaultTriggerAsyncId()`.
    DefaultTriggerAsyncId(AsyncId),
    /// `newAsyncId()`.
    NewAsyncId(AsyncId),
    /// A hook callback ran, seeing this execution and trigger id.
    Hook {
        /// Which hook.
        hook: HookId,
        /// Which callback, with its arguments.
        event: HookEvent,
        /// `executionAsyncId()` inside the callback.
        execution_async_id: AsyncId,
        /// `triggerAsyncId()` inside the callback.
        trigger_async_id: AsyncId,
    },
    /// A `process.nextTick` callback ran.
    Tick {
        /// The tick's own id (from `newAsyncId()` when scheduled).
        async_id: AsyncId,
        /// `executionAsyncId()` inside it.
        execution_async_id: AsyncId,
        /// `triggerAsyncId()` inside it.
        trigger_async_id: AsyncId,
        /// `executionAsyncResource()` inside it, if it asked.
        resource: Option<ResourceView>,
    },
    /// `als.getStore()`: the store, or `undefined` (`None`).
    Store {
        /// The `AsyncLocalStorage`.
        als: AlsId,
        /// What `getStore()` returned.
        value: Option<StoreValue>,
    },
    /// Inside a `process.nextTick` callback (right after its [`Observation::Tick`]),
    /// an `AsyncLocalStorage` whose `getStore()` is not `undefined` there:
    /// one per such storage, in storage order. On Node 26 the tick runs in
    /// the `AsyncContextFrame` captured by `nextTick`.
    TickStore {
        /// The tick's own id.
        async_id: AsyncId,
        /// The `AsyncLocalStorage`.
        als: AlsId,
        /// What `getStore()` returned in the tick.
        value: StoreValue,
    },
    /// A Timeout's callback began (`listOnTimeout`, right after its
    /// `emitBefore`): the ids it sees.
    Timeout {
        /// The Timeout's own id (`timer[async_id_symbol]`).
        async_id: AsyncId,
        /// `executionAsyncId()` inside it.
        execution_async_id: AsyncId,
        /// `triggerAsyncId()` inside it.
        trigger_async_id: AsyncId,
    },
    /// Inside a Timeout's callback (right after its
    /// [`Observation::Timeout`]), an `AsyncLocalStorage` whose `getStore()`
    /// is not `undefined` there: one per such storage, in storage order. On
    /// Node 26 the callback runs in the `AsyncContextFrame` `setTimeout`
    /// captured; on v20 in the stores the init hook copied onto the Timeout.
    TimeoutStore {
        /// The Timeout's own id.
        async_id: AsyncId,
        /// The `AsyncLocalStorage`.
        als: AlsId,
        /// What `getStore()` returned in the callback.
        value: StoreValue,
    },
    /// The program's `unhandledRejection` listener ran for a
    /// `promise-reject`, seeing these ids (`processPromiseRejections`).
    UnhandledRejection {
        /// `executionAsyncId()` inside it.
        execution_async_id: AsyncId,
        /// `triggerAsyncId()` inside it.
        trigger_async_id: AsyncId,
    },
    /// The program's `rejectionHandled` listener ran for a rejection handled
    /// after it was reported (`processPromiseRejections`), seeing these ids.
    RejectionHandled {
        /// `executionAsyncId()` inside it.
        execution_async_id: AsyncId,
        /// `triggerAsyncId()` inside it.
        trigger_async_id: AsyncId,
    },
    /// A microtask ran (a `queueMicrotask` callback, or a promise
    /// reaction when `promise`), seeing these ids.
    Microtask {
        /// A promise reaction (`.then(cb)`), not a `queueMicrotask` callback.
        promise: bool,
        /// `executionAsyncId()` inside it.
        execution_async_id: AsyncId,
        /// `triggerAsyncId()` inside it.
        trigger_async_id: AsyncId,
    },
    /// Terminal: `AsyncHooks::FailWithCorruptedAsyncStack` printed
    /// `Error: async hook stack has become corrupted (actual: A, expected: E)`
    /// and the process exited with code 1 (with `abort`, aborted: SIGABRT).
    CorruptedStack {
        /// `async_id_fields_[kExecutionAsyncId]` at the failed pop.
        actual: AsyncId,
        /// The id the pop expected.
        expected: AsyncId,
        /// `--abort-on-uncaught-exception`: `ABORT_NO_BACKTRACE()`, not `Exit(1)`.
        abort: bool,
    },
    /// The exception a bare make-callback's callback threw is gone: on
    /// Node 26, through `callbackTrampoline`, `pop_async_context` calls
    /// into V8 with it pending and V8 clears it, so the addon returns to
    /// its JavaScript caller normally (docs/node-findings.md F8).
    ExceptionLost,
    /// Terminal: a `CHECK` failed and the process aborted.
    CheckFailed(FailedCheck),
    /// Terminal: the process exited with this code (an unhandled exception).
    Exit(i32),
    /// Terminal: `--abort-on-uncaught-exception` aborted the process on an
    /// uncaught exception, killed by this signal on x64 Linux: 5 (SIGTRAP)
    /// where V8 aborts as the exception is thrown (`Isolate::Throw`,
    /// `base::OS::Abort`), 6 (SIGABRT) where node's `Abort()` does
    /// (`triggerUncaughtException` from JavaScript, `src/node_errors.cc`).
    Aborted(i32),
}

/// The signal of V8's abort on an uncaught exception (`IMMEDIATE_CRASH`).
pub const SIGTRAP: i32 = 5;
/// The signal of node's `Abort()`.
pub const SIGABRT: i32 = 6;

impl ResourceView {
    /// Whether `got` is an answer Node may give where the model says `self`:
    /// the same, or anything where the model says [`ResourceView::Unspecified`].
    pub fn admits(&self, got: &ResourceView) -> bool {
        *self == ResourceView::Unspecified || self == got
    }
}

impl Observation {
    /// Whether `got` is an answer Node may give where the model observes
    /// `self`: the same observation, or the same one with any resource where
    /// the model's resource is [`ResourceView::Unspecified`].
    pub fn admits(&self, got: &Observation) -> bool {
        match (self, got) {
            (Observation::ExecutionAsyncResource(a), Observation::ExecutionAsyncResource(b)) => {
                a.admits(b)
            }
            (
                Observation::Tick {
                    resource: Some(a),
                    async_id,
                    execution_async_id,
                    trigger_async_id,
                },
                Observation::Tick {
                    resource: Some(b),
                    async_id: async_id_b,
                    execution_async_id: execution_b,
                    trigger_async_id: trigger_b,
                },
            ) => {
                (async_id, execution_async_id, trigger_async_id)
                    == (async_id_b, execution_b, trigger_b)
                    && a.admits(b)
            }
            _ => self == got,
        }
    }

    /// [`Observation::admits`] for every observation of an op, in order.
    pub fn admits_all(expected: &[Observation], got: &[Observation]) -> bool {
        expected.len() == got.len() && expected.iter().zip(got).all(|(e, g)| e.admits(g))
    }

    /// Whether the process ended with this observation.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            Observation::CorruptedStack { .. }
                | Observation::CheckFailed(_)
                | Observation::Exit(_)
                | Observation::Aborted(_)
        )
    }
}

impl fmt::Display for ResourceView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceView::Resource(r) => write!(f, "{r}"),
            ResourceView::Main => f.write_str("main"),
            ResourceView::TickObject(id) => write!(f, "tick:{id}"),
            ResourceView::Immediate(id) => write!(f, "immediate:{id}"),
            ResourceView::TopLevel => f.write_str("topLevelResource"),
            ResourceView::Process => f.write_str("process"),
            ResourceView::Unspecified => f.write_str("unspecified"),
            ResourceView::Undefined => f.write_str("undefined"),
            ResourceView::Microtask(id) => write!(f, "microtask:{id}"),
            ResourceView::Promise(id) => write!(f, "promise:{id}"),
            ResourceView::Timeout(id) => write!(f, "timeout:{id}"),
        }
    }
}

impl fmt::Display for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observation::ExecutionAsyncId(id) => write!(f, "executionAsyncId = {id}"),
            Observation::TriggerAsyncId(id) => write!(f, "triggerAsyncId = {id}"),
            Observation::ExecutionAsyncResource(r) => write!(f, "executionAsyncResource = {r}"),
            Observation::DefaultTriggerAsyncId(id) => write!(f, "getDefaultTriggerAsyncId = {id}"),
            Observation::NewAsyncId(id) => write!(f, "newAsyncId = {id}"),
            Observation::Hook {
                hook,
                event,
                execution_async_id,
                trigger_async_id,
            } => {
                match event {
                    HookEvent::Init {
                        async_id,
                        type_name,
                        trigger_async_id,
                        resource,
                    } => write!(f, "{hook}.init({async_id}, {type_name}, {trigger_async_id}, {resource})")?,
                    HookEvent::Before(id) => write!(f, "{hook}.before({id})")?,
                    HookEvent::After(id) => write!(f, "{hook}.after({id})")?,
                    HookEvent::Destroy(id) => write!(f, "{hook}.destroy({id})")?,
                    HookEvent::PromiseResolve(id) => write!(f, "{hook}.promiseResolve({id})")?,
                }
                write!(f, " in [{execution_async_id}, {trigger_async_id}]")
            }
            Observation::Tick {
                async_id,
                execution_async_id,
                trigger_async_id,
                resource,
            } => {
                write!(f, "tick {async_id} sees [{execution_async_id}, {trigger_async_id}]")?;
                if let Some(r) = resource {
                    write!(f, " resource {r}")?;
                }
                Ok(())
            }
            Observation::Store { als, value } => match value {
                Some(v) => write!(f, "{als}.getStore() = {v}"),
                None => write!(f, "{als}.getStore() = undefined"),
            },
            Observation::TickStore {
                async_id,
                als,
                value,
            } => write!(f, "tick {async_id} store {als}.getStore() = {value}"),
            Observation::Timeout {
                async_id,
                execution_async_id,
                trigger_async_id,
            } => write!(
                f,
                "timeout {async_id} sees [{execution_async_id}, {trigger_async_id}]"
            ),
            Observation::TimeoutStore {
                async_id,
                als,
                value,
            } => write!(f, "timeout {async_id} store {als}.getStore() = {value}"),
            Observation::UnhandledRejection {
                execution_async_id,
                trigger_async_id,
            } => write!(
                f,
                "unhandled rejection sees [{execution_async_id}, {trigger_async_id}]"
            ),
            Observation::RejectionHandled {
                execution_async_id,
                trigger_async_id,
            } => write!(
                f,
                "rejection handled sees [{execution_async_id}, {trigger_async_id}]"
            ),
            Observation::Microtask {
                promise,
                execution_async_id,
                trigger_async_id,
            } => write!(
                f,
                "{} sees [{execution_async_id}, {trigger_async_id}]",
                if *promise { "promise reaction" } else { "microtask" }
            ),
            Observation::CorruptedStack {
                actual,
                expected,
                abort,
            } => write!(
                f,
                "Error: async hook stack has become corrupted (actual: {actual}, expected: {expected}); {}",
                if *abort { "abort (SIGABRT)" } else { "exit 1" }
            ),
            Observation::ExceptionLost => f.write_str("exception lost"),
            Observation::CheckFailed(c) => write!(f, "CHECK failed: {c:?}; abort"),
            Observation::Exit(code) => write!(f, "exit {code}"),
            Observation::Aborted(signal) => write!(
                f,
                "abort ({})",
                match *signal {
                    SIGTRAP => "SIGTRAP",
                    SIGABRT => "SIGABRT",
                    _ => "another signal",
                }
            ),
        }
    }
}
