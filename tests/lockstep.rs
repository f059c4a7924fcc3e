//! The main job in `cargo test`: the lazy implementation against the eager
//! model in lockstep, on generated sequences (with the refinement check), on
//! every scenario and on every saved counterexample; and the coverage the
//! generated run reached.

use model::vocab::trace;
use scopecheck::check::{check, CheckConfig, CheckReport};
use scopecheck::lockstep;
use std::path::Path;
use std::sync::OnceLock;

/// The CI budget: enough to reach every named situation, small enough for
/// `.ci/run` (about 10 s on 2 cores with the optimised test profile).
const CI_CASES: u32 = 6_000;

fn ci_run() -> &'static CheckReport {
    static REPORT: OnceLock<CheckReport> = OnceLock::new();
    REPORT.get_or_init(|| {
        let config = CheckConfig {
            cases: CI_CASES,
            ..CheckConfig::default()
        };
        check(&config, &mut |_| {})
    })
}

#[test]
fn lazy_equals_eager_on_generated_sequences() {
    let report = ci_run();
    if let Some(cx) = &report.counterexample {
        panic!(
            "the lazy implementation diverges from the eager model:\n{}\n{}",
            cx.trace_text(),
            cx.divergence
        );
    }
    assert!(
        report.cases >= u64::from(CI_CASES),
        "ran only {} cases",
        report.cases
    );
    assert!(
        report.ops > u64::from(CI_CASES) * 5,
        "sequences too short: {} ops",
        report.ops
    );
}

#[test]
fn generated_run_reaches_every_situation_and_op_kind() {
    let missing = ci_run().coverage.missing();
    assert!(
        missing.is_empty(),
        "not reached by the CI run: {missing:?}\n{}",
        ci_run().coverage.table()
    );
}

fn traces_in(dir: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.display().to_string(), text)
        })
        .collect();
    out.sort();
    out
}

fn assert_lockstep(dir: &str, at_least: usize) {
    let traces = traces_in(dir);
    assert!(
        traces.len() >= at_least,
        "expected at least {at_least} traces in {dir}, found {}",
        traces.len()
    );
    for (name, text) in traces {
        let t = trace::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Err(d) = lockstep::run(&t.ops()) {
            panic!("{name}: {d}");
        }
    }
}

#[test]
fn every_scenario_runs_identically_on_both_sides() {
    assert_lockstep("tests/scenarios", 13);
}

#[test]
fn every_saved_counterexample_now_runs_identically() {
    assert_lockstep("tests/regressions", 1);
}

#[test]
fn the_harness_reports_a_divergence() {
    // A broken lazy side must fail the same check: one mutant, a small budget
    // (it dies within a few dozen cases at this seed).
    let config = CheckConfig {
        cases: 2_000,
        mutant: Some(lazy::mutant::Mutant::JsPopIgnoresLazy),
        refinement: false,
        ..CheckConfig::default()
    };
    let report = check(&config, &mut |_| {});
    let cx = report.counterexample.expect("the mutant is killed");
    assert!(cx.ops.len() <= 6, "not shrunk: {}", cx.trace_text());
    assert!(cx.divergence.is_observable());
    // The saved trace replays to the same divergence.
    let replayed = trace::parse(&cx.trace_text()).expect("the printed trace parses");
    let again =
        lockstep::run_with(&replayed.ops(), config.mutant, false).expect_err("still diverges");
    assert_eq!(again.index + 1, cx.ops.len());
}
