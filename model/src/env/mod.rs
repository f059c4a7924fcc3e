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
//! [`microtasks`], [`rejections`]; [`enabled`], when each op can happen;
//! and this module, the `Environment` and what each op does.

pub mod async_hooks;
pub mod async_id_stack;
pub mod callback_scope;
pub mod context_frame;
pub mod enabled;
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
pub use enabled::Refusal;
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
    /// The node version (`node-version`; 26 unless a trace says 20).
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

    /// What `op` does: Node's code for it. [`Environment::enabled`] has
    /// accepted it.
    fn dispatch(&mut self, op: &Op) -> Result<(), Died> {
        match op {
            Op::NoForceAsyncHooksChecks => {
                self.async_hooks.fields.k_check -= 1;
                Ok(())
            }
            Op::EntryModule => self.enter_module(),
            Op::NodeVersion(version) => {
                self.version = *version;
                Ok(())
            }
            Op::AlsRun { als, store } => {
                self.als_run(*als, Some(*store));
                Ok(())
            }
            Op::AlsExit(als) => {
                self.als_run(*als, None);
                Ok(())
            }
            Op::EndAlsRun => {
                self.end_als_run();
                Ok(())
            }
            Op::AlsEnterWith { als, store } => {
                self.als_enter_with(*als, Some(*store));
                Ok(())
            }
            Op::AlsGetStore(als) => {
                let value = self.als_get_store(*als);
                self.out.push(Observation::Store { als: *als, value });
                Ok(())
            }
            Op::AsyncResource(r) => {
                self.async_resource(*r);
                Ok(())
            }
            Op::TimersScope => {
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
            Op::CloseScope { threw } => self.close_scope(*threw),
            Op::ResetGlobal(r) => {
                self.heap.reset_globals.insert(*r);
                Ok(())
            }
            Op::CreateHook { hook, callbacks } => {
                self.create_hook(*hook, *callbacks);
                Ok(())
            }
            Op::EnableHook(h) => {
                self.enable_hook(*h);
                Ok(())
            }
            Op::DisableHook(h) => {
                self.disable_hook(*h);
                Ok(())
            }
            Op::EmitInit {
                async_id,
                type_name,
                trigger_async_id,
                resource,
            } => {
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
            } => self.emit_before_script(
                *async_id,
                *trigger_async_id,
                resource.map(ResourceView::Resource),
            ),
            Op::EmitAfter { async_id } => self.emit_after_script(*async_id),
            Op::EmitDestroy { async_id } => {
                self.emit_destroy_script(*async_id);
                Ok(())
            }
            Op::EnterRunInAsyncScope {
                async_id,
                trigger_async_id,
                resource,
            } => {
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
            Op::ExitRunInAsyncScope => {
                let Some(Frame::RunInAsyncScope {
                    async_id,
                    prior_context_frame,
                }) = self.frames.pop()
                else {
                    unreachable!("enabled checked that the innermost frame is a run-in-async-scope")
                };
                if !self.is_stopping {
                    // `AsyncContextFrame.set(prior)`, then the rest of the `finally`.
                    self.context_frame = prior_context_frame;
                    self.run_in_async_scope_finally(async_id)?;
                }
                Ok(())
            }
            Op::EnterDefaultTriggerScope { trigger_async_id } => {
                let old = self.enter_default_trigger_scope(*trigger_async_id);
                self.frames.push(Frame::DefaultTriggerScope {
                    old_default_trigger_async_id: old,
                });
                Ok(())
            }
            Op::ExitDefaultTriggerScope => {
                let Some(Frame::DefaultTriggerScope {
                    old_default_trigger_async_id,
                }) = self.frames.pop()
                else {
                    unreachable!(
                        "enabled checked that the innermost frame is a default-trigger-scope"
                    )
                };
                if !self.is_stopping {
                    self.async_hooks.async_id_fields.k_default_trigger_async_id =
                        old_default_trigger_async_id;
                }
                Ok(())
            }
            Op::NextTick { query_resource } => {
                self.next_tick(*query_resource, false);
                Ok(())
            }
            Op::NextTickBody => {
                self.next_tick(false, true);
                Ok(())
            }
            Op::EndTick => self.end_tick(),
            Op::TickCallback => self.run_next_ticks(),
            Op::QueueMicrotask | Op::QueueMicrotaskBody => {
                self.queue_microtask(matches!(op, Op::QueueMicrotaskBody));
                Ok(())
            }
            Op::PromiseThen | Op::PromiseThenBody => {
                self.promise_then(matches!(op, Op::PromiseThenBody));
                Ok(())
            }
            Op::PromiseReject => self.promise_reject(),
            Op::EndMicrotask => self.end_microtask(),
            Op::ExecutionAsyncId => {
                let id = self.async_hooks.async_id_fields.k_execution_async_id;
                self.out.push(Observation::ExecutionAsyncId(id));
                Ok(())
            }
            Op::TriggerAsyncId => {
                let id = self.async_hooks.async_id_fields.k_trigger_async_id;
                self.out.push(Observation::TriggerAsyncId(id));
                Ok(())
            }
            Op::ExecutionAsyncResource => {
                let r = self.execution_async_resource();
                self.out.push(Observation::ExecutionAsyncResource(r));
                Ok(())
            }
            Op::DefaultTriggerAsyncId => {
                let id = self.get_default_trigger_async_id();
                self.out.push(Observation::DefaultTriggerAsyncId(id));
                Ok(())
            }
            Op::NewAsyncId => {
                let id = self.new_async_id();
                self.out.push(Observation::NewAsyncId(id));
                Ok(())
            }
            Op::UncaughtException { handled } => match self.frames.last() {
                Some(Frame::Tick { .. }) => self.tick_threw(*handled),
                _ => self.on_global_uncaught_exception(*handled),
            },
            Op::ClearAsyncIdStack => {
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
    fn enter_module(&mut self) -> Result<(), Died> {
        let Some(Frame::Native(main)) = self.frames.first() else {
            unreachable!("enabled checked that the main-script scope is open")
        };
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

    /// `node::CallbackScope` (a `Local<Object>` or a `Global<Object>*`
    /// resource) or `InternalMakeCallback` up to the callback.
    fn open_scope(
        &mut self,
        kind: ScopeKind,
        context: AsyncContext,
        resource: NativeResource,
        flags: ScopeFlags,
    ) -> Result<(), Died> {
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
            ScopeKind::MakeCallback => self.internal_make_callback(context, resource.id),
        }
    }
}

impl<S: AsyncIdStack> Runtime for Environment<S> {
    /// [`Environment::enabled`], then the effect (`dispatch`: Node's code).
    fn apply(&mut self, op: &Op) -> Result<Vec<Observation>, OpError> {
        self.enabled(op)?;
        self.out.clear();
        let result = self.dispatch(op);
        self.ops_applied += 1;
        self.program_started |= !op.kind().is_header();
        if let Err(Died(terminal)) = result {
            self.exited = true;
            self.out.push(terminal);
        }
        Ok(std::mem::take(&mut self.out))
    }

    fn cost(&self) -> Cost {
        self.async_hooks.cost
    }
}
