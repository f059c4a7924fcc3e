//! One Node.js `Environment` running the main script, written once and run
//! over either async-context store ([`AsyncIdStack`]): the eager one, Node
//! as it is today ([`crate::Eager`]), or the lazy one of pull request 66511.
//!
//! One module per concept, named after Node's own: [`fields`] (`AsyncHooks`
//! fields), [`async_hooks`] (`AsyncHooks`: `push_async_context` and friends),
//! [`async_id_stack`] (the seam: what the pull request changes),
//! [`resources`] (the two resource arrays), [`callback_scope`]
//! (`InternalCallbackScope`, `InternalMakeCallback`), [`js`]
//! (`lib/internal/async_hooks.js`), [`hooks`] (`AsyncHook`), [`ticks`]
//! (`process.nextTick`), [`exceptions`] (`onGlobalUncaughtException`),
//! [`context_frame`] (`AsyncContextFrame` and `AsyncLocalStorage`, Node 26),
//! and this module, the `Environment` and its op dispatch.

pub mod async_hooks;
pub mod async_id_stack;
pub mod callback_scope;
pub mod context_frame;
pub mod exceptions;
pub mod fields;
pub mod hooks;
pub mod js;
pub mod microtasks;
pub mod rejections;
pub mod resources;
#[cfg(loom)]
pub mod stop;
pub mod ticks;

use crate::vocab::{
    AlsId, AsyncContext, Cost, Holder, NativeResource, NodeVersion, Observation, Op, OpError,
    ResourceView, Runtime, ScopeFlags, ScopeKind, StoreValue,
};
pub use async_hooks::AsyncHooks;
pub use async_id_stack::AsyncIdStack;
use callback_scope::InternalCallbackScope;
use context_frame::ContextFrame;
use hooks::Hooks;
use resources::ScopeSerial;
use ticks::TickQueue;

/// The process died: the terminal observation that says how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Died(pub Observation);

/// A frame of the program's call stack that an op must end: native scopes
/// are C++ RAII objects, the JS ones are `try`/`finally` blocks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Frame<S: AsyncIdStack> {
    /// An open `InternalCallbackScope` (with its MakeCallback trampoline, if any).
    Native(InternalCallbackScope<S>),
    /// Inside `runInAsyncScope(fn)` for the AsyncResource with this id.
    RunInAsyncScope {
        /// `this[async_id_symbol]`.
        async_id: i64,
        /// `prior`, the frame `AsyncContextFrame.exchange` returned, set back
        /// by the `finally` (Node 26).
        prior_context_frame: ContextFrame,
    },
    /// Inside `defaultTriggerAsyncIdScope(id, block)`.
    DefaultTriggerScope {
        /// `oldDefaultTriggerAsyncId`, restored by the `finally`.
        old_default_trigger_async_id: i64,
    },
    /// Inside `als.run(data, fn)` or `als.exit(fn)` (Node 26's frame-based
    /// `AsyncLocalStorage`).
    AlsRun {
        /// The storage.
        als: AlsId,
        /// `prior = this.getStore()`, entered again by the `finally`.
        prior: Option<StoreValue>,
        /// `prior` was not `data`, so `run` entered `data` and its `finally`
        /// enters `prior` again.
        entered: bool,
    },
    /// Inside the callback of a tick with a body (`next-tick-body`), which
    /// `processTicksAndRejections` called between its `emitBefore` and its
    /// `emitAfter` (`lib/internal/process/task_queues.js`); ended by
    /// `end-tick` or by an exception.
    Tick {
        /// The tick object (`tock`).
        tick: ticks::TickObject,
        /// Who called the tick callback: where the run returns.
        run: ticks::TickRun<S>,
        /// `priorContextFrame`, set back after the tick's `emitAfter`
        /// (Node 26; not in a `finally`).
        prior_context_frame: ContextFrame,
    },
    /// Inside the callback of a microtask with a body
    /// (`queue-microtask-body`, `promise-then-body`), which a microtask
    /// checkpoint runs (`lib/internal/process/task_queues.js`,
    /// `runMicrotask`; V8's promise reaction job); ended by `end-microtask`.
    Microtask {
        /// What is left of the job: its resource, or the derived promise.
        job: microtasks::RunningMicrotask,
        /// Who performed the checkpoint: where it goes on.
        checkpoint: microtasks::Checkpoint<S>,
        /// The frame current before the job, which V8 puts back after it.
        prior_context_frame: ContextFrame,
    },
}

