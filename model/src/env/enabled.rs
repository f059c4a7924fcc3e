//! When each op can happen: [`Environment::enabled`], the enabling
//! condition of every entry point, apart from what the entry point does.
//! As in a TLA+ action, the conjuncts come first and the effect after:
//! [`Runtime::apply`](crate::vocab::Runtime::apply) is `enabled`, then the
//! effect, which never refuses. The conjuncts every op shares are here, with
//! [`Refusal`], the one list of explanations; an op's own conjuncts are in
//! its family's module, beside its effect ([`crate::vocab::Family`]).
//!
//! A refusal is not Node's behaviour: it says the trace asks for something
//! no program can do in this state (JavaScript with no native scope open,
//! closing a frame that is not the innermost), or something the model does
//! not describe (an exception that leaves a microtask), and why.

use super::{AsyncIdStack, Environment, Frame};
use crate::vocab::{
    AlsId, AsyncId, Facts, Family, HookId, NodeVersion, Op, OpError, OpKind, ResourceId,
    ResourceView,
};
use std::fmt;

/// A frame as a refusal names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameName {
    /// A native scope with its `async_context`.
    Native(AsyncId, AsyncId),
    /// `runInAsyncScope` of the AsyncResource with this id.
    RunInAsyncScope(AsyncId),
    /// `defaultTriggerAsyncIdScope`.
    DefaultTriggerScope,
    /// `als.run` or `als.exit`.
    AlsRun(AlsId),
    /// The callback of the tick with this id.
    Tick(AsyncId),
    /// A microtask's callback.
    Microtask,
    /// The body of an ES module entry (a microtask job).
    ModuleBody,
    /// The `uncaughtException` listener.
    Listener,
    /// The callback of the Timeout with this id.
    Timer(AsyncId),
}

impl fmt::Display for FrameName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameName::Native(id, trigger) => write!(f, "a native scope ({id} {trigger})"),
            FrameName::RunInAsyncScope(id) => write!(f, "run-in-async-scope {id}"),
            FrameName::DefaultTriggerScope => f.write_str("default-trigger-scope"),
            FrameName::AlsRun(als) => write!(f, "als-run {als} (or als-exit)"),
            FrameName::Tick(id) => write!(f, "the callback of tick {id}"),
            FrameName::Microtask => f.write_str("a microtask's callback"),
            FrameName::ModuleBody => f.write_str("the ES module's body (ended by `close`)"),
            FrameName::Listener => f.write_str("the uncaughtException listener"),
            FrameName::Timer(id) => write!(f, "the callback of Timeout {id}"),
        }
    }
}

impl<S: AsyncIdStack> Frame<S> {
    /// How a refusal names this frame.
    pub fn name(&self) -> FrameName {
        match self {
            Frame::Native(s) => {
                FrameName::Native(s.async_context.async_id, s.async_context.trigger_async_id)
            }
            Frame::RunInAsyncScope { async_id, .. } => FrameName::RunInAsyncScope(*async_id),
            Frame::DefaultTriggerScope { .. } => FrameName::DefaultTriggerScope,
            Frame::AlsRun { als, .. } => FrameName::AlsRun(*als),
            Frame::Tick { tick, .. } => FrameName::Tick(tick.async_id),
            f @ Frame::Microtask { .. } if f.is_module_body() => FrameName::ModuleBody,
            Frame::Microtask { .. } => FrameName::Microtask,
            Frame::Listener => FrameName::Listener,
            Frame::Timer { timeout, .. } => FrameName::Timer(timeout.async_id),
        }
    }
}

