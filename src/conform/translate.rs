//! From an op trace to a Node.js program.
//!
//! The program is `tests/conformance/runtime.js` (the prologue and an
//! interpreter) and one call `runTrace("STEPS", MAIN_CLOSE)`, with one step
//! per op: its size is linear in the trace and its source nests nothing, so
//! that node's parser never meets the trace's depth. Native scopes and the JS
//! frames become nested calls while the program runs: `callback-scope A T R;
//! <ops>; close` is `addon.callbackScope(A, T, R, frame, closeIndex)`, where
//! `frame` runs the steps up to the close. Every op writes a marker line
//! `{"op":i}` before its code, so that the observations after it can be told
//! apart from the next op's; a few ops cannot be separated from the op before
//! them (see [`Program::group_starts`]).
//!
//! [`Checker`] decides, one op at a time, what the program can express; every
//! refusal is an [`Unsupported`] that says why. docs/conformance.md lists the
//! decisions.

use super::harness::Capabilities;
use model::vocab::{AsyncId, Holder, HookCallbacks, Op, ScopeFlags, ScopeKind};
use std::fmt;
use std::path::Path;

/// The JS prologue every program starts with.
pub const RUNTIME_JS: &str = include_str!("../../tests/conformance/runtime.js");

/// What an `entry-module` program (`program.mjs`) starts with, before the
/// runtime: an ES module has no `require`, so it makes the CommonJS one; and
/// v20's ESM loader reads the entry with `fs.promises` and closes the file
/// after the module body has started (a `CloseReq` still active, whose
/// destroy hook would fire in the middle of the trace), so the module first
/// waits, one `setImmediate` at a time, until no such request is left. With
/// none (Node 26), nothing is awaited and the body runs straight on. After
/// an await the body goes on in the microtask checkpoint of the Immediate's
/// `InternalMakeCallback` scope, after its pop: at (0, 0) on an empty stack,
/// at callback-scope depth 1, as the module body itself runs, and that
/// scope's `Close` goes on as the main-script scope's would (the `kTotals`
/// CHECK, the ticks). No hook exists yet, so none of this is observed.
const ESM_HEADER: &str = "import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
while (process.getActiveResourcesInfo().some((r) => r === 'CloseReq' || r.startsWith('FSReq') || r.startsWith('FileHandle'))) {
  await new Promise((resolve) => setImmediate(resolve));
}
";

/// Ids are doubles in JS: larger magnitudes would not round-trip.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// An op the Node.js program cannot express, at its index in the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The op's index in the trace (0-based).
    pub index: usize,
    /// The op as trace text.
    pub op: String,
    /// Why the binary cannot run it.
    pub reason: String,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "op {} `{}` cannot run on node: {}",
            self.index, self.op, self.reason
        )
    }
}

impl std::error::Error for Unsupported {}

/// A frame of the program's call stack, as the translator tracks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FrameKind {
    /// The main script (`StartExecution`'s scope).
    Main,
    /// `addon.callbackScope` (or `addon.globalCallbackScope`).
    CallbackScope,
    /// `addon.makeCallback`.
    MakeCallback,
    /// `runInAsyncScope`.
    RunInAsyncScope,
    /// `defaultTriggerAsyncIdScope`.
    DefaultTriggerScope,
    /// `Environment::RunTimers`' scope (`timers-scope`): the program's timers
    /// callback, called by RunTimers itself (`addon.runTimers`).
    Timers,
    /// `als.run` / `als.exit`.
    AlsRun,
    /// The callback of a `next-tick-body` tick, which the runtime runs as a
    /// `frame()` up to its `et` step.
    Tick,
    /// The callback of a `queue-microtask-body` or `promise-then-body`
    /// microtask, which the runtime runs as a `frame()` up to its `em` step.
    Microtask,
}

/// Who performed the microtask checkpoint a microtask's callback runs in,
/// as far as the program's shape goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Site {
    /// The outermost close of a native scope of this kind.
    Close(FrameKind),
    /// The end of a tick run (the native scope whose close ran it, or
    /// `None` for `process._tickCallback()`).
    TickRun(Option<FrameKind>),
    /// `runNextTicks` (`process._tickCallback()`).
    NextTicks,
}

impl FrameKind {
    fn describe(self) -> &'static str {
        match self {
            FrameKind::Main => "the main script's scope",
            FrameKind::CallbackScope => "a callback-scope",
            FrameKind::MakeCallback => "a make-callback",
            FrameKind::RunInAsyncScope => "a run-in-async-scope",
            FrameKind::DefaultTriggerScope => "a default-trigger-scope",
            FrameKind::Timers => "RunTimers' scope",
            FrameKind::AlsRun => "an als-run",
            FrameKind::Tick => "a tick's callback",
            FrameKind::Microtask => "a microtask's callback",
        }
    }

    fn is_native(self) -> bool {
        matches!(
            self,
            FrameKind::Main
                | FrameKind::CallbackScope
                | FrameKind::MakeCallback
                | FrameKind::Timers
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Frame {
    kind: FrameKind,
    /// An `uncaught-exception` was thrown in this frame's callback and its
    /// callback returned (the main script's body, a make-callback's
    /// callback): it can only close now. `Some(handled)`.
    thrown: Option<bool>,
    /// A handled `uncaught-exception` was thrown directly in this frame and
    /// its JS goes on (a callback-scope: the addon calls JS again; RunTimers'
    /// scope: RunTimers calls its callback again).
    had_exception: bool,
    /// A callback-scope holding its resource as a Global: the resource's
    /// number, which names the Global in the addon.
    global_key: Option<u32>,
    /// The index of the op that opened it (`usize::MAX` for the main
    /// script's scope).
    open_index: usize,
    /// Closed out of order by a `close-outer`: gone in the model; in the
    /// program its JS frame returns once the frames inside it have ended.
    closed_early: bool,
    /// A tick's callback: the native scope whose outermost close ran it, or
    /// `None` when `process._tickCallback()` did.
    tick_run: Option<FrameKind>,
    /// A microtask's callback: the checkpoint that ran it.
    site: Option<Site>,
}

impl Frame {
    fn new(kind: FrameKind, open_index: usize, global_key: Option<u32>) -> Self {
        Frame {
            kind,
            thrown: None,
            had_exception: false,
            global_key,
            open_index,
            closed_early: false,
            tick_run: None,
            site: None,
        }
    }
}

/// What the translator can express, decided op by op, for a binary with
/// given [`Capabilities`]. Cloning it is cheap: the random generator tries an
/// op on a clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checker {
    capabilities: Capabilities,
    frames: Vec<Frame>,
    index: usize,
    main_closed: bool,
    exited: bool,
    no_force_checks: bool,
    /// `entry-module`: the program is an `.mjs` file.
    module_entry: bool,
    /// An op other than a header op was accepted.
    started: bool,
    /// A `close-outer` ran: V8's TryCatch chain no longer holds the
    /// TryCatches of the scopes inside the deleted one (each
    /// `v8::TryCatch` unregisters itself by restoring the `next_` it saw
    /// when it was made), so an exception from then on does not go where
    /// Node's async-context code decides; exceptions are refused.
    try_catch_chain_broken: bool,
    /// The tick queue as far as the program's shape goes: whether each
    /// queued tick has a body.
    ticks: std::collections::VecDeque<bool>,
    /// `tickInfo[kHasTickScheduled]`: set by a tick queued on an empty
    /// queue, cleared when a tick run ends.
    has_tick_scheduled: bool,
    /// The microtask queue as far as the program's shape goes: whether
    /// each queued job has a body.
    microtasks: std::collections::VecDeque<bool>,
}

impl Default for Checker {
    fn default() -> Self {
        Self::new()
    }
}

/// How an accepted op is written, for the code generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// Its code starts with its own marker.
    Plain,
    /// It opens a frame of this kind.
    Open(FrameKind),
    /// It closes a frame of this kind; `thrown` if an uncaught exception was
    /// thrown in it, `threw` is the op's own flag.
    Close {
        kind: FrameKind,
        thrown: bool,
        threw: bool,
        global_key: Option<u32>,
        /// The index of the op that opened the frame.
        open_index: usize,
    },
    /// `close-outer`: `napi_close_callback_scope` on the N-API scope that
    /// the op at index `key` opened, which is frame `frame` of the checker.
    CloseOuter { key: usize, frame: usize },
}

