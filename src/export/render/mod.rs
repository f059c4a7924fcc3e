//! From a trace, as a model runs it, to the text of one Node core test:
//! straight-line JavaScript in Node's style, each frame of the trace a
//! callback (`binding.callbackScope(r1, 5, 1, common.mustCall(() => {...}))`),
//! each observation an `assert` at the place in the program where it is
//! made.
//!
//! Where an assertion goes follows from one fact: the test runs its
//! statements in the trace's order. An op's statement goes into the block
//! of the frame the op runs in (the model's innermost frame), and what the
//! hooks saw since the last check is checked just before the next
//! statement runs, wherever that is: at the start of a scope's callback
//! (its `before`), after the call that ran a scope (its `after`), at the
//! start of a tick's or a microtask's callback. The model's frames say
//! which block is innermost after each op.
//!
//! Ids Node hands out itself (`newAsyncId()`, a tick's id, an Immediate's)
//! are told from the trace's own numbers by running the model twice, the
//! second time with its id counter moved by [`SHIFT`]: a number that moves
//! is Node's, read by the test just before the op that makes Node hand it
//! out (`const id3 = nextAsyncId();`, an [`Item::Anchor`]) and named so
//! after; a number that stays is the trace's, written [`OWN_IDS`] above
//! (ids `test/common` took before the test began lie below).

