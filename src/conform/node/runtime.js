'use strict';
// scopecheck conformance runtime: the prologue of every program a trace
// becomes, and the interpreter of the trace format that runs it.
// src/conform/emit.rs appends one line, `runTrace(TRACE, PLAN);` (see "The
// trace" below), so that the program's size is linear in the trace and its
// source nests nothing, however deep the trace. Run as
// `node --no-deprecation --expose-internals program.js`; for a trace whose
// entry is an ES module (`entry-module`), emit.rs writes program.mjs, which
// starts with `const require = createRequire(...)`.
//
// Rules this file keeps, so that only the trace's ops touch async context:
// * everything is required, and every object Node would create lazily
//   (process.stderr, the promise-hook module, timers) exists, before any hook
//   is enabled;
// * nothing here creates an async resource: no console, no timers, no
//   promises, no streams after the prologue;
// * every observation is one line written synchronously to fd 1 with
//   fs.writeSync, as it happens, so that a crash leaves everything before it.

const fs = require('fs');
const asyncHooks = require('async_hooks');
const iah = require('internal/async_hooks');
require('internal/promise_hooks'); // AsyncHook.enable -> updatePromiseHookMode
require('timers'); // onGlobalUncaughtException -> setImmediate
const { Immediate, Timeout, async_id_symbol: timer_async_id_symbol } = require('internal/timers');
// The fatal-exception report writes to process.stderr: create that stream
// (a PIPEWRAP, FILEHANDLE or TTYWRAP) now, while no hook sees it.
void process.stderr;
// The async_wrap binding (its fields, constants and executionAsyncResource_):
// process.binding('async_wrap') is gone in Node 26, internalBinding is
// reached through internal/test/binding on every version. That module warns
// through process.emitWarning, which would queue a tick (an async id, and a
// callback that hooks enabled later would see): silenced while it loads.
function binding(name) {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    return require('internal/test/binding').internalBinding(name);
  } finally {
    process.emitWarning = emitWarning;
  }
}
const aw = binding('async_wrap');
const addon = require(ADDON_PATH);

// AsyncContextFrame (Node 24 and later; absent on v20): the frame an
// AsyncResource captures at construction lives under a module-local symbol
// of lib/async_hooks.js, found on a probe AsyncResource made now (its id is
// put back with the counter below; no hook exists yet).
const acf = (() => {
  try {
    return require('internal/async_context_frame');
  } catch {
    return undefined;
  }
})();
const contextFrameSymbol = Object.getOwnPropertySymbols(new asyncHooks.AsyncResource('SCOPECHECK_PROBE'))
  .find((s) => s.description === 'context_frame');
void asyncHooks.AsyncLocalStorage; // its module loads now, not under a hook

const { async_id_symbol, trigger_async_id_symbol } = iah.symbols;
const K = aw.constants;

function W(line) {
  fs.writeSync(1, line + '\n');
}

// The two resources Node makes itself: StartExecution's Object::New() (the
// native resource of stack entry 0), and topLevelResource (what
// executionAsyncResource() returns on an empty stack). The second is read
// through the JS function with the stack length briefly set to 0; the
// kUsesExecutionAsyncResource flag it sets is put back to 0, as at startup.
const mainResource = aw.executionAsyncResource(0);
const topLevelResource = (() => {
  const fields = aw.async_hook_fields;
  const length = fields[K.kStackLength];
  const uses = fields[K.kUsesExecutionAsyncResource];
  fields[K.kStackLength] = 0;
  const r = iah.executionAsyncResource();
  fields[K.kStackLength] = length;
  fields[K.kUsesExecutionAsyncResource] = uses;
  return r;
})();

// Resources named by the trace: R<n> is one plain object for the whole run.
const resources = new Map();
const resourceNames = new Map();
function R(n) {
  let r = resources.get(n);
  if (r === undefined) {
    r = {};
    resources.set(n, r);
    resourceNames.set(r, 'R' + n);
  }
  return r;
}

// ---- what the program writes ----
//
// A trace too: before each op's code the op's own line with its index as a
// comment (`close # 12`), after it what the op showed as `=>` lines in the
// model's syntax (`Observation`'s Display, model/src/vocab/observation.rs),
// with Node's ids; and `# start`, `# assign MODEL NODE` and `# loop`
// (written by the addon) for the reader, src/conform/observe.rs, which
// renames Node's ids to the model's.