impl Checker {
    /// A checker at the start of the main script, for v20's public API
    /// (no `Global<Object>*` callback scopes).
    pub fn new() -> Self {
        Self::with_capabilities(Capabilities::default())
    }

    /// A checker at the start of the main script, for a binary with these
    /// capabilities.
    pub fn with_capabilities(capabilities: Capabilities) -> Self {
        Checker {
            capabilities,
            frames: vec![Frame::new(FrameKind::Main, usize::MAX, None)],
            index: 0,
            main_closed: false,
            exited: false,
            no_force_checks: false,
            module_entry: false,
            started: false,
            try_catch_chain_broken: false,
            ticks: std::collections::VecDeque::new(),
            has_tick_scheduled: false,
            microtasks: std::collections::VecDeque::new(),
        }
    }

    /// Whether the trace's entry is an ES module (`entry-module`).
    pub fn module_entry(&self) -> bool {
        self.module_entry
    }

    /// Whether the trace so far asks for `--no-force-async-hooks-checks`.
    pub fn no_force_checks(&self) -> bool {
        self.no_force_checks
    }

    /// Ops accepted so far.
    pub fn len(&self) -> usize {
        self.index
    }

    /// No op accepted yet.
    pub fn is_empty(&self) -> bool {
        self.index == 0
    }

    /// Open frames, the main script's scope included (0 once it closed).
    pub fn depth(&self) -> usize {
        self.frames.iter().filter(|f| !f.closed_early).count()
    }

    /// Whether the innermost frame had an uncaught exception thrown in it
    /// (the only op it can take now is its close).
    pub fn must_close(&self) -> bool {
        self.frames.last().is_some_and(|f| f.thrown.is_some())
    }

    /// Accept the next op, or say why the program cannot express it. On
    /// error the checker is unchanged.
    pub fn push(&mut self, op: &Op) -> Result<(), Unsupported> {
        self.accept(op).map(|_| ())
    }

    fn refuse<T>(&self, op: &Op, reason: impl Into<String>) -> Result<T, Unsupported> {
        Err(Unsupported {
            index: self.index,
            op: op.to_string(),
            reason: reason.into(),
        })
    }

    fn accept(&mut self, op: &Op) -> Result<Shape, Unsupported> {
        let shape = self.shape(op)?;
        match shape {
            Shape::Open(kind) => {
                let global_key = match op {
                    Op::OpenScope { resource, .. } if resource.holder == Holder::Global => {
                        Some(resource.id.0)
                    }
                    _ => None,
                };
                self.frames.push(Frame::new(kind, self.index, global_key))
            }
            Shape::Close {
                kind,
                thrown,
                threw,
                ..
            } => {
                // node::CallbackScope's TryCatch caught an exception: its
                // destructor marks the scope failed.
                let caught = (self.frames.pop())
                    .is_some_and(|f| f.had_exception && f.kind == FrameKind::CallbackScope);
                self.drop_closed_early();
                if kind == FrameKind::Main {
                    self.main_closed = true;
                }
                // The outermost close of a scope that did not fail runs the
                // tick queue (InternalCallbackScope::Close): a bare main
                // script's scope is never failed.
                let failed = threw || caught || (thrown && kind != FrameKind::Main);
                // A tick that a Close ran runs inside that Close: its scope
                // still counts (callback-scope depth).
                let outermost = !(self.frames.iter()).any(|f| {
                    (f.kind.is_native() && !f.closed_early)
                        || (f.kind == FrameKind::Tick && f.tick_run.is_some())
                        || matches!(f.site, Some(Site::Close(_) | Site::TickRun(Some(_))))
                });
                if kind.is_native() && outermost && !failed {
                    self.close_checkpoint(kind);
                }
            }
            Shape::CloseOuter { frame, .. } => {
                self.frames[frame].closed_early = true;
                self.try_catch_chain_broken = true;
            }
            Shape::Plain => match op {
                Op::NoForceAsyncHooksChecks => self.no_force_checks = true,
                Op::EntryModule => self.module_entry = true,
                Op::UncaughtException { handled } => {
                    if let Some(FrameKind::Tick) = self.frames.last().map(|f| f.kind) {
                        // The tick threw inside the Close that ran it: the
                        // run and that Close are over.
                        self.frames.pop();
                        self.drop_closed_early();
                    } else if let Some(frame) = self.frames.last_mut() {
                        match frame.kind {
                            // JS goes on in the scope (see `shape`).
                            FrameKind::CallbackScope | FrameKind::Timers => {
                                frame.had_exception = true
                            }
                            _ => frame.thrown = Some(*handled),
                        }
                    }
                    if !handled {
                        self.exited = true;
                    }
                }
                Op::NextTick { .. } | Op::NextTickBody => {
                    if self.ticks.is_empty() {
                        self.has_tick_scheduled = true;
                    }
                    self.ticks.push_back(matches!(op, Op::NextTickBody));
                }
                Op::QueueMicrotask | Op::PromiseThen => self.microtasks.push_back(false),
                Op::QueueMicrotaskBody | Op::PromiseThenBody => self.microtasks.push_back(true),
                Op::TickCallback => self.run_next_ticks(),
                Op::EndTick => {
                    if let Some(frame) = self.frames.pop() {
                        self.run_ticks(frame.tick_run);
                    }
                    self.drop_closed_early();
                }
                Op::EndMicrotask => {
                    if let Some(site) = self.frames.pop().and_then(|f| f.site) {
                        if !self.run_microtasks(site) {
                            self.after_checkpoint(site);
                        }
                    }
                    self.drop_closed_early();
                }
                _ => {}
            },
        }
        if !matches!(op, Op::NoForceAsyncHooksChecks | Op::EntryModule) {
            self.started = true;
        }
        self.index += 1;
        Ok(shape)
    }