use model::env::microtasks::RunningMicrotask;
use model::env::{AsyncIdStack, Environment, Frame};
use model::vocab::{
    AsyncId, FailedCheck, HookEvent, NodeVersion, Observation, Op, ResourceView, ScopeKind,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

mod assemble;
mod code;
mod driver;
mod ids;
mod observe;
mod statement;
#[cfg(test)]
mod tests;
mod timeouts;

use assemble::*;
use code::*;
pub use driver::render;
use ids::*;

/// An ES module test on v20 first waits until the ES module loader's own
/// requests (reading the file) are done: their destroy hooks would run in
/// the middle of the test.
const ESM_WAIT_V20: [&str; 9] = [
    "// v20's ES module loader still has requests of its own open (reading",
    "// this file) when the body starts: wait until they are done.",
    "function loaderBusy() {",
    "  return process.getActiveResourcesInfo()",
    "    .some((r) => r === 'CloseReq' || r.startsWith('FSReq') || r.startsWith('FileHandle'));",
    "}",
    "while (loaderBusy()) {",
    "  await new Promise((resolve) => setImmediate(resolve));",
    "}",
];

/// The comment of the same loop in a Node 26 test of an `entry-module tla`
/// trace: there it waits for nothing, and is there for its `await`.
const ESM_TLA_V26: [&str; 2] = [
    "// A top-level await (V8 evaluates the test as an async module); Node 26's",
    "// ES module loader has no request of its own open here, so it never waits.",
];

/// An ES module test with hooks: the ES module loader's promises settle
/// around the module body; the model has no promises, and the conformance
/// program switches their tracking off the same way (src/conform/node/runtime.js).
const ESM_NO_PROMISE_HOOKS: [&str; 3] = [
    "// The ES module loader's promises settle around the module body; this",
    "// test makes none, and async_hooks does not track them (no promise hook).",
    "require('internal/promise_hooks').createHook = () => () => {};",
];

/// How far the second run moves the id counter.
const SHIFT: AsyncId = 1_000_000_000;

/// The largest id a test writes as a number and takes Node's ids up to.
const MAX_TAKEN: AsyncId = 1_000_000;

/// The checks of a test that deletes a scope out of order
/// (`binding.deleteCallbackScope`): they report a mismatch and set the exit
/// code, and throw nothing.
const QUIET_CHECKS: &[&str] = &[
    "// binding.deleteCallbackScope() deletes a scope while scopes opened inside",
    "// it are still open, so V8's TryCatch chain is left pointing at the deleted",
    "// scope's TryCatch: an exception thrown after it may be lost (Node 26, with",
    "// hooks) or corrupt the heap (v20). These checks throw nothing.",
    "function fail(actual, expected) {",
    "  const stack = new Error('check failed').stack;",
    "  process._rawDebug(`expected ${util.inspect(expected)}, got ${util.inspect(actual)}\\n${stack}`);",
    "  process.exitCode = 1;",
    "}",
];

/// JS in `Environment::RunTimers`' own scope (`timers-scope`), as the
/// conformance program runs it (src/conform/node/runtime.js).
const TIMERS_SCOPE: &[&str] = &[
    "// Environment::RunTimers' own scope, InternalCallbackScope(env, process,",
    "// {0, 0}): the environment's timers callback is made one that calls the",
    "// next function (RunTimers calls it again after one threw), the timer",
    "// handle is started and binding.runTimers() runs RunTimers on it; then",
    "// the callbacks are Node's own again (fresh ones, as bootstrap makes them).",
    "function inTimersScope(...fns) {",
    "  const timers = internalBinding('timers');",
    "  const { processImmediate, processTimers } =",
    "    getTimerCallbacks(process._tickCallback);",
    "  timers.setupTimers(processImmediate, () => {",
    "    fns.shift()?.();",
    "    return 0;",
    "  });",
    "  timers.scheduleTimer(987654321);",
    "  binding.runTimers(987654321);",
    "  timers.setupTimers(processImmediate, processTimers);",
    "}",
];

/// The Timeouts of a test that runs them (`timer`), as the conformance
/// program makes and runs them (src/conform/node/runtime.js).
const RUN_TIMEOUTS: &[&str] = &[
    "// The test's Timeouts are unref'd, each with a duration of its own (1e9 ms",
    "// plus its number), so that their lists expire in the order they were made",
    "// and none fires by itself. runTimeouts(last) calls Node's own processTimers",
    "// (a fresh one, as bootstrap/node.js makes it) in RunTimers' scope with a",
    "// `now` at which the Timeouts up to `last` are due: listOnTimeout runs their",
    "// callbacks, the oldest first, with the ticks run before each list but the",
    "// first.",
    "function runTimeouts(last) {",
    "  const { processTimers } = getTimerCallbacks(process._tickCallback);",
    "  processTimers(last._idleStart + last._idleTimeout);",
    "}",
];

/// The two checks of [`QUIET_CHECKS`], each written where the test uses it.
const QUIET_SAME: &[&str] = &[
    "function expectSame(actual, expected) {",
    "  if (!Object.is(actual, expected)) fail(actual, expected);",
    "}",
];
const QUIET_DEEP: &[&str] = &[
    "function expectDeep(actual, expected) {",
    "  if (!util.isDeepStrictEqual(actual, expected)) fail(actual, expected);",
    "}",
];

/// A Node-handed id `m` of the model, written as `HANDED + m`.
const HANDED: AsyncId = i64::MIN / 2;

/// How the test's process ends, when the model says it dies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// `async hook stack has become corrupted (actual: A, expected: E)`,
    /// exit 1 (ids as JS-regexp text: a Node-handed id is `\d+`).
    Corrupted {
        /// The `actual` number.
        actual: String,
        /// The `expected` number.
        expected: String,
    },
    /// A `CHECK` failed: SIGABRT and `Assertion failed: TEXT`.
    Check(FailedCheck),
    /// An unhandled exception: exit 1 with its message.
    Uncaught(&'static str),
    /// Under `--abort-on-uncaught-exception`: an uncaught exception that
    /// aborts with this signal (V8's `SIGTRAP`, or node's `SIGABRT` where
    /// JavaScript reports it), after Node printed `Uncaught Error: ...`.
    Aborted(i32),
    /// Under `--abort-on-uncaught-exception`: the corrupted-stack message,
    /// then `SIGABRT` instead of exit 1.
    CorruptedAbort {
        /// The `actual` number.
        actual: String,
        /// The `expected` number.
        expected: String,
    },
}

impl Ending {
    /// The process aborts (a signal, or the exit code a shell reports for
    /// one), rather than exiting with a status.
    pub fn aborts(&self) -> bool {
        matches!(
            self,
            Ending::Check(_) | Ending::Aborted(_) | Ending::CorruptedAbort { .. }
        )
    }
}

/// A test as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The JavaScript source.
    pub source: String,
    /// It loads the addon's `node.h` binding or its Node-API one (a
    /// native scope, an N-API async context, or checks after the main
    /// script, which run from the addon's event-loop callback): it goes in
    /// the addon folder.
    pub binding: bool,
    /// How the model says the process ends, if it dies.
    pub ending: Option<Ending>,
    /// The entry is an ES module (`entry-module`): the test is a `.mjs`
    /// file, or, in the addon folder, a `.js` test that runs `fixture`.
    pub module: bool,
    /// An ES module entry that needs the addon: its text, written beside
    /// the `.js` test (`source`) as the same name with `.mjs`, which the
    /// test runs as a child process's entry (Node's addon test runner runs
    /// `.js` files only).
    pub fixture: Option<String>,
}

