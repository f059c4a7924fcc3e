'use strict';
// scopecheck's stand-in for Node's test/common, for the proof that the
// exported tests are real (src/export/proof.rs); never exported. It has what
// the exported tests use, with the meaning Node's test/common/index.js gives
// it: buildType, mustCall, mustNotCall, nodeProcessAborted; and what that
// file checks of every test as it exits: each mustCall's count, and that
// the test leaked no global.

const assert = require('assert');

const buildType = 'Release';
const mustCallChecks = [];

// The enumerable globals there are as the test begins. Node's common keeps
// a list of the values it knows (knownGlobals) and, on 'exit', fails a
// test that added any other; here they are compared by name, which reads
// no global's getter.
const knownGlobals = new Set();
for (const name in globalThis) knownGlobals.add(name);
process.on('exit', () => {
  const leaked = [];
  for (const name in globalThis) {
    if (!knownGlobals.has(name)) leaked.push(name);
  }
  if (leaked.length > 0) {
    assert.fail(`Unexpected global(s) found: ${leaked.join(', ')}`);
  }
});

function runCallChecks(exitCode) {
  if (exitCode !== 0) return;
  const failed = mustCallChecks.filter((c) => c.actual !== c.exact);
  for (const c of failed) {
    console.error(`Mismatched ${c.name} function calls. Expected exactly ` +
                  `${c.exact}, actual ${c.actual}.\n${c.stack}`);
  }
  if (failed.length) process.exit(1);
}

function mustCall(fn, exact = 1) {
  if (process._exiting) {
    throw new Error('Cannot use common.mustCall*() in process exit handler');
  }
  if (typeof fn === 'number') {
    exact = fn;
    fn = () => {};
  } else if (fn === undefined) {
    fn = () => {};
  }
  if (mustCallChecks.length === 0) process.on('exit', runCallChecks);
  const context = {
    exact,
    actual: 0,
    name: fn.name || '<anonymous>',
    stack: new Error().stack.split('\n').slice(2).join('\n'),
  };
  mustCallChecks.push(context);
  return function(...args) {
    context.actual++;
    return fn.apply(this, args);
  };
}

function mustNotCall(msg) {
  return function mustNotCall() {
    assert.fail(msg || 'function should not have been called');
  };
}

// Whether a child ended as a node process that aborted: Node's own
// test/common/index.js nodeProcessAborted (v20.20.2 and v26.12.1 alike),
// without its Windows exit codes. The signal is SIGILL, SIGTRAP or SIGABRT
// (by compiler); a shell reports the same abort as exit code 132, 133 or
// 134.
function nodeProcessAborted(exitCode, signal) {
  const expectedExitCodes = [132, 133, 134];
  const expectedSignals = ['SIGILL', 'SIGTRAP', 'SIGABRT'];
  if (signal !== null) {
    return expectedSignals.includes(signal);
  }
  return expectedExitCodes.includes(exitCode);
}

module.exports = { buildType, mustCall, mustNotCall, nodeProcessAborted };