const eid = () => iah.executionAsyncId();
const tid = () => iah.triggerAsyncId();
const see = (observation) => W('=> ' + observation);
const ids = () => `[${eid()}, ${tid()}]`;

// The callbacks of the trace's ticks: a tick object is known by its callback.
const tickCallbacks = new WeakSet();

function nameOf(r) {
  if (r === undefined) return 'undefined';
  if (r === topLevelResource) return 'topLevelResource';
  if (r === mainResource) return 'main';
  if (r === process) return 'process';
  const name = resourceNames.get(r);
  if (name !== undefined) return name;
  if (r !== null && typeof r === 'object' && tickCallbacks.has(r.callback)) {
    return 'tick:' + r[async_id_symbol];
  }
  // A tick process.emitWarning queued (`--unhandled-rejections` warnings).
  if (r !== null && typeof r === 'object' && r.callback?.name === 'doEmitWarning') {
    return 'tick:' + r[async_id_symbol];
  }
  if (r instanceof Immediate) return 'immediate:' + r[timer_async_id_symbol];
  if (r instanceof Timeout) return 'timeout:' + r[timer_async_id_symbol];
  if (r instanceof Promise) return 'promise:' + r[async_id_symbol];
  // The only AsyncResource the program does not name is queueMicrotask's
  // (its init hook runs before the callback is attached to it).
  if (r instanceof asyncHooks.AsyncResource) return 'microtask:' + r[async_id_symbol];
  let ctor = '?';
  try {
    ctor = String(r?.constructor?.name);
  } catch {
    // keep '?'
  }
  return 'other:' + typeof r + ':' + ctor;
}

// Ids Node hands out itself (newAsyncId(), a tick's id) are renamed: the
// trace writes the model's number, the program uses Node's (I), and tells
// the reader which is which.
const nodeIds = new Map();
function I(x) {
  return nodeIds.has(x) ? nodeIds.get(x) : x;
}
function assign(model, node) {
  if (model === undefined) return;
  nodeIds.set(model, node);
  W(`# assign ${model} ${node}`);
}

const hooks = new Map();
function createHook(name, callbacks) {
  const fns = {};
  if (callbacks.includes('init')) {
    fns.init = (id, type, trig, r) => see(`${name}.init(${id}, ${type}, ${trig}, ${nameOf(r)}) in ${ids()}`);
  }
  for (const ev of ['before', 'after', 'destroy', 'promiseResolve']) {
    if (callbacks.includes(ev)) {
      fns[ev] = (id) => see(`${name}.${ev}(${id}) in ${ids()}`);
    }
  }
  hooks.set(name, asyncHooks.createHook(fns));
}

// ---- the ops ----

// `R<n>` of the trace: n.
const num = (token) => +token.slice(1);
const res = (token) => (token === undefined ? undefined : R(num(token)));

function microtask(promise) {
  const cb = () => see(`${promise ? 'promise reaction' : 'microtask'} sees ${ids()}`);
  if (promise) {
    Promise.resolve().then(cb);
  } else {
    queueMicrotask(cb);
  }
}
// `promise-reject`: a promise rejected and never handled. The program's
// `unhandledRejection` listener (added at the first one) writes the ids it
// runs in when processPromiseRejections reports it.
// `unhandled-rejections MODE [on-unhandled-rejection] [on-uncaught-exception]`
// (a header op; emit.rs gives node --unhandled-rejections=MODE and
// --no-warnings) says whether the program has that listener at all, and
// adds a do-nothing uncaughtException listener from the start. A later one
// replaces what an earlier one said.
let rejectionListener = false;
let wantsRejectionListener = true;
function unhandledRejections(t) {
  wantsRejectionListener = t.includes('on-unhandled-rejection');
  process.removeAllListeners('uncaughtException');
  if (t.includes('on-uncaught-exception')) process.on('uncaughtException', () => {});
}
function listenForRejections() {
  if (!rejectionListener && wantsRejectionListener) {
    rejectionListener = true;
    process.on('unhandledRejection', () => see(`unhandled rejection sees ${ids()}`));
    process.on('rejectionHandled', () => see(`rejection handled sees ${ids()}`));
  }
}
// The rejected promises no handler was attached to, most recent last:
// `promise-catch` handles the last.
const rejected = [];
function rejectUnhandled() {
  listenForRejections();
  rejected.push(Promise.reject(0));
}
function catchRejected() {
  const cb = () => see(`promise reaction sees ${ids()}`);
  rejected.pop().catch(cb);
}
// A microtask with a body: its callback writes what it sees, then runs the
// ops up to its `end-microtask` as a frame, inside whatever ran the
// checkpoint (a close, `tick-callback`, the `end-tick` of a tick, the
// `end-microtask` of the microtask before).
function microtaskBody(promise) {
  let derived;
  const cb = () => {
    see(`${promise ? 'promise reaction' : 'microtask'} sees ${ids()}`);
    bodyFrame(promise ? 'reaction' : 'microtask', derived);
  };
  if (promise) {
    derived = Promise.resolve().then(cb);
  } else {
    queueMicrotask(cb);
  }
}

