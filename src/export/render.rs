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
//! is Node's, written relative to `firstId` (the first id the test's code
//! gets); a number that stays is the trace's.

use model::env::microtasks::RunningMicrotask;
use model::env::{AsyncIdStack, Environment, Frame};
use model::vocab::{
    AsyncId, FailedCheck, HookEvent, NodeVersion, Observation, Op, ResourceView, ScopeKind,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

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
    Uncaught,
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
    no_force: bool,
    ending: Option<Ending>,
    /// Where the main script threw (its block and item index).
    main_threw_at: Option<usize>,
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
}

fn refuse<T>(index: usize, reason: impl Into<String>) -> Result<T, NotWritten> {
    Err(NotWritten {
        index,
        reason: reason.into(),
    })
}

/// The ids of an observation, in a fixed order.
fn ids_of(o: &Observation) -> Vec<AsyncId> {
    let mut v = Vec::new();
    map_ids(o, &mut |id| {
        v.push(id);
        id
    });
    v
}

fn map_view(r: &ResourceView, f: &mut dyn FnMut(AsyncId) -> AsyncId) -> ResourceView {
    match *r {
        ResourceView::TickObject(id) => ResourceView::TickObject(f(id)),
        ResourceView::Immediate(id) => ResourceView::Immediate(f(id)),
        ResourceView::Microtask(id) => ResourceView::Microtask(f(id)),
        ResourceView::Promise(id) => ResourceView::Promise(f(id)),
        ResourceView::Timeout(id) => ResourceView::Timeout(f(id)),
        other => other,
    }
}

/// `o` with each id replaced by `f(id)`, in [`ids_of`]'s order.
fn map_ids(o: &Observation, f: &mut dyn FnMut(AsyncId) -> AsyncId) -> Observation {
    use Observation as O;
    match o {
        O::ExecutionAsyncId(id) => O::ExecutionAsyncId(f(*id)),
        O::TriggerAsyncId(id) => O::TriggerAsyncId(f(*id)),
        O::DefaultTriggerAsyncId(id) => O::DefaultTriggerAsyncId(f(*id)),
        O::NewAsyncId(id) => O::NewAsyncId(f(*id)),
        O::ExecutionAsyncResource(r) => O::ExecutionAsyncResource(map_view(r, f)),
        O::Hook {
            hook,
            event,
            execution_async_id,
            trigger_async_id,
        } => {
            let event = match event {
                HookEvent::Init {
                    async_id,
                    type_name,
                    trigger_async_id,
                    resource,
                } => HookEvent::Init {
                    async_id: f(*async_id),
                    type_name: type_name.clone(),
                    trigger_async_id: f(*trigger_async_id),
                    resource: map_view(resource, f),
                },
                HookEvent::Before(id) => HookEvent::Before(f(*id)),
                HookEvent::After(id) => HookEvent::After(f(*id)),
                HookEvent::Destroy(id) => HookEvent::Destroy(f(*id)),
                HookEvent::PromiseResolve(id) => HookEvent::PromiseResolve(f(*id)),
            };
            O::Hook {
                hook: *hook,
                event,
                execution_async_id: f(*execution_async_id),
                trigger_async_id: f(*trigger_async_id),
            }
        }
        O::Tick {
            async_id,
            execution_async_id,
            trigger_async_id,
            resource,
        } => O::Tick {
            async_id: f(*async_id),
            execution_async_id: f(*execution_async_id),
            trigger_async_id: f(*trigger_async_id),
            resource: resource.as_ref().map(|r| map_view(r, f)),
        },
        O::TickStore {
            async_id,
            als,
            value,
        } => O::TickStore {
            async_id: f(*async_id),
            als: *als,
            value: *value,
        },
        O::UnhandledRejection {
            execution_async_id,
            trigger_async_id,
        } => O::UnhandledRejection {
            execution_async_id: f(*execution_async_id),
            trigger_async_id: f(*trigger_async_id),
        },
        O::RejectionHandled {
            execution_async_id,
            trigger_async_id,
        } => O::RejectionHandled {
            execution_async_id: f(*execution_async_id),
            trigger_async_id: f(*trigger_async_id),
        },
        O::Microtask {
            promise,
            execution_async_id,
            trigger_async_id,
        } => O::Microtask {
            promise: *promise,
            execution_async_id: f(*execution_async_id),
            trigger_async_id: f(*trigger_async_id),
        },
        O::CorruptedStack {
            actual,
            expected,
            abort,
        } => O::CorruptedStack {
            actual: f(*actual),
            expected: f(*expected),
            abort: *abort,
        },
        other => other.clone(),
    }
}

/// `op` with each id argument replaced by `f(id)`.
fn map_op_ids(op: &Op, f: &mut dyn FnMut(AsyncId) -> AsyncId) -> Op {
    let mut op = op.clone();
    match &mut op {
        Op::OpenScope { context, .. } => {
            context.async_id = f(context.async_id);
            context.trigger_async_id = f(context.trigger_async_id);
        }
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
        } => {
            *async_id = f(*async_id);
            *trigger_async_id = f(*trigger_async_id);
        }
        Op::EmitAfter { async_id } | Op::EmitDestroy { async_id } | Op::ClearTimeout(async_id) => {
            *async_id = f(*async_id)
        }
        Op::EnterDefaultTriggerScope { trigger_async_id } => {
            *trigger_async_id = f(*trigger_async_id)
        }
        _ => {}
    }
    op
}

/// A model id as the test writes it.
fn id_js(id: AsyncId) -> String {
    if id >= HANDED / 2 {
        return id.to_string();
    }
    match id - HANDED - 2 {
        0 => "firstId".to_string(),
        k => format!("firstId + {k}"),
    }
}

/// A model id as the test's regexp of a crash message matches it.
fn id_re(id: AsyncId) -> String {
    if id >= HANDED / 2 {
        id.to_string()
    } else {
        "\\d+".to_string()
    }
}

/// The JS name of a trace resource, hook or storage.
fn r(n: u32) -> String {
    format!("r{n}")
}

fn line(depth: usize, text: &str, out: &mut String) {
    for _ in 0..depth {
        out.push_str("  ");
    }
    out.push_str(text);
    out.push('\n');
}

impl<S: AsyncIdStack> Writer<S> {
    fn push(&mut self, text: impl Into<String>) -> usize {
        let block = self.current();
        self.blocks[block].items.push(Item::Line(text.into()));
        block
    }

    fn new_block(&mut self) -> usize {
        self.blocks.push(Block::default());
        self.blocks.len() - 1
    }

    /// The block the next statement goes into.
    fn current(&mut self) -> usize {
        if let Some(f) = self.frames.last() {
            return f.block;
        }
        self.event_loop_block()
    }

    /// The block of the callback that runs from the event loop once the
    /// main script is over (registered at the main script's end, or just
    /// before the exception that ended it).
    fn event_loop_block(&mut self) -> usize {
        if let Some(b) = self.event_loop {
            return b;
        }
        let body = self.new_block();
        self.event_loop = Some(body);
        self.binding = true;
        let item = Item::Call {
            parts: vec![(
                "binding.runFromEventLoop(common.mustCall(() => {".to_string(),
                body,
            )],
            tail: "}));".to_string(),
        };
        match self.main_threw_at {
            Some(at) => self.blocks[0].items.insert(at, item),
            None => self.blocks[0].items.push(item),
        }
        body
    }

    /// Run B's id for an op argument that names an id Node handed out (not
    /// a number the trace wrote before that).
    fn node_id(&self, id: AsyncId) -> Option<AsyncId> {
        if self.literals.contains(&id) {
            return None;
        }
        self.handed.get(&id).copied()
    }

