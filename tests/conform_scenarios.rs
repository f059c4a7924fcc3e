//! Every scenario of `tests/scenarios` against the node binary (what
//! `scopecheck conform --scenarios` runs): each up to its first op the
//! binary cannot express, the two sides agreeing on what ran and the
//! scenario's `=>` lines met by it; an unmet `=>` line before the cut is
//! reported with its scenario and line.
//!
//! Needs `node` (v20, with its headers) and `g++`, as `tests/conform.rs`.

use scopecheck::conform::scenarios::Outcome;
use scopecheck::conform::{ConformError, Harness};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn harness() -> &'static Harness {
    static H: OnceLock<Result<Harness, ConformError>> = OnceLock::new();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("conform");
    match H.get_or_init(|| Harness::new(&dir)) {
        Ok(h) => h,
        Err(e) => panic!("conformance tests cannot run: {e}"),
    }
}

#[test]
fn every_scenario_runs_up_to_what_node_cannot_express() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let report = harness()
        .conform_scenarios(&dir, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(report.results.len() >= 36, "{report}");
    assert!(report.errors().is_empty(), "{report}");
    assert!(report.mismatched().is_empty(), "{report}");
    assert!(report.unmet.is_empty(), "{report}");
    // v20 cannot express some op of 8 scenarios (global resources, the
    // InternalCallbackScope flags, stop): each ran up to that op, none is
    // left out whole.
    assert_eq!(report.cut(), report.not_run().len(), "{report}");
    assert!(report.cut() >= 8, "{report}");
    // The scenarios of issue 13 (out-of-order closes, JS after a handled
    // exception, an ES module entry) run whole and agree.
    for name in [
        "close-outer-equal-ids.trace",
        "close-outer-different-ids.trace",
        "callback-scope-js-after-exception.trace",
        "timers-scope-goes-on-after-exception.trace",
        "esm-entry-improper-order.trace",
        "esm-entry-leftover-context.trace",
    ] {
        let ran = report
            .results
            .iter()
            .any(|(p, o)| p.ends_with(name) && matches!(o, Outcome::Ran(v) if v.is_equal()));
        assert!(ran, "{name} did not run whole and equal:\n{report}");
    }
    for (p, o) in &report.results {
        if let Outcome::Cut {
            line, ran, verdict, ..
        } = o
        {
            assert!(*line > 0, "{}", p.display());
            assert_eq!(verdict.given, *ran, "{}: {verdict}", p.display());
            assert!(verdict.is_equal(), "{}: {verdict}", p.display());
        }
    }
}

#[test]
fn an_unmet_expectation_before_the_cut_is_reported() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("conform_scenarios_unmet");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the scenario dir");
    // Line 2 is wrong (the id is 1); `stop` on line 5 cannot run on node.
    std::fs::write(
        dir.join("wrong.trace"),
        "execution-async-id\n=> executionAsyncId = 2\nexecution-async-id\n=> executionAsyncId = 1\nstop\n",
    )
    .expect("write the scenario");
    let report = harness()
        .conform_scenarios(&dir, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.results.len(), 1, "{report}");
    match &report.results[0].1 {
        Outcome::Cut {
            line, ran, verdict, ..
        } => {
            assert_eq!((*line, *ran), (5, 2), "{report}");
            assert!(verdict.is_equal(), "{report}");
        }
        other => panic!("not cut at the stop: {other:?}"),
    }
    assert_eq!(report.unmet.len(), 1, "{report}");
    let u = &report.unmet[0].1;
    assert_eq!(u.line, 1, "{report}");
    assert_eq!(u.expected, vec!["executionAsyncId = 2".to_string()]);
    assert_eq!(u.observed, vec!["executionAsyncId = 1".to_string()]);
    assert!(
        report.to_string().contains("1 expectation(s) not met"),
        "{report}"
    );
}
