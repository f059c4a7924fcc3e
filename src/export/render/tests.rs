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
    let body = "binding.callbackScope(r1, 1005, 1, common.mustCall(() => {\n  assert.strictEqual(executionAsyncId(), 1005);\n  assert.strictEqual(executionAsyncResource(), r1);\n}));\nassert.strictEqual(triggerAsyncId(), 0);\n";
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
    assert!(t.source.contains("emitBefore(1002, 1);\nconst id1 = nextAsyncId();\nprocess.nextTick(common.mustCall(() => {\n  assert.strictEqual(executionAsyncId(), id1);\n  assert.strictEqual(triggerAsyncId(), 1002);\n}));\nemitAfter(1002);\n"), "{}", t.source);
    // A handed-out id the trace names afterwards is Node's.
    let t = write(
        "new-async-id\nemit-before 2 1\nexecution-async-id\nemit-after 2",
        NodeVersion::V20,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(t.source.contains("const id1 = nextAsyncId();\nassert.strictEqual(newAsyncId(), id1);\nemitBefore(id1, 1);\nassert.strictEqual(executionAsyncId(), id1);\nemitAfter(id1);"), "{}", t.source);
    assert!(!t.source.contains("while (newAsyncId()"), "{}", t.source);
}

#[test]
fn the_hooks_record_only_the_tests_own_ids_and_each_of_nodes_is_read_before_it_is_handed_out() {
    let t = write(
        "create-hook H1 init before after\nenable-hook H1\nemit-before 7 1\nnext-tick-body\nnew-async-id\nemit-after 7\nclose",
        NodeVersion::V26,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    // The trace's 7 is 1007; test/common's ids lie below 1000.
    assert!(
        t.source
            .contains("assert.ok(newAsyncId() < 1000);\nwhile (newAsyncId() < 1007);\n"),
        "{}",
        t.source
    );
    assert!(
        t.source.contains("const ownIds = new Set([0, 1, 1007]);\n"),
        "{}",
        t.source
    );
    assert!(
        t.source
            .contains("  const id = newAsyncId() + 1;\n  ownIds.add(id);\n  return id;\n"),
        "{}",
        t.source
    );
    assert!(
        t.source.contains("      if (!ownIds.has(id)) return;\n"),
        "{}",
        t.source
    );
    // The tick's id and newAsyncId()'s, each read just before.
    assert!(t.source.contains("const id1 = nextAsyncId();\nprocess.nextTick(common.mustCall(() => {\n  assert.deepStrictEqual(calls.splice(0), [\n    ['hook1', 'before', id1, id1, 1007],\n  ]);"), "{}", t.source);
    assert!(t.source.contains("  ['hook1', 'init', id1, 'TickObject', 1007, 'TickObject', 1007, 1],\n]);\nconst id2 = nextAsyncId();\nassert.strictEqual(newAsyncId(), id2);\nemitAfter(1007);\n"), "{}", t.source);
    assert!(!t.source.contains("firstId"), "{}", t.source);
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
    assert!(t.source.contains("assert.ok(newAsyncId() < 1000);\nwhile (newAsyncId() < 1002);\n// The id Node hands out next, read just before it does: the test reads\n// each id Node hands out to it so, and ids taken by others change nothing.\nfunction nextAsyncId() {\n  return newAsyncId() + 1;\n}\n"), "{}", t.source);
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
            expected: "1008".to_string()
        })
    );
    assert!(t.source.contains("  process._rawDebug('heartbeat: still alive');\n  emitAfter(1008);\n} else {\n  spawnSyncAndExit(process.execPath, ['--expose-internals', __filename, 'child'], {\n    status: 1,\n    signal: null,\n    stderr: /heartbeat: still alive\\n[^]*async hook stack has become corrupted \\(actual: 1, expected: 1008\\)/,\n  });\n}\n"), "{}", t.source);
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
    assert!(t.source.contains("binding.heapCallbackScope(r1, 1005, 1, 0, common.mustCall(() => {\n  binding.callbackScope(r2, 1005, 1007, common.mustCall(() => {\n    binding.deleteCallbackScope(0);\n    expectSame(executionAsyncId(), 1005);\n    // executionAsyncResource() would read freed memory here: not called.\n  }));\n}));\nexpectSame(executionAsyncId(), 1);"), "{}", t.source);
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
    assert!(t.source.contains("  Promise.reject(new Error('rejected'));\n  process._tickCallback();\n  assert.deepStrictEqual(calls.splice(0), [\n    ['unhandledRejection', 1005, 1],\n  ]);\n  assert.strictEqual(executionAsyncId(), 1005);"), "{}", t.source);
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
    assert!(t.source.contains("        assert.strictEqual(triggerAsyncId(), 1005);\n        throw new Error('rejects the derived promise');\n      }));\n      process._tickCallback();\n    }));"), "{}", t.source);
    assert!(!t.source.contains("uncaughtException"), "{}", t.source);
    // The next job's read is in its own callback, the scope's after it.
    assert!(t.source.contains("      id1 = nextAsyncId();\n      process.nextTick(common.mustCall(() => {\n        assert.strictEqual(executionAsyncId(), id1);"), "{}", t.source);
    assert!(t.source.contains("    queueMicrotask(common.mustCall(() => {\n      assert.strictEqual(executionAsyncId(), id1);\n      assert.strictEqual(triggerAsyncId(), 1005);\n      assert.strictEqual(executionAsyncId(), id1);\n    }));\n    process._tickCallback();\n    assert.deepStrictEqual(calls.splice(0), [\n      ['unhandledRejection', id1, 1005],\n    ]);\n    assert.strictEqual(executionAsyncId(), id1);"), "{}", t.source);
}

