//! What a node binary can express, decided op by op from the eager model's
//! own state: its frames (which native scope is innermost, whether its
//! callback threw, who ran a tick's callback), and from the binary's
//! [`Capabilities`]. The program ([`super::emit`]) is the trace itself, so
//! whatever the model runs and this module accepts, node runs.
//!
//! The model does not hold everything the program's shape depends on; the
//! [`Decider`] keeps that, and nothing else: whether the program is an ES
//! module, whether V8's `TryCatch` chain is broken, and where the JS frames
//! of the N-API scopes closed out of order still sit on node's stack (for
//! [`Decider::depth`], the one depth count). Every refusal is an
//! [`Unsupported`] that says why; docs/conformance.md lists them.

use super::harness::Capabilities;
use model::eager::EagerStack;
use model::env::ticks::TickRun;
use model::env::Frame;
use model::vocab::{
    Family, Holder, NodeVersion, Observation, Op, OpError, Runtime, ScopeFlags, ScopeKind,
};
use model::Eager;
use std::fmt;

/// Ids are doubles in JS: larger magnitudes would not round-trip.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Why the throws after a `close-outer` are refused.
const BROKEN_CHAIN: &str = "V8's TryCatch chain no longer holds the TryCatches made inside the deleted N-API scope (each v8::TryCatch unregisters by restoring the next_ it saw), so where the exception goes is not Node's async-context code's doing";

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

/// The facts of the program the eager model does not hold. Cheap to clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decider {
    capabilities: Capabilities,
    /// `entry-module` ran: the program is an `.mjs` file, whose body the
    /// model runs as a microtask job in the main script's `Close`
    /// (docs/spec.md, `entry-module`).
    module_entry: bool,
    /// A `close-outer` ran: V8's TryCatch chain lost the TryCatches of the
    /// scopes inside the deleted one, so exceptions are refused from then on.
    try_catch_chain_broken: bool,
    /// The JS frames of N-API scopes closed out of order (gone from the
    /// model) that are still on node's stack: for each, how many of the
    /// model's frames are outside it. Its `frame()` returns once the model
    /// has no more frames than that.
    closed_early: Vec<usize>,
    /// The program runs in a `worker_threads` Worker, whose `process.exit()`
    /// stops its environment (`Worker::Exit` → `Stop` →
    /// `Environment::ExitEnv`, src/node_worker.cc): `stop` can be written
    /// (the exported tests; the conformance programs run on the main thread).
    stops_in_worker: bool,
}

impl Decider {
    /// At the start of the main script, for a binary with `capabilities`.
    pub fn new(capabilities: Capabilities) -> Self {
        Decider {
            capabilities,
            module_entry: false,
            try_catch_chain_broken: false,
            closed_early: Vec::new(),
            stops_in_worker: false,
        }
    }

    /// [`Decider::new`] for a program that runs in a Worker, where `stop`
    /// is `process.exit()`: from the event loop only (the worker's script
    /// runs in a MessagePort's callback, not in a scope like the main
    /// script's), with JS running, and only frame ends after it (no JS runs
    /// once the environment stops; the scopes close as the stack unwinds).
    pub fn in_worker(capabilities: Capabilities) -> Self {
        Decider {
            stops_in_worker: true,
            ..Decider::new(capabilities)
        }
    }

    /// Frames on node's call stack: the model's (the main script's scope
    /// included) and the JS frames of the N-API scopes closed out of order
    /// that have not returned yet.
    pub fn depth(&self, env: &Eager) -> usize {
        env.frames.len() + self.closed_early.len()
    }

    /// Whether node can express `op` in the state `env` is in (before it
    /// runs). An op the model rejects is left to the model, unless the
    /// program could not express it anyway.
    pub fn decide(&self, env: &Eager, op: &Op) -> Result<(), Unsupported> {
        let refuse = |reason: String| {
            Err(Unsupported {
                index: env.ops_applied as usize,
                op: op.to_string(),
                reason,
            })
        };
        match self.refusal(env, op) {
            Some(reason) => refuse(reason),
            None => Ok(()),
        }
    }

