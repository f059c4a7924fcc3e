//! Conformance of the eager model against every node binary on this machine
//! (`binaries`: v20, the model's oracle, and Node 26, the release line pull
//! request 66511 lands on): the traces of `tests/conformance/traces`, what a
//! binary cannot express, and a seeded random batch. Builds the addon
//! (`src/conform/node/addon.cc`) with g++ into the cargo target dir,
//! against each binary's own headers.

use crate::binaries;

use model::vocab::trace::{self, Trace};
use model::vocab::{Op, OpError};
use scopecheck::conform::{ConformError, Harness, Verdict};
use std::path::{Path, PathBuf};

fn ops(text: &str) -> Vec<Op> {
    match trace::parse(text) {
        Ok(t) => t.ops(),
        Err(e) => panic!("bad trace in the test: {e}\n{text}"),
    }
}

/// The conformance traces, in file name order, parsed.
fn traces() -> Vec<(PathBuf, Trace)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/traces");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{e}"));
            let t = trace::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, t)
        })
        .collect()
}

/// Why `v` is not what the trace says: node and the model differ, a `=>`
/// line is not met, or node ended otherwise than the model.
fn wrong(t: &Trace, v: &Verdict) -> Option<String> {
    if !v.is_equal() {
        return Some(format!("{v}"));
    }
    for (i, step) in t.steps.iter().enumerate() {
        if step.expected.is_empty() {
            continue;
        }
        let answer = match v.model.get(i).filter(|_| i < v.given) {
            Some(obs) => Ok(obs.as_slice()),
            None => Err(&OpError::Exited),
        };
        if let Err(u) = step.meets(answer) {
            return Some(format!("expectation not met: {u}"));
        }
    }
    let last = v.model.iter().flatten().last();
    if let Some(terminal) = last.filter(|o| o.is_terminal()) {
        if v.end != terminal.to_string() {
            return Some(format!(
                "the model ends with `{terminal}`, node with `{}`",
                v.end
            ));
        }
    }
    None
}