    /// `processTicksAndRejections` as far as the program's shape goes: the
    /// ticks without a body run through, the first with one opens its
    /// callback's frame.
    fn run_ticks(&mut self, run: Option<FrameKind>) {
        while let Some(body) = self.ticks.pop_front() {
            if body {
                self.frames.push(Frame {
                    tick_run: run,
                    ..Frame::new(FrameKind::Tick, self.index, None)
                });
                return;
            }
        }
        // runMicrotasks(), then the do-while.
        if !self.run_microtasks(Site::TickRun(run)) {
            self.after_checkpoint(Site::TickRun(run));
        }
    }

    /// `runNextTicks` (`process._tickCallback()`): the microtask
    /// checkpoint when no tick is scheduled, then the ticks if one is.
    fn run_next_ticks(&mut self) {
        if self.has_tick_scheduled || !self.run_microtasks(Site::NextTicks) {
            self.after_checkpoint(Site::NextTicks);
        }
    }

    /// The outermost close of a native scope of `kind` that did not fail:
    /// the microtask checkpoint when no tick is scheduled, then the ticks.
    fn close_checkpoint(&mut self, kind: FrameKind) {
        if self.has_tick_scheduled || !self.run_microtasks(Site::Close(kind)) {
            self.after_checkpoint(Site::Close(kind));
        }
    }

    /// A microtask checkpoint: the jobs without a body run through, the
    /// first with one opens its callback's frame (`true`). Inside a
    /// microtask's callback a checkpoint runs nothing (V8's
    /// `IsRunningMicrotasks()`).
    fn run_microtasks(&mut self, site: Site) -> bool {
        if (self.frames.iter()).any(|f| f.kind == FrameKind::Microtask) {
            return false;
        }
        while let Some(body) = self.microtasks.pop_front() {
            if body {
                self.frames.push(Frame {
                    site: Some(site),
                    ..Frame::new(FrameKind::Microtask, self.index, None)
                });
                return true;
            }
        }
        false
    }

    /// What the checkpoint's caller does once the queue is empty: a close
    /// runs the ticks if one is scheduled; a tick run goes round again if a
    /// microtask queued a tick, else it ends; `runNextTicks` runs the ticks
    /// if one is scheduled.
    fn after_checkpoint(&mut self, site: Site) {
        match site {
            Site::Close(kind) => {
                if self.has_tick_scheduled {
                    self.run_ticks(Some(kind));
                }
            }
            Site::TickRun(run) => {
                if self.ticks.is_empty() {
                    self.has_tick_scheduled = false;
                } else {
                    self.run_ticks(run);
                }
            }
            Site::NextTicks => {
                if self.has_tick_scheduled {
                    self.run_ticks(None);
                }
            }
        }
    }

    /// Frames closed out of order (`close-outer`) end with the last frame
    /// inside them: drop those now innermost. A tick or microtask body that
    /// the run goes on to next stays inside them.
    fn drop_closed_early(&mut self) {
        while self.frames.last().is_some_and(|f| f.closed_early) {
            self.frames.pop();
        }
    }

    fn check_id(&self, op: &Op, id: AsyncId) -> Result<(), Unsupported> {
        if !(-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&id) {
            return self.refuse(
                op,
                format!("id {id} is not a safe integer, and Node's ids are JS numbers"),
            );
        }
        Ok(())
    }

    fn open_scope_shape(&self, op: &Op) -> Result<Shape, Unsupported> {
        let Op::OpenScope {
            kind,
            context,
            resource,
            flags,
        } = op
        else {
            return self.refuse(op, "not a scope");
        };
        self.check_id(op, context.async_id)?;
        self.check_id(op, context.trigger_async_id)?;
        if resource.holder == Holder::Global {
            if *kind == ScopeKind::MakeCallback {
                return self.refuse(
                    op,
                    "a `global` resource on a make-callback: node::MakeCallback takes its resource as a Local<Object> on every version",
                );
            }
            if !self.capabilities.global_callback_scope {
                return self.refuse(
                    op,
                    "a `global` resource holder: this binary's public node::CallbackScope takes a Local<Object> only (v20; the Global<Object>* constructor is in Node 26's node.h)",
                );
            }
        }
        if *flags != ScopeFlags::default() {
            return self.refuse(
                op,
                "skip-hooks / skip-queues are InternalCallbackScope flags that node::CallbackScope does not expose",
            );
        }
        Ok(Shape::Open(match kind {
            ScopeKind::CallbackScope => FrameKind::CallbackScope,
            ScopeKind::MakeCallback => FrameKind::MakeCallback,
        }))
    }

    /// `close-outer K`: the target is the K-th open native scope from the
    /// innermost (frames closed out of order before are gone). The program
    /// opens it with `napi_open_callback_scope` and closes it with
    /// `napi_close_callback_scope` (`tests/conformance/napi.cc`), so it must
    /// be what an N-API scope can be.
    fn close_outer_shape(&self, op: &Op, outer: u32) -> Result<Shape, Unsupported> {
        let natives: Vec<usize> = (self.frames.iter().enumerate().rev())
            .filter(|(_, f)| !f.closed_early && f.kind.is_native())
            .map(|(i, _)| i)
            .collect();
        let Some(&index) = natives.get(outer as usize).filter(|_| outer > 0) else {
            return self.refuse(
                op,
                format!(
                    "close-outer {outer}: it needs a native scope with {outer} (at least 1) open native scopes inside it; {} are open",
                    natives.len()
                ),
            );
        };
        let frame = &self.frames[index];
        if frame.kind != FrameKind::CallbackScope {
            return self.refuse(
                op,
                format!(
                    "close-outer {outer}: that is {}; only a callback scope an addon opened (napi_open_callback_scope) is closed out of order",
                    frame.kind.describe()
                ),
            );
        }
        if frame.global_key.is_some() {
            return self.refuse(
                op,
                format!("close-outer {outer}: that scope holds its resource as a Global; an N-API callback scope holds a Local made from its own Global (src/node_api.cc, AsyncContext::CallbackScope), which no reset-global reaches"),
            );
        }
        Ok(Shape::CloseOuter {
            key: frame.open_index,
            frame: index,
        })
    }