    /// Check the hook calls seen so far, here.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let calls = std::mem::take(&mut self.pending);
        let mut text = String::from("assert.deepStrictEqual(calls.splice(0), [\n");
        for c in calls {
            let _ = writeln!(text, "  {c},");
        }
        text.push_str("]);");
        self.push(text);
    }

    fn resource_view(&mut self, index: usize, view: &ResourceView) -> Result<String, NotWritten> {
        Ok(match view {
            ResourceView::Resource(id) => {
                self.resources.insert(id.0);
                r(id.0)
            }
            ResourceView::Undefined => "undefined".to_string(),
            ResourceView::Process => "process".to_string(),
            ResourceView::Unspecified => {
                return refuse(index, "the model calls this executionAsyncResource() unspecified (a read of a scope that has returned: freed memory, which may crash Node 26), and nothing unspecified is exported")
            }
            other => return refuse(index, format!("a resource the test cannot name before it sees it: {other}")),
        })
    }

    /// `assert.strictEqual(executionAsyncResource(), ...)` and the like.
    fn check_resource(&mut self, index: usize, view: &ResourceView) -> Result<(), NotWritten> {
        self.from_async_hooks.insert("executionAsyncResource");
        match view {
            ResourceView::Main | ResourceView::TopLevel => {
                let (name, bound, other, other_bound) = if *view == ResourceView::Main {
                    (
                        "mainResource",
                        self.main_bound,
                        "topLevelResource",
                        self.top_bound,
                    )
                } else {
                    (
                        "topLevelResource",
                        self.top_bound,
                        "mainResource",
                        self.main_bound,
                    )
                };
                if bound {
                    self.push(format!(
                        "assert.strictEqual(executionAsyncResource(), {name});"
                    ));
                } else {
                    if self.current() == 0 {
                        // Bound where it is declared: a `const`.
                        self.bound_inline.insert(name);
                        self.push(format!("const {name} = executionAsyncResource();"));
                    } else {
                        self.push(format!("{name} = executionAsyncResource();"));
                    }
                    self.push(format!("assert.deepStrictEqual({name}, {{}});"));
                    if other_bound {
                        self.push(format!("assert.notStrictEqual({name}, {other});"));
                    }
                    if *view == ResourceView::Main {
                        self.main_bound = true;
                    } else {
                        self.top_bound = true;
                    }
                }
            }
            ResourceView::TickObject(id)
            | ResourceView::Immediate(id)
            | ResourceView::Microtask(id)
            | ResourceView::Promise(id)
            | ResourceView::Timeout(id) => {
                self.uses_symbol = true;
                self.push(format!(
                    "assert.strictEqual(executionAsyncResource()[async_id_symbol], {});",
                    id_js(*id)
                ));
            }
            ResourceView::Unspecified => {
                // Not called: the answer would come through a pointer to a
                // scope that is gone, and nothing unspecified is exported.
                self.push("// executionAsyncResource() would read freed memory here: not called.");
            }
            other => {
                let js = self.resource_view(index, other)?;
                self.push(format!(
                    "assert.strictEqual(executionAsyncResource(), {js});"
                ));
            }
        }
        Ok(())
    }

    fn hook_call(&mut self, index: usize, o: &Observation) -> Result<String, NotWritten> {
        let Observation::Hook {
            hook,
            event,
            execution_async_id,
            trigger_async_id,
        } = o
        else {
            return refuse(index, "not a hook call");
        };
        let name = format!("'hook{}'", hook.0);
        let (e, t) = (id_js(*execution_async_id), id_js(*trigger_async_id));
        Ok(match event {
            HookEvent::Init {
                async_id,
                type_name,
                trigger_async_id: trigger,
                resource,
            } => {
                let res = match resource {
                    ResourceView::Resource(id) => {
                        self.resources.insert(id.0);
                        format!("'{}'", r(id.0))
                    }
                    ResourceView::Undefined => "undefined".to_string(),
                    // v20's nextTick makes a plain object.
                    ResourceView::TickObject(_) if self.a.version == NodeVersion::V20 => {
                        "'Object'".to_string()
                    }
                    ResourceView::TickObject(_) => "'TickObject'".to_string(),
                    ResourceView::Immediate(_) => "'Immediate'".to_string(),
                    ResourceView::Microtask(_) => "'AsyncResource'".to_string(),
                    ResourceView::Promise(_) => "'Promise'".to_string(),
                    ResourceView::Timeout(_) => "'Timeout'".to_string(),
                    other => return refuse(index, format!("an init hook with resource {other}")),
                };
                format!(
                    "[{name}, 'init', {}, '{type_name}', {}, {res}, {e}, {t}]",
                    id_js(*async_id),
                    id_js(*trigger)
                )
            }
            HookEvent::Before(id) => format!("[{name}, 'before', {}, {e}, {t}]", id_js(*id)),
            HookEvent::After(id) => format!("[{name}, 'after', {}, {e}, {t}]", id_js(*id)),
            HookEvent::Destroy(id) => format!("[{name}, 'destroy', {}, {e}, {t}]", id_js(*id)),
            HookEvent::PromiseResolve(id) => {
                format!("[{name}, 'promiseResolve', {}, {e}, {t}]", id_js(*id))
            }
        })
    }

    /// A scheduled callback (tick or microtask) block, opened here.
    fn schedule(&mut self, head: &str) -> usize {
        let body = self.new_block();
        let block = self.current();
        self.blocks[block].items.push(Item::Call {
            parts: vec![(head.to_string(), body)],
            tail: "}));".to_string(),
        });
        body
    }

    /// Open a frame's callback: the op's statement is a call with one
    /// callback, whose block the frame's ops go into.
    fn open(&mut self, head: String, tail: &str) {
        let body = self.new_block();
        let block = self.current();
        self.blocks[block].items.push(Item::Call {
            parts: vec![(head, body)],
            tail: tail.to_string(),
        });
        let at = self.blocks[block].items.len() - 1;
        self.frames.push(CodeFrame {
            block: body,
            call: Some((block, at)),
            dead: false,
            scope_args: None,
        });
    }

    /// `close-outer K`: the scope it deletes is opened on the heap
    /// (`binding.heapCallbackScope`, as `napi_open_callback_scope` opens
    /// one) and deleted from here; its code frame goes, and what the trace
    /// does after the inner scopes close runs after its callback returned,
    /// in the frame around it, as in the model.
    fn close_outer(&mut self, i: usize, outer: u32) -> Result<(), NotWritten> {
        let target = self.a.outer_scope_index(outer).filter(|_| outer > 0);
        let frame = target.and_then(|t| self.frames.get(t).cloned().map(|f| (t, f)));
        let Some((
            t,
            CodeFrame {
                call: Some((block, at)),
                scope_args: Some(args),
                dead: false,
                ..
            },
        )) = frame
        else {
            return refuse(
                i,
                format!("close-outer {outer}: only a scope the test opened with binding.callbackScope (a Local resource, no exception in it) is deleted out of order"),
            );
        };
        let key = self.heap_scopes;
        self.heap_scopes += 1;
        if let Item::Call { parts, .. } = &mut self.blocks[block].items[at] {
            if let Some((head, _)) = parts.first_mut() {
                *head =
                    format!("binding.heapCallbackScope({args}, {key}, common.mustCall(() => {{");
            }
        }
        self.push(format!("binding.deleteCallbackScope({key});"));
        self.frames.remove(t);
        Ok(())
    }

    /// The module test's source has a top-level `await`: v20's waits for the
    /// loader with one (ESM_WAIT_V20), Node 26's only for `entry-module tla`
    /// (the model's `module_top_level_await`, read when the test is
    /// written: `node-version` may come after `entry-module`).
    fn has_top_level_await(&self) -> bool {
        self.a.version == NodeVersion::V20 || self.a.microtasks.module_top_level_await
    }

    /// `stop`: the test runs in a Worker and calls `process.exit()` there,
    /// which stops the worker's environment as `worker.terminate()` does
    /// (`Worker::Exit` → `Stop` → `Environment::ExitEnv`). The worker's
    /// script body runs in a MessagePort's callback, not in a scope like the
    /// main script's, so everything before the stop runs from the event loop.
    fn stop(&mut self, i: usize) -> Result<(), NotWritten> {
        if self.module {
            return refuse(i, "stop in an ES module entry: a Worker of an .mjs test");
        }
        let only_event_loop = self.event_loop.is_some()
            && self.blocks[0].items.len() == 1
            && self.frames.last().is_some_and(|f| !f.dead);
        if !only_event_loop {
            return refuse(
                i,
                "a test that stops runs in a Worker, whose script body runs in a MessagePort's callback: everything before the stop must run from the event loop, after the main script's close",
            );
        }
        self.push("// The worker's environment stops here (Environment::ExitEnv): no more");
        self.push("// JS runs in it, and its scopes close on the stopping path.");
        self.push("process.exit();");
        self.stopped = true;
        Ok(())
    }

    /// A callback-scope's JS goes on after a handled exception: in the next
    /// callback the addon calls in the same scope.
    fn continue_after_exception(&mut self, i: usize, op: &Op) -> Result<(), NotWritten> {
        // A close-outer ends a frame other than the innermost, in which it
        // runs.
        let runs_in_top = !ends_frame(op) || matches!(op, Op::CloseOuter { .. });
        if self.frames.last().is_some_and(|f| f.dead) && runs_in_top {
            let Some(CodeFrame {
                call: Some((block, at)),
                ..
            }) = self.frames.last().cloned()
            else {
                return refuse(
                    i,
                    "JS after an exception in a frame the test cannot go on in",
                );
            };
            let body = self.new_block();
            if let Item::Call { parts, .. } = &mut self.blocks[block].items[at] {
                parts.push(("}), common.mustCall(() => {".to_string(), body));
            }
            let top = self.frames.last_mut().expect("checked");
            top.block = body;
            top.dead = false;
        }
        Ok(())
    }

    /// The statement of `op` (run A's ids, Node-handed ones encoded), before
    /// the model runs it.
    fn statement(&mut self, i: usize, op: &Op) -> Result<(), NotWritten> {
        let arg = |w: &Self, id: AsyncId| match w.node_id(id) {
            Some(_) => id_js(HANDED + id),
            None => id.to_string(),
        };
        match op {
            Op::NoForceAsyncHooksChecks => self.no_force = true,
            Op::NodeVersion(_) => {}
            Op::EntryModule { .. } => self.module = true,
            Op::PromiseCatch => {
                return refuse(i, "promise-catch is not written into a test yet")
            }
            Op::SetTimeout | Op::Timer | Op::EndTimer | Op::ClearTimeout(_) => {
                return refuse(i, "the Timeout ops are not written into a test yet")
            }
            Op::AbortOnUncaughtException => {
                return refuse(
                    i,
                    "--abort-on-uncaught-exception is not written into a test yet",
                )
            }
            Op::UnhandledRejections { .. } => {
                return refuse(
                    i,
                    "--unhandled-rejections and the program's listeners are not written into a test yet",
                )
            }
            Op::AlsDefault { als, value } => {
                self.storages.insert(als.0);
                self.defaults.insert(als.0, *value);
            }
            Op::OpenScope {
                kind,
                context,
                resource,
                ..
            } => {
                let global = resource.holder == model::vocab::Holder::Global;
                if global && *kind == ScopeKind::MakeCallback {
                    return refuse(
                        i,
                        "node::MakeCallback takes no Global<Object>* resource holder",
                    );
                }
                self.binding = true;
                self.resources.insert(resource.id.0);
                let (f, key) = match kind {
                    ScopeKind::MakeCallback => ("makeCallback", String::new()),
                    _ if global => ("globalCallbackScope", format!(", {}", resource.id.0)),
                    _ => ("callbackScope", String::new()),
                };
                let args = format!(
                    "{}, {}, {}",
                    r(resource.id.0),
                    arg(self, context.async_id),
                    arg(self, context.trigger_async_id)
                );
                let head = format!("binding.{f}({args}{key}, common.mustCall(() => {{");
                self.open(head, "}));");
                if f == "callbackScope" {
                    if let Some(top) = self.frames.last_mut() {
                        top.scope_args = Some(args);
                    }
                }
            }
            Op::CloseScope { threw } => {
                let make_callback = matches!(self.a.frames.last(), Some(Frame::Native(s)) if s.kind == ScopeKind::MakeCallback && !s.threw);
                if make_callback && *threw {
                    // The addon's TryCatch takes it; the scope is marked failed.
                    self.push("throw new Error('the callback throws');");
                } else if make_callback {
                    // What the callback returns comes back from
                    // node::MakeCallback only if it ran to its end: an
                    // assertion that throws in it cannot go unnoticed.
                    self.push("return 'returned';");
                    if let Some(CodeFrame {
                        call: Some((block, at)),
                        ..
                    }) = self.frames.last().cloned()
                    {
                        if let Item::Call { parts, tail } = &mut self.blocks[block].items[at] {
                            if let Some((head, _)) = parts.first_mut() {
                                *head = format!("assert.strictEqual({head}");
                            }
                            *tail = "})), 'returned');".to_string();
                        }
                    }
                }
            }
            Op::CloseOuter { outer } => self.close_outer(i, *outer)?,
            Op::TimersScope => {
                self.binding = true;
                self.timers = true;
                self.open("inTimersScope(common.mustCall(() => {".to_string(), "}));");
            }
            Op::ResetGlobal(resource) => {
                self.binding = true;
                self.push(format!("binding.resetGlobal({});", resource.0));
            }
            Op::Stop => self.stop(i)?,
            Op::CreateHook { hook, callbacks } => {
                let mut names = Vec::new();
                for (on, name) in [
                    (callbacks.init, "init"),
                    (callbacks.before, "before"),
                    (callbacks.after, "after"),
                    (callbacks.destroy, "destroy"),
                    (callbacks.promise_resolve, "promiseResolve"),
                ] {
                    if on {
                        names.push(name);
                    }
                }
                if self.hooks.insert(hook.0, names).is_some() {
                    return refuse(i, "a hook created twice under one name");
                }
            }
            Op::EnableHook(h) => {
                self.push(format!("hook{}.enable();", h.0));
            }
            Op::DisableHook(h) => {
                self.push(format!("hook{}.disable();", h.0));
            }
            Op::EmitInit {
                async_id,
                type_name,
                trigger_async_id,
                resource,
            } => {
                self.from_internal.insert("emitInit");
                let res = match resource {
                    Some(id) => {
                        self.resources.insert(id.0);
                        format!(", {}", r(id.0))
                    }
                    None => String::new(),
                };
                self.push(format!(
                    "emitInit({}, '{type_name}', {}{res});",
                    arg(self, *async_id),
                    arg(self, *trigger_async_id)
                ));
            }
            Op::EmitBefore {
                async_id,
                trigger_async_id,
                resource,
            } => {
                self.from_internal.insert("emitBefore");
                let res = match resource {
                    Some(id) => {
                        self.resources.insert(id.0);
                        format!(", {}", r(id.0))
                    }
                    None => String::new(),
                };
                self.push(format!(
                    "emitBefore({}, {}{res});",
                    arg(self, *async_id),
                    arg(self, *trigger_async_id)
                ));
            }
            Op::EmitAfter { async_id } => {
                self.from_internal.insert("emitAfter");
                self.push(format!("emitAfter({});", arg(self, *async_id)));
            }
            Op::EmitDestroy { async_id } => {
                self.from_internal.insert("emitDestroy");
                self.push(format!("emitDestroy({});", arg(self, *async_id)));
            }
            Op::EnterRunInAsyncScope {
                async_id,
                trigger_async_id,
                resource,
            } => {
                self.uses_rias = true;
                self.resources.insert(resource.0);
                // A resource `async-resource` did not make is made here, and
                // captures the frame current now (the model's reading of
                // `new AsyncResource(...).runInAsyncScope(fn)`).
                let n = resource.0;
                if !self.made.contains(&n)
                    && (self.a.context_frame.has_stores() || self.captured.contains(&n))
                {
                    self.captured.insert(n);
                    self.push(format!(
                        "{}[contextFrameSymbol] = AsyncContextFrame.current();",
                        r(n)
                    ));
                }
                let head = format!(
                    "runInAsyncScope({}, {}, {}, common.mustCall(() => {{",
                    r(resource.0),
                    arg(self, *async_id),
                    arg(self, *trigger_async_id)
                );
                self.open(head, "}));");
            }
            Op::EnterDefaultTriggerScope { trigger_async_id } => {
                self.from_internal.insert("defaultTriggerAsyncIdScope");
                let head = format!(
                    "defaultTriggerAsyncIdScope({}, common.mustCall(() => {{",
                    arg(self, *trigger_async_id)
                );
                self.open(head, "}));");
            }
            Op::AlsRun { als, store } => {
                self.storages.insert(als.0);
                self.open(
                    format!("als{}.run({store}, common.mustCall(() => {{", als.0),
                    "}));",
                );
            }
            Op::AlsExit(als) => {
                self.storages.insert(als.0);
                self.open(
                    format!("als{}.exit(common.mustCall(() => {{", als.0),
                    "}));",
                );
            }
            Op::AlsEnterWith { als, store } => {
                self.storages.insert(als.0);
                self.push(format!("als{}.enterWith({store});", als.0));
            }
            Op::AlsGetStore(_)
            | Op::ExecutionAsyncId
            | Op::TriggerAsyncId
            | Op::ExecutionAsyncResource
            | Op::DefaultTriggerAsyncId
            | Op::NewAsyncId => {
                // Written with what the model answers (see `answer`).
            }
            Op::AsyncResource(resource) => {
                // What `new AsyncResource()` does with the frame on Node 26,
                // on the trace's object (its ids are runInAsyncScope's).
                let n = resource.0;
                self.resources.insert(n);
                self.made.insert(n);
                self.captured.insert(n);
                self.push(format!(
                    "{}[contextFrameSymbol] = AsyncContextFrame.current();",
                    r(n)
                ));
            }
            Op::AlsDisable(als) => {
                self.storages.insert(als.0);
                self.push(format!("als{}.disable();", als.0));
            }
            Op::NapiAsyncInit(resource) => {
                self.napi = true;
                self.resources.insert(resource.0);
                self.push(format!("napi.asyncInit({});", r(resource.0)));
            }
            Op::NapiMakeCallback(resource) => {
                self.napi = true;
                self.open(
                    format!(
                        "napi.makeCallback({}, common.mustCall(() => {{",
                        r(resource.0)
                    ),
                    "}));",
                );
            }
            Op::NextTick { .. } | Op::NextTickBody => {
                let id = self.a.async_hooks.async_id_fields.k_async_id_counter + 1;
                let block = self.schedule("process.nextTick(common.mustCall(() => {");
                self.ticks.insert(id, block);
            }
            Op::TickCallback => {
                self.push("process._tickCallback();");
            }
            Op::QueueMicrotask | Op::QueueMicrotaskBody => {
                let block = self.schedule("queueMicrotask(common.mustCall(() => {");
                self.microtasks.push(block);
            }
            Op::PromiseThen | Op::PromiseThenBody => {
                let block = self.schedule("Promise.resolve().then(common.mustCall(() => {");
                self.microtasks.push(block);
            }
            Op::PromiseReject => {
                // The test's `unhandledRejection` listener records where
                // processPromiseRejections reports it (see `finish`).
                self.rejects = true;
                self.push("Promise.reject(new Error('rejected'));");
            }
            Op::UncaughtException { handled } => {
                let leaves_body = (self.a.catching_microtask())
                    .is_some_and(|m| self.a.frames[m].is_module_body());
                if leaves_body && self.has_top_level_await() != self.a.microtasks.module_top_level_await {
                    return refuse(i, "a throw out of an ES module's body without `tla`: v20's test waits for the loader with a top-level await, which makes the rejection one job longer (write `entry-module tla`)");
                }
                self.body_threw |= leaves_body;
                self.module_rejection_unhandled |= leaves_body && !handled;
                match self.a.frames.last() {
                    Some(Frame::Native(s))
                        if s.kind == ScopeKind::MakeCallback && !s.main_script =>
                    {
                        // As the conformance addon does it: the addon's
                        // TryCatch reports what the callback throws.
                        self.push("// Reported as uncaught while the MakeCallback scope is open, as for a");
                        self.push("// MakeCallback made from the event loop.");
                        self.push("binding.reportUncaught();");
                    }
                    Some(Frame::Microtask { .. } | Frame::Tick { .. }) => {
                        self.threw_in_microtask = self.a.catching_microtask();
                        // Thrown into a promise reaction's callback: it
                        // rejects the derived promise, which the test's
                        // `unhandledRejection` listener sees later.
                        let job = self.threw_in_microtask.map(|m| &self.a.frames[m]);
                        if let Some(Frame::Microtask {
                            job: RunningMicrotask::Reaction { .. },
                            ..
                        }) = job
                        {
                            self.rejects = true;
                            self.push("throw new Error('rejects the derived promise');");
                            return Ok(());
                        }
                        // Into a queueMicrotask callback: reported once the
                        // job is over, and the checkpoint goes on. Out of a
                        // tick run by a `Close` or a native scope's
                        // `_tickCallback()`: the frames up to there end
                        // (`follow_frames`).
                    }
                    Some(Frame::Native(_)) => {}
                    _ => return refuse(i, "an uncaught exception thrown in a JS frame"),
                }
                if self.frames.len() == 1
                    && matches!(self.a.frames.last(), Some(Frame::Native(s)) if s.main_script)
                {
                    self.main_threw_at = Some(self.blocks[0].items.len());
                }
                if *handled {
                    self.push("process.once('uncaughtException', common.mustCall());");
                }
                self.push("throw new Error('uncaught');");
            }
            Op::UncaughtExceptionListener | Op::EndListener => {
                return refuse(
                    i,
                    "uncaught-exception-listener: a listener body is not written into a test yet",
                )
            }
            Op::ClearAsyncIdStack => {
                self.from_internal.insert("clearAsyncIdStack");
                self.push("clearAsyncIdStack();");
            }
            Op::EndTick
            | Op::EndMicrotask
            | Op::ExitRunInAsyncScope
            | Op::ExitDefaultTriggerScope
            | Op::EndAlsRun => {}
        }
        Ok(())
    }

    /// Write what op `i` answered (its direct result), and route what
    /// the hooks and callbacks saw.
    fn answer(
        &mut self,
        i: usize,
        op: &Op,
        observations: &[Observation],
    ) -> Result<(), NotWritten> {
        for o in observations {
            match o {
                Observation::ExecutionAsyncId(id) => {
                    self.from_async_hooks.insert("executionAsyncId");
                    self.push(format!(
                        "assert.strictEqual(executionAsyncId(), {});",
                        id_js(*id)
                    ));
                }
                Observation::TriggerAsyncId(id) => {
                    self.from_async_hooks.insert("triggerAsyncId");
                    self.push(format!(
                        "assert.strictEqual(triggerAsyncId(), {});",
                        id_js(*id)
                    ));
                }
                Observation::ExecutionAsyncResource(view) => self.check_resource(i, view)?,
                Observation::DefaultTriggerAsyncId(id) => {
                    self.from_internal.insert("getDefaultTriggerAsyncId");
                    self.push(format!(
                        "assert.strictEqual(getDefaultTriggerAsyncId(), {});",
                        id_js(*id)
                    ));
                }
                Observation::NewAsyncId(id) => {
                    self.from_internal.insert("newAsyncId");
                    self.push(format!("assert.strictEqual(newAsyncId(), {});", id_js(*id)));
                }
                Observation::Store { als, value } => {
                    self.storages.insert(als.0);
                    let v = value.map_or("undefined".to_string(), |v| v.to_string());
                    self.push(format!("assert.strictEqual(als{}.getStore(), {v});", als.0));
                }
                Observation::Hook { .. } => {
                    let call = self.hook_call(i, o)?;
                    self.pending.push(call);
                }
                Observation::Tick {
                    async_id,
                    execution_async_id,
                    trigger_async_id,
                    resource,
                } => {
                    let model_id = if *async_id < HANDED / 2 {
                        async_id - HANDED
                    } else {
                        *async_id
                    };
                    let Some(&block) = self.ticks.get(&model_id) else {
                        return refuse(
                            i,
                            format!("tick {model_id} runs, and the test did not schedule it"),
                        );
                    };
                    self.ran.insert(block);
                    self.in_block(block, |w| {
                        w.flush();
                        w.from_async_hooks.insert("executionAsyncId");
                        w.from_async_hooks.insert("triggerAsyncId");
                        w.push(format!(
                            "assert.strictEqual(executionAsyncId(), {});",
                            id_js(*execution_async_id)
                        ));
                        w.push(format!(
                            "assert.strictEqual(triggerAsyncId(), {});",
                            id_js(*trigger_async_id)
                        ));
                        if let Some(view) = resource {
                            w.check_resource(i, view)?;
                        }
                        Ok(())
                    })?;
                    // Every storage the test has without a store there.
                    let listed: BTreeSet<u32> = observations
                        .iter()
                        .filter_map(|o| match o {
                            Observation::TickStore {
                                async_id: a, als, ..
                            } if a == async_id => Some(als.0),
                            _ => None,
                        })
                        .collect();
                    let unlisted: Vec<u32> = self.storages.difference(&listed).copied().collect();
                    self.in_block(block, |w| {
                        for s in unlisted {
                            w.push(format!("assert.strictEqual(als{s}.getStore(), undefined);"));
                        }
                        Ok(())
                    })?;
                }
                Observation::TickStore {
                    async_id,
                    als,
                    value,
                } => {
                    let model_id = if *async_id < HANDED / 2 {
                        async_id - HANDED
                    } else {
                        *async_id
                    };
                    let Some(&block) = self.ticks.get(&model_id) else {
                        return refuse(i, "a tick's store, and the test did not schedule the tick");
                    };
                    self.storages.insert(als.0);
                    self.in_block(block, |w| {
                        w.push(format!(
                            "assert.strictEqual(als{}.getStore(), {value});",
                            als.0
                        ));
                        Ok(())
                    })?;
                }
                Observation::Microtask {
                    execution_async_id,
                    trigger_async_id,
                    ..
                } => {
                    let Some(&block) = self.microtasks.get(self.microtasks_run) else {
                        return refuse(i, "a microtask runs, and the test did not queue it");
                    };
                    self.microtasks_run += 1;
                    self.ran.insert(block);
                    self.in_block(block, |w| {
                        w.flush();
                        w.from_async_hooks.insert("executionAsyncId");
                        w.from_async_hooks.insert("triggerAsyncId");
                        w.push(format!(
                            "assert.strictEqual(executionAsyncId(), {});",
                            id_js(*execution_async_id)
                        ));
                        w.push(format!(
                            "assert.strictEqual(triggerAsyncId(), {});",
                            id_js(*trigger_async_id)
                        ));
                        Ok(())
                    })?;
                }
                Observation::UnhandledRejection {
                    execution_async_id,
                    trigger_async_id,
                } => {
                    self.rejections_seen += 1;
                    self.pending.push(format!(
                        "['unhandledRejection', {}, {}]",
                        id_js(*execution_async_id),
                        id_js(*trigger_async_id)
                    ));
                }
                Observation::RejectionHandled { .. } => {
                    return refuse(
                        i,
                        "a rejectionHandled listener is not written into a test yet",
                    )
                }
                Observation::CorruptedStack { abort: true, .. } => {
                    return refuse(
                        i,
                        "an abort (--abort-on-uncaught-exception) is not written into a test yet",
                    )
                }
                Observation::CorruptedStack {
                    actual, expected, ..
                } => {
                    self.ending = Some(Ending::Corrupted {
                        actual: id_re(*actual),
                        expected: id_re(*expected),
                    });
                }
                Observation::CheckFailed(c) => self.ending = Some(Ending::Check(*c)),
                // At the throw, or (out of an ES module's body) at the op
                // whose checkpoint runs the loader's last job.
                Observation::Exit(1)
                    if matches!(op, Op::UncaughtException { .. })
                        || self.module_rejection_unhandled =>
                {
                    self.ending = Some(Ending::Uncaught)
                }
                Observation::Exit(code) => {
                    return refuse(
                        i,
                        format!("the process exits with {code}, and the test does not know why"),
                    )
                }
                Observation::Aborted(_) => {
                    return refuse(
                        i,
                        "an abort (--abort-on-uncaught-exception) is not written into a test yet",
                    )
                }
            }
        }
        Ok(())
    }

    /// Run `f` with `block` as the current block.
    fn in_block(
        &mut self,
        block: usize,
        f: impl FnOnce(&mut Self) -> Result<(), NotWritten>,
    ) -> Result<(), NotWritten> {
        self.frames.push(CodeFrame {
            block,
            call: None,
            dead: false,
            scope_args: None,
        });
        let result = f(self);
        self.frames.pop();
        result
    }
}