    /// Run `op` on the model as node will run it, if node can express it:
    /// the model's answer, and this decider's facts brought along.
    pub fn apply(
        &mut self,
        env: &mut Eager,
        op: &Op,
    ) -> Result<Result<Vec<Observation>, OpError>, Unsupported> {
        self.decide(env, op)?;
        Ok(self.run(env, op))
    }

    /// Run `op` on the model, decided or not, and bring this decider's facts
    /// along (the conformance pass goes on past a refusal to find what the
    /// model rejects).
    pub fn run(&mut self, env: &mut Eager, op: &Op) -> Result<Vec<Observation>, OpError> {
        let closes_early = match op {
            Op::CloseOuter { outer } => outer_target(env, *outer),
            _ => None,
        };
        let result = env.apply(op);
        if result.is_ok() {
            match op {
                Op::EntryModule { .. } => self.module_entry = true,
                Op::CloseOuter { .. } => {
                    self.try_catch_chain_broken = true;
                    self.closed_early.extend(closes_early);
                }
                _ => {}
            }
            let frames = env.frames.len();
            self.closed_early.retain(|&outside| outside < frames);
        }
        result
    }

    fn refusal(&self, env: &Eager, op: &Op) -> Option<String> {
        if env.exited {
            return Some(
                "the process has ended (an unhandled exception, a corrupted stack or a CHECK)"
                    .to_string(),
            );
        }
        if env.is_stopping && self.stops_in_worker {
            let ends = op.ends_frame();
            return match op {
                Op::CloseScope { threw: false } => None,
                Op::CloseScope { threw: true } | Op::CloseOuter { .. } => Some(
                    "after stop a scope closes as the worker's stack unwinds: `close`, not `close threw` or `close-outer`".to_string(),
                ),
                _ if ends => None,
                _ => Some("after stop no JavaScript runs in the worker: only the frames' ends follow, as its stack unwinds".to_string()),
            };
        }
        let Some(innermost) = env.frames.last() else {
            // After the main script: the program's event-loop callback runs
            // JS outside any scope only to open a native one (or to reset a
            // Global, which touches no async context).
            return match op {
                Op::OpenScope { .. } => self.open_scope(op),
                Op::TimersScope | Op::NapiMakeCallback(_) => None,
                Op::ResetGlobal(_) => self.reset_global(),
                _ => Some("after the main script (its scope closed), JavaScript runs from the event loop only inside a native scope: open one with callback-scope or make-callback".to_string()),
            };
        };
        if let Frame::Native(scope) = innermost {
            if scope.threw && !matches!(op, Op::CloseScope { .. }) {
                // The main script's body stops; a make-callback's callback
                // has returned (InternalMakeCallback saw the empty result).
                return Some(format!(
                    "an uncaught exception was thrown in {}: no more of its callback runs, the next op must be its `close`",
                    describe(innermost)
                ));
            }
        }
        if let Some(reason) = unsafe_id(op) {
            return Some(reason);
        }
        match op {
            Op::NoForceAsyncHooksChecks if env.program_started => Some(
                "--no-force-async-hooks-checks is a command-line option: only before every other op (but entry-module)".to_string(),
            ),
            Op::OpenScope { .. } => self.open_scope(op),
            Op::CloseScope { threw: true } => self.close_threw(innermost),
            Op::ResetGlobal(_) => self.reset_global(),
            Op::EntryModule { .. } if env.program_started || self.module_entry => Some(
                "entry-module says how the process starts (an .mjs entry): once, before every other op (but no-force-async-hooks-checks)".to_string(),
            ),
            Op::AbortOnUncaughtException | Op::EntryModule { .. }
                if (self.module_entry && *op == Op::AbortOnUncaughtException)
                    || (matches!(op, Op::EntryModule { .. })
                        && env.async_hooks.abort_on_uncaught_exception) =>
            {
                Some("--abort-on-uncaught-exception with an ES module entry: node exits with 1 there instead of aborting (the module's evaluation is a promise), which the model does not describe".to_string())
            }
            Op::CloseOuter { outer } => close_outer(env, *outer),
            Op::TimersScope => Some(
                "timers-scope: Environment::RunTimers runs from the event loop when no native scope is open (close the main script's first)".to_string(),
            ),
            Op::Stop if !self.stops_in_worker => Some(
                "stop: Environment::ExitEnv comes from another thread (worker.terminate()); a program cannot stop its environment at a chosen op and go on running ops".to_string(),
            ),
            Op::Stop if matches!(env.frames.first(), Some(Frame::Native(s)) if s.main_script) => Some(
                "stop in a worker runs from the event loop (after the main script's close): the worker's script body runs in a MessagePort's callback, with other ids and stack than the main script's".to_string(),
            ),
            Op::Stop if !env.js_running() => Some(
                "stop is the worker's process.exit(): JavaScript must be running".to_string(),
            ),
            Op::NodeVersion(v) if *v != self.capabilities.node_version => Some(format!(
                "the trace is for node version {v}, and this binary's node version is {}",
                self.capabilities.node_version
            )),
            Op::AsyncResource(_) if !self.capabilities.async_context_frame => Some(
                "async-resource is what an AsyncResource does with the AsyncContextFrame, which this binary's AsyncLocalStorage does not use (it is built on async hooks: v20, or --no-async-context-frame)".to_string(),
            ),
            op if op.kind().family() == Family::ContextFrame
                && !self.capabilities.async_context_frame
                && self.capabilities.node_version != NodeVersion::V20 =>
            {
                Some("AsyncLocalStorage on this binary is built on async hooks (--no-async-context-frame), which the model describes for node version 20 only".to_string())
            }
            Op::UncaughtException { .. } | Op::UncaughtExceptionListener => {
                self.uncaught_exception(env, innermost)
            }
            Op::EmitInit { type_name, .. } if !is_token(type_name) => Some(format!(
                "emit-init type name {type_name:?}: the program is the trace's own text, where a type name is one token of [A-Za-z0-9_.-]"
            )),
            // Everything else is one JS call (or nothing) in the program;
            // where the model rejects the op, it says why. (A new op that
            // node cannot express fails its conformance scenario.)
            _ => None,
        }
    }

