'use strict';
// scopecheck's stand-in for Node's test/common, for the proof that the
// exported tests are real (src/export/proof.rs); never exported. It has what
// the exported tests use, with the meaning Node's test/common/index.js gives
// it: buildType, mustCall, mustNotCall.

const assert = require('assert');

const buildType = 'Release';
const mustCallChecks = [];

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

module.exports = { buildType, mustCall, mustNotCall };
