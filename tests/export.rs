//! `scopecheck export` on a sample of the suite's cases, on every node
//! binary the conformance tests run on (v20 and Node 26): the tests are
//! written, build against the binary's own headers, pass, and their wrong
//! variants (lazy mutants rendered as expectations, altered values) fail.
//! The whole set runs in `.ci/run` (`scopecheck export --prove`).

use crate::binaries;

use model::vocab::NodeVersion;
use scopecheck::conform::NodeSelection;
use scopecheck::export::{self, proof, Origin};
use std::path::Path;

/// Every finding's counterexample and a few scenarios that cover crashes,
/// handled exceptions, ticks with bodies (one that throws), make-callback's
/// trampoline, an unhandled rejection, an AsyncResource's frame, a scope
/// deleted out of order, N-API async contexts (ids, hooks, the stored
/// frame), JS in RunTimers' scope and a Worker that stops.
fn sample(version: NodeVersion) -> export::Export {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let findings = std::fs::read_to_string(root.join("docs/findings.md")).expect("findings.md");
    let mut sources = export::finding_sources(&findings);
    let scenarios = export::scenario_sources(&root.join("tests/scenarios"), Origin::Scenario)
        .expect("scenarios");
    for name in [
        "test-improper-order",
        "uncaught-exception-handled",
        "tick-body-opens-scope",
        "make-callback-trampoline",
        "emit-after-pops-native-scope",
        "hook-enabled-inside-open-scope",
        "unhandled-rejection-in-lazy-scope",
        "tick-body-throws",
        "als-async-resource-frame",
        "close-outer-equal-ids",
        "napi-make-callback-ids-and-hooks",
        "napi-make-callback-enters-stored-frame",
        "timers-scope-goes-on-after-exception",
        "stop-in-a-worker-with-lazy-and-eager",
    ] {
        sources.extend(scenarios.iter().filter(|s| s.name == name).cloned());
    }
    export::export(&sources, version, &findings)
}

#[test]
fn a_sample_of_exported_tests_passes_and_its_wrong_variants_fail() {
    // A mutant that panics is a difference, caught: not printed.
    scopecheck::lockstep::quiet_caught_panics();
    for harness in binaries::all() {
        let version = harness.capabilities.node_version;
        let exp = sample(version);
        assert!(exp.tests.len() >= 20, "{} tests exported", exp.tests.len());
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("export-v{}", version.major()));
        let selection = NodeSelection {
            node: Some(harness.node.clone()),
            headers: Some(harness.headers.clone()),
        };
        let budget = proof::Budget {
            tests: usize::MAX,
            per_mutant: 8,
            altered: 3,
        };
        let p = proof::prove(&selection, exp, &dir, budget).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("{p}");
        assert_eq!(p.passed(), p.runs.len(), "{p}");
        assert!(p.survivors().is_empty(), "{p}");
        let mutants = p
            .variants
            .iter()
            .filter(|v| v.wrong.starts_with("mutant "))
            .count();
        assert!(
            mutants >= 10,
            "only {mutants} mutants rendered as expectations\n{p}"
        );
    }
}

/// Every source of the repository (scenarios, findings, regressions and the
/// generated case of each situation) is exported or refused with a reason on
/// both node versions: writing the tests never panics, whatever the model's
/// answers (`--prove` runs them; this needs no binary); every test keeps
/// Node's conventions, and docs/export-tests.md lists them as they are.
#[test]
fn every_source_is_exported_or_refused_on_both_versions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut exports = Vec::new();
    for version in [NodeVersion::V20, NodeVersion::V26] {
        let (sources, _) = export::all_sources(root, version, 66511).expect("sources");
        let findings = std::fs::read_to_string(root.join("docs/findings.md")).expect("findings.md");
        let exp = std::panic::catch_unwind(|| export::export(&sources, version, &findings))
            .unwrap_or_else(|_| panic!("exporting for node {version} panicked"));
        assert!(
            exp.tests.len() + exp.refused.len() >= sources.len(),
            "node {version}: {} sources, {} tests, {} refused",
            sources.len(),
            exp.tests.len(),
            exp.refused.len()
        );
        for t in &exp.tests {
            let mut problems = export::lint::conventions(&t.path, &t.rendered.source);
            if let Some(fixture) = &t.rendered.fixture {
                let path = export::layout::fixture_path(&t.path);
                problems.extend(export::lint::conventions(&path, fixture));
            }
            assert!(
                problems.is_empty(),
                "node {version}: {}: {problems:?}",
                t.path
            );
        }
        exports.push(exp);
    }
    let listed = std::fs::read_to_string(root.join("docs/export-tests.md")).unwrap_or_default();
    assert!(
        listed == export::listing(&exports),
        "docs/export-tests.md is not the list of today's exported tests: \
         run `cargo run -- export --list > docs/export-tests.md`"
    );
}