/// What the renderer cannot write readably (beyond what node cannot
/// express at all, which [`crate::conform::decide`] says first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotWritten {
    /// The op's index in the trace as run.
    pub index: usize,
    /// Why.
    pub reason: String,
}

/// The `Assertion failed:` text node prints for each `CHECK` of the
/// vocabulary (the same the conformance reader recognises).
pub fn check_text(check: FailedCheck) -> &'static str {
    crate::conform::observe::CHECKS
        .iter()
        .find(|(_, c)| *c == check)
        .map_or("", |(text, _)| text)
}

/// One block of code: a callback's body, or the main script.
#[derive(Clone, Debug, Default)]
struct Block {
    items: Vec<Item>,
}

#[derive(Clone, Debug)]
enum Item {
    Line(String),
    /// Where Node hands out ids to the test (the model's, in order): the
    /// test reads each just before (`nextAsyncId()`). Written as nothing
    /// where Node hands out none.
    Anchor(Vec<AsyncId>),
    /// A call with callbacks: `parts[i].0` opens callback `parts[i].1`;
    /// `tail` closes the last.
    Call {
        parts: Vec<(String, usize)>,
        tail: String,
    },
}

/// The block a model frame's ops go into.
#[derive(Clone, Debug)]
struct CodeFrame {
    block: usize,
    /// The call item that opened the frame (block, item index), for a
    /// callback-scope that goes on in a second callback after a handled
    /// exception.
    call: Option<(usize, usize)>,
    /// The block's code can no longer run (an exception ended it).
    dead: bool,
    /// The arguments before the callback of a `binding.callbackScope` call
    /// (resource and ids), which a `close-outer` makes a
    /// `binding.heapCallbackScope`.
    scope_args: Option<String>,
}