#[test]
fn a_tick_that_throws_ends_its_callback_and_the_test_goes_on_after_the_close() {
    let t = write(
        "next-tick-body\nclose\n  uncaught-exception handled\ncallback-scope 0 0 R1\n  execution-async-id\nclose",
        NodeVersion::V20,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(t.ending.is_none());
    assert!(t.source.contains("const id1 = nextAsyncId();\nprocess.nextTick(common.mustCall(() => {\n  assert.strictEqual(executionAsyncId(), id1);\n  assert.strictEqual(triggerAsyncId(), 1);\n  process.once('uncaughtException', common.mustCall());\n  throw new Error('uncaught');\n}));\nbinding.runFromEventLoop(common.mustCall(() => {\n  binding.callbackScope(r1, 0, 0, common.mustCall(() => {\n    assert.strictEqual(executionAsyncId(), 0);"), "{}", t.source);
}

#[test]
fn a_resource_captures_the_frame_where_the_model_says() {
    let t = write(
        "als-run A1 5\n  async-resource R3\nend-als-run\nrun-in-async-scope 9 1 R3\n  als-get-store A1\nend-run-in-async-scope\nals-run A1 6\n  run-in-async-scope 10 1 R2\n    als-get-store A1\n  end-run-in-async-scope\nend-als-run",
        NodeVersion::V26,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(t.source.contains("  r3[contextFrameSymbol] = AsyncContextFrame.current();\n}));\nrunInAsyncScope(r3, 1009, 1, common.mustCall(() => {\n  assert.strictEqual(als1.getStore(), 5);"), "{}", t.source);
    // R2 was never made: it captures the frame at its runInAsyncScope.
    assert!(t.source.contains("  r2[contextFrameSymbol] = AsyncContextFrame.current();\n  runInAsyncScope(r2, 1010, 1, common.mustCall(() => {\n    assert.strictEqual(als1.getStore(), 6);"), "{}", t.source);
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
    assert!(t.source.contains("const entry = __filename.replace(/\\.js$/, '.mjs');\nspawnSyncAndExitWithoutError(process.execPath, [entry]);\n"), "{}", t.source);
    let fixture = t.fixture.unwrap_or_default();
    assert!(
        fixture.contains("import * as common from '../../common/index.mjs';"),
        "{fixture}"
    );
    assert!(fixture.contains("binding.callbackScope(r1, 1005, 1, common.mustCall(() => {\n  assert.strictEqual(executionAsyncId(), 1005);\n}));"), "{fixture}");
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
    assert!(t.source.contains("als1.run(5, common.mustCall(() => {\n  id1 = nextAsyncId();\n  napi.asyncInit(r1);\n}));\nals1.run(6, common.mustCall(() => {\n  assert.strictEqual(napi.makeCallback(r1, common.mustCall(() => {\n    assert.strictEqual(als1.getStore(), 5);\n    assert.strictEqual(executionAsyncId(), id1);\n    return 'returned';\n  })), 'returned');\n  napi.makeCallback(r1, common.mustCall(() => {\n    throw new Error('the callback throws');\n  }));\n}));\n"), "{}", t.source);
}

#[test]
fn an_es_module_that_needs_the_addon_and_dies_is_checked_by_its_runner() {
    let text = "entry-module\ncallback-scope 5 1 R1\nemit-before 7 5 R2\nclose";
    for version in [NodeVersion::V20, NodeVersion::V26] {
        let t = write(text, version).unwrap();
        let fixture = t.fixture.as_deref().expect("an .mjs fixture");
        assert!(
            t.source.contains("spawnSyncAndExit(process.execPath, ['--expose-internals', entry], {\n  status: 1,\n  signal: null,\n"),
            "{}",
            t.source
        );
        assert!(
            t.source
                .contains("corrupted \\(actual: 1007, expected: 1005\\)"),
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
        assert!(
            src.contains(".on('exit', common.mustCall((code) => assert.strictEqual(code, 0)));")
        );
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

#[test]
fn a_timeout_is_an_unrefd_set_timeout_whose_callback_run_timeouts_runs() {
    // Two Timeouts run by one processTimers call (the second `timer` right
    // after the first's `end-timer`), a third never run, one cleared.
    let t = write(
        "set-timeout\nset-timeout\nset-timeout\nset-timeout\nclear-timeout 5\nclose\n\
         timers-scope\n  timer\n    execution-async-resource\n  end-timer\n  timer\n  end-timer\n\
         close",
        NodeVersion::V26,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    let source = &t.source;
    // A callback checks the ids it sees as it begins; one never run is
    // common.mustNotCall(). Only the Timeouts the test names again are bound (consts
    // in the main script): the second, which runTimeouts names, and the
    // fourth, cleared.
    assert!(
        source.contains("\nconst id1 = nextAsyncId();\nsetTimeout(common.mustCall(() => {\n  assert.strictEqual(executionAsyncId(), id1);\n  assert.strictEqual(triggerAsyncId(), 1);\n  assert.strictEqual(executionAsyncResource()[timer_async_id_symbol], id1);\n}), 1e9 + 1).unref();\n"),
        "{source}"
    );
    assert!(
        source.contains("\nsetTimeout(common.mustNotCall(), 1e9 + 3).unref();\nconst timeout4 = setTimeout(common.mustNotCall(), 1e9 + 4).unref();\n"),
        "{source}"
    );
    assert!(
        source.contains("const timeout2 = setTimeout(common.mustCall(() => {\n")
            && source.contains("clearTimeout(timeout4.ref());")
            && !source.contains("timeout1")
            && !source.contains("timeout3"),
        "{source}"
    );
    // One call runs the first two: its line names the last of them.
    assert!(
        source
            .contains("inTimersScope(common.mustCall(() => {\n    runTimeouts(timeout2);\n  }));"),
        "{source}"
    );
    assert!(
        source.contains("function runTimeouts(last) {")
            && source.contains(
                "const { async_id_symbol: timer_async_id_symbol, getTimerCallbacks } = require('internal/timers');"
            ),
        "{source}"
    );
}

#[test]
fn an_abort_at_an_uncaught_exception_is_a_child_with_the_flag_that_node_process_aborted_checks() {
    let t = write(
        "abort-on-uncaught-exception\nset-timeout\nclose\ntimers-scope\n  timer\n    \
         uncaught-exception unhandled",
        NodeVersion::V26,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    let source = &t.source;
    // The flag is the child's, not the test's own.
    assert!(
        source.starts_with("// Flags: --expose-internals\n"),
        "{source}"
    );
    assert!(
        source.contains(
            "'--expose-internals', '--abort-on-uncaught-exception', __filename, 'child',"
        ),
        "{source}"
    );
    assert!(
        source.contains("  ], {\n    stderr: /heartbeat: still alive\\n[^]*Uncaught Error: /,\n  });\n  assert.ok(common.nodeProcessAborted(child.status, child.signal));\n}\n"),
        "{source}"
    );
}
