//! Every scenario of `tests/scenarios` against the node binary (what
//! `scopecheck conform --scenarios` runs): each up to its first op node
//! cannot express, the two sides agreeing and the scenario's `=>` lines met
//! by what ran. The scenarios node cannot run whole are exactly the ones
//! `docs/conformance.md` lists, each for the reason given there.
//!
//! Needs `node` (v20, with its headers) and `g++`, as `tests/conform.rs`.

use model::vocab::trace;
use scopecheck::conform::{ConformError, Harness};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

fn harness() -> &'static Harness {
    static H: OnceLock<Result<Harness, ConformError>> = OnceLock::new();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("conform");
    match H.get_or_init(|| Harness::new(&dir)) {
        Ok(h) => h,
        Err(e) => panic!("conformance tests cannot run: {e}"),
    }
}

/// The scenarios v20's public API cannot express whole: name, the first
/// line node cannot run, and a word of the reason (docs/conformance.md).
const CUT: &[(&str, usize, &str)] = &[
    (
        "clear-async-id-stack-with-scopes-open",
        30,
        "`global` resource",
    ),
    ("execution-async-resource-depths", 55, "`global` resource"),
    ("global-resource-reset", 20, "`global` resource"),
    ("nested-native-scopes-no-hooks", 36, "`global` resource"),
    (
        "nested-native-scopes-with-hooks",
        30,
        "skip-hooks / skip-queues",
    ),
    ("next-tick-ids", 29, "skip-hooks / skip-queues"),
    ("stop-with-scopes-open", 29, "stop: Environment::ExitEnv"),
];

#[test]
fn every_scenario_runs_on_node_up_to_what_node_cannot_express() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/scenarios is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 29, "{} scenarios", paths.len());
    let mut cut = BTreeMap::new();
    let mut whole = 0;
    for path in &paths {
        let name = path.file_stem().and_then(|s| s.to_str()).expect("name");
        let text = std::fs::read_to_string(path).expect("readable");
        let t = trace::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (v, refusal) = harness()
            .conform_prefix(&t.ops(), None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(v.is_equal() || v.is_explained(), "{name}: {v}");
        let ran = refusal.as_ref().map_or(t.steps.len(), |u| u.index);
        for (i, step) in t.steps[..ran].iter().enumerate() {
            if i < v.given {
                if let Err(u) = step.check(Ok(&v.model[i])) {
                    panic!("{name}: {u}");
                }
            }
        }
        match refusal {
            None => whole += 1,
            Some(u) => {
                cut.insert(name.to_string(), (t.steps[u.index].line, u.reason));
            }
        }
    }
    assert_eq!(whole + CUT.len(), paths.len(), "cut: {cut:?}");
    for (name, line, reason) in CUT {
        let (at, why) = cut
            .get(*name)
            .unwrap_or_else(|| panic!("{name} now runs whole: update CUT and docs/conformance.md"));
        assert_eq!(at, line, "{name}: {why}");
        assert!(why.contains(reason), "{name}: {why}");
    }
}