    fn open_scope(&self, op: &Op) -> Option<String> {
        let Op::OpenScope {
            kind,
            resource,
            flags,
            ..
        } = op
        else {
            return None;
        };
        if let Some(reason) = unsafe_id(op) {
            return Some(reason);
        }
        if resource.holder == Holder::Global {
            if kind.makes_callback() {
                return Some("a `global` resource on a make-callback: node::MakeCallback takes its resource as a Local<Object> on every version".to_string());
            }
            if !self.capabilities.global_callback_scope {
                return Some("a `global` resource holder: this binary's public node::CallbackScope takes a Local<Object> only (v20; the Global<Object>* constructor is in Node 26's node.h)".to_string());
            }
        }
        if *flags != ScopeFlags::default() {
            return Some("skip-hooks / skip-queues are InternalCallbackScope flags that node::CallbackScope does not expose".to_string());
        }
        None
    }

    fn reset_global(&self) -> Option<String> {
        (!self.capabilities.global_callback_scope).then(|| {
            "reset-global: this binary's public API has no Global<Object> resource holder (v20; node::CallbackScope(Environment*, Global<Object>*, async_context) is in Node 26's node.h)".to_string()
        })
    }

    /// `close threw`: the callback threw into whoever called the scope.
    fn close_threw(&self, innermost: &Frame<EagerStack>) -> Option<String> {
        let Frame::Native(scope) = innermost else {
            return None;
        };
        if scope.main_script {
            return Some("`close threw` on the main script's scope: StartExecution's scope is never marked failed (after an exception in the main script, write `close`)".to_string());
        }
        if scope.run_timers {
            return Some("`close threw` on RunTimers' scope: a bare InternalCallbackScope that nothing marks failed (write `close`)".to_string());
        }
        if self.try_catch_chain_broken {
            return Some(format!("`close threw` after a close-outer: {BROKEN_CHAIN}"));
        }
        if scope.kind == ScopeKind::CallbackScope && !scope.handled_exception {
            return Some("`close threw` on a callback-scope: node::CallbackScope's TryCatch is verbose, so an exception from its callback always reaches the uncaught-exception handler first; write `uncaught-exception handled|unhandled` before the close".to_string());
        }
        None
    }

