'use strict';
// scopecheck conformance runtime: the prologue of every program a trace
// becomes (src/conform/translate.rs appends the trace's own code after it).
// Run as `node --no-deprecation --expose-internals program.js`.
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
const aw = (() => {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    return require('internal/test/binding').internalBinding('async_wrap');
  } finally {
    process.emitWarning = emitWarning;
  }
})();
const addon = require(ADDON_PATH);

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

const tickCallbacks = new WeakSet();
function nameOf(r) {
  if (r === undefined) return 'undefined';
  if (r === topLevelResource) return 'top';
  if (r === mainResource) return 'main';
  const name = resourceNames.get(r);
  if (name !== undefined) return name;
  if (r !== null && typeof r === 'object' && tickCallbacks.has(r.callback)) {
    return 'tick:' + r[async_id_symbol];
  }
  if (r instanceof Immediate) return 'immediate:' + r[timer_async_id_symbol];
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

function nextTick(model, queryResource) {
  let id;
  const cb = () => {
    const line = { k: 'tick', id, e: eid(), t: tid() };
    if (queryResource) line.r = nameOf(iah.executionAsyncResource());
    W(line);
  };
  tickCallbacks.add(cb);
  process.nextTick(cb);
  // nextTick took newAsyncId(): the counter is now the tick's id.
  id = aw.async_id_fields[K.kAsyncIdCounter];
  assign(model, id);
}

const runInAsyncScope = asyncHooks.AsyncResource.prototype.runInAsyncScope;
// AsyncResource.prototype.runInAsyncScope on the trace's resource object,
// given the AsyncResource's two id fields.
function rias(n, asyncId, triggerAsyncId, fn) {
  const r = R(n);
  r[async_id_symbol] = asyncId;
  r[trigger_async_id_symbol] = triggerAsyncId;
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

// The prologue's own resources (the process.stderr stream) took ids: put the
// counter back to where a fresh main script has it (1), so that the trace's
// newAsyncId() and ticks get the model's numbers. The ids renaming below
// still covers any id Node takes on its own later.
aw.async_id_fields[K.kAsyncIdCounter] = 1;

addon.loopMarker();
// The trace's ops after the end of the main script, if any, are the
// function declaration `afterMainScript` at the end of the file (hoisted, so
// it is registered even if the main script throws).
if (typeof afterMainScript === 'function') addon.afterMain(afterMainScript);
W({ k: 'start' });

// ---- the trace ----