impl<S: AsyncIdStack> Frame<S> {
    fn describe(&self) -> String {
        match self {
            Frame::Native(s) => format!(
                "a native scope ({} {})",
                s.async_context.async_id, s.async_context.trigger_async_id
            ),
            Frame::RunInAsyncScope { async_id, .. } => format!("run-in-async-scope {async_id}"),
            Frame::DefaultTriggerScope { .. } => "default-trigger-scope".to_string(),
            Frame::AlsRun { als, .. } => format!("als-run {als} (or als-exit)"),
            Frame::Tick { tick, .. } => format!("the callback of tick {}", tick.async_id),
            Frame::Microtask { .. } => "a microtask's callback".to_string(),
        }
    }

    /// The `InternalCallbackScope` whose `Close` is still running under this
    /// frame (a tick run or a microtask checkpoint it started), if any.
    pub fn held_scope(&self) -> Option<&InternalCallbackScope<S>> {
        match self {
            Frame::Native(s) => Some(s),
            Frame::Tick {
                run: ticks::TickRun::Close(s),
                ..
            }
            | Frame::Microtask {
                checkpoint:
                    microtasks::Checkpoint::Close(s)
                    | microtasks::Checkpoint::TickRun(ticks::TickRun::Close(s)),
                ..
            } => Some(s),
            _ => None,
        }
    }

    fn held_scope_mut(&mut self) -> Option<&mut InternalCallbackScope<S>> {
        match self {
            Frame::Native(s) => Some(s),
            Frame::Tick {
                run: ticks::TickRun::Close(s),
                ..
            }
            | Frame::Microtask {
                checkpoint:
                    microtasks::Checkpoint::Close(s)
                    | microtasks::Checkpoint::TickRun(ticks::TickRun::Close(s)),
                ..
            } => Some(s),
            _ => None,
        }
    }
}

/// One Node.js `Environment` running the main script, over the
/// async-context store `S`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Environment<S: AsyncIdStack> {
    /// `env->async_hooks()`, with the store.
    pub async_hooks: AsyncHooks<S>,
    /// The hooks created and enabled from JS.
    pub hooks: Hooks,
    /// The nextTick queue and `TickInfo`.
    pub ticks: TickQueue,
    /// The microtask queue and the promise hooks.
    pub microtasks: microtasks::Microtasks,
    /// Unhandled promise rejections waiting to be reported.
    pub rejections: rejections::Rejections,
    /// The call stack, outermost first; the first frame is the main script's scope.
    pub frames: Vec<Frame<S>>,
    /// `Environment::async_callback_scope_depth()`.
    pub async_callback_scope_depth: u32,
    /// What resource pointers read through: reset Globals, open scopes.
    pub heap: resources::Heap,
    /// `Environment::is_stopping()`; also `!can_call_into_js()`.
    pub is_stopping: bool,
    /// `env->destroy_async_id_list()`: ids queued for the destroy hooks.
    pub destroy_async_id_list: Vec<i64>,
    /// A terminal observation was seen.
    pub exited: bool,
    /// Ops applied so far.
    pub ops_applied: u64,
    /// An op other than a header op (`no-force-async-hooks-checks`,
    /// `entry-module`, `node-version`) has run.
    pub program_started: bool,
    /// The version profile (`node-version`; 26 unless a trace says 20).
    pub version: NodeVersion,
    /// The current `AsyncContextFrame` (V8's continuation-preserved
    /// embedder data), Node 26.
    pub context_frame: ContextFrame,
    /// The frame each `AsyncResource` of the trace captured at construction
    /// (`async-resource R`), by its object.
    pub async_resource_frames: context_frame::ResourceFrames,
    out: Vec<Observation>,
    /// cfg(loom): where [`Environment::stopping`] reads the stop flag.
    #[cfg(loom)]
    stop_probe: stop::StopProbe,
}

