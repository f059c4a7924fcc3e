//! Every scenario of `tests/scenarios` against every node binary on this
//! machine (what `scopecheck conform --scenarios` runs): each up to its
//! first op the binary cannot express, the two sides agreeing on what ran
//! and the scenario's `=>` lines met by it; an unmet `=>` line before the
//! cut is reported with its scenario and line.

use crate::binaries;

use scopecheck::conform::scenarios::Outcome;
use scopecheck::conform::Harness;
use std::path::{Path, PathBuf};

/// Why a binary may leave a scenario's op out: what no binary expresses,
/// and what v20 lacks.
fn known_reasons(h: &Harness) -> Vec<&'static str> {
    let mut reasons = vec![
        "InternalCallbackScope flags",
        "stop:",
        "an exception from a tick that process._tickCallback() ran",
    ];
    if h.capabilities.global_callback_scope {
        reasons.push("the trace is for node version 20");
    } else {
        reasons.extend([
            "Local<Object> only",
            "no Global<Object> resource holder",
            "async-resource is what an AsyncResource does with the AsyncContextFrame",
            "the trace is for node version 26",
        ]);
    }
    reasons
}

#[test]
fn every_scenario_runs_up_to_what_the_binary_cannot_express() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    for h in binaries::all() {
        let report = h
            .conform_scenarios(&dir, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let on = format!("on node {}:\n{report}", h.node_version);
        assert!(report.results.len() >= 57, "{on}");
        assert!(report.errors().is_empty(), "{on}");
        assert!(report.mismatched().is_empty(), "{on}");
        assert!(report.unmet.is_empty(), "{on}");
        assert_eq!(report.documented(), 0, "{on}");
        // Nothing is left out whole: what is not run whole ran up to the
        // op the binary cannot express, for a known reason.
        assert_eq!(report.cut(), report.not_run().len(), "{on}");
        let reasons = known_reasons(h);
        for (p, reason) in report.not_run() {
            assert!(
                reasons.iter().any(|r| reason.contains(r)),
                "{} not run for an unexpected reason: {reason}\n{on}",
                p.display()
            );
        }
        // What real programs do (out-of-order closes, JS after a handled
        // exception, an ES module entry) and the empty-Global CHECK run whole
        // and agree where the binary has them.
        let mut whole = vec![
            "close-outer-equal-ids.trace",
            "close-outer-different-ids.trace",
            "callback-scope-js-after-exception.trace",
            "timers-scope-goes-on-after-exception.trace",
            "esm-entry-improper-order.trace",
            "esm-entry-leftover-context.trace",
        ];
        if h.capabilities.global_callback_scope {
            whole.push("global-empty-at-open.trace");
        }
        for name in whole {
            let ran = report
                .results
                .iter()
                .any(|(p, o)| p.ends_with(name) && matches!(o, Outcome::Ran(v) if v.is_equal()));
            assert!(ran, "{name} did not run whole and equal {on}");
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
    for h in binaries::all() {
        let report = h
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
}