    fn reset_global_shape(&self, op: &Op) -> Result<Shape, Unsupported> {
        if !self.capabilities.global_callback_scope {
            return self.refuse(
                op,
                "reset-global: this binary's public API has no Global<Object> resource holder (v20; node::CallbackScope(Environment*, Global<Object>*, async_context) is in Node 26's node.h)",
            );
        }
        Ok(Shape::Plain)
    }

    /// An op that ends the innermost frame, which must be of `kind`.
    fn expect_innermost(
        &self,
        op: &Op,
        innermost: &Frame,
        kind: FrameKind,
    ) -> Result<(), Unsupported> {
        if innermost.kind != kind {
            return self.refuse(
                op,
                format!(
                    "{}: the innermost frame is {}",
                    op.kind(),
                    innermost.kind.describe()
                ),
            );
        }
        Ok(())
    }

    /// The end of a JS frame (`runInAsyncScope`, `defaultTriggerAsyncIdScope`,
    /// `als.run`): its `finally`, written as its close.
    fn end_js_frame(
        &self,
        op: &Op,
        innermost: &Frame,
        kind: FrameKind,
    ) -> Result<Shape, Unsupported> {
        self.expect_innermost(op, innermost, kind)?;
        Ok(Shape::Close {
            kind,
            thrown: false,
            threw: false,
            global_key: None,
            open_index: innermost.open_index,
        })
    }

    fn shape(&self, op: &Op) -> Result<Shape, Unsupported> {
        if self.exited {
            return self.refuse(
                op,
                "the process has exited (an unhandled uncaught exception)",
            );
        }
        let Some(innermost) = self.frames.last() else {
            // After the main script: the program's event-loop callback runs
            // JS outside any scope only to open a native one (or to reset a
            // Global, which is native code in the model and touches no
            // async context in the program either).
            if matches!(op, Op::OpenScope { .. }) {
                return self.open_scope_shape(op);
            }
            if matches!(op, Op::TimersScope) {
                return Ok(Shape::Open(FrameKind::Timers));
            }
            if let Op::ResetGlobal(_) = op {
                return self.reset_global_shape(op);
            }
            return self.refuse(
                op,
                "after the main script (its scope closed), JavaScript runs from the event loop only inside a native scope: open one with callback-scope or make-callback",
            );
        };
        if innermost.thrown.is_some() && !matches!(op, Op::CloseScope { .. }) {
            // The main script's body stops; a make-callback's callback has
            // returned (InternalMakeCallback saw the empty result).
            return self.refuse(
                op,
                format!(
                    "an uncaught exception was thrown in {}: no more of its callback runs, the next op must be its `close`",
                    innermost.kind.describe()
                ),
            );
        }
        let ids: Vec<AsyncId> = match op {
            Op::OpenScope { context, .. } => vec![context.async_id, context.trigger_async_id],
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
            } => vec![*async_id, *trigger_async_id],
            Op::EmitAfter { async_id } | Op::EmitDestroy { async_id } => vec![*async_id],
            Op::EnterDefaultTriggerScope { trigger_async_id } => vec![*trigger_async_id],
            _ => Vec::new(),
        };
        for id in ids {
            self.check_id(op, id)?;
        }
        match op {
            Op::NoForceAsyncHooksChecks => {
                if self.started {
                    return self.refuse(op, "--no-force-async-hooks-checks is a command-line option: only before every other op (but entry-module)");
                }
                Ok(Shape::Plain)
            }
            Op::OpenScope { .. } => self.open_scope_shape(op),
            Op::CloseScope { threw } => {
                let kind = innermost.kind;
                if !kind.is_native() {
                    return self.refuse(op, format!("close: the innermost frame is {}", kind.describe()));
                }
                let thrown = innermost.thrown.is_some();
                if *threw && kind == FrameKind::Main {
                    return self.refuse(
                        op,
                        "`close threw` on the main script's scope: StartExecution's scope is never marked failed (after an exception in the main script, write `close`)",
                    );
                }
                if *threw && kind == FrameKind::Timers {
                    return self.refuse(
                        op,
                        "`close threw` on RunTimers' scope: a bare InternalCallbackScope that nothing marks failed (write `close`)",
                    );
                }
                if *threw && self.try_catch_chain_broken {
                    return self.refuse(
                        op,
                        "`close threw` after a close-outer: V8's TryCatch chain no longer holds the TryCatches made inside the deleted N-API scope, so where the exception goes is not Node's async-context code's doing",
                    );
                }
                if *threw && !innermost.had_exception && kind == FrameKind::CallbackScope {
                    return self.refuse(
                        op,
                        "`close threw` on a callback-scope: node::CallbackScope's TryCatch is verbose, so an exception from its callback always reaches the uncaught-exception handler first; write `uncaught-exception handled|unhandled` before the close",
                    );
                }
                Ok(Shape::Close {
                    kind,
                    thrown,
                    threw: *threw,
                    global_key: innermost.global_key,
                    open_index: innermost.open_index,
                })
            }
            Op::ResetGlobal(_) => self.reset_global_shape(op),
            Op::EntryModule => {
                if self.started || self.module_entry {
                    return self.refuse(
                        op,
                        "entry-module says how the process starts (an .mjs entry): once, before every other op (but no-force-async-hooks-checks)",
                    );
                }
                Ok(Shape::Plain)
            }
            Op::CloseOuter { outer } => self.close_outer_shape(op, *outer),
            Op::TimersScope => self.refuse(
                op,
                "timers-scope: Environment::RunTimers runs from the event loop when no native scope is open (close the main script's first)",
            ),
            Op::Stop => self.refuse(
                op,
                "stop: Environment::ExitEnv comes from another thread (worker.terminate()); a program cannot stop its environment at a chosen op and go on running ops",
            ),
            Op::ExitRunInAsyncScope => self.end_js_frame(op, innermost, FrameKind::RunInAsyncScope),
            Op::NodeVersion(v) => {
                if *v != self.capabilities.profile {
                    return self.refuse(
                        op,
                        format!(
                            "the trace is for the node {v} profile, and this binary's profile is {}",
                            self.capabilities.profile
                        ),
                    );
                }
                Ok(Shape::Plain)
            }
            Op::AlsRun { .. }
            | Op::AlsExit(_)
            | Op::AlsEnterWith { .. }
            | Op::AlsGetStore(_)
            | Op::AsyncResource(_)
                if !self.capabilities.async_context_frame =>
            {
                self.refuse(
                    op,
                    "AsyncLocalStorage on this binary is built on async hooks (v20, or --no-async-context-frame), which the model does not describe; the ALS ops run on Node 24 and later",
                )
            }
            Op::AlsRun { .. } | Op::AlsExit(_) => Ok(Shape::Open(FrameKind::AlsRun)),
            Op::AlsEnterWith { .. } | Op::AlsGetStore(_) | Op::AsyncResource(_) => {
                Ok(Shape::Plain)
            }
            Op::EndAlsRun => self.end_js_frame(op, innermost, FrameKind::AlsRun),
            Op::ExitDefaultTriggerScope => self.end_js_frame(op, innermost, FrameKind::DefaultTriggerScope),
            Op::EnterRunInAsyncScope { .. } => Ok(Shape::Open(FrameKind::RunInAsyncScope)),
            Op::EnterDefaultTriggerScope { .. } => Ok(Shape::Open(FrameKind::DefaultTriggerScope)),
            Op::UncaughtException { .. }
                if (self.frames.iter().rev())
                    .take_while(|f| !(f.kind.is_native() || f.kind == FrameKind::Tick && f.tick_run.is_some()))
                    .any(|f| f.kind == FrameKind::Microtask) =>
            {
                self.refuse(
                    op,
                    "uncaught-exception that leaves a microtask's callback: the model refuses it (docs/spec.md, end-microtask)",
                )
            }
            Op::UncaughtException { .. } if innermost.kind == FrameKind::Tick => {
                if self.try_catch_chain_broken {
                    return self.refuse(
                        op,
                        "uncaught-exception after a close-outer: V8's TryCatch chain no longer holds the TryCatches made inside the deleted N-API scope, so where the exception goes is not Node's async-context code's doing",
                    );
                }
                match innermost.tick_run {
                    Some(FrameKind::Main | FrameKind::CallbackScope) => Ok(Shape::Plain),
                    Some(_) => self.refuse(
                        op,
                        "next-tick-body / end-tick: an exception from a tick that a make-callback's close ran is not written yet",
                    ),
                    None => self.refuse(
                        op,
                        "next-tick-body / end-tick: an exception from a tick that process._tickCallback() ran goes on through the JS that called it; the program cannot go on with that scope's steps after it",
                    ),
                }
            }
            Op::UncaughtException { .. } => {
                if !innermost.kind.is_native() {
                    return self.refuse(
                        op,
                        format!(
                            "uncaught-exception: the innermost frame is {}; the exception unwinds the JS frames before it reaches a native scope",
                            innermost.kind.describe()
                        ),
                    );
                }
                if innermost.kind == FrameKind::Main && self.module_entry {
                    return self.refuse(
                        op,
                        "uncaught-exception in an ES module's top level: the throw rejects the module's evaluation promise and is reported from a promise job later, not by the main-script scope",
                    );
                }
                if self.try_catch_chain_broken {
                    return self.refuse(
                        op,
                        "uncaught-exception after a close-outer: V8's TryCatch chain no longer holds the TryCatches made inside the deleted N-API scope (each v8::TryCatch unregisters by restoring the next_ it saw), so where the exception goes is not Node's async-context code's doing",
                    );
                }
                Ok(Shape::Plain)
            }
            Op::QueueMicrotask
            | Op::PromiseThen
            | Op::PromiseReject
            | Op::QueueMicrotaskBody
            | Op::PromiseThenBody
                if self.module_entry =>
            {
                self.refuse(
                    op,
                    "queue-microtask / promise-then (with or without a body) / promise-reject in an .mjs program: the module body itself runs in a microtask checkpoint among the ESM loader's promises (whose tracking the program switches off), which the model does not describe",
                )
            }
            Op::QueueMicrotask | Op::QueueMicrotaskBody | Op::PromiseThenBody => Ok(Shape::Plain),
            Op::EndMicrotask => self
                .expect_innermost(op, innermost, FrameKind::Microtask)
                .map(|()| Shape::Plain),
            Op::EndTick => self
                .expect_innermost(op, innermost, FrameKind::Tick)
                .map(|()| Shape::Plain),
            Op::CreateHook { .. }
            | Op::EnableHook(_)
            | Op::DisableHook(_)
            | Op::EmitInit { .. }
            | Op::EmitBefore { .. }
            | Op::EmitAfter { .. }
            | Op::EmitDestroy { .. }
            | Op::NextTick { .. }
            | Op::NextTickBody
            | Op::PromiseThen
            | Op::PromiseReject
            | Op::TickCallback
            | Op::ExecutionAsyncId
            | Op::TriggerAsyncId
            | Op::ExecutionAsyncResource
            | Op::DefaultTriggerAsyncId
            | Op::NewAsyncId
            | Op::ClearAsyncIdStack => Ok(Shape::Plain),
        }
    }
}