/// Write the test of `ops` (already decided for node, closes appended) on
/// node version `version`, with the expectations of the environment `make`
/// gives (the eager model, or a mutant for a wrong variant). `comment` is
/// the test's one-line description.
pub fn render<S: AsyncIdStack>(
    ops: &[Op],
    version: NodeVersion,
    make: impl Fn() -> Environment<S>,
    comment: &str,
) -> Result<Rendered, NotWritten> {
    let mut a = make();
    a.version = version;
    let mut b = make();
    b.version = version;
    b.async_hooks.async_id_fields.k_async_id_counter += SHIFT;
    let mut w = Writer {
        a,
        b,
        blocks: vec![Block::default()],
        frames: vec![CodeFrame {
            block: 0,
            call: None,
            dead: false,
            scope_args: None,
        }],
        event_loop: None,
        pending: Vec::new(),
        handed: HashMap::new(),
        literals: BTreeSet::new(),
        ticks: HashMap::new(),
        microtasks: Vec::new(),
        microtasks_run: 0,
        ran: BTreeSet::new(),
        from_async_hooks: BTreeSet::new(),
        from_internal: BTreeSet::new(),
        resources: BTreeSet::new(),
        hooks: BTreeMap::new(),
        storages: BTreeSet::new(),
        defaults: Default::default(),
        uses_symbol: false,
        uses_rias: false,
        main_bound: false,
        top_bound: false,
        bound_inline: BTreeSet::new(),
        binding: false,
        napi: false,
        timers: false,
        no_force: false,
        ending: None,
        main_threw_at: None,
        rejects: false,
        rejections_seen: 0,
        made: BTreeSet::new(),
        captured: BTreeSet::new(),
        module: false,
        body_threw: false,
        module_rejection_unhandled: false,
        heap_scopes: 0,
        threw_in_microtask: None,
        stopped: false,
    };
    for (i, op) in ops.iter().enumerate() {
        if w.ending.is_some() {
            break;
        }
        // After `stop` only the frames' ends follow, and none is written
        // (the worker's stack unwinds); the model must observe nothing.
        if w.stopped && !ends_frame(op) {
            return refuse(
                i,
                "after stop no JavaScript runs: only the frames' ends follow",
            );
        }
        let depth = w.a.frames.len();
        if depth > 24 {
            return refuse(
                i,
                format!("{depth} nested frames: too deep for a test to read"),
            );
        }
        // What happened since the last statement is checked before this
        // one (a closing op has no statement: the callback returns).
        if !w.stopped && !w.frames.last().is_some_and(|f| f.dead) {
            w.flush();
        }
        let frames_before = w.a.frames.len();
        if !w.stopped {
            w.continue_after_exception(i, op)?;
        }
        // Where the op's statement goes: a statement that ends the process
        // is announced there first, as test-improper-order.js's child does.
        let mark = w.current();
        let mark = (mark, w.blocks[mark].items.len());
        if !w.stopped {
            w.statement(i, op)?;
        }
        let op_b = map_op_ids(op, &mut |id| w.node_id(id).unwrap_or(id));
        let _ = map_op_ids(op, &mut |id| {
            if !w.handed.contains_key(&id) {
                w.literals.insert(id);
            }
            id
        });
        let counter_a = w.a.async_hooks.async_id_fields.k_async_id_counter;
        let counter_b = w.b.async_hooks.async_id_fields.k_async_id_counter;
        let obs_a =
            match crate::lockstep::catch_panic(|| model::vocab::Runtime::apply(&mut w.a, op)) {
                Ok(o) => o,
                Err(e) => return refuse(i, format!("the model rejects `{op}`: {e}")),
            };
        let obs_b =
            match crate::lockstep::catch_panic(|| model::vocab::Runtime::apply(&mut w.b, &op_b)) {
                Ok(o) => o,
                Err(e) => {
                    return refuse(
                        i,
                        format!("the model rejects `{op_b}` with its ids moved: {e}"),
                    )
                }
            };
        if obs_a.len() != obs_b.len() {
            return refuse(i, "the model answers differently with its id counter moved");
        }
        let mut written = Vec::with_capacity(obs_a.len());
        for (oa, ob) in obs_a.iter().zip(&obs_b) {
            let (ia, ib) = (ids_of(oa), ids_of(ob));
            if ia.len() != ib.len() {
                return refuse(i, "the model answers differently with its id counter moved");
            }
            let mut k = 0;
            let moved = map_ids(oa, &mut |id| {
                let shifted = ib[k];
                k += 1;
                if shifted == id {
                    id
                } else {
                    HANDED + id
                }
            });
            let mut k = 0;
            let same = map_ids(oa, &mut |id| {
                let v = ib[k];
                k += 1;
                if v == id || v == id + SHIFT {
                    v
                } else {
                    id
                }
            });
            if &same != ob || ia.len() != ib.len() {
                return refuse(i, "the model answers differently with its id counter moved");
            }
            written.push(moved);
        }
        for m in counter_a + 1..=w.a.async_hooks.async_id_fields.k_async_id_counter {
            w.handed.insert(m, m - counter_a + counter_b);
        }
        if w.a.async_hooks.async_id_fields.k_async_id_counter - counter_a
            != w.b.async_hooks.async_id_fields.k_async_id_counter - counter_b
        {
            return refuse(
                i,
                "the model takes ids differently with its id counter moved",
            );
        }
        if w.stopped {
            if !written.is_empty() {
                return refuse(i, "the model observes something after stop");
            }
            continue;
        }
        if written.iter().any(Observation::is_terminal) {
            let beat = Item::Line("process._rawDebug('heartbeat: still alive');".to_string());
            w.blocks[mark.0].items.insert(mark.1, beat);
        }
        w.answer(i, op, &written)?;
        let into_microtask = w.threw_in_microtask.is_some();
        w.follow_frames(i, op, frames_before)?;
        // The native scope the exception was reported in can run no more
        // JS in that callback; where a tick's exception ended the `Close`
        // that ran it, the code goes on after that scope. A microtask's
        // job takes its exception: the scope around the checkpoint goes on.
        if matches!(op, Op::UncaughtException { .. })
            && !into_microtask
            && matches!(w.a.frames.last(), Some(Frame::Native(_)))
        {
            if let Some(top) = w.frames.last_mut() {
                top.dead = true;
            }
        }
    }
    // Hook calls made after an ES module's body are checked from the event
    // loop (the addon's callback), as a CommonJS test's are.
    let module_body_only =
        w.module && w.frames.is_empty() && w.event_loop.is_none() && w.pending.is_empty();
    if w.ending.is_none() && !w.stopped {
        w.flush();
        // After a throw out of the module's body no line of block 0 runs.
        let unreachable = module_body_only && w.body_threw;
        if (!w.hooks.is_empty() || w.rejects) && !unreachable {
            // An ES module test that runs nothing from the event loop checks
            // at the end of its body that no hook call is left.
            let block = if module_body_only { 0 } else { w.current() };
            w.blocks[block]
                .items
                .push(Item::Line("assert.deepStrictEqual(calls, []);".to_string()));
        }
    }
    if let Some(m) = w
        .literals
        .last()
        .filter(|&&m| m > MAX_TAKEN && !w.handed.is_empty())
    {
        return refuse(
            0,
            format!("id {m} is written as a number: too large to take Node's ids up to it"),
        );
    }
    Ok(w.finish(comment))
}