// AsyncLocalStorage instances named by the trace: A<n> is one
// `new AsyncLocalStorage()` for the whole run, made when first named.
const storages = new Map();
function A(n) {
  let a = storages.get(n);
  if (a === undefined) {
    a = new asyncHooks.AsyncLocalStorage();
    storages.set(n, a);
  }
  return a;
}

// Every storage with a store in tick `id`'s frame, in storage order.
function tickStores(id) {
  for (const n of [...storages.keys()].sort((x, y) => x - y)) {
    const v = storages.get(n).getStore();
    if (v !== undefined) see(`tick ${id} store A${n}.getStore() = ${v}`);
  }
}

function nextTick(model, queryResource) {
  let id;
  const cb = () => {
    const seen = `tick ${id} sees ${ids()}`;
    see(queryResource ? `${seen} resource ${nameOf(iah.executionAsyncResource())}` : seen);
    tickStores(id);
  };
  tickCallbacks.add(cb);
  process.nextTick(cb);
  // nextTick took newAsyncId(): the counter is now the tick's id.
  id = aw.async_id_fields[K.kAsyncIdCounter];
  assign(model, id);
}

// A tick with a body: its callback runs the ops up to its `end-tick` as a
// frame, inside whatever ran the tick (a close, `tick-callback`, the
// `end-tick` of the tick before).
function nextTickBody(model) {
  let id;
  const cb = () => {
    see(`tick ${id} sees ${ids()}`);
    tickStores(id);
    bodyFrame();
  };
  tickCallbacks.add(cb);
  process.nextTick(cb);
  id = aw.async_id_fields[K.kAsyncIdCounter];
  assign(model, id);
}

const runInAsyncScope = asyncHooks.AsyncResource.prototype.runInAsyncScope;
// `async-resource R`: what `new AsyncResource()` does with the frame on
// Node 26 (`this[contextFrameSymbol] = AsyncContextFrame.current()`), on the
// trace's object R (its ids are the ones runInAsyncScope is given).
const captured = new Set();
function captureFrame(n) {
  R(n)[contextFrameSymbol] = acf.current();
  captured.add(n);
}

// AsyncResource.prototype.runInAsyncScope on the trace's resource object,
// given the AsyncResource's two id fields. An R that `async-resource` did
// not make is made here (as `new AsyncResource(...).runInAsyncScope(fn)`):
// on Node 26 it captures the current frame.
function rias(n, asyncId, triggerAsyncId, fn) {
  const r = R(n);
  r[async_id_symbol] = asyncId;
  r[trigger_async_id_symbol] = triggerAsyncId;
  if (contextFrameSymbol !== undefined && acf !== undefined && !captured.has(n)) {
    r[contextFrameSymbol] = acf.current();
  }
  return runInAsyncScope.call(r, fn);
}

function uncaught(handled) {
  process.removeAllListeners('uncaughtException');
  if (handled) process.on('uncaughtException', () => {});
  throw new Error('scopecheck: uncaught exception');
}

