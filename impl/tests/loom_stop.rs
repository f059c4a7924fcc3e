//! Every interleaving (loom) of another thread stopping the environment
//! (`Environment::ExitEnv`, e.g. `worker.terminate()`: `set_stopping(true)`)
//! while the main thread opens and closes nested lazy and eager scopes.
//!
//! Node reads the flag (`is_stopping()`, an atomic) in the
//! `InternalCallbackScope` constructor (`can_call_into_js()`), at the
//! start of `InternalCallbackScope::Close`, and in the outermost `Close`
//! after its microtask checkpoint; both sides read it there through
//! `stopping()`, which in a loom build asks a probe. The lazy side's probe
//! loads a loom `AtomicBool` that the second thread stores `true` into, and
//! records at which read it first saw it. For every interleaving the eager
//! model then runs the same program with a probe that turns true at that same
//! read, and:
//!
//! * both sides answer every op the same (observations, or the same error);
//! * no terminal observation (corrupted stack, failed CHECK, exit) once the
//!   stop has been seen;
//! * at the end, with every scope closed (the main script's too), the id
//!   stack is empty, the chain is empty and `kLazyScopes` is 0, on the lazy
//!   side (and the eager stack is empty).
//!
//! JavaScript ops of the program are not run once the main thread has seen
//! the stop (terminated JS runs nothing); the ends of JS frames still run,
//! as the model's `finally` handling expects.
//!
//! Run with (a separate target dir keeps the normal build's artifacts):
//!
//!     RUSTFLAGS="--cfg loom" cargo test -p lazy-scopes --release --test loom_stop --target-dir target/loom -- --nocapture
#![cfg(loom)]

use lazy::Lazy;
use loom::sync::atomic::{AtomicBool, Ordering};
use model::vocab::{trace, Observation, Op, OpError, Runtime};
use model::Eager;
use std::sync::atomic::{AtomicUsize, Ordering as StdOrdering};
use std::sync::Arc;

/// Interleavings explored, over every `loom::model` run of this binary.
static ITERATIONS: AtomicUsize = AtomicUsize::new(0);

/// "Never seen": the probe answered `false` at every read.
const NEVER: usize = usize::MAX;

type Answer = Result<Vec<Observation>, OpError>;

/// Whether `op` is JavaScript (the model rejects it once stopping) as
/// opposed to native code or the end of a JS frame.
fn is_js(op: &Op) -> bool {
    !matches!(
        op,
        Op::NoForceAsyncHooksChecks
            | Op::OpenScope { .. }
            | Op::CloseScope { .. }
            | Op::ResetGlobal(_)
            | Op::ExitRunInAsyncScope
            | Op::ExitDefaultTriggerScope
            | Op::Stop
    )
}

/// What the main thread did on the lazy side.
struct LazyRun {
    /// The ops it ran, in order (JS ops after the stop left out).
    ops: Vec<Op>,
    /// Their answers.
    answers: Vec<Answer>,
    /// Whether the lazy side was stopping after each op.
    stopping_after: Vec<bool>,
    /// The read (0-based, counting every `stopping()` that asked the probe)
    /// at which the flag was first seen, or [`NEVER`].
    seen_at: usize,
    /// The lazy side at the end.
    lazy: Lazy,
}

/// Run `script` on the lazy side with the stop flag read from `flag`, then
/// close every frame still open, the main script's scope last.
fn run_lazy(script: &[Op], flag: loom::sync::Arc<AtomicBool>) -> LazyRun {
    let reads = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(NEVER));
    let mut lazy = Lazy::new();
    {
        let (reads, seen) = (reads.clone(), seen.clone());
        lazy.set_stop_probe(move || {
            let n = reads.fetch_add(1, StdOrdering::Relaxed);
            let stopping = flag.load(Ordering::SeqCst);
            if stopping {
                seen.store(n, StdOrdering::Relaxed);
            }
            stopping
        });
    }
    let mut run = LazyRun {
        ops: Vec::new(),
        answers: Vec::new(),
        stopping_after: Vec::new(),
        seen_at: NEVER,
        lazy,
    };
    // JS frames whose enter was skipped: their end is skipped too.
    let mut skipped_frames = Vec::new();
    let apply = |run: &mut LazyRun, op: &Op| {
        let answer = run.lazy.apply(op);
        run.ops.push(op.clone());
        run.answers.push(answer);
        run.stopping_after.push(run.lazy.is_stopping);
    };
    for op in script {
        if matches!(op, Op::ExitRunInAsyncScope | Op::ExitDefaultTriggerScope) {
            if skipped_frames.pop() == Some(true) {
                continue;
            }
        } else if is_js(op) && run.lazy.is_stopping {
            if op.opens_frame() {
                skipped_frames.push(true);
            }
            continue;
        } else if op.opens_frame() && !matches!(op, Op::OpenScope { .. }) {
            skipped_frames.push(false);
        }
        apply(&mut run, op);
    }
    // Whatever the script left open ends now, the main script's scope last.
    while let (false, Some(end)) = (run.lazy.exited, innermost_end(&run.lazy)) {
        apply(&mut run, &end);
    }
    run.seen_at = seen.load(StdOrdering::Relaxed);
    run
}

/// The op that ends the innermost frame of the lazy side, if any is open.
fn innermost_end(lazy: &Lazy) -> Option<Op> {
    Some(lazy.frames.last()?.ending_op())
}