impl<S: AsyncIdStack> Default for Environment<S> {
    fn default() -> Self {
        Self::new()
    }
}

/// How an op ended when it did not simply return.
pub(crate) enum Halt {
    Died(Died),
    Impossible(OpError),
}

impl From<Died> for Halt {
    fn from(d: Died) -> Self {
        Halt::Died(d)
    }
}

impl From<OpError> for Halt {
    fn from(e: OpError) -> Self {
        Halt::Impossible(e)
    }
}

/// Why the model refuses `uncaught-exception` inside a microtask's body.
const MICROTASK_THROW: &str = "uncaught-exception inside a microtask's callback: the exception leaves the job (a queueMicrotask's through runMicrotask's and runInAsyncScope's finally blocks, a reaction's by rejecting the derived promise, reported later as an unhandled rejection) and V8's checkpoint goes on with the next job; the model does not describe that (end the microtask with end-microtask)";

pub(crate) fn impossible<T>(why: impl Into<String>) -> Result<T, Halt> {
    Err(Halt::Impossible(OpError::Impossible(why.into())))
}

impl<S: AsyncIdStack> Environment<S> {
    /// An environment inside the main script: `StartExecution` (`src/node.cc`)
    /// opens `InternalCallbackScope(env, Object::New(), {1, 0}, kSkipAsyncHooks)`
    /// before any user code.
    pub fn new() -> Self {
        Self::with_store(S::default())
    }

    /// The same, over a store built by the caller (a lazy store with a
    /// deliberate mistake switched on, for one).
    pub fn with_store(store: S) -> Self {
        let mut env = Environment {
            async_hooks: AsyncHooks::new(store),
            hooks: Hooks::default(),
            ticks: TickQueue::default(),
            microtasks: microtasks::Microtasks::default(),
            rejections: rejections::Rejections::default(),
            frames: Vec::new(),
            async_callback_scope_depth: 0,
            heap: resources::Heap::default(),
            is_stopping: false,
            destroy_async_id_list: Vec::new(),
            exited: false,
            ops_applied: 0,
            program_started: false,
            version: NodeVersion::default(),
            context_frame: ContextFrame::default(),
            async_resource_frames: context_frame::ResourceFrames::default(),
            out: Vec::new(),
            #[cfg(loom)]
            stop_probe: stop::StopProbe::default(),
        };
        let main = InternalCallbackScope::open(
            &mut env,
            AsyncContext {
                async_id: 1,
                trigger_async_id: 0,
            },
            resources::NativeSlot::Local(ResourceView::Main, 0),
            ScopeFlags {
                skip_async_hooks: true,
                skip_task_queues: false,
            },
        );
        let main = match main {
            Ok(scope) => scope,
            Err(_) => unreachable!("the main-script scope {{1, 0}} passes every check"),
        };
        let mut main = main;
        main.main_script = true;
        env.frames.push(Frame::Native(main));
        env
    }

    /// An environment inside the main script of a node of `version`: the
    /// same as [`Environment::new`] followed by the op `node-version`.
    pub fn for_version(version: NodeVersion) -> Self {
        let mut env = Self::new();
        env.version = version;
        env
    }

    /// `Environment::is_stopping()` where Node reads it as a scope opens
    /// (`can_call_into_js()` in the `InternalCallbackScope` constructor), at
    /// the start of `InternalCallbackScope::Close`, and in the outermost
    /// `Close` after its microtask checkpoint (`perform_stopping_check()`,
    /// then `can_call_into_js()` before the tick callback). In a loom build
    /// (`--cfg loom`) it first asks the probe set with `set_stop_probe` and
    /// latches a `true` into [`Environment::is_stopping`]; otherwise it is just
    /// `is_stopping`.
    #[inline]
    pub fn stopping(&mut self) -> bool {
        #[cfg(loom)]
        if !self.is_stopping && self.stop_probe.fires() {
            self.is_stopping = true;
        }
        self.is_stopping
    }