// `close threw` on a make-callback: its callback throws, and its JS caller
// catches it (the addon's TryCatch swallows it).
class Thrown extends Error {}

// A bare make-callback: node::MakeCallback with no TryCatch between it and
// this JS. What its callback throws (`close threw`) comes back here as an
// exception, which the next op catches (`catch`: nothing to do) or lets go
// on (`uncaught-exception`, which throws anew from here), or it is lost: the
// call returns normally (Node 26 through callbackTrampoline,
// docs/node-findings.md F8), which is what the program sees.
function bareMakeCallback(t, f) {
  let back = false;
  try {
    addon.bareMakeCallback(I(+t[1]), I(+t[2]), R(num(t[3])), () => frame(f));
  } catch (e) {
    if (!(e instanceof Thrown)) throw e;
    back = true;
  }
  takeClose(f);
  if (f.threw && !back) see('exception lost');
}

// N-API callback scopes (`close-outer`): the Node-API module (napi.cc),
// loaded by runTrace when the trace needs it, makes the async contexts and
// hands out its napi_env; the addon opens and closes the scopes with it.
let napi = null;
let napiEnv = null;
// The `callback-scope`s opened as N-API scopes (by op index), and their
// frames' records.
const napiScopes = new Set();
const napiFrames = new Map();

// napi_async_init with the trace's ids: it takes new_async_id() (the counter
// plus one) and get_default_trigger_async_id() (the execution id when the
// default trigger id is negative), and runs init hooks only while kInit > 0.
// All four fields are put back before anything else runs.
function napiContext(asyncId, triggerAsyncId, resource) {
  const f = aw.async_id_fields;
  const h = aw.async_hook_fields;
  const saved = [f[K.kAsyncIdCounter], f[K.kDefaultTriggerAsyncId], f[K.kExecutionAsyncId], h[K.kInit]];
  f[K.kAsyncIdCounter] = asyncId - 1;
  f[K.kDefaultTriggerAsyncId] = -1;
  f[K.kExecutionAsyncId] = triggerAsyncId;
  h[K.kInit] = 0;
  try {
    return napi.asyncInit(resource);
  } finally {
    [f[K.kAsyncIdCounter], f[K.kDefaultTriggerAsyncId], f[K.kExecutionAsyncId], h[K.kInit]] = saved;
  }
}

// `napi-async-init R`: napi_async_init on R, as Node does it (its id from
// new_async_id(), its trigger the default trigger id, its init hooks, the
// frame it captures on Node 26): the latest context made on each R, by R's
// number. `napi-make-callback R` calls napi_make_callback on it, with R as
// `this`; its callback's exception (`close threw`) comes back from the
// module's call as a JS exception.
const napiContexts = new Map();
function napiAsyncInit(model, n) {
  napiContexts.set(n, napi.asyncInit(R(n)));
  assign(model, aw.async_id_fields[K.kAsyncIdCounter]);
}
function napiMakeCallback(n, fn) {
  try {
    napi.makeCallback(napiContexts.get(n), R(n), fn);
  } catch (e) {
    if (!(e instanceof Thrown)) throw e;
  }
}