    fn uncaught_exception(&self, env: &Eager, innermost: &Frame<EagerStack>) -> Option<String> {
        // The frames the exception leaves before it is reported (the model
        // refuses the exception too).
        // A microtask's callback that the exception leaves (it is thrown
        // there, or in a tick that process._tickCallback() ran there): V8
        // reports a queueMicrotask callback's, and rejects a reaction's
        // derived promise (the runtime's throw leaves the callback).
        let module_body = env.catching_microtask().map(|i| &env.frames[i]);
        if module_body.is_some_and(Frame::is_module_body) && !env.microtasks.module_top_level_await
        {
            return Some("uncaught-exception that leaves the body of an `entry-module` without `tla`: the program.mjs has a top-level await in its source (its header waits for v20's loader), which makes the rejection of the module's evaluation one job longer; write `entry-module tla`".to_string());
        }
        let into_microtask = (env.frames.iter().rev())
            .find(|f| {
                matches!(
                    f,
                    Frame::Native(_)
                        | Frame::Microtask { .. }
                        | Frame::Tick {
                            run: TickRun::Close(_),
                            ..
                        }
                )
            })
            .is_some_and(|f| matches!(f, Frame::Microtask { .. }));
        if into_microtask {
            if self.try_catch_chain_broken {
                return Some(format!(
                    "uncaught-exception after a close-outer: {BROKEN_CHAIN}"
                ));
            }
            return None;
        }
        match innermost {
            Frame::Tick { run, .. } => {
                if self.try_catch_chain_broken {
                    return Some(format!("uncaught-exception after a close-outer: {BROKEN_CHAIN}"));
                }
                match run {
                    TickRun::Close(scope)
                        if scope.main_script
                            || (scope.kind == ScopeKind::CallbackScope && !scope.run_timers) =>
                    {
                        None
                    }
                    TickRun::Close(_) => Some("next-tick-body / end-tick: an exception from a tick that a make-callback's close ran is not written yet".to_string()),
                    TickRun::TickCallback => Some("next-tick-body / end-tick: an exception from a tick that process._tickCallback() ran goes on through the JS that called it; the program cannot go on with that scope's steps after it".to_string()),
                }
            }
            Frame::Native(scope) if scope.napi => Some("uncaught-exception in a napi-make-callback: napi_make_callback calls back inside its own TryCatch (NAPI_PREAMBLE, src/node_api.cc), which keeps the exception for the module's caller: it is never reported as uncaught (write `close threw`)".to_string()),
            Frame::Native(_) | Frame::Timer { .. } if self.try_catch_chain_broken => {
                Some(format!("uncaught-exception after a close-outer: {BROKEN_CHAIN}"))
            }
            // A JS frame or a microtask innermost: the model refuses it.
            _ => None,
        }
    }
}

/// What a frame is, in a refusal.
fn describe(frame: &Frame<EagerStack>) -> &'static str {
    match frame {
        Frame::Native(s) if s.main_script => "the main script's scope",
        Frame::Native(s) if s.run_timers => "RunTimers' scope",
        Frame::Native(s) if s.kind.makes_callback() => "a make-callback",
        Frame::Native(_) => "a callback-scope",
        Frame::RunInAsyncScope { .. } => "a run-in-async-scope",
        Frame::DefaultTriggerScope { .. } => "a default-trigger-scope",
        Frame::AlsRun { .. } => "an als-run",
        Frame::Tick { .. } => "a tick's callback",
        Frame::Microtask { .. } => "a microtask's callback",
        Frame::Listener => "the uncaughtException listener",
        Frame::Timer { .. } => "a Timeout's callback",
    }
}