/// Whether every op of `ops` can run on a v20 node, in order.
pub fn check(ops: &[Op]) -> Result<(), Unsupported> {
    check_with(ops, Capabilities::default())
}

/// Whether every op of `ops` can run, in order, on a node binary with these
/// capabilities.
pub fn check_with(ops: &[Op], capabilities: Capabilities) -> Result<(), Unsupported> {
    let mut checker = Checker::with_capabilities(capabilities);
    for op in ops {
        checker.push(op)?;
    }
    Ok(())
}

/// A Node.js program for a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The JavaScript source: the runtime prologue and interpreter
    /// (`tests/conformance/runtime.js`), then one line
    /// `runTrace("STEPS", MAIN_CLOSE);` with one step per op. Its size is
    /// linear in the trace and it nests nothing: the frames nest in node's
    /// call stack while it runs.
    pub source: String,
    /// Node options beyond `--no-deprecation --expose-internals`.
    pub node_args: Vec<String>,
    /// The indices of the ops that write a marker, ascending. An op without
    /// one (the close of a make-callback or of the main script right after an
    /// `uncaught-exception` in it: nothing runs in between) shares the group
    /// of the op before it: the comparison takes the two together.
    pub group_starts: Vec<usize>,
    /// The entry is an ES module (`entry-module`): the source is run as
    /// `program.mjs`, and starts by making `require` with
    /// `module.createRequire`.
    pub module: bool,
}

fn js_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// An id as the steps write it (the model's number; the runtime maps it).
fn push_id(out: &mut String, x: AsyncId) {
    out.push(' ');
    out.push_str(&x.to_string());
}

/// `R<n>`'s number, or `-`.
fn push_resource(out: &mut String, r: Option<u32>) {
    match r {
        Some(n) => {
            out.push(' ');
            out.push_str(&n.to_string());
        }
        None => out.push_str(" -"),
    }
}