// RunTimers' scope (`timers-scope`): the environment's timers callback (what
// Environment::RunTimers calls in its bare InternalCallbackScope(env,
// process, {0, 0}), in a loop under a verbose TryCatch) is replaced by one
// that runs the trace's ops up to the scope's close while a `timers-scope`
// is open, and is Node's own processTimers otherwise (a fresh one from
// internal/timers' getTimerCallbacks, as bootstrap/node.js makes it; the
// immediate callback is replaced by its fresh twin too). The trace's own JS
// then runs directly in RunTimers' scope. After a handled exception
// RunTimers calls it again, and it goes on with the next op.
//
// `set-timeout` is a real setTimeout, unref'd, with a duration of its own
// (1e9 ms plus its number, so that the lists expire in the order they were
// made and none fires by itself). `timer` calls that fresh processTimers
// from RunTimers' scope with a `now` at which exactly the Timeouts of its
// call are due (PLAN.timers: how many `timer` ops the call has, the first
// and each that follows an `end-timer` directly); processTimers calls the
// runNextTicks it was made with before each list but its first, and that
// one takes the call's next `timer` op (its line) before it runs the ticks.
// A Timeout's callback runs the ops up to its `end-timer` as a frame.
const TIMERS_DUE = 987654321; // ms: how addon.runTimers finds the handle
let timersBinding = null;
let timersFrame = null;
let processTimersFresh = null;
const waitingTimeouts = []; // the trace's Timeouts not yet run, oldest first
let timerOpsLeft = 0; // `timer` ops of this processTimers call not yet taken
let timerCallStarting = false; // its first Timeout's callback has not run
function timersRunNextTicks() {
  if (!timerCallStarting && timerOpsLeft > 0) {
    timerOpsLeft--;
    const [i, line] = nextOp();
    W(`${line} # ${i}`);
  }
  process._tickCallback();
}
function installTimers() {
  timersBinding = binding('timers');
  const { getTimerCallbacks } = require('internal/timers');
  const { processImmediate, processTimers } = getTimerCallbacks(timersRunNextTicks);
  processTimersFresh = processTimers;
  timersBinding.setupTimers(processImmediate, (now) => {
    if (timersFrame === null) return processTimers(now);
    timerOpsLeft = 0;
    frame(timersFrame);
    return 0;
  });
}
let timeoutSerial = 0;
const timeoutsById = new Map(); // node's async id -> the trace's Timeout
// Every storage with a store in Timeout `id`'s callback, in storage order.
function timeoutStores(id) {
  for (const n of [...storages.keys()].sort((x, y) => x - y)) {
    const v = storages.get(n).getStore();
    if (v !== undefined) see(`timeout ${id} store A${n}.getStore() = ${v}`);
  }
}
function setTimeoutOp(model) {
  const t = setTimeout(() => {
    timerCallStarting = false;
    waitingTimeouts.shift();
    const f = record('timer');
    const id = t[timer_async_id_symbol];
    see(`timeout ${id} sees ${ids()}`);
    timeoutStores(id);
    frame(f);
  }, 1e9 + ++timeoutSerial);
  t.unref();
  waitingTimeouts.push(t);
  timeoutsById.set(t[timer_async_id_symbol], t);
  assign(model, t[timer_async_id_symbol]);
}
// `clear-timeout N`: clearTimeout on the trace's Timeout N, waiting (it
// leaves the Timeouts the next `timer` counts) or running its callback.
// The Timeout is ref'd first: the trace's setTimeout is a plain, ref'd one,
// and lib/timers.js' unenroll deletes a list left empty only for a ref'd
// Timeout (an unref'd one's empty list stays queued, and processTimers
// would count it as a list run: a runNextTicks() the model has no reason
// for). ref() counts it and unenroll uncounts it: nothing is left holding
// the loop.
function clearTimeoutOp(id) {
  const t = timeoutsById.get(I(id));
  const at = waitingTimeouts.indexOf(t);
  if (at >= 0) waitingTimeouts.splice(at, 1);
  t.ref();
  clearTimeout(t);
}
function timerOp(i) {
  const chain = plan.timers[i];
  const last = waitingTimeouts[chain - 1];
  timerOpsLeft = chain - 1;
  timerCallStarting = true;
  processTimersFresh(last._idleStart + last._idleTimeout);
}

// The prologue's own resources (the process.stderr stream) took ids: put the
// counter back to where a fresh main script has it (1), so that the trace's
// newAsyncId() and ticks get the model's numbers. The renaming above still
// covers any id Node takes on its own later.
aw.async_id_fields[K.kAsyncIdCounter] = 1;

// ---- the trace ----
//
// runTrace(TRACE, PLAN): TRACE is the trace, one op per line exactly as the
// trace format writes it (`Op`'s Display, model/src/vocab/op_syntax.rs); op i is
// line i, and the interpreter switches on its first word, the op's name.
// Ids are the model's numbers (mapped with I() where used). PLAN is what the
// text does not say (emit.rs, Plan): `ids`, the id the model handed out at
// an op (`new-async-id`, `next-tick`, `next-tick-body`, `napi-async-init`,
// `set-timeout`), by the op's index; `napi`, for each `close-outer` by its
// index, the index of the `callback-scope` it closes, which is opened as an
// N-API callback scope; `timers`, for each `timer` that starts a
// processTimers call, by its index, how many `timer` ops the call has.
//
// A frame (a native scope, a JS frame, a tick's or a microtask's callback,
// the main script) is one call of frame(), which runs the ops up to the one
// that ends it and returns: the nesting is in node's call stack while the
// program runs (the harness gives node a large stack), not in its source.
// Each frame has a record, `closed` once that op ran. An uncaught exception
// unwinds a make-callback's or the main script's frame before its close ran:
// the close is then the next op, taken without running anything
// (takeClose: no marker, nothing runs in between).