impl<S: AsyncIdStack> Writer<S> {
    /// Bring the code frames in line with the model's after op `i`.
    fn follow_frames(&mut self, i: usize, op: &Op, before: usize) -> Result<(), NotWritten> {
        let after = self.a.frames.len();
        if self.a.exited {
            return Ok(());
        }
        let kept = if op.opens_frame() {
            if after != before + 1 {
                return refuse(i, "the model opened no frame");
            }
            return Ok(());
        } else if ends_frame(op) || matches!(op, Op::CloseOuter { .. }) {
            before - 1
        } else if let (Op::UncaughtException { .. }, Some(m)) = (op, self.threw_in_microtask) {
            // An exception into a microtask's callback ends its job: the
            // next job's callback, if the checkpoint runs one, is a new
            // frame.
            self.threw_in_microtask = None;
            m
        } else if matches!(op, Op::UncaughtException { .. }) {
            // A tick's exception ends the frames up to where it is reported.
            after.min(before)
        } else {
            before
        };
        // The code frames of the model's frames that remain (index 0 is
        // the main script, kept apart once it closed).
        let keep_code = kept.min(self.frames.len());
        self.frames.truncate(keep_code);
        for f in &self.a.frames[kept.min(after)..] {
            let block = match f {
                Frame::Tick { tick, .. } => {
                    *self.ticks.get(&tick.async_id).ok_or_else(|| NotWritten {
                        index: i,
                        reason: "a tick's callback runs that the test did not schedule".to_string(),
                    })?
                }
                Frame::Microtask { .. } => {
                    let Some(&b) = self.microtasks.get(self.microtasks_run.wrapping_sub(1)) else {
                        return refuse(
                            i,
                            "a microtask's callback runs that the test did not queue",
                        );
                    };
                    b
                }
                _ => return refuse(i, "a frame the test cannot follow"),
            };
            self.frames.push(CodeFrame {
                block,
                call: None,
                dead: false,
                scope_args: None,
            });
        }
        if self.frames.len() != after {
            return refuse(i, format!("the test's callbacks and the model's frames part ways ({} against {after}, kept {kept}, before {before})", self.frames.len()));
        }
        Ok(())
    }

