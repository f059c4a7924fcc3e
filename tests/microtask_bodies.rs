//! Microtasks with a body (`queue-microtask-body`, `promise-then-body`,
//! `end-microtask`): what the model refuses and why, what a checkpoint
//! inside a running microtask does, and the termination of a body. The
//! binaries' side is in the scenarios (`tests/scenarios/microtask-body-*`,
//! `promise-after-hook-no-pop`); `stop` cannot be written for a binary, so
//! its effect on a body is pinned here, on both sides.

use model::vocab::{trace, Observation, Op, OpError, Runtime};
use model::Eager;
use scopecheck::lockstep;

fn ops(text: &str) -> Vec<Op> {
    trace::parse(text).expect("the trace parses").ops()
}

/// Apply `text` on the eager model; the answers of every op.
pub(crate) fn run(text: &str) -> (Eager, Vec<Result<Vec<Observation>, OpError>>) {
    let mut env = Eager::new();
    let answers = ops(text).iter().map(|op| env.apply(op)).collect();
    (env, answers)
}

/// The reason of a refusal (panics on anything else).
pub(crate) fn impossible(answer: &Result<Vec<Observation>, OpError>) -> &str {
    match answer {
        Err(OpError::Impossible(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// A promise reaction's callback that throws rejects the derived promise,
/// reported later to the `unhandledRejection` listener, whether or not an
/// `uncaughtException` listener would handle an exception: none runs.
#[test]
fn an_exception_leaving_a_reaction_body_rejects_its_derived_promise() {
    for flag in ["handled", "unhandled"] {
        let (env, answers) = run(&format!(
            "promise-then-body\nclose\nuncaught-exception {flag}"
        ));
        let seen: Vec<String> = (answers[2].as_ref().expect("the throw runs"))
            .iter()
            .map(|o| o.to_string())
            .collect();
        assert_eq!(seen, ["unhandled rejection sees [0, 0]"], "{flag}");
        assert!(
            !env.exited,
            "{flag}: a reaction's exception ends no process"
        );
    }
}

/// A tick run by process._tickCallback() inside a microtask's body throws
/// into that body's job, as the body's own exception: a reaction's rejects
/// its derived promise, reported while the tick's entry (2, 0) is still on
/// the stack, whatever the listener; a queueMicrotask callback's reaches
/// the uncaught-exception handler, which exits unless it is handled.
#[test]
fn an_exception_from_a_tick_run_inside_a_microtask_body_is_the_bodys() {
    for flag in ["handled", "unhandled"] {
        let body = |job: &str| {
            run(&format!(
                "{job}\nclose\nnext-tick-body\ntick-callback\nuncaught-exception {flag}"
            ))
        };
        let (env, answers) = body("promise-then-body");
        let seen: Vec<String> = (answers[4].as_ref().expect("the throw runs"))
            .iter()
            .map(|o| o.to_string())
            .collect();
        assert_eq!(seen, ["unhandled rejection sees [2, 0]"], "{flag}");
        assert!(
            !env.exited,
            "{flag}: a reaction's exception ends no process"
        );
        let (env, answers) = body("queue-microtask-body");
        assert!(answers.iter().all(Result::is_ok), "{flag}: {answers:?}");
        assert_eq!(env.exited, flag == "unhandled", "{flag}");
        assert!(env.frames.is_empty(), "{flag}: the job and the tick ended");
    }
}

/// A queueMicrotask callback that throws ends its job (issue 25): the
/// handler runs in the checkpoint, the checkpoint goes on with the next
/// job, and the scope whose close ran it goes on as after `end-microtask`.
#[test]
fn an_exception_leaving_a_queue_microtask_body_ends_its_job_and_the_checkpoint_goes_on() {
    let text = "
        create-hook H1 init before after
        enable-hook H1
        close
        callback-scope 5 1 R1
          queue-microtask-body
          queue-microtask
        close
          uncaught-exception handled
        ";
    let (env, answers) = run(text);
    let answers: Vec<Vec<Observation>> = answers
        .into_iter()
        .map(|a| a.unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let thrown: Vec<String> = answers[7].iter().map(|o| o.to_string()).collect();
    assert_eq!(
        thrown,
        [
            "H1.after(2) in [2, 5]",
            "H1.init(4, Immediate, 0, immediate:4) in [0, 0]",
            "H1.before(3) in [3, 5]",
            "microtask sees [3, 5]",
            "H1.after(3) in [3, 5]",
        ]
    );
    // The checkpoint was the outermost close's: nothing is open after it.
    assert!(env.frames.is_empty(), "{:?}", env.frames);
    // The lazy side answers the same.
    let run = lockstep::run(&ops(text)).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(run.len(), 8);
}

#[test]
fn an_exception_in_a_scope_opened_in_a_body_is_reported_there() {
    let (_, answers) = run("
        promise-then-body
        close
        callback-scope 5 0 R1
        uncaught-exception handled
        close
        end-microtask
        ");
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
}

#[test]
fn end_microtask_needs_a_running_microtask_innermost() {
    let (_, answers) = run("
        promise-then-body
        end-microtask
        ");
    let why = impossible(&answers[1]);
    assert!(why.contains("end-microtask"), "{why}");
    let (_, answers) = run("
        promise-then-body
        close
        callback-scope 5 0 R1
        end-microtask
        ");
    let why = impossible(&answers[3]);
    assert!(why.contains("end it first"), "{why}");
}

#[test]
fn a_checkpoint_inside_a_running_microtask_runs_no_job() {
    // The body queues a second job and calls process._tickCallback(): V8's
    // PerformCheckpoint does nothing while a microtask runs, so the second
    // job runs only when the first returns, in the same checkpoint.
    let (env, answers) = run("
        promise-then-body
        close
        promise-then
        tick-callback
        end-microtask
        ");
    let answers: Vec<_> = answers.into_iter().map(|a| a.expect("applies")).collect();
    let reactions = |obs: &[Observation]| {
        obs.iter()
            .filter(|o| matches!(o, Observation::Microtask { promise: true, .. }))
            .count()
    };
    assert_eq!(reactions(&answers[1]), 1, "{answers:?}");
    assert_eq!(reactions(&answers[3]), 0, "{answers:?}");
    assert_eq!(reactions(&answers[4]), 1, "{answers:?}");
    // The checkpoint was the main script's Close: it is over, no scope left.
    assert!(env.frames.is_empty());
    assert_eq!(env.async_callback_scope_depth, 0);
}

#[test]
fn a_stop_in_a_body_terminates_the_checkpoint_and_its_close() {
    // The termination reaches the body: no after hook, the queued reaction
    // never runs, and the main script's Close marks itself failed and clears
    // the stack; the lazy side does the same.
    let text = "
        create-hook H1 init before after
        enable-hook H1
        promise-then-body
        promise-then
        callback-scope 5 1 R1
        close
        close
        callback-scope 6 5 R2
        stop
        close
        end-microtask
        ";
    let (env, answers) = run(text);
    let answers: Vec<_> = answers.into_iter().map(|a| a.expect("applies")).collect();
    assert!(answers[10].is_empty(), "{:?}", answers[10]);
    assert!(env.frames.is_empty());
    assert_eq!(env.async_callback_scope_depth, 0);
    assert_eq!(env.async_hooks.fields.k_stack_length, 0);
    assert!(env.microtasks.queue.is_empty());
    assert!(lockstep::run(&ops(text)).is_ok());
}

#[test]
fn a_microtask_that_queues_a_tick_makes_the_run_go_round() {
    // The tick run started by the main script's Close (a tick is scheduled)
    // runs the reaction in its runMicrotasks(); the tick the body queues runs
    // in the same run, at end-microtask.
    let (env, answers) = run("
        next-tick
        promise-then-body
        close
        next-tick
        end-microtask
        ");
    let answers: Vec<_> = answers.into_iter().map(|a| a.expect("applies")).collect();
    let ticks = |obs: &[Observation]| {
        obs.iter()
            .filter(|o| matches!(o, Observation::Tick { .. }))
            .count()
    };
    assert_eq!(ticks(&answers[2]), 1, "{answers:?}");
    assert_eq!(ticks(&answers[4]), 1, "{answers:?}");
    assert!(!env.ticks.has_tick_scheduled);
    assert!(env.frames.is_empty());
}
