//! Every mutant of the lazy design is killed by the random lockstep check
//! within the CI budget, with a short counterexample.

use lazy::mutant::{Mutant, Mutated};
use scopecheck::generate::case_ops;
use scopecheck::lockstep::{run_on, Pair};
use scopecheck::mutants::run_mutant;

#[test]
fn every_mutant_is_killed() {
    let mut survivors = Vec::new();
    for &m in Mutant::ALL {
        let r = run_mutant(m, 20_000, 66511, false);
        match &r.counterexample {
            None => survivors.push(m.name()),
            Some(cx) => {
                assert!(
                    cx.divergence.is_observable(),
                    "{}: {}",
                    m.name(),
                    cx.divergence
                );
                assert!(
                    cx.ops.len() <= 24,
                    "{}: counterexample not minimal: {}",
                    m.name(),
                    cx.trace_text()
                );
            }
        }
    }
    assert!(survivors.is_empty(), "mutants survived: {survivors:?}");
    assert!(Mutant::ALL.len() >= 15);
}

#[test]
fn the_lazy_condition_decides_cost_only() {
    // Every scope lazy (hooks or not), or none: no observable difference, so
    // the condition of the pull request is a performance choice and the
    // lazy-aware readers carry correctness.
    for &v in Mutant::VARIANTS {
        let r = run_mutant(v, 6_000, 66511, true);
        assert!(
            r.counterexample.is_none() && r.refinement_cases.is_none(),
            "{}: {}",
            v.name(),
            r.counterexample.map(|c| c.trace_text()).unwrap_or_default()
        );
    }
}

#[test]
fn the_refinement_check_catches_a_mistake_before_it_is_observable() {
    // A lazy scope that saves its own ids breaks the abstraction at once,
    // while a program sees the difference only after the scope closes.
    let r = run_mutant(Mutant::LinkSavesOwnIds, 2_000, 66511, true);
    let by_refinement = r.refinement_cases.expect("the refinement check catches it");
    let (by_observation, _) = r.killed_after.expect("the observations catch it too");
    assert!(
        by_refinement <= by_observation,
        "{by_refinement} > {by_observation}"
    );
}

#[test]
fn the_wrapping_store_with_nothing_planted_is_the_lazy_store() {
    // Every seam method of `Mutated` goes through its mistake, whose
    // defaults are `LazyStack`'s: with nothing planted it must pass the
    // check, the refinement relation included, wherever `LazyStack` does.
    for case in 0..2_000 {
        let ops = case_ops(66511, case, 120);
        if let Err(d) = run_on(Pair::with_store(Mutated::default()), &ops, true) {
            panic!("case {case}: {d}");
        }
    }
}

#[test]
fn a_timeout_above_run_timers_lazy_scope_kills_the_js_pop_that_ignores_it() {
    // Environment::RunTimers opens a lazy scope {0, 0} on `process` from the
    // event loop; listOnTimeout's emitBefore pushes the Timeout above it and
    // its emitAfter must pop that push, not the lazy scope below. The ids
    // agree either way (both pairs are saved as {0, 0}); the resource of
    // the RunTimers scope, read once the Timeout has returned, does not.
    let text = "set-timeout\nclose\ntimers-scope\n  timer\n  end-timer\n  \
                execution-async-resource\nclose\n";
    let ops = model::vocab::trace::parse(text)
        .expect("the trace parses")
        .ops();
    run_on(Pair::with_store(Mutated::default()), &ops, true)
        .expect("the lazy store agrees with the model");
    let divergence = run_on(Pair::mutated(Mutant::JsPopIgnoresJsAbove), &ops, false)
        .expect_err("the mutant diverges");
    assert!(divergence.is_observable(), "{divergence}");
    assert_eq!(divergence.index, 5, "{divergence}");
}

#[test]
fn a_trampoline_writing_low_keeps_the_exception_node_26_loses() {
    // lost-exception-with-lazy (docs/node-findings.md F8): a lazy scope is
    // open, a before hook is enabled inside it, and a bare make-callback
    // (eager, its callback run through callbackTrampoline) throws. Node 26
    // loses the exception because the close's pop shortens the JS resource
    // array, which the trampoline wrote one past the stack, through the V8
    // API. A trampoline that writes at `kStackLength - 1` (decision 11
    // undone) leaves the array short: no V8 call, and the exception comes
    // back to the caller instead, which the close's observation shows.
    let text = "callback-scope 5 1 R1\ncreate-hook H1 before\nenable-hook H1\n\
                make-callback 6 5 R2 bare\nclose threw\nexecution-async-id\n";
    let ops = model::vocab::trace::parse(text)
        .expect("the trace parses")
        .ops();
    let agreed = run_on(Pair::new(), &ops, true).expect("the lazy side agrees with the model");
    let lost = vec![model::vocab::Observation::ExceptionLost];
    assert_eq!(agreed[4].answer, Ok(lost.clone()), "the model loses it");
    let divergence = run_on(
        Pair::mutated(Mutant::TrampolineIndexByStackLength),
        &ops,
        false,
    )
    .expect_err("the mutant diverges");
    assert!(divergence.is_observable(), "{divergence}");
    assert_eq!(divergence.index, 4, "{divergence}");
    assert_eq!(divergence.eager, Ok(lost), "{divergence}");
    assert_eq!(divergence.lazy, Ok(Vec::new()), "{divergence}");
}