    /// cfg(loom): read the stop flag through `probe` at every
    /// [`Environment::stopping`] from now on, until it answers `true` once.
    #[cfg(loom)]
    pub fn set_stop_probe(&mut self, probe: impl Fn() -> bool + Send + Sync + 'static) {
        self.stop_probe = stop::StopProbe(Some(std::sync::Arc::new(probe)));
    }

    /// Number the scopes canonically without changing behaviour: the open
    /// ones 0, 1, ... in frame order, every returned one [`ScopeSerial::MAX`]
    /// (a serial only says whether its scope is still open). Two states that
    /// differ only in how many scopes came and went before then compare
    /// equal, which is what lets the explorer deduplicate them.
    pub fn canonicalise_scope_serials(&mut self) {
        let open: Vec<ScopeSerial> = (self.frames.iter())
            .filter_map(|f| f.held_scope().map(|s| s.serial))
            .collect();
        let rename = |serial: ScopeSerial| {
            (open.iter().position(|&o| o == serial)).map_or(ScopeSerial::MAX, |i| i as ScopeSerial)
        };
        for frame in &mut self.frames {
            let Some(scope) = frame.held_scope_mut() else {
                continue;
            };
            scope.serial = rename(scope.serial);
            scope.resource = scope.resource.renamed(&rename);
        }
        let ah = &mut self.async_hooks;
        for slot in ah.native_execution_async_resources.iter_mut().flatten() {
            *slot = slot.renamed(&rename);
        }
        S::rename_scopes(&mut ah.store, &rename);
        self.heap.live_scopes = (0..open.len() as ScopeSerial).collect();
        self.heap.next_scope = open.len() as ScopeSerial;
    }

    /// JS can run: some native scope is open and the environment is not stopping.
    pub fn js_running(&self) -> bool {
        self.async_callback_scope_depth > 0 && !self.is_stopping
    }

    pub(crate) fn require_js(&self, op: &Op) -> Result<(), Halt> {
        if self.is_stopping {
            return impossible(format!(
                "`{op}` is JavaScript, and no JavaScript runs once the environment is stopping"
            ));
        }
        if self.async_callback_scope_depth == 0 {
            return impossible(format!(
                "`{op}` is JavaScript, and JavaScript runs only inside a native scope (open one with callback-scope or make-callback)"
            ));
        }
        Ok(())
    }

    fn innermost(&self) -> Option<&Frame<S>> {
        self.frames.last()
    }