    fn finish(self, comment: &str) -> Rendered {
        let addon = self.binding || self.napi;
        let crash = self.ending.is_some();
        // An ES module entry that needs the addon is already a child's
        // entry (`module_runner`): its runner checks how it dies.
        let runner_checks = self.module && addon;
        let wrapped = crash && !runner_checks;
        let depth = usize::from(wrapped || self.stopped);
        let mut body = String::new();
        self.write_block(0, depth, &mut body);
        // After a scope deleted out of order, V8's TryCatch chain points at
        // the deleted scope's TryCatch: a check that threw would be lost
        // or corrupt memory, so the checks of such a test throw nothing.
        let quiet = self.heap_scopes > 0 && !crash;
        if quiet {
            body = body
                .replace("assert.strictEqual(", "expectSame(")
                .replace("assert.deepStrictEqual(", "expectDeep(");
        }
        let quiet = quiet && (body.contains("expectSame(") || body.contains("expectDeep("));
        let first_id = body.contains("firstId");
        // Node's ids must not equal the test's own numbers by chance: the
        // model's second run (its counter moved) says the expectations
        // hold when they differ, so the test takes ids up to its largest.
        let top_literal =
            (self.literals.iter().copied().max()).filter(|&m| m >= 2 && !self.handed.is_empty());
        let takes_ids = first_id || top_literal.is_some();
        // An AsyncResource's frame is set by the test (`async-resource`).
        let captures = !self.captured.is_empty();
        let mut flags = Vec::new();
        let internal = !self.from_internal.is_empty()
            || takes_ids
            || self.uses_symbol
            || self.uses_rias
            || captures
            || self.timers
            || (self.module && !self.hooks.is_empty());
        if internal {
            flags.push("--expose-internals");
        }
        if self.no_force {
            flags.push("--no-force-async-hooks-checks");
        }
        let mut decls = String::new();
        let d = |text: &str, out: &mut String| line(depth, text, out);
        if self.module && self.a.version == NodeVersion::V20 {
            // What the model's `entry-module` on v20 starts from (the
            // conformance program waits the same way, src/conform/emit.rs).
            for text in ESM_WAIT_V20 {
                d(text, &mut decls);
            }
        } else if self.module && self.has_top_level_await() {
            // `entry-module tla` on 26: the same loop, a top-level await
            // that does not run there (no loader request is open).
            for text in ESM_TLA_V26.iter().chain(&ESM_WAIT_V20[2..]) {
                d(text, &mut decls);
            }
        }
        if self.module && !self.hooks.is_empty() {
            for text in ESM_NO_PROMISE_HOOKS {
                d(text, &mut decls);
            }
        }
        if self.timers {
            for text in TIMERS_SCOPE {
                d(text, &mut decls);
            }
        }
        if captures {
            d(
                "// The symbol under which an AsyncResource keeps the AsyncContextFrame it",
                &mut decls,
            );
            d(
                "// captured (lib/async_hooks.js), read off one made before any hook is on.",
                &mut decls,
            );
            d(
                "const contextFrameSymbol = Object.getOwnPropertySymbols(",
                &mut decls,
            );
            d(
                "  new AsyncResource('probe', { requireManualDestroy: true }),",
                &mut decls,
            );
            d(
                ").find((s) => s.description === 'context_frame');",
                &mut decls,
            );
        }
        if let Some(m) = top_literal {
            d(
                &format!(
                    "// Node's ids start above {m}, the largest id the test writes as a number,"
                ),
                &mut decls,
            );
            d(
                "// so that none of them is one of the test's by chance.",
                &mut decls,
            );
            d(&format!("while (newAsyncId() < {m});"), &mut decls);
        }
        if first_id {
            d(
                "// Ids Node hands out from here on: firstId, firstId + 1, ...",
                &mut decls,
            );
            d("const firstId = newAsyncId() + 1;", &mut decls);
        }
        for n in &self.resources {
            d(
                &format!("const {} = {{ name: '{}' }};", r(*n), r(*n)),
                &mut decls,
            );
        }
        for s in &self.storages {
            d(
                &match self.defaults.get(s) {
                    Some(v) => {
                        format!("const als{s} = new AsyncLocalStorage({{ defaultValue: {v} }});")
                    }
                    None => format!("const als{s} = new AsyncLocalStorage();"),
                },
                &mut decls,
            );
        }
        let mut unbound = Vec::new();
        if self.main_bound {
            unbound.push("mainResource");
        }
        if self.top_bound {
            unbound.push("topLevelResource");
        }
        unbound.retain(|n| !self.bound_inline.contains(n));
        if !unbound.is_empty() {
            d(
                "// The main script's resource and topLevelResource: named when first seen.",
                &mut decls,
            );
            d(&format!("let {};", unbound.join(", ")), &mut decls);
        }
        if !self.hooks.is_empty() {
            d("// Each hook call: [hook, callback, ...arguments, executionAsyncId(), triggerAsyncId()].", &mut decls);
        }
        if !self.hooks.is_empty() || self.rejects {
            d("const calls = [];", &mut decls);
        }
        if self.rejects {
            d(
                "// Each unhandled rejection: ['unhandledRejection', executionAsyncId(), triggerAsyncId()].",
                &mut decls,
            );
            let record = "calls.push(['unhandledRejection', executionAsyncId(), triggerAsyncId()])";
            if self.rejections_seen == 0 {
                d(
                    "process.on('unhandledRejection', common.mustNotCall());",
                    &mut decls,
                );
            } else {
                let times = match self.rejections_seen {
                    1 => String::new(),
                    n => format!(", {n}"),
                };
                d(
                    "process.on('unhandledRejection', common.mustCall(() => {",
                    &mut decls,
                );
                d(&format!("  {record};"), &mut decls);
                d(&format!("}}{times}));"), &mut decls);
            }
        }
        if !self.hooks.is_empty() {
            d("function record(hook, ...callbacks) {", &mut decls);
            d("  const recorder = {};", &mut decls);
            d("  for (const callback of callbacks) {", &mut decls);
            d(
                "    recorder[callback] = (id, type, trigger, resource) => {",
                &mut decls,
            );
            d("      const args = callback === 'init' ?", &mut decls);
            d(
                "        [id, type, trigger, resource?.name ?? resource?.constructor.name] : [id];",
                &mut decls,
            );
            d("      calls.push([hook, callback, ...args, executionAsyncId(), triggerAsyncId()]);", &mut decls);
            d("    };", &mut decls);
            d("  }", &mut decls);
            d("  return recorder;", &mut decls);
            d("}", &mut decls);
            for (h, callbacks) in &self.hooks {
                let names: Vec<String> = callbacks.iter().map(|c| format!("'{c}'")).collect();
                let sep = if names.is_empty() { "" } else { ", " };
                // A hook the test never enables is made and not bound.
                let bound = if body.contains(&format!("hook{h}.")) {
                    format!("const hook{h} = ")
                } else {
                    String::new()
                };
                d(
                    &format!(
                        "{bound}createHook(record('hook{h}'{sep}{}));",
                        names.join(", ")
                    ),
                    &mut decls,
                );
            }
        }
        if quiet {
            let same = body.contains("expectSame(").then_some(QUIET_SAME);
            let deep = body.contains("expectDeep(").then_some(QUIET_DEEP);
            for text in [Some(QUIET_CHECKS), same, deep]
                .into_iter()
                .flatten()
                .flatten()
            {
                d(text, &mut decls);
            }
        }
        if self.uses_rias {
            d(
                "// AsyncResource.prototype.runInAsyncScope on `resource`, given its two ids.",
                &mut decls,
            );
            d(
                "function runInAsyncScope(resource, asyncId, triggerId, fn) {",
                &mut decls,
            );
            d("  resource[async_id_symbol] = asyncId;", &mut decls);
            d(
                "  resource[trigger_async_id_symbol] = triggerId;",
                &mut decls,
            );
            d(
                "  return AsyncResource.prototype.runInAsyncScope.call(resource, fn);",
                &mut decls,
            );
            d("}", &mut decls);
        }

        let mut out = String::new();
        if !flags.is_empty() {
            let _ = writeln!(out, "// Flags: {}", flags.join(" "));
        }
        if !self.module {
            out.push_str("'use strict';\n");
        }
        for l in wrap_comment(comment) {
            let _ = writeln!(out, "// {l}");
        }
        out.push('\n');
        let dir = if addon { "../../common" } else { "../common" };
        // Node requires `common` first in every test, bound only if used.
        let uses = |what: &str| body.contains(what) || decls.contains(what);
        if self.module {
            // An ES module imports `common` first, then makes `require` for
            // the rest (internal modules, the binding).
            if uses("common.") || addon {
                let _ = writeln!(out, "import * as common from '{dir}/index.mjs';");
            } else {
                let _ = writeln!(out, "import '{dir}/index.mjs';");
            }
            out.push_str("import { createRequire } from 'module';\n\n");
            out.push_str("const require = createRequire(import.meta.url);\n");
        } else if uses("common.") || addon {
            let _ = writeln!(out, "const common = require('{dir}');");
        } else {
            let _ = writeln!(out, "require('{dir}');");
        }
        if uses("assert.") || wrapped || self.stopped {
            out.push_str("const assert = require('assert');\n");
        }
        let mut from_public: BTreeSet<&str> = self.from_async_hooks.clone();
        if !self.hooks.is_empty() {
            from_public.extend(["createHook", "executionAsyncId", "triggerAsyncId"]);
        }
        if self.rejections_seen > 0 {
            from_public.extend(["executionAsyncId", "triggerAsyncId"]);
        }
        if !self.storages.is_empty() {
            from_public.insert("AsyncLocalStorage");
        }
        if self.uses_rias || captures {
            from_public.insert("AsyncResource");
        }
        if !from_public.is_empty() {
            let names: Vec<&str> = from_public.iter().copied().collect();
            destructure(&names, "async_hooks", &mut out);
        }
        let mut from_internal: BTreeSet<String> =
            self.from_internal.iter().map(|s| s.to_string()).collect();
        if takes_ids {
            from_internal.insert("newAsyncId".to_string());
        }
        if self.uses_symbol || self.uses_rias {
            let mut symbols = vec!["async_id_symbol"];
            if self.uses_rias {
                symbols.push("trigger_async_id_symbol");
            }
            from_internal.insert(format!("symbols: {{ {} }}", symbols.join(", ")));
        }
        if !from_internal.is_empty() {
            let names: Vec<String> = from_internal.into_iter().collect();
            destructure(&names, "internal/async_hooks", &mut out);
        }
        if captures {
            out.push_str("const AsyncContextFrame = require('internal/async_context_frame');\n");
        }
        if self.timers {
            // Its warning's tick would run, and be seen by the hooks,
            // after the main script.
            for text in [
                "// internal/test/binding warns through process.emitWarning, whose tick",
                "// the hooks would see: no warning while it loads.",
                "const { emitWarning } = process;",
                "process.emitWarning = () => {};",
                "const { internalBinding } = require('internal/test/binding');",
                "process.emitWarning = emitWarning;",
            ] {
                out.push_str(text);
                out.push('\n');
            }
            out.push_str("const { getTimerCallbacks } = require('internal/timers');\n");
        }
        if quiet {
            out.push_str("const util = require('util');\n");
        }
        if wrapped {
            out.push_str("const { spawnSync } = require('child_process');\n");
            if self.module {
                out.push_str("const { fileURLToPath } = require('url');\n");
            }
        }
        if self.stopped {
            out.push_str("const { isMainThread, Worker } = require('worker_threads');\n");
        }
        // A test that stops loads the addon in its Worker only (an addon
        // that is not context-aware loads into one environment).
        let mut addons = String::new();
        let indent = if self.stopped { "  " } else { "" };
        if self.binding {
            let _ = writeln!(
                addons,
                "{indent}const binding = require(`./build/${{common.buildType}}/binding`);"
            );
        }
        if self.napi {
            let _ = writeln!(
                addons,
                "{indent}const napi = require(`./build/${{common.buildType}}/napi_binding`);"
            );
        }
        if !self.stopped {
            out.push_str(&addons);
        }
        out.push('\n');
        if self.stopped {
            for text in [
                "if (isMainThread) {",
                "  // The test runs in a Worker, whose process.exit() stops its environment",
                "  // with scopes open, as worker.terminate() would.",
                "  new Worker(__filename)",
                "    .on('error', common.mustNotCall())",
                "    .on('exit', common.mustCall((code) => assert.strictEqual(code, 0)));",
                "} else {",
            ] {
                out.push_str(text);
                out.push('\n');
            }
            out.push_str(&addons);
            out.push_str(&decls);
            if !decls.is_empty() {
                out.push('\n');
            }
            out.push_str(&body);
            out.push_str("}\n");
        } else if let Some(ending) = self.ending.as_ref().filter(|_| wrapped) {
            out.push_str("if (process.argv[2] === 'child') {\n");
            out.push_str(&decls);
            if !decls.is_empty() {
                out.push('\n');
            }
            out.push_str(&body);
            out.push_str("} else {\n");
            let args: Vec<String> = flags
                .iter()
                .map(|f| format!("'{f}'"))
                .chain([
                    if self.module {
                        "fileURLToPath(import.meta.url)".to_string()
                    } else {
                        "__filename".to_string()
                    },
                    "'child'".to_string(),
                ])
                .collect();
            let one = format!(
                "  const child = spawnSync(process.execPath, [{}]);",
                args.join(", ")
            );
            if one.len() <= MAX_LEN {
                let _ = writeln!(out, "{one}");
            } else {
                out.push_str("  const child = spawnSync(process.execPath, [\n");
                let _ = writeln!(out, "    {},", args.join(", "));
                out.push_str("  ]);\n");
            }
            for l in ending_checks(ending) {
                let _ = writeln!(out, "  {l}");
            }
            out.push_str("}\n");
        } else {
            out.push_str(&decls);
            if !decls.is_empty() {
                out.push('\n');
            }
            out.push_str(&body);
        }
        if self.module && addon {
            return Rendered {
                source: module_runner(comment, &flags, self.ending.as_ref()),
                binding: true,
                ending: None,
                module: true,
                fixture: Some(out),
            };
        }
        Rendered {
            source: out,
            binding: addon,
            ending: self.ending,
            module: self.module,
            fixture: None,
        }
    }