/// The index in `env.frames` of the native scope `close-outer outer` closes:
/// the one with `outer` native scopes inside it.
pub(super) fn outer_target(env: &Eager, outer: u32) -> Option<usize> {
    env.outer_scope_index(outer).filter(|_| outer > 0)
}

/// `close-outer K`: the program opens the target with
/// `napi_open_callback_scope` and closes it with `napi_close_callback_scope`
/// (`src/conform/node/napi.cc`), so it must be what an N-API scope can be.
fn close_outer(env: &Eager, outer: u32) -> Option<String> {
    let Some(index) = outer_target(env, outer) else {
        let open = (env.frames.iter())
            .filter(|f| matches!(f, Frame::Native(_)))
            .count();
        return Some(format!(
            "close-outer {outer}: it needs a native scope with {outer} (at least 1) open native scopes inside it; {open} are open"
        ));
    };
    let frame = &env.frames[index];
    let Frame::Native(scope) = frame else {
        return None;
    };
    if scope.kind != ScopeKind::CallbackScope || scope.is_bare() {
        return Some(format!(
            "close-outer {outer}: that is {}; only a callback scope an addon opened (napi_open_callback_scope) is closed out of order",
            describe(frame)
        ));
    }
    let napi_inside = (env.frames[index..].iter()).any(|f| matches!(f, Frame::Native(s) if s.napi));
    if napi_inside {
        return Some(format!("close-outer {outer}: a napi-make-callback is open inside that scope, and napi_make_callback is a Node-API call, whose napi_env__::CallIntoModule CHECKs that it returns with as many N-API callback scopes open as it started with"));
    }
    if env.frames.iter().any(|f| matches!(f, Frame::Listener)) {
        return Some(format!("close-outer {outer}: the uncaughtException listener is running, inside V8's report of an exception; a scope deleted out of order there leaves V8's TryCatch chain dangling under that report (docs/node-findings.md F9): v20.20.2 then aborted with \"corrupted size vs. prev_size\" in about half the runs of the same program (conform --cases 1000 --seed 25, case 85)"));
    }
    if matches!(scope.resource, model::env::resources::NativeSlot::Global(_)) {
        return Some(format!("close-outer {outer}: that scope holds its resource as a Global; an N-API callback scope holds a Local made from its own Global (src/node_api.cc, AsyncContext::CallbackScope), which no reset-global reaches"));
    }
    None
}

/// A token of the trace syntax's type names: `[A-Za-z0-9_.-]+`.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