/// Every trace of `tests/conformance/traces` agrees on every binary, meets
/// its `=>` lines, and ends as the model says; a trace that names another
/// node version (`node-version 26`: Global holders, AsyncLocalStorage) is refused
/// at that op.
#[test]
fn every_trace_agrees_on_every_binary() {
    let traces = traces();
    assert!(traces.len() >= 25, "{} traces", traces.len());
    let mut failures = Vec::new();
    for h in binaries::all() {
        for (path, t) in &traces {
            let name = format!("{} on node {}", path.display(), h.node_version);
            let ops = t.ops();
            let other_version = matches!(ops.first(), Some(Op::NodeVersion(v)) if *v != h.capabilities.node_version);
            match h.conform_trace(&ops, None) {
                Err(ConformError::Unsupported(u)) if other_version => {
                    if u.index != 0 || !u.reason.contains("node version") {
                        failures.push(format!("{name}: refused otherwise: {u}"));
                    }
                }
                Ok(_) if other_version => failures.push(format!("{name}: not refused")),
                Ok(v) => failures.extend(wrong(t, &v).map(|w| format!("{name}: {w}"))),
                Err(e) => failures.push(format!("{name}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What a binary cannot express is refused before node runs, with the
/// reason (`scopecheck::conform::decide` has each reason's own test); an op
/// the model rejects comes back as the model's rejection.
#[test]
fn what_a_binary_cannot_express_is_refused_with_the_reason() {
    let everywhere = [
        ("stop", "another thread"),
        ("callback-scope 5 1 R1 skip-hooks", "flags"),
        ("callback-scope 5 1 R1\nclose threw", "verbose"),
        ("entry-module\nuncaught-exception handled", "write `entry-module tla`"),
        (
            "callback-scope 5 1 R1\ncallback-scope 5 5 R2\nclose-outer 1\nuncaught-exception handled",
            "TryCatch chain",
        ),
    ];
    let v20_only = [
        ("callback-scope 5 1 global R1", "Local<Object>"),
        ("reset-global R1", "Global<Object>"),
        ("async-resource R1", "built on async hooks"),
        ("node-version 26", "this binary's node version is 20"),
    ];
    let node26_only = [
        (
            "callback-scope 6 1 global R1\ncallback-scope 6 6 R2\nclose-outer 1",
            "Global",
        ),
        ("node-version 20", "this binary's node version is 26"),
    ];
    for h in binaries::all() {
        let node26 = h.capabilities.global_callback_scope;
        let own: &[(&str, &str)] = if node26 { &node26_only } else { &v20_only };
        for (text, reason) in everywhere.iter().chain(own) {
            match h.conform_trace(&ops(text), None) {
                Err(ConformError::Unsupported(u)) => {
                    assert!(u.reason.contains(reason), "{text}: {u}");
                }
                other => panic!(
                    "{text} on {}: expected Unsupported, got {other:?}",
                    h.node_version
                ),
            }
        }
        // The model's own refusals: not a Node program.
        for (text, index) in [
            ("end-run-in-async-scope", 0),
            (
                "make-callback 5 1 R1\nuncaught-exception handled\nexecution-async-id",
                2,
            ),
        ] {
            match h.conform_trace(&ops(text), None) {
                Err(ConformError::ModelRejected { index: i, .. }) if i == index => {}
                other => panic!("{text}: expected the model to reject op {index}, got {other:?}"),
            }
        }
        // What the binary can express, it runs: Global holders on Node 26.
        if node26 {
            let v = h
                .conform_trace(
                    &ops("callback-scope 5 1 global R1\nreset-global R1\nclose"),
                    None,
                )
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(v.is_equal(), "{v}");
        }
    }
}

/// A seeded batch of random cases from the shared generator agrees on
/// every binary, and draws what real programs do: an ES module entry,
/// RunTimers' scope, scopes closed out of order, JS after a handled
/// exception in a scope, the AsyncLocalStorage ops, and on Node 26 the
/// Global holders. Fails if the generator or the decider stops
/// letting one of them through.
#[test]
fn random_cases_agree_on_every_binary() {
    let cases = 150;
    for h in binaries::all() {
        let s = h.conform_random(cases, 13, None);
        println!("node {}:\n{s}", h.node_version);
        assert!(s.errors.is_empty(), "{s}");
        assert_eq!(s.equal, cases, "{s}");
        assert!(s.exercised.len() >= 30, "{s}");
        // The ALS ops on both: frames on Node 26, v20's on async hooks.
        let mut kinds = vec![
            "entry-module",
            "timers-scope",
            "close-outer",
            "als-run",
            "als-get-store",
        ];
        if h.capabilities.global_callback_scope {
            kinds.extend(["reset-global", "callback-scope global"]);
        }
        for kind in kinds {
            assert!(
                s.exercised.get(kind).copied().unwrap_or(0) > 0,
                "`{kind}` never drawn:\n{s}"
            );
        }
        assert!(s.js_after_handled_exception > 0, "{s}");
        assert!(s.module_entries_with_microtasks > 0, "{s}");
    }
}

#[test]
fn the_shared_harness_and_free_functions_work() {
    let v = scopecheck::conform::conform_trace(&ops("execution-async-id\nnew-async-id"), None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(v.is_equal(), "{v}");
    let s = scopecheck::conform::conform_random(2, 7, None);
    assert!(s.errors.is_empty(), "{s}");
}

/// `keep` leaves the program and node's output, itself a trace: each op's
/// line with its index, then what it showed as `=>` lines.
#[test]
fn keep_writes_the_program_and_the_outputs() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("conform-keep");
    let _ = std::fs::remove_dir_all(&dir);
    let h: &Harness = binaries::default();
    let v = h
        .conform_trace(
            &ops("callback-scope 5 1 R1\n  execution-async-id\nclose"),
            Some(&dir),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(v.is_equal(), "{v}");
    for f in [
        "program.js",
        "trace.txt",
        "stdout.txt",
        "stderr.txt",
        "verdict.txt",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let stdout = std::fs::read_to_string(dir.join("stdout.txt")).unwrap_or_default();
    assert!(
        stdout.contains("execution-async-id # 1\n=> executionAsyncId = 5\nclose # 2\n"),
        "{stdout}"
    );
}