    fn dispatch(&mut self, op: &Op) -> Result<(), Halt> {
        if let Some(Frame::Native(scope)) = self.innermost() {
            let ends_it = matches!(op, Op::CloseScope { .. } | Op::Stop | Op::ResetGlobal(_));
            if scope.threw && !ends_it {
                return impossible(format!(
                    "`{op}`: the innermost callback threw (uncaught-exception), so nothing of it runs any more; close it first"
                ));
            }
            if scope.is_bare() && matches!(op, Op::CloseScope { threw: true }) {
                return impossible(
                    "close threw: the main script's and RunTimers' scopes are bare InternalCallbackScopes that nothing marks failed; write `close`",
                );
            }
        }
        let header = matches!(
            op,
            Op::NoForceAsyncHooksChecks | Op::EntryModule | Op::NodeVersion(_)
        );
        if header && self.program_started {
            return impossible(format!(
                "{op} describes how the process starts: only before every other op"
            ));
        }
        match op {
            Op::NoForceAsyncHooksChecks => {
                if self.async_hooks.fields.k_check == 0 {
                    return impossible("no-force-async-hooks-checks is given once");
                }
                self.async_hooks.fields.k_check -= 1;
                Ok(())
            }
            Op::EntryModule => self.enter_module(),
            Op::NodeVersion(version) => {
                self.version = *version;
                Ok(())
            }
            Op::AlsRun { .. }
            | Op::AlsExit(_)
            | Op::EndAlsRun
            | Op::AlsEnterWith { .. }
            | Op::AlsGetStore(_)
            | Op::AsyncResource(_) => self.dispatch_als(op),
            Op::TimersScope => {
                if self.async_callback_scope_depth > 0 {
                    return impossible("timers-scope: RunTimers runs from the event loop, when no native scope is open (close the main script's first)");
                }
                let context = AsyncContext {
                    async_id: 0,
                    trigger_async_id: 0,
                };
                let process = self.heap.local_of_next_scope(ResourceView::Process);
                let scope =
                    InternalCallbackScope::open(self, context, process, ScopeFlags::default())?;
                self.frames.push(Frame::Native(InternalCallbackScope {
                    run_timers: true,
                    ..scope
                }));
                Ok(())
            }
            Op::CloseOuter { outer } => self.close_outer(*outer),
            Op::OpenScope {
                kind,
                context,
                resource,
                flags,
            } => self.open_scope(*kind, *context, *resource, *flags),
            Op::CloseScope { threw } => match self.innermost() {
                Some(Frame::Native(_)) => self.close_scope(*threw),
                Some(other) => impossible(format!(
                    "close: the innermost frame is {}, end it first",
                    other.describe()
                )),
                None => impossible("close: no native scope is open"),
            },
            Op::ResetGlobal(r) => {
                if self.version == NodeVersion::V20 {
                    return impossible(format!(
                        "reset-global {r}: on node v20 no scope holds a Global<Object>* (node::CallbackScope has no such constructor before Node 26)"
                    ));
                }
                self.heap.reset_globals.insert(*r);
                Ok(())
            }
            Op::CreateHook { hook, callbacks } => {
                self.require_js(op)?;
                Ok(self.create_hook(*hook, *callbacks)?)
            }
            Op::EnableHook(h) => {
                self.require_js(op)?;
                Ok(self.enable_hook(*h)?)
            }
            Op::DisableHook(h) => {
                self.require_js(op)?;
                Ok(self.disable_hook(*h)?)
            }
            Op::EmitInit {
                async_id,
                type_name,
                trigger_async_id,
                resource,
            } => {
                self.require_js(op)?;
                self.emit_init_script(
                    *async_id,
                    type_name,
                    *trigger_async_id,
                    resource.map(ResourceView::Resource),
                );
                Ok(())
            }
            Op::EmitBefore {
                async_id,
                trigger_async_id,
                resource,
            } => {
                self.require_js(op)?;
                Ok(self.emit_before_script(
                    *async_id,
                    *trigger_async_id,
                    resource.map(ResourceView::Resource),
                )?)
            }
            Op::EmitAfter { async_id } => {
                self.require_js(op)?;
                Ok(self.emit_after_script(*async_id)?)
            }
            Op::EmitDestroy { async_id } => {
                self.require_js(op)?;
                self.emit_destroy_script(*async_id);
                Ok(())
            }
            Op::EnterRunInAsyncScope {
                async_id,
                trigger_async_id,
                resource,
            } => {
                self.require_js(op)?;
                // The frame the AsyncResource captured when it was made
                // (`async-resource R`), else it is made here and captures
                // the current one; `runInAsyncScope` exchanges it in after
                // `emitBefore`.
                let captured = (self.async_resource_frames.get(resource))
                    .unwrap_or(&self.context_frame)
                    .clone();
                self.emit_before_script(
                    *async_id,
                    *trigger_async_id,
                    Some(ResourceView::Resource(*resource)),
                )?;
                let prior_context_frame = std::mem::replace(&mut self.context_frame, captured);
                self.frames.push(Frame::RunInAsyncScope {
                    async_id: *async_id,
                    prior_context_frame,
                });
                Ok(())
            }
            Op::ExitRunInAsyncScope => match self.innermost() {
                Some(Frame::RunInAsyncScope { async_id, .. }) => {
                    let async_id = *async_id;
                    let Some(Frame::RunInAsyncScope {
                        prior_context_frame,
                        ..
                    }) = self.frames.pop()
                    else {
                        unreachable!("the innermost frame is a run-in-async-scope")
                    };
                    if !self.is_stopping {
                        // `AsyncContextFrame.set(prior)`, then the rest of the `finally`.
                        self.context_frame = prior_context_frame;
                        self.run_in_async_scope_finally(async_id)?;
                    }
                    Ok(())
                }
                Some(other) => impossible(format!(
                    "end-run-in-async-scope: the innermost frame is {}",
                    other.describe()
                )),
                None => impossible("end-run-in-async-scope: no run-in-async-scope is open"),
            },
            Op::EnterDefaultTriggerScope { trigger_async_id } => {
                self.require_js(op)?;
                let old = self.enter_default_trigger_scope(*trigger_async_id);
                self.frames.push(Frame::DefaultTriggerScope {
                    old_default_trigger_async_id: old,
                });
                Ok(())
            }
            Op::ExitDefaultTriggerScope => match self.innermost() {
                Some(Frame::DefaultTriggerScope {
                    old_default_trigger_async_id,
                }) => {
                    let old = *old_default_trigger_async_id;
                    self.frames.pop();
                    if !self.is_stopping {
                        self.async_hooks.async_id_fields.k_default_trigger_async_id = old;
                    }
                    Ok(())
                }
                Some(other) => impossible(format!(
                    "end-default-trigger-scope: the innermost frame is {}",
                    other.describe()
                )),
                None => impossible("end-default-trigger-scope: no default-trigger-scope is open"),
            },
            Op::NextTick { query_resource } => {
                self.require_js(op)?;
                self.next_tick(*query_resource, false);
                Ok(())
            }
            Op::NextTickBody => {
                self.require_js(op)?;
                self.next_tick(false, true);
                Ok(())
            }
            Op::EndTick => match self.innermost() {
                Some(Frame::Tick { .. }) => self.end_tick(),
                Some(other) => impossible(format!(
                    "end-tick: the innermost frame is {}, end it first",
                    other.describe()
                )),
                None => impossible("end-tick: no tick callback is running"),
            },
            Op::TickCallback => {
                self.require_js(op)?;
                Ok(self.run_next_ticks()?)
            }
            Op::QueueMicrotask | Op::QueueMicrotaskBody => {
                self.require_js(op)?;
                self.queue_microtask(matches!(op, Op::QueueMicrotaskBody))
            }
            Op::PromiseThen | Op::PromiseThenBody => {
                self.require_js(op)?;
                self.promise_then(matches!(op, Op::PromiseThenBody));
                Ok(())
            }
            Op::PromiseReject => {
                self.require_js(op)?;
                Ok(self.promise_reject()?)
            }
            Op::EndMicrotask => match self.innermost() {
                Some(Frame::Microtask { .. }) => self.end_microtask(),
                Some(other) => impossible(format!(
                    "end-microtask: the innermost frame is {}, end it first",
                    other.describe()
                )),
                None => impossible("end-microtask: no microtask callback is running"),
            },
            Op::ExecutionAsyncId => {
                self.require_js(op)?;
                let id = self.async_hooks.async_id_fields.k_execution_async_id;
                self.out.push(Observation::ExecutionAsyncId(id));
                Ok(())
            }
            Op::TriggerAsyncId => {
                self.require_js(op)?;
                let id = self.async_hooks.async_id_fields.k_trigger_async_id;
                self.out.push(Observation::TriggerAsyncId(id));
                Ok(())
            }
            Op::ExecutionAsyncResource => {
                self.require_js(op)?;
                let r = self.execution_async_resource();
                self.out.push(Observation::ExecutionAsyncResource(r));
                Ok(())
            }
            Op::DefaultTriggerAsyncId => {
                self.require_js(op)?;
                let id = self.get_default_trigger_async_id();
                self.out.push(Observation::DefaultTriggerAsyncId(id));
                Ok(())
            }
            Op::NewAsyncId => {
                self.require_js(op)?;
                let id = self.new_async_id();
                self.out.push(Observation::NewAsyncId(id));
                Ok(())
            }
            Op::UncaughtException { handled } => {
                self.require_js(op)?;
                match self.innermost() {
                    Some(Frame::Native(_)) => Ok(self.on_global_uncaught_exception(*handled)?),
                    Some(Frame::Microtask { .. }) => impossible(MICROTASK_THROW),
                    Some(Frame::Tick { .. }) => self.tick_threw(*handled),
                    Some(other) => impossible(format!(
                        "uncaught-exception: the exception reaches the native scope (or the tick callback) only after the JS frames around it end; the innermost frame is {}",
                        other.describe()
                    )),
                    None => impossible("uncaught-exception: no native scope is open"),
                }
            }
            Op::ClearAsyncIdStack => {
                self.require_js(op)?;
                self.async_hooks.cost.crossings += 1;
                S::clear_async_id_stack(&mut self.async_hooks, !self.is_stopping);
                Ok(())
            }
            Op::Stop => {
                self.is_stopping = true;
                Ok(())
            }
        }
    }