    fn write_block(&self, block: usize, depth: usize, out: &mut String) {
        for item in &self.blocks[block].items {
            match item {
                Item::Line(text) => {
                    for l in text.lines() {
                        line(depth, l, out);
                    }
                }
                Item::Call { parts, tail } => {
                    for (k, (head, body)) in parts.iter().enumerate() {
                        let head = if self.ran.contains(body) || k > 0 || !is_scheduled(head) {
                            head.clone()
                        } else {
                            // A callback the model never runs (the process
                            // died first): no common.mustCall.
                            head.replace("common.mustCall(() => {", "() => {")
                        };
                        line(depth, &head, out);
                        self.write_block(*body, depth + 1, out);
                    }
                    let tail = match parts.first() {
                        Some((head, body)) if is_scheduled(head) && !self.ran.contains(body) => {
                            tail.replacen("}));", "});", 1)
                        }
                        _ => tail.clone(),
                    };
                    line(depth, &tail, out);
                }
            }
        }
    }
}

/// The longest line Node's lint allows (`max-len` in its eslint.config.mjs).
const MAX_LEN: usize = 120;

/// How a test that dies is checked: the child's status, its signal, and
/// its stderr (the heartbeat, then Node's message), as
/// test/async-hooks/test-improper-order.js checks them.
fn ending_checks(ending: &Ending) -> [String; 3] {
    let (status, signal, message) = match ending {
        Ending::Corrupted { actual, expected } => (
            "1",
            "null",
            format!("async hook stack has become corrupted \\(actual: {actual}, expected: {expected}\\)"),
        ),
        Ending::Check(c) => (
            "null",
            "'SIGABRT'",
            format!("Assertion failed: {}", regex_escape(check_text(*c))),
        ),
        Ending::Uncaught => ("1", "null", "Error: uncaught".to_string()),
    };
    [
        format!("assert.strictEqual(child.status, {status});"),
        format!("assert.strictEqual(child.signal, {signal});"),
        format!("assert.match(child.stderr.toString(), /heartbeat: still alive\\n[^]*{message}/);"),
    ]
}