/// Why an op cannot happen in a state ([`Environment::enabled`]). Its
/// `Display` is the explanation a trace's author reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal<'op> {
    /// The process has already exited.
    Exited,
    /// An exception while the `uncaughtException` listener runs.
    ThrowInListener(&'op Op),
    /// `uncaught-exception-listener` where the exception is not reported
    /// at a native scope (a tick's or a microtask's callback threw).
    ListenerOnlyAtNativeScope(FrameName),
    /// The innermost callback threw and returned: only its close (or `stop`,
    /// `reset-global`) can follow.
    CallbackThrew(&'op Op),
    /// `close threw` on the main script's or `RunTimers`' scope.
    BareScopeThrew,
    // Issue 55: where a bare make-callback's exception goes.
    /// An exception is in flight in the caller of a bare make-callback: only
    /// `catch` or `uncaught-exception` can follow.
    ExceptionInFlight(&'op Op),
    /// `catch` with no exception in flight.
    NothingToCatch,
    /// `uncaught-exception` in a bare make-callback called from JavaScript:
    /// the exception leaves the callback through `node::MakeCallback`.
    BareThrowGoesToCaller,
    /// `close threw` of a bare make-callback with no JavaScript below it
    /// (from the event loop) before its `uncaught-exception`.
    BareThrowFromEventLoop,
    /// A bare make-callback under `--abort-on-uncaught-exception`.
    BareMakeCallbackWithAbort,
    /// A header op after the program started.
    HeaderAfterStart(&'op Op),
    /// `no-force-async-hooks-checks` a second time.
    ChecksAlreadyOff,
    /// `node-version` a second time (the first named this one).
    VersionAlreadyNamed(NodeVersion),
    /// `promise-catch` with no rejected promise left without a handler.
    NoRejectedPromise,
    /// `uncaught-exception` with `--abort-on-uncaught-exception` in a native
    /// scope opened inside a promise reaction's callback.
    AbortInsideReaction,
    /// `entry-module` after the main script's context was left, or with a
    /// frame above it.
    ModuleNotFirst,
    /// JavaScript once the environment is stopping.
    JsWhileStopping(&'op Op),
    /// JavaScript with no native scope open.
    JsOutsideScopes(&'op Op),
    /// `async-resource` on node version 20.
    AlsOnV20(&'op Op),
    /// v20: an op that reads AsyncLocalStorage stores on
    /// `executionAsyncResource()` where it is `undefined` or unspecified.
    StoreWithoutResource(&'op Op, ResourceView),
    /// A `Global<Object>*` resource on node version 20.
    GlobalOnV20(ResourceId),
    /// `reset-global` on node version 20.
    ResetGlobalOnV20(ResourceId),
    /// `make-callback ... global R`.
    MakeCallbackGlobal,
    /// `make-callback` with `skip-hooks` or `skip-queues`.
    MakeCallbackFlags,
    /// `timers-scope` while a native scope is open.
    TimersInsideScope,
    /// `close-outer K` with at most `K` native scopes open.
    TooFewNativeScopes {
        /// The `K` asked for.
        outer: u32,
        /// The native scopes open.
        open: usize,
    },
    /// `close-outer K` whose scope is not an addon's `node::CallbackScope`.
    NotAnAddonScope {
        /// The `K` asked for.
        outer: u32,
        /// The scope it names.
        scope: FrameName,
    },
    /// `create-hook` of a hook that exists.
    HookExists(HookId),
    /// `create-hook` of the id the model keeps for Node's own hook (v20's
    /// `storageHook`, [`super::hooks::STORAGE_HOOK`]).
    HookReserved(HookId),
    /// `enable-hook` or `disable-hook` of a hook never created.
    HookMissing(HookId),
    /// `queue-microtask` whose `AsyncResource` would throw for its trigger.
    MicrotaskTriggerInvalid(AsyncId),
    /// `uncaught-exception` with a JS frame innermost.
    ThrowInsideJsFrame(FrameName),
    /// An op that ends a frame of one sort while another is innermost.
    NotInnermost(OpKind, FrameName),
    /// An op that ends a frame, or throws, with no frame open.
    NothingOpen(OpKind),
    // Issue 24: native scopes that enter a stored frame.
    /// `napi-make-callback R` with no `napi-async-init R` before it.
    NoAsyncContext(ResourceId),
    /// `timer` where the innermost frame is not `RunTimers`' scope.
    TimerOutsideRunTimers,
    /// `timer` with no Timeout waiting.
    NoTimeoutWaiting,
    /// `timer` where `runNextTicks()` runs first and a tick or microtask
    /// with a body is queued.
    TimerAfterBodyQueued,
    /// `clear-timeout N` where no Timeout with id N is waiting or running
    /// its callback (or it was cleared already).
    NoSuchTimeout(AsyncId),
}

impl fmt::Display for Refusal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Exited => f.write_str("the process has already exited"),
            Refusal::ThrowInListener(op) => write!(
                f,
                "`{op}`: the uncaughtException listener is running; an exception inside it is not in the model (end-listener first)"
            ),
            Refusal::ListenerOnlyAtNativeScope(frame) => write!(
                f,
                "uncaught-exception-listener: a listener with a body is written only for an exception a native scope's callback throws; the innermost frame is {frame} (write `uncaught-exception handled`)"
            ),
            Refusal::CallbackThrew(op) => write!(
                f,
                "`{op}`: the innermost callback threw (uncaught-exception), so nothing of it runs any more; close it first"
            ),
            Refusal::BareScopeThrew => f.write_str(
                "close threw: the main script's and RunTimers' scopes are bare InternalCallbackScopes that nothing marks failed; write `close`",
            ),
            Refusal::ExceptionInFlight(op) => write!(
                f,
                "`{op}`: the exception the bare make-callback's callback threw is in flight in the JavaScript that called the addon; the next op is `catch` (that JavaScript catches it) or `uncaught-exception handled|unhandled` (it goes on to be reported)"
            ),
            Refusal::NothingToCatch => f.write_str(
                "catch: no exception is in flight (catch follows the `close threw` of a bare make-callback whose exception came back to its caller; Node 26 loses one whose close shortened the JS resource array, as after the trampoline: `=> exception lost`, docs/node-findings.md F8)",
            ),
            Refusal::BareThrowGoesToCaller => f.write_str(
                "uncaught-exception in a bare make-callback called from JavaScript: what its callback throws leaves it through node::MakeCallback to the caller; write `close threw`, then `catch` or `uncaught-exception` in the caller",
            ),
            Refusal::BareThrowFromEventLoop => f.write_str(
                "close threw of a bare make-callback with no JavaScript below it (from the event loop): V8 reports the exception at once, while its entry is pushed; write `uncaught-exception` in it first",
            ),
            Refusal::BareMakeCallbackWithAbort => f.write_str(
                "a bare make-callback with --abort-on-uncaught-exception: whether V8 aborts at a throw above it depends on whether the JavaScript that called it has a try (V8's catch prediction walks through node::MakeCallback into it), which the trace does not say; not described",
            ),
            Refusal::HeaderAfterStart(op) => write!(
                f,
                "{op} describes how the process starts: only before every other op"
            ),
            Refusal::ChecksAlreadyOff => f.write_str("no-force-async-hooks-checks is given once"),
            Refusal::VersionAlreadyNamed(v) => write!(
                f,
                "node-version is given once, and the trace already said `node-version {v}`"
            ),
            Refusal::AbortInsideReaction => f.write_str(
                "uncaught-exception with --abort-on-uncaught-exception in a scope opened inside a promise reaction's callback: both binaries report it as without the flag there (no abort), which the model does not explain (V8's catch prediction in a promise job); not described",
            ),
            Refusal::NoRejectedPromise => f.write_str(
                "promise-catch: no rejected promise without a handler (promise-catch handles the most recent one, after promise-reject or a reaction that threw)",
            ),
            Refusal::ModuleNotFirst => {
                f.write_str("entry-module is given once, before every other op")
            }
            Refusal::JsWhileStopping(op) => write!(
                f,
                "`{op}` is JavaScript, and no JavaScript runs once the environment is stopping"
            ),
            Refusal::JsOutsideScopes(op) => write!(
                f,
                "`{op}` is JavaScript, and JavaScript runs only inside a native scope (open one with callback-scope or make-callback)"
            ),
            Refusal::AlsOnV20(op) => write!(
                f,
                "`{op}`: on node v20 an AsyncResource captures no AsyncContextFrame (there AsyncLocalStorage keeps its stores on resource objects, copied by an init hook), so the op means nothing; it runs on node version 26 (drop `node-version 20`)"
            ),
            Refusal::StoreWithoutResource(op, view) => write!(
                f,
                "`{op}`: on node v20 AsyncLocalStorage's run, enterWith, getStore and init hook (storageHook, which runs for every new resource while a storage is enabled) read stores on executionAsyncResource(), which is {view} here (a JS context pushed without a resource, or a read of freed memory): Node throws a TypeError or reads garbage, which the model does not describe (emit-after pops such a context)"
            ),
            Refusal::GlobalOnV20(r) => write!(
                f,
                "`global {r}`: node v20's node::CallbackScope has only the Local<Object> constructors (the Global<Object>* one is Node 26's); write the resource without `global`, or drop `node-version 20`"
            ),
            Refusal::ResetGlobalOnV20(r) => write!(
                f,
                "reset-global {r}: on node v20 no scope holds a Global<Object>* (node::CallbackScope has no such constructor before Node 26)"
            ),
            Refusal::MakeCallbackGlobal => f.write_str(
                "make-callback takes its resource as a Local<Object>; write it without `global`",
            ),
            Refusal::MakeCallbackFlags => f.write_str(
                "make-callback chooses its own flags; write it without skip-hooks / skip-queues",
            ),
            Refusal::TimersInsideScope => f.write_str(
                "timers-scope: RunTimers runs from the event loop, when no native scope is open (close the main script's first)",
            ),
            Refusal::TooFewNativeScopes { outer, open } => write!(
                f,
                "close-outer {outer}: only {open} native scopes are open"
            ),
            Refusal::NotAnAddonScope { outer, scope } => write!(
                f,
                "close-outer {outer}: that is {scope}, and only a node::CallbackScope that an addon opened is deleted out of order"
            ),
            Refusal::HookExists(hook) => write!(f, "hook {hook} was already created"),
            Refusal::HookReserved(hook) => write!(
                f,
                "hook {hook} is the model's name for Node's own hook (v20's AsyncLocalStorage storageHook); name the trace's hook otherwise"
            ),
            Refusal::HookMissing(hook) => write!(
                f,
                "hook {hook} was never created (create-hook {hook} ...)"
            ),
            Refusal::MicrotaskTriggerInvalid(trigger) => write!(
                f,
                "queue-microtask: queueMicrotask makes an AsyncResource('Microtask') here, whose constructor throws ERR_INVALID_ASYNC_ID for its trigger getDefaultTriggerAsyncId() = {trigger} (below -1); the model has no op that throws (write `uncaught-exception` for the throw)"
            ),
            Refusal::ThrowInsideJsFrame(frame) => write!(
                f,
                "uncaught-exception: the exception reaches the native scope (or the tick callback) only after the JS frames around it end; the innermost frame is {frame}"
            ),
            Refusal::NotInnermost(kind, frame) => write!(
                f,
                "{kind}: the innermost frame is {frame}, end it first"
            ),
            Refusal::NothingOpen(kind) => {
                let what = match kind {
                    OpKind::ExitRunInAsyncScope => "no run-in-async-scope is open",
                    OpKind::ExitDefaultTriggerScope => "no default-trigger-scope is open",
                    OpKind::EndAlsRun => "no als-run or als-exit is open",
                    OpKind::EndTick => "no tick callback is running",
                    OpKind::EndMicrotask => "no microtask callback is running",
                    OpKind::EndListener => "no uncaughtException listener is running",
                    OpKind::EndTimer => "no Timeout's callback is running",
                    _ => "no native scope is open",
                };
                write!(f, "{kind}: {what}")
            }
            Refusal::NoAsyncContext(r) => write!(
                f,
                "napi-make-callback {r}: no napi_async_context was made on {r} (write napi-async-init {r} first)"
            ),
            Refusal::TimerOutsideRunTimers => f.write_str(
                "timer: processTimers runs Timeouts in RunTimers' scope only (the innermost frame must be a timers-scope)",
            ),
            Refusal::NoTimeoutWaiting => f.write_str(
                "timer: no Timeout is waiting (write set-timeout first; each runs once)",
            ),
            Refusal::NoSuchTimeout(id) => write!(
                f,
                "clear-timeout {id}: no Timeout {id} is waiting or running its callback (the id of a set-timeout, not yet run to its end nor cleared)"
            ),
            Refusal::TimerAfterBodyQueued => f.write_str(
                "timer: processTimers calls runNextTicks() before this Timeout (after the one before it, or a list a throwing Timeout left), and a tick or microtask with a body is queued: the model does not run a body inside that call (end the body's frame first, or write another op between)",
            ),
        }
    }
}

impl Refusal<'_> {
    /// Whether the refusal is about the op's arguments, so that an op of the
    /// same kind with others may be enabled here (`close` for `close threw`,
    /// a Local resource for a Global one, another hook, another `K`).
    pub fn is_about_arguments(&self) -> bool {
        match self {
            Refusal::BareScopeThrew
            | Refusal::BareThrowFromEventLoop
            | Refusal::BareMakeCallbackWithAbort
            | Refusal::GlobalOnV20(_)
            | Refusal::MakeCallbackGlobal
            | Refusal::MakeCallbackFlags
            | Refusal::TooFewNativeScopes { .. }
            | Refusal::NotAnAddonScope { .. }
            | Refusal::HookExists(_)
            | Refusal::HookReserved(_)
            | Refusal::HookMissing(_)
            | Refusal::NoAsyncContext(_) => true,
            // Another storage may not be enabled, so its getStore() reads nothing.
            Refusal::StoreWithoutResource(op, _) => matches!(op, Op::AlsGetStore(_)),
            Refusal::Exited
            | Refusal::CallbackThrew(_)
            | Refusal::ThrowInListener(_)
            | Refusal::ListenerOnlyAtNativeScope(_)
            | Refusal::HeaderAfterStart(_)
            | Refusal::ExceptionInFlight(_)
            | Refusal::NothingToCatch
            | Refusal::BareThrowGoesToCaller
            | Refusal::ChecksAlreadyOff
            | Refusal::VersionAlreadyNamed(_)
            | Refusal::NoRejectedPromise
            | Refusal::AbortInsideReaction
            | Refusal::ModuleNotFirst
            | Refusal::JsWhileStopping(_)
            | Refusal::JsOutsideScopes(_)
            | Refusal::AlsOnV20(_)
            | Refusal::ResetGlobalOnV20(_)
            | Refusal::TimersInsideScope
            | Refusal::MicrotaskTriggerInvalid(_)
            | Refusal::ThrowInsideJsFrame(_)
            | Refusal::NotInnermost(..)
            | Refusal::NothingOpen(_)
            | Refusal::TimerOutsideRunTimers
            | Refusal::NoTimeoutWaiting
            | Refusal::TimerAfterBodyQueued
            | Refusal::NoSuchTimeout(_) => false,
        }
    }
}

impl From<Refusal<'_>> for OpError {
    fn from(refusal: Refusal<'_>) -> OpError {
        match refusal {
            Refusal::Exited => OpError::Exited,
            other => OpError::Impossible(other.to_string()),
        }
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// Whether `op` can happen now, and if not, why: the conjuncts every op
    /// shares (the process is alive; after a callback threw only its close
    /// follows; header ops come first; node version 20 lacks what needs
    /// Node 26; JavaScript needs an open native scope and an environment
    /// that is not stopping), then the op's own, in the module of its
    /// [`Family`] (`*_enabled`, beside the family's `*_effect`).
    #[inline]
    pub fn enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        self.enabled_with(op, op.kind().facts())
    }

    /// [`Environment::enabled`], given the facts of the op's kind (`apply`
    /// looks them up once for both halves).
    pub(super) fn enabled_with<'op>(&self, op: &'op Op, facts: Facts) -> Result<(), Refusal<'op>> {
        if self.exited {
            return Err(Refusal::Exited);
        }
        let handles_exception = matches!(
            op,
            Op::Catch | Op::UncaughtException { .. } | Op::UncaughtExceptionListener
        );
        if self.exception_in_flight && !handles_exception {
            return Err(Refusal::ExceptionInFlight(op));
        }
        if let Some(Frame::Native(scope)) = self.frames.last() {
            let ends_it = matches!(op, Op::CloseScope { .. } | Op::Stop | Op::ResetGlobal(_));
            if scope.threw && !ends_it {
                return Err(Refusal::CallbackThrew(op));
            }
            if scope.is_bare() && matches!(op, Op::CloseScope { threw: true }) {
                return Err(Refusal::BareScopeThrew);
            }
        }
        if facts.header && self.program_started {
            return Err(Refusal::HeaderAfterStart(op));
        }
        if self.version == NodeVersion::V20 && op.needs_node26() {
            return Err(match op {
                Op::OpenScope { resource, .. } => Refusal::GlobalOnV20(resource.id),
                Op::ResetGlobal(r) => Refusal::ResetGlobalOnV20(*r),
                _ => Refusal::AlsOnV20(op),
            });
        }
        if facts.runs_js {
            self.js_can_run(op)?;
        }
        if self.version == NodeVersion::V20 {
            self.resource_stores_enabled(op)?;
        }
        match facts.family {
            Family::Process => self.process_enabled(op),
            Family::CallbackScope => self.callback_scope_enabled(op),
            Family::Hooks => self.hooks_enabled(op),
            Family::Js => self.js_enabled(op),
            Family::Ticks => self.ticks_enabled(op),
            Family::Microtasks => self.microtasks_enabled(op),
            Family::Rejections => self.rejections_enabled(op),
            Family::Exceptions => self.exceptions_enabled(op),
            Family::ContextFrame => self.context_frame_enabled(op),
            Family::Timers => self.timers_enabled(op),
        }
    }

    /// JavaScript runs: the environment is not stopping, and a native scope
    /// is open (the main script's, a callback's, or a `Close` that runs the
    /// queues).
    pub(super) fn js_can_run<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        if self.is_stopping {
            return Err(Refusal::JsWhileStopping(op));
        }
        if self.async_callback_scope_depth == 0 {
            return Err(Refusal::JsOutsideScopes(op));
        }
        Ok(())
    }

    /// The innermost frame is the one `kind` ends (`is`).
    pub(super) fn innermost_is(
        &self,
        kind: OpKind,
        is: impl Fn(&Frame<S>) -> bool,
    ) -> Result<(), Refusal<'static>> {
        match self.frames.last() {
            Some(frame) if is(frame) => Ok(()),
            Some(other) => Err(Refusal::NotInnermost(kind, other.name())),
            None => Err(Refusal::NothingOpen(kind)),
        }
    }
}