let S = ''; // the trace
let pc = 0; // offset in S of the next op
let opIndex = 0; // its index in the trace
let plan = { ids: {}, napi: {}, timers: {} };
let mainFrame = null;
let moduleEntry = false; // the trace has `entry-module`: program.mjs

function record(kind) {
  return { kind, closed: false, early: false, ended: false };
}

function nextOp() {
  const nl = S.indexOf('\n', pc);
  const end = nl < 0 ? S.length : nl;
  const line = S.slice(pc, end);
  pc = end + 1;
  return [opIndex++, line];
}

// The frame's close did not run (an uncaught exception ended its callback):
// it is the next op; take it.
function takeClose(self) {
  if (!self.closed && pc < S.length) {
    nextOp();
    self.closed = true;
  }
}

// The body of a tick's ('body') or a microtask's callback. When an uncaught exception
// ended the main script before its close ran, the callback runs in that
// close (StartExecution's scope closing): the close is done. Not while
// the uncaughtException listener runs: V8 reports the main script's
// exception once its JS frames have unwound (mainFrame.ended is already
// set), and a callback run from the listener is the listener's.
let listening = 0;
function bodyFrame(kind = 'body', derived = undefined) {
  if (mainFrame.ended && listening === 0) takeClose(mainFrame);
  const f = record(kind);
  f.derived = derived; // a reaction's derived promise
  frame(f);
}

function callbackScope(i, t) {
  const global = t[3] === 'global';
  const n = num(t[global ? 4 : 3]);
  const f = record('callback-scope');
  const fn = () => frame(f);
  if (napiScopes.has(i)) {
    // Closed out of order later (close-outer): an N-API callback scope.
    napiFrames.set(i, f);
    addon.napiScope(napiEnv, napiContext(I(+t[1]), I(+t[2]), R(n)), i, fn);
    return;
  }
  if (global) {
    // The Global's key in the addon is the resource's number.
    addon.globalCallbackScope(I(+t[1]), I(+t[2]), R(n), fn, n);
  } else {
    addon.callbackScope(I(+t[1]), I(+t[2]), R(n), fn);
  }
  takeClose(f);
}