/// The program of the main thread, checked under every interleaving of a
/// second thread setting the stop flag; returns how many loom explored.
fn check_script(name: &'static str, text: &str) -> usize {
    let script: Vec<Op> = trace::parse(text)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .ops();
    let before = ITERATIONS.load(StdOrdering::Relaxed);
    loom::model(move || {
        ITERATIONS.fetch_add(1, StdOrdering::Relaxed);
        let flag = loom::sync::Arc::new(AtomicBool::new(false));
        let exit_env = {
            let flag = flag.clone();
            loom::thread::spawn(move || flag.store(true, Ordering::SeqCst))
        };
        let run = run_lazy(&script, flag);
        exit_env.join().expect("the stopping thread ends");
        check_against_eager(name, &run);
    });
    ITERATIONS.load(StdOrdering::Relaxed) - before
}

/// The eager model stopped at the read where the lazy side first saw the
/// flag: the same answers, and the invariants.
fn check_against_eager(name: &str, run: &LazyRun) {
    let k = run.seen_at;
    let reads = AtomicUsize::new(0);
    let mut eager = Eager::new();
    eager.set_stop_probe(move || reads.fetch_add(1, StdOrdering::Relaxed) >= k);
    let trace_text = trace::print(&run.ops);
    for (i, op) in run.ops.iter().enumerate() {
        let answer = eager.apply(op);
        assert_eq!(
            answer,
            run.answers[i],
            "{name}: op {} `{op}` answers differ (stop seen at read {k}; eager first, lazy second)\n{trace_text}",
            i + 1
        );
        assert_eq!(
            eager.is_stopping,
            run.stopping_after[i],
            "{name}: after op {} `{op}` the sides disagree on stopping\n{trace_text}",
            i + 1
        );
        if let (true, Ok(obs)) = (run.stopping_after[i], &run.answers[i]) {
            assert!(
                !obs.iter().any(Observation::is_terminal),
                "{name}: op {} `{op}` ends the process after the stop was seen: {obs:?}\n{trace_text}",
                i + 1
            );
        }
    }
    assert_eq!(
        k != NEVER,
        run.lazy.is_stopping,
        "{name}: the probe and the latch disagree"
    );
    let ah = &run.lazy.async_hooks;
    assert!(
        run.lazy.frames.is_empty(),
        "{name} (stop seen at read {k}): frames left open\n{trace_text}"
    );
    assert_eq!(
        ah.fields.k_stack_length, 0,
        "{name} (stop seen at read {k}): lazy id stack not empty\n{trace_text}"
    );
    assert!(
        ah.store.lazy_scopes.is_empty(),
        "{name} (stop seen at read {k}): lazy chain not empty\n{trace_text}"
    );
    assert_eq!(
        ah.store.k_lazy_scopes, 0,
        "{name} (stop seen at read {k}): kLazyScopes not 0\n{trace_text}"
    );
    assert_eq!(
        run.lazy.async_callback_scope_depth, 0,
        "{name} (stop seen at read {k}): scope depth not 0"
    );
    assert_eq!(
        eager.async_hooks.fields.k_stack_length, 0,
        "{name} (stop seen at read {k}): eager id stack not empty\n{trace_text}"
    );
}

/// The main thread's programs.
fn scripts() -> Vec<(&'static str, String)> {
    let mut deep = String::new();
    for i in 0..18 {
        deep.push_str(&format!("callback-scope {} {} R1\n", 10 + i, 9 + i));
    }
    deep.push_str("execution-async-id\n");
    for _ in 0..18 {
        deep.push_str("close\n");
    }
    vec![
        // Lazy, then eager (a hook enabled inside), then lazy again (the
        // hook disabled), each closed in turn.
        (
            "lazy-eager-lazy",
            "
            callback-scope 5 1 R1
              create-hook H1 init before after destroy
              enable-hook H1
              callback-scope 6 5 R2
                execution-async-id
                disable-hook H1
                callback-scope 7 6 R3
                  trigger-async-id
                close
                enable-hook H1
              close
              disable-hook H1
            close
            "
            .to_string(),
        ),
        // Eager scopes under lazy ones with the hook left enabled to the
        // end, a MakeCallback with its trampoline, a JS context and a tick;
        // the outermost close checks kTotals against the ids.
        (
            "make-callback-and-js-context",
            "
            callback-scope 5 1 R1
              callback-scope 6 5 global R2
                create-hook H1 init before after destroy
                enable-hook H1
                make-callback 7 6 R3
                  run-in-async-scope 8 7 R4
                    next-tick
                    callback-scope 9 8 R1
                      execution-async-resource
                    close
                  end-run-in-async-scope
                close
              close
            close
            "
            .to_string(),
        ),
        // Lazy scopes nested past the id stack's first 16 pairs (the eager
        // side grows it).
        ("deep-lazy", deep),
        // The main script's close runs the microtask checkpoint; a
        // reaction's body opens lazy scopes there (above nothing: the main
        // script's entry has popped), and the rest of Close (its
        // perform_stopping_check after the checkpoint, the CHECK) follows
        // the body's end.
        (
            "microtask-body-in-checkpoint",
            "
            create-hook H1 init before after destroy
            promise-then-body
            close
              callback-scope 6 0 R2
                callback-scope 7 6 R3
                  enable-hook H1
                  execution-async-id
                close
              close
            end-microtask
            "
            .to_string(),
        ),
    ]
}

#[test]
fn every_interleaving_of_the_environment_stopping() {
    let start = std::time::Instant::now();
    let mut total = 0;
    for (name, text) in scripts() {
        let explored = check_script(name, &text);
        println!("loom_stop: {name}: {explored} interleavings");
        assert!(
            explored > 1,
            "{name}: loom explored only {explored} interleaving"
        );
        total += explored;
    }
    println!(
        "loom_stop: {total} interleavings in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