/// The `.js` test of an ES module entry that needs the addon: it runs the
/// module beside it (its own name with `.mjs`) as a child's entry, with the
/// module's flags, and checks that it ends as the model says (`ending`: how
/// it dies; none: exit 0).
fn module_runner(comment: &str, flags: &[&str], ending: Option<&Ending>) -> String {
    let mut out = String::from("'use strict';\n");
    for l in wrap_comment(comment) {
        let _ = writeln!(out, "// {l}");
    }
    out.push('\n');
    out.push_str("require('../../common');\n");
    out.push_str("const assert = require('assert');\n");
    out.push_str("const { spawnSync } = require('child_process');\n\n");
    out.push_str("// The test is an ES module entry: this file's name with .mjs, beside it\n");
    out.push_str("// (the addon test runner runs .js files only), run as a child's entry.\n");
    out.push_str("const entry = __filename.replace(/\\.js$/, '.mjs');\n");
    let args: Vec<String> = flags
        .iter()
        .map(|f| format!("'{f}'"))
        .chain(["entry".to_string()])
        .collect();
    let _ = writeln!(
        out,
        "const child = spawnSync(process.execPath, [{}]);",
        args.join(", ")
    );
    match ending {
        Some(ending) => {
            for l in ending_checks(ending) {
                let _ = writeln!(out, "{l}");
            }
        }
        None => {
            out.push_str("assert.strictEqual(child.signal, null);\n");
            out.push_str("assert.strictEqual(child.status, 0, child.stderr.toString());\n");
        }
    }
    out
}

