//! One Node.js `Environment` running the main script, written once and run
//! over either async-context store ([`AsyncIdStack`]): the eager one, Node
//! as it is today ([`crate::Eager`]), or the lazy one of pull request 66511.
//!
//! One module per concept, named after Node's own: [`fields`] (`AsyncHooks`
//! fields), [`async_hooks`] (`AsyncHooks`: `push_async_context` and friends),
//! [`async_id_stack`] (the seam: what the pull request changes),
//! [`resources`] (the two resource arrays); and one per [`Family`] of ops,
//! each holding the actions of its ops, TLA+ style: `*_enabled` (the
//! conjuncts beyond those every op shares) beside `*_effect` (Node's code):
//! [`process`] (the command line, `stop`), [`callback_scope`]
//! (`InternalCallbackScope`, `InternalMakeCallback`), [`hooks`]
//! (`AsyncHook`), [`js`] (`lib/internal/async_hooks.js`), [`ticks`]
//! (`process.nextTick`), [`microtasks`], [`rejections`], [`exceptions`]
//! (`onGlobalUncaughtException`), [`timers`] (`setTimeout`,
//! `processTimers`), [`context_frame`] (`AsyncContextFrame`
//! and `AsyncLocalStorage`, Node 26; v20's on async hooks in
//! [`async_local_storage`]). [`enabled`] asks the conjuncts every
//! op shares and routes to the family's; this module holds the
//! `Environment` and routes each op to its family's effect.

pub mod async_hooks;
pub mod async_id_stack;
pub mod async_local_storage;
pub mod callback_scope;
pub mod context_frame;
pub mod enabled;
pub mod exceptions;
pub mod fields;
pub mod hooks;
pub mod js;
pub mod microtasks;
pub mod process;
pub mod rejections;
pub mod resources;
#[cfg(loom)]
pub mod stop;
pub mod ticks;
pub mod timers;
pub mod tracked;

use crate::vocab::{
    AlsId, AsyncContext, Cost, Family, NodeVersion, Observation, Op, OpError, ResourceView,
    Runtime, ScopeFlags, StoreValue,
};
pub use async_hooks::AsyncHooks;
pub use async_id_stack::AsyncIdStack;
use callback_scope::InternalCallbackScope;
use context_frame::ContextFrame;
pub use enabled::Refusal;
use hooks::Hooks;
use resources::ScopeSerial;
use ticks::TickQueue;
pub use tracked::{Tracked, TrackedVec};

/// The process died: the terminal observation that says how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Died(pub Observation);

/// What the `finally` of `als.run(data, fn)` / `als.exit(fn)` puts back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlsRestore {
    /// Nothing: `fn` ran with nothing changed (`data` was the store
    /// already; on v20, `exit` of a storage not enabled).
    Nothing,
    /// Node 26: `this.enterWith(prior)`, `prior = this.getStore()` at the
    /// `run` (`lib/internal/async_local_storage/async_context_frame.js`).
    EnterWith(Option<StoreValue>),
    /// v20's `run`: `resource[this.kResourceStore] = oldStore` on the
    /// resource that was current at the `run` (`lib/async_hooks.js`).
    ResourceStore(ResourceView, Option<StoreValue>),
    /// v20's `exit`: `this._enable()`, after `fn` ran disabled.
    Enable,
}

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
    /// Inside `als.run(data, fn)` or `als.exit(fn)`.
    AlsRun {
        /// The storage.
        als: AlsId,
        /// What the `finally` puts back.
        restore: AlsRestore,
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
    /// Also an ES module's body (`entry-module`: job
    /// [`microtasks::RunningMicrotask::ModuleBody`]), ended by `close`.
    Microtask {
        /// What is left of the job: its resource, or the derived promise.
        job: microtasks::RunningMicrotask,
        /// Who performed the checkpoint: where it goes on.
        checkpoint: microtasks::Checkpoint<S>,
        /// The frame current before the job, which V8 puts back after it.
        prior_context_frame: ContextFrame,
    },
    /// Inside the program's `uncaughtException` listener, which
    /// `process.emit` runs from the handler
    /// (`lib/internal/process/execution.js`) for an exception that a native
    /// scope's callback threw; ended by `end-listener`.
    Listener,
    /// Inside the callback of a Timeout, which `listOnTimeout` called
    /// between its `emitBefore` and its `emitAfter`
    /// (`lib/internal/timers.js`); ended by `end-timer` or by an exception.
    Timer {
        /// The Timeout.
        timeout: timers::Timeout,
        /// How many of the Timeouts this `processTimers` found due are left.
        due_after: u32,
        /// `priorContextFrame`, set back after the `emitAfter` (Node 26;
        /// not in a `finally`).
        prior_context_frame: ContextFrame,
    },
}

