'use strict';
// scopecheck's stand-in for Node's test/common/child_process.js, for the
// proof that the exported tests are real (src/export/proof.rs); never
// exported. It has the helpers the exported tests use, with the meaning
// Node's gives them: spawnSync(...args), then each expectation given
// (status, signal, then stderr and stdout: a RegExp to match, a string to
// equal, or a function that throws when they are wrong, trimmed first with
// `trim: true`); on a mismatch it prints the child's output and throws,
// else it returns { child, stderr, stdout }.

const { spawnSync } = require('child_process');
const util = require('util');

function mismatch(text, check) {
  if (check instanceof RegExp) {
    return check.test(text) ? null : `did not match ${util.inspect(check)}`;
  }
  if (typeof check === 'string') {
    return check === text ? null : `did not match ${util.inspect(check)}`;
  }
  try {
    check(text);
    return null;
  } catch (error) {
    return `did not match expectation, checker throws:\n${util.inspect(error)}`;
  }
}

function expectSyncExit(caller, spawnArgs, expectations) {
  const { status, signal, stderr, stdout, trim = false } = expectations;
  const child = spawnSync(...spawnArgs);
  const failures = [];
  if (status !== undefined && child.status !== status) {
    failures.push(`- process terminated with status ${child.status}, expected ${status}`);
  }
  if (signal !== undefined && child.signal !== signal) {
    failures.push(`- process terminated with signal ${child.signal}, expected ${signal}`);
  }
  const stderrText = child.stderr.toString();
  const stdoutText = child.stdout.toString();
  if (failures.length === 0) {
    for (const [name, text, check] of [['stderr', stderrText, stderr],
                                       ['stdout', stdoutText, stdout]]) {
      if (check === undefined) continue;
      const reason = mismatch(trim ? text.trim() : text, check);
      if (reason !== null) failures.push(`- ${name} ${reason}`);
    }
  }
  if (failures.length !== 0) {
    console.error(`[process ${child.pid}]: --- stderr ---\n${stderrText}`);
    console.error(`[process ${child.pid}]: --- stdout ---\n${stdoutText}`);
    console.error(`[process ${child.pid}]: status = ${child.status}, signal = ${child.signal}`);
    const error = new Error(failures.join('\n'));
    Error.captureStackTrace(error, caller);
    throw error;
  }
  return { child, stderr: stderrText, stdout: stdoutText };
}

function spawnSyncAndExit(...args) {
  const expectations = args.pop();
  return expectSyncExit(spawnSyncAndExit, args, expectations);
}

function spawnSyncAndExitWithoutError(...args) {
  return expectSyncExit(spawnSyncAndExitWithoutError, args, { status: 0, signal: null });
}

function spawnSyncAndAssert(...args) {
  const expectations = args.pop();
  return expectSyncExit(spawnSyncAndAssert, args, { status: 0, signal: null, ...expectations });
}

module.exports = { spawnSyncAndAssert, spawnSyncAndExit, spawnSyncAndExitWithoutError };