/// The test's one-line description, wrapped as Node's comments are (80
/// columns).
fn wrap_comment(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = vec![String::new()];
    for word in text.split_whitespace() {
        let last = lines.last_mut().expect("one line at least");
        if !last.is_empty() && last.len() + 1 + word.len() > 77 {
            lines.push(word.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}

/// `const { a, b } = require('module');`, one name a line when that is
/// longer than [`MAX_LEN`].
fn destructure<N: AsRef<str>>(names: &[N], module: &str, out: &mut String) {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    let one = format!("const {{ {} }} = require('{module}');", names.join(", "));
    if one.len() <= MAX_LEN {
        out.push_str(&one);
        out.push('\n');
        return;
    }
    out.push_str("const {\n");
    for n in names {
        let _ = writeln!(out, "  {n},");
    }
    let _ = writeln!(out, "}} = require('{module}');");
}

/// A tick's or a microtask's callback (it runs later, if at all).
fn is_scheduled(head: &str) -> bool {
    head.starts_with("process.nextTick(")
        || head.starts_with("queueMicrotask(")
        || head.starts_with("Promise.resolve().then(")
}

/// `text` with the characters a JS regexp gives meaning escaped.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The op ends the innermost frame: a close or an `end-*` (a tick's and a
/// microtask's callback returning included).
fn ends_frame(op: &Op) -> bool {
    op.closes_frame() || matches!(op, Op::EndTick | Op::EndMicrotask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::vocab::trace;
    use model::Eager;

    fn write(text: &str, version: NodeVersion) -> Result<Rendered, NotWritten> {
        let ops = trace::parse(text).unwrap_or_else(|e| panic!("{e}")).ops();
        let ops = crate::export::prepare(&ops, version).unwrap_or_else(|e| panic!("{e}"));
        render(&ops, version, Eager::new, "what it shows.")
    }

    #[test]
    fn a_scope_is_a_callback_and_each_answer_an_assertion() {
        let t = write("callback-scope 5 1 R1\n  execution-async-id\n  execution-async-resource\nclose\ntrigger-async-id", NodeVersion::V26)
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.binding && t.ending.is_none());
        assert!(
            t.source.starts_with(
                "'use strict';\n// what it shows.\n\nconst common = require('../../common');\n"
            ),
            "{}",
            t.source
        );
        let body = "binding.callbackScope(r1, 5, 1, common.mustCall(() => {\n  assert.strictEqual(executionAsyncId(), 5);\n  assert.strictEqual(executionAsyncResource(), r1);\n}));\nassert.strictEqual(triggerAsyncId(), 0);\n";
        assert!(t.source.ends_with(body), "{}", t.source);
    }

    #[test]
    fn ids_node_hands_out_are_told_from_the_traces_own() {
        // The trace writes 2 before Node hands out 2 (the tick's id): the
        // trace's 2 stays a number, the tick's is firstId.
        let t = write(
            "emit-before 2 1\nnext-tick\nemit-after 2\nclose",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.source.contains("emitBefore(2, 1);\nprocess.nextTick(common.mustCall(() => {\n  assert.strictEqual(executionAsyncId(), firstId);\n  assert.strictEqual(triggerAsyncId(), 2);\n}));\nemitAfter(2);\n"), "{}", t.source);
        // A handed-out id the trace names afterwards is Node's.
        let t = write(
            "new-async-id\nemit-before 2 1\nexecution-async-id\nemit-after 2",
            NodeVersion::V20,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.source.contains("assert.strictEqual(newAsyncId(), firstId);\nemitBefore(firstId, 1);\nassert.strictEqual(executionAsyncId(), firstId);\nemitAfter(firstId);"), "{}", t.source);
        assert!(!t.source.contains("while (newAsyncId()"), "{}", t.source);
    }

    #[test]
    fn node_ids_are_taken_past_the_traces_own_numbers() {
        // The tick's id must not be 2 (the trace's number) by chance: the
        // test takes ids up to 2 before its first.
        let t = write(
            "emit-before 2 1\nnext-tick\nemit-after 2\nclose",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.source.contains("while (newAsyncId() < 2);\n// Ids Node hands out from here on: firstId, firstId + 1, ...\nconst firstId = newAsyncId() + 1;\n"), "{}", t.source);
        // A number too large to take ids up to: not written.
        let e = write(
            "emit-before 2000000 1\nnext-tick\nemit-after 2000000\nclose",
            NodeVersion::V26,
        )
        .unwrap_err();
        assert!(
            e.reason.contains("id 2000000 is written as a number"),
            "{e:?}"
        );
    }

    #[test]
    fn a_crash_is_a_child_process_and_unspecified_reads_are_left_out() {
        let t = write(
            "create-hook H1 after\nenable-hook H1\nemit-after 8",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            t.ending,
            Some(Ending::Corrupted {
                actual: "1".to_string(),
                expected: "8".to_string()
            })
        );
        assert!(t.source.contains("  process._rawDebug('heartbeat: still alive');\n  emitAfter(8);\n} else {\n  const child = spawnSync(process.execPath, ['--expose-internals', __filename, 'child']);\n  assert.strictEqual(child.status, 1);"), "{}", t.source);
        let unspecified =
            "callback-scope 5 1 R1\n  emit-before 5 5 R2\nclose\nexecution-async-resource";
        let t = write(unspecified, NodeVersion::V20).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(
            t.source.contains(
                "  }));\n  // executionAsyncResource() would read freed memory here: not called.\n"
            ),
            "{}",
            t.source
        );
    }

    #[test]
    fn a_scope_closed_out_of_order_is_made_on_the_heap_and_deleted_there() {
        let t = write(
            "callback-scope 5 1 R1\n  callback-scope 5 7 R2\n  close-outer 1\n  execution-async-id\n  execution-async-resource\n  close\nexecution-async-id",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.source.contains("binding.heapCallbackScope(r1, 5, 1, 0, common.mustCall(() => {\n  binding.callbackScope(r2, 5, 7, common.mustCall(() => {\n    binding.deleteCallbackScope(0);\n    expectSame(executionAsyncId(), 5);\n    // executionAsyncResource() would read freed memory here: not called.\n  }));\n}));\nexpectSame(executionAsyncId(), 1);"), "{}", t.source);
        assert!(!t.source.contains("assert."), "{}", t.source);
        // After a handled exception the delete comes in the scope's next
        // callback.
        let t = write(
            "callback-scope 0 0 R4\n  callback-scope 5 3 R3\n  uncaught-exception handled\n  close-outer 1\n  close",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.source.contains("    throw new Error('uncaught');\n  }), common.mustCall(() => {\n    binding.deleteCallbackScope(0);\n  }));"), "{}", t.source);
    }

    #[test]
    fn a_rejection_is_checked_where_the_listener_saw_it() {
        let t = write(
            "callback-scope 5 1 R1\n  promise-reject\n  tick-callback\n  execution-async-id\nclose",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.source.contains("process.on('unhandledRejection', common.mustCall(() => {\n  calls.push(['unhandledRejection', executionAsyncId(), triggerAsyncId()]);\n}));"), "{}", t.source);
        assert!(t.source.contains("  Promise.reject(new Error('rejected'));\n  process._tickCallback();\n  assert.deepStrictEqual(calls.splice(0), [\n    ['unhandledRejection', 5, 1],\n  ]);\n  assert.strictEqual(executionAsyncId(), 5);"), "{}", t.source);
    }

    #[test]
    fn a_microtask_that_throws_in_a_make_callback_leaves_its_callback_running() {
        let t = write(
            "close\nmake-callback 5 1 R1\n  queue-microtask-body\n  tick-callback\n  uncaught-exception handled\n  execution-async-id\nclose",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        // The read after the checkpoint (the handler cleared the stack) is
        // in the same callback, not in a second one the addon never calls.
        assert!(t.source.contains("      throw new Error('uncaught');\n    }));\n    process._tickCallback();\n    assert.strictEqual(executionAsyncId(), 0);\n    return 'returned';"), "{}", t.source);
        assert!(
            !t.source.contains("}), common.mustCall(() => {"),
            "{}",
            t.source
        );
    }

    #[test]
    fn a_tick_that_throws_into_a_reaction_rejects_its_promise_and_the_next_job_runs() {
        let t = write(
            "callback-scope 5 1 R1\n  promise-then-body\n  queue-microtask-body\n  tick-callback\n  next-tick-body\n  tick-callback\n  uncaught-exception handled\n  execution-async-id\n  end-microtask\n  execution-async-id\nclose",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        // The tick's throw is the reaction's: no uncaughtException listener.
        assert!(t.source.contains("        assert.strictEqual(triggerAsyncId(), 5);\n        throw new Error('rejects the derived promise');\n      }));\n      process._tickCallback();\n    }));"), "{}", t.source);
        assert!(!t.source.contains("uncaughtException"), "{}", t.source);
        // The next job's read is in its own callback, the scope's after it.
        assert!(t.source.contains("    queueMicrotask(common.mustCall(() => {\n      assert.strictEqual(executionAsyncId(), firstId);\n      assert.strictEqual(triggerAsyncId(), 5);\n      assert.strictEqual(executionAsyncId(), firstId);\n    }));\n    process._tickCallback();\n    assert.deepStrictEqual(calls.splice(0), [\n      ['unhandledRejection', firstId, 5],\n    ]);\n    assert.strictEqual(executionAsyncId(), firstId);"), "{}", t.source);
    }

    #[test]
    fn a_tick_that_throws_ends_its_callback_and_the_test_goes_on_after_the_close() {
        let t = write(
            "next-tick-body\nclose\n  uncaught-exception handled\ncallback-scope 0 0 R1\n  execution-async-id\nclose",
            NodeVersion::V20,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.ending.is_none());
        assert!(t.source.contains("process.nextTick(common.mustCall(() => {\n  assert.strictEqual(executionAsyncId(), firstId);\n  assert.strictEqual(triggerAsyncId(), 1);\n  process.once('uncaughtException', common.mustCall());\n  throw new Error('uncaught');\n}));\nbinding.runFromEventLoop(common.mustCall(() => {\n  binding.callbackScope(r1, 0, 0, common.mustCall(() => {\n    assert.strictEqual(executionAsyncId(), 0);"), "{}", t.source);
    }

    #[test]
    fn a_resource_captures_the_frame_where_the_model_says() {
        let t = write(
            "als-run A1 5\n  async-resource R3\nend-als-run\nrun-in-async-scope 9 1 R3\n  als-get-store A1\nend-run-in-async-scope\nals-run A1 6\n  run-in-async-scope 10 1 R2\n    als-get-store A1\n  end-run-in-async-scope\nend-als-run",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.source.contains("  r3[contextFrameSymbol] = AsyncContextFrame.current();\n}));\nrunInAsyncScope(r3, 9, 1, common.mustCall(() => {\n  assert.strictEqual(als1.getStore(), 5);"), "{}", t.source);
        // R2 was never made: it captures the frame at its runInAsyncScope.
        assert!(t.source.contains("  r2[contextFrameSymbol] = AsyncContextFrame.current();\n  runInAsyncScope(r2, 10, 1, common.mustCall(() => {\n    assert.strictEqual(als1.getStore(), 6);"), "{}", t.source);
    }

    #[test]
    fn an_es_module_entry_is_an_mjs_test_that_imports_common_first() {
        let t = write(
            "entry-module\ncreate-hook H1 before after\nenable-hook H1\nexecution-async-id\nclose",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.module && !t.binding);
        assert!(t.source.starts_with("// Flags: --expose-internals\n// what it shows.\n\nimport '../common/index.mjs';\nimport { createRequire } from 'module';\n\nconst require = createRequire(import.meta.url);\n"), "{}", t.source);
        assert!(
            t.source
                .contains("require('internal/promise_hooks').createHook = () => () => {};"),
            "{}",
            t.source
        );
        assert!(t.source.ends_with("hook1.enable();\nassert.strictEqual(executionAsyncId(), 0);\nassert.deepStrictEqual(calls, []);\n"), "{}", t.source);
        // v20 waits for its loader's requests first.
        let t = write("entry-module\nexecution-async-id\nclose", NodeVersion::V20)
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.source.contains("while (loaderBusy()) {"), "{}", t.source);
        // An .mjs in test/addons/ would not run: a .js test runs it.
        let t = write(
            "entry-module\ncallback-scope 5 1 R1\n  execution-async-id\nclose\nclose",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(t.module && t.binding, "{}", t.source);
        assert!(t.source.contains("const entry = __filename.replace(/\\.js$/, '.mjs');\nconst child = spawnSync(process.execPath, [entry]);\nassert.strictEqual(child.signal, null);\nassert.strictEqual(child.status, 0, child.stderr.toString());\n"), "{}", t.source);
        let fixture = t.fixture.unwrap_or_default();
        assert!(
            fixture.contains("import * as common from '../../common/index.mjs';"),
            "{fixture}"
        );
        assert!(fixture.contains("binding.callbackScope(r1, 5, 1, common.mustCall(() => {\n  assert.strictEqual(executionAsyncId(), 5);\n}));"), "{fixture}");
    }

    #[test]
    fn an_napi_async_context_is_the_node_api_modules_and_its_callback_returns() {
        let t = write(
            "als-run A1 5\n  napi-async-init R1\nend-als-run\nals-run A1 6\n  napi-make-callback R1\n    als-get-store A1\n    execution-async-id\n  close\n  napi-make-callback R1\n  close threw\nend-als-run",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        // The addon folder, the Node-API module only.
        assert!(t.binding, "{}", t.source);
        assert!(
            t.source
                .contains("const napi = require(`./build/${common.buildType}/napi_binding`);\n"),
            "{}",
            t.source
        );
        assert!(!t.source.contains("const binding ="), "{}", t.source);
        // The context takes a Node-handed id and the frame of als1.run(5).
        assert!(t.source.contains("als1.run(5, common.mustCall(() => {\n  napi.asyncInit(r1);\n}));\nals1.run(6, common.mustCall(() => {\n  assert.strictEqual(napi.makeCallback(r1, common.mustCall(() => {\n    assert.strictEqual(als1.getStore(), 5);\n    assert.strictEqual(executionAsyncId(), firstId);\n    return 'returned';\n  })), 'returned');\n  napi.makeCallback(r1, common.mustCall(() => {\n    throw new Error('the callback throws');\n  }));\n}));\n"), "{}", t.source);
    }

    #[test]
    fn an_es_module_that_needs_the_addon_and_dies_is_checked_by_its_runner() {
        let text = "entry-module\ncallback-scope 5 1 R1\nemit-before 7 5 R2\nclose";
        for version in [NodeVersion::V20, NodeVersion::V26] {
            let t = write(text, version).unwrap();
            let fixture = t.fixture.as_deref().expect("an .mjs fixture");
            assert!(
                t.source.contains("assert.strictEqual(child.status, 1);"),
                "{}",
                t.source
            );
            assert!(
                t.source.contains("corrupted \\(actual: 7, expected: 5\\)"),
                "{}",
                t.source
            );
            // The module itself is the child: no child of its own.
            assert!(
                !fixture.contains("spawnSync") && !fixture.contains("'child'"),
                "{fixture}"
            );
            assert!(
                fixture.contains("process._rawDebug('heartbeat: still alive');"),
                "{fixture}"
            );
        }
    }

    #[test]
    fn an_uncaught_exception_in_a_make_callback_is_reported_by_the_addons_try_catch() {
        let text = "make-callback 5 1 R1\nuncaught-exception handled\nclose\nexecution-async-id";
        for version in [NodeVersion::V20, NodeVersion::V26] {
            let src = write(text, version).unwrap().source;
            let at = src.find("binding.reportUncaught();").expect("reported");
            let throw = src.find("throw new Error('uncaught');").expect("thrown");
            assert!(at < throw, "{src}");
            // The callback ends at the throw: no `return 'returned'` check.
            assert!(!src.contains("'returned'"), "{src}");
        }
    }

    #[test]
    fn a_queue_microtask_callback_that_throws_ends_there_and_the_next_job_runs() {
        let text = "close\ncallback-scope 5 1 R1\n  queue-microtask-body\n  queue-microtask-body\nclose\n  uncaught-exception handled\n  execution-async-id\nend-microtask";
        for version in [NodeVersion::V20, NodeVersion::V26] {
            let src = write(text, version).unwrap().source;
            let thrown = src.find("throw new Error('uncaught');").expect("thrown");
            let read = src
                .rfind("assert.strictEqual(executionAsyncId(), ")
                .expect("a read");
            // The read is in the second job's callback, written after the
            // first job's, which ends at its throw.
            let second_job = src
                .rfind("queueMicrotask(common.mustCall(")
                .expect("two jobs");
            assert!(thrown < second_job && second_job < read, "{src}");
            assert!(!src[thrown..second_job].contains("assert."), "{src}");
        }
    }

    #[test]
    fn a_test_that_stops_runs_in_a_worker_that_loads_the_addon() {
        let text = "create-hook H1 before\nclose\ncallback-scope 5 1 R1\nenable-hook H1\ncallback-scope 6 5 R2\nstop\nclose\nclose";
        for version in [NodeVersion::V20, NodeVersion::V26] {
            let t = write(text, version).unwrap();
            let src = &t.source;
            let main = src
                .find("if (isMainThread) {")
                .expect("a main-thread branch");
            let worker = src.find("} else {").expect("a worker branch");
            let addon = src.find("const binding = require(").expect("the binding");
            assert!(main < worker && worker < addon, "{src}");
            assert!(src
                .contains(".on('exit', common.mustCall((code) => assert.strictEqual(code, 0)));"));
            assert!(
                src.contains("        process.exit();\n      }));\n"),
                "{src}"
            );
            // Nothing is written after the stop, not even the last check.
            assert!(!src.contains("assert.deepStrictEqual(calls, [])"), "{src}");
        }
        // decide refuses this first (src/conform/decide.rs); the renderer
        // refuses it too, given the trace unprepared.
        let ops = trace::parse("callback-scope 5 1 R1\nstop\nclose\nclose")
            .unwrap()
            .ops();
        let in_main = render(&ops, NodeVersion::V26, Eager::new, "").unwrap_err();
        assert!(
            in_main.reason.contains("from the event loop"),
            "{}",
            in_main.reason
        );
    }

    #[test]
    fn js_in_run_timers_scope_is_a_callback_of_in_timers_scope() {
        let t = write(
            "close\ntimers-scope\n  execution-async-resource\n  uncaught-exception handled\n  execution-async-id\nclose",
            NodeVersion::V26,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(
            t.binding && t.source.starts_with("// Flags: --expose-internals\n"),
            "{}",
            t.source
        );
        assert!(
            t.source.contains("function inTimersScope(...fns) {"),
            "{}",
            t.source
        );
        assert!(t.source.contains("process.emitWarning = () => {};\nconst { internalBinding } = require('internal/test/binding');\nprocess.emitWarning = emitWarning;\n"), "{}", t.source);
        // After the handled exception RunTimers calls the callback again.
        assert!(t.source.contains("binding.runFromEventLoop(common.mustCall(() => {\n  inTimersScope(common.mustCall(() => {\n    assert.strictEqual(executionAsyncResource(), process);\n    process.once('uncaughtException', common.mustCall());\n    throw new Error('uncaught');\n  }), common.mustCall(() => {\n    assert.strictEqual(executionAsyncId(), 0);\n  }));\n"), "{}", t.source);
    }
}