/// The two runs of the model, and everything the test's text needs.
struct Writer<S: AsyncIdStack> {
    a: Environment<S>,
    b: Environment<S>,
    blocks: Vec<Block>,
    frames: Vec<CodeFrame>,
    /// The event-loop callback's block (ops after the main script).
    event_loop: Option<usize>,
    /// Hook calls seen and not yet checked, as JS array literals.
    pending: Vec<String>,
    /// Model ids Node handed out, run A's → run B's.
    handed: HashMap<AsyncId, AsyncId>,
    /// Ids the trace wrote as arguments before Node handed the same number
    /// out: they stay the trace's own.
    literals: BTreeSet<AsyncId>,
    /// A tick's callback block, by its model id.
    ticks: HashMap<AsyncId, usize>,
    /// Microtask callback blocks, in queue order; how many have run.
    microtasks: Vec<usize>,
    microtasks_run: usize,
    /// Whether each scheduled callback ran (for `common.mustCall`).
    ran: BTreeSet<usize>,
    /// Which names each module gives the test.
    from_async_hooks: BTreeSet<&'static str>,
    from_internal: BTreeSet<&'static str>,
    resources: BTreeSet<u32>,
    hooks: BTreeMap<u32, Vec<&'static str>>,
    storages: BTreeSet<u32>,
    /// The `defaultValue` of a storage made with one (`als-default`).
    defaults: BTreeMap<u32, model::vocab::StoreValue>,
    uses_symbol: bool,
    uses_rias: bool,
    main_bound: bool,
    top_bound: bool,
    /// Names bound by a `const` in the main script's own block (not
    /// declared with `let` up front).
    bound_inline: BTreeSet<&'static str>,
    binding: bool,
    /// It uses the Node-API module (`napi-async-init`, `napi-make-callback`).
    napi: bool,
    /// It runs JS in `Environment::RunTimers`' scope (`timers-scope`).
    timers: bool,
    /// The test's Timeouts (`set-timeout`), by the model's id (run A's):
    /// their number in the test (`timeoutN`) and their callback's block.
    timeouts: BTreeMap<AsyncId, (usize, usize)>,
    /// The Timeouts declared with `let` up front (not made in the main
    /// script's own block, where a `const` binds them).
    timeouts_declared: BTreeSet<usize>,
    /// The `runTimeouts(timeoutN)` line of the `processTimers` call going
    /// on (block, item index): a `timer` that the same call runs next
    /// moves its `timeoutN` on.
    timer_call: Option<(usize, usize)>,
    /// It calls `runTimeouts` (the helper of [`RUN_TIMEOUTS`]).
    runs_timeouts: bool,
    /// It reads a Timeout's id off `executionAsyncResource()`: under
    /// internal/timers' own `async_id_symbol`, not internal/async_hooks'.
    uses_timer_symbol: bool,
    no_force: bool,
    /// The trace runs under `--abort-on-uncaught-exception`.
    abort_on_uncaught: bool,
    ending: Option<Ending>,
    /// Where the main script threw (its block and item index).
    main_threw_at: Option<usize>,
    /// The call of the bare make-callback whose callback threw at the last
    /// `close threw` (block, item index): what follows says how it is
    /// written (the exception lost, `catch`, or `uncaught-exception`).
    bare_call: Option<(usize, usize)>,
    /// The op being written reports the exception that bare make-callback
    /// handed back: its lines go into the callback, before its throw
    /// ([`Writer::end_in_flight`]).
    in_flight: bool,
    /// How many bare make-callbacks' exceptions Node lost so far: each such
    /// callback counts its end (`callbackEnds`), so that an assertion that
    /// fails in it, lost with it, still fails the test.
    lost: usize,
    /// The test rejects a promise it never handles (`promise-reject`).
    rejects: bool,
    /// How many rejections its `unhandledRejection` listener sees.
    rejections_seen: usize,
    /// The resources made by `async-resource` (they keep the frame they
    /// captured), and those given a frame at a `runInAsyncScope`.
    made: BTreeSet<u32>,
    captured: BTreeSet<u32>,
    /// The test is an ES module (`entry-module`).
    module: bool,
    /// A throw left the module's body: nothing after it in the body runs.
    body_threw: bool,
    /// That throw found no listener: the loader's report of it, jobs
    /// later, exits with 1 (`uncaught-exception unhandled`).
    module_rejection_unhandled: bool,
    /// The keys `binding.heapCallbackScope` has handed out (`close-outer`).
    heap_scopes: usize,
    /// The op being written throws into a microtask's callback (a
    /// `queueMicrotask` callback or a promise reaction, at this index of
    /// the model's frames, or a tick run there): it ends the job.
    threw_in_microtask: Option<usize>,
    /// The test ran `stop`: it runs in a Worker, whose `process.exit()`
    /// stopped its environment; nothing after it is written.
    stopped: bool,
    /// The Node-handed ids the test's code names (model ids; set when the
    /// test is assembled).
    named: BTreeSet<AsyncId>,
}

fn refuse<T>(index: usize, reason: impl Into<String>) -> Result<T, NotWritten> {
    Err(NotWritten {
        index,
        reason: reason.into(),
    })
}
