'use strict';
// scopecheck conformance runtime: the prologue of every program a trace
// becomes, and the interpreter that runs the trace. src/conform/translate.rs
// appends one line, `runTrace(STEPS, MAIN_CLOSE);`: STEPS is a string with one
// step per op of the trace (see "The steps" below), so that the program's size
// is linear in the trace and its source nests nothing, however deep the trace.
// Run as `node --no-deprecation --expose-internals program.js`; for a trace
// whose entry is an ES module (`entry-module`), the translator writes
// program.mjs, which starts with `const require = createRequire(...)`.
//
// Rules this file keeps, so that only the trace's ops touch async context:
// * everything is required, and every object Node would create lazily
//   (process.stderr, the promise-hook module, timers) exists, before any hook
//   is enabled;
// * nothing here creates an async resource: no console, no timers, no
//   promises, no streams after the prologue;
// * every observation is one JSON line written synchronously to fd 1 with
//   fs.writeSync, as it happens, so that a crash leaves everything before it.

const fs = require('fs');
const asyncHooks = require('async_hooks');
const iah = require('internal/async_hooks');
require('internal/promise_hooks'); // AsyncHook.enable -> updatePromiseHookMode
require('timers'); // onGlobalUncaughtException -> setImmediate
const { Immediate, async_id_symbol: timer_async_id_symbol } = require('internal/timers');
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
  fs.writeSync(1, JSON.stringify(line) + '\n');
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

// The body of a tick or microtask callback: the steps up to its `et` /
// `emt`, as a frame. An uncaught exception ended the main script before its
// close step (`xU`) ran: the callback runs in that Close, so that step is
// done. It runs inside whatever ran it, so the index of the last close that
// ran is put back when it is done.
function bodyFrame() {
  if (opIndex === mainCloseIndex && closedAt !== mainCloseIndex) {
    nextStep();
    closedAt = mainCloseIndex;
  }
  const saved = closedAt;
  try {
    frame();
  } finally {
    closedAt = saved;
  }
}

const tickCallbacks = new WeakSet();
function microtask(promise) {
  const cb = () => W({ k: 'micro', p: promise ? 1 : 0, e: eid(), t: tid() });
  if (promise) {
    Promise.resolve().then(cb);
  } else {
    queueMicrotask(cb);
  }
}
// `promise-reject`: a promise rejected and never handled. The program's
// `unhandledRejection` listener (added at the first one) writes the ids it
// runs in when processPromiseRejections reports it.
let rejectionListener = false;
function rejectUnhandled() {
  if (!rejectionListener) {
    rejectionListener = true;
    process.on('unhandledRejection', () => W({ k: 'rej', e: eid(), t: tid() }));
  }
  Promise.reject(0);
}
// A microtask with a body: its callback writes what it sees, then runs the
// steps up to its `emt` (end-microtask) as a frame, inside whatever ran the
// checkpoint (a close, `tc`, the `et` of a tick, the `emt` of the microtask
// before), so the index of the last close that ran is put back when it is
// done.
function microtaskBody(promise) {
  const cb = () => {
    W({ k: 'micro', p: promise ? 1 : 0, e: eid(), t: tid() });
    bodyFrame();
  };
  if (promise) {
    Promise.resolve().then(cb);
  } else {
    queueMicrotask(cb);
  }
}
function nameOf(r) {
  if (r === undefined) return 'undefined';
  if (r === topLevelResource) return 'top';
  if (r === mainResource) return 'main';
  if (r === process) return 'process';
  const name = resourceNames.get(r);
  if (name !== undefined) return name;
  if (r !== null && typeof r === 'object' && tickCallbacks.has(r.callback)) {
    return 'tick:' + r[async_id_symbol];
  }
  if (r instanceof Immediate) return 'immediate:' + r[timer_async_id_symbol];
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
// trace writes the model's number, the program uses Node's.
const ids = new Map();
function I(x) {
  return ids.has(x) ? ids.get(x) : x;
}
function assign(model, node) {
  ids.set(model, node);
  W({ k: 'assign', m: model, v: node });
}

const eid = () => iah.executionAsyncId();
const tid = () => iah.triggerAsyncId();

const hooks = new Map();
function createHook(name, callbacks) {
  const fns = {};
  if (callbacks.includes('init')) {
    fns.init = (id, type, trig, r) =>
      W({ k: 'hook', h: name, ev: 'init', id, type, trig, r: nameOf(r), e: eid(), t: tid() });
  }
  for (const ev of ['before', 'after', 'destroy', 'promiseResolve']) {
    if (callbacks.includes(ev)) {
      fns[ev] = (id) => W({ k: 'hook', h: name, ev, id, e: eid(), t: tid() });
    }
  }
  hooks.set(name, asyncHooks.createHook(fns));
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
    if (v !== undefined) W({ k: 'tickstore', id, a: 'A' + n, v });
  }
}