/// An id that is not a safe integer cannot be written: Node's ids are JS
/// numbers.
fn unsafe_id(op: &Op) -> Option<String> {
    (op.ids().into_iter())
        .find(|id| !(-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(id))
        .map(|id| format!("id {id} is not a safe integer, and Node's ids are JS numbers"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::vocab::trace;

    /// What became of a trace: the first op node cannot express (its index
    /// and the reason), or the first the model rejects, or neither.
    #[derive(Debug, PartialEq, Eq)]
    enum Fate {
        Refused(usize, String),
        Rejected(usize),
        Runs,
    }

    fn fate(text: &str, capabilities: Capabilities) -> Fate {
        let ops = trace::parse(text).unwrap_or_else(|e| panic!("{e}")).ops();
        let mut env = Eager::for_version(capabilities.node_version);
        let mut decider = Decider::new(capabilities);
        for (i, op) in ops.iter().enumerate() {
            match decider.apply(&mut env, op) {
                Err(u) => {
                    assert_eq!(u.index, i, "{u}");
                    return Fate::Refused(i, u.reason);
                }
                Ok(Err(_)) => return Fate::Rejected(i),
                Ok(Ok(_)) => {}
            }
        }
        Fate::Runs
    }

    /// Refused at `index`, for a reason that says `why`.
    fn assert_refused(text: &str, capabilities: Capabilities, index: usize, why: &str) {
        match fate(text, capabilities) {
            Fate::Refused(i, reason) => {
                assert_eq!(i, index, "{text}: {reason}");
                assert!(reason.contains(why), "{text}: {reason}");
            }
            other => panic!("{text}: expected a refusal at op {index}, got {other:?}"),
        }
    }

    const V20: fn() -> Capabilities = Capabilities::default;
    const V26: fn() -> Capabilities = Capabilities::node26;

    /// Where the decider of a Worker test stops: `Ok(())` if every op of
    /// `text` is decided, else the first refusal's index and reason.
    fn in_worker(text: &str, caps: Capabilities) -> Result<(), (usize, String)> {
        let ops = trace::parse(text).unwrap_or_else(|e| panic!("{e}")).ops();
        let mut env = Eager::for_version(caps.node_version);
        let mut decider = Decider::in_worker(caps);
        for op in &ops {
            match decider.apply(&mut env, op) {
                Err(u) => return Err((u.index, u.reason)),
                Ok(r) => assert!(r.is_ok(), "{text}: the model rejects `{op}`"),
            }
        }
        Ok(())
    }

    #[test]
    fn a_worker_stops_from_the_event_loop_and_only_unwinds_after() {
        for caps in [V20(), V26()] {
            let lead = "close\ncallback-scope 5 1 R1\n";
            assert_eq!(in_worker(&format!("{lead}stop\nclose"), caps), Ok(()));
            let refused = |text: &str, index: usize, why: &str| match in_worker(text, caps) {
                Err((i, reason)) => {
                    assert_eq!(i, index, "{text}: {reason}");
                    assert!(reason.contains(why), "{text}: {reason}");
                }
                Ok(()) => panic!("{text}: decided"),
            };
            // The worker's script body is not the main script's scope.
            refused("callback-scope 5 1 R1\nstop", 1, "event loop");
            refused(
                &format!("{lead}stop\nexecution-async-id"),
                3,
                "only the frames' ends",
            );
            refused(&format!("{lead}stop\nclose threw"), 3, "not `close threw`");
            // The main thread's programs (conformance) never stop.
            assert_refused(&format!("{lead}stop"), caps, 2, "another thread");
        }
    }

    #[test]
    fn what_no_binary_can_express() {
        for caps in [V20(), V26()] {
            let refused =
                |text: &str, index: usize, why: &str| assert_refused(text, caps, index, why);
            refused("stop", 0, "another thread");
            refused("callback-scope 5 1 R1 skip-hooks", 0, "flags");
            refused("callback-scope 5 1 R1 skip-queues", 0, "flags");
            refused("make-callback 5 1 global R1", 0, "make-callback");
            refused("emit-after 1152921504606846976", 0, "safe integer");
            refused(
                "execution-async-id\nno-force-async-hooks-checks",
                1,
                "command-line",
            );
            refused(
                "execution-async-id\nentry-module",
                1,
                "once, before every other op",
            );
            refused("timers-scope", 0, "from the event loop");
            refused("close\nexecution-async-id", 1, "after the main script");
            refused("close\ntick-callback", 1, "after the main script");
        }
    }

    #[test]
    fn header_ops_come_first_in_any_order() {
        for caps in [V20(), V26()] {
            let v = caps.node_version;
            for text in [
                "entry-module\nno-force-async-hooks-checks".to_string(),
                format!("node-version {v}\nno-force-async-hooks-checks\nentry-module"),
            ] {
                assert_eq!(fate(&text, caps), Fate::Runs, "{text}");
            }
        }
        assert_refused(
            "node-version 26",
            V20(),
            0,
            "this binary's node version is 20",
        );
        assert_refused(
            "node-version 20",
            V26(),
            0,
            "this binary's node version is 26",
        );
    }

    #[test]
    fn global_holders_and_als_need_node_26() {
        assert_refused(
            "callback-scope 5 1 global R1",
            V20(),
            0,
            "Local<Object> only",
        );
        assert_refused("reset-global R1", V20(), 0, "reset-global");
        assert_refused("async-resource R1", V20(), 0, "built on async hooks");
        assert_eq!(fate("async-resource R1", V26()), Fate::Runs);
        // v20's AsyncLocalStorage, on async hooks, is the model's on node
        // version 20.
        for als in ["als-get-store A1", "als-run A1 2\nend-als-run"] {
            assert_eq!(fate(als, V20()), Fate::Runs, "{als}");
            assert_eq!(fate(als, V26()), Fate::Runs, "{als}");
        }
        let global = "callback-scope 5 1 global R3\nreset-global R3\nclose\nclose\nreset-global R4";
        assert_eq!(fate(global, V26()), Fate::Runs);
    }

    #[test]
    fn exceptions_go_where_the_program_can_follow() {
        for caps in [V20(), V26()] {
            let refused =
                |text: &str, index: usize, why: &str| assert_refused(text, caps, index, why);
            // A callback-scope's TryCatch is verbose: `close threw` needs the
            // exception first, and then JS goes on in the scope.
            refused("callback-scope 5 1 R1\nclose threw", 1, "verbose");
            let goes_on = "callback-scope 5 1 R1\nuncaught-exception handled\nexecution-async-id\nclose threw";
            assert_eq!(fate(goes_on, caps), Fate::Runs);
            // A make-callback's callback and the main script stop.
            refused(
                "make-callback 5 1 R1\nuncaught-exception handled\nreset-global R1",
                2,
                "a make-callback: no more of its callback runs",
            );
            refused(
                "uncaught-exception handled\nnew-async-id",
                1,
                "the main script's scope",
            );
            refused(
                "uncaught-exception handled\nclose threw",
                1,
                "never marked failed",
            );
            refused(
                "close\ntimers-scope\nclose threw",
                2,
                "RunTimers' scope: a bare InternalCallbackScope",
            );
            // Ticks: from a callback-scope's close, written; from a
            // make-callback's close or process._tickCallback(), not.
            let tick = |open: &str| {
                format!("close\n{open}\n  next-tick-body\nclose\nuncaught-exception handled")
            };
            assert_eq!(fate(&tick("callback-scope 5 0 R1"), caps), Fate::Runs);
            refused(&tick("make-callback 5 0 R1"), 4, "not written yet");
            refused(
                "next-tick-body\ntick-callback\nuncaught-exception handled",
                2,
                "process._tickCallback() ran",
            );
            // From a tick that process._tickCallback() ran in a microtask's
            // callback: the exception leaves that callback, written.
            assert_eq!(
                fate(
                    "queue-microtask-body\ntick-callback\nnext-tick-body\ntick-callback\nuncaught-exception handled",
                    caps
                ),
                Fate::Runs
            );
        }
    }

    #[test]
    fn a_close_outer_breaks_the_try_catch_chain() {
        let outer = "callback-scope 5 1 R1\ncallback-scope 5 5 R2\nclose-outer 1\n";
        for caps in [V20(), V26()] {
            let refused =
                |text: &str, index: usize, why: &str| assert_refused(text, caps, index, why);
            assert_eq!(
                fate(&format!("{outer}execution-async-id\nclose\nclose"), caps),
                Fate::Runs
            );
            refused(
                &format!("{outer}uncaught-exception handled"),
                3,
                "TryCatch chain",
            );
            refused(
                &format!("{outer}make-callback 6 5 R3\nclose threw"),
                4,
                "TryCatch chain",
            );
            refused(
                &format!("{outer}next-tick-body\nclose\nclose\nuncaught-exception handled"),
                6,
                "TryCatch chain",
            );
            // Inside the uncaughtException listener, V8 is reporting an
            // exception: no scope is deleted out of order there.
            refused(
                "callback-scope 5 1 R1\nuncaught-exception-listener\ncallback-scope 6 1 R2\ncallback-scope 7 1 R3\nclose-outer 1",
                4,
                "uncaughtException listener is running",
            );
            // The target is an addon's callback-scope with native scopes
            // inside it.
            refused(
                "callback-scope 5 1 R1\nclose-outer 2",
                1,
                "2 (at least 1) open native scopes inside it; 2 are open",
            );
            refused(
                "make-callback 5 1 R1\ncallback-scope 5 5 R2\nclose-outer 1",
                2,
                "that is a make-callback",
            );
            refused(
                "callback-scope 5 1 R1\nclose-outer 1",
                1,
                "that is the main script's scope",
            );
        }
        assert_refused(
            "callback-scope 6 1 global R1\ncallback-scope 6 6 R2\nclose-outer 1",
            V26(),
            2,
            "Global",
        );
    }

    #[test]
    fn an_es_module_runs_microtask_ops_and_its_top_level_throw_with_tla() {
        for op in [
            "queue-microtask",
            "promise-then",
            "promise-reject",
            "queue-microtask-body",
            "promise-then-body",
        ] {
            assert_eq!(
                fate(&format!("entry-module\n{op}"), V20()),
                Fate::Runs,
                "{op}"
            );
        }
        // A throw that leaves the body: the program has a top-level await.
        for tail in [
            "uncaught-exception handled",
            "next-tick-body\ntick-callback\nuncaught-exception unhandled",
        ] {
            let text = format!("entry-module\n{tail}");
            let last = text.lines().count() - 1;
            assert_refused(&text, V26(), last, "write `entry-module tla`");
            assert_eq!(
                fate(&format!("entry-module tla\n{tail}"), V26()),
                Fate::Runs
            );
        }
    }

    #[test]
    fn the_model_answers_for_what_it_rejects() {
        for text in [
            "end-run-in-async-scope",
            "run-in-async-scope 5 1 R1\nuncaught-exception handled",
            "callback-scope 5 1 R1\nend-tick",
        ] {
            assert!(matches!(fate(text, V20()), Fate::Rejected(_)), "{text}");
        }
        // A type name the trace syntax cannot write (the program is the
        // trace's text).
        let mut env = Eager::for_version(V20().node_version);
        let op = Op::EmitInit {
            async_id: 7,
            type_name: "a b".to_string(),
            trigger_async_id: 1,
            resource: None,
        };
        let refused = Decider::new(V20()).apply(&mut env, &op);
        assert!(matches!(refused, Err(u) if u.reason.contains("type name")));
    }

    #[test]
    fn the_depth_counts_the_frames_of_scopes_closed_early() {
        let ops = trace::parse(
            "callback-scope 5 1 R1\ncallback-scope 5 5 R2\ncallback-scope 5 5 R3\nclose-outer 2\nrun-in-async-scope 7 5 R4\nend-run-in-async-scope\nclose\nclose",
        )
        .unwrap_or_else(|e| panic!("{e}"))
        .ops();
        let mut env = Eager::for_version(V20().node_version);
        let mut decider = Decider::new(V20());
        let mut depths = Vec::new();
        for op in &ops {
            assert!(matches!(decider.apply(&mut env, op), Ok(Ok(_))), "{op}");
            depths.push((env.frames.len(), decider.depth(&env)));
        }
        // R1's scope leaves the model at the close-outer; its JS frame stays
        // on node's stack until R2's scope, inside it, has closed.
        assert_eq!(
            depths,
            [
                (2, 2),
                (3, 3),
                (4, 4),
                (3, 4),
                (4, 5),
                (3, 4),
                (2, 3),
                (1, 1)
            ]
        );
    }
}