function plain(i, t, self) {
  switch (t[0]) {
    case 'no-force-async-hooks-checks': break; // node's command line has it
    case 'entry-module': break; // the program is an .mjs file
    case 'node-version': break; // the binary's own node version
    case 'unhandled-rejections': unhandledRejections(t.slice(2)); break;
    case 'abort-on-uncaught-exception': break; // node's command line has it
    case 'create-hook': createHook(t[1], t[2] === 'none' ? [] : t.slice(2)); break;
    case 'enable-hook': hooks.get(t[1]).enable(); break;
    case 'disable-hook': hooks.get(t[1]).disable(); break;
    case 'emit-init': iah.emitInit(I(+t[1]), t[2], I(+t[3]), res(t[4])); break;
    case 'emit-before': iah.emitBefore(I(+t[1]), I(+t[2]), res(t[3])); break;
    case 'emit-after': iah.emitAfter(I(+t[1])); break;
    case 'emit-destroy': iah.emitDestroy(I(+t[1])); break;
    case 'next-tick': nextTick(plan.ids[i], t[1] === 'resource'); break;
    case 'next-tick-body': nextTickBody(plan.ids[i]); break;
    case 'queue-microtask': microtask(false); break;
    case 'promise-then': microtask(true); break;
    case 'promise-reject': rejectUnhandled(); break;
    case 'promise-catch': catchRejected(); break;
    case 'queue-microtask-body': microtaskBody(false); break;
    case 'promise-then-body': microtaskBody(true); break;
    case 'tick-callback': process._tickCallback(); break;
    case 'execution-async-id': see(`executionAsyncId = ${eid()}`); break;
    case 'trigger-async-id': see(`triggerAsyncId = ${tid()}`); break;
    case 'execution-async-resource':
      see(`executionAsyncResource = ${nameOf(iah.executionAsyncResource())}`);
      break;
    case 'default-trigger-async-id':
      see(`getDefaultTriggerAsyncId = ${iah.getDefaultTriggerAsyncId()}`);
      break;
    case 'new-async-id': {
      const v = iah.newAsyncId();
      see(`newAsyncId = ${v}`);
      assign(plan.ids[i], v);
      break;
    }
    case 'uncaught-exception': {
      // Reported while the make-callback is open, as for a MakeCallback
      // from the event loop, where no JS frame catches it.
      if (self.kind === 'make-callback') addon.reportUncaught();
      const at = catcher(self);
      if (at.kind === 'reaction') {
        // It rejects the reaction's derived promise, reported later to
        // the unhandledRejection listener: no uncaught-exception handler.
        listenForRejections();
        rejected.push(at.derived);
        throw new Error('scopecheck: thrown in a reaction');
      }
      // Out of an ES module's body: it rejects the module's evaluation,
      // which the loader reports jobs later; the body's job is over and no
      // `close` of the main script follows (takeClose must not take the
      // next op for it).
      if (at === mainFrame && moduleEntry) mainFrame.closed = true;
      uncaught(t[1] === 'handled');
      break;
    }
    case 'uncaught-exception-listener': {
      // As `uncaught-exception handled`, and the listener runs the ops up
      // to `end-listener` (the model refuses another throw inside it); a
      // listener stays on after it, as the model's handled one does.
      if (self.kind === 'make-callback') addon.reportUncaught();
      process.removeAllListeners('uncaughtException');
      const f = record('listener');
      let first = true;
      process.on('uncaughtException', () => {
        if (first) {
          first = false;
          listening++;
          try {
            frame(f);
          } finally {
            listening--;
          }
        }
      });
      throw new Error('scopecheck: uncaught exception');
    }
    case 'clear-async-id-stack': iah.clearAsyncIdStack(); break;
    // The exception a bare make-callback handed back: bareMakeCallback()
    // has caught it already.
    case 'catch': break;
    case 'reset-global': addon.resetGlobal(num(t[1])); break;
    case 'async-resource': captureFrame(num(t[1])); break;
    case 'napi-async-init': napiAsyncInit(plan.ids[i], num(t[1])); break;
    case 'set-timeout': setTimeoutOp(plan.ids[i]); break;
    case 'clear-timeout': clearTimeoutOp(+t[1]); break;
    case 'als-default': // a header op: before any other op names A<n>
      storages.set(num(t[1]), new asyncHooks.AsyncLocalStorage({ defaultValue: +t[2] }));
      break;
    case 'als-enter-with': A(num(t[1])).enterWith(+t[2]); break;
    case 'als-disable': A(num(t[1])).disable(); break;
    case 'als-get-store': {
      const v = A(num(t[1])).getStore();
      see(`${t[1]}.getStore() = ${v === undefined ? 'undefined' : v}`);
      break;
    }
    default: throw new Error('scopecheck runtime: unknown op ' + t.join(' '));
  }
}

// Run ops until the op that ends frame `self` (and return after it) or the
// end of the trace. An N-API scope closed out of order (`early`) returns as
// soon as the frames inside it have ended: the ops after them belong to the
// frame around it.
const open = []; // the frames running now, innermost last

// Where an exception thrown in frame `self` goes: out of the tick callbacks
// that process._tickCallback() ran and the JS frames around them, to the
// frame that called it (model/src/env/exceptions.rs, caught_by_microtask).
function catcher(self) {
  let k = open.lastIndexOf(self);
  while (k > 0 && self.kind === 'body' && (open[k].kind === 'body' || open[k].kind === 'js')) k--;
  return open[k];
}

function frame(self) {
  open.push(self);
  try {
    frameOps(self);
  } finally {
    open.pop();
  }
}