function nextTick(model, queryResource) {
  let id;
  const cb = () => {
    const line = { k: 'tick', id, e: eid(), t: tid() };
    if (queryResource) line.r = nameOf(iah.executionAsyncResource());
    W(line);
    tickStores(id);
  };
  tickCallbacks.add(cb);
  process.nextTick(cb);
  // nextTick took newAsyncId(): the counter is now the tick's id.
  id = aw.async_id_fields[K.kAsyncIdCounter];
  assign(model, id);
}

// A tick with a body: its callback runs the steps up to its `et` (end-tick)
// as a frame. It runs inside whatever ran the tick (a close, `tc`, the `et`
// of the tick before), so the index of the last close that ran is put back
// when it is done.
function nextTickBody(model) {
  let id;
  const cb = () => {
    W({ k: 'tick', id, e: eid(), t: tid() });
    tickStores(id);
    bodyFrame();
  };
  tickCallbacks.add(cb);
  process.nextTick(cb);
  id = aw.async_id_fields[K.kAsyncIdCounter];
  assign(model, id);
}

const runInAsyncScope = asyncHooks.AsyncResource.prototype.runInAsyncScope;
// AsyncResource.prototype.runInAsyncScope on the trace's resource object,
// given the AsyncResource's two id fields.
// `async-resource R`: what `new AsyncResource()` does with the frame on
// Node 26 (`this[contextFrameSymbol] = AsyncContextFrame.current()`), on the
// trace's object R (its ids are the ones runInAsyncScope is given).
const captured = new Set();
function captureFrame(n) {
  R(n)[contextFrameSymbol] = acf.current();
  captured.add(n);
}

// An R that `async-resource` did not make is made here (as `new
// AsyncResource(...).runInAsyncScope(fn)`): on Node 26 it captures the
// current frame.
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

// A make-callback whose callback throws and whose exception a JS caller
// would catch: the addon's TryCatch swallows it.
class Thrown extends Error {}

// N-API callback scopes (`close-outer`): the Node-API module (napi.cc),
// loaded by runTrace when the trace needs it, makes the async contexts and
// hands out its napi_env; the addon opens and closes the scopes with it.
let napi = null;
let napiEnv = null;
// Keys of the N-API scopes closed out of order: their frame() returns as
// soon as the frames inside it have ended.
const closedEarly = new Set();

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

// RunTimers' scope (`timers-scope`): the environment's timers callback (what
// Environment::RunTimers calls in its bare InternalCallbackScope(env,
// process, {0, 0}), in a loop under a verbose TryCatch) is replaced by one
// that runs the trace's steps up to the scope's close while a `timers-scope`
// is open, and is Node's own processTimers otherwise (a fresh one from
// internal/timers' getTimerCallbacks, as bootstrap/node.js makes it; the
// immediate callback is replaced by its fresh twin too). The trace's own JS
// then runs directly in RunTimers' scope: no Timeout object, no emitBefore
// of a timer. After a handled exception RunTimers calls it again, and it
// goes on with the next step.
const TIMERS_DUE = 987654321; // ms: how addon.runTimers finds the handle
let timersBinding = null;
let inTimers = false;
function installTimers() {
  timersBinding = binding('timers');
  const { getTimerCallbacks } = require('internal/timers');
  const { processImmediate, processTimers } = getTimerCallbacks(process._tickCallback);
  timersBinding.setupTimers(processImmediate, (now) => {
    if (!inTimers) return processTimers(now);
    frame();
    return 0;
  });
}

// The prologue's own resources (the process.stderr stream) took ids: put the
// counter back to where a fresh main script has it (1), so that the trace's
// newAsyncId() and ticks get the model's numbers. The ids renaming below
// still covers any id Node takes on its own later.
aw.async_id_fields[K.kAsyncIdCounter] = 1;