/// A type name as one step token: bytes outside `[A-Za-z0-9_.-]` as `%XX`
/// (the runtime decodes it with `decodeURIComponent`).
fn push_type_name(out: &mut String, name: &str) {
    out.push(' ');
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

fn callbacks_step(c: &HookCallbacks) -> String {
    let names: Vec<&str> = [
        (c.init, "init"),
        (c.before, "before"),
        (c.after, "after"),
        (c.destroy, "destroy"),
        (c.promise_resolve, "promiseResolve"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if names.is_empty() {
        "-".to_string()
    } else {
        names.join(",")
    }
}

/// The step of an op that writes its own marker and opens or closes nothing.
fn plain_step(out: &mut String, op: &Op, model_id: Option<AsyncId>) {
    let model = |out: &mut String| match model_id {
        Some(m) => push_id(out, m),
        None => out.push_str(" -"),
    };
    match op {
        Op::NoForceAsyncHooksChecks => out.push_str("nf"),
        // The program is an .mjs file: nothing to do at the op itself.
        Op::EntryModule => out.push_str("em"),
        Op::CreateHook { hook, callbacks } => {
            out.push_str(&format!("ch {hook} {}", callbacks_step(callbacks)));
        }
        Op::EnableHook(h) => out.push_str(&format!("eh {h}")),
        Op::DisableHook(h) => out.push_str(&format!("dh {h}")),
        Op::EmitInit {
            async_id,
            type_name,
            trigger_async_id,
            resource,
        } => {
            out.push_str("ei");
            push_id(out, *async_id);
            push_type_name(out, type_name);
            push_id(out, *trigger_async_id);
            push_resource(out, resource.map(|r| r.0));
        }
        Op::EmitBefore {
            async_id,
            trigger_async_id,
            resource,
        } => {
            out.push_str("eb");
            push_id(out, *async_id);
            push_id(out, *trigger_async_id);
            push_resource(out, resource.map(|r| r.0));
        }
        Op::EmitAfter { async_id } => {
            out.push_str("ea");
            push_id(out, *async_id);
        }
        Op::EmitDestroy { async_id } => {
            out.push_str("ed");
            push_id(out, *async_id);
        }
        Op::NextTick { query_resource } => {
            out.push_str("nt");
            model(out);
            out.push_str(if *query_resource { " 1" } else { " 0" });
        }
        Op::TickCallback => out.push_str("tc"),
        Op::NextTickBody => {
            out.push_str("ntb");
            model(out);
        }
        Op::EndTick => out.push_str("et"),
        Op::QueueMicrotask => out.push_str("qm"),
        Op::PromiseThen => out.push_str("pt"),
        Op::PromiseReject => out.push_str("prj"),
        Op::QueueMicrotaskBody => out.push_str("qmb"),
        Op::PromiseThenBody => out.push_str("ptb"),
        Op::EndMicrotask => out.push_str("emt"),
        Op::ExecutionAsyncId => out.push_str("eid"),
        Op::TriggerAsyncId => out.push_str("tid"),
        Op::ExecutionAsyncResource => out.push_str("ear"),
        Op::DefaultTriggerAsyncId => out.push_str("dtid"),
        Op::NewAsyncId => {
            out.push_str("new");
            model(out);
        }
        Op::UncaughtException { handled } => {
            out.push_str(if *handled { "ue 1" } else { "ue 0" });
        }
        Op::ClearAsyncIdStack => out.push_str("cl"),
        Op::ResetGlobal(r) => {
            out.push_str("rg");
            push_resource(out, Some(r.0));
        }
        // The profile is the binary's own: nothing to run.
        Op::NodeVersion(v) => out.push_str(&format!("nv {v}")),
        Op::AlsEnterWith { als, store } => out.push_str(&format!("aw {} {store}", als.0)),
        Op::AlsGetStore(als) => out.push_str(&format!("ag {}", als.0)),
        Op::AsyncResource(r) => {
            out.push_str("rf");
            push_resource(out, Some(r.0));
        }
        // Frames are written by `translate` itself; refused ops never get here.
        Op::OpenScope { .. }
        | Op::CloseScope { .. }
        | Op::EnterRunInAsyncScope { .. }
        | Op::ExitRunInAsyncScope
        | Op::EnterDefaultTriggerScope { .. }
        | Op::ExitDefaultTriggerScope
        | Op::AlsRun { .. }
        | Op::AlsExit(_)
        | Op::EndAlsRun
        | Op::CloseOuter { .. }
        | Op::TimersScope
        | Op::Stop => {}
    }
}

/// The step that opens a frame (without its close index).
fn open_step(out: &mut String, op: &Op, kind: FrameKind, verbose: bool, napi: bool) {
    match op {
        Op::OpenScope {
            context, resource, ..
        } => {
            out.push_str(if kind != FrameKind::CallbackScope {
                "mc"
            } else if napi {
                // Closed out of order later: an N-API callback scope.
                "ns"
            } else if resource.holder == Holder::Global {
                // The Global's key in the addon is the resource's number.
                "gs"
            } else {
                "cs"
            });
            push_id(out, context.async_id);
            push_id(out, context.trigger_async_id);
            push_resource(out, Some(resource.id.0));
            if kind == FrameKind::MakeCallback {
                out.push_str(if verbose { " 1" } else { " 0" });
            }
        }
        Op::EnterRunInAsyncScope {
            async_id,
            trigger_async_id,
            resource,
        } => {
            out.push_str("ra");
            push_id(out, *async_id);
            push_id(out, *trigger_async_id);
            push_resource(out, Some(resource.0));
        }
        Op::EnterDefaultTriggerScope { trigger_async_id } => {
            out.push_str("dt");
            push_id(out, *trigger_async_id);
        }
        Op::TimersScope => out.push_str("ts"),
        Op::AlsRun { als, store } => out.push_str(&format!("ar {} {store}", als.0)),
        Op::AlsExit(als) => out.push_str(&format!("ax {}", als.0)),
        _ => {}
    }
}

/// The step that closes a frame, and whether it writes a marker.
fn close_step(kind: FrameKind, thrown: bool, threw: bool) -> (&'static str, bool) {
    match kind {
        // The addon writes the marker once the callback is done.
        FrameKind::CallbackScope => ("x", true),
        // Nothing runs between the uncaught exception and this close.
        FrameKind::MakeCallback if thrown => ("xu", false),
        FrameKind::MakeCallback if threw => ("xt", true),
        FrameKind::MakeCallback => ("xm", true),
        FrameKind::RunInAsyncScope | FrameKind::DefaultTriggerScope | FrameKind::AlsRun => {
            ("xj", true)
        }
        FrameKind::Timers => ("xT", true),
        FrameKind::Main if thrown => ("xU", false),
        FrameKind::Main => ("xM", true),
        // `end-tick` is written as a plain step; for completeness.
        FrameKind::Tick => ("et", true),
        // `end-microtask` too.
        FrameKind::Microtask => ("emt", true),
    }
}

/// Translate `ops` into a program that loads the addon at `addon`, for a
/// binary with `capabilities`. `assigned[i]` is the id the model handed out
/// at op `i` (`new-async-id`, `next-tick`), which the program maps to the
/// one Node hands out; a missing entry maps nothing.
///
/// The program is the runtime and a flat list of steps, one per op
/// (`tests/conformance/runtime.js` documents them): its size is linear in
/// the trace, whatever the nesting. Frames the trace leaves open run to the
/// end of the program (`conform_trace` appends their closes instead).
pub fn translate(
    ops: &[Op],
    assigned: &[Option<AsyncId>],
    addon: &Path,
    capabilities: Capabilities,
) -> Result<Program, Unsupported> {
    // First pass: what each op is, and where each frame closes.
    let mut checker = Checker::with_capabilities(capabilities);
    let mut shapes = Vec::with_capacity(ops.len());
    let mut close_of: Vec<Option<usize>> = vec![None; ops.len()];
    // Make-callbacks with an uncaught exception reported while they are
    // open (`verbose`), by the index of their open.
    let mut verbose = std::collections::HashSet::new();
    // Callback-scopes closed out of order, by the index of their open.
    let mut napi = std::collections::HashSet::new();
    let mut timers = false;
    let mut main_close = None;
    for (i, op) in ops.iter().enumerate() {
        let shape = checker.accept(op)?;
        match shape {
            Shape::Open(kind) => timers |= kind == FrameKind::Timers,
            Shape::Close {
                kind,
                thrown,
                open_index,
                ..
            } => {
                if kind == FrameKind::Main {
                    main_close = Some(i);
                } else {
                    close_of[open_index] = Some(i);
                    if thrown {
                        verbose.insert(open_index);
                    }
                }
            }
            Shape::CloseOuter { key, .. } => {
                napi.insert(key);
            }
            Shape::Plain => {}
        }
        shapes.push(shape);
    }
    for frame in checker.frames.iter().filter(|f| f.kind != FrameKind::Main) {
        if frame.thrown.is_some() {
            verbose.insert(frame.open_index);
        }
    }

    // Second pass: the steps, written straight into a JS string literal (no
    // step contains a quote or a backslash).
    let addon_js = js_string(&addon.to_string_lossy());
    let napi_js = js_string(&napi_addon_path(addon).to_string_lossy());
    let prologue = RUNTIME_JS
        .replace("require(ADDON_PATH)", &format!("require({addon_js})"))
        .replace("require(NAPI_PATH)", &format!("require({napi_js})"));
    let mut out = String::with_capacity(prologue.len() + 16 * ops.len() + 128);
    if checker.module_entry {
        out.push_str(ESM_HEADER);
    }
    out.push_str(&prologue);
    out.push_str("runTrace(\"");
    let mut group_starts = Vec::with_capacity(ops.len());
    for (i, (op, shape)) in ops.iter().zip(&shapes).enumerate() {
        match *shape {
            Shape::Open(kind) => {
                group_starts.push(i);
                let is_napi = napi.contains(&i);
                open_step(&mut out, op, kind, verbose.contains(&i), is_napi);
                if is_napi {
                    // Its key; it is closed by a `co` step, not a close.
                    push_id(&mut out, i as AsyncId);
                } else if kind != FrameKind::Timers {
                    match close_of[i] {
                        Some(c) => push_id(&mut out, c as AsyncId),
                        None => out.push_str(" -1"),
                    }
                }
            }
            Shape::CloseOuter { key, .. } => {
                group_starts.push(i);
                out.push_str("co");
                push_id(&mut out, key as AsyncId);
            }
            Shape::Close {
                kind,
                thrown,
                threw,
                ..
            } => {
                let (step, marker) = close_step(kind, thrown, threw);
                if marker {
                    group_starts.push(i);
                }
                out.push_str(step);
            }
            Shape::Plain => {
                group_starts.push(i);
                plain_step(&mut out, op, assigned.get(i).copied().flatten());
            }
        }
        out.push_str("\\n");
    }
    let main_close = main_close.map_or(-1, |c| c as i64);
    let mut flags = String::new();
    for (on, flag) in [
        (checker.module_entry, 'm'),
        (!napi.is_empty(), 'n'),
        (timers, 't'),
    ] {
        if on {
            flags.push(flag);
        }
    }
    out.push_str(&format!("\", {main_close}, \"{flags}\");\n"));
    let mut node_args = Vec::new();
    if checker.no_force_checks {
        node_args.push("--no-force-async-hooks-checks".to_string());
    }
    Ok(Program {
        source: out,
        node_args,
        group_starts,
        module: checker.module_entry,
    })
}

/// The Node-API module (`tests/conformance/napi.cc`) built beside the addon
/// at `addon`: the same name with `-napi` before the extension.
pub fn napi_addon_path(addon: &Path) -> std::path::PathBuf {
    let stem = addon
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    addon.with_file_name(format!("{stem}-napi.node"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::vocab::{AsyncContext, NativeResource, ResourceId};

    fn scope(kind: ScopeKind) -> Op {
        Op::OpenScope {
            kind,
            context: AsyncContext {
                async_id: 5,
                trigger_async_id: 1,
            },
            resource: NativeResource {
                id: ResourceId(1),
                holder: Holder::Local,
            },
            flags: ScopeFlags::default(),
        }
    }

    #[test]
    fn markers_and_fused_groups() {
        let ops = vec![
            scope(ScopeKind::MakeCallback),
            Op::UncaughtException { handled: true },
            Op::CloseScope { threw: true },
            Op::ExecutionAsyncId,
            Op::CloseScope { threw: false },
        ];
        let p = match translate(
            &ops,
            &[],
            Path::new("/x/addon.node"),
            Capabilities::default(),
        ) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        // The make-callback's close right after the exception has no marker.
        assert_eq!(p.group_starts, vec![0, 1, 3, 4]);
        // The steps: the make-callback is verbose (an uncaught exception is
        // reported while it is open) and closes at op 2, without a marker
        // (`xu`); the main script's scope closes at op 4, with one (`xM`).
        assert!(
            p.source
                .ends_with("runTrace(\"mc 5 1 1 1 2\\nue 1\\nxu\\neid\\nxM\\n\", 4, \"\");\n"),
            "{}",
            &p.source[p.source.len() - 80..]
        );
        assert!(p.source.contains("require(\"/x/addon.node\")"));
        // A close threw without an exception before it throws from the
        // callback (`xt`); frames left open close at the end (`-1`).
        let ops = vec![
            scope(ScopeKind::MakeCallback),
            Op::CloseScope { threw: true },
            scope(ScopeKind::CallbackScope),
            Op::EmitInit {
                async_id: 7,
                type_name: "a b".to_string(),
                trigger_async_id: 5,
                resource: None,
            },
        ];
        let p = match translate(
            &ops,
            &[],
            Path::new("/x/addon.node"),
            Capabilities::default(),
        ) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        assert!(
            p.source.ends_with(
                "runTrace(\"mc 5 1 1 0 1\\nxt\\ncs 5 1 1 -1\\nei 7 a%20b 5 -\\n\", -1, \"\");\n"
            ),
            "{}",
            &p.source[p.source.len() - 80..]
        );
        assert_eq!(p.group_starts, vec![0, 1, 2, 3]);
    }

    #[test]
    fn global_scopes_and_resets_on_a_binary_that_has_them() {
        let global = |id: u32| Op::OpenScope {
            kind: ScopeKind::CallbackScope,
            context: AsyncContext {
                async_id: 5,
                trigger_async_id: 1,
            },
            resource: NativeResource {
                id: ResourceId(id),
                holder: Holder::Global,
            },
            flags: ScopeFlags::default(),
        };
        let ops = vec![
            global(3),
            Op::ResetGlobal(ResourceId(3)),
            Op::CloseScope { threw: false },
            Op::CloseScope { threw: false },
            Op::ResetGlobal(ResourceId(4)),
        ];
        let caps = Capabilities::node26();
        let p = match translate(&ops, &[], Path::new("/x/addon.node"), caps) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        // The Global callback-scope (`gs`, its key the resource's number 3)
        // closes at op 2; a reset inside it and one after the main script's
        // close (op 3), from the event loop.
        assert!(
            p.source
                .ends_with("runTrace(\"gs 5 1 3 2\\nrg 3\\nx\\nxM\\nrg 4\\n\", 3, \"\");\n"),
            "{}",
            &p.source[p.source.len() - 80..]
        );
        assert_eq!(p.group_starts, vec![0, 1, 2, 3, 4]);
        // Without the capability (v20): both refused, with the reason.
        let err = |ops: &[Op]| check(ops).err().map(|u| u.reason);
        assert!(err(&ops[..1]).is_some_and(|r| r.contains("Local<Object> only")));
        assert!(err(&[Op::ResetGlobal(ResourceId(1))]).is_some_and(|r| r.contains("reset-global")));
        // A make-callback never takes a Global.
        let mut mc = global(1);
        if let Op::OpenScope { kind, .. } = &mut mc {
            *kind = ScopeKind::MakeCallback;
        }
        assert!(check_with(&[mc], caps)
            .err()
            .is_some_and(|u| u.reason.contains("make-callback")));
    }

    #[test]
    fn the_steps_of_issue_13() {
        let program = |ops: &[Op]| match translate(
            ops,
            &[],
            Path::new("/x/addon.node"),
            Capabilities::default(),
        ) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        let tail = |p: &Program| p.source[p.source.rfind("runTrace(").unwrap_or(0)..].to_string();
        // The scope closed out of order is an N-API scope (`ns`, its key the
        // index of its open); `co` closes it; the inner scope's close is a
        // plain `x`; the N-API module is loaded (`n`) from beside the addon.
        let ops = vec![
            scope(ScopeKind::CallbackScope),
            scope(ScopeKind::CallbackScope),
            Op::CloseOuter { outer: 1 },
            Op::ExecutionAsyncId,
            Op::CloseScope { threw: false },
            Op::ExecutionAsyncId,
        ];
        let p = program(&ops);
        assert_eq!(
            tail(&p),
            "runTrace(\"ns 5 1 1 0\\ncs 5 1 1 4\\nco 0\\neid\\nx\\neid\\n\", -1, \"n\");\n"
        );
        assert_eq!(p.group_starts, vec![0, 1, 2, 3, 4, 5]);
        assert!(p.source.contains("require(\"/x/addon-napi.node\")"));
        assert!(!p.module);
        // RunTimers' scope from depth 0 (`ts`, closed by `xT`), the timers
        // callback installed (`t`).
        let ops = vec![
            Op::CloseScope { threw: false },
            Op::TimersScope,
            Op::UncaughtException { handled: true },
            Op::ExecutionAsyncId,
            Op::CloseScope { threw: false },
        ];
        let p = program(&ops);
        assert_eq!(
            tail(&p),
            "runTrace(\"xM\\nts\\nue 1\\neid\\nxT\\n\", 0, \"t\");\n"
        );
        // An ES module entry: program.mjs, with `require` made first.
        let p = program(&[Op::EntryModule, Op::ExecutionAsyncId]);
        assert!(p.module);
        assert!(p
            .source
            .starts_with("import { createRequire } from 'node:module';"));
        assert_eq!(tail(&p), "runTrace(\"em\\neid\\n\", -1, \"m\");\n");
        // After a handled exception in a callback-scope its JS goes on; in
        // a make-callback it does not.
        let after = |kind| {
            check(&[
                scope(kind),
                Op::UncaughtException { handled: true },
                Op::ExecutionAsyncId,
            ])
            .err()
            .map(|u| u.index)
        };
        assert_eq!(after(ScopeKind::CallbackScope), None);
        assert_eq!(after(ScopeKind::MakeCallback), Some(2));
        // close-outer needs a callback-scope with native scopes inside it.
        let refused = |ops: &[Op]| check(ops).err().map(|u| u.index);
        assert_eq!(
            refused(&[scope(ScopeKind::CallbackScope), Op::CloseOuter { outer: 1 }]),
            Some(1)
        );
        assert_eq!(
            refused(&[
                scope(ScopeKind::MakeCallback),
                scope(ScopeKind::CallbackScope),
                Op::CloseOuter { outer: 1 }
            ]),
            Some(2)
        );
        // Header ops: entry-module and no-force-async-hooks-checks in either
        // order, before anything else.
        assert_eq!(
            refused(&[Op::EntryModule, Op::NoForceAsyncHooksChecks]),
            None
        );
        assert_eq!(refused(&[Op::ExecutionAsyncId, Op::EntryModule]), Some(1));
        assert_eq!(refused(&[Op::TimersScope]), Some(0));
    }

    #[test]
    fn refusals() {
        let refused = |ops: &[Op]| check(ops).err().map(|u| u.index);
        assert_eq!(refused(&[Op::Stop]), Some(0));
        assert_eq!(
            refused(&[Op::ExecutionAsyncId, Op::NoForceAsyncHooksChecks]),
            Some(1)
        );
        assert_eq!(
            refused(&[
                scope(ScopeKind::CallbackScope),
                Op::CloseScope { threw: true }
            ]),
            Some(1)
        );
        assert_eq!(
            refused(&[
                scope(ScopeKind::CallbackScope),
                Op::UncaughtException { handled: true },
                Op::CloseScope { threw: true },
            ]),
            None
        );
        assert_eq!(
            refused(&[Op::UncaughtException { handled: true }, Op::NewAsyncId,]),
            Some(1)
        );
        assert_eq!(refused(&[Op::EmitAfter { async_id: 1 << 60 }]), Some(0));
        assert_eq!(
            refused(&[
                Op::CloseScope { threw: false },
                scope(ScopeKind::CallbackScope)
            ]),
            None
        );
        // The main script's scope is never failed: not even after an
        // exception in it.
        assert_eq!(
            refused(&[
                Op::UncaughtException { handled: true },
                Op::CloseScope { threw: true },
            ]),
            Some(1)
        );
        assert_eq!(
            refused(&[Op::CloseScope { threw: false }, Op::TickCallback]),
            Some(1)
        );
    }
}