function frameOps(self) {
  while (pc < S.length) {
    if (self.early) return;
    const [i, line] = nextOp();
    W(`${line} # ${i}`);
    const t = line.split(' ');
    switch (t[0]) {
      case 'callback-scope':
        callbackScope(i, t);
        break;
      case 'make-callback': {
        const f = record('make-callback');
        // `bare`: the addon holds no TryCatch of its own and this JS is its
        // caller. From the event loop there is no JS below to be its caller:
        // V8 reports the exception at once, as through the addon's
        // TryCatch made verbose (`uncaught-exception`, reportUncaught).
        if (t.includes('bare') && self.kind !== 'event loop') {
          bareMakeCallback(t, f);
          break;
        }
        addon.makeCallback(I(+t[1]), I(+t[2]), R(num(t[3])), () => frame(f));
        takeClose(f);
        break;
      }
      case 'napi-make-callback': {
        const f = record('napi-make-callback');
        napiMakeCallback(num(t[1]), () => frame(f));
        takeClose(f);
        break;
      }
      case 'close-outer': {
        const key = plan.napi[i];
        napiFrames.get(key).early = true;
        addon.napiClose(napiEnv, key);
        break;
      }
      case 'timer':
        timerOp(i);
        break;
      case 'timers-scope':
        timersFrame = record('timers');
        timersBinding.scheduleTimer(TIMERS_DUE);
        addon.runTimers(TIMERS_DUE);
        timersFrame = null;
        break;
      case 'run-in-async-scope': {
        const f = record('js');
        rias(num(t[3]), I(+t[1]), I(+t[2]), () => frame(f));
        takeClose(f);
        break;
      }
      case 'default-trigger-scope': {
        const f = record('js');
        iah.defaultTriggerAsyncIdScope(I(+t[1]), () => frame(f));
        takeClose(f);
        break;
      }
      case 'als-run':
      case 'als-exit': {
        const f = record('js');
        const a = A(num(t[1]));
        if (t[0] === 'als-run') a.run(+t[2], () => frame(f));
        else a.exit(() => frame(f));
        takeClose(f);
        break;
      }
      case 'close':
        self.closed = true;
        // `close threw` on a make-callback: the callback throws into its
        // caller. (A callback-scope's is already failed by its TryCatch.)
        if (t[1] === 'threw' && (self.kind === 'make-callback' || self.kind === 'napi-make-callback')) {
          self.threw = true;
          throw new Thrown('close threw');
        }
        return;
      case 'end-run-in-async-scope':
      case 'end-default-trigger-scope':
      case 'end-als-run':
      case 'end-tick':
      case 'end-microtask':
      case 'end-listener':
      case 'end-timer':
        // The frame's function returns (for a tick or a microtask, what the
        // run or the checkpoint does next is this op's).
        self.closed = true;
        return;
      default:
        plain(i, t, self);
    }
  }
}

// Run the trace: the main script's ops now; those after the close of the
// main script's scope from the event loop (addon.afterMain, registered
// first so that they run even if the main script throws), outside any scope.
// eslint-disable-next-line no-unused-vars
function runTrace(trace, p) {
  S = trace;
  plan = p;
  const has = (op) => new RegExp(`^${op}$`, 'm').test(S);
  moduleEntry = has('entry-module(?: tla)?');
  if (moduleEntry) {
    // An ES module entry runs Node's ESM loader, whose promises settle
    // around the module body; the model has no promises, and the CommonJS
    // programs make none: async_hooks' promise tracking is switched off
    // (updatePromiseHookMode gets its hooks from this createHook).
    require('internal/promise_hooks').createHook = () => () => {};
  }
  for (const key of Object.values(plan.napi)) napiScopes.add(key);
  if (napiScopes.size > 0 || has('napi-async-init R[0-9]+')) {
    napi = require(NAPI_PATH);
    napiEnv = napi.env();
  }
  if (has('timers-scope') || has('set-timeout')) installTimers();
  mainFrame = record('main');
  addon.loopMarker();
  addon.afterMain(() => {
    takeClose(mainFrame);
    frame(record('event loop'));
  });
  W('# start');
  try {
    frame(mainFrame);
  } finally {
    mainFrame.ended = true;
  }
}

// ---- this program's trace ----
