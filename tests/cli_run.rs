//! `scopecheck run`: the built binary on small trace files.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Write `text` to a fresh file under the target's temp dir.
fn trace_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_run");
    std::fs::create_dir_all(&dir).expect("create the temp dir");
    let path = dir.join(format!("{name}.trace"));
    std::fs::write(&path, text).expect("write the trace");
    path
}

fn scopecheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .output()
        .expect("run scopecheck")
}

fn run(path: &std::path::Path, json: bool) -> Output {
    let p = path.to_str().expect("utf-8 temp path");
    if json {
        scopecheck(&["run", p, "--json"])
    } else {
        scopecheck(&["run", p])
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn runs_a_single_query() {
    let path = trace_file("single", "execution-async-id\n");
    let out = run(&path, false);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    assert_eq!(stdout, "1: execution-async-id\n  => executionAsyncId = 1\n");
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn prints_each_op_with_its_line_and_observations() {
    let path = trace_file(
        "nested",
        "# comment line\n\
         callback-scope 5 1 R1\n\
         \x20 execution-async-id\n\
         \x20 trigger-async-id\n\
         close\n\
         execution-async-id\n",
    );
    let out = run(&path, false);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        vec![
            "2: callback-scope 5 1 R1",
            "3: execution-async-id",
            "  => executionAsyncId = 5",
            "4: trigger-async-id",
            "  => triggerAsyncId = 1",
            "5: close",
            "6: execution-async-id",
            "  => executionAsyncId = 1",
        ]
    );
}

#[test]
fn stops_after_a_terminal_observation() {
    // An unhandled exception ends the process; the ops after it never run.
    let path = trace_file(
        "terminal",
        "callback-scope 5 1 R1\nuncaught-exception unhandled\nexecution-async-id\nstop\n",
    );
    let out = run(&path, false);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("2: uncaught-exception unhandled"),
        "{stdout}"
    );
    assert!(stdout.contains("stopped:"), "{stdout}");
    assert!(stdout.contains("2 later op(s) not run"), "{stdout}");
    assert!(!stdout.contains("3: execution-async-id"), "{stdout}");
}

#[test]
fn json_output_is_one_document() {
    let path = trace_file(
        "json",
        "execution-async-id\n=> executionAsyncId = 1\nnew-async-id\n",
    );
    let out = run(&path, true);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let steps = doc["steps"].as_array().expect("steps is an array");
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["line"], 1);
    assert_eq!(steps[0]["text"], "execution-async-id");
    assert_eq!(steps[0]["op"], "ExecutionAsyncId");
    assert_eq!(
        steps[0]["observations"],
        serde_json::json!([{ "ExecutionAsyncId": 1 }])
    );
    assert_eq!(
        steps[0]["expected"],
        serde_json::json!(["executionAsyncId = 1"])
    );
    assert_eq!(steps[1]["line"], 3);
    assert_eq!(steps[1]["text"], "new-async-id");
    assert_eq!(doc["terminated_at_line"], serde_json::Value::Null);
}

/// Run a malformed file; it must fail with exit code 2 and
/// `error: FILE:LINE:COLUMN: ...` on stderr, without panicking.
fn assert_rejected(name: &str, trace: &str, line: usize, column: usize, fragment: &str) {
    let path = trace_file(name, trace);
    for json in [false, true] {
        let out = run(&path, json);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: stderr {stderr}");
        let prefix = format!("error: {}:{line}:{column}: ", path.display());
        assert!(
            stderr.starts_with(&prefix),
            "{name}: stderr {stderr:?} should start with {prefix:?}"
        );
        assert!(
            stderr.contains(fragment),
            "{name}: stderr {stderr:?} should mention {fragment:?}"
        );
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        if json {
            assert!(out.stdout.is_empty(), "{name}: no JSON on error");
        }
    }
}