// ---- the steps ----
//
// One line per op of the trace, in order; op i is line i. Ids are the
// model's numbers (mapped with I() when used), resources are R<n>'s n, `-` is
// "none", flags are 1 or 0.
//
//   nf                    --no-force-async-hooks-checks (a node option)
//   ch H CB,CB|-          createHook      eh H / dh H  enable / disable
//   ei ID TYPE TRIG R|-   emitInit (TYPE percent-encoded)
//   eb ID TRIG R|-        emitBefore      ea ID / ed ID  emitAfter / emitDestroy
//   nt MODEL|- QUERY      process.nextTick          tc  process._tickCallback
//   qm / pt               queueMicrotask / Promise.resolve().then, the callback
//                         writes what it sees
//   ntb MODEL|-           process.nextTick with a body: its callback runs the
//                         steps up to its `et` (end-tick) as a frame
//   qmb / ptb             queueMicrotask / Promise.resolve().then with a body:
//                         the callback writes what it sees, then runs the
//                         steps up to its `emt` (end-microtask) as a frame
//   eid tid ear dtid      the queries     new MODEL|-  newAsyncId
//   ue HANDLED            an uncaught exception      cl  clearAsyncIdStack
//   cs ID TRIG R CLOSE    addon.callbackScope, CLOSE the index of its close
//   gs ID TRIG R CLOSE    addon.globalCallbackScope (a Global<Object>* resource,
//                         its key in the addon R's number)
//   rg R                  addon.resetGlobal (Global<Object>::Reset of R's Global)
//   mc ID TRIG R VERBOSE CLOSE  addon.makeCallback
//   ra ID TRIG R CLOSE    runInAsyncScope     dt TRIG CLOSE  defaultTriggerAsyncIdScope
//   ns ID TRIG R KEY      an N-API callback scope (napi_open_callback_scope;
//                         KEY the index of this op), closed by a later `co`
//   co KEY                napi_close_callback_scope of the N-API scope KEY
//                         (close-outer: native scopes inside it are still open)
//   ts                    RunTimers' scope (timers-scope), from depth 0
//   x                     close of a callback-scope (the addon writes its marker)
//   xm / xt / xu          close of a make-callback: plain / threw / after an
//                         uncaught exception in it (no marker)
//   ar A V CLOSE / ax A CLOSE  als.run(V, fn) / als.exit(fn) on storage A<A>
//   aw A V / ag A         als.enterWith(V) / als.getStore()
//   nv V                  node-version (the binary's own profile: nothing)
//   rf R                  async-resource: R captures the current frame
//   xj                    end of a run-in-async-scope, default-trigger-scope,
//                         als-run or als-exit
//   xT                    close of RunTimers' scope
//   xM / xU               close of the main script's scope / after an uncaught
//                         exception in the main script (no marker)
//
// A frame (a native scope, a JS frame, the main script) is one call of
// frame(), which runs the steps up to its close and returns: the nesting is in
// node's call stack while the program runs (the harness gives node a large
// stack), not in its source. An uncaught exception unwinds the frame before
// its close step ran: the caller skips that step (closedAt tells).

let S = ''; // the steps
let pc = 0; // offset in S of the next step
let opIndex = 0; // its index in the trace
let closedAt = -1; // index of the last close step that ran
let mainCloseIndex = -1; // index of the main script's close step, -1 if none

function nextStep() {
  const nl = S.indexOf('\n', pc);
  const end = nl < 0 ? S.length : nl;
  const t = S.slice(pc, end).split(' ');
  pc = end + 1;
  opIndex++;
  return t;
}

// After a frame's call returned: if its close did not run (an uncaught
// exception ended its callback), the close is the next step: skip it.
function afterFrame(close) {
  if (close >= 0 && closedAt !== close) nextStep();
}

const res = (x) => (x === '-' ? undefined : R(+x));
const model = (x) => (x === '-' ? null : +x);

function plain(i, t) {
  W({ op: i });
  switch (t[0]) {
    case 'nf': break; // the option is on node's command line
    case 'em': break; // the program is an .mjs file
    case 'ch': createHook(t[1], t[2] === '-' ? [] : t[2].split(',')); break;
    case 'eh': hooks.get(t[1]).enable(); break;
    case 'dh': hooks.get(t[1]).disable(); break;
    case 'ei': iah.emitInit(I(+t[1]), decodeURIComponent(t[2]), I(+t[3]), res(t[4])); break;
    case 'eb': iah.emitBefore(I(+t[1]), I(+t[2]), res(t[3])); break;
    case 'ea': iah.emitAfter(I(+t[1])); break;
    case 'ed': iah.emitDestroy(I(+t[1])); break;
    case 'nt': nextTick(model(t[1]), t[2] === '1'); break;
    case 'ntb': nextTickBody(model(t[1])); break;
    case 'qm': microtask(false); break;
    case 'pt': microtask(true); break;
    case 'prj': rejectUnhandled(); break;
    case 'qmb': microtaskBody(false); break;
    case 'ptb': microtaskBody(true); break;
    case 'tc': process._tickCallback(); break;
    case 'eid': W({ k: 'eid', v: eid() }); break;
    case 'tid': W({ k: 'tid', v: tid() }); break;
    case 'ear': W({ k: 'ear', r: nameOf(iah.executionAsyncResource()) }); break;
    case 'dtid': W({ k: 'dtid', v: iah.getDefaultTriggerAsyncId() }); break;
    case 'new': {
      const v = iah.newAsyncId();
      W({ k: 'new', v });
      assign(model(t[1]), v);
      break;
    }
    case 'ue': uncaught(t[1] === '1'); break;
    case 'cl': iah.clearAsyncIdStack(); break;
    case 'rg': addon.resetGlobal(+t[1]); break;
    case 'nv': break;
    case 'rf': captureFrame(+t[1]); break;
    case 'aw': A(+t[1]).enterWith(+t[2]); break;
    case 'ag': {
      const v = A(+t[1]).getStore();
      W({ k: 'store', a: 'A' + t[1], v: v === undefined ? null : v });
      break;
    }
    default: throw new Error('scopecheck runtime: unknown step ' + t.join(' '));
  }
}

