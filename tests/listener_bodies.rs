//! The `uncaughtException` listener with a body (`uncaught-exception-listener`
//! ... `end-listener`): what the model refuses and where the handler's steps
//! fall around the listener. The binaries' side is in the scenarios
//! (`tests/scenarios/uncaught-exception-listener-*`).

use crate::microtask_bodies::{impossible as refusal, run};

/// The handler emits the event before `setImmediate(noop)` and the `after`
/// loop (lib/internal/process/execution.js): the throw answers nothing, and
/// `end-listener` answers the Immediate's init and the `after` of every
/// entry left, innermost first.
#[test]
fn the_handler_makes_its_immediate_and_runs_the_after_loop_once_the_listener_returns() {
    let (env, answers) = run("
        create-hook H1 init after
        enable-hook H1
        callback-scope 5 1 R1
          uncaught-exception-listener
          execution-async-id
          end-listener
        ");
    let text = |i: usize| -> Vec<String> {
        (answers[i]
            .as_ref()
            .unwrap_or_else(|e| panic!("op {i}: {e:?}")))
        .iter()
        .map(|o| o.to_string())
        .collect()
    };
    assert!(text(3).is_empty(), "{:?}", text(3));
    assert_eq!(text(4), ["executionAsyncId = 5"]);
    let after = text(5);
    assert_eq!(after.len(), 3, "{after:?}");
    assert!(after[0].starts_with("H1.init(") && after[0].contains("Immediate"));
    assert_eq!(
        &after[1..],
        ["H1.after(5) in [5, 1]", "H1.after(1) in [1, 0]"]
    );
    assert!(!env.exited);
}

/// Another exception while the listener runs, a listener body for a
/// tick's exception, a `close` of the scope below, and `end-listener`
/// without one: each refused, saying why.
#[test]
fn what_the_listener_cannot_do_is_refused_with_the_reason() {
    let (_, answers) = run("
        callback-scope 5 1 R1
          uncaught-exception-listener
          uncaught-exception handled
          callback-scope 6 5 R2
            uncaught-exception-listener
          close
          close
        ");
    assert!(answers[1].is_ok(), "{answers:?}");
    assert!(refusal(&answers[2]).contains("the uncaughtException listener is running"));
    assert!(refusal(&answers[4]).contains("the uncaughtException listener is running"));
    assert!(refusal(&answers[6]).contains("the innermost frame is the uncaughtException listener"));
    let (_, answers) = run("
        callback-scope 5 1 R1
          next-tick-body
          tick-callback
          uncaught-exception-listener
        ");
    assert!(refusal(&answers[3]).contains(
        "a listener with a body is written only for an exception a native scope's callback throws"
    ));
    let (_, answers) = run("callback-scope 5 1 R1\n  end-listener");
    assert!(
        refusal(&answers[1]).contains("end-listener: the innermost frame is a native scope (5 1)")
    );
}