#[test]
fn malformed_traces_exit_2_with_file_line_column() {
    assert_rejected("unknown_op", "stop\nfoo 1 2\n", 2, 1, "unknown op \"foo\"");
    assert_rejected(
        "bad_id",
        "# x\n\ncallback-scope 5 x R1\n",
        3,
        18,
        "expected a trigger async id (an integer), found \"x\"",
    );
    assert_rejected(
        "huge_id",
        "emit-destroy 99999999999999999999999999\n",
        1,
        14,
        "out of range",
    );
    assert_rejected(
        "trailing",
        "  close threw extra\n",
        1,
        15,
        "expected end of line",
    );
    assert_rejected(
        "early_expectation",
        "=> executionAsyncId = 1\n",
        1,
        1,
        "before any op",
    );
}

#[test]
fn an_impossible_op_is_an_error_at_its_line() {
    // The main script's scope is the only one; the second close has none left.
    let path = trace_file("impossible", "execution-async-id\nclose\nclose\n");
    let out = run(&path, false);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr {stderr}");
    let prefix = format!("error: {}:3:1: impossible op: ", path.display());
    assert!(stderr.starts_with(&prefix), "{stderr:?}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The ops before it ran and were printed.
    let stdout = text(&out.stdout);
    assert!(stdout.contains("executionAsyncId = 1"), "{stdout}");
    assert!(stdout.contains("2: close"), "{stdout}");
}

#[test]
fn a_trace_claiming_the_other_line_for_a_bare_throw_is_refused_at_its_line() {
    // Where a bare make-callback's exception goes is the model's to say,
    // per line (docs/node-findings.md F8): through the trampoline Node 26
    // loses it, so a `catch` after it claims v20's outcome; v20 hands it
    // back, so JavaScript that goes on without `catch` claims Node 26's.
    let lines = "create-hook H1 before\nenable-hook H1\nmake-callback 5 1 R1 bare\nclose threw\n";
    for (version, next, says) in [
        ("26", "catch\n", "catch: no exception is in flight"),
        (
            "20",
            "execution-async-id\n",
            "is in flight in the JavaScript",
        ),
    ] {
        let name = format!("bare-throw-{version}");
        let path = trace_file(&name, &format!("node-version {version}\n{lines}{next}"));
        let out = run(&path, false);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "stderr {stderr}");
        let prefix = format!("error: {}:6:1: impossible op: ", path.display());
        assert!(stderr.starts_with(&prefix), "{stderr:?}");
        assert!(stderr.contains(says), "{stderr}");
        let lost = text(&out.stdout).contains("=> exception lost");
        assert_eq!(lost, version == "26", "{}", text(&out.stdout));
    }
}

#[test]
fn an_unreadable_file_exits_2() {
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_run/no-such-file.trace");
    let out = run(&missing, false);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}: cannot read", missing.display())),
        "{stderr:?}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn version_and_usage() {
    let out = scopecheck(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    let version = text(&out.stdout);
    assert!(
        version.starts_with(&format!(
            "scopecheck {} (commit ",
            env!("CARGO_PKG_VERSION")
        )),
        "{version}"
    );
    // A missing argument is a usage error, also exit code 2.
    let out = scopecheck(&["run"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!text(&out.stderr).contains("panicked"));
}

#[test]
fn node_version_runs_a_trace_on_that_node_version() {
    // On v20 a Global holder is refused, naming the line (exit 2).
    let global = trace_file(
        "global-on-20",
        "execution-async-id\ncallback-scope 5 1 global R1\nclose\n",
    );
    let p = global.to_str().expect("utf-8 temp path");
    let out = scopecheck(&["run", p, "--node-version", "20"]);
    assert_eq!(out.status.code(), Some(2), "stdout: {}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(":2:1:"), "{stderr}");
    assert!(stderr.contains("Local<Object> constructors"), "{stderr}");
    // The same trace runs on the default node version, 26.
    assert_eq!(scopecheck(&["run", p]).status.code(), Some(0));
    // A trace that names its node version must not be given another one.
    let named = trace_file("named-20", "node-version 20\nexecution-async-id\n");
    let p = named.to_str().expect("utf-8 temp path");
    let out = scopecheck(&["run", p, "--node-version", "26"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the trace says `node-version 20`"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        scopecheck(&["run", p, "--node-version", "20"])
            .status
            .code(),
        Some(0)
    );
    // An unknown node version is a usage error.
    let out = scopecheck(&["run", p, "--node-version", "22"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("20 and 26"),
        "{}",
        text(&out.stderr)
    );
}