impl<S: AsyncIdStack> Frame<S> {
    /// The op that ends this frame as its function returns normally.
    pub fn ending_op(&self) -> Op {
        match self {
            Frame::Native(_) => Op::CloseScope { threw: false },
            Frame::RunInAsyncScope { .. } => Op::ExitRunInAsyncScope,
            Frame::DefaultTriggerScope { .. } => Op::ExitDefaultTriggerScope,
            Frame::AlsRun { .. } => Op::EndAlsRun,
            Frame::Tick { .. } => Op::EndTick,
            // The module body's job ends as the trace's `close` of the
            // main script (`entry-module`).
            Frame::Microtask {
                job: microtasks::RunningMicrotask::ModuleBody,
                ..
            } => Op::CloseScope { threw: false },
            Frame::Microtask { .. } => Op::EndMicrotask,
            Frame::Listener => Op::EndListener,
            Frame::Timer { .. } => Op::EndTimer,
        }
    }

    /// The body of an ES module entry, a microtask job
    /// ([`microtasks::RunningMicrotask::ModuleBody`]).
    pub fn is_module_body(&self) -> bool {
        matches!(
            self,
            Frame::Microtask {
                job: microtasks::RunningMicrotask::ModuleBody,
                ..
            }
        )
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
    pub hooks: Tracked<Hooks>,
    /// The nextTick queue and `TickInfo`.
    pub ticks: Tracked<TickQueue>,
    /// The microtask queue and the promise hooks.
    pub microtasks: Tracked<microtasks::Microtasks>,
    /// Unhandled promise rejections waiting to be reported.
    pub rejections: Tracked<rejections::Rejections>,
    /// The timer lists.
    pub timers: Tracked<timers::Timers>,
    /// The call stack, outermost first; the first frame is the main script's scope.
    pub frames: TrackedVec<Frame<S>>,
    /// `Environment::async_callback_scope_depth()`.
    pub async_callback_scope_depth: u32,
    /// What resource pointers read through: reset Globals, open scopes.
    pub heap: Tracked<resources::Heap>,
    /// `Environment::is_stopping()`; also `!can_call_into_js()`.
    pub is_stopping: bool,
    /// The exception a bare make-callback's callback threw came back to the
    /// JavaScript that called the addon (`close threw` of a
    /// [`ScopeKind::BareMakeCallback`](crate::vocab::ScopeKind)), and no
    /// JavaScript has caught it yet: the next op is `catch` or
    /// `uncaught-exception`.
    pub exception_in_flight: bool,
    /// `env->destroy_async_id_list()`: ids queued for the destroy hooks.
    pub destroy_async_id_list: Tracked<Vec<i64>>,
    /// A terminal observation was seen.
    pub exited: bool,
    /// Ops applied so far.
    pub ops_applied: u64,
    /// An op other than a header op (`no-force-async-hooks-checks`,
    /// `entry-module`, `node-version`) has run.
    pub program_started: bool,
    /// The node version (`node-version`; 26 unless a trace says 20).
    pub version: NodeVersion,
    /// A `node-version` op ran: the trace named its version (once).
    pub version_named: bool,
    /// The current `AsyncContextFrame` (V8's continuation-preserved
    /// embedder data), Node 26.
    pub context_frame: Tracked<ContextFrame>,
    /// The trace's JavaScript objects, as far as `AsyncContextFrame` goes
    /// (the frame each `AsyncResource` captured).
    pub js_objects: Tracked<context_frame::JsObjects>,
    out: Vec<Observation>,
    /// `fatalError` ran during the op (a hook callback threw): how many
    /// observations came before it, and the terminal one.
    fatal: Option<(usize, Observation)>,
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
            hooks: Tracked::default(),
            ticks: Tracked::default(),
            microtasks: Tracked::default(),
            rejections: Tracked::default(),
            timers: Tracked::default(),
            frames: TrackedVec::default(),
            async_callback_scope_depth: 0,
            heap: Tracked::default(),
            is_stopping: false,
            exception_in_flight: false,
            destroy_async_id_list: Tracked::default(),
            exited: false,
            ops_applied: 0,
            program_started: false,
            version: NodeVersion::default(),
            version_named: false,
            context_frame: Tracked::default(),
            js_objects: Tracked::default(),
            out: Vec::new(),
            fatal: None,
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
            ContextFrame::default(),
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

    /// The next op of a program that unwinds normally from here: `catch`
    /// while an exception is in flight (the caller of a bare make-callback
    /// catches it), else the innermost frame's [`Frame::ending_op`]; `None`
    /// with no frame open.
    pub fn unwinding_op(&self) -> Option<Op> {
        if self.exception_in_flight {
            return Some(Op::Catch);
        }
        Some(self.frames.last()?.ending_op())
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
        for frame in self.frames.iter_mut() {
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

    /// Number the frame objects canonically without changing behaviour, as
    /// [`Environment::canonicalise_scope_serials`] does the scopes (for the
    /// explorer): the objects held anywhere, 1, 2, ... in order of
    /// appearance; `disable`'s deletions kept for those alone; the count of
    /// frames made set to how many are held, so that the next `enterWith`'s
    /// object is new. A serial says only which holders share one object
    /// (whom a `disable` reaches), so two states that differ only in how
    /// many objects `enterWith` made and dropped before then compare equal.
    ///
    /// The holders, in this order: the current frame; each open frame's
    /// (a scope's `prior_context_frame_`, a tick's or a Timeout's captured
    /// frame, the prior frame a tick, a Timeout, a microtask or
    /// `runInAsyncScope` puts back); the queued ticks', microtasks' and
    /// Timeouts'; each `AsyncResource`'s and N-API async context's.
    pub fn canonicalise_frame_serials(&mut self) {
        if self.js_objects.frames_made() == 0 {
            return;
        }
        let mut renumber = context_frame::Renumbering::default();
        renumber.frame(&mut self.context_frame);
        for frame in self.frames.iter_mut() {
            if let Some(scope) = frame.held_scope_mut() {
                renumber.frame(&mut scope.prior_context_frame);
            }
            match frame {
                Frame::Tick {
                    tick,
                    prior_context_frame,
                    ..
                } => {
                    renumber.frame(&mut tick.context_frame);
                    renumber.frame(prior_context_frame);
                }
                Frame::Timer {
                    timeout,
                    prior_context_frame,
                    ..
                } => {
                    renumber.frame(&mut timeout.context_frame);
                    renumber.frame(prior_context_frame);
                }
                Frame::RunInAsyncScope {
                    prior_context_frame,
                    ..
                }
                | Frame::Microtask {
                    prior_context_frame,
                    ..
                } => renumber.frame(prior_context_frame),
                Frame::Native(_)
                | Frame::DefaultTriggerScope { .. }
                | Frame::AlsRun { .. }
                | Frame::Listener => {}
            }
        }
        for tick in self.ticks.queue.iter_mut() {
            renumber.frame(&mut tick.context_frame);
        }
        for job in self.microtasks.queue.iter_mut() {
            match job {
                microtasks::Microtask::Callback { context_frame, .. }
                | microtasks::Microtask::Reaction { context_frame, .. } => {
                    renumber.frame(context_frame)
                }
                microtasks::Microtask::DisablePromiseHook
                | microtasks::Microtask::ModuleRejection { .. } => {}
            }
        }
        for timeout in self.timers.waiting.iter_mut() {
            renumber.frame(&mut timeout.context_frame);
        }
        self.js_objects.renumber_frames(&mut renumber);
    }

    /// JS can run: some native scope is open and the environment is not stopping.
    pub fn js_running(&self) -> bool {
        self.async_callback_scope_depth > 0 && !self.is_stopping
    }

    /// What `op` does: Node's code for it, in the module of its
    /// [`Family`] (`family`; `*_effect`, beside the family's `*_enabled`).
    /// [`Environment::enabled`] has accepted it.
    // Its one caller is `apply`: inlined, as the one `match` it replaced was.
    #[inline(always)]
    fn dispatch(&mut self, op: &Op, family: Family) -> Result<(), Died> {
        match family {
            Family::Process => self.process_effect(op),
            Family::CallbackScope => self.callback_scope_effect(op),
            Family::Hooks => self.hooks_effect(op),
            Family::Js => self.js_effect(op),
            Family::Ticks => self.ticks_effect(op),
            Family::Microtasks => self.microtasks_effect(op),
            Family::Rejections => self.rejections_effect(op),
            Family::Exceptions => self.exceptions_effect(op),
            Family::ContextFrame => self.context_frame_effect(op),
            Family::Timers => self.timers_effect(op),
        }
    }
}

/// An op routed to a family whose action has no arm for it: a new op whose
/// action was not written (`tests/spec_laws.rs` probes every kind, and
/// fails on the panic).
fn not_in_family(op: &Op) -> ! {
    panic!(
        "`{op}` belongs to {:?} (OpKind::facts), whose action does not handle it",
        op.kind().family()
    )
}

impl<S: AsyncIdStack> Runtime for Environment<S> {
    /// [`Environment::enabled`], then the effect (`dispatch`: Node's code).
    fn apply(&mut self, op: &Op) -> Result<Vec<Observation>, OpError> {
        let facts = op.kind().facts();
        self.enabled_with(op, facts)?;
        self.out.clear();
        if self.timers.call.is_some() && !matches!(op, Op::Timer) {
            // Any op but the next `timer` runs after `processTimers` returned.
            self.timers.call = None;
        }
        let result = self.dispatch(op, facts.family);
        self.ops_applied += 1;
        self.program_started |= !facts.header;
        if let Some((seen, terminal)) = self.fatal.take() {
            // The process exited inside the op: nothing after it happened.
            self.out.truncate(seen);
            self.exited = true;
            self.out.push(terminal);
        } else if let Err(Died(terminal)) = result {
            self.exited = true;
            self.out.push(terminal);
        }
        Ok(std::mem::take(&mut self.out))
    }

    fn cost(&self) -> Cost {
        self.async_hooks.cost
    }
}