    /// `entry-module`: `StartExecution` opened the main-script scope and the
    /// ES module loader runs the module body in the microtask checkpoint of
    /// that scope's `Close`, after its `pop_async_context(1)`: the frame
    /// stays (depth 1), its context is gone, and its close does the rest of
    /// `Close` (the `kTotals` CHECK, the ticks).
    fn enter_module(&mut self) -> Result<(), Halt> {
        let Some(Frame::Native(main)) = self.frames.first() else {
            return impossible("entry-module: the main-script scope is not open");
        };
        if !main.pushed_ids || self.frames.len() != 1 {
            return impossible("entry-module is given once, before every other op");
        }
        let (async_id, entered, serial) = (main.async_context.async_id, main.entered, main.serial);
        S::leave_scope(&mut self.async_hooks, async_id, entered, serial)?;
        if let Some(Frame::Native(main)) = self.frames.first_mut() {
            main.pushed_ids = false;
            // `Close` puts the prior frame back right after the pop.
            if S::restores_context_frame(&self.async_hooks, entered) {
                self.context_frame = main.prior_context_frame.clone();
            }
        }
        Ok(())
    }

    fn open_scope(
        &mut self,
        kind: ScopeKind,
        context: AsyncContext,
        resource: NativeResource,
        flags: ScopeFlags,
    ) -> Result<(), Halt> {
        if resource.holder == Holder::Global && self.version == NodeVersion::V20 {
            return impossible(format!(
                "`global {}`: node v20's node::CallbackScope has only the Local<Object> constructors (the Global<Object>* one is Node 26's); write the resource without `global`, or drop `node-version 20`",
                resource.id
            ));
        }
        let slot = match resource.holder {
            Holder::Local => self
                .heap
                .local_of_next_scope(ResourceView::Resource(resource.id)),
            Holder::Global => resources::NativeSlot::Global(resource.id),
        };
        match kind {
            ScopeKind::CallbackScope => {
                let scope = InternalCallbackScope::open(self, context, slot, flags)?;
                self.frames.push(Frame::Native(scope));
                Ok(())
            }
            ScopeKind::MakeCallback => {
                if resource.holder == Holder::Global {
                    return impossible("make-callback takes its resource as a Local<Object>; write it without `global`");
                }
                if flags != ScopeFlags::default() {
                    return impossible("make-callback chooses its own flags; write it without skip-hooks / skip-queues");
                }
                self.internal_make_callback(context, resource.id)
            }
        }
    }
}

impl<S: AsyncIdStack> Runtime for Environment<S> {
    fn apply(&mut self, op: &Op) -> Result<Vec<Observation>, OpError> {
        if self.exited {
            return Err(OpError::Exited);
        }
        self.out.clear();
        let result = self.dispatch(op);
        match result {
            Ok(()) => {
                self.ops_applied += 1;
                self.program_started |= !matches!(
                    op,
                    Op::NoForceAsyncHooksChecks | Op::EntryModule | Op::NodeVersion(_)
                );
                Ok(std::mem::take(&mut self.out))
            }
            Err(Halt::Died(Died(terminal))) => {
                self.ops_applied += 1;
                self.exited = true;
                self.out.push(terminal);
                Ok(std::mem::take(&mut self.out))
            }
            Err(Halt::Impossible(e)) => {
                self.out.clear();
                Err(e)
            }
        }
    }

    fn cost(&self) -> Cost {
        self.async_hooks.cost
    }
}
