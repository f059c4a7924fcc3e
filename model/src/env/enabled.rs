//! When each op can happen: [`Environment::enabled`], the enabling
//! condition of every entry point, apart from what the entry point does
//! (the rest of [`super`]). As in a TLA+ action, the conjuncts come first
//! and the effect after: [`Runtime::apply`](crate::vocab::Runtime::apply)
//! is `enabled`, then the effect, which never refuses.
//!
//! A refusal is not Node's behaviour: it says the trace asks for something
//! no program can do in this state (JavaScript with no native scope open,
//! closing a frame that is not the innermost), or something the model does
//! not describe (an exception that leaves a microtask), and why.

use super::callback_scope::InternalCallbackScope;
use super::ticks::TickRun;
use super::{AsyncIdStack, Environment, Frame};
use crate::vocab::{
    AlsId, AsyncId, Holder, HookId, NodeVersion, Op, OpError, OpKind, ResourceId, ScopeFlags,
    ScopeKind,
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
            Frame::Microtask { .. } => FrameName::Microtask,
        }
    }
}

/// Why an op cannot happen in a state ([`Environment::enabled`]). Its
/// `Display` is the explanation a trace's author reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal<'op> {
    /// The process has already exited.
    Exited,
    /// The innermost callback threw and returned: only its close (or `stop`,
    /// `reset-global`) can follow.
    CallbackThrew(&'op Op),
    /// `close threw` on the main script's or `RunTimers`' scope.
    BareScopeThrew,
    /// A header op after the program started.
    HeaderAfterStart(&'op Op),
    /// `no-force-async-hooks-checks` a second time.
    ChecksAlreadyOff,
    /// `entry-module` after the main script's context was left, or with a
    /// frame above it.
    ModuleNotFirst,
    /// JavaScript once the environment is stopping.
    JsWhileStopping(&'op Op),
    /// JavaScript with no native scope open.
    JsOutsideScopes(&'op Op),
    /// An `AsyncLocalStorage` op (or `async-resource`) on node version 20.
    AlsOnV20(&'op Op),
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
    /// `enable-hook` or `disable-hook` of a hook never created.
    HookMissing(HookId),
    /// `queue-microtask` whose `AsyncResource` would throw for its trigger.
    MicrotaskTriggerInvalid(AsyncId),
    /// An exception that would leave a microtask's callback.
    ThrowLeavesMicrotask,
    /// `uncaught-exception` with a JS frame innermost.
    ThrowInsideJsFrame(FrameName),
    /// An op that ends a frame of one sort while another is innermost.
    NotInnermost(OpKind, FrameName),
    /// An op that ends a frame, or throws, with no frame open.
    NothingOpen(OpKind),
}

impl fmt::Display for Refusal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Exited => f.write_str("the process has already exited"),
            Refusal::CallbackThrew(op) => write!(
                f,
                "`{op}`: the innermost callback threw (uncaught-exception), so nothing of it runs any more; close it first"
            ),
            Refusal::BareScopeThrew => f.write_str(
                "close threw: the main script's and RunTimers' scopes are bare InternalCallbackScopes that nothing marks failed; write `close`",
            ),
            Refusal::HeaderAfterStart(op) => write!(
                f,
                "{op} describes how the process starts: only before every other op"
            ),
            Refusal::ChecksAlreadyOff => f.write_str("no-force-async-hooks-checks is given once"),
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
                "`{op}`: on node v20 AsyncLocalStorage is built on async hooks (it enables an init hook and calls executionAsyncResource(), so every later scope is eager), which the model does not describe; the ALS ops run on node version 26 (drop `node-version 20`)"
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
            Refusal::HookMissing(hook) => write!(
                f,
                "hook {hook} was never created (create-hook {hook} ...)"
            ),
            Refusal::MicrotaskTriggerInvalid(trigger) => write!(
                f,
                "queue-microtask: queueMicrotask makes an AsyncResource('Microtask') here, whose constructor throws ERR_INVALID_ASYNC_ID for its trigger getDefaultTriggerAsyncId() = {trigger} (below -1); the model has no op that throws (write `uncaught-exception` for the throw)"
            ),
            Refusal::ThrowLeavesMicrotask => f.write_str(
                "uncaught-exception inside a microtask's callback: the exception leaves the job (a queueMicrotask's through runMicrotask's and runInAsyncScope's finally blocks, a reaction's by rejecting the derived promise, reported later as an unhandled rejection) and V8's checkpoint goes on with the next job; the model does not describe that (end the microtask with end-microtask)",
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
                    _ => "no native scope is open",
                };
                write!(f, "{kind}: {what}")
            }
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
            | Refusal::GlobalOnV20(_)
            | Refusal::MakeCallbackGlobal
            | Refusal::MakeCallbackFlags
            | Refusal::TooFewNativeScopes { .. }
            | Refusal::NotAnAddonScope { .. }
            | Refusal::HookExists(_)
            | Refusal::HookMissing(_) => true,
            Refusal::Exited
            | Refusal::CallbackThrew(_)
            | Refusal::HeaderAfterStart(_)
            | Refusal::ChecksAlreadyOff
            | Refusal::ModuleNotFirst
            | Refusal::JsWhileStopping(_)
            | Refusal::JsOutsideScopes(_)
            | Refusal::AlsOnV20(_)
            | Refusal::ResetGlobalOnV20(_)
            | Refusal::TimersInsideScope
            | Refusal::MicrotaskTriggerInvalid(_)
            | Refusal::ThrowLeavesMicrotask
            | Refusal::ThrowInsideJsFrame(_)
            | Refusal::NotInnermost(..)
            | Refusal::NothingOpen(_) => false,
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
    /// Whether `op` can happen now, and if not, why: the conditions every op
    /// shares (the process is alive; after a callback threw only its close
    /// follows; header ops come first; node version 20 lacks what needs
    /// Node 26), then the op's own.
    pub fn enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        if self.exited {
            return Err(Refusal::Exited);
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
        if op.kind().is_header() && self.program_started {
            return Err(Refusal::HeaderAfterStart(op));
        }
        if self.version == NodeVersion::V20 && op.needs_node26() {
            return Err(match op {
                Op::OpenScope { resource, .. } => Refusal::GlobalOnV20(resource.id),
                Op::ResetGlobal(r) => Refusal::ResetGlobalOnV20(*r),
                _ => Refusal::AlsOnV20(op),
            });
        }
        match op {
            Op::NoForceAsyncHooksChecks => {
                if self.async_hooks.fields.k_check == 0 {
                    return Err(Refusal::ChecksAlreadyOff);
                }
                Ok(())
            }
            Op::EntryModule => match self.frames.as_slice() {
                [Frame::Native(main)] if main.pushed_ids => Ok(()),
                _ => Err(Refusal::ModuleNotFirst),
            },
            Op::NodeVersion(_) | Op::Stop => Ok(()),
            Op::OpenScope {
                kind,
                resource,
                flags,
                ..
            } => match kind {
                ScopeKind::CallbackScope => Ok(()),
                ScopeKind::MakeCallback if resource.holder == Holder::Global => {
                    Err(Refusal::MakeCallbackGlobal)
                }
                ScopeKind::MakeCallback if *flags != ScopeFlags::default() => {
                    Err(Refusal::MakeCallbackFlags)
                }
                ScopeKind::MakeCallback => Ok(()),
            },
            Op::TimersScope => {
                if self.async_callback_scope_depth > 0 {
                    return Err(Refusal::TimersInsideScope);
                }
                Ok(())
            }
            Op::CloseScope { .. } => {
                self.innermost_is(OpKind::CloseScope, |f| matches!(f, Frame::Native(_)))
            }
            Op::CloseOuter { outer } => {
                let Some(index) = self.outer_scope_index(*outer) else {
                    let open = self.frames.iter().filter(|f| matches!(f, Frame::Native(_)));
                    return Err(Refusal::TooFewNativeScopes {
                        outer: *outer,
                        open: open.count(),
                    });
                };
                let frame = &self.frames[index];
                match frame {
                    Frame::Native(scope) if is_addon_scope(scope) => Ok(()),
                    _ => Err(Refusal::NotAnAddonScope {
                        outer: *outer,
                        scope: frame.name(),
                    }),
                }
            }
            Op::ResetGlobal(_) => Ok(()),
            Op::CreateHook { hook, .. } => {
                self.js_can_run(op)?;
                if self.hooks.created.contains_key(hook) {
                    return Err(Refusal::HookExists(*hook));
                }
                Ok(())
            }
            Op::EnableHook(hook) | Op::DisableHook(hook) => {
                self.js_can_run(op)?;
                if !self.hooks.created.contains_key(hook) {
                    return Err(Refusal::HookMissing(*hook));
                }
                Ok(())
            }
            Op::EmitInit { .. }
            | Op::EmitBefore { .. }
            | Op::EmitAfter { .. }
            | Op::EmitDestroy { .. }
            | Op::EnterRunInAsyncScope { .. }
            | Op::EnterDefaultTriggerScope { .. }
            | Op::NextTick { .. }
            | Op::NextTickBody
            | Op::TickCallback
            | Op::PromiseThen
            | Op::PromiseThenBody
            | Op::PromiseReject
            | Op::ExecutionAsyncId
            | Op::TriggerAsyncId
            | Op::ExecutionAsyncResource
            | Op::DefaultTriggerAsyncId
            | Op::NewAsyncId
            | Op::ClearAsyncIdStack => self.js_can_run(op),
            Op::QueueMicrotask | Op::QueueMicrotaskBody => {
                self.js_can_run(op)?;
                if self.queue_microtask_throws() {
                    let trigger = self.get_default_trigger_async_id();
                    return Err(Refusal::MicrotaskTriggerInvalid(trigger));
                }
                Ok(())
            }
            Op::ExitRunInAsyncScope => self.innermost_is(OpKind::ExitRunInAsyncScope, |f| {
                matches!(f, Frame::RunInAsyncScope { .. })
            }),
            Op::ExitDefaultTriggerScope => self
                .innermost_is(OpKind::ExitDefaultTriggerScope, |f| {
                    matches!(f, Frame::DefaultTriggerScope { .. })
                }),
            Op::EndTick => self.innermost_is(OpKind::EndTick, |f| matches!(f, Frame::Tick { .. })),
            Op::EndMicrotask => self.innermost_is(OpKind::EndMicrotask, |f| {
                matches!(f, Frame::Microtask { .. })
            }),
            Op::UncaughtException { .. } => {
                self.js_can_run(op)?;
                match self.frames.last() {
                    Some(Frame::Native(_)) => Ok(()),
                    Some(Frame::Microtask { .. }) => Err(Refusal::ThrowLeavesMicrotask),
                    Some(Frame::Tick { .. }) => self.tick_throw_stays_out_of_microtasks(),
                    Some(other) => Err(Refusal::ThrowInsideJsFrame(other.name())),
                    None => Err(Refusal::NothingOpen(OpKind::UncaughtException)),
                }
            }
            Op::AlsRun { .. }
            | Op::AlsExit(_)
            | Op::AlsEnterWith { .. }
            | Op::AlsGetStore(_)
            | Op::AsyncResource(_) => self.js_can_run(op),
            Op::EndAlsRun => {
                self.innermost_is(OpKind::EndAlsRun, |f| matches!(f, Frame::AlsRun { .. }))
            }
        }
    }

    /// JavaScript runs: the environment is not stopping, and a native scope
    /// is open (the main script's, a callback's, or a `Close` that runs the
    /// queues).
    fn js_can_run<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        if self.is_stopping {
            return Err(Refusal::JsWhileStopping(op));
        }
        if self.async_callback_scope_depth == 0 {
            return Err(Refusal::JsOutsideScopes(op));
        }
        Ok(())
    }

    /// The innermost frame is the one `kind` ends (`is`).
    fn innermost_is(
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

    /// An exception thrown in a tick's callback leaves the frames up to
    /// where it is reported (the `Close` that ran the tick, or a native
    /// scope); the model refuses it when one of them is a microtask's.
    fn tick_throw_stays_out_of_microtasks(&self) -> Result<(), Refusal<'static>> {
        for frame in self.frames.iter().rev() {
            match frame {
                Frame::Microtask { .. } => return Err(Refusal::ThrowLeavesMicrotask),
                Frame::Tick {
                    run: TickRun::Close(_),
                    ..
                }
                | Frame::Native(_) => break,
                _ => {}
            }
        }
        Ok(())
    }

    /// The index in [`Environment::frames`] of the native scope with
    /// `outer` native scopes inside it (`close-outer`), if there is one.
    pub(crate) fn outer_scope_index(&self, outer: u32) -> Option<usize> {
        (self.frames.iter().enumerate())
            .filter(|(_, f)| matches!(f, Frame::Native(_)))
            .map(|(i, _)| i)
            .rev()
            .nth(outer as usize)
    }
}

/// A `node::CallbackScope` an addon opened, which `napi_close_callback_scope`
/// may delete out of order: not the main script's, RunTimers' or a
/// MakeCallback's.
fn is_addon_scope<S: AsyncIdStack>(scope: &InternalCallbackScope<S>) -> bool {
    !scope.is_bare() && scope.kind == ScopeKind::CallbackScope
}