// Run steps until the close of the current frame (and return after it) or
// the end of the trace. `self` is the key of an N-API scope's frame: once
// that scope has been closed out of order, its frame returns as soon as the
// frames inside it have ended (the ops after them belong to the frame
// around it).
function frame(self) {
  while (pc < S.length) {
    if (self !== undefined && closedEarly.has(self)) return;
    const i = opIndex;
    const t = nextStep();
    switch (t[0]) {
      case 'cs':
        W({ op: i });
        addon.callbackScope(I(+t[1]), I(+t[2]), R(+t[3]), frame, +t[4]);
        afterFrame(+t[4]);
        break;
      case 'gs':
        W({ op: i });
        addon.globalCallbackScope(I(+t[1]), I(+t[2]), R(+t[3]), frame, +t[4], +t[3]);
        afterFrame(+t[4]);
        break;
      case 'mc':
        W({ op: i });
        addon.makeCallback(I(+t[1]), I(+t[2]), R(+t[3]), frame, t[4] === '1');
        afterFrame(+t[5]);
        break;
      case 'ns': {
        W({ op: i });
        const key = +t[4];
        const context = napiContext(I(+t[1]), I(+t[2]), R(+t[3]));
        addon.napiScope(napiEnv, context, key, () => frame(key));
        break;
      }
      case 'co':
        W({ op: i });
        closedEarly.add(+t[1]);
        addon.napiClose(napiEnv, +t[1]);
        break;
      case 'ts':
        W({ op: i });
        inTimers = true;
        timersBinding.scheduleTimer(TIMERS_DUE);
        addon.runTimers(TIMERS_DUE);
        inTimers = false;
        break;
      case 'ra':
        W({ op: i });
        rias(+t[3], I(+t[1]), I(+t[2]), frame);
        afterFrame(+t[4]);
        break;
      case 'dt':
        W({ op: i });
        iah.defaultTriggerAsyncIdScope(I(+t[1]), frame);
        afterFrame(+t[2]);
        break;
      case 'ar':
        W({ op: i });
        A(+t[1]).run(+t[2], frame);
        afterFrame(+t[3]);
        break;
      case 'ax':
        W({ op: i });
        A(+t[1]).exit(frame);
        afterFrame(+t[2]);
        break;
      case 'x':
      case 'xu':
      case 'xU':
        closedAt = i;
        return;
      case 'xm':
      case 'xj':
      case 'xT':
      case 'xM':
        W({ op: i });
        closedAt = i;
        return;
      case 'et':
      case 'emt':
        // The tick's (microtask's) callback returns: what the run (the
        // checkpoint) does next is this op's.
        W({ op: i });
        return;
      case 'xt':
        W({ op: i });
        closedAt = i;
        throw new Thrown('close threw');
      default:
        plain(i, t);
    }
  }
}

// Run the trace: the main script's ops now; those after the close of the main
// script's scope (step mainClose, -1 if none) from the event loop, registered
// first so that they run even if the main script throws.
// `flags`: `m` the entry is an ES module, `n` loads the N-API module, `t`
// installs the timers callback.
// eslint-disable-next-line no-unused-vars
function runTrace(steps, mainClose, flags) {
  S = steps;
  if (flags.includes('m')) {
    // An ES module entry runs Node's ESM loader, whose promises settle
    // around the module body; the model has no promises, and the CommonJS
    // programs make none: async_hooks' promise tracking is switched off
    // (updatePromiseHookMode gets its hooks from this createHook).
    require('internal/promise_hooks').createHook = () => () => {};
  }
  if (flags.includes('n')) {
    napi = require(NAPI_PATH);
    napiEnv = napi.env();
  }
  if (flags.includes('t')) installTimers();
  mainCloseIndex = mainClose;
  addon.loopMarker();
  if (mainClose >= 0) {
    addon.afterMain(() => {
      if (closedAt !== mainClose) nextStep();
      frame();
    });
  }
  W({ k: 'start' });
  frame();
}

// ---- the trace ----
